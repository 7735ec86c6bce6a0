/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * irqbalance's ban list (lib/read/envfile.h) against its real readers. Byte 0 bit 0 picks the input:
 * an options file (0) or a daemon's environ (1, NUL-separated); the rest is the text.
 *
 * An options file numastor reads without a doubt must give, for each of irqbalance's two
 * variables, the value systemd's EnvironmentFile= gives (a reference reader below, written
 * from systemd's env-file.c state machine), and that value's line must be a plain assignment a
 * shell gives the same value (KEY=v, KEY='v', KEY="v"). A doubt names a line of the file as it
 * is. An environ gives getenv()'s value: the first entry. Whatever value numastor then turns
 * into banned CPUs must be what irqbalance 1.9's bitmap parsers (a second reference, from its
 * bitmap.c) read, with no error: never a set narrower or wider than irqbalance's.
 */
#define _GNU_SOURCE
#include "fuzz-common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read/envfile.h"

#define NR 4096	   /* irqbalance's NR_CPUS */
#define LIMIT 1024 /* the machine's kernel_max + 1 */

static const char *const keys[] = {NS_IRQBALANCE_BANNED_MASK, NS_IRQBALANCE_BANNED_LIST};

/* --- systemd's EnvironmentFile= reader: the last value of key, NULL when none ------------- */
static bool sd_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool sd_nl(char c)
{
	return c == '\n' || c == '\r';
}

struct sd {
	char *key, *val;
	size_t nk, nv, key_ws, val_ws; /* where the trailing whitespace began, SIZE_MAX: none */
	char *result[2];
	bool have[2];
};

static void sd_add(char **s, size_t *n, char c)
{
	(*s)[(*n)++] = c;
}

static void sd_push(struct sd *p, bool chomp)
{
	size_t nk = p->key_ws != SIZE_MAX ? p->key_ws : p->nk, nv = chomp && p->val_ws != SIZE_MAX ? p->val_ws : p->nv;

	for (int k = 0; k < 2; k++)
		if (strlen(keys[k]) == nk && memcmp(p->key, keys[k], nk) == 0) {
			free(p->result[k]);
			p->result[k] = strndup(p->val, nv);
			p->have[k] = true;
		}
	p->nk = p->nv = 0;
}

static void systemd_read(const char *text, struct sd *p)
{
	enum { PRE_KEY, KEY, PRE_VALUE, VALUE, VALUE_ESC, SQ, DQ, DQ_ESC, COMMENT, COMMENT_ESC } st = PRE_KEY;
	size_t len = strlen(text);

	memset(p, 0, sizeof(*p));
	p->key = malloc(len + 1);
	p->val = malloc(2 * len + 1);
	for (const char *s = text; *s; s++) {
		char c = *s;
		switch (st) {
		case PRE_KEY:
			if (c == '#' || c == ';') {
				st = COMMENT;
			} else if (!sd_ws(c)) {
				st = KEY;
				p->nk = 0;
				p->key_ws = SIZE_MAX;
				sd_add(&p->key, &p->nk, c);
			}
			break;
		case KEY:
			if (sd_nl(c)) {
				st = PRE_KEY;
			} else if (c == '=') {
				st = PRE_VALUE;
				p->nv = 0;
				p->val_ws = SIZE_MAX;
			} else {
				if (!sd_ws(c))
					p->key_ws = SIZE_MAX;
				else if (p->key_ws == SIZE_MAX)
					p->key_ws = p->nk;
				sd_add(&p->key, &p->nk, c);
			}
			break;
		case PRE_VALUE:
			if (sd_nl(c)) {
				sd_push(p, false);
				st = PRE_KEY;
			} else if (c == '\'') {
				st = SQ;
			} else if (c == '"') {
				st = DQ;
			} else if (c == '\\') {
				st = VALUE_ESC;
			} else if (!sd_ws(c)) {
				st = VALUE;
				sd_add(&p->val, &p->nv, c);
			}
			break;
		case VALUE:
			if (sd_nl(c)) {
				sd_push(p, true);
				st = PRE_KEY;
			} else if (c == '\\') {
				st = VALUE_ESC;
				p->val_ws = SIZE_MAX;
			} else {
				if (!sd_ws(c))
					p->val_ws = SIZE_MAX;
				else if (p->val_ws == SIZE_MAX)
					p->val_ws = p->nv;
				sd_add(&p->val, &p->nv, c);
			}
			break;
		case VALUE_ESC:
			st = VALUE;
			if (!sd_nl(c))
				sd_add(&p->val, &p->nv, c);
			break;
		case SQ:
			if (c == '\'')
				st = PRE_VALUE;
			else
				sd_add(&p->val, &p->nv, c);
			break;
		case DQ:
			if (c == '"')
				st = PRE_VALUE;
			else if (c == '\\')
				st = DQ_ESC;
			else
				sd_add(&p->val, &p->nv, c);
			break;
		case DQ_ESC:
			st = DQ;
			if (strchr("\"\\`$", c)) {
				sd_add(&p->val, &p->nv, c);
			} else if (c != '\n') {
				sd_add(&p->val, &p->nv, '\\');
				sd_add(&p->val, &p->nv, c);
			}
			break;
		case COMMENT:
			if (c == '\\')
				st = COMMENT_ESC;
			else if (sd_nl(c))
				st = PRE_KEY;
			break;
		case COMMENT_ESC:
			st = sd_nl(c) ? PRE_KEY : COMMENT;
			break;
		}
	}
	if (st == PRE_VALUE || st == VALUE || st == VALUE_ESC || st == SQ || st == DQ || st == DQ_ESC)
		sd_push(p, st == VALUE);
	free(p->key);
	free(p->val);
}

