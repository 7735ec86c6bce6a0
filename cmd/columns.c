/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one column table of `numastor check --list` (cmd/columns.h). */
#define _GNU_SOURCE
#include "columns.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "read/rates.h"

static struct json_object *jstr(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

/* The distinct PCI functions behind a disk's paths, in path order; n of them. */
static size_t pcis_of(const struct ns_disk *d, const struct ns_pci **v, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < d->npaths && n < max; i++) {
		const struct ns_pci *p = d->paths[i].pci;
		bool seen = !p;
		for (size_t k = 0; k < n && !seen; k++)
			seen = v[k] == p;
		if (!seen)
			v[n++] = p;
	}
	return n;
}

#define MAX_PATHS 64

/* A path property joined with ',' once each ("0000:01:00.0,0000:81:00.0"); NULL when none. */
static struct json_object *join_paths(const struct ns_disk *d, const char *(*pick)(const struct ns_path *))
{
	char buf[1024] = "";
	size_t len = 0;

	for (size_t i = 0; i < d->npaths; i++) {
		const char *v = pick(&d->paths[i]);
		bool dup = false;
		if (!v || !*v)
			continue;
		for (size_t k = 0; k < i && !dup; k++) {
			const char *w = pick(&d->paths[k]);
			dup = w && strcmp(v, w) == 0;
		}
		if (!dup && len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? "," : "", v);
	}
	return jstr(buf);
}

static const char *path_tran(const struct ns_path *p)
{
	return p->transport == NS_TRANSPORT_OTHER ? NULL : ns_transport_name(p->transport);
}

static const char *path_pci(const struct ns_path *p)
{
	return p->pci ? p->pci->address : NULL;
}

static const char *path_driver(const struct ns_path *p)
{
	return p->pci ? p->pci->driver : NULL;
}

static struct json_object *get_name(const struct ns_col_ctx *c)
{
	return jstr(c->d->name);
}

static struct json_object *get_kind(const struct ns_col_ctx *c)
{
	return jstr(ns_disk_kind_name(c->d->kind));
}

static struct json_object *get_tran(const struct ns_col_ctx *c)
{
	return join_paths(c->d, path_tran);
}

static struct json_object *get_pci(const struct ns_col_ctx *c)
{
	return join_paths(c->d, path_pci);
}

static struct json_object *get_driver(const struct ns_col_ctx *c)
{
	return join_paths(c->d, path_driver);
}

static struct json_object *get_node(const struct ns_col_ctx *c)
{
	return c->d->node >= 0 ? json_object_new_int(c->d->node) : NULL;
}

static struct json_object *get_source(const struct ns_col_ctx *c)
{
	return jstr(ns_node_source_name(c->d->node_source));
}

static struct json_object *get_cpus(const struct ns_col_ctx *c)
{
	struct json_object *o = NULL;
	char *s = NULL;

	if (c->d->local_cpus.known && ns_cpuset_format(&c->d->local_cpus, &s) == 0)
		o = jstr(s);
	free(s);
	return o;
}

static struct json_object *get_irqs(const struct ns_col_ctx *c)
{
	const struct ns_pci *v[MAX_PATHS];
	size_t n = pcis_of(c->d, v, MAX_PATHS), irqs = 0;

	for (size_t i = 0; i < n; i++)
		irqs += v[i]->nirqs;
	return n ? json_object_new_int64((int64_t)irqs) : NULL;
}

static struct json_object *get_managed(const struct ns_col_ctx *c)
{
	const struct ns_pci *v[MAX_PATHS];
	size_t n = pcis_of(c->d, v, MAX_PATHS), managed = 0, irqs = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < v[i]->nirqs; k++) {
			if (v[i]->irqs[k].managed < 0)
				return NULL; /* one unknown: the count is unknown */
			managed += v[i]->irqs[k].managed == 1;
			irqs++;
		}
	return irqs ? json_object_new_int64((int64_t)managed) : NULL;
}

/*
 * The share of the queue interrupts that fired where the fire-location rule expects them
 * (irq-fires-remote, lib/model/findings.c): each queue's vector once, on the nodes its queue serves
 * (the device's node for a queue serving every node), counted as the rule counts (over
 * --interval, else since numastor fix placed it, else since boot). Percent, one decimal.
 */
