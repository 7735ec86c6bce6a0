"""Host-side helpers for the fix scenarios' expect.py (numastor fix, --revert, irqbalance).

They read what the guest sent back: numastor's outputs (`<tag>.{out,err,rc}` from
vm_numastor), vm_irqs snapshots, vm_truth files and journal copies, and report through
the scenario's ctx (compare.Context).
"""

import json
import os

from compare import SRC_ROOT, Truth, cpuset, schema_errors

FIX_SCHEMA = os.path.join(SRC_ROOT, "schema", "numastor-fix.schema.json")
CHECK_SCHEMA = os.path.join(SRC_ROOT, "schema", "numastor.schema.json")


def rc(ctx, tag):
    """numastor's exit code for a vm_numastor tag, or None when it did not run."""
    text = ctx.read(f"{tag}.rc")
    return int(text) if text and text.strip() else None


def json_out(ctx, tag, schema=FIX_SCHEMA):
    """numastor's JSON output for a tag, checked against the schema; None when missing or bad."""
    text = ctx.read(f"{tag}.out")
    err = (ctx.read(f"{tag}.err") or "").strip()[:400]
    if text is None:
        ctx.fail(f"{tag}: numastor did not run (no {tag}.out)")
        return None
    try:
        doc = json.loads(text)
    except ValueError as e:
        ctx.fail(f"{tag}: numastor printed no valid JSON ({e}); exit {rc(ctx, tag)}; stderr: {err}")
        return None
    with open(schema, encoding="utf-8") as f:
        s = json.load(f)
    for problem in schema_errors(doc, s, s)[:10]:
        ctx.fail(f"{tag}: schema: {problem}")
    return doc


def check_json(ctx, tag):
    return json_out(ctx, tag, CHECK_SCHEMA)


def irqs(ctx, name):
    """A vm_irqs snapshot: {irq: {"actions", "affinity", "effective"}}."""
    out = {}
    for line in (ctx.read(name) or "").splitlines():
        rec = line.split("\t")
        if len(rec) == 4:
            out[int(rec[0])] = {"actions": rec[1], "affinity": rec[2], "effective": rec[3]}
    if not out:
        ctx.fail(f"test bed: no IRQ snapshot {name}")
    return out


def truth(ctx, name):
    t = Truth(ctx.path(name))
    if not t.present:
        ctx.fail(f"test bed: the guest wrote no {name}")
    return t


def storage_irqs(t):
    """{irq: (disk, attrs)} of every storage IRQ in a vm_truth file. A multipath path disk's
    vectors belong to its head (the disk numastor reports), as the kernel links them."""
    return {num: (t.head_of(disk) or disk, attrs) for disk, nums in t.irqs.items() for num, attrs in nums.items()}


def journal(ctx, name):
    """A copy of numastor's journal the guest took, or None when there was none."""
    text = ctx.read(name)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as e:
        ctx.fail(f"journal {name}: not JSON ({e})")
        return {}


def prefix_nvme_loaded(ctx):
    """Did the guest load the pre-fix nvme (vm_load_storage's fact prefix_nvme)? Not where the
    flavour builds nvme in (cloud-amd64: prefix_nvme=builtin), which leaves no forced node."""
    for line in (ctx.read("facts.txt") or "").splitlines():
        key, _, value = line.partition("\t")
        if key == "prefix_nvme":
            return value == "loaded"
    ctx.fail("test bed: the guest recorded no prefix_nvme fact (facts.txt)")
    return False


def moves(doc):
    return [e for e in (doc or {}).get("irqs", []) if e["action"] == "move"]


def same_cpus(a, b):
    return a is not None and b is not None and cpuset(a) == cpuset(b)


def check_journal(ctx, what, j, expected):
    """The journal names each IRQ once, exactly those of `expected` ({irq: (previous, placed)})."""
    if not ctx.expect(j is not None, f"{what}: no journal in /run/numastor"):
        return
    entries = j.get("irqs", [])
    nums = [e.get("irq") for e in entries]
    ctx.expect(len(nums) == len(set(nums)), f"{what}: journal names an IRQ twice: {sorted(nums)}")
    ctx.equal(what, "journal irqs", sorted(set(nums)), sorted(expected))
    for e in entries:
        if e.get("irq") not in expected:
            continue
        previous, placed = expected[e["irq"]]
        subject = f"{what}: journal irq {e['irq']} ({e.get('name')})"
        ctx.equal(subject, "previous", e.get("previous"), previous, same_cpus)
        ctx.equal(subject, "placed", e.get("placed"), placed, same_cpus)


def kernel_equal(ctx, subject, field, kernel, expected):
    """A value the kernel shows (ground truth) against what the scenario expects."""
    ok = kernel == expected
    if not ok:
        ctx.fail(f"{subject}: {field}: kernel={kernel} expected={expected}")
    return ok


def check_placed(ctx, tag, moved):
    """check --json (output TAG) after a fix marks exactly the moved IRQs placed_by_numastor."""
    placed = check_json(ctx, tag)
    if placed is None:
        return
    for dev in placed.get("devices", []):
        for path in dev.get("paths") or []:
            for irq in (path.get("pci") or {}).get("irqs", []):
                ctx.equal(f"check after fix: {dev['name']}: irq {irq['irq']} ({irq.get('name')})",
                          "placed_by_numastor", irq.get("placed_by_numastor"), irq["irq"] in moved)


def check_revert_doc(ctx, nmoved, tag="revert"):
    """fix --revert --json (output TAG) exited 0, failed none, and restored each of the nmoved."""
    rev = json_out(ctx, tag)
    ctx.equal(tag, "exit code", rc(ctx, tag), 0)
    if rev is not None:
        ctx.equal(tag, "failed", rev["failed"], 0)
        ctx.equal(tag, "reverted", len(rev["reverted"]), nmoved)
        for item in rev["reverted"]:
            ctx.expect(item["restored"] is True, f"{tag}: {item['what']}: not restored ({item['problem']})")
