/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "state/swapjournal.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "state/journal.h"
#include "base/jsonstrict.h"
#include "base/util.h"

#define SWAP_JOURNAL_VERSION 1

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

/* A string or null; anything else is malformed. */
static int jstr_or_null(struct json_object *o, const char *k, char **out)
{
	struct json_object *v;
	*out = NULL;
	if (!json_object_object_get_ex(o, k, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -EINVAL;
	*out = strdup(json_object_get_string(v));
	return *out ? 0 : -ENOMEM;
}

static int jbool(struct json_object *o, const char *k, bool *out)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_boolean))
		return -EINVAL;
	*out = json_object_get_boolean(v);
	return 0;
}

/* A required array of strings. */
static int jstrv(struct json_object *o, const char *k, char ***v, size_t *n)
{
	struct json_object *a;
	if (!json_object_object_get_ex(o, k, &a) || !json_object_is_type(a, json_type_array))
		return -EINVAL;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *e = json_object_array_get_idx(a, i);
		int r;
		if (!json_object_is_type(e, json_type_string) || !json_object_get_string_len(e))
			return -EINVAL;
		r = ns_strv_add(v, n, json_object_get_string(e));
		if (r < 0)
			return r;
	}
	return 0;
}

/* A journal's own paths stay inside numastor's places: never ".." and never absolute. */
static bool safe_rel(const char *p)
{
	return p && p[0] && p[0] != '/' && !strstr(p, "..");
}

/* A plain file name: no '/', not "." or "..". */
static bool plain(const char *s, size_t n)
{
	return n > 0 && !memchr(s, '/', n) && !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' && s[1] == '.');
}

bool ns_swap_installed_ok(const char *release, const char *path)
{
	size_t rl = release ? strlen(release) : 0;
	const char *file;

	if (!path || !plain(release ? release : "", rl) || strncmp(path, "lib/modules/", 12) != 0 ||
	    strncmp(path + 12, release, rl) != 0 || strncmp(path + 12 + rl, "/updates/numastor/", 18) != 0)
		return false;
	file = path + 12 + rl + 18;
	return plain(file, strlen(file));
}

char *ns_swap_initramfs_new(const char *release)
{
	if (!release || !plain(release, strlen(release)))
		return NULL;
	return ns_fmt("boot/initrd.img-%s.numastor-new", release);
}

