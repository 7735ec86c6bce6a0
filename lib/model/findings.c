/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "model/findings.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/rates.h"
#include "base/util.h"
#include "model/mpath.h"
#include "model/vecmove.h"

const char *ns_severity_name(enum ns_severity s)
{
	return s == NS_SEV_CRITICAL ? "critical" : s == NS_SEV_WARNING ? "warning" : "info";
}

/*
 * The causes and their effects (findings.h). The order matters: an effect's causes come before
 * it, so that folding the table in order names each effect's root cause.
 */
const struct ns_finding_kind ns_finding_kinds[] = {
	{"single-node", NS_ROLE_CAUSE, {NULL}},
	{"node-cpus-overlap", NS_ROLE_CAUSE, {NULL}},
	{"node-forced", NS_ROLE_CAUSE, {NULL}},
	{"node-set", NS_ROLE_CAUSE, {NULL}},
	{"node-unknown", NS_ROLE_CAUSE, {NULL}},
	{"irqbalance-confines", NS_ROLE_EFFECT, {"node-forced", "node-set", NULL}},
	{"irq-confined", NS_ROLE_EFFECT, {"node-forced", "node-set", "irqbalance-confines", NULL}},
	{"vector-serves-all-nodes", NS_ROLE_CAUSE, {NULL}},
	{"irq-fires-remote",
	 NS_ROLE_EFFECT,
	 {"node-forced", "node-set", "irq-confined", "vector-serves-all-nodes", "irqbalance-confines", NULL}},
	{"queue-affinity-mismatch", NS_ROLE_CAUSE, {NULL}},
	{"alloc-remote", NS_ROLE_EFFECT, {"node-forced", "node-set", NULL}},
	{"midlayer-alloc-stock", NS_ROLE_CAUSE, {NULL}},
	{"host-alloc-remote", NS_ROLE_CAUSE, {NULL}},
	{"rq-affinity-remote", NS_ROLE_CAUSE, {NULL}},
	{"paths-on-different-nodes", NS_ROLE_CAUSE, {NULL}},
	{"path-remote-while-local", NS_ROLE_CAUSE, {NULL}},
	{"stacked-cross-node", NS_ROLE_CAUSE, {NULL}},
	{"isolated-queue", NS_ROLE_CAUSE, {NULL}},
	{"isolated-managed-irq", NS_ROLE_CAUSE, {NULL}},
	{"isolated-movable-irq", NS_ROLE_CAUSE, {NULL}},
	{"queues-sized-to-housekeeping", NS_ROLE_CAUSE, {NULL}},
};
const size_t ns_nfinding_kinds = sizeof(ns_finding_kinds) / sizeof(ns_finding_kinds[0]);

const struct ns_finding_kind *ns_finding_kind(const char *id)
{
	for (size_t i = 0; id && i < ns_nfinding_kinds; i++)
		if (strcmp(ns_finding_kinds[i].id, id) == 0)
			return &ns_finding_kinds[i];
	return NULL;
}

static bool same_device(const struct ns_finding *a, const struct ns_finding *b)
{
	return a->device && b->device && strcmp(a->device, b->device) == 0;
}

/*
 * Name each effect among f->v[from..] its cause: the first of its kind's causes found on the
 * same device whose severity is at least the effect's (a lesser cause does not explain a
 * certain harm: that harm stands as a cause of its own). Kinds in the table's order, so a
 * cause that is itself an effect has its root already, and the effect names that root.
 */
static void fold_effects(struct ns_findings *f, size_t from)
{
	for (size_t k = 0; k < ns_nfinding_kinds; k++) {
		const struct ns_finding_kind *kind = &ns_finding_kinds[k];
		if (kind->role != NS_ROLE_EFFECT)
			continue;
		for (size_t i = from; i < f->n; i++) {
			struct ns_finding *x = &f->v[i];
			if (strcmp(x->id, kind->id) != 0)
				continue;
			for (size_t c = 0; kind->causes[c] && !x->caused_by; c++)
				for (size_t j = from; j < f->n && !x->caused_by; j++) {
					const struct ns_finding *y = &f->v[j];
					if (j != i && strcmp(y->id, kind->causes[c]) == 0 && same_device(x, y) &&
					    y->severity >= x->severity)
						x->caused_by = y->caused_by ? y->caused_by : y->id;
				}
		}
	}
}

/* Takes ownership of evidence, message and remedy. */
static int add(struct ns_findings *f, const char *id, enum ns_severity sev, const char *device,
	       struct json_object *evidence, char *message, char *remedy)
{
	struct ns_finding *x;

	if (!message || !remedy || !evidence)
		goto oom;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		struct ns_finding *nv = realloc(f->v, cap * sizeof(*nv));
		if (!nv)
			goto oom;
		f->v = nv;
		f->cap = cap;
	}
	x = &f->v[f->n];
	x->id = id;
	x->severity = sev;
	x->caused_by = NULL;
	x->form = "";
	x->nsteps = 0;
	x->device = device ? strdup(device) : NULL;
	x->evidence = evidence;
	x->message = message;
	x->remedy_text = remedy;
	f->n++;
	return 0;
oom:
	json_object_put(evidence);
	free(message);
	free(remedy);
	return -ENOMEM;
}

/* The sentence the last finding added was said in (findings.h: form). */
static void set_form(struct ns_findings *f, const char *form)
{
	if (f->n)
		f->v[f->n - 1].form = form;
}

/* irqbalance runs without numastor's policy script: it would move placed vectors back */
static bool irqbalance_unruly(const struct ns_system *sys)
{
	const struct ns_irqbalance *ib = &sys->machine.irqbalance;
	return ib->running == 1 && !(ib->policyscript && strstr(ib->policyscript, "numastor"));
}

/*
 * A step of the last finding's remedy (findings.h: ns_remedy_step), each added in the order of
 * the harm it can do: `numastor fix`, its --rq-affinity=2, --irqbalance=policy, then --modules.
 * Takes changes; the remedy's action is its first step's command.
 */
static int add_step(struct ns_findings *f, const char *command, char *changes)
{
	struct ns_finding *x;

	if (!changes)
		return -ENOMEM;
	x = f->n ? &f->v[f->n - 1] : NULL;
	if (!x || x->nsteps == NS_REMEDY_MAX_STEPS) {
		free(changes);
		return 0;
	}
	x->steps[x->nsteps++] = (struct ns_remedy_step){command, changes, "numastor fix --revert"};
	return 0;
}

static int step_fix(struct ns_findings *f)
{
	return add_step(f, "numastor fix",
			ns_fmt("places the vectors user space may move by their queues' CPUs (never on isolated "
			       "or banned CPUs), each affinity journaled first"));
}

static int step_policy(struct ns_findings *f, const struct ns_system *sys)
{
	if (!irqbalance_unruly(sys))
		return 0;
	return add_step(f, "numastor fix --irqbalance=policy",
			ns_fmt("places them as `numastor fix` does and gives irqbalance numastor's policy script "
			       "(a drop-in; irqbalance restarted), so it leaves them there"));
}

static int step_modules(struct ns_findings *f, const char *module, const char *pci, const char *disk)
{
	return add_step(f, "numastor fix --modules",
			ns_fmt("swaps in numastor's patched %s: unloads the stock one and removes + rescans PCI %s, "
			       "detaching %s and every disk behind %s meanwhile; refused for a disk in use (the root "
			       "file system's among them: then `--modules --install` and a reboot)",
			       module, pci, disk, module));
}

static struct json_object *nodes_json(const struct ns_cpuset *nodes)
{
	struct json_object *a = json_object_new_array();
	ns_cpuset_foreach (n, nodes)
		json_object_array_add(a, json_object_new_int(n));
	return a;
}

static char *nodes_text(const struct ns_cpuset *nodes)
{
	char *t = NULL;
	if (ns_cpuset_format(nodes, &t) < 0)
		return NULL;
	return t;
}

/* The vectors that carry I/O completions: those paired with a hardware queue, else every
 * vector that is not an admin/config one. */
static size_t queue_vectors(const struct ns_disk *d, const struct ns_irq **out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < d->nhctx && n < cap; i++) {
		const struct ns_irq *irq = d->hctx[i].irq;
		bool dup = false;
		if (!irq || !ns_hctx_serves_online(&d->hctx[i]))
			continue; /* a queue of CPUs not present or offline carries no I/O now */
		for (size_t k = 0; k < n; k++)
			dup |= out[k] == irq;
		if (!dup)
			out[n++] = irq;
	}
	if (n)
		return n;
	for (size_t p = 0; p < d->npaths; p++) {
		/* a fabric path's function (a NIC, an HBA) has no vector of the disk's queues */
		const struct ns_pci *pci = d->paths[p].fabric ? NULL : d->paths[p].pci;
		for (size_t i = 0; pci && i < pci->nirqs && n < cap; i++) {
			const struct ns_irq *irq = &pci->irqs[i];
			const char *nm = irq->name ? irq->name : "";
			if (irq->queue_of_ctl == 0 || strstr(nm, "-config") || strstr(nm, "-control") ||
			    strstr(nm, "-event"))
				continue;
			out[n++] = irq;
		}
	}
	return n;
}

