#!/usr/bin/env python3
"""Hold numastor's `check --json` to the guest's own ground truth, field by field.

    compare.py RESULT_DIR SCENARIO_DIR

RESULT_DIR is what run-vm.sh unpacked (truth.txt, truth-before.txt, check.out, check.rc, ...);
SCENARIO_DIR holds the scenario's expect.py, which may set
    STRICT = False          numastor may leave a field null where ground truth has a value
    EXIT_CODES = {0, 1, 2}  the exit codes of `numastor check --json` that are acceptable
and define check(ctx) for the scenario's own assertions. Each mismatch is printed as
    <subject>: <field>: numastor=<value> ground-truth=<value>
Exit status: 0 when everything agrees, 1 on any mismatch, 2 on a usage error.
Python standard library only.
"""

import importlib.util
import json
import os
import re
import sys

SRC_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = os.path.join(SRC_ROOT, "schema", "numastor.schema.json")


# --- cpu lists and masks ------------------------------------------------------------------

def cpuset(text):
    """A set of CPUs from a cpulist ("0-1,3", "0, 1, 2, 3", "") or None for None."""
    if text is None:
        return None
    cpus = set()
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def mask_cpuset(text):
    """A set of CPUs from a hex mask as /proc/irq/N/affinity_hint prints it ("0000,000f")."""
    value = int(text.replace(",", "") or "0", 16)
    return {bit for bit in range(value.bit_length()) if value >> bit & 1}


def cpulist(cpus):
    """The canonical cpulist of a set ("0-3,6")."""
    out, run = [], []
    for cpu in sorted(cpus):
        if run and cpu == run[-1] + 1:
            run.append(cpu)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [cpu]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def hexnum(text):
    """Normalise a PCI id or class ("0x1b36", "1b36", 6966) to lowercase hex without 0x."""
    if text is None:
        return None
    if isinstance(text, int):
        return f"{text:x}"
    return str(text).lower().removeprefix("0x")


# --- ground truth --------------------------------------------------------------------------

PAIR_MIN_SHARE = 8  # a vector "grew" from a CPU's reads when by at least VM_PAIR_READS / 8


class Truth:
    """The tab-separated records that guest/lib.sh's vm_truth writes (and, from pairing.txt,
    vm_measure_pairing's `pair` lines)."""

    def __init__(self, path, pairing=None):
        self.machine, self.nodes, self.disks, self.irqs, self.hctx = {}, {}, {}, {}, {}
        self.pairs = {}
        if pairing and os.path.exists(pairing):
            with open(pairing, encoding="utf-8") as f:
                for line in f:
                    rec = line.rstrip("\n").split("\t")
                    if rec[0] == "pair" and len(rec) == 6:
                        self.pairs.setdefault(rec[1], {}).setdefault(int(rec[2]), {})[int(rec[3])] = (
                            [int(x) for x in rec[4].split(",") if x], [int(x) for x in rec[5].split(",") if x])
        self.present = os.path.exists(path)
        if not self.present:
            return
        with open(path, encoding="utf-8") as f:
            for line in f:
                rec = line.rstrip("\n").split("\t")
                kind = rec[0]
                if kind == "machine":
                    self.machine[rec[1]] = rec[2]
                elif kind == "node":
                    self.nodes.setdefault(int(rec[1]), {})[rec[2]] = rec[3]
                elif kind == "disk":
                    self.disks.setdefault(rec[1], {})[rec[2]] = rec[3]
                elif kind == "irq":
                    self.irqs.setdefault(rec[1], {}).setdefault(int(rec[2]), {})[rec[3]] = rec[4]
                elif kind == "hctx":
                    self.hctx.setdefault(rec[1], {}).setdefault(int(rec[2]), {})[rec[3]] = rec[4]

    def path_disks(self):
        """The hidden per-path disks of every multipath head (reported under their head)."""
        return {p for t in self.disks.values() for p in t.get("paths", "").split()}

    def head_of(self, path_disk):
        for disk, t in self.disks.items():
            if path_disk in t.get("paths", "").split():
                return disk
        return None

    def measured(self, disk):
        """The pairing measured for a disk's I/O: {cpu: {irq: [CPUs it grew on]}}, only the
        vectors that grew by at least 1/PAIR_MIN_SHARE of the reads; {} when not measured."""
        out = {}
        for cpu, irqs in self.pairs.get(disk, {}).items():
            growth = {irq: [a - b for a, b in zip(after, before)] for irq, (before, after) in irqs.items()}
            reads = max((sum(g) for g in growth.values()), default=0)
            out[cpu] = {irq: [c for c, n in enumerate(g) if n > 0] for irq, g in growth.items()
                        if reads and sum(g) * PAIR_MIN_SHARE >= reads}
        return out

    def node_of_cpu(self, cpu):
        for node, attrs in self.nodes.items():
            if cpu in cpuset(attrs["cpus"]):
                return node
        return None

    def bus_node(self, disk):
        """Node of the disk's root bus from its cpulistaffinity; -1 when it spans every node."""
        cpus = cpuset(self.disks[disk].get("bus_cpulistaffinity"))
        if not cpus:
            return None
        for node, attrs in self.nodes.items():
            if cpus == cpuset(attrs["cpus"]):
                return node
        return -1

    def kind(self, disk):
        if "paths" in self.disks[disk]:
            return "nvme-multipath"
        if "md_level" in self.disks[disk]:
            return "md"
        ctl = self.disks[disk].get("controllers", "").split()
        if any(c.startswith("nvme") for c in ctl):
            return "nvme"
        if any(c.startswith("ata") for c in ctl):
            return "ata"  # libata's port in the path: a SCSI host of libata's
        if any(c.startswith("host") for c in ctl):
            return "scsi"
        if any(c.startswith("virtio") for c in ctl):
            return "virtio-blk"
        path = self.disks[disk].get("sysfs_path", "")
        if "/ndbus" in path:
            return "pmem"  # a libnvdimm namespace's disk
        if "/vbd-" in path:
            return "xen-blkfront"
        return "other"

    def on_root_bus_zero(self, disk):
        return self.disks[disk].get("root_bus") == "0000:00"


