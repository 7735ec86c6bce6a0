/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The swap plan: which modules go out and in and in which order, which disks detach (and
 * whether any must not), which PCI functions are removed and rescanned. */
#define _GNU_SOURCE
#include "modswap-internal.h"

#include <errno.h>
#include <libkmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inuse.h"
#include "util.h"

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

static int add_step(struct ns_swap_plan *p, const char *group, const char *module, const char *file, bool remove)
{
	struct ns_swap_step *nv = realloc(p->steps, (p->nsteps + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	p->steps = nv;
	nv[p->nsteps] =
		(struct ns_swap_step){.module = strdup(module), .file = file ? strdup(file) : NULL, .remove = remove};
	nv[p->nsteps].group = strdup(group);
	if (!nv[p->nsteps].module || !nv[p->nsteps].group) {
		free(nv[p->nsteps].module);
		free(nv[p->nsteps].group);
		free(nv[p->nsteps].file);
		return -ENOMEM;
	}
	p->nsteps++;
	return 0;
}

/* What must not be detached, every holder named (lib/inuse.h); NULL when nothing holds it. */
static char *disk_refusal(struct ns_system *sys, const struct ns_disk *d)
{
	struct ns_inuse_report rep;
	char *why;
	int r = ns_inuse_check_disk(sys, d, &rep);

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
			.group = strdup(group),
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

static int plan_group(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p, const char *group)
{
	const char *top = strcmp(group, "nvme") == 0 ? "nvme" : "scsi_mod";
	const char *state = ns_swap_module_state(sys->root, top);
	char **order = NULL;
	size_t n = 0;
	int r;

	if (!state) {
		return ns_swap_add_check(
			p, true, ns_fmt("%s is not loaded", top),
			ns_fmt("nothing to swap out: the patched %s loads when the devices probe", top));
	}
	if (p->to_stock && strcmp(group, "nvme") == 0 && !ns_swap_loaded_differs_from_stock(sys->root, ctx, "nvme")) {
		/* the stock nvme is what runs (the fix was upstream): nothing to put back */
		return ns_swap_add_check(p, true, ns_fmt("the stock nvme is loaded"), ns_fmt("nothing to swap back"));
	}
	r = removal_order(sys->root, top, &order, &n, 0);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = check_not_in_use(sys->root, p, order[i]);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = add_step(p, group, order[i], NULL, true);
	/* the disks first: the insertion order follows their names */
	if (r == 0)
		r = add_disks(sys, p, group);
	if (r == 0)
		r = insertion_order(p, order, n);
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct ns_manifest_module *mm = p->to_stock ? NULL : ns_manifest_find(&p->manifest, order[i]);
		if (mm)
			r = ns_swap_check_candidate(sys, ctx, p, mm);
		if (r == 0)
			r = add_step(p, group, order[i], mm ? mm->file : NULL, false);
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
		r = ns_swap_add_check(p, false, ns_fmt("the modules were built for the running kernel"),
				      ns_fmt("/%s/manifest.json is for %s, this kernel is %s", dir,
					     p->manifest.kernel_release, sys->machine.kernel_release));
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
		    (nvme_upstream && (nvme_forced || ns_swap_loaded_differs_from_stock(sys->root, ctx, "nvme"))))
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
		free(p->disks[i].group);
	}
	free(p->disks);
	for (size_t i = 0; i < p->nsteps; i++) {
		free(p->steps[i].module);
		free(p->steps[i].file);
		free(p->steps[i].group);
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
