/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Carrying out a plan, and undoing it: one fix at a time (a lock), previous values journaled
 * before the first write, every write read back, errors classified and never aborting the
 * rest of the plan.
 */
#ifndef NUMASTOR_APPLY_H
#define NUMASTOR_APPLY_H

#include <stdbool.h>

#include "cpuset.h"
#include "plan.h"
#include "root.h"

enum ns_apply_status {
	NS_APPLY_UNCHANGED = 0,
	NS_APPLY_APPLIED,
	NS_APPLY_EFFECTIVE_DIFFERS, /* smp_affinity took, the kernel delivers elsewhere */
	NS_APPLY_SKIPPED,	    /* not written, or refused as kernel-managed */
	NS_APPLY_FAILED,
};

struct ns_apply_result {
	enum ns_apply_status status;
	int err;	       /* negative errno of the last attempt, 0 */
	const char *err_class; /* "managed", "transient", "vector-space-full", "other", NULL */
	unsigned attempts;
	struct ns_cpuset after, after_effective;
};

struct ns_apply_opts {
	unsigned retries; /* extra attempts for transient errors */
	unsigned retry_delay_ms;
	/* called after each write; the test-only stop-after-N-writes hook lives here */
	void (*after_write)(void *data, unsigned nwrites);
	void *data;
};

/*
 * The fix lock (run/numastor/lock, flock): one numastor fix at a time. Its holder writes
 * "PID WHAT\n" into it, WHAT being what it does: "irqs" (placing interrupts), "modules" (a
 * module swap or --install), "revert" (which may swap modules back). A waiter reads it to
 * name the holder and to tell a swap, which may take minutes, from another fix. A file with
 * only a pid (an older numastor, or flock(1) from a shell) is a holder of unknown kind.
 */
struct ns_lock_holder {
	long pid;      /* -1 when unknown */
	char what[16]; /* "irqs", "modules", "revert", or "" when the holder did not say */
	unsigned waited_ms;
	bool waited_for_swap; /* some of the wait was for a "modules" or "revert" holder */
};
/* True for the holders whose work may take minutes (a module swap, a revert). */
bool ns_lock_holder_is_swap(const struct ns_lock_holder *h);
/* Take the fix lock as `what`. While the holder is a swap (ns_lock_holder_is_swap) the wait
 * is bounded by swap_timeout_ms, otherwise by timeout_ms, each counted on its own (pass the
 * same value twice for a plain bound). -EWOULDBLOCK on timeout; *holder says who held it
 * last (and how long this waited) either way. */
int ns_lock_acquire(struct ns_root *root, const char *what, unsigned timeout_ms, unsigned swap_timeout_ms, int *fd,
		    struct ns_lock_holder *holder);
void ns_lock_release(int fd);

/* Apply plan; irq_results has plan->nirqs entries, rq_results plan->nrqs. Fails (nothing
 * written) only when the journal cannot be written first. */
int ns_apply_plan(struct ns_root *root, const struct ns_plan *plan, const struct ns_apply_opts *opts,
		  struct ns_apply_result *irq_results, struct ns_apply_result *rq_results);
const char *ns_apply_status_name(enum ns_apply_status s);
void ns_apply_result_free(struct ns_apply_result *r);

struct ns_revert_item {
	char *what;  /* "irq 45 (nvme0q1)" or "nvme0n1 rq_affinity" */
	char *value; /* the value restored */
	int ok;
	char *problem; /* why it was not restored */
};

struct ns_revert_report {
	struct ns_revert_item *v;
	size_t n;
	size_t failed;
};

/* Restore every journaled IRQ and rq_affinity value; -ENOENT when there is no journal. The
 * journal is removed when everything was restored, else it keeps what was not (and the module
 * swaps and installs, which the caller undoes through modswap). */
int ns_revert(struct ns_root *root, const struct ns_apply_opts *opts, struct ns_revert_report *rep);
void ns_revert_report_free(struct ns_revert_report *rep);

#endif
