/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPU sets sized at run time (no NR_CPUS). A zero-initialized struct ns_cpuset is an empty,
 * unknown set; `known` says whether its value was read.
 */
#ifndef NUMASTOR_CPUSET_H
#define NUMASTOR_CPUSET_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;

struct ns_cpuset {
	/* nwords words: one is held here (a node set, a machine of up to 64 CPUs), more on the
	 * heap; only lib/base/cpuset.c looks inside */
	union {
		unsigned long *words;
		unsigned long word;
	} u;
	unsigned nwords;
	bool known;
};

void ns_cpuset_clear(struct ns_cpuset *s);
int ns_cpuset_set(struct ns_cpuset *s, unsigned cpu);
bool ns_cpuset_test(const struct ns_cpuset *s, unsigned cpu);
unsigned ns_cpuset_count(const struct ns_cpuset *s);
/* First CPU in the set, or -1 when empty. */
int ns_cpuset_first(const struct ns_cpuset *s);
/* Next CPU after cpu, or -1. */
int ns_cpuset_next(const struct ns_cpuset *s, int cpu);
bool ns_cpuset_equal(const struct ns_cpuset *a, const struct ns_cpuset *b);
bool ns_cpuset_subset(const struct ns_cpuset *a, const struct ns_cpuset *of);
bool ns_cpuset_intersects(const struct ns_cpuset *a, const struct ns_cpuset *b);
int ns_cpuset_or(struct ns_cpuset *dst, const struct ns_cpuset *src);
int ns_cpuset_copy(struct ns_cpuset *dst, const struct ns_cpuset *src);
/* dst = a & b, dst = a & ~b (dst may be a); known when both are. */
int ns_cpuset_and(struct ns_cpuset *dst, const struct ns_cpuset *a, const struct ns_cpuset *b);
int ns_cpuset_andnot(struct ns_cpuset *dst, const struct ns_cpuset *a, const struct ns_cpuset *b);

/*
 * "0-3,8,10-11"; also takes the "0, 1, 2, 3" form of blk-mq cpu_list and an empty string.
 * Both parsers take the text as the kernel prints it: blanks around it are padding, and
 * "(null)" in any justification (a NULL mask printed in nr_cpu_ids columns: cpu/nohz_full
 * without nohz_full=) is the empty set, known.
 * Numbers in the kernel's decimal form (no sign, no leading zeros). Fails closed: -EINVAL for
 * garbage, -ERANGE for a CPU at or beyond limit (NS_CPU_MAX when 0), and then the set is empty
 * and unknown, never partial. Ranges are set a word at a time and the storage is grown once.
 */
int ns_cpuset_parse_list_max(struct ns_cpuset *s, const char *text, unsigned limit);
/* "ff,00000001" hex masks as in smp_affinity: hex digits in comma-separated groups; a set bit
 * at or beyond limit is -ERANGE. */
int ns_cpuset_parse_mask_max(struct ns_cpuset *s, const char *text, unsigned limit);
/* The same with limit NS_CPU_MAX (lib/base/number.h). */
int ns_cpuset_parse_list(struct ns_cpuset *s, const char *text);
int ns_cpuset_parse_mask(struct ns_cpuset *s, const char *text);
/* Canonical list form; "" for the empty set. Caller frees. */
int ns_cpuset_format(const struct ns_cpuset *s, char **out);

#define ns_cpuset_foreach(cpu, s) for (int cpu = ns_cpuset_first(s); cpu >= 0; cpu = ns_cpuset_next(s, cpu))

/* The set as its cpulist string in a new json-c string, NULL (JSON null) when unknown. */
struct json_object *ns_cpuset_json(const struct ns_cpuset *s);

#endif
