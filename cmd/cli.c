/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Errors as the operator asked for them: one line on stderr, and under --json one document. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "base/escape.h"
#include "out/json.h"
#include "numastor.h"
#include "model/system.h"

void ns_cli_init(struct ns_cli *cli, const char *cmd, int argc, char **argv)
{
	*cli = (struct ns_cli){.cmd = cmd};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			break;
		if (strcmp(a, "--json") == 0 || strcmp(a, "--format=json") == 0 || strcmp(a, "-fjson") == 0 ||
		    ((strcmp(a, "--format") == 0 || strcmp(a, "-f") == 0) && i + 1 < argc &&
		     strcmp(argv[i + 1], "json") == 0))
			cli->json = true;
		/* short clusters such as -jn */
		else if (a[0] == '-' && a[1] != '-' && a[1] && strspn(a + 1, "jnqvalmP") == strlen(a + 1) &&
			 strchr(a + 1, 'j'))
			cli->json = true;
	}
}

/* The last message a command failed with: what a failed run's output file says. */
static char *last_error;

const char *ns_cli_last_error(void)
{
	return last_error;
}

static void emit(const struct ns_cli *cli, int code, const char *message)
{
	char *safe = ns_escape_text(message);

	free(last_error);
	last_error = strdup(message);

	fprintf(stderr, "numastor %s: %s\n", cli->cmd, safe ? safe : message);
	free(safe);
	if (cli->json) {
		struct json_object *doc = ns_json_error(cli->root, cli->cmd, message, code);
		if (doc) {
			puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
									 JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(doc);
		}
		fflush(stdout);
	}
}

static int vfail(const struct ns_cli *cli, int code, const char *fmt, va_list ap)
{
	char *message = NULL;

	if (vasprintf(&message, fmt, ap) < 0)
		message = NULL;
	emit(cli, code, message ? message : fmt);
	free(message);
	return code;
}

int ns_cli_fail(const struct ns_cli *cli, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(cli, code, fmt, ap);
	va_end(ap);
	return code;
}

int ns_cli_bad_usage(const struct ns_cli *cli, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(cli, NS_EXIT_UNKNOWN, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'numastor %s --help'.\n", cli->cmd);
	return NS_EXIT_UNKNOWN;
}

int ns_cli_bad_option(const struct ns_cli *cli, int c, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "?";
	char shortopt[3] = {'-', (char)optopt, 0};

	/* a short option in a cluster (-jx): optopt names it; a long one: argv[optind - 1] */
	if (optopt && !(arg[0] == '-' && arg[1] == '-'))
		arg = shortopt;
	if (c == ':')
		return ns_cli_bad_usage(cli, "option '%s' needs an argument", arg);
	return ns_cli_bad_usage(cli, "unrecognized option '%s'", arg);
}

int ns_text_width(FILE *out)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	int w = 80;

	if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		w = ws.ws_col;
	else if (env && *env && strspn(env, "0123456789") == strlen(env) && strlen(env) < 5)
		w = atoi(env);
	return w < 40 ? 40 : w;
}

int ns_cli_discover(const struct ns_cli *cli, struct ns_root *root, const char *rootname, char **names, size_t nnames,
		    struct ns_system *sys)
{
	int r = ns_system_discover(root, (const char *const *)names, nnames, sys);

	if (r == -ENODEV)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "%s",
				   sys->notes.n ? sys->notes.v[sys->notes.n - 1].message : "no such device");
	if (r < 0)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "cannot read the block devices under %s/sys/block: %s",
				   rootname ? rootname : "", strerror(-r));
	return 0;
}

int ns_cli_parse_seconds(const char *s, double max, double *out)
{
	const char *p = s;
	size_t digits = 0;

	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (digits && *p == '.') {
		size_t frac = 0;
		for (p++; *p >= '0' && *p <= '9'; p++)
			frac++;
		digits = frac ? digits + frac : 0;
	}
	if (!digits || *p || p - s > 16)
		return -EINVAL;
	*out = strtod(s, NULL);
	return *out > 0 && *out <= max ? 0 : -ERANGE;
}
