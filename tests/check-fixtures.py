#!/usr/bin/env python3
"""Fixture machines: generate each captured tree, run `numastor check` on it, and compare the
JSON and text reports with the expected ones in tests/fixtures/expected/. Every JSON document is
validated against schema/numastor.schema.json, and the per-fixture facts below are asserted on
their own so a regenerated expectation cannot quietly drop them: each fixture's exact set of
(finding id, device, severity) and exit code (PINNED), no placement finding for a correctly
placed twin and no critical one without certain harm (CORRECT, NOT_CRITICAL), `numastor fix`
only for vectors known to be movable, and the text and plan reports read on their own (device
-> node lines, FORCED, findings, summary, the plan's moves: PLAN_MOVES).

    check-fixtures.py NUMASTOR [NAME...]
    NUMASTOR_REGENERATE=1 check-fixtures.py NUMASTOR   # rewrite expectations after review
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# tmpfs where there is one: a fixture tree is thousands of small files, which cost 20 times
# as much on a loaded disk
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None

import jsonschema
import schemas

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
EXPECTED = os.path.join(HERE, "fixtures", "expected")
SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor.schema.json")))
FIX_SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor-fix.schema.json")))
ERROR_SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor-error.schema.json")))
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
    # the hardware queue's memory off the node, unless one tag set the host shares is on it
    shared_local = sda["allocations"]["shared_tags"] is True and sda["allocations"]["tags_nodes"] == [1]
    for want in ("irq-fires-remote", "vector-serves-all-nodes", "midlayer-alloc-stock") + \
            (() if shared_local else ("alloc-remote",)):
        assert want in ids, f"sda: no {want} finding (has {sorted(ids)})"
    assert shared_local != ("alloc-remote" in ids), (sda["allocations"], ids)
    assert code >= 1


def facts_hba_alloc(doc, code):
    """Item 5: the midlayer node only where the kernel's scan mode makes it known; shared tags."""
    sda = device(doc, "sda")
    a = sda["allocations"]
    assert a["hw_queue_nodes"] == [0], a
    assert (a["host_alloc_node"], a["host_alloc_module"]) == (1, "megaraid_sas"), a
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


def facts_host_alloc(doc, code, remote):
    """Issue 15: where each Scsi_Host landed, from the fixture's description: a stock module's on
    the probing CPU's node, which the PCI core picks on the HBA's node among CPUs neither isolated
    nor nohz_full; a patched module's on dev_to_node; a VF's unknown."""
    want = {"sda": (None if remote else 1, "megaraid_sas"), "sdb": (1, "libata"),
            "sdc": (None if remote else 1, "hpsa"), "sdd": (0, "mpt3sas"), "sde": (None, "lpfc")}
    for name, (node, mod) in want.items():
        a = device(doc, name)["allocations"]
        assert (a["host_alloc_node"], a["host_alloc_module"]) == (node, mod), (name, a)
    basis = {n: device(doc, n)["allocations"]["host_alloc_basis"] for n in want}
    assert basis["sdb"].startswith("numastor-patched libata"), basis["sdb"]
    assert basis["sde"].startswith("unknown") and "virtual function" in basis["sde"], basis["sde"]
    for n in ("sda", "sdc"):
        assert basis[n].startswith("inferred not node 1" if remote else "inferred:"), (n, basis[n])
    assert basis["sdd"].startswith("inferred:"), basis["sdd"]
    if remote:  # a node set after boot: the node at probe time is unknown
        a = device(doc, "sdf")["allocations"]
        assert a["host_alloc_node"] is None and "set after boot" in a["host_alloc_basis"], a
    host = {f["device"]: f for f in doc["findings"] if f["id"] == "host-alloc-remote"}
    assert set(host) == ({"sda", "sdc"} if remote else set()), sorted(host)
    if remote:
        assert all(f["severity"] == "warning" for f in host.values()), host
        ev = host["sda"]["evidence"]
        assert (ev["structure"], ev["module"], ev["patched"], ev["device_node"], ev["patch_available"]) == \
            ("scsi_host", "megaraid_sas", False, 1, True), ev
        assert (ev["isolated_cpus"], ev["nohz_full_cpus"], ev["node_cpus"]) == ("8-11", "12-15", "8-15"), ev
        assert host["sda"]["remedy"]["action"] == "numastor fix --modules", host["sda"]["remedy"]
        # no patch for hpsa: the remedy is manual
        assert host["sdc"]["evidence"]["patch_available"] is False and host["sdc"]["remedy"]["action"] is None, \
            host["sdc"]


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
    # libata allocates the ATA port's SCSI host, and the AHCI function has no node: unknown
    a = device(doc, "sda")["allocations"]
    assert (a["host_alloc_node"], a["host_alloc_module"]) == (None, "libata"), a
    assert "no node (-1)" in a["host_alloc_basis"], a


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
    # no numa_nodes before 6.15: each path serves its own controller's node, inferred
    served = [(p["controller"], p["disk"], p["serves_nodes"], p["serves_nodes_source"], p["queue_depth"],
               p["ana_state"]) for p in d["paths"]]
    assert sorted(served) == [("nvme0", "nvme0c0n1", [0], "inferred", None, "optimized"),
                              ("nvme1", "nvme0c1n1", [1], "inferred", None, "optimized")], served
    assert "path-remote-while-local" not in finding_ids(doc)


def mp_paths(doc):
    """The multipath head's paths as (controller, node of its function, serves_nodes, source,
    queue_depth, ana_state), by controller."""
    mp = [d for d in doc["devices"] if d["kind"] == "nvme-multipath"]
    assert len(mp) == 1, [d["name"] for d in doc["devices"]]
    for d in doc["devices"]:
        for p in d["paths"]:
            # the multipath fields are a head's paths' alone (report 9)
            assert ("serves_nodes" in p) == (d["kind"] == "nvme-multipath"), (d["name"], sorted(p))
    return mp[0], sorted((p["controller"], p["pci"]["numa_node"], p["serves_nodes"], p["serves_nodes_source"],
                          p["queue_depth"], p["ana_state"]) for p in mp[0]["paths"])


def facts_mp72_numa(doc, code):
    """7.2, iopolicy numa, the kernel's numa_nodes as the controllers sit: no finding (the twin)."""
    d, paths = mp_paths(doc)
    assert d["iopolicy"] == "numa" and doc["machine"]["kernel_release"].startswith("7.2."), d["iopolicy"]
    # queue_depth is there and empty (not iopolicy queue-depth): null, and no note for it
    assert paths == [("nvme0", 0, [0], "kernel", None, "optimized"),
                     ("nvme1", 1, [1], "kernel", None, "optimized")], paths
    assert not finding_ids(doc, d["name"]) & {"path-remote-while-local", "paths-on-different-nodes"}
    assert not [n for n in doc["notes"] if n["field"].startswith("paths.")], doc["notes"]


def facts_mp72_remote(doc, code):
    """7.2: the kernel's numa_nodes give node 1 to the node-0 path while the node-1 path
    (non-optimized) exists: path-remote-while-local, a warning, from the kernel."""
    d, paths = mp_paths(doc)
    # "\n" alone is the kernel's empty node list: known and empty, not unknown
    assert paths == [("nvme0", 0, [0, 1], "kernel", None, "optimized"),
                     ("nvme1", 1, [], "kernel", None, "non-optimized")], paths
    f = [x for x in doc["findings"] if x["id"] == "path-remote-while-local"]
    assert len(f) == 1 and f[0]["severity"] == "warning" and f[0]["device"] == d["name"], f
    assert f[0]["evidence"]["served"] == [{"node": 1, "path": "nvme0", "path_node": 0, "basis": "kernel",
                                           "local_path": "nvme1", "local_ana_state": "non-optimized"}], f
    assert "inferred" not in f[0]["message"] and "numa_nodes" in f[0]["message"], f[0]["message"]
    assert "paths-on-different-nodes" not in finding_ids(doc)


def facts_mp72_qdepth(doc, code):
    """7.2, iopolicy queue-depth: queue_depth read, every path serves every node by the policy;
    paths-on-different-nodes, and path-remote-while-local folded into it (one cause, one alarm)."""
    d, paths = mp_paths(doc)
    assert d["iopolicy"] == "queue-depth", d["iopolicy"]
    assert paths == [("nvme0", 0, [0, 1], "iopolicy", 3, "optimized"),
                     ("nvme1", 1, [0, 1], "iopolicy", 0, "optimized")], paths
    ids = finding_ids(doc, d["name"])
    assert "paths-on-different-nodes" in ids and "path-remote-while-local" not in ids, ids


def facts_mp72_qdepth_nodeless(doc, code):
    """The same with one controller's function on no node (-1): the paths are not known to sit
    on different nodes, so no paths-on-different-nodes (its twin)."""
    d, paths = mp_paths(doc)
    assert d["node_source"] == "paths-disagree", d["node_source"]
    assert paths == [("nvme0", -1, [0, 1], "iopolicy", 3, "optimized"),
                     ("nvme1", 1, [0, 1], "iopolicy", 0, "optimized")], paths
    ids = finding_ids(doc, d["name"])
    assert not ids & {"paths-on-different-nodes", "path-remote-while-local"}, ids


def facts_mp612_nonopt(doc, code):
    """6.12 (no numa_nodes), the node-1 path non-optimized: the kernel's choice redone gives node 1
    to the node-0 path; path-remote-while-local, info, and it says inferred."""
    d, paths = mp_paths(doc)
    assert paths == [("nvme0", 0, [0, 1], "inferred", None, "optimized"),
                     ("nvme1", 1, [], "inferred", None, "non-optimized")], paths
    f = [x for x in doc["findings"] if x["id"] == "path-remote-while-local"]
    assert len(f) == 1 and f[0]["severity"] == "info", f
    assert f[0]["evidence"]["served"][0]["basis"] == "inferred" and "inferred" in f[0]["message"], f


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


def plan_allowed(want, empty=False):
    """The CPUs fix may place on: online, none isolated, nohz_full or banned (from the
    fixture's description); with empty, nothing to do either."""
    def check(plan, doc):
        assert plan["allowed_cpus"] == want, f"allowed_cpus {plan['allowed_cpus']}, expected {want}"
        if empty:
            plan_empty(plan, doc)
    return check


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


def facts_twin(doc, code):
    """The pinned sets say it all (check_pinned); no more facts of their own."""


def plan_twin_managed(plan, doc):
    """Managed vectors are skipped with the reason, never moved."""
    for e in plan["irqs"]:
        if e["managed"]:
            assert e["action"] == "skip" and "kernel-managed" in e["reason"], e

# -- evidence: managed / user_settable, and whose node it is ---------------------------------

def irqs_of(doc, name):
    return [i for p in device(doc, name)["paths"] for i in p["pci"]["irqs"]]


def pci_of(doc, name):
    return device(doc, name)["paths"][0]["pci"]


