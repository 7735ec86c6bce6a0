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

#include "diskid.h"
#include "inuse.h"
#include "util.h"

struct run {
	struct ns_system *sys;
	struct kmod_ctx *ctx;
	const struct ns_swap_exec_opts *o;
	struct ns_swap_report *rep;
	unsigned nsteps; /* steps that changed the machine so far */
};

/* A step changed the machine: the test-only kill hook may end the process here. */
static void stepped(struct run *x)
{
	x->nsteps++;
	if (x->o->after_step)
		x->o->after_step(x->o->data, x->nsteps);
}

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
	if (x->o->progress)
		x->o->progress(x->o->data, s, ok);
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

/* Insert name from file (root-relative; the patched module, or the stock one by its in-tree
 * path) or, without a file, by name through modules.dep; with options either way. */
static int insert_module(struct run *x, const char *name, const char *file, const char *options)
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
		r = kmod_module_insert_module(mod, 0, options);
	} else {
		r = kmod_module_new_from_name(x->ctx, name, &mod);
		if (r < 0)
			return r;
		/* never through a modprobe.d install command (libkmod would run it with system()) */
		r = kmod_module_probe_insert_module(mod, KMOD_PROBE_IGNORE_COMMAND, options, NULL, NULL, NULL);
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
		stepped(x);
	}
	if (n) {
		r = ns_write_str(x->sys->root, "sys/bus/pci/rescan", "1");
		event(x, r == 0, "rescanned the PCI bus%s%s", r ? ": " : "", r ? strerror(-r) : "");
		if (r == 0)
			stepped(x);
	}
	return r;
}

/*
 * The disk that is want now: the visible disk with its identity (names change across a
 * reload); a disk with no identity at all, by the PCI function it sits on.
 */
