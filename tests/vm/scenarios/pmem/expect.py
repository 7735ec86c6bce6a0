"""pmem: qemu's nvdimm on node 1, seen through libnvdimm.

The machine has nvdimm=on and a 256 MiB file-backed NVDIMM with node=1 (the scenario's
machine and qemu-args files); the guest loads nfit and nd_pmem. It holds:

- the test bed, from the guest's sysfs readings: pmem0 sits on a namespace (raw mode,
  driver nd_pmem) inside an nd region whose numa_node and target_node read 1, the namespace's
  numa_node reads 1, and a sector written to pmem0 reads back;
- numastor (issue 17's contract): pmem0 on node 1 with node_source "nd-region" and
  node_device the region's sysfs path.
"""

import modswaplib as ms

EXIT_CODES = {0, 1, 2}


rel = ms.devices_rel


def check(ctx):
    f = lambda key, default=None: ms.fact(ctx, key, default)  # noqa: E731
    region = f("pmem.region")
    if not ctx.expect(region, "test bed: no pmem region recorded (fact pmem.region)"):
        return
    ctx.expect("/ndbus" in (f("pmem.syspath") or "") and "/block/pmem0" in (f("pmem.syspath") or ""),
               f"test bed: pmem0's device path {f('pmem.syspath')!r} is not under an nd bus")
    ctx.expect(f("pmem.region.subsystem") == "nd", f"test bed: {region}: subsystem {f('pmem.region.subsystem')!r}, not nd")
    ctx.expect(f("pmem.driver") == "nd_pmem", f"test bed: pmem0's namespace driver {f('pmem.driver')!r}")
    for key in ("pmem.region.numa_node", "pmem.region.target_node", "pmem.namespace.numa_node"):
        ctx.expect(f(key) == "1", f"test bed: {key} reads {f(key)!r}, not 1 (the nvdimm's node=1)")
    ctx.expect(f("pmem.readback") == "numastor-pmem", f"test bed: pmem0 read back {f('pmem.readback')!r}")
    ctx.expect("pmem0" in ctx.truth.disks, "test bed: no pmem0 in the ground truth")

    dev = ctx.device("pmem0")
    if not ctx.expect(dev is not None, "pmem0: numastor does not report it"):
        return
    ctx.equal("pmem0", "node", dev.get("node"), int(f("pmem.region.numa_node")))
    ctx.equal("pmem0", "node_source", dev.get("node_source"), "nd-region")
    ctx.equal("pmem0", "node_device", rel(dev.get("node_device")), rel(region))
    ctx.equal("pmem0", "node_reason", dev.get("node_reason"), None)
