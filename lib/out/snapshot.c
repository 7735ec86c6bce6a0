/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "out/snapshot.h"
#include "out/json.h"
#include "base/sha256.h"

#include "base/escape.h"
#include "base/testhook.h"
#include "base/util.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * libarchive, loaded on first use (dlopen): only snapshot and check --snapshot need it, and
 * linking it would load its whole chain (libxml2, ICU, libstdc++, ...) at every start of every
 * command. The header still gives the prototypes; every archive_* call below goes through
 * these pointers (the names are macros for them), filled once by ns_snapshot_archive_load().
 */
#define NS_LIBARCHIVE_SONAME "libarchive.so.13"
#define NS_LIBARCHIVE_PACKAGE "libarchive13"

// clang-format off
#define LA_FUNCS(X) \
	X(archive_entry_clear) \
	X(archive_entry_filetype) \
	X(archive_entry_free) \
	X(archive_entry_hardlink) \
	X(archive_entry_new) \
	X(archive_entry_pathname) \
	X(archive_entry_perm) \
	X(archive_entry_set_filetype) \
	X(archive_entry_set_gid) \
	X(archive_entry_set_pathname) \
	X(archive_entry_set_perm) \
	X(archive_entry_set_size) \
	X(archive_entry_set_symlink) \
	X(archive_entry_set_uid) \
	X(archive_entry_size) \
	X(archive_entry_sparse_count) \
	X(archive_entry_symlink) \
	X(archive_errno) \
	X(archive_error_string) \
	X(archive_read_close) \
	X(archive_read_data_block) \
	X(archive_read_free) \
	X(archive_read_new) \
	X(archive_read_next_header) \
	X(archive_read_open_fd) \
	X(archive_read_support_filter_gzip) \
	X(archive_read_support_filter_xz) \
	X(archive_read_support_filter_zstd) \
	X(archive_read_support_format_tar) \
	X(archive_write_add_filter_gzip) \
	X(archive_write_close) \
	X(archive_write_data) \
	X(archive_write_data_block) \
	X(archive_write_disk_new) \
	X(archive_write_disk_set_options) \
	X(archive_write_finish_entry) \
	X(archive_write_free) \
	X(archive_write_header) \
	X(archive_write_new) \
	X(archive_write_open_fd) \
	X(archive_write_set_format_pax_restricted)
// clang-format on
#define LA_MEMBER(f) __typeof__(f) *f;
#define LA_NAME(f) #f,
static struct {
	LA_FUNCS(LA_MEMBER)
} la;
static const char *const la_names[] = {LA_FUNCS(LA_NAME)};
static pthread_once_t la_once = PTHREAD_ONCE_INIT;
static int la_err;	 /* 0 loaded, else -ENOPKG */
static char la_why[256]; /* what dlopen / dlsym said */

static void la_load_once(void)
{
	/* a test build may name another file, to show what a machine without it is told */
	const char *soname = ns_test_hook("NUMASTOR_TEST_LIBARCHIVE");
	void *h = dlopen(soname ? soname : NS_LIBARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);
	void **slot = (void **)&la;

	if (!h) {
		snprintf(la_why, sizeof(la_why), "%s", dlerror());
		la_err = -ENOPKG;
		return;
	}
	for (size_t i = 0; i < sizeof(la_names) / sizeof(la_names[0]); i++) {
		slot[i] = dlsym(h, la_names[i]);
		if (!slot[i]) {
			snprintf(la_why, sizeof(la_why), "%s has no %s", soname ? soname : NS_LIBARCHIVE_SONAME,
				 la_names[i]);
			memset(&la, 0, sizeof(la));
			dlclose(h);
			la_err = -ENOPKG;
			return;
		}
	}
}

int ns_snapshot_archive_load(char **why)
{
	pthread_once(&la_once, la_load_once);
	if (la_err && why && !*why)
		*why = ns_fmt("snapshots need " NS_LIBARCHIVE_SONAME " (the package " NS_LIBARCHIVE_PACKAGE
			      "), which cannot be loaded: %s",
			      la_why);
	return la_err;
}

