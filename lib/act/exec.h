/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one place numastor runs another program (depmod, update-initramfs, lsinitramfs): by
 * absolute path, with an argument vector and a fixed environment, never through PATH or a
 * shell. Its exit status and what it wrote to stderr come back to the caller, which reports
 * them. Live root only: a captured tree never runs the host's programs.
 */
#ifndef NUMASTOR_EXEC_H
#define NUMASTOR_EXEC_H

#include <stdbool.h>
#include <stddef.h>

struct ns_exec_result {
	int status; /* exit status; -1 when it died of a signal */
	int signal; /* the signal that ended it, 0 */
	char *out;  /* stdout when asked for (at most 8 MiB), else NULL */
	char *err;  /* stderr (at most 64 KiB, the end kept), never NULL after a run */
};

/*
 * Run argv[0]'s program from path (absolute). stdin is /dev/null; stdout is kept in res->out
 * when want_out, else discarded; stderr is kept in res->err. The environment is
 * PATH=/usr/sbin:/usr/bin:/sbin:/bin (for the program's own children) and LC_ALL=C.
 * Returns 0 when the program ran (whatever its status), -EINVAL for a relative path,
 * -ENOENT when it does not exist, or another -errno when it could not be started.
 */
int ns_exec_run(const char *path, char *const argv[], bool want_out, struct ns_exec_result *res);
void ns_exec_result_free(struct ns_exec_result *res);
/* Did it run and exit 0? */
bool ns_exec_ok(const struct ns_exec_result *res);
/* The first of the absolute paths given (NULL-terminated) that is an executable file, or NULL. */
const char *ns_exec_find(const char *const *candidates);
/* One line for a report: "PATH exited with status N: <last line of stderr>" (malloc'd). */
char *ns_exec_describe(const char *path, const struct ns_exec_result *res);

#endif
