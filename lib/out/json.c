/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "out/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/escape.h"
#include "act/plan.h"
#include "out/replay.h"
#include "read/rates.h"
#include "base/sha256.h"
#include "read/root.h"
#include "base/testhook.h"
#include "base/util.h"

/*
 * NULL-safe helpers: a NULL value becomes JSON null. Every string of the document goes
 * through jstr: what the machine said is made valid UTF-8 there (lib/base/escape.h), since json-c
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

#define add(o, k, v) json_object_object_add(o, k, v)

/*
 * check's document, written through a streaming writer (lib/out/jsonw.h): no object tree, the
 * bytes json-c gave for the same values. Every string goes through ns_jsonw_string, which
 * makes what the machine said valid UTF-8 (lib/base/escape.h) as it writes.
 */
#define K(k) ns_jsonw_key(w, k)

static void w_str(struct ns_jsonw *w, const char *k, const char *s)
{
	K(k);
	ns_jsonw_string(w, s);
}

static void w_int(struct ns_jsonw *w, const char *k, int64_t v)
{
	K(k);
	ns_jsonw_int64(w, v);
}

/* an int64 when known (v >= min), else null */
static void w_int_min(struct ns_jsonw *w, const char *k, int64_t v, int64_t min)
{
	K(k);
	if (v >= min)
		ns_jsonw_int64(w, v);
	else
		ns_jsonw_null(w);
}

static void w_node(struct ns_jsonw *w, const char *k, int node) /* null for < 0 */
{
	w_int_min(w, k, node, 0);
}

static void w_tri(struct ns_jsonw *w, const char *k, int v) /* 1 / 0 / -1 = null */
{
	K(k);
	if (v < 0)
		ns_jsonw_null(w);
	else
		ns_jsonw_bool(w, v);
}

static void w_bool(struct ns_jsonw *w, const char *k, bool v)
{
	K(k);
	ns_jsonw_bool(w, v);
}

static void w_null(struct ns_jsonw *w, const char *k)
{
	K(k);
	ns_jsonw_null(w);
}

static void w_strv(struct ns_jsonw *w, const char *k, char **v, size_t n)
{
	K(k);
	ns_jsonw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		ns_jsonw_string(w, v[i]);
	ns_jsonw_end_array(w);
}

static void w_nodes(struct ns_jsonw *w, const struct ns_cpuset *nodes)
{
	ns_jsonw_begin_array(w);
	ns_cpuset_foreach (n, nodes)
		ns_jsonw_int(w, n);
	ns_jsonw_end_array(w);
}

/* a node set when known, else null */
static void w_nodes_known(struct ns_jsonw *w, const char *k, const struct ns_cpuset *nodes)
{
	K(k);
	if (nodes->known)
		w_nodes(w, nodes);
	else
		ns_jsonw_null(w);
}

/* A CPU set as its list ("0-3,8"), ns_cpuset_format's form, written without a copy; null
 * when unknown. */
static void w_cpuset(struct ns_jsonw *w, const char *k, const struct ns_cpuset *s)
{
	int cpu;

	K(k);
	if (!s->known) {
		ns_jsonw_null(w);
		return;
	}
	ns_jsonw_begin_string(w);
	cpu = ns_cpuset_first(s);
	for (bool first = true; cpu >= 0; first = false) {
		int last = cpu, next;
		while ((next = ns_cpuset_next(s, last)) == last + 1)
			last = next;
		if (!first)
			ns_jsonw_raw(w, ",", 1);
		ns_jsonw_raw_uint(w, (uint64_t)cpu);
		if (last != cpu) {
			ns_jsonw_raw(w, "-", 1);
			ns_jsonw_raw_uint(w, (uint64_t)last);
		}
		cpu = next;
	}
	ns_jsonw_end_string(w);
}

