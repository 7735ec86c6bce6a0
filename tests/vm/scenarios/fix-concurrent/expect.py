"""fix-concurrent: one fix at a time, on the real kernel (irqaffinity=0, pre-fix nvme driver).

Two `numastor fix --json` started at once: both finish (exit 0 or 1), and they do not
interleave: exactly one of them moves the vectors the dry-run plan moves, and the other
plans after it, finding those vectors already at their targets (`unchanged`, current ==
target). Had both planned from the pre-fix state, the second would have journaled the
placed values as "previous" and a revert would restore the fix instead of undoing it: the
journal must name each IRQ once, with the value the guest read before any fix.

Then flock(1) holds /run/numastor/lock from the shell (writing its pid into the file as
numastor does): `fix --lock-timeout 1` waits at least a second, exits 3 and names the lock
and the holder's pid, and changes nothing. `--revert` then restores every IRQ's exact
previous smp_affinity_list and removes the journal.
"""

import fixlib


def check(ctx):
    before = fixlib.irqs(ctx, "irqs-before.txt")
    both = fixlib.irqs(ctx, "irqs-both.txt")
    plan = fixlib.json_out(ctx, "plan")
    if plan is None:
        return
    moves = {e["irq"]: e for e in fixlib.moves(plan)}
    if not ctx.expect(moves, "test bed: the dry-run plan moves nothing"):
        return

    runs = {}
    for tag in ("a", "b"):
        code = fixlib.rc(ctx, tag)
        ctx.expect(code in (0, 1), f"concurrent fix {tag}: exit {code}, expected 0 or 1; "
                   f"stderr: {(ctx.read(tag + '.err') or '').strip()[:300]}")
        runs[tag] = fixlib.json_out(ctx, tag)
    if None in runs.values():
        return
    movers = [t for t, d in runs.items() if fixlib.moves(d)]
    if not ctx.expect(len(movers) == 1, f"concurrent fixes: {len(movers)} of the two moved vectors "
                      f"({', '.join(movers) or 'none'}); exactly one should, the other planning after it"):
        return
    first, second = movers[0], ("b" if movers[0] == "a" else "a")
    got = {e["irq"]: e for e in fixlib.moves(runs[first])}
    ctx.equal(f"concurrent fix {first}", "moved IRQs", sorted(got), sorted(moves))
    for n, e in sorted(got.items()):
        if n in moves:
            ctx.equal(f"concurrent fix {first}: irq {n}", "target", e["target"], moves[n]["target"],
                      fixlib.same_cpus)
    for e in runs[second]["irqs"]:
        if e["irq"] in moves:
            subject = f"concurrent fix {second} (planned second): irq {e['irq']} ({e['name']})"
            ctx.equal(subject, "action", e["action"], "unchanged")
            ctx.equal(subject, "current", e["current"], moves[e["irq"]]["target"], fixlib.same_cpus)
    for n, e in sorted(moves.items()):
        ctx.equal(f"after both fixes: irq {n} ({e['name']})", "target (kernel)", e["target"],
                  both.get(n, {}).get("affinity"), fixlib.same_cpus)
    expected = {n: (before[n]["affinity"], e["target"]) for n, e in moves.items()}
    fixlib.check_journal(ctx, "after both fixes", fixlib.journal(ctx, "journal-both.json"), expected)

    # The lock held from the shell.
    holder = (ctx.read("holder.pid") or "?").strip()
    err = (ctx.read("locked.err") or "").strip()
    ctx.equal("fix under a held lock", "exit code", fixlib.rc(ctx, "locked"), 3)
    ctx.expect("/run/numastor/lock" in err, f"fix under a held lock: the message does not name the lock: {err!r}")
    ctx.expect(f"pid {holder}" in err,
               f"fix under a held lock: the message does not name the holder (pid {holder}): {err!r}")
    t0, t1 = (float(x) for x in (ctx.read("locked.time") or "0 0").split())
    ctx.expect(t1 - t0 >= 1.0, f"fix under a held lock: gave up after {t1 - t0:.2f} s, before its 1 s timeout")
    locked = fixlib.irqs(ctx, "irqs-locked.txt")
    changed = sorted(n for n in both if n in locked and both[n]["affinity"] != locked[n]["affinity"])
    fixlib.kernel_equal(ctx, "fix under a held lock", "IRQs it changed", changed, [])
    ctx.expect(ctx.read("journal-locked.json") == ctx.read("journal-both.json"),
               "fix under a held lock: the journal changed")

    ctx.equal("revert", "exit code", fixlib.rc(ctx, "revert"), 0)
    rev = fixlib.json_out(ctx, "revert")
    if rev is not None:
        ctx.equal("revert", "failed", rev["failed"], 0)
        ctx.equal("revert", "reverted", len(rev["reverted"]), len(moves))
    reverted = fixlib.irqs(ctx, "irqs-reverted.txt")
    for n, t in sorted(before.items()):
        if n in reverted:
            fixlib.kernel_equal(ctx, f"irq {n} ({t['actions']})", "smp_affinity_list after revert",
                                reverted[n]["affinity"], t["affinity"])
    ctx.expect(ctx.read("journal-reverted.json") is None, "revert: /run/numastor/journal.json still there")
