"""modswap-nvme: `numastor fix --modules` when the nvme fix is already upstream.

The pre-fix nvme (out of tree) forces the root-bus NVMe, which has no node, onto node 0.
numastor's module directory holds only the module build's manifest.json, which lists the
nvme-no-forced-node series as already upstream. Ground truth is what the guest's shell read
around each step (facts.txt, modswaplib). It holds numastor to:

- `--dry-run --json`: exit 0, safe, the plan removes nvme and loads the stock nvme (no file),
  then removes and rescans exactly the forced function, detaches both NVMe disks without a
  refusal; and nothing changed (modules, numa_node, disks, no journal);
- `fix --modules`: exit 0, no FAIL line; the forced function reads numa_node -1; the loaded
  nvme is the stock one (in tree, the stock file's srcversion); both NVMe disks are back
  (found by controller serial: names may change) and the pattern reads back intact; the
  journal names the nvme module group; `check --json` no longer calls the NVMe forced, reports
  the nvme module stock (patched false) and the nvme fix in the kernel;
- `fix --revert`: exit 0; the stock nvme, node -1, the disks and the pattern as before; the
  journal is gone; then the usual check round against ground truth.

Where the flavour builds nvme in (cloud-amd64, fact nvme.form=builtin) nothing can replace it,
and the built-in nvme has the fix:

- the test bed: nvme reads built in (sys/module/nvme without initstate), the root-bus
  functions numa_node -1;
- `check --json`: the NVMe's module state builtin, not patched, kernel_fixes
  nvme-no-forced-node in_kernel true, no node-forced finding;
- the same manifest (the fix upstream): `--dry-run --json` plans no step, no detach, no
  rescan, and `fix --modules` exits 0 changing nothing;
- a module directory offering an nvme.ko (sha256, vermagic, ownership all right): refused
  with exit 3 for the one reason that nvme is built in, nothing changed, no journal, both
  patterns intact.
"""

import re
import fixlib
import modswaplib as ms


def check(ctx):
    if ms.fact(ctx, "nvme.form") == "builtin":
        check_builtin(ctx)
        return
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    pci = f("nvme.pci")
    stock_src = f("stock.nvme.srcversion")
    if not ctx.expect(pci and stock_src, "test bed: no nvme.pci / stock.nvme.srcversion fact"):
        return
    forced = ms.nvme_root_bus_pcis(ctx)
    ctx.expect(pci in forced and len(forced) == 2,
               f"test bed: root-bus NVMe functions {forced}: expected the NVMe ({pci}) and the subsystem's controller")
    ms.nvme_nodes(ctx, "test bed: boot (pre-fix nvme)", "boot", forced, "0")
    ms.module_out_of_tree(ctx, "nvme", "boot")
    ctx.expect(f("module.nvme.boot.srcversion") != stock_src, "test bed: the pre-fix nvme has the stock srcversion")

    before = fixlib.check_json(ctx, "before")
    if before is not None:
        disk = f("disk.NSROOT0001.boot")
        ctx.expect(any(x.get("id") == "node-forced" and x.get("device") == disk for x in before.get("findings", [])),
                   f"check before the swap: no node-forced finding for {disk}")

    # The plan, and that it changed nothing.
    plan = ms.swap_plan(ctx, "plan")
    if plan is not None:
        ctx.equal("plan", "dry_run", plan["_dry_run"], True)
        ctx.equal("plan", "to_stock", plan["to_stock"], False)
        ctx.equal("plan", "safe", plan["safe"], True)
        ctx.equal("plan", "groups", plan["groups"], ["nvme"])
        st = ms.steps(plan)
        ctx.equal("plan", "steps", [(a, m) for a, m, _ in st], [("remove", "nvme"), ("insert", "nvme")])
        # the stock nvme by its in-tree file, never by name (an --install would make the name numastor's)
        # (compressed as the line ships it: 6.12's nvme.ko.xz)
        ctx.expect(len(st) == 2 and st[0][2] is None and
                   re.search(r"/kernel/drivers/nvme/host/nvme\.ko(\.xz|\.zst|\.gz)?$", st[1][2] or ""),
                   f"plan: steps {st}: the stock nvme is not inserted from its in-tree file")
        ctx.equal("plan", "rescan", sorted(plan["rescan"]), forced)
        ctx.equal("plan", "failed checks", ms.failed_checks(plan), [])
        nvme_disks = sorted(name for ident, name in ms.disks_by_id(ctx, "boot").items() if ident.startswith("NS"))
        ctx.equal("plan", "detaches", sorted(d["device"] for d in plan["detaches"]), nvme_disks)
        for d in plan["detaches"]:
            ctx.equal(f"plan: detaches {d['device']}", "refusal", d["refusal"], None)
        root = [d for d in plan["detaches"] if d["device"] == f("disk.NSROOT0001.boot")]
        if root:
            ctx.equal("plan: the root-bus NVMe", "pci", root[0]["pci"], pci)
    ms.unchanged(ctx, "after --dry-run", "boot", "planned")
    ms.pattern_intact(ctx, "NSROOT0001", ["planned"])
    ms.pattern_intact(ctx, "NSMPATH0001", ["planned"])

    # The swap.
    ms.swap_text(ctx, "swap")
    ms.nvme_nodes(ctx, "after the swap", "swapped", forced, "-1")
    ms.module_stock(ctx, "nvme", "swapped", stock_src)
    ms.disks_back(ctx, "after the swap", "boot", "swapped")
    ms.pattern_intact(ctx, "NSROOT0001", ["swapped"])
    ms.pattern_intact(ctx, "NSMPATH0001", ["swapped"])
    j = fixlib.journal(ctx, "journal-swap.json")
    if ctx.expect(j is not None, "after the swap: no journal"):
        ctx.equal("journal after the swap", "groups", j.get("groups"), ["nvme"])
    doc = fixlib.check_json(ctx, "swapped")
    if doc is not None:
        dev = ms.device_by_disk(ctx, doc, f("disk.NSROOT0001.swapped"))
        p = ms.pci_of(dev)
        ctx.equal("check after the swap: root-bus NVMe", "pci.numa_node", p.get("numa_node"), -1)
        ctx.equal("check after the swap: root-bus NVMe", "pci.node_forced", p.get("node_forced"), False)
        ctx.equal("check after the swap", "node-forced findings",
                  [x.get("device") for x in doc.get("findings", []) if x.get("id") == "node-forced"], [])
        mod = p.get("module") or {}
        ctx.equal("check after the swap: nvme module", "patched", mod.get("patched"), False)
        ctx.equal("check after the swap: nvme module", "out_of_tree", mod.get("out_of_tree"), False)
        ctx.equal("check after the swap: nvme module", "srcversion", mod.get("srcversion"), stock_src)
        ctx.equal("check after the swap: kernel_fixes nvme-no-forced-node", "in_kernel",
                  ms.kernel_fix(doc, "nvme-no-forced-node").get("in_kernel"), True)

    # The revert.
    ms.swap_text(ctx, "revert")
    ms.nvme_nodes(ctx, "after --revert", "reverted", forced, "-1")
    ms.module_stock(ctx, "nvme", "reverted", stock_src)
    ms.disks_back(ctx, "after --revert", "boot", "reverted")
    ms.pattern_intact(ctx, "NSROOT0001", ["reverted"])
    ms.pattern_intact(ctx, "NSMPATH0001", ["reverted"])
    fixlib.kernel_equal(ctx, "after --revert", "journal", f("journal.reverted"), "absent")


