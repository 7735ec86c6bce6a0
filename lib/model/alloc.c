/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "model/alloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "read/blockdev.h"
#include "read/machine.h"
#include "read/module.h"

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

/*
 * Where the PCI core ran a probe, for a function on node `node` (>= 0): pci_call_probe() runs it
 * through work_on_cpu() on a CPU of the node that is in the housekeeping masks of both workqueues
 * and scheduler domains (6.1, 6.12; 5.10 has one mask for all, which isolcpus= and nohz_full=
 * both set). A CPU in neither cpu/isolated nor cpu/nohz_full is in both masks.
 */
enum probe_cpu {
	PROBE_ON_NODE,	 /* an online housekeeping CPU of the node: the probe ran there */
	PROBE_ELSEWHERE, /* the node has CPUs, each isolated or nohz_full: the calling CPU's */
	PROBE_NO_CPUS,	 /* a CPU-less node: the calling CPU's, on another node */
	PROBE_OFFLINE,	 /* the only housekeeping CPUs are offline now: they may not have been then */
	PROBE_UNKNOWN,	 /* the CPU sets or the node's CPUs are unknown */
};

static enum probe_cpu probe_cpu(const struct ns_machine *m, int node, struct ns_cpuset *hk)
{
	const struct ns_node *n = ns_machine_node(m, node);
	bool offline_hk = false;

	ns_cpuset_clear(hk);
	if (!n || !n->cpus.known || !m->isolated.known || !m->nohz_full.known || !ns_machine_cpu_map_complete(m))
		return PROBE_UNKNOWN;
	hk->known = true;
	ns_cpuset_foreach (cpu, &n->cpus)
		if (!ns_cpuset_test(&m->isolated, (unsigned)cpu) && !ns_cpuset_test(&m->nohz_full, (unsigned)cpu) &&
		    ns_cpuset_set(hk, (unsigned)cpu) < 0)
			return PROBE_UNKNOWN;
	if (ns_cpuset_count(hk))
		return PROBE_ON_NODE;
	ns_cpuset_foreach (cpu, &n->present)
		offline_hk |= !ns_cpuset_test(&n->cpus, (unsigned)cpu) &&
			      !ns_cpuset_test(&m->isolated, (unsigned)cpu) &&
			      !ns_cpuset_test(&m->nohz_full, (unsigned)cpu);
	if (offline_hk)
		return PROBE_OFFLINE;
	if (!ns_cpuset_count(&n->cpus) && !ns_cpuset_count(&n->present))
		return PROBE_NO_CPUS;
	return PROBE_ELSEWHERE;
}

/*
 * Is the SCSI host (hostN) a child of the PCI function itself (or of its ataN port), so that the
 * function's driver allocated it in the probe the PCI core ran? Not for virtio-scsi (virtioN in
 * between), usb-storage (usbN/...), or anything else that hangs below.
 */
static const char *host_parent(const struct ns_disk *d, const struct ns_pci *pci, char *buf, size_t len)
{
	const char *sp = d->paths[0].disk_syspath, *at = strstr(sp, pci->address), *p, *host = NULL;

	if (!at)
		return NULL;
	for (p = at + strlen(pci->address); p && *p == '/'; p = strchr(p + 1, '/')) {
		if (strncmp(p + 1, "host", 4) == 0 && p[5] >= '0' && p[5] <= '9') {
			host = p;
			break;
		}
	}
	if (!host)
		return NULL;
	snprintf(buf, len, "%.*s", (int)(host - at), at);
	return buf;
}

