#!/usr/bin/env python3
"""Fixture machines: generate each captured tree, run `numastor check` on it, and compare the
JSON and text reports with the expected ones in tests/fixtures/expected/. Every JSON document is
validated against schema/numastor.schema.json, and the per-fixture facts below are asserted on
their own so a regenerated expectation cannot quietly drop them.

    check-fixtures.py NUMASTOR [NAME...]
    NUMASTOR_REGENERATE=1 check-fixtures.py NUMASTOR   # rewrite expectations after review
"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
EXPECTED = os.path.join(HERE, "fixtures", "expected")
SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor.schema.json")))
FIX_SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor-fix.schema.json")))
REGEN = os.environ.get("NUMASTOR_REGENERATE") == "1"


def finding_ids(doc, device=None):
    return {f["id"] for f in doc["findings"] if device is None or f["device"] == device}


def device(doc, name):
    for d in doc["devices"]:
        if d["name"] == name:
            return d
    raise AssertionError(f"device {name} missing from the report")


def facts_cloud(doc, code):
    """The seed: forced node 0, unmanaged vectors confined to node 0, irqbalance running."""
    assert code == 2, f"exit code {code}, expected 2"
    nvmes = [d for d in doc["devices"] if d["kind"] == "nvme"]
    assert len(nvmes) == 8, f"{len(nvmes)} nvme disks, expected 8"
    for d in nvmes:
        pci = d["paths"][0]["pci"]
        assert pci["numa_node"] == 0 and pci["node_forced"] is True, (d["name"], pci["numa_node"], pci["node_forced"])
        assert d["node"] is None and d["node_source"] == "forced", (d["name"], d["node"], d["node_source"])
        ids = finding_ids(doc, d["name"])
        for want in ("node-forced", "irq-confined"):
            assert want in ids, f"{d['name']}: no {want} finding (has {sorted(ids)})"
        assert all(q["irq_pairing"] == "nvme-name" for q in d["hw_queues"])
        assert all(i["managed"] is False for i in pci["irqs"])


def facts_healthy(doc, code):
    assert code == 0, f"exit code {code}, expected 0"
    assert not [f for f in doc["findings"] if f["severity"] != "info"], doc["findings"]
    for d in doc["devices"]:
        if d["kind"] == "nvme":
            assert d["node"] is not None
            for q in d["hw_queues"]:
                assert q["irq"] is not None and q["irq_pairing"] == "nvme-name"


def facts_hba(doc, code):
    sda = device(doc, "sda")
    assert sda["node"] == 1, sda["node"]
    q = sda["hw_queues"]
    assert len(q) == 1 and q[0]["memory_node"] == 0 and q[0]["irq_pairing"] == "single-vector", q
    ids = finding_ids(doc, "sda")
    for want in ("irq-fires-remote", "vector-serves-all-nodes", "alloc-remote"):
        assert want in ids, f"sda: no {want} finding (has {sorted(ids)})"
    assert code >= 1


def facts_hba_alloc(doc, code):
    """Item 5: the midlayer node only where the kernel's scan mode makes it known; shared tags."""
    sda = device(doc, "sda")
    a = sda["allocations"]
    assert a["hw_queue_nodes"] == [0], a
    if "scan=sync" in (a["midlayer_basis"] or ""):
        assert a["midlayer_node"] == 1, a
        assert a["shared_tags"] is False and a["shared_tags_source"] == "debugfs", a
        assert a["tags_nodes"] == [0], a
    elif "scan=async" in (a["midlayer_basis"] or ""):
        assert a["midlayer_node"] is None and "does not record" in a["midlayer_basis"], a
        assert a["shared_tags"] is True and a["shared_tags_source"] == "debugfs", a
        assert a["tags_nodes"] == [1] and "shared" in a["tags_basis"], a
    else:  # no scan parameter, no debugfs: both unknown
        assert a["midlayer_node"] is None and "unreadable" in a["midlayer_basis"], a
        assert a["shared_tags"] is None and a["shared_tags_source"] == "unknown", a
        assert a["tags_nodes"] is None, a


def facts_hba_all(doc, code):
    facts_hba(doc, code)
    facts_hba_alloc(doc, code)


