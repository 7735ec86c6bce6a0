#!/usr/bin/env python3
"""The metrics say what the report says, on every fixture machine.

  check-metrics.py NUMASTOR FIXTURES_DIR MANPAGE

- numastor_device_numa_node is -1 only for a device whose node is unknown: a forced device
  reports the node the kernel reports for its function, and numastor_device_node_forced is 1
  for exactly the devices whose node_source is "forced";
- numastor_device_remote_interrupts_total is the remote part of the queue vectors' interrupts
  (local="false" of numastor_device_queue_interrupts_total), present for the same devices;
- numastor_notes has every class, 0 included, adds up to the JSON report's notes, and no note
  falls in "other" (a field output-prom.c's table does not know);
- the series stay within 20 + D x (11 + N) + V + F (D disks that are not virtual, N nodes,
  V virtual ones, F findings); a healthy machine meets it exactly (the healthy fixture, and the
  64-disk one when FIXTURES_DIR holds it: gen-fixtures.py DIR --large), and the count the man
  page's METRICS section states for the 64-disk fixture is the bound there;
- hand-stated values of a few fixtures (cloud: node 0 forced; hba: sda's 18233602 interrupts on
  the remote node; garbage-numbers: its notes by class; healthy: nothing remote, no note).
- numastor trace's metrics (trace -f prometheus on the replays of tests/fixtures/trace/, their
  trees generated in FIXTURES_DIR) say what its JSON of the same window says: the requests,
  bytes and remote interrupts per (device, submit node, complete node) are its pairs', the
  ratios its shares (absent where a share is null), the latency summary's counts add up to the
  device's requests; no per-CPU or per-IRQ label, at most 2 + 15 x devices + 3 x pairs series.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import promtext  # noqa: E402

CLASSES = ["machine", "irqbalance", "device", "queue", "pci", "irq", "rates", "module", "other"]

LARGE = "large-8n448c-64nvme"
fails = []


def bound(disks, nodes, virtual, findings):
    """The most series a check writes (man page, METRICS): 20 for the machine, 11 + one per
    node for each disk that is not virtual, one for each virtual disk, one per finding."""
    return 20 + disks * (11 + nodes) + virtual + findings


def fail(msg):
    fails.append(msg)
    print("FAIL: " + msg)


def run(numastor, root, *args):
    p = subprocess.run([numastor, "check", "--sysroot", root] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    # 3 is a verdict too when devices could not be judged (numastor_devices_unjudged)
    if p.returncode > 3 or (p.returncode == 3 and "numastor_devices_unjudged" not in p.stdout
                            and '"unjudged"' not in p.stdout):
        fail("%s: check %s exited %d: %s" % (root, " ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def by_device(series, name, **match):
    return {l.get("device"): v for n, l, v in series
            if n == name and all(l.get(k) == x for k, x in match.items())}


def check_fixture(numastor, root):
    fx = os.path.basename(root)
    s = promtext.parse(run(numastor, root, "--format", "prometheus"))[0]
    doc = json.loads(run(numastor, root, "--json") or "{}")

    source = {l["device"]: l["node_source"] for n, l, v in s if n == "numastor_device_info"}
    node = by_device(s, "numastor_device_numa_node")
    forced = by_device(s, "numastor_device_node_forced")
    for dev, v in node.items():
        if v == -1 and source.get(dev) == "forced":
            fail("%s: %s is forced but numastor_device_numa_node is -1" % (fx, dev))
        if source.get(dev) == "forced" and forced.get(dev) != 1:
            fail("%s: %s is forced but numastor_device_node_forced is %s" % (fx, dev, forced.get(dev)))
        if v < -1:
            fail("%s: %s: numastor_device_numa_node %s" % (fx, dev, v))
    for dev, v in forced.items():
        if v not in (0, 1) or (v == 1) != (source.get(dev) == "forced"):
            fail("%s: %s: numastor_device_node_forced %s, node_source %s" % (fx, dev, v, source.get(dev)))

    remote = by_device(s, "numastor_device_remote_interrupts_total")
    split = by_device(s, "numastor_device_queue_interrupts_total", local="false")
    if remote != split:
        fail("%s: remote interrupts %s are not the local=\"false\" split %s" % (fx, remote, split))

    notes = {l.get("class"): v for n, l, v in s if n == "numastor_notes"}
    if sorted(notes) != sorted(CLASSES):
        fail("%s: numastor_notes classes %s" % (fx, sorted(notes)))
    want = len(doc.get("notes") or [])
    if sum(notes.values()) != want:
        fail("%s: numastor_notes add up to %d, the JSON report has %d notes" % (fx, sum(notes.values()), want))
    if notes.get("other"):
        fail("%s: %d notes of a field output-prom.c does not class: %s" %
             (fx, notes["other"], sorted({n.get("field") for n in doc.get("notes") or []})))

    virtual = sum(1 for n, l, v in s if n == "numastor_device_info") - len(node)
    nodes = int(next((v for n, l, v in s if n == "numastor_numa_nodes"), 0))
    nfind = sum(1 for n, l, v in s if n == "numastor_finding")
    most = bound(len(node), nodes, virtual, nfind)
    if len(s) > most:
        fail("%s: %d series, more than 20 + %d x (11 + %d) + %d + %d = %d" %
             (fx, len(s), len(node), nodes, virtual, nfind, most))
    return s


TRACE_FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "trace")


def trace_run(numastor, root, replay, args):
    env = dict(os.environ, NUMASTOR_TEST_TRACE_ROOT=root, NUMASTOR_TEST_TRACE_REPLAY=replay)
    return subprocess.run([numastor, "trace"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env)


def check_trace(numastor, fxdir, tmp):
    """numastor trace's metrics against its own JSON of the same replayed window."""
    n = 0
    for fn, fx, root, replay in promtext.trace_replays(TRACE_FIXTURES, fxdir, tmp):
        j = trace_run(numastor, root, replay, fx["args"] + ["-j"])
        p = trace_run(numastor, root, replay, fx["args"] + ["-f", "prometheus"])
        if p.returncode != j.returncode or p.returncode not in (0, 1):
            fail("trace %s: -f prometheus exited %d, -j %d: %s" % (fn, p.returncode, j.returncode, p.stderr.strip()))
            continue
        doc = json.loads(j.stdout)
        s = promtext.parse(p.stdout)[0]
        n += 1
        npairs = sum(len(d["pairs"]) for d in doc["devices"])
        if len(s) > 2 + 15 * len(doc["devices"]) + 3 * npairs:
            fail("trace %s: %d series, more than 2 + 15 x %d + 3 x %d" % (fn, len(s), len(doc["devices"]), npairs))
        for name, l, v in s:
            if set(l) & {"cpu", "irq", "hw_queue"}:
                fail("trace %s: %s has a per-CPU or per-IRQ label: %s" % (fn, name, l))
        lab = lambda x: "unknown" if x is None else str(x)  # noqa: E731
        for d in doc["devices"]:
            for metric, key in (("numastor_io_requests_total", "requests"), ("numastor_io_bytes_total", "bytes"),
                                ("numastor_io_irq_remote_total", "irq_remote")):
                have = {(l["submit_node"], l["complete_node"]): v for name, l, v in s
                        if name == metric and l["device"] == d["name"]}
                want = {(lab(x["submit_node"]), lab(x["complete_node"])): x[key] for x in d["pairs"]}
                if have != want:
                    fail("trace %s: %s %s %s, the JSON's pairs %s" % (fn, d["name"], metric, have, want))
            for metric, share in (("numastor_io_complete_remote_ratio", None if d["complete_local_share"] is None
                                   else 1 - d["complete_local_share"]),
                                  ("numastor_io_irq_remote_ratio", d["irq_remote_share"])):
                have = [v for name, l, v in s if name == metric and l == {"device": d["name"]}]
                if d["requests"] < 100:
                    share = None  # too few to judge: the gauge is absent, as the finding is
                if (share is None and have) or (share is not None and (len(have) != 1 or abs(have[0] - share) > 1e-4)):
                    fail("trace %s: %s %s %s, the JSON says %s" % (fn, d["name"], metric, have, share))
            counts = sum(v for name, l, v in s if name == "numastor_io_latency_seconds_count" and
                         l["device"] == d["name"])
            # the summary counts timed requests: all of them when the window timed every one
            untimed = doc["window"]["untimed"]
            if d["requests"] and (counts > d["requests"] or (untimed == 0 and counts != d["requests"])):
                fail("trace %s: %s latency counts add up to %s, %d requests (%d untimed in the window)"
                     % (fn, d["name"], counts, d["requests"], untimed))
        win = [v for name, l, v in s if name == "numastor_trace_window_seconds"]
        if win != [doc["window"]["seconds"]]:
            fail("trace %s: numastor_trace_window_seconds %s, the JSON's window %s" % (fn, win, doc["window"]))
    print("trace: metrics as its JSON says on %d replays" % n)


