/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "trace/tracebpf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/testhook.h"
#include "config.h"
#include "read/root.h"

static void set_reason(enum ns_trace_why *why, char *reason, size_t len, enum ns_trace_why w, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void set_reason(enum ns_trace_why *why, char *reason, size_t len, enum ns_trace_why w, const char *fmt, ...)
{
	va_list ap;

	*why = w;
	if (!reason || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, len, fmt, ap);
	va_end(ap);
}

/* NUMASTOR_TEST_TRACE_FAIL=btf|lockdown|perm|verifier: fail as that reason (test builds only) */
static const char *forced_failure(void)
{
	return ns_test_hook("NUMASTOR_TEST_TRACE_FAIL");
}

int ns_trace_bpf_preflight(struct ns_root *root, enum ns_trace_why *why, char *reason, size_t len)
{
	const char *forced = forced_failure();
	char *lock = NULL;
	int r;

	*why = NS_TRACE_OK;
	if (!NUMASTOR_HAVE_BPF) {
		set_reason(why, reason, len, NS_TRACE_NO_SUPPORT,
			   "this numastor was built without BPF support (meson -Dbpf=disabled)");
		return -EOPNOTSUPP;
	}
	r = forced && strcmp(forced, "btf") == 0 ? 0 : ns_probe(root, "sys/kernel/btf/vmlinux");
	if (r < 0) {
		set_reason(why, reason, len, NS_TRACE_NO_BTF,
			   "whether the kernel has BTF could not be told: /sys/kernel/btf/vmlinux: %s", strerror(-r));
		return r;
	}
	if (r == 0) {
		set_reason(why, reason, len, NS_TRACE_NO_BTF,
			   "the kernel has no BTF (/sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF), which numastor's "
			   "CO-RE program needs");
		return -ENOENT;
	}
	/* "none [integrity] confidentiality": confidentiality forbids BPF reads of kernel memory */
	r = ns_read_str(root, "sys/kernel/security/lockdown", &lock);
	if ((forced && strcmp(forced, "lockdown") == 0) || (r == 0 && strstr(lock, "[confidentiality]"))) {
		free(lock);
		set_reason(why, reason, len, NS_TRACE_LOCKDOWN,
			   "kernel lockdown (confidentiality) forbids BPF programs to read kernel memory "
			   "(/sys/kernel/security/lockdown)");
		return -EPERM;
	}
	free(lock);
	return 0;
}

#if NUMASTOR_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "trace/bpf/trace-maps.h"
#include "trace.skel.h"

struct ns_trace_bpf {
	struct trace_bpf *skel;
	bool btf;	      /* tp_btf programs, else raw_tp */
	bool issue_has_queue; /* block_rq_issue(q, rq): before 5.11 */
	bool attached;
};

/* libbpf's messages, kept (never printed: lib/ does not print) for the caller's --verbose. One
 * load at a time: numastor traces once per process. */
static char *loader_log;
static size_t loader_log_len;

static void log_append(const char *line, size_t n)
{
	char *grown = realloc(loader_log, loader_log_len + n + 1);
	if (grown) {
		memcpy(grown + loader_log_len, line, n);
		grown[loader_log_len + n] = 0;
		loader_log = grown;
		loader_log_len += n;
	}
}

static int keep_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *line = NULL;
	int n;

	if (level == LIBBPF_DEBUG)
		return 0;
	n = vasprintf(&line, fmt, ap);
	if (n < 0)
		return 0;
	log_append(line, (size_t)n);
	free(line);
	return n;
}

/* The last line of the log that says something (the verifier's reason is near its end). */
static void last_log_line(char *out, size_t len)
{
	char *copy, *save = NULL, *tok, *last = NULL;

	out[0] = 0;
	if (!loader_log)
		return;
	copy = strdup(loader_log);
	if (!copy)
		return;
	for (tok = strtok_r(copy, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save))
		if (strspn(tok, " \t") != strlen(tok) && !strstr(tok, "-- END PROG LOAD LOG --") &&
		    !strstr(tok, "processed "))
			last = tok;
	if (last)
		snprintf(out, len, "%s", last + strspn(last, " \t"));
	free(copy);
}

/*
 * Whether the kernel has BPF_PROG_TYPE_TRACING (tp_btf): libbpf loads a trivial program of the
 * type. 6.18 builds without it exist (this project's own machines: raw tracepoints only).
 */
static bool has_tracing(void)
{
	return libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACING, NULL) == 1;
}

