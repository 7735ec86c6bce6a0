/* access-log: an LD_PRELOAD shim that writes down every access numastor makes inside its root.
 *
 *   ACCESS_LOG=FILE ACCESS_ROOT=DIR LD_PRELOAD=access-log.so numastor check --sysroot DIR ...
 *
 * Writes one line per access, in the order numastor makes them (the floor's list, floor.c):
 *   r PATH   a file opened for reading     (openat2 / openat without O_PATH or O_DIRECTORY)
 *   d PATH   a directory opened to be listed (O_DIRECTORY without O_PATH)
 *   l PATH   a link read                   (readlinkat that succeeded; a component probe
 *                                           that is not a link, EINVAL, is not an access)
 *   s PATH   a path stat'd                 (O_PATH open, then fstat)
 * PATH is relative to the root, as numastor passed it (through links, not resolved). A failed
 * open is logged too ("!" after the letter): a probe for a missing file is work the floor
 * must also do. Only calls relative to the root directory's fd count (the way lib/read/root.c
 * reaches every captured or live file); libraries, locale, config and journals do not.
 *
 * Why a shim and not the snapshot recorder: the archive `numastor snapshot` writes is sorted
 * by path, stores paths resolved through links, keeps each path once, and writes a listed
 * directory's entries the same way as a listed directory or a stat'd path (an empty file,
 * a directory), so neither the order nor which directories were listed (rather than merely
 * named by a listing) nor how often a file was read can be recovered from it. The recorder
 * callback (lib/read/root.c record()) sees exactly these calls; this shim sees the syscalls under
 * them. run-bench.sh cross-checks the two (the files read must be the same set).
 *
 * ACCESS_ROOT is compared with the readlink of /proc/self/fd/N of each directory fd the first
 * time it is used, so the root is found whatever fd number it gets ("/" on a live root).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAXFD 65536
enum { F_UNKNOWN = 0, F_ROOT, F_PARENT };
static unsigned char fdkind[MAXFD];
static char *parent_path[MAXFD]; /* F_PARENT: the root-relative directory an O_PATH fd names */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int logfd = -2;
static char root[PATH_MAX];

