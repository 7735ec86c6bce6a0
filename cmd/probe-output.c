/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "probe-output.h"

#include <stdio.h>
#include <stdlib.h>

void ns_probe_fmt_count(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

void ns_probe_fmt_us(char *buf, size_t len, uint64_t ns)
{
	if (ns >= 10000000)
		snprintf(buf, len, "%.0fms", (double)ns / 1e6);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.1fms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.0fus", (double)ns / 1e3);
}

struct json_object *ns_probe_jdouble(double v, int decimals)
{
	char txt[48];
	snprintf(txt, sizeof(txt), "%.*f", decimals, v);
	return json_object_new_double_s(strtod(txt, NULL), txt);
}

struct json_object *ns_probe_run_json(const struct ns_system *sys, const struct ns_probe_node_run *r)
{
	struct json_object *o = json_object_new_object(), *lat = json_object_new_object(), *irq;
	const struct ns_hist *h = &r->res.latency_ns;

	json_object_object_add(o, "node", json_object_new_int(r->node));
	json_object_object_add(o, "cpus", r->cpus ? json_object_new_string(r->cpus) : NULL);
	json_object_object_add(o, "ios", json_object_new_int64((int64_t)r->res.ios));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)r->res.bytes));
	json_object_object_add(o, "seconds", ns_probe_jdouble(r->res.seconds, 3));
	json_object_object_add(o, "iops", ns_probe_jdouble(ns_probe_iops(r), 1));
	json_object_object_add(
		o, "mb_per_s",
		ns_probe_jdouble(r->res.seconds > 0 ? (double)r->res.bytes / r->res.seconds / 1e6 : 0, 2));
	json_object_object_add(lat, "p50", ns_probe_jdouble((double)ns_hist_percentile(h, 50) / 1e3, 1));
	json_object_object_add(lat, "p99", ns_probe_jdouble((double)ns_hist_percentile(h, 99) / 1e3, 1));
	json_object_object_add(lat, "p99_9", ns_probe_jdouble((double)ns_hist_percentile(h, 99.9) / 1e3, 1));
	json_object_object_add(lat, "mean", ns_probe_jdouble(ns_hist_mean(h) / 1e3, 1));
	json_object_object_add(lat, "max", ns_probe_jdouble(h->count ? (double)h->max / 1e3 : 0, 1));
	json_object_object_add(o, "latency_us", lat);
	json_object_object_add(o, "stopped", json_object_new_boolean(r->res.stopped));
	if (r->irq_known) {
		struct json_object *a = json_object_new_array();
		irq = json_object_new_object();
		json_object_object_add(irq, "total", json_object_new_int64((int64_t)r->irq_total));
		for (size_t n = 0; n < sys->machine.nnodes; n++) {
			struct json_object *c = json_object_new_object();
			int id = sys->machine.nodes[n].id;
			json_object_object_add(c, "node", json_object_new_int(id));
			json_object_object_add(
				c, "count",
				json_object_new_int64(
					(int64_t)((size_t)id < r->nirq_by_node ? r->irq_by_node[id] : 0)));
			json_object_array_add(a, c);
		}
		json_object_object_add(irq, "counts_by_node", a);
	} else {
		irq = NULL;
	}
	json_object_object_add(o, "interrupts", irq);
	return o;
}

void ns_probe_fmt_irqs(char *buf, size_t len, const struct ns_system *sys, const struct ns_probe_node_run *r)
{
	size_t off = 0;

	if (!r->irq_known) {
		snprintf(buf, len, "-");
		return;
	}
	buf[0] = '\0';
	for (size_t n = 0; n < sys->machine.nnodes && off < len; n++) {
		char c[16];
		int id = sys->machine.nodes[n].id;
		ns_probe_fmt_count(c, sizeof(c), (double)((size_t)id < r->nirq_by_node ? r->irq_by_node[id] : 0));
		off += (size_t)snprintf(buf + off, len - off, "%s%d:%s", n ? " " : "", id, c);
	}
}

void ns_probe_progress_line(const char *prefix, const char *disk, int node, double elapsed, double seconds,
			    uint64_t ios)
{
	fprintf(stderr, "\r\033[K%s%s from node %d: %4.1f/%.1f s, %.0f IOPS", prefix, disk, node, elapsed, seconds,
		elapsed > 0 ? (double)ios / elapsed : 0.0);
	fflush(stderr);
}
