/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/read/rates.c: per_cpu_count parsing, per-CPU differences (wraps and counters that went
 * backwards), folding onto nodes, and which counts the fire-location rule judges. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/irq.h"
#include "read/rates.h"
#include "tap.h"

/*
 * ns_counts_sum (check's one pass over per_cpu_count) against ns_counts_parse and
 * ns_counts_fold on the same text: the same verdict, count, total, per-node sums and isolated
 * sum. The texts put zeros and values at every offset of its four-zeros step.
 */
static void sum_matches(const struct ns_machine *m, const char *txt)
{
	struct ns_counts c = {0};
	struct ns_counts_sum sum;
	unsigned long long per_node[3] = {0}, *ref = NULL, total = 0, iso = 0;
	size_t nref = 0;
	int want = ns_counts_parse(txt, &c), got = ns_counts_sum(txt, m, per_node, 3, &sum);
	bool same = (want == 0) == (got == 0);

	if (same && want == 0) {
		CHECK(ns_counts_fold(m, &c, &ref, &nref, &total) == 0 && nref == 3);
		for (size_t i = 0; i < c.n; i++)
			if (ns_cpuset_test(&m->isolation.cpus, (unsigned)i))
				iso += c.v[i];
		same = sum.n == c.n && sum.total == total && sum.on_isolated == iso &&
		       memcmp(per_node, ref, sizeof(per_node)) == 0;
		free(ref);
	}
	if (!same)
		printf("# ns_counts_sum differs on \"%s\": parse %d, sum %d\n", txt, want, got);
	CHECK(same);
	ns_counts_free(&c);
}

static void sums(void)
{
	struct ns_node nodes[2] = {{.id = 0}, {.id = 2}};
	int cpu_node[12] = {0, 0, -1, 2, 2, 0, 2, 0, 0, 2, -1, 2};
	struct ns_machine m = {.nodes = nodes, .nnodes = 2, .cpu_node = cpu_node, .ncpu_node = 12};
	static const char *bad[] = {"",
				    "\n",
				    "0,0,0,0,",
				    "0,0,0,0,\n",
				    "0,0,0,0,01",
				    "0,0,0,0,0\n\n",
				    "00,0",
				    "0,0,0,0,4294967296",
				    "0,0,0,0,0,0,0,0,x",
				    "0,0,0,0,-1",
				    "0,0,0,0,0 "};
	unsigned seed = 12345;
	char txt[256];

	ns_cpuset_set(&m.isolation.cpus, 5);
	ns_cpuset_set(&m.isolation.cpus, 9);
	m.isolation.cpus.known = true;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		sum_matches(&m, bad[i]);
	/* 1 to 14 values (past the map's 12 CPUs too), mostly zeros, with and without the newline */
	for (int round = 0; round < 4000; round++) {
		size_t len = 0, n;

		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 16) % 14;
		for (size_t i = 0; i < n; i++) {
			unsigned v;
			seed = seed * 1103515245u + 12345u;
			v = (seed >> 16) % 5 ? 0 : (seed >> 8) % 3 == 0 ? 4294967295u : (seed >> 20) % 100;
			len += (size_t)snprintf(txt + len, sizeof(txt) - len, "%s%u", i ? "," : "", v);
		}
		if (round % 2)
			snprintf(txt + len, sizeof(txt) - len, "\n");
		sum_matches(&m, txt);
	}
	ns_cpuset_clear(&m.isolation.cpus);
}

