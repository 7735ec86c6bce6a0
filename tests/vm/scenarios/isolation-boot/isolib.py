"""What the CPU-isolation scenarios (isolation-boot, isolation-cgroup) hold numastor to, against
what their guest read from the kernel (guest/lib.sh: vm_isolation_truth, vm_hctx_cpus,
vm_measure_pairing, vm_truth, vm_irqs). isolation-cgroup's expect.py imports it from here.

Ground truth, never numastor's rules:
- the isolated CPUs are the union of what the kernel lists: cpu/isolated, cpu/nohz_full, the
  isolcpus= and nohz_full= lists of /proc/cmdline, and the CPUs of the cgroup's isolated
  partitions: the cpuset.cpus.effective of every cgroup whose cpuset.cpus.partition reads
  "isolated", walked on every kernel (the root's cpuset.cpus.isolated, 6.7 on, is held to them:
  it may list the boot-time isolcpus= CPUs besides, as 6.12.95 does); with no cgroup2 mounted
  the kernel shows none: "", inferred, as numastor's cgroup_basis "no-cgroup2" says;
- the command line's isolcpus=, nohz_full= and irqaffinity= are the kernel's /proc/cmdline as
  the kernel parses it (flags before the list; no flag means domain);
- the CPUs a hardware queue serves are blk-mq's software contexts under mq/N (cpuM), which keep
  the isolated CPUs that 6.9 on leaves out of cpu_list; the queue a vector completes is the one
  whose CPUs' reads (measured, taskset + O_DIRECT) made it fire;
- a vector is managed when the kernel refuses its own affinity written back (vm_irq_managed).
"""

import re

from compare import Truth, cpulist, cpuset
import fixlib

ISO_FINDINGS = ("isolated-movable-irq", "isolated-managed-irq", "isolated-queue")


def facts(ctx, name):
    """KEY<TAB>VALUE lines (vm_isolation_truth, vm_fact) as a dict; a later key wins."""
    text = ctx.read(name)
    if text is None:
        ctx.fail(f"test bed: the guest wrote no {name}")
        return {}
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition("\t")
        out[key] = value
    return out


def kernel_cpus(text):
    """A CPU list file as the kernel prints it: "(null)" (nohz_full without nohz_full=), empty or
    "(no file)" are no CPU."""
    if text is None or text.strip() in ("", "(null)", "(no file)"):
        return set()
    return cpuset(text.strip())


def cmdline_params(cmdline):
    """The kernel parameters of /proc/cmdline (name -> value of its last occurrence; None for a
    bare word)."""
    out = {}
    for word in cmdline.split():
        name, eq, value = word.partition("=")
        out[name] = value if eq else None
    return out


def isolcpus_parts(value):
    """isolcpus=[flag,...,]cpulist as the kernel reads it: the flags first, then the list; no
    flag means domain."""
    parts = value.split(",")
    flags = []
    while parts and re.fullmatch(r"[a-z_]+", parts[0]):
        flags.append(parts.pop(0))
    return ",".join(parts), flags or ["domain"]


class Isolation:
    """What the guest read about isolation (vm_isolation_truth's file NAME)."""

    def __init__(self, ctx, name="isolation.txt"):
        f = self.facts = facts(ctx, name)
        self.cmdline = f.get("cmdline", "")
        self.params = cmdline_params(self.cmdline)
        self.online = kernel_cpus(f.get("cpu.online"))
        self.cpu_isolated = kernel_cpus(f.get("cpu.isolated"))
        self.nohz_full = kernel_cpus(f.get("cpu.nohz_full"))
        self.cgroup_mounted = f.get("cgroup2.mount", "none") != "none"
        self.cgroup = set()  # the isolated partitions' CPUs, walked
        for key, value in f.items():
            if key.startswith("cgroup.partition.") and value.strip() == "isolated":
                self.cgroup |= kernel_cpus(f.get("cgroup.effective." + key[len("cgroup.partition."):]))
        root_file = f.get("cgroup.root.cpus_isolated", "(no file)")
        self.cgroup_root = None if root_file == "(no file)" else kernel_cpus(root_file)
        if not self.cgroup_mounted:
            # nothing to read: none can be seen (numastor's "no-cgroup2"; inferred, not measured)
            self.cgroup_basis = "no-cgroup2"
        else:
            self.cgroup_basis = "partitions" if self.cgroup_root is None else "cpuset.cpus.isolated"
        iso = self.params.get("isolcpus")
        self.cmdline_isolcpus = cpuset(isolcpus_parts(iso)[0]) if iso is not None else set()
        self.cmdline_nohz_full = cpuset(self.params.get("nohz_full") or "")
        self.isolated = (self.cpu_isolated | self.nohz_full | self.cmdline_isolcpus | self.cmdline_nohz_full
                         | self.cgroup)
        self.housekeeping = self.online - self.isolated

    def expected(self):
        """machine.isolation as the kernel's own files give it."""
        iso = self.params.get("isolcpus")
        cpus, flags = isolcpus_parts(iso) if iso is not None else (None, [])
        return {
            "cmdline_known": True,
            "isolcpus": cpus,
            "isolcpus_flags": sorted(flags),
            "nohz_full": self.params.get("nohz_full"),
            "irqaffinity": self.params.get("irqaffinity"),
            "cgroup_isolated_cpus": cpulist(self.cgroup),
            "cgroup_basis": self.cgroup_basis,
            "managed_irq_cpus": cpus if "managed_irq" in flags else "",
            "isolated_cpus": cpulist(self.isolated),
            "housekeeping_cpus": cpulist(self.housekeeping),
        }


