/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `numastor check --list`: one line per device in the columns of cmd/columns.c, aligned (the
 * default), raw (-r), as KEY="value" pairs (-P), or as a JSON document
 * (schema/numastor-list.schema.json).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "base/escape.h"
#include "out/json.h"
#include "numastor.h"

#define JSON_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* The value as text, before escaping; NULL when unknown or empty. */
static char *value_text(const struct ns_column *col, struct json_object *v)
{
	char *s = NULL;

	if (!v)
		return NULL;
	switch (json_object_get_type(v)) {
	case json_type_array: {
		size_t len = 0;
		FILE *f = open_memstream(&s, &len);
		if (!f)
			return NULL;
		for (size_t i = 0; i < json_object_array_length(v); i++)
			fprintf(f, "%s%s", i ? "," : "", json_object_get_string(json_object_array_get_idx(v, i)));
		fclose(f);
		if (s && !*s) {
			free(s);
			s = NULL;
		}
		return s;
	}
	case json_type_double:
		if (asprintf(&s, "%.1f%s", json_object_get_double(v), col->suffix ? col->suffix : "") < 0)
			s = NULL;
		return s;
	case json_type_int:
		if (asprintf(&s, "%lld%s", (long long)json_object_get_int64(v), col->suffix ? col->suffix : "") < 0)
			s = NULL;
		return s;
	default:
		return strdup(json_object_get_string(v));
	}
}

/*
 * -r and -P as lsblk: every byte that would split the line or the value, or that is not
 * printable ASCII, as \xNN. Raw escapes blanks and the backslash; pairs escape what a shell's
 * double quotes would act on.
 */
static char *escape_list(const char *s, bool pairs)
{
	size_t n = strlen(s);
	char *out = malloc(n * 4 + 1), *p = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool esc =
			c < 0x20 || c >= 0x7f || c == '\\' || (pairs ? (c == '"' || c == '`' || c == '$') : c == ' ');
		if (esc)
			p += sprintf(p, "\\x%02x", c);
		else
			*p++ = (char)c;
	}
	*p = '\0';
	return out;
}

/* One cell as printed: "-" for an unknown value outside pairs (where it is ""). */
static char *cell(const struct ns_column *col, struct json_object *v, const struct ns_list_opts *o)
{
	char *t = value_text(col, v), *e;

	if (!t)
		return strdup(o->pairs ? "" : "-");
	e = o->raw || o->pairs ? escape_list(t, o->pairs) : ns_escape_text(t);
	free(t);
	return e;
}

/*
 * The findings a getter of device d sees: d's own, copied (shallow) out of the machine's into
 * view, so that a row costs its device's findings, not all of them. Without the index (out of
 * memory) the machine's; the getters look at the device of each either way.
 */
struct row_findings {
	struct ns_findings_index ix;
	bool indexed;
	struct ns_finding *scratch; /* room for the most findings of one device */
	struct ns_findings view;
};

static void row_findings_init(struct row_findings *rf, const struct ns_findings *f)
{
	*rf = (struct row_findings){0};
	rf->indexed = ns_findings_index_make(f, &rf->ix) == 0;
	rf->scratch = rf->indexed ? calloc(f->n ? f->n : 1, sizeof(*rf->scratch)) : NULL;
	if (!rf->scratch && rf->indexed) {
		ns_findings_index_free(&rf->ix);
		rf->indexed = false;
	}
}

static const struct ns_findings *row_findings_of(struct row_findings *rf, const struct ns_findings *f,
						 const struct ns_disk *d)
{
	size_t n;
	const size_t *v;

	if (!rf->indexed)
		return f;
	v = ns_findings_index_of(&rf->ix, d->name, &n);
	for (size_t i = 0; i < n; i++)
		rf->scratch[i] = f->v[v[i]];
	rf->view = (struct ns_findings){.v = rf->scratch, .n = n, .cap = n};
	return &rf->view;
}

