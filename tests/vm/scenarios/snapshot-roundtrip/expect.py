"""snapshot-roundtrip: `numastor snapshot` in the guest writes a bundle whose replay
(`check --snapshot`) equals the check captured with it, field by field (the root aside), on
Debian's real 6.1 sysfs; the bundle's own check agrees with ground truth like any check, and
the replay still reports the forced node."""

import json
import os
import sys
import tarfile

import fixlib
from compare import SRC_ROOT

sys.path.insert(0, os.path.join(SRC_ROOT, "tests"))
from jsondiff import first_difference  # noqa: E402


def check(ctx):
    ctx.equal("snapshot", "exit code", fixlib.rc(ctx, "snapshot"), 0)
    replay = fixlib.json_out(ctx, "replay", fixlib.CHECK_SCHEMA)
    bundle = os.path.join(ctx.result_dir, "snapshot.tar.gz")
    if replay is None or not ctx.expect(os.path.exists(bundle), "the guest wrote no snapshot.tar.gz"):
        return
    with tarfile.open(bundle) as t:
        captured = json.load(t.extractfile(".numastor/check.json"))
        facts = dict(line.split("=", 1) for line in t.extractfile(".numastor/facts").read().decode().splitlines()
                     if "=" in line)
    ctx.expect(replay.get("root", "").startswith("snapshot:"), f"replay root: {replay.get('root')}")
    # a replay says which capture it is (issue 32): what the bundle's own facts say, the one difference
    for key in ("captured_at", "captured_host"):
        ctx.equal("replay", key, replay.pop(key, "absent"), facts.get(key))
    captured.pop("root", None)
    replay.pop("root", None)
    diff = first_difference(captured, replay)
    ctx.expect(diff is None, f"live check != replay of its snapshot at {diff}")
    forced = [f for f in replay.get("findings", []) if f["id"] == "node-forced"]
    ctx.expect(forced, "the replay lost the forced node of the root-bus NVMe")
