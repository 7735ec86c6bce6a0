/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "trace/traceagg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int node_of(const int *cpu_node, size_t ncpus, int64_t cpu)
{
	if (cpu < 0 || (uint64_t)cpu >= ncpus)
		return -1;
	return cpu_node[cpu];
}

/* The target (and which of its disks) that carries dev's requests; -1 none. */
static long target_of(const struct ns_trace_target *t, size_t nt, uint32_t dev, size_t *disk)
{
	for (size_t i = 0; i < nt; i++)
		for (size_t j = 0; j < t[i].ndisks; j++)
			if (t[i].disks[j] == dev) {
				*disk = j;
				return (long)i;
			}
	return -1;
}

static struct ns_trace_pair *pair_of(struct ns_trace_device *d, int sn, int cn)
{
	struct ns_trace_pair *g;

	for (size_t i = 0; i < d->npairs; i++)
		if (d->pairs[i].submit_node == sn && d->pairs[i].complete_node == cn)
			return &d->pairs[i];
	g = realloc(d->pairs, (d->npairs + 1) * sizeof(*g));
	if (!g)
		return NULL;
	d->pairs = g;
	g = &d->pairs[d->npairs++];
	memset(g, 0, sizeof(*g));
	g->submit_node = sn;
	g->complete_node = cn;
	return g;
}

static struct ns_trace_queue *queue_of(struct ns_trace_device *d, uint32_t dev, const char *disk, uint32_t hwq)
{
	struct ns_trace_queue *g;

	for (size_t i = 0; i < d->nqueues; i++)
		if (d->queues[i].dev == dev && d->queues[i].hwq == hwq)
			return &d->queues[i];
	g = realloc(d->queues, (d->nqueues + 1) * sizeof(*g));
	if (!g)
		return NULL;
	d->queues = g;
	g = &d->queues[d->nqueues++];
	memset(g, 0, sizeof(*g));
	g->dev = dev;
	g->disk = disk;
	g->hwq = hwq;
	g->irq = -1;
	g->irq_source = NS_IRQ_UNKNOWN;
	return g;
}

static int add_cpu(struct ns_cpuset *s, int64_t cpu)
{
	if (cpu < 0)
		return 0;
	s->known = true;
	return ns_cpuset_set(s, (unsigned)cpu);
}

/* timed: the requests whose latencies sum_ns adds up */
static void fill_lat(struct ns_trace_lat *l, const struct ns_hist *h, uint64_t timed, long double sum_ns)
{
	memset(l, 0, sizeof(*l));
	l->count = timed;
	l->sum_us = (double)(sum_ns / 1000);
	if (!h || !h->count)
		return;
	l->known = true;
	l->p50_us = (double)ns_hist_percentile(h, 50) / 1000.0;
	l->p90_us = (double)ns_hist_percentile(h, 90) / 1000.0;
	l->p99_us = (double)ns_hist_percentile(h, 99) / 1000.0;
	l->max_us = (double)h->max / 1000.0;
	/* the exact mean from the records' sums; the buckets' midpoints when they have none */
	l->mean_us = timed ? (double)(sum_ns / timed) / 1000.0 : ns_hist_mean(h) / 1000.0;
}

static bool crossed(int sn, int cn, int in)
{
	return sn < 0 || cn != sn || (in >= 0 && in != sn);
}

