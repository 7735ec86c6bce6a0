/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The swap plan: which modules go out and in and in which order, which disks detach (and
 * whether any must not), which PCI functions are removed and rescanned. */
#define _GNU_SOURCE
#include "swap/modswap-plan.h"

#include <errno.h>
#include <libkmod.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/diskid.h"
#include "swap/inuse.h"
#include "swap/modswap-checks.h"
#include "swap/modswap-kmod.h"
#include "swap/modparams.h"
#include "base/number.h"
#include "base/util.h"

static int add_step(struct ns_swap_plan *p, const char *module, const char *file, const char *options, bool remove)
{
	struct ns_swap_step *nv = realloc(p->steps, (p->nsteps + 1) * sizeof(*nv));
	struct ns_swap_step *s;
	if (!nv)
		return -ENOMEM;
	p->steps = nv;
	s = &nv[p->nsteps];
	*s = (struct ns_swap_step){.module = strdup(module),
				   .file = file ? strdup(file) : NULL,
				   .options = options && options[0] ? strdup(options) : NULL,
				   .remove = remove};
	if (!s->module || (file && !s->file) || (options && options[0] && !s->options)) {
		free(s->module);
		free(s->file);
		free(s->options);
		return -ENOMEM;
	}
	p->nsteps++;
	return 0;
}

/*
 * The options an insert step loads its module with, and those the stock module gets back on
 * --revert or a rollback (gathered now: sys/module/NAME/parameters is gone once the module
 * is out). A modprobe.d install/remove command for the module fails a check: numastor never
 * runs one, and loading around it would not be the machine the operator configured.
 */
static int step_options(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p, struct ns_swap_step *st,
			bool patched)
{
	struct ns_modparams mp, stock;
	char *opts, *stock_path = NULL;
	int r = ns_modparams_gather(sys->root, ctx, st->module, st->file, &mp);

	if (r < 0)
		return r;
	opts = ns_modparams_string(&mp);
	if (!opts)
		r = -ENOMEM;
	else if (patched) {
		/* the stock file the way back loads (by its in-tree path), or the stock one by name */
		ns_swap_stock_path(sys, st->module, &stock_path);
		r = ns_modparams_gather(sys->root, ctx, st->module, stock_path, &stock);
		if (r == 0) {
			st->stock_options = ns_modparams_string(&stock);
			ns_modparams_free(&stock);
		}
		free(stock_path);
	} else
		st->stock_options = strdup(opts);
	if (r == 0 && !st->stock_options)
		r = -ENOMEM;
	free(st->options);
	st->options = opts && opts[0] ? opts : NULL;
	if (!st->options)
		free(opts);
	st->option_notes = mp.notes;
	st->noption_notes = mp.nnotes;
	mp.notes = NULL;
	mp.nnotes = 0;
	if (r == 0)
		r = ns_swap_add_check(p, !mp.refusal, ns_fmt("%s: no modprobe.d install or remove command", st->module),
				      mp.refusal);
	else
		free(mp.refusal);
	mp.refusal = NULL;
	ns_modparams_free(&mp);
	return r;
}

/* What must not be detached, every holder named (lib/swap/inuse.h); NULL when nothing holds it. */
static char *disk_refusal(struct ns_system *sys, const struct ns_disk *d)
{
	struct ns_inuse_report rep;
	char *why;
	int r = ns_inuse_check_disk(sys->root, d, &rep);

	if (r < 0)
		return ns_fmt("cannot tell whether it is in use: %s", strerror(-r));
	if (rep.n == 0)
		return NULL;
	why = ns_inuse_report_text(&rep, d->name);
	ns_inuse_report_free(&rep);
	return why ? why : strdup("in use");
}

/* The module driving SCSI host hostN (its proc_name), or NULL. */
static char *host_module(struct ns_root *root, const char *host)
{
	char path[256], *proc = NULL;
	snprintf(path, sizeof(path), "sys/class/scsi_host/%s/proc_name", host);
	return ns_read_str(root, path, &proc) == 0 ? proc : NULL;
}

/*
 * The module of the SCSI host a disk sits on: the host number of its H:C:T:L device (the
 * controller of an ATA disk is its ataN port, of the others their hostN), then the host's
 * proc_name (megaraid_sas, virtio_scsi, ahci).
 */