/* A number to the millisecond, as "%.3f" prints it (rates, the interval). */
static void w_millis(struct ns_jsonw *w, const char *k, double v)
{
	char txt[32];

	K(k);
	snprintf(txt, sizeof(txt), "%.3f", v);
	ns_jsonw_number_text(w, txt);
}

/* A command-line CPU list: null when the parameter was not given (or the command line is unknown). */
static void w_isolation(struct ns_jsonw *w, const struct ns_isolation *iso)
{

	K("isolation");
	ns_jsonw_begin_object(w);
	w_bool(w, "cmdline_known", iso->cmdline_known);
	w_cpuset(w, "isolcpus", &iso->isolcpus);
	K("isolcpus_flags");
	ns_jsonw_begin_array(w);
	for (size_t i = 0; i < NS_ISO_NFLAGS; i++)
		if (iso->isolcpus_flags & ns_isolation_flags[i])
			ns_jsonw_string(w, ns_isolation_flag_name(ns_isolation_flags[i]));
	ns_jsonw_end_array(w);
	w_cpuset(w, "nohz_full", &iso->nohz_full);
	w_cpuset(w, "irqaffinity", &iso->irqaffinity);
	w_cpuset(w, "cgroup_isolated_cpus", &iso->cgroup);
	w_str(w, "cgroup_basis", iso->cgroup_basis);
	w_cpuset(w, "managed_irq_cpus", &iso->managed_irq);
	w_cpuset(w, "isolated_cpus", &iso->cpus);
	w_cpuset(w, "housekeeping_cpus", &iso->housekeeping);
	ns_jsonw_end_object(w);
}

static void w_machine(struct ns_jsonw *w, const struct ns_system *sys)
{
	const struct ns_machine *m = &sys->machine;

	ns_jsonw_begin_object(w);
	w_str(w, "kernel_release", m->kernel_release);
	w_int_min(w, "tainted", m->tainted, 0);
	w_bool(w, "multi_node", ns_machine_multi_node(m));
	w_cpuset(w, "online_cpus", &m->online);
	w_cpuset(w, "possible_cpus", &m->possible);
	w_cpuset(w, "isolated_cpus", &m->isolated);
	w_cpuset(w, "nohz_full_cpus", &m->nohz_full);
	w_tri(w, "numa_support", m->numa_support);
	w_isolation(w, &m->isolation);
	K("nodes");
	ns_jsonw_begin_array(w);
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct ns_node *n = &m->nodes[i];
		ns_jsonw_begin_object(w);
		w_int(w, "node", n->id);
		w_cpuset(w, "cpus", &n->cpus);
		w_int_min(w, "cpu_count", n->cpus.known ? (int64_t)ns_cpuset_count(&n->cpus) : -1, 0);
		w_int_min(w, "memory_bytes", n->memory_bytes, 0);
		K("distances");
		if (n->distances) {
			ns_jsonw_begin_array(w);
			for (size_t k = 0; k < n->ndistances; k++)
				ns_jsonw_int(w, n->distances[k]);
			ns_jsonw_end_array(w);
		} else {
			ns_jsonw_null(w);
		}
		ns_jsonw_end_object(w);
	}
	ns_jsonw_end_array(w);
	w_nodes_known(w, "overlapping_nodes", &m->overlapping_nodes);
	K("irqbalance");
	ns_jsonw_begin_object(w);
	w_tri(w, "running", m->irqbalance.running);
	w_int_min(w, "pid", m->irqbalance.pid, 0);
	w_str(w, "policyscript", m->irqbalance.policyscript);
	w_cpuset(w, "banned_cpus", &m->irqbalance.banned_cpus);
	ns_jsonw_end_object(w);
	K("kernel_fixes");
	ns_jsonw_begin_array(w);
	for (int i = 0; i < 2; i++) {
		if (!sys->fixes[i].series)
			continue;
		ns_jsonw_begin_object(w);
		w_str(w, "series", sys->fixes[i].series);
		w_tri(w, "in_kernel", sys->fixes[i].in_kernel);
		w_str(w, "basis", sys->fixes[i].basis);
		ns_jsonw_end_object(w);
	}
	ns_jsonw_end_array(w);
	ns_jsonw_end_object(w);
}

