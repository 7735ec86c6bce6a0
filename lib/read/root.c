/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/root.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/number.h"
#include "base/testhook.h"

/* ns_root_parallel's threads: started on first use, ended with the root. */
struct pool {
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	pthread_t *tids;
	unsigned nstarted; /* workers besides the calling thread */
	unsigned long gen; /* one per batch */
	unsigned busy;	   /* workers still in the current batch */
	bool quit;
	size_t n;
	atomic_size_t next;
	void (*fn)(size_t i, void *data);
	void *data;
};

struct ns_root {
	int dirfd;
	bool live;
	bool have_openat2;
	char *dir;
	char *label;
	ns_recorder recorder;
	void *recorder_data;
	unsigned needs;	   /* NS_NEED_* */
	unsigned threads;  /* ns_threads_pick */
	struct pool *pool; /* NULL until the first parallel batch */
	bool pool_failed;  /* no worker could be started: everything runs here */
	/* directories held open by ns_root_hold_dir: a read under one walks from it */
	struct held_dir {
		char *path; /* relative to the root, no trailing '/' */
		size_t len;
		int fd; /* O_PATH */
	} held[NS_HELD_DIRS_MAX];
	size_t nheld;
};

unsigned ns_threads_pick(const char *env, long online)
{
	long long v;
	long t;

	if (env)
		return ns_parse_dec(env, 1, NS_THREADS_MAX, &v) == 0 ? (unsigned)v : 1;
	t = online / 8;
	if (t > NS_THREADS_DEFAULT_MAX)
		t = NS_THREADS_DEFAULT_MAX;
	return t < 1 ? 1 : (unsigned)t;
}

unsigned ns_root_threads(const struct ns_root *root)
{
	return root->threads;
}

static void run_items(struct pool *p)
{
	size_t i;

	while ((i = atomic_fetch_add(&p->next, 1)) < p->n)
		p->fn(i, p->data);
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	unsigned long seen = 0;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->gen == seen && !p->quit)
			pthread_cond_wait(&p->go, &p->mu);
		if (p->quit)
			break;
		seen = p->gen;
		pthread_mutex_unlock(&p->mu);
		run_items(p);
		pthread_mutex_lock(&p->mu);
		if (--p->busy == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	ns_root_thread_release();
	return NULL;
}

static void pool_stop(struct pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->quit = true;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nstarted; i++)
		pthread_join(p->tids[i], NULL);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->mu);
	free(p->tids);
	free(p);
}

static struct pool *pool_start(unsigned workers)
{
	struct pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->tids = calloc(workers, sizeof(*p->tids));
	if (!p->tids || pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p->tids);
		free(p);
		return NULL;
	}
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	for (unsigned i = 0; i < workers; i++) {
		if (pthread_create(&p->tids[i], NULL, worker, p) != 0)
			break; /* fewer threads: the batch is shared by those there are */
		p->nstarted++;
	}
	if (!p->nstarted) {
		pool_stop(p);
		return NULL;
	}
	return p;
}

void ns_root_parallel(struct ns_root *root, size_t n, void (*fn)(size_t i, void *data), void *data)
{
	struct pool *p;

	if (root->threads > 1 && !root->recorder && !root->pool && !root->pool_failed && n > 1) {
		root->pool = pool_start(root->threads - 1);
		root->pool_failed = !root->pool;
	}
	p = root->pool;
	if (!p || root->recorder || n < 2) {
		for (size_t i = 0; i < n; i++)
			fn(i, data);
		return;
	}
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->data = data;
	p->n = n;
	atomic_store(&p->next, 0);
	p->busy = p->nstarted;
	p->gen++;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	run_items(p); /* the calling thread takes its share */
	pthread_mutex_lock(&p->mu);
	while (p->busy)
		pthread_cond_wait(&p->done, &p->mu); /* every worker is out of the batch: its slots are written */
	pthread_mutex_unlock(&p->mu);
}

void ns_root_set_needs(struct ns_root *root, unsigned needs)
{
	/* the test suite reads everything to see that the outputs do not tell (check-threads.py) */
	if (!ns_test_hook("NUMASTOR_TEST_READ_ALL"))
		root->needs = needs;
}

bool ns_root_needs(const struct ns_root *root, unsigned what)
{
	return (root->needs & what) == what;
}

void ns_root_set_recorder(struct ns_root *root, ns_recorder fn, void *data)
{
	root->recorder = fn;
	root->recorder_data = data;
}

