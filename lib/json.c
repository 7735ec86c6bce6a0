/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "rates.h"
#include "sha256.h"
#include "root.h"
#include "testhook.h"
#include "util.h"

/*
 * NULL-safe helpers: a NULL value becomes JSON null. Every string of the document goes
 * through jstr: what the machine said is made valid UTF-8 there (lib/escape.h), since json-c
 * copies bytes >= 0x80 as they are.
 */
static struct json_object *jstr(const char *s)
{
	struct json_object *o;
	char *e;

	if (!s)
		return NULL;
	if (ns_utf8_valid(s, strlen(s)))
		return json_object_new_string(s);
	e = ns_escape_json(s);
	o = e ? json_object_new_string(e) : NULL;
	free(e);
	return o;
}

static struct json_object *jnode(int node) /* null for < 0 */
{
	return node >= 0 ? json_object_new_int(node) : NULL;
}

static struct json_object *jtri(int v) /* 1 / 0 / -1 = null */
{
	return v < 0 ? NULL : json_object_new_boolean(v);
}

static struct json_object *jstrv(char **v, size_t n)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, jstr(v[i]));
	return a;
}

static struct json_object *jnodes(const struct ns_cpuset *nodes)
{
	struct json_object *a = json_object_new_array();
	ns_cpuset_foreach (n, nodes)
		json_object_array_add(a, json_object_new_int(n));
	return a;
}

#define add(o, k, v) json_object_object_add(o, k, v)

static struct json_object *machine_json(const struct ns_machine *m)
{
	struct json_object *o = json_object_new_object(), *nodes = json_object_new_array(), *ib;

	add(o, "kernel_release", jstr(m->kernel_release));
	add(o, "tainted", m->tainted >= 0 ? json_object_new_int64(m->tainted) : NULL);
	add(o, "multi_node", json_object_new_boolean(ns_machine_multi_node(m)));
	add(o, "online_cpus", ns_cpuset_json(&m->online));
	add(o, "possible_cpus", ns_cpuset_json(&m->possible));
	add(o, "isolated_cpus", ns_cpuset_json(&m->isolated));
	add(o, "nohz_full_cpus", ns_cpuset_json(&m->nohz_full));
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct ns_node *n = &m->nodes[i];
		struct json_object *no = json_object_new_object(), *d = NULL;
		add(no, "node", json_object_new_int(n->id));
		add(no, "cpus", ns_cpuset_json(&n->cpus));
		add(no, "cpu_count", n->cpus.known ? json_object_new_int((int)ns_cpuset_count(&n->cpus)) : NULL);
		add(no, "memory_bytes", n->memory_bytes >= 0 ? json_object_new_int64(n->memory_bytes) : NULL);
		if (n->distances) {
			d = json_object_new_array();
			for (size_t k = 0; k < n->ndistances; k++)
				json_object_array_add(d, json_object_new_int(n->distances[k]));
		}
		add(no, "distances", d);
		json_object_array_add(nodes, no);
	}
	add(o, "nodes", nodes);
	add(o, "overlapping_nodes", m->overlapping_nodes.known ? jnodes(&m->overlapping_nodes) : NULL);
	ib = json_object_new_object();
	add(ib, "running", jtri(m->irqbalance.running));
	add(ib, "pid", m->irqbalance.pid >= 0 ? json_object_new_int64(m->irqbalance.pid) : NULL);
	add(ib, "policyscript", jstr(m->irqbalance.policyscript));
	add(ib, "banned_cpus", ns_cpuset_json(&m->irqbalance.banned_cpus));
	add(o, "irqbalance", ib);
	return o;
}

/* [{"node": N, "count": C}, ...], the shape of counts_by_node */
static struct json_object *counts_json(const struct ns_irq *irq, const unsigned long long *v)
{
	struct json_object *a = json_object_new_array();
	for (size_t n = 0; n < irq->nper_node; n++) {
		struct json_object *c = json_object_new_object();
		add(c, "node", json_object_new_int((int)n));
		add(c, "count", json_object_new_int64((int64_t)v[n]));
		json_object_array_add(a, c);
	}
	return a;
}