static struct json_object *get_fires(const struct ns_col_ctx *c)
{
	const struct ns_disk *d = c->d;
	unsigned long long on = 0, all = 0;

	for (size_t i = 0; i < d->nhctx; i++) {
		const struct ns_irq *irq = d->hctx[i].irq;
		unsigned long long total = 0;
		const unsigned long long *counts = irq ? ns_irq_judged_counts(irq, &total) : NULL;
		struct ns_cpuset ref = {0};
		bool dup = false;

		if (!counts || total == 0)
			continue;
		for (size_t k = 0; k < i && !dup; k++)
			dup = d->hctx[k].irq == irq;
		if (dup || !ns_queue_expected_nodes(&c->sys->machine, d->node, &d->hctx[i].nodes, &ref))
			continue;
		for (size_t n = 0; n < irq->nper_node; n++)
			if (ns_cpuset_test(&ref, (unsigned)n))
				on += counts[n];
		all += total;
		ns_cpuset_clear(&ref);
	}
	if (!all)
		return NULL;
	return json_object_new_double((double)(long long)((double)on * 1000 / (double)all) / 10);
}

static struct json_object *get_queues(const struct ns_col_ctx *c)
{
	return json_object_new_int64((int64_t)c->d->nhctx);
}

static struct json_object *get_findings(const struct ns_col_ctx *c)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; c->findings && i < c->findings->n; i++) {
		const struct ns_finding *f = &c->findings->v[i];
		bool dup = false;
		if (!f->device || strcmp(f->device, c->d->name) != 0)
			continue;
		/* each id once: a multipath head's rule that runs per path could raise one twice (no
		 * fixture does since midlayer-alloc-stock left alloc-remote, so no mutant holds this) */
		for (size_t k = 0; k < json_object_array_length(a) && !dup; k++)
			dup = strcmp(json_object_get_string(json_object_array_get_idx(a, k)), f->id) == 0;
		if (!dup)
			json_object_array_add(a, json_object_new_string(f->id));
	}
	return a;
}

static struct json_object *get_severity(const struct ns_col_ctx *c)
{
	int worst = -1;

	for (size_t i = 0; c->findings && i < c->findings->n; i++) {
		const struct ns_finding *f = &c->findings->v[i];
		if (f->device && strcmp(f->device, c->d->name) == 0 && (int)f->severity > worst)
			worst = (int)f->severity;
	}
	return worst < 0 ? NULL : jstr(ns_severity_name((enum ns_severity)worst));
}

static struct json_object *get_size(const struct ns_col_ctx *c)
{
	return c->d->size_bytes >= 0 ? json_object_new_int64(c->d->size_bytes) : NULL;
}

static struct json_object *get_model(const struct ns_col_ctx *c)
{
	return jstr(c->d->identity.model);
}

static struct json_object *get_serial(const struct ns_col_ctx *c)
{
	return jstr(c->d->identity.serial);
}

static struct json_object *get_byid(const struct ns_col_ctx *c)
{
	return jstr(c->d->identity.by_id);
}

