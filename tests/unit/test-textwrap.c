/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The text report's table and wrapping helper (cmd/textwrap.h): where lines break, the
 * ellipsis, widths in columns of UTF-8 text, and that no line is wider than asked. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "textwrap.h"

static char *buf;
static size_t len;

static struct tw_page page(bool utf8)
{
	buf = NULL;
	len = 0;
	return (struct tw_page){.out = open_memstream(&buf, &len), .utf8 = utf8};
}

static char *done(struct tw_page *pg)
{
	fclose(pg->out);
	return buf;
}

static char *wrap(bool utf8, size_t width, size_t ind1, size_t ind2, const char *text)
{
	struct tw_page pg = page(utf8);
	tw_wrap(&pg, width, ind1, ind2, NULL, text);
	return done(&pg);
}

/* Every line of s at most width columns; the number of lines. */
static size_t lines_within(const char *s, size_t width)
{
	size_t n = 0;
	for (const char *l = s; *l; n++) {
		size_t k = strcspn(l, "\n");
		size_t w = tw_width_n(l, k);
		if (w > width)
			fprintf(stderr, "line of %zu columns > %zu: '%.*s'\n", w, width, (int)k, l);
		CHECK(w <= width);
		l += k + (l[k] == '\n');
	}
	return n;
}

static void widths(void)
{
	CHECK(tw_width("") == 0);
	CHECK(tw_width("nvme0n1") == 7);
	CHECK(tw_width("\u65e5\u672c") == 4);	      /* East Asian wide: two each */
	CHECK(tw_width("e\u0301") == 1);	      /* a combining mark takes none */
	CHECK(tw_width("\033[1;31mred\033[0m") == 3); /* escapes take none */
	CHECK(tw_width("caf\u00e9 \u2026") == 6);     /* two-byte and three-byte, one each */
	CHECK(tw_width_n("\u65e5\u672c", 3) == 2);    /* the first n bytes only */
	CHECK(tw_width("\xf0\x9f\x98\x80") == 2);     /* an emoji: two */
}

static void pieces(void)
{
	struct tw_page pg = {.utf8 = true}, ascii = {.utf8 = false};
	const char *next;
	bool ell;
	size_t k;

	k = tw_piece(&pg, "short", 10, &next, &ell); /* fits: all of it */
	CHECK(k == 5 && !*next && !ell);
	k = tw_piece(&pg, "0-3,8-11,16", 9, &next, &ell); /* after the last ',' that fits */
	CHECK(k == 9 && strcmp(next, "16") == 0 && !ell);
	k = tw_piece(&pg, "0000:00/0000:01", 10, &next, &ell); /* after a '/' */
	CHECK(k == 8 && strcmp(next, "0000:01") == 0 && !ell);
	k = tw_piece(&pg, "1.7 TiB", 5, &next, &ell); /* at a space, which goes */
	CHECK(k == 3 && strcmp(next, "TiB") == 0 && !ell);
	k = tw_piece(&pg, "abc-def ghi", 7, &next, &ell); /* '-' is no break: before the space */
	CHECK(k == 7 && strcmp(next, "ghi") == 0 && !ell);
	k = tw_piece(&pg, "nvme-multipath", 13, &next, &ell); /* nowhere: ellipsized, not cut */
	CHECK(k == 12 && !*next && ell);
	k = tw_piece(&ascii, "nvme-multipath", 13, &next, &ell); /* "..." takes three */
	CHECK(k == 10 && !*next && ell);
	k = tw_piece(&pg, "paths-disagree,x", 8, &next, &ell); /* the word, then what follows */
	CHECK(k == 7 && strcmp(next, "x") == 0 && ell);
	k = tw_piece(&pg, "\u65e5\u672c\u8a9e\u6587", 5, &next, &ell); /* wide: 2 + 2 + ellipsis */
	CHECK(k == 6 && ell && !*next);
}

