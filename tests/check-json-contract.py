#!/usr/bin/env python3
"""The JSON contract (issue 12): under --json every command prints exactly one JSON document on
stdout, errors included, and each validates against its schema in schema/:

- check --json (and -f json) on every fixture machine: numastor.schema.json; check --list --json
  (numastor-list.schema.json once --list has a document of its own);
- fix --json / --dry-run --json on every fixture, fix --json writing into a fixture copy, fix
  --revert --json with no journal and with one, fix --modules --dry-run --json:
  numastor-fix.schema.json;
- every error of every command under --json (bad option, bad --format, missing sysroot, no such
  device, fix's refusals, snapshot and irqbalance-policy, which have no --json of their own):
  numastor-error.schema.json, with the exit status equal to error.exit_code and the message on
  stderr as well.

Asserted on their own, not only by the schemas: every document carries the envelope (host with
hostname, boot_id and machine_id read through the root; generated_at in RFC 3339 UTC, fixed by
NUMASTOR_TEST_NOW in a test build, else the time of the run), and every per-node count anywhere in
any document (counts_by_node, counts_since_fix_by_node, rates_by_node) has one shape: an array
of {"node", "count"} objects.

    check-json-contract.py NUMASTOR [CASE...]

CASE narrows the run (a mutant's kill command names the cases that kill it; no CASE runs them
all): `fixtures` (check and fix --dry-run on every fixture), a fixture's name (that part on that
fixture only), `check` (check's forms and errors), `host` (the envelope's host, a bundle and its
replays), `fix` (fix's results, revert and journal errors), `modules` (fix --modules's plans and
manifests), `errors` (fix's usage errors, the commands without a --json).
"""
import datetime
import hmac
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema
import schemas

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "fixtures", "gen-fixtures.py")
SCHEMAS = {k: json.load(open(os.path.join(HERE, "..", "schema", f))) for k, f in (
    ("check", "numastor.schema.json"), ("fix", "numastor-fix.schema.json"), ("error", "numastor-error.schema.json"))}
# check --list --json (list helper): its own schema when it has one
LIST_SCHEMA = os.path.join(HERE, "..", "schema", "numastor-list.schema.json")
if os.path.exists(LIST_SCHEMA):
    SCHEMAS["list"] = json.load(open(LIST_SCHEMA))
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
FIX_REFUSES = {"broken-inputs"}  # as tests/check-fixtures.py says
NOW = 1767225600  # 2026-01-01T00:00:00Z
NOW_TEXT = "2026-01-01T00:00:00Z"
failures = 0
runs = 0
in_evidence = 0  # per-node counts seen in a finding's evidence: the walk must meet some


# lib/out/json.h's NS_APP_ID: host.machine_id is sd_id128_get_machine_app_specific() of it
NUMASTOR_APP_ID = "02ba7b0cb4dc41f38f834e081248e6c9"


def app_specific(machine_id, app_id):
    """systemd's app-specific id (`systemd-id128 machine-id --app-specific=APP`), from its
    definition: HMAC-SHA256 keyed by the machine id over the app id, 128 bits as a v4 UUID."""
    mac = bytearray(hmac.new(bytes.fromhex(machine_id), bytes.fromhex(app_id), hashlib.sha256).digest()[:16])
    mac[6] = (mac[6] & 0x0F) | 0x40
    mac[8] = (mac[8] & 0x3F) | 0x80
    return mac.hex()

def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)
    if os.environ.get("NUMASTOR_FAIL_FAST") == "1":  # tests/mutation/run.sh: the first one ends it
        sys.exit(1)


def one_document(out):
    """stdout as exactly one JSON document (AssertionError otherwise)."""
    dec = json.JSONDecoder()
    text = out.lstrip()
    assert text, "nothing on stdout"
    doc, end = dec.raw_decode(text)
    rest = text[end:].strip()
    assert not rest, f"more than one document on stdout: {rest[:120]!r}"
    assert isinstance(doc, dict), f"the document is a {type(doc).__name__}, not an object"
    return doc


