"""isolation-boot: booted with isolcpus=managed_irq,domain,2-3 nohz_full=2-3 (node 1's CPUs
isolated) and a one-queue virtio-blk disk (its managed vector's mask has every CPU). Ground truth
is what the guest read from the kernel (isolib.py says how); numastor is held to it:

- `machine.isolation` equals /proc/cmdline and the kernel's cpu/isolated, cpu/nohz_full and the
  cgroup files: before cgroup2 is mounted `cgroup_isolated_cpus` "" with `cgroup_basis`
  no-cgroup2 (nothing to read: inferred), after it "" (no partition; 6.12's root
  cpuset.cpus.isolated reads 2-3 all the same: the boot-time isolcpus= CPUs), `cgroup_basis`
  cpuset.cpus.isolated where the kernel has that file, else partitions (6.1);
- every vector whose kernel effective affinity includes an isolated CPU is named in its device's
  isolation finding (movable: isolated-movable-irq; managed: isolated-managed-irq, or, when its
  queue's online CPUs are all isolated, the queue in isolated-queue), no vector off them is, and
  isolated-queue names exactly the queues whose online CPUs are all isolated; the same again in
  a check after the fix;
- fix --dry-run changes nothing and plans what fix does; no target, nor any vector the kernel
  shows moved, includes an isolated CPU; every movable vector on an isolated CPU is moved, and
  once it fired the kernel delivers it inside its target; a row's `isolated_left_out` names
  isolated CPUs outside its target, for a move at least the isolated CPUs of its function's node
  (local_cpulist) that its queue serves (blk-mq's software contexts: the megasas queue serves
  0-3 although cpu_list reads 0-1);
- fix --revert restores every IRQ's smp_affinity_list.

The test bed's own checks: the kernel took the command line (cpu/isolated and cpu/nohz_full are
its lists), a movable vector sits on an isolated CPU (the node-1 HBA's), queues serve isolated
CPUs alone (the per-CPU queues of CPUs 2 and 3), and the one-queue disk's managed vector, whose
queue serves every CPU, is kept off the isolated CPUs (managed_irq, measured).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import isolib  # noqa: E402
from compare import cpulist, cpuset  # noqa: E402


def check(ctx):
    iso, _before, seen, moves, fired, _dry = isolib.run(ctx)

    # the kernel took the command line
    cpus, flags = isolib.isolcpus_parts(iso.params.get("isolcpus") or "")
    ctx.expect("domain" in flags and "managed_irq" in flags and iso.cpu_isolated == cpuset(cpus),
               f"test bed: isolcpus={iso.params.get('isolcpus')} but cpu/isolated reads "
               f"{cpulist(iso.cpu_isolated)!r}")
    ctx.expect(iso.nohz_full == cpuset(iso.params.get("nohz_full") or ""),
               f"test bed: nohz_full={iso.params.get('nohz_full')} but cpu/nohz_full reads {cpulist(iso.nohz_full)!r}")
    # no partition was made (6.12's root cpuset.cpus.isolated lists the boot-time isolcpus= CPUs
    # all the same: measured 2-3 on 6.12.95)
    parts = sorted(k for k in iso.facts if k.startswith("cgroup.partition."))
    ctx.expect(not parts, f"test bed: cgroup partitions {parts} on a machine that made none")
    # before cgroup2 was mounted
    nocg = isolib.Isolation(ctx, "isolation-nocgroup.txt")
    ctx.expect(not nocg.cgroup_mounted, "test bed: cgroup2 was mounted before the guest mounted it")
    isolib.check_machine(ctx, isolib.fixlib.check_json(ctx, "nocgroup"), nocg, "check before cgroup2 was mounted")

    ctx.expect(seen["movable-on-isolated"], "test bed: no user-movable storage vector on an isolated CPU")
    ctx.expect(seen["managed-queue-isolated"], "test bed: no managed vector whose queue serves isolated CPUs alone")
    ctx.expect(seen["managed-mixed-housekeeping"] and not seen["managed-mixed-on-isolated"],
               f"test bed: managed vectors whose queue serves housekeeping and isolated CPUs: "
               f"{seen['managed-mixed-housekeeping']} kept off the isolated CPUs, {seen['managed-mixed-on-isolated']} on "
               f"them (isolcpus=managed_irq should keep every one off)")
    ctx.expect(moves, "test bed: fix planned no move")
    ctx.expect(fired, "test bed: no moved vector fired after the fix")
