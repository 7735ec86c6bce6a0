/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor probe's report: the per-node table of each device, or the JSON document
 * (schema/numastor-probe.schema.json). */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "numastor.h"
#include "out/json.h"
#include "probe-output.h"
#include "read/irq.h"
#include "textwrap.h"

#define PROBE_SCHEMA_VERSION 1

void probe_print_text(const struct probe_opts *o, const struct ns_system *sys, const struct ns_probe_disk *devs,
		      size_t ndevs, int virt)
{
	char bs[16];
	if (o->block_size % (1024 * 1024) == 0)
		snprintf(bs, sizeof(bs), "%um", o->block_size / (1024 * 1024));
	else if (o->block_size % 1024 == 0)
		snprintf(bs, sizeof(bs), "%uk", o->block_size / 1024);
	else
		snprintf(bs, sizeof(bs), "%u", o->block_size);
	printf("%s random reads, iodepth %u, %u job%s per node, %.1f s per node and device\n", bs, o->iodepth, o->jobs,
	       o->jobs == 1 ? "" : "s", o->seconds);
	if (virt == 1) /* prose: 80 columns, as every line of the text report */
		tw_wrap(&(struct tw_page){.out = stdout}, 80, 0, 2, NULL,
			"under a hypervisor: absolute IOPS and latency say little; the ratio between nodes and "
			"where interrupts fire still hold");
	printf("\n%-10s %4s %-9s %7s %7s %7s %7s %7s  %s\n", "DEVICE", "NODE", "CPUS", "IOPS", "MB/s", "p50", "p99",
	       "p99.9", "IRQS BY NODE");
	for (size_t i = 0; i < ndevs; i++) {
		const struct ns_probe_disk *d = &devs[i];
		for (size_t k = 0; k < d->nruns; k++) {
			const struct ns_probe_node_run *r = &d->runs[k];
			char iops[16], p50[16], p99[16], p999[16], mbs[16], irqs[256];
			ns_probe_fmt_count(iops, sizeof(iops), ns_probe_iops(r));
			snprintf(mbs, sizeof(mbs), "%.0f",
				 r->res.seconds > 0 ? (double)r->res.bytes / r->res.seconds / 1e6 : 0);
			ns_probe_fmt_us(p50, sizeof(p50), ns_hist_percentile(&r->res.latency_ns, 50));
			ns_probe_fmt_us(p99, sizeof(p99), ns_hist_percentile(&r->res.latency_ns, 99));
			ns_probe_fmt_us(p999, sizeof(p999), ns_hist_percentile(&r->res.latency_ns, 99.9));
			ns_probe_fmt_irqs(irqs, sizeof(irqs), sys, r);
			printf("%-10s %4d %-9s %7s %7s %7s %7s %7s  %s\n", k ? "" : d->disk->name, r->node,
			       r->cpus ? r->cpus : "?", iops, mbs, p50, p99, p999, irqs);
		}
		if (d->nruns > 1)
			printf("%-10s worst/best %.2f\n", "",
			       ns_probe_iops(&d->runs[d->best]) > 0
				       ? ns_probe_iops(&d->runs[d->worst]) / ns_probe_iops(&d->runs[d->best])
				       : 0);
	}
	for (size_t i = 0; i < ndevs; i++) {
		const struct ns_probe_disk *d = &devs[i];
		if (!d->gap)
			continue;
		printf("\nwarning probe-node-gap %s: from node %d it reads %.0f%% slower than from node %d (%.0f vs "
		       "%.0f "
		       "IOPS)\n  remedy: `numastor check %s` says where its device, interrupts and queues sit; "
		       "`numastor fix --probe` moves what user space may move and measures again\n",
		       d->disk->name, d->runs[d->worst].node,
		       100.0 * (1 - ns_probe_iops(&d->runs[d->worst]) / ns_probe_iops(&d->runs[d->best])),
		       d->runs[d->best].node, ns_probe_iops(&d->runs[d->worst]), ns_probe_iops(&d->runs[d->best]),
		       d->disk->name);
	}
}

