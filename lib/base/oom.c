/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "base/oom.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/testhook.h"

/* the functions --wrap renamed: the C library's own */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_vasprintf(char **out, const char *fmt, va_list ap);
int __real___vasprintf_chk(char **out, int flag, const char *fmt, va_list ap);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_vasprintf(char **out, const char *fmt, va_list ap);
int __wrap_asprintf(char **out, const char *fmt, ...);
int __wrap___vasprintf_chk(char **out, int flag, const char *fmt, va_list ap);
int __wrap___asprintf_chk(char **out, int flag, const char *fmt, ...);

static atomic_bool failed;

bool ns_alloc_failed(void)
{
	return atomic_load_explicit(&failed, memory_order_relaxed);
}

#if NS_TEST_HOOKS_BUILT
static atomic_long calls;

long ns_alloc_calls(void)
{
	return atomic_load(&calls);
}

/* NUMASTOR_TEST_ALLOC_FAIL: whether this call is the one to fail */
static bool injected(void)
{
	static atomic_long at = -1; /* -1: not read yet, 0: none */
	long n = atomic_fetch_add(&calls, 1) + 1, v = atomic_load(&at);

	if (v < 0) {
		const char *s = ns_test_hook("NUMASTOR_TEST_ALLOC_FAIL");
		v = s ? strtol(s, NULL, 10) : 0;
		atomic_store(&at, v > 0 ? v : 0);
	}
	return v > 0 && n == v;
}
#else
long ns_alloc_calls(void)
{
	return 0;
}

static inline bool injected(void)
{
	return false;
}
#endif

static void (*_Atomic on_failure)(void);

void ns_alloc_on_failure(void (*fn)(void))
{
	atomic_store(&on_failure, fn);
}

static void remember(void)
{
	void (*fn)(void) = atomic_load(&on_failure);

	atomic_store_explicit(&failed, true, memory_order_relaxed);
	if (fn)
		fn();
	errno = ENOMEM;
}

void *__wrap_malloc(size_t n)
{
	void *p = injected() ? NULL : __real_malloc(n);
	if (!p && n)
		remember();
	return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
	void *p = injected() ? NULL : __real_calloc(n, size);
	if (!p && n && size)
		remember();
	return p;
}

void *__wrap_realloc(void *p, size_t n)
{
	void *q = injected() ? NULL : __real_realloc(p, n);
	if (!q && n)
		remember();
	return q;
}

char *__wrap_strdup(const char *s)
{
	char *p = injected() ? NULL : __real_strdup(s);
	if (!p)
		remember();
	return p;
}

char *__wrap_strndup(const char *s, size_t n)
{
	char *p = injected() ? NULL : __real_strndup(s, n);
	if (!p)
		remember();
	return p;
}

int __wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	int r = injected() ? -1 : __real_vasprintf(out, fmt, ap);
	if (r < 0)
		remember();
	return r;
}

int __wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = __wrap_vasprintf(out, fmt, ap);
	va_end(ap);
	return r;
}

/* what _FORTIFY_SOURCE (Debian's build flags) makes of the two */
int __wrap___vasprintf_chk(char **out, int flag, const char *fmt, va_list ap)
{
	int r = injected() ? -1 : __real___vasprintf_chk(out, flag, fmt, ap);
	if (r < 0)
		remember();
	return r;
}

int __wrap___asprintf_chk(char **out, int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = __wrap___vasprintf_chk(out, flag, fmt, ap);
	va_end(ap);
	return r;
}
