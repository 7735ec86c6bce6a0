/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "rates.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ns_counts_parse(const char *txt, struct ns_counts *c)
{
	const char *s = txt;
	size_t cap = 0;

	memset(c, 0, sizeof(*c));
	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		unsigned long long v = 0;
		if (*s < '0' || *s > '9')
			goto bad;
		while (*s >= '0' && *s <= '9') {
			v = v * 10 + (unsigned long long)(*s++ - '0');
			if (v > 0xffffffffULL) /* the kernel's per-CPU counts are 32-bit */
				goto bad;
		}
		if (c->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			unsigned long long *nv = realloc(c->v, ncap * sizeof(*nv));
			if (!nv) {
				ns_counts_free(c);
				return -ENOMEM;
			}
			c->v = nv;
			cap = ncap;
		}
		c->v[c->n++] = v;
		if (!*s || *s == '\n')
			break;
		if (*s++ != ',')
			goto bad;
	}
	if (*s == '\n' && s[1])
		goto bad;
	return 0;
bad:
	ns_counts_free(c);
	return -EINVAL;
}

int ns_counts_read(struct ns_root *root, int irq, struct ns_counts *c, char **raw)
{
	char path[64], *txt;
	int r;

	memset(c, 0, sizeof(*c));
	if (raw)
		*raw = NULL;
	snprintf(path, sizeof(path), "sys/kernel/irq/%d/per_cpu_count", irq);
	r = ns_read_str(root, path, &txt);
	if (r < 0)
		return r;
	r = ns_counts_parse(txt, c);
	if (r == 0 && raw)
		*raw = txt;
	else
		free(txt);
	return r;
}