def cpu_set(text):
    out = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def invariants(doc):
    """What holds on every fixture: a managed vector is never user-settable; a known fact
    names its source, an unknown one none; a node is forced or set, never both; a queue's
    online CPUs are known whenever its CPUs and the machine's online CPUs are (a fabric path's
    queues too), and are those of its CPUs that are online."""
    online = doc["machine"]["online_cpus"]
    for d in doc["devices"]:
        for q in d["hw_queues"]:
            if q["cpus"] is not None and online is not None:
                want = sorted(cpu_set(q["cpus"]) & cpu_set(online))
                assert q["online_cpus"] is not None and sorted(cpu_set(q["online_cpus"])) == want, \
                    (d["name"], q["index"], q["cpus"], q["online_cpus"])
    for d in doc["devices"]:
        for p in d["paths"]:
            pci = p["pci"]
            if not pci:
                continue
            assert not (pci["node_forced"] and pci["node_set"]), (d["name"], pci["address"])
            # forced: why; not forced: nothing; unknown: why it cannot be told, when it was asked
            if pci["node_forced"] is not None:
                assert (pci["forced_evidence"] is not None) == pci["node_forced"], pci["address"]
            assert (pci["node_set_evidence"] is not None) == (pci["node_set"] is True), pci["address"]
            for i in pci["irqs"]:
                assert not (i["managed"] is True and i["user_settable"] is True), i
                assert (i["managed"] is None) == (i["managed_source"] == "unknown"), i
                assert (i["user_settable"] is None) == (i["user_settable_source"] == "unknown"), i
        if d["node_source"] == "forced":
            assert any(p["pci"] and p["pci"]["node_forced"] for p in d["paths"]), d["name"]
        # the SCSI host's node (issue 15): only for SCSI and ATA disks, and only ever the HBA's own
        a = d["allocations"]
        if d["kind"] not in ("scsi", "ata"):
            assert a["host_alloc_node"] is None and a["host_alloc_basis"] is None and \
                a["host_alloc_module"] is None, (d["name"], a)
        else:
            assert a["host_alloc_basis"], (d["name"], a)
            hba = d["paths"][0]["pci"] if d["paths"] else None
            assert a["host_alloc_node"] is None or (hba and a["host_alloc_node"] == hba["numa_node"]), (d["name"], a)
            # a node is given only as inferred or as a patched module's dev_to_node, and its basis says so
            known = ("inferred:", "numastor-patched")
            unknown = ("unknown", "inferred not", "numastor-patched")
            assert a["host_alloc_basis"].startswith(known if a["host_alloc_node"] is not None else unknown), \
                (d["name"], a)
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


# -- numbers (issue 11): garbage where the kernel writes integers, against its clean twin --

NUMASTOR = None  # set by main(): the twins are generated and run on demand
TWINS = {"garbage-numbers": "garbage-numbers-clean", "garbled-node1-cpulist": "forced-sibling-other-node"}
_twin_docs = {}


def twin_doc(name):
    """The clean twin's report, generated and run here (not its golden)."""
    if name not in _twin_docs:
        with tempfile.TemporaryDirectory(prefix="numastor-twin.", dir=SCRATCH) as tmp:
            subprocess.run([sys.executable, GEN, tmp, name], check=True)
            _, out, _ = run(NUMASTOR, os.path.join(tmp, name), "--json")
            _twin_docs[name] = json.loads(out)
    return _twin_docs[name]


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def changed_numbers(got, clean, path="$"):
    """Every number of the clean report the garbage one changed to anything but null (or a
    number that appeared from a null), and lists whose length changed."""
    out = []
    if isinstance(clean, dict) and isinstance(got, dict):
        for k in clean:
            if path == "$" and k in ("notes", "findings", "summary"):
                continue
            out += changed_numbers(got.get(k), clean[k], f"{path}.{k}")
    elif isinstance(clean, list) and isinstance(got, list):
        if len(clean) != len(got):
            out.append(f"{path}: {len(clean)} entries, garbage run {len(got)}")
        else:
            for i, (g, c) in enumerate(zip(got, clean)):
                out += changed_numbers(g, c, f"{path}[{i}]")
    elif is_number(clean) and got is not None and got != clean:
        out.append(f"{path}: {clean} became {got}")
    elif clean is None and is_number(got):
        out.append(f"{path}: null became {got}")
    return out


def has_note(doc, field, path_end, raw=None):
    for n in doc["notes"]:
        m = n["message"]
        if n["field"] == field and path_end in m and (raw is None or f"'{raw}" in m):
            return True
    return False


def facts_garbage_numbers(doc, code):
    """Each garbage value is null with a note naming the file and the text; nothing else moved."""
    want_notes = [
        ("pci.numa_node", "0000:00:04.0/numa_node", "4294967297"),
        ("pci.numa_node", "0000:00:05.0/numa_node", "0x1"),
        ("pci.numa_node", "0000:00:06.0/numa_node", "9223372036854775807"),
        ("node", "/node", "4294967297"), ("node", "/node", "0x1"),
        ("nodes.distances", "node0/distance", "10 2147483648"),
        ("nodes.distances", "node1/distance", "4294967297 10"),
        ("nodes.distances", "node2/distance", "21 21 -5"),
        ("nodes.memory_bytes", "node2/meminfo", "MemTotal:       18014398509481984 kB"),
        ("hw_queues.nr_tags", "nvme1n1/mq/0/nr_tags", "0x1"),
        ("queue.nr_requests", "nvme2n1/queue/nr_requests", "0x1"),
        ("hidden", "nvme3n1/hidden", "0x1"),
        ("size_bytes", "nvme4n1/size", "18014398509481984"),
        ("pci.local_cpus", "0000:00:08.0/local_cpulist", "0-1048575"),
        ("nodes", "node/node4294967297", None), ("nodes", "node/node1024", None),
        ("nodes", "node/node2147483647", None), ("nodes", "node/node1000000", None),
        ("pci.bus_node", "pci_bus/0000:80/cpulistaffinity", "0x1"),
        ("total_count", "/per_cpu_count has 20000 entries for 12 possible CPUs", None),
        ("node", "/node is a link to", None)]
    missing = [w for w in want_notes if not has_note(doc, *w)]
    assert not missing, f"no note naming the file and the text for {missing}; notes: {doc['notes']}"
    nodes = doc["machine"]["nodes"]
    assert [n["node"] for n in nodes] == [0, 1, 2], [n["node"] for n in nodes]  # no alias of node 1
    assert all(n["distances"] is None for n in nodes), [n["distances"] for n in nodes]
    assert nodes[2]["memory_bytes"] is None and nodes[0]["memory_bytes"] == 16 << 30, nodes
    for i in range(3):
        assert pci_of(doc, "nvme%dn1" % i)["numa_node"] is None, pci_of(doc, "nvme%dn1" % i)
        assert device(doc, "nvme%dn1" % i)["node"] is None
    assert device(doc, "nvme1n1")["hw_queues"][0]["nr_tags"] is None
    assert device(doc, "nvme2n1")["queue"]["nr_requests"] is None
    device(doc, "nvme3n1")  # hidden 0x1: kept (with its note), not dropped as a path device
    d4 = device(doc, "nvme4n1")
    assert d4["size_bytes"] is None and pci_of(doc, "nvme4n1")["local_cpus"] is None, d4
    nodes_read = [i["node"] for i in irqs_of(doc, "nvme4n1")]
    assert nodes_read.count(None) == 2, nodes_read
    assert pci_of(doc, "nvme5n1")["bus_node"] is None and device(doc, "nvme5n1")["node"] is None
    i5 = irqs_of(doc, "nvme5n1")
    assert i5[1]["total_count"] is None and i5[1]["counts_by_node"] is None and i5[2]["node"] is None, i5[:3]
    bad = changed_numbers(doc, twin_doc(TWINS["garbage-numbers"]))
    assert not bad, f"numbers changed to something other than null: {bad[:20]}"
    # the status does not fail open: the devices whose node the garbage hid (nvme0-2's
    # numa_node, nvme5's root bus) are named as not judged, the verdict is unknown (exit 3)
    unjudged = {u["device"]: u["reason"] for u in doc["summary"]["unjudged_devices"]}
    assert sorted(unjudged) == ["nvme0n1", "nvme1n1", "nvme2n1", "nvme5n1"], unjudged
    for i, addr in enumerate(("0000:00:04.0", "0000:00:05.0", "0000:00:06.0")):
        assert addr in unjudged[f"nvme{i}n1"] and "numa_node" in unjudged[f"nvme{i}n1"], unjudged
    assert "cpulistaffinity" in unjudged["nvme5n1"], unjudged["nvme5n1"]
    assert doc["summary"]["unjudged"] == 4 and doc["summary"]["status"] == "unknown", doc["summary"]
    assert doc["summary"]["exit_code"] == 3 == code, (doc["summary"], code)


def facts_garbage_numbers_clean(doc, code):
    assert not doc["notes"], doc["notes"]
    assert [n["node"] for n in doc["machine"]["nodes"]] == [0, 1, 2]
    for i in range(5):
        assert pci_of(doc, "nvme%dn1" % i)["numa_node"] == 0 and device(doc, "nvme%dn1" % i)["node"] == 0
    assert pci_of(doc, "nvme5n1")["bus_node"] == 1 and device(doc, "nvme5n1")["node"] == 1
    # the twin: everything read, everything judged
    assert doc["summary"]["unjudged"] == 0 and doc["summary"]["unjudged_devices"] == [], doc["summary"]
    assert doc["summary"]["status"] == "ok" and code == 0, (doc["summary"], code)


def facts_isolcpus_queues(doc, code):
    """6.12 with CPUs 12-15 isolated: queue 3's cpu_list reads empty (blk-mq leaves isolated CPUs
    out), its vector nvme0q4 is bound to 12-15: the queue serves 12-15, on node 1, and the
    other queues are as read."""
    q = {h["index"]: h for h in device(doc, "nvme0n1")["hw_queues"]}
    assert q[3]["cpus"] == "12-15" and q[3]["isolated_cpus"] == "12-15", q[3]
    assert q[3]["nodes"] == [1] and q[3]["memory_node"] == 1, q[3]
    for i, cpus in ((0, "0-3"), (1, "4-7"), (2, "8-11")):
        assert q[i]["cpus"] == cpus and q[i]["isolated_cpus"] == "", q[i]
    # nvme1: CPUs missing from queue 0 (2-3) are not isolated: read as they are, a mismatch
    q = {h["index"]: h for h in device(doc, "nvme1n1")["hw_queues"]}
    assert q[0]["cpus"] == "0-1" and q[0]["isolated_cpus"] == "", q[0]
    assert q[3]["cpus"] == "12-15" and q[3]["isolated_cpus"] == "12-15", q[3]
    mm = [f for f in doc["findings"] if f["id"] == "queue-affinity-mismatch"]
    assert [f["device"] for f in mm] == ["nvme1n1"], mm
    assert sorted(e["hw_queue"] for e in mm[0]["evidence"]["queues"]) == [0, 1], mm[0]["evidence"]


