"""fix-killed-revert: a `numastor fix` that dies right after its first write
(NUMASTOR_TEST_STOP_AFTER_WRITES=1 makes it _exit(137) there, as a kill would) leaves the
journal it wrote before that write, and `fix --revert` restores everything from it.
Booted with irqaffinity=3 (unmanaged vectors on CPU 3, node 1), the pre-fix nvme driver (none
where nvme is built in: cloud-amd64) and a second node-1 HBA, an ahci disk (qemu-args): with
the default affinity the kernel already puts the forced NVMe's admin vector on node 0 and the
node-1 HBAs' vectors on node 1, exactly numastor's targets, leaving nothing to move.

Ground truth is the guest's snapshot of every IRQ of the machine (vm_irqs) before, after
the killed fix and after the revert, and the plan is that of a `--dry-run --json` just
before. It holds numastor to: exit code 137; exactly one IRQ of the machine changed, the
plan's first move, to its target; the journal names every IRQ the plan moves, once, with
the value the guest read before; `check --json` marks that one IRQ placed_by_numastor and no
other (the rest were never written); a --revert killed after its first write (exit 137)
leaves the journal whole; the next --revert exits
0, reports every journaled IRQ restored, brings every IRQ of the machine back to its exact
previous smp_affinity_list and removes the journal.
"""

import fixlib


def check(ctx):
    before = fixlib.irqs(ctx, "irqs-before.txt")
    killed = fixlib.irqs(ctx, "irqs-killed.txt")
    reverted = fixlib.irqs(ctx, "irqs-reverted.txt")
    plan = fixlib.json_out(ctx, "plan")
    if plan is None:
        return
    ctx.expect(plan["dry_run"] is True, "plan: dry_run is false for --dry-run")
    moves = fixlib.moves(plan)
    if not ctx.expect(len(moves) >= 2, f"test bed: the plan moves {len(moves)} vectors; "
                      "a killed-after-one-write fix needs at least two"):
        return
    for e in moves:
        ctx.equal(f"plan: irq {e['irq']} ({e['name']})", "current", e["current"],
                  before.get(e["irq"], {}).get("affinity"), fixlib.same_cpus)

    ctx.equal("killed fix", "exit code", fixlib.rc(ctx, "killed"), 137)
    changed = sorted(n for n in before if n in killed and before[n]["affinity"] != killed[n]["affinity"])
    first = moves[0]
    fixlib.kernel_equal(ctx, "killed fix", "IRQs whose smp_affinity_list changed", changed, [first["irq"]])
    if first["irq"] in killed:
        ctx.equal(f"killed fix: irq {first['irq']} ({first['name']})", "target (kernel after the write)",
                  first["target"], killed[first["irq"]]["affinity"], fixlib.same_cpus)
    fixlib.check_journal(ctx, "killed fix", fixlib.journal(ctx, "journal-killed.json"),
                         {e["irq"]: (before[e["irq"]]["affinity"], e["target"]) for e in moves})

    placed = fixlib.check_json(ctx, "placed")
    if placed is not None:
        marked = sorted(irq["irq"] for dev in placed.get("devices", []) for path in dev.get("paths") or []
                        for irq in (path.get("pci") or {}).get("irqs", []) if irq.get("placed_by_numastor"))
        # The journal names every planned IRQ before the first write; only the one written
        # was placed by numastor, the others still hold their pre-fix affinity.
        for n in sorted(set(marked) - {first["irq"]}):
            ctx.fail(f"check after the killed fix: irq {n} ({before.get(n, {}).get('actions')}): "
                     f"placed_by_numastor: numastor=true ground-truth=false (never written: smp_affinity_list "
                     f"{killed.get(n, {}).get('affinity')} is its pre-fix value, the journal's placed value is "
                     f"only what the dead fix meant to write)")
        ctx.expect(first["irq"] in marked, f"check after the killed fix: irq {first['irq']}: "
                   "placed_by_numastor: numastor=false ground-truth=true (written before the fix died)")

    ctx.equal("revert killed after its first write", "exit code", fixlib.rc(ctx, "revert-killed"), 137)
    fixlib.check_journal(ctx, "revert killed after its first write", fixlib.journal(ctx, "journal-revert-killed.json"),
                         {e["irq"]: (before[e["irq"]]["affinity"], e["target"]) for e in moves})

    ctx.equal("revert", "exit code", fixlib.rc(ctx, "revert"), 0)
    rev = fixlib.json_out(ctx, "revert")
    if rev is not None:
        ctx.equal("revert", "failed", rev["failed"], 0)
        ctx.equal("revert", "reverted", len(rev["reverted"]), len(moves))
        for item in rev["reverted"]:
            ctx.expect(item["restored"] is True, f"revert: {item['what']}: not restored ({item['problem']})")
    for n, t in sorted(before.items()):
        if n in reverted:
            fixlib.kernel_equal(ctx, f"irq {n} ({t['actions']})", "smp_affinity_list after revert",
                                reverted[n]["affinity"], t["affinity"])
    ctx.expect(ctx.read("journal-reverted.json") is None, "revert: /run/numastor/journal.json still there")
