/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The options of every command: ONE table per command (cmd/options-CMD.c) drives getopt_long
 * (its optstring and struct option[]) and `--help`'s options, and is what the man pages'
 * OPTIONS and the bash, zsh and fish completions are tested against (tests/check-options.py),
 * as cmd/columns.c is for check --list's columns.
 *
 * The same short letter means one thing in every command (tests/check-options.py). An old
 * spelling kept for a release is an entry of its own marked hidden: parsed, never shown, in no
 * man page or completion (NEWS.md says when it goes).
 */
#ifndef NUMASTOR_OPTIONS_H
#define NUMASTOR_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What an option takes, and how --help and the man page write it. */
enum ns_opt_arg {
	NS_ARG_NONE,	 /* --all */
	NS_ARG_REQUIRED, /* --sysroot DIR */
	NS_ARG_WORD,	 /* required, one fixed word: --irqbalance=policy (argname is the word) */
	NS_ARG_OPTIONAL, /* --probe[=SECONDS]: only as --probe=VALUE */
};

/* What a shell completes for the argument. */
enum ns_opt_complete {
	NS_COMPLETE_NONE,  /* nothing to offer (a number, a list) */
	NS_COMPLETE_FILES, /* a file name */
	NS_COMPLETE_DIRS,  /* a directory */
	NS_COMPLETE_WORDS, /* one of words */
	NS_COMPLETE_DEVICES,
};

struct ns_option {
	const char *name; /* the long name without "--"; NULL: a hidden short-only alias */
	int short_opt;	  /* the letter, or 0 */
	enum ns_opt_arg arg;
	const char *argname; /* "FILE", "SECONDS"; NS_ARG_WORD: the word */
	const char *help;    /* one sentence, any length: --help wraps it at spaces */
	enum ns_opt_complete complete;
	const char *words; /* NS_COMPLETE_WORDS: the words, space-separated */
	bool hidden;	   /* an old spelling kept as an alias: parsed, never shown */
	int val;	   /* what ns_getopt_next returns for it, long or short */
};

struct ns_options {
	const char *cmd; /* "check", ...; "numastor" for the top level */
	const struct ns_option *v;
	size_t n;
};

extern const struct ns_options ns_options_check, ns_options_fix, ns_options_probe, ns_options_trace,
	ns_options_snapshot, ns_options_irqbalance_policy, ns_options_numastor;
/* Every table, NULL-terminated: what tests/check-options.py reads through `--help`. */
extern const struct ns_options *const ns_options_all[];

/* The top level's commands (cmd/options-numastor.c): `numastor --help` and the dispatch. */
struct ns_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};
extern const struct ns_command ns_commands[];
extern const size_t ns_ncommands;

#define NS_OPTIONS_MAX 48

/* getopt_long's view of one table. */
struct ns_getopt {
	const struct ns_options *t;
	char optstring[3 * NS_OPTIONS_MAX + 2]; /* ":" first: a bad option is '?', a missing argument ':' */
	struct option longopts[NS_OPTIONS_MAX + 1];
};

/* Makes g's optstring and longopts from t, and readies getopt (optind = 1, opterr = 0).
 * 0, or -E2BIG for a table of more than NS_OPTIONS_MAX entries. */
int ns_getopt_init(struct ns_getopt *g, const struct ns_options *t);

/*
 * getopt_long over g: the entry's val for an option given long or short (a short letter is
 * mapped to its entry's val, so -Q and --iodepth return the same), '?' or ':' for a bad one
 * (for ns_cli_bad_option), -1 at the end.
 */
int ns_getopt_next(struct ns_getopt *g, int argc, char **argv);

/* The entry of t whose short letter is c (hidden ones too), or NULL. */
const struct ns_option *ns_option_by_short(const struct ns_options *t, int c);

/* "-j, --json", "    --probe[=SECONDS]", "-R, --sysroot DIR": how --help names o (into buf). */
void ns_option_label(const struct ns_option *o, char *buf, size_t n);

/*
 * One help item: "  LEFT" then help from column col (the next line when LEFT leaves less than
 * two spaces before it),
 * wrapped at spaces to lines of at most width columns, continuation lines at col too. A word
 * longer than a line is printed whole on its own line.
 */
void ns_help_item(FILE *out, const char *left, size_t col, const char *help, size_t width);

/* "Options:" and every option of t that is not hidden, each an ns_help_item fitting width. */
void ns_options_usage(FILE *out, const struct ns_options *t, size_t width);

#endif
