/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One device in full (--verbose): its chain device -> PCI -> node, then its queues, IRQs and fix
 * (text-queues.c), and its allocations. */
#define _GNU_SOURCE
#include <string.h>

#include "text-report.h"

static void print_pci(const struct pen *p, const struct ns_path *path)
{
	const struct ns_pci *pci = path->pci;
	char *lc, node[96], module[64] = "";

	if (path->fabric) {
		const struct ns_fabric *fb = path->fabric;
		char *addr = strdup(fb->address ? t(p, fb->address) : "?");
		if (fb->carrier)
			say(p, 2, NULL, "fabric %s %s over %s %s (by %s)", t(p, fb->transport), addr ? addr : "?",
			    fb->carrier_kind, t(p, fb->carrier), fb->carrier_basis ? fb->carrier_basis : "?");
		else
			say(p, 2, NULL, "fabric %s %s: %s", t(p, fb->transport), addr ? addr : "?",
			    fb->reason ? t(p, fb->reason) : "no carrier");
		free(addr);
	}
	if (path->vmbus) {
		const struct ns_vmbus *vb = path->vmbus;
		char *cn = ns_text_cpus(&vb->channel_nodes), *id = strdup(t(p, vb->device_id)), vnode[24];
		if (vb->numa_node >= 0)
			snprintf(vnode, sizeof(vnode), "node %d", vb->numa_node);
		else
			snprintf(vnode, sizeof(vnode), "no node");
		say(p, 2, NULL, "VMBus device %s, %s; %zu channels, their target CPUs on nodes %s", id ? id : "?",
		    vnode, vb->nchannels, cn ? cn : "?");
		free(cn);
		free(id);
	}
	if (!pci) {
		say(p, 2, NULL, "path %s%s%s -> no PCI function%s%s", ns_transport_name(path->transport),
		    path->controller ? " " : "", path->controller ? t(p, path->controller) : "",
		    path->node_device ? ", node from /" : "", path->node_device ? t(p, path->node_device) : "");
		return;
	}
	lc = ns_text_cpus(&pci->local_cpus);
	if (pci->module)
		snprintf(module, sizeof(module), " (%s%s)",
			 pci->module->patched == 1   ? "numastor-patched"
			 : pci->module->patched == 0 ? "stock"
						     : "stock?",
			 pci->module->state == NS_MODULE_BUILTIN ? ", built in" : "");
	if (pci->numa_node == NS_NODE_UNREAD)
		snprintf(node, sizeof(node), "node ?");
	else if (pci->forced == 1)
		snprintf(node, sizeof(node), "node %d %sFORCED%s", pci->numa_node, col(p, C_RED), col(p, C_RESET));
	else if (pci->node_set == 1)
		snprintf(node, sizeof(node), "node %d %sSET%s (not the firmware's)", pci->numa_node, col(p, C_RED),
			 col(p, C_RESET));
	else
		snprintf(node, sizeof(node), "node %d", pci->numa_node);
	char *ctl = strdup(path->controller ? t(p, path->controller) : ""), *addr = strdup(t(p, pci->address));
	char *ven = strdup(pci->vendor ? t(p, pci->vendor + (strncmp(pci->vendor, "0x", 2) ? 0 : 2)) : "?");
	char *dev = strdup(pci->device ? t(p, pci->device + (strncmp(pci->device, "0x", 2) ? 0 : 2)) : "?");
	say(p, 2, NULL, "path %s%s%s -> PCI %s [%s:%s] driver %s%s -> %s, local CPUs %s",
	    ns_transport_name(path->transport), *ctl ? " " : "", ctl, addr, ven, dev,
	    pci->driver ? t(p, pci->driver) : "(none)", module, node, lc);
	free(ctl);
	free(addr);
	free(ven);
	free(dev);
	free(lc);
}

/* A multipath head: its iopolicy, and per path its ANA state, the nodes it serves and how that is
 * known (lib/model/mpath), and its queue depth when the kernel gives it. */
