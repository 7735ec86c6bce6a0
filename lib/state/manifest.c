/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The module directory's manifest.json: which patched modules it holds, their sha256,
 * vermagic and srcversion, and which series the kernel already has. */
#define _GNU_SOURCE
#include "state/manifest.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonstrict.h"
#include "base/util.h"

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

/*
 * The keys kmod-patches/build-modules.sh writes (kmod-patches/README.md, "manifest.json"), and no
 * other: a manifest with a key numastor does not know, or one key twice (lib/base/jsonstrict.h), was
 * not written by that script, and the swap it would steer is refused.
 */
static const char *const top_keys[] = {"kernel_release", "built", "modules", "already_upstream", NULL};
static const char *const module_keys[] = {"name",	"file",	   "sha256",   "vermagic",
					  "srcversion", "patches", "replaces", NULL};
static const char *const upstream_keys[] = {"series", "patch", NULL};

int ns_manifest_load(struct ns_root *root, const char *dir, struct ns_manifest *m)
{
	char path[4096], *txt;
	struct json_object *doc, *mods, *up;
	int r;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	r = ns_read_str(root, path, &txt);
	if (r < 0)
		return r == -ENODATA ? -EINVAL : r;
	r = ns_json_parse_strict(txt, &doc, NULL);
	free(txt);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || !ns_json_only_keys(doc, top_keys, NULL) || !jstr(doc, "kernel_release") ||
	    !json_object_object_get_ex(doc, "modules", &mods) || !json_object_is_type(mods, json_type_array)) {
		json_object_put(doc);
		return -EINVAL;
	}
	m->dir = strdup(dir);
	m->kernel_release = strdup(jstr(doc, "kernel_release"));
	m->v = calloc(json_object_array_length(mods) + 1, sizeof(*m->v));
	if (!m->dir || !m->kernel_release || !m->v) {
		r = -ENOMEM;
		goto bad;
	}
	for (size_t i = 0; i < json_object_array_length(mods); i++) {
		struct json_object *e = json_object_array_get_idx(mods, i), *p;
		struct ns_manifest_module *mm = &m->v[m->n];
		const char *name = jstr(e, "name"), *file = jstr(e, "file"), *sha = jstr(e, "sha256");
		/* a file name in the directory: never a path, nor "", "." or ".." (the directory
		 * itself or its parent) */
		if (!ns_json_only_keys(e, module_keys, NULL) || !name || !file || !sha || strchr(file, '/') ||
		    !file[0] || strcmp(file, ".") == 0 || strcmp(file, "..") == 0) {
			r = -EINVAL;
			goto bad;
		}
		mm->name = strdup(name);
		mm->file = ns_fmt("%s/%s", dir, file);
		mm->sha256 = strdup(sha);
		mm->vermagic = jstr(e, "vermagic") ? strdup(jstr(e, "vermagic")) : NULL;
		mm->srcversion = jstr(e, "srcversion") ? strdup(jstr(e, "srcversion")) : NULL;
		m->n++;
		if (json_object_object_get_ex(e, "patches", &p) && json_object_is_type(p, json_type_array))
			for (size_t k = 0; k < json_object_array_length(p); k++) {
				const char *s = json_object_get_string(json_object_array_get_idx(p, k));
				if (s && ns_strv_add(&mm->patches, &mm->npatches, s) < 0) {
					r = -ENOMEM;
					goto bad;
				}
			}
		if (!mm->name || !mm->file || !mm->sha256) {
			r = -ENOMEM;
			goto bad;
		}
	}
	if (json_object_object_get_ex(doc, "already_upstream", &up) && json_object_is_type(up, json_type_array))
		for (size_t k = 0; k < json_object_array_length(up); k++) {
			const char *s = jstr(json_object_array_get_idx(up, k), "series");
			if (!ns_json_only_keys(json_object_array_get_idx(up, k), upstream_keys, NULL)) {
				r = -EINVAL;
				goto bad;
			}
			if (s && !ns_strv_has(m->upstream, m->nupstream, s) &&
			    ns_strv_add(&m->upstream, &m->nupstream, s) < 0) {
				r = -ENOMEM;
				goto bad;
			}
		}
	json_object_put(doc);
	return 0;
bad:
	json_object_put(doc);
	ns_manifest_free(m);
	return r;
}

void ns_manifest_free(struct ns_manifest *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].name);
		free(m->v[i].file);
		free(m->v[i].sha256);
		free(m->v[i].vermagic);
		free(m->v[i].srcversion);
		ns_strv_free(m->v[i].patches, m->v[i].npatches);
	}
	free(m->v);
	ns_strv_free(m->upstream, m->nupstream);
	free(m->dir);
	free(m->kernel_release);
	memset(m, 0, sizeof(*m));
}

const struct ns_manifest_module *ns_manifest_find(const struct ns_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i];
	return NULL;
}
