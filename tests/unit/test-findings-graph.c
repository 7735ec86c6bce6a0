/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The causes-and-effects graph (issue 30, item 1): lib/model/findings.c's table against the one
 * numastor-findings(7) prints (CAUSES AND EFFECTS), row by row, and the graph's own shape:
 * every effect has a cause, every cause it names is a rule's id listed before it (so the fold
 * names each effect's root cause, and there is no circle), and a cause names none.
 *
 *   test-findings-graph MAN_SOURCE (man/numastor-findings.7.scd)
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "model/findings.h"
#include "tap.h"

struct row {
	char id[64], role[16], causes[256];
};

/* The table's rows: "|  id", ":  role", ":  causes" after the "[[ *id*" head and its two
 * ":<" lines, up to the first blank line. */
static size_t read_table(const char *path, struct row *rows, size_t cap)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t n = 0;
	int in = 0, field = 0;

	if (!f) {
		perror(path);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!in) {
			in = strncmp(line, "[[ *id*", 7) == 0;
			continue;
		}
		if (line[0] == '\0')
			break;
		if (strncmp(line, ":<", 2) == 0)
			continue; /* the head's other columns */
		if (strncmp(line, "|  ", 3) == 0) {
			if (n == cap)
				break;
			snprintf(rows[n++].id, sizeof(rows[0].id), "%s", line + 3);
			field = 1;
		} else if (strncmp(line, ":  ", 3) == 0 && n) {
			if (field == 1)
				snprintf(rows[n - 1].role, sizeof(rows[0].role), "%s", line + 3);
			else if (field == 2)
				snprintf(rows[n - 1].causes, sizeof(rows[0].causes), "%s", line + 3);
			field++;
		}
	}
	fclose(f);
	return n;
}

/* The table's causes of kind k as the man page writes them: "a, b" or "-". */
static void causes_text(const struct ns_finding_kind *k, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t c = 0; k->causes[c] && at < len; c++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", c ? ", " : "", k->causes[c]);
	if (!buf[0])
		snprintf(buf, len, "-");
}

static size_t position(const char *id)
{
	for (size_t i = 0; i < ns_nfinding_kinds; i++)
		if (strcmp(ns_finding_kinds[i].id, id) == 0)
			return i;
	return (size_t)-1;
}

int main(int argc, char **argv)
{
	static struct row rows[128];
	size_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: test-findings-graph MAN_SOURCE\n");
		return 2;
	}
	n = read_table(argv[1], rows, 128);
	CHECK(n == ns_nfinding_kinds);
	for (size_t i = 0; i < n && i < ns_nfinding_kinds; i++) {
		const struct ns_finding_kind *k = &ns_finding_kinds[i];
		char causes[256];
		causes_text(k, causes, sizeof(causes));
		CHECK_STR(rows[i].id, k->id);
		CHECK_STR(rows[i].role, k->role == NS_ROLE_EFFECT ? "effect" : "cause");
		CHECK_STR(rows[i].causes, causes);
	}
	for (size_t i = 0; i < ns_nfinding_kinds; i++) {
		const struct ns_finding_kind *k = &ns_finding_kinds[i];
		/* an effect has a cause; a cause names none */
		CHECK((k->role == NS_ROLE_EFFECT) == (k->causes[0] != NULL));
		CHECK(ns_finding_kind(k->id) == k);
		for (size_t c = 0; k->causes[c]; c++) {
			size_t at = position(k->causes[c]);
			if (at == (size_t)-1 || at >= i)
				fprintf(stderr, "%s: its cause %s is %s\n", k->id, k->causes[c],
					at == (size_t)-1 ? "no rule's id" : "not listed before it");
			CHECK(at != (size_t)-1 && at < i);
			/* each cause once */
			for (size_t e = 0; e < c; e++)
				CHECK(strcmp(k->causes[e], k->causes[c]) != 0);
		}
		/* the ids are unique */
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(ns_finding_kinds[j].id, k->id) != 0);
	}
	CHECK(ns_finding_kind("no-such-rule") == NULL);
	return tap_done("findings-graph");
}
