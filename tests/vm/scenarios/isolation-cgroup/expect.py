"""isolation-cgroup: the stock command line with irqaffinity=0 (every unmanaged vector on CPU 0)
and a two-queue virtio-blk disk; at run time CPU 2 went offline and back (the managed vectors
whose mask is 2-3 moved to CPU 3 and stayed) and a child cgroup became an isolated cpuset
partition of CPU 3. Ground truth is what the guest read from the kernel (isolib.py says how):
the partition as the kernel reads it back and its cpuset.cpus.effective (the root's
cpuset.cpus.isolated, 6.7 on, held to it). numastor is held to it:

- `machine.isolation`: `cgroup_isolated_cpus` the kernel's, within `isolated_cpus`;
  `housekeeping_cpus` the online CPUs without them; no isolcpus/nohz_full, irqaffinity 0;
- the isolation findings, as in isolation-boot: here the per-CPU queues of CPU 3 (isolated-queue)
  and the two-queue disk's queue-1 vector on CPU 3 while its queue also serves housekeeping
  CPU 2 (isolated-managed-irq);
- fix --dry-run's allowed_cpus and every row's target leave the cgroup-isolated CPUs out; the
  node-1 vectors irqaffinity=0 left on CPU 0 move onto node 1's CPUs without CPU 3
  (local_cpulist less the isolated CPUs), their rows saying isolated_left_out; the kernel shows
  only the planned moves, none onto CPU 3, and once fired each is delivered inside its target;
- fix --revert restores every IRQ's smp_affinity_list.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "isolation-boot"))
import isolib  # noqa: E402
from compare import cpulist, cpuset  # noqa: E402


def check(ctx):
    f = isolib.facts(ctx, "facts.txt")
    part = f.get("cgroup.nsiso.partition")
    if not ctx.expect(part == "isolated",
                      f"test bed: the kernel did not make the cgroup an isolated partition of CPU 3: "
                      f"cpuset.cpus.partition reads {part!r} (write: {f.get('cgroup.nsiso.partition_write')!r})"):
        return
    iso, before, seen, moves, fired, dry = isolib.run(ctx)
    ctx.expect(iso.cgroup, f"test bed: the kernel shows no cgroup-isolated CPU ({iso.cgroup_basis})")
    ctx.expect(not iso.cpu_isolated and not iso.nohz_full,
               f"test bed: cpu/isolated={cpulist(iso.cpu_isolated)!r} cpu/nohz_full={cpulist(iso.nohz_full)!r} "
               f"on a stock command line")
    ctx.expect(seen["managed-queue-isolated"], "test bed: no managed vector whose queue serves isolated CPUs alone")
    ctx.expect(seen["managed-mixed-on-isolated"],
               "test bed: no managed vector on an isolated CPU whose queue also serves a housekeeping CPU "
               "(the two-queue virtio-blk disk's queue 1 after CPU 2 went offline and back)")

    # the node-1 vectors move onto node 1's housekeeping CPUs
    node1 = []
    for e in (dry or {}).get("irqs", []):
        fn = isolib.pci_truth(before, e.get("pci"))
        if not fn or int(fn["numa_node"]) < 0 or e["action"] != "move":
            continue
        local = cpuset(fn["local_cpulist"])
        if not local & iso.isolated:
            continue
        node1.append(e["irq"])
        target = cpuset(e.get("target"))
        ctx.expect(target and target <= local - iso.isolated,
                   f"dryrun: irq {e['irq']} ({e.get('name')}, {e.get('device')}): target {e.get('target')!r} is not "
                   f"within its node's CPUs {fn['local_cpulist']} less the isolated {cpulist(iso.isolated)}")
    ctx.expect(node1, "test bed: fix planned no move of a vector whose node has a cgroup-isolated CPU")
    ctx.expect(moves, "test bed: fix planned no move")
    ctx.expect(fired, "test bed: no moved vector fired after the fix")
