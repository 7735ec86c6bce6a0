/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numastor probe: random reads from each NUMA node's CPUs in turn, per device, and where the
 * completion interrupts fired meanwhile. Read-only (lib/probe.h). check never runs I/O; this
 * is the one command that does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cpuset.h"
#include "irq.h"
#include "json.h"
#include "numastor.h"
#include "probe.h"
#include "system.h"

#define PROBE_SCHEMA_VERSION 1

static void probe_usage(FILE *out)
{
	fprintf(out, "Usage: numastor probe [OPTIONS] [DEVICE...]\n"
		     "\n"
		     "Measure each device's random-read IOPS, throughput and completion latency from each\n"
		     "NUMA node's CPUs in turn (threads bound to the node, buffers in its memory, io_uring,\n"
		     "O_DIRECT), and count where the device's interrupts fired during each node's run.\n"
		     "Read-only: devices are opened O_RDONLY and only read. Without DEVICE, every disk that\n"
		     "is not virtual (loop, zram, device-mapper, md) is probed.\n"
		     "\n"
		     "Options:\n"
		     "  -d, --duration SECONDS   per node and device (default 3; at most 3600)\n"
		     "  -b, --block-size SIZE    bytes per read: 4k (default), 512, 64k, 1m ...\n"
		     "  -q, --iodepth N          reads in flight per job (default 32; 1-4096)\n"
		     "  -J, --jobs N             threads per node (default 1; 1-64)\n"
		     "  -N, --nodes LIST         the nodes to probe from, e.g. 0,1 or 0-3 (default: every\n"
		     "                           node with CPUs)\n"
		     "  -j, --json               print a JSON document (schema/numastor-probe.schema.json)\n"
		     "  -h, --help               show this help\n"
		     "\n"
		     "A node whose IOPS is more than 15%% below the best node's is the finding\n"
		     "probe-node-gap (warning). Progress goes to a terminal's stderr only.\n"
		     "\n"
		     "Exit status: 0 no gap, 1 a node gap, 3 could not probe (bad option, no permission to\n"
		     "read a device, a read failed).\n");
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct opts {
	double seconds;
	unsigned block_size, iodepth, jobs;
	const char *nodes_arg;
	bool json;
};

/* "4k", "4096", "64K", "1m": bytes, at most 16 MiB */
static int parse_size(const char *s, unsigned *out)
{
	char *end;
	unsigned long long v;
	unsigned long long mult = 1;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		mult = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mult = 1024 * 1024, end++;
	if (*end && strcmp(end, "iB") != 0 && strcmp(end, "B") != 0)
		return -EINVAL;
	v *= mult;
	if (v < 512 || v > 16 * 1024 * 1024)
		return -ERANGE;
	*out = (unsigned)v;
	return 0;
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;
	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;
	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 3600)
		return -EINVAL;
	*out = v;
	return 0;
}

/* One node's run on one device. */
struct node_run {
	int node;
	char *cpus;
	struct ns_probe_result res;
	unsigned long long *irq_by_node; /* completion interrupts per node (nnodes_ids) */
	unsigned long long irq_total;
	bool irq_known;
};

struct dev_run {
	const struct ns_disk *disk;
	struct node_run *runs;
	size_t nruns;
	bool gap;
	size_t worst, best;
};

/* The interrupts of a disk: every vector of every path's PCI function. */
static size_t disk_irqs(const struct ns_disk *d, const struct ns_irq **out, size_t max)
{
	size_t n = 0;
	for (size_t p = 0; p < d->npaths; p++) {
		const struct ns_pci *pci = d->paths[p].pci;
		if (!pci)
			continue;
		for (size_t i = 0; i < pci->nirqs && n < max; i++) {
			bool dup = false;
			for (size_t k = 0; k < n; k++)
				dup |= out[k]->irq == pci->irqs[i].irq;
			if (!dup)
				out[n++] = &pci->irqs[i];
		}
	}
	return n;
}

