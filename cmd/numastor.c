/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor: NUMA locality of block devices, their interrupts and their queues. */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "numastor.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct subcommand subcommands[] = {
	{"check", cmd_check, "report every block device's NUMA locality, IRQs and queues"},
	{"probe", cmd_probe, "measure random reads from each node's CPUs, and where interrupts fire (read-only)"},
	{"fix", cmd_fix, "move the IRQs user space may move onto their queues' CPUs; --revert undoes it"},
	{"snapshot", cmd_snapshot, "capture what check reads, for check --snapshot to replay"},
	{"irqbalance-policy", cmd_irqbalance_policy, "irqbalance's policy script: ban what numastor placed"},
};

static void usage(FILE *out)
{
	fprintf(out, "Usage: numastor [--version] [--help] COMMAND [OPTIONS]\n"
		     "\n"
		     "NUMA locality of block devices: where each device, its driver's memory and its\n"
		     "interrupts sit, and what to do when they are on the wrong node.\n"
		     "\n"
		     "Commands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(out, "  %-18s %s\n", subcommands[i].name, subcommands[i].help);
	fprintf(out, "\nRun 'numastor COMMAND --help' for a command's options. See numastor(8).\n");
}

int main(int argc, char **argv)
{
	/* the character set only (UTF-8 or not: display widths, the map's bars); numbers and
	 * messages stay in the C locale, as the kernel writes them */
	setlocale(LC_CTYPE, "");
	if (argc < 2) {
		usage(stderr);
		return NS_EXIT_UNKNOWN;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return NS_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("numastor %s\n", NUMASTOR_VERSION);
		return NS_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "numastor: unknown command '%s'\nTry 'numastor --help'.\n", argv[1]);
	return NS_EXIT_UNKNOWN;
}
