/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WBITS (sizeof(unsigned long) * CHAR_BIT)
/* A bound against garbage such as "0-4000000000": far above any real machine. */
#define NS_CPU_MAX (1u << 20)

void ns_cpuset_clear(struct ns_cpuset *s)
{
	free(s->words);
	s->words = NULL;
	s->nwords = 0;
	s->known = false;
}

static int grow(struct ns_cpuset *s, size_t nwords)
{
	unsigned long *w;

	if (nwords <= s->nwords)
		return 0;
	w = realloc(s->words, nwords * sizeof(*w));
	if (!w)
		return -ENOMEM;
	memset(w + s->nwords, 0, (nwords - s->nwords) * sizeof(*w));
	s->words = w;
	s->nwords = nwords;
	return 0;
}

int ns_cpuset_set(struct ns_cpuset *s, unsigned cpu)
{
	int r;

	if (cpu >= NS_CPU_MAX)
		return -ERANGE;
	r = grow(s, cpu / WBITS + 1);
	if (r < 0)
		return r;
	s->words[cpu / WBITS] |= 1UL << (cpu % WBITS);
	return 0;
}

bool ns_cpuset_test(const struct ns_cpuset *s, unsigned cpu)
{
	if (cpu / WBITS >= s->nwords)
		return false;
	return s->words[cpu / WBITS] & (1UL << (cpu % WBITS));
}

unsigned ns_cpuset_count(const struct ns_cpuset *s)
{
	unsigned n = 0;
	for (size_t i = 0; i < s->nwords; i++)
		n += (unsigned)__builtin_popcountl(s->words[i]);
	return n;
}

int ns_cpuset_next(const struct ns_cpuset *s, int cpu)
{
	size_t c = (size_t)(cpu + 1);
	for (size_t i = c / WBITS; i < s->nwords; i++) {
		unsigned long w = s->words[i];
		if (i == c / WBITS)
			w &= ~0UL << (c % WBITS);
		if (w)
			return (int)(i * WBITS + (size_t)__builtin_ctzl(w));
	}
	return -1;
}

int ns_cpuset_first(const struct ns_cpuset *s)
{
	return ns_cpuset_next(s, -1);
}

static unsigned long word(const struct ns_cpuset *s, size_t i)
{
	return i < s->nwords ? s->words[i] : 0;
}

bool ns_cpuset_equal(const struct ns_cpuset *a, const struct ns_cpuset *b)
{
	size_t n = a->nwords > b->nwords ? a->nwords : b->nwords;
	for (size_t i = 0; i < n; i++)
		if (word(a, i) != word(b, i))
			return false;
	return true;
}

bool ns_cpuset_subset(const struct ns_cpuset *a, const struct ns_cpuset *of)
{
	for (size_t i = 0; i < a->nwords; i++)
		if (a->words[i] & ~word(of, i))
			return false;
	return true;
}

bool ns_cpuset_intersects(const struct ns_cpuset *a, const struct ns_cpuset *b)
{
	for (size_t i = 0; i < a->nwords; i++)
		if (a->words[i] & word(b, i))
			return true;
	return false;
}

int ns_cpuset_or(struct ns_cpuset *dst, const struct ns_cpuset *src)
{
	int r = grow(dst, src->nwords);
	if (r < 0)
		return r;
	for (size_t i = 0; i < src->nwords; i++)
		dst->words[i] |= src->words[i];
	return 0;
}

int ns_cpuset_copy(struct ns_cpuset *dst, const struct ns_cpuset *src)
{
	ns_cpuset_clear(dst);
	dst->known = src->known;
	return ns_cpuset_or(dst, src);
}

static int parse_uint(const char **p, unsigned *out)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	v = strtoul(*p, &end, 10);
	if (errno || v >= NS_CPU_MAX)
		return -ERANGE;
	*p = end;
	*out = (unsigned)v;
	return 0;
}

int ns_cpuset_parse_list(struct ns_cpuset *s, const char *text)
{
	const char *p = text;
	int r;

	ns_cpuset_clear(s);
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	while (*p) {
		unsigned a, b;

		r = parse_uint(&p, &a);
		if (r < 0)
			goto bad;
		b = a;
		if (*p == '-') {
			p++;
			r = parse_uint(&p, &b);
			if (r < 0)
				goto bad;
			if (b < a) {
				r = -EINVAL;
				goto bad;
			}
		}
		for (unsigned c = a; c <= b; c++) {
			r = ns_cpuset_set(s, c);
			if (r < 0)
				goto bad;
		}
		while (*p == ' ' || *p == '\n' || *p == '\t')
			p++;
		if (*p == ',') {
			p++;
			while (*p == ' ')
				p++;
			if (!*p) {
				r = -EINVAL;
				goto bad;
			}
		} else if (*p) {
			r = -EINVAL;
			goto bad;
		}
	}
	s->known = true;
	return 0;
bad:
	ns_cpuset_clear(s);
	return r;
}

int ns_cpuset_parse_mask(struct ns_cpuset *s, const char *text)
{
	size_t len = strlen(text);
	unsigned bit = 0;
	int r;

	ns_cpuset_clear(s);
	if (len == 0)
		return -EINVAL;
	/* least significant digit last; commas separate 32-bit groups */
	for (size_t i = len; i-- > 0;) {
		char c = text[i];
		int v;
		if (c == ',')
			continue;
		if (!isxdigit((unsigned char)c)) {
			ns_cpuset_clear(s);
			return -EINVAL;
		}
		v = isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10);
		for (int k = 0; k < 4; k++, bit++)
			if (v & (1 << k)) {
				r = ns_cpuset_set(s, bit);
				if (r < 0) {
					ns_cpuset_clear(s);
					return r;
				}
			}
	}
	s->known = true;
	return 0;
}

int ns_cpuset_format(const struct ns_cpuset *s, char **out)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	bool first = true;
	int cpu;

	if (!f)
		return -ENOMEM;
	cpu = ns_cpuset_first(s);
	while (cpu >= 0) {
		int end = cpu, next;
		while ((next = ns_cpuset_next(s, end)) == end + 1)
			end = next;
		if (end == cpu)
			fprintf(f, "%s%d", first ? "" : ",", cpu);
		else
			fprintf(f, "%s%d-%d", first ? "" : ",", cpu, end);
		first = false;
		cpu = next;
	}
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

struct json_object *ns_cpuset_json(const struct ns_cpuset *s)
{
	struct json_object *o;
	char *t;

	if (!s->known || ns_cpuset_format(s, &t) < 0)
		return NULL;
	o = json_object_new_string(t);
	free(t);
	return o;
}