static char *disk_hba(struct ns_root *root, const struct ns_disk *d)
{
	char path[256], *hctl = NULL, *hba = NULL;
	long long host;
	size_t n;

	snprintf(path, sizeof(path), "sys/block/%s/device", d->name);
	if (ns_readlink_base(root, path, &hctl) == 0) {
		n = strcspn(hctl, ":");
		if (hctl[n] == ':') {
			hctl[n] = '\0';
			if (ns_parse_dec(hctl, 0, INT_MAX, &host) == 0) {
				snprintf(path, sizeof(path), "host%lld", host);
				hba = host_module(root, path);
			}
		}
		free(hctl);
	}
	if (!hba && d->npaths && d->paths[0].controller && strncmp(d->paths[0].controller, "host", 4) == 0)
		hba = host_module(root, d->paths[0].controller);
	return hba;
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

/* A path component with the number a reload renews made "*": hostN, targetN:C:T, N:C:T:L,
 * ataN, nvmeN, virtioN. Returns comp itself, or a new string written into buf. */
static const char *renewed_to_star(const char *comp, char *buf, size_t len)
{
	static const char *const prefixes[] = {"host", "target", "ata", "nvme", "virtio", ""};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]), nd = strspn(comp + pl, "0123456789");
		const char *rest = comp + pl + nd;
		if (strncmp(comp, prefixes[i], pl) != 0 || nd == 0)
			continue;
		/* hostN, ataN, nvmeN, virtioN whole; targetN:C:T and N:C:T:L with their tail */
		if (*rest && !(*rest == ':' && (!strcmp(prefixes[i], "target") || !*prefixes[i])))
			continue;
		if (!*prefixes[i] && strspn(rest, "0123456789:") != strlen(rest))
			continue;
		snprintf(buf, len, "%s*%s", prefixes[i], rest);
		return buf;
	}
	return comp;
}

int ns_swap_disk_key(struct ns_root *root, const char *disk, char **key)
{
	char path[512], *real = NULL, *out, *save = NULL;
	size_t len;
	int r = ns_diskid_from_sysfs(root, disk, key);

	if (r != -ENOENT)
		return r;
	/* the device under the disk (the SCSI device, the NVMe controller): the disk's own
	 * directory ends in its name, which is what may change */
	snprintf(path, sizeof(path), "sys/block/%s/device", disk);
	r = ns_realpath(root, path, &real);
	if (r < 0)
		return r;
	len = strlen(real) + 8;
	out = malloc(len);
	if (!out) {
		free(real);
		return -ENOMEM;
	}
	strcpy(out, "path:");
	for (char *c = strtok_r(real, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		char buf[256];
		const char *n = renewed_to_star(c, buf, sizeof(buf));
		char *nv;
		len += strlen(n) + 1;
		nv = realloc(out, len);
		if (!nv) {
			free(out);
			free(real);
			return -ENOMEM;
		}
		out = nv;
		strcat(out, "/");
		strcat(out, n);
	}
	free(real);
	*key = out;
	return 0;
}

unsigned ns_swap_wait_default(const struct ns_swap_plan *p)
{
	return 60 + 5 * (unsigned)(p->ndisks < 1000 ? p->ndisks : 1000);
}

static int add_disks(struct ns_system *sys, struct ns_swap_plan *p, const char *group)
{
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		struct ns_swap_disk *nv;
		int r;
		if (!disk_in_group(d, group))
			continue;
		nv = realloc(p->disks, (p->ndisks + 1) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		p->disks = nv;
		nv[p->ndisks] = (struct ns_swap_disk){
			.name = strdup(d->name),
			.pci = d->npaths && d->paths[0].pci ? strdup(d->paths[0].pci->address) : NULL,
			.hba = strcmp(group, "scsi") == 0 ? disk_hba(sys->root, d) : NULL,
			.refusal = disk_refusal(sys, d),
		};
		snprintf(nv[p->ndisks].group, sizeof(nv[p->ndisks].group), "%s", group);
		r = ns_swap_disk_key(sys->root, d->name, &nv[p->ndisks].id);
		p->refused_disks += nv[p->ndisks].refusal != NULL;
		p->ndisks++;
		if (r == -ENOMEM)
			return r;
		if (r < 0) /* neither an identity nor a device path: found again by its PCI function */
			nv[p->ndisks - 1].id = NULL;
	}
	return 0;
}

/*
 * Two disks of the plan with one identity (a dual-path SAS LUN without dm-multipath, NVMe with
 * nvme_core.multipath=N and two controllers, a duplicated serial) could not be told apart once
 * their driver reloads: refused, both named.
 */
int ns_swap_check_distinct_disks(struct ns_swap_plan *p)
{
	int r = 0;
	for (size_t i = 0; i < p->ndisks && r == 0; i++)
		for (size_t k = i + 1; k < p->ndisks && r == 0; k++)
			if (p->disks[i].id && p->disks[k].id && strcmp(p->disks[i].id, p->disks[k].id) == 0)
				r = ns_swap_add_check(
					p, false,
					ns_fmt("%s and %s can be told apart after the reload", p->disks[i].name,
					       p->disks[k].name),
					ns_fmt("both have the identity %s (two paths to one disk, or a duplicated "
					       "serial or WWN): the swap could not tell which came back",
					       p->disks[i].id));
	return r;
}

/* The steps from first on belong to group. */
static void steps_group(struct ns_swap_plan *p, size_t first, const char *group)
{
	for (size_t i = first; i < p->nsteps; i++)
		snprintf(p->steps[i].group, sizeof(p->steps[i].group), "%s", group);
}

/* Modules holding name, deepest first, then name itself: the order to remove them in. */
static int removal_order(struct ns_root *root, const char *name, char ***order, size_t *n, int depth)
{
	char **holders;
	size_t nh;
	int r = 0;

	if (depth > 8)
		return -ELOOP;
	ns_swap_module_holders(root, name, &holders, &nh);
	for (size_t i = 0; i < nh && r == 0; i++)
		if (!ns_strv_has(*order, *n, holders[i]))
			r = removal_order(root, holders[i], order, n, depth + 1);
	ns_strv_free(holders, nh);
	if (r == 0 && !ns_strv_has(*order, *n, name))
		r = ns_strv_add(order, n, name);
	return r;
}

/*
 * A backstop behind each disk's own check (disk_refusal): a module in use by more than the
 * modules stacked on it has an open device or a mount behind it that no disk check named.
 * It cannot see users of an NVMe multipath head (on 6.1 nvme_ns_head_open takes no module
 * reference), so it is never the only guard; it only ever errs towards refusing.
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
	ns_swap_module_holders(root, name, &holders, &nh);
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

/* Module names as the kernel compares them: '-' and '_' are one. */
static bool same_module(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))
			return false;
	return *a == *b;
}

