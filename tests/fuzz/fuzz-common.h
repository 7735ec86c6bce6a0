/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the fuzz harnesses share: a private scratch tree per process (under $TMPDIR, so
 * /dev/shm in the test suite), writing an input as one file of it, and the checks an output
 * must pass. A failed check aborts: libFuzzer (and the replay driver) report it as a crash
 * with the input that caused it.
 */
#ifndef NUMASTOR_FUZZ_COMMON_H
#define NUMASTOR_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with a message naming the broken invariant. */
#define FUZZ_ASSERT(cond, ...)                                             \
	do {                                                               \
		if (!(cond))                                               \
			fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)
__attribute__((noreturn, format(printf, 4, 5))) void fuzz_fail(const char *file, int line, const char *cond,
							       const char *fmt, ...);

/* A new private directory under $TMPDIR (or /tmp), made once per process; removed at exit. */
const char *fuzz_scratch(void);
/* Write data to dir/rel (parents made, mode 0755 directories), replacing what was there. */
void fuzz_write(const char *dir, const char *rel, const void *data, size_t len, mode_t mode);
/* Remove a tree (never following links). */
void fuzz_rmtree(const char *path);
/* Is s[0..len) valid UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF)? */
bool fuzz_utf8_valid(const char *s, size_t len);
/* NUL-terminated copy of an input. */
char *fuzz_strndup(const uint8_t *data, size_t size);
/* When $NS_FUZZ_DUMP names a directory: write the len bytes of data there as the next
 * NNNNNN.json, so a script can validate them against the JSON schema afterwards. */
void fuzz_dump(const void *data, size_t len);

#endif
