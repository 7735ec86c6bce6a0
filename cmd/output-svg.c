/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check --format svg: the --map picture (cmd/map.h) as one SVG document, nodes side by side
 * (up to four a row, wrapping), the devices whose node is unknown in a dashed panel of their own
 * below. One <g class="node"> per NUMA node (id node-N; node-none for the no-node group), one
 * <g class="device"> per device inside it (id dev-NAME; classes forced, misplaced and
 * sev-critical or sev-warning), a row each: its severity mark (critical a filled disc, warning a
 * hollow triangle), F when its node is forced, its name, one bar of where its interrupts fire
 * (a <rect class="share local|remote|unplaced"> per node and kind, data-node, data-share =
 * count / total with 4 decimals: local solid, remote hatched, unplaced dotted, so that they
 * differ in grey too) and its local share. Every text is cut to the room it has: nothing is
 * drawn outside the canvas. What the machine said is escaped for the terminal
 * (lib/base/escape.h), then for XML (svg-text.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "numastor.h"
#include "svg-text.h"

#define FONT 12
#define CHAR_W 7.3 /* a monospace advance at FONT px, a little generous */
#define MARGIN 12
#define GAP 12
#define COLS 4	      /* panels a row */
#define PANEL_W 456   /* 4 panels, 3 gaps and 2 margins: 1884 px */
#define PANEL_HEAD 46 /* the panel's two text lines */
#define ROW_H 20      /* a device */
#define HEADER_H 78   /* the title and two legend lines */
#define NAME_X 40     /* within the panel */
#define NAME_COLS 14
#define BAR_X 150
#define BAR_W 200
#define BAR_H 14
#define PCT_X 360
#define MIN_W 640 /* the title and the legend */

static const char *const where_class[] = {"local", "remote", "unplaced"};

/* The severity mark, centred on (cx, cy): critical a filled disc, warning a hollow triangle. */
static void sev_mark(FILE *out, enum ns_severity s, int cx, int cy)
{
	if (s == NS_SEV_CRITICAL)
		fprintf(out,
			"<g class=\"sev-mark sev-critical\"><circle cx=\"%d\" cy=\"%d\" r=\"7\"/>"
			"<text x=\"%d\" y=\"%d\" class=\"sev-glyph\">!</text></g>",
			cx, cy, cx - 3, cy + 4);
	else if (s == NS_SEV_WARNING)
		fprintf(out,
			"<g class=\"sev-mark sev-warning\"><polygon points=\"%d,%d %d,%d %d,%d\"/>"
			"<text x=\"%d\" y=\"%d\" class=\"sev-glyph\">!</text></g>",
			cx, cy - 7, cx + 8, cy + 6, cx - 8, cy + 6, cx - 3, cy + 5);
}

/* A swatch of a share's kind, for the legend. */
static void swatch(FILE *out, enum ns_map_where w, int x, int y)
{
	fprintf(out, "<rect class=\"swatch %s\" x=\"%d\" y=\"%d\" width=\"18\" height=\"%d\"/>", where_class[w], x,
		y - 11, BAR_H - 2);
}

static void svg_desc(FILE *out, const struct ns_map_device *md)
{
	const struct ns_disk *d = md->disk;

	fputs("<title>", out);
	svg_xml(out, d->name);
	fputs("</title>\n<desc>", out);
	fprintf(out, "%s", ns_disk_kind_name(d->kind));
	if (d->identity.model) {
		fputs(", model ", out);
		svg_xml(out, d->identity.model);
	}
	fprintf(out, ", node %s", ns_node_source_name(d->node_source));
	if (d->node >= 0)
		fprintf(out, " %d", d->node);
	if (md->worst >= NS_SEV_WARNING)
		fprintf(out, ", worst %s", ns_severity_name(md->worst));
	if (md->nfindings) {
		fputs(", findings:", out);
		for (size_t i = 0; i < md->nfindings; i++)
			fprintf(out, " %s", md->findings[i]);
	}
	fprintf(out, ", %llu of %llu interrupts local", md->local, md->total);
	fputs("</desc>\n", out);
}

/* The bar: local shares first, then remote, then unplaced, each by node. */
static void svg_bar(FILE *out, const struct ns_map_device *md, int x, int y)
{
	double at = x;

	fprintf(out, "<rect class=\"track\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", x, y, BAR_W, BAR_H);
	for (int w = NS_MAP_LOCAL; w <= NS_MAP_UNPLACED; w++)
		for (size_t i = 0; i < md->nshares; i++) {
			const struct ns_map_share *s = &md->shares[i];
			double share = (double)s->count / (double)md->total, len = share * BAR_W;
			if (s->where != (enum ns_map_where)w)
				continue;
			fprintf(out,
				"<rect class=\"share %s\" data-node=\"%d\" data-share=\"%.4f\" x=\"%.2f\" y=\"%d\" "
				"width=\"%.2f\" height=\"%d\"><title>node %d, %s: %d%% (%llu of %llu "
				"interrupts)</title></rect>",
				where_class[w], s->node, share, at, y, len, BAR_H, s->node, where_class[w],
				ns_map_percent(md, s->count), s->count, md->total);
			if (len >= 26) {
				if (w != NS_MAP_LOCAL) /* legible on the hatch and the dots */
					fprintf(out,
						"<rect class=\"label-bg\" x=\"%.2f\" y=\"%d\" width=\"15\" "
						"height=\"%d\"/>",
						at + 2, y + 2, BAR_H - 4);
				svg_text_at(out, at + 3, y + BAR_H - 3,
					    w == NS_MAP_LOCAL ? "seg-label on-dark" : "seg-label");
				fprintf(out, "n%d</text>", s->node);
			}
			at += len;
		}
}

static void svg_device(FILE *out, const struct ns_map_device *md, int x, int y)
{
	const struct ns_disk *d = md->disk;
	const char *sev = md->worst == NS_SEV_CRITICAL	? " sev-critical"
			  : md->worst == NS_SEV_WARNING ? " sev-warning"
							: "";

	fprintf(out, "<g class=\"device%s%s%s\" id=\"dev-", md->forced ? " forced" : "",
		md->worst >= NS_SEV_WARNING ? " misplaced" : "", sev);
	svg_xml(out, d->name);
	fputs("\" data-device=\"", out);
	svg_xml(out, d->name);
	fprintf(out, "\" data-local=\"%.4f\">\n", md->total ? (double)md->local / (double)md->total : 0.0);
	svg_desc(out, md);
	sev_mark(out, md->worst, x + 13, y + ROW_H / 2);
	if (md->forced) {
		svg_text_at(out, x + 25, y + 14, "forced-mark");
		fputs("F</text>", out);
	}
	svg_text_at(out, x + NAME_X, y + 14, "dev-name");
	svg_xml_fit(out, d->name, NAME_COLS);
	fputs("</text>", out);
	if (md->total) {
		svg_bar(out, md, x + BAR_X, y + 3);
		svg_text_at(out, x + PCT_X, y + 14, md->local == md->total ? "pct all-local" : "pct");
		fprintf(out, "%d%% local</text>", ns_map_percent(md, md->local));
	} else {
		svg_text_at(out, x + BAR_X, y + 14, "note");
		fputs(ns_disk_is_virtual(d) ? "virtual: no interrupts" : "interrupts: no counts", out);
		fputs("</text>", out);
	}
	fputs("\n</g>\n", out);
}

static int panel_height(const struct ns_map_group *g)
{
	return PANEL_HEAD + (int)(g->ndevices ? g->ndevices : 1) * ROW_H + 8;
}

static void svg_group(FILE *out, const struct ns_map_group *g, int x, int y)
{
	int h = panel_height(g);
	char mem[32], line[160];

	if (g->node) {
		fprintf(out, "<g class=\"node\" id=\"node-%d\" data-node=\"%d\">\n", g->node->id, g->node->id);
		fprintf(out, "<title>node %d</title>\n<desc>CPUs ", g->node->id);
		svg_xml(out, g->cpus);
		fprintf(out, " (%u)", g->ncpus);
		if (g->node->memory_bytes >= 0)
			fprintf(out, ", memory %lld bytes", g->node->memory_bytes);
		fputs("</desc>\n", out);
		fprintf(out, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", x, y, PANEL_W,
			h);
		svg_text_at(out, x + 8, y + 18, "node-name");
		fprintf(out, "node %d</text>", g->node->id);
		ns_text_bytes(mem, sizeof(mem), g->node->memory_bytes);
		snprintf(line, sizeof(line), "%u CPUs, %s, %zu device%s", g->ncpus, mem, g->ndevices,
			 g->ndevices == 1 ? "" : "s");
		svg_text_at(out, x + 80, y + 18, "note");
		svg_xml_fit(out, line, (int)((PANEL_W - 88) / CHAR_W));
		fputs("</text>\n", out);
		svg_text_at(out, x + 8, y + 36, "cpus");
		fputs("CPUs ", out);
		svg_xml_fit(out, g->cpus, (int)((PANEL_W - 16) / CHAR_W) - 5);
		fputs("</text>\n", out);
	} else {
		fputs("<g class=\"node no-node\" id=\"node-none\">\n<title>no node</title>\n<desc>devices whose node "
		      "is "
		      "unknown</desc>\n",
		      out);
		fprintf(out, "<rect class=\"frame no-node\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", x, y,
			PANEL_W, h);
		svg_text_at(out, x + 8, y + 18, "node-name");
		fputs("no node</text>", out);
		snprintf(line, sizeof(line), "%zu device%s whose node is unknown", g->ndevices,
			 g->ndevices == 1 ? "" : "s");
		svg_text_at(out, x + 8, y + 36, "note");
		svg_xml_fit(out, line, (int)((PANEL_W - 16) / CHAR_W));
		fputs("</text>\n", out);
	}
	if (!g->ndevices) {
		svg_text_at(out, x + NAME_X, y + PANEL_HEAD + 14, "note");
		fputs("(no devices)</text>\n", out);
	}
	for (size_t i = 0; i < g->ndevices; i++)
		svg_device(out, g->devices[i], x + 4, y + PANEL_HEAD + (int)i * ROW_H);
	fputs("</g>\n", out);
}

/* The panels' places: nodes COLS a row, the no-node group on a row of its own; *w and *h the
 * canvas. x and y per group (ngroups entries). */
static void layout(const struct ns_map *map, int *x, int *y, int *w, int *h)
{
	size_t nodes = 0, col = 0;
	int top = HEADER_H, rowh = 0, cols;

	for (size_t g = 0; g < map->ngroups; g++)
		nodes += map->groups[g].node != NULL;
	cols = nodes < COLS ? (int)(nodes ? nodes : 1) : COLS;
	*w = 2 * MARGIN + cols * PANEL_W + (cols - 1) * GAP;
	if (*w < MIN_W)
		*w = MIN_W;
	for (size_t g = 0; g < map->ngroups; g++) {
		const struct ns_map_group *grp = &map->groups[g];
		if (!ns_map_group_drawn(grp))
			continue;
		if (col == (size_t)cols || (!grp->node && col)) { /* a new row */
			top += rowh + GAP;
			rowh = 0;
			col = 0;
		}
		x[g] = MARGIN + (int)col * (PANEL_W + GAP);
		y[g] = top;
		if (panel_height(grp) > rowh)
			rowh = panel_height(grp);
		col++;
	}
	*h = top + rowh + 2 * MARGIN;
}

static void legend(FILE *out, const struct ns_system *sys)
{
	int y = MARGIN + 14;

	fputs("<g class=\"legend\">", out);
	svg_text_at(out, MARGIN, y, "title");
	fprintf(out, "numastor map: %zu NUMA node%s, %zu device%s: is each device's work local?</text>",
		sys->machine.nnodes, sys->machine.nnodes == 1 ? "" : "s", sys->ndisks, sys->ndisks == 1 ? "" : "s");
	y += 22;
	swatch(out, NS_MAP_LOCAL, MARGIN, y);
	svg_text_at(out, MARGIN + 22, y, "note");
	fputs("local", out);
	fputs("</text>", out);
	swatch(out, NS_MAP_REMOTE, MARGIN + 70, y);
	svg_text_at(out, MARGIN + 92, y, "note");
	fputs("remote", out);
	fputs("</text>", out);
	swatch(out, NS_MAP_UNPLACED, MARGIN + 148, y);
	svg_text_at(out, MARGIN + 170, y, "note");
	fputs("unplaced (no node to call local)</text>", out);
	y += 20;
	sev_mark(out, NS_SEV_CRITICAL, MARGIN + 8, y - 4);
	svg_text_at(out, MARGIN + 20, y, "note");
	fputs("critical</text>", out);
	sev_mark(out, NS_SEV_WARNING, MARGIN + 98, y - 4);
	svg_text_at(out, MARGIN + 110, y, "note");
	fputs("warning</text>", out);
	svg_text_at(out, MARGIN + 182, y, "forced-mark");
	fputs("F</text>", out);
	svg_text_at(out, MARGIN + 194, y, "note");
	fputs("node forced by the driver</text></g>\n", out);
}

int ns_print_svg(FILE *out, const struct ns_system *sys, const struct ns_findings *f)
{
	struct ns_map map;
	int r = ns_map_build(sys, f, &map), w, h, *x, *y;

	if (r < 0)
		return r;
	x = calloc(map.ngroups + 1, sizeof(*x));
	y = calloc(map.ngroups + 1, sizeof(*y));
	if (!x || !y) {
		free(x);
		free(y);
		ns_map_free(&map);
		return -ENOMEM;
	}
	layout(&map, x, y, &w, &h);
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" xml:space=\"preserve\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"%d\">\n",
		w, h, w, h, FONT);
	fputs("<title>numastor map of ", out);
	svg_xml(out, ns_root_dir(sys->root));
	fputs("</title>\n", out);
	fprintf(out,
		"<desc>%zu NUMA node%s and %zu device%s: per node its CPUs and memory and its devices; per "
		"device where its interrupts fire, a share per node: local (a node of the CPUs its queue "
		"serves, or the device's node) solid, remote hatched, unplaced (no node to call local) "
		"dotted; a filled disc marks a critical finding, a hollow triangle a warning, F a node "
		"forced by the driver.</desc>\n",
		sys->machine.nnodes, sys->machine.nnodes == 1 ? "" : "s", sys->ndisks, sys->ndisks == 1 ? "" : "s");
	fputs("<defs>\n"
	      "<pattern id=\"hatch-remote\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
	      "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fde0cc\"/>"
	      "<rect width=\"3\" height=\"6\" fill=\"#d9480f\"/></pattern>\n"
	      "<pattern id=\"dots-unplaced\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\">"
	      "<rect width=\"5\" height=\"5\" fill=\"#eeeeee\"/><circle cx=\"2.5\" cy=\"2.5\" r=\"1.2\" "
	      "fill=\"#777777\"/></pattern>\n"
	      "</defs>\n"
	      "<style>\n"
	      "text { fill: #222; }\n"
	      ".frame { fill: #f6f7f9; stroke: #8a8f99; }\n"
	      ".frame.no-node { fill: #fffaf0; stroke-dasharray: 6 4; }\n"
	      ".node-name, .title { font-weight: bold; }\n"
	      ".title { font-size: 14px; }\n"
	      ".note, .cpus { fill: #555; }\n"
	      ".track { fill: #ffffff; stroke: #8a8f99; }\n"
	      ".local { fill: #1c5fa8; stroke: #fff; stroke-width: 0.6; }\n"
	      ".label-bg { fill: #fff; }\n"
	      ".remote { fill: url(#hatch-remote); stroke: #d9480f; stroke-width: 0.5; }\n"
	      ".unplaced { fill: url(#dots-unplaced); stroke: #777; stroke-width: 0.5; }\n"
	      ".seg-label { font-size: 10px; fill: #222; }\n"
	      ".seg-label.on-dark { fill: #fff; }\n"
	      ".sev-critical circle { fill: #b3001b; }\n"
	      ".sev-critical .sev-glyph { fill: #fff; font-weight: bold; }\n"
	      ".sev-warning polygon { fill: #fff3c4; stroke: #a66a00; stroke-width: 1.5; }\n"
	      ".sev-warning .sev-glyph { fill: #6b4500; font-weight: bold; }\n"
	      ".forced-mark { font-weight: bold; fill: #7a3e9d; }\n"
	      ".sev-critical .dev-name { fill: #b3001b; font-weight: bold; }\n"
	      ".pct { fill: #b3001b; }\n"
	      ".pct.all-local { fill: #1c5fa8; }\n"
	      "</style>\n",
	      out);
	fprintf(out, "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", w, h);
	legend(out, sys);
	for (size_t g = 0; g < map.ngroups; g++)
		if (ns_map_group_drawn(&map.groups[g]))
			svg_group(out, &map.groups[g], x[g], y[g]);
	fputs("</svg>\n", out);
	free(x);
	free(y);
	ns_map_free(&map);
	return 0;
}
