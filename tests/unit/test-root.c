/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rooted reader: cat semantics, relative and absolute links resolved inside the root,
 * no escape through "..", garbled and empty values reported as such. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/root.h"
#include "tap.h"

static void put(const char *dir, const char *rel, const char *text)
{
	char p[4096];
	int fd;
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror("write");
		close(fd);
	}
}

static void dir(const char *base, const char *rel)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	mkdir(p, 0755);
}

static void lnk(const char *base, const char *rel, const char *target)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (symlink(target, p) < 0)
		perror("symlink");
}

static int by_version(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	char tmpl[] = "/tmp/numastor-test-root.XXXXXX";
	char *base = mkdtemp(tmpl), *s = NULL;
	struct ns_root *root = NULL;
	long v;
	char **names;
	size_t n;

	if (!base)
		return 1;
	dir(base, "sys");
	dir(base, "sys/devices");
	dir(base, "sys/devices/a");
	dir(base, "sys/devices/a/b");
	dir(base, "sys/block");
	put(base, "sys/devices/a/b/size", "2048\n");
	put(base, "sys/devices/a/b/garbage", "banana\n");
	put(base, "sys/devices/a/b/empty", "");
	put(base, "outside-secret", "secret\n");
	lnk(base, "sys/block/b", "../devices/a/b");
	lnk(base, "sys/block/abs", "/sys/devices/a/b");
	lnk(base, "sys/block/escape", "../../../../../../../etc");
	/* what the reader takes without an fstat (a short read ending in a newline) and what it
	 * still stats: no newline at the end, a buffer filled, a directory, a FIFO */
	put(base, "sys/devices/a/b/nonl", "7 8");
	dir(base, "sys/devices/a/b/adir");
	{
		char big[9001], p[4096];
		memset(big, 'x', sizeof(big) - 2);
		big[sizeof(big) - 2] = '\n';
		big[sizeof(big) - 1] = '\0';
		put(base, "sys/devices/a/b/big", big);
		snprintf(p, sizeof(p), "%s/sys/devices/a/b/fifo", base);
		if (mkfifo(p, 0644) < 0)
			perror("mkfifo");
	}

	CHECK(ns_root_open("/nonexistent/numastor", &root) == -ENOENT);
	CHECK(ns_root_open(base, &root) == 0);
	CHECK(!ns_root_is_live(root));
	CHECK(ns_read_long(root, "sys/block/b/size", &v, NULL) == 0 && v == 2048);
	/* an absolute link in a captured tree points inside the tree */
	CHECK(ns_read_long(root, "/sys/block/abs/size", &v, NULL) == 0 && v == 2048);
	CHECK(ns_read_long(root, "sys/block/b/garbage", &v, &s) == -EINVAL);
	CHECK_STR(s, "banana");
	free(s);
	CHECK(ns_read_str(root, "sys/block/b/empty", &s) == -ENODATA);
	CHECK(ns_read_str(root, "sys/block/b/missing", &s) == -ENOENT);
	CHECK(ns_read_str(root, "sys/block/b/nonl", &s) == 0);
	CHECK_STR(s, "7 8");
	free(s);
	s = NULL;
	CHECK(ns_read_str(root, "sys/block/b/big", &s) == 0);
	CHECK(s && strlen(s) == 8999 && s[8998] == 'x');
	free(s);
	CHECK(ns_read_str(root, "sys/block/b/adir", &s) == -EISDIR);
	/* a FIFO: opened without blocking, its empty read not taken for an empty file */
	CHECK(ns_read_str(root, "sys/block/b/fifo", &s) == -EINVAL);
	CHECK(ns_realpath(root, "sys/block/b", &s) == 0);
	CHECK_STR(s, "sys/devices/a/b");
	free(s);
	CHECK(ns_realpath(root, "sys/block/abs", &s) == 0);
	CHECK_STR(s, "sys/devices/a/b");
	free(s);
	/* ".." never climbs above the root: the host's /etc exists, the capture's does not */
	s = NULL;
	CHECK(ns_realpath(root, "sys/block/escape", &s) == -ENOENT);
	CHECK(s == NULL);
	CHECK(ns_read_str(root, "sys/block/escape/passwd", &s) == -ENOENT);
	CHECK(ns_read_str(root, "../outside-secret", &s) == 0); /* ".." at the top is the root itself */
	CHECK_STR(s, "secret");
	free(s);
	CHECK(ns_readlink_base(root, "sys/block/b", &s) == 0);
	CHECK_STR(s, "b");
	free(s);
	CHECK(ns_list_dir(root, "sys/block", &names, &n) == 0 && n == 3);
	ns_strv_free(names, n);

	/*
	 * Held directories (ns_root_hold_dir): a read under one gets what the walk from the root
	 * gets. Under sys/held: a plain file, a link up and out of it, an absolute link, and their
	 * decoys — a file of the same name under the held directory, which a walk that took the
	 * held directory for the root would find instead.
	 */
	dir(base, "sys/held");
	dir(base, "sys/held/q");
	dir(base, "sys/held/sys");
	dir(base, "sys/held/sys/devices");
	dir(base, "sys/held/sys/devices/a");
	dir(base, "sys/held/sys/devices/a/b");
	put(base, "sys/held/q/plain", "1\n");
	put(base, "sys/held/sys/devices/a/b/size", "999\n");
	put(base, "sys/held/outside-secret", "decoy\n");
	lnk(base, "sys/held/q/up", "../../devices/a/b/size");
	lnk(base, "sys/held/q/abs", "/sys/devices/a/b/size");
	lnk(base, "sys/held/q/top", "../../../../outside-secret");
	CHECK(ns_root_hold_dir(root, "sys/held/") == 0);
	CHECK(ns_root_hold_dir(root, "sys/nothing-here") == -ENOENT);
	CHECK(ns_read_long(root, "sys/held/q/plain", &v, NULL) == 0 && v == 1);
	CHECK(ns_read_long(root, "sys/held/q/up", &v, NULL) == 0 && v == 2048);
	CHECK(ns_read_long(root, "/sys/held/q/abs", &v, NULL) == 0 && v == 2048);
	CHECK(ns_read_str(root, "sys/held/q/top", &s) == 0);
	CHECK_STR(s, "secret");
	free(s);
	CHECK(ns_read_str(root, "sys/held/q/missing", &s) == -ENOENT);
	CHECK(ns_read_str(root, "sys/heldxq/plain", &s) == -ENOENT); /* a prefix, not its directory */
	CHECK(ns_list_dir(root, "sys/held/q", &names, &n) == 0 && n == 4);
	ns_strv_free(names, n);
	ns_root_drop_dir(root);
	CHECK(ns_read_long(root, "sys/held/q/up", &v, NULL) == 0 && v == 2048);

	/* a listing in strverscmp's order, numbers and stems with numbers included */
	{
		static const char *order[] = {"0",    "1",    "9",	"10",	 "100",	  "01",	   "007",
					      "0x",   "cpu0", "cpu9",	"cpu10", "cpu1a", "cpu01", "a",
					      "b10",  "b9x",  "x1y2",	"x1y10", "x10y1", "65",	   "127",
					      "1000", "99",   "cpu447", "x010",	 "x09"};
		size_t norder = sizeof(order) / sizeof(*order);
		char *want[sizeof(order) / sizeof(*order)];
		bool same = true;
		dir(base, "sys/order");
		for (size_t i = 0; i < norder; i++) {
			char rp[64];
			snprintf(rp, sizeof(rp), "sys/order/%s", order[i]);
			put(base, rp, "1\n");
			want[i] = (char *)order[i];
		}
		qsort(want, norder, sizeof(*want), by_version);
		CHECK(ns_list_dir(root, "sys/order", &names, &n) == 0 && n == norder);
		for (size_t i = 0; i < n && i < norder; i++)
			if (strcmp(names[i], want[i]) != 0) {
				fprintf(stderr, "listing %zu: %s, strverscmp puts %s\n", i, names[i], want[i]);
				same = false;
			}
		CHECK(same);
		ns_strv_free(names, n);
	}
	ns_root_free(root);

	CHECK(ns_root_open(NULL, &root) == 0);
	CHECK(ns_root_is_live(root));
	ns_root_free(root);
	{
		char cmd[4200];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", base);
	}
	return tap_done("root");
}