struct dep_sort {
	struct ns_swap_step *in, *out;
	char **depends; /* modinfo depends of each step's file, "a,b" (NULL: none or unknown) */
	bool *placed;
	size_t n, nout;
};

/* Place step i after every step of the slice it depends on (depth-first; a cycle, which a
 * kernel's modules cannot have, is broken by the depth limit). */
static void place_step(struct dep_sort *d, size_t i, int depth)
{
	const char *dep = d->depends[i];

	if (d->placed[i])
		return;
	d->placed[i] = true;
	while (dep && *dep && depth < 16) {
		size_t len = strcspn(dep, ",");
		char name[128];
		snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : sizeof(name) - 1), dep);
		for (size_t j = 0; j < d->n; j++)
			if (!d->placed[j] && same_module(d->in[j].module, name))
				place_step(d, j, depth + 1);
		dep += len + (dep[len] == ',');
	}
	d->out[d->nout++] = d->in[i];
}

/*
 * The insert steps s[0..n) in insertion_order's order, but each after the modules of the
 * slice its file depends on: an HBA driver's library (libata, libahci; scsi_transport_sas)
 * holds scsi_mod, has no disk of its own and so no rank of its own, and the driver cannot load
 * before it (the kernel refuses the unknown symbols).
 */
static int order_by_depends(struct ns_root *root, struct kmod_ctx *ctx, struct ns_swap_step *s, size_t n)
{
	struct dep_sort d = {.in = s, .n = n};
	int r = 0;

	if (n < 2)
		return 0;
	d.out = calloc(n, sizeof(*d.out));
	d.depends = calloc(n, sizeof(*d.depends));
	d.placed = calloc(n, sizeof(*d.placed));
	if (!d.out || !d.depends || !d.placed) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char *abs = s[i].file ? ns_swap_abs_path(root, s[i].file) : NULL;
		d.depends[i] = abs ? ns_swap_modinfo_file(ctx, abs, "depends")
				   : ns_swap_modinfo_stock(ctx, s[i].module, "depends");
		free(abs);
	}
	for (size_t i = 0; i < n; i++)
		place_step(&d, i, 0);
	memcpy(s, d.out, n * sizeof(*s));
out:
	if (d.depends)
		for (size_t i = 0; i < n; i++)
			free(d.depends[i]);
	free(d.depends);
	free(d.placed);
	free(d.out);
	return r;
}

/*
 * An nvme function whose node a driver put there: forced now, or left by a pre-fix driver
 * swapped out since (a forced node survives a swap: the running nvme cannot force, so it reads
 * as set; nothing above gives the node and no hand wrote one, the kernel not being tainted I).
 * Only a remove + rescan drops it.
 */
static bool node_to_rescan(const struct ns_system *sys, const struct ns_pci *pci)
{
	bool hand = sys->machine.tainted >= 0 && (sys->machine.tainted & NS_TAINT_FIRMWARE_WORKAROUND);

	if (!pci->driver || strcmp(pci->driver, "nvme") != 0)
		return false;
	return pci->forced == 1 || (pci->node_set == 1 && pci->bus_node == -1 && !hand);
}

/*
 * The swap reloads every module it removes: the patched file for a manifest module, the
 * in-tree file for the rest. A vendor or DKMS build in that place would be lost with its
 * options, and with its disks when the in-tree driver does not know the controller; the next
 * boot would load it again. So every module the swap removes must be what modprobe loads from
 * the kernel's own tree (or numastor's copy in updates/numastor/), and a module reloaded as
 * itself must run that very file (no out-of-tree taint, the file's srcversion). A module the
 * swap replaces may run numastor's own build of it; nvme alone may run any other: every NVMe
 * controller binds to the in-tree nvme by its class, and a pre-fix nvme is what the swap
 * replaces it for. Returns why name is not the kernel's own (NULL when it is; *note set when
 * it runs another build the swap replaces), or NULL with *err set.
 */