# --- a small JSON Schema check (the keywords numastor.schema.json uses) ----------------------

def schema_errors(value, schema, root, where="$"):
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return schema_errors(value, target, root, where)
    errors = []
    types = schema.get("type")
    if types is not None:
        types = types if isinstance(types, list) else [types]
        pytypes = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
        ok = False
        for t in types:
            if t in ("integer", "number"):
                ok |= isinstance(value, int) and not isinstance(value, bool) or (
                    t == "number" and isinstance(value, float))
            else:
                ok |= isinstance(value, pytypes[t])
        if not ok:
            return [f"{where}: {json.dumps(value)[:60]} is not of type {'/'.join(types)}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{where}: {json.dumps(value)} is not {json.dumps(schema['const'])}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {json.dumps(value)} is not one of {schema['enum']}")
    if "oneOf" in schema:
        matches = sum(not schema_errors(value, s, root, where) for s in schema["oneOf"])
        if matches != 1:
            errors.append(f"{where}: matches {matches} of the oneOf alternatives")
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        errors.append(f"{where}: {json.dumps(value)} does not match {schema['pattern']}")
    if isinstance(value, int) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{where}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{where}: {value} > maximum {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{where}: missing required key {key!r}")
        for key, sub in value.items():
            if key in props:
                errors += schema_errors(sub, props[key], root, f"{where}.{key}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{where}: unexpected key {key!r}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], root, f"{where}[{i}]")
    return errors


# --- the comparison ----------------------------------------------------------------------

class Context:
    """What a scenario's check(ctx) works with, and where mismatches are collected."""

    def __init__(self, result_dir, strict):
        self.result_dir = result_dir
        self.strict = strict
        self.failures = []
        self.truth = Truth(os.path.join(result_dir, "truth.txt"), os.path.join(result_dir, "pairing.txt"))
        self.measured_pairs = 0  # queue/CPU pairs held to measured I/O
        self.inferred = []       # truth fields the bed could not measure (not compared)
        self.scenario_checked = []  # fields left to the scenario's expect.py (non-PCI disks)
        before = os.path.join(result_dir, "truth-before.txt")
        self.truth_before = Truth(before) if os.path.exists(before) else self.truth
        self.doc = None
        self.rc = None

    # Reporting.
    def fail(self, message):
        self.failures.append(message)

    def mismatch(self, subject, field, numastor, truth):
        self.fail(f"{subject}: {field}: numastor={fmt(numastor)} ground-truth={fmt(truth)}")

    def expect(self, condition, message):
        if not condition:
            self.fail(message)
        return bool(condition)

    def equal(self, subject, field, numastor, truth, same=None):
        """numastor's value against ground truth; a null from numastor passes when not strict."""
        if numastor is None and truth is not None and not self.strict:
            return True
        ok = same(numastor, truth) if same else numastor == truth
        if not ok:
            self.mismatch(subject, field, numastor, truth)
        return ok

    def equal_cpus(self, subject, field, numastor, truth):
        return self.equal(subject, field, numastor, truth,
                          lambda a, b: a is not None and b is not None and cpuset(a) == cpuset(b))

    # Other files the guest sent back (e.g. a fix scenario's own outputs).
    def path(self, name):
        return os.path.join(self.result_dir, name)

    def read(self, name):
        try:
            with open(self.path(name), encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return None

    # Looking things up.
    def device(self, name):
        for dev in self.doc.get("devices", []):
            if dev.get("name") == name:
                return dev
        return None

    def pci_of(self, dev):
        for path in dev.get("paths") or []:
            if path.get("pci"):
                return path["pci"]
        return None

    def pci_of_disk(self, disk):
        """numastor's PCI function of a ground-truth disk: a multipath path disk's is the path
        of its head (as the kernel links them) on the same function, any other disk's its own."""
        head = self.truth.head_of(disk)
        if head is None:
            dev = self.device(disk)
            return self.pci_of(dev) if dev else None
        addr = self.truth.disks[disk].get("pci")
        for path in (self.device(head) or {}).get("paths") or []:
            if (path.get("pci") or {}).get("address") == addr:
                return path["pci"]
        return None

    def truth_disks(self, kind=None, root_bus=None):
        """Ground-truth disk names, by kind and by whether they sit on root bus 0000:00."""
        paths = self.truth.path_disks()
        return sorted(d for d in self.truth.disks
                      if d not in paths and (kind is None or self.truth.kind(d) == kind)
                      and (root_bus is None or self.truth.on_root_bus_zero(d) == root_bus))

    def roles(self):
        """The bed's disks by role, from ground truth (names change from boot to boot):
        nvme-root, nvme-pxb, head (the subsystem's multipath head), mega (megasas disk),
        ahci (the ich9-ahci disk that takes the node-1 HBA's place where the kernel has no
        megaraid_sas), vscsi (virtio-scsi disk), vblk (virtio-blk disk)."""
        out = {}
        for d in self.truth_disks():
            t, kind = self.truth.disks[d], self.truth.kind(d)
            if kind == "nvme":
                out["nvme-root" if self.truth.on_root_bus_zero(d) else "nvme-pxb"] = d
            elif kind == "nvme-multipath":
                out["head"] = d
            elif kind == "scsi":
                out["mega" if t.get("driver") == "megaraid_sas" else "vscsi"] = d
            elif kind == "ata" and not self.truth.on_root_bus_zero(d):
                out["ahci"] = d
            elif kind == "virtio-blk":
                out["vblk"] = d
        return out

    def pin_findings(self, expected, exit_code):
        """The exact set of findings, as (id, role, severity) with the roles of roles(), and
        check's exit code."""
        roles = self.roles()
        names = {v: k for k, v in roles.items()}
        got = sorted((f.get("id"), names.get(f.get("device"), f.get("device")), f.get("severity"))
                     for f in self.doc.get("findings", []))
        self.equal("findings", "set (id, device role, severity)", got, sorted(expected))
        self.equal("check", "exit code", self.rc, exit_code)

    def findings(self, finding_id=None, device=None):
        return [f for f in self.doc.get("findings", [])
                if (finding_id is None or f.get("id") == finding_id)
                and (device is None or f.get("device") == device)]


def fmt(value):
    return json.dumps(value) if not isinstance(value, str) else value


def compare_machine(ctx):
    m, t = ctx.doc["machine"], ctx.truth
    ctx.equal("machine", "kernel_release", m.get("kernel_release"), t.machine["kernel_release"])
    ctx.equal_cpus("machine", "online_cpus", m.get("online_cpus"), t.machine["online_cpus"])
    ctx.equal_cpus("machine", "possible_cpus", m.get("possible_cpus"), t.machine["possible_cpus"])
    ctx.equal("machine", "multi_node", m.get("multi_node"), len(t.nodes) > 1)
    nodes = {n.get("node"): n for n in m.get("nodes", [])}
    ctx.equal("machine", "nodes", sorted(nodes, key=str), sorted(t.nodes))
    for node, attrs in t.nodes.items():
        n = nodes.get(node)
        if n is None:
            continue
        subject = f"node{node}"
        ctx.equal_cpus(subject, "cpus", n.get("cpus"), attrs["cpus"])
        ctx.equal(subject, "cpu_count", n.get("cpu_count"), len(cpuset(attrs["cpus"])))
        ctx.equal(subject, "distances", n.get("distances"), [int(x) for x in attrs["distances"].split()])
        ctx.equal(subject, "memory_bytes", n.get("memory_bytes"), int(attrs["memory_kb"]) * 1024)


def compare_irq(ctx, disk, irq, num, truth_irq, truth_irq_before, hctx, pairing_disk=None):
    subject = f"{disk}: irq {num} ({truth_irq['actions']})"
    ctx.equal(subject, "actions", irq.get("actions"), truth_irq["actions"])
    # numastor's irq name is the first action (the handler name /proc/interrupts shows).
    ctx.equal(subject, "name", irq.get("name"), truth_irq["actions"].split(",")[0] or None)
    ctx.equal(subject, "chip", irq.get("chip"), truth_irq["chip"])
    ctx.equal(subject, "type", irq.get("type"), ctx.truth.disks[disk]["irq_type"])
    ctx.equal_cpus(subject, "affinity", irq.get("affinity"), truth_irq["smp_affinity_list"])
    ctx.equal_cpus(subject, "effective_affinity", irq.get("effective_affinity"),
                   truth_irq["effective_affinity_list"])
    hint = cpulist(mask_cpuset(truth_irq["affinity_hint"]))
    if irq.get("affinity_hint") not in (None, "") or hint:
        ctx.equal_cpus(subject, "affinity_hint", irq.get("affinity_hint"), hint)
    ctx.equal(subject, "node", irq.get("node"), int(truth_irq["node"]))
    managed = truth_irq["managed"]
    if managed in ("0", "1"):
        ctx.equal(subject, "managed", irq.get("managed"), managed == "1")
    else:
        ctx.fail(f"{subject}: ground truth could not tell managed-ness ({managed})")
    # Counts only grow: numastor's must lie between the two ground-truth reads.
    lo = [int(x) for x in truth_irq_before.get("per_cpu_count", "").split(",") if x]
    hi = [int(x) for x in truth_irq["per_cpu_count"].split(",") if x]
    total = irq.get("total_count")
    if total is not None or ctx.strict:
        if total is None or not (sum(lo or hi) <= total <= sum(hi)):
            ctx.mismatch(subject, "total_count", total, f"{sum(lo or hi)}..{sum(hi)}")
    by_node = irq.get("counts_by_node")
    if by_node is not None:
        for entry in by_node:
            cpus = cpuset(ctx.truth.nodes.get(entry["node"], {}).get("cpus", ""))
            low = sum(c for i, c in enumerate(lo or hi) if i in cpus)
            high = sum(c for i, c in enumerate(hi) if i in cpus)
            if not low <= entry["count"] <= high:
                ctx.mismatch(subject, f"counts_by_node[node {entry['node']}]", entry["count"],
                             f"{low}..{high}")
    # The hardware queue a vector serves: measured where the guest measured it (the queue
    # whose CPUs' reads completed on this vector; none when no read did), else by its name.
    measured = ctx.truth.measured(pairing_disk or disk)
    named = named_queue(truth_irq["actions"])
    cpus = {cpu for cpu, grew in measured.items() if num in grew}
    # a queue none of whose CPUs read (not online, or left out of the measurement:
    # VM_PAIR_CPUS) may be this vector's even though no read grew it: then its name tells
    unmeasured = [i for i, q in hctx.items() if not cpuset(q["cpu_list"]) & set(measured)]
    if measured and (cpus or not unmeasured):
        queues = sorted(i for i, q in hctx.items() if cpus & cpuset(q["cpu_list"]))
        if len(queues) > 1:
            ctx.fail(f"{subject}: hw_queue: reads of queues {queues} all completed on this vector")
        else:
            ctx.equal(subject, "hw_queue (measured)", irq.get("hw_queue"), queues[0] if queues else None)
    elif named is not False:
        ctx.equal(subject, "hw_queue", irq.get("hw_queue"), named)
    elif irq.get("hw_queue") is not None:
        # the only vector of a function serves its queue whatever its affinity (single-vector
        # pairing, as compare_queue_irq accepts it); otherwise the queue's CPUs tell
        q = hctx.get(irq["hw_queue"])
        single = len(ctx.truth.irqs.get(disk, {})) == 1
        if q is None or not (single or queue_cpus_match(ctx, q["cpu_list"], truth_irq["smp_affinity_list"])):
            ctx.mismatch(subject, "hw_queue", irq["hw_queue"],
                         "a queue whose cpu_list equals the vector's affinity (or any queue of a "
                         "single-vector function)")


def named_queue(actions):
    """The hctx a vector serves by its name: nvmeXqN serves N-1 (q0, the admin queue, none),
    virtioX-req.N serves N; None for another nvme/virtio-blk vector (config), False when the
    name does not tell (virtio-scsi "request", megasas)."""
    m = re.fullmatch(r"nvme\d+q(\d+)", actions)
    if m:
        return int(m.group(1)) - 1 if int(m.group(1)) > 0 else None
    m = re.fullmatch(r"virtio\d+-req\.(\d+)", actions)
    if m:
        return int(m.group(1))
    return False


def compare_pci(ctx, disk, pci, pairing_disk=None):
    t = ctx.truth.disks[disk]
    subject = disk
    ctx.equal(subject, "pci.address", pci.get("address"), t["pci"])
    ctx.equal(subject, "pci.vendor", hexnum(pci.get("vendor")), hexnum(t["vendor"]))
    ctx.equal(subject, "pci.device", hexnum(pci.get("device")), hexnum(t["device"]))
    ctx.equal(subject, "pci.class", hexnum(pci.get("class")), hexnum(t["class"]))
    ctx.equal(subject, "pci.driver", pci.get("driver"), t["driver"])
    ctx.equal(subject, "pci.numa_node", pci.get("numa_node"), int(t["numa_node"]))
    ctx.equal_cpus(subject, "pci.local_cpus", pci.get("local_cpus"), t["local_cpulist"])
    ctx.equal(subject, "pci.bus_node", pci.get("bus_node"), ctx.truth.bus_node(disk))
    ctx.equal(subject, "pci.bridge_nodes", pci.get("bridge_nodes"),
              [int(x) for x in t["bridge_nodes"].split()])
    mod = pci.get("module")
    if mod is not None or ctx.strict:
        mod = mod or {}
        ctx.equal(subject, "pci.module.name", mod.get("name"), t["module"])
        state = t.get("module_initstate", "live")
        ctx.equal(subject, "pci.module.state", mod.get("state"), state)
        ctx.equal(subject, "pci.module.srcversion", mod.get("srcversion"), t["module_srcversion"] or None)
        ctx.equal(subject, "pci.module.out_of_tree", mod.get("out_of_tree"),
                  None if state == "builtin" else "O" in t["module_taint"])
    irqs = {i.get("irq"): i for i in pci.get("irqs", [])}
    truth_irqs = ctx.truth.irqs.get(disk, {})
    ctx.equal(subject, "pci.irqs", sorted(irqs), sorted(truth_irqs))
    before = ctx.truth_before.irqs.get(disk, {})
    hctx = ctx.truth.hctx.get(disk, {})
    for num, truth_irq in sorted(truth_irqs.items()):
        if num in irqs:
            compare_irq(ctx, disk, irqs[num], num, truth_irq, before.get(num, {}), hctx, pairing_disk)


def compare_queue_irq(ctx, disk, index, h, pairing_disk=None, subject=None, numastor_irqs=None):
    """A hardware queue's vector. Measured where the scenario measured it (vm_measure_pairing):
    the vector of this disk's function that grew when the queue's CPUs read, and it must be
    delivered where numastor says it is (effective affinity). Otherwise by the kernel's naming
    (nvme, virtio-blk), the only vector of a single-vector function, or (unnamed) a managed
    vector with the queue's CPUs."""
    subject = subject or f"{disk}: hw_queue {index}"
    irqs = ctx.truth.irqs.get(disk, {})
    measured = ctx.truth.measured(pairing_disk or disk)
    if measured:
        cpus = cpuset(ctx.truth.hctx[disk][index]["cpu_list"])
        seen = 0
        for cpu in sorted(cpus):
            grew = {irq: where for irq, where in measured.get(cpu, {}).items() if irq in irqs}
            if not grew:
                continue
            seen += 1
            if len(grew) > 1:
                ctx.fail(f"{subject}: reads from CPU {cpu} completed on {len(grew)} vectors of one "
                         f"function ({sorted(grew)}): the pairing is not one vector per queue")
                continue
            [(irq, where)] = grew.items()
            ctx.equal(subject, f"irq (measured: reads from CPU {cpu} completed on irq {irq})", h.get("irq"), irq)
            eff = (numastor_irqs or {}).get(irq, {}).get("effective_affinity")
            if eff is not None and not set(where) <= cpuset(eff):
                ctx.mismatch(subject, f"irq {irq} effective_affinity (measured delivery CPUs)", eff, cpulist(where))
        ctx.measured_pairs += seen
        if seen:
            return
        if any(cpu in measured for cpu in cpus):
            ctx.fail(f"{subject}: reads from CPUs {cpulist(cpus)} completed on no vector of this disk's function")
            return
        # none of the queue's CPUs read (not online, or not measured): the kernel's naming
    named = [n for n, t in irqs.items() if isinstance(named_queue(t["actions"]), int)
             and not isinstance(named_queue(t["actions"]), bool) and named_queue(t["actions"]) == index]
    if named:
        ctx.equal(subject, "irq", h.get("irq"), named[0])
        ctx.equal(subject, "irq_pairing", h.get("irq_pairing"),
                  "nvme-name" if irqs[named[0]]["actions"].startswith("nvme") else "virtio-name")
    elif len(irqs) == 1:
        ctx.equal(subject, "irq", h.get("irq"), next(iter(irqs)))
        ctx.equal(subject, "irq_pairing", h.get("irq_pairing"), "single-vector")
    elif h.get("irq") is not None:
        t = irqs.get(h["irq"])
        cpus = cpuset(ctx.truth.hctx[disk][index]["cpu_list"])
        if t is None or t["managed"] != "1" or not queue_cpus_match(ctx, ctx.truth.hctx[disk][index]["cpu_list"],
                                                                   t["smp_affinity_list"]):
            ctx.mismatch(subject, "irq", h["irq"], "a managed vector with the queue's CPUs")


def queue_cpus_match(ctx, cpu_list, affinity):
    """A hardware queue's cpu_list is its vector's affinity; from 6.9 on blk-mq leaves the
    isolated CPUs (isolcpus=) out of it (they still submit to the queue; its kworker does not
    run there), so a queue of isolated CPUs alone reads empty (measured on 6.12, isolcpus=2-3)."""
    queue, aff = cpuset(cpu_list), cpuset(affinity)
    return queue == aff or queue == aff - cpuset(ctx.truth.machine.get("isolated_cpus", ""))


def compare_device(ctx, disk, dev):
    t = ctx.truth.disks[disk]
    ctx.equal(disk, "kind", dev.get("kind"), ctx.truth.kind(disk))
    ctx.equal(disk, "devnum", dev.get("devnum"), t["devnum"])
    ctx.equal(disk, "sysfs_path", devices_rel(dev.get("sysfs_path")), devices_rel(t["sysfs_path"]))
    ctx.equal(disk, "size_bytes", dev.get("size_bytes"), int(t["size_sectors"]) * 512)
    ctx.equal(disk, "partitions", dev.get("partitions"), [])
    ident = dev.get("identity") or {}
    for field in ("model", "serial"):
        ctx.equal(disk, f"identity.{field}", ident.get(field), t.get(field) or None)
    ctx.equal(disk, "identity.wwn", ident.get("wwn"), t.get("wwid") or None)
    q = dev.get("queue") or {}
    # a bio-based disk's queue/ has no rq_affinity or nr_requests since 6.12 (the head's)
    ctx.equal(disk, "queue.rq_affinity", q.get("rq_affinity"), int(t["rq_affinity"]) if t["rq_affinity"] else None)
    active = re.search(r"\[([^]]+)\]", t["scheduler"])
    ctx.equal(disk, "queue.scheduler", q.get("scheduler"), active.group(1) if active else t["scheduler"] or None)
    ctx.equal(disk, "queue.nr_requests", q.get("nr_requests"), int(t["nr_requests"]) if t["nr_requests"] else None)

    if ctx.truth.kind(disk) == "nvme-multipath":
        compare_head(ctx, disk, dev)
        return
    queues = {h.get("index"): h for h in dev.get("hw_queues", [])}
    pci0 = ((dev.get("paths") or [{}])[0] or {}).get("pci") or {}
    compare_queues(ctx, disk, disk, queues, {i.get("irq"): i for i in pci0.get("irqs", [])})
    alloc = dev.get("allocations") or {}
    compare_memory_nodes(ctx, disk, [disk], alloc)
    if t.get("pci") == "none":
        # a disk on no PCI function (pmem, md): its node, the node's basis and its members are
        # the scenario's to check (expect.py), against what its guest.sh measured
        ctx.scenario_checked.append(f"{disk}: paths, node, node_source")
        return

    # The path to the PCI function.
    paths = dev.get("paths") or []
    if not ctx.expect(len(paths) == 1, f"{disk}: paths: numastor lists {len(paths)} paths, ground truth 1"):
        return
    path = paths[0]
    transport = {"nvme": "nvme", "scsi": "scsi", "ata": "ata", "virtio-blk": "virtio"}.get(ctx.truth.kind(disk), "other")
    ctx.equal(disk, "paths[0].transport", path.get("transport"), transport)
    controllers = t.get("controllers", "").split()
    if path.get("controller") is not None or ctx.strict:
        if path.get("controller") not in controllers:
            ctx.mismatch(disk, "paths[0].controller", path.get("controller"), " or ".join(controllers))
    if path.get("pci") is None:
        ctx.mismatch(disk, "paths[0].pci", None, t["pci"])
    else:
        compare_pci(ctx, disk, path["pci"])

    # The device's node and its source must follow from the function's numa_node.
    pci = path.get("pci") or {}
    numa = int(t["numa_node"])
    source = dev.get("node_source")
    if source == "pci":
        ctx.equal(disk, "node", dev.get("node"), numa if numa >= 0 else None)
        ctx.expect(numa >= 0, f"{disk}: node_source: numastor=pci while ground-truth numa_node=-1")
        ctx.equal_cpus(disk, "local_cpus", dev.get("local_cpus"), t["local_cpulist"])
    elif source == "unknown":
        ctx.expect(numa == -1, f"{disk}: node_source: numastor=unknown ground-truth numa_node={numa}")
        ctx.equal(disk, "node", dev.get("node"), None)
    elif source == "forced":
        ctx.equal(disk, "node", dev.get("node"), None)
        ctx.expect(pci.get("node_forced") is True,
                   f"{disk}: node_source is forced but pci.node_forced is {fmt(pci.get('node_forced'))}")
    elif source == "set":
        # a node nothing above the function gives (the scenarios that set one check why)
        ctx.expect(numa >= 0, f"{disk}: node_source: numastor=set while ground-truth numa_node={numa}")
        ctx.expect(pci.get("node_set") is True,
                   f"{disk}: node_source is set but pci.node_set is {fmt(pci.get('node_set'))}")
    else:
        ctx.mismatch(disk, "node_source", source, "pci, unknown, forced or set")


def compare_queues(ctx, disk, tdisk, queues, numastor_irqs, pairing_disk=None, label=""):
    """numastor's hardware queues (by index) against ground-truth disk tdisk's: CPUs, tags,
    the nodes of those CPUs, the memory node where measured, and each queue's vector."""
    hctx = ctx.truth.hctx.get(tdisk, {})
    ctx.equal(disk, label + "hw_queues", sorted(queues, key=index_order), sorted(hctx))
    online = cpuset(ctx.truth.machine.get("online_cpus", ""))
    reports_online = schema_has_online_cpus()
    for index, th in sorted(hctx.items()):
        h = queues.get(index)
        if h is None:
            continue
        subject = f"{disk}: {label}hw_queue {index}"
        # numastor adds the isolated CPUs that blk-mq (6.9 on) leaves out of cpu_list, from the
        # queue's vector: they must be isolated (the kernel's list) and not in cpu_list
        iso = cpuset(h.get("isolated_cpus") or "")
        isolated = cpuset(ctx.truth.machine.get("isolated_cpus", ""))
        if not iso <= isolated or iso & cpuset(th["cpu_list"]):
            ctx.mismatch(subject, "isolated_cpus", h.get("isolated_cpus"),
                         f"isolated CPUs ({cpulist(isolated)}) outside cpu_list {th['cpu_list']!r}")
        cpus = cpuset(th["cpu_list"]) | iso
        ctx.equal_cpus(subject, "cpus", h.get("cpus"), cpulist(cpus))
        ctx.equal(subject, "nr_tags", h.get("nr_tags"), int(th["nr_tags"]))
        # With more possible than present CPUs (hotplug headroom) blk-mq maps queues to CPUs
        # that are not online, some (nvme: one queue per possible CPU) to those alone. The
        # kernel names a node only for an online CPU (nodeN/cpulist): a queue's nodes are its
        # online CPUs' nodes, none when it serves no online CPU. online_cpus is the queue's CPUs
        # that /sys/devices/system/cpu/online lists ("" for none).
        served = cpus & online
        nodes = {ctx.truth.node_of_cpu(c) for c in served}
        if None in nodes:
            ctx.fail(f"{subject}: test bed: online CPUs {cpulist(c for c in served if ctx.truth.node_of_cpu(c) is None)} "
                     "are in no node's cpulist")
            nodes.discard(None)
        ctx.equal(subject, "nodes", h.get("nodes"), sorted(nodes))
        if h.get("nodes") is not None and (h.get("nodes") == []) != (not served):
            ctx.fail(f"{subject}: nodes: numastor={fmt(h.get('nodes'))} while the queue serves "
                     f"{'no online CPU' if not served else 'online CPUs ' + cpulist(served)} (cpus {cpulist(cpus)})")
        if "online_cpus" in h or reports_online:
            ctx.equal(subject, "online_cpus", h.get("online_cpus"), cpulist(served),
                      lambda a, b: a is not None and cpuset(a) == cpuset(b))
        elif cpus - online:
            ctx.inferred.append(f"{subject}: online_cpus (not in this numastor's report; CPUs "
                                f"{cpulist(cpus - online)} not online)")
        mem = th.get("memory_node", "inferred")
        if mem == "inferred":
            ctx.inferred.append(f"{subject}: memory_node")
        else:
            ctx.equal(subject, "memory_node", h.get("memory_node"), int(mem))
        compare_queue_irq(ctx, tdisk, index, h, pairing_disk=pairing_disk, subject=subject,
                          numastor_irqs=numastor_irqs)


def index_order(index):
    """Hardware queue indexes in numeric order (a null or odd index last, not a crash)."""
    return (0, index, "") if isinstance(index, int) and not isinstance(index, bool) else (1, 0, str(index))


_ONLINE_CPUS_IN_SCHEMA = None


def schema_has_online_cpus():
    """Does check --json's schema give a hardware queue online_cpus? Then every queue must
    carry it (the schema's own check already says so when it is required)."""
    global _ONLINE_CPUS_IN_SCHEMA
    if _ONLINE_CPUS_IN_SCHEMA is None:
        with open(SCHEMA, encoding="utf-8") as f:
            hw = json.load(f).get("$defs", {}).get("hw_queue", {})
        _ONLINE_CPUS_IN_SCHEMA = "online_cpus" in hw.get("properties", {})
    return _ONLINE_CPUS_IN_SCHEMA


def compare_memory_nodes(ctx, disk, tdisks, alloc):
    """allocations.hw_queue_nodes: only against measured memory nodes (else "inferred");
    allocations.shared_tags against blk-mq's own hctx flags (debugfs) where the guest read them."""
    flags = [th.get("flags") for t in tdisks for th in ctx.truth.hctx.get(t, {}).values()]
    if flags and all(flags):
        shared = any("TAG_HCTX_SHARED" in f for f in flags)
        ctx.equal(disk, "allocations.shared_tags", alloc.get("shared_tags"), shared)
        if alloc.get("shared_tags") is False and alloc.get("tags_nodes") is not None:
            ctx.equal(disk, "allocations.tags_nodes", alloc["tags_nodes"], alloc.get("hw_queue_nodes"))
    mems = [th.get("memory_node", "inferred") for t in tdisks for th in ctx.truth.hctx.get(t, {}).values()]
    if not mems or "inferred" in mems:
        ctx.inferred.append(f"{disk}: allocations.hw_queue_nodes")
    elif alloc.get("hw_queue_nodes") is not None:
        ctx.equal(disk, "allocations.hw_queue_nodes", sorted(set(alloc["hw_queue_nodes"])),
                  sorted({int(m) for m in mems}))


def compare_head(ctx, disk, dev):
    """An NVMe multipath head: its iopolicy, and one numastor path per ground-truth path disk
    (found by the bed from the subsystem's controller links and the hidden disks' device
    links), each with its controller, PCI function (node, vectors) and queues."""
    t = ctx.truth.disks[disk]
    ctx.equal(disk, "iopolicy", dev.get("iopolicy"), t.get("iopolicy") or None)
    tpaths = t.get("paths", "").split()
    paths = dev.get("paths") or []
    ctx.equal(disk, "paths (count)", len(paths), len(tpaths))
    by_ctrl = {p.get("controller"): p for p in paths}
    numas = []
    fabric = False
    for pd in tpaths:
        tp = ctx.truth.disks.get(pd, {})
        ctrl = (tp.get("controllers", "").split() or [None])[0]
        p = by_ctrl.get(ctrl)
        if not ctx.expect(p is not None, f"{disk}: paths: numastor has no path through {ctrl} ({pd}); "
                                         f"it lists {sorted(str(c) for c in by_ctrl)}"):
            continue
        ctx.equal(disk, f"path {ctrl}: transport", p.get("transport"), "nvme")
        if tp.get("pci") == "none":
            # an NVMe-over-fabrics path: its carrier (the NIC or HBA) is the scenario's to check
            fabric = True
            ctx.scenario_checked.append(f"{disk}: path {ctrl}: fabric, pci")
        elif p.get("pci") is None:
            ctx.mismatch(disk, f"path {ctrl}: pci", None, tp.get("pci"))
            continue
        else:
            compare_pci(ctx, pd, p["pci"], pairing_disk=disk)
            numas.append(int(tp["numa_node"]))
        queues = {h.get("index"): h for h in dev.get("hw_queues", []) if h.get("controller") == ctrl}
        compare_queues(ctx, disk, pd, queues, {i.get("irq"): i for i in (p.get("pci") or {}).get("irqs", [])},
                       pairing_disk=disk, label=f"path {ctrl}: ")
    ctx.equal(disk, "hw_queues (count)", len(dev.get("hw_queues", [])),
              sum(len(ctx.truth.hctx.get(pd, {})) for pd in tpaths))
    compare_memory_nodes(ctx, disk, tpaths, dev.get("allocations") or {})
    # the head's node: the paths' node when they all agree on one, else none (a fabrics
    # path's node is its carrier's: the scenario checks it)
    if not fabric:
        ctx.equal(disk, "node", dev.get("node"),
                  numas[0] if numas and len(set(numas)) == 1 and numas[0] >= 0 else None)


def devices_rel(path):
    """A sysfs path from its devices/ component on, so /sys/... and relative forms compare."""
    if path is None:
        return None
    i = path.find("devices/")
    return path[i:] if i >= 0 else path


def compare_all(ctx):
    doc = ctx.doc
    names = [d.get("name") for d in doc.get("devices", [])]
    disks = ctx.truth_disks()
    ctx.equal("devices", "names", sorted(names), disks)
    for disk in disks:
        dev = ctx.device(disk)
        if dev is not None:
            compare_device(ctx, disk, dev)
    compare_machine(ctx)
    summary = doc.get("summary", {})
    ctx.equal("summary", "devices", summary.get("devices"), len(names))
    ctx.equal("summary", "exit_code", summary.get("exit_code"), ctx.rc)
    for f in doc.get("findings", []):
        if f.get("device") is not None and f["device"] not in disks:
            ctx.fail(f"finding {f.get('id')}: names device {f['device']!r}, which is no disk")


def load_expectations(scenario_dir):
    path = os.path.join(scenario_dir, "expect.py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("expect_" + os.path.basename(scenario_dir), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    result_dir, scenario_dir = argv[1], argv[2]
    expect = load_expectations(scenario_dir)
    ctx = Context(result_dir, strict=getattr(expect, "STRICT", True))
    exit_codes = getattr(expect, "EXIT_CODES", {0, 1, 2})

    def read(name, default=""):
        try:
            with open(os.path.join(result_dir, name), encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return default

    scenario_rc = read("scenario.rc", "missing").strip()
    if scenario_rc != "0":
        ctx.fail(f"guest scenario script failed (exit {scenario_rc}):\n" + read("scenario.log").rstrip())
    rc_text = read("check.rc").strip()
    if rc_text:
        ctx.rc = int(rc_text)
        if ctx.rc not in exit_codes:
            ctx.fail(f"numastor check --json exited {ctx.rc}, expected one of {sorted(exit_codes)}"
                     f"; stderr: {read('check.err').strip()[:500]}")
        try:
            ctx.doc = json.loads(read("check.out"))
        except ValueError as e:
            ctx.fail(f"numastor check --json printed no valid JSON ({e}); "
                     f"stderr: {read('check.err').strip()[:500]}")
    elif scenario_rc == "0":
        ctx.fail("the scenario did not run numastor check --json")

    if not ctx.truth.present:
        ctx.fail("the guest wrote no ground truth (truth.txt)")
    elif ctx.doc is not None:
        with open(SCHEMA, encoding="utf-8") as f:
            schema = json.load(f)
        for err in schema_errors(ctx.doc, schema, schema)[:20]:
            ctx.fail(f"schema: {err}")
        if isinstance(ctx.doc, dict):
            try:
                compare_all(ctx)
                if expect is not None and hasattr(expect, "check"):
                    expect.check(ctx)
            except (KeyError, TypeError, AttributeError, ValueError) as e:
                ctx.fail(f"comparison stopped on malformed output: {type(e).__name__}: {e}")

    # Ground truth that moved while numastor ran makes the comparison unreliable.
    for disk, irqs in ctx.truth.irqs.items():
        for num, attrs in irqs.items():
            old = ctx.truth_before.irqs.get(disk, {}).get(num, {})
            for field in ("smp_affinity_list", "effective_affinity_list"):
                if old and old.get(field) != attrs.get(field):
                    ctx.fail(f"{disk}: irq {num}: {field} moved while numastor ran "
                             f"({old.get(field)} -> {attrs.get(field)})")

    for message in dict.fromkeys(ctx.failures):
        print(message)
    # what the comparison stood on, for the run's log (not failures)
    with open(os.path.join(result_dir, "compare-basis.txt"), "w", encoding="utf-8") as f:
        f.write(f"pairing measured: {ctx.measured_pairs} queue/CPU pairs\n")
        f.write(f"inferred, not compared: {len(ctx.inferred)}\n")
        f.writelines(f"  {x}\n" for x in ctx.inferred)
        f.write(f"left to the scenario's expect.py: {len(ctx.scenario_checked)}\n")
        f.writelines(f"  {x}\n" for x in ctx.scenario_checked)
    return 1 if ctx.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
