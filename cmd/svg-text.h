/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The text of check --format svg (cmd/output-svg.c). */
#ifndef NUMASTOR_SVG_TEXT_H
#define NUMASTOR_SVG_TEXT_H

#include <stdio.h>

/* s as XML character data or attribute value: the terminal escaping (no control bytes,
 * valid UTF-8), then &, <, >, " and ', and U+FFFE/U+FFFF (not XML characters) as U+FFFD. */
void svg_xml(FILE *out, const char *s);
/* The same, at most max display columns (wide characters count 2): cut with "..." where it
 * would be wider. */
void svg_xml_fit(FILE *out, const char *s, int max);
/* Opens a <text> at (x, y), with the class when not NULL. */
void svg_text_at(FILE *out, double x, int y, const char *cls);

#endif
