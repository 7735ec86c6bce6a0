/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the interrupt counts mean. per_cpu_count counts since boot, so a vector that fired on
 * the wrong node for a week still "fires mostly remote" hours after `numastor fix` moved it.
 * Two better bases:
 *   - since fix: `numastor fix` journals each placed IRQ's per_cpu_count at placement
 *     (lib/act/apply.c); check subtracts it, per CPU, for the IRQs that are still where fix put them;
 *   - over an interval: `check --interval S` reads every reported IRQ's per_cpu_count twice, S
 *     seconds apart, and judges the difference (the rate).
 * The fire-location rule judges what ns_irq_judged_counts() gives: the interval when one was
 * given, else the counts since fix for placed IRQs, else since boot.
 */
#ifndef NUMASTOR_RATES_H
#define NUMASTOR_RATES_H

#include <stdbool.h>
#include <stddef.h>

#include "read/irq.h"
#include "read/machine.h"
#include "base/notes.h"
#include "read/root.h"

enum ns_count_basis {
	NS_COUNTS_NONE = 0,	 /* nothing to judge (no counts, or the interval's samples failed) */
	NS_COUNTS_SINCE_BOOT,	 /* per_node as read */
	NS_COUNTS_SINCE_FIX,	 /* per_node minus the journal's counts at placement */
	NS_COUNTS_OVER_INTERVAL, /* the difference of two samples check --interval took */
};

/* For an IRQ numastor placed: baseline is the journal's per_cpu_count at placement. Sets the
 * IRQ's since-fix counts, or notes why they are unusable (the IRQ keeps its since-boot basis). */
void ns_rates_since_fix(struct ns_root *root, const struct ns_machine *m, struct ns_irq *irq, const char *baseline,
			struct ns_notes *notes, const char *subj);
/* One sample: out[i] = irqs[i]'s per_cpu_count now (n == 0 when it could not be read, or the
 * IRQ number now belongs to another action than the one reported). -ENOMEM only. */
int ns_rates_sample(struct ns_root *root, struct ns_irq *const *irqs, size_t nirqs, struct ns_counts *out);
/* The interval's samples: first[i] and second[i] are irqs[i]'s; seconds between them.
 * A failed sample (n == 0) leaves that IRQ with nothing to judge (NS_COUNTS_NONE). */
int ns_rates_apply(const struct ns_machine *m, struct ns_irq *const *irqs, size_t nirqs, const struct ns_counts *first,
		   const struct ns_counts *second, double seconds, struct ns_notes *notes);

/* The nodes a queue's vector belongs on, for irq-fires-remote (lib/model/findings.c) and the metrics: the
 * nodes the queue serves, or the device's node for a queue that serves every node. false (ref
 * left empty) when there is none: such a queue on a device whose node is unknown. */
bool ns_queue_expected_nodes(const struct ns_machine *m, int device_node, const struct ns_cpuset *queue_nodes,
			     struct ns_cpuset *ref);

enum ns_count_basis ns_irq_count_basis(const struct ns_irq *irq);
const char *ns_count_basis_name(enum ns_count_basis b);
/* The per-node counts (nper_node entries) the fire-location rule judges, and their total;
 * NULL when there are none. */
const unsigned long long *ns_irq_judged_counts(const struct ns_irq *irq, unsigned long long *total);

#endif
