/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The readable report, problem first: the summary and the machine; the findings grouped by id
 * and severity (one entry each, its devices compacted as ranges, one example of its evidence,
 * its remedy once); then the devices, one line each, or with --verbose each device's chain
 * device -> PCI -> node, its queue table, its other IRQs and its allocations.
 *
 * Every line fits the width (numastor-check(8), THE REPORT): the terminal's when stdout is one
 * (TIOCGWINSZ, else COLUMNS, as util-linux reads them), 80 otherwise; prose wraps at 80 at
 * most, tables use the whole width. Widths are display columns, not bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/escape.h"
#include "numastor.h"
#include "act/plan.h"
#include "read/rates.h"
#include "base/util.h"

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_RED "\033[1;31m"
#define C_YELLOW "\033[33m"
#define C_BLUE "\033[36m"
#define C_DIM "\033[2m"

#define PROSE_MAX 80 /* text wraps here even on a wider terminal: lines stay readable */
#define WIDTH_MIN 40 /* below this nothing useful fits; narrower terminals get 40 */
#define WIDTH_MAX 1000

/* The last few strings escaped for the terminal: enough for one line's arguments. */
#define ESC_SLOTS 8
struct esc_ring {
	char *slot[ESC_SLOTS];
	unsigned next;
};

struct pen {
	FILE *out;
	bool color, verbose;
	size_t width; /* tables */
	size_t prose; /* wrapped text: min(width, PROSE_MAX) */
	struct esc_ring *ring;
	const struct ns_findings_index *by_device; /* NULL when out of memory: every finding is looked at */
};

/*
 * What the machine said (names, model, serial, paths, messages that quote them), escaped for
 * the terminal (lib/base/escape.h): no control byte or invalid UTF-8 reaches it. NULL stays NULL;
 * valid until ESC_SLOTS more calls.
 */
static const char *t(const struct pen *p, const char *s)
{
	struct esc_ring *r = p->ring;
	char **slot = &r->slot[r->next++ % ESC_SLOTS];

	if (!s)
		return NULL;
	free(*slot);
	*slot = ns_escape_text(s);
	return *slot ? *slot : "?";
}

static const char *col(const struct pen *p, const char *c)
{
	return p->color ? c : "";
}

int ns_color_choice(const char *when, FILE *out)
{
	const char *term = getenv("TERM");

	if (strcmp(when, "always") == 0)
		return 1;
	if (strcmp(when, "never") == 0)
		return 0;
	if (strcmp(when, "auto") != 0)
		return -1;
	if (getenv("NO_COLOR") && *getenv("NO_COLOR"))
		return 0;
	if (term && strcmp(term, "dumb") == 0) /* a terminal that cannot show escapes */
		return 0;
	return isatty(fileno(out));
}

/* ---------------------------------------------------------------------------------------------
 * Display width: escapes (CSI ... final byte) take none, combining marks none, East Asian wide
 * characters two columns, everything else one. The text is valid UTF-8 (lib/base/escape.h).
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

/* Columns of the first n bytes of s. */
static size_t dwidth_n(const char *s, size_t n)
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

static size_t dwidth(const char *s)
{
	return dwidth_n(s, strlen(s));
}

/* The longest prefix of s[0..n) that fits cols columns, never inside an escape or a character;
 * at least one character, so that the caller advances. */
static size_t fit(const char *s, size_t n, size_t cols)
{
	size_t w = 0, i = 0, e, k;
	unsigned cp;

	while (i < n) {
		if ((e = esc_len(s + i))) {
			i += e;
			continue;
		}
		k = utf8_next(s + i, n - i, &cp);
		if (w + (size_t)cp_width(cp) > cols && i > 0)
			break;
		w += (size_t)cp_width(cp);
		i += k;
	}
	return i;
}

/* ---------------------------------------------------------------------------------------------
 * Wrapped text
 * --------------------------------------------------------------------------------------------- */

static void line_start(const struct pen *p, size_t indent, const char *c)
{
	fprintf(p->out, "%*s%s", (int)indent, "", c ? col(p, c) : "");
}

static void line_end(const struct pen *p, const char *c)
{
	fprintf(p->out, "%s\n", c ? col(p, c[0] ? C_RESET : "") : "");
}

/*
 * text wrapped to width columns at spaces (a word longer than a line is cut): the first line
 * indented by ind1, the others by ind2, each line in colour c (NULL: none). Runs of spaces
 * inside a line are kept; at a break they go.
 */
static void emit(const struct pen *p, size_t width, size_t ind1, size_t ind2, const char *c, const char *text)
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
		ww = dwidth_n(w, wl);
		ind = lines ? ind2 : ind1;
		avail = width > ind + 1 ? width - ind : 1;
		if (open && cur + sp + ww <= avail) {
			fprintf(p->out, "%*s%.*s", (int)sp, "", (int)wl, w);
			cur += sp + ww;
		} else {
			if (open) {
				line_end(p, c);
				lines++;
				ind = ind2;
				avail = width > ind + 1 ? width - ind : 1;
			}
			while (ww > avail) {
				size_t k = fit(w, wl, avail);
				line_start(p, ind, c);
				fprintf(p->out, "%.*s", (int)k, w);
				line_end(p, c);
				lines++;
				w += k;
				wl -= k;
				ww = dwidth_n(w, wl);
				ind = ind2;
				avail = width > ind + 1 ? width - ind : 1;
			}
			line_start(p, ind, c);
			fprintf(p->out, "%.*s", (int)wl, w);
			cur = ww;
			open = true;
		}
		s = w + wl;
	}
	if (open)
		line_end(p, c);
	else if (!lines)
		fputc('\n', p->out);
}

/* A line of prose, formatted, wrapped at the prose width; continuation lines 2 deeper. */
__attribute__((format(printf, 4, 5))) static void say(const struct pen *p, size_t indent, const char *c,
						      const char *fmt, ...)
{
	char *text;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	emit(p, p->prose, indent, indent + 2, c, text ? text : "?");
	free(text);
}

/* ---------------------------------------------------------------------------------------------
 * Tables: column widths from the content; when the table is wider than the page, the widest
 * column gives a column at a time, and a cell wider than its column continues on the next
 * lines (broken after a ',', '/' or space when one fits, else cut). Rows may have a colour.
 * --------------------------------------------------------------------------------------------- */

struct table {
	size_t ncols, nrows;
	const char *const *head;
	char **cell;	    /* nrows * ncols, owned */
	const char **color; /* per row, NULL: none */
	unsigned keep;	    /* columns (bits) that give width only when no other can: names, addresses */
};

static void table_init(struct table *tb, const char *const *head, size_t ncols)
{
	memset(tb, 0, sizeof(*tb));
	tb->head = head;
	tb->ncols = ncols;
}

/* A row of ncols cells (copied); NULL cells print as "?". */
static void table_row(struct table *tb, const char *color, const char *const *cells)
{
	char **nc = realloc(tb->cell, (tb->nrows + 1) * tb->ncols * sizeof(char *));
	const char **ncol = realloc(tb->color, (tb->nrows + 1) * sizeof(char *));

	if (nc)
		tb->cell = nc;
	if (ncol)
		tb->color = ncol;
	if (!nc || !ncol)
		return;
	for (size_t c = 0; c < tb->ncols; c++)
		nc[tb->nrows * tb->ncols + c] = strdup(cells[c] ? cells[c] : "?");
	ncol[tb->nrows] = color;
	tb->nrows++;
}