def facts_vm(doc, code):
    assert code == 0, code
    assert [f["id"] for f in doc["findings"]] == ["single-node"], doc["findings"]
    vda = device(doc, "vda")
    assert vda["kind"] == "virtio-blk" and len(vda["hw_queues"]) >= 1
    assert all(q["irq_pairing"] == "virtio-name" for q in vda["hw_queues"])
    dm = [d for d in doc["devices"] if d["kind"] == "dm"]
    assert dm and dm[0]["slaves"], dm


def facts_multipath(doc, code):
    mp = [d for d in doc["devices"] if d["kind"] == "nvme-multipath"]
    assert len(mp) == 1, [d["name"] for d in doc["devices"]]
    d = mp[0]
    nodes = sorted(p["pci"]["numa_node"] for p in d["paths"])
    assert nodes == [0, 1], nodes
    assert d["node_source"] == "paths-disagree" and d["local_cpus"] is None
    # each node already uses its nearest path when the subsystem's iopolicy is numa
    assert d["iopolicy"] is not None
    assert ("paths-on-different-nodes" in finding_ids(doc, d["name"])) == (d["iopolicy"] != "numa"), d["iopolicy"]
    assert not [x for x in doc["devices"] if "c" in x["name"][4:] and x["name"].startswith("nvme") and "n" in x["name"]], \
        "hidden path devices listed as disks"
    # both paths from the kernel's files (6.1: the subsystem's controller links and each
    # controller's nvme0cCn1; newer: also multipath/), each with its function, node and vectors
    paths = sorted((p["controller"], p["pci"]["address"], p["pci"]["numa_node"]) for p in d["paths"])
    assert paths == [("nvme0", "0000:17:00.0", 0), ("nvme1", "0000:b1:00.0", 1)], paths
    for p in d["paths"]:
        assert len(p["pci"]["irqs"]) == 9, (p["controller"], len(p["pci"]["irqs"]))
    assert sorted({q["controller"] for q in d["hw_queues"]}) == ["nvme0", "nvme1"], d["hw_queues"][:2]
    assert all(q["irq"] is not None and q["irq_pairing"] == "nvme-name" for q in d["hw_queues"])


def facts_broken(doc, code):
    assert code in (0, 1, 2), code
    fields = {(n["subject"], n["field"]) for n in doc["notes"]}
    assert any(f == "pci.numa_node" for _, f in fields), fields
    assert any(f == "effective_affinity" for _, f in fields), fields
    assert any(n["field"] == "irq" and "gone" in n["message"] for n in doc["notes"]), doc["notes"]
    assert doc["machine"]["nohz_full_cpus"] == "", doc["machine"]["nohz_full_cpus"]


def plan_cloud(plan, doc):
    """Every queue vector moves to exactly the CPUs its hardware queue serves."""
    queues = {(d["name"], q["index"]): q["cpus"] for d in doc["devices"] for q in d["hw_queues"]}
    moved = [e for e in plan["irqs"] if e["hw_queue"] is not None]
    assert len(moved) == sum(len(d["hw_queues"]) for d in doc["devices"]), len(moved)
    for e in moved:
        assert e["action"] == "move", e
        assert e["target"] == queues[(e["device"], e["hw_queue"])], (e["irq"], e["target"])
        assert "irq-confined" in e["answers"], e["answers"]
    assert plan["irqbalance"]["advice"], "irqbalance runs without the policy: the plan must say so"


def plan_empty(plan, doc):
    assert plan["irqs"] == [] and plan["rq_affinity"] == [], plan["irqs"][:3]


def plan_hba(plan, doc):
    [e] = plan["irqs"]
    node1 = [n["cpus"] for n in doc["machine"]["nodes"] if n["node"] == 1][0]
    assert e["action"] == "move" and e["target"] == node1, e


def plan_all_skipped(plan, doc):
    queue = [e for e in plan["irqs"] if e["hw_queue"] is not None]
    assert queue, "the plan should list the managed vectors"
    for e in queue:
        assert e["managed"] and e["action"] == "skip" and "kernel-managed" in e["reason"], e
    assert plan["summary"]["move"] == 0, plan["summary"]


def facts_managed(doc, code):
    d = device(doc, "nvme0n1")
    ids = finding_ids(doc, "nvme0n1")
    assert "irq-confined" in ids and "queue-affinity-mismatch" in ids, sorted(ids)
    confined = [f for f in doc["findings"] if f["id"] == "irq-confined"][0]
    assert confined["remedy"]["action"] is None, "managed vectors: the remedy is manual"
    assert all(i["managed"] for i in d["paths"][0]["pci"]["irqs"] if i["hw_queue"] is not None)
    assert code == 2


