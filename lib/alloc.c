/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "alloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockdev.h"
#include "module.h"

static bool scsi_mod_patched(const struct ns_module *scsi_mod)
{
	return scsi_mod && scsi_mod->patched == 1;
}

/*
 * Whether the disk's hardware queues share one tag set (BLK_MQ_F_TAG_HCTX_SHARED, a SCSI host
 * with host_tagset): blk-mq's debugfs hctx flags as the reader found them; without them, nvme
 * and virtio-blk never set it; anything else is unknown (6.1 shows host_tagset nowhere in sysfs).
 */
static void shared_tags(struct ns_disk *d, const struct ns_pci *pci)
{
	struct ns_alloc *a = &d->alloc;

	a->shared_tags = -1;
	a->shared_tags_source = "unknown";
	if (d->hctx_tags_shared >= 0) {
		a->shared_tags = d->hctx_tags_shared;
		a->shared_tags_source = "debugfs";
	} else if (d->kind == NS_DISK_NVME || d->kind == NS_DISK_NVME_MULTIPATH || d->kind == NS_DISK_VIRTIO_BLK ||
		   (pci && pci->driver && strcmp(pci->driver, "nvme") == 0)) {
		a->shared_tags = 0;
		a->shared_tags_source = "driver";
	}
}

static int tags_derive(struct ns_disk *d, const struct ns_pci *pci)
{
	struct ns_alloc *a = &d->alloc;
	int r;

	shared_tags(d, pci);
	ns_cpuset_clear(&a->tags_nodes);
	if (d->nhctx == 0)
		return asprintf(&a->tags_basis, "no blk-mq hardware queues") < 0 ? -ENOMEM : 0;
	if (a->shared_tags == 0) {
		/* blk_mq_alloc_rq_map: node of the queue's first CPU (blk_mq_hw_queue_to_node) */
		if (ns_cpuset_copy(&a->tags_nodes, &a->hw_queue_nodes) < 0)
			return -ENOMEM;
		r = asprintf(&a->tags_basis, "a tag set per hardware queue (%s), each on its queue's node",
			     a->shared_tags_source);
	} else if (a->shared_tags == 1 && pci && pci->numa_node >= 0) {
		/* one set->shared_tags allocated on set->numa_node = dev_to_node(dma_dev) */
		a->tags_nodes.known = true;
		if (ns_cpuset_set(&a->tags_nodes, (unsigned)pci->numa_node) < 0)
			return -ENOMEM;
		r = asprintf(&a->tags_basis,
			     "one tag set shared by the host's hardware queues (host_tagset, debugfs), on the "
			     "HBA's node %d (dev_to_node)",
			     pci->numa_node);
	} else if (a->shared_tags == 1) {
		r = asprintf(&a->tags_basis, "one tag set shared by the host's hardware queues (host_tagset, "
					     "debugfs), on dev_to_node = -1: the allocating CPU's node, which the "
					     "kernel does not record");
	} else {
		r = asprintf(&a->tags_basis,
			     "unknown: whether the host shares one tag set across its hardware queues "
			     "(host_tagset) shows only in debugfs (block/%s/hctxN/flags): either each queue's "
			     "node or the HBA's",
			     d->name);
	}
	return r < 0 ? -ENOMEM : 0;
}

int ns_alloc_derive(const struct ns_module *scsi_mod, struct ns_disk *d)
{
	struct ns_alloc *a = &d->alloc;
	const struct ns_pci *pci = d->npaths ? d->paths[0].pci : NULL;
	int r;

	a->device_node = -1;
	a->midlayer_node = -1;
	if (d->kind == NS_DISK_NVME_MULTIPATH) {
		r = asprintf(&a->device_basis, "the multipath head has no device node of its own; each path's "
					       "controller allocates on its function's node");
	} else if (!pci) {
		r = asprintf(&a->device_basis, "the allocating CPU's node (no PCI function)");
	} else if (pci->numa_node >= 0 && pci->forced == 1) {
		a->device_node = pci->numa_node;
		r = asprintf(&a->device_basis, "node %d, forced: %s allocated with dev_to_node() after setting it",
			     pci->numa_node, pci->driver ? pci->driver : "the driver");
	} else if (pci->numa_node >= 0) {
		a->device_node = pci->numa_node;
		r = asprintf(&a->device_basis, "node %d, the device's (dev_to_node)", pci->numa_node);
	} else {
		r = asprintf(&a->device_basis,
			     "the probing CPU's node (device node -1; the kernel does not record which)");
	}
	if (r < 0)
		return -ENOMEM;

	if (d->kind == NS_DISK_SCSI || d->kind == NS_DISK_ATA) {
		if (scsi_mod_patched(scsi_mod) && (!pci || pci->numa_node < 0)) {
			r = asprintf(&a->midlayer_basis,
				     "numastor-patched scsi_mod: scsi_alloc_sdev/scsi_alloc_target on "
				     "dev_to_node(dma_dev), which is -1: the scanning CPU's node");
		} else if (scsi_mod_patched(scsi_mod)) {
			a->midlayer_node = pci->numa_node;
			r = asprintf(&a->midlayer_basis,
				     "numastor-patched scsi_mod: scsi_alloc_sdev/scsi_alloc_target on "
				     "dev_to_node(dma_dev) = %d",
				     pci->numa_node);
		} else {
			/* scsi_mod.scan as the reader found it; Debian builds CONFIG_SCSI_SCAN_ASYNC=y */
			const char *scan = d->scsi_scan;
			if (scan && strcmp(scan, "sync") == 0 && pci && pci->numa_node >= 0) {
				a->midlayer_node = pci->numa_node;
				r = asprintf(&a->midlayer_basis,
					     "stock scsi_mod, scan=sync: scsi_alloc_sdev/scsi_alloc_target use the "
					     "scanning CPU's node; the first scan runs in the HBA's probe, on node "
					     "%d; rescans run elsewhere",
					     pci->numa_node);
			} else if (scan && strcmp(scan, "sync") == 0) {
				r = asprintf(&a->midlayer_basis,
					     "stock scsi_mod, scan=sync: scsi_alloc_sdev/scsi_alloc_target use the "
					     "scanning CPU's node, and the HBA has no node (-1): unknown");
			} else if (scan) {
				r = asprintf(&a->midlayer_basis,
					     "stock scsi_mod, scan=%s: scsi_alloc_sdev/scsi_alloc_target use the "
					     "scanning CPU's node, and %s; the kernel does not record which: unknown",
					     scan,
					     strcmp(scan, "async") == 0 ? "an async scan runs on a worker's CPU"
									: "scans run from whoever starts them");
			} else {
				r = asprintf(&a->midlayer_basis,
					     "stock scsi_mod: scsi_alloc_sdev/scsi_alloc_target use the scanning "
					     "CPU's node, and the scan mode (sys/module/scsi_mod/parameters/scan) "
					     "is unreadable: unknown");
			}
		}
		if (r < 0)
			return -ENOMEM;
	}
	ns_cpuset_clear(&a->hw_queue_nodes);
	a->hw_queue_nodes.known = true;
	for (size_t i = 0; i < d->nhctx; i++)
		if (d->hctx[i].memory_node >= 0 &&
		    ns_cpuset_set(&a->hw_queue_nodes, (unsigned)d->hctx[i].memory_node) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < d->nhctx; i++)
		if (!d->hctx[i].nodes.known) {
			/* a queue whose CPUs' nodes are unknown: so is where its structures went */
			ns_cpuset_clear(&a->hw_queue_nodes);
			break;
		}
	return tags_derive(d, pci);
}
