/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The columns of `numastor check --list`: ONE table (cmd/columns.c) drives the output (text,
 * raw, pairs, JSON and its types), `check --help`, and is what the man page's COLUMNS section
 * and the shell completions are tested against (tests/check-list.py).
 */
#ifndef NUMASTOR_COLUMNS_H
#define NUMASTOR_COLUMNS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model/findings.h"
#include "model/system.h"

/* What a column's value is in the --list --json document (null: unknown, "-" in text). */
enum ns_col_type { NS_COL_STRING, NS_COL_NUMBER, NS_COL_STRINGS };

/* What a getter sees: one device, in its machine, with findings that include all of its own
 * (output-list.c hands it those alone). */
struct ns_col_ctx {
	const struct ns_system *sys;
	const struct ns_disk *d;
	const struct ns_findings *findings;
};

struct ns_column {
	const char *name; /* as -o takes it (any case) and as the heading shows it */
	const char *json; /* the key in --list --json */
	const char *help; /* one line: --help and the man page's COLUMNS */
	int width;	  /* width hint: the least the aligned output gives it */
	bool right;	  /* aligned to the right (counts) */
	enum ns_col_type type;
	const char *suffix; /* after a number in text ("%"), or NULL */
	/* The typed value (a new json object), NULL when unknown */
	struct json_object *(*get)(const struct ns_col_ctx *c);
	/* What its value is read from beyond the devices, their paths, functions and nodes
	 * (NS_NEED_*, lib/read/root.h) */
	unsigned needs;
	/* It shows findings: the list judges, reads everything and exits with the verdict */
	bool judges;
};

extern const struct ns_column ns_columns[];
extern const size_t ns_ncolumns;
/* The columns --list prints without -o, as one -o value. */
extern const char ns_columns_default[];

/* The column named name (case-insensitive, len bytes of it), or NULL. */
const struct ns_column *ns_column_find(const char *name, size_t len);

/*
 * -o's value -> the columns to print (*out, *n; free *out). "+A,B" appends to the defaults.
 * -EINVAL with *bad (malloc'd) naming the first unknown column, or "" for an empty list.
 */
int ns_columns_parse(const char *spec, const struct ns_column ***out, size_t *n, char **bad);

/*
 * What a list of these columns reads (NS_NEED_*), and whether it judges (a column shows
 * findings). A list that judges nothing reads only what its columns show and exits 0: it lists.
 */
unsigned ns_columns_needs(const struct ns_column *const *cols, size_t n, bool *judges);

/* How --list prints (cmd/output-list.c). */
struct ns_list_opts {
	const struct ns_column **cols;
	size_t ncols;
	bool noheadings, raw, pairs, json;
};

/* The devices of sys in o's columns and form. 0 or -ENOMEM. */
int ns_print_list(FILE *out, const struct ns_system *sys, const struct ns_findings *f, const struct ns_list_opts *o);

/* "NAME, TRAN, ..." every column's name, for an error message; malloc'd. */
char *ns_columns_names(void);
/* The help lines: "  NAME      the device ..." one per column. */
void ns_columns_usage(FILE *out);

#endif