static char *not_in_tree(struct ns_system *sys, struct kmod_ctx *ctx, const char *name, const char *stock,
			 const struct ns_manifest_module *mm, bool replaced, char **note, int *err)
{
	const char *rel = sys->machine.kernel_release ? sys->machine.kernel_release : "?";
	char *resolved = NULL, *numastor = ns_fmt("lib/modules/%s/updates/numastor/", rel);
	char path[256], *taint = NULL, *src = NULL, *want = NULL, *abs, *why = NULL;
	bool out_of_tree, other_src, own_build;
	int r;

	*err = 0;
	*note = NULL;
	if (!numastor) {
		*err = -ENOMEM;
		return NULL;
	}
	r = ns_swap_resolve(sys, name, &resolved);
	if (r == -ENOMEM) {
		*err = r;
		goto out;
	}
	if (r < 0) {
		why = ns_fmt("modprobe finds no file for %s in /lib/modules/%s (%s): which build runs is not "
			     "known",
			     name, rel, strerror(-r));
		*err = why ? 0 : -ENOMEM;
		goto out;
	}
	if ((!stock || strcmp(resolved, stock) != 0) && strncmp(resolved, numastor, strlen(numastor)) != 0) {
		why = ns_fmt("modprobe loads %s from /%s, not the in-tree /%s: a vendor or DKMS driver, which the "
			     "swap would replace by the kernel's own; numastor leaves it as it runs",
			     name, resolved, stock ? stock : "(none)");
		*err = why ? 0 : -ENOMEM;
		goto out;
	}
	snprintf(path, sizeof(path), "sys/module/%s/taint", name);
	out_of_tree = ns_read_str(sys->root, path, &taint) == 0 && strchr(taint, 'O');
	snprintf(path, sizeof(path), "sys/module/%s/srcversion", name);
	if (stock && ns_read_str(sys->root, path, &src) == 0 && (abs = ns_swap_abs_path(sys->root, stock))) {
		want = ns_swap_modinfo_file(ctx, abs, "srcversion");
		free(abs);
	}
	other_src = src && want && strcmp(src, want) != 0;
	if (!out_of_tree && !other_src)
		goto out;
	/* numastor's own patched build of a module it replaces (a swap or --install before) */
	own_build = replaced && mm && mm->srcversion && src && strcmp(mm->srcversion, src) == 0;
	if (replaced && (own_build || strcmp(name, "nvme") == 0)) {
		*note = ns_fmt("%s runs %s (%ssrcversion %s); the swap replaces it, and --revert loads the "
			       "in-tree /%s, as the next boot does",
			       name, own_build ? "numastor's patched build" : "another build than the in-tree file",
			       out_of_tree ? "taint O, " : "", src ? src : "?", stock ? stock : "?");
		if (!*note)
			*err = -ENOMEM;
		goto out;
	}
	why = ns_fmt("the running %s is not the in-tree /%s (%s%s%s%s): a vendor or hand-built driver, "
		     "which the swap would replace by the kernel's own; numastor leaves it as it runs",
		     name, stock ? stock : "(none)", out_of_tree ? "taint O" : "", out_of_tree && other_src ? ", " : "",
		     other_src ? "srcversion " : "", other_src ? src : "");
	*err = why ? 0 : -ENOMEM;
out:
	free(resolved);
	free(numastor);
	free(taint);
	free(src);
	free(want);
	return why;
}

/* One check per module that is not the kernel's own (refused), one passed check for the rest. */
static int check_in_tree(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p, const char *group,
			 char *const *order, size_t n)
{
	const char *rel = sys->machine.kernel_release ? sys->machine.kernel_release : "?";
	char *names = NULL, *notes = NULL;
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		const struct ns_manifest_module *mm = ns_manifest_find(&p->manifest, order[i]);
		bool replaced = mm || (strcmp(group, "nvme") == 0 && strcmp(order[i], "nvme") == 0);
		const char *state = NULL;
		char *stock = NULL, *note = NULL, *why, *tmp;
		int err;

		int sr = ns_swap_module_state(sys->root, order[i], &state);
		if (sr < 0) { /* loaded, built in or out: not told */
			r = ns_swap_add_check(p, false, ns_fmt("whether %s is loaded is known", order[i]),
					      ns_fmt("/sys/module/%s could not be read: %s", order[i], strerror(-sr)));
			continue;
		}
		/* built in: never removed nor reloaded ("is a loadable module" refuses it) */
		if (state && strcmp(state, "builtin") == 0)
			continue;
		ns_swap_stock_path(sys, order[i], &stock);
		why = not_in_tree(sys, ctx, order[i], stock, mm, replaced, &note, &err);
		free(stock);
		if (err < 0) {
			r = err;
			break;
		}
		if (why) {
			r = ns_swap_add_check(p, false, ns_fmt("%s is the kernel's own module", order[i]), why);
			continue;
		}
		tmp = ns_fmt("%s%s%s", names ? names : "", names ? ", " : "", order[i]);
		free(names);
		names = tmp;
		if (note) {
			tmp = ns_fmt("%s; %s", notes ? notes : "", note);
			free(notes);
			free(note);
			notes = tmp;
			if (!notes)
				r = -ENOMEM;
		}
		if (!names)
			r = -ENOMEM;
	}
	if (r == 0 && names)
		r = ns_swap_add_check(p, true, ns_fmt("the modules the swap removes are the kernel's own"),
				      ns_fmt("modprobe loads %s from /lib/modules/%s (no vendor or DKMS copy), each "
					     "running that file%s",
					     names, rel, notes ? notes : ""));
	free(names);
	free(notes);
	return r;
}

