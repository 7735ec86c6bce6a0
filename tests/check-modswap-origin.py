#!/usr/bin/env python3
"""fix --modules swaps only modules that are the kernel's own (issue 29, item 2).

On a copy of the hba-megaraid-node1-irq-cpu0 fixture (a megaraid_sas disk on node 1) this
test builds the machine's module tree the way a Debian machine has it: stand-in .ko files
(objects whose .modinfo libkmod reads: tests/unit/fake-module.c with its section replaced by
objcopy) under lib/modules/RELEASE/kernel, modules.order, and depmod's own indexes (`depmod
-b`, kmod's, as a machine's would be); sys/module for scsi_mod, sd_mod and megaraid_sas (live,
holders, taint, srcversion); a manifest of patched scsi_mod/sd_mod. Then, one change at a time:

  clean          every removed module resolves to and runs its in-tree file: the passed check
                 names megaraid_sas, no "is the kernel's own module" check fails
  dkms           a copy under updates/dkms (depmod): megaraid_sas refused naming that path
  extra          a copy under extra/: refused likewise
  taint-O        megaraid_sas's taint reads O: refused ("taint O")
  srcversion     megaraid_sas runs another srcversion than its in-tree file: refused
  numastor-copy  sd_mod resolves to numastor's own updates/numastor copy: not refused
  no-index       no modules.dep.bin: refused as unknown
  replaced-vendor     sd_mod (which the swap replaces by the patched one) runs an out-of-tree
                      build that is not numastor's: refused
  replaced-own-build  sd_mod runs numastor's patched build (the manifest's srcversion, taint
                      O): not refused

Only the origin checks are asserted: the other candidate checks fail on stand-in files.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
FIXTURE = "hba-megaraid-node1-irq-cpu0"
OWN = "is the kernel's own module"
PASSED = "the modules the swap removes are the kernel's own"
DEPMOD = next((p for p in ("/usr/sbin/depmod", "/sbin/depmod") if os.path.exists(p)), None)
MODS = {  # name: (in-tree path, srcversion)
    "scsi_mod": ("kernel/drivers/scsi/scsi_mod.ko", "AAAA0000000000000000001"),
    "sd_mod": ("kernel/drivers/scsi/sd_mod.ko", "AAAA0000000000000000002"),
    "megaraid_sas": ("kernel/drivers/scsi/megaraid/megaraid_sas.ko", "AAAA0000000000000000003"),
}
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def fake_ko(fake, out, name, srcversion, tmp):
    info = os.path.join(tmp, "modinfo.bin")
    with open(info, "wb") as f:
        f.write(f"name={name}\0srcversion={srcversion}\0license=GPL\0".encode())
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run(["objcopy", "--remove-section", ".modinfo", "--add-section", f".modinfo={info}",
                    "--set-section-flags", ".modinfo=alloc,readonly", fake, out], check=True)


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def machine(base, fake, tmp):
    root = os.path.join(tmp, "root")
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(base, root, symlinks=True)
    rel = open(os.path.join(root, "proc/sys/kernel/osrelease")).read().strip()
    mdir = os.path.join(root, "lib/modules", rel)
    for name, (path, src) in MODS.items():
        fake_ko(fake, os.path.join(mdir, path), name, src, tmp)
        sm = os.path.join(root, "sys/module", name)
        shutil.rmtree(sm, ignore_errors=True)
        os.makedirs(os.path.join(sm, "holders"))
        write(root, f"sys/module/{name}/initstate", "live\n")
        write(root, f"sys/module/{name}/taint", "\n")
        write(root, f"sys/module/{name}/srcversion", src + "\n")
        write(root, f"sys/module/{name}/refcnt", "0\n")
    for holder in ("sd_mod", "megaraid_sas"):
        os.symlink(f"../../{holder}", os.path.join(root, "sys/module/scsi_mod/holders", holder))
    write(root, f"sys/module/scsi_mod/refcnt", "2\n")
    write(root, f"lib/modules/{rel}/modules.order", "".join(p + "\n" for p, _ in MODS.values()))
    moddir = f"var/lib/numastor/modules/{rel}"
    entries = []
    for name in ("scsi_mod", "sd_mod"):
        fake_ko(fake, os.path.join(root, moddir, name + ".ko"), name, "BBBB" + MODS[name][1][4:], tmp)
        sha = subprocess.run(["sha256sum", os.path.join(root, moddir, name + ".ko")], capture_output=True,
                             text=True, check=True).stdout.split()[0]
        entries.append({"name": name, "file": name + ".ko", "sha256": sha, "srcversion": "BBBB" + MODS[name][1][4:]})
    write(root, f"{moddir}/manifest.json", json.dumps({"kernel_release": rel, "built": "2026-12-05T10:00:00Z",
                                                       "modules": entries}))
    return root, rel, mdir


def depmod(root, rel):
    subprocess.run([DEPMOD, "-b", root, rel], check=True, stderr=subprocess.DEVNULL)


def plan(numastor, root, case):
    p = subprocess.run([numastor, "fix", "-R", root, "--modules", "--dry-run", "--json"], capture_output=True,
                       text=True, env=dict(os.environ, NUMASTOR_TEST_NOW="1"))
    try:
        return json.loads(p.stdout)["modules"]["checks"]
    except (ValueError, KeyError, TypeError) as e:
        fail(f"{case}: no plan ({e}); exit {p.returncode}, stderr {p.stderr[:300]!r}")
        return []


def origin(checks):
    """{module: detail} of the failed origin checks, and the passed check's detail."""
    failed = {c["check"][:-len(OWN) - 1]: c["detail"] for c in checks if c["check"].endswith(OWN) and not c["ok"]}
    passed = [c["detail"] for c in checks if c["check"] == PASSED and c["ok"]]
    return failed, passed[0] if passed else None


