/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numastor trace's attribution (lib/trace/traceagg.h): records counted by CPUs become requests by
 * (submit node, completion node), shares of what completed or was interrupted on another node,
 * per-queue CPU sets, a multipath head's path disks folded into it, and the verdict. Also the
 * kernel side's histogram bucket (lib/trace/bpf/trace-maps.h) against lib/probe/histogram's. And
 * the completions trace reports unseen: a disk's own counter (lib/read/diskstat.h) less what the
 * records hold.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/types.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpuset.h"
#include "probe/histogram.h"
#include "fakeroot.h"
#include "read/diskstat.h"
#include "read/root.h"
#include "tap.h"
#include "trace/bpf/trace-maps.h"
#include "trace/traceagg.h"

/* two nodes of 4 CPUs: 0-3 node 0, 4-7 node 1; CPU 8 on none */
static const int cpu_node[] = {0, 0, 0, 0, 1, 1, 1, 1, -1};
#define NCPU (sizeof(cpu_node) / sizeof(cpu_node[0]))
#define DEV(maj, min) ((uint32_t)(maj) << 20 | (uint32_t)(min))

static void test_bucket_matches_histogram(void)
{
	bool same = true;

	for (unsigned e = 0; e < 64; e++)
		for (int d = -1; d <= 1; d++) {
			__u64 v = ((__u64)1 << e) + (__u64)(long long)d;
			if (nst_hist_bucket(v) != ns_hist_bucket(v))
				same = false;
		}
	for (__u64 v = 0; v < 100000; v += 7)
		if (nst_hist_bucket(v) != ns_hist_bucket(v))
			same = false;
	CHECK(same);
	CHECK(nst_hist_bucket(~0ull) == ns_hist_bucket(~0ull));
}

static void test_pairs_and_shares(void)
{
	uint32_t disks[] = {DEV(259, 0)};
	char *names[] = {"nvme0n1"};
	struct ns_trace_target t = {.name = "nvme0n1", .node = 0, .disks = disks, .disk_names = names, .ndisks = 1};
	/* submitted on node 0 (CPU 1), completed on node 1 (CPU 5) where the IRQ fired: 300;
	 * submitted and completed on node 0 with the IRQ there: 700 */
	struct ns_trace_rec recs[] = {
		{DEV(259, 0), 2, 1, 5, 5, 60, NS_IRQ_HANDLER, 300, 300 * 4096, 300 * 120000ull, 300},
		{DEV(259, 0), 0, 0, 0, 0, 58, NS_IRQ_HANDLER, 700, 700 * 4096, 700 * 80000ull, 700},
		{DEV(8, 0), 0, 0, 0, 0, 40, NS_IRQ_HANDLER, 50, 50 * 4096, 0, 0}, /* another disk */
	};
	struct ns_trace_bucket b[] = {
		{DEV(259, 0), 0, 1, 1, (uint32_t)ns_hist_bucket(120000), 300},
		{DEV(259, 0), 0, 0, 0, (uint32_t)ns_hist_bucket(80000), 700},
	};
	struct ns_trace_result r;
	struct ns_trace_verdict v;
	const struct ns_trace_device *d;

	CHECK(ns_trace_attribute(&t, 1, recs, 3, b, 2, cpu_node, NCPU, &r) == 0);
	CHECK(r.ndevices == 1);
	CHECK(r.unattributed == 50);
	d = &r.devices[0];
	CHECK(d->requests == 1000);
	CHECK(d->bytes == 1000 * 4096);
	CHECK(d->complete_local == 700);
	CHECK(d->complete_local_share > 0.699 && d->complete_local_share < 0.701);
	CHECK(d->irq_remote == 300 && d->irq_known == 1000 && d->irq_unknown == 0);
	CHECK(d->npairs == 2);
	/* sorted by submit node, then completion node: (0,0) then (0,1) */
	CHECK(d->pairs[0].submit_node == 0 && d->pairs[0].complete_node == 0 && d->pairs[0].requests == 700);
	CHECK(d->pairs[1].submit_node == 0 && d->pairs[1].complete_node == 1 && d->pairs[1].requests == 300);
	CHECK(d->pairs[1].irq_remote == 300 && d->pairs[0].irq_remote == 0);
	/* latency: local 80 us, remote 120 us, within a bucket (1/32) above */
	CHECK(d->local.known && d->local.p50_us >= 80 && d->local.p50_us < 80 * 1.04);
	CHECK(d->remote.known && d->remote.p50_us >= 120 && d->remote.p50_us < 120 * 1.04);
	CHECK(d->remote.mean_us > 119.9 && d->remote.mean_us < 120.1);
	/* queues: by hardware queue, with their CPU sets */
	CHECK(d->nqueues == 2);
	CHECK(d->queues[0].hwq == 0 && d->queues[1].hwq == 2);
	CHECK(ns_cpuset_test(&d->queues[1].submit_cpus, 1) && ns_cpuset_count(&d->queues[1].submit_cpus) == 1);
	CHECK(ns_cpuset_test(&d->queues[1].complete_cpus, 5) && ns_cpuset_test(&d->queues[1].irq_cpus, 5));
	CHECK(d->queues[1].irq == 60 && d->queues[1].irq_source == NS_IRQ_HANDLER);
	ns_trace_judge(d, &v);
	CHECK(v.severity == NS_TRACE_WARNING); /* 30% crossed, 1.5x slower */
	CHECK(v.complete_remote_share > 0.299 && v.complete_remote_share < 0.301);
	CHECK(v.latency_gap > 1.45 && v.latency_gap < 1.55);
	ns_trace_result_free(&r);
}

