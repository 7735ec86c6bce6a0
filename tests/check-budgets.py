#!/usr/bin/env python3
"""The replay budgets of check --snapshot (numastor-snapshot(8), BUDGETS), with issue 11's
bundles: each small bundle that cost seconds to minutes, or gigabytes, is refused from its
headers within a second, with exit 3 and a message naming the budget and the value; the
extraction directory goes whatever its modes and however the process ends (SIGINT, SIGTERM, a
closed pipe), run as an unprivileged user where the mode matters; real bundles, the snapshot's
own big check.json included, still replay.

Issue 28 (item 5): a 131 KB bundle with 20,000 sys/block links to one disk cost 8 s of CPU and
wrote 167 MB of JSON; every entry that resolves to a disk already listed is that disk, noted once
(case aliases, in a tree and in a bundle, --json and text: within a second of CPU beyond the
bundle's own extraction, and 32 MiB); a machine's distinct disks are each still listed
(aliases-twin); so are a multipath head's entries for one path (path-aliases); a stack of dm
devices reached by many paths is walked once (stacked-diamond).

    check-budgets.py NUMASTOR [CASE...]      (CASE: a name below; default all)

Each case's CPU time, wall time and peak memory are printed (for the issue's before/after)."""
import io
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
CPU_LIMIT = 1.0  # seconds of CPU for a refusal (the issue: "within a second")
WALL_LIMIT = 5.0  # the machine may be loaded: wall time is only a sanity bound
EXTRACT_DELAY = 4.0  # seconds slept after each entry extracted, for the refusals from the headers
MEM_LIMIT = 32  # MiB of peak memory for the alias cases (issue 28)
ALIASES = 20000  # links of the alias case (issue 28: the 131 KB bundle)
LATE = {"duplicate"}  # refused while extracting (a path's second record), not from the headers
failures = 0



def is_error_document(out, msg):
    """Under --json a refusal is one JSON error document on stdout (exit 3), never a report:
    its message is the one stderr gives."""
    try:
        doc = json.loads(out)
    except ValueError:
        return False
    err = doc.get("error") if isinstance(doc, dict) else None
    return (isinstance(err, dict) and err.get("exit_code") == 3 and "devices" not in doc
            and msg.strip().endswith(str(err.get("message")).strip()[-60:]))

def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)


class Env:
    def __init__(self, numastor, tmp):
        self.numastor = numastor
        self.tmp = tmp
        self.tmpdir = os.path.join(tmp, "tmpdir")  # the TMPDIR numastor extracts under
        os.makedirs(self.tmpdir)
        self.user = None  # (uid, gid) to run as where modes matter
        if os.geteuid() == 0:
            try:
                pw = pwd.getpwnam("nobody")
                self.user = (pw.pw_uid, pw.pw_gid)
            except KeyError:
                pass
            if not shutil.which("setpriv"):
                self.user = None
        if self.user:
            os.chmod(tmp, 0o755)
            os.chown(self.tmpdir, *self.user)
        self.base = None

    def unprivileged(self, cmd):
        """cmd as a user that file modes bind (nobody via setpriv when we are root)."""
        if self.user is None:
            return cmd
        uid, gid = self.user
        return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"] + cmd

    def leftovers(self):
        return [n for n in os.listdir(self.tmpdir)]

    def clean(self):
        """Remove what a failed run left (as root, or by making it writable)."""
        for n in os.listdir(self.tmpdir):
            p = os.path.join(self.tmpdir, n)
            for d, dirs, _ in os.walk(p):
                os.chmod(d, 0o700)
                for x in dirs:
                    try:
                        os.chmod(os.path.join(d, x), 0o700)
                    except OSError:
                        pass
            shutil.rmtree(p, ignore_errors=True)


def run_measured(cmd, env, timeout=120):
    """Run cmd; (returncode, stdout, stderr, CPU seconds, wall seconds, peak RSS in MiB) of
    that process alone (through /usr/bin/time, whose own small image is what exec starts from:
    a child forked from this script would inherit its peak)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as tm:
        t0 = time.monotonic()
        p = subprocess.Popen(["/usr/bin/time", "-q", "-o", tm.name, "-f", "%U %S %M"] + cmd, stdout=out,
                             stderr=err, env=env, start_new_session=True)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)  # time and numastor both
            p.wait()
            p.returncode = "timeout"
        wall = time.monotonic() - t0
        fields = tm.read().split()
        u, s, m = (float(x) for x in fields[-3:]) if len(fields) >= 3 else (0.0, 0.0, 0.0)
        out.seek(0)
        err.seek(0)
        return (p.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                u + s, wall, m / 1024)


# ---- bundles ----

def reg(name, data=b"x\n", mode=0o644):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mode = mode
    return ti, data


def directory(name, mode=0o755):
    ti = tarfile.TarInfo(name)
    ti.type = tarfile.DIRTYPE
    ti.mode = mode
    return ti, None


def gz(data):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


def tar_member(ti, data):
    out = ti.tobuf(tarfile.GNU_FORMAT)
    if data:
        out += data + b"\0" * (-len(data) % 512)
    return out


class Headers:
    """Tar headers of one shape with only the name changing, fast (100k of them)."""

    def __init__(self, ti):
        self.tmpl = bytearray(ti.tobuf(tarfile.GNU_FORMAT))
        assert len(self.tmpl) == 512

    def __call__(self, name):
        h = bytearray(self.tmpl)
        h[0:100] = name.encode().ljust(100, b"\0")
        h[148:156] = b" " * 8
        h[148:156] = b"%06o\0 " % sum(h)
        return bytes(h)


def write_bundle(path, members, extra=()):
    """A tar.gz of members (TarInfo, data), then the raw gzip members in extra (a gzip
    stream may hold several; the tar stream runs on through them), then the end blocks."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        for ti, data in members:
            f.write(c.compress(tar_member(ti, data)))
        f.write(c.flush())
        for chunk in extra:
            f.write(chunk)
        f.write(gz(b"\0" * 1024))
    return path


