#!/usr/bin/env python3
"""check and fix agree (issue 30, "one decision, two views"): every fixture machine
(tests/fixtures/gen-fixtures.py --list) and every real-kernel capture (tests/fixtures/captures/)
is run through `numastor check --json` and `numastor fix --dry-run --json` on the same tree, and:

- each vector check says fix moves (an IRQ's fix.action "move") is a plan row that moves it or
  finds it in place (move, unchanged), under the same rule;
- each vector check says fix leaves alone is a skipped row with the same rule and the same
  reason word for word, or, for the rule not-planned, no row at all, and then no device it
  serves has a finding fix answers;
- every plan row is a vector of check's report (nothing planned that check does not show);
- no skipped row names a target: null in the JSON, no "->" in the text plan; and no row moves a
  vector onto no CPU;
- a finding about vectors (its evidence lists them) offers `numastor fix` exactly when the plan
  moves (or finds in place) every one of them; otherwise its remedy names each one the plan
  skips with the plan's reason, and says that fix leaves them;
- where fix refuses (an excluded-CPU input that does not parse: exit 3), check says it moves
  nothing.

Besides the fixtures as generated, one variant (VARIANTS): the cloud fixture with irqbalance
banning every CPU of node 0, where the queue vectors of node 0's CPUs have no allowed CPU and
the node-less disks' unpaired vectors must all go to node 1 (the round robin goes over the nodes
with an allowed CPU, so check can tell each one's decision without the plan's order).

    check-agreement.py NUMASTOR [NAME...]

NUMASTOR_FAIL_FAST=1 stops at the first machine that fails.
"""
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
CAPTURES = os.path.join(HERE, "fixtures", "captures")
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
FAIL_FAST = os.environ.get("NUMASTOR_FAIL_FAST") == "1"
# the findings whose remedy may be `numastor fix`: they list the vectors they are about
VECTOR_FINDINGS = {"irq-confined", "irq-fires-remote", "vector-serves-all-nodes", "isolated-movable-irq"}


def run(numastor, root, cmd, *args):
    env = dict(os.environ, NO_COLOR="1", NUMASTOR_TEST_NOW="1767225600")
    return subprocess.run([numastor, cmd, "--sysroot", root, *args], capture_output=True, text=True, env=env)


def banned_node0(plan):
    """The cloud fixture with node 0's CPUs (0-31) banned: each disk's unpaired (admin) vector
    goes to node 1, each queue of node 0's CPUs is skipped for want of an allowed CPU, each
    queue of node 1's is placed on its own CPUs (written from the fixture's description)."""
    bad = []
    for e in plan["irqs"]:
        q = e["hw_queue"]
        if q is None:
            want = ("move", "32-63", "movable")
        elif q < 8:
            want = ("skip", None, "no-allowed-cpu")
        else:
            want = ("move", f"{4 * q}-{4 * q + 3}", "movable")
        if (e["action"], e["target"], e["rule"]) != want:
            bad.append(f"irq {e['irq']} ({e['device']} queue {q}): {e['action']} {e['target']} ({e['rule']}), "
                       f"expected {want}")
    return bad


# name: (fixture, {path in the tree: text appended}, the plan's facts)
VARIANTS = {
    "cloud-banned-node0": ("cloud-2n64c-8nvme-forced-node0",
                           {"etc/default/irqbalance": "IRQBALANCE_BANNED_CPULIST=0-31\n"}, banned_node0),
}


def check_irqs(doc):
    """(device, irq object) for every vector check's report shows."""
    for d in doc["devices"]:
        for p in d.get("paths") or []:
            for i in (p.get("pci") or {}).get("irqs") or []:
                yield d["name"], i


def evidence_irqs(f):
    ev = f.get("evidence") or {}
    nums = [e if isinstance(e, int) else e["irq"] for e in ev.get("irqs", [])]
    if isinstance(ev.get("irq"), int):
        nums.append(ev["irq"])
    return nums