def facts_garbled_node_cpulist(doc, code):
    """A garbled node cpulist: cpus and cpu_count null, and the forced NVMe not flipped to
    "node 0, source pci" (whether they were forced is unknown now)."""
    n1 = doc["machine"]["nodes"][1]
    assert n1["node"] == 1 and n1["cpus"] is None and n1["cpu_count"] is None, n1
    assert has_note(doc, "nodes.cpus", "node1/cpulist", "8-15,zz"), doc["notes"]
    for name in ("nvme0n1", "nvme1n1"):
        d = device(doc, name)
        assert d["node"] is None and d["node_source"] == "unknown", (name, d["node"], d["node_source"])
        assert pci_of(doc, name)["node_forced"] is None, pci_of(doc, name)["node_forced"]
    bad = changed_numbers(doc, twin_doc(TWINS["garbled-node1-cpulist"]))
    assert not bad, f"numbers changed to something other than null: {bad[:20]}"
    unjudged = {u["device"]: u["reason"] for u in doc["summary"]["unjudged_devices"]}
    assert sorted(unjudged) == ["nvme0n1", "nvme1n1"], unjudged
    assert doc["summary"]["status"] == "unknown" and code == 3, (doc["summary"], code)


# Fixtures whose exclusion inputs do not all parse: fix refuses them, with this on stderr.
FIX_REFUSES = {
    "broken-inputs": "IRQBALANCE_BANNED_CPULIST in /etc/default/irqbalance is 'banana', which does not parse",
}

def facts_masks(doc, code):
    """issue 17's mask-only and overlapping-node machines: tests/check-masks.py asserts them
    against the tree itself; here, that each is multi-node and nothing on them is critical."""
    assert doc["machine"]["multi_node"] is True, doc["machine"]["multi_node"]
    assert not [f for f in doc["findings"] if f["severity"] == C], doc["findings"]


# -- issue 27: server shapes and CPU isolation, from each fixture's description ----------------

def facts_nohz_null_padded(doc, code):
    """cpu/nohz_full reads "(null)" right-justified to 96 columns: no nohz_full CPU, no note."""
    m = doc["machine"]
    assert m["possible_cpus"] == "0-95" and m["online_cpus"] == "0-95", (m["possible_cpus"], m["online_cpus"])
    assert m["nohz_full_cpus"] == "" and m["isolated_cpus"] == "", (m["nohz_full_cpus"], m["isolated_cpus"])
    notes = [n for n in doc["notes"] if "nohz_full" in n["field"] or "nohz_full" in n["message"]]
    assert not notes, f"a note about nohz_full: {notes}"
    iso = m["isolation"]
    assert iso["isolated_cpus"] == "" and iso["housekeeping_cpus"] == "0-95", iso
    assert iso["cmdline_known"] is True and iso["isolcpus"] is None and iso["nohz_full"] is None, iso


def plan_nohz_null_padded(plan, doc):
    """fix plans on it (it refused: 'does not parse as a CPU list'): sda's vector to node 1."""
    assert plan["allowed_cpus"] == "0-95", plan["allowed_cpus"]
    moves = [(e["device"], e["target"]) for e in plan["irqs"] if e["action"] == "move"]
    assert moves == [("sda", "24-47,72-95")], moves


def facts_hotplug(doc, code):
    """16 possible CPUs, 8 online: queues 8-15 serve no online CPU, on no node."""
    m = doc["machine"]
    assert m["possible_cpus"] == "0-15" and m["online_cpus"] == "0-7", (m["possible_cpus"], m["online_cpus"])
    for name in ("nvme0n1", "nvme1n1"):
        qs = device(doc, name)["hw_queues"]
        assert [q["index"] for q in qs] == list(range(16)), (name, [q["index"] for q in qs])
        for q in qs:
            want = "" if q["index"] >= 8 else str(q["index"])
            assert q["cpus"] == str(q["index"]), (name, q["index"], q["cpus"])
            assert q["online_cpus"] == want, (name, q["index"], q["online_cpus"], want)
            assert (q["nodes"] == []) == (q["index"] >= 8), (name, q["index"], q["nodes"])


def plan_hotplug(plan, doc):
    """The vectors of queues that serve no online CPU are left as they are, saying why."""
    for e in plan["irqs"]:
        if e["hw_queue"] is not None and e["hw_queue"] >= 8:
            assert e["action"] == "skip" and "serves no online CPU" in e["reason"], e


def facts_nonuma(doc, code):
    """No node/: node 0 is the online CPUs (0-3 of 64 possible), and the kernel has no NUMA."""
    m = doc["machine"]
    assert m["numa_support"] is False, m["numa_support"]
    assert [(n["node"], n["cpus"]) for n in m["nodes"]] == [(0, "0-3")], m["nodes"]
    assert m["possible_cpus"] == "0-63", m["possible_cpus"]
    f = [x for x in doc["findings"] if x["id"] == "single-node"]
    assert f and "no NUMA support" in f[0]["message"], f


def evidence(doc, fid, dev):
    f = [x for x in doc["findings"] if x["id"] == fid and x["device"] == dev]
    assert len(f) == 1, f"{fid} on {dev}: {len(f)} findings"
    return f[0]["evidence"]


def irq_of_queue(doc, dev, q):
    return next(h["irq"] for h in device(doc, dev)["hw_queues"] if h["index"] == q)


def facts_isolation(doc, code):
    """isolcpus=8-11 nohz_full=8-11 and a cgroup partition 14-15: every source read, and each
    finding about the vectors and queue the description names."""
    iso = doc["machine"]["isolation"]
    want = {"cmdline_known": True, "isolcpus": "8-11", "isolcpus_flags": ["domain"], "nohz_full": "8-11",
            "irqaffinity": None, "cgroup_isolated_cpus": "14-15", "cgroup_basis": "cpuset.cpus.isolated",
            "managed_irq_cpus": "", "isolated_cpus": "8-11,14-15", "housekeeping_cpus": "0-7,12-13"}
    assert iso == want, f"isolation {iso}, expected {want}"
    ev = evidence(doc, "isolated-queue", "nvme0n1")
    assert ev["hw_queues"] == [3] and ev["cpus"] == "8-9" and ev["irqs"] == [irq_of_queue(doc, "nvme0n1", 3)], ev
    ev = evidence(doc, "isolated-managed-irq", "nvme0n1")
    assert ev["irqs"] == [irq_of_queue(doc, "nvme0n1", 4)] and ev["cpus"] == "10", ev
    q = device(doc, "sda")["hw_queues"][0]
    assert (q["cpus"], q["isolated_cpus"]) == ("8-15", "8-11"), q  # cpu_list 12-15, cpuN entries 8-15
    for dev, cpu in (("sda", "9"), ("sdb", "15")):
        ev = evidence(doc, "isolated-movable-irq", dev)
        assert ev["irqs"] == [irq_of_queue(doc, dev, 0)] and ev["cpus"] == cpu and ev["fired_on_isolated"] > 0, ev


def plan_isolation(plan, doc):
    """fix never uses an isolated CPU (8-11 boot, 14-15 cgroup) and says per row what it left out."""
    assert plan["allowed_cpus"] == "0-7,12-13", plan["allowed_cpus"]
    moves = sorted((e["device"], e["target"], e["isolated_left_out"]) for e in plan["irqs"] if e["action"] == "move")
    assert moves == [("sda", "12-13", "8-11,14-15"), ("sdb", "12-13", "8-11,14-15")], moves


def facts_bed_node1_isolated(doc, code):
    q = device(doc, "sda")["hw_queues"][0]
    assert (q["cpus"], q["isolated_cpus"], q["nodes"]) == ("0-3", "2-3", [0, 1]), q
    ev = evidence(doc, "isolated-movable-irq", "sda")
    assert ev["cpus"] == "3" and ev["fired_on_isolated"] == 4821, ev


def plan_bed_node1_isolated(plan, doc):
    """Node 1 is all isolated: the vector goes to the housekeeping CPUs its queue serves."""
    moves = [(e["device"], e["target"], e["isolated_left_out"]) for e in plan["irqs"] if e["action"] == "move"]
    assert moves == [("sda", "0-1", "2-3")], moves


ISOLATION_IDS = {"isolated-queue", "isolated-movable-irq", "isolated-managed-irq", "queues-sized-to-housekeeping"}


def facts_isolation_twin(doc, code):
    """isolcpus=managed_irq,8-11 alone: in no file but the command line, and still isolated;
    every vector on a housekeeping CPU: no isolation finding."""
    iso = doc["machine"]["isolation"]
    assert doc["machine"]["isolated_cpus"] == "" and doc["machine"]["nohz_full_cpus"] == "", doc["machine"]
    assert iso["isolcpus_flags"] == ["managed_irq"] and iso["managed_irq_cpus"] == "8-11", iso
    assert iso["isolated_cpus"] == "8-11" and iso["housekeeping_cpus"] == "0-7,12-15", iso
    assert iso["cgroup_isolated_cpus"] == "" and iso["cgroup_basis"] == "cpuset.cpus.isolated", iso
    ids = {f["id"] for f in doc["findings"]} & ISOLATION_IDS
    assert not ids, f"isolation findings on the twin: {ids}"


def plan_isolation_twin(plan, doc):
    assert plan["allowed_cpus"] == "0-7,12-15", plan["allowed_cpus"]
    assert not [e for e in plan["irqs"] if e["action"] == "move"], plan["irqs"]


def facts_io_queue(doc, code):
    ev = evidence(doc, "queues-sized-to-housekeeping", "nvme0n1")
    assert ev["hw_queues"] == 8 and ev["online_cpus"] == 16 and ev["housekeeping_cpus"] == "0-3,8-11", ev
    assert doc["machine"]["isolation"]["isolcpus_flags"] == ["domain", "managed_irq", "io_queue"]


def facts_fewer_groups(doc, code):
    """Issue 33 item 4, read from the tree's own shape (gen-fixtures.py nvme_72_fewer_groups): the one
    queue blk-mq registered (19, every CPU) is paired with nvme0q20, the vector of its name whose
    affinity holds its CPUs; the 19 vectors named for queues the disk does not have serve none."""
    d = device(doc, "nvme0n1")
    qs = [(q["index"], q["cpus"], q["irq_pairing"]) for q in d["hw_queues"]]
    assert qs == [(19, "0-15", "nvme-name")], qs
    irqs = {i["name"]: i for i in d["paths"][0]["pci"]["irqs"]}
    assert d["hw_queues"][0]["irq"] == irqs["nvme0q20"]["irq"], (d["hw_queues"][0]["irq"], irqs["nvme0q20"]["irq"])
    paired = {n: i["hw_queue"] for n, i in irqs.items() if i["hw_queue"] is not None}
    assert paired == {"nvme0q20": 19}, paired
    notes = [n for n in doc["notes"] if n["subject"] == "nvme0n1" and n["field"] == "hw_queues.irq"]
    assert len(notes) == 1 and "queues 0-18" in notes[0]["message"] and "irqs 121-139" in notes[0]["message"], notes


