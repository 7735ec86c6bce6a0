/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Carrying a swap plan out on the live kernel: remove, insert, rescan, wait for the disks,
 * verify; on any failure, back to the stock modules. */
#define _GNU_SOURCE
#include "swap/modswap-kmod.h"

#include <errno.h>
#include <libkmod.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "read/diskid.h"
#include "swap/inuse.h"
#include "base/testhook.h"
#include "base/util.h"

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

/* A step boundary of a swap in: has the caller asked to stop (a signal)? Never asked on the
 * way back to stock (a rollback, a revert): that way is finished whatever comes. */
static bool stop_asked(struct run *x, const struct ns_swap_plan *p)
{
	int v;
	if (p->to_stock || !x->o->stop || x->rep->stopped)
		return x->rep->stopped && !p->to_stock;
	v = x->o->stop(x->o->data);
	if (v) {
		x->rep->stopped = v;
		event(x, false, "asked to stop (signal %d) after %u step%s that changed the machine: no further step",
		      v, x->nsteps, x->nsteps == 1 ? "" : "s");
	}
	return v != 0;
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

	if ((r = ns_swap_module_loaded(x->sys->root, name)) <= 0)
		return r; /* already out, or not told: never removed blind */
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

	if ((r = ns_swap_module_loaded(x->sys->root, name)) != 0)
		return r > 0 ? 0 : r; /* loaded already (a dependency brought it), or not told */
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

static int recheck(struct run *x, const struct ns_swap_plan *p, const char *group, const char *what);

static int rescan(struct run *x, const struct ns_swap_plan *p, char **bdfs, size_t n)
{
	const char *pause = ns_test_hook("NUMASTOR_TEST_PAUSE_BEFORE_PCI_REMOVE");
	int r = 0;
	/* test only: time for a test to claim a disk that came back before the first removal */
	if (pause && n && !p->to_stock)
		sleep_ms((unsigned)strtoul(pause, NULL, 10) % 61 * 1000);
	for (size_t i = 0; i < n; i++) {
		char path[256], what[300];
		snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/remove", bdfs[i]);
		if ((r = ns_probe(x->sys->root, path)) == 0)
			continue;
		if (r < 0) {
			event(x, false, "/%s could not be looked at: %s", path, strerror(-r));
			return r;
		}
		if (stop_asked(x, p))
			return -EINTR;
		/* LVM event activation or mdadm -I may have claimed the disks that came back */
		snprintf(what, sizeof(what), "PCI function %s", bdfs[i]);
		r = recheck(x, p, "nvme", what);
		if (r < 0)
			return r;
		r = ns_write_str(x->sys->root, path, "1");
		event(x, r == 0, "removed PCI function %s%s%s", bdfs[i], r ? ": " : "", r ? strerror(-r) : "");
		if (r < 0)
			return r;
		stepped(x);
	}
	if (n) {
		if (stop_asked(x, p))
			return -EINTR;
		r = ns_write_str(x->sys->root, "sys/bus/pci/rescan", "1");
		event(x, r == 0, "rescanned the PCI bus%s%s", r ? ": " : "", r ? strerror(-r) : "");
		if (r == 0)
			stepped(x);
	}
	return r;
}

/* Is c a PCI function's name (domain:bus:device.function, a domain of 4 or more hex digits)? */
static bool is_bdf(const char *c)
{
	size_t d = strspn(c, "0123456789abcdef");
	return d >= 4 && c[d] == ':' && strspn(c + d + 1, "0123456789abcdef") == 2 && c[d + 3] == ':' &&
	       strspn(c + d + 4, "0123456789abcdef") == 2 && c[d + 6] == '.' && strspn(c + d + 7, "01234567") == 1 &&
	       c[d + 8] == '\0';
}

/* Does disk sit on the PCI function bdf (the last PCI function of its device path, whole)? */
static bool disk_on_pci(struct run *x, const char *disk, const char *bdf)
{
	char path[512], *real = NULL, *save = NULL, *last = NULL;
	bool on;

	snprintf(path, sizeof(path), "sys/block/%s", disk);
	if (ns_realpath(x->sys->root, path, &real) < 0)
		return false;
	for (char *c = strtok_r(real, "/", &save); c; c = strtok_r(NULL, "/", &save))
		if (is_bdf(c))
			last = c;
	on = last && strcmp(last, bdf) == 0;
	free(real);
	return on;
}

/*
 * The disk that is want now: the one visible disk with its key (ns_swap_disk_key: names change
 * across a reload); a disk of an older journal with no key at all, the one disk on its PCI
 * function. Two that match are no answer: NULL, as for none.
 */
static char *find_disk(struct run *x, const struct ns_swap_disk *want)
{
	char **names;
	size_t n, matches = 0;
	char *found = NULL;

	if (ns_list_dir(x->sys->root, "sys/block", &names, &n) < 0)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char path[512], *key = NULL;
		long hidden = 0;
		bool match;
		/* a multipath head's per-path disks carry its identity too; they are not the disk */
		snprintf(path, sizeof(path), "sys/block/%s/hidden", names[i]);
		if (ns_read_long(x->sys->root, path, &hidden, NULL) == 0 && hidden)
			continue;
		if (want->id)
			match = ns_swap_disk_key(x->sys->root, names[i], &key) == 0 && strcmp(key, want->id) == 0;
		else
			match = want->pci && disk_on_pci(x, names[i], want->pci);
		free(key);
		if (match && matches++ == 0)
			found = strdup(names[i]);
	}
	ns_strv_free(names, n);
	if (matches > 1) {
		free(found);
		return NULL;
	}
	return found;
}