def base_members(env):
    """A real bundle's members: numastor's own snapshot of a fixture machine."""
    if env.base is None:
        fx = os.path.join(env.tmp, "fx")
        subprocess.run([sys.executable, os.path.join(HERE, "fixtures", "gen-fixtures.py"), fx,
                        "vm-1n-virtio-blk"], check=True, stdout=subprocess.DEVNULL)
        bundle = os.path.join(env.tmp, "base.tar.gz")
        p = subprocess.run([env.numastor, "snapshot", "-O", bundle, "--sysroot",
                            os.path.join(fx, "vm-1n-virtio-blk")], capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"cannot snapshot the base fixture: {p.stderr}")
        env.base = []
        with tarfile.open(bundle) as t:
            for m in t.getmembers():
                env.base.append((m, t.extractfile(m).read() if m.isfile() else None))
    return list(env.base)


def replace(members, name, data):
    out = []
    for ti, d in members:
        if ti.name == name:
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mode = 0o444
            d = data
        out.append((ti, d))
    return out


# ---- the cases ----
# Each returns (bundle path, expectation): "refused" (exit 3 with every word of `words` in the
# message, within CPU_LIMIT) or "replays" (exit 0-2).

def case_node1000000(env):
    nd = "sys/devices/system/node/node1000000"
    m = base_members(env) + [directory(nd), reg(nd + "/cpulist", b"\n"), reg(nd + "/distance", b"10\n"),
                             reg(nd + "/meminfo", b"Node 1000000 MemTotal: 1024 kB\n")]
    m = replace(m, "sys/devices/system/node/online", b"0,1000000\n")
    return write_bundle(os.path.join(env.tmp, "node1000000.tar.gz"), m), "refused", ["node 1000000", "1024",
                                                                                    "budget"]


def case_node200000(env):
    nd = "sys/devices/system/node/node200000"
    m = base_members(env) + [directory(nd), reg(nd + "/cpulist", b"\n"), reg(nd + "/distance", b"10\n"),
                             reg(nd + "/meminfo", b"Node 200000 MemTotal: 1024 kB\n")]
    m = replace(m, "sys/devices/system/node/online", b"0,200000\n")
    return write_bundle(os.path.join(env.tmp, "node200000.tar.gz"), m), "refused", ["node 200000", "budget"]


def case_cpu_id(env):
    cd = "sys/devices/system/node/node0/cpu100000"
    m = base_members(env) + [directory(cd)]
    return write_bundle(os.path.join(env.tmp, "cpu100000.tar.gz"), m), "refused", ["CPU 100000", "8192", "budget"]


def case_dirs1100k(env):
    """About 5 MB: 1,100,000 directories, beyond the 1,048,576 entries a 1,024-NVMe machine's
    snapshot needs (100,000 of them cost 28 s and 366 MB of disk before the budget)."""
    ti = tarfile.TarInfo("sys/x/0")
    ti.type = tarfile.DIRTYPE
    ti.mode = 0o755
    h = Headers(ti)
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    dirs = b"".join(c.compress(h("sys/x/%d" % i)) for i in range(1100000)) + c.flush()
    return write_bundle(os.path.join(env.tmp, "dirs1100k.tar.gz"), base_members(env), [dirs]), "refused", [
        "1048576", "entries", "budget"]


def case_cpulist_ranges(env):
    """6 KB: every affinity list of every IRQ a run of 0-1048575 ranges. The reader's cpuset
    (lib/base/cpuset.c, item 2) sets ranges word-wise and refuses CPUs beyond kernel_max: it costs
    nothing either way, whatever the exit."""
    ranges = b",".join([b"0-1048575"] * 400) + b"\n"
    m = []
    for ti, d in base_members(env):
        if ti.isfile() and ti.name.endswith(("_affinity_list", "/cpulist", "cpu_list", "/possible", "/online")):
            ti = tarfile.TarInfo(ti.name)
            ti.size = len(ranges)
            ti.mode = 0o444
            d = ranges
        m.append((ti, d))
    return write_bundle(os.path.join(env.tmp, "cpulist-ranges.tar.gz"), m), "bounded", []


def case_total(env):
    """535 KB, 500 MB of files in a mode-0500 directory (left 500 MB in TMPDIR on every
    unprivileged run before): beyond the total budget from the headers, TMPDIR clean."""
    m = base_members(env) + [directory("sys/ro", 0o500)]
    ti = tarfile.TarInfo("sys/ro/f000")
    ti.size = 1 << 20
    h = Headers(ti)
    zeros = gz(b"\0" * (1 << 20))  # one compressed MiB, repeated: a gzip member each
    files = [gz(h("sys/ro/f%03d" % i)) + zeros for i in range(500)]
    return write_bundle(os.path.join(env.tmp, "total.tar.gz"), m, files), "refused", ["128 MiB", "budget"]