def per_node_shapes(o, path="$"):
    """Every per-node count in o that is not [{"node": N, "count": C, ...}] (or null), by path."""
    bad = []
    if isinstance(o, dict):
        for k, v in o.items():
            p = f"{path}.{k}"
            if k in ("counts_by_node", "counts_since_fix_by_node", "rates_by_node"):
                global in_evidence
                in_evidence += ".evidence." in p
                ok = v is None or (isinstance(v, list) and all(
                    isinstance(e, dict) and isinstance(e.get("node"), int) and isinstance(e.get("count"), int)
                    for e in v))
                if not ok:
                    bad.append(f"{p}={json.dumps(v)[:80]}")
            bad += per_node_shapes(v, p)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            bad += per_node_shapes(v, f"{path}[{i}]")
    return bad


def envelope(doc, now, host):
    assert isinstance(doc.get("schema_version"), int), "no schema_version"
    h = doc.get("host")
    assert isinstance(h, dict) and set(h) == {"hostname", "boot_id", "machine_id"}, f"host is {h!r}"
    if host is not None:
        assert h == host, f"host {h} != {host}"
    g = doc.get("generated_at")
    assert isinstance(g, str), f"generated_at is {g!r}"
    t = datetime.datetime.strptime(g, "%Y-%m-%dT%H:%M:%SZ")  # RFC 3339 UTC
    if now is None:
        drift = abs((t - datetime.datetime.utcnow()).total_seconds())
        assert drift < 600, f"generated_at {g} is {drift:.0f} s from now"
    else:
        assert g == NOW_TEXT, f"generated_at {g}, NUMASTOR_TEST_NOW says {NOW_TEXT}"


def run(numastor, label, args, kind, *, code=None, env=None, now=NOW, host=None, check=None):
    """Run numastor ARGS; stdout must be one document of kind (check, fix or error), exit code
    as told (an error document's exit_code in any case). Returns the document or None."""
    global runs
    runs += 1
    e = dict(os.environ, NO_COLOR="1")
    e.pop("NUMASTOR_TEST_NOW", None)
    if now is not None:
        e["NUMASTOR_TEST_NOW"] = str(now)
    e.update(env or {})
    p = subprocess.run([numastor, *args], capture_output=True, text=True, env=e)
    try:
        doc = one_document(p.stdout)
        got = "error" if "error" in doc else kind if kind != "error" else "not an error"
        if kind == "check-or-list" and got != "error":
            # the report, until --list prints its own document; then that has a schema
            kind = "check" if "machine" in doc else "list"
            assert kind in SCHEMAS, "check --list --json printed a document without a schema in schema/"
            got = kind
        assert got == kind, f"a {got} document where a {kind} one was due: {p.stdout[:300]}"
        schemas.validate(doc, SCHEMAS[kind])
        envelope(doc, now, host)
        bad = per_node_shapes(doc)
        assert not bad, f"per-node counts of another shape: {bad[:3]}"
        if kind == "error":
            assert doc["error"]["exit_code"] == p.returncode, \
                f"exit {p.returncode} but error.exit_code {doc['error']['exit_code']}"
            assert doc["error"]["message"] in p.stderr, f"stderr does not say the message: {p.stderr[:300]!r}"
        if code is not None:
            assert p.returncode in (code if isinstance(code, tuple) else (code,)), f"exit {p.returncode}, expected {code}"
        if check:
            check(doc, p)
    except (AssertionError, ValueError, jsonschema.ValidationError) as x:
        fail(f"{label}: numastor {' '.join(args)}: {type(x).__name__}: {str(x)[:600]}"
             + (f"\n    stderr: {p.stderr[:300]}" if p.stderr else ""))
        return None
    return doc


