/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "act/apply.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "read/irq.h"
#include "read/diskid.h"
#include "state/journal.h"
#include "read/rates.h"
#include "base/util.h"

const char *ns_apply_status_name(enum ns_apply_status s)
{
	switch (s) {
	case NS_APPLY_APPLIED:
		return "applied";
	case NS_APPLY_EFFECTIVE_DIFFERS:
		return "applied-effective-differs";
	case NS_APPLY_SKIPPED:
		return "skipped";
	case NS_APPLY_FAILED:
		return "failed";
	default:
		return "unchanged";
	}
}

void ns_apply_result_free(struct ns_apply_result *r)
{
	ns_cpuset_clear(&r->after);
	ns_cpuset_clear(&r->after_effective);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

bool ns_lock_holder_is_swap(const struct ns_lock_holder *h)
{
	return strcmp(h->what, "modules") == 0 || strcmp(h->what, "revert") == 0;
}

/* "PID WHAT\n" (WHAT optional) from the lock file into *h. */
static void read_holder(int fd, struct ns_lock_holder *h)
{
	char buf[64], *p, *end;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long pid;

	h->pid = -1;
	h->what[0] = '\0';
	if (n <= 0 || buf[0] < '1' || buf[0] > '9')
		return;
	buf[n] = '\0';
	pid = strtol(buf, &end, 10);
	if (*end != ' ' && *end != '\n' && *end != '\0')
		return;
	h->pid = pid;
	p = end + strspn(end, " ");
	n = (ssize_t)strcspn(p, " \n");
	if (n > 0 && (size_t)n < sizeof(h->what)) {
		memcpy(h->what, p, (size_t)n);
		h->what[n] = '\0';
	}
}

int ns_lock_acquire(struct ns_root *root, const char *what, unsigned timeout_ms, unsigned swap_timeout_ms, int *fd_out,
		    struct ns_lock_holder *holder)
{
	char line[64];
	unsigned waited = 0, waited_swap = 0;
	int fd, r;

	memset(holder, 0, sizeof(*holder));
	holder->pid = -1;
	r = ns_mkdir_p(root, NS_STATE_DIR);
	if (r < 0)
		return r;
	fd = ns_open_rw(root, NS_LOCK_PATH, 0644);
	if (fd < 0)
		return fd;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		bool swap;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			r = -errno;
			close(fd);
			return r;
		}
		/* who holds it now: a swap that ends lets another holder in, and the other way round */
		read_holder(fd, holder);
		swap = ns_lock_holder_is_swap(holder);
		if (swap ? waited_swap >= swap_timeout_ms : waited >= timeout_ms) {
			holder->waited_ms = waited + waited_swap;
			close(fd);
			return -EWOULDBLOCK;
		}
		sleep_ms(100);
		if (swap) {
			waited_swap += 100;
			holder->waited_for_swap = true;
		} else {
			waited += 100;
		}
	}
	holder->waited_ms = waited + waited_swap;
	snprintf(line, sizeof(line), "%ld %s\n", (long)getpid(), what);
	/* for the messages and the patience of those who wait: failing to write it is harmless */
	if (ftruncate(fd, 0) == 0 && pwrite(fd, line, strlen(line), 0) < 0) {
	}
	*fd_out = fd;
	return 0;
}

void ns_lock_release(int fd)
{
	if (fd >= 0) {
		/* no stale pid for the next waiter to name */
		if (ftruncate(fd, 0) < 0) {
		}
		flock(fd, LOCK_UN);
		close(fd);
	}
}

int ns_apply_refusal_errno(int kver_major, int kver_minor)
{
	if (kver_major <= 0)
		return 0;
	return kver_major > 6 || (kver_major == 6 && kver_minor >= 12) ? EPERM : EIO;
}

const char *ns_apply_classify(int err, int refusal_errno)
{
	if (refusal_errno && -err == refusal_errno)
		return "managed";
	switch (-err) {
	case EPERM:
	case EACCES:
		return "permission";
	case EAGAIN:
	case EBUSY:
	case ENOMEM:
		return "transient";
	case ENOSPC:
		return "vector-space-full";
	default:
		return "other";
	}
}

