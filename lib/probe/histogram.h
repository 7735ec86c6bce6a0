/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A latency histogram with log-linear buckets (as HdrHistogram and fio's clat histograms keep
 * them): every value below 2^NS_HIST_SUB_BITS has a bucket of its own, and each power of two
 * above is split into 2^NS_HIST_SUB_BITS equal buckets, so a percentile is known to within
 * 1/2^NS_HIST_SUB_BITS (about 3%) of its value, whatever the range, in fixed memory: no sample
 * is kept. Values are unsigned 64-bit (numastor probe records nanoseconds).
 */
#ifndef NUMASTOR_HISTOGRAM_H
#define NUMASTOR_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define NS_HIST_SUB_BITS 5
#define NS_HIST_SUB (1u << NS_HIST_SUB_BITS)
/* group 0 holds 0 .. SUB-1 exactly; group g >= 1 holds [SUB << (g-1), SUB << g) */
#define NS_HIST_GROUPS (64 - NS_HIST_SUB_BITS + 1)
#define NS_HIST_BUCKETS (NS_HIST_GROUPS * NS_HIST_SUB)

struct ns_hist {
	uint64_t count;
	uint64_t min, max; /* exact; min is UINT64_MAX while count is 0 */
	long double sum;   /* for the mean */
	uint64_t buckets[NS_HIST_BUCKETS];
};

void ns_hist_init(struct ns_hist *h);
/* The bucket of value v. */
size_t ns_hist_bucket(uint64_t v);
/* The smallest and the largest value bucket i holds. */
uint64_t ns_hist_bucket_low(size_t i);
uint64_t ns_hist_bucket_high(size_t i);
void ns_hist_add(struct ns_hist *h, uint64_t v);
/* n values known only by their bucket i (numastor trace's kernel side keeps buckets, not
 * values): counted at the bucket's midpoint for the sum, its bounds for min and max */
void ns_hist_add_bucket(struct ns_hist *h, size_t i, uint64_t n);
/* into += from */
void ns_hist_merge(struct ns_hist *into, const struct ns_hist *from);
/*
 * The p-th percentile (0 < p <= 100): the largest value of the bucket that holds the sample of
 * rank ceil(p/100 * count) in ascending order (so never below the true value, and above it by
 * less than one bucket's width), clamped to the exact max. 0 when the histogram is empty.
 */
uint64_t ns_hist_percentile(const struct ns_hist *h, double p);
/* The mean, 0 when empty. */
double ns_hist_mean(const struct ns_hist *h);

#endif
