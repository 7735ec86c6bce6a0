/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check --format svg: the --map picture (cmd/map.h) as one SVG document. One <g class="node">
 * per NUMA node (id node-N, and node-none for the devices whose node is unknown), one
 * <g class="device"> per device inside it (id dev-NAME; classes forced / misplaced), one
 * <g class="fire"> per node its interrupts fire on, with data-node and data-share (count /
 * total, 4 decimals). What the machine said is escaped for the terminal (lib/base/escape.h), then
 * for XML.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "map.h"
#include "numastor.h"

#define SVG_WIDTH 860
#define ROW 18
#define MARGIN 10
#define BAR_X 120
#define BAR_W 400

/* s as XML character data or attribute value: the terminal escaping (no control bytes,
 * valid UTF-8), then &, <, >, " and ', and U+FFFE/U+FFFF (not XML characters) as U+FFFD. */
static void xml(FILE *out, const char *s)
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

/* Static text: what a forced node is, and the node the driver gave. */
static const char *forced_note(const struct ns_disk *d)
{
	static char buf[96];
	const struct ns_pci *pci = d->npaths ? d->paths[0].pci : NULL;

	if (pci && pci->numa_node >= 0)
		snprintf(buf, sizeof(buf), "node %d forced by the driver; its own is unknown", pci->numa_node);
	else
		snprintf(buf, sizeof(buf), "node forced by the driver; its own is unknown");
	return buf;
}

/* Rows a device takes: its own line, the forced note, its bars (or "no counts"), its findings. */
static int device_rows(const struct ns_map_device *md)
{
	return 1 + md->forced + (md->total ? (int)md->nfires : 1) + (md->nfindings > 0);
}

static int group_rows(const struct ns_map_group *g)
{
	int rows = 1 + (g->ndevices ? 0 : 1);
	for (size_t i = 0; i < g->ndevices; i++)
		rows += device_rows(g->devices[i]);
	return rows;
}

