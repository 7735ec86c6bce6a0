/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The snapshot extractor (lib/out/snapshot.c): the input is a bundle file. Whatever it holds, the
 * extraction either refuses (with a reason) or leaves a private directory holding only
 * regular files, directories and links that resolve inside it; and once removed (or refused)
 * nothing of it is left in TMPDIR, whatever the modes inside.
 */
#define _GNU_SOURCE
#include "fuzz-common.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out/snapshot.h"

static char *bundle, *tmpdir;
static size_t dirlen;
static unsigned long long total;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *s = fuzz_scratch();

	if (asprintf(&bundle, "%s/bundle.tar.gz", s) < 0 || asprintf(&tmpdir, "%s/tmp", s) < 0)
		abort();
	mkdir(tmpdir, 0700);
	/* the extractor makes its directories under TMPDIR: this process's own */
	setenv("TMPDIR", tmpdir, 1);
	return 0;
}

/* Lexically inside the extracted directory? p is the link's full path, t its target. */
static bool link_inside(const char *p, const char *t)
{
	const char *rel = p + dirlen + 1;
	long depth = 0;
	char *buf, *save;

	if (t[0] == '/')
		return false;
	/* the link's own directory */
	for (const char *c = rel; *c; c++)
		if (*c == '/')
			depth++;
	buf = strdup(t);
	FUZZ_ASSERT(buf, "out of memory");
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, "..") == 0)
			depth--;
		else if (strcmp(c, ".") != 0)
			depth++;
		if (depth < 0)
			break;
	}
	free(buf);
	return depth >= 0;
}

static int check_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	FUZZ_ASSERT(S_ISREG(st->st_mode) || S_ISDIR(st->st_mode) || S_ISLNK(st->st_mode),
		    "extracted '%s' is neither a file, a directory nor a link (mode %o)", p, st->st_mode);
	FUZZ_ASSERT(!(st->st_mode & (S_ISUID | S_ISGID)), "extracted '%s' is setuid/setgid", p);
	if (S_ISREG(st->st_mode)) {
		FUZZ_ASSERT((unsigned long long)st->st_size <= NS_SNAPSHOT_MAX_FILE, "extracted '%s' is %lld bytes", p,
			    (long long)st->st_size);
		FUZZ_ASSERT(st->st_nlink == 1, "extracted '%s' is hard-linked", p);
		total += (unsigned long long)st->st_size;
	}
	if (S_ISLNK(st->st_mode)) {
		char t[PATH_MAX];
		ssize_t l = readlink(p, t, sizeof(t) - 1);
		FUZZ_ASSERT(l >= 0, "cannot read link '%s'", p);
		t[l] = 0;
		FUZZ_ASSERT(link_inside(p, t), "extracted link '%s' -> '%s' points outside the bundle", p, t);
	}
	return 0;
}

static bool empty_dir(const char *d)
{
	DIR *dd = opendir(d);
	struct dirent *e;
	bool empty = true;

	FUZZ_ASSERT(dd, "TMPDIR %s vanished", d);
	while ((e = readdir(dd)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(dd);
	return empty;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *dir = NULL, *why = NULL;
	int r;

	if (!bundle)
		LLVMFuzzerInitialize(NULL, NULL);
	fuzz_write(fuzz_scratch(), "bundle.tar.gz", data, size, 0644);
	r = ns_snapshot_extract(bundle, &dir, &why);
	if (r < 0) {
		FUZZ_ASSERT(!dir, "a refused bundle left *dir set");
		FUZZ_ASSERT(why && *why, "refused (%d) without saying why", r);
	} else {
		FUZZ_ASSERT(dir, "extracted without a directory");
		dirlen = strlen(dir);
		total = 0;
		nftw(dir, check_entry, 16, FTW_PHYS);
		FUZZ_ASSERT(total <= NS_SNAPSHOT_MAX_TOTAL, "extracted %llu bytes", total);
		FUZZ_ASSERT(ns_snapshot_remove(dir) == 0, "cannot remove the extracted %s", dir);
	}
	/* nothing left behind in TMPDIR, on either path */
	if (!empty_dir(tmpdir)) {
		fuzz_rmtree(tmpdir);
		mkdir(tmpdir, 0700);
		FUZZ_ASSERT(0, "the extraction left files in TMPDIR (%s)", r < 0 ? "refused" : "removed");
	}
	free(dir);
	free(why);
	return 0;
}
