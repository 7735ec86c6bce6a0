/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "act/plan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "base/util.h"
#include "model/vecmove.h"

const char *ns_plan_action_name(enum ns_plan_action a)
{
	return a == NS_PLAN_MOVE ? "move" : a == NS_PLAN_SKIP ? "skip" : "unchanged";
}

/* Comma-separated ids of the placement findings about a device; NULL when none. */
static char *answers_for(const struct ns_findings *f, const char *device)
{
	char *out = NULL;
	size_t len = 0;
	bool first = true;
	FILE *m = open_memstream(&out, &len);

	if (!m)
		return NULL;
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].device && strcmp(f->v[i].device, device) == 0 && ns_vecmove_answers(f->v[i].id)) {
			fprintf(m, "%s%s", first ? "" : ",", f->v[i].id);
			first = false;
		}
	fclose(m);
	if (out && !*out) {
		free(out);
		return NULL;
	}
	return out;
}

/* The row's target: s & allowed, and the isolated CPUs of s it leaves out (said per row). */
static void target_from(struct ns_plan_irq *e, const struct ns_machine *m, const struct ns_cpuset *s,
			const struct ns_cpuset *allowed)
{
	ns_cpuset_and(&e->target, s, allowed);
	e->target.known = true;
	ns_cpuset_and(&e->isolated_left_out, s, &m->isolation.cpus);
	e->isolated_left_out.known = true;
}

struct builder {
	const struct ns_system *sys;
	struct ns_plan *plan;
	unsigned spread_next; /* round robin over nodes for vectors of node-less devices */
};

static bool planned(const struct ns_plan *plan, int irq)
{
	for (size_t i = 0; i < plan->nirqs; i++)
		if (plan->irqs[i].irq == irq)
			return true;
	return false;
}

/*
 * One vector's row. Whether fix moves it, and why it does not, is lib/model/vecmove's decision,
 * the one check shows; a skipped row says that reason alone and has no target.
 */