/* the interrupt on node 1, completions moved back to the submitter on node 0 (rq_affinity): the
 * completion is local, the interrupt is not */
static void test_irq_remote_only(void)
{
	uint32_t disks[] = {DEV(252, 0)};
	char *names[] = {"vda"};
	struct ns_trace_target t = {.name = "vda", .node = -1, .disks = disks, .disk_names = names, .ndisks = 1};
	struct ns_trace_rec recs[] = {
		{DEV(252, 0), 0, 2, 2, 6, 36, NS_IRQ_VECTOR, 1000, 1000 * 512, 1000 * 50000ull, 1000},
		{DEV(252, 0), 0, 3, 3, -1, 0, NS_IRQ_UNKNOWN, 10, 10 * 512, 10 * 50000ull, 10},
	};
	struct ns_trace_result r;
	struct ns_trace_verdict v;
	const struct ns_trace_device *d;

	CHECK(ns_trace_attribute(&t, 1, recs, 2, NULL, 0, cpu_node, NCPU, &r) == 0);
	d = &r.devices[0];
	CHECK(d->complete_local == 1010);
	CHECK(d->irq_remote == 1000 && d->irq_known == 1000 && d->irq_unknown == 10);
	CHECK(d->irq_remote_share > 0.999);
	CHECK(d->queues[0].irq_source == NS_IRQ_VECTOR);
	ns_trace_judge(d, &v);
	/* no bucket came: neither class has a latency, so nothing local to compare: warning */
	CHECK(v.severity == NS_TRACE_WARNING);
	CHECK(v.latency_gap < 0);
	ns_trace_result_free(&r);
}

/* a multipath head: its path disks' requests are its own; a CPU on no node is never local */
static void test_head_and_nodeless(void)
{
	uint32_t disks[] = {DEV(259, 1), DEV(259, 2)};
	char *names[] = {"nvme0c0n1", "nvme0c1n1"};
	struct ns_trace_target t = {.name = "nvme0n1", .node = 0, .disks = disks, .disk_names = names, .ndisks = 2};
	struct ns_trace_rec recs[] = {
		{DEV(259, 1), 0, 0, 0, 0, 58, NS_IRQ_HANDLER, 980, 0, 0},
		{DEV(259, 2), 0, 8, 8, 8, 70, NS_IRQ_HANDLER, 20, 0, 0},
	};
	struct ns_trace_result r;
	struct ns_trace_verdict v;
	const struct ns_trace_device *d;

	CHECK(ns_trace_attribute(&t, 1, recs, 2, NULL, 0, cpu_node, NCPU, &r) == 0);
	d = &r.devices[0];
	CHECK(d->requests == 1000 && d->complete_local == 980);
	CHECK(d->nqueues == 2 && strcmp(d->queues[0].disk, "nvme0c0n1") == 0 &&
	      strcmp(d->queues[1].disk, "nvme0c1n1") == 0);
	/* CPU 8's interrupt has no node: unknown, not remote */
	CHECK(d->irq_unknown == 20 && d->irq_remote == 0);
	ns_trace_judge(d, &v);
	CHECK(v.severity == NS_TRACE_NONE); /* 2% crossed: below 5% */
	ns_trace_result_free(&r);
}

static void test_verdict_thresholds(void)
{
	struct ns_trace_device d = {0};
	struct ns_trace_verdict v;

	d.requests = 99, d.complete_local_share = 0, d.irq_remote_share = 1;
	ns_trace_judge(&d, &v);
	CHECK(v.severity == NS_TRACE_NONE); /* too few to judge */
	d.requests = 1000, d.complete_local_share = 0.96, d.irq_remote_share = -1;
	ns_trace_judge(&d, &v);
	CHECK(v.severity == NS_TRACE_NONE);
	d.complete_local_share = 0.94;
	ns_trace_judge(&d, &v);
	CHECK(v.severity == NS_TRACE_INFO);
	d.complete_local_share = 0.70; /* 30% crossed, but no slower */
	d.local.known = d.remote.known = true;
	d.local.p50_us = 100, d.remote.p50_us = 105;
	ns_trace_judge(&d, &v);
	CHECK(v.severity == NS_TRACE_INFO);
	d.remote.p50_us = 111;
	ns_trace_judge(&d, &v);
	CHECK(v.severity == NS_TRACE_WARNING);
	d.complete_local_share = 0.80; /* 20%: info however slow */
	ns_trace_judge(&d, &v);
	CHECK(v.severity == NS_TRACE_INFO);
}

