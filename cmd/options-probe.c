/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor probe's options (cmd/options.h); each val is what cmd/probe.c's switch takes. */
#include "options.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct ns_option probe_options[] = {
	{"duration", 'd', NS_ARG_REQUIRED, "SECONDS", "per node and device (default 3; at most 3600)",
	 NS_COMPLETE_WORDS, "1 3 10", .val = 'd'},
	{"block-size", 'b', NS_ARG_REQUIRED, "SIZE", "bytes per read: 4k (default), 512, 64k, 1m ...",
	 NS_COMPLETE_WORDS, "512 4k 8k 16k 64k 128k 1m", .val = 'b'},
	{"iodepth", 'Q', NS_ARG_REQUIRED, "N", "reads in flight per job (default 32; 1-4096)", .val = 'q'},
	/* until 0.3.0 (NEWS.md): -q is fix's --quiet */
	{NULL, 'q', NS_ARG_REQUIRED, "N", "--iodepth", .hidden = true, .val = 'q'},
	{"jobs", 'J', NS_ARG_REQUIRED, "N", "threads per node (default 1; 1-64)", .val = 'J'},
	{"nodes", 'N', NS_ARG_REQUIRED, "LIST",
	 "the nodes to probe from, e.g. 0,1 or 0-3 (default: every node with CPUs)", .val = 'N'},
	{"json", 'j', NS_ARG_NONE, NULL, "print a JSON document (schema/numastor-probe.schema.json)", .val = 'j'},
	{"help", 'h', NS_ARG_NONE, NULL, "show this help", .val = 'h'},
};

const struct ns_options ns_options_probe = {"probe", probe_options, N(probe_options)};
