/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "base/cpuset.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "base/number.h"

#define WBITS (sizeof(unsigned long) * CHAR_BIT)

/* The words of s, wherever they are held */
static unsigned long *W(struct ns_cpuset *s)
{
	return s->nwords > 1 ? s->u.words : &s->u.word;
}

static const unsigned long *CW(const struct ns_cpuset *s)
{
	return s->nwords > 1 ? s->u.words : &s->u.word;
}

void ns_cpuset_clear(struct ns_cpuset *s)
{
	if (s->nwords > 1)
		free(s->u.words);
	s->u.words = NULL;
	s->nwords = 0;
	s->known = false;
}

static int grow(struct ns_cpuset *s, size_t nwords)
{
	unsigned long *w;

	if (nwords <= s->nwords)
		return 0;
	if (nwords > UINT_MAX)
		return -ERANGE;
	if (nwords == 1) {
		s->u.word = 0;
		s->nwords = 1;
		return 0;
	}
	if (s->nwords <= 1) {
		w = malloc(nwords * sizeof(*w));
		if (w && s->nwords)
			w[0] = s->u.word;
	} else {
		w = realloc(s->u.words, nwords * sizeof(*w));
	}
	if (!w)
		return -ENOMEM;
	memset(w + s->nwords, 0, (nwords - s->nwords) * sizeof(*w));
	s->u.words = w;
	s->nwords = (unsigned)nwords;
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
	W(s)[cpu / WBITS] |= 1UL << (cpu % WBITS);
	return 0;
}

bool ns_cpuset_test(const struct ns_cpuset *s, unsigned cpu)
{
	if (cpu / WBITS >= s->nwords)
		return false;
	return CW(s)[cpu / WBITS] & (1UL << (cpu % WBITS));
}

unsigned ns_cpuset_count(const struct ns_cpuset *s)
{
	unsigned n = 0;
	for (size_t i = 0; i < s->nwords; i++)
		n += (unsigned)__builtin_popcountl(CW(s)[i]);
	return n;
}