def case_depth(env):
    name = "/".join(["d"] * 65)
    m = base_members(env) + [reg("sys/" + name)]
    return write_bundle(os.path.join(env.tmp, "depth.tar.gz"), m), "refused", ["66 levels", "64", "budget"]


def case_depth_twin(env):
    name = "/".join(["d"] * 63)  # sys/ + 63: 64 levels, the budget itself
    m = base_members(env) + [reg("sys/" + name)]
    return write_bundle(os.path.join(env.tmp, "depth-twin.tar.gz"), m), "replays", []


def case_path_length(env):
    name = "sys/" + "/".join(["p" * 99] * 11)  # 4 + 11 * 100 - 1 = 1103 bytes, 12 levels
    m = base_members(env) + [reg(name)]
    return write_bundle(os.path.join(env.tmp, "pathlen.tar.gz"), m), "refused", ["1103 bytes", "1024", "budget"]


def case_path_length_twin(env):
    name = "sys/" + "/".join(["p" * 99] * 10) + "/" + "p" * 20  # 1024 bytes, the budget itself
    assert len(name) == 1024
    m = base_members(env) + [reg(name)]
    return write_bundle(os.path.join(env.tmp, "pathlen-twin.tar.gz"), m), "replays", []


def case_file_size(env):
    m = base_members(env) + [reg("sys/big", b"0" * ((1 << 20) + 1))]
    return write_bundle(os.path.join(env.tmp, "file-size.tar.gz"), m), "refused", ["1048577 bytes", "1048576",
                                                                                  "budget"]


def case_check_json_big(env):
    """The snapshot's own check.json is as big as a report may be, not a reader's file: 2 MiB of
    it replays (the reader's limit is 1 MiB)."""
    m = []
    for ti, d in base_members(env):
        if ti.name == ".numastor/check.json":
            d = d.rstrip() + b" " * (2 << 20) + b"\n"
            ti = tarfile.TarInfo(ti.name)
            ti.size = len(d)
        m.append((ti, d))
    return write_bundle(os.path.join(env.tmp, "check-json-2m.tar.gz"), m), "replays", []


def case_check_json_over(env):
    m = []
    for ti, d in base_members(env):
        if ti.name == ".numastor/check.json":
            d = b" " * ((256 << 20) + 1)
            ti = tarfile.TarInfo(ti.name)
            ti.size = len(d)
        m.append((ti, d))
    return write_bundle(os.path.join(env.tmp, "check-json-over.tar.gz"), m), "refused", [
        "268435457 bytes", "268435456", "check's JSON"]


def case_duplicate(env):
    m = base_members(env) + [reg("proc/sys/kernel/osrelease", b"6.1.0\n")]
    return write_bundle(os.path.join(env.tmp, "duplicate.tar.gz"), m), "refused", [
        "'proc/sys/kernel/osrelease' appears twice"]


def case_mode0500(env):
    """A mode-0500 directory with files that replays: TMPDIR is clean afterwards (unprivileged)."""
    m = base_members(env) + [directory("sys/ro", 0o500)] + [reg("sys/ro/f%d" % i, b"x" * 4096) for i in range(50)]
    m += [directory("sys/ro/none", 0o000), directory("sys/ro/sub", 0o500)]
    return write_bundle(os.path.join(env.tmp, "mode0500.tar.gz"), m), "replays", []


CASES = {
    "node1000000": case_node1000000,
    "node200000": case_node200000,
    "cpu-id": case_cpu_id,
    "dirs1100k": case_dirs1100k,
    "cpulist-ranges": case_cpulist_ranges,
    "total-mode0500": case_total,
    "depth": case_depth,
    "depth-twin": case_depth_twin,
    "path-length": case_path_length,
    "path-length-twin": case_path_length_twin,
    "file-size": case_file_size,
    "check-json-2m": case_check_json_big,
    "check-json-over": case_check_json_over,
    "duplicate": case_duplicate,
    "mode0500": case_mode0500,
}


def run_case(env, name):
    bundle, expect, words = CASES[name](env)
    os.chmod(bundle, 0o644)
    penv = dict(os.environ, TMPDIR=env.tmpdir)
    if expect == "refused" and name not in LATE:
        # refused from the headers: not one entry extracted, so a delay after each one
        # extracted costs nothing (a test build has the hook; any other passes regardless)
        penv["NUMASTOR_TEST_EXTRACT_DELAY_MS"] = str(int(EXTRACT_DELAY * env.slow * 1000))
    cmd = env.unprivileged([env.numastor, "check", "--snapshot", bundle, "--json"])
    early = expect == "refused" and name not in LATE
    rc, out, err, cpu, wall, rss = run_measured(cmd, penv, (EXTRACT_DELAY + WALL_LIMIT) * env.slow if early else 120)
    size = os.path.getsize(bundle)
    what = f"{name} ({size // 1024} KB bundle): exit {rc}, {cpu:.2f} s CPU, {wall:.2f} s wall, {rss:.0f} MiB"
    left = env.leftovers()
    if rc == "timeout":
        env.clean()
        return fail(f"{what}: killed after {wall:.0f} s")
    if left:
        env.clean()
        return fail(f"{what}: left in TMPDIR: {left}")
    if early and wall >= EXTRACT_DELAY * env.slow:
        return fail(f"{what}: refused only after extracting (a {EXTRACT_DELAY * env.slow} s delay per entry extracted was "
                    "paid): the budget was not checked before the work")
    if expect == "refused":
        msg = err.strip()
        if rc != 3:
            return fail(f"{what}: expected exit 3; stderr: {msg[:300]}")
        missing = [w for w in words if w not in msg]
        if missing or not msg.startswith("numastor check: ") or "(null)" in msg:
            return fail(f"{what}: the message lacks {missing}: {msg[:300]!r}")
        if out and not is_error_document(out, msg):
            return fail(f"{what}: printed a report: {out[:100]!r}")
    elif expect == "replays":
        if rc not in (0, 1, 2):
            return fail(f"{what}: expected a report (exit 0-2); stderr: {err.strip()[:300]}")
        try:
            json.loads(out)
        except ValueError as e:
            return fail(f"{what}: the report is not JSON: {e}")
    elif rc not in (0, 1, 2, 3):
        return fail(f"{what}: exit {rc}: {err.strip()[:300]}")
    if cpu > CPU_LIMIT * env.slow or wall > WALL_LIMIT * env.slow:
        return fail(f"{what}: beyond {CPU_LIMIT * env.slow} s of CPU or {WALL_LIMIT * env.slow} s of wall time")
    print(f"PASS {what}: {err.strip()[:160]}")


