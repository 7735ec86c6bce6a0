#!/usr/bin/env python3
"""Interrupt counts on the right basis (lib/read/rates.h), on a captured tree.

check --interval: the second sample is read from another tree (NUMASTOR_TEST_SECOND_SAMPLE_ROOT,
test builds only) in which known counts were added to known CPUs, so the rates are known:
rates_by_node folds them onto the right nodes, interval_seconds is the time really waited, and
irq-fires-remote judges the rates (local rates clear it although since boot the vector fired
remote; remote rates raise it). Without --interval, an IRQ numastor fix placed is judged on its
counts since placement (the journal's per_cpu_count at placement), unless a counter went
backwards (another boot): then since boot, with a note. Every document validates against the
schema."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# tmpfs where there is one: a fixture tree is thousands of small files, which cost 20 times
# as much on a loaded disk
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None

import jsonschema
import schemas

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor.schema.json")))
FIXTURE = "hba-megaraid-node1-irq-cpu0"  # sda on node 1, its one vector (irq 96) fired on CPU 0
IRQ = 96
INTERVAL = 0.3
fails = 0


def check(numastor, root, *args, env=None):
    e = dict(os.environ, NO_COLOR="1", **(env or {}))
    p = subprocess.run([numastor, "check", "--sysroot", root, "--json", *args], capture_output=True, text=True,
                       env=e)
    assert p.returncode in (0, 1, 2), f"check exited {p.returncode}: {p.stderr[:300]}"
    doc = json.loads(p.stdout)
    schemas.validate(doc, SCHEMA)
    return doc


def irq_of(doc, n):
    for d in doc["devices"]:
        for p in d["paths"]:
            for i in (p.get("pci") or {}).get("irqs") or []:
                if i["irq"] == n:
                    return i
    raise AssertionError(f"irq {n} not reported")


def fires_remote(doc, dev="sda"):
    return [f for f in doc["findings"] if f["id"] == "irq-fires-remote" and f["device"] == dev]


def counts_file(root, n):
    return os.path.join(root, "sys/kernel/irq", str(n), "per_cpu_count")


def bump(root, n, deltas):
    """Add deltas {cpu: count} to IRQ n's per_cpu_count in the tree."""
    path = counts_file(root, n)
    v = [int(x) for x in open(path).read().strip().split(",")]
    for cpu, d in deltas.items():
        v[cpu] += d
    with open(path, "w") as f:
        f.write(",".join(str(x) for x in v) + "\n")


def test(name):
    def wrap(fn):
        global fails
        try:
            fn()
            print(f"ok: {name}")
        except (AssertionError, json.JSONDecodeError, jsonschema.ValidationError, KeyError) as e:
            print(f"FAIL: {name}: {e}")
            fails += 1
        return fn
    return wrap


