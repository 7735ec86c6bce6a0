/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only switches (NUMASTOR_TEST_*): the test suite's ways to write into a captured tree or
 * to die at a chosen point. They exist only in builds configured with -Dtest_hooks=true; in a
 * release build ns_test_hook() is NULL whatever the environment says, and the switch's name is
 * not even in the binary (the macro never evaluates it), so nothing in production can turn one
 * on. tests/check-release.sh shows it.
 */
#ifndef NUMASTOR_TESTHOOK_H
#define NUMASTOR_TESTHOOK_H

#include "config.h"

#ifdef NUMASTOR_TEST_HOOKS
#include <stdlib.h>
/* The switch's value, or NULL when it is unset or empty. */
static inline const char *ns_test_hook(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}
#define NS_TEST_HOOKS_BUILT 1
#else
/* sizeof only type-checks the name: no string reaches the binary */
#define ns_test_hook(name) ((void)sizeof(name), (const char *)NULL)
#define NS_TEST_HOOKS_BUILT 0
#endif

#endif
