/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor trace's options (cmd/options.h); each val is what cmd/trace.c's switch takes. */
#include "options.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct ns_option trace_options[] = {
	{"duration", 'd', NS_ARG_REQUIRED, "SECONDS",
	 "how long to watch the live workload (default 10; 1-3600); Ctrl-C ends it early", NS_COMPLETE_WORDS, "1 10 60",
	 .val = 'd'},
	{"format", 'f', NS_ARG_REQUIRED, "FORMAT", "text (default), json, prometheus (node_exporter's textfile)",
	 NS_COMPLETE_WORDS, "text json prometheus", .val = 'f'},
	{"output-file", 'O', NS_ARG_REQUIRED, "FILE",
	 "write the report to FILE atomically (a regular file only; - or /dev/stdout: standard output), e.g. "
	 "node_exporter's textfile directory",
	 NS_COMPLETE_FILES, .val = 'O'},
	{"json", 'j', NS_ARG_NONE, NULL, "print a JSON document (schema/numastor-trace.schema.json): -f json",
	 .val = 'j'},
	{"verbose", 'v', NS_ARG_NONE, NULL,
	 "per hardware queue lines; when the kernel refuses the program, libbpf's and the verifier's log", .val = 'v'},
	{"help", 'h', NS_ARG_NONE, NULL, "show this help", .val = 'h'},
};

const struct ns_options ns_options_trace = {"trace", trace_options, N(trace_options)};
