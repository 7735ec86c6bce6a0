/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "model/mpath.h"

#include "read/fabric.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#define LOCAL_DISTANCE 10
#define REMOTE_DISTANCE 20

int ns_mpath_path_node(const struct ns_path *p)
{
	/* nvme-tcp never sets ctrl->numa_node (NUMA_NO_NODE from nvme_init_ctrl): every TCP path is
	 * at local distance to the kernel; rdma takes the IB device's node, fc the local port's,
	 * pci the function's: the carrier's node numastor reads */
	if (p->fabric && (!p->fabric->transport || strcmp(p->fabric->transport, "tcp") == 0 ||
			  strcmp(p->fabric->transport, "loop") == 0))
		return -1;
	if (p->pci)
		return p->pci->numa_node >= 0 || p->pci->numa_node == NS_NODE_UNREAD ? p->pci->numa_node : -1;
	return p->device_node >= 0 ? p->device_node : -1;
}

int ns_mpath_ana_rank(const struct ns_path *p)
{
	if (p->ana_state_state != NS_ATTR_READ)
		return 0; /* no ANA: nvme_mpath_init_identify makes it optimized; unreadable: noted */
	if (strcmp(p->ana_state, "optimized") == 0)
		return 0;
	if (strcmp(p->ana_state, "non-optimized") == 0)
		return 1;
	return 2;
}

/* node_distance(from, to) as the machine's distance files say; without them 10 on the node and
 * 20 off it (the kernel's defaults). */
static int distance(const struct ns_machine *m, int from, int to)
{
	const struct ns_node *a = ns_machine_node(m, from);

	if (a && a->distances)
		for (size_t j = 0; j < m->nnodes && j < a->ndistances; j++)
			if (m->nodes[j].id == to)
				return a->distances[j];
	return from == to ? LOCAL_DISTANCE : REMOTE_DISTANCE;
}

/* How far a path is from node as __nvme_find_path weighs it: a controller without a node
 * (NUMA_NO_NODE) is at LOCAL_DISTANCE from every node. */
static int path_distance(const struct ns_machine *m, int node, const struct ns_path *p)
{
	int pn = ns_mpath_path_node(p);
	return pn < 0 ? LOCAL_DISTANCE : distance(m, node, pn);
}

/* The best ANA rank among the paths (the kernel falls back to non-optimized ones only when no
 * path is optimized); 2 when none is usable. */
static int best_rank(const struct ns_disk *d)
{
	int best = 2;
	for (size_t i = 0; i < d->npaths; i++) {
		int r = ns_mpath_ana_rank(&d->paths[i]);
		best = r < best ? r : best;
	}
	return best;
}

static int serve_all(const struct ns_machine *m, struct ns_disk *d, int best)
{
	for (size_t i = 0; i < d->npaths; i++) {
		struct ns_path *p = &d->paths[i];
		ns_cpuset_clear(&p->serves_nodes);
		p->serves_nodes.known = true;
		p->serves_source = "iopolicy";
		if (best > 1 || ns_mpath_ana_rank(p) != best)
			continue;
		for (size_t n = 0; n < m->nnodes; n++)
			if (ns_cpuset_count(&m->nodes[n].cpus) &&
			    ns_cpuset_set(&p->serves_nodes, (unsigned)m->nodes[n].id) < 0)
				return -ENOMEM;
	}
	return 0;
}

static int serve_nearest(const struct ns_machine *m, struct ns_disk *d, int best)
{
	for (size_t i = 0; i < d->npaths; i++) {
		struct ns_path *p = &d->paths[i];
		ns_cpuset_clear(&p->serves_nodes);
		p->serves_nodes.known = true;
		if (p->numa_nodes_state == NS_ATTR_READ) {
			if (ns_cpuset_copy(&p->serves_nodes, &p->numa_nodes) < 0)
				return -ENOMEM;
			p->serves_source = "kernel";
		} else {
			p->serves_source = "inferred";
		}
	}
	if (best > 1)
		return 0; /* no usable path: none serves a node */
	/* a usable path whose controller's node could not be read (noted by the reader) is not one
	 * the kernel has no node for: the choice cannot be redone, so nothing is inferred */
	for (size_t i = 0; i < d->npaths; i++)
		if (ns_mpath_ana_rank(&d->paths[i]) == best && ns_mpath_path_node(&d->paths[i]) == NS_NODE_UNREAD) {
			for (size_t j = 0; j < d->npaths; j++)
				if (strcmp(d->paths[j].serves_source, "inferred") == 0) {
					d->paths[j].serves_nodes.known = false;
					d->paths[j].serves_source = NULL;
				}
			return 0;
		}
	for (size_t n = 0; n < m->nnodes; n++) {
		int node = m->nodes[n].id, least = INT_MAX;
		if (!ns_cpuset_count(&m->nodes[n].cpus))
			continue; /* a node without CPUs submits no I/O */
		for (size_t i = 0; i < d->npaths; i++) {
			const struct ns_path *p = &d->paths[i];
			int dist = path_distance(m, node, p);
			if (ns_mpath_ana_rank(p) == best && dist < least)
				least = dist;
		}
		for (size_t i = 0; i < d->npaths; i++) {
			struct ns_path *p = &d->paths[i];
			int dist = path_distance(m, node, p);
			if (p->serves_source && strcmp(p->serves_source, "inferred") == 0 &&
			    ns_mpath_ana_rank(p) == best && dist == least &&
			    ns_cpuset_set(&p->serves_nodes, (unsigned)node) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

int ns_mpath_serves(const struct ns_machine *m, struct ns_disk *d)
{
	if (d->kind != NS_DISK_NVME_MULTIPATH || !d->npaths || !d->iopolicy)
		return 0;
	if (strcmp(d->iopolicy, "numa") == 0)
		return serve_nearest(m, d, best_rank(d));
	if (strcmp(d->iopolicy, "round-robin") == 0 || strcmp(d->iopolicy, "queue-depth") == 0)
		return serve_all(m, d, best_rank(d));
	return 0;
}