#define archive_entry_clear (la.archive_entry_clear)
#define archive_entry_filetype (la.archive_entry_filetype)
#define archive_entry_free (la.archive_entry_free)
#define archive_entry_hardlink (la.archive_entry_hardlink)
#define archive_entry_new (la.archive_entry_new)
#define archive_entry_pathname (la.archive_entry_pathname)
#define archive_entry_perm (la.archive_entry_perm)
#define archive_entry_set_filetype (la.archive_entry_set_filetype)
#define archive_entry_set_gid (la.archive_entry_set_gid)
#define archive_entry_set_pathname (la.archive_entry_set_pathname)
#define archive_entry_set_perm (la.archive_entry_set_perm)
#define archive_entry_set_size (la.archive_entry_set_size)
#define archive_entry_set_symlink (la.archive_entry_set_symlink)
#define archive_entry_set_uid (la.archive_entry_set_uid)
#define archive_entry_size (la.archive_entry_size)
#define archive_entry_sparse_count (la.archive_entry_sparse_count)
#define archive_entry_symlink (la.archive_entry_symlink)
#define archive_errno (la.archive_errno)
#define archive_error_string (la.archive_error_string)
#define archive_read_close (la.archive_read_close)
#define archive_read_data_block (la.archive_read_data_block)
#define archive_read_free (la.archive_read_free)
#define archive_read_new (la.archive_read_new)
#define archive_read_next_header (la.archive_read_next_header)
#define archive_read_open_fd (la.archive_read_open_fd)
#define archive_read_support_filter_gzip (la.archive_read_support_filter_gzip)
#define archive_read_support_filter_xz (la.archive_read_support_filter_xz)
#define archive_read_support_filter_zstd (la.archive_read_support_filter_zstd)
#define archive_read_support_format_tar (la.archive_read_support_format_tar)
#define archive_write_add_filter_gzip (la.archive_write_add_filter_gzip)
#define archive_write_close (la.archive_write_close)
#define archive_write_data (la.archive_write_data)
#define archive_write_data_block (la.archive_write_data_block)
#define archive_write_disk_new (la.archive_write_disk_new)
#define archive_write_disk_set_options (la.archive_write_disk_set_options)
#define archive_write_finish_entry (la.archive_write_finish_entry)
#define archive_write_free (la.archive_write_free)
#define archive_write_header (la.archive_write_header)
#define archive_write_new (la.archive_write_new)
#define archive_write_open_fd (la.archive_write_open_fd)
#define archive_write_set_format_pax_restricted (la.archive_write_set_format_pax_restricted)

/* What an entry is, strongest first: a later, weaker record of the same path never wins. */
enum kind { K_FILE = 0, K_LINK, K_DIR, K_PLACEHOLDER };

struct entry {
	char *path;
	enum kind kind;
	char *data; /* FILE bytes, LINK target */
	size_t len;
	mode_t mode;
	size_t seq;
	bool added; /* ns_capture_add: what this capture says, over a read of the same path */
};

struct ns_capture {
	struct entry *v;
	size_t n, cap;
	int err; /* first failure while recording */
};

int ns_capture_new(struct ns_capture **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void ns_capture_free(struct ns_capture *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].path);
		free(c->v[i].data);
	}
	free(c->v);
	free(c);
}

size_t ns_capture_count(const struct ns_capture *c)
{
	return c->n;
}

static int push(struct ns_capture *c, const char *path, enum kind kind, const char *data, size_t len, mode_t mode)
{
	struct entry *e;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct entry *nv = realloc(c->v, cap * sizeof(*nv));
		if (!nv)
			return c->err = -ENOMEM;
		c->v = nv;
		c->cap = cap;
	}
	e = &c->v[c->n];
	*e = (struct entry){.kind = kind, .len = len, .mode = mode, .seq = c->n};
	e->path = strdup(path);
	if (data) {
		e->data = malloc(len + 1);
		if (e->data) {
			memcpy(e->data, data, len);
			e->data[len] = '\0';
		}
	}
	if (!e->path || (data && !e->data)) {
		free(e->path);
		free(e->data);
		return c->err = -ENOMEM;
	}
	c->n++;
	return 0;
}

static void on_record(void *data, const struct ns_record *rec)
{
	struct ns_capture *c = data;

	switch (rec->op) {
	case NS_REC_FILE:
		if (strcmp(rec->path, "etc/machine-id") == 0) {
			/* confidential (machine-id(5)), and bundles are sent: only numastor's id for the
			 * machine goes in, which is what the replay's documents say (lib/out/json.c) */
			char id[33], *text = strndup(rec->data, rec->len);
			if (text && ns_id128_app_specific(text, NS_APP_ID, id) == 0)
				push(c, NS_MACHINE_APP_ID_PATH, K_FILE, id, 32, 0444);
			free(text);
			break;
		}
		push(c, rec->path, K_FILE, rec->data, rec->len, rec->mode);
		break;
	case NS_REC_LINK:
		push(c, rec->path, K_LINK, rec->data, rec->len, 0777);
		break;
	case NS_REC_DIR:
		push(c, rec->path, K_DIR, NULL, 0, 0755);
		for (size_t i = 0; i < rec->nnames; i++) {
			char p[4096];
			bool dir = rec->types && rec->types[i] == DT_DIR;
			snprintf(p, sizeof(p), "%s/%s", rec->path, rec->names[i]);
			/* listed, never read: only its name and whether it is a directory matter */
			push(c, p, dir ? K_DIR : K_PLACEHOLDER, NULL, 0, dir ? 0755 : 0444);
		}
		break;
	case NS_REC_STAT:
		push(c, rec->path, S_ISDIR(rec->mode) ? K_DIR : K_PLACEHOLDER, NULL, 0, rec->mode);
		break;
	}
}

