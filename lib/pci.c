/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "pci.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ns_pci_is_function(struct ns_root *root, const char *path)
{
	char p[4096], *sub;
	bool yes;

	snprintf(p, sizeof(p), "%s/subsystem", path);
	if (ns_readlink_base(root, p, &sub) < 0)
		return false;
	yes = strcmp(sub, "pci") == 0;
	free(sub);
	return yes;
}

static bool is_bdf(const char *s)
{
	unsigned d, b, dev, f;
	char tail;
	return sscanf(s, "%x:%x:%x.%x%c", &d, &b, &dev, &f, &tail) == 4;
}

static int read_node(struct ns_root *root, const char *dir, struct ns_notes *notes, const char *subj, const char *field)
{
	char p[4096], *raw = NULL;
	long v;
	int r;

	snprintf(p, sizeof(p), "%s/numa_node", dir);
	r = ns_read_long(root, p, &v, &raw);
	if (r == 0 && v < -1)
		r = -EINVAL;
	if (r < 0) {
		if (notes)
			ns_note_read(notes, subj, field, p, r, raw);
		free(raw);
		return NS_NODE_UNREAD;
	}
	return (int)v;
}

static char *read_opt(struct ns_root *root, const char *dir, const char *file, struct ns_notes *notes, const char *subj,
		      const char *field)
{
	char p[4096], *v = NULL;
	int r;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	r = ns_read_str(root, p, &v);
	if (r < 0 && notes)
		ns_note_read(notes, subj, field, p, r, NULL);
	return r < 0 ? NULL : v;
}

/* The root bus node: the node all CPUs in its cpulistaffinity belong to, -1 when they span nodes. */
static int read_bus_node(struct ns_root *root, const struct ns_machine *m, const char *syspath)
{
	char p[4096], bus[64], *txt;
	const char *top = strstr(syspath, "/pci");
	struct ns_cpuset cpus = {0}, nodes = {0};
	int r, node = NS_NODE_UNREAD;

	if (!top || sscanf(top + 4, "%63[0-9a-fA-F:]", bus) != 1)
		return NS_NODE_UNREAD;
	snprintf(p, sizeof(p), "%.*s/pci%s/pci_bus/%s/cpulistaffinity", (int)(top - syspath), syspath, bus, bus);
	r = ns_read_str(root, p, &txt);
	if (r < 0)
		return NS_NODE_UNREAD;
	if (ns_cpuset_parse_list(&cpus, txt) == 0 && ns_machine_nodes_of(m, &cpus, &nodes) == 0) {
		unsigned n = ns_cpuset_count(&nodes);
		node = n == 1 ? ns_cpuset_first(&nodes) : -1;
	}
	free(txt);
	ns_cpuset_clear(&cpus);
	ns_cpuset_clear(&nodes);
	return node;
}

static void read_bridges(struct ns_root *root, struct ns_pci *pci)
{
	/* each path component between "pciDDDD:BB" and the function itself is a bridge */
	char dir[4096];
	const char *p = strstr(pci->syspath, "/pci");
	size_t cap = 0;

	if (!p)
		return;
	p = strchr(p + 1, '/');
	while (p && *p) {
		const char *next = strchr(p + 1, '/');
		size_t len = next ? (size_t)(next - pci->syspath) : strlen(pci->syspath);
		char name[64];
		size_t nl = (size_t)((next ? next : pci->syspath + len) - (p + 1));
		if (!next || nl >= sizeof(name))
			break; /* the last component is the function itself */
		memcpy(name, p + 1, nl);
		name[nl] = '\0';
		if (is_bdf(name)) {
			snprintf(dir, sizeof(dir), "%.*s", (int)len, pci->syspath);
			if (pci->nbridges == cap) {
				size_t nc = cap ? cap * 2 : 4;
				int *nv = realloc(pci->bridge_nodes, nc * sizeof(int));
				if (!nv)
					return;
				pci->bridge_nodes = nv;
				cap = nc;
			}
			pci->bridge_nodes[pci->nbridges++] = read_node(root, dir, NULL, NULL, NULL);
		}
		p = next;
	}
}

/*
 * The seed-000 pattern: the function reads the first memory node while nothing above it has a
 * node (root bus spans nodes, bridges read -1) and no other function on that root bus reads a
 * node: a driver called set_dev_node() (nvme-pci before v6.6 / 6.1.56 does).
 */
