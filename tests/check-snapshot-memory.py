#!/usr/bin/env python3
"""numastor snapshot streams (issue 35 item 3): what the capture holds is one piece at a time,
not the tree.

    check-snapshot-memory.py NUMASTOR

On the generator's 64-NVMe machine (large-8n448c-64nvme: some 5 MB of files read, none above
a few KB), `numastor snapshot --sysroot TREE` with NUMASTOR_TEST_CAPTURE_STATS=1 (test builds)
says on stderr what its capture held (lib/out/snapshot.h, struct ns_capture_stats):

- held_max, the most bytes of file content the capture held at once, is at most its 64 KiB
  copy buffer (the check's JSON, spooled to a file and copied in) plus the files it holds to
  the end by design (those it read under .numastor/ and run/udev/data/, where it adds its own);
  the files read together are more than 20 times that, so a capture that held them (as it did
  before: every file until one sorted write) fails here;
- its tree of paths (book_bytes) stays within 128 bytes a path;
- every path is in the bundle once, although the reader read some files more than once
  (duplicates > 0), and entries is the bundle's count.

A binary built without test hooks prints no stats: that is a failure with the reason, never
a pass. No time is measured."""
import os
import re
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
CHUNK = 65536
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)
    if os.environ.get("NUMASTOR_FAIL_FAST"):
        sys.exit(1)


def main():
    numastor = sys.argv[1]
    name = "large-8n448c-64nvme"
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        p = subprocess.run([sys.executable, os.path.join(HERE, "fixtures", "gen-fixtures.py"), tmp, name],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"{name}: the generator failed: {p.stderr[-300:]!r}")
            return 1
        bundle = os.path.join(tmp, "bundle.tar.gz")
        env = dict(os.environ, NUMASTOR_TEST_CAPTURE_STATS="1")
        p = subprocess.run([numastor, "snapshot", "--sysroot", os.path.join(tmp, name), "-O", bundle],
                           capture_output=True, text=True, env=env)
        if p.returncode != 0:
            fail(f"{name}: snapshot exited {p.returncode}: {p.stderr[:300]!r}")
            return 1
        m = re.search(r"^capture: (.*)$", p.stderr, re.M)
        if not m:
            fail(f"{name}: no capture stats on stderr (a build without -Dtest_hooks=true?): {p.stderr[:300]!r}")
            return 1
        stats = {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}
        names, held_by_design, read = [], 0, 0
        with tarfile.open(bundle) as t:
            for ti in t:
                names.append(ti.name.rstrip("/"))
                if not ti.isfile() or ti.name == ".numastor/check.json":
                    continue
                if ti.name.startswith((".numastor/", "run/udev/data/")):
                    held_by_design += ti.size
                else:
                    read += ti.size
    bound = CHUNK + held_by_design
    print(f"# {name}: {stats}; files read {read} bytes, held by design {held_by_design}")
    if stats["held_max"] > bound:
        fail(f"{name}: the capture held {stats['held_max']} bytes at once, more than {bound} "
             f"(its copy buffer and the files it holds by design)")
    elif read < 20 * bound:
        fail(f"{name}: the files read ({read} bytes) are not 20 times the bound {bound}: the case shows nothing")
    else:
        print(f"PASS held: at most {stats['held_max']} bytes at once, of {read} bytes of files read")
    if stats["book_bytes"] > 128 * stats["nodes"]:
        fail(f"{name}: the path tree takes {stats['book_bytes']} bytes for {stats['nodes']} paths")
    else:
        print(f"PASS bookkeeping: {stats['book_bytes']} bytes for {stats['nodes']} paths")
    twice = sorted({n for n in names if names.count(n) > 1}) if len(set(names)) != len(names) else []
    if twice:
        fail(f"{name}: paths in the bundle twice: {twice[:5]}")
    elif stats["duplicates"] < 1:
        fail(f"{name}: no file was read twice: the case shows nothing of the dedup")
    elif stats["entries"] != len(names):
        fail(f"{name}: the capture says {stats['entries']} entries, the bundle has {len(names)}")
    else:
        print(f"PASS once: {len(names)} entries, each once; {stats['duplicates']} reads again not written")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
