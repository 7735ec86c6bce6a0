/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "base/jsonstrict.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/*
 * Duplicate keys, found on the text (json-c has already accepted it, so it is well formed):
 * each object's keys as written, sorted when the object closes, neighbours compared. A key
 * that differs as written but not once decoded ("irqs" and "\u0069rqs") is caught by the count:
 * json-c's tree then holds fewer keys than the text wrote.
 */
struct span {
	const char *p;
	size_t len;
};

struct scan {
	struct span *keys; /* the keys of every open object, innermost last */
	size_t nkeys, cap;
	size_t *open; /* where each open object's keys start in keys */
	size_t nopen, opencap;
	size_t total;	   /* keys written in all */
	bool single_quote; /* a ' outside a string: not JSON */
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int push(void **v, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		void *nv = realloc(*v, ncap * size);
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*n)++;
	return 0;
}

/* The end of the string that starts (after its quote) at p. */
static const char *string_end(const char *p)
{
	for (; *p && *p != '"'; p++)
		if (*p == '\\' && p[1])
			p++;
	return p;
}

static int scan_text(const char *txt, struct scan *s, const struct span **dup)
{
	*dup = NULL;
	for (const char *p = txt; *p; p++) {
		if (*p == '{') {
			if (push((void **)&s->open, &s->nopen, &s->opencap, sizeof(*s->open)) < 0)
				return -ENOMEM;
			s->open[s->nopen - 1] = s->nkeys;
		} else if (*p == '}' && s->nopen) {
			size_t first = s->open[--s->nopen], n = s->nkeys - first;
			if (n > 1) /* an empty object's keys may be no array at all */
				qsort(s->keys + first, n, sizeof(*s->keys), span_cmp);
			for (size_t i = 1; i < n; i++)
				if (span_cmp(&s->keys[first + i - 1], &s->keys[first + i]) == 0) {
					*dup = &s->keys[first + i];
					return 0;
				}
			s->nkeys = first;
		} else if (*p == '\'') {
			/* json-c takes a single-quoted key even in strict mode; RFC 8259 has none, and
			 * the keys above would not be counted right */
			s->single_quote = true;
			return 0;
		} else if (*p == '"') {
			const char *end = string_end(p + 1), *q = end;
			if (!*end)
				return 0; /* json-c accepted it: cannot happen */
			for (q++; *q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'; q++)
				;
			if (*q == ':' && s->nopen) {
				if (push((void **)&s->keys, &s->nkeys, &s->cap, sizeof(*s->keys)) < 0)
					return -ENOMEM;
				s->keys[s->nkeys - 1] = (struct span){p + 1, (size_t)(end - p - 1)};
				s->total++;
			}
			p = end;
		}
	}
	return 0;
}

/* Keys in json-c's tree (its depth is bounded by the tokener's, 32). */
static size_t tree_keys(struct json_object *o)
{
	size_t n = 0;

	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, k, v)
		{
			(void)k;
			n += 1 + tree_keys(v);
		}
	} else if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			n += tree_keys(json_object_array_get_idx(o, i));
	}
	return n;
}

int ns_json_parse_strict(const char *txt, struct json_object **doc, char **problem)
{
	struct json_tokener *tok = json_tokener_new();
	struct scan s = {0};
	const struct span *dup;
	enum json_tokener_error err;
	int r;

	*doc = NULL;
	if (problem)
		*problem = NULL;
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	*doc = json_tokener_parse_ex(tok, txt, (int)strlen(txt));
	err = json_tokener_get_error(tok);
	if (err != json_tokener_success) {
		/* a text that ends early is json_tokener_continue: say so rather than "success" */
		if (problem)
			*problem = ns_fmt("it is not JSON (%s) at byte %zu",
					  err == json_tokener_continue ? "it ends early" : json_tokener_error_desc(err),
					  json_tokener_get_parse_end(tok));
		json_object_put(*doc);
		*doc = NULL;
		json_tokener_free(tok);
		return -EINVAL;
	}
	json_tokener_free(tok);
	r = scan_text(txt, &s, &dup);
	if (r == 0 && s.single_quote) {
		if (problem)
			*problem = ns_fmt("it is not JSON (a single-quoted string)");
		r = -EINVAL;
	} else if (r == 0 && (dup || s.total != tree_keys(*doc))) {
		if (problem)
			*problem = dup ? ns_fmt("its key \"%.*s\" appears twice in one object",
						(int)(dup->len > 40 ? 40 : dup->len), dup->p)
				       : ns_fmt("it names one key twice in one object, written in two forms");
		r = -EINVAL;
	}
	free(s.keys);
	free(s.open);
	if (r < 0) {
		json_object_put(*doc);
		*doc = NULL;
	}
	return r;
}

bool ns_json_only_keys(struct json_object *o, const char *const *allowed, const char **bad)
{
	if (!json_object_is_type(o, json_type_object))
		return true;
	json_object_object_foreach(o, key, val)
	{
		size_t i;
		(void)val;
		for (i = 0; allowed[i] && strcmp(allowed[i], key) != 0; i++)
			;
		if (!allowed[i]) {
			if (bad)
				*bad = key;
			return false;
		}
	}
	return true;
}
