#!/usr/bin/env python3
"""The mutated-tree sweep: for representative fixture machines and each kind of file the reader
reads (numa_node, irq node, distance, cpulists, masks, nr_tags, size, dev, hidden,
per_cpu_count, meminfo, ...), replace that one file by garbage (empty, huge, binary, negative,
past INT_MAX / UINT64_MAX, hex, overlong and trailing-comma cpulists, a directory, a FIFO, a
symlink loop, links escaping the root) and run `numastor check --json` on the tree. Each run must:

- exit 0-3, within a few seconds, with no sanitizer report (it runs in the normal and the ASan
  build: `meson test --suite sweep`);
- print valid UTF-8 JSON that validates against schema/numastor.schema.json (exit 3 may print
  nothing, with a reason on stderr);
- give every number of the clean run's document either unchanged, or null (or gone) with a note
  naming the replaced file: never a different, plausible number, and never a number where the
  clean run had null.

    check-sweep.py NUMASTOR [FIXTURE...]
    NUMASTOR_SWEEP_JOBS=N (default 2)      NUMASTOR_SWEEP_KINDS=numa_node,size (only those kinds)

Scratch trees in /dev/shm. The findings, summary and notes are judged elsewhere (their counts
follow the numbers) and are not compared.
"""
import json
import multiprocessing
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor.schema.json")))
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
# forced NVMe node; SCSI HBA with debugfs and scan; NVMe multipath with two nodes
FIXTURES = ["forced-sibling-other-node", "hba-megaraid-node1-scan-sync", "nvme-multipath-2ctrl-2nodes"]
RUN_TIMEOUT = 10  # seconds: a run slower than this fails (a clean one takes well under a second)
SLOW = 3.0  # seconds: a run slower than this fails too, and says so

HUGE = b"1" * (1024 * 1024 + 17) + b"\n"
VARIANTS = {
    "empty": b"",
    "huge": HUGE,
    "binary": b"\x00\xff\xfe\x1b[31m\x80\xc3\x28\x07\n",
    "negative": b"-1\n",
    "negative-big": b"-9223372036854775809\n",
    "past-int-max": b"2147483648\n",
    "past-uint32": b"4294967297\n",
    "past-int64": b"9223372036854775808\n",
    "past-uint64": b"18446744073709551616\n",
    "hex": b"0x1\n",
    "leading-zero": b"01\n",
    "spaces": b" 1 \n",
    "cpulist-overlong": b"0-1048575\n",
    "cpulist-trailing-comma": b"0-3,\n",
    "cpulist-many": (",".join(str(i * 2) for i in range(20000)) + "\n").encode(),
    "directory": "dir",
    "fifo": "fifo",
    "symlink-loop": "loop",
    "link-escape": "escape",
    "link-absolute": "absolute",
    "mask-wide": (",".join(["ffffffff"] * 40000) + "\n").encode(),
    "mask-garbled": b"fg,ffffffff\n",
}
STRUCT = ["directory", "fifo", "symlink-loop", "link-escape"]
CLASSES = {
    "num": ["empty", "huge", "binary", "negative", "negative-big", "past-int-max", "past-uint32", "past-int64",
            "past-uint64", "hex", "leading-zero", "spaces"] + STRUCT,
    "list": ["empty", "huge", "binary", "negative", "past-int-max", "hex", "cpulist-overlong",
             "cpulist-trailing-comma", "cpulist-many", "spaces"] + STRUCT,
    "mask": ["empty", "huge", "binary", "negative", "cpulist-trailing-comma", "mask-wide", "mask-garbled"] + STRUCT,
    "str": ["empty", "huge", "binary"] + STRUCT,
    "link": ["empty", "directory", "symlink-loop", "link-escape", "link-absolute"],
    "dir": ["empty", "symlink-loop", "link-escape"],
}
# the class of each kind (default num)
CLASS = {
    "node-online": "list", "node-cpulist": "list", "cpu-online": "list", "cpu-possible": "list",
    "cpu-isolated": "list", "cpu-nohz_full": "list", "mq-cpu_list": "list", "pci-local_cpulist": "list",
    "bus-cpulistaffinity": "list", "irq-smp_affinity_list": "list", "irq-effective_affinity_list": "list",
    "kirq-per_cpu_count": "list", "distance": "list",
    "irq-smp_affinity": "mask", "irq-affinity_hint": "mask",
    "osrelease": "str", "irqbalance-config": "str", "scsi-scan": "str", "scheduler": "str", "wwid": "str",
    "model": "str", "serial": "str", "udev-data": "str", "debugfs-flags": "str", "debugfs-irq": "str",
    "kirq-actions": "str", "kirq-chip_name": "str", "meminfo": "str",
    "block-link": "link", "pci-driver": "link", "pci-msi_irqs": "dir",
}
# Variants that are valid values of the kind: the number may follow them (numa_node -1 is the
# kernel's "no node"; an empty cpulist is a CPU-less node or an empty isolated set; tainted is a
# 64-bit mask; size and nr_requests are unsigned longs, nr_tags an unsigned int).
VALID = {
    "pci-numa_node": {"negative"}, "irq-node": {"negative"},
    "node-cpulist": {"empty", "spaces"}, "cpu-isolated": {"empty", "spaces"}, "cpu-nohz_full": {"empty", "spaces"},
    "mq-cpu_list": {"empty", "spaces"}, "pci-local_cpulist": {"spaces"}, "bus-cpulistaffinity": {"empty", "spaces"},
    "irq-smp_affinity_list": {"spaces"}, "irq-effective_affinity_list": {"spaces"}, "cpu-online": {"spaces"},
    "cpu-possible": {"spaces"}, "node-online": {"spaces"},
    "tainted": {"past-int-max", "past-uint32", "past-int64"},
    "size": {"past-int-max", "past-uint32"},
    "nr_requests": {"past-int-max", "past-uint32"}, "mq-nr_tags": {"past-int-max"},
}
# Kinds whose content is a string: a value that cannot be paired or read may go null without a
# note of its own (the string's escaping is judged by the schema); a changed number still fails.
STRINGY = {k for k, c in CLASS.items() if c == "str"} | {"pci-driver"}


