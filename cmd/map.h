/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The picture of `check --map`: it answers "is each device's work local?". Per NUMA node its
 * CPUs (SMT siblings folded) and memory and the devices attached to it (devices whose node is
 * unknown stand apart); per device, where its interrupts fire as a share per node, each share
 * local (a node of the CPUs its queue serves, or the device's node for a vector of no queue or
 * of a queue serving every node), remote, or unplaced (no node to call local), and the worst
 * severity of the findings that name it. One picture (built here from the model and the findings,
 * map-build.c), two renderings: text that fits the terminal, a line per device (output-map.c),
 * and an SVG document, nodes side by side (output-svg.c).
 */
#ifndef NUMASTOR_MAP_H
#define NUMASTOR_MAP_H

#include <stdbool.h>
#include <stdio.h>

#include "model/findings.h"
#include "model/system.h"

enum ns_map_where {
	NS_MAP_LOCAL = 0,
	NS_MAP_REMOTE,
	NS_MAP_UNPLACED, /* the vector has no node to call local: no queue node, no device node */
};

/* One share of a device's interrupts: those that fired on node, local or remote there. */
struct ns_map_share {
	int node;
	enum ns_map_where where;
	unsigned long long count; /* of the judged basis (lib/read/rates.h) */
};

struct ns_map_device {
	const struct ns_disk *disk;
	bool forced;		/* node_source forced: the node is the driver's, not the firmware's */
	enum ns_severity worst; /* of the findings naming it; NS_SEV_INFO: none above info */
	const char **findings;	/* the ids of its warning and critical findings, each once (static) */
	size_t nfindings;
	struct ns_map_share *shares; /* count above 0; by node, then local, remote, unplaced */
	size_t nshares;
	unsigned long long total; /* sum of the shares' counts: each share is count / total */
	unsigned long long local; /* of total, local */
	bool counted;		  /* some IRQ behind it had counts to judge */
};

/* A node and its devices; node NULL for the group of devices whose node is unknown. */
struct ns_map_group {
	const struct ns_node *node;
	char *cpus;	/* the node's CPUs, one thread per core when SMT folds ("0-27 x2 SMT") */
	unsigned ncpus; /* online CPUs */
	struct ns_map_device **devices;
	size_t ndevices;
};

struct ns_map {
	struct ns_map_group *groups; /* the machine's nodes in order, then the no-node group */
	size_t ngroups;
	struct ns_map_device *devices; /* every device of the model, in its order */
	size_t ndevices;
};

/* Build the picture; 0 or -ENOMEM. */
int ns_map_build(const struct ns_system *sys, const struct ns_findings *f, struct ns_map *map);
void ns_map_free(struct ns_map *map);
/* The share as a whole percentage of the device's total (rounded half up). */
int ns_map_percent(const struct ns_map_device *md, unsigned long long count);
/* The no-node group is drawn when it has devices; a node always. */
static inline bool ns_map_group_drawn(const struct ns_map_group *g)
{
	return g->node || g->ndevices;
}

/* The text picture, at most width display columns per line; utf8 for block bars. */
void ns_print_map(FILE *out, const struct ns_system *sys, const struct ns_findings *f, int width);
/* The same picture as one SVG document. 0 or -ENOMEM (nothing written then). */
int ns_print_svg(FILE *out, const struct ns_system *sys, const struct ns_findings *f);

#endif
