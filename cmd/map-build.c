/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check --map: the picture (cmd/map.h) built from the model and the findings. Each device's
 * interrupts are summed per node over the IRQs of the PCI functions behind it (a function on two
 * paths once), on the basis the fire-location rule judges (lib/read/rates.h), and split by
 * whether the node is local to the vector: a node of the CPUs the vector's queue serves (the
 * device's node for a queue serving every node, as irq-fires-remote has it), else the
 * device's node (the admin or config vector, a HBA's single vector). A node's CPUs are listed one
 * thread per core when the CPU topology (thread_siblings_list, read through the root) folds them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "numastor.h"
#include "read/rates.h"

static void map_device_free(struct ns_map_device *d)
{
	free(d->findings);
	free(d->shares);
}

void ns_map_free(struct ns_map *map)
{
	for (size_t i = 0; i < map->ndevices; i++)
		map_device_free(&map->devices[i]);
	for (size_t i = 0; i < map->ngroups; i++) {
		free(map->groups[i].devices);
		free(map->groups[i].cpus);
	}
	free(map->devices);
	free(map->groups);
	*map = (struct ns_map){0};
}

int ns_map_percent(const struct ns_map_device *md, unsigned long long count)
{
	return md->total ? (int)((count * 200 + md->total) / (md->total * 2)) : 0;
}

/* The warning and critical findings that name the device, each id once, and the worst severity. */
static int map_findings(const struct ns_findings_index *ix, struct ns_map_device *md)
{
	size_t n;
	const size_t *v = ns_findings_index_of(ix, md->disk->name, &n);

	md->findings = calloc(n + 1, sizeof(*md->findings));
	if (!md->findings)
		return -ENOMEM;
	md->worst = NS_SEV_INFO;
	for (size_t i = 0; i < n; i++) {
		const struct ns_finding *x = &ix->f->v[v[i]];
		bool seen = false;
		if (x->severity < NS_SEV_WARNING)
			continue;
		if (x->severity > md->worst)
			md->worst = x->severity;
		for (size_t k = 0; k < md->nfindings; k++) /* the ids: the rules', a few dozen at most */
			seen |= strcmp(md->findings[k], x->id) == 0;
		if (!seen)
			md->findings[md->nfindings++] = x->id;
	}
	return 0;
}

/* The nodes local to irq on d (ref), as irq-fires-remote judges a queue's vector; false when
 * there is none (unplaced). */
static bool local_nodes(const struct ns_machine *m, const struct ns_disk *d, const struct ns_irq *irq,
			struct ns_cpuset *ref)
{
	struct ns_cpuset qn = {0};
	bool queued = false, ok;

	for (size_t i = 0; i < d->nhctx; i++)
		if (d->hctx[i].irq == irq && ns_hctx_serves_online(&d->hctx[i])) {
			queued = true;
			if (ns_cpuset_or(&qn, &d->hctx[i].nodes) < 0)
				break;
		}
	if (queued && ns_cpuset_count(&qn))
		ok = ns_queue_expected_nodes(m, d->node, &qn, ref);
	else
		ok = d->node >= 0 && ns_cpuset_set(ref, (unsigned)d->node) == 0;
	ns_cpuset_clear(&qn);
	return ok;
}

/* acc[where * nodes + node] grown to cover nodes entries per kind. */
static int grow(unsigned long long **acc, size_t *nacc, size_t nodes)
{
	if (nodes <= *nacc)
		return 0;
	unsigned long long *g = calloc(3 * nodes, sizeof(*g));
	if (!g)
		return -ENOMEM;
	for (size_t w = 0; w < 3; w++)
		for (size_t n = 0; n < *nacc; n++)
			g[w * nodes + n] = (*acc)[w * *nacc + n];
	free(*acc);
	*acc = g;
	*nacc = nodes;
	return 0;
}

