/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPU isolation: how the kernel was told to keep CPUs free of housekeeping work and device
 * interrupts, and which CPUs that makes. Three sources, each read as the kernel keeps it:
 * the boot command line (`isolcpus=[flags,]LIST`, `nohz_full=LIST`, `irqaffinity=LIST` in
 * proc/cmdline), the files the kernel derives from it (cpu/isolated: the domain-isolated CPUs;
 * cpu/nohz_full), and cgroup v2 isolated cpuset partitions made at run time (the root's
 * cpuset.cpus.isolated where the kernel has it, 6.7 on; else each partition's
 * cpuset.cpus.partition and cpuset.cpus.effective, walked from the root through partition roots).
 */
#ifndef NUMASTOR_ISOLATION_H
#define NUMASTOR_ISOLATION_H

#include <stdbool.h>

#include "base/cpuset.h"
#include "base/notes.h"
#include "read/root.h"

/* isolcpus= flags (kernel/sched/isolation.c); a bare list means domain */
enum {
	NS_ISO_DOMAIN = 1u << 0,
	NS_ISO_MANAGED_IRQ = 1u << 1,
	NS_ISO_NOHZ = 1u << 2,
	NS_ISO_IO_QUEUE = 1u << 3, /* blk-mq sizes queues to the housekeeping CPUs (not upstream as of 7.2) */
};

/* The flags in the order numastor prints them (JSON isolcpus_flags, the text report). */
#define NS_ISO_NFLAGS 4
extern const unsigned ns_isolation_flags[NS_ISO_NFLAGS];

struct ns_isolation {
	bool cmdline_known;	       /* proc/cmdline was read */
	struct ns_cpuset isolcpus;     /* isolcpus= (known when given), its flags below */
	unsigned isolcpus_flags;       /* NS_ISO_* */
	struct ns_cpuset nohz_full;    /* nohz_full= (known when given) */
	struct ns_cpuset irqaffinity;  /* irqaffinity= (known when given) */
	struct ns_cpuset cgroup;       /* CPUs of cgroup v2 isolated partitions; unknown when unreadable */
	const char *cgroup_basis;      /* "cpuset.cpus.isolated", "partitions", "no-cgroup2" (static) */
	struct ns_cpuset managed_irq;  /* CPUs managed vectors are kept off: isolcpus= with managed_irq */
	struct ns_cpuset cpus;	       /* every isolated CPU, whatever isolated it */
	struct ns_cpuset housekeeping; /* the online CPUs not in cpus */
	/* a command-line list that did not parse (fix must not place from it): NULL when none */
	const char *unparsed_param; /* "isolcpus", "nohz_full", "irqaffinity" (static) */
	char *unparsed_raw;
	int unparsed_err;
};

/*
 * What the machine already read: the online and possible CPUs, cpu/isolated and cpu/nohz_full
 * (each may be unknown), the CPU limit (kernel_max + 1).
 */
struct ns_isolation_in {
	const struct ns_cpuset *online, *possible, *isolated, *nohz_full;
	unsigned cpu_limit;
};

int ns_isolation_read(struct ns_root *root, const struct ns_isolation_in *in, struct ns_isolation *iso,
		      struct ns_notes *notes);
/*
 * The isolation parameters of a kernel command line (exposed for the unit test): each list
 * parsed with limit; -EINVAL/-ERANGE for one that does not parse, *param naming it.
 */
int ns_isolation_parse_cmdline(const char *cmdline, unsigned limit, struct ns_isolation *iso, const char **param,
			       char **raw);
void ns_isolation_free(struct ns_isolation *iso);
/* "domain,managed_irq" ... for the flags; a static string. */
const char *ns_isolation_flag_name(unsigned flag);

#endif