/* [{"node": N, "count": C}, ...], the shape of counts_by_node; with the rate (per second)
 * over the interval when interval > 0 */
static void w_counts(struct ns_jsonw *w, const char *k, const struct ns_irq *irq, const unsigned long long *v,
		     double interval)
{
	K(k);
	ns_jsonw_begin_array(w);
	for (size_t n = 0; n < irq->nper_node; n++) {
		ns_jsonw_begin_object(w);
		w_int(w, "node", (int)n);
		w_int(w, "count", (int64_t)v[n]);
		if (interval > 0)
			w_millis(w, "rate", (double)v[n] / interval);
		ns_jsonw_end_object(w);
	}
	ns_jsonw_end_array(w);
}

/* What `numastor fix` does with the vector: the plan's own decision (lib/model/vecmove.h). */
static void w_fix(struct ns_jsonw *w, const struct ns_vecmove_view *view, const struct ns_irq *irq)
{
	struct ns_vecmove dec;

	K("fix");
	if (ns_vecmove_view_decide(view, irq, &dec) < 0) {
		ns_jsonw_null(w);
		if (!w->err)
			w->err = -ENOMEM;
		ns_vecmove_clear(&dec);
		return;
	}
	ns_jsonw_begin_object(w);
	w_str(w, "action", dec.move ? "move" : "leave");
	w_str(w, "rule", ns_vecmove_rule_name(dec.rule));
	w_str(w, "reason", dec.reason);
	ns_jsonw_end_object(w);
	ns_vecmove_clear(&dec);
}

static void w_irq(struct ns_jsonw *w, const struct ns_vecmove_view *view, const struct ns_irq *irq)
{
	ns_jsonw_begin_object(w);
	w_int(w, "irq", irq->irq);
	w_str(w, "name", irq->name);
	w_str(w, "actions", irq->actions);
	w_str(w, "chip", irq->chip);
	w_str(w, "type", irq->msi ? "msi" : "intx");
	w_cpuset(w, "affinity", &irq->affinity);
	w_cpuset(w, "effective_affinity", &irq->effective);
	w_cpuset(w, "affinity_hint", &irq->hint);
	w_int_min(w, "node", irq->node, -1);
	w_tri(w, "managed", irq->managed);
	w_str(w, "managed_source", ns_managed_source_name(irq->managed_source));
	w_tri(w, "user_settable", irq->user_settable);
	w_str(w, "user_settable_source", ns_settable_source_name(irq->user_settable_source));
	w_bool(w, "placed_by_numastor", irq->placed);
	w_int_min(w, "hw_queue", irq->hw_queue, 0);
	K("total_count");
	if (irq->counts_known)
		ns_jsonw_int64(w, (int64_t)irq->total);
	else
		ns_jsonw_null(w);
	if (irq->per_node)
		w_counts(w, "counts_by_node", irq, irq->per_node, 0);
	else
		w_null(w, "counts_by_node");
	w_str(w, "count_basis", ns_count_basis_name(ns_irq_count_basis(irq)));
	if (irq->since_fix)
		w_counts(w, "counts_since_fix_by_node", irq, irq->since_fix, 0);
	else
		w_null(w, "counts_since_fix_by_node");
	if (irq->interval > 0 && irq->in_interval)
		w_counts(w, "rates_by_node", irq, irq->in_interval, irq->interval);
	else
		w_null(w, "rates_by_node");
	w_fix(w, view, irq);
	ns_jsonw_end_object(w);
}