static void read_list(struct ns_root *root, const char *path, struct ns_cpuset *s)
{
	char *txt;
	if (ns_read_str(root, path, &txt) == 0) {
		ns_cpuset_parse_list(s, txt);
		free(txt);
	}
}

/* Write one IRQ's affinity with bounded retries, then read both affinities back. */
static void write_irq(struct ns_root *root, int irq, const struct ns_cpuset *target, const struct ns_apply_opts *opts,
		      unsigned *nwrites, struct ns_apply_result *res)
{
	char path[96], *text = NULL;
	int r;

	if (ns_cpuset_format(target, &text) < 0) {
		res->status = NS_APPLY_FAILED;
		res->err = -ENOMEM;
		res->err_class = "transient";
		return;
	}
	snprintf(path, sizeof(path), "proc/irq/%d/smp_affinity_list", irq);
	for (;;) {
		res->attempts++;
		r = opts->fake_irq_errno ? -opts->fake_irq_errno : ns_write_str(root, path, text);
		(*nwrites)++;
		if (opts->after_write)
			opts->after_write(opts->data, *nwrites);
		if (r == 0 || strcmp(ns_apply_classify(r, opts->refusal_errno), "transient") != 0 ||
		    res->attempts > opts->retries)
			break;
		sleep_ms(opts->retry_delay_ms);
	}
	free(text);
	res->err = r;
	res->err_class = r ? ns_apply_classify(r, opts->refusal_errno) : NULL;
	read_list(root, path, &res->after);
	snprintf(path, sizeof(path), "proc/irq/%d/effective_affinity_list", irq);
	read_list(root, path, &res->after_effective);
	if (r < 0) {
		res->status = strcmp(res->err_class, "managed") == 0 ? NS_APPLY_SKIPPED : NS_APPLY_FAILED;
	} else if (!res->after.known || !ns_cpuset_equal(&res->after, target)) {
		res->status = NS_APPLY_FAILED; /* the kernel took the write but kept another mask */
		res->err_class = "other";
	} else if (res->after_effective.known && !ns_cpuset_subset(&res->after_effective, target)) {
		res->status = NS_APPLY_EFFECTIVE_DIFFERS;
	} else {
		res->status = NS_APPLY_APPLIED;
	}
}

int ns_apply_plan(struct ns_root *root, const struct ns_plan *plan, const struct ns_apply_opts *opts,
		  struct ns_apply_result *irq_results, struct ns_apply_result *rq_results)
{
	struct ns_journal j;
	unsigned nwrites = 0;
	bool any = false;
	char **rq_ids = calloc(plan->nrqs + 1, sizeof(*rq_ids)), *boot;
	int r;

