/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPU lists and masks (lib/base/cpuset.h). The input is up to two texts separated by a NUL byte: a
 * and b. Each is parsed as a cpulist and as a hex mask; what parses must format back to a
 * canonical list that parses to the same set, and the set operations must agree with each
 * other. A parse that fails leaves an empty, unknown set (never a partial one).
 */
#include "fuzz-common.h"

#include <stdlib.h>
#include <string.h>

#include "base/cpuset.h"

static void roundtrip(const struct ns_cpuset *s, const char *what, const char *text)
{
	struct ns_cpuset again = {0};
	char *t = NULL, *t2 = NULL;

	FUZZ_ASSERT(s->known, "%s '%s' parsed but is not known", what, text);
	FUZZ_ASSERT(ns_cpuset_format(s, &t) == 0, "%s '%s' does not format", what, text);
	FUZZ_ASSERT(ns_cpuset_parse_list(&again, t) == 0, "%s '%s' formats to '%s', which does not parse", what, text,
		    t);
	FUZZ_ASSERT(ns_cpuset_equal(s, &again), "%s '%s' -> '%s' parses to another set", what, text, t);
	FUZZ_ASSERT(ns_cpuset_count(s) == ns_cpuset_count(&again), "%s '%s': counts differ", what, text);
	FUZZ_ASSERT(ns_cpuset_format(&again, &t2) == 0 && strcmp(t, t2) == 0, "%s '%s': '%s' is not canonical", what,
		    text, t);
	/* first/next walk exactly the set (a walk costs per CPU: only for sets of real sizes) */
	if (ns_cpuset_count(s) <= 65536) {
		unsigned n = 0;
		int prev = -1;
		ns_cpuset_foreach (cpu, s) {
			FUZZ_ASSERT(cpu > prev && ns_cpuset_test(s, (unsigned)cpu), "%s '%s': walk broken at %d", what,
				    text, cpu);
			prev = cpu;
			n++;
		}
		FUZZ_ASSERT(n == ns_cpuset_count(s), "%s '%s': walk saw %u of %u", what, text, n, ns_cpuset_count(s));
	}
	ns_cpuset_clear(&again);
	free(t);
	free(t2);
}

static void failed(const struct ns_cpuset *s, const char *what, const char *text)
{
	FUZZ_ASSERT(!s->known && ns_cpuset_count(s) == 0 && ns_cpuset_first(s) == -1,
		    "%s '%s' failed but left a known or non-empty set", what, text);
}

static void ops(const struct ns_cpuset *a, const struct ns_cpuset *b)
{
	struct ns_cpuset u = {0}, c = {0};

	FUZZ_ASSERT(ns_cpuset_copy(&u, a) == 0 && ns_cpuset_or(&u, b) == 0, "or failed");
	FUZZ_ASSERT(ns_cpuset_subset(a, &u) && ns_cpuset_subset(b, &u), "a, b not within a|b");
	FUZZ_ASSERT(ns_cpuset_count(&u) <= ns_cpuset_count(a) + ns_cpuset_count(b), "|a|b| too large");
	FUZZ_ASSERT(ns_cpuset_intersects(a, b) == (ns_cpuset_count(&u) < ns_cpuset_count(a) + ns_cpuset_count(b)),
		    "intersects disagrees with the counts");
	FUZZ_ASSERT(ns_cpuset_equal(a, b) == (ns_cpuset_subset(a, b) && ns_cpuset_subset(b, a)),
		    "equal disagrees with subset");
	FUZZ_ASSERT(ns_cpuset_copy(&c, a) == 0 && ns_cpuset_equal(&c, a), "copy differs");
	ns_cpuset_clear(&u);
	ns_cpuset_clear(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_strndup(data, size), *texts[2];
	struct ns_cpuset list[2] = {0}, mask[2] = {0};
	size_t first = strlen(buf);

	texts[0] = buf;
	texts[1] = first < size ? buf + first + 1 : buf + first;
	for (int i = 0; i < 2; i++) {
		if (ns_cpuset_parse_list(&list[i], texts[i]) == 0)
			roundtrip(&list[i], "list", texts[i]);
		else
			failed(&list[i], "list", texts[i]);
		if (ns_cpuset_parse_mask(&mask[i], texts[i]) == 0)
			roundtrip(&mask[i], "mask", texts[i]);
		else
			failed(&mask[i], "mask", texts[i]);
	}
	ops(&list[0], &list[1]);
	ops(&mask[0], &list[1]);
	ops(&list[0], &mask[0]);
	for (int i = 0; i < 2; i++) {
		ns_cpuset_clear(&list[i]);
		ns_cpuset_clear(&mask[i]);
	}
	free(buf);
	return 0;
}