static void w_module(struct ns_jsonw *w, const struct ns_module *m)
{
	K("module");
	if (!m) {
		ns_jsonw_null(w);
		return;
	}
	ns_jsonw_begin_object(w);
	w_str(w, "name", m->name);
	w_str(w, "state", m->state == NS_MODULE_LIVE ? "live" : m->state == NS_MODULE_BUILTIN ? "builtin" : "unknown");
	w_tri(w, "patched", m->patched);
	w_strv(w, "patches", m->patches, m->npatches);
	w_str(w, "srcversion", m->srcversion);
	w_tri(w, "out_of_tree", m->out_of_tree);
	ns_jsonw_end_object(w);
}

static void w_pci(struct ns_jsonw *w, const struct ns_vecmove_view *view, const struct ns_pci *pci)
{
	K("pci");
	if (!pci) {
		ns_jsonw_null(w);
		return;
	}
	ns_jsonw_begin_object(w);
	w_str(w, "address", pci->address);
	w_str(w, "vendor", pci->vendor);
	w_str(w, "device", pci->device);
	w_str(w, "class", pci->class_code);
	w_str(w, "driver", pci->driver);
	w_module(w, pci->module);
	K("numa_node");
	if (pci->numa_node == NS_NODE_UNREAD)
		ns_jsonw_null(w);
	else
		ns_jsonw_int(w, pci->numa_node);
	w_tri(w, "node_forced", pci->forced);
	w_str(w, "forced_evidence", pci->forced_evidence);
	w_tri(w, "node_set", pci->node_set);
	w_str(w, "node_set_evidence", pci->node_set_evidence);
	w_cpuset(w, "local_cpus", &pci->local_cpus);
	K("bus_node");
	if (pci->bus_node == NS_NODE_UNREAD)
		ns_jsonw_null(w);
	else
		ns_jsonw_int(w, pci->bus_node);
	K("bridge_nodes");
	ns_jsonw_begin_array(w);
	for (size_t i = 0; i < pci->nbridges; i++) {
		if (pci->bridge_nodes[i] == NS_NODE_UNREAD)
			ns_jsonw_null(w);
		else
			ns_jsonw_int(w, pci->bridge_nodes[i]);
	}
	ns_jsonw_end_array(w);
	K("irqs");
	ns_jsonw_begin_array(w);
	for (size_t i = 0; i < pci->nirqs; i++)
		w_irq(w, view, &pci->irqs[i]);
	ns_jsonw_end_array(w);
	ns_jsonw_end_object(w);
}

/* A root-relative sysfs path as the kernel names it: absolute. */
static void w_syspath(struct ns_jsonw *w, const char *k, const char *rel)
{
	char *p;

	K(k);
	if (!rel || !(p = ns_fmt("/%s", rel))) {
		ns_jsonw_null(w);
		return;
	}
	ns_jsonw_string(w, p);
	free(p);
}

static void w_member_nodes(struct ns_jsonw *w, const struct ns_disk *d)
{
	struct ns_cpuset nodes = {0};

	K("member_nodes");
	if (!d->members_read) {
		ns_jsonw_null(w);
		return;
	}
	nodes.known = true;
	for (size_t i = 0; i < d->nmembers; i++)
		if (d->members[i].node >= 0)
			ns_cpuset_set(&nodes, (unsigned)d->members[i].node);
	w_nodes(w, &nodes);
	ns_cpuset_clear(&nodes);
}

static void w_fabric(struct ns_jsonw *w, const struct ns_fabric *f)
{
	K("fabric");
	if (!f) {
		ns_jsonw_null(w);
		return;
	}
	ns_jsonw_begin_object(w);
	w_str(w, "transport", f->transport);
	w_str(w, "address", f->address);
	w_str(w, "traddr", f->traddr);
	w_str(w, "trsvcid", f->trsvcid);
	w_str(w, "host_traddr", f->host_traddr);
	w_str(w, "src_addr", f->src_addr);
	w_str(w, "host_iface", f->host_iface);
	w_str(w, "carrier", f->carrier);
	w_str(w, "carrier_kind", f->carrier_kind);
	w_str(w, "carrier_basis", f->carrier_basis);
	w_str(w, "reason", f->reason);
	ns_jsonw_end_object(w);
}

