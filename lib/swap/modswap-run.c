/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fix --modules and the modules' part of fix --revert: see modswap-run.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/testhook.h"
#include "model/system.h"
#include "state/swapjournal.h"
#include "swap/modswap-run.h"

/* Test-only (lib/base/testhook.h): NUMASTOR_TEST_STOP_AFTER_STEP=N dies right after the Nth step of a module swap
 * (or of the way back) that changed the machine, as a kill would. */
static void stop_after_step(void *data, unsigned nsteps)
{
	const char *v = ns_test_hook("NUMASTOR_TEST_STOP_AFTER_STEP");
	const char *sig = ns_test_hook("NUMASTOR_TEST_SIGNAL_AFTER_STEP");
	(void)data;
	/* NUMASTOR_TEST_SIGNAL_AFTER_STEP=K:SIG (INT, TERM, HUP, QUIT, PIPE or a number): the
	 * process raises SIG at itself right after the Kth step, as an operator or a hangup would */
	if (sig && strchr(sig, ':') && strtoul(sig, NULL, 10) == nsteps) {
		static const struct {
			const char *name;
			int sig;
		} names[] = {{"INT", SIGINT}, {"TERM", SIGTERM}, {"HUP", SIGHUP}, {"QUIT", SIGQUIT}, {"PIPE", SIGPIPE}};
		const char *n = strchr(sig, ':') + 1;
		int signo = atoi(n);
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strcmp(n, names[i].name) == 0)
				signo = names[i].sig;
		if (signo > 0)
			raise(signo);
	}
	if (v && strtoul(v, NULL, 10) > 0 && nsteps >= (unsigned)strtoul(v, NULL, 10)) {
		fflush(stdout); /* what the front end said so far, as a kill would leave it */
		_exit(137);
	}
}

/*
 * Test-only: NUMASTOR_TEST_PAUSE_BEFORE_SWAP=S waits S seconds (at most 60) between the plan
 * (already on stdout) and the module swap, so that a test can put a disk in use in between
 * and show the recheck before each removal catching it.
 */
static void test_pause_before_swap(void)
{
	const char *v = ns_test_hook("NUMASTOR_TEST_PAUSE_BEFORE_SWAP");
	unsigned s = v ? (unsigned)strtoul(v, NULL, 10) : 0;
	fflush(stdout);
	if (s)
		sleep(s > 60 ? 60 : s);
}

/*
 * A module swap is never left half done by a signal: from its first change until the machine is
 * consistent again (swapped and verified, or rolled back) SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * are blocked, and one that arrives asks the swap to stop at its next step boundary and roll
 * back (lib/swap/modswap.h: ns_swap_exec_opts.stop). SIGPIPE is ignored: a closed stdout (`| head`,
 * a dropped SSH session) loses the output, never the swap. A signal the caller ignores (nohup's
 * SIGHUP) stays ignored.
 */
static const int swap_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void ns_swap_guard_begin(struct ns_swap_guard *g)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(swap_signals) / sizeof(swap_signals[0]); i++)
		sigaddset(&set, swap_signals[i]);
	sigprocmask(SIG_BLOCK, &set, &g->old);
	signal(SIGPIPE, SIG_IGN);
}

int ns_swap_signal_pending(void *data)
{
	sigset_t pending;
	(void)data;
	if (sigpending(&pending) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(swap_signals) / sizeof(swap_signals[0]); i++)
		if (sigismember(&pending, swap_signals[i]) == 1)
			return swap_signals[i];
	return 0;
}

int ns_swap_guard_end(struct ns_swap_guard *g)
{
	const struct timespec now = {0, 0};
	sigset_t set;
	int sig, first = 0;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(swap_signals) / sizeof(swap_signals[0]); i++)
		sigaddset(&set, swap_signals[i]);
	while ((sig = sigtimedwait(&set, NULL, &now)) > 0)
		first = first ? first : sig;
	sigprocmask(SIG_SETMASK, &g->old, NULL);
	return first;
}

static void say(const struct ns_swap_run_opts *o, enum ns_swap_run_event ev, const struct ns_swap_run *run)
{
	if (o->event)
		o->event(o->data, ev, run);
}

static int save_journal(struct ns_root *root, const struct ns_swap_run_opts *o, struct ns_swap_run *run)
{
	int r = ns_swap_journal_save(root, &run->j);
	if (r < 0) {
		run->io_err = r;
		run->io_remove = false;
		say(o, NS_SWAPRUN_EV_JOURNAL_IO, run);
	}
	return r;
}

/* What a journal keeps once its runtime swap is undone: only an --install, if any. */
static void drop_runtime(struct ns_swap_journal *j)
{
	struct ns_swap_journal keep = {0};
	keep.boot_id = j->boot_id, j->boot_id = NULL;
	keep.kernel_release = j->kernel_release, j->kernel_release = NULL;
	keep.installed = j->installed, j->installed = NULL;
	keep.ninstalled = j->ninstalled, j->ninstalled = 0;
	keep.initramfs_updated = j->initramfs_updated;
	keep.initramfs_new = j->initramfs_new, j->initramfs_new = NULL;
	ns_swap_journal_free(j);
	*j = keep;
}

