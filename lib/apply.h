/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Carrying out a plan, and undoing it: one fix at a time (a lock), previous values journaled
 * before the first write, every write read back, errors classified and never aborting the
 * rest of the plan.
 */
#ifndef NUMASTOR_APPLY_H
#define NUMASTOR_APPLY_H

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

/* Take the fix lock, waiting up to timeout_ms. -EWOULDBLOCK on timeout (*holder: its pid). */
int ns_lock_acquire(struct ns_root *root, unsigned timeout_ms, int *fd, long *holder);
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
