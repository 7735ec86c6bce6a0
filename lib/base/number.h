/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One strict parser for every integer the kernel prints. sysfs and procfs print their
 * numbers in one canonical form ("%d", "%u", "%llu", or "%x" for hex files); anything else
 * in such a file (a sign where none can be, "0x1" in a decimal file, leading zeros,
 * spaces, digits past the field's range) is not a number the kernel wrote, so it is
 * refused instead of being read as a plausible one.
 *
 * All functions return 0, -EINVAL for text that is not a number in the file's format, or
 * -ERANGE for a well-formed number outside the field's range. *out is left alone on error.
 */
#ifndef NUMASTOR_NUMBER_H
#define NUMASTOR_NUMBER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Node ids are below MAX_NUMNODES (1 << CONFIG_NODES_SHIFT: 1024 with x86's MAXSMP). */
#define NS_NODE_MAX 1024
/* CPU ids when cpu/kernel_max is unknown: a bound against garbage far above any machine. */
#define NS_CPU_MAX (1u << 20)
/* blk-mq queue depth (BLK_MQ_MAX_DEPTH): nr_tags, and nr_requests (at most the tag set's depth,
 * or MAX_SCHED_RQ = 2048 with a scheduler), are never above it */
#define NS_BLK_MQ_MAX_DEPTH 10240
/* NUMA distances the kernel keeps (a u8; 10 is local, 255 means unreachable). */
#define NS_DISTANCE_MIN 10
#define NS_DISTANCE_MAX 254
/* PID_MAX_LIMIT on 64-bit: process ids are at most 2^22. */
#define NS_PID_MAX (4 * 1024 * 1024)

/* Decimal only: optional '-' only when min < 0, then digits; no '+', no spaces, no "0x", no
 * leading zeros beyond a single "0" (and no "-0"). -EINVAL garbled, -ERANGE outside
 * [min, max]. */
int ns_parse_dec(const char *text, long long min, long long max, long long *out);
/* Full uint64 decimal (counters), same form rules. */
int ns_parse_u64(const char *text, uint64_t *out);
/* Hex for files whose format is hex: optional "0x"/"0X", then at least one hex digit
 * (leading zeros allowed, as in "%08x"). -ERANGE above max. */
int ns_parse_hex(const char *text, uint64_t max, uint64_t *out);
/* The decimal number at the start of *p with the same rules, for numbers inside a line or
 * a name ("node12", "Node 0 MemTotal: 123 kB"): digits only (no sign), *p is moved past
 * them. -EINVAL when *p does not start with a digit or has a leading zero. */
int ns_parse_dec_prefix(const char **p, uint64_t max, uint64_t *out);
/*
 * The digits every decimal above is read by, inline for the loops that read thousands of
 * numbers (per_cpu_count): digits at *p in canonical form (no leading zero unless the number
 * is 0), *p moved past all of them; -EINVAL when none or a leading zero, -ERANGE above max.
 */
static inline bool ns_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline int ns_dec_digits(const char **p, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	bool over = false;
	size_t n = 0;

	if (!ns_is_digit(*s))
		return -EINVAL;
	if (s[0] == '0' && ns_is_digit(s[1]))
		return -EINVAL;
	/* up to 19 digits cannot pass UINT64_MAX: nearly every number the kernel writes is
	 * accumulated without a check per digit, and held to max once */
	while (n < 19 && ns_is_digit(s[n]))
		v = v * 10 + (unsigned)(s[n++] - '0');
	if (!ns_is_digit(s[n])) {
		*p = s + n;
		if (v > max)
			return -ERANGE;
		*out = v;
		return 0;
	}
	for (v = 0; ns_is_digit(*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (over || d > max || v > (max - d) / 10)
			over = true;
		else
			v = v * 10 + d;
	}
	*p = s;
	if (over)
		return -ERANGE;
	*out = v;
	return 0;
}
/* The value of one hex digit (either case), or -1. */
int ns_hex_digit(char c);

#endif
