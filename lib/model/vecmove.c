/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "model/vecmove.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

const char *ns_vecmove_rule_name(enum ns_vecmove_rule r)
{
	static const char *const names[] = {
		[NS_VM_MOVABLE] = "movable",
		[NS_VM_WRITE_TELLS] = "write-tells",
		[NS_VM_KERNEL_MANAGED] = "kernel-managed",
		[NS_VM_NOT_SETTABLE] = "not-user-settable",
		[NS_VM_UNPAIRED_SPREAD] = "unpaired-spread",
		[NS_VM_MANAGED_UNKNOWN] = "managed-unknown",
		[NS_VM_QUEUE_OFFLINE] = "queue-offline",
		[NS_VM_EXCLUSIONS_UNREAD] = "exclusions-unread",
		[NS_VM_NO_ALLOWED_CPU] = "no-allowed-cpu",
		[NS_VM_NOT_PLANNED] = "not-planned",
	};
	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

void ns_vecmove_clear(struct ns_vecmove *v)
{
	free(v->reason);
	memset(v, 0, sizeof(*v));
}

bool ns_vecmove_answers(const char *id)
{
	return strcmp(id, "node-forced") == 0 || strcmp(id, "irq-confined") == 0 ||
	       strcmp(id, "irq-fires-remote") == 0 || strcmp(id, "vector-serves-all-nodes") == 0 ||
	       strcmp(id, "irqbalance-confines") == 0 || strcmp(id, "isolated-movable-irq") == 0;
}

/*
 * Only a vector known to be unmanaged is known to be movable: a kernel-managed one refuses the
 * write, and one whose managed-ness the kernel does not tell (no debugfs, no driver knowledge)
 * may be either.
 */
enum ns_vec_class ns_vec_class(const struct ns_irq *irq)
{
	if (irq->managed == 1)
		return NS_VEC_KERNEL;
	if (irq->user_settable == 0)
		return NS_VEC_UNSETTABLE; /* read-only smp_affinity: no-balancing, or a chip without set_affinity */
	if (irq->managed != 0)
		return NS_VEC_UNKNOWN;
	return NS_VEC_MOVABLE;
}

bool ns_vecmove_cpu_allowed(const struct ns_machine *m, unsigned cpu)
{
	/* isolation.cpus holds cpu/isolated and cpu/nohz_full too (lib/read/isolation.c) */
	return ns_cpuset_test(&m->online, cpu) && !ns_cpuset_test(&m->isolation.cpus, cpu) &&
	       !ns_cpuset_test(&m->irqbalance.banned_cpus, cpu);
}

int ns_vecmove_allowed(const struct ns_machine *m, struct ns_cpuset *out)
{
	struct ns_cpuset any = {0};
	int r = 0;

	ns_cpuset_clear(out);
	if (m->nunparsed)
		return -EBADMSG;
	out->known = true;
	/* every CPU the machine may have, each judged by the one test (online among them) */
	if (ns_cpuset_copy(&any, &m->possible) < 0 || ns_cpuset_or(&any, &m->online) < 0)
		r = -ENOMEM;
	ns_cpuset_foreach (c, &any)
		if (r == 0 && ns_vecmove_cpu_allowed(m, (unsigned)c) && ns_cpuset_set(out, (unsigned)c) < 0)
			r = -ENOMEM;
	ns_cpuset_clear(&any);
	return r;
}

static bool any_allowed(const struct ns_machine *m, const struct ns_cpuset *s)
{
	ns_cpuset_foreach (c, s)
		if (ns_vecmove_cpu_allowed(m, (unsigned)c))
			return true;
	return false;
}

/* A node the round robin of a node-less device's vectors may pick: one with a CPU fix may use. */
static bool spread_node(const struct ns_machine *m, const struct ns_node *n)
{
	return any_allowed(m, &n->cpus);
}

/* The k-th (round robin) such node; NULL when none is. */
static const struct ns_node *nth_node_allowed(const struct ns_machine *m, unsigned k)
{
	size_t with = 0;
	for (size_t i = 0; i < m->nnodes; i++)
		with += spread_node(m, &m->nodes[i]);
	if (!with)
		return NULL;
	k %= (unsigned)with;
	for (size_t i = 0; i < m->nnodes; i++)
		if (spread_node(m, &m->nodes[i]) && k-- == 0)
			return &m->nodes[i];
	return NULL;
}

static char *cpus_text(const struct ns_cpuset *s)
{
	char *t = NULL;
	if (ns_cpuset_format(s, &t) < 0)
		return NULL;
	return t;
}

int ns_vecmove_belongs(const struct ns_machine *m, const struct ns_disk *d, const struct ns_irq *irq, unsigned spread_k,
		       struct ns_cpuset *set, char **why)
{
	const struct ns_hctx *h = ns_disk_queue_of(d, irq);
	char *cpus = NULL;
	int r = 0;

	ns_cpuset_clear(set);
	set->known = true;
	*why = NULL;
	if (h && !ns_machine_spans_all_nodes(m, &h->nodes)) {
		r = ns_cpuset_copy(set, &h->cpus);
		cpus = cpus_text(&h->cpus);
		*why = ns_fmt("hardware queue %d serves CPUs %s: completions land on the submitters' node", h->index,
			      cpus ? cpus : "?");
	} else if (d->node >= 0) {
		const struct ns_node *n = ns_machine_node(m, d->node);
		if (h && n && ns_cpuset_count(&n->cpus) && !any_allowed(m, &n->cpus) &&
		    ns_cpuset_subset(&n->cpus, &m->isolation.cpus)) {
			/* every CPU of the device's node is isolated: off them is better than on them,
			 * and the queue serves every node (measured: the bed's megasas on node 1 with
			 * isolcpus= of node 1's CPUs) */
			r = ns_cpuset_copy(set, &h->cpus);
			cpus = cpus_text(&n->cpus);
			*why = ns_fmt("hardware queue %d serves every node and the device's node %d has only isolated "
				      "CPUs (%s): the vector goes to the housekeeping CPUs the queue serves",
				      h->index, d->node, cpus ? cpus : "?");
		} else {
			if (n)
				r = ns_cpuset_copy(set, &n->cpus);
			*why = h ? ns_fmt("hardware queue %d serves every node: the vector goes to the device's node "
					  "%d",
					  h->index, d->node)
				 : ns_fmt("no hardware queue pairing: the vector goes to the device's node %d",
					  d->node);
		}
	} else {
		const struct ns_node *n = nth_node_allowed(m, spread_k);
		if (n)
			r = ns_cpuset_copy(set, &n->cpus);
		*why = ns_fmt("%s has no NUMA node of its own: its unpaired vectors are spread across nodes (this one "
			      "to node %d)",
			      d->name, n ? n->id : -1);
	}
	set->known = true;
	free(cpus);
	if (r < 0 || !*why) {
		free(*why);
		*why = NULL;
		return -ENOMEM;
	}
	return 0;
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

static int leave(struct ns_vecmove *out, enum ns_vecmove_rule rule, char *reason)
{
	out->move = false;
	out->rule = rule;
	out->reason = reason;
	return reason ? 0 : -ENOMEM;
}

int ns_vecmove_decide(const struct ns_machine *m, const struct ns_disk *d, const struct ns_pci *pci,
		      const struct ns_irq *irq, struct ns_vecmove *out)
{
	const struct ns_hctx *h = ns_disk_queue_of(d, irq);
	const char *driver = pci && pci->driver ? pci->driver : "(none)";
	enum ns_vec_class cls = ns_vec_class(irq);
	struct ns_cpuset set = {0};
	char *why = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if (cls == NS_VEC_KERNEL)
		return leave(out, NS_VM_KERNEL_MANAGED,
			     ns_fmt("kernel-managed (%s): the kernel placed it and refuses writes",
				    ns_managed_source_name(irq->managed_source)));
	if (cls == NS_VEC_UNSETTABLE)
		return leave(out, NS_VM_NOT_SETTABLE,
			     ns_fmt("user space may not set its affinity (%s: managed, no-balancing or a chip that "
				    "cannot move it)",
				    ns_settable_source_name(irq->user_settable_source)));
	if (!h && d->nhctx > 1 && !any_paired(d) && pci && spread_over_nodes(m, pci))
		return leave(
			out, NS_VM_UNPAIRED_SPREAD,
			ns_fmt("%s has %zu hardware queues and its vectors, which cannot be paired with them "
			       "(driver %s names them by neither nvme's nor virtio's scheme), already fire on more "
			       "than one node: putting every vector on one node could confine a correctly spread "
			       "set, so it is left as is",
			       d->name, d->nhctx, driver));
	if (irq->managed < 0 && !probe_by_write(m, irq))
		return leave(
			out, NS_VM_MANAGED_UNKNOWN,
			ns_fmt("managed-ness unknown (no debugfs IRQ flags, nothing measured of driver %s's "
			       "vectors, and this kernel's refusal cannot be told from an error): never moved on a "
			       "guess",
			       driver));
	if (h && !ns_hctx_serves_online(h))
		/* one clause for every such vector (the row names its queue), said once in a remedy */
		return leave(out, NS_VM_QUEUE_OFFLINE,
			     ns_fmt("its hardware queue serves no online CPU (the queue's CPUs are not present or "
				    "offline): no I/O goes through it now"));
	if (m->nunparsed)
		return leave(out, NS_VM_EXCLUSIONS_UNREAD,
			     ns_fmt("an excluded-CPU input (isolation, irqbalance's ban) did not parse or could not be "
				    "read: fix never places IRQs from a partial set of excluded CPUs"));
	/* the node-less round robin goes over nodes with an allowed CPU: its pick is never empty
	 * while any node has one, so the first pick tells for every vector */
	r = ns_vecmove_belongs(m, d, irq, 0, &set, &why);
	free(why);
	if (r < 0)
		return r;
	if (!any_allowed(m, &set)) {
		/* one clause for every such vector, so that a remedy says it once for all */
		r = leave(out, NS_VM_NO_ALLOWED_CPU,
			  ns_fmt("no allowed CPU (online, not isolated, not nohz_full, not in a cgroup-isolated "
				 "partition, not banned) among the CPUs it belongs on"));
		ns_cpuset_clear(&set);
		return r;
	}
	ns_cpuset_clear(&set);
	out->move = true;
	if (cls == NS_VEC_UNKNOWN) {
		out->rule = NS_VM_WRITE_TELLS;
		out->reason = ns_fmt("managed-ness unknown: the write itself tells (this kernel refuses a "
				     "kernel-managed vector's write with EIO and keeps its affinity), the previous "
				     "value journaled first");
	} else {
		out->rule = NS_VM_MOVABLE;
		out->reason = ns_fmt("known not to be kernel-managed (%s) and user-settable",
				     ns_managed_source_name(irq->managed_source));
	}
	return out->reason ? 0 : -ENOMEM;
}

static int owner_cmp(const void *a, const void *b)
{
	const struct ns_vecmove_owner *x = a, *y = b;
	if (x->irq != y->irq)
		return x->irq < y->irq ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int ns_vecmove_view_build(const struct ns_system *sys, const bool *planned, struct ns_vecmove_view *out)
{
	size_t n = 0, k = 0;

	memset(out, 0, sizeof(*out));
	out->sys = sys;
	for (size_t i = 0; i < sys->ndisks; i++)
		for (size_t p = 0; planned[i] && p < sys->disks[i].npaths; p++)
			n += sys->disks[i].paths[p].pci ? sys->disks[i].paths[p].pci->nirqs : 0;
	if (!n)
		return 0;
	out->v = calloc(n, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (size_t i = 0; i < sys->ndisks; i++)
		for (size_t p = 0; planned[i] && p < sys->disks[i].npaths; p++) {
			const struct ns_pci *pci = sys->disks[i].paths[p].pci;
			for (size_t q = 0; pci && q < pci->nirqs; q++, k++)
				out->v[k] = (struct ns_vecmove_owner){
					.irq = pci->irqs[q].irq, .seq = k, .disk = i, .pci = pci, .vec = &pci->irqs[q]};
		}
	qsort(out->v, n, sizeof(*out->v), owner_cmp);
	/* the first the plan meets of each IRQ number: it plans that one (lib/act/plan.c) */
	for (size_t i = 0; i < n; i++)
		if (!out->n || out->v[out->n - 1].irq != out->v[i].irq)
			out->v[out->n++] = out->v[i];
	return 0;
}

int ns_vecmove_view_decide(const struct ns_vecmove_view *view, const struct ns_irq *irq, struct ns_vecmove *out)
{
	struct ns_vecmove_owner key = {.irq = irq->irq};
	const struct ns_vecmove_owner *o = NULL;
	size_t lo = 0, hi = view->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (view->v[mid].irq < key.irq)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < view->n && view->v[lo].irq == key.irq)
		o = &view->v[lo];
	if (!o) {
		memset(out, 0, sizeof(*out));
		return leave(out, NS_VM_NOT_PLANNED,
			     ns_fmt("no device it serves has a finding about its interrupt placement: fix does not "
				    "touch it"));
	}
	return ns_vecmove_decide(&view->sys->machine, &view->sys->disks[o->disk], o->pci, o->vec, out);
}

void ns_vecmove_view_free(struct ns_vecmove_view *view)
{
	free(view->v);
	memset(view, 0, sizeof(*view));
}
