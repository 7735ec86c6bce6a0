"""irqaffinity0: booted with irqaffinity=0, so unmanaged storage vectors (nvme admin q0, the
megasas HBA's single vector, virtio config/control/event) sit on CPU 0 while managed ones keep
their spread. numastor must report exactly those affinities and managed-ness."""


def check(ctx):
    unmanaged = 0
    for disk, irqs in sorted(ctx.truth.irqs.items()):
        pci = ctx.pci_of_disk(disk) or {}  # a path disk's vectors: its head's path on that function
        reported = {i.get("irq"): i for i in pci.get("irqs", [])}
        for num, t in sorted(irqs.items()):
            subject = f"{disk}: irq {num} ({t['actions']})"
            irq = reported.get(num, {})
            if t["managed"] == "0":
                unmanaged += 1
                ctx.expect(t["effective_affinity_list"] == "0",
                           f"test bed: {subject}: unmanaged but effective affinity {t['effective_affinity_list']}")
                ctx.equal(subject, "effective_affinity", irq.get("effective_affinity"), "0")
                ctx.equal(subject, "managed", irq.get("managed"), False)
            elif t["managed"] == "1":
                ctx.equal(subject, "managed", irq.get("managed"), True)
    ctx.expect(unmanaged >= 3, f"test bed: only {unmanaged} unmanaged storage vectors seen")
    mega = ctx.truth_disks(kind="scsi", root_bus=False)
    ctx.expect(len(mega) == 1 and len(ctx.truth.irqs.get(mega[0], {})) == 1,
               "test bed: expected the megasas disk behind the expander with one vector")
