#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""numastor trace on this machine's kernel (root; a loop device of its own; issue 34).

Ground truth is the kernel's own: the loop device's /sys/block/X/stat and bpftool's list of
loaded programs, never numastor's rules.
- Reads pinned to one CPU (taskset) through a direct-I/O loop device while `trace -j` watches it:
  the trace's requests and the completions it reports unseen (lost.unseen) add up to the stat
  file's reads completed over the window (nothing else reads that disk), every request was submitted from the pinned CPU's node (the node's cpulist in
  sysfs), the JSON validates against schema/numastor-trace.schema.json.
- Nothing stays attached: the programs bpftool lists are the same before a run and after it ends
  normally, after SIGINT and SIGTERM (each ends the window early: exit 0 or 1, window.stopped,
  figures printed), and after SIGKILL mid-window; while it runs, numastor's four programs are
  listed.
- Each reason it cannot trace is one line on stderr, exit 3, nothing attached: unprivileged
  (setpriv to uid 65534, for real), and no BTF, lockdown, the verifier's refusal through the
  test switch NUMASTOR_TEST_TRACE_FAIL (this kernel has all three); -v adds the loader's log.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "vm"))
import schemas  # noqa: E402
from compare import cpuset  # noqa: E402  the bed's own cpulist parser

NUMASTOR = os.path.abspath(sys.argv[1])
failures = []
PROGS = {"raw_issue", "raw_complete", "raw_irq_entry", "raw_irq_exit", "btf_issue", "btf_complete",
         "btf_irq_entry", "btf_irq_exit"}


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def progs():
    """(id, name) of every BPF program the kernel has loaded."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True, check=True).stdout
    return {(p["id"], p.get("name", "")) for p in json.loads(out or "[]")}


def ours(ps):
    return {p for p in ps if p[1] in PROGS}


def stat_reads(disk):
    with open("/sys/block/%s/stat" % disk) as f:
        return int(f.read().split()[0])


def node_of_cpu(cpu):
    base = "/sys/devices/system/node"
    for d in sorted(os.listdir(base)):
        if d.startswith("node") and d[4:].isdigit():
            with open(os.path.join(base, d, "cpulist")) as f:
                if cpu in cpuset(f.read().strip()):
                    return int(d[4:])
    return None


def left_after(base, timeout=10):
    """numastor's programs loaded now that were not in base, once the kernel has had up to timeout
    seconds to free those of an ended process (it frees a program after its last file descriptor
    closes, from deferred work: bpftool can list it for a moment after the process is gone)."""
    t0 = time.time()
    while True:
        left = ours(progs()) - ours(base)
        if not left or time.time() - t0 > timeout:
            return left, time.time() - t0
        time.sleep(0.1)


def linked():
    """The ids of the programs the kernel has attached (bpftool's links)."""
    out = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True).stdout
    try:
        return {lk.get("prog_id") for lk in json.loads(out or "[]")}
    except ValueError:
        return set()


