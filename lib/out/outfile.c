/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "out/outfile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/number.h"
#include "base/oom.h"
#include "base/testhook.h"
#include "base/util.h"

bool ns_outfile_is_stdout(const char *path)
{
	return path && (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/fd/1") == 0 ||
			strcmp(path, "/proc/self/fd/1") == 0);
}

static const char *kind_of(mode_t m)
{
	return S_ISLNK(m)    ? "a symbolic link"
	       : S_ISDIR(m)  ? "a directory"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a regular file";
}

/* 0 when path is free or a regular file (not through a link); -EEXIST with *why otherwise. */
static int target_ok(const char *path, char **why)
{
	struct stat st;

	if (lstat(path, &st) < 0 || S_ISREG(st.st_mode))
		return 0;
	if (why)
		*why = ns_fmt("it is %s; numastor replaces only a regular file (\"-\" or /dev/stdout writes to "
			      "standard output)",
			      kind_of(st.st_mode));
	return -EEXIST;
}

/* the temporary files open now, for ns_outfile_discard_pending (a run that must stop at once) */
static const char *pending[4];

static void pending_set(const char *tmpname, bool on)
{
	for (size_t i = 0; i < sizeof(pending) / sizeof(pending[0]); i++)
		if (on ? !pending[i] : pending[i] == tmpname) {
			pending[i] = on ? tmpname : NULL;
			return;
		}
}

void ns_outfile_discard_pending(void)
{
	for (size_t i = 0; i < sizeof(pending) / sizeof(pending[0]); i++)
		if (pending[i])
			unlink(pending[i]);
}

int ns_outfile_open(const char *path, struct ns_outfile *o, char **why)
{
	int r;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	*why = NULL;
	if (!path || !*path) {
		*why = strdup("an empty file name");
		return -EINVAL;
	}
	if (ns_outfile_is_stdout(path)) {
		o->fd = STDOUT_FILENO;
		o->through = true;
		return 0;
	}
	r = target_ok(path, why);
	if (r < 0)
		return r;
	/* beside the target, so the rename is atomic */
	o->path = strdup(path);
	o->tmpname = ns_fmt("%s.XXXXXX", path);
	if (!o->path || !o->tmpname) {
		ns_outfile_abort(o);
		return -ENOMEM;
	}
	o->fd = mkstemp(o->tmpname);
	if (o->fd < 0) {
		r = -errno;
		free(o->tmpname);
		o->tmpname = NULL;
		ns_outfile_abort(o);
		return r;
	}
	pending_set(o->tmpname, true);
	if (fchmod(o->fd, 0644) < 0) {
		r = -errno;
		ns_outfile_abort(o);
		return r;
	}
	return 0;
}

/* NUMASTOR_TEST_OUTFILE_PAUSE_MS (test builds): a window before the target is checked again,
 * for tests/check-outfile.sh to put something else at its name */
static void pause_for_tests(void)
{
	const char *v = ns_test_hook("NUMASTOR_TEST_OUTFILE_PAUSE_MS");
	uint64_t ms;

	if (v && ns_parse_u64(v, &ms) == 0 && ms <= 60000) {
		struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

int ns_outfile_commit(struct ns_outfile *o)
{
	int r = 0;

	if (o->through) {
		/* a pipe or a terminal has nothing to sync: EINVAL, ENOTSUP are no failure */
		if (fsync(o->fd) < 0 && errno != EINVAL && errno != ENOTSUP && errno != EROFS)
			r = -errno;
		o->fd = -1;
		return r;
	}
	if (fsync(o->fd) < 0)
		r = -errno;
	if (close(o->fd) < 0 && r == 0)
		r = -errno;
	o->fd = -1;
	pause_for_tests();
	/* a report that lost a line or a value for want of memory is not put in place */
	if (r == 0 && ns_alloc_failed())
		r = -ENOMEM;
	if (r == 0)
		r = target_ok(o->path, NULL);
	if (r == 0 && rename(o->tmpname, o->path) < 0)
		r = -errno;
	if (r < 0) {
		ns_outfile_abort(o);
		return r;
	}
	pending_set(o->tmpname, false);
	free(o->tmpname);
	free(o->path);
	o->tmpname = o->path = NULL;
	return 0;
}

void ns_outfile_abort(struct ns_outfile *o)
{
	if (!o->through && o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmpname)
		unlink(o->tmpname);
	pending_set(o->tmpname, false);
	free(o->tmpname);
	free(o->path);
	o->tmpname = o->path = NULL;
}
