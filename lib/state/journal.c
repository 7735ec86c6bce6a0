/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "state/journal.h"

#include "read/diskid.h"
#include "read/irq.h"
#include "base/jsonstrict.h"
#include "base/number.h"
#include "base/testhook.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool get_int(struct json_object *o, const char *key, int *out)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int(v);
	return true;
}

/*
 * The journal is checked like input, by the rules of schema/journal.schema.json ($defs
 * irq_journal), before anything of it is used: each rule below is one of the schema's, and
 * tests/check-journal-schema.py runs a corpus through both. The C check is stricter only where
 * a JSON Schema cannot say it: a CPU list's ranges in order (ns_cpuset_parse_list).
 */

/* One JSON text and nothing after it, no key twice in an object (lib/base/jsonstrict.h). */
struct json_object *ns_journal_parse_json(const char *txt)
{
	struct json_object *doc;

	return ns_json_parse_strict(txt, &doc, NULL) == 0 ? doc : NULL;
}

/* The schema's "cpulist": ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$, and ranges that parse. */
bool ns_journal_cpulist_ok(const char *s)
{
	struct ns_cpuset set = {0};
	const char *p = s;
	bool ok;

	if (!s)
		return false;
	for (;;) {
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return false;
			while (isdigit((unsigned char)*p))
				p++;
		}
		if (!*p)
			break;
		if (*p++ != ',')
			return false;
	}
	ok = ns_cpuset_parse_list(&set, s) == 0 && set.known;
	ns_cpuset_clear(&set);
	return ok;
}

/* ^[0-9]+(\*[0-9]+)?(,[0-9]+(\*[0-9]+)?)*$, at most NS_COUNTS_MAX_CPUS values (lib/read/irq.h) */
static bool counts_ok(const char *s)
{
	struct ns_counts c;

	if (ns_counts_parse_runs(s, &c) < 0)
		return false;
	ns_counts_free(&c);
	return true;
}

/* A PCI function's address: ^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$ */
static bool pci_ok(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	if (n < 4 || n > 8 || s[n] != ':')
		return false;
	s += n + 1;
	return strspn(s, "0123456789abcdef") == 2 && s[2] == ':' && strspn(s + 3, "0123456789abcdef") == 2 &&
	       s[5] == '.' && s[6] >= '0' && s[6] <= '7' && !s[7];
}

/* A JSON integer (json-c reads 2.0 as a double; the schema's "integer" takes it) in [min, max]. */
static bool int_in(struct json_object *v, long long min, long long max, long long *out)
{
	long long x;

	if (json_object_is_type(v, json_type_int)) {
		errno = 0;
		x = json_object_get_int64(v);
		if (errno || (x == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX))
			return false;
	} else if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);
		if (!(d >= (double)min && d <= (double)max) || d != (double)(long long)d)
			return false;
		x = (long long)d;
	} else {
		return false;
	}
	if (x < min || x > max)
		return false;
	if (out)
		*out = x;
	return true;
}

static const char *type_name(struct json_object *v)
{
	switch (v ? json_object_get_type(v) : json_type_null) {
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
		return "a number";
	case json_type_int:
		return "an integer";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	default:
		return "null";
	}
}

#define BAD(...)                                        \
	do {                                            \
		if (problem)                            \
			*problem = ns_fmt(__VA_ARGS__); \
		return -EINVAL;                         \
	} while (0)

static int check_irq_entry(struct json_object *e, size_t i, char **problem)
{
	static const char *const keys[] = {"pci", "name", "irq", "previous", "placed", "counts", NULL};
	static const char *const cpulists[] = {"previous", "placed"};
	struct json_object *v;
	const char *bad;

	if (!json_object_is_type(e, json_type_object))
		BAD("irqs[%zu] is %s, not an object", i, type_name(e));
	if (!ns_json_only_keys(e, keys, &bad))
		BAD("irqs[%zu] has an unknown key \"%.40s\"", i, bad);
	if (!json_object_object_get_ex(e, "pci", &v) || !json_object_is_type(v, json_type_string) ||
	    !pci_ok(json_object_get_string(v)))
		BAD("irqs[%zu].pci is missing or not a PCI address", i);
	if (!json_object_object_get_ex(e, "name", &v) || !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) < 1 || json_object_get_string_len(v) > 256)
		BAD("irqs[%zu].name is missing or not a string of 1 to 256 bytes", i);
	if (!json_object_object_get_ex(e, "irq", &v) || (v && !int_in(v, 0, INT32_MAX, NULL)))
		BAD("irqs[%zu].irq is missing or not null or an IRQ number", i);
	for (size_t k = 0; k < 2; k++)
		if (!json_object_object_get_ex(e, cpulists[k], &v) || !json_object_is_type(v, json_type_string) ||
		    !ns_journal_cpulist_ok(json_object_get_string(v)))
			BAD("irqs[%zu].%s is missing or not a CPU list", i, cpulists[k]);
	if (json_object_object_get_ex(e, "counts", &v) &&
	    (!json_object_is_type(v, json_type_string) || !counts_ok(json_object_get_string(v))))
		BAD("irqs[%zu].counts is not a list of counts", i);
	return 0;
}