static void print_mpath(const struct pen *p, const struct ns_disk *d)
{
	say(p, 2, NULL, "iopolicy: %s", d->iopolicy ? t(p, d->iopolicy) : "unknown");
	for (size_t i = 0; i < d->npaths; i++) {
		const struct ns_path *path = &d->paths[i];
		const char *disk = path->disk_syspath ? strrchr(path->disk_syspath, '/') : NULL;
		char *ctl = strdup(path->controller ? t(p, path->controller) : "?");
		char *ana = strdup(path->ana_state_state == NS_ATTR_READ ? t(p, path->ana_state) : "unknown");
		char *nodes = path->serves_source ? ns_text_cpus(&path->serves_nodes) : NULL, qd[48] = "";
		if (path->queue_depth_state == NS_ATTR_READ)
			snprintf(qd, sizeof(qd), ", queue depth %ld", path->queue_depth);
		say(p, 2, NULL, "path %s (%s): ANA %s, serves nodes %s (%s)%s", ctl ? ctl : "?",
		    disk ? t(p, disk + 1) : "?", ana ? ana : "?", nodes ? (*nodes ? nodes : "none") : "unknown",
		    path->serves_source ? path->serves_source : "iopolicy unknown", qd);
		free(ctl);
		free(ana);
		free(nodes);
	}
}

static void print_list(const struct pen *p, const char *what, char **v, size_t n)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f;

	if (!n || !(f = open_memstream(&s, &len)))
		return;
	for (size_t i = 0; i < n; i++)
		fprintf(f, " %s", t(p, v[i]));
	fclose(f);
	say(p, 2, NULL, "%s:%s", what, s);
	free(s);
}

void text_disk(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f,
	       const struct ns_vecmove_view *view, const struct ns_disk *d)
{
	char size[32], *name = strdup(t(p, d->name)), *model = NULL, *serial = NULL;
	struct dev_counts dc;
	int sev = text_device_severity(p, f, d->name, &dc);

	ns_text_bytes(size, sizeof(size), d->size_bytes);
	if (d->identity.model)
		model = strdup(t(p, d->identity.model));
	if (d->identity.serial)
		serial = strdup(t(p, d->identity.serial));
	fputc('\n', p->out);
	say(p, 0, NULL, "%s%s%s  %s  %s%s%s%s%s", col(p, sev >= 0 ? sev_color((enum ns_severity)sev) : C_BOLD),
	    name ? name : "?", col(p, C_RESET), ns_disk_kind_name(d->kind), size, model ? "  " : "", model ? model : "",
	    serial ? "  serial " : "", serial ? serial : "");
	free(name);
	free(model);
	free(serial);
	print_list(p, "partitions", d->partitions, d->npartitions);
	print_list(p, "sits on", d->slaves, d->nslaves);
	if (d->backing_file)
		say(p, 2, NULL, "backed by file: %s", t(p, d->backing_file));
	if (ns_disk_is_virtual(d)) {
		say(p, 2, NULL, "virtual device: locality follows what it sits on");
		for (size_t i = 0; i < d->nmembers; i++) {
			char node[32];
			if (d->members[i].node >= 0)
				snprintf(node, sizeof(node), "node %d", d->members[i].node);
			else
				snprintf(node, sizeof(node), "node unknown");
			say(p, 2, NULL, "member %s: %s", t(p, d->members[i].name), node);
		}
		if (d->nhctx) /* a blk-mq loop: its queue, as every queue is shown */
			text_queues(p, sys, f, view, d);
		return;
	}
	for (size_t i = 0; i < d->npaths; i++)
		print_pci(p, &d->paths[i]);
	if (d->kind == NS_DISK_NVME_MULTIPATH)
		print_mpath(p, d);
	if (d->node >= 0)
		say(p, 2, NULL, "node: %s %d", ns_node_source_name(d->node_source), d->node);
	else if (d->node_reason)
		say(p, 2, NULL, "node: %s (%s)", ns_node_source_name(d->node_source), t(p, d->node_reason));
	else
		say(p, 2, NULL, "node: %s", ns_node_source_name(d->node_source));
	text_queues(p, sys, f, view, d);
	text_other_irqs(p, view, d);
	text_fix(p, view, d);
	if (d->alloc.midlayer_basis && d->alloc.host_alloc_basis)
		say(p, 2, NULL, "allocations: per-device structures on %s; midlayer: %s; host (%s): %s",
		    d->alloc.device_basis ? t(p, d->alloc.device_basis) : "?", t(p, d->alloc.midlayer_basis),
		    d->alloc.host_alloc_module ? t(p, d->alloc.host_alloc_module) : "driver unknown",
		    t(p, d->alloc.host_alloc_basis));
	else if (d->alloc.midlayer_basis)
		say(p, 2, NULL, "allocations: per-device structures on %s; midlayer: %s",
		    d->alloc.device_basis ? t(p, d->alloc.device_basis) : "?", t(p, d->alloc.midlayer_basis));
	else
		say(p, 2, NULL, "allocations: per-device structures on %s",
		    d->alloc.device_basis ? t(p, d->alloc.device_basis) : "?");
}
