/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef NUMASTOR_CMD_H
#define NUMASTOR_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "model/findings.h"
#include "model/system.h"

/* Exit codes (monitoring-plugin convention). */
enum { NS_EXIT_OK = 0, NS_EXIT_WARNING = 1, NS_EXIT_CRITICAL = 2, NS_EXIT_UNKNOWN = 3 };

struct ns_text_opts {
	bool color;
	bool verbose; /* -v: the full queue tables of every device */
	bool all;     /* -a: empty devices too */
	int width;    /* columns to fit: ns_text_width() */
};

/* The width a text report fits: the terminal's when out is one, else COLUMNS when set to a
 * number, else 80 (a pipe, a file). Never below 40. */
int ns_text_width(FILE *out);
/* A CPU set as the reports print it: its cpulist, "-" when empty, "?" when unknown (malloc'd). */
char *ns_text_cpus(const struct ns_cpuset *s);
/* Bytes in binary units, one decimal ("1.7 TiB"); "?" when negative (unknown). */
void ns_text_bytes(char *buf, size_t n, long long b);
/*
 * The findings by device, made once per report: indices into f->v sorted by device name, then
 * by their order. Each device's findings are then found by bsearch, not by a walk of every
 * finding for every device (quadratic in the machine's disks).
 */
struct ns_findings_index {
	const struct ns_findings *f;
	size_t *idx; /* the findings that name a device */
	size_t n;
};
int ns_findings_index_make(const struct ns_findings *f, struct ns_findings_index *ix);
/* The findings about device name: *n indices into f->v, in their order. */
const size_t *ns_findings_index_of(const struct ns_findings_index *ix, const char *name, size_t *n);
void ns_findings_index_free(struct ns_findings_index *ix);

int cmd_check(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_fix(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_irqbalance_policy(int argc, char **argv);
void ns_print_text(FILE *out, const struct ns_system *sys, const struct ns_findings *f,
		   const struct ns_text_opts *opts);
int ns_print_prometheus(FILE *out, const struct ns_system *sys, const struct ns_findings *f);
/* What a failed check writes where its metrics go: status 3 and the reason, never the old verdict. */
int ns_print_prometheus_failed(FILE *out, const char *reason);
/* "auto" / "always" / "never" -> whether to colour out. -1 for a bad value. */
int ns_color_choice(const char *when, FILE *out);

#endif
