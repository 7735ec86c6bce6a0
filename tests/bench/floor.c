/* floor: the least any tool can do to gather what numastor reads from a captured tree.
 *
 *   floor ROOT MANIFEST
 *
 * MANIFEST is the list gen-fixtures.py --manifest writes (the operations HACKING.md says
 * numastor performs, each once), one per line, path relative to ROOT:
 *   r PATH   open, read to EOF, close
 *   d PATH   open the directory, read every entry, close
 *   l PATH   readlink
 *   s PATH   stat
 * Everything goes through openat()/readlinkat()/fstatat() on one root directory fd, each path
 * walked from the root. (numastor's reader walks the files under a few directories it holds
 * open, a PCI function's proc/irq and sys/kernel/irq, a disk's mq/, from there instead:
 * ns_root_hold_dir. The floor keeps the walk from the root, so that its figure stays what it
 * was; check's shorter walks show as check below it.) No parsing, no model, no output beyond a summary on
 * stderr: this is the floor the benchmark compares numastor against.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char buf[65536];
/* FLOOR_SAFE=1: open the way numastor must open a captured tree (links resolved inside the
 * root with openat2 RESOLVE_IN_ROOT, and an fstat to refuse FIFOs), to show what that costs. */
static int safe;

static int open_in_root(int root, const char *path, int flags)
{
	if (safe) {
		struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC), .resolve = RESOLVE_IN_ROOT};
		return (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
	}
	return openat(root, path, flags | O_CLOEXEC);
}

static long read_file(int root, const char *path)
{
	int fd = open_in_root(root, path, O_RDONLY | (safe ? O_NONBLOCK : 0));
	struct stat st;
	if (fd < 0)
		return -1;
	if (safe && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		return -1;
	}
	long total = 0;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += n;
		if ((size_t)n < sizeof(buf))
			break; /* sysfs/procfs attributes come in one read: short read = EOF */
	}
	close(fd);
	return total;
}

static long list_dir(int root, const char *path)
{
	int fd = open_in_root(root, path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	long n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: floor ROOT MANIFEST\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	safe = getenv("FLOOR_SAFE") && strcmp(getenv("FLOOR_SAFE"), "1") == 0;

	int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		fprintf(stderr, "floor: %s: %s\n", argv[1], strerror(errno));
		return 3;
	}
	int mfd = open(argv[2], O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (mfd < 0 || fstat(mfd, &st) < 0) {
		fprintf(stderr, "floor: %s: %s\n", argv[2], strerror(errno));
		return 3;
	}
	/* private writable mapping: lines are NUL-terminated in place */
	char *m = st.st_size ? mmap(NULL, (size_t)st.st_size + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE, mfd, 0) : NULL;
	if (st.st_size && m == MAP_FAILED) {
		fprintf(stderr, "floor: mmap: %s\n", strerror(errno));
		return 3;
	}
	close(mfd);

	long ops = 0, failed = 0, bytes = 0;
	char *p = m, *end = m ? m + st.st_size : NULL;
	while (p && p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		*nl = '\0';
		if (nl - p > 2 && p[1] == ' ') {
			const char *path = p + 2;
			long r = 0;
			char lbuf[4096];
			switch (p[0]) {
			case 'r':
				r = read_file(root, path);
				if (r > 0)
					bytes += r;
				break;
			case 'd':
				r = list_dir(root, path);
				break;
			case 'l':
				r = readlinkat(root, path, lbuf, sizeof(lbuf));
				break;
			case 's':
				r = fstatat(root, path, &st, 0);
				break;
			default:
				r = 0;
				ops--;
			}
			ops++;
			if (r < 0)
				failed++;
		}
		p = nl + 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "floor: %ld operations (%ld failed), %ld bytes read, %.3f ms\n", ops, failed, bytes,
		(t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	return 0;
}
