#!/usr/bin/env python3
"""A read that fails never changes the answer silently (issue 36).

`check --json` on every fixture machine under tests/fixtures/faults/faultshim.c, an LD_PRELOAD
shim that fails the Nth open/openat/openat2, read, readdir or readlink under the root with EIO,
EMFILE, ENOMEM, EINTR or EAGAIN, N spread over the calls a clean run makes. Each run must:

- exit with a documented status (0-3: numastor-check(8) EXIT STATUS) and no sanitizer report;
- with EINTR (open, read, readdir) or EAGAIN (open: openat2's answer to a racing rename, the
  cause of the issue) print exactly the clean run's devices and notes: the reader retries;
- otherwise print the clean run's devices, every value of each (the queues, the scheduler, the
  identity, the node and the evidence of its verdict: the findings and the verdict rest on
  them), or a note naming the path it could not read (or a directory above it, or a link on
  the way to it), or fail as a whole with the error on stderr and in the error document.
  NUMASTOR_FAULTS_STRICT=0 compares the devices by name only (the test before issue 36's
  second half). A read whose failure is noted leaves that one fact unknown; an absent file
  where absence is an answer (-ENOENT: no scheduler or mq/ on a bio-based disk, no taint file
  on a built-in module, no channels/ before 4.14) keeps its meaning, and the shim never fails
  a call with -ENOENT.

`check --map` on the multipath fixtures is held to the same rule (the device lines the clean
map draws, or a note). The case of the issue is pinned on its own: nvme-fc with its path
disk's `hidden` unreadable (a directory: EISDIR) lists the path disk only with a note saying so;
so are the files in PINNED (a vector's debugfs irqs/N, a queue's scheduler), made directories:
the spread positions above move whenever the reader's calls do, so one file cannot rely on them.

A small RLIMIT_NOFILE (8 and 12 descriptors) with one and eight reader threads: the clean report
or a note of EMFILE. An allocation that fails (NUMASTOR_TEST_ALLOC_FAIL=N: the Nth of numastor's own, lib/base/oom.h)
fails the run as a whole on every fixture: exit 3 and "out of memory" on stderr; check stops at
once (--json and text, and -O leaves no file behind), fix --dry-run goes on along its own error
paths and fails at the end; never a crash, a sanitizer's report or another answer.

    check-faults.py NUMASTOR FAULTSHIM.so [FIXTURE...]
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
RETRIED = {"EINTR": "open,read,readdir", "EAGAIN": "open"}
NOTED = ["EIO", "EMFILE", "ENOMEM"]
PER_ERRNO = 3  # positions per errno and fixture (spread, offset per errno)
MAP_FIXTURES = ("nvme-fc", "nvme-multipath-2ctrl-2nodes", "nvme-multipath-72-numa", "nvme-rdma")
SANITIZER = ("AddressSanitizer", "runtime error:", "LeakSanitizer", "UndefinedBehaviorSanitizer")

failures = []


def fail(name, msg):
    failures.append(f"{name}: {msg}")
    print(f"  FAIL {name}: {msg}")
    if os.environ.get("NUMASTOR_FAIL_FAST") == "1":
        sys.exit(1)


def base_env(asan=None, **extra):
    """A run's environment: a fixed clock, the C.UTF-8 locale, no colour, no COLUMNS; asan added
    to ASAN_OPTIONS."""
    env = dict(os.environ, NUMASTOR_TEST_NOW="1700000000", LANG="C.UTF-8", LC_ALL="C.UTF-8", NO_COLOR="1",
               **extra)
    env.pop("COLUMNS", None)
    if asan:
        env["ASAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), asan]))
    return env


def run(numastor, shim, root, log, args, n=0, err="EIO", ops="open,read,readdir,readlink"):
    # an ASan build: the shim is preloaded ahead of the sanitizer runtime, which ASan refuses
    # unless told the order does not matter (the shim is built without the sanitizer)
    env = base_env("verify_asan_link_order=0", FAULT_ROOT=root, FAULT_N=str(n), FAULT_ERRNO=err, FAULT_OPS=ops,
                   FAULT_LOG=log, LD_PRELOAD=shim)
    if os.path.exists(log):
        os.unlink(log)
    p = subprocess.run([numastor, "check", "--sysroot", root, *args], capture_output=True, env=env)
    count, failed = 0, None
    if os.path.exists(log):
        for line in open(log):
            k, _, v = line.rstrip("\n").partition(" ")
            if k == "count":
                count = int(v)
            elif k == "failed":
                failed = v.split(" ", 1)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"), count, failed


def notes_of(doc):
    return [n.get("message", "") for n in doc.get("notes", [])]


def names_path(failed, messages, root=None):
    """Does a note name the path failed (or a directory above it, or, under root, a link that
    leads through it: sys/class/net/eth1/device for a failed readlink of the netdev's own
    directory under sys/devices)?"""
    path = "/" + failed[1]
    while path not in ("", "/"):
        if any(path + " " in m or path + ":" in m or path + "/" in m or m.endswith(path) for m in messages):
            return True
        path = path.rsplit("/", 1)[0]
    if root:
        want = os.path.realpath(root + "/" + failed[1])
        for m in messages:
            for word in m.split():
                word = word.rstrip(":,;()")
                parts = word.split("/")
                for k in range(2, len(parts) + 1) if word.startswith("/") else ():
                    if os.path.realpath(root + "/".join(parts[:k])) == want:
                        return True
    return False


def judge(name, what, rc, out, err, failed, clean, retried, root=None):
    if any(s in err for s in SANITIZER) or rc not in (0, 1, 2, 3):
        fail(name, f"{what}: exit {rc}, stderr {err.strip()[:300]!r}")
        return
    try:
        doc = json.loads(out)
    except ValueError:
        fail(name, f"{what}: not JSON (exit {rc}): {out[:200]!r}")
        return
    if "error" in doc:
        if retried or not err.strip() or rc != 3:
            fail(name, f"{what}: failed ({failed}): exit {rc}, {doc['error'].get('message')!r}")
        return
    # every value of the devices; NUMASTOR_FAULTS_STRICT=0: their names only
    if os.environ.get("NUMASTOR_FAULTS_STRICT", "1") != "0":
        same = doc.get("devices") == clean.get("devices")
    else:
        same = [d["name"] for d in doc.get("devices", [])] == [d["name"] for d in clean.get("devices", [])]
    if retried:
        if not same or notes_of(doc) != notes_of(clean):
            fail(name, f"{what}: {failed} is retried by the reader, yet the report changed "
                       f"(notes {notes_of(doc)[:3]})")
        return
    if not same and failed and not names_path(failed, notes_of(doc), root):
        before = [d["name"] for d in clean.get("devices", [])]
        after = [d["name"] for d in doc.get("devices", [])]
        fail(name, f"{what}: {failed[0]} of /{failed[1]} failed and the devices changed silently "
                   f"({before} -> {after}; notes {notes_of(doc)[:4]})")


def map_devices(out):
    return sorted(ln.split()[0] for ln in out.splitlines() if ln[:1] == " " and ln.split() and
                  ln.split()[0].startswith(("nvme", "sd", "vd", "md", "pmem", "xvd")))


def check_fixture(numastor, shim, name, root, tmp):
    """The shim's faults on one fixture: (the runs made, the clean report)."""
    log = os.path.join(tmp, "fault.log")
    rc, out, err, count, _ = run(numastor, shim, root, log, ["--json"])
    clean = json.loads(out)
    if count < 10:
        fail(name, f"the shim counted {count} calls under the root: it does not see the reader")
        return 0, clean
    runs = 0
    for e, errname in enumerate(NOTED + list(RETRIED)):
        ops = RETRIED.get(errname, "open,read,readdir,readlink")
        for k in range(PER_ERRNO):
            n = 1 + (count * (k * len(NOTED + list(RETRIED)) + e)) // (PER_ERRNO * (len(NOTED) + len(RETRIED)))
            rc, out, err, _, failed = run(numastor, shim, root, log, ["--json"], n, errname, ops)
            runs += 1
            judge(name, f"{errname} at call {n} of {count}", rc, out, err, failed, clean, errname in RETRIED,
                  root)
    if name in MAP_FIXTURES:
        _, clean_map, _, mcount, _ = run(numastor, shim, root, log, ["--map"])
        for k in range(6):
            n = 1 + mcount * k // 6
            rc, out, err, _, failed = run(numastor, shim, root, log, ["--map"], n, "EIO")
            runs += 1
            if any(s in err for s in SANITIZER) or rc not in (0, 1, 2, 3):
                fail(name, f"--map EIO at {n}: exit {rc}, {err.strip()[:200]!r}")
            elif rc == 3 and not out.strip() and err.strip():
                pass  # the run failed as a whole, and said why
            elif map_devices(out) != map_devices(clean_map) and failed and "/" + failed[1] not in out:
                fail(name, f"--map EIO at call {n}: /{failed[1]} failed and the map's devices changed "
                           f"silently ({map_devices(clean_map)} -> {map_devices(out)})")
    return runs, clean