static void text_at(FILE *out, int x, int y, const char *cls)
{
	fprintf(out, "<text x=\"%d\" y=\"%d\"%s%s%s>", x, y, cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
}

static void svg_device(FILE *out, const struct ns_map_device *md, int *y)
{
	const struct ns_disk *d = md->disk;

	fprintf(out, "<g class=\"device%s%s\" id=\"dev-", md->forced ? " forced" : "",
		md->misplaced ? " misplaced" : "");
	xml(out, d->name);
	fputs("\" data-device=\"", out);
	xml(out, d->name);
	fputs("\">\n<title>", out);
	xml(out, d->name);
	fputs("</title>\n<desc>", out);
	fprintf(out, "%s", ns_disk_kind_name(d->kind));
	if (d->identity.model) {
		fputs(", model ", out);
		xml(out, d->identity.model);
	}
	fprintf(out, ", node %s", ns_node_source_name(d->node_source));
	if (d->node >= 0)
		fprintf(out, " %d", d->node);
	if (md->nfindings) {
		fputs(", findings:", out);
		for (size_t i = 0; i < md->nfindings; i++)
			fprintf(out, " %s", md->findings[i]);
	}
	fputs("</desc>\n", out);
	*y += ROW;
	text_at(out, MARGIN + 10, *y, "dev-name");
	xml(out, d->name);
	fprintf(out, "  %s", ns_disk_kind_name(d->kind));
	if (d->identity.model) {
		fputs("  ", out);
		xml(out, d->identity.model);
	}
	fputs("</text>", out);
	if (md->forced || md->misplaced) {
		text_at(out, SVG_WIDTH - 60, *y, "mark");
		fprintf(out, "%s%s</text>", md->forced ? "F " : "", md->misplaced ? "!" : "");
	}
	fputc('\n', out);
	if (md->forced) {
		*y += ROW;
		text_at(out, MARGIN + 30, *y, "note");
		fputs(forced_note(d), out);
		fputs("</text>\n", out);
	}
	if (!md->total) {
		*y += ROW;
		text_at(out, MARGIN + 30, *y, "note");
		fputs(ns_disk_is_virtual(d) ? "virtual: no interrupts of its own" : "interrupts: no counts", out);
		fputs("</text>\n", out);
	}
	for (size_t i = 0; md->total && i < md->nfires; i++) {
		const struct ns_map_fire *f = &md->fires[i];
		double share = (double)f->count / (double)md->total;
		*y += ROW;
		fprintf(out, "<g class=\"fire\" data-node=\"%d\" data-share=\"%.4f\">", f->node, share);
		fprintf(out, "<title>node %d: %llu of %llu interrupts</title>", f->node, f->count, md->total);
		text_at(out, MARGIN + 30, *y, NULL);
		fprintf(out, "node%d</text>", f->node);
		fprintf(out, "<rect class=\"track\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", BAR_X, *y - 12,
			BAR_W, 14);
		fprintf(out, "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\"/>", BAR_X, *y - 12,
			share * BAR_W, 14);
		text_at(out, BAR_X + BAR_W + 10, *y, NULL);
		fprintf(out, "%.0f%%</text></g>\n", share * 100);
	}
	if (md->nfindings) {
		*y += ROW;
		text_at(out, MARGIN + 30, *y, "findings");
		fputs("!", out);
		for (size_t i = 0; i < md->nfindings; i++)
			fprintf(out, " %s", md->findings[i]);
		fputs("</text>\n", out);
	}
	fputs("</g>\n", out);
}

/* The box a node's group is drawn in (after its title and desc: those come first). */
static void frame(FILE *out, int top, int height)
{
	fprintf(out, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", MARGIN, top,
		SVG_WIDTH - 2 * MARGIN, height);
}

static void svg_group(FILE *out, const struct ns_map_group *g, int *y)
{
	int top = *y + 4, height = group_rows(g) * ROW + 8;

	if (g->node)
		fprintf(out, "<g class=\"node\" id=\"node-%d\" data-node=\"%d\">\n", g->node->id, g->node->id);
	else
		fputs("<g class=\"node no-node\" id=\"node-none\">\n", out);
	*y += ROW;
	if (g->node) {
		char *cl = ns_text_cpus(&g->node->cpus);
		fprintf(out, "<title>node %d</title>\n<desc>CPUs ", g->node->id);
		xml(out, cl);
		fprintf(out, " (%u)", g->node->cpus.known ? ns_cpuset_count(&g->node->cpus) : 0);
		if (g->node->memory_bytes >= 0)
			fprintf(out, ", memory %lld bytes", g->node->memory_bytes);
		fputs("</desc>\n", out);
		frame(out, top, height);
		text_at(out, MARGIN + 5, *y + 4, "node-name");
		fprintf(out, "node %d: CPUs ", g->node->id);
		xml(out, cl);
		if (g->node->cpus.known)
			fprintf(out, " (%u)", ns_cpuset_count(&g->node->cpus));
		if (g->node->memory_bytes >= 0)
			fprintf(out, ", memory %.1f GiB", (double)g->node->memory_bytes / (1024.0 * 1024 * 1024));
		fputs("</text>\n", out);
		free(cl);
	} else {
		fputs("<title>no node</title>\n<desc>devices whose node is unknown</desc>\n", out);
		frame(out, top, height);
		text_at(out, MARGIN + 5, *y + 4, "node-name");
		fprintf(out, "no node: %zu device%s whose node is unknown</text>\n", g->ndevices,
			g->ndevices == 1 ? "" : "s");
	}
	if (!g->ndevices) {
		*y += ROW;
		text_at(out, MARGIN + 10, *y + 4, "note");
		fputs("(no devices)</text>\n", out);
	}
	*y += 4;
	for (size_t i = 0; i < g->ndevices; i++)
		svg_device(out, g->devices[i], y);
	*y = top + height + 6;
	fputs("</g>\n", out);
}

int ns_print_svg(FILE *out, const struct ns_system *sys, const struct ns_findings *f)
{
	struct ns_map map;
	int r = ns_map_build(sys, f, &map), height = 3 * ROW + 2 * MARGIN, y;

	if (r < 0)
		return r;
	for (size_t g = 0; g < map.ngroups; g++)
		if (map.groups[g].node || map.groups[g].ndevices)
			height += group_rows(&map.groups[g]) * ROW + 14;
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" xml:space=\"preserve\" width=\"%d\" "
		"height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"13\">\n",
		SVG_WIDTH, height, SVG_WIDTH, height);
	fputs("<title>numastor map of ", out);
	xml(out, ns_root_dir(sys->root));
	fputs("</title>\n", out);
	fprintf(out,
		"<desc>%zu NUMA node%s and %zu device%s: per node its CPUs and memory, its devices, and where "
		"each device's interrupts fire (share per node). F: node forced by the driver; !: findings "
		"on the device.</desc>\n",
		sys->machine.nnodes, sys->machine.nnodes == 1 ? "" : "s", sys->ndisks, sys->ndisks == 1 ? "" : "s");
	fputs("<style>\n"
	      "text { fill: #222; }\n"
	      ".frame { fill: #f4f6f8; stroke: #889; }\n"
	      ".node-name { font-weight: bold; }\n"
	      ".track { fill: #dde; }\n"
	      ".bar { fill: #3a7bd5; }\n"
	      ".forced .dev-name, .misplaced .dev-name, .mark, .findings { fill: #c0392b; }\n"
	      ".forced .bar, .misplaced .bar { fill: #e67e22; }\n"
	      ".note { fill: #666; }\n"
	      "</style>\n",
	      out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", SVG_WIDTH, height);
	y = MARGIN + ROW;
	fputs("<g class=\"legend\">", out);
	text_at(out, MARGIN, y, "node-name");
	fprintf(out, "numastor map: %zu NUMA node%s, %zu device%s</text>", sys->machine.nnodes,
		sys->machine.nnodes == 1 ? "" : "s", sys->ndisks, sys->ndisks == 1 ? "" : "s");
	y += ROW;
	text_at(out, MARGIN, y, "note");
	fputs("bars: where each device's interrupts fire, share per node</text>", out);
	y += ROW;
	text_at(out, MARGIN, y, "note");
	fputs("F: node forced by the driver   !: findings on the device</text></g>\n", out);
	y += 4;
	for (size_t g = 0; g < map.ngroups; g++)
		if (map.groups[g].node || map.groups[g].ndevices)
			svg_group(out, &map.groups[g], &y);
	fputs("</svg>\n", out);
	ns_map_free(&map);
	return 0;
}
