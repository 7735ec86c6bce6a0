/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The checks a patched module file must pass before it is loaded: loadable (not built in),
 * the manifest's sha256, this kernel's vermagic, root-owned all the way up, and the kernel's
 * load policy taking it (lib/swap/loadpolicy.h); and, over the modules one swap loads, that what a patched module
 * imports beyond its stock module (scsi_host_alloc_node) comes from that swap. */
#define _GNU_SOURCE
#include "swap/modswap-checks.h"

#include <errno.h>
#include <fcntl.h>
#include <libkmod.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "swap/loadpolicy.h"
#include "swap/modswap-kmod.h"
#include "base/sha256.h"
#include "base/util.h"

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

int ns_swap_add_check(struct ns_swap_plan *p, bool ok, char *what, char *detail)
{
	struct ns_swap_check *nv = realloc(p->checks, (p->nchecks + 1) * sizeof(*nv));
	if (!nv || !what) {
		free(what);
		free(detail);
		return -ENOMEM;
	}
	p->checks = nv;
	nv[p->nchecks++] = (struct ns_swap_check){.what = what, .ok = ok, .detail = detail};
	p->failed_checks += !ok;
	return 0;
}

int ns_swap_check_candidate(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p,
			    const struct ns_manifest_module *mm)
{
	struct ns_root *root = sys->root;
	char hex[65], *abs = ns_swap_abs_path(root, mm->file), *vm, *stock_vm, *problem;
	const char *state = NULL;
	int sr = ns_swap_module_state(root, mm->name, &state);
	int fd, r;

	if (!abs)
		return -ENOMEM;
	/* built-in modules cannot be replaced; one not told is refused as one */
	r = ns_swap_add_check(
		p, sr == 0 && (!state || strcmp(state, "builtin") != 0), ns_fmt("%s is a loadable module", mm->name),
		sr < 0 ? ns_fmt("whether %s is built into the kernel could not be told (/sys/module/%s: %s)", mm->name,
				mm->name, strerror(-sr))
		: state && strcmp(state, "builtin") == 0
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
	/* the kernel will load it: signature enforcement and the keys it trusts, IMA, LoadPin,
	 * SELinux (lib/swap/loadpolicy.h) */
	{
		struct ns_loadpol lp;
		char *id = ns_swap_modinfo_file(ctx, abs, "sig_id"), *signer = ns_swap_modinfo_file(ctx, abs, "signer"),
		     *key = ns_swap_modinfo_file(ctx, abs, "sig_key"),
		     *hash = ns_swap_modinfo_file(ctx, abs, "sig_hashalgo"), *detail = NULL;
		struct ns_modsig sig = {.id_type = id, .signer = signer, .key = key, .hashalgo = hash};
		bool ok = false;
		r = ns_loadpol_read(root, &lp);
		if (r == 0) {
			r = ns_loadpol_judge(&lp, &sig, abs, &ok, &detail);
			ns_loadpol_free(&lp);
		}
		if (r == 0)
			r = ns_swap_add_check(p, ok, ns_fmt("%s: the kernel will load %s", mm->name, abs), detail);
		free(id);
		free(signer);
		free(key);
		free(hash);
	}
out:
	free(abs);
	return r;
}

/* name -> CRC of a module file's exported (want_exports) or imported symbols; -errno. */
struct symtab {
	char **name;
	uint64_t *crc;
	size_t n;
};

static void symtab_free(struct symtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->name[i]);
	free(t->name);
	free(t->crc);
	memset(t, 0, sizeof(*t));
}

static int symtab_read(struct kmod_ctx *ctx, const char *abspath, bool want_exports, struct symtab *t)
{
	struct kmod_module *mod = NULL;
	struct kmod_list *list = NULL, *l;
	int r;

	memset(t, 0, sizeof(*t));
	r = kmod_module_new_from_path(ctx, abspath, &mod);
	if (r < 0)
		return r;
	r = want_exports ? kmod_module_get_symbols(mod, &list) : kmod_module_get_dependency_symbols(mod, &list);
	if (r == -ENOENT || r == -ENODATA)
		r = 0; /* no symbols of that kind */
	kmod_list_foreach (l, list) {
		const char *s =
			want_exports ? kmod_module_symbol_get_symbol(l) : kmod_module_dependency_symbol_get_symbol(l);
		uint64_t c = want_exports ? kmod_module_symbol_get_crc(l) : kmod_module_dependency_symbol_get_crc(l);
		char **nn = realloc(t->name, (t->n + 1) * sizeof(*nn));
		uint64_t *nc = nn ? realloc(t->crc, (t->n + 1) * sizeof(*nc)) : NULL;
		if (nn)
			t->name = nn;
		if (nc)
			t->crc = nc;
		if (!nn || !nc || !s || !(t->name[t->n] = strdup(s))) {
			r = -ENOMEM;
			break;
		}
		t->crc[t->n++] = c;
	}
	if (want_exports)
		kmod_module_symbols_free_list(list);
	else
		kmod_module_dependency_symbols_free_list(list);
	kmod_module_unref(mod);
	if (r < 0)
		symtab_free(t);
	return r < 0 ? r : 0;
}