static int fill_maps(struct trace_bpf *skel, const struct ns_trace_setup *s)
{
	int fd;

	fd = bpf_map__fd(skel->maps.cpu_node);
	for (size_t c = 0; c < s->ncpus && c < NST_MAX_CPUS; c++) {
		__u32 k = (__u32)c;
		__s32 v = s->cpu_node[c];
		if (bpf_map_update_elem(fd, &k, &v, BPF_ANY))
			return -errno;
	}
	/* a CPU beyond the table reads node -1 (the array's zero would say node 0) */
	for (size_t c = s->ncpus; c < NST_MAX_CPUS; c++) {
		__u32 k = (__u32)c;
		__s32 v = -1;
		if (bpf_map_update_elem(fd, &k, &v, BPF_ANY))
			return -errno;
	}
	fd = bpf_map__fd(skel->maps.disks);
	for (size_t i = 0; i < s->ndisks; i++) {
		__u8 one = 1;
		if (bpf_map_update_elem(fd, &s->disks[i], &one, BPF_ANY))
			return -errno;
	}
	fd = bpf_map__fd(skel->maps.irq_cpu);
	for (size_t i = 0; i < s->nirqs; i++) {
		__s32 none = -1;
		if (bpf_map_update_elem(fd, &s->irqs[i], &none, BPF_ANY))
			return -errno;
	}
	fd = bpf_map__fd(skel->maps.hwq_irq);
	for (size_t i = 0; i < s->npairs; i++) {
		struct nst_hwq k = {s->pair_dev[i], s->pair_hwq[i]};
		if (bpf_map_update_elem(fd, &k, &s->pair_irq[i], BPF_ANY))
			return -errno;
	}
	return 0;
}

/*
 * Whether block_rq_issue passes the request queue before the request: 1, 0, -errno. The kernel's
 * own BTF says (the tracepoint's prototype, btf_trace_block_rq_issue: __data then its arguments),
 * not its version: upstream dropped the queue in 5.11 (a54895fa057c), and Debian's 5.10.0-46
 * has the one-argument form too (measured in the VM bed).
 */
static int issue_takes_queue(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	int id, r = -ENOENT;

	if (!btf)
		return -errno ? -errno : -ENOENT;
	id = btf__find_by_name_kind(btf, "btf_trace_block_rq_issue", BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	if (t)
		t = btf__type_by_id(btf, t->type); /* the pointer */
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type); /* the prototype */
	if (t && btf_is_func_proto(t))
		r = btf_vlen(t) == 3;
	btf__free(btf);
	return r;
}

/* Keep the programs of one kind (tp_btf or raw_tp), with block_rq_issue's of the kernel's
 * argument list (the request first from 5.11 on, after the queue before). */
static void keep_programs(struct trace_bpf *skel, bool btf, bool issue_has_queue)
{
	bpf_program__set_autoload(skel->progs.btf_issue, btf && !issue_has_queue);
	bpf_program__set_autoload(skel->progs.btf_issue_q, btf && issue_has_queue);
	bpf_program__set_autoload(skel->progs.btf_complete, btf);
	bpf_program__set_autoload(skel->progs.btf_irq_entry, btf);
	bpf_program__set_autoload(skel->progs.btf_irq_exit, btf);
	bpf_program__set_autoload(skel->progs.raw_issue, !btf && !issue_has_queue);
	bpf_program__set_autoload(skel->progs.raw_issue_q, !btf && issue_has_queue);
	bpf_program__set_autoload(skel->progs.raw_complete, !btf);
	bpf_program__set_autoload(skel->progs.raw_irq_entry, !btf);
	bpf_program__set_autoload(skel->progs.raw_irq_exit, !btf);
}

/* The window opens with the interrupts watched first and the issues last, so that every request
 * counted was issued, and its interrupt seen, inside it. Between the completions and the issues,
 * the caller's setup->counting: its first reading of the disks' own counters. */