/* What user space may do with a vector, by what the kernel tells (lib/model/vecmove.h). */
enum vec_class {
	VEC_MOVABLE = NS_VEC_MOVABLE,
	VEC_KERNEL = NS_VEC_KERNEL,
	VEC_UNSETTABLE = NS_VEC_UNSETTABLE,
	VEC_UNKNOWN = NS_VEC_UNKNOWN
};

static enum vec_class vector_class(const struct ns_irq *irq)
{
	return (enum vec_class)ns_vec_class(irq);
}

/* One vector a finding is about, and what `numastor fix` does with it: the plan's decision. */
struct vec_fix {
	int irq;
	struct ns_vecmove dec;
};

struct vec_counts {
	size_t n, movable, kernel, unsettable, unknown; /* by class: what irqbalance may do */
	size_t moves;					/* those `numastor fix` moves */
	struct vec_fix *fix;				/* n of them, each one's decision */
	bool oom;
};

static void count_vector(struct vec_counts *vc, const struct ns_system *sys, const struct ns_disk *d,
			 const struct ns_irq *irq)
{
	enum vec_class k = vector_class(irq);
	const struct ns_pci *pci = NULL;
	struct vec_fix *nv = realloc(vc->fix, (vc->n + 1) * sizeof(*nv));

	vc->movable += k == VEC_MOVABLE;
	vc->kernel += k == VEC_KERNEL;
	vc->unsettable += k == VEC_UNSETTABLE;
	vc->unknown += k == VEC_UNKNOWN;
	if (!nv) {
		vc->oom = true;
		return;
	}
	vc->fix = nv;
	for (size_t p = 0; !pci && p < d->npaths; p++)
		for (size_t i = 0; d->paths[p].pci && i < d->paths[p].pci->nirqs; i++)
			if (&d->paths[p].pci->irqs[i] == irq)
				pci = d->paths[p].pci;
	nv[vc->n].irq = irq->irq;
	if (ns_vecmove_decide(&sys->machine, d, pci, irq, &nv[vc->n].dec) < 0)
		vc->oom = true;
	vc->moves += nv[vc->n].dec.move;
	vc->n++;
}

static void vec_counts_free(struct vec_counts *vc)
{
	for (size_t i = 0; i < vc->n; i++)
		ns_vecmove_clear(&vc->fix[i].dec);
	free(vc->fix);
	memset(vc, 0, sizeof(*vc));
}

/* `numastor fix` is the remedy only when it moves every vector the finding is about. */
static bool all_movable(const struct vec_counts *vc)
{
	return vc->n > 0 && vc->moves == vc->n && !vc->oom;
}

/* "irq 70" or "irqs 70-73, 75": the vectors of vc whose decision is like want's (same move,
 * same reason), or every one fix moves when want is NULL. */
static void irq_list(FILE *m, const struct vec_counts *vc, const struct ns_vecmove *want)
{
	int *v = malloc((vc->n ? vc->n : 1) * sizeof(*v));
	size_t k = 0;

	if (!v)
		return;
	for (size_t i = 0; i < vc->n; i++)
		if (want ? !vc->fix[i].dec.move && vc->fix[i].dec.reason &&
				    strcmp(vc->fix[i].dec.reason, want->reason) == 0
			 : vc->fix[i].dec.move)
			v[k++] = vc->fix[i].irq;
	ns_irq_list_write(m, v, k);
	free(v);
}

/*
 * The remedy text for vectors `numastor fix` does not all move: which it leaves alone and why,
 * in the words of the plan's skipped rows (lib/model/vecmove.h), which it moves, then what to do for
 * the others.
 */
