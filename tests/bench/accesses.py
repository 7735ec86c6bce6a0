#!/usr/bin/env python3
"""Helpers for run-bench.sh: the floor's list, the snapshot cross-check, the figures.

    accesses.py floor LOG OUT               the floor's list from access-log.c's log
    accesses.py snapcheck ARCHIVE ROOT LOG  the log's files vs what `numastor snapshot` kept
    accesses.py manifest MANIFEST LOG       the log vs gen-fixtures.py's manifest (counts)
    accesses.py found JSON                  what `check --json` found (the sanity line)
    accesses.py stat RESULTS KEY            median and min wall (s), median peak RSS (KiB), exit
    accesses.py ratio RESULTS KEY_A KEY_B   min and median of A/B over the rounds both ran

RESULTS lines are `ROUND KEY WALL_S RSS_KIB EXIT` (measure.c's line, prefixed); round 0, the
warm-up, is left out.
"""
import json
import os
import statistics
import sys
import tarfile


def read_log(path):
    """access-log.c's lines as (op, failed, path), in order."""
    out = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if len(line) < 3:
                continue
            failed = line[1] == "!"
            p = line[3:] if failed else line[2:]
            out.append((line[0], failed, p))
    return out


def counts(entries):
    c = {}
    for op, failed, _ in entries:
        k = op + ("!" if failed else "")
        c[k] = c.get(k, 0) + 1
    return c


def fmt_counts(c):
    parts = []
    for op in "rdls":
        n = c.get(op, 0) + c.get(op + "!", 0)
        f = c.get(op + "!", 0)
        parts.append("%s=%d%s" % (op, n, " (%d failed)" % f if f else ""))
    return " ".join(parts)


def cmd_floor(log, out):
    """Each access once, in the order numastor first made it; a failed probe stays (the
    floor must find out too, and its open fails the same way)."""
    entries = read_log(log)
    seen, uniq = set(), []
    for op, failed, p in entries:
        if (op, p) in seen:
            continue
        seen.add((op, p))
        uniq.append((op, failed, p))
    with open(out, "w", encoding="utf-8", errors="surrogateescape") as f:
        for op, _, p in uniq:
            f.write("%s %s\n" % (op, p))
    print("%d accesses (%s); %d once each: %s" % (
        len(entries), fmt_counts(counts(entries)), len(uniq), fmt_counts(counts(uniq))))


_dirs = {}


def canon(root, p):
    """p resolved through every link, relative to root (the directory part cached: 40k
    realpath calls cost seconds)."""
    d, b = os.path.split(p)
    if d not in _dirs:
        _dirs[d] = os.path.realpath(os.path.join(root, d))
    r = os.path.join(_dirs[d], b)
    if os.path.islink(r):
        r = os.path.realpath(r)
    r = os.path.normpath(r)
    return os.path.relpath(r, root) if root != "/" else r.lstrip("/")


