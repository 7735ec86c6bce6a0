/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/out/jsonw against json-c 0.16: the same value built as json-c objects and written through
 * the writer must give the same bytes as json_object_to_json_string_ext(PRETTY | SPACED |
 * NOSLASHESCAPE), on hand-picked shapes (empties nested, every control character, UTF-8,
 * the integer and double edges) and on random trees; invalid UTF-8 comes out as json-c gives
 * ns_escape_json's repair. And the sinks: the count, the buffer and the stream agree, the
 * budget refuses one byte over and takes exactly its size.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "out/json.h"
#include "out/jsonw.h"
#include "tap.h"

#define FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* The value written with the writer's typed calls (not its json-c walker), as a test would
 * write it by hand: strings as they are in the object. */
static void typed(struct ns_jsonw *w, struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		ns_jsonw_null(w);
		break;
	case json_type_boolean:
		ns_jsonw_bool(w, json_object_get_boolean(o));
		break;
	case json_type_int:
		if (json_object_get_int64(o) == INT64_MAX)
			ns_jsonw_uint64(w, json_object_get_uint64(o));
		else
			ns_jsonw_int64(w, json_object_get_int64(o));
		break;
	case json_type_double:
		ns_jsonw_double(w, json_object_get_double(o));
		break;
	case json_type_string:
		ns_jsonw_string_len(w, json_object_get_string(o), (size_t)json_object_get_string_len(o));
		break;
	case json_type_array:
		ns_jsonw_begin_array(w);
		for (size_t i = 0; i < json_object_array_length(o); i++)
			typed(w, json_object_array_get_idx(o, i));
		ns_jsonw_end_array(w);
		break;
	case json_type_object: {
		ns_jsonw_begin_object(w);
		json_object_object_foreach(o, k, v)
		{
			ns_jsonw_key(w, k);
			typed(w, v);
		}
		ns_jsonw_end_object(w);
		break;
	}
	}
}

static char *render(struct json_object *o, bool walker, int *err)
{
	struct ns_jsonw w;
	size_t len;
	char *p;

	ns_jsonw_init_buffer(&w, SIZE_MAX);
	if (walker)
		ns_jsonw_json(&w, o);
	else
		typed(&w, o);
	*err = ns_jsonw_finish(&w);
	p = ns_jsonw_buffer(&w, &len);
	ns_jsonw_free(&w);
	return p;
}

static int compared;

/* o (consumed) through the writer's typed calls (paths bit 0) and its json-c walker (bit 1)
 * equals json-c's text of it */
static void same_paths(struct json_object *o, const char *what, int paths)
{
	const char *want = o ? json_object_to_json_string_ext(o, FLAGS) : "null";
	int err;

	for (int walker = 0; walker < 2; walker++) {
		if (!(paths & (1 << walker)))
			continue;
		char *got = render(o, walker, &err);
		tap_run++;
		compared++;
		if (err || !got || strcmp(got, want) != 0) {
			tap_failed++;
			fprintf(stderr, "%s (%s): jsonw wrote\n%s\njson-c wrote\n%s\n", what,
				walker ? "walker" : "typed", got ? got : "(nothing)", want);
		}
		free(got);
	}
	json_object_put(o);
}

static void same(struct json_object *o, const char *what)
{
	same_paths(o, what, 3);
}

static struct json_object *obj(const char *k, struct json_object *v)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, k, v);
	return o;
}

static struct json_object *arr(struct json_object *v)
{
	struct json_object *a = json_object_new_array();
	json_object_array_add(a, v);
	return a;
}