void probe_print_json(const struct probe_opts *o, struct ns_root *root, const struct ns_system *sys,
		      const struct ns_probe_disk *devs, size_t ndevs, int virt, int code)
{
	struct json_object *doc = ns_json_envelope(root, PROBE_SCHEMA_VERSION), *params = json_object_new_object();
	struct json_object *ds = json_object_new_array(), *fs = json_object_new_array();

	json_object_object_add(params, "block_size", json_object_new_int((int)o->block_size));
	json_object_object_add(params, "iodepth", json_object_new_int((int)o->iodepth));
	json_object_object_add(params, "jobs", json_object_new_int((int)o->jobs));
	json_object_object_add(params, "seconds", ns_probe_jdouble(o->seconds, 3));
	json_object_object_add(params, "rw", json_object_new_string("randread"));
	json_object_object_add(params, "direct", json_object_new_boolean(true));
	json_object_object_add(doc, "parameters", params);
	json_object_object_add(doc, "virtualized", virt < 0 ? NULL : json_object_new_boolean(virt == 1));
	for (size_t i = 0; i < ndevs; i++) {
		const struct ns_probe_disk *d = &devs[i];
		struct json_object *dj = json_object_new_object(), *runs = json_object_new_array();
		json_object_object_add(dj, "name", json_object_new_string(d->disk->name));
		json_object_object_add(dj, "node", d->disk->node >= 0 ? json_object_new_int(d->disk->node) : NULL);
		for (size_t k = 0; k < d->nruns; k++)
			json_object_array_add(runs, ns_probe_run_json(sys, &d->runs[k]));
		json_object_object_add(dj, "nodes", runs);
		json_object_object_add(
			dj, "worst_to_best",
			d->nruns > 1 && ns_probe_iops(&d->runs[d->best]) > 0
				? ns_probe_jdouble(ns_probe_iops(&d->runs[d->worst]) / ns_probe_iops(&d->runs[d->best]),
						   3)
				: NULL);
		json_object_array_add(ds, dj);
		if (d->gap) {
			struct json_object *f = json_object_new_object(), *ev = json_object_new_object(),
					   *rem = json_object_new_object();
			char *msg = NULL;
			if (asprintf(&msg, "from node %d %s reads %.0f%% slower than from node %d",
				     d->runs[d->worst].node, d->disk->name,
				     100.0 * (1 - ns_probe_iops(&d->runs[d->worst]) / ns_probe_iops(&d->runs[d->best])),
				     d->runs[d->best].node) < 0)
				msg = NULL;
			json_object_object_add(f, "id", json_object_new_string("probe-node-gap"));
			json_object_object_add(f, "severity", json_object_new_string("warning"));
			json_object_object_add(f, "device", json_object_new_string(d->disk->name));
			json_object_object_add(f, "message", msg ? json_object_new_string(msg) : NULL);
			free(msg);
			json_object_object_add(ev, "worst_node", json_object_new_int(d->runs[d->worst].node));
			json_object_object_add(ev, "worst_iops",
					       ns_probe_jdouble(ns_probe_iops(&d->runs[d->worst]), 1));
			json_object_object_add(ev, "best_node", json_object_new_int(d->runs[d->best].node));
			json_object_object_add(ev, "best_iops", ns_probe_jdouble(ns_probe_iops(&d->runs[d->best]), 1));
			json_object_object_add(f, "evidence", ev);
			json_object_object_add(rem, "action", json_object_new_string("check"));
			json_object_object_add(
				rem, "text",
				json_object_new_string("numastor check says where the device, its "
						       "interrupts and queues sit; numastor fix --probe "
						       "moves what user space may move and measures again"));
			json_object_object_add(f, "remedy", rem);
			json_object_array_add(fs, f);
		}
	}
	json_object_object_add(doc, "devices", ds);
	json_object_object_add(doc, "findings", fs);
	json_object_object_add(doc, "exit_code", json_object_new_int(code));
	puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
}