	if (!rq_ids)
		return -ENOMEM;
	r = ns_journal_load(root, &j);
	if (r == -ENOENT)
		memset(&j, 0, sizeof(j));
	else if (r < 0) {
		free(rq_ids);
		return r; /* malformed or another version: never overwrite what a revert may need */
	}
	boot = ns_journal_read_boot_id(root);
	if (r == 0 && !ns_journal_same_boot(&j, boot)) {
		/* another boot's entries name IRQs and values of a machine that no longer exists */
		free(boot);
		free(rq_ids);
		ns_journal_free(&j);
		return -ESTALE;
	}
	if (!j.boot_id)
		j.boot_id = boot;
	else
		free(boot);
	/* previous values first, read now (not from the model, which may be seconds old) */
	for (size_t i = 0; i < plan->nirqs; i++) {
		const struct ns_plan_irq *e = &plan->irqs[i];
		char path[64], *prev = NULL, *placed = NULL, *raw = NULL;
		struct ns_counts cnt;
		if (e->action != NS_PLAN_MOVE)
			continue;
		if (!e->name || !e->pci) {
			/* nothing to find it again by at revert: not written */
			irq_results[i].status = NS_APPLY_FAILED;
			irq_results[i].err = -ENODATA;
			irq_results[i].err_class = "other";
			continue;
		}
		snprintf(path, sizeof(path), "proc/irq/%d/smp_affinity_list", e->irq);
		r = ns_read_str(root, path, &prev);
		if (r == 0 && !ns_journal_cpulist_ok(prev))
			r = -EBADMSG; /* a previous value that is no CPU list could never be restored */
		if (r < 0) {
			free(prev);
			irq_results[i].status = NS_APPLY_FAILED;
			irq_results[i].err = r;
			irq_results[i].err_class = "other";
			continue;
		}
		if (ns_cpuset_format(&e->target, &placed) < 0 ||
		    ns_journal_put_irq(&j, e->pci, e->name, e->irq, prev, placed) < 0) {
			free(prev);
			free(placed);
			r = -ENOMEM;
			goto out;
		}
		free(prev);
		free(placed);
		/* the counts at placement: check judges the interrupts since (lib/read/rates.h); unreadable,
		 * none (an earlier placement's would count from the wrong moment) */
		if (ns_counts_read(root, e->irq, &cnt, NULL) == 0) {
			r = ns_counts_format(&cnt, &raw); /* runs of one value folded: "0*446" */
			ns_counts_free(&cnt);
			if (r == -ENOMEM)
				goto out;
		}
		r = ns_journal_set_irq_counts(&j, e->pci, e->name, raw);
		free(raw);
		if (r < 0)
			goto out;
		any = true;
	}
	for (size_t i = 0; i < plan->nrqs; i++) {
		const struct ns_plan_rq *e = &plan->rqs[i];
		if (e->action != NS_PLAN_MOVE)
			continue;
		/* a disk is reverted by its identity, never by its name: none known, not written */
		r = ns_diskid_from_sysfs(root, e->device, &rq_ids[i]);
		if (r < 0) {
			rq_results[i].status = NS_APPLY_SKIPPED;
			rq_results[i].err = r;
			rq_results[i].err_class = "other";
			if (r == -ENOMEM)
				goto out;
			continue;
		}
		if (ns_journal_put_rq(&j, rq_ids[i], e->device, e->current, e->target) < 0) {
			r = -ENOMEM;
			goto out;
		}
		any = true;
	}
	r = 0;
	if (any)
		r = ns_journal_save(root, &j);
	ns_journal_free(&j);
	if (r < 0)
		goto out;

	for (size_t i = 0; i < plan->nirqs; i++) {
		const struct ns_plan_irq *e = &plan->irqs[i];
		struct ns_apply_result *res = &irq_results[i];
		char *name;
		if (e->action == NS_PLAN_SKIP) {
			res->status = NS_APPLY_SKIPPED;
			continue;
		}
		if (e->action == NS_PLAN_UNCHANGED || res->status == NS_APPLY_FAILED)
			continue;
		/* the IRQ must still be the one planned for: the function's vector with that name */
		name = ns_irq_first_action(root, e->irq);
		if (!name || strcmp(name, e->name) != 0 || !ns_journal_irq_of_pci(root, e->pci, e->irq)) {
			res->status = NS_APPLY_FAILED;
			res->err = -ESTALE;
			res->err_class = "other";
			free(name);
			continue;
		}
		free(name);
		write_irq(root, e->irq, &e->target, opts, &nwrites, res);
	}
	for (size_t i = 0; i < plan->nrqs; i++) {
		const struct ns_plan_rq *e = &plan->rqs[i];
		struct ns_apply_result *res = &rq_results[i];
		char path[256], val[8], *id = NULL;
		long back;
		if (e->action != NS_PLAN_MOVE || res->status == NS_APPLY_SKIPPED)
			continue;
		/* still the disk journaled under this name */
		if (ns_diskid_from_sysfs(root, e->device, &id) < 0 || strcmp(id, rq_ids[i]) != 0) {
			free(id);
			res->status = NS_APPLY_FAILED;
			res->err = -ESTALE;
			res->err_class = "other";
			continue;
		}
		free(id);
		snprintf(path, sizeof(path), "sys/block/%s/queue/rq_affinity", e->device);
		snprintf(val, sizeof(val), "%d", e->target);
		res->attempts = 1;
		r = ns_write_str(root, path, val);
		nwrites++;
		if (opts->after_write)
			opts->after_write(opts->data, nwrites);
		res->err = r;
		res->err_class = r ? ns_apply_classify(r, 0) : NULL;
		res->status = r == 0 && ns_read_long(root, path, &back, NULL) == 0 && back == e->target
				      ? NS_APPLY_APPLIED
				      : NS_APPLY_FAILED;
	}
	r = 0;
out:
	if (r < 0)
		ns_journal_free(&j);
	for (size_t i = 0; i < plan->nrqs; i++)
		free(rq_ids[i]);
	free(rq_ids);
	return r;
}

