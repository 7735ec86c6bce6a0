"""probe-nodes: numastor probe and fix --probe on the real kernel, booted with irqaffinity=0.

The node-1 HBA's one unmanaged vector (megasas; ahci on the cloud flavour) starts on CPU 0.
Ground truth is the guest's own reading of that vector's per_cpu_count (and its affinity)
right before and right after each numastor run; it encloses numastor's own window, so each of
numastor's per-node counts is at most the guest's difference on that node's CPUs. Absolute
IOPS under TCG mean nothing: only where the interrupts fire is asserted. It holds numastor to:

- probe before the fix: exit 0, or 1 with probe-node-gap exactly when one node's IOPS is
  more than 15% below the other's (recomputed from the runs' IOPS), the schema, virtualized true, one run from each node, each
  with reads done; the interrupts of every run all on node 0, as the guest counted (none on
  node 1's CPUs during the whole probe);
- fix --probe with the disk's /dev node moved away: exit 3, "nothing was changed", the
  vector still on CPU 0, no journal;
- fix --probe=2 --json: exit 0, the vector moved to node 1's CPUs (the kernel says so after);
  `probe` holds the HBA's disk with both nodes' runs before (interrupts on node 0 only) and
  after (on node 1; in the first run after the write at most a few, STALE, still on CPU 0,
  as the x86 MSI move waits for the next interrupt, none in the later one); the journal's
  probe is that same table;
- probe after the fix: every interrupt on node 1, none on node 0's CPUs (the guest's count);
- the text report names the disk and says it ran under a hypervisor.
"""

import os

import fixlib
import modswaplib as ms
from compare import SRC_ROOT

SCHEMA = os.path.join(SRC_ROOT, "schema", "numastor-probe.schema.json")
# interrupts that may still arrive on the old CPU in the first run after the vector moved
# (x86 without interrupt remapping moves an MSI vector at its next interrupt)
STALE = 8
FIX_SCHEMA = fixlib.FIX_SCHEMA


def cpus(text):
    out = set()
    for part in (text or "").split(","):
        if "-" in part:
            a, b = part.split("-")
            out |= set(range(int(a), int(b) + 1))
        elif part:
            out.add(int(part))
    return out


def guest_delta(ctx, step, node_cpus):
    """{node: fired} between irq.STEP-before and irq.STEP-after, by the guest's reads."""
    a = [int(x) for x in (ms.fact(ctx, f"irq.{step}-before.counts") or "").split(",") if x]
    b = [int(x) for x in (ms.fact(ctx, f"irq.{step}-after.counts") or "").split(",") if x]
    if not a or len(a) != len(b):
        ctx.fail(f"test bed: per_cpu_count of the vector around {step}: {a} / {b}")
        return {}
    return {n: sum(b[c] - a[c] for c in cs if c < len(a)) for n, cs in node_cpus.items()}


def by_node(run):
    irq = run.get("interrupts") or {}
    return {c["node"]: c["count"] for c in irq.get("counts_by_node", [])} if irq else None


def load(ctx, tag, schema, codes=(0,)):
    rc = fixlib.rc(ctx, tag)
    ctx.expect(rc in codes, f"{tag}: exit code {rc}, expected one of {codes}; stderr "
               f"{(ctx.read(tag + '.err') or '')[:300]!r}")
    doc = fixlib.json_out(ctx, tag, schema)
    if doc is not None and "exit_code" in doc:
        ctx.equal(tag, "exit_code (the process's)", doc["exit_code"], rc)
    return doc


def check_probe(ctx, tag, disk, node_cpus, on):
    """A probe document: runs from every node, all interrupts on node `on` (numastor's and the
    guest's count), numastor's counts within the guest's."""
    # a node gap (exit 1) or none (exit 0): under TCG the figures are what they are
    doc = load(ctx, tag, SCHEMA, (0, 1))
    truth = guest_delta(ctx, tag, node_cpus)
    ctx.expect(truth.get(on, 0) > 0 and all(v == 0 for n, v in truth.items() if n != on),
               f"test bed: {tag}: the vector fired {truth} by node (guest's per_cpu_count), not only on node {on}")
    if doc is None:
        return
    ctx.equal(tag, "virtualized", doc.get("virtualized"), True)
    devs = doc.get("devices") or []
    if not ctx.expect(len(devs) == 1 and devs[0]["name"] == disk, f"{tag}: devices {[d['name'] for d in devs]}"):
        return
    runs = devs[0]["nodes"]
    ctx.equal(tag, "runs from nodes", [r["node"] for r in runs], sorted(node_cpus))
    iops = [r["iops"] for r in runs]
    gap = len(iops) > 1 and min(iops) < 0.85 * max(iops)
    ctx.equal(tag, "probe-node-gap raised", [f["device"] for f in doc.get("findings", [])], [disk] if gap else [])
    total = {n: 0 for n in node_cpus}
    for r in runs:
        counts = by_node(r)
        ctx.expect(r["ios"] > 0, f"{tag}: node {r['node']}: no read completed")
        if not ctx.expect(counts is not None, f"{tag}: node {r['node']}: interrupts null for a PCI disk"):
            continue
        ctx.expect(counts.get(on, 0) > 0 and all(v == 0 for n, v in counts.items() if n != on),
                   f"{tag}: run from node {r['node']}: interrupts by node {counts}: numastor={counts} "
                   f"ground-truth=all on node {on} (guest: {truth})")
        for n, v in counts.items():
            total[n] = total.get(n, 0) + v
    for n, v in total.items():
        ctx.expect(v <= truth.get(n, 0), f"{tag}: node {n}: numastor counts {v} interrupts over its runs, more "
                   f"than the guest's {truth.get(n, 0)} around the whole probe")