def main():
    numastor = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="numastor-rates.", dir=SCRATCH)
    try:
        subprocess.run([sys.executable, os.path.join(HERE, "fixtures", "gen-fixtures.py"), tmp, FIXTURE],
                       check=True, capture_output=True)
        base = os.path.join(tmp, FIXTURE)

        def second(deltas):
            s = os.path.join(tmp, "second")
            shutil.rmtree(s, ignore_errors=True)
            shutil.copytree(base, s, symlinks=True)
            if deltas:
                bump(s, IRQ, deltas)
            return {"NUMASTOR_TEST_SECOND_SAMPLE_ROOT": s}

        @test("since boot without --interval: the vector fired on node 0, sda is on node 1")
        def _():
            doc = check(numastor, base)
            assert doc["interval_seconds"] is None
            i = irq_of(doc, IRQ)
            assert i["count_basis"] == "since-boot", i["count_basis"]
            assert i["rates_by_node"] is None and i["counts_since_fix_by_node"] is None
            f = fires_remote(doc)
            assert f and f[0]["evidence"]["irqs"][0]["count_basis"] == "since-boot", f

        # node 0 is CPUs 0-15, node 1 CPUs 16-31: the edges of both nodes get counts
        local = {0: 3, 15: 7, 16: 1000, 31: 2000}

        @test("--interval: rates folded onto nodes, over the time waited; local rates clear irq-fires-remote")
        def _():
            doc = check(numastor, base, "--interval", str(INTERVAL), env=second(local))
            iv = doc["interval_seconds"]
            assert INTERVAL <= iv < INTERVAL + 5, f"interval_seconds {iv} for --interval {INTERVAL}"
            i = irq_of(doc, IRQ)
            assert i["count_basis"] == "interval", i["count_basis"]
            got = {r["node"]: r["count"] for r in i["rates_by_node"]}
            assert got == {0: 10, 1: 3000}, got
            for r in i["rates_by_node"]:
                assert abs(r["rate"] - r["count"] / iv) <= 0.0006, (r, iv)
            # since boot is still reported as it is
            assert {c["node"]: c["count"] for c in i["counts_by_node"]} == {0: 18233602, 1: 0}
            assert not fires_remote(doc), fires_remote(doc)

        @test("--interval: remote rates raise irq-fires-remote, judged on the interval")
        def _():
            doc = check(numastor, base, "--interval", str(INTERVAL), env=second({2: 500, 20: 100}))
            f = fires_remote(doc)
            assert f, "no irq-fires-remote"
            e = f[0]["evidence"]["irqs"][0]
            assert e["count_basis"] == "interval" and e["counts_by_node"] == [{"node": 0, "count": 500}, {"node": 1, "count": 100}], e

        @test("--interval: nothing fired in the interval, nothing to judge")
        def _():
            doc = check(numastor, base, "--interval", str(INTERVAL), env=second(None))
            i = irq_of(doc, IRQ)
            assert [r["count"] for r in i["rates_by_node"]] == [0, 0], i["rates_by_node"]
            assert not fires_remote(doc)

        # since fix: fix places irq 96 on node 1 (the test-only writes go into the tree)
        fixed = os.path.join(tmp, "fixed")
        shutil.copytree(base, fixed, symlinks=True)
        p = subprocess.run([numastor, "fix", "--sysroot", fixed, "--json"], capture_output=True, text=True,
                           env=dict(os.environ, NUMASTOR_TEST_SYSROOT_WRITES="1"))
        journal_path = os.path.join(fixed, "run/numastor/journal.json")

        @test("fix journals each placed IRQ's per_cpu_count at placement")
        def _():
            assert p.returncode == 0, f"fix exited {p.returncode}: {p.stderr[:300]}"
            j = json.load(open(journal_path))
            e = [x for x in j["irqs"] if x["irq"] == IRQ]
            # the journal's form (issue 28): runs of one value as value*times, each run of 3 or more
            assert e, j["irqs"]
            expanded = [v for tok in e[0]["counts"].split(",")
                        for v in [tok.split("*")[0]] * (int(tok.split("*")[1]) if "*" in tok else 1)]
            assert expanded == open(counts_file(base, IRQ)).read().strip().split(","), e
            assert "0*30" in e[0]["counts"], e  # 30 idle CPUs in one run, not 30 zeros

        @test("since fix: a placed IRQ is judged on the interrupts since placement")
        def _():
            bump(fixed, IRQ, {17: 400, 1: 4})
            doc = check(numastor, fixed)
            i = irq_of(doc, IRQ)
            assert i["placed_by_numastor"] and i["count_basis"] == "since-fix", i
            assert {c["node"]: c["count"] for c in i["counts_since_fix_by_node"]} == {0: 4, 1: 400}, i
            assert {c["node"]: c["count"] for c in i["counts_by_node"]} == {0: 18233606, 1: 400}, i
            assert not fires_remote(doc), fires_remote(doc)
            text = subprocess.run([numastor, "check", "--sysroot", fixed, "--verbose"], capture_output=True,
                                  text=True, env=dict(os.environ, NO_COLOR="1")).stdout
            # the queue table's FIRES cell, wrapped or not
            assert "4/400 (placed by numastor fix; counted since)" in re.sub(r"\s+", " ", text), text

        @test("since fix: a counter lower than at placement (another boot) falls back to since boot")
        def _():
            bump(fixed, IRQ, {1: -400})
            doc = check(numastor, fixed)
            i = irq_of(doc, IRQ)
            assert i["count_basis"] == "since-boot" and i["counts_since_fix_by_node"] is None, i
            assert any("lower on some CPU" in n["message"] for n in doc["notes"]), doc["notes"]
            assert fires_remote(doc)
            bump(fixed, IRQ, {1: 400})

        @test("since fix: a journal without counts (an older numastor) means since boot")
        def _():
            j = json.load(open(journal_path))
            for x in j["irqs"]:
                x.pop("counts", None)
            json.dump(j, open(journal_path, "w"))
            doc = check(numastor, fixed)
            i = irq_of(doc, IRQ)
            assert i["placed_by_numastor"] and i["count_basis"] == "since-boot", i
            assert any("no counts at placement" in n["message"] for n in doc["notes"]), doc["notes"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if fails:
        print(f"rates: {fails} failed")
        return 1
    print("rates: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
