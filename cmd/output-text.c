/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The readable report: machine, then per device the chain device -> PCI -> node, its queues
 * with their CPUs and IRQs, where interrupts fire per node, then findings with remedies. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "numastor.h"
#include "rates.h"

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_RED "\033[1;31m"
#define C_YELLOW "\033[33m"
#define C_BLUE "\033[36m"
#define C_DIM "\033[2m"

/* The last few strings escaped for the terminal: enough for one fprintf's arguments. */
#define ESC_SLOTS 8
struct esc_ring {
	char *slot[ESC_SLOTS];
	unsigned next;
};

struct pen {
	FILE *out;
	bool color;
	struct esc_ring *ring;
};

/*
 * What the machine said (names, model, serial, paths, messages that quote them), escaped for
 * the terminal (lib/escape.h): no control byte or invalid UTF-8 reaches it. NULL stays NULL;
 * valid until ESC_SLOTS more calls.
 */
static const char *t(const struct pen *p, const char *s)
{
	struct esc_ring *r = p->ring;
	char **slot = &r->slot[r->next++ % ESC_SLOTS];

	if (!s)
		return NULL;
	free(*slot);
	*slot = ns_escape_text(s);
	return *slot ? *slot : "?";
}

static const char *col(const struct pen *p, const char *c)
{
	return p->color ? c : "";
}

int ns_color_choice(const char *when, FILE *out)
{
	if (strcmp(when, "always") == 0)
		return 1;
	if (strcmp(when, "never") == 0)
		return 0;
	if (strcmp(when, "auto") != 0)
		return -1;
	if (getenv("NO_COLOR") && *getenv("NO_COLOR"))
		return 0;
	return isatty(fileno(out));
}

static char *cpus(const struct ns_cpuset *s)
{
	char *t;
	if (!s->known || ns_cpuset_format(s, &t) < 0)
		return strdup("?");
	if (!*t) {
		free(t);
		return strdup("-");
	}
	return t;
}

static void human_bytes(char *buf, size_t n, long long b)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)b;
	int u = 0;
	if (b < 0) {
		snprintf(buf, n, "?");
		return;
	}
	while (v >= 1024 && u < 5)
		v /= 1024, u++;
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static void print_machine(const struct pen *p, const struct ns_system *sys)
{
	const struct ns_machine *m = &sys->machine;
	const struct ns_irqbalance *ib = &m->irqbalance;
	char *on = cpus(&m->online), *iso = cpus(&m->isolated), *nohz = cpus(&m->nohz_full);

	fprintf(p->out, "%snumastor%s: kernel %s, %zu NUMA node%s, CPUs %s online (root %s)\n", col(p, C_BOLD),
		col(p, C_RESET), m->kernel_release ? t(p, m->kernel_release) : "?", m->nnodes,
		m->nnodes == 1 ? "" : "s", on, t(p, ns_root_dir(sys->root)));
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct ns_node *n = &m->nodes[i];
		char *c = cpus(&n->cpus), mem[32], count[16] = "?";
		human_bytes(mem, sizeof(mem), n->memory_bytes);
		if (n->cpus.known) /* an unreadable cpulist has no count either */
			snprintf(count, sizeof(count), "%u", ns_cpuset_count(&n->cpus));
		fprintf(p->out, "  node %d: CPUs %s (%s), memory %s", n->id, c, count, mem);
		if (n->distances) {
			fprintf(p->out, ", distances");
			for (size_t k = 0; k < n->ndistances; k++)
				fprintf(p->out, " %d", n->distances[k]);
		}
		fputc('\n', p->out);
		free(c);
	}
	if (strcmp(iso, "-") != 0 || strcmp(nohz, "-") != 0)
		fprintf(p->out, "  isolated CPUs %s, nohz_full CPUs %s\n", iso, nohz);
	if (ib->running == 1)
		fprintf(p->out, "  irqbalance: running (pid %ld), %s\n", ib->pid,
			ib->policyscript ? t(p, ib->policyscript) : "no policy script");
	else if (ib->running == 0)
		fprintf(p->out, "  irqbalance: not running\n");
	else
		fprintf(p->out, "  irqbalance: unknown\n");
	for (int i = 0; i < 2; i++)
		if (sys->fixes[i].series)
			fprintf(p->out, "  kernel fix %s: %s (%s)\n", sys->fixes[i].series,
				sys->fixes[i].in_kernel == 1   ? "in this kernel"
				: sys->fixes[i].in_kernel == 0 ? "not in this kernel"
							       : "unknown",
				sys->fixes[i].basis ? t(p, sys->fixes[i].basis) : "?");
	if (!ns_machine_multi_node(m))
		fprintf(p->out, "  single NUMA node: locality is moot; queues and IRQs are shown below.\n");
	free(on);
	free(iso);
	free(nohz);
}