void ns_counts_free(struct ns_counts *c)
{
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

int ns_counts_delta(const struct ns_counts *earlier, const struct ns_counts *later, bool wrap, struct ns_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (earlier->n != later->n || !later->n)
		return -EINVAL;
	out->v = calloc(later->n, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	out->n = later->n;
	for (size_t i = 0; i < later->n; i++) {
		if (later->v[i] >= earlier->v[i]) {
			out->v[i] = later->v[i] - earlier->v[i];
		} else if (wrap) {
			out->v[i] = later->v[i] + 0x100000000ULL - earlier->v[i];
		} else {
			ns_counts_free(out);
			return -ERANGE;
		}
	}
	return 0;
}

int ns_counts_fold(const struct ns_machine *m, const struct ns_counts *c, unsigned long long **per_node,
		   size_t *nper_node, unsigned long long *total)
{
	int maxnode = -1;

	for (size_t i = 0; i < m->nnodes; i++)
		if (m->nodes[i].id > maxnode)
			maxnode = m->nodes[i].id;
	*nper_node = (size_t)(maxnode + 1);
	*per_node = calloc(*nper_node ? *nper_node : 1, sizeof(**per_node));
	*total = 0;
	if (!*per_node)
		return -ENOMEM;
	for (size_t cpu = 0; cpu < c->n; cpu++) {
		int node = ns_machine_cpu_node(m, (int)cpu);
		*total += c->v[cpu];
		if (node >= 0 && (size_t)node < *nper_node)
			(*per_node)[node] += c->v[cpu];
	}
	return 0;
}

/* The difference folded onto the IRQ's node layout (the same nper_node as its per_node). */
static int fold_into(const struct ns_machine *m, const struct ns_irq *irq, const struct ns_counts *d,
		     unsigned long long **out, unsigned long long *total)
{
	size_t n;
	int r = ns_counts_fold(m, d, out, &n, total);

	if (r == 0 && n != irq->nper_node) {
		free(*out);
		*out = NULL;
		r = -EINVAL;
	}
	return r;
}

void ns_rates_since_fix(struct ns_root *root, const struct ns_machine *m, struct ns_irq *irq, const char *baseline,
			struct ns_notes *notes, const char *subj)
{
	struct ns_counts then = {0}, now = {0}, d = {0};
	int r;

	free(irq->since_fix);
	irq->since_fix = NULL;
	irq->since_fix_total = 0;
	if (!irq->counts_known || !irq->per_node)
		return;
	if (!baseline) {
		ns_note(notes, subj, "count_basis",
			"the journal has no counts at placement for irq %d (an older numastor placed it): counts "
			"since boot",
			irq->irq);
		return;
	}
	if (ns_counts_parse(baseline, &then) < 0) {
		ns_note(notes, subj, "count_basis",
			"the journal's counts at placement for irq %d are malformed: counts since boot", irq->irq);
		return;
	}
	r = ns_counts_read(root, irq->irq, &now, NULL);
	if (r == 0)
		r = ns_counts_delta(&then, &now, false, &d);
	if (r == 0)
		r = fold_into(m, irq, &d, &irq->since_fix, &irq->since_fix_total);
	if (r == -ERANGE || r == -EINVAL)
		ns_note(notes, subj, "count_basis",
			"irq %d's per_cpu_count is %s than when numastor fix placed it (another boot, or the IRQ "
			"was re-created): counts since boot",
			irq->irq, r == -ERANGE ? "lower on some CPU" : "for another number of CPUs");
	else if (r < 0)
		ns_note(notes, subj, "count_basis", "reading irq %d's per_cpu_count again: %s: counts since boot",
			irq->irq, strerror(-r));
	ns_counts_free(&then);
	ns_counts_free(&now);
	ns_counts_free(&d);
}

int ns_rates_sample(struct ns_root *root, struct ns_irq *const *irqs, size_t nirqs, struct ns_counts *out)
{
	for (size_t i = 0; i < nirqs; i++) {
		char *name = irqs[i]->name ? ns_irq_first_action(root, irqs[i]->irq) : NULL;
		bool same = !irqs[i]->name || (name && strcmp(name, irqs[i]->name) == 0);
		int r = same ? ns_counts_read(root, irqs[i]->irq, &out[i], NULL) : -ESTALE;
		free(name);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			memset(&out[i], 0, sizeof(out[i]));
	}
	return 0;
}

int ns_rates_apply(const struct ns_machine *m, struct ns_irq *const *irqs, size_t nirqs, const struct ns_counts *first,
		   const struct ns_counts *second, double seconds, struct ns_notes *notes)
{
	for (size_t i = 0; i < nirqs; i++) {
		struct ns_irq *irq = irqs[i];
		struct ns_counts d = {0};
		char subj[32];
		int r;

		free(irq->in_interval);
		irq->in_interval = NULL;
		irq->interval_total = 0;
		irq->interval = seconds;
		snprintf(subj, sizeof(subj), "irq %d", irq->irq);
		if (!irq->per_node)
			continue;
		if (!first[i].n || !second[i].n) {
			ns_note(notes, subj, "rates_by_node",
				"per_cpu_count could not be read at both samples (or the IRQ was re-created): no rate");
			continue;
		}
		/* 32-bit per-CPU counters: within a short interval, a lower value is one wrap */
		r = ns_counts_delta(&first[i], &second[i], true, &d);
		if (r == 0)
			r = fold_into(m, irq, &d, &irq->in_interval, &irq->interval_total);
		ns_counts_free(&d);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			ns_note(notes, subj, "rates_by_node",
				"the two samples of per_cpu_count have different CPU counts: no rate");
		}
	}
	return 0;
}

bool ns_queue_expected_nodes(const struct ns_machine *m, int device_node, const struct ns_cpuset *queue_nodes,
			     struct ns_cpuset *ref)
{
	if (ns_machine_spans_all_nodes(m, queue_nodes)) {
		if (device_node < 0)
			return false;
		return ns_cpuset_set(ref, (unsigned)device_node) == 0;
	}
	return ns_cpuset_copy(ref, queue_nodes) == 0;
}

enum ns_count_basis ns_irq_count_basis(const struct ns_irq *irq)
{
	if (irq->interval > 0)
		return irq->in_interval ? NS_COUNTS_OVER_INTERVAL : NS_COUNTS_NONE;
	if (irq->since_fix)
		return NS_COUNTS_SINCE_FIX;
	return irq->per_node ? NS_COUNTS_SINCE_BOOT : NS_COUNTS_NONE;
}

const char *ns_count_basis_name(enum ns_count_basis b)
{
	switch (b) {
	case NS_COUNTS_SINCE_BOOT:
		return "since-boot";
	case NS_COUNTS_SINCE_FIX:
		return "since-fix";
	case NS_COUNTS_OVER_INTERVAL:
		return "interval";
	default:
		return "none";
	}
}

const unsigned long long *ns_irq_judged_counts(const struct ns_irq *irq, unsigned long long *total)
{
	switch (ns_irq_count_basis(irq)) {
	case NS_COUNTS_OVER_INTERVAL:
		*total = irq->interval_total;
		return irq->in_interval;
	case NS_COUNTS_SINCE_FIX:
		*total = irq->since_fix_total;
		return irq->since_fix;
	case NS_COUNTS_SINCE_BOOT:
		*total = irq->total;
		return irq->per_node;
	default:
		*total = 0;
		return NULL;
	}
}
