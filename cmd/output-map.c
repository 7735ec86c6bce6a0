/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check --map as text: per node a line with its CPUs and memory, then a line per device: its
 * marks (severity, forced), one bar of where its interrupts fire (local, remote, unplaced cells),
 * its local share and the remote and unplaced shares by node. Every line is cut to the width
 * (ns_text_width), counted in display columns.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "base/escape.h"
#include "map.h"
#include "numastor.h"

/* ---- text ---- */

struct canvas {
	FILE *out;
	int width;
	bool utf8;
};

/* Display columns of the code point (1 where the locale cannot tell). */
static int cp_cols(const struct canvas *c, uint32_t cp)
{
	int w = c->utf8 ? wcwidth((wchar_t)cp) : 1;
	return w < 0 ? 1 : w;
}

/* s (already escaped: valid UTF-8, no control bytes) cut to width display columns, with an
 * ellipsis where it was cut; free it. */
static char *fit(const struct canvas *c, const char *s, int width)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), used = 0, keep = 0;
	const char *ell = c->utf8 ? "\u2026" : "...";
	int cols = 0, ell_cols = c->utf8 ? 1 : 3;
	char *r;

	while (used < len) {
		uint32_t cp;
		int n = ns_utf8_next(p + used, len - used, &cp);
		int w = n > 0 ? cp_cols(c, cp) : 1;
		if (n < 0)
			n = -n;
		if (cols + w > width) {
			if (asprintf(&r, "%.*s%s", (int)keep, s, width >= ell_cols ? ell : "") < 0)
				return NULL;
			return r;
		}
		cols += w;
		used += (size_t)n;
		if (cols <= width - ell_cols)
			keep = used;
	}
	return strdup(s);
}

static void put_line(const struct canvas *c, const char *s)
{
	char *cut = fit(c, s, c->width);

	fputs(cut ? cut : "?", c->out);
	fputc('\n', c->out);
	free(cut);
}

static void line(const struct canvas *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(const struct canvas *c, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	put_line(c, s ? s : "?");
	free(s);
}

/* What the machine said, for the terminal (lib/base/escape.h); free it. */
static char *esc(const char *s)
{
	char *e = ns_escape_text(s ? s : "?");
	return e ? e : strdup("?");
}

/* The node line: "node 0: CPUs 0-27 x2 SMT (56), 384.0 GiB, 8 devices". */
static void node_line(const struct canvas *c, const struct ns_map_group *g)
{
	char mem[32], count[16] = "?", devs[32];

	ns_text_bytes(mem, sizeof(mem), g->node->memory_bytes);
	if (g->node->cpus.known)
		snprintf(count, sizeof(count), "%u", g->ncpus);
	if (g->ndevices)
		snprintf(devs, sizeof(devs), "%zu device%s", g->ndevices, g->ndevices == 1 ? "" : "s");
	else
		snprintf(devs, sizeof(devs), "no devices");
	line(c, "node %d: CPUs %s (%s), %s, %s", g->node->id, g->cpus ? g->cpus : "?", count, mem, devs);
}

static const char *cell_of(const struct canvas *c, enum ns_map_where w)
{
	static const char *const utf8[] = {"\u2588", "\u2592", "\u2591"}, *const ascii[] = {"#", "x", "?"};
	return c->utf8 ? utf8[w] : ascii[w];
}

/* The bar: cells out of the device's total, local cells first, then remote, then unplaced. */
static char *share_bar(const struct canvas *c, const struct ns_map_device *md, int cells)
{
	char *bar = malloc((size_t)cells * 3 + 1), *p = bar;
	unsigned long long cum = 0;
	int done = 0;

	if (!bar)
		return NULL;
	for (int w = NS_MAP_LOCAL; w <= NS_MAP_UNPLACED; w++) {
		for (size_t i = 0; i < md->nshares; i++)
			if (md->shares[i].where == (enum ns_map_where)w)
				cum += md->shares[i].count;
		int upto = (int)((cum * 2 * (unsigned long long)cells + md->total) / (md->total * 2));
		for (; done < upto; done++)
			p = stpcpy(p, cell_of(c, (enum ns_map_where)w));
	}
	*p = '\0';
	return bar;
}

/* "  remote n1 40% n3 10%": the shares of one kind, by node; "" when none. */
static void shares_text(char *buf, size_t n, const struct ns_map_device *md, enum ns_map_where w, const char *label)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < md->nshares && len < n; i++) {
		const struct ns_map_share *s = &md->shares[i];
		if (s->where != w)
			continue;
		int pct = ns_map_percent(md, s->count);
		/* a share that rounds to 0 is still there */
		len += (size_t)snprintf(buf + len, n - len, "%s n%d %s%d%%", len ? "" : label, s->node, pct ? "" : "<",
					pct ? pct : 1);
	}
}

