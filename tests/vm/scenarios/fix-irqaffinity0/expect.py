"""fix-irqaffinity0: `numastor fix --json` on the real kernel, booted with irqaffinity=0 (every
unmanaged vector on CPU 0) and the pre-fix nvme driver (the root-bus NVMe's node forced to 0;
where nvme is built in, cloud-amd64, the stock one: the node-1 ahci disk is then what moves).
Ground truth is the guest's own vm_truth before the fix, right after it, after every disk's
vectors fired, and after --revert. It holds numastor to:

- every `move` entry: the kernel's smp_affinity_list equals its target right after the fix,
  result.affinity says so, and result.status is applied, or applied-effective-differs exactly
  when the kernel's effective_affinity_list (read right after) is outside the target;
- once a moved vector fired, the kernel delivers it inside the target (the x86 MSI move is
  deferred to the next interrupt without interrupt remapping, so right after the write
  effective_affinity_list may still show the old CPU);
- every kernel-managed vector (write-back refused with EIO) is untouched, and those of the
  planned devices are in the plan as `skip` with result `skipped` and a managed reason;
- nothing outside the plan moved; the exit code is 1 exactly when an entry failed (a differing
  effective affinity is reported, not failed: the kernel moves the vector at its next interrupt);
- the journal holds each moved IRQ once with the previous value the guest read;
- `check --json` after the fix marks exactly the moved IRQs placed_by_numastor;
- `fix --revert` restores every storage IRQ's exact previous smp_affinity_list, reports each
  journaled IRQ restored, and removes the journal; a second --revert has nothing to do.
"""

from compare import cpuset
import fixlib


