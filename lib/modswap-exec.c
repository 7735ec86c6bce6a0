/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Carrying a swap plan out on the live kernel: remove, insert, rescan, wait for the disks,
 * verify; on any failure, back to the stock modules. */
#define _GNU_SOURCE
#include "modswap-internal.h"

#include <errno.h>
#include <libkmod.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inuse.h"
#include "util.h"

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

	if (!ns_swap_module_state(x->sys->root, name))
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

	if (ns_swap_module_state(x->sys->root, name))
		return 0; /* loaded already (a dependency brought it) */
	if (file) {
		char *abs = ns_swap_abs_path(x->sys->root, file);
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
		live = ns_swap_module_state(x->sys->root, s->module) != NULL;
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

/* Is any disk of this group (still there) in use? The holders named in *why; 0 when none. */
static int group_in_use(struct run *x, const struct ns_swap_plan *p, const char *group, char **why)
{
	*why = NULL;
	for (size_t i = 0; i < p->ndisks; i++) {
		struct ns_inuse_report rep;
		char path[512], *text;
		int r;
		if (!p->disks[i].group || strcmp(p->disks[i].group, group) != 0)
			continue;
		snprintf(path, sizeof(path), "sys/block/%s", p->disks[i].name);
		if (!ns_exists(x->sys->root, path))
			continue; /* detached already by an earlier removal */
		r = ns_inuse_check_name(x->sys->root, p->disks[i].name, &rep);
		if (r == -ENOENT)
			continue;
		if (r < 0) {
			*why = ns_fmt("cannot tell whether %s is in use: %s", p->disks[i].name, strerror(-r));
			return -EBUSY;
		}
		if (rep.n) {
			text = ns_inuse_report_text(&rep, p->disks[i].name);
			*why = ns_fmt("%s is in use now: %s", p->disks[i].name, text ? text : "?");
			free(text);
			ns_inuse_report_free(&rep);
			return -EBUSY;
		}
	}
	return 0;
}

/*
 * Back to the stock modules for every group the swap touched (a step before `upto` done),
 * whatever state it left them in; a group whose disks are in use now is left as it is (its
 * removal would take them away), and that is said.
 */
static void rollback(struct run *x, const struct ns_swap_plan *p, size_t upto, unsigned wait_s)
{
	char **groups = NULL;
	size_t ngroups = 0;
	bool all = true;

	for (size_t i = 0; i < upto && i < p->nsteps; i++)
		ns_strv_add_unique(&groups, &ngroups, p->steps[i].group);
	if (ngroups == 0) {
		x->rep->untouched = true;
		event(x, true, "stopped before the first change: nothing was changed");
		return;
	}
	event(x, true, "rolling back to the stock modules");
	for (size_t g = 0; g < ngroups; g++) {
		char *why = NULL;
		if (group_in_use(x, p, groups[g], &why) < 0) {
			event(x, false, "not rolling back the %s modules: %s (`numastor fix --revert` does it later)",
			      groups[g], why ? why : "a disk is in use");
			free(why);
			all = false;
			continue;
		}
		for (size_t i = 0; i < p->nsteps; i++)
			if (p->steps[i].remove && strcmp(p->steps[i].group, groups[g]) == 0) {
				int r = remove_module(x, p->steps[i].module);
				event(x, r == 0, "removed %s%s%s", p->steps[i].module, r ? ": " : "",
				      r ? strerror(-r) : "");
			}
		for (size_t i = 0; i < p->nsteps; i++)
			if (!p->steps[i].remove && strcmp(p->steps[i].group, groups[g]) == 0) {
				int r = insert_module(x, p->steps[i].module, NULL);
				event(x, r == 0, "loaded stock %s%s%s", p->steps[i].module, r ? ": " : "",
				      r ? strerror(-r) : "");
			}
	}
	x->rep->rolled_back = all;
	ns_strv_free(groups, ngroups);
	wait_disks(x, p, wait_s);
}

int ns_swap_execute(struct ns_system *sys, const struct ns_swap_plan *p, unsigned wait_s, ns_swap_progress progress,
		    void *data, struct ns_swap_report *rep)
{
	struct run x = {.sys = sys, .progress = progress, .data = data, .rep = rep};
	size_t done = 0;
	int r = 0;

	memset(rep, 0, sizeof(*rep));
	if (!ns_root_is_live(sys->root))
		return -EOPNOTSUPP;
	if (!ns_swap_plan_safe(p))
		return -EPERM;
	x.ctx = kmod_new(NULL, NULL);
	if (!x.ctx)
		return -ENOMEM;
	for (; done < p->nsteps && r == 0; done++) {
		const struct ns_swap_step *s = &p->steps[done];
		if (s->remove) {
			char *why = NULL;
			/* a claim can appear between the plan and now: look again right before */
			r = group_in_use(&x, p, s->group, &why);
			if (r < 0) {
				event(&x, false, "%s: not removing %s", why ? why : "a disk is in use", s->module);
				free(why);
				break;
			}
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
	/* done: the steps carried out or tried (a removal stopped by the recheck was not) */
	if (r < 0 && !p->to_stock)
		rollback(&x, p, done, wait_s);
	else if (r < 0 && done == 0)
		rep->untouched = true;
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
