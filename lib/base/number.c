/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/number.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int ns_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Digits at *p in canonical form (no leading zero unless the number is 0), accumulated
 * into *out; -ERANGE once the value passes max (all digits are still consumed). */
static int digits(const char **p, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	bool over = false;
	size_t n = 0;

	if (!is_digit(*s))
		return -EINVAL;
	if (s[0] == '0' && is_digit(s[1]))
		return -EINVAL;
	/* up to 19 digits cannot pass UINT64_MAX: nearly every number the kernel writes is
	 * accumulated without a check per digit, and held to max once */
	while (n < 19 && is_digit(s[n]))
		v = v * 10 + (unsigned)(s[n++] - '0');
	if (!is_digit(s[n])) {
		*p = s + n;
		if (v > max)
			return -ERANGE;
		*out = v;
		return 0;
	}
	for (v = 0; is_digit(*s); s++) {
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

int ns_parse_dec_prefix(const char **p, uint64_t max, uint64_t *out)
{
	return digits(p, max, out);
}

int ns_parse_u64(const char *text, uint64_t *out)
{
	const char *p = text;
	uint64_t v;
	int r;

	if (!text)
		return -EINVAL;
	r = digits(&p, UINT64_MAX, &v);
	if (r == -EINVAL || *p != '\0')
		return -EINVAL;
	if (r < 0)
		return r;
	*out = v;
	return 0;
}

int ns_parse_dec(const char *text, long long min, long long max, long long *out)
{
	const char *p = text;
	bool neg = false;
	uint64_t mag, limit;
	long long v;
	int r;

	if (!text || min > max)
		return -EINVAL;
	if (*p == '-') {
		if (min >= 0)
			return -EINVAL;
		neg = true;
		p++;
	}
	/* the magnitude may reach |LLONG_MIN|; anything beyond it is out of every range */
	limit = (uint64_t)INT64_MAX + (neg ? 1 : 0);
	r = digits(&p, limit, &mag);
	if (r == -EINVAL || *p != '\0')
		return -EINVAL;
	if (neg && r == 0 && mag == 0)
		return -EINVAL; /* "-0" */
	if (r < 0)
		return r;
	if (neg)
		v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(long long)mag;
	else
		v = (long long)mag;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int ns_parse_hex(const char *text, uint64_t max, uint64_t *out)
{
	const char *p = text;
	uint64_t v = 0;
	bool over = false;

	if (!text)
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (ns_hex_digit(*p) < 0)
		return -EINVAL;
	for (; *p; p++) {
		int d = ns_hex_digit(*p);
		if (d < 0)
			return -EINVAL;
		if (over || (uint64_t)d > max || v > (max - (uint64_t)d) / 16)
			over = true;
		else
			v = v * 16 + (uint64_t)d;
	}
	if (over)
		return -ERANGE;
	*out = v;
	return 0;
}