static int attribute_one(struct ns_trace_device *d, const struct ns_trace_target *t, const struct ns_trace_rec *recs,
			 size_t nrecs, const struct ns_trace_bucket *buckets, size_t nbuckets, const int *cpu_node,
			 size_t ncpus)
{
	long double sum_local = 0, sum_remote = 0, *pair_sum = NULL;
	uint64_t n_local = 0, n_remote = 0, *pair_timed = NULL;
	struct ns_hist *h_local = NULL, *h_remote = NULL;
	int r = -ENOMEM;

	for (size_t i = 0; i < nrecs; i++) {
		const struct ns_trace_rec *rec = &recs[i];
		size_t disk;
		long ti = target_of(t, 1, rec->dev, &disk);
		int sn, cn, in;
		struct ns_trace_pair *p;
		struct ns_trace_queue *q;

		if (ti < 0)
			continue;
		sn = node_of(cpu_node, ncpus, rec->submit_cpu);
		cn = node_of(cpu_node, ncpus, rec->complete_cpu);
		in = rec->irq_cpu >= 0 ? node_of(cpu_node, ncpus, rec->irq_cpu) : -1;
		d->requests += rec->requests;
		d->bytes += rec->bytes;
		if (sn >= 0 && cn == sn)
			d->complete_local += rec->requests;
		p = pair_of(d, sn, cn);
		if (!p)
			goto out;
		p->requests += rec->requests;
		p->bytes += rec->bytes;
		if (in < 0) {
			d->irq_unknown += rec->requests;
			p->irq_unknown += rec->requests;
		} else {
			d->irq_known += rec->requests;
			if (in != sn) {
				d->irq_remote += rec->requests;
				p->irq_remote += rec->requests;
			}
		}
		if (crossed(sn, cn, in)) {
			sum_remote += rec->latency_ns_sum;
			n_remote += rec->timed;
		} else {
			sum_local += rec->latency_ns_sum;
			n_local += rec->timed;
		}
		q = queue_of(d, rec->dev, t->disk_names ? t->disk_names[disk] : NULL, rec->hwq);
		if (!q)
			goto out;
		q->requests += rec->requests;
		if (add_cpu(&q->submit_cpus, rec->submit_cpu) || add_cpu(&q->complete_cpus, rec->complete_cpu) ||
		    add_cpu(&q->irq_cpus, rec->irq_cpu))
			goto out;
		if (rec->irq_cpu >= 0) {
			if (q->irq < 0)
				q->irq = (int)rec->irq;
			if (q->irq_source == NS_IRQ_UNKNOWN)
				q->irq_source = (int)rec->irq_source;
			else if (q->irq_source != (int)rec->irq_source)
				q->irq_source = -1;
		}
	}
	d->complete_local_share = d->requests ? (double)d->complete_local / (double)d->requests : -1;
	d->irq_remote_share = d->irq_known ? (double)d->irq_remote / (double)d->irq_known : -1;

	/* latency: each pair's, and the local and remote classes', from the buckets */
	pair_sum = calloc(d->npairs ? d->npairs : 1, sizeof(*pair_sum));
	pair_timed = calloc(d->npairs ? d->npairs : 1, sizeof(*pair_timed));
	h_local = malloc(sizeof(*h_local));
	h_remote = malloc(sizeof(*h_remote));
	if (!pair_sum || !pair_timed || !h_local || !h_remote)
		goto out;
	ns_hist_init(h_local);
	ns_hist_init(h_remote);
	for (size_t i = 0; i < nrecs; i++) {
		size_t disk;
		int sn, cn;
		if (target_of(t, 1, recs[i].dev, &disk) < 0)
			continue;
		sn = node_of(cpu_node, ncpus, recs[i].submit_cpu);
		cn = node_of(cpu_node, ncpus, recs[i].complete_cpu);
		for (size_t k = 0; k < d->npairs; k++)
			if (d->pairs[k].submit_node == sn && d->pairs[k].complete_node == cn) {
				pair_sum[k] += recs[i].latency_ns_sum;
				pair_timed[k] += recs[i].timed;
			}
	}
	for (size_t i = 0; i < nbuckets; i++) {
		const struct ns_trace_bucket *b = &buckets[i];
		size_t disk;
		if (target_of(t, 1, b->dev, &disk) < 0)
			continue;
		for (size_t k = 0; k < d->npairs; k++) {
			struct ns_trace_pair *p = &d->pairs[k];
			if (p->submit_node != b->submit_node || p->complete_node != b->complete_node)
				continue;
			if (!p->latency) {
				p->latency = malloc(sizeof(*p->latency));
				if (!p->latency)
					goto out;
				ns_hist_init(p->latency);
			}
			ns_hist_add_bucket(p->latency, b->bucket, b->count);
		}
		ns_hist_add_bucket(crossed(b->submit_node, b->complete_node, b->irq_node) ? h_remote : h_local,
				   b->bucket, b->count);
	}
	for (size_t k = 0; k < d->npairs; k++)
		fill_lat(&d->pairs[k].lat, d->pairs[k].latency, pair_timed[k], pair_sum[k]);
	fill_lat(&d->local, h_local, n_local, sum_local);
	fill_lat(&d->remote, h_remote, n_remote, sum_remote);
	r = 0;
out:
	free(pair_sum);
	free(pair_timed);
	free(h_local);
	free(h_remote);
	return r;
}

