"""Host-side helpers for the module-swap scenarios' expect.py (numastor fix --modules).

The guest records each step's state with guest/lib.sh's vm_swap_state / vm_pattern_* /
vm_alloc_trace as "KEY<tab>VALUE" lines in facts.txt:

    module.NAME.STEP.{state,taint,srcversion,holders}   /sys/module/NAME (state "absent")
    pci.BDF.STEP.numa_node                               the function's numa_node ("absent")
    disk.ID.STEP = name, disks.STEP = names              every disk by identity (vm_disk_id)
    disk_path.ID.STEP, disk_ino.ID.STEP                  its sysfs directory's path and kernfs
                                                         inode (a re-probed disk has a new one)
    journal.STEP                                         /run/numastor/journal.json present/absent
    pattern.ID.written / pattern.ID.STEP                 sha256 written / read back ("no-disk")
    alloc.NAME                                           "cpus=… nodes=…" of an alloc_traces line
    anything else a scenario sets with vm_fact

and numastor's outputs come back as TAG.{out,err,rc} (vm_numastor).
"""

import json
import re

import fixlib

PLAN_KEYS = {"to_stock", "groups", "checks", "steps", "detaches", "rescan", "busy", "safe"}


def facts(ctx):
    if not hasattr(ctx, "_facts"):
        out = {}
        for line in (ctx.read("facts.txt") or "").splitlines():
            key, _, value = line.partition("\t")
            out[key] = value
        if not out:
            ctx.fail("test bed: the guest recorded no facts (facts.txt)")
        ctx._facts = out
    return ctx._facts


def devices_rel(path):
    """A sysfs path from its devices/ component on (so /sys/devices/... and relative forms compare)."""
    if path is None:
        return None
    i = path.find("devices/")
    return path[i:] if i >= 0 else path


def fact(ctx, key, default=None):
    return facts(ctx).get(key, default)


def step_facts(ctx, step):
    """What vm_swap_state (and a scenario's in_use) recorded for one step, keyed without the
    step: {"module.nvme.state": …, "pci.0000:00:02.0.numa_node": …, "disk.ID": …, "journal": …}."""
    out = {}
    for key, value in facts(ctx).items():
        parts = key.split(".")
        if parts[0] == "module" and len(parts) == 4 and parts[2] == step:
            out[f"module.{parts[1]}.{parts[3]}"] = value
        elif parts[0] == "pci" and key.endswith(f".{step}.numa_node"):
            out[key[:-len(f".{step}.numa_node")] + ".numa_node"] = value
        elif parts[0] in ("disk", "disk_path", "disk_ino", "disks", "journal", "tainted", "in_use") and key.endswith("." + step):
            out[key[:-len(step) - 1]] = value
    return out


def unchanged(ctx, what, before, after, ignore=(), reprobed=False):
    """Everything vm_swap_state recorded at step `after` equals step `before`; with reprobed,
    but for the disks' sysfs directories (path, inode) and the kernel taint."""
    a, b = step_facts(ctx, before), step_facts(ctx, after)
    for key in sorted(set(a) | set(b)):
        if key in ignore or reprobed and key.startswith(("disk_path.", "disk_ino.", "tainted")):
            continue
        if a.get(key) != b.get(key):
            ctx.fail(f"{what}: {key}: kernel={b.get(key)} before={a.get(key)} (it changed)")


def disks_by_id(ctx, step):
    """{identity: name} of every disk at a step."""
    return {key[len("disk."):-len(step) - 1]: value for key, value in facts(ctx).items()
            if key.startswith("disk.") and key.endswith("." + step)}


def disks_back(ctx, what, before, after, same_names=False):
    """Every disk of step `before` is there at step `after` (by identity), none more; with
    same_names under the same name."""
    a, b = disks_by_id(ctx, before), disks_by_id(ctx, after)
    fixlib.kernel_equal(ctx, what, "disks (by identity)", sorted(b), sorted(a))
    if same_names:
        for ident in sorted(set(a) & set(b)):
            fixlib.kernel_equal(ctx, what, f"name of disk {ident}", b[ident], a[ident])


def pattern_intact(ctx, ident, steps):
    written = fact(ctx, f"pattern.{ident}.written")
    if not ctx.expect(written, f"test bed: no pattern was written to {ident}"):
        return
    for step in steps:
        got = fact(ctx, f"pattern.{ident}.{step}")
        fixlib.kernel_equal(ctx, f"disk {ident}", f"sha256 of the pattern read back {step}", got, written)


