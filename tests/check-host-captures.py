#!/usr/bin/env python3
"""Machines captured outside the VM bed, replayed on every test run: each directory under
tests/fixtures/hosts/ holds `numastor snapshot` of a real machine (snapshot.tar.gz) taken between
two readings of its ground truth by the shell (truth-before.txt, truth.txt: read-truth.sh, cat and
stat on sysfs and procfs, never numastor), and notes.txt (what the machine is, what its kernel
line showed, what capture.sh cut). The first is this project's own machine: a firecracker cloud
guest on kernel 6.18 with one virtio-blk disk on PCI (issue 33 item 7), a line no VM bed kernel has.

Each is replayed with `numastor check --json --snapshot` and held to its ground truth: the kernel
release, CPUs and nodes; per disk its path, device number, size, request queue, serial, PCI
function (ids, driver, numa_node, local CPUs) and every blk-mq queue's CPUs and tags; every vector
of the function (actions, chip, affinity, effective affinity, node, the file mode of smp_affinity
as user_settable: 0644 settable, 0444 not, on 6.12 and later; its count between the two
readings); each queue paired with the vector its driver names for it (virtio-blk's vq "req.K"
serves queue K, virtio_blk.c; nvme's "nvmeXq(K+1)", nvme_create_queue), whose affinity holds the
queue's CPUs where the vector is the kernel's (0444); and, on a machine of one node, no finding
but single-node.

    check-host-captures.py NUMASTOR
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vm"))
from compare import cpuset as cpus  # noqa: E402  (the bed's own cpulist reader)

HERE = os.path.dirname(os.path.abspath(__file__))
HOSTS = os.path.join(HERE, "fixtures", "hosts")

failures = 0


def fail(msg):
    global failures
    failures += 1
    print(f"FAIL {msg}")


def read_truth(path):
    """(kind, key...) -> value from a read-truth.sh file."""
    facts = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            rec = line.rstrip("\n").split("\t")
            if len(rec) >= 3:
                facts[tuple(rec[:-1])] = rec[-1]
    return facts


def active_scheduler(text):
    """queue/scheduler: the bracketed one ("none [mq-deadline] kyber"), or the one listed."""
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else text.strip() or None


def keys(facts, kind):
    return sorted({k[1] for k in facts if k[0] == kind}, key=lambda x: (len(x), x))


def check_host(numastor, name, hdir):
    before = read_truth(os.path.join(hdir, "truth-before.txt"))
    truth = read_truth(os.path.join(hdir, "truth.txt"))
    env = dict(os.environ, NO_COLOR="1", NUMASTOR_TEST_NOW="1767225600")
    p = subprocess.run([numastor, "check", "--json", "--snapshot", os.path.join(hdir, "snapshot.tar.gz")],
                       capture_output=True, text=True, env=env)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        fail(f"{name}: the replay printed no JSON (exit {p.returncode}): {p.stderr[:300]}")
        return
    n0 = failures
    m = doc["machine"]

    def eq(what, got, want):
        if got != want:
            fail(f"{name}: {what}: the replay says {got!r}, the machine said {want!r}")

    eq("kernel_release", m["kernel_release"], truth[("machine", "kernel_release")])
    eq("online CPUs", cpus(m["online_cpus"]), cpus(truth[("machine", "online_cpus")]))
    eq("possible CPUs", cpus(m["possible_cpus"]), cpus(truth[("machine", "possible_cpus")]))
    nodes = {n["node"]: n for n in m["nodes"]}
    eq("nodes", set(nodes), cpus(truth[("machine", "nodes_online")]))
    for nid in keys(truth, "node"):
        n = nodes.get(int(nid))
        if n:
            eq(f"node {nid} cpus", cpus(n["cpus"]), cpus(truth[("node", nid, "cpus")]))
            eq(f"node {nid} distances", n["distances"], [int(x) for x in truth[("node", nid, "distances")].split()])
    ver = tuple(int(x) for x in re.findall(r"\d+", m["kernel_release"])[:2])

    devices = {d["name"]: d for d in doc["devices"]}
    disks = keys(truth, "disk")
    if not disks:
        fail(f"{name}: the ground truth names no disk on a PCI function")
    pairs = 0
    for disk in disks:
        d = devices.get(disk)
        if d is None:
            fail(f"{name}: {disk} is missing from the replay")
            continue
        t = {k[2]: v for k, v in truth.items() if k[:2] == ("disk", disk)}
        eq(f"{disk} sysfs_path", d["sysfs_path"], t["sysfs_path"])
        eq(f"{disk} devnum", d["devnum"], t["dev"])
        eq(f"{disk} size", d["size_bytes"], int(t["size"]) * 512)
        eq(f"{disk} rq_affinity", d["queue"]["rq_affinity"], int(t["rq_affinity"]))
        eq(f"{disk} nr_requests", d["queue"]["nr_requests"], int(t["nr_requests"]))
        eq(f"{disk} scheduler", d["queue"]["scheduler"], active_scheduler(t["scheduler"]))
        if t.get("serial"):
            eq(f"{disk} serial", (d.get("identity") or {}).get("serial"), t["serial"])
        paths = [x for x in d["paths"] if (x.get("pci") or {}).get("address") == t["pci"]]
        if len(paths) != 1:
            fail(f"{name}: {disk}: no one path through {t['pci']} ({[x.get('pci', {}).get('address') for x in d['paths']]})")
            continue
        pci = paths[0]["pci"]
        tp = {k[2]: v for k, v in truth.items() if k[:2] == ("pci", t["pci"])}
        for field in ("vendor", "device", "class", "driver"):
            eq(f"{t['pci']} {field}", pci[field], tp[field])
        eq(f"{t['pci']} numa_node", pci["numa_node"], int(tp["numa_node"]))
        eq(f"{t['pci']} local_cpus", cpus(pci["local_cpus"]), cpus(tp["local_cpulist"]))

        irqs = {i["irq"]: i for i in pci["irqs"]}
        tirqs = [n for n in keys(truth, "irq") if truth[("irq", n, "pci")] == t["pci"]]
        eq(f"{t['pci']} vectors", sorted(irqs), sorted(int(n) for n in tirqs))
        by_action = {}
        for n in tirqs:
            ti = {k[2]: v for k, v in truth.items() if k[:2] == ("irq", n)}
            i = irqs.get(int(n))
            if i is None:
                continue
            by_action[ti["actions"].split(",")[0].strip()] = i
            eq(f"irq {n} actions", i["actions"], ti["actions"])
            eq(f"irq {n} chip", i["chip"], ti["chip_name"])
            eq(f"irq {n} affinity", cpus(i["affinity"]), cpus(ti["smp_affinity_list"]))
            eq(f"irq {n} effective", cpus(i["effective_affinity"]), cpus(ti["effective_affinity_list"]))
            eq(f"irq {n} node", i["node"], int(ti["node"]))
            if ver >= (6, 12):
                eq(f"irq {n} user_settable (mode {ti['smp_affinity_mode']})", i["user_settable"],
                   ti["smp_affinity_mode"] == "644")
            lo = sum(int(x) for x in before[("irq", n, "per_cpu_count")].split(","))
            hi = sum(int(x) for x in ti["per_cpu_count"].split(","))
            if not lo <= i["total_count"] <= hi:
                fail(f"{name}: irq {n}: total_count {i['total_count']} not between the readings {lo} and {hi}")

        queues = {q["index"]: q for q in d["hw_queues"]}
        tq = sorted({int(k[2]) for k in truth if k[:2] == ("hctx", disk)})
        eq(f"{disk} hardware queues", sorted(queues), tq)
        ctl = paths[0].get("controller") or ""
        for idx in tq:
            q = queues.get(idx)
            if q is None:
                continue
            want_cpus = cpus(truth[("hctx", disk, str(idx), "cpu_list")])
            eq(f"{disk} hctx {idx} cpus", cpus(q["cpus"]), want_cpus)
            eq(f"{disk} hctx {idx} nr_tags", q["nr_tags"], int(truth[("hctx", disk, str(idx), "nr_tags")]))
            # the driver's own name for the queue's vector
            named = by_action.get(f"{ctl}-req.{idx}") or by_action.get(f"{ctl}q{idx + 1}")
            if named is None:
                continue
            pairs += 1
            eq(f"{disk} hctx {idx} vector", q["irq"], named["irq"])
            if truth[("irq", str(named["irq"]), "smp_affinity_mode")] == "444" and \
                    not want_cpus <= cpus(truth[("irq", str(named["irq"]), "smp_affinity_list")]):
                fail(f"{name}: {disk} hctx {idx}: the kernel's own files disagree with blk_mq_map_hw_queues")
            eq(f"irq {named['irq']} hw_queue", named["hw_queue"], idx)

    if len(set(nodes)) == 1:
        eq("findings on one node", sorted({f["id"] for f in doc["findings"]}), ["single-node"])
        eq("exit code", p.returncode, 0)
    if failures == n0:
        print(f"PASS {name}: {m['kernel_release']}, {len(disks)} disk(s), {pairs} queue(s) paired as the "
              f"driver names them, held to the shell's ground truth")


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    numastor = os.path.abspath(argv[1])
    names = sorted(n for n in os.listdir(HOSTS) if os.path.isfile(os.path.join(HOSTS, n, "snapshot.tar.gz")))
    if not names:
        fail(f"no captures under {HOSTS}")
    for name in names:
        check_host(numastor, name, os.path.join(HOSTS, name))
    print(f"host captures: {len(names)} replayed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