static void table_free(struct table *tb)
{
	for (size_t i = 0; i < tb->nrows * tb->ncols; i++)
		free(tb->cell[i]);
	free(tb->cell);
	free(tb->color);
}

/* How much of s goes on one line of a cols-wide cell; *next: where the rest starts. */
static size_t piece(const char *s, size_t cols, const char **next)
{
	size_t n = strlen(s), k, brk = 0;

	if (dwidth_n(s, n) <= cols) {
		*next = s + n;
		return n;
	}
	k = fit(s, n, cols);
	for (size_t i = 1; i < k; i++)
		if (s[i - 1] == ',' || s[i - 1] == '/')
			brk = i;
		else if (s[i] == ' ')
			brk = i;
	if (brk)
		k = brk;
	*next = s + k + (s[k] == ' ');
	return k;
}

static void table_line(const struct pen *p, const struct table *tb, const size_t *w, size_t indent,
		       const char *const *cells, const char *color)
{
	const char *pos[16];
	size_t nc = tb->ncols < 16 ? tb->ncols : 16;
	bool more = true;

	for (size_t c = 0; c < nc; c++)
		pos[c] = cells[c];
	while (more) {
		char buf[4096];
		size_t len = 0;
		bool first = true;
		more = false;
		for (size_t c = 0; c < nc; c++) {
			const char *next;
			size_t k, pad;
			if (!w[c]) /* an empty column (no row marked): no room, no gap */
				continue;
			k = piece(pos[c], w[c], &next);
			pad = w[c] - dwidth_n(pos[c], k);
			if (!first)
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "  ");
			if (len < sizeof(buf))
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%.*s%*s", (int)k, pos[c],
							(int)pad, "");
			if (len >= sizeof(buf))
				len = sizeof(buf) - 1;
			pos[c] = next;
			more |= *next != '\0';
			first = false;
		}
		while (len && buf[len - 1] == ' ')
			len--;
		line_start(p, indent, color);
		fprintf(p->out, "%.*s", (int)len, buf);
		line_end(p, color);
	}
}

/*
 * Column widths: each column's widest cell; while the table is wider than the page, one
 * column gives one column of width, the one that makes the fewest more cells wrap (the
 * widest among those; its heading weighs as much as all its rows), names and addresses
 * (keep) only when nothing else can give.
 */
static void table_print(const struct pen *p, const struct table *tb, size_t indent)
{
	size_t w[16], total = indent, nc = tb->ncols < 16 ? tb->ncols : 16, rows = tb->nrows + 1;
	size_t *cw = calloc(rows * nc, sizeof(size_t)); /* display width * 2, + 1: no break in it */

	if (!cw)
		return;
	for (size_t c = 0; c < nc; c++) {
		w[c] = 0;
		for (size_t r = 0; r < rows; r++) {
			const char *cell = r ? tb->cell[(r - 1) * tb->ncols + c] : tb->head[c];
			size_t x = dwidth(cell);
			/* a heading, or a cell with nowhere to break (a number, a name), weighs as much
			 * as all rows: cut last */
			cw[r * nc + c] = x * 2 + (!r || !strpbrk(cell, ",/ "));
			if (x > w[c])
				w[c] = x;
		}
		total += w[c] + (c && w[c] ? 2 : 0);
	}
	while (total > p->width) {
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
	table_line(p, tb, w, indent, tb->head, C_DIM);
	for (size_t r = 0; r < tb->nrows; r++)
		table_line(p, tb, w, indent, (const char *const *)&tb->cell[r * tb->ncols], tb->color[r]);
}

/* ---------------------------------------------------------------------------------------------
 * Names and numbers
 * --------------------------------------------------------------------------------------------- */

char *ns_text_cpus(const struct ns_cpuset *s)
{
	char *t;
	if (!s->known || ns_cpuset_format(s, &t) < 0)
		return strdup("?");
	if (!*t) {
		free(t);
		return strdup("-");
	}
	return t;
}

void ns_text_bytes(char *buf, size_t n, long long b)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)b;
	int u = 0;
	if (b < 0) {
		snprintf(buf, n, "?");
		return;
	}
	while (v >= 1024 && u < 5)
		v /= 1024, u++;
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static const char *sev_color(enum ns_severity s)
{
	return s == NS_SEV_CRITICAL ? C_RED : s == NS_SEV_WARNING ? C_YELLOW : C_BLUE;
}

/* Natural order of device names: digit runs compare as numbers (nvme2n1 before nvme10n1). */
static int natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			unsigned long long x = strtoull(a, (char **)&a, 10), y = strtoull(b, (char **)&b, 10);
			if (x != y)
				return x < y ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		a++, b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

static int natcmp_p(const void *a, const void *b)
{
	return natcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Is b the name after a: the same but for one run of digits, one more (nvme3n1 -> nvme4n1,
 * nvme0n1 -> nvme0n2), or, as sdX names go, the last letter the next one (sdc -> sdd)?
 */
static bool next_name(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i = 0;

	if (la == lb && la > 1 && strncmp(a, b, la - 1) == 0 && a[la - 1] >= 'a' && a[la - 1] < 'z' &&
	    b[la - 1] == a[la - 1] + 1)
		return true;
	while (a[i] && a[i] == b[i] && !(a[i] >= '0' && a[i] <= '9'))
		i++;
	/* back to the start of the digit run both are in */
	while (i > 0 && a[i - 1] >= '0' && a[i - 1] <= '9')
		i--;
	for (;;) {
		size_t da = strspn(a + i, "0123456789"), db = strspn(b + i, "0123456789");
		if (da && db) {
			unsigned long long x = strtoull(a + i, NULL, 10), y = strtoull(b + i, NULL, 10);
			bool canon = (a[i] != '0' || da == 1) && (b[i] != '0' || db == 1);
			if (x + 1 == y && canon)
				return strcmp(a + i + da, b + i + db) == 0;
			if (x != y || da != db)
				return false;
			i += da;
			continue;
		}
		if (!a[i] || a[i] != b[i])
			return false;
		i++;
	}
}

/* The names, sorted naturally, with runs of consecutive names as "first-last": "nvme0n1-nvme7n1,
 * sda". ASCII '-' in every locale (numastor-check(8)): the same bytes for grep and the tests. */
static char *name_ranges(const struct pen *p, const char **names, size_t n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	qsort(names, n, sizeof(*names), natcmp_p);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && next_name(names[j], names[j + 1]))
			j++;
		fprintf(f, "%s%s", i ? ", " : "", t(p, names[i]));
		if (j > i)
			fprintf(f, "-%s", t(p, names[j]));
		i = j + 1;
	}
	fclose(f);
	return out;
}

/* ---------------------------------------------------------------------------------------------
 * The summary and the machine
 * --------------------------------------------------------------------------------------------- */