CPULIST_FIELDS = ("isolcpus", "nohz_full", "irqaffinity", "cgroup_isolated_cpus", "managed_irq_cpus",
                  "isolated_cpus", "housekeeping_cpus")


def same_list(a, b):
    """Two cpulists (or null) naming the same CPUs; null only equals null."""
    if a is None or b is None:
        return a is None and b is None
    return cpuset(a) == cpuset(b)


def check_machine(ctx, doc, iso, label, fields=None):
    """numastor's machine.isolation against the kernel's files, field by field."""
    got = ((doc or {}).get("machine") or {}).get("isolation")
    if not ctx.expect(isinstance(got, dict), f"{label}: machine.isolation: numastor has none"):
        return None
    for field, want in iso.expected().items():
        if fields is not None and field not in fields:
            continue
        value = got.get(field)
        if field == "isolcpus_flags":
            ctx.equal(f"{label}: machine.isolation", field, sorted(value) if isinstance(value, list) else value, want)
        elif field in CPULIST_FIELDS:
            ctx.equal(f"{label}: machine.isolation", field, value, want, same_list)
        else:
            ctx.equal(f"{label}: machine.isolation", field, value, want)
    return got


class Queues:
    """The hardware queues and the measured pairing: which CPUs each queue serves (blk-mq's
    software contexts, hctx-cpus.txt) and which CPUs' reads each vector completed
    (iso-pairing.txt, vm_measure_pairing)."""

    def __init__(self, ctx, truth):
        self.served = {}  # disk -> {index: set of CPUs}
        for line in (ctx.read("hctx-cpus.txt") or "").splitlines():
            rec = line.split("\t")
            if len(rec) == 4 and rec[0] == "hctx_cpus":
                self.served.setdefault(rec[1], {})[int(rec[2])] = cpuset(rec[3])
        if not self.served:
            ctx.fail("test bed: the guest wrote no hctx-cpus.txt")
        self.pairs = Truth(ctx.path("truth.txt"), ctx.path("iso-pairing.txt"))
        if not self.pairs.pairs:
            ctx.fail("test bed: the guest measured no pairing (iso-pairing.txt)")
        # the kernel's cpu_list lies within the software contexts (6.9 on leaves isolated CPUs out)
        for disk, queues in sorted(truth.hctx.items()):
            for index, h in sorted(queues.items()):
                ctxs = self.served.get(disk, {}).get(index)
                ctx.expect(ctxs is not None and cpuset(h["cpu_list"]) <= ctxs,
                           f"test bed: {disk}: hw queue {index}: cpu_list {h['cpu_list']!r} is not within the "
                           f"CPUs of its software contexts {cpulist(ctxs or set())!r}")

    def vector_cpus(self, measured_disk, num):
        """The CPUs whose reads completed on vector num (measured under the disk the reads went
        to: a path's vectors under its head)."""
        return {cpu for cpu, grew in self.pairs.measured(measured_disk).items() if num in grew}

    def queue_of(self, disk, cpus):
        """The indices of disk's hardware queues that serve any of cpus."""
        return sorted(i for i, served in self.served.get(disk, {}).items() if served & cpus)


