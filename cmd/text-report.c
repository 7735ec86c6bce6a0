/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The readable report, problem first: the summary and the machine; the findings grouped by id
 * and severity (one entry each, its devices compacted as ranges, one example of its evidence,
 * its remedy once); then the devices, one line each, or with --verbose each device's chain
 * device -> PCI -> node, its queue table, its other IRQs and its allocations.
 *
 * Every line fits the width (numastor-check(8), THE REPORT): the terminal's when stdout is one
 * (TIOCGWINSZ, else COLUMNS, as util-linux reads them), 80 otherwise; prose wraps at 80 at
 * most, tables use the whole width. Widths are display columns, not bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <langinfo.h>
#include <string.h>
#include <unistd.h>

#include "act/plan.h"
#include "text-report.h"

int ns_color_choice(const char *when, FILE *out)
{
	const char *term = getenv("TERM");

	if (strcmp(when, "always") == 0)
		return 1;
	if (strcmp(when, "never") == 0)
		return 0;
	if (strcmp(when, "auto") != 0)
		return -1;
	if (getenv("NO_COLOR") && *getenv("NO_COLOR"))
		return 0;
	if (term && strcmp(term, "dumb") == 0) /* a terminal that cannot show escapes */
		return 0;
	return isatty(fileno(out));
}

/* ---------------------------------------------------------------------------------------------
 * Names and numbers
 * --------------------------------------------------------------------------------------------- */

char *ns_text_cpus(const struct ns_cpuset *s)
{
	char *t;
	if (!s->known || ns_cpuset_format(s, &t) < 0)
		return strdup("?");
	if (!*t) {
		free(t);
		return strdup("-");
	}
	return t;
}

void ns_text_bytes(char *buf, size_t n, long long b)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)b;
	int u = 0;
	if (b < 0) {
		snprintf(buf, n, "?");
		return;
	}
	while (v >= 1024 && u < 5)
		v /= 1024, u++;
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static int cmp_by_device(const void *pa, const void *pb, void *data)
{
	const struct ns_findings *f = data;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = strcmp(f->v[a].device, f->v[b].device);
	return c ? c : (a > b) - (a < b);
}

int ns_findings_index_make(const struct ns_findings *f, struct ns_findings_index *ix)
{
	ix->f = f;
	ix->n = 0;
	ix->idx = malloc((f->n ? f->n : 1) * sizeof(*ix->idx));
	if (!ix->idx)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].device)
			ix->idx[ix->n++] = i;
	qsort_r(ix->idx, ix->n, sizeof(*ix->idx), cmp_by_device, (void *)f);
	return 0;
}

const size_t *ns_findings_index_of(const struct ns_findings_index *ix, const char *name, size_t *n)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) { /* the first of name's */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ix->f->v[ix->idx[mid]].device, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < ix->n && strcmp(ix->f->v[ix->idx[hi]].device, name) == 0; hi++)
		;
	*n = hi - lo;
	return ix->idx + lo;
}

void ns_findings_index_free(struct ns_findings_index *ix)
{
	free(ix->idx);
	*ix = (struct ns_findings_index){0};
}

void ns_print_text(FILE *out, const struct ns_system *sys, const struct ns_findings *f, const struct ns_text_opts *opts)
{
	struct esc_ring ring = {0};
	size_t width = opts->width > 0 ? (size_t)opts->width : 80; /* check.c: ns_text_width() */
	struct pen p = {.out = out, .color = opts->color, .verbose = opts->verbose, .ring = &ring};
	struct ns_findings_index bd;
	const char *cs;

	width = width < WIDTH_MIN ? WIDTH_MIN : width > WIDTH_MAX ? WIDTH_MAX : width;
	p.width = width;
	p.prose = width < PROSE_MAX ? width : PROSE_MAX;
	cs = nl_langinfo(CODESET); /* main() took LC_CTYPE from the environment, as for the map */
	p.utf8 = cs && strcmp(cs, "UTF-8") == 0;
	if (ns_findings_index_make(f, &bd) == 0)
		p.by_device = &bd;
	text_summary(&p, sys, f);
	text_machine(&p, sys);
	text_findings(&p, f);
	fputc('\n', out);
	char empty[64] = "";
	if (sys->nempty_hidden)
		snprintf(empty, sizeof(empty), "%s%zu empty not shown: -a", p.verbose ? "" : "; ", sys->nempty_hidden);
	if (p.verbose && !*empty)
		say(&p, 0, C_BOLD, "devices");
	else
		say(&p, 0, C_BOLD, "devices (%s%s)", p.verbose ? "" : "--verbose: each one's path, queues and IRQs",
		    empty);
	if (!sys->ndisks)
		say(&p, 2, NULL, "none");
	else if (p.verbose) {
		/* each vector's fix decision as the plan takes it (lib/model/vecmove.h); none when out of memory */
		struct ns_vecmove_view view;
		bool known = ns_plan_view(sys, f, &view) == 0;
		for (size_t i = 0; i < sys->ndisks; i++)
			text_disk(&p, sys, f, known ? &view : NULL, &sys->disks[i]);
		ns_vecmove_view_free(&view);
	} else
		text_device_table(&p, sys, f);
	if (sys->notes.n) {
		fprintf(out, "\n%snotes%s\n", col(&p, C_BOLD), col(&p, C_RESET));
		for (size_t i = 0; i < sys->notes.n; i++) {
			char *subject = strdup(t(&p, sys->notes.v[i].subject)),
			     *field = strdup(t(&p, sys->notes.v[i].field));
			say(&p, 2, NULL, "%s %s: %s", subject ? subject : "?", field ? field : "?",
			    t(&p, sys->notes.v[i].message));
			free(subject);
			free(field);
		}
	}
	for (unsigned i = 0; i < ESC_SLOTS; i++)
		free(ring.slot[i]);
	if (p.by_device)
		ns_findings_index_free(&bd);
}
