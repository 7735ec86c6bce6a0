/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/rates.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (ns_counts_parse_runs(baseline, &then) < 0) {
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
