/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The picture of `check --map`: per NUMA node its CPUs and memory, the devices attached to it
 * (or to no known node), and for each device where its interrupts fire, node by node. One
 * picture (built here from the model and the findings), two renderings: text that fits the
 * terminal (output-map.c) and an SVG document (output-svg.c).
 */
#ifndef NUMASTOR_MAP_H
#define NUMASTOR_MAP_H

#include <stdbool.h>
#include <stdio.h>

#include "model/findings.h"
#include "model/system.h"

/* Where one device's interrupts fired on one node: count of the judged basis (lib/read/rates.h). */
struct ns_map_fire {
	int node;
	unsigned long long count;
};

struct ns_map_device {
	const struct ns_disk *disk;
	bool forced;	       /* node_source forced: the node is the driver's, not the firmware's */
	bool misplaced;	       /* a warning or critical finding names it */
	const char **findings; /* the ids of those findings, each once (static strings) */
	size_t nfindings;
	struct ns_map_fire *fires; /* nodes with a count above 0, by node id */
	size_t nfires;
	unsigned long long total; /* sum of the fires' counts: each share is count / total */
	bool counted;		  /* some IRQ behind it had counts to judge */
};

/* A node and its devices; node NULL for the group of devices whose node is unknown. */
struct ns_map_group {
	const struct ns_node *node;
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

/* The text picture, at most width display columns per line; utf8 for block bars. */
void ns_print_map(FILE *out, const struct ns_system *sys, const struct ns_findings *f, int width);
/* The same picture as one SVG document. 0 or -ENOMEM (nothing written then). */
int ns_print_svg(FILE *out, const struct ns_system *sys, const struct ns_findings *f);

#endif
