/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "plan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "util.h"

const char *ns_plan_action_name(enum ns_plan_action a)
{
	return a == NS_PLAN_MOVE ? "move" : a == NS_PLAN_SKIP ? "skip" : "unchanged";
}

/* Findings that say a device's interrupts are in the wrong place. */
static bool placement_finding(const char *id)
{
	return strcmp(id, "node-forced") == 0 || strcmp(id, "irq-confined") == 0 ||
	       strcmp(id, "irq-fires-remote") == 0 || strcmp(id, "vector-serves-all-nodes") == 0 ||
	       strcmp(id, "irqbalance-confines") == 0 || strcmp(id, "isolated-movable-irq") == 0;
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
		if (f->v[i].device && strcmp(f->v[i].device, device) == 0 && placement_finding(f->v[i].id)) {
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

/*
 * The CPUs an IRQ may go to: online, not isolated (cpu/isolated, cpu/nohz_full, isolcpus= and
 * nohz_full= of the command line, cgroup v2 isolated partitions: lib/isolation.h), not banned by
 * irqbalance.
 * Never from a partial exclusion set: -EBADMSG when one of them did not parse or could not be
 * read (lib/machine.c records each in m->unparsed, for fix to name), as an unknown set would
 * exclude no CPU at all.
 */
static int allowed_cpus(const struct ns_system *sys, struct ns_cpuset *out)
{
	const struct ns_machine *m = &sys->machine;

	ns_cpuset_clear(out);
	if (m->nunparsed)
		return -EBADMSG;
	out->known = true;
	ns_cpuset_foreach (c, &m->online) {
		/* isolation.cpus holds cpu/isolated and cpu/nohz_full too (lib/isolation.c) */
		if (ns_cpuset_test(&m->isolation.cpus, (unsigned)c) ||
		    ns_cpuset_test(&m->irqbalance.banned_cpus, (unsigned)c))
			continue;
		if (ns_cpuset_set(out, (unsigned)c) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* s & allowed into out */
static void restrict_to(const struct ns_cpuset *s, const struct ns_cpuset *allowed, struct ns_cpuset *out)
{
	ns_cpuset_clear(out);
	out->known = true;
	ns_cpuset_foreach (c, s)
		if (ns_cpuset_test(allowed, (unsigned)c))
			ns_cpuset_set(out, (unsigned)c);
}

/* The row's target: s & allowed, and the isolated CPUs of s it leaves out (said per row). */
static void target_from(struct ns_plan_irq *e, const struct ns_machine *m, const struct ns_cpuset *s,
			const struct ns_cpuset *allowed)
{
	restrict_to(s, allowed, &e->target);
	ns_cpuset_and(&e->isolated_left_out, s, &m->isolation.cpus);
	e->isolated_left_out.known = true;
}

struct builder {
	const struct ns_system *sys;
	struct ns_plan *plan;
	unsigned spread_next; /* round robin over nodes for vectors of node-less devices */
};

static const struct ns_node *nth_node_with_cpus(const struct ns_machine *m, unsigned k)
{
	size_t with = 0;
	for (size_t i = 0; i < m->nnodes; i++)
		with += ns_cpuset_count(&m->nodes[i].cpus) > 0;
	if (!with)
		return NULL;
	k %= (unsigned)with;
	for (size_t i = 0; i < m->nnodes; i++)
		if (ns_cpuset_count(&m->nodes[i].cpus) > 0 && k-- == 0)
			return &m->nodes[i];
	return NULL;
}

/*
 * May fix learn an unknown managed-ness by writing? Only where the kernel's refusal is
 * unmistakable and harmless: below 6.12 a managed MSI vector's write fails with EIO and changes
 * nothing (measured on 5.10 and 6.1). From 6.12 the mode already tells (0644: not managed).
 */
static bool probe_by_write(const struct ns_machine *m, const struct ns_irq *irq)
{
	return irq->msi && m->kver_major > 0 && !ns_machine_kernel_at_least(m, 6, 12);
}

/* Was any of d's hardware queues paired with a vector? */
static bool any_paired(const struct ns_disk *d)
{
	for (size_t i = 0; i < d->nhctx; i++)
		if (d->hctx[i].irq)
			return true;
	return false;
}

/* Do pci's vectors, together, fire on CPUs of more than one node? */
static bool spread_over_nodes(const struct ns_machine *m, const struct ns_pci *pci)
{
	struct ns_cpuset nodes = {0}, one = {0};
	bool spread;

	for (size_t i = 0; i < pci->nirqs; i++) {
		ns_machine_nodes_of(m, ns_irq_target(&pci->irqs[i]), &one);
		ns_cpuset_or(&nodes, &one);
		ns_cpuset_clear(&one);
	}
	spread = ns_cpuset_count(&nodes) > 1;
	ns_cpuset_clear(&nodes);
	return spread;
}

static bool planned(const struct ns_plan *plan, int irq)
{
	for (size_t i = 0; i < plan->nirqs; i++)
		if (plan->irqs[i].irq == irq)
			return true;
	return false;
}

static int plan_irq(struct builder *b, const struct ns_disk *d, const struct ns_pci *pci, const struct ns_irq *irq,
		    const char *answers)
{
	struct ns_plan *plan = b->plan;
	const struct ns_machine *m = &b->sys->machine;
	const struct ns_hctx *h = ns_disk_queue_of(d, irq);
	struct ns_plan_irq *e;
	struct ns_plan_irq *nv;
	char *cpus = NULL;

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

	if (h && !ns_hctx_serves_online(h)) {
		/* no I/O goes through it now: nothing to place it by */
		ns_cpuset_format(&h->cpus, &cpus);
		e->reason = ns_fmt("hardware queue %d serves no online CPU (CPUs %s are not present or offline)",
				   h->index, cpus ? cpus : "?");
		e->target.known = true;
	} else if (h && !ns_machine_spans_all_nodes(&b->sys->machine, &h->nodes)) {
		target_from(e, m, &h->cpus, &plan->allowed);
		ns_cpuset_format(&h->cpus, &cpus);
		e->reason = ns_fmt("hardware queue %d serves CPUs %s: completions land on the submitters' node",
				   h->index, cpus ? cpus : "?");
	} else if (d->node >= 0) {
		const struct ns_node *n = ns_machine_node(m, d->node);
		if (n)
			target_from(e, m, &n->cpus, &plan->allowed);
		if (h && n && !ns_cpuset_count(&e->target) && ns_cpuset_count(&n->cpus) &&
		    ns_cpuset_subset(&n->cpus, &m->isolation.cpus)) {
			/* every CPU of the device's node is isolated: off them is better than on them,
			 * and the queue serves every node (measured: the bed's megasas on node 1 with
			 * isolcpus= of node 1's CPUs) */
			char *iso = NULL;
			target_from(e, m, &h->cpus, &plan->allowed);
			ns_cpuset_format(&n->cpus, &iso);
			e->reason =
				ns_fmt("hardware queue %d serves every node and the device's node %d has only isolated "
				       "CPUs (%s): the vector goes to the housekeeping CPUs the queue serves",
				       h->index, d->node, iso ? iso : "?");
			free(iso);
		} else {
			e->reason = h ? ns_fmt("hardware queue %d serves every node: the vector goes to the device's "
					       "node %d",
					       h->index, d->node)
				      : ns_fmt("no hardware queue pairing: the vector goes to the device's node %d",
					       d->node);
		}
	} else {
		const struct ns_node *n = nth_node_with_cpus(m, b->spread_next++);
		if (n)
			target_from(e, m, &n->cpus, &plan->allowed);
		e->reason =
			ns_fmt("%s has no NUMA node of its own: its unpaired vectors are spread across nodes (this one "
			       "to node %d)",
			       d->name, n ? n->id : -1);
	}
	free(cpus);
	if (e->reason && ns_cpuset_count(&e->isolated_left_out)) {
		char *iso = NULL, *r;
		ns_cpuset_format(&e->isolated_left_out, &iso);
		r = ns_fmt("%s; isolated CPUs %s left out", e->reason, iso ? iso : "?");
		free(iso);
		free(e->reason);
		e->reason = r;
	}
	if (!e->reason || !e->device || !e->pci || !e->answers) {
		plan->nirqs++;
		return -ENOMEM;
	}
	if (irq->managed == 1) {
		char *r = ns_fmt("kernel-managed (%s): the kernel placed it and refuses writes; %s",
				 ns_managed_source_name(irq->managed_source), e->reason);
		free(e->reason);
		e->reason = r;
		e->action = NS_PLAN_SKIP;
	} else if (irq->user_settable == 0) {
		char *r = ns_fmt("user space may not set its affinity (%s: managed, no-balancing or a chip that "
				 "cannot move it); %s",
				 ns_settable_source_name(irq->user_settable_source), e->reason);
		free(e->reason);
		e->reason = r;
		e->action = NS_PLAN_SKIP;
	} else if (!h && d->nhctx > 1 && !any_paired(d) && spread_over_nodes(m, pci)) {
		char *r =
			ns_fmt("%s has %zu hardware queues and its vectors, which cannot be paired with them (driver "
			       "%s names them by neither nvme's nor virtio's scheme), already fire on more than one "
			       "node: putting every vector on one node could confine a correctly spread set, so it is "
			       "left as is; %s",
			       d->name, d->nhctx, pci->driver ? pci->driver : "(none)", e->reason);
		free(e->reason);
		e->reason = r;
		e->action = NS_PLAN_SKIP;
	} else if (irq->managed < 0 && !probe_by_write(m, irq)) {
		char *r = ns_fmt("managed-ness unknown (no debugfs IRQ flags, nothing measured of driver %s's "
				 "vectors, and this kernel's refusal cannot be told from an error): never moved on a "
				 "guess; %s",
				 pci->driver ? pci->driver : "(none)", e->reason);
		free(e->reason);
		e->reason = r;
		e->action = NS_PLAN_SKIP;
	} else if (h && !ns_hctx_serves_online(h)) {
		e->action = NS_PLAN_SKIP;
	} else if (ns_cpuset_count(&e->target) == 0) {
		char *r = ns_fmt("no allowed CPU (online, not isolated, not nohz_full, not in a cgroup-isolated "
				 "partition, not banned) for it; %s",
				 e->reason);
		free(e->reason);
		e->reason = r;
		e->action = NS_PLAN_SKIP;
	} else if (irq->affinity.known && ns_cpuset_equal(&irq->affinity, &e->target)) {
		e->action = NS_PLAN_UNCHANGED;
	} else {
		e->action = NS_PLAN_MOVE;
		if (irq->managed < 0) {
			char *r = ns_fmt("managed-ness unknown: the write itself tells (this kernel refuses a "
					 "kernel-managed vector's write with EIO and keeps its affinity), the previous "
					 "value journaled first; %s",
					 e->reason);
			free(e->reason);
			e->reason = r;
		}
	}
	plan->nirqs++;
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
	r = allowed_cpus(sys, &plan->allowed);
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
