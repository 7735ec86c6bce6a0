"""md-cross-node: md RAID1 arrays built with Debian's mdadm in the guest.

- md0 over the node-1 NVMe (NSPXB0001, behind the node-1 expander) and a node-0 NVMe
  (NSNODE0001, behind a node-0 expander this scenario adds: the bed's root-bus NVMe reads
  numa_node -1, no node);
- md1, the twin, over the megasas disk and a second node-1 NVMe (NSPXB0002): one node.

It holds:

- the test bed, from the guest's sysfs: both arrays raid1 with the two members each that
  were given to mdadm (md/slaves), each member's PCI function's numa_node (md0: 0 and 1;
  md1: 1 and 1), and a block written through md0 read back;
- numastor (issue 17's contract): md0 kind md, its slaves, member_nodes [0, 1] (the
  members' nodes as the guest read them), member_nodes_complete true, node null with
  node_source "members-disagree", and one finding stacked-cross-node (warning) on md0 whose
  evidence names each member with its node; md1 member_nodes [1], complete, node 1 with
  node_source "members", and no stacked-cross-node finding.
"""

import modswaplib as ms

EXIT_CODES = {0, 1, 2}


def members(ctx, md):
    """{member: numa_node int} as the guest read them."""
    out = {}
    for m in (ms.fact(ctx, f"{md}.members") or "").split():
        numa = ms.fact(ctx, f"{md}.member.{m}.numa_node")
        out[m] = int(numa) if numa not in (None, "") else None
    return out


def check(ctx):
    f = lambda key, default=None: ms.fact(ctx, key, default)  # noqa: E731
    given = {"md0": {f("disk.nvme-pxb"), f("disk.nvme-node0")}, "md1": {f("disk.mega"), f("disk.nvme-pxb2")}}
    want_nodes = {"md0": [0, 1], "md1": [1]}
    for md in ("md0", "md1"):
        m = members(ctx, md)
        ctx.expect(f(f"{md}.level") == "raid1", f"test bed: {md}: level {f(f'{md}.level')!r}")
        ctx.expect(set(m) == given[md], f"test bed: {md}: slaves {sorted(m)}, mdadm was given {sorted(given[md])}")
        ctx.expect(sorted(set(m.values())) == want_nodes[md],
                   f"test bed: {md}: the members' functions read numa_node {m}, expected nodes {want_nodes[md]}")
        ctx.expect(ctx.truth.kind(md) == "md" if md in ctx.truth.disks else False,
                   f"test bed: {md} is not in the ground truth as an md array")
    ctx.expect(f("md0.readback") == "numastor-md", f"test bed: md0 read back {f('md0.readback')!r}")

    for md in ("md0", "md1"):
        dev = ctx.device(md)
        if not ctx.expect(dev is not None, f"{md}: numastor does not report it"):
            continue
        m = members(ctx, md)
        nodes = sorted({n for n in m.values() if n is not None and n >= 0})
        ctx.equal(md, "slaves", sorted(dev.get("slaves") or []), sorted(m))
        ctx.equal(md, "member_nodes", dev.get("member_nodes"), nodes)
        ctx.equal(md, "member_nodes_complete", dev.get("member_nodes_complete"), True)
        cross = ctx.findings("stacked-cross-node", md)
        if len(nodes) > 1:
            ctx.equal(md, "node", dev.get("node"), None)
            ctx.equal(md, "node_source", dev.get("node_source"), "members-disagree")
            if ctx.expect(len(cross) == 1, f"{md}: {len(cross)} stacked-cross-node findings, expected one "
                                           f"(members on nodes {nodes})"):
                fd = cross[0]
                ctx.equal(md, "stacked-cross-node severity", fd.get("severity"), "warning")
                ev = fd.get("evidence") or {}
                ctx.equal(md, "stacked-cross-node evidence.nodes", ev.get("nodes"), nodes)
                got = sorted((e.get("name"), e.get("node")) for e in ev.get("members") or [])
                ctx.equal(md, "stacked-cross-node evidence.members", got, sorted(m.items()))
        else:
            ctx.equal(md, "node", dev.get("node"), nodes[0] if nodes else None)
            ctx.equal(md, "node_source", dev.get("node_source"), "members")
            ctx.expect(not cross, f"{md}: stacked-cross-node raised, but its members are all on node(s) {nodes}")
    # no other array or disk gets it
    for fd in ctx.findings("stacked-cross-node"):
        ctx.expect(fd.get("device") == "md0", f"stacked-cross-node raised on {fd.get('device')!r}")
