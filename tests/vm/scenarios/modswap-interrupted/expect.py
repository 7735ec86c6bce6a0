"""modswap-interrupted: a module swap killed after any of its steps is reverted in full.

The swap holds the nvme group (the pre-fix nvme out, the stock one in, the forced function
removed and the bus rescanned) and the SCSI group (every SCSI module out, the patched
scsi_mod/sd_mod and the stock HBA drivers in). Run K was killed right after the K-th step
that changed the machine (exit 137); the last run was not killed (exit 0). After each run,
`fix --revert` must exit 0 and leave: every module as at boot, in tree (nvme: the stock
file, as the revert loads the stock module; the others unchanged), with the options it ran
with at boot (nvme sgl_threshold 65536, scsi_mod inq_timeout 7, read from
/sys/module/*/parameters), every disk back by identity, the 4 MiB patterns intact, and no
journal. The ground truth is the kernel's files read by the guest's shell.
"""

import fixlib
import modswaplib as ms

MODULES = ("nvme", "scsi_mod", "sd_mod", "megaraid_sas", "virtio_scsi")


def check(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    ids = (f("ids") or "").split()
    runs = int(f("runs") or 0)
    if not ctx.expect(len(ids) == 5 and runs > 0, "test bed: no ids / runs facts"):
        return
    plan = ms.swap_plan(ctx, "plan")
    if plan is not None:
        ctx.equal("plan", "groups", sorted(plan["groups"]), ["nvme", "scsi"])
        ctx.equal("plan", "safe", plan["safe"], True)
        # both root-bus NVMe functions forced: the NVMe and the subsystem's controller
        ctx.equal("plan", "rescan", sorted(plan["rescan"]), ms.nvme_root_bus_pcis(ctx))
        changing = len(plan["steps"]) + len(plan["rescan"]) + (1 if plan["rescan"] else 0)
        # A kill after every step of the first plan. Once a revert has rescanned the forced
        # function, the stock nvme (which has the fix) leaves it unforced, and the next plan
        # has no nvme group: that run completes. So at least changing - 1 runs are killed.
        ctx.expect(runs - 1 >= changing - 1,
                   f"runs: only {runs - 1} runs were killed; the first plan changes the machine {changing} times")
    ctx.equal("boot", "nvme sgl_threshold", f("param.nvme.sgl_threshold.boot"), "65536")
    ctx.equal("boot", "scsi_mod inq_timeout", f("param.scsi_mod.inq_timeout.boot"), "7")
    # a second swap over the journal of the first (killed) one
    ctx.equal("again", "exit code", fixlib.rc(ctx, "again"), 3)
    ctx.expect("not yet reverted" in (ctx.read("again.err") or ""),
               f"again: stderr does not say a swap is journaled: {(ctx.read('again.err') or '')[-300:]!r}")
    ms.unchanged(ctx, "a second swap over a journaled one", "killed1", "again")
    # the journal of a completed swap, said to be from another boot
    ctx.equal("otherboot", "exit code", fixlib.rc(ctx, "otherboot"), 0)
    ctx.expect("earlier boot" in (ctx.read("otherboot.out") or ""),
               f"otherboot: --revert does not say the swap was in an earlier boot: {(ctx.read('otherboot.out') or '')[-300:]!r}")
    ms.unchanged(ctx, "--revert of another boot's journal", f"killed{runs}", "otherboot", ignore=("journal",))
    ms.module_out_of_tree(ctx, "scsi_mod", "otherboot")
    for k in range(1, runs + 1):
        rc = f(f"run.{k}")
        last = k == runs
        ctx.equal(f"run {k}", "exit code of the swap", rc, "0" if last else "137")
        if not last:
            ctx.equal(f"run {k}", "journal after the kill", f(f"journal.killed{k}"), "present")
            done = [line for line in (ctx.read(f"kill{k}.out") or "").splitlines()
                    if line.startswith(("  ok   removed", "  ok   loaded", "  ok   rescanned"))]
            ctx.equal(f"run {k}", "steps done before the kill", len(done), k)
        ctx.equal(f"run {k}", "exit code of --revert", fixlib.rc(ctx, f"revert{k}"), 0)
        err = ctx.read(f"revert{k}.err") or ""
        ctx.expect(not err.strip(), f"run {k}: --revert said on stderr: {err[-400:]!r}")
        step = f"reverted{k}"
        for m in MODULES:
            ms.module_stock(ctx, m, step)
        for m in ("scsi_mod", "sd_mod", "megaraid_sas", "virtio_scsi"):
            fixlib.kernel_equal(ctx, f"{step}: module {m}", "srcversion", f(f"module.{m}.{step}.srcversion"),
                                f(f"module.{m}.boot.srcversion"))
        fixlib.kernel_equal(ctx, step, "nvme sgl_threshold", f(f"param.nvme.sgl_threshold.{step}"), "65536")
        fixlib.kernel_equal(ctx, step, "scsi_mod inq_timeout", f(f"param.scsi_mod.inq_timeout.{step}"), "7")
        ms.disks_back(ctx, step, "boot", step)
        fixlib.kernel_equal(ctx, step, "journal", f(f"journal.{step}"), "absent")
        for ident in ids:
            ms.pattern_intact(ctx, ident, [step])
