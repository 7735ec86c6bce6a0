/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One option table per command -> getopt_long and --help (cmd/options.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "options.h"

static int has_arg(enum ns_opt_arg a)
{
	switch (a) {
	case NS_ARG_REQUIRED:
	case NS_ARG_WORD:
		return required_argument;
	case NS_ARG_OPTIONAL:
		return optional_argument;
	default:
		return no_argument;
	}
}

int ns_getopt_init(struct ns_getopt *g, const struct ns_options *t)
{
	size_t nl = 0, ns = 0;

	if (t->n > NS_OPTIONS_MAX)
		return -E2BIG;
	memset(g, 0, sizeof(*g));
	g->t = t;
	g->optstring[ns++] = ':';
	for (size_t i = 0; i < t->n; i++) {
		const struct ns_option *o = &t->v[i];
		if (o->name)
			g->longopts[nl++] = (struct option){o->name, has_arg(o->arg), NULL, o->val};
		if (o->short_opt) {
			g->optstring[ns++] = (char)o->short_opt;
			/* an optional argument short: -pVALUE only, as getopt has it */
			if (o->arg != NS_ARG_NONE)
				g->optstring[ns++] = ':';
			if (o->arg == NS_ARG_OPTIONAL)
				g->optstring[ns++] = ':';
		}
	}
	optind = 1;
	opterr = 0;
	return 0;
}

const struct ns_option *ns_option_by_short(const struct ns_options *t, int c)
{
	for (size_t i = 0; c && i < t->n; i++)
		if (t->v[i].short_opt == c)
			return &t->v[i];
	return NULL;
}

int ns_getopt_next(struct ns_getopt *g, int argc, char **argv)
{
	int li = -1, c = getopt_long(argc, argv, g->optstring, g->longopts, &li);
	const struct ns_option *o;

	if (c == -1 || c == '?' || c == ':' || li >= 0)
		return c; /* a long option returns its val already */
	o = ns_option_by_short(g->t, c);
	return o ? o->val : '?';
}

void ns_option_label(const struct ns_option *o, char *buf, size_t n)
{
	const char *arg = o->argname ? o->argname : "ARG";
	int len;

	if (o->short_opt && o->name)
		len = snprintf(buf, n, "-%c, --%s", o->short_opt, o->name);
	else if (o->name)
		len = snprintf(buf, n, "    --%s", o->name);
	else
		len = snprintf(buf, n, "-%c", o->short_opt);
	if (len < 0 || (size_t)len >= n)
		return;
	switch (o->arg) {
	case NS_ARG_REQUIRED:
		snprintf(buf + len, n - (size_t)len, " %s", arg);
		break;
	case NS_ARG_WORD:
		snprintf(buf + len, n - (size_t)len, "%s%s", o->name ? "=" : " ", arg);
		break;
	case NS_ARG_OPTIONAL:
		snprintf(buf + len, n - (size_t)len, o->name ? "[=%s]" : "[%s]", arg);
		break;
	default:
		break;
	}
}

void ns_help_item(FILE *out, const char *left, size_t col, const char *help, size_t width)
{
	size_t pos = 2 + strlen(left);
	const char *p = help;
	bool first = true;

	fprintf(out, "  %s", left);
	if (pos + 2 > col) { /* at least two spaces between: else the help starts below */
		fputc('\n', out);
		pos = 0;
	}
	fprintf(out, "%*s", (int)(col - pos), "");
	pos = col;
	while (*p) {
		size_t wl;
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		wl = strcspn(p, " ");
		if (!first && pos + 1 + wl > width) {
			fprintf(out, "\n%*s", (int)col, "");
			pos = col;
			first = true;
		}
		if (!first) {
			fputc(' ', out);
			pos++;
		}
		fwrite(p, 1, wl, out);
		pos += wl;
		p += wl;
		first = false;
	}
	fputc('\n', out);
}

void ns_options_usage(FILE *out, const struct ns_options *t, size_t width)
{
	char label[128];
	size_t col = 0;

	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].hidden)
			continue;
		ns_option_label(&t->v[i], label, sizeof(label));
		if (2 + strlen(label) + 2 > col)
			col = 2 + strlen(label) + 2;
	}
	if (col > 28) /* a longer label puts its help on the next line rather than all of them */
		col = 28;
	fprintf(out, "Options:\n");
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].hidden)
			continue;
		ns_option_label(&t->v[i], label, sizeof(label));
		ns_help_item(out, label, col, t->v[i].help, width);
	}
}