static void shapes(void)
{
	struct json_object *o, *a;

	same(NULL, "null");
	same(json_object_new_boolean(1), "true");
	same(json_object_new_boolean(0), "false");
	same(json_object_new_object(), "empty object");
	same(json_object_new_array(), "empty array");
	same(arr(json_object_new_array()), "[[]]");
	same(arr(json_object_new_object()), "[{}]");
	same(obj("a", json_object_new_object()), "{a: {}}");
	same(obj("a", json_object_new_array()), "{a: []}");
	same(obj("a", arr(arr(obj("b", json_object_new_array())))), "empties deep");
	same(arr(NULL), "[null]");
	same(obj("k", NULL), "{k: null}");
	o = json_object_new_object();
	for (int i = 0; i < 20; i++) {
		char k[16];
		snprintf(k, sizeof(k), "key%d", i);
		json_object_object_add(o, k, i % 3 ? json_object_new_int(i) : json_object_new_array());
	}
	same(o, "many keys");
	o = json_object_new_string("leaf");
	for (int i = 0; i < NS_JSONW_DEPTH_MAX; i++) /* as deep as the writer goes: 128 spaces */
		o = i % 2 ? arr(o) : obj("x", o);
	same(o, "NS_JSONW_DEPTH_MAX levels");
	a = json_object_new_array();
	for (int i = 0; i < 5; i++)
		json_object_array_add(a, i % 2 ? NULL : obj("n", json_object_new_int(i)));
	same(a, "array of objects and nulls");
	same(obj("a\"b\\c/d\n", json_object_new_int(1)), "a key that needs escaping");
}

static void numbers(void)
{
	static const int64_t ints[] = {
		0, 1, -1, 9, 10, -10, 2147483647, -2147483648LL, INT64_MAX, INT64_MIN, INT64_MIN + 1, 1000000000000LL};
	static const double dbls[] = {0.1,    1e300,  5.0,	   -0.0,     0.0,      1e-300,
				      0.5,    -2.5,   123456789.0, 1e17,     1e16,     123456789012345680.0,
				      3.0e-5, -1e300, 1.0 / 3,	   2.0e21,   4.9e-324, 1e15,
				      100.0,  NAN,    INFINITY,	   -INFINITY};

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		same(arr(json_object_new_int64(ints[i])), "int64");
	same(arr(json_object_new_uint64(UINT64_MAX)), "uint64 max");
	same(arr(json_object_new_uint64((uint64_t)INT64_MAX + 1)), "uint64 above int64");
	for (size_t i = 0; i < sizeof(dbls) / sizeof(dbls[0]); i++) {
		char what[64];
		snprintf(what, sizeof(what), "double %.17g", dbls[i]);
		same(obj("d", json_object_new_double(dbls[i])), what);
	}
	/* the walker writes json_object_new_double_s's own text, as numastor's rates have it */
	same_paths(obj("rate", json_object_new_double_s(0.1, "0.100")), "double with its text", 2);
}

static void strings(void)
{
	static const char *const valid[] = {"",
					    "plain",
					    "a/b",
					    "\"quoted\"",
					    "back\\slash",
					    "caf\xc3\xa9",
					    "\xf0\x9f\x98\x80 4 bytes",
					    "\xef\xbf\xbd",
					    "\xc2\x80\xc2\x9f C1",
					    "\xe2\x80\xae bidi",
					    "\x7f del",
					    "tab\there\r\n"};
	char s[4];

	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
		same(arr(json_object_new_string(valid[i])), valid[i]);
	/* every control character, and DEL, alone and between letters */
	for (int c = 0; c < 0x20; c++) {
		s[0] = 'a';
		s[1] = (char)c;
		s[2] = 'b';
		/* a NUL only by length (the walker cuts there, as ns_json_sanitize: below) */
		same_paths(arr(json_object_new_string_len(s + 1, 1)), "control alone", c ? 3 : 1);
		same_paths(arr(json_object_new_string_len(s, 3)), "control between", c ? 3 : 1);
	}
	s[0] = 0x7f;
	same(arr(json_object_new_string_len(s, 1)), "DEL");
}

/* s (invalid UTF-8) through the writer equals json-c's text of ns_escape_json(s) */
static void invalid_one(const char *s)
{
	struct json_object *o = json_object_new_string(s), *clean;
	char *fixed = ns_escape_json(s), *got;
	int err;

	clean = json_object_new_string(fixed);
	for (int walker = 0; walker < 2; walker++) {
		got = render(o, walker, &err);
		CHECK(!err);
		CHECK_STR(got, json_object_to_json_string_ext(clean, FLAGS));
		CHECK(got && ns_utf8_valid(got, strlen(got)));
		free(got);
	}
	json_object_put(o);
	json_object_put(clean);
	free(fixed);
}