int ns_swap_installed_resolves(struct ns_root *root, const char *release, const char *path)
{
	char *dir = NULL, *real = NULL, *real_want = NULL,
	     *want = ns_fmt("lib/modules/%s/updates/numastor", release ? release : "");
	struct stat st;
	int r;

	if (!want)
		return -ENOMEM;
	if (!ns_swap_installed_ok(release, path)) {
		free(want);
		return -EINVAL;
	}
	dir = strndup(path, (size_t)(strrchr(path, '/') - path));
	r = dir ? ns_realpath(root, dir, &real) : -ENOMEM;
	/* no link below lib/modules leads out of the release's own numastor directory; above it
	 * one may (merged /usr: /lib is a link to usr/lib) */
	if (r == 0)
		r = ns_realpath(root, "lib/modules", &real_want);
	if (r == 0) {
		char *expect = ns_fmt("%s/%s", real_want, want + strlen("lib/modules/"));
		r = !expect ? -ENOMEM : strcmp(real, expect) != 0 ? -EXDEV : 0;
		free(expect);
	}
	if (r == 0) {
		char *abs = ns_fmt("%s/%s", ns_root_path(root), path);
		r = !abs ? -ENOMEM : lstat(abs, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EXDEV;
		free(abs);
	}
	free(dir);
	free(real);
	free(real_want);
	free(want);
	return r;
}

/* The keys ns_swap_journal_save writes, and no other (nor one twice: lib/base/jsonstrict.h): a swap
 * journal with others was not written by this numastor, and is refused whole and kept. */
static const char *const top_keys[] = {"version",   "boot_id",		 "kernel_release", "runtime",
				       "groups",    "modules",		 "removed_pci",	   "disks",
				       "installed", "initramfs_updated", "initramfs_new",  NULL};
static const char *const module_keys[] = {"name", "loaded", "stock_path", "srcversion", "options", "replacement", NULL};
static const char *const disk_keys[] = {"id", "name", "pci", "hba", NULL};

int ns_swap_journal_load(struct ns_root *root, struct ns_swap_journal *j)
{
	struct json_object *doc, *a, *v;
	char *txt;
	int r;

	memset(j, 0, sizeof(*j));
	r = ns_read_text(root, NS_SWAP_JOURNAL_PATH, &txt);
	if (r < 0) /* empty, or NUL bytes in it: malformed */
		return r == -ENODATA || r == -EBADMSG ? -EINVAL : r;
	r = ns_json_parse_strict(txt, &doc, NULL);
	free(txt);
	if (r == -ENOMEM)
		return r;
	r = -EINVAL;
	if (!doc || !json_object_is_type(doc, json_type_object) || !json_object_object_get_ex(doc, "version", &v) ||
	    !json_object_is_type(v, json_type_int) || json_object_get_int(v) != SWAP_JOURNAL_VERSION ||
	    !ns_json_only_keys(doc, top_keys, NULL))
		goto bad;
	if ((r = jstr_or_null(doc, "boot_id", &j->boot_id)) < 0 ||
	    (r = jstr_or_null(doc, "kernel_release", &j->kernel_release)) < 0 ||
	    (r = jbool(doc, "runtime", &j->runtime)) < 0 ||
	    (r = jbool(doc, "initramfs_updated", &j->initramfs_updated)) < 0 ||
	    (r = jstrv(doc, "groups", &j->groups, &j->ngroups)) < 0 ||
	    (r = jstrv(doc, "removed_pci", &j->removed_pci, &j->nremoved_pci)) < 0 ||
	    (r = jstrv(doc, "installed", &j->installed, &j->ninstalled)) < 0)
		goto bad;
	r = -EINVAL;
	for (size_t i = 0; i < j->ninstalled; i++)
		if (!ns_swap_installed_ok(j->kernel_release, j->installed[i]))
			goto bad;
	/* optional (older journals lack it), and only ever the one name numastor builds into */
	if ((r = jstr_or_null(doc, "initramfs_new", &j->initramfs_new)) < 0)
		goto bad;
	if (j->initramfs_new) {
		char *want = ns_swap_initramfs_new(j->kernel_release);
		bool ok = want && strcmp(want, j->initramfs_new) == 0;
		free(want);
		r = -EINVAL;
		if (!ok)
			goto bad;
	}
	r = -EINVAL;
	if (!json_object_object_get_ex(doc, "modules", &a) || !json_object_is_type(a, json_type_array))
		goto bad;
	j->modules = calloc(json_object_array_length(a) + 1, sizeof(*j->modules));
	if (!j->modules) {
		r = -ENOMEM;
		goto bad;
	}
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *e = json_object_array_get_idx(a, i);
		struct ns_swap_jmodule *m = &j->modules[j->nmodules++];
		const char *name = json_object_is_type(e, json_type_object) ? jstr(e, "name") : NULL;
		r = -EINVAL;
		if (!name || !name[0] || strchr(name, '/') || !ns_json_only_keys(e, module_keys, NULL))
			goto bad;
		if (!(m->name = strdup(name))) {
			r = -ENOMEM;
			goto bad;
		}
		if ((r = jbool(e, "loaded", &m->loaded)) < 0 ||
		    (r = jstr_or_null(e, "stock_path", &m->stock_path)) < 0 ||
		    (r = jstr_or_null(e, "srcversion", &m->srcversion)) < 0 ||
		    (r = jstr_or_null(e, "options", &m->options)) < 0 ||
		    (r = jstr_or_null(e, "replacement", &m->replacement)) < 0)
			goto bad;
		r = -EINVAL;
		if ((m->stock_path && !safe_rel(m->stock_path)) || (m->replacement && !safe_rel(m->replacement)))
			goto bad;
	}
	r = -EINVAL;
	if (!json_object_object_get_ex(doc, "disks", &a) || !json_object_is_type(a, json_type_array))
		goto bad;
	j->disks = calloc(json_object_array_length(a) + 1, sizeof(*j->disks));
	if (!j->disks) {
		r = -ENOMEM;
		goto bad;
	}
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *e = json_object_array_get_idx(a, i);
		struct ns_swap_jdisk *d = &j->disks[j->ndisks++];
		r = -EINVAL;
		if (!json_object_is_type(e, json_type_object) || !ns_json_only_keys(e, disk_keys, NULL))
			goto bad;
		if ((r = jstr_or_null(e, "id", &d->id)) < 0 || (r = jstr_or_null(e, "name", &d->name)) < 0 ||
		    (r = jstr_or_null(e, "pci", &d->pci)) < 0 || (r = jstr_or_null(e, "hba", &d->hba)) < 0)
			goto bad;
		r = -EINVAL;
		if (!d->name)
			goto bad;
	}
	json_object_put(doc);
	return 0;