# ---- aliases: many entries of sys/block for one disk (issue 28, item 5) ----

def alias_fixture(env, name, links, fixture="vm-1n-virtio-blk", where="sys/block"):
    """The fixture machine (the base one unless told) generated into env.tmp/NAME, with links
    added to its directory WHERE ({entry: target}): the tree."""
    out = os.path.join(env.tmp, name)
    subprocess.run([sys.executable, os.path.join(HERE, "fixtures", "gen-fixtures.py"), out, fixture],
                   check=True, stdout=subprocess.DEVNULL)
    tree = os.path.join(out, fixture)
    block = os.path.join(tree, where)
    for entry, target in links.items():
        os.symlink(target, os.path.join(block, entry))
    return tree


def alias_bundle(env, name, parent, target, n):
    """The base bundle with n more links parent/x0 .. parent/x<n-1> to target, their headers
    made from one template (fast)."""
    ti = tarfile.TarInfo(parent + "/x0")
    ti.type = tarfile.SYMTYPE
    ti.linkname = target
    ti.mode = 0o777
    h = Headers(ti)
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    links = b"".join(c.compress(h("%s/x%d" % (parent, i))) for i in range(n)) + c.flush()
    members = base_members(env)
    if not any(m.name == parent for m, _ in members):
        members.append(directory(parent))
    return write_bundle(os.path.join(env.tmp, name + ".tar.gz"), members, [links])


def report(env, args, cpu_limit, what, extra_env=None, timeout=120):
    """check ARGS, measured; (returncode, stdout, CPU seconds) when within cpu_limit and
    MEM_LIMIT (times env.slow: a sanitizer build's shadow memory and checks), else None after a
    failure."""
    penv = dict(os.environ, TMPDIR=env.tmpdir, **(extra_env or {}))
    rc, out, err, cpu, wall, rss = run_measured([env.numastor, "check"] + args, penv, timeout)
    line = f"{what}: exit {rc}, {cpu:.2f} s CPU, {wall:.2f} s wall, {rss:.0f} MiB, {len(out)} bytes out"
    if rc not in (0, 1, 2):
        fail(f"{line}: expected a report (exit 0-2): {err.strip()[:300]}")
        return None
    if cpu > cpu_limit or rss > MEM_LIMIT * env.slow:
        fail(f"{line}: beyond {cpu_limit:.2f} s of CPU or {MEM_LIMIT * env.slow} MiB")
        return None
    print(f"PASS {line}")
    return rc, out, cpu


def alias_notes(doc):
    return [n for n in doc["notes"] if "entries of /sys/block" in n["message"] or
            "entry of /sys/block" in n["message"]]


def flat(text):
    """The text report with its wrapped lines joined: one space between words."""
    return " ".join(text.split())


def table_names(text):
    """The NAME column of the text report's device table."""
    lines = text.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.split()[:2] == ["NAME", "TYPE"])
    except StopIteration:
        return []
    names = []
    for l in lines[start + 1:]:
        if not l.strip():
            break
        names.append(l.split()[0])
    return names