// clang-format off
const struct ns_column ns_columns[] = {
	{"NAME", "name", "device name (as under /sys/block)", 7, false, NS_COL_STRING, NULL, get_name, 0, false},
	{"KIND", "kind", "kind: nvme, nvme-multipath, scsi, virtio-blk, ata, dm, md, loop...", 4, false, NS_COL_STRING, NULL, get_kind, 0, false},
	{"TRAN", "tran", "transport of its paths: nvme, scsi, virtio, ata", 4, false, NS_COL_STRING, NULL, get_tran, 0, false},
	{"PCI", "pci", "PCI function(s) behind it (comma-separated: multipath)", 12, false, NS_COL_STRING, NULL, get_pci, 0, false},
	{"DRIVER", "driver", "driver bound to its PCI function(s)", 6, false, NS_COL_STRING, NULL, get_driver, 0, false},
	{"NODE", "node", "NUMA node it sits on; - when unknown or forced (see SOURCE)", 4, true, NS_COL_NUMBER, NULL, get_node, 0, false},
	{"SOURCE", "source", "how NODE is known: pci, fabric, nd-region, vmbus, ... (man page)", 6, false, NS_COL_STRING, NULL, get_source, 0, false},
	{"CPUS", "cpus", "CPUs local to it (cpulist)", 4, false, NS_COL_STRING, NULL, get_cpus, 0, false},
	{"IRQS", "irqs", "interrupt vectors of its PCI function(s)", 4, true, NS_COL_NUMBER, NULL, get_irqs, NS_NEED_IRQS, false},
	{"MANAGED", "managed", "how many of IRQS the kernel manages; - when any is unknown", 7, true, NS_COL_NUMBER, NULL, get_managed, NS_NEED_IRQS, false},
	{"FIRES", "fires", "% of its queue interrupts that fire on the node(s) of their queue", 5, true, NS_COL_NUMBER, "%", get_fires, NS_NEED_IRQS | NS_NEED_QUEUES, false},
	{"QUEUES", "queues", "blk-mq hardware queues", 6, true, NS_COL_NUMBER, NULL, get_queues, NS_NEED_QUEUES, false},
	{"FINDINGS", "findings", "ids of the findings about it, comma-separated", 8, false, NS_COL_STRINGS, NULL, get_findings, NS_NEED_JSON, true},
	{"SEVERITY", "severity", "worst severity of its findings: info, warning, critical", 8, false, NS_COL_STRING, NULL, get_severity, NS_NEED_JSON, true},
	{"SIZE", "size", "size in bytes", 4, true, NS_COL_NUMBER, NULL, get_size, 0, false},
	{"MODEL", "model", "model, as udev or sysfs tells it", 5, false, NS_COL_STRING, NULL, get_model, NS_NEED_IDENTITY, false},
	{"SERIAL", "serial", "serial number", 6, false, NS_COL_STRING, NULL, get_serial, NS_NEED_IDENTITY, false},
	{"BYID", "by_id", "its /dev/disk/by-id link", 4, false, NS_COL_STRING, NULL, get_byid, NS_NEED_IDENTITY, false},
};
// clang-format on
const size_t ns_ncolumns = sizeof(ns_columns) / sizeof(ns_columns[0]);
const char ns_columns_default[] = "NAME,TRAN,PCI,NODE,SOURCE,CPUS,IRQS,MANAGED,FIRES,QUEUES,FINDINGS";

unsigned ns_columns_needs(const struct ns_column *const *cols, size_t n, bool *judges)
{
	unsigned needs = 0;

	*judges = false;
	for (size_t i = 0; i < n; i++) {
		needs |= cols[i]->needs;
		*judges = *judges || cols[i]->judges;
	}
	return needs;
}

const struct ns_column *ns_column_find(const char *name, size_t len)
{
	for (size_t i = 0; i < ns_ncolumns; i++)
		if (strlen(ns_columns[i].name) == len && strncasecmp(ns_columns[i].name, name, len) == 0)
			return &ns_columns[i];
	return NULL;
}

static int add_list(const char *spec, const struct ns_column ***out, size_t *n, char **bad)
{
	const char *p = spec;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const struct ns_column *col = ns_column_find(p, len), **nv;
		if (!col) {
			*bad = strndup(p, len);
			return -EINVAL;
		}
		nv = realloc(*out, (*n + 1) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*out = nv;
		nv[(*n)++] = col;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int ns_columns_parse(const char *spec, const struct ns_column ***out, size_t *n, char **bad)
{
	int r = 0;

	*out = NULL;
	*n = 0;
	*bad = NULL;
	if (!spec)
		spec = ns_columns_default;
	if (*spec == '+') {
		r = add_list(ns_columns_default, out, n, bad);
		spec++;
	}
	if (r == 0)
		r = add_list(spec, out, n, bad);
	if (r < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return r;
}

char *ns_columns_names(void)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < ns_ncolumns; i++)
		fprintf(f, "%s%s", i ? ", " : "", ns_columns[i].name);
	fclose(f);
	return s;
}

void ns_columns_usage(FILE *out)
{
	fprintf(out, "\nColumns of --list (-o COL,...; -o +COL,... adds to the default\n%s):\n", ns_columns_default);
	for (size_t i = 0; i < ns_ncolumns; i++)
		fprintf(out, "  %-9s %s\n", ns_columns[i].name, ns_columns[i].help);
}
