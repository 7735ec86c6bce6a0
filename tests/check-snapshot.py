#!/usr/bin/env python3
"""numastor snapshot and check --snapshot: live discovery equals gather -> replay, on this
machine and on every fixture machine (the capture's root aside), and a hostile or malformed
bundle is a clear error (exit 3) that writes nothing outside its private directory."""
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile

# tmpfs where there is one: a fixture tree is thousands of small files, which cost 20 times
# as much on a loaded disk
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None

from jsondiff import first_difference

HERE = os.path.dirname(os.path.abspath(__file__))
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)


def run(*cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def without_root(doc):
    doc = dict(doc)
    doc.pop("root")
    return doc


def beyond_budgets(tree):
    """The first name in tree that is beyond a replay budget by itself (a nodeN or cpuN id,
    numastor-snapshot(8) BUDGETS), or None: told from the tree, not from numastor."""
    for d, dirs, files in os.walk(tree):
        for n in dirs + files:
            for prefix, limit in (("node", 1024), ("cpu", 8192)):
                if n.startswith(prefix) and n[len(prefix):].isdigit() and int(n[len(prefix):]) >= limit:
                    return os.path.relpath(os.path.join(d, n), tree)
    return None


def round_trip(numastor, tmp, name, sysroot=None):
    bundle = os.path.join(tmp, name + ".tar.gz")
    args = ["--sysroot", sysroot] if sysroot else []
    p = run(numastor, "snapshot", "-o", bundle, *args)
    beyond = sysroot and beyond_budgets(sysroot)
    if beyond and p.returncode == 3 and "a replay would refuse it" in p.stderr:
        # a tree no replay may take (numastor-snapshot(8), BUDGETS) is not captured either
        left = [n for n in os.listdir(tmp) if n.startswith(name + ".tar.gz")]
        if left:
            return fail(f"{name}: snapshot refused the tree but left {left}")
        return print(f"PASS round trip {name}: not captured, {beyond} is beyond a replay budget")
    if p.returncode != 0:
        return fail(f"{name}: snapshot exited {p.returncode}: {p.stderr[:300]}")
    with tarfile.open(bundle) as t:
        captured = json.load(t.extractfile(".numastor/check.json"))
        facts = t.extractfile(".numastor/facts").read().decode()
    if "kernel_release=" not in facts or "page_size=" not in facts or "captured_at=" not in facts:
        fail(f"{name}: facts lack kernel release, page size or capture time: {facts}")
    p = run(numastor, "check", "--snapshot", bundle, "--json")
    if p.returncode not in (0, 1, 2):
        return fail(f"{name}: check --snapshot exited {p.returncode}: {p.stderr[:300]}")
    replay = json.loads(p.stdout)
    if replay["root"] != "snapshot:" + bundle:
        fail(f"{name}: replay root is {replay['root']}")
    if replay["summary"]["exit_code"] != p.returncode:
        fail(f"{name}: replay exit code")
    diff = first_difference(without_root(captured), without_root(replay))
    if diff:
        return fail(f"{name}: live != replay at {diff}")
    if sysroot:
        # and the capture of a tree equals a check of that tree
        direct = json.loads(run(numastor, "check", "--sysroot", sysroot, "--json").stdout)
        diff = first_difference(without_root(direct), without_root(replay))
        if diff:
            return fail(f"{name}: check --sysroot != replay of its snapshot at {diff}")
    print(f"PASS round trip {name}")


def hostile(numastor, tmp):
    canary = os.path.join(tmp, "canary")
    cases = {}

    def bundle(name, members):
        path = os.path.join(tmp, name + ".tar.gz")
        with tarfile.open(path, "w:gz") as t:
            for m, data in members:
                t.addfile(m, io.BytesIO(data) if data is not None else None)
        cases[name] = path

    def reg(name, data=b"x\n"):
        ti = tarfile.TarInfo(name)
        ti.size = len(data)
        return ti, data

    def special(name, kind, target=""):
        ti = tarfile.TarInfo(name)
        ti.type = kind
        ti.linkname = target
        return ti, None

    ok = [reg("sys/block/.keep")]
    bundle("absolute-path", ok + [reg(canary + "/abs", b"pwned\n")])
    bundle("dotdot", ok + [reg("sys/../../canary/dotdot", b"pwned\n")])
    bundle("symlink-absolute", ok + [special("sys/evil", tarfile.SYMTYPE, canary)])
    bundle("symlink-escapes", ok + [special("sys/evil", tarfile.SYMTYPE, "../../../../../../" + canary)])
    bundle("write-through-symlink", ok + [special("sys/d", tarfile.SYMTYPE, "block"), reg("sys/d/x")])
    bundle("hardlink", ok + [special("sys/hard", tarfile.LNKTYPE, "sys/block/.keep")])
    bundle("fifo", ok + [special("sys/fifo", tarfile.FIFOTYPE)])
    bundle("device", ok + [special("sys/dev", tarfile.CHRTYPE)])
    bundle("too-big", ok + [reg("sys/big", b"0" * (2 << 20))])
    empty = os.path.join(tmp, "empty.tar.gz")
    with tarfile.open(empty, "w:gz"):
        pass
    cases["empty"] = empty
    garbage = os.path.join(tmp, "garbage.tar.gz")
    with open(garbage, "wb") as f:
        f.write(b"this is not a tarball\n" * 100)
    cases["garbage"] = garbage
    good = os.path.join(tmp, "vm-1n-virtio-blk.tar.gz")  # written by the round trip
    truncated = os.path.join(tmp, "truncated.tar.gz")
    with open(good, "rb") as f, open(truncated, "wb") as g:
        data = f.read()
        g.write(data[: len(data) // 2])
    cases["truncated"] = truncated
    cases["missing-file"] = os.path.join(tmp, "no-such.tar.gz")
    fifo = os.path.join(tmp, "bundle-fifo")  # read twice, so a regular file; and no hang on open
    os.mkfifo(fifo)
    cases["fifo-bundle"] = fifo

    os.makedirs(canary)
    for name, path in sorted(cases.items()):
        p = run(numastor, "check", "--snapshot", path, timeout=30)
        if p.returncode != 3:
            fail(f"hostile {name}: exit {p.returncode}, expected 3; stderr: {p.stderr[:200]}")
        elif not p.stderr.startswith("numastor check: ") or len(p.stderr.strip()) < 25:
            fail(f"hostile {name}: unclear message {p.stderr!r}")
        else:
            print(f"PASS hostile {name}: {p.stderr.strip()[:110]}")
    if os.listdir(canary):
        fail(f"a hostile bundle wrote outside its directory: {os.listdir(canary)}")
    leftovers = [n for n in os.listdir(os.environ["TMPDIR"]) if n.startswith("numastor-snapshot.")]
    if leftovers:
        fail(f"extraction directories left behind: {leftovers}")


def main():
    numastor = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="numastor-snapshot-test.", dir=SCRATCH) as tmp:
        os.environ["TMPDIR"] = os.path.join(tmp, "tmpdir")
        os.makedirs(os.environ["TMPDIR"])
        round_trip(numastor, tmp, "live")
        fx = os.path.join(tmp, "fx")
        subprocess.run([sys.executable, os.path.join(HERE, "fixtures", "gen-fixtures.py"), fx], check=True,
                       stdout=subprocess.DEVNULL)
        for name in sorted(os.listdir(fx)):
            round_trip(numastor, tmp, name, os.path.join(fx, name))
        hostile(numastor, tmp)
    print(f"snapshot: {'failed' if failures else 'all passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
