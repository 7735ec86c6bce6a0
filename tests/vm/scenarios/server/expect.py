"""server: a server-shaped machine (machine: 2 sockets x 6 cores x 2 SMT threads, 16 CPUs present
of 24 possible, two nodes with CPUs and memory, Debian's stock command line), one boot; the
guest takes node 1's second core (CPUs 14-15) offline first.

The machine as the kernel shows it (topology.txt, truth.txt) must be the one asked for: at
least 16 present CPUs, the online ones the present less those taken offline, more possible
than present where the kernel counts qemu's not-present CPUs (6.1; 6.12 under TCG does not:
there possible = present), CPUs and memory on both nodes, every online CPU with one SMT sibling
on its own node, and on every NVMe hardware queues that serve offline CPUs alone and (6.1)
not-present CPUs alone (nvme makes one queue per possible CPU): otherwise the scenario shows
nothing.

Stock checks: compare.py holds `check --json` to ground truth for every disk, path, PCI
function, IRQ and hardware queue (a queue's nodes are those of its online CPUs, none for a
queue of offline or not-present CPUs alone; online_cpus its CPUs that the kernel lists
online), and the
stock scenario's own expectations hold here too (its findings and exit code, the two NVMe's
nodes, the multipath head's paths, the measured pairing: at least 16 queue/CPU pairs; here
from CPUs 0, 1, 11, 12 and 13, the other queues by the kernel's naming).

Fix (not in a capture's replay): the guest put the node-1 HBA's one unmanaged vector on CPU 0
(node 0) by hand. Then:
- `fix --dry-run --json` plans to move that vector, changes no IRQ of the machine, and every
  move it plans targets online CPUs of the device's own node only (never a possible CPU that is
  not there, never the other node);
- `fix --json` makes the same moves; each reads back at its target in the kernel, result.status
  applied, or applied-effective-differs exactly when the kernel's effective CPU is outside the
  target; no other IRQ of the machine moved (managed vectors of planned devices listed as
  skipped); exit 1 exactly when an entry failed; the journal holds the previous values;
  `check --json` marks exactly the moved IRQs placed_by_numastor; once a moved vector fired the
  kernel delivers it inside the target;
- `fix --revert --json` restores every IRQ's exact smp_affinity_list (the misplaced vector back
  on CPU 0), reports each restored, and removes the journal.
Ground truth for fix: the guest's full vm_truth once before it (disks, functions,
managed-ness), and every IRQ of the machine with its counts (vm_irqs_counts) before, after the
dry run, after the fix, after every disk was read, and after the revert.
"""

import importlib.util
import os

from compare import cpulist, cpuset
import fixlib

HERE = os.path.dirname(os.path.abspath(__file__))


