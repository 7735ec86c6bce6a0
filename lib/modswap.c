/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "modswap.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libkmod.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#include "sha256.h"

/* ---- manifest ---- */

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

int ns_manifest_load(struct ns_root *root, const char *dir, struct ns_manifest *m)
{
	char path[4096], *txt;
	struct json_object *doc, *mods, *up;
	int r;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	r = ns_read_str(root, path, &txt);
	if (r < 0)
		return r == -ENODATA ? -EINVAL : r;
	doc = json_tokener_parse(txt);
	free(txt);
	if (!doc || !jstr(doc, "kernel_release") || !json_object_object_get_ex(doc, "modules", &mods) ||
	    !json_object_is_type(mods, json_type_array)) {
		json_object_put(doc);
		return -EINVAL;
	}
	m->dir = strdup(dir);
	m->kernel_release = strdup(jstr(doc, "kernel_release"));
	m->v = calloc(json_object_array_length(mods) + 1, sizeof(*m->v));
	if (!m->dir || !m->kernel_release || !m->v) {
		r = -ENOMEM;
		goto bad;
	}
	for (size_t i = 0; i < json_object_array_length(mods); i++) {
		struct json_object *e = json_object_array_get_idx(mods, i), *p;
		struct ns_manifest_module *mm = &m->v[m->n];
		const char *name = jstr(e, "name"), *file = jstr(e, "file"), *sha = jstr(e, "sha256");
		if (!name || !file || !sha || strchr(file, '/')) {
			r = -EINVAL; /* a file name, never a path out of the directory */
			goto bad;
		}
		mm->name = strdup(name);
		mm->file = ns_fmt("%s/%s", dir, file);
		mm->sha256 = strdup(sha);
		mm->vermagic = jstr(e, "vermagic") ? strdup(jstr(e, "vermagic")) : NULL;
		mm->srcversion = jstr(e, "srcversion") ? strdup(jstr(e, "srcversion")) : NULL;
		m->n++;
		if (json_object_object_get_ex(e, "patches", &p) && json_object_is_type(p, json_type_array))
			for (size_t k = 0; k < json_object_array_length(p); k++) {
				const char *s = json_object_get_string(json_object_array_get_idx(p, k));
				if (s && ns_strv_add(&mm->patches, &mm->npatches, s) < 0) {
					r = -ENOMEM;
					goto bad;
				}
			}
		if (!mm->name || !mm->file || !mm->sha256) {
			r = -ENOMEM;
			goto bad;
		}
	}
	if (json_object_object_get_ex(doc, "already_upstream", &up) && json_object_is_type(up, json_type_array))
		for (size_t k = 0; k < json_object_array_length(up); k++) {
			const char *s = jstr(json_object_array_get_idx(up, k), "series");
			if (s && !ns_strv_has(m->upstream, m->nupstream, s) &&
			    ns_strv_add(&m->upstream, &m->nupstream, s) < 0) {
				r = -ENOMEM;
				goto bad;
			}
		}
	json_object_put(doc);
	return 0;
bad:
	json_object_put(doc);
	ns_manifest_free(m);
	return r;
}

void ns_manifest_free(struct ns_manifest *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].name);
		free(m->v[i].file);
		free(m->v[i].sha256);
		free(m->v[i].vermagic);
		free(m->v[i].srcversion);
		ns_strv_free(m->v[i].patches, m->v[i].npatches);
	}
	free(m->v);
	ns_strv_free(m->upstream, m->nupstream);
	free(m->dir);
	free(m->kernel_release);
	memset(m, 0, sizeof(*m));
}

const struct ns_manifest_module *ns_manifest_find(const struct ns_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i];
	return NULL;
}

/* ---- plan ---- */

static int add_check(struct ns_swap_plan *p, bool ok, char *what, char *detail)
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