static struct ns_counts *sample(struct ns_root *root, const struct ns_irq **irqs, size_t n)
{
	struct ns_counts *c = calloc(n ? n : 1, sizeof(*c));
	for (size_t i = 0; c && i < n; i++)
		if (ns_counts_read(root, irqs[i]->irq, &c[i], NULL) < 0)
			c[i].n = 0;
	return c;
}

static void free_samples(struct ns_counts *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		ns_counts_free(&c[i]);
	free(c);
}

/* Per node: what fired between the two samples, summed over the disk's vectors. */
static void fold_delta(const struct ns_machine *m, const struct ns_counts *a, const struct ns_counts *b, size_t n,
		       struct node_run *nr, size_t nids)
{
	nr->irq_by_node = calloc(nids ? nids : 1, sizeof(*nr->irq_by_node));
	if (!nr->irq_by_node)
		return;
	nr->irq_known = n > 0;
	for (size_t i = 0; i < n; i++) {
		struct ns_counts d = {0};
		unsigned long long *per = NULL, total = 0;
		size_t nper = 0;
		if (!a[i].n || !b[i].n || ns_counts_delta(&a[i], &b[i], true, &d) < 0 ||
		    ns_counts_fold(m, &d, &per, &nper, &total) < 0) {
			nr->irq_known = false;
			ns_counts_free(&d);
			continue;
		}
		for (size_t k = 0; k < nper && k < nids; k++)
			nr->irq_by_node[k] += per[k];
		nr->irq_total += total;
		free(per);
		ns_counts_free(&d);
	}
}

struct progress_ctx {
	const char *dev;
	int node;
	double seconds;
	bool tty;
};

static void progress(void *data, double elapsed, uint64_t ios)
{
	struct progress_ctx *p = data;
	if (!p->tty)
		return;
	fprintf(stderr, "\r\033[K%s from node %d: %4.1f/%.1f s, %.0f IOPS", p->dev, p->node, elapsed, p->seconds,
		elapsed > 0 ? (double)ios / elapsed : 0.0);
	fflush(stderr);
}

static double iops_of(const struct node_run *r)
{
	return r->res.seconds > 0 ? (double)r->res.ios / r->res.seconds : 0;
}

