#!/usr/bin/env python3
"""fix and fix --revert on the fleet's largest machines (issue 28, part 1): the generator's
8-node, 448-CPU, 64-NVMe tree and its 1,024-CPU, 16-NVMe one, every vector made movable
(smp_affinity 0644, every CPU allowed) and every per_cpu_count non-zero on every CPU (a
machine up for months, irqbalance having moved its vectors around). fix moves every vector and
journals it; the journal is bigger than the reader's ordinary limit (1 MiB, NS_READ_MAX), and
`check` and `fix --revert` read it whole: every vector back to what it was, the journal gone.
Past the journal's own limit (NUMASTOR_TEST_JOURNAL_MAX lowers it), the counts at placement
are left out (check then counts since boot, and says so) and, past it without them, fix refuses
before its first write.

    check-bigjournal.py NUMASTOR [TREE...]     (default: both trees)
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TREES = {"large-8n448c-64nvme": (448, 64 * 65), "large-8n1024c-16nvme": (1024, 16 * 65)}
JOURNAL = os.path.join("run", "numastor", "journal.json")
fails = 0


def fail(msg):
    global fails
    fails += 1
    print("FAIL " + msg)
    if os.environ.get("NUMASTOR_FAIL_FAST") == "1":
        sys.exit(1)


def ok(msg):
    print("ok   " + msg)


def affinities(root):
    d = os.path.join(root, "proc", "irq")
    return {n: open(os.path.join(d, n, "smp_affinity_list")).read().strip() for n in os.listdir(d)
            if os.path.exists(os.path.join(d, n, "smp_affinity_list"))}


def make_movable(root, ncpus):
    """Every vector user-settable, allowed on every CPU, fired on every CPU."""
    rng = random.Random(28)
    words = (ncpus + 31) // 32
    mask = ",".join(["ffffffff"] * words) + "\n"
    d = os.path.join(root, "proc", "irq")
    for n in os.listdir(d):
        p = os.path.join(d, n)
        if not os.path.exists(os.path.join(p, "smp_affinity_list")):
            continue
        for f, v in (("smp_affinity_list", "0-%d\n" % (ncpus - 1)), ("smp_affinity", mask)):
            os.chmod(os.path.join(p, f), 0o644)
            with open(os.path.join(p, f), "w") as fh:
                fh.write(v)
        c = os.path.join(root, "sys", "kernel", "irq", n, "per_cpu_count")
        os.chmod(c, 0o644)
        with open(c, "w") as fh:
            fh.write(",".join(str(rng.randint(1, 4000000)) for _ in range(ncpus)) + "\n")


def run(numastor, args, env):
    return subprocess.run([numastor, *args], capture_output=True, text=True, env=env)


def case_whole(numastor, name, tree, ncpus, nvec, env):
    before = affinities(tree)
    p = run(numastor, ["fix", "--sysroot", tree, "--json"], env)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return fail(f"{name}: fix printed no JSON (exit {p.returncode}): {p.stderr[:300]}")
    moved = doc["summary"]["move"]
    if moved != nvec or p.returncode not in (0, 1):
        return fail(f"{name}: fix planned {moved} moves of {nvec} (exit {p.returncode}): {p.stderr[:300]}")
    jpath = os.path.join(tree, JOURNAL)
    size = os.path.getsize(jpath) if os.path.exists(jpath) else 0
    if size <= 1024 * 1024:
        return fail(f"{name}: the journal is {size} bytes: not beyond the reader's 1 MiB, the case tests nothing")
    j = json.load(open(jpath))
    if len(j["irqs"]) != nvec or not all("counts" in e for e in j["irqs"]):
        return fail(f"{name}: the journal holds {len(j['irqs'])} entries of {nvec}, or some without counts")
    changed = sum(1 for n, v in affinities(tree).items() if v != before[n])
    if changed != nvec:
        return fail(f"{name}: fix changed {changed} smp_affinity_list files of {nvec}")
    ok(f"{name}: fix moved {nvec} vectors, a {size / 1e6:.1f} MB journal")
    # check reads the journal whole: every vector placed by numastor, no note against the journal
    c = run(numastor, ["check", "--sysroot", tree, "--json"], env)
    try:
        d = json.loads(c.stdout)
        placed = len({i["irq"] for dev in d["devices"] for path in dev["paths"] if path.get("pci")
                      for i in path["pci"]["irqs"] if i.get("placed_by_numastor")})
        notes = [n for n in d.get("notes", []) if "journal" in json.dumps(n)]
    except (ValueError, KeyError) as x:
        return fail(f"{name}: check --json after fix: {type(x).__name__} {x} (exit {c.returncode}) {c.stderr[:300]}")
    if placed != nvec or notes:
        return fail(f"{name}: check sees {placed} vectors placed by numastor of {nvec}; notes {notes[:2]}")
    ok(f"{name}: check reads the journal: {placed} vectors placed by numastor")
    r = run(numastor, ["fix", "--sysroot", tree, "--revert"], env)
    after = affinities(tree)
    wrong = [n for n in before if after[n] != before[n]]
    if r.returncode != 0 or wrong or os.path.exists(jpath) or f"{nvec} restored" not in r.stdout:
        return fail(f"{name}: revert exit {r.returncode}, {len(wrong)} vectors not restored, journal "
                    f"{'kept' if os.path.exists(jpath) else 'gone'}: {(r.stderr or r.stdout[-300:]).strip()[:300]}")
    ok(f"{name}: fix --revert restored all {nvec} vectors and removed the journal")


def case_limits(numastor, name, tree, nvec, env):
    """The journal's own limit, lowered: counts left out; then the plan refused."""
    scratch = tree + ".limits"
    shutil.copytree(tree, scratch, symlinks=True)
    before = affinities(scratch)
    # a limit the journal with counts exceeds and the one without does not
    p = run(numastor, ["fix", "--sysroot", scratch], dict(env, NUMASTOR_TEST_JOURNAL_MAX=str(1024 * 1024)))
    jpath = os.path.join(scratch, JOURNAL)
    j = json.load(open(jpath)) if os.path.exists(jpath) else {"irqs": []}
    size = os.path.getsize(jpath) if os.path.exists(jpath) else 0
    if p.returncode not in (0, 1) or len(j["irqs"]) != nvec or any("counts" in e for e in j["irqs"]) \
            or size > 1024 * 1024:
        fail(f"{name}: over the journal's limit with counts: exit {p.returncode}, {len(j['irqs'])} entries, "
             f"{size} bytes, counts {'left out' if not any('counts' in e for e in j['irqs']) else 'kept'}: "
             f"{p.stderr[:300]}")
    else:
        ok(f"{name}: over the limit with its counts, the journal leaves them out ({size} bytes)")
    c = run(numastor, ["check", "--sysroot", scratch, "--json"], env)
    if "no counts at placement" not in c.stdout:
        fail(f"{name}: check does not say the journal has no counts at placement")
    else:
        ok(f"{name}: check says it counts since boot")
    r = run(numastor, ["fix", "--sysroot", scratch, "--revert"], env)
    if r.returncode != 0 or affinities(scratch) != before:
        fail(f"{name}: revert of the journal without counts: exit {r.returncode}: {r.stderr[:300]}")
    # a limit no journal of this plan fits: refused before the first write
    p = run(numastor, ["fix", "--sysroot", scratch], dict(env, NUMASTOR_TEST_JOURNAL_MAX="4096"))
    if p.returncode != 3 or "would exceed" not in p.stderr or os.path.exists(jpath) or affinities(scratch) != before:
        fail(f"{name}: a journal past the limit: exit {p.returncode}, journal "
             f"{'written' if os.path.exists(jpath) else 'absent'}, {p.stderr.strip()[:300]}")
    else:
        ok(f"{name}: a plan whose journal would not fit is refused, nothing written")
    shutil.rmtree(scratch)


def main():
    numastor = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or list(TREES)
    if b"NUMASTOR_TEST_SYSROOT_WRITES" not in open(numastor, "rb").read():
        print(f"FAIL: {numastor} was built without the test-only switches (-Dtest_hooks=true): nothing was tested")
        return 1
    env = dict(os.environ, NUMASTOR_TEST_SYSROOT_WRITES="1", NO_COLOR="1")
    scratch = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="numastor-bigjournal.", dir=scratch) as tmp:
        for name in names:
            ncpus, nvec = TREES[name]
            subprocess.run([sys.executable, os.path.join(HERE, "fixtures", "gen-fixtures.py"), tmp, name],
                           check=True, stdout=subprocess.DEVNULL)
            tree = os.path.join(tmp, name)
            make_movable(tree, ncpus)
            if name == "large-8n1024c-16nvme":
                case_limits(numastor, name, tree, nvec, env)
            case_whole(numastor, name, tree, ncpus, nvec, env)
            shutil.rmtree(tree)
    print(f"big journals: {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
