/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef NUMASTOR_CLI_H
#define NUMASTOR_CLI_H

#include <stdbool.h>

#include <stddef.h>

struct ns_root;
struct ns_system;

/*
 * One command's voice towards the operator: its name, whether it was asked for JSON (then
 * every error is a JSON document on stdout too, `schema/numastor-error.schema.json`), and the
 * root it reads (NULL until it is open), so an error document says which machine it is about.
 */
struct ns_cli {
	const char *cmd; /* "check", "fix", ... */
	bool json;
	struct ns_root *root;
};

/* Before option parsing: the name, and whether -j/--json/--format json is among argv, so an
 * error in the options themselves is already reported in the format asked for. */
void ns_cli_init(struct ns_cli *cli, const char *cmd, int argc, char **argv);

/* `numastor CMD: MESSAGE` on stderr, and under --json also the error document on stdout.
 * Returns code (an NS_EXIT_*), so `return ns_cli_fail(...)`. */
int ns_cli_fail(const struct ns_cli *cli, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The message of the last ns_cli_fail / ns_cli_bad_usage, or NULL. */
const char *ns_cli_last_error(void);

/* A usage error: the one line of ns_cli_fail, then `Try 'numastor CMD --help'.`; exit 3. */
int ns_cli_bad_usage(const struct ns_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * What getopt_long returned for a bad option (called with opterr = 0 and an optstring that
 * starts with ':'): c is '?' (unknown option) or ':' (missing argument); argv and optind as
 * getopt left them. Reports it as ns_cli_bad_usage does; returns 3.
 */
int ns_cli_bad_option(const struct ns_cli *cli, int c, char **argv);

/* Seconds as an option takes them: a plain decimal number ("2", "0.5"; no sign, exponent or
 * hex), above 0 and at most max. -EINVAL when not such a number, -ERANGE outside. */
int ns_cli_parse_seconds(const char *s, double max, double *out);

/*
 * ns_system_discover for a command (names: the devices named, nnames of them): 0, or the exit
 * code of the error it reported: a name that is no disk (the note saying so), or a root
 * without readable block devices (rootname: the root as the operator gave it, NULL for /).
 * sys is to be freed with ns_system_free either way.
 */
int ns_cli_discover(const struct ns_cli *cli, struct ns_root *root, const char *rootname, char **names, size_t nnames,
		    struct ns_system *sys);

#endif
