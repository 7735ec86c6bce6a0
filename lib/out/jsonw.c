/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "out/jsonw.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"

#define STAGE (64u << 10) /* the stream sink's staging */

static void init(struct ns_jsonw *w, enum ns_jsonw_sink sink, size_t max)
{
	memset(w, 0, sizeof(*w));
	w->sink = sink;
	w->max = max;
}

int ns_jsonw_init_file(struct ns_jsonw *w, FILE *f, size_t max)
{
	init(w, NS_JSONW_FILE, max);
	w->f = f;
	w->buf = malloc(STAGE);
	if (!w->buf)
		return w->err = -ENOMEM;
	w->cap = STAGE;
	return 0;
}

void ns_jsonw_init_buffer(struct ns_jsonw *w, size_t max)
{
	init(w, NS_JSONW_BUFFER, max);
}

void ns_jsonw_init_count(struct ns_jsonw *w, size_t max)
{
	init(w, NS_JSONW_COUNT, max);
}

static int flush(struct ns_jsonw *w)
{
	if (w->len && fwrite(w->buf, 1, w->len, w->f) != w->len)
		w->err = -EIO;
	w->len = 0;
	return w->err;
}

/* Room for len more bytes in w->buf (1 more for the buffer sink's NUL); 0, or the error. */
static int room(struct ns_jsonw *w, size_t len)
{
	size_t cap;
	char *p;

	if (w->sink == NS_JSONW_FILE)
		return flush(w);
	cap = w->cap ? w->cap : 4096;
	while (cap - w->len <= len)
		cap *= 2;
	p = realloc(w->buf, cap);
	if (!p)
		return w->err = -ENOMEM;
	w->buf = p;
	w->cap = cap;
	return 0;
}

/* The bytes past the staging or the buffer's end: the stream written, the buffer grown. */
static void spill(struct ns_jsonw *w, const char *p, size_t len)
{
	if (room(w, len) < 0)
		return;
	if (w->sink == NS_JSONW_FILE && len >= w->cap) {
		if (fwrite(p, 1, len, w->f) != len)
			w->err = -EIO;
		return;
	}
	memcpy(w->buf + w->len, p, len);
	w->len += len;
}

/* Every byte of the document passes here: the budget, then the sink. */
static inline void emit(struct ns_jsonw *w, const char *p, size_t len)
{
	if (w->err)
		return;
	if (len > w->max - w->n) {
		w->err = -EFBIG;
		return;
	}
	w->n += len;
	if (w->sink == NS_JSONW_COUNT)
		return;
	if (len < w->cap - w->len) {
		memcpy(w->buf + w->len, p, len);
		w->len += len;
		return;
	}
	spill(w, p, len);
}

/* ",\n" and the indentation of NS_JSONW_DEPTH_MAX levels, two spaces each */
static const char prelude[2 + 2 * NS_JSONW_DEPTH_MAX + 1] =
	",\n                                                                "
	"                                                                ";

static void indent(struct ns_jsonw *w, unsigned level)
{
	emit(w, prelude + 2, (size_t)level * 2);
}

/* json-c's member / element prelude: ",\n" after a sibling, then the indentation. */
static void member(struct ns_jsonw *w)
{
	uint64_t bit = 1ull << (w->depth - 1);

	if (w->had & bit)
		emit(w, prelude, 2 + (size_t)w->depth * 2);
	else
		indent(w, w->depth);
	w->had |= bit;
}

/* Where a value goes: after its key, as an array's next element, or at the top. */
static void before_value(struct ns_jsonw *w)
{
	if (w->key_pending)
		w->key_pending = false;
	else if (w->depth > 0)
		member(w);
}

static void begin(struct ns_jsonw *w, bool object)
{
	before_value(w);
	if (w->err)
		return;
	if (w->depth >= NS_JSONW_DEPTH_MAX) {
		w->err = -E2BIG;
		return;
	}
	emit(w, object ? "{\n" : "[\n", 2);
	w->depth++;
	w->had &= ~(1ull << (w->depth - 1));
}

static void end(struct ns_jsonw *w, char close)
{
	if (w->err || w->depth == 0)
		return;
	if (w->had & (1ull << (w->depth - 1)))
		emit(w, "\n", 1);
	w->depth--;
	indent(w, w->depth);
	emit(w, &close, 1);
}

void ns_jsonw_begin_object(struct ns_jsonw *w)
{
	begin(w, true);
}

void ns_jsonw_end_object(struct ns_jsonw *w)
{
	end(w, '}');
}

