/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fix journal: before its first write, `numastor fix` records the previous value of
 * everything its plan touches in run/numastor/journal.json (atomically), so `fix --revert`
 * restores exactly those values, even after an apply that died half-way. It also tells
 * `check` and `irqbalance-policy` which IRQs numastor placed.
 *
 * Nothing is keyed by a name the kernel may hand to another device: IRQ numbers and disk
 * names change across a driver reload and a reboot. An IRQ is its PCI function plus its first
 * action name (and it must be in that function's msi_irqs, or its INTx `irq`, now); a disk is
 * its lib/read/diskid identity. The numbers and names recorded beside them are for reports only.
 * The journal belongs to one boot (boot_id).
 *
 * Version 2 (this format) replaced version 1, which keyed IRQs by number and disks by name.
 * A journal of another version is refused whole (-EPROTO): never half-applied, never
 * overwritten.
 */
#ifndef NUMASTOR_JOURNAL_H
#define NUMASTOR_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/cpuset.h"
#include "read/root.h"

#define NS_STATE_DIR "run/numastor"
#define NS_JOURNAL_PATH NS_STATE_DIR "/journal.json"
#define NS_LOCK_PATH NS_STATE_DIR "/lock"
#define NS_JOURNAL_VERSION 2
/*
 * The largest journal numastor writes, and so reads: whatever `fix` wrote, `fix --revert` reads
 * back. An entry is about 200 bytes with its counts at placement in runs ("0*440,17,0*7"), some
 * 3.5 KB at 448 CPUs when the IRQ fired on every CPU: 4,160 such IRQs make 14 MB. Past the limit
 * the writer leaves the counts out (check counts since boot), and past it without them (CPU lists
 * of some 8,000 vectors of 8,192 CPUs) fix refuses before its first write (-EFBIG).
 */
#define NS_JOURNAL_MAX (64 * 1024 * 1024)
/* NS_JOURNAL_MAX, or what NUMASTOR_TEST_JOURNAL_MAX says in a test build (HACKING.md). */
size_t ns_journal_max(void);

struct ns_journal_irq {
	char *pci;	/* the PCI function it belonged to ("0000:00:04.0") */
	char *name;	/* its first action ("nvme0q0") */
	int irq;	/* its number when journaled: reports only, never used to find it again */
	char *previous; /* smp_affinity_list before numastor */
	char *placed;	/* what numastor wrote (or will write) */
	char *counts;	/* its per_cpu_count when placed ("12,0,3"), so check counts since; NULL unknown */
};

struct ns_journal_rq {
	char *disk;   /* lib/read/diskid identity ("wwid:eui.0025...", "serial:S/nsid:1") */
	char *device; /* its name when journaled: reports only */
	int previous, placed;
};

struct ns_journal {
	int version;   /* as read; NS_JOURNAL_VERSION for one this numastor writes */
	char *boot_id; /* the boot it was written in */
	struct ns_journal_irq *irqs;
	size_t nirqs;
	struct ns_journal_rq *rqs;
	size_t nrqs;
	/* fix --probe: the devices probed before and after the change, as the fix document's
	 * probe (JSON text of an object); NULL without. A record only: revert never reads it. */
	char *probe;
};

/*
 * Check the journal like input, by the rules of schema/journal.schema.json, without loading it:
 * 0 valid, -ENOENT none, -EPROTO another version (*version says which), -EINVAL malformed with
 * *problem (malloc'd) saying what ("its \"irqs\" is a string, not an array"). ns_journal_load
 * applies the same check first.
 */
int ns_journal_check(struct ns_root *root, int *version, char **problem);
/* One JSON text and nothing after it; NULL when it is not (shared with the swap journal). */
struct json_object *ns_journal_parse_json(const char *txt);
/* Is s a CPU list as the schema's "cpulist" says ("0-3,8"), whose ranges parse? */
bool ns_journal_cpulist_ok(const char *s);

/*
 * numastor's state directories (NS_STATE_DIR, where the journal and the lock are; the swap
 * journal's NS_SWAP_JOURNAL_DIR): every component inside the root a real directory, no symlink,
 * and the directory itself owned by root (under a sysroot, also by the user running numastor,
 * who owns the captured tree) and not group- or world-writable. 0 when so, -ENOENT when it does
 * not exist, else a negative errno with *problem (malloc'd) saying why. _ensure makes a missing
 * one (0755) and checks it.
 */
int ns_state_dir_check(struct ns_root *root, const char *dir, char **problem);
int ns_state_dir_ensure(struct ns_root *root, const char *dir, char **problem);

/* -ENOENT when there is no journal; -EINVAL when it is malformed; -EPROTO when it is of another
 * version (j->version says which, nothing else is loaded). */
int ns_journal_load(struct ns_root *root, struct ns_journal *j);
/* Atomically; -EFBIG when even without its counts it would exceed NS_JOURNAL_MAX. */
int ns_journal_save(struct ns_root *root, const struct ns_journal *j);
int ns_journal_remove(struct ns_root *root);
void ns_journal_free(struct ns_journal *j);
/* The running kernel's boot id (proc/sys/kernel/random/boot_id), NULL when unknown. */
char *ns_journal_read_boot_id(struct ns_root *root);
/* Was j written in the boot whose id is boot_id (both unknown counts as the same)? */
bool ns_journal_same_boot(const struct ns_journal *j, const char *boot_id);

/* The entry for the IRQ of PCI function pci whose first action is name, or NULL. */
const struct ns_journal_irq *ns_journal_find_irq(const struct ns_journal *j, const char *pci, const char *name);
/* Is IRQ n one of PCI function pci's vectors now (in its msi_irqs, or its INTx irq when it has
 * no MSI)? */
bool ns_journal_irq_of_pci(struct ns_root *root, const char *pci, int n);
/* The IRQ entry e applies to now: the one IRQ of e->pci (msi_irqs, or irq) whose first action is
 * e->name. -ENOENT when there is none (or the function is gone), -EEXIST when several match. */
int ns_journal_locate_irq(struct ns_root *root, const struct ns_journal_irq *e, int *irq);
/* The disk under sys/block whose identity is e->disk now (*disk malloc'd); hidden per-path
 * disks only when no visible disk matches. -ENOENT none, -EEXIST several. */
int ns_journal_locate_disk(struct ns_root *root, const struct ns_journal_rq *e, char **disk);

/* Was e written by numastor and still holds what it wrote? A journaled entry whose write never
 * happened (a fix killed half-way) or that something else changed since is not "placed". */
bool ns_journal_irq_placed(const struct ns_journal_irq *e, const struct ns_cpuset *current);
/* Add or update an entry (keyed by pci and name; by disk); an existing one keeps its first
 * previous value. */
int ns_journal_put_irq(struct ns_journal *j, const char *pci, const char *name, int irq, const char *previous,
		       const char *placed);
/* Record the per_cpu_count of entry (pci, name) at its latest placement. -ENOENT no such entry. */
int ns_journal_set_irq_counts(struct ns_journal *j, const char *pci, const char *name, const char *counts);
int ns_journal_put_rq(struct ns_journal *j, const char *disk, const char *device, int previous, int placed);

#endif
