/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "apply.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "irq.h"
#include "journal.h"

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

static const char *classify(int err)
{
	switch (-err) {
	case EIO:
	case EPERM:
		return "managed";
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
		res->err_class = classify(-ENOMEM);
		return;
	}
	snprintf(path, sizeof(path), "proc/irq/%d/smp_affinity_list", irq);
	for (;;) {
		res->attempts++;
		r = ns_write_str(root, path, text);
		(*nwrites)++;
		if (opts->after_write)
			opts->after_write(opts->data, *nwrites);
		if (r == 0 || strcmp(classify(r), "transient") != 0 || res->attempts > opts->retries)
			break;
		sleep_ms(opts->retry_delay_ms);
	}
	free(text);
	res->err = r;
	res->err_class = r ? classify(r) : NULL;
	read_list(root, path, &res->after);
	snprintf(path, sizeof(path), "proc/irq/%d/effective_affinity_list", irq);
	read_list(root, path, &res->after_effective);
	if (r < 0) {
		res->status = strcmp(res->err_class, "managed") == 0 ? NS_APPLY_SKIPPED : NS_APPLY_FAILED;
	} else if (!ns_cpuset_equal(&res->after, target)) {
		res->status = NS_APPLY_FAILED; /* the kernel took the write but kept another mask */
		res->err_class = "other";
	} else if (res->after_effective.known && !ns_cpuset_subset(&res->after_effective, target)) {
		res->status = NS_APPLY_EFFECTIVE_DIFFERS;
	} else {
		res->status = NS_APPLY_APPLIED;
	}
}

static char *read_boot_id(struct ns_root *root)
{
	char *id = NULL;
	ns_read_str(root, "proc/sys/kernel/random/boot_id", &id);
	return id;
}

int ns_apply_plan(struct ns_root *root, const struct ns_plan *plan, const struct ns_apply_opts *opts,
		  struct ns_apply_result *irq_results, struct ns_apply_result *rq_results)
{
	struct ns_journal j;
	unsigned nwrites = 0;
	bool any = false;
	int r;

	r = ns_journal_load(root, &j);
	if (r == -ENOENT)
		memset(&j, 0, sizeof(j));
	else if (r < 0)
		return r; /* a malformed journal: never overwrite what a revert may need */
	if (!j.boot_id)
		j.boot_id = read_boot_id(root);
	/* previous values first, read now (not from the model, which may be seconds old) */
	for (size_t i = 0; i < plan->nirqs; i++) {
		const struct ns_plan_irq *e = &plan->irqs[i];
		char path[64], *prev = NULL, *placed = NULL;
		if (e->action != NS_PLAN_MOVE)
			continue;
		snprintf(path, sizeof(path), "proc/irq/%d/smp_affinity_list", e->irq);
		r = ns_read_str(root, path, &prev);
		if (r < 0) {
			irq_results[i].status = NS_APPLY_FAILED;
			irq_results[i].err = r;
			irq_results[i].err_class = "other";
			continue;
		}
		if (ns_cpuset_format(&e->target, &placed) < 0 ||
		    ns_journal_put_irq(&j, e->irq, e->name, prev, placed) < 0) {
			free(prev);
			free(placed);
			ns_journal_free(&j);
			return -ENOMEM;
		}
		free(prev);
		free(placed);
		any = true;
	}
	for (size_t i = 0; i < plan->nrqs; i++) {
		const struct ns_plan_rq *e = &plan->rqs[i];
		if (e->action != NS_PLAN_MOVE)
			continue;
		if (ns_journal_put_rq(&j, e->device, e->current, e->target) < 0) {
			ns_journal_free(&j);
			return -ENOMEM;
		}
		any = true;
	}
	if (any) {
		r = ns_journal_save(root, &j);
		if (r < 0) {
			ns_journal_free(&j);
			return r;
		}
	}
	ns_journal_free(&j);

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
		/* the IRQ must still be the one planned for */
		name = ns_irq_first_action(root, e->irq);
		if (e->name && (!name || strcmp(name, e->name) != 0)) {
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
		char path[256], val[8];
		long back;
		if (e->action != NS_PLAN_MOVE)
			continue;
		snprintf(path, sizeof(path), "sys/block/%s/queue/rq_affinity", e->device);
		snprintf(val, sizeof(val), "%d", e->target);
		res->attempts = 1;
		r = ns_write_str(root, path, val);
		nwrites++;
		if (opts->after_write)
			opts->after_write(opts->data, nwrites);
		res->err = r;
		res->err_class = r ? classify(r) : NULL;
		res->status = r == 0 && ns_read_long(root, path, &back, NULL) == 0 && back == e->target
				      ? NS_APPLY_APPLIED
				      : NS_APPLY_FAILED;
	}
	return 0;
}

