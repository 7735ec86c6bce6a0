/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numastor fix: the IRQ placement's plan and results as a report at the terminal's width
 * (cmd/textwrap.h): a header saying what changes, where it is journaled and how to undo it;
 * then per device its finding cause once and its vectors grouped by what happens to them (one
 * line per vector with --verbose), a skip's reason said once per reason.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/util.h"
#include "config.h"
#include "fix.h"
#include "state/journal.h"
#include "textwrap.h"

struct pt {
	struct fix_page fp;
	const struct ns_system *sys;
	const struct ns_plan *plan;
	const struct fix_opts *o;
	const struct ns_apply_result *ir, *rr;
	char **said; /* the reasons' shapes said already: each is said once in the plan */
	size_t nsaid;
};

/* A line (or paragraph) wrapped at ind1, continued at ind2, in colour c (NULL: none). */
static void say(const struct pt *p, size_t ind1, size_t ind2, const char *c, const char *text)
{
	fix_say(&p->fp, ind1, ind2, c, text);
}

static bool failed_irq(const struct pt *p, size_t i)
{
	return p->ir && p->ir[i].status == NS_APPLY_FAILED;
}

/* Do vectors i and j fare alike: the same action (and result, and error), by reasons of one shape? */
static bool alike(const struct pt *p, size_t i, size_t j)
{
	const struct ns_plan_irq *a = &p->plan->irqs[i], *b = &p->plan->irqs[j];
	bool same;

	if (a->action != b->action || (a->hw_queue >= 0) != (b->hw_queue >= 0))
		return false;
	if (p->ir && (p->ir[i].status != p->ir[j].status || p->ir[i].err != p->ir[j].err))
		return false;
	if (a->action == NS_PLAN_SKIP) /* a skip's reason is said once, as it is */
		return strcmp(a->reason, b->reason) == 0;
	char *x = fix_shape(a->reason), *y = fix_shape(b->reason);
	same = x && y && strcmp(x, y) == 0;
	free(x);
	free(y);
	return same;
}

/* "node 0", "nodes 0-1" of the CPUs of s; NULL when unknown. */
static char *nodes_text(const struct pt *p, const struct ns_cpuset *s)
{
	struct ns_cpuset nodes = {0};
	char *t = NULL, *out = NULL;

	if (ns_machine_nodes_of(&p->sys->machine, s, &nodes) == 0 && ns_cpuset_count(&nodes) &&
	    ns_cpuset_format(&nodes, &t) == 0)
		out = ns_fmt("node%s %s", ns_cpuset_count(&nodes) > 1 ? "s" : "", t);
	free(t);
	ns_cpuset_clear(&nodes);
	return out;
}

static const char *action_color(const struct pt *p, size_t i)
{
	enum ns_plan_action a = p->plan->irqs[i].action;
	return failed_irq(p, i) ? FIX_RED : a == NS_PLAN_MOVE ? FIX_YELLOW : a == NS_PLAN_SKIP ? FIX_DIM : NULL;
}

/* What the write did, for the results: ", applied", ", failed (class: error)"... */
static void result_text(FILE *f, const struct pt *p, size_t i)
{
	const struct ns_apply_result *r = &p->ir[i];

	fprintf(f, ", %s", ns_apply_status_name(r->status));
	if (r->err)
		fprintf(f, " (%s: %s)", r->err_class ? r->err_class : "?", strerror(-r->err));
}

/* One vector on a line of its own (--verbose, and a failure under --quiet), its reason under it. */
static void vector_line(const struct pt *p, size_t i)
{
	const struct ns_plan_irq *e = &p->plan->irqs[i];
	char *cur = fix_cpus_text(&e->current), *tgt = fix_cpus_text(&e->target), *line = NULL, q[32] = "";
	char *name = ns_escape_text(e->name ? e->name : "?"), *dev = ns_escape_text(e->device),
	     *why = ns_escape_text(e->reason);
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);

	if (f) {
		if (e->hw_queue >= 0)
			snprintf(q, sizeof(q), " hctx %d", e->hw_queue);
		/* its affinity (smp_affinity_list) and, unless skipped, the one it gets */
		/* what becomes of it (and, with the results, what the write did), then its affinity
		 * (smp_affinity_list) and, unless skipped, the one it gets */
		fprintf(f, "irq %d %s (%s%s) %s", e->irq, name ? name : "?", dev ? dev : "?", q,
			ns_plan_action_name(e->action));
		if (p->ir)
			result_text(f, p, i);
		fprintf(f, ": affinity %s%s%s", cur, e->action == NS_PLAN_SKIP ? "" : " -> ",
			e->action == NS_PLAN_SKIP ? "" : tgt);
		if (p->ir && p->ir[i].status == NS_APPLY_EFFECTIVE_DIFFERS) {
			char *eff = fix_cpus_text(&p->ir[i].after_effective);
			fprintf(f,
				" (effective still %s: without interrupt remapping the kernel moves it at its next "
				"interrupt)",
				eff);
			free(eff);
		}
		fclose(f);
		say(p, 4, 6, action_color(p, i), line);
		say(p, 8, 8, NULL, why);
	}
	free(line);
	free(cur);
	free(tgt);
	free(name);
	free(dev);
	free(why);
}

