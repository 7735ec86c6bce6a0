/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef NUMASTOR_MODEL_SAMPLE_H
#define NUMASTOR_MODEL_SAMPLE_H

#include "model/system.h"
#include "read/root.h"

/*
 * Every reported IRQ's per_cpu_count read through root twice, seconds apart (nanosleep): the
 * counts the fire-location rule then judges are the difference (lib/read/rates.h), and
 * sys->interval_seconds the measured time between the two samples, to the millisecond. Test
 * builds read the second sample from NUMASTOR_TEST_SECOND_SAMPLE_ROOT. 0 or -errno.
 */
int ns_system_sample_rates(struct ns_root *root, struct ns_system *sys, double seconds);

#endif