/* --- irqbalance 1.9's bitmap parsers (bitmap.c), its return value and its bits ------------ */
static bool ib_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static int ib_parselist(const char *buf, bool *bits)
{
	size_t buflen = strlen(buf);
	int c = 0, old_c, totaldigits = 0;

	memset(bits, 0, NR);
	do {
		int exp_digit = 1, in_range = 0;
		long a = 0, b = 0;
		while (buflen) {
			old_c = c;
			c = (unsigned char)*buf++;
			buflen--;
			if (ib_space(c))
				continue;
			if (totaldigits && c && ib_space(old_c))
				return -EINVAL;
			if (c == '\0' || c == ',')
				break;
			if (c == '-') {
				if (exp_digit || in_range)
					return -EINVAL;
				b = 0;
				in_range = 1;
				exp_digit = 1;
				continue;
			}
			if (c < '0' || c > '9')
				return -EINVAL;
			b = b * 10 + (c - '0');
			if (b > 1000000000L)
				return -ERANGE; /* (irqbalance's int overflows: undefined, never accepted here) */
			if (!in_range)
				a = b;
			exp_digit = 0;
			totaldigits++;
		}
		if (!(a <= b))
			return -EINVAL;
		if (b >= NR)
			return -ERANGE;
		while (a <= b)
			bits[a++] = true;
	} while (buflen && c == ',');
	return 0;
}

static int ib_hex(int c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

static int ib_parse(const char *buf, bool *bits)
{
	size_t buflen = strlen(buf);
	int c = 0, old_c, totaldigits = 0, nchunks = 0, nbits = 0;

	memset(bits, 0, NR);
	do {
		unsigned long chunk = 0;
		int ndigits = 0;
		while (buflen) {
			old_c = c;
			c = (unsigned char)*buf++;
			buflen--;
			if (ib_space(c))
				continue;
			if (totaldigits && c && ib_space(old_c))
				return 1; /* irqbalance: 0, the mask as far as it got (numastor must refuse) */
			if (c == '\0' || c == ',')
				break;
			if (ib_hex(c) < 0)
				return -EINVAL;
			if (chunk & ~((1UL << 28) - 1))
				return -EOVERFLOW;
			chunk = (chunk << 4) | (unsigned long)ib_hex(c);
			ndigits++;
			totaldigits++;
		}
		if (ndigits == 0)
			return -EINVAL;
		if (nchunks == 0 && chunk == 0)
			continue;
		memmove(bits + 32, bits, NR - 32); /* shift left by a chunk */
		for (int i = 0; i < 32; i++)
			bits[i] = (chunk >> i) & 1;
		nchunks++;
		nbits += nchunks == 1 ? 32 - __builtin_clz((unsigned)chunk) : 32;
		if (nbits > NR)
			return -EOVERFLOW;
	} while (buflen && c == ',');
	return 0;
}

/* numastor's banned set against irqbalance's for the same two values */
static void against_irqbalance(const char *mask, const char *list)
{
	struct ns_cpuset s = {0};
	enum ns_ban_from from;
	static bool bits[NR];
	int r = ns_irqbalance_banned(mask, list, LIMIT, &s, &from);

	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -ERANGE || r == -ENOMEM, "banned: %d", r);
		FUZZ_ASSERT(!s.known && ns_cpuset_count(&s) == 0, "a failed ban list left a set");
		return;
	}
	FUZZ_ASSERT(s.known, "banned set not known");
	if (mask && *mask) {
		FUZZ_ASSERT(from == NS_BAN_MASK, "mask '%s' set, read from %d", mask, from);
		FUZZ_ASSERT(ib_parse(mask, bits) == 0, "mask '%s' taken, irqbalance fails on it", mask);
	} else if (list && *list) {
		FUZZ_ASSERT(from == NS_BAN_LIST, "list '%s' set, read from %d", list, from);
		FUZZ_ASSERT(ib_parselist(list, bits) == 0, "list '%s' taken, irqbalance fails on it", list);
	} else {
		FUZZ_ASSERT(from == NS_BAN_NONE && ns_cpuset_count(&s) == 0, "nothing set, something banned");
		ns_cpuset_clear(&s);
		return;
	}
	for (unsigned cpu = 0; cpu < NR; cpu++)
		FUZZ_ASSERT(bits[cpu] == ns_cpuset_test(&s, cpu),
			    "mask '%s' list '%s': CPU %u irqbalance %d numastor %d", mask ? mask : "(unset)",
			    list ? list : "(unset)", cpu, bits[cpu], ns_cpuset_test(&s, cpu));
	FUZZ_ASSERT(ns_cpuset_first(&s) == -1 || (unsigned)ns_cpuset_first(&s) < LIMIT, "a CPU past the limit");
	ns_cpuset_clear(&s);
}