static void w_vmbus(struct ns_jsonw *w, const struct ns_vmbus *vb)
{
	K("vmbus");
	if (!vb) {
		ns_jsonw_null(w);
		return;
	}
	ns_jsonw_begin_object(w);
	w_str(w, "device_id", vb->device_id);
	w_node(w, "numa_node", vb->numa_node);
	K("channels");
	ns_jsonw_begin_array(w);
	for (size_t i = 0; i < vb->nchannels; i++) {
		ns_jsonw_begin_object(w);
		w_int(w, "id", vb->channels[i].id);
		w_int_min(w, "target_cpu", vb->channels[i].target_cpu, 0);
		w_node(w, "node", vb->channels[i].node);
		ns_jsonw_end_object(w);
	}
	ns_jsonw_end_array(w);
	K("channel_nodes");
	w_nodes(w, &vb->channel_nodes);
	ns_jsonw_end_object(w);
}

/* A multipath head's path: its disk, what the kernel says of it, and the nodes it serves
 * (lib/model/mpath). */
static void w_mpath(struct ns_jsonw *w, const struct ns_path *p)
{
	const char *disk = p->disk_syspath ? strrchr(p->disk_syspath, '/') : NULL;

	w_str(w, "disk", disk ? disk + 1 : p->disk_syspath);
	w_str(w, "ana_state", p->ana_state_state == NS_ATTR_READ ? p->ana_state : NULL);
	w_int_min(w, "queue_depth", p->queue_depth_state == NS_ATTR_READ ? p->queue_depth : -1, 0);
	K("serves_nodes");
	if (p->serves_source && p->serves_nodes.known)
		w_nodes(w, &p->serves_nodes);
	else
		ns_jsonw_null(w);
	w_str(w, "serves_nodes_source", p->serves_source);
}

