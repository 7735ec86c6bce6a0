/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/act/exec: programs run by absolute path only, with their status, stderr and stdout back. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "act/exec.h"
#include "tap.h"

int main(void)
{
	struct ns_exec_result res;
	char *argv_rel[] = {"sh", "-c", "true", NULL};
	char *argv_sh[] = {"/bin/sh", "-c", "echo out; echo err1 >&2; echo err2 >&2; exit 3", NULL};
	char *argv_kill[] = {"/bin/sh", "-c", "kill -9 $$", NULL};
	char *argv_env[] = {"/bin/sh", "-c", "echo \"$PATH|$LC_ALL|$HOME\"", NULL};
	const char *cands[] = {"/nonexistent/x", "sh", "/bin/sh", NULL};
	char *d;

	CHECK(ns_exec_run("sh", argv_rel, false, &res) == -EINVAL); /* never through PATH */
	CHECK(ns_exec_run("/nonexistent/prog", argv_rel, false, &res) == -ENOENT);

	CHECK(ns_exec_run("/bin/sh", argv_sh, true, &res) == 0);
	CHECK(res.status == 3 && !ns_exec_ok(&res));
	CHECK_STR(res.out, "out\n");
	CHECK_STR(res.err, "err1\nerr2\n");
	d = ns_exec_describe("/bin/sh", &res);
	CHECK_STR(d, "/bin/sh exited with status 3: err2");
	free(d);
	ns_exec_result_free(&res);

	CHECK(ns_exec_run("/bin/sh", argv_sh, false, &res) == 0);
	CHECK(res.out == NULL && res.err && res.status == 3);
	ns_exec_result_free(&res);

	CHECK(ns_exec_run("/bin/sh", argv_kill, false, &res) == 0);
	CHECK(res.status == -1 && res.signal == 9);
	ns_exec_result_free(&res);

	/* a fixed environment, not the caller's */
	setenv("HOME", "/caller-home", 1);
	CHECK(ns_exec_run("/bin/sh", argv_env, true, &res) == 0);
	CHECK(ns_exec_ok(&res));
	CHECK_STR(res.out, "/usr/sbin:/usr/bin:/sbin:/bin|C|\n");
	ns_exec_result_free(&res);

	CHECK_STR(ns_exec_find(cands), "/bin/sh");
	return tap_done("exec");
}
