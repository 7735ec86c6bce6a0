/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One interrupt: where it may fire, where it does fire, and whether user space may move it. */
#ifndef NUMASTOR_IRQ_H
#define NUMASTOR_IRQ_H

#include <stdbool.h>

#include "base/cpuset.h"
#include "read/machine.h"
#include "base/notes.h"
#include "read/root.h"

/*
 * Two different facts, each with how it was known:
 *   managed       the kernel placed the vector itself (IRQD_AFFINITY_MANAGED) and refuses writes
 *   user_settable user space may set its affinity at all (!irq_can_set_affinity_usr: not managed,
 *                 not IRQF_NOBALANCING, a chip with irq_set_affinity)
 * A managed vector is never user-settable; a vector user space may not set need not be managed.
 */
enum ns_managed_source {
	NS_MANAGED_UNKNOWN = 0,
	NS_MANAGED_FILE_MODE, /* >= 6.12: smp_affinity 0644 (user-settable), so not managed */
	NS_MANAGED_DEBUGFS,   /* IRQD_AFFINITY_MANAGED in /sys/kernel/debug/irq/irqs/N */
	NS_MANAGED_DRIVER,    /* what the driver is known to do (measured) */
};

enum ns_settable_source {
	NS_SETTABLE_UNKNOWN = 0,
	NS_SETTABLE_FILE_MODE, /* >= 6.12: smp_affinity 0444 = may not, 0644 = may */
	NS_SETTABLE_DEBUGFS,   /* IRQD_AFFINITY_MANAGED / IRQD_NO_BALANCING in debugfs */
	NS_SETTABLE_MANAGED,   /* follows from the managed-ness known otherwise */
};

struct ns_irq {
	int irq;
	bool msi;    /* from msi_irqs/, else legacy INTx */
	bool placed; /* numastor fix placed it (the journal says so) */
	/* chip is the string of a vector before it in the same array, which frees it (ns_irq_share_chips) */
	bool chip_shared;
	char *name; /* first action: "nvme0q3", "virtio1-req.0" */
	char *actions;
	char *chip;
	struct ns_cpuset affinity, effective, hint;
	int node;    /* /proc/irq/N/node, -2 unknown */
	int managed; /* 1, 0, -1 unknown */
	enum ns_managed_source managed_source;
	int user_settable; /* 1, 0, -1 unknown */
	enum ns_settable_source user_settable_source;
	int hw_queue;	   /* hctx index this vector serves, -1 none/unknown */
	int queue_of_ctl;  /* for nvme: the N of nvmeXqN, -1 */
	bool counts_known; /* per_cpu_count was read */
	size_t ncpu;
	unsigned long long total;
	unsigned long long *per_node;	/* indexed by node id, nper_node entries */
	unsigned long long on_isolated; /* of total, on the machine's isolated CPUs (isolation.cpus) */
	size_t nper_node;
	/* lib/read/rates.h: counts on other bases than since boot, per node (nper_node entries) */
	unsigned long long *since_fix; /* since numastor fix placed it; NULL when not placed or no usable baseline */
	unsigned long long since_fix_total;
	double interval;		 /* check --interval: seconds between its two samples; 0 without */
	unsigned long long *in_interval; /* fired during the interval; NULL without one or when a sample failed */
	unsigned long long interval_total;
};

/* One IRQ's per_cpu_count: one value per CPU, in the file's order (CPU 0 first). */
struct ns_counts {
	unsigned long long *v;
	size_t n;
};

/* "12,0,3" (the file's format: unsigned decimals below 2^32, comma-separated) -> c. -EINVAL
 * when malformed, -ENOMEM. */
int ns_counts_parse(const char *txt, struct ns_counts *c);
/*
 * The journal's form of the same counts: runs of one value written "value*times" ("0*446"), so
 * an IRQ that fired on a few of 448 CPUs costs a few bytes rather than 900. ns_counts_format
 * writes runs of three or more that way (malloc'd in *out); ns_counts_parse_runs reads both
 * forms (the plain one is what journals before the runs held), at most NS_COUNTS_MAX_CPUS
 * values in all. -EINVAL malformed, -ENOMEM.
 */
