/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What numastor trace measured, attributed to nodes (issue 34). The kernel side (trace.bpf.c)
 * counts requests by CPUs only: per {disk, hardware queue, submit CPU, completion CPU, interrupt
 * CPU}. Which node a CPU is on, which disk belongs to which device (a multipath head's paths) and
 * what is local are decided here, in user space, from plain records: so the attribution is tested
 * without a kernel (tests/unit/test-traceagg.c), and the BPF program stays small.
 */
#ifndef NUMASTOR_TRACEAGG_H
#define NUMASTOR_TRACEAGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/cpuset.h"
#include "probe/histogram.h"

/* How a request's interrupt CPU is known (the kernel side's irq_source). */
enum ns_irq_source {
	NS_IRQ_UNKNOWN = 0, /* neither below: no watched vector fired for its queue */
	NS_IRQ_HANDLER = 1, /* completed inside a watched storage IRQ's handler: that CPU */
	NS_IRQ_VECTOR = 2,  /* the CPU the queue's paired vector last fired on */
};

/* One record of the kernel side's count map: the requests sharing all of the key. */
struct ns_trace_rec {
	uint32_t dev; /* the request's disk, makedev(major, first_minor) */
	uint32_t hwq; /* its hardware queue (queue_num) */
	uint32_t submit_cpu, complete_cpu;
	int32_t irq_cpu; /* -1 unknown */
	uint32_t irq;	 /* the vector, 0 unknown */
	enum ns_irq_source irq_source;
	uint64_t requests, bytes;
	uint64_t latency_ns_sum, timed; /* timed: requests whose latency the sum holds (their issue was
					 * seen in the window) */
};

/* One bucket of the kernel side's latency map: lib/probe/histogram.h's bucket index. */
struct ns_trace_bucket {
	uint32_t dev;
	int32_t submit_node, complete_node, irq_node; /* -1: no node (irq_node: the IRQ CPU unknown) */
	uint32_t bucket;
	uint64_t count;
};

/* A device asked for, with the disks that carry its requests. */
struct ns_trace_target {
	char *name;	 /* "nvme0n1": a multipath head's name; the path disks are its disks */
	int node;	 /* the device's node as check reads it, -1 none */
	uint32_t *disks; /* devnums whose requests are this device's */
	char **disk_names;
	size_t ndisks;
};

struct ns_trace_lat {
	bool known; /* false: no request in the class */
	double p50_us, p90_us, p99_us, mean_us, max_us;
	uint64_t count; /* the class's timed requests (their issue seen): what sum_us adds up */
	double sum_us;	/* their latencies' exact sum */
};

struct ns_trace_pair {
	int submit_node, complete_node; /* -1: a CPU no node holds */
	uint64_t requests, bytes, irq_remote, irq_unknown;
	struct ns_hist *latency; /* NULL when no bucket came for the pair */
	struct ns_trace_lat lat;
};

struct ns_trace_queue {
	uint32_t dev;	  /* the disk whose queue it is (a head's: a path disk's) */
	const char *disk; /* its name (the target's disk_names) */
	uint32_t hwq;
	int irq; /* -1 unknown; the vector seen (several: the first) */
	uint64_t requests;
	struct ns_cpuset submit_cpus, complete_cpus, irq_cpus; /* irq_cpus.known false: none known */
	int irq_source;					       /* enum ns_irq_source, or -1 mixed */
};

struct ns_trace_device {
	const struct ns_trace_target *target;
	uint64_t requests, bytes, complete_local, irq_remote, irq_known, irq_unknown;
	double complete_local_share; /* < 0: no request */
	double irq_remote_share;     /* < 0: no request with a known IRQ CPU */
	struct ns_trace_pair *pairs; /* by (submit node, complete node) */
	size_t npairs;
	struct ns_trace_queue *queues; /* by hardware queue */
	size_t nqueues;
	/* local: completed and interrupted on the submitter's node (or its IRQ CPU unknown);
	 * remote: the rest, the requests that crossed */
	struct ns_trace_lat local, remote;
};

/* The finding io-crosses-nodes, by the measured shares and latency gap. */
enum ns_trace_severity { NS_TRACE_NONE = 0, NS_TRACE_INFO = 1, NS_TRACE_WARNING = 2 };
#define NS_TRACE_MIN_REQUESTS 100
#define NS_TRACE_INFO_SHARE 0.05
#define NS_TRACE_WARN_SHARE 0.25
#define NS_TRACE_WARN_GAP 1.10

struct ns_trace_verdict {
	enum ns_trace_severity severity;
	double complete_remote_share; /* 1 - complete_local_share */
	double irq_remote_share;      /* < 0 unknown */
	double latency_gap;	      /* remote p50 / local p50; < 0 without both */
};

struct ns_trace_result {
	struct ns_trace_device *devices; /* one per target, in the targets' order */
	size_t ndevices;
	uint64_t unattributed; /* requests of disks no target holds (not shown) */
};

/*
 * Attribute recs and buckets to targets. cpu_node[c] is CPU c's node (-1 none), ncpus entries.
 * Records of a disk no target holds are counted in out->unattributed. 0, -ENOMEM.
 * Devnums (ns_trace_rec.dev, targets' disks) are the kernel's: major << 20 | minor.
 */
int ns_trace_attribute(const struct ns_trace_target *targets, size_t ntargets, const struct ns_trace_rec *recs,
		       size_t nrecs, const struct ns_trace_bucket *buckets, size_t nbuckets, const int *cpu_node,
		       size_t ncpus, struct ns_trace_result *out);
void ns_trace_result_free(struct ns_trace_result *r);

/*
 * The completions the disks' own counters show that recs do not hold: the sum, over the disks
 * whose count is known (known[i]), of completed[i] (the disk's requests completed over the
 * window, lib/read/diskstat.h) less the requests recs hold for devs[i], where that is more.
 * A disk whose records hold more (a request traced twice: a partial completion; a passthrough
 * command the counter leaves out) adds nothing: the difference says only what went unseen.
 */
uint64_t ns_trace_unseen(const uint32_t *devs, const uint64_t *completed, const bool *known, size_t ndevs,
			 const struct ns_trace_rec *recs, size_t nrecs);

/* The verdict on one device (severity NONE: no finding). */
void ns_trace_judge(const struct ns_trace_device *d, struct ns_trace_verdict *v);

#endif
