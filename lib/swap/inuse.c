/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Is a disk in use: claims, mounts in every namespace, open descriptors, mappings, holders,
 * swap, the root and /usr file systems, the kernel's own users (loop, nvmet, LIO, Xen
 * blkback). See inuse.h. */
#define _GNU_SOURCE
#include "swap/inuse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "read/blockdev.h"
#include "base/number.h"
#include "base/util.h"

struct dev {
	char *name;
	char *sysdir;	  /* its directory under sys/devices (relative to the root) */
	const char *disk; /* the disk a partition belongs to; NULL for a whole disk or head */
	unsigned maj, min;
	bool known; /* maj:min read */
	bool path;  /* a multipath head's per-path disk (hidden: on 6.1 without a dev file) */
};

struct scan {
	struct ns_root *root;
	bool live;
	struct dev *devs;
	size_t ndevs;
	struct ns_inuse_report *rep;
	char *self_ns, *pid1_ns;
	char **pids;
	size_t npids;
	/* btrfs file systems with a member among devs: uuid and all its members */
	struct btrfs_fs {
		char *uuid;
		char **members;
		size_t nmembers;
		bool mounted_seen; /* a mount of it found in some namespace */
	} * btrfs;
	size_t nbtrfs;
};

static __attribute__((format(printf, 4, 5))) int add(struct scan *s, const char *device, const char *kind,
						     const char *fmt, ...)
{
	struct ns_inuse_holder *nv;
	va_list ap;
	char *detail;

	va_start(ap, fmt);
	detail = ns_vfmt(fmt, ap);
	va_end(ap);
	if (!detail)
		return -ENOMEM;
	for (size_t i = 0; i < s->rep->n; i++)
		if (strcmp(s->rep->v[i].device, device) == 0 && strcmp(s->rep->v[i].kind, kind) == 0 &&
		    strcmp(s->rep->v[i].detail, detail) == 0) {
			free(detail);
			return 0;
		}
	nv = realloc(s->rep->v, (s->rep->n + 1) * sizeof(*nv));
	if (!nv) {
		free(detail);
		return -ENOMEM;
	}
	s->rep->v = nv;
	nv[s->rep->n] = (struct ns_inuse_holder){.device = strdup(device), .kind = strdup(kind), .detail = detail};
	if (!nv[s->rep->n].device || !nv[s->rep->n].kind) {
		free(nv[s->rep->n].device);
		free(nv[s->rep->n].kind);
		free(detail);
		return -ENOMEM;
	}
	s->rep->n++;
	return 0;
}

void ns_inuse_report_free(struct ns_inuse_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		free(rep->v[i].device);
		free(rep->v[i].kind);
		free(rep->v[i].detail);
	}
	free(rep->v);
	rep->v = NULL;
	rep->n = 0;
}

char *ns_inuse_report_text(const struct ns_inuse_report *rep, const char *disk)
{
	char *out = NULL;

	for (size_t i = 0; i < rep->n; i++) {
		const struct ns_inuse_holder *h = &rep->v[i];
		bool named = (disk && strcmp(h->device, disk) == 0) || strstr(h->detail, h->device);
		char *next = ns_fmt("%s%s%s%s%s", out ? out : "", out ? "; " : "", named ? "" : h->device,
				    named ? "" : " ", h->detail);
		free(out);
		if (!next)
			return NULL;
		out = next;
	}
	return out;
}

/* ---- the devices: the disk, its partitions, its multipath head and the head's partitions ---- */

static int add_dev(struct scan *s, const char *name, const char *sysdir, const char *disk)
{
	struct dev *nv = realloc(s->devs, (s->ndevs + 1) * sizeof(*nv));
	char p[PATH_MAX], *txt = NULL;

	if (!nv)
		return -ENOMEM;
	s->devs = nv;
	nv[s->ndevs] = (struct dev){.name = strdup(name), .sysdir = strdup(sysdir), .disk = disk};
	if (!nv[s->ndevs].name || !nv[s->ndevs].sysdir) {
		free(nv[s->ndevs].name);
		free(nv[s->ndevs].sysdir);
		return -ENOMEM;
	}
	snprintf(p, sizeof(p), "%s/dev", sysdir);
	if (ns_read_str(s->root, p, &txt) == 0 && sscanf(txt, "%u:%u", &nv[s->ndevs].maj, &nv[s->ndevs].min) == 2)
		nv[s->ndevs].known = true;
	free(txt);
	s->ndevs++;
	return 0;
}

static int add_disk(struct scan *s, const char *name)
{
	char p[PATH_MAX], *sp = NULL, **names;
	size_t n, first = s->ndevs;
	int r;

	snprintf(p, sizeof(p), "sys/block/%s", name);
	r = ns_realpath(s->root, p, &sp);
	if (r < 0)
		return r;
	if ((r = ns_probe(s->root, sp)) <= 0) {
		free(sp);
		return r < 0 ? r : -ENOENT;
	}
	r = add_dev(s, name, sp, NULL);
	if (r == 0 && (r = ns_list_dir(s->root, sp, &names, &n)) == 0) { /* unlisted: partitions unknown */
		for (size_t i = 0; i < n && r == 0; i++) {
			char part[PATH_MAX];
			if (strncmp(names[i], name, strlen(name)) != 0)
				continue;
			snprintf(part, sizeof(part), "%s/%s/partition", sp, names[i]);
			if ((r = ns_probe(s->root, part)) <= 0)
				continue; /* not a partition, or not told: r ends the scan */
			snprintf(part, sizeof(part), "%s/%s", sp, names[i]);
			r = add_dev(s, names[i], part, s->devs[first].name);
		}
		ns_strv_free(names, n);
	}
	free(sp);
	return r;
}