static int map_shares(const struct ns_machine *m, const struct ns_disk *d, struct ns_map_device *md)
{
	unsigned long long *acc = NULL;
	size_t nacc = 0;

	for (size_t p = 0; p < d->npaths; p++) {
		const struct ns_pci *pci = d->paths[p].pci;
		bool dup = false;
		for (size_t q = 0; q < p; q++)
			dup |= d->paths[q].pci == pci;
		for (size_t i = 0; pci && !dup && i < pci->nirqs; i++) {
			const struct ns_irq *irq = &pci->irqs[i];
			struct ns_cpuset ref = {0};
			unsigned long long total;
			const unsigned long long *c = ns_irq_judged_counts(irq, &total);
			bool placed;
			if (!c)
				continue;
			md->counted = true;
			if (grow(&acc, &nacc, irq->nper_node) < 0) {
				free(acc);
				return -ENOMEM;
			}
			placed = local_nodes(m, d, irq, &ref);
			for (size_t n = 0; n < irq->nper_node; n++) {
				enum ns_map_where w = !placed				  ? NS_MAP_UNPLACED
						      : ns_cpuset_test(&ref, (unsigned)n) ? NS_MAP_LOCAL
											  : NS_MAP_REMOTE;
				acc[w * nacc + n] += c[n];
			}
			ns_cpuset_clear(&ref);
		}
	}
	md->shares = calloc(3 * nacc + 1, sizeof(*md->shares));
	if (!md->shares) {
		free(acc);
		return -ENOMEM;
	}
	for (size_t n = 0; n < nacc; n++)
		for (size_t w = 0; w < 3; w++) {
			unsigned long long c = acc[w * nacc + n];
			if (!c)
				continue;
			md->shares[md->nshares++] =
				(struct ns_map_share){.node = (int)n, .where = (enum ns_map_where)w, .count = c};
			md->total += c;
			if (w == NS_MAP_LOCAL)
				md->local += c;
		}
	free(acc);
	return 0;
}

/* The node's CPUs, SMT siblings folded when the reader found them so (lib/read/machine.h):
 * "0-27 x2 SMT"; else the cpulist as the reports print it. NULL on -ENOMEM. */
static char *node_cpus(const struct ns_node *node)
{
	char *list, *r = NULL;

	if (!node->smt_threads)
		return ns_text_cpus(&node->cpus);
	list = ns_text_cpus(&node->cores);
	if (list && asprintf(&r, "%s x%u SMT", list, node->smt_threads) < 0)
		r = NULL;
	free(list);
	return r;
}

/* The group of d: its node's, else the no-node group (the last). */
static size_t group_of(const struct ns_machine *m, const struct ns_disk *d)
{
	for (size_t g = 0; d->node >= 0 && g < m->nnodes; g++)
		if (m->nodes[g].id == d->node)
			return g;
	return m->nnodes;
}

int ns_map_build(const struct ns_system *sys, const struct ns_findings *f, struct ns_map *map)
{
	const struct ns_machine *m = &sys->machine;
	struct ns_findings_index ix = {0};
	size_t *of = NULL; /* each device's group */
	int r = -ENOMEM;

	*map = (struct ns_map){0};
	map->devices = calloc(sys->ndisks + 1, sizeof(*map->devices));
	map->groups = calloc(m->nnodes + 1, sizeof(*map->groups));
	of = calloc(sys->ndisks + 1, sizeof(*of));
	if (!map->devices || !map->groups || !of || ns_findings_index_make(f, &ix) < 0)
		goto fail;
	map->ngroups = m->nnodes + 1;
	/* each group's list sized to its devices: not every node's to all of them */
	for (size_t i = 0; i < sys->ndisks; i++)
		map->groups[of[i] = group_of(m, &sys->disks[i])].ndevices++;
	for (size_t g = 0; g < map->ngroups; g++) {
		struct ns_map_group *grp = &map->groups[g];
		grp->node = g < m->nnodes ? &m->nodes[g] : NULL;
		grp->devices = calloc(grp->ndevices + 1, sizeof(*grp->devices));
		grp->ndevices = 0;
		if (!grp->devices)
			goto fail;
		if (grp->node) {
			grp->ncpus = grp->node->cpus.known ? ns_cpuset_count(&grp->node->cpus) : 0;
			if (!(grp->cpus = node_cpus(grp->node)))
				goto fail;
		}
	}
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		struct ns_map_device *md = &map->devices[map->ndevices++];
		struct ns_map_group *grp = &map->groups[of[i]];

		md->disk = d;
		md->forced = d->node_source == NS_NODE_SRC_FORCED;
		if ((r = map_findings(&ix, md)) < 0 || (r = map_shares(m, d, md)) < 0)
			goto fail;
		grp->devices[grp->ndevices++] = md;
	}
	free(of);
	ns_findings_index_free(&ix);
	return 0;
fail:
	free(of);
	ns_findings_index_free(&ix);
	ns_map_free(map);
	return r;
}