/* "1 cause (node-forced) critical, 2 causes (a, b) warning", or "no findings" */
static char *summary_causes(const struct ns_findings *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	bool any = false;

	if (!m)
		return NULL;
	for (int s = NS_SEV_CRITICAL; s >= NS_SEV_INFO; s--) {
		const char *ids[8];
		size_t n = ns_findings_cause_ids(f, (enum ns_severity)s, ids, 8);
		if (!n)
			continue;
		fprintf(m, "%s%zu cause%s (", any ? ", " : "", n, n == 1 ? "" : "s");
		for (size_t k = 0; k < n && k < 8; k++)
			fprintf(m, "%s%s", k ? ", " : "", ids[k]);
		fprintf(m, "%s) %s", n > 8 ? ", ..." : "", ns_severity_name((enum ns_severity)s));
		any = true;
	}
	if (!any)
		fputs("no findings", m);
	fclose(m);
	return buf;
}

static void print_summary(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f)
{
	int code = ns_findings_exit_code(f);
	const char *c = code == 2 ? C_RED : code == 1 || code == 3 ? C_YELLOW : C_BOLD;
	char *causes = summary_causes(f);
	say(p, 0, NULL, "%ssummary: %s%s, %zu device%s: %s (exit %d)", col(p, c),
	    code == 2	? "CRITICAL"
	    : code == 1 ? "WARNING"
	    : code == 3 ? "UNKNOWN"
			: "OK",
	    col(p, C_RESET), sys->ndisks, sys->ndisks == 1 ? "" : "s", causes ? causes : "?", code);
	free(causes);
	/* right under the verdict: what it could not speak for, and why */
	if (f->nunjudged)
		say(p, 2, NULL, "%zu device%s could not be judged:", f->nunjudged, f->nunjudged == 1 ? "" : "s");
	for (size_t i = 0; i < f->nunjudged; i++) {
		char *dev = strdup(t(p, f->unjudged[i].device));
		say(p, 4, NULL, "%s: %s", dev ? dev : "?", t(p, f->unjudged[i].reason));
		free(dev);
	}
}

/* How CPUs were isolated beyond cpu/isolated and cpu/nohz_full: the command line's flags and
 * lists, cgroup partitions, and what is left for housekeeping. Nothing when nothing is isolated. */
static void print_isolation(const struct pen *p, const struct ns_machine *m)
{
	const struct ns_isolation *iso = &m->isolation;
	char *line = NULL, *c;
	size_t len = 0;
	FILE *f;

	if (!ns_cpuset_count(&iso->cpus) && !ns_cpuset_count(&iso->irqaffinity) && iso->cgroup.known)
		return;
	if (!(f = open_memstream(&line, &len)))
		return;
	fputs("isolation:", f);
	if (iso->isolcpus.known) {
		fputs(" isolcpus=", f);
		for (size_t i = 0, k = 0; i < NS_ISO_NFLAGS; i++)
			if (iso->isolcpus_flags & ns_isolation_flags[i])
				fprintf(f, "%s%s", k++ ? "," : "", ns_isolation_flag_name(ns_isolation_flags[i]));
		c = ns_text_cpus(&iso->isolcpus);
		fprintf(f, " %s,", c);
		free(c);
	}
	if (iso->nohz_full.known) {
		c = ns_text_cpus(&iso->nohz_full);
		fprintf(f, " nohz_full= %s,", c);
		free(c);
	}
	if (iso->irqaffinity.known) {
		c = ns_text_cpus(&iso->irqaffinity);
		fprintf(f, " irqaffinity= %s,", c);
		free(c);
	}
	c = ns_text_cpus(&iso->cgroup);
	fprintf(f, " cgroup partitions %s;", iso->cgroup.known && !ns_cpuset_count(&iso->cgroup) ? "none" : c);
	free(c);
	c = ns_text_cpus(&iso->housekeeping);
	fprintf(f, " housekeeping CPUs %s", c);
	free(c);
	if (!iso->cmdline_known)
		fputs(" (kernel command line unknown)", f);
	fclose(f);
	if (line)
		say(p, 2, NULL, "%s", line);
	free(line);
}

static void print_machine(const struct pen *p, const struct ns_system *sys)
{
	static const char *const head[] = {"NODE", "CPUS", "COUNT", "MEMORY", "DISTANCES"};
	const struct ns_machine *m = &sys->machine;
	const struct ns_irqbalance *ib = &m->irqbalance;
	char *on = ns_text_cpus(&m->online), *iso = ns_text_cpus(&m->isolated), *nohz = ns_text_cpus(&m->nohz_full),
	     *fixes = NULL;
	size_t flen = 0;
	struct table tb;
	FILE *fx;

	say(p, 0, NULL, "%snumastor%s: kernel %s, CPUs %s online", col(p, C_BOLD), col(p, C_RESET),
	    m->kernel_release ? t(p, m->kernel_release) : "?", on);
	say(p, 2, NULL, "root %s", t(p, ns_root_dir(sys->root))); /* its own line: a long path wraps alone */
	if (strcmp(iso, "-") != 0 || strcmp(nohz, "-") != 0)
		say(p, 2, NULL, "isolated CPUs %s, nohz_full CPUs %s", iso, nohz);
	print_isolation(p, m);
	if (ib->running == 1)
		say(p, 2, NULL, "irqbalance: running (pid %ld), %s", ib->pid,
		    ib->policyscript ? t(p, ib->policyscript) : "no policy script");
	else if (ib->running == 0)
		say(p, 2, NULL, "irqbalance: not running");
	else
		say(p, 2, NULL, "irqbalance: unknown");
	if ((fx = open_memstream(&fixes, &flen))) {
		for (int i = 0, k = 0; i < 2; i++) {
			const struct ns_kernel_fix *x = &sys->fixes[i];
			const char *state = x->in_kernel == 1	? "in this kernel"
					    : x->in_kernel == 0 ? "not in this kernel"
								: "unknown";
			if (!x->series)
				continue;
			if (p->verbose) /* the basis is a sentence */
				say(p, 2, NULL, "kernel fix %s: %s (%s)", x->series, state,
				    x->basis ? t(p, x->basis) : "?");
			else
				fprintf(fx, "%s%s %s", k++ ? ", " : "", x->series, state);
		}
		fclose(fx);
		if (fixes && *fixes)
			say(p, 2, NULL, "kernel fixes: %s", fixes);
		free(fixes);
	}
	if (m->numa_support == 0)
		say(p, 2, NULL,
		    "no NUMA support in this kernel (no node/ in sysfs): node 0 is the online CPUs, "
		    "locality is moot.");
	else if (!ns_machine_multi_node(m))
		say(p, 2, NULL, "single NUMA node: locality is moot.");
	table_init(&tb, head, sizeof(head) / sizeof(head[0]));
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct ns_node *n = &m->nodes[i];
		char *c = ns_text_cpus(&n->cpus), mem[32], count[16] = "?", id[16], *dist = NULL;
		size_t dlen = 0;
		FILE *d = open_memstream(&dist, &dlen);
		ns_text_bytes(mem, sizeof(mem), n->memory_bytes);
		if (n->cpus.known) /* an unreadable cpulist has no count either */
			snprintf(count, sizeof(count), "%u", ns_cpuset_count(&n->cpus));
		snprintf(id, sizeof(id), "%d", n->id);
		if (d) {
			for (size_t k = 0; n->distances && k < n->ndistances; k++)
				fprintf(d, "%s%d", k ? " " : "", n->distances[k]);
			if (!n->distances)
				fputc('?', d);
			fclose(d);
		}
		const char *cells[] = {id, c, count, mem, dist ? dist : "?"};
		table_row(&tb, NULL, cells);
		free(dist);
		free(c);
	}
	table_print(p, &tb, 2);
	table_free(&tb);
	free(on);
	free(iso);
	free(nohz);
}

