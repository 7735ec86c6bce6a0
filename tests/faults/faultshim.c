/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * faultshim: an LD_PRELOAD shim that fails one call numastor makes inside its root (issue 36).
 *
 *   FAULT_ROOT=DIR FAULT_N=N FAULT_OPS=open,read,readdir,readlink FAULT_ERRNO=EIO \
 *   FAULT_LOG=FILE LD_PRELOAD=faultshim.so numastor check --sysroot DIR ...
 *
 * Counts the calls of the kinds FAULT_OPS names (default: all four) whose path lies under
 * FAULT_ROOT (a call relative to a directory fd is placed by that fd's /proc/self/fd link, so
 * the root's fd and the reader's held directories count alike), and fails the Nth with
 * FAULT_ERRNO (EIO, EMFILE, ENOMEM, EINTR, EAGAIN, ENFILE, EACCES). With FAULT_EVERY=1 every
 * call from the Nth on fails (an error that does not go away: EINTR retried for ever).
 * FAULT_LOG gets, at exit, "count C" (the calls counted) and, when one was failed,
 * "failed OP PATH" with PATH relative to FAULT_ROOT. N=0 fails nothing: a clean run's count.
 *
 * open: open, open64, openat, openat64 and openat2 (through syscall(2)); read: read(2);
 * readdir: readdir, readdir64 (glibc's getdents64 is internal to it, so the failure is put
 * where the caller sees it: NULL with errno set); readlink: readlinkat.
 */
/* the plain and the 64 names are each defined here: no redirection of one to the other */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char froot[PATH_MAX];
static size_t frootlen;
static long target, every;
static int ferr = EIO;
static unsigned ops = 0xf;
static atomic_long count;
static atomic_int failed_once;
static char failed_what[PATH_MAX + 16];
static const char *logpath;

enum { OP_OPEN = 1, OP_READ = 2, OP_READDIR = 4, OP_READLINK = 8 };

