#!/usr/bin/env python3
"""`fix --modules --install`'s checks before anything is written (issue 29), on fixture trees.

    check-modswap-install.py NUMASTOR FAKE_KO

A SCSI machine (hba-megaraid-node1-scan-sync: scsi_mod and megaraid_sas loaded, sd_mod not)
with a module directory holding a patched sd_mod (FAKE_KO, a stand-in .ko libkmod reads) and
its manifest. Each case states the tree, runs `fix -R TREE --modules --install --dry-run --json`
(and, where said, without --dry-run or without --install), and asserts the checks by name:

- a file of a loaded group that is not loaded itself (sd_mod) gets a swap's checks under
  --install (its sha256 against the manifest, ...); not without --install (nothing loads it);
- with no group loaded (scsi_mod out of the tree) the group's files get them in the plan, and
  --install refuses with a failed check (exit 3, no journal) instead of "nothing to swap"; a
  runtime `--modules` still says nothing to swap (exit 0);
- another sd_mod under updates/dkms, extra/ or weak-updates/ fails a check that names it; the
  in-tree one and numastor's own updates/numastor do not;
- the initramfs: initramfs-tools with /boot/initrd.img-REL passes; no initramfs-tools, dracut
  installed (named), or no /boot/initrd.img-REL (what /boot holds named) fail.
"""
import json
import os
import hashlib
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
MACHINE = "hba-megaraid-node1-scan-sync"
MODDIR = "/var/lib/numastor/modules/t"
failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}")


def run(numastor, tree, *extra, install=True, dry_run=True, json_out=True):
    args = [numastor, "fix", "-R", tree, "--modules", "--module-dir", MODDIR]
    args += ["--install"] if install else []
    args += ["--dry-run"] if dry_run else []
    args += ["--json"] if json_out else []
    env = dict(os.environ, NUMASTOR_TEST_SYSROOT_WRITES="1")
    p = subprocess.run(args + list(extra), capture_output=True, text=True, env=env)
    doc = None
    if json_out:
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            fail(f"{' '.join(args[2:])}: no JSON (exit {p.returncode}): {p.stdout[:300]!r} {p.stderr[:300]!r}")
    return p, doc


def checks(doc):
    return {c["check"]: c for c in (((doc or {}).get("modules") or {}).get("checks") or [])}


def expect_check(label, doc, name, ok, detail_has=()):
    c = checks(doc).get(name)
    if c is None:
        fail(f"{label}: no check {name!r} (checks: {sorted(checks(doc))})")
        return
    if c["ok"] is not ok:
        fail(f"{label}: check {name!r} ok={c['ok']}, expected {ok} ({c['detail']})")
    for s in detail_has:
        if s not in (c["detail"] or ""):
            fail(f"{label}: check {name!r}: the detail does not say {s!r}: {c['detail']!r}")


def no_check(label, doc, name):
    if name in checks(doc):
        fail(f"{label}: check {name!r} is there, and should not be")


def touch(tree, rel, text=""):
    p = os.path.join(tree, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)