static void invalid_utf8(void)
{
	static const char *const bad[] = {
		"\xff",
		"a\x80z",
		"\xc3",
		"\xc3(",
		"\xe2\x82",
		"\xed\xa0\x80 surrogate",
		"\xc0\xaf overlong",
		"\xf4\x90\x80\x80",
		"\xf0\x9f\x98",
		"ok\xfe\x01\"",
		"\xe0\x80\x80",
	};
	struct json_object *o;
	char *got;
	int err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		invalid_one(bad[i]);
	/* the walker cuts at an embedded NUL, as ns_json_sanitize does */
	o = json_object_new_string_len("ab\0\xff", 4);
	got = render(o, true, &err);
	CHECK_STR(got, "\"ab\"");
	free(got);
	json_object_put(o);
}

/* A random tree: n nodes at most, strings of random bytes (control characters, quotes,
 * UTF-8 and not). Invalid UTF-8 is left to the writer; json-c is given the repaired form. */
static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static struct json_object *random_value(int depth, struct json_object **mirror)
{
	static const char alphabet[] = "ab/\"\\\n\t\x01\x1f\x7f \xc3\xa9\xff\x80\xe2\x82\xac";
	unsigned kind = depth > 5 ? rnd(6) : rnd(8);
	struct json_object *o, *m;

	switch (kind) {
	case 0:
		*mirror = NULL;
		return NULL;
	case 1:
		o = json_object_new_boolean((int)rnd(2));
		break;
	case 2:
		o = json_object_new_int64((int64_t)(((uint64_t)rnd(1u << 31) << 33) ^ rnd(1u << 31)) *
					  (rnd(2) ? 1 : -1));
		break;
	case 3:
		o = json_object_new_double((double)rnd(1000000) / (double)(1 + rnd(1000)) * (rnd(2) ? 1e-3 : 1e9));
		break;
	case 4:
	case 5: {
		char s[24];
		unsigned n = rnd(sizeof(s));
		char *fixed;
		for (unsigned i = 0; i < n; i++)
			s[i] = alphabet[rnd(sizeof(alphabet) - 1)];
		s[n] = '\0';
		o = json_object_new_string(s);
		fixed = ns_escape_json(s);
		*mirror = json_object_new_string(fixed);
		free(fixed);
		return o;
	}
	case 6:
		o = json_object_new_array();
		m = json_object_new_array();
		for (unsigned i = rnd(5); i > 0; i--) {
			struct json_object *mv, *v = random_value(depth + 1, &mv);
			json_object_array_add(o, v);
			json_object_array_add(m, mv);
		}
		*mirror = m;
		return o;
	default:
		o = json_object_new_object();
		m = json_object_new_object();
		for (unsigned i = rnd(5); i > 0; i--) {
			char k[8];
			struct json_object *mv, *v = random_value(depth + 1, &mv);
			snprintf(k, sizeof(k), "k%u", i);
			json_object_object_add(o, k, v);
			json_object_object_add(m, k, mv);
		}
		*mirror = m;
		return o;
	}
	*mirror = json_object_get(o);
	return o;
}

static void random_trees(void)
{
	for (int t = 0; t < 3000; t++) {
		struct json_object *mirror, *o = random_value(0, &mirror);
		const char *want = mirror ? json_object_to_json_string_ext(mirror, FLAGS) : "null";
		int err;
		for (int walker = 0; walker < 2; walker++) {
			char *got = render(o, walker, &err);
			tap_run++;
			if (err || !got || strcmp(got, want) != 0) {
				tap_failed++;
				fprintf(stderr, "random tree %d: jsonw\n%s\njson-c\n%s\n", t, got ? got : "(nothing)",
					want);
			}
			free(got);
		}
		json_object_put(o);
		json_object_put(mirror);
	}
}

/* A document bigger than the stream's 64 KiB staging, with one string bigger than it too. */
static struct json_object *big_doc(void)
{
	struct json_object *a = json_object_new_array();
	char *s = malloc(100000);

	memset(s, 'x', 99999);
	s[99999] = '\0';
	s[500] = '\n';
	for (int i = 0; i < 5000; i++)
		json_object_array_add(a, obj("i", json_object_new_int(i)));
	json_object_array_add(a, json_object_new_string(s));
	free(s);
	return a;
}

/*
 * Keys at the edges of the writer's fast path (a buffer with room: the key copied as it is
 * scanned): 63, 64 and 65 bytes and longer, one byte to escape at the end, after a sibling;
 * and every budget from 0 to the document's size: a write takes at most its budget, and
 * succeeds exactly when the document fits.
 */