static long (*real_syscall)(long, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static ssize_t (*real_read)(int, void *, size_t);
static struct dirent *(*real_readdir)(DIR *);
static struct dirent64 *(*real_readdir64)(DIR *);
static ssize_t (*real_readlinkat)(int, const char *, char *, size_t);

static int errno_named(const char *s)
{
	static const struct {
		const char *name;
		int e;
	} t[] = {{"EIO", EIO},	     {"EMFILE", EMFILE}, {"ENOMEM", ENOMEM}, {"EINTR", EINTR},
		 {"EAGAIN", EAGAIN}, {"ENFILE", ENFILE}, {"EACCES", EACCES}};
	for (size_t i = 0; s && i < sizeof(t) / sizeof(*t); i++)
		if (strcmp(s, t[i].name) == 0)
			return t[i].e;
	return EIO;
}

static atomic_int ready;

/* Resolved at the first call, whoever makes it (another library's constructor may read first). */
__attribute__((constructor)) static void init(void)
{
	if (atomic_exchange(&ready, 1))
		return;
	const char *r = getenv("FAULT_ROOT"), *o = getenv("FAULT_OPS");

	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	real_openat = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	real_openat64 = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat64");
	real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	real_open64 = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
	real_read = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	real_readdir = (struct dirent * (*)(DIR *)) dlsym(RTLD_NEXT, "readdir");
	real_readdir64 = (struct dirent64 * (*)(DIR *)) dlsym(RTLD_NEXT, "readdir64");
	real_readlinkat = (ssize_t(*)(int, const char *, char *, size_t))dlsym(RTLD_NEXT, "readlinkat");
	if (r && realpath(r, froot))
		frootlen = strlen(froot);
	target = getenv("FAULT_N") ? atol(getenv("FAULT_N")) : 0;
	every = getenv("FAULT_EVERY") && strcmp(getenv("FAULT_EVERY"), "1") == 0;
	ferr = errno_named(getenv("FAULT_ERRNO"));
	logpath = getenv("FAULT_LOG");
	if (o) {
		ops = 0;
		ops |= strstr(o, "open") ? OP_OPEN : 0;
		ops |= strstr(o, "read,") || strcmp(o, "read") == 0 ||
				       (strlen(o) >= 5 && strcmp(o + strlen(o) - 5, ",read") == 0)
			       ? OP_READ
			       : 0;
		ops |= strstr(o, "readdir") ? OP_READDIR : 0;
		ops |= strstr(o, "readlink") ? OP_READLINK : 0;
	}
}

__attribute__((destructor)) static void fini(void)
{
	FILE *f;

	if (!logpath || !(f = fopen(logpath, "w")))
		return;
	fprintf(f, "count %ld\n", atomic_load(&count));
	if (atomic_load(&failed_once))
		fprintf(f, "failed %s\n", failed_what);
	fclose(f);
}

/* The path a call names: absolute, or fd's own path + "/" + rel. */
static void place(int dirfd, const char *rel, char *out, size_t len)
{
	char link[64], dir[PATH_MAX];
	ssize_t n;

	if (rel && rel[0] == '/') {
		snprintf(out, len, "%s", rel);
		return;
	}
	if (dirfd == AT_FDCWD) {
		if (!getcwd(dir, sizeof(dir)))
			dir[0] = '\0';
		n = (ssize_t)strlen(dir);
	} else {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
		n = readlink(link, dir, sizeof(dir) - 1);
		if (n < 0)
			n = 0;
	}
	dir[n] = '\0';
	if (rel && *rel)
		snprintf(out, len, "%s/%s", dir, rel);
	else
		snprintf(out, len, "%s", dir);
}

/* Is this call the one to fail? errno set when it is. */
static int fail_here(unsigned op, int dirfd, const char *rel)
{
	char p[PATH_MAX * 2];
	long k;

	if (!frootlen || !(ops & op))
		return 0;
	place(dirfd, rel, p, sizeof(p));
	if (strncmp(p, froot, frootlen) != 0 || (p[frootlen] != '/' && p[frootlen] != '\0'))
		return 0;
	k = atomic_fetch_add(&count, 1) + 1;
	if (target <= 0 || k < target || (k > target && !every))
		return 0;
	if (!atomic_exchange(&failed_once, 1))
		snprintf(failed_what, sizeof(failed_what), "%s %s",
			 op == OP_OPEN	    ? "open"
			 : op == OP_READ    ? "read"
			 : op == OP_READDIR ? "readdir"
					    : "readlink",
			 p[frootlen] ? p + frootlen + 1 : ".");
	errno = ferr;
	return 1;
}

long syscall(long nr, ...)
{
	init();
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_openat2 && fail_here(OP_OPEN, (int)a[0], (const char *)a[1]))
		return -1;
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

#define OPEN_MODE(flags)                         \
	mode_t mode = 0;                         \
	if ((flags) & (O_CREAT | __O_TMPFILE)) { \
		va_list ap;                      \
		va_start(ap, flags);             \
		mode = (mode_t)va_arg(ap, int);  \
		va_end(ap);                      \
	}

int openat(int dirfd, const char *path, int flags, ...)
{
	init();
	OPEN_MODE(flags);
	if (fail_here(OP_OPEN, dirfd, path))
		return -1;
	return real_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	init();
	OPEN_MODE(flags);
	if (fail_here(OP_OPEN, dirfd, path))
		return -1;
	return real_openat64(dirfd, path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	init();
	OPEN_MODE(flags);
	if (fail_here(OP_OPEN, AT_FDCWD, path))
		return -1;
	return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	init();
	OPEN_MODE(flags);
	if (fail_here(OP_OPEN, AT_FDCWD, path))
		return -1;
	return real_open64(path, flags, mode);
}

ssize_t read(int fd, void *buf, size_t len)
{
	init();
	if (fail_here(OP_READ, fd, NULL))
		return -1;
	return real_read(fd, buf, len);
}

struct dirent *readdir(DIR *d)
{
	init();
	if (fail_here(OP_READDIR, dirfd(d), NULL))
		return NULL;
	return real_readdir(d);
}

struct dirent64 *readdir64(DIR *d)
{
	init();
	if (fail_here(OP_READDIR, dirfd(d), NULL))
		return NULL;
	return real_readdir64(d);
}

ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t len)
{
	init();
	if (fail_here(OP_READLINK, dirfd, path))
		return -1;
	return real_readlinkat(dirfd, path, buf, len);
}