static int plan_group(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p, const char *group)
{
	const char *top = strcmp(group, "nvme") == 0 ? "nvme" : "scsi_mod";
	const char *state = NULL;
	char **order = NULL;
	const struct ns_manifest_module **loaded = NULL;
	size_t n = 0, first, nloaded = 0;
	int r = ns_swap_module_state(sys->root, top, &state);

	if (r < 0) /* whether anything of the group runs: not told, so no plan */
		return ns_swap_add_check(p, false, ns_fmt("whether %s is loaded is known", top),
					 ns_fmt("/sys/module/%s could not be read: %s", top, strerror(-r)));
	if (!state) {
		/* nothing runs that could be swapped; --install makes the next load the patched one, so
		 * the group's files pass the checks of a swap all the same (what --install copies is
		 * what was checked) */
		const struct ns_manifest_module **mods = calloc(p->manifest.n ? p->manifest.n : 1, sizeof(*mods));
		size_t nm = 0;

		r = mods ? ns_swap_add_check(p, true, ns_fmt("%s is not loaded", top),
					     ns_fmt("nothing to swap now: --install makes the next load of %s use "
						    "the patched module",
						    top))
			 : -ENOMEM;
		for (size_t i = 0; r == 0 && i < p->manifest.n; i++)
			if ((strcmp(p->manifest.v[i].name, "nvme") == 0) == (strcmp(group, "nvme") == 0)) {
				mods[nm++] = &p->manifest.v[i];
				r = ns_swap_check_candidate(sys, ctx, p, &p->manifest.v[i]);
			}
		if (r == 0 && nm)
			r = ns_swap_check_imports(sys, ctx, p, mods, nm);
		free(mods);
		return r;
	}
	r = removal_order(sys->root, top, &order, &n, 0);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = check_not_in_use(sys->root, p, order[i]);
	if (r == 0)
		r = check_in_tree(sys, ctx, p, group, order, n);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = add_step(p, order[i], NULL, NULL, true);
	/* the disks first: the insertion order follows their names */
	if (r == 0)
		r = add_disks(sys, p, group);
	if (r == 0)
		r = insertion_order(p, order, n);
	first = p->nsteps;
	loaded = calloc(n ? n : 1, sizeof(*loaded));
	if (!loaded)
		r = -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct ns_manifest_module *mm = ns_manifest_find(&p->manifest, order[i]);
		char *stock = NULL;
		if (mm) {
			loaded[nloaded++] = mm;
			r = ns_swap_check_candidate(sys, ctx, p, mm);
		}
		/* the stock module by its in-tree file, never by name: after an --install the name
		 * resolves to numastor's copy in updates/ */
		else if (ns_swap_stock_path(sys, order[i], &stock) < 0)
			r = ns_swap_add_check(p, false, ns_fmt("%s: the in-tree module file is known", order[i]),
					      ns_fmt("no %s in /lib/modules/%s/modules.order: it could not be loaded "
						     "again",
						     order[i],
						     sys->machine.kernel_release ? sys->machine.kernel_release : "?"));
		if (r == 0)
			r = add_step(p, order[i], mm ? mm->file : stock, NULL, false);
		if (r == 0)
			r = step_options(sys, ctx, p, &p->steps[p->nsteps - 1], mm != NULL);
		free(stock);
	}
	if (r == 0)
		r = ns_swap_check_imports(sys, ctx, p, loaded, nloaded);
	free(loaded);
	if (r == 0)
		r = order_by_depends(sys->root, ctx, p->steps + first, p->nsteps - first);
	ns_strv_free(order, n);
	if (r == 0 && strcmp(group, "nvme") == 0) {
		/* a forced node survives the swap: remove and rescan those functions */
		for (size_t i = 0; i < sys->npcis && r == 0; i++) {
			const struct ns_pci *pci = sys->pcis[i];
			if (node_to_rescan(sys, pci))
				r = ns_strv_add(&p->rescan, &p->nrescan, pci->address);
		}
	}
	if (r == 0)
		r = ns_strv_add(&p->groups, &p->ngroups, group);
	return r;
}