ALLOC_PER_FIXTURE = 6  # allocation failures per fixture and output (--json, text), spread
ALLOC_FIX_FIXTURES = ("hba-isolated-node1-remote-host", "nvme-multipath-72-remote", "nvme-fc",
                      "twin-510-2n-forced-vs-described")


def run_alloc(numastor, root, args, n, countfile, command="check"):
    # an error path's leak is no wrong answer (the process ends); a use after free, a double free is
    env = base_env("detect_leaks=0", NUMASTOR_TEST_ALLOC_FAIL=str(n), NUMASTOR_TEST_ALLOC_COUNT=countfile)
    p = subprocess.run([numastor, command, "--sysroot", root, *args], capture_output=True, env=env)
    with open(countfile) as f:
        count = int(f.read() or 0)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"), count


def check_alloc(numastor, name, root, tmp):
    """An allocation that fails in numastor's code (NUMASTOR_TEST_ALLOC_FAIL=N, lib/base/oom.h)
    makes the run fail as a whole: exit 3 and "out of memory" or ENOMEM's message on stderr,
    never another answer with exit 0-2, a crash or a sanitizer's report. check stops at once
    (--json and text); fix (its plan, on the fixtures in ALLOC_FIX_FIXTURES) goes on along its own
    error paths and fails at the end."""
    countfile = os.path.join(tmp, "alloc.count")
    runs = 0
    forms = [("check", ["--json"]), ("check", [])]
    if name in ALLOC_FIX_FIXTURES:
        forms.append(("fix", ["--dry-run"]))
    for command, args in forms:
        rc, _, err, count = run_alloc(numastor, root, args, 0, countfile, command)
        if rc not in (0, 1, 2, 3) or count < 10:
            fail(name, f"alloc: clean {command} {' '.join(args) or 'text'} run: exit {rc}, {count} allocations counted "
                       f"({err.strip()[:200]!r})")
            continue
        for k in range(ALLOC_PER_FIXTURE):
            n = 1 + count * k // ALLOC_PER_FIXTURE + (count // ALLOC_PER_FIXTURE) * (len(args)) // 2
            n = min(n, count)
            rc, out, err, _ = run_alloc(numastor, root, args, n, countfile, command)
            runs += 1
            what = f"alloc {n} of {count} failed ({command} {' '.join(args) or 'text'})"
            if any(s in err for s in SANITIZER) or rc < 0:
                fail(name, f"{what}: exit {rc}, {err.strip()[-300:]!r}")
            elif rc != 3 or not ("out of memory" in err or "Cannot allocate memory" in err):
                fail(name, f"{what}: exit {rc}, not failed as a whole (stderr {err.strip()[:200]!r})")
            elif command == "check" and err.strip().splitlines()[-1:] != ["numastor check: out of memory"]:
                fail(name, f"{what}: check went on after the failure (stderr {err.strip()[-200:]!r})")
    # -O: the report is written beside its target and renamed; a run stopped for want of memory
    # leaves neither (the last allocation: the report's own)
    out = os.path.join(tmp, "alloc-out", "report.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    rc, _, err, count = run_alloc(numastor, root, ["--json", "-O", out], 0, countfile)
    if rc in (0, 1, 2, 3) and count >= 10:
        os.unlink(out)
        rc, _, err, _ = run_alloc(numastor, root, ["--json", "-O", out], count, countfile)
        runs += 1
        left = os.listdir(os.path.dirname(out))
        if rc != 3 or left:
            fail(name, f"alloc {count} of {count} failed (check --json -O): exit {rc}, left {left}")
    return runs


NOFILE_LIMITS = (8, 12)  # RLIMIT_NOFILE: the root, stdio and a few held directories
NOFILE_THREADS = (1, 8)


def check_nofile(numastor, name, root, clean):
    """A small RLIMIT_NOFILE (EMFILE from the kernel itself, not the shim) with one and with eight
    reader threads: the clean report, or a note saying so, or a failure as a whole."""
    runs = 0
    for lim in NOFILE_LIMITS:
        for threads in NOFILE_THREADS:
            env = base_env(NUMASTOR_THREADS=str(threads))
            p = subprocess.run([numastor, "check", "--sysroot", root, "--json"], capture_output=True, env=env,
                               preexec_fn=lambda lim=lim: resource.setrlimit(resource.RLIMIT_NOFILE, (lim, lim)))
            runs += 1
            err = p.stderr.decode("utf-8", "replace")
            what = f"RLIMIT_NOFILE {lim}, {threads} threads"
            if any(s in err for s in SANITIZER) or p.returncode not in (0, 1, 2, 3):
                fail(name, f"{what}: exit {p.returncode}, {err.strip()[-300:]!r}")
                continue
            try:
                doc = json.loads(p.stdout)
            except ValueError:
                if p.returncode != 3 or not err.strip():
                    fail(name, f"{what}: no report and no reason (exit {p.returncode})")
                continue
            if doc.get("error"):
                continue
            doc.pop("generated_at", None)
            want = dict(clean)
            want.pop("generated_at", None)
            if doc != want and not any("Too many open files" in (n.get("message") or "")
                                       for n in doc.get("notes", [])):
                fail(name, f"{what}: a report unlike the clean one with no note of EMFILE")
    return runs


def check_hidden_unreadable(numastor, shim, fx, tmp):
    """The issue's case: nvme-fc's path disk nvme1c1n1 with `hidden` a directory (EISDIR)."""
    root = os.path.join(tmp, "nvme-fc-hidden-eisdir")
    shutil.copytree(os.path.join(fx, "nvme-fc"), root, symlinks=True)
    hidden = os.path.realpath(os.path.join(root, "sys/block/nvme1c1n1")) + "/hidden"
    os.unlink(hidden)
    os.mkdir(hidden)
    rc, out, err, _, _ = run(numastor, shim, root, os.path.join(tmp, "h.log"), ["--json"])
    doc = json.loads(out)
    names = [d["name"] for d in doc.get("devices", [])]
    noted = [n for n in doc.get("notes", []) if n.get("subject") == "nvme1c1n1" and n.get("field") == "hidden"
             and "/sys/block/nvme1c1n1/hidden" in n.get("message", "")]
    if "nvme1c1n1" in names and not noted:
        fail("nvme-fc", f"hidden unreadable (EISDIR): nvme1c1n1 listed as a device with no note ({names})")
    elif not noted:
        fail("nvme-fc", f"hidden unreadable (EISDIR): no note names it ({doc.get('notes')})")
    else:
        print(f"  nvme-fc, hidden a directory: noted ({noted[0]['message']})")


# files made unreadable (a directory: EISDIR) on one fixture each, and the field whose note must
# name them: the spread positions above move whenever the reader's calls do, so a file that
# matters is pinned here as well
PINNED = (
    ("nvme-multipath-2ctrl-2nodes", "sys/kernel/debug/irq/irqs/64", "managed"),
    ("twin-510-2n-forced-vs-described", "sys/block/nvme0n1/queue/scheduler", "queue.scheduler"),
)


def check_pinned_unreadable(numastor, shim, fx, tmp, name, rel, field):
    """rel on fixture name made a directory: the fact is unknown and a note names the file."""
    root = os.path.join(tmp, "pinned-" + name)
    shutil.copytree(os.path.join(fx, name), root, symlinks=True)
    target = os.path.realpath(os.path.join(root, rel))
    if not os.path.isfile(target):
        fail(name, f"pinned case: {rel} is not a file in the fixture")
        return
    os.unlink(target)
    os.mkdir(target)
    rc, out, err, _, _ = run(numastor, shim, root, os.path.join(tmp, "p.log"), ["--json"])
    shutil.rmtree(root)
    try:
        doc = json.loads(out)
    except ValueError:
        fail(name, f"{rel} unreadable (EISDIR): no JSON document (exit {rc}, {err.strip()})")
        return
    # the note names the file by the path given or by the one its links resolve to
    paths = ("/" + rel, "/" + os.path.relpath(target, os.path.realpath(root)))
    noted = [n for n in doc.get("notes", []) if n.get("field") == field
             and any(p in n.get("message", "") for p in paths)]
    if not noted:
        fail(name, f"{rel} unreadable (EISDIR): no {field} note names it ({doc.get('notes')})")
    else:
        print(f"  {name}, {rel} a directory: noted ({noted[0]['message']})")


def main():
    numastor, shim = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    names = sys.argv[3:]
    with tempfile.TemporaryDirectory(prefix="numastor-faults.", dir=SCRATCH) as tmp:
        fx = os.path.join(tmp, "fx")
        subprocess.run([sys.executable, GEN, fx, *names], check=True)
        names = names or sorted(os.listdir(fx))
        if "nvme-fc" in names:
            check_hidden_unreadable(numastor, shim, fx, tmp)
        for name, rel, field in PINNED:
            if name in names:
                check_pinned_unreadable(numastor, shim, fx, tmp, name, rel, field)
        runs = 0
        for name in names:
            n, clean = check_fixture(numastor, shim, name, os.path.join(fx, name), tmp)
            runs += n + check_alloc(numastor, name, os.path.join(fx, name), tmp)
            runs += check_nofile(numastor, name, os.path.join(fx, name), clean)
    if failures:
        print(f"check-faults: {len(failures)} failure(s) in {runs} faulted runs")
        return 1
    print(f"check-faults: {len(names)} fixtures, {runs} faulted runs: each the clean report or a note")
    return 0


if __name__ == "__main__":
    sys.exit(main())
