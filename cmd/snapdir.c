/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --snapshot FILE (check, fix --dry-run): the directory a bundle is extracted into, removed
 * however the process ends, and the root opened on it. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "out/replay.h"
#include "out/snapshot.h"
#include "snapdir.h"

/*
 * The extraction directory of --snapshot, removed on every way out: the normal one, and the
 * signals that end the process by default (Ctrl-C, kill, a closed pipe, a hangup). The
 * handler removes it (async-signal-safe) and dies of the same signal.
 */
static char *volatile snapdir_live;
static const int fatal_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGPIPE,
				    SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ};

static void on_fatal_signal(int sig)
{
	char *dir = snapdir_live;
	if (dir)
		ns_snapshot_remove(dir);
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when the handler returns (sig is blocked until then) */
}

static void watch_signals(sigset_t *set)
{
	struct sigaction sa = {.sa_handler = on_fatal_signal};

	sigemptyset(set);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaddset(set, fatal_signals[i]);
	sa.sa_mask = *set; /* one handler at a time */
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old;
		/* a signal ignored by whoever started us stays ignored */
		if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(fatal_signals[i], &sa, NULL);
	}
}

/* Make the directory and publish it to the handler with the signals held, so none lands in
 * between and leaves an empty directory behind. */
int make_snapdir(char **dir)
{
	sigset_t set, old;
	int r;

	watch_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	r = ns_snapshot_mkdir(dir);
	if (r == 0)
		snapdir_live = *dir;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

void remove_snapdir(char **dir)
{
	if (!*dir)
		return;
	ns_snapshot_remove(*dir);
	snapdir_live = NULL;
	free(*dir);
	*dir = NULL;
}

int open_snapshot_root(struct ns_cli *cli, const char *file, char **dir, struct ns_root **root)
{
	char *why = NULL;
	int r;

	*root = NULL;
	r = make_snapdir(dir);
	if (r < 0)
		return ns_cli_fail(cli, NS_EXIT_UNKNOWN, "cannot make a directory to extract %s into: %s", file,
				   strerror(-r));
	r = ns_snapshot_extract_into(file, *dir, &why);
	if (r < 0) {
		ns_cli_fail(cli, NS_EXIT_UNKNOWN, "%s", why ? why : strerror(-r));
		free(why);
		remove_snapdir(dir);
		return NS_EXIT_UNKNOWN;
	}
	r = ns_root_open(*dir, root);
	if (r == 0 && (r = ns_replay_label(*root, file)) < 0) {
		ns_root_free(*root);
		*root = NULL;
	}
	if (r < 0) {
		ns_cli_fail(cli, NS_EXIT_UNKNOWN, "cannot use %s as the root: %s", *dir, strerror(-r));
		remove_snapdir(dir);
		return NS_EXIT_UNKNOWN;
	}
	return NS_EXIT_OK;
}
