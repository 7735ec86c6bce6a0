/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Installing the patched modules for the next boot (updates/numastor, depmod), and removing them. */
#define _GNU_SOURCE
#include "modswap-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

extern char **environ;

static int run_depmod(const char *release)
{
	char *argv[] = {"depmod", "-a", (char *)release, NULL};
	pid_t pid;
	int status, r = posix_spawnp(&pid, "depmod", NULL, NULL, argv, environ);

	if (r)
		return -r;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static int copy_file(struct ns_root *root, const char *from, const char *to)
{
	char *src = ns_swap_abs_path(root, from), *dst = ns_swap_abs_path(root, to), *tmp = NULL;
	unsigned char buf[65536];
	int in = -1, out = -1, r = 0;
	ssize_t n;

	if (!src || !dst || asprintf(&tmp, "%s.tmp.%d", dst, (int)getpid()) < 0) {
		r = -ENOMEM;
		goto out;
	}
	in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (in < 0 || out < 0) {
		r = -errno;
		goto out;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			r = -EIO;
			goto out;
		}
	if (n < 0 || fsync(out) < 0)
		r = -errno;
	if (close(out) < 0 && !r)
		r = -errno;
	out = -1;
	if (!r && rename(tmp, dst) < 0)
		r = -errno;
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (r && tmp)
		unlink(tmp);
	free(src);
	free(dst);
	free(tmp);
	return r;
}

int ns_swap_install(struct ns_system *sys, const struct ns_swap_plan *p, char ***installed, size_t *ninstalled)
{
	const char *rel = sys->machine.kernel_release;
	char dir[512];
	int r;

	if (!ns_root_is_live(sys->root) || !rel)
		return -EOPNOTSUPP;
	if (p->failed_checks)
		return -EPERM;
	snprintf(dir, sizeof(dir), "lib/modules/%s/updates/numastor", rel);
	r = ns_mkdir_p(sys->root, dir);
	for (size_t i = 0; r == 0 && i < p->manifest.n; i++) {
		const struct ns_manifest_module *mm = &p->manifest.v[i];
		const char *base = strrchr(mm->file, '/');
		char *to = ns_fmt("%s/%s", dir, base ? base + 1 : mm->file);
		if (!to)
			return -ENOMEM;
		r = copy_file(sys->root, mm->file, to);
		if (r == 0)
			r = ns_strv_add(installed, ninstalled, to);
		free(to);
	}
	return r ? r : run_depmod(rel);
}

int ns_swap_uninstall(struct ns_system *sys, char **installed, size_t n)
{
	int r = 0;
	for (size_t i = 0; i < n; i++) {
		int u = ns_unlink(sys->root, installed[i]);
		if (u < 0 && u != -ENOENT)
			r = u;
	}
	if (sys->machine.kernel_release) {
		int d = run_depmod(sys->machine.kernel_release);
		if (!r)
			r = d;
	}
	return r;
}
