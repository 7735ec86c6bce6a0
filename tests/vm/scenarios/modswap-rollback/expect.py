"""modswap-rollback: a module swap that fails leaves the machine exactly as it was.

(1) The patched sd_mod in the module directory has one imported symbol's CRC inverted, so the
kernel refuses it ("disagrees about version of symbol", checked in dmesg) after the stock
modules were removed and the patched scsi_mod loaded; its manifest entry carries the file's
sha256, so every check passes. (This stands in for "a patched module that fails to
initialise": the kernel refuses it at load, before its init runs; numastor sees the same
error from the insert.) (2) The megasas disk is held open by a process (not mounted, not
swap, no holder): its modules cannot be removed.

For each, numastor must end with the machine as before: the stock modules (in tree) with the
same holders, every disk back under the same name, identity and sysfs path... For (1):
exit 1, stderr says it rolled back, the journal is gone, the patterns read back intact.
(3) is (1) with the way back unable to load the stock sd_mod (a test switch, EIO) and
--timeout 3: the rollback must not stop there but load every module after it (each that it
tried after the failure is live and in tree), end with a FAIL naming sd_mod as not loaded
again, say on stderr that it did not restore everything, keep the journal, and wait 3 s (the
result's timeout_s), not the default; `fix --revert` then exits 0 and restores the machine of
before (every module in tree, every disk by identity, though the names may swap, the patterns,
no journal).
For (2) the in-use disk should be refused before anything is touched (exit 3, nothing
changed: no disk re-probed).
"""

import fixlib
import modswaplib as ms


def check(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    mega, vscsi = f("mega.id"), f("vscsi.id")
    if not ctx.expect(mega and vscsi, "test bed: no mega.id / vscsi.id fact"):
        return

    # (1) the kernel refuses the patched sd_mod.
    ctx.equal("badcrc", "exit code", fixlib.rc(ctx, "badcrc"), 1)
    err = ctx.read("badcrc.err") or ""
    ctx.expect("rolled back to the stock modules" in err, f"badcrc: stderr does not say rolled back: {err[-300:]!r}")
    out = ctx.read("badcrc.out") or ""
    ctx.expect("FAIL loaded patched sd_mod" in out, f"badcrc: no failed load of the patched sd_mod: {out[-600:]!r}")
    ctx.expect(int(f("badcrc.dmesg") or 0) >= 1,
               f"test bed: the kernel did not say sd_mod disagrees about the version of {f('badcrc.symbol')}")
    for m in ("scsi_mod", "sd_mod", "megaraid_sas", "virtio_scsi"):
        ms.module_stock(ctx, m, "badcrc")
    # the disks were re-probed (they had to be): everything but their sysfs paths as before
    ms.unchanged(ctx, "after the rolled-back swap", "badcrc-before", "badcrc", reprobed=True)
    ctx.expect(ctx.read("journal-badcrc.json") is None, "badcrc: the journal is still there after the rollback")
    ms.pattern_intact(ctx, mega, ["badcrc"])
    ms.pattern_intact(ctx, vscsi, ["badcrc"])

    # (2) a disk held open.
    ctx.equal("open (a disk held open by a process)", "exit code", fixlib.rc(ctx, "open"), 3)
    ms.unchanged(ctx, "open (a disk held open by a process)", "open-before", "open")
    ctx.expect(ctx.read("journal-open.json") is None, "open: a journal is left")
    ms.pattern_intact(ctx, mega, ["open"])
    ms.pattern_intact(ctx, vscsi, ["open"])

    # (3) the way back cannot load the stock sd_mod: it goes on with the others
    plan = ms.swap_plan(ctx, "badback", rc=1)
    res = (plan or {}).get("_result") or {}
    ctx.equal("badback", "timeout_s", res.get("timeout_s"), 3)
    ctx.equal("badback", "rolled_back", res.get("rolled_back"), True)
    events = [(e["step"], e["ok"]) for e in res.get("events") or []]
    back = next((i for i, (t, _) in enumerate(events) if t.startswith("rolling back")), None)
    failed = next((i for i, (t, ok) in enumerate(events) if back is not None and i > back and not ok
                   and t.startswith("loaded stock sd_mod")), None)
    ctx.expect(failed is not None, f"badback: no failed load of the stock sd_mod on the way back: {events[-12:]!r}")
    if failed is not None:
        after = [t.split()[2] for t, ok in events[failed + 1:] if ok and t.startswith("loaded stock ")]
        ctx.expect(after, f"badback: the way back loaded nothing after sd_mod failed: {events[failed:]!r}")
        for m in after:
            ms.module_stock(ctx, m, "badback")
    ctx.expect(any(not ok and t == "1 module could not be loaded again: sd_mod" for t, ok in events),
               f"badback: no last FAIL naming sd_mod: {events[-6:]!r}")
    fixlib.kernel_equal(ctx, "badback", "sd_mod", f("module.sd_mod.badback.state"), "absent")
    err = ctx.read("badback.err") or ""
    ctx.expect("did not restore everything" in err, f"badback: stderr does not say so: {err[-300:]!r}")
    ctx.expect(ctx.read("journal-badback.json") is not None, "badback: the journal is gone though the rollback failed")
    ctx.equal("badback-revert", "exit code", fixlib.rc(ctx, "badback-revert"), 0)
    for m in ("scsi_mod", "sd_mod", "megaraid_sas", "virtio_scsi"):
        ms.module_stock(ctx, m, "badback-reverted")
    # every disk back by identity (the names may swap: the HBAs scanned before sd_mod came back)
    ms.disks_back(ctx, "the revert after the failed rollback", "badback-before", "badback-reverted")
    fixlib.kernel_equal(ctx, "badback-reverted", "journal", f("journal.badback-reverted"), "absent")
    ms.pattern_intact(ctx, mega, ["badback-reverted"])
    ms.pattern_intact(ctx, vscsi, ["badback-reverted"])
