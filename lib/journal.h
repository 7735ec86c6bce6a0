/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fix journal: before its first write, `numastor fix` records the previous value of
 * everything its plan touches in run/numastor/journal.json (atomically), so `fix --revert`
 * restores exactly those values, even after an apply that died half-way. It also tells
 * `check` and `irqbalance-policy` which IRQs numastor placed.
 */
#ifndef NUMASTOR_JOURNAL_H
#define NUMASTOR_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"
#include "root.h"

#define NS_STATE_DIR "run/numastor"
#define NS_JOURNAL_PATH NS_STATE_DIR "/journal.json"
#define NS_LOCK_PATH NS_STATE_DIR "/lock"

struct ns_journal_irq {
	int irq;
	char *name;	/* first action when recorded: an IRQ number is only trusted with the same name */
	char *previous; /* smp_affinity_list before numastor */
	char *placed;	/* what numastor wrote (or will write) */
};

struct ns_journal_rq {
	char *device;
	int previous, placed;
};

struct ns_journal {
	char *boot_id;
	struct ns_journal_irq *irqs;
	size_t nirqs;
	struct ns_journal_rq *rqs;
	size_t nrqs;
	char **modgroups; /* module groups swapped to numastor's ("nvme", "scsi") */
	size_t nmodgroups;
	char **installed; /* files installed for the next boot (root-relative) */
	size_t ninstalled;
};

/* -ENOENT when there is no journal; -EINVAL when it is malformed. */
int ns_journal_load(struct ns_root *root, struct ns_journal *j);
int ns_journal_save(struct ns_root *root, const struct ns_journal *j);
int ns_journal_remove(struct ns_root *root);
void ns_journal_free(struct ns_journal *j);
/* The entry for IRQ n with this name, or NULL. */
const struct ns_journal_irq *ns_journal_find_irq(const struct ns_journal *j, int n, const char *name);
/* Was e written by numastor and still holds what it wrote? A journaled entry whose write never
 * happened (a fix killed half-way) or that something else changed since is not "placed". */
bool ns_journal_irq_placed(const struct ns_journal_irq *e, const struct ns_cpuset *current);
/* Add or update an entry; an existing entry keeps its first previous value. */
int ns_journal_put_irq(struct ns_journal *j, int n, const char *name, const char *previous, const char *placed);
int ns_journal_put_rq(struct ns_journal *j, const char *device, int previous, int placed);

#endif