/* A module of the SCSI series: the midlayer (scsi_mod, sd_mod) or an HBA driver built with it
 * (libata, megaraid_sas, mpt3sas, lpfc): anything but nvme. */
static bool manifest_has_scsi(const struct ns_manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].name, "nvme") != 0)
			return true;
	return false;
}

int ns_swap_plan_build(struct ns_system *sys, const char *moddir, struct ns_swap_plan *p)
{
	struct kmod_ctx *ctx = kmod_new(NULL, NULL);
	bool other_kernel = false;
	char dir[4096];
	int r;

	memset(p, 0, sizeof(*p));
	if (moddir)
		snprintf(dir, sizeof(dir), "%s", moddir);
	else
		snprintf(dir, sizeof(dir), NS_MODULE_DIR "/%s",
			 sys->machine.kernel_release ? sys->machine.kernel_release : "unknown");
	r = ns_manifest_load(sys->root, dir, &p->manifest);
	if (r == -EINVAL)
		r = -EBADMSG; /* the manifest itself, as the caller tells the operator */
	if (r < 0)
		goto out;
	if (p->manifest.kernel_release && sys->machine.kernel_release &&
	    strcmp(p->manifest.kernel_release, sys->machine.kernel_release)) {
		other_kernel = true;
		r = ns_swap_add_check(p, false, ns_fmt("the modules were built for the running kernel"),
				      ns_fmt("/%s/manifest.json is for %s, this kernel is %s", dir,
					     p->manifest.kernel_release, sys->machine.kernel_release));
		if (r < 0)
			goto out;
	}
	{
		bool nvme_patched = ns_manifest_find(&p->manifest, "nvme") != NULL;
		bool nvme_upstream = ns_strv_has(p->manifest.upstream, p->manifest.nupstream, "nvme-no-forced-node");
		bool nvme_forced = false;
		char *nvme_stock = NULL;
		for (size_t i = 0; i < sys->npcis; i++)
			nvme_forced |= node_to_rescan(sys, sys->pcis[i]);
		r = 0;
		/* nvme: the patched module, or (the fix being upstream) the stock one in place of a
		 * loaded pre-fix build, or only a rescan of forced functions */
		size_t first = p->nsteps;
		ns_swap_stock_path(sys, "nvme", &nvme_stock);
		/* nvme loaded or not told (plan_group refuses then, and says why) */
		if (nvme_patched ||
		    (nvme_upstream && (nvme_forced || (ns_swap_module_loaded(sys->root, "nvme") != 0 &&
						       !ns_swap_runs_stock(sys->root, ctx, "nvme", nvme_stock)))))
			r = plan_group(sys, ctx, p, "nvme");
		free(nvme_stock);
		steps_group(p, first, "nvme");
		first = p->nsteps;
		if (r == 0 && manifest_has_scsi(&p->manifest))
			r = plan_group(sys, ctx, p, "scsi");
		steps_group(p, first, "scsi");
		if (r == 0)
			r = ns_swap_check_distinct_disks(p);
		/* a manifest of this kernel's whose every fix is in the kernel or needs no module
		 * here, with the modules it names running stock: nothing to do (an empty plan);
		 * another kernel's applies to nothing at all (a group not loaded fails its files'
		 * checks for --install to refuse with) */
		if (r == 0 && p->ngroups == 0 && other_kernel)
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
		free(p->disks[i].id);
		free(p->disks[i].hba);
		free(p->disks[i].refusal);
	}
	free(p->disks);
	for (size_t i = 0; i < p->nsteps; i++) {
		free(p->steps[i].module);
		free(p->steps[i].file);
		free(p->steps[i].options);
		free(p->steps[i].stock_options);
		ns_strv_free(p->steps[i].option_notes, p->steps[i].noption_notes);
	}
	free(p->steps);
	ns_strv_free(p->rescan, p->nrescan);
	ns_strv_free(p->groups, p->ngroups);
	ns_strv_free(p->busy, p->nbusy);
	ns_strv_free(p->expect_stock, p->nexpect_stock);
	ns_strv_free(p->expect_out, p->nexpect_out);
	memset(p, 0, sizeof(*p));
}

bool ns_swap_plan_safe(const struct ns_swap_plan *p)
{
	return p->failed_checks == 0 && p->refused_disks == 0 && p->nbusy == 0;
}

/* ---- the way back: a plan from the journal ---- */

