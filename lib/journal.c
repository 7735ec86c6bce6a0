/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "journal.h"

#include "diskid.h"
#include "irq.h"
#include "util.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (!doc || !json_object_is_type(doc, json_type_object) || !get_int(doc, "version", &version)) {
		json_object_put(doc);
		return -EINVAL;
	}
	if (version != NS_JOURNAL_VERSION) {
		/* another numastor's format: nothing of it is trusted, so nothing is loaded */
		json_object_put(doc);
		j->version = version;
		return -EPROTO;
	}
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

int ns_journal_save(struct ns_root *root, const struct ns_journal *j)
{
	struct json_object *doc = json_object_new_object(), *irqs = json_object_new_array(),
			   *rqs = json_object_new_array();
	int r;

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
		if (x->counts)
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