static int check_rq_entry(struct json_object *e, size_t i, char **problem)
{
	static const char *const keys[] = {"disk", "device", "previous", "placed", NULL};
	static const char *const values[] = {"previous", "placed"};
	struct json_object *v;
	const char *bad, *disk;

	if (!json_object_is_type(e, json_type_object))
		BAD("rq_affinity[%zu] is %s, not an object", i, type_name(e));
	if (!ns_json_only_keys(e, keys, &bad))
		BAD("rq_affinity[%zu] has an unknown key \"%.40s\"", i, bad);
	if (!json_object_object_get_ex(e, "disk", &v) || !json_object_is_type(v, json_type_string) ||
	    (disk = json_object_get_string(v),
	     !((strncmp(disk, "wwid:", 5) == 0 && disk[5]) || (strncmp(disk, "serial:", 7) == 0 && disk[7]))))
		BAD("rq_affinity[%zu].disk is missing or not a disk identity (wwid:... or serial:...)", i);
	if (!json_object_object_get_ex(e, "device", &v) || (v && !json_object_is_type(v, json_type_string)))
		BAD("rq_affinity[%zu].device is missing or not a string or null", i);
	for (size_t k = 0; k < 2; k++)
		if (!json_object_object_get_ex(e, values[k], &v) || !int_in(v, 0, 2, NULL))
			BAD("rq_affinity[%zu].%s is missing or not 0, 1 or 2", i, values[k]);
	return 0;
}

/* The whole document; -EPROTO (with *version) for a journal of another version. */
static int check_doc(struct json_object *doc, int *version, char **problem)
{
	static const char *const keys[] = {"version", "boot_id", "irqs", "rq_affinity", "probe", NULL};
	struct json_object *v, *arr;
	const char *bad;
	long long ver;
	int r;

	if (!doc)
		BAD("it is not JSON");
	if (!json_object_is_type(doc, json_type_object))
		BAD("it is %s, not an object", type_name(doc));
	if (!json_object_object_get_ex(doc, "version", &v) || !int_in(v, INT32_MIN, INT32_MAX, &ver))
		BAD("its version is missing or not an integer");
	*version = (int)ver;
	if (ver != NS_JOURNAL_VERSION)
		return -EPROTO; /* another numastor's format: nothing of it is trusted */
	if (!ns_json_only_keys(doc, keys, &bad))
		BAD("it has an unknown key \"%.40s\"", bad);
	if (!json_object_object_get_ex(doc, "boot_id", &v) ||
	    (v && (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) < 1 ||
		   json_object_get_string_len(v) > 64)))
		BAD("its boot_id is missing or not null or a boot id");
	arr = NULL;
	if (!json_object_object_get_ex(doc, "irqs", &arr) || !json_object_is_type(arr, json_type_array))
		BAD("its \"irqs\" is %s, not an array", arr ? type_name(arr) : "missing");
	for (size_t i = 0; i < json_object_array_length(arr); i++)
		if ((r = check_irq_entry(json_object_array_get_idx(arr, i), i, problem)) < 0)
			return r;
	arr = NULL;
	if (!json_object_object_get_ex(doc, "rq_affinity", &arr) || !json_object_is_type(arr, json_type_array))
		BAD("its \"rq_affinity\" is %s, not an array", arr ? type_name(arr) : "missing");
	for (size_t i = 0; i < json_object_array_length(arr); i++)
		if ((r = check_rq_entry(json_object_array_get_idx(arr, i), i, problem)) < 0)
			return r;
	/* fix --probe's measurements (optional): a record for the operator, never acted on */
	if (json_object_object_get_ex(doc, "probe", &v) && !json_object_is_type(v, json_type_object))
		BAD("its \"probe\" is %s, not an object", type_name(v));
	return 0;
}