def aliases_case(env):
    """20,000 links of sys/block to the disk vda, as a tree and as a bundle (131 KB): the report
    is the machine's own (each of its disks once) with one note naming how many entries were
    ignored, in --json and in text, within a second of CPU and 32 MiB. The bundle's own
    extraction (20,000 entries: libarchive's checked writes) is measured apart, with the same
    links where no reader looks (sys/zzz), and not counted against the aliases."""
    base_tree = alias_fixture(env, "alias-base", {})
    expect = sorted(os.listdir(os.path.join(base_tree, "sys", "block")))
    target = os.readlink(os.path.join(base_tree, "sys", "block", "vda"))
    tree = alias_fixture(env, "alias-tree", {"x%d" % i: target for i in range(ALIASES)})
    bundle = alias_bundle(env, "aliases", "sys/block", target, ALIASES)
    twin = alias_bundle(env, "aliases-extract", "sys/zzz", "../block/vda", ALIASES)
    limit = CPU_LIMIT * env.slow
    r = report(env, ["--snapshot", twin, "--json"], 60, f"the extraction alone ({ALIASES} links in sys/zzz)")
    extraction = r[2] if r else 0.0
    size = os.path.getsize(bundle) // 1024
    for where, args, cpu_limit in (("tree", ["--sysroot", tree], limit),
                                   (f"bundle ({size} KB)", ["--snapshot", bundle], extraction + limit)):
        what = f"{ALIASES} aliases of vda, {where}"
        r = report(env, args + ["--json"], cpu_limit, what + ", --json")
        if r:
            doc = json.loads(r[1])
            names = [d["name"] for d in doc["devices"]]
            notes = alias_notes(doc)
            if sorted(names) != expect:
                fail(f"{what}: devices {names[:8]}{'...' if len(names) > 8 else ''} ({len(names)}), "
                     f"expected the machine's own {expect}")
            elif (len(notes) != 1 or notes[0]["subject"] != "vda"
                  or f"{ALIASES} other entries of /sys/block (x0, x1, x2, ...)" not in notes[0]["message"]):
                fail(f"{what}: expected one note on vda naming the {ALIASES} entries, got {notes[:3]}")
            else:
                print(f"PASS {what}: the machine's {len(names)} devices, one note: {notes[0]['message']}")
        r = report(env, args, cpu_limit, what + ", text")
        if r:
            text = r[1]
            said = flat(text).count(f"{ALIASES} other entries of /sys/block")
            rows = table_names(text)
            if sorted(rows) != expect or said != 1:
                fail(f"{what}, text: device rows {rows[:8]} (expected {expect}), the note said {said} times")
            else:
                print(f"PASS {what}, text: {len(rows)} device rows, the note once")


def aliases_twin_case(env):
    """What must not be taken for an alias: the machine's distinct disks (loop0, zram0 and dm-0
    share a parent directory) are each listed, with no note; one alias that sorts before its disk
    (a0) leaves the disk listed under its own name, and naming the alias on the command line
    names the disk."""
    base_tree = alias_fixture(env, "twin-base", {})
    expect = sorted(os.listdir(os.path.join(base_tree, "sys", "block")))
    r = report(env, ["--sysroot", base_tree, "--json"], CPU_LIMIT * env.slow, "no aliases, --json")
    if r:
        doc = json.loads(r[1])
        names = sorted(d["name"] for d in doc["devices"])
        if names != expect or alias_notes(doc):
            fail(f"no aliases: devices {names}, expected {expect}; alias notes {alias_notes(doc)}")
        else:
            print(f"PASS no aliases: each of the {len(names)} disks listed, no alias note")
    target = os.readlink(os.path.join(base_tree, "sys", "block", "vda"))
    tree = alias_fixture(env, "twin-a0", {"a0": target})
    r = report(env, ["--sysroot", tree, "--json"], CPU_LIMIT * env.slow, "one alias a0 of vda, --json")
    if r:
        doc = json.loads(r[1])
        names = sorted(d["name"] for d in doc["devices"])
        notes = alias_notes(doc)
        if (names != expect or len(notes) != 1 or notes[0]["subject"] != "vda"
                or "1 other entry of /sys/block (a0) resolves to the disk vda" not in notes[0]["message"]):
            fail(f"one alias a0: devices {names}, expected {expect} (vda under its own name); notes {notes}")
        else:
            print(f"PASS one alias a0: vda listed under its own name, {notes[0]['message']}")
    r = report(env, ["--sysroot", tree, "--json", "a0"], CPU_LIMIT * env.slow, "check a0 (the alias), --json")
    if r:
        names = [d["name"] for d in json.loads(r[1])["devices"]]
        if names != ["vda"]:
            fail(f"check a0: devices {names}, expected the disk it resolves to, vda")
        else:
            print("PASS check a0: the disk it resolves to, vda")


def path_aliases_case(env):
    """20,000 entries of an NVMe multipath head's multipath/ that link to one of its two paths
    (they cost 27 s of CPU and 131 MB of JSON, 20,002 paths): its two paths, the others noted
    once, within a second and 32 MiB."""
    head = "sys/devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1/multipath"
    fixture = "nvme-multipath-2ctrl-2nodes-612"
    base = alias_fixture(env, "paths-base", {}, fixture, head)
    target = os.readlink(os.path.join(base, head, "nvme0c0n1"))
    tree = alias_fixture(env, "paths", {"zz%d" % i: target for i in range(ALIASES)}, fixture, head)
    what = f"{ALIASES} entries of nvme0n1's multipath/ for its path nvme0c0n1"
    r = report(env, ["--sysroot", tree, "--json"], CPU_LIMIT * env.slow, what, timeout=10 * env.slow)
    if r:
        doc = json.loads(r[1])
        paths = [p["controller"] for d in doc["devices"] if d["name"] == "nvme0n1" for p in d["paths"]]
        notes = [n for n in doc["notes"] if n["subject"] == "nvme0n1" and n["field"] == "paths"]
        if (paths != ["nvme0", "nvme1"] or len(notes) != 1
                or f"{ALIASES} more entries of its paths resolve to a path already listed" not in notes[0]["message"]):
            fail(f"{what}: paths {paths[:4]} ({len(paths)}), expected nvme0 and nvme1; notes {notes[:2]}")
        else:
            print(f"PASS {what}: its 2 paths, one note: {notes[0]['message']}")


