/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/diskstat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "read/root.h"

/* the completed-request fields: reads 0, writes 4, discards 11 (4.18+), flushes 15 (5.5+) */
static const int completed_fields[] = {0, 4, 11, 15};

int ns_diskstat_parse(const char *text, uint64_t *out)
{
	uint64_t v[17], sum = 0;
	const char *p = text;
	int n = 0;

	while (n < 17) {
		char *end;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || !*p)
			break;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v[n] = strtoull(p, &end, 10);
		if (errno || (*end != ' ' && *end != '\t' && *end != '\n' && *end))
			return -EINVAL;
		p = end;
		n++;
	}
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	/* 11, 15 or 17 fields, and nothing after them */
	if (*p || (n != 11 && n != 15 && n != 17))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(completed_fields) / sizeof(completed_fields[0]); i++)
		if (completed_fields[i] < n)
			sum += v[completed_fields[i]];
	*out = sum;
	return 0;
}

int ns_diskstat_read(struct ns_root *root, uint32_t devnum, uint64_t *out)
{
	char path[64], *text = NULL;
	int r;

	snprintf(path, sizeof(path), "sys/dev/block/%u:%u/stat", devnum >> 20, devnum & 0xfffff);
	r = ns_read_str(root, path, &text);
	if (r == 0)
		r = ns_diskstat_parse(text, out);
	free(text);
	return r;
}

int ns_diskstat_completed(struct ns_root *root, uint32_t devnum, uint64_t *out)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "sys/dev/block/%u:%u/mq", devnum >> 20, devnum & 0xfffff);
	r = ns_probe(root, path);
	if (r <= 0)
		return r < 0 ? r : -EOPNOTSUPP;
	return ns_diskstat_read(root, devnum, out);
}