static int cmp_pair(const void *a, const void *b)
{
	const struct ns_trace_pair *x = a, *y = b;
	if (x->submit_node != y->submit_node)
		return x->submit_node < y->submit_node ? -1 : 1;
	return x->complete_node < y->complete_node ? -1 : x->complete_node > y->complete_node;
}

static int cmp_queue(const void *a, const void *b)
{
	const struct ns_trace_queue *x = a, *y = b;
	int c = strcmp(x->disk ? x->disk : "", y->disk ? y->disk : "");
	if (c)
		return c;
	return x->hwq < y->hwq ? -1 : x->hwq > y->hwq;
}

int ns_trace_attribute(const struct ns_trace_target *targets, size_t ntargets, const struct ns_trace_rec *recs,
		       size_t nrecs, const struct ns_trace_bucket *buckets, size_t nbuckets, const int *cpu_node,
		       size_t ncpus, struct ns_trace_result *out)
{
	memset(out, 0, sizeof(*out));
	out->devices = calloc(ntargets ? ntargets : 1, sizeof(*out->devices));
	if (!out->devices)
		return -ENOMEM;
	out->ndevices = ntargets;
	for (size_t i = 0; i < ntargets; i++) {
		struct ns_trace_device *d = &out->devices[i];
		d->target = &targets[i];
		if (attribute_one(d, &targets[i], recs, nrecs, buckets, nbuckets, cpu_node, ncpus)) {
			ns_trace_result_free(out);
			return -ENOMEM;
		}
		/* the pairs' latency histograms stay with the pairs: sort keeps them */
		if (d->npairs > 1)
			qsort(d->pairs, d->npairs, sizeof(*d->pairs), cmp_pair);
		if (d->nqueues > 1)
			qsort(d->queues, d->nqueues, sizeof(*d->queues), cmp_queue);
	}
	for (size_t i = 0; i < nrecs; i++) {
		size_t disk;
		if (target_of(targets, ntargets, recs[i].dev, &disk) < 0)
			out->unattributed += recs[i].requests;
	}
	return 0;
}

void ns_trace_result_free(struct ns_trace_result *r)
{
	for (size_t i = 0; i < r->ndevices; i++) {
		struct ns_trace_device *d = &r->devices[i];
		for (size_t k = 0; k < d->npairs; k++)
			free(d->pairs[k].latency);
		for (size_t k = 0; k < d->nqueues; k++) {
			ns_cpuset_clear(&d->queues[k].submit_cpus);
			ns_cpuset_clear(&d->queues[k].complete_cpus);
			ns_cpuset_clear(&d->queues[k].irq_cpus);
		}
		free(d->pairs);
		free(d->queues);
	}
	free(r->devices);
	memset(r, 0, sizeof(*r));
}

void ns_trace_judge(const struct ns_trace_device *d, struct ns_trace_verdict *v)
{
	double share;

	memset(v, 0, sizeof(*v));
	v->severity = NS_TRACE_NONE;
	v->complete_remote_share = d->complete_local_share >= 0 ? 1.0 - d->complete_local_share : 0;
	v->irq_remote_share = d->irq_remote_share;
	v->latency_gap =
		d->local.known && d->remote.known && d->local.p50_us > 0 ? d->remote.p50_us / d->local.p50_us : -1;
	if (d->requests < NS_TRACE_MIN_REQUESTS)
		return;
	share = v->complete_remote_share;
	if (v->irq_remote_share > share)
		share = v->irq_remote_share;
	if (share < NS_TRACE_INFO_SHARE)
		return;
	v->severity = NS_TRACE_INFO;
	if (share >= NS_TRACE_WARN_SHARE && (!d->local.known || v->latency_gap >= NS_TRACE_WARN_GAP))
		v->severity = NS_TRACE_WARNING;
}

uint64_t ns_trace_unseen(const uint32_t *devs, const uint64_t *completed, const bool *known, size_t ndevs,
			 const struct ns_trace_rec *recs, size_t nrecs)
{
	uint64_t unseen = 0;

	for (size_t i = 0; i < ndevs; i++) {
		uint64_t counted = 0;
		if (!known[i])
			continue;
		for (size_t j = 0; j < nrecs; j++)
			if (recs[j].dev == devs[i])
				counted += recs[j].requests;
		if (completed[i] > counted)
			unseen += completed[i] - counted;
	}
	return unseen;
}