static bool journal_empty(const struct ns_swap_journal *j)
{
	return !j->runtime && !j->ninstalled && !j->initramfs_updated && !j->initramfs_new;
}

/* Save what is left of the journal, or remove it when nothing is. */
static int settle_journal(struct ns_root *root, const struct ns_swap_run_opts *o, struct ns_swap_run *run)
{
	if (journal_empty(&run->j)) {
		int r = ns_swap_journal_remove(root);
		if (r < 0) {
			run->io_err = r;
			run->io_remove = true;
			say(o, NS_SWAPRUN_EV_JOURNAL_IO, run);
		}
		return r;
	}
	return save_journal(root, o, run);
}

static int ended(struct ns_swap_run *run, enum ns_swap_outcome outcome, int err)
{
	run->outcome = outcome;
	run->err = err;
	return err;
}

/* --install, its journal loaded (or none): journal first, then install. */
static int run_install(struct ns_root *root, struct ns_system *sys, const struct ns_swap_run_opts *o,
		       struct ns_swap_run *run, bool before)
{
	/* journal first: the files about to be written; ns_swap_install journals each further
	 * step, and undoes the prefix when one fails */
	int r = ns_swap_install_prepare(sys, &run->plan, &run->j);
	if (r == -EXDEV)
		return ended(run, NS_SWAPRUN_INSTALL_OTHER, r);
	if (r == 0)
		r = save_journal(root, o, run);
	if (r == 0)
		r = ns_swap_install(sys, &run->plan, &run->j, o->progress, o->data);
	if (r < 0 && journal_empty(&run->j) && !before) {
		/* undone whole: nothing of the boot changed, and no journal of it */
		settle_journal(root, o, run);
		return ended(run, NS_SWAPRUN_INSTALL_UNDONE, r);
	}
	if (r < 0) {
		settle_journal(root, o, run);
		return ended(run, NS_SWAPRUN_INSTALL_LEFT, r);
	}
	return ended(run, NS_SWAPRUN_INSTALLED, 0);
}

int ns_swap_run(struct ns_root *root, struct ns_system *sys, const struct ns_swap_run_opts *o, struct ns_swap_run *run)
{
	struct ns_swap_exec_opts xo = {.wait_s = 60,
				       .progress = o->progress,
				       .data = o->data,
				       .after_step = stop_after_step,
				       .stop = o->stop ? o->stop : ns_swap_signal_pending};
	struct ns_swap_guard guard;
	bool have_journal = false;
	int r;

	memset(run, 0, sizeof(*run));
	run->wait_s = xo.wait_s;
	r = ns_swap_plan_build(sys, o->module_dir, &run->plan);
	if (r == -ENOENT)
		return ended(run, NS_SWAPRUN_NO_MANIFEST, r);
	if (r == -EBADMSG)
		return ended(run, NS_SWAPRUN_BAD_MANIFEST, r);
	if (r < 0)
		return ended(run, NS_SWAPRUN_PLAN_FAILED, r);
	run->planned = true;
	/* --install: every file it copies checked, the other copies and the initramfs tool known,
	 * before anything is written */
	if (o->install && run->plan.manifest.n && (r = ns_swap_install_check(sys, &run->plan)) < 0) {
		ns_swap_plan_free(&run->plan);
		run->planned = false;
		return ended(run, NS_SWAPRUN_INSTALL_CHECK, r);
	}
	if (o->install && run->plan.manifest.n == 0)
		/* every fix in the running kernel: no file to install, no journal */
		return ended(run, NS_SWAPRUN_NOTHING_TO_INSTALL, 0);
	if (run->plan.ngroups == 0 && !o->install)
		/* the manifest's fixes are all in the running kernel: nothing to swap, no journal */
		return ended(run, NS_SWAPRUN_NOTHING_TO_SWAP, 0);
	say(o, NS_SWAPRUN_EV_PLANNED, run);
	if (o->dry_run)
		return ended(run, NS_SWAPRUN_PLANNED, 0);
	run->ran = true;
	xo.wait_s = run->wait_s = o->timeout_s ? o->timeout_s : ns_swap_wait_default(&run->plan);
	if (run->plan.failed_checks)
		return ended(run, NS_SWAPRUN_REFUSED_CHECK, -EPERM);
	/* an earlier swap's journal is the only record of the machine before it: never overwritten */
	r = ns_swap_journal_load(root, &run->j);
	if (r == 0)
		have_journal = true;
	else if (r != -ENOENT)
		return ended(run, NS_SWAPRUN_JOURNAL_MALFORMED, r);
	if (have_journal && run->j.runtime)
		return ended(run, NS_SWAPRUN_REFUSED_PENDING, -EBUSY);
	if (o->install)
		return run_install(root, sys, o, run, have_journal);
	if (run->plan.refused_disks || run->plan.nbusy)
		return ended(run, NS_SWAPRUN_REFUSED_BUSY, -EBUSY);
	/* journal first: the whole before-state, so --revert restores it from any step */
	{
		struct ns_swap_journal install = run->j;
		r = ns_swap_journal_from_plan(sys, &run->plan, &run->j);
		if (r == 0) {
			run->j.installed = install.installed, install.installed = NULL;
			run->j.ninstalled = install.ninstalled, install.ninstalled = 0;
			run->j.initramfs_updated = install.initramfs_updated;
			run->j.initramfs_new = install.initramfs_new, install.initramfs_new = NULL;
		}
		ns_swap_journal_free(&install);
	}
	if (r == 0)
		r = save_journal(root, o, run);
	if (r < 0)
		return ended(run, NS_SWAPRUN_JOURNAL_FAILED, r);
	test_pause_before_swap();
	/* no signal leaves it half done: from here until the journal says how it ended */
	ns_swap_guard_begin(&guard);
	r = ns_swap_execute(sys, &run->plan, &run->j, &xo, &run->rep);
	if (r < 0 && (run->rep.untouched || (run->rep.rolled_back && run->rep.rollback_ok))) {
		/* nothing changed, or all of it undone: the journal's runtime part is done with */
		drop_runtime(&run->j);
		settle_journal(root, o, run);
	}
	run->late = ns_swap_guard_end(&guard);
	return ended(run, NS_SWAPRUN_EXECUTED, r);
}