# -- evidence: managed / user_settable, and whose node it is ---------------------------------

def irqs_of(doc, name):
    return [i for p in device(doc, name)["paths"] for i in p["pci"]["irqs"]]


def pci_of(doc, name):
    return device(doc, name)["paths"][0]["pci"]


def invariants(doc):
    """What holds on every fixture: a managed vector is never user-settable; a known fact
    names its source, an unknown one none; a node is forced or set, never both."""
    for d in doc["devices"]:
        for p in d["paths"]:
            pci = p["pci"]
            if not pci:
                continue
            assert not (pci["node_forced"] and pci["node_set"]), (d["name"], pci["address"])
            assert (pci["forced_evidence"] is not None) == (pci["node_forced"] is True), pci["address"]
            assert (pci["node_set_evidence"] is not None) == (pci["node_set"] is True), pci["address"]
            for i in pci["irqs"]:
                assert not (i["managed"] is True and i["user_settable"] is True), i
                assert (i["managed"] is None) == (i["managed_source"] == "unknown"), i
                assert (i["user_settable"] is None) == (i["user_settable_source"] == "unknown"), i
        if d["node_source"] == "forced":
            assert any(p["pci"] and p["pci"]["node_forced"] for p in d["paths"]), d["name"]
    for f in doc["findings"]:
        if f["id"] == "node-forced":
            assert device(doc, f["device"])["node_source"] == "forced", f["device"]
        if f["id"] == "node-set":
            assert device(doc, f["device"])["node_source"] == "set", f["device"]


def facts_mpt3sas_61(doc, code):
    """6.1 without debugfs, a driver nothing is measured of: both facts unknown."""
    for i in irqs_of(doc, "sda"):
        assert i["managed"] is None and i["managed_source"] == "unknown", i
        assert i["user_settable"] is None and i["user_settable_source"] == "unknown", i


def plan_mpt3sas_61(plan, doc):
    """Unknown managed-ness on a kernel that refuses with EIO: fix probes by the write."""
    assert [e["action"] for e in plan["irqs"]] == ["move"] * 4, [e["action"] for e in plan["irqs"]]
    for e in plan["irqs"]:
        assert e["managed"] is None and "the write itself tells" in e["reason"], e


def plan_mpt3sas_unknown_kernel(plan, doc):
    """Unknown managed-ness and no kernel version to say how it refuses: never moved."""
    assert plan["irqs"] and plan["summary"]["move"] == 0, plan["summary"]
    for e in plan["irqs"]:
        assert e["action"] == "skip" and "never moved on a guess" in e["reason"], e


def facts_mpt3sas_612(doc, code):
    """6.12: 0444 says not user-settable (managed unknown), 0644 says settable and not managed."""
    for i in irqs_of(doc, "sda"):
        assert i["managed"] is None and i["managed_source"] == "unknown", i
        assert i["user_settable"] is False and i["user_settable_source"] == "file-mode", i
    for i in irqs_of(doc, "sdb"):
        assert i["managed"] is False and i["managed_source"] == "file-mode", i
        assert i["user_settable"] is True and i["user_settable_source"] == "file-mode", i


def plan_mpt3sas_612(plan, doc):
    sda = [e for e in plan["irqs"] if e["device"] == "sda"]
    sdb = [e for e in plan["irqs"] if e["device"] == "sdb"]
    assert len(sda) == 4 and len(sdb) == 4, plan["irqs"]
    for e in sda:
        assert e["action"] == "skip" and "user space may not set" in e["reason"], e
    for e in sdb:
        assert e["action"] == "move", e


def facts_forced_sibling(doc, code):
    """A NIC reading node 1 on the bus does not clear the two forced NVMe."""
    for name in ("nvme0n1", "nvme1n1"):
        d = device(doc, name)
        assert d["node_source"] == "forced" and pci_of(doc, name)["node_forced"] is True, (name, d["node_source"])
        assert "node-forced" in finding_ids(doc, name), finding_ids(doc, name)
    assert "node-set" not in finding_ids(doc)


