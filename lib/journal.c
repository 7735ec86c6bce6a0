/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "journal.h"

#include "util.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define JOURNAL_VERSION 1

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

int ns_journal_load(struct ns_root *root, struct ns_journal *j)
{
	char *txt;
	struct json_object *doc, *arr;
	int r, version;

	memset(j, 0, sizeof(*j));
	r = ns_read_str(root, NS_JOURNAL_PATH, &txt);
	if (r < 0)
		return r == -ENODATA ? -EINVAL : r;
	doc = json_tokener_parse(txt);
	free(txt);
	if (!doc || !json_object_is_type(doc, json_type_object) || !get_int(doc, "version", &version) ||
	    version != JOURNAL_VERSION) {
		json_object_put(doc);
		return -EINVAL;
	}
	j->boot_id = dup_or_null(get_str(doc, "boot_id"));
	if (json_object_object_get_ex(doc, "irqs", &arr) && json_object_is_type(arr, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *e = json_object_array_get_idx(arr, i);
			int n;
			if (!get_int(e, "irq", &n) || !get_str(e, "previous")) {
				r = -EINVAL;
				goto bad;
			}
			r = ns_journal_put_irq(j, n, get_str(e, "name"), get_str(e, "previous"), get_str(e, "placed"));
			if (r < 0)
				goto bad;
		}
	}
	if (json_object_object_get_ex(doc, "rq_affinity", &arr) && json_object_is_type(arr, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *e = json_object_array_get_idx(arr, i);
			int prev, placed;
			if (!get_str(e, "device") || !get_int(e, "previous", &prev) || !get_int(e, "placed", &placed)) {
				r = -EINVAL;
				goto bad;
			}
			r = ns_journal_put_rq(j, get_str(e, "device"), prev, placed);
			if (r < 0)
				goto bad;
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		const char *key = pass ? "installed" : "module_groups";
		if (!json_object_object_get_ex(doc, key, &arr) || !json_object_is_type(arr, json_type_array))
			continue;
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			const char *v = json_object_get_string(json_object_array_get_idx(arr, i));
			if (!v) {
				r = -EINVAL;
				goto bad;
			}
			r = pass ? ns_strv_add_unique(&j->installed, &j->ninstalled, v)
				 : ns_strv_add_unique(&j->modgroups, &j->nmodgroups, v);
			if (r < 0)
				goto bad;
		}
	}
	json_object_put(doc);
	return 0;
bad:
	json_object_put(doc);
	ns_journal_free(j);
	return r;
}

int ns_journal_save(struct ns_root *root, const struct ns_journal *j)
{
	struct json_object *doc = json_object_new_object(), *irqs = json_object_new_array(),
			   *rqs = json_object_new_array();
	int r;

	json_object_object_add(doc, "version", json_object_new_int(JOURNAL_VERSION));
	json_object_object_add(doc, "boot_id", j->boot_id ? json_object_new_string(j->boot_id) : NULL);
	for (size_t i = 0; i < j->nirqs; i++) {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "irq", json_object_new_int(j->irqs[i].irq));
		json_object_object_add(e, "name", j->irqs[i].name ? json_object_new_string(j->irqs[i].name) : NULL);
		json_object_object_add(e, "previous", json_object_new_string(j->irqs[i].previous));
		json_object_object_add(e, "placed",
				       j->irqs[i].placed ? json_object_new_string(j->irqs[i].placed) : NULL);
		json_object_array_add(irqs, e);
	}
	json_object_object_add(doc, "irqs", irqs);
	for (size_t i = 0; i < j->nrqs; i++) {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "device", json_object_new_string(j->rqs[i].device));
		json_object_object_add(e, "previous", json_object_new_int(j->rqs[i].previous));
		json_object_object_add(e, "placed", json_object_new_int(j->rqs[i].placed));
		json_object_array_add(rqs, e);
	}
	json_object_object_add(doc, "rq_affinity", rqs);
	for (int pass = 0; pass < 2; pass++) {
		struct json_object *a = json_object_new_array();
		char **v = pass ? j->installed : j->modgroups;
		size_t n = pass ? j->ninstalled : j->nmodgroups;
		for (size_t i = 0; i < n; i++)
			json_object_array_add(a, json_object_new_string(v[i]));
		json_object_object_add(doc, pass ? "installed" : "module_groups", a);
	}
	r = ns_mkdir_p(root, NS_STATE_DIR);
	if (r == 0)
		r = ns_write_atomic(
			root, NS_JOURNAL_PATH,
			json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE),
			0644);
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
		free(j->irqs[i].name);
		free(j->irqs[i].previous);
		free(j->irqs[i].placed);
	}
	free(j->irqs);
	for (size_t i = 0; i < j->nrqs; i++)
		free(j->rqs[i].device);
	free(j->rqs);
	ns_strv_free(j->modgroups, j->nmodgroups);
	ns_strv_free(j->installed, j->ninstalled);
	free(j->boot_id);
	memset(j, 0, sizeof(*j));
}

const struct ns_journal_irq *ns_journal_find_irq(const struct ns_journal *j, int n, const char *name)
{
	for (size_t i = 0; i < j->nirqs; i++) {
		const struct ns_journal_irq *e = &j->irqs[i];
		if (e->irq != n)
			continue;
		if (e->name && name && strcmp(e->name, name) != 0)
			return NULL; /* the number was reused by another IRQ */
		return e;
	}
	return NULL;
}

int ns_journal_put_irq(struct ns_journal *j, int n, const char *name, const char *previous, const char *placed)
{
	struct ns_journal_irq *nv, *e;

	for (size_t i = 0; i < j->nirqs; i++) {
		e = &j->irqs[i];
		if (e->irq == n && (!e->name || !name || strcmp(e->name, name) == 0)) {
			char *p = dup_or_null(placed);
			if (placed && !p)
				return -ENOMEM;
			free(e->placed);
			e->placed = p;
			return 0;
		}
	}
	nv = realloc(j->irqs, (j->nirqs + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	j->irqs = nv;
	e = &nv[j->nirqs];
	e->irq = n;
	e->name = dup_or_null(name);
	e->previous = strdup(previous);
	e->placed = dup_or_null(placed);
	if (!e->previous || (name && !e->name) || (placed && !e->placed)) {
		free(e->name);
		free(e->previous);
		free(e->placed);
		return -ENOMEM;
	}
	j->nirqs++;
	return 0;
}

int ns_journal_put_rq(struct ns_journal *j, const char *device, int previous, int placed)
{
	struct ns_journal_rq *nv;

	for (size_t i = 0; i < j->nrqs; i++)
		if (strcmp(j->rqs[i].device, device) == 0) {
			j->rqs[i].placed = placed;
			return 0;
		}
	nv = realloc(j->rqs, (j->nrqs + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	j->rqs = nv;
	nv[j->nrqs].device = strdup(device);
	if (!nv[j->nrqs].device)
		return -ENOMEM;
	nv[j->nrqs].previous = previous;
	nv[j->nrqs].placed = placed;
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