void ns_capture_attach(struct ns_capture *c, struct ns_root *root)
{
	ns_root_set_recorder(root, on_record, c);
}

void ns_capture_detach(struct ns_root *root)
{
	ns_root_set_recorder(root, NULL, NULL);
}

int ns_capture_add(struct ns_capture *c, const char *path, const char *data, size_t len, mode_t mode)
{
	int r = push(c, path, K_FILE, data, len, mode);

	/* a tree captured again (snapshot -R of an extracted bundle) has the older facts and
	 * check.json, read on the way: this capture's own are the ones written */
	if (r == 0)
		c->v[c->n - 1].added = true;
	return r;
}

/* Path order with '/' lowest, so a directory's entries follow it directly. */
static int path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned char x = *a == '/' ? 1 : (unsigned char)*a, y = *b == '/' ? 1 : (unsigned char)*b;
		if (x != y || !x)
			return x - y;
	}
}

static int entry_cmp(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	int r = path_cmp(a->path, b->path);
	if (r)
		return r;
	if (a->kind != b->kind)
		return (int)a->kind - (int)b->kind;
	if (a->added != b->added)
		return a->added ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

struct link {
	char *path; /* as recorded */
	const char *target;
};

static int link_cmp(const void *a, const void *b)
{
	return path_cmp(((const struct link *)a)->path, ((const struct link *)b)->path);
}

/* The link recorded at exactly path. */
static const struct link *find_link(const struct link *v, size_t n, const char *path)
{
	struct link key = {.path = (char *)path};
	return bsearch(&key, v, n, sizeof(*v), link_cmp);
}

/* dir/target, with "." and ".." worked out lexically (never above the root). */
static char *join_normalized(const char *dir, size_t dirlen, const char *target, const char *rest)
{
	char buf[8192], *out;
	size_t len = 0;
	const char *parts[3] = {NULL, target, rest};
	char dcopy[4096];

	if (dirlen >= sizeof(dcopy))
		return NULL;
	memcpy(dcopy, dir, dirlen);
	dcopy[dirlen] = '\0';
	parts[0] = target[0] == '/' ? "" : dcopy;
	buf[0] = '\0';
	for (int i = 0; i < 3; i++) {
		const char *s = parts[i];
		while (s && *s) {
			size_t n = strcspn(s, "/");
			if (n == 2 && s[0] == '.' && s[1] == '.') {
				char *slash = strrchr(buf, '/');
				len = slash ? (size_t)(slash - buf) : 0;
				buf[len] = '\0';
			} else if (n && !(n == 1 && s[0] == '.')) {
				if (len + n + 2 >= sizeof(buf))
					return NULL;
				if (len)
					buf[len++] = '/';
				memcpy(buf + len, s, n);
				len += n;
				buf[len] = '\0';
			}
			s += n;
			if (*s == '/')
				s++;
		}
	}
	out = strdup(buf);
	return out;
}

/*
 * Paths read through a symlinked directory (sys/block/sda/queue/...) are stored where the
 * link leads (sys/devices/.../block/sda/queue/...): an archive must not put files behind a
 * link, and a replay resolves the link to find them there.
 */
static int canonicalize(struct ns_capture *c)
{
	/* the links as recorded: rewriting entries below must not disturb the lookup */
	struct link *links = NULL;
	size_t nlinks = 0;
	int r = 0;

	for (size_t i = 0; i < c->n; i++)
		nlinks += c->v[i].kind == K_LINK;
	links = calloc(nlinks ? nlinks : 1, sizeof(*links));
	if (!links)
		return -ENOMEM;
	nlinks = 0;
	for (size_t i = 0; i < c->n && r == 0; i++)
		if (c->v[i].kind == K_LINK) {
			links[nlinks].path = strdup(c->v[i].path);
			links[nlinks].target = c->v[i].data;
			if (!links[nlinks++].path)
				r = -ENOMEM;
		}
	qsort(links, nlinks, sizeof(*links), link_cmp);
	for (size_t i = 0; i < c->n && r == 0; i++) {
		char *p = c->v[i].path;
		int hops = 0;
		for (size_t k = 0; p[k] && hops < 40; k++) {
			const struct link *l;
			char *np, *slash;
			if (p[k] != '/')
				continue;
			p[k] = '\0';
			l = find_link(links, nlinks, p);
			p[k] = '/';
			if (!l)
				continue;
			slash = memrchr(p, '/', k);
			np = join_normalized(p, slash ? (size_t)(slash - p) : 0, l->target, p + k + 1);
			if (!np) {
				r = -ENOMEM;
				break;
			}
			if (p != c->v[i].path)
				free(p);
			p = np;
			k = (size_t)-1; /* start over: the target may hold links too */
			hops++;
		}
		if (hops >= 40 && r == 0)
			r = -ELOOP;
		if (p != c->v[i].path) {
			free(c->v[i].path);
			c->v[i].path = p;
		}
	}
	for (size_t i = 0; i < nlinks; i++)
		free(links[i].path);
	free(links);
	return r;
}

/* How entry i of the sorted capture is written, or -1 when it is not (a weaker record of a
 * path already written). */
static int written_kind(const struct ns_capture *c, size_t i)
{
	const struct entry *e = &c->v[i];
	enum kind kind = e->kind;

	if (i && strcmp(c->v[i - 1].path, e->path) == 0)
		return -1; /* the strongest record of this path is already written */
	/* a placeholder with entries below it is a directory */
	if (kind == K_PLACEHOLDER && i + 1 < c->n) {
		size_t n = strlen(e->path);
		for (size_t k = i + 1; k < c->n; k++) {
			if (strcmp(c->v[k].path, e->path) == 0)
				continue;
			if (strncmp(c->v[k].path, e->path, n) == 0 && c->v[k].path[n] == '/')
				kind = K_DIR;
			break;
		}
	}
	return (int)kind;
}

/* What the budgets have counted of a bundle so far. */
struct tally {
	unsigned long long entries, bytes, json_bytes; /* bytes: of the files the reader reads */
};

static int budget_entry(const char *file, const char *name, mode_t type, long long size, const char *target,
			struct tally *t, char **why);

/* The replay's budgets, on what would be written: a bundle check --snapshot would refuse is
 * not written at all. */
static int capture_budgets(const struct ns_capture *c, char **why)
{
	struct tally t = {0};

	for (size_t i = 0; i < c->n; i++) {
		const struct entry *e = &c->v[i];
		int kind = written_kind(c, i), r;
		if (kind < 0)
			continue;
		r = budget_entry("the capture", e->path,
				 kind == K_LINK	 ? AE_IFLNK
				 : kind == K_DIR ? AE_IFDIR
						 : AE_IFREG,
				 kind == K_FILE ? (long long)e->len : 0, kind == K_LINK ? e->data : NULL, &t, why);
		if (r)
			return -EFBIG;
	}
	return 0;
}

int ns_capture_write(struct ns_capture *c, int fd, char **why)
{
	struct archive *a;
	struct archive_entry *ae;
	int r = 0;

	*why = NULL;
	if (c->err)
		return c->err;
	qsort(c->v, c->n, sizeof(*c->v), entry_cmp);
	r = canonicalize(c);
	if (r < 0)
		return r;
	qsort(c->v, c->n, sizeof(*c->v), entry_cmp);
	r = capture_budgets(c, why);
	if (r < 0)
		return r;
	r = ns_snapshot_archive_load(why);
	if (r < 0)
		return r;
	a = archive_write_new();
	ae = archive_entry_new();
	if (!a || !ae || archive_write_add_filter_gzip(a) != ARCHIVE_OK || archive_write_set_format_pax_restricted(a) ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		r = -EIO;
		goto out;
	}
	for (size_t i = 0; i < c->n && r == 0; i++) {
		const struct entry *e = &c->v[i];
		int kind = written_kind(c, i);
		if (kind < 0)
			continue;
		archive_entry_clear(ae);
		archive_entry_set_pathname(ae, e->path);
		archive_entry_set_uid(ae, 0);
		archive_entry_set_gid(ae, 0);
		switch ((enum kind)kind) {
		case K_FILE:
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_perm(ae, e->mode & 07777);
			archive_entry_set_size(ae, (la_int64_t)e->len);
			break;
		case K_LINK:
			archive_entry_set_filetype(ae, AE_IFLNK);
			archive_entry_set_perm(ae, 0777);
			archive_entry_set_symlink(ae, e->data);
			break;
		case K_DIR:
			archive_entry_set_filetype(ae, AE_IFDIR);
			archive_entry_set_perm(ae, 0755);
			break;
		case K_PLACEHOLDER:
			/* listed or probed, never read: an empty file with the mode it had */
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_perm(ae, (e->mode & 07777) ? (e->mode & 07777) : 0444);
			archive_entry_set_size(ae, 0);
			break;
		}
		if (archive_write_header(a, ae) != ARCHIVE_OK)
			r = -EIO;
		else if (kind == K_FILE && e->len && archive_write_data(a, e->data, e->len) != (la_ssize_t)e->len)
			r = -EIO;
	}
	if (archive_write_close(a) != ARCHIVE_OK && !r)
		r = -EIO;
out:
	if (ae)
		archive_entry_free(ae);
	if (a)
		archive_write_free(a);
	return r;
}

/* ---- replay ---- */

static __attribute__((format(printf, 2, 3))) int refuse(char **why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	*why = ns_vfmt(fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* An entry's name as a message shows it: escaped for the terminal (lib/base/escape.h), at most 200
 * bytes of it (the terminal is not the bundle's to write to). */
static const char *shown(const char *name, char buf[static 1024])
{
	char *e = ns_escape(name, NS_ESCAPE_TEXT, 200);

	snprintf(buf, 1024, "%s", e ? e : "?");
	free(e);
	return buf;
}

/* A relative path with no "." or ".." component and nothing odd in it. */
static bool safe_path(const char *p)
{
	if (!*p || *p == '/')
		return false;
	for (const char *s = p; *s;) {
		size_t n = strcspn(s, "/");
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += n;
		if (*s == '/')
			s++;
	}
	return true;
}

/* Does a link at path with this target stay inside the bundle? (lexically, as a resolver
 * inside the root would walk it) */
static bool link_inside(const char *path, const char *target)
{
	int depth = 0;

	if (!*target || *target == '/')
		return false;
	for (const char *s = path; *s; s++)
		depth += *s == '/';
	for (const char *s = target; *s;) {
		size_t n = strcspn(s, "/");
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			if (--depth < 0)
				return false;
		} else if (n && !(n == 1 && s[0] == '.')) {
			depth++;
		}
		s += n;
		if (*s == '/')
			s++;
	}
	return true;
}

/* The id in a component "PREFIX<digits>" (node12, cpu7), or -1 when the component is not one;
 * ids past max are max (a bigger id need not be told apart). */
static long long component_id(const char *s, size_t n, const char *prefix, long long max)
{
	size_t k = strlen(prefix);
	long long id = 0;

	if (n <= k || strncmp(s, prefix, k) != 0)
		return -1;
	for (size_t i = k; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (id < max)
			id = id * 10 + (s[i] - '0');
	}
	return id < max ? id : max;
}

/*
 * One entry against the budgets (numastor-snapshot(8), BUDGETS): name is its path (without a
 * leading "./"), type AE_IFREG, AE_IFDIR or AE_IFLNK (others count as entries only), size
 * a file's, target a link's. Both ways: a capture is not written beyond them, and a replay
 * checks them on the headers alone, before anything of the bundle is written.
 */
static int budget_entry(const char *file, const char *name, mode_t type, long long size, const char *target,
			struct tally *t, char **why)
{
	unsigned long long max_file;
	size_t len = strlen(name), depth = 1;
	char show[1024];

	if (++t->entries > NS_SNAPSHOT_MAX_ENTRIES)
		return refuse(why, "%s has more than %u entries (files, directories and links), the budget", file,
			      NS_SNAPSHOT_MAX_ENTRIES);
	if (len > NS_SNAPSHOT_MAX_PATH)
		return refuse(why, "%s: an entry's path is %zu bytes long, beyond the budget of %u ('%s')", file, len,
			      NS_SNAPSHOT_MAX_PATH, shown(name, show));
	for (const char *s = name; *s; s++)
		depth += *s == '/';
	if (depth > NS_SNAPSHOT_MAX_DEPTH)
		return refuse(why, "%s: entry '%s' is %zu levels deep, beyond the budget of %u", file,
			      shown(name, show), depth, NS_SNAPSHOT_MAX_DEPTH);
	for (const char *s = name; *s;) {
		size_t n = strcspn(s, "/");
		long long node = component_id(s, n, "node", NS_SNAPSHOT_MAX_NODE),
			  cpu = component_id(s, n, "cpu", NS_SNAPSHOT_MAX_CPU);
		if (node >= NS_SNAPSHOT_MAX_NODE)
			return refuse(why, "%s: entry '%s' names node %.*s: node ids are below %u, the budget", file,
				      shown(name, show), (int)(n - 4 > 24 ? 24 : n - 4), s + 4, NS_SNAPSHOT_MAX_NODE);
		if (cpu >= NS_SNAPSHOT_MAX_CPU)
			return refuse(why, "%s: entry '%s' names CPU %.*s: CPU ids are below %u, the budget", file,
				      shown(name, show), (int)(n - 3 > 24 ? 24 : n - 3), s + 3, NS_SNAPSHOT_MAX_CPU);
		s += n;
		if (*s == '/')
			s++;
	}
	if (type == AE_IFLNK && target && strlen(target) > NS_SNAPSHOT_MAX_PATH)
		return refuse(why, "%s: link '%s' has a target of %zu bytes, beyond the budget of %u", file,
			      shown(name, show), strlen(target), NS_SNAPSHOT_MAX_PATH);
	if (type != AE_IFREG)
		return 0;
	/* by kind: the check's own JSON is as big as a report may be; everything else is a file
	 * the reader reads, which takes no more than its own limit */
	max_file = strcmp(name, ".numastor/check.json") == 0 ? NS_SNAPSHOT_MAX_JSON : NS_SNAPSHOT_MAX_FILE;
	if (size < 0 || (unsigned long long)size > max_file)
		return refuse(why, "%s: entry '%s' is %lld bytes, beyond the budget of %llu for %s", file,
			      shown(name, show), size, max_file,
			      max_file == NS_SNAPSHOT_MAX_FILE ? "a file the reader reads" : "the check's JSON");
	if (max_file == NS_SNAPSHOT_MAX_JSON) { /* its own budget, every record of it together */
		t->json_bytes += (unsigned long long)size;
		if (t->json_bytes > NS_SNAPSHOT_MAX_JSON)
			return refuse(why, "%s holds more than %u MiB of the check's JSON, the budget", file,
				      NS_SNAPSHOT_MAX_JSON >> 20);
		return 0;
	}
	t->bytes += (unsigned long long)size;
	if (t->bytes > NS_SNAPSHOT_MAX_TOTAL)
		return refuse(why, "%s holds more than %u MiB of files the reader reads, the budget", file,
			      NS_SNAPSHOT_MAX_TOTAL >> 20);
	return 0;
}

/* One entry of a bundle read for replay: the budgets, then the safety rules. */
static int check_entry(const char *file, struct archive_entry *ae, const char *name, struct tally *t, char **why)
{
	mode_t type = archive_entry_filetype(ae);
	const char *target = type == AE_IFLNK ? archive_entry_symlink(ae) : NULL;
	char show[1024], show2[1024];
	int r = budget_entry(file, name, type, (long long)archive_entry_size(ae), target, t, why);

	if (r)
		return r;
	if (!safe_path(name))
		return refuse(why, "%s: entry '%s' is not a plain relative path inside the bundle", file,
			      shown(name, show));
	if (archive_entry_hardlink(ae))
		return refuse(why, "%s: entry '%s' is a hard link", file, shown(name, show));
	if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
		return refuse(why, "%s: entry '%s' is neither a file, a directory nor a symlink", file,
			      shown(name, show));
	if (type == AE_IFLNK && (!target || !link_inside(name, target)))
		return refuse(why, "%s: link '%s' points outside the bundle ('%s')", file, shown(name, show),
			      shown(target ? target : "", show2));
	if (archive_entry_sparse_count(ae) > 0)
		return refuse(why, "%s: entry '%s' is a sparse file", file, shown(name, show));
	/* a device, FIFO or hard link has no data of its own; any other entry's size is what the
	 * budgets counted */
	if (type != AE_IFREG && archive_entry_size(ae) > 0)
		return refuse(why, "%s: entry '%s' claims %lld bytes of data", file, shown(name, show),
			      (long long)archive_entry_size(ae));
	return 0;
}

/*
 * The async-signal-safe part of removing an extraction directory: dirfd's entries, each
 * directory made 0700 first (its owner may always do that; a 0500 or 0000 directory would
 * otherwise keep what it holds), links removed, never followed. No allocation, no stdio:
 * ns_snapshot_remove runs from a signal handler too.
 */
static int clear_dir(int dirfd, unsigned level)
{
	char buf[1024] __attribute__((aligned(8)));
	int err = 0;
	bool again = true;

	if (level > NS_SNAPSHOT_MAX_DEPTH + 8)
		return -ELOOP;
	/* entries removed while reading may shift the directory's offsets: read it again until
	 * a whole pass finds nothing to remove */
	while (again) {
		long n;
		again = false;
		if (lseek(dirfd, 0, SEEK_SET) < 0)
			return -errno;
		while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				struct linux_dirent64 {
					uint64_t d_ino;
					int64_t d_off;
					unsigned short d_reclen;
					unsigned char d_type;
					char d_name[];
				} *d = (void *)(buf + off);
				const char *nm = d->d_name;
				bool isdir = d->d_type == DT_DIR;
				off += d->d_reclen;
				if (nm[0] == '.' && (!nm[1] || (nm[1] == '.' && !nm[2])))
					continue;
				if (d->d_type == DT_UNKNOWN) {
					struct stat st;
					isdir = fstatat(dirfd, nm, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
						S_ISDIR(st.st_mode);
				}
				if (isdir) {
					int fd;
					/* best effort (a directory without search permission): the open below
					 * says whether it mattered */
					if (fchmodat(dirfd, nm, 0700, 0) < 0)
						errno = 0;
					fd = openat(dirfd, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
					if (fd < 0) {
						err = err ? err : -errno;
						continue;
					}
					{
						int e = clear_dir(fd, level + 1);
						err = err ? err : e;
					}
					close(fd);
				}
				if (unlinkat(dirfd, nm, isdir ? AT_REMOVEDIR : 0) < 0)
					err = err ? err : -errno;
				else
					again = true;
			}
		}
		if (n < 0)
			return -errno;
	}
	return err;
}

int ns_snapshot_remove(const char *dir)
{
	int saved = errno, fd, r;

	/* the top too: the bundle cannot name it, but its mode is not this function's to trust */
	chmod(dir, 0700);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		errno = saved;
		return r;
	}
	r = clear_dir(fd, 0);
	close(fd);
	if (rmdir(dir) < 0 && !r)
		r = -errno;
	errno = saved;
	return r;
}

int ns_snapshot_mkdir(char **dir_out)
{
	const char *tmpdir = getenv("TMPDIR");
	char *dir = NULL, *real;
	int r;

	*dir_out = NULL;
	if (asprintf(&dir, "%s/numastor-snapshot.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp") < 0)
		return -ENOMEM;
	if (!mkdtemp(dir)) {
		r = -errno;
		free(dir);
		return r;
	}
	/* entry names are checked to be relative; the absolute path written is our own
	 * directory's (canonical, so the symlink check of every component holds) */
	real = realpath(dir, NULL);
	if (!real) {
		r = -errno;
		rmdir(dir);
		free(dir);
		return r;
	}
	free(dir);
	*dir_out = real;
	return 0;
}

#define NAME_BUF 4096 /* an entry's name as read, before the path budget (check_entry) judges it */

/* An entry's name without a leading "./" (and a directory's trailing '/'), copied: setting
 * the entry's path later frees the library's string. */
static int entry_name(const char *file, struct archive_entry *ae, char name[static NAME_BUF], char **why)
{
	const char *n = archive_entry_pathname(ae);
	size_t len;

	if (!n)
		return refuse(why, "%s: an entry has no usable path", file);
	if (strncmp(n, "./", 2) == 0)
		n += 2;
	len = strlen(n);
	if (len >= NAME_BUF) { /* far beyond the budget: not even copied */
		char show[1024];
		return refuse(why, "%s: an entry's path is %zu bytes long, beyond the budget of %u ('%s')", file, len,
			      NS_SNAPSHOT_MAX_PATH, shown(n, show));
	}
	memcpy(name, n, len + 1);
	if (len > 1 && name[len - 1] == '/' && archive_entry_filetype(ae) == AE_IFDIR)
		name[len - 1] = '\0';
	return 0;
}

/*
 * One pass over the bundle read from fd: every entry checked against the budgets; with out
 * set, also written under dir. The first pass writes nothing, so a bundle beyond a budget
 * costs its headers' reading and no more; the second checks everything again (the file may
 * have changed in between).
 */
static int extract_pass(int fd, const char *file, struct archive *out, const char *dir, char **why)
{
	struct archive *in = archive_read_new();
	struct archive_entry *ae;
	struct tally t = {0};
	const char *delay = ns_test_hook("NUMASTOR_TEST_EXTRACT_DELAY_MS");
	int r = 0;

	if (!in)
		return -ENOMEM;
	archive_read_support_filter_gzip(in);
	archive_read_support_filter_xz(in);
	archive_read_support_filter_zstd(in);
	archive_read_support_format_tar(in);
	if (archive_read_open_fd(in, fd, 65536) != ARCHIVE_OK) {
		r = refuse(why, "%s is not a numastor snapshot: %s", file, archive_error_string(in));
		archive_read_free(in);
		return r;
	}
	for (;;) {
		char full[NAME_BUF + 4096 + 8], name[NAME_BUF], show[1024];
		la_int64_t size, written = 0;
		mode_t type;
		int h = archive_read_next_header(in, &ae);

		if (h == ARCHIVE_EOF)
			break;
		if (h != ARCHIVE_OK) {
			r = refuse(why, "%s is malformed: %s", file, archive_error_string(in));
			break;
		}
		r = entry_name(file, ae, name, why);
		if (r == 0)
			r = check_entry(file, ae, name, &t, why);
		if (r)
			break;
		if (!out)
			continue; /* the data is skipped by the next header's read */
		type = archive_entry_filetype(ae);
		size = archive_entry_size(ae);
		if (snprintf(full, sizeof(full), "%s/%s", dir, name) >= (int)sizeof(full)) {
			r = refuse(why, "%s: entry '%s' is too long a path under %s", file, shown(name, show), dir);
			break;
		}
		/* a second record of a path (a directory's aside: its files may come first) */
		{
			struct stat st;
			if (lstat(full, &st) == 0 && !(type == AE_IFDIR && S_ISDIR(st.st_mode))) {
				r = refuse(why, "%s: entry '%s' appears twice in the bundle", file, shown(name, show));
				break;
			}
		}
		/* relative to dir, the working directory meanwhile (extract_into): libarchive's
		 * symlink check walks each entry's path from its first component, and from "/" that
		 * cost some 70 us an entry, whatever the entry */
		archive_entry_set_pathname(ae, name);
		archive_entry_set_uid(ae, getuid());
		archive_entry_set_gid(ae, getgid());
		/* permission bits only: no setuid, setgid or sticky file of a bundle's making,
		 * root-owned when root replays it (the reader needs none of them) */
		if (type != AE_IFLNK)
			archive_entry_set_perm(ae, archive_entry_perm(ae) & 0777);
		if (archive_write_header(out, ae) != ARCHIVE_OK) {
			r = refuse(why, "%s: entry '%s' could not be extracted: %s", file, shown(name, show),
				   archive_error_string(out) ? archive_error_string(out)
							     : strerror(archive_errno(out)));
			break;
		}
		if (type == AE_IFREG && size > 0) {
			const void *buf;
			size_t len;
			la_int64_t off;
			int d;
			while ((d = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK) {
				written += (la_int64_t)len;
				if (written > size) {
					d = ARCHIVE_FATAL;
					break;
				}
				if (archive_write_data_block(out, buf, len, off) != ARCHIVE_OK) {
					d = ARCHIVE_FAILED;
					break;
				}
			}
			if (d == ARCHIVE_FAILED) {
				/* the writing failed, not the bundle: say why from that side */
				r = refuse(why, "%s: entry '%s' could not be extracted: %s", file, shown(name, show),
					   archive_error_string(out) ? archive_error_string(out)
								     : strerror(archive_errno(out)));
				break;
			}
			if (d != ARCHIVE_EOF) {
				const char *e = archive_error_string(in);
				r = refuse(why, "%s: entry '%s' is truncated or unreadable%s%s", file,
					   shown(name, show), e ? ": " : "", e ? e : "");
				break;
			}
		}
		archive_write_finish_entry(out);
		if (delay)
			usleep((useconds_t)atoi(delay) * 1000);
	}
	if (!r && !t.entries)
		r = refuse(why, "%s is empty", file);
	archive_read_close(in);
	archive_read_free(in);
	return r;
}

static int extract_into(const char *file, const char *dir, char **why)
{
	struct archive *out;
	struct stat st;
	int r, fd, cwd;

	/* O_NONBLOCK: a FIFO given as the bundle must not hang the open (it is refused below) */
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		refuse(why, "cannot open %s: %s", file, strerror(-r));
		return r;
	}
	/* two passes over one open file: it must be one that can be read twice */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return refuse(why, "%s is not a regular file (a bundle is read twice: checked, then extracted)", file);
	}
	r = extract_pass(fd, file, NULL, dir, why);
	if (r) {
		close(fd);
		return r;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	out = archive_write_disk_new();
	if (!out) {
		close(fd);
		return -ENOMEM;
	}
	archive_write_disk_set_options(out, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
						    ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_NO_OVERWRITE);
	/* the entries are written relative to dir: the working directory is dir while they are,
	 * and what it was after (numastor reads nothing else meanwhile, and runs no thread yet) */
	cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0 || chdir(dir) < 0) {
		r = -errno;
		if (cwd >= 0)
			close(cwd);
		archive_write_free(out);
		close(fd);
		return r;
	}
	r = extract_pass(fd, file, out, dir, why);
	archive_write_close(out);
	archive_write_free(out);
	if (fchdir(cwd) < 0 && !r)
		r = -errno;
	close(cwd);
	close(fd);
	return r;
}

int ns_snapshot_extract_into(const char *file, const char *dir, char **why)
{
	int r;

	*why = NULL;
	r = ns_snapshot_archive_load(why);
	if (r == 0)
		r = extract_into(file, dir, why);
	/* every refusal says why, the system's own failures too */
	if (r < 0 && !*why)
		*why = ns_fmt("%s: %s", file, strerror(-r));
	return r;
}

int ns_snapshot_extract(const char *file, char **dir_out, char **why)
{
	char *dir;
	int r;

	*why = NULL;
	*dir_out = NULL;
	r = ns_snapshot_mkdir(&dir);
	if (r < 0)
		return r;
	r = ns_snapshot_extract_into(file, dir, why);
	if (r < 0) {
		ns_snapshot_remove(dir);
		free(dir);
		return r;
	}
	*dir_out = dir;
	return 0;
}
