#!/usr/bin/env python3
"""The live machine: `numastor check` works here as root and as an unprivileged user, its JSON
validates against the schema, and what it reports agrees with sysfs read directly."""
import json
import os
import subprocess
import sys

import jsonschema
import schemas

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor.schema.json")))
FIX_SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor-fix.schema.json")))


def affinities():
    out = {}
    for n in os.listdir("/proc/irq"):
        v = read(f"/proc/irq/{n}/smp_affinity_list")
        if v is not None:
            out[n] = v
    return out


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def check_doc(doc, who):
    schemas.validate(doc, SCHEMA)
    # multipath path devices are reported under their head; empty ones (size 0) only with -a
    blocks = sorted(n for n in os.listdir("/sys/block")
                    if read(f"/sys/block/{n}/hidden") != "1" and read(f"/sys/block/{n}/size") != "0")
    got = sorted(d["name"] for d in doc["devices"])
    assert got == blocks, f"{who}: devices {got} != /sys/block {blocks}"
    for d in doc["devices"]:
        for p in d["paths"]:
            pci = p["pci"]
            if not pci:
                continue
            raw = read(f"/sys/bus/pci/devices/{pci['address']}/numa_node")
            assert str(pci["numa_node"]) == raw, f"{who}: {d['name']}: pci.numa_node {pci['numa_node']} != sysfs {raw}"
            for irq in pci["irqs"]:
                aff = read(f"/proc/irq/{irq['irq']}/smp_affinity_list")
                if aff is not None:
                    assert irq["affinity"] == aff, f"{who}: irq {irq['irq']}: affinity {irq['affinity']} != {aff}"
        mq = f"/sys/block/{d['name']}/mq"
        if os.path.isdir(mq):
            assert len(d["hw_queues"]) == len(os.listdir(mq)), f"{who}: {d['name']}: hw queue count"


def main():
    numastor = os.path.abspath(sys.argv[1])
    failures = 0
    runs = [("root", [])]
    if os.geteuid() == 0:
        runs.append(("nobody", ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]))
    for who, prefix in runs:
        for args in (["check"], ["check", "--json"]):
            code, out, err = run(prefix + [numastor, *args])
            if code not in (0, 1, 2):
                print(f"FAIL {who}: numastor {' '.join(args)} exited {code}: {err[:500]}")
                failures += 1
                continue
            if "--json" in args:
                try:
                    doc = json.loads(out)
                    check_doc(doc, who)
                    assert doc["summary"]["exit_code"] == code
                    if who == "nobody":
                        assert doc["privileged"] is False, "privileged should be false"
                        assert any(n["field"] == "privileged" for n in doc["notes"]), "no note about privileges"
                except (AssertionError, json.JSONDecodeError, jsonschema.ValidationError) as e:
                    print(f"FAIL {who}: {type(e).__name__}: {str(e)[:1500]}")
                    failures += 1
                    continue
            print(f"PASS {who}: numastor {' '.join(args)} (exit {code})")
    # fix --dry-run prints a plan (possibly empty) and changes nothing
    before = affinities()
    journal_before = os.path.exists("/run/numastor/journal.json")
    for args in (["fix", "--dry-run"], ["fix", "--dry-run", "--json"]):
        code, out, err = run([numastor, *args])
        try:
            assert code == 0, f"exited {code}: {err[:300]}"
            if "--json" in args:
                plan = json.loads(out)
                schemas.validate(plan, FIX_SCHEMA)
                assert plan["dry_run"] is True and all(e["result"] is None for e in plan["irqs"])
            else:
                assert "summary:" in out, out[-300:]
            print(f"PASS numastor {' '.join(args)}")
        except (AssertionError, json.JSONDecodeError, jsonschema.ValidationError) as e:
            print(f"FAIL numastor {' '.join(args)}: {type(e).__name__}: {str(e)[:1000]}")
            failures += 1
    if affinities() != before:
        print("FAIL fix --dry-run changed IRQ affinities")
        failures += 1
    if os.path.exists("/run/numastor/journal.json") != journal_before:
        print("FAIL fix --dry-run touched the journal")
        failures += 1
    print(f"live: {'failed' if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