static void detect_forced(struct ns_root *root, const struct ns_machine *m, struct ns_pci *pci)
{
	char busdir[4096];
	const char *top = strstr(pci->syspath, "/pci");
	const char *end;
	char **names = NULL;
	size_t n = 0;
	unsigned siblings_without = 0;

	if (pci->numa_node == NS_NODE_UNREAD || !ns_machine_multi_node(m)) {
		pci->forced = -1;
		if (pci->numa_node == -1)
			pci->forced = 0;
		return;
	}
	if (pci->numa_node < 0 || pci->numa_node != m->first_memory_node) {
		pci->forced = 0;
		return;
	}
	if (pci->bus_node != -1) {
		/* the bus says where it is (or we could not read it) */
		pci->forced = pci->bus_node == NS_NODE_UNREAD ? -1 : 0;
		return;
	}
	for (size_t i = 0; i < pci->nbridges; i++)
		if (pci->bridge_nodes[i] != -1) {
			pci->forced = 0;
			return;
		}
	/* other functions directly on the root bus: do any of them have a node? */
	end = top ? strchr(top + 1, '/') : NULL;
	if (!end) {
		pci->forced = -1;
		return;
	}
	snprintf(busdir, sizeof(busdir), "%.*s", (int)(end - pci->syspath), pci->syspath);
	if (ns_list_dir(root, busdir, &names, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			char dir[4096];
			int node;
			if (!is_bdf(names[i]) || strcmp(names[i], pci->address) == 0)
				continue;
			snprintf(dir, sizeof(dir), "%s/%s", busdir, names[i]);
			node = read_node(root, dir, NULL, NULL, NULL);
			if (node >= 0 && node != pci->numa_node) {
				/* a sibling on another node: the firmware does describe this bus */
				pci->forced = 0;
				ns_strv_free(names, n);
				return;
			} else if (node == -1) {
				siblings_without++;
			}
		}
		ns_strv_free(names, n);
	}
	pci->forced = 1;
	if (asprintf(&pci->forced_evidence,
		     "numa_node reads %d (the first memory node) while root bus %.*s spans every node, "
		     "%zu bridge(s) above read -1 and %u other function(s) on the bus read -1; "
		     "driver %s set the node",
		     pci->numa_node, (int)(end - top - 4), top + 4, pci->nbridges, siblings_without,
		     pci->driver ? pci->driver : "(none)") < 0)
		pci->forced_evidence = NULL;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* nvme vectors are named nvme<ctl>q<N>: queue N serves hctx N-1. */
static int nvme_queue_of(const char *name)
{
	const char *q;
	char *end;
	long v;

	if (!name || strncmp(name, "nvme", 4) != 0)
		return -1;
	q = strchr(name + 4, 'q');
	if (!q || !isdigit((unsigned char)q[1]))
		return -1;
	v = strtol(q + 1, &end, 10);
	return *end ? -1 : (int)v;
}

/* virtio vectors: virtio<N>-req.<q> (virtio-blk) or virtio<N>-request (virtio-scsi, in order). */
static void pair_virtio(struct ns_pci *pci)
{
	int next_request = 0;

	for (size_t i = 0; i < pci->nirqs; i++) {
		const char *name = pci->irqs[i].name, *vq;
		if (!name || strncmp(name, "virtio", 6) != 0 || !(vq = strchr(name, '-')))
			continue;
		vq++;
		if (strncmp(vq, "req.", 4) == 0 && isdigit((unsigned char)vq[4]))
			pci->irqs[i].hw_queue = atoi(vq + 4);
		else if (strcmp(vq, "request") == 0 || strncmp(vq, "request.", 8) == 0)
			pci->irqs[i].hw_queue = next_request++;
	}
}

static void read_irqs(struct ns_root *root, const struct ns_machine *m, struct ns_pci *pci, struct ns_notes *notes)
{
	char p[4096];
	char **names = NULL;
	size_t n = 0;
	int *nums = NULL;
	size_t nnums = 0;
	bool msi = true, debugfs;

	snprintf(p, sizeof(p), "%s/msi_irqs", pci->syspath);
	if (ns_list_dir(root, p, &names, &n) == 0 && n > 0) {
		nums = calloc(n, sizeof(int));
		for (size_t i = 0; nums && i < n; i++) {
			char *end;
			long v = strtol(names[i], &end, 10);
			if (*end || v < 0)
				continue;
			nums[nnums++] = (int)v;
		}
		ns_strv_free(names, n);
	} else {
		long v;
		ns_strv_free(names, n);
		msi = false;
		snprintf(p, sizeof(p), "%s/irq", pci->syspath);
		if (ns_read_long(root, p, &v, NULL) == 0 && v > 0) {
			nums = calloc(1, sizeof(int));
			if (nums)
				nums[nnums++] = (int)v;
		}
	}
	if (!nums)
		return;
	debugfs = ns_exists(root, "sys/kernel/debug/irq/irqs");
	qsort(nums, nnums, sizeof(int), cmp_int);
	pci->irqs = calloc(nnums ? nnums : 1, sizeof(*pci->irqs));
	if (!pci->irqs) {
		free(nums);
		return;
	}
	for (size_t i = 0; i < nnums; i++) {
		struct ns_irq *irq = &pci->irqs[pci->nirqs];
		int r = ns_irq_read(root, m, nums[i], msi, debugfs, irq, notes);
		if (r == -ENOENT) {
			char subj[32];
			snprintf(subj, sizeof(subj), "irq %d", nums[i]);
			ns_note(notes, subj, "irq", "listed in /%s/msi_irqs but gone from /proc/irq: skipped",
				pci->syspath);
			continue;
		}
		if (r < 0)
			continue;
		irq->queue_of_ctl = nvme_queue_of(irq->name);
		if (pci->driver && strcmp(pci->driver, "nvme") == 0 && irq->queue_of_ctl > 0)
			irq->hw_queue = irq->queue_of_ctl - 1;
		pci->nirqs++;
	}
	free(nums);
	if (pci->driver && strncmp(pci->driver, "virtio", 6) == 0)
		pair_virtio(pci);
	for (size_t i = 0; i < pci->nirqs; i++)
		ns_irq_guess_managed(&pci->irqs[i], pci->driver, (unsigned)pci->nirqs);
}

int ns_pci_read(struct ns_root *root, const struct ns_machine *m, struct ns_modules *mods, const char *syspath,
		struct ns_pci *pci, struct ns_notes *notes)
{
	const char *base = strrchr(syspath, '/');
	char p[4096], *txt;
	int r;

	memset(pci, 0, sizeof(*pci));
	pci->syspath = strdup(syspath);
	pci->address = strdup(base ? base + 1 : syspath);
	if (!pci->syspath || !pci->address)
		return -ENOMEM;
	pci->vendor = read_opt(root, syspath, "vendor", notes, pci->address, "pci.vendor");
	pci->device = read_opt(root, syspath, "device", notes, pci->address, "pci.device");
	pci->class_code = read_opt(root, syspath, "class", notes, pci->address, "pci.class");
	snprintf(p, sizeof(p), "%s/driver", syspath);
	r = ns_readlink_base(root, p, &pci->driver);
	if (r < 0 && r != -ENOENT)
		ns_note_read(notes, pci->address, "pci.driver", p, r, NULL);
	if (pci->driver)
		ns_modules_lookup(mods, pci->driver, notes, &pci->module);
	pci->numa_node = read_node(root, syspath, notes, pci->address, "pci.numa_node");
	if (pci->numa_node >= 0 && !ns_machine_node(m, pci->numa_node)) {
		ns_note(notes, pci->address, "pci.numa_node",
			"/%s/numa_node names node %d, which this machine does not have", syspath, pci->numa_node);
		pci->numa_node = NS_NODE_UNREAD;
	}
	snprintf(p, sizeof(p), "%s/local_cpulist", syspath);
	if ((r = ns_read_str(root, p, &txt)) == 0) {
		if (ns_cpuset_parse_list(&pci->local_cpus, txt) < 0)
			ns_note_read(notes, pci->address, "pci.local_cpus", p, -EINVAL, txt);
		free(txt);
	} else {
		ns_note_read(notes, pci->address, "pci.local_cpus", p, r, NULL);
	}
	pci->bus_node = read_bus_node(root, m, syspath);
	read_bridges(root, pci);
	detect_forced(root, m, pci);
	read_irqs(root, m, pci, notes);
	return 0;
}

void ns_pci_free(struct ns_pci *pci)
{
	free(pci->address);
	free(pci->syspath);
	free(pci->vendor);
	free(pci->device);
	free(pci->class_code);
	free(pci->driver);
	ns_cpuset_clear(&pci->local_cpus);
	free(pci->bridge_nodes);
	free(pci->forced_evidence);
	for (size_t i = 0; i < pci->nirqs; i++)
		ns_irq_free(&pci->irqs[i]);
	free(pci->irqs);
	memset(pci, 0, sizeof(*pci));
}

const struct ns_irq *ns_pci_irq_for_queue(const struct ns_pci *pci, int q)
{
	for (size_t i = 0; i < pci->nirqs; i++)
		if (pci->irqs[i].hw_queue == q)
			return &pci->irqs[i];
	return NULL;
}