/* nvmeXcYnZ (a path of a multipath namespace) -> its head nvmeXnZ. */
static bool multipath_head(const char *name, char *head, size_t len)
{
	unsigned subsys, ctrl, ns;
	int end = 0;

	if (sscanf(name, "nvme%uc%un%u%n", &subsys, &ctrl, &ns, &end) != 3 || name[end] != '\0')
		return false;
	snprintf(head, len, "nvme%un%u", subsys, ns);
	return true;
}

/* A multipath head nvmeXnY's per-path disks nvmeXcCnY (hidden: no node, no mount, but what the
 * swap detaches too), those not among devs yet. Nothing for a name that is no head. */
static int add_paths(struct scan *s, const char *head)
{
	unsigned subsys, ns, ps, c, pn;
	int end = 0, r = 0;
	char **names;
	size_t n;

	if (sscanf(head, "nvme%un%u%n", &subsys, &ns, &end) != 2 || head[end] != '\0')
		return 0;
	if (ns_list_dir(s->root, "sys/block", &names, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		bool have = false;
		end = 0;
		if (sscanf(names[i], "nvme%uc%un%u%n", &ps, &c, &pn, &end) != 3 || names[i][end] != '\0' ||
		    ps != subsys || pn != ns)
			continue;
		for (size_t k = 0; k < s->ndevs && !have; k++)
			have = strcmp(s->devs[k].name, names[i]) == 0;
		if (!have) {
			size_t first = s->ndevs;
			r = add_disk(s, names[i]);
			if (r == -ENOENT)
				r = 0;
			for (size_t k = first; k < s->ndevs; k++)
				s->devs[k].path = true;
		}
	}
	ns_strv_free(names, n);
	return r;
}

static struct dev *dev_by_name(struct scan *s, const char *name)
{
	for (size_t i = 0; i < s->ndevs; i++)
		if (strcmp(s->devs[i].name, name) == 0)
			return &s->devs[i];
	return NULL;
}

static struct dev *dev_by_num(struct scan *s, unsigned maj, unsigned min)
{
	for (size_t i = 0; i < s->ndevs; i++)
		if (s->devs[i].known && s->devs[i].maj == maj && s->devs[i].min == min)
			return &s->devs[i];
	return NULL;
}

/* "/dev/NAME" (or "/dev/NAME (deleted)") naming one of the devices. */
static struct dev *dev_by_path(struct scan *s, const char *path)
{
	char buf[PATH_MAX];
	size_t n;

	if (strncmp(path, "/dev/", 5) != 0)
		return NULL;
	snprintf(buf, sizeof(buf), "%s", path + 5);
	n = strlen(buf);
	if (n > 10 && strcmp(buf + n - 10, " (deleted)") == 0)
		buf[n - 10] = '\0';
	return dev_by_name(s, buf);
}

/* ---- processes ---- */

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static char *comm_of(struct scan *s, const char *pid)
{
	char p[64], *c = NULL;
	snprintf(p, sizeof(p), "proc/%s/comm", pid);
	if (ns_read_str(s->root, p, &c) < 0)
		c = strdup("?");
	return c;
}

static int list_pids(struct scan *s)
{
	char **names;
	size_t n;
	char self[32];

	snprintf(self, sizeof(self), "%d", (int)getpid());
	if (ns_list_dir(s->root, "proc", &names, &n) < 0)
		return 0; /* no proc in a captured tree: no process to look at */
	for (size_t i = 0; i < n; i++) {
		/* numastor's own descriptors are not a use of the disk (live root only) */
		if (!all_digits(names[i]) || (s->live && strcmp(names[i], self) == 0))
			continue;
		if (ns_strv_add(&s->pids, &s->npids, names[i]) < 0) {
			ns_strv_free(names, n);
			return -ENOMEM;
		}
	}
	ns_strv_free(names, n);
	return 0;
}

/* ---- exclusive claim (live root only) ---- */

static int probe_exclusive(struct scan *s, const struct dev *d)
{
	char path[PATH_MAX], dir[] = "/run/numastor-inuse.XXXXXX";
	struct stat st;
	dev_t want = makedev(d->maj, d->min);
	bool private = false;
	int fd, err;

	if (!d->known)
		return add(s, d->name, "exclusive-open",
			   "cannot probe for an exclusive claim: its device number is unknown (/%s/dev)", d->sysdir);
	snprintf(path, sizeof(path), "/dev/%s", d->name);
	if (stat(path, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != want) {
		/* no node of ours for it: a private one, where nobody else can open it */
		if (!mkdtemp(dir))
			return add(s, d->name, "exclusive-open",
				   "cannot probe for an exclusive claim: /dev/%s is missing and no private node "
				   "can be made under /run (%s)",
				   d->name, strerror(errno));
		snprintf(path, sizeof(path), "%s/%u:%u", dir, d->maj, d->min);
		if (mknod(path, S_IFBLK | 0600, want) < 0) {
			err = errno;
			rmdir(dir);
			return add(s, d->name, "exclusive-open",
				   "cannot probe for an exclusive claim: /dev/%s is missing and no private node "
				   "can be made under /run (%s)",
				   d->name, strerror(err));
		}
		private = true;
	}
	fd = open(path, O_RDONLY | O_EXCL | O_NONBLOCK | O_CLOEXEC);
	err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	if (private) {
		unlink(path);
		rmdir(dir);
	}
	if (err == 0 || err == ENXIO || err == ENODEV || err == ENOMEDIUM || err == ENOENT)
		return 0; /* unclaimed, or nothing can open it (a hidden path device, gone) */
	if (err == EBUSY)
		return add(s, d->name, "exclusive-open",
			   "claimed exclusively (an O_EXCL open fails with EBUSY) by a holder no other check "
			   "names: an exclusive opener in any namespace, or a kernel user such as a zram or "
			   "bcache backing device");
	return add(s, d->name, "exclusive-open", "cannot probe for an exclusive claim: open(%s, O_EXCL): %s", path,
		   strerror(err));
}

/* ---- mounts ---- */

/* mountinfo's octal escapes (\040 for a space) undone, in place. */
static void unescape(char *p)
{
	char *o = p;
	while (*p) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
		    p[3] <= '7') {
			*o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 4;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
}

struct mnt {
	unsigned maj, min;
	char *point, *fstype, *source;
};

/* One mountinfo line: "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw". */
static bool parse_mount(char *line, struct mnt *m)
{
	char *f[6] = {0}, *save = NULL, *tok;
	int nf = 0;
	bool dash = false;

	memset(m, 0, sizeof(*m));
	for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (nf < 5) {
			f[nf++] = tok;
		} else if (!dash) {
			dash = strcmp(tok, "-") == 0;
		} else if (!m->fstype) {
			m->fstype = tok;
		} else if (!m->source) {
			m->source = tok;
			break;
		}
	}
	if (nf < 5 || !m->fstype || sscanf(f[2], "%u:%u", &m->maj, &m->min) != 2)
		return false;
	m->point = f[4];
	unescape(m->point);
	if (m->source)
		unescape(m->source);
	return true;
}

static struct btrfs_fs *btrfs_of_source(struct scan *s, const char *source)
{
	const char *base = source ? strrchr(source, '/') : NULL;
	base = base ? base + 1 : source;
	for (size_t i = 0; base && i < s->nbtrfs; i++)
		if (ns_strv_has(s->btrfs[i].members, s->btrfs[i].nmembers, base))
			return &s->btrfs[i];
	return NULL;
}

/* Every btrfs file system (mounted: sys/fs/btrfs/UUID exists only then) with a member among devs. */
static int read_btrfs(struct scan *s)
{
	char **uuids;
	size_t nu;
	int r = 0;

	if (ns_list_dir(s->root, "sys/fs/btrfs", &uuids, &nu) < 0)
		return 0;
	for (size_t i = 0; i < nu && r == 0; i++) {
		char p[PATH_MAX], **members;
		size_t nm;
		bool ours = false;
		snprintf(p, sizeof(p), "sys/fs/btrfs/%s/devices", uuids[i]);
		if (ns_list_dir(s->root, p, &members, &nm) < 0)
			continue; /* "features" and other entries that are no file system */
		for (size_t k = 0; k < nm; k++)
			ours |= dev_by_name(s, members[k]) != NULL;
		if (ours) {
			struct btrfs_fs *nv = realloc(s->btrfs, (s->nbtrfs + 1) * sizeof(*nv));
			if (!nv) {
				ns_strv_free(members, nm);
				r = -ENOMEM;
				break;
			}
			s->btrfs = nv;
			nv[s->nbtrfs++] = (struct btrfs_fs){.uuid = uuids[i], .members = members, .nmembers = nm};
			uuids[i] = NULL;
		} else {
			ns_strv_free(members, nm);
		}
	}
	ns_strv_free(uuids, nu);
	return r;
}

/* The namespace words of a detail: nothing for ours, else which one and one process in it. */
static char *ns_words(struct scan *s, const char *ns, const char *pid)
{
	char *comm, *w;
	if (!ns || (s->self_ns && strcmp(ns, s->self_ns) == 0))
		return strdup("");
	comm = comm_of(s, pid);
	w = ns_fmt(" in mount namespace %s (pid %s %s)", ns, pid, comm ? comm : "?");
	free(comm);
	return w;
}

static int scan_mountinfo(struct scan *s, const char *pid, const char *ns, char *txt, char ***unknown_fs,
			  size_t *nunknown)
{
	char *save = NULL;
	bool init_ns = s->pid1_ns && ns && strcmp(ns, s->pid1_ns) == 0;
	int r = 0;

	for (char *line = strtok_r(txt, "\n", &save); line && r == 0; line = strtok_r(NULL, "\n", &save)) {
		struct mnt m;
		struct dev *d;
		struct btrfs_fs *b;
		char *words;
		if (!parse_mount(line, &m))
			continue;
		b = strcmp(m.fstype, "btrfs") == 0 ? btrfs_of_source(s, m.source) : NULL;
		if (b)
			b->mounted_seen = true;
		/* / and /usr of pid 1 are the root analysis's (through dm, md and btrfs too) */
		if (init_ns && (strcmp(m.point, "/") == 0 || strcmp(m.point, "/usr") == 0))
			continue;
		d = m.maj ? dev_by_num(s, m.maj, m.min) : NULL;
		if (!d && !b && !(strcmp(m.fstype, "zfs") == 0 || strcmp(m.fstype, "bcachefs") == 0))
			continue;
		words = ns_words(s, ns, pid);
		if (!words)
			return -ENOMEM;
		if (d) {
			r = add(s, d->name, "mount", "mounted at %s%s", m.point, words);
		} else if (b) {
			for (size_t k = 0; k < b->nmembers && r == 0; k++)
				if ((d = dev_by_name(s, b->members[k])))
					r = add(s, d->name, "btrfs", "%s: member of btrfs %s mounted at %s%s", d->name,
						b->uuid, m.point, words);
		} else {
			/* zfs and bcachefs show no member devices in sysfs: with the module there and such a
			 * file system mounted, which disks it uses is not known */
			char mod[64];
			snprintf(mod, sizeof(mod), "sys/module/%s", m.fstype);
			/* the module there, or not told: its members are unknown either way */
			if ((ns_probe(s->root, mod) != 0 ||
			     (strcmp(m.fstype, "bcachefs") == 0 && ns_probe(s->root, "sys/fs/bcachefs") != 0)) &&
			    !ns_strv_has(*unknown_fs, *nunknown, m.fstype)) {
				r = ns_strv_add(unknown_fs, nunknown, m.fstype);
				if (r == 0)
					r = add(s, s->devs[0].name, "unknown-fs",
						"a %s file system is mounted at %s%s and which disks it uses cannot be "
						"told from sysfs: refused while one is mounted",
						m.fstype, m.point, words);
			}
		}
		free(words);
	}
	return r;
}

static int scan_mounts(struct scan *s)
{
	char **seen = NULL, **unknown = NULL, **texts = NULL;
	size_t nseen = 0, nunknown = 0, ntexts = 0;
	int r = 0;

	/* ours first (its mounts are called just "mounted at"), then every other namespace once */
	for (size_t i = 0; i <= s->npids && r == 0; i++) {
		const char *pid = i == 0 ? "self" : s->pids[i - 1];
		char p[64], *ns = NULL;
		snprintf(p, sizeof(p), "proc/%s/ns/mnt", pid);
		if (ns_readlink(s->root, p, &ns) < 0) {
			if (i == 0)
				continue;
			ns = ns_fmt("(unknown: pid %s)", pid); /* unreadable: look at its mounts anyway */
			if (!ns)
				return -ENOMEM;
		}
		if (!ns_strv_has(seen, nseen, ns)) {
			char *txt = NULL;
			r = ns_strv_add(&seen, &nseen, ns);
			snprintf(p, sizeof(p), "proc/%s/mountinfo", pid);
			/* the same table twice is one namespace (whose ns link could not be read) */
			if (r == 0 && ns_read_str(s->root, p, &txt) == 0 && !ns_strv_has(texts, ntexts, txt)) {
				r = ns_strv_add(&texts, &ntexts, txt);
				if (r == 0)
					r = scan_mountinfo(s, pid, ns, txt, &unknown, &nunknown);
			}
			free(txt);
		}
		free(ns);
	}
	/* a btrfs file system is in sys/fs/btrfs only while mounted: say so even without its mount point */
	for (size_t i = 0; i < s->nbtrfs && r == 0; i++)
		for (size_t k = 0; k < s->btrfs[i].nmembers && r == 0 && !s->btrfs[i].mounted_seen; k++) {
			struct dev *d = dev_by_name(s, s->btrfs[i].members[k]);
			if (d)
				r = add(s, d->name, "btrfs",
					"%s: member of btrfs %s, which is mounted (no mount point found in any mount "
					"namespace)",
					d->name, s->btrfs[i].uuid);
		}
	ns_strv_free(seen, nseen);
	ns_strv_free(unknown, nunknown);
	ns_strv_free(texts, ntexts);
	return r;
}

/* ---- the root and /usr file systems of pid 1, through dm/md slaves and btrfs members ---- */

static int stack_add(struct scan *s, char ***stack, size_t *n, const char *name, int depth)
{
	char p[PATH_MAX], **slaves = NULL;
	size_t ns = 0;
	int r;

	if (depth > 8 || ns_strv_has(*stack, *n, name))
		return 0;
	r = ns_strv_add(stack, n, name);
	snprintf(p, sizeof(p), "sys/class/block/%s/slaves", name);
	if (r == 0 && ns_list_dir(s->root, p, &slaves, &ns) < 0) {
		snprintf(p, sizeof(p), "sys/block/%s/slaves", name);
		if (ns_list_dir(s->root, p, &slaves, &ns) < 0)
			return 0;
	}
	for (size_t i = 0; r == 0 && i < ns; i++)
		r = stack_add(s, stack, n, slaves[i], depth + 1);
	ns_strv_free(slaves, ns);
	return r;
}

static int scan_root_fs(struct scan *s)
{
	char *txt = NULL, *save = NULL;
	int r = 0;

	if (ns_read_str(s->root, "proc/1/mountinfo", &txt) < 0)
		return 0;
	for (char *line = strtok_r(txt, "\n", &save); line && r == 0; line = strtok_r(NULL, "\n", &save)) {
		struct mnt m;
		char **stack = NULL, *top = NULL;
		size_t n = 0;
		bool root;
		if (!parse_mount(line, &m) || !(strcmp(m.point, "/") == 0 || strcmp(m.point, "/usr") == 0))
			continue;
		root = strcmp(m.point, "/") == 0;
		if (m.maj) {
			char p[64];
			snprintf(p, sizeof(p), "sys/dev/block/%u:%u", m.maj, m.min);
			if (ns_readlink_base(s->root, p, &top) < 0) {
				struct dev *d = dev_by_num(s, m.maj, m.min);
				top = d ? strdup(d->name) : NULL;
			}
			if (top)
				r = stack_add(s, &stack, &n, top, 0);
		} else if (strcmp(m.fstype, "btrfs") == 0) {
			struct btrfs_fs *b = btrfs_of_source(s, m.source);
			top = b ? ns_fmt("btrfs %s", b->uuid) : NULL;
			for (size_t k = 0; b && k < b->nmembers && r == 0; k++)
				r = stack_add(s, &stack, &n, b->members[k], 0);
		}
		for (size_t k = 0; k < n && r == 0; k++) {
			const struct dev *d = dev_by_name(s, stack[k]);
			char *through = NULL, *dmname = NULL;
			if (!d)
				continue;
			if (top && strcmp(top, d->name) != 0) {
				char p[PATH_MAX];
				snprintf(p, sizeof(p), "sys/block/%s/dm/name", top);
				ns_read_str(s->root, p, &dmname);
				through = ns_fmt(" through %s%s%s%s", top, dmname ? " (" : "", dmname ? dmname : "",
						 dmname ? ")" : "");
			}
			r = add(s, d->name, root ? "root-fs" : "usr-fs", "holds the %s file system (%s, pid 1's)%s",
				root ? "root" : "/usr", m.point, through ? through : "");
			free(through);
			free(dmname);
		}
		free(top);
		ns_strv_free(stack, n);
	}
	free(txt);
	return r;
}

/* ---- open descriptors and mappings ---- */

static int scan_fds(struct scan *s, const char *pid)
{
	char p[PATH_MAX], **fds;
	size_t n;
	int r = 0;
	char *comm = NULL;

	snprintf(p, sizeof(p), "proc/%s/fd", pid);
	if (ns_list_dir(s->root, p, &fds, &n) < 0)
		return 0; /* gone, or not ours to read */
	for (size_t i = 0; i < n && r == 0; i++) {
		char *target = NULL;
		struct dev *d;
		struct stat st;
		snprintf(p, sizeof(p), "proc/%s/fd/%s", pid, fds[i]);
		if (ns_readlink(s->root, p, &target) < 0)
			continue;
		d = dev_by_path(s, target);
		/* a node of another name (another mount namespace, a copy): by device number */
		if (!d && s->live && target[0] == '/' && ns_stat(s->root, p, &st) == 0 && S_ISBLK(st.st_mode))
			d = dev_by_num(s, major(st.st_rdev), minor(st.st_rdev));
		if (d) {
			if (!comm)
				comm = comm_of(s, pid);
			if (dev_by_path(s, target) == d)
				r = add(s, d->name, "open-fd", "open by %s (pid %s)", comm ? comm : "?", pid);
			else
				r = add(s, d->name, "open-fd", "open by %s (pid %s) as %s", comm ? comm : "?", pid,
					target);
		}
		free(target);
	}
	ns_strv_free(fds, n);
	free(comm);
	return r;
}

/* What a mapped file's dev:inode turned out to be (live root), so each file is looked at once. */
struct mapcache {
	char **keys;
	size_t n;
	unsigned *maj, *min; /* 0:0 when not a block device */
};

static int scan_maps(struct scan *s, const char *pid, struct mapcache *mc)
{
	char p[PATH_MAX], *txt = NULL, *save = NULL, *comm = NULL;
	int r = 0;

	snprintf(p, sizeof(p), "proc/%s/maps", pid);
	if (ns_read_str(s->root, p, &txt) < 0)
		return 0;
	for (char *line = strtok_r(txt, "\n", &save); line && r == 0; line = strtok_r(NULL, "\n", &save)) {
		char range[64], devf[32], path[PATH_MAX] = "";
		unsigned long inode = 0;
		struct dev *d;
		if (sscanf(line, "%63s %*s %*s %31s %lu %4095[^\n]", range, devf, &inode, path) < 3)
			continue;
		d = path[0] ? dev_by_path(s, path) : NULL;
		if (!d && s->live && inode != 0) {
			char key[64];
			size_t k;
			snprintf(key, sizeof(key), "%s %lu", devf, inode);
			for (k = 0; k < mc->n && strcmp(mc->keys[k], key) != 0; k++)
				;
			if (k == mc->n) {
				struct stat st;
				unsigned *nmaj = realloc(mc->maj, (mc->n + 1) * sizeof(*nmaj)), *nmin;
				if (nmaj)
					mc->maj = nmaj;
				nmin = nmaj ? realloc(mc->min, (mc->n + 1) * sizeof(*nmin)) : NULL;
				if (nmin)
					mc->min = nmin;
				if (!nmaj || !nmin || ns_strv_add(&mc->keys, &mc->n, key) < 0) {
					r = -ENOMEM;
					break;
				}
				mc->maj[k] = mc->min[k] = 0;
				snprintf(p, sizeof(p), "proc/%s/map_files/%s", pid, range);
				if (ns_stat(s->root, p, &st) == 0 && S_ISBLK(st.st_mode)) {
					mc->maj[k] = major(st.st_rdev);
					mc->min[k] = minor(st.st_rdev);
				}
			}
			if (mc->maj[k] || mc->min[k])
				d = dev_by_num(s, mc->maj[k], mc->min[k]);
		}
		if (d) {
			if (!comm)
				comm = comm_of(s, pid);
			r = add(s, d->name, "mapping", "mapped by %s (pid %s)", comm ? comm : "?", pid);
		}
	}
	free(txt);
	free(comm);
	return r;
}

/* ---- holders and swap ---- */

static int scan_holders(struct scan *s, const struct dev *d)
{
	char p[PATH_MAX], **h;
	size_t n;
	int r = 0;

	snprintf(p, sizeof(p), "%s/holders", d->sysdir);
	if (ns_list_dir(s->root, p, &h, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		char *name = NULL;
		snprintf(p, sizeof(p), "sys/block/%s/dm/name", h[i]);
		if (strncmp(h[i], "dm-", 3) == 0 && ns_read_str(s->root, p, &name) == 0)
			r = add(s, d->name, "holder", "held by %s (device-mapper %s)", h[i], name);
		else if (strncmp(h[i], "md", 2) == 0)
			r = add(s, d->name, "holder", "held by %s (md array)", h[i]);
		else if (strncmp(h[i], "bcache", 6) == 0)
			r = add(s, d->name, "holder", "held by %s (bcache)", h[i]);
		else
			r = add(s, d->name, "holder", "held by %s", h[i]);
		free(name);
	}
	ns_strv_free(h, n);
	return r;
}

static int scan_swaps(struct scan *s)
{
	char *txt = NULL, *save = NULL;
	int r = 0;

	if (ns_read_str(s->root, "proc/swaps", &txt) < 0)
		return 0;
	for (char *line = strtok_r(txt, "\n", &save); line && r == 0; line = strtok_r(NULL, "\n", &save)) {
		char file[PATH_MAX];
		struct dev *d = NULL;
		struct stat st;
		if (sscanf(line, "%4095s", file) != 1 || file[0] != '/')
			continue; /* the header */
		unescape(file);
		/* by device number where the kernel's name can be looked up here, else by name */
		if (s->live && ns_stat(s->root, file, &st) == 0) {
			if (S_ISBLK(st.st_mode))
				d = dev_by_num(s, major(st.st_rdev), minor(st.st_rdev));
		} else {
			d = dev_by_path(s, file);
		}
		if (d)
			r = add(s, d->name, "swap", "used as swap (%s)", file);
	}
	free(txt);
	return r;
}

/* ---- kernel users: loop devices, nvmet namespaces, LIO backstores, Xen blkback ----
 * None of them shows as a mount, a descriptor or a holder link, none takes a reference on the
 * disk's driver, and only LIO's iblock claims the disk exclusively (unnamed). Each names its
 * disk by a path (a device node, a /dev/disk/by-* link, a file on a file system) or a device
 * number: resolved through the root to a device number, then to one of devs directly or
 * through the dm/md devices stacked on it. */

/* One of devs that the block device maj:min is, or sits on (through dm/md slaves); NULL if none. */
static struct dev *dev_under(struct scan *s, unsigned maj, unsigned min)
{
	char p[64], *name = NULL, **stack = NULL;
	size_t n = 0;
	struct dev *d = dev_by_num(s, maj, min);

	if (d || maj == 0)
		return d; /* an anonymous device (tmpfs, btrfs) is the mount's to tell */
	snprintf(p, sizeof(p), "sys/dev/block/%u:%u", maj, min);
	if (ns_readlink_base(s->root, p, &name) < 0)
		return NULL;
	if (stack_add(s, &stack, &n, name, 0) == 0)
		for (size_t k = 0; k < n && !d; k++)
			d = dev_by_name(s, stack[k]);
	ns_strv_free(stack, n);
	free(name);
	return d;
}

/* The file system path lies on (the longest mount point over it in our table; under a sysroot
 * pid 1's): one of devs, or NULL. *found says whether any mount covers path. */
static int dev_of_mount(struct scan *s, const char *path, struct dev **out, bool *found)
{
	char *txt = NULL, *save = NULL;
	size_t best = 0;
	struct mnt m, bm = {0};
	int r;

	*out = NULL;
	*found = false;
	r = ns_read_str(s->root, s->live ? "proc/self/mountinfo" : "proc/1/mountinfo", &txt);
	if (r < 0)
		return r == -ENOENT || r == -ENODATA ? 0 : r;
	for (char *line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t len;
		if (!parse_mount(line, &m))
			continue;
		len = strlen(m.point);
		if (strcmp(m.point, "/") == 0)
			len = 0;
		else if (strncmp(path, m.point, len) != 0 || (path[len] != '/' && path[len] != '\0'))
			continue;
		/* the longest point; at one point, the last mount (it covers the earlier ones) */
		if (!*found || len >= best) {
			*found = true;
			best = len;
			bm = m;
		}
	}
	if (*found && bm.maj)
		*out = dev_under(s, bm.maj, bm.min);
	else if (*found && strcmp(bm.fstype, "btrfs") == 0) {
		/* a file in a subvolume has a device number of its own: by the members */
		struct btrfs_fs *b = btrfs_of_source(s, bm.source);
		for (size_t k = 0; b && k < b->nmembers && !*out; k++)
			*out = dev_by_name(s, b->members[k]);
	}
	free(txt);
	return 0;
}

/*
 * What path (as the kernel names a user's device or file) lies on: *out one of devs or NULL
 * (on none of them). A device node by its st_rdev, a file by its st_dev and by the mount over
 * it (on the live root; a captured tree has no device nodes: a /dev name, or a link under
 * /dev, by the name it resolves to). -ENOENT (or another -errno) when it cannot be resolved:
 * deleted, unreadable, not there.
 */
static int resolve_user_path(struct scan *s, const char *path, struct dev **out)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(path);
	struct stat st;
	bool found;
	int r;

	*out = NULL;
	if (path[0] != '/' || (n >= sizeof(deleted) - 1 && strcmp(path + n - (sizeof(deleted) - 1), deleted) == 0))
		return -ENOENT;
	if (s->live) {
		r = ns_stat(s->root, path, &st);
		if (r < 0)
			return r;
		if (S_ISBLK(st.st_mode)) {
			*out = dev_under(s, major(st.st_rdev), minor(st.st_rdev));
			return 0;
		}
		*out = dev_under(s, major(st.st_dev), minor(st.st_dev));
	} else if (strncmp(path, "/dev/", 5) == 0) {
		char *real = NULL, *txt = NULL, p[PATH_MAX];
		const char *name = path + 5;
		unsigned maj, min;
		if (ns_realpath(s->root, path, &real) == 0 && strncmp(real, "dev/", 4) == 0)
			name = real + 4;
		/* a partition is only in class/block; a captured tree may hold only sys/block */
		snprintf(p, sizeof(p), "sys/class/block/%s/dev", name);
		r = strchr(name, '/') ? -ENOENT : ns_read_str(s->root, p, &txt);
		if (r == -ENOENT && !strchr(name, '/')) {
			snprintf(p, sizeof(p), "sys/block/%s/dev", name);
			r = ns_read_str(s->root, p, &txt);
		}
		if (r == 0 && sscanf(txt, "%u:%u", &maj, &min) == 2)
			*out = dev_under(s, maj, min);
		else if (!(*out = dev_by_name(s, name)) && r == 0)
			r = -EINVAL;
		free(txt);
		free(real);
		return *out ? 0 : r;
	}
	if (*out)
		return 0;
	r = dev_of_mount(s, path, out, &found);
	return r < 0 ? r : (found || s->live ? 0 : -ENOENT);
}

/* A user naming a path: refused when it lies on one of devs, refused as unknown when it cannot
 * be resolved (and must_resolve). what names the user ("loop0", "nvmet namespace 1 of ..."). */
static int user_path(struct scan *s, const char *kind, const char *what, const char *field, const char *path,
		     bool must_resolve)
{
	struct dev *d;
	int r = resolve_user_path(s, path, &d);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return must_resolve ? add(s, s->devs[0].name, "unknown-user",
					  "%s: its %s %s cannot be resolved (%s): whether it lies on %s is unknown",
					  what, field, path, strerror(-r), s->devs[0].name)
				    : 0;
	return d ? add(s, d->name, kind, "backs %s (%s %s)", what, field, path) : 0;
}

static int scan_loops(struct scan *s)
{
	char **names;
	size_t n;
	int r = 0;

	if (ns_list_dir(s->root, "sys/block", &names, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		char p[PATH_MAX], *file = NULL;
		int e;
		if (strncmp(names[i], "loop", 4) != 0)
			continue;
		snprintf(p, sizeof(p), "sys/block/%s/loop/backing_file", names[i]);
		e = ns_read_str(s->root, p, &file);
		if (e == 0) {
			r = user_path(s, "loop", names[i], "backing file", file, true);
		} else if (e == -ENOMEM) {
			r = e;
		} else {
			/* no loop/ directory: not bound */
			snprintf(p, sizeof(p), "sys/block/%s/loop", names[i]);
			if (e != -ENOENT || ns_probe(s->root, p) != 0) /* bound, or not told */
				r = add(s, s->devs[0].name, "unknown-user",
					"%s is bound and its backing file cannot be read (/%s/backing_file: %s): "
					"whether it lies on %s is unknown",
					names[i], p, strerror(-e), s->devs[0].name);
		}
		free(file);
	}
	ns_strv_free(names, n);
	return r;
}

/* configfs under sys/kernel/config shows nvmet's and LIO's users only while it is mounted. */
static int configfs_known(struct scan *s, const char *module, const char *dir, const char *what)
{
	char p[64];
	int mod, mounted;

	snprintf(p, sizeof(p), "sys/module/%s", module);
	if ((mod = ns_probe(s->root, p)) == 0 || (mounted = ns_probe(s->root, dir)) == 1)
		return 0;
	if (mod < 0 || mounted < 0)
		return add(s, s->devs[0].name, "unknown-user",
			   "/%s could not be looked at (%s): whether %s uses %s is unknown", mod < 0 ? p : dir,
			   strerror(-(mod < 0 ? mod : mounted)), what, s->devs[0].name);
	return add(s, s->devs[0].name, "unknown-user",
		   "the %s module is loaded and /%s is not there (configfs not mounted at /sys/kernel/config): "
		   "whether %s uses %s is unknown",
		   module, dir, what, s->devs[0].name);
}

static int scan_nvmet(struct scan *s)
{
	char **subs;
	size_t nsubs;
	int r = configfs_known(s, "nvmet", "sys/kernel/config/nvmet", "an NVMe target namespace");

	if (r < 0 || ns_list_dir(s->root, "sys/kernel/config/nvmet/subsystems", &subs, &nsubs) < 0)
		return r;
	for (size_t i = 0; i < nsubs && r == 0; i++) {
		char p[PATH_MAX], **nss;
		size_t nns;
		snprintf(p, sizeof(p), "sys/kernel/config/nvmet/subsystems/%s/namespaces", subs[i]);
		if (ns_list_dir(s->root, p, &nss, &nns) < 0)
			continue;
		for (size_t k = 0; k < nns && r == 0; k++) {
			char *path = NULL, *en = NULL, *what;
			bool enabled;
			snprintf(p, sizeof(p), "sys/kernel/config/nvmet/subsystems/%s/namespaces/%s/enable", subs[i],
				 nss[k]);
			/* unreadable: as if enabled (it may hold the disk) */
			enabled = ns_read_str(s->root, p, &en) < 0 || strcmp(en, "0") != 0;
			snprintf(p, sizeof(p), "sys/kernel/config/nvmet/subsystems/%s/namespaces/%s/device_path",
				 subs[i], nss[k]);
			if (ns_read_str(s->root, p, &path) == 0) {
				what = ns_fmt("nvmet namespace %s of subsystem %s (%s)", nss[k], subs[i],
					      enabled ? "enabled" : "disabled");
				/* a disabled namespace whose path names nothing holds nothing */
				r = what ? user_path(s, "nvmet", what, "device_path", path, enabled) : -ENOMEM;
				free(what);
			}
			free(path);
			free(en);
		}
		ns_strv_free(nss, nns);
	}
	ns_strv_free(subs, nsubs);
	return r;
}

/* LIO backstores: target/core/HBA_N/NAME/udev_path (iblock, pscsi; fileio's file). */
static int scan_lio(struct scan *s)
{
	char **hbas;
	size_t nhbas;
	int r = configfs_known(s, "target_core_mod", "sys/kernel/config/target", "a LIO backstore");

	if (r < 0 || ns_list_dir(s->root, "sys/kernel/config/target/core", &hbas, &nhbas) < 0)
		return r;
	for (size_t i = 0; i < nhbas && r == 0; i++) {
		char p[PATH_MAX], **devs;
		size_t ndevs;
		snprintf(p, sizeof(p), "sys/kernel/config/target/core/%s", hbas[i]);
		if (ns_list_dir(s->root, p, &devs, &ndevs) < 0)
			continue;
		for (size_t k = 0; k < ndevs && r == 0; k++) {
			char *path = NULL, *what;
			snprintf(p, sizeof(p), "sys/kernel/config/target/core/%s/%s/udev_path", hbas[i], devs[k]);
			if (ns_read_str(s->root, p, &path) == 0) {
				what = ns_fmt("LIO backstore %s/%s", hbas[i], devs[k]);
				r = what ? user_path(s, "lio", what, "udev_path", path, true) : -ENOMEM;
				free(what);
			}
			free(path);
		}
		ns_strv_free(devs, ndevs);
	}
	ns_strv_free(hbas, nhbas);
	return r;
}

/* Xen blkback: xen-backend/devices/vbd-DOMID-DEVID/physical_device, "MAJOR:MINOR" in hex. */
static int scan_xen(struct scan *s)
{
	char **vbds;
	size_t n;
	int r = 0;

	if (ns_list_dir(s->root, "sys/bus/xen-backend/devices", &vbds, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		char p[PATH_MAX], *txt = NULL, *colon;
		uint64_t maj, min;
		struct dev *d;
		int e;
		if (strncmp(vbds[i], "vbd-", 4) != 0)
			continue;
		snprintf(p, sizeof(p), "sys/bus/xen-backend/devices/%s/physical_device", vbds[i]);
		e = ns_read_str(s->root, p, &txt);
		colon = e == 0 ? strchr(txt, ':') : NULL;
		if (colon)
			*colon = '\0';
		if (!colon || ns_parse_hex(txt, UINT32_MAX, &maj) < 0 ||
		    ns_parse_hex(colon + 1, UINT32_MAX, &min) < 0) {
			if (colon)
				*colon = ':';
			r = add(s, s->devs[0].name, "unknown-user",
				"Xen blkback %s: its physical device is not known (/%s: %s): whether it is %s is "
				"unknown",
				vbds[i], p, e < 0 ? strerror(-e) : txt, s->devs[0].name);
		} else if ((d = dev_under(s, (unsigned)maj, (unsigned)min))) {
			r = add(s, d->name, "xen-blkback", "backs Xen blkback %s (physical_device %s:%s)", vbds[i], txt,
				colon + 1);
		}
		free(txt);
	}
	ns_strv_free(vbds, n);
	return r;
}

/* An EBUSY claim that a mount, holder, swap or btrfs found already explains is no news. */
static void drop_explained(struct scan *s)
{
	/* LIO's iblock opens its disk exclusively */
	static const char *const claims[] = {"mount", "holder", "swap", "root-fs", "usr-fs", "btrfs", "lio"};
	size_t o = 0;

	for (size_t i = 0; i < s->rep->n; i++) {
		struct ns_inuse_holder *h = &s->rep->v[i];
		bool explained = false;
		if (strcmp(h->kind, "exclusive-open") == 0 && strstr(h->detail, "EBUSY")) {
			const struct dev *hd = dev_by_name(s, h->device);
			for (size_t k = 0; k < s->rep->n && !explained; k++) {
				const struct ns_inuse_holder *e = &s->rep->v[k];
				const struct dev *ed = dev_by_name(s, e->device);
				bool claim = false;
				for (size_t c = 0; c < sizeof(claims) / sizeof(*claims); c++)
					claim |= strcmp(e->kind, claims[c]) == 0;
				/* a claimed partition makes its whole disk busy too */
				explained = claim &&
					    (strcmp(e->device, h->device) == 0 ||
					     (hd && !hd->disk && ed && ed->disk && strcmp(ed->disk, hd->name) == 0));
			}
		}
		if (explained) {
			free(h->device);
			free(h->kind);
			free(h->detail);
		} else {
			s->rep->v[o++] = *h;
		}
	}
	s->rep->n = o;
}

int ns_inuse_check_name(struct ns_root *root, const char *name, struct ns_inuse_report *rep)
{
	struct scan s = {.root = root, .live = ns_root_is_live(root), .rep = rep};
	struct mapcache mc = {0};
	char head[64];
	int r;

	rep->v = NULL;
	rep->n = 0;
	r = add_disk(&s, name);
	if (r == 0 && multipath_head(name, head, sizeof(head))) {
		r = add_disk(&s, head);
		if (r == -ENOENT)
			r = 0;
		else if (r == 0)
			r = add_paths(&s, head);
	} else if (r == 0) {
		r = add_paths(&s, name);
	}
	if (r == 0)
		r = list_pids(&s);
	if (r == 0) {
		ns_readlink(root, "proc/self/ns/mnt", &s.self_ns);
		ns_readlink(root, "proc/1/ns/mnt", &s.pid1_ns);
		if (!s.self_ns && s.pid1_ns)
			s.self_ns = strdup(s.pid1_ns); /* a captured tree: pid 1's namespace is the one */
		r = read_btrfs(&s);
	}
	/* a hidden path disk without a device number has no node: nothing can open it */
	for (size_t i = 0; r == 0 && s.live && i < s.ndevs; i++)
		if (s.devs[i].known || !s.devs[i].path)
			r = probe_exclusive(&s, &s.devs[i]);
	if (r == 0)
		r = scan_mounts(&s);
	if (r == 0)
		r = scan_root_fs(&s);
	for (size_t i = 0; r == 0 && i < s.ndevs; i++)
		r = scan_holders(&s, &s.devs[i]);
	if (r == 0)
		r = scan_swaps(&s);
	if (r == 0)
		r = scan_loops(&s);
	if (r == 0)
		r = scan_nvmet(&s);
	if (r == 0)
		r = scan_lio(&s);
	if (r == 0)
		r = scan_xen(&s);
	for (size_t i = 0; r == 0 && i < s.npids; i++)
		r = scan_fds(&s, s.pids[i]);
	for (size_t i = 0; r == 0 && i < s.npids; i++)
		r = scan_maps(&s, s.pids[i], &mc);
	if (r == 0)
		drop_explained(&s);
	else
		ns_inuse_report_free(rep);
	for (size_t i = 0; i < s.ndevs; i++) {
		free(s.devs[i].name);
		free(s.devs[i].sysdir);
	}
	free(s.devs);
	for (size_t i = 0; i < s.nbtrfs; i++) {
		free(s.btrfs[i].uuid);
		ns_strv_free(s.btrfs[i].members, s.btrfs[i].nmembers);
	}
	free(s.btrfs);
	ns_strv_free(s.pids, s.npids);
	ns_strv_free(mc.keys, mc.n);
	free(mc.maj);
	free(mc.min);
	free(s.self_ns);
	free(s.pid1_ns);
	return r;
}

int ns_inuse_check_disk(struct ns_root *root, const struct ns_disk *d, struct ns_inuse_report *rep)
{
	return ns_inuse_check_name(root, d->name, rep);
}