def vectors(truth):
    """(disk, device, irq, attrs) of every storage vector in a vm_truth file: a path disk's
    vectors are reported under its head (the device numastor names)."""
    for disk, nums in sorted(truth.irqs.items()):
        dev = truth.head_of(disk) or disk
        for num, attrs in sorted(nums.items()):
            yield disk, dev, num, attrs


def check_findings(ctx, doc, truth, truth_before, iso, queues, label):
    """The isolation findings of one `check --json` against the kernel's affinities read around
    it. Every vector whose effective affinity includes an isolated CPU is named by its device's
    findings: when the queue it completes (measured) serves isolated CPUs alone, that queue in
    isolated-queue; else a managed one in isolated-managed-irq, a movable one in
    isolated-movable-irq, with those isolated CPUs in the finding's evidence.cpus. No vector
    whose effective affinity avoids the isolated CPUs is named, and isolated-queue names exactly
    the queues whose online CPUs are all isolated, with those CPUs. Returns counts of what the
    kernel showed, for the test bed's own checks."""
    isolated, online = iso.isolated, iso.online
    named = {fid: {} for fid in ISO_FINDINGS}  # id -> device -> irqs or queue indices
    ev_cpus = {fid: {} for fid in ISO_FINDINGS}  # id -> device -> evidence.cpus
    queue_irqs = {}  # device -> the irqs isolated-queue's evidence names
    for f in (doc or {}).get("findings", []):
        fid = f.get("id")
        if fid not in ISO_FINDINGS:
            continue
        ev = f.get("evidence") or {}
        subject = f"{label}: finding {fid} on {f.get('device')}"
        key = "hw_queues" if fid == "isolated-queue" else "irqs"
        items = ev.get(key)
        if not ctx.expect(isinstance(items, list) and items, f"{subject}: evidence.{key} is {items!r}"):
            continue
        named[fid].setdefault(f.get("device"), set()).update(items)
        if fid == "isolated-queue":
            queue_irqs.setdefault(f.get("device"), set()).update(ev.get("irqs") or [])
        cpus = ev.get("cpus")
        ctx.expect(isinstance(cpus, str) and cpuset(cpus) and cpuset(cpus) <= isolated,
                   f"{subject}: evidence.cpus={cpus!r} is not a non-empty set of isolated CPUs "
                   f"(the kernel's: {cpulist(isolated)})")
        if isinstance(cpus, str):
            ev_cpus[fid].setdefault(f.get("device"), set()).update(cpuset(cpus))
    seen = {"movable-on-isolated": 0, "managed-mixed-on-isolated": 0, "managed-queue-isolated": 0,
            "managed-mixed-housekeeping": 0}
    known = {}
    want_cpus = {"isolated-movable-irq": {}, "isolated-managed-irq": {}}
    for disk, dev, num, t in vectors(truth):
        known.setdefault(dev, set()).add(num)
        subject = f"{label}: {dev}: irq {num} ({t['actions']})"
        old = truth_before.irqs.get(disk, {}).get(num, {})
        if old.get("effective_affinity_list") != t["effective_affinity_list"]:
            ctx.fail(f"{subject}: effective_affinity_list moved while numastor ran "
                     f"({old.get('effective_affinity_list')} -> {t['effective_affinity_list']})")
            continue
        if t["managed"] not in ("0", "1"):
            ctx.fail(f"test bed: {subject}: managed-ness unknown ({t['managed']})")
            continue
        managed = t["managed"] == "1"
        on = cpuset(t["effective_affinity_list"]) & isolated
        in_movable = num in named["isolated-movable-irq"].get(dev, set())
        in_managed = num in named["isolated-managed-irq"].get(dev, set())
        # the queue whose reads completed on this vector, measured (none for an admin or
        # config vector, which no read fires)
        cpus = queues.vector_cpus(dev, num)
        qs = queues.queue_of(disk, cpus)
        served = None
        if managed or cpus:
            if not ctx.expect(len(qs) == 1,
                              f"test bed: {subject}: reads from CPUs {cpulist(cpus)!r} completed on it, served by "
                              f"hw queues {qs} of {disk}: not one queue"):
                continue
            served = queues.served[disk][qs[0]] & online
            ctx.expect(cpus == served or not managed,
                       f"test bed: {subject}: reads from CPUs {cpulist(cpus)} completed on it, its queue "
                       f"{qs[0]} serves the online CPUs {cpulist(served)}")
        folded = bool(on) and served is not None and served <= isolated
        fid = "isolated-managed-irq" if managed else "isolated-movable-irq"
        if not on:
            seen["managed-mixed-housekeeping"] += managed and bool(served & isolated)
        elif folded:
            seen["managed-queue-isolated"] += managed
            ctx.expect(qs[0] in named["isolated-queue"].get(dev, set()),
                       f"{subject}: on isolated CPU(s) {cpulist(on)}, its queue {qs[0]} serves isolated CPUs "
                       f"alone ({cpulist(served)}): the queue is not in isolated-queue")
        else:
            seen["managed-mixed-on-isolated" if managed else "movable-on-isolated"] += 1
            want_cpus[fid].setdefault(dev, set()).update(on)
        what = "kernel-managed" if managed else "user-movable"
        ctx.expect((in_managed if managed else in_movable) == (bool(on) and not folded),
                   f"{subject}: {what}, effective affinity {t['effective_affinity_list']} (isolated: "
                   f"{cpulist(isolated)}{'; its queue serves isolated CPUs alone' if folded else ''}): numastor "
                   f"{'names' if (in_managed if managed else in_movable) else 'does not name'} it in {fid}")
        ctx.expect(not (in_movable if managed else in_managed),
                   f"{subject}: {what}, yet named in "
                   f"{'isolated-movable-irq' if managed else 'isolated-managed-irq'}")
    for fid, by_dev in want_cpus.items():
        for dev, cpus in sorted(by_dev.items()):
            ctx.equal(f"{label}: {dev}", f"{fid} evidence.cpus (its vectors' isolated effective CPUs)",
                      cpulist(ev_cpus[fid].get(dev, set())), cpulist(cpus))
    # isolated-queue: exactly the queues whose online CPUs are all isolated (a head's queues are
    # its paths', numbered per path), their online CPUs its evidence.cpus
    want, want_q_cpus = {}, {}
    for disk, qs in queues.served.items():
        if disk not in truth.disks:
            continue
        dev = truth.head_of(disk) or disk
        for index, cpus in qs.items():
            if cpus & online and cpus & online <= isolated:
                want.setdefault(dev, set()).add(index)
                want_q_cpus.setdefault(dev, set()).update(cpus & online)
    for dev in sorted(set(want) | set(named["isolated-queue"]), key=str):
        ctx.equal(f"{label}: {dev}", "isolated-queue hw_queues (queues whose online CPUs are all isolated)",
                  sorted(named["isolated-queue"].get(dev, set())), sorted(want.get(dev, set())))
        if dev in want and dev in named["isolated-queue"]:
            ctx.equal(f"{label}: {dev}", "isolated-queue evidence.cpus (those queues' online CPUs)",
                      cpulist(ev_cpus["isolated-queue"].get(dev, set())), cpulist(want_q_cpus[dev]))
    for fid in ("isolated-movable-irq", "isolated-managed-irq"):
        for dev, nums in named[fid].items():
            ctx.expect(nums <= known.get(dev, set()),
                       f"{label}: {fid} on {dev} names IRQs {sorted(nums - known.get(dev, set()))} that are "
                       f"not the device's vectors")
    for dev, nums in queue_irqs.items():
        ctx.expect(nums <= known.get(dev, set()),
                   f"{label}: isolated-queue on {dev} names IRQs {sorted(nums - known.get(dev, set()))} that are "
                   f"not the device's vectors")
    return seen


