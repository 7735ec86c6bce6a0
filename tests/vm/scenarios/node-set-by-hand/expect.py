"""node-set-by-hand: the root-bus NVMe's numa_node written by hand (0, the first memory node)
under the stock nvme, which has the fix. Ground truth is the kernel's: /proc/sys/kernel/tainted
before and after the write (bit 11, I, set by the write) and the function's numa_node as it
reads now. numastor must call the node set (node_source set, node_set true, a node-set finding)
and never forced; the expander NVMe (a real node 1) keeps its firmware node and no such finding."""

TAINT_I = 1 << 11


def check(ctx):
    pxb = ctx.truth_disks(kind="nvme", root_bus=False)
    root = ctx.truth_disks(kind="nvme", root_bus=True)
    if not ctx.expect(len(pxb) == 1 and len(root) == 1,
                      f"test bed: expected one NVMe on each bus, ground truth has {pxb} and {root}"):
        return
    before, after = (int((ctx.read(f) or "-1").strip() or -1) for f in ("tainted-before", "tainted-after"))
    ctx.expect(before >= 0 and not before & TAINT_I, f"test bed: tainted I before the write ({before})")
    ctx.expect(after >= 0 and after & TAINT_I, f"test bed: the numa_node write did not taint I ({after})")
    disk = root[0]
    t = ctx.truth.disks[disk]
    ctx.expect(t["numa_node"] == "0", f"test bed: {disk}: numa_node reads {t['numa_node']} after the write")
    ctx.expect("O" not in t["module_taint"], f"test bed: the loaded nvme is out of tree ({t['module_taint']!r})")
    dev = ctx.device(disk)
    if dev is not None:
        pci = ctx.pci_of(dev) or {}
        ctx.equal(disk, "pci.numa_node", pci.get("numa_node"), 0)
        ctx.equal(disk, "pci.node_forced", pci.get("node_forced"), False)
        ctx.equal(disk, "pci.node_set", pci.get("node_set"), True)
        ctx.equal(disk, "node_source", dev.get("node_source"), "set")
        ctx.expect(not ctx.findings("node-forced", disk), f"{disk}: findings: a node set by hand called forced")
        found = ctx.findings("node-set", disk)
        if ctx.expect(found, f"{disk}: findings: numastor has no node-set finding for it"):
            ctx.expect("tainted I" in (found[0].get("message") or ""), f"{disk}: node-set: message names no taint")
    other = ctx.device(pxb[0])
    if other is not None:
        ctx.equal(pxb[0], "node_source", other.get("node_source"), "pci")
        ctx.equal(pxb[0], "node", other.get("node"), 1)
        ctx.expect(not ctx.findings("node-set", pxb[0]) and not ctx.findings("node-forced", pxb[0]),
                   f"{pxb[0]}: findings: the expander NVMe (real node 1) has a node finding")
