/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel side of numastor trace (trace.bpf.c) as the rest of numastor sees it: check that the
 * running kernel can take it, load it (libbpf, CO-RE against the kernel's own BTF), attach it,
 * and, when the window ends, detach it and hand over its maps as plain records
 * (trace/traceagg.h). Nothing is pinned: the programs, their links and maps are file descriptors
 * of this process, and go with it however it ends (SIGKILL included).
 *
 * The only file of numastor that includes libbpf. Built only with -Dbpf (NUMASTOR_HAVE_BPF);
 * without it every call returns -EOPNOTSUPP with the reason "built without BPF support".
 */
#ifndef NUMASTOR_TRACEBPF_H
#define NUMASTOR_TRACEBPF_H

#include <stddef.h>
#include <stdint.h>

#include "trace/traceagg.h"

struct ns_root;

/* What the kernel side is told before it attaches. */
struct ns_trace_setup {
	const int *cpu_node; /* node of each CPU, -1 none */
	size_t ncpus;
	const uint32_t *disks; /* count only these (kernel devnums: major << 20 | minor); none: all */
	size_t ndisks;
	const uint32_t *irqs; /* the storage vectors whose handlers are watched */
	size_t nirqs;
	const uint32_t *pair_dev, *pair_hwq, *pair_irq; /* (disk, hardware queue) -> its vector */
	size_t npairs;
	int kver_major, kver_minor; /* the running kernel's (block_rq_issue's arguments changed in 5.11) */
	/* called once the completions are counted and before the issues are watched, the last step
	 * of the attach: the caller's first reading of the disks' own counters (NULL: none) */
	void (*counting)(void *arg);
	void *counting_arg;
};

/* Why it could not trace: the reason, one line for the operator. */
enum ns_trace_why {
	NS_TRACE_OK = 0,
	NS_TRACE_NO_SUPPORT, /* numastor built without BPF */
	NS_TRACE_NO_BTF,     /* sys/kernel/btf/vmlinux absent */
	NS_TRACE_LOCKDOWN,   /* kernel lockdown forbids reading kernel memory */
	NS_TRACE_PERM,	     /* not root / no CAP_BPF, CAP_PERFMON */
	NS_TRACE_VERIFIER,   /* the kernel refused the program */
	NS_TRACE_ATTACH,     /* a tracepoint could not be attached */
	NS_TRACE_OTHER,
};

struct ns_trace_bpf;

/*
 * Before loading anything: the kernel's BTF and lockdown through root (a live root). 0, or
 * -errno with *why and reason (a sentence, static or in reason[len]) filled.
 */
int ns_trace_bpf_preflight(struct ns_root *root, enum ns_trace_why *why, char *reason, size_t len);

/*
 * Load, fill the maps from s, attach: the window starts. On failure -errno, *why and reason; the
 * loader's log (libbpf's and the verifier's messages, possibly long) in *log when log is not NULL
 * (free it). Nothing stays attached after a failure.
 */
int ns_trace_bpf_start(const struct ns_trace_setup *s, struct ns_trace_bpf **out, enum ns_trace_why *why, char *reason,
		       size_t len, char **log);

/* "tp_btf" or "raw_tp": the kind of program attached (static string). */
const char *ns_trace_bpf_attach_kind(const struct ns_trace_bpf *t);

/* What the window could not count (ns_trace_bpf_stop's lost[]). */
enum ns_trace_lost {
	NS_TRACE_UNTIMED = 0,	   /* counted without a latency: the issue was not seen */
	NS_TRACE_LOST_RECORDS = 1, /* not counted: the record map was full */
	NS_TRACE_LOST_BUCKETS = 2, /* counted, latency not: the bucket map was full */
	NS_TRACE_MISSED = 3,	   /* completions the kernel did not run the program for: it was already
				    * running on that CPU (an interrupt's completion nested in another's;
				    * the kernel's recursion_misses of the program), any disk's */
	NS_TRACE_LOST_N = 4,
};

/*
 * End the window (detach) and read the maps: records and latency buckets (free both), and what
 * could not be counted (lost[], enum ns_trace_lost). 0 or -errno.
 */
int ns_trace_bpf_stop(struct ns_trace_bpf *t, struct ns_trace_rec **recs, size_t *nrecs,
		      struct ns_trace_bucket **buckets, size_t *nbuckets, uint64_t lost[NS_TRACE_LOST_N]);

/* Detach when still attached, and free. */
void ns_trace_bpf_free(struct ns_trace_bpf *t);

#endif