static char *not_movable_text(const struct vec_counts *vc, const char *managed_advice)
{
	char *out = NULL;
	size_t len = 0, groups = 0;
	bool unknown = false;
	FILE *m;

	if (vc->oom)
		return NULL;
	if (!vc->n)
		return ns_fmt("`numastor fix` finds no vector of it to move; %s", managed_advice);
	m = open_memstream(&out, &len);
	if (!m)
		return NULL;
	for (size_t i = 0; i < vc->n; i++) {
		const struct ns_vecmove *d = &vc->fix[i].dec;
		bool seen = false;
		if (d->move)
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !vc->fix[k].dec.move && strcmp(vc->fix[k].dec.reason, d->reason) == 0;
		if (seen)
			continue;
		unknown |= d->rule == NS_VM_MANAGED_UNKNOWN;
		fputs(groups++ ? "; " : "`numastor fix` leaves ", m);
		irq_list(m, vc, d);
		fprintf(m, "%s: %s", groups == 1 ? " alone" : "", d->reason);
	}
	fputs(".", m);
	if (vc->moves) {
		fputs(" It moves ", m);
		irq_list(m, vc, NULL);
		fputs(".", m);
	}
	if (unknown)
		fputs(" Look at the driver's interrupt options (managed affinity, queue count).", m);
	fprintf(m, " For the vectors it leaves, %s", managed_advice);
	if (fclose(m) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

static void node_set_of(const struct ns_system *sys, const struct ns_cpuset *cpus, struct ns_cpuset *nodes)
{
	ns_machine_nodes_of(&sys->machine, cpus, nodes);
}

struct disk_ctx {
	const struct ns_system *sys;
	const struct ns_disk *d;
	const struct ns_irq **qv;
	size_t nqv;
	bool remote_completions;
	bool forced;
	struct vec_counts vc; /* the queue vectors by class */
};

static int rule_forced(struct ns_findings *f, struct disk_ctx *c)
{
	for (size_t p = 0; p < c->d->npaths; p++) {
		const struct ns_pci *pci = c->d->paths[p].pci;
		struct json_object *ev;
		bool nvme;
		int r;
		if (!pci || pci->forced != 1)
			continue;
		c->forced = true;
		nvme = pci->driver && strcmp(pci->driver, "nvme") == 0;
		ev = json_object_new_object();
		json_object_object_add(ev, "pci", json_object_new_string(pci->address));
		json_object_object_add(ev, "numa_node", json_object_new_int(pci->numa_node));
		json_object_object_add(ev, "bus_node", json_object_new_int(pci->bus_node));
		json_object_object_add(ev, "driver", pci->driver ? json_object_new_string(pci->driver) : NULL);
		json_object_object_add(ev, "detail",
				       pci->forced_evidence ? json_object_new_string(pci->forced_evidence) : NULL);
		r = add(f, "node-forced", NS_SEV_CRITICAL, c->d->name, ev,
			ns_fmt("%s sits on PCI function %s, which reads NUMA node %d although nothing above it has a "
			       "node: "
			       "driver %s forced it, and tools that trust numa_node (irqbalance) confine its "
			       "interrupts "
			       "to node %d.",
			       c->d->name, pci->address, pci->numa_node, pci->driver ? pci->driver : "(none)",
			       pci->numa_node),
			nvme ? ns_fmt("The lasting fix is an nvme driver that leaves a node-less controller at -1 "
				      "(upstream dad651b2a44e, v6.6 and 6.1.56) and %s removed + rescanned so the "
				      "forced node goes; until then the vectors user space may move can be placed "
				      "by the queues' CPUs.",
				      pci->address)
			     : ns_fmt("Reload %s without the node override and remove + rescan %s (by hand: numastor "
				      "has no patched build of it); until then the vectors user space may move can "
				      "be placed by the queues' CPUs.",
				      pci->driver ? pci->driver : "the driver", pci->address));
		if (r < 0)
			return r;
		/* the revertible placement first, the module swap (it detaches disks) last */
		if ((all_movable(&c->vc) && (r = step_fix(f)) < 0) ||
		    (all_movable(&c->vc) && (r = step_policy(f, c->sys)) < 0) ||
		    (nvme && (r = step_modules(f, "nvme", pci->address, c->d->name)) < 0))
			return r;
	}
	return 0;
}

/* node-set: a node nothing above the function gives, which no forcing driver set (evidence). */
static int rule_node_set(struct ns_findings *f, struct disk_ctx *c)
{
	for (size_t p = 0; p < c->d->npaths; p++) {
		const struct ns_pci *pci = c->d->paths[p].pci;
		const struct ns_machine *m = &c->sys->machine;
		bool hand = m->tainted >= 0 && (m->tainted & NS_TAINT_FIRMWARE_WORKAROUND);
		struct json_object *ev;
		int r;
		if (!pci || pci->node_set != 1)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "pci", json_object_new_string(pci->address));
		json_object_object_add(ev, "numa_node", json_object_new_int(pci->numa_node));
		json_object_object_add(ev, "bus_node", pci->bus_node >= -1 ? json_object_new_int(pci->bus_node) : NULL);
		json_object_object_add(ev, "driver", pci->driver ? json_object_new_string(pci->driver) : NULL);
		json_object_object_add(ev, "tainted", m->tainted >= 0 ? json_object_new_int64(m->tainted) : NULL);
		json_object_object_add(ev, "detail",
				       pci->node_set_evidence ? json_object_new_string(pci->node_set_evidence) : NULL);
		r = add(f, "node-set", NS_SEV_WARNING, c->d->name, ev,
			ns_fmt("%s sits on PCI function %s, whose NUMA node %d is not the firmware's%s: tools that "
			       "trust numa_node (irqbalance, the kernel's own allocations) follow the node that was "
			       "set.",
			       c->d->name, pci->address, pci->numa_node,
			       hand ? " (the kernel is tainted I: it was written by hand)"
				    : " and no driver that forces one set it"),
			ns_fmt("If the override is not deliberate, remove it: echo 1 > /sys/bus/pci/devices/%s/remove; "
			       "echo 1 > /sys/bus/pci/rescan (the node is read again from the bus), or reboot. A node "
			       "written by hand applies only to allocations made after it: rebind the driver if it is "
			       "meant.",
			       pci->address));
		if (r < 0)
			return r;
		set_form(f, hand ? "by-hand" : "not-by-driver");
	}
	return 0;
}

static int rule_unknown(struct ns_findings *f, struct disk_ctx *c)
{
	const struct ns_pci *pci = c->d->npaths ? c->d->paths[0].pci : NULL;
	struct json_object *ev;

	/* only a real -1: an unreadable numa_node is a note, not a firmware statement */
	if (c->d->node_source != NS_NODE_SRC_UNKNOWN || !pci || pci->numa_node != -1)
		return 0;
	ev = json_object_new_object();
	json_object_object_add(ev, "pci", json_object_new_string(pci->address));
	json_object_object_add(ev, "numa_node",
			       pci->numa_node == NS_NODE_UNREAD ? NULL : json_object_new_int(pci->numa_node));
	return add(
		f, "node-unknown", NS_SEV_INFO, c->d->name, ev,
		ns_fmt("The firmware gives %s (PCI %s) no NUMA node, so the kernel and irqbalance treat it as local to "
		       "every node.",
		       c->d->name, pci->address),
		ns_fmt("Nothing is wrong in the OS: the platform does not describe this bus (ACPI _PXM). Keep each "
		       "queue's vector on the CPUs its queue serves (`numastor fix` does) rather than on one node."));
}

/*
 * Every queue vector on one node while the queues serve several. Critical when that node is
 * certainly not the device's: the device's node is known and differs, or the node was forced
 * on it. Confinement to the device's own node is where the x86 vector allocator puts unmanaged
 * vectors by default: a warning. A device without a node of its own: a warning too.
 */
static int rule_confined(struct ns_findings *f, struct disk_ctx *c)
{
	struct ns_cpuset irq_nodes = {0}, queue_nodes = {0}, tmp = {0};
	struct json_object *ev, *irqs;
	bool foreign, unreliable;
	int r = 0, node;
	char *qn, *msg;
	const char *form;

	if (c->nqv < 2)
		return 0;
	for (size_t i = 0; i < c->nqv; i++) {
		const struct ns_cpuset *t = ns_irq_target(c->qv[i]);
		if (!t->known || ns_cpuset_count(t) == 0)
			goto out;
		node_set_of(c->sys, t, &tmp);
		ns_cpuset_or(&irq_nodes, &tmp);
	}
	for (size_t i = 0; i < c->d->nhctx; i++)
		ns_cpuset_or(&queue_nodes, &c->d->hctx[i].nodes);
	if (ns_cpuset_count(&irq_nodes) != 1 || ns_cpuset_count(&queue_nodes) < 2)
		goto out;
	node = ns_cpuset_first(&irq_nodes);
	/* a node whose CPUs another node claims too (node-cpus-overlap) is no ground for certain harm */
	unreliable = ns_machine_node_overlaps(&c->sys->machine, node) ||
		     ns_machine_node_overlaps(&c->sys->machine, c->d->node);
	foreign = c->forced || (c->d->node >= 0 && node != c->d->node);
	c->remote_completions = true;
	ev = json_object_new_object();
	irqs = json_object_new_array();
	for (size_t i = 0; i < c->nqv; i++)
		json_object_array_add(irqs, json_object_new_int(c->qv[i]->irq));
	json_object_object_add(ev, "irqs", irqs);
	json_object_object_add(ev, "irq_node", json_object_new_int(node));
	json_object_object_add(ev, "queue_nodes", nodes_json(&queue_nodes));
	json_object_object_add(ev, "device_node", c->d->node >= 0 ? json_object_new_int(c->d->node) : NULL);
	json_object_object_add(ev, "node_forced", json_object_new_boolean(c->forced));
	if (unreliable)
		json_object_object_add(ev, "node_reliable", json_object_new_boolean(false));
	qn = nodes_text(&queue_nodes);
	form = c->forced ? "forced" : foreign ? "foreign" : c->d->node == node ? "own-node" : "no-node";
	if (c->forced)
		msg = ns_fmt(
			"All %zu queue interrupts of %s are confined to node %d while its hardware queues serve CPUs "
			"on nodes %s, and its node was forced: completions for submitters on the other nodes "
			"cross the interconnect.",
			c->nqv, c->d->name, node, qn ? qn : "?");
	else if (foreign)
		msg = ns_fmt(
			"All %zu queue interrupts of %s are confined to node %d, not the device's node %d, while "
			"its hardware queues serve CPUs on nodes %s: the interrupts are handled away from the device, "
			"and completions cross the interconnect even for submitters on the device's node.",
			c->nqv, c->d->name, node, c->d->node, qn ? qn : "?");
	else if (c->d->node == node)
		msg = ns_fmt("All %zu queue interrupts of %s are confined to node %d, the device's own node (where the "
			     "kernel puts unmanaged vectors by default), while its hardware queues serve CPUs on nodes "
			     "%s: completions for submitters on the other nodes cross the interconnect.",
			     c->nqv, c->d->name, node, qn ? qn : "?");
	else
		msg = ns_fmt(
			"All %zu queue interrupts of %s are confined to node %d while its hardware queues serve CPUs "
			"on nodes %s; the device has no node of its own, so completions for submitters on the "
			"other nodes cross the interconnect.",
			c->nqv, c->d->name, node, qn ? qn : "?");
	r = add(f, "irq-confined", foreign && !unreliable ? NS_SEV_CRITICAL : NS_SEV_WARNING, c->d->name, ev, msg,
		all_movable(&c->vc) ? ns_fmt("Re-spread each queue's vector onto the CPUs its hardware queue serves%s.",
					     irqbalance_unruly(c->sys) ? ", and keep irqbalance from undoing it" : "")
				    : not_movable_text(&c->vc, "check isolcpus=managed_irq and irqaffinity=."));
	if (r >= 0)
		set_form(f, form);
	if (r >= 0 && all_movable(&c->vc) && (r = step_fix(f)) >= 0)
		r = step_policy(f, c->sys);
	free(qn);
out:
	ns_cpuset_clear(&irq_nodes);
	ns_cpuset_clear(&queue_nodes);
	ns_cpuset_clear(&tmp);
	return r;
}

static int rule_fires_remote(struct ns_findings *f, struct disk_ctx *c)
{
	const struct ns_system *sys = c->sys;
	struct json_object *list = json_object_new_array();
	size_t remote = 0, checked = 0;
	struct vec_counts vc = {0};
	int r = 0;

	for (size_t i = 0; i < c->d->nhctx; i++) {
		const struct ns_hctx *h = &c->d->hctx[i];
		const struct ns_irq *irq = h->irq;
		struct ns_cpuset ref = {0};
		unsigned long long off = 0, total = 0;
		const unsigned long long *counts = irq ? ns_irq_judged_counts(irq, &total) : NULL;
		bool dup = false;

		/* rates over check --interval, else since numastor fix placed it, else since boot */
		if (!counts || total == 0 || !ns_hctx_serves_online(h))
			continue;
		for (size_t k = 0; k < i; k++)
			dup |= c->d->hctx[k].irq == irq;
		if (dup)
			continue;
		/* a queue serving every node: the vector belongs on the device's node (none: skipped) */
		if (!ns_queue_expected_nodes(&sys->machine, c->d->node, &h->nodes, &ref))
			continue;
		checked++;
		for (size_t n = 0; n < irq->nper_node; n++)
			if (!ns_cpuset_test(&ref, (unsigned)n))
				off += counts[n];
		if (off * 2 > total) {
			struct json_object *e = json_object_new_object(), *by_node = json_object_new_array();
			remote++;
			count_vector(&vc, sys, c->d, irq);
			json_object_object_add(e, "irq", json_object_new_int(irq->irq));
			json_object_object_add(e, "hw_queue", json_object_new_int(h->index));
			json_object_object_add(e, "expected_nodes", nodes_json(&ref));
			/* the shape of counts_by_node everywhere (the IRQ's own): [{node, count}] */
			for (size_t n = 0; n < irq->nper_node; n++) {
				struct json_object *nc = json_object_new_object();
				json_object_object_add(nc, "node", json_object_new_int((int)n));
				json_object_object_add(nc, "count", json_object_new_int64((int64_t)counts[n]));
				json_object_array_add(by_node, nc);
			}
			json_object_object_add(e, "counts_by_node", by_node);
			json_object_object_add(e, "count_basis",
					       json_object_new_string(ns_count_basis_name(ns_irq_count_basis(irq))));
			json_object_array_add(list, e);
		}
		ns_cpuset_clear(&ref);
	}
	if (remote) {
		struct json_object *ev = json_object_new_object();
		char *advice;
		c->remote_completions = true;
		json_object_object_add(ev, "irqs", list);
		advice = ns_fmt("set rq_affinity=2 on %s so completion work runs on the submitting CPU.", c->d->name);
		r = add(f, "irq-fires-remote", NS_SEV_WARNING, c->d->name, ev,
			ns_fmt("%zu of %zu queue interrupts of %s fire mostly on a node other than the CPUs their "
			       "queue "
			       "serves.",
			       remote, checked, c->d->name),
			all_movable(&vc)
				? ns_fmt("Move each vector to the CPUs its hardware queue serves, or to the device's "
					 "node for a queue that serves every node.")
				: not_movable_text(&vc, advice ? advice : "set rq_affinity=2."));
		free(advice);
		if (r >= 0 && all_movable(&vc))
			r = step_fix(f);
	} else {
		json_object_put(list);
	}
	vec_counts_free(&vc);
	return r;
}

static int rule_mismatch(struct ns_findings *f, struct disk_ctx *c)
{
	struct json_object *list = json_object_new_array();
	size_t n = 0;

	for (size_t i = 0; i < c->d->nhctx; i++) {
		const struct ns_hctx *h = &c->d->hctx[i];
		struct json_object *e;
		if (!h->irq || h->irq->managed != 1 || !h->irq->affinity.known || !h->cpus.known ||
		    !ns_hctx_serves_online(h) || h->pairing == NS_PAIRING_SINGLE_VECTOR ||
		    ns_cpuset_equal(&h->irq->affinity, &h->cpus))
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "hw_queue", json_object_new_int(h->index));
		json_object_object_add(e, "queue_cpus", ns_cpuset_json(&h->cpus));
		json_object_object_add(e, "irq", json_object_new_int(h->irq->irq));
		json_object_object_add(e, "irq_affinity", ns_cpuset_json(&h->irq->affinity));
		json_object_array_add(list, e);
		n++;
	}
	if (!n) {
		json_object_put(list);
		return 0;
	}
	struct json_object *ev = json_object_new_object();
	json_object_object_add(ev, "queues", list);
	return add(f, "queue-affinity-mismatch", NS_SEV_WARNING, c->d->name, ev,
		   ns_fmt("%zu hardware queue(s) of %s serve CPUs other than those their managed vector is bound to.",
			  n, c->d->name),
		   ns_fmt("The kernel builds both from the same spread; a difference means CPUs went offline or "
			  "the queue map was changed. Reload the driver (or reset the controller) to rebuild both."));
}

