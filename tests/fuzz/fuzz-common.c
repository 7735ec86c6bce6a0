/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "fuzz-common.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FUZZ CHECK FAILED at %s:%d: %s: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static char *scratch;

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	/* a directory without write or search bits cannot be emptied until it has them back */
	if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR)
		chmod(p, 0700);
	remove(p);
	return 0;
}

void fuzz_rmtree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode))
		chmod(path, 0700);
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	/* a second pass for what was unreadable the first time round */
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_scratch(void)
{
	if (scratch)
		fuzz_rmtree(scratch);
}

const char *fuzz_scratch(void)
{
	const char *tmp = getenv("TMPDIR");

	if (scratch)
		return scratch;
	if (asprintf(&scratch, "%s/numastor-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0 || !mkdtemp(scratch)) {
		perror("fuzz: scratch directory");
		abort();
	}
	atexit(remove_scratch);
	return scratch;
}

static void mkdir_parents(char *path)
{
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(path, 0755);
			*p = '/';
		}
}

void fuzz_write(const char *dir, const char *rel, const void *data, size_t len, mode_t mode)
{
	char *path;
	int fd;

	if (asprintf(&path, "%s/%s", dir, rel) < 0)
		abort();
	mkdir_parents(path);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
		abort();
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, (const char *)data + off, len - off);
		if (w <= 0) {
			perror("fuzz: write");
			abort();
		}
		off += (size_t)w;
	}
	close(fd);
	free(path);
}

bool fuzz_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned c = *p, need, cp;
		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, cp = c & 0x07;
		else
			return false;
		if ((size_t)(end - p) <= need)
			return false;
		for (unsigned k = 1; k <= need; k++) {
			if ((p[k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[k] & 0x3f);
		}
		if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		p += need + 1;
	}
	return true;
}

char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

void fuzz_dump(const void *data, size_t len)
{
	static unsigned long n;
	const char *dir = getenv("NS_FUZZ_DUMP");
	char *path;
	FILE *f;

	if (!dir || !*dir)
		return;
	if (asprintf(&path, "%s/%06lu-%d.json", dir, n++, (int)getpid()) < 0)
		abort();
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		perror("fuzz: dump");
		abort();
	}
	free(path);
}