def facts_set_taint(doc, code):
    """Taint I: the first-memory-node NVMe on the node-less bus was set by hand, not forced."""
    d, pci = device(doc, "nvme0n1"), pci_of(doc, "nvme0n1")
    assert d["node_source"] == "set" and pci["node_set"] is True and pci["node_forced"] is False, (d, pci)
    assert "tainted I" in pci["node_set_evidence"], pci["node_set_evidence"]
    sev = {(f["id"], f["device"]): f["severity"] for f in doc["findings"]}
    assert sev.get(("node-set", "nvme0n1")) == "warning", sev
    assert "node-forced" not in finding_ids(doc), sev
    twin = device(doc, "nvme1n1")
    assert twin["node"] == 1 and twin["node_source"] == "pci", twin["node_source"]
    assert not finding_ids(doc, "nvme1n1") & {"node-set", "node-forced", "node-unknown"}, finding_ids(doc, "nvme1n1")


def facts_set_fixed_612(doc, code):
    """6.12's nvme has the fix: a first-memory-node NVMe on a node-less bus is set, not forced."""
    d, pci = device(doc, "nvme0n1"), pci_of(doc, "nvme0n1")
    assert d["node_source"] == "set" and pci["node_forced"] is False, (d["node_source"], pci["node_forced"])
    assert "has the fix" in pci["node_set_evidence"], pci["node_set_evidence"]
    assert finding_ids(doc, "nvme0n1") >= {"node-set"} and "node-forced" not in finding_ids(doc)
    twin = device(doc, "nvme1n1")
    assert twin["node_source"] == "unknown" and "node-set" not in finding_ids(doc, "nvme1n1")


def facts_set_manifest(doc, code):
    """The manifest says this kernel has the nvme fix: its NVMe cannot have forced a node."""
    fix = [f for f in doc["machine"]["kernel_fixes"] if f["series"] == "nvme-no-forced-node"]
    assert fix and fix[0]["in_kernel"] is True, fix
    for name in ("nvme0n1", "nvme1n1"):
        d, pci = device(doc, name), pci_of(doc, name)
        assert d["node_source"] == "set" and pci["node_forced"] is False, (name, d["node_source"])
        assert "has the fix" in pci["node_set_evidence"], pci["node_set_evidence"]
    assert "node-forced" not in finding_ids(doc), finding_ids(doc)


def facts_offline(doc, code):
    """Node 1's CPUs offline: the node-less bus shows only node 0's CPUs; its host bridge's -1
    still says it spans. The bus that really is on node 0 stays the firmware's."""
    pci = pci_of(doc, "nvme0n1")
    assert pci["bus_node"] == -1 and pci["node_forced"] is True, (pci["bus_node"], pci["node_forced"])
    assert device(doc, "nvme0n1")["node_source"] == "forced"
    twin = pci_of(doc, "nvme1n1")
    assert twin["bus_node"] == 0 and twin["node_forced"] is False and twin["node_set"] is False, twin
    assert device(doc, "nvme1n1")["node"] == 0 and device(doc, "nvme1n1")["node_source"] == "pci"
    assert not [f for f in doc["findings"] if f["device"] == "nvme1n1" and f["severity"] == "critical"], \
        doc["findings"]


def facts_cpuless(doc, code):
    """An empty cpulistaffinity is a bus on a node without CPUs, not one spanning every node."""
    d, pci = device(doc, "nvme1n1"), pci_of(doc, "nvme1n1")
    assert pci["bus_node"] == 2 and d["node"] == 2 and d["node_source"] == "pci", (pci["bus_node"], d["node"])
    assert pci["node_forced"] is False and pci["node_set"] is False, pci
    assert pci["local_cpus"] == "", pci["local_cpus"]
    assert not finding_ids(doc, "nvme1n1") & {"node-set", "node-forced", "node-unknown"}
    assert device(doc, "nvme0n1")["node_source"] == "unknown"
    assert not [n for n in doc["notes"] if n["field"] == "pci.local_cpus"], doc["notes"]


PLAN_FACTS = {
    "managed-2n-nvme-confined": plan_all_skipped,
    "cloud-2n64c-8nvme-forced-node0": plan_cloud,
    "baremetal-2s-4nvme-healthy": plan_empty,
    "hba-megaraid-node1-irq-cpu0": plan_hba,
    "vm-1n-virtio-blk": plan_empty,
    "hba-mpt3sas-61-managed-unknown": plan_mpt3sas_61,
    "hba-mpt3sas-612-unsettable": plan_mpt3sas_612,
    "hba-mpt3sas-unknown-kernel": plan_mpt3sas_unknown_kernel,
}