static int rule_all_nodes(struct ns_findings *f, struct disk_ctx *c)
{
	struct json_object *ev;
	int r;

	if (c->d->nhctx != 1 || !ns_machine_spans_all_nodes(&c->sys->machine, &c->d->hctx[0].nodes) || c->nqv > 1)
		return 0;
	c->remote_completions = true;
	ev = json_object_new_object();
	json_object_object_add(ev, "hw_queues", json_object_new_int(1));
	json_object_object_add(ev, "queue_cpus", ns_cpuset_json(&c->d->hctx[0].cpus));
	json_object_object_add(ev, "irq", c->nqv ? json_object_new_int(c->qv[0]->irq) : NULL);
	r = add(f, "vector-serves-all-nodes", NS_SEV_WARNING, c->d->name, ev,
		ns_fmt("One hardware queue and one interrupt vector serve the CPUs of every node for %s: completions "
		       "for submitters on all but one node are remote.",
		       c->d->name),
		all_movable(&c->vc)
			? ns_fmt("Keep the vector on the device's node and set rq_affinity=2 so completion work "
				 "runs on the submitting CPU; a driver configuration with more vectors (e.g. "
				 "megaraid_sas smp_affinity_enable, more queues) removes the bottleneck.")
		: c->nqv ? not_movable_text(&c->vc, "set rq_affinity=2 so completion work runs on the submitting CPU; "
						    "a driver configuration with more vectors removes the bottleneck.")
			 : ns_fmt("No interrupt vector of it was found: set rq_affinity=2 so completion work runs on "
				  "the submitting CPU; a driver configuration with more vectors removes the "
				  "bottleneck."));
	if (r >= 0 && all_movable(&c->vc))
		r = step_fix(f);
	return r;
}

static int rule_alloc(struct ns_findings *f, struct disk_ctx *c, bool scsi_patched)
{
	const struct ns_disk *d = c->d;
	int r;

	if (d->node < 0)
		return 0;
	for (size_t i = 0; i < d->nhctx; i++) {
		const struct ns_hctx *h = &d->hctx[i];
		struct json_object *ev;
		if (h->memory_node < 0 || h->memory_node == d->node || ns_cpuset_count(&h->nodes) < 2 ||
		    !ns_cpuset_test(&h->nodes, (unsigned)d->node))
			continue;
		/* one tag set shared by the host's queues lives on the device's node: the tags and
		 * requests are local, only the small hctx structure is not */
		if (d->alloc.shared_tags == 1 && ns_cpuset_test(&d->alloc.tags_nodes, (unsigned)d->node))
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "hw_queue", json_object_new_int(h->index));
		json_object_object_add(ev, "queue_cpus", ns_cpuset_json(&h->cpus));
		json_object_object_add(ev, "memory_node", json_object_new_int(h->memory_node));
		json_object_object_add(ev, "device_node", json_object_new_int(d->node));
		json_object_object_add(ev, "shared_tags",
				       d->alloc.shared_tags < 0 ? NULL : json_object_new_boolean(d->alloc.shared_tags));
		r = add(f, "alloc-remote", NS_SEV_WARNING, d->name, ev,
			d->alloc.shared_tags == 0 && d->alloc.descriptor_basis
				? ns_fmt("Hardware queue %d of %s, its tags, its requests and its PRP/SGL descriptors "
					 "live on node %d (the node of the first CPU it serves: nvme-pci keeps its "
					 "descriptor pools per node since v6.16) while the device sits on node %d.",
					 h->index, d->name, h->memory_node, d->node)
			: d->alloc.shared_tags == 0
				? ns_fmt("Hardware queue %d of %s, its tags and its requests live on node %d (the node "
					 "of the first CPU it serves) while the device sits on node %d.",
					 h->index, d->name, h->memory_node, d->node)
				: ns_fmt("Hardware queue %d of %s lives on node %d (the node of the first CPU it "
					 "serves) while the device sits on node %d; so do its tags and requests unless "
					 "the host shares one tag set (host_tagset), which only debugfs tells.",
					 h->index, d->name, h->memory_node, d->node),
			ns_fmt("blk-mq places a shared queue's memory by its first CPU. More hardware queues (one per "
			       "node "
			       "at least) make each queue's memory local; check the driver's queue/vector settings."));
		if (r < 0)
			return r;
		set_form(f, d->alloc.shared_tags == 0 ? "tags-own" : "tags-maybe-shared");
		break;
	}
	if ((d->kind == NS_DISK_SCSI || d->kind == NS_DISK_ATA) && !scsi_patched) {
		struct json_object *ev = json_object_new_object();
		json_object_object_add(ev, "device_node", json_object_new_int(d->node));
		json_object_object_add(ev, "module", json_object_new_string("scsi_mod"));
		json_object_object_add(ev, "patched", json_object_new_boolean(0));
		r = add(f, "midlayer-alloc-stock", NS_SEV_INFO, d->name, ev,
			ns_fmt("The stock SCSI midlayer allocates %s's scsi_device and scsi_target on whichever node "
			       "scans "
			       "it, not on the HBA's node %d: rescans from other nodes leave them remote.",
			       d->name, d->node),
			ns_fmt("The numastor-patched scsi_mod allocates them on the HBA's node "
			       "(scsi_alloc_sdev/scsi_alloc_target)."));
		if (r < 0 || (r = step_modules(f, "scsi_mod",
					       d->npaths && d->paths[0].pci ? d->paths[0].pci->address : "of the HBA",
					       d->name)) < 0)
			return r;
	}
	return 0;
}

/* The HBA modules kmod-patches/scsi-numa-local-alloc converts to scsi_host_alloc_node(dev_to_node) */
static bool host_alloc_patch_exists(const char *module)
{
	static const char *const patched[] = {"megaraid_sas", "mpt3sas", "lpfc", "libata"};

	for (size_t i = 0; module && i < sizeof(patched) / sizeof(patched[0]); i++)
		if (strcmp(module, patched[i]) == 0)
			return true;
	return false;
}

/*
 * The Scsi_Host and the HBA driver's private data behind it, inferred off the HBA's node: a
 * stock module allocated them on the probing CPU's node, and no CPU of the HBA's node could run
 * the probe (each is isolated or nohz_full). Every I/O of every disk of the host touches them.
 */