static void print_pci(const struct pen *p, const struct ns_path *path)
{
	const struct ns_pci *pci = path->pci;
	char *lc;

	fprintf(p->out, "  path %s%s%s -> ", ns_transport_name(path->transport), path->controller ? " " : "",
		path->controller ? t(p, path->controller) : "");
	if (!pci) {
		fprintf(p->out, "no PCI function\n");
		return;
	}
	lc = cpus(&pci->local_cpus);
	fprintf(p->out, "PCI %s [%s:%s] driver %s", t(p, pci->address),
		pci->vendor ? t(p, pci->vendor + (strncmp(pci->vendor, "0x", 2) ? 0 : 2)) : "?",
		pci->device ? t(p, pci->device + (strncmp(pci->device, "0x", 2) ? 0 : 2)) : "?",
		pci->driver ? t(p, pci->driver) : "(none)");
	if (pci->module)
		fprintf(p->out, " (%s%s)",
			pci->module->patched == 1   ? "numastor-patched"
			: pci->module->patched == 0 ? "stock"
						    : "stock?",
			pci->module->state == NS_MODULE_BUILTIN ? ", built in" : "");
	if (pci->numa_node == NS_NODE_UNREAD)
		fprintf(p->out, " -> node ?");
	else if (pci->forced == 1)
		fprintf(p->out, " -> node %d %sFORCED%s", pci->numa_node, col(p, C_RED), col(p, C_RESET));
	else if (pci->node_set == 1)
		fprintf(p->out, " -> node %d %sSET%s (not the firmware's)", pci->numa_node, col(p, C_RED),
			col(p, C_RESET));
	else
		fprintf(p->out, " -> node %d", pci->numa_node);
	fprintf(p->out, ", local CPUs %s\n", lc);
	free(lc);
}