static void wrapping(void)
{
	char *s;

	s = wrap(true, 20, 0, 2, "the quick brown fox jumps over the lazy dog");
	CHECK_STR(s, "the quick brown fox\n  jumps over the\n  lazy dog\n");
	lines_within(s, 20);
	free(s);
	s = wrap(true, 20, 2, 4, "cpus 0-3,8-11,16-19,24-27,32-35 on node 1");
	/* a word wider than the line breaks after its commas */
	CHECK_STR(s, "  cpus\n    0-3,8-11,16-19,\n    24-27,32-35 on\n    node 1\n");
	lines_within(s, 20);
	free(s);
	s = wrap(true, 12, 0, 2, "root /sys/devices/pci0000:00/0000:00:04.0/nvme");
	CHECK(strstr(s, "/sys/\n") != NULL); /* after a '/' */
	lines_within(s, 12);
	free(s);
	s = wrap(true, 10, 0, 0, "model SAMSUNG-MZQL2960HCJR end");
	CHECK_STR(s, "model\nSAMSUNG-M\u2026\nend\n"); /* no break in it: ellipsized */
	lines_within(s, 10);
	free(s);
	s = wrap(false, 10, 0, 0, "model SAMSUNG-MZQL2960HCJR end");
	CHECK_STR(s, "model\nSAMSUNG...\nend\n");
	lines_within(s, 10);
	free(s);
	s = wrap(true, 9, 0, 0, "\u65e5\u672c\u8a9e \u65e5\u672c\u8a9e\u6587\u5b57");
	CHECK_STR(s, "\u65e5\u672c\u8a9e\n\u65e5\u672c\u8a9e\u6587\u2026\n"); /* 6 columns, then 8 + 1 */
	lines_within(s, 9);
	free(s);
	s = wrap(true, 40, 0, 2, "");
	CHECK_STR(s, "\n");
	free(s);
	s = wrap(true, 40, 0, 2, "two  spaces kept");
	CHECK_STR(s, "two  spaces kept\n");
	free(s);
}

static void colour(void)
{
	struct tw_page pg = page(true);
	pg.color = true;
	tw_wrap(&pg, 10, 0, 0, "\033[1m", "aaaa bbbb cccc");
	CHECK_STR(done(&pg), "\033[1maaaa bbbb\033[0m\n\033[1mcccc\033[0m\n");
	lines_within(buf, 10);
	free(buf);
}

static void tables(void)
{
	static const char *const head[] = {"NAME", "TYPE", "SIZE", "CPUS"};
	static const char *const r1[] = {"nvme0n1", "nvme-multipath", "1.7 TiB", "0-3,8-11,16-19,24-27"};
	static const char *const r2[] = {"sda", "scsi", NULL, "-"};
	struct tw_table tb;
	struct tw_page pg;
	char *s;

	for (size_t width = 20; width <= 80; width += 3) {
		tw_table_init(&tb, head, 4);
		tb.keep = 1u << 0;
		tw_table_row(&tb, NULL, r1);
		tw_table_row(&tb, NULL, r2);
		pg = page(true);
		tw_table_print(&pg, &tb, width, 2, NULL);
		s = done(&pg);
		lines_within(s, width);
		if (width >= 26) /* a name keeps its width while others can give */
			CHECK(strstr(s, "nvme0n1") != NULL);
		CHECK(strstr(s, "  ?") != NULL); /* a NULL cell */
		/* no cell cut mid-word: each word whole, or ellipsized */
		CHECK(strstr(s, "nvme-multipath") || strstr(s, "\u2026"));
		CHECK(!strstr(s, "multipat\n") && !strstr(s, "nvme-m\n"));
		if (width >= 60)
			CHECK_STR(s, "  NAME     TYPE            SIZE     CPUS\n"
				     "  nvme0n1  nvme-multipath  1.7 TiB  0-3,8-11,16-19,24-27\n"
				     "  sda      scsi            ?        -\n");
		free(s);
		tw_table_free(&tb);
	}
	/* narrow: the CPU list gives first (it can break) down to its heading's width, after its
	 * commas; its word that still does not fit is ellipsized */
	tw_table_init(&tb, head, 4);
	tw_table_row(&tb, NULL, r1);
	pg = page(true);
	tw_table_print(&pg, &tb, 36, 0, NULL);
	s = done(&pg);
	CHECK_STR(s, "NAME     TYPE            SIZE  CPUS\n"
		     "nvme0n1  nvme-multipath  1.7   0-3,\n"
		     "                         TiB   8-11,\n"
		     "                               16-1\u2026\n"
		     "                               24-27\n");
	lines_within(s, 36);
	free(s);
	tw_table_free(&tb);
}

int main(void)
{
	widths();
	pieces();
	wrapping();
	colour();
	tables();
	return tap_done("textwrap");
}
