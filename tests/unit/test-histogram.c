/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The latency histogram of numastor probe: bucket bounds, and percentiles against the exact
 * order statistics of known samples (never below the true value, above it by less than one
 * bucket: 1/32 of the value). */
#include <stdint.h>
#include <stdlib.h>

#include "probe/histogram.h"
#include "tap.h"

static struct ns_hist h;

/* Exact p-th percentile of sorted[0..n): the sample of rank ceil(p/100 * n). */
static uint64_t exact(const uint64_t *sorted, size_t n, double p)
{
	size_t rank = (size_t)((p / 100.0) * (double)n);
	if ((double)rank < p / 100.0 * (double)n)
		rank++;
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void test_buckets(void)
{
	/* exact below 32, then 32 buckets per power of two */
	for (uint64_t v = 0; v < 32; v++)
		CHECK(ns_hist_bucket(v) == v && ns_hist_bucket_low(v) == v && ns_hist_bucket_high(v) == v);
	CHECK(ns_hist_bucket(32) == 32 && ns_hist_bucket_low(32) == 32 && ns_hist_bucket_high(32) == 32);
	CHECK(ns_hist_bucket(63) == 63);
	CHECK(ns_hist_bucket(64) == 64 && ns_hist_bucket(65) == 64 && ns_hist_bucket(66) == 65);
	CHECK(ns_hist_bucket_low(64) == 64 && ns_hist_bucket_high(64) == 65);
	CHECK(ns_hist_bucket(UINT64_MAX) == NS_HIST_BUCKETS - 1);
	CHECK(ns_hist_bucket_high(NS_HIST_BUCKETS - 1) == UINT64_MAX);
	/* every value lies in its bucket, buckets are contiguous and no wider than 1/32 of their low end */
	for (uint64_t v = 1; v < (UINT64_MAX >> 1); v = v * 3 + 7) {
		size_t b = ns_hist_bucket(v);
		CHECK(ns_hist_bucket_low(b) <= v && v <= ns_hist_bucket_high(b));
		CHECK(ns_hist_bucket_high(b) - ns_hist_bucket_low(b) <= ns_hist_bucket_low(b) / 32);
	}
	for (size_t i = 1; i < NS_HIST_BUCKETS; i++)
		CHECK(ns_hist_bucket_low(i) == ns_hist_bucket_high(i - 1) + 1);
}

static void test_small(void)
{
	ns_hist_init(&h);
	CHECK(ns_hist_percentile(&h, 50) == 0 && ns_hist_mean(&h) == 0);
	/* 1..10: exact buckets, so exact percentiles */
	for (uint64_t v = 1; v <= 10; v++)
		ns_hist_add(&h, v);
	CHECK(h.count == 10 && h.min == 1 && h.max == 10);
	CHECK(ns_hist_percentile(&h, 50) == 5);
	CHECK(ns_hist_percentile(&h, 51) == 6);
	CHECK(ns_hist_percentile(&h, 99) == 10);
	CHECK(ns_hist_percentile(&h, 100) == 10);
	CHECK(ns_hist_percentile(&h, 10) == 1);
	CHECK(ns_hist_percentile(&h, 10.5) == 2);
	CHECK(ns_hist_mean(&h) == 5.5);
	/* a single sample is every percentile, exactly (clamped to the max) */
	ns_hist_init(&h);
	ns_hist_add(&h, 123456789);
	CHECK(ns_hist_percentile(&h, 50) == 123456789 && ns_hist_percentile(&h, 99.9) == 123456789);
}

static void test_against_exact(void)
{
	enum { N = 100000 };
	uint64_t *v = malloc(N * sizeof(*v));
	uint64_t s = 0x9E3779B97F4A7C15ull;
	static const double ps[] = {1, 25, 50, 90, 99, 99.9, 99.99, 100};
	struct ns_hist a, b;

	if (!v) {
		CHECK(!"out of memory");
		return;
	}
	ns_hist_init(&h);
	ns_hist_init(&a);
	ns_hist_init(&b);
	/* a latency-like spread: mostly 50-150 us, a tail to tens of ms */
	for (size_t i = 0; i < N; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		v[i] = 50000 + s % 100000 + (i % 1000 == 0 ? s % 40000000 : 0);
		ns_hist_add(&h, v[i]);
		ns_hist_add(i % 2 ? &a : &b, v[i]);
	}
	ns_hist_merge(&a, &b);
	qsort(v, N, sizeof(*v), cmp_u64);
	CHECK(h.min == v[0] && h.max == v[N - 1] && a.count == N && a.min == h.min && a.max == h.max);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		uint64_t want = exact(v, N, ps[i]), got = ns_hist_percentile(&h, ps[i]);
		CHECK(got >= want);
		CHECK(got - want <= want / 32);
		/* merged halves: the same histogram */
		CHECK(ns_hist_percentile(&a, ps[i]) == got);
	}
	free(v);
}

int main(void)
{
	test_buckets();
	test_small();
	test_against_exact();
	return tap_done("histogram");
}