static int rule_host_alloc(struct ns_findings *f, struct disk_ctx *c)
{
	const struct ns_disk *d = c->d;
	const struct ns_pci *pci = d->npaths ? d->paths[0].pci : NULL;
	const struct ns_machine *m = &c->sys->machine;
	const struct ns_node *n;
	const char *mod = d->alloc.host_alloc_module;
	bool remedy;
	struct json_object *ev;
	int r;

	if (d->alloc.host_alloc_remote != 1 || !pci || pci->numa_node < 0)
		return 0;
	n = ns_machine_node(m, pci->numa_node);
	remedy = host_alloc_patch_exists(mod);
	ev = json_object_new_object();
	json_object_object_add(ev, "structure", json_object_new_string("scsi_host"));
	json_object_object_add(ev, "module", mod ? json_object_new_string(mod) : NULL);
	json_object_object_add(ev, "patched", json_object_new_boolean(0));
	json_object_object_add(ev, "device_node", json_object_new_int(pci->numa_node));
	json_object_object_add(ev, "node_cpus", n ? ns_cpuset_json(&n->cpus) : NULL);
	json_object_object_add(ev, "isolated_cpus", ns_cpuset_json(&m->isolated));
	json_object_object_add(ev, "nohz_full_cpus", ns_cpuset_json(&m->nohz_full));
	json_object_object_add(ev, "patch_available", json_object_new_boolean(remedy));
	r = add(f, "host-alloc-remote", NS_SEV_WARNING, d->name, ev,
		ns_fmt("The SCSI host of %s and %s's data behind it are inferred off the HBA's node %d: the stock "
		       "module allocated them on the probing CPU's node, and every CPU of node %d is isolated or "
		       "nohz_full, so the PCI core probed elsewhere.",
		       d->name, mod ? mod : "the driver", pci->numa_node, pci->numa_node),
		remedy ? ns_fmt("The numastor-patched %s and scsi_mod allocate them on the HBA's node "
				"(scsi_host_alloc_node); without a module swap, leave a CPU of node %d out of "
				"isolcpus= and nohz_full= (a reboot).",
				mod, pci->numa_node)
		       : ns_fmt("numastor has no patch for %s: leave a CPU of node %d out of isolcpus= and "
				"nohz_full= so the PCI core probes there (a reboot).",
				mod ? mod : "this driver", pci->numa_node));
	if (r >= 0 && remedy)
		r = step_modules(f, mod, pci->address, d->name);
	return r;
}

static int rule_rq_affinity(struct ns_findings *f, struct disk_ctx *c)
{
	struct json_object *ev;

	if (c->d->rq_affinity != 0 || !c->remote_completions)
		return 0;
	ev = json_object_new_object();
	json_object_object_add(ev, "rq_affinity", json_object_new_int(0));
	if (add(f, "rq-affinity-remote", NS_SEV_WARNING, c->d->name, ev,
		ns_fmt("%s has rq_affinity=0, so completions run where the interrupt lands, which is remote for "
		       "some submitters.",
		       c->d->name),
		ns_fmt("Complete on the submitting CPU: rq_affinity=2 (by hand, echo 2 > "
		       "/sys/block/%s/queue/rq_affinity; not kept across reboots).",
		       c->d->name)) < 0)
		return -ENOMEM;
	return add_step(f, "numastor fix --rq-affinity=2",
			ns_fmt("sets %s's rq_affinity to 2 (completions on the submitting CPU), the previous value "
			       "journaled first",
			       c->d->name));
}

/*
 * irqbalance without numastor's policy script moves the vectors user space may move. Critical
 * when the device's node was forced and irqbalance can move its vectors (it confines them to
 * that node); a warning otherwise, and when no vector is known to be movable it may move none.
 */
static int rule_irqbalance(struct ns_findings *f, struct disk_ctx *c)
{
	const struct ns_irqbalance *ib = &c->sys->machine.irqbalance;
	struct json_object *ev;
	bool movable = c->vc.movable > 0, critical;
	int r;

	if (ib->running != 1 || (ib->policyscript && strstr(ib->policyscript, "numastor")) ||
	    !(c->vc.movable || c->vc.unknown))
		return 0;
	if (!c->forced && c->d->node < 0)
		return 0;
	critical = c->forced && movable;
	ev = json_object_new_object();
	json_object_object_add(ev, "irqbalance_pid", json_object_new_int64(ib->pid));
	json_object_object_add(ev, "policyscript", ib->policyscript ? json_object_new_string(ib->policyscript) : NULL);
	json_object_object_add(ev, "node_forced", json_object_new_boolean(c->forced));
	json_object_object_add(ev, "movable_vectors", json_object_new_int64((int64_t)c->vc.movable));
	json_object_object_add(ev, "unknown_vectors", json_object_new_int64((int64_t)c->vc.unknown));
	r = add(f, "irqbalance-confines", critical ? NS_SEV_CRITICAL : NS_SEV_WARNING, c->d->name, ev,
		critical
			? ns_fmt("irqbalance runs and trusts the forced node of %s: it confines the vectors user space "
				 "may move to that node's CPUs.",
				 c->d->name)
		: movable ? ns_fmt("irqbalance runs without numastor's policy script: it moves %s's vectors user space "
				   "may "
				   "move by its own rules and undoes any placement made for the queues.",
				   c->d->name)
			  : ns_fmt("irqbalance runs without numastor's policy script, and the kernel does not tell "
				   "whether "
				   "%s's queue vectors are kernel-managed: if they are not, irqbalance moves them by "
				   "its own "
				   "rules.",
				   c->d->name),
		movable ? ns_fmt("Place the vectors and give irqbalance numastor's policy script, so it leaves "
				 "them alone.")
			: ns_fmt("Give irqbalance numastor's policy script, so it leaves these vectors alone: "
				 "`numastor fix --irqbalance=policy` (its drop-in for irqbalance.service adds "
				 "--policyscript; `numastor fix --revert` takes it out)."));
	if (r >= 0)
		set_form(f, critical ? "forced" : movable ? "movable" : "managed-unknown");
	if (r >= 0 && movable)
		r = step_policy(f, c->sys);
	return r;
}

/* Two of the head's paths have controllers on known, different nodes (a path whose node is
 * unknown sits on no node: it is no evidence that the paths differ). */
static bool paths_on_two_nodes(const struct ns_disk *d)
{
	for (size_t i = 0; i < d->npaths; i++)
		for (size_t j = i + 1; j < d->npaths; j++) {
			int a = ns_mpath_path_node(&d->paths[i]), b = ns_mpath_path_node(&d->paths[j]);
			if (a >= 0 && b >= 0 && a != b)
				return true;
		}
	return false;
}

static int rule_paths(struct ns_findings *f, struct disk_ctx *c)
{
	struct json_object *ev, *paths;

	if (c->d->node_source != NS_NODE_SRC_PATHS_DISAGREE || (c->d->iopolicy && strcmp(c->d->iopolicy, "numa") == 0))
		return 0; /* with iopolicy numa each node already uses its nearest path */
	if (!paths_on_two_nodes(c->d))
		return 0; /* one node and an unknown one: the paths need not sit apart */
	ev = json_object_new_object();
	paths = json_object_new_array();
	for (size_t i = 0; i < c->d->npaths; i++) {
		const struct ns_path *p = &c->d->paths[i];
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "controller", p->controller ? json_object_new_string(p->controller) : NULL);
		json_object_object_add(e, "pci", p->pci ? json_object_new_string(p->pci->address) : NULL);
		json_object_object_add(e, "numa_node", p->pci ? json_object_new_int(p->pci->numa_node) : NULL);
		json_object_array_add(paths, e);
	}
	json_object_object_add(ev, "paths", paths);
	json_object_object_add(ev, "iopolicy", c->d->iopolicy ? json_object_new_string(c->d->iopolicy) : NULL);
	return add(
		f, "paths-on-different-nodes", NS_SEV_INFO, c->d->name, ev,
		ns_fmt("%s is reached through controllers on different nodes and its subsystem's iopolicy is %s, not "
		       "numa.",
		       c->d->name, c->d->iopolicy ? c->d->iopolicy : "unknown"),
		ns_fmt("Set the subsystem's iopolicy to numa (/sys/class/nvme-subsystem/*/iopolicy) so each node "
		       "uses its local path."));
}

/* A path serving a node off its controller's node, while another path's controller is on it. */
struct remote_serve {
	int node;
	const struct ns_path *path, *local;
};

/*
 * path-remote-while-local: a node is served by a path whose controller is on another node while
 * a path whose controller is on that node exists. Which path serves which node is the model's
 * (lib/model/mpath): the kernel's numa_nodes (a warning: the kernel says I/O from that node
 * crosses the interconnect) or, without them, the kernel's choice redone from the controllers'
 * nodes and ANA states (info, "inferred": a local path that is not optimized while a remote one
 * is). One cause, one alarm: a path serving every node because the iopolicy is round-robin or
 * queue-depth (basis "iopolicy") is paths-on-different-nodes' cause, which that rule reports;
 * those paths are not judged here.
 */
