/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "base/cpuset.h"
#include "tap.h"

static char *fmt(const struct ns_cpuset *s)
{
	static char buf[256];
	char *t;
	if (ns_cpuset_format(s, &t) < 0)
		return NULL;
	snprintf(buf, sizeof(buf), "%s", t);
	free(t);
	return buf;
}

int main(void)
{
	struct ns_cpuset a = {0}, b = {0};

	CHECK(ns_cpuset_parse_list(&a, "0-3,8,10-11") == 0);
	CHECK(a.known);
	CHECK(ns_cpuset_count(&a) == 7);
	CHECK_STR(fmt(&a), "0-3,8,10-11");
	/* blk-mq cpu_list of a single-queue disk: comma and space */
	CHECK(ns_cpuset_parse_list(&b, "0, 1, 2, 3") == 0);
	CHECK_STR(fmt(&b), "0-3");
	CHECK(ns_cpuset_subset(&b, &a));
	CHECK(!ns_cpuset_subset(&a, &b));
	CHECK(ns_cpuset_intersects(&a, &b));
	/* empty list is a known, empty set */
	CHECK(ns_cpuset_parse_list(&b, "") == 0);
	CHECK(b.known && ns_cpuset_count(&b) == 0);
	CHECK_STR(fmt(&b), "");
	/* garbage is refused and leaves the set unknown */
	CHECK(ns_cpuset_parse_list(&b, "banana") == -EINVAL);
	CHECK(!b.known);
	CHECK(ns_cpuset_parse_list(&b, "3-1") == -EINVAL);
	CHECK(ns_cpuset_parse_list(&b, "1,") == -EINVAL);
	CHECK(ns_cpuset_parse_list(&b, "0-99999999") == -ERANGE);
	/* a number past unsigned int is refused, not wrapped round to CPU 0 */
	CHECK(ns_cpuset_parse_list(&b, "4294967296") == -ERANGE);
	CHECK(!b.known);
	/* hex masks, with 32-bit groups */
	CHECK(ns_cpuset_parse_mask(&b, "00000001,00000003") == 0);
	CHECK_STR(fmt(&b), "0-1,32");
	CHECK(ns_cpuset_parse_mask(&b, "ff") == 0);
	CHECK_STR(fmt(&b), "0-7");
	CHECK(ns_cpuset_parse_mask(&b, "xyz") == -EINVAL);
	/*
	 * The kernel's own forms: "%*pbl"/"%*pb" of a NULL mask is "(null)" right-justified to
	 * nr_cpu_ids columns (cpu/nohz_full without nohz_full=): 90 blanks on a 96-CPU machine,
	 * none on four CPUs; an empty set, known, in either parser. Padding around a real list or
	 * mask is trimmed; "(null)" with anything else beside it is still garbage.
	 */
	{
		char padded[128];
		snprintf(padded, sizeof(padded), "%96s", "(null)"); /* 90 blanks */
		CHECK(strlen(padded) == 96);
		CHECK(ns_cpuset_parse_list(&b, padded) == 0);
		CHECK(b.known && ns_cpuset_count(&b) == 0);
		CHECK(ns_cpuset_parse_mask(&b, padded) == 0);
		CHECK(b.known && ns_cpuset_count(&b) == 0);
		CHECK(ns_cpuset_parse_list(&b, "(null)") == 0);
		CHECK(b.known && ns_cpuset_count(&b) == 0);
		CHECK(ns_cpuset_parse_list(&b, "  (null)") == 0); /* possible_cpus=8: two blanks */
		CHECK(b.known && ns_cpuset_count(&b) == 0);
		CHECK(ns_cpuset_parse_list(&b, "(null)  \n") == 0); /* left-justified, trailing newline */
		CHECK(b.known && ns_cpuset_count(&b) == 0);
		CHECK(ns_cpuset_parse_list(&b, "  8-15") == 0);
		CHECK_STR(fmt(&b), "8-15");
		CHECK(ns_cpuset_parse_mask(&b, "   ff00 \n") == 0);
		CHECK_STR(fmt(&b), "8-15");
		CHECK(ns_cpuset_parse_list(&b, "(null),3") == -EINVAL);
		CHECK(!b.known);
		CHECK(ns_cpuset_parse_list(&b, "(nul)") == -EINVAL);
		CHECK(ns_cpuset_parse_list(&b, "( null )") == -EINVAL);
		CHECK(ns_cpuset_parse_mask(&b, "(null)x") == -EINVAL);
		CHECK(ns_cpuset_parse_mask(&b, "f f") == -EINVAL);
		CHECK(ns_cpuset_parse_mask(&b, "   ") == -EINVAL);
		CHECK(!b.known);
	}
	/* big machines: no NR_CPUS */
	CHECK(ns_cpuset_parse_list(&b, "0-447") == 0);
	CHECK(ns_cpuset_count(&b) == 448);
	CHECK(ns_cpuset_next(&b, 446) == 447);
	CHECK(ns_cpuset_next(&b, 447) == -1);
	CHECK(ns_cpuset_parse_list(&a, "64-127") == 0);
	CHECK(ns_cpuset_first(&a) == 64);
	CHECK(ns_cpuset_copy(&b, &a) == 0 && ns_cpuset_equal(&a, &b));
	/* fail closed: a CPU at or beyond the limit (kernel_max + 1) is an error, never a subset */
	CHECK(ns_cpuset_parse_list_max(&b, "0-7", 8) == 0 && ns_cpuset_count(&b) == 8);
	CHECK(ns_cpuset_parse_list_max(&b, "0-8", 8) == -ERANGE && !b.known && ns_cpuset_count(&b) == 0);
	CHECK(ns_cpuset_parse_list_max(&b, "3,8", 8) == -ERANGE && !b.known);
	CHECK(ns_cpuset_parse_list_max(&b, "0-1048575", 8192) == -ERANGE && !b.known);
	CHECK(ns_cpuset_parse_mask_max(&b, "ff", 8) == 0 && ns_cpuset_count(&b) == 8);
	CHECK(ns_cpuset_parse_mask_max(&b, "100", 8) == -ERANGE && !b.known);
	CHECK(ns_cpuset_parse_mask_max(&b, "00000000,000000ff", 8) == 0 && ns_cpuset_count(&b) == 8);
	CHECK(ns_cpuset_parse_mask_max(&b, "1,00000000", 32) == -ERANGE);
	CHECK(ns_cpuset_parse_mask_max(&b, "00000000", 1) == 0 && b.known && ns_cpuset_count(&b) == 0);
	/* the kernel's decimal form only: no leading zeros, signs or hex in a list */
	CHECK(ns_cpuset_parse_list(&b, "01") == -EINVAL);
	CHECK(ns_cpuset_parse_list(&b, "+1") == -EINVAL);
	CHECK(ns_cpuset_parse_list(&b, "0x1") == -EINVAL);
	CHECK(ns_cpuset_parse_list(&b, "0-3,") == -EINVAL && !b.known);
	CHECK(ns_cpuset_parse_list(&b, ",0") == -EINVAL);
	CHECK(ns_cpuset_parse_list(&b, "0--3") == -EINVAL);
	/* mask groups: no empty group, no stray characters */
	CHECK(ns_cpuset_parse_mask(&b, ",ff") == -EINVAL);
	CHECK(ns_cpuset_parse_mask(&b, "ff,") == -EINVAL);
	CHECK(ns_cpuset_parse_mask(&b, "ff,,00000000") == -EINVAL);
	CHECK(ns_cpuset_parse_mask(&b, "0xff") == -EINVAL);
	CHECK(ns_cpuset_parse_mask(&b, "ffffffff,ffffffff,ffffffff") == 0 && ns_cpuset_count(&b) == 96);
	CHECK(ns_cpuset_parse_mask(&b, "80000000,00000000,00000001") == 0);
	CHECK_STR(fmt(&b), "0,95");
	/* any width (issue 17: 3.x cpumap / local_cpus / cpuaffinity): a first group only as wide
	 * as nr_cpu_ids needs, leading zero groups, NR_CPUS-wide masks */
	CHECK(ns_cpuset_parse_mask(&b, "ff,00000000,00000000,00000000,00000000") == 0);
	CHECK_STR(fmt(&b), "128-135");
	CHECK(ns_cpuset_parse_mask(&b, "00,00000000,00000000,00000000,0000ff00") == 0);
	CHECK_STR(fmt(&b), "8-15");
	CHECK(ns_cpuset_parse_mask(&b, "00000000,00000000,00000000,00000000,00000000,00000000,00000000,ff0000ff") == 0);
	CHECK_STR(fmt(&b), "0-7,24-31");
	{
		/* 8192 bits (kernel_max 8191): 256 groups, CPU 8191 and CPU 0 */
		static char wide[256 * 9];
		for (int g = 0; g < 256; g++)
			memcpy(wide + 9 * g, g == 0 ? "80000000," : g == 255 ? "00000001" : "00000000,", 9);
		CHECK(ns_cpuset_parse_mask_max(&b, wide, 8192) == 0);
		CHECK_STR(fmt(&b), "0,8191");
		CHECK(ns_cpuset_parse_mask_max(&b, wide, 8191) == -ERANGE && !b.known);
	}
	/* ranges set word-wise, across word boundaries */
	CHECK(ns_cpuset_parse_list(&b, "60-70,127,128-130") == 0);
	CHECK_STR(fmt(&b), "60-70,127-130");
	CHECK(ns_cpuset_parse_list(&b, "63-64") == 0 && ns_cpuset_count(&b) == 2);
	CHECK(ns_cpuset_parse_list(&b, "0-63") == 0 && ns_cpuset_count(&b) == 64 && b.nwords == 1);
	CHECK(ns_cpuset_parse_list(&b, "5") == 0 && b.nwords == 1);
	/* cost: the 6 KB bundle of 0-1048575 ranges took 88 s set one CPU at a time */
	{
		char *big = malloc(700 * 11 + 1);
		struct timespec t0, t1;
		size_t len = 0;
		for (int i = 0; i < 700; i++)
			len += (size_t)sprintf(big + len, "%s0-1048575", i ? "," : "");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK(ns_cpuset_parse_list(&b, big) == 0 && ns_cpuset_count(&b) == 1048576);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CHECK((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 < 1.0);
		/* beyond kernel_max it costs nothing: refused before any storage */
		CHECK(ns_cpuset_parse_list_max(&b, big, 8192) == -ERANGE && b.nwords == 0);
		free(big);
	}
	ns_cpuset_clear(&a);
	ns_cpuset_clear(&b);
	/* a set held in its one word, grown onto the heap and copied: the CPUs stay */
	{
		struct ns_cpuset one = {0}, two = {0};
		CHECK(ns_cpuset_set(&one, 3) == 0 && ns_cpuset_set(&one, 63) == 0);
		CHECK(ns_cpuset_copy(&two, &one) == 0 && ns_cpuset_equal(&one, &two));
		CHECK(ns_cpuset_set(&one, 200) == 0);
		CHECK(ns_cpuset_test(&one, 3) && ns_cpuset_test(&one, 63) && ns_cpuset_test(&one, 200));
		CHECK(ns_cpuset_count(&one) == 3 && ns_cpuset_count(&two) == 2);
		CHECK(ns_cpuset_and(&two, &two, &one) == 0 && ns_cpuset_count(&two) == 2 && ns_cpuset_test(&two, 63));
		CHECK(ns_cpuset_andnot(&one, &one, &two) == 0 && ns_cpuset_count(&one) == 1 &&
		      ns_cpuset_test(&one, 200));
		ns_cpuset_clear(&one);
		ns_cpuset_clear(&two);
	}
	return tap_done("cpuset");
}