/* counts_by_node's shape, over the interval: the count in it and the rate (per second) */
static struct json_object *rates_json(const struct ns_irq *irq)
{
	struct json_object *a = counts_json(irq, irq->in_interval);
	for (size_t n = 0; n < irq->nper_node; n++) {
		char txt[32];
		double rate = (double)irq->in_interval[n] / irq->interval;
		snprintf(txt, sizeof(txt), "%.3f", rate);
		add(json_object_array_get_idx(a, n), "rate", json_object_new_double_s(strtod(txt, NULL), txt));
	}
	return a;
}

static struct json_object *irq_json(const struct ns_irq *irq)
{
	struct json_object *o = json_object_new_object(), *counts = NULL;

	add(o, "irq", json_object_new_int(irq->irq));
	add(o, "name", jstr(irq->name));
	add(o, "actions", jstr(irq->actions));
	add(o, "chip", jstr(irq->chip));
	add(o, "type", jstr(irq->msi ? "msi" : "intx"));
	add(o, "affinity", ns_cpuset_json(&irq->affinity));
	add(o, "effective_affinity", ns_cpuset_json(&irq->effective));
	add(o, "affinity_hint", ns_cpuset_json(&irq->hint));
	add(o, "node", irq->node >= -1 ? json_object_new_int(irq->node) : NULL);
	add(o, "managed", jtri(irq->managed));
	add(o, "managed_source", jstr(ns_managed_source_name(irq->managed_source)));
	add(o, "user_settable", jtri(irq->user_settable));
	add(o, "user_settable_source", jstr(ns_settable_source_name(irq->user_settable_source)));
	add(o, "placed_by_numastor", json_object_new_boolean(irq->placed));
	add(o, "hw_queue", irq->hw_queue >= 0 ? json_object_new_int(irq->hw_queue) : NULL);
	add(o, "total_count", irq->counts_known ? json_object_new_int64((int64_t)irq->total) : NULL);
	if (irq->per_node) {
		counts = json_object_new_array();
		for (size_t n = 0; n < irq->nper_node; n++) {
			struct json_object *c = json_object_new_object();
			add(c, "node", json_object_new_int((int)n));
			add(c, "count", json_object_new_int64((int64_t)irq->per_node[n]));
			json_object_array_add(counts, c);
		}
	}
	add(o, "counts_by_node", counts);
	add(o, "count_basis", jstr(ns_count_basis_name(ns_irq_count_basis(irq))));
	add(o, "counts_since_fix_by_node", irq->since_fix ? counts_json(irq, irq->since_fix) : NULL);
	add(o, "rates_by_node", irq->interval > 0 && irq->in_interval ? rates_json(irq) : NULL);
	return o;
}

static struct json_object *module_json(const struct ns_module *m)
{
	struct json_object *o;
	if (!m)
		return NULL;
	o = json_object_new_object();
	add(o, "name", jstr(m->name));
	add(o, "state",
	    jstr(m->state == NS_MODULE_LIVE	 ? "live"
		 : m->state == NS_MODULE_BUILTIN ? "builtin"
						 : "unknown"));
	add(o, "patched", jtri(m->patched));
	add(o, "patches", jstrv(m->patches, m->npatches));
	add(o, "srcversion", jstr(m->srcversion));
	add(o, "out_of_tree", jtri(m->out_of_tree));
	return o;
}

static struct json_object *pci_json(const struct ns_pci *pci)
{
	struct json_object *o, *bridges, *irqs;
	if (!pci)
		return NULL;
	o = json_object_new_object();
	add(o, "address", jstr(pci->address));
	add(o, "vendor", jstr(pci->vendor));
	add(o, "device", jstr(pci->device));
	add(o, "class", jstr(pci->class_code));
	add(o, "driver", jstr(pci->driver));
	add(o, "module", module_json(pci->module));
	add(o, "numa_node", pci->numa_node == NS_NODE_UNREAD ? NULL : json_object_new_int(pci->numa_node));
	add(o, "node_forced", jtri(pci->forced));
	add(o, "forced_evidence", jstr(pci->forced_evidence));
	add(o, "node_set", jtri(pci->node_set));
	add(o, "node_set_evidence", jstr(pci->node_set_evidence));
	add(o, "local_cpus", ns_cpuset_json(&pci->local_cpus));
	add(o, "bus_node", pci->bus_node == NS_NODE_UNREAD ? NULL : json_object_new_int(pci->bus_node));
	bridges = json_object_new_array();
	for (size_t i = 0; i < pci->nbridges; i++)
		json_object_array_add(bridges, pci->bridge_nodes[i] == NS_NODE_UNREAD
						       ? NULL
						       : json_object_new_int(pci->bridge_nodes[i]));
	add(o, "bridge_nodes", bridges);
	irqs = json_object_new_array();
	for (size_t i = 0; i < pci->nirqs; i++)
		json_object_array_add(irqs, irq_json(&pci->irqs[i]));
	add(o, "irqs", irqs);
	return o;
}

