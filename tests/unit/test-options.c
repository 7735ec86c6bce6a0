/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cmd/options: a table -> getopt_long's optstring and options, a short letter mapped to its
 * entry's value, hidden aliases parsed and never shown, and --help wrapped at spaces to fit. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "tap.h"

static const struct ns_option opts[] = {
	{"json", 'j', NS_ARG_NONE, NULL, "print JSON", .val = 'j'},
	{"sysroot", 'R', NS_ARG_REQUIRED, "DIR", "read a captured tree", NS_COMPLETE_DIRS, .val = 'R'},
	{"depth", 'Q', NS_ARG_REQUIRED, "N", "reads in flight", .val = 'q'},
	{NULL, 'q', NS_ARG_REQUIRED, "N", "--depth", .hidden = true, .val = 'q'},
	{"probe", 0, NS_ARG_OPTIONAL, "SECONDS", "probe before and after", .val = 'P'},
	{"irqbalance", 0, NS_ARG_WORD, "policy", "give irqbalance the policy script", .val = 'B'},
	{"colour", 0, NS_ARG_REQUIRED, "WHEN", "--color", .hidden = true, .val = 'C'},
	{"a-rather-long-option-name", 0, NS_ARG_REQUIRED, "VALUE",
	 "a help text long enough that it has to be wrapped over several lines, never in the middle of a "
	 "word such as supercalifragilisticexpialidocious, which goes whole to the next line",
	 .val = 'L'},
};
static const struct ns_options table = {"test", opts, sizeof(opts) / sizeof(opts[0])};

/* the values ns_getopt_next returns for argv, as a string; '?' and ':' as themselves */
static char *parse(int argc, char **argv)
{
	static char got[64];
	struct ns_getopt g;
	size_t n = 0;
	int c;

	CHECK(ns_getopt_init(&g, &table) == 0);
	while ((c = ns_getopt_next(&g, argc, argv)) != -1 && n < sizeof(got) - 1)
		got[n++] = (char)c;
	got[n] = 0;
	return got;
}

static void test_getopt(void)
{
	struct ns_getopt g;
	char *a1[] = {"x", "-j", "-R", "/t", "--sysroot=/u", NULL};
	char *a2[] = {"x", "-Q", "5", "-q", "6", "--depth", "7", "--dep=8", NULL};
	char *a3[] = {"x", "--probe", "--probe=2", "--irqbalance=policy", "--colour", "never", NULL};
	char *a4[] = {"x", "-z", NULL};
	char *a5[] = {"x", "-R", NULL};
	char *a6[] = {"x", "-jR/t", "dev", NULL};

	CHECK(ns_getopt_init(&g, &table) == 0);
	CHECK_STR(g.optstring, ":jR:Q:q:");
	CHECK(g.longopts[0].has_arg == no_argument && strcmp(g.longopts[0].name, "json") == 0);
	CHECK(g.longopts[3].has_arg == optional_argument && g.longopts[3].val == 'P');
	CHECK(g.longopts[4].has_arg == required_argument && g.longopts[4].val == 'B');
	CHECK(g.longopts[7].name == NULL); /* the short-only alias has no long entry */
	CHECK_STR(parse(5, a1), "jRR");
	/* -Q and --depth return the entry's value; the hidden -q too */
	CHECK_STR(parse(8, a2), "qqqq");
	CHECK_STR(parse(6, a3), "PPBC");
	CHECK_STR(parse(2, a4), "?");
	CHECK_STR(parse(2, a5), ":");
	CHECK_STR(parse(3, a6), "jR");
	CHECK(optind == 2);
	CHECK(ns_option_by_short(&table, 'q')->hidden);
	CHECK(ns_option_by_short(&table, 'x') == NULL);
}

static void test_label(void)
{
	char b[64];

	ns_option_label(&opts[0], b, sizeof(b));
	CHECK_STR(b, "-j, --json");
	ns_option_label(&opts[1], b, sizeof(b));
	CHECK_STR(b, "-R, --sysroot DIR");
	ns_option_label(&opts[4], b, sizeof(b));
	CHECK_STR(b, "    --probe[=SECONDS]");
	ns_option_label(&opts[5], b, sizeof(b));
	CHECK_STR(b, "    --irqbalance=policy");
}

static char *usage_of(const struct ns_options *t, size_t width)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	ns_options_usage(f, t, width);
	fclose(f);
	return s;
}

static void test_usage(void)
{
	char *s = usage_of(&table, 80), *line, *save = NULL;
	size_t n = 0, maxw = 0;

	CHECK(strncmp(s, "Options:\n", 9) == 0);
	CHECK(strstr(s, "  -j, --json  ") != NULL);
	CHECK(strstr(s, "-Q, --depth N") != NULL);
	/* hidden: never shown */
	CHECK(strstr(s, "colour") == NULL);
	CHECK(strstr(s, "-q") == NULL);
	CHECK(strstr(s, "--depth\n") == NULL);
	/* the long label gets its help on the next line, at the help column (28) */
	CHECK(strstr(s, "  --a-rather-long-option-name VALUE\n                            a help text") != NULL);
	/* the long word whole, never cut */
	CHECK(strstr(s, "supercalifragilisticexpialidocious,") != NULL);
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		size_t w = strlen(line);
		if (w > maxw)
			maxw = w;
		CHECK(line[w - 1] != ' '); /* no trailing blank */
	}
	CHECK(maxw <= 80 && maxw > 60);
	CHECK(n == 11);
	free(s);
	/* narrower: more lines, none wider than asked except a word longer than the room */
	s = usage_of(&table, 50);
	save = NULL;
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		CHECK(strlen(line) <= 50 || strstr(line, "supercalifragilistic"));
	free(s);
}

/* every real table: fits 80 columns, each short letter once, each val reachable */
static void test_tables(void)
{
	for (const struct ns_options *const *t = ns_options_all; *t; t++) {
		char *s = usage_of(*t, 80), *line, *save = NULL;
		struct ns_getopt g;
		CHECK(ns_getopt_init(&g, *t) == 0);
		for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (strlen(line) > 80) {
				fprintf(stderr, "%s: %s\n", (*t)->cmd, line);
				CHECK(strlen(line) <= 80);
			}
		for (size_t i = 0; i < (*t)->n; i++)
			for (size_t k = i + 1; k < (*t)->n; k++) {
				CHECK(!(*t)->v[i].short_opt || (*t)->v[i].short_opt != (*t)->v[k].short_opt);
				CHECK(!(*t)->v[i].name || !(*t)->v[k].name || strcmp((*t)->v[i].name, (*t)->v[k].name));
			}
		free(s);
	}
}

int main(void)
{
	test_getopt();
	test_label();
	test_usage();
	test_tables();
	return tap_done("options");
}
