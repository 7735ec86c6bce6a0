"""modswap-install-reboot: `fix --modules --install` survives the boot it is for, and
`fix --revert` the one after.

Three boots of one Debian 12 disk image (tests/vm/run-image.sh: Debian's own kernel package,
initramfs-tools, kmod; the root on a virtio-blk disk of its own), each from the initramfs the
host copied out of the image's /boot just before it (host.initrd.bootN.sha256). Ground truth
is the kernel's and the tools' own: /sys/module/NAME/taint (O = out of tree) at the first
instant of the root's init, i.e. as the initramfs loaded them; /proc/sys/kernel/tainted;
`lsinitramfs` of /boot's initramfs after each step and the host's cpio listing of the one it
boots (the same file: sha256); `modinfo -n` / `modinfo -F numastor` (where the root's
modprobe finds a module, and whether that file is numastor's); a reload of sd_mod from the root.

- boot 1: scsi_mod and sd_mod stock (no O), the initramfs carries the in-tree files only.
  Three --install runs leave the boot as it was by the guest's reading (modinfo -n and
  modules.dep at kernel/, no file under updates/numastor, no numastor file in /boot, /boot's
  initramfs the one booted, no journal): with a failing initramfs hook (non-zero exit), with an
  updates/dkms copy of sd_mod (refused, exit 3, the copy named), with a depmod.d override that
  keeps kernel/'s sd_mod (libkmod's lookup after depmod fails it, undone).
  `fix --modules --install` (exit 0) leaves the live modules as they were, puts the manifest's
  files in updates/numastor/ (modinfo resolves both there), rewrites the initramfs (another
  sha256, lsinitramfs lists both under updates/numastor/) and leaves its journal somewhere that
  outlives the boot (under /var/lib/numastor, nothing in /run/numastor).
- boot 2: the host booted exactly that initramfs; scsi_mod and sd_mod were loaded from it
  patched (taint O, kernel taint has O), the HBA drivers stock; sd_mod reloaded from the root
  is patched too; every disk is back by identity with its pattern; `check --json` agrees with
  ground truth field by field and says the patched midlayer is loaded (scsi-numa-local-alloc
  in_kernel false, the megasas disk's midlayer_basis names the numastor-patched scsi_mod).
  `fix --revert` (exit 0): the files gone, modinfo back at kernel/, the initramfs rewritten
  without them, no state file left.
- boot 3: the host booted that initramfs; scsi_mod and sd_mod stock (no O, the boot-1
  srcversion, the kernel untainted by O), sd_mod from the root stock, disks and pattern back,
  and the usual `check --json` comparison (compare.py) on this boot.
"""

import compare
import fixlib
import modswaplib as ms

SERIES = "scsi-numa-local-alloc"
SWAPPED = ("scsi_mod", "sd_mod")
STOCK = {m: f"kernel/drivers/scsi/{m}.ko" for m in SWAPPED}
INSTALLED = {m: f"updates/numastor/{m}.ko" for m in SWAPPED}
TAINT_OOT = 4096  # TAINT_OOT_MODULE, "O"


def words(value):
    return (value or "").split()


def initrd_modules(ctx, step):
    """The numastor files in an initramfs, as paths from updates/ on: what the guest's
    lsinitramfs listed after a step, or for a boot what the host's cpio listed of the one booted."""
    key = f"host.initrd.{step}.numastor" if step.startswith("boot") else f"initrd.{step}.numastor"
    return sorted(p[p.index("updates/"):] for p in words(ms.fact(ctx, key)))


def booted(ctx, boot, written_step):
    """The host booted, and the guest found at /boot, what update-initramfs last wrote."""
    host = ms.fact(ctx, f"host.initrd.{boot}.sha256")
    fixlib.kernel_equal(ctx, boot, "sha256 of /boot's initramfs (guest) vs the one booted (host)",
                        ms.fact(ctx, f"initrd.{boot}.sha256"), host)
    if written_step:
        fixlib.kernel_equal(ctx, boot, f"initramfs booted vs the one /boot held after {written_step}",
                            host, ms.fact(ctx, f"initrd.{written_step}.sha256"))


def resolves(ctx, step, files, marker):
    for m in SWAPPED:
        fixlib.kernel_equal(ctx, f"{step}: modinfo -n {m}", "file", ms.fact(ctx, f"resolve.{m}.{step}"), files[m])
        fixlib.kernel_equal(ctx, f"{step}: modinfo -F numastor {m}", "marker",
                            ms.fact(ctx, f"resolve.{m}.{step}.marker"), marker)


def kernel_taint(ctx, step, oot):
    t = ms.fact(ctx, f"tainted.{step}")
    if not ctx.expect(t is not None and t.strip().isdigit(), f"test bed: no kernel taint for {step}"):
        return
    fixlib.kernel_equal(ctx, step, "kernel taint O (an out-of-tree module was loaded)",
                        bool(int(t) & TAINT_OOT), oot)