static void keys(void)
{
	char k[130];
	size_t lens[] = {1, 63, 64, 65, 66, 129};

	for (size_t i = 0; i < sizeof(lens) / sizeof(*lens); i++) {
		for (int esc = 0; esc < 2; esc++) {
			struct json_object *o = json_object_new_object();
			memset(k, 'k', lens[i]);
			k[lens[i]] = '\0';
			if (esc)
				k[lens[i] - 1] = '"';
			json_object_object_add(o, "first", json_object_new_int(1));
			json_object_object_add(o, k, json_object_new_int(2));
			json_object_object_add(o, "last", json_object_new_object());
			json_object_object_add(json_object_object_get(o, "last"), k, json_object_new_int(3));
			same(o, "a long key");
		}
	}
	{
		struct json_object *o = json_object_new_object();
		const char *want;
		size_t len;
		for (int i = 0; i < 20; i++) {
			snprintf(k, sizeof(k), "key%d", i);
			json_object_object_add(o, k, json_object_new_int(i));
		}
		want = json_object_to_json_string_ext(o, FLAGS);
		len = strlen(want);
		for (size_t b = 0; b <= len + 1; b++) {
			struct ns_jsonw w;
			int err;
			ns_jsonw_init_buffer(&w, b);
			ns_jsonw_json(&w, o);
			err = ns_jsonw_finish(&w);
			tap_run++;
			if (w.n > b || (err == 0) != (b >= len)) {
				tap_failed++;
				fprintf(stderr, "budget %zu of %zu: took %zu, error %d\n", b, len, w.n, err);
			}
			ns_jsonw_free(&w);
		}
		json_object_put(o);
	}
}

static void sinks(void)
{
	struct json_object *doc = big_doc();
	const char *want = json_object_to_json_string_ext(doc, FLAGS);
	size_t len = strlen(want), got_len = 0;
	struct ns_jsonw w;
	char *got = NULL;
	FILE *f;

	/* the count: exactly the bytes, at a budget of exactly them */
	ns_jsonw_init_count(&w, len);
	ns_jsonw_json(&w, doc);
	CHECK(ns_jsonw_finish(&w) == 0);
	CHECK(w.n == len);
	ns_jsonw_free(&w);
	/* one byte less is refused, and the error sticks */
	ns_jsonw_init_count(&w, len - 1);
	ns_jsonw_json(&w, doc);
	ns_jsonw_null(&w);
	CHECK(ns_jsonw_finish(&w) == -EFBIG);
	ns_jsonw_free(&w);
	/* the buffer: refused past its budget, nothing handed over */
	ns_jsonw_init_buffer(&w, len - 1);
	ns_jsonw_json(&w, doc);
	CHECK(ns_jsonw_finish(&w) == -EFBIG);
	CHECK(ns_jsonw_buffer(&w, &got_len) == NULL);
	ns_jsonw_free(&w);
	ns_jsonw_init_buffer(&w, len);
	ns_jsonw_json(&w, doc);
	CHECK(ns_jsonw_finish(&w) == 0);
	got = ns_jsonw_buffer(&w, &got_len);
	CHECK(got && got_len == len && strcmp(got, want) == 0);
	free(got);
	ns_jsonw_free(&w);
	/* the stream, through its staging and past it */
	got = NULL;
	f = open_memstream(&got, &got_len);
	CHECK(f && ns_jsonw_init_file(&w, f, SIZE_MAX) == 0);
	ns_jsonw_json(&w, doc);
	ns_jsonw_raw(&w, "\n", 1);
	CHECK(ns_jsonw_finish(&w) == 0);
	ns_jsonw_free(&w);
	fclose(f);
	CHECK(got && got_len == len + 1 && strncmp(got, want, len) == 0 && got[len] == '\n');
	free(got);
	json_object_put(doc);
	/* nesting deeper than the writer's limit is an error, not a smashed stack */
	ns_jsonw_init_count(&w, SIZE_MAX);
	for (int i = 0; i < NS_JSONW_DEPTH_MAX + 1; i++)
		ns_jsonw_begin_array(&w);
	CHECK(ns_jsonw_finish(&w) == -E2BIG);
	ns_jsonw_free(&w);
}

int main(void)
{
	shapes();
	numbers();
	strings();
	invalid_utf8();
	random_trees();
	sinks();
	keys();
	printf("jsonw: %d values compared with json-c\n", compared);
	return tap_done("jsonw");
}
