/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Snapshot replay's extraction and removal, unprivileged (as nobody when run as root): no
 * setuid, setgid or sticky bit survives extraction; an extraction directory goes whatever
 * the modes inside it (0500, 0000, deep chains of them) without following a link out. */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <grp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "out/snapshot.h"
#include "tap.h"

struct member {
	const char *path;
	mode_t type, perm;
	const char *data;
};

static void write_bundle(const char *file, const struct member *m, size_t n)
{
	struct archive *a = archive_write_new();
	struct archive_entry *ae = archive_entry_new();

	archive_write_add_filter_gzip(a);
	archive_write_set_format_pax_restricted(a);
	archive_write_open_filename(a, file);
	for (size_t i = 0; i < n; i++) {
		size_t len = m[i].data ? strlen(m[i].data) : 0;
		archive_entry_clear(ae);
		archive_entry_set_pathname(ae, m[i].path);
		archive_entry_set_filetype(ae, m[i].type);
		archive_entry_set_perm(ae, m[i].perm);
		archive_entry_set_size(ae, (la_int64_t)len);
		archive_write_header(a, ae);
		if (len)
			archive_write_data(a, m[i].data, len);
	}
	archive_write_close(a);
	archive_write_free(a);
	archive_entry_free(ae);
}

static mode_t mode_of(const char *dir, const char *rel)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return lstat(p, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

static void extraction_masks_modes(const char *tmp)
{
	static const struct member m[] = {
		{"sys/block/.keep", AE_IFREG, 0644, "x\n"}, {"sys/suid", AE_IFREG, 04755, "x\n"},
		{"sys/sticky", AE_IFREG, 01644, "x\n"},	    {"sys/sgid", AE_IFDIR, 02755, NULL},
		{"sys/sgid/f", AE_IFREG, 02644, "x\n"},	    {"sys/ro", AE_IFDIR, 0500, NULL},
		{"sys/ro/f", AE_IFREG, 0444, "x\n"},	    {"sys/none", AE_IFDIR, 0000, NULL},
	};
	char file[4096], *dir = NULL, *why = NULL;
	int r;

	snprintf(file, sizeof(file), "%s/modes.tar.gz", tmp);
	write_bundle(file, m, sizeof(m) / sizeof(m[0]));
	r = ns_snapshot_extract(file, &dir, &why);
	CHECK(r == 0);
	if (r) {
		fprintf(stderr, "extract: %s\n", why ? why : strerror(-r));
		free(why);
		return;
	}
	CHECK(mode_of(dir, "sys/suid") == 0755);
	CHECK(mode_of(dir, "sys/sticky") == 0644);
	CHECK(mode_of(dir, "sys/sgid") == 0755);
	CHECK(mode_of(dir, "sys/sgid/f") == 0644);
	/* the permission bits themselves are kept: a file's mode means something to the reader */
	CHECK(mode_of(dir, "sys/ro") == 0500);
	CHECK(mode_of(dir, "sys/ro/f") == 0444);
	CHECK(mode_of(dir, "sys/none") == 0000);
	CHECK(ns_snapshot_remove(dir) == 0);
	CHECK(access(dir, F_OK) < 0 && errno == ENOENT);
	free(dir);
}

static void removal_whatever_the_modes(const char *tmp)
{
	char dir[4096], p[8192], canary[4096];
	size_t len;
	int fd;

	snprintf(canary, sizeof(canary), "%s/outside", tmp);
	mkdir(canary, 0755);
	snprintf(p, sizeof(p), "%s/keep", canary);
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	close(fd);
	snprintf(dir, sizeof(dir), "%s/numastor-snapshot.test", tmp);
	CHECK(mkdir(dir, 0700) == 0);
	/* a chain of 60 directories, each with a file, each then made 0500 from the bottom up */
	len = (size_t)snprintf(p, sizeof(p), "%s", dir);
	for (int i = 0; i < 60; i++) {
		len += (size_t)snprintf(p + len, sizeof(p) - len, "/d");
		CHECK(mkdir(p, 0755) == 0);
		snprintf(p + len, sizeof(p) - len, "/f");
		fd = open(p, O_WRONLY | O_CREAT, 0000);
		close(fd);
		p[len] = '\0';
	}
	snprintf(p + len, sizeof(p) - len, "/out");
	CHECK(symlink(canary, p) == 0); /* a link out: removed, never followed */
	p[len] = '\0';
	snprintf(p + len, sizeof(p) - len, "/none");
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p + len + 5, sizeof(p) - len - 5, "/f");
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	close(fd);
	p[len + 5] = '\0';
	CHECK(chmod(p, 0000) == 0);
	for (;;) {
		p[len] = '\0';
		CHECK(chmod(p, 0500) == 0);
		if (len <= strlen(dir))
			break;
		len -= 2;
	}
	CHECK(ns_snapshot_remove(dir) == 0);
	CHECK(access(dir, F_OK) < 0 && errno == ENOENT);
	snprintf(p, sizeof(p), "%s/keep", canary);
	CHECK(access(p, F_OK) == 0);
}

static int run_tests(const char *tmp)
{
	extraction_masks_modes(tmp);
	removal_whatever_the_modes(tmp);
	return tap_done("snapshot");
}

int main(void)
{
	const char *base = getenv("TMPDIR");
	char tmp[4096];
	int status;
	pid_t pid;

	snprintf(tmp, sizeof(tmp), "%s/test-snapshot.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("TMPDIR", tmp, 1);
	if (geteuid() != 0)
		return run_tests(tmp);
	/* root ignores modes: the removal has to work for whoever replays, so run as nobody */
	if (chown(tmp, 65534, 65534) < 0) {
		perror("chown");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0) {
			perror("dropping root");
			_exit(1);
		}
		status = run_tests(tmp);
		fflush(stdout);
		_exit(status);
	}
	waitpid(pid, &status, 0);
	{
		/* whatever the child left (a failed removal), root takes away */
		char cmd[4200];
		snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", tmp, tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "could not clean %s\n", tmp);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