def stacked_diamond_case(env):
    """dm-0 sits on the 30 partitions of dm-1, which sits on the 30 of dm-2, ... down to dm-8 on
    vda1: each stacked device is walked once for its md/dm above, not once per path to it (30^8
    walks, which never ended): within a second, the one member vda found."""
    tree = alias_fixture(env, "diamond", {})
    sysd = os.path.join(tree, "sys")
    width, depth = 30, 8
    top_slaves = os.path.join(sysd, "devices/virtual/block/dm-0/slaves")
    leaf = os.readlink(os.path.join(top_slaves, "vda1"))  # ../../../../pci...: from any dm-K/slaves
    for e in os.listdir(top_slaves):
        os.unlink(os.path.join(top_slaves, e))
    for k in range(1, depth + 1):
        dev = f"devices/virtual/block/dm-{k}"
        os.makedirs(os.path.join(sysd, dev, "slaves"))
        os.symlink(f"../../{dev}", os.path.join(sysd, "class/block", f"dm-{k}"))
        above = os.path.join(sysd, f"devices/virtual/block/dm-{k - 1}/slaves")
        for j in range(1, width + 1):
            part = os.path.join(sysd, dev, f"dm-{k}p{j}")
            os.makedirs(part)
            with open(os.path.join(part, "partition"), "w") as f:
                f.write(f"{j}\n")
            os.symlink(f"../../{dev}/dm-{k}p{j}", os.path.join(sysd, "class/block", f"dm-{k}p{j}"))
            os.symlink(f"../../dm-{k}/dm-{k}p{j}", os.path.join(above, f"dm-{k}p{j}"))
    os.symlink(leaf, os.path.join(sysd, f"devices/virtual/block/dm-{depth}/slaves/vda1"))
    what = f"dm-0 on {depth} levels of dm, each on {width} partitions of the next"
    r = report(env, ["--sysroot", tree, "--verbose", "dm-0"], CPU_LIMIT * env.slow, what,
               timeout=10 * env.slow)
    if r:
        members = [l.split()[1].rstrip(":") for l in r[1].splitlines() if l.strip().startswith("member ")]
        if members != ["vda"]:
            fail(f"{what}: members {members}, expected vda")
        else:
            print(f"PASS {what}: its one member, vda")


# ---- cleanup on signals ----

