/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/devarg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/root.h"

/* A name that can only be one directory entry (no '/', not "." or ".."). */
static bool plain_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* The disk or partition whose dev file reads devnum ("8:1"); *disk and *part malloc'd. */
static int by_devnum(struct ns_root *root, const char *devnum, char **disk, char **part)
{
	char **names = NULL, p[512], *v;
	size_t n = 0;
	int r = ns_list_dir(root, "sys/block", &names, &n);

	if (r < 0)
		return r;
	r = -ENODEV;
	for (size_t i = 0; i < n && r == -ENODEV; i++) {
		snprintf(p, sizeof(p), "sys/block/%s/dev", names[i]);
		if (ns_read_str(root, p, &v) == 0) {
			if (strcmp(v, devnum) == 0)
				r = (*disk = strdup(names[i])) ? 0 : -ENOMEM;
			free(v);
		}
	}
	for (size_t i = 0; i < n && r == -ENODEV; i++) {
		char **sub = NULL;
		size_t ns = 0;
		snprintf(p, sizeof(p), "sys/block/%s", names[i]);
		if (ns_list_dir(root, p, &sub, &ns) < 0)
			continue;
		for (size_t k = 0; k < ns && r == -ENODEV; k++) {
			snprintf(p, sizeof(p), "sys/block/%s/%s/partition", names[i], sub[k]);
			int e = ns_probe(root, p);
			if (e < 0) {
				r = e; /* not told: never "no such partition" */
				break;
			}
			if (e == 0)
				continue;
			snprintf(p, sizeof(p), "sys/block/%s/%s/dev", names[i], sub[k]);
			if (ns_read_str(root, p, &v) == 0) {
				if (strcmp(v, devnum) == 0) {
					*disk = strdup(names[i]);
					*part = strdup(sub[k]);
					r = *disk && *part ? 0 : -ENOMEM;
				}
				free(v);
			}
		}
		ns_strv_free(sub, ns);
	}
	ns_strv_free(names, n);
	return r;
}

/* The device udev made the link /dev/<link> for: the database file with the line "S:<link>". */
static int from_udev_db(struct ns_root *root, const char *link, char **disk, char **part)
{
	char **names = NULL, p[512], *txt;
	size_t n = 0, len = strlen(link);
	int r = ns_list_dir(root, "run/udev/data", &names, &n);

	if (r < 0)
		return -ENODEV;
	r = -ENODEV;
	for (size_t i = 0; i < n && r == -ENODEV; i++) {
		const char *line;
		bool hit = false;
		if (names[i][0] != 'b')
			continue;
		snprintf(p, sizeof(p), "run/udev/data/%s", names[i]);
		if (ns_read_str(root, p, &txt) < 0)
			continue;
		for (line = txt; line && !hit; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
			hit = strncmp(line, "S:", 2) == 0 && strncmp(line + 2, link, len) == 0 &&
			      (line[2 + len] == '\n' || line[2 + len] == '\0');
		free(txt);
		if (hit)
			r = by_devnum(root, names[i] + 1, disk, part);
	}
	ns_strv_free(names, n);
	return r;
}

/* The partition name of a disk under sys/block: *disk malloc'd. */
static int disk_of_partition(struct ns_root *root, const char *name, char **disk)
{
	char **names = NULL, p[512];
	size_t n = 0;
	int r = ns_list_dir(root, "sys/block", &names, &n);

	if (r < 0)
		return r;
	r = -ENODEV;
	for (size_t i = 0; i < n && r == -ENODEV; i++) {
		snprintf(p, sizeof(p), "sys/block/%s/%s/partition", names[i], name);
		int e = ns_probe(root, p);
		if (e < 0)
			r = e;
		else if (e == 1)
			r = (*disk = strdup(names[i])) ? 0 : -ENOMEM;
	}
	ns_strv_free(names, n);
	return r;
}

int ns_devarg_resolve(struct ns_root *root, const char *arg, struct ns_devarg *out)
{
	char p[512], *target = NULL, *name = NULL;
	const char *rest = arg;
	bool dev = false;
	int r;

	memset(out, 0, sizeof(*out));
	if (strncmp(arg, "/dev/", 5) == 0) {
		rest = arg + 5;
		dev = true;
	}
	if (strlen(rest) >= 256)
		return -ENODEV;
	if (dev) {
		/* a link below /dev (by-id, mapper, an alias): the tree's own when it has it */
		snprintf(p, sizeof(p), "dev/%s", rest);
		if (ns_readlink(root, p, &target) == 0) {
			const char *base = strrchr(target, '/');
			name = strdup(base ? base + 1 : target);
			free(target);
			if (!name)
				return -ENOMEM;
		} else if (strchr(rest, '/')) {
			/* a captured tree has no /dev: what udev says it made */
			r = from_udev_db(root, rest, &out->disk, &out->partition);
			if (r < 0)
				ns_devarg_free(out);
			return r;
		}
	}
	if (!name && !(name = strdup(rest)))
		return -ENOMEM;
	r = -ENODEV;
	if (plain_name(name)) {
		snprintf(p, sizeof(p), "sys/block/%s", name);
		r = ns_probe(root, p);
		if (r == 1) {
			out->disk = name;
			return 0;
		}
		if (r < 0) {
			free(name);
			return r;
		}
		r = disk_of_partition(root, name, &out->disk);
		if (r == 0) {
			out->partition = name;
			return 0;
		}
	}
	free(name);
	if (r == -ENODEV && dev && plain_name(rest))
		r = from_udev_db(root, rest, &out->disk, &out->partition); /* /dev/cdrom: udev's alias */
	if (r < 0)
		ns_devarg_free(out);
	return r == -ENOMEM ? r : r < 0 ? -ENODEV : 0;
}

void ns_devarg_free(struct ns_devarg *a)
{
	free(a->disk);
	free(a->partition);
	a->disk = a->partition = NULL;
}
