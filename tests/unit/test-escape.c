/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The escaping family: strict UTF-8 (overlongs, surrogates, past U+10FFFF, truncated
 * sequences), U+FFFD for JSON, \xNN for text, the exposition format for Prometheus. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "base/escape.h"
#include "out/json.h"
#include "tap.h"

static int esc_eq(const char *in, enum ns_escape_mode mode, size_t max, const char *want, int line)
{
	char *got = ns_escape(in, mode, max);
	int ok = got && strcmp(got, want) == 0;
	if (!ok)
		fprintf(stderr, "line %d: escape(mode %d, max %zu) gave '%s', expected '%s'\n", line, (int)mode, max,
			got ? got : "(null)", want);
	free(got);
	return ok;
}

#define ESC(in, mode, max, want) CHECK(esc_eq(in, mode, max, want, __LINE__))

int main(void)
{
	static const char *const invalid[] = {
		"\x80",		    /* lone continuation */
		"\xbf",		    /* lone continuation */
		"\xc0\xaf",	    /* overlong '/' */
		"\xc1\xbf",	    /* overlong */
		"\xe0\x80\xaf",	    /* overlong 3-byte '/' */
		"\xe0\x9f\xbf",	    /* overlong below U+0800 */
		"\xf0\x80\x80\xaf", /* overlong 4-byte */
		"\xf0\x8f\xbf\xbf", /* overlong below U+10000 */
		"\xed\xa0\x80",	    /* surrogate U+D800 */
		"\xed\xbf\xbf",	    /* surrogate U+DFFF */
		"\xf4\x90\x80\x80", /* U+110000 */
		"\xf5\x80\x80\x80", /* F5 never starts a sequence */
		"\xff",
		"\xfe",
		"\xc3",		/* truncated 2-byte */
		"\xe2\x82",	/* truncated 3-byte */
		"\xf0\x9f\x98", /* truncated 4-byte */
		"\xc3(",	/* bad continuation */
	};
	static const char *const valid[] = {
		"",
		"plain ASCII",
		"\xc3\xa9",
		"\xe2\x82\xac",
		"\xf0\x9f\x98\x80",
		"\xed\x9f\xbf",
		"\xee\x80\x80",
		"\xf4\x8f\xbf\xbf",
		"\x7f",
		"\xc2\x80",
	};

	for (size_t i = 0; i < sizeof(invalid) / sizeof(*invalid); i++) {
		CHECK(!ns_utf8_valid(invalid[i], strlen(invalid[i])));
		char *j = ns_escape_json(invalid[i]);
		CHECK(j && ns_utf8_valid(j, strlen(j)) && strstr(j, "\xef\xbf\xbd"));
		free(j);
		char *t = ns_escape_text(invalid[i]);
		CHECK(t && strncmp(t, "\\x", 2) == 0);
		for (const char *c = t; c && *c; c++)
			CHECK(*c >= 0x20 && *c < 0x7f);
		free(t);
	}
	for (size_t i = 0; i < sizeof(valid) / sizeof(*valid); i++) {
		CHECK(ns_utf8_valid(valid[i], strlen(valid[i])));
		ESC(valid[i], NS_ESCAPE_JSON, 0, valid[i]);
	}

	/* JSON: U+FFFD per maximal subpart (Unicode's recommended practice), the rest kept;
	 * control characters are left to json-c, which escapes them as \u00XX */
	ESC("a\xffz", NS_ESCAPE_JSON, 0, "a\xef\xbf\xbdz");
	ESC("a\xe2\x82z", NS_ESCAPE_JSON, 0, "a\xef\xbf\xbdz");
	ESC("\xc0\xaf", NS_ESCAPE_JSON, 0, "\xef\xbf\xbd\xef\xbf\xbd");
	ESC("\xed\xa0\x80", NS_ESCAPE_JSON, 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	ESC("caf\xc3\xa9 \x1b[31m", NS_ESCAPE_JSON, 0, "caf\xc3\xa9 \x1b[31m");

	/* text: controls, DEL, C1, bidi overrides, invalid bytes as \xNN; printable UTF-8 kept */
	ESC("MR\x1b[31mEVIL", NS_ESCAPE_TEXT, 0, "MR\\x1b[31mEVIL");
	ESC("a\tb\nc\rd\x7f", NS_ESCAPE_TEXT, 0, "a\\x09b\\x0ac\\x0dd\\x7f");
	ESC("csi\xc2\x9b"
	    "2J",
	    NS_ESCAPE_TEXT, 0, "csi\\xc2\\x9b2J");
	ESC("rlo\xe2\x80\xaegpj.exe", NS_ESCAPE_TEXT, 0, "rlo\\xe2\\x80\\xaegpj.exe");
	ESC("caf\xc3\xa9 \xe2\x82\xac", NS_ESCAPE_TEXT, 0, "caf\xc3\xa9 \xe2\x82\xac");
	ESC("x\xff\xfey", NS_ESCAPE_TEXT, 0, "x\\xff\\xfey");
	ESC("\xc0\xaf", NS_ESCAPE_TEXT, 0, "\\xc0\\xaf");
	ESC("back\\slash", NS_ESCAPE_TEXT, 0, "back\\slash");
	/* idempotent: notes are escaped when recorded and again when shown */
	ESC("MR\\x1b[31mEVIL", NS_ESCAPE_TEXT, 0, "MR\\x1b[31mEVIL");

	/* Prometheus: the text escaping, then \\ \" \n of the exposition format */
	ESC("say \"hi\"\n", NS_ESCAPE_PROM, 0, "say \\\"hi\\\"\\\\x0a");
	ESC("a\\b", NS_ESCAPE_PROM, 0, "a\\\\b");
	ESC("E\x1b\xff", NS_ESCAPE_PROM, 0, "E\\\\x1b\\\\xff");
	ESC("caf\xc3\xa9", NS_ESCAPE_PROM, 0, "caf\xc3\xa9");

	/* a bound cuts between whole characters or escapes, and says so */
	ESC("abcdef", NS_ESCAPE_TEXT, 4, "abcd...");
	ESC("abcd", NS_ESCAPE_TEXT, 4, "abcd");
	ESC("ab\x1b"
	    "cd",
	    NS_ESCAPE_TEXT, 4, "ab...");
	ESC("ab\xc3\xa9z", NS_ESCAPE_JSON, 3, "ab...");
	ESC("ab\xc3\xa9z", NS_ESCAPE_JSON, 4, "ab\xc3\xa9...");

	/* a json-c tree built elsewhere (a finding's evidence, fix's plan): every string, however
	 * deep, made valid UTF-8 in a copy; the original left as it was */
	{
		struct json_object *ev = json_object_new_object(), *arr = json_object_new_array(), *in = NULL;
		struct json_object *copy;
		const char *s;
		json_object_object_add(ev, "driver", json_object_new_string("nv\xffme"));
		json_object_array_add(arr, json_object_new_string("ok"));
		in = json_object_new_object();
		json_object_object_add(in, "name", json_object_new_string("q\xc0\xaf"));
		json_object_array_add(arr, in);
		json_object_object_add(ev, "deep", arr);
		copy = ns_json_sanitized(ev);
		s = json_object_to_json_string(copy);
		CHECK(s && ns_utf8_valid(s, strlen(s)));
		CHECK_STR(json_object_get_string(json_object_object_get(copy, "driver")), "nv\xef\xbf\xbdme");
		s = json_object_to_json_string(ev);
		CHECK(s && !ns_utf8_valid(s, strlen(s)));
		json_object_put(copy);
		json_object_put(ev);
	}

	CHECK(ns_escape(NULL, NS_ESCAPE_TEXT, 0) == NULL);
	return tap_done("escape");
}
