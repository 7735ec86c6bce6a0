/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Is a disk in use? Every way a disk, its partitions and (for an NVMe multipath head or one of
 * its paths) the head, its partitions and its per-path disks can be held, each with the holder
 * named: what the module swap must refuse before it detaches a disk, and check again right
 * before each module removal.
 *
 * What is looked at (all through the rooted reader, so a captured tree answers too):
 * - an exclusive claim: open(O_RDONLY | O_EXCL) of the device fails with EBUSY when a mount,
 *   dm, md, swap or another exclusive opener holds it, in any namespace. Live root only (a
 *   private node in a 0700 directory under /run when /dev has none); skipped under a sysroot.
 * - mounts in every mount namespace (each distinct proc/PID/mountinfo, by proc/PID/ns/mnt),
 *   by major:minor; btrfs (an anonymous 0:NN device there) through sys/fs/btrfs/UUID/devices/;
 *   a mounted zfs or bcachefs while that module is present cannot be traced to its disks and
 *   is reported as "unknown-fs".
 * - open file descriptors (proc/PID/fd, by name, and on the live root by device number) and
 *   mappings (proc/PID/maps, likewise through proc/PID/map_files).
 * - holders (sys/block/X/holders, and each partition's: dm by its dm/name, md, bcache).
 * - swap (proc/swaps: by device number on the live root, by name otherwise).
 * - the root and /usr file systems of pid 1, whatever their device: through dm/md slaves and
 *   btrfs members too.
 * - the kernel's users, which show as none of the above and take no reference on the disk's
 *   driver: a loop device's backing file (sys/block/loopN/loop/backing_file), an nvmet
 *   namespace's device_path (sys/kernel/config/nvmet/subsystems/S/namespaces/N/, enabled or
 *   not), a LIO backstore's udev_path (sys/kernel/config/target/core/HBA/DEV/), a Xen blkback
 *   vbd's physical_device (sys/bus/xen-backend/devices/vbd-D-N/, hex MAJOR:MINOR). A path is
 *   resolved through the root to a device number (a node's st_rdev, a file's st_dev and the
 *   mount over it; under a sysroot, which has no nodes, by the name a /dev path resolves to),
 *   then to the disk directly or through dm/md stacked on it. A path that cannot be resolved
 *   (deleted, unreadable), and nvmet or target_core_mod loaded while configfs is not mounted at
 *   sys/kernel/config, is "unknown-user": refused, since the use cannot be ruled out.
 */
#ifndef NUMASTOR_INUSE_H
#define NUMASTOR_INUSE_H

#include <stddef.h>

#include "read/blockdev.h"
#include "read/root.h"

struct ns_inuse_holder {
	char *device; /* the block device held: the disk, a partition, the multipath head */
	/* "exclusive-open", "mount", "open-fd", "mapping", "holder", "swap", "root-fs", "usr-fs",
	 * "btrfs", "unknown-fs", "loop", "nvmet", "lio", "xen-blkback", "unknown-user" */
	char *kind;
	char *detail; /* names the holder: process and pid, mount point and namespace, dm name */
};

struct ns_inuse_report {
	struct ns_inuse_holder *v;
	size_t n;
};

/* Every way d, its partitions and (for an NVMe path device) its multipath head are in use.
 * rep is filled (empty: not in use); returns 0 or a negative errno (nothing known then). */
int ns_inuse_check_disk(struct ns_root *root, const struct ns_disk *d, struct ns_inuse_report *rep);
/* The same for the disk called name under sys/block, read afresh (the recheck before a removal). */
int ns_inuse_check_name(struct ns_root *root, const char *name, struct ns_inuse_report *rep);
void ns_inuse_report_free(struct ns_inuse_report *rep);
/* One line naming every holder ("mounted at /mnt/a; nvme1n1p2 open by qemu (pid 812)"), the
 * devices other than disk named; NULL when rep is empty or out of memory. */
char *ns_inuse_report_text(const struct ns_inuse_report *rep, const char *disk);

#endif
