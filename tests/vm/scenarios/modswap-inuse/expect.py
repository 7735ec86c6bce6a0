"""modswap-inuse: `numastor fix --modules` refuses a swap that would detach a disk in use,
names the holder, and changes nothing, for uses that /proc/self/mountinfo and the modules'
reference counts do not show.

The bed's standard machine has an NVMe namespace shared by two controllers of one qemu nvme-subsys (one on the root bus, one behind the node-1 expander): on
Debian's 6.1 it is a multipath head (nvmeXnY under nvme-subsystem, no multipath/ directory)
whose users take no nvme.ko reference (nvme's refcnt stays 0, ground truth). For each case
the ground truth is the kernel's own files and the tools' output (sys/fs/btrfs, the other
namespace's mountinfo, /proc/PID/fd, holders/ and dm/name, /proc/swaps, zram's backing_dev).
It holds numastor to:

- the plan (`--dry-run --json`, exit 1): safe false, no failed check, the disk in the
  detaches list (the head too: resolved to its per-path disks' PCI functions), its refusal
  naming the holder: the btrfs and its mount point (btrfs); the mount point and the other
  mount namespace with a process in it (netns); the reading process and its pid (reader);
  the dm device and its dm name (dmlinear); the swap partition (swap); an exclusive claim
  (zram); loop0 bound to the head, and not loop1 on a file of the megasas disk (loop); the
  nvmet namespace on the head (nvmet); no other disk refused; with configfs unmounted while
  nvmet is loaded, the head refused as unknown;
- the swap (`fix --modules`): exit 3, "refused" and "nothing was changed" on stderr, and the
  state before and after equal (modules, disks by identity with sysfs path and inode, journal);
- the recheck: a plan made with nothing in use, then (NUMASTOR_TEST_PAUSE_BEFORE_SWAP) the head
  opened by a process before the swap starts: exit 3, stderr names the head, the process and
  its pid, and says nothing was changed; the state unchanged.
"""

import re

import fixlib
import modswaplib as ms


def refused(ctx, tag, disk, pattern, others_clear=True):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    plan = ms.swap_plan(ctx, f"{tag}-plan", rc=1)
    refusal = ""
    if plan is not None:
        ctx.equal(f"{tag}-plan", "safe", plan.get("safe"), False)
        ctx.equal(f"{tag}-plan", "failed checks", ms.failed_checks(plan), [])
        refusals = {d["device"]: d["refusal"] for d in plan.get("detaches", [])}
        if ctx.expect(disk in refusals, f"{tag}-plan: {disk} is not among the disks detached: {sorted(refusals)}"):
            ctx.expect(refusals[disk] and re.search(pattern, refusals[disk]),
                       f"{tag}-plan: {disk}: refusal {refusals[disk]!r} does not match {pattern!r}")
        if others_clear:
            extra = {d: r for d, r in refusals.items() if d != disk and r}
            ctx.equal(f"{tag}-plan", "other disks refused", extra, {})
        refusal = refusals.get(disk) or ""
    ctx.equal(tag, "exit code", fixlib.rc(ctx, tag), 3)
    err = ctx.read(f"{tag}.err") or ""
    ctx.expect("refused" in err and "nothing was changed" in err,
               f"{tag}: stderr does not say refused / nothing was changed: {err.strip()[:300]!r}")
    ms.unchanged(ctx, f"{tag}: refused", f"{tag}-before", tag)
    fixlib.kernel_equal(ctx, tag, "journal after", f(f"journal.{tag}"), "absent")
    return refusal


