/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An allocation that failed anywhere in numastor's own code is remembered.
 *
 * Every malloc, calloc, realloc, strdup, strndup and (v)asprintf numastor's code makes goes
 * through lib/base/oom.c (the link's --wrap, lib/meson.build). Each call site still handles
 * the NULL: it does not crash, and it leaves the fact unknown. But a fact left unknown for want
 * of memory is not a fact the machine lacks. So a run in which an allocation failed fails as a
 * whole (issue 36): the system reader answers -ENOMEM, an output file is not committed, and the
 * command exits "could not tell" (3), whatever it printed.
 *
 * Allocations inside the libraries (libudev, libkmod, json-c, libbpf, glibc's own) are their
 * business. Those libraries answer an error, which the reader notes as it notes any other.
 *
 * Test builds: NUMASTOR_TEST_ALLOC_FAIL=N fails the Nth allocation made through here (counting
 * from 1, across threads), and ns_alloc_calls() says how many were made.
 */
#ifndef NUMASTOR_OOM_H
#define NUMASTOR_OOM_H

#include <stdbool.h>

/* Whether an allocation made through here has failed in this process. */
bool ns_alloc_failed(void);
/* The allocations made through here so far (test builds; 0 in others). */
long ns_alloc_calls(void);
/* fn is called after a failure is remembered (NULL: none): the command line's policy, such as
 * stopping the run at once (cmd/numastor.c). */
void ns_alloc_on_failure(void (*fn)(void));

#endif