def main():
    numastor, fake_ko = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="numastor-install.") as tmp:
        os.chmod(tmp, 0o755)
        subprocess.run([sys.executable, GEN, tmp, MACHINE], check=True, stdout=subprocess.DEVNULL)
        base = os.path.join(tmp, MACHINE)
        with open(os.path.join(base, "proc/sys/kernel/osrelease")) as f:
            rel = f.read().strip()
        mdir = os.path.join(base, MODDIR.lstrip("/"))
        os.makedirs(mdir)
        shutil.copy(fake_ko, os.path.join(mdir, "sd_mod.ko"))
        sha = hashlib.sha256(open(fake_ko, "rb").read()).hexdigest()
        with open(os.path.join(mdir, "manifest.json"), "w") as f:
            json.dump({"kernel_release": rel, "built": "2026-11-30T10:00:00Z",
                       "modules": [{"name": "sd_mod", "file": "sd_mod.ko", "sha256": sha}],
                       "already_upstream": []}, f)
        touch(base, f"lib/modules/{rel}/kernel/drivers/scsi/sd_mod.ko")
        # initramfs-tools as Debian installs it, and this release's initramfs
        for prog in ("usr/sbin/update-initramfs", "usr/sbin/mkinitramfs", "usr/bin/lsinitramfs"):
            touch(base, prog, "#!/bin/sh\n")
        touch(base, f"boot/initrd.img-{rel}", "initramfs")
        touch(base, f"boot/vmlinuz-{rel}", "kernel")
        sha_check = "sd_mod: sha256 matches the manifest"
        copies = f"--install: no other sd_mod under /lib/modules/{rel}/{{updates,extra,weak-updates}}"
        initrd = f"--install: the initramfs is initramfs-tools' /boot/initrd.img-{rel}"

        def tree(name):
            t = os.path.join(tmp, name)
            shutil.copytree(base, t, symlinks=True)
            return t

        # 1. scsi_mod loaded, sd_mod not: --install checks the sd_mod it copies; a swap does not
        t = tree("loaded")
        p, doc = run(numastor, t)
        expect_check("loaded group, sd_mod not loaded", doc, sha_check, True)
        expect_check("loaded group (twin: nothing else under updates/)", doc, copies, True)
        expect_check("loaded group (twin: initramfs-tools, /boot/initrd.img-REL)", doc, initrd, True)
        p, doc = run(numastor, t, install=False)
        no_check("runtime swap (twin: sd_mod is not loaded, nothing loads its file)", doc, sha_check)
        no_check("runtime swap (twin)", doc, initrd)

        # 2. no group loaded: the files are checked all the same, and --install says why not
        t = tree("unloaded")
        for m in ("scsi_mod", "megaraid_sas", "sd_mod"):
            shutil.rmtree(os.path.join(t, "sys/module", m), ignore_errors=True)
        p, doc = run(numastor, t)
        expect_check("no group loaded", doc, "scsi_mod is not loaded", True)
        expect_check("no group loaded", doc, sha_check, True)
        expect_check("no group loaded", doc, "sd_mod is a loadable module", True)
        # --verbose: every check on its line, the passed ones too (without it they are counted: issue 32)
        p, doc = run(numastor, t, "--verbose", dry_run=False, json_out=False)
        if p.returncode != 3 or "\nnothing to swap" in "\n" + p.stdout or "refused: a check failed" not in p.stderr:
            fail(f"no group loaded, --install: exit {p.returncode} (want 3, refused: the fake sd_mod "
                 f"fails vermagic): {p.stdout[-300:]!r} {p.stderr[-300:]!r}")
        if sha_check not in p.stdout:
            fail(f"no group loaded, --install: the text does not list the checks: {p.stdout[-300:]!r}")
        if os.path.exists(os.path.join(t, "var/lib/numastor/swap.json")):
            fail("no group loaded, --install refused: a journal was written")
        p, _ = run(numastor, t, install=False, dry_run=False, json_out=False)
        if p.returncode != 0 or not p.stdout.startswith("nothing to swap"):
            fail(f"no group loaded, runtime swap (twin): exit {p.returncode}, not nothing to swap: "
                 f"{p.stdout[-300:]!r} {p.stderr[-300:]!r}")

        # 3. another copy of sd_mod where depmod ranks it with updates/numastor: named
        for sub in (f"updates/dkms/sd_mod.ko", "extra/sd_mod.ko.xz", "weak-updates/x/sd-mod.ko"):
            t = tree("copy-" + sub.split("/")[0])
            touch(t, f"lib/modules/{rel}/{sub}")
            p, doc = run(numastor, t)
            expect_check(f"a copy at {sub}", doc, copies, False, (f"lib/modules/{rel}/{sub}",))
        t = tree("own-copy")
        touch(t, f"lib/modules/{rel}/updates/numastor/sd_mod.ko")
        touch(t, f"lib/modules/{rel}/updates/dkms/other_mod.ko")
        p, doc = run(numastor, t)
        expect_check("numastor's own updates/numastor and another module (twin)", doc, copies, True)

        # 4. the initramfs tool: only initramfs-tools' /boot/initrd.img-REL
        t = tree("dracut")
        touch(t, "usr/bin/dracut", "#!/bin/sh\n")
        p, doc = run(numastor, t)
        expect_check("dracut installed", doc, initrd, False, ("/usr/bin/dracut",))
        t = tree("no-tools")
        for prog in ("usr/sbin/update-initramfs", "usr/sbin/mkinitramfs"):
            os.unlink(os.path.join(t, prog))
        p, doc = run(numastor, t)
        expect_check("no initramfs-tools", doc, initrd, False, ("initramfs-tools is not installed",))
        t = tree("no-initrd")
        os.unlink(os.path.join(t, f"boot/initrd.img-{rel}"))
        touch(t, "usr/bin/kernel-install", "#!/bin/sh\n")
        p, doc = run(numastor, t)
        expect_check("no /boot/initrd.img-REL", doc, initrd, False,
                     ("does not exist", f"/boot/vmlinuz-{rel}", "/usr/bin/kernel-install"))
        p, _ = run(numastor, t, dry_run=False, json_out=False)
        if p.returncode != 3 or "refused" not in p.stderr:
            fail(f"no /boot/initrd.img-REL, --install: exit {p.returncode}, not refused: {p.stderr[-300:]!r}")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("modswap-install: every case as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
