#!/usr/bin/env python3
"""The alerting rules against numastor's own metrics.

  check-alerts.py NUMASTOR FIXTURES_DIR

- every alert of data/numastor-alerts.yml fires in some case of alerts-test.yml (an alert
  without a firing test fails here), and that file names no alert the rules do not have;
- alerts-test.yml passes `promtool test rules`;
- generated cases, their series the fixtures' own `check --format prometheus` held for five
  hours (gauges constant, counters growing at a thousandth of their since-boot value a minute,
  so the rates keep the since-boot shares; numastor.prom rewritten every minute):
  - the healthy fixture fires no alert at all;
  - the forced-node cloud fixture (8 disks, each node-forced, with irq-confined,
    irqbalance-confines and irq-fires-remote its effects) fires exactly one alert, for its one
    cause, not one per disk nor one per effect: the list below, written by hand;
  - every fixture fires at most one alert per cause (ALERTS counted by cause), and as many
    NumastorCritical alerts as its report's summary names causes at critical;
- numastor trace's metrics of each replay of tests/fixtures/trace/ (trace -f prometheus, a
  window every minute for an hour, the same each time) fire NumastorIoCrossesNodes for exactly
  the devices of TRACE below, written by hand from the fixtures' records: those whose interrupt
  remote share (or, with no interrupt CPU known, completion remote share) is above 0.25.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import promtext  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = os.path.join(HERE, "..", "..", "data", "numastor-alerts.yml")
TESTS = os.path.join(HERE, "alerts-test.yml")
FILE = "/var/lib/prometheus/node-exporter/numastor.prom"
MINUTES = 300  # samples, one a minute
EVAL = ["30m", "90m", "4h"]  # a silent machine: before some rule's `for`, and after every one

REMEDY = "`numastor check` on the host gives the evidence and the remedy (numastor-check(8), FINDINGS)."
DEVICES = ", ".join("nvme%dn1" % i for i in range(8))
# The cloud fixture's alerts, by hand: one per cause. Its remote shares are those of its
# since-boot counts (tests/fixtures/gen-fixtures.py: cloud_2n64c_8nvme_forced_node0), e.g.
# nvme1n1 13274 of 13274 + 7885 a minute.
CLOUD = {
    "NumastorCritical": [
        ({"severity": "critical", "instance": "cloud", "cause": "node-forced"},
         {"summary": "numastor: node-forced on 8 device(s) of cloud",
          "description": "Critical NUMA locality cause node-forced on %s; its effects: irq-confined on 8, "
                         "irq-fires-remote on 8, irqbalance-confines on 8; %s" % (DEVICES, REMEDY)})],
}

# NumastorIoCrossesNodes by hand, per trace replay (tests/fixtures/trace/): the remote interrupt
# shares of their records, e.g. cloud-forced-remote's nvme1n1 2500 of 5500 known, virtio's sda 900
# of 1250; baremetal-info's nvme3n1 (60 requests, all remote) does not fire: below 100 requests
# trace prints no ratio (too few to judge, as for the finding). nvme0n1 fires on its ratio alone
# though trace says info (no slower): the alert is on a sustained share, the finding on one window.
TRACE = {
    "baremetal-info": ["nvme0n1"],
    "baremetal-local": [],
    "cloud-forced-remote": ["nvme1n1", "nvme2n1"],
    "multipath-paths": [],
    "virtio-scsi-irq-remote": ["sda"],
}
TRACE_FIXTURES = os.path.join(HERE, "..", "fixtures", "trace")

fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL: " + msg)


def load_yaml(path):
    try:
        import yaml
    except ImportError:
        return None
    with open(path) as f:
        return yaml.safe_load(f)


def alert_names():
    doc = load_yaml(RULES)
    if doc is not None:
        return [r["alert"] for g in doc["groups"] for r in g["rules"] if "alert" in r]
    with open(RULES) as f:  # no python3-yaml: the rules file's own layout
        return re.findall(r"^\s*- alert:\s*(\S+)\s*$", f.read(), re.M)


def fired_in_tests():
    """{alert: fired in some case}, from alerts-test.yml."""
    doc = load_yaml(TESTS)
    out = {}
    if doc is not None:
        for t in doc["tests"]:
            for a in t.get("alert_rule_test") or []:
                out[a["alertname"]] = out.get(a["alertname"], False) or bool(a.get("exp_alerts"))
        return out
    with open(TESTS) as f:
        for name, rest in re.findall(r"alertname:\s*(\S+)\s*\n\s*exp_alerts:(.*)", f.read()):
            out[name] = out.get(name, False) or rest.strip() != "[]"
    return out


def quote(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def case(numastor, root, instance, expected, names, step=1, samples=MINUTES):
    """A promtool test case: the fixture's metrics as series, and each alert's expectation (at
    4h, after every `for`; a machine expected to fire nothing is looked at earlier too)."""
    p = subprocess.run([numastor, "check", "--sysroot", root, "--format", "prometheus"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode > 3:  # 3: some device could not be judged, still a verdict
        fail("%s: check exited %d: %s" % (root, p.returncode, p.stderr.strip()))
    series, types = promtext.parse(p.stdout)
    lines = ["  - interval: %dm" % step, "    input_series:"]
    for name, labels, v in series:
        labels = dict(instance=instance, **labels)
        if types.get(name) == "counter":
            values = "%d+%dx%d" % (v, v * step // 1000, samples)
        else:
            values = "%sx%d" % (repr(v) if v != int(v) else int(v), samples)
        lines += ["      - series: %s" % quote(promtext.selector(name, labels)), "        values: '%s'" % values]
    lines += ["      - series: %s" % quote('node_textfile_mtime_seconds{instance="%s",file="%s"}' % (instance, FILE)),
              "        values: '0+%dx%d'" % (60 * step, samples),
              "      - series: %s" % quote('node_textfile_scrape_error{instance="%s"}' % instance),
              "        values: '0x%d'" % samples,
              "    alert_rule_test:"]
    for name in names:
        for t in EVAL if not expected else EVAL[-1:]:
            lines += ["      - eval_time: %s" % t, "        alertname: %s" % name]
            exp = expected.get(name, [])
            if not exp:
                lines.append("        exp_alerts: []")
                continue
            lines.append("        exp_alerts:")
            for labels, ann in exp:
                lines.append("          - exp_labels: {%s}" % ", ".join("%s: %s" % (k, quote(x)) for k, x in labels.items()))
                lines.append("            exp_annotations:")
                lines += ["              %s: %s" % (k, quote(x)) for k, x in ann.items()]
    return lines


def promtool(path):
    p = subprocess.run(["promtool", "test", "rules", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    return p.returncode, p.stdout


def main():
    numastor, fxdir = sys.argv[1:3]
    names = alert_names()
    if not names:
        fail("no alert in %s" % RULES)
    fired = fired_in_tests()
    for n in names:
        if not fired.get(n):
            fail("%s: no case of alerts-test.yml fires it" % n)
    for n in sorted(set(fired) - set(names)):
        fail("alerts-test.yml tests %s, which the rules do not have" % n)

    rc, out = promtool(TESTS)
    if rc:
        fail("promtool test rules alerts-test.yml:\n" + out)

    with tempfile.TemporaryDirectory(prefix="numastor-alerts.") as tmp:
        for label, fx, expected in (("healthy", "baremetal-2s-4nvme-healthy", {}),
                                    ("cloud", "cloud-2n64c-8nvme-forced-node0", CLOUD)):
            doc = ["# generated by check-alerts.py from %s's metrics" % fx, "rule_files:",
                   "  - %s" % quote(os.path.abspath(RULES)), "evaluation_interval: 1m", "tests:"]
            doc += case(numastor, os.path.join(fxdir, fx), label, expected, names)
            path = os.path.join(tmp, "%s-test.yml" % label)
            with open(path, "w") as f:
                f.write("\n".join(doc) + "\n")
            rc, out = promtool(path)
            if rc:
                fail("%s (%s): promtool test rules:\n%s" % (label, fx, out))
            else:
                print("%s: %s" % (label, "no alert" if not expected else
                                  "%d alerts, one per cause" % sum(len(v) for v in expected.values())))

        # every fixture: one alert per cause at most, and one NumastorCritical per critical cause
        import json
        doc = ["# generated by check-alerts.py from every fixture's metrics", "rule_files:",
               "  - %s" % quote(os.path.abspath(RULES)), "evaluation_interval: 5m", "tests:"]
        # a sample every 5 minutes for 2h: past every rule's `for` and rate window, at a tenth of
        # the evaluations of the cases above
        for fx in sorted(os.listdir(fxdir)):
            root = os.path.join(fxdir, fx)
            p = subprocess.run([numastor, "check", "--sysroot", root, "--json"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True)
            if p.returncode > 3 or not p.stdout:
                continue
            summary = json.loads(p.stdout)["summary"]
            crit = len({c["id"] for c in summary["causes"] if c["severity"] == "critical"})
            lines = case(numastor, root, fx, {}, [], step=5, samples=24)
            lines = lines[:lines.index("    alert_rule_test:")]
            lines += ["    promql_expr_test:",
                      "      - expr: 'count by (instance, cause) (ALERTS{alertstate=\"firing\"}) > 1'",
                      "        eval_time: 2h",
                      "        exp_samples: []",
                      "      - expr: 'count(ALERTS{alertstate=\"firing\",alertname=\"NumastorCritical\"}) or vector(0)'",
                      "        eval_time: 2h",
                      "        exp_samples:",
                      "          - labels: '{}'",
                      "            value: %d" % crit]
            doc += lines
        path = os.path.join(tmp, "every-fixture-test.yml")
        with open(path, "w") as f:
            f.write("\n".join(doc) + "\n")
        rc, out = promtool(path)
        if rc:
            fail("every fixture: promtool test rules:\n%s" % out[-4000:])
        else:
            print("every fixture: at most one alert per cause, one NumastorCritical per critical cause")

        # numastor trace's metrics (test builds only: the replay hooks)
        with open(numastor, "rb") as f:
            hooks = b"NUMASTOR_TEST_TRACE_REPLAY" in f.read()
        if not hooks:
            print("trace: not checked, %s has no test hooks (meson -Dtest_hooks=true)" % numastor)
        else:
            doc = ["# generated by check-alerts.py from numastor trace's metrics of the replays", "rule_files:",
                   "  - %s" % quote(os.path.abspath(RULES)), "evaluation_interval: 1m", "tests:"]
            seen = []
            for name, fx, root, replay in promtext.trace_replays(TRACE_FIXTURES, fxdir, tmp):
                env = dict(os.environ, NUMASTOR_TEST_TRACE_ROOT=root, NUMASTOR_TEST_TRACE_REPLAY=replay)
                p = subprocess.run([numastor, "trace", "-f", "prometheus"] + fx["args"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, universal_newlines=True, env=env)
                if p.returncode not in (0, 1):
                    fail("trace %s exited %d: %s" % (name, p.returncode, p.stderr.strip()))
                    continue
                if name not in TRACE:
                    fail("trace replay %s: no hand-written expectation in TRACE" % name)
                    continue
                seen.append(name)
                series, types = promtext.parse(p.stdout)
                doc += ["  - interval: 1m", "    input_series:"]
                for sname, labels, v in series:
                    labels = dict(instance=name, **labels)
                    values = "%d+%dx60" % (v, v) if types.get(sname) == "counter" else "%sx60" % repr(v)
                    doc += ["      - series: %s" % quote(promtext.selector(sname, labels)),
                            "        values: '%s'" % values]
                doc += ["    promql_expr_test:",
                        "      - expr: 'ALERTS{alertname=\"NumastorIoCrossesNodes\",alertstate=\"firing\"}'",
                        "        eval_time: 45m"]
                want = TRACE[name]
                if not want:
                    doc.append("        exp_samples: []")
                else:
                    doc.append("        exp_samples:")
                    for dev in want:
                        doc += ["          - labels: '%s'" % promtext.selector(
                                    "ALERTS", {"alertname": "NumastorIoCrossesNodes", "alertstate": "firing",
                                               "device": dev, "instance": name, "severity": "warning"}),
                                "            value: 1"]
                doc += ["      - expr: 'ALERTS{alertname=\"NumastorIoCrossesNodes\",alertstate=\"firing\"}'",
                        "        eval_time: 20m", "        exp_samples: []"]
            path = os.path.join(tmp, "trace-test.yml")
            with open(path, "w") as f:
                f.write("\n".join(doc) + "\n")
            rc, out = promtool(path)
            if rc:
                fail("trace replays: promtool test rules:\n%s" % out[-4000:])
            elif sorted(seen) != sorted(TRACE):
                fail("trace replays checked %s, TRACE expects %s" % (sorted(seen), sorted(TRACE)))
            else:
                print("trace: NumastorIoCrossesNodes on %s" % ", ".join(
                    "%s %s" % (n, "+".join(TRACE[n]) or "none") for n in sorted(TRACE)))

    if fails:
        print("alerts: %d failed" % len(fails))
        return 1
    print("alerts: all passed (%s)" % ", ".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