def no_state(ctx, step):
    fixlib.kernel_equal(ctx, step, "numastor state files (/var/lib/numastor, /run/numastor)",
                        ms.fact(ctx, f"state_files.{step}"), "")


def boot_as_it_was(ctx, step, what, extra=()):
    """By the guest's own reading after a failed or refused --install: modinfo and modules.dep
    at kernel/ (but for a copy the test put under updates/ itself: extra), no file under
    updates/ but extra, /boot's initramfs the one booted, no journal."""
    if not extra:
        resolves(ctx, step, STOCK, "")
        for m in SWAPPED:
            fixlib.kernel_equal(ctx, f"{what}: modules.dep entry of {m}", "paths",
                                words(ms.fact(ctx, f"modules_dep.{m}.{step}")), [f"{STOCK[m]}:"])
    fixlib.kernel_equal(ctx, what, "files under updates/ (find)",
                        sorted(p[p.index("updates/"):] for p in words(ms.fact(ctx, f"installed.{step}"))),
                        sorted(extra))
    fixlib.kernel_equal(ctx, what, "sha256 of /boot's initramfs vs the one booted",
                        ms.fact(ctx, f"initrd.{step}.sha256"), ms.fact(ctx, "initrd.boot1.sha256"))
    no_state(ctx, step)


def check_round(ctx, sub, tag):
    """compare.py's field-by-field comparison of one boot's check --json with its ground truth."""
    c = compare.Context(ctx.path(sub), strict=ctx.strict)
    doc = fixlib.check_json(ctx, f"{sub}/{tag}")
    if doc is None or not c.truth.present:
        ctx.fail(f"{sub}: no check --json or ground truth to compare")
        return None
    c.doc, c.rc = doc, fixlib.rc(ctx, f"{sub}/{tag}")
    compare.compare_all(c)
    for f in c.failures:
        ctx.fail(f"{sub}: {f}")
    return doc