def facts_groups_twin(doc, code):
    """The twin in today's shape: 16 queues, each paired by name with the vector bound to its CPU."""
    d = device(doc, "nvme0n1")
    irqs = {i["irq"]: i for i in d["paths"][0]["pci"]["irqs"]}
    assert len(d["hw_queues"]) == 16, len(d["hw_queues"])
    for q in d["hw_queues"]:
        v = irqs[q["irq"]]
        assert q["irq_pairing"] == "nvme-name" and v["name"] == "nvme0q%d" % (q["index"] + 1), (q, v["name"])
        assert v["hw_queue"] == q["index"] and v["affinity"] == q["cpus"] == str(q["index"]), (q, v)
    assert not [n for n in doc["notes"] if n["field"] == "hw_queues.irq"], doc["notes"]


def facts_scsi_irq_order(doc, code, twin):
    """virtio-scsi's request vectors share one name: by place (IRQ number) they would pair queue 0 with
    irq 120; the CPU lists pair each queue with the vector bound to its CPUs (gen-fixtures.py)."""
    d = device(doc, "sda")
    want = {0: 143, 1: 144, 2: 145, 3: 146} if twin else {0: 143, 1: 144, 2: 120, 3: 121}
    got = {q["index"]: q["irq"] for q in d["hw_queues"]}
    assert got == want, got
    irqs = {i["irq"]: i for i in d["paths"][0]["pci"]["irqs"]}
    for q in d["hw_queues"]:
        assert q["irq_pairing"] == ("virtio-name" if twin else "cpu-list"), q
        assert irqs[q["irq"]]["affinity"] == q["cpus"] and irqs[q["irq"]]["hw_queue"] == q["index"], (q, irqs[q["irq"]])
    assert {i["hw_queue"] for i in irqs.values()} == {None, 0, 1, 2, 3}
    notes = [n for n in doc["notes"] if n["field"] == "hw_queues.irq"]
    assert len(notes) == (0 if twin else 2), notes
    assert all("paired by the CPU lists" in n["message"] and "place among vectors of one name" in n["message"]
               for n in notes), notes


PLAN_FACTS = {
    "twin-612-2n-managed-mismatch": plan_twin_managed,
    "managed-2n-nvme-confined": plan_all_skipped,
    "cloud-2n64c-8nvme-forced-node0": plan_cloud,
    "baremetal-2s-4nvme-healthy": plan_empty,
    "hba-megaraid-node1-irq-cpu0": plan_hba,
    "vm-1n-virtio-blk": plan_empty,
    "hba-mpt3sas-61-managed-unknown": plan_mpt3sas_61,
    "hba-mpt3sas-612-unsettable": plan_mpt3sas_612,
    "hba-mpt3sas-unknown-kernel": plan_mpt3sas_unknown_kernel,
    "epyc-2s96c-nohz-null-padded": plan_nohz_null_padded,
    "xen-2n8c-hotplug-headroom": plan_hotplug,
    "isolation-2n16c-isolcpus-cgroup": plan_isolation,
    "isolation-2n16c-managed-irq-twin": plan_isolation_twin,
    "isolation-bed-node1-isolated": plan_bed_node1_isolated,
    # cpu/isolated 8-11 and cpu/nohz_full 12-14, no command line: only CPU 15 of node 1
    "hba-isolated-node1-cpu15-housekeeping": plan_allowed("0-7,15", empty=True),
    # CPUs 8-15 offline
    "forced-offline-node1-cpus": plan_allowed("0-7"),
    # IRQBALANCE_BANNED_CPULIST=0-1
    "nvme-multipath-2ctrl-2nodes": plan_allowed("2-31", empty=True),
}


GIVING = {"pci", "nd-region", "vmbus", "device", "fabric", "members"}


def facts_nonpci(doc, code):
    """Issue 17's machines (check-nonpci.py holds each to its tree): a node says which device
    gave it, a null node says why, and md/dm alone carry member nodes."""
    for d in doc["devices"]:
        if d["node"] is None:
            assert d["node_reason"], f"{d['name']}: node null without a node_reason"
            assert d["node_source"] not in GIVING - {"pci"}, f"{d['name']}: {d['node_source']} but no node"
        else:
            assert d["node_reason"] is None, f"{d['name']}: node {d['node']} and a node_reason"
            if d["node_source"] in {"nd-region", "vmbus", "device"}:
                assert d["node_device"], f"{d['name']}: node from {d['node_source']} without node_device"
        stacked = d["kind"] in ("md", "dm")
        assert (d["member_nodes"] is not None) == stacked, f"{d['name']}: member_nodes {d['member_nodes']}"
        for p in d["paths"]:
            if p["fabric"] is not None:
                assert p["fabric"]["carrier"] or p["fabric"]["reason"], f"{d['name']}: fabric path without carrier or reason"


def facts_azure_forcing(doc, code):
    """pci-hyperv's node is the host's, but on the first memory node under an nvme that may
    force (5.10) it cannot be told from a forced one: unknown, and the evidence says why."""
    facts_nonpci(doc, code)
    d = device(doc, "nvme0n1")
    assert (d["node"], d["node_source"]) == (None, "unknown"), (d["node"], d["node_source"])
    assert "pci-hyperv" in d["node_reason"] and "cannot tell" in d["node_reason"], d["node_reason"]


# issue 33 items 5 and 6 (h/drv): the nvme judged by its module file; per-node descriptor pools
def nvme_fix_entry(doc):
    fix = [f for f in doc["machine"]["kernel_fixes"] if f["series"] == "nvme-no-forced-node"]
    assert len(fix) == 1, doc["machine"]["kernel_fixes"]
    return fix[0]


def facts_module_forcing(doc, code):
    """A 6.12 (whose version says fixed) with a loaded nvme whose file imports node_states: the
    module decides, and nvme0 reading 0 on the node-less bus was forced."""
    fix = nvme_fix_entry(doc)
    assert fix["in_kernel"] is False and "imports node_states" in fix["basis"], fix
    d, pci = device(doc, "nvme0n1"), pci_of(doc, "nvme0n1")
    assert d["node_source"] == "forced" and pci["node_forced"] is True, (d["node_source"], pci["node_forced"])
    assert "module file /lib/modules/6.12.43+deb13-amd64/kernel/drivers/nvme/host/nvme.ko.xz" in \
        pci["forced_evidence"], pci["forced_evidence"]
    assert "node-set" not in finding_ids(doc), finding_ids(doc)


def facts_module_fixed(doc, code):
    """The twin: the file imports no node_states: not forcing, judged by the module (not the version)."""
    fix = nvme_fix_entry(doc)
    assert fix["in_kernel"] is True and "does not import node_states" in fix["basis"], fix
    d, pci = device(doc, "nvme0n1"), pci_of(doc, "nvme0n1")
    assert d["node_source"] == "set" and pci["node_forced"] is False, (d["node_source"], pci["node_forced"])
    assert "does not import node_states" in pci["node_set_evidence"], pci["node_set_evidence"]
    assert "upstream since v6.6" not in pci["node_set_evidence"], pci["node_set_evidence"]
    assert "node-forced" not in finding_ids(doc), finding_ids(doc)


def facts_module_replaced(doc, code):
    """A forcing file that is not the loaded module (another srcversion): the version judges, and
    the basis says why the file did not."""
    fix = nvme_fix_entry(doc)
    assert fix["in_kernel"] is True and fix["basis"].startswith("upstream since v6.6"), fix
    assert "is not the loaded module" in fix["basis"], fix
    d, pci = device(doc, "nvme0n1"), pci_of(doc, "nvme0n1")
    assert d["node_source"] == "set" and pci["node_forced"] is False, (d["node_source"], pci["node_forced"])
    assert "not judged by its module" in pci["node_set_evidence"], pci["node_set_evidence"]
    assert "node-forced" not in finding_ids(doc), finding_ids(doc)


def facts_descriptor_pools(doc, code, per_node):
    """7.2 (v6.16 on): nvme's descriptors on each queue's node, said in the allocations and the
    alloc-remote finding; 6.15: no descriptor fields, the old wording."""
    a0, a1 = device(doc, "nvme0n1")["allocations"], device(doc, "nvme1n1")["allocations"]
    alloc = [f for f in doc["findings"] if f["id"] == "alloc-remote" and f["device"] == "nvme0n1"]
    assert len(alloc) == 1, finding_ids(doc)
    if per_node:
        assert a0["descriptor_nodes"] == [0] and a0["device_node"] == 1, a0
        assert a1["descriptor_nodes"] == [0, 1], a1
        assert "PRP/SGL descriptors live on node 0" in alloc[0]["message"], alloc[0]["message"]
    else:
        assert "descriptor_nodes" not in a0 and "descriptor_basis" not in a1, a0
        assert "descriptor" not in alloc[0]["message"], alloc[0]["message"]
    assert "alloc-remote" not in finding_ids(doc, "nvme1n1"), finding_ids(doc, "nvme1n1")


