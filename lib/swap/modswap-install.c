/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Installing the patched modules for the next boot, and removing them. What --install writes
 * passed the checks a swap's files pass (ns_swap_install_check adds those the plan did not
 * run), and the boot is never left half-done: the files and depmod first, then what libkmod
 * resolves each name to (what modprobe loads), then the initramfs built into a file of its
 * own and read back (lsinitramfs) before it is renamed over /boot/initrd.img-REL. Any failure
 * undoes the prefix; each step is journaled before it is taken, so --revert undoes any prefix
 * too, also after a kill.
 */
#define _GNU_SOURCE
#include "swap/modswap-install.h"

#include <errno.h>
#include <fcntl.h>
#include <libkmod.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "act/exec.h"
#include "swap/modswap-checks.h"
#include "swap/modswap-kmod.h"
#include "base/util.h"

static const char *const depmod_paths[] = {"/usr/sbin/depmod", "/sbin/depmod", NULL};
static const char *const mkinitramfs_paths[] = {"/usr/sbin/mkinitramfs", "/sbin/mkinitramfs", NULL};
static const char *const lsinitramfs_paths[] = {"/usr/bin/lsinitramfs", "/bin/lsinitramfs", NULL};
/* what tells initramfs-tools from the tools numastor does not know (root-relative) */
static const char *const initramfs_tools_marks[] = {"usr/sbin/update-initramfs", "sbin/update-initramfs", NULL};
static const char *const dracut_marks[] = {"usr/bin/dracut", "usr/sbin/dracut", "sbin/dracut", "bin/dracut", NULL};
static const char *const kernel_install_marks[] = {"usr/bin/kernel-install", "etc/kernel/install.conf",
						   "boot/efi/EFI/Linux", "efi/EFI/Linux", NULL};
/* where else depmod finds a module of the release, at updates/numastor's priority or beside it */
static const char *const other_dirs[] = {"updates", "extra", "weak-updates", NULL};

/* The first of marks that exists in root, or NULL; one that could not be looked at ends the
 * search: NULL, and *unread names it with its errno (the first such of the check). */
static const char *first_present(struct ns_root *root, const char *const *marks, const char **unread, int *err)
{
	for (size_t i = 0; marks[i]; i++) {
		int r = ns_probe(root, marks[i]);
		if (r == 1)
			return marks[i];
		if (r < 0) {
			if (!*unread) {
				*unread = marks[i];
				*err = r;
			}
			return NULL;
		}
	}
	return NULL;
}

/* Run a program found at one of paths; each run is reported through progress. out: its
 * stdout (caller frees), or NULL when not wanted. */
static int run_program_out(const char *const *paths, const char *what, char *const *args, char **out,
			   ns_swap_progress progress, void *data)
{
	const char *path = ns_exec_find(paths);
	struct ns_exec_result res;
	char *argv[8], *msg;
	size_t n = 0;
	int r;

	if (out)
		*out = NULL;
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
	r = ns_exec_run(path, argv, out != NULL, &res);
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
		if (out) {
			*out = res.out;
			res.out = NULL;
		}
	}
	/* a listing is read, not reported: only its failure is */
	if (progress && msg && (!out || r < 0))
		progress(data, msg, r == 0);
	free(msg);
	ns_exec_result_free(&res);
	return r;
}

static int run_program(const char *const *paths, const char *what, char *const *args, ns_swap_progress progress,
		       void *data)
{
	return run_program_out(paths, what, args, NULL, progress, data);
}

static int run_depmod(const char *release, ns_swap_progress progress, void *data)
{
	char *args[] = {"-a", (char *)release, NULL};
	return run_program(depmod_paths, "depmod", args, progress, data);
}

static char *initrd_path(const char *release)
{
	return ns_fmt("boot/initrd.img-%s", release);
}

