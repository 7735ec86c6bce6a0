"""fix-revert-identity: `fix --revert` after the nvme driver was reloaded so that IRQ numbers
and names changed writes nothing onto the wrong device and reports the stale entries.

Booted with irqaffinity=0 and the pre-fix nvme (like fix-irqaffinity0), so `fix` moves each
NVMe's admin vector and the megasas vector. Then nvme is removed and loaded again with the
every controller held back (driver_override) and then bound one at a time, the one that was
nvme1 first and the one that was nvme0 last (the two NVMe and the NVMe subsystem's two
controllers): every controller's name changes (their disks and vector names with them) and
the IRQ numbers freed by one are taken by another: the forced NVMe's admin vector nvme0q0
(moved by fix) is afterwards, by number, nvme0q0 of another controller. The new admin vectors are put on CPU 3 and the
new NVMe disks' rq_affinity on 0 (what an operator might do), so any stale write shows.

Ground truth is the guest's reads of the kernel's files: every PCI function's msi_irqs with
each vector's action and smp_affinity_list (boot, after the reload, before and after the
revert), every IRQ of the machine (vm_irqs), and every disk's identity and rq_affinity. It
holds numastor to:
- test bed: the controllers swapped names, and an IRQ number fix moved on one NVMe function
  belongs to the other after the reload under the same action name; fix moved a vector of one
  other function too (the twin that must be restored normally);
- after the revert every IRQ of the machine holds what it held before the revert, except the
  IRQ that is now the journaled PCI function's vector with the journaled action name and still
  holds what fix placed: that one holds the previous value (the megasas vector);
- every disk's rq_affinity is what it was before the revert, except a disk with the journaled
  identity still at what fix set;
- the revert exits 1, reports every NVMe entry not restored with status gone (and a problem),
  the twin restored, and leaves no journal (nothing in it can apply any more).
"""

import fixlib


def info(ctx, message):
    """What the run showed, kept beside the results (expect-notes.txt)."""
    with open(ctx.path("expect-notes.txt"), "a", encoding="utf-8") as f:
        f.write(message + "\n")


def pci_state(ctx, name):
    """{irq: (bdf, driver, controller, action, affinity)} from a rid_pci_state file."""
    out = {}
    for line in (ctx.read(name) or "").splitlines():
        rec = line.split("\t")
        if len(rec) == 6:
            out[int(rec[3])] = (rec[0], rec[1], rec[2], rec[4], rec[5])
    if not out:
        ctx.fail(f"test bed: no PCI vector state {name}")
    return out


def disks(ctx, name):
    """{identity: (name, pci, rq_affinity)} from a rid_disks file."""
    out = {}
    for line in (ctx.read(name) or "").splitlines():
        rec = line.split("\t")
        if len(rec) == 4:
            out[rec[1]] = (rec[0], rec[2], rec[3])
    return out


