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

Then signals: with the pre-fix nvme reloaded whenever a rollback rescanned a root-bus function
(forcing it again, so each run has the first plan), run S raises SIGINT, SIGTERM, SIGHUP, SIGQUIT in turn
right after its S-th step. Each must stop at the next step boundary and roll back by itself
(exit 1, `interrupted_by` the signal, "interrupted by SIGxxx: rolled back" on stderr, exactly S
steps done before it stopped) and leave the machine as the reverts above do: every module
in tree with its boot options, every disk back by identity, the patterns intact, no journal.
The last run (S beyond the plan's steps) completes: the patched scsi_mod and sd_mod live, the
journal present; its revert exits 0. A signal lands after every step of the plan, and each of
the four signals lands at least once.

Last, `fix --modules | head -c1`: its stdout closed after one byte, the swap must complete
(exit 0; the patched modules live, every disk back, the patterns intact, the journal present,
stderr saying the output was lost), not die of SIGPIPE between a removal and an insert; its
revert restores the boot's machine.

And a claim after the module swap: paused before the first PCI function removal, the root-bus
NVMe's namespace opened by a process meanwhile: the recheck must name it and not remove its
function (exit 1, the event "... is in use now: ...: not removing PCI function F"), the
function still present (numa_node as before, forced), the reader's disk never detached (its
sysfs directory the one the reader opened); the rollback, whose removals detach only SCSI
disks, is not stopped by the NVMe reader (stderr: rolled back; no journal; every module in
tree).
"""

import fixlib
import modswaplib as ms

MODULES = ("nvme", "scsi_mod", "sd_mod", "megaraid_sas", "virtio_scsi")



def as_at_boot(ctx, step, ids):
    """The machine as at boot after STEP, by the guest's own reading: every module stock with
    its boot srcversion and options, every disk back by identity, no journal, patterns intact."""
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
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
    ctx.expect("earlier boot" in "\n".join(ms.unwrapped(ctx.read("otherboot.out"))),
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
        as_at_boot(ctx, step, ids)

    # signals after each step: rolled back by numastor itself, never half
    sigruns = int(f("sigruns") or 0)
    nvme_forced = ms.nvme_root_bus_pcis(ctx)
    for s in range(1, sigruns + 1):
        for p in nvme_forced:
            ctx.equal("test bed", f"{p} forced before signal run {s}", f(f"pci.{p}.presig{s}.numa_node"), "0")
    if plan is not None:
        ctx.expect(sigruns - 1 >= changing,
                   f"signals: only {sigruns - 1} runs were signalled; the plan changes the machine {changing} times")
    landed = set()
    for s in range(1, sigruns + 1):
        last = s == sigruns
        tag, step, sig = f"signal{s}", f"signalled{s}", "SIG" + (f(f"sig.{s}") or "?")
        doc = ms.swap_plan(ctx, tag, rc=0 if last else 1)
        res = (doc or {}).get("_result") or {}
        events = res.get("events") or []
        if last:
            ctx.equal(tag, "interrupted_by", res.get("interrupted_by"), None)
            ctx.equal(tag, "swapped", res.get("swapped"), True)
            fixlib.kernel_equal(ctx, step, "journal", f(f"journal.{step}"), "present")
            for m in ("scsi_mod", "sd_mod"):
                ms.module_out_of_tree(ctx, m, step)
            ms.disks_back(ctx, step, "boot", step)
            ctx.equal(f"sigrevert{s}", "exit code", fixlib.rc(ctx, f"sigrevert{s}"), 0)
            fixlib.kernel_equal(ctx, f"sigreverted{s}", "journal", f(f"journal.sigreverted{s}"), "absent")
            continue
        landed.add(sig)
        ctx.equal(tag, "interrupted_by", res.get("interrupted_by"), sig)
        ctx.equal(tag, "rolled_back", res.get("rolled_back"), True)
        err = ctx.read(f"{tag}.err") or ""
        ctx.expect(f"interrupted by {sig}: rolled back" in err,
                   f"{tag}: stderr does not say interrupted by {sig}: rolled back: {err[-400:]!r}")
        done = 0
        for e in events:
            if e["step"].startswith("asked to stop"):
                break
            done += e["ok"] and e["step"].startswith(("removed", "loaded", "rescanned"))
        ctx.equal(tag, "steps done before it stopped", done, s)
        as_at_boot(ctx, step, ids)
    ctx.equal("signals", "the signals that landed", sorted(landed), ["SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM"])

    # stdout closed under the swap
    ctx.equal("pipe", "exit code", (ctx.read("pipe.rc") or "").strip(), "0")
    ctx.equal("pipe", "bytes the reader took", len(ctx.read("pipe.out") or ""), 1)
    perr = ctx.read("pipe.err") or ""
    ctx.expect("standard output was closed" in perr and "completed" in perr,
               f"pipe: stderr does not say the output was lost and the swap completed: {perr[-400:]!r}")
    fixlib.kernel_equal(ctx, "piped", "journal", f("journal.piped"), "present")
    for m in ("scsi_mod", "sd_mod"):
        ms.module_out_of_tree(ctx, m, "piped")
    for m in ("megaraid_sas", "virtio_scsi", "nvme"):
        ms.module_stock(ctx, m, "piped")
    for p in nvme_forced:
        fixlib.kernel_equal(ctx, "piped", f"{p} numa_node (no longer forced)", f(f"pci.{p}.piped.numa_node"), "-1")
    ms.disks_back(ctx, "piped", "boot", "piped")
    ctx.equal("piperevert", "exit code", fixlib.rc(ctx, "piperevert"), 0)
    for m in MODULES:
        ms.module_stock(ctx, m, "pipereverted")
    ms.disks_back(ctx, "pipereverted", "boot", "pipereverted")
    fixlib.kernel_equal(ctx, "pipereverted", "journal", f("journal.pipereverted"), "absent")
    for ident in ids:
        ms.pattern_intact(ctx, ident, ["piped", "pipereverted"])

    # a claim between the module swap and the PCI removal
    doc = ms.swap_plan(ctx, "pci", rc=1)
    res = (doc or {}).get("_result") or {}
    disk = f("pci.reader.disk")
    ctx.expect(disk and f("pci.reader") == "open", f"test bed: the reader did not open the NVMe namespace ({disk!r})")
    events = [(e["step"], e["ok"]) for e in res.get("events") or []]
    refusal = [t for t, ok in events if not ok and "is in use now" in t and "not removing PCI function" in t]
    ctx.expect(len(refusal) == 1 and disk and refusal[0].startswith(disk + " "),
               f"pci: no recheck naming {disk} before the PCI removal: {events[-10:]!r}")
    ctx.expect(not any(t.startswith("removed PCI function") for t, _ in events),
               f"pci: a PCI function was removed with its disk open: {events!r}")
    ctx.equal("pci", "rolled_back", res.get("rolled_back"), True)
    perr = ctx.read("pci.err") or ""
    ctx.expect("rolled back to the stock modules" in perr, f"pci: stderr does not say rolled back: {perr[-300:]!r}")
    for p in nvme_forced:
        fixlib.kernel_equal(ctx, "pci", f"{p} numa_node (never removed)", f(f"pci.{p}.pci.numa_node"),
                            f(f"pci.{p}.prepci.numa_node"))
    fixlib.kernel_equal(ctx, "pci", "the reader's disk's sysfs inode (never detached)", f("pci.reader.ino.after"),
                        f("pci.reader.ino.open"))
    ctx.expect((f("pci.reader.after") or "").endswith("/" + (disk or "?")),
               f"pci: the reader no longer holds /dev/{disk}: {f('pci.reader.after')!r}")
    fixlib.kernel_equal(ctx, "pci", "journal", f("journal.pci"), "absent")
    for m in MODULES:
        ms.module_stock(ctx, m, "pci")
