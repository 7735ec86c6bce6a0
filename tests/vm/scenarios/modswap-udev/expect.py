"""modswap-udev: numastor on a machine that runs Debian's systemd-udevd.

The guest starts Debian 12's systemd-udevd (its 50-udev-default, 60-block and
60-persistent-storage rules, and numastor's 90-numastor.rules) before loading the drivers,
so every disk arrives through it. Both SCSI disks have a WWN (qemu wwn=), so udev's ID_WWN
reads 0x5000... and the kernel's wwid naa.5000...: one identity in two forms. It holds
numastor to:

- the test bed: udevd ran; the megasas disk's ID_WWN and wwid are the two forms;
- the hot-plug rule: every disk on a PCI function (both NVMe, both SCSI, virtio-blk) has
  SYSTEMD_WANTS=numastor-hotplug.service at boot and after the swap, and the SCSI disks'
  add events during the swap carry it; the loop device, the zram device and the dm-linear
  device on the loop device, set up during the swap, have no SYSTEMD_WANTS, in their udev
  properties and in any of their events;
- `fix --modules` (the build's scsi_mod/sd_mod): exit 0, scsi_mod and sd_mod out of tree,
  every disk back under its identity, both patterns intact;
- `fix --hotplug` started while the swap holds the lock ("PID modules"): exit 0, nothing on
  stdout or stderr, finished only after the swap did;
- `fix --revert`: the stock modules, every disk, both patterns, no journal.

That the unit does nothing while disabled is shown on the host (tests/check-install.sh,
systemctl --root and systemd-analyze): the guest runs no systemd.
"""

import fixlib
import modswaplib as ms

WANT = "numastor-hotplug.service"


def monitor_events(text):
    """udevadm monitor --property blocks as dicts."""
    events, cur = [], {}
    for line in (text or "").splitlines():
        line = line.strip()
        if not line:
            if cur:
                events.append(cur)
            cur = {}
        elif "=" in line and not line.startswith(("UDEV", "KERNEL")):
            k, _, v = line.partition("=")
            cur[k] = v
    if cur:
        events.append(cur)
    return events


def check(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    mega, vscsi = f("mega.id"), f("vscsi.id")
    if not ctx.expect(mega and vscsi, "test bed: no mega.id / vscsi.id fact"):
        return
    fixlib.kernel_equal(ctx, "test bed", "systemd-udevd running", f("udevd.running"), "1")
    wwn, wwid = f(f"udev.{mega}.boot.wwn") or "", f(f"udev.{mega}.boot.wwid") or ""
    ctx.expect(wwn.startswith("0x5000c500") and wwid.startswith("naa.5000c500"),
               f"test bed: megasas disk: udev ID_WWN {wwn!r} and sysfs wwid {wwid!r} are not the two forms "
               "of its WWN")

    # the rule: every PCI-backed disk, never the loop device
    boot = ms.disks_by_id(ctx, "boot")
    # both NVMe, both SCSI disks, virtio-blk and the NVMe subsystem's multipath head (its
    # paths on PCI functions: the rule wants it too)
    ctx.equal("test bed", "disks at boot", len(boot), 6)
    for step in ("boot", "swapped"):
        for ident in sorted(ms.disks_by_id(ctx, step)):
            wants = (f(f"udev.{ident}.{step}.wants") or "").split()
            ctx.expect(WANT in wants, f"hot-plug rule, {step}: disk {f(f'udev.{ident}.{step}.name')} ({ident}): "
                       f"SYSTEMD_WANTS={' '.join(wants)!r}, expected {WANT}")
    ctx.expect(f("loop.backing") == "/tmp/loop.img", f"test bed: loop0 is not set up: {f('loop.backing')!r}")
    events = monitor_events(ctx.read("monitor.txt"))
    ctx.expect(events, "test bed: udevadm monitor recorded no block event")
    for dev in ("loop0", "zram0", "dm-0"):
        fixlib.kernel_equal(ctx, "test bed", f"{dev} present during the swap", f(f"virtual.{dev}.present"), "1")
        ctx.equal(f"hot-plug rule: {dev}", "SYSTEMD_WANTS", f(f"virtual.{dev}.wants"), "")
        kind = dev.rstrip("0123456789")
        virt = [e for e in events if e.get("DEVNAME", "").startswith("/dev/" + kind) and e.get("DEVTYPE") == "disk"]
        ctx.expect(virt, f"test bed: no {kind} device event was recorded")
        for e in virt:
            ctx.expect(WANT not in e.get("SYSTEMD_WANTS", ""),
                       f"hot-plug rule: {e.get('ACTION')} {e.get('DEVNAME')}: SYSTEMD_WANTS={e.get('SYSTEMD_WANTS')!r}")
    scsi_adds = [e for e in events if e.get("ACTION") == "add" and e.get("DEVTYPE") == "disk"
                 and e.get("DEVNAME", "").startswith("/dev/sd")]
    # two at boot, two when the swap brings them back, two after --revert
    ctx.expect(len(scsi_adds) >= 4, f"test bed: {len(scsi_adds)} SCSI disk add events, expected >= 4")
    for e in scsi_adds:
        ctx.expect(WANT in e.get("SYSTEMD_WANTS", "").split(),
                   f"hot-plug rule: add {e.get('DEVNAME')}: SYSTEMD_WANTS={e.get('SYSTEMD_WANTS')!r}")

    # the swap
    ms.swap_text(ctx, "swap")
    for m in ("scsi_mod", "sd_mod"):
        ms.module_out_of_tree(ctx, m, "swapped")
    for m in ("megaraid_sas", "virtio_scsi"):
        ms.module_stock(ctx, m, "swapped")
    ms.disks_back(ctx, "after the swap", "boot", "swapped")
    ms.pattern_intact(ctx, mega, ["swapped"])
    ms.pattern_intact(ctx, vscsi, ["swapped"])

    # the unit's run during the swap
    lock = f("swap.lock") or ""
    ctx.expect(lock.endswith(" modules"), f"test bed: the swap's lock reads {lock!r}, not 'PID modules'")
    fixlib.kernel_equal(ctx, "fix --hotplug during the swap", "exit code", fixlib.rc(ctx, "hotplug"), 0)
    out = (ctx.read("hotplug.out") or "") + (ctx.read("hotplug.err") or "")
    ctx.equal("fix --hotplug during the swap", "output", out.strip(), "")
    try:
        start, end = float(f("hotplug.start")), float((ctx.read("hotplug.end") or "0").strip())
        swap_end = float(f("swap.end"))
    except (TypeError, ValueError):
        ctx.fail("test bed: no hotplug.start / hotplug.end / swap.end time")
    else:
        ctx.expect(end >= swap_end - 0.5,
                   f"fix --hotplug ended at {end:.2f} s, before the swap (ended {swap_end:.2f} s): it did not wait")
        ctx.expect(end - start >= 1.0, f"fix --hotplug took {end - start:.2f} s: it did not wait for the swap")

    ms.swap_text(ctx, "revert")
    for m in ("scsi_mod", "sd_mod", "megaraid_sas", "virtio_scsi"):
        ms.module_stock(ctx, m, "reverted")
    ms.disks_back(ctx, "after --revert", "boot", "reverted")
    ms.pattern_intact(ctx, mega, ["reverted"])
    ms.pattern_intact(ctx, vscsi, ["reverted"])
    fixlib.kernel_equal(ctx, "after --revert", "journal", f("journal.reverted"), "absent")
