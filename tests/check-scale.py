#!/usr/bin/env python3
"""numastor at scale (issue 18): the generator's big machines are checked whole, and the
256-NVMe machine's own snapshot replays.

    check-scale.py NUMASTOR

- large-8n448c-256nvme (8 sockets, 448 CPUs, 256 NVMe x 65 vectors: one PCI segment per
  node) and large-8n1024c-16nvme (1,024 CPUs: cpumasks of 32 words): check --sysroot --json
  exits 0-2, its document is valid against schema/numastor.schema.json (the machine and
  every 32nd device), every disk is a
  device, and no note says something was unreadable, too big or cut short, nor that entries
  of sys/block resolve to one disk (issue 28: 256 distinct disks are not aliases);
- the 256-NVMe tree's snapshot (numastor snapshot --sysroot TREE) replays: check --snapshot
  FILE --json is check --sysroot TREE --json but for the root (tests/check-snapshot.py's
  comparison).

Each tree is generated once into tmpfs; each step's time is printed."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import jsonschema
import schemas

from jsondiff import first_difference

HERE = os.path.dirname(os.path.abspath(__file__))
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor.schema.json")))
BAD_NOTE = re.compile(r"unreadable|cannot read|could not read|truncat|cut short|too big|too long|beyond", re.I)
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)


def timed(what, cmd, **kw):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, **kw)
    print(f"# {what}: {time.monotonic() - t0:.1f} s")
    return p


def without_root(doc):
    """The document without what names the root: the root, and a replay's capture (its time and
    host: tests/check-fix-snapshot.py and check-json-contract.py hold them to the bundle)."""
    doc = dict(doc)
    doc.pop("root")
    doc.pop("captured_at", None)
    doc.pop("captured_host", None)
    return doc


def checked(numastor, tree, name, disks):
    """check --sysroot TREE --json: the document, or None after a failure."""
    p = timed(f"check --sysroot {name} --json", [numastor, "check", "--sysroot", tree, "--json"])
    if p.returncode not in (0, 1, 2):
        fail(f"{name}: check exited {p.returncode}: {p.stderr[:300]!r}")
        return None
    doc = json.loads(p.stdout)
    # every device has the same shape: the schema is checked on a sample of them (the whole
    # 34 MB document takes jsonschema minutes)
    devs = doc["devices"]
    sample = dict(doc, devices=[d for i, d in enumerate(devs) if i % 32 == 0 or i == len(devs) - 1])
    try:
        schemas.validate(sample, SCHEMA)
    except jsonschema.ValidationError as e:
        fail(f"{name}: the document is not valid against the schema: {e.message[:200]}")
        return None
    got = len(doc["devices"])
    notes = [n for n in doc["notes"] if BAD_NOTE.search(json.dumps(n))]
    for dev in doc["devices"]:
        notes += [n for n in dev.get("notes") or [] if BAD_NOTE.search(json.dumps(n))]
    aliases = [n for n in doc["notes"] if re.search(r"entr(y|ies) of /sys/block .* resolves? to", n["message"])]
    if got != disks:
        fail(f"{name}: {got} devices, expected {disks}")
    elif aliases:
        fail(f"{name}: distinct disks taken for aliases of one: {aliases[:3]}")
    elif notes:
        fail(f"{name}: notes of what could not be read: {notes[:3]}")
    else:
        print(f"PASS {name}: {disks} devices, {len(p.stdout)} bytes of JSON, valid, exit {p.returncode}")
    return doc


def main():
    numastor = os.path.abspath(sys.argv[1])
    gen = os.path.join(HERE, "fixtures", "gen-fixtures.py")
    with tempfile.TemporaryDirectory(prefix="numastor-scale.", dir=SCRATCH) as tmp:
        os.environ["TMPDIR"] = os.path.join(tmp, "tmpdir")  # the replay's extraction: tmpfs too
        os.makedirs(os.environ["TMPDIR"])
        for name, disks in (("large-8n1024c-16nvme", 16), ("large-8n448c-256nvme", 256)):
            p = timed(f"generate {name}", [sys.executable, gen, tmp, name])
            if p.returncode != 0:
                fail(f"{name}: the generator failed: {p.stderr[-300:]!r}")
                continue
            tree = os.path.join(tmp, name)
            direct = checked(numastor, tree, name, disks)
            if direct is None or disks < 256:
                continue
            bundle = os.path.join(tmp, name + ".tar.gz")
            p = timed(f"snapshot --sysroot {name}", [numastor, "snapshot", "--sysroot", tree, "-O", bundle])
            if p.returncode != 0:
                fail(f"{name}: snapshot exited {p.returncode}: {p.stderr[:300]!r}")
                continue
            p = timed(f"check --snapshot {name} --json", [numastor, "check", "--snapshot", bundle, "--json"])
            if p.returncode not in (0, 1, 2):
                fail(f"{name}: its snapshot does not replay: exit {p.returncode}: {p.stderr[:300]!r}")
                continue
            diff = first_difference(without_root(direct), without_root(json.loads(p.stdout)))
            if diff:
                fail(f"{name}: check --sysroot != replay of its snapshot at {diff}")
            else:
                print(f"PASS {name}: its snapshot ({os.path.getsize(bundle)} bytes) replays as check --sysroot")
    print(f"scale: {'failed' if failures else 'all passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