def agree(numastor, name, root):
    """The problems found on one machine (empty: check and fix agree); the counts checked."""
    bad = []
    c = run(numastor, root, "check", "--json")
    try:
        doc = json.loads(c.stdout)
    except ValueError:
        return [f"check --json printed no JSON (exit {c.returncode}): {c.stderr[:300]}"], {}
    p = run(numastor, root, "fix", "--dry-run", "--json")
    irqs = list(check_irqs(doc))
    stats = {"vectors": len(irqs), "move": 0, "leave": 0, "rows": 0, "remedies": 0}
    for dev, i in irqs:
        stats[i["fix"]["action"]] += 1

    if p.returncode == 3:
        # refused: an exclusion input does not parse (fix names it); check moves nothing there
        err = json.loads(p.stdout)["error"]["message"]
        if "does not parse" not in err and "cannot be read" not in err:
            bad.append(f"fix refused for another reason: {err[:300]}")
        for dev, i in irqs:
            if i["fix"]["action"] == "move":
                bad.append(f"{dev} irq {i['irq']}: check says fix moves it, but fix refuses the machine: {err[:120]}")
        for f in doc["findings"]:
            if f["remedy"]["action"] == "numastor fix":
                bad.append(f"{f['id']} {f['device']}: remedy `numastor fix`, but fix refuses the machine")
        return bad, stats
    try:
        plan = json.loads(p.stdout)
    except ValueError:
        return [f"fix --dry-run --json printed no JSON (exit {p.returncode}): {p.stderr[:300]}"], stats
    if p.returncode != 0:
        bad.append(f"fix --dry-run exited {p.returncode}")
    rows = {e["irq"]: e for e in plan["irqs"]}
    stats["rows"] = len(rows)
    shown = {i["irq"] for _, i in irqs}
    answered = {f["device"] for f in doc["findings"]
                if f["device"] and f["id"] in ("node-forced", "irq-confined", "irq-fires-remote",
                                               "vector-serves-all-nodes", "irqbalance-confines",
                                               "isolated-movable-irq")}

    if name in VARIANTS:
        bad += VARIANTS[name][2](plan)

    # each vector check shows, against the plan's row for it
    for dev, i in irqs:
        fx, row, subject = i["fix"], rows.get(i["irq"]), f"{dev} irq {i['irq']}"
        if fx["action"] == "move":
            if row is None or row["action"] not in ("move", "unchanged"):
                bad.append(f"{subject}: check says fix moves it ({fx['rule']}), the plan "
                           + ("has no row for it" if row is None else f"says {row['action']}: {row['reason']}"))
            elif row["rule"] != fx["rule"]:
                bad.append(f"{subject}: moved under rule {row['rule']} in the plan, {fx['rule']} in check")
        elif fx["rule"] == "not-planned":
            if row is not None:
                bad.append(f"{subject}: check says fix does not touch it, the plan has a {row['action']} row "
                           f"({row['device']}: {row['reason'][:120]})")
            if dev in answered:
                bad.append(f"{subject}: check says no device it serves has a finding fix answers, but {dev} has")
        else:
            if row is None or row["action"] != "skip":
                bad.append(f"{subject}: check says fix leaves it ({fx['reason']}), the plan "
                           + ("has no row for it" if row is None else f"says {row['action']}"))
            else:
                if row["reason"] != fx["reason"]:
                    bad.append(f"{subject}: skipped for {row['reason']!r}, check says {fx['reason']!r}")
                if row["rule"] != fx["rule"]:
                    bad.append(f"{subject}: skipped under rule {row['rule']}, check says {fx['rule']}")

    # every row is a vector check shows; a skip names no target
    for n, row in rows.items():
        if n not in shown:
            bad.append(f"irq {n} ({row['device']}): planned ({row['action']}) but in no device of check's report")
        if row["action"] == "skip" and row["target"] is not None:
            bad.append(f"irq {n}: skipped, yet its row names target {row['target']!r}")
        if row["action"] != "skip" and not row["target"]:
            bad.append(f"irq {n}: {row['action']} onto no CPU (target {row['target']!r})")
    t = run(numastor, root, "fix", "--dry-run")
    for line in t.stdout.splitlines():
        if re.match(r"^  irq \d+ .*  skip$", line) and "->" in line:
            bad.append(f"a skipped row of the text plan names a target: {line.strip()}")

    # remedies about vectors: `numastor fix` exactly for those the plan moves, else the plan's words
    for f in doc["findings"]:
        nums = evidence_irqs(f)
        if f["id"] not in VECTOR_FINDINGS or not nums:
            continue
        stats["remedies"] += 1
        subject = f"{f['id']} {f['device']}"
        skipped = [rows[n] for n in nums if n in rows and rows[n]["action"] == "skip"]
        unplanned = [n for n in nums if n not in rows]
        if unplanned:
            bad.append(f"{subject}: about irqs {unplanned}, which the plan does not have")
        text = f["remedy"]["text"] or ""
        if f["remedy"]["action"] == "numastor fix":
            if skipped:
                bad.append(f"{subject}: remedy `numastor fix`, but the plan skips irqs "
                           f"{[r['irq'] for r in skipped]} ({skipped[0]['reason'][:120]})")
        elif not skipped and not unplanned:
            bad.append(f"{subject}: the plan moves every vector it is about, but the remedy is not `numastor fix`: "
                       f"{text[:160]}")
        else:
            if skipped and "`numastor fix` leaves " not in text:
                bad.append(f"{subject}: the plan skips some of its vectors, but the remedy does not say fix leaves "
                           f"them: {text[:160]}")
            for r in skipped:
                if r["reason"] not in text:
                    bad.append(f"{subject}: irq {r['irq']} is skipped for {r['reason']!r}, which its remedy does "
                               f"not say: {text[:200]}")
    return bad, stats