/* Is this the first time a reason of this shape is said in the plan? (Then it is said.) */
static bool first_said(struct pt *p, const char *reason)
{
	char *sh = fix_shape(reason), **v;

	if (!sh)
		return true;
	for (size_t i = 0; i < p->nsaid; i++)
		if (strcmp(p->said[i], sh) == 0) {
			free(sh);
			return false;
		}
	v = realloc(p->said, (p->nsaid + 1) * sizeof(*v));
	if (!v) {
		free(sh);
		return true;
	}
	p->said = v;
	p->said[p->nsaid++] = sh;
	return true;
}

/* The vectors idx[0..n) (alike) on one line: their IRQs as ranges, where they are and go, and
 * the reason once (a queue's own for each: one as an example). */
static void group_line(struct pt *p, const size_t *idx, size_t n)
{
	const struct ns_plan_irq *e0 = &p->plan->irqs[idx[0]];
	int *irqs = calloc(n, sizeof(int));
	struct ns_cpuset cur = {0}, tgt = {0};
	bool same_cur = true, same_tgt = true, same_why = true, queues = e0->hw_queue >= 0;
	char *line = NULL, *ir = NULL, *ct = NULL, *tt = NULL, *nt = NULL, *why = NULL;
	size_t len = 0;
	FILE *f;

	if (!irqs)
		goto out;
	for (size_t k = 0; k < n; k++) {
		const struct ns_plan_irq *e = &p->plan->irqs[idx[k]];
		irqs[k] = e->irq;
		ns_cpuset_or(&cur, &e->current);
		ns_cpuset_or(&tgt, &e->target);
		same_cur &= e->current.known && ns_cpuset_equal(&e->current, &e0->current);
		same_tgt &= ns_cpuset_equal(&e->target, &e0->target);
		same_why &= strcmp(e->reason, e0->reason) == 0;
	}
	cur.known = e0->current.known;
	tgt.known = e0->target.known;
	ir = fix_ranges(irqs, n);
	ct = fix_cpus_text(&cur);
	tt = fix_cpus_text(&tgt);
	nt = nodes_text(p, &tgt);
	f = open_memstream(&line, &len);
	if (!f)
		goto out;
	if (n == 1) {
		char *name = ns_escape_text(e0->name ? e0->name : "?");
		fprintf(f, "irq %s %s", ir ? ir : "?", name ? name : "?");
		if (queues)
			fprintf(f, " (hctx %d)", e0->hw_queue);
		free(name);
	} else {
		fprintf(f, "irq %s (%zu vectors)", ir ? ir : "?", n);
	}
	fprintf(f, " %s", ns_plan_action_name(e0->action));
	if (p->ir)
		result_text(f, p, idx[0]);
	/* where they are, when all are in one place (--verbose says each one's), and where they go */
	if (same_cur)
		fprintf(f, ": affinity %s%s", ct, e0->action == NS_PLAN_SKIP ? "" : " ->");
	else if (e0->action != NS_PLAN_SKIP)
		fputs(e0->action == NS_PLAN_MOVE ? " to" : ", already on", f);
	if (e0->action != NS_PLAN_SKIP) {
		if (same_tgt)
			fprintf(f, " %s%s%s", tt, nt ? " on " : "", nt ? nt : "");
		else if (queues)
			fprintf(f, " their queues' CPUs%s%s", nt ? " on " : "", nt ? nt : "");
		else
			fprintf(f, " CPUs of %s (%s)", nt ? nt : "their nodes", tt);
	}
	if (p->ir && p->ir[idx[0]].status == NS_APPLY_EFFECTIVE_DIFFERS)
		fputs(" (the effective affinity follows at the next interrupt)", f);
	fclose(f);
	say(p, 4, 6, action_color(p, idx[0]), line);
	why = ns_escape_text(e0->reason);
	if (why && first_said(p, e0->reason)) {
		char *w = same_why ? NULL : ns_fmt("e.g. %s", why);
		say(p, 8, 8, NULL, w ? w : why);
		free(w);
	}
out:
	free(irqs);
	free(line);
	free(ir);
	free(ct);
	free(tt);
	free(nt);
	free(why);
	ns_cpuset_clear(&cur);
	ns_cpuset_clear(&tgt);
}