def main():
    numastor, fxdir, man = sys.argv[1:4]
    got = {}
    for name in sorted(os.listdir(fxdir)):
        root = os.path.join(fxdir, name)
        if os.path.isdir(root):
            got[name] = check_fixture(numastor, root)

    def value(fx, name, **labels):
        for n, l, v in got.get(fx, []):
            if n == name and all(l.get(k) == x for k, x in labels.items()):
                return v
        return None

    # what the fixtures are built to show (tests/fixtures/gen-fixtures.py)
    cloud = "cloud-2n64c-8nvme-forced-node0"
    for i in range(8):
        d = "nvme%dn1" % i
        if value(cloud, "numastor_device_numa_node", device=d) != 0 or \
                value(cloud, "numastor_device_node_forced", device=d) != 1:
            fail("cloud: %s: numa_node %s, node_forced %s (want 0, 1: the node the driver forced)" %
                 (d, value(cloud, "numastor_device_numa_node", device=d),
                  value(cloud, "numastor_device_node_forced", device=d)))
    hba = "hba-megaraid-node1-irq-cpu0"
    v = value(hba, "numastor_device_remote_interrupts_total", device="sda")
    if v != 18233602:
        fail("hba: sda's remote interrupts %s, want 18233602 (its one vector fires on node 0, sda is on 1)" % v)
    healthy = "baremetal-2s-4nvme-healthy"
    for i in range(4):
        d = "nvme%dn1" % i
        if value(healthy, "numastor_device_remote_interrupts_total", device=d) != 0:
            fail("healthy: %s has remote interrupts" % d)
        if value(healthy, "numastor_device_node_forced", device=d) != 0:
            fail("healthy: %s node_forced is not 0" % d)
    if any(value(healthy, "numastor_notes", **{"class": c}) != 0 for c in CLASSES):
        fail("healthy: notes")
    garbage = {"machine": 8, "irqbalance": 0, "device": 2, "queue": 2, "pci": 5, "irq": 4, "rates": 0,
               "module": 0, "other": 0}
    have = {c: value("garbage-numbers", "numastor_notes", **{"class": c}) for c in CLASSES}
    if have != garbage:
        fail("garbage-numbers: notes by class %s, want %s" % (have, garbage))
    # a node that is really unknown stays -1, and whether it was forced is not known either
    if value("broken-inputs", "numastor_device_numa_node", device="nvme0n1") != -1 or \
            value("broken-inputs", "numastor_device_node_forced", device="nvme0n1") is not None:
        fail("broken-inputs: nvme0n1 (node unknown) numa_node %s, node_forced %s" %
             (value("broken-inputs", "numastor_device_numa_node", device="nvme0n1"),
              value("broken-inputs", "numastor_device_node_forced", device="nvme0n1")))

    # The count the man page states for the 64-disk fixture is the bound at D = 64, N = 8
    # (healthy: no finding, no virtual disk), which a healthy machine meets exactly: the healthy
    # fixture here, and the 64-disk one itself when FIXTURES_DIR holds it (gen-fixtures.py
    # --large; its tree is too slow to write on a disk-backed TMPDIR for every run).
    with open(man) as f:
        m = re.search(r"_%s_[^*]*\*(\d+)\* series" % LARGE, f.read())
    stated = int(m.group(1)) if m else None
    if stated != bound(64, 8, 0, 0):
        fail("the man page states %s series for %s, the bound there is %d" % (stated, LARGE, bound(64, 8, 0, 0)))
    for fx, disks, nodes in ((healthy, 4, 2), (LARGE, 64, 8)):
        if fx not in got:
            continue
        if len(got[fx]) != bound(disks, nodes, 0, 0):
            fail("%s: %d series, the bound for a healthy machine of %d disks on %d nodes is %d" %
                 (fx, len(got[fx]), disks, nodes, bound(disks, nodes, 0, 0)))
        else:
            print("%s: %d series (20 + %d x (11 + %d))" % (fx, len(got[fx]), disks, nodes))

    with open(numastor, "rb") as f:
        hooks = b"NUMASTOR_TEST_TRACE_REPLAY" in f.read()
    if hooks:
        with tempfile.TemporaryDirectory(prefix="numastor-trace-metrics.") as tmp:
            check_trace(numastor, fxdir, tmp)
    else:
        print("trace: not checked, %s has no test hooks (meson -Dtest_hooks=true)" % numastor)

    if fails:
        print("metrics: %d failed" % len(fails))
        return 1
    print("metrics: all passed (%d fixtures)" % len(got))
    return 0


if __name__ == "__main__":
    sys.exit(main())
