#!/usr/bin/env python3
"""Issue 17's mask fallbacks and overlapping nodes, asserted against the fixture trees themselves:
the facts are read from the tree's own files (node/online, node/has_cpu, each node's cpumap or
cpulist, each PCI function's numa_node and local_cpus or local_cpulist, the root bus's
cpuaffinity), the masks decoded here (32-bit groups, independently of lib/base/cpuset.c), and
numastor's `check --json` must agree:

  - every node of node/online is in machine.nodes, with the CPUs its cpumap (or cpulist) says;
  - multi_node is true and there is no single-node finding when has_cpu lists several nodes,
    also when no node's CPUs can be read at all (the mask-only tree without its cpumaps);
  - each disk's node is its PCI function's numa_node, its local_cpus what the function's
    local_cpus mask says, its function's bus_node the node whose CPUs the root bus's
    cpuaffinity mask names;
  - the CPUs claimed by more than one node and those nodes: node-cpus-overlap with exactly them
    (and the disks on them, node_reliable false, nothing critical); on the twin no such finding,
    overlapping_nodes [], node_reliable true.

    check-masks.py NUMASTOR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
MASK_ONLY = "kernel3-mask-only-17n"
OVERLAP = "overlapping-nodes-firmware-bug"
TWIN = "eight-nodes-distinct"
NODE_DIR = "sys/devices/system/node"
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("  FAIL " + what)
    return cond


def read(root, rel):
    with open(os.path.join(root, rel)) as f:
        return f.read().strip()


def decode_mask(text):
    """'ff,00000000,00000001': comma-separated 32-bit groups, most significant first."""
    cpus = set()
    groups = text.split(",")
    for i, g in enumerate(reversed(groups)):
        assert re.fullmatch(r"[0-9a-fA-F]{1,8}", g), f"not a mask group: {g!r} in {text!r}"
        v = int(g, 16)
        cpus |= {32 * i + b for b in range(32) if v >> b & 1}
    return cpus


def decode_list(text):
    out = set()
    for part in filter(None, text.replace(" ", "").split(",")):
        a, _, b = part.partition("-")
        out |= set(range(int(a), int(b or a) + 1))
    return out


def cpus_of(root, d, list_name, mask_name):
    """The set a CPU attribute names: its list form where the tree has it, else its mask."""
    if os.path.exists(os.path.join(root, d, list_name)):
        return decode_list(read(root, d + "/" + list_name))
    if os.path.exists(os.path.join(root, d, mask_name)):
        return decode_mask(read(root, d + "/" + mask_name))
    return None


def tree_facts(root):
    """What the tree says, read here without numastor."""
    online = decode_list(read(root, NODE_DIR + "/online"))
    has_cpu = decode_list(read(root, NODE_DIR + "/has_cpu"))
    nodes = {}
    for n in sorted(online):
        nodes[n] = cpus_of(root, "%s/node%d" % (NODE_DIR, n), "cpulist", "cpumap")
    claimed = {}
    for n, cpus in nodes.items():
        for c in cpus or ():
            claimed.setdefault(c, set()).add(n)
    shared = {c for c, ns in claimed.items() if len(ns) > 1}
    overlapping = set().union(*(claimed[c] for c in shared)) if shared else set()
    disks = {}
    for name in sorted(os.listdir(os.path.join(root, "sys/block"))):
        d = os.path.relpath(os.path.realpath(os.path.join(root, "sys/block", name)), root)
        parts = d.split("/")
        fn = None
        for i in range(len(parts), 2, -1):
            p = "/".join(parts[:i])
            sub = os.path.join(root, p, "subsystem")
            if os.path.islink(sub) and os.readlink(sub).endswith("/pci"):
                fn = p
                break
        if fn is None:
            continue
        bus = parts[2][len("pci"):]
        bus_cpus = cpus_of(root, "%s/pci_bus/%s" % ("/".join(parts[:3]), bus), "cpulistaffinity", "cpuaffinity")
        bus_nodes = {n for n, cpus in nodes.items() if cpus and bus_cpus and bus_cpus <= cpus}
        disks[name] = {"pci": os.path.basename(fn), "numa_node": int(read(root, fn + "/numa_node")),
                       "local_cpus": cpus_of(root, fn, "local_cpulist", "local_cpus"),
                       "bus_nodes": bus_nodes}
    return {"online": online, "has_cpu": has_cpu, "nodes": nodes, "shared": shared,
            "overlapping": overlapping, "disks": disks}


def report(numastor, root):
    p = subprocess.run([numastor, "check", "--json", "--sysroot", root], capture_output=True, text=True)
    return p.returncode, json.loads(p.stdout)


def assert_machine(name, f, doc):
    m = doc["machine"]
    got = {n["node"]: n["cpus"] for n in m["nodes"]}
    check(set(got) == f["online"], f"{name}: machine.nodes {sorted(got)} != node/online {sorted(f['online'])}")
    for n, cpus in f["nodes"].items():
        if cpus is None:
            check(got.get(n) is None, f"{name}: node {n}'s CPUs are in no file of the tree, report says {got.get(n)}")
        else:
            check(got.get(n) is not None and decode_list(got[n]) == cpus,
                  f"{name}: node {n} cpus {got.get(n)!r}, the tree's mask says {sorted(cpus)}")
    multi = len(f["has_cpu"]) > 1
    check(m["multi_node"] is multi, f"{name}: multi_node {m['multi_node']}, has_cpu lists {sorted(f['has_cpu'])}")
    ids = [x["id"] for x in doc["findings"]]
    check(("single-node" in ids) == (not multi), f"{name}: findings {ids} on a {len(f['has_cpu'])}-node machine")


def assert_disks(name, f, doc):
    devs = {d["name"]: d for d in doc["devices"]}
    check(set(devs) >= set(f["disks"]), f"{name}: disks {sorted(f['disks'])} not all reported ({sorted(devs)})")
    for disk, t in f["disks"].items():
        d = devs.get(disk)
        if not d:
            continue
        pci = d["paths"][0]["pci"]
        check(pci["address"] == t["pci"], f"{name} {disk}: PCI {pci['address']} != {t['pci']}")
        check(pci["numa_node"] == t["numa_node"], f"{name} {disk}: numa_node {pci['numa_node']} != {t['numa_node']}")
        check(pci["local_cpus"] is not None and decode_list(pci["local_cpus"]) == t["local_cpus"],
              f"{name} {disk}: PCI local_cpus {pci['local_cpus']!r}, the tree says {sorted(t['local_cpus'])}")
        check(d["node"] == t["numa_node"], f"{name} {disk}: node {d['node']} != the function's {t['numa_node']}")
        check(d["local_cpus"] is not None and decode_list(d["local_cpus"]) == t["local_cpus"],
              f"{name} {disk}: local_cpus {d['local_cpus']!r}, the tree says {sorted(t['local_cpus'])}")
        on_overlap = t["numa_node"] in f["overlapping"]
        check(d["node_reliable"] is (not on_overlap),
              f"{name} {disk}: node_reliable {d['node_reliable']}, node {t['numa_node']} overlapping: {on_overlap}")
        if not f["shared"]:
            # one node's CPUs hold the bus's: that is its node
            check(len(t["bus_nodes"]) == 1 and pci["bus_node"] in t["bus_nodes"],
                  f"{name} {disk}: bus_node {pci['bus_node']}, the root bus's cpuaffinity is on {t['bus_nodes']}")
        crit = [x["id"] for x in doc["findings"] if x["device"] == disk and x["severity"] == "critical"]
        check(not crit, f"{name} {disk}: critical findings {crit}")


def assert_overlap(name, f, doc):
    m = doc["machine"]
    found = [x for x in doc["findings"] if x["id"] == "node-cpus-overlap"]
    check(m["overlapping_nodes"] == sorted(f["overlapping"]),
          f"{name}: overlapping_nodes {m['overlapping_nodes']}, the tree's cpulists share CPUs of {sorted(f['overlapping'])}")
    if not f["shared"]:
        check(not found, f"{name}: node-cpus-overlap without a CPU on two nodes: {found}")
        return
    if not check(len(found) == 1, f"{name}: {len(found)} node-cpus-overlap findings, CPUs {sorted(f['shared'])} shared"):
        return
    x = found[0]
    check(x["severity"] == "warning" and x["device"] is None, f"{name}: {x['severity']} {x['device']}")
    ev = x["evidence"]
    check(ev["nodes"] == sorted(f["overlapping"]), f"{name}: evidence nodes {ev['nodes']} != {sorted(f['overlapping'])}")
    check(decode_list(ev["cpus"]) == f["shared"], f"{name}: evidence cpus {ev['cpus']!r} != {sorted(f['shared'])}")
    want = sorted(d for d, t in f["disks"].items() if t["numa_node"] in f["overlapping"])
    check(sorted(ev["devices"]) == want, f"{name}: evidence devices {ev['devices']} != {want}")
    check(x["remedy"]["text"] and "firmware" in x["remedy"]["text"], f"{name}: remedy {x['remedy']}")
    # on an unreliable node, irq-confined says so and stays a warning
    for c in (x for x in doc["findings"] if x["id"] == "irq-confined"):
        on = {c["evidence"]["irq_node"], c["evidence"]["device_node"]} & f["overlapping"]
        check(not on or (c["severity"] == "warning" and c["evidence"].get("node_reliable") is False),
              f"{name}: irq-confined {c['device']} on nodes {on}: {c['severity']} {c['evidence']}")


def main():
    numastor = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="numastor-masks.") as tmp:
        subprocess.run([sys.executable, GEN, tmp, MASK_ONLY, OVERLAP, TWIN], check=True)
        # precondition: the mask-only tree really has no list form (else it proves nothing)
        mo = os.path.join(tmp, MASK_ONLY)
        lists = [os.path.relpath(os.path.join(d, x), mo) for d, _, fs in os.walk(mo) for x in fs
                 if x in ("local_cpulist", "cpulistaffinity") or (x == "cpulist" and "/system/node/" in d)]
        check(not lists, f"{MASK_ONLY}: the tree holds list forms: {lists[:5]}")
        check(read(mo, "proc/sys/kernel/osrelease").startswith("3."), f"{MASK_ONLY}: not a 3.x kernel")
        for name in (MASK_ONLY, OVERLAP, TWIN):
            root = os.path.join(tmp, name)
            f = tree_facts(root)
            code, doc = report(numastor, root)
            assert_machine(name, f, doc)
            assert_disks(name, f, doc)
            assert_overlap(name, f, doc)
            if name == MASK_ONLY:
                notes = [n["message"] for n in doc["notes"]]
                check(any("cpumap" in n and "cpulist is missing" in n for n in notes), f"{name}: no note of cpumap")
                check(sum("local_cpus" in n and "local_cpulist is missing" in n for n in notes) == len(f["disks"]),
                      f"{name}: a note of local_cpus per disk's function: {notes}")
                check(sum("cpuaffinity" in n for n in notes) == len(f["disks"]), f"{name}: notes of cpuaffinity")
                check(len(f["online"]) == 17 and all(f["nodes"].values()), f"{name}: 17 nodes with CPUs in the tree")
            print(f"{name}: {len(f['nodes'])} nodes, {len(f['disks'])} disks, exit {code}")
        # the capture the issue reported: no node's CPUs readable at all (no cpulist, no cpumap,
        # no cpuN links); the node lists still make it multi-node
        blind = os.path.join(tmp, "mask-only-no-cpumap")
        shutil.copytree(mo, blind, symlinks=True)
        for d, dirs, fs in os.walk(os.path.join(blind, NODE_DIR)):
            for x in fs + dirs:
                if x == "cpumap" or re.fullmatch(r"cpu\d+", x):
                    os.unlink(os.path.join(d, x))
        f = tree_facts(blind)
        check(all(v is None for v in f["nodes"].values()), "mask-only-no-cpumap: a node's CPUs still in the tree")
        _, doc = report(numastor, blind)
        assert_machine("mask-only-no-cpumap", f, doc)
        check(doc["machine"]["overlapping_nodes"] is None,
              f"mask-only-no-cpumap: overlapping_nodes {doc['machine']['overlapping_nodes']} with every node unknown")
    print(f"masks: {len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