/* ---------------------------------------------------------------------------------------------
 * Findings, grouped: one entry per cause (id, severity and the sentence said), in order of
 * severity (lib/model/findings sorts them so), then of first appearance; each cause's effects under it
 * --------------------------------------------------------------------------------------------- */

struct group {
	const struct ns_finding *first;
	size_t *idx; /* into f->v */
	size_t n;
};

static bool same_group(const struct ns_finding *a, const struct ns_finding *b)
{
	return a->severity == b->severity && strcmp(a->id, b->id) == 0 && strcmp(a->form, b->form) == 0 &&
	       (a->caused_by == b->caused_by ||
		(a->caused_by && b->caused_by && strcmp(a->caused_by, b->caused_by) == 0));
}

/* The findings at positions pick[0..n) of f->v grouped: a group's sentence holds for every
 * device it names, since its findings share the id, the severity, the form and the cause. */
static size_t group_findings(const struct ns_findings *f, const size_t *pick, size_t n, struct group **out)
{
	struct group *g = calloc(n ? n : 1, sizeof(*g));
	size_t *of = calloc(n ? n : 1, sizeof(*of)); /* each finding's group */
	size_t ng = 0;

	*out = g;
	if (!g || !of) {
		free(of);
		return 0;
	}
	/* the groups are the rules' ids and forms (a few dozen): finding each one's is linear */
	for (size_t i = 0; i < n; i++) {
		const struct ns_finding *x = &f->v[pick[i]];
		size_t k = 0;
		while (k < ng && !same_group(g[k].first, x))
			k++;
		if (k == ng)
			g[ng++].first = x;
		of[i] = k;
		g[k].n++;
	}
	/* each group's findings in the order above: its own list, of its own size */
	for (size_t k = 0; k < ng; k++) {
		g[k].idx = calloc(g[k].n ? g[k].n : 1, sizeof(size_t));
		g[k].n = 0;
	}
	for (size_t i = 0; i < n; i++)
		if (g[of[i]].idx)
			g[of[i]].idx[g[of[i]].n++] = pick[i];
	free(of);
	return ng;
}

static void free_groups(struct group *g, size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		free(g[i].idx);
	free(g);
}

/* "remedy: TEXT", then what numastor can do, least invasive first, each with its undo */
static void print_remedy(const struct pen *p, size_t indent, const struct ns_finding *x, const char *who)
{
	say(p, indent, NULL, "remedy%s%s: %s%s", who ? " for " : "", who ? who : "", t(p, x->remedy_text),
	    x->nsteps > 1 ? " Least invasive first:" : "");
	for (size_t k = 0; k < x->nsteps; k++) {
		char *changes = strdup(t(p, x->steps[k].changes));
		say(p, indent + 2, NULL, "%zu. %s: %s; undo: %s", k + 1, x->steps[k].command, changes ? changes : "?",
		    x->steps[k].undo);
		free(changes);
	}
}

struct remedy_sort {
	const struct ns_findings *f;
	const struct group *g;
};

static int cmp_remedy(const void *pa, const void *pb, void *data)
{
	const struct remedy_sort *rs = data;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = strcmp(rs->f->v[rs->g->idx[a]].remedy_text, rs->f->v[rs->g->idx[b]].remedy_text);
	return c ? c : (a > b) - (a < b);
}

/* "critical irq-confined: nvme0n1-nvme7n1 (8)" at indent: a group's head line */
static void print_group_head(const struct pen *p, size_t indent, const struct ns_findings *f, const struct group *g)
{
	const struct ns_finding *x = g->first;
	const char **names = calloc(g->n ? g->n : 1, sizeof(char *));
	char *list = NULL;
	size_t nnames = 0;

	for (size_t i = 0; names && i < g->n; i++)
		if (f->v[g->idx[i]].device)
			names[nnames++] = f->v[g->idx[i]].device;
	if (nnames)
		list = name_ranges(p, names, nnames);
	if (list) /* the count even for one: a list that wraps ends there */
		say(p, indent, NULL, "%s%-8s%s %s: %s (%zu)", col(p, sev_color(x->severity)),
		    ns_severity_name(x->severity), col(p, C_RESET), x->id, list, nnames);
	else
		say(p, indent, NULL, "%s%-8s%s %s", col(p, sev_color(x->severity)), ns_severity_name(x->severity),
		    col(p, C_RESET), x->id);
	free(list);
	free(names);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The effects of a cause group: the findings caused by its id on its devices, grouped, each
 * head line under the cause ("because: ID" once above them); --verbose adds one's sentence.
 */
static void print_effects(const struct pen *p, const struct ns_findings *f, const struct group *g)
{
	const char **devs = calloc(g->n ? g->n : 1, sizeof(char *));
	size_t *pick = calloc(f->n ? f->n : 1, sizeof(size_t)), ndevs = 0, npick = 0, ng;
	struct group *eg;

	if (!devs || !pick)
		goto out;
	for (size_t i = 0; i < g->n; i++)
		if (f->v[g->idx[i]].device)
			devs[ndevs++] = f->v[g->idx[i]].device;
	qsort(devs, ndevs, sizeof(*devs), cmp_str);
	for (size_t i = 0; i < f->n; i++) {
		const struct ns_finding *x = &f->v[i];
		if (x->caused_by && x->device && strcmp(x->caused_by, g->first->id) == 0 &&
		    bsearch(&x->device, devs, ndevs, sizeof(*devs), cmp_str))
			pick[npick++] = i;
	}
	if (!npick)
		goto out;
	ng = group_findings(f, pick, npick, &eg);
	say(p, 4, NULL, "effects, because: %s", g->first->id);
	for (size_t k = 0; k < ng; k++) {
		print_group_head(p, 6, f, &eg[k]);
		if (p->verbose)
			say(p, 8, NULL, "%s%s", eg[k].n > 1 ? "e.g. " : "", t(p, eg[k].first->message));
	}
	free_groups(eg, ng);
out:
	free(devs);
	free(pick);
}

static void print_group(const struct pen *p, const struct ns_findings *f, const struct group *g)
{
	const struct ns_finding *x = g->first;

	print_group_head(p, 2, f, g);
	if (!p->verbose || g->n == 1) {
		/* one device's evidence stands for the others (--verbose: each one's) */
		say(p, 4, NULL, "%s%s", g->n > 1 ? "e.g. " : "", t(p, x->message));
		print_effects(p, f, g);
		print_remedy(p, 4, x, NULL);
		return;
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct ns_finding *y = &f->v[g->idx[i]];
		say(p, 4, NULL, "%s%s%s", y->device ? t(p, y->device) : "", y->device ? ": " : "", t(p, y->message));
	}
	print_effects(p, f, g);
	/* each distinct remedy once, with the devices it is for when they differ */
	bool same = true;
	for (size_t i = 1; i < g->n; i++)
		same &= strcmp(f->v[g->idx[i]].remedy_text, x->remedy_text) == 0;
	if (same) {
		print_remedy(p, 4, x, NULL);
		return;
	}
	/* which remedy comes first: the group's positions sorted by remedy, then position */
	size_t *pos = calloc(g->n, sizeof(*pos));
	bool *first = calloc(g->n, sizeof(*first));
	if (!pos || !first) {
		free(pos);
		free(first);
		return;
	}
	for (size_t i = 0; i < g->n; i++)
		pos[i] = i;
	qsort_r(pos, g->n, sizeof(*pos), cmp_remedy, (void *)&(struct remedy_sort){f, g});
	for (size_t i = 0; i < g->n; i++)
		first[pos[i]] =
			i == 0 || strcmp(f->v[g->idx[pos[i]]].remedy_text, f->v[g->idx[pos[i - 1]]].remedy_text) != 0;
	for (size_t i = 0; i < g->n; i++)
		if (first[i])
			print_remedy(p, 4, &f->v[g->idx[i]], f->v[g->idx[i]].device);
	free(pos);
	free(first);
}

static void print_findings(const struct pen *p, const struct ns_findings *f)
{
	struct group *g = NULL;
	size_t *pick = calloc(f->n ? f->n : 1, sizeof(size_t)), n = 0, ng = 0;

	/* the causes, each with its effects under it */
	for (size_t i = 0; pick && i < f->n; i++)
		if (!f->v[i].caused_by)
			pick[n++] = i;
	if (pick)
		ng = group_findings(f, pick, n, &g);
	free(pick);
	fprintf(p->out, "\n%sfindings%s%s\n", col(p, C_BOLD), col(p, C_RESET), f->n ? "" : ": none");
	for (size_t i = 0; i < ng; i++)
		print_group(p, f, &g[i]);
	free_groups(g, ng);
}

static int cmp_by_device(const void *pa, const void *pb, void *data)
{
	const struct ns_findings *f = data;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = strcmp(f->v[a].device, f->v[b].device);
	return c ? c : (a > b) - (a < b);
}

int ns_findings_index_make(const struct ns_findings *f, struct ns_findings_index *ix)
{
	ix->f = f;
	ix->n = 0;
	ix->idx = malloc((f->n ? f->n : 1) * sizeof(*ix->idx));
	if (!ix->idx)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].device)
			ix->idx[ix->n++] = i;
	qsort_r(ix->idx, ix->n, sizeof(*ix->idx), cmp_by_device, (void *)f);
	return 0;
}

