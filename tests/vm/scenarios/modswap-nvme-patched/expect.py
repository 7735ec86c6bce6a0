"""modswap-nvme-patched: `numastor fix --modules` loading numastor's patched nvme.

The module directory holds the nvme.ko built from the pre-fix source with the
nvme-no-forced-node series (marker `numastor=nvme-no-forced-node`) and that build's
manifest.json (sha256, vermagic, srcversion from the file; nothing already upstream), as a
kernel without the fix would have. The pre-fix nvme forces the root-bus NVMe onto node 0.
It holds numastor to:

- `check` before the swap: the loaded pre-fix nvme is not called patched (the patched file
  in the module directory is not what is loaded: another srcversion);
- `--dry-run --json`: exit 0, safe, every check ok, the plan removes nvme, inserts the
  manifest's nvme.ko, rescans the forced function; nothing changed;
- `fix --modules`: exit 0; the loaded nvme is out of tree with the patched file's
  srcversion; the function reads numa_node -1; both NVMe disks back, the pattern intact;
  `check --json` reports the nvme module patched true, patches ["nvme-no-forced-node"],
  the NVMe not forced, and kernel_fixes nvme-no-forced-node in_kernel false (the manifest
  says the build applied it);
- `fix --revert`: the stock nvme, node -1, disks and pattern back, no journal;
- with the directory at /opt/numastor-kmod and `--module-dir` (the default one gone): the
  swap loads the patched nvme, and `fix --revert` (which takes no --module-dir) still returns
  to the stock nvme, exit 0, no journal left.
"""

import fixlib
import modswaplib as ms

SERIES = "nvme-no-forced-node"


def check(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    pci, stock_src, patched_src = f("nvme.pci"), f("stock.nvme.srcversion"), f("patched.nvme.srcversion")
    if not ctx.expect(pci and stock_src and patched_src, "test bed: missing nvme facts"):
        return
    fixlib.kernel_equal(ctx, "test bed", "marker of the patched nvme.ko", f("patched.nvme.marker"), SERIES)
    forced = ms.nvme_root_bus_pcis(ctx)
    ctx.expect(pci in forced and len(forced) == 2,
               f"test bed: root-bus NVMe functions {forced}: expected the NVMe ({pci}) and the subsystem's controller")
    ms.nvme_nodes(ctx, "test bed: boot (pre-fix nvme)", "boot", forced, "0")
    ms.module_out_of_tree(ctx, "nvme", "boot")
    ctx.expect(f("module.nvme.boot.srcversion") not in (stock_src, patched_src),
               "test bed: the pre-fix nvme has the stock or the patched srcversion")

    before = fixlib.check_json(ctx, "before")
    if before is not None:
        dev = ms.device_by_disk(ctx, before, f("disk.NSROOT0001.boot"))
        mod = ms.pci_of(dev).get("module") or {}
        # The module directory's nvme.ko is patched, but it is not the module that is loaded.
        ctx.expect(mod.get("patched") is not True,
                   f"check before the swap: nvme module: patched: numastor=true ground-truth=false "
                   f"(the loaded nvme is the pre-fix build, srcversion {f('module.nvme.boot.srcversion')}; "
                   f"the patched file in the module directory has {patched_src})")
        ctx.equal("check before the swap: nvme module", "srcversion", mod.get("srcversion"),
                  f("module.nvme.boot.srcversion"))

    plan = ms.swap_plan(ctx, "plan")
    if plan is not None:
        ctx.equal("plan", "dry_run", plan["_dry_run"], True)
        ctx.equal("plan", "safe", plan["safe"], True)
        ctx.equal("plan", "groups", plan["groups"], ["nvme"])
        moddir_file = [s["file"] for s in plan["steps"] if s["step"] == "insert"]
        ctx.equal("plan", "steps", [(s, m) for s, m, _ in ms.steps(plan)], [("remove", "nvme"), ("insert", "nvme")])
        ctx.expect(moddir_file and (moddir_file[0] or "").endswith("/nvme.ko"),
                   f"plan: insert nvme: file {moddir_file} is not the module directory's nvme.ko")
        ctx.equal("plan", "rescan", sorted(plan["rescan"]), forced)
        ctx.equal("plan", "failed checks", ms.failed_checks(plan), [])
        names = " ".join(c["check"] for c in plan["checks"])
        for word in ("sha256", "vermagic", "root-owned", "the kernel will load", "the kernel's own"):
            ctx.expect(word in names, f"plan: no {word} check among {names!r}")
    ms.unchanged(ctx, "after --dry-run", "boot", "planned")

    ms.swap_text(ctx, "swap")
    ms.module_out_of_tree(ctx, "nvme", "swapped", patched_src)
    ms.nvme_nodes(ctx, "after the swap", "swapped", forced, "-1")
    ms.disks_back(ctx, "after the swap", "boot", "swapped")
    ms.pattern_intact(ctx, "NSROOT0001", ["swapped"])
    ms.pattern_intact(ctx, "NSMPATH0001", ["swapped"])
    doc = fixlib.check_json(ctx, "swapped")
    if doc is not None:
        dev = ms.device_by_disk(ctx, doc, f("disk.NSROOT0001.swapped"))
        p = ms.pci_of(dev)
        mod = p.get("module") or {}
        ctx.equal("check after the swap: nvme module", "patched", mod.get("patched"), True)
        ctx.equal("check after the swap: nvme module", "patches", mod.get("patches"), [SERIES])
        ctx.equal("check after the swap: nvme module", "srcversion", mod.get("srcversion"), patched_src)
        ctx.equal("check after the swap: nvme module", "out_of_tree", mod.get("out_of_tree"), True)
        ctx.equal("check after the swap: root-bus NVMe", "pci.numa_node", p.get("numa_node"), -1)
        ctx.equal("check after the swap: root-bus NVMe", "pci.node_forced", p.get("node_forced"), False)
        ctx.equal("check after the swap", "node-forced findings",
                  [x.get("device") for x in doc.get("findings", []) if x.get("id") == "node-forced"], [])
        ctx.equal("check after the swap: kernel_fixes nvme-no-forced-node", "in_kernel",
                  ms.kernel_fix(doc, SERIES).get("in_kernel"), False)

    ms.swap_text(ctx, "revert")
    ms.module_stock(ctx, "nvme", "reverted", stock_src)
    ms.nvme_nodes(ctx, "after --revert", "reverted", forced, "-1")
    ms.disks_back(ctx, "after --revert", "boot", "reverted")
    ms.pattern_intact(ctx, "NSROOT0001", ["reverted"])
    ms.pattern_intact(ctx, "NSMPATH0001", ["reverted"])
    fixlib.kernel_equal(ctx, "after --revert", "journal", f("journal.reverted"), "absent")

    # --module-dir, then --revert without it.
    ms.swap_text(ctx, "swap2")
    ms.module_out_of_tree(ctx, "nvme", "swapped2", patched_src)
    ms.disks_back(ctx, "after the swap with --module-dir", "boot", "swapped2")
    ms.swap_text(ctx, "revert2")
    ms.module_stock(ctx, "nvme", "reverted2", stock_src)
    ms.disks_back(ctx, "after --revert of the swap with --module-dir", "boot", "reverted2")
    ms.pattern_intact(ctx, "NSROOT0001", ["reverted2"])
    ms.pattern_intact(ctx, "NSMPATH0001", ["reverted2"])
    fixlib.kernel_equal(ctx, "after --revert of the swap with --module-dir", "journal",
                        f("journal.reverted2"), "absent")
