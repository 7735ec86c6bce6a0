/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `numastor fix` (the IRQs and queue settings) and its `--revert`, as one engine: the plan from
 * the findings, the journal checked like input before anything acts on it, irqbalance's drop-in
 * inspected (and refused when the operator gives irqbalance a policy script of their own), the
 * journaled writes, --irqbalance=policy after them; on the way back the IRQ journal's revert and
 * the drop-in's removal. Never prints: the front end gets callbacks around the change (a
 * measurement before and after it) and renders the result.
 */
#ifndef NUMASTOR_FIXRUN_H
#define NUMASTOR_FIXRUN_H

#include <stdbool.h>

#include "act/apply.h"
#include "act/ibpolicy.h"
#include "act/plan.h"
#include "model/findings.h"
#include "model/system.h"
#include "read/root.h"

/* irqbalance and numastor's drop-in for it, as this run found and left them */
struct ns_fix_ib {
	struct ns_ibpolicy_state st;
	bool undoes;	    /* irqbalance runs without the policy script: it will move the vectors back */
	const char *result; /* --irqbalance=policy: "enabled", "already", "refused", "failed"; else NULL */
	bool holds;	    /* after it, irqbalance runs with numastor's policy script */
	char *reload;	    /* what the reload and restart said (malloc'd), NULL */
	char *problem;	    /* result "failed": what failed (malloc'd), NULL */
	bool linked_failed; /* ... the link is in place but the reload or restart failed */
	int err;	    /* ... its negative errno */
};

/* Where the run stopped before the change (nothing was changed), or NS_FIX_DONE. */
enum ns_fix_failure {
	NS_FIX_DONE = 0,
	NS_FIX_UNPARSED,	  /* -EBADMSG: an excluded-CPU input does not parse (sys->machine.unparsed) */
	NS_FIX_PLAN,		  /* the findings or the plan could not be built */
	NS_FIX_JOURNAL_MALFORMED, /* -EINVAL: the journal is malformed (why), kept as it is */
	NS_FIX_IB_INSPECT,	  /* irqbalance's units and options could not be read */
	NS_FIX_IB_CONFLICT,	  /* --irqbalance=policy refused: ib.st.conflict (a dry run goes on) */
	NS_FIX_NOMEM,
	NS_FIX_BEFORE, /* opts.before_change failed */
	NS_FIX_APPLY,  /* ns_apply_plan failed before its first write (-ESTALE, -EPROTO, -EFBIG, ...) */
};

struct ns_fix_opts {
	bool dry_run;
	bool ib_policy; /* --irqbalance=policy */
	struct ns_plan_opts plan;
	unsigned retries, retry_delay_ms;
	/* called once the plan is known and checked, right before the first write; < 0: nothing is
	 * changed (NS_FIX_BEFORE) */
	int (*before_change)(void *data, const struct ns_system *sys, const struct ns_plan *plan);
	/* called right after the writes, the lock still held; < 0: reported (after_failed) */
	int (*after_change)(void *data, const struct ns_system *sys, const struct ns_plan *plan);
	void *data;
};

struct ns_fix_result {
	enum ns_fix_failure failed;
	int err;   /* the failure's negative errno */
	char *why; /* NS_FIX_JOURNAL_MALFORMED: what is wrong with it */
	struct ns_findings findings;
	struct ns_plan plan;
	struct ns_apply_result *ir, *rr; /* the writes (plan.nirqs, plan.nrqs), NULL on a dry run */
	bool write_failed;		 /* some write failed */
	bool after_failed;		 /* opts.after_change failed */
	struct ns_fix_ib ib;
};

/*
 * Plan the placement of sys's vectors (and, with opts.plan.rq_affinity, queue settings) and,
 * unless a dry run, journal and write it; then --irqbalance=policy. Returns 0, or the negative
 * errno of res->failed (nothing was changed then). Free res with ns_fix_result_free.
 */
int ns_fix_irqs(struct ns_root *root, struct ns_system *sys, const struct ns_fix_opts *opts, struct ns_fix_result *res);
void ns_fix_result_free(struct ns_fix_result *res);

/*
 * The journal, checked like input: -EINVAL (*why says why) when it is malformed, and it is kept
 * byte for byte; 0 when there is none or it is valid (a journal of another version passes here:
 * -EPROTO is the callers' own to say).
 */
int ns_fix_journal_check(struct ns_root *root, char **why);

/* The IRQ and rq_affinity revert (ns_revert), after the journal's check. */
struct ns_fix_revert {
	struct ns_revert_report rep;
	bool malformed; /* the check refused the journal (why); nothing was read or changed */
	char *why;
};
int ns_fix_revert_irqs(struct ns_root *root, struct ns_fix_revert *out);
void ns_fix_revert_free(struct ns_fix_revert *out);

/* numastor's drop-in for irqbalance out again, when fix put it there, and irqbalance restarted. */
struct ns_fix_ib_revert {
	bool none;	/* no journal of the drop-in: nothing to do */
	int err;	/* ns_ibpolicy_disable's failure, 0 */
	char *problem;	/* what is wrong, NULL */
	bool removed;	/* the link was removed */
	int reload_err; /* the reload or restart failed (not -ENOSYS), 0 */
	char *said;	/* what the reload and restart said, NULL */
};
int ns_fix_revert_ibpolicy(struct ns_root *root, struct ns_fix_ib_revert *out);
void ns_fix_ib_revert_free(struct ns_fix_ib_revert *out);

/* The journal's probe: the before/after measurement's JSON text, recorded beside what it measured. */
int ns_fix_journal_probe(struct ns_root *root, const char *json);

#endif
