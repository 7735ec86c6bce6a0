/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check --map: the picture (cmd/map.h) built from the model, and its text rendering: per node
 * its CPUs and memory, then its devices, each with a bar per node its interrupts fire on.
 * Every line is cut to the width (ns_text_width), counted in display columns.
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
#include "read/rates.h"

static void map_device_free(struct ns_map_device *d)
{
	free(d->findings);
	free(d->fires);
}

void ns_map_free(struct ns_map *map)
{
	for (size_t i = 0; i < map->ndevices; i++)
		map_device_free(&map->devices[i]);
	for (size_t i = 0; i < map->ngroups; i++)
		free(map->groups[i].devices);
	free(map->devices);
	free(map->groups);
	map->devices = NULL;
	map->groups = NULL;
	map->ndevices = map->ngroups = 0;
}

/* The warning and critical findings that name the device, each id once. */
static int map_findings(const struct ns_findings_index *ix, struct ns_map_device *md)
{
	size_t n;
	const size_t *v = ns_findings_index_of(ix, md->disk->name, &n);

	md->findings = calloc(n + 1, sizeof(*md->findings));
	if (!md->findings)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct ns_finding *x = &ix->f->v[v[i]];
		bool seen = false;
		if (x->severity < NS_SEV_WARNING)
			continue;
		for (size_t k = 0; k < md->nfindings; k++) /* the ids: the rules', a few dozen at most */
			seen |= strcmp(md->findings[k], x->id) == 0;
		if (!seen)
			md->findings[md->nfindings++] = x->id;
	}
	md->misplaced = md->nfindings > 0;
	return 0;
}

/*
 * Where the interrupts of the PCI functions behind the device fired, per node: the counts the
 * fire-location rule judges (over --interval, since fix, else since boot). A function on two
 * paths is counted once.
 */
static int map_fires(const struct ns_disk *d, struct ns_map_device *md)
{
	unsigned long long *acc = NULL;
	size_t nacc = 0;

	for (size_t p = 0; p < d->npaths; p++) {
		const struct ns_pci *pci = d->paths[p].pci;
		bool dup = false;
		for (size_t q = 0; q < p; q++)
			dup |= d->paths[q].pci == pci;
		for (size_t i = 0; pci && !dup && i < pci->nirqs; i++) {
			const struct ns_irq *irq = &pci->irqs[i];
			unsigned long long total;
			const unsigned long long *c = ns_irq_judged_counts(irq, &total);
			if (!c)
				continue;
			md->counted = true;
			if (irq->nper_node > nacc) {
				unsigned long long *grown = realloc(acc, irq->nper_node * sizeof(*acc));
				if (!grown) {
					free(acc);
					return -ENOMEM;
				}
				memset(grown + nacc, 0, (irq->nper_node - nacc) * sizeof(*acc));
				acc = grown;
				nacc = irq->nper_node;
			}
			for (size_t n = 0; n < irq->nper_node; n++)
				acc[n] += c[n];
		}
	}
	md->fires = calloc(nacc + 1, sizeof(*md->fires));
	if (!md->fires) {
		free(acc);
		return -ENOMEM;
	}
	for (size_t n = 0; n < nacc; n++) {
		if (!acc[n])
			continue;
		md->fires[md->nfires++] = (struct ns_map_fire){.node = (int)n, .count = acc[n]};
		md->total += acc[n];
	}
	free(acc);
	return 0;
}

/* The group of d: its node's, else the no-node group (the last). */
static size_t group_of(const struct ns_machine *m, const struct ns_disk *d)
{
	for (size_t g = 0; d->node >= 0 && g < m->nnodes; g++)
		if (m->nodes[g].id == d->node)
			return g;
	return m->nnodes;
}

int ns_map_build(const struct ns_system *sys, const struct ns_findings *f, struct ns_map *map)
{
	const struct ns_machine *m = &sys->machine;
	struct ns_findings_index ix = {0};
	size_t *of = NULL; /* each device's group */
	int r = -ENOMEM;

	*map = (struct ns_map){0};
	map->devices = calloc(sys->ndisks + 1, sizeof(*map->devices));
	map->groups = calloc(m->nnodes + 1, sizeof(*map->groups));
	of = calloc(sys->ndisks + 1, sizeof(*of));
	if (!map->devices || !map->groups || !of || ns_findings_index_make(f, &ix) < 0)
		goto fail;
	map->ngroups = m->nnodes + 1;
	/* each group's list sized to its devices: not every node's to all of them */
	for (size_t i = 0; i < sys->ndisks; i++)
		map->groups[of[i] = group_of(m, &sys->disks[i])].ndevices++;
	for (size_t g = 0; g < map->ngroups; g++) {
		map->groups[g].node = g < m->nnodes ? &m->nodes[g] : NULL;
		map->groups[g].devices = calloc(map->groups[g].ndevices + 1, sizeof(*map->groups[g].devices));
		map->groups[g].ndevices = 0;
		if (!map->groups[g].devices)
			goto fail;
	}
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		struct ns_map_device *md = &map->devices[map->ndevices++];
		struct ns_map_group *grp = &map->groups[of[i]];

		md->disk = d;
		md->forced = d->node_source == NS_NODE_SRC_FORCED;
		if ((r = map_findings(&ix, md)) < 0 || (r = map_fires(d, md)) < 0)
			goto fail;
		grp->devices[grp->ndevices++] = md;
	}
	free(of);
	ns_findings_index_free(&ix);
	return 0;
