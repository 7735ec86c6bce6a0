/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Escaping of strings that come from the machine (file contents, directory names, link
 * targets) where they leave numastor: one family, one UTF-8 decoder (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF).
 *
 * - JSON: valid UTF-8, each invalid sequence (its maximal subpart) replaced by U+FFFD.
 *   json-c escapes control characters but copies every byte >= 0x80 as it is, so an invalid
 *   byte would make the whole document invalid UTF-8.
 * - Text (a terminal): control characters (C0 including newline and tab, DEL, C1), bidi
 *   overrides and invalid bytes shown as \xNN, one per byte; everything else kept. A
 *   backslash is kept as it is, so escaping twice gives the same text as escaping once.
 * - Prometheus label values: the text escaping, then the exposition format's \\, \" and \n.
 *
 * Each returns a malloc'd string (NULL for a NULL s, or out of memory).
 */
#ifndef NUMASTOR_ESCAPE_H
#define NUMASTOR_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The UTF-8 sequence at s (len bytes available): its length (1-4) with *cp its code point,
 * or minus the length of the maximal invalid subpart there (-1 to -3).
 */
int ns_utf8_next(const unsigned char *s, size_t len, uint32_t *cp);
bool ns_utf8_valid(const char *s, size_t len);

enum ns_escape_mode {
	NS_ESCAPE_JSON,
	NS_ESCAPE_TEXT,
	NS_ESCAPE_PROM,
};

/* s escaped for mode; with max > 0 the result keeps at most max bytes of it, cut between
 * whole characters or escapes, followed by "..." when cut. */
char *ns_escape(const char *s, enum ns_escape_mode mode, size_t max);

static inline char *ns_escape_json(const char *s)
{
	return ns_escape(s, NS_ESCAPE_JSON, 0);
}

static inline char *ns_escape_text(const char *s)
{
	return ns_escape(s, NS_ESCAPE_TEXT, 0);
}

static inline char *ns_escape_prom(const char *s)
{
	return ns_escape(s, NS_ESCAPE_PROM, 0);
}

#endif