/* A root-relative sysfs path as the kernel names it: absolute. */
static struct json_object *jsyspath(const char *rel)
{
	struct json_object *o;
	char *p;

	if (!rel || !(p = ns_fmt("/%s", rel)))
		return NULL;
	o = jstr(p);
	free(p);
	return o;
}

static struct json_object *member_nodes_json(const struct ns_disk *d)
{
	struct ns_cpuset nodes = {0};
	struct json_object *o;

	nodes.known = true;
	for (size_t i = 0; i < d->nmembers; i++)
		if (d->members[i].node >= 0)
			ns_cpuset_set(&nodes, (unsigned)d->members[i].node);
	o = jnodes(&nodes);
	ns_cpuset_clear(&nodes);
	return o;
}

static struct json_object *fabric_json(const struct ns_fabric *f)
{
	struct json_object *o;

	if (!f)
		return NULL;
	o = json_object_new_object();
	add(o, "transport", jstr(f->transport));
	add(o, "address", jstr(f->address));
	add(o, "traddr", jstr(f->traddr));
	add(o, "trsvcid", jstr(f->trsvcid));
	add(o, "host_traddr", jstr(f->host_traddr));
	add(o, "src_addr", jstr(f->src_addr));
	add(o, "host_iface", jstr(f->host_iface));
	add(o, "carrier", jstr(f->carrier));
	add(o, "carrier_kind", jstr(f->carrier_kind));
	add(o, "carrier_basis", jstr(f->carrier_basis));
	add(o, "reason", jstr(f->reason));
	return o;
}

static struct json_object *vmbus_json(const struct ns_vmbus *vb)
{
	struct json_object *o, *chs;

	if (!vb)
		return NULL;
	o = json_object_new_object();
	add(o, "device_id", jstr(vb->device_id));
	add(o, "numa_node", jnode(vb->numa_node));
	chs = json_object_new_array();
	for (size_t i = 0; i < vb->nchannels; i++) {
		struct json_object *c = json_object_new_object();
		add(c, "id", json_object_new_int(vb->channels[i].id));
		add(c, "target_cpu",
		    vb->channels[i].target_cpu >= 0 ? json_object_new_int(vb->channels[i].target_cpu) : NULL);
		add(c, "node", jnode(vb->channels[i].node));
		json_object_array_add(chs, c);
	}
	add(o, "channels", chs);
	add(o, "channel_nodes", jnodes(&vb->channel_nodes));
	return o;
}

static struct json_object *disk_json(const struct ns_disk *d)
{
	struct json_object *o = json_object_new_object(), *id, *paths, *q, *hq, *al;