static int add_step(struct ns_swap_plan *p, const char *module, const char *file, bool remove)
{
	struct ns_swap_step *nv = realloc(p->steps, (p->nsteps + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	p->steps = nv;
	nv[p->nsteps] =
		(struct ns_swap_step){.module = strdup(module), .file = file ? strdup(file) : NULL, .remove = remove};
	if (!nv[p->nsteps].module)
		return -ENOMEM;
	p->nsteps++;
	return 0;
}

/* "live", "builtin" or NULL (not loaded), from the rooted sysfs. */
static const char *module_state(struct ns_root *root, const char *name)
{
	char path[256], *s = NULL;
	static char state[16];

	snprintf(path, sizeof(path), "sys/module/%s", name);
	if (!ns_exists(root, path))
		return NULL;
	snprintf(path, sizeof(path), "sys/module/%s/initstate", name);
	if (ns_read_str(root, path, &s) < 0)
		return "builtin";
	snprintf(state, sizeof(state), "%s", s);
	free(s);
	return state;
}

/* Holders of a module that are themselves modules, from sys/module/NAME/holders. */
static void module_holders(struct ns_root *root, const char *name, char ***v, size_t *n)
{
	char path[256];
	snprintf(path, sizeof(path), "sys/module/%s/holders", name);
	if (ns_list_dir(root, path, v, n) < 0) {
		*v = NULL;
		*n = 0;
	}
}

/* The first value of a modinfo key of mod (consumed). */
static char *modinfo_key(struct kmod_module *mod, const char *key)
{
	struct kmod_list *info = NULL, *l;
	char *val = NULL;

	if (kmod_module_get_info(mod, &info) >= 0) {
		kmod_list_foreach (l, info) {
			if (strcmp(kmod_module_info_get_key(l), key) == 0 && !val) {
				const char *v = kmod_module_info_get_value(l);
				val = strdup(v ? v : "");
			}
		}
		kmod_module_info_free_list(info);
	}
	kmod_module_unref(mod);
	return val;
}

/* modinfo key of a .ko file (absolute path) through libkmod. */
static char *modinfo_file(struct kmod_ctx *ctx, const char *abspath, const char *key)
{
	struct kmod_module *mod = NULL;
	return ctx && kmod_module_new_from_path(ctx, abspath, &mod) == 0 ? modinfo_key(mod, key) : NULL;
}

/* modinfo key of the stock module called name (modules.dep of the running kernel). */
static char *modinfo_stock(struct kmod_ctx *ctx, const char *name, const char *key)
{
	struct kmod_module *mod = NULL;
	return ctx && kmod_module_new_from_name(ctx, name, &mod) == 0 ? modinfo_key(mod, key) : NULL;
}

static char *abs_path(struct ns_root *root, const char *rel)
{
	const char *dir = ns_root_path(root);
	return ns_fmt("%s%s%s", strcmp(dir, "/") == 0 ? "" : dir, rel[0] == '/' ? "" : "/", rel);
}

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

static int check_candidate(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p,
			   const struct ns_manifest_module *mm)
{
	struct ns_root *root = sys->root;
	char hex[65], *abs = abs_path(root, mm->file), *vm, *stock_vm, *problem, *sig;
	const char *state = module_state(root, mm->name);
	int fd, r;
	bool enforce = false;

	if (!abs)
		return -ENOMEM;
	/* built-in modules cannot be replaced */
	r = add_check(p, !state || strcmp(state, "builtin") != 0, ns_fmt("%s is a loadable module", mm->name),
		      state && strcmp(state, "builtin") == 0
			      ? ns_fmt("%s is built into the kernel: it cannot be replaced at runtime", mm->name)
			      : NULL);
	if (r < 0)
		goto out;
	/* the file is the one the manifest describes */
	fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || ns_sha256_fd(fd, hex) < 0) {
		r = add_check(p, false, ns_fmt("%s: sha256 matches the manifest", mm->name),
			      ns_fmt("%s cannot be read: %s", abs, strerror(errno)));
	} else {
		bool ok = strcmp(hex, mm->sha256) == 0;
		r = add_check(p, ok, ns_fmt("%s: sha256 matches the manifest", mm->name),
			      ok ? NULL : ns_fmt("%s has sha256 %s, the manifest says %s", abs, hex, mm->sha256));
	}
	if (fd >= 0)
		close(fd);
	if (r < 0)
		goto out;
	/* built for this kernel */
	vm = modinfo_file(ctx, abs, "vermagic");
	stock_vm = modinfo_stock(ctx, mm->name, "vermagic");
	{
		bool ok = vm && (!mm->vermagic || strcmp(vm, mm->vermagic) == 0) &&
			  (stock_vm ? strcmp(vm, stock_vm) == 0
				    : sys->machine.kernel_release && strncmp(vm, sys->machine.kernel_release,
									     strlen(sys->machine.kernel_release)) == 0);
		r = add_check(
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
	r = add_check(p, !problem,
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
		sig = modinfo_file(ctx, abs, "sig_id");
		r = add_check(
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

/* What must not be detached: mounted, the root file system, swap, held by dm/md/LVM. */
static char *disk_refusal(struct ns_system *sys, const struct ns_disk *d)
{
	char *mi = NULL, *swaps = NULL, *why = NULL;
	char **devs = NULL, **names = NULL;
	size_t ndevs = 0, nnames = 0;

	if (d->nholders)
		return ns_fmt("held by %s (device-mapper, md or LVM)", d->holders[0]);
	if (d->devnum)
		ns_strv_add(&devs, &ndevs, d->devnum);
	ns_strv_add(&names, &nnames, d->name);
	for (size_t i = 0; i < d->npartitions; i++) {
		char path[4096], *dev, **h;
		size_t nh;
		snprintf(path, sizeof(path), "%s/%s/dev", d->syspath, d->partitions[i]);
		if (ns_read_str(sys->root, path, &dev) == 0) {
			ns_strv_add(&devs, &ndevs, dev);
			free(dev);
		}
		ns_strv_add(&names, &nnames, d->partitions[i]);
		snprintf(path, sizeof(path), "%s/%s/holders", d->syspath, d->partitions[i]);
		if (ns_list_dir(sys->root, path, &h, &nh) == 0 && nh) {
			why = ns_fmt("partition %s is held by %s (device-mapper, md or LVM)", d->partitions[i], h[0]);
			ns_strv_free(h, nh);
			goto out;
		}
		ns_strv_free(h, 0);
	}
	if (ns_read_str(sys->root, "proc/self/mountinfo", &mi) == 0) {
		/* "36 35 98:0 /mnt1 /mnt/parent ...": the third field is major:minor, the fifth the mount point */
		for (char *line = strtok(mi, "\n"); line && !why; line = strtok(NULL, "\n")) {
			char majmin[32], mnt[1024];
			if (sscanf(line, "%*s %*s %31s %*s %1023s", majmin, mnt) != 2)
				continue;
			if (ns_strv_has(devs, ndevs, majmin))
				why = strcmp(mnt, "/") == 0 ? ns_fmt("holds the root file system")
							    : ns_fmt("mounted at %s", mnt);
		}
	}
	if (!why && ns_read_str(sys->root, "proc/swaps", &swaps) == 0) {
		for (char *line = strtok(swaps, "\n"); line && !why; line = strtok(NULL, "\n")) {
			char dev[1024];
			const char *base;
			if (sscanf(line, "%1023s", dev) != 1 || strncmp(dev, "/dev/", 5) != 0)
				continue;
			base = dev + 5;
			if (ns_strv_has(names, nnames, base))
				why = ns_fmt("used as swap (%s)", dev);
		}
	}
out:
	free(mi);
	free(swaps);
	ns_strv_free(devs, ndevs);
	ns_strv_free(names, nnames);
	return why;
}

/* The module driving SCSI host hostN (its proc_name), or NULL. */
static char *host_module(struct ns_root *root, const char *host)
{
	char path[256], *proc = NULL;
	snprintf(path, sizeof(path), "sys/class/scsi_host/%s/proc_name", host);
	return ns_read_str(root, path, &proc) == 0 ? proc : NULL;
}

static bool disk_in_group(const struct ns_disk *d, const char *group)
{
	if (strcmp(group, "scsi") == 0)
		return d->kind == NS_DISK_SCSI || d->kind == NS_DISK_ATA;
	for (size_t i = 0; i < d->npaths; i++)
		if (d->paths[i].pci && d->paths[i].pci->driver && strcmp(d->paths[i].pci->driver, "nvme") == 0)
			return true;
	return false;
}

static int add_disks(struct ns_system *sys, struct ns_swap_plan *p, const char *group)
{
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		struct ns_swap_disk *nv;
		if (!disk_in_group(d, group))
			continue;
		nv = realloc(p->disks, (p->ndisks + 1) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		p->disks = nv;
		nv[p->ndisks] = (struct ns_swap_disk){
			.name = strdup(d->name),
			.pci = d->npaths && d->paths[0].pci ? strdup(d->paths[0].pci->address) : NULL,
			.serial = d->identity.serial ? strdup(d->identity.serial) : NULL,
			.wwn = d->identity.wwn ? strdup(d->identity.wwn) : NULL,
			.hba = d->npaths && d->paths[0].controller && strncmp(d->paths[0].controller, "host", 4) == 0
				       ? host_module(sys->root, d->paths[0].controller)
				       : NULL,
			.refusal = disk_refusal(sys, d),
		};
		p->refused_disks += nv[p->ndisks].refusal != NULL;
		p->ndisks++;
	}
	return 0;
}

/* Modules holding name, deepest first, then name itself: the order to remove them in. */
static int removal_order(struct ns_root *root, const char *name, char ***order, size_t *n, int depth)
{
	char **holders;
	size_t nh;
	int r = 0;

	if (depth > 8)
		return -ELOOP;
	module_holders(root, name, &holders, &nh);
	for (size_t i = 0; i < nh && r == 0; i++)
		if (!ns_strv_has(*order, *n, holders[i]))
			r = removal_order(root, holders[i], order, n, depth + 1);
	ns_strv_free(holders, nh);
	if (r == 0 && !ns_strv_has(*order, *n, name))
		r = ns_strv_add(order, n, name);
	return r;
}

/*
 * A module in use by more than the modules stacked on it has an open device or a mount
 * behind it (a process reading a raw disk): removing it would fail half-way, so refuse first.
 */
static int check_not_in_use(struct ns_root *root, struct ns_swap_plan *p, const char *name)
{
	char path[256], **holders;
	size_t nh;
	long refcnt = 0;
	char *why;
	int r;

	snprintf(path, sizeof(path), "sys/module/%s/refcnt", name);
	if (ns_read_long(root, path, &refcnt, NULL) < 0)
		return 0; /* built in or gone: other checks speak for it */
	module_holders(root, name, &holders, &nh);
	ns_strv_free(holders, nh);
	if (refcnt <= (long)nh)
		return 0;
	why = ns_fmt("%s has %ld users beyond its %zu holder modules: a device of it is open or mounted", name, refcnt,
		     nh);
	if (!why)
		return -ENOMEM;
	r = ns_strv_add(&p->busy, &p->nbusy, why);
	free(why);
	return r;
}

/* sd names in the order sd hands them out: sda..sdz, sdaa.. (shorter first). */
static int disk_name_cmp(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	return la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
}

/*
 * order (removal order: core last) becomes the insertion order: the core, then sd_mod (so
 * it names each disk as its HBA scans it), then the HBA drivers in the order of the names
 * their disks have now (the first disk's HBA first: the disks come back under the same
 * names), then the rest (sg) as they were stacked.
 */
static int insertion_order(const struct ns_swap_plan *p, char **order, size_t n)
{
	const char **key = calloc(n ? n : 1, sizeof(*key));
	int *rank = calloc(n ? n : 1, sizeof(*rank));

	if (!key || !rank) {
		free(key);
		free(rank);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n / 2; i++) {
		char *t = order[i];
		order[i] = order[n - 1 - i];
		order[n - 1 - i] = t;
	}
	for (size_t i = 1; i < n; i++) {
		rank[i] = strcmp(order[i], "sd_mod") == 0 ? 0 : 2;
		for (size_t d = 0; d < p->ndisks; d++)
			if (p->disks[d].hba && strcmp(p->disks[d].hba, order[i]) == 0) {
				rank[i] = 1;
				if (!key[i] || disk_name_cmp(p->disks[d].name, key[i]) < 0)
					key[i] = p->disks[d].name;
			}
	}
	/* stable insertion sort of everything after the core by (rank, first disk name) */
	for (size_t i = 2; i < n; i++) {
		char *m = order[i];
		const char *k = key[i];
		int rk = rank[i];
		size_t j = i;
		while (j > 1 &&
		       (rank[j - 1] > rk || (rank[j - 1] == rk && rk == 1 && disk_name_cmp(key[j - 1], k) > 0))) {
			order[j] = order[j - 1];
			key[j] = key[j - 1];
			rank[j] = rank[j - 1];
			j--;
		}
		order[j] = m;
		key[j] = k;
		rank[j] = rk;
	}
	free(key);
	free(rank);
	return 0;
}

/* Is the loaded module not the stock file (out of tree, or another srcversion)? */
static bool loaded_differs_from_stock(struct ns_root *root, struct kmod_ctx *ctx, const char *name)
{
	char path[256], *taint = NULL, *src = NULL, *stock;
	bool differs = false;

	snprintf(path, sizeof(path), "sys/module/%s/taint", name);
	if (ns_read_str(root, path, &taint) == 0 && strchr(taint, 'O'))
		differs = true;
	snprintf(path, sizeof(path), "sys/module/%s/srcversion", name);
	if (!differs && ns_read_str(root, path, &src) == 0 && (stock = modinfo_stock(ctx, name, "srcversion"))) {
		differs = strcmp(src, stock) != 0;
		free(stock);
	}
	free(taint);
	free(src);
	return differs;
}

static int plan_group(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p, const char *group)
{
	const char *top = strcmp(group, "nvme") == 0 ? "nvme" : "scsi_mod";
	const char *state = module_state(sys->root, top);
	char **order = NULL;
	size_t n = 0;
	int r;

	if (!state) {
		return add_check(p, true, ns_fmt("%s is not loaded", top),
				 ns_fmt("nothing to swap out: the patched %s loads when the devices probe", top));
	}
	if (p->to_stock && strcmp(group, "nvme") == 0 && !loaded_differs_from_stock(sys->root, ctx, "nvme")) {
		/* the stock nvme is what runs (the fix was upstream): nothing to put back */
		return add_check(p, true, ns_fmt("the stock nvme is loaded"), ns_fmt("nothing to swap back"));
	}
	r = removal_order(sys->root, top, &order, &n, 0);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = check_not_in_use(sys->root, p, order[i]);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = add_step(p, order[i], NULL, true);
	/* the disks first: the insertion order follows their names */
	if (r == 0)
		r = add_disks(sys, p, group);
	if (r == 0)
		r = insertion_order(p, order, n);
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct ns_manifest_module *mm = p->to_stock ? NULL : ns_manifest_find(&p->manifest, order[i]);
		if (mm)
			r = check_candidate(sys, ctx, p, mm);
		if (r == 0)
			r = add_step(p, order[i], mm ? mm->file : NULL, false);
	}
	ns_strv_free(order, n);
	if (r == 0 && strcmp(group, "nvme") == 0) {
		/* a forced node survives the swap: remove and rescan those functions */
		for (size_t i = 0; i < sys->npcis && r == 0; i++) {
			const struct ns_pci *pci = sys->pcis[i];
			if (pci->forced == 1 && pci->driver && strcmp(pci->driver, "nvme") == 0)
				r = ns_strv_add(&p->rescan, &p->nrescan, pci->address);
		}
	}
	if (r == 0)
		r = ns_strv_add(&p->groups, &p->ngroups, group);
	return r;
}

int ns_swap_plan_build(struct ns_system *sys, const char *moddir, bool to_stock, char **groups, size_t ngroups,
		       struct ns_swap_plan *p)
{
	struct kmod_ctx *ctx = kmod_new(NULL, NULL);
	char dir[4096];
	int r;

	memset(p, 0, sizeof(*p));
	p->to_stock = to_stock;
	if (moddir)
		snprintf(dir, sizeof(dir), "%s", moddir);
	else
		snprintf(dir, sizeof(dir), NS_MODULE_DIR "/%s",
			 sys->machine.kernel_release ? sys->machine.kernel_release : "unknown");
	r = ns_manifest_load(sys->root, dir, &p->manifest);
	if (r < 0 && !to_stock)
		goto out;
	if (r < 0)
		r = 0; /* going back to the stock modules needs no manifest */
	if (r == 0 && p->manifest.kernel_release && sys->machine.kernel_release &&
	    strcmp(p->manifest.kernel_release, sys->machine.kernel_release)) {
		r = add_check(p, false, ns_fmt("the modules were built for the running kernel"),
			      ns_fmt("/%s/manifest.json is for %s, this kernel is %s", dir, p->manifest.kernel_release,
				     sys->machine.kernel_release));
		if (r < 0)
			goto out;
	}
	if (to_stock) {
		for (size_t i = 0; i < ngroups && r >= 0; i++)
			r = plan_group(sys, ctx, p, groups[i]);
	} else {
		bool nvme_patched = ns_manifest_find(&p->manifest, "nvme") != NULL;
		bool nvme_upstream = ns_strv_has(p->manifest.upstream, p->manifest.nupstream, "nvme-no-forced-node");
		bool nvme_forced = false;
		for (size_t i = 0; i < sys->npcis; i++)
			nvme_forced |= sys->pcis[i]->forced == 1 && sys->pcis[i]->driver &&
				       strcmp(sys->pcis[i]->driver, "nvme") == 0;
		r = 0;
		/* nvme: the patched module, or (the fix being upstream) the stock one in place of a
		 * loaded pre-fix build, or only a rescan of forced functions */
		if (nvme_patched ||
		    (nvme_upstream && (nvme_forced || loaded_differs_from_stock(sys->root, ctx, "nvme"))))
			r = plan_group(sys, ctx, p, "nvme");
		if (r == 0 && (ns_manifest_find(&p->manifest, "scsi_mod") || ns_manifest_find(&p->manifest, "sd_mod") ||
			       ns_manifest_find(&p->manifest, "megaraid_sas")))
			r = plan_group(sys, ctx, p, "scsi");
		if (r == 0 && p->ngroups == 0)
			r = -ENOENT;
	}
out:
	if (ctx)
		kmod_unref(ctx);
	if (r < 0)
		ns_swap_plan_free(p);
	return r;
}

void ns_swap_plan_free(struct ns_swap_plan *p)
{
	ns_manifest_free(&p->manifest);
	for (size_t i = 0; i < p->nchecks; i++) {
		free(p->checks[i].what);
		free(p->checks[i].detail);
	}
	free(p->checks);
	for (size_t i = 0; i < p->ndisks; i++) {
		free(p->disks[i].name);
		free(p->disks[i].pci);
		free(p->disks[i].serial);
		free(p->disks[i].wwn);
		free(p->disks[i].hba);
		free(p->disks[i].refusal);
	}
	free(p->disks);
	for (size_t i = 0; i < p->nsteps; i++) {
		free(p->steps[i].module);
		free(p->steps[i].file);
	}
	free(p->steps);
	ns_strv_free(p->rescan, p->nrescan);
	ns_strv_free(p->groups, p->ngroups);
	ns_strv_free(p->busy, p->nbusy);
	memset(p, 0, sizeof(*p));
}

bool ns_swap_plan_safe(const struct ns_swap_plan *p)
{
	return p->failed_checks == 0 && p->refused_disks == 0 && p->nbusy == 0;
}

/* ---- execution ---- */

struct run {
	struct ns_system *sys;
	struct kmod_ctx *ctx;
	ns_swap_progress progress;
	void *data;
	struct ns_swap_report *rep;
};

static __attribute__((format(printf, 3, 4))) void event(struct run *x, bool ok, const char *f, ...)
{
	va_list ap;
	char *s;
	struct ns_swap_event *nv;

	va_start(ap, f);
	s = ns_vfmt(f, ap);
	va_end(ap);
	if (!s)
		return;
	if (x->progress)
		x->progress(x->data, s, ok);
	nv = realloc(x->rep->v, (x->rep->n + 1) * sizeof(*nv));
	if (!nv) {
		free(s);
		return;
	}
	x->rep->v = nv;
	nv[x->rep->n++] = (struct ns_swap_event){.text = s, .ok = ok};
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int remove_module(struct run *x, const char *name)
{
	struct kmod_module *mod = NULL;
	int r;

	if (!module_state(x->sys->root, name))
		return 0; /* already out */
	r = kmod_module_new_from_name(x->ctx, name, &mod);
	if (r < 0)
		return r;
	for (int attempt = 0; attempt < 10; attempt++) {
		r = kmod_module_remove_module(mod, 0);
		if (r != -EAGAIN && r != -EBUSY)
			break;
		sleep_ms(300); /* udev may still hold a device open for a moment */
	}
	kmod_module_unref(mod);
	return r;
}

static int insert_module(struct run *x, const char *name, const char *file)
{
	struct kmod_module *mod = NULL;
	int r;

	if (module_state(x->sys->root, name))
		return 0; /* loaded already (a dependency brought it) */
	if (file) {
		char *abs = abs_path(x->sys->root, file);
		if (!abs)
			return -ENOMEM;
		r = kmod_module_new_from_path(x->ctx, abs, &mod);
		free(abs);
		if (r < 0)
			return r;
		r = kmod_module_insert_module(mod, 0, NULL);
	} else {
		r = kmod_module_new_from_name(x->ctx, name, &mod);
		if (r < 0)
			return r;
		r = kmod_module_probe_insert_module(mod, 0, NULL, NULL, NULL, NULL);
	}
	kmod_module_unref(mod);
	return r == -EEXIST ? 0 : r;
}

static int rescan(struct run *x, char **bdfs, size_t n)
{
	int r = 0;
	for (size_t i = 0; i < n; i++) {
		char path[256];
		snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/remove", bdfs[i]);
		if (!ns_exists(x->sys->root, path))
			continue;
		r = ns_write_str(x->sys->root, path, "1");
		event(x, r == 0, "removed PCI function %s%s%s", bdfs[i], r ? ": " : "", r ? strerror(-r) : "");
		if (r < 0)
			return r;
	}
	if (n) {
		r = ns_write_str(x->sys->root, "sys/bus/pci/rescan", "1");
		event(x, r == 0, "rescanned the PCI bus%s%s", r ? ": " : "", r ? strerror(-r) : "");
	}
	return r;
}

/* A block device under PCI function bdf with this serial/wwn (names may change). */
static char *find_disk(struct run *x, const struct ns_swap_disk *want)
{
	char **names;
	size_t n;
	char *found = NULL;

	if (ns_list_dir(x->sys->root, "sys/block", &names, &n) < 0)
		return NULL;
	for (size_t i = 0; i < n && !found; i++) {
		char path[512], *real = NULL, *serial = NULL, *wwn = NULL;
		snprintf(path, sizeof(path), "sys/block/%s", names[i]);
		if (ns_realpath(x->sys->root, path, &real) < 0)
			continue;
		if (want->pci && strstr(real, want->pci)) {
			snprintf(path, sizeof(path), "%s/device/serial", real);
			ns_read_str(x->sys->root, path, &serial);
			if (!serial) {
				snprintf(path, sizeof(path), "%s/serial", real);
				ns_read_str(x->sys->root, path, &serial);
			}
			snprintf(path, sizeof(path), "%s/wwid", real);
			ns_read_str(x->sys->root, path, &wwn);
			if (!wwn) {
				snprintf(path, sizeof(path), "%s/device/wwid", real);
				ns_read_str(x->sys->root, path, &wwn);
			}
			/* identity: what udev saw before must match what the kernel shows now, when both are known */
			if ((!want->wwn || !wwn || strcmp(want->wwn, wwn) == 0) &&
			    (!want->serial || !serial || strstr(want->serial, serial) || strstr(serial, want->serial)))
				found = strdup(names[i]);
		}
		free(real);
		free(serial);
		free(wwn);
	}
	ns_strv_free(names, n);
	return found;
}

static bool wait_disks(struct run *x, const struct ns_swap_plan *p, unsigned wait_s)
{
	bool all = false;

	for (unsigned waited = 0; !all && waited <= wait_s * 1000; waited += 250) {
		all = true;
		for (size_t i = 0; i < p->ndisks && all; i++) {
			char *now = find_disk(x, &p->disks[i]);
			all = now != NULL;
			free(now);
		}
		if (!all)
			sleep_ms(250);
	}
	for (size_t i = 0; i < p->ndisks; i++) {
		char *now = find_disk(x, &p->disks[i]);
		event(x, now != NULL, "%s (%s) %s%s", p->disks[i].name, p->disks[i].pci ? p->disks[i].pci : "?",
		      now ? "is back as " : "did not come back", now ? now : "");
		free(now);
	}
	return all;
}

static bool wait_hba_disks(struct run *x, const struct ns_swap_plan *p, const char *module, unsigned wait_s)
{
	for (unsigned waited = 0;; waited += 250) {
		bool all = true;
		for (size_t i = 0; i < p->ndisks && all; i++) {
			char *now;
			if (!p->disks[i].hba || strcmp(p->disks[i].hba, module) != 0)
				continue;
			now = find_disk(x, &p->disks[i]);
			all = now != NULL;
			free(now);
		}
		if (all)
			return true;
		if (waited >= wait_s * 1000) {
			event(x, false, "the disks of %s did not come back within %u s", module, wait_s);
			return false;
		}
		sleep_ms(250);
	}
}

static bool verify_modules(struct run *x, const struct ns_swap_plan *p)
{
	bool ok = true;
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct ns_swap_step *s = &p->steps[i];
		char path[256], *src = NULL, *taint = NULL;
		const struct ns_manifest_module *mm;
		bool live;
		if (s->remove)
			continue;
		live = module_state(x->sys->root, s->module) != NULL;
		mm = s->file ? ns_manifest_find(&p->manifest, s->module) : NULL;
		if (live && mm) {
			snprintf(path, sizeof(path), "sys/module/%s/srcversion", s->module);
			ns_read_str(x->sys->root, path, &src);
			snprintf(path, sizeof(path), "sys/module/%s/taint", s->module);
			ns_read_str(x->sys->root, path, &taint);
			/* the patched module is out of tree; where it has a srcversion it is the manifest's */
			live = taint && strchr(taint, 'O') &&
			       (!mm->srcversion || (src && strcmp(src, mm->srcversion) == 0));
		}
		event(x, live, "%s %s%s", s->module, live ? "is live" : "is NOT the module that should be live",
		      mm ? " (numastor-patched)" : " (stock)");
		ok &= live;
		free(src);
		free(taint);
	}
	return ok;
}

static bool verify_nodes(struct run *x, const struct ns_swap_plan *p)
{
	bool ok = true;
	for (size_t i = 0; i < p->nrescan; i++) {
		char path[256];
		long node = -2;
		snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/numa_node", p->rescan[i]);
		ns_read_long(x->sys->root, path, &node, NULL);
		/* the forced node is gone: the function reads -1 again (or what its bus says) */
		event(x, node == -1, "%s reads numa_node %ld%s", p->rescan[i], node,
		      node == -1 ? "" : " (still forced?)");
		ok &= node == -1;
	}
	return ok;
}

/* Back to the stock modules, whatever state the swap left. */
static void rollback(struct run *x, const struct ns_swap_plan *p, unsigned wait_s)
{
	event(x, true, "rolling back to the stock modules");
	x->rep->rolled_back = true;
	for (size_t i = 0; i < p->nsteps; i++)
		if (p->steps[i].remove) {
			int r = remove_module(x, p->steps[i].module);
			event(x, r == 0, "removed %s%s%s", p->steps[i].module, r ? ": " : "", r ? strerror(-r) : "");
		}
	for (size_t i = 0; i < p->nsteps; i++)
		if (!p->steps[i].remove) {
			int r = insert_module(x, p->steps[i].module, NULL);
			event(x, r == 0, "loaded stock %s%s%s", p->steps[i].module, r ? ": " : "",
			      r ? strerror(-r) : "");
		}
	wait_disks(x, p, wait_s);
}

int ns_swap_execute(struct ns_system *sys, const struct ns_swap_plan *p, unsigned wait_s, ns_swap_progress progress,
		    void *data, struct ns_swap_report *rep)
{
	struct run x = {.sys = sys, .progress = progress, .data = data, .rep = rep};
	int r = 0;

	memset(rep, 0, sizeof(*rep));
	if (!ns_root_is_live(sys->root))
		return -EOPNOTSUPP;
	if (!ns_swap_plan_safe(p))
		return -EPERM;
	x.ctx = kmod_new(NULL, NULL);
	if (!x.ctx)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsteps && r == 0; i++) {
		const struct ns_swap_step *s = &p->steps[i];
		if (s->remove) {
			r = remove_module(&x, s->module);
			event(&x, r == 0, "removed %s%s%s", s->module, r ? ": " : "", r ? strerror(-r) : "");
		} else {
			r = insert_module(&x, s->module, s->file);
			event(&x, r == 0, "loaded %s %s%s%s", s->file ? "patched" : "stock", s->module, r ? ": " : "",
			      r ? strerror(-r) : "");
			/* let this HBA's disks come back before the next one scans: names follow scan order */
			if (r == 0 && !wait_hba_disks(&x, p, s->module, wait_s))
				r = -ETIMEDOUT;
		}
	}
	if (r == 0)
		r = rescan(&x, p->rescan, p->nrescan);
	if (r == 0 && !wait_disks(&x, p, wait_s))
		r = -ETIMEDOUT;
	if (r == 0 && !verify_modules(&x, p))
		r = -EPROTO;
	if (r == 0 && !verify_nodes(&x, p))
		r = -EPROTO;
	if (r < 0 && !p->to_stock)
		rollback(&x, p, wait_s);
	rep->ok = r == 0;
	kmod_unref(x.ctx);
	return r;
}

void ns_swap_report_free(struct ns_swap_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		free(rep->v[i].text);
	free(rep->v);
	memset(rep, 0, sizeof(*rep));
}

/* ---- install for the next boot ---- */

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
	char *src = abs_path(root, from), *dst = abs_path(root, to), *tmp = NULL;
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