int ns_cpuset_next(const struct ns_cpuset *s, int cpu)
{
	size_t c = (size_t)(cpu + 1);
	for (size_t i = c / WBITS; i < s->nwords; i++) {
		unsigned long w = CW(s)[i];
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
	return i < s->nwords ? CW(s)[i] : 0;
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
		if (CW(a)[i] & ~word(of, i))
			return false;
	return true;
}

bool ns_cpuset_intersects(const struct ns_cpuset *a, const struct ns_cpuset *b)
{
	for (size_t i = 0; i < a->nwords; i++)
		if (CW(a)[i] & word(b, i))
			return true;
	return false;
}

int ns_cpuset_or(struct ns_cpuset *dst, const struct ns_cpuset *src)
{
	int r = grow(dst, src->nwords);
	if (r < 0)
		return r;
	for (size_t i = 0; i < src->nwords; i++)
		W(dst)[i] |= CW(src)[i];
	return 0;
}

int ns_cpuset_copy(struct ns_cpuset *dst, const struct ns_cpuset *src)
{
	ns_cpuset_clear(dst);
	dst->known = src->known;
	return ns_cpuset_or(dst, src);
}

static int combine(struct ns_cpuset *dst, const struct ns_cpuset *a, const struct ns_cpuset *b, bool invert)
{
	unsigned n = a->nwords;
	unsigned long one, *w = n > 1 ? malloc(n * sizeof(*w)) : &one;
	const unsigned long *aw = CW(a);

	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		w[i] = aw[i] & (invert ? ~word(b, i) : word(b, i));
	bool known = a->known && b->known;
	ns_cpuset_clear(dst);
	if (n > 1)
		dst->u.words = w;
	else if (n == 1)
		dst->u.word = one;
	dst->nwords = n;
	dst->known = known;
	return 0;
}

int ns_cpuset_and(struct ns_cpuset *dst, const struct ns_cpuset *a, const struct ns_cpuset *b)
{
	return combine(dst, a, b, false);
}

int ns_cpuset_andnot(struct ns_cpuset *dst, const struct ns_cpuset *a, const struct ns_cpuset *b)
{
	return combine(dst, a, b, true);
}

/* Set CPUs a..b, whole words at a time; the storage is already grown to hold b. */
static void set_range(struct ns_cpuset *s, unsigned a, unsigned b)
{
	size_t wa = a / WBITS, wb = b / WBITS;
	unsigned long first = ~0UL << (a % WBITS);
	unsigned long last = ~0UL >> (WBITS - 1 - b % WBITS);

	if (wa == wb) {
		W(s)[wa] |= first & last;
		return;
	}
	W(s)[wa] |= first;
	for (size_t i = wa + 1; i < wb; i++)
		W(s)[i] = ~0UL;
	W(s)[wb] |= last;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static void skip_blanks(const char **p)
{
	while (blank(**p))
		(*p)++;
}

/*
 * The kernel prints a CPU set attribute with "%*pbl" (list) or "%*pb" (mask), the field width
 * being nr_cpu_ids. For a NULL mask vsprintf prints "(null)" in that width, right-justified:
 * "(null)" on a machine of six CPUs or fewer, 90 blanks and "(null)" on a 96-CPU one. Of the
 * attributes numastor reads, cpu/nohz_full is the one a NULL mask reaches: tick_nohz_full_mask
 * is allocated only with nohz_full= under CPUMASK_OFFSTACK (Debian's 6.1 and 6.12). The others
 * print masks that always exist (cpu/online, possible, isolated; node cpulist and cpumap; a
 * PCI function's local_cpulist and local_cpus; a root bus's cpulistaffinity and cpuaffinity;
 * an IRQ's smp_affinity(_list), effective_affinity(_list), and affinity_hint, which prints an
 * empty mask, not a NULL one, when the driver gave none; blk-mq's cpu_list, which is "%u, "
 * by hand) but are read the same way: the text trimmed of blanks, "(null)" an empty set.
 */
static bool kernel_null(const char *text)
{
	size_t len;

	while (blank(*text))
		text++;
	len = strlen(text);
	while (len && blank(text[len - 1]))
		len--;
	return len == 6 && memcmp(text, "(null)", 6) == 0;
}

/* One number of a list: decimal in the kernel's form (lib/base/number.h), below limit. */
static int list_number(const char **p, unsigned limit, unsigned *out)
{
	uint64_t v;
	int r = ns_parse_dec_prefix(p, limit - 1, &v);

	if (r < 0)
		return r;
	*out = (unsigned)v;
	return 0;
}

/*
 * Walk a list; with s == NULL only check it and find its largest CPU (*top, -1 when empty),
 * else set its ranges into s (grown beforehand). Every number is checked on the first walk, so
 * the second cannot fail.
 */
static int walk_list(const char *text, unsigned limit, struct ns_cpuset *s, long *top)
{
	const char *p = text;
	int r;

	*top = -1;
	skip_blanks(&p);
	while (*p) {
		unsigned a, b;

		r = list_number(&p, limit, &a);
		if (r < 0)
			return r;
		b = a;
		if (*p == '-') {
			p++;
			r = list_number(&p, limit, &b);
			if (r < 0)
				return r;
			if (b < a)
				return -EINVAL;
		}
		if ((long)b > *top)
			*top = (long)b;
		if (s)
			set_range(s, a, b);
		skip_blanks(&p);
		if (*p == ',') {
			p++;
			skip_blanks(&p);
			if (!*p)
				return -EINVAL;
		} else if (*p) {
			return -EINVAL;
		}
	}
	return 0;
}

int ns_cpuset_parse_list_max(struct ns_cpuset *s, const char *text, unsigned limit)
{
	long top;
	int r;

	ns_cpuset_clear(s);
	if (!text)
		return -EINVAL;
	if (limit == 0 || limit > NS_CPU_MAX)
		limit = NS_CPU_MAX;
	if (kernel_null(text)) {
		s->known = true; /* a NULL mask: no CPU */
		return 0;
	}
	r = walk_list(text, limit, NULL, &top);
	if (r < 0)
		return r;
	/* storage grown once, to the largest CPU named */
	r = grow(s, top >= 0 ? (size_t)top / WBITS + 1 : 0);
	if (r < 0)
		return r;
	(void)walk_list(text, limit, s, &top);
	s->known = true;
	return 0;
}

int ns_cpuset_parse_list(struct ns_cpuset *s, const char *text)
{
	return ns_cpuset_parse_list_max(s, text, NS_CPU_MAX);
}

int ns_cpuset_parse_mask_max(struct ns_cpuset *s, const char *text, unsigned limit)
{
	size_t len, ndigits = 0, lead = SIZE_MAX;
	unsigned long long top = 0;
	size_t bit = 0;
	int r;

	ns_cpuset_clear(s);
	if (!text)
		return -EINVAL;
	if (limit == 0 || limit > NS_CPU_MAX)
		limit = NS_CPU_MAX;
	if (kernel_null(text)) {
		s->known = true; /* a NULL mask: no CPU */
		return 0;
	}
	/* the blanks around the digits are the kernel's padding, not part of the mask */
	while (blank(*text))
		text++;
	len = strlen(text);
	while (len && blank(text[len - 1]))
		len--;
	/* hex digits in comma-separated groups (32 bits each in the kernel's form): no empty group */
	if (len == 0 || text[0] == ',' || text[len - 1] == ',')
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == ',') {
			if (text[i + 1] == ',')
				return -EINVAL;
			continue;
		}
		if (ns_hex_digit(text[i]) < 0)
			return -EINVAL;
		if (lead == SIZE_MAX && text[i] != '0')
			lead = ndigits; /* the most significant non-zero digit */
		ndigits++;
	}
	if (lead != SIZE_MAX) {
		/* the highest bit set: that digit's top bit, above the digits after it */
		int v = 0;
		size_t seen = 0;
		for (size_t i = 0; i < len; i++)
			if (text[i] != ',' && seen++ == lead) {
				v = ns_hex_digit(text[i]);
				break;
			}
		top = (unsigned long long)(ndigits - 1 - lead) * 4 +
		      (unsigned long long)(31 - __builtin_clz((unsigned)v));
		if (top >= limit)
			return -ERANGE;
		r = grow(s, (size_t)top / WBITS + 1);
		if (r < 0)
			return r;
	}
	/* least significant digit last; 4 bits at a time, never across a word */
	for (size_t i = len; lead != SIZE_MAX && i-- > 0 && bit <= top;) {
		int v;
		if (text[i] == ',')
			continue;
		v = ns_hex_digit(text[i]);
		if (v)
			W(s)[bit / WBITS] |= (unsigned long)v << (bit % WBITS);
		bit += 4;
	}
	s->known = true;
	return 0;
}

int ns_cpuset_parse_mask(struct ns_cpuset *s, const char *text)
{
	return ns_cpuset_parse_mask_max(s, text, NS_CPU_MAX);
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