	add(o, "name", jstr(d->name));
	add(o, "kind", jstr(ns_disk_kind_name(d->kind)));
	add(o, "devnum", jstr(d->devnum));
	add(o, "sysfs_path", jsyspath(d->syspath));
	add(o, "size_bytes", d->size_bytes >= 0 ? json_object_new_int64(d->size_bytes) : NULL);
	add(o, "partitions", jstrv(d->partitions, d->npartitions));
	add(o, "slaves", jstrv(d->slaves, d->nslaves));
	add(o, "holders", jstrv(d->holders, d->nholders));
	add(o, "backing_file", jstr(d->backing_file));
	add(o, "iopolicy", jstr(d->iopolicy));
	id = json_object_new_object();
	add(id, "model", jstr(d->identity.model));
	add(id, "serial", jstr(d->identity.serial));
	add(id, "wwn", jstr(d->identity.wwn));
	add(id, "by_id", jstr(d->identity.by_id));
	add(o, "identity", id);
	add(o, "node", jnode(d->node));
	add(o, "node_source", jstr(ns_node_source_name(d->node_source)));
	add(o, "node_device", jsyspath(d->node_device));
	add(o, "node_reason", d->node < 0 ? jstr(d->node_reason) : NULL);
	add(o, "member_nodes", d->members_read ? member_nodes_json(d) : NULL);
	add(o, "member_nodes_complete", d->members_read ? json_object_new_boolean(d->members_complete) : NULL);
	add(o, "node_reliable", jtri(d->node_reliable));
	add(o, "local_cpus", ns_cpuset_json(&d->local_cpus));
	paths = json_object_new_array();
	for (size_t i = 0; i < d->npaths; i++) {
		struct json_object *p = json_object_new_object();
		add(p, "transport", jstr(ns_transport_name(d->paths[i].transport)));
		add(p, "controller", jstr(d->paths[i].controller));
		add(p, "pci", pci_json(d->paths[i].pci));
		add(p, "fabric", fabric_json(d->paths[i].fabric));
		add(p, "vmbus", vmbus_json(d->paths[i].vmbus));
		json_object_array_add(paths, p);
	}
	add(o, "paths", paths);
	q = json_object_new_object();
	add(q, "rq_affinity", d->rq_affinity >= 0 ? json_object_new_int(d->rq_affinity) : NULL);
	add(q, "scheduler", jstr(d->scheduler));
	add(q, "nr_requests", d->nr_requests >= 0 ? json_object_new_int64(d->nr_requests) : NULL);
	add(o, "queue", q);
	hq = json_object_new_array();
	for (size_t i = 0; i < d->nhctx; i++) {
		const struct ns_hctx *h = &d->hctx[i];
		struct json_object *e = json_object_new_object();
		add(e, "index", json_object_new_int(h->index));
		add(e, "controller", jstr(h->controller));
		add(e, "cpus", ns_cpuset_json(&h->cpus));
		add(e, "isolated_cpus", h->isolated.known ? ns_cpuset_json(&h->isolated) : NULL);
		add(e, "nodes", h->nodes.known ? jnodes(&h->nodes) : NULL);
		add(e, "nr_tags", h->nr_tags >= 0 ? json_object_new_int64(h->nr_tags) : NULL);
		add(e, "memory_node", jnode(h->memory_node));
		add(e, "irq", h->irq ? json_object_new_int(h->irq->irq) : NULL);
		add(e, "irq_pairing", jstr(ns_pairing_name(h->pairing)));
		json_object_array_add(hq, e);
	}
	add(o, "hw_queues", hq);
	al = json_object_new_object();
	add(al, "device_node", jnode(d->alloc.device_node));
	add(al, "device_basis", jstr(d->alloc.device_basis ? d->alloc.device_basis : ""));
	add(al, "midlayer_node", jnode(d->alloc.midlayer_node));
	add(al, "midlayer_basis", jstr(d->alloc.midlayer_basis));
	add(al, "host_alloc_node", jnode(d->alloc.host_alloc_node));
	add(al, "host_alloc_basis", jstr(d->alloc.host_alloc_basis));
	add(al, "host_alloc_module", jstr(d->alloc.host_alloc_module));
	add(al, "hw_queue_nodes", d->alloc.hw_queue_nodes.known ? jnodes(&d->alloc.hw_queue_nodes) : NULL);
	add(al, "shared_tags", jtri(d->alloc.shared_tags));
	add(al, "shared_tags_source", jstr(d->alloc.shared_tags_source ? d->alloc.shared_tags_source : "unknown"));
	add(al, "tags_nodes", d->alloc.tags_nodes.known ? jnodes(&d->alloc.tags_nodes) : NULL);
	add(al, "tags_basis", jstr(d->alloc.tags_basis ? d->alloc.tags_basis : ""));
	add(o, "allocations", al);
	return o;
}

