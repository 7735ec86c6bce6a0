/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor check: the report, as text or JSON, and an exit code for monitoring. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-output.h"
#include "snapdir.h"
#include "options.h"
#include "model/sample.h"
#include "out/json.h"
#include "out/outfile.h"

/* --interval: seconds as ns_cli_parse_seconds takes them, at most INTERVAL_MAX (the figure
 * options-check.c's help for --interval gives) */
#define INTERVAL_MAX 3600

static void check_usage(FILE *out)
{
	fprintf(out, "Usage: numastor check [OPTIONS] [DEVICE...]\n"
		     "\n"
		     "Report, for every block device (or the DEVICEs named: nvme0n1, /dev/sda, a\n"
		     "/dev/disk/by-id link), the PCI function behind it, its NUMA node, its IRQs and\n"
		     "blk-mq queues, where its driver's allocations land, and findings with remedies.\n"
		     "\n");
	ns_options_usage(out, &ns_options_check, 80);
	fprintf(out, "\n"
		     "Exit status: 0 ok, 1 warning, 2 critical, 3 could not check.\n"
		     "NO_COLOR in the environment, or TERM=dumb, turns colour off.\n");
	ns_columns_usage(out);
}

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

static int check_run(int argc, char **argv, struct verdict_file *vf);

int cmd_check(int argc, char **argv)
{
	struct verdict_file vf = {0};
	int code = check_run(argc, argv, &vf);

	if (code == NS_EXIT_UNKNOWN && vf.path && !vf.written)
		write_failed_verdict(&vf);
	return code;
}

/*
 * The command line into *out, checked: -1 when the run goes on, else the exit code (--help: 0;
 * a usage error: 2, said). A -O target numastor would not replace is refused here, before
 * anything is read; vf then names it.
 */
static int check_parse(int argc, char **argv, struct ns_cli *cli, struct check_args *out, struct verdict_file *vf)
{
	struct ns_getopt g;
	struct check_args a = {.color = "auto", .format = "text"};
	char *why = NULL;
	bool json = false, prom = false, svg = false;
	struct ns_text_opts topts = {0};
	struct ns_list_opts lopts = {0};
	int c, r, code;

	ns_getopt_init(&g, &ns_options_check);
	while ((c = ns_getopt_next(&g, argc, argv)) != -1) {
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
			return ns_cli_bad_option(cli, c, argv);
		}
	}
	/* --json is always JSON: with a --format that says otherwise it is a usage error */
	if (a.json_flag && a.format_given && strcmp(a.format, "json") != 0)
		return ns_cli_bad_usage(cli, "--json and --format %s are two formats; give one", a.format);
	if (a.json_flag)
		a.format = "json";
	if (strcmp(a.format, "json") == 0)
		json = true;
	else if (strcmp(a.format, "prometheus") == 0)
		prom = true;
	else if (strcmp(a.format, "svg") == 0)
		svg = true; /* the --map picture, as a document */
	else if (strcmp(a.format, "map") == 0)
		a.map = true; /* the picture as text, as --map */
	else if (strcmp(a.format, "text") != 0)
		return ns_cli_bad_usage(cli, "--format takes text, json, prometheus, svg or map, not '%s'", a.format);
	if (a.raw || a.pairs || a.noheadings)
		a.list = true; /* as lsblk's: a form of the listing asks for the listing */
	if (svg && (a.list || a.verbose))
		return ns_cli_bad_usage(cli, "--format svg is the --map picture: not with %s",
					a.list ? "--list" : "--verbose");
	if (a.map && (json || prom))
		return ns_cli_bad_usage(cli, "--map draws a picture (as text, or --format svg): not with %s",
					json ? "--json" : "--format prometheus");
	if (a.list) {
		r = list_options(cli, &a, json, prom, &lopts);
		if (r)
			return r;
	}
	if (a.output_file && !*a.output_file)
		return ns_cli_bad_usage(cli, "--output-file needs a file name");
	if (a.output_file && ns_outfile_is_stdout(a.output_file))
		a.output_file = NULL; /* standard output, asked for by name: written through */
	r = ns_color_choice(a.color, stdout);
	if (r < 0)
		return ns_cli_bad_usage(cli, "--color takes auto, always or never, not '%s'", a.color);
	topts.color = r && !a.output_file;
	topts.verbose = a.verbose;
	topts.all = a.all;
	topts.width = a.output_file ? 80 : ns_text_width(stdout); /* a file is read later, anywhere */
	if (a.output_file) {
		/* before anything is read: a target numastor would not replace is said at once */
		struct ns_outfile probe;
		r = ns_outfile_open(a.output_file, &probe, &why);
		if (r == -EEXIST || r == -EINVAL) {
			code = ns_cli_fail(cli, NS_EXIT_UNKNOWN, "not writing %s: %s", a.output_file, why);
			free(why);
			return code;
		}
		if (r < 0)
			return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "cannot create a file beside %s: %s", a.output_file,
					   strerror(-r));
		ns_outfile_abort(&probe);
		vf->path = a.output_file;
		vf->json = json;
		vf->prom = prom;
	}
	if (a.sysroot && !*a.sysroot)
		return ns_cli_bad_usage(cli, "--sysroot needs a directory");
	if (a.interval_arg && (r = ns_cli_parse_seconds(a.interval_arg, INTERVAL_MAX, &a.interval)) < 0)
		return ns_cli_bad_usage(cli,
					"--interval takes seconds, a plain number above 0 and at most %d (e.g. 2 "
					"or 0.5), not '%s'",
					INTERVAL_MAX, a.interval_arg);
	if (a.interval_arg && a.snapshot)
		return ns_cli_bad_usage(cli, "a snapshot's counts do not change: --interval needs a live system");
	if (a.snapshot && a.sysroot)
		return ns_cli_bad_usage(cli, "--snapshot and --sysroot are two roots; give one");
	a.json = json;
	a.prom = prom;
	a.svg = svg;
	a.topts = topts;
	a.lopts = lopts;
	*out = a;
	return -1;
}

