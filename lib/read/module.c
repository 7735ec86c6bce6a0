/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/module.h"
#include "base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <libkmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ns_modules {
	struct ns_root *root;
	char *release;	       /* running kernel, for numastor's module directory */
	struct kmod_ctx *kmod; /* live root only */
	struct ns_module **v;  /* stable pointers: callers keep them */
	char **drivers;	       /* driver name of each entry */
	size_t n;
};

int ns_modules_new(struct ns_root *root, struct ns_modules **out)
{
	struct ns_modules *mods = calloc(1, sizeof(*mods));

	if (!mods)
		return -ENOMEM;
	mods->root = root;
	ns_read_str(root, "proc/sys/kernel/osrelease", &mods->release);
	if (ns_root_is_live(root)) {
		mods->kmod = kmod_new(NULL, NULL);
		if (mods->kmod)
			kmod_load_resources(mods->kmod);
	}
	*out = mods;
	return 0;
}

static void module_free(struct ns_module *m)
{
	free(m->name);
	ns_strv_free(m->patches, m->npatches);
	free(m->srcversion);
	free(m->file_srcversion);
	free(m->modinfo_error);
}

void ns_modules_free(struct ns_modules *mods)
{
	if (!mods)
		return;
	for (size_t i = 0; i < mods->n; i++) {
		module_free(mods->v[i]);
		free(mods->v[i]);
		free(mods->drivers[i]);
	}
	free(mods->v);
	free(mods->drivers);
	if (mods->kmod)
		kmod_unref(mods->kmod);
	free(mods->release);
	free(mods);
}

static int add_patch(struct ns_module *m, const char *value)
{
	/* a marker value may list several patch ids separated by commas or spaces */
	const char *p = value;
	while (*p) {
		size_t len = strcspn(p, ", ");
		if (len) {
			char **nv = realloc(m->patches, (m->npatches + 1) * sizeof(*nv));
			if (!nv)
				return -ENOMEM;
			m->patches = nv;
			m->patches[m->npatches] = strndup(p, len);
			if (!m->patches[m->npatches])
				return -ENOMEM;
			m->npatches++;
		}
		p += len;
		p += strspn(p, ", ");
	}
	return 0;
}

/* modinfo could not tell: a note, and the reason kept for snapshots. */
static __attribute__((format(printf, 3, 4))) void modinfo_failed(struct ns_module *m, struct ns_notes *notes,
								 const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = ns_vfmt(fmt, ap);
	va_end(ap);
	if (!msg)
		return;
	ns_note(notes, m->name, "module.patched", "%s", msg);
	free(m->modinfo_error);
	m->modinfo_error = msg;
}

/* Live: the modinfo of the module file through libkmod. */
static void modinfo_live(struct ns_modules *mods, struct ns_module *m, char **file_srcversion, struct ns_notes *notes)
{
	struct kmod_module *km = NULL;
	struct kmod_list *info = NULL, *l;
	int r;

	if (!mods->kmod) {
		modinfo_failed(m, notes, "libkmod could not be initialised");
		return;
	}
	r = kmod_module_new_from_name(mods->kmod, m->name, &km);
	if (r < 0) {
		modinfo_failed(m, notes, "libkmod does not know module %s: %s", m->name, strerror(-r));
		return;
	}
	r = kmod_module_get_initstate(km);
	if (m->state == NS_MODULE_BUILTIN)
		;
	else if (r == KMOD_MODULE_BUILTIN)
		m->state = NS_MODULE_BUILTIN;
	else if (r >= 0)
		m->state = NS_MODULE_LIVE;
	/*
	 * An out-of-tree module is not the file modules.dep names: when numastor's module
	 * directory holds a module of that name, that is the one fix --modules loaded.
	 */
	if (m->out_of_tree == 1 && mods->release) {
		char path[512];
		struct kmod_module *patched = NULL;
		snprintf(path, sizeof(path), "/var/lib/numastor/modules/%s/%s.ko", mods->release, m->name);
		if (access(path, R_OK) == 0 && kmod_module_new_from_path(mods->kmod, path, &patched) == 0) {
			kmod_module_unref(km);
			km = patched;
		}
	}
	r = kmod_module_get_info(km, &info);
	if (r < 0) {
		if (m->state == NS_MODULE_BUILTIN)
			modinfo_failed(m, notes,
				       "%s is built into the kernel and modules.builtin.modinfo does not describe it",
				       m->name);
		else
			modinfo_failed(m, notes, "modinfo of %s could not be read: %s", m->name, strerror(-r));
		kmod_module_unref(km);
		return;
	}
	m->patched = 0;
	kmod_list_foreach (l, info) {
		const char *key = kmod_module_info_get_key(l);
		const char *val = kmod_module_info_get_value(l);
		if (!key || !val)
			continue;
		if (strcmp(key, NS_PATCH_MARKER_KEY) == 0) {
			m->patched = 1;
			add_patch(m, val);
		} else if (strcmp(key, "srcversion") == 0 && !*file_srcversion) {
			*file_srcversion = strdup(val);
		}
	}
	kmod_module_info_free_list(info);
	kmod_module_unref(km);
}

