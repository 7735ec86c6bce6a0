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

/*
 * The capture streams: a file the reader reads is written to the archive as it is read, from
 * the reader's own buffer, and nothing of it stays. What the capture keeps is bookkeeping, a
 * tree of the paths recorded (one node per path, and per directory above one: about 30 bytes
 * each, numastor-snapshot(8)), by which
 *  - a path is written once: a file read twice appears once, with the first read's bytes;
 *  - a path read through a link recorded before is stored where the link leads (an archive must
 *    not put files behind a link; a replay resolves sys/block/sda to find sys/devices/.../sda);
 *  - what a later record of the same path may still overrule is held back and written at the
 *    end, in the order first recorded: links (a file read at the path wins), directories (a
 *    link wins: a stat or a listing follows a link) and the names a listing or a stat only saw
 *    (placeholders, which any other record overrules; one with paths below it is a directory).
 * The files read under .numastor/ and run/udev/data/ are held (copied) to the end as well:
 * what this capture adds there (facts, modinfo, identity) wins over a read of the same path,
 * which a tree captured again has from its older capture. They are a few hundred bytes each.
 */
enum kind { K_FILE = 0, K_LINK, K_DIR, K_PLACEHOLDER };
enum pend { P_NONE = 0, P_PLACE, P_DIR }; /* held back, weaker first */

struct node {
	uint32_t parent; /* 0: the root's own node */
	uint32_t name;	 /* the component: an offset in the pool */
	uint32_t next;	 /* the next node of its hash bucket, 0 at the end */
	uint32_t target; /* a link's target: an offset in the pool */
	uint16_t mode;	 /* a placeholder's permission bits */
	uint8_t pend;	 /* the strongest held-back record of the path (enum pend) */
	uint8_t written : 1, link : 1, kids : 1, probed : 1; /* probed: asked whether it is a link */
};

/* A file read where this capture adds its own (.numastor/, run/udev/data/), held to the end. */
struct held {
	struct held *next;
	size_t len;
	mode_t mode;
	char *path;
	char data[];
};

/* What the budgets have counted of a bundle so far. */
struct tally {
	unsigned long long entries, bytes, json_bytes; /* bytes: of the files the reader reads */
};

struct ns_capture {
	struct ns_root *root; /* attached: where a directory on a path is asked whether it is a link */
	struct archive *a;    /* open from ns_capture_start to ns_capture_finish */
	struct archive_entry *ae;
	struct node *v;	   /* v[0]: the root */
	uint32_t n, cap;   /* nodes */
	uint32_t *buckets; /* nbuckets, a power of two */
	uint32_t nbuckets;
	char *pool;
	size_t pool_len, pool_cap;
	struct held *held, **held_tail;
	struct tally tally;
	size_t held_bytes, held_max; /* file bytes this capture holds (copies), now and at most */
	size_t count, duplicates, late_links;
	int err; /* the first failure: nothing more is written */
	char *why;
};

static int budget_entry(const char *file, const char *name, mode_t type, long long size, const char *target,
			struct tally *t, char **why);

int ns_capture_new(struct ns_capture **out)
{
	struct ns_capture *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->cap = 4096;
	c->nbuckets = 4096;
	c->pool_cap = 65536;
	c->v = calloc(c->cap, sizeof(*c->v));
	c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
	c->pool = malloc(c->pool_cap);
	if (!c->v || !c->buckets || !c->pool) {
		free(c->v);
		free(c->buckets);
		free(c->pool);
		free(c);
		return -ENOMEM;
	}
	c->pool[0] = '\0'; /* the root's name */
	c->pool_len = 1;
	c->n = 1;
	c->held_tail = &c->held;
	*out = c;
	return 0;
}

static void held_drop(struct ns_capture *c, struct held *h)
{
	c->held_bytes -= h->len;
	free(h->path);
	free(h);
}

