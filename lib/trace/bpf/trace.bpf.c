/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numastor trace's kernel side: counts, per request, the CPU that submitted it (its software
 * queue's), the CPU its completion ran on and the CPU its interrupt fired on, with the issue to
 * completion latency, aggregated in maps (no event per request reaches user space). CPUs only:
 * which node a CPU is on and what is local is user space's business (traceagg.c), except for the
 * latency map's key, whose nodes come from the cpu_node map user space fills.
 *
 * Every program exists twice, as a BTF tracepoint (tp_btf: kernels with BPF_PROG_TYPE_TRACING)
 * and a raw tracepoint (raw_tp: kernels without it); the loader keeps one kind. Both read the
 * request through BPF_CORE_READ, so one body serves both.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <stdbool.h>

#include "vmlinux-min.h"
#include "trace-maps.h"

char LICENSE[] SEC("license") = "GPL";

/* set by the loader before the load: only the disks in `disks` are counted */
const volatile __u32 filter_disks = 0;

/*
 * Issue times in a direct-mapped table by the request's address: an array slot is a load and two
 * stores where a hash map's update takes a bucket lock and an allocation (measured: about 250 ns of
 * the issue program's 380 on this project's machines). A slot reused before its request completed
 * (another in-flight request at the same slot) costs that request its latency, never its count:
 * requests are counted at completion, as the disk's own stat file counts them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NST_ISSUE_SLOTS);
	__type(key, __u32);
	__type(value, struct nst_issue);
} issued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NST_MAX_RECORDS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct nst_key);
	__type(value, struct nst_val);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NST_MAX_BUCKETS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct nst_hkey);
	__type(value, __u64);
} latency SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NST_MAX_CPUS);
	__type(key, __u32);
	__type(value, __s32); /* the CPU's node, -1 none */
} cpu_node SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NST_MAX_IRQS);
	__type(key, __u32);   /* a watched vector */
	__type(value, __s32); /* the CPU it last fired on, -1 not yet */
} irq_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NST_MAX_QUEUES);
	__type(key, struct nst_hwq);
	__type(value, __u32); /* the queue's paired vector */
} hwq_irq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NST_MAX_DISKS);
	__type(key, __u32);
	__type(value, __u8);
} disks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32); /* the watched vector whose handler runs here, plus one; 0 none */
} in_irq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NST_LOST_N);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline void count_lost(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &which);
	if (n)
		__sync_fetch_and_add(n, 1);
}

/* What a completion needs of its request, read once by the program's kind (below). */
struct rq_facts {
	__u32 dev, hwq, submit_cpu;
};

/* raw_tp: every field through bpf_probe_read_kernel (BPF_CORE_READ) */
static __always_inline void rq_facts_probe(struct request *rq, struct rq_facts *f)
{
	struct gendisk *disk;

	if (bpf_core_field_exists(((struct request___rq_disk *)rq)->rq_disk))
		disk = BPF_CORE_READ((struct request___rq_disk *)rq, rq_disk);
	else
		disk = BPF_CORE_READ(rq, q, disk);
	f->dev = disk ? ((__u32)BPF_CORE_READ(disk, major) << 20) | (__u32)BPF_CORE_READ(disk, first_minor) : 0;
	f->hwq = BPF_CORE_READ(rq, mq_hctx, queue_num);
	f->submit_cpu = BPF_CORE_READ(rq, mq_ctx, cpu);
}

/* tp_btf: the arguments are typed kernel pointers, read directly (the verifier guards each load) */
static __always_inline void rq_facts_btf(struct request *rq, struct rq_facts *f)
{
	struct gendisk *disk;

	if (bpf_core_field_exists(((struct request___rq_disk *)rq)->rq_disk))
		disk = ((struct request___rq_disk *)rq)->rq_disk;
	else
		disk = rq->q->disk;
	f->dev = disk ? ((__u32)disk->major << 20) | (__u32)disk->first_minor : 0;
	f->hwq = rq->mq_hctx->queue_num;
	f->submit_cpu = rq->mq_ctx->cpu;
}

static __always_inline __s32 node_of(__u32 cpu)
{
	__s32 *n = bpf_map_lookup_elem(&cpu_node, &cpu);
	return n ? *n : -1;
}

/*
 * The request's address as a plain number: the issue table's key. A tp_btf argument is a typed
 * kernel pointer, on which the verifier forbids arithmetic (the slot's shifts): its value is read
 * from the context as bytes instead.
 */
static __always_inline __u64 arg_value(__u64 *ctx, int i)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &ctx[i]);
	return v;
}

static __always_inline int on_issue(__u64 addr)
{
	__u32 slot = nst_issue_slot(addr);
	struct nst_issue *e = bpf_map_lookup_elem(&issued, &slot);

	if (e) {
		e->ts = bpf_ktime_get_ns();
		e->rq = addr;
	}
	return 0;
}

