/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "base/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ns_utf8_next(const unsigned char *s, size_t len, uint32_t *cp)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	uint32_t v;
	int n;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates U+D800-U+DFFF */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return -1; /* a continuation byte, C0/C1 (overlong ASCII), F5-FF */
	}
	for (int i = 1; i < n; i++) {
		if ((size_t)i >= len || s[i] < lo || s[i] > hi)
			return -i;
		v = (v << 6) | (s[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	*cp = v;
	return n;
}

bool ns_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;

	for (size_t i = 0; i < len;) {
		int n = ns_utf8_next(p + i, len - i, &cp);
		if (n < 0)
			return false;
		i += (size_t)n;
	}
	return true;
}

struct buf {
	char *p;
	size_t n, cap, max;
	bool full, failed;
};

/* Append one unit (a character or one escape): all of it, or stop with "..." */
static void unit(struct buf *b, const char *s, size_t n)
{
	if (b->full || b->failed)
		return;
	if (b->max && b->n + n > b->max) {
		b->full = true;
		s = "...";
		n = 3;
	}
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap * 2 > b->n + n + 1 ? b->cap * 2 : b->n + n + 1;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->failed = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

/* A byte shown as \xNN; for Prometheus the backslash itself escaped. */
static void hex_byte(struct buf *b, unsigned char c, enum ns_escape_mode mode)
{
	char e[8];
	int n = snprintf(e, sizeof(e), mode == NS_ESCAPE_PROM ? "\\\\x%02x" : "\\x%02x", c);
	unit(b, e, (size_t)n);
}

/* What a terminal must not be given: C0 (newline and tab too: a value is one field on one
 * line), DEL, C1 (0x9b is CSI on some terminals), and the bidi overrides that reorder text. */
static bool text_hidden(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

char *ns_escape(const char *s, enum ns_escape_mode mode, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len;
	struct buf b = {.max = max};

	if (!s)
		return NULL;
	len = strlen(s);
	b.cap = len + 1;
	b.p = malloc(b.cap);
	if (!b.p)
		return NULL;
	b.p[0] = '\0';
	for (size_t i = 0; i < len && !b.full && !b.failed;) {
		uint32_t cp;
		int n = ns_utf8_next(p + i, len - i, &cp);

		if (n < 0) {
			if (mode == NS_ESCAPE_JSON)
				unit(&b, "\xef\xbf\xbd", 3); /* U+FFFD for the maximal subpart */
			else
				for (int k = 0; k < -n; k++)
					hex_byte(&b, p[i + (size_t)k], mode);
			i += (size_t)-n;
			continue;
		}
		if (mode != NS_ESCAPE_JSON && text_hidden(cp)) {
			for (int k = 0; k < n; k++)
				hex_byte(&b, p[i + (size_t)k], mode);
		} else if (mode == NS_ESCAPE_PROM && (cp == '\\' || cp == '"')) {
			char e[2] = {'\\', (char)cp};
			unit(&b, e, 2);
		} else {
			unit(&b, (const char *)p + i, (size_t)n);
		}
		i += (size_t)n;
	}
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	return b.p;
}