/* "315.2k", "1.20M": an IOPS figure in 6 columns */
static void fmt_count(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

static void fmt_us(char *buf, size_t len, uint64_t ns)
{
	if (ns >= 10000000)
		snprintf(buf, len, "%.0fms", (double)ns / 1e6);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.1fms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.0fus", (double)ns / 1e3);
}

static void print_text(const struct opts *o, const struct ns_system *sys, const struct dev_run *devs, size_t ndevs,
		       int virt)
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
	if (virt == 1)
		printf("under a hypervisor: absolute IOPS and latency say little; the ratio between nodes and "
		       "where interrupts fire still hold\n");
	printf("\n%-10s %4s %-9s %7s %7s %7s %7s %7s  %s\n", "DEVICE", "NODE", "CPUS", "IOPS", "MB/s", "p50", "p99",
	       "p99.9", "IRQS BY NODE");
	for (size_t i = 0; i < ndevs; i++) {
		const struct dev_run *d = &devs[i];
		for (size_t k = 0; k < d->nruns; k++) {
			const struct node_run *r = &d->runs[k];
			char iops[16], p50[16], p99[16], p999[16], mbs[16], irqs[256] = "";
			size_t off = 0;
			fmt_count(iops, sizeof(iops), iops_of(r));
			snprintf(mbs, sizeof(mbs), "%.0f",
				 r->res.seconds > 0 ? (double)r->res.bytes / r->res.seconds / 1e6 : 0);
			fmt_us(p50, sizeof(p50), ns_hist_percentile(&r->res.latency_ns, 50));
			fmt_us(p99, sizeof(p99), ns_hist_percentile(&r->res.latency_ns, 99));
			fmt_us(p999, sizeof(p999), ns_hist_percentile(&r->res.latency_ns, 99.9));
			if (!r->irq_known)
				snprintf(irqs, sizeof(irqs), "-");
			else
				for (size_t n = 0; n < sys->machine.nnodes && off < sizeof(irqs); n++) {
					char c[16];
					int id = sys->machine.nodes[n].id;
					fmt_count(c, sizeof(c), (double)r->irq_by_node[id]);
					off += (size_t)snprintf(irqs + off, sizeof(irqs) - off, "%s%d:%s", n ? " " : "",
								id, c);
				}
			printf("%-10s %4d %-9s %7s %7s %7s %7s %7s  %s\n", k ? "" : d->disk->name, r->node,
			       r->cpus ? r->cpus : "?", iops, mbs, p50, p99, p999, irqs);
		}
		if (d->nruns > 1)
			printf("%-10s worst/best %.2f\n", "",
			       iops_of(&d->runs[d->best]) > 0 ? iops_of(&d->runs[d->worst]) / iops_of(&d->runs[d->best])
							      : 0);
	}
	for (size_t i = 0; i < ndevs; i++) {
		const struct dev_run *d = &devs[i];
		if (!d->gap)
			continue;
		printf("\nwarning probe-node-gap %s: from node %d it reads %.0f%% slower than from node %d (%.0f vs "
		       "%.0f "
		       "IOPS)\n  remedy: `numastor check %s` says where its device, interrupts and queues sit; "
		       "`numastor fix --probe` moves what user space may move and measures again\n",
		       d->disk->name, d->runs[d->worst].node,
		       100.0 * (1 - iops_of(&d->runs[d->worst]) / iops_of(&d->runs[d->best])), d->runs[d->best].node,
		       iops_of(&d->runs[d->worst]), iops_of(&d->runs[d->best]), d->disk->name);
	}
}

/* v with `decimals` digits after the point, serialized as written */
static struct json_object *jdouble(double v, int decimals)
{
	char txt[48];
	snprintf(txt, sizeof(txt), "%.*f", decimals, v);
	return json_object_new_double_s(strtod(txt, NULL), txt);
}

static struct json_object *run_json(const struct ns_system *sys, const struct node_run *r)
{
	struct json_object *o = json_object_new_object(), *lat = json_object_new_object(), *irq;
	const struct ns_hist *h = &r->res.latency_ns;

	json_object_object_add(o, "node", json_object_new_int(r->node));
	json_object_object_add(o, "cpus", r->cpus ? json_object_new_string(r->cpus) : NULL);
	json_object_object_add(o, "ios", json_object_new_int64((int64_t)r->res.ios));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)r->res.bytes));
	json_object_object_add(o, "seconds", jdouble(r->res.seconds, 3));
	json_object_object_add(o, "iops", jdouble(iops_of(r), 1));
	json_object_object_add(o, "mb_per_s",
			       jdouble(r->res.seconds > 0 ? (double)r->res.bytes / r->res.seconds / 1e6 : 0, 2));
	json_object_object_add(lat, "p50", jdouble((double)ns_hist_percentile(h, 50) / 1e3, 1));
	json_object_object_add(lat, "p99", jdouble((double)ns_hist_percentile(h, 99) / 1e3, 1));
	json_object_object_add(lat, "p99_9", jdouble((double)ns_hist_percentile(h, 99.9) / 1e3, 1));
	json_object_object_add(lat, "mean", jdouble(ns_hist_mean(h) / 1e3, 1));
	json_object_object_add(lat, "max", jdouble(h->count ? (double)h->max / 1e3 : 0, 1));
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
			json_object_object_add(c, "count", json_object_new_int64((int64_t)r->irq_by_node[id]));
			json_object_array_add(a, c);
		}
		json_object_object_add(irq, "counts_by_node", a);
	} else {
		irq = NULL;
	}
	json_object_object_add(o, "interrupts", irq);
	return o;
}

