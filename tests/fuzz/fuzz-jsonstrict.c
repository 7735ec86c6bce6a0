/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The strict JSON reader (lib/base/jsonstrict.h) against json-c's strict tokener and a duplicate-key
 * finder written here from the contract: keys are compared as written, objects tracked with a
 * stack. What json-c refuses, numastor refuses; an object that names one key twice as written is
 * always refused; what numastor refuses beyond json-c has either such a key or a key with an
 * escape (two spellings of one key, or one json-c cuts at an escaped NUL); what it accepts
 * serializes and reads back to the same number of keys.
 */
#include "fuzz-common.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonstrict.h"

/* Keys as written in one object: a flat list with a stack of where each open object's start. */
static bool written_twice(const char *txt, bool *escaped)
{
	const char **keys = NULL;
	size_t *lens = NULL, n = 0, cap = 0, open[64], depth = 0;
	bool dup = false;

	*escaped = false;
	for (const char *p = txt; *p && !dup; p++) {
		if (*p == '{') {
			if (depth == 64)
				break; /* json-c's depth is 32: never reached on a text it took */
			open[depth++] = n;
		} else if (*p == '}' && depth) {
			n = open[--depth];
		} else if (*p == '\'') {
			break; /* json-c's single-quoted key: numastor refuses the text (and says so) */
		} else if (*p == '"') {
			const char *s = ++p, *q;
			while (*p && *p != '"') {
				if (*p == '\\' && p[1])
					p++;
				p++;
			}
			if (!*p)
				break; /* a string that does not end: the text ends with it */
			for (q = *p ? p + 1 : p; *q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'; q++)
				;
			if (*q != ':' || !depth)
				continue;
			if (memchr(s, '\\', (size_t)(p - s)))
				*escaped = true;
			for (size_t i = open[depth - 1]; i < n; i++)
				if (lens[i] == (size_t)(p - s) && memcmp(keys[i], s, lens[i]) == 0)
					dup = true;
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				keys = realloc(keys, cap * sizeof(*keys));
				lens = realloc(lens, cap * sizeof(*lens));
				if (!keys || !lens)
					abort();
			}
			keys[n] = s;
			lens[n++] = (size_t)(p - s);
		}
	}
	free(keys);
	free(lens);
	return dup;
}

static size_t keys_in(struct json_object *o)
{
	size_t n = 0;
	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, k, v)
		{
			(void)k;
			n += 1 + keys_in(v);
		}
	} else if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			n += keys_in(json_object_array_get_idx(o, i));
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *txt = fuzz_strndup(data, size), *why = NULL;
	struct json_tokener *tok = json_tokener_new();
	struct json_object *doc = NULL, *ref;
	bool escaped, twice;
	int r;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	ref = json_tokener_parse_ex(tok, txt, (int)strlen(txt));
	if (json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(ref);
		ref = NULL;
	}
	json_tokener_free(tok);
	r = ns_json_parse_strict(txt, &doc, &why);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ENOMEM, "parse: %d", r);
	FUZZ_ASSERT((r == 0) == (doc != NULL), "r %d with doc %p", r, (void *)doc);
	FUZZ_ASSERT(r != -EINVAL || why, "refused without saying why");
	if (!ref) {
		FUZZ_ASSERT(r != 0, "json-c refuses '%.80s', numastor took it", txt);
	} else if (r == -EINVAL) {
		twice = written_twice(txt, &escaped);
		FUZZ_ASSERT(twice || escaped || strstr(why, "single-quoted"),
			    "'%.80s' refused (%s) with no key twice, no escaped key and no single quote", txt, why);
	} else if (r == 0) {
		twice = written_twice(txt, &escaped);
		FUZZ_ASSERT(!twice, "'%.80s' names a key twice and was taken", txt);
		/* a bare number at the end of a text is json-c's "continue" (it may go on): the round
		 * trip is held for the documents numastor writes, objects and arrays */
		if (json_object_is_type(doc, json_type_object) || json_object_is_type(doc, json_type_array)) {
			struct json_object *again = NULL;
			const char *out = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
			FUZZ_ASSERT(ns_json_parse_strict(out, &again, NULL) == 0 && keys_in(again) == keys_in(doc),
				    "'%.80s' written back does not read back alike", out);
			json_object_put(again);
		}
	}
	json_object_put(doc);
	json_object_put(ref);
	free(why);
	free(txt);
	return 0;
}
