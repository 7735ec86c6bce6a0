/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A device as an operator types it -> the disk under /sys/block it means: `nvme0n1`,
 * `/dev/nvme0n1`, a `/dev/disk/by-id/...` (or any /dev/...) link, a partition (`sda1`,
 * `/dev/nvme0n1p2`: its disk). Links are read through the root: on the live root
 * /dev's own links, under a sysroot the tree's dev/ when it has one, else the udev
 * database's `S:` lines (run/udev/data/b<maj>:<min>), which name every link udev made.
 */
#ifndef NUMASTOR_DEVARG_H
#define NUMASTOR_DEVARG_H

struct ns_root;

struct ns_devarg {
	char *disk;	 /* its name under sys/block */
	char *partition; /* the partition named, when the argument was one; else NULL */
};

/* 0, -ENODEV when arg names no disk nor partition of one, -ENOMEM. Free with ns_devarg_free. */
int ns_devarg_resolve(struct ns_root *root, const char *arg, struct ns_devarg *out);
void ns_devarg_free(struct ns_devarg *a);

#endif
