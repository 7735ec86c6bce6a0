/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numastor probe: random reads from each NUMA node's CPUs in turn, per device, and where the
 * completion interrupts fired meanwhile. Read-only (lib/probe/probe.h). check never runs I/O; this
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
#include "base/cpuset.h"
#include "read/irq.h"
#include "out/json.h"
#include "numastor.h"
#include "probe-output.h"
#include "probe/probe.h"
#include "model/system.h"

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

struct progress_ctx {
	double seconds;
	bool tty;
};

static void progress(void *data, const char *disk, int node, double elapsed, uint64_t ios)
{
	struct progress_ctx *p = data;
	if (!p->tty)
		return;
	ns_probe_progress_line("", disk, node, elapsed, p->seconds, ios);
}

static void print_text(const struct opts *o, const struct ns_system *sys, const struct ns_probe_disk *devs,
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
	if (virt == 1)
		printf("under a hypervisor: absolute IOPS and latency say little; the ratio between nodes and "
		       "where interrupts fire still hold\n");
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

static void print_json(const struct opts *o, struct ns_root *root, const struct ns_system *sys,
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

static int probe_device(struct ns_root *root, const struct ns_system *sys, const struct opts *o,
			const struct ns_cpuset *nodes, struct ns_probe_disk *d, const struct ns_cli *cli)
{
	struct progress_ctx pc = {o->seconds, isatty(STDERR_FILENO) && !o->json};
	struct ns_probe_params p = {.block_size = o->block_size,
				    .iodepth = o->iodepth,
				    .jobs = o->jobs,
				    .seconds = o->seconds,
				    .progress = progress,
				    .data = &pc,
				    .stop = &stop_flag};
	int r = ns_probe_disk_measure(root, sys, nodes, &p, d);

	if (pc.tty)
		fprintf(stderr, "\r\033[K");
	if (r == -EACCES || r == -EPERM)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN,
				   "cannot read /dev/%s: %s (probe only reads; run it as a user who may read the "
				   "device, such as root or a member of the disk group)",
				   d->disk->name, strerror(-r));
	if (r < 0 && d->failed_node < 0)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "cannot open /dev/%s for direct reads: %s", d->disk->name,
				   r == -ENODEV ? "no such block device node, or another device than /sys/block says"
						: strerror(-r));
	if (r < 0)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "reading /dev/%s from node %d: %s", d->disk->name,
				   d->failed_node,
				   r == -EINVAL ? "the block size does not fit the device (a multiple of its "
						  "logical block size, at most its size)"
						: strerror(-r));
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
	struct ns_probe_disk *devs = NULL;
	size_t ndevs = 0;
	int c, r, code = NS_EXIT_OK, virt;

	ns_cli_init(&cli, "probe", argc, argv);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:b:q:J:N:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (ns_cli_parse_seconds(optarg, 3600, &o.seconds) < 0)
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
	code = ns_cli_discover(&cli, root, NULL, argv + optind, (size_t)(argc - optind), &sys);
	if (code)
		goto out;
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
	for (size_t i = 0; devs && i < ndevs; i++)
		ns_probe_disk_free(&devs[i]);
	free(devs);
	ns_cpuset_clear(&nodes);
	ns_system_free(&sys);
	ns_root_free(root);
	return code;
}