static void print_queues(const struct pen *p, const struct ns_system *sys, const struct ns_disk *d)
{
	size_t maxnode = 0;

	for (size_t i = 0; i < sys->machine.nnodes; i++)
		if ((size_t)sys->machine.nodes[i].id + 1 > maxnode)
			maxnode = (size_t)sys->machine.nodes[i].id + 1;
	char nr[24] = "?";
	if (d->nr_requests >= 0)
		snprintf(nr, sizeof(nr), "%ld", d->nr_requests);
	fprintf(p->out, "  queues: %zu hardware queue%s, rq_affinity %s, scheduler %s, nr_requests %s\n", d->nhctx,
		d->nhctx == 1 ? "" : "s", d->rq_affinity >= 0 ? (const char *[]){"0", "1", "2"}[d->rq_affinity] : "?",
		d->scheduler ? t(p, d->scheduler) : "?", nr);
	if (!d->nhctx)
		return;
	char fires[64];
	if (sys->interval_seconds > 0)
		snprintf(fires, sizeof(fires), "fires per second per node (over %.1f s)", sys->interval_seconds);
	else
		snprintf(fires, sizeof(fires), "fires per node (since boot)");
	fprintf(p->out, "    %s%-8s %-12s %-6s %-6s %-12s %-12s %-8s %s%s\n", col(p, C_DIM), "hctx", "cpus", "nodes",
		"irq", "irq-cpus", "effective", "managed", fires, col(p, C_RESET));
	for (size_t i = 0; i < d->nhctx; i++) {
		const struct ns_hctx *h = &d->hctx[i];
		char *hc = cpus(&h->cpus), *hn = cpus(&h->nodes), irqno[16] = "-";
		char *aff = h->irq ? cpus(&h->irq->affinity) : strdup("-");
		char *eff = h->irq ? cpus(&h->irq->effective) : strdup("-");
		const char *managed = !h->irq ? "-" : h->irq->managed == 1 ? "yes" : h->irq->managed == 0 ? "no" : "?";
		char idx[24];

		if (h->irq)
			snprintf(irqno, sizeof(irqno), "%d", h->irq->irq);
		if (h->controller)
			snprintf(idx, sizeof(idx), "%s/%d", t(p, h->controller), h->index);
		else
			snprintf(idx, sizeof(idx), "%d", h->index);
		fprintf(p->out, "    %-8s %-12s %-6s %-6s %-12s %-12s %-8s ", idx, hc, hn, irqno, aff ? aff : "?",
			eff ? eff : "?", managed);
		/* what irq-fires-remote judges (lib/rates.h): rates, else since fix, else since boot */
		enum ns_count_basis basis = h->irq ? ns_irq_count_basis(h->irq) : NS_COUNTS_NONE;
		unsigned long long total;
		const unsigned long long *counts = h->irq ? ns_irq_judged_counts(h->irq, &total) : NULL;
		if (counts && basis == NS_COUNTS_OVER_INTERVAL) {
			for (size_t n = 0; n < h->irq->nper_node && n < maxnode; n++)
				fprintf(p->out, "%s%.1f", n ? "/" : "", (double)counts[n] / h->irq->interval);
		} else if (counts) {
			for (size_t n = 0; n < h->irq->nper_node && n < maxnode; n++)
				fprintf(p->out, "%s%llu", n ? "/" : "", counts[n]);
		} else {
			fputc(h->irq ? '?' : '-', p->out);
		}
		if (h->irq && h->irq->placed)
			fputs(basis == NS_COUNTS_SINCE_FIX ? "  (placed by numastor fix; counted since)"
							   : "  (placed by numastor fix)",
			      p->out);
		fputc('\n', p->out);
		free(hc);
		free(hn);
		free(aff);
		free(eff);
	}
}

static void print_other_irqs(const struct pen *p, const struct ns_disk *d)
{
	for (size_t k = 0; k < d->npaths; k++) {
		const struct ns_pci *pci = d->paths[k].pci;
		for (size_t i = 0; pci && i < pci->nirqs; i++) {
			const struct ns_irq *irq = &pci->irqs[i];
			char *eff;
			if (irq->hw_queue >= 0 && irq->hw_queue < (int)d->nhctx)
				continue;
			bool paired = false;
			for (size_t q = 0; q < d->nhctx; q++)
				paired |= d->hctx[q].irq == irq;
			if (paired)
				continue;
			eff = cpus(ns_irq_target(irq));
			fprintf(p->out, "    irq %d %s: CPUs %s, managed %s, user-settable %s, ", irq->irq,
				irq->name ? t(p, irq->name) : "?", eff,
				irq->managed == 1   ? "yes"
				: irq->managed == 0 ? "no"
						    : "?",
				irq->user_settable == 1	  ? "yes"
				: irq->user_settable == 0 ? "no"
							  : "?");
			if (irq->interval > 0 && irq->in_interval)
				fprintf(p->out, "%.1f fired per second\n", (double)irq->interval_total / irq->interval);
			else
				fprintf(p->out, "%llu fired since boot\n", irq->total);
			free(eff);
		}
	}
}

