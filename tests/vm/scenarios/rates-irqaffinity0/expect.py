"""rates-irqaffinity0: `check --interval 2` and counts since fix on the real kernel, booted with
irqaffinity=0 (every unmanaged vector on CPU 0) and the pre-fix nvme driver, with O_DIRECT
reads pinned to each CPU in turn running on every disk during each interval.

Ground truth is the kernel's own per_cpu_count (vm_truth) around each step, folded onto nodes
by the kernel's node cpulists. It holds numastor to:

- every `check --interval 2 --json` validates against the schema (jsonschema), reports
  interval_seconds of at least 2, and per IRQ rates_by_node whose counts are within what the
  kernel counted around the check (at most the growth from the truth before to the truth
  after, node by node) and whose rates are count / interval_seconds;
- before the fix, the megasas HBA behind the node-1 expander fires on CPU 0: its vector's
  interval counts are on node 0, and irq-fires-remote is raised for it judged on the interval
  (the finding the fix must clear);
- after `numastor fix` and the reads, `check --interval 2 --json` raises no fire-location
  finding, and the vectors that fired in the interval fired where their queues serve;
- `check --json` without an interval judges each IRQ fix placed on its counts since
  placement (count_basis since-fix), bounded by the kernel's counts (at least the growth
  after the fix, at most the growth since before the fix), and raises no fire-location
  finding either; the journal holds each placed IRQ's per_cpu_count at placement, within what
  the kernel counted before and after the fix.
"""

import json

from compare import SCHEMA
import fixlib

try:
    import jsonschema
except ImportError:  # the bed's own small checker (fixlib.check_json) still runs
    jsonschema = None


def per_node(truth, counts):
    """A per_cpu_count string folded onto the kernel's nodes: {node: count}."""
    out = {n: 0 for n in truth.nodes}
    for cpu, c in enumerate(int(x) for x in counts.split(",") if x):
        node = truth.node_of_cpu(cpu)
        if node is not None:
            out[node] += c
    return out


def growth(t0, t1, num):
    """{node: growth} of storage IRQ num's counts from truth t0 to t1, None when missing."""
    a, b = fixlib.storage_irqs(t0).get(num), fixlib.storage_irqs(t1).get(num)
    if not a or not b:
        return None
    lo, hi = per_node(t0, a[1]["per_cpu_count"]), per_node(t1, b[1]["per_cpu_count"])
    return {n: hi[n] - lo.get(n, 0) for n in hi}


def irqs_of(doc):
    for dev in doc.get("devices", []):
        for path in dev.get("paths") or []:
            for irq in (path.get("pci") or {}).get("irqs") or []:
                yield dev["name"], irq


def validate(ctx, tag, doc):
    if jsonschema is None or doc is None:
        return
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    try:
        jsonschema.validate(doc, schema)
    except jsonschema.ValidationError as e:
        ctx.fail(f"{tag}: jsonschema: {e.message} at {'/'.join(str(p) for p in e.absolute_path)}")


def check_interval(ctx, tag, doc, t0, t1):
    """The interval document against the kernel's counts before and after it."""
    iv = doc.get("interval_seconds")
    if not ctx.expect(isinstance(iv, (int, float)) and 2 <= iv < 30,
                      f"{tag}: interval_seconds {iv} for --interval 2"):
        return 0
    fired = 0
    for disk, irq in irqs_of(doc):
        subject = f"{tag}: {disk}: irq {irq['irq']} ({irq.get('name')})"
        rates = irq.get("rates_by_node")
        if not ctx.expect(rates is not None and irq.get("count_basis") == "interval",
                          f"{subject}: no rates_by_node (count_basis {irq.get('count_basis')})"):
            continue
        g = growth(t0, t1, irq["irq"])
        if g is None:
            continue
        for r in rates:
            ctx.expect(0 <= r["count"] <= g.get(r["node"], 0),
                       f"{subject}: node {r['node']}: {r['count']} in the interval, but the kernel counted "
                       f"{g.get(r['node'], 0)} from before to after the check")
            ctx.expect(abs(r["rate"] - r["count"] / iv) <= 0.0006,
                       f"{subject}: node {r['node']}: rate {r['rate']} is not {r['count']} / {iv}")
        fired += any(r["count"] for r in rates)
    return fired


def fires_remote(doc):
    return [f for f in doc.get("findings", []) if f["id"] == "irq-fires-remote"]


