"""snapshot-roundtrip: `numastor snapshot` in the guest writes a bundle whose replay
(`check --snapshot`) equals the check captured with it, field by field (the root aside), on
Debian's real 6.1 sysfs; the bundle's own check agrees with ground truth like any check, and
the replay still reports the forced node."""

import json
import os
import tarfile

import fixlib


def first_difference(a, b, path=""):
    if type(a) is not type(b):
        return f"{path}: captured={a!r} replay={b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            d = first_difference(a.get(k), b.get(k), f"{path}.{k}")
            if d:
                return d
    elif isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: captured has {len(a)} items, replay {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
    elif a != b:
        return f"{path}: captured={a!r} replay={b!r}"
    return None


def check(ctx):
    ctx.equal("snapshot", "exit code", fixlib.rc(ctx, "snapshot"), 0)
    replay = fixlib.json_out(ctx, "replay", fixlib.CHECK_SCHEMA)
    bundle = os.path.join(ctx.result_dir, "snapshot.tar.gz")
    if replay is None or not ctx.expect(os.path.exists(bundle), "the guest wrote no snapshot.tar.gz"):
        return
    with tarfile.open(bundle) as t:
        captured = json.load(t.extractfile(".numastor/check.json"))
    ctx.expect(replay.get("root", "").startswith("snapshot:"), f"replay root: {replay.get('root')}")
    captured.pop("root", None)
    replay.pop("root", None)
    diff = first_difference(captured, replay)
    ctx.expect(diff is None, f"live check != replay of its snapshot at {diff}")
    forced = [f for f in replay.get("findings", []) if f["id"] == "node-forced"]
    ctx.expect(forced, "the replay lost the forced node of the root-bus NVMe")
