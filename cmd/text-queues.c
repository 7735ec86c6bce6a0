/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A device's queue table, its other IRQs and what `numastor fix` does with each (--verbose). */
#define _GNU_SOURCE
#include <string.h>

#include "base/util.h"
#include "read/rates.h"
#include "text-report.h"

/* "move" or "leave": what `numastor fix` does with irq (its reason: print_fix) */
static const char *fix_word(const struct ns_vecmove_view *view, const struct ns_irq *irq)
{
	struct ns_vecmove dec = {0};
	const char *w = "?";

	if (view && ns_vecmove_view_decide(view, irq, &dec) == 0)
		w = dec.move ? "move" : "leave";
	ns_vecmove_clear(&dec);
	return w;
}

void text_queues(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f,
		 const struct ns_vecmove_view *view, const struct ns_disk *d)
{
	static const char *const head[] = {"",	       "HWQ",	    "CPUS", "NODE", "IRQ",
					   "AFFINITY", "EFFECTIVE", "MGD",  "FIX",  "FIRES"};
	size_t maxnode = 0, offending = 0;
	char nr[24] = "?", fires_head[64];
	struct tw_table tb;

	for (size_t i = 0; i < sys->machine.nnodes; i++)
		if ((size_t)sys->machine.nodes[i].id + 1 > maxnode)
			maxnode = (size_t)sys->machine.nodes[i].id + 1;
	if (d->nr_requests >= 0)
		snprintf(nr, sizeof(nr), "%ld", d->nr_requests);
	say(p, 2, NULL, "queues: %zu hardware queue%s, rq_affinity %s, scheduler %s, nr_requests %s", d->nhctx,
	    d->nhctx == 1 ? "" : "s", d->rq_affinity >= 0 ? (const char *[]){"0", "1", "2"}[d->rq_affinity] : "?",
	    d->scheduler ? t(p, d->scheduler) : "?", nr);
	if (!d->nhctx)
		return;
	if (sys->interval_seconds > 0)
		say(p, 2, NULL,
		    "AFFINITY (smp_affinity_list; = the queue's CPUs), EFFECTIVE (effective_affinity_list), MGD "
		    "kernel-managed, FIX what numastor fix does (why: below), FIRES per second per node 0/1/... "
		    "over %.1f s",
		    sys->interval_seconds);
	else
		say(p, 2, NULL,
		    "AFFINITY (smp_affinity_list; = the queue's CPUs), EFFECTIVE (effective_affinity_list), MGD "
		    "kernel-managed, FIX what numastor fix does (why: below), FIRES per node 0/1/... since boot");
	snprintf(fires_head, sizeof(fires_head), "FIRES");
	tw_table_init(&tb, head, sizeof(head) / sizeof(head[0]));
	for (size_t i = 0; i < d->nhctx; i++) {
		const struct ns_hctx *h = &d->hctx[i];
		char *hc = ns_text_cpus(&h->cpus), *hn = ns_text_cpus(&h->nodes), irqno[16] = "-", idx[64],
		     *fires = NULL;
		/* "=": the vector may fire on exactly the CPUs its queue serves (the usual case: the
		 * column stays narrow, and a row that differs stands out) */
		bool same = h->irq && h->irq->affinity.known && h->cpus.known &&
			    ns_cpuset_equal(&h->irq->affinity, &h->cpus);
		char *aff = !h->irq ? strdup("-") : same ? strdup("=") : ns_text_cpus(&h->irq->affinity);
		char *eff = h->irq ? ns_text_cpus(&h->irq->effective) : strdup("-");
		const char *managed = !h->irq ? "-" : h->irq->managed == 1 ? "yes" : h->irq->managed == 0 ? "no" : "?";
		size_t flen = 0;
		FILE *fs = open_memstream(&fires, &flen);
		int sev = h->irq ? text_irq_severity(p, f, d->name, h->irq->irq) : -1;

		if (h->irq)
			snprintf(irqno, sizeof(irqno), "%d", h->irq->irq);
		if (h->controller)
			snprintf(idx, sizeof(idx), "%s/%d", t(p, h->controller), h->index);
		else
			snprintf(idx, sizeof(idx), "%d", h->index);
		/* what irq-fires-remote judges (lib/read/rates.h): rates, else since fix, else since boot */
		enum ns_count_basis basis = h->irq ? ns_irq_count_basis(h->irq) : NS_COUNTS_NONE;
		unsigned long long total;
		const unsigned long long *counts = h->irq ? ns_irq_judged_counts(h->irq, &total) : NULL;
		if (fs) {
			if (counts && basis == NS_COUNTS_OVER_INTERVAL) {
				for (size_t n = 0; n < h->irq->nper_node && n < maxnode; n++)
					fprintf(fs, "%s%.1f", n ? "/" : "", (double)counts[n] / h->irq->interval);
			} else if (counts) {
				for (size_t n = 0; n < h->irq->nper_node && n < maxnode; n++)
					fprintf(fs, "%s%llu", n ? "/" : "", counts[n]);
			} else {
				fputc(h->irq ? '?' : '-', fs);
			}
			if (h->irq && h->irq->placed)
				fputs(basis == NS_COUNTS_SINCE_FIX ? " (placed by numastor fix; counted since)"
								   : " (placed by numastor fix)",
				      fs);
			fclose(fs);
		}
		offending += sev >= 0;
		const char *cells[] = {sev >= 0 ? "!" : "",
				       idx,
				       hc,
				       hn,
				       irqno,
				       aff,
				       eff,
				       managed,
				       h->irq ? fix_word(view, h->irq) : "-",
				       fires};
		tw_table_row(&tb, sev >= 0 ? sev_color((enum ns_severity)sev) : NULL, cells);
		free(hc);
		free(hn);
		free(aff);
		free(eff);
		free(fires);
	}
	text_table(p, &tb, 2); /* at the page's edge, as its 8 columns need the room */
	tw_table_free(&tb);
	if (offending)
		say(p, 2, NULL, "! a finding names this queue's IRQ (%zu of %zu)", offending, d->nhctx);
}