def facts_of(bundle):
    """The bundle's own metadata (.numastor/facts, key=value lines), read apart from numastor."""
    import tarfile
    with tarfile.open(bundle) as tf:
        text = tf.extractfile(".numastor/facts").read().decode()
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def replays(numastor, tmp, bundle, host):
    """A replay's documents (check, its listing, fix's plan) say the capture's time and host as
    the bundle's facts say them, null where they say nothing; its errors and every document of a
    tree (no bundle) carry neither."""
    import tarfile
    facts = facts_of(bundle)
    want = {"captured_at": facts.get("captured_at"), "captured_host": facts.get("captured_host")}
    if want["captured_host"] != host["hostname"] or not want["captured_at"]:
        fail(f"the bundle's facts say {want}, not the tree's hostname {host['hostname']} and a time")

    def captured(expect):
        def check(d, p):
            got = {k: d.get(k, "absent") for k in expect}
            assert got == expect, f"captured fields {got}, the bundle says {expect}"
        return check
    run(numastor, "captured in a replay", ["check", "--snapshot", bundle, "--json"], "check", code=2, host=host,
        check=captured(want))
    run(numastor, "captured in a replay's listing", ["check", "--snapshot", bundle, "--json", "--list"],
        "check-or-list", code=(0, 1, 2), host=host, check=captured(want))
    run(numastor, "captured in fix's plan", ["fix", "--dry-run", "--snapshot", bundle, "--json"], "fix", code=0,
        host=host, check=captured(want))
    run(numastor, "no captured fields in a replay's error", ["fix", "--dry-run", "-s", bundle, "--json", "nosuchdisk0"],
        "error", code=3, host=host, check=captured({"captured_at": "absent", "captured_host": "absent"}))
    run(numastor, "fix --snapshot without --dry-run", ["fix", "--snapshot", bundle, "--json"], "error", code=3)
    run(numastor, "fix --snapshot with --sysroot", ["fix", "--dry-run", "--snapshot", bundle, "-R", tmp, "--json"],
        "error", code=3)
    # a bundle written before captured_host: the host is null, the time still the bundle's
    old = os.path.join(tmp, "old-facts.tar.gz")
    with tarfile.open(bundle) as src, tarfile.open(old, "w:gz") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read() if m.isfile() else None
            if m.name == ".numastor/facts":
                data = b"".join(l for l in data.splitlines(True) if not l.startswith(b"captured_host="))
                m.size = len(data)
            dst.addfile(m, io.BytesIO(data) if data is not None else None)
    run(numastor, "an older bundle's replay", ["check", "--snapshot", old, "--json"], "check", code=2,
        check=captured({"captured_at": want["captured_at"], "captured_host": None}))
    # a time that is not RFC 3339 UTC is no capture time: null, never passed on as it is
    bad = os.path.join(tmp, "bad-time.tar.gz")
    with tarfile.open(bundle) as src, tarfile.open(bad, "w:gz") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read() if m.isfile() else None
            if m.name == ".numastor/facts":
                data = data.replace(("captured_at=" + want["captured_at"]).encode(), b"captured_at=yesterday")
                m.size = len(data)
            dst.addfile(m, io.BytesIO(data) if data is not None else None)
    run(numastor, "a bundle's garbled capture time", ["check", "--snapshot", bad, "--json"], "check", code=2,
        check=captured({"captured_at": None, "captured_host": want["captured_host"]}))
    # a tree is no bundle, even one a bundle was extracted into
    tree = os.path.join(tmp, "extracted")
    os.makedirs(tree)
    with tarfile.open(bundle) as tf:
        tf.extractall(tree, filter="tar") if hasattr(tarfile, "data_filter") else tf.extractall(tree)
    for label, args, kind in (("check", ["check", "-R", tree, "--json"], "check"),
                              ("fix", ["fix", "--dry-run", "-R", tree, "--json"], "fix")):
        run(numastor, f"no captured fields in {label} of a tree", args, kind, code=(0, 2),
            check=captured({"captured_at": "absent", "captured_host": "absent"}))


PARTS = ("fixtures", "check", "host", "fix", "modules", "errors")
CLOUD = "cloud-2n64c-8nvme-forced-node0"


