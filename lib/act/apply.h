/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Carrying out a plan, and undoing it: one fix at a time (a lock), previous values journaled
 * before the first write, every write read back, errors classified and never aborting the
 * rest of the plan.
 */
#ifndef NUMASTOR_APPLY_H
#define NUMASTOR_APPLY_H

#include <stdbool.h>

#include "base/cpuset.h"
#include "act/plan.h"
#include "read/root.h"

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
	const char *err_class; /* "managed", "permission", "transient", "vector-space-full", "other", NULL */
	unsigned attempts;
	struct ns_cpuset after, after_effective;
};

struct ns_apply_opts {
	/* the errno this kernel refuses a write to a vector user space may not set with:
	 * ns_apply_refusal_errno(); 0 when unknown (then neither EIO nor EPERM means managed) */
	int refusal_errno;
	int fake_irq_errno; /* test-only (NUMASTOR_TEST_IRQ_WRITE_ERRNO): every IRQ write fails so */
	unsigned retries;   /* extra attempts for transient errors */
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
 * written) only when the journal cannot be written first: -EINVAL malformed, -EPROTO of another
 * version, -ESTALE from another boot (never added to), or the write's error. An rq_affinity
 * move of a disk without a known identity is skipped (err -ENOENT): it could not be reverted
 * by identity. */
/* EIO below 6.12 (measured on 5.10 and 6.1), EPERM from 6.12; 0 when the version is unknown. */
int ns_apply_refusal_errno(int kver_major, int kver_minor);
/*
 * The class of a failed IRQ affinity write (err negative): "managed" only for the kernel's own
 * refusal errno, "permission" for an EPERM/EACCES that is not it (a real permission error,
 * failed, never skipped), "transient" (EAGAIN, EBUSY, ENOMEM: retried), "vector-space-full"
 * (ENOSPC), else "other".
 */
const char *ns_apply_classify(int err, int refusal_errno);

int ns_apply_plan(struct ns_root *root, const struct ns_plan *plan, const struct ns_apply_opts *opts,
		  struct ns_apply_result *irq_results, struct ns_apply_result *rq_results);
const char *ns_apply_status_name(enum ns_apply_status s);
void ns_apply_result_free(struct ns_apply_result *r);

/* What became of one journal entry at revert. */
enum ns_revert_status {
	NS_REVERT_RESTORED = 0, /* the previous value written and read back */
	NS_REVERT_UNCHANGED,	/* it already held the previous value (the fix never wrote it) */
	NS_REVERT_FAILED,	/* the write failed: kept in the journal for another --revert */
	NS_REVERT_GONE,		/* no IRQ of that PCI function has that action now / no disk has that
				   identity: left alone, dropped from the journal */
	NS_REVERT_AMBIGUOUS,	/* several match: left alone, dropped */
	NS_REVERT_CHANGED,	/* it holds neither what numastor placed nor the previous value:
				   someone else changed it since; left alone, dropped */
	NS_REVERT_OTHER_BOOT,	/* the journal is from another boot: nothing done, journal kept */
};

struct ns_revert_item {
	char *what;  /* "irq 45 (nvme0q1 of 0000:00:04.0)" or "nvme0n1 rq_affinity" */
	char *value; /* the previous value, restored or to restore */
	int ok;	     /* restored or unchanged */
	enum ns_revert_status status;
	char *problem; /* why it was not restored */
	/* what it was matched by, and what it applied to now */
	char *pci, *name; /* IRQ entries */
	int irq;	  /* the IRQ it applied to now, -1 none */
	char *disk;	  /* rq_affinity entries: the identity */
	char *device;	  /* the disk it applied to now, else its name when journaled */
};

struct ns_revert_report {
	struct ns_revert_item *v;
	size_t n;
	size_t failed;	   /* NS_REVERT_FAILED */
	size_t left_alone; /* GONE, AMBIGUOUS, CHANGED, OTHER_BOOT */
	bool other_boot;   /* the journal's boot_id is not this boot's: nothing reverted, file kept */
	char *journal_boot_id, *boot_id;
	int journal_version; /* with -EPROTO: the version of the journal refused */
};

const char *ns_revert_status_name(enum ns_revert_status s);

/*
 * Restore every journaled IRQ and rq_affinity value, each on the device it was taken from: an
 * IRQ entry applies only to the IRQ now in its PCI function's msi_irqs (or irq) with its action
 * name, an rq_affinity entry only to the disk with its identity, and only while it still holds
 * what numastor placed. -ENOENT when there is no journal, -EINVAL when it is malformed, -EPROTO
 * when it is of another version (nothing done, the file kept). A journal from another boot is
 * reported (rep->other_boot, every entry NS_REVERT_OTHER_BOOT) and kept; nothing of it is
 * written. Otherwise the journal is removed when nothing is left to retry, else it keeps the
 * failed entries (and the module fields, as they were).
 */
int ns_revert(struct ns_root *root, const struct ns_apply_opts *opts, struct ns_revert_report *rep);
void ns_revert_report_free(struct ns_revert_report *rep);

#endif