const size_t *ns_findings_index_of(const struct ns_findings_index *ix, const char *name, size_t *n)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) { /* the first of name's */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ix->f->v[ix->idx[mid]].device, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < ix->n && strcmp(ix->f->v[ix->idx[hi]].device, name) == 0; hi++)
		;
	*n = hi - lo;
	return ix->idx + lo;
}

void ns_findings_index_free(struct ns_findings_index *ix)
{
	free(ix->idx);
	*ix = (struct ns_findings_index){0};
}

/* The findings of device name, *n of them: the index's; NULL without it, when *n is every
 * finding's (the callers check the device of each). */
static const size_t *device_findings(const struct pen *p, const struct ns_findings *f, const char *name, size_t *n)
{
	if (!p->by_device) {
		*n = f->n;
		return NULL;
	}
	return ns_findings_index_of(p->by_device, name, n);
}

/* The k-th of device_findings(): an index into f->v */
#define DEVICE_FINDING(v, k) ((v) ? (v)[k] : (k))

/* A device's findings: its causes by severity and its effects. */
struct dev_counts {
	size_t causes[3], effects;
};

/* The worst severity of a device's findings (its causes': an effect is never worse than its
 * cause) and their counts; -1 when it has none. */
static int device_severity(const struct pen *p, const struct ns_findings *f, const char *name, struct dev_counts *dc)
{
	size_t n;
	const size_t *v = device_findings(p, f, name, &n);
	int worst = -1;

	memset(dc, 0, sizeof(*dc));
	for (size_t k = 0; k < n; k++) {
		const struct ns_finding *x = &f->v[DEVICE_FINDING(v, k)];
		if (x->device && strcmp(x->device, name) == 0) {
			if (x->caused_by)
				dc->effects++;
			else
				dc->causes[x->severity]++;
			if ((int)x->severity > worst)
				worst = (int)x->severity;
		}
	}
	return worst;
}

/* The FINDINGS cell: its causes by severity, "2 crit, 1 warn" ("-" for none); their effects are
 * listed under them in the findings. */
static void counts_cell(char *buf, size_t len, const struct dev_counts *dc)
{
	static const char *const abbr[] = {"info", "warn", "crit"};
	size_t at = 0;

	buf[0] = '\0';
	for (int s = NS_SEV_CRITICAL; s >= NS_SEV_INFO; s--)
		if (dc->causes[s] && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%zu %s", at ? ", " : "", dc->causes[s], abbr[s]);
	if (!buf[0])
		snprintf(buf, len, "-");
}

/* The worst severity among a device's findings whose evidence names IRQ irq; -1 none. */
static int irq_severity(const struct pen *p, const struct ns_findings *f, const char *name, int irq)
{
	size_t n;
	const size_t *v = device_findings(p, f, name, &n);
	int worst = -1;

	for (size_t k = 0; k < n; k++) {
		const struct ns_finding *x = &f->v[DEVICE_FINDING(v, k)];
		struct json_object *e, *a;
		bool named = false;
		if (!x->device || strcmp(x->device, name) != 0 || !x->evidence)
			continue;
		if (json_object_object_get_ex(x->evidence, "irq", &e) && json_object_is_type(e, json_type_int))
			named |= json_object_get_int(e) == irq;
		if (json_object_object_get_ex(x->evidence, "irqs", &a) && json_object_is_type(a, json_type_array))
			for (size_t i = 0; i < json_object_array_length(a); i++) {
				struct json_object *o = json_object_array_get_idx(a, i), *m = o;
				if (json_object_is_type(o, json_type_object))
					json_object_object_get_ex(o, "irq", &m);
				named |= m && json_object_is_type(m, json_type_int) && json_object_get_int(m) == irq;
			}
		if (named && (int)x->severity > worst)
			worst = (int)x->severity;
	}
	return worst;
}

/* ---------------------------------------------------------------------------------------------
 * Devices: one line each (default), or each one's detail (--verbose)
 * --------------------------------------------------------------------------------------------- */

/* The node of a device for its line: "1", "0 FORCED" (what the forced function reads), "0 SET". */
static void node_cell(char *buf, size_t n, const struct ns_disk *d)
{
	const struct ns_pci *pci = d->npaths ? d->paths[0].pci : NULL;

	if (d->node_source == NS_NODE_SRC_FORCED && pci && pci->numa_node >= 0)
		snprintf(buf, n, "%d FORCED", pci->numa_node);
	else if (d->node >= 0 && d->node_source == NS_NODE_SRC_SET)
		snprintf(buf, n, "%d SET", d->node);
	else if (d->node >= 0)
		snprintf(buf, n, "%d", d->node);
	else if (d->node_source == NS_NODE_SRC_MEMBERS_DISAGREE)
		snprintf(buf, n, "split");
	else if (ns_disk_is_virtual(d) || d->node_source == NS_NODE_SRC_NONE)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%s", ns_node_source_name(d->node_source));
}

/* The nodes the queue vectors of d are aimed at (their effective CPUs', else their affinity's). */
static char *irq_nodes(const struct ns_system *sys, const struct ns_disk *d)
{
	struct ns_cpuset all = {0}, nodes = {0};
	char *s;
	bool any = false;

	all.known = true;
	for (size_t i = 0; i < d->nhctx; i++) {
		const struct ns_irq *irq = d->hctx[i].irq;
		if (!irq)
			continue;
		any = true;
		if (!ns_irq_target(irq)->known)
			all.known = false;
		else
			ns_cpuset_or(&all, ns_irq_target(irq));
	}
	if (!any) {
		ns_cpuset_clear(&all);
		return strdup("-");
	}
	ns_machine_nodes_of(&sys->machine, &all, &nodes);
	s = ns_text_cpus(&nodes);
	ns_cpuset_clear(&all);
	ns_cpuset_clear(&nodes);
	return s;
}

static void print_device_table(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f)
{
	static const char *const head[] = {"NAME", "TYPE", "SIZE", "NODE", "PCI", "HWQ", "IRQ-NODES", "FINDINGS"};
	struct table tb;

	table_init(&tb, head, sizeof(head) / sizeof(head[0]));
	tb.keep = 1u << 0 | 1u << 4;
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		char size[32], node[48], queues[24], found[64], *pci = NULL, *inodes = irq_nodes(sys, d);
		struct dev_counts dc;
		int sev = device_severity(p, f, d->name, &dc);
		const char *pcis = "-";

		ns_text_bytes(size, sizeof(size), d->size_bytes);
		node_cell(node, sizeof(node), d);
		snprintf(queues, sizeof(queues), "%zu", d->nhctx);
		if (d->npaths == 1 && d->paths[0].pci)
			pcis = t(p, d->paths[0].pci->address);
		else if (d->npaths > 1 && asprintf(&pci, "%zu paths", d->npaths) >= 0)
			pcis = pci;
		counts_cell(found, sizeof(found), &dc);
		char *name = strdup(t(p, d->name));
		const char *cells[] = {name, ns_disk_kind_name(d->kind), size, node, pcis, queues, inodes, found};
		table_row(&tb, sev < 0 ? NULL : sev_color((enum ns_severity)sev), cells);
		free(name);
		free(pci);
		free(inodes);
	}
	table_print(p, &tb, 2);
	table_free(&tb);
}

