/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fake root for the unit tests: a temporary directory standing in for / (sys/, proc/, ...),
 * filled with fr_put / fr_mkdirs / fr_lnk, each taking a path relative to it and making the
 * directories on the way.
 */
#ifndef NUMASTOR_TEST_FAKEROOT_H
#define NUMASTOR_TEST_FAKEROOT_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fr_base[64];

/* Make the fake root (a new temporary directory); its path, or NULL. */
static inline const char *fr_make(const char *name)
{
	snprintf(fr_base, sizeof(fr_base), "/tmp/numastor-test-%s.XXXXXX", name);
	return mkdtemp(fr_base);
}

static inline void fr_mkdirs(const char *rel)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", fr_base, rel);
	for (char *s = p + strlen(fr_base) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

static inline void fr_parent_of(const char *rel)
{
	char d[4096], *slash;
	snprintf(d, sizeof(d), "%s", rel);
	slash = strrchr(d, '/');
	if (slash) {
		*slash = '\0';
		fr_mkdirs(d);
	}
}

/* The file rel with the formatted text (mode 0644), replacing what was there. */
static inline __attribute__((format(printf, 2, 3))) void fr_put(const char *rel, const char *fmt, ...)
{
	char p[4096], text[8192];
	va_list ap;
	int fd;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fr_parent_of(rel);
	snprintf(p, sizeof(p), "%s/%s", fr_base, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror("write");
		close(fd);
	}
}

/* The symlink rel -> target, replacing what was there. */
static inline void fr_lnk(const char *rel, const char *target)
{
	char p[4096];
	fr_parent_of(rel);
	snprintf(p, sizeof(p), "%s/%s", fr_base, rel);
	unlink(p);
	if (symlink(target, p) < 0)
		perror("symlink");
}

#endif
