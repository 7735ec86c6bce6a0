"""stock: every disk agrees with ground truth (compare.py), and the two NVMe controllers
read as the kernel places them: the one behind the node-1 expander on node 1, the one on
the root bus (no node from firmware) as unknown."""


def check(ctx):
    pxb = ctx.truth_disks(kind="nvme", root_bus=False)
    root = ctx.truth_disks(kind="nvme", root_bus=True)
    if not ctx.expect(len(pxb) == 1 and len(root) == 1,
                      f"test bed: expected one NVMe on each bus, ground truth has {pxb} and {root}"):
        return
    for disk, numa, node, source in ((pxb[0], 1, 1, "pci"), (root[0], -1, None, "unknown")):
        ctx.expect(ctx.truth.disks[disk]["numa_node"] == str(numa),
                   f"test bed: {disk}: the kernel reads numa_node {ctx.truth.disks[disk]['numa_node']}, not {numa}")
        dev = ctx.device(disk)
        if dev is None:
            continue
        pci = ctx.pci_of(dev) or {}
        ctx.equal(disk, "pci.numa_node", pci.get("numa_node"), numa)
        ctx.equal(disk, "node", dev.get("node"), node)
        ctx.equal(disk, "node_source", dev.get("node_source"), source)
        ctx.equal(disk, "pci.node_forced", pci.get("node_forced"), False)
    ctx.expect(ctx.doc.get("privileged") is True, "privileged: numastor=false as root")