static void print_pci(const struct pen *p, const struct ns_path *path)
{
	const struct ns_pci *pci = path->pci;
	char *lc, node[96], module[64] = "";

	if (path->fabric) {
		const struct ns_fabric *fb = path->fabric;
		char *addr = strdup(fb->address ? t(p, fb->address) : "?");
		if (fb->carrier)
			say(p, 2, NULL, "fabric %s %s over %s %s (by %s)", t(p, fb->transport), addr ? addr : "?",
			    fb->carrier_kind, t(p, fb->carrier), fb->carrier_basis ? fb->carrier_basis : "?");
		else
			say(p, 2, NULL, "fabric %s %s: %s", t(p, fb->transport), addr ? addr : "?",
			    fb->reason ? t(p, fb->reason) : "no carrier");
		free(addr);
	}
	if (path->vmbus) {
		const struct ns_vmbus *vb = path->vmbus;
		char *cn = ns_text_cpus(&vb->channel_nodes), *id = strdup(t(p, vb->device_id)), vnode[24];
		if (vb->numa_node >= 0)
			snprintf(vnode, sizeof(vnode), "node %d", vb->numa_node);
		else
			snprintf(vnode, sizeof(vnode), "no node");
		say(p, 2, NULL, "VMBus device %s, %s; %zu channels, their target CPUs on nodes %s", id ? id : "?",
		    vnode, vb->nchannels, cn ? cn : "?");
		free(cn);
		free(id);
	}
	if (!pci) {
		say(p, 2, NULL, "path %s%s%s -> no PCI function%s%s", ns_transport_name(path->transport),
		    path->controller ? " " : "", path->controller ? t(p, path->controller) : "",
		    path->node_device ? ", node from /" : "", path->node_device ? t(p, path->node_device) : "");
		return;
	}
	lc = ns_text_cpus(&pci->local_cpus);
	if (pci->module)
		snprintf(module, sizeof(module), " (%s%s)",
			 pci->module->patched == 1   ? "numastor-patched"
			 : pci->module->patched == 0 ? "stock"
						     : "stock?",
			 pci->module->state == NS_MODULE_BUILTIN ? ", built in" : "");
	if (pci->numa_node == NS_NODE_UNREAD)
		snprintf(node, sizeof(node), "node ?");
	else if (pci->forced == 1)
		snprintf(node, sizeof(node), "node %d %sFORCED%s", pci->numa_node, col(p, C_RED), col(p, C_RESET));
	else if (pci->node_set == 1)
		snprintf(node, sizeof(node), "node %d %sSET%s (not the firmware's)", pci->numa_node, col(p, C_RED),
			 col(p, C_RESET));
	else
		snprintf(node, sizeof(node), "node %d", pci->numa_node);
	char *ctl = strdup(path->controller ? t(p, path->controller) : ""), *addr = strdup(t(p, pci->address));
	char *ven = strdup(pci->vendor ? t(p, pci->vendor + (strncmp(pci->vendor, "0x", 2) ? 0 : 2)) : "?");
	char *dev = strdup(pci->device ? t(p, pci->device + (strncmp(pci->device, "0x", 2) ? 0 : 2)) : "?");
	say(p, 2, NULL, "path %s%s%s -> PCI %s [%s:%s] driver %s%s -> %s, local CPUs %s",
	    ns_transport_name(path->transport), *ctl ? " " : "", ctl, addr, ven, dev,
	    pci->driver ? t(p, pci->driver) : "(none)", module, node, lc);
	free(ctl);
	free(addr);
	free(ven);
	free(dev);
	free(lc);
}

/* "move" or "leave": what `numastor fix` does with irq (its reason: print_fix) */
static const char *fix_word(const struct ns_vecmove_view *view, const struct ns_irq *irq)
{
	struct ns_vecmove dec = {0};
	const char *w = "?";

	if (view && ns_vecmove_view_decide(view, irq, &dec) == 0)
		w = dec.move ? "move" : "leave";
	ns_vecmove_clear(&dec);
	return w;
}