/* Read and check; *doc holds the document on 0. */
static int read_checked(struct ns_root *root, struct json_object **doc, int *version, char **problem)
{
	char *txt;
	int r;

	*doc = NULL;
	*version = 0;
	if (problem)
		*problem = NULL;
	r = ns_read_text_max(root, NS_JOURNAL_PATH, ns_journal_max(), &txt);
	if (r == -ENODATA)
		BAD("it is empty");
	if (r == -EBADMSG)
		BAD("it holds NUL bytes, which numastor never writes: zero-filled blocks after a crash?");
	if (r == -EFBIG)
		BAD("it is larger than the %zu bytes numastor ever writes", ns_journal_max());
	if (r < 0)
		return r;
	r = ns_json_parse_strict(txt, doc, problem);
	free(txt);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return -EINVAL;
	r = check_doc(*doc, version, problem);
	if (r < 0) {
		json_object_put(*doc);
		*doc = NULL;
	}
	return r;
}

int ns_journal_check(struct ns_root *root, int *version, char **problem)
{
	struct json_object *doc;
	int v, r = read_checked(root, &doc, &v, problem);

	if (version)
		*version = v;
	json_object_put(doc);
	return r;
}

int ns_journal_load(struct ns_root *root, struct ns_journal *j)
{
	struct json_object *doc, *arr;
	int r, version;

	memset(j, 0, sizeof(*j));
	r = read_checked(root, &doc, &version, NULL);
	j->version = version;
	if (r < 0)
		return r;
	j->version = version;
	j->boot_id = dup_or_null(get_str(doc, "boot_id"));
	if (json_object_object_get_ex(doc, "irqs", &arr) && json_object_is_type(arr, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *e = json_object_array_get_idx(arr, i);
			int n = -1;
			/* without its function and name an entry cannot be found again: malformed */
			if (!get_str(e, "pci") || !get_str(e, "name") || !get_str(e, "previous") ||
			    !get_str(e, "placed")) {
				r = -EINVAL;
				goto bad;
			}
			get_int(e, "irq", &n);
			r = ns_journal_put_irq(j, get_str(e, "pci"), get_str(e, "name"), n, get_str(e, "previous"),
					       get_str(e, "placed"));
			/* optional (older journals lack it): without it, check counts since boot */
			if (r == 0 && get_str(e, "counts"))
				r = ns_journal_set_irq_counts(j, get_str(e, "pci"), get_str(e, "name"),
							      get_str(e, "counts"));
			if (r < 0)
				goto bad;
		}
	}
	if (json_object_object_get_ex(doc, "rq_affinity", &arr) && json_object_is_type(arr, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *e = json_object_array_get_idx(arr, i);
			int prev, placed;
			if (!get_str(e, "disk") || !get_int(e, "previous", &prev) || !get_int(e, "placed", &placed)) {
				r = -EINVAL;
				goto bad;
			}
			r = ns_journal_put_rq(j, get_str(e, "disk"), get_str(e, "device"), prev, placed);
			if (r < 0)
				goto bad;
		}
	}
	{
		struct json_object *probe;
		if (json_object_object_get_ex(doc, "probe", &probe) && probe) {
			j->probe = strdup(json_object_to_json_string_ext(probe, JSON_C_TO_STRING_PLAIN));
			if (!j->probe) {
				r = -ENOMEM;
				goto bad;
			}
		}
	}
	json_object_put(doc);
	return 0;
bad:
	json_object_put(doc);
	ns_journal_free(j);
	return r;
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

int ns_state_dir_check(struct ns_root *root, const char *dir, char **problem)
{
	char path[512], *save = NULL, *comp;
	int fd, r = 0;
	struct stat st;
	size_t done = 0;

	*problem = NULL;
	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(ns_root_path(root), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* each component inside the root: a directory, never a symlink (which would send the
	 * journal and the lock elsewhere); the state directory itself root's and 0755 at most */
	for (comp = strtok_r(path, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		bool last;
		int next;
		done += strlen(comp) + 1;
		last = done >= strlen(dir);
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			*problem = ns_fmt("/%.*s is a symlink", (int)(done - 1), dir);
			r = -ELOOP;
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			*problem = ns_fmt("/%.*s is not a directory", (int)(done - 1), dir);
			r = -ENOTDIR;
			break;
		}
		if (last && st.st_uid != 0 && (ns_root_is_live(root) || st.st_uid != geteuid())) {
			*problem = ns_fmt("/%s is owned by uid %u, not by root", dir, (unsigned)st.st_uid);
			r = -EPERM;
			break;
		}
		if (last && (st.st_mode & (S_IWGRP | S_IWOTH))) {
			*problem = ns_fmt("/%s is %s-writable (mode %04o)", dir,
					  st.st_mode & S_IWOTH ? "world" : "group", (unsigned)(st.st_mode & 07777));
			r = -EPERM;
			break;
		}
		next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			r = -errno;
			break;
		}
		close(fd);
		fd = next;
	}
	close(fd);
	if (r < 0 && r != -ENOENT && !*problem)
		*problem = ns_fmt("/%s cannot be checked: %s", dir, strerror(-r));
	return r;
}

int ns_state_dir_ensure(struct ns_root *root, const char *dir, char **problem)
{
	int r = ns_state_dir_check(root, dir, problem);

	if (r == -ENOENT) {
		r = ns_mkdir_p(root, dir);
		if (r == 0)
			r = ns_state_dir_check(root, dir, problem);
		if (r < 0 && !*problem)
			*problem = ns_fmt("/%s cannot be made: %s", dir, strerror(-r));
	}
	return r;
}

/* The document; with_counts false leaves every entry's counts out. NULL when j->probe is not an
 * object's JSON text. */
static struct json_object *journal_doc(const struct ns_journal *j, bool with_counts)
{
	struct json_object *doc = json_object_new_object(), *irqs = json_object_new_array(),
			   *rqs = json_object_new_array();

	json_object_object_add(doc, "version", json_object_new_int(NS_JOURNAL_VERSION));
	json_object_object_add(doc, "boot_id", str_or_null(j->boot_id));
	for (size_t i = 0; i < j->nirqs; i++) {
		const struct ns_journal_irq *x = &j->irqs[i];
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "pci", json_object_new_string(x->pci));
		json_object_object_add(e, "name", json_object_new_string(x->name));
		json_object_object_add(e, "irq", x->irq >= 0 ? json_object_new_int(x->irq) : NULL);
		json_object_object_add(e, "previous", json_object_new_string(x->previous));
		json_object_object_add(e, "placed", json_object_new_string(x->placed));
		if (x->counts && with_counts)
			json_object_object_add(e, "counts", json_object_new_string(x->counts));
		json_object_array_add(irqs, e);
	}
	json_object_object_add(doc, "irqs", irqs);
	for (size_t i = 0; i < j->nrqs; i++) {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "disk", json_object_new_string(j->rqs[i].disk));
		json_object_object_add(e, "device", str_or_null(j->rqs[i].device));
		json_object_object_add(e, "previous", json_object_new_int(j->rqs[i].previous));
		json_object_object_add(e, "placed", json_object_new_int(j->rqs[i].placed));
		json_object_array_add(rqs, e);
	}
	json_object_object_add(doc, "rq_affinity", rqs);
	if (j->probe) {
		struct json_object *probe = json_tokener_parse(j->probe);
		if (!probe || !json_object_is_type(probe, json_type_object)) {
			json_object_put(probe);
			json_object_put(doc);
			return NULL;
		}
		json_object_object_add(doc, "probe", probe);
	}
	return doc;
}

