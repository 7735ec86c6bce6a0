/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "act/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"

#define OUT_MAX (8u << 20)
#define ERR_MAX (64u << 10)

struct buf {
	char *p;
	size_t n, max;
	bool keep_end; /* over max: keep the end (stderr's last lines say most) */
};

static int buf_add(struct buf *b, const char *d, size_t n)
{
	if (b->keep_end && b->n + n > b->max) {
		if (n >= b->max) {
			d += n - b->max;
			n = b->max;
			b->n = 0;
		} else {
			size_t drop = b->n + n - b->max;
			memmove(b->p, b->p + drop, b->n - drop);
			b->n -= drop;
		}
	} else if (b->n + n > b->max) {
		n = b->max - b->n;
	}
	if (!b->p && !(b->p = malloc(b->max + 1)))
		return -ENOMEM;
	memcpy(b->p + b->n, d, n);
	b->n += n;
	b->p[b->n] = '\0';
	return 0;
}

/* Read both pipes until they close. */
static int drain(int outfd, int errfd, struct buf *out, struct buf *err)
{
	struct pollfd pf[2] = {{.fd = outfd, .events = POLLIN}, {.fd = errfd, .events = POLLIN}};
	char chunk[16384];
	int r = 0;

	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;
			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(pf[i].fd, chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				pf[i].fd = -1;
				continue;
			}
			if (r == 0)
				r = buf_add(i ? err : out, chunk, (size_t)n);
		}
	}
	return r;
}

int ns_exec_run(const char *path, char *const argv[], bool want_out, struct ns_exec_result *res)
{
	static char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};
	posix_spawn_file_actions_t fa;
	int outp[2] = {-1, -1}, errp[2] = {-1, -1}, r, status;
	struct buf out = {.max = OUT_MAX}, err = {.max = ERR_MAX, .keep_end = true};
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (!path || path[0] != '/')
		return -EINVAL;
	if (access(path, X_OK) < 0)
		return -errno;
	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		r = -errno;
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (want_out)
		posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	r = -posix_spawn(&pid, path, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(outp[1]);
	close(errp[1]);
	outp[1] = errp[1] = -1;
	if (r < 0)
		goto out;
	r = drain(outp[0], errp[0], &out, &err);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			if (!r)
				r = -errno;
			goto out;
		}
	if (WIFEXITED(status)) {
		res->status = WEXITSTATUS(status);
	} else {
		res->status = -1;
		res->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	}
	if (r == 0 && !err.p)
		r = buf_add(&err, "", 0);
	if (r == 0 && want_out && !out.p)
		r = buf_add(&out, "", 0);
	if (r == 0) {
		res->err = err.p;
		res->out = want_out ? out.p : NULL;
		err.p = out.p = NULL;
	}
out:
	for (int i = 0; i < 2; i++) {
		if (outp[i] >= 0)
			close(outp[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	free(out.p);
	free(err.p);
	return r;
}

void ns_exec_result_free(struct ns_exec_result *res)
{
	free(res->out);
	free(res->err);
	memset(res, 0, sizeof(*res));
}

bool ns_exec_ok(const struct ns_exec_result *res)
{
	return res->err && res->status == 0;
}

const char *ns_exec_find(const char *const *candidates)
{
	for (size_t i = 0; candidates[i]; i++) {
		struct stat st;
		if (candidates[i][0] == '/' && stat(candidates[i], &st) == 0 && S_ISREG(st.st_mode) &&
		    access(candidates[i], X_OK) == 0)
			return candidates[i];
	}
	return NULL;
}

char *ns_exec_describe(const char *path, const struct ns_exec_result *res)
{
	const char *e = res->err ? res->err : "";
	size_t n = strlen(e);
	const char *last;

	while (n && (e[n - 1] == '\n' || e[n - 1] == ' '))
		n--;
	last = memrchr(e, '\n', n);
	last = last ? last + 1 : e;
	if (res->status < 0)
		return ns_fmt("%s was killed by signal %d%s%.*s", path, res->signal, n ? ": " : "", (int)(e + n - last),
			      last);
	return ns_fmt("%s exited with status %d%s%.*s", path, res->status, n ? ": " : "", (int)(e + n - last), last);
}
