/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Minimal assertions for the unit tests: each CHECK prints what failed and counts it. */
#ifndef NUMASTOR_TEST_TAP_H
#define NUMASTOR_TEST_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_failed, tap_run;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		tap_run++;                                                                       \
		if (!(cond)) {                                                                   \
			tap_failed++;                                                            \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                                \
	} while (0)

#define CHECK_STR(a, b)                                                                               \
	do {                                                                                          \
		const char *_a = (a), *_b = (b);                                                      \
		tap_run++;                                                                            \
		if (!_a || !_b || strcmp(_a, _b) != 0) {                                              \
			tap_failed++;                                                                 \
			fprintf(stderr, "%s:%d: %s is '%s', expected '%s'\n", __FILE__, __LINE__, #a, \
				_a ? _a : "(null)", _b ? _b : "(null)");                              \
		}                                                                                     \
	} while (0)

static inline int tap_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, tap_run, tap_failed);
	return tap_failed ? 1 : 0;
}

#endif
