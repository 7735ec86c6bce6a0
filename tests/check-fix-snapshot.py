#!/usr/bin/env python3
"""Plans and reports from bundles (issue 32 item 3): `fix --dry-run --snapshot FILE` plans on the
machine a bundle captured, as `fix --dry-run --sysroot TREE` plans on the tree it came from, and
`check --snapshot` says first whose machine it was and when.

On each real-kernel capture (tests/fixtures/captures/*/snapshot.tar.gz: the bundle the VM bed's
guest wrote, and its tree extracted) and on a fixture machine given a hostname (the cloud machine
with a forced node: 136 moves):

- the bundle made with `numastor snapshot -R TREE -O FILE` says in its own metadata
  (.numastor/facts, read here with tarfile) the tree's hostname and a capture time of this run;
- `fix --dry-run --snapshot` of it, and of the capture's own bundle, prints the plan of
  `fix --dry-run -R TREE`: the JSON the same but for the root and the capture's fields (every
  move identical), the text the same but for its root; the JSON's captured_at and
  captured_host are what the bundle's facts say (null where they say nothing);
- `fix --snapshot` without --dry-run, and with --sysroot too, is refused (exit 3, a message naming
  --snapshot and --dry-run) and changes nothing: the bundle's bytes, the tree and TMPDIR stay as
  they were, nothing on stdout, no extraction directory left; even a test build that lets fix
  write into a --sysroot tree (NUMASTOR_TEST_SYSROOT_WRITES=1) refuses;
- `check --snapshot`'s first line names the host and the time the bundle's facts carry ("host
  unknown" for a bundle that does not say), and `check -R TREE` has no such line.

    check-fix-snapshot.py NUMASTOR
"""
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURES = os.path.join(HERE, "fixtures", "captures")
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
FIXTURE = "cloud-2n64c-8nvme-forced-node0"
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
NOW = "1767225600"

failures = 0


def fail(msg):
    global failures
    failures += 1
    print(f"FAIL {msg}")
    if os.environ.get("NUMASTOR_FAIL_FAST") == "1":  # tests/mutation/run.sh: the first one ends it
        sys.exit(1)


def run(numastor, *args, env=None):
    e = dict(os.environ, NO_COLOR="1", NUMASTOR_TEST_NOW=NOW)
    e.update(env or {})
    return subprocess.run([numastor, *args], capture_output=True, text=True, env=e, timeout=300)


def facts_of(bundle):
    """The bundle's own metadata, key -> value, read apart from numastor."""
    with tarfile.open(bundle) as t:
        text = t.extractfile(".numastor/facts").read().decode()
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def extract(bundle, tree):
    os.makedirs(tree)
    with tarfile.open(bundle) as t:
        if hasattr(tarfile, "data_filter"):
            t.extractall(tree, filter="tar")
        else:
            t.extractall(tree)


def fingerprint(path):
    """Every entry under path with its kind, mode and bytes (or link target): what a write would change."""
    out = {}
    for d, dirs, files in os.walk(path):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            if os.path.islink(p):
                v = "l:" + os.readlink(p)
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    v = "f:%o:" % st.st_mode + hashlib.sha256(f.read()).hexdigest()
            else:
                v = "d:%o" % st.st_mode
            out[os.path.relpath(p, path)] = v
    return out


def plan_json(doc):
    doc = dict(doc)
    for k in ("root", "captured_at", "captured_host"):
        doc.pop(k, None)
    return doc


def moves(doc):
    return [(e.get("irq"), e.get("action"), e.get("current"), e.get("target")) for e in doc["irqs"]]


def plan_text(out, root):
    """The text with its root named ROOT, compared without its whitespace: the plan wraps at 80
    columns, so a root of another length reflows the header (even inside the path, after a /)."""
    return "".join(out.split()).replace("".join(root.split()), "ROOT")


