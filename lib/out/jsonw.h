/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A streaming JSON writer: the document written as it is walked, with no object tree in
 * between. Its bytes are exactly json-c 0.16's for JSON_C_TO_STRING_PRETTY | SPACED |
 * NOSLASHESCAPE (tests/unit/test-jsonw.c holds it to that on many shapes): two spaces a
 * level, `"key": value`, an empty container as `{` newline indent `}`, json-c's string
 * escaping (\b \f \n \r \t \" \\, other control characters below 0x20 as \u00XX, '/' and
 * everything from 0x7f kept) and its number forms.
 *
 * One difference from json-c, on purpose: every string written is valid UTF-8, each invalid
 * sequence replaced by U+FFFD as lib/base/escape.h's ns_escape_json does (json-c copies bytes
 * >= 0x80 as they are), so what the machine said cannot make the document invalid.
 *
 * The sink is a stream (FILE *), a growable buffer, or nothing at all (a count); each has a
 * budget, max bytes, beyond which nothing more is taken and the writer fails with -EFBIG.
 * Errors are sticky: a call after one does nothing, and ns_jsonw_finish returns the first
 * (-EFBIG, -ENOMEM, -EIO, or -E2BIG for nesting deeper than NS_JSONW_DEPTH_MAX).
 */
#ifndef NUMASTOR_JSONW_H
#define NUMASTOR_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;

#define NS_JSONW_DEPTH_MAX 64

enum ns_jsonw_sink {
	NS_JSONW_FILE,
	NS_JSONW_BUFFER,
	NS_JSONW_COUNT,
};

struct ns_jsonw {
	enum ns_jsonw_sink sink;
	FILE *f;
	char *buf; /* the buffer sink's bytes, or the stream's staging */
	size_t len, cap;
	size_t n, max; /* bytes taken so far, and the budget */
	int err;
	unsigned depth;
	uint64_t had;	  /* bit d: the container at depth d has a member already */
	bool key_pending; /* a key was written; its value comes next */
};

/* A writer into f (staged in 64 KiB, written as it fills and at ns_jsonw_finish). */
int ns_jsonw_init_file(struct ns_jsonw *w, FILE *f, size_t max);
/* A writer into a buffer that grows up to max bytes: ns_jsonw_buffer hands it over. */
void ns_jsonw_init_buffer(struct ns_jsonw *w, size_t max);
/* A writer that keeps nothing and counts: w->n bytes, -EFBIG past max. */
void ns_jsonw_init_count(struct ns_jsonw *w, size_t max);
/* Writes what is staged (the stream sink); the first error, or 0. */
int ns_jsonw_finish(struct ns_jsonw *w);
/* The buffer sink's bytes (NUL-terminated, *len without it) handed over to the caller; NULL
 * after an error or for another sink. */
char *ns_jsonw_buffer(struct ns_jsonw *w, size_t *len);
/* Frees what the writer holds (after ns_jsonw_buffer: nothing). */
void ns_jsonw_free(struct ns_jsonw *w);

void ns_jsonw_begin_object(struct ns_jsonw *w);
void ns_jsonw_end_object(struct ns_jsonw *w);
void ns_jsonw_begin_array(struct ns_jsonw *w);
void ns_jsonw_end_array(struct ns_jsonw *w);
/* A member's key inside an object; its value is the next value written. */
void ns_jsonw_key(struct ns_jsonw *w, const char *key);

/* Values, each at the current place (an array's next element, a key's value, the top). */
void ns_jsonw_null(struct ns_jsonw *w);
void ns_jsonw_bool(struct ns_jsonw *w, bool v);
void ns_jsonw_int64(struct ns_jsonw *w, int64_t v);
void ns_jsonw_uint64(struct ns_jsonw *w, uint64_t v);
static inline void ns_jsonw_int(struct ns_jsonw *w, int v)
{
	ns_jsonw_int64(w, v);
}
/* json-c's json_object_new_double form: "%.17g", ".0" appended to what looks like an
 * integer, NaN / Infinity / -Infinity. */
void ns_jsonw_double(struct ns_jsonw *w, double v);
/* A number already formatted (json_object_new_double_s's text): written as it is. */
void ns_jsonw_number_text(struct ns_jsonw *w, const char *txt);
/* A string (NULL = null), escaped as json-c does, made valid UTF-8 first. */
void ns_jsonw_string(struct ns_jsonw *w, const char *s);
/* A string of len bytes (an embedded NUL is written as \u0000). */
void ns_jsonw_string_len(struct ns_jsonw *w, const char *s, size_t len);
/*
 * A json-c value written through the writer (NULL = null), for the small parts built as
 * json-c objects elsewhere (a finding's evidence, the envelope): its strings are sanitized
 * as ns_json_sanitize does (valid UTF-8, cut at an embedded NUL), numbers as json-c prints
 * them.
 */
void ns_jsonw_json(struct ns_jsonw *w, struct json_object *o);
/* Bytes as they are, unescaped: a document's final newline, or between these two, the
 * parts of a string numastor makes of its own characters (digits, ',', '-'). */
void ns_jsonw_raw(struct ns_jsonw *w, const char *p, size_t len);
void ns_jsonw_begin_string(struct ns_jsonw *w);
void ns_jsonw_end_string(struct ns_jsonw *w);
/* An unsigned number's digits, unquoted, as ns_jsonw_raw writes them. */
void ns_jsonw_raw_uint(struct ns_jsonw *w, uint64_t v);

#endif
