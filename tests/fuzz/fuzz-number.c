/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The number parser (lib/base/number.h) against a reference written here from its contract:
 * byte 0 picks the function and the field's range, the rest is the text. Every answer must be
 * the reference's (value, -EINVAL for text not in the file's format, -ERANGE for a well-formed
 * number outside the range), and *out must be left alone on error. The ranges are the
 * fields' real ones: node ids, numa_node's -1, distances 10-254, int, long long, uint64.
 */
#include "fuzz-common.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"

typedef __int128 i128;
typedef unsigned __int128 u128;

static const struct {
	long long min, max;
} ranges[] = {
	{0, NS_NODE_MAX - 1},
	{-1, NS_NODE_MAX - 1},
	{NS_DISTANCE_MIN, NS_DISTANCE_MAX},
	{0, INT_MAX},
	{INT_MIN, INT_MAX},
	{LLONG_MIN, LLONG_MAX},
	{0, LLONG_MAX},
	{-5, 5},
	{0, 0},
	{LLONG_MIN, LLONG_MIN + 1},
	{1, 1},
	{0, NS_CPU_MAX - 1},
};
static const uint64_t hex_max[] = {UINT64_MAX, 0xffffffff, 0xffff, 1, 0, 15, 16};

static bool isdig(char c)
{
	return c >= '0' && c <= '9';
}

static int hexval(char c)
{
	if (isdig(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Canonical decimal digits at s (no leading zero but "0" itself); *end past them; the value
 * saturated at 2^100. -1 when s is not such digits. */
static int ref_digits(const char *s, const char **end, u128 *v)
{
	const u128 cap = (u128)1 << 100;

	if (!isdig(*s) || (s[0] == '0' && isdig(s[1])))
		return -1;
	*v = 0;
	for (; isdig(*s); s++)
		*v = *v >= cap ? cap : *v * 10 + (u128)(*s - '0');
	*end = s;
	return 0;
}

static void check_dec(const char *t, long long min, long long max)
{
	const long long sentinel = 0x5a5a5a5a5a5a5a5all;
	long long out = sentinel;
	int want, got = ns_parse_dec(t, min, max, &out);
	const char *p = t, *end;
	bool neg = false;
	u128 mag;
	i128 v = 0;

	if (*p == '-')
		neg = true, p++;
	if ((neg && min >= 0) || ref_digits(p, &end, &mag) < 0 || *end || (neg && mag == 0))
		want = -EINVAL;
	else {
		v = neg ? -(i128)mag : (i128)mag;
		want = v < min || v > max ? -ERANGE : 0;
	}
	FUZZ_ASSERT(got == want, "ns_parse_dec('%s', %lld, %lld) = %d, want %d", t, min, max, got, want);
	if (want == 0)
		FUZZ_ASSERT(out == (long long)v, "ns_parse_dec('%s') gave %lld", t, out);
	else
		FUZZ_ASSERT(out == sentinel, "ns_parse_dec('%s') wrote *out on error", t);
}

static void check_u64(const char *t)
{
	uint64_t out = 0x5a5a, want_v = 0;
	int want, got = ns_parse_u64(t, &out);
	const char *end;
	u128 v;

	if (ref_digits(t, &end, &v) < 0 || *end)
		want = -EINVAL;
	else
		want = v > UINT64_MAX ? -ERANGE : 0, want_v = (uint64_t)v;
	FUZZ_ASSERT(got == want, "ns_parse_u64('%s') = %d, want %d", t, got, want);
	FUZZ_ASSERT(want ? out == 0x5a5a : out == want_v, "ns_parse_u64('%s'): *out %llu", t, (unsigned long long)out);
}

static void check_hex(const char *t, uint64_t max)
{
	uint64_t out = 0x5a5a;
	const char *p = t;
	u128 v = 0;
	int want = 0, got = ns_parse_hex(t, max, &out);

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (hexval(*p) < 0)
		want = -EINVAL;
	for (; !want && *p; p++) {
		if (hexval(*p) < 0)
			want = -EINVAL;
		else if (v <= UINT64_MAX)
			v = v * 16 + (u128)hexval(*p);
	}
	if (!want && v > max)
		want = -ERANGE;
	FUZZ_ASSERT(got == want, "ns_parse_hex('%s', %llx) = %d, want %d", t, (unsigned long long)max, got, want);
	FUZZ_ASSERT(want ? out == 0x5a5a : out == (uint64_t)v, "ns_parse_hex('%s'): *out %llx", t,
		    (unsigned long long)out);
}

static void check_prefix(const char *t, uint64_t max)
{
	const char *p = t, *end = t;
	uint64_t out = 0x5a5a;
	u128 v = 0;
	int want, got = ns_parse_dec_prefix(&p, max, &out);

	if (ref_digits(t, &end, &v) < 0)
		want = -EINVAL, end = t;
	else
		want = v > max ? -ERANGE : 0;
	FUZZ_ASSERT(got == want, "ns_parse_dec_prefix('%s', %llu) = %d, want %d", t, (unsigned long long)max, got,
		    want);
	if (want == 0)
		FUZZ_ASSERT(out == (uint64_t)v && p == end, "ns_parse_dec_prefix('%s'): %llu, moved %td", t,
			    (unsigned long long)out, p - t);
	else
		FUZZ_ASSERT(out == 0x5a5a, "ns_parse_dec_prefix('%s') wrote *out on error", t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *t;
	unsigned sel;

	if (size < 1)
		return 0;
	sel = data[0];
	t = fuzz_strndup(data + 1, size - 1);
	switch (sel % 4) {
	case 0:
		check_dec(t, ranges[(sel / 4) % (sizeof(ranges) / sizeof(ranges[0]))].min,
			  ranges[(sel / 4) % (sizeof(ranges) / sizeof(ranges[0]))].max);
		break;
	case 1:
		check_u64(t);
		break;
	case 2:
		check_hex(t, hex_max[(sel / 4) % (sizeof(hex_max) / sizeof(hex_max[0]))]);
		break;
	default:
		check_prefix(t, hex_max[(sel / 4) % (sizeof(hex_max) / sizeof(hex_max[0]))]);
		break;
	}
	/* every range, for the same text: one input checks the decimal parser against all fields */
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		check_dec(t, ranges[i].min, ranges[i].max);
	free(t);
	return 0;
}
