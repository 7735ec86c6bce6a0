"""The first place two JSON documents differ, as a path and both values (for the snapshot
round-trip tests on fixtures, the live machine and the VM guest). The envelope's generated_at
(when each document was made) is not compared: a capture and its replay are made at different
times by nature; everything else, host included, must be equal."""

# keys of the top level that say when, not what
VOLATILE = ("generated_at",)


def first_difference(a, b, path="", names=("captured", "replay")):
    x, y = names
    if path == "" and isinstance(a, dict) and isinstance(b, dict):
        a = {k: v for k, v in a.items() if k not in VOLATILE}
        b = {k: v for k, v in b.items() if k not in VOLATILE}
    if type(a) is not type(b):
        return f"{path}: {x}={a!r} {y}={b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            d = first_difference(a.get(k), b.get(k), f"{path}.{k}", names)
            if d:
                return d
    elif isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {x} has {len(a)} items, {y} {len(b)}"
        for i, (p, q) in enumerate(zip(a, b)):
            d = first_difference(p, q, f"{path}[{i}]", names)
            if d:
                return d
    elif a != b:
        return f"{path}: {x}={a!r} {y}={b!r}"
    return None
