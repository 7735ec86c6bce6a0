/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor snapshot's options (cmd/options.h). */
#include "options.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct ns_option snapshot_options[] = {
	{"output-file", 'O', NS_ARG_REQUIRED, "FILE",
	 "where to write it (default numastor-snapshot-HOST-TIME.tar.gz; - or /dev/stdout: standard output)",
	 NS_COMPLETE_FILES, .val = 'O'},
	/* until 0.3.0 (NEWS.md): -o and --output are check's columns, as lsblk's */
	{"output", 'o', NS_ARG_REQUIRED, "FILE", "--output-file", NS_COMPLETE_FILES, .hidden = true, .val = 'O'},
	{"sysroot", 'R', NS_ARG_REQUIRED, "DIR", "capture a captured tree instead of the live system", NS_COMPLETE_DIRS,
	 .val = 'R'},
	{"help", 'h', NS_ARG_NONE, NULL, "show this help", .val = 'h'},
};

const struct ns_options ns_options_snapshot = {"snapshot", snapshot_options, N(snapshot_options)};