static void print_json(const struct opts *o, struct ns_root *root, const struct ns_system *sys,
		       const struct dev_run *devs, size_t ndevs, int virt, int code)
{
	struct json_object *doc = ns_json_envelope(root, PROBE_SCHEMA_VERSION), *params = json_object_new_object();
	struct json_object *ds = json_object_new_array(), *fs = json_object_new_array();

	json_object_object_add(params, "block_size", json_object_new_int((int)o->block_size));
	json_object_object_add(params, "iodepth", json_object_new_int((int)o->iodepth));
	json_object_object_add(params, "jobs", json_object_new_int((int)o->jobs));
	json_object_object_add(params, "seconds", jdouble(o->seconds, 3));
	json_object_object_add(params, "rw", json_object_new_string("randread"));
	json_object_object_add(params, "direct", json_object_new_boolean(true));
	json_object_object_add(doc, "parameters", params);
	json_object_object_add(doc, "virtualized", virt < 0 ? NULL : json_object_new_boolean(virt == 1));
	for (size_t i = 0; i < ndevs; i++) {
		const struct dev_run *d = &devs[i];
		struct json_object *dj = json_object_new_object(), *runs = json_object_new_array();
		json_object_object_add(dj, "name", json_object_new_string(d->disk->name));
		json_object_object_add(dj, "node", d->disk->node >= 0 ? json_object_new_int(d->disk->node) : NULL);
		for (size_t k = 0; k < d->nruns; k++)
			json_object_array_add(runs, run_json(sys, &d->runs[k]));
		json_object_object_add(dj, "nodes", runs);
		json_object_object_add(dj, "worst_to_best",
				       d->nruns > 1 && iops_of(&d->runs[d->best]) > 0
					       ? jdouble(iops_of(&d->runs[d->worst]) / iops_of(&d->runs[d->best]), 3)
					       : NULL);
		json_object_array_add(ds, dj);
		if (d->gap) {
			struct json_object *f = json_object_new_object(), *ev = json_object_new_object(),
					   *rem = json_object_new_object();
			char *msg = NULL;
			if (asprintf(&msg, "from node %d %s reads %.0f%% slower than from node %d",
				     d->runs[d->worst].node, d->disk->name,
				     100.0 * (1 - iops_of(&d->runs[d->worst]) / iops_of(&d->runs[d->best])),
				     d->runs[d->best].node) < 0)
				msg = NULL;
			json_object_object_add(f, "id", json_object_new_string("probe-node-gap"));
			json_object_object_add(f, "severity", json_object_new_string("warning"));
			json_object_object_add(f, "device", json_object_new_string(d->disk->name));
			json_object_object_add(f, "message", msg ? json_object_new_string(msg) : NULL);
			free(msg);
			json_object_object_add(ev, "worst_node", json_object_new_int(d->runs[d->worst].node));
			json_object_object_add(ev, "worst_iops", jdouble(iops_of(&d->runs[d->worst]), 1));
			json_object_object_add(ev, "best_node", json_object_new_int(d->runs[d->best].node));
			json_object_object_add(ev, "best_iops", jdouble(iops_of(&d->runs[d->best]), 1));
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

static int probe_device(struct ns_root *root, const struct ns_system *sys, const struct opts *o,
			const struct ns_cpuset *nodes, struct dev_run *d, const struct ns_cli *cli)
{
	struct ns_probe_dev dev;
	const struct ns_irq *irqs[256];
	size_t nirqs = disk_irqs(d->disk, irqs, 256), nids = 0;
	char path[300];
	int r;

	for (size_t n = 0; n < sys->machine.nnodes; n++)
		if ((size_t)sys->machine.nodes[n].id + 1 > nids)
			nids = (size_t)sys->machine.nodes[n].id + 1;
	snprintf(path, sizeof(path), "/dev/%s", d->disk->name);
	r = ns_probe_open(path, d->disk->devnum, &dev);
	if (r == -EACCES || r == -EPERM)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN,
				   "cannot read %s: %s (probe only reads; run it as a user who may read the "
				   "device, such as root or a member of the disk group)",
				   path, strerror(-r));
	if (r < 0)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "cannot open %s for direct reads: %s", path,
				   r == -ENODEV ? "no such block device node, or another device than /sys/block says"
						: strerror(-r));
	d->runs = calloc(sys->machine.nnodes, sizeof(*d->runs));
	if (!d->runs) {
		ns_probe_close(&dev);
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "%s", strerror(ENOMEM));
	}
	for (size_t n = 0; n < sys->machine.nnodes && !stop_flag; n++) {
		const struct ns_node *node = &sys->machine.nodes[n];
		struct node_run *nr = &d->runs[d->nruns];
		struct progress_ctx pc = {d->disk->name, node->id, o->seconds, isatty(STDERR_FILENO) && !o->json};
		struct ns_probe_job job = {.node = node->id,
					   .block_size = o->block_size,
					   .iodepth = o->iodepth,
					   .jobs = o->jobs,
					   .seconds = o->seconds,
					   .progress = progress,
					   .data = &pc,
					   .stop = &stop_flag};
		struct ns_counts *before, *after;
		if (!ns_cpuset_count(&node->cpus) || !ns_cpuset_test(nodes, (unsigned)node->id))
			continue;
		nr->node = node->id;
		ns_cpuset_format(&node->cpus, &nr->cpus);
		before = sample(root, irqs, nirqs);
		r = ns_probe_run(&dev, &job, &nr->res);
		after = sample(root, irqs, nirqs);
		if (before && after)
			fold_delta(&sys->machine, before, after, nirqs, nr, nids);
		free_samples(before, nirqs);
		free_samples(after, nirqs);
		if (pc.tty)
			fprintf(stderr, "\r\033[K");
		d->nruns++;
		if (r < 0) {
			ns_probe_close(&dev);
			return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "reading %s from node %d: %s", path, node->id,
					   r == -EINVAL ? "the block size does not fit the device (a multiple of its "
							  "logical block size, at most its size)"
							: strerror(-r));
		}
	}
	ns_probe_close(&dev);
	for (size_t k = 0; k < d->nruns; k++) {
		if (iops_of(&d->runs[k]) < iops_of(&d->runs[d->worst]))
			d->worst = k;
		if (iops_of(&d->runs[k]) > iops_of(&d->runs[d->best]))
			d->best = k;
	}
	d->gap = d->nruns > 1 && ns_probe_node_gap(iops_of(&d->runs[d->worst]), iops_of(&d->runs[d->best]));
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"duration", required_argument, NULL, 'd'}, {"block-size", required_argument, NULL, 'b'},
		{"iodepth", required_argument, NULL, 'q'},  {"jobs", required_argument, NULL, 'J'},
		{"nodes", required_argument, NULL, 'N'},    {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},	    {NULL, 0, NULL, 0},
	};
	struct opts o = {.seconds = 3, .block_size = 4096, .iodepth = 32, .jobs = 1};
	struct ns_cli cli;
	struct ns_root *root = NULL;
	struct ns_system sys = {0};
	struct ns_cpuset nodes = {0};
	struct dev_run *devs = NULL;
	size_t ndevs = 0;
	int c, r, code = NS_EXIT_OK, virt;

	ns_cli_init(&cli, "probe", argc, argv);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:b:q:J:N:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_seconds(optarg, &o.seconds) < 0)
				return ns_cli_bad_usage(
					&cli, "--duration takes seconds above 0, at most 3600, not '%s'", optarg);
			break;
		case 'b':
			if (parse_size(optarg, &o.block_size) < 0)
				return ns_cli_bad_usage(
					&cli, "--block-size takes bytes from 512 to 16m (4k, 64k, 1m), not '%s'",
					optarg);
			break;
		case 'q':
			if (parse_uint(optarg, 1, 4096, &o.iodepth) < 0)
				return ns_cli_bad_usage(&cli, "--iodepth takes 1 to 4096, not '%s'", optarg);
			break;
		case 'J':
			if (parse_uint(optarg, 1, 64, &o.jobs) < 0)
				return ns_cli_bad_usage(&cli, "--jobs takes 1 to 64, not '%s'", optarg);
			break;
		case 'N':
			o.nodes_arg = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			probe_usage(stdout);
			return NS_EXIT_OK;
		default:
			return ns_cli_bad_option(&cli, c, argv);
		}
	}
	r = ns_root_open(NULL, &root);
	if (r < 0)
		return ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot open the root: %s", strerror(-r));
	cli.root = root;
	r = ns_system_discover(root, (const char *const *)argv + optind, (size_t)(argc - optind), &sys);
	if (r == -ENODEV) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "%s",
				   sys.notes.n ? sys.notes.v[sys.notes.n - 1].message : "no such device");
		goto out;
	}
	if (r < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot read the block devices: %s", strerror(-r));
		goto out;
	}
	if (o.nodes_arg) {
		if (ns_cpuset_parse_list_max(&nodes, o.nodes_arg, 1024) < 0 || !ns_cpuset_count(&nodes)) {
			code = ns_cli_bad_usage(&cli, "--nodes takes a list of node ids (0,1 or 0-3), not '%s'",
						o.nodes_arg);
			goto out;
		}
		for (int n = ns_cpuset_first(&nodes); n >= 0; n = ns_cpuset_next(&nodes, n)) {
			bool found = false;
			for (size_t k = 0; k < sys.machine.nnodes; k++)
				found |=
					sys.machine.nodes[k].id == n && ns_cpuset_count(&sys.machine.nodes[k].cpus) > 0;
			if (!found) {
				code = ns_cli_bad_usage(&cli, "--nodes: node %d has no online CPU to probe from", n);
				goto out;
			}
		}
	} else {
		for (size_t k = 0; k < sys.machine.nnodes; k++)
			if (ns_cpuset_count(&sys.machine.nodes[k].cpus) > 0 &&
			    ns_cpuset_set(&nodes, (unsigned)sys.machine.nodes[k].id) < 0) {
				code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "%s", strerror(ENOMEM));
				goto out;
			}
	}
	devs = calloc(sys.ndisks ? sys.ndisks : 1, sizeof(*devs));
	if (!devs) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "%s", strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < sys.ndisks; i++) {
		const struct ns_disk *d = &sys.disks[i];
		/* named ones as named; else the disks that are devices, not layers or files */
		if (optind == argc && (ns_disk_is_virtual(d) || d->size_bytes == 0))
			continue;
		devs[ndevs++].disk = d;
	}
	if (!ndevs) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "no disk to probe (name one: numastor probe DEVICE)");
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	virt = ns_probe_under_hypervisor(root);
	for (size_t i = 0; i < ndevs && !stop_flag; i++) {
		r = probe_device(root, &sys, &o, &nodes, &devs[i], &cli);
		if (r) {
			code = r;
			goto out;
		}
	}
	for (size_t i = 0; i < ndevs; i++)
		if (devs[i].gap)
			code = NS_EXIT_WARNING;
	if (o.json)
		print_json(&o, root, &sys, devs, ndevs, virt, code);
	else
		print_text(&o, &sys, devs, ndevs, virt);
	if (stop_flag)
		fprintf(stderr, "numastor probe: interrupted: the figures cover what ran\n");
out:
	for (size_t i = 0; devs && i < ndevs; i++) {
		for (size_t k = 0; k < devs[i].nruns; k++) {
			free(devs[i].runs[k].cpus);
			free(devs[i].runs[k].irq_by_node);
		}
		free(devs[i].runs);
	}
	free(devs);
	ns_cpuset_clear(&nodes);
	ns_system_free(&sys);
	ns_root_free(root);
	return code;
}