static void w_disk(struct ns_jsonw *w, const struct ns_vecmove_view *view, const struct ns_disk *d)
{
	ns_jsonw_begin_object(w);
	w_str(w, "name", d->name);
	w_str(w, "kind", ns_disk_kind_name(d->kind));
	w_str(w, "devnum", d->devnum);
	w_syspath(w, "sysfs_path", d->syspath);
	w_int_min(w, "size_bytes", d->size_bytes, 0);
	w_strv(w, "partitions", d->partitions, d->npartitions);
	w_strv(w, "slaves", d->slaves, d->nslaves);
	w_strv(w, "holders", d->holders, d->nholders);
	w_str(w, "backing_file", d->backing_file);
	w_str(w, "iopolicy", d->iopolicy);
	K("identity");
	ns_jsonw_begin_object(w);
	w_str(w, "model", d->identity.model);
	w_str(w, "serial", d->identity.serial);
	w_str(w, "wwn", d->identity.wwn);
	w_str(w, "by_id", d->identity.by_id);
	ns_jsonw_end_object(w);
	w_node(w, "node", d->node);
	w_str(w, "node_source", ns_node_source_name(d->node_source));
	w_syspath(w, "node_device", d->node_device);
	w_str(w, "node_reason", d->node < 0 ? d->node_reason : NULL);
	w_member_nodes(w, d);
	if (d->members_read)
		w_bool(w, "member_nodes_complete", d->members_complete);
	else
		w_null(w, "member_nodes_complete");
	w_tri(w, "node_reliable", d->node_reliable);
	w_cpuset(w, "local_cpus", &d->local_cpus);
	K("paths");
	ns_jsonw_begin_array(w);
	for (size_t i = 0; i < d->npaths; i++) {
		ns_jsonw_begin_object(w);
		w_str(w, "transport", ns_transport_name(d->paths[i].transport));
		w_str(w, "controller", d->paths[i].controller);
		w_pci(w, view, d->paths[i].pci);
		w_fabric(w, d->paths[i].fabric);
		w_vmbus(w, d->paths[i].vmbus);
		if (d->kind == NS_DISK_NVME_MULTIPATH)
			w_mpath(w, &d->paths[i]);
		ns_jsonw_end_object(w);
	}
	ns_jsonw_end_array(w);
	K("queue");
	ns_jsonw_begin_object(w);
	w_int_min(w, "rq_affinity", d->rq_affinity, 0);
	w_str(w, "scheduler", d->scheduler);
	w_int_min(w, "nr_requests", d->nr_requests, 0);
	ns_jsonw_end_object(w);
	K("hw_queues");
	ns_jsonw_begin_array(w);
	for (size_t i = 0; i < d->nhctx; i++) {
		const struct ns_hctx *h = &d->hctx[i];
		ns_jsonw_begin_object(w);
		w_int(w, "index", h->index);
		w_str(w, "controller", h->controller);
		w_cpuset(w, "cpus", &h->cpus);
		w_cpuset(w, "isolated_cpus", &h->isolated); /* null when unknown */
		w_cpuset(w, "online_cpus", &h->online);	    /* "": it serves no online CPU */
		w_nodes_known(w, "nodes", &h->nodes);
		w_int_min(w, "nr_tags", h->nr_tags, 0);
		w_node(w, "memory_node", h->memory_node);
		if (h->irq)
			w_int(w, "irq", h->irq->irq);
		else
			w_null(w, "irq");
		w_str(w, "irq_pairing", ns_pairing_name(h->pairing));
		ns_jsonw_end_object(w);
	}
	ns_jsonw_end_array(w);
	K("allocations");
	ns_jsonw_begin_object(w);
	w_node(w, "device_node", d->alloc.device_node);
	w_str(w, "device_basis", d->alloc.device_basis ? d->alloc.device_basis : "");
	w_node(w, "midlayer_node", d->alloc.midlayer_node);
	w_str(w, "midlayer_basis", d->alloc.midlayer_basis);
	w_node(w, "host_alloc_node", d->alloc.host_alloc_node);
	w_str(w, "host_alloc_basis", d->alloc.host_alloc_basis);
	w_str(w, "host_alloc_module", d->alloc.host_alloc_module);
	w_nodes_known(w, "hw_queue_nodes", &d->alloc.hw_queue_nodes);
	w_tri(w, "shared_tags", d->alloc.shared_tags);
	w_str(w, "shared_tags_source", d->alloc.shared_tags_source ? d->alloc.shared_tags_source : "unknown");
	w_nodes_known(w, "tags_nodes", &d->alloc.tags_nodes);
	w_str(w, "tags_basis", d->alloc.tags_basis ? d->alloc.tags_basis : "");
	if (d->alloc.descriptor_basis) { /* nvme-pci's per-node descriptor pools (v6.16 on) only */
		w_nodes_known(w, "descriptor_nodes", &d->alloc.descriptor_nodes);
		w_str(w, "descriptor_basis", d->alloc.descriptor_basis);
	}
	ns_jsonw_end_object(w);
	ns_jsonw_end_object(w);
}

static void w_findings(struct ns_jsonw *w, const struct ns_findings *findings)
{
	K("findings");
	ns_jsonw_begin_array(w);
	for (size_t i = 0; i < findings->n; i++) {
		const struct ns_finding *f = &findings->v[i];
		ns_jsonw_begin_object(w);
		w_str(w, "id", f->id);
		w_str(w, "severity", ns_severity_name(f->severity));
		w_str(w, "device", f->device);
		w_str(w, "caused_by", f->caused_by);
		w_str(w, "message", f->message);
		K("evidence");
		ns_jsonw_json(w, f->evidence); /* its strings sanitized on the way */
		K("remedy");
		ns_jsonw_begin_object(w);
		w_str(w, "action", f->nsteps ? f->steps[0].command : NULL);
		w_str(w, "text", f->remedy_text);
		/* what numastor can do, least invasive first: each step's change and its undo */
		K("steps");
		ns_jsonw_begin_array(w);
		for (size_t k = 0; k < f->nsteps; k++) {
			ns_jsonw_begin_object(w);
			w_str(w, "command", f->steps[k].command);
			w_str(w, "changes", f->steps[k].changes);
			w_str(w, "undo", f->steps[k].undo);
			ns_jsonw_end_object(w);
		}
		ns_jsonw_end_array(w);
		ns_jsonw_end_object(w);
		ns_jsonw_end_object(w);
	}
	ns_jsonw_end_array(w);
}