def check(ctx):
    disk, irq = ms.fact(ctx, "disk"), ms.fact(ctx, "irq")
    node_cpus = {int(k.split(".")[1]): cpus(v) for k, v in ms.facts(ctx).items()
                 if k.startswith("node.") and k.endswith(".cpus") and v}
    if not ctx.expect(disk and irq and sorted(node_cpus) == [0, 1],
                      f"test bed: disk {disk!r}, irq {irq!r}, nodes {node_cpus}"):
        return
    ctx.expect(ms.fact(ctx, "irq.probe1-before.affinity") == "0",
               f"test bed: irqaffinity=0 left the vector at {ms.fact(ctx, 'irq.probe1-before.affinity')}")
    check_probe(ctx, "probe1", disk, node_cpus, 0)

    # the probe before the change could not open the disk: refused, nothing changed
    ctx.equal("fix --probe without the disk's /dev node", "exit code", fixlib.rc(ctx, "refused"), 3)
    err = ctx.read("refused.err") or ""
    ctx.expect("nothing was changed: --probe" in err, f"fix --probe without the /dev node: stderr {err[:300]!r}")
    fixlib.kernel_equal(ctx, "fix --probe without the /dev node", "the vector's smp_affinity_list",
                        ms.fact(ctx, "irq.refused.affinity"), "0")
    fixlib.kernel_equal(ctx, "fix --probe without the /dev node", "journal", ms.fact(ctx, "journal.refused"),
                        "absent")

    fix = load(ctx, "fix", FIX_SCHEMA)
    moved = cpus(ms.fact(ctx, "irq.fix-after.affinity"))
    ctx.expect(moved and moved <= node_cpus[1],
               f"test bed: after fix --probe the vector's smp_affinity_list is {ms.fact(ctx, 'irq.fix-after.affinity')}, "
               f"not inside node 1's CPUs")
    if fix is not None:
        probe = fix.get("probe") or {}
        ctx.equal("fix --probe", "problem", probe.get("problem"), None)
        mine = [d for d in probe.get("devices", []) if d["name"] == disk]
        if ctx.expect(mine, f"fix --probe: the HBA's disk {disk} is not among the probed devices "
                      f"{[d['name'] for d in probe.get('devices', [])]}"):
            for k, nd in enumerate(mine[0]["nodes"]):
                before, after = by_node(nd["before"]), by_node(nd["after"] or {})
                ctx.expect(before and before.get(0, 0) > 0 and before.get(1, 0) == 0,
                           f"fix --probe: from node {nd['node']}, before: interrupts by node {before}: not all on node 0")
                # the first run after the write may still see the few interrupts the old CPU
                # had latched when the vector moved (measured: 1, and 2); every later run none
                stale = STALE if k == 0 else 0
                ctx.expect(after and after.get(1, 0) > 0 and after.get(0, 0) <= stale,
                           f"fix --probe: from node {nd['node']}, after: interrupts by node {after}: not on node 1 "
                           f"(at most {stale} still on node 0)")
        # the same table in the journal, beside what it measured
        j = fixlib.journal(ctx, "journal-fix.json") or {}
        ctx.equal("journal after fix --probe", "probe", j.get("probe"), probe)
        truth = guest_delta(ctx, "fix", node_cpus)
        ctx.expect(truth.get(1, 0) > 0, f"test bed: during fix --probe the vector never fired on node 1: {truth}")

    check_probe(ctx, "probe2", disk, node_cpus, 1)
    text = ctx.read("text.out") or ""
    ctx.expect(disk in text and "under a hypervisor" in text, f"probe (text): {text[:400]!r}")
