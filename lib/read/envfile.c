/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/envfile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"

/*
 * The two readers, for the lines numastor accepts (anything else is a doubt):
 * - a POSIX shell (dash, bash) sourcing the file: words split at unquoted blanks (space, tab),
 *   a word beginning with # starts a comment, leading NAME=value words are assignments and
 *   the first other word a command; '...' is literal, "..." literal but for $ ` \;
 * - systemd's EnvironmentFile= (env-file.c, parse_env_file_internal): a line beginning (after
 *   whitespace) with # or ; is a comment; the key is everything before the first '=' with its
 *   trailing whitespace cut, the value everything after it with the whitespace around it cut;
 *   a quote is special only where the value starts (or right after a closing quote); keys that
 *   are no valid names are dropped; \r ends a line as \n does.
 * Both: the last assignment of a key wins.
 */

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

/* Length of the NAME at p (before end), 0 when p holds none. */
static size_t name_len(const char *p, const char *end)
{
	size_t n = 0;

	if (p >= end || !name_start(*p))
		return 0;
	while (p + n < end && name_char(p[n]))
		n++;
	return n;
}

/* One assignment word of a line. */
struct assign {
	const char *name;
	size_t name_len;
	char *value;   /* the value after quote removal (malloc'd) */
	unsigned nseg; /* its parts: each quoted string, each run of unquoted characters */
	bool tilde;    /* an unquoted ~ in it (a shell's tilde expansion) */
};

struct line {
	struct assign *as;
	size_t nas, nwords;    /* the words after export */
	bool exported;	       /* the line begins with the word export */
	bool trailing_comment; /* a # word after the first word */
};

static void line_free(struct line *l)
{
	for (size_t i = 0; i < l->nas; i++)
		free(l->as[i].value);
	free(l->as);
	memset(l, 0, sizeof(*l));
}

static const char WHY_EXPANSION[] = "an expansion or escape ($, `, \\) outside single quotes: a shell's value "
				    "depends on its state, and systemd's escapes differ";
static const char WHY_OPERATOR[] = "a shell operator (; & | < > ( )): a shell runs it, systemd does not";
static const char WHY_QUOTE[] = "a quote left open at the end of the line: both readers go on into the next lines";
static const char WHY_COMMAND[] = "a command, not an assignment: a shell runs it (KEY =v and KEY= v are commands too), "
				  "systemd ignores the line or reads it as KEY=v";

/*
 * Split one line (p..end, no newline, not blank, not a comment) into words as a shell would;
 * the assignments into l. Returns NULL, or why the line is a doubt (l then partly filled).
 */
static const char *split_line(const char *p, const char *end, struct line *l, int *err)
{
	*err = 0;
	for (;;) {
		struct assign a = {0};
		char *v;
		size_t nv = 0, nl;
		bool unquoted_run = false, is_assign;
		const char *word = p;

		while (p < end && blank(*p))
			p++;
		if (p == end)
			return NULL;
		if (*p == '#') { /* a comment after the first word */
			l->trailing_comment = true;
			return NULL;
		}
		word = p;
		nl = name_len(p, end);
		is_assign = nl > 0 && p + nl < end && p[nl] == '=';
		if (is_assign) {
			a.name = p;
			a.name_len = nl;
			p += nl + 1;
		}
		v = malloc((size_t)(end - p) + 1); /* a value is never longer than what is left */
		if (!v) {
			*err = -ENOMEM;
			return NULL;
		}
		while (p < end && !blank(*p)) {
			char c = *p;
			if (c == '\'' || c == '"') {
				const char *q = memchr(p + 1, c, (size_t)(end - p - 1));
				if (!q) {
					free(v);
					return WHY_QUOTE;
				}
				if (c == '"' && (memchr(p + 1, '$', (size_t)(q - p - 1)) ||
						 memchr(p + 1, '`', (size_t)(q - p - 1)) ||
						 memchr(p + 1, '\\', (size_t)(q - p - 1)))) {
					free(v);
					return WHY_EXPANSION;
				}
				memcpy(v + nv, p + 1, (size_t)(q - p - 1));
				nv += (size_t)(q - p - 1);
				a.nseg++;
				unquoted_run = false;
				p = q + 1;
				continue;
			}
			if (c == '$' || c == '`' || c == '\\') {
				free(v);
				return WHY_EXPANSION;
			}
			if (strchr(";&|<>()", c)) {
				free(v);
				return WHY_OPERATOR;
			}
			if (c == '~')
				a.tilde = true;
			if (!unquoted_run) {
				a.nseg++;
				unquoted_run = true;
			}
			v[nv++] = c;
			p++;
		}
		v[nv] = '\0';
		if (is_assign) {
			struct assign *na = realloc(l->as, (l->nas + 1) * sizeof(*na));
			if (!na) {
				free(v);
				*err = -ENOMEM;
				return NULL;
			}
			a.value = v;
			l->as = na;
			l->as[l->nas++] = a;
		} else {
			/* the word as written: quoting makes a word no name and no export */
			size_t wlen = (size_t)(p - word);
			bool plain_name = name_len(word, p) == wlen;
			free(v);
			if (l->nwords == 0 && !l->exported && wlen == 6 && memcmp(word, "export", 6) == 0) {
				l->exported = true;
				continue; /* not a word of the assignments */
			}
			if (!(l->exported && plain_name)) /* export NAME changes no value */
				return WHY_COMMAND;
		}
		l->nwords++;
	}
}

