"""modswap-identity: two SCSI disks with one WWN (qemu-args) are refused, both named.

The virtio-scsi HBA carries two scsi-hd disks given the same WWN; the kernel's sysfs (read by
the guest) shows one wwid for both. After a reload the swap could not tell which disk came
back as which, so the plan (`--dry-run --json`) fails exactly one check, naming both disks and
the identity, and is not safe (exit 1); the megaraid disk, with its own identity, is named by
no failed check (the twin that must not trigger). `fix --modules` then refuses (exit 3, "refused
... nothing was changed", the check's FAIL line naming both) and nothing changes: every module,
disk (by the guest's identity), sysfs directory and journal as before.
"""

import fixlib
import modswaplib as ms


def check(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    dups = (f("dup.disks") or "").split()
    mega = f("mega.disk")
    if not ctx.expect(len(dups) == 2 and mega, f"test bed: virtio-scsi disks {dups}, megaraid disk {mega!r}"):
        return
    a, b = dups
    wwid = f(f"wwid.{a}")
    ctx.expect(wwid and wwid == f(f"wwid.{b}"),
               f"test bed: the kernel gives {a} and {b} different wwids: {wwid!r}, {f(f'wwid.{b}')!r}")
    plan = ms.swap_plan(ctx, "plan", rc=1)
    if plan is not None:
        ctx.equal("plan", "safe", plan["safe"], False)
        failed = ms.failed_checks(plan)
        ctx.equal("plan", "failed checks", len(failed), 1)
        for c in failed:
            text = c["check"] + " " + (c.get("detail") or "")
            for d in dups:
                ctx.expect(d in text, f"plan: the failed check does not name {d}: {text!r}")
            ctx.expect(mega not in c["check"], f"plan: the failed check names the megaraid disk {mega}: {text!r}")
            ctx.expect("5000c500dead0001" in text, f"plan: the failed check does not say the identity: {text!r}")
    ctx.equal("swap", "exit code", fixlib.rc(ctx, "swap"), 3)
    err, out = ctx.read("swap.err") or "", ctx.read("swap.out") or ""
    ctx.expect("refused" in err and "nothing was changed" in err,
               f"swap: stderr does not say refused / nothing was changed: {err.strip()[:300]!r}")
    # a plan line wraps at 80 columns (issue 32): read with its continuation lines joined
    lines = [line for line in ms.unwrapped(out) if line.strip().startswith("check FAIL")]
    ctx.expect(len(lines) == 1 and all(d in lines[0] for d in dups),
               f"swap: the FAIL line does not name both disks: {lines!r}")
    ms.unchanged(ctx, "swap: refused", "before", "swap")
    fixlib.kernel_equal(ctx, "swap", "journal after", f("journal.swap"), "absent")