static void renamed(struct run *x, const struct ns_swap_disk *d, const char *now)
{
	struct ns_swap_rename *nv = realloc(x->rep->renamed, (x->rep->nrenamed + 1) * sizeof(*nv));
	if (!nv)
		return;
	x->rep->renamed = nv;
	nv[x->rep->nrenamed] =
		(struct ns_swap_rename){.id = d->id ? strdup(d->id) : NULL, .from = strdup(d->name), .to = strdup(now)};
	x->rep->nrenamed++;
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
		const struct ns_swap_disk *d = &p->disks[i];
		char *now = find_disk(x, d);
		event(x, now != NULL, "%s (%s) %s%s", d->name, d->pci ? d->pci : "?",
		      now ? "is back as " : "did not come back", now ? now : "");
		/* loudly: fstab, scripts and monitoring that name the disk now name another */
		if (now && strcmp(now, d->name) != 0) {
			event(x, true,
			      "NAME CHANGED: the disk that was %s is now %s (%s): anything that names %s means "
			      "another disk or none now",
			      d->name, now, d->id ? d->id : "no identity", d->name);
			renamed(x, d, now);
		}
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
			bool live = ns_swap_module_loaded(x->sys->root, m) == 1; /* unknown: not shown live */
			bool stock = live && ns_swap_runs_stock(x->sys->root, x->ctx, m, step_file(p, m));
			event(x, stock, "%s %s", m,
			      stock ? "is live (stock)"
				    : (live ? "is live but NOT the stock module" : "is NOT loaded"));
			ok &= stock;
		}
		for (size_t i = 0; i < p->nexpect_out; i++) {
			int e = ns_swap_module_loaded(x->sys->root, p->expect_out[i]);
			event(x, e == 0, "%s %s%s", p->expect_out[i],
			      e > 0   ? "is loaded, but was not before the swap"
			      : e < 0 ? "may be loaded (/sys/module could not be read): "
				      : "is out, as before the swap",
			      e < 0 ? strerror(-e) : "");
			ok &= e == 0;
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
		live = ns_swap_module_loaded(x->sys->root, s->module) == 1; /* unknown: not verified */
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
 * group (every disk when group is "") that is still there in use? Named in an event, and
 * -EBUSY, when one is. what: the module or PCI function about to be removed.
 */
static int recheck(struct run *x, const struct ns_swap_plan *p, const char *group, const char *what)
{
	for (size_t i = 0; i < p->ndisks; i++) {
		struct ns_inuse_report rep;
		char *now, *text;
		int r;
		if (group[0] && p->disks[i].group[0] && strcmp(p->disks[i].group, group) != 0)
			continue; /* another group's: this removal leaves it attached */
		now = find_disk(x, &p->disks[i]);
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
				      strerror(-r), what);
			else
				event(x, false, "%s is in use now: %s: not removing %s", now, text ? text : "?", what);
			free(text);
			ns_inuse_report_free(&rep);
			free(now);
			return -EBUSY;
		}
		free(now);
	}
	return 0;
}