/* Is the line's assignment a of one of keys? Its index, else -1. */
static int key_index(const struct assign *a, const char *const *keys, size_t nkeys)
{
	for (size_t k = 0; k < nkeys; k++)
		if (strlen(keys[k]) == a->name_len && memcmp(keys[k], a->name, a->name_len) == 0)
			return (int)k;
	return -1;
}

/* Why an assignment of one of the keys on line l is read differently by the two readers. */
static const char *key_doubt(const struct line *l, const struct assign *a)
{
	if (l->exported)
		return "export: a shell assigns it, systemd's EnvironmentFile= ignores the line";
	if (l->nwords > 1)
		return "more than one word: a shell makes each word its own assignment, systemd one value of the "
		       "rest of the line";
	if (l->trailing_comment)
		return "a comment after the value: a shell drops it, systemd keeps it in the value";
	if (a->nseg > 1)
		return "a value of several quoted and unquoted parts: systemd takes a quote only where the value "
		       "starts";
	if (a->tilde)
		return "an unquoted ~: a shell expands it, systemd does not";
	return NULL;
}

/* UTF-8 as systemd takes it for a key or value (utf8.c, unichar_is_valid): valid, and no
 * noncharacter (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF); else it refuses the whole file. */
static bool systemd_utf8(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		int n = ns_utf8_next((const unsigned char *)s + i, len - i, &cp);
		if (n < 0 || (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE)
			return false;
		i += (size_t)n;
	}
	return true;
}

static int set_doubt(struct ns_envfile_doubt *doubt, unsigned line, const char *p, const char *end, const char *why)
{
	doubt->line = line;
	doubt->why = why;
	doubt->text = strndup(p, (size_t)(end - p));
	return doubt->text ? -EINVAL : -ENOMEM;
}

int ns_envfile_get(const char *text, const char *const *keys, size_t nkeys, char **values, unsigned *lines,
		   struct ns_envfile_doubt *doubt)
{
	unsigned lineno = 0;
	int r = 0;

	memset(doubt, 0, sizeof(*doubt));
	for (size_t k = 0; k < nkeys; k++) {
		values[k] = NULL;
		if (lines)
			lines[k] = 0;
	}
	for (const char *p = text; p && *p;) {
		const char *start = p, *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p), *s = p;
		struct line l = {0};
		const char *why = NULL;
		int err;

		lineno++;
		p = nl ? nl + 1 : end;
		while (s < end && blank(*s))
			s++;
		if (memchr(s, '\r', (size_t)(end - s))) {
			why = "a carriage return: systemd ends the line there, a shell does not";
		} else if (s == end) {
			continue;
		} else if (*s == '#') {
			/* systemd before 254 went on into the next line after a trailing backslash */
			if (end[-1] == '\\' && *p)
				why = "a comment ending in a backslash: systemd before 254 reads the next line as "
				      "part of it, a shell does not";
			else
				continue;
		} else if (!systemd_utf8(s, (size_t)(end - s))) {
			why = "invalid UTF-8 (or a noncharacter): systemd refuses the file, a shell reads it";
		} else {
			why = split_line(s, end, &l, &err);
			if (err < 0) {
				line_free(&l);
				r = err;
				break;
			}
			for (size_t i = 0; !why && i < l.nas; i++) {
				int k = key_index(&l.as[i], keys, nkeys);
				if (k < 0)
					continue;
				why = key_doubt(&l, &l.as[i]);
				if (why)
					break;
				free(values[k]); /* the last assignment wins */
				values[k] = l.as[i].value;
				l.as[i].value = NULL;
				if (lines)
					lines[k] = lineno;
			}
		}
		line_free(&l);
		if (why) {
			r = set_doubt(doubt, lineno, start, end, why);
			break;
		}
	}
	if (r < 0)
		for (size_t k = 0; k < nkeys; k++) {
			free(values[k]);
			values[k] = NULL;
			if (lines)
				lines[k] = 0;
		}
	return r;
}

