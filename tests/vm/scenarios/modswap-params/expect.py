"""modswap-params: `numastor fix --modules` loads the patched nvme with the stock one's parameters.

The stock nvme is loaded by busybox modprobe with one non-default parameter per source:
`nvme.use_threaded_interrupts=1` on the kernel command line (permission 0: no sysfs file,
only /proc/cmdline knows it), `io_queue_depth=256` in /etc/modprobe.d (plus `bogus_param=1`,
which no nvme has), and `sgl_threshold` written to 65536 at runtime (only sysfs knows it).
Ground truth is the guest's own reading of /sys/module/nvme/parameters, the NVMe disks'
nr_requests (io_queue_depth - 1), the irq/N-nvmeXqY threads (one per vector when threaded)
and dmesg's "unknown parameter 'bogus_param' ignored" lines. It holds numastor to:

- `--dry-run --json`: exit 0, safe, the insert of the module directory's nvme.ko with
  options holding io_queue_depth=256, sgl_threshold=65536 and use_threaded_interrupts=1 and
  not bogus_param (a note says the file lacks it); a check that modprobe.d has no install
  command; the text plan shows the options on the load step;
- `fix --modules`: the patched nvme (out of tree, patched srcversion) runs with every
  parameter of the boot, the disks' nr_requests are those of the boot, its vectors are
  threaded, the kernel did not see bogus_param again; disks back, pattern intact;
- `fix --revert`: the stock nvme with the same parameters again;
- with `install nvme ...` added to modprobe.d, `fix --modules` exits 3 naming the command
  and changes nothing.
"""

import fixlib
import modswaplib as ms

PARAMS = ("io_queue_depth", "sgl_threshold", "write_queues", "poll_queues", "max_host_mem_size_mb",
          "use_cmb_sqes", "noacpi")


def same_as_boot(ctx, step, what):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    for p in PARAMS:
        fixlib.kernel_equal(ctx, what, f"/sys/module/nvme/parameters/{p}", f(f"param.{p}.{step}"),
                            f(f"param.{p}.boot"))
    for d in ("NSROOT0001", "NSPXB0001"):
        fixlib.kernel_equal(ctx, what, f"{d} queue/nr_requests", f(f"nr_requests.{d}.{step}"),
                            f(f"nr_requests.{d}.boot"))
    fixlib.kernel_equal(ctx, what, "nvme vectors with an irq/ thread (use_threaded_interrupts=1)",
                        f(f"threaded_vectors.{step}"), f(f"nvme_vectors.{step}"))


def check(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    stock_src, patched_src = f("stock.nvme.srcversion"), f("patched.nvme.srcversion")
    if not ctx.expect(stock_src and patched_src, "test bed: missing nvme facts"):
        return
    # the test bed: the stock nvme runs with the non-default values
    fixlib.kernel_equal(ctx, "test bed: boot", "io_queue_depth (modprobe.d)", f("param.io_queue_depth.boot"), "256")
    fixlib.kernel_equal(ctx, "test bed: boot", "sgl_threshold (written)", f("param.sgl_threshold.boot"), "65536")
    fixlib.kernel_equal(ctx, "test bed: boot", "NSROOT0001 nr_requests", f("nr_requests.NSROOT0001.boot"), "255")
    ctx.expect(int(f("nvme_vectors.boot") or 0) > 0 and f("threaded_vectors.boot") == f("nvme_vectors.boot"),
               f"test bed: boot: {f('threaded_vectors.boot')} of {f('nvme_vectors.boot')} nvme vectors threaded "
               "(nvme.use_threaded_interrupts=1 on the command line was not applied)")
    fixlib.kernel_equal(ctx, "test bed: boot", "dmesg: unknown parameter 'bogus_param' ignored",
                        f("unknown_param.boot"), "1")
    ms.module_stock(ctx, "nvme", "boot", stock_src)

    plan = ms.swap_plan(ctx, "plan")
    if plan is not None:
        ctx.equal("plan", "safe", plan["safe"], True)
        ctx.equal("plan", "failed checks", ms.failed_checks(plan), [])
        ctx.expect(any("install or remove command" in c["check"] and c["ok"] for c in plan["checks"]),
                   f"plan: no modprobe.d install command check among {[c['check'] for c in plan['checks']]}")
        ins = [s for s in plan["steps"] if s["step"] == "insert"]
        if ctx.expect(len(ins) == 1 and (ins[0]["file"] or "").endswith("/nvme.ko"),
                      f"plan: the inserts are {ins}, not the module directory's nvme.ko"):
            words = (ins[0].get("options") or "").split()
            for want in ("io_queue_depth=256", "sgl_threshold=65536", "use_threaded_interrupts=1"):
                ctx.expect(want in words, f"plan: insert nvme: options {ins[0].get('options')!r} lack {want}")
            ctx.expect(not any(w.startswith("bogus_param") for w in words),
                       f"plan: insert nvme: options {ins[0].get('options')!r} pass bogus_param, which nvme.ko lacks")
            ctx.expect(any("bogus_param" in n and "lacks" in n for n in ins[0].get("options_notes", [])),
                       f"plan: insert nvme: no note says bogus_param is not passed: {ins[0].get('options_notes')}")
            for want in ("io_queue_depth=256", "sgl_threshold=65536"):
                ctx.expect(want in (ins[0].get("stock_options") or "").split(),
                           f"plan: insert nvme: stock_options {ins[0].get('stock_options')!r} lack {want}")
    text = "\n".join(ms.unwrapped(ctx.read("plantext.out")))  # fix wraps at 80 columns
    ctx.expect("io_queue_depth=256" in text and " with " in text,
               f"plan (text): the load step does not show its options: {text[-800:]!r}")
    ms.unchanged(ctx, "after --dry-run", "boot", "planned")

    ms.swap_text(ctx, "swap")
    ms.module_out_of_tree(ctx, "nvme", "swapped", patched_src)
    same_as_boot(ctx, "swapped", "after the swap")
    fixlib.kernel_equal(ctx, "after the swap", "dmesg: unknown parameter 'bogus_param' ignored",
                        f("unknown_param.swapped"), f("unknown_param.boot"))
    ms.disks_back(ctx, "after the swap", "boot", "swapped")
    ms.pattern_intact(ctx, "NSROOT0001", ["swapped"])
    ms.pattern_intact(ctx, "NSMPATH0001", ["swapped"])

    ms.swap_text(ctx, "revert")
    ms.module_stock(ctx, "nvme", "reverted", stock_src)
    same_as_boot(ctx, "reverted", "after --revert")
    ms.disks_back(ctx, "after --revert", "boot", "reverted")
    ms.pattern_intact(ctx, "NSROOT0001", ["reverted"])
    ms.pattern_intact(ctx, "NSMPATH0001", ["reverted"])
    fixlib.kernel_equal(ctx, "after --revert", "journal", f("journal.reverted"), "absent")

    out = "\n".join(ms.unwrapped(ctx.read("refused.out"))) + (ctx.read("refused.err") or "")
    ctx.equal("with an install command", "exit code", fixlib.rc(ctx, "refused"), 3)
    ctx.expect("modprobe.d has an `install` command for nvme" in out,
               f"with an install command: the refusal is not named: {out[-600:]!r}")
    ms.unchanged(ctx, "with an install command", "reverted", "refused")
