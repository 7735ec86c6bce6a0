/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a driver's allocations land. Derived, not read: the kernel keeps no per-object node
 * in sysfs, so numastor applies what the code paths do (see kernel-facts):
 *  - per-device structures follow the device's node (dev_to_node), or the probing CPU's node
 *    when the node is -1;
 *  - SCSI scsi_alloc_sdev/scsi_alloc_target use plain kzalloc on stock kernels: the scanning
 *    CPU's node; a numastor-patched scsi_mod uses dev_to_node(shost->dma_dev);
 *  - a blk-mq hardware queue's memory lives on the node of the first CPU of its cpu_list.
 */
#ifndef NUMASTOR_ALLOC_H
#define NUMASTOR_ALLOC_H

struct ns_module;
struct ns_disk;

int ns_alloc_derive(const struct ns_module *scsi_mod, struct ns_disk *d);

#endif