def module(ctx, name, step):
    return {f: fact(ctx, f"module.{name}.{step}.{f}") for f in ("state", "taint", "srcversion", "holders")}


def module_stock(ctx, name, step, srcversion=None):
    """Loaded and in-tree (no O taint); the stock file's srcversion when given."""
    m = module(ctx, name, step)
    fixlib.kernel_equal(ctx, f"{step}: module {name}", "state", m["state"], "live")
    ctx.expect("O" not in (m["taint"] or ""),
               f"{step}: module {name}: taint: kernel={m['taint']!r} expected=no O (the stock module)")
    if srcversion is not None:
        fixlib.kernel_equal(ctx, f"{step}: module {name}", "srcversion", m["srcversion"], srcversion)


def module_out_of_tree(ctx, name, step, srcversion=None):
    m = module(ctx, name, step)
    fixlib.kernel_equal(ctx, f"{step}: module {name}", "state", m["state"], "live")
    ctx.expect("O" in (m["taint"] or ""),
               f"{step}: module {name}: taint: kernel={m['taint']!r} expected=O (an out-of-tree module)")
    if srcversion is not None:
        fixlib.kernel_equal(ctx, f"{step}: module {name}", "srcversion", m["srcversion"], srcversion)


def swap_plan(ctx, tag, rc=0):
    """The `modules` object of `fix --modules [--dry-run] --json`, checked against
    numastor-fix.schema.json; its "result" (what happened) is m["_result"]."""
    ctx.equal(tag, "exit code", fixlib.rc(ctx, tag), rc)
    text = ctx.read(f"{tag}.out")
    try:
        doc = json.loads(text or "")
    except ValueError as e:
        ctx.fail(f"{tag}: numastor printed no valid JSON ({e}); stderr: {(ctx.read(tag + '.err') or '')[:300]}")
        return None
    ctx.equal(tag, "keys", sorted(doc), ["dry_run", "generated_at", "host", "modules", "result", "schema_version"])
    with open(fixlib.FIX_SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    for problem in fixlib.schema_errors(doc, schema, schema)[:10]:
        ctx.fail(f"{tag}: schema: {problem}")
    if doc.get("dry_run"):
        ctx.equal(tag, "result of a dry run", doc.get("result"), None)
    m = doc.get("modules") or {}
    ctx.equal(tag, "modules keys", sorted(m), sorted(PLAN_KEYS))
    for c in m.get("checks", []):
        ctx.equal(tag, "check keys", sorted(c), ["check", "detail", "ok"])
    for s in m.get("steps", []):
        ctx.equal(tag, "step keys", sorted(s), ["file", "module", "options", "options_notes", "step", "stock_options"])
    for d in m.get("detaches", []):
        ctx.equal(tag, "detaches keys", sorted(d), ["device", "pci", "refusal"])
    m["_dry_run"] = doc.get("dry_run")
    m["_result"] = doc.get("result")
    return m


def steps(plan):
    return [(s["step"], s["module"], s["file"]) for s in plan.get("steps", [])]


def failed_checks(plan):
    return [c for c in plan.get("checks", []) if not c["ok"]]


def swap_text(ctx, tag, rc=0):
    """A text-mode `fix --modules` / `--revert`: exit code, no FAIL line, its ok lines."""
    out = ctx.read(f"{tag}.out") or ""
    err = (ctx.read(f"{tag}.err") or "").strip()
    ctx.equal(tag, "exit code", fixlib.rc(ctx, tag), rc)
    if rc == 0:
        bad = [line.strip() for line in out.splitlines() if " FAIL " in f" {line.strip()} "]
        ctx.expect(not bad, f"{tag}: numastor printed failures: {bad}; stderr: {err[:300]}")
    return out


def device_by_disk(ctx, doc, name):
    for dev in (doc or {}).get("devices", []):
        if dev.get("name") == name:
            return dev
    ctx.fail(f"numastor's check lists no device {name}")
    return None


def pci_of(dev):
    for path in (dev or {}).get("paths") or []:
        if path.get("pci"):
            return path["pci"]
    return {}


def kernel_fix(doc, series):
    for f in ((doc or {}).get("machine") or {}).get("kernel_fixes", []):
        if f.get("series") == series:
            return f
    return {}


def nvme_root_bus_pcis(ctx):
    """The NVMe functions on the bed's root bus 0000:00 (firmware gives it no node: the
    stock nvme reads numa_node -1 there), from the guest's list of every NVMe controller's
    function (fact nvme.pcis, vm_nvme_pcis): the root-bus NVMe and the subsystem's root-bus
    controller, the ones a pre-fix nvme forces."""
    pcis = (fact(ctx, "nvme.pcis") or "").split()
    ctx.expect(len(pcis) == 4, f"test bed: {len(pcis)} NVMe functions ({pcis}), expected four "
               "(two NVMe, the subsystem's two controllers)")
    return sorted(p for p in pcis if p.startswith("0000:00:"))


def nvme_nodes(ctx, what, step, forced, node):
    """Each NVMe function's numa_node at a step as the kernel reads it: `node` for the
    root-bus ones (`forced`), 1 for those behind the node-1 expander."""
    for p in (fact(ctx, "nvme.pcis") or "").split():
        fixlib.kernel_equal(ctx, what, f"{p} numa_node", fact(ctx, f"pci.{p}.{step}.numa_node"),
                            node if p in forced else "1")


# --- refusals: `fix --modules` in text mode that must refuse and change nothing ----------

CHECKS = ("is a loadable module", "sha256 matches the manifest", "vermagic matches the running kernel",
          "file and directories are root-owned and not group/world-writable",
          "the kernel will load", "the modules were built for the running kernel",
          "what it imports beyond the stock module is there when it loads (this swap, the kernel; same CRCs)",
          "is the kernel's own module", "the initramfs is initramfs-tools'")


def unwrapped(text):
    """fix's text with its wrapped lines joined (issue 32: fix wraps at 80 columns, a continuation
    indented 4 deeper than its item; a break after a '/' joins with nothing, any other with one
    space, as prose and lists of "a, b" are written)."""
    lines, item = [], 0
    for line in (text or "").splitlines():
        ind = len(line) - len(line.lstrip(" "))
        if lines and line.strip() and ind >= item + 4:
            lines[-1] += ("" if lines[-1].endswith("/") else " ") + line.strip()
        else:
            lines.append(line)
            item = ind
    return lines


def failed_lines(ctx, tag):
    """{check: detail} of the `check FAIL <module>: <check>: <detail>` lines of a text-mode run."""
    out = {}
    for line in unwrapped(ctx.read(f"{tag}.out")):
        line = line.strip()
        if not line.startswith("check FAIL "):
            continue
        rest = line[len("check FAIL "):]
        for c in CHECKS:
            i = rest.find(c)
            if i >= 0:
                n = i + len(c)
                if c == "the kernel will load":  # its file is part of its name: "... load /x/y.ko"
                    j = rest.find(": ", n)
                    n = j if j >= 0 else len(rest)
                out[rest[:n]] = rest[n:].lstrip(": ")
                break
        else:
            out[rest] = ""
    return out


def refused(ctx, tag, checks=None, disk=None, why=None):
    ctx.equal(tag, "exit code", fixlib.rc(ctx, tag), 3)
    out, err = ctx.read(f"{tag}.out") or "", ctx.read(f"{tag}.err") or ""
    ctx.expect("refused" in err and "nothing was changed" in err,
               f"{tag}: stderr does not say refused / nothing was changed: {err.strip()[:300]!r}")
    failed = failed_lines(ctx, tag)
    ctx.equal(tag, "failing checks", sorted(failed), sorted(c for c, _ in (checks or [])))
    for c, pattern in checks or []:
        if c in failed:
            ctx.expect(re.search(pattern, failed[c]), f"{tag}: check {c!r}: detail {failed[c]!r} does not match {pattern!r}")
    if disk:
        ctx.expect(re.search(rf"detaches {re.escape(disk)} \([^)]*\): must not, {why}", "\n".join(unwrapped(out))),
                   f"{tag}: the plan does not name {disk} as refused ({why}): {out[:600]!r}")
    unchanged(ctx, f"{tag}: refused", f"{tag}-before", tag)
    fixlib.kernel_equal(ctx, tag, "journal after", fact(ctx, f"journal.{tag}"), "absent")