FACTS = {
    "cloud-2n64c-8nvme-forced-node0": facts_cloud,
    # issue 33 items 5 and 6 (h/drv)
    "nvme-612-module-forcing": facts_module_forcing,
    "nvme-612-module-fixed": facts_module_fixed,
    "nvme-612-module-replaced": facts_module_replaced,
    "nvme-72-descriptor-pools": lambda doc, code: facts_descriptor_pools(doc, code, True),
    "nvme-615-descriptor-pools": lambda doc, code: facts_descriptor_pools(doc, code, False),
    "managed-2n-nvme-confined": facts_managed,
    "baremetal-2s-4nvme-healthy": facts_healthy,
    "hba-megaraid-node1-irq-cpu0": facts_hba_all,
    "hba-megaraid-node1-scan-sync": facts_hba_all,
    "hba-megaraid-node1-scan-async": facts_hba_all,
    "vm-1n-virtio-blk": facts_vm,
    "nvme-multipath-2ctrl-2nodes": facts_multipath,
    "nvme-multipath-2ctrl-2nodes-612": facts_multipath,
    "nvme-multipath-72-numa": facts_mp72_numa,
    "nvme-multipath-72-remote": facts_mp72_remote,
    "nvme-multipath-72-qdepth": facts_mp72_qdepth,
    "nvme-multipath-72-qdepth-nodeless": facts_mp72_qdepth_nodeless,
    "nvme-multipath-612-nonopt": facts_mp612_nonopt,
    "broken-inputs": facts_broken,
    "twin-xen-2n-5nvme-confined": facts_twin,
    "xen-2n-irqbalance-chain": facts_twin,
    "twin-2n-hba-managed-unknown": facts_twin,
    "twin-612-2n-managed-mismatch": facts_twin,
    "twin-510-2n-forced-vs-described": facts_twin,
    "hba-mpt3sas-61-managed-unknown": facts_mpt3sas_61,
    "hba-mpt3sas-612-unsettable": facts_mpt3sas_612,
    "hba-mpt3sas-unknown-kernel": facts_mpt3sas_61,
    "forced-sibling-other-node": facts_forced_sibling,
    "node-set-by-hand-taint-i": facts_set_taint,
    "node-set-fixed-nvme-612": facts_set_fixed_612,
    "node-set-manifest-upstream": facts_set_manifest,
    "forced-offline-node1-cpus": facts_offline,
    "cpuless-node-bus": facts_cpuless,
    "garbage-numbers": facts_garbage_numbers,
    "garbage-numbers-clean": facts_garbage_numbers_clean,
    "garbled-node1-cpulist": facts_garbled_node_cpulist,
    "hba-isolated-node1-remote-host": lambda doc, code: facts_host_alloc(doc, code, True),
    "hba-isolated-node1-cpu15-housekeeping": lambda doc, code: facts_host_alloc(doc, code, False),
    "nvme-612-isolcpus-queues": facts_isolcpus_queues,
    "pmem-2s": facts_nonpci,
    "azure-storvsc-nvme": facts_nonpci,
    "azure-storvsc-nvme-forcing": facts_azure_forcing,
    "xen-blkfront": facts_nonpci,
    "virtio-mmio-firecracker": facts_nonpci,
    "nvme-tcp-2nic": facts_nonpci,
    "nvme-tcp-1nic": facts_nonpci,
    "nvme-rdma": facts_nonpci,
    "nvme-fc": facts_nonpci,
    "md-raid1-2nodes": facts_nonpci,
    "md-raid1-1node": facts_nonpci,
    "kernel3-mask-only-17n": facts_masks,
    "overlapping-nodes-firmware-bug": facts_masks,
    "eight-nodes-distinct": facts_masks,
    "epyc-2s96c-nohz-null-padded": facts_nohz_null_padded,
    "xen-2n8c-hotplug-headroom": facts_hotplug,
    "nonuma-kernel-4of64": facts_nonuma,
    "isolation-2n16c-isolcpus-cgroup": facts_isolation,
    "isolation-2n16c-managed-irq-twin": facts_isolation_twin,
    "isolation-io-queue-72": facts_io_queue,
    "isolation-bed-node1-isolated": facts_bed_node1_isolated,
    "nvme-72-fewer-groups": facts_fewer_groups,
    "nvme-72-groups-twin": facts_groups_twin,
    "virtio-scsi-72-irq-order": lambda doc, code: facts_scsi_irq_order(doc, code, False),
    "virtio-scsi-72-irq-order-twin": lambda doc, code: facts_scsi_irq_order(doc, code, True),
}


# ---------------------------------------------------------------------------
# Pinned outcomes: per fixture the exit code and the exact set of (finding id, device,
# severity), written by hand from each fixture's description (gen-fixtures.py) and the rules
# (man/numastor-findings.7.scd), not dumped from a run. A regenerated golden cannot move them.
# ---------------------------------------------------------------------------

C, W, I = "critical", "warning", "info"
CLOUD = {(rule, "nvme%dn1" % i, sev) for i in range(8)
         for rule, sev in (("node-forced", C), ("irq-confined", C), ("irq-fires-remote", W),
                           ("irqbalance-confines", C))}
PINNED = {
    "cloud-2n64c-8nvme-forced-node0": (2, CLOUD),
    # issue 33 items 5 and 6 (h/drv)
    "nvme-612-module-forcing": (2, {("node-forced", "nvme0n1", C), ("node-unknown", "nvme1n1", I)}),
    "nvme-612-module-fixed": (1, {("node-set", "nvme0n1", W), ("node-unknown", "nvme1n1", I)}),
    "nvme-612-module-replaced": (1, {("node-set", "nvme0n1", W), ("node-unknown", "nvme1n1", I)}),
    "nvme-72-descriptor-pools": (2, {("irq-confined", "nvme0n1", C), ("alloc-remote", "nvme0n1", W),
                                     ("irq-fires-remote", "nvme0n1", W)}),
    "nvme-615-descriptor-pools": (2, {("irq-confined", "nvme0n1", C), ("alloc-remote", "nvme0n1", W),
                                      ("irq-fires-remote", "nvme0n1", W)}),
    "managed-2n-nvme-confined": (2, {("irq-confined", "nvme0n1", C), ("irq-fires-remote", "nvme0n1", W),
                                     ("queue-affinity-mismatch", "nvme0n1", W)}),
    "baremetal-2s-4nvme-healthy": (0, set()),
    "hba-megaraid-node1-irq-cpu0": (1, {("irq-fires-remote", "sda", W), ("vector-serves-all-nodes", "sda", W),
                                        ("alloc-remote", "sda", W), ("midlayer-alloc-stock", "sda", I)}),
    "hba-megaraid-node1-scan-sync": (1, {("irq-fires-remote", "sda", W), ("vector-serves-all-nodes", "sda", W),
                                         ("alloc-remote", "sda", W), ("midlayer-alloc-stock", "sda", I)}),
    # one tag set shared by the host, on the HBA's node: no hctx alloc-remote warning
    "hba-megaraid-node1-scan-async": (1, {("irq-fires-remote", "sda", W), ("vector-serves-all-nodes", "sda", W),
                                          ("midlayer-alloc-stock", "sda", I)}),
    "nvme-multipath-2ctrl-2nodes-612": (0, set()),
    "vm-1n-virtio-blk": (0, {("single-node", None, I)}),
    "nvme-multipath-2ctrl-2nodes": (0, set()),
    "nvme-multipath-72-numa": (0, set()),
    "nvme-multipath-72-remote": (1, {("path-remote-while-local", "nvme0n1", W)}),
    "nvme-multipath-72-qdepth": (0, {("paths-on-different-nodes", "nvme0n1", I)}),
    "nvme-multipath-72-qdepth-nodeless": (0, set()),
    "nvme-multipath-612-nonopt": (0, {("path-remote-while-local", "nvme0n1", I)}),
    # nvme1 (reads 1) and nvme2 (reads 0) on the node-less bus of a 6.12, whose nvme cannot force
    "broken-inputs": (1, {("node-set", "nvme1n1", W), ("node-set", "nvme2n1", W)}),
    # evidence's fixtures (issue 10 item 2 and 3), from their descriptions
    "hba-mpt3sas-61-managed-unknown": (2, {("irq-confined", "sda", C), ("midlayer-alloc-stock", "sda", I)}),
    "hba-mpt3sas-unknown-kernel": (2, {("irq-confined", "sda", C), ("midlayer-alloc-stock", "sda", I)}),
    "hba-mpt3sas-612-unsettable": (2, {("irq-confined", "sda", C), ("midlayer-alloc-stock", "sda", I),
                                       ("irq-confined", "sdb", C), ("midlayer-alloc-stock", "sdb", I)}),
    "forced-sibling-other-node": (2, {("node-forced", "nvme0n1", C), ("node-forced", "nvme1n1", C)}),
    "forced-offline-node1-cpus": (2, {("node-forced", "nvme0n1", C)}),
    "node-set-by-hand-taint-i": (1, {("node-set", "nvme0n1", W)}),
    "node-set-fixed-nvme-612": (1, {("node-set", "nvme0n1", W), ("node-unknown", "nvme1n1", I)}),
    "node-set-manifest-upstream": (1, {("node-set", "nvme0n1", W), ("node-set", "nvme1n1", W)}),
    "cpuless-node-bus": (0, {("node-unknown", "nvme0n1", I)}),
    # issue 11's garbage numbers: null with notes, no finding from a made-up number
    # devices whose node could not be read: not judged, so not OK (exit 3)
    "garbage-numbers": (3, set()),
    "garbage-numbers-clean": (0, set()),
    # forced-sibling-other-node with node 1's CPUs unknown: no forced/firmware verdict either way
    "garbled-node1-cpulist": (3, set()),
    "twin-xen-2n-5nvme-confined": (2, {
        ("irq-confined", "nvme0n1", C), ("irq-fires-remote", "nvme0n1", W),
        ("irq-confined", "nvme1n1", W), ("irq-fires-remote", "nvme1n1", W), ("rq-affinity-remote", "nvme1n1", W),
        ("irq-fires-remote", "nvme3n1", W),
        ("node-unknown", "nvme4n1", I), ("irq-confined", "nvme4n1", W), ("irq-fires-remote", "nvme4n1", W)}),
    "xen-2n-irqbalance-chain": (2, {
        ("irq-confined", "nvme0n1", C), ("irq-fires-remote", "nvme0n1", W), ("irqbalance-confines", "nvme0n1", W),
        ("irq-confined", "nvme1n1", W), ("irq-fires-remote", "nvme1n1", W), ("rq-affinity-remote", "nvme1n1", W),
        ("irqbalance-confines", "nvme1n1", W), ("irqbalance-confines", "nvme2n1", W),
        ("irq-fires-remote", "nvme3n1", W), ("irqbalance-confines", "nvme3n1", W),
        ("node-unknown", "nvme4n1", I), ("irq-confined", "nvme4n1", W), ("irq-fires-remote", "nvme4n1", W)}),
    "twin-2n-hba-managed-unknown": (2, {
        ("irq-confined", "sda", C), ("midlayer-alloc-stock", "sda", I), ("irqbalance-confines", "sda", W),
        ("midlayer-alloc-stock", "sdb", I), ("irqbalance-confines", "sdb", W),
        ("irq-fires-remote", "sdc", W), ("vector-serves-all-nodes", "sdc", W), ("alloc-remote", "sdc", W),
        ("midlayer-alloc-stock", "sdc", I), ("irqbalance-confines", "sdc", W),
        ("vector-serves-all-nodes", "sdd", W), ("midlayer-alloc-stock", "sdd", I), ("irqbalance-confines", "sdd", W)}),
    "twin-612-2n-managed-mismatch": (1, {
        ("queue-affinity-mismatch", "nvme1n1", W), ("node-unknown", "nvme2n1", I),
        ("vector-serves-all-nodes", "sda", W), ("midlayer-alloc-stock", "sda", I), ("irqbalance-confines", "sda", W)}),
    "twin-510-2n-forced-vs-described": (2, {
        ("node-forced", "nvme0n1", C), ("irq-confined", "nvme0n1", C), ("irq-fires-remote", "nvme0n1", W)}),
    # issue 15: node 1's CPUs all isolated or nohz_full: the stock megaraid_sas and hpsa hosts are
    # off their HBA's node; the patched libata's, node 0's mpt3sas's and the VF's are not faulted
    # sdf's node was set after boot (node-set): where its host went is unknown, no host finding
    "hba-isolated-node1-remote-host": (1, {("midlayer-alloc-stock", d, I) for d in ("sda", "sdb", "sdc", "sdd", "sde")} |
                                          {("host-alloc-remote", "sda", W), ("host-alloc-remote", "sdc", W),
                                           ("node-set", "sdf", W)} |
                                          # issue 27: their queues serve node 1's CPUs, all isolated, and
                                          # their vectors fired there
                                          {("isolated-queue", d, W) for d in ("sda", "sdb", "sdc", "sde", "sdf")}),
    # its twin: CPU 15 stays a housekeeping CPU, the probes ran on node 1
    "hba-isolated-node1-cpu15-housekeeping": (0, {("midlayer-alloc-stock", d, I) for d in ("sda", "sdb", "sdc", "sdd", "sde")}),
    # 6.12 and isolcpus=: a queue's cpu_list without its isolated CPUs is not a mismatch with its
    # vector, nor are its interrupts remote (the twin: twin-612-2n-managed-mismatch's nvme1n1)
    # issue 27: queue 3 of each serves only the isolated CPUs 12-15, and fired on CPU 12
    "nvme-612-isolcpus-queues": (1, {("queue-affinity-mismatch", "nvme1n1", W), ("isolated-queue", "nvme0n1", W),
                                     ("isolated-queue", "nvme1n1", W)}),
    # issue 17: disks on no PCI function. pmem, Xen and fabrics disks on their node have nothing
    # wrong; the fabric paths' NIC/HCA vectors are not the disk's queue vectors (no irq-confined
    # from a NIC's IRQs); the 2-NIC head's iopolicy is numa
    "pmem-2s": (0, set()),
    "xen-blkfront": (0, set()),
    "nvme-tcp-2nic": (0, set()),
    "nvme-tcp-1nic": (0, set()),
    "nvme-rdma": (0, set()),
    "nvme-fc": (0, set()),
    # pci-hyperv's node is the host's: no node-set for the Azure NVMe; storvsc under the stock
    # midlayer: the info every SCSI disk gets
    "azure-storvsc-nvme": (0, {("midlayer-alloc-stock", "sda", I), ("midlayer-alloc-stock", "sdb", I)}),
    "azure-storvsc-nvme-forcing": (0, {("midlayer-alloc-stock", "sda", I), ("midlayer-alloc-stock", "sdb", I)}),
    # one legacy IRQ for the one queue that serves both nodes' CPUs
    "virtio-mmio-firecracker": (1, {("vector-serves-all-nodes", "vda", W)}),
    "md-raid1-2nodes": (1, {("stacked-cross-node", "md0", W)}),
    "md-raid1-1node": (0, set()),
    # issue 17: a 3.x capture with only cpumap / local_cpus / cpuaffinity, each NVMe placed on its
    # node: nothing (not single-node); eight nodes each claiming CPUs 0-7: the firmware bug, and no
    # critical finding on the nodes it makes unreliable
    "kernel3-mask-only-17n": (0, set()),
    # nvme1n1's vectors all on node 6 while it sits on node 5: irq-confined, a warning on an unreliable node
    "overlapping-nodes-firmware-bug": (1, {("node-cpus-overlap", None, W), ("irq-confined", "nvme1n1", W),
                                           ("queue-affinity-mismatch", "nvme1n1", W)}),
    "eight-nodes-distinct": (0, set()),
    # issue 27: nohz_full "(null)" padded to 96 columns changes nothing: sda is
    # hba-megaraid-node1-irq-cpu0's disk on a 96-CPU 6.1
    "epyc-2s96c-nohz-null-padded": (1, {("irq-fires-remote", "sda", W), ("vector-serves-all-nodes", "sda", W),
                                        ("alloc-remote", "sda", W), ("midlayer-alloc-stock", "sda", I)}),
    # the queues of absent CPUs hide no confinement and are judged by nothing
    "xen-2n8c-hotplug-headroom": (2, {("irq-confined", "nvme0n1", C), ("irq-fires-remote", "nvme0n1", W)}),
    "nonuma-kernel-4of64": (0, {("single-node", None, I)}),
    "isolation-2n16c-isolcpus-cgroup": (2, {("isolated-queue", "nvme0n1", W), ("isolated-managed-irq", "nvme0n1", C),
                                            ("isolated-movable-irq", "sda", C), ("isolated-movable-irq", "sdb", W),
                                            ("midlayer-alloc-stock", "sda", I), ("midlayer-alloc-stock", "sdb", I)}),
    "isolation-2n16c-managed-irq-twin": (0, {("midlayer-alloc-stock", "sda", I)}),
    "isolation-io-queue-72": (0, {("queues-sized-to-housekeeping", "nvme0n1", I)}),
    # one queue for every CPU of both nodes, its vector on CPU 3 (node 0), its memory on node 0
    "nvme-72-fewer-groups": (1, {("vector-serves-all-nodes", "nvme0n1", W), ("irq-fires-remote", "nvme0n1", W),
                                 ("alloc-remote", "nvme0n1", W)}),
    "nvme-72-groups-twin": (0, set()),
    # the queues paired by their CPU lists: each vector on its queue's CPUs, nothing to fault
    "virtio-scsi-72-irq-order": (0, {("midlayer-alloc-stock", "sda", I)}),
    "virtio-scsi-72-irq-order-twin": (0, {("midlayer-alloc-stock", "sda", I)}),
    "isolation-bed-node1-isolated": (2, {("isolated-movable-irq", "sda", C), ("vector-serves-all-nodes", "sda", W),
                                         ("alloc-remote", "sda", W), ("midlayer-alloc-stock", "sda", I),
                                         # every CPU of node 1 isolated: the stock host went elsewhere
                                         ("host-alloc-remote", "sda", W)}),
}

