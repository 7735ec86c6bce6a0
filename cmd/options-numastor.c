/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The top level: numastor's commands and its own options (cmd/options.h). */
#include <stddef.h>

#include "numastor.h"
#include "options.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* each help fits beside its name in 80 columns: tests/check-docs.sh reads the names as the
 * first word of each line */
const struct ns_command ns_commands[] = {
	{"check", cmd_check, "report every block device's NUMA locality, IRQs and queues"},
	{"probe", cmd_probe, "measure random reads from each node, and where IRQs fire"},
	{"trace", cmd_trace, "count where the live workload's I/O crosses nodes (eBPF)"},
	{"fix", cmd_fix, "place movable IRQs on their queues' CPUs; --revert undoes"},
	{"snapshot", cmd_snapshot, "capture what check reads, for check --snapshot to replay"},
	{"irqbalance-policy", cmd_irqbalance_policy, "irqbalance's policy script: ban what numastor placed"},
};
const size_t ns_ncommands = N(ns_commands);

static const struct ns_option numastor_options[] = {
	{"help", 'h', NS_ARG_NONE, NULL, "show the commands", .val = 'h'},
	{"version", 'V', NS_ARG_NONE, NULL, "print the version", .val = 'V'},
};

const struct ns_options ns_options_numastor = {"numastor", numastor_options, N(numastor_options)};

const struct ns_options *const ns_options_all[] = {
	&ns_options_numastor,
	&ns_options_check,
	&ns_options_probe,
	&ns_options_trace,
	&ns_options_fix,
	&ns_options_snapshot,
	&ns_options_irqbalance_policy,
	NULL,
};