def one(numastor, tmp, name, tree, bundles):
    """tree: the machine; bundles: (label, file) of bundles of it."""
    direct = run(numastor, "fix", "--dry-run", "-R", tree, "--json")
    direct_text = run(numastor, "fix", "--dry-run", "-R", tree)
    if direct.returncode != 0 or direct_text.returncode != 0:
        return fail(f"{name}: fix --dry-run -R exited {direct.returncode}: {direct.stderr[:300]}")
    want = json.loads(direct.stdout)
    for label, bundle in bundles:
        facts = facts_of(bundle)
        p = run(numastor, "fix", "--dry-run", "--snapshot", bundle, "--json")
        if p.returncode != 0:
            fail(f"{name} {label}: fix --dry-run --snapshot exited {p.returncode}: {p.stderr[:300]}")
            continue
        got = json.loads(p.stdout)
        if moves(got) != moves(want):
            fail(f"{name} {label}: the bundle's moves differ from the tree's: {moves(got)[:3]} vs {moves(want)[:3]}")
        elif plan_json(got) != plan_json(want):
            diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
            fail(f"{name} {label}: the bundle's plan differs from the tree's at {diff}")
        elif got["root"] != "snapshot:" + bundle or not got["dry_run"]:
            fail(f"{name} {label}: root {got['root']}, dry_run {got['dry_run']}")
        elif (got.get("captured_at", "absent"), got.get("captured_host", "absent")) != (
                facts.get("captured_at"), facts.get("captured_host")):
            fail(f"{name} {label}: captured {got.get('captured_at')} {got.get('captured_host')}, the bundle "
                 f"says {facts.get('captured_at')} {facts.get('captured_host')}")
        else:
            print(f"PASS {name} {label}: fix --dry-run --snapshot = fix --dry-run -R ({len(got['irqs'])} rows, "
                  f"{got['summary']})")
        t = run(numastor, "fix", "--dry-run", "-s", bundle)
        if t.returncode != 0 or plan_text(t.stdout, "snapshot:" + bundle) != plan_text(direct_text.stdout,
                                                                                       os.path.realpath(tree)):
            fail(f"{name} {label}: the text plan differs from the tree's (exit {t.returncode})")
        refusals(numastor, tmp, f"{name} {label}", bundle, tree)
        first_lines(numastor, f"{name} {label}", bundle, facts)
    c = run(numastor, "check", "-R", tree)
    if c.stdout.startswith("captured"):
        fail(f"{name}: check -R of a tree says it was captured: {c.stdout.splitlines()[0]}")


def refusals(numastor, tmp, label, bundle, tree):
    before = (fingerprint(os.path.dirname(bundle)), fingerprint(tree), fingerprint(os.environ["TMPDIR"]))
    cases = [("without --dry-run", ["fix", "--snapshot", bundle], None),
             ("without --dry-run, --json", ["fix", "-s", bundle, "--json"], None),
             ("without --dry-run, sysroot writes allowed", ["fix", "--snapshot", bundle],
              {"NUMASTOR_TEST_SYSROOT_WRITES": "1"}),
             ("with --sysroot", ["fix", "--dry-run", "--snapshot", bundle, "-R", tree], None)]
    for what, args, env in cases:
        p = run(numastor, *args, env=env)
        json_err = "--json" in args
        msg = json.loads(p.stdout)["error"]["message"] if json_err and p.stdout.strip() else p.stderr
        if p.returncode != 3:
            fail(f"{label}: fix --snapshot {what}: exit {p.returncode}, expected 3; {p.stdout[:200]}")
        elif "--snapshot" not in msg or ("--dry-run" not in msg and "--sysroot" not in msg):
            fail(f"{label}: fix --snapshot {what}: unclear message {msg!r}")
        elif not json_err and p.stdout:
            fail(f"{label}: fix --snapshot {what}: printed {p.stdout[:200]!r}")
    after = (fingerprint(os.path.dirname(bundle)), fingerprint(tree), fingerprint(os.environ["TMPDIR"]))
    if after != before:
        changed = [k for i in range(3) for k in set(before[i]) ^ set(after[i]) | {
            k for k in before[i] if k in after[i] and before[i][k] != after[i][k]}]
        fail(f"{label}: a refused fix --snapshot changed {sorted(changed)[:5]}")
    else:
        print(f"PASS {label}: fix --snapshot refused without --dry-run and with --sysroot, nothing changed")