bad:
	json_object_put(doc);
	ns_swap_journal_free(j);
	return r;
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static struct json_object *strv(char *const *v, size_t n)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

int ns_swap_journal_save(struct ns_root *root, const struct ns_swap_journal *j)
{
	struct json_object *doc = json_object_new_object(), *mods = json_object_new_array(),
			   *disks = json_object_new_array();
	int r;

	json_object_object_add(doc, "version", json_object_new_int(SWAP_JOURNAL_VERSION));
	json_object_object_add(doc, "boot_id", str_or_null(j->boot_id));
	json_object_object_add(doc, "kernel_release", str_or_null(j->kernel_release));
	json_object_object_add(doc, "runtime", json_object_new_boolean(j->runtime));
	json_object_object_add(doc, "groups", strv(j->groups, j->ngroups));
	for (size_t i = 0; i < j->nmodules; i++) {
		const struct ns_swap_jmodule *m = &j->modules[i];
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "name", json_object_new_string(m->name));
		json_object_object_add(e, "loaded", json_object_new_boolean(m->loaded));
		json_object_object_add(e, "stock_path", str_or_null(m->stock_path));
		json_object_object_add(e, "srcversion", str_or_null(m->srcversion));
		json_object_object_add(e, "options", str_or_null(m->options));
		json_object_object_add(e, "replacement", str_or_null(m->replacement));
		json_object_array_add(mods, e);
	}
	json_object_object_add(doc, "modules", mods);
	json_object_object_add(doc, "removed_pci", strv(j->removed_pci, j->nremoved_pci));
	for (size_t i = 0; i < j->ndisks; i++) {
		const struct ns_swap_jdisk *d = &j->disks[i];
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "id", str_or_null(d->id));
		json_object_object_add(e, "name", json_object_new_string(d->name));
		json_object_object_add(e, "pci", str_or_null(d->pci));
		json_object_object_add(e, "hba", str_or_null(d->hba));
		json_object_array_add(disks, e);
	}
	json_object_object_add(doc, "disks", disks);
	json_object_object_add(doc, "installed", strv(j->installed, j->ninstalled));
	json_object_object_add(doc, "initramfs_updated", json_object_new_boolean(j->initramfs_updated));
	if (j->initramfs_new)
		json_object_object_add(doc, "initramfs_new", json_object_new_string(j->initramfs_new));
	{
		char *why = NULL;
		r = ns_state_dir_ensure(root, NS_SWAP_JOURNAL_DIR, &why);
		free(why);
	}
	if (r == 0)
		r = ns_write_atomic(
			root, NS_SWAP_JOURNAL_PATH,
			json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE),
			0600);
	json_object_put(doc);
	return r;
}

int ns_swap_journal_remove(struct ns_root *root)
{
	int r = ns_unlink(root, NS_SWAP_JOURNAL_PATH);
	return r == -ENOENT ? 0 : r;
}

void ns_swap_journal_free(struct ns_swap_journal *j)
{
	for (size_t i = 0; i < j->nmodules; i++) {
		free(j->modules[i].name);
		free(j->modules[i].stock_path);
		free(j->modules[i].srcversion);
		free(j->modules[i].options);
		free(j->modules[i].replacement);
	}
	free(j->modules);
	for (size_t i = 0; i < j->ndisks; i++) {
		free(j->disks[i].id);
		free(j->disks[i].name);
		free(j->disks[i].pci);
		free(j->disks[i].hba);
	}
	free(j->disks);
	ns_strv_free(j->groups, j->ngroups);
	ns_strv_free(j->removed_pci, j->nremoved_pci);
	ns_strv_free(j->installed, j->ninstalled);
	free(j->boot_id);
	free(j->kernel_release);
	free(j->initramfs_new);
	memset(j, 0, sizeof(*j));
}

const struct ns_swap_jmodule *ns_swap_journal_module(const struct ns_swap_journal *j, const char *name)
{
	for (size_t i = 0; i < j->nmodules; i++)
		if (strcmp(j->modules[i].name, name) == 0)
			return &j->modules[i];
	return NULL;
}

char *ns_swap_boot_id(struct ns_root *root)
{
	char *id = NULL;
	if (ns_read_str(root, "proc/sys/kernel/random/boot_id", &id) < 0)
		return NULL;
	return id;
}
