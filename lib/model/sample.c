/* SPDX-License-Identifier: GPL-2.0-or-later */
/* check --interval: the interrupt counts sampled twice, and the rates between (sample.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "base/testhook.h"
#include "model/sample.h"
#include "read/rates.h"

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every reported IRQ's per_cpu_count, twice, `seconds` apart: the counts the fire-location
 * rule then judges are the difference (lib/read/rates.h). The measured time between the two
 * samples is the interval reported. */
int ns_system_sample_rates(struct ns_root *root, struct ns_system *sys, double seconds)
{
	struct ns_irq **irqs;
	struct ns_counts *first, *second;
	struct ns_root *again = NULL;
	const char *hook = ns_test_hook("NUMASTOR_TEST_SECOND_SAMPLE_ROOT");
	size_t n = 0, k = 0;
	double t0, t1;
	struct timespec ts;
	int r;

	for (size_t i = 0; i < sys->npcis; i++)
		n += sys->pcis[i]->nirqs;
	irqs = calloc(n + 1, sizeof(*irqs));
	first = calloc(n + 1, sizeof(*first));
	second = calloc(n + 1, sizeof(*second));
	r = irqs && first && second ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < sys->npcis; i++)
		for (size_t q = 0; q < sys->pcis[i]->nirqs; q++)
			irqs[k++] = &sys->pcis[i]->irqs[q];
	/* test builds: the second sample from another tree, so a test knows what fired */
	if (r == 0 && hook)
		r = ns_root_open(hook, &again);
	t0 = now_seconds();
	if (r == 0)
		r = ns_rates_sample(root, irqs, n, first);
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (r == 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	t1 = now_seconds();
	if (r == 0)
		r = ns_rates_sample(again ? again : root, irqs, n, second);
	if (r == 0) {
		/* to the millisecond, as reported: rates are count / interval_seconds exactly */
		sys->interval_seconds = (double)(long long)((t1 - t0) * 1000 + 0.5) / 1000;
		r = ns_rates_apply(&sys->machine, irqs, n, first, second, sys->interval_seconds, &sys->notes);
	}
	for (size_t i = 0; i < n && first && second; i++) {
		ns_counts_free(&first[i]);
		ns_counts_free(&second[i]);
	}
	free(irqs);
	free(first);
	free(second);
	ns_root_free(again);
	return r;
}
