/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The machine: NUMA nodes, CPUs, kernel release, irqbalance. */
#ifndef NUMASTOR_MACHINE_H
#define NUMASTOR_MACHINE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/cpuset.h"
#include "read/isolation.h"
#include "base/notes.h"
#include "read/root.h"

struct ns_node {
	int id;
	struct ns_cpuset cpus;	  /* online CPUs (the node's cpulist) */
	struct ns_cpuset present; /* its cpuN links: also the CPUs that are offline now */
	long long memory_bytes;	  /* -1 unknown */
	int *distances;		  /* one per node in ns_machine.nodes order; NULL unknown */
	size_t ndistances;
	/* SMT (NS_NEED_TOPOLOGY): when every online CPU of the node has a readable
	 * thread_siblings_list, all of one size k > 1, k and the first thread of each core; else
	 * smt_threads is 0 and cores empty */
	unsigned smt_threads;
	struct ns_cpuset cores;
};

struct ns_irqbalance {
	int running; /* 1, 0, -1 unknown */
	long pid;    /* -1 */
	char *policyscript;
	struct ns_cpuset banned_cpus;
};

/*
 * An exclusion input fix must honour (irqbalance's banned list, cpu/isolated, cpu/nohz_full,
 * cpu/online, whose complement are the offline CPUs; isolcpus=, nohz_full= and irqaffinity= of
 * the command line, cgroup v2 isolated partitions) that could not be read or did not parse:
 * fix refuses rather than plan from a partial set of excluded CPUs (lib/act/plan.c).
 */
struct ns_unparsed {
	char *field; /* "irqbalance.banned_cpus" (_mask: IRQBALANCE_BANNED_CPUS), "isolated_cpus", ... */
	char *path;  /* root-relative file it came from ("etc/default/irqbalance", "proc/812/environ") */
	char *raw;   /* the value as read; NULL when it could not be read */
	int err;     /* negative errno: the read's or the parser's */
};

struct ns_machine {
	char *kernel_release;
	int kver_major, kver_minor; /* 0 when unknown */
	struct ns_node *nodes;
	size_t nnodes;
	struct ns_cpuset online, possible, isolated, nohz_full;
	int *cpu_node; /* node of each CPU, -1 unknown; ncpu_node entries */
	size_t ncpu_node;
	int first_memory_node; /* -1 unknown */
	long long tainted;     /* proc/sys/kernel/tainted, -1 unknown */
	unsigned cpu_limit;    /* CPU ids are below it: cpu/kernel_max + 1, else NS_CPU_MAX */
	bool cpu_map_partial;  /* an online CPU on no node's cpulist, or on two */
	/* node/online and node/has_cpu: the kernel's own node lists (known false when missing) */
	struct ns_cpuset online_nodes, cpu_nodes;
	/* nodes whose CPU set overlaps another node's (a firmware bug: the CPU -> node map is
	 * unreliable for them), and the CPUs claimed by more than one node; known false when no
	 * overlap was seen and some node's CPUs are unknown */
	struct ns_cpuset overlapping_nodes, overlapping_cpus;
	struct ns_irqbalance irqbalance;
	/* CPU isolation: the command line, cpu/isolated, cpu/nohz_full and cgroup partitions */
	struct ns_isolation isolation;
	/* sys/kernel/debug/irq/irqs (the IRQ flags that tell managed vectors): 1 there, 0 not (debugfs
	 * not mounted), -errno could not be looked at (noted once, for the machine); looked up only
	 * when the vectors are read (NS_NEED_IRQS), else 0 */
	int irq_debugfs;
	/* 1: the kernel has NUMA (node/ exists), 0: built without (node 0 is then the online CPUs,
	 * cpumask_of_node(0) in include/asm-generic/topology.h), -1: node/ could not be read */
	int numa_support;
	struct ns_unparsed *unparsed; /* exclusion inputs that did not parse, nunparsed of them */
	size_t nunparsed;
};

/* TAINT_FIRMWARE_WORKAROUND ('I'): among others, a PCI device's numa_node written by hand */
#define NS_TAINT_FIRMWARE_WORKAROUND (1LL << 11)

int ns_machine_read(struct ns_root *root, struct ns_machine *m, struct ns_notes *notes);
/*
 * Parse a CPU list (or, with mask, a hex mask) read from this machine: fails closed with
 * -ERANGE when it names a CPU at or beyond kernel_max + 1 or outside the possible set (when
 * known), -EINVAL when garbled; the set is then empty and unknown.
 */
int ns_machine_parse_cpus(const struct ns_machine *m, struct ns_cpuset *s, const char *text, bool mask);
void ns_machine_free(struct ns_machine *m);
/*
 * A CPU set attribute in its list form (list_path), else, when that file does not exist, in its
 * mask form (mask_path): kernels before 3.x's list attributes (and captures of them) have only
 * the masks (node cpumap, PCI local_cpus, root bus cpuaffinity). The mask form used is noted
 * (subject, field). *txt is the text read (caller frees), *mask whether it is the mask form, to
 * parse with ns_machine_parse_cpus(m, s, *txt, *mask). Returns the read's result: a failed read
 * names mask_path when *mask, else list_path (-ENOENT: neither form exists).
 */
int ns_machine_read_cpus_text(struct ns_root *root, const char *list_path, const char *mask_path, char **txt,
			      bool *mask, struct ns_notes *notes, const char *subject, const char *field);

/* Is every node's CPU list known, and every online CPU on exactly one? Else a CPU's -1 may be
 * a node whose cpulist is wrong, and nothing folded or judged by node from the map is an answer. */
bool ns_machine_cpu_map_complete(const struct ns_machine *m);
/* Node of a CPU, -1 when unknown. */
int ns_machine_cpu_node(const struct ns_machine *m, int cpu);
/* The set of nodes the CPUs of s sit on, as a node bitmap (reuses ns_cpuset for node ids). */
int ns_machine_nodes_of(const struct ns_machine *m, const struct ns_cpuset *s, struct ns_cpuset *nodes);
/* More than one node has CPUs, by the kernel's node lists (node/has_cpu, else node/online); only
 * without them, by the nodes' CPU lists (online or, by the node's cpuN links, offline). */
bool ns_machine_multi_node(const struct ns_machine *m);
/* Are some CPUs of a node other than those in nodes offline? (A node-less root bus then shows
 * only the online CPUs in its cpulistaffinity, which may all sit on one node.) */
bool ns_machine_offline_elsewhere(const struct ns_machine *m, const struct ns_cpuset *nodes);
/* Does the node set (as ns_machine_nodes_of gives it) hold every node that has CPUs? */
bool ns_machine_spans_all_nodes(const struct ns_machine *m, const struct ns_cpuset *nodes);
const struct ns_node *ns_machine_node(const struct ns_machine *m, int id);
/* Is the node one whose CPU set overlaps another node's (its place in the node map unreliable)? */
bool ns_machine_node_overlaps(const struct ns_machine *m, int id);
bool ns_machine_kernel_at_least(const struct ns_machine *m, int major, int minor);

#endif
