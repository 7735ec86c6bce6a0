/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Prometheus text exposition of a check, for node_exporter's textfile collector: numastor_
 * prefix, _info gauges for identity, base units, no timestamps, labels per device, per
 * finding, per node and per note class (never per IRQ or CPU), so cardinality stays bounded:
 * at most 20 + disks x (11 + nodes) + virtual disks + findings series (numastor-check(8),
 * METRICS; tests/prometheus/check-metrics.py holds every fixture to it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "base/escape.h"
#include "numastor.h"
#include "read/rates.h"

/*
 * Label values: what the machine said escaped as in the text report (control characters and
 * invalid UTF-8 as \xNN, lib/base/escape.h), then backslash and double quote as the exposition
 * format wants: always valid UTF-8, one line.
 */
static void label(FILE *out, const char *name, const char *value, bool first)
{
	char *e = ns_escape_prom(value ? value : "");

	fprintf(out, "%s%s=\"%s\"", first ? "" : ",", name, e ? e : "?");
	free(e);
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const struct ns_pci *disk_pci(const struct ns_disk *d)
{
	return d->npaths ? d->paths[0].pci : NULL;
}

/* 1 when a driver forced the node of one of the device's PCI functions, 0 when none was
 * (every path's function known not forced), -1 when that is not known or there is none. */
static int device_forced(const struct ns_disk *d)
{
	int forced = d->npaths ? 0 : -1;

	for (size_t p = 0; p < d->npaths; p++) {
		const struct ns_pci *pci = d->paths[p].pci;
		if (pci && pci->forced == 1)
			return 1;
		if (!pci || pci->forced < 0)
			forced = -1;
	}
	return forced;
}

/*
 * The node of numastor_device_numa_node: the one the device sits on (lib/model/system.c), and for a
 * forced device, whose own node no firmware gives, the node the kernel reports for the forced
 * function (the one irqbalance trusts): -1 then means unknown only, and
 * numastor_device_node_forced tells the forced ones apart.
 */
static int device_node(const struct ns_disk *d)
{
	if (d->node_source == NS_NODE_SRC_FORCED)
		for (size_t p = 0; p < d->npaths; p++) {
			const struct ns_pci *pci = d->paths[p].pci;
			if (pci && pci->forced == 1 && pci->numa_node >= 0)
				return pci->numa_node;
		}
	return d->node >= 0 ? d->node : -1;
}

/*
 * numastor_notes{class}: the notes (fields numastor could not read or trust, lib/base/notes.h) by
 * the class of their field, a fixed set so the series are bounded; every class is written,
 * 0 included, so a note's appearance is a change of value, not of series. A field the table
 * does not know counts as "other".
 */
enum note_class { NC_MACHINE, NC_IRQBALANCE, NC_DEVICE, NC_QUEUE, NC_PCI, NC_IRQ, NC_RATES, NC_MODULE, NC_OTHER };
static const char *const note_classes[] = {
	[NC_MACHINE] = "machine", [NC_IRQBALANCE] = "irqbalance",
	[NC_DEVICE] = "device",	  [NC_QUEUE] = "queue",
	[NC_PCI] = "pci",	  [NC_IRQ] = "irq",
	[NC_RATES] = "rates",	  [NC_MODULE] = "module",
	[NC_OTHER] = "other",
};

static enum note_class note_class(const char *field)
{
	static const struct {
		const char *field; /* the field, or its part before the first '.' */
		enum note_class class;
	} map[] = {
		{"nodes", NC_MACHINE},
		{"possible_cpus", NC_MACHINE},
		{"online_cpus", NC_MACHINE},
		{"isolated_cpus", NC_MACHINE},
		{"nohz_full_cpus", NC_MACHINE},
		{"isolation", NC_MACHINE},
		{"kernel_max", NC_MACHINE},
		{"kernel_release", NC_MACHINE},
		{"tainted", NC_MACHINE},
		{"privileged", NC_MACHINE},
		{"placed_by_numastor", NC_MACHINE},
		{"irqbalance", NC_IRQBALANCE},
		{"device", NC_DEVICE},
		{"devnum", NC_DEVICE},
		{"size_bytes", NC_DEVICE},
		{"hidden", NC_DEVICE},
		{"backing_file", NC_DEVICE},
		{"iopolicy", NC_DEVICE},
		{"paths", NC_DEVICE},
		{"identity", NC_DEVICE},
		{"node_source", NC_DEVICE},
		{"fabric", NC_DEVICE},
		{"vmbus", NC_DEVICE},
		{"queue", NC_QUEUE},
		{"hw_queues", NC_QUEUE},
		{"hctx_tags_shared", NC_QUEUE},
		{"scsi_scan", NC_QUEUE},
		{"pci", NC_PCI},
		{"irq", NC_IRQ},
		{"affinity", NC_IRQ},
		{"effective_affinity", NC_IRQ},
		{"affinity_hint", NC_IRQ},
		{"node", NC_IRQ},
		{"actions", NC_IRQ},
		{"chip", NC_IRQ},
		{"managed", NC_IRQ},
		{"total_count", NC_IRQ},
		{"count_basis", NC_RATES},
		{"rates_by_node", NC_RATES},
		{"module", NC_MODULE},
	};
	size_t len = field ? strcspn(field, ".") : 0;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strlen(map[i].field) == len && strncmp(map[i].field, field, len) == 0)
			return map[i].class;
	return NC_OTHER;
}

static void print_notes(FILE *out, const struct ns_notes *notes)
{
	size_t n[NC_OTHER + 1] = {0};

	for (size_t i = 0; i < notes->n; i++)
		n[note_class(notes->v[i].field)]++;
	family(out, "numastor_notes", "gauge",
	       "Notes of the check (a field missing, empty, garbled or unreadable) by the class of the field.");
	for (size_t c = 0; c < sizeof(n) / sizeof(n[0]); c++) {
		fputs("numastor_notes{", out);
		label(out, "class", note_classes[c], true);
		fprintf(out, "} %zu\n", n[c]);
	}
}

/* A device's remote queue interrupts, held until their family is written. */
struct remote_count {
	bool judged; /* some queue vector of the device was judged */
	unsigned long long n;
};

int ns_print_prometheus_failed(FILE *out, const char *reason)
{
	family(out, "numastor_check_status", "gauge",
	       "Overall result: 0 ok, 1 warning, 2 critical, 3 unknown (a device could not be judged, or the check "
	       "failed).");
	fputs("numastor_check_status 3\n", out);
	family(out, "numastor_check_failed", "gauge", "The check failed (always 1 when present): the reason.");
	fputs("numastor_check_failed{", out);
	label(out, "reason", reason ? reason : "unknown", true);
	fputs("} 1\n", out);
	return ferror(out) ? -EIO : 0;
}

int ns_print_prometheus(FILE *out, const struct ns_system *sys, const struct ns_findings *f)
{
	const struct ns_machine *m = &sys->machine;
	static const char *const sev[] = {"info", "warning", "critical"};
	/* before the first line: out of memory writes nothing rather than half the families */
	struct remote_count *remote = calloc(sys->ndisks ? sys->ndisks : 1, sizeof(*remote));

	if (!remote)
		return -ENOMEM;
	family(out, "numastor_info", "gauge", "numastor version and the kernel it checked (always 1).");
	fputs("numastor_info{", out);
	label(out, "version", NUMASTOR_VERSION, true);
	label(out, "kernel", m->kernel_release, false);
	fputs("} 1\n", out);

	family(out, "numastor_check_status", "gauge",
	       "Overall result: 0 ok, 1 warning, 2 critical, 3 unknown (a device could not be judged, or the check "
	       "failed).");
	fprintf(out, "numastor_check_status %d\n", ns_findings_exit_code(f));
	family(out, "numastor_devices_unjudged", "gauge",
	       "Devices no rule could judge: a fact the rules need could not be read (numastor check names them).");
	fprintf(out, "numastor_devices_unjudged %zu\n", f->nunjudged);

	family(out, "numastor_numa_nodes", "gauge", "NUMA nodes with CPUs or memory.");
	fprintf(out, "numastor_numa_nodes %zu\n", m->nnodes);

	family(out, "numastor_isolated_cpus", "gauge",
	       "CPUs isolated by isolcpus=, nohz_full= or a cgroup v2 isolated partition (absent when unknown).");
	if (m->isolation.cpus.known)
		fprintf(out, "numastor_isolated_cpus %u\n", ns_cpuset_count(&m->isolation.cpus));
	family(out, "numastor_housekeeping_cpus", "gauge",
	       "Online CPUs that are not isolated: where numastor fix places vectors (absent when unknown).");
	if (m->isolation.housekeeping.known)
		fprintf(out, "numastor_housekeeping_cpus %u\n", ns_cpuset_count(&m->isolation.housekeeping));

	family(out, "numastor_irqbalance_running", "gauge",
	       "1 when irqbalance runs, 0 when not (absent when unknown).");
	if (m->irqbalance.running >= 0)
		fprintf(out, "numastor_irqbalance_running %d\n", m->irqbalance.running);

	family(out, "numastor_findings", "gauge",
	       "Causes found by the check, by severity (their effects are not counted).");
	for (int s = 0; s < 3; s++) {
		fputs("numastor_findings{", out);
		label(out, "severity", sev[s], true);
		fprintf(out, "} %zu\n", ns_findings_count(f, (enum ns_severity)s));
	}
	family(out, "numastor_finding_effects", "gauge",
	       "Findings a cause explains (each is a numastor_finding whose cause is another id).");
	fprintf(out, "numastor_finding_effects %zu\n", ns_findings_count_effects(f));

	family(out, "numastor_finding", "gauge",
	       "One finding (always 1): its stable id, severity, device, cause (its own id for a cause) and role "
	       "(cause or effect).");
	for (size_t i = 0; i < f->n; i++) {
		fputs("numastor_finding{", out);
		label(out, "id", f->v[i].id, true);
		label(out, "severity", ns_severity_name(f->v[i].severity), false);
		label(out, "device", f->v[i].device ? f->v[i].device : "", false);
		label(out, "cause", f->v[i].caused_by ? f->v[i].caused_by : f->v[i].id, false);
		label(out, "role", f->v[i].caused_by ? "effect" : "cause", false);
		fputs("} 1\n", out);
	}

	family(out, "numastor_device_info", "gauge", "A block device and what is behind it (always 1).");
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		const struct ns_pci *pci = disk_pci(d);
		fputs("numastor_device_info{", out);
		label(out, "device", d->name, true);
		label(out, "kind", ns_disk_kind_name(d->kind), false);
		label(out, "pci", pci ? pci->address : "", false);
		label(out, "driver", pci && pci->driver ? pci->driver : "", false);
		label(out, "model", d->identity.model, false);
		label(out, "node_source", ns_node_source_name(d->node_source), false);
		fputs("} 1\n", out);
	}

	family(out, "numastor_device_numa_node", "gauge",
	       "The NUMA node a device sits on; for a forced one the node the kernel reports (-1 unknown).");
	for (size_t i = 0; i < sys->ndisks; i++)
		if (!ns_disk_is_virtual(&sys->disks[i])) {
			fputs("numastor_device_numa_node{", out);
			label(out, "device", sys->disks[i].name, true);
			fprintf(out, "} %d\n", device_node(&sys->disks[i]));
		}

	family(out, "numastor_device_node_forced", "gauge",
	       "1 when a driver forced the node of the device's PCI function, 0 when not (absent when unknown).");
	for (size_t i = 0; i < sys->ndisks; i++) {
		int forced = device_forced(&sys->disks[i]);
		if (forced < 0)
			continue;
		fputs("numastor_device_node_forced{", out);
		label(out, "device", sys->disks[i].name, true);
		fprintf(out, "} %d\n", forced);
	}

	family(out, "numastor_device_driver_patched", "gauge",
	       "1 when the device's driver module carries a numastor patch marker, 0 when stock.");
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_pci *pci = disk_pci(&sys->disks[i]);
		if (!pci || !pci->module || pci->module->patched < 0)
			continue;
		fputs("numastor_device_driver_patched{", out);
		label(out, "device", sys->disks[i].name, true);
		label(out, "module", pci->module->name, false);
		fprintf(out, "} %d\n", pci->module->patched);
	}

	family(out, "numastor_device_hw_queues", "gauge", "blk-mq hardware queues of a device.");
	for (size_t i = 0; i < sys->ndisks; i++)
		if (!ns_disk_is_virtual(&sys->disks[i])) {
			fputs("numastor_device_hw_queues{", out);
			label(out, "device", sys->disks[i].name, true);
			fprintf(out, "} %zu\n", sys->disks[i].nhctx);
		}

	family(out, "numastor_device_irqs", "gauge", "Interrupt vectors of a device's PCI functions, by managed-ness.");
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		size_t n[3] = {0, 0, 0}; /* managed, unmanaged, unknown */
		static const char *const what[] = {"true", "false", "unknown"};
		if (ns_disk_is_virtual(d))
			continue;
		for (size_t p = 0; p < d->npaths; p++)
			for (size_t k = 0; d->paths[p].pci && k < d->paths[p].pci->nirqs; k++) {
				int mg = d->paths[p].pci->irqs[k].managed;
				n[mg == 1 ? 0 : mg == 0 ? 1 : 2]++;
			}
		for (int k = 0; k < 3; k++) {
			fputs("numastor_device_irqs{", out);
			label(out, "device", d->name, true);
			label(out, "managed", what[k], false);
			fprintf(out, "} %zu\n", n[k]);
		}
	}

	family(out, "numastor_device_interrupts_total", "counter",
	       "Interrupts a device's vectors have fired, by the node of the CPU that took them.");
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		for (size_t node = 0; node < m->nnodes; node++) {
			unsigned long long sum = 0;
			bool any = false;
			int id = m->nodes[node].id;
			for (size_t p = 0; p < d->npaths; p++)
				for (size_t k = 0; d->paths[p].pci && k < d->paths[p].pci->nirqs; k++) {
					const struct ns_irq *irq = &d->paths[p].pci->irqs[k];
					if (irq->per_node && (size_t)id < irq->nper_node) {
						sum += irq->per_node[id];
						any = true;
					}
				}
			if (!any)
				continue;
			fputs("numastor_device_interrupts_total{", out);
			label(out, "device", d->name, true);
			fprintf(out, ",node=\"%d\"} %llu\n", id, sum);
		}
	}

	/* The counter the NumastorIrqsFireRemote alert takes rate() of: queue vectors' interrupts
	 * since boot, split by whether the CPU that took them is on a node the vector's queue serves
	 * (the device's node for a queue serving every node), as irq-fires-remote judges them. */
	family(out, "numastor_device_queue_interrupts_total", "counter",
	       "Interrupts of a device's queue vectors, local when taken on a node their queue serves.");
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		unsigned long long sum[2] = {0, 0};
		bool any = false;
		for (size_t q = 0; q < d->nhctx; q++) {
			const struct ns_irq *irq = d->hctx[q].irq;
			struct ns_cpuset ref = {0};
			bool dup = false;
			for (size_t k = 0; k < q; k++)
				dup |= d->hctx[k].irq == irq;
			if (!irq || dup || !irq->per_node ||
			    !ns_queue_expected_nodes(m, d->node, &d->hctx[q].nodes, &ref)) {
				ns_cpuset_clear(&ref);
				continue;
			}
			for (size_t n = 0; n < irq->nper_node; n++)
				sum[ns_cpuset_test(&ref, (unsigned)n) ? 1 : 0] += irq->per_node[n];
			any = true;
			ns_cpuset_clear(&ref);
		}
		for (int local = 0; any && local < 2; local++) {
			fputs("numastor_device_queue_interrupts_total{", out);
			label(out, "device", d->name, true);
			fprintf(out, ",local=\"%s\"} %llu\n", local ? "true" : "false", sum[local]);
		}
		remote[i] = (struct remote_count){.judged = any, .n = sum[0]};
	}

	/* The remote share in one division: rate(remote) / rate(sum without (local) of the above). */
	family(out, "numastor_device_remote_interrupts_total", "counter",
	       "Interrupts of a device's queue vectors taken on a node other than those their queue serves.");
	for (size_t i = 0; i < sys->ndisks; i++) {
		if (!remote[i].judged)
			continue;
		fputs("numastor_device_remote_interrupts_total{", out);
		label(out, "device", sys->disks[i].name, true);
		fprintf(out, "} %llu\n", remote[i].n);
	}
	free(remote);

	print_notes(out, &sys->notes);
	return ferror(out) ? -EIO : 0;
}
