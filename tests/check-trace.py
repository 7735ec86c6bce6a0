#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""numastor trace's writers and verdicts, without a kernel: the replay fixtures of
tests/fixtures/trace/ (each the kernel side's maps as records and latency buckets, and the
fixture tree of tests/fixtures/gen-fixtures.py it was taken on), run through
NUMASTOR_TEST_TRACE_ROOT and NUMASTOR_TEST_TRACE_REPLAY (test_hooks builds).

  check-trace.py BUILD/numastor [FIXTURE...]

What is expected is computed here, from the records and the tree, not taken from a run:
- the CPUs' nodes from the tree's sys/devices/system/node/node*/cpulist, the disks from
  sys/block/*/dev, a multipath path disk (nvmeXcYnZ, hidden) folded into its head nvmeXnZ;
- per device: requests and bytes, requests per (submit node, complete node) with those whose
  interrupt CPU is on another node than the submitter's or unknown, the local completion
  share, the remote interrupt share (of those with a known interrupt CPU), per hardware queue
  the CPUs seen and how the interrupt CPU was known (handler, vector, mixed, null);
- the medians of local and remote completions from the buckets (log-linear, as
  lib/probe/histogram.h: the value a percentile reports lies within its bucket);
- the finding's severity by the contract's rule (none under 100 requests or both shares under
  5%; info from 5%; warning from 25% when the remote median is 1.1 times the local one or
  more, or nothing completed locally), checked against what each fixture states by hand
  ("expect"), and the exit code (1 when any warning);
- `because`: the cause findings (caused_by null) `check --sysroot TREE --json` raises on the
  device.
Then, for each fixture: `trace -j` validates against schema/numastor-trace.schema.json and says
all of the above; `trace` (text) has no line over 80 columns, the heading says how it attached,
the table a row per device with its node, requests and shares, the findings with their
severity and causes, the notes the lost requests; `trace -v` a row per hardware queue with its
requests and CPUs; `trace -f prometheus` passes promtool (when installed) and its counters and
ratios are the computed ones, with no per-CPU or per-IRQ label; every run exits as computed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "prometheus"))
sys.path.insert(0, os.path.join(HERE, "vm"))
import promtext  # noqa: E402
from compare import cpulist as fmt_cpulist, cpuset as cpulist  # noqa: E402  the bed's own cpulists
import schemas  # noqa: E402

FXDIR = os.path.join(HERE, "fixtures", "trace")
SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor-trace.schema.json")))
SUB_BITS = 5
MIN_REQUESTS, INFO_SHARE, WARN_SHARE, WARN_GAP = 100, 0.05, 0.25, 1.10
failed = 0


def fail(msg):
    global failed
    failed += 1
    print("FAIL: " + msg)
    if os.environ.get("NUMASTOR_FAIL_FAST") == "1":
        sys.exit(1)


def bucket_low(i):
    g, m = i >> SUB_BITS, i & ((1 << SUB_BITS) - 1)
    return m if g == 0 else ((1 << SUB_BITS) + m) << (g - 1)


def bucket_high(i):
    g = i >> SUB_BITS
    return bucket_low(i) if g == 0 else bucket_low(i) + (1 << (g - 1)) - 1


def median_bucket(counts):
    """The bucket holding the sample of rank ceil(count / 2): {bucket: count} -> bucket or None."""
    total = sum(counts.values())
    if not total:
        return None
    rank, seen = (total + 1) // 2, 0
    for b in sorted(counts):
        seen += counts[b]
        if seen >= rank:
            return b
    return None


class Tree:
    """What the test reads of a fixture tree itself: the CPUs' nodes and the disks."""

    def __init__(self, root):
        self.root = root
        self.node = {}
        nd = os.path.join(root, "sys/devices/system/node")
        for e in os.listdir(nd):
            m = re.match(r"^node(\d+)$", e)
            if m:
                for c in cpulist(open(os.path.join(nd, e, "cpulist")).read()):
                    self.node[c] = int(m.group(1))
        self.nnodes = len({e for e in os.listdir(nd) if re.match(r"^node\d+$", e)})
        self.disk_of = {}  # "M:m" -> disk name
        self.device_of = {}  # disk name -> the device that shows its requests
        for d in os.listdir(os.path.join(root, "sys/block")):
            self.disk_of[open(os.path.join(root, "sys/block", d, "dev")).read().strip()] = d
            m = re.match(r"^nvme(\d+)c\d+n(\d+)$", d)
            hidden = os.path.join(root, "sys/block", d, "hidden")
            if m and os.path.exists(hidden) and open(hidden).read().strip() == "1":
                self.device_of[d] = "nvme%sn%s" % (m.group(1), m.group(2))
            else:
                self.device_of.setdefault(d, d)

    def cpu_node(self, cpu):
        return self.node.get(cpu)


def expected(fx, tree):
    """Per device asked for, what the records and buckets say (see the docstring)."""
    rp = fx["replay"]
    asked = fx["args"] or sorted({tree.device_of[d] for d in tree.device_of})
    dev = {name: {"disks": set(), "requests": 0, "bytes": 0, "local": 0, "irq_known": 0, "irq_remote": 0,
                  "irq_unknown": 0, "pairs": {}, "queues": {}, "buckets": {"local": {}, "remote": {}},
                  "class_count": {"local": 0, "remote": 0}, "class_sum": {"local": [0, 0], "remote": [0, 0]}}
           for name in asked}
    for name in dev:
        # the disks that carry its requests: a head's path disks, else the disk itself
        paths = {d for d, o in tree.device_of.items() if o == name and d != name}
        dev[name]["disks"] = paths or {name}
    for r in rp["records"]:
        disk = tree.disk_of[r["dev"]]
        name = tree.device_of[disk]
        if name not in dev:
            continue
        e = dev[name]
        sn, cn = tree.cpu_node(r["submit_cpu"]), tree.cpu_node(r["complete_cpu"])
        n = r["requests"]
        e["requests"] += n
        e["bytes"] += r["bytes"]
        if sn is not None and sn == cn:
            e["local"] += n
        p = e["pairs"].setdefault((sn, cn), {"requests": 0, "bytes": 0, "irq_remote": 0, "irq_unknown": 0})
        p["requests"] += n
        p["bytes"] += r["bytes"]
        inode = tree.cpu_node(r["irq_cpu"]) if r["irq_cpu"] >= 0 else -1
        cls = "remote" if crossed(sn, cn, inode) else "local"
        e["class_count"][cls] += r.get("timed", n)  # the summary counts timed requests only
        e["class_sum"][cls][0] += r["latency_ns_sum"]
        e["class_sum"][cls][1] += r.get("timed", n)
        if r["irq_cpu"] < 0 or r["irq_source"] == "unknown":
            e["irq_unknown"] += n
            p["irq_unknown"] += n
        else:
            e["irq_known"] += n
            if tree.cpu_node(r["irq_cpu"]) != sn:
                e["irq_remote"] += n
                p["irq_remote"] += n
        q = e["queues"].setdefault((disk, r["hwq"]), {"requests": 0, "submit": set(), "complete": set(), "irq": set(),
                                               "sources": set(), "vectors": set()})
        q["requests"] += n
        q["submit"].add(r["submit_cpu"])
        q["complete"].add(r["complete_cpu"])
        if r["irq_cpu"] >= 0 and r["irq_source"] != "unknown":
            q["irq"].add(r["irq_cpu"])
            q["sources"].add(r["irq_source"])
        if r["irq"]:
            q["vectors"].add(r["irq"])
    for b in rp["buckets"]:
        name = tree.device_of[tree.disk_of[b["dev"]]]
        if name not in dev:
            continue
        cls = "remote" if crossed(b["submit_node"], b["complete_node"], b.get("irq_node", -1)) else "local"
        h = dev[name]["buckets"][cls]
        h[b["bucket"]] = h.get(b["bucket"], 0) + b["count"]
    for name, e in dev.items():
        e["complete_local_share"] = e["local"] / e["requests"] if e["requests"] else None
        e["irq_remote_share"] = e["irq_remote"] / e["irq_known"] if e["irq_known"] else None
        e["p50"] = {cls: median_bucket(e["buckets"][cls]) for cls in ("local", "remote")}
        e["severity"] = severity(e)
    return asked, dev


def crossed(sn, cn, irq_node):
    """The latency classes: remote when completed, or interrupted, on another node than the
    submitter's (a submitter of no node: remote); an unknown interrupt CPU does not cross."""
    return sn is None or sn < 0 or cn != sn or (irq_node is not None and irq_node >= 0 and irq_node != sn)


def severity(e):
    if e["requests"] < MIN_REQUESTS:
        return None
    crs = 1 - e["complete_local_share"]
    irs = e["irq_remote_share"] if e["irq_remote_share"] is not None else 0
    top = max(crs, irs)
    if top < INFO_SHARE:
        return None
    lb, rb = e["p50"]["local"], e["p50"]["remote"]
    costs = lb is None or (rb is not None and bucket_high(rb) >= WARN_GAP * bucket_high(lb))
    return "warning" if top >= WARN_SHARE and costs else "info"


def check_facts(numastor, root):
    """What `check --sysroot TREE --json` says of each device: its cause findings (caused_by
    null) and its node ("-" when none), for `because` and the NODE column."""
    p = subprocess.run([numastor, "check", "--sysroot", root, "--json"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    doc = json.loads(p.stdout or "{}")
    causes, nodes = {}, {}
    for f in doc.get("findings", []):
        if f.get("device") and not f.get("caused_by"):
            causes.setdefault(f["device"], []).append(f["id"])
    for d in doc.get("devices", []):
        nodes[d["name"]] = d["node"]
    return causes, nodes


def run(numastor, root, replay, args):
    env = dict(os.environ, NUMASTOR_TEST_TRACE_ROOT=root, NUMASTOR_TEST_TRACE_REPLAY=replay, LC_ALL="C.UTF-8")
    return subprocess.run([numastor, "trace"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env)


def near(a, b, tol):
    return a is not None and b is not None and abs(a - b) <= tol


def in_bucket(us, b):
    return us is not None and b is not None and bucket_low(b) / 1e3 - 0.05 <= us <= bucket_high(b) / 1e3 + 0.05


def check_json(name, fx, asked, dev, causes, nodes, p):
    rc_want = 1 if any(e["severity"] == "warning" for e in dev.values()) else 0
    if p.returncode != rc_want:
        fail("%s: trace -j exited %d, want %d: %s" % (name, p.returncode, rc_want, p.stderr.strip()))
    try:
        doc = json.loads(p.stdout)
        schemas.validate(doc, SCHEMA)
    except Exception as e:  # noqa: BLE001 -- any way it is not a valid document
        fail("%s: trace -j: %s" % (name, str(e).splitlines()[0] if str(e) else type(e).__name__))
        return None
    rp = fx["replay"]
    if doc["exit_code"] != rc_want:
        fail("%s: exit_code %s, want %d" % (name, doc["exit_code"], rc_want))
    if doc["parameters"]["devices"] != fx["args"]:
        fail("%s: parameters.devices %s, want %s" % (name, doc["parameters"]["devices"], fx["args"]))
    if doc["kernel"] != {"release": rp["kernel_release"], "attach": rp["attach"]}:
        fail("%s: kernel %s" % (name, doc["kernel"]))
    if not near(doc["window"]["seconds"], rp["seconds"], 0.001) or doc["window"]["stopped"] != rp["stopped"]:
        fail("%s: window %s, the replay says %s s stopped %s" % (name, doc["window"], rp["seconds"], rp["stopped"]))
    want_lost = {"records": rp["lost"]["records"], "missed": rp["lost"].get("missed", 0),
                 "unseen": rp["lost"].get("unseen")}
    if doc["lost"] != want_lost or doc["window"]["untimed"] != rp["lost"]["untimed"]:
        fail("%s: lost %s, window.untimed %s, the replay says %s" % (name, doc["lost"], doc["window"]["untimed"],
                                                                     rp["lost"]))
    got = {d["name"]: d for d in doc["devices"]}
    if sorted(got) != sorted(asked):
        fail("%s: devices %s, want %s" % (name, sorted(got), sorted(asked)))
    for dname, e in dev.items():
        d = got.get(dname)
        if not d:
            continue
        if d["node"] != nodes.get(dname):
            fail("%s: %s node %s, check says %s" % (name, dname, d["node"], nodes.get(dname)))
        if sorted(d["disks"]) != sorted(e["disks"]):
            fail("%s: %s disks %s, want %s" % (name, dname, d["disks"], sorted(e["disks"])))
        for k in ("requests", "bytes", "irq_unknown"):
            if d[k] != e[k]:
                fail("%s: %s %s %s, want %s" % (name, dname, k, d[k], e[k]))
        for k in ("complete_local_share", "irq_remote_share"):
            if (d[k] is None) != (e[k] is None) or (e[k] is not None and not near(d[k], e[k], 0.0001)):
                fail("%s: %s %s %s, want %s" % (name, dname, k, d[k], e[k]))
        pairs = {(x["submit_node"], x["complete_node"]): x for x in d["pairs"]}
        if sorted(pairs, key=str) != sorted(e["pairs"], key=str):
            fail("%s: %s pairs %s, want %s" % (name, dname, sorted(pairs, key=str), sorted(e["pairs"], key=str)))
        for key, want in e["pairs"].items():
            x = pairs.get(key)
            if x and any(x[k] != want[k] for k in want):
                fail("%s: %s pair %s: %s, want %s" % (name, dname, key, {k: x[k] for k in want}, want))
        for cls in ("local", "remote"):
            lat, b = d["latency_us"][cls], e["p50"][cls]
            if (lat is None) != (b is None):
                fail("%s: %s latency_us.%s %s, the buckets have %s" % (name, dname, cls, lat, b))
            elif lat and not in_bucket(lat["p50"], b):
                fail("%s: %s latency_us.%s.p50 %s outside its bucket %d-%d ns" %
                     (name, dname, cls, lat["p50"], bucket_low(b), bucket_high(b)))
            elif lat and e["class_sum"][cls][1] and not near(
                    lat["mean"], e["class_sum"][cls][0] / e["class_sum"][cls][1] / 1e3, 0.051):
                fail("%s: %s latency_us.%s.mean %s, the records' sums say %.1f" %
                     (name, dname, cls, lat["mean"], e["class_sum"][cls][0] / e["class_sum"][cls][1] / 1e3))
            elif lat and not lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]:
                fail("%s: %s latency_us.%s not ordered: %s" % (name, dname, cls, lat))
        queues = {(q["disk"], q["hw_queue"]): q for q in d["queues"]}
        if sorted(queues) != sorted(e["queues"]):
            fail("%s: %s queues %s, want %s" % (name, dname, sorted(queues), sorted(e["queues"])))
        for hwq, want in e["queues"].items():
            q = queues.get(hwq)
            if not q:
                continue
            src = None if not want["sources"] else "mixed" if len(want["sources"]) > 1 else next(iter(want["sources"]))
            exp = {"requests": want["requests"], "submit_cpus": fmt_cpulist(want["submit"]),
                   "complete_cpus": fmt_cpulist(want["complete"]),
                   "irq_cpus": fmt_cpulist(want["irq"]) if want["irq"] else None, "irq_source": src,
                   "irq": min(want["vectors"]) if want["vectors"] else None}
            if want["vectors"] and len(want["vectors"]) == 1 and q["irq"] != exp["irq"]:
                fail("%s: %s queue %s irq %s, want %s" % (name, dname, hwq, q["irq"], exp["irq"]))
            if not want["vectors"] and q["irq"] is not None:
                fail("%s: %s queue %s irq %s, no record saw one" % (name, dname, hwq, q["irq"]))
            for k in ("requests", "submit_cpus", "complete_cpus", "irq_cpus", "irq_source"):
                if q[k] != exp[k]:
                    fail("%s: %s queue %s %s %r, want %r" % (name, dname, hwq, k, q[k], exp[k]))
    # the findings: by the rule, as the fixture states by hand
    want_f = {n: e["severity"] for n, e in dev.items() if e["severity"]}
    if want_f != fx["expect"]:
        fail("%s: the rule gives %s, the fixture states %s (fixture or rule wrong)" % (name, want_f, fx["expect"]))
    got_f = {f["device"]: f for f in doc["findings"]}
    if {n: f["severity"] for n, f in got_f.items()} != want_f or len(got_f) != len(doc["findings"]):
        fail("%s: findings %s, want %s" % (name, [(f["device"], f["severity"]) for f in doc["findings"]], want_f))
    for n, f in got_f.items():
        e = dev.get(n)
        if not e:
            continue
        ev = f["evidence"]
        if ev["requests"] != e["requests"] or not near(ev["complete_remote_share"], 1 - e["complete_local_share"],
                                                        0.0001):
            fail("%s: %s evidence %s" % (name, n, ev))
        if (ev["irq_remote_share"] is None) != (e["irq_remote_share"] is None) or (
                e["irq_remote_share"] is not None and not near(ev["irq_remote_share"], e["irq_remote_share"], 0.0001)):
            fail("%s: %s evidence irq_remote_share %s, want %s" % (name, n, ev["irq_remote_share"],
                                                                    e["irq_remote_share"]))
        lb, rb = e["p50"]["local"], e["p50"]["remote"]
        if (ev["latency_gap"] is None) != (lb is None or rb is None):
            fail("%s: %s latency_gap %s with local %s, remote %s" % (name, n, ev["latency_gap"], lb, rb))
        elif lb is not None and rb is not None and not (
                bucket_low(rb) / bucket_high(lb) - 0.01 <= ev["latency_gap"] <= bucket_high(rb) / bucket_low(lb) + 0.01):
            fail("%s: %s latency_gap %s not between the buckets' bounds" % (name, n, ev["latency_gap"]))
        if sorted(f["because"]) != sorted(causes.get(n, [])):
            fail("%s: %s because %s, check's causes on it %s" % (name, n, f["because"], causes.get(n, [])))
        if f["remedy"]["action"] != "check" or "numastor check " + n not in f["remedy"]["text"] or \
                "numastor fix" not in f["remedy"]["text"]:
            fail("%s: %s remedy %s" % (name, n, f["remedy"]))
        if n not in f["message"] or "%.1f%%" % (100 * (1 - e["complete_local_share"])) not in f["message"]:
            fail("%s: %s message says not what crossed: %s" % (name, n, f["message"]))
    return doc


def pct(v):
    return "-" if v is None else "%.1f%%" % (100 * v)


def check_text(name, fx, tree, asked, dev, causes, nodes, p, verbose):
    rp = fx["replay"]
    rc_want = 1 if any(e["severity"] == "warning" for e in dev.values()) else 0
    what = "trace -v" if verbose else "trace"
    if p.returncode != rc_want:
        fail("%s: %s exited %d, want %d: %s" % (name, what, p.returncode, rc_want, p.stderr.strip()))
    lines = p.stdout.splitlines()
    for ln in lines:
        if len(ln) > 80:
            fail("%s: %s: a line of %d columns: %r" % (name, what, len(ln), ln))
    # the heading, however wrapped: the lines before the table
    head = " ".join(ln.strip() for ln in lines[:next((k for k, ln in enumerate(lines) if ln.startswith("DEVICE")),
                                                    len(lines))])
    how = "raw tracepoints" if rp["attach"] == "raw_tp" else "BTF tracepoints"
    if not head.startswith("numastor trace: %.1f s" % rp["seconds"]) or how not in head or \
            "%d nodes" % tree.nnodes not in head or rp["kernel_release"] not in head:
        fail("%s: %s heading %r" % (name, what, head))
    if ("stopped" in head) != rp["stopped"]:
        fail("%s: %s heading %r, stopped %s" % (name, what, head, rp["stopped"]))
    try:
        i = next(k for k, ln in enumerate(lines) if ln.split()[:1] == ["DEVICE"])
    except StopIteration:
        fail("%s: %s has no table" % (name, what))
        return
    cols = lines[i].split()
    if cols != ["DEVICE", "NODE", "REQUESTS", "LOCAL-COMPLETE", "IRQ-REMOTE", "P50-LOCAL", "P50-REMOTE"]:
        fail("%s: %s columns %s" % (name, what, cols))
    rows = {}
    for ln in lines[i + 1:]:
        if not ln.strip():
            break
        rows[ln.split()[0]] = ln.split()
    if sorted(rows) != sorted(asked):
        fail("%s: %s rows %s, want %s" % (name, what, sorted(rows), sorted(asked)))
    for dname, e in dev.items():
        r = rows.get(dname)
        if not r:
            continue
        want = [dname, "-" if nodes.get(dname) is None else str(nodes[dname]), str(e["requests"]), pct(e["complete_local_share"]), pct(e["irq_remote_share"])]
        if r[:5] != want:
            fail("%s: %s row %s, want %s" % (name, what, r[:5], want))
    text = p.stdout
    found = re.findall(r"^  (warning|info) io-crosses-nodes: (\S+?):", text, re.M)
    want_f = sorted((e["severity"], n) for n, e in dev.items() if e["severity"])
    if sorted(found) != want_f:
        fail("%s: %s findings %s, want %s" % (name, what, sorted(found), want_f))
    for n, ids in causes.items():
        if n in dict((d, s) for s, d in found) and not re.search(r"^    because: %s" % re.escape(", ".join(ids)), text, re.M):
            fail("%s: %s says no 'because: %s' for %s" % (name, what, ", ".join(ids), n))
    if not found and re.search(r"^findings$", text, re.M):
        fail("%s: %s has a findings heading and none" % (name, what))
    lost, untimed = rp["lost"]["records"], rp["lost"]["untimed"]
    if (lost > 0) != bool(re.search(r"^  %d requests not counted" % lost, text, re.M)):
        fail("%s: %s notes the %d lost requests wrong" % (name, what, lost))
    if (untimed > 0) != bool(re.search(r"^  %d requests counted without a latency" % untimed, text, re.M)):
        fail("%s: %s notes the %d untimed requests wrong" % (name, what, untimed))
    missed = rp["lost"].get("missed", 0)
    if (missed > 0) != bool(re.search(r"^  %d completions \(of any disk\) not counted" % missed, text, re.M)):
        fail("%s: %s notes the %d missed completions wrong" % (name, what, missed))
    unseen = rp["lost"].get("unseen") or 0
    if (unseen > 0) != bool(re.search(r"^  %d completions not counted: the disks' own counters" % unseen, text, re.M)):
        fail("%s: %s notes the %d unseen completions wrong" % (name, what, unseen))
    if verbose:
        for dname, e in dev.items():
            m = re.search(r"^%s: hardware queues.*\n    DISK +QUEUE +IRQ +REQUESTS +SUBMIT +COMPLETE +IRQ-CPUS +SOURCE\n((?:    \S+ +\d.*\n)*)" %
                          re.escape(dname), text, re.M)
            if not m:
                fail("%s: trace -v has no queue table for %s" % (name, dname))
                continue
            got = {(ln.split()[0], int(ln.split()[1])): ln.split() for ln in m.group(1).splitlines()}
            for key, q in e["queues"].items():
                g = got.get(key)
                if not g or g[3] != str(q["requests"]) or g[4] != fmt_cpulist(q["submit"]) or \
                        g[5] != fmt_cpulist(q["complete"]):
                    fail("%s: trace -v %s queue %s: %s, want %d requests from %s to %s" %
                         (name, dname, key, g, q["requests"], fmt_cpulist(q["submit"]), fmt_cpulist(q["complete"])))
            if sorted(got) != sorted(e["queues"]):
                fail("%s: trace -v %s queues %s, want %s" % (name, dname, sorted(got), sorted(e["queues"])))
    elif re.search(r"hardware queues", text):
        fail("%s: trace without -v prints the queues" % name)


def check_prom(name, fx, dev, p):
    rc_want = 1 if any(e["severity"] == "warning" for e in dev.values()) else 0
    if p.returncode != rc_want:
        fail("%s: trace -f prometheus exited %d, want %d" % (name, p.returncode, rc_want))
    if shutil.which("promtool"):
        c = subprocess.run(["promtool", "check", "metrics"], input=p.stdout, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        if c.returncode or c.stdout.strip():
            fail("%s: promtool check metrics: %s" % (name, c.stdout.strip()))
    try:
        series, types = promtext.parse(p.stdout)
    except ValueError as e:
        fail("%s: prometheus: %s" % (name, e))
        return

    def val(metric, **labels):
        v = [x for n, l, x in series if n == metric and l == labels]
        return v[0] if len(v) == 1 else None

    for n, l, v in series:
        if set(l) & {"cpu", "irq", "hwq", "hw_queue"}:
            fail("%s: a per-CPU or per-IRQ label: %s %s" % (name, n, l))
    for metric, typ in (("numastor_io_requests_total", "counter"), ("numastor_io_bytes_total", "counter"),
                        ("numastor_io_irq_remote_total", "counter"),
                        ("numastor_io_complete_remote_ratio", "gauge"), ("numastor_io_irq_remote_ratio", "gauge"),
                        ("numastor_io_latency_seconds", "summary"), ("numastor_trace_window_seconds", "gauge"),
                        ("numastor_trace_up", "gauge")):
        if types.get(metric) != typ:
            fail("%s: %s is %s, not a %s" % (name, metric, types.get(metric), typ))
    if val("numastor_trace_up") != 1:
        fail("%s: numastor_trace_up %s" % (name, val("numastor_trace_up")))
    if not near(val("numastor_trace_window_seconds"), fx["replay"]["seconds"], 0.001):
        fail("%s: numastor_trace_window_seconds %s" % (name, val("numastor_trace_window_seconds")))
    lab = lambda x: "unknown" if x is None else str(x)  # noqa: E731
    for dname, e in dev.items():
        pairs = {(l["submit_node"], l["complete_node"]): v for n, l, v in series
                 if n == "numastor_io_requests_total" and l["device"] == dname}
        want = {(lab(s), lab(c)): x["requests"] for (s, c), x in e["pairs"].items()}
        if pairs != want:
            fail("%s: %s numastor_io_requests_total %s, want %s" % (name, dname, pairs, want))
        for (s, c), x in e["pairs"].items():
            for metric, k in (("numastor_io_bytes_total", "bytes"), ("numastor_io_irq_remote_total", "irq_remote")):
                got = val(metric, device=dname, submit_node=lab(s), complete_node=lab(c))
                if got != x[k]:
                    fail("%s: %s %s{%s,%s} %s, want %s" % (name, dname, metric, s, c, got, x[k]))
        few = e["requests"] < 100  # too few to judge: no finding, and no ratio for the alert either
        crr = val("numastor_io_complete_remote_ratio", device=dname)
        want = None if e["complete_local_share"] is None or few else 1 - e["complete_local_share"]
        if (crr is None) != (want is None) or (want is not None and not near(crr, want, 1e-5)):
            fail("%s: %s numastor_io_complete_remote_ratio %s, want %s" % (name, dname, crr, want))
        irr = val("numastor_io_irq_remote_ratio", device=dname)
        want = None if few else e["irq_remote_share"]
        if (irr is None) != (want is None) or (want is not None and not near(irr, want, 1e-5)):
            fail("%s: %s numastor_io_irq_remote_ratio %s, want %s" % (name, dname, irr, want))
        for cls in ("local", "remote"):
            count = e["class_count"][cls]
            b = e["p50"][cls]
            got_c = val("numastor_io_latency_seconds_count", device=dname, locality=cls)
            got_q = val("numastor_io_latency_seconds", device=dname, locality=cls, quantile="0.5")
            if b is None:
                if got_c is not None or got_q is not None:
                    fail("%s: %s has %s latency series and no %s request" % (name, dname, cls, cls))
                continue
            if got_c != count:
                fail("%s: %s numastor_io_latency_seconds_count{%s} %s, want %d" % (name, dname, cls, got_c, count))
            if got_q is None or not in_bucket(got_q * 1e6, b):
                fail("%s: %s %s median %s s outside its bucket %d-%d ns" %
                     (name, dname, cls, got_q, bucket_low(b), bucket_high(b)))


def check_output_file(name, numastor, root, replay, args, prom, tmp):
    """-O FILE: the same bytes as standard output, written atomically (an old file replaced whole);
    a target that is not a regular file is refused before the window (exit 3), left as it was."""
    out = os.path.join(tmp, name + ".prom")
    with open(out, "w") as f:
        f.write("stale\n")
    p = run(numastor, root, replay, args + ["-f", "prometheus", "-O", out])
    with open(out) as f:
        got = f.read()
    if p.returncode != prom.returncode or p.stdout or got != prom.stdout:
        fail("%s: -O wrote %d bytes (exit %d, stdout %d bytes), standard output had %d (exit %d)"
             % (name, len(got), p.returncode, len(p.stdout), len(prom.stdout), prom.returncode))
    leftovers = [f for f in os.listdir(tmp) if f.startswith(name + ".prom.")]
    if leftovers:
        fail("%s: -O left temporary files: %s" % (name, leftovers))
    d = os.path.join(tmp, name + ".dir")
    os.mkdir(d)
    p = run(numastor, root, replay, args + ["-f", "prometheus", "-O", d])
    if p.returncode != 3 or "not writing" not in p.stderr or not os.path.isdir(d) or os.listdir(d):
        fail("%s: -O onto a directory: exit %d, %r" % (name, p.returncode, p.stderr))


def main():
    numastor = sys.argv[1]
    with open(numastor, "rb") as f:
        if b"NUMASTOR_TEST_TRACE_REPLAY" not in f.read():
            # a build without -Dtest_hooks=true would trace this machine's kernel instead
            print("SKIP: %s has no test hooks (meson -Dtest_hooks=true): the replay needs them" % numastor)
            return 77
    names = sys.argv[2:] or sorted(f[:-5] for f in os.listdir(FXDIR) if f.endswith(".json"))
    fixtures = {n: json.load(open(os.path.join(FXDIR, n + ".json"))) for n in names}
    with tempfile.TemporaryDirectory(prefix="numastor-trace.") as tmp:
        trees = sorted({fx["tree"] for fx in fixtures.values()})
        subprocess.run([sys.executable, os.path.join(HERE, "fixtures", "gen-fixtures.py"), tmp] + trees,
                       check=True, stdout=subprocess.DEVNULL)
        for name, fx in fixtures.items():
            root = os.path.join(tmp, fx["tree"])
            replay = os.path.join(tmp, name + ".replay.json")
            with open(replay, "w") as f:
                json.dump(fx["replay"], f)
            tree = Tree(root)
            asked, dev = expected(fx, tree)
            causes, nodes = check_facts(numastor, root)
            check_json(name, fx, asked, dev, causes, nodes, run(numastor, root, replay, fx["args"] + ["-j"]))
            check_text(name, fx, tree, asked, dev, causes, nodes, run(numastor, root, replay, fx["args"]), False)
            check_text(name, fx, tree, asked, dev, causes, nodes, run(numastor, root, replay, fx["args"] + ["-v"]),
                       True)
            prom = run(numastor, root, replay, fx["args"] + ["-f", "prometheus"])
            check_prom(name, fx, dev, prom)
            check_output_file(name, numastor, root, replay, fx["args"], prom, tmp)
            print("%s: %s" % (name, ", ".join("%s %s" % (n, e["severity"] or "none") for n, e in sorted(dev.items()))))
    if failed:
        print("trace: %d failed" % failed)
        return 1
    print("trace: %d fixtures" % len(fixtures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