static int rule_remote_path(struct ns_findings *f, struct disk_ctx *c)
{
	const struct ns_disk *d = c->d;
	struct remote_serve hit[64];
	size_t nhit = 0;
	bool kernel = false;
	struct json_object *ev, *arr;

	if (d->kind != NS_DISK_NVME_MULTIPATH || d->npaths < 2)
		return 0;
	for (size_t i = 0; i < d->npaths && nhit < 64; i++) {
		const struct ns_path *p = &d->paths[i];
		int pn = ns_mpath_path_node(p);
		if (!p->serves_source || pn < 0)
			continue;
		if (strcmp(p->serves_source, "iopolicy") == 0)
			continue; /* folded into paths-on-different-nodes: the same cause */
		ns_cpuset_foreach (node, &p->serves_nodes) {
			const struct ns_path *local = NULL;
			if (node == pn)
				continue;
			for (size_t j = 0; j < d->npaths && !local; j++)
				if (j != i && ns_mpath_path_node(&d->paths[j]) == node)
					local = &d->paths[j];
			if (!local || nhit == 64)
				continue;
			hit[nhit++] = (struct remote_serve){.node = node, .path = p, .local = local};
			kernel = kernel || strcmp(p->serves_source, "kernel") == 0;
		}
	}
	if (!nhit)
		return 0;
	ev = json_object_new_object();
	arr = json_object_new_array();
	for (size_t k = 0; k < nhit; k++) {
		struct json_object *e = json_object_new_object();
		const struct ns_path *p = hit[k].path, *l = hit[k].local;
		json_object_object_add(e, "node", json_object_new_int(hit[k].node));
		json_object_object_add(e, "path", p->controller ? json_object_new_string(p->controller) : NULL);
		json_object_object_add(e, "path_node", json_object_new_int(ns_mpath_path_node(p)));
		json_object_object_add(e, "basis", json_object_new_string(p->serves_source));
		json_object_object_add(e, "local_path", l->controller ? json_object_new_string(l->controller) : NULL);
		json_object_object_add(e, "local_ana_state",
				       l->ana_state_state == NS_ATTR_READ ? json_object_new_string(l->ana_state)
									  : NULL);
		json_object_array_add(arr, e);
	}
	json_object_object_add(ev, "served", arr);
	json_object_object_add(ev, "iopolicy", d->iopolicy ? json_object_new_string(d->iopolicy) : NULL);
	const struct remote_serve *h = &hit[0];
	const char *state = h->local->ana_state_state == NS_ATTR_READ ? h->local->ana_state : NULL;
	return add(f, "path-remote-while-local", kernel ? NS_SEV_WARNING : NS_SEV_INFO, d->name, ev,
		   ns_fmt("%s: node %d is served by path %s (controller on node %d) while path %s's controller is on "
			  "node %d%s%s: %s.",
			  d->name, h->node, h->path->controller ? h->path->controller : "?",
			  ns_mpath_path_node(h->path), h->local->controller ? h->local->controller : "?", h->node,
			  state ? ", its ANA state " : "", state ? state : "",
			  strcmp(h->path->serves_source, "kernel") == 0
				  ? "the kernel's numa_nodes say so"
				  : "inferred from the paths' nodes and ANA states (this kernel has no numa_nodes)"),
		   ns_fmt("Find out why the local path is not used: its ANA state and its controller's state "
			  "(/sys/block/*/ana_state, /sys/class/nvme/*/state); the array decides ANA states."));
}

/*
 * md/dm whose leaf members sit on different nodes: every request of a mirror (each write, and
 * reads md balances without regard to nodes) or of a striped/linear set crosses the
 * interconnect for some member, whatever CPU submits it. A warning, not critical: a mirror may
 * span sockets on purpose, to survive a controller's or a socket's loss.
 */
static int rule_stacked(struct ns_findings *f, const struct ns_disk *d)
{
	struct json_object *ev, *members, *nodes;
	struct ns_cpuset seen = {0};
	char *list = NULL;

	if (d->node_source != NS_NODE_SRC_MEMBERS_DISAGREE)
		return 0;
	ev = json_object_new_object();
	members = json_object_new_array();
	seen.known = true;
	for (size_t i = 0; i < d->nmembers; i++) {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "name", json_object_new_string(d->members[i].name));
		json_object_object_add(e, "node",
				       d->members[i].node >= 0 ? json_object_new_int(d->members[i].node) : NULL);
		json_object_array_add(members, e);
		if (d->members[i].node >= 0 && ns_cpuset_set(&seen, (unsigned)d->members[i].node) < 0) {
			json_object_put(members);
			json_object_put(ev);
			return -ENOMEM;
		}
	}
	nodes = json_object_new_array();
	ns_cpuset_foreach (n, &seen)
		json_object_array_add(nodes, json_object_new_int(n));
	json_object_object_add(ev, "members", members);
	json_object_object_add(ev, "nodes", nodes);
	(void)ns_cpuset_format(&seen, &list);
	ns_cpuset_clear(&seen);
	int r = add(f, "stacked-cross-node", NS_SEV_WARNING, d->name, ev,
		    ns_fmt("%s's members sit on different nodes (%s): some of its I/O crosses the interconnect "
			   "whichever CPU submits it.",
			   d->name, list ? list : "?"),
		    ns_fmt("Build %s from members on one node, and run its workload there; if it spans nodes on "
			   "purpose (to survive a controller's or a socket's loss), this is the price.",
			   d->name));
	free(list);
	return r;
}

/*
 * node-cpus-overlap: nodes whose CPU lists claim the same CPUs (a firmware bug in the ACPI SRAT).
 * The kernel's node map is then wrong for them, and which node is right cannot be told: a
 * warning, with the devices whose node is one of them (their node_reliable is false).
 */
static int rule_nodes_overlap(const struct ns_system *sys, struct ns_findings *f)
{
	const struct ns_machine *m = &sys->machine;
	struct json_object *ev, *devs;
	char *nodes, *cpus = NULL;
	int r;

	if (ns_cpuset_count(&m->overlapping_nodes) == 0)
		return 0;
	ev = json_object_new_object();
	json_object_object_add(ev, "nodes", nodes_json(&m->overlapping_nodes));
	json_object_object_add(ev, "cpus", ns_cpuset_json(&m->overlapping_cpus));
	devs = json_object_new_array();
	for (size_t i = 0; i < sys->ndisks; i++)
		if (ns_machine_node_overlaps(m, sys->disks[i].node))
			json_object_array_add(devs, json_object_new_string(sys->disks[i].name));
	json_object_object_add(ev, "devices", devs);
	nodes = nodes_text(&m->overlapping_nodes);
	ns_cpuset_format(&m->overlapping_cpus, &cpus);
	r = add(f, "node-cpus-overlap", NS_SEV_WARNING, NULL, ev,
		ns_fmt("Nodes %s claim the same CPUs (%s): the firmware describes the machine's NUMA layout "
		       "inconsistently, so which node these CPUs, and the devices on these nodes, are local to is "
		       "unknown.",
		       nodes ? nodes : "?", cpus ? cpus : "?"),
		ns_fmt("Update the system firmware (BIOS/UEFI) or report the bug to its vendor: its ACPI SRAT "
		       "gives the same CPUs to several proximity domains. numastor cannot tell which node is right; "
		       "until the firmware is fixed, the node of a device on these nodes is not a basis for "
		       "placement (findings about it are never critical)."));
	free(nodes);
	free(cpus);
	return r;
}

/*
 * CPU isolation (lib/read/isolation.h). Operators isolate CPUs so that nothing but their task runs
 * there: a device interrupt on an isolated CPU is the failure they isolate to avoid. Each vector
 * is judged once, on the first disk that names it (an HBA's vector serves all its disks: one
 * cause, one alarm).
 */
struct iso_seen {
	int *irqs;
	size_t n;
};

static bool iso_seen(struct iso_seen *seen, int irq)
{
	int *nv;

	for (size_t i = 0; i < seen->n; i++)
		if (seen->irqs[i] == irq)
			return true;
	nv = realloc(seen->irqs, (seen->n + 1) * sizeof(*nv));
	if (nv) {
		seen->irqs = nv;
		seen->irqs[seen->n++] = irq;
	}
	return false;
}

static bool iso_active(const struct ns_isolation *iso)
{
	return iso->cpus.known && ns_cpuset_count(&iso->cpus) > 0;
}

/* Do the online CPUs of the queue lie on isolated CPUs only? */
static bool queue_isolated_only(const struct ns_isolation *iso, const struct ns_hctx *h)
{
	return h->online.known && ns_cpuset_count(&h->online) > 0 && ns_cpuset_subset(&h->online, &iso->cpus);
}

