/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/number.h"

#include <errno.h>
#include <stdbool.h>

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

static int digits(const char **p, uint64_t max, uint64_t *out)
{
	return ns_dec_digits(p, max, out);
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
