/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `numastor fix --modules` and the modules' part of `fix --revert`, as one engine: the plan,
 * the journal kept before the first change (never over one not yet reverted), the signal guard
 * that turns SIGINT/SIGTERM/SIGHUP/SIGQUIT during a swap into a rollback, the execution, the
 * journal settled afterwards, and (revert) the swap back and the uninstall. Never prints: what
 * happens is told through callbacks (each step, and the points where the front end speaks) and
 * the result it leaves in struct ns_swap_run.
 */
#ifndef NUMASTOR_MODSWAP_RUN_H
#define NUMASTOR_MODSWAP_RUN_H

#include <stdbool.h>
#include <signal.h>

#include "swap/modswap.h"

/* How a swap in (or an install) ended; the front end's text and exit status follow from it. */
enum ns_swap_outcome {
	NS_SWAPRUN_UNSET = 0,	       /* revert: no failure of its own (run->err says the rest) */
	NS_SWAPRUN_NO_MANIFEST,	       /* -ENOENT from the plan: nothing applies */
	NS_SWAPRUN_BAD_MANIFEST,       /* -EBADMSG: not a manifest numastor's build wrote */
	NS_SWAPRUN_PLAN_FAILED,	       /* err: the plan could not be built */
	NS_SWAPRUN_DISCOVER_FAILED,    /* revert, err: the machine could not be read */
	NS_SWAPRUN_INSTALL_CHECK,      /* err: --install's checks could not run */
	NS_SWAPRUN_NOTHING_TO_INSTALL, /* every fix is in the running kernel */
	NS_SWAPRUN_NOTHING_TO_SWAP,    /* ditto, and the modules run stock */
	NS_SWAPRUN_PLANNED,	       /* a dry run: planned only */
	NS_SWAPRUN_REFUSED_CHECK,      /* a check failed: nothing changed */
	NS_SWAPRUN_JOURNAL_MALFORMED,  /* err: the swap journal does not load */
	NS_SWAPRUN_REFUSED_PENDING,    /* the journal holds a swap not yet reverted */
	NS_SWAPRUN_INSTALL_OTHER,      /* the journal holds an install for another kernel */
	NS_SWAPRUN_INSTALL_UNDONE,     /* err: the install failed and was undone whole */
	NS_SWAPRUN_INSTALL_LEFT,       /* err: the install failed, what is left journaled */
	NS_SWAPRUN_INSTALLED,	       /* installed for the next boot */
	NS_SWAPRUN_REFUSED_BUSY,       /* a disk the swap detaches is in use */
	NS_SWAPRUN_JOURNAL_FAILED,     /* err: the journal could not be written: nothing changed */
	NS_SWAPRUN_EXECUTED,	       /* ran: err and rep say how it ended */
};

/* The points where the front end speaks, in the order of the run. */
enum ns_swap_run_event {
	NS_SWAPRUN_EV_PLANNED,		/* the plan, before anything acts (run->plan) */
	NS_SWAPRUN_EV_JOURNAL_IO,	/* the journal could not be written or removed (run->io_err, io_what) */
	NS_SWAPRUN_EV_EARLIER_BOOT,	/* revert: the runtime swap journaled ended with its boot */
	NS_SWAPRUN_EV_BACK_PLAN_FAILED, /* revert: the swap back could not be planned (run->err) */
	NS_SWAPRUN_EV_BACK_REFUSED,	/* revert: a disk the swap back detaches is in use */
	NS_SWAPRUN_EV_BACK_DONE,	/* revert: the swap back ran (run->err, rep, late) */
	NS_SWAPRUN_EV_UNINSTALLED,	/* revert: the files installed for the next boot removed (run->err) */
};

struct ns_swap_run;

struct ns_swap_run_opts {
	const char *module_dir; /* NULL: the release's default */
	bool install, dry_run;
	unsigned timeout_s; /* 0: ns_swap_wait_default */
	ns_swap_progress progress;
	void (*event)(void *data, enum ns_swap_run_event ev, const struct ns_swap_run *run);
	void *data;
	/* asked at each step boundary (ns_swap_exec_opts.stop); NULL: a signal the guard holds
	 * pending (ns_swap_signal_pending) stops the swap and rolls it back */
	int (*stop)(void *data);
};

struct ns_swap_run {
	enum ns_swap_outcome outcome;
	struct ns_swap_plan plan;
	bool planned;	   /* plan holds a plan (free it with ns_swap_run_free) */
	bool ran;	   /* past the dry run: result.* of the document apply */
	bool back_planned; /* revert: plan is the swap back */
	struct ns_swap_report rep;
	struct ns_swap_journal j;
	unsigned wait_s;
	int err;	   /* negative errno of what failed, 0 */
	int late;	   /* a signal that arrived while the machine was made consistent, answered after */
	int io_err;	   /* NS_SWAPRUN_EV_JOURNAL_IO: the errno */
	bool io_remove;	   /* ... in removing the journal (else writing it) */
	bool earlier_boot; /* revert: the runtime swap was of an earlier boot */
	bool journal_kept; /* revert: the journal holds something still */
	bool none;	   /* revert: no swap journal */
};

/* The signal guard (held from the first change until the machine is consistent again). */
struct ns_swap_guard {
	sigset_t old;
};
void ns_swap_guard_begin(struct ns_swap_guard *g);
/* The first guarded signal pending, or 0 (the engine's default stop). */
int ns_swap_signal_pending(void *data);
/* Let the signals through again, each pending one taken here; returns the first, or 0. */
int ns_swap_guard_end(struct ns_swap_guard *g);

/*
 * fix --modules (sys discovered on root): plan, and unless a dry run, journal and swap (or
 * install). Returns 0 when it ran (or planned) to its end, else the negative errno of
 * run->outcome; run is always to be freed with ns_swap_run_free.
 */
int ns_swap_run(struct ns_root *root, struct ns_system *sys, const struct ns_swap_run_opts *o, struct ns_swap_run *run);
/*
 * The modules' part of fix --revert: from the swap journal, the machine it describes (the stock
 * modules back unless the swap was of an earlier boot) and no file installed for the next boot.
 * -ENOENT (run->none): no journal. Returns 0 when everything was restored, else a negative
 * errno (run->err).
 */
int ns_swap_revert_run(struct ns_root *root, const struct ns_swap_run_opts *o, struct ns_swap_run *run);
void ns_swap_run_free(struct ns_swap_run *run);

#endif