void ns_jsonw_begin_array(struct ns_jsonw *w)
{
	begin(w, false);
}

void ns_jsonw_end_array(struct ns_jsonw *w)
{
	end(w, ']');
}

/* What a byte needs in a JSON string: 0 nothing, 1 an escape (json-c's: control characters,
 * '"', '\\'), 2 a look at the UTF-8 sequence it starts. */
static const unsigned char byte_class[256] = {
	[0x00 ... 0x1f] = 1,
	['"'] = 1,
	['\\'] = 1,
	[0x80 ... 0xff] = 2,
};

/*
 * The string's bytes between quotes: json-c's json_escape_str under NOSLASHESCAPE, over the
 * string made valid UTF-8 (ns_escape_json's U+FFFD for each maximal invalid subpart).
 */
static void escaped(struct ns_jsonw *w, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t start = 0, i = 0;

	while (i < len) {
		unsigned char c = s[i];
		char e[6];
		size_t elen = 2;
		int n;

		if (byte_class[c] == 0) {
			i++;
			continue;
		}
		if (byte_class[c] == 2) {
			uint32_t cp;
			n = ns_utf8_next(s + i, len - i, &cp);
			if (n > 0) {
				i += (size_t)n;
				continue;
			}
			emit(w, str + start, i - start);
			emit(w, "\xef\xbf\xbd", 3); /* U+FFFD for the maximal subpart */
			i += (size_t)-n;
			start = i;
			continue;
		}
		e[0] = '\\';
		switch (c) {
		case '\b':
			e[1] = 'b';
			break;
		case '\n':
			e[1] = 'n';
			break;
		case '\r':
			e[1] = 'r';
			break;
		case '\t':
			e[1] = 't';
			break;
		case '\f':
			e[1] = 'f';
			break;
		case '"':
		case '\\':
			e[1] = (char)c;
			break;
		default: /* the other control characters */
			memcpy(e + 1, "u00", 3);
			e[4] = hex[c >> 4];
			e[5] = hex[c & 0xf];
			elen = 6;
		}
		emit(w, str + start, i - start);
		emit(w, e, elen);
		start = ++i;
	}
	emit(w, str + start, len - start);
}

void ns_jsonw_key(struct ns_jsonw *w, const char *key)
{
	size_t len = strlen(key), k = 0, pre = 2 + (size_t)w->depth * 2;
	char line[2 + 2 * NS_JSONW_DEPTH_MAX + 1 + 64 + 3];

	if (w->err || w->depth == 0)
		return;
	while (k < len && byte_class[(unsigned char)key[k]] == 0)
		k++;
	w->key_pending = true;
	if (k < len || len > 64) { /* one to escape, or long: in pieces */
		member(w);
		emit(w, "\"", 1);
		escaped(w, key, len);
		emit(w, "\": ", 3);
		return;
	}
	/* the common case, numastor's own keys: the prelude, the key and ": " at once, straight
	 * into the buffer when it has room (emit's budget checked here as there) */
	bool had = w->had & (1ull << (w->depth - 1));
	size_t total;
	char *d = line;

	w->had |= 1ull << (w->depth - 1);
	if (!had)
		pre -= 2;
	total = pre + 1 + len + 3;
	if (w->sink == NS_JSONW_COUNT) {
		emit(w, line, total); /* counted, never read */
		return;
	}
	if (total < w->cap - w->len && total <= w->max - w->n)
		d = w->buf + w->len;
	memcpy(d, had ? prelude : prelude + 2, pre);
	d[pre] = '"';
	memcpy(d + pre + 1, key, len);
	memcpy(d + pre + 1 + len, "\": ", 3);
	if (d == line) {
		emit(w, line, total);
	} else {
		w->len += total;
		w->n += total;
	}
}

void ns_jsonw_raw(struct ns_jsonw *w, const char *p, size_t len)
{
	emit(w, p, len);
}

static void scalar(struct ns_jsonw *w, const char *p, size_t len)
{
	before_value(w);
	emit(w, p, len);
}

void ns_jsonw_null(struct ns_jsonw *w)
{
	scalar(w, "null", 4);
}

void ns_jsonw_bool(struct ns_jsonw *w, bool v)
{
	if (v)
		scalar(w, "true", 4);
	else
		scalar(w, "false", 5);
}