# The correctly placed twins: devices whose placement no rule may fault (no finding at all
# about where their node, interrupts or queues are), and never a critical one.
PLACEMENT = {"node-forced", "node-set", "node-unknown", "irq-confined", "irq-fires-remote", "queue-affinity-mismatch",
             "vector-serves-all-nodes", "irqbalance-confines", "rq-affinity-remote", "alloc-remote",
             "host-alloc-remote"}
CORRECT = {
    "baremetal-2s-4nvme-healthy": ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"],
    "twin-xen-2n-5nvme-confined": ["nvme2n1"],
    "twin-2n-hba-managed-unknown": ["sdb"],
    "twin-612-2n-managed-mismatch": ["nvme0n1"],
    "twin-510-2n-forced-vs-described": ["nvme1n1"],
    "node-set-by-hand-taint-i": ["nvme1n1"],
    "forced-offline-node1-cpus": ["nvme1n1"],
    "cpuless-node-bus": ["nvme1n1"],
    "hba-isolated-node1-remote-host": ["sdb", "sdd", "sde"],
    "hba-isolated-node1-cpu15-housekeeping": ["sda", "sdb", "sdc", "sdd", "sde"],
    "nvme-612-isolcpus-queues": ["nvme0n1"],
    "azure-storvsc-nvme": ["nvme0n1", "sda", "sdb"],
    "nvme-tcp-1nic": ["nvme1n1"],
    "nvme-rdma": ["nvme1n1"],
    "nvme-fc": ["nvme1n1"],
    "md-raid1-1node": ["md0", "nvme1n1", "nvme2n1"],
    "kernel3-mask-only-17n": ["nvme0n1", "nvme1n1", "nvme2n1"],
    "eight-nodes-distinct": ["nvme0n1"],
    "epyc-2s96c-nohz-null-padded": ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"],
    "xen-2n8c-hotplug-headroom": ["nvme1n1"],
    "isolation-2n16c-managed-irq-twin": ["nvme0n1", "sda"],
    "isolation-io-queue-72": ["nvme0n1"],
    "nvme-72-groups-twin": ["nvme0n1"],
    "virtio-scsi-72-irq-order": ["sda"],
    "virtio-scsi-72-irq-order-twin": ["sda"],
}
# Devices whose every finding must be the given one severity at most (correct but for one fact)
NOT_CRITICAL = {
    "twin-612-2n-managed-mismatch": ["nvme1n1", "nvme2n1", "sda"],
    "twin-xen-2n-5nvme-confined": ["nvme1n1", "nvme3n1", "nvme4n1"],
    "twin-2n-hba-managed-unknown": ["sdb", "sdc", "sdd"],
    "overlapping-nodes-firmware-bug": ["nvme0n1", "nvme1n1"],
}


# Effects and the cause that explains them, by hand (numastor-findings(7), CAUSES AND EFFECTS):
# (id, device) -> the cause the JSON must name; every other finding of these fixtures is a cause.
_CLOUD = ["nvme%dn1" % i for i in range(8)]
SEV = ["info", "warning", "critical"]
CAUSED = {
    "cloud-2n64c-8nvme-forced-node0": {(e, d): "node-forced" for d in _CLOUD
                                       for e in ("irq-confined", "irqbalance-confines", "irq-fires-remote")},
    # sdc: one vector for every node explains its remote firing; irqbalance (managed-ness
    # unknown) explains nothing of sda's certain confinement to a foreign node
    "twin-2n-hba-managed-unknown": {("irq-fires-remote", "sdc"): "vector-serves-all-nodes"},
    # a chain: nvme1n1's remote firing comes of its confinement, which comes of irqbalance; both
    # name the root. nvme0n1's foreign confinement is critical: no warning explains it
    "xen-2n-irqbalance-chain": {("irq-confined", "nvme1n1"): "irqbalance-confines",
                                ("irq-fires-remote", "nvme1n1"): "irqbalance-confines",
                                ("irq-fires-remote", "nvme3n1"): "irqbalance-confines",
                                ("irq-fires-remote", "nvme0n1"): "irq-confined",
                                ("irq-fires-remote", "nvme4n1"): "irq-confined"},
}


def check_caused(name, doc):
    # any fixture: an effect's cause is a cause found on the same device
    for f in doc["findings"]:
        if f["caused_by"]:
            assert any(g["id"] == f["caused_by"] and g["device"] == f["device"] and g["caused_by"] is None and
                       SEV.index(g["severity"]) >= SEV.index(f["severity"]) for g in doc["findings"]), \
                f"{f['id']} on {f['device']}: its cause {f['caused_by']} is no cause of its device at its severity or worse"
    # worst first, and within a severity the causes before their effects
    order = [(-SEV.index(f["severity"]), f["caused_by"] is not None) for f in doc["findings"]]
    assert order == sorted(order), f"findings out of order: {[(f['id'], f['severity'], f['caused_by']) for f in doc['findings']]}"
    # the summary counts the causes by severity, and the effects apart
    sm = doc["summary"]
    for sev in SEV:
        n = sum(1 for f in doc["findings"] if f["severity"] == sev and f["caused_by"] is None)
        assert sm[sev] == n, f"summary {sev} {sm[sev]}, {n} causes"
    assert sm["effects"] == sum(1 for f in doc["findings"] if f["caused_by"]), sm
    assert {(c["id"], c["severity"]) for c in sm["causes"]} == \
        {(f["id"], f["severity"]) for f in doc["findings"] if f["caused_by"] is None}, sm["causes"]
    want = CAUSED.get(name)
    if want is None:
        return
    got = {(f["id"], f["device"]): f["caused_by"] for f in doc["findings"] if f["caused_by"]}
    assert got == want, f"effects and causes differ: missing {sorted(set(want.items()) - set(got.items()))}, " \
                        f"unexpected {sorted(set(got.items()) - set(want.items()))}"