def rel_of(root, p):
    return os.path.relpath(p, root)


def pci_dir_of(root, disk):
    """The PCI function above a disk: the nearest ancestor with vendor, class and numa_node."""
    d = os.path.realpath(os.path.join(root, "sys/block", disk))
    while d.startswith(root) and d != root:
        if all(os.path.exists(os.path.join(d, f)) for f in ("vendor", "class", "numa_node")):
            return d
        d = os.path.dirname(d)
    return None


def kinds_of(root):
    """kind -> path (relative to the root) of one representative file of that kind."""
    k = {}

    def add(kind, rel):
        if os.path.lexists(os.path.join(root, rel)):
            k.setdefault(kind, rel)

    nodes = sorted(n for n in os.listdir(os.path.join(root, "sys/devices/system/node")) if n.startswith("node"))
    last = nodes[-1]
    add("node-online", "sys/devices/system/node/online")
    add("node-cpulist", "sys/devices/system/node/%s/cpulist" % last)
    add("distance", "sys/devices/system/node/%s/distance" % last)
    add("meminfo", "sys/devices/system/node/node0/meminfo")
    for f in ("online", "possible", "isolated", "nohz_full", "kernel_max"):
        add("cpu-" + f, "sys/devices/system/cpu/" + f)
    add("osrelease", "proc/sys/kernel/osrelease")
    add("tainted", "proc/sys/kernel/tainted")
    add("irqbalance-config", "etc/default/irqbalance")
    add("scsi-scan", "sys/module/scsi_mod/parameters/scan")
    disks = sorted(os.listdir(os.path.join(root, "sys/block")))
    disk = next((d for d in disks if pci_dir_of(root, d)), disks[0])
    b = "sys/block/" + disk
    add("block-link", b)
    for f in ("size", "dev", "hidden", "queue/nr_requests", "queue/rq_affinity", "queue/scheduler",
              "mq/0/nr_tags", "mq/0/cpu_list", "wwid", "device/model", "device/serial"):
        add(f.replace("/", "-").replace("queue-", "").replace("mq-0-", "mq-").replace("device-", ""), b + "/" + f)
    add("debugfs-flags", "sys/kernel/debug/block/%s/hctx0/flags" % disk)
    dev = None
    try:
        dev = open(os.path.join(root, b, "dev")).read().strip()
    except OSError:
        pass
    if dev:
        add("udev-data", "run/udev/data/b" + dev)
    pci = pci_dir_of(root, disk)
    if pci:
        p = rel_of(root, pci)
        for f in ("numa_node", "local_cpulist", "vendor", "device", "class", "driver", "irq", "msi_irqs"):
            add("pci-" + f, p + "/" + f)
        bus = os.path.basename(os.path.dirname(pci))  # pci0000:00
        if bus.startswith("pci"):
            add("bus-cpulistaffinity", "sys/devices/%s/pci_bus/%s/cpulistaffinity" % (bus, bus[3:]))
        irqs = []
        try:
            irqs = sorted(os.listdir(os.path.join(pci, "msi_irqs")), key=int)
        except OSError:
            pass
        if irqs:
            n = irqs[min(1, len(irqs) - 1)]  # an I/O queue's vector where there is one
            for f in ("node", "smp_affinity", "smp_affinity_list", "effective_affinity_list", "affinity_hint"):
                add("irq-" + f, "proc/irq/%s/%s" % (n, f))
            for f in ("per_cpu_count", "actions", "chip_name"):
                add("kirq-" + f, "sys/kernel/irq/%s/%s" % (n, f))
            add("debugfs-irq", "sys/kernel/debug/irq/irqs/%s" % n)
    only = os.environ.get("NUMASTOR_SWEEP_KINDS")
    if only:
        want = set(only.split(","))
        k = {a: v for a, v in k.items() if a in want}
    return k