static void print_queues(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f,
			 const struct ns_vecmove_view *view, const struct ns_disk *d)
{
	static const char *const head[] = {"",	       "HWQ",	    "CPUS", "NODE", "IRQ",
					   "AFFINITY", "EFFECTIVE", "MGD",  "FIX",  "FIRES"};
	size_t maxnode = 0, offending = 0;
	char nr[24] = "?", fires_head[64];
	struct table tb;

	for (size_t i = 0; i < sys->machine.nnodes; i++)
		if ((size_t)sys->machine.nodes[i].id + 1 > maxnode)
			maxnode = (size_t)sys->machine.nodes[i].id + 1;
	if (d->nr_requests >= 0)
		snprintf(nr, sizeof(nr), "%ld", d->nr_requests);
	say(p, 2, NULL, "queues: %zu hardware queue%s, rq_affinity %s, scheduler %s, nr_requests %s", d->nhctx,
	    d->nhctx == 1 ? "" : "s", d->rq_affinity >= 0 ? (const char *[]){"0", "1", "2"}[d->rq_affinity] : "?",
	    d->scheduler ? t(p, d->scheduler) : "?", nr);
	if (!d->nhctx)
		return;
	if (sys->interval_seconds > 0)
		say(p, 2, NULL,
		    "AFFINITY (smp_affinity_list; = the queue's CPUs), EFFECTIVE (effective_affinity_list), MGD "
		    "kernel-managed, FIX what numastor fix does (why: below), FIRES per second per node 0/1/... "
		    "over %.1f s",
		    sys->interval_seconds);
	else
		say(p, 2, NULL,
		    "AFFINITY (smp_affinity_list; = the queue's CPUs), EFFECTIVE (effective_affinity_list), MGD "
		    "kernel-managed, FIX what numastor fix does (why: below), FIRES per node 0/1/... since boot");
	snprintf(fires_head, sizeof(fires_head), "FIRES");
	table_init(&tb, head, sizeof(head) / sizeof(head[0]));
	for (size_t i = 0; i < d->nhctx; i++) {
		const struct ns_hctx *h = &d->hctx[i];
		char *hc = ns_text_cpus(&h->cpus), *hn = ns_text_cpus(&h->nodes), irqno[16] = "-", idx[64],
		     *fires = NULL;
		/* "=": the vector may fire on exactly the CPUs its queue serves (the usual case: the
		 * column stays narrow, and a row that differs stands out) */
		bool same = h->irq && h->irq->affinity.known && h->cpus.known &&
			    ns_cpuset_equal(&h->irq->affinity, &h->cpus);
		char *aff = !h->irq ? strdup("-") : same ? strdup("=") : ns_text_cpus(&h->irq->affinity);
		char *eff = h->irq ? ns_text_cpus(&h->irq->effective) : strdup("-");
		const char *managed = !h->irq ? "-" : h->irq->managed == 1 ? "yes" : h->irq->managed == 0 ? "no" : "?";
		size_t flen = 0;
		FILE *fs = open_memstream(&fires, &flen);
		int sev = h->irq ? irq_severity(p, f, d->name, h->irq->irq) : -1;

		if (h->irq)
			snprintf(irqno, sizeof(irqno), "%d", h->irq->irq);
		if (h->controller)
			snprintf(idx, sizeof(idx), "%s/%d", t(p, h->controller), h->index);
		else
			snprintf(idx, sizeof(idx), "%d", h->index);
		/* what irq-fires-remote judges (lib/read/rates.h): rates, else since fix, else since boot */
		enum ns_count_basis basis = h->irq ? ns_irq_count_basis(h->irq) : NS_COUNTS_NONE;
		unsigned long long total;
		const unsigned long long *counts = h->irq ? ns_irq_judged_counts(h->irq, &total) : NULL;
		if (fs) {
			if (counts && basis == NS_COUNTS_OVER_INTERVAL) {
				for (size_t n = 0; n < h->irq->nper_node && n < maxnode; n++)
					fprintf(fs, "%s%.1f", n ? "/" : "", (double)counts[n] / h->irq->interval);
			} else if (counts) {
				for (size_t n = 0; n < h->irq->nper_node && n < maxnode; n++)
					fprintf(fs, "%s%llu", n ? "/" : "", counts[n]);
			} else {
				fputc(h->irq ? '?' : '-', fs);
			}
			if (h->irq && h->irq->placed)
				fputs(basis == NS_COUNTS_SINCE_FIX ? " (placed by numastor fix; counted since)"
								   : " (placed by numastor fix)",
				      fs);
			fclose(fs);
		}
		offending += sev >= 0;
		const char *cells[] = {sev >= 0 ? "!" : "",
				       idx,
				       hc,
				       hn,
				       irqno,
				       aff,
				       eff,
				       managed,
				       h->irq ? fix_word(view, h->irq) : "-",
				       fires};
		table_row(&tb, sev >= 0 ? sev_color((enum ns_severity)sev) : NULL, cells);
		free(hc);
		free(hn);
		free(aff);
		free(eff);
		free(fires);
	}
	table_print(p, &tb, 2); /* at the page's edge, as its 8 columns need the room */
	table_free(&tb);
	if (offending)
		say(p, 2, NULL, "! a finding names this queue's IRQ (%zu of %zu)", offending, d->nhctx);
}

static void print_other_irqs(const struct pen *p, const struct ns_vecmove_view *view, const struct ns_disk *d)
{
	for (size_t k = 0; k < d->npaths; k++) {
		const struct ns_pci *pci = d->paths[k].pci;
		for (size_t i = 0; pci && i < pci->nirqs; i++) {
			const struct ns_irq *irq = &pci->irqs[i];
			char *aff, *eff, fired[64];
			if (irq->hw_queue >= 0 && irq->hw_queue < (int)d->nhctx)
				continue;
			bool paired = false;
			for (size_t q = 0; q < d->nhctx; q++)
				paired |= d->hctx[q].irq == irq;
			if (paired)
				continue;
			aff = ns_text_cpus(&irq->affinity);
			eff = ns_text_cpus(&irq->effective);
			if (irq->interval > 0 && irq->in_interval)
				snprintf(fired, sizeof(fired), "%.1f fired per second",
					 (double)irq->interval_total / irq->interval);
			else
				snprintf(fired, sizeof(fired), "%llu fired since boot", irq->total);
			say(p, 4, NULL,
			    "irq %d %s: affinity %s, effective %s, managed %s, user-settable %s, %s; fix: %s", irq->irq,
			    irq->name ? t(p, irq->name) : "?", aff, eff,
			    irq->managed == 1	? "yes"
			    : irq->managed == 0 ? "no"
						: "?",
			    irq->user_settable == 1   ? "yes"
			    : irq->user_settable == 0 ? "no"
						      : "?",
			    fired, fix_word(view, irq));
			free(aff);
			free(eff);
		}
	}
}

/*
 * What `numastor fix` does with d's vectors and why, one line per decision (the plan's own,
 * lib/model/vecmove.h): "fix moves irqs 70-73: ..." / "fix leaves irq 74 alone: ...".
 */
static void print_fix(const struct pen *p, const struct ns_vecmove_view *view, const struct ns_disk *d)
{
	struct ns_vecmove *dec;
	int *num, *grp;
	size_t n = 0;

	if (!view)
		return;
	for (size_t k = 0; k < d->npaths; k++)
		n += d->paths[k].pci ? d->paths[k].pci->nirqs : 0;
	if (!n)
		return;
	dec = calloc(n, sizeof(*dec));
	num = calloc(n, sizeof(*num));
	grp = calloc(n, sizeof(*grp));
	n = 0;
	for (size_t k = 0; dec && num && grp && k < d->npaths; k++)
		for (size_t i = 0; d->paths[k].pci && i < d->paths[k].pci->nirqs; i++) {
			num[n] = d->paths[k].pci->irqs[i].irq;
			if (ns_vecmove_view_decide(view, &d->paths[k].pci->irqs[i], &dec[n]) == 0 && dec[n].reason)
				n++;
			else
				ns_vecmove_clear(&dec[n]);
		}
	for (size_t i = 0; dec && num && grp && i < n; i++) {
		bool seen = false;
		size_t k = 0;
		char *list = NULL;
		size_t llen = 0;
		FILE *m;
		for (size_t j = 0; j < i && !seen; j++)
			seen = dec[j].move == dec[i].move && strcmp(dec[j].reason, dec[i].reason) == 0;
		if (seen)
			continue;
		for (size_t j = i; j < n; j++)
			if (dec[j].move == dec[i].move && strcmp(dec[j].reason, dec[i].reason) == 0)
				grp[k++] = num[j];
		m = open_memstream(&list, &llen);
		if (!m)
			continue;
		ns_irq_list_write(m, grp, k);
		fclose(m);
		say(p, 4, NULL, "fix %s %s%s: %s", dec[i].move ? "moves" : "leaves", list ? list : "?",
		    dec[i].move ? "" : " alone", t(p, dec[i].reason));
		free(list);
	}
	for (size_t i = 0; dec && i < n; i++)
		ns_vecmove_clear(&dec[i]);
	free(dec);
	free(num);
	free(grp);
}

