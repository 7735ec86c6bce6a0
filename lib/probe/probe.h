/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Random reads from one NUMA node's CPUs (numastor probe): threads bound to the node
 * (libnuma numa_run_on_node), buffers on it (numa_alloc_onnode), each thread with its own
 * io_uring (liburing) keeping iodepth O_DIRECT reads in flight at block-aligned random
 * offsets. Completion latency (submission to completion, as the submitting thread sees it)
 * goes into a histogram (lib/probe/histogram.h).
 *
 * Read-only, always: the device is opened O_RDONLY, and no write is ever prepared.
 */
#ifndef NUMASTOR_PROBE_H
#define NUMASTOR_PROBE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "probe/histogram.h"

struct ns_probe_dev {
	int fd;
	uint64_t size;	     /* bytes (BLKGETSIZE64) */
	unsigned logical_bs; /* BLKSSZGET: the smallest O_DIRECT read */
};

/*
 * Open the block device node path for O_DIRECT reads, and make sure it is the disk meant:
 * a block device whose st_rdev is devnum ("MAJ:MIN"). -EACCES / -EPERM when it may not be
 * read, -ENODEV when the node is another device or none, -errno otherwise.
 */
int ns_probe_open(const char *path, const char *devnum, struct ns_probe_dev *dev);
void ns_probe_close(struct ns_probe_dev *dev);

struct ns_probe_job {
	int node;	     /* whose CPUs submit (libnuma node id) */
	unsigned block_size; /* bytes, a multiple of the device's logical block size */
	unsigned iodepth;    /* reads in flight per thread */
	unsigned jobs;	     /* threads */
	double seconds;	     /* how long */
	uint64_t seed;	     /* of the offsets (0: from the clock) */
	/* called about 5 times a second from the calling thread: elapsed seconds, reads done */
	void (*progress)(void *data, double elapsed, uint64_t ios);
	void *data;
	/* set (by a signal handler) to end the run early; the result says so */
	volatile sig_atomic_t *stop;
};

struct ns_probe_result {
	uint64_t ios, bytes;
	double seconds; /* from the first submission to the last completion */
	bool stopped;	/* ended by *stop */
	struct ns_hist latency_ns;
};

/*
 * Run the job on dev. -EINVAL for a bad job (block size not a multiple of the logical block
 * size or above the device, zero depth or jobs, no such node), -errno of a failed read (the
 * first one: the run stops there), -ENOMEM.
 */
int ns_probe_run(const struct ns_probe_dev *dev, const struct ns_probe_job *job, struct ns_probe_result *res);

/*
 * The finding probe-node-gap: the worst node's IOPS more than NS_PROBE_GAP (15%) below the
 * best node's. false when the best read nothing.
 */
#define NS_PROBE_GAP 0.15
bool ns_probe_node_gap(double worst_iops, double best_iops);

struct ns_root;
/* Whether the machine runs under a hypervisor (the CPU flag "hypervisor" in proc/cpuinfo): 1,
 * 0, -1 when cpuinfo cannot be read. */
int ns_probe_under_hypervisor(struct ns_root *root);

/* --- one disk, from each node in turn (what probe and fix --probe measure) ------------- */

struct ns_cpuset;
struct ns_disk;
struct ns_system;

struct ns_probe_params {
	unsigned block_size, iodepth, jobs;
	double seconds;
	/* as ns_probe_job's, with the disk and node of the run */
	void (*progress)(void *data, const char *disk, int node, double elapsed, uint64_t ios);
	void *data;
	volatile sig_atomic_t *stop;
};

/* One node's run on one disk. */
struct ns_probe_node_run {
	int node;
	char *cpus; /* the node's online CPUs, a cpulist */
	struct ns_probe_result res;
	/* what the disk's vectors (every path's PCI function's) fired during the run, per node
	 * id (nirq_by_node entries), from per_cpu_count read before and after; irq_known false
	 * when the disk has no vector or a count could not be read */
	unsigned long long *irq_by_node;
	size_t nirq_by_node;
	unsigned long long irq_total;
	bool irq_known;
};

struct ns_probe_disk {
	const struct ns_disk *disk; /* borrowed */
	struct ns_probe_node_run *runs;
	size_t nruns;
	size_t worst, best; /* runs[] by IOPS */
	bool gap;	    /* ns_probe_node_gap(worst, best) with two runs or more */
	int failed_node;    /* the node whose run failed, -1 */
};

double ns_probe_iops(const struct ns_probe_node_run *r);
/*
 * Probe d->disk (d->disk set by the caller) from each node of the machine that has online
 * CPUs and is in nodes, in node order, through /dev/NAME (ns_probe_open), counting the disk's
 * interrupts per node through the root around each run. Returns what ns_probe_open or
 * ns_probe_run returned (d->failed_node says which run failed); the runs done are kept.
 */
int ns_probe_disk_measure(struct ns_root *root, const struct ns_system *sys, const struct ns_cpuset *nodes,
			  const struct ns_probe_params *p, struct ns_probe_disk *d);
void ns_probe_disk_free(struct ns_probe_disk *d);
/*
 * The nodes to probe from (probe --nodes): those of list (a cpulist syntax of node ids, at most
 * 1023), each of which must have online CPUs, or, list NULL, every node that has. -EINVAL: list
 * is not a list of node ids, or an empty one; -ENOENT: node *missing has no online CPU;
 * -ENOMEM. nodes is the caller's to clear, whatever is returned.
 */
int ns_probe_pick_nodes(const struct ns_system *sys, const char *list, struct ns_cpuset *nodes, int *missing);

#endif