static int add_item(struct ns_revert_report *rep, char *what, char *value, int ok, char *problem)
{
	struct ns_revert_item *nv = realloc(rep->v, (rep->n + 1) * sizeof(*nv));
	if (!nv) {
		free(what);
		free(value);
		free(problem);
		return -ENOMEM;
	}
	rep->v = nv;
	nv[rep->n++] = (struct ns_revert_item){.what = what, .value = value, .ok = ok, .problem = problem};
	rep->failed += !ok;
	return 0;
}

int ns_revert(struct ns_root *root, const struct ns_apply_opts *opts, struct ns_revert_report *rep)
{
	struct ns_journal j, left = {0};
	unsigned nwrites = 0;
	int r;

	memset(rep, 0, sizeof(*rep));
	r = ns_journal_load(root, &j);
	if (r < 0)
		return r;
	for (size_t i = 0; i < j.nirqs; i++) {
		const struct ns_journal_irq *e = &j.irqs[i];
		struct ns_cpuset want = {0}, got = {0};
		char path[64], *what = NULL, *problem = NULL, *name = ns_irq_first_action(root, e->irq);
		int ok = 0;

		if (asprintf(&what, "irq %d (%s)", e->irq, e->name ? e->name : "?") < 0)
			what = NULL;
		if (e->name && (!name || strcmp(name, e->name) != 0)) {
			/* the IRQ it was taken from is gone: reported, and dropped from the journal */
			if (asprintf(&problem, "irq %d is now %s, not %s: not touched", e->irq, name ? name : "gone",
				     e->name) < 0)
				problem = NULL;
		} else {
			snprintf(path, sizeof(path), "proc/irq/%d/smp_affinity_list", e->irq);
			for (unsigned a = 0;; a++) {
				r = ns_write_str(root, path, e->previous);
				nwrites++;
				if (opts && opts->after_write)
					opts->after_write(opts->data, nwrites);
				if (r == 0 || strcmp(classify(r), "transient") != 0 || !opts || a >= opts->retries)
					break;
				sleep_ms(opts->retry_delay_ms);
			}
			ns_cpuset_parse_list(&want, e->previous);
			read_list(root, path, &got);
			ok = r == 0 && ns_cpuset_equal(&want, &got);
			if (!ok && asprintf(&problem, "writing %s failed: %s", e->previous,
					    r ? strerror(-r) : "read back a different mask") < 0)
				problem = NULL;
			/* still pending: keep it for a later revert */
			if (!ok && ns_journal_put_irq(&left, e->irq, e->name, e->previous, e->placed) < 0)
				r = -ENOMEM;
		}
		free(name);
		ns_cpuset_clear(&want);
		ns_cpuset_clear(&got);
		if (add_item(rep, what, strdup(e->previous), ok, problem) < 0) {
			ns_journal_free(&j);
			ns_journal_free(&left);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < j.nrqs; i++) {
		const struct ns_journal_rq *e = &j.rqs[i];
		char path[256], val[8], *what = NULL, *problem = NULL;
		long back = -1;
		int ok;
		snprintf(path, sizeof(path), "sys/block/%s/queue/rq_affinity", e->device);
		snprintf(val, sizeof(val), "%d", e->previous);
		r = ns_write_str(root, path, val);
		ok = r == 0 && ns_read_long(root, path, &back, NULL) == 0 && back == e->previous;
		if (asprintf(&what, "%s rq_affinity", e->device) < 0)
			what = NULL;
		if (!ok) {
			if (asprintf(&problem, "writing %s failed: %s", val, r ? strerror(-r) : "read back differs") <
			    0)
				problem = NULL;
			ns_journal_put_rq(&left, e->device, e->previous, e->placed);
		}
		if (add_item(rep, what, strdup(val), ok, problem) < 0) {
			ns_journal_free(&j);
			ns_journal_free(&left);
			return -ENOMEM;
		}
	}
	/* module swaps and installs are undone by the front end through modswap: keep them */
	left.modgroups = j.modgroups, left.nmodgroups = j.nmodgroups;
	left.installed = j.installed, left.ninstalled = j.ninstalled;
	j.modgroups = j.installed = NULL, j.nmodgroups = j.ninstalled = 0;
	if (left.nirqs || left.nrqs || left.nmodgroups || left.ninstalled) {
		left.boot_id = j.boot_id ? strdup(j.boot_id) : NULL;
		r = ns_journal_save(root, &left);
	} else {
		r = ns_journal_remove(root);
	}
	ns_journal_free(&j);
	ns_journal_free(&left);
	return r;
}

void ns_revert_report_free(struct ns_revert_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		free(rep->v[i].what);
		free(rep->v[i].value);
		free(rep->v[i].problem);
	}
	free(rep->v);
	memset(rep, 0, sizeof(*rep));
}