/* The disk that has identity id (ns_swap_disk_key) now, or NULL. */
static const struct ns_disk *disk_with_id(struct ns_system *sys, const char *id)
{
	for (size_t i = 0; id && i < sys->ndisks; i++) {
		char *now = NULL;
		bool same = ns_swap_disk_key(sys->root, sys->disks[i].name, &now) == 0 && strcmp(now, id) == 0;
		free(now);
		if (same)
			return &sys->disks[i];
	}
	return NULL;
}

/* 1 present, 0 not, -errno not told */
static int pci_present(struct ns_root *root, const char *bdf)
{
	char path[256];
	snprintf(path, sizeof(path), "sys/bus/pci/devices/%s", bdf);
	return ns_probe(root, path);
}

/* Does the machine already run what the journal describes? What is not told is not (the plan
 * below then meets it and refuses). */
static bool as_journaled(struct ns_system *sys, struct kmod_ctx *ctx, const struct ns_swap_journal *j)
{
	for (size_t i = 0; i < j->nmodules; i++) {
		const struct ns_swap_jmodule *m = &j->modules[i];
		int live = ns_swap_module_loaded(sys->root, m->name);
		if (live < 0 || live != m->loaded ||
		    (live && !ns_swap_runs_stock(sys->root, ctx, m->name, m->stock_path)))
			return false;
	}
	for (size_t i = 0; i < j->nremoved_pci; i++)
		if (pci_present(sys->root, j->removed_pci[i]) != 1)
			return false;
	return true;
}

int ns_swap_plan_revert(struct ns_system *sys, const struct ns_swap_journal *j, struct ns_swap_plan *p)
{
	struct kmod_ctx *ctx = kmod_new(NULL, NULL);
	char **order = NULL;
	size_t n = 0, first = 0;
	int r = 0;

	memset(p, 0, sizeof(*p));
	p->to_stock = true;
	for (size_t i = 0; i < j->ngroups && r == 0; i++)
		r = ns_strv_add(&p->groups, &p->ngroups, j->groups[i]);
	/* the disks, by identity; one in use now must not be detached */
	for (size_t i = 0; i < j->ndisks && r == 0; i++) {
		const struct ns_swap_jdisk *jd = &j->disks[i];
		const struct ns_disk *now = disk_with_id(sys, jd->id);
		struct ns_swap_disk *nv = realloc(p->disks, (p->ndisks + 1) * sizeof(*nv));
		if (!nv) {
			r = -ENOMEM;
			break;
		}
		p->disks = nv;
		nv[p->ndisks] = (struct ns_swap_disk){
			.name = strdup(now ? now->name : jd->name),
			.pci = jd->pci ? strdup(jd->pci) : NULL,
			.hba = jd->hba ? strdup(jd->hba) : NULL,
			.id = jd->id ? strdup(jd->id) : NULL,
			.refusal = now ? disk_refusal(sys, now) : NULL,
		};
		/* the journal's disks: an HBA's are the SCSI group's, the others nvme's */
		snprintf(nv[p->ndisks].group, sizeof(nv[p->ndisks].group), "%s", jd->hba ? "scsi" : "nvme");
		p->refused_disks += nv[p->ndisks].refusal != NULL;
		p->ndisks++;
	}
	for (size_t i = 0; i < j->nmodules && r == 0; i++)
		r = ns_strv_add(j->modules[i].loaded ? &p->expect_stock : &p->expect_out,
				j->modules[i].loaded ? &p->nexpect_stock : &p->nexpect_out, j->modules[i].name);
	if (r == 0 && as_journaled(sys, ctx, j)) {
		r = ns_swap_add_check(p, true, ns_fmt("the machine runs the modules the journal names"),
				      ns_fmt("nothing to swap back: every module is the stock one, or out as before"));
		goto out;
	}
	/* out: every journaled module that runs now and is not the stock one, with whatever is
	 * stacked on it now; what already runs stock stays (its disks are not detached again) */
	for (size_t i = j->nmodules; i-- > 0 && r == 0;) {
		const struct ns_swap_jmodule *m = &j->modules[i];
		if ((r = ns_swap_module_loaded(sys->root, m->name)) == 1 &&
		    !ns_swap_runs_stock(sys->root, ctx, m->name, m->stock_path))
			r = removal_order(sys->root, m->name, &order, &n, 0);
		else if (r > 0)
			r = 0;
	}
	for (size_t i = 0; i < n && r == 0; i++)
		r = check_not_in_use(sys->root, p, order[i]);
	for (size_t i = 0; i < n && r == 0; i++)
		r = add_step(p, order[i], NULL, NULL, true);
	/* in: every module that ran before and is out now (or goes out above), from its in-tree
	 * file, with the options it ran with */
	first = p->nsteps;
	for (size_t i = 0; i < j->nmodules && r == 0; i++) {
		const struct ns_swap_jmodule *m = &j->modules[i];
		if (!m->loaded)
			continue;
		if (ns_strv_has(order, n, m->name) || (r = ns_swap_module_loaded(sys->root, m->name)) == 0)
			r = add_step(p, m->name, m->stock_path, m->options, false);
		else if (r > 0)
			r = 0;
	}
	/* and what was stacked on them since (sg loaded meanwhile): out now, so back in after */
	for (size_t i = 0; i < n && r == 0; i++) {
		char *stock = NULL;
		if (ns_swap_journal_module(j, order[i]))
			continue;
		ns_swap_stock_path(sys, order[i], &stock);
		r = add_step(p, order[i], stock, NULL, false);
		/* with the options it runs with now: it was never journaled */
		if (r == 0)
			r = step_options(sys, ctx, p, &p->steps[p->nsteps - 1], false);
		if (r == 0)
			r = ns_strv_add(&p->expect_stock, &p->nexpect_stock, order[i]);
		free(stock);
	}
	/* the journal's order (the swap's), but never a module before one it depends on: a
	 * journal of an older numastor may have an HBA driver before its library */
	if (r == 0)
		r = order_by_depends(sys->root, ctx, p->steps + first, p->nsteps - first);
	for (size_t i = 0; i < p->nsteps; i++)
		snprintf(p->steps[i].group, sizeof(p->steps[i].group), "%s",
			 strncmp(p->steps[i].module, "nvme", 4) == 0 ? "nvme" : "scsi");
	for (size_t i = 0; i < j->nremoved_pci && r == 0; i++)
		if ((r = pci_present(sys->root, j->removed_pci[i])) == 0)
			r = ns_strv_add(&p->rescan, &p->nrescan, j->removed_pci[i]);
		else if (r > 0)
			r = 0;
out:
	ns_strv_free(order, n);
	if (ctx)
		kmod_unref(ctx);
	if (r < 0)
		ns_swap_plan_free(p);
	return r;
}

