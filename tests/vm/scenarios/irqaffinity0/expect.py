"""irqaffinity0: booted with irqaffinity=0, so unmanaged storage vectors (nvme admin q0, the
megasas HBA's single vector, or the ahci one that takes its place on the cloud flavour, virtio
config/control/event) sit on CPU 0 while managed ones keep
their spread. numastor must report exactly those affinities and managed-ness, each fact from
where this kernel tells it: on 6.12 and later the file mode of smp_affinity (0444: user space
may not set it; 0644: it may, so not managed), below 6.12 nothing without a write (the driver's
behaviour, as measured). A 0444 vector stays managed by the driver's behaviour: the mode alone
does not tell managed from IRQF_NOBALANCING, and none of these kernels has the IRQ debugfs."""

import re


def kernel_version(ctx):
    rel = ((ctx.doc or {}).get("machine") or {}).get("kernel_release") or ""
    m = re.match(r"(\d+)\.(\d+)", rel)
    return (int(m.group(1)), int(m.group(2))) if m else None


def check(ctx):
    unmanaged = 0
    for disk, irqs in sorted(ctx.truth.irqs.items()):
        pci = ctx.pci_of_disk(disk) or {}  # a path disk's vectors: its head's path on that function
        reported = {i.get("irq"): i for i in pci.get("irqs", [])}
        for num, t in sorted(irqs.items()):
            subject = f"{disk}: irq {num} ({t['actions']})"
            irq = reported.get(num, {})
            if t["managed"] in ("0", "1"):
                check_sources(ctx, subject, irq, t["managed"] == "1", kernel_version(ctx))
            if t["managed"] == "0":
                unmanaged += 1
                ctx.expect(t["effective_affinity_list"] == "0",
                           f"test bed: {subject}: unmanaged but effective affinity {t['effective_affinity_list']}")
                ctx.equal(subject, "effective_affinity", irq.get("effective_affinity"), "0")
                ctx.equal(subject, "managed", irq.get("managed"), False)
            elif t["managed"] == "1":
                ctx.equal(subject, "managed", irq.get("managed"), True)
    ctx.expect(unmanaged >= 3, f"test bed: only {unmanaged} unmanaged storage vectors seen")
    # the node-1 HBA: megasas, or where the kernel has no megaraid_sas an ich9-ahci; one vector
    kind = "ata" if "no megaraid_sas" in (ctx.read("notes.txt") or "") else "scsi"
    hba = ctx.truth_disks(kind=kind, root_bus=False)
    ctx.expect(len(hba) == 1 and len(ctx.truth.irqs.get(hba[0], {})) == 1,
               f"test bed: expected the node-1 HBA's disk ({kind}) behind the expander with one vector, "
               f"ground truth has {hba}")


def check_sources(ctx, subject, irq, managed, version):
    """managed_source and user_settable_source as this kernel allows numastor to know them."""
    if version is None:
        ctx.fail(f"{subject}: numastor reported no kernel release")
        return
    if version >= (6, 12):
        ctx.equal(subject, "user_settable_source", irq.get("user_settable_source"), "file-mode")
        ctx.equal(subject, "managed_source", irq.get("managed_source"), "driver" if managed else "file-mode")
    else:
        ctx.equal(subject, "managed_source", irq.get("managed_source"), "driver")
        ctx.equal(subject, "user_settable_source", irq.get("user_settable_source"), "managed")