def triples(doc):
    out = [(f["id"], f["device"], f["severity"]) for f in doc["findings"]]
    assert len(out) == len(set(out)), f"a finding is reported twice: {sorted(out)}"
    return set(out)


def check_pinned(name, doc, code):
    want_code, want = PINNED[name]
    got = triples(doc)
    assert got == want, f"findings differ from the pinned set: missing {sorted(want - got, key=str)}, " \
                        f"unexpected {sorted(got - want, key=str)}"
    assert code == want_code, f"exit code {code}, pinned {want_code}"
    check_caused(name, doc)
    for dev in CORRECT.get(name, []):
        device(doc, dev)
        # irqbalance-confines (irqbalance runs, wherever the device sits) is about the machine,
        # not this device's placement (the midlayer's midlayer-alloc-stock is no placement rule)
        bad = [f for f in doc["findings"] if f["device"] == dev and f["id"] in PLACEMENT and
               not (f["id"] == "irqbalance-confines" and f["severity"] == W)]
        assert not bad, f"{dev} is correctly placed but gets {[(f['id'], f['severity']) for f in bad]}"
    for dev in CORRECT.get(name, []) + NOT_CRITICAL.get(name, []):
        crit = [f["id"] for f in doc["findings"] if f["device"] == dev and f["severity"] == C]
        assert not crit, f"{dev}: a critical finding without certain harm: {crit}"


def check_remedies(doc):
    """`numastor fix` is the remedy only for vectors it moves (each IRQ's fix.action, the plan's
    decision: never a kernel-managed one or one user space may not set; one whose managed-ness is
    unknown only where the write tells, check-agreement.py holds the plan to it), and
    `fix --irqbalance=policy`, which places them too, only for vectors known to be movable
    (managed false)."""
    irqs = {}
    for d in doc["devices"]:
        for p in d.get("paths") or []:
            for i in ((p.get("pci") or {}).get("irqs") or []):
                irqs[i["irq"]] = i
    # least invasive first, the action the first step's, and no command a person cannot run
    rank = ["numastor fix", "numastor fix --rq-affinity=2", "numastor fix --irqbalance=policy", "numastor fix --modules"]
    for f in doc["findings"]:
        steps = [st["command"] for st in f["remedy"]["steps"]]
        assert steps == sorted(steps, key=rank.index) and len(set(steps)) == len(steps), (f["id"], steps)
        assert f["remedy"]["action"] == (steps[0] if steps else None), (f["id"], f["remedy"]["action"], steps)
        assert all(st["undo"] == "numastor fix --revert" for st in f["remedy"]["steps"]), f["remedy"]
        said = f["remedy"]["text"] + " ".join(st["changes"] for st in f["remedy"]["steps"])
        assert "numastor irqbalance-policy" not in said, (f["id"], said)
        if "numastor fix --modules" in steps:
            ch = next(st["changes"] for st in f["remedy"]["steps"] if st["command"] == "numastor fix --modules")
            assert f["device"] in ch and "detaching" in ch and "root file system" in ch, ch
    for f in doc["findings"]:
        if f["remedy"]["action"] not in ("numastor fix", "numastor fix --irqbalance=policy"):
            continue
        ev = f["evidence"]
        nums = [e if isinstance(e, int) else e["irq"] for e in ev.get("irqs", [])]
        if isinstance(ev.get("irq"), int):
            nums.append(ev["irq"])
        if not nums:  # irqbalance-confines: some vector of the device must be movable
            dev = device(doc, f["device"])
            nums = [i["irq"] for p in dev["paths"] if p.get("pci") for i in p["pci"]["irqs"] if i["managed"] is False]
            assert nums, f"{f['id']} {f['device']}: `numastor fix` offered but no vector is known to be movable"
        for n in nums:
            i = irqs.get(n)
            if f["remedy"]["action"] == "numastor fix":
                assert i is not None and i["fix"]["action"] == "move" and i["managed"] is not True \
                    and i.get("user_settable") is not False, \
                    f"{f['id']} {f['device']}: `numastor fix` offered for IRQ {n} ({i and i['fix']})"
                continue
            assert i is not None and i["managed"] is False and i.get("user_settable") is not False, \
                f"{f['id']} {f['device']}: `numastor fix` offered for IRQ {n} (managed {i and i['managed']})"


def unwrap(lines, k):
    """Line k of a wrapped report with its continuation lines (deeper indented) joined."""
    indent = len(lines[k]) - len(lines[k].lstrip(" "))
    out = lines[k]
    while k + 1 < len(lines) and len(lines[k + 1]) - len(lines[k + 1].lstrip(" ")) > indent:
        k += 1
        out += " " + lines[k].strip()
    return out


def expand_names(listing, names):
    """'nvme0n1-nvme3n1, sda' read against the JSON's device names (a range: every name of
    the same shape between its ends, in natural order)."""
    import re
    key = lambda n: [int(x) if x.isdigit() else x for x in re.findall(r"\d+|\D+", n)]
    shape = lambda n: re.sub(r"\d+", "#", n) if re.search(r"\d", n) else n[:-1]
    out = []
    for tok in [x.strip() for x in listing.split(",") if x.strip()]:
        if tok in names:
            out.append(tok)
            continue
        for i in [i for i, c in enumerate(tok) if c == "-"]:
            a, b = tok[:i], tok[i + 1:]
            if a in names and b in names:
                out += [n for n in names if shape(n) == shape(a) and key(a) <= key(n) <= key(b)]
                break
        else:
            raise AssertionError(f"{tok!r} in a findings entry is no device")
    return out


def parse_text(text, vtext, names):
    """The facts of a text report, read from the text alone: from the default report the
    findings (severity, id, devices, the remedy's action) and the summary counts; from the
    --verbose one per device its path lines (pci, node, forced) and its node line."""
    import re
    devices, findings, summary, cur = {}, [], None, None
    lines = text.splitlines()
    section = "head"
    because = None
    for k, line in enumerate(lines):
        if line.startswith("summary: "):
            head, j = line, k
            while not re.search(r"\(exit \d\)$", head) and j + 1 < len(lines):
                j += 1
                head += " " + lines[j].strip()
            m = re.match(r"^summary: (OK|WARNING|CRITICAL|UNKNOWN), (\d+) devices?: (.*) \(exit (\d)\)$", head)
            assert m, f"summary line: {head!r}"
            causes = {}
            if m.group(3) != "no findings":
                parts = re.findall(r"(\d+) causes? \(([^)]*)\) (critical|warning|info)", m.group(3))
                assert parts, f"summary causes: {m.group(3)!r}"
                for n, ids, sev in parts:
                    causes[sev] = ids.split(", ")
                    assert int(n) == len(causes[sev]), m.group(3)
            summary = (m.group(1), int(m.group(2)), causes, int(m.group(4)))
            continue
        if line.startswith("findings"):
            section = "findings"
            continue
        if line.startswith("devices"):
            section = "devices"
        if section != "findings":
            continue
        m = None
        eff = re.match(r"^    effects, because: (\S+)$", line)
        if eff:
            because = eff.group(1)
            continue
        if re.match(r"^      (critical|warning|info) +\S+?:", line):  # an effect under its cause
            head, j = line, k
            while not re.search(r"\(\d+\)$", head) and j + 1 < len(lines):
                j += 1
                head += " " + lines[j].strip()
            m = re.match(r"^      (critical|warning|info) +(\S+?): (.*) \((\d+)\)$", head)
            assert m and because, f"an effect entry without its device count or cause: {head!r}"
            devs = expand_names(m.group(3), names)
            assert int(m.group(4)) == len(devs), (line, devs)
            for d in devs:
                findings.append((m.group(2), d, m.group(1), ("effect", because)))
            continue
        if re.match(r"^  (critical|warning|info) +\S+?:", line):  # its devices, then their count
            head, j = line, k
            while not re.search(r"\(\d+\)$", head) and j + 1 < len(lines):
                j += 1
                head += " " + lines[j].strip()
            m = re.match(r"^  (critical|warning|info) +(\S+?): (.*) \((\d+)\)$", head)
            assert m, f"a findings entry without its device count: {head!r}"
        elif re.match(r"^  (critical|warning|info) +\S+$", line):  # machine-wide
            m = re.match(r"^  (critical|warning|info) +(\S+)()()$", line)
        if m:
            r = next(j for j in range(k + 1, len(lines)) if lines[j].startswith("    remedy"))
            assert lines[r].startswith("    remedy: "), (line, lines[r])
            # the action: the first step's command ("      1. COMMAND: ..." after the remedy's text)
            action = None
            for j in range(r + 1, len(lines)):
                if not lines[j].startswith("      "):
                    break
                step = re.match(r"^      1\. (numastor fix(?: --\S+)?): ", lines[j])
                if step:
                    action = step.group(1)
                    break
            devs = expand_names(m.group(3), names) if m.group(3) else [None]
            assert not m.group(4) or int(m.group(4)) == len(devs), (line, devs)
            for d in devs:
                findings.append((m.group(2), d, m.group(1), (action, k)))
    lines = vtext.splitlines()
    section = "head"
    for k, line in enumerate(lines):
        if line.startswith("devices"):
            section = "devices"
            continue
        if line == "notes":
            section = "notes"
        if section != "devices":
            continue
        m = re.match(r"^(\S+)  (\S+)  ", line)
        if m:
            cur = devices.setdefault(m.group(1), {"kind": m.group(2), "paths": [], "node": None})
            continue
        line = unwrap(lines, k) if line.startswith("  path ") else line
        m = re.match(r"^  path .* -> PCI (\S+) \[.*?\] driver .* -> node (-?\d+|\?)( FORCED| SET \(not the "
                     r"firmware's\))?, local CPUs", line)
        if m and cur is not None:
            cur["paths"].append((m.group(1), None if m.group(2) == "?" else int(m.group(2)),
                                 (m.group(3) or "").split(" (")[0].strip() or None))
            continue
        m = re.match(r"^  node: (\S+)(?: (\d+))?(?: \((.*))?$", line)
        if m and cur is not None:
            cur["node"] = (m.group(1), int(m.group(2)) if m.group(2) else None)
            cur["node_reason"] = m.group(3)  # its first line: the text wraps
    return devices, findings, summary