void ns_json_sanitize(struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_string: {
		const char *s = json_object_get_string(o);
		char *e;
		if (ns_utf8_valid(s, (size_t)json_object_get_string_len(o)) &&
		    strlen(s) == (size_t)json_object_get_string_len(o))
			return;
		e = ns_escape_json(s); /* an embedded NUL ends the string */
		if (e)
			json_object_set_string(o, e);
		else
			json_object_set_string(o, "");
		free(e);
		return;
	}
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			ns_json_sanitize(json_object_array_get_idx(o, i));
		return;
	case json_type_object: {
		json_object_object_foreach(o, key, val)
		{
			(void)key; /* keys are numastor's own */
			ns_json_sanitize(val);
		}
		return;
	}
	default:
		return;
	}
}

struct json_object *ns_json_sanitized(struct json_object *o)
{
	struct json_object *copy = NULL;

	if (!o)
		return NULL;
	if (json_object_deep_copy(o, &copy, NULL) < 0)
		return NULL;
	ns_json_sanitize(copy);
	return copy;
}

struct json_object *ns_json_head(const struct ns_system *sys, const char *version)
{
	struct json_object *doc = ns_json_envelope(sys->root, NS_SCHEMA_VERSION), *tool, *machine, *fixes;

	if (!doc)
		return NULL;
	tool = json_object_new_object();
	add(tool, "name", jstr("numastor"));
	add(tool, "version", jstr(version));
	add(doc, "tool", tool);
	add(doc, "root", jstr(ns_root_dir(sys->root)));
	add(doc, "privileged", json_object_new_boolean(sys->privileged));
	if (sys->interval_seconds > 0) {
		char txt[32];
		snprintf(txt, sizeof(txt), "%.3f", sys->interval_seconds);
		add(doc, "interval_seconds", json_object_new_double_s(strtod(txt, NULL), txt));
	} else {
		add(doc, "interval_seconds", NULL);
	}
	machine = machine_json(&sys->machine);
	fixes = json_object_new_array();
	for (int i = 0; i < 2; i++) {
		struct json_object *f;
		if (!sys->fixes[i].series)
			continue;
		f = json_object_new_object();
		add(f, "series", jstr(sys->fixes[i].series));
		add(f, "in_kernel", jtri(sys->fixes[i].in_kernel));
		add(f, "basis", jstr(sys->fixes[i].basis));
		json_object_array_add(fixes, f);
	}
	add(machine, "kernel_fixes", fixes);
	add(doc, "machine", machine);
	return doc;
}

struct json_object *ns_json_device(const struct ns_disk *d)
{
	return disk_json(d);
}

struct json_object *ns_json_findings(const struct ns_findings *findings)
{
	struct json_object *fs = json_object_new_array();

	for (size_t i = 0; i < findings->n; i++) {
		const struct ns_finding *f = &findings->v[i];
		struct json_object *o = json_object_new_object(), *rem = json_object_new_object();
		add(o, "id", jstr(f->id));
		add(o, "severity", jstr(ns_severity_name(f->severity)));
		add(o, "device", jstr(f->device));
		add(o, "message", jstr(f->message));
		add(o, "evidence", ns_json_sanitized(f->evidence));
		add(rem, "action", jstr(f->remedy_action));
		add(rem, "text", jstr(f->remedy_text));
		add(o, "remedy", rem);
		json_object_array_add(fs, o);
	}
	return fs;
}

struct json_object *ns_json_summary(const struct ns_system *sys, const struct ns_findings *findings)
{
	struct json_object *sum = json_object_new_object();
	int code = ns_findings_exit_code(findings);

	add(sum, "status", jstr(code == 2 ? "critical" : code == 1 ? "warning" : "ok"));
	add(sum, "exit_code", json_object_new_int(code));
	add(sum, "devices", json_object_new_int((int)sys->ndisks));
	add(sum, "critical", json_object_new_int((int)ns_findings_count(findings, NS_SEV_CRITICAL)));
	add(sum, "warning", json_object_new_int((int)ns_findings_count(findings, NS_SEV_WARNING)));
	add(sum, "info", json_object_new_int((int)ns_findings_count(findings, NS_SEV_INFO)));
	return sum;
}

struct json_object *ns_json_notes(const struct ns_system *sys)
{
	struct json_object *notes = json_object_new_array();