def machines(names):
    """(name, root) of each machine, in a scratch directory that lives while they are used."""
    fixtures = [n for n in subprocess.run([sys.executable, GEN, "--list"], capture_output=True, text=True,
                                          check=True).stdout.split()]
    captures = sorted(n for n in os.listdir(CAPTURES)
                      if os.path.isfile(os.path.join(CAPTURES, n, "snapshot.tar.gz"))) if os.path.isdir(CAPTURES) else []
    variants = sorted(VARIANTS)
    if names:
        fixtures = [n for n in fixtures if n in names]
        captures = [n for n in captures if "capture-" + n in names or n in names]
        variants = [n for n in variants if n in names]
    if not names and (not fixtures or not captures):
        raise SystemExit(f"FAIL no machines: {len(fixtures)} fixtures, {len(captures)} captures")
    with tempfile.TemporaryDirectory(prefix="numastor-agree.", dir=SCRATCH) as tmp:
        for n in fixtures:
            subprocess.run([sys.executable, GEN, tmp, n], check=True, stdout=subprocess.DEVNULL)
            yield n, os.path.join(tmp, n)
            subprocess.run(["rm", "-rf", os.path.join(tmp, n)], check=True)
        for n in variants:
            base, files, _ = VARIANTS[n]
            subprocess.run([sys.executable, GEN, tmp, base], check=True, stdout=subprocess.DEVNULL)
            for rel, text in files.items():
                with open(os.path.join(tmp, base, rel), "a", encoding="utf-8") as f:
                    f.write(text)
            yield n, os.path.join(tmp, base)
            subprocess.run(["rm", "-rf", os.path.join(tmp, base)], check=True)
        for n in captures:
            tree = os.path.join(tmp, "capture-" + n)
            with tarfile.open(os.path.join(CAPTURES, n, "snapshot.tar.gz")) as t:
                # the bundle is the tree's own fixture; Debian 12's python3 (3.11.2) has no filters
                if hasattr(tarfile, "data_filter"):
                    t.extractall(tree, filter="data")
                else:
                    t.extractall(tree)
            yield "capture-" + n, tree
            subprocess.run(["rm", "-rf", tree], check=True)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-3].strip(), file=sys.stderr)
        return 2
    numastor = os.path.abspath(argv[1])
    passed = failed = 0
    total = {"vectors": 0, "move": 0, "leave": 0, "rows": 0, "remedies": 0}
    for name, root in machines(set(argv[2:])):
        bad, stats = agree(numastor, name, root)
        for k, v in stats.items():
            total[k] += v
        if bad:
            failed += 1
            print(f"FAIL {name}")
            for b in bad[:20]:
                print("    " + b)
            if len(bad) > 20:
                print(f"    ... and {len(bad) - 20} more")
            if FAIL_FAST:
                print("agreement: stopped at the first failure (NUMASTOR_FAIL_FAST=1)")
                return 1
        else:
            passed += 1
            print(f"PASS {name}: {stats.get('vectors', 0)} vectors ({stats.get('move', 0)} move, "
                  f"{stats.get('leave', 0)} leave), {stats.get('rows', 0)} plan rows, "
                  f"{stats.get('remedies', 0)} remedies about vectors")
    print(f"agreement: {passed} machines agree, {failed} do not; {total['vectors']} vectors "
          f"({total['move']} move, {total['leave']} leave), {total['rows']} plan rows, "
          f"{total['remedies']} remedies")
    # the test must have something to hold: machines whose plan both moves and skips
    if not argv[2:] and (total["move"] == 0 or total["leave"] == 0 or total["remedies"] == 0):
        print("FAIL the machines gave no move, no leave or no remedy about vectors to compare")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
