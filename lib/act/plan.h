/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fix plan: which IRQ goes to which CPUs and why, derived from the same model and findings
 * as `check`. Only devices with a finding about interrupt placement are touched; a healthy
 * machine gets an empty plan.
 */
#ifndef NUMASTOR_PLAN_H
#define NUMASTOR_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/cpuset.h"
#include "model/findings.h"
#include "model/system.h"
#include "model/vecmove.h"

enum ns_plan_action {
	NS_PLAN_MOVE = 0,  /* write target to smp_affinity_list */
	NS_PLAN_SKIP,	   /* never written (kernel-managed, nothing allowed, ...) */
	NS_PLAN_UNCHANGED, /* already where it should be */
};

struct ns_plan_irq {
	int irq;
	char *name;   /* first action, to recognise the IRQ again at revert */
	char *device; /* the disk it serves */
	char *pci;
	int hw_queue;			    /* -1 none */
	int managed;			    /* 1, 0, -1 unknown */
	struct ns_cpuset current, target;   /* target unknown on a skip: it goes nowhere */
	struct ns_cpuset isolated_left_out; /* isolated CPUs of the natural target left out of target */
	enum ns_plan_action action;
	enum ns_vecmove_rule rule; /* lib/model/vecmove's decision: why it moves or is skipped */
	char *reason;
	char *answers; /* comma-separated finding ids */
};

struct ns_plan_rq {
	char *device;
	int current, target;
	enum ns_plan_action action;
	char *reason;
};

struct ns_plan_opts {
	int rq_affinity; /* 0: leave alone; 2: set where completions are remote and vectors cannot move */
};

struct ns_plan {
	struct ns_plan_irq *irqs;
	size_t nirqs;
	struct ns_plan_rq *rqs;
	size_t nrqs;
	struct ns_cpuset allowed; /* CPUs an IRQ may be placed on */
	char *irqbalance_advice;  /* what to do about irqbalance, NULL when nothing */
};

/* -EBADMSG (nothing planned) when an exclusion input did not parse or is unknown: the machine's
 * unparsed list names them. */
int ns_plan_build(const struct ns_system *sys, const struct ns_findings *findings, const struct ns_plan_opts *opts,
		  struct ns_plan *plan);
void ns_plan_free(struct ns_plan *plan);
/* Which vectors ns_plan_build would plan and under which disk (those with a finding it answers),
 * for check to show each vector's decision (ns_vecmove_view_decide) as the plan takes it. */
int ns_plan_view(const struct ns_system *sys, const struct ns_findings *findings, struct ns_vecmove_view *view);
const char *ns_plan_action_name(enum ns_plan_action a);
size_t ns_plan_count(const struct ns_plan *plan, enum ns_plan_action a);

#endif
