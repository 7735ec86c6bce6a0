"""irqbalance-policy: Debian's irqbalance 1.9 in the guest against numastor's placement
(irqaffinity=0, the pre-fix nvme driver forcing the root-bus NVMe to node 0).

irqbalance balances storage IRQs (PCI class 01) at the core level: it writes one CPU per
vector, confined to the device's numa_node when that is not -1. numastor's targets for the
vectors it can move here (the forced NVMe's admin vector, the megasas HBA's only vector) are
whole nodes (0-1, 2-3), so irqbalance's choice always differs from numastor's and a pass
without the policy shows it moving what numastor placed; for the forced NVMe it picks a
node-0 CPU (numa_node 0 from the driver): the seed-000 confinement.

It holds numastor to:
- `fix --dry-run --json` with irqbalance running: running true; without the policy script
  policy_installed false and advice naming --policyscript=PREFIX/libexec/numastor/irqbalance-policy;
  with it policy_installed true and no advice;
- `numastor irqbalance-policy DEVPATH IRQ` for every storage vector (by the /sys/devices
  path; the first two of each function also by the /sys/bus/pci/devices link irqbalance
  passes and through the installed wrapper): ban=true
  exactly for the IRQs numastor placed, numa_node=-1 exactly for the forced-node device's
  vectors, exit 0 when it printed something, 1 when not;
- irqbalance --oneshot without the policy moves at least one vector numastor placed (so the
  comparison can fail), and confines the forced NVMe's placed vector to node 0;
- after --revert and a new fix, irqbalance --oneshot with --policyscript=<the wrapper>
  overrides ban=true for every placed IRQ and numa_node=-1 for the forced device's other
  vectors, balances other storage IRQs, and every placed vector keeps numastor's mask.
"""

import re

from compare import cpuset
import fixlib

POLICY = "/usr/libexec/numastor/irqbalance-policy"


def tree(log):
    """irqbalance --debug's last placement tree: {irq: (cpu or None, node_num)}."""
    out, cpu = {}, None
    last = log.rfind("-----------------------------------------------------------------------------")
    for line in log[last:].splitlines():
        m = re.match(r"\s*CPU number (\d+)", line)
        if m:
            cpu = int(m.group(1))
            continue
        if re.match(r"\s*(Package|Cache domain)", line):
            cpu = None
        m = re.match(r"\s*Interrupt (\d+) node_num is (-?\d+) \((\w[\w-]*)/", line)
        if m:
            out[int(m.group(1))] = (cpu, int(m.group(2)), m.group(3))
    return out