def check_fix(ctx, iso, before, queues, doc_dry, doc):
    """fix --dry-run and fix against the kernel: nothing planned onto an isolated CPU,
    isolated_left_out sound (isolated CPUs outside the target; for a move of a function with a
    node, at least the isolated CPUs of that node its queue serves), every movable vector on an
    isolated CPU moved unless its queue serves isolated CPUs alone, the dry run equal to the run.
    Returns the plan's moves {irq: row}."""
    isolated, online = iso.isolated, iso.online
    for tag, d in (("dryrun", doc_dry), ("fix", doc)):
        if d is None:
            continue
        ctx.equal(tag, "dry_run", d.get("dry_run"), tag == "dryrun")
        allowed = cpuset(d.get("allowed_cpus"))
        ctx.expect(allowed is not None and allowed and allowed <= online and not allowed & isolated,
                   f"{tag}: allowed_cpus={d.get('allowed_cpus')!r}: not online CPUs without the isolated "
                   f"ones ({cpulist(isolated)}; online {cpulist(online)})")
        for e in d.get("irqs", []):
            subject = f"{tag}: irq {e['irq']} ({e.get('name')}, {e.get('device')})"
            out = e.get("isolated_left_out")
            if not ctx.expect(isinstance(out, str), f"{subject}: isolated_left_out is {out!r}"):
                continue
            if e["action"] == "skip":
                # a kernel-managed vector: fix places nothing (its target is where it stays)
                ctx.expect(cpuset(out) <= isolated, f"{subject}: isolated_left_out {out!r}: not isolated CPUs")
                continue
            target = cpuset(e.get("target"))
            if target is not None:
                ctx.expect(not target & isolated, f"{subject}: target {e['target']} includes isolated CPUs "
                           f"{cpulist(target & isolated)}")
            ctx.expect(cpuset(out) <= isolated and not cpuset(out) & (target or set()),
                       f"{subject}: isolated_left_out {out!r}: not isolated CPUs outside the target {e.get('target')}")
            disk, fn = pci_disk(before, e.get("pci"))
            if e["action"] == "move" and fn and int(fn["numa_node"]) >= 0:
                local = cpuset(fn["local_cpulist"]) & isolated
                if e.get("hw_queue") is not None:
                    local &= queues.served.get(disk, {}).get(e["hw_queue"], set())
                ctx.expect(local <= cpuset(out),
                           f"{subject}: isolated CPUs {cpulist(local)} of the function's node (local_cpulist "
                           f"{fn['local_cpulist']}) its queue serves are left out of the target {e.get('target')}, "
                           f"but isolated_left_out is {out!r}")
    if doc_dry is not None and doc is not None:
        ctx.equal("dryrun", "plan (irq: action, target)",
                  {e["irq"]: (e["action"], e.get("target")) for e in doc_dry.get("irqs", [])},
                  {e["irq"]: (e["action"], e.get("target")) for e in doc.get("irqs", [])})
    moves = {e["irq"]: e for e in fixlib.moves(doc)}
    for disk, dev, num, t in vectors(before):
        on = cpuset(t["effective_affinity_list"]) & isolated
        if t["managed"] != "0" or not on:
            continue
        # a vector whose queue serves isolated CPUs alone stays (its queue's isolated-queue says
        # what to do; main 5a41534): the measured queue tells
        qs = queues.queue_of(disk, queues.vector_cpus(dev, num))
        if len(qs) == 1 and queues.served[disk][qs[0]] & online <= isolated:
            continue
        ctx.expect(num in moves, f"fix: {dev}: irq {num} ({t['actions']}): user-movable on isolated CPU(s) "
                   f"{cpulist(on)}, not moved")
    return moves