void ns_capture_free(struct ns_capture *c)
{
	if (!c)
		return;
	while (c->held) {
		struct held *h = c->held;
		c->held = h->next;
		held_drop(c, h);
	}
	if (c->ae)
		archive_entry_free(c->ae);
	if (c->a)
		archive_write_free(c->a);
	free(c->v);
	free(c->buckets);
	free(c->pool);
	free(c->why);
	free(c);
}

size_t ns_capture_count(const struct ns_capture *c)
{
	return c->count;
}

void ns_capture_stats(const struct ns_capture *c, struct ns_capture_stats *st)
{
	*st = (struct ns_capture_stats){
		.entries = c->count,
		.nodes = c->n,
		.book_bytes = (size_t)c->cap * sizeof(*c->v) + (size_t)c->nbuckets * sizeof(*c->buckets) + c->pool_cap,
		.held_max = c->held_max,
		.duplicates = c->duplicates,
		.late_links = c->late_links,
	};
}

static void hold(struct ns_capture *c, size_t len)
{
	c->held_bytes += len;
	if (c->held_bytes > c->held_max)
		c->held_max = c->held_bytes;
}

static int fail(struct ns_capture *c, int err)
{
	if (!c->err)
		c->err = err;
	return c->err;
}

static uint32_t name_hash(uint32_t parent, const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull);

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32));
}

static int pool_add(struct ns_capture *c, const char *s, size_t len, uint32_t *off)
{
	if (c->pool_len + len + 1 > c->pool_cap) {
		size_t cap = c->pool_cap;
		char *np;
		while (c->pool_len + len + 1 > cap)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -ENOMEM;
		np = realloc(c->pool, cap);
		if (!np)
			return -ENOMEM;
		c->pool = np;
		c->pool_cap = cap;
	}
	memcpy(c->pool + c->pool_len, s, len);
	c->pool[c->pool_len + len] = '\0';
	*off = (uint32_t)c->pool_len;
	c->pool_len += len + 1;
	return 0;
}