def check(ctx):
    before = fixlib.truth(ctx, "before.txt")
    # The NVMe disks on the root bus (no node from firmware) that read numa_node 0: the root-bus
    # NVMe and the root-bus path (hidden disk) of the NVMe subsystem, each its own function.
    forced = sorted(d for d in before.disks if before.kind(d) == "nvme" and before.on_root_bus_zero(d)
                    and before.disks[d]["numa_node"] == "0")
    if not ctx.expect(len(forced) == 2 and len(set(before.path_disks()) & set(forced)) == 1,
                      f"test bed: the pre-fix nvme did not force the root-bus NVMe and the subsystem's root-bus "
                      f"path to node 0 ({forced})"):
        return
    forced_irqs = {n for d in forced for n in before.irqs.get(d, {})}
    node0 = cpuset(before.nodes[0]["cpus"])

    # fix sees irqbalance, with and without the policy.
    adv = fixlib.json_out(ctx, "advice")
    if adv is not None:
        ib = adv["irqbalance"]
        ctx.equal("fix --dry-run with irqbalance running", "irqbalance.running", ib["running"], True)
        ctx.equal("fix --dry-run with irqbalance running", "irqbalance.policy_installed", ib["policy_installed"], False)
        # the policy script where this numastor was configured to install it (its prefix's
        # libexec: /usr/local in the test build, /usr in the package), not a fixed path
        ctx.expect(ib["advice"] and re.search(r"--policyscript=/\S*/libexec/numastor/irqbalance-policy ", ib["advice"]),
                   "fix --dry-run with irqbalance running: advice does not say how to install the policy: "
                   f"{ib['advice']!r}")
    adv = fixlib.json_out(ctx, "advice-policy")
    if adv is not None:
        ib = adv["irqbalance"]
        subject = "fix --dry-run with irqbalance running its policy"
        ctx.equal(subject, "irqbalance.running", ib["running"], True)
        ctx.equal(subject, "irqbalance.policy_installed", ib["policy_installed"], True)
        ctx.equal(subject, "irqbalance.advice", ib["advice"], None)

    # The first placement and the policy's answers about every vector.
    fix1 = fixlib.json_out(ctx, "fix1")
    if fix1 is None:
        return
    placed1 = {e["irq"]: e["target"] for e in fixlib.moves(fix1)}
    if not ctx.expect(placed1, "test bed: numastor fix moved nothing"):
        return
    j1 = fixlib.journal(ctx, "journal-1.json") or {}
    ctx.equal("fix1", "journal irqs", sorted(e["irq"] for e in j1.get("irqs", [])), sorted(placed1))
    ctx.expect(any(n in forced_irqs for n in placed1),
               f"test bed: numastor placed no vector of the forced-node {forced}")
    asked = forms = 0
    for disk, nums in sorted(before.irqs.items()):
        for n in sorted(nums):
            want = (["ban=true"] if n in placed1 else []) + (["numa_node=-1"] if disk in forced else [])
            subject = f"irqbalance-policy {disk} ({before.disks[disk]['pci']}) irq {n} ({nums[n]['actions']})"
            out = ctx.read(f"policy-{disk}-{n}.out")
            if not ctx.expect(out is not None, f"{subject}: not asked"):
                continue
            asked += 1
            ctx.equal(subject, "output", out.split(), want)
            ctx.equal(subject, "exit code", fixlib.rc(ctx, f"policy-{disk}-{n}"), 0)
            # the first two vectors of each function were also asked these two ways
            for how, name in (("by /sys/bus/pci/devices", "link"), (f"through {POLICY}", "wrapper")):
                other = ctx.read(f"policy-{disk}-{n}-{name}.out")
                if other is not None:
                    forms += 1
                    ctx.equal(f"{subject} {how}", "output", other.split(), want)
    ctx.expect(asked and forms, "test bed: the policy was asked about no vector (or only one way)")

    # irqbalance without the policy moves what numastor placed.
    plain, after_plain = ctx.read("ib-plain.log") or "", fixlib.irqs(ctx, "irqs-2.txt")
    ctx.expect(tree(plain), "test bed: irqbalance --oneshot --debug (no policy) printed no placement")
    moved = {n: after_plain.get(n, {}).get("affinity") for n, t in placed1.items()
             if not fixlib.same_cpus(after_plain.get(n, {}).get("affinity"), t)}
    ctx.expect(moved, "irqbalance without the policy moved none of the vectors numastor placed "
               f"({placed1}): the policy comparison below proves nothing")
    for n, t in placed1.items():
        if n in forced_irqs:
            got = cpuset(after_plain.get(n, {}).get("affinity"))
            ctx.expect(got and got <= node0, f"test bed: irqbalance without the policy put the forced {forced}'s "
                       f"irq {n} on {after_plain.get(n, {}).get('affinity')}, not within node 0 (its forced node)")

    # irqbalance with numastor's policy keeps them.
    fix2 = fixlib.json_out(ctx, "fix2")
    if fix2 is None:
        return
    placed2 = {e["irq"]: e["target"] for e in fixlib.moves(fix2)}
    ctx.equal("fix2 (after revert)", "moved IRQs", sorted(placed2), sorted(placed1))
    log, after_policy = ctx.read("ib-policy.log") or "", fixlib.irqs(ctx, "irqs-5.txt")
    placement = tree(log)
    ctx.expect(any(kind == "storage" for _, _, kind in placement.values()),
               "test bed: irqbalance with the policy balanced no storage IRQ")
    for n, t in sorted(placed2.items()):
        subject = f"irqbalance with the policy: irq {n}"
        ctx.expect(f"IRQ {n}: Override ban to true" in log, f"{subject}: irqbalance did not take ban=true")
        ctx.expect(n not in placement, f"{subject}: irqbalance placed it anyway ({placement.get(n)})")
        fixlib.kernel_equal(ctx, subject, "smp_affinity_list", after_policy.get(n, {}).get("affinity"), t)
    for n in sorted(forced_irqs):
        if n not in placed2:
            ctx.expect(f"IRQ {n}: Override numa_node to -1" in log,
                       f"irqbalance with the policy: irq {n} of the forced {forced}: numa_node=-1 not taken")
    ctx.equal("revert after the policy run", "exit code", fixlib.rc(ctx, "revert2"), 0)