/*
 * The steps, in order. A swap in stops at the first that fails, or at a step boundary where
 * the caller asked to stop. The way back to stock (a revert, a rollback) stops removing at the
 * first removal that fails (what holds it holds the rest) but inserts every module it can, in
 * order, each failure reported: every stock module that can run again does.
 */
static int run_steps(struct run *x, const struct ns_swap_plan *p)
{
	int r = 0, first_err = 0;
	bool removals_stopped = false;
	char **failed = NULL;
	size_t nfailed = 0;

	for (size_t i = 0; i < p->nsteps && r == 0; i++) {
		const struct ns_swap_step *s = &p->steps[i];
		if (stop_asked(x, p)) {
			r = -EINTR;
			x->rep->untouched = x->nsteps == 0 && !x->rep->rolled_back;
			break;
		}
		if (s->remove) {
			if (removals_stopped || (r = ns_swap_module_loaded(x->sys->root, s->module)) == 0)
				continue; /* out already (a swap killed half-way, or a holder took it along) */
			if (r < 0)	  /* loaded or not: not told, so neither removed nor passed over */
				event(x, false, "whether %s is loaded could not be told: %s", s->module, strerror(-r));
			else
				r = recheck(x, p, s->group, s->module);
			if (r < 0 && !p->to_stock) {
				/* nothing changed yet: nothing to roll back */
				x->rep->untouched = x->nsteps == 0 && !x->rep->rolled_back;
				break;
			}
			if (r == 0) {
				r = remove_module(x, s->module);
				event(x, r == 0, "removed %s%s%s", s->module, r ? ": " : "", r ? strerror(-r) : "");
			}
			if (r < 0 && p->to_stock) {
				first_err = first_err ? first_err : r;
				removals_stopped = true;
				r = 0;
				continue;
			}
		} else {
			const char *fail = ns_test_hook("NUMASTOR_TEST_FAIL_INSERT_BACK");
			if ((r = ns_swap_module_loaded(x->sys->root, s->module)) == 1) {
				r = 0;
				continue;
			}
			/* r < 0: not told whether it is in, said below, never loaded twice. test only:
			 * the way back cannot load this module (EIO), as a broken file would */
			if (r == 0 && fail && p->to_stock && strcmp(fail, s->module) == 0)
				r = -EIO;
			else if (r == 0)
				r = insert_module(x, s->module, s->file, s->options);
			event(x, r == 0, "loaded %s %s%s%s%s%s%s",
			      s->file && ns_manifest_find(&p->manifest, s->module) ? "patched" : "stock", s->module,
			      s->options ? " (" : "", s->options ? s->options : "", s->options ? ")" : "",
			      r ? ": " : "", r ? strerror(-r) : "");
			/* let this HBA's disks come back before the next one scans: names follow scan order */
			if (r == 0 && !wait_hba_disks(x, p, s->module, x->o->wait_s))
				r = -ETIMEDOUT;
			if (r == 0)
				stepped(x);
			if (r < 0 && p->to_stock) {
				/* on to the next: every module that can run again does */
				first_err = first_err ? first_err : r;
				if (r != -ETIMEDOUT && ns_strv_add(&failed, &nfailed, s->module) < 0)
					first_err = -ENOMEM;
				r = 0;
			}
			continue;
		}
		if (r == 0)
			stepped(x);
	}
	if (r == 0)
		r = rescan(x, p, p->rescan, p->nrescan);
	if (r == 0 && stop_asked(x, p))
		r = -EINTR;
	if (r == 0 && !wait_disks(x, p, x->o->wait_s))
		r = -ETIMEDOUT;
	if (r == 0 && stop_asked(x, p))
		r = -EINTR;
	if (r == 0 && !verify_modules(x, p))
		r = -EPROTO;
	if (r == 0 && !p->to_stock && !verify_nodes(x, p))
		r = -EPROTO;
	if (nfailed) {
		char list[512] = "";
		for (size_t i = 0; i < nfailed; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", failed[i]);
		event(x, false, "%zu module%s could not be loaded again: %s", nfailed, nfailed == 1 ? "" : "s", list);
	}
	ns_strv_free(failed, nfailed);
	return first_err ? first_err : r;
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
	for (size_t i = 0; i < rep->nrenamed; i++) {
		free(rep->renamed[i].id);
		free(rep->renamed[i].from);
		free(rep->renamed[i].to);
	}
	free(rep->renamed);
	memset(rep, 0, sizeof(*rep));
}