def check(ctx):
    before_fix = fixlib.truth(ctx, "before-fix.txt")
    after_fix = fixlib.truth(ctx, "after-fix.txt")
    t_before, t_after = fixlib.truth(ctx, "truth-before.txt"), fixlib.truth(ctx, "truth.txt")
    after_sf = fixlib.truth(ctx, "after-sincefix.txt")
    mega = ctx.truth_disks(kind="scsi", root_bus=False)
    ctx.expect(len(mega) == 1 and len(ctx.truth.irqs.get(mega[0], {})) == 1,
               "test bed: expected the megasas disk behind the expander with one vector")
    mega_irq = next(iter(ctx.truth.irqs[mega[0]])) if mega and ctx.truth.irqs.get(mega[0]) else None

    # Before the fix: the HBA's vector is on CPU 0, the HBA on node 1.
    unfixed = fixlib.check_json(ctx, "unfixed")
    validate(ctx, "unfixed", unfixed)
    if unfixed is not None and mega_irq is not None:
        check_interval(ctx, "unfixed", unfixed, fixlib.truth(ctx, "unfixed-before.txt"), before_fix)
        rates = {r["node"]: r["count"] for d, i in irqs_of(unfixed) if i["irq"] == mega_irq
                 for r in i.get("rates_by_node") or []}
        ctx.expect(rates.get(0, 0) > 0 and rates.get(1, 0) == 0,
                   f"test bed: before the fix, {mega[0]}'s vector should fire on node 0 only: {rates}")
        f = [x for x in fires_remote(unfixed) if x["device"] == mega[0]]
        if ctx.expect(f, f"unfixed: no irq-fires-remote for {mega[0]}, whose vector fired on node 0 during the "
                      f"interval: {rates}"):
            ev = [e for e in f[0]["evidence"]["irqs"] if e["irq"] == mega_irq]
            ctx.expect(ev and ev[0].get("count_basis") == "interval",
                       f"unfixed: irq-fires-remote for {mega[0]} not judged on the interval: {ev}")

    # The fix and its journal: the counts at placement lie between the kernel's counts
    # before and after the fix.
    fixdoc = fixlib.json_out(ctx, "fix")
    moved = {e["irq"]: e for e in fixlib.moves(fixdoc)} if fixdoc else {}
    ctx.expect(mega_irq in moved, f"test bed: fix did not move {mega[0] if mega else 'the HBA'}'s vector")
    journal = fixlib.journal(ctx, "journal-fix.json") or {}
    for e in journal.get("irqs", []):
        subject = f"journal: irq {e['irq']} ({e['name']})"
        b, a = fixlib.storage_irqs(before_fix).get(e["irq"]), fixlib.storage_irqs(after_fix).get(e["irq"])
        if not ctx.expect("counts" in e, f"{subject}: no counts at placement") or not b or not a:
            continue
        # the journal's form: a run of one value written value*times (0*446), CPU 0 first
        at = [int(v) for tok in e["counts"].split(",")
              for v in [tok.split("*")[0]] * (int(tok.split("*")[1]) if "*" in tok else 1)]
        lo = [int(x) for x in b[1]["per_cpu_count"].split(",")]
        hi = [int(x) for x in a[1]["per_cpu_count"].split(",")]
        ctx.expect(len(at) == len(lo) and all(x <= y <= z for x, y, z in zip(lo, at, hi)),
                   f"{subject}: counts at placement {e['counts']} not between the kernel's "
                   f"{b[1]['per_cpu_count']} (before) and {a[1]['per_cpu_count']} (after)")

    # After the fix, over an interval: no fire-location finding; what fired, fired locally.
    doc = ctx.doc
    validate(ctx, "check", doc)
    if doc is not None:
        fired = check_interval(ctx, "check", doc, t_before, t_after)
        ctx.expect(fired, "test bed: no vector fired during the interval after the fix")
        ctx.expect(not fires_remote(doc), f"check --interval 2 after the fix: {fires_remote(doc)}")
        if mega_irq is not None:
            rates = {r["node"]: r["count"] for d, i in irqs_of(doc) if i["irq"] == mega_irq
                     for r in i.get("rates_by_node") or []}
            ctx.expect(rates.get(1, 0) > 0 and rates.get(0, 0) == 0,
                       f"after the fix {mega[0]}'s vector should fire on node 1 only: {rates}")

    # Without an interval: the placed IRQs counted since placement.
    sf = fixlib.check_json(ctx, "sincefix")
    validate(ctx, "sincefix", sf)
    if sf is not None:
        ctx.equal("sincefix", "interval_seconds", sf.get("interval_seconds"), None)
        ctx.expect(not fires_remote(sf), f"check after the fix (since fix): {fires_remote(sf)}")
        for disk, irq in irqs_of(sf):
            subject = f"sincefix: {disk}: irq {irq['irq']} ({irq.get('name')})"
            if irq["irq"] not in moved:
                ctx.expect(irq.get("count_basis") in ("since-boot", "none"),
                           f"{subject}: count_basis {irq.get('count_basis')} for an IRQ fix did not place")
                continue
            if not ctx.expect(irq.get("count_basis") == "since-fix" and irq.get("counts_since_fix_by_node"),
                              f"{subject}: placed but count_basis {irq.get('count_basis')}"):
                continue
            lo, hi = growth(after_fix, t_after, irq["irq"]), growth(before_fix, after_sf, irq["irq"])
            if lo is None or hi is None:
                continue
            for c in irq["counts_since_fix_by_node"]:
                ctx.expect(lo.get(c["node"], 0) <= c["count"] <= hi.get(c["node"], 0),
                           f"{subject}: node {c['node']}: {c['count']} since fix, the kernel counted "
                           f"{lo.get(c['node'], 0)}..{hi.get(c['node'], 0)}")
        if mega_irq is not None:
            boot = {c["node"]: c["count"] for d, i in irqs_of(sf) if i["irq"] == mega_irq
                    for c in i.get("counts_by_node") or []}
            # not a requirement, a demonstration: since boot alone would still say "remote"
            print(f"note: {mega[0]} irq {mega_irq} since boot by node {boot}")
