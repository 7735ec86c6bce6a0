"""stock: every disk agrees with ground truth (compare.py), and the two NVMe controllers
read as the kernel places them: the one behind the node-1 expander on node 1, the one on
the root bus (no node from firmware) as unknown. The bed's NVMe subsystem (on every machine) makes
a multipath head whose two paths the kernel links (6.1: no multipath/ directory): numastor
reports the head with both, each with its controller, PCI function, node and vectors, and the
subsystem's iopolicy; the queue -> vector pairing of every disk is the measured one."""


# The exact findings of the stock machine and check's exit code (pinned after merging the
# severity rules of issue 10; device by role, see compare.py's Context.roles).
FINDINGS = [
    ("node-unknown", "nvme-root", "info"),
    ("node-unknown", "vscsi", "info"),
    ("node-unknown", "vblk", "info"),
    ("vector-serves-all-nodes", "mega", "warning"),
    ("alloc-remote", "mega", "warning"),
    ("midlayer-alloc-stock", "mega", "info"),
]
EXIT_CODE = 1


def check(ctx):
    if ctx.truth_disks(kind="scsi", root_bus=False):
        ctx.pin_findings(FINDINGS, EXIT_CODE)
    else:
        # a flavour without megaraid_sas (cloud-amd64): an ich9-ahci drives the node-1 HBA's disk
        # (run-vm.sh); one unmanaged vector, allocations on the probing CPU's node: the same
        # findings as the megasas disk's, on the ahci disk
        ctx.expect("no megaraid_sas" in (ctx.read("notes.txt") or ""),
                   "test bed: no megasas disk, and the guest did not say its driver is missing")
        ctx.expect(len(ctx.truth_disks(kind="ata", root_bus=False)) == 1,
                   "test bed: no ahci disk behind the node-1 expander in the megasas disk's place")
        ctx.pin_findings([(i, "ahci" if r == "mega" else r, sev) for i, r, sev in FINDINGS], EXIT_CODE)
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
    check_head(ctx)
    # every queue of every disk held to measured I/O (6 disks' queues, both paths' included)
    ctx.expect(ctx.measured_pairs >= 16, f"pairing: only {ctx.measured_pairs} queue/CPU pairs measured")
    if ctx.read("replayed") is None:  # the guest's own run, not tests/check-captures.py's replay
        snap = ctx.read("snapshot.rc")
        ctx.expect(snap is not None and snap.strip() == "0",
                   f"numastor snapshot of the stock machine: exit {snap!r}: {ctx.read('snapshot.err')!r}")


def check_head(ctx):
    heads = ctx.truth_disks(kind="nvme-multipath")
    if not ctx.expect(len(heads) == 1, f"test bed: expected one multipath head, ground truth has {heads}"):
        return
    head = heads[0]
    t = ctx.truth.disks[head]
    tpaths = t["paths"].split()
    ctx.expect(len(tpaths) == 2, f"test bed: {head}: the kernel links {tpaths}, not two paths")
    # the head's multipath/ directory (its paths' links) came about v6.14: absent on 5.10 to
    # 6.12, on 7.2 exactly the paths the guest found
    rel = ((ctx.doc or {}).get("machine") or {}).get("kernel_release") or ""
    mp = t.get("multipath_dir")
    if rel.split(".")[0].isdigit() and int(rel.split(".")[0]) >= 7:
        ctx.expect(sorted((mp or "").split()) == sorted(tpaths),
                   f"test bed: {head}: multipath/ lists {mp!r} on {rel}, the paths are {tpaths}")
    else:
        ctx.expect(mp == "absent", f"test bed: {head}: {rel} has no multipath/ directory, the guest found {mp!r}")
    numas = sorted(ctx.truth.disks[p]["numa_node"] for p in tpaths)
    ctx.expect(numas == ["-1", "1"], f"test bed: {head}: path numa_nodes {numas}, expected one root-bus (-1) and one node-1")
    dev = ctx.device(head)
    if not ctx.expect(dev is not None, f"{head}: numastor does not report the head"):
        return
    ctx.equal(head, "kind", dev.get("kind"), "nvme-multipath")
    ctx.equal(head, "iopolicy", dev.get("iopolicy"), t["iopolicy"])
    ctx.equal(head, "node_source", dev.get("node_source"), "paths-disagree")
    got = sorted((p.get("controller"), (p.get("pci") or {}).get("address"), (p.get("pci") or {}).get("numa_node"),
                  sorted(i.get("irq") for i in (p.get("pci") or {}).get("irqs", [])))
                 for p in dev.get("paths") or [])
    want = sorted((ctx.truth.disks[p]["controllers"].split()[0], ctx.truth.disks[p]["pci"],
                   int(ctx.truth.disks[p]["numa_node"]), sorted(ctx.truth.irqs.get(p, {})))
                  for p in tpaths)
    ctx.equal(head, "paths (controller, function, node, vectors)", got, want)
    # with iopolicy numa each node already takes its nearest path: no paths-on-different-nodes
    if t["iopolicy"] == "numa":
        ctx.expect(not ctx.findings("paths-on-different-nodes", head),
                   f"{head}: paths-on-different-nodes raised with iopolicy numa")
