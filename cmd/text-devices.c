/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The devices, one line each (the default), and what a device's findings say of it and of its
 * IRQs (the rows --verbose colours). */
#define _GNU_SOURCE
#include <string.h>

#include "text-report.h"

/* The findings of device name, *n of them: the index's; NULL without it, when *n is every
 * finding's (the callers check the device of each). */
static const size_t *device_findings(const struct pen *p, const struct ns_findings *f, const char *name, size_t *n)
{
	if (!p->by_device) {
		*n = f->n;
		return NULL;
	}
	return ns_findings_index_of(p->by_device, name, n);
}

/* The k-th of device_findings(): an index into f->v */
#define DEVICE_FINDING(v, k) ((v) ? (v)[k] : (k))

/* The worst severity of a device's findings (its causes': an effect is never worse than its
 * cause) and their counts; -1 when it has none. */
int text_device_severity(const struct pen *p, const struct ns_findings *f, const char *name, struct dev_counts *dc)
{
	size_t n;
	const size_t *v = device_findings(p, f, name, &n);
	int worst = -1;

	memset(dc, 0, sizeof(*dc));
	for (size_t k = 0; k < n; k++) {
		const struct ns_finding *x = &f->v[DEVICE_FINDING(v, k)];
		if (x->device && strcmp(x->device, name) == 0) {
			if (x->caused_by)
				dc->effects++;
			else
				dc->causes[x->severity]++;
			if ((int)x->severity > worst)
				worst = (int)x->severity;
		}
	}
	return worst;
}

/* The FINDINGS cell: its causes by severity, "2 crit, 1 warn" ("-" for none); their effects are
 * listed under them in the findings. */
static void counts_cell(char *buf, size_t len, const struct dev_counts *dc)
{
	static const char *const abbr[] = {"info", "warn", "crit"};
	size_t at = 0;

	buf[0] = '\0';
	for (int s = NS_SEV_CRITICAL; s >= NS_SEV_INFO; s--)
		if (dc->causes[s] && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%zu %s", at ? ", " : "", dc->causes[s], abbr[s]);
	if (!buf[0])
		snprintf(buf, len, "-");
}

/* The worst severity among a device's findings whose evidence names IRQ irq; -1 none. */
int text_irq_severity(const struct pen *p, const struct ns_findings *f, const char *name, int irq)
{
	size_t n;
	const size_t *v = device_findings(p, f, name, &n);
	int worst = -1;

	for (size_t k = 0; k < n; k++) {
		const struct ns_finding *x = &f->v[DEVICE_FINDING(v, k)];
		struct json_object *e, *a;
		bool named = false;
		if (!x->device || strcmp(x->device, name) != 0 || !x->evidence)
			continue;
		if (json_object_object_get_ex(x->evidence, "irq", &e) && json_object_is_type(e, json_type_int))
			named |= json_object_get_int(e) == irq;
		if (json_object_object_get_ex(x->evidence, "irqs", &a) && json_object_is_type(a, json_type_array))
			for (size_t i = 0; i < json_object_array_length(a); i++) {
				struct json_object *o = json_object_array_get_idx(a, i), *m = o;
				if (json_object_is_type(o, json_type_object))
					json_object_object_get_ex(o, "irq", &m);
				named |= m && json_object_is_type(m, json_type_int) && json_object_get_int(m) == irq;
			}
		if (named && (int)x->severity > worst)
			worst = (int)x->severity;
	}
	return worst;
}

/* ---------------------------------------------------------------------------------------------
 * Devices: one line each (default), or each one's detail (--verbose)
 * --------------------------------------------------------------------------------------------- */

/* The node of a device for its line: "1", "0 FORCED" (what the forced function reads), "0 SET". */
static void node_cell(char *buf, size_t n, const struct ns_disk *d)
{
	const struct ns_pci *pci = d->npaths ? d->paths[0].pci : NULL;

	if (d->node_source == NS_NODE_SRC_FORCED && pci && pci->numa_node >= 0)
		snprintf(buf, n, "%d FORCED", pci->numa_node);
	else if (d->node >= 0 && d->node_source == NS_NODE_SRC_SET)
		snprintf(buf, n, "%d SET", d->node);
	else if (d->node >= 0)
		snprintf(buf, n, "%d", d->node);
	else if (d->node_source == NS_NODE_SRC_MEMBERS_DISAGREE)
		snprintf(buf, n, "split");
	else if (ns_disk_is_virtual(d) || d->node_source == NS_NODE_SRC_NONE)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%s", ns_node_source_name(d->node_source));
}

/* The nodes the queue vectors of d are aimed at (their effective CPUs', else their affinity's). */
static char *irq_nodes(const struct ns_system *sys, const struct ns_disk *d)
{
	struct ns_cpuset all = {0}, nodes = {0};
	char *s;
	bool any = false;

	all.known = true;
	for (size_t i = 0; i < d->nhctx; i++) {
		const struct ns_irq *irq = d->hctx[i].irq;
		if (!irq)
			continue;
		any = true;
		if (!ns_irq_target(irq)->known)
			all.known = false;
		else
			ns_cpuset_or(&all, ns_irq_target(irq));
	}
	if (!any) {
		ns_cpuset_clear(&all);
		return strdup("-");
	}
	ns_machine_nodes_of(&sys->machine, &all, &nodes);
	s = ns_text_cpus(&nodes);
	ns_cpuset_clear(&all);
	ns_cpuset_clear(&nodes);
	return s;
}

void text_device_table(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f)
{
	static const char *const head[] = {"NAME", "TYPE", "SIZE", "NODE", "PCI", "HWQ", "IRQ-NODES", "FINDINGS"};
	struct tw_table tb;

	tw_table_init(&tb, head, sizeof(head) / sizeof(head[0]));
	tb.keep = 1u << 0 | 1u << 4;
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		char size[32], node[48], queues[24], found[64], *pci = NULL, *inodes = irq_nodes(sys, d);
		struct dev_counts dc;
		int sev = text_device_severity(p, f, d->name, &dc);
		const char *pcis = "-";

		ns_text_bytes(size, sizeof(size), d->size_bytes);
		node_cell(node, sizeof(node), d);
		snprintf(queues, sizeof(queues), "%zu", d->nhctx);
		if (d->npaths == 1 && d->paths[0].pci)
			pcis = t(p, d->paths[0].pci->address);
		else if (d->npaths > 1 && asprintf(&pci, "%zu paths", d->npaths) >= 0)
			pcis = pci;
		counts_cell(found, sizeof(found), &dc);
		char *name = strdup(t(p, d->name));
		const char *cells[] = {name, ns_disk_kind_name(d->kind), size, node, pcis, queues, inodes, found};
		tw_table_row(&tb, sev < 0 ? NULL : sev_color((enum ns_severity)sev), cells);
		free(name);
		free(pci);
		free(inodes);
	}
	text_table(p, &tb, 2);
	tw_table_free(&tb);
}
