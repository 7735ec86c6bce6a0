/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Installing the patched modules for the next boot (updates/numastor, depmod), and removing them. */
#define _GNU_SOURCE
#include "modswap-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec.h"
#include "util.h"

static const char *const depmod_paths[] = {"/usr/sbin/depmod", "/sbin/depmod", NULL};
static const char *const update_initramfs_paths[] = {"/usr/sbin/update-initramfs", "/sbin/update-initramfs", NULL};
static const char *const lsinitramfs_paths[] = {"/usr/bin/lsinitramfs", "/bin/lsinitramfs", NULL};

/* Run a program found at one of paths; each run is reported through progress. */
static int run_program(const char *const *paths, const char *what, char *const *args, ns_swap_progress progress,
		       void *data)
{
	const char *path = ns_exec_find(paths);
	struct ns_exec_result res;
	char *argv[8], *msg;
	size_t n = 0;
	int r;

	if (!path) {
		msg = ns_fmt("%s: not found at %s", what, paths[0]);
		if (progress && msg)
			progress(data, msg, false);
		free(msg);
		return -ENOENT;
	}
	argv[n++] = (char *)path;
	for (; args[n - 1] && n < 7; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	r = ns_exec_run(path, argv, false, &res);
	if (r < 0) {
		msg = ns_fmt("%s: %s cannot be run: %s", what, path, strerror(-r));
	} else if (!ns_exec_ok(&res)) {
		msg = ns_exec_describe(path, &res);
		r = -EIO;
	} else {
		/* the whole command line, as run */
		size_t len = 0;
		for (size_t i = 0; argv[i]; i++)
			len += strlen(argv[i]) + 1;
		msg = malloc(len + 5);
		if (msg) {
			strcpy(msg, "ran");
			for (size_t i = 0; argv[i]; i++) {
				strcat(msg, " ");
				strcat(msg, argv[i]);
			}
		}
	}
	if (progress && msg)
		progress(data, msg, r == 0);
	free(msg);
	ns_exec_result_free(&res);
	return r;
}

static int run_depmod(const char *release, ns_swap_progress progress, void *data)
{
	char *args[] = {"-a", (char *)release, NULL};
	return run_program(depmod_paths, "depmod", args, progress, data);
}

static char *initrd_path(const char *release)
{
	return ns_fmt("/boot/initrd.img-%s", release);
}

/* Does the initramfs of release carry one of the manifest's modules? Without lsinitramfs to
 * tell, an existing initramfs is assumed to (Debian's carries nvme, scsi_mod and sd_mod). */
static bool initramfs_carries(const struct ns_swap_plan *p, const char *release)
{
	const char *ls = ns_exec_find(lsinitramfs_paths);
	char *initrd = initrd_path(release);
	struct ns_exec_result res;
	bool carries = false;

	if (!initrd || access(initrd, F_OK) < 0) {
		free(initrd);
		return false;
	}
	if (!ls) {
		free(initrd);
		return true;
	}
	{
		char *argv[] = {(char *)ls, initrd, NULL};
		if (ns_exec_run(ls, argv, true, &res) < 0 || !ns_exec_ok(&res)) {
			carries = true; /* cannot tell: rewrite it */
		} else {
			for (size_t i = 0; i < p->manifest.n && !carries; i++) {
				char *needle = ns_fmt("/%s.ko", p->manifest.v[i].name);
				carries = needle && strstr(res.out, needle);
				free(needle);
			}
		}
		ns_exec_result_free(&res);
	}
	free(initrd);
	return carries;
}

static int update_initramfs(const char *release, ns_swap_progress progress, void *data)
{
	char *args[] = {"-u", "-k", (char *)release, NULL};
	return run_program(update_initramfs_paths, "update-initramfs", args, progress, data);
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

int ns_swap_install_prepare(struct ns_system *sys, const struct ns_swap_plan *p, struct ns_swap_journal *j)
{
	const char *rel = sys->machine.kernel_release;
	int r = 0;

	if (!ns_root_is_live(sys->root) || !rel)
		return -EOPNOTSUPP;
	for (size_t i = 0; r == 0 && i < p->manifest.n; i++) {
		const struct ns_manifest_module *mm = &p->manifest.v[i];
		const char *base = strrchr(mm->file, '/');
		char *to = ns_fmt("lib/modules/%s/updates/numastor/%s", rel, base ? base + 1 : mm->file);
		r = to ? ns_strv_add_unique(&j->installed, &j->ninstalled, to) : -ENOMEM;
		free(to);
	}
	if (r == 0 && !j->kernel_release)
		j->kernel_release = strdup(rel);
	if (r == 0 && !j->boot_id)
		j->boot_id = ns_swap_boot_id(sys->root);
	if (r == 0 && initramfs_carries(p, rel))
		j->initramfs_updated = true;
	return r;
}

int ns_swap_install(struct ns_system *sys, const struct ns_swap_plan *p, struct ns_swap_journal *j,
		    ns_swap_progress progress, void *data)
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
		char *to = ns_fmt("%s/%s", dir, base ? base + 1 : mm->file), *msg;
		if (!to)
			return -ENOMEM;
		if (!ns_strv_has(j->installed, j->ninstalled, to))
			r = -EINVAL; /* not journaled first */
		if (r == 0)
			r = copy_file(sys->root, mm->file, to);
		msg = ns_fmt("installed /%s%s%s", to, r ? ": " : "", r ? strerror(-r) : "");
		if (progress && msg)
			progress(data, msg, r == 0);
		free(msg);
		free(to);
	}
	if (r == 0)
		r = run_depmod(rel, progress, data);
	if (r == 0 && j->initramfs_updated)
		r = update_initramfs(rel, progress, data);
	return r;
}

int ns_swap_uninstall(struct ns_system *sys, struct ns_swap_journal *j, ns_swap_progress progress, void *data)
{
	const char *rel = j->kernel_release ? j->kernel_release : sys->machine.kernel_release;
	size_t kept = 0;
	int r = 0;

	if (!ns_root_is_live(sys->root) || !rel)
		return -EOPNOTSUPP;
	for (size_t i = 0; i < j->ninstalled; i++) {
		/* only a file of this release's own numastor directory, reached through no link out */
		int u = ns_swap_installed_resolves(sys->root, rel, j->installed[i]);
		char *msg;
		if (u == 0)
			u = ns_unlink(sys->root, j->installed[i]);
		if (u == -EXDEV || u == -EINVAL)
			msg = ns_fmt("not removed: /%s is not a file of /lib/modules/%s/updates/numastor (a link "
				     "leads elsewhere, or it is not a regular file)",
				     j->installed[i], rel);
		else
			msg = ns_fmt("removed /%s%s%s", j->installed[i], u < 0 && u != -ENOENT ? ": " : "",
				     u < 0 && u != -ENOENT ? strerror(-u) : (u == -ENOENT ? " (gone already)" : ""));
		if (progress && msg)
			progress(data, msg, u == 0 || u == -ENOENT);
		free(msg);
		if (u < 0 && u != -ENOENT) {
			r = u;
			j->installed[kept++] = j->installed[i];
		} else {
			free(j->installed[i]);
		}
	}
	j->ninstalled = kept;
	{
		int d = run_depmod(rel, progress, data);
		if (!r)
			r = d;
	}
	if (j->initramfs_updated) {
		int u = update_initramfs(rel, progress, data);
		if (!r)
			r = u;
		if (u == 0)
			j->initramfs_updated = false;
	}
	return r;
}
