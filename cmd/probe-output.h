/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What numastor probe and fix --probe print of a measurement (lib/probe/probe.h): figures for the
 * text tables, and each node's run as JSON (schema/numastor-probe.schema.json's run). */
#ifndef NUMASTOR_PROBE_OUTPUT_H
#define NUMASTOR_PROBE_OUTPUT_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "probe/probe.h"
#include "model/system.h"

/* "315.2k", "1.20M": a count in at most 7 columns */
void ns_probe_fmt_count(char *buf, size_t len, double v);
/* "95us", "1.2ms", "40ms" */
void ns_probe_fmt_us(char *buf, size_t len, uint64_t ns);
/* v with `decimals` digits after the point, serialized as written */
struct json_object *ns_probe_jdouble(double v, int decimals);
/* "0:945.1k 1:0" of a run's interrupts per node, "-" when unknown */
void ns_probe_fmt_irqs(char *buf, size_t len, const struct ns_system *sys, const struct ns_probe_node_run *r);
/* The progress line on stderr (a terminal's: the callers decide): "\r<prefix>DISK from node N:
 * 1.2/3.0 s, 12345 IOPS", the line cleared first. */
void ns_probe_progress_line(const char *prefix, const char *disk, int node, double elapsed, double seconds,
			    uint64_t ios);
struct json_object *ns_probe_run_json(const struct ns_system *sys, const struct ns_probe_node_run *r);

/* numastor probe's options (cmd/probe.c) and its report of devs (cmd/probe-report.c) */
struct probe_opts {
	double seconds;
	unsigned block_size, iodepth, jobs;
	const char *nodes_arg;
	bool json;
};
void probe_print_text(const struct probe_opts *o, const struct ns_system *sys, const struct ns_probe_disk *devs,
		      size_t ndevs, int virt);
void probe_print_json(const struct probe_opts *o, struct ns_root *root, const struct ns_system *sys,
		      const struct ns_probe_disk *devs, size_t ndevs, int virt, int code);

#endif
