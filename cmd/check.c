/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor check: the report, as text or JSON, and an exit code for monitoring. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "columns.h"
#include "config.h"
#include "out/json.h"
#include "map.h"
#include "numastor.h"
#include "out/outfile.h"
#include "read/rates.h"
#include "out/snapshot.h"
#include "base/testhook.h"

/* The budget of the JSON report; test builds may lower it (NUMASTOR_TEST_JSON_MAX). */
static size_t json_budget(void)
{
	const char *hook = ns_test_hook("NUMASTOR_TEST_JSON_MAX");
	return hook ? (size_t)strtoull(hook, NULL, 10) : NS_SNAPSHOT_MAX_JSON;
}

/*
 * The JSON document, streamed by lib/out/jsonw (no object tree: memory stays flat on machines
 * with hundreds of disks and thousands of vectors). Its budget (NS_SNAPSHOT_MAX_JSON,
 * numastor-snapshot(8)) is checked on a counting pass that keeps nothing, before the pass
 * that writes: beyond the budget nothing is written (-EFBIG). One pass into a buffer would
 * hold the whole document (8 MiB at 64 disks) in memory; counting costs less.
 */
static int ns_print_json_stream(FILE *out, const struct ns_system *sys, const struct ns_findings *findings)
{
	struct ns_jsonw w;
	int r;

	ns_jsonw_init_count(&w, json_budget());
	r = ns_json_write_check(&w, sys, findings, NUMASTOR_VERSION, true);
	if (r == 0)
		r = ns_jsonw_init_file(&w, out, SIZE_MAX);
	if (r == 0)
		r = ns_json_write_check(&w, sys, findings, NUMASTOR_VERSION, true);
	if (r == 0)
		r = ns_jsonw_finish(&w);
	ns_jsonw_free(&w);
	return r;
}

/*
 * The extraction directory of --snapshot, removed on every way out: the normal one, and the
 * signals that end the process by default (Ctrl-C, kill, a closed pipe, a hangup). The
 * handler removes it (async-signal-safe) and dies of the same signal.
 */
static char *volatile snapdir_live;
static const int fatal_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGPIPE,
				    SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ};

static void on_fatal_signal(int sig)
{
	char *dir = snapdir_live;
	if (dir)
		ns_snapshot_remove(dir);
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when the handler returns (sig is blocked until then) */
}

static void watch_signals(sigset_t *set)
{
	struct sigaction sa = {.sa_handler = on_fatal_signal};

	sigemptyset(set);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaddset(set, fatal_signals[i]);
	sa.sa_mask = *set; /* one handler at a time */
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old;
		/* a signal ignored by whoever started us stays ignored */
		if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(fatal_signals[i], &sa, NULL);
	}
}

/* Make the directory and publish it to the handler with the signals held, so none lands in
 * between and leaves an empty directory behind. */