static void w_summary(struct ns_jsonw *w, const struct ns_system *sys, const struct ns_findings *findings)
{
	int code = ns_findings_exit_code(findings);

	K("summary");
	ns_jsonw_begin_object(w);
	w_str(w, "status", code == 2 ? "critical" : code == 1 ? "warning" : code == 3 ? "unknown" : "ok");
	w_int(w, "exit_code", code);
	w_int(w, "devices", (int)sys->ndisks);
	w_int(w, "critical", (int)ns_findings_count(findings, NS_SEV_CRITICAL));
	w_int(w, "warning", (int)ns_findings_count(findings, NS_SEV_WARNING));
	w_int(w, "info", (int)ns_findings_count(findings, NS_SEV_INFO));
	w_int(w, "effects", (int)ns_findings_count_effects(findings));
	/* each cause once, worst first: its id, severity and how many devices it is found on */
	K("causes");
	ns_jsonw_begin_array(w);
	for (int sev = NS_SEV_CRITICAL; sev >= NS_SEV_INFO; sev--) {
		const char *ids[64];
		size_t n = ns_findings_cause_ids(findings, (enum ns_severity)sev, ids, 64);
		for (size_t k = 0; k < n && k < 64; k++) {
			int devices = 0;
			const char *last = NULL;
			for (size_t i = 0; i < findings->n; i++) {
				const struct ns_finding *x = &findings->v[i];
				if ((int)x->severity != sev || x->caused_by || strcmp(x->id, ids[k]) != 0)
					continue;
				/* a device with the cause twice (two paths) counts once: a device's
				 * findings of one id and severity are next to each other */
				devices += !(last && x->device && strcmp(last, x->device) == 0);
				last = x->device;
			}
			ns_jsonw_begin_object(w);
			w_str(w, "id", ids[k]);
			w_str(w, "severity", ns_severity_name((enum ns_severity)sev));
			w_int(w, "devices", devices);
			ns_jsonw_end_object(w);
		}
	}
	ns_jsonw_end_array(w);
	w_int(w, "unjudged", (int)findings->nunjudged);
	K("unjudged_devices");
	ns_jsonw_begin_array(w);
	for (size_t i = 0; i < findings->nunjudged; i++) {
		ns_jsonw_begin_object(w);
		w_str(w, "device", findings->unjudged[i].device);
		w_str(w, "reason", findings->unjudged[i].reason);
		ns_jsonw_end_object(w);
	}
	ns_jsonw_end_array(w);
	ns_jsonw_end_object(w);
}

static void w_notes(struct ns_jsonw *w, const struct ns_system *sys)
{
	K("notes");
	ns_jsonw_begin_array(w);
	for (size_t i = 0; i < sys->notes.n; i++) {
		ns_jsonw_begin_object(w);
		w_str(w, "subject", sys->notes.v[i].subject);
		w_str(w, "field", sys->notes.v[i].field);
		w_str(w, "message", sys->notes.v[i].message);
		ns_jsonw_end_object(w);
	}
	ns_jsonw_end_array(w);
}