void ns_root_set_label(struct ns_root *root, const char *label)
{
	char *l = strdup(label);
	if (l) {
		free(root->label);
		root->label = l;
	}
}

static void record(struct ns_root *root, struct ns_record rec)
{
	if (root->recorder)
		root->recorder(root->recorder_data, &rec);
}

/* Online CPUs; the test suite sets another count (NUMASTOR_TEST_ONLINE_CPUS) to see the rule
 * of ns_threads_pick applied on a machine of that size. */
static long online_cpus(void)
{
	const char *t = ns_test_hook("NUMASTOR_TEST_ONLINE_CPUS");
	long long v;

	if (t && ns_parse_dec(t, 0, 1 << 20, &v) == 0)
		return (long)v;
	return sysconf(_SC_NPROCESSORS_ONLN);
}

int ns_root_open(const char *dir, struct ns_root **out)
{
	struct ns_root *root;
	struct stat st;
	bool live = !dir || strcmp(dir, "/") == 0;
	const char *d = live ? "/" : dir;

	if (stat(d, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	root = calloc(1, sizeof(*root));
	if (!root)
		return -ENOMEM;
	root->dirfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root->dirfd < 0) {
		int err = -errno;
		free(root);
		return err;
	}
	root->live = live;
	root->needs = NS_NEED_FULL;
	root->threads = ns_threads_pick(getenv("NUMASTOR_THREADS"), online_cpus());
	root->have_openat2 = !live;
	root->dir = strdup(d);
	if (!root->dir) {
		ns_root_free(root);
		return -ENOMEM;
	}
	*out = root;
	return 0;
}

void ns_root_free(struct ns_root *root)
{
	if (!root)
		return;
	if (root->pool)
		pool_stop(root->pool);
	while (root->nheld)
		ns_root_drop_dir(root);
	if (root->dirfd >= 0)
		close(root->dirfd);
	free(root->dir);
	free(root->label);
	free(root);
}

bool ns_root_is_live(const struct ns_root *root)
{
	return root->live;
}
const char *ns_root_dir(const struct ns_root *root)
{
	return root->label ? root->label : root->dir;
}

const char *ns_root_path(const struct ns_root *root)
{
	return root->dir;
}

static const char *rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

/*
 * Under a held directory: the rest of the path walked from it. Only a success is trusted: in a
 * captured tree the walk may not leave the held directory (RESOLVE_BENEATH: a link that goes
 * up or to an absolute target fails with EXDEV), so a file found is the file the walk from the
 * root finds; on the live root the walk from the directory's fd is the kernel's own walk. Any
 * failure (a link that leaves it, a missing file, an old kernel without openat2) is -errno,
 * and the walk from the root then decides.
 */
static int held_openat(const struct ns_root *root, const char *p, int flags)
{
	for (size_t i = 0; i < root->nheld; i++) {
		const struct held_dir *h = &root->held[i];
		int fd;

		if (strncmp(p, h->path, h->len) != 0 || p[h->len] != '/' || !p[h->len + 1])
			continue;
		if (root->have_openat2) {
			struct open_how how = {
				.flags = (unsigned long long)(flags | O_CLOEXEC),
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
			};
			fd = (int)syscall(SYS_openat2, h->fd, p + h->len + 1, &how, sizeof(how));
		} else {
			fd = openat(h->fd, p + h->len + 1, flags | O_CLOEXEC);
		}
		return fd < 0 ? -errno : fd;
	}
	return -ENOENT;
}

/*
 * Open inside the root: a captured tree never lets a link escape it. openat2's scoped walk
 * (RESOLVE_IN_ROOT) fails with EAGAIN when a rename or a mount anywhere on the system races
 * with a ".." it follows (every sys/block/X link has one): the kernel cannot tell then that the
 * walk stayed inside, and asks the caller to retry. On a busy machine that is one walk in a few
 * thousand (issue 36: a path disk's `hidden` unread, the disk drawn as a device of its own), so
 * it is retried, as an interrupted open (EINTR) is; what still fails after NS_OPEN_TRIES is the
 * caller's error to note, never "absent".
 */
#define NS_OPEN_TRIES 64

static int root_openat(struct ns_root *root, const char *path, int flags)
{
	int fd;

	if (root->nheld && (fd = held_openat(root, rel(path), flags)) >= 0)
		return fd;
	for (int tries = 1;; tries++) {
		if (root->have_openat2) {
			struct open_how how = {
				.flags = (unsigned long long)(flags | O_CLOEXEC),
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
			};
			fd = (int)syscall(SYS_openat2, root->dirfd, rel(path), &how, sizeof(how));
			if (fd < 0 && errno == ENOSYS) {
				root->have_openat2 = false;
				continue;
			}
		} else {
			fd = openat(root->dirfd, rel(path), flags | O_CLOEXEC);
		}
		if (fd >= 0)
			return fd;
		if ((errno != EAGAIN && errno != EINTR) || tries >= NS_OPEN_TRIES)
			return -errno;
	}
}

static int read_text(struct ns_root *root, const char *path, size_t max, char **out, mode_t *mode, bool nul_is_error);

int ns_root_hold_dir(struct ns_root *root, const char *path)
{
	const char *p = rel(path);
	struct held_dir *h;
	size_t len = strlen(p);
	int fd;

	if (root->nheld == NS_HELD_DIRS_MAX)
		return -EBUSY;
	while (len > 1 && p[len - 1] == '/')
		len--;
	h = &root->held[root->nheld];
	h->path = strndup(p, len);
	if (!h->path)
		return -ENOMEM;
	fd = root_openat(root, h->path, O_RDONLY | O_DIRECTORY | O_PATH);
	if (fd < 0) {
		free(h->path);
		h->path = NULL;
		return fd;
	}
	h->len = len;
	h->fd = fd;
	root->nheld++;
	return 0;
}

void ns_root_drop_dir(struct ns_root *root)
{
	struct held_dir *h;

	if (!root->nheld)
		return;
	h = &root->held[--root->nheld];
	close(h->fd);
	free(h->path);
	h->path = NULL;
}

int ns_read_str(struct ns_root *root, const char *path, char **out)
{
	return read_text(root, path, NS_READ_MAX, out, NULL, false);
}

int ns_read_str_mode(struct ns_root *root, const char *path, char **out, mode_t *mode)
{
	return read_text(root, path, NS_READ_MAX, out, mode, false);
}

int ns_read_text(struct ns_root *root, const char *path, char **out)
{
	return read_text(root, path, NS_READ_MAX, out, NULL, true);
}

int ns_read_text_max(struct ns_root *root, const char *path, size_t max, char **out)
{
	return read_text(root, path, max < NS_READ_MAX ? NS_READ_MAX : max, out, NULL, true);
}

/*
 * Each thread reads into one growable buffer of its own (a page to start, grown up to
 * NS_READ_MAX + 1), and hands out an exact-size copy: no page-size allocation per file.
 */
static _Thread_local char *tbuf;
static _Thread_local size_t tcap;

void ns_root_thread_release(void)
{
	free(tbuf);
	tbuf = NULL;
	tcap = 0;
}

/* Room for at least need bytes; -EFBIG beyond max (the NUL included), -ENOMEM. */
static int tbuf_reserve(size_t need, size_t max)
{
	size_t cap = tcap ? tcap : 4096; /* a sysfs attribute is at most a page */
	char *nb;

	if (need <= tcap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > max)
		cap = max;
	if (need > cap)
		return -EFBIG;
	nb = realloc(tbuf, cap);
	if (!nb)
		return -ENOMEM;
	tbuf = nb;
	tcap = cap;
	return 0;
}

/* A kernel file of the live root: procfs or sysfs, never a FIFO or a link planted by anyone
 * but the kernel. */
static bool kernel_file(const struct ns_root *root, const char *p)
{
	return root->live && (strncmp(p, "proc/", 5) == 0 || strncmp(p, "sys/", 4) == 0);
}

/* Not a regular file: what the reader answers (a FIFO or a device planted in a captured tree). */
static int not_regular(int fd, struct stat *st)
{
	if (fstat(fd, st) < 0)
		return -errno;
	if (S_ISREG(st->st_mode))
		return 0;
	return S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
}

/*
 * Into tbuf, len bytes. A live procfs or sysfs file is read with one open and reads until a
 * short one (the kernel's show() or seq_file fills what it is asked for, so a short read is
 * the end; /proc files report size 0 and are not read twice), without an fstat unless the
 * mode is wanted (ns_read_str_mode, or a recorder). Everything else (a captured tree, /etc,
 * /run) is opened non-blocking (a FIFO planted in a capture must not hang the reader) and
 * must be a regular file. Its fstat is paid only when the first read does not settle the
 * question: a first read that comes back short of the buffer with a whole line (a captured
 * attribute, or any text file under a page) is the file, as for the live kernel's files; an
 * empty read, a failed one, a full buffer or a last byte that is not a newline get the fstat,
 * which refuses what is not a regular file (-EISDIR, -EINVAL) as before, and whose size then
 * ends the reading.
 */
static int read_raw(struct ns_root *root, const char *p, size_t max, size_t *lenp, mode_t *modep)
{
	bool fast = kernel_file(root, p);
	bool want_mode = modep || root->recorder;
	bool statted = fast || want_mode; /* the kernel's files need none; a mode is read first */
	struct stat st = {0};
	size_t len = 0;
	int r;
	/* O_NONBLOCK: a FIFO planted in a captured tree must not hang the reader */
	int fd = root_openat(root, p, fast ? O_RDONLY : O_RDONLY | O_NONBLOCK);

	if (fd < 0)
		return fd;
	if (want_mode && (r = not_regular(fd, &st)) < 0) {
		close(fd);
		return r;
	}
	for (;;) {
		size_t want;
		ssize_t n;
		if (len + 1 >= tcap && (r = tbuf_reserve(len + 2, max)) < 0) {
			close(fd);
			return r;
		}
		want = tcap - len - 1;
		n = read(fd, tbuf + len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (!statted) {
			int err = n < 0 ? -errno : 0;
			if (n > 0 && (size_t)n < want && tbuf[len + (size_t)n - 1] == '\n') {
				len += (size_t)n; /* a whole text in one short read: the end */
				break;
			}
			statted = true;
			if ((r = not_regular(fd, &st)) < 0 || (r = err) < 0) {
				close(fd);
				return r;
			}
		}
		if (n < 0) {
			int err = -errno;
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (fast) {
			if ((size_t)n < want)
				break; /* short: the kernel gave all it had */
			continue;
		}
		/* done without a read for EOF: a file that reports its size (a captured tree) was
		 * read whole; a sysfs attribute (4096, shown in one go) answered short of a page */
		if ((st.st_size > 0 && len == (size_t)st.st_size && st.st_size != 4096) ||
		    (st.st_size == 4096 && len < 4096 && strncmp(p, "sys/", 4) == 0))
			break;
	}
	close(fd);
	*lenp = len;
	if (modep)
		*modep = st.st_mode;
	record(root, (struct ns_record){.op = NS_REC_FILE, .path = p, .data = tbuf, .len = len, .mode = st.st_mode});
	return 0;
}

static int read_text(struct ns_root *root, const char *path, size_t max, char **out, mode_t *mode, bool nul_is_error)
{
	size_t len = 0;
	char *buf;
	int r = read_raw(root, rel(path), max, &len, mode);

	if (r < 0)
		goto out;
	r = -EBADMSG; /* a file numastor wrote never holds one: zero-filled blocks after a crash,
			 or not ours */
	if (nul_is_error && memchr(tbuf, '\0', len))
		goto out;
	while (len > 0 &&
	       (tbuf[len - 1] == '\n' || tbuf[len - 1] == ' ' || tbuf[len - 1] == '\t' || tbuf[len - 1] == '\0'))
		len--;
	r = -ENODATA;
	if (len == 0)
		goto out;
	r = -ENOMEM;
	buf = malloc(len + 1); /* callers keep these strings: exactly their size */
	if (!buf)
		goto out;
	memcpy(buf, tbuf, len);
	buf[len] = '\0';
	if (memchr(buf, '\0', len)) {
		/* binary content where text is expected (cmdline callers read raw) */
		for (size_t i = 0; i < len; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
	}
	*out = buf;
	r = 0;
out:
	if (tcap > NS_READ_MAX)
		ns_root_thread_release(); /* a journal's size is not every file's: the buffer goes */
	return r;
}

int ns_read_bytes(struct ns_root *root, const char *path, char **out, size_t *len)
{
	size_t n = 0;
	int r = read_raw(root, rel(path), NS_READ_MAX, &n, NULL);

	*out = NULL;
	*len = 0;
	if (r < 0)
		return r;
	*out = malloc(n + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, tbuf, n);
	(*out)[n] = '\0';
	*len = n;
	return 0;
}

int ns_read_dec(struct ns_root *root, const char *path, long long min, long long max, long long *out, char **raw)
{
	char *s;
	int r = ns_read_str(root, path, &s);

	if (raw)
		*raw = NULL;
	if (r < 0)
		return r;
	r = ns_parse_dec(s, min, max, out);
	if (r < 0 && raw)
		*raw = s;
	else
		free(s);
	return r;
}

int ns_read_long(struct ns_root *root, const char *path, long *out, char **raw)
{
	long long v;
	int r = ns_read_dec(root, path, LONG_MIN, LONG_MAX, &v, raw);

	if (r == 0)
		*out = (long)v;
	return r;
}

static int readlink_at(struct ns_root *root, const char *path, char **out)
{
	char buf[PATH_MAX];
	const char *p = rel(path);
	const char *slash = strrchr(p, '/');
	ssize_t n;

	if (root->have_openat2 && slash) {
		/* resolve the parent inside the root, then read the link itself */
		char *parent = strndup(p, (size_t)(slash - p));
		int dfd;
		if (!parent)
			return -ENOMEM;
		dfd = root_openat(root, parent, O_RDONLY | O_DIRECTORY | O_PATH);
		free(parent);
		if (dfd < 0)
			return dfd;
		n = readlinkat(dfd, slash + 1, buf, sizeof(buf) - 1);
		if (n < 0) {
			int err = -errno;
			close(dfd);
			return err;
		}
		close(dfd);
	} else {
		n = readlinkat(root->dirfd, p, buf, sizeof(buf) - 1);
		if (n < 0)
			return -errno;
	}
	buf[n] = '\0';
	record(root, (struct ns_record){.op = NS_REC_LINK, .path = rel(path), .data = buf, .len = (size_t)n});
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

int ns_readlink(struct ns_root *root, const char *path, char **out)
{
	return readlink_at(root, path, out);
}

int ns_readlink_base(struct ns_root *root, const char *path, char **out)
{
	char *t, *b;
	int r = readlink_at(root, path, &t);

	if (r < 0)
		return r;
	b = strrchr(t, '/');
	*out = strdup(b ? b + 1 : t);
	free(t);
	return *out ? 0 : -ENOMEM;
}

static int cmp_names(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

int ns_list_dir(struct ns_root *root, const char *path, char ***names, size_t *n)
{
	int fd = root_openat(root, path, O_RDONLY | O_DIRECTORY);
	DIR *d;
	struct dirent *de;
	char **v = NULL;
	unsigned char *types = NULL;
	size_t cnt = 0, cap = 0;

	*names = NULL;
	*n = 0;
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	if (!d) {
		int err = -errno;
		close(fd);
		return err;
	}
	for (int eintr = 0;;) {
		errno = 0;
		if (!(de = readdir(d))) {
			/* NULL is the end only when errno is untouched: a failed getdents64 is an
			 * error, never a shorter listing (an interrupted one is asked again) */
			if (errno == EINTR && ++eintr < NS_OPEN_TRIES)
				continue;
			if (errno) {
				int err = -errno;
				closedir(d);
				ns_strv_free(v, cnt);
				free(types);
				return err;
			}
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nv = realloc(v, nc * sizeof(*v));
			unsigned char *nt;
			if (!nv)
				goto oom;
			v = nv;
			nt = root->recorder ? realloc(types, nc) : NULL;
			if (root->recorder && !nt)
				goto oom;
			types = nt;
			cap = nc;
		}
		if (types)
			types[cnt] = de->d_type;
		v[cnt] = strdup(de->d_name);
		if (!v[cnt])
			goto oom;
		cnt++;
	}
	closedir(d);
	/* the recorder sees the entries in directory order, with their types */
	record(root,
	       (struct ns_record){.op = NS_REC_DIR, .path = rel(path), .names = v, .types = types, .nnames = cnt});
	free(types);
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_names);
	*names = v;
	*n = cnt;
	return 0;
oom:
	closedir(d);
	ns_strv_free(v, cnt);
	free(types);
	return -ENOMEM;
}

void ns_strv_free(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int ns_stat(struct ns_root *root, const char *path, struct stat *st)
{
	int fd = root_openat(root, path, O_PATH);
	int r = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, st) < 0)
		r = -errno;
	close(fd);
	if (r == 0)
		record(root, (struct ns_record){.op = NS_REC_STAT, .path = rel(path), .mode = st->st_mode});
	return r;
}

int ns_probe(struct ns_root *root, const char *path)
{
	struct stat st;
	int r = ns_stat(root, path, &st);

	if (r == 0)
		return 1;
	return r == -ENOENT || r == -ENOTDIR ? 0 : r;
}

/* Append component c (length n) to the resolved path res. */
static int push_comp(char *res, size_t *len, const char *c, size_t n)
{
	if (*len + 1 + n + 1 > PATH_MAX)
		return -ENAMETOOLONG;
	if (*len)
		res[(*len)++] = '/';
	memcpy(res + *len, c, n);
	*len += n;
	res[*len] = '\0';
	return 0;
}

static void pop_comp(char *res, size_t *len)
{
	char *s = strrchr(res, '/');
	*len = s ? (size_t)(s - res) : 0;
	res[*len] = '\0';
}

int ns_realpath(struct ns_root *root, const char *path, char **out)
{
	char res[PATH_MAX] = "";
	char todo[PATH_MAX * 2];
	size_t len = 0;
	int links = 0;

	if (strlen(path) >= sizeof(todo))
		return -ENAMETOOLONG;
	strcpy(todo, rel(path));
	while (todo[0]) {
		char *c = todo, *slash = strchr(todo, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);
		char comp[NAME_MAX + 1];
		char link[PATH_MAX];
		ssize_t ln;
		int r;

		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(comp, c, n);
		comp[n] = '\0';
		memmove(todo, slash ? slash + 1 : c + n, strlen(slash ? slash + 1 : c + n) + 1);
		if (n == 0 || strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			pop_comp(res, &len);
			continue;
		}
		r = push_comp(res, &len, comp, n);
		if (r < 0)
			return r;
		ln = readlinkat(root->dirfd, res, link, sizeof(link) - 1);
		if (ln < 0) {
			if (errno == EINVAL)
				continue; /* not a link */
			return -errno;
		}
		link[ln] = '\0';
		record(root, (struct ns_record){.op = NS_REC_LINK, .path = res, .data = link, .len = (size_t)ln});
		if (++links > 40)
			return -ELOOP;
		pop_comp(res, &len);
		if (link[0] == '/')
			len = 0, res[0] = '\0';
		if (strlen(link) + 1 + strlen(todo) + 1 > sizeof(todo))
			return -ENAMETOOLONG;
		/* the link target goes in front of what is left */
		{
			char tmp[PATH_MAX * 2];
			snprintf(tmp, sizeof(tmp), "%s%s%s", link, todo[0] ? "/" : "", todo);
			strcpy(todo, tmp);
		}
	}
	*out = strdup(res[0] ? res : ".");
	return *out ? 0 : -ENOMEM;
}

int ns_write_str(struct ns_root *root, const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t w;
	int fd = root_openat(root, path, root->live ? O_WRONLY : O_WRONLY | O_TRUNC);

	if (fd < 0)
		return fd;
	w = write(fd, text, len);
	if (w < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	/* sysfs reports some errors only at close */
	if (close(fd) < 0)
		return -errno;
	return (size_t)w == len ? 0 : -EIO;
}

int ns_mkdir_p(struct ns_root *root, const char *dir)
{
	char p[PATH_MAX];
	size_t len = strlen(rel(dir));

	if (len >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, rel(dir), len + 1);
	for (char *s = p;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdirat(root->dirfd, p, 0755) < 0 && errno != EEXIST)
				return -errno;
			*s = c;
			if (!c)
				break;
		}
	}
	return 0;
}

int ns_write_atomic(struct ns_root *root, const char *path, const char *text, mode_t mode)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	const char *p = rel(path), *slash = strrchr(p, '/');
	size_t len = strlen(text);
	int fd, dfd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", p, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = openat(root->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) < 0)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && renameat(root->dirfd, tmp, root->dirfd, p) < 0)
		r = -errno;
	if (r) {
		unlinkat(root->dirfd, tmp, 0);
		return r;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - p) : 1, slash ? p : ".");
	dfd = openat(root->dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

int ns_unlink(struct ns_root *root, const char *path)
{
	return unlinkat(root->dirfd, rel(path), 0) < 0 ? -errno : 0;
}

int ns_symlink(struct ns_root *root, const char *target, const char *path)
{
	return symlinkat(target, root->dirfd, rel(path)) < 0 ? -errno : 0;
}

int ns_rmdir(struct ns_root *root, const char *path)
{
	return unlinkat(root->dirfd, rel(path), AT_REMOVEDIR) < 0 ? -errno : 0;
}

int ns_open_read(struct ns_root *root, const char *path)
{
	return root_openat(root, path, O_RDONLY | O_NOFOLLOW);
}

int ns_open_rw(struct ns_root *root, const char *path, mode_t mode)
{
	int fd = openat(root->dirfd, rel(path), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode);
	return fd < 0 ? -errno : fd;
}
