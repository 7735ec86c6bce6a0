/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fake root for the unit tests: a temporary directory standing in for / (sys/, proc/, ...),
 * filled with fr_put / fr_mkdirs / fr_lnk, each taking a path relative to it and making the
 * directories on the way.
 */
#ifndef NUMASTOR_TEST_FAKEROOT_H
#define NUMASTOR_TEST_FAKEROOT_H

#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fr_base[64];
/* every root made, removed when the test ends (NUMASTOR_TEST_KEEP=1 keeps them to look at) */
static char fr_made[16][64];
static int fr_nmade;

static inline int fr_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 ? 0 : 0;
}

static inline void fr_cleanup(void)
{
	const char *keep = getenv("NUMASTOR_TEST_KEEP");

	for (int i = 0; i < fr_nmade && !(keep && strcmp(keep, "1") == 0); i++)
		nftw(fr_made[i], fr_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* Make the fake root (a new temporary directory); its path, or NULL. */
static inline const char *fr_make(const char *name)
{
	snprintf(fr_base, sizeof(fr_base), "/tmp/numastor-test-%s.XXXXXX", name);
	if (!mkdtemp(fr_base))
		return NULL;
	if (fr_nmade < 16) {
		if (fr_nmade == 0)
			atexit(fr_cleanup);
		snprintf(fr_made[fr_nmade++], sizeof(fr_made[0]), "%s", fr_base);
	}
	return fr_base;
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
