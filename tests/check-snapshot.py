#!/usr/bin/env python3
"""numastor snapshot and check --snapshot: live discovery equals gather -> replay, on this
machine and on every fixture machine (the capture's root aside), and a hostile or malformed
bundle is a clear error (exit 3) that writes nothing outside its private directory; each kind
of file has its own size budget; libarchive is loaded only when a snapshot is."""
import io
import json
import os
import stat
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
    """The document without what names the root: the root, and a replay's capture (its time and
    host: tests/check-fix-snapshot.py and check-json-contract.py hold them to the bundle)."""
    doc = dict(doc)
    doc.pop("root")
    doc.pop("captured_at", None)
    doc.pop("captured_host", None)
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
    p = run(numastor, "snapshot", "-O", bundle, *args)
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
    if p.returncode not in (0, 1, 2, 3) or (p.returncode == 3 and '"unjudged": 0' in p.stdout):
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


class Spaces(io.RawIOBase):
    """n bytes of spaces, read as a file: a big member without holding it in memory."""

    def __init__(self, n):
        self.left = n

    def readable(self):
        return True

    def readinto(self, b):
        k = min(len(b), self.left)
        b[:k] = b" " * k
        self.left -= k
        return k


def by_kind(numastor, tmp):
    """Each kind of file has its own size budget (numastor-snapshot(8), BUDGETS): a member just
    over it is refused, its twin just under it replays. A file the reader reads: 1 MiB, all of
    them 128 MiB; the check's own JSON: 256 MiB, not counted with the reader's files."""
    mib = 1 << 20
    good = os.path.join(tmp, "vm-1n-virtio-blk.tar.gz")  # written by the round trip
    with tarfile.open(good) as t:
        base = [(m, t.extractfile(m).read() if m.isfile() else None) for m in t.getmembers()
                if m.name != ".numastor/check.json"]

    def bundle(name, extra):
        path = os.path.join(tmp, name + ".tar.gz")
        with tarfile.open(path, "w:gz", compresslevel=1) as t:
            for m, data in base:
                t.addfile(m, io.BytesIO(data) if data is not None else None)
            for member, size in extra:
                ti = tarfile.TarInfo(member)
                ti.size = size
                t.addfile(ti, io.BufferedReader(Spaces(size), 1 << 20))
        return path

    files = lambda n, size: [("sys/fill/f%03d" % i, size) for i in range(n)]
    cases = [  # (name, extra members, refused?, what the refusal names)
        ("reader-file-at-limit", [("sys/big", mib)], False, None),
        ("reader-file-over", [("sys/big", mib + 1)], True, "1048577 bytes"),
        ("check-json-at-limit", [(".numastor/check.json", 256 * mib)], False, None),
        ("check-json-over", [(".numastor/check.json", 256 * mib + 1)], True, "268435457 bytes"),
        ("check-json-twice", [(".numastor/check.json", 128 * mib), (".numastor/check.json", 128 * mib + 1)],
         True, "256 MiB of the check's JSON"),
        # the base's own files count too: 127 MiB of filler, then up to the byte
        ("reader-total-at-limit-with-json", None, False, None),
        ("reader-total-over", None, True, "128 MiB of files the reader reads"),
    ]
    base_bytes = sum(len(d) for m, d in base if d is not None)
    room = 128 * mib - base_bytes
    for name, extra, refused, names in cases:
        if name == "reader-total-at-limit-with-json":
            extra = files(room // mib, mib) + [("sys/fill/last", room % mib), (".numastor/check.json", 256 * mib)]
        elif name == "reader-total-over":
            extra = files(room // mib, mib) + [("sys/fill/last", room % mib + 1)]
        path = bundle(name, extra)
        p = run(numastor, "check", "--snapshot", path, timeout=120)
        os.unlink(path)
        if refused and (p.returncode != 3 or names not in p.stderr or "budget" not in p.stderr):
            fail(f"by kind {name}: exit {p.returncode}, expected 3 naming {names!r}: {p.stderr[:200]}")
        elif not refused and p.returncode not in (0, 1, 2):
            fail(f"by kind {name}: exit {p.returncode}, expected a replay: {p.stderr[:200]}")
        else:
            print(f"PASS by kind {name}: exit {p.returncode} {p.stderr.strip()[:110]}")


def lazy_libarchive(numastor, tmp, tree):
    """libarchive is loaded only by what needs it (lib/out/snapshot.c dlopens it): not linked, not
    loaded by check on a tree; loaded by check --snapshot; and without it the message names
    the package."""
    p = run("ldd", numastor)
    if p.returncode == 0 and ("libarchive" in p.stdout or "libxml2" in p.stdout or "libicu" in p.stdout):
        fail(f"lazy libarchive: the binary links it: {p.stdout}")
    env = dict(os.environ, LD_DEBUG="libs")
    p = run(numastor, "check", "--sysroot", tree, env=env)
    loaded = [ln for ln in p.stderr.splitlines() if "calling init" in ln]
    if not loaded or any("libarchive" in ln or "libxml2" in ln for ln in loaded):
        fail(f"lazy libarchive: check --sysroot loaded {[ln.split()[-1] for ln in loaded]}")
    bundle = os.path.join(tmp, "vm-1n-virtio-blk.tar.gz")
    p = run(numastor, "check", "--snapshot", bundle, env=env)
    if p.returncode not in (0, 1, 2) or not any("libarchive.so" in ln and "calling init" in ln
                                                 for ln in p.stderr.splitlines()):
        fail(f"lazy libarchive: check --snapshot exited {p.returncode} without loading libarchive")
    env = dict(os.environ, NUMASTOR_TEST_LIBARCHIVE="libarchive-not-here.so.13")
    for cmd in (["check", "--snapshot", bundle], ["snapshot", "--sysroot", tree, "-O", os.path.join(tmp, "no.tgz")]):
        p = run(numastor, *cmd, env=env)
        if p.returncode != 3 or "libarchive13" not in p.stderr or os.path.exists(os.path.join(tmp, "no.tgz")):
            fail(f"lazy libarchive: {cmd[0]} without it: exit {p.returncode}, {p.stderr.strip()!r}")
    print(f"PASS lazy libarchive: check loads {len(loaded)} objects, none of libarchive's; without it: "
          f"{p.stderr.strip()[:120]}")


def output_target(numastor, tmp, tree):
    """-o replaces only a regular file: a FIFO (as /dev/null would be a device) is refused and left
    as it was, nothing beside it; the twin, an existing regular file, is replaced by the archive."""
    d = os.path.join(tmp, "out")
    os.makedirs(d)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    p = run(numastor, "snapshot", "--sysroot", tree, "-O", fifo)
    if p.returncode != 3 or "only a regular file" not in p.stderr:
        fail(f"snapshot -O FIFO: exit {p.returncode}, stderr {p.stderr[:200]!r}")
    elif not stat.S_ISFIFO(os.lstat(fifo).st_mode) or os.listdir(d) != ["fifo"]:
        fail(f"snapshot -O FIFO: the FIFO was replaced or a file was left: {os.listdir(d)}")
    else:
        print("PASS output: a FIFO target refused and kept")
    reg = os.path.join(d, "old.tar")
    with open(reg, "w") as f:
        f.write("old\n")
    p = run(numastor, "snapshot", "--sysroot", tree, "-O", reg)
    if p.returncode != 0 or os.path.getsize(reg) <= 4:
        fail(f"snapshot -O over a regular file: exit {p.returncode}, size {os.path.getsize(reg)}")
    else:
        print("PASS output: a regular file target replaced")


def main():
    """check-snapshot.py NUMASTOR [PART...]: PART is live, fixtures, hostile, lazy, output or by-kind
    (default all); the parts after fixtures need only vm-1n-virtio-blk's round trip."""
    numastor = os.path.abspath(sys.argv[1])
    parts = set(sys.argv[2:]) or {"live", "fixtures", "hostile", "lazy", "output", "by-kind"}
    with tempfile.TemporaryDirectory(prefix="numastor-snapshot-test.", dir=SCRATCH) as tmp:
        os.environ["TMPDIR"] = os.path.join(tmp, "tmpdir")
        os.makedirs(os.environ["TMPDIR"])
        if "live" in parts:
            round_trip(numastor, tmp, "live")
        fx = os.path.join(tmp, "fx")
        some = [] if "fixtures" in parts else ["vm-1n-virtio-blk"]
        subprocess.run([sys.executable, os.path.join(HERE, "fixtures", "gen-fixtures.py"), fx] + some, check=True,
                       stdout=subprocess.DEVNULL)
        for name in sorted(os.listdir(fx)):
            round_trip(numastor, tmp, name, os.path.join(fx, name))
        if "hostile" in parts:
            hostile(numastor, tmp)
        if "lazy" in parts:
            lazy_libarchive(numastor, tmp, os.path.join(fx, "vm-1n-virtio-blk"))
        if "output" in parts:
            output_target(numastor, tmp, os.path.join(fx, "vm-1n-virtio-blk"))
        if "by-kind" in parts:
            by_kind(numastor, tmp)
    print(f"snapshot: {'failed' if failures else 'all passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