def cmd_snapcheck(archive, root, log):
    """The snapshot keeps the files numastor read (with bytes), the links, and for a listing
    every entry; sorted, resolved through links, once each. What it can and cannot tell."""
    files, empty, dirs, links, extra = set(), set(), set(), set(), 0
    with tarfile.open(archive) as t:
        for m in t:
            name = m.name[2:] if m.name.startswith("./") else m.name
            if name.startswith(".numastor/"):
                extra += 1  # facts, modinfo, check.json: written by the command, not read
                continue
            if m.isreg():
                (files if m.size > 0 else empty).add(name)
            elif m.isdir():
                dirs.add(name)
            elif m.issym():
                links.add(name)

    # a live root's proc/PID files belong to whichever processes ran during each of the two
    # runs, and the snapshot keeps etc/machine-id only as numastor's id for the machine
    def volatile(p):
        w = p.split("/")
        return p == "etc/machine-id" or (len(w) > 2 and w[0] == "proc" and w[1].isdigit())

    logged = {p for _, _, p in read_log(log)}
    files = {p for p in files if not volatile(p)}
    # run/udev/data/b*: `numastor snapshot` writes what libudev told it, not a file it read
    files = {p for p in files if not (p.startswith("run/udev/data/") and p not in logged)}
    empty = {p for p in empty if not volatile(p)}
    # .numastor/ in a captured tree (modinfo, facts) is read, but the snapshot writes its own
    entries = [e for e in read_log(log)
               if not e[1] and not volatile(e[2]) and not e[2].startswith(".numastor/")]
    reads = {canon(root, p) for op, _, p in entries if op == "r"}
    lists = {canon(root, p) for op, _, p in entries if op == "d"}
    a_files = {canon(root, p) for p in files}
    a_regs = a_files | {canon(root, p) for p in empty}
    a_dirs = {canon(root, p) for p in dirs}
    print("snapshot: %d files with bytes, %d empty files (an empty file read, or an entry of a "
          "listing / a stat: the archive does not say which), %d directories, %d links, %d "
          "entries of its own" % (len(files), len(empty), len(dirs), len(links), extra))
    print("  files read (log) %d; with bytes in the snapshot but not in the log: %d; read "
          "but not in the snapshot: %d" % (len(reads), len(a_files - reads), len(reads - a_regs)))
    print("  directories listed (log) %d; directories in the snapshot %d (listed, or named by "
          "a listing or a stat: not told apart); listed but missing: %d" % (
              len(lists), len(a_dirs), len(lists - a_dirs)))
    for p in sorted(a_files - reads)[:3]:
        print("    e.g. in snapshot only: %s" % p)
    for p in sorted(reads - a_regs)[:3]:
        print("    e.g. in log only: %s" % p)


def cmd_manifest(manifest, log):
    old = []
    with open(manifest, encoding="utf-8") as f:
        for line in f:
            if len(line) > 2 and line[1] == " ":
                old.append((line[0], False, line[2:].rstrip("\n")))
    new = {(op, p) for op, _, p in read_log(log)}
    olds = {(op, p) for op, _, p in old}
    print("old manifest: %d operations (%s); %d of them numastor never makes, %d numastor "
          "makes are not in it" % (len(old), fmt_counts(counts(old)), len(olds - new), len(new - olds)))


def cmd_found(path):
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        print("%d devices, %d hw queues, %d IRQs, %d findings, %d notes" % (
            len(d["devices"]), sum(len(x["hw_queues"]) for x in d["devices"]),
            sum(len(p["pci"]["irqs"]) for x in d["devices"] for p in x["paths"] if p["pci"]),
            len(d["findings"]), len(d["notes"])))
    except Exception as e:  # the sanity line says so rather than failing the run
        print("no JSON document (%s)" % e)


def load(results):
    rows = {}
    with open(results, encoding="utf-8") as f:
        for line in f:
            w = line.split()
            if len(w) == 5 and w[0] != "0":  # round 0 is the warm-up
                rows.setdefault(w[1], {})[int(w[0])] = (float(w[2]), int(w[3]), int(w[4]))
    return rows


def cmd_stat(results, key):
    r = load(results).get(key)
    if not r:
        print("nan nan nan n/a")
        return
    walls = [v[0] for v in r.values()]
    rss = [v[1] for v in r.values()]
    codes = sorted({v[2] for v in r.values()})
    print("%.6f %.6f %d %s" % (statistics.median(walls), min(walls), statistics.median(rss),
                               ",".join(map(str, codes))))


def cmd_ratio(results, a, b):
    rows = load(results)
    ra, rb = rows.get(a, {}), rows.get(b, {})
    q = [ra[k][0] / rb[k][0] for k in ra if k in rb and rb[k][0] > 0]
    if not q:
        print("n/a n/a 0")
        return
    print("%.2f %.2f %d" % (min(q), statistics.median(q), len(q)))


def main(argv):
    cmds = {"floor": (cmd_floor, 2), "snapcheck": (cmd_snapcheck, 3), "manifest": (cmd_manifest, 2),
            "found": (cmd_found, 1), "stat": (cmd_stat, 2), "ratio": (cmd_ratio, 3)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    cmds[argv[1]][0](*argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