size_t ns_journal_max(void)
{
	const char *v = ns_test_hook("NUMASTOR_TEST_JOURNAL_MAX");
	uint64_t n;

	return v && ns_parse_u64(v, &n) == 0 && n > 0 && n < NS_JOURNAL_MAX ? (size_t)n : NS_JOURNAL_MAX;
}

int ns_journal_save(struct ns_root *root, const struct ns_journal *j)
{
	struct json_object *doc = journal_doc(j, true);
	const char *txt;
	int r;

	if (!doc)
		return -EINVAL;
	txt = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (txt && strlen(txt) > ns_journal_max()) {
		/* what the reader could not read back is never written: the counts at placement go
		 * first (check then counts since boot, and says so), the undo never */
		json_object_put(doc);
		doc = journal_doc(j, false);
		txt = doc ? json_object_to_json_string_ext(doc,
							   JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE)
			  : NULL;
	}
	r = !doc ? -EINVAL : !txt ? -ENOMEM : strlen(txt) > ns_journal_max() ? -EFBIG : 0;
	if (r == 0) {
		char *why = NULL;
		r = ns_state_dir_ensure(root, NS_STATE_DIR, &why);
		free(why);
	}
	if (r == 0)
		r = ns_write_atomic(root, NS_JOURNAL_PATH, txt, 0644);
	json_object_put(doc);
	return r;
}