static void row_findings_free(struct row_findings *rf)
{
	if (rf->indexed)
		ns_findings_index_free(&rf->ix);
	free(rf->scratch);
}

static int print_json(FILE *out, const struct ns_system *sys, const struct ns_findings *f, const struct ns_list_opts *o)
{
	struct json_object *doc = ns_json_envelope(sys->root, NS_LIST_SCHEMA_VERSION), *devs;
	struct row_findings rf;

	if (!doc)
		return -ENOMEM;
	row_findings_init(&rf, f);
	devs = json_object_new_array();
	json_object_object_add(doc, "devices", devs);
	for (size_t i = 0; i < sys->ndisks; i++) {
		struct ns_col_ctx c = {
			.sys = sys, .d = &sys->disks[i], .findings = row_findings_of(&rf, f, &sys->disks[i])};
		struct json_object *row = json_object_new_object();
		for (size_t k = 0; k < o->ncols; k++)
			json_object_object_add(row, o->cols[k]->json, o->cols[k]->get(&c));
		json_object_array_add(devs, row);
	}
	row_findings_free(&rf);
	json_object_object_add(doc, "notes", ns_json_notes(sys));
	ns_json_sanitize(doc);
	fprintf(out, "%s\n", json_object_to_json_string_ext(doc, JSON_FLAGS));
	json_object_put(doc);
	return 0;
}

int ns_print_list(FILE *out, const struct ns_system *sys, const struct ns_findings *f, const struct ns_list_opts *o)
{
	size_t rows = sys->ndisks + 1, nc = o->ncols;
	char **cells;
	int *width;

	if (o->json)
		return print_json(out, sys, f, o);
	/* what the listing cannot show: a partition named stands for its disk */
	for (size_t i = 0; i < sys->notes.n; i++)
		if (strcmp(sys->notes.v[i].field, "device-argument") == 0)
			fprintf(stderr, "numastor check: %s\n", sys->notes.v[i].message);
	cells = calloc(rows * nc, sizeof(*cells));
	width = calloc(nc ? nc : 1, sizeof(*width));
	if (!cells || !width) {
		free(cells);
		free(width);
		return -ENOMEM;
	}
	for (size_t k = 0; k < nc; k++) {
		cells[k] = strdup(o->cols[k]->name);
		width[k] = o->cols[k]->width;
	}
	struct row_findings rf;
	row_findings_init(&rf, f);
	for (size_t i = 0; i < sys->ndisks; i++) {
		struct ns_col_ctx c = {
			.sys = sys, .d = &sys->disks[i], .findings = row_findings_of(&rf, f, &sys->disks[i])};
		for (size_t k = 0; k < nc; k++) {
			struct json_object *v = o->cols[k]->get(&c);
			cells[(i + 1) * nc + k] = cell(o->cols[k], v, o);
			json_object_put(v);
		}
	}
	row_findings_free(&rf);
	for (size_t i = 0; i < rows * nc; i++)
		if (cells[i] && (int)strlen(cells[i]) > width[i % nc])
			width[i % nc] = (int)strlen(cells[i]);
	for (size_t i = o->noheadings || o->pairs ? 1 : 0; i < rows; i++) {
		for (size_t k = 0; k < nc; k++) {
			const char *s = cells[i * nc + k] ? cells[i * nc + k] : "";
			bool last = k + 1 == nc;
			if (o->pairs)
				fprintf(out, "%s%s=\"%s\"", k ? " " : "", o->cols[k]->name, s);
			else if (o->raw)
				fprintf(out, "%s%s", k ? " " : "", s);
			else if (o->cols[k]->right)
				fprintf(out, "%s%*s", k ? " " : "", width[k], s);
			else
				fprintf(out, "%s%-*s", k ? " " : "", last ? 0 : width[k], s);
		}
		fputc('\n', out);
	}
	for (size_t i = 0; i < rows * nc; i++)
		free(cells[i]);
	free(cells);
	free(width);
	return 0;
}
