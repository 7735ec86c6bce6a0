#!/usr/bin/env python3
"""The reader's economies change nothing but the time: on every fixture (the ordinary ones, the
real-kernel captures replayed through --snapshot, and one large tree), `numastor check` prints
the same bytes on stdout and stderr and exits with the same code reading everything on one
thread (NUMASTOR_THREADS=1: the items in order; NUMASTOR_TEST_READ_ALL=1: no file left unread
for the output, lib/read/root.h NS_NEED_*) as reading only what the output needs on four threads,
for --json, text, text --verbose and --format prometheus, and on three for --json. Then the thread count's rule
(ns_threads_pick): min(16, online CPUs / 8), at least 1, or NUMASTOR_THREADS when it is a
decimal 1..64, else 1; counted as the threads the reader starts (strace, when installed),
with the online CPUs set through NUMASTOR_TEST_ONLINE_CPUS (test builds).

    check-threads.py NUMASTOR [CASE...]

CASE narrows the run (a mutant's kill command names the cases that kill it; no CASE runs them
all): `rule` (the thread count's rule), a fixture's name (the large one's too) or `capture:LINE`
(that root compared, and no other).
"""
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
CAPTURES = os.path.join(HERE, "fixtures", "captures")
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
LARGE = "large-8n448c-16nvme"
FORMATS = (("--json",), (), ("--verbose",), ("--format", "prometheus"), ("--list", "--json"))
# (format, threads) against one thread reading everything
VARIANTS = [(f, "4") for f in FORMATS] + [(("--json",), "3")]
# --list in columns that judge nothing reads what its columns show (cmd/columns.c's needs): each
# such column alone, compared with the same column of one run of them all reading everything on
# one thread; FINDINGS and SEVERITY judge (the list then reads as --json does).
LIST_COLUMNS = ("NAME", "KIND", "TRAN", "PCI", "DRIVER", "NODE", "SOURCE", "CPUS", "SIZE", "MODEL", "SERIAL",
                "BYID", "IRQS", "MANAGED", "FIRES", "QUEUES")
LIST_JUDGING = ("FINDINGS", "SEVERITY")