def pci_disk(truth, addr):
    """(disk, record) of the ground-truth disk on PCI function addr (a path disk for a path of
    a multipath head); (None, None) when none."""
    for disk, attrs in sorted(truth.disks.items()):
        if attrs.get("pci") == addr:
            return disk, attrs
    return None, None


def pci_truth(truth, addr):
    """The ground-truth disk record of PCI function addr."""
    return pci_disk(truth, addr)[1]


def check_applied(ctx, iso, irqs_before, irqs_dry, irqs_fix, moves, after_fix, after_io, label="fix"):
    """The kernel after fix --dry-run (nothing changed), after fix (only the moves changed, each
    to its target, none onto an isolated CPU; managed vectors untouched) and once the moved
    vectors fired (delivered inside the target, off the isolated CPUs). Returns how many fired."""
    isolated = iso.isolated
    for num, t in sorted(irqs_before.items()):
        d = irqs_dry.get(num)
        ctx.expect(d is not None and d["affinity"] == t["affinity"],
                   f"dryrun: irq {num} ({t['actions']}): smp_affinity_list {t['affinity']} -> "
                   f"{(d or {}).get('affinity')} in a dry run")
        a = irqs_fix.get(num)
        if a is None:
            ctx.fail(f"{label}: irq {num} ({t['actions']}) gone after the fix")
            continue
        if num in moves:
            fixlib.kernel_equal(ctx, f"{label}: irq {num} ({t['actions']})", "smp_affinity_list after the fix",
                                cpulist(cpuset(a["affinity"])), cpulist(cpuset(moves[num]["target"])))
        elif a["affinity"] != t["affinity"]:
            ctx.fail(f"{label}: irq {num} ({t['actions']}): not in the plan, yet moved {t['affinity']} -> {a['affinity']}")
        if a["affinity"] != t["affinity"] and cpuset(a["affinity"]) & isolated:
            ctx.fail(f"{label}: irq {num} ({t['actions']}) moved onto isolated CPU(s) "
                     f"{cpulist(cpuset(a['affinity']) & isolated)}: {t['affinity']} -> {a['affinity']}")
    fired = 0
    af, io = fixlib.storage_irqs(after_fix), fixlib.storage_irqs(after_io)
    for num, e in sorted(moves.items()):
        if num not in af or num not in io:
            ctx.fail(f"{label}: moved irq {num} is no storage vector of ground truth")
            continue
        n0 = sum(int(x) for x in af[num][1]["per_cpu_count"].split(",") if x)
        n1 = sum(int(x) for x in io[num][1]["per_cpu_count"].split(",") if x)
        eff = cpuset(io[num][1]["effective_affinity_list"])
        subject = f"{label}: {io[num][0]}: irq {num} ({e.get('name')})"
        if n1 > n0:
            fired += 1
            ctx.expect(eff <= cpuset(e["target"]) and not eff & isolated,
                       f"{subject}: fired after the fix, delivered on CPU {cpulist(eff)} (target {e['target']}, "
                       f"isolated {cpulist(isolated)})")
        else:
            # the deferred MSI move waits for an interrupt that never came (a virtio config vector)
            ctx.inferred.append(f"{subject}: did not fire after the fix: the kernel's effective affinity "
                                f"({cpulist(eff)}) still the old one, not compared")
    return fired