/* Module names as the kernel compares them: '-' and '_' are one. */
static bool same_name(const char *a, const char *b, size_t blen)
{
	size_t i = 0;
	for (; a[i] && i < blen; i++)
		if (a[i] != b[i] && !((a[i] == '-' || a[i] == '_') && (b[i] == '-' || b[i] == '_')))
			return false;
	return !a[i] && i == blen;
}

/* Is file (a base name) a module file of name: NAME.ko, compressed or not? */
static bool module_file_of(const char *file, const char *name)
{
	static const char *const exts[] = {".ko", ".ko.xz", ".ko.zst", ".ko.gz", NULL};
	size_t fl = strlen(file);
	for (size_t i = 0; exts[i]; i++) {
		size_t el = strlen(exts[i]);
		if (fl > el && strcmp(file + fl - el, exts[i]) == 0 && same_name(name, file, fl - el))
			return true;
	}
	return false;
}

void ns_swap_initramfs_carries(const char *listing, const char *name, bool *numastor, bool *other)
{
	*numastor = *other = false;
	for (const char *l = listing; l && *l;) {
		size_t len = strcspn(l, "\n");
		char line[PATH_MAX];
		const char *base;
		snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), l);
		base = strrchr(line, '/');
		base = base ? base + 1 : line;
		if (module_file_of(base, name)) {
			if (strstr(line, "/updates/numastor/"))
				*numastor = true;
			else
				*other = true;
		}
		l += len + (l[len] == '\n');
	}
}

/* Every path under lib/modules/REL/DIR (depth-limited) that is a module file of name, but
 * numastor's own updates/numastor: added to found. */
