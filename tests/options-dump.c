/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every option table (cmd/options-*.c) as tab-separated lines, for tests/check-options.py:
 *   CMD LONG SHORT ARG ARGNAME COMPLETE WORDS HIDDEN
 * ("-" for none). The tables are compiled data, so the test reads what the binary holds.
 */
#include <stdio.h>

#include "options.h"

int main(void)
{
	static const char *const args[] = {"none", "required", "word", "optional"};
	static const char *const completes[] = {"none", "files", "dirs", "words", "devices"};

	for (const struct ns_options *const *t = ns_options_all; *t; t++)
		for (size_t i = 0; i < (*t)->n; i++) {
			const struct ns_option *o = &(*t)->v[i];
			printf("%s\t%s\t%c\t%s\t%s\t%s\t%s\t%d\n", (*t)->cmd, o->name ? o->name : "-",
			       o->short_opt ? o->short_opt : '-', args[o->arg], o->argname ? o->argname : "-",
			       completes[o->complete], o->words ? o->words : "-", o->hidden);
		}
	for (size_t i = 0; i < ns_ncommands; i++)
		printf("command\t%s\n", ns_commands[i].name);
	return 0;
}