def main():
    numastor = os.path.abspath(sys.argv[1])
    probe = subprocess.run(["grep", "-q", "-a", "NUMASTOR_TEST_NOW", numastor])
    if probe.returncode != 0:
        print(f"FAIL: {numastor} was built without the test-only switches (-Dtest_hooks=true): "
              "generated_at cannot be fixed and fix --revert cannot run on a fixture")
        return 1
    # the fixtures gen-fixtures.py makes when given no names: every one but the large machine
    every = [n for n in subprocess.run([sys.executable, GEN, "--list"], capture_output=True, text=True,
                                       check=True).stdout.split() if not n.startswith("large-")]
    cases = sys.argv[2:]
    unknown = [c for c in cases if c not in PARTS and c not in every]
    if unknown:
        print(f"check-json-contract.py: no such case {unknown}: a part {list(PARTS)} or a fixture's name")
        return 2
    parts = set(PARTS) if not cases else {c for c in cases if c in PARTS}
    names = sorted(n for n in every if n in cases)
    if names or "fixtures" in parts:
        parts.add("fixtures")
        names = names or sorted(every)
    # the trees the parts asked for read, and nothing else generated
    need = set(names)
    need |= {CLOUD} if parts & {"check", "host", "fix", "modules", "errors"} else set()
    need |= {"node-set-manifest-upstream", "baremetal-2s-4nvme-healthy"} if "modules" in parts else set()
    with tempfile.TemporaryDirectory(prefix="numastor-json.", dir=SCRATCH) as tmp:
        fx = os.path.join(tmp, "fx")
        subprocess.run([sys.executable, GEN, fx, *sorted(need)], check=True, stdout=subprocess.DEVNULL)
        cloud = os.path.join(fx, CLOUD)

        # --- check on every fixture, and its errors ------------------------------------------
        for n in names:
            root = os.path.join(fx, n)
            # 3 is a report too: devices that could not be judged, each named with its reason
            run(numastor, n, ["check", "--sysroot", root, "--json"], "check", code=(0, 1, 2, 3),
                check=lambda d, p: (d["summary"]["exit_code"] == p.returncode
                                    and (p.returncode == 3) == (d["summary"]["status"] == "unknown")
                                    and len(d["summary"]["unjudged_devices"]) == d["summary"]["unjudged"]
                                    and (p.returncode != 3 or d["summary"]["unjudged"] > 0))
                or fail(f"{n}: summary.exit_code / status / unjudged"))
            # an excluded-CPU input that does not parse: fix refuses, as the error document
            run(numastor, n, ["fix", "--sysroot", root, "--dry-run", "--json"],
                "error" if n in FIX_REFUSES else "fix", code=3 if n in FIX_REFUSES else 0)
        if "check" in parts:
            run(numastor, "check -f json", ["check", "-R", cloud, "-f", "json"], "check", code=2)
            run(numastor, "check --format=json", ["check", "-R", cloud, "--format=json"], "check", code=2)
            run(numastor, "the time of the run", ["check", "-R", cloud, "--json"], "check", now=None, code=2)
            for args in (["--list"], ["--list", "-o", "NAME,NODE"], ["-l", "-n"]):
                run(numastor, "check " + " ".join(args), ["check", "-R", cloud, "--json", *args], "check-or-list",
                    code=(0, 1, 2))
            run(numastor, "check --list, no such device", ["check", "-R", cloud, "--json", "--list", "nosuchdisk0"],
                "error", code=3)
            run(numastor, "bad option", ["check", "--json", "--no-such-option"], "error", code=3)
            run(numastor, "bad short option", ["check", "-j", "-Z"], "error", code=3)
            run(numastor, "missing argument", ["check", "--json", "--sysroot"], "error", code=3)
            run(numastor, "bad format", ["check", "--json", "--format", "xml"], "error", code=3)
            run(numastor, "missing sysroot", ["check", "--json", "--sysroot", os.path.join(tmp, "nowhere")], "error", code=3)
            run(numastor, "missing snapshot", ["check", "--json", "--snapshot", os.path.join(tmp, "nowhere.tar.gz")],
                "error", code=3)
            run(numastor, "no such device", ["check", "--json", "-R", cloud, "nosuchdisk0"], "error", code=3,
                host={"hostname": None, "boot_id": None, "machine_id": None})

        # --- host: read through the root, each field on its own --------------------------------
        if "host" in parts:
            named = os.path.join(tmp, "named")
            shutil.copytree(cloud, named, symlinks=True)
            os.makedirs(os.path.join(named, "proc/sys/kernel/random"), exist_ok=True)
            os.makedirs(os.path.join(named, "etc"), exist_ok=True)
            with open(os.path.join(named, "proc/sys/kernel/hostname"), "w") as f:
                f.write("db-17.example\n")
            with open(os.path.join(named, "proc/sys/kernel/random/boot_id"), "w") as f:
                f.write("0f5c2b7e-1111-4222-8333-944445555666\n")
            host = {"hostname": "db-17.example", "boot_id": "0f5c2b7e-1111-4222-8333-944445555666", "machine_id": None}
            run(numastor, "host, machine-id unreadable", ["check", "-R", named, "--json"], "check", code=2, host=host)
            with open(os.path.join(named, "etc/machine-id"), "w") as f:
                f.write("5d1e7b0c9a8f4e3d2c1b0a9f8e7d6c5b\n")
            # never the id itself (confidential, machine-id(5)): numastor's app-specific id for it
            host["machine_id"] = app_specific("5d1e7b0c9a8f4e3d2c1b0a9f8e7d6c5b", NUMASTOR_APP_ID)
            assert host["machine_id"] != "5d1e7b0c9a8f4e3d2c1b0a9f8e7d6c5b"
            run(numastor, "host", ["check", "-R", named, "--json"], "check", code=2, host=host)
            run(numastor, "host in fix", ["fix", "-R", named, "--dry-run", "--json"], "fix", code=0, host=host)
            run(numastor, "host in an error", ["check", "-R", named, "--json", "nosuchdisk0"], "error", code=3, host=host)
            run(numastor, "host in fix --modules", ["fix", "-R", named, "--modules", "--dry-run", "--json"], "error",
                code=3, host=host)
            # a bundle is made to be sent: it carries numastor's id for the machine, never
            # etc/machine-id, and its replay says the same host
            bundle = os.path.join(tmp, "host.tar.gz")
            p = subprocess.run([numastor, "snapshot", "-O", bundle, "-R", named], capture_output=True, text=True)
            if p.returncode != 0:
                fail(f"snapshot of the named tree: exit {p.returncode}: {p.stderr[:300]}")
            else:
                import tarfile
                with tarfile.open(bundle) as tf:
                    members = {m.name.lstrip("./") for m in tf.getmembers()}
                    raw = [m for m in tf.getmembers() if m.isfile() and
                           b"5d1e7b0c9a8f4e3d2c1b0a9f8e7d6c5b" in tf.extractfile(m).read()]
                if "etc/machine-id" in members or raw:
                    fail(f"the bundle carries the machine id itself: {sorted(m for m in members if 'machine' in m)}"
                         f" {[m.name for m in raw]}")
                else:
                    print("PASS the bundle carries no etc/machine-id")
                run(numastor, "host of a replay", ["check", "--snapshot", bundle, "--json"], "check", code=2, host=host)
                replays(numastor, tmp, bundle, host)

        # --- fix: plan, results, revert, modules, and its errors ----------------------------
        w = {"NUMASTOR_TEST_SYSROOT_WRITES": "1"}
        if "fix" in parts:
            t = os.path.join(tmp, "t")
            shutil.copytree(cloud, t, symlinks=True)

            def nothing(want):
                def check(d, p):
                    assert d["nothing_to_revert"] is want, f"nothing_to_revert is {d['nothing_to_revert']}, not {want}"
                    if want:
                        assert d["reverted"] == [] and d["modules"] is None, d
                    assert not p.stderr.strip() or not want, f"stderr: {p.stderr[:200]}"
                return check
            run(numastor, "revert, no journal", ["fix", "-R", t, "--revert", "--json"], "fix", code=0, env=w,
                check=nothing(True))
            run(numastor, "fix writing", ["fix", "-R", t, "--json"], "fix", code=(0, 1), env=w,
                check=lambda d, p: d["dry_run"] is False and all(e["result"] for e in d["irqs"]) or fail("fix: results"))
            run(numastor, "fix again: a journal there", ["fix", "-R", t, "--json"], "fix", code=(0, 1), env=w)
            run(numastor, "revert", ["fix", "-R", t, "--revert", "--json"], "fix", code=(0, 1), env=w,
                check=nothing(False))
            run(numastor, "revert, journal gone", ["fix", "-R", t, "--revert", "--json"], "fix", code=0, env=w,
                check=nothing(True))
            os.makedirs(os.path.join(t, "run/numastor"), exist_ok=True)
            with open(os.path.join(t, "run/numastor/journal.json"), "w") as f:
                f.write("{not json\n")
            run(numastor, "malformed journal", ["fix", "-R", t, "--revert", "--json"], "error", code=3, env=w)
            run(numastor, "malformed journal, fix", ["fix", "-R", t, "--json"], "error", code=3, env=w)
            os.unlink(os.path.join(t, "run/numastor/journal.json"))
        if "modules" in parts:
            # a module directory with a manifest: the swap plan, refused (a check fails on a tree)
            run(numastor, "modules plan", ["fix", "-R", os.path.join(fx, "node-set-manifest-upstream"), "--modules",
                                           "--dry-run", "--json"], "fix", code=1,
                check=lambda d, p: (d["modules"]["safe"] is False and d["result"] is None and d["dry_run"] is True)
                or fail("modules plan: not the refused dry-run plan"))
            run(numastor, "modules, nothing to swap", ["fix", "-R", cloud, "--modules", "--dry-run", "--json"], "error",
                code=3, check=lambda d, p: d["command"] == "fix --modules" or fail("modules: command"))
            # a manifest of this kernel's whose one fix is upstream, on a machine whose nvme runs stock
            # and forces nothing: nothing to do (exit 0, an empty plan, no journal, the text says
            # so); the same manifest for another kernel applies to nothing: refused (exit 3)
            healthy = os.path.join(tmp, "healthy")
            shutil.copytree(os.path.join(fx, "baremetal-2s-4nvme-healthy"), healthy, symlinks=True)
            with open(os.path.join(healthy, "proc/sys/kernel/osrelease")) as f:
                rel = f.read().strip()
            for name, release in (("up", rel), ("other", "6.1.0-99-amd64")):
                os.makedirs(os.path.join(healthy, "var/lib/numastor/modules", name))
                with open(os.path.join(healthy, "var/lib/numastor/modules", name, "manifest.json"), "w") as f:
                    json.dump({"kernel_release": release, "built": "2026-11-30T10:00:00Z", "modules": [],
                               "already_upstream": [{"series": "nvme-no-forced-node", "patch": "0001-x.patch"}]}, f)

            def empty_plan(d, p):
                m = d["modules"]
                assert (m["groups"], m["steps"], m["detaches"], m["rescan"], m["safe"]) == ([], [], [], [], True), m
                assert d["result"] is None, d["result"]
                for j in ("run/numastor/journal.json", "var/lib/numastor/swap.json"):
                    assert not os.path.exists(os.path.join(healthy, j)), f"{j} written for nothing to do"
            for label, extra in (("dry-run", ["--dry-run"]), ("applying", [])):
                run(numastor, f"modules, every fix upstream ({label})",
                    ["fix", "-R", healthy, "--modules", "--module-dir", "/var/lib/numastor/modules/up", "--json", *extra],
                    "fix", code=0, env=w, check=empty_plan)
            p = subprocess.run([numastor, "fix", "-R", healthy, "--modules", "--module-dir", "/var/lib/numastor/modules/up"],
                               capture_output=True, text=True, env=dict(os.environ, **w))
            if p.returncode != 0 or "nothing to swap: every fix in" not in p.stdout:
                fail(f"modules, every fix upstream (text): exit {p.returncode}, stdout {p.stdout[:300]!r}")
            run(numastor, "modules, another kernel's manifest",
                ["fix", "-R", healthy, "--modules", "--module-dir", "/var/lib/numastor/modules/other", "--dry-run",
                 "--json"], "error", code=3)
            # a manifest that names a key twice (json-c keeps the last: "modules" read as the second
            # list) or holds a key build-modules.sh never writes is not the build's: refused, kept
            good_up = open(os.path.join(healthy, "var/lib/numastor/modules/up/manifest.json")).read()
            for name, text in (("twice", good_up.rstrip()[:-1] + ', "modules": [{"name": "nvme", "file": "nvme.ko", '
                                                         '"sha256": "00"}]}'),
                               ("unknown", good_up.rstrip()[:-1] + ', "signed": true}')):
                mdir = os.path.join(healthy, "var/lib/numastor/modules", name)
                os.makedirs(mdir)
                with open(os.path.join(mdir, "manifest.json"), "w") as f:
                    f.write(text)
                doc = run(numastor, f"modules, a manifest with a key {name}",
                          ["fix", "-R", healthy, "--modules", "--module-dir", "/var/lib/numastor/modules/" + name, "--json"],
                          "error", code=3, env=w)
                if doc and "is not one numastor's module build wrote" not in doc["error"]["message"]:
                    fail(f"modules, a manifest with a key {name}: the error does not say why: {doc['error']['message']}")
                if open(os.path.join(mdir, "manifest.json")).read() != text:
                    fail(f"modules, a manifest with a key {name}: the manifest was changed")
        if "errors" in parts:
            for label, args in (
                    ("bad option", ["--bogus"]),
                    ("bad --rq-affinity", ["-R", cloud, "--rq-affinity=3"]),
                    ("bad --lock-timeout", ["-R", cloud, "--lock-timeout", "x"]),
                    ("bad --timeout", ["-R", cloud, "--modules", "--timeout", "0"]),
                    ("--timeout without --modules or --revert", ["-R", cloud, "--timeout", "30"]),
                    ("bad --color", ["-R", cloud, "--color", "pink"]),
                    ("bad --probe", ["--probe=0"]),
                    ("--probe with --dry-run", ["--probe", "--dry-run"]),
                    ("--probe on a sysroot", ["-R", cloud, "--probe=1"]),
                    ("--install without --modules", ["-R", cloud, "--install"]),
                    ("--revert with a device", ["-R", cloud, "--revert", "nvme0n1"]),
                    ("--revert on a sysroot", ["-R", cloud, "--revert"]),
                    ("--hotplug with --json", ["--hotplug"]),
                    ("missing sysroot", ["-R", os.path.join(tmp, "nowhere")]),
                    ("no such device", ["-R", cloud, "nosuchdisk0"])):
                run(numastor, "fix " + label, ["fix", "--json", *args], "error", code=3)

            # --- the commands without a --json of their own: asked for one, an error document --
            run(numastor, "snapshot --json", ["snapshot", "--json"], "error", code=3)
            # irqbalance-policy: every error exits 3, as every command's, which its wrapper passes on to irqbalance
            run(numastor, "irqbalance-policy --json", ["irqbalance-policy", "--json", "/sys/devices/x", "1"], "error", code=3)
            run(numastor, "irqbalance-policy, bad IRQ", ["irqbalance-policy", "-j", "/sys/devices/x", "banana"], "error",
                code=3)
    if not in_evidence and len(names) == len(every):
        fail("no finding's evidence held a per-node count: the fixtures no longer show its shape")
    print(f"json contract: {runs} invocations ({in_evidence} per-node counts in evidence), {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