static int make_snapdir(char **dir)
{
	sigset_t set, old;
	int r;

	watch_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	r = ns_snapshot_mkdir(dir);
	if (r == 0)
		snapdir_live = *dir;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

static void remove_snapdir(char **dir)
{
	if (!*dir)
		return;
	ns_snapshot_remove(*dir);
	snapdir_live = NULL;
	free(*dir);
	*dir = NULL;
}

/* --interval: seconds as ns_cli_parse_seconds takes them, at most INTERVAL_MAX */
#define INTERVAL_MAX 3600

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every reported IRQ's per_cpu_count, twice, `seconds` apart: the counts the fire-location
 * rule then judges are the difference (lib/read/rates.h). The measured time between the two
 * samples is the interval reported. */
static int sample_rates(struct ns_root *root, struct ns_system *sys, double seconds)
{
	struct ns_irq **irqs;
	struct ns_counts *first, *second;
	struct ns_root *again = NULL;
	const char *hook = ns_test_hook("NUMASTOR_TEST_SECOND_SAMPLE_ROOT");
	size_t n = 0, k = 0;
	double t0, t1;
	struct timespec ts;
	int r;

	for (size_t i = 0; i < sys->npcis; i++)
		n += sys->pcis[i]->nirqs;
	irqs = calloc(n + 1, sizeof(*irqs));
	first = calloc(n + 1, sizeof(*first));
	second = calloc(n + 1, sizeof(*second));
	r = irqs && first && second ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < sys->npcis; i++)
		for (size_t q = 0; q < sys->pcis[i]->nirqs; q++)
			irqs[k++] = &sys->pcis[i]->irqs[q];
	/* test builds: the second sample from another tree, so a test knows what fired */
	if (r == 0 && hook)
		r = ns_root_open(hook, &again);
	t0 = now_seconds();
	if (r == 0)
		r = ns_rates_sample(root, irqs, n, first);
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (r == 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	t1 = now_seconds();
	if (r == 0)
		r = ns_rates_sample(again ? again : root, irqs, n, second);
	if (r == 0) {
		/* to the millisecond, as reported: rates are count / interval_seconds exactly */
		sys->interval_seconds = (double)(long long)((t1 - t0) * 1000 + 0.5) / 1000;
		r = ns_rates_apply(&sys->machine, irqs, n, first, second, sys->interval_seconds, &sys->notes);
	}
	for (size_t i = 0; i < n && first && second; i++) {
		ns_counts_free(&first[i]);
		ns_counts_free(&second[i]);
	}
	free(irqs);
	free(first);
	free(second);
	ns_root_free(again);
	return r;
}

static void check_usage(FILE *out)
{
	fprintf(out,
		"Usage: numastor check [OPTIONS] [DEVICE...]\n"
		"\n"
		"Report, for every block device (or the DEVICEs named: nvme0n1, /dev/sda, a\n"
		"/dev/disk/by-id link), the PCI function behind it, its NUMA node, its IRQs and\n"
		"blk-mq queues, where its driver's allocations land, and findings with remedies.\n"
		"\n"
		"Options:\n"
		"  -j, --json             print one JSON document (schema_version %d)\n"
		"  -f, --format FORMAT    text (default), json, prometheus (node_exporter's\n"
		"                         textfile), or svg (the --map picture)\n"
		"  -O, --output-file FILE write the report to FILE atomically (a regular file\n"
		"                         only; - or /dev/stdout: standard output)\n"
		"  -R, --sysroot DIR      read a captured tree under DIR, not the live system\n"
		"  -s, --snapshot FILE    replay a bundle written by `numastor snapshot`\n"
		"  -i, --interval SECONDS judge interrupt rates: read every IRQ's per_cpu_count\n"
		"                         twice, SECONDS apart (above 0, at most %d; 0.5 too)\n"
		"  -a, --all              also list empty devices (size 0)\n"
		"  -v, --verbose          the full queue tables of every device\n"
		"  -l, --list             one line per device, in columns (see -o)\n"
		"  -o, --output COLUMNS   the columns of --list (implies it), comma-separated\n"
		"  -n, --noheadings       --list without its heading line\n"
		"  -r, --raw              --list unaligned, values separated by one space\n"
		"  -P, --pairs            --list as KEY=\"value\" pairs\n"
		"  -m, --map              draw the nodes, their CPUs and devices, and where the\n"
		"                         interrupts fire\n"
		"      --color WHEN       colour the text report: auto (default), always, never\n"
		"  -h, --help             show this help\n"
		"\n"
		"Exit status: 0 ok, 1 warning, 2 critical, 3 could not check.\n"
		"NO_COLOR in the environment, or TERM=dumb, turns colour off.\n",
		NS_SCHEMA_VERSION, INTERVAL_MAX);
	ns_columns_usage(out);
}

/* What the command line asked for. */
struct check_args {
	const char *sysroot, *color, *format, *output_file, *snapshot, *interval_arg, *columns;
	bool json_flag, format_given, all, verbose, list, noheadings, raw, pairs, map;
	double interval;
};

/*
 * --list's columns and form from the command line, or the usage error (its exit code). An -o
 * that names a file is the old --output FILE: said so, rather than "unknown column".
 */
static int list_options(const struct ns_cli *cli, const struct check_args *a, bool json, bool prom,
			struct ns_list_opts *lo)
{
	char *bad = NULL, *names;
	int r;

	if (prom)
		return ns_cli_bad_usage(cli, "--list prints columns or JSON, not --format prometheus");
	if (a->map)
		return ns_cli_bad_usage(cli, "--list and --map are two pictures; give one");
	if (a->raw && a->pairs)
		return ns_cli_bad_usage(cli, "--raw and --pairs are two forms of --list; give one");
	if (a->columns && strchr(a->columns, '/'))
		return ns_cli_bad_usage(cli,
					"--output is now the columns of --list; the report file is --output-file "
					"(-O %s)",
					a->columns);
	r = ns_columns_parse(a->columns, &lo->cols, &lo->ncols, &bad);
	if (r == -ENOMEM)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "out of memory");
	if (r < 0) {
		names = ns_columns_names();
		if (bad && !*bad)
			r = ns_cli_bad_usage(cli, "--output needs column names, comma-separated: %s", names);
		else
			r = ns_cli_bad_usage(cli, "unknown column '%s' (columns: %s)", bad ? bad : "", names);
		free(names);
		free(bad);
		return r;
	}
	lo->noheadings = a->noheadings;
	lo->raw = a->raw;
	lo->pairs = a->pairs;
	lo->json = json;
	return 0;
}

