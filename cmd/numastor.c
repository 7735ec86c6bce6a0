/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor: NUMA locality of block devices, their interrupts and their queues. */
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "numastor.h"
#include "options.h"

static void usage(FILE *out)
{
	fprintf(out, "Usage: numastor [--version] [--help] COMMAND [OPTIONS]\n"
		     "\n"
		     "NUMA locality of block devices: where each device, its driver's memory and its\n"
		     "interrupts sit, and what to do when they are on the wrong node.\n"
		     "\n"
		     "Commands:\n");
	/* the help of a command beside its name, wrapped to fit 80 columns (cmd/options.h) */
	for (size_t i = 0; i < ns_ncommands; i++)
		ns_help_item(out, ns_commands[i].name, 22, ns_commands[i].help, 80);
	fprintf(out, "\n");
	ns_options_usage(out, &ns_options_numastor, 80);
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
	if (strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return NS_EXIT_OK;
	}
	/* the top level's own options, as its table has them (one, before the command) */
	for (size_t i = 0; argv[1][0] == '-' && i < ns_options_numastor.n; i++) {
		const struct ns_option *o = &ns_options_numastor.v[i];
		bool is_long = argv[1][1] == '-' && o->name && strcmp(argv[1] + 2, o->name) == 0;
		bool is_short = o->short_opt && argv[1][1] == o->short_opt && !argv[1][2];
		if (!is_long && !is_short)
			continue;
		if (o->val == 'V') {
			printf("numastor %s\n", NUMASTOR_VERSION);
			return NS_EXIT_OK;
		}
		usage(stdout);
		return NS_EXIT_OK;
	}
	for (size_t i = 0; i < ns_ncommands; i++)
		if (strcmp(argv[1], ns_commands[i].name) == 0)
			return ns_commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "numastor: unknown command '%s'\nTry 'numastor --help'.\n", argv[1]);
	return NS_EXIT_UNKNOWN;
}
