/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "probe/histogram.h"

#include <string.h>

void ns_hist_init(struct ns_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

size_t ns_hist_bucket(uint64_t v)
{
	unsigned e;

	if (v < NS_HIST_SUB)
		return (size_t)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* v in [2^e, 2^(e+1)), e >= SUB_BITS */
	/* group e - SUB_BITS + 1; within it, the SUB_BITS bits below the leading one */
	return ((size_t)(e - NS_HIST_SUB_BITS + 1) << NS_HIST_SUB_BITS) |
	       (size_t)((v >> (e - NS_HIST_SUB_BITS)) & (NS_HIST_SUB - 1));
}

uint64_t ns_hist_bucket_low(size_t i)
{
	size_t g = i >> NS_HIST_SUB_BITS, m = i & (NS_HIST_SUB - 1);

	if (g == 0)
		return (uint64_t)m;
	return ((uint64_t)NS_HIST_SUB + m) << (g - 1);
}

uint64_t ns_hist_bucket_high(size_t i)
{
	size_t g = i >> NS_HIST_SUB_BITS;

	if (g == 0)
		return ns_hist_bucket_low(i);
	return ns_hist_bucket_low(i) + ((uint64_t)1 << (g - 1)) - 1;
}

void ns_hist_add(struct ns_hist *h, uint64_t v)
{
	h->buckets[ns_hist_bucket(v)]++;
	h->count++;
	h->sum += (long double)v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void ns_hist_add_bucket(struct ns_hist *h, size_t i, uint64_t n)
{
	uint64_t lo, hi;

	if (!n || i >= NS_HIST_BUCKETS)
		return;
	lo = ns_hist_bucket_low(i);
	hi = ns_hist_bucket_high(i);
	h->buckets[i] += n;
	h->count += n;
	h->sum += (long double)n * ((long double)lo + (long double)(hi - lo) / 2);
	if (lo < h->min)
		h->min = lo;
	if (hi > h->max)
		h->max = hi;
}

void ns_hist_merge(struct ns_hist *into, const struct ns_hist *from)
{
	for (size_t i = 0; i < NS_HIST_BUCKETS; i++)
		into->buckets[i] += from->buckets[i];
	into->count += from->count;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t ns_hist_percentile(const struct ns_hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	if (p <= 0)
		return h->min;
	{
		/* ceil(p/100 * count), without libm */
		long double x = (long double)p / 100.0L * (long double)h->count;
		rank = (uint64_t)x;
		if ((long double)rank < x)
			rank++;
	}
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (size_t i = 0; i < NS_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			uint64_t high = ns_hist_bucket_high(i);
			return high > h->max ? h->max : high < h->min ? h->min : high;
		}
	}
	return h->max;
}

double ns_hist_mean(const struct ns_hist *h)
{
	return h->count ? (double)(h->sum / (long double)h->count) : 0.0;
}