def run(numastor, root_args, args, threads, read_all=False):
    env = dict(os.environ, NO_COLOR="1", NUMASTOR_TEST_NOW="1767225600", NUMASTOR_THREADS=threads)
    env.pop("NUMASTOR_TEST_READ_ALL", None)
    if read_all:
        env["NUMASTOR_TEST_READ_ALL"] = "1"
    p = subprocess.run([numastor, "check", *root_args, *args], capture_output=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


def compare(numastor, label, root_args):
    bad = 0
    base = {f: run(numastor, root_args, f, "1", read_all=True) for f in FORMATS}
    for args, t in VARIANTS:
        other = run(numastor, root_args, args, t)
        if other != base[args]:
            b = base[args]
            what = "exit code" if other[0] != b[0] else "stdout" if other[1] != b[1] else "stderr"
            print(f"FAIL {label} {' '.join(args) or 'text'}: NUMASTOR_THREADS={t} reading what the output "
                  f"needs differs in {what} from one thread reading everything")
            bad += 1
    return bad + compare_list(numastor, label, root_args)


def list_columns(out):
    """--list -r -n's lines as rows of values (-r escapes blanks: one space separates)."""
    return [line.split(" ") for line in out.decode().splitlines()]


def compare_list(numastor, label, root_args):
    base = run(numastor, root_args, ("-l", "-r", "-n", "-o", ",".join(LIST_COLUMNS)), "1", read_all=True)
    rows = list_columns(base[1])
    bad = 0
    for i, col in enumerate(LIST_COLUMNS):
        got = run(numastor, root_args, ("-l", "-r", "-n", "-o", col), "4")
        what = ("exit code" if got[0] != base[0] else "stderr" if got[2] != base[2]
                else "stdout" if list_columns(got[1]) != [[r[i]] for r in rows] else None)
        if what:
            print(f"FAIL {label} -l -o {col}: reading what the column needs differs in {what} "
                  f"from one thread reading everything (exit {got[0]} vs {base[0]})")
            bad += 1
    return bad


def started_threads(numastor, root, env):
    """Threads the check starts, from strace's clone/clone3 calls."""
    with tempfile.NamedTemporaryFile(prefix="numastor-threads.", dir=SCRATCH) as log:
        e = dict(os.environ, NO_COLOR="1", **env)
        subprocess.run(["strace", "-f", "-qq", "-e", "trace=clone,clone3", "-o", log.name, numastor, "check",
                        "--sysroot", root], capture_output=True, env=e, timeout=120, check=False)
        text = open(log.name).read()
    return len(re.findall(r"\bclone3?\((?!.*resumed)", text))


def thread_rule(numastor, root):
    if not shutil.which("strace"):
        print("SKIP thread count: no strace")
        return 0
    cases = [
        ({"NUMASTOR_TEST_ONLINE_CPUS": "448"}, 16),  # 448 / 8 = 56, held to 16
        ({"NUMASTOR_TEST_ONLINE_CPUS": "64"}, 8),
        ({"NUMASTOR_TEST_ONLINE_CPUS": "16"}, 2),
        ({"NUMASTOR_TEST_ONLINE_CPUS": "7"}, 1),  # 0, at least 1
        ({"NUMASTOR_THREADS": "3", "NUMASTOR_TEST_ONLINE_CPUS": "448"}, 3),
        ({"NUMASTOR_THREADS": "64"}, 64),
        # any other value is 1, not the default (16 on 448 CPUs)
        ({"NUMASTOR_THREADS": "65", "NUMASTOR_TEST_ONLINE_CPUS": "448"}, 1),  # beyond NS_THREADS_MAX
        ({"NUMASTOR_THREADS": "0", "NUMASTOR_TEST_ONLINE_CPUS": "448"}, 1),
        ({"NUMASTOR_THREADS": "four", "NUMASTOR_TEST_ONLINE_CPUS": "448"}, 1),
        ({"NUMASTOR_THREADS": "0x4", "NUMASTOR_TEST_ONLINE_CPUS": "448"}, 1),
    ]
    bad = 0
    # the clones that are not the reader's (LeakSanitizer's tracer in a sanitizer build): one thread's
    saved = os.environ.pop("NUMASTOR_THREADS", None)
    other = started_threads(numastor, root, {"NUMASTOR_THREADS": "1"})
    for env, want in cases:
        got = started_threads(numastor, root, env) - other + 1  # the calling thread reads too
        if got != want:
            print(f"FAIL thread count with {env}: {got} threads, want {want}")
            bad += 1
    if saved is not None:
        os.environ["NUMASTOR_THREADS"] = saved
    if not bad:
        print(f"PASS thread count ({len(cases)} cases)")
    return bad


def main():
    numastor = os.path.abspath(sys.argv[1])
    names = subprocess.run([sys.executable, GEN, "--list"], capture_output=True, text=True,
                           check=True).stdout.split()
    captures = sorted(glob.glob(os.path.join(CAPTURES, "*", "snapshot.tar.gz")))
    cases = sys.argv[2:]
    known = {"rule", LARGE, *names, *("capture:" + os.path.basename(os.path.dirname(s)) for s in captures)}
    if set(cases) - known:
        print(f"check-threads.py: no such case {sorted(set(cases) - known)}: rule, a fixture or capture:LINE")
        sys.exit(2)
    if cases:
        names = [n for n in names if n in cases and n != LARGE]
        captures = [s for s in captures if "capture:" + os.path.basename(os.path.dirname(s)) in cases]
    bad = 0
    # every column numastor has is named here (a new column joins LIST_COLUMNS or LIST_JUDGING)
    err = subprocess.run([numastor, "check", "-o", "NO-SUCH-COLUMN"], capture_output=True, text=True).stderr
    m = re.search(r"\(columns: ([A-Z, ]+)\)", err)
    have = set(m.group(1).split(", ")) if m else set()
    named = set(LIST_COLUMNS) | set(LIST_JUDGING)
    if not have or have != named:
        print(f"FAIL --list's columns {sorted(have)} are not those LIST_COLUMNS and LIST_JUDGING name {sorted(named)}")
        bad += 1
    with tempfile.TemporaryDirectory(prefix="numastor-threads.", dir=SCRATCH) as tmp:
        # NUMASTOR_FAIL_FAST=1 (tests/mutation/run.sh): the first failure ends the run, so the
        # quick thread-count rule goes first, on the one tree it needs, before the others are made
        fast = os.environ.get("NUMASTOR_FAIL_FAST") == "1"
        if not cases or "rule" in cases:
            subprocess.run([sys.executable, GEN, tmp, "baremetal-2s-4nvme-healthy"], check=True,
                           stdout=subprocess.DEVNULL)
            bad += thread_rule(numastor, os.path.join(tmp, "baremetal-2s-4nvme-healthy"))
            if bad and fast:
                sys.exit(1)
        if names:
            subprocess.run([sys.executable, GEN, tmp, *names], check=True, stdout=subprocess.DEVNULL)
        large = not cases or LARGE in cases
        if large:
            subprocess.run([sys.executable, GEN, tmp, LARGE], check=True, stdout=subprocess.DEVNULL)
        # the large tree and the real kernels' captures first: the most work items to reorder
        roots = [(LARGE, ["--sysroot", os.path.join(tmp, LARGE)])] if large else []
        roots += [("capture " + os.path.basename(os.path.dirname(s)), ["--snapshot", s]) for s in captures]
        roots += [(n, ["--sysroot", os.path.join(tmp, n)]) for n in names]
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
            futures = [ex.submit(compare, numastor, *r) for r in roots]
            compared = 0
            for f in concurrent.futures.as_completed(futures):
                compared += 1
                bad += f.result()
                if bad and fast:
                    for other in futures:
                        other.cancel()
                    break
        print(f"{'PASS' if not bad else 'FAIL'} {compared} of {len(roots)} roots x {len(VARIANTS)} outputs/thread counts"
              f" and {len(LIST_COLUMNS)} --list columns alone")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