#define NS_COUNTS_MAX_CPUS 8192u /* the largest NR_CPUS a kernel is built with */
int ns_counts_format(const struct ns_counts *c, char **out);
int ns_counts_parse_runs(const char *txt, struct ns_counts *c);
/* IRQ irq's sys/kernel/irq/N/per_cpu_count now; *raw (when not NULL) gets the text as read. */
int ns_counts_read(struct ns_root *root, int irq, struct ns_counts *c, char **raw);
void ns_counts_free(struct ns_counts *c);
/* out = later - earlier, CPU by CPU. -EINVAL when the CPU counts differ. A counter that is
 * lower later went backwards (another boot, a re-created IRQ) or wrapped past 2^32: with wrap,
 * one wrap is assumed (a short interval); without, -ERANGE. */
int ns_counts_delta(const struct ns_counts *earlier, const struct ns_counts *later, bool wrap, struct ns_counts *out);
/* Fold per node: *per_node indexed by node id (max id + 1 entries, as ns_irq's per_node),
 * *total over every CPU (those on no node too). */
int ns_counts_fold(const struct ns_machine *m, const struct ns_counts *c, unsigned long long **per_node,
		   size_t *nper_node, unsigned long long *total);

/*
 * per_cpu_count's text summed as it is parsed, for check (issue 35): the total, per node into
 * per_node (when not NULL; nodes entries, zeroed by the caller) by the map's CPUs, and on the
 * CPUs isolated now. The file has a value for every possible CPU, for every IRQ, nearly all
 * "0" (448 per vector on the bench's machine): no array is made, and zeros are passed four at a
 * time. Accepts exactly what ns_counts_parse does (sum->n values), -EINVAL otherwise.
 */
struct ns_counts_sum {
	size_t n;
	unsigned long long total, on_isolated;
};
int ns_counts_sum(const char *txt, const struct ns_machine *m, unsigned long long *per_node, size_t nodes,
		  struct ns_counts_sum *sum);

/* Read IRQ n. -ENOENT when it vanished (no /proc/irq/N and no /sys/kernel/irq/N). */
/* debugfs: whether sys/kernel/debug/irq/irqs exists (looked up once, not per IRQ). */
int ns_irq_read(struct ns_root *root, const struct ns_machine *m, int n, bool msi, bool debugfs, struct ns_irq *irq,
		struct ns_notes *notes);
/* Decide managed-ness from what the driver is known to do, when nothing better was found. */
void ns_irq_guess_managed(struct ns_irq *irq, const char *driver, unsigned nvectors);
void ns_irq_free(struct ns_irq *irq);
/*
 * A function's vectors mostly name one chip ("PCI-MSIX-0000:01:00.0", 65 times for an NVMe
 * drive): each run of equal names is held once, by its first vector. Free such an array from
 * its first element on (ns_irq_free in index order).
 */
void ns_irq_share_chips(struct ns_irq *irqs, size_t n);
/* The set of CPUs the IRQ is really delivered to: effective affinity when known, else affinity. */
const struct ns_cpuset *ns_irq_target(const struct ns_irq *irq);
const char *ns_managed_source_name(enum ns_managed_source s);
const char *ns_settable_source_name(enum ns_settable_source s);
/* From the managed-ness (and smp_affinity's mode) as read, decide what is still unknown of
 * managed and user_settable; ns_irq_guess_managed calls it last. */
void ns_irq_settle(struct ns_irq *irq);
/* IRQ n's first action ("nvme0q1") as the kernel names it now; NULL when it is gone. An IRQ
 * number is only trusted together with this name: numbers change from boot to boot. */
char *ns_irq_first_action(struct ns_root *root, int n);

#endif
