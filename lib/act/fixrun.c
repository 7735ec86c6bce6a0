/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor fix's engine (IRQs, queue settings, irqbalance's drop-in) and its revert: see fixrun.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act/fixrun.h"
#include "base/notes.h"
#include "base/testhook.h"
#include "read/machine.h"
#include "state/journal.h"

/* Test-only (lib/base/testhook.h): NUMASTOR_TEST_STOP_AFTER_WRITES=N dies right after the Nth write,
 * as a kill would. */
static void stop_after_writes(void *data, unsigned nwrites)
{
	unsigned limit = *(unsigned *)data;
	if (limit && nwrites >= limit) {
		fflush(stdout); /* what the front end said so far, as a kill would leave it */
		_exit(137);
	}
}

/* Test-only (lib/base/testhook.h): NUMASTOR_TEST_IRQ_WRITE_ERRNO=EIO|EPERM|EACCES makes every IRQ
 * affinity write fail so, as a kernel would: how the errno classes are shown without one. */
static int fake_irq_errno(void)
{
	const char *v = ns_test_hook("NUMASTOR_TEST_IRQ_WRITE_ERRNO");

	if (!v)
		return 0;
	return strcmp(v, "EIO") == 0 ? EIO : strcmp(v, "EPERM") == 0 ? EPERM : strcmp(v, "EACCES") == 0 ? EACCES : 0;
}

/* The apply options of a run, with the test-only kill hook (limit is where its N is kept). */
static struct ns_apply_opts apply_opts(unsigned retries, unsigned delay_ms, unsigned *limit)
{
	struct ns_apply_opts a = {
		.retries = retries, .retry_delay_ms = delay_ms, .after_write = stop_after_writes, .data = limit};
	const char *v = ns_test_hook("NUMASTOR_TEST_STOP_AFTER_WRITES");

	*limit = v ? (unsigned)strtoul(v, NULL, 10) : 0;
	return a;
}

int ns_fix_journal_check(struct ns_root *root, char **why)
{
	int r = ns_journal_check(root, NULL, why);

	if (r != -EINVAL) {
		free(*why);
		*why = NULL;
		return 0;
	}
	return -EINVAL;
}

/*
 * --irqbalance=policy, once the placement is journaled and written: link the drop-in (journaled
 * first), reload systemd, restart irqbalance, and look again at what runs. ib->result becomes
 * "enabled" or "already" when the link is in place (ib->holds when irqbalance now runs
 * with numastor's policy script), "failed" (< 0) when the link or the restart failed.
 */
static int irqbalance_policy(struct ns_root *root, const struct ns_system *sys, struct ns_fix_ib *ib)
{
	struct ns_machine now = {0};
	struct ns_notes notes = {0};
	bool linked_now = false;
	int r = 0;

	if (ib->st.already) {
		ib->result = "already";
	} else if (ib->st.linked) {
		ib->result = "already";
	} else {
		r = ns_ibpolicy_enable(root, &ib->problem);
		if (r < 0) {
			ib->result = "failed";
			ib->err = r;
			return r;
		}
		ib->st.linked = linked_now = true;
		ib->result = "enabled";
	}
	/* a daemon that runs without the script is restarted, also when the link was there */
	if (linked_now || (sys->machine.irqbalance.running == 1 &&
			   (!sys->machine.irqbalance.policyscript ||
			    !ns_ibpolicy_is_numastors(sys->machine.irqbalance.policyscript)))) {
		r = ns_ibpolicy_reload(root, &ib->reload);
		if (r < 0 && r != -ENOSYS) {
			ib->result = "failed";
			ib->linked_failed = true;
			ib->err = r;
			return r;
		}
	}
	r = ns_machine_read(root, &now, &notes);
	if (r == 0 && now.irqbalance.running == 1 && now.irqbalance.policyscript &&
	    ns_ibpolicy_is_numastors(now.irqbalance.policyscript))
		ib->holds = true;
	ns_machine_free(&now);
	ns_notes_free(&notes);
	return 0;
}

static int failed(struct ns_fix_result *res, enum ns_fix_failure f, int err)
{
	res->failed = f;
	res->err = err;
	return err;
}