def check_text(name, text, vtext, doc, code):
    devices, findings, summary = parse_text(text, vtext, [d["name"] for d in doc["devices"]])
    want_code, want = PINNED[name]
    got = {(i, d, s) for i, d, s, _ in findings}
    assert len(got) == len(findings) and got == want, \
        f"text findings differ from the pinned set: missing {sorted(want - got, key=str)}, unexpected {sorted(got - want, key=str)}"
    # an effect is listed under the cause the JSON names for it; a cause entry's remedy is the
    # action of its first finding (the JSON's order), and a cause is no effect in the JSON
    entries = {}
    for i, d, s, a in findings:
        mine = [f for f in doc["findings"] if f["id"] == i and f["device"] == d and f["severity"] == s]
        assert mine, (i, d, s)
        if a[0] == "effect":
            assert all(f["caused_by"] == a[1] for f in mine), f"{i} on {d}: text because {a[1]}, JSON {mine}"
        else:
            assert all(f["caused_by"] is None for f in mine), f"{i} on {d}: a cause in the text, JSON {mine}"
            entries.setdefault(a[1], []).append((i, d, s, a[0]))
    for members in entries.values():
        i, _, s, action = members[0]
        devs = {d for _, d, _, _ in members}
        first = next(f for f in doc["findings"]
                     if f["id"] == i and f["severity"] == s and f["caused_by"] is None and f["device"] in devs)
        assert first["remedy"]["action"] == action, f"text remedy of {i} ({s}): {action!r}, JSON {first['remedy']['action']!r}"
    assert summary is not None, "no summary line"
    level = {0: "OK", 1: "WARNING", 2: "CRITICAL", 3: "UNKNOWN"}[want_code]
    # the summary names each cause once per severity: the pinned findings the JSON calls causes
    causes = {}
    for i, d, s in want:
        if any(f["caused_by"] is None for f in doc["findings"] if f["id"] == i and f["device"] == d and f["severity"] == s):
            causes.setdefault(s, set()).add(i)
    got_causes = {s: set(ids) for s, ids in summary[2].items()}
    assert summary[:2] == (level, len(doc["devices"])) and summary[3] == want_code and got_causes == causes, \
        f"summary {summary}, causes by severity {causes}"
    for d in doc["devices"]:
        if d["kind"] in ("dm", "md", "loop", "zram") or not d.get("paths"):
            continue
        t = devices.get(d["name"])
        assert t is not None, f"{d['name']} has no block in the --verbose text report"
        want_paths = [(p["pci"]["address"], p["pci"]["numa_node"],
                       "FORCED" if p["pci"]["node_forced"] is True else "SET" if p["pci"].get("node_set") is True else None)
                      for p in d["paths"] if p.get("pci")]
        assert t["paths"] == want_paths, f"{d['name']}: text path lines {t['paths']}, JSON {want_paths}"
        assert t["node"] == (d["node_source"], d["node"]), f"{d['name']}: text node {t['node']}, JSON {d['node_source']} {d['node']}"
        # a null node says why, in the text as in the JSON
        reason = t.get("node_reason")
        assert (reason is not None) == (d["node"] is None), f"{d['name']}: text reason {reason!r}, JSON node {d['node']}"
        assert reason is None or d["node_reason"].startswith(reason.rstrip(")")), (d["name"], reason, d["node_reason"])
        # the FORCED marker appears exactly where the node was forced
        assert any(f == "FORCED" for _, _, f in t["paths"]) == (d["node_source"] == "forced"), (d["name"], t["paths"])
        assert any(f == "SET" for _, _, f in t["paths"]) == (d["node_source"] == "set"), (d["name"], t["paths"])


def parse_plan_text(ptext):
    import re
    moves, summary = [], None
    for line in ptext.splitlines():
        # fix --verbose: a line per vector; a skipped row names no target: its affinity alone
        m = re.match(r"^    irq (\d+) (\S+) \((\S+?)(?: hctx (\d+))?\) (move|skip|unchanged): affinity (\S*)(?: -> (\S*))?$",
                     line)
        if m:
            moves.append((int(m.group(1)), m.group(3), None if m.group(4) is None else int(m.group(4)),
                          m.group(7), m.group(5)))
        m = re.match(r"^summary: (\d+) to move, (\d+) skipped, (\d+) unchanged$", line)
        if m:
            summary = tuple(int(x) for x in m.groups())
    return moves, summary


def check_plan_text(name, ptext, plan):
    moves, summary = parse_plan_text(ptext)
    want = [(e["irq"], e["device"], e["hw_queue"], e["target"], e["action"]) for e in plan["irqs"]]
    assert moves == want, f"plan text lines {moves[:4]}..., JSON {want[:4]}..."
    acts = [m[4] for m in moves]
    assert summary == (acts.count("move"), acts.count("skip"), acts.count("unchanged")), f"plan summary {summary}"
    if name in PLAN_MOVES:
        got = {(d, q, tgt, a) for _, d, q, tgt, a in moves}
        exp = PLAN_MOVES[name]
        assert got == exp, f"plan moves: missing {sorted(exp - got, key=str)}, unexpected {sorted(got - exp, key=str)}"
    for dev in CORRECT.get(name, []):
        if (name, dev) in PLAN_DEFERRED:
            print(f"  {name}: not checked that the plan leaves {dev} alone ({PLAN_DEFERRED[(name, dev)]})")
            continue
        assert not [m for m in moves if m[1] == dev and m[4] == "move"], f"the plan moves correctly placed {dev}"


# Known gaps, printed on every run: remove the entry when the gap is closed.
PLAN_DEFERRED = {}


def quad_moves(dev, admin_target, action="move"):
    return {(dev, q, t, action) for q, t in enumerate(("0-3", "4-7", "8-11", "12-15"))} | {(dev, None, admin_target, "move")}


# The plan's moves, written from the fixtures' descriptions: (device, hw_queue, target, action).
PLAN_MOVES = {
    "twin-xen-2n-5nvme-confined": quad_moves("nvme0n1", "8-15") | quad_moves("nvme1n1", "0-7") |
    quad_moves("nvme3n1", "8-15", action="unchanged") | quad_moves("nvme4n1", "0-7"),
    "twin-510-2n-forced-vs-described": quad_moves("nvme0n1", "0-7"),
    "twin-612-2n-managed-mismatch": {("sda", 0, "0-7", "move")},
    "hba-megaraid-node1-irq-cpu0": {("sda", 0, "16-31", "move")},
    "xen-2n8c-hotplug-headroom": {("nvme0n1", q, str(q), "move") for q in range(4)} |
    {("nvme0n1", q, str(q), "unchanged") for q in range(4, 8)} | {("nvme0n1", q, None, "skip") for q in range(8, 16)} |
    {("nvme0n1", None, "0-3", "unchanged")},
}


def run(numastor, root, *args, cmd="check"):
    # generated_at fixed (test builds), so that the expected JSON stays what it is
    # one locale for every run: the text report ellipsizes as the encoding says ("…" in UTF-8)
    env = dict(os.environ, NO_COLOR="1", NUMASTOR_TEST_NOW="1767225600", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    p = subprocess.run([numastor, cmd, "--sysroot", root, *args], capture_output=True, text=True, env=env)
    # the capture's location is not part of the expectation, nor is where this build installs
    # the irqbalance policy script (its prefix: /usr/local here, /usr in the package)
    out = re.sub(r"add --policyscript=(?:/usr|/usr/local)/libexec/numastor/", "add --policyscript=<libexecdir>/numastor/",
                 p.stdout.replace(root, "<root>"))
    return p.returncode, out, p.stderr


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
    global NUMASTOR
    numastor = NUMASTOR = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or sorted(FACTS)
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="numastor-fixtures.", dir=SCRATCH) as tmp:
        subprocess.run([sys.executable, GEN, tmp, *names], check=True)
        for name in names:
            root = os.path.join(tmp, name)
            ok = True
            code, out, err = run(numastor, root, "--json")
            try:
                doc = json.loads(out)
                schemas.validate(doc, SCHEMA)
                assert doc["summary"]["exit_code"] == code, (doc["summary"]["exit_code"], code)
                invariants(doc)
                FACTS[name](doc, code)
                check_pinned(name, doc, code)
                check_remedies(doc)
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
            _, vtext, _ = run(numastor, root, "--verbose")
            try:
                check_text(name, text, vtext, doc, code)
            except (AssertionError, KeyError, IndexError, NameError) as e:
                print(f"  {name}: text: {type(e).__name__}: {str(e)[:2000]}")
                ok = False
            ok &= compare(name, "text", text, os.path.join(EXPECTED, name + ".txt"))
            # the fix plan for the same machine
            pcode, pout, perr = run(numastor, root, "--json", cmd="fix")
            if name in FIX_REFUSES:
                # an exclusion input that does not parse: fix refuses (exit 3), naming file and value
                for args in (("--json",), ()):
                    rcode, rout, rerr = run(numastor, root, *args, cmd="fix")
                    if args:
                        # under --json the refusal is the error document (schema/numastor-error.schema.json)
                        try:
                            e = json.loads(rout)
                            schemas.validate(e, ERROR_SCHEMA)
                            assert e["error"]["exit_code"] == rcode and FIX_REFUSES[name] in e["error"]["message"], e
                            rout = ""
                        except (AssertionError, json.JSONDecodeError, jsonschema.ValidationError) as x:
                            print(f"  {name}: fix --json refusal is not the error document: {str(x)[:300]}")
                            ok = False
                    if rcode != 3 or rout or FIX_REFUSES[name] not in rerr:
                        print(f"  {name}: fix {' '.join(args)} did not refuse with exit 3 naming "
                              f"{FIX_REFUSES[name]!r}: exit {rcode}, stdout {rout[:200]!r}, stderr {rerr[:300]!r}")
                        ok = False
                print(("PASS " if ok else "FAIL ") + name)
                passed += ok
                failed += not ok
                stop_at_first_failure(failed)
                continue
            try:
                assert pcode == 0, f"fix --sysroot exited {pcode}: {perr[:300]}"
                plan = json.loads(pout)
                schemas.validate(plan, FIX_SCHEMA)
                assert plan["dry_run"] is True
                if name in PLAN_FACTS:
                    PLAN_FACTS[name](plan, doc)
            except (AssertionError, json.JSONDecodeError, jsonschema.ValidationError, NameError) as e:
                print(f"  {name}: plan: {type(e).__name__}: {str(e)[:2000]}")
                ok = False
            ok &= compare(name, "plan json", pout, os.path.join(EXPECTED, name + ".plan.json"))
            _, ptext, _ = run(numastor, root, cmd="fix")
            # the vectors one by one (--verbose; tests/check-plan-text.py reads the grouped text)
            _, pvtext, _ = run(numastor, root, "--verbose", cmd="fix")
            try:
                check_plan_text(name, pvtext, plan)
            except (AssertionError, KeyError, NameError) as e:
                print(f"  {name}: plan text: {type(e).__name__}: {str(e)[:2000]}")
                ok = False
            ok &= compare(name, "plan text", ptext, os.path.join(EXPECTED, name + ".plan.txt"))
            print(("PASS " if ok else "FAIL ") + name)
            passed += ok
            failed += not ok
            stop_at_first_failure(failed)
    print(f"fixtures: {passed} passed, {failed} failed")
    return 1 if failed else 0


def stop_at_first_failure(failed):
    """NUMASTOR_FAIL_FAST=1 (tests/mutation/run.sh sets it): the first failed fixture ends the run."""
    if failed and os.environ.get("NUMASTOR_FAIL_FAST") == "1":
        print("fixtures: stopped at the first failure (NUMASTOR_FAIL_FAST=1)")
        sys.exit(1)


if __name__ == "__main__":
    sys.exit(main())
