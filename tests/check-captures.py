#!/usr/bin/env python3
"""Real-kernel captures, replayed on every test run: each directory under
tests/fixtures/captures/ is the `stock` scenario of the VM bed on one of Debian's kernels, or
(a file `scenario` naming it) another scenario that takes the same capture, such as `server`,
the server-shaped machine (tests/vm/keep-capture.sh made them): `numastor snapshot` of the
guest taken between two readings of the guest's own ground truth (truth-before.txt,
truth.txt: the kernel's files as the bed's shell read them), the queue -> vector pairing
measured with I/O pinned to each CPU (pairing.txt), what that kernel showed (kernel-facts.txt)
and, for the server machine, its CPU topology (topology.txt). A text file may be kept gzip'd
(FILE.gz: the server machine's ground truth is large).

Each capture is replayed with `numastor check --snapshot` and held to its ground truth by the
bed's own comparison (tests/vm/compare.py with its scenario's expectations, stock's by default):
every disk, path, PCI function, IRQ and hardware queue (on the server machine also the queues of
not-present CPUs: no nodes, no online CPUs), the pinned findings and exit code. Then:

- where the kernel has no request-queue file for a bio-based disk (6.12's multipath head has no
  queue/rq_affinity), the report has no note about it; its twin, the same file removed from a
  blk-mq disk of the extracted tree, is noted;
- on a kernel of 6.12 or later every storage vector's user_settable comes from the file mode,
  and below 6.12 none does.

    check-captures.py NUMASTOR
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURES = os.path.join(HERE, "fixtures", "captures")
COMPARE = os.path.join(HERE, "vm", "compare.py")
SCENARIOS = os.path.join(HERE, "vm", "scenarios")
KEPT = ("truth.txt", "truth-before.txt", "pairing.txt", "scenario.rc", "notes.txt", "topology.txt", "paths.txt")
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None

failures = 0


def fail(msg):
    global failures
    failures += 1
    print(f"FAIL {msg}")


def kept(cdir, name):
    """A kept file's path, FILE or (gzip'd) FILE.gz; None when the capture has neither."""
    for path in (os.path.join(cdir, name), os.path.join(cdir, name + ".gz")):
        if os.path.exists(path):
            return path
    return None


def copy_kept(src, dest):
    """A kept file into dest under its plain name, uncompressed."""
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rb") as f, open(os.path.join(dest, os.path.basename(src).removesuffix(".gz")), "wb") as out:
        shutil.copyfileobj(f, out)


def truth_disks(path):
    """disk -> {attribute: value} from a vm_truth file (tab-separated `disk NAME ATTR VALUE`)."""
    disks = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            rec = line.rstrip("\n").split("\t")
            if len(rec) >= 3 and rec[0] == "disk":
                disks.setdefault(rec[1], {})[rec[2]] = rec[3] if len(rec) > 3 else ""
    return disks


def replay(numastor, args):
    env = dict(os.environ, NO_COLOR="1", NUMASTOR_TEST_NOW="1767225600")
    return subprocess.run([numastor, "check", "--json"] + args, capture_output=True, text=True, env=env)


def kernel_version(doc):
    rel = (doc.get("machine") or {}).get("kernel_release") or ""
    try:
        return tuple(int(x) for x in rel.split("-")[0].split("+")[0].split(".")[:2])
    except ValueError:
        return None


def storage_irqs(doc):
    for dev in doc.get("devices", []):
        for path in dev.get("paths") or []:
            for irq in (path.get("pci") or {}).get("irqs", []):
                yield dev["name"], irq


def check_capture(numastor, name, cdir):
    bundle = os.path.join(cdir, "snapshot.tar.gz")
    with tempfile.TemporaryDirectory(prefix="numastor-capture.", dir=SCRATCH) as tmp:
        res = os.path.join(tmp, "result")
        os.mkdir(res)
        for f in KEPT:
            if kept(cdir, f):
                copy_kept(kept(cdir, f), res)
        scenario = "stock"
        if os.path.exists(os.path.join(cdir, "scenario")):
            with open(os.path.join(cdir, "scenario"), encoding="utf-8") as f:
                scenario = f.read().strip()
        sdir = os.path.join(SCENARIOS, scenario)
        if not os.path.isfile(os.path.join(sdir, "guest.sh")):
            fail(f"{name}: the capture names scenario {scenario!r}, which the bed does not have")
            return
        p = replay(numastor, ["--snapshot", bundle])
        for ext, text in (("out", p.stdout), ("err", p.stderr), ("rc", f"{p.returncode}\n")):
            with open(os.path.join(res, f"check.{ext}"), "w", encoding="utf-8") as f:
                f.write(text)
        with open(os.path.join(res, "replayed"), "w", encoding="utf-8") as f:
            f.write(bundle + "\n")
        c = subprocess.run([sys.executable, COMPARE, res, sdir], capture_output=True, text=True)
        if c.returncode != 0:
            fail(f"{name}: the replayed report disagrees with the capture's ground truth:\n"
                 + "".join("    " + line + "\n" for line in c.stdout.splitlines()[:30]))
            return
        doc = json.loads(p.stdout)
        truth = truth_disks(os.path.join(res, "truth.txt"))
        notes = doc.get("notes") or []

        # no note for a request-queue file a bio-based disk does not have
        absent = [(d, f) for d, t in truth.items() for f in ("rq_affinity", "nr_requests") if t.get(f) == ""]
        for disk, field in absent:
            noted = [n for n in notes if n.get("subject") == disk and n.get("field") == f"queue.{field}"]
            if noted:
                fail(f"{name}: {disk} has no queue/{field} on this kernel, yet a note says {noted[0]['message']!r}")

        # where user_settable comes from, by kernel
        ver = kernel_version(doc)
        sources = {(d, i.get("irq")): i.get("user_settable_source") for d, i in storage_irqs(doc)}
        if not sources:
            fail(f"{name}: no storage vector in the replayed report")
        for (disk, irq), src in sorted(sources.items(), key=str):
            if ver is not None and ver >= (6, 12) and src != "file-mode":
                fail(f"{name}: {disk} irq {irq}: user_settable_source {src!r} on {ver}, not file-mode")
            if ver is not None and ver < (6, 12) and src == "file-mode":
                fail(f"{name}: {disk} irq {irq}: user_settable_source file-mode on {ver}, below 6.12")

        # the twin: the same absence on a blk-mq disk is noted
        tree = os.path.join(tmp, "tree")
        with tarfile.open(bundle) as t:
            # the bundle is the tree's own fixture; Debian 12's python3 (3.11.2) has no filters
            if hasattr(tarfile, "data_filter"):
                t.extractall(tree, filter="data")
            else:
                t.extractall(tree)
        victim = None
        for disk, t in sorted(truth.items()):
            if t.get("rq_affinity"):
                link = os.path.join(tree, "sys", "block", disk)
                q = os.path.join(os.path.dirname(link), os.readlink(link), "queue", "rq_affinity") \
                    if os.path.islink(link) else None
                if q and os.path.exists(q) and os.path.isdir(os.path.join(os.path.dirname(os.path.dirname(q)), "mq")):
                    victim = (disk, q)
                    break
        if victim is None:
            fail(f"{name}: no blk-mq disk with a queue/rq_affinity in the capture")
        else:
            os.unlink(victim[1])
            q = replay(numastor, ["--sysroot", tree])
            try:
                twin = json.loads(q.stdout)
            except ValueError:
                fail(f"{name}: the twin's replay printed no JSON (exit {q.returncode}): {q.stderr[:300]}")
                return
            if not [n for n in twin.get("notes") or [] if n.get("subject") == victim[0]
                    and n.get("field") == "queue.rq_affinity"]:
                fail(f"{name}: twin: {victim[0]} (blk-mq) lost queue/rq_affinity and no note says so")
        print(f"PASS {name}: {len(truth)} disks held to the capture's ground truth ({scenario}), "
              f"{len(sources)} vectors' sources, {len(absent)} absent request-queue files un-noted, twin noted")


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    numastor = os.path.abspath(argv[1])
    names = sorted(n for n in os.listdir(CAPTURES) if os.path.isfile(os.path.join(CAPTURES, n, "snapshot.tar.gz"))) \
        if os.path.isdir(CAPTURES) else []
    if not names:
        fail(f"no captures under {CAPTURES}")
    for name in names:
        check_capture(numastor, name, os.path.join(CAPTURES, name))
    print(f"captures: {len(names)} replayed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