static int plan_irq(struct builder *b, const struct ns_disk *d, const struct ns_pci *pci, const struct ns_irq *irq,
		    const char *answers)
{
	struct ns_plan *plan = b->plan;
	const struct ns_machine *m = &b->sys->machine;
	const struct ns_hctx *h = ns_disk_queue_of(d, irq);
	struct ns_vecmove dec;
	struct ns_plan_irq *e;
	struct ns_plan_irq *nv;
	struct ns_cpuset set = {0};
	char *why = NULL;
	bool rr;
	int r;

	if (planned(plan, irq->irq))
		return 0; /* a function shared by several disks: planned once */
	nv = realloc(plan->irqs, (plan->nirqs + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	plan->irqs = nv;
	e = &plan->irqs[plan->nirqs];
	memset(e, 0, sizeof(*e));
	e->irq = irq->irq;
	e->name = irq->name ? strdup(irq->name) : NULL;
	e->device = strdup(d->name);
	e->pci = strdup(pci->address);
	e->hw_queue = h ? h->index : -1;
	e->managed = irq->managed;
	e->answers = strdup(answers);
	ns_cpuset_copy(&e->current, &irq->affinity);
	plan->nirqs++;
	if (!e->device || !e->pci || !e->answers)
		return -ENOMEM;

	r = ns_vecmove_decide(m, d, pci, irq, &dec);
	if (r < 0)
		return r;
	e->rule = dec.rule;
	if (!dec.move) {
		e->action = NS_PLAN_SKIP;
		e->reason = dec.reason; /* no target: the target stays unknown (JSON null) */
		e->isolated_left_out.known = true;
		return 0;
	}
	/* a node-less device's vectors that no queue of fewer nodes holds: the next node in turn */
	rr = d->node < 0 && !(h && !ns_machine_spans_all_nodes(m, &h->nodes));
	r = ns_vecmove_belongs(m, d, irq, rr ? b->spread_next++ : 0, &set, &why);
	if (r < 0) {
		ns_vecmove_clear(&dec);
		return r;
	}
	target_from(e, m, &set, &plan->allowed);
	ns_cpuset_clear(&set);
	if (ns_cpuset_count(&e->isolated_left_out)) {
		char *iso = NULL, *w;
		ns_cpuset_format(&e->isolated_left_out, &iso);
		w = ns_fmt("%s; isolated CPUs %s left out", why, iso ? iso : "?");
		free(iso);
		free(why);
		why = w;
	}
	if (irq->affinity.known && ns_cpuset_equal(&irq->affinity, &e->target)) {
		e->action = NS_PLAN_UNCHANGED;
		e->reason = why;
		why = NULL;
	} else {
		e->action = NS_PLAN_MOVE;
		/* a guess the write settles is said first */
		e->reason = dec.rule == NS_VM_WRITE_TELLS ? ns_fmt("%s; %s", dec.reason, why ? why : "?") : why;
		if (dec.rule != NS_VM_WRITE_TELLS)
			why = NULL;
	}
	free(why);
	ns_vecmove_clear(&dec);
	return e->reason ? 0 : -ENOMEM;
}

static int plan_rq(struct builder *b, const struct ns_disk *d, bool all_managed, const struct ns_plan_opts *opts)
{
	struct ns_plan_rq *nv, *e;

	if (opts->rq_affinity != 2 || d->rq_affinity < 0 || !all_managed)
		return 0;
	nv = realloc(b->plan->rqs, (b->plan->nrqs + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	b->plan->rqs = nv;
	e = &nv[b->plan->nrqs++];
	memset(e, 0, sizeof(*e));
	e->device = strdup(d->name);
	e->current = d->rq_affinity;
	e->target = 2;
	e->action = d->rq_affinity == 2 ? NS_PLAN_UNCHANGED : NS_PLAN_MOVE;
	e->reason = ns_fmt("completions of %s are remote and its queue vectors are kernel-managed: rq_affinity=2 "
			   "completes on the submitting CPU",
			   d->name);
	return e->device && e->reason ? 0 : -ENOMEM;
}

int ns_plan_build(const struct ns_system *sys, const struct ns_findings *findings, const struct ns_plan_opts *opts,
		  struct ns_plan *plan)
{
	struct builder b = {.sys = sys, .plan = plan};
	const struct ns_irqbalance *ib = &sys->machine.irqbalance;
	int r;

	memset(plan, 0, sizeof(*plan));
	r = ns_vecmove_allowed(&sys->machine, &plan->allowed);
	if (r < 0)
		return r;
	/* on one node only the isolation findings place anything (answers_for finds no other) */
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		char *answers = answers_for(findings, d->name);
		bool all_managed = true, any = false;

		if (!answers)
			continue;
		for (size_t p = 0; p < d->npaths; p++) {
			const struct ns_pci *pci = d->paths[p].pci;
			for (size_t k = 0; pci && k < pci->nirqs; k++) {
				const struct ns_irq *irq = &pci->irqs[k];
				r = plan_irq(&b, d, pci, irq, answers);
				if (r < 0) {
					free(answers);
					return r;
				}
				if (ns_disk_queue_of(d, irq)) {
					any = true;
					all_managed &= irq->managed == 1;
				}
			}
		}
		free(answers);
		r = plan_rq(&b, d, any && all_managed, opts);
		if (r < 0)
			return r;
	}
	if (ib->running == 1 && ns_plan_count(plan, NS_PLAN_MOVE) &&
	    !(ib->policyscript && strstr(ib->policyscript, "numastor"))) {
		plan->irqbalance_advice =
			ns_fmt("irqbalance (pid %ld) runs without numastor's policy script and will move these vectors "
			       "back at its next pass: run `numastor fix --irqbalance=policy` (a drop-in for "
			       "irqbalance.service), or add --policyscript=%s to "
			       "IRQBALANCE_ARGS in /etc/default/irqbalance and restart it (see numastor-fix(8))",
			       ib->pid, NUMASTOR_POLICY_SCRIPT);
		if (!plan->irqbalance_advice)
			return -ENOMEM;
	}
	return 0;
}

int ns_plan_view(const struct ns_system *sys, const struct ns_findings *findings, struct ns_vecmove_view *view)
{
	bool *planned = calloc(sys->ndisks ? sys->ndisks : 1, sizeof(*planned));
	int r;

	memset(view, 0, sizeof(*view));
	if (!planned)
		return -ENOMEM;
	for (size_t i = 0; i < findings->n; i++) {
		const struct ns_finding *f = &findings->v[i];
		if (!f->device || !ns_vecmove_answers(f->id))
			continue;
		for (size_t k = 0; k < sys->ndisks; k++)
			if (strcmp(sys->disks[k].name, f->device) == 0)
				planned[k] = true;
	}
	r = ns_vecmove_view_build(sys, planned, view);
	free(planned);
	return r;
}

void ns_plan_free(struct ns_plan *plan)
{
	for (size_t i = 0; i < plan->nirqs; i++) {
		struct ns_plan_irq *e = &plan->irqs[i];
		free(e->name);
		free(e->device);
		free(e->pci);
		free(e->reason);
		free(e->answers);
		ns_cpuset_clear(&e->current);
		ns_cpuset_clear(&e->target);
		ns_cpuset_clear(&e->isolated_left_out);
	}
	free(plan->irqs);
	for (size_t i = 0; i < plan->nrqs; i++) {
		free(plan->rqs[i].device);
		free(plan->rqs[i].reason);
	}
	free(plan->rqs);
	ns_cpuset_clear(&plan->allowed);
	free(plan->irqbalance_advice);
	memset(plan, 0, sizeof(*plan));
}

size_t ns_plan_count(const struct ns_plan *plan, enum ns_plan_action a)
{
	size_t n = 0;
	for (size_t i = 0; i < plan->nirqs; i++)
		n += plan->irqs[i].action == a;
	for (size_t i = 0; i < plan->nrqs; i++)
		n += plan->rqs[i].action == a;
	return n;
}
