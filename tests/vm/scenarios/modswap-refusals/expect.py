"""modswap-refusals: `numastor fix --modules` refuses before touching anything, and
--install works where a swap may not.

The module directory holds the module build's patched scsi_mod.ko and sd_mod.ko with its
manifest.json; each case breaks one thing. Ground truth is the guest's state before and after
each attempt (vm_swap_state: modules, disks by identity, journal; what /proc/mounts and
/proc/swaps hold). It holds numastor to, for each refusal: exit 3, the reason printed (the
disk and why, or the failing check with its detail), exactly the expected checks failing,
and nothing changed (no module, disk, mount, swap or journal differs):

- a disk the swap detaches is mounted (`--dry-run --json` first: exit 1, safe false, that
  disk's refusal "mounted at /mnt/mega", the other disk none) or used as swap;
- sd_mod's sha256 in the manifest is wrong; sd_mod.ko is group-writable (0664); the module
  directory is group-writable (0775); sd_mod.ko is owned by uid 1000; sd_mod.ko has another
  kernel's vermagic (manifest sha256/vermagic from the file); the manifest names another
  kernel release.

`--install` with the disk mounted: this guest has no initramfs-tools (its root is the bed's
busybox initramfs), so `--install` is refused for that alone before anything is written (no
file in updates/numastor, modules.dep at kernel/, no journal, the mount untouched; the image
scenario modswap-install-reboot installs for real); `--revert` then has nothing to undo.
A file on the mounted file system reads back intact throughout.

Last, whether the kernel will load the file (the build's modules are unsigned: modinfo has no
signer): with the guest's sig_enforce N and lockdown none (the guest mounts securityfs only at
the end, and it is not mounted before or after numastor's runs: numastor read it privately)
`--dry-run --json` passes "the kernel will load FILE" for each module, saying "not enforced"
and that loading taints; after `echo Y > sig_enforce` (read back Y) `--dry-run --json` exits 1
with exactly those checks failed naming module.sig_enforce, `fix --modules` is refused (exit
3, nothing changed) for that reason alone, and so is `--install` (nothing installed).
"""

import re

import fixlib
import modswaplib as ms

# the --install check this guest fails (no initramfs-tools): its name as failed_lines keys it
INITRAMFS = "--install: the initramfs is initramfs-tools'"

failed_lines, refused = ms.failed_lines, ms.refused


