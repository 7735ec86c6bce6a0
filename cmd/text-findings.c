/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The findings, grouped: one entry per cause, its devices compacted as ranges, one example of
 * its evidence (--verbose: each one's), its effects under it and its remedy once. */
#define _GNU_SOURCE
#include <string.h>

#include "text-report.h"

/* Natural order of device names: digit runs compare as numbers (nvme2n1 before nvme10n1). */
static int natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			unsigned long long x = strtoull(a, (char **)&a, 10), y = strtoull(b, (char **)&b, 10);
			if (x != y)
				return x < y ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		a++, b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

static int natcmp_p(const void *a, const void *b)
{
	return natcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Is b the name after a: the same but for one run of digits, one more (nvme3n1 -> nvme4n1,
 * nvme0n1 -> nvme0n2), or, as sdX names go, the last letter the next one (sdc -> sdd)?
 */
static bool next_name(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i = 0;

	if (la == lb && la > 1 && strncmp(a, b, la - 1) == 0 && a[la - 1] >= 'a' && a[la - 1] < 'z' &&
	    b[la - 1] == a[la - 1] + 1)
		return true;
	while (a[i] && a[i] == b[i] && !(a[i] >= '0' && a[i] <= '9'))
		i++;
	/* back to the start of the digit run both are in */
	while (i > 0 && a[i - 1] >= '0' && a[i - 1] <= '9')
		i--;
	for (;;) {
		size_t da = strspn(a + i, "0123456789"), db = strspn(b + i, "0123456789");
		if (da && db) {
			unsigned long long x = strtoull(a + i, NULL, 10), y = strtoull(b + i, NULL, 10);
			bool canon = (a[i] != '0' || da == 1) && (b[i] != '0' || db == 1);
			if (x + 1 == y && canon)
				return strcmp(a + i + da, b + i + db) == 0;
			if (x != y || da != db)
				return false;
			i += da;
			continue;
		}
		if (!a[i] || a[i] != b[i])
			return false;
		i++;
	}
}

/* The names, sorted naturally, with runs of consecutive names as "first-last": "nvme0n1-nvme7n1,
 * sda". ASCII '-' in every locale (numastor-check(8)): the same bytes for grep and the tests. */
static char *name_ranges(const struct pen *p, const char **names, size_t n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	qsort(names, n, sizeof(*names), natcmp_p);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && next_name(names[j], names[j + 1]))
			j++;
		fprintf(f, "%s%s", i ? ", " : "", t(p, names[i]));
		if (j > i)
			fprintf(f, "-%s", t(p, names[j]));
		i = j + 1;
	}
	fclose(f);
	return out;
}

/* ---------------------------------------------------------------------------------------------
 * Findings, grouped: one entry per cause (id, severity and the sentence said), in order of
 * severity (lib/model/findings sorts them so), then of first appearance; each cause's effects under it
 * --------------------------------------------------------------------------------------------- */

struct group {
	const struct ns_finding *first;
	size_t *idx; /* into f->v */
	size_t n;
};

static bool same_group(const struct ns_finding *a, const struct ns_finding *b)
{
	return a->severity == b->severity && strcmp(a->id, b->id) == 0 && strcmp(a->form, b->form) == 0 &&
	       (a->caused_by == b->caused_by ||
		(a->caused_by && b->caused_by && strcmp(a->caused_by, b->caused_by) == 0));
}

/* The findings at positions pick[0..n) of f->v grouped: a group's sentence holds for every
 * device it names, since its findings share the id, the severity, the form and the cause. */
static size_t group_findings(const struct ns_findings *f, const size_t *pick, size_t n, struct group **out)
{
	struct group *g = calloc(n ? n : 1, sizeof(*g));
	size_t *of = calloc(n ? n : 1, sizeof(*of)); /* each finding's group */
	size_t ng = 0;

	*out = g;
	if (!g || !of) {
		free(of);
		return 0;
	}
	/* the groups are the rules' ids and forms (a few dozen): finding each one's is linear */
	for (size_t i = 0; i < n; i++) {
		const struct ns_finding *x = &f->v[pick[i]];
		size_t k = 0;
		while (k < ng && !same_group(g[k].first, x))
			k++;
		if (k == ng)
			g[ng++].first = x;
		of[i] = k;
		g[k].n++;
	}
	/* each group's findings in the order above: its own list, of its own size */
	for (size_t k = 0; k < ng; k++) {
		g[k].idx = calloc(g[k].n ? g[k].n : 1, sizeof(size_t));
		g[k].n = 0;
	}
	for (size_t i = 0; i < n; i++)
		if (g[of[i]].idx)
			g[of[i]].idx[g[of[i]].n++] = pick[i];
	free(of);
	return ng;
}

static void free_groups(struct group *g, size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		free(g[i].idx);
	free(g);
}

/* "remedy: TEXT", then what numastor can do, least invasive first, each with its undo */
static void print_remedy(const struct pen *p, size_t indent, const struct ns_finding *x, const char *who)
{
	say(p, indent, NULL, "remedy%s%s: %s%s", who ? " for " : "", who ? who : "", t(p, x->remedy_text),
	    x->nsteps > 1 ? " Least invasive first:" : "");
	for (size_t k = 0; k < x->nsteps; k++) {
		char *changes = strdup(t(p, x->steps[k].changes));
		say(p, indent + 2, NULL, "%zu. %s: %s; undo: %s", k + 1, x->steps[k].command, changes ? changes : "?",
		    x->steps[k].undo);
		free(changes);
	}
}

struct remedy_sort {
	const struct ns_findings *f;
	const struct group *g;
};

