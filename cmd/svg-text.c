/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SVG's text (cmd/svg-text.h): what the machine said escaped for the terminal
 * (lib/base/escape.h), then for XML, and cut to the room the picture gives it.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "svg-text.h"

/* s as XML character data or attribute value: the terminal escaping (no control bytes,
 * valid UTF-8), then &, <, >, " and ', and U+FFFE/U+FFFF (not XML characters) as U+FFFD. */
void svg_xml(FILE *out, const char *s)
{
	char *e = ns_escape_text(s ? s : "?");
	const unsigned char *p = (const unsigned char *)(e ? e : "?");
	size_t len = strlen((const char *)p);

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		int n = ns_utf8_next(p + i, len - i, &cp);
		if (n <= 0) { /* not after ns_escape_text; kept safe all the same */
			fputs("\xef\xbf\xbd", out);
			i += (size_t)(n < 0 ? -n : 1);
			continue;
		}
		switch (cp) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		case 0xFFFE:
		case 0xFFFF:
			fputs("\xef\xbf\xbd", out);
			break;
		default:
			fwrite(p + i, 1, (size_t)n, out);
		}
		i += (size_t)n;
	}
	free(e);
}

/* Display columns of s (already escaped): 2 for the wide ranges, else 1 a code point. */
static int cols_of(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	int cols = 0;

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		int n = ns_utf8_next(p + i, len - i, &cp);
		if (n <= 0) {
			cols++;
			i += (size_t)(n < 0 ? -n : 1);
			continue;
		}
		cols += (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
					(cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
					(cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
					(cp >= 0xFFE0 && cp <= 0xFFE6) || cp >= 0x1F300
				? 2
				: 1;
		i += (size_t)n;
	}
	return cols;
}

/* s written as XML text, at most max display columns: cut with "..." where it would be wider. */
void svg_xml_fit(FILE *out, const char *s, int max)
{
	char *e = ns_escape_text(s ? s : "?"), *cut;
	const unsigned char *p;
	size_t len, keep = 0;

	if (!e) {
		fputc('?', out);
		return;
	}
	len = strlen(e);
	p = (const unsigned char *)e;
	if (cols_of(e, len) <= max) {
		svg_xml(out, e);
		free(e);
		return;
	}
	for (size_t i = 0; i < len;) { /* the longest prefix that leaves room for "..." */
		uint32_t cp;
		int n = ns_utf8_next(p + i, len - i, &cp);
		size_t next = i + (size_t)(n > 0 ? n : n < 0 ? -n : 1);
		if (cols_of(e, next) > max - 3)
			break;
		keep = i = next;
	}
	if ((cut = strndup(e, keep))) {
		svg_xml(out, cut);
		fputs("...", out);
	}
	free(cut);
	free(e);
}

void svg_text_at(FILE *out, double x, int y, const char *cls)
{
	fprintf(out, "<text x=\"%.1f\" y=\"%d\"%s%s%s>", x, y, cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
}
