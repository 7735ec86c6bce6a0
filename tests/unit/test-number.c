/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The strict number parser: the kernel's own forms only, every field's range checked, and
 * the garbage of issue 11 (numa_node 4294967297, 0x1, INT64_MAX; distance 2147483648,
 * 4294967297, -5; nr_tags 0x1) refused instead of turned into a plausible number. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "fakeroot.h"
#include "base/number.h"
#include "base/util.h"
#include "read/root.h"
#include "tap.h"

static int dec(const char *t, long long min, long long max, long long *v)
{
	*v = 12345;
	return ns_parse_dec(t, min, max, v);
}

static void test_dec(void)
{
	long long v;

	CHECK(dec("0", 0, 10, &v) == 0 && v == 0);
	CHECK(dec("7", 0, 10, &v) == 0 && v == 7);
	CHECK(dec("10", 0, 10, &v) == 0 && v == 10);
	CHECK(dec("-1", -1, NS_NODE_MAX - 1, &v) == 0 && v == -1);
	CHECK(dec("1023", -1, NS_NODE_MAX - 1, &v) == 0 && v == 1023);
	/* numa_node: past the node range, not wrapped to 1 or -1 */
	CHECK(dec("1024", -1, NS_NODE_MAX - 1, &v) == -ERANGE && v == 12345);
	CHECK(dec("4294967297", -1, NS_NODE_MAX - 1, &v) == -ERANGE && v == 12345);
	CHECK(dec("9223372036854775807", -1, NS_NODE_MAX - 1, &v) == -ERANGE);
	CHECK(dec("-2", -1, NS_NODE_MAX - 1, &v) == -ERANGE);
	/* decimal files: no hex, no octal, no sign, no spaces, no leading zeros */
	CHECK(dec("0x1", -1, NS_NODE_MAX - 1, &v) == -EINVAL && v == 12345);
	CHECK(dec("0X1", 0, 100, &v) == -EINVAL);
	CHECK(dec("01", 0, 100, &v) == -EINVAL);
	CHECK(dec("00", 0, 100, &v) == -EINVAL);
	CHECK(dec("+1", 0, 100, &v) == -EINVAL);
	CHECK(dec(" 1", 0, 100, &v) == -EINVAL);
	CHECK(dec("1 ", 0, 100, &v) == -EINVAL);
	CHECK(dec("1\n", 0, 100, &v) == -EINVAL);
	CHECK(dec("1x", 0, 100, &v) == -EINVAL);
	CHECK(dec("", 0, 100, &v) == -EINVAL);
	CHECK(dec("-", -5, 100, &v) == -EINVAL);
	CHECK(dec("-0", -5, 100, &v) == -EINVAL);
	CHECK(dec("--1", -5, 100, &v) == -EINVAL);
	CHECK(dec("1.5", 0, 100, &v) == -EINVAL);
	CHECK(ns_parse_dec(NULL, 0, 100, &v) == -EINVAL);
	/* a '-' where the field cannot be negative is garbage, not a range error */
	CHECK(dec("-5", NS_DISTANCE_MIN, NS_DISTANCE_MAX, &v) == -EINVAL);
	/* distances: 10-254 */
	CHECK(dec("10", NS_DISTANCE_MIN, NS_DISTANCE_MAX, &v) == 0 && v == 10);
	CHECK(dec("254", NS_DISTANCE_MIN, NS_DISTANCE_MAX, &v) == 0 && v == 254);
	CHECK(dec("9", NS_DISTANCE_MIN, NS_DISTANCE_MAX, &v) == -ERANGE);
	CHECK(dec("255", NS_DISTANCE_MIN, NS_DISTANCE_MAX, &v) == -ERANGE);
	CHECK(dec("2147483648", NS_DISTANCE_MIN, NS_DISTANCE_MAX, &v) == -ERANGE);
	CHECK(dec("4294967297", NS_DISTANCE_MIN, NS_DISTANCE_MAX, &v) == -ERANGE);
	/* the whole long long range, and one past either end */
	CHECK(dec("9223372036854775807", LLONG_MIN, LLONG_MAX, &v) == 0 && v == LLONG_MAX);
	CHECK(dec("-9223372036854775808", LLONG_MIN, LLONG_MAX, &v) == 0 && v == LLONG_MIN);
	CHECK(dec("9223372036854775808", LLONG_MIN, LLONG_MAX, &v) == -ERANGE);
	CHECK(dec("-9223372036854775809", LLONG_MIN, LLONG_MAX, &v) == -ERANGE);
	CHECK(dec("99999999999999999999999999999999", 0, LLONG_MAX, &v) == -ERANGE);
	CHECK(dec("99999999999999999999999999999999x", 0, LLONG_MAX, &v) == -EINVAL);
	/* a range that excludes 0 */
	CHECK(dec("0", 1, 5, &v) == -ERANGE);
	CHECK(dec("-3", -5, -2, &v) == 0 && v == -3);
}

static void test_u64(void)
{
	uint64_t u = 7;

	CHECK(ns_parse_u64("0", &u) == 0 && u == 0);
	CHECK(ns_parse_u64("18446744073709551615", &u) == 0 && u == UINT64_MAX);
	u = 7;
	CHECK(ns_parse_u64("18446744073709551616", &u) == -ERANGE && u == 7);
	CHECK(ns_parse_u64("-1", &u) == -EINVAL);
	CHECK(ns_parse_u64("0x1", &u) == -EINVAL);
	CHECK(ns_parse_u64("01", &u) == -EINVAL);
	CHECK(ns_parse_u64("", &u) == -EINVAL);
	CHECK(ns_parse_u64("12 ", &u) == -EINVAL && u == 7);
}