static int other_copies(struct ns_root *root, const char *dir, const char *name, int depth, char ***found,
			size_t *nfound)
{
	char **v = NULL;
	size_t n = 0;
	int r = 0;

	if (depth > 8 || ns_list_dir(root, dir, &v, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		char *p = ns_fmt("%s/%s", dir, v[i]);
		struct stat st;
		if (!p) {
			r = -ENOMEM;
			break;
		}
		if (depth == 0 && strcmp(v[i], "numastor") == 0 && strstr(dir, "/updates"))
			; /* numastor's own: what --install writes */
		else if (module_file_of(v[i], name))
			r = ns_strv_add(found, nfound, p);
		else if (ns_stat(root, p, &st) == 0 && S_ISDIR(st.st_mode))
			r = other_copies(root, p, name, depth + 1, found, nfound);
		free(p);
	}
	ns_strv_free(v, n);
	return r;
}

/* One check: which tool builds this release's initramfs, and that numastor knows it. */
static int check_initramfs_tool(struct ns_system *sys, struct ns_swap_plan *p, const char *rel)
{
	struct ns_root *root = sys->root;
	const char *unread = NULL;
	int uerr = 0;
	const char *dracut = first_present(root, dracut_marks, &unread, &uerr),
		   *tools = first_present(root, initramfs_tools_marks, &unread, &uerr);
	const char *mk = first_present(root, (const char *const[]){"usr/sbin/mkinitramfs", "sbin/mkinitramfs", NULL},
				       &unread, &uerr);
	const char *ls = first_present(root, (const char *const[]){"usr/bin/lsinitramfs", "bin/lsinitramfs", NULL},
				       &unread, &uerr);
	char *initrd = initrd_path(rel), *problem = NULL;
	struct stat st;
	int sr = 0;

	if (!initrd)
		return -ENOMEM;
	if (unread)
		problem = ns_fmt("/%s could not be looked at (%s): which tool builds this machine's initramfs is "
				 "not known",
				 unread, strerror(-uerr));
	else if (dracut)
		problem = ns_fmt("dracut is installed (/%s): numastor knows only initramfs-tools' initramfs and "
				 "does not rewrite one another tool builds",
				 dracut);
	else if (!tools || !mk)
		problem = ns_fmt("initramfs-tools is not installed (no /usr/sbin/update-initramfs or "
				 "/usr/sbin/mkinitramfs): numastor does not know what builds this machine's "
				 "initramfs");
	else if (!ls)
		problem = ns_fmt("no /usr/bin/lsinitramfs: the initramfs could not be read back");
	else if ((sr = ns_stat(root, initrd, &st)) < 0 || !S_ISREG(st.st_mode)) {
		/* a UKI or kernel-install layout, or no initramfs at all: say what is there */
		const char *ki = first_present(root, kernel_install_marks, &unread, &uerr);
		char **v = NULL, *seen = NULL;
		size_t n = 0;
		ns_list_dir(root, "boot", &v, &n);
		for (size_t i = 0; i < n; i++)
			if (strstr(v[i], rel)) {
				char *s = ns_fmt("%s%s/boot/%s", seen ? seen : "", seen ? ", " : "", v[i]);
				free(seen);
				seen = s;
			}
		ns_strv_free(v, n);
		problem = ns_fmt("/%s %s (for this release /boot holds %s%s%s): numastor rewrites only "
				 "initramfs-tools' /boot/initrd.img-RELEASE",
				 initrd, sr < 0 ? "does not exist" : "is not a regular file", seen ? seen : "nothing",
				 ki ? "; kernel-install or a UKI: /" : "", ki ? ki : "");
		free(seen);
	}
	{
		int r = ns_swap_add_check(p, !problem,
					  ns_fmt("--install: the initramfs is initramfs-tools' /%s", initrd), problem);
		free(initrd);
		return r;
	}
}

/* Did the plan run the candidate checks of mm: its group's top module not loaded (plan_group
 * checks all of its files then), or an insert step loads this very file. */
static bool plan_checked(struct ns_system *sys, const struct ns_swap_plan *p, const struct ns_manifest_module *mm)
{
	bool nvme = strcmp(mm->name, "nvme") == 0;

	if (ns_swap_module_loaded(sys->root, nvme ? "nvme" : "scsi_mod") == 0)
		return true; /* not loaded; loaded or not told: the checks are run here */
	for (size_t i = 0; i < p->nsteps; i++)
		if (!p->steps[i].remove && p->steps[i].file && strcmp(p->steps[i].file, mm->file) == 0)
			return true;
	return false;
}

int ns_swap_install_check(struct ns_system *sys, struct ns_swap_plan *p)
{
	const char *rel = sys->machine.kernel_release;
	struct kmod_ctx *ctx = NULL;
	const struct ns_manifest_module **mods = NULL;
	bool *unchecked = NULL;
	size_t nm = 0, nunchecked = 0;
	int r = 0;

	if (!rel)
		return ns_swap_add_check(p, false, ns_fmt("--install: the running kernel's release is known"),
					 ns_fmt("proc/sys/kernel/osrelease cannot be read"));
	mods = calloc(p->manifest.n + 1, sizeof(*mods));
	unchecked = calloc(p->manifest.n + 1, sizeof(*unchecked));
	if (!mods || !unchecked) {
		r = -ENOMEM;
		goto out;
	}
	/* every file it copies passes a swap's checks: those the plan left out (a module of a loaded
	 * group that is not loaded itself) get them here, and what they import is checked over the
	 * whole group they load with at the next boot */
	for (size_t g = 0; g < 2 && r == 0; g++) {
		struct ns_swap_plan scratch = {0};
		nm = nunchecked = 0;
		for (size_t i = 0; i < p->manifest.n; i++)
			if ((strcmp(p->manifest.v[i].name, "nvme") == 0) == (g == 0)) {
				unchecked[nm] = !plan_checked(sys, p, &p->manifest.v[i]);
				nunchecked += unchecked[nm];
				mods[nm++] = &p->manifest.v[i];
			}
		if (!nunchecked)
			continue;
		if (!ctx && !(ctx = kmod_new(NULL, NULL))) {
			r = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < nm && r == 0; i++)
			if (unchecked[i])
				r = ns_swap_check_candidate(sys, ctx, p, mods[i]);
		/* ns_swap_check_imports adds one check per module, in order: keep the new ones' */
		if (r == 0)
			r = ns_swap_check_imports(sys, ctx, &scratch, mods, nm);
		for (size_t i = 0; r == 0 && i < nm && i < scratch.nchecks; i++)
			if (unchecked[i]) {
				r = ns_swap_add_check(p, scratch.checks[i].ok, scratch.checks[i].what,
						      scratch.checks[i].detail);
				scratch.checks[i].what = scratch.checks[i].detail = NULL;
			}
		ns_swap_plan_free(&scratch);
	}
	/* no other copy of a module beside numastor's: which one depmod picks would be arbitrary */
	for (size_t i = 0; r == 0 && i < p->manifest.n; i++) {
		const char *name = p->manifest.v[i].name;
		char **found = NULL, *problem = NULL;
		size_t nfound = 0;
		for (size_t d = 0; other_dirs[d] && r == 0; d++) {
			char *dir = ns_fmt("lib/modules/%s/%s", rel, other_dirs[d]);
			r = dir ? other_copies(sys->root, dir, name, 0, &found, &nfound) : -ENOMEM;
			free(dir);
		}
		for (size_t k = 0; r == 0 && k < nfound; k++) {
			char *s = ns_fmt("%s%s/%s", problem ? problem : "", problem ? ", " : "", found[k]);
			free(problem);
			problem = s;
			if (!s)
				r = -ENOMEM;
		}
		if (r == 0 && problem) {
			char *s = ns_fmt("another %s is installed for this kernel: %s; depmod ranks it with "
					 "updates/numastor, so which one loads would be arbitrary: remove it (dkms "
					 "remove, or the package that installed it) first",
					 name, problem);
			free(problem);
			problem = s;
		}
		ns_strv_free(found, nfound);
		if (r == 0)
			r = ns_swap_add_check(
				p, !problem,
				ns_fmt("--install: no other %s under /lib/modules/%s/{updates,extra,weak-updates}",
				       name, rel),
				problem);
		else
			free(problem);
	}
	if (r == 0)
		r = check_initramfs_tool(sys, p, rel);
out:
	free(mods);
	free(unchecked);
	if (ctx)
		kmod_unref(ctx);
	return r;
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

/* fsync a directory of the live root (a rename in it made durable). */
static int sync_dir(struct ns_root *root, const char *rel)
{
	char *abs = ns_swap_abs_path(root, rel);
	int fd = abs ? open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1, r = 0;

	if (!abs)
		return -ENOMEM;
	if (fd < 0 || fsync(fd) < 0)
		r = -errno;
	if (fd >= 0)
		close(fd);
	free(abs);
	return r;
}

static char *installed_path(const char *rel, const struct ns_manifest_module *mm)
{
	const char *base = strrchr(mm->file, '/');
	return ns_fmt("lib/modules/%s/updates/numastor/%s", rel, base ? base + 1 : mm->file);
}

int ns_swap_install_prepare(struct ns_system *sys, const struct ns_swap_plan *p, struct ns_swap_journal *j)
{
	const char *rel = sys->machine.kernel_release;
	int r = 0;

	if (!ns_root_is_live(sys->root) || !rel)
		return -EOPNOTSUPP;
	if (j->kernel_release && strcmp(j->kernel_release, rel) != 0)
		return -EXDEV; /* an install of another release is journaled: --revert it first */
	for (size_t i = 0; r == 0 && i < p->manifest.n; i++) {
		char *to = installed_path(rel, &p->manifest.v[i]);
		r = to ? ns_strv_add_unique(&j->installed, &j->ninstalled, to) : -ENOMEM;
		free(to);
	}
	if (r == 0 && !j->kernel_release && !(j->kernel_release = strdup(rel)))
		r = -ENOMEM;
	if (r == 0 && !j->boot_id)
		j->boot_id = ns_swap_boot_id(sys->root);
	return r;
}

/*
 * What modprobe resolves each name to now (libkmod's lookup on this release's indexes, as
 * `modprobe --show-depends` does) must be the file installed: NULL when every one is, else
 * what it resolves to instead.
 */
static char *lookup_problem(struct ns_system *sys, const struct ns_swap_plan *p, const char *rel)
{
	char *modules = ns_fmt("lib/modules/%s", rel), *dir = modules ? ns_swap_abs_path(sys->root, modules) : NULL,
	     *problem = NULL;
	struct kmod_ctx *ctx = dir ? kmod_new(dir, NULL) : NULL;

	free(modules);
	if (!ctx) {
		free(dir);
		return ns_fmt("libkmod cannot open /lib/modules/%s", rel);
	}
	for (size_t i = 0; i < p->manifest.n && !problem; i++) {
		const char *name = p->manifest.v[i].name;
		struct kmod_list *l = NULL;
		struct kmod_module *m = NULL;
		char *want = installed_path(rel, &p->manifest.v[i]), *want_real = NULL, *got_real = NULL;
		const char *got = NULL;
		if (kmod_module_new_from_lookup(ctx, name, &l) >= 0 && l)
			m = kmod_module_get_module(l);
		got = m ? kmod_module_get_path(m) : NULL;
		if (want)
			ns_realpath(sys->root, want, &want_real);
		if (got)
			ns_realpath(sys->root, got, &got_real);
		if (!want_real || !got_real || strcmp(want_real, got_real) != 0)
			problem = ns_fmt("modprobe %s resolves to %s, not /%s", name, got ? got : "nothing",
					 want ? want : "?");
		if (m)
			kmod_module_unref(m);
		kmod_module_unref_list(l);
		free(want);
		free(want_real);
		free(got_real);
	}
	kmod_unref(ctx);
	free(dir);
	return problem;
}

/* Run mkinitramfs into the journaled new file (absolute paths) and read it back: NULL when
 * it carries what it must (to_numastor: each of carried[] from updates/numastor and no other
 * copy of it; else no file of updates/numastor), else why not. r: the run's result. */
static char *build_initramfs(struct ns_system *sys, const struct ns_swap_plan *p, const bool *carried, bool to_numastor,
			     const char *rel, const char *newrel, ns_swap_progress progress, void *data, int *r)
{
	char *abs = ns_swap_abs_path(sys->root, newrel), *listing = NULL, *problem = NULL;
	char *mk[] = {"-o", abs, (char *)rel, NULL}, *ls[] = {abs, NULL};

	if (!abs) {
		*r = -ENOMEM;
		return NULL;
	}
	*r = run_program(mkinitramfs_paths, "mkinitramfs", mk, progress, data);
	if (*r == 0)
		*r = run_program_out(lsinitramfs_paths, "lsinitramfs", ls, &listing, progress, data);
	if (*r == 0 && to_numastor) {
		for (size_t i = 0; i < p->manifest.n && !problem; i++) {
			bool ours, other;
			if (!carried[i])
				continue;
			ns_swap_initramfs_carries(listing, p->manifest.v[i].name, &ours, &other);
			if (!ours || other)
				problem = ns_fmt("%s %s: %s", abs, !ours ? "lacks" : "carries another copy of",
						 p->manifest.v[i].name);
		}
	} else if (*r == 0 && listing && strstr(listing, "/updates/numastor/"))
		problem = ns_fmt("%s still carries a file of updates/numastor", abs);
	if (problem)
		*r = -EIO;
	free(listing);
	free(abs);
	return problem;
}

/* Remove the new initramfs j journals (the rename did not happen): the one at /boot stays. */
static int drop_initramfs_new(struct ns_system *sys, struct ns_swap_journal *j, ns_swap_progress progress, void *data)
{
	int u;
	char *msg;

	if (!j->initramfs_new)
		return 0;
	u = ns_unlink(sys->root, j->initramfs_new);
	msg = ns_fmt("removed /%s%s%s", j->initramfs_new, u < 0 && u != -ENOENT ? ": " : "",
		     u == -ENOENT ? " (not written)"
		     : u < 0	  ? strerror(-u)
				  : "");
	if (progress && msg)
		progress(data, msg, u == 0 || u == -ENOENT);
	free(msg);
	if (u < 0 && u != -ENOENT)
		return u;
	free(j->initramfs_new);
	j->initramfs_new = NULL;
	return 0;
}

/* Build the new initramfs and rename it over /boot's, each step journaled first. */
static int replace_initramfs(struct ns_system *sys, const struct ns_swap_plan *p, struct ns_swap_journal *j,
			     const bool *carried, bool to_numastor, const char *rel, ns_swap_progress progress,
			     void *data)
{
	char *initrd = initrd_path(rel), *problem = NULL;
	int r = 0;

	if (!initrd)
		return -ENOMEM;
	free(j->initramfs_new);
	j->initramfs_new = ns_swap_initramfs_new(rel);
	if (!j->initramfs_new)
		r = -ENOMEM;
	if (r == 0)
		r = ns_swap_journal_save(sys->root, j);
	if (r == 0)
		problem = build_initramfs(sys, p, carried, to_numastor, rel, j->initramfs_new, progress, data, &r);
	if (problem && progress)
		progress(data, problem, false);
	free(problem);
	if (r == 0) {
		/* from here the initramfs at /boot is numastor's (or, on the way back, the stock one) */
		bool was = j->initramfs_updated;
		j->initramfs_updated = to_numastor || was;
		r = ns_swap_journal_save(sys->root, j);
		if (r == 0) {
			char *from = ns_swap_abs_path(sys->root, j->initramfs_new),
			     *to = ns_swap_abs_path(sys->root, initrd);
			r = !from || !to ? -ENOMEM : rename(from, to) < 0 ? -errno : 0;
			if (r == 0)
				sync_dir(sys->root, "boot");
			{
				char *msg = ns_fmt("renamed %s over %s%s%s", from ? from : "?", to ? to : "?",
						   r ? ": " : "", r ? strerror(-r) : "");
				if (progress && msg)
					progress(data, msg, r == 0);
				free(msg);
			}
			free(from);
			free(to);
		}
		if (r == 0) {
			j->initramfs_updated = to_numastor;
			free(j->initramfs_new);
			j->initramfs_new = NULL;
			ns_swap_journal_save(sys->root, j);
		} else {
			j->initramfs_updated = was; /* /boot's is as it was */
		}
	}
	free(initrd);
	return r;
}

/* Undo what an --install did of its steps (the files, depmod, the new initramfs): the boot as
 * it was. The journal keeps what could not be undone. */
static int undo_install(struct ns_system *sys, struct ns_swap_journal *j, ns_swap_progress progress, void *data)
{
	int r = ns_swap_uninstall(sys, j, progress, data);
	char *dir = ns_fmt("lib/modules/%s/updates/numastor", sys->machine.kernel_release);
	if (dir && j->ninstalled == 0)
		ns_rmdir(sys->root, dir); /* numastor's own, when nothing else is in it */
	free(dir);
	return r;
}

int ns_swap_install(struct ns_system *sys, const struct ns_swap_plan *p, struct ns_swap_journal *j,
		    ns_swap_progress progress, void *data)
{
	const char *rel = sys->machine.kernel_release;
	char *initrd, *listing = NULL, *problem = NULL, dir[512];
	bool *carried = NULL, any = false;
	int r;

	if (!ns_root_is_live(sys->root) || !rel)
		return -EOPNOTSUPP;
	if (p->failed_checks)
		return -EPERM;
	/* before anything is written: which of the modules the initramfs at /boot carries now */
	initrd = initrd_path(rel);
	carried = calloc(p->manifest.n + 1, sizeof(*carried));
	if (!initrd || !carried) {
		free(initrd);
		free(carried);
		return -ENOMEM;
	}
	{
		char *abs = ns_swap_abs_path(sys->root, initrd), *ls[] = {abs, NULL};
		r = abs ? run_program_out(lsinitramfs_paths, "lsinitramfs", ls, &listing, progress, data) : -ENOMEM;
		free(abs);
	}
	for (size_t i = 0; r == 0 && i < p->manifest.n; i++) {
		bool ours, other;
		ns_swap_initramfs_carries(listing, p->manifest.v[i].name, &ours, &other);
		carried[i] = ours || other;
		any |= carried[i];
	}
	free(listing);
	free(initrd);
	if (r < 0) {
		/* nothing written: the journal forgets the files it named for this install */
		size_t kept = 0;
		for (size_t i = 0; i < j->ninstalled; i++) {
			if (ns_probe(sys->root, j->installed[i]) != 0) /* there, or not told: kept */
				j->installed[kept++] = j->installed[i];
			else
				free(j->installed[i]);
		}
		j->ninstalled = kept;
		free(carried);
		return r;
	}
	/* the files (journaled by the caller, saved here again: each step is journaled first) */
	r = ns_swap_journal_save(sys->root, j);
	snprintf(dir, sizeof(dir), "lib/modules/%s/updates/numastor", rel);
	if (r == 0)
		r = ns_mkdir_p(sys->root, dir);
	for (size_t i = 0; r == 0 && i < p->manifest.n; i++) {
		char *to = installed_path(rel, &p->manifest.v[i]), *msg;
		if (!to) {
			r = -ENOMEM;
			break;
		}
		if (!ns_strv_has(j->installed, j->ninstalled, to))
			r = -EINVAL; /* not journaled first */
		if (r == 0)
			r = copy_file(sys->root, p->manifest.v[i].file, to);
		msg = ns_fmt("installed /%s%s%s", to, r ? ": " : "", r ? strerror(-r) : "");
		if (progress && msg)
			progress(data, msg, r == 0);
		free(msg);
		free(to);
	}
	if (r == 0)
		r = run_depmod(rel, progress, data);
	/* what modprobe loads now: numastor's file for each name, or nothing stays */
	if (r == 0 && (problem = lookup_problem(sys, p, rel))) {
		if (progress)
			progress(data, problem, false);
		r = -EXDEV;
	}
	free(problem);
	if (r == 0 && any)
		r = replace_initramfs(sys, p, j, carried, true, rel, progress, data);
	free(carried);
	if (r < 0) {
		int u;
		if (progress)
			progress(data, "undoing the install: the boot as it was", true);
		u = drop_initramfs_new(sys, j, progress, data);
		if (u == 0)
			u = undo_install(sys, j, progress, data);
		if (u < 0)
			ns_swap_journal_save(sys->root, j);
	}
	return r;
}

int ns_swap_uninstall(struct ns_system *sys, struct ns_swap_journal *j, ns_swap_progress progress, void *data)
{
	const char *rel = j->kernel_release ? j->kernel_release : sys->machine.kernel_release;
	size_t kept = 0;
	int r = 0;

	if (!ns_root_is_live(sys->root) || !rel)
		return -EOPNOTSUPP;
	/* an initramfs being built when the install stopped: /boot's own is untouched */
	r = drop_initramfs_new(sys, j, progress, data);
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
			if (!r)
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
	/* the initramfs at /boot is numastor's: built again without its files, read back, renamed */
	if (r == 0 && j->initramfs_updated) {
		struct ns_swap_plan none = {0};
		r = replace_initramfs(sys, &none, j, NULL, false, rel, progress, data);
		if (r < 0)
			drop_initramfs_new(sys, j, progress, data);
	}
	return r;
}