static int host_derive(const struct ns_machine *m, const struct ns_module *host_mod, struct ns_disk *d,
		       const struct ns_pci *pci)
{
	struct ns_alloc *a = &d->alloc;
	char parent[512], *hk_text = NULL;
	const char *under, *mod;
	struct ns_cpuset hk = {0};
	enum probe_cpu where;
	int node, r;

	a->host_alloc_node = -1;
	a->host_alloc_remote = -1;
	if (!pci)
		return asprintf(&a->host_alloc_basis,
				"unknown: no PCI function: the SCSI host's driver allocated it (scsi_host_alloc) in a "
				"probe on a CPU the kernel does not record") < 0
			       ? -ENOMEM
			       : 0;
	under = host_parent(d, pci, parent, sizeof(parent));
	if (d->kind == NS_DISK_SCSI && under && strncmp(under + strlen(pci->address), "/virtio", 7) == 0) {
		a->host_alloc_module = strdup("virtio_scsi");
		if (!a->host_alloc_module)
			return -ENOMEM;
		return asprintf(
			       &a->host_alloc_basis,
			       "unknown: virtio_scsi allocates the host (scsi_host_alloc, plain kzalloc) in its virtio "
			       "probe, which the virtio bus runs on the caller's CPU, not on a CPU of the device's "
			       "node; "
			       "the kernel does not record which") < 0
			       ? -ENOMEM
			       : 0;
	}
	if (!under || (d->kind == NS_DISK_SCSI && strcmp(under, pci->address) != 0) ||
	    (d->kind == NS_DISK_ATA && strncmp(under + strlen(pci->address), "/ata", 4) != 0))
		return asprintf(&a->host_alloc_basis,
				"unknown: the SCSI host is not a child of PCI function %s%s%s: its driver's probe is "
				"not the PCI core's, and runs on a CPU the kernel does not record",
				pci->address, under ? " but of " : "", under ? under : "") < 0
			       ? -ENOMEM
			       : 0;
	mod = host_mod ? host_mod->name : d->kind == NS_DISK_ATA ? "libata" : pci->driver;
	if (mod && !(a->host_alloc_module = strdup(mod)))
		return -ENOMEM;
	if (!mod)
		mod = "the HBA driver";
	node = pci->numa_node;
	if (d->node_source == NS_NODE_SRC_SET)
		return asprintf(&a->host_alloc_basis,
				"unknown: %s allocated the host in its probe (dev_to_node or the probing CPU's node), "
				"and "
				"the function's node %d was set after boot: the node at probe time is unknown",
				mod, node) < 0
			       ? -ENOMEM
			       : 0;
	if (host_mod && host_mod->patched == 1) {
		if (node < 0)
			r = asprintf(&a->host_alloc_basis,
				     "numastor-patched %s: scsi_host_alloc_node(dev_to_node), which is -1: the probing "
				     "CPU's node, which the kernel does not record",
				     mod);
		else {
			a->host_alloc_node = node;
			a->host_alloc_remote = 0;
			r = asprintf(&a->host_alloc_basis,
				     "numastor-patched %s: scsi_host_alloc_node(dev_to_node) = %d", mod, node);
		}
		return r < 0 ? -ENOMEM : 0;
	}
	if (node < 0)
		return asprintf(&a->host_alloc_basis,
				"unknown: %s%s allocates the host with scsi_host_alloc (plain kzalloc) on the probing "
				"CPU's node, and the device %s: the PCI core probes on the calling CPU, which the "
				"kernel "
				"does not record",
				host_mod && host_mod->patched == 0 ? "stock " : "", mod,
				node == -1 ? "has no node (-1)" : "node is unreadable") < 0
			       ? -ENOMEM
			       : 0;
	if (pci->virtfn == 1)
		return asprintf(&a->host_alloc_basis,
				"unknown: %s%s allocates the host on the probing CPU's node, and %s is a virtual "
				"function: when its PF's driver enabled it in its own probe, the PCI core probed it on "
				"the calling CPU, which the kernel does not record",
				host_mod && host_mod->patched == 0 ? "stock " : "", mod, pci->address) < 0
			       ? -ENOMEM
			       : 0;
	where = probe_cpu(m, node, &hk);
	if (where == PROBE_ON_NODE) {
		/* whichever the module: stock on the probing CPU's node, patched on dev_to_node */
		a->host_alloc_node = node;
		a->host_alloc_remote = 0;
		if (ns_cpuset_format(&hk, &hk_text) < 0) {
			ns_cpuset_clear(&hk);
			return -ENOMEM;
		}
		r = asprintf(
			&a->host_alloc_basis,
			"inferred: %s%s allocates the host with scsi_host_alloc (plain kzalloc) on the probing "
			"CPU's node, and the PCI core ran the probe on a CPU of the device's node %d that is neither "
			"isolated nor nohz_full (%s)",
			host_mod && host_mod->patched == 0 ? "stock " : "", mod, node, hk_text);
		free(hk_text);
		ns_cpuset_clear(&hk);
		return r < 0 ? -ENOMEM : 0;
	}
	ns_cpuset_clear(&hk);
	if (!host_mod || host_mod->patched != 0)
		return asprintf(&a->host_alloc_basis,
				"unknown: whether %s is numastor-patched (scsi_host_alloc_node on node %d) or stock "
				"(the probing CPU's node) is unknown",
				mod, node) < 0
			       ? -ENOMEM
			       : 0;
	switch (where) {
	case PROBE_ELSEWHERE:
		a->host_alloc_remote = 1;
		r = asprintf(
			&a->host_alloc_basis,
			"inferred not node %d: stock %s allocates the host with scsi_host_alloc (plain kzalloc) on "
			"the probing CPU's node, and every CPU of node %d is isolated or nohz_full, so the PCI core "
			"probed on the calling CPU, on another node the kernel does not record",
			node, mod, node);
		break;
	case PROBE_NO_CPUS:
		r = asprintf(&a->host_alloc_basis,
			     "unknown: stock %s allocates the host on the probing CPU's node, and node %d has no CPUs: "
			     "the PCI core probed on the calling CPU, on another node the kernel does not record",
			     mod, node);
		break;
	case PROBE_OFFLINE:
		r = asprintf(&a->host_alloc_basis,
			     "unknown: stock %s allocates the host on the probing CPU's node, and node %d's CPUs that "
			     "are neither isolated nor nohz_full are offline now; whether they were at probe time the "
			     "kernel does not record",
			     mod, node);
		break;
	default:
		r = asprintf(&a->host_alloc_basis,
			     "unknown: stock %s allocates the host on the probing CPU's node, and node %d's CPUs or "
			     "the isolated / nohz_full sets are unknown",
			     mod, node);
		break;
	}
	return r < 0 ? -ENOMEM : 0;
}