def check(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    mega = f("mega.id")
    if not ctx.expect(mega, "test bed: no mega.id fact"):
        return
    for boot in ("boot1", "boot2", "boot3"):
        rc = (ctx.read(f"{boot}/scenario.rc") or "missing").strip()
        ctx.expect(rc == "0", f"{boot}: the guest scenario script failed (exit {rc})")
    for m in SWAPPED:
        fixlib.kernel_equal(ctx, "test bed", f"marker of the build's {m}.ko", f(f"patched.{m}.marker"), SERIES)

    # Boot 1: stock, then --install.
    booted(ctx, "boot1", None)
    fixlib.kernel_equal(ctx, "boot1", "numastor files in the initramfs", initrd_modules(ctx, "boot1"), [])
    for m in SWAPPED:
        ctx.expect(any(p.endswith(STOCK[m]) for p in words(f("host.initrd.boot1.scsi"))),
                   f"test bed: boot 1's initramfs carries no {STOCK[m]} (cpio: {f('host.initrd.boot1.scsi')})")
        ms.module_stock(ctx, m, "boot1-initramfs")
    kernel_taint(ctx, "boot1-initramfs", False)
    resolves(ctx, "boot1", STOCK, "")
    no_state(ctx, "boot1")

    # Boot 1, before the good --install: three that must leave the boot as it was.
    boot_as_it_was(ctx, "hookfail", "--install with a failing initramfs hook")
    ctx.expect((fixlib.rc(ctx, "hookfail") or 0) != 0,
               f"--install with a failing initramfs hook: exit {fixlib.rc(ctx, 'hookfail')}, not a failure")
    said = "\n".join(ms.unwrapped(ctx.read("hookfail.out")))  # fix wraps at 80 columns
    ctx.expect("mkinitramfs exited with status" in said and "00-fail" in said,
               f"--install with a failing initramfs hook: not mkinitramfs failing on the hook: {said[-600:]!r}")
    ctx.expect(".ko" not in (f("numastor_dir.hookfail") or ""),
               f"--install with a failing initramfs hook: files left in updates/numastor: "
               f"{f('numastor_dir.hookfail')}")
    fixlib.kernel_equal(ctx, "hookfail", "numastor's files left in /boot", f("initrd_new.hookfail"), "")
    dkms = f("dkms.file") or "updates/dkms/sd_mod.ko"
    boot_as_it_was(ctx, "dkms", "--install beside updates/dkms/sd_mod.ko", extra=[dkms])
    fixlib.kernel_equal(ctx, "dkms", "exit code (refused: a check failed)", fixlib.rc(ctx, "dkms"), 3)
    said = "\n".join(ms.unwrapped(ctx.read("dkms.out"))) + (ctx.read("dkms.err") or "")
    ctx.expect(dkms in said, f"--install beside {dkms}: the refusal does not name it: {said[-600:]!r}")
    boot_as_it_was(ctx, "override", "--install with a depmod.d override of sd_mod")
    ctx.expect((fixlib.rc(ctx, "override") or 0) != 0,
               f"--install with a depmod.d override: exit {fixlib.rc(ctx, 'override')}, not a failure")
    said = "\n".join(ms.unwrapped(ctx.read("override.out")))
    ctx.expect("modprobe sd_mod resolves to" in said,
               f"--install with a depmod.d override: libkmod's lookup is not what failed: {said[-600:]!r}")
    resolves(ctx, "clean", STOCK, "")

    ms.swap_text(ctx, "install")
    ms.unchanged(ctx, "--install (live modules and disks)", "boot1-reloaded", "install",
                 ignore=("journal",))
    resolves(ctx, "install", INSTALLED, SERIES)
    for m in SWAPPED:
        fixlib.kernel_equal(ctx, f"--install: installed {m}.ko", "sha256",
                            f(f"installed.{m}.install.sha256"), f(f"manifest.{m}.sha256"))
    ctx.expect(f("initrd.install.sha256") != f("initrd.boot1.sha256"),
               "--install: /boot's initramfs was not rewritten (same sha256 as at boot; "
               "update-initramfs -u -k KVER did not run)")
    fixlib.kernel_equal(ctx, "--install", "numastor files in /boot's initramfs (lsinitramfs)",
                        initrd_modules(ctx, "install"), sorted(INSTALLED.values()))
    state = words(f("state_files.install"))
    ctx.expect(any(p.startswith("/var/lib/numastor/") for p in state),
               f"--install: no journal under /var/lib/numastor (state files: {state})")
    ctx.expect(not any(p.startswith("/run/") for p in state),
               f"--install: state in /run, which the reboot empties: {state}")

    # Boot 2: patched from the initramfs and from the root; check; --revert.
    booted(ctx, "boot2", "install")
    fixlib.kernel_equal(ctx, "boot2", "numastor files in the booted initramfs (cpio on the host)",
                        initrd_modules(ctx, "boot2"), sorted(INSTALLED.values()))
    for m in SWAPPED:
        ms.module_out_of_tree(ctx, m, "boot2-initramfs")
    for m in ("megaraid_sas", "virtio_scsi", "nvme"):
        ms.module_stock(ctx, m, "boot2-initramfs")
    kernel_taint(ctx, "boot2-initramfs", True)
    resolves(ctx, "boot2", INSTALLED, SERIES)
    ms.module_out_of_tree(ctx, "sd_mod", "boot2-reloaded")
    ctx.expect(f("state_files.boot2"), "boot2: numastor's journal of the install did not survive the reboot")
    ms.disks_back(ctx, "boot2", "boot1", "boot2")
    ms.pattern_intact(ctx, mega, ["boot2"])
    doc = check_round(ctx, "boot2", "check")
    if doc is not None:
        fixlib.kernel_equal(ctx, f"boot2: check: kernel_fixes {SERIES}", "in_kernel",
                            ms.kernel_fix(doc, SERIES).get("in_kernel"), False)
        dev = ms.device_by_disk(ctx, doc, f(f"disk.{mega}.boot2"))
        basis = ((dev or {}).get("allocations") or {}).get("midlayer_basis") or ""
        ctx.expect("numastor-patched" in basis,
                   f"boot2: check: megasas disk: allocations.midlayer_basis {basis!r} does not name the "
                   "numastor-patched scsi_mod, which the kernel loaded (taint O)")

    ms.swap_text(ctx, "revert")
    resolves(ctx, "revert", STOCK, "")
    fixlib.kernel_equal(ctx, "--revert", "files under updates/", f("installed.revert"), "")
    ctx.expect(f("initrd.revert.sha256") != f("initrd.boot2.sha256"),
               "--revert: /boot's initramfs was not rewritten (update-initramfs -u -k KVER did not run)")
    fixlib.kernel_equal(ctx, "--revert", "numastor files in /boot's initramfs (lsinitramfs)",
                        initrd_modules(ctx, "revert"), [])
    no_state(ctx, "revert")

    # Boot 3: stock again.
    booted(ctx, "boot3", "revert")
    fixlib.kernel_equal(ctx, "boot3", "numastor files in the booted initramfs (cpio on the host)",
                        initrd_modules(ctx, "boot3"), [])
    for m in SWAPPED:
        ms.module_stock(ctx, m, "boot3-initramfs", srcversion=f(f"module.{m}.boot1-initramfs.srcversion"))
    kernel_taint(ctx, "boot3-initramfs", False)
    resolves(ctx, "boot3", STOCK, "")
    ms.module_stock(ctx, "sd_mod", "boot3-reloaded")
    no_state(ctx, "boot3")
    ms.disks_back(ctx, "boot3", "boot1", "boot3")
    ms.pattern_intact(ctx, mega, ["boot3"])
    kf = ms.kernel_fix(ctx.doc, SERIES)
    ctx.expect(kf.get("in_kernel") is not False or "patched" not in (kf.get("basis") or ""),
               f"boot3: check: kernel_fixes {SERIES} still speaks of the patched module: {kf}")