int main(void)
{
	struct ns_counts a = {0}, b = {0}, d = {0};
	/* nodes 0 and 2 (ids need not be dense); CPU 2 on no node; CPU 3 on node 2 */
	struct ns_node nodes[2] = {{.id = 0}, {.id = 2}};
	int cpu_node[4] = {0, 0, -1, 2};
	struct ns_machine m = {.nodes = nodes, .nnodes = 2, .cpu_node = cpu_node, .ncpu_node = 4};
	unsigned long long *pn = NULL, total = 0;
	size_t npn = 0;

	/* the file's format, with or without its newline */
	CHECK(ns_counts_parse("1,2,3,4\n", &a) == 0);
	CHECK(a.n == 4 && a.v[0] == 1 && a.v[3] == 4);
	ns_counts_free(&a);
	CHECK(ns_counts_parse("4294967295", &a) == 0 && a.n == 1 && a.v[0] == 4294967295ULL);
	ns_counts_free(&a);
	/* 32-bit counters: anything larger is not a count; nor is an empty field or a sign */
	CHECK(ns_counts_parse("4294967296", &a) == -EINVAL && a.n == 0 && !a.v);
	CHECK(ns_counts_parse("", &a) == -EINVAL);
	CHECK(ns_counts_parse("1,,2", &a) == -EINVAL);
	CHECK(ns_counts_parse("1,2,", &a) == -EINVAL);
	CHECK(ns_counts_parse("-1,2", &a) == -EINVAL);
	CHECK(ns_counts_parse("1 2", &a) == -EINVAL);
	CHECK(ns_counts_parse("1\n2", &a) == -EINVAL);

	/* differences: per CPU; a lower value is a wrap only when wrapping is allowed */
	CHECK(ns_counts_parse("10,20,30,4294967290", &a) == 0);
	CHECK(ns_counts_parse("15,20,31,4", &b) == 0);
	CHECK(ns_counts_delta(&a, &b, false, &d) == -ERANGE && !d.v);
	CHECK(ns_counts_delta(&a, &b, true, &d) == 0);
	CHECK(d.n == 4 && d.v[0] == 5 && d.v[1] == 0 && d.v[2] == 1 && d.v[3] == 10);

	/* folding: by each CPU's node, the total over every CPU */
	CHECK(ns_counts_fold(&m, &d, &pn, &npn, &total) == 0);
	CHECK(npn == 3 && pn[0] == 5 && pn[1] == 0 && pn[2] == 10 && total == 16);
	free(pn);
	ns_counts_free(&d);
	ns_counts_free(&b);
	/* another number of CPUs: no difference */
	CHECK(ns_counts_parse("15,20,31", &b) == 0);
	CHECK(ns_counts_delta(&a, &b, true, &d) == -EINVAL && !d.v);
	ns_counts_free(&b);
	ns_counts_free(&a);

	/* the journal's form: runs of three or more of one value as value*times, both forms read */
	{
		char *txt = NULL;
		CHECK(ns_counts_parse("0,0,0,0,7,0,0,3,3,3,3,0", &a) == 0);
		CHECK(ns_counts_format(&a, &txt) == 0);
		CHECK_STR(txt, "0*4,7,0,0,3*4,0");
		CHECK(ns_counts_parse_runs(txt, &b) == 0 && b.n == a.n && memcmp(a.v, b.v, a.n * sizeof(*a.v)) == 0);
		free(txt);
		ns_counts_free(&a);
		ns_counts_free(&b);
		CHECK(ns_counts_parse_runs("12,0,3", &a) == 0 && a.n == 3 && a.v[0] == 12 && a.v[2] == 3);
		ns_counts_free(&a);
		CHECK(ns_counts_parse_runs("4294967295*8192", &a) == 0 && a.n == 8192 && a.v[8191] == 4294967295ULL);
		ns_counts_free(&a);
		/* more CPUs than a kernel has, a run of none, garbage: refused, nothing left */
		CHECK(ns_counts_parse_runs("0*8192,1", &a) == -EINVAL && !a.v && !a.n);
		CHECK(ns_counts_parse_runs("0*4000000000", &a) == -EINVAL && !a.v);
		CHECK(ns_counts_parse_runs("5,0*0", &a) == -EINVAL && !a.v);
		CHECK(ns_counts_parse_runs("0**2", &a) == -EINVAL);
		CHECK(ns_counts_parse_runs("0*2,", &a) == -EINVAL);
		CHECK(ns_counts_parse_runs("*2", &a) == -EINVAL);
		CHECK(ns_counts_parse_runs("", &a) == -EINVAL);
		CHECK(ns_counts_parse("0*2", &a) == -EINVAL); /* the kernel's file never has runs */
	}

	/* the judged counts: interval, else since fix, else since boot */
	{
		unsigned long long boot[3] = {9, 0, 1}, fix[3] = {0, 0, 1}, iv[3] = {2, 0, 0}, t;
		struct ns_irq irq = {.per_node = boot, .nper_node = 3, .total = 10};
		CHECK(ns_irq_count_basis(&irq) == NS_COUNTS_SINCE_BOOT);
		CHECK(ns_irq_judged_counts(&irq, &t) == boot && t == 10);
		irq.since_fix = fix;
		irq.since_fix_total = 1;
		CHECK(ns_irq_count_basis(&irq) == NS_COUNTS_SINCE_FIX);
		CHECK(ns_irq_judged_counts(&irq, &t) == fix && t == 1);
		irq.interval = 2.0;
		CHECK(ns_irq_count_basis(&irq) == NS_COUNTS_NONE); /* asked for rates, had none */
		CHECK(ns_irq_judged_counts(&irq, &t) == NULL && t == 0);
		irq.in_interval = iv;
		irq.interval_total = 2;
		CHECK(ns_irq_count_basis(&irq) == NS_COUNTS_OVER_INTERVAL);
		CHECK(ns_irq_judged_counts(&irq, &t) == iv && t == 2);
		CHECK_STR(ns_count_basis_name(ns_irq_count_basis(&irq)), "interval");
	}
	sums();
	return tap_done("rates");
}