def signal_case(env, sig):
    """Killed during the extraction (slowed by NUMASTOR_TEST_EXTRACT_DELAY_MS, with a 0500
    directory already extracted), unprivileged: TMPDIR is clean and the process died of sig."""
    m = base_members(env)
    m = m[:20] + [directory("sys/ro", 0o500), reg("sys/ro/f", b"x" * 4096)] + m[20:]
    bundle = write_bundle(os.path.join(env.tmp, "signal.tar.gz"), m)
    os.chmod(bundle, 0o644)
    penv = dict(os.environ, TMPDIR=env.tmpdir, NUMASTOR_TEST_EXTRACT_DELAY_MS="20")
    cmd = env.unprivileged([env.numastor, "check", "--snapshot", bundle])
    p = subprocess.Popen(cmd, env=penv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    started = False
    while time.monotonic() < deadline and not started:
        for n in os.listdir(env.tmpdir):
            if os.path.exists(os.path.join(env.tmpdir, n, "sys", "ro", "f")):
                started = True
        time.sleep(0.01)
    if not started:
        p.kill()
        p.wait()
        env.clean()
        return fail(f"signal {sig.name}: the extraction never reached sys/ro/f (does this build have test hooks?)")
    # setpriv execs numastor in place: p.pid is numastor's
    os.kill(p.pid, sig)
    p.communicate(timeout=10)
    left = env.leftovers()
    if left:
        env.clean()
        return fail(f"signal {sig.name} during the extraction: left in TMPDIR: {left}")
    if p.returncode != -sig:
        return fail(f"signal {sig.name}: exit {p.returncode}, expected death by the signal")
    print(f"PASS signal {sig.name} during the extraction: TMPDIR clean, died of it")


def sigpipe_case(env):
    """The report's reader goes away (check --json | head -1): SIGPIPE, TMPDIR clean."""
    m = base_members(env) + [directory("sys/ro", 0o500), reg("sys/ro/f")]
    bundle = write_bundle(os.path.join(env.tmp, "sigpipe.tar.gz"), m)
    os.chmod(bundle, 0o644)
    penv = dict(os.environ, TMPDIR=env.tmpdir)
    r, w = os.pipe()
    os.close(r)  # nobody reads: the first write gets SIGPIPE
    cmd = env.unprivileged([env.numastor, "check", "--snapshot", bundle, "--json"])
    p = subprocess.Popen(cmd, env=penv, stdout=w, stderr=subprocess.DEVNULL)
    os.close(w)
    p.wait(timeout=30)
    left = env.leftovers()
    if left:
        env.clean()
        return fail(f"SIGPIPE: left in TMPDIR: {left}")
    if p.returncode != -signal.SIGPIPE:
        return fail(f"SIGPIPE: exit {p.returncode}, expected death by SIGPIPE")
    print("PASS SIGPIPE while writing the report: TMPDIR clean")


# ---- the JSON report's budget ----

def json_budget_case(env):
    """A report beyond its budget (lowered through NUMASTOR_TEST_JSON_MAX) is refused whole:
    exit 3, nothing on stdout; at exactly its size it is written as without the budget."""
    bundle = write_bundle(os.path.join(env.tmp, "json-budget.tar.gz"), base_members(env))
    # generated_at fixed: two runs a second apart must print the same bytes
    penv = dict(os.environ, TMPDIR=env.tmpdir, NUMASTOR_TEST_NOW="1767225600")
    p = subprocess.run([env.numastor, "check", "--snapshot", bundle, "--json"], env=penv, capture_output=True)
    if p.returncode not in (0, 1, 2):
        return fail(f"json budget: the plain replay exited {p.returncode}")
    size = len(p.stdout)
    q = subprocess.run([env.numastor, "check", "--snapshot", bundle, "--json"], capture_output=True,
                       env=dict(penv, NUMASTOR_TEST_JSON_MAX=str(size)))
    if q.returncode != p.returncode or q.stdout != p.stdout:
        return fail(f"json budget: a report of exactly its budget ({size} bytes) was not written whole: "
                    f"exit {q.returncode}, {len(q.stdout)} bytes")
    q = subprocess.run([env.numastor, "check", "--snapshot", bundle, "--json"], capture_output=True,
                       env=dict(penv, NUMASTOR_TEST_JSON_MAX=str(size - 1)))
    msg = q.stderr.decode(errors="replace")
    if (q.returncode != 3 or not is_error_document(q.stdout.decode(errors="replace"), msg)
            or f"more than {size - 1} bytes" not in msg or "budget" not in msg):
        return fail(f"json budget: one byte over: exit {q.returncode}, {len(q.stdout)} bytes out, {msg!r}")
    # standard output a regular file (written in one pass, cut back when refused; here appended
    # to, after what the file held) or /dev/null: the same two outcomes
    redirected = os.path.join(env.tmp, "redirected.json")
    for budget, want_report in ((size, True), (size - 1, False)):
        with open(redirected, "wb") as f:
            f.write(b"kept\n")
        with open(redirected, "ab") as f:
            q = subprocess.run([env.numastor, "check", "--snapshot", bundle, "--json"], stdout=f,
                               stderr=subprocess.PIPE, env=dict(penv, NUMASTOR_TEST_JSON_MAX=str(budget)))
        data = open(redirected, "rb").read()
        body = data[len(b"kept\n"):] if data.startswith(b"kept\n") else None
        ok = (body == p.stdout and q.returncode == p.returncode) if want_report else (
            q.returncode == 3 and body is not None and is_error_document(body.decode(errors="replace"),
                                                                         q.stderr.decode(errors="replace")))
        if not ok:
            return fail(f"json budget: standard output a file, budget {budget} of {size}: exit {q.returncode}, "
                        f"the file holds {data[:120]!r}...: expected what it held, then "
                        f"{'the report' if want_report else 'the error document alone'}")
        with open(os.devnull, "wb") as f:
            q = subprocess.run([env.numastor, "check", "--snapshot", bundle, "--json"], stdout=f,
                               stderr=subprocess.PIPE, env=dict(penv, NUMASTOR_TEST_JSON_MAX=str(budget)))
        if q.returncode != (p.returncode if want_report else 3):
            return fail(f"json budget: standard output /dev/null, budget {budget} of {size}: exit {q.returncode}")
    # a document well past the writer's 64 KiB staging: refused after some of it went to the file
    fx = os.path.join(env.tmp, "json-budget-fx")
    name = "cloud-2n64c-8nvme-forced-node0"
    subprocess.run([sys.executable, os.path.join(HERE, "fixtures", "gen-fixtures.py"), fx, name], check=True,
                   stdout=subprocess.DEVNULL)
    with open(redirected, "wb") as f:
        f.write(b"kept\n")
    with open(redirected, "ab") as f:
        q = subprocess.run([env.numastor, "check", "--sysroot", os.path.join(fx, name), "--json"], stdout=f,
                           stderr=subprocess.PIPE, env=dict(penv, NUMASTOR_TEST_JSON_MAX=str(200000)))
    data = open(redirected, "rb").read()
    if (q.returncode != 3 or not data.startswith(b"kept\n")
            or not is_error_document(data[5:].decode(errors="replace"), q.stderr.decode(errors="replace"))):
        return fail(f"json budget: {name}'s report refused at 200000 bytes into a file: exit {q.returncode}, "
                    f"{len(data)} bytes there: expected what the file held, then the error document alone")
    out = os.path.join(env.tmp, "report.json")
    q = subprocess.run([env.numastor, "check", "--snapshot", bundle, "--json", "-O", out], capture_output=True,
                       env=dict(penv, NUMASTOR_TEST_JSON_MAX=str(size - 1)))
    # the report is not written; the failure is, in its place (a fleet must not read an old
    # verdict there): the error document, and no temporary file beside it
    left = sorted(n for n in os.listdir(env.tmp) if n.startswith("report.json"))
    text = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
    if q.returncode != 3 or left != ["report.json"] or not is_error_document(text, q.stderr.decode(errors="replace")):
        return fail(f"json budget: -O over the budget: exit {q.returncode}, files {left}, "
                    f"not the error document: {text[:200]!r}")
    print(f"PASS json budget: {size} bytes written at a budget of {size}, refused at {size - 1}: {msg.strip()}")


def capture_case(env):
    """numastor snapshot does not write what a replay would refuse: a tree whose node0 lists
    cpu100000 is not captured (exit 3, the budget named, no file), its twin is."""
    fx = os.path.join(env.tmp, "capture-fx")
    subprocess.run([sys.executable, os.path.join(HERE, "fixtures", "gen-fixtures.py"), fx, "vm-1n-virtio-blk"],
                   check=True, stdout=subprocess.DEVNULL)
    tree = os.path.join(fx, "vm-1n-virtio-blk")
    out = os.path.join(env.tmp, "capture.tar.gz")
    p = subprocess.run([env.numastor, "snapshot", "-O", out, "--sysroot", tree], capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(out):
        return fail(f"capture twin: the plain tree was not captured: exit {p.returncode}: {p.stderr[:200]}")
    os.unlink(out)
    os.symlink("../../cpu/cpu0", os.path.join(tree, "sys/devices/system/node/node0/cpu100000"))
    p = subprocess.run([env.numastor, "snapshot", "-O", out, "--sysroot", tree], capture_output=True, text=True)
    left = [n for n in os.listdir(env.tmp) if n.startswith("capture.tar.gz")]
    msg = p.stderr.strip()
    if p.returncode != 3 or left or "CPU 100000" not in msg or "budget" not in msg:
        return fail(f"capture: a tree beyond the CPU id budget: exit {p.returncode}, files {left}, {msg!r}")
    print(f"PASS capture: {msg[:200]}")


def docs_case():
    """Every budget of lib/out/snapshot.h is in numastor-snapshot(8) with its value."""
    top = os.path.dirname(HERE)
    header = open(os.path.join(top, "lib", "out", "snapshot.h")).read()
    page = open(os.path.join(top, "man", "numastor-snapshot.8.scd")).read()
    shown = {"NS_SNAPSHOT_MAX_FILE": "*A file the reader reads*: 1 MiB",
             "NS_SNAPSHOT_MAX_JSON": "*.numastor/check.json*: 256 MiB",
             "NS_SNAPSHOT_MAX_TOTAL": "*Total bytes*: 128 MiB",
             "NS_SNAPSHOT_MAX_ENTRIES": "*Entries*: 1048576",
             "NS_SNAPSHOT_MAX_DEPTH": "*Depth*: 64",
             "NS_SNAPSHOT_MAX_PATH": "*Path length*: 1024 bytes",
             "NS_SNAPSHOT_MAX_NODE": "*Node ids*: below 1024",
             "NS_SNAPSHOT_MAX_CPU": "*CPU ids*: below 8192"}
    values = {"NS_SNAPSHOT_MAX_FILE": "NS_READ_MAX", "NS_SNAPSHOT_MAX_JSON": "(256u << 20)",
              "NS_SNAPSHOT_MAX_TOTAL": "(128u << 20)", "NS_SNAPSHOT_MAX_ENTRIES": "1048576u",
              "NS_SNAPSHOT_MAX_DEPTH": "64u", "NS_SNAPSHOT_MAX_PATH": "1024u", "NS_SNAPSHOT_MAX_NODE": "1024u",
              "NS_SNAPSHOT_MAX_CPU": "8192u"}
    defined = {}
    for line in header.splitlines():
        f = line.split(None, 2)
        if len(f) == 3 and f[0] == "#define" and f[1].startswith("NS_SNAPSHOT_MAX_"):
            defined[f[1]] = f[2].split("/*")[0].strip()
    ok = True
    if set(defined) != set(shown):
        fail(f"docs: lib/out/snapshot.h's budgets {sorted(defined)} are not the ones this test knows")
        ok = False
    for k, text in shown.items():
        if defined.get(k) != values[k]:
            fail(f"docs: {k} is {defined.get(k)} in lib/out/snapshot.h, the man page says {text!r}")
            ok = False
        if text not in page:
            fail(f"docs: numastor-snapshot(8) lacks {text!r}")
            ok = False
    if "*JSON report*: 256 MiB" not in page:
        fail("docs: numastor-snapshot(8) lacks the JSON report's budget")
        ok = False
    if ok:
        print("PASS docs: every budget in numastor-snapshot(8) with its value")


def main():
    numastor = os.path.abspath(sys.argv[1])
    only = sys.argv[2:]
    with tempfile.TemporaryDirectory(prefix="numastor-budgets.", dir=SCRATCH) as tmp:
        env = Env(numastor, tmp)
        # a sanitizer build (ASan+UBSan) runs the header pass about 5 times slower: the 1,048,577
        # headers of dirs1100k read before the refusal take about 4 times what 262,145 took (0.4 s)
        ldd = subprocess.run(["ldd", numastor], capture_output=True, text=True).stdout
        env.slow = 5 if "libasan" in ldd or "libubsan" in ldd else 1
        print(f"# unprivileged runs as uid {env.user[0]}" if env.user else
              "# running as uid %d" % os.geteuid())
        for name in CASES:
            if not only or name in only:
                run_case(env, name)
        if not only or "signals" in only:
            signal_case(env, signal.SIGTERM)
            signal_case(env, signal.SIGINT)
            sigpipe_case(env)
        if not only or "json-budget" in only:
            json_budget_case(env)
        if not only or "capture" in only:
            capture_case(env)
        if not only or "aliases" in only:
            aliases_case(env)
        if not only or "aliases-twin" in only:
            aliases_twin_case(env)
        if not only or "path-aliases" in only:
            path_aliases_case(env)
        if not only or "stacked-diamond" in only:
            stacked_diamond_case(env)
        if not only or "docs" in only:
            docs_case()
        env.clean()
    print(f"budgets: {'failed' if failures else 'all passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
