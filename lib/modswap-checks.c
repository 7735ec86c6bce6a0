/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The checks a patched module file must pass before it is loaded: loadable (not built in),
 * the manifest's sha256, this kernel's vermagic, root-owned all the way up, and a signature
 * the kernel's policy accepts. */
#define _GNU_SOURCE
#include "modswap-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libkmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"
#include "util.h"

/* The file and every directory above it: root-owned, not writable by group or others. */
static char *ownership_problem(struct ns_root *root, const char *rel)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s", rel);
	for (;;) {
		struct stat st;
		char *slash;
		if (ns_stat(root, p[0] ? p : ".", &st) < 0)
			return ns_fmt("/%s cannot be examined", p);
		if (st.st_uid != 0)
			return ns_fmt("/%s is owned by uid %u, not root", p, (unsigned)st.st_uid);
		if (st.st_mode & 022)
			return ns_fmt("/%s is writable by group or others (mode %04o)", p,
				      (unsigned)(st.st_mode & 07777));
		if (!p[0])
			return NULL;
		slash = strrchr(p, '/');
		if (slash)
			*slash = '\0';
		else
			p[0] = '\0';
	}
}

int ns_swap_check_candidate(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p,
			    const struct ns_manifest_module *mm)
{
	struct ns_root *root = sys->root;
	char hex[65], *abs = ns_swap_abs_path(root, mm->file), *vm, *stock_vm, *problem, *sig;
	const char *state = ns_swap_module_state(root, mm->name);
	int fd, r;
	bool enforce = false;

	if (!abs)
		return -ENOMEM;
	/* built-in modules cannot be replaced */
	r = ns_swap_add_check(
		p, !state || strcmp(state, "builtin") != 0, ns_fmt("%s is a loadable module", mm->name),
		state && strcmp(state, "builtin") == 0
			? ns_fmt("%s is built into the kernel: it cannot be replaced at runtime", mm->name)
			: NULL);
	if (r < 0)
		goto out;
	/* the file is the one the manifest describes */
	fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || ns_sha256_fd(fd, hex) < 0) {
		r = ns_swap_add_check(p, false, ns_fmt("%s: sha256 matches the manifest", mm->name),
				      ns_fmt("%s cannot be read: %s", abs, strerror(errno)));
	} else {
		bool ok = strcmp(hex, mm->sha256) == 0;
		r = ns_swap_add_check(p, ok, ns_fmt("%s: sha256 matches the manifest", mm->name),
				      ok ? NULL
					 : ns_fmt("%s has sha256 %s, the manifest says %s", abs, hex, mm->sha256));
	}
	if (fd >= 0)
		close(fd);
	if (r < 0)
		goto out;
	/* built for this kernel */
	vm = ns_swap_modinfo_file(ctx, abs, "vermagic");
	stock_vm = ns_swap_modinfo_stock(ctx, mm->name, "vermagic");
	{
		bool ok = vm && (!mm->vermagic || strcmp(vm, mm->vermagic) == 0) &&
			  (stock_vm ? strcmp(vm, stock_vm) == 0
				    : sys->machine.kernel_release && strncmp(vm, sys->machine.kernel_release,
									     strlen(sys->machine.kernel_release)) == 0);
		r = ns_swap_add_check(
			p, ok, ns_fmt("%s: vermagic matches the running kernel", mm->name),
			ok ? NULL
			   : ns_fmt("%s has vermagic '%s'; the running kernel's modules have '%s'", abs, vm ? vm : "?",
				    stock_vm ? stock_vm
					     : (sys->machine.kernel_release ? sys->machine.kernel_release : "?")));
	}
	free(vm);
	free(stock_vm);
	if (r < 0)
		goto out;
	/* nobody but root could have changed it */
	problem = ownership_problem(root, mm->file);
	r = ns_swap_add_check(p, !problem,
			      ns_fmt("%s: file and directories are root-owned and not group/world-writable", mm->name),
			      problem);
	if (r < 0)
		goto out;
	/* the kernel's signature policy will take it */
	{
		char *se = NULL, *ld = NULL;
		if (ns_read_str(root, "sys/module/module/parameters/sig_enforce", &se) == 0 && se[0] == 'Y')
			enforce = true;
		if (ns_read_str(root, "sys/kernel/security/lockdown", &ld) == 0 &&
		    (strstr(ld, "[integrity]") || strstr(ld, "[confidentiality]")))
			enforce = true;
		sig = ns_swap_modinfo_file(ctx, abs, "sig_id");
		r = ns_swap_add_check(
			p, !enforce || sig, ns_fmt("%s: the kernel's signature policy accepts it", mm->name),
			enforce && !sig
				? ns_fmt("the kernel only loads signed modules (%s) and %s is unsigned: sign it with "
					 "a key the kernel trusts (MOK), or install it for a boot without enforcement",
					 se && se[0] == 'Y' ? "module.sig_enforce" : "lockdown", abs)
				: (!sig ? ns_fmt("unsigned: loading taints the kernel (O, E)") : NULL));
		free(se);
		free(ld);
		free(sig);
	}
out:
	free(abs);
	return r;
}