# --- the tree: replace one entry, put it back --------------------------------------------------
def save(path):
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path), 0)
    if stat.S_ISDIR(st.st_mode):
        return ("dir", None, st.st_mode & 0o7777)
    return ("file", open(path, "rb").read(), st.st_mode & 0o7777)


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def apply(root, rel, variant, saved):
    path = os.path.join(root, rel)
    v = VARIANTS[variant]
    if saved[0] == "dir":  # a directory (msi_irqs): moved aside, put back after
        os.rename(path, path + ".sweep-saved")
    else:
        remove(path)
    if v == "dir":
        os.mkdir(path)
        with open(os.path.join(path, "x"), "w") as f:
            f.write("1\n")
    elif v == "fifo":
        os.mkfifo(path)
    elif v == "loop":
        os.symlink(os.path.basename(path), path)
    elif v == "escape":
        os.symlink("../" * (rel.count("/") + 3) + "etc/hostname", path)
    elif v == "absolute":
        os.symlink("/etc/hostname", path)
    else:
        with open(path, "wb") as f:
            f.write(v)
        os.chmod(path, saved[2] if saved[0] == "file" else 0o444)


def restore(root, rel, saved):
    path = os.path.join(root, rel)
    remove(path)
    kind, data, mode = saved
    if kind == "link":
        os.symlink(data, path)
    elif kind == "dir":
        os.rename(path + ".sweep-saved", path)
    else:
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, mode)


# --- the document: its numbers -----------------------------------------------------------------
SKIP = {"findings", "summary", "notes", "interval_seconds"}
# list elements are keyed by their identity (never by a value the variant may change)
LIST_ID = {"devices": "name", "nodes": "node", "irqs": "irq", "hw_queues": "index", "counts_by_node": "node",
           "rates_by_node": "node", "counts_since_fix_by_node": "node", "other_irqs": "irq"}


def numbers(doc):
    """path -> number (or None) for every number and null of the document outside SKIP; a list of
    scalars is one value; list elements are keyed by their identity where they have one."""
    out = {}

    def walk(o, p):
        if isinstance(o, dict):
            for key, v in o.items():
                if not p and key in SKIP:
                    continue
                walk(v, p + "." + key)
        elif isinstance(o, list):
            if all(not isinstance(x, (dict, list)) for x in o):
                if any(isinstance(x, (int, float)) and not isinstance(x, bool) for x in o):
                    out[p] = tuple(o)
                return
            idk = LIST_ID.get(p.rsplit(".", 1)[-1])
            for i, x in enumerate(o):
                ident = None
                if idk and isinstance(x, dict) and isinstance(x.get(idk), (str, int)):
                    ident = "%s=%s" % (idk, x[idk])
                walk(x, "%s[%s]" % (p, ident or i))
        elif o is None or (isinstance(o, (int, float)) and not isinstance(o, bool)):
            out[p] = o

    walk(doc, "")
    return out


def canonical(root, rel):
    """rel with the links of its directories resolved (the reader's notes name that path)."""
    d = os.path.realpath(os.path.join(root, os.path.dirname(rel)))
    return rel_of(root, os.path.join(d, os.path.basename(rel)))


def judge(clean, doc, names, stringy=False):
    """Wrong numbers: changed to another number, or to a number where clean had null; changed to
    null (or gone) without a note naming the file (any of names)."""
    named = stringy or any(r in (n.get("message") or "") for n in doc.get("notes", []) for r in names)
    rel = names[0]
    a, b = numbers(clean), numbers(doc)
    wrong = []
    for key, v in a.items():
        if key in b:
            w = b[key]
            if w == v:
                continue
            if w is None:
                if not named:
                    wrong.append("%s: %r -> null without a note naming %s" % (key, v, rel))
            else:
                wrong.append("%s: %r -> %r" % (key, v, w))
        elif v is not None and not named:
            wrong.append("%s: %r -> gone without a note naming %s" % (key, v, rel))
    for key, w in b.items():
        if key not in a and w is not None and key.rsplit(".", 1)[0] in {k.rsplit(".", 1)[0] for k in a}:
            wrong.append("%s: (none) -> %r" % (key, w))
    return wrong