	for (size_t i = 0; i < sys->notes.n; i++) {
		struct json_object *n = json_object_new_object();
		add(n, "subject", jstr(sys->notes.v[i].subject));
		add(n, "field", jstr(sys->notes.v[i].field));
		add(n, "message", jstr(sys->notes.v[i].message));
		json_object_array_add(notes, n);
	}
	return notes;
}

struct json_object *ns_json_document(const struct ns_system *sys, const struct ns_findings *findings,
				     const char *version)
{
	struct json_object *doc = ns_json_head(sys, version), *devs;

	if (!doc)
		return NULL;
	devs = json_object_new_array();
	for (size_t i = 0; i < sys->ndisks; i++)
		json_object_array_add(devs, disk_json(&sys->disks[i]));
	add(doc, "devices", devs);
	add(doc, "findings", ns_json_findings(findings));
	add(doc, "summary", ns_json_summary(sys, findings));
	add(doc, "notes", ns_json_notes(sys));
	return doc;
}

/* The root's file as one line (trailing newline gone), or NULL when it cannot be read or is empty. */
static struct json_object *root_line(const struct ns_root *root, const char *path)
{
	struct json_object *o;
	char *v = NULL;

	/* the reader takes a mutable root only for its recorder: a snapshot captures these reads */
	if (!root || ns_read_str((struct ns_root *)root, path, &v) < 0)
		return NULL;
	o = jstr(v);
	free(v);
	return o;
}

/*
 * The machine's app-specific id (NS_APP_ID) from etc/machine-id; a capture carries only that
 * id, in NS_MACHINE_APP_ID_PATH (lib/snapshot.c). NULL when neither is readable and valid.
 */
static struct json_object *machine_app_id(const struct ns_root *root)
{
	char *v = NULL, id[33];
	int r;

	if (!root)
		return NULL;
	if (ns_read_str((struct ns_root *)root, "etc/machine-id", &v) == 0) {
		r = ns_id128_app_specific(v, NS_APP_ID, id);
		free(v);
		return r == 0 ? json_object_new_string(id) : NULL;
	}
	if (ns_root_is_live(root) || ns_read_str((struct ns_root *)root, NS_MACHINE_APP_ID_PATH, &v) < 0)
		return NULL;
	/* already the app-specific id: 32 hex digits, else nothing */
	r = strlen(v) == 32 && strspn(v, "0123456789abcdef") == 32;
	if (r)
		snprintf(id, sizeof(id), "%s", v);
	free(v);
	return r ? json_object_new_string(id) : NULL;
}

/* RFC 3339 UTC, to the second; NUMASTOR_TEST_NOW=EPOCH (test builds) fixes it for fixtures. */
static struct json_object *generated_at(void)
{
	const char *fixed = ns_test_hook("NUMASTOR_TEST_NOW");
	time_t now = fixed ? (time_t)strtoll(fixed, NULL, 10) : time(NULL);
	struct tm tm;
	char txt[32];

	if (!gmtime_r(&now, &tm) || !strftime(txt, sizeof(txt), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return NULL;
	return json_object_new_string(txt);
}

struct json_object *ns_json_host(const struct ns_root *root)
{
	struct json_object *host = json_object_new_object();

	if (!host)
		return NULL;
	add(host, "hostname", root_line(root, "proc/sys/kernel/hostname"));
	add(host, "boot_id", root_line(root, "proc/sys/kernel/random/boot_id"));
	add(host, "machine_id", machine_app_id(root));
	return host;
}

struct json_object *ns_json_envelope(const struct ns_root *root, int schema_version)
{
	struct json_object *doc = json_object_new_object();

	if (!doc)
		return NULL;
	add(doc, "schema_version", json_object_new_int(schema_version));
	add(doc, "host", ns_json_host(root));
	add(doc, "generated_at", generated_at());
	return doc;
}

struct json_object *ns_json_error(const struct ns_root *root, const char *command, const char *message, int exit_code)
{
	struct json_object *doc = ns_json_envelope(root, NS_ERROR_SCHEMA_VERSION), *err;

	if (!doc)
		return NULL;
	add(doc, "command", jstr(command));
	err = json_object_new_object();
	add(err, "message", jstr(message));
	add(err, "exit_code", json_object_new_int(exit_code));
	add(doc, "error", err);
	return doc;
}
