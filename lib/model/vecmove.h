/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * May `numastor fix` move a vector, and why: the one decision that the fix plan (lib/act/plan.c)
 * acts on and that `check` shows (its remedies in lib/model/findings.c, each IRQ's "fix" in the JSON
 * report, the verbose text), so the two never disagree. Also the CPUs a vector belongs on
 * and the CPUs fix may place any vector on, which the decision and the plan's targets share.
 */
#ifndef NUMASTOR_VECMOVE_H
#define NUMASTOR_VECMOVE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/cpuset.h"
#include "model/system.h"

/* What user space may do with a vector, by what the kernel tells of its managed-ness. */
enum ns_vec_class {
	NS_VEC_MOVABLE,	   /* known not managed, user-settable */
	NS_VEC_KERNEL,	   /* kernel-managed: the kernel placed it and refuses writes */
	NS_VEC_UNSETTABLE, /* read-only smp_affinity: no-balancing, or a chip without set_affinity */
	NS_VEC_UNKNOWN,	   /* the kernel does not tell whether it is managed */
};
enum ns_vec_class ns_vec_class(const struct ns_irq *irq);

/* The rule that decided; its name (ns_vecmove_rule_name) is the JSON's "rule". */
enum ns_vecmove_rule {
	NS_VM_MOVABLE,		 /* move: known not managed, user-settable */
	NS_VM_WRITE_TELLS,	 /* move: managed-ness unknown, and this kernel's refusal is unmistakable */
	NS_VM_KERNEL_MANAGED,	 /* leave */
	NS_VM_NOT_SETTABLE,	 /* leave: user space may not set its affinity */
	NS_VM_UNPAIRED_SPREAD,	 /* leave: unpaired vectors of a multi-queue device already spread */
	NS_VM_MANAGED_UNKNOWN,	 /* leave: managed-ness unknown, and a refusal cannot be told from an error */
	NS_VM_QUEUE_OFFLINE,	 /* leave: its hardware queue serves no online CPU */
	NS_VM_EXCLUSIONS_UNREAD, /* leave: an excluded-CPU input did not parse: fix plans nothing */
	NS_VM_NO_ALLOWED_CPU,	 /* leave: none of the CPUs it belongs on may take it */
	NS_VM_NOT_PLANNED,	 /* leave: no disk it serves has a finding about its placement */
};

struct ns_vecmove {
	bool move; /* fix writes it (or finds it already where it belongs) */
	enum ns_vecmove_rule rule;
	char *reason; /* one clause, the plan's reason for a skip; names no target */
};

const char *ns_vecmove_rule_name(enum ns_vecmove_rule r);
void ns_vecmove_clear(struct ns_vecmove *v);

/* Findings that say a device's interrupts are in the wrong place: fix plans the devices with one. */
bool ns_vecmove_answers(const char *finding_id);

/* May fix place an IRQ on cpu: online, not isolated (lib/read/isolation.h: cpu/isolated, nohz_full,
 * isolcpus=, cgroup partitions), not banned by irqbalance. */
bool ns_vecmove_cpu_allowed(const struct ns_machine *m, unsigned cpu);
/* Every such CPU into out; -EBADMSG (out unknown) when an exclusion input did not parse or could
 * not be read (m->unparsed names them), as an unknown set would exclude no CPU at all. */
int ns_vecmove_allowed(const struct ns_machine *m, struct ns_cpuset *out);

/*
 * The CPUs irq (a vector of d) belongs on, before the exclusions, into set, and why (a clause
 * that names them, malloc'd, into *why): its hardware queue's CPUs when the queue serves fewer
 * than every node; else the device's node (or, when every CPU of that node is isolated, the
 * housekeeping CPUs the queue serves); else, for a device with no node, the spread_k-th node
 * (round robin) of those with a CPU fix may use. For a vector ns_vecmove_decide does not leave
 * for its queue (one that serves no online CPU). 0 or -ENOMEM.
 */
int ns_vecmove_belongs(const struct ns_machine *m, const struct ns_disk *d, const struct ns_irq *irq, unsigned spread_k,
		       struct ns_cpuset *set, char **why);

/*
 * What `numastor fix` does with irq, a vector of pci on a path of d that fix plans (d has a
 * placement finding): move it, or leave it and why. The rules, first match: kernel-managed,
 * not user-settable, the unpaired spread, managed-ness unknown where the write cannot tell,
 * a queue serving no online CPU, an exclusion input that did not parse, no allowed CPU of
 * those it belongs on; else move. 0 or -ENOMEM.
 */
int ns_vecmove_decide(const struct ns_machine *m, const struct ns_disk *d, const struct ns_pci *pci,
		      const struct ns_irq *irq, struct ns_vecmove *out);

/*
 * Which disk's plan a vector is decided under, the way the plan walks them: the disks in the
 * system's order that fix plans (planned[i]), each path's function, each of its vectors,
 * the first one of an IRQ number taking it.
 */
struct ns_vecmove_owner {
	int irq;
	size_t seq; /* the order the plan meets it in */
	size_t disk;
	const struct ns_pci *pci;
	const struct ns_irq *vec;
};
struct ns_vecmove_view {
	const struct ns_system *sys;
	struct ns_vecmove_owner *v; /* by irq */
	size_t n;
};
int ns_vecmove_view_build(const struct ns_system *sys, const bool *planned, struct ns_vecmove_view *out);
/* fix's decision for the vector numbered irq->irq: NS_VM_NOT_PLANNED when no planned disk has it. */
int ns_vecmove_view_decide(const struct ns_vecmove_view *view, const struct ns_irq *irq, struct ns_vecmove *out);
void ns_vecmove_view_free(struct ns_vecmove_view *view);

#endif