/* A hardware queue served only by isolated CPUs: I/O submitted there completes there. */
static int rule_isolated_queue(struct ns_findings *f, const struct ns_system *sys, const struct ns_disk *d)
{
	const struct ns_isolation *iso = &sys->machine.isolation;
	struct json_object *queues = json_object_new_array(), *irqs = json_object_new_array(), *ev;
	struct ns_cpuset cpus = {0};
	size_t n = 0;
	unsigned long long fired = 0;
	char *txt = NULL, *idx = NULL;
	size_t idxlen = 0;
	FILE *im = open_memstream(&idx, &idxlen);
	int r;

	for (size_t i = 0; i < d->nhctx; i++) {
		const struct ns_hctx *h = &d->hctx[i];
		if (!queue_isolated_only(iso, h))
			continue;
		json_object_array_add(queues, json_object_new_int(h->index));
		if (im)
			fprintf(im, "%s%d", n ? ", " : "", h->index);
		if (h->irq) {
			json_object_array_add(irqs, json_object_new_int(h->irq->irq));
			fired += h->irq->on_isolated;
		}
		ns_cpuset_or(&cpus, &h->online);
		n++;
	}
	if (im)
		fclose(im);
	cpus.known = true;
	if (!n) {
		json_object_put(queues);
		json_object_put(irqs);
		free(idx);
		return 0;
	}
	ns_cpuset_format(&cpus, &txt);
	ev = json_object_new_object();
	json_object_object_add(ev, "hw_queues", queues);
	json_object_object_add(ev, "cpus", ns_cpuset_json(&cpus));
	json_object_object_add(ev, "irqs", irqs);
	json_object_object_add(ev, "fired_on_isolated", json_object_new_int64((int64_t)fired));
	r = add(f, "isolated-queue", fired ? NS_SEV_WARNING : NS_SEV_INFO, d->name, ev,
		ns_fmt("Hardware queue%s %s of %s serve%s only isolated CPUs (%s): I/O submitted there completes "
		       "there, and %s on an isolated CPU%s.",
		       n > 1 ? "s" : "", idx ? idx : "?", d->name, n > 1 ? "" : "s", txt ? txt : "?",
		       fired ? "the interrupts have fired there" : "the interrupts fire", fired ? " since boot" : ""),
		ns_fmt("Keep the isolated CPUs' tasks from submitting I/O to %s (a housekeeping thread can do it for "
		       "them), or isolate fewer CPUs: blk-mq maps every possible CPU to a queue, and a managed "
		       "vector whose queue has no housekeeping CPU stays on an isolated one even with "
		       "isolcpus=managed_irq.",
		       d->name));
	free(txt);
	free(idx);
	ns_cpuset_clear(&cpus);
	return r;
}

/*
 * Vectors whose effective affinity includes an isolated CPU, outside the queues served only by
 * isolated CPUs (rule_isolated_queue speaks for those). kernel: those user space may not move
 * (isolated-managed-irq), else those it may or whose managed-ness is unknown (isolated-movable-irq).
 */
static int rule_isolated_irqs(struct ns_findings *f, const struct ns_system *sys, const struct ns_disk *d,
			      struct iso_seen *seen, bool kernel)
{
	const struct ns_isolation *iso = &sys->machine.isolation;
	struct json_object *irqs = json_object_new_array(), *ev;
	struct ns_cpuset on = {0}, one = {0};
	struct vec_counts vc = {0};
	unsigned long long fired = 0;
	bool boot_cpu = false, asked_managed = true;
	size_t n = 0;
	char *cpus = NULL;
	int r;

	for (size_t p = 0; p < d->npaths; p++) {
		const struct ns_pci *pci = d->paths[p].fabric ? NULL : d->paths[p].pci;
		for (size_t k = 0; pci && k < pci->nirqs; k++) {
			const struct ns_irq *irq = &pci->irqs[k];
			const struct ns_hctx *h = ns_disk_queue_of(d, irq);
			enum vec_class cls = vector_class(irq);
			const struct ns_cpuset *t = ns_irq_target(irq);
			if ((cls == VEC_KERNEL || cls == VEC_UNSETTABLE) != kernel)
				continue;
			if (!t->known || !ns_cpuset_intersects(t, &iso->cpus))
				continue;
			if (h && (queue_isolated_only(iso, h) || !ns_hctx_serves_online(h)))
				continue;
			if (iso_seen(seen, irq->irq))
				continue;
			ns_cpuset_and(&one, t, &iso->cpus);
			ns_cpuset_foreach (c, &one) {
				/* isolated at boot (command line, cpu/isolated, cpu/nohz_full), not only by a
				 * cgroup partition made later: counts since boot are then its own */
				if (!iso->cgroup.known || !ns_cpuset_test(&iso->cgroup, (unsigned)c) ||
				    ns_cpuset_test(&sys->machine.isolated, (unsigned)c) ||
				    ns_cpuset_test(&sys->machine.nohz_full, (unsigned)c) ||
				    ns_cpuset_test(&iso->isolcpus, (unsigned)c))
					boot_cpu = true;
				if (!ns_cpuset_test(&iso->managed_irq, (unsigned)c))
					asked_managed = false;
			}
			ns_cpuset_or(&on, &one);
			fired += irq->on_isolated;
			count_vector(&vc, sys, d, irq);
			json_object_array_add(irqs, json_object_new_int(irq->irq));
			n++;
		}
	}
	ns_cpuset_clear(&one);
	on.known = true;
	if (!n) {
		json_object_put(irqs);
		ns_cpuset_clear(&on);
		return 0;
	}
	ns_cpuset_format(&on, &cpus);
	ev = json_object_new_object();
	json_object_object_add(ev, "irqs", irqs);
	json_object_object_add(ev, "cpus", ns_cpuset_json(&on));
	json_object_object_add(ev, "fired_on_isolated", json_object_new_int64((int64_t)fired));
	{
		bool many = n > 1, cpus_many = ns_cpuset_count(&on) > 1;
		char *all = NULL; /* every isolated CPU: what isolcpus= would list */
		ns_cpuset_format(&iso->cpus, &all);
		char *what = ns_fmt("%zu vector%s of %s that user space may %s sit%s on isolated CPU%s %s", n,
				    many ? "s" : "", d->name, kernel ? "not move" : "move", many ? "" : "s",
				    cpus_many ? "s" : "", cpus ? cpus : "?");
		char *how = fired ? ns_fmt(", where %s fired %llu times since boot", many ? "they" : "it", fired)
				  : ns_fmt(" (%s not fired there yet)", many ? "they have" : "it has");
		if (kernel)
			/* the kernel placed them: with managed_irq it avoids isolated CPUs whenever the
			 * vector's mask holds a housekeeping one, so the cause is that it was not asked to */
			r = add(f, "isolated-managed-irq", fired && boot_cpu ? NS_SEV_CRITICAL : NS_SEV_WARNING,
				d->name, ev,
				ns_fmt("%s%s although %s queue%s also serve%s housekeeping CPUs: %s", what ? what : "",
				       how ? how : "", many ? "their" : "its", many ? "s" : "", many ? "" : "s",
				       asked_managed ? "the kernel was asked to keep managed interrupts off them "
						       "(isolcpus=managed_irq) but placed them while the housekeeping "
						       "CPUs of "
						       "their mask were offline."
						     : "the kernel was not asked to keep managed interrupts off them "
						       "(isolcpus=managed_irq covers none or not all of them)."),
				asked_managed
					? ns_fmt("Bring the housekeeping CPUs online and reset the controller (or "
						 "reload "
						 "its driver) so the kernel places the vectors again.")
					: ns_fmt("Add managed_irq to isolcpus= (isolcpus=managed_irq,domain,%s) and "
						 "reboot: the kernel then keeps managed vectors on the housekeeping "
						 "CPUs "
						 "of their mask. CPUs isolated only by a cgroup partition or "
						 "nohz_full= "
						 "get no such protection.",
						 all ? all : "LIST"));
		if (kernel && r >= 0)
			set_form(f, asked_managed ? "managed-irq-asked" : "managed-irq-not-asked");
		if (!kernel)
			r = add(f, "isolated-movable-irq", fired && boot_cpu ? NS_SEV_CRITICAL : NS_SEV_WARNING,
				d->name, ev,
				ns_fmt("%s (placed there by the administrator, irqbalance or the kernel's default)%s.",
				       what ? what : "", how ? how : ""),
				all_movable(&vc)
					? ns_fmt("Move them to housekeeping CPUs of the device's node%s.",
						 irqbalance_unruly(sys) ? ", and keep irqbalance from moving them back"
									: "")
					: not_movable_text(&vc, "set their affinity to housekeeping CPUs by hand."));
		if (!kernel && r >= 0 && all_movable(&vc) && (r = step_fix(f)) >= 0)
			r = step_policy(f, sys);
		free(what);
		free(how);
		free(all);
	}
	free(cpus);
	ns_cpuset_clear(&on);
	vec_counts_free(&vc);
	return r;
}

/*
 * isolcpus=io_queue (Daniel Wagner's series, where a kernel carries it): blk-mq makes no more
 * queues than housekeeping CPUs. Said, so that the queue count is not taken for a fault.
 */
static int rule_queues_housekeeping(struct ns_findings *f, const struct ns_system *sys, const struct ns_disk *d)
{
	const struct ns_machine *m = &sys->machine;
	const struct ns_isolation *iso = &m->isolation;
	unsigned online = ns_cpuset_count(&m->online), hk = ns_cpuset_count(&iso->housekeeping);
	struct json_object *ev;

	if (!(iso->isolcpus_flags & NS_ISO_IO_QUEUE) || !iso->housekeeping.known || !m->online.known || !d->nhctx ||
	    d->npaths > 1 || d->nhctx >= online || d->nhctx > hk)
		return 0;
	ev = json_object_new_object();
	json_object_object_add(ev, "hw_queues", json_object_new_int64((int64_t)d->nhctx));
	json_object_object_add(ev, "online_cpus", json_object_new_int64(online));
	json_object_object_add(ev, "housekeeping_cpus", ns_cpuset_json(&iso->housekeeping));
	return add(f, "queues-sized-to-housekeeping", NS_SEV_INFO, d->name, ev,
		   ns_fmt("%s has %zu hardware queues for %u online CPUs: isolcpus=io_queue made the kernel size them "
			  "to the %u housekeeping CPUs, so the isolated CPUs submit through queues whose "
			  "interrupts stay on housekeeping CPUs.",
			  d->name, d->nhctx, online, hk),
		   ns_fmt("Nothing to do: this is what io_queue asks for. Without it each CPU gets a queue of its "
			  "own and queues of isolated CPUs interrupt them (a reboot)."));
}