int ns_json_write_check(struct ns_jsonw *w, const struct ns_system *sys, const struct ns_findings *findings,
			const char *version, bool streamed)
{
	struct json_object *env;
	struct ns_vecmove_view view;

	if (ns_plan_view(sys, findings, &view) < 0)
		return -ENOMEM;
	env = ns_json_envelope(sys->root, NS_SCHEMA_VERSION);
	if (!env) {
		ns_vecmove_view_free(&view);
		return -ENOMEM;
	}
	ns_jsonw_begin_object(w);
	/* the envelope's members, built once for every command's document */
	json_object_object_foreach(env, key, val)
	{
		K(key);
		ns_jsonw_json(w, val);
	}
	json_object_put(env);
	K("tool");
	ns_jsonw_begin_object(w);
	w_str(w, "name", "numastor");
	w_str(w, "version", version);
	ns_jsonw_end_object(w);
	w_str(w, "root", ns_root_dir(sys->root));
	w_bool(w, "privileged", sys->privileged);
	if (sys->interval_seconds > 0)
		w_millis(w, "interval_seconds", sys->interval_seconds);
	else
		w_null(w, "interval_seconds");
	K("machine");
	w_machine(w, sys);
	K("devices");
	if (streamed && sys->ndisks == 0) {
		ns_jsonw_number_text(w, "[]"); /* what check --json has always printed for none */
	} else {
		ns_jsonw_begin_array(w);
		for (size_t i = 0; i < sys->ndisks && !w->err; i++)
			w_disk(w, &view, &sys->disks[i]);
		ns_jsonw_end_array(w);
	}
	w_findings(w, findings);
	w_summary(w, sys, findings);
	w_notes(w, sys);
	ns_jsonw_end_object(w);
	if (streamed)
		ns_jsonw_raw(w, "\n", 1);
	ns_vecmove_view_free(&view);
	return w->err;
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
 * id, in NS_MACHINE_APP_ID_PATH (lib/out/snapshot.c). NULL when neither is readable and valid.
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

/* A replayed bundle's capture: when and on which host (null each when the bundle does not say). */
static int add_captured(struct json_object *doc, const struct ns_root *root)
{
	struct ns_replay_meta m;

	if (ns_replay_meta_read((struct ns_root *)root, &m) < 0)
		return -ENOMEM;
	add(doc, "captured_at", jstr(m.captured_at));
	add(doc, "captured_host", jstr(m.captured_host));
	ns_replay_meta_free(&m);
	return 0;
}

static struct json_object *envelope(const struct ns_root *root, int schema_version, bool captured)
{
	struct json_object *doc = json_object_new_object();

	if (!doc)
		return NULL;
	add(doc, "schema_version", json_object_new_int(schema_version));
	add(doc, "host", ns_json_host(root));
	add(doc, "generated_at", generated_at());
	if (captured && ns_replay_is(root) && add_captured(doc, root) < 0) {
		json_object_put(doc);
		return NULL;
	}
	return doc;
}

struct json_object *ns_json_envelope(const struct ns_root *root, int schema_version)
{
	return envelope(root, schema_version, true);
}

struct json_object *ns_json_error(const struct ns_root *root, const char *command, const char *message, int exit_code)
{
	/* the error document's shape is one for every command: no capture's fields */
	struct json_object *doc = envelope(root, NS_ERROR_SCHEMA_VERSION, false), *err;

	if (!doc)
		return NULL;
	add(doc, "command", jstr(command));
	err = json_object_new_object();
	add(err, "message", jstr(message));
	add(err, "exit_code", json_object_new_int(exit_code));
	add(doc, "error", err);
	return doc;
}

int ns_json_write_check_file(FILE *f, size_t max, const struct ns_system *sys, const struct ns_findings *findings,
			     const char *version, bool streamed)
{
	struct ns_jsonw w;
	int r = ns_jsonw_init_file(&w, f, max);

	if (r == 0)
		r = ns_json_write_check(&w, sys, findings, version, streamed);
	if (r == 0)
		r = ns_jsonw_finish(&w);
	ns_jsonw_free(&w);
	return r;
}
