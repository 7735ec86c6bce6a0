/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numastor trace: for a window of the live workload, where each device's requests were submitted,
 * completed and interrupted, by node (lib/trace). Read-only: BPF programs on the block and IRQ
 * tracepoints count, nothing is written anywhere, and nothing stays attached when it ends.
 *
 * Here: the options, the machine's model (which disks carry a device's requests, which vector
 * serves each queue, each CPU's node), the window, and the writers (cmd/trace-output.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/testhook.h"
#include "cli.h"
#include "model/findings.h"
#include "model/system.h"
#include "numastor.h"
#include "options.h"
#include "out/outfile.h"
#include "read/diskstat.h"
#include "read/root.h"
#include "trace-output.h"
#include "trace/traceagg.h"
#include "trace/tracebpf.h"

enum trace_format { FMT_TEXT, FMT_JSON, FMT_PROM };

struct trace_opts {
	double seconds;
	enum trace_format format;
	bool verbose;
	const char *output_file; /* -O: NULL for standard output */
};

static void trace_usage(FILE *out)
{
	fprintf(out, "Usage: numastor trace [OPTIONS] [DEVICE...]\n"
		     "\n"
		     "Watch the live workload for a window and count, for each device, where its\n"
		     "requests were submitted, completed and interrupted, by NUMA node, with their\n"
		     "latency (issue to completion) for the requests that stayed on the submitter's\n"
		     "node and for those that crossed. eBPF on the block and IRQ tracepoints\n"
		     "(CO-RE), counted in the kernel: no event per request reaches user space.\n"
		     "Read-only; needs root and a kernel with BTF. Without DEVICE, every disk that\n"
		     "is not virtual.\n"
		     "\n");
	ns_options_usage(out, &ns_options_trace, 80);
	fprintf(out, "\n"
		     "A device of which 5%% or more of at least 100 requests completed, or took their\n"
		     "interrupt, on a node other than the submitter's is the finding io-crosses-nodes:\n"
		     "info, or warning from 25%% when the crossing requests are 10%% slower (or none\n"
		     "stayed local to compare).\n"
		     "\n"
		     "Exit status: 0 nothing crosses, 1 a warning, 3 could not trace (no BTF, not\n"
		     "root, lockdown, the kernel refused the program, a bad option).\n");
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int trace_parse(int argc, char **argv, struct ns_cli *cli, struct trace_opts *o)
{
	struct ns_getopt g;
	int c;

	ns_getopt_init(&g, &ns_options_trace);
	while ((c = ns_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'd':
			if (ns_cli_parse_seconds(optarg, 3600, &o->seconds) < 0)
				return ns_cli_bad_usage(cli, "--duration takes seconds above 0, at most 3600, not '%s'",
							optarg);
			break;
		case 'f':
			if (strcmp(optarg, "text") == 0)
				o->format = FMT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				o->format = FMT_JSON;
			else if (strcmp(optarg, "prometheus") == 0)
				o->format = FMT_PROM;
			else
				return ns_cli_bad_usage(cli, "--format takes text, json or prometheus, not '%s'",
							optarg);
			break;
		case 'j':
			o->format = FMT_JSON;
			break;
		case 'O':
			o->output_file = optarg;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			trace_usage(stdout);
			return NS_EXIT_OK;
		default:
			return ns_cli_bad_option(cli, c, argv);
		}
	}
	return -1;
}

/* "259:3" into the kernel's devnum (major << 20 | minor); -EINVAL */
static int parse_devnum(const char *s, uint32_t *out)
{
	unsigned maj, min;
	char tail;

	if (!s || sscanf(s, "%u:%u%c", &maj, &min, &tail) != 2 || maj >= (1u << 12) || min >= (1u << 20))
		return -EINVAL;
	*out = maj << 20 | min;
	return 0;
}

/* What the kernel side is told and the targets it is attributed to, from the model. */
struct trace_plan {
	struct ns_trace_target *targets;
	size_t ntargets;
	uint32_t *disks, *irqs, *pair_dev, *pair_hwq, *pair_irq;
	size_t ndisks, nirqs, npairs;
};

static int push_u32(uint32_t **v, size_t *n, uint32_t x, bool unique)
{
	uint32_t *g;

	for (size_t i = 0; unique && i < *n; i++)
		if ((*v)[i] == x)
			return 0;
	g = realloc(*v, (*n + 1) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	g[(*n)++] = x;
	*v = g;
	return 0;
}

/* The devnum of the disk whose requests a path carries: a multipath head's path disk's own
 * (its sysfs dev file), else the disk's. */
static int path_devnum(struct ns_root *root, const struct ns_disk *d, const struct ns_path *p, uint32_t *out,
		       char **name)
{
	char *path = NULL, *raw = NULL;
	const char *base;
	int r;

	if (!p || !p->disk_syspath || (d->syspath && strcmp(p->disk_syspath, d->syspath) == 0)) {
		*name = strdup(d->name);
		return *name ? parse_devnum(d->devnum, out) : -ENOMEM;
	}
	if (asprintf(&path, "%s/dev", p->disk_syspath) < 0)
		return -ENOMEM;
	r = ns_read_str(root, path, &raw);
	free(path);
	if (r == 0)
		r = parse_devnum(raw, out);
	free(raw);
	base = strrchr(p->disk_syspath, '/');
	*name = strdup(base ? base + 1 : p->disk_syspath);
	return r ? r : *name ? 0 : -ENOMEM;
}

static int plan_disk(struct ns_root *root, const struct ns_disk *d, struct trace_plan *pl, struct ns_notes *notes)
{
	struct ns_trace_target *t = &pl->targets[pl->ntargets];
	size_t n = d->npaths ? d->npaths : 1;

	memset(t, 0, sizeof(*t));
	t->name = strdup(d->name);
	t->node = d->node;
	t->disks = calloc(n, sizeof(*t->disks));
	t->disk_names = calloc(n, sizeof(*t->disk_names));
	if (!t->name || !t->disks || !t->disk_names)
		return -ENOMEM;
	pl->ntargets++;
	for (size_t i = 0; i < n; i++) {
		const struct ns_path *p = d->npaths ? &d->paths[i] : NULL;
		uint32_t dev;
		char *name = NULL;
		int r = path_devnum(root, d, p, &dev, &name);
		if (r == -ENOMEM) {
			free(name);
			return r;
		}
		if (r) {
			ns_note(notes, d->name, "trace",
				"the device number of %s could not be read (%s): its requests are not counted",
				name ? name : d->name, strerror(-r));
			free(name);
			continue;
		}
		t->disks[t->ndisks] = dev;
		t->disk_names[t->ndisks++] = name;
		if (push_u32(&pl->disks, &pl->ndisks, dev, true))
			return -ENOMEM;
		/* the queues of this path (a head's queues name their path's controller) */
		for (size_t h = 0; h < d->nhctx; h++) {
			const struct ns_hctx *q = &d->hctx[h];
			if (!q->irq || q->index < 0)
				continue;
			if (p && p->controller && q->controller && strcmp(p->controller, q->controller) != 0)
				continue;
			if (push_u32(&pl->pair_dev, &pl->npairs, dev, false) ||
			    push_u32(&pl->pair_hwq, &(size_t){pl->npairs - 1}, (uint32_t)q->index, false) ||
			    push_u32(&pl->pair_irq, &(size_t){pl->npairs - 1}, (uint32_t)q->irq->irq, false) ||
			    push_u32(&pl->irqs, &pl->nirqs, (uint32_t)q->irq->irq, true))
				return -ENOMEM;
		}
	}
	return 0;
}

static void plan_free(struct trace_plan *pl)
{
	for (size_t i = 0; i < pl->ntargets; i++) {
		for (size_t j = 0; j < pl->targets[i].ndisks; j++)
			free(pl->targets[i].disk_names[j]);
		free(pl->targets[i].disk_names);
		free(pl->targets[i].disks);
		free(pl->targets[i].name);
	}
	free(pl->targets);
	free(pl->disks);
	free(pl->irqs);
	free(pl->pair_dev);
	free(pl->pair_hwq);
	free(pl->pair_irq);
	memset(pl, 0, sizeof(*pl));
}

/* What the window measured: from the kernel, or (test builds) from a replay file. */
struct trace_window {
	struct ns_trace_rec *recs;
	size_t nrecs;
	struct ns_trace_bucket *buckets;
	size_t nbuckets;
	uint64_t lost[NS_TRACE_LOST_N];
	/* per planned disk (trace_plan.disks): the requests its own counter says it completed over
	 * the window (first read once the completion program runs, last before it detaches) */
	uint64_t *completed;
	bool *completed_known;
	bool unseen_known; /* some disk's counter was read twice: lost.unseen has a value */
	uint64_t unseen;
	char *kernel_release;
	const char *attach;
	double seconds;
	bool stopped;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* NUMASTOR_TEST_TRACE_REPLAY's file: the maps as the kernel side would leave them */
static int replay_read(const char *file, struct trace_window *w)
{
	struct json_object *doc = json_object_from_file(file), *a, *o, *v;
	static const char *const sources[] = {"unknown", "handler", "vector"};
	int r = -EINVAL;

	if (!doc)
		return -EINVAL;
	if (json_object_object_get_ex(doc, "kernel_release", &v))
		w->kernel_release = strdup(json_object_get_string(v));
	w->attach = "tp_btf";
	if (json_object_object_get_ex(doc, "attach", &v) && strcmp(json_object_get_string(v), "raw_tp") == 0)
		w->attach = "raw_tp";
	if (json_object_object_get_ex(doc, "seconds", &v))
		w->seconds = json_object_get_double(v);
	if (json_object_object_get_ex(doc, "stopped", &v))
		w->stopped = json_object_get_boolean(v);
	if (json_object_object_get_ex(doc, "lost", &o)) {
		if (json_object_object_get_ex(o, "untimed", &v))
			w->lost[0] = (uint64_t)json_object_get_int64(v);
		if (json_object_object_get_ex(o, "records", &v))
			w->lost[NS_TRACE_LOST_RECORDS] = (uint64_t)json_object_get_int64(v);
		if (json_object_object_get_ex(o, "missed", &v))
			w->lost[NS_TRACE_MISSED] = (uint64_t)json_object_get_int64(v);
		if (json_object_object_get_ex(o, "unseen", &v) && v) {
			w->unseen = (uint64_t)json_object_get_int64(v);
			w->unseen_known = true;
		}
	}
	if (!json_object_object_get_ex(doc, "records", &a) || !json_object_is_type(a, json_type_array))
		goto out;
	w->nrecs = json_object_array_length(a);
	w->recs = calloc(w->nrecs ? w->nrecs : 1, sizeof(*w->recs));
	if (!w->recs)
		goto out;
	for (size_t i = 0; i < w->nrecs; i++) {
		struct ns_trace_rec *rec = &w->recs[i];
		const char *src;
		o = json_object_array_get_idx(a, i);
		if (!json_object_object_get_ex(o, "dev", &v) || parse_devnum(json_object_get_string(v), &rec->dev))
			goto out;
#define GET(f, field) (json_object_object_get_ex(o, f, &v) ? (rec->field = json_object_get_int64(v)) : 0)
		GET("hwq", hwq);
		GET("submit_cpu", submit_cpu);
		GET("complete_cpu", complete_cpu);
		rec->irq_cpu = -1;
		GET("irq_cpu", irq_cpu);
		GET("irq", irq);
		GET("requests", requests);
		GET("bytes", bytes);
		GET("latency_ns_sum", latency_ns_sum);
		rec->timed = rec->requests; /* absent: every request's issue was seen */
		GET("timed", timed);
#undef GET
		src = json_object_object_get_ex(o, "irq_source", &v) ? json_object_get_string(v) : "unknown";
		for (size_t s = 0; s < 3; s++)
			if (strcmp(src, sources[s]) == 0)
				rec->irq_source = (enum ns_irq_source)s;
	}
	if (json_object_object_get_ex(doc, "buckets", &a) && json_object_is_type(a, json_type_array)) {
		w->nbuckets = json_object_array_length(a);
		w->buckets = calloc(w->nbuckets ? w->nbuckets : 1, sizeof(*w->buckets));
		if (!w->buckets)
			goto out;
		for (size_t i = 0; i < w->nbuckets; i++) {
			struct ns_trace_bucket *b = &w->buckets[i];
			o = json_object_array_get_idx(a, i);
			if (!json_object_object_get_ex(o, "dev", &v) ||
			    parse_devnum(json_object_get_string(v), &b->dev))
				goto out;
			b->irq_node = -1;
#define GET(f, field) (json_object_object_get_ex(o, f, &v) ? (b->field = json_object_get_int64(v)) : 0)
			GET("submit_node", submit_node);
			GET("complete_node", complete_node);
			GET("irq_node", irq_node);
			GET("bucket", bucket);
			GET("count", count);
#undef GET
		}
	}
	r = 0;
out:
	json_object_put(doc);
	return r;
}

struct first_reading {
	struct ns_root *root;
	const struct trace_plan *pl;
	struct trace_window *w;
};

/* The disks' own counters, once the completion program runs (before the issues are watched, so
 * that whoever waits for all of trace's programs to be attached knows this reading was taken):
 * the window's first reading. */
static void read_first(void *arg)
{
	struct first_reading *fr = arg;

	for (size_t i = 0; i < fr->pl->ndisks; i++)
		fr->w->completed_known[i] =
			ns_diskstat_completed(fr->root, fr->pl->disks[i], &fr->w->completed[i]) == 0;
}

/* The live window: attach, wait (SIGINT/SIGTERM end it early), detach and read. Exit code or -1. */
static int run_window(const struct ns_cli *cli, struct ns_root *root, const struct trace_opts *o,
		      const struct ns_system *sys, const struct trace_plan *pl, struct trace_window *w)
{
	struct ns_trace_setup s = {
		.cpu_node = sys->machine.cpu_node,
		.ncpus = sys->machine.ncpu_node,
		.disks = pl->disks,
		.ndisks = pl->ndisks,
		.irqs = pl->irqs,
		.nirqs = pl->nirqs,
		.pair_dev = pl->pair_dev,
		.pair_hwq = pl->pair_hwq,
		.pair_irq = pl->pair_irq,
		.npairs = pl->npairs,
		.kver_major = sys->machine.kver_major,
		.kver_minor = sys->machine.kver_minor,
	};
	struct ns_trace_bpf *t = NULL;
	enum ns_trace_why why;
	char reason[320], *log = NULL;
	struct sigaction sa = {.sa_handler = on_signal};
	bool tty = isatty(STDERR_FILENO) && o->format == FMT_TEXT;
	struct first_reading fr = {root, pl, w};
	double t0, left;
	int r;

	w->completed = calloc(pl->ndisks ? pl->ndisks : 1, sizeof(*w->completed));
	w->completed_known = calloc(pl->ndisks ? pl->ndisks : 1, sizeof(*w->completed_known));
	if (!w->completed || !w->completed_known)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "%s", strerror(ENOMEM));
	s.counting = read_first;
	s.counting_arg = &fr;
	r = ns_trace_bpf_preflight(root, &why, reason, sizeof(reason));
	if (r == 0)
		r = ns_trace_bpf_start(&s, &t, &why, reason, sizeof(reason), &log);
	if (r) {
		if (o->verbose && log)
			fprintf(stderr, "%s", log);
		free(log);
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "cannot trace: %s", reason);
	}
	w->attach = ns_trace_bpf_attach_kind(t);
	/* no SA_RESTART: the signal ends the sleep */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (tty)
		fprintf(stderr, "numastor trace: watching %zu device%s for %g s (Ctrl-C ends it early)\n", pl->ntargets,
			pl->ntargets == 1 ? "" : "s", o->seconds);
	t0 = now_s();
	while (!stop_flag && (left = o->seconds - (now_s() - t0)) > 0) {
		struct timespec ts;
		double step = left < 1 ? left : 1;
		ts.tv_sec = (time_t)step;
		ts.tv_nsec = (long)((step - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
		if (tty)
			fprintf(stderr, "\r\033[K%.0f/%g s", now_s() - t0, o->seconds);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	w->seconds = now_s() - t0;
	w->stopped = stop_flag != 0;
	/* the last reading, before the programs detach: each completion counted after it was seen */
	for (size_t i = 0; i < pl->ndisks; i++) {
		uint64_t last;
		if (w->completed_known[i] && ns_diskstat_read(root, pl->disks[i], &last) == 0 &&
		    last >= w->completed[i])
			w->completed[i] = last - w->completed[i];
		else
			w->completed_known[i] = false;
	}
	r = ns_trace_bpf_stop(t, &w->recs, &w->nrecs, &w->buckets, &w->nbuckets, w->lost);
	ns_trace_bpf_free(t);
	if (r)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "cannot read the BPF maps: %s", strerror(-r));
	w->kernel_release = sys->machine.kernel_release ? strdup(sys->machine.kernel_release) : NULL;
	for (size_t i = 0; i < pl->ndisks; i++)
		w->unseen_known |= w->completed_known[i];
	w->unseen = ns_trace_unseen(pl->disks, w->completed, w->completed_known, pl->ndisks, w->recs, w->nrecs);
	return -1;
}

static int print_report(FILE *out, const struct trace_opts *o, const struct trace_report *rep)
{
	if (o->format == FMT_JSON)
		return trace_print_json(out, rep);
	if (o->format == FMT_PROM)
		return trace_print_prometheus(out, rep);
	return trace_print_text(out, rep);
}

/* The report to standard output, or to -O's file atomically (lib/out/outfile.h). 0 or -errno. */
static int write_report(const struct trace_opts *o, const struct trace_report *rep)
{
	struct ns_outfile of = {.fd = -1};
	char *why = NULL;
	FILE *f;
	int r;

	if (!o->output_file) {
		r = print_report(stdout, o, rep);
		return r ? r : fflush(stdout) ? -errno : 0;
	}
	r = ns_outfile_open(o->output_file, &of, &why);
	free(why);
	if (r)
		return r;
	f = fdopen(dup(of.fd), "w");
	if (!f) {
		r = -errno;
		ns_outfile_abort(&of);
		return r;
	}
	r = print_report(f, o, rep);
	if (fclose(f) && !r)
		r = -errno;
	if (r) {
		ns_outfile_abort(&of);
		return r;
	}
	return ns_outfile_commit(&of);
}

/* -O's target before the window: a name that cannot be written is said now, not after it. Exit
 * code, or -1 to go on. */
static int check_output_file(const struct ns_cli *cli, struct trace_opts *o)
{
	struct ns_outfile probe;
	char *why = NULL;
	int r;

	if (!o->output_file)
		return -1;
	if (ns_outfile_is_stdout(o->output_file)) {
		o->output_file = NULL; /* standard output, asked for by name: written through */
		return -1;
	}
	r = ns_outfile_open(o->output_file, &probe, &why);
	if (r && why) {
		r = ns_cli_fail(cli, NS_EXIT_UNKNOWN, "not writing %s: %s", o->output_file, why);
		free(why);
		return r;
	}
	if (r)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "cannot create a file beside %s: %s", o->output_file,
				   strerror(-r));
	ns_outfile_abort(&probe);
	return -1;
}

/* check's causes on each traced device: what the measured crossing is the effect of */
static const char *const *const *causes_by_device(const struct ns_findings *f, const struct trace_plan *pl)
{
	const char ***v = calloc(pl->ntargets ? pl->ntargets : 1, sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < pl->ntargets; i++) {
		size_t n = 0;
		v[i] = calloc(f->n + 1, sizeof(*v[i]));
		if (!v[i])
			continue;
		for (size_t k = 0; k < f->n; k++) {
			const struct ns_finding *x = &f->v[k];
			bool seen = false;
			if (x->caused_by || !x->device || strcmp(x->device, pl->targets[i].name) != 0)
				continue;
			for (size_t j = 0; j < n; j++)
				seen |= strcmp(v[i][j], x->id) == 0;
			if (!seen)
				v[i][n++] = x->id;
		}
	}
	return (const char *const *const *)v;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = {.seconds = 10, .format = FMT_TEXT};
	struct ns_cli cli;
	struct ns_root *root = NULL;
	struct ns_system sys = {0};
	struct ns_findings findings = {0};
	struct trace_plan pl = {0};
	struct trace_window w = {.attach = "none"};
	struct ns_trace_result res = {0};
	const char *const *const *because = NULL;
	const char *root_dir = ns_test_hook("NUMASTOR_TEST_TRACE_ROOT");
	const char *replay = ns_test_hook("NUMASTOR_TEST_TRACE_REPLAY");
	int r, code;

	ns_cli_init(&cli, "trace", argc, argv);
	code = trace_parse(argc, argv, &cli, &o);
	if (code >= 0)
		return code;
	code = check_output_file(&cli, &o);
	if (code >= 0)
		return code;
	code = NS_EXIT_OK;
	r = ns_root_open(root_dir, &root);
	if (r < 0)
		return ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot open the root: %s", strerror(-r));
	cli.root = root;
	code = ns_cli_discover(&cli, root, root_dir, argv + optind, (size_t)(argc - optind), &sys);
	if (code)
		goto out;
	pl.targets = calloc(sys.ndisks ? sys.ndisks : 1, sizeof(*pl.targets));
	if (!pl.targets) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "%s", strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < sys.ndisks; i++) {
		const struct ns_disk *d = &sys.disks[i];
		/* named ones as named; else the disks that are devices, not layers or files */
		if (optind == argc && (ns_disk_is_virtual(d) || d->size_bytes == 0))
			continue;
		if (plan_disk(root, d, &pl, &sys.notes)) {
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "%s", strerror(ENOMEM));
			goto out;
		}
	}
	if (!pl.ntargets) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "no disk to trace (name one: numastor trace DEVICE)");
		goto out;
	}
	if (replay) {
		if (replay_read(replay, &w)) {
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot read the replay %s", replay);
			goto out;
		}
	} else {
		code = run_window(&cli, root, &o, &sys, &pl, &w);
		if (code >= 0)
			goto out;
	}
	code = NS_EXIT_OK;
	if (ns_trace_attribute(pl.targets, pl.ntargets, w.recs, w.nrecs, w.buckets, w.nbuckets, sys.machine.cpu_node,
			       sys.machine.ncpu_node, &res)) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "%s", strerror(ENOMEM));
		goto out;
	}
	if (ns_findings_evaluate(&sys, &findings) == 0)
		because = causes_by_device(&findings, &pl);
	{
		const struct trace_report rep = {
			.root = root,
			.res = &res,
			.kernel_release = w.kernel_release,
			.attach = w.attach,
			.nnodes = (unsigned)sys.machine.nnodes,
			.seconds_asked = o.seconds,
			.seconds = w.seconds,
			.stopped = w.stopped,
			.untimed = w.lost[NS_TRACE_UNTIMED] + w.lost[NS_TRACE_LOST_BUCKETS],
			.lost_records = w.lost[NS_TRACE_LOST_RECORDS],
			.missed = w.lost[NS_TRACE_MISSED],
			.unseen = w.unseen,
			.unseen_known = w.unseen_known,
			.devices_asked = (const char *const *)(argv + optind),
			.ndevices_asked = (size_t)(argc - optind),
			.because = because,
			.notes = &sys.notes,
			.verbose = o.verbose,
		};
		code = trace_exit_code(&rep);
		r = write_report(&o, &rep);
		if (r)
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot write the report%s%s: %s",
					   o.output_file ? " to " : "", o.output_file ? o.output_file : "",
					   strerror(-r));
	}
	if (w.stopped)
		fprintf(stderr, "numastor trace: interrupted: the figures cover %.1f s\n", w.seconds);
out:
	if (because) {
		for (size_t i = 0; i < pl.ntargets; i++)
			free((void *)because[i]);
		free((void *)because);
	}
	ns_trace_result_free(&res);
	free(w.recs);
	free(w.buckets);
	free(w.completed);
	free(w.completed_known);
	free(w.kernel_release);
	plan_free(&pl);
	ns_findings_free(&findings);
	ns_system_free(&sys);
	ns_root_free(root);
	return code;
}