def wait_attached(before, timeout=20):
    """numastor's four programs loaded AND attached: a program is listed once loaded, before
    trace attaches it, and a read completed in between is in the stat file but not in trace's
    count (the first round saw one or two such reads, its 'again' notes)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        new = ours(progs() - before)
        if len(new) >= 4 and len({i for i, _ in new} & linked()) >= 4:
            return True
        time.sleep(0.05)
    return False


def fio(dev, cpu, seconds):
    return subprocess.Popen(["taskset", "-c", str(cpu), "fio", "--name=r", "--filename=" + dev, "--rw=randread",
                             "--bs=4k", "--direct=1", "--ioengine=psync", "--runtime=%dms" % int(seconds * 1000), "--time_based",
                             "--output-format=terse"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root (losetup, BPF)")
        return 77
    r = subprocess.run([NUMASTOR, "trace", "-d", "1"], capture_output=True, text=True)
    if "built without BPF support" in r.stderr:
        # a -Dbpf=disabled build (the ASan stage's): trace refuses in one line, exit 3; nothing else
        lines = r.stderr.strip().splitlines()
        if r.returncode != 3 or len(lines) != 1 or not lines[0].startswith("numastor trace: cannot trace: "):
            fail("a build without BPF: exit %d, %r" % (r.returncode, r.stderr))
        else:
            print("ok   built without BPF: trace refuses with exit 3: %s" % lines[0])
        return 1 if failures else 0
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        fail("this kernel has no BTF: numastor trace cannot run here")
        return 1
    tmp = tempfile.mkdtemp(prefix="ns-trace-")
    img = os.path.join(tmp, "disk.img")
    with open(img, "wb") as f:
        f.truncate(256 << 20)
    dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", img], capture_output=True, text=True,
                         check=True).stdout.strip()
    # udev's probe of the new device (blkid reads it) done before any window: only fio reads it then
    subprocess.run(["udevadm", "settle", "-t", "10"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    disk = os.path.basename(dev)
    try:
        run_all(dev, disk)
    finally:
        subprocess.run(["losetup", "-d", dev])
        os.unlink(img)
        os.rmdir(tmp)
    print("%d failures" % len(failures))
    return 1 if failures else 0


def run_all(dev, disk):
    before = progs()
    cpu = os.sched_getaffinity(0)
    cpu = sorted(cpu)[-1]
    node = node_of_cpu(cpu)

    # 1. counted as the kernel counts, attributed to the pinned CPU's node: the reads must end
    # inside the window (a loaded machine may start fio late: a window that closed first is no
    # comparison, and the round runs again with a window twice as long)
    for window in (3, 6, 12):
        t = subprocess.Popen([NUMASTOR, "trace", "-j", "-d", str(window), disk], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        if not wait_attached(before):
            fail("numastor's programs never appeared in bpftool's list")
        s0 = stat_reads(disk)  # the window is open: from here on, both count every completion
        f = fio(dev, cpu, 1.5)
        f.wait()
        inside = t.poll() is None
        out, err = t.communicate()
        s1 = stat_reads(disk)
        if inside:
            break
        print("note the %d s window closed before the reads ended: again with a longer one" % window)
    else:
        fail("the reads never ended inside a window of up to 12 s")
        return
    if t.returncode not in (0, 1):
        fail("trace -j exited %d: %s" % (t.returncode, err.strip()))
        return
    doc = json.loads(out)
    try:
        with open(os.path.join(HERE, "..", "schema", "numastor-trace.schema.json")) as sf:
            schemas.validate(doc, json.load(sf))
    except Exception as e:  # noqa: BLE001  a missing schema is a failure too
        fail("schema: %s" % str(e).splitlines()[0])
    d = [x for x in doc["devices"] if x["name"] == disk]
    if len(d) != 1:
        fail("trace -j has no device %s: %s" % (disk, [x["name"] for x in doc["devices"]]))
        return
    d = d[0]
    # every completion is counted, or said unseen: trace reads the disk's own counter (the stat
    # file this test reads too) once its completion program runs and again before it detaches, and
    # reports what the program did not count. Measured on this project's 6.18 machines: one or two
    # completions in about half the rounds, run in a softirq on another task's stack, that the
    # kernel ran no BPF program for and counted no recursion miss (ftrace's event saw them; a
    # second, empty program on the tracepoint missed the same ones). Nothing else reads the disk
    # and fio runs wholly inside both windows, so the two must agree exactly.
    unseen = doc["lost"]["unseen"]
    if unseen is None:
        fail("lost.unseen is null: trace could not read /sys/block/%s/stat" % disk)
    elif d["requests"] + unseen != s1 - s0 or d["requests"] < 1000:
        fail("trace counted %d requests and %d unseen (%d missed), /sys/block/%s/stat %d over the window"
             % (d["requests"], unseen, doc["lost"]["missed"], disk, s1 - s0))
    else:
        print("ok   %d requests and %d unseen, the stat file's reads completed %d"
              % (d["requests"], unseen, s1 - s0))
    subs = {p["submit_node"] for p in d["pairs"] if p["requests"]}
    if subs != {node}:
        fail("submitted from CPU %d (node %s) but trace says nodes %s" % (cpu, node, sorted(subs)))
    else:
        print("ok   every request submitted from node %s (CPU %d pinned)" % (node, cpu))
    if sum(p["requests"] for p in d["pairs"]) != d["requests"]:
        fail("the pairs' requests do not add up to the device's")
    if doc["window"]["stopped"]:
        fail("a window that ran out was reported as stopped")
    left, _ = left_after(before)
    if left:
        fail("programs left after a normal end: %s" % sorted(left))

    # 2. signals: SIGINT and SIGTERM end the window early with figures; SIGKILL leaves nothing
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        base = progs()
        t = subprocess.Popen([NUMASTOR, "trace", "-j", "-d", "60", disk], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        if not wait_attached(base):
            fail("%s: programs never attached" % sig.name)
        f = fio(dev, cpu, 0.7)
        f.wait()
        t0 = time.time()
        t.send_signal(sig)
        out, err = t.communicate(timeout=20)
        took = time.time() - t0
        left, freed = left_after(base)
        if left:
            fail("%s: programs still loaded 10 s after it ended: %s" % (sig.name, sorted(left)))
        else:
            print("ok   %s: nothing attached after it ended (exit %.1f s after the signal, programs freed "
                  "%.1f s later)" % (sig.name, took, freed))
        if sig == signal.SIGKILL:
            if t.returncode != -9:
                fail("SIGKILL: exit %s" % t.returncode)
            continue
        if t.returncode not in (0, 1):
            fail("%s: exit %d, %s" % (sig.name, t.returncode, err.strip()))
            continue
        doc = json.loads(out)
        d = [x for x in doc["devices"] if x["name"] == disk][0]
        if not doc["window"]["stopped"] or doc["window"]["seconds"] >= 30 or d["requests"] < 100:
            fail("%s: window %s, %d requests" % (sig.name, doc["window"], d["requests"]))
        else:
            print("ok   %s: window ended early (%.1f s) with %d requests" % (sig.name, doc["window"]["seconds"],
                                                                          d["requests"]))

    # 3. each reason it cannot trace: one line, exit 3, nothing attached
    base = progs()
    cases = [
        ("unprivileged", ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"],
         {}, "needs root"),
        ("no BTF", [], {"NUMASTOR_TEST_TRACE_FAIL": "btf"}, "no BTF"),
        ("lockdown", [], {"NUMASTOR_TEST_TRACE_FAIL": "lockdown"}, "lockdown"),
        ("verifier", [], {"NUMASTOR_TEST_TRACE_FAIL": "verifier"}, "refused numastor's BPF program"),
    ]
    for name, pre, env, want in cases:
        e = dict(os.environ, **env)
        r = subprocess.run(pre + [NUMASTOR, "trace", "-d", "1", disk], capture_output=True, text=True, env=e)
        lines = r.stderr.strip().splitlines()
        if r.returncode != 3 or len(lines) != 1 or not lines[0].startswith("numastor trace: cannot trace: ") \
                or want not in lines[0] or r.stdout:
            fail("%s: exit %d, stderr %r, stdout %r" % (name, r.returncode, r.stderr, r.stdout[:200]))
        else:
            print("ok   %s: exit 3, %s" % (name, lines[0]))
        rj = subprocess.run(pre + [NUMASTOR, "trace", "-j", "-d", "1", disk], capture_output=True, text=True, env=e)
        try:
            ej = json.loads(rj.stdout)
            if rj.returncode != 3 or want not in json.dumps(ej):
                fail("%s -j: exit %d, %r" % (name, rj.returncode, rj.stdout[:200]))
        except ValueError:
            fail("%s -j: not a JSON error document: %r" % (name, rj.stdout[:200]))
    r = subprocess.run([NUMASTOR, "trace", "-v", "-d", "1", disk], capture_output=True, text=True,
                       env=dict(os.environ, NUMASTOR_TEST_TRACE_FAIL="verifier"))
    if "invalid mem access" not in r.stderr or r.returncode != 3:
        fail("-v on a refused program does not show the loader's log: %r" % r.stderr)
    left, _ = left_after(base)
    if left:
        fail("programs left after a refusal: %s" % sorted(left))
    # bad options
    for args in (["-d", "0"], ["-d", "x"], ["-f", "svg"], ["--nope"]):
        r = subprocess.run([NUMASTOR, "trace"] + args, capture_output=True, text=True)
        if r.returncode != 3 or "Try 'numastor trace --help'" not in r.stderr:
            fail("trace %s: exit %d %r" % (" ".join(args), r.returncode, r.stderr))


if __name__ == "__main__":
    sys.exit(main())