bool ns_alloc_nvme_node_pools(const struct ns_machine *m)
{
	return ns_machine_kernel_at_least(m, NS_NVME_NODE_POOLS_MAJOR, NS_NVME_NODE_POOLS_MINOR);
}

/*
 * nvme-pci's PRP/SGL descriptors (the lists an I/O's pages are described by): from v6.16 each
 * hardware queue takes them from its hctx's node's pools (hctx->numa_node, the node of the
 * first CPU it serves, as blk-mq places the queue itself). Before, one pair of pools per device
 * on the device's node: device_basis already says so, and nothing is added.
 */
static int descriptors_derive(const struct ns_machine *m, struct ns_disk *d, const struct ns_pci *pci)
{
	struct ns_alloc *a = &d->alloc;

	if (d->kind != NS_DISK_NVME || !pci || !pci->driver || strcmp(pci->driver, "nvme") != 0 ||
	    !ns_alloc_nvme_node_pools(m))
		return 0;
	ns_cpuset_clear(&a->descriptor_nodes);
	if (a->hw_queue_nodes.known && ns_cpuset_copy(&a->descriptor_nodes, &a->hw_queue_nodes) < 0)
		return -ENOMEM;
	a->descriptor_basis =
		ns_fmt(a->hw_queue_nodes.known
			       ? "per-node PRP/SGL descriptor pools (v6.16, d977506f8863): each hardware queue's on "
				 "its queue's node (the node of the first CPU it serves), not the device's"
			       : "per-node PRP/SGL descriptor pools (v6.16, d977506f8863): each hardware queue's on "
				 "its queue's node, which is unknown here");
	return a->descriptor_basis ? 0 : -ENOMEM;
}

int ns_alloc_derive(const struct ns_machine *m, const struct ns_module *scsi_mod, const struct ns_module *host_mod,
		    struct ns_disk *d)
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
		if ((r = host_derive(m, host_mod, d, pci)) < 0)
			return r;
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
	if ((r = descriptors_derive(m, d, pci)) < 0)
		return r;
	return tags_derive(d, pci);
}