def _stock():
    spec = importlib.util.spec_from_file_location("expect_stock_for_server",
                                                  os.path.join(os.path.dirname(HERE), "stock", "expect.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(ctx):
    check_machine(ctx)
    _stock().check(ctx, with_trace=False)  # trace is held to the kernel's counts in stock's boot
    check_queues(ctx)
    if ctx.read("replayed") is None:  # the guest's own run, not tests/check-captures.py's replay
        check_fix(ctx)


def topology(ctx):
    """topology.txt: {"online"|"possible"|"present"|"offlined": set}, {cpu: (package core, siblings)}."""
    sets, cpus = {}, {}
    for line in (ctx.read("topology.txt") or "").splitlines():
        rec = line.split("\t")
        if rec[0] == "cpus" and len(rec) == 3:
            sets[rec[1]] = cpuset(rec[2])
        elif rec[0] == "offlined" and len(rec) == 2:
            sets["offlined"] = {int(x) for x in rec[1].split()}
        elif rec[0] == "cpu" and len(rec) == 4:
            cpus[int(rec[1])] = (rec[2], cpuset(rec[3]))
    return sets, cpus


def kernel_version(ctx):
    rel = ctx.truth.machine.get("kernel_release", "")
    return tuple(int(x) for x in rel.split("-")[0].split("+")[0].split(".")[:2])


def check_machine(ctx):
    t = ctx.truth
    online, possible = cpuset(t.machine["online_cpus"]), cpuset(t.machine["possible_cpus"])
    ctx.expect(possible > online, f"test bed: possible CPUs {cpulist(possible)} are not more than the online "
               f"{cpulist(online)}")
    ctx.expect(sorted(t.nodes) == [0, 1], f"test bed: nodes {sorted(t.nodes)}, not 0 and 1")
    for node, attrs in sorted(t.nodes.items()):
        ctx.expect(cpuset(attrs["cpus"]) and int(attrs.get("memory_kb", 0)) > 0,
                   f"test bed: node {node} has CPUs {attrs['cpus']!r} and {attrs.get('memory_kb')} kB")
    sets, cpus = topology(ctx)
    if not sets:
        ctx.expect(ctx.read("replayed") is not None, "test bed: the guest wrote no topology.txt")
        return
    present, offlined = sets.get("present", set()), sets.get("offlined", set())
    ctx.expect(len(present) >= 16, f"test bed: {len(present)} CPUs present ({cpulist(present)}), not 16 or more")
    ctx.expect(offlined and offlined <= present, f"test bed: the CPUs taken offline {cpulist(offlined)} are not "
               f"present ones ({cpulist(present)})")
    ctx.equal("test bed", "online CPUs", cpulist(online), cpulist(present - offlined))
    # qemu lists the not-present CPUs in its MADT as disabled; 6.1 counts them as hotplug CPUs,
    # 6.9's topology code only under a hypervisor it knows (not TCG) or with ACPI's online-capable
    # flag (not qemu 7.2's MADT): measured "Allowing 16 present CPUs plus 0 hotplug CPUs" on 6.12
    if kernel_version(ctx) < (6, 9):
        ctx.expect(possible > present, f"test bed: possible CPUs {cpulist(possible)} are not more than the "
                   f"present {cpulist(present)}")
    else:
        ctx.equal("test bed", "possible CPUs (6.9 on, under TCG)", cpulist(possible), cpulist(present))
    ctx.equal("test bed", "CPUs with a topology directory (the online ones)", cpulist(cpus), cpulist(online))
    for cpu, (core, siblings) in sorted(cpus.items()):
        ok = len(siblings) == 2 and cpu in siblings and t.node_of_cpu(min(siblings)) == t.node_of_cpu(max(siblings))
        ctx.expect(ok, f"test bed: cpu{cpu} (package/core {core}): thread_siblings_list {cpulist(siblings)}, "
                   "not two SMT threads of one node")


def check_queues(ctx):
    """nvme makes a queue per possible CPU: some serve only CPUs that are not online (taken
    offline; on 6.1 also not present). The comparison holds their nodes (none) and online_cpus
    (empty) to ground truth; here that such queues exist, of each kind the kernel has."""
    online = cpuset(ctx.truth.machine["online_cpus"])
    sets, _ = topology(ctx)
    kinds = {"offline": sets.get("offlined", set())}
    if sets.get("present") is not None:
        kinds["not present"] = cpuset(ctx.truth.machine["possible_cpus"]) - sets["present"]
    for disk, hctx in sorted(ctx.truth.hctx.items()):
        if not disk.startswith("nvme"):
            continue
        for kind, group in kinds.items():
            if not group:
                continue
            ctx.expect(any(cpuset(h["cpu_list"]) and cpuset(h["cpu_list"]) <= group for h in hctx.values()),
                       f"test bed: {disk}: no hardware queue serves {kind} CPUs ({cpulist(group)}) alone")
    for dev in ctx.doc.get("devices", []):
        for h in dev.get("hw_queues", []):
            if h.get("cpus") is not None and not cpuset(h["cpus"]) & online:
                ctx.equal(f"{dev['name']}: hw_queue {h.get('index')} (cpus {h['cpus']}, none online)",
                          "nodes", h.get("nodes"), [])


def facts(ctx, key):
    return [line.split("\t", 1)[1] for line in (ctx.read("facts.txt") or "").splitlines()
            if line.split("\t", 1)[0] == key]


def irq_readings(ctx, name):
    """A vm_irqs_counts reading: {irq: {"actions", "affinity", "effective", "count"}}, count the
    sum of its per_cpu_count."""
    out = {}
    for line in (ctx.read(name) or "").splitlines():
        rec = line.split("\t")
        if len(rec) == 5:
            out[int(rec[0])] = {"actions": rec[1], "affinity": rec[2], "effective": rec[3],
                                "count": sum(int(x) for x in rec[4].split(",") if x)}
    if not out:
        ctx.fail(f"test bed: no IRQ reading {name}")
    return out


def check_fix(ctx):
    before = fixlib.truth(ctx, "before.txt")
    b = fixlib.storage_irqs(before)
    i_before, i_plan, i_fix, i_io, i_revert = (irq_readings(ctx, f"irqs-{step}.txt")
                                               for step in ("before", "plan", "fix", "io", "revert"))
    misplaced = sorted(int(x) for x in facts(ctx, "misplaced"))
    if not ctx.expect(misplaced, "test bed: the guest put no vector of the node-1 HBA on CPU 0"):
        return
    for num in misplaced:
        ctx.expect(num in b and b[num][1]["smp_affinity_list"] == "0" and b[num][1]["managed"] == "0",
                   f"test bed: irq {num}: not an unmanaged storage vector on CPU 0 before the fix")
    for num, (disk, t) in sorted(b.items()):
        ctx.expect(num in i_before and i_before[num]["affinity"] == t["smp_affinity_list"],
                   f"test bed: {disk}: irq {num}: the two readings before the fix disagree")

    # The dry run: the misplaced vectors planned, nothing changed, every target on the device's node.
    plan = fixlib.json_out(ctx, "plan")
    doc = fixlib.json_out(ctx, "fix")
    if plan is None or doc is None:
        return
    ctx.expect(plan["dry_run"] is True, "plan: dry_run is false for --dry-run")
    ctx.equal("plan", "exit code", fixlib.rc(ctx, "plan"), 0)
    planned = {e["irq"]: e for e in fixlib.moves(plan)}
    for num in misplaced:
        ctx.expect(num in planned, f"plan: irq {num} ({b[num][1]['actions']}), node-1 HBA's vector on CPU 0 "
                   f"(node 0): not planned to move; plan: {sorted(planned)}")
    for num, i in sorted(i_before.items()):
        fixlib.kernel_equal(ctx, f"irq {num} ({i['actions']})", "smp_affinity_list after --dry-run",
                            i_plan.get(num, {}).get("affinity"), i["affinity"])
    online = cpuset(before.machine["online_cpus"])
    for num, e in sorted(planned.items()):
        subject = f"plan: irq {num} ({e['name']})"
        if not ctx.expect(num in b, f"{subject}: not a storage IRQ of ground truth"):
            continue
        # the function's node (a multipath path disk's own, not its head's)
        pci_disk = next(d for d, nums in before.irqs.items() if num in nums)
        numa = int(before.disks[pci_disk].get("numa_node", "-1"))
        target = cpuset(e["target"])
        node_cpus = cpuset(before.nodes.get(numa, {}).get("cpus", ""))
        ctx.expect(numa >= 0 and target and target <= node_cpus,
                   f"{subject}: target {e['target']!r} is not within the online CPUs of the device's node "
                   f"{numa} ({cpulist(node_cpus)})")
        ctx.expect(target <= online, f"{subject}: target {e['target']!r} names CPUs not online "
                   f"({cpulist(target - online)}; online {cpulist(online)})")

    # The fix: the same moves, applied.
    ctx.expect(doc["dry_run"] is False, "fix: dry_run is true on an applying run")
    plan_by_irq = {e["irq"]: e for e in doc["irqs"]}
    moved = {e["irq"]: e for e in fixlib.moves(doc)}
    ctx.equal("fix", "moves (irq, target)", sorted((n, e["target"]) for n, e in moved.items()),
              sorted((n, e["target"]) for n, e in planned.items()))
    failed = 0
    for num, e in sorted(plan_by_irq.items()):
        subject = f"fix: irq {num} ({e['name']})"
        if not ctx.expect(num in b and num in i_fix, f"{subject}: not a storage IRQ of ground truth"):
            continue
        disk, t = b[num]
        ctx.equal(subject, "device", e["device"], disk)
        ctx.equal(subject, "current", e["current"], t["smp_affinity_list"], fixlib.same_cpus)
        ctx.equal(subject, "managed", e["managed"], t["managed"] == "1")
        res = e["result"] or {}
        if e["action"] == "move":
            now = i_fix[num]
            ctx.equal(subject, "target (kernel after the fix)", e["target"], now["affinity"], fixlib.same_cpus)
            ctx.equal(subject, "result.affinity", res.get("affinity"), now["affinity"], fixlib.same_cpus)
            outside = not cpuset(now["effective"]) <= cpuset(e["target"])
            ctx.equal(subject, "result.status", res.get("status"),
                      "applied-effective-differs" if outside else "applied")
            # what numastor read back, unless the deferred move completed in between
            if not fixlib.same_cpus(res.get("effective_affinity"), now["effective"]):
                ctx.expect(not outside, f"{subject}: result.effective_affinity={res.get('effective_affinity')} "
                           f"ground-truth={now['effective']}")
        elif e["action"] == "skip":
            ctx.equal(subject, "result.status", res.get("status"), "skipped")
        failed += res.get("status") == "failed"
    ctx.equal("fix", "summary.failed", doc["summary"]["failed"], failed)
    ctx.equal("fix", "exit code", fixlib.rc(ctx, "fix"), 1 if failed else 0)

    # Nothing but the moves changed, in the whole machine; managed vectors of planned devices
    # are in the plan as skipped.
    for num, i in sorted(i_before.items()):
        if num not in moved:
            fixlib.kernel_equal(ctx, f"irq {num} ({i['actions']})", "smp_affinity_list after the fix (not moved)",
                                i_fix.get(num, {}).get("affinity"), i["affinity"])
    planned_disks = {e["device"] for e in doc["irqs"]}
    for num, (disk, t) in sorted(b.items()):
        if t["managed"] == "1" and disk in planned_disks:
            e = plan_by_irq.get(num)
            if ctx.expect(e is not None, f"fix: {disk}: irq {num}: managed vector of a planned device missing "
                          "from the plan"):
                ctx.equal(f"fix: irq {num}", "action", e["action"], "skip")

    # Once a moved vector fired, the kernel delivers it inside the target.
    fired = 0
    for num, e in sorted(moved.items()):
        if num in i_io and i_io[num]["count"] > i_fix[num]["count"]:
            fired += 1
            ctx.expect(cpuset(i_io[num]["effective"]) <= cpuset(e["target"]),
                       f"irq {num} ({e['name']}): fired after the fix but the kernel delivers on CPU "
                       f"{i_io[num]['effective']}, outside the target {e['target']}")
    ctx.expect(fired, "test bed: no moved vector fired during the reads from every disk")

    fixlib.check_journal(ctx, "fix", fixlib.journal(ctx, "journal-fix.json"),
                         {n: (b[n][1]["smp_affinity_list"], e["target"]) for n, e in moved.items()})
    fixlib.check_placed(ctx, "placed", moved)

    # Revert: every IRQ of the machine back to its exact previous smp_affinity_list.
    fixlib.check_revert_doc(ctx, len(moved))
    for num, i in sorted(i_before.items()):
        fixlib.kernel_equal(ctx, f"irq {num} ({i['actions']})", "smp_affinity_list after revert",
                            i_revert.get(num, {}).get("affinity"), i["affinity"])
    ctx.expect(ctx.read("journal-revert.json") is None, "revert: /run/numastor/journal.json still there")