/* v in decimal, ending at end; returns where it starts */
static char *digits(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void ns_jsonw_raw_uint(struct ns_jsonw *w, uint64_t v)
{
	char b[24], *p = digits(b + sizeof(b), v);
	emit(w, p, (size_t)(b + sizeof(b) - p));
}

void ns_jsonw_begin_string(struct ns_jsonw *w)
{
	before_value(w);
	emit(w, "\"", 1);
}

void ns_jsonw_end_string(struct ns_jsonw *w)
{
	emit(w, "\"", 1);
}

void ns_jsonw_uint64(struct ns_jsonw *w, uint64_t v)
{
	char b[24], *p = digits(b + sizeof(b), v);
	scalar(w, p, (size_t)(b + sizeof(b) - p));
}

void ns_jsonw_int64(struct ns_jsonw *w, int64_t v)
{
	char b[24], *p = digits(b + sizeof(b), v < 0 ? -(uint64_t)v : (uint64_t)v);
	if (v < 0)
		*--p = '-';
	scalar(w, p, (size_t)(b + sizeof(b) - p));
}

void ns_jsonw_double(struct ns_jsonw *w, double v)
{
	char buf[128], *p;
	int size;

	if (isnan(v))
		size = snprintf(buf, sizeof(buf), "NaN");
	else if (isinf(v))
		size = snprintf(buf, sizeof(buf), v > 0 ? "Infinity" : "-Infinity");
	else {
		size = snprintf(buf, sizeof(buf), "%.17g", v);
		if (size < 0) {
			w->err = w->err ? w->err : -EINVAL;
			return;
		}
		/* a locale's decimal comma made a point, as json-c does */
		p = strchr(buf, ',');
		if (p)
			*p = '.';
		else
			p = strchr(buf, '.');
		/* what looks like an integer gets ".0": it stays a double when read back */
		bool numeric = (buf[0] >= '0' && buf[0] <= '9') ||
			       (size > 1 && buf[0] == '-' && buf[1] >= '0' && buf[1] <= '9');
		if (size < (int)sizeof(buf) - 2 && numeric && !p && !strchr(buf, 'e')) {
			strcat(buf, ".0");
			size += 2;
		}
	}
	scalar(w, buf, (size_t)size);
}

void ns_jsonw_number_text(struct ns_jsonw *w, const char *txt)
{
	scalar(w, txt, strlen(txt));
}

void ns_jsonw_string_len(struct ns_jsonw *w, const char *s, size_t len)
{
	if (!s) {
		ns_jsonw_null(w);
		return;
	}
	before_value(w);
	emit(w, "\"", 1);
	escaped(w, s, len);
	emit(w, "\"", 1);
}

void ns_jsonw_string(struct ns_jsonw *w, const char *s)
{
	ns_jsonw_string_len(w, s, s ? strlen(s) : 0);
}

void ns_jsonw_json(struct ns_jsonw *w, struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		ns_jsonw_null(w);
		return;
	case json_type_boolean:
		ns_jsonw_bool(w, json_object_get_boolean(o));
		return;
	case json_type_int:
		/* json-c keeps an int64 or, above INT64_MAX, a uint64 */
		if (json_object_get_int64(o) == INT64_MAX)
			ns_jsonw_uint64(w, json_object_get_uint64(o));
		else
			ns_jsonw_int64(w, json_object_get_int64(o));
		return;
	case json_type_double:
		/* its own text when it has one (json_object_new_double_s), else json-c's form */
		ns_jsonw_number_text(w, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		return;
	case json_type_string:
		/* as ns_json_sanitize: an embedded NUL ends the string */
		ns_jsonw_string(w, json_object_get_string(o));
		return;
	case json_type_array:
		ns_jsonw_begin_array(w);
		for (size_t i = 0; i < json_object_array_length(o) && !w->err; i++)
			ns_jsonw_json(w, json_object_array_get_idx(o, i));
		ns_jsonw_end_array(w);
		return;
	case json_type_object:
		ns_jsonw_begin_object(w);
		json_object_object_foreach(o, key, val)
		{
			ns_jsonw_key(w, key);
			ns_jsonw_json(w, val);
		}
		ns_jsonw_end_object(w);
		return;
	}
}

int ns_jsonw_finish(struct ns_jsonw *w)
{
	if (!w->err && w->sink == NS_JSONW_FILE)
		flush(w);
	return w->err;
}

char *ns_jsonw_buffer(struct ns_jsonw *w, size_t *len)
{
	char *p;

	if (w->err || w->sink != NS_JSONW_BUFFER)
		return NULL;
	if (!w->buf && room(w, 0) < 0)
		return NULL;
	w->buf[w->len] = '\0';
	p = w->buf;
	*len = w->len;
	w->buf = NULL;
	w->len = w->cap = 0;
	return p;
}

void ns_jsonw_free(struct ns_jsonw *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}
