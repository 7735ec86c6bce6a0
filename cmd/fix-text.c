/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor fix's text (cmd/fix.h): its page at the terminal's width over cmd/textwrap, and the
 * helpers its reports group with (IRQ numbers as ranges, a reason's shape). */
#define _GNU_SOURCE
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fix.h"

/* prose wraps here even on a wider terminal, as check's text does (cmd/text-report.h) */
#define PROSE_MAX 80

char *fix_cpus_text(const struct ns_cpuset *s)
{
	char *t = NULL;
	if (!s->known || ns_cpuset_format(s, &t) < 0)
		return strdup("?");
	return t;
}

void fix_page_init(struct fix_page *fp, FILE *out, const struct fix_opts *o)
{
	int w = ns_text_width(out);
	const char *cs = nl_langinfo(CODESET); /* main() took LC_CTYPE from the environment */

	fp->pg = (struct tw_page){.out = out, .color = o->color, .utf8 = cs && strcmp(cs, "UTF-8") == 0};
	fp->width = w > PROSE_MAX ? PROSE_MAX : (size_t)w;
}

void fix_say(const struct fix_page *fp, size_t ind1, size_t ind2, const char *c, const char *text)
{
	tw_wrap(&fp->pg, fp->width, ind1, ind2, fp->pg.color && c && *c ? c : NULL, text ? text : "?");
}

static int intcmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Numbers as ranges, "58-73,90": every number of v[0..n) inside one of them. */
char *fix_ranges(int *v, size_t n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	qsort(v, n, sizeof(*v), intcmp);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && v[j + 1] <= v[j] + 1)
			j++;
		fprintf(f, "%s%d", i ? "," : "", v[i]);
		if (v[j] != v[i])
			fprintf(f, "-%d", v[j]);
		i = j + 1;
	}
	fclose(f);
	return out;
}

/* The reason's shape: each run of digits (and the ',' '-' of a list after one) as '#', so that
 * the vectors of one rule group whatever their queue and CPUs. */
char *fix_shape(const char *s)
{
	char *t = strdup(s ? s : ""), *w = t;

	if (!t)
		return NULL;
	for (const char *r = t; *r;) {
		if (*r >= '0' && *r <= '9') {
			while ((*r >= '0' && *r <= '9') || ((*r == ',' || *r == '-') && r[1] >= '0' && r[1] <= '9'))
				r++;
			*w++ = '#';
		} else {
			*w++ = *r++;
		}
	}
	*w = 0;
	return t;
}

/* Why the plan takes dev: the causes its answers come down to, each once with the effects it
 * explains (as check's findings group them): "node-forced (critical), and its effects here
 * irq-confined, irq-fires-remote". */
char *fix_causes_text(const struct ns_findings *fs, const char *dev, const char *answers)
{
	char *ids = strdup(answers ? answers : ""), *save = NULL, *out = NULL;
	const char *root[32], *eff[32][32];
	size_t nroot = 0, neff[32] = {0}, len = 0;
	FILE *f;

	if (!ids)
		return NULL;
	for (char *id = strtok_r(ids, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
		const char *cause = id;
		for (size_t i = 0; fs && i < fs->n; i++)
			if (fs->v[i].device && strcmp(fs->v[i].device, dev) == 0 && strcmp(fs->v[i].id, id) == 0 &&
			    fs->v[i].caused_by) {
				cause = fs->v[i].caused_by;
				break;
			}
		size_t k = 0;
		while (k < nroot && strcmp(root[k], cause) != 0)
			k++;
		if (k == nroot && nroot < 32)
			root[nroot++] = cause;
		if (k < nroot && cause != id && neff[k] < 32)
			eff[k][neff[k]++] = id;
	}
	f = open_memstream(&out, &len);
	if (f) {
		for (size_t k = 0; k < nroot; k++) {
			const char *sev = NULL;
			for (size_t i = 0; fs && i < fs->n; i++)
				if (fs->v[i].device && strcmp(fs->v[i].device, dev) == 0 &&
				    strcmp(fs->v[i].id, root[k]) == 0)
					sev = ns_severity_name(fs->v[i].severity);
			fprintf(f, "%s%s%s%s%s", k ? "; " : "", root[k], sev ? " (" : "", sev ? sev : "",
				sev ? ")" : "");
			for (size_t j = 0; j < neff[k]; j++)
				fprintf(f, "%s%s", j ? ", " : ", and its effects here ", eff[k][j]);
		}
		fclose(f);
	}
	free(ids);
	return out;
}

/* The devices in the order the plan names them (its IRQs, then its rq_affinity writes). */
size_t fix_plan_devices(const struct ns_plan *plan, const char **devs)
{
	size_t n = 0;

	for (size_t i = 0; i < plan->nirqs + plan->nrqs; i++) {
		const char *d = i < plan->nirqs ? plan->irqs[i].device : plan->rqs[i - plan->nirqs].device;
		size_t k = 0;
		while (k < n && strcmp(devs[k], d) != 0)
			k++;
		if (k == n)
			devs[n++] = d;
	}
	return n;
}
