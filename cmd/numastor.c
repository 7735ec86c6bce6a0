/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor: NUMA locality of block devices, their interrupts and their queues. */
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/oom.h"
#include "base/testhook.h"
#include "config.h"
#include "out/outfile.h"
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

/*
 * The command's exit code, unless an allocation failed on the way (lib/base/oom.h): whatever it
 * printed may lack a fact or a line, so the run could not tell. Test builds write the number of
 * allocations to NUMASTOR_TEST_ALLOC_COUNT's file, for the faults test's spread.
 */
static const char *running = "";

/*
 * Every command but fix stops at its first failed allocation, as util-linux's tools do: what it
 * reads or prints next would lack something, and a report with a hole in it is worse than none.
 * No allocation from here: the message by write(2), the output files' temporaries removed, and
 * _exit (a trace's programs go with its descriptors). fix goes on with its own error paths, which
 * undo what it applied, and fails at the end (finish).
 */
static void stop_out_of_memory(void)
{
	static const char pre[] = "numastor ", post[] = ": out of memory\n";

	ns_outfile_discard_pending();
	(void)!write(STDERR_FILENO, pre, sizeof(pre) - 1);
	(void)!write(STDERR_FILENO, running, strlen(running));
	(void)!write(STDERR_FILENO, post, sizeof(post) - 1);
	_exit(NS_EXIT_UNKNOWN);
}

static int finish(const char *command, int code)
{
	const char *count = ns_test_hook("NUMASTOR_TEST_ALLOC_COUNT");

	if (count) {
		FILE *f = fopen(count, "w");
		if (f) {
			fprintf(f, "%ld\n", ns_alloc_calls());
			fclose(f);
		}
	}
	if (!ns_alloc_failed())
		return code;
	fprintf(stderr, "numastor %s: out of memory: %s\n", command,
		code == NS_EXIT_UNKNOWN ? "it could not tell" : "what it printed may be incomplete");
	return NS_EXIT_UNKNOWN;
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
	for (size_t i = 0; i < ns_ncommands; i++) {
		if (strcmp(argv[1], ns_commands[i].name) != 0)
			continue;
		running = ns_commands[i].name;
		if (strcmp(running, "fix") != 0)
			ns_alloc_on_failure(stop_out_of_memory);
		return finish(running, ns_commands[i].fn(argc - 1, argv + 1));
	}
	fprintf(stderr, "numastor: unknown command '%s'\nTry 'numastor --help'.\n", argv[1]);
	return NS_EXIT_UNKNOWN;
}
