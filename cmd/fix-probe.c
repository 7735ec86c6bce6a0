/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor fix --probe: the devices the plan moves vectors of, probed before and after (cmd/fix.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fix.h"
#include "probe-output.h"
#include "probe/probe.h"
#include "state/journal.h"

struct fix_probe {
	struct ns_root *root;
	const struct fix_opts *o;
	struct ns_probe_disk *before, *after; /* n each, the same disks in the same order */
	size_t n;
	char *problem;
};

void fix_probe_free(struct fix_probe *fp)
{
	if (!fp)
		return;
	for (size_t i = 0; i < fp->n; i++) {
		if (fp->before)
			ns_probe_disk_free(&fp->before[i]);
		if (fp->after)
			ns_probe_disk_free(&fp->after[i]);
	}
	free(fp->before);
	free(fp->after);
	free(fp->problem);
	free(fp);
}

static volatile sig_atomic_t probe_stop;

static void probe_progress(void *data, const char *disk, int node, double elapsed, uint64_t ios)
{
	const struct fix_opts *o = data;
	if (o->json || o->quiet || !isatty(STDERR_FILENO))
		return;
	ns_probe_progress_line("probe ", disk, node, elapsed, o->probe_seconds, ios);
}

/* Probe every disk the plan moves a vector of, from every node with CPUs: into fp->before, or
 * (after) into fp->after for the same disks. */
static int probe_plan(struct ns_root *root, const struct ns_system *sys, const struct ns_plan *plan,
		      const struct fix_opts *o, struct fix_probe *fp, bool after)
{
	struct ns_probe_params p = {.block_size = 4096,
				    .iodepth = 32,
				    .jobs = 1,
				    .seconds = o->probe_seconds,
				    .progress = probe_progress,
				    .data = (void *)o,
				    .stop = &probe_stop};
	struct ns_probe_disk *set;
	int r = 0;

	if (!after) {
		fp->before = calloc(plan->nirqs + 1, sizeof(*fp->before));
		fp->after = calloc(plan->nirqs + 1, sizeof(*fp->after));
		if (!fp->before || !fp->after)
			return -ENOMEM;
		for (size_t i = 0; i < plan->nirqs; i++) {
			const struct ns_disk *d;
			bool seen = false;
			if (plan->irqs[i].action != NS_PLAN_MOVE)
				continue;
			d = ns_system_disk(sys, plan->irqs[i].device);
			for (size_t k = 0; d && k < fp->n; k++)
				seen |= fp->before[k].disk == d;
			if (d && !seen) {
				fp->before[fp->n].disk = d;
				fp->after[fp->n++].disk = d;
			}
		}
	}
	set = after ? fp->after : fp->before;
	for (size_t i = 0; i < fp->n && r == 0; i++) {
		r = ns_probe_disk_measure(root, sys, NULL, &p, &set[i]);
		if (r < 0 && !fp->problem &&
		    asprintf(&fp->problem, "reading /dev/%s%s: %s", set[i].disk->name,
			     set[i].failed_node >= 0 ? " from a node" : "", strerror(-r)) < 0)
			fp->problem = NULL;
	}
	if (!o->json && !o->quiet && isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K");
	return r;
}

void fix_probe_text(const struct ns_system *sys, const struct fix_opts *o, const struct fix_probe *fp)
{
	if (!fp->n) {
		printf("\nprobe: the plan moves no vector: nothing to measure\n");
		return;
	}
	printf("\nprobe: 4k random reads, iodepth 32, %.1f s per node, before the change and after it\n",
	       o->probe_seconds);
	printf("%-10s %4s %9s %9s  %-22s %s\n", "DEVICE", "NODE", "IOPS", "", "IRQS BY NODE", "");
	printf("%-10s %4s %9s %9s  %-22s %s\n", "", "", "before", "after", "before", "after");
	for (size_t i = 0; i < fp->n; i++) {
		const struct ns_probe_disk *b = &fp->before[i], *a = &fp->after[i];
		for (size_t k = 0; k < b->nruns; k++) {
			const struct ns_probe_node_run *rb = &b->runs[k], *ra = k < a->nruns ? &a->runs[k] : NULL;
			char ib[16], ia[16] = "-", qb[128], qa[128] = "-";
			ns_probe_fmt_count(ib, sizeof(ib), ns_probe_iops(rb));
			ns_probe_fmt_irqs(qb, sizeof(qb), sys, rb);
			if (ra) {
				ns_probe_fmt_count(ia, sizeof(ia), ns_probe_iops(ra));
				ns_probe_fmt_irqs(qa, sizeof(qa), sys, ra);
			}
			printf("%-10s %4d %9s %9s  %-22s %s\n", k ? "" : b->disk->name, rb->node, ib, ia, qb, qa);
		}
	}
}

struct json_object *fix_probe_json(const struct ns_system *sys, const struct fix_opts *o, const struct fix_probe *fp)
{
	struct json_object *pj = json_object_new_object(), *params = json_object_new_object(),
			   *ds = json_object_new_array();

	json_object_object_add(params, "block_size", json_object_new_int(4096));
	json_object_object_add(params, "iodepth", json_object_new_int(32));
	json_object_object_add(params, "jobs", json_object_new_int(1));
	json_object_object_add(params, "seconds", ns_probe_jdouble(o->probe_seconds, 3));
	json_object_object_add(pj, "parameters", params);
	for (size_t i = 0; i < fp->n; i++) {
		const struct ns_probe_disk *b = &fp->before[i], *a = &fp->after[i];
		struct json_object *dj = json_object_new_object(), *nodes = json_object_new_array();
		json_object_object_add(dj, "name", json_object_new_string(b->disk->name));
		for (size_t k = 0; k < b->nruns; k++) {
			struct json_object *nj = json_object_new_object();
			json_object_object_add(nj, "node", json_object_new_int(b->runs[k].node));
			json_object_object_add(nj, "before", ns_probe_run_json(sys, &b->runs[k]));
			json_object_object_add(nj, "after", k < a->nruns ? ns_probe_run_json(sys, &a->runs[k]) : NULL);
			json_object_array_add(nodes, nj);
		}
		json_object_object_add(dj, "nodes", nodes);
		json_object_array_add(ds, dj);
	}
	json_object_object_add(pj, "devices", ds);
	json_object_object_add(pj, "problem", fp->problem ? json_object_new_string(fp->problem) : NULL);
	return pj;
}

/* The before/after table as the journal's probe: the fix document's probe, once more. */
static int journal_probe(struct ns_root *root, const struct ns_system *sys, const struct fix_opts *o,
			 const struct fix_probe *fp)
{
	struct json_object *pj = fix_probe_json(sys, o, fp);
	int r = ns_fix_journal_probe(root, pj ? json_object_to_json_string_ext(pj, JSON_C_TO_STRING_PLAIN) : NULL);

	json_object_put(pj);
	return r;
}

struct fix_probe *fix_probe_new(struct ns_root *root, const struct fix_opts *o)
{
	struct fix_probe *fp = calloc(1, sizeof(*fp));

	if (fp)
		fp->root = root, fp->o = o;
	return fp;
}

const char *fix_probe_problem(const struct fix_probe *fp)
{
	return fp ? fp->problem : NULL;
}

/* ns_fix_opts.before_change: the measurement first */
int fix_probe_before(void *data, const struct ns_system *sys, const struct ns_plan *plan)
{
	struct fix_probe *fp = data;

	return probe_plan(fp->root, sys, plan, fp->o, fp, false);
}

/* ns_fix_opts.after_change: the same disks again, and the table into the journal beside what it
 * measured (the lock is still ours) */
int fix_probe_after(void *data, const struct ns_system *sys, const struct ns_plan *plan)
{
	struct fix_probe *fp = data;
	const struct fix_opts *o = fp->o;
	int r, failed = 0;

	if (o->probe_seconds > 0 && fp->n && probe_plan(fp->root, sys, plan, o, fp, true) < 0) {
		fprintf(stderr, "numastor fix: --probe after the change: %s\n", fp->problem ? fp->problem : "failed");
		failed = -EIO;
	}
	if (o->probe_seconds > 0 && fp->n && (r = journal_probe(fp->root, sys, o, fp)) < 0) {
		fprintf(stderr, "numastor fix: --probe: recording the measurements in /%s: %s\n", NS_JOURNAL_PATH,
			strerror(-r));
		failed = r;
	}
	return failed;
}
