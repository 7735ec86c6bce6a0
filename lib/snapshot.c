/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "snapshot.h"
#include "util.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What an entry is, strongest first: a later, weaker record of the same path never wins. */
enum kind { K_FILE = 0, K_LINK, K_DIR, K_PLACEHOLDER };

struct entry {
	char *path;
	enum kind kind;
	char *data; /* FILE bytes, LINK target */
	size_t len;
	mode_t mode;
	size_t seq;
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
	return push(c, path, K_FILE, data, len, mode);
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

int ns_capture_write(struct ns_capture *c, const char *path)
{
	struct archive *a;
	struct archive_entry *ae;
	char *tmp = NULL;
	int fd, r = 0;

	if (c->err)
		return c->err;
	qsort(c->v, c->n, sizeof(*c->v), entry_cmp);
	r = canonicalize(c);
	if (r < 0)
		return r;
	qsort(c->v, c->n, sizeof(*c->v), entry_cmp);
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkstemp(tmp);
	if (fd < 0) {
		r = -errno;
		free(tmp);
		return r;
	}
	fchmod(fd, 0644);
	a = archive_write_new();
	ae = archive_entry_new();
	if (!a || !ae || archive_write_add_filter_gzip(a) != ARCHIVE_OK || archive_write_set_format_pax_restricted(a) ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		r = -EIO;
		goto out;
	}
	for (size_t i = 0; i < c->n && r == 0; i++) {
		const struct entry *e = &c->v[i];
		enum kind kind = e->kind;
		if (i && strcmp(c->v[i - 1].path, e->path) == 0)
			continue; /* the strongest record of this path is already written */
		/* a placeholder with entries below it is a directory */
		if (kind == K_PLACEHOLDER && i + 1 < c->n) {
			size_t n = strlen(e->path);
			for (size_t k = i + 1; k < c->n && strcmp(c->v[k].path, e->path) == 0; k++)
				;
			for (size_t k = i + 1; k < c->n; k++) {
				if (strcmp(c->v[k].path, e->path) == 0)
					continue;
				if (strncmp(c->v[k].path, e->path, n) == 0 && c->v[k].path[n] == '/')
					kind = K_DIR;
				break;
			}
		}
		archive_entry_clear(ae);
		archive_entry_set_pathname(ae, e->path);
		archive_entry_set_uid(ae, 0);
		archive_entry_set_gid(ae, 0);
		switch (kind) {
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
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	close(fd);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	free(tmp);
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

/* A relative path with no "." or ".." component and nothing odd in it. */
static bool safe_path(const char *p)
{
	if (!*p || *p == '/' || strlen(p) >= 4096)
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

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p) < 0 ? -1 : 0;
}

int ns_snapshot_remove(const char *dir)
{
	/* FTW_PHYS: never follow a link out of the bundle */
	return nftw(dir, rm_entry, 32, FTW_DEPTH | FTW_PHYS) < 0 ? -errno : 0;
}

int ns_snapshot_extract(const char *file, char **dir_out, char **why)
{
	const char *tmpdir = getenv("TMPDIR");
	char *dir = NULL;
	struct archive *in = archive_read_new(), *out = archive_write_disk_new();
	struct archive_entry *ae;
	unsigned long long total = 0, entries = 0;
	int r = 0, fd;

	*why = NULL;
	*dir_out = NULL;
	if (!in || !out) {
		r = -ENOMEM;
		goto done;
	}
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		refuse(why, "cannot open %s: %s", file, strerror(errno));
		goto done;
	}
	if (asprintf(&dir, "%s/numastor-snapshot.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp") < 0 || !mkdtemp(dir)) {
		r = -errno;
		close(fd);
		goto done;
	}
	archive_read_support_filter_gzip(in);
	archive_read_support_filter_xz(in);
	archive_read_support_filter_zstd(in);
	archive_read_support_format_tar(in);
	if (archive_read_open_fd(in, fd, 65536) != ARCHIVE_OK) {
		r = refuse(why, "%s is not a numastor snapshot: %s", file, archive_error_string(in));
		close(fd);
		goto done;
	}
	/* entry names were checked to be relative; the absolute path written is our own directory's
	 * (canonical, so the symlink check of every component holds) */
	{
		char *real = realpath(dir, NULL);
		if (!real) {
			r = -errno;
			close(fd);
			goto done;
		}
		free(dir);
		dir = real;
	}
	archive_write_disk_set_options(out, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
						    ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_NO_OVERWRITE);
	for (;;) {
		const char *target;
		char full[8192], name[4096];
		la_int64_t size;
		mode_t type;
		int h = archive_read_next_header(in, &ae);

		if (h == ARCHIVE_EOF)
			break;
		if (h != ARCHIVE_OK) {
			r = refuse(why, "%s is malformed: %s", file, archive_error_string(in));
			break;
		}
		{
			const char *n = archive_entry_pathname(ae);
			if (n && strncmp(n, "./", 2) == 0)
				n += 2;
			/* a copy: setting the entry's path below frees the library's string */
			if (!n || strlen(n) >= sizeof(name)) {
				r = refuse(why, "%s: an entry has no usable path", file);
				break;
			}
			strcpy(name, n);
		}
		type = archive_entry_filetype(ae);
		size = archive_entry_size(ae);
		if (++entries > NS_SNAPSHOT_MAX_ENTRIES) {
			r = refuse(why, "%s has more than %u entries", file, NS_SNAPSHOT_MAX_ENTRIES);
			break;
		}
		if (!safe_path(name)) {
			r = refuse(why, "%s: entry '%s' is not a plain relative path inside the bundle", file, name);
			break;
		}
		if (archive_entry_hardlink(ae)) {
			r = refuse(why, "%s: entry '%s' is a hard link", file, name);
			break;
		}
		if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
			r = refuse(why, "%s: entry '%s' is neither a file, a directory nor a symlink", file, name);
			break;
		}
		if (type == AE_IFLNK) {
			target = archive_entry_symlink(ae);
			if (!target || !link_inside(name, target)) {
				r = refuse(why, "%s: link '%s' points outside the bundle ('%s')", file, name,
					   target ? target : "");
				break;
			}
		}
		if (size < 0 || (unsigned long long)size > NS_SNAPSHOT_MAX_FILE) {
			r = refuse(why, "%s: entry '%s' is %lld bytes, more than %u", file, name, (long long)size,
				   NS_SNAPSHOT_MAX_FILE);
			break;
		}
		total += (unsigned long long)size;
		if (total > NS_SNAPSHOT_MAX_TOTAL) {
			r = refuse(why, "%s holds more than %u MiB", file, NS_SNAPSHOT_MAX_TOTAL >> 20);
			break;
		}
		snprintf(full, sizeof(full), "%s/%s", dir, name);
		archive_entry_set_pathname(ae, full);
		archive_entry_set_uid(ae, getuid());
		archive_entry_set_gid(ae, getgid());
		if (archive_write_header(out, ae) != ARCHIVE_OK) {
			r = refuse(why, "%s: entry '%s' could not be extracted: %s", file, name,
				   archive_error_string(out));
			break;
		}
		if (type == AE_IFREG && size > 0) {
			const void *buf;
			size_t len;
			la_int64_t off;
			int d;
			while ((d = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK)
				if (archive_write_data_block(out, buf, len, off) != ARCHIVE_OK) {
					d = ARCHIVE_FATAL;
					break;
				}
			if (d != ARCHIVE_EOF) {
				r = refuse(why, "%s: entry '%s' is truncated or unreadable: %s", file, name,
					   archive_error_string(in));
				break;
			}
		}
		archive_write_finish_entry(out);
	}
	if (!r && !entries)
		r = refuse(why, "%s is empty", file);
	archive_read_close(in);
	close(fd);
done:
	if (in)
		archive_read_free(in);
	if (out) {
		archive_write_close(out);
		archive_write_free(out);
	}
	if (r && dir) {
		ns_snapshot_remove(dir);
		free(dir);
		dir = NULL;
	}
	*dir_out = dir;
	return r;
}
