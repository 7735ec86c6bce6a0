/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one table and wrapping helper of the text report (cmd/text-*.c): widths in display
 * columns, lines broken only after a ',' or '/' or at a space, and a word that cannot fit a
 * line (or a cell) ellipsized ("…" in a UTF-8 locale, "..." otherwise), never cut mid-word.
 * No line of wrapped text is wider than the width it is given (but for a width below the
 * ellipsis' own); a table is, when its columns, each narrowed to 3, still do not fit.
 */
#ifndef NUMASTOR_CMD_TEXTWRAP_H
#define NUMASTOR_CMD_TEXTWRAP_H

#include <stdbool.h>
#include <stdio.h>

#define TW_RESET "\033[0m"

/* Where and how lines are written: colour is an escape each line starts with (NULL: none). */
struct tw_page {
	FILE *out;
	bool color; /* false: no escape is written, whatever the colour asked */
	bool utf8;  /* the ellipsis is "…" (else "...") */
};

/* Display columns of s (its first n bytes): escapes none, combining marks none, East Asian wide
 * characters two. s is valid UTF-8 (lib/base/escape.h). */
size_t tw_width(const char *s);
size_t tw_width_n(const char *s, size_t n);

/*
 * How much of s[0..n) goes on a line of cols columns: all of it when it fits; else up to the
 * last break that fits (after a ',' or '/', or before a space; *next skips that space). When no
 * break fits, the word up to the first break is ellipsized: *ell is set and the return is how
 * much of it goes before the ellipsis, *next where the text goes on after the word.
 */
size_t tw_piece(const struct tw_page *pg, const char *s, size_t cols, const char **next, bool *ell);

/* The ellipsis of pg's encoding and its columns. */
const char *tw_ellipsis(const struct tw_page *pg, size_t *cols);

/*
 * text wrapped to width columns (see tw_piece): the first line indented by ind1, the others by
 * ind2, each line in colour c (NULL: none). Runs of spaces inside a line are kept; at a break
 * they go. An empty text is an empty line.
 */
void tw_wrap(const struct tw_page *pg, size_t width, size_t ind1, size_t ind2, const char *c, const char *text);

/*
 * A table: column widths from the content; when the table is wider than the page, the column
 * that makes the fewest more cells wrap gives a column at a time (keep: names and addresses,
 * only when no other can), and a cell wider than its column continues on the next lines.
 */
struct tw_table {
	size_t ncols, nrows;
	const char *const *head;
	char **cell;	    /* nrows * ncols, owned */
	const char **color; /* per row, NULL: none */
	unsigned keep;	    /* columns (bits) that give width only when no other can */
};

#define TW_MAXCOLS 16

void tw_table_init(struct tw_table *tb, const char *const *head, size_t ncols);
/* A row of ncols cells (copied); NULL cells print as "?". */
void tw_table_row(struct tw_table *tb, const char *color, const char *const *cells);
/* The table at indent within width, its heading in colour head_color. */
void tw_table_print(const struct tw_page *pg, const struct tw_table *tb, size_t width, size_t indent,
		    const char *head_color);
void tw_table_free(struct tw_table *tb);

#endif
