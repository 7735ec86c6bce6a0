/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The table and wrapping helper of the text report: textwrap.h. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "textwrap.h"

/* ---------------------------------------------------------------------------------------------
 * Display width: escapes (CSI ... final byte) take none, combining marks none, East Asian wide
 * characters two columns, everything else one.
 * --------------------------------------------------------------------------------------------- */

static size_t esc_len(const char *s)
{
	size_t i = 2;
	if (s[0] != '\033' || s[1] != '[')
		return 0;
	while (s[i] && !(s[i] >= 0x40 && s[i] <= 0x7e))
		i++;
	return s[i] ? i + 1 : i;
}

static size_t utf8_next(const char *s, size_t n, unsigned *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = u[0] < 0x80 ? 1 : u[0] < 0xe0 ? 2 : u[0] < 0xf0 ? 3 : 4;

	if (len > n)
		len = n;
	*cp = len == 1 ? u[0] : u[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++)
		*cp = (*cp << 6) | (u[i] & 0x3f);
	return len ? len : 1;
}

static int cp_width(unsigned cp)
{
	if ((cp >= 0x300 && cp <= 0x36f) || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0xfe00 && cp <= 0xfe0f))
		return 0;
	if ((cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf && cp != 0x303f) ||
	    (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe4f) ||
	    (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
	    (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd))
		return 2;
	return 1;
}

size_t tw_width_n(const char *s, size_t n)
{
	size_t w = 0, i = 0, e;
	unsigned cp;

	while (i < n && s[i]) {
		if ((e = esc_len(s + i))) {
			i += e;
			continue;
		}
		i += utf8_next(s + i, n - i, &cp);
		w += (size_t)cp_width(cp);
	}
	return w;
}

size_t tw_width(const char *s)
{
	return tw_width_n(s, strlen(s));
}

/* The longest prefix of s[0..n) that fits cols columns, never inside an escape or a character;
 * at least one character when least is set. */
static size_t fit(const char *s, size_t n, size_t cols, bool least)
{
	size_t w = 0, i = 0, e, k;
	unsigned cp;

	while (i < n) {
		if ((e = esc_len(s + i))) {
			i += e;
			continue;
		}
		k = utf8_next(s + i, n - i, &cp);
		if (w + (size_t)cp_width(cp) > cols && (i > 0 || !least))
			break;
		w += (size_t)cp_width(cp);
		i += k;
	}
	return i;
}

const char *tw_ellipsis(const struct tw_page *pg, size_t *cols)
{
	*cols = pg->utf8 ? 1 : 3;
	return pg->utf8 ? "\u2026" : "...";
}

/* tw_piece on s[0..n) */
static size_t piece_n(const struct tw_page *pg, const char *s, size_t n, size_t cols, const char **next, bool *ell)
{
	size_t k, brk = 0, word, ecols;

	*ell = false;
	if (tw_width_n(s, n) <= cols) {
		*next = s + n;
		return n;
	}
	k = fit(s, n, cols, true);
	for (size_t i = 1; i <= k; i++)
		if (s[i - 1] == ',' || s[i - 1] == '/' || (i < n && s[i] == ' '))
			brk = i;
	if (brk) {
		*next = s + brk + (brk < n && s[brk] == ' ');
		return brk;
	}
	/* nowhere to break: the word (to its first break) ellipsized, the text goes on after it */
	for (word = 1; word < n && s[word] != ' ' && s[word - 1] != ',' && s[word - 1] != '/'; word++)
		;
	*next = s + word + (word < n && s[word] == ' ');
	tw_ellipsis(pg, &ecols);
	if (cols < ecols) /* no room even for the ellipsis: what fits */
		return fit(s, word, cols, false);
	*ell = true;
	return fit(s, word, cols - ecols, false);
}

size_t tw_piece(const struct tw_page *pg, const char *s, size_t cols, const char **next, bool *ell)
{
	return piece_n(pg, s, strlen(s), cols, next, ell);
}

/* ---------------------------------------------------------------------------------------------
 * Wrapped text
 * --------------------------------------------------------------------------------------------- */

static void line_start(const struct tw_page *pg, size_t indent, const char *c)
{
	fprintf(pg->out, "%*s%s", (int)indent, "", pg->color && c ? c : "");
}

static void line_end(const struct tw_page *pg, const char *c)
{
	fprintf(pg->out, "%s\n", pg->color && c && c[0] ? TW_RESET : "");
}

void tw_wrap(const struct tw_page *pg, size_t width, size_t ind1, size_t ind2, const char *c, const char *text)
{
	const char *s = text;
	size_t cur = 0, lines = 0;
	bool open = false;

	for (;;) {
		size_t sp = strspn(s, " ");
		const char *w = s + sp;
		size_t wl = strcspn(w, " "), ww, ind, avail;

		if (!wl)
			break;
		s = w + wl;
		ww = tw_width_n(w, wl);
		ind = lines ? ind2 : ind1;
		avail = width > ind + 1 ? width - ind : 1;
		if (open && cur + sp + ww <= avail) {
			fprintf(pg->out, "%*s%.*s", (int)sp, "", (int)wl, w);
			cur += sp + ww;
			continue;
		}
		if (open) {
			line_end(pg, c);
			lines++;
			ind = ind2;
			avail = width > ind + 1 ? width - ind : 1;
		}
		open = false;
		/* a word wider than a line: broken after its ',' and '/', else ellipsized */
		while (ww > avail) {
			const char *next;
			bool ell;
			size_t k = piece_n(pg, w, wl, avail, &next, &ell), ecols;
			line_start(pg, ind, c);
			fprintf(pg->out, "%.*s%s", (int)k, w, ell ? tw_ellipsis(pg, &ecols) : "");
			line_end(pg, c);
			lines++;
			wl -= (size_t)(next - w);
			w = next;
			ww = tw_width_n(w, wl);
			ind = ind2;
			avail = width > ind + 1 ? width - ind : 1;
		}
		if (!wl)
			continue;
		line_start(pg, ind, c);
		fprintf(pg->out, "%.*s", (int)wl, w);
		cur = ww;
		open = true;
	}
	if (open)
		line_end(pg, c);
	else if (!lines)
		fputc('\n', pg->out);
}

