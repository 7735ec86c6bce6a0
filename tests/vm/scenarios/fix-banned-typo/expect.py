"""fix-banned-typo: IRQBALANCE_BANNED_CPULIST="0-3," (a trailing comma) in /etc/default/irqbalance
on the real kernel. Before issue 11 it parsed as nothing banned and fix placed IRQs on CPUs 0-3.
Ground truth is the guest's snapshot of every IRQ (vm_irqs, /proc/irq/N/smp_affinity_list)
before and after. It holds numastor to: fix --dry-run and fix exit 3, print no plan, and say
"IRQBALANCE_BANNED_CPULIST in /etc/default/irqbalance is '0-3,'"; no IRQ's smp_affinity_list
changed; no journal written. Twin: banned "0" plans moves, none onto CPU 0.
"""
import json

import fixlib


def check(ctx):
    before = fixlib.irqs(ctx, "irqs-before.txt")
    after = fixlib.irqs(ctx, "irqs-after.txt")
    msg = "IRQBALANCE_BANNED_CPULIST in /etc/default/irqbalance is '0-3,', which does not parse as a CPU list"
    for tag in ("dryrun", "refused"):
        ctx.equal(f"fix ({tag}) with the banned list 0-3,", "exit code", fixlib.rc(ctx, tag), 3)
        err = ctx.read(f"{tag}.err") or ""
        ctx.expect(msg in err, f"{tag}: stderr does not name the file and the value: {err.strip()[:300]}")
        # under --json the refusal is one error document (schema/numastor-error.schema.json), never a plan
        out = (ctx.read(f"{tag}.out") or "").strip()
        try:
            doc = json.loads(out) if out else {}
        except ValueError:
            doc = None
        ok = doc == {} or (isinstance(doc, dict) and "irqs" not in doc and
                           (doc.get("error") or {}).get("exit_code") == 3 and msg in doc["error"].get("message", ""))
        ctx.expect(ok, f"{tag}: printed a plan, not an error document: {out[:200]}")
    for n, t in sorted(before.items()):
        if n in after:
            fixlib.kernel_equal(ctx, f"irq {n} ({t['actions']})", "smp_affinity_list after the refused fix",
                                after[n]["affinity"], t["affinity"])
    ctx.expect(ctx.read("journal-refused.json") is None, "the refused fix wrote /run/numastor/journal.json")
    plan = fixlib.json_out(ctx, "twin")
    if plan is None:
        return
    moves = fixlib.moves(plan)
    ctx.expect(len(moves) > 0, "twin (banned 0): the plan moves nothing; the test bed needs moves")
    for e in moves:
        ctx.expect(0 not in fixlib.cpuset(e["target"]),
                   f"twin (banned 0): irq {e['irq']} planned onto {e['target']}, which holds banned CPU 0")