FACTS = {
    "cloud-2n64c-8nvme-forced-node0": facts_cloud,
    "managed-2n-nvme-confined": facts_managed,
    "baremetal-2s-4nvme-healthy": facts_healthy,
    "hba-megaraid-node1-irq-cpu0": facts_hba_all,
    "hba-megaraid-node1-scan-sync": facts_hba_all,
    "hba-megaraid-node1-scan-async": facts_hba_all,
    "vm-1n-virtio-blk": facts_vm,
    "nvme-multipath-2ctrl-2nodes": facts_multipath,
    "nvme-multipath-2ctrl-2nodes-612": facts_multipath,
    "broken-inputs": facts_broken,
    "hba-mpt3sas-61-managed-unknown": facts_mpt3sas_61,
    "hba-mpt3sas-612-unsettable": facts_mpt3sas_612,
    "hba-mpt3sas-unknown-kernel": facts_mpt3sas_61,
    "forced-sibling-other-node": facts_forced_sibling,
    "node-set-by-hand-taint-i": facts_set_taint,
    "node-set-fixed-nvme-612": facts_set_fixed_612,
    "node-set-manifest-upstream": facts_set_manifest,
    "forced-offline-node1-cpus": facts_offline,
    "cpuless-node-bus": facts_cpuless,
}


def run(numastor, root, *args, cmd="check"):
    env = dict(os.environ, NO_COLOR="1")
    p = subprocess.run([numastor, cmd, "--sysroot", root, *args], capture_output=True, text=True, env=env)
    # the capture's location is not part of the expectation
    return p.returncode, p.stdout.replace(root, "<root>"), p.stderr


def compare(name, kind, got, path):
    if REGEN or not os.path.exists(path):
        if not REGEN:
            print(f"  {name}: no expected {kind}; run with NUMASTOR_REGENERATE=1 after review")
            return False
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(got)
        return True
    want = open(path).read()
    if got == want:
        return True
    import difflib
    diff = difflib.unified_diff(want.splitlines(), got.splitlines(), f"expected/{os.path.basename(path)}", "numastor", lineterm="", n=2)
    print(f"  {name}: {kind} differs from the expectation:")
    for line in list(diff)[:60]:
        print("    " + line)
    return False


def main():
    numastor = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or sorted(FACTS)
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="numastor-fixtures.") as tmp:
        subprocess.run([sys.executable, GEN, tmp, *names], check=True)
        for name in names:
            root = os.path.join(tmp, name)
            ok = True
            code, out, err = run(numastor, root, "--json")
            try:
                doc = json.loads(out)
                jsonschema.validate(doc, SCHEMA)
                assert doc["summary"]["exit_code"] == code, (doc["summary"]["exit_code"], code)
                invariants(doc)
                FACTS[name](doc, code)
            except (AssertionError, json.JSONDecodeError, jsonschema.ValidationError) as e:
                print(f"  {name}: {type(e).__name__}: {str(e)[:2000]}")
                if err:
                    print("    stderr: " + err[:500])
                ok = False
            ok &= compare(name, "json", out, os.path.join(EXPECTED, name + ".json"))
            tcode, text, _ = run(numastor, root)
            if tcode != code:
                print(f"  {name}: text exit code {tcode} != JSON exit code {code}")
                ok = False
            ok &= compare(name, "text", text, os.path.join(EXPECTED, name + ".txt"))
            # the fix plan for the same machine
            pcode, pout, perr = run(numastor, root, "--json", cmd="fix")
            try:
                assert pcode == 0, f"fix --sysroot exited {pcode}: {perr[:300]}"
                plan = json.loads(pout)
                jsonschema.validate(plan, FIX_SCHEMA)
                assert plan["dry_run"] is True
                if name in PLAN_FACTS:
                    PLAN_FACTS[name](plan, doc)
            except (AssertionError, json.JSONDecodeError, jsonschema.ValidationError, NameError) as e:
                print(f"  {name}: plan: {type(e).__name__}: {str(e)[:2000]}")
                ok = False
            ok &= compare(name, "plan json", pout, os.path.join(EXPECTED, name + ".plan.json"))
            _, ptext, _ = run(numastor, root, cmd="fix")
            ok &= compare(name, "plan text", ptext, os.path.join(EXPECTED, name + ".plan.txt"))
            print(("PASS " if ok else "FAIL ") + name)
            passed += ok
            failed += not ok
    print(f"fixtures: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