/* The runtime swap back to the stock modules (the journal's runtime part). */
static void revert_runtime(struct ns_system *sys, const struct ns_swap_run_opts *o, struct ns_swap_run *run)
{
	struct ns_swap_exec_opts xo = {
		.wait_s = 60, .progress = o->progress, .data = o->data, .after_step = stop_after_step};
	struct ns_swap_guard guard;
	int r = ns_swap_plan_revert(sys, &run->j, &run->plan);

	if (r < 0) {
		run->err = r;
		say(o, NS_SWAPRUN_EV_BACK_PLAN_FAILED, run);
		return;
	}
	run->planned = run->back_planned = true;
	say(o, NS_SWAPRUN_EV_PLANNED, run);
	if (!ns_swap_plan_safe(&run->plan)) {
		run->err = -EBUSY;
		say(o, NS_SWAPRUN_EV_BACK_REFUSED, run);
		return;
	}
	xo.wait_s = run->wait_s = o->timeout_s ? o->timeout_s : ns_swap_wait_default(&run->plan);
	/* a signal does not stop the way back: it is the way to a consistent machine */
	ns_swap_guard_begin(&guard);
	r = ns_swap_execute(sys, &run->plan, NULL, &xo, &run->rep);
	if (r == 0)
		drop_runtime(&run->j);
	run->late = ns_swap_guard_end(&guard);
	run->err = r;
	say(o, NS_SWAPRUN_EV_BACK_DONE, run);
}

int ns_swap_revert_run(struct ns_root *root, const struct ns_swap_run_opts *o, struct ns_swap_run *run)
{
	struct ns_system sys;
	int r, failed = 0;
	char *boot;

	memset(run, 0, sizeof(*run));
	run->wait_s = 60;
	r = ns_swap_journal_load(root, &run->j);
	if (r == -ENOENT) {
		run->none = true;
		return r;
	}
	if (r < 0)
		return ended(run, NS_SWAPRUN_JOURNAL_MALFORMED, r);
	r = ns_system_discover(root, NULL, 0, &sys);
	if (r < 0)
		return ended(run, NS_SWAPRUN_DISCOVER_FAILED, r);
	boot = ns_swap_boot_id(root);
	if (run->j.runtime && run->j.boot_id && boot && strcmp(run->j.boot_id, boot) != 0) {
		/* a runtime swap ends with its boot: this boot loaded what modules.dep says */
		run->earlier_boot = true;
		say(o, NS_SWAPRUN_EV_EARLIER_BOOT, run);
		drop_runtime(&run->j);
	}
	if (run->j.runtime) {
		revert_runtime(&sys, o, run);
		failed = run->err;
	}
	if (!run->j.runtime && (run->j.ninstalled || run->j.initramfs_updated || run->j.initramfs_new)) {
		r = ns_swap_uninstall(&sys, &run->j, o->progress, o->data);
		run->err = r;
		say(o, NS_SWAPRUN_EV_UNINSTALLED, run);
		failed = failed ? failed : r;
	}
	if ((r = settle_journal(root, o, run)) < 0)
		failed = failed ? failed : r;
	run->journal_kept = !journal_empty(&run->j);
	run->err = failed;
	free(boot);
	ns_system_free(&sys);
	return failed;
}

void ns_swap_run_free(struct ns_swap_run *run)
{
	ns_swap_journal_free(&run->j);
	ns_swap_report_free(&run->rep);
	if (run->planned)
		ns_swap_plan_free(&run->plan);
	memset(run, 0, sizeof(*run));
}