static int attach_all(struct ns_trace_bpf *t, const struct ns_trace_setup *setup)
{
	struct trace_bpf *s = t->skel;
	struct bpf_program *order[4];
	struct bpf_link **links[4];

	if (t->btf) {
		order[0] = s->progs.btf_irq_entry, links[0] = &s->links.btf_irq_entry;
		order[1] = s->progs.btf_irq_exit, links[1] = &s->links.btf_irq_exit;
		order[2] = s->progs.btf_complete, links[2] = &s->links.btf_complete;
		order[3] = t->issue_has_queue ? s->progs.btf_issue_q : s->progs.btf_issue;
		links[3] = t->issue_has_queue ? &s->links.btf_issue_q : &s->links.btf_issue;
	} else {
		order[0] = s->progs.raw_irq_entry, links[0] = &s->links.raw_irq_entry;
		order[1] = s->progs.raw_irq_exit, links[1] = &s->links.raw_irq_exit;
		order[2] = s->progs.raw_complete, links[2] = &s->links.raw_complete;
		order[3] = t->issue_has_queue ? s->progs.raw_issue_q : s->progs.raw_issue;
		links[3] = t->issue_has_queue ? &s->links.raw_issue_q : &s->links.raw_issue;
	}
	for (size_t i = 0; i < 4; i++) {
		struct bpf_link *l;
		if (i == 3 && setup->counting) /* completions counted from here on */
			setup->counting(setup->counting_arg);
		l = bpf_program__attach(order[i]);
		if (!l)
			return -errno ? -errno : -EINVAL;
		*links[i] = l;
	}
	t->attached = true;
	return 0;
}

static void detach_all(struct ns_trace_bpf *t)
{
	if (t->attached)
		trace_bpf__detach(t->skel);
	t->attached = false;
}

static bool perm_error(int err)
{
	return err == -EPERM || err == -EACCES;
}

int ns_trace_bpf_start(const struct ns_trace_setup *s, struct ns_trace_bpf **out, enum ns_trace_why *why, char *reason,
		       size_t len, char **log)
{
	const char *forced = forced_failure();
	struct ns_trace_bpf *t;
	int r;

	*out = NULL;
	*why = NS_TRACE_OK;
	if (log)
		*log = NULL;
	free(loader_log);
	loader_log = NULL;
	loader_log_len = 0;
	libbpf_set_print(keep_log);

	if (forced && strcmp(forced, "perm") == 0) {
		set_reason(why, reason, len, NS_TRACE_PERM,
			   "loading BPF programs needs root (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)");
		return -EPERM;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->skel = trace_bpf__open();
	if (!t->skel) {
		r = -errno ? -errno : -EINVAL;
		set_reason(why, reason, len, perm_error(r) ? NS_TRACE_PERM : NS_TRACE_OTHER,
			   "cannot open the BPF program: %s", strerror(-r));
		goto fail;
	}
	t->skel->rodata->filter_disks = s->ndisks > 0;
	t->btf = has_tracing();
	r = issue_takes_queue();
	if (r >= 0)
		t->issue_has_queue = r == 1;
	else /* the version, as upstream has it; an unknown one (0.0) taken for a current kernel */
		t->issue_has_queue =
			s->kver_major > 0 && (s->kver_major < 5 || (s->kver_major == 5 && s->kver_minor < 11));
	keep_programs(t->skel, t->btf, t->issue_has_queue);
	r = trace_bpf__load(t->skel);
	if (!r && forced && strcmp(forced, "verifier") == 0) {
		static const char fake[] = "libbpf: prog 'raw_complete': BPF program load failed: Permission denied\n"
					   "R1 invalid mem access 'scalar' (a refusal forced by the test switch)\n";
		log_append(fake, sizeof(fake) - 1);
		r = -EACCES;
	} else if (r && perm_error(r) && geteuid() != 0) {
		set_reason(why, reason, len, NS_TRACE_PERM,
			   "loading BPF programs needs root (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)");
		goto fail;
	}
	if (r) {
		char last[200];
		last_log_line(last, sizeof(last));
		set_reason(why, reason, len, NS_TRACE_VERIFIER, "the kernel refused numastor's BPF program: %s",
			   *last ? last : strerror(-r));
		goto fail;
	}
	r = fill_maps(t->skel, s);
	if (r) {
		set_reason(why, reason, len, NS_TRACE_OTHER, "cannot fill the BPF maps: %s", strerror(-r));
		goto fail;
	}
	r = attach_all(t, s);
	if (r) {
		set_reason(why, reason, len, perm_error(r) ? NS_TRACE_PERM : NS_TRACE_ATTACH,
			   "cannot attach to the block and IRQ tracepoints: %s", strerror(-r));
		goto fail;
	}
	*out = t;
	return 0;
fail:
	if (log && loader_log)
		*log = strdup(loader_log);
	ns_trace_bpf_free(t);
	return r;
}

const char *ns_trace_bpf_attach_kind(const struct ns_trace_bpf *t)
{
	return t->btf ? "tp_btf" : "raw_tp";
}

/* The kernel's count of runs of p it skipped because p was already running on that CPU (5.12 on;
 * 0 where the kernel does not count them). */
static uint64_t recursion_misses(const struct bpf_program *p)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
		return 0;
	return info.recursion_misses;
}