/* The line n (1-based) of text, without its newline (malloc'd). */
static char *line_of(const char *text, unsigned n)
{
	const char *p = text;

	for (unsigned i = 1; i < n && p; i++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	FUZZ_ASSERT(p, "line %u is past the end", n);
	return strndup(p, strcspn(p, "\n"));
}

/* The shell's side: the line assigning key is a plain KEY=v, KEY='v' or KEY="v", nothing else. */
static void plain_assignment(const char *line, const char *key, const char *value)
{
	const char *p = line + strspn(line, " \t");
	size_t kl = strlen(key), vl = strlen(value), rest;

	FUZZ_ASSERT(strncmp(p, key, kl) == 0 && p[kl] == '=', "'%s' does not assign %s", line, key);
	p += kl + 1;
	rest = strlen(p);
	while (rest && (p[rest - 1] == ' ' || p[rest - 1] == '\t'))
		rest--;
	if (rest == vl)
		FUZZ_ASSERT(memcmp(p, value, vl) == 0 && !strpbrk(value, " \t'\"$`\\;&|<>()~"),
			    "'%s': %s='%s' unquoted", line, key, value);
	else
		FUZZ_ASSERT(rest == vl + 2 && (p[0] == '\'' || p[0] == '"') && p[rest - 1] == p[0] &&
				    memcmp(p + 1, value, vl) == 0 && !memchr(value, p[0], vl),
			    "'%s': %s='%s' is no quoted value", line, key, value);
}

static void options_file(const char *text)
{
	struct ns_envfile_doubt doubt;
	struct sd sd;
	char *v[2];
	unsigned lines[2];
	int r = ns_envfile_get(text, keys, 2, v, lines, &doubt);

	if (r == -EINVAL) {
		char *l = line_of(text, doubt.line);
		FUZZ_ASSERT(doubt.why && doubt.text && strcmp(doubt.text, l) == 0, "doubt at line %u: '%s' is not '%s'",
			    doubt.line, doubt.text ? doubt.text : "", l);
		FUZZ_ASSERT(!v[0] && !v[1], "a doubt with values");
		free(l);
		ns_envfile_doubt_free(&doubt);
		return;
	}
	FUZZ_ASSERT(r == 0, "envfile: %d", r);
	systemd_read(text, &sd);
	for (int k = 0; k < 2; k++) {
		FUZZ_ASSERT(!v[k] == !sd.have[k], "%s: numastor %s, systemd %s", keys[k], v[k] ? v[k] : "(unset)",
			    sd.have[k] ? sd.result[k] : "(unset)");
		if (v[k]) {
			char *l = line_of(text, lines[k]);
			FUZZ_ASSERT(strcmp(v[k], sd.result[k]) == 0, "%s: numastor '%s', systemd '%s'", keys[k], v[k],
				    sd.result[k]);
			plain_assignment(l, keys[k], v[k]);
			free(l);
		}
		free(sd.result[k]);
	}
	against_irqbalance(v[0], v[1]);
	free(v[0]);
	free(v[1]);
}

/* getenv() over the entries */
static const char *ref_getenv(const char *env, size_t len, const char *key)
{
	size_t kl = strlen(key);

	for (size_t i = 0; i < len; i += strnlen(env + i, len - i) + 1)
		if (strnlen(env + i, len - i) > kl && memcmp(env + i, key, kl) == 0 && env[i + kl] == '=')
			return env + i + kl + 1;
	return NULL;
}

static void environ_block(const char *env, size_t len)
{
	char *v[2];

	for (int k = 0; k < 2; k++) {
		const char *want = ref_getenv(env, len, keys[k]);
		FUZZ_ASSERT(ns_environ_get(env, len, keys[k], &v[k]) == 0, "environ: out of memory");
		FUZZ_ASSERT(!want == !v[k], "%s: getenv %s, numastor %s", keys[k], want ? "set" : "unset",
			    v[k] ? "set" : "unset");
		if (want)
			FUZZ_ASSERT(strncmp(want, v[k], env + len - want) == 0 &&
					    strlen(v[k]) == strnlen(want, (size_t)(env + len - want)),
				    "%s: getenv '%s', numastor '%s'", keys[k], want, v[k]);
	}
	against_irqbalance(v[0], v[1]);
	free(v[0]);
	free(v[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (size < 1)
		return 0;
	text = fuzz_strndup(data + 1, size - 1); /* NUL-terminated: the text up to its first NUL */
	if (data[0] & 1)
		environ_block(text, size - 1);
	else
		options_file(text);
	free(text);
	return 0;
}