static long (*real_syscall)(long, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static ssize_t (*real_readlinkat)(int, const char *, char *, size_t);
static int (*real_close)(int);
static int (*real_open64)(const char *, int, ...);

static void init(void)
{
	if (logfd != -2)
		return;
	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	real_openat = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	real_openat64 = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat64");
	real_readlinkat = (ssize_t(*)(int, const char *, char *, size_t))dlsym(RTLD_NEXT, "readlinkat");
	real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	real_open64 = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
	const char *f = getenv("ACCESS_LOG"), *r = getenv("ACCESS_ROOT");
	logfd = -1;
	if (!f || !r || !realpath(r, root))
		return;
	logfd = (int)real_syscall(SYS_openat, AT_FDCWD, f, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

/* Is dirfd the root? (caller holds the lock) */
static int is_root(int dirfd)
{
	char p[64], t[PATH_MAX];
	ssize_t n;

	if (dirfd < 0 || dirfd >= MAXFD)
		return 0;
	if (fdkind[dirfd] == F_UNKNOWN) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", dirfd);
		n = readlink(p, t, sizeof(t) - 1);
		/* only the answer "root" is kept: another fd's number may be reused unseen (closedir
		 * and fclose close inside libc), the root is closed with close() */
		if (n > 0) {
			t[n] = '\0';
			if (strcmp(t, root) == 0)
				fdkind[dirfd] = F_ROOT;
		}
	}
	return fdkind[dirfd] == F_ROOT;
}

static void put(char op, int failed, const char *a, const char *b)
{
	char line[2 * PATH_MAX + 8];
	int n = snprintf(line, sizeof(line), "%c%s %s%s%s\n", op, failed ? "!" : "", a, b ? "/" : "", b ? b : "");
	if (n > 0 && (size_t)n < sizeof(line) && !strchr(a, '\n') && !(b && strchr(b, '\n')))
		(void)!write(logfd, line, (size_t)n);
}

/* After an open relative to dirfd: log it, and remember what the new fd is. */
static void opened(int dirfd, const char *path, int flags, int fd)
{
	if (logfd < 0)
		return;
	pthread_mutex_lock(&lock);
	if (fd >= 0 && fd < MAXFD) {
		fdkind[fd] = F_UNKNOWN;
		free(parent_path[fd]);
		parent_path[fd] = NULL;
	}
	/* relative to the root, or to a directory opened under it (O_PATH: the parent of a link
	 * about to be read, or a directory numastor holds open for the reads under it,
	 * ns_root_hold_dir): the path as if from the root */
	const char *base = NULL;
	char *full = NULL;
	if (path && path[0] != '/') {
		if (is_root(dirfd))
			base = "";
		else if (dirfd >= 0 && dirfd < MAXFD && fdkind[dirfd] == F_PARENT && parent_path[dirfd])
			base = parent_path[dirfd];
	}
	if (base && *base && asprintf(&full, "%s/%s", base, path) < 0)
		full = NULL;
	if (base && (!*base || full)) {
		const char *fp = *base ? full : path;
		if ((flags & O_PATH) && (flags & O_DIRECTORY)) {
			/* not an access of its own: the reads under it, or the readlinkat, log theirs */
			if (fd >= 0 && fd < MAXFD) {
				fdkind[fd] = F_PARENT;
				parent_path[fd] = strdup(fp);
			}
		} else if (flags & O_PATH) {
			put('s', fd < 0, fp, NULL);
		} else if (flags & O_DIRECTORY) {
			put('d', fd < 0, fp, NULL);
		} else if (!(flags & (O_WRONLY | O_RDWR))) {
			put('r', fd < 0, fp, NULL);
		}
	}
	free(full);
	pthread_mutex_unlock(&lock);
}

long syscall(long nr, ...)
{
	va_list ap;
	long a[6];

	init();
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	long r = real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (nr == SYS_openat2) {
		int e = errno;
		const struct open_how *how = (const struct open_how *)a[2];
		opened((int)a[0], (const char *)a[1], how ? (int)how->flags : 0, (int)r);
		errno = e;
	}
	return r;
}

static int do_openat(int (*fn)(int, const char *, int, ...), int dirfd, const char *path, int flags, va_list ap)
{
	mode_t mode = (flags & (O_CREAT | __O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	int fd = fn(dirfd, path, flags, mode);
	int e = errno;
	opened(dirfd, path, flags, fd);
	errno = e;
	return fd;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	init();
	va_start(ap, flags);
	int fd = do_openat(real_openat, dirfd, path, flags, ap);
	va_end(ap);
	return fd;
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	init();
	va_start(ap, flags);
	int fd = do_openat(real_openat64, dirfd, path, flags, ap);
	va_end(ap);
	return fd;
}

ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t len)
{
	init();
	ssize_t n = real_readlinkat(dirfd, path, buf, len);
	int e = errno;
	if (logfd >= 0 && n >= 0 && path[0] != '/') {
		pthread_mutex_lock(&lock);
		if (is_root(dirfd))
			put('l', 0, path, NULL);
		else if (dirfd >= 0 && dirfd < MAXFD && fdkind[dirfd] == F_PARENT && parent_path[dirfd])
			put('l', 0, parent_path[dirfd], path);
		pthread_mutex_unlock(&lock);
	}
	errno = e;
	return n;
}

/* open64: numastor opens the root with it; a new fd forgets what its number was before */
int open64(const char *path, int flags, ...)
{
	va_list ap;
	init();
	va_start(ap, flags);
	mode_t mode = (flags & (O_CREAT | __O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	int fd = real_open64(path, flags, mode);
	int e = errno;
	opened(AT_FDCWD, NULL, flags, fd);
	errno = e;
	return fd;
}

int close(int fd)
{
	init();
	if (fd >= 0 && fd < MAXFD && logfd >= 0) {
		pthread_mutex_lock(&lock);
		fdkind[fd] = F_UNKNOWN;
		free(parent_path[fd]);
		parent_path[fd] = NULL;
		pthread_mutex_unlock(&lock);
	}
	return real_close(fd);
}