int ns_journal_remove(struct ns_root *root)
{
	int r = ns_unlink(root, NS_JOURNAL_PATH);
	return r == -ENOENT ? 0 : r;
}

void ns_journal_free(struct ns_journal *j)
{
	for (size_t i = 0; i < j->nirqs; i++) {
		free(j->irqs[i].pci);
		free(j->irqs[i].name);
		free(j->irqs[i].previous);
		free(j->irqs[i].placed);
		free(j->irqs[i].counts);
	}
	free(j->irqs);
	for (size_t i = 0; i < j->nrqs; i++) {
		free(j->rqs[i].disk);
		free(j->rqs[i].device);
	}
	free(j->rqs);
	free(j->boot_id);
	free(j->probe);
	memset(j, 0, sizeof(*j));
}

char *ns_journal_read_boot_id(struct ns_root *root)
{
	char *id = NULL;
	ns_read_str(root, "proc/sys/kernel/random/boot_id", &id);
	return id;
}

bool ns_journal_same_boot(const struct ns_journal *j, const char *boot_id)
{
	if (!j->boot_id || !boot_id)
		return !j->boot_id && !boot_id;
	return strcmp(j->boot_id, boot_id) == 0;
}

const struct ns_journal_irq *ns_journal_find_irq(const struct ns_journal *j, const char *pci, const char *name)
{
	if (!pci || !name)
		return NULL;
	for (size_t i = 0; i < j->nirqs; i++)
		if (strcmp(j->irqs[i].pci, pci) == 0 && strcmp(j->irqs[i].name, name) == 0)
			return &j->irqs[i];
	return NULL;
}

