/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a driver's allocations land. Derived, not read: the kernel keeps no per-object node
 * in sysfs, so numastor applies what the code paths do (see kernel-facts):
 *  - per-device structures follow the device's node (dev_to_node), or the probing CPU's node
 *    when the node is -1;
 *  - SCSI scsi_alloc_sdev/scsi_alloc_target use plain kzalloc on stock kernels: the scanning
 *    CPU's node; a numastor-patched scsi_mod uses dev_to_node(shost->dma_dev);
 *  - a blk-mq hardware queue's memory lives on the node of the first CPU of its cpu_list;
 *  - the Scsi_Host with the HBA driver's private data comes from scsi_host_alloc (plain kzalloc in
 *    the driver's probe): the probing CPU's node, which the PCI core picks on the function's node
 *    among the CPUs that are neither isolated nor nohz_full; a numastor-patched HBA module (libata
 *    for ATA) uses scsi_host_alloc_node(dev_to_node);
 *  - nvme-pci's PRP/SGL descriptor pools: one pair per device on its node (dma_pool_create)
 *    until v6.16, then one pair per NUMA node, each queue using its hctx's node's
 *    (d977506f8863, nvme_setup_descriptor_pools(dev, hctx->numa_node)): the queue's node.
 */
#ifndef NUMASTOR_ALLOC_H
#define NUMASTOR_ALLOC_H

#include <stdbool.h>

struct ns_machine;
struct ns_module;
struct ns_disk;

/* scsi_mod: the midlayer's module; host_mod: the module that calls scsi_host_alloc for a SCSI or
 * ATA disk (the HBA driver's, libata for ATA); either NULL when unknown or not applicable. */
/* The first kernel whose nvme-pci keeps its descriptor pools per NUMA node (d977506f8863). */
#define NS_NVME_NODE_POOLS_MAJOR 6
#define NS_NVME_NODE_POOLS_MINOR 16
bool ns_alloc_nvme_node_pools(const struct ns_machine *m);

int ns_alloc_derive(const struct ns_machine *m, const struct ns_module *scsi_mod, const struct ns_module *host_mod,
		    struct ns_disk *d);

#endif
