/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "out/replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ns_replay_label(struct ns_root *root, const char *file)
{
	char *label;

	if (asprintf(&label, NS_REPLAY_LABEL "%s", file) < 0)
		return -ENOMEM;
	ns_root_set_label(root, label);
	free(label);
	return 0;
}

bool ns_replay_is(const struct ns_root *root)
{
	/* a --sysroot directory is labelled by its canonical path, which starts with '/' */
	return root && !ns_root_is_live(root) &&
	       strncmp(ns_root_dir(root), NS_REPLAY_LABEL, strlen(NS_REPLAY_LABEL)) == 0;
}

/* YYYY-MM-DDTHH:MM:SSZ, each field in its range: what numastor snapshot writes (strftime of UTC). */
static bool rfc3339_utc(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
	int mo, d, h, mi, se;

	if (strlen(s) != sizeof(shape) - 1)
		return false;
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return false;
	if (sscanf(s + 5, "%2d-%2dT%2d:%2d:%2d", &mo, &d, &h, &mi, &se) != 5)
		return false;
	return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && se <= 60;
}

/* The value of the line "key=..." in facts (the first such line), or NULL. */
static const char *value_of(const char *facts, const char *key, size_t *len)
{
	size_t klen = strlen(key);

	for (const char *p = facts; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			const char *v = p + klen + 1, *end = strchr(v, '\n');
			*len = end ? (size_t)(end - v) : strlen(v);
			return v;
		}
	}
	return NULL;
}

int ns_replay_meta_read(struct ns_root *root, struct ns_replay_meta *m)
{
	char *facts = NULL;
	const char *v;
	size_t len;

	m->captured_at = m->captured_host = NULL;
	if (ns_read_str(root, NS_REPLAY_FACTS, &facts) < 0)
		return 0; /* the bundle says nothing */
	if ((v = value_of(facts, "captured_at", &len)) && !(m->captured_at = strndup(v, len)))
		goto oom;
	if (m->captured_at && !rfc3339_utc(m->captured_at)) {
		free(m->captured_at);
		m->captured_at = NULL;
	}
	if ((v = value_of(facts, "captured_host", &len)) && len && !(m->captured_host = strndup(v, len)))
		goto oom;
	free(facts);
	return 0;
oom:
	free(facts);
	ns_replay_meta_free(m);
	return -ENOMEM;
}

void ns_replay_meta_free(struct ns_replay_meta *m)
{
	free(m->captured_at);
	free(m->captured_host);
	m->captured_at = m->captured_host = NULL;
}

char *ns_replay_host_line(const char *name)
{
	char *line;

	if (!name || !*name || strpbrk(name, "\r\n"))
		return strdup("");
	return asprintf(&line, "captured_host=%s\n", name) < 0 ? NULL : line;
}