/* Where a run's verdict goes (-O): a run that fails after the target was accepted replaces
 * the last verdict there with its failure, so a fleet never keeps reading an old OK. */
struct verdict_file {
	const char *path;
	bool json, prom, written;
};

static int check_run(int argc, char **argv, struct verdict_file *vf);

static void write_failed_verdict(const struct verdict_file *vf)
{
	const char *reason = ns_cli_last_error();
	struct ns_outfile of = {.fd = -1};
	char *why = NULL;
	FILE *out;
	int r = ns_outfile_open(vf->path, &of, &why);

	if (r == 0 && !(out = fdopen(of.fd, "w"))) {
		r = -errno;
		ns_outfile_abort(&of);
	}
	if (r == 0) {
		if (vf->prom) {
			ns_print_prometheus_failed(out, reason);
		} else if (vf->json) {
			struct json_object *doc =
				ns_json_error(NULL, "check", reason ? reason : "failed", NS_EXIT_UNKNOWN);
			fprintf(out, "%s\n",
				doc ? json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
										  JSON_C_TO_STRING_SPACED |
										  JSON_C_TO_STRING_NOSLASHESCAPE)
				    : "{}");
			json_object_put(doc);
		} else {
			fprintf(out, "summary: UNKNOWN (exit 3): numastor check failed: %s\n", reason ? reason : "?");
		}
		r = fflush(out) != 0 || ferror(out) ? -EIO : 0;
		of.fd = dup(fileno(out));
		fclose(out);
		if (r < 0 || of.fd < 0) {
			ns_outfile_abort(&of);
			r = r < 0 ? r : -EIO;
		} else {
			r = ns_outfile_commit(&of);
		}
	}
	if (r < 0)
		fprintf(stderr, "numastor check: the failure could not be written to %s either: %s\n", vf->path,
			why ? why : strerror(-r));
	free(why);
}

int cmd_check(int argc, char **argv)
{
	struct verdict_file vf = {0};
	int code = check_run(argc, argv, &vf);

	if (code == NS_EXIT_UNKNOWN && vf.path && !vf.written)
		write_failed_verdict(&vf);
	return code;
}