/* A PCI address is one path component ("0000:00:04.0"), never a way out of sys/bus/pci. */
static bool plain_name(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* PCI function pci's IRQ numbers now: its msi_irqs entries, else its INTx irq. */
static int pci_irqs(struct ns_root *root, const char *pci, int **nums, size_t *n)
{
	char path[256], **names = NULL;
	size_t nnames = 0;
	long v;
	int r;

	*nums = NULL, *n = 0;
	if (!plain_name(pci))
		return -EINVAL;
	snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/msi_irqs", pci);
	r = ns_list_dir(root, path, &names, &nnames);
	if (r == 0 && nnames > 0) {
		*nums = calloc(nnames, sizeof(**nums));
		if (!*nums) {
			ns_strv_free(names, nnames);
			return -ENOMEM;
		}
		for (size_t i = 0; i < nnames; i++) {
			char *end;
			v = strtol(names[i], &end, 10);
			if (*end || end == names[i] || v < 0)
				continue;
			(*nums)[(*n)++] = (int)v;
		}
		ns_strv_free(names, nnames);
		return 0;
	}
	ns_strv_free(names, nnames);
	snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/irq", pci);
	r = ns_read_long(root, path, &v, NULL);
	if (r < 0)
		return r; /* the function is gone */
	if (v > 0) {
		*nums = malloc(sizeof(**nums));
		if (!*nums)
			return -ENOMEM;
		(*nums)[(*n)++] = (int)v;
	}
	return 0;
}

bool ns_journal_irq_of_pci(struct ns_root *root, const char *pci, int n)
{
	int *nums;
	size_t nn;
	bool yes = false;

	if (pci_irqs(root, pci, &nums, &nn) < 0)
		return false;
	for (size_t i = 0; i < nn; i++)
		yes |= nums[i] == n;
	free(nums);
	return yes;
}

int ns_journal_locate_irq(struct ns_root *root, const struct ns_journal_irq *e, int *irq)
{
	int *nums, r, found = 0;
	size_t nn;

	*irq = -1;
	r = pci_irqs(root, e->pci, &nums, &nn);
	if (r < 0)
		return r == -ENOMEM ? r : -ENOENT;
	for (size_t i = 0; i < nn; i++) {
		char *name = ns_irq_first_action(root, nums[i]);
		if (name && strcmp(name, e->name) == 0) {
			*irq = nums[i];
			found++;
		}
		free(name);
	}
	free(nums);
	if (found > 1)
		*irq = -1;
	return found == 1 ? 0 : found ? -EEXIST : -ENOENT;
}

static bool hidden(struct ns_root *root, const char *disk)
{
	char path[512];
	long v = 0;
	snprintf(path, sizeof(path), "sys/block/%s/hidden", disk);
	return ns_read_long(root, path, &v, NULL) == 0 && v == 1;
}

int ns_journal_locate_disk(struct ns_root *root, const struct ns_journal_rq *e, char **disk)
{
	char **names = NULL;
	size_t n = 0, found[2] = {0, 0};
	const char *first[2] = {NULL, NULL};
	int r;

	*disk = NULL;
	r = ns_list_dir(root, "sys/block", &names, &n);
	if (r < 0)
		return r == -ENOMEM ? r : -ENOENT;
	for (size_t i = 0; i < n; i++) {
		char *id = NULL;
		if (ns_diskid_from_sysfs(root, names[i], &id) == 0 && strcmp(id, e->disk) == 0) {
			/* a multipath head and its hidden per-path disks share the identity: the head is it */
			int h = hidden(root, names[i]);
			if (!found[h]++)
				first[h] = names[i];
		}
		free(id);
	}
	for (int h = 0; h < 2 && r == 0; h++) {
		if (found[h] == 1) {
			*disk = strdup(first[h]);
			r = *disk ? 0 : -ENOMEM;
			break;
		}
		if (found[h] > 1)
			r = -EEXIST;
	}
	if (r == 0 && !*disk)
		r = -ENOENT;
	ns_strv_free(names, n);
	return r;
}

int ns_journal_put_irq(struct ns_journal *j, const char *pci, const char *name, int irq, const char *previous,
		       const char *placed)
{
	struct ns_journal_irq *nv, *e;

	for (size_t i = 0; i < j->nirqs; i++) {
		e = &j->irqs[i];
		if (strcmp(e->pci, pci) == 0 && strcmp(e->name, name) == 0) {
			char *p = strdup(placed);
			if (!p)
				return -ENOMEM;
			free(e->placed);
			e->placed = p;
			e->irq = irq;
			return 0;
		}
	}
	nv = realloc(j->irqs, (j->nirqs + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	j->irqs = nv;
	e = &nv[j->nirqs];
	e->pci = strdup(pci);
	e->name = strdup(name);
	e->irq = irq;
	e->previous = strdup(previous);
	e->placed = strdup(placed);
	e->counts = NULL;
	if (!e->pci || !e->name || !e->previous || !e->placed) {
		free(e->pci);
		free(e->name);
		free(e->previous);
		free(e->placed);
		return -ENOMEM;
	}
	j->nirqs++;
	return 0;
}

int ns_journal_set_irq_counts(struct ns_journal *j, const char *pci, const char *name, const char *counts)
{
	for (size_t i = 0; i < j->nirqs; i++) {
		struct ns_journal_irq *e = &j->irqs[i];
		if (strcmp(e->pci, pci) == 0 && strcmp(e->name, name) == 0) {
			char *c = counts ? strdup(counts) : NULL;
			if (counts && !c)
				return -ENOMEM;
			free(e->counts);
			e->counts = c;
			return 0;
		}
	}
	return -ENOENT;
}

int ns_journal_put_rq(struct ns_journal *j, const char *disk, const char *device, int previous, int placed)
{
	struct ns_journal_rq *nv, *e;

	for (size_t i = 0; i < j->nrqs; i++)
		if (strcmp(j->rqs[i].disk, disk) == 0) {
			j->rqs[i].placed = placed;
			return 0;
		}
	nv = realloc(j->rqs, (j->nrqs + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	j->rqs = nv;
	e = &nv[j->nrqs];
	e->disk = strdup(disk);
	e->device = dup_or_null(device);
	if (!e->disk || (device && !e->device)) {
		free(e->disk);
		free(e->device);
		return -ENOMEM;
	}
	e->previous = previous;
	e->placed = placed;
	j->nrqs++;
	return 0;
}

bool ns_journal_irq_placed(const struct ns_journal_irq *e, const struct ns_cpuset *current)
{
	struct ns_cpuset placed = {0};
	bool yes;

	if (!e || !e->placed || !current->known || ns_cpuset_parse_list(&placed, e->placed) < 0)
		return false;
	yes = ns_cpuset_equal(&placed, current);
	ns_cpuset_clear(&placed);
	return yes;
}