static void test_hex(void)
{
	uint64_t u = 7;

	CHECK(ns_parse_hex("0", UINT64_MAX, &u) == 0 && u == 0);
	CHECK(ns_parse_hex("ff", UINT64_MAX, &u) == 0 && u == 255);
	CHECK(ns_parse_hex("0x1F", UINT64_MAX, &u) == 0 && u == 31);
	CHECK(ns_parse_hex("00000010", UINT64_MAX, &u) == 0 && u == 16);
	CHECK(ns_parse_hex("ffffffffffffffff", UINT64_MAX, &u) == 0 && u == UINT64_MAX);
	u = 7;
	CHECK(ns_parse_hex("10000000000000000", UINT64_MAX, &u) == -ERANGE && u == 7);
	CHECK(ns_parse_hex("100", 0xff, &u) == -ERANGE);
	CHECK(ns_parse_hex("ff", 0xff, &u) == 0 && u == 0xff);
	CHECK(ns_parse_hex("5", 0, &u) == -ERANGE);
	CHECK(ns_parse_hex("0x", UINT64_MAX, &u) == -EINVAL);
	CHECK(ns_parse_hex("", UINT64_MAX, &u) == -EINVAL);
	CHECK(ns_parse_hex("-1", UINT64_MAX, &u) == -EINVAL);
	CHECK(ns_parse_hex("g", UINT64_MAX, &u) == -EINVAL);
	CHECK(ns_parse_hex("1 ", UINT64_MAX, &u) == -EINVAL);
}

static void test_prefix(void)
{
	const char *p;
	uint64_t u = 7;

	p = "12 kB";
	CHECK(ns_parse_dec_prefix(&p, UINT64_MAX, &u) == 0 && u == 12 && *p == ' ');
	p = "node4294967297";
	p += 4;
	CHECK(ns_parse_dec_prefix(&p, NS_NODE_MAX - 1, &u) == -ERANGE);
	p = "x";
	CHECK(ns_parse_dec_prefix(&p, UINT64_MAX, &u) == -EINVAL);
	p = "007";
	CHECK(ns_parse_dec_prefix(&p, UINT64_MAX, &u) == -EINVAL);
}

static void test_read_dec(void)
{
	struct ns_root *root = NULL;
	long long v = 5;
	long l = 5;
	char *raw = (char *)"x";

	if (!fr_make("number")) {
		CHECK(!"mkdtemp");
		return;
	}
	fr_put("sys/ok", "3\n");
	fr_put("sys/hex", "0x1\n");
	fr_put("sys/big", "4294967297\n");
	fr_put("sys/empty", "%s", "");
	CHECK(ns_root_open(fr_base, &root) == 0);
	if (!root)
		return;
	CHECK(ns_read_dec(root, "sys/ok", 0, 10, &v, &raw) == 0 && v == 3 && raw == NULL);
	CHECK(ns_read_dec(root, "sys/hex", 0, 10, &v, &raw) == -EINVAL && v == 3);
	CHECK_STR(raw, "0x1");
	free(raw);
	CHECK(ns_read_dec(root, "sys/big", -1, NS_NODE_MAX - 1, &v, &raw) == -ERANGE && v == 3);
	CHECK_STR(raw, "4294967297");
	free(raw);
	raw = (char *)"x";
	CHECK(ns_read_dec(root, "sys/empty", 0, 10, &v, &raw) == -ENODATA && raw == NULL);
	CHECK(ns_read_dec(root, "sys/missing", 0, 10, &v, &raw) == -ENOENT && raw == NULL);
	CHECK(ns_read_dec(root, "sys/hex", 0, 10, &v, NULL) == -EINVAL);
	/* ns_read_long is strict decimal too: no base-0 "0x1" */
	CHECK(ns_read_long(root, "sys/hex", &l, NULL) == -EINVAL && l == 5);
	CHECK(ns_read_long(root, "sys/big", &l, NULL) == 0 && l == 4294967297L);
	ns_root_free(root);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fr_base);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", fr_base);
	}
}

int main(void)
{
	test_dec();
	test_u64();
	test_hex();
	test_prefix();
	test_read_dec();
	/* the per-IRQ paths: a number between two strings, cut short as snprintf cuts */
	{
		char b[16], big[32];
		CHECK_STR(ns_path_num(big, sizeof(big), "proc/irq/", 70, "/node"), "proc/irq/70/node");
		CHECK_STR(ns_path_num(big, sizeof(big), "", LLONG_MIN, ""), "-9223372036854775808");
		CHECK_STR(ns_path_num(b, sizeof(b), "irq ", 0, ""), "irq 0");
		CHECK_STR(ns_path_num(b, sizeof(b), "n", -12, "x"), "n-12x");
		CHECK_STR(ns_path_num(b, sizeof(b), "", LLONG_MIN, ""), "-92233720368547");
		CHECK_STR(ns_path_num(b, sizeof(b), "proc/irq/", 123456, "/node"), "proc/irq/123456");
		CHECK_STR(ns_path_num(b, 1, "proc", 1, ""), "");
	}
	return tap_done("number");
}
