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


def check(ctx, with_trace=True):
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
        # numastor trace's windows against the kernel's own counters (issue 34); the scenarios
        # that reuse these checks on another boot (server) run no trace round
        if with_trace:
            import tracecheck
            tracecheck.check(ctx)


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
    check_paths(ctx, head, dev, tpaths, rel)


def parse_paths(text, head):
    """paths.txt / qd.txt (vm_measure_paths, vm_queue_depth_round): the CPUs whose reads each
    path counted, and each path's files as the kernel printed them ("absent": no such file)."""
    served, attrs = {}, {}
    for line in (text or "").splitlines():
        f = line.split("\t")
        if f[0] == "path_serves" and len(f) == 4 and f[1] == head:
            served.setdefault(f[3], set()).add(int(f[2]))
        elif f[0] == "path_attr" and len(f) >= 3:
            attrs.setdefault(f[1], {})[f[2]] = f[3] if len(f) > 3 else ""
    return served, attrs


def nodes_of(text):
    """A node list as the kernel prints it (%*pbl: "0-1", "1", "" for none): the bed's cpulist reader."""
    from compare import cpuset
    return sorted(cpuset(text.strip()))


def check_paths(ctx, head, dev, tpaths, rel):
    """Which path serves each node: measured in the guest (reads pinned to each CPU, counted on
    the path disks), the kernel's own numa_nodes where it has them (about 6.15 on), and
    numastor's serves_nodes: from the kernel ("kernel") or redone from the controllers' nodes
    ("inferred", every path tied for nearest included); its queue_depth under iopolicy
    queue-depth against the files read right after."""
    text = ctx.read("paths.txt")
    if text is None:  # captures kept before issue 33 measured no paths
        ctx.expect(ctx.read("replayed") is not None, f"test bed: {head}: the guest measured no paths (paths.txt)")
        return
    served, attrs = parse_paths(text, head)
    measured = {p: sorted({ctx.truth.node_of_cpu(c) for c in cpus}) for p, cpus in served.items()}
    cpus = sorted(c for cs in served.values() for c in cs)
    ctx.expect(cpus and len(cpus) == len(set(cpus)),
               f"test bed: {head}: each CPU's reads should go down one path, measured {served}")
    paths = {p.get("disk"): p for p in dev.get("paths") or []}
    ctx.equal(head, "paths' disks", sorted(paths, key=str), sorted(tpaths))
    kernel_says = all(attrs.get(p, {}).get("numa_nodes", "absent") != "absent" for p in tpaths)
    for p in tpaths:
        a, mine = attrs.get(p, {}), paths.get(p) or {}
        ana = a.get("ana_state", "absent")
        ctx.equal(p, "ana_state", mine.get("ana_state"), None if ana == "absent" else ana)
        # under iopolicy numa the kernel prints no queue depth (0 bytes, or no file before 6.15)
        ctx.equal(p, "queue_depth", mine.get("queue_depth"), None)
        if kernel_says:
            kernel = nodes_of(a["numa_nodes"])
            ctx.expect(kernel == measured.get(p, []),
                       f"test bed: {p}: the kernel's numa_nodes {kernel} are not the nodes measured through it "
                       f"{measured.get(p, [])}")
            ctx.equal(p, "serves_nodes_source", mine.get("serves_nodes_source"), "kernel")
            ctx.equal(p, "serves_nodes", mine.get("serves_nodes"), kernel)
        else:
            ctx.equal(p, "serves_nodes_source", mine.get("serves_nodes_source"), "inferred")
            # the inference names every path tied for nearest: the measured one among them
            missing = [n for n in measured.get(p, []) if n not in (mine.get("serves_nodes") or [])]
            ctx.expect(not missing, f"{p}: serves nodes {missing} (measured), numastor's inferred "
                                    f"serves_nodes {mine.get('serves_nodes')} leave them out")
    # the root-bus controller has no node: the kernel takes its path as local to every node
    # (__nvme_find_path: NUMA_NO_NODE -> LOCAL_DISTANCE), so no path is remote, and two paths
    # on known, different nodes there are not
    ctx.expect(not ctx.findings("path-remote-while-local", head),
               f"{head}: path-remote-while-local raised, yet no path's controller is on a known remote node")
    ctx.expect(not ctx.findings("paths-on-different-nodes", head),
               f"{head}: paths-on-different-nodes raised for a head with one node-less path")
    check_queue_depth(ctx, head, tpaths)


def check_queue_depth(ctx, head, tpaths):
    text = ctx.read("qd.txt")
    if text is None:  # no path has the queue_depth file (before about 6.15), or a replay
        return
    _, attrs = parse_paths(text, head)
    doc = None
    try:
        import json
        doc = json.loads(ctx.read("check-qd.out") or "")
    except ValueError:
        pass
    if not ctx.expect(doc is not None, f"{head}: check --json under iopolicy queue-depth printed no JSON"):
        return
    dev = next((d for d in doc.get("devices", []) if d.get("name") == head), None)
    if not ctx.expect(dev is not None, f"{head}: not reported under iopolicy queue-depth"):
        return
    ctx.equal(head, "iopolicy (queue-depth round)", dev.get("iopolicy"), "queue-depth")
    paths = {p.get("disk"): p for p in dev.get("paths") or []}
    for p in tpaths:
        a, mine = attrs.get(p, {}), paths.get(p) or {}
        ctx.expect(a.get("queue_depth", "").isdigit(),
                   f"test bed: {p}: queue_depth under iopolicy queue-depth reads {a.get('queue_depth')!r}")
        if a.get("queue_depth", "").isdigit():
            ctx.equal(p, "queue_depth (queue-depth round)", mine.get("queue_depth"), int(a["queue_depth"]))
        ctx.equal(p, "serves_nodes_source (queue-depth round)", mine.get("serves_nodes_source"), "iopolicy")
    ctx.expect(not [f for f in doc.get("findings", []) if f.get("id") == "paths-on-different-nodes"],
               f"{head}: paths-on-different-nodes raised under queue-depth for a head with one node-less path")