/* ---------------------------------------------------------------------------------------------
 * Tables
 * --------------------------------------------------------------------------------------------- */

void tw_table_init(struct tw_table *tb, const char *const *head, size_t ncols)
{
	memset(tb, 0, sizeof(*tb));
	tb->head = head;
	tb->ncols = ncols;
}

void tw_table_row(struct tw_table *tb, const char *color, const char *const *cells)
{
	char **nc = realloc(tb->cell, (tb->nrows + 1) * tb->ncols * sizeof(char *));
	const char **ncol = realloc(tb->color, (tb->nrows + 1) * sizeof(char *));

	if (nc)
		tb->cell = nc;
	if (ncol)
		tb->color = ncol;
	if (!nc || !ncol)
		return;
	for (size_t c = 0; c < tb->ncols; c++) {
		nc[tb->nrows * tb->ncols + c] = strdup(cells[c] ? cells[c] : "?");
		if (!nc[tb->nrows * tb->ncols + c]) { /* no row (lib/base/oom.h makes the run fail) */
			while (c--)
				free(nc[tb->nrows * tb->ncols + c]);
			return;
		}
	}
	ncol[tb->nrows] = color;
	tb->nrows++;
}

void tw_table_free(struct tw_table *tb)
{
	for (size_t i = 0; i < tb->nrows * tb->ncols; i++)
		free(tb->cell[i]);
	free(tb->cell);
	free(tb->color);
}

static void table_line(const struct tw_page *pg, const struct tw_table *tb, const size_t *w, size_t indent,
		       const char *const *cells, const char *color)
{
	const char *pos[TW_MAXCOLS];
	size_t nc = tb->ncols < TW_MAXCOLS ? tb->ncols : TW_MAXCOLS;
	bool more = true;

	for (size_t c = 0; c < nc; c++)
		pos[c] = cells[c];
	while (more) {
		char buf[4096];
		size_t len = 0;
		bool first = true;
		more = false;
		for (size_t c = 0; c < nc; c++) {
			const char *next, *e = "";
			size_t k, pad, ecols = 0;
			bool ell;
			if (!w[c]) /* an empty column (no row marked): no room, no gap */
				continue;
			k = tw_piece(pg, pos[c], w[c], &next, &ell);
			if (ell)
				e = tw_ellipsis(pg, &ecols);
			pad = w[c] - tw_width_n(pos[c], k) - ecols;
			if (!first)
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "  ");
			if (len < sizeof(buf))
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%.*s%s%*s", (int)k, pos[c], e,
							(int)pad, "");
			if (len >= sizeof(buf))
				len = sizeof(buf) - 1;
			pos[c] = next;
			more |= *next != '\0';
			first = false;
		}
		while (len && buf[len - 1] == ' ')
			len--;
		line_start(pg, indent, color);
		fprintf(pg->out, "%.*s", (int)len, buf);
		line_end(pg, color);
	}
}

/*
 * Column widths: each column's widest cell; while the table is wider than the page, one
 * column gives one column of width, the one that makes the fewest more cells wrap (the
 * widest among those; its heading weighs as much as all its rows), names and addresses
 * (keep) only when nothing else can give.
 */
void tw_table_print(const struct tw_page *pg, const struct tw_table *tb, size_t width, size_t indent,
		    const char *head_color)
{
	size_t w[TW_MAXCOLS], total = indent, nc = tb->ncols < TW_MAXCOLS ? tb->ncols : TW_MAXCOLS,
			      rows = tb->nrows + 1;
	size_t *cw = calloc(rows * nc, sizeof(size_t)); /* display width * 2, + 1: no break in it */

	if (!cw)
		return;
	for (size_t c = 0; c < nc; c++) {
		w[c] = 0;
		for (size_t r = 0; r < rows; r++) {
			const char *cell = r ? tb->cell[(r - 1) * tb->ncols + c] : tb->head[c];
			size_t x = tw_width(cell);
			/* a heading, or a cell with nowhere to break (a number, a name), weighs as much
			 * as all rows: cut last */
			cw[r * nc + c] = x * 2 + (!r || !strpbrk(cell, ",/ "));
			if (x > w[c])
				w[c] = x;
		}
		total += w[c] + (c && w[c] ? 2 : 0);
	}
	while (total > width) {
		size_t best = nc, best_cost = 0;
		for (int pass = 0; pass < 2 && best == nc; pass++)
			for (size_t c = 0; c < nc; c++) {
				size_t cost = 0;
				if (w[c] <= 3 || (!pass && (tb->keep & (1u << c))))
					continue;
				for (size_t r = 0; r < rows; r++)
					cost += cw[r * nc + c] / 2 >= w[c] ? (cw[r * nc + c] & 1 ? rows : 1) : 0;
				if (best == nc || cost < best_cost || (cost == best_cost && w[c] > w[best]))
					best = c, best_cost = cost;
			}
		if (best == nc)
			break;
		w[best]--;
		total--;
	}
	free(cw);
	table_line(pg, tb, w, indent, tb->head, head_color);
	for (size_t r = 0; r < tb->nrows; r++)
		table_line(pg, tb, w, indent, (const char *const *)&tb->cell[r * tb->ncols], tb->color[r]);
}