def first_lines(numastor, label, bundle, facts):
    p = run(numastor, "check", "--snapshot", bundle)
    lines = p.stdout.splitlines()
    head = " ".join(lines[:2])
    host = facts.get("captured_host")
    when = facts.get("captured_at")
    if p.returncode not in (0, 1, 2) or not lines:
        return fail(f"{label}: check --snapshot exited {p.returncode}: {p.stderr[:200]}")
    if not lines[0].startswith("captured ") or not when or when not in lines[0]:
        return fail(f"{label}: the first line does not say the capture time {when}: {lines[0]!r}")
    if ("host " + host if host else "host unknown") not in head:
        return fail(f"{label}: the first lines do not name the host {host}: {head!r}")
    if not lines[1 if lines[1].startswith("summary") else 2].startswith("summary:"):
        return fail(f"{label}: the verdict does not follow the capture line: {lines[:3]}")
    print(f"PASS {label}: check --snapshot begins {lines[0]!r}")


def fresh_bundle(numastor, tmp, name, tree, hostname):
    """snapshot -R TREE -O FILE; its facts must say this run's time and the tree's hostname."""
    bundle = os.path.join(tmp, "bundles", name + ".tar.gz")
    os.makedirs(os.path.dirname(bundle), exist_ok=True)
    start = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    p = run(numastor, "snapshot", "-R", tree, "-O", bundle)
    end = datetime.datetime.now(datetime.timezone.utc)
    if p.returncode != 0:
        fail(f"{name}: snapshot -R exited {p.returncode}: {p.stderr[:300]}")
        return None
    facts = facts_of(bundle)
    try:
        at = datetime.datetime.strptime(facts.get("captured_at", ""), "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc)
    except ValueError:
        at = None
    if at is None or not start <= at <= end:
        fail(f"{name}: the new bundle says captured_at {facts.get('captured_at')}, not this run ({start})")
    if facts.get("captured_host") != hostname:
        fail(f"{name}: the new bundle says captured_host {facts.get('captured_host')}, the tree's is {hostname}")
    return bundle


def main():
    numastor = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="numastor-fix-snapshot.", dir=SCRATCH) as tmp:
        os.environ["TMPDIR"] = os.path.join(tmp, "tmpdir")
        os.makedirs(os.environ["TMPDIR"])
        caps = sorted(n for n in os.listdir(CAPTURES) if os.path.exists(os.path.join(CAPTURES, n, "snapshot.tar.gz")))
        if len(caps) < 4:
            fail(f"expected the 4 kernel lines' captures, found {caps}")
        for name in caps:
            orig = os.path.join(tmp, "orig", name + ".tar.gz")  # a copy: its directory is fingerprinted
            os.makedirs(os.path.dirname(orig), exist_ok=True)
            shutil.copyfile(os.path.join(CAPTURES, name, "snapshot.tar.gz"), orig)
            tree = os.path.join(tmp, "trees", name)
            extract(orig, tree)
            with open(os.path.join(tree, "proc/sys/kernel/hostname")) as f:
                hostname = f.read().strip()
            fresh = fresh_bundle(numastor, tmp, name, tree, hostname)
            one(numastor, tmp, name, tree, [("capture", orig)] + ([("snapshot -R", fresh)] if fresh else []))
        fx = os.path.join(tmp, "fx")
        subprocess.run([sys.executable, GEN, fx, FIXTURE], check=True, stdout=subprocess.DEVNULL)
        tree = os.path.join(fx, FIXTURE)
        os.makedirs(os.path.join(tree, "proc/sys/kernel"), exist_ok=True)
        with open(os.path.join(tree, "proc/sys/kernel/hostname"), "w") as f:
            f.write("db-17.example\n")
        fresh = fresh_bundle(numastor, tmp, FIXTURE, tree, "db-17.example")
        if fresh:
            one(numastor, tmp, FIXTURE, tree, [("snapshot -R", fresh)])
        left = [n for n in os.listdir(os.environ["TMPDIR"]) if n.startswith("numastor-snapshot.")]
        if left:
            fail(f"extraction directories left behind: {left}")
    print(f"fix-snapshot: {'failed' if failures else 'all passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
