/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>

#include "cpuset.h"
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
	/* big machines: no NR_CPUS */
	CHECK(ns_cpuset_parse_list(&b, "0-447") == 0);
	CHECK(ns_cpuset_count(&b) == 448);
	CHECK(ns_cpuset_next(&b, 446) == 447);
	CHECK(ns_cpuset_next(&b, 447) == -1);
	CHECK(ns_cpuset_parse_list(&a, "64-127") == 0);
	CHECK(ns_cpuset_first(&a) == 64);
	CHECK(ns_cpuset_copy(&b, &a) == 0 && ns_cpuset_equal(&a, &b));
	ns_cpuset_clear(&a);
	ns_cpuset_clear(&b);
	return tap_done("cpuset");
}
