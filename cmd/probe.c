/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numastor probe: random reads from each NUMA node's CPUs in turn, per device, and where the
 * completion interrupts fired meanwhile. Read-only (lib/probe/probe.h). check never runs I/O; this
 * is the one command that does.
 */
#define _GNU_SOURCE
#include <errno.h>
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
#include "options.h"
#include "probe-output.h"
#include "probe/probe.h"
#include "model/system.h"
#include "textwrap.h"

static void probe_usage(FILE *out)
{
	fprintf(out, "Usage: numastor probe [OPTIONS] [DEVICE...]\n"
		     "\n"
		     "Measure each device's random-read IOPS, throughput and completion latency from\n"
		     "each NUMA node's CPUs in turn (threads bound to the node, buffers in its memory,\n"
		     "io_uring, O_DIRECT), and count where the device's interrupts fired during each\n"
		     "node's run. Read-only: devices are opened O_RDONLY and only read. Without\n"
		     "DEVICE, every disk that is not virtual (loop, zram, device-mapper, md) is\n"
		     "probed.\n"
		     "\n");
	ns_options_usage(out, &ns_options_probe, 80);
	fprintf(out, "\n"
		     "A node whose IOPS is more than 15%% below the best node's is the finding\n"
		     "probe-node-gap (warning). Before the first read, stderr says how long the whole\n"
		     "probe takes (devices x nodes x duration); progress goes to a terminal's stderr\n"
		     "only.\n"
		     "\n"
		     "Exit status: 0 no gap, 1 a node gap, 3 could not probe (bad option, no\n"
		     "permission to read a device, a read failed).\n");
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

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
/* A duration as a person reads it: "0.5 s", "12 s", "2 min 30 s", "1 h 5 min". */
static void fmt_duration(char *buf, size_t n, double s)
{
	unsigned long long t = (unsigned long long)(s + 0.5); /* s >= 0 */

	if (s < 10 && s != (double)(unsigned long long)s)
		snprintf(buf, n, "%.1f s", s);
	else if (t < 120)
		snprintf(buf, n, "%llu s", t);
	else if (t < 3600)
		snprintf(buf, n, t % 60 ? "%llu min %llu s" : "%llu min", t / 60, t % 60);
	else
		snprintf(buf, n, (t % 3600) / 60 ? "%llu h %llu min" : "%llu h", t / 3600, (t % 3600) / 60);
}

/*
 * Before the first read: how long the whole probe takes (every device from every node in turn,
 * one run each), on stderr, so that an operator knows what a run of 64 disks x 8 nodes costs
 * before it is under way. One line; on a terminal, where the progress follows, also how to
 * stop it, wrapped at 80 columns.
 */
static void print_estimate(const struct probe_opts *o, size_t ndevs, unsigned nnodes)
{
	struct tw_page pg = {.out = stderr};
	char per[32], total[32], *line;

	fmt_duration(per, sizeof(per), o->seconds);
	fmt_duration(total, sizeof(total), o->seconds * (double)ndevs * nnodes);
	if (asprintf(&line, "numastor probe: %zu device%s x %u node%s x %s per run: about %s%s", ndevs,
		     ndevs == 1 ? "" : "s", nnodes, nnodes == 1 ? "" : "s", per, total,
		     isatty(STDERR_FILENO) ? " (Ctrl-C stops it; the figures then cover what ran)" : "") < 0)
		return;
	tw_wrap(&pg, 80, 0, 2, NULL, line);
	free(line);
	fflush(stderr);
}

static int probe_device(struct ns_root *root, const struct ns_system *sys, const struct probe_opts *o,
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

/* The command line into *o: -1 when the run goes on, else the exit code (--help: 0; a usage
 * error: 2, said). */
static int probe_parse(int argc, char **argv, struct ns_cli *cli, struct probe_opts *o)
{
	struct ns_getopt g;
	int c;

	ns_getopt_init(&g, &ns_options_probe);
	while ((c = ns_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'd':
			if (ns_cli_parse_seconds(optarg, 3600, &o->seconds) < 0)
				return ns_cli_bad_usage(cli, "--duration takes seconds above 0, at most 3600, not '%s'",
							optarg);
			break;
		case 'b':
			if (parse_size(optarg, &o->block_size) < 0)
				return ns_cli_bad_usage(
					cli, "--block-size takes bytes from 512 to 16m (4k, 64k, 1m), not '%s'",
					optarg);
			break;
		case 'q':
			if (parse_uint(optarg, 1, 4096, &o->iodepth) < 0)
				return ns_cli_bad_usage(cli, "--iodepth takes 1 to 4096, not '%s'", optarg);
			break;
		case 'J':
			if (parse_uint(optarg, 1, 64, &o->jobs) < 0)
				return ns_cli_bad_usage(cli, "--jobs takes 1 to 64, not '%s'", optarg);
			break;
		case 'N':
			o->nodes_arg = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			probe_usage(stdout);
			return NS_EXIT_OK;
		default:
			return ns_cli_bad_option(cli, c, argv);
		}
	}
	return -1;
}

int cmd_probe(int argc, char **argv)
{
	struct probe_opts o = {.seconds = 3, .block_size = 4096, .iodepth = 32, .jobs = 1};
	struct ns_cli cli;
	struct ns_root *root = NULL;
	struct ns_system sys = {0};
	struct ns_cpuset nodes = {0};
	struct ns_probe_disk *devs = NULL;
	size_t ndevs = 0;
	int r, code = NS_EXIT_OK, virt, missing = -1;

	ns_cli_init(&cli, "probe", argc, argv);
	code = probe_parse(argc, argv, &cli, &o);
	if (code >= 0)
		return code;
	code = NS_EXIT_OK;
	r = ns_root_open(NULL, &root);
	if (r < 0)
		return ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot open the root: %s", strerror(-r));
	cli.root = root;
	code = ns_cli_discover(&cli, root, NULL, argv + optind, (size_t)(argc - optind), &sys);
	if (code)
		goto out;
	r = ns_probe_pick_nodes(&sys, o.nodes_arg, &nodes, &missing);
	if (r == -EINVAL)
		code = ns_cli_bad_usage(&cli, "--nodes takes a list of node ids (0,1 or 0-3), not '%s'", o.nodes_arg);
	else if (r == -ENOENT)
		code = ns_cli_bad_usage(&cli, "--nodes: node %d has no online CPU to probe from", missing);
	else if (r < 0)
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "%s", strerror(-r));
	if (r < 0)
		goto out;
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
	print_estimate(&o, ndevs, ns_cpuset_count(&nodes));
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
		probe_print_json(&o, root, &sys, devs, ndevs, virt, code);
	else
		probe_print_text(&o, &sys, devs, ndevs, virt);
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