def check(ctx):
    before = fixlib.truth(ctx, "before.txt")
    after = fixlib.truth(ctx, "after-fix.txt")
    after_io = fixlib.truth(ctx, "after-io.txt")
    reverted = fixlib.truth(ctx, "after-revert.txt")
    b, a, io, r = (fixlib.storage_irqs(t) for t in (before, after, after_io, reverted))
    doc = fixlib.json_out(ctx, "fix")
    if doc is None:
        return
    ctx.expect(doc["dry_run"] is False, "fix: dry_run is true on an applying run")
    plan = {e["irq"]: e for e in doc["irqs"]}
    moved = {e["irq"]: e for e in fixlib.moves(doc)}

    # The test bed: a forced-node NVMe and something to move and to skip. Where nvme is built
    # in (cloud-amd64) no pre-fix nvme loads: no forced node, and the only planned device is
    # the node-1 ahci disk, whose one vector is not managed (the skip is shown on the others).
    forced = fixlib.prefix_nvme_loaded(ctx)
    root_nvme = ctx.truth_disks(kind="nvme", root_bus=True)
    ctx.expect(len(root_nvme) == 1 and before.disks[root_nvme[0]]["numa_node"] == ("0" if forced else "-1"),
               f"test bed: the root-bus NVMe's numa_node is not {'0 (forced by the pre-fix nvme)' if forced else '-1'}")
    ctx.expect(moved, "test bed: numastor planned no move (irqaffinity=0 should leave vectors to move)")
    if forced:
        ctx.expect(any(e["action"] == "skip" for e in doc["irqs"]), "test bed: no managed vector in the plan")
    else:
        ahci = ctx.truth_disks(kind="ata", root_bus=False)
        ctx.expect(ahci and any(e["device"] == ahci[0] for e in moved.values()),
                   f"fix: the node-1 ahci disk {ahci} has no vector moved")
    if root_nvme and forced:
        ctx.expect(any(e["device"] == root_nvme[0] and "node-forced" in e["answers"] for e in doc["irqs"]),
                   f"fix: the forced-node {root_nvme[0]} is not in the plan as answering node-forced")

    failed = 0
    for num, e in sorted(plan.items()):
        subject = f"fix: irq {num} ({e['name']})"
        if not ctx.expect(num in b, f"{subject}: not a storage IRQ of ground truth"):
            continue
        disk, t = b[num]
        ctx.equal(subject, "device", e["device"], disk)
        ctx.equal(subject, "current", e["current"], t["smp_affinity_list"], fixlib.same_cpus)
        ctx.equal(subject, "managed", e["managed"], t["managed"] == "1")
        res = e["result"] or {}
        if e["action"] == "move":
            now = a[num][1]
            ctx.equal(subject, "target (kernel after the fix)", e["target"], now["smp_affinity_list"],
                      fixlib.same_cpus)
            ctx.equal(subject, "result.affinity", res.get("affinity"), now["smp_affinity_list"], fixlib.same_cpus)
            outside = not cpuset(now["effective_affinity_list"]) <= cpuset(e["target"])
            ctx.equal(subject, "result.status", res.get("status"),
                      "applied-effective-differs" if outside else "applied")
            # what numastor read back, unless the deferred move completed in between
            if not fixlib.same_cpus(res.get("effective_affinity"), now["effective_affinity_list"]):
                ctx.expect(not outside, f"{subject}: result.effective_affinity={res.get('effective_affinity')} "
                           f"ground-truth={now['effective_affinity_list']}")
        elif e["action"] == "skip":
            ctx.equal(subject, "result.status", res.get("status"), "skipped")
        failed += res.get("status") == "failed"
    ctx.equal("fix", "summary.failed", doc["summary"]["failed"], failed)
    ctx.equal("fix", "exit code", fixlib.rc(ctx, "fix"), 1 if failed else 0)

    # Managed vectors: never written, and those of planned devices listed as skipped.
    planned_disks = {e["device"] for e in doc["irqs"]}
    for num, (disk, t) in sorted(b.items()):
        subject = f"{disk}: irq {num} ({t['actions']})"
        if t["managed"] == "1":
            fixlib.kernel_equal(ctx, subject, "smp_affinity_list after the fix (managed)",
                                a[num][1]["smp_affinity_list"], t["smp_affinity_list"])
            fixlib.kernel_equal(ctx, subject, "effective_affinity_list after the fix (managed)",
                                a[num][1]["effective_affinity_list"], t["effective_affinity_list"])
            if disk in planned_disks:
                e = plan.get(num)
                if ctx.expect(e is not None,
                              f"fix: {subject}: managed vector of a planned device missing from the plan"):
                    ctx.equal(f"fix: irq {num}", "action", e["action"], "skip")
                    ctx.expect("managed" in e["reason"],
                               f"fix: irq {num}: skip reason does not say managed: {e['reason']}")
        elif num not in moved:
            fixlib.kernel_equal(ctx, subject, "smp_affinity_list after the fix (not planned to move)",
                                a[num][1]["smp_affinity_list"], t["smp_affinity_list"])

    # Once a moved vector fired, the kernel delivers it inside the target.
    fired = 0
    for num, e in sorted(moved.items()):
        count_after = sum(int(x) for x in a[num][1]["per_cpu_count"].split(",") if x)
        count_io = sum(int(x) for x in io[num][1]["per_cpu_count"].split(",") if x)
        if count_io > count_after:
            fired += 1
            ctx.expect(cpuset(io[num][1]["effective_affinity_list"]) <= cpuset(e["target"]),
                       f"{io[num][0]}: irq {num}: fired after the fix but the kernel delivers on CPU "
                       f"{io[num][1]['effective_affinity_list']}, outside the target {e['target']}")
    ctx.expect(fired, "test bed: no moved vector fired during the reads from every disk")

    # Journal, then check's view of the placement.
    fixlib.check_journal(ctx, "fix", fixlib.journal(ctx, "journal-fix.json"),
                         {n: (b[n][1]["smp_affinity_list"], e["target"]) for n, e in moved.items()})
    fixlib.check_placed(ctx, "placed", moved)

    # Revert: exact previous values, every journaled IRQ reported restored, journal gone.
    fixlib.check_revert_doc(ctx, len(moved))
    for num, (disk, t) in sorted(b.items()):
        fixlib.kernel_equal(ctx, f"{disk}: irq {num} ({t['actions']})", "smp_affinity_list after revert",
                            r[num][1]["smp_affinity_list"], t["smp_affinity_list"])
    ctx.expect(ctx.read("journal-revert.json") is None, "revert: /run/numastor/journal.json still there")
    ctx.equal("second revert", "exit code", fixlib.rc(ctx, "revert2"), 0)
    ctx.expect("nothing to revert" in (ctx.read("revert2.out") or ""),
               f"second revert: {(ctx.read('revert2.out') or '').strip()}")