static void print_list(const struct pen *p, const char *what, char **v, size_t n)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f;

	if (!n || !(f = open_memstream(&s, &len)))
		return;
	for (size_t i = 0; i < n; i++)
		fprintf(f, " %s", t(p, v[i]));
	fclose(f);
	say(p, 2, NULL, "%s:%s", what, s);
	free(s);
}

static void print_disk(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f,
		       const struct ns_vecmove_view *view, const struct ns_disk *d)
{
	char size[32], *name = strdup(t(p, d->name)), *model = NULL, *serial = NULL;
	struct dev_counts dc;
	int sev = device_severity(p, f, d->name, &dc);

	ns_text_bytes(size, sizeof(size), d->size_bytes);
	if (d->identity.model)
		model = strdup(t(p, d->identity.model));
	if (d->identity.serial)
		serial = strdup(t(p, d->identity.serial));
	fputc('\n', p->out);
	say(p, 0, NULL, "%s%s%s  %s  %s%s%s%s%s", col(p, sev >= 0 ? sev_color((enum ns_severity)sev) : C_BOLD),
	    name ? name : "?", col(p, C_RESET), ns_disk_kind_name(d->kind), size, model ? "  " : "", model ? model : "",
	    serial ? "  serial " : "", serial ? serial : "");
	free(name);
	free(model);
	free(serial);
	print_list(p, "partitions", d->partitions, d->npartitions);
	print_list(p, "sits on", d->slaves, d->nslaves);
	if (d->backing_file)
		say(p, 2, NULL, "backed by file: %s", t(p, d->backing_file));
	if (ns_disk_is_virtual(d)) {
		say(p, 2, NULL, "virtual device: locality follows what it sits on");
		for (size_t i = 0; i < d->nmembers; i++) {
			char node[32];
			if (d->members[i].node >= 0)
				snprintf(node, sizeof(node), "node %d", d->members[i].node);
			else
				snprintf(node, sizeof(node), "node unknown");
			say(p, 2, NULL, "member %s: %s", t(p, d->members[i].name), node);
		}
		if (d->nhctx) /* a blk-mq loop: its queue, as every queue is shown */
			print_queues(p, sys, f, view, d);
		return;
	}
	for (size_t i = 0; i < d->npaths; i++)
		print_pci(p, &d->paths[i]);
	if (d->node >= 0)
		say(p, 2, NULL, "node: %s %d", ns_node_source_name(d->node_source), d->node);
	else if (d->node_reason)
		say(p, 2, NULL, "node: %s (%s)", ns_node_source_name(d->node_source), t(p, d->node_reason));
	else
		say(p, 2, NULL, "node: %s", ns_node_source_name(d->node_source));
	print_queues(p, sys, f, view, d);
	print_other_irqs(p, view, d);
	print_fix(p, view, d);
	if (d->alloc.midlayer_basis && d->alloc.host_alloc_basis)
		say(p, 2, NULL, "allocations: per-device structures on %s; midlayer: %s; host (%s): %s",
		    d->alloc.device_basis ? t(p, d->alloc.device_basis) : "?", t(p, d->alloc.midlayer_basis),
		    d->alloc.host_alloc_module ? t(p, d->alloc.host_alloc_module) : "driver unknown",
		    t(p, d->alloc.host_alloc_basis));
	else if (d->alloc.midlayer_basis)
		say(p, 2, NULL, "allocations: per-device structures on %s; midlayer: %s",
		    d->alloc.device_basis ? t(p, d->alloc.device_basis) : "?", t(p, d->alloc.midlayer_basis));
	else
		say(p, 2, NULL, "allocations: per-device structures on %s",
		    d->alloc.device_basis ? t(p, d->alloc.device_basis) : "?");
}

void ns_print_text(FILE *out, const struct ns_system *sys, const struct ns_findings *f, const struct ns_text_opts *opts)
{
	struct esc_ring ring = {0};
	size_t width = opts->width > 0 ? (size_t)opts->width : 80; /* check.c: ns_text_width() */
	struct pen p = {.out = out, .color = opts->color, .verbose = opts->verbose, .ring = &ring};
	struct ns_findings_index bd;

	width = width < WIDTH_MIN ? WIDTH_MIN : width > WIDTH_MAX ? WIDTH_MAX : width;
	p.width = width;
	p.prose = width < PROSE_MAX ? width : PROSE_MAX;
	if (ns_findings_index_make(f, &bd) == 0)
		p.by_device = &bd;
	print_summary(&p, sys, f);
	print_machine(&p, sys);
	print_findings(&p, f);
	fputc('\n', out);
	char empty[64] = "";
	if (sys->nempty_hidden)
		snprintf(empty, sizeof(empty), "%s%zu empty not shown: -a", p.verbose ? "" : "; ", sys->nempty_hidden);
	if (p.verbose && !*empty)
		say(&p, 0, C_BOLD, "devices");
	else
		say(&p, 0, C_BOLD, "devices (%s%s)", p.verbose ? "" : "--verbose: each one's path, queues and IRQs",
		    empty);
	if (!sys->ndisks)
		say(&p, 2, NULL, "none");
	else if (p.verbose) {
		/* each vector's fix decision as the plan takes it (lib/model/vecmove.h); none when out of memory */
		struct ns_vecmove_view view;
		bool known = ns_plan_view(sys, f, &view) == 0;
		for (size_t i = 0; i < sys->ndisks; i++)
			print_disk(&p, sys, f, known ? &view : NULL, &sys->disks[i]);
		ns_vecmove_view_free(&view);
	} else
		print_device_table(&p, sys, f);
	if (sys->notes.n) {
		fprintf(out, "\n%snotes%s\n", col(&p, C_BOLD), col(&p, C_RESET));
		for (size_t i = 0; i < sys->notes.n; i++) {
			char *subject = strdup(t(&p, sys->notes.v[i].subject)),
			     *field = strdup(t(&p, sys->notes.v[i].field));
			say(&p, 2, NULL, "%s %s: %s", subject ? subject : "?", field ? field : "?",
			    t(&p, sys->notes.v[i].message));
			free(subject);
			free(field);
		}
	}
	for (unsigned i = 0; i < ESC_SLOTS; i++)
		free(ring.slot[i]);
	if (p.by_device)
		ns_findings_index_free(&bd);
}