static char *find_disk(struct run *x, const struct ns_swap_disk *want)
{
	char **names;
	size_t n;
	char *found = NULL;

	if (ns_list_dir(x->sys->root, "sys/block", &names, &n) < 0)
		return NULL;
	for (size_t i = 0; i < n && !found; i++) {
		char path[512], *real = NULL, *id = NULL;
		long hidden = 0;
		/* a multipath head's per-path disks carry its identity too; they are not the disk */
		snprintf(path, sizeof(path), "sys/block/%s/hidden", names[i]);
		if (ns_read_long(x->sys->root, path, &hidden, NULL) == 0 && hidden)
			continue;
		if (want->id) {
			if (ns_diskid_from_sysfs(x->sys->root, names[i], &id) == 0 && strcmp(id, want->id) == 0)
				found = strdup(names[i]);
			free(id);
			continue;
		}
		snprintf(path, sizeof(path), "sys/block/%s", names[i]);
		if (want->pci && ns_realpath(x->sys->root, path, &real) == 0 && strstr(real, want->pci))
			found = strdup(names[i]);
		free(real);
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

/* The file a plan inserts module from, or NULL. */
static const char *step_file(const struct ns_swap_plan *p, const char *module)
{
	for (size_t i = 0; i < p->nsteps; i++)
		if (!p->steps[i].remove && strcmp(p->steps[i].module, module) == 0)
			return p->steps[i].file;
	return NULL;
}

static bool verify_modules(struct run *x, const struct ns_swap_plan *p)
{
	bool ok = true;

	if (p->to_stock) {
		for (size_t i = 0; i < p->nexpect_stock; i++) {
			const char *m = p->expect_stock[i];
			bool live = ns_swap_module_state(x->sys->root, m) != NULL;
			bool stock = live && ns_swap_runs_stock(x->sys->root, x->ctx, m, step_file(p, m));
			event(x, stock, "%s %s", m,
			      stock ? "is live (stock)"
				    : (live ? "is live but NOT the stock module" : "is NOT loaded"));
			ok &= stock;
		}
		for (size_t i = 0; i < p->nexpect_out; i++) {
			bool live = ns_swap_module_state(x->sys->root, p->expect_out[i]) != NULL;
			event(x, !live, "%s %s", p->expect_out[i],
			      live ? "is loaded, but was not before the swap" : "is out, as before the swap");
			ok &= !live;
		}
		return ok;
	}
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
		} else if (live) {
			live = ns_swap_runs_stock(x->sys->root, x->ctx, s->module, s->file);
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

/*
 * Immediately before a removal (a claim can appear between the plan and now): is any disk of
 * the plan, where it is now, in use? Named in an event, and -EBUSY, when one is.
 */
static int recheck(struct run *x, const struct ns_swap_plan *p, const char *module)
{
	for (size_t i = 0; i < p->ndisks; i++) {
		struct ns_inuse_report rep;
		char *now = find_disk(x, &p->disks[i]), *text;
		int r;
		if (!now)
			continue; /* detached already */
		r = ns_inuse_check_name(x->sys->root, now, &rep);
		if (r == -ENOENT) {
			free(now);
			continue;
		}
		if (r < 0 || rep.n) {
			text = r < 0 ? NULL : ns_inuse_report_text(&rep, now);
			if (r < 0)
				event(x, false, "cannot tell whether %s is in use (%s): not removing %s", now,
				      strerror(-r), module);
			else
				event(x, false, "%s is in use now: %s: not removing %s", now, text ? text : "?",
				      module);
			free(text);
			ns_inuse_report_free(&rep);
			free(now);
			return -EBUSY;
		}
		free(now);
	}
	return 0;
}

/* The steps, in order; stops at the first that fails. */
static int run_steps(struct run *x, const struct ns_swap_plan *p)
{
	int r = 0;
	for (size_t i = 0; i < p->nsteps && r == 0; i++) {
		const struct ns_swap_step *s = &p->steps[i];
		if (s->remove) {
			if (!ns_swap_module_state(x->sys->root, s->module))
				continue; /* out already (a swap killed half-way, or a holder took it along) */
			r = recheck(x, p, s->module);
			if (r < 0) {
				/* nothing changed yet: nothing to roll back */
				x->rep->untouched = x->nsteps == 0 && !x->rep->rolled_back;
				break;
			}
			r = remove_module(x, s->module);
			event(x, r == 0, "removed %s%s%s", s->module, r ? ": " : "", r ? strerror(-r) : "");
		} else {
			if (ns_swap_module_state(x->sys->root, s->module))
				continue;
			r = insert_module(x, s->module, s->file, s->options);
			event(x, r == 0, "loaded %s %s%s%s%s%s%s",
			      s->file && ns_manifest_find(&p->manifest, s->module) ? "patched" : "stock", s->module,
			      s->options ? " (" : "", s->options ? s->options : "", s->options ? ")" : "",
			      r ? ": " : "", r ? strerror(-r) : "");
			/* let this HBA's disks come back before the next one scans: names follow scan order */
			if (r == 0 && !wait_hba_disks(x, p, s->module, x->o->wait_s))
				r = -ETIMEDOUT;
		}
		if (r == 0)
			stepped(x);
	}
	if (r == 0)
		r = rescan(x, p->rescan, p->nrescan);
	if (r == 0 && !wait_disks(x, p, x->o->wait_s))
		r = -ETIMEDOUT;
	if (r == 0 && !verify_modules(x, p))
		r = -EPROTO;
	if (r == 0 && !p->to_stock && !verify_nodes(x, p))
		r = -EPROTO;
	return r;
}

/* Back to the machine the journal describes, whatever state the swap left. */
static int rollback(struct run *x, const struct ns_swap_journal *j)
{
	struct ns_swap_plan back;
	int r;

	event(x, true, "rolling back to the stock modules");
	x->rep->rolled_back = true;
	r = ns_swap_plan_revert(x->sys, j, &back);
	if (r < 0) {
		event(x, false, "planning the way back: %s", strerror(-r));
		return r;
	}
	r = run_steps(x, &back);
	ns_swap_plan_free(&back);
	return r;
}

int ns_swap_execute(struct ns_system *sys, const struct ns_swap_plan *p, const struct ns_swap_journal *journal,
		    const struct ns_swap_exec_opts *opts, struct ns_swap_report *rep)
{
	struct run x = {.sys = sys, .o = opts, .rep = rep};
	int r;

	memset(rep, 0, sizeof(*rep));
	if (!ns_root_is_live(sys->root))
		return -EOPNOTSUPP;
	if (!ns_swap_plan_safe(p))
		return -EPERM;
	x.ctx = kmod_new(NULL, NULL);
	if (!x.ctx)
		return -ENOMEM;
	r = run_steps(&x, p);
	if (r < 0 && journal && !rep->untouched)
		rep->rollback_ok = rollback(&x, journal) == 0;
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
