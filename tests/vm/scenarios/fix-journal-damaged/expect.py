"""fix-journal-damaged: a structurally wrong journal ("irqs" a string) and one whose previous
values are "zz,," are refused on the real kernel with exit 3 by fix --revert and by fix, and
kept byte for byte (before issue 11, --revert said "0 restored" and deleted the first, and
wrote "zz,," to the kernel and reported it restored). Ground truth is every IRQ's
smp_affinity_list from /proc/irq (vm_irqs) after the fix placed them, after each refusal,
and after the good journal's revert (back to the value before the fix).
"""

import fixlib


def check(ctx):
    before = fixlib.irqs(ctx, "irqs-before.txt")
    placed = fixlib.irqs(ctx, "irqs-placed.txt")
    ctx.equal("fix", "exit code", fixlib.rc(ctx, "fix"), 0)
    good = ctx.read("journal-fix.json")
    if not ctx.expect(good is not None, "fix wrote no journal: nothing to damage"):
        return
    for tag, journal, kept, snap in (("revert", "journal-damaged.json", "journal-after.json", "irqs-after.txt"),
                                     ("fix2", "journal-damaged.json", "journal-after.json", "irqs-after.txt"),
                                     ("revert-zz", "journal-zz.json", "journal-after-zz.json", "irqs-after-zz.txt")):
        ctx.equal(f"{tag} with a damaged journal", "exit code", fixlib.rc(ctx, tag), 3)
        err = ctx.read(f"{tag}.err") or ""
        ctx.expect("/run/numastor/journal.json is malformed (" in err and "kept as it is" in err,
                   f"{tag}: stderr does not say the journal is malformed and kept: {err.strip()[:300]}")
        damaged, after = ctx.read(journal), ctx.read(kept)
        ctx.expect(damaged is not None and damaged == after,
                   f"{tag}: the damaged journal was not kept byte for byte ({kept} "
                   f"{'missing' if after is None else 'differs'})")
        now = fixlib.irqs(ctx, snap)
        for n, t in sorted(placed.items()):
            if n in now:
                fixlib.kernel_equal(ctx, f"{tag}: irq {n} ({t['actions']})", "smp_affinity_list",
                                    now[n]["affinity"], t["affinity"])
    ctx.expect("zz,," not in (ctx.read("revert-zz.out") or ""), "revert-zz reported zz,, restored")
    ctx.equal("revert of the good journal", "exit code", fixlib.rc(ctx, "revert-good"), 0)
    reverted = fixlib.irqs(ctx, "irqs-reverted.txt")
    for n, t in sorted(before.items()):
        if n in reverted:
            fixlib.kernel_equal(ctx, f"irq {n} ({t['actions']})", "smp_affinity_list after the good revert",
                                reverted[n]["affinity"], t["affinity"])