/* sys/block/X/stat as kernels print it: 11 fields (4.x), 15 (discards), 17 (flushes), padded */
static void test_diskstat_parse(void)
{
	uint64_t n = 0;

	/* 6.x: reads 100 (field 0), writes 20 (4), discards 3 (11), flushes 2 (15) */
	CHECK(ns_diskstat_parse("     100        0     800       12       20        0      160        4        0       "
				"16       16        3        0       24        1        2        3\n",
				&n) == 0 &&
	      n == 125);
	/* 4.18-5.4: no flushes */
	CHECK(ns_diskstat_parse("100 0 800 12 20 0 160 4 0 16 16 3 0 24 1", &n) == 0 && n == 123);
	/* before 4.18: reads and writes only (field 11 would be past the end) */
	CHECK(ns_diskstat_parse("   100    0  800   12   20    0  160    4    0   16   16", &n) == 0 && n == 120);
	/* an idle disk */
	CHECK(ns_diskstat_parse("0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0", &n) == 0 && n == 0);
	/* not the kernel's form: left as it was */
	n = 7;
	CHECK(ns_diskstat_parse("", &n) == -EINVAL && n == 7);
	CHECK(ns_diskstat_parse("100 0 800", &n) == -EINVAL);
	CHECK(ns_diskstat_parse("100 0 800 12 20 0 160 4 0 16 16 3", &n) == -EINVAL);
	CHECK(ns_diskstat_parse("100 0 800 12 20 0 160 4 0 16 x6", &n) == -EINVAL);
	CHECK(ns_diskstat_parse("-1 0 800 12 20 0 160 4 0 16 16", &n) == -EINVAL);
	CHECK(ns_diskstat_parse("100 0 800 12 20 0 160 4 0 16 16 3 0 24 1 2 3 4", &n) == -EINVAL);
	CHECK(ns_diskstat_parse("(null)", &n) == -EINVAL && n == 7);
}

/* a request-based disk's counter is read; a bio-based one (no mq/) is not compared */
static void test_diskstat_completed(void)
{
	struct ns_root *root = NULL;
	uint64_t n = 0;

	if (!fr_make("diskstat"))
		return;
	fr_mkdirs("sys/devices/virtual/block/loop1/mq/0");
	fr_put("sys/devices/virtual/block/loop1/stat", "  500 0 4000 10 7 0 56 1 0 9 11 0 0 0 0 3 0\n");
	fr_lnk("sys/dev/block/7:1", "../../devices/virtual/block/loop1");
	fr_put("sys/devices/virtual/block/dm-0/stat", "  900 0 7200 10 0 0 0 0 0 9 11 0 0 0 0 0 0\n");
	fr_lnk("sys/dev/block/253:0", "../../devices/virtual/block/dm-0");
	CHECK(ns_root_open(fr_base, &root) == 0);
	CHECK(ns_diskstat_completed(root, DEV(7, 1), &n) == 0 && n == 510);
	CHECK(ns_diskstat_completed(root, DEV(253, 0), &n) == -EOPNOTSUPP);
	CHECK(ns_diskstat_completed(root, DEV(8, 0), &n) == -EOPNOTSUPP);
	ns_root_free(root);
}

/* what the disks counted and the records do not hold, disk by disk: never less than nothing */
static void test_unseen(void)
{
	const uint32_t devs[] = {DEV(7, 1), DEV(8, 0), DEV(259, 0)};
	const uint64_t completed[] = {1000, 50, 400};
	const bool known[] = {true, true, false};
	const struct ns_trace_rec recs[] = {
		{.dev = DEV(7, 1), .requests = 600},  {.dev = DEV(7, 1), .requests = 398}, /* 2 unseen */
		{.dev = DEV(8, 0), .requests = 53},					   /* 3 more: nothing */
		{.dev = DEV(259, 0), .requests = 1},					   /* unknown count */
		{.dev = DEV(9, 9), .requests = 1000},					   /* another disk's */
	};

	CHECK(ns_trace_unseen(devs, completed, known, 3, recs, 5) == 2);
	CHECK(ns_trace_unseen(devs, completed, known, 3, recs, 0) == 1050);
	CHECK(ns_trace_unseen(devs, completed, (const bool[]){false, false, false}, 3, recs, 5) == 0);
	CHECK(ns_trace_unseen(devs + 1, completed + 1, known + 1, 1, recs, 5) == 0);
}

int main(void)
{
	test_diskstat_parse();
	test_unseen();
	test_diskstat_completed();
	test_bucket_matches_histogram();
	test_pairs_and_shares();
	test_irq_remote_only();
	test_head_and_nodeless();
	test_verdict_thresholds();
	return tap_done("traceagg");
}