def check_builtin(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    fixlib.kernel_equal(ctx, "test bed", "nvme module state", f("module.nvme.boot.state"), "builtin")
    root = ms.nvme_root_bus_pcis(ctx)
    ctx.expect(len(root) == 2, f"test bed: root-bus NVMe functions {root}: expected the NVMe and the subsystem's")
    for p in root:
        fixlib.kernel_equal(ctx, "test bed", f"{p} numa_node", f(f"pci.{p}.boot.numa_node"), "-1")

    doc = fixlib.check_json(ctx, "before")
    if doc is not None:
        dev = ms.device_by_disk(ctx, doc, f("disk.NSROOT0001.boot"))
        mod = ms.pci_of(dev).get("module") or {}
        ctx.equal("check: nvme module", "state", mod.get("state"), "builtin")
        ctx.equal("check: nvme module", "patched", mod.get("patched"), False)
        ctx.equal("check: kernel_fixes nvme-no-forced-node", "in_kernel",
                  ms.kernel_fix(doc, "nvme-no-forced-node").get("in_kernel"), True)
        ctx.equal("check", "node-forced findings",
                  [x.get("device") for x in doc.get("findings", []) if x.get("id") == "node-forced"], [])

    plan = ms.swap_plan(ctx, "plan")
    if plan is not None:
        ctx.equal("plan", "steps", ms.steps(plan), [])
        ctx.equal("plan", "detaches", plan["detaches"], [])
        ctx.equal("plan", "rescan", plan["rescan"], [])
        ctx.equal("plan", "failed checks", ms.failed_checks(plan), [])
    ms.swap_text(ctx, "upstream")
    ms.unchanged(ctx, "fix --modules with the fix upstream", "boot", "upstream")
    fixlib.kernel_equal(ctx, "fix --modules with the fix upstream", "journal", f("journal.upstream"), "absent")

    ms.refused(ctx, "offered", checks=[("nvme is a loadable module", r"^nvme is built into the kernel")])
    for ident in ("NSROOT0001", "NSMPATH0001"):
        ms.pattern_intact(ctx, ident, ["offered"])
