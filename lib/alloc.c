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
		} else if (pci && pci->numa_node >= 0) {
			a->midlayer_node = pci->numa_node;
			r = asprintf(
				&a->midlayer_basis,
				"stock scsi_mod: scsi_alloc_sdev/scsi_alloc_target use the scanning CPU's node; the "
				"first probe runs on node %d, rescans and async scans run elsewhere",
				pci->numa_node);
		} else {
			r = asprintf(&a->midlayer_basis,
				     "stock scsi_mod: scsi_alloc_sdev/scsi_alloc_target use the scanning CPU's node");
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
	return 0;
}