static void device_block(struct pt *p, const struct ns_findings *fs, const char *dev)
{
	const struct ns_plan *plan = p->plan;
	size_t *idx = calloc(plan->nirqs ? plan->nirqs : 1, sizeof(size_t)), n = 0;
	bool *done = calloc(plan->nirqs ? plan->nirqs : 1, sizeof(bool));
	const struct ns_plan_irq *first = NULL;
	bool any = false;

	if (!idx || !done)
		goto out;
	for (size_t i = 0; i < plan->nirqs; i++) {
		if (strcmp(plan->irqs[i].device, dev) != 0)
			continue;
		first = first ? first : &plan->irqs[i];
		any |= !p->o->quiet || failed_irq(p, i);
	}
	for (size_t i = 0; i < plan->nrqs; i++)
		if (strcmp(plan->rqs[i].device, dev) == 0)
			any |= !p->o->quiet || (p->rr && p->rr[i].status == NS_APPLY_FAILED);
	if (!any)
		goto out;
	{
		char *d = ns_escape_text(dev), *why = first ? fix_causes_text(fs, dev, first->answers) : NULL,
		     *pci = first ? ns_escape_text(first->pci) : NULL;
		char *head = why ? ns_fmt("%s%s%s%s: %s", d ? d : "?", pci ? " (PCI " : "", pci ? pci : "",
					  pci ? ")" : "", why)
				 : ns_fmt("%s:", d ? d : "?");
		say(p, 2, 6, NULL, head);
		free(head);
		free(d);
		free(why);
		free(pci);
	}
	for (size_t i = 0; i < plan->nirqs; i++) {
		if (done[i] || strcmp(plan->irqs[i].device, dev) != 0)
			continue;
		if (p->o->verbose || (p->o->quiet && failed_irq(p, i))) {
			vector_line(p, i);
			continue;
		}
		if (p->o->quiet)
			continue;
		n = 0;
		for (size_t j = i; j < plan->nirqs; j++)
			if (!done[j] && strcmp(plan->irqs[j].device, dev) == 0 && alike(p, i, j)) {
				idx[n++] = j;
				done[j] = true;
			}
		group_line(p, idx, n);
	}
	for (size_t i = 0; i < plan->nrqs; i++) {
		const struct ns_plan_rq *e = &plan->rqs[i];
		bool problem = p->rr && p->rr[i].status == NS_APPLY_FAILED;
		if (strcmp(e->device, dev) != 0 || (p->o->quiet && !problem))
			continue;
		char *line = ns_fmt("rq_affinity %s%s%s: %d -> %d", ns_plan_action_name(e->action), p->rr ? ", " : "",
				    p->rr ? ns_apply_status_name(p->rr[i].status) : "", e->current, e->target);
		say(p, 4, 6, problem ? FIX_RED : e->action == NS_PLAN_MOVE ? FIX_YELLOW : NULL, line);
		say(p, 8, 8, NULL, e->reason);
		free(line);
	}
out:
	free(idx);
	free(done);
}