const char *ns_revert_status_name(enum ns_revert_status s)
{
	switch (s) {
	case NS_REVERT_RESTORED:
		return "restored";
	case NS_REVERT_UNCHANGED:
		return "unchanged";
	case NS_REVERT_FAILED:
		return "failed";
	case NS_REVERT_GONE:
		return "gone";
	case NS_REVERT_AMBIGUOUS:
		return "ambiguous";
	case NS_REVERT_CHANGED:
		return "changed-since";
	case NS_REVERT_OTHER_BOOT:
		return "other-boot";
	}
	return "?";
}

static int add_item(struct ns_revert_report *rep, const struct ns_revert_item *it)
{
	struct ns_revert_item *nv = realloc(rep->v, (rep->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	rep->v = nv;
	nv[rep->n++] = *it;
	rep->failed += it->status == NS_REVERT_FAILED;
	rep->left_alone += it->status == NS_REVERT_GONE || it->status == NS_REVERT_AMBIGUOUS ||
			   it->status == NS_REVERT_CHANGED || it->status == NS_REVERT_OTHER_BOOT;
	return 0;
}

static void item_free(struct ns_revert_item *it)
{
	free(it->what);
	free(it->value);
	free(it->problem);
	free(it->pci);
	free(it->name);
	free(it->disk);
	free(it->device);
}

/* Write an IRQ's previous affinity (bounded retries for transient errors) and read it back. */
static int restore_irq(struct ns_root *root, int irq, const char *previous, const struct ns_apply_opts *opts,
		       unsigned *nwrites, char **problem)
{
	struct ns_cpuset want = {0}, got = {0};
	char path[64];
	int r, ok;

	snprintf(path, sizeof(path), "proc/irq/%d/smp_affinity_list", irq);
	/* parsed before it is written: a journal's text is input, never passed on unread */
	if (!ns_journal_cpulist_ok(previous) || ns_cpuset_parse_list(&want, previous) < 0) {
		*problem = ns_fmt("its previous value '%.40s' is not a CPU list: not written", previous);
		ns_cpuset_clear(&want);
		return 0;
	}
	for (unsigned a = 0;; a++) {
		r = ns_write_str(root, path, previous);
		(*nwrites)++;
		if (opts && opts->after_write)
			opts->after_write(opts->data, *nwrites);
		if (r == 0 || strcmp(ns_apply_classify(r, 0), "transient") != 0 || !opts || a >= opts->retries)
			break;
		sleep_ms(opts->retry_delay_ms);
	}
	read_list(root, path, &got);
	/* parsed sets compared: a read-back that does not parse never equals */
	ok = r == 0 && want.known && got.known && ns_cpuset_equal(&want, &got);
	if (!ok)
		*problem = ns_fmt("writing %s failed: %s", previous, r ? strerror(-r) : "read back a different mask");
	ns_cpuset_clear(&want);
	ns_cpuset_clear(&got);
	return ok;
}

/* Does the text of a CPU list name the same set as list? */
static bool same_cpus(const char *text, const char *list)
{
	struct ns_cpuset a = {0}, b = {0};
	bool yes = text && list && ns_cpuset_parse_list(&a, text) == 0 && ns_cpuset_parse_list(&b, list) == 0 &&
		   ns_cpuset_equal(&a, &b);
	ns_cpuset_clear(&a);
	ns_cpuset_clear(&b);
	return yes;
}

/* One IRQ entry: found again by its function and name, restored only while it holds what numastor
 * placed. */
static void revert_irq(struct ns_root *root, const struct ns_journal_irq *e, bool other_boot,
		       const struct ns_apply_opts *opts, unsigned *nwrites, struct ns_revert_item *it)
{
	char path[64], *now = NULL;
	int n = -1, r;

	it->pci = strdup(e->pci);
	it->name = strdup(e->name);
	it->value = strdup(e->previous);
	it->irq = -1;
	if (other_boot) {
		it->status = NS_REVERT_OTHER_BOOT;
		it->what = ns_fmt("irq %s of %s (irq %d in that boot)", e->name, e->pci, e->irq);
		return;
	}
	r = ns_journal_locate_irq(root, e, &n);
	if (r < 0) {
		/* the number it had may belong to another vector or device now: never written */
		char *was = e->irq >= 0 ? ns_irq_first_action(root, e->irq) : NULL;
		it->status = r == -EEXIST ? NS_REVERT_AMBIGUOUS : NS_REVERT_GONE;
		it->what = ns_fmt("irq %d (%s of %s)", e->irq, e->name, e->pci);
		if (r == -EEXIST)
			it->problem = ns_fmt("several IRQs of %s are %s now: left alone", e->pci, e->name);
		else if (was && e->irq >= 0 && strcmp(was, e->name) != 0)
			it->problem = ns_fmt("irq %d is now %s, and no IRQ of %s is %s: left alone", e->irq, was,
					     e->pci, e->name);
		else if (was)
			it->problem = ns_fmt("irq %d is %s but no longer one of %s's vectors: left alone", e->irq, was,
					     e->pci);
		else
			it->problem = ns_fmt("no IRQ of %s is %s now (the device or its driver went away): left "
					     "alone",
					     e->pci, e->name);
		free(was);
		return;
	}
	it->irq = n;
	it->what = n == e->irq ? ns_fmt("irq %d (%s of %s)", n, e->name, e->pci)
			       : ns_fmt("irq %d (%s of %s, irq %d when placed)", n, e->name, e->pci, e->irq);
	snprintf(path, sizeof(path), "proc/irq/%d/smp_affinity_list", n);
	if (ns_read_str(root, path, &now) < 0) {
		it->status = NS_REVERT_FAILED;
		it->problem = ns_fmt("cannot read /%s", path);
		return;
	}
	if (same_cpus(now, e->previous)) {
		it->status = NS_REVERT_UNCHANGED; /* never written (a fix killed first), or put back */
		it->ok = 1;
	} else if (!same_cpus(now, e->placed)) {
		it->status = NS_REVERT_CHANGED;
		it->problem = ns_fmt("it is at %s now, not at %s where numastor placed it: changed since by "
				     "someone else, left alone",
				     now, e->placed);
	} else {
		it->ok = restore_irq(root, n, e->previous, opts, nwrites, &it->problem);
		it->status = it->ok ? NS_REVERT_RESTORED : NS_REVERT_FAILED;
	}
	free(now);
}

/* One rq_affinity entry: found again by the disk's identity, whatever its name now. */
static void revert_rq(struct ns_root *root, const struct ns_journal_rq *e, bool other_boot, struct ns_revert_item *it)
{
	char path[512], val[16], *disk = NULL;
	long now = -1, back = -1;
	int r;

	snprintf(val, sizeof(val), "%d", e->previous);
	it->disk = strdup(e->disk);
	it->value = strdup(val);
	it->irq = -1;
	if (other_boot) {
		it->status = NS_REVERT_OTHER_BOOT;
		it->device = e->device ? strdup(e->device) : NULL;
		it->what = ns_fmt("%s rq_affinity (%s in that boot)", e->disk, e->device ? e->device : "?");
		return;
	}
	r = ns_journal_locate_disk(root, e, &disk);
	if (r < 0) {
		it->status = r == -EEXIST ? NS_REVERT_AMBIGUOUS : NS_REVERT_GONE;
		it->device = e->device ? strdup(e->device) : NULL;
		it->what = ns_fmt("%s rq_affinity (%s)", e->device ? e->device : "?", e->disk);
		it->problem = r == -EEXIST ? ns_fmt("several disks are %s now: left alone", e->disk)
					   : ns_fmt("no disk is %s now: left alone", e->disk);
		return;
	}
	it->device = disk;
	it->what = e->device && strcmp(e->device, disk) != 0
			   ? ns_fmt("%s rq_affinity (%s, %s when placed)", disk, e->disk, e->device)
			   : ns_fmt("%s rq_affinity (%s)", disk, e->disk);
	snprintf(path, sizeof(path), "sys/block/%s/queue/rq_affinity", disk);
	if (ns_read_long(root, path, &now, NULL) < 0) {
		it->status = NS_REVERT_FAILED;
		it->problem = ns_fmt("cannot read /%s", path);
		return;
	}
	if (now == e->previous) {
		it->status = NS_REVERT_UNCHANGED;
		it->ok = 1;
		return;
	}
	if (now != e->placed) {
		it->status = NS_REVERT_CHANGED;
		it->problem = ns_fmt("it is %ld now, not %d as numastor set it: changed since by someone else, left "
				     "alone",
				     now, e->placed);
		return;
	}
	r = ns_write_str(root, path, val);
	it->ok = r == 0 && ns_read_long(root, path, &back, NULL) == 0 && back == e->previous;
	it->status = it->ok ? NS_REVERT_RESTORED : NS_REVERT_FAILED;
	if (!it->ok)
		it->problem = ns_fmt("writing %s failed: %s", val, r ? strerror(-r) : "read back differs");
}

int ns_revert(struct ns_root *root, const struct ns_apply_opts *opts, struct ns_revert_report *rep)
{
	struct ns_journal j, left = {0};
	unsigned nwrites = 0;
	int r;

	memset(rep, 0, sizeof(*rep));
	r = ns_journal_load(root, &j);
	if (r == -EPROTO)
		rep->journal_version = j.version;
	if (r < 0)
		return r;
	rep->boot_id = ns_journal_read_boot_id(root);
	rep->journal_boot_id = j.boot_id ? strdup(j.boot_id) : NULL;
	rep->other_boot = !ns_journal_same_boot(&j, rep->boot_id);
	for (size_t i = 0; i < j.nirqs; i++) {
		struct ns_revert_item it = {0};
		revert_irq(root, &j.irqs[i], rep->other_boot, opts, &nwrites, &it);
		/* still pending: kept for a later revert; what can never apply is dropped */
		r = 0;
		if (it.status == NS_REVERT_FAILED) {
			r = ns_journal_put_irq(&left, j.irqs[i].pci, j.irqs[i].name, j.irqs[i].irq, j.irqs[i].previous,
					       j.irqs[i].placed);
			if (r == 0)
				r = ns_journal_set_irq_counts(&left, j.irqs[i].pci, j.irqs[i].name, j.irqs[i].counts);
		}
		if (r < 0 || add_item(rep, &it) < 0) {
			item_free(&it);
			r = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < j.nrqs; i++) {
		struct ns_revert_item it = {0};
		revert_rq(root, &j.rqs[i], rep->other_boot, &it);
		r = 0;
		if (it.status == NS_REVERT_FAILED)
			r = ns_journal_put_rq(&left, j.rqs[i].disk, j.rqs[i].device, j.rqs[i].previous,
					      j.rqs[i].placed);
		if (r < 0 || add_item(rep, &it) < 0) {
			item_free(&it);
			r = -ENOMEM;
			goto out;
		}
	}
	if (rep->other_boot) {
		/* nothing of it was reverted: the file stays for the operator */
		r = 0;
		goto out;
	}
	if (left.nirqs || left.nrqs) {
		left.boot_id = j.boot_id ? strdup(j.boot_id) : NULL;
		r = ns_journal_save(root, &left);
	} else {
		r = ns_journal_remove(root);
	}
out:
	ns_journal_free(&j);
	ns_journal_free(&left);
	return r;
}

void ns_revert_report_free(struct ns_revert_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		item_free(&rep->v[i]);
	free(rep->v);
	free(rep->boot_id);
	free(rep->journal_boot_id);
	memset(rep, 0, sizeof(*rep));
}