def check_revert(ctx, irqs_before, irqs_revert):
    rev = fixlib.json_out(ctx, "revert")
    ctx.equal("revert", "exit code", fixlib.rc(ctx, "revert"), 0)
    if rev is not None:
        ctx.equal("revert", "failed", rev.get("failed"), 0)
    for num, t in sorted(irqs_before.items()):
        r = irqs_revert.get(num)
        fixlib.kernel_equal(ctx, f"revert: irq {num} ({t['actions']})", "smp_affinity_list after --revert",
                            (r or {}).get("affinity"), t["affinity"])
    ctx.expect(ctx.read("journal-revert.json") is None, "revert: /run/numastor/journal.json still there")


def run(ctx):
    """Everything both scenarios assert; returns (iso, before, seen, moves, fired, dry) for the
    scenario's own checks."""
    iso = Isolation(ctx)
    ctx.expect(iso.isolated and iso.housekeeping,
               f"test bed: the kernel shows isolated CPUs {cpulist(iso.isolated)!r} and housekeeping CPUs "
               f"{cpulist(iso.housekeeping)!r}: the scenario needs both")
    # the root's cpuset.cpus.isolated (6.7 on): the partitions' CPUs, and maybe the boot-time
    # isolcpus= ones (cpu/isolated) besides
    if iso.cgroup_root is not None:
        ctx.expect(iso.cgroup <= iso.cgroup_root <= iso.cgroup | iso.cpu_isolated,
                   f"test bed: the root's cpuset.cpus.isolated reads {cpulist(iso.cgroup_root)!r}, the isolated "
                   f"partitions hold {cpulist(iso.cgroup)!r}, cpu/isolated {cpulist(iso.cpu_isolated)!r}")
    queues = Queues(ctx, ctx.truth)
    check_machine(ctx, ctx.doc, iso, "check")
    seen = check_findings(ctx, ctx.doc, ctx.truth, ctx.truth_before, iso, queues, "check")
    before = ctx.truth
    dry = fixlib.json_out(ctx, "dryrun")
    doc = fixlib.json_out(ctx, "fix")
    moves = check_fix(ctx, iso, before, queues, dry, doc)
    ib, idr, ifx = (fixlib.irqs(ctx, n) for n in ("irqs-before.txt", "irqs-dryrun.txt", "irqs-fix.txt"))
    after_fix, after_io = fixlib.truth(ctx, "after-fix.txt"), fixlib.truth(ctx, "after-io.txt")
    fired = check_applied(ctx, iso, ib, idr, ifx, moves, after_fix, after_io)
    # check once the moved vectors fired: the findings follow where the kernel now delivers
    after_doc = fixlib.check_json(ctx, "afterfix")
    if after_doc is not None:
        check_machine(ctx, after_doc, iso, "check after fix")
        check_findings(ctx, after_doc, after_io, fixlib.truth(ctx, "after-io-before.txt"), iso, queues,
                       "check after fix")
    check_revert(ctx, ib, fixlib.irqs(ctx, "irqs-revert.txt"))
    return iso, before, seen, moves, fired, dry