static const uint64_t *symtab_find(const struct symtab *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->name[i], name) == 0)
			return &t->crc[i];
	return NULL;
}

/* Which of names[0..n) the running kernel has: a stock module of it exports it (libkmod's
 * symbol index) or proc/kallsyms lists it (vmlinux, loaded modules). found[] is set. */
static void kernel_has(struct ns_system *sys, struct kmod_ctx *ctx, char *const *names, size_t n, bool *found)
{
	size_t left = 0;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int fd;

	for (size_t i = 0; i < n; i++) {
		struct kmod_list *l = NULL;
		char alias[512];
		snprintf(alias, sizeof(alias), "symbol:%s", names[i]);
		found[i] = kmod_module_new_from_lookup(ctx, alias, &l) >= 0 && l != NULL;
		kmod_module_unref_list(l);
		left += !found[i];
	}
	if (!left || (fd = ns_open_read(sys->root, "proc/kallsyms")) < 0)
		return;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return;
	}
	while (left && getline(&line, &cap, f) > 0) {
		char *name = strchr(line, ' '), *end;
		if (!name || !(name = strchr(name + 1, ' ')))
			continue;
		name++;
		end = name + strcspn(name, " \t\n");
		*end = '\0';
		for (size_t i = 0; i < n; i++)
			if (!found[i] && strcmp(names[i], name) == 0) {
				found[i] = true;
				left--;
			}
	}
	free(line);
	fclose(f);
}

int ns_swap_check_imports(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p,
			  const struct ns_manifest_module *const *mods, size_t n)
{
	struct symtab *exp = calloc(n ? n : 1, sizeof(*exp));
	int r = exp ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < n; i++) {
		char *abs = ns_swap_abs_path(sys->root, mods[i]->file);
		r = abs ? symtab_read(ctx, abs, true, &exp[i]) : -ENOMEM;
		free(abs);
		if (r == -ENOMEM)
			break;
		r = 0; /* an unreadable file fails its own checks */
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct symtab imp, stock_imp;
		char *abs = ns_swap_abs_path(sys->root, mods[i]->file), *stock = NULL, *stock_abs = NULL,
		     *problem = NULL;
		char **need = NULL;
		size_t nneed = 0;

		if (!abs)
			r = -ENOMEM;
		else if (symtab_read(ctx, abs, false, &imp) < 0)
			problem = ns_fmt("the symbols %s imports cannot be read", abs);
		else {
			if (ns_swap_stock_path(sys, mods[i]->name, &stock) < 0 ||
			    !(stock_abs = ns_swap_abs_path(sys->root, stock)) ||
			    symtab_read(ctx, stock_abs, false, &stock_imp) < 0)
				memset(&stock_imp, 0, sizeof(stock_imp)); /* no stock module: every import is new */
			/* What the stock module imports, the kernel provides (it is loaded). Anything more
			 * comes from a module this swap loads, with the CRC this one was built against, or
			 * from the kernel itself (the build's modpost checked it against Module.symvers). */
			for (size_t k = 0; k < imp.n && !problem && r == 0; k++) {
				const uint64_t *have = NULL;
				size_t from = n;
				if (symtab_find(&stock_imp, imp.name[k]))
					continue;
				for (size_t j = 0; j < n && !have; j++)
					if (j != i && (have = symtab_find(&exp[j], imp.name[k])))
						from = j;
				if (have && *have != imp.crc[k])
					problem = ns_fmt(
						"%s imports %s with CRC 0x%08llx, and %s exports it with 0x%08llx: "
						"they were not built together",
						abs, imp.name[k], (unsigned long long)imp.crc[k], mods[from]->file,
						(unsigned long long)*have);
				else if (!have && ns_strv_add(&need, &nneed, imp.name[k]) < 0)
					r = -ENOMEM;
			}
			if (r == 0 && !problem && nneed) {
				bool *found = calloc(nneed, sizeof(*found));
				if (!found)
					r = -ENOMEM;
				else
					kernel_has(sys, ctx, need, nneed, found);
				for (size_t k = 0; found && k < nneed && !problem; k++)
					if (!found[k])
						problem = ns_fmt(
							"%s imports %s, which the stock %s does not, no module this "
							"swap "
							"loads exports and the running kernel does not have: it would "
							"not "
							"load (the module it needs is missing from the manifest)",
							abs, need[k], mods[i]->name);
				free(found);
			}
			symtab_free(&stock_imp);
			symtab_free(&imp);
		}
		if (r == 0)
			r = ns_swap_add_check(
				p, !problem,
				ns_fmt("%s: what it imports beyond the stock module is there when it loads "
				       "(this swap, the kernel; same CRCs)",
				       mods[i]->name),
				problem);
		else
			free(problem);
		ns_strv_free(need, nneed);
		free(abs);
		free(stock);
		free(stock_abs);
	}
	for (size_t i = 0; exp && i < n; i++)
		symtab_free(&exp[i]);
	free(exp);
	return r;
}
