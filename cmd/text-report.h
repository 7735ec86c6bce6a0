/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The readable report's pieces (cmd/text-*.c), what they share: the pen (where and how wide),
 * the escaping of what the machine said, and prose and tables through the one wrapping helper
 * (cmd/textwrap.h). The report's order and its rules: cmd/text-report.c.
 */
#ifndef NUMASTOR_CMD_TEXT_REPORT_H
#define NUMASTOR_CMD_TEXT_REPORT_H

#include <stdarg.h>
#include <stdlib.h>

#include "base/escape.h"
#include "model/vecmove.h"
#include "numastor.h"
#include "textwrap.h"

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
	bool utf8;    /* the ellipsis is "…" */
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
static inline const char *t(const struct pen *p, const char *s)
{
	struct esc_ring *r = p->ring;
	char **slot = &r->slot[r->next++ % ESC_SLOTS];

	if (!s)
		return NULL;
	free(*slot);
	*slot = ns_escape_text(s);
	return *slot ? *slot : "?";
}

static inline const char *col(const struct pen *p, const char *c)
{
	return p->color ? c : "";
}

static inline struct tw_page text_page(const struct pen *p)
{
	return (struct tw_page){.out = p->out, .color = p->color, .utf8 = p->utf8};
}

/* A line of prose, formatted, wrapped at the prose width; continuation lines 2 deeper. */
__attribute__((format(printf, 4, 5))) static inline void say(const struct pen *p, size_t indent, const char *c,
							     const char *fmt, ...)
{
	struct tw_page pg = text_page(p);
	char *text;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	tw_wrap(&pg, p->prose, indent, indent + 2, c, text ? text : "?");
	free(text);
}

/* A table at indent, across the page's width, its heading dim. */
static inline void text_table(const struct pen *p, const struct tw_table *tb, size_t indent)
{
	struct tw_page pg = text_page(p);
	tw_table_print(&pg, tb, p->width, indent, C_DIM);
}

static inline const char *sev_color(enum ns_severity s)
{
	return s == NS_SEV_CRITICAL ? C_RED : s == NS_SEV_WARNING ? C_YELLOW : C_BLUE;
}

/* text-summary.c: the verdict and the machine */
void text_summary(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f);
void text_machine(const struct pen *p, const struct ns_system *sys);
/* text-findings.c: the findings grouped by cause */
void text_findings(const struct pen *p, const struct ns_findings *f);

/* text-devices.c: the device table, and what a device's findings say of it and its IRQs */
/* A device's findings: its causes by severity and its effects. */
struct dev_counts {
	size_t causes[3], effects;
};
int text_device_severity(const struct pen *p, const struct ns_findings *f, const char *name, struct dev_counts *dc);
int text_irq_severity(const struct pen *p, const struct ns_findings *f, const char *name, int irq);
void text_device_table(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f);

/* text-verbose.c: one device in full (--verbose); text-queues.c: its queues, IRQs, fix */
void text_disk(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f,
	       const struct ns_vecmove_view *view, const struct ns_disk *d);
void text_queues(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f,
		 const struct ns_vecmove_view *view, const struct ns_disk *d);
void text_other_irqs(const struct pen *p, const struct ns_vecmove_view *view, const struct ns_disk *d);
void text_fix(const struct pen *p, const struct ns_vecmove_view *view, const struct ns_disk *d);

#endif
