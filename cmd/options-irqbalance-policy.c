/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor irqbalance-policy's options (cmd/options.h). */
#include "options.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct ns_option policy_options[] = {
	{"sysroot", 'R', NS_ARG_REQUIRED, "DIR", "answer for a captured tree", NS_COMPLETE_DIRS, .val = 'R'},
	{"help", 'h', NS_ARG_NONE, NULL, "show this help", .val = 'h'},
};

const struct ns_options ns_options_irqbalance_policy = {"irqbalance-policy", policy_options, N(policy_options)};