int ns_trace_bpf_stop(struct ns_trace_bpf *t, struct ns_trace_rec **recs, size_t *nrecs,
		      struct ns_trace_bucket **buckets, size_t *nbuckets, uint64_t lost[NS_TRACE_LOST_N])
{
	struct nst_key k, next, *prev = NULL;
	struct nst_hkey hk, hnext, *hprev = NULL;
	struct ns_trace_rec *rv = NULL;
	struct ns_trace_bucket *bv = NULL;
	size_t n = 0, cap = 0, nb = 0, bcap = 0;
	int fd, r = 0;

	*recs = NULL, *nrecs = 0, *buckets = NULL, *nbuckets = 0;
	detach_all(t);
	fd = bpf_map__fd(t->skel->maps.counts);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct nst_val v;
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		if (n == cap) {
			struct ns_trace_rec *g = realloc(rv, (cap = cap ? 2 * cap : 256) * sizeof(*rv));
			if (!g) {
				r = -ENOMEM;
				goto out;
			}
			rv = g;
		}
		rv[n++] = (struct ns_trace_rec){.dev = k.dev,
						.hwq = k.hwq,
						.submit_cpu = k.submit_cpu,
						.complete_cpu = k.complete_cpu,
						.irq_cpu = k.irq_cpu,
						.irq = k.irq,
						.irq_source = (enum ns_irq_source)k.irq_source,
						.requests = v.requests,
						.bytes = v.bytes,
						.latency_ns_sum = v.latency_ns_sum,
						.timed = v.timed};
	}
	fd = bpf_map__fd(t->skel->maps.latency);
	while (bpf_map_get_next_key(fd, hprev, &hnext) == 0) {
		__u64 c;
		hk = hnext;
		hprev = &hk;
		if (bpf_map_lookup_elem(fd, &hk, &c))
			continue;
		if (nb == bcap) {
			struct ns_trace_bucket *g = realloc(bv, (bcap = bcap ? 2 * bcap : 256) * sizeof(*bv));
			if (!g) {
				r = -ENOMEM;
				goto out;
			}
			bv = g;
		}
		bv[nb++] =
			(struct ns_trace_bucket){hk.dev, hk.submit_node, hk.complete_node, hk.irq_node, hk.bucket, c};
	}
	fd = bpf_map__fd(t->skel->maps.lost);
	for (__u32 i = 0; i < NST_LOST_N; i++) {
		__u64 c = 0;
		lost[i] = bpf_map_lookup_elem(fd, &i, &c) ? 0 : c;
	}
	lost[NS_TRACE_MISSED] = recursion_misses(t->btf ? t->skel->progs.btf_complete : t->skel->progs.raw_complete);
out:
	if (r) {
		free(rv);
		free(bv);
		return r;
	}
	*recs = rv, *nrecs = n, *buckets = bv, *nbuckets = nb;
	return 0;
}

void ns_trace_bpf_free(struct ns_trace_bpf *t)
{
	if (!t)
		return;
	detach_all(t);
	trace_bpf__destroy(t->skel);
	free(t);
}

#else /* !NUMASTOR_HAVE_BPF */

struct ns_trace_bpf {
	int unused;
};

int ns_trace_bpf_start(const struct ns_trace_setup *s, struct ns_trace_bpf **out, enum ns_trace_why *why, char *reason,
		       size_t len, char **log)
{
	*out = NULL;
	if (log)
		*log = NULL;
	set_reason(why, reason, len, NS_TRACE_NO_SUPPORT,
		   "this numastor was built without BPF support (meson -Dbpf=disabled)");
	return -EOPNOTSUPP;
}

const char *ns_trace_bpf_attach_kind(const struct ns_trace_bpf *t)
{
	return "none";
}

int ns_trace_bpf_stop(struct ns_trace_bpf *t, struct ns_trace_rec **recs, size_t *nrecs,
		      struct ns_trace_bucket **buckets, size_t *nbuckets, uint64_t lost[NS_TRACE_LOST_N])
{
	return -EOPNOTSUPP;
}

void ns_trace_bpf_free(struct ns_trace_bpf *t) {}
#endif
