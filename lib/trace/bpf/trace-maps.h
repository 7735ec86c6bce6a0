/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The maps' keys and values, shared by the kernel side (trace.bpf.c, compiled for the BPF target)
 * and the loader (tracebpf.c): fixed-width fields only, laid out without padding holes so both
 * compilers agree.
 */
#ifndef NUMASTOR_TRACE_MAPS_H
#define NUMASTOR_TRACE_MAPS_H

#define NST_MAX_CPUS 8192	   /* cpu_node's size: CPU ids the kernel side can attribute */
#define NST_ISSUE_SLOTS (1u << 18) /* issue times, direct-mapped by request address (4 MiB) */
#define NST_MAX_RECORDS 32768	   /* distinct {disk, queue, CPUs} keys in one window */
#define NST_MAX_BUCKETS 65536	   /* distinct {disk, nodes, bucket} latency keys */
#define NST_MAX_IRQS 8192	   /* watched vectors */
#define NST_MAX_QUEUES 65536	   /* (disk, hardware queue) -> vector pairs */
#define NST_MAX_DISKS 4096

/* irq_source */
#define NST_IRQ_UNKNOWN 0
#define NST_IRQ_HANDLER 1
#define NST_IRQ_VECTOR 2

/* lost[]: UNTIMED requests were counted without a latency (issued before the window, or their
 * issue slot was reused); RECORDS and BUCKETS were not counted (a map was full) */
#define NST_LOST_UNTIMED 0
#define NST_LOST_RECORDS 1
#define NST_LOST_BUCKETS 2
#define NST_LOST_N 3

/* HIST: lib/probe/histogram.h's buckets (NS_HIST_SUB_BITS) */
#define NST_HIST_SUB_BITS 5

struct nst_key {
	__u32 dev; /* makedev(major, first_minor) as the kernel's MKDEV: major << 20 | minor */
	__u32 hwq;
	__u32 submit_cpu;
	__u32 complete_cpu;
	__s32 irq_cpu; /* -1 unknown */
	__u32 irq;
	__u32 irq_source;
	__u32 pad;
};

struct nst_val {
	__u64 requests;
	__u64 bytes;
	__u64 latency_ns_sum;
	__u64 timed; /* requests whose latency is in latency_ns_sum (their issue was seen) */
};

struct nst_issue {
	__u64 rq; /* the request's address; 0 free */
	__u64 ts;
};

struct nst_hkey {
	__u32 dev;
	__s32 submit_node;
	__s32 complete_node;
	__s32 irq_node; /* -1: the interrupt's CPU unknown */
	__u32 bucket;
};

struct nst_hwq {
	__u32 dev;
	__u32 hwq;
};

/* The issue slot of a request's address: requests sit in slab and page arrays, at least 64 bytes
 * apart, so the bits above 6 tell in-flight requests apart; the higher bits fold in so requests of
 * different pools do not line up. */
static inline __attribute__((always_inline)) __u32 nst_issue_slot(__u64 addr)
{
	return (__u32)((addr >> 6) ^ (addr >> 24)) & (NST_ISSUE_SLOTS - 1);
}

/*
 * lib/probe/histogram.c's ns_hist_bucket, without clz (no BPF instruction): the leading one by
 * halving. Here, not in trace.bpf.c, so tests/unit/test-traceagg.c compares the two on every
 * power of two and its neighbours.
 */
static inline __attribute__((always_inline)) __u32 nst_hist_bucket(__u64 v)
{
	__u32 e = 0;
	__u64 x = v;

	if (v < (1u << NST_HIST_SUB_BITS))
		return (__u32)v;
	if (x >> 32) {
		x >>= 32;
		e += 32;
	}
	if (x >> 16) {
		x >>= 16;
		e += 16;
	}
	if (x >> 8) {
		x >>= 8;
		e += 8;
	}
	if (x >> 4) {
		x >>= 4;
		e += 4;
	}
	if (x >> 2) {
		x >>= 2;
		e += 2;
	}
	if (x >> 1)
		e += 1;
	return ((e - NST_HIST_SUB_BITS + 1) << NST_HIST_SUB_BITS) |
	       (__u32)((v >> (e - NST_HIST_SUB_BITS)) & ((1u << NST_HIST_SUB_BITS) - 1));
}

#endif
