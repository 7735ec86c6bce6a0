/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor check's options (cmd/options.h); each val is what cmd/check.c's switch takes. */
#include "options.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct ns_option check_options[] = {
	{"json", 'j', NS_ARG_NONE, NULL, "print one JSON document (schema/numastor.schema.json)", .val = 'j'},
	{"format", 'f', NS_ARG_REQUIRED, "FORMAT",
	 "text (default), json, prometheus (node_exporter's textfile), svg (the --map picture as an SVG "
	 "document) or map (as --map)",
	 NS_COMPLETE_WORDS, "text json prometheus svg map", .val = 'f'},
	{"output-file", 'O', NS_ARG_REQUIRED, "FILE",
	 "write the report to FILE atomically (a regular file only; - or /dev/stdout: standard output)",
	 NS_COMPLETE_FILES, .val = 'O'},
	{"sysroot", 'R', NS_ARG_REQUIRED, "DIR", "read a captured tree under DIR, not the live system",
	 NS_COMPLETE_DIRS, .val = 'R'},
	{"snapshot", 's', NS_ARG_REQUIRED, "FILE", "replay a bundle written by `numastor snapshot`", NS_COMPLETE_FILES,
	 .val = 's'},
	{"interval", 'i', NS_ARG_REQUIRED, "SECONDS",
	 "judge interrupt rates: read every IRQ's per_cpu_count twice, SECONDS apart (above 0, at most "
	 "3600; 0.5 too)",
	 NS_COMPLETE_WORDS, "1 2 5 10", .val = 'i'},
	{"all", 'a', NS_ARG_NONE, NULL, "also list empty devices (size 0)", .val = 'a'},
	{"verbose", 'v', NS_ARG_NONE, NULL, "the full queue tables of every device", .val = 'v'},
	{"list", 'l', NS_ARG_NONE, NULL,
	 "one line per device, in columns (see -o); judges (exit status) only with FINDINGS or SEVERITY", .val = 'l'},
	{"output", 'o', NS_ARG_REQUIRED, "COLUMNS", "the columns of --list (implies it), comma-separated",
	 NS_COMPLETE_WORDS,
	 "NAME KIND TRAN PCI DRIVER NODE SOURCE CPUS IRQS MANAGED FIRES QUEUES FINDINGS SEVERITY SIZE MODEL "
	 "SERIAL BYID",
	 .val = 'o'},
	{"noheadings", 'n', NS_ARG_NONE, NULL, "--list without its heading line", .val = 'n'},
	{"raw", 'r', NS_ARG_NONE, NULL, "--list unaligned, values separated by one space", .val = 'r'},
	{"pairs", 'P', NS_ARG_NONE, NULL, "--list as KEY=\"value\" pairs", .val = 'P'},
	{"map", 'm', NS_ARG_NONE, NULL, "draw the nodes, their CPUs and devices, and where the interrupts fire",
	 .val = 'm'},
	{"color", 0, NS_ARG_REQUIRED, "WHEN", "colour the text report: auto (default), always, never",
	 NS_COMPLETE_WORDS, "auto always never", .val = 'C'},
	{"colour", 0, NS_ARG_REQUIRED, "WHEN", "--color", NS_COMPLETE_WORDS, "auto always never", .hidden = true,
	 .val = 'C'},
	{"help", 'h', NS_ARG_NONE, NULL, "show this help", .val = 'h'},
};

const struct ns_options ns_options_check = {"check", check_options, N(check_options)};