def check(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    head, rootnvme, mega, vscsi = f("head"), f("rootnvme"), f("mega"), f("vscsi")
    if not ctx.expect(head and rootnvme and mega and vscsi, "test bed: no head / rootnvme / mega / vscsi fact"):
        return
    # the bed: a multipath head with two paths, and nvme.ko's refcount blind to its users
    ctx.expect("/nvme-subsystem/" in (f("head.path") or ""), f"test bed: {head} is no multipath head: {f('head.path')}")
    ctx.equal("test bed", "paths of the head", len((f("head.paths") or "").split()), 2)
    fixlib.kernel_equal(ctx, "test bed: nvme refcnt with the head mounted", "refcnt", f("btrfs.nvme_refcnt"), "0")
    fixlib.kernel_equal(ctx, "test bed: nvme refcnt with the head open", "refcnt", f("reader.nvme_refcnt"), "0")

    # btrfs on the head: an anonymous device in mountinfo, the member in sys/fs/btrfs
    uuid = f("btrfs.uuid") or ""
    fixlib.kernel_equal(ctx, "test bed: btrfs", "members", (f("btrfs.members") or "").strip(), head)
    ctx.expect(re.search(r" 0:\d+ ", f("btrfs.mountinfo") or ""), f"test bed: btrfs mountinfo {f('btrfs.mountinfo')!r}")
    refused(ctx, "btrfs", head, re.escape(f"member of btrfs {uuid} mounted at /mnt/b"))
    fixlib.kernel_equal(ctx, "btrfs", "file on the mounted btrfs", f("btrfs.file"), "data")

    # ext4 mounted only in another mount namespace
    ns, pid = f("netns.ns"), f("netns.pid")
    ctx.expect(ns and ns != f("netns.our_ns"), f"test bed: the other namespace {ns} is ours")
    fixlib.kernel_equal(ctx, "test bed: netns", "mounts in the other namespace", f("netns.their_mount"), "1")
    fixlib.kernel_equal(ctx, "test bed: netns", "mounts in ours", f("netns.our_mount"), "0")
    refused(ctx, "netns", mega, re.escape(f"mounted at /mnt/ns in mount namespace {ns} (pid {pid} sleep)"))

    # a process reading the head
    fixlib.kernel_equal(ctx, "test bed: reader", "fd 0", f("reader.fd0"), f"/dev/{head}")
    refused(ctx, "reader", head, re.escape(f"open by sleep (pid {f('reader.pid')})"))

    # loop0 bound to the head (no holder link, no nvme.ko reference); loop1 on a file of the
    # megasas disk, which the nvme group does not detach, is no use of the head (the twin)
    fixlib.kernel_equal(ctx, "test bed: loop", "loop0 backing file", f("loop.backing0"), f"/dev/{head}")
    fixlib.kernel_equal(ctx, "test bed: loop", "loop1 backing file", f("loop.backing1"), "/mnt/l/img")
    fixlib.kernel_equal(ctx, "test bed: loop", "holders of the head", (f("loop.holders") or "").strip(), "")
    fixlib.kernel_equal(ctx, "test bed: loop", "nvme refcnt", f("loop.nvme_refcnt"), "0")
    refusal = refused(ctx, "loop", head, re.escape(f"backs loop0 (backing file /dev/{head})"))
    ctx.expect("loop1" not in refusal, f"loop-plan: the refusal names loop1, on another disk's file: {refusal!r}")
    fixlib.kernel_equal(ctx, "loop", "loop0 backing file after", f("loop.backing0.after"), f"/dev/{head}")
    fixlib.kernel_equal(ctx, "loop", "bytes read through loop0 after", f("loop.read.after"), "4096")

    # an nvmet namespace on the head, enabled (exported on no port)
    sub = "nqn.2024-01.io.numastor:inuse"
    fixlib.kernel_equal(ctx, "test bed: nvmet", "device_path", f("nvmet.device_path"), f"/dev/{head}")
    fixlib.kernel_equal(ctx, "test bed: nvmet", "enable", f("nvmet.enable"), "1")
    fixlib.kernel_equal(ctx, "test bed: nvmet", "holders of the head", (f("nvmet.holders") or "").strip(), "")
    refused(ctx, "nvmet", head,
            re.escape(f"backs nvmet namespace 1 of subsystem {sub} (enabled) (device_path /dev/{head})"))
    fixlib.kernel_equal(ctx, "nvmet", "enable after", f("nvmet.enable.after"), "1")
    # configfs unmounted, nvmet still loaded: its namespaces cannot be read, the plan refuses
    fixlib.kernel_equal(ctx, "test bed: nvmet unknown", "configfs mounts, nvmet refcnt", f("nvmet.unmounted"),
                        "0 0")
    plan = ms.swap_plan(ctx, "nvmet-unknown-plan", rc=1)
    if plan is not None:
        refusals = {d["device"]: d["refusal"] for d in plan.get("detaches", [])}
        want = ("the nvmet module is loaded and /sys/kernel/config/nvmet is not there (configfs not mounted at "
                f"/sys/kernel/config): whether an NVMe target namespace uses {head} is unknown")
        ctx.expect(want in (refusals.get(head) or ""),
                   f"nvmet-unknown-plan: {head}: refusal {refusals.get(head)!r} does not say {want!r}")
        ctx.equal("nvmet-unknown-plan", "safe", plan.get("safe"), False)
    fixlib.kernel_equal(ctx, "nvmet unknown", "nvmet after rmmod", f("nvmet.after"), "gone")

    # dm-linear on a partition of the root-bus NVMe
    fixlib.kernel_equal(ctx, "test bed: dmlinear", "holders", (f("dmlinear.holders") or "").strip(), "dm-0")
    fixlib.kernel_equal(ctx, "test bed: dmlinear", "dm name", f("dmlinear.name"), "inuse-lin")
    refused(ctx, "dmlinear", rootnvme, re.escape(f"{rootnvme}p1 held by dm-0 (device-mapper inuse-lin)"))

    # swap on a partition of the virtio-scsi disk
    fixlib.kernel_equal(ctx, "test bed: swap", "/proc/swaps", (f("swap.swaps") or "").strip(), f"/dev/{vscsi}1")
    refused(ctx, "swap", vscsi, re.escape(f"used as swap (/dev/{vscsi}1)"))

    # an in-kernel exclusive claim: zram's writeback device
    fixlib.kernel_equal(ctx, "test bed: zram", "backing_dev", f("zram.backing_dev"), f"/dev/{mega}")
    fixlib.kernel_equal(ctx, "test bed: zram", "holders", (f("zram.holders") or "").strip(), "")
    refused(ctx, "zram", mega, r"claimed exclusively \(an O_EXCL open fails with EBUSY\)")

    # the recheck right before the removal
    fixlib.kernel_equal(ctx, "test bed: recheck", "the plan was made before the head was opened",
                        f("recheck.planned"), "1")
    ctx.equal("recheck", "exit code", fixlib.rc(ctx, "recheck"), 3)
    err = ctx.read("recheck.err") or ""
    want = f"{head} is in use now: open by sleep (pid {f('recheck.pid')}): not removing nvme"
    ctx.expect(want in err and "nothing was changed" in err,
               f"recheck: stderr does not say {want!r} and nothing was changed: {err.strip()[:400]!r}")
    ms.unchanged(ctx, "recheck: refused", "recheck-before", "recheck")
    fixlib.kernel_equal(ctx, "recheck", "journal after", f("journal.recheck"), "absent")