static void device_line(const struct canvas *c, const struct ns_map_device *md, int namew, int cells)
{
	const struct ns_disk *d = md->disk;
	char *name = esc(d->name), *cut = fit(c, name, namew), *bar = NULL;
	char remote[256], unplaced[256];
	const char *sev = md->worst == NS_SEV_CRITICAL ? "!!" : md->worst == NS_SEV_WARNING ? "!" : "";
	int pad = namew;

	/* the name padded to namew display columns: the marks and bars line up */
	for (const unsigned char *p = (const unsigned char *)(cut ? cut : ""); *p;) {
		uint32_t cp;
		int n = ns_utf8_next(p, strlen((const char *)p), &cp);
		pad -= n > 0 ? cp_cols(c, cp) : 1;
		p += n > 0 ? n : (n < 0 ? -n : 1);
	}
	if (pad < 0)
		pad = 0;
	if (md->total && (bar = share_bar(c, md, cells))) {
		shares_text(remote, sizeof(remote), md, NS_MAP_REMOTE, "  remote");
		shares_text(unplaced, sizeof(unplaced), md, NS_MAP_UNPLACED, "  unplaced");
		line(c, "  %s%*s  %-2s %s %s %3d%% local%s%s", cut ? cut : "?", pad, "", sev, md->forced ? "F" : " ",
		     bar, ns_map_percent(md, md->local), remote, unplaced);
	} else {
		line(c, "  %s%*s  %-2s %s %s", cut ? cut : "?", pad, "", sev, md->forced ? "F" : " ",
		     ns_disk_is_virtual(d) ? "virtual: no interrupts of its own" : "interrupts: no counts");
	}
	free(bar);
	free(cut);
	free(name);
}

/* The widest device name, in display columns, at most 14. */
static int name_width(const struct canvas *c, const struct ns_map *map)
{
	int w = 4;

	for (size_t i = 0; i < map->ndevices; i++) {
		char *name = esc(map->devices[i].disk->name);
		int cols = 0;
		for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p;) {
			uint32_t cp;
			int n = ns_utf8_next(p, strlen((const char *)p), &cp);
			cols += n > 0 ? cp_cols(c, cp) : 1;
			p += n > 0 ? n : (n < 0 ? -n : 1);
		}
		if (cols > w)
			w = cols;
		free(name);
	}
	return w < 14 ? w : 14;
}

void ns_print_map(FILE *out, const struct ns_system *sys, const struct ns_findings *f, int width)
{
	const char *cs;
	struct canvas c = {.out = out, .width = width};
	struct ns_map map;
	int namew, cells;

	cs = nl_langinfo(CODESET); /* main() took LC_CTYPE from the environment */
	c.utf8 = cs && strcmp(cs, "UTF-8") == 0;
	if (ns_map_build(sys, f, &map) < 0) {
		line(&c, "numastor map: out of memory");
		return;
	}
	/* "  NAME  !! F " then the bar, then " 100% local" and the shares elsewhere */
	namew = name_width(&c, &map);
	cells = width - (2 + namew + 7) - 11 - 18;
	cells = cells > 20 ? 20 : cells < 5 ? 5 : cells;
	{
		char *on = ns_text_cpus(&sys->machine.online);
		line(&c, "numastor map: %zu NUMA node%s, CPUs %s online, %zu device%s", sys->machine.nnodes,
		     sys->machine.nnodes == 1 ? "" : "s", on, sys->ndisks, sys->ndisks == 1 ? "" : "s");
		free(on);
	}
	line(&c, "  bar: where its interrupts fire  %s local  %s remote  %s unplaced", cell_of(&c, NS_MAP_LOCAL),
	     cell_of(&c, NS_MAP_REMOTE), cell_of(&c, NS_MAP_UNPLACED));
	line(&c, "  !! critical  ! warning  F node forced by the driver");
	for (size_t g = 0; g < map.ngroups; g++) {
		const struct ns_map_group *grp = &map.groups[g];
		if (!ns_map_group_drawn(grp))
			continue;
		fputc('\n', out);
		if (grp->node)
			node_line(&c, grp);
		else
			line(&c, "no node: %zu device%s whose node is unknown", grp->ndevices,
			     grp->ndevices == 1 ? "" : "s");
		for (size_t i = 0; i < grp->ndevices; i++)
			device_line(&c, grp->devices[i], namew, cells);
	}
	ns_map_free(&map);
}