# --- running -----------------------------------------------------------------------------------
SANITIZER = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")


def run(numastor, root):
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1")
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    env["NO_COLOR"] = "1"
    t0 = time.monotonic()
    try:
        p = subprocess.run([numastor, "check", "--json", "--sysroot", root], capture_output=True, env=env,
                           timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, b"", b"timed out after %d s" % RUN_TIMEOUT, RUN_TIMEOUT
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


VALIDATOR = jsonschema.validators.validator_for(SCHEMA)(SCHEMA)


def check_output(code, out, err, secs):
    """The document, or raise AssertionError saying what is wrong with the run."""
    text = err.decode("utf-8", "replace")
    for s in SANITIZER:
        assert s not in text, "sanitizer report: " + text[text.find(s):][:600]
    assert code is not None, "timed out after %d s" % RUN_TIMEOUT
    assert 0 <= code <= 3, "exit %d: %s" % (code, text[-400:])
    assert secs <= SLOW, "took %.1f s" % secs
    if code == 3 and not out:
        assert text.strip(), "exit 3 without a reason on stderr"
        return None
    s = out.decode("utf-8")  # UnicodeDecodeError: not valid UTF-8
    doc = json.loads(s)
    errs = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errs, "schema: %s at %s" % (errs[0].message[:200], "/".join(map(str, errs[0].absolute_path)))
    return doc


# per worker: its own copy of every fixture tree
_trees = {}
_numastor = None
_base = None


def worker_init(numastor, base):
    global _numastor, _base
    _numastor, _base = numastor, base


def tree_of(fixture):
    if fixture not in _trees:
        dst = tempfile.mkdtemp(prefix="w.", dir=_base)
        shutil.copytree(os.path.join(_base, "clean", fixture), os.path.join(dst, fixture), symlinks=True)
        _trees[fixture] = os.path.join(dst, fixture)
    return _trees[fixture]


def one(task):
    fixture, kind, rel, variant, clean = task
    root = tree_of(fixture)
    names = sorted({rel, canonical(root, rel)})
    saved = save(os.path.join(root, rel))
    apply(root, rel, variant, saved)
    try:
        code, out, err, secs = run(_numastor, root)
    finally:
        restore(root, rel, saved)
    try:
        doc = check_output(code, out, err, secs)
    except (AssertionError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return (task[:4], "bad output: %s" % e, [])
    if doc is None:
        return (task[:4], None, [])
    if variant in VALID.get(kind, ()):
        return (task[:4], None, [])
    return (task[:4], None, judge(clean, doc, names, kind in STRINGY))


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    numastor = os.path.abspath(argv[1])
    fixtures = argv[2:] or FIXTURES
    jobs = int(os.environ.get("NUMASTOR_SWEEP_JOBS", "2"))
    t0 = time.monotonic()
    base = tempfile.mkdtemp(prefix="numastor-sweep.", dir=SCRATCH)
    try:
        clean_dir = os.path.join(base, "clean")
        subprocess.run([sys.executable, GEN, clean_dir] + fixtures, check=True, stdout=subprocess.DEVNULL)
        tasks, failures = [], []
        for fx in fixtures:
            root = os.path.join(clean_dir, fx)
            code, out, err, secs = run(numastor, root)
            try:
                clean = check_output(code, out, err, secs)
                assert clean is not None, "the clean run printed nothing (exit %s)" % code
            except (AssertionError, UnicodeDecodeError, json.JSONDecodeError) as e:
                failures.append("%s (clean run): %s" % (fx, e))
                continue
            for kind, rel in sorted(kinds_of(root).items()):
                for variant in CLASSES[CLASS.get(kind, "num")]:
                    tasks.append((fx, kind, rel, variant, clean))
        with multiprocessing.Pool(jobs, initializer=worker_init, initargs=(numastor, base)) as pool:
            results = pool.map(one, tasks, chunksize=4)
        nbad = 0
        for (fx, kind, rel, variant), bad, wrong in results:
            if bad or wrong:
                nbad += 1
                failures.append("%s %s (%s) <- %s: %s" % (fx, kind, rel, variant,
                                                          bad or "; ".join(wrong[:4]) +
                                                          (" (+%d more)" % (len(wrong) - 4) if len(wrong) > 4 else "")))
        for f in failures:
            print("FAIL " + f)
        kinds = len({(t[0], t[1]) for t in tasks})
        print("sweep: %d runs (%d fixtures, %d file kinds, %d variants), %d failed, %.0f s" %
              (len(tasks), len(fixtures), kinds, len({t[3] for t in tasks}), len(failures), time.monotonic() - t0))
        return 1 if failures else 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