static int cmp_remedy(const void *pa, const void *pb, void *data)
{
	const struct remedy_sort *rs = data;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = strcmp(rs->f->v[rs->g->idx[a]].remedy_text, rs->f->v[rs->g->idx[b]].remedy_text);
	return c ? c : (a > b) - (a < b);
}

/* "critical irq-confined: nvme0n1-nvme7n1 (8)" at indent: a group's head line */
static void print_group_head(const struct pen *p, size_t indent, const struct ns_findings *f, const struct group *g)
{
	const struct ns_finding *x = g->first;
	const char **names = calloc(g->n ? g->n : 1, sizeof(char *));
	char *list = NULL;
	size_t nnames = 0;

	for (size_t i = 0; names && i < g->n; i++)
		if (f->v[g->idx[i]].device)
			names[nnames++] = f->v[g->idx[i]].device;
	if (nnames)
		list = name_ranges(p, names, nnames);
	if (list) /* the count even for one: a list that wraps ends there */
		say(p, indent, NULL, "%s%-8s%s %s: %s (%zu)", col(p, sev_color(x->severity)),
		    ns_severity_name(x->severity), col(p, C_RESET), x->id, list, nnames);
	else
		say(p, indent, NULL, "%s%-8s%s %s", col(p, sev_color(x->severity)), ns_severity_name(x->severity),
		    col(p, C_RESET), x->id);
	free(list);
	free(names);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The effects of a cause group: the findings caused by its id on its devices, grouped, each
 * head line under the cause ("because: ID" once above them); --verbose adds one's sentence.
 */
static void print_effects(const struct pen *p, const struct ns_findings *f, const struct group *g)
{
	const char **devs = calloc(g->n ? g->n : 1, sizeof(char *));
	size_t *pick = calloc(f->n ? f->n : 1, sizeof(size_t)), ndevs = 0, npick = 0, ng;
	struct group *eg;

	if (!devs || !pick)
		goto out;
	for (size_t i = 0; i < g->n; i++)
		if (f->v[g->idx[i]].device)
			devs[ndevs++] = f->v[g->idx[i]].device;
	qsort(devs, ndevs, sizeof(*devs), cmp_str);
	for (size_t i = 0; i < f->n; i++) {
		const struct ns_finding *x = &f->v[i];
		if (x->caused_by && x->device && strcmp(x->caused_by, g->first->id) == 0 &&
		    bsearch(&x->device, devs, ndevs, sizeof(*devs), cmp_str))
			pick[npick++] = i;
	}
	if (!npick)
		goto out;
	ng = group_findings(f, pick, npick, &eg);
	say(p, 4, NULL, "effects, because: %s", g->first->id);
	for (size_t k = 0; k < ng; k++) {
		print_group_head(p, 6, f, &eg[k]);
		if (p->verbose)
			say(p, 8, NULL, "%s%s", eg[k].n > 1 ? "e.g. " : "", t(p, eg[k].first->message));
	}
	free_groups(eg, ng);
out:
	free(devs);
	free(pick);
}

static void print_group(const struct pen *p, const struct ns_findings *f, const struct group *g)
{
	const struct ns_finding *x = g->first;

	print_group_head(p, 2, f, g);
	if (!p->verbose || g->n == 1) {
		/* one device's evidence stands for the others (--verbose: each one's) */
		say(p, 4, NULL, "%s%s", g->n > 1 ? "e.g. " : "", t(p, x->message));
		print_effects(p, f, g);
		print_remedy(p, 4, x, NULL);
		return;
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct ns_finding *y = &f->v[g->idx[i]];
		say(p, 4, NULL, "%s%s%s", y->device ? t(p, y->device) : "", y->device ? ": " : "", t(p, y->message));
	}
	print_effects(p, f, g);
	/* each distinct remedy once, with the devices it is for when they differ */
	bool same = true;
	for (size_t i = 1; i < g->n; i++)
		same &= strcmp(f->v[g->idx[i]].remedy_text, x->remedy_text) == 0;
	if (same) {
		print_remedy(p, 4, x, NULL);
		return;
	}
	/* which remedy comes first: the group's positions sorted by remedy, then position */
	size_t *pos = calloc(g->n, sizeof(*pos));
	bool *first = calloc(g->n, sizeof(*first));
	if (!pos || !first) {
		free(pos);
		free(first);
		return;
	}
	for (size_t i = 0; i < g->n; i++)
		pos[i] = i;
	qsort_r(pos, g->n, sizeof(*pos), cmp_remedy, (void *)&(struct remedy_sort){f, g});
	for (size_t i = 0; i < g->n; i++)
		first[pos[i]] =
			i == 0 || strcmp(f->v[g->idx[pos[i]]].remedy_text, f->v[g->idx[pos[i - 1]]].remedy_text) != 0;
	for (size_t i = 0; i < g->n; i++)
		if (first[i])
			print_remedy(p, 4, &f->v[g->idx[i]], f->v[g->idx[i]].device);
	free(pos);
	free(first);
}

void text_findings(const struct pen *p, const struct ns_findings *f)
{
	struct group *g = NULL;
	size_t *pick = calloc(f->n ? f->n : 1, sizeof(size_t)), n = 0, ng = 0;

	/* the causes, each with its effects under it */
	for (size_t i = 0; pick && i < f->n; i++)
		if (!f->v[i].caused_by)
			pick[n++] = i;
	if (pick)
		ng = group_findings(f, pick, n, &g);
	free(pick);
	fprintf(p->out, "\n%sfindings%s%s\n", col(p, C_BOLD), col(p, C_RESET), f->n ? "" : ": none");
	for (size_t i = 0; i < ng; i++)
		print_group(p, f, &g[i]);
	free_groups(g, ng);
}
