"""prefix-nvme: the pre-fix nvme driver makes the root-bus NVMe read numa_node 0; numastor
must call that forced (node_forced true, node unknown) and raise a node-forced finding for
that disk with a remedy. The expander NVMe (a real node 1) is not forced. The bed's NVMe
subsystem: its root-bus path is forced the same way, its expander path is not;
the head is reported forced with both paths."""


# The exact findings with the pre-fix nvme and check's exit code (pinned after merging the
# severity rules of issue 10; device by role, see compare.py's Context.roles).
FINDINGS = [
    ("node-forced", "nvme-root", "critical"),
    ("node-forced", "head", "critical"),
    ("node-unknown", "vscsi", "info"),
    ("node-unknown", "vblk", "info"),
    ("vector-serves-all-nodes", "mega", "warning"),
    ("alloc-remote", "mega", "warning"),
    ("midlayer-alloc-stock", "mega", "info"),
]
EXIT_CODE = 2


def check(ctx):
    ctx.pin_findings(FINDINGS, EXIT_CODE)
    pxb = ctx.truth_disks(kind="nvme", root_bus=False)
    root = ctx.truth_disks(kind="nvme", root_bus=True)
    if not ctx.expect(len(pxb) == 1 and len(root) == 1,
                      f"test bed: expected one NVMe on each bus, ground truth has {pxb} and {root}"):
        return
    disk = root[0]
    t = ctx.truth.disks[disk]
    ctx.expect(t["numa_node"] == "0", f"test bed: {disk}: pre-fix nvme left numa_node at {t['numa_node']}")
    ctx.expect("O" in t["module_taint"], f"test bed: loaded nvme is not the out-of-tree one (taint {t['module_taint']!r})")
    dev = ctx.device(disk)
    if dev is not None:
        pci = ctx.pci_of(dev) or {}
        ctx.equal(disk, "pci.numa_node", pci.get("numa_node"), 0)
        ctx.equal(disk, "pci.node_forced", pci.get("node_forced"), True)
        ctx.equal(disk, "node_source", dev.get("node_source"), "forced")
        ctx.equal(disk, "node", dev.get("node"), None)
        found = ctx.findings("node-forced", disk)
        if ctx.expect(found, f"{disk}: findings: numastor has no node-forced finding for it"):
            remedy = found[0].get("remedy") or {}
            ctx.expect(remedy.get("text"), f"{disk}: node-forced finding: remedy text is empty")
    other = ctx.device(pxb[0])
    if other is not None:
        pci = ctx.pci_of(other) or {}
        ctx.equal(pxb[0], "pci.node_forced", pci.get("node_forced"), False)
        ctx.equal(pxb[0], "node", other.get("node"), 1)
        ctx.expect(not ctx.findings("node-forced", pxb[0]),
                   f"{pxb[0]}: findings: numastor calls the expander NVMe (real node 1) forced")

    check_head(ctx)


def check_head(ctx):
    heads = ctx.truth_disks(kind="nvme-multipath")
    if not ctx.expect(len(heads) == 1, f"test bed: expected one multipath head, ground truth has {heads}"):
        return
    head = heads[0]
    tpaths = ctx.truth.disks[head]["paths"].split()
    numas = {ctx.truth.disks[p]["controllers"].split()[0]: ctx.truth.disks[p]["numa_node"] for p in tpaths}
    ctx.expect(sorted(numas.values()) == ["0", "1"],
               f"test bed: {head}: path numa_nodes {numas}: the pre-fix nvme should force the root-bus path to 0")
    dev = ctx.device(head)
    if not ctx.expect(dev is not None, f"{head}: numastor does not report the head"):
        return
    ctx.equal(head, "node_source", dev.get("node_source"), "forced")
    ctx.equal(head, "node", dev.get("node"), None)
    forced = {p.get("controller"): (p.get("pci") or {}).get("node_forced") for p in dev.get("paths") or []}
    want = {c: n == "0" for c, n in numas.items()}
    ctx.equal(head, "paths' node_forced", forced, want)
    ctx.expect(ctx.findings("node-forced", head), f"{head}: findings: no node-forced finding for the head")