def main():
    numastor, fake = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if not DEPMOD or not shutil.which("objcopy"):
        print("FAIL: depmod (kmod) and objcopy (binutils) are needed")
        return 1
    with tempfile.TemporaryDirectory(prefix="numastor-origin.") as tmp:
        fx = os.path.join(tmp, "fx")
        subprocess.run([sys.executable, GEN, fx, FIXTURE], check=True, stdout=subprocess.DEVNULL)
        base = os.path.join(fx, FIXTURE)

        def case(name, change, expect_failed, passed_has=(), passed_lacks=()):
            root, rel, mdir = machine(base, fake, tmp)
            index = change(root, rel, mdir)
            if index is not False:
                depmod(root, rel)
            failed, passed = origin(plan(numastor, root, name))
            if sorted(failed) != sorted(expect_failed):
                fail(f"{name}: refused modules {sorted(failed)}, expected {sorted(expect_failed)}: {failed}")
            for mod, words in expect_failed.items():
                for w in words:
                    if w not in failed.get(mod, ""):
                        fail(f"{name}: {mod}'s refusal does not say {w!r}: {failed.get(mod)!r}")
            for mod in passed_has:
                if not passed or mod not in passed:
                    fail(f"{name}: the passed check does not name {mod}: {passed!r}")
            for mod in passed_lacks:
                if passed and mod in passed.split(" from ")[0]:
                    fail(f"{name}: the passed check names {mod}: {passed!r}")
            if not failures:
                print(f"ok {name}")

        def nothing(root, rel, mdir):
            return None

        def copy_to(sub):
            def change(root, rel, mdir):
                os.makedirs(os.path.join(mdir, sub), exist_ok=True)
                shutil.copy(os.path.join(mdir, MODS["megaraid_sas"][0]), os.path.join(mdir, sub))
            return change

        def taint(root, rel, mdir):
            write(root, "sys/module/megaraid_sas/taint", "O\n")

        def srcversion(root, rel, mdir):
            write(root, "sys/module/megaraid_sas/srcversion", "CCCC0000000000000000003\n")

        def numastor_copy(root, rel, mdir):
            os.makedirs(os.path.join(mdir, "updates/numastor"))
            shutil.copy(os.path.join(mdir, MODS["sd_mod"][0]), os.path.join(mdir, "updates/numastor"))

        def no_index(root, rel, mdir):
            return False

        def replaced_vendor(root, rel, mdir):
            write(root, "sys/module/sd_mod/taint", "O\n")

        def replaced_own(root, rel, mdir):
            write(root, "sys/module/sd_mod/taint", "OE\n")
            write(root, "sys/module/sd_mod/srcversion", "BBBB" + MODS["sd_mod"][1][4:] + "\n")

        case("clean", nothing, {}, passed_has=("megaraid_sas", "sd_mod", "scsi_mod"))
        case("dkms", copy_to("updates/dkms"), {"megaraid_sas": ("updates/dkms/megaraid_sas.ko", "vendor or DKMS")},
             passed_has=("sd_mod",), passed_lacks=("megaraid_sas",))
        case("extra", copy_to("extra"), {"megaraid_sas": ("/extra/megaraid_sas.ko",)})
        case("taint-O", taint, {"megaraid_sas": ("taint O",)}, passed_lacks=("megaraid_sas",))
        case("srcversion", srcversion, {"megaraid_sas": ("srcversion CCCC0000000000000000003",)})
        case("numastor-copy", numastor_copy, {}, passed_has=("sd_mod",))
        case("no-index", no_index, {m: ("modprobe finds no file",) for m in MODS})
        case("replaced-vendor", replaced_vendor, {"sd_mod": ("taint O",)})
        case("replaced-own-build", replaced_own, {}, passed_has=("sd_mod",))
    print(f"{'FAIL' if failures else 'PASS'}: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