static int jmodule_add(struct ns_swap_journal *j, struct ns_system *sys, const struct ns_swap_plan *p,
		       const struct ns_swap_step *s)
{
	struct ns_swap_jmodule *nv = realloc(j->modules, (j->nmodules + 1) * sizeof(*nv)), *m;
	char path[256];

	if (!nv)
		return -ENOMEM;
	j->modules = nv;
	m = &nv[j->nmodules++];
	memset(m, 0, sizeof(*m));
	m->name = strdup(s->module);
	int live = ns_swap_module_loaded(sys->root, s->module);
	if (live < 0)
		return live; /* the journal would hold a guess: no journal, no swap */
	m->loaded = live;
	ns_swap_stock_path(sys, s->module, &m->stock_path);
	snprintf(path, sizeof(path), "sys/module/%s/srcversion", s->module);
	if (ns_read_str(sys->root, path, &m->srcversion) < 0)
		m->srcversion = NULL;
	/* what the stock module gets back: its options against the stock file's parameters */
	m->options = strdup(s->stock_options ? s->stock_options : s->options ? s->options : "");
	if (s->file && ns_manifest_find(&p->manifest, s->module))
		m->replacement = strdup(s->file + strspn(s->file, "/")); /* root-relative, as every journal path */
	return m->name && m->options && (!s->file || m->replacement || !ns_manifest_find(&p->manifest, s->module))
		       ? 0
		       : -ENOMEM;
}

int ns_swap_journal_from_plan(struct ns_system *sys, const struct ns_swap_plan *p, struct ns_swap_journal *j)
{
	int r = 0;

	memset(j, 0, sizeof(*j));
	j->boot_id = ns_swap_boot_id(sys->root);
	j->kernel_release = sys->machine.kernel_release ? strdup(sys->machine.kernel_release) : NULL;
	j->runtime = true;
	for (size_t i = 0; i < p->ngroups && r == 0; i++)
		r = ns_strv_add(&j->groups, &j->ngroups, p->groups[i]);
	for (size_t i = 0; i < p->nsteps && r == 0; i++)
		if (!p->steps[i].remove)
			r = jmodule_add(j, sys, p, &p->steps[i]);
	for (size_t i = 0; i < p->nrescan && r == 0; i++)
		r = ns_strv_add(&j->removed_pci, &j->nremoved_pci, p->rescan[i]);
	j->disks = calloc(p->ndisks + 1, sizeof(*j->disks));
	if (!j->disks && r == 0)
		r = -ENOMEM;
	for (size_t i = 0; i < p->ndisks && r == 0; i++) {
		const struct ns_swap_disk *d = &p->disks[i];
		struct ns_swap_jdisk *jd = &j->disks[j->ndisks++];
		jd->id = d->id ? strdup(d->id) : NULL;
		jd->name = strdup(d->name);
		jd->pci = d->pci ? strdup(d->pci) : NULL;
		jd->hba = d->hba ? strdup(d->hba) : NULL;
		if (!jd->name || (d->id && !jd->id) || (d->pci && !jd->pci) || (d->hba && !jd->hba))
			r = -ENOMEM;
	}
	if (r < 0)
		ns_swap_journal_free(j);
	return r;
}