/* What will change (or changed), where the previous values are kept and the undo, said first. */
static void header(const struct pt *p, size_t ndev)
{
	const struct ns_plan *plan = p->plan;
	size_t move = ns_plan_count(plan, NS_PLAN_MOVE), rq = 0, movedev = 0, failed = 0;
	const char *devs[ndev ? ndev : 1];
	char *t;

	for (size_t i = 0; i < plan->nrqs; i++)
		rq += plan->rqs[i].action == NS_PLAN_MOVE;
	for (size_t i = 0; i < plan->nirqs; i++)
		failed += failed_irq(p, i);
	for (size_t i = 0; i < plan->nirqs; i++) {
		if (plan->irqs[i].action != NS_PLAN_MOVE)
			continue;
		size_t k = 0;
		while (k < movedev && strcmp(devs[k], plan->irqs[i].device) != 0)
			k++;
		if (k == movedev && movedev < ndev)
			devs[movedev++] = plan->irqs[i].device;
	}
	char rqt[64] = "";
	if (rq)
		snprintf(rqt, sizeof(rqt), ", and set rq_affinity on %zu disk%s", rq, rq == 1 ? "" : "s");
	t = ns_fmt("%s %zu vector%s of %zu device%s%s; %zu skipped, %zu already in place",
		   p->o->dry_run ? "would move" : "moved", move, move == 1 ? "" : "s", movedev, movedev == 1 ? "" : "s",
		   rqt, ns_plan_count(plan, NS_PLAN_SKIP), ns_plan_count(plan, NS_PLAN_UNCHANGED));
	say(p, 2, 6, NULL, t);
	free(t);
	if (move || rq) {
		t = ns_fmt("journal: the previous values are%s written to /%s before the first write; undo: "
			   "numastor fix --revert",
			   p->o->dry_run ? " to be" : "", NS_JOURNAL_PATH);
		say(p, 2, 6, NULL, t);
		free(t);
	}
	if (failed) {
		t = ns_fmt("failed: %zu write%s (kept as it was; the journal holds the rest)", failed,
			   failed == 1 ? "" : "s");
		say(p, 2, 6, FIX_RED, t);
		free(t);
	}
}

void fix_plan_text(FILE *out, const struct ns_system *sys, const struct ns_findings *fs, const struct ns_plan *plan,
		   const struct fix_opts *o, const struct ns_apply_result *ir, const struct ns_apply_result *rr,
		   const struct ns_fix_ib *ibo)
{
	struct pt p = {.sys = sys, .plan = plan, .o = o, .ir = ir, .rr = rr};
	size_t n = plan->nirqs + plan->nrqs;
	const char **devs = calloc(n ? n : 1, sizeof(*devs));
	size_t ndev = devs ? fix_plan_devices(plan, devs) : 0;

	fix_page_init(&p.fp, out, o);

	if (!o->quiet) {
		char *t = ns_fmt("numastor fix: %s for %s",
				 o->dry_run ? "plan (dry run, nothing changed)" : "plan and results",
				 ns_root_dir(sys->root));
		say(&p, 0, 4, NULL, t);
		free(t);
		if (!n)
			say(&p, 2, 4, NULL, "nothing to do: no device has a finding about its interrupt placement");
		else
			header(&p, ndev);
	}
	for (size_t k = 0; k < ndev; k++)
		device_block(&p, fs, devs[k]);
	free(devs);
	for (size_t i = 0; i < p.nsaid; i++)
		free(p.said[i]);
	free(p.said);
	if (o->ib_policy && !o->quiet) {
		char *t = NULL;
		if (ibo->st.conflict)
			t = ns_fmt("irqbalance policy: %s: %s", o->dry_run ? "would be refused" : "refused",
				   ibo->st.conflict);
		else if (ibo->st.already)
			t = ns_fmt("irqbalance policy: numastor's policy script is given in %s already",
				   ibo->st.already);
		else if (ibo->result && strcmp(ibo->result, "failed") != 0)
			t = ns_fmt("irqbalance policy: %s /%s%s%s",
				   strcmp(ibo->result, "already") == 0 ? "already linked:" : "linked", NS_IBPOLICY_LINK,
				   ibo->reload ? "; " : "", ibo->reload ? ibo->reload : "");
		else if (o->dry_run)
			t = ns_fmt("irqbalance policy: would link /%s -> %s and restart irqbalance", NS_IBPOLICY_LINK,
				   NUMASTOR_IRQBALANCE_DROPIN);
		if (t)
			say(&p, 2, 6, NULL, t);
		free(t);
	}
	if (plan->irqbalance_advice && ibo->undoes && !o->quiet) { /* quiet: said once, on stderr (cmd_fix) */
		char *t = ns_fmt("irqbalance: %s", plan->irqbalance_advice);
		say(&p, 2, 6, NULL, t);
		free(t);
	}
	if (!o->quiet)
		fprintf(out, "summary: %zu to move, %zu skipped, %zu unchanged\n", ns_plan_count(plan, NS_PLAN_MOVE),
			ns_plan_count(plan, NS_PLAN_SKIP), ns_plan_count(plan, NS_PLAN_UNCHANGED));
}