void text_other_irqs(const struct pen *p, const struct ns_vecmove_view *view, const struct ns_disk *d)
{
	for (size_t k = 0; k < d->npaths; k++) {
		const struct ns_pci *pci = d->paths[k].pci;
		for (size_t i = 0; pci && i < pci->nirqs; i++) {
			const struct ns_irq *irq = &pci->irqs[i];
			char *aff, *eff, fired[64];
			if (irq->hw_queue >= 0 && irq->hw_queue < (int)d->nhctx)
				continue;
			bool paired = false;
			for (size_t q = 0; q < d->nhctx; q++)
				paired |= d->hctx[q].irq == irq;
			if (paired)
				continue;
			aff = ns_text_cpus(&irq->affinity);
			eff = ns_text_cpus(&irq->effective);
			if (irq->interval > 0 && irq->in_interval)
				snprintf(fired, sizeof(fired), "%.1f fired per second",
					 (double)irq->interval_total / irq->interval);
			else
				snprintf(fired, sizeof(fired), "%llu fired since boot", irq->total);
			say(p, 4, NULL,
			    "irq %d %s: affinity %s, effective %s, managed %s, user-settable %s, %s; fix: %s", irq->irq,
			    irq->name ? t(p, irq->name) : "?", aff, eff,
			    irq->managed == 1	? "yes"
			    : irq->managed == 0 ? "no"
						: "?",
			    irq->user_settable == 1   ? "yes"
			    : irq->user_settable == 0 ? "no"
						      : "?",
			    fired, fix_word(view, irq));
			free(aff);
			free(eff);
		}
	}
}

/*
 * What `numastor fix` does with d's vectors and why, one line per decision (the plan's own,
 * lib/model/vecmove.h): "fix moves irqs 70-73: ..." / "fix leaves irq 74 alone: ...".
 */
void text_fix(const struct pen *p, const struct ns_vecmove_view *view, const struct ns_disk *d)
{
	struct ns_vecmove *dec;
	int *num, *grp;
	size_t n = 0;

	if (!view)
		return;
	for (size_t k = 0; k < d->npaths; k++)
		n += d->paths[k].pci ? d->paths[k].pci->nirqs : 0;
	if (!n)
		return;
	dec = calloc(n, sizeof(*dec));
	num = calloc(n, sizeof(*num));
	grp = calloc(n, sizeof(*grp));
	n = 0;
	for (size_t k = 0; dec && num && grp && k < d->npaths; k++)
		for (size_t i = 0; d->paths[k].pci && i < d->paths[k].pci->nirqs; i++) {
			num[n] = d->paths[k].pci->irqs[i].irq;
			if (ns_vecmove_view_decide(view, &d->paths[k].pci->irqs[i], &dec[n]) == 0 && dec[n].reason)
				n++;
			else
				ns_vecmove_clear(&dec[n]);
		}
	for (size_t i = 0; dec && num && grp && i < n; i++) {
		bool seen = false;
		size_t k = 0;
		char *list = NULL;
		size_t llen = 0;
		FILE *m;
		for (size_t j = 0; j < i && !seen; j++)
			seen = dec[j].move == dec[i].move && strcmp(dec[j].reason, dec[i].reason) == 0;
		if (seen)
			continue;
		for (size_t j = i; j < n; j++)
			if (dec[j].move == dec[i].move && strcmp(dec[j].reason, dec[i].reason) == 0)
				grp[k++] = num[j];
		m = open_memstream(&list, &llen);
		if (!m)
			continue;
		ns_irq_list_write(m, grp, k);
		fclose(m);
		say(p, 4, NULL, "fix %s %s%s: %s", dec[i].move ? "moves" : "leaves", list ? list : "?",
		    dec[i].move ? "" : " alone", t(p, dec[i].reason));
		free(list);
	}
	for (size_t i = 0; dec && i < n; i++)
		ns_vecmove_clear(&dec[i]);
	free(dec);
	free(num);
	free(grp);
}