static __always_inline int on_complete(__u64 addr, const struct rq_facts *f, __u32 nr_bytes)
{
	__u64 now, delta = 0;
	__u32 slot = nst_issue_slot(addr);
	struct nst_issue *e;
	struct nst_key k = {};
	struct nst_hkey hk = {};
	struct nst_val *v, zero_val = {};
	struct nst_hwq hq = {};
	__u32 zero = 0, *cur, *irq;
	__s32 *last;
	__u64 *hc, one = 1;
	bool timed = false;

	if (filter_disks && !bpf_map_lookup_elem(&disks, &f->dev))
		return 0;
	now = bpf_ktime_get_ns();
	e = bpf_map_lookup_elem(&issued, &slot);
	if (e && e->rq == addr && e->ts && e->ts <= now) {
		delta = now - e->ts;
		e->rq = 0;
		timed = true;
	} else {
		count_lost(NST_LOST_UNTIMED);
	}

	k.dev = f->dev;
	k.hwq = f->hwq;
	k.submit_cpu = f->submit_cpu;
	k.complete_cpu = bpf_get_smp_processor_id();
	k.irq_cpu = -1;
	cur = bpf_map_lookup_elem(&in_irq, &zero);
	if (cur && *cur) {
		/* inside a storage vector's handler: it fired here */
		k.irq = *cur - 1;
		k.irq_cpu = (__s32)k.complete_cpu;
		k.irq_source = NST_IRQ_HANDLER;
	} else {
		/* completed elsewhere (an IPI to the submitter, a softirq): the queue's vector, where
		 * it last fired */
		hq.dev = k.dev;
		hq.hwq = k.hwq;
		irq = bpf_map_lookup_elem(&hwq_irq, &hq);
		if (irq) {
			last = bpf_map_lookup_elem(&irq_cpu, irq);
			if (last && *last >= 0) {
				k.irq = *irq;
				k.irq_cpu = *last;
				k.irq_source = NST_IRQ_VECTOR;
			}
		}
	}

	v = bpf_map_lookup_elem(&counts, &k);
	if (!v) {
		bpf_map_update_elem(&counts, &k, &zero_val, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&counts, &k);
	}
	if (!v) {
		count_lost(NST_LOST_RECORDS);
		return 0;
	}
	/* the key holds the completing CPU, this one: no other CPU updates the record, and the
	 * program does not run nested on one CPU (the kernel skips a recursive run), so plain adds */
	v->requests++;
	v->bytes += nr_bytes;
	if (!timed)
		return 0;
	v->latency_ns_sum += delta;
	v->timed++;

	hk.dev = k.dev;
	hk.submit_node = node_of(k.submit_cpu);
	hk.complete_node = node_of(k.complete_cpu);
	hk.irq_node = k.irq_cpu >= 0 ? node_of((__u32)k.irq_cpu) : -1;
	hk.bucket = nst_hist_bucket(delta);
	hc = bpf_map_lookup_elem(&latency, &hk);
	if (hc) {
		__sync_fetch_and_add(hc, 1);
	} else if (bpf_map_update_elem(&latency, &hk, &one, BPF_NOEXIST)) {
		hc = bpf_map_lookup_elem(&latency, &hk); /* another CPU made it meanwhile */
		if (hc)
			__sync_fetch_and_add(hc, 1);
		else
			count_lost(NST_LOST_BUCKETS);
	}
	return 0;
}

static __always_inline int on_irq_entry(__u32 irq)
{
	__s32 *last = bpf_map_lookup_elem(&irq_cpu, &irq);
	__u32 zero = 0, *cur;

	if (!last)
		return 0;
	*last = (__s32)bpf_get_smp_processor_id();
	cur = bpf_map_lookup_elem(&in_irq, &zero);
	if (cur)
		*cur = irq + 1;
	return 0;
}

static __always_inline int on_irq_exit(void)
{
	__u32 zero = 0, *cur = bpf_map_lookup_elem(&in_irq, &zero);

	if (cur)
		*cur = 0;
	return 0;
}

/*
 * block_rq_issue lost its request_queue argument in 5.11 (a54895fa057c; Debian's 5.10.0-46 too):
 * the request is the second argument before, the first after. Each kind has a program for either;
 * the loader keeps the one the kernel's BTF prototype says (a program may not read an argument the tracepoint does not
 * have, nor pick its argument by a computed offset: 5.10's verifier refuses a modified context pointer).
 * block_rq_complete's request is the first argument everywhere, nr_bytes the third.
 */
SEC("tp_btf/block_rq_issue")
int btf_issue(__u64 *ctx)
{
	return on_issue(arg_value(ctx, 0));
}

SEC("tp_btf/block_rq_issue")
int btf_issue_q(__u64 *ctx)
{
	return on_issue(arg_value(ctx, 1));
}

SEC("tp_btf/block_rq_complete")
int btf_complete(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	struct rq_facts f;

	rq_facts_btf(rq, &f);
	return on_complete(arg_value(ctx, 0), &f, (__u32)ctx[2]);
}

SEC("tp_btf/irq_handler_entry")
int btf_irq_entry(__u64 *ctx)
{
	return on_irq_entry((__u32)ctx[0]);
}

SEC("tp_btf/irq_handler_exit")
int btf_irq_exit(__u64 *ctx)
{
	return on_irq_exit();
}

SEC("raw_tp/block_rq_issue")
int raw_issue(struct bpf_raw_tracepoint_args *ctx)
{
	return on_issue(ctx->args[0]);
}

SEC("raw_tp/block_rq_issue")
int raw_issue_q(struct bpf_raw_tracepoint_args *ctx)
{
	return on_issue(ctx->args[1]);
}

SEC("raw_tp/block_rq_complete")
int raw_complete(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)ctx->args[0];
	struct rq_facts f;

	rq_facts_probe(rq, &f);
	return on_complete(ctx->args[0], &f, (__u32)ctx->args[2]);
}

SEC("raw_tp/irq_handler_entry")
int raw_irq_entry(struct bpf_raw_tracepoint_args *ctx)
{
	return on_irq_entry((__u32)ctx->args[0]);
}

SEC("raw_tp/irq_handler_exit")
int raw_irq_exit(struct bpf_raw_tracepoint_args *ctx)
{
	return on_irq_exit();
}