fail:
	free(of);
	ns_findings_index_free(&ix);
	ns_map_free(map);
	return r;
}

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

/* The node line: "node 0: CPUs 0-31 (32), memory 128.0 GiB". */
static void node_line(const struct canvas *c, const struct ns_node *n)
{
	char *cl = ns_text_cpus(&n->cpus), mem[32], count[16] = "?";

	ns_text_bytes(mem, sizeof(mem), n->memory_bytes);
	if (n->cpus.known)
		snprintf(count, sizeof(count), "%u", ns_cpuset_count(&n->cpus));
	line(c, "node %d: CPUs %s (%s), memory %s", n->id, cl, count, mem);
	free(cl);
}

/* The share of a fire as a whole percentage, and as bar cells out of cells. */
static int share_percent(const struct ns_map_device *md, const struct ns_map_fire *fire)
{
	return (int)((fire->count * 200 + md->total) / (md->total * 2));
}

static void fire_bar(const struct canvas *c, const struct ns_map_device *md, const struct ns_map_fire *fire, int cells)
{
	const char *full = c->utf8 ? "\u2588" : "#", *empty = c->utf8 ? "\u2591" : ".";
	int filled = (int)((fire->count * 2 * (unsigned long long)cells + md->total) / (md->total * 2));
	char label[16], *bar = malloc((size_t)cells * strlen(full) + 1), *p = bar;

	if (!bar)
		return;
	for (int i = 0; i < cells; i++)
		p = stpcpy(p, i < filled ? full : empty);
	snprintf(label, sizeof(label), "node%d", fire->node);
	line(c, "    %-8s %s %3d%%", label, bar, share_percent(md, fire));
	free(bar);
}

/* The findings' ids after "! ", wrapped at the width. */
static void findings_lines(const struct canvas *c, const struct ns_map_device *md)
{
	char buf[512];
	size_t len = 0;

	for (size_t i = 0; i < md->nfindings; i++) {
		const char *id = md->findings[i];
		if (len && (int)(len + strlen(id) + 2) > c->width) {
			line(c, "%s", buf);
			len = 0;
		}
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s%s", len ? "" : "    ! ", id,
					i + 1 < md->nfindings ? ", " : "");
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
	}
	if (len)
		line(c, "%s", buf);
}

static void device_lines(const struct canvas *c, const struct ns_map_device *md, int cells)
{
	const struct ns_disk *d = md->disk;
	char *name = esc(d->name), *model = d->identity.model ? esc(d->identity.model) : NULL;
	char marks[8] = "";

	if (md->forced)
		strcat(marks, "  F");
	if (md->misplaced)
		strcat(marks, md->forced ? " !" : "  !");
	/* the marks stay: the model gives way to them */
	char *head, *cut = NULL;
	if (asprintf(&head, "  %s  %s%s%s", name, ns_disk_kind_name(d->kind), model ? "  " : "", model ? model : "") >=
	    0) {
		cut = fit(c, head, c->width - (int)strlen(marks));
		free(head);
	}
	line(c, "%s%s", cut ? cut : "?", marks);
	free(cut);
	if (md->forced) {
		const struct ns_pci *pci = d->npaths ? d->paths[0].pci : NULL;
		if (pci && pci->numa_node >= 0)
			line(c, "    node %d forced by the driver; its own is unknown", pci->numa_node);
		else
			line(c, "    node forced by the driver; its own is unknown");
	}
	if (ns_disk_is_virtual(d))
		line(c, "    virtual: no interrupts of its own");
	else if (!md->counted || !md->total)
		line(c, "    interrupts: no counts");
	for (size_t i = 0; md->total && i < md->nfires; i++)
		fire_bar(c, md, &md->fires[i], cells);
	findings_lines(c, md);
	free(name);
	free(model);
}

void ns_print_map(FILE *out, const struct ns_system *sys, const struct ns_findings *f, int width)
{
	const char *cs;
	struct canvas c = {.out = out, .width = width};
	struct ns_map map;
	int cells = width - 25 < 40 ? width - 25 : 40;

	cs = nl_langinfo(CODESET); /* main() took LC_CTYPE from the environment */
	c.utf8 = cs && strcmp(cs, "UTF-8") == 0;
	if (ns_map_build(sys, f, &map) < 0) {
		line(&c, "numastor map: out of memory");
		return;
	}
	{
		char *on = ns_text_cpus(&sys->machine.online);
		line(&c, "numastor map: %zu NUMA node%s, CPUs %s online, %zu device%s", sys->machine.nnodes,
		     sys->machine.nnodes == 1 ? "" : "s", on, sys->ndisks, sys->ndisks == 1 ? "" : "s");
		free(on);
	}
	line(&c, "  bars: share of its interrupts per node");
	line(&c, "  F: node forced   !: findings on it");
	for (size_t g = 0; g < map.ngroups; g++) {
		const struct ns_map_group *grp = &map.groups[g];
		if (!grp->node && !grp->ndevices)
			continue;
		fputc('\n', out);
		if (grp->node)
			node_line(&c, grp->node);
		else
			line(&c, "no node: %zu device%s whose node is unknown", grp->ndevices,
			     grp->ndevices == 1 ? "" : "s");
		if (!grp->ndevices)
			line(&c, "  (no devices)");
		for (size_t i = 0; i < grp->ndevices; i++)
			device_lines(&c, grp->devices[i], cells);
	}
	ns_map_free(&map);
}
