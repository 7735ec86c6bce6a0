/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers every room uses: formatted strings and string lists. */
#ifndef NUMASTOR_UTIL_H
#define NUMASTOR_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A malloc'd formatted string; NULL when out of memory. */
__attribute__((format(printf, 1, 2))) char *ns_fmt(const char *fmt, ...);
/* The same from a va_list, for the variadic helpers of other rooms. */
__attribute__((format(printf, 1, 0))) char *ns_vfmt(const char *fmt, va_list ap);
/* pre, n in decimal, post into buf of size bytes ("proc/irq/" 70 "/node"), cut short as
 * snprintf would cut it; buf. What the per-IRQ and per-queue reads name their files with,
 * thousands of times, without a format to interpret each time. */
char *ns_path_num(char *buf, size_t size, const char *pre, long long n, const char *post);
/* Append a copy of s to the list *v of *n strings. */
int ns_strv_add(char ***v, size_t *n, const char *s);
/* The same, unless s is there already. */
int ns_strv_add_unique(char ***v, size_t *n, const char *s);
bool ns_strv_has(char *const *v, size_t n, const char *s);
/* IRQ numbers as the reports name them, into m: "irq 70" or "irqs 70-73, 75" (v sorted in
 * place, duplicates folded into their range). */
void ns_irq_list_write(FILE *m, int *v, size_t n);

#endif