/* Captured tree: .numastor/modinfo/<module> holds key=value lines. */
static void modinfo_captured(struct ns_modules *mods, struct ns_module *m, char **file_srcversion,
			     struct ns_notes *notes)
{
	char path[128], *txt, *line, *save = NULL;
	int r;

	snprintf(path, sizeof(path), ".numastor/modinfo/%s", m->name);
	r = ns_read_str(mods->root, path, &txt);
	if (r < 0) {
		ns_note_read(notes, m->name, "module.patched", path, r, NULL);
		return;
	}
	m->patched = 0;
	for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		if (strcmp(line, NS_PATCH_MARKER_KEY) == 0) {
			m->patched = 1;
			add_patch(m, eq + 1);
		} else if (strcmp(line, "srcversion") == 0 && !*file_srcversion) {
			*file_srcversion = strdup(eq + 1);
		} else if (strcmp(line, "builtin") == 0 && strcmp(eq + 1, "1") == 0) {
			m->state = NS_MODULE_BUILTIN;
		} else if (strcmp(line, "error") == 0) {
			/* modinfo could not tell on the captured machine: the same note, nothing known */
			modinfo_failed(m, notes, "%s", eq + 1);
			m->patched = -1;
			ns_strv_free(m->patches, m->npatches);
			m->patches = NULL;
			m->npatches = 0;
			break;
		}
	}
	free(txt);
}

static int module_read(struct ns_modules *mods, const char *driver, struct ns_module *m, struct ns_notes *notes)
{
	char path[256], *taint = NULL, *file_srcversion = NULL;
	int r;

	memset(m, 0, sizeof(*m));
	m->patched = -1;
	m->out_of_tree = -1;
	snprintf(path, sizeof(path), "sys/bus/pci/drivers/%s/module", driver);
	r = ns_readlink_base(mods->root, path, &m->name);
	if (r < 0) {
		/* a built-in driver has no module link */
		m->name = strdup(driver);
		if (!m->name)
			return -ENOMEM;
		for (char *p = m->name; *p; p++)
			if (*p == '-')
				*p = '_';
	} else {
		m->state = NS_MODULE_LIVE;
	}
	/* a built-in module has a sys/module directory but no initstate */
	snprintf(path, sizeof(path), "sys/module/%s/initstate", m->name);
	if (!ns_exists(mods->root, path)) {
		snprintf(path, sizeof(path), "sys/module/%s", m->name);
		if (ns_exists(mods->root, path))
			m->state = NS_MODULE_BUILTIN;
	}
	snprintf(path, sizeof(path), "sys/module/%s/srcversion", m->name);
	ns_read_str(mods->root, path, &m->srcversion);
	snprintf(path, sizeof(path), "sys/module/%s/taint", m->name);
	r = ns_read_str(mods->root, path, &taint);
	if (r == 0 || r == -ENODATA) {
		m->out_of_tree = taint && strchr(taint, 'O');
		free(taint);
	}
	if (ns_root_is_live(mods->root))
		modinfo_live(mods, m, &file_srcversion, notes);
	else
		modinfo_captured(mods, m, &file_srcversion, notes);
	/* the file modinfo read may not be what is loaded (a module insmod'ed from elsewhere):
	 * then neither "stock" nor "patched" is known */
	if (m->srcversion && file_srcversion && strcmp(m->srcversion, file_srcversion) != 0) {
		ns_note(notes, m->name, "module.patched",
			"the loaded %s (srcversion %s) is not the file modinfo describes (%s)", m->name, m->srcversion,
			file_srcversion);
		m->patched = -1;
		ns_strv_free(m->patches, m->npatches);
		m->patches = NULL;
		m->npatches = 0;
	}
	m->file_srcversion = file_srcversion;
	if (!m->srcversion && file_srcversion)
		m->srcversion = strdup(file_srcversion);
	return 0;
}

int ns_modules_lookup(struct ns_modules *mods, const char *driver, struct ns_notes *notes, const struct ns_module **out)
{
	struct ns_module **nv, *m;
	char **nd;
	int r;

	for (size_t i = 0; i < mods->n; i++)
		if (strcmp(mods->drivers[i], driver) == 0) {
			*out = mods->v[i];
			return 0;
		}
	nv = realloc(mods->v, (mods->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	mods->v = nv;
	nd = realloc(mods->drivers, (mods->n + 1) * sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	mods->drivers = nd;
	m = calloc(1, sizeof(*m));
	mods->drivers[mods->n] = strdup(driver);
	if (!m || !mods->drivers[mods->n]) {
		free(m);
		free(mods->drivers[mods->n]);
		return -ENOMEM;
	}
	r = module_read(mods, driver, m, notes);
	if (r < 0) {
		module_free(m);
		free(m);
		free(mods->drivers[mods->n]);
		return r;
	}
	mods->v[mods->n++] = m;
	*out = m;
	return 0;
}

size_t ns_modules_count(const struct ns_modules *mods)
{
	return mods->n;
}

const struct ns_module *ns_modules_get(const struct ns_modules *mods, size_t i)
{
	return i < mods->n ? mods->v[i] : NULL;
}