int ns_fix_irqs(struct ns_root *root, struct ns_system *sys, const struct ns_fix_opts *o, struct ns_fix_result *res)
{
	unsigned limit;
	struct ns_apply_opts aopts = apply_opts(o->retries, o->retry_delay_ms, &limit);
	int r;

	memset(res, 0, sizeof(*res));
	/* what this kernel answers a write to a vector user space may not set */
	aopts.refusal_errno = ns_apply_refusal_errno(sys->machine.kver_major, sys->machine.kver_minor);
	aopts.fake_irq_errno = fake_irq_errno();
	r = ns_findings_evaluate(sys, &res->findings);
	if (r == 0)
		r = ns_plan_build(sys, &res->findings, &o->plan, &res->plan);
	if (r == -EBADMSG)
		return failed(res, NS_FIX_UNPARSED, r);
	if (r < 0)
		return failed(res, NS_FIX_PLAN, r);
	if (!o->dry_run && (r = ns_fix_journal_check(root, &res->why)) < 0)
		return failed(res, NS_FIX_JOURNAL_MALFORMED, r);
	r = ns_ibpolicy_inspect(root, &sys->machine.irqbalance, &res->ib.st);
	if (r < 0)
		return failed(res, NS_FIX_IB_INSPECT, r);
	if (o->ib_policy && res->ib.st.conflict) {
		/* the operator's own policy script or ExecStart=: theirs to change, not numastor's */
		res->ib.result = "refused";
		if (!o->dry_run)
			return failed(res, NS_FIX_IB_CONFLICT, -EPERM);
		res->failed = NS_FIX_IB_CONFLICT; /* a dry run says it would be refused, and goes on */
	}
	if (!o->dry_run) {
		res->ir = calloc(res->plan.nirqs + 1, sizeof(*res->ir));
		res->rr = calloc(res->plan.nrqs + 1, sizeof(*res->rr));
		if (!res->ir || !res->rr)
			return failed(res, NS_FIX_NOMEM, -ENOMEM);
		/* the measurement first: a fix asked to prove itself does not change what it cannot
		 * measure */
		if (o->before_change && (r = o->before_change(o->data, sys, &res->plan)) < 0)
			return failed(res, NS_FIX_BEFORE, r);
		r = ns_apply_plan(root, &res->plan, &aopts, res->ir, res->rr);
		if (r < 0)
			return failed(res, NS_FIX_APPLY, r);
		/* applied-effective-differs is reported, not failed: without interrupt remapping the
		 * kernel moves an MSI vector at its next interrupt */
		for (size_t i = 0; i < res->plan.nirqs; i++)
			res->write_failed |= res->ir[i].status == NS_APPLY_FAILED;
		for (size_t i = 0; i < res->plan.nrqs; i++)
			res->write_failed |= res->rr[i].status == NS_APPLY_FAILED;
		if (o->after_change && o->after_change(o->data, sys, &res->plan) < 0)
			res->after_failed = true;
		/* after the placement: irqbalance, restarted with the policy script, bans what the
		 * journal now holds from its first pass on */
		if (o->ib_policy)
			irqbalance_policy(root, sys, &res->ib);
	}
	/* irqbalance without numastor's policy script moves the vectors back at its next pass: the
	 * placement does not hold */
	res->ib.undoes = res->plan.irqbalance_advice && !res->ib.holds;
	return 0;
}

void ns_fix_result_free(struct ns_fix_result *res)
{
	ns_ibpolicy_state_free(&res->ib.st);
	free(res->ib.reload);
	free(res->ib.problem);
	for (size_t i = 0; res->ir && i < res->plan.nirqs; i++)
		ns_apply_result_free(&res->ir[i]);
	free(res->ir);
	free(res->rr);
	free(res->why);
	ns_plan_free(&res->plan);
	ns_findings_free(&res->findings);
	memset(res, 0, sizeof(*res));
}

int ns_fix_revert_irqs(struct ns_root *root, struct ns_fix_revert *out)
{
	unsigned limit;
	struct ns_apply_opts aopts = apply_opts(3, 50, &limit);

	memset(out, 0, sizeof(*out));
	if (ns_fix_journal_check(root, &out->why) < 0) {
		out->malformed = true;
		return -EINVAL;
	}
	return ns_revert(root, &aopts, &out->rep);
}

void ns_fix_revert_free(struct ns_fix_revert *out)
{
	if (!out->malformed)
		ns_revert_report_free(&out->rep);
	free(out->why);
	memset(out, 0, sizeof(*out));
}

int ns_fix_revert_ibpolicy(struct ns_root *root, struct ns_fix_ib_revert *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = ns_ibpolicy_disable(root, &out->removed, &out->problem);
	if (r == -ENOENT) {
		out->none = true;
		return 0;
	}
	if (r < 0)
		out->err = r;
	if (out->removed) {
		int rr = ns_ibpolicy_reload(root, &out->said);
		if (rr < 0 && rr != -ENOSYS)
			out->reload_err = rr;
	}
	return out->err ? out->err : out->reload_err;
}

void ns_fix_ib_revert_free(struct ns_fix_ib_revert *out)
{
	free(out->problem);
	free(out->said);
	memset(out, 0, sizeof(*out));
}

int ns_fix_journal_probe(struct ns_root *root, const char *json)
{
	struct ns_journal j;
	int r = ns_journal_load(root, &j);

	if (r < 0)
		return r;
	free(j.probe);
	j.probe = json ? strdup(json) : NULL;
	r = j.probe ? ns_journal_save(root, &j) : -ENOMEM;
	ns_journal_free(&j);
	return r;
}