static void print_disk(const struct pen *p, const struct ns_system *sys, const struct ns_disk *d)
{
	char size[32];

	human_bytes(size, sizeof(size), d->size_bytes);
	fprintf(p->out, "\n%s%s%s  %s  %s", col(p, C_BOLD), t(p, d->name), col(p, C_RESET), ns_disk_kind_name(d->kind),
		size);
	if (d->identity.model)
		fprintf(p->out, "  %s", t(p, d->identity.model));
	if (d->identity.serial)
		fprintf(p->out, "  serial %s", t(p, d->identity.serial));
	fputc('\n', p->out);
	if (d->npartitions) {
		fprintf(p->out, "  partitions:");
		for (size_t i = 0; i < d->npartitions; i++)
			fprintf(p->out, " %s", t(p, d->partitions[i]));
		fputc('\n', p->out);
	}
	if (d->nslaves) {
		fprintf(p->out, "  sits on:");
		for (size_t i = 0; i < d->nslaves; i++)
			fprintf(p->out, " %s", t(p, d->slaves[i]));
		fputc('\n', p->out);
	}
	if (d->backing_file)
		fprintf(p->out, "  backed by file: %s\n", t(p, d->backing_file));
	if (ns_disk_is_virtual(d)) {
		fprintf(p->out, "  virtual device: locality follows what it sits on\n");
		return;
	}
	for (size_t i = 0; i < d->npaths; i++)
		print_pci(p, &d->paths[i]);
	fprintf(p->out, "  node: %s", ns_node_source_name(d->node_source));
	if (d->node >= 0)
		fprintf(p->out, " %d", d->node);
	fputc('\n', p->out);
	print_queues(p, sys, d);
	print_other_irqs(p, d);
	fprintf(p->out, "  allocations: per-device structures on %s",
		d->alloc.device_basis ? t(p, d->alloc.device_basis) : "?");
	if (d->alloc.midlayer_basis)
		fprintf(p->out, "; midlayer: %s", t(p, d->alloc.midlayer_basis));
	fputc('\n', p->out);
}

void ns_print_text(FILE *out, const struct ns_system *sys, const struct ns_findings *f, const struct ns_text_opts *opts)
{
	struct esc_ring ring = {0};
	struct pen p = {.out = out, .color = opts->color, .ring = &ring};
	int code = ns_findings_exit_code(f);

	print_machine(&p, sys);
	for (size_t i = 0; i < sys->ndisks; i++)
		print_disk(&p, sys, &sys->disks[i]);
	fprintf(out, "\n%sfindings%s\n", col(&p, C_BOLD), col(&p, C_RESET));
	if (!f->n)
		fprintf(out, "  none\n");
	for (size_t i = 0; i < f->n; i++) {
		const struct ns_finding *x = &f->v[i];
		const char *c = x->severity == NS_SEV_CRITICAL	? C_RED
				: x->severity == NS_SEV_WARNING ? C_YELLOW
								: C_BLUE;
		fprintf(out, "  %s%-8s%s %s%s%s%s\n", col(&p, c), ns_severity_name(x->severity), col(&p, C_RESET),
			t(&p, x->id), x->device ? " " : "", x->device ? t(&p, x->device) : "", "");
		fprintf(out, "           %s\n", t(&p, x->message));
		fprintf(out, "           remedy: %s%s%s\n", x->remedy_action ? t(&p, x->remedy_action) : "",
			x->remedy_action ? ": " : "", t(&p, x->remedy_text));
	}
	if (sys->notes.n) {
		fprintf(out, "\n%snotes%s\n", col(&p, C_BOLD), col(&p, C_RESET));
		for (size_t i = 0; i < sys->notes.n; i++)
			fprintf(out, "  %s %s: %s\n", t(&p, sys->notes.v[i].subject), t(&p, sys->notes.v[i].field),
				t(&p, sys->notes.v[i].message));
	}
	fprintf(out, "\nsummary: %s, %zu device%s, %zu critical, %zu warning, %zu info (exit %d)\n",
		code == 2   ? "CRITICAL"
		: code == 1 ? "WARNING"
			    : "OK",
		sys->ndisks, sys->ndisks == 1 ? "" : "s", ns_findings_count(f, NS_SEV_CRITICAL),
		ns_findings_count(f, NS_SEV_WARNING), ns_findings_count(f, NS_SEV_INFO), code);
	for (unsigned i = 0; i < ESC_SLOTS; i++)
		free(ring.slot[i]);
}
