/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NVMe multipath: which nodes each path of a namespace head serves, and on what basis. */
#ifndef NUMASTOR_MPATH_H
#define NUMASTOR_MPATH_H

#include "read/blockdev.h"
#include "read/machine.h"

/*
 * Fill each path's serves_nodes and serves_source for a multipath head d (other disks are left
 * alone):
 * - "kernel": the path's numa_nodes (6.15 on, iopolicy numa), as the kernel printed it: the
 *   nodes whose cached current path it is (a node that has done no I/O through the head since
 *   the last path change is in no path's list);
 * - "inferred": iopolicy numa without the kernel's word (older kernels, or the file unreadable):
 *   __nvme_find_path's choice redone from the paths' controllers' nodes and ANA states: each
 *   node with CPUs takes the usable paths (optimized, else non-optimized) at the least distance
 *   (a controller without a node counts as local, as in the kernel); paths tied there each
 *   serve it (the kernel takes the first of its list, which sysfs does not show);
 * - "iopolicy": round-robin or queue-depth: each usable path serves every node with CPUs;
 * - NULL (serves_nodes unknown): the iopolicy unknown or another.
 * Returns 0 or -ENOMEM.
 */
int ns_mpath_serves(const struct ns_machine *m, struct ns_disk *d);

/* The node of a path's controller as the kernel's path choice uses it (ctrl->numa_node: its PCI
 * function's numa_node; over fabrics the carrier's for rdma and fc, none for tcp and loop, which
 * never set one; else the device's that has one), -1 none, NS_NODE_UNREAD when the function's
 * numa_node could not be read (noted by the reader; the choice cannot be redone then). */
int ns_mpath_path_node(const struct ns_path *p);

/* A path's ANA rank: 0 optimized (also without ANA: the kernel then treats it as optimized, and
 * when the state could not be read), 1 non-optimized, 2 not usable (inaccessible, ...). */
int ns_mpath_ana_rank(const struct ns_path *p);

#endif
