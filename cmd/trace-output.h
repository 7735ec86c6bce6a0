/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What numastor trace prints of a window (lib/trace/traceagg.h's result): the text report, the
 * JSON document (schema/numastor-trace.schema.json) and the Prometheus metrics. cmd/trace.c
 * measures and attributes; these only write.
 */
#ifndef NUMASTOR_TRACE_OUTPUT_H
#define NUMASTOR_TRACE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/notes.h"
#include "trace/traceagg.h"

struct ns_root;

struct trace_report {
	struct ns_root *root; /* the host's identity (ns_json_host) */
	const struct ns_trace_result *res;
	const char *kernel_release;
	const char *attach; /* "tp_btf" or "raw_tp" */
	unsigned nnodes;
	double seconds_asked, seconds;	  /* the window asked for, and measured */
	bool stopped;			  /* SIGINT/SIGTERM ended it early */
	uint64_t untimed;		  /* requests counted without a latency (issued before the window) */
	uint64_t lost_records;		  /* requests not counted: a map was full */
	uint64_t missed;		  /* completions the kernel skipped the program for (nested runs), any disk's */
	uint64_t unseen;		  /* completions the disks' own counters show that the program did not see */
	bool unseen_known;		  /* unseen has a value (some disk's counter was read over the window) */
	const char *const *devices_asked; /* the DEVICE arguments; none: every disk */
	size_t ndevices_asked;
	/* per device (res->devices' order): check's cause findings on it, NULL-terminated, or NULL */
	const char *const *const *because;
	const struct ns_notes *notes;
	bool verbose;
};

/* 0 no finding, 1 a warning (io-crosses-nodes): the process's exit code */
int trace_exit_code(const struct trace_report *r);
/* each 0 or -errno of the write */
int trace_print_text(FILE *out, const struct trace_report *r);
int trace_print_json(FILE *out, const struct trace_report *r);
int trace_print_prometheus(FILE *out, const struct trace_report *r);

#endif
