/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ns_vfmt(const char *fmt, va_list ap)
{
	char *s;
	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

/* src appended at buf + *len, within size (the NUL included) */
static void put(char *buf, size_t size, size_t *len, const char *src, size_t n)
{
	if (*len + 1 >= size)
		return;
	if (n > size - 1 - *len)
		n = size - 1 - *len;
	memcpy(buf + *len, src, n);
	*len += n;
}

char *ns_path_num(char *buf, size_t size, const char *pre, long long n, const char *post)
{
	char num[24], *d = num + sizeof(num);
	unsigned long long u = n < 0 ? -(unsigned long long)n : (unsigned long long)n;
	size_t len = 0;

	if (!size)
		return buf;
	do {
		*--d = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (n < 0)
		*--d = '-';
	put(buf, size, &len, pre, strlen(pre));
	put(buf, size, &len, d, (size_t)(num + sizeof(num) - d));
	put(buf, size, &len, post, strlen(post));
	buf[len] = '\0';
	return buf;
}

char *ns_fmt(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = ns_vfmt(fmt, ap);
	va_end(ap);
	return s;
}

int ns_strv_add(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strdup(s);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

bool ns_strv_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

int ns_strv_add_unique(char ***v, size_t *n, const char *s)
{
	return ns_strv_has(*v, *n, s) ? 0 : ns_strv_add(v, n, s);
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

void ns_irq_list_write(FILE *m, int *v, size_t n)
{
	qsort(v, n, sizeof(*v), int_cmp);
	fputs(n == 1 ? "irq " : "irqs ", m);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && (v[j + 1] == v[j] || v[j + 1] == v[j] + 1))
			j++;
		fprintf(m, i ? ", %d" : "%d", v[i]);
		if (v[j] != v[i])
			fprintf(m, "-%d", v[j]);
		i = j + 1;
	}
}