def check(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    mega, vscsi, krel = f("mega.disk"), f("vscsi.disk"), f("krel")
    if not ctx.expect(mega and vscsi and krel, "test bed: no mega.disk / vscsi.disk / krel fact"):
        return
    moddir = f"/var/lib/numastor/modules/{krel}"

    # Mounted.
    plan = ms.swap_plan(ctx, "mounted-plan", rc=1)
    if plan is not None:
        ctx.equal("mounted-plan", "safe", plan["safe"], False)
        ctx.equal("mounted-plan", "failed checks", ms.failed_checks(plan), [])
        refusals = {d["device"]: d["refusal"] for d in plan["detaches"]}
        ctx.equal("mounted-plan", "refusals", refusals, {mega: "mounted at /mnt/mega", vscsi: None})
    ctx.expect(f"/dev/{mega} /mnt/mega" in (f("in_use.mounted") or ""), f"test bed: {mega} not mounted")
    refused(ctx, "mounted", disk=mega, why="mounted at /mnt/mega")

    # --install with the disk mounted: this guest's root is the bed's busybox initramfs, with no
    # initramfs-tools and no /boot/initrd.img-<release> (the image scenario modswap-install-reboot
    # installs for real): refused for that alone, before anything is written; --revert after it
    # has nothing to undo.
    refused(ctx, "install", checks=[(INITRAMFS, r"initramfs-tools is not installed")])
    for m in ("scsi_mod", "sd_mod"):
        fixlib.kernel_equal(ctx, f"--install: updates/numastor/{m}.ko", "sha256", f(f"installed.{m}.sha256"),
                            "missing")
        fixlib.kernel_equal(ctx, "--install: modules.dep", f"{m}", (f(f"modules_dep.{m}.after_install") or "").strip(),
                            f"kernel/drivers/scsi/{m}.ko:")
    ctx.equal("install-revert", "exit code", fixlib.rc(ctx, "install-revert"), 0)
    fixlib.kernel_equal(ctx, "--revert after the refused --install", "files in updates/numastor",
                        (f("installed.after_revert") or "").strip(), "")
    fixlib.kernel_equal(ctx, "--revert after the refused --install", "journal", f("journal.install-revert"), "absent")
    ms.unchanged(ctx, "--revert after the refused --install (live state)", "install-revert-before", "install-revert",
                 ignore=("journal",))
    fixlib.kernel_equal(ctx, "file on the mounted disk", "sha256", f("file.mounted"), f("file.written"))

    # Swap.
    ctx.expect(f"/dev/{vscsi}" in (f("in_use.swap") or ""), f"test bed: {vscsi} not used as swap")
    refused(ctx, "swap", disk=vscsi, why=re.escape(f"used as swap (/dev/{vscsi})"))

    # The checks.
    ck = "sd_mod: "
    refused(ctx, "sha256", checks=[(ck + "sha256 matches the manifest", r"has sha256 [0-9a-f]{64}, the manifest says 0{64}")])
    refused(ctx, "group-writable", checks=[(ck + "file and directories are root-owned and not group/world-writable",
                                            re.escape(f"{moddir}/sd_mod.ko is writable by group or others (mode 0664)"))])
    refused(ctx, "dir-writable", checks=[
        (m + ": file and directories are root-owned and not group/world-writable",
         re.escape(f"{moddir} is writable by group or others (mode 0775)")) for m in ("scsi_mod", "sd_mod")])
    refused(ctx, "not-root", checks=[(ck + "file and directories are root-owned and not group/world-writable",
                                      re.escape(f"{moddir}/sd_mod.ko is owned by uid 1000, not root"))])
    vermagic = (f("fault.vermagic") or "").strip()
    ctx.expect(vermagic and not vermagic.startswith(krel + " "), f"test bed: fault vermagic {vermagic!r}")
    refused(ctx, "vermagic", checks=[(ck + "vermagic matches the running kernel", re.escape(vermagic.split()[0]))])
    refused(ctx, "release", checks=[("the modules were built for the running kernel",
                                     re.escape(f"is for 6.1.0-99-amd64, this kernel is {krel}"))])

    # Will the kernel load the file: the twin, then module.sig_enforce=Y.
    moddir = f("sig.moddir")
    load = {m: f"{m}: the kernel will load {moddir}/{m}.ko" for m in ("scsi_mod", "sd_mod")}
    for m in load:
        ctx.expect(not (f(f"sig.{m}.signer") or "").strip(), f"test bed: the build's {m}.ko is signed")
    fixlib.kernel_equal(ctx, "sig_enforce", "before", f("sig.enforce.before"), "N")
    fixlib.kernel_equal(ctx, "lockdown", "guest's reading", f("sig.lockdown"), "[none] integrity confidentiality")
    for when in ("before", "after"):
        fixlib.kernel_equal(ctx, "securityfs", f"mounted {when} numastor's runs", f(f"sig.securityfs.{when}"), "0")
    plan = ms.swap_plan(ctx, "sig-twin", rc=0)
    if plan is not None:
        got = {c["check"]: c for c in plan["checks"]}
        for m, name in load.items():
            c = got.get(name)
            if ctx.expect(c is not None, f"sig-twin: no check {name!r}: {sorted(got)}"):
                ctx.equal("sig-twin", name, c["ok"], True)
                ctx.expect("not enforced (module.sig_enforce N, lockdown none): unsigned, loading taints the kernel (E)"
                           == (c["detail"] or ""), f"sig-twin: {name}: detail {c['detail']!r}")
    fixlib.kernel_equal(ctx, "sig_enforce", "after echo Y", f("sig.enforce.after"), "Y")
    why = re.escape("the kernel only loads modules signed by a key it trusts (module.sig_enforce) and ")
    plan = ms.swap_plan(ctx, "sig-enforce-plan", rc=1)
    if plan is not None:
        ctx.equal("sig-enforce-plan", "safe", plan["safe"], False)
        failed = {c["check"]: c["detail"] for c in ms.failed_checks(plan)}
        ctx.equal("sig-enforce-plan", "failed checks", sorted(failed), sorted(load.values()))
        for name, detail in failed.items():
            ctx.expect(re.search(why + r"\S+ is unsigned", detail or ""), f"sig-enforce-plan: {name}: {detail!r}")
    refused(ctx, "sig-enforce", checks=[(name, why + re.escape(f"{moddir}/{m}.ko is unsigned"))
                                        for m, name in load.items()])
    refused(ctx, "sig-install", checks=[(name, why + re.escape(f"{moddir}/{m}.ko is unsigned"))
                                        for m, name in load.items()]
            + [(INITRAMFS, r"initramfs-tools is not installed")])
    fixlib.kernel_equal(ctx, "--install under sig_enforce", "files installed", (f("sig.installed") or "").strip(), "")