static int check_run(int argc, char **argv, struct verdict_file *vf)
{
	struct check_args a;
	const char *sysroot;
	char *snapdir = NULL;
	struct ns_cli cli;
	struct ns_root *root = NULL;
	struct ns_system sys;
	struct ns_findings findings = {0};
	bool judges = true;
	unsigned list_needs = 0;
	int r, code;

	ns_cli_init(&cli, "check", argc, argv);
	code = check_parse(argc, argv, &cli, &a, vf);
	if (code >= 0)
		return code;
	if (a.list)
		list_needs = ns_columns_needs(a.lopts.cols, a.lopts.ncols, &judges);
	sysroot = a.sysroot;
	if (a.snapshot) {
		code = open_snapshot_root(&cli, a.snapshot, &snapdir, &root);
		if (code != NS_EXIT_OK)
			return code;
		sysroot = snapdir;
	} else if ((r = ns_root_open(sysroot, &root)) < 0) {
		return ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot use %s as the root: %s", sysroot ? sysroot : "/",
				   strerror(-r));
	}
	cli.root = root;
	/* read only what the output uses (lib/read/root.h, NS_NEED_*): the rest reads everything */
	if (a.list && !judges) /* it lists: its columns' values, and in JSON its notes, all of them */
		ns_root_set_needs(root, a.lopts.json ? NS_NEED_JSON : list_needs);
	else if (a.list || a.json)
		ns_root_set_needs(root, NS_NEED_JSON); /* all but the map's SMT */
	else if (!a.map && !a.svg)
		ns_root_set_needs(root, a.prom ? NS_NEED_PROM : a.verbose ? NS_NEED_TEXT_VERBOSE : NS_NEED_TEXT);
	code = ns_cli_discover(&cli, root, sysroot, argv + optind, (size_t)(argc - optind), &sys);
	if (code)
		goto out;
	/* as lsblk: empty devices (size 0) only with --all or when named, in every output */
	if (!a.all && optind == argc)
		ns_system_hide_empty(&sys);
	if (a.interval > 0 && (r = ns_system_sample_rates(root, &sys, a.interval)) < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "sampling the interrupt counts: %s", strerror(-r));
		goto out;
	}
	/* a list that shows no findings makes none: what it did not read would be judged missing */
	r = a.list && !judges ? 0 : ns_findings_evaluate(&sys, &findings);
	if (r < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "evaluating findings: %s", strerror(-r));
		goto out;
	}
	code = check_write(&cli, &a, &sys, &findings, vf);
out:
	free(a.lopts.cols);
	ns_findings_free(&findings);
	ns_system_free(&sys);
	ns_root_free(root);
	remove_snapdir(&snapdir);
	return code;
}
