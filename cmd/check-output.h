/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor check's pieces beside its option parsing (cmd/check.c): what the command line asked
 * for, the report written where it goes (check-output.c); the --snapshot root is cmd/snapdir.h. */
#ifndef NUMASTOR_CMD_CHECK_OUTPUT_H
#define NUMASTOR_CMD_CHECK_OUTPUT_H

#include "cli.h"
#include "columns.h"
#include "numastor.h"

/* What the command line asked for. */
struct check_args {
	const char *sysroot, *color, *format, *output_file, *snapshot, *interval_arg, *columns;
	bool json_flag, format_given, all, verbose, list, noheadings, raw, pairs, map;
	double interval;
	bool json, prom, svg; /* the format, from --format and --json */
	struct ns_text_opts topts;
	struct ns_list_opts lopts; /* its cols: malloc'd */
};

/* Where a run's verdict goes (-O): a run that fails after the target was accepted replaces
 * the last verdict there with its failure, so a fleet never keeps reading an old OK. */
struct verdict_file {
	const char *path;
	bool json, prom, written;
};

/* The report of sys and findings written where a asks, in its format: the verdict (the exit
 * code), or NS_EXIT_UNKNOWN when writing failed (said through cli). */
int check_write(struct ns_cli *cli, const struct check_args *a, const struct ns_system *sys,
		const struct ns_findings *findings, struct verdict_file *vf);
/* A failed run's verdict put in vf's file in place of the last one. */
void write_failed_verdict(const struct verdict_file *vf);

#endif