void ns_envfile_doubt_free(struct ns_envfile_doubt *doubt)
{
	free(doubt->text);
	memset(doubt, 0, sizeof(*doubt));
}

int ns_environ_get(const char *env, size_t len, const char *key, char **value)
{
	size_t klen = strlen(key);

	*value = NULL;
	for (size_t i = 0; i < len;) {
		const char *e = env + i, *nul = memchr(e, '\0', len - i);
		size_t elen = nul ? (size_t)(nul - e) : len - i;
		if (elen > klen && memcmp(e, key, klen) == 0 && e[klen] == '=') {
			*value = strndup(e + klen + 1, elen - klen - 1);
			return *value ? 0 : -ENOMEM;
		}
		i += elen + 1;
	}
	return 0;
}

/* isspace() in the C locale: what irqbalance's bitmap parsers skip around a value */
static bool space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* The value without the blanks around it (malloc'd), or NULL. */
static char *trimmed(const char *v)
{
	size_t n;

	while (space(*v))
		v++;
	n = strlen(v);
	while (n && space(v[n - 1]))
		n--;
	return strndup(v, n);
}

/* A list in the form irqbalance's cpulist_parse reads to the set numastor's parser reads:
 * decimal CPUs and ranges, nothing else (the parser refuses empty items, reversed ranges). */
static int banned_list(const char *v, unsigned limit, struct ns_cpuset *out)
{
	char *t = trimmed(v);
	int r;

	if (!t)
		return -ENOMEM;
	if (!*t || strspn(t, "0123456789,-") != strlen(t))
		r = -EINVAL;
	else
		r = ns_cpuset_parse_list_max(out, t, limit);
	free(t);
	return r;
}

/* A mask in irqbalance's form (cpumask_parse_user: the kernel's bitmap_parse): hex groups
 * separated by commas, each of at most 32 bits, a short group but the first one padded on
 * the left; written as numastor's mask parser reads it (every group but the first 8 digits). */
static int banned_mask(const char *v, unsigned limit, struct ns_cpuset *out)
{
	char *t = trimmed(v), *norm = NULL;
	size_t n = 0;
	int r = 0;

	if (!t)
		return -ENOMEM;
	norm = malloc((strlen(t) / 2 + 1) * 8 + 1); /* each group 8 digits at most, commas dropped */
	if (!norm) {
		free(t);
		return -ENOMEM;
	}
	if (!*t)
		r = -EINVAL;
	for (char *g = t; !r && g;) {
		char *comma = strchr(g, ',');
		size_t len = comma ? (size_t)(comma - g) : strlen(g);
		bool first = g == t;
		if (len == 0 || strspn(g, "0123456789abcdefABCDEF") < len) {
			r = -EINVAL; /* an empty group, a blank inside, anything but a hex digit */
			break;
		}
		while (len > 1 && *g == '0') {
			g++;
			len--;
		}
		if (len > 8) {
			r = -EINVAL; /* irqbalance: -EOVERFLOW, the mask left as far as it got */
			break;
		}
		if (!first) /* every group after the first is 32 bits */
			for (size_t z = len; z < 8; z++)
				norm[n++] = '0';
		memcpy(norm + n, g, len);
		n += len;
		g = comma ? comma + 1 : NULL;
	}
	norm[n] = '\0';
	if (!r)
		r = ns_cpuset_parse_mask_max(out, norm, limit);
	free(norm);
	free(t);
	return r;
}

int ns_irqbalance_banned(const char *mask, const char *list, unsigned limit, struct ns_cpuset *out,
			 enum ns_ban_from *from)
{
	int r;

	ns_cpuset_clear(out);
	if (limit == 0 || limit > NS_IRQBALANCE_NR_CPUS)
		limit = NS_IRQBALANCE_NR_CPUS;
	if (mask && *mask) {
		*from = NS_BAN_MASK;
		r = banned_mask(mask, limit, out);
	} else if (list && *list) {
		*from = NS_BAN_LIST;
		r = banned_list(list, limit, out);
	} else {
		*from = NS_BAN_NONE;
		out->known = true;
		return 0;
	}
	if (r < 0)
		ns_cpuset_clear(out); /* never a partial set */
	return r;
}