static int isolation_rules(struct ns_findings *f, const struct ns_system *sys, const struct ns_disk *d,
			   struct iso_seen *seen)
{
	int r;

	if (!iso_active(&sys->machine.isolation) || ns_disk_is_virtual(d))
		return rule_queues_housekeeping(f, sys, d);
	if ((r = rule_isolated_queue(f, sys, d)) < 0 || (r = rule_isolated_irqs(f, sys, d, seen, false)) < 0 ||
	    (r = rule_isolated_irqs(f, sys, d, seen, true)) < 0)
		return r;
	return rule_queues_housekeeping(f, sys, d);
}

/*
 * A status must not say OK about what it could not read. A disk whose node is unknown because
 * an input did not parse (its function's numa_node) or left the verdict untold (whether a
 * driver forced the node: an unreadable root bus or node CPU list) could not be judged: no rule
 * can say whether it sits where it should. A real -1 (the firmware gives no node) is a fact,
 * and judged (node-unknown).
 */
static int judge_readable(struct ns_findings *f, const struct ns_system *sys, const struct ns_disk *d)
{
	struct ns_unjudged *nv;
	char *why = NULL;

	if (d->node_source != NS_NODE_SRC_UNKNOWN || !ns_machine_multi_node(&sys->machine))
		return 0;
	for (size_t i = 0; i < d->npaths && !why; i++) {
		const struct ns_pci *pci = d->paths[i].pci;
		bool bus_unread = false;
		if (!pci)
			continue;
		bus_unread = pci->bus_node == NS_NODE_UNREAD;
		for (size_t k = 0; k < pci->nbridges; k++)
			bus_unread |= pci->bridge_nodes[k] == NS_NODE_UNREAD;
		if (pci->numa_node == NS_NODE_UNREAD)
			why = ns_fmt("PCI %s's numa_node could not be read (see the notes): its node is unknown",
				     pci->address);
		/* an untold verdict for want of a reading; Hyper-V's "cannot tell which" is the
		 * machine's own answer, judged (it reads every input) */
		else if (pci->forced < 0 && pci->facts.multi_node && pci->numa_node >= 0 && bus_unread)
			why = ns_fmt("PCI %s reads node %d, but whether a driver forced it is unknown: %s",
				     pci->address, pci->numa_node,
				     pci->forced_evidence ? pci->forced_evidence
							  : "what it rests on could not be read");
		else
			continue;
		if (!why)
			return -ENOMEM;
	}
	if (!why)
		return 0;
	nv = realloc(f->unjudged, (f->nunjudged + 1) * sizeof(*nv));
	if (!nv || !(nv[f->nunjudged].device = strdup(d->name))) {
		if (nv)
			f->unjudged = nv;
		free(why);
		return -ENOMEM;
	}
	f->unjudged = nv;
	nv[f->nunjudged++].reason = why;
	return 0;
}

static int evaluate_rules(const struct ns_system *sys, struct ns_findings *out)
{
	bool scsi_patched = sys->scsi_mod && sys->scsi_mod->patched == 1;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = rule_nodes_overlap(sys, out)) < 0)
		return r;
	/* isolation is judged on any machine, one node or many */
	{
		struct iso_seen seen = {0};
		for (size_t i = 0; i < sys->ndisks && r >= 0; i++)
			r = isolation_rules(out, sys, &sys->disks[i], &seen);
		free(seen.irqs);
		if (r < 0)
			return r;
	}
	if (!ns_machine_multi_node(&sys->machine)) {
		struct json_object *ev = json_object_new_object();
		json_object_object_add(ev, "nodes", json_object_new_int((int)sys->machine.nnodes));
		return add(
			out, "single-node", NS_SEV_INFO, NULL, ev,
			sys->machine.numa_support == 0
				? ns_fmt("This kernel has no NUMA support (no node/ in sysfs): one node holds "
					 "every CPU, and device and interrupt locality is moot.")
				: ns_fmt("This machine has a single NUMA node: device and interrupt locality is moot."),
			ns_fmt("Nothing to do."));
	}
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		const struct ns_irq *qv[4096];
		struct disk_ctx c = {.sys = sys, .d = d, .qv = qv};
		size_t from = out->n;

		if ((r = rule_stacked(out, d)) < 0)
			return r;
		if (ns_disk_is_virtual(d))
			continue;
		if ((r = judge_readable(out, sys, d)) < 0)
			return r;
		c.nqv = queue_vectors(d, qv, sizeof(qv) / sizeof(qv[0]));
		for (size_t k = 0; k < c.nqv; k++)
			count_vector(&c.vc, sys, d, qv[k]);
		if ((r = rule_node_set(out, &c)) < 0) {
			vec_counts_free(&c.vc);
			return r;
		}
		if ((r = rule_forced(out, &c)) < 0 || (r = rule_unknown(out, &c)) < 0 ||
		    (r = rule_confined(out, &c)) < 0 || (r = rule_fires_remote(out, &c)) < 0 ||
		    (r = rule_mismatch(out, &c)) < 0 || (r = rule_all_nodes(out, &c)) < 0 ||
		    (r = rule_alloc(out, &c, scsi_patched)) < 0 || (r = rule_host_alloc(out, &c)) < 0 ||
		    (r = rule_rq_affinity(out, &c)) < 0 || (r = rule_irqbalance(out, &c)) < 0 ||
		    (r = rule_paths(out, &c)) < 0 || (r = rule_remote_path(out, &c)) < 0) {
			vec_counts_free(&c.vc);
			return r;
		}
		vec_counts_free(&c.vc);
		fold_effects(out, from);
	}
	return 0;
}

static int cmp_position(const void *pa, const void *pb, void *data)
{
	const struct ns_finding *v = data;
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	const struct ns_finding *a = &v[ia], *b = &v[ib];
	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	if ((a->caused_by != NULL) != (b->caused_by != NULL))
		return a->caused_by ? 1 : -1;
	return (ia > ib) - (ia < ib);
}

/* Worst first, causes before their effects, and otherwise as the rules found them (the
 * device's order): every reader lists them in this order. */
static int sort_findings(struct ns_findings *f)
{
	struct ns_finding *tmp;
	size_t *order;

	if (f->n < 2)
		return 0;
	/* a stable sort: qsort over (severity, role, position) */
	order = malloc(f->n * sizeof(*order));
	tmp = malloc(f->n * sizeof(*tmp));
	if (!order || !tmp) {
		free(order);
		free(tmp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->n; i++)
		order[i] = i;
	qsort_r(order, f->n, sizeof(*order), cmp_position, f->v);
	for (size_t i = 0; i < f->n; i++)
		tmp[i] = f->v[order[i]];
	memcpy(f->v, tmp, f->n * sizeof(*tmp));
	free(tmp);
	free(order);
	return 0;
}

int ns_findings_evaluate(const struct ns_system *sys, struct ns_findings *out)
{
	int r = evaluate_rules(sys, out);
	return r < 0 ? r : sort_findings(out);
}

void ns_findings_free(struct ns_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].device);
		free(f->v[i].message);
		free(f->v[i].remedy_text);
		for (size_t k = 0; k < f->v[i].nsteps; k++)
			free(f->v[i].steps[k].changes);
		json_object_put(f->v[i].evidence);
	}
	free(f->v);
	for (size_t i = 0; i < f->nunjudged; i++) {
		free(f->unjudged[i].device);
		free(f->unjudged[i].reason);
	}
	free(f->unjudged);
	memset(f, 0, sizeof(*f));
}

size_t ns_findings_count(const struct ns_findings *f, enum ns_severity s)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += f->v[i].severity == s && !f->v[i].caused_by;
	return n;
}

size_t ns_findings_count_effects(const struct ns_findings *f)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += f->v[i].caused_by != NULL;
	return n;
}

size_t ns_findings_cause_ids(const struct ns_findings *f, enum ns_severity s, const char **ids, size_t cap)
{
	size_t n = 0;
	/* the rules' ids are a few dozen: each one's first appearance by a linear look at the
	 * earlier findings of the table's kinds, not at every finding */
	for (size_t k = 0; k < ns_nfinding_kinds; k++)
		for (size_t i = 0; i < f->n; i++) {
			const struct ns_finding *x = &f->v[i];
			if (x->severity == s && !x->caused_by && strcmp(x->id, ns_finding_kinds[k].id) == 0) {
				if (n < cap)
					ids[n] = x->id;
				n++;
				break;
			}
		}
	return n;
}

int ns_findings_exit_code(const struct ns_findings *f)
{
	if (ns_findings_count(f, NS_SEV_CRITICAL))
		return 2;
	if (ns_findings_count(f, NS_SEV_WARNING))
		return 1;
	return f->nunjudged ? 3 : 0;
}