static int rehash(struct ns_capture *c, uint32_t nbuckets)
{
	uint32_t *b = calloc(nbuckets, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (uint32_t i = 1; i < c->n; i++) {
		const char *nm = c->pool + c->v[i].name;
		uint32_t k = name_hash(c->v[i].parent, nm, strlen(nm)) & (nbuckets - 1);
		c->v[i].next = b[k];
		b[k] = i;
	}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = nbuckets;
	return 0;
}

/* The node of the component name (len bytes) under parent, made when there is none. */
static int child(struct ns_capture *c, uint32_t parent, const char *name, size_t len, uint32_t *out)
{
	uint32_t k = name_hash(parent, name, len) & (c->nbuckets - 1), id;
	struct node *nd;
	int r;

	for (uint32_t i = c->buckets[k]; i; i = c->v[i].next) {
		const char *nm = c->pool + c->v[i].name;
		if (c->v[i].parent == parent && strncmp(nm, name, len) == 0 && nm[len] == '\0') {
			*out = i;
			return 0;
		}
	}
	if (c->n == UINT32_MAX)
		return -ENOMEM;
	if (c->n == c->cap) {
		struct node *nv = realloc(c->v, (size_t)c->cap * 2 * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap *= 2;
	}
	id = c->n;
	nd = &c->v[id];
	*nd = (struct node){.parent = parent};
	r = pool_add(c, name, len, &nd->name);
	if (r < 0)
		return r;
	nd->next = c->buckets[k];
	c->buckets[k] = id;
	c->v[parent].kids = 1;
	c->n++;
	if (c->n > c->nbuckets && c->nbuckets < (1u << 31) && (r = rehash(c, c->nbuckets * 2)) < 0)
		return r;
	*out = id;
	return 0;
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

static void on_record(void *data, const struct ns_record *rec);

/*
 * Is the directory at path (node id) a link? Asked once, of the root, the first time a path
 * goes through it: the reader may read sys/class/block/vda1/dev before it reads the link
 * sys/class/block/vda1 itself, and what was written below a path cannot move when the path
 * turns out later to be a link. So a link a read went through is in the bundle whether or not
 * the reader read the link (a replay resolves it to the same place), and what was read through
 * it is stored where it leads.
 */
static void probe_link(struct ns_capture *c, const char *path, uint32_t id)
{
	char *target = NULL;
	uint32_t off;

	c->v[id].probed = 1;
	if (!c->root)
		return;
	/* not a record: the reader did not read it (when it does, its record finds it known) */
	ns_root_set_recorder(c->root, NULL, NULL);
	if (ns_readlink(c->root, path, &target) == 0 && pool_add(c, target, strlen(target), &off) == 0) {
		c->v[id].target = off;
		c->v[id].link = 1;
	}
	ns_root_set_recorder(c->root, on_record, c);
	free(target);
}

#define CAP_PATH 8192 /* a path as the capture resolves it; the budget (MAX_PATH) is far below */

/*
 * The node of path as the capture stores it, and that path into out: every component but the
 * last resolved through the links recorded so far, lexically, at most 40 of them (a replay's
 * resolver follows the same links inside the bundle). Nodes are made as needed.
 */
static int resolve(struct ns_capture *c, const char *path, char out[static CAP_PATH], uint32_t *id)
{
	int hops = 0;

	if (strlen(path) >= CAP_PATH)
		return -ENAMETOOLONG;
	strcpy(out, path);
again:;
	uint32_t n = 0;
	for (const char *s = out; *s;) {
		size_t len = strcspn(s, "/");
		const char *t = s + len;
		uint32_t ch;
		int r;
		while (*t == '/')
			t++;
		if (!len) {
			s = t;
			continue;
		}
		r = child(c, n, s, len, &ch);
		if (r < 0)
			return r;
		if (*t && !c->v[ch].probed && !c->v[ch].link) {
			char save = s[len];
			out[s + len - out] = '\0';
			probe_link(c, out, ch);
			out[s + len - out] = save;
		}
		if (*t && c->v[ch].link) {
			size_t dirlen = s > out ? (size_t)(s - out) - 1 : 0;
			char *np;
			if (++hops > 40)
				return -ELOOP;
			np = join_normalized(out, dirlen, c->pool + c->v[ch].target, t);
			if (!np || strlen(np) >= CAP_PATH) {
				free(np);
				return np ? -ENAMETOOLONG : -ENOMEM;
			}
			strcpy(out, np);
			free(np);
			goto again;
		}
		n = ch;
		s = t;
	}
	*id = n;
	return 0;
}

/* One entry into the archive, within the budgets (a replay would refuse the bundle beyond
 * them: the capture then stops, and ns_capture_finish says why). data: a file's bytes, or a
 * link's target. */
static int put(struct ns_capture *c, const char *path, enum kind kind, const char *data, size_t len, mode_t mode)
{
	struct archive_entry *ae = c->ae;

	if (c->err)
		return c->err;
	if (budget_entry("the capture", path,
			 kind == K_LINK	 ? AE_IFLNK
			 : kind == K_DIR ? AE_IFDIR
					 : AE_IFREG,
			 kind == K_FILE ? (long long)len : 0, kind == K_LINK ? data : NULL, &c->tally, &c->why))
		return fail(c, -EFBIG);
	archive_entry_clear(ae);
	archive_entry_set_pathname(ae, path);
	archive_entry_set_uid(ae, 0);
	archive_entry_set_gid(ae, 0);
	switch (kind) {
	case K_FILE:
		archive_entry_set_filetype(ae, AE_IFREG);
		archive_entry_set_perm(ae, mode & 07777);
		archive_entry_set_size(ae, (la_int64_t)len);
		break;
	case K_LINK:
		archive_entry_set_filetype(ae, AE_IFLNK);
		archive_entry_set_perm(ae, 0777);
		archive_entry_set_symlink(ae, data);
		break;
	case K_DIR:
		archive_entry_set_filetype(ae, AE_IFDIR);
		archive_entry_set_perm(ae, 0755);
		break;
	case K_PLACEHOLDER:
		/* listed or probed, never read: an empty file with the mode it had */
		archive_entry_set_filetype(ae, AE_IFREG);
		archive_entry_set_perm(ae, (mode & 07777) ? (mode & 07777) : 0444);
		archive_entry_set_size(ae, 0);
		break;
	}
	if (archive_write_header(c->a, ae) != ARCHIVE_OK)
		return fail(c, -EIO);
	if (kind == K_FILE && len && archive_write_data(c->a, data, len) != (la_ssize_t)len)
		return fail(c, -EIO);
	c->count++;
	return 0;
}

/* Files where the capture adds its own: read ones wait for the end (see above). */
static bool added_here(const char *path)
{
	return strncmp(path, ".numastor/", 10) == 0 || strncmp(path, "run/udev/data/", 14) == 0;
}

static void put_file(struct ns_capture *c, const char *path, const char *data, size_t len, mode_t mode)
{
	char p[CAP_PATH];
	uint32_t id;
	int r;

	if (c->err)
		return;
	if (added_here(path)) {
		struct held *h = malloc(sizeof(*h) + len);
		if (!h || !(h->path = strdup(path))) {
			free(h);
			fail(c, -ENOMEM);
			return;
		}
		memcpy(h->data, data, len);
		h->len = len;
		h->mode = mode;
		h->next = NULL;
		*c->held_tail = h;
		c->held_tail = &h->next;
		hold(c, len);
		return;
	}
	r = resolve(c, path, p, &id);
	if (r < 0) {
		fail(c, r);
		return;
	}
	if (c->v[id].written) {
		c->duplicates++;
		return;
	}
	if (put(c, p, K_FILE, data, len, mode) == 0)
		c->v[id].written = 1;
}

/* A record to be written at the end, unless a stronger one of the path comes first. */
static void pend(struct ns_capture *c, uint32_t id, enum pend kind, mode_t mode)
{
	struct node *nd = &c->v[id];

	if (nd->pend == P_NONE)
		nd->mode = (uint16_t)(mode & 07777);
	if (kind > nd->pend)
		nd->pend = (uint8_t)kind;
}

static void on_record(void *data, const struct ns_record *rec)
{
	struct ns_capture *c = data;
	char p[CAP_PATH];
	uint32_t id;
	int r = 0;

	if (c->err)
		return;
	switch (rec->op) {
	case NS_REC_FILE:
		if (strcmp(rec->path, "etc/machine-id") == 0) {
			/* confidential (machine-id(5)), and bundles are sent: only numastor's id for the
			 * machine goes in, which is what the replay's documents say (lib/out/json.c) */
			char id128[33], *text = strndup(rec->data, rec->len);
			if (text && ns_id128_app_specific(text, NS_APP_ID, id128) == 0)
				put_file(c, NS_MACHINE_APP_ID_PATH, id128, 32, 0444);
			free(text);
			break;
		}
		put_file(c, rec->path, rec->data, rec->len, rec->mode);
		break;
	case NS_REC_LINK:
		r = resolve(c, rec->path, p, &id);
		if (r < 0)
			break;
		if (c->v[id].kids && !c->v[id].link) {
			/* paths were recorded through it before it was: they are stored below it, and it
			 * stays the directory they make (never seen in numastor's own reading order) */
			c->late_links++;
			break;
		}
		if (!c->v[id].link) {
			r = pool_add(c, rec->data, rec->len, &c->v[id].target);
			c->v[id].link = r == 0;
		}
		break;
	case NS_REC_DIR:
		r = resolve(c, rec->path, p, &id);
		if (r == 0)
			pend(c, id, P_DIR, 0755);
		if (r == 0 && rec->nnames) {
			/* the entries' directory is where the path leads, the path itself included:
			 * the first entry's node tells which */
			char q[CAP_PATH];
			uint32_t dir, ch;
			if (snprintf(q, sizeof(q), "%s/%s", rec->path, rec->names[0]) >= (int)sizeof(q)) {
				r = -ENAMETOOLONG;
				break;
			}
			r = resolve(c, q, p, &ch);
			dir = r == 0 ? c->v[ch].parent : 0;
			for (size_t i = 0; i < rec->nnames && r == 0; i++) {
				bool isdir = rec->types && rec->types[i] == DT_DIR;
				/* listed, never read: only its name and whether it is a directory matter */
				r = child(c, dir, rec->names[i], strlen(rec->names[i]), &ch);
				if (r == 0)
					pend(c, ch, isdir ? P_DIR : P_PLACE, isdir ? 0755 : 0444);
			}
		}
		break;
	case NS_REC_STAT:
		r = resolve(c, rec->path, p, &id);
		if (r == 0)
			pend(c, id, S_ISDIR(rec->mode) ? P_DIR : P_PLACE, rec->mode);
		break;
	}
	if (r < 0)
		fail(c, r);
}

int ns_capture_start(struct ns_capture *c, int fd, char **why)
{
	int r = ns_snapshot_archive_load(why);

	if (r < 0)
		return fail(c, r);
	c->a = archive_write_new();
	c->ae = archive_entry_new();
	if (!c->a || !c->ae || archive_write_add_filter_gzip(c->a) != ARCHIVE_OK ||
	    archive_write_set_format_pax_restricted(c->a) || archive_write_open_fd(c->a, fd) != ARCHIVE_OK)
		return fail(c, -EIO);
	return 0;
}

void ns_capture_attach(struct ns_capture *c, struct ns_root *root)
{
	c->root = root;
	ns_root_set_recorder(root, on_record, c);
}

void ns_capture_detach(struct ns_root *root)
{
	ns_root_set_recorder(root, NULL, NULL);
}

int ns_capture_add(struct ns_capture *c, const char *path, const char *data, size_t len, mode_t mode)
{
	char p[CAP_PATH];
	uint32_t id;
	int r;

	if (c->err)
		return c->err;
	r = resolve(c, path, p, &id);
	if (r < 0)
		return fail(c, r);
	if (c->v[id].written)
		return 0; /* added twice: the first */
	r = put(c, p, K_FILE, data, len, mode);
	if (r == 0)
		c->v[id].written = 1;
	return r;
}

#define COPY_CHUNK 65536

int ns_capture_add_fd(struct ns_capture *c, const char *path, int fd, mode_t mode)
{
	char p[CAP_PATH], *buf;
	struct stat st;
	uint32_t id;
	off_t left;
	int r;

	if (c->err)
		return c->err;
	if (fstat(fd, &st) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return fail(c, -errno);
	if (!S_ISREG(st.st_mode))
		return fail(c, -EINVAL);
	r = resolve(c, path, p, &id);
	if (r < 0)
		return fail(c, r);
	if (c->v[id].written)
		return 0;
	if (budget_entry("the capture", p, AE_IFREG, (long long)st.st_size, NULL, &c->tally, &c->why))
		return fail(c, -EFBIG);
	archive_entry_clear(c->ae);
	archive_entry_set_pathname(c->ae, p);
	archive_entry_set_uid(c->ae, 0);
	archive_entry_set_gid(c->ae, 0);
	archive_entry_set_filetype(c->ae, AE_IFREG);
	archive_entry_set_perm(c->ae, mode & 07777);
	archive_entry_set_size(c->ae, (la_int64_t)st.st_size);
	if (archive_write_header(c->a, c->ae) != ARCHIVE_OK)
		return fail(c, -EIO);
	buf = malloc(COPY_CHUNK);
	if (!buf)
		return fail(c, -ENOMEM);
	hold(c, COPY_CHUNK);
	/* the size the header says, exactly: a file that changed meanwhile is an error */
	for (left = st.st_size; left > 0 && r == 0;) {
		ssize_t n = read(fd, buf, left < COPY_CHUNK ? (size_t)left : COPY_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			r = n < 0 ? -errno : -EIO;
		else if (archive_write_data(c->a, buf, (size_t)n) != (la_ssize_t)n)
			r = -EIO;
		else
			left -= n;
	}
	c->held_bytes -= COPY_CHUNK;
	free(buf);
	if (r < 0)
		return fail(c, r);
	c->v[id].written = 1;
	c->count++;
	return 0;
}

/* The path of node id into out (components joined from the root down). */
static int node_path(const struct ns_capture *c, uint32_t id, char out[static CAP_PATH])
{
	uint32_t up[NS_SNAPSHOT_MAX_DEPTH * 4];
	size_t depth = 0, len = 0;

	for (uint32_t i = id; i; i = c->v[i].parent) {
		if (depth == sizeof(up) / sizeof(up[0]))
			return -ENAMETOOLONG;
		up[depth++] = i;
	}
	while (depth--) {
		const char *nm = c->pool + c->v[up[depth]].name;
		size_t n = strlen(nm);
		if (len + n + 2 >= CAP_PATH)
			return -ENAMETOOLONG;
		if (len)
			out[len++] = '/';
		memcpy(out + len, nm, n);
		len += n;
	}
	out[len] = '\0';
	return 0;
}

int ns_capture_finish(struct ns_capture *c, char **why)
{
	char p[CAP_PATH];
	int r = 0;

	*why = NULL;
	if (!c->a && !c->err)
		fail(c, -EINVAL); /* never started */
	/* the files read where this capture added its own: those it did not add */
	while (c->held && !c->err) {
		struct held *h = c->held;
		uint32_t id;
		c->held = h->next;
		r = resolve(c, h->path, p, &id);
		if (r < 0)
			fail(c, r);
		else if (!c->v[id].written && put(c, p, K_FILE, h->data, h->len, h->mode) == 0)
			c->v[id].written = 1;
		else if (c->v[id].written)
			c->duplicates++;
		held_drop(c, h);
	}
	/* what was held back, in the order first recorded */
	for (uint32_t id = 1; id < c->n && !c->err; id++) {
		const struct node *nd = &c->v[id];
		enum kind kind;
		if (nd->written || (!nd->link && nd->pend == P_NONE))
			continue; /* written, or only a directory above what was */
		if (nd->link)
			kind = K_LINK;
		else if (nd->pend == P_DIR || nd->kids)
			kind = K_DIR; /* a placeholder with entries below it is a directory */
		else
			kind = K_PLACEHOLDER;
		r = node_path(c, id, p);
		if (r < 0) {
			/* far beyond the depth and path budgets */
			c->why = ns_fmt("the capture: an entry is more than %u levels deep or %u bytes long, "
					"beyond the budgets",
					NS_SNAPSHOT_MAX_DEPTH, NS_SNAPSHOT_MAX_PATH);
			fail(c, c->why ? -EFBIG : -ENOMEM);
			break;
		}
		put(c, p, kind, nd->link ? c->pool + nd->target : NULL, 0, nd->mode);
	}
	if (c->a) {
		if (!c->err && archive_write_close(c->a) != ARCHIVE_OK)
			fail(c, -EIO);
		archive_write_free(c->a);
		c->a = NULL;
	}
	if (c->err == -EFBIG && c->why) {
		*why = c->why;
		c->why = NULL;
	}
	return c->err;
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

int ns_snapshot_tmpfile(void)
{
	const char *tmpdir = getenv("TMPDIR");
	const char *dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
	char *name = NULL;
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd >= 0 ? fd : -errno;
	/* a file system without O_TMPFILE: a named one, unlinked at once */
	if (asprintf(&name, "%s/numastor-spool.XXXXXX", dir) < 0)
		return -ENOMEM;
	fd = mkostemp(name, O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	else
		unlink(name);
	free(name);
	return fd;
}