def check(ctx):
    boot, reloaded = pci_state(ctx, "pci-boot.txt"), pci_state(ctx, "pci-reloaded.txt")
    pre, after = fixlib.irqs(ctx, "irqs-prerevert.txt"), fixlib.irqs(ctx, "irqs-reverted.txt")
    doc = fixlib.json_out(ctx, "fix")
    if doc is None or not boot or not reloaded:
        return
    moves = fixlib.moves(doc)

    # The test bed: names and numbers really changed, and something to restore.
    nvme_boot = {v[0]: v[2] for v in boot.values() if v[1] == "nvme"}
    nvme_now = {v[0]: v[2] for v in reloaded.values() if v[1] == "nvme"}
    # the two NVMe and the two controllers of the NVMe subsystem
    ctx.expect(len(nvme_boot) == 4 and set(nvme_boot) == set(nvme_now),
               f"test bed: four NVMe functions before and after the reload: {nvme_boot} -> {nvme_now}")
    for bdf, ctl in sorted(nvme_boot.items()):
        ctx.expect(nvme_now.get(bdf) not in (None, ctl),
                   f"test bed: {bdf} is {nvme_now.get(bdf)} after the reload, was {ctl}: the names did not change")
    reused = sorted(n for n, v in reloaded.items()
                    if v[1] == "nvme" and n in boot and boot[n][1] == "nvme" and boot[n][0] != v[0])
    ctx.expect(reused, "test bed: no IRQ number of one NVMe function went to the other in the reload")
    same_name = sorted(n for n in reused if boot[n][3] == reloaded[n][3])
    info(ctx, f"IRQ numbers now another NVMe function's: {reused}; with the same action name: {same_name}")
    # the case a journal keyed by number gets wrong: a moved NVMe vector's number is now
    # another function's vector, under the same action name
    ctx.expect(any(e["pci"] in nvme_boot and e["irq"] in reloaded and reloaded[e["irq"]][0] != e["pci"]
                   and reloaded[e["irq"]][3] == e["name"] for e in moves),
               "test bed: no IRQ number fix moved belongs to another NVMe function under the same name after "
               "the reload")
    twins = [e for e in moves if e["pci"] not in nvme_boot]
    ctx.expect(twins, "test bed: fix moved no vector outside the NVMe functions (the twin to restore)")

    # Ground truth: what each IRQ must hold after the revert.
    expected = {n: t["affinity"] for n, t in pre.items()}
    restore = {}
    for e in moves:
        now = [n for n, v in reloaded.items() if v[0] == e["pci"] and v[3] == e["name"]]
        if len(now) == 1 and now[0] in pre and fixlib.same_cpus(pre[now[0]]["affinity"], e["target"]):
            expected[now[0]] = e["current"]
            restore[(e["pci"], e["name"])] = now[0]
    for n, t in sorted(after.items()):
        if n in expected:
            ok = fixlib.same_cpus(t["affinity"], expected[n])
            if not ok:
                owner = reloaded.get(n, ("-", "-", "-", t["actions"], "-"))
                ctx.fail(f"irq {n} ({t['actions']} of {owner[0]}): smp_affinity_list after revert: "
                         f"kernel={t['affinity']} expected={expected[n]} (before the revert: {pre[n]['affinity']})"
                         + ("" if n in restore.values() else ": written from a stale journal entry"))
    for e in twins:
        ctx.expect((e["pci"], e["name"]) in restore,
                   f"twin: {e['name']} of {e['pci']} is not where fix placed it before the revert")

    # rq_affinity by identity
    fix_disks, pre_disks, rev_disks = disks(ctx, "disks-fix.txt"), disks(ctx, "disks-prerevert.txt"), \
        disks(ctx, "disks-reverted.txt")
    boot_disks = disks(ctx, "disks-boot.txt")
    rq_moved = {e["device"]: e for e in doc.get("rq_affinity", []) if e["action"] == "move"}
    info(ctx, f"rq_affinity moves: {sorted(rq_moved)}")
    for ident, (name, pci, rq) in sorted(rev_disks.items()):
        want = pre_disks.get(ident, (None, None, rq))[2]
        boot_name = boot_disks.get(ident, (None,))[0]
        e = rq_moved.get(boot_name)
        if e is not None and pre_disks.get(ident, (None, None, None))[2] == str(e["target"]):
            want = str(e["current"])
        fixlib.kernel_equal(ctx, f"disk {ident} ({name}, {boot_name} at boot)", "rq_affinity after revert", rq, want)
    info(ctx, f"disks: {sorted((v[0], k) for k, v in boot_disks.items())} -> "
             f"{sorted((v[0], k) for k, v in pre_disks.items())}; fix: {len(fix_disks)}")

    # The report.
    ctx.equal("revert", "exit code", fixlib.rc(ctx, "revert"), 1)
    rev = fixlib.json_out(ctx, "revert")
    if rev is not None:
        items = {(i.get("pci"), i.get("name")): i for i in rev.get("reverted", []) if i.get("pci")}
        for e in moves:
            key = (e["pci"], e["name"])
            item = items.get(key)
            subject = f"revert: {e['name']} of {e['pci']}"
            if not ctx.expect(item is not None, f"{subject}: not in the report"):
                continue
            if key in restore:
                ctx.equal(subject, "status", item.get("status"), "restored")
                ctx.equal(subject, "irq", item.get("irq"), restore[key])
            else:
                ctx.equal(subject, "status", item.get("status"), "gone")
                ctx.equal(subject, "restored", item.get("restored"), False)
                ctx.expect(bool(item.get("problem")), f"{subject}: a stale entry without a problem")
        stale = [i for i in rev.get("reverted", []) if i.get("status") not in ("restored", "unchanged")]
        ctx.equal("revert", "left_alone", rev.get("left_alone"), len(stale))
        ctx.expect(len(stale) >= len(moves) - len(restore), f"revert: {len(stale)} entries left alone, "
                   f"expected at least the {len(moves) - len(restore)} whose vector is gone")
        ctx.equal("revert", "failed", rev.get("failed"), 0)
    ctx.expect(ctx.read("journal-reverted.json") is None,
               "revert: /run/numastor/journal.json still there (nothing in it can apply any more)")
