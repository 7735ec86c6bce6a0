#include <stdio.h>
#include <stdlib.h>
#include "trace-output.h"
int trace_exit_code(const struct trace_report *r)
{
	int c = 0;
	for (size_t i = 0; i < r->res->ndevices; i++) {
		struct ns_trace_verdict v;
		ns_trace_judge(&r->res->devices[i], &v);
		if (v.severity == NS_TRACE_WARNING)
			c = 1;
	}
	return c;
}
int trace_print_text(FILE *out, const struct trace_report *r)
{
	fprintf(out, "attach %s seconds %.2f lost %llu %llu\n", r->attach, r->seconds, (unsigned long long)r->untimed,
		(unsigned long long)r->lost_records);
	for (size_t i = 0; i < r->res->ndevices; i++) {
		const struct ns_trace_device *d = &r->res->devices[i];
		fprintf(out, "%s req %llu bytes %llu local %.3f irqremote %.3f irqunk %llu\n", d->target->name,
			(unsigned long long)d->requests, (unsigned long long)d->bytes, d->complete_local_share,
			d->irq_remote_share, (unsigned long long)d->irq_unknown);
		for (size_t k = 0; k < d->npairs; k++)
			fprintf(out, "  pair %d->%d req %llu irqrem %llu p50 %.1f p99 %.1f mean %.1f\n",
				d->pairs[k].submit_node, d->pairs[k].complete_node,
				(unsigned long long)d->pairs[k].requests, (unsigned long long)d->pairs[k].irq_remote,
				d->pairs[k].lat.p50_us, d->pairs[k].lat.p99_us, d->pairs[k].lat.mean_us);
		for (size_t k = 0; k < d->nqueues; k++) {
			char *a = NULL, *b = NULL, *c = NULL;
			ns_cpuset_format(&d->queues[k].submit_cpus, &a);
			ns_cpuset_format(&d->queues[k].complete_cpus, &b);
			ns_cpuset_format(&d->queues[k].irq_cpus, &c);
			fprintf(out, "  q %s/%u irq %d req %llu sub %s comp %s irq %s src %d\n", d->queues[k].disk,
				d->queues[k].hwq, d->queues[k].irq, (unsigned long long)d->queues[k].requests, a, b,
				c ? c : "-", d->queues[k].irq_source);
			free(a);
			free(b);
			free(c);
		}
	}
	return 0;
}
int trace_print_json(FILE *out, const struct trace_report *r)
{
	return trace_print_text(out, r);
}
int trace_print_prometheus(FILE *out, const struct trace_report *r)
{
	return trace_print_text(out, r);
}