static int check_run(int argc, char **argv, struct verdict_file *vf)
{
	static const struct option opts[] = {
		// clang-format off
		{"json", no_argument, NULL, 'j'},
		{"format", required_argument, NULL, 'f'},
		{"output-file", required_argument, NULL, 'O'},
		{"sysroot", required_argument, NULL, 'R'},
		{"snapshot", required_argument, NULL, 's'},
		{"interval", required_argument, NULL, 'i'},
		{"all", no_argument, NULL, 'a'},
		{"verbose", no_argument, NULL, 'v'},
		{"list", no_argument, NULL, 'l'},
		{"output", required_argument, NULL, 'o'},
		{"noheadings", no_argument, NULL, 'n'},
		{"raw", no_argument, NULL, 'r'},
		{"pairs", no_argument, NULL, 'P'},
		{"map", no_argument, NULL, 'm'},
		{"color", required_argument, NULL, 'C'},
		{"colour", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{0},
		// clang-format on
	};
	struct check_args a = {.color = "auto", .format = "text"};
	const char *sysroot;
	char *snapdir = NULL, *why = NULL;
	struct ns_outfile of = {.fd = -1};
	FILE *out = stdout;
	bool json = false, prom = false, svg = false;
	struct ns_cli cli;
	struct ns_root *root = NULL;
	struct ns_system sys;
	struct ns_findings findings = {0};
	struct ns_text_opts topts = {0};
	struct ns_list_opts lopts = {0};
	int c, r, code, verdict = 0;

	ns_cli_init(&cli, "check", argc, argv);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jf:O:R:s:i:avlo:nrPmh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			a.json_flag = true;
			break;
		case 'f':
			a.format = optarg;
			a.format_given = true;
			break;
		case 'O':
			a.output_file = optarg;
			break;
		case 'R':
			a.sysroot = optarg;
			break;
		case 's':
			a.snapshot = optarg;
			break;
		case 'C':
			a.color = optarg;
			break;
		case 'i':
			a.interval_arg = optarg;
			break;
		case 'a':
			a.all = true;
			break;
		case 'v':
			a.verbose = true;
			break;
		case 'l':
			a.list = true;
			break;
		case 'o':
			a.columns = optarg;
			a.list = true;
			break;
		case 'n':
			a.noheadings = true;
			break;
		case 'r':
			a.raw = true;
			break;
		case 'P':
			a.pairs = true;
			break;
		case 'm':
			a.map = true;
			break;
		case 'h':
			check_usage(stdout);
			return NS_EXIT_OK;
		default:
			return ns_cli_bad_option(&cli, c, argv);
		}
	}
	/* --json is always JSON: with a --format that says otherwise it is a usage error */
	if (a.json_flag && a.format_given && strcmp(a.format, "json") != 0)
		return ns_cli_bad_usage(&cli, "--json and --format %s are two formats; give one", a.format);
	if (a.json_flag)
		a.format = "json";
	if (strcmp(a.format, "json") == 0)
		json = true;
	else if (strcmp(a.format, "prometheus") == 0)
		prom = true;
	else if (strcmp(a.format, "svg") == 0)
		svg = true; /* the --map picture, as a document */
	else if (strcmp(a.format, "text") != 0)
		return ns_cli_bad_usage(&cli, "--format takes text, json, prometheus or svg, not '%s'", a.format);
	if (a.raw || a.pairs || a.noheadings)
		a.list = true; /* as lsblk's: a form of the listing asks for the listing */
	if (svg && (a.list || a.verbose))
		return ns_cli_bad_usage(&cli, "--format svg is the --map picture: not with %s",
					a.list ? "--list" : "--verbose");
	if (a.map && (json || prom))
		return ns_cli_bad_usage(&cli, "--map draws a picture (as text, or --format svg): not with %s",
					json ? "--json" : "--format prometheus");
	if (a.list) {
		r = list_options(&cli, &a, json, prom, &lopts);
		if (r)
			return r;
	}
	if (a.output_file && !*a.output_file)
		return ns_cli_bad_usage(&cli, "--output-file needs a file name");
	if (a.output_file && ns_outfile_is_stdout(a.output_file))
		a.output_file = NULL; /* standard output, asked for by name: written through */
	r = ns_color_choice(a.color, stdout);
	if (r < 0)
		return ns_cli_bad_usage(&cli, "--color takes auto, always or never, not '%s'", a.color);
	topts.color = r && !a.output_file;
	topts.verbose = a.verbose;
	topts.all = a.all;
	topts.width = a.output_file ? 80 : ns_text_width(stdout); /* a file is read later, anywhere */
	if (a.output_file) {
		/* before anything is read: a target numastor would not replace is said at once */
		struct ns_outfile probe;
		r = ns_outfile_open(a.output_file, &probe, &why);
		if (r == -EEXIST || r == -EINVAL) {
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "not writing %s: %s", a.output_file, why);
			free(why);
			return code;
		}
		if (r < 0)
			return ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot create a file beside %s: %s", a.output_file,
					   strerror(-r));
		ns_outfile_abort(&probe);
		vf->path = a.output_file;
		vf->json = json;
		vf->prom = prom;
	}
	if (a.sysroot && !*a.sysroot)
		return ns_cli_bad_usage(&cli, "--sysroot needs a directory");
	if (a.interval_arg && (r = ns_cli_parse_seconds(a.interval_arg, INTERVAL_MAX, &a.interval)) < 0)
		return ns_cli_bad_usage(&cli,
					"--interval takes seconds, a plain number above 0 and at most %d (e.g. 2 "
					"or 0.5), not '%s'",
					INTERVAL_MAX, a.interval_arg);
	if (a.interval_arg && a.snapshot)
		return ns_cli_bad_usage(&cli, "a snapshot's counts do not change: --interval needs a live system");
	if (a.snapshot && a.sysroot)
		return ns_cli_bad_usage(&cli, "--snapshot and --sysroot are two roots; give one");
	sysroot = a.sysroot;
	if (a.snapshot) {
		r = make_snapdir(&snapdir);
		if (r < 0)
			return ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot make a directory to extract %s into: %s",
					   a.snapshot, strerror(-r));
		r = ns_snapshot_extract_into(a.snapshot, snapdir, &why);
		if (r < 0) {
			ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "%s", why ? why : strerror(-r));
			free(why);
			remove_snapdir(&snapdir);
			return NS_EXIT_UNKNOWN;
		}
		sysroot = snapdir;
	}
	r = ns_root_open(sysroot, &root);
	if (r < 0) {
		ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot use %s as the root: %s", sysroot ? sysroot : "/",
			    strerror(-r));
		remove_snapdir(&snapdir);
		return NS_EXIT_UNKNOWN;
	}
	cli.root = root;
	/* read only what the output uses (lib/read/root.h, NS_NEED_*): the rest reads everything */
	if (!a.list && !a.map && !svg && !json)
		ns_root_set_needs(root, prom ? NS_NEED_PROM : a.verbose ? NS_NEED_TEXT_VERBOSE : NS_NEED_TEXT);
	if (a.snapshot) {
		char *label;
		if (asprintf(&label, "snapshot:%s", a.snapshot) >= 0) {
			ns_root_set_label(root, label);
			free(label);
		}
	}
	code = ns_cli_discover(&cli, root, sysroot, argv + optind, (size_t)(argc - optind), &sys);
	if (code)
		goto out;
	/* as lsblk: empty devices (size 0) only with --all or when named, in every output */
	if (!a.all && optind == argc)
		ns_system_hide_empty(&sys);
	if (a.interval > 0 && (r = sample_rates(root, &sys, a.interval)) < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "sampling the interrupt counts: %s", strerror(-r));
		goto out;
	}
	r = ns_findings_evaluate(&sys, &findings);
	if (r < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "evaluating findings: %s", strerror(-r));
		goto out;
	}
	/* the verdict, unless writing it fails: from here code says only whether that failed (an
	 * unjudged device's verdict is 3 too, and is written) */
	verdict = ns_findings_exit_code(&findings);
	code = 0;
	if (a.output_file) {
		/* beside the target, so the rename is atomic: the textfile collector never sees half a file */
		r = ns_outfile_open(a.output_file, &of, &why);
		if (r == 0 && !(out = fdopen(of.fd, "w"))) {
			r = -errno;
			ns_outfile_abort(&of);
		}
		if (r < 0) {
			code = why ? ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "not writing %s: %s", a.output_file, why)
				   : ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot create a file beside %s: %s",
						 a.output_file, strerror(-r));
			out = stdout;
			goto out;
		}
	}
	if (a.list) {
		if (ns_print_list(out, &sys, &findings, &lopts) < 0)
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "out of memory");
	} else if (json) {
		r = ns_print_json_stream(out, &sys, &findings);
		if (r == -EFBIG) {
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN,
					   "the JSON report would be more than %zu bytes, its budget "
					   "(numastor-snapshot(8), BUDGETS); nothing was written",
					   json_budget());
		} else if (r < 0) {
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "out of memory");
		}
	} else if (prom) {
		if ((r = ns_print_prometheus(out, &sys, &findings)) < 0)
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "writing the metrics: %s", strerror(-r));
	} else if (svg) {
		if (ns_print_svg(out, &sys, &findings) < 0)
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "out of memory");
	} else if (a.map) {
		ns_print_map(out, &sys, &findings, ns_text_width(out));
	} else {
		ns_print_text(out, &sys, &findings, &topts);
	}
	if (fflush(out) != 0 || ferror(out)) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "writing the report%s%s: %s", a.output_file ? " to " : "",
				   a.output_file ? a.output_file : "", strerror(errno));
	}
	if (a.output_file) {
		/* the descriptor goes with the stream: the outfile only syncs (through fsync on a
		 * duplicate) and renames */
		int fd = dup(fileno(out));
		if (fclose(out) != 0 && code != NS_EXIT_UNKNOWN)
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "writing %s: %s", a.output_file, strerror(errno));
		out = stdout;
		of.fd = fd;
		if (fd < 0 && code != NS_EXIT_UNKNOWN)
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "writing %s: %s", a.output_file, strerror(errno));
		if (code == NS_EXIT_UNKNOWN) {
			ns_outfile_abort(&of);
		} else if ((r = ns_outfile_commit(&of)) == 0) {
			vf->written = true;
		} else {
			code = ns_cli_fail(
				&cli, NS_EXIT_UNKNOWN, "cannot put the report in place as %s: %s", a.output_file,
				r == -EEXIST ? "something not a regular file took its name meanwhile" : strerror(-r));
		}
	}
	if (code == 0)
		code = verdict;
out:
	free(why);
	free(lopts.cols);
	ns_findings_free(&findings);
	ns_system_free(&sys);
	ns_root_free(root);
	remove_snapdir(&snapdir);
	return code;
}
