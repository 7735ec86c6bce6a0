/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A request-based disk's own count of the requests it completed: sys/dev/block/MAJ:MIN/stat, the
 * counter block/blk-mq.c's blk_account_io_done() keeps, read as the kernel prints it (padded
 * columns; 11 fields before 4.18, 15 with discards, 17 with flushes from 5.5).
 *
 * numastor trace compares it with what its program counted over the window: the kernel's
 * counter moves for every completion, the program runs only when the kernel runs it, so the
 * difference is what the program did not see (measured on a 6.18 kernel: block_rq_complete
 * completions in a softirq run on another task's stack that no BPF program attached to the
 * tracepoint was run for, with no recursion miss counted; ftrace's event saw them).
 */
#ifndef NUMASTOR_DISKSTAT_H
#define NUMASTOR_DISKSTAT_H

#include <stdint.h>

struct ns_root;

/*
 * The requests the disk with device number devnum (major << 20 | minor) has completed since it
 * appeared: reads, writes, discards and flushes completed (the fields the kernel has). -EOPNOTSUPP
 * for a disk without blk-mq queues (no mq/: a bio-based disk counts bios, not requests), -EINVAL
 * for a stat file that is not the kernel's form, another -errno for a read that failed.
 */
int ns_diskstat_completed(struct ns_root *root, uint32_t devnum, uint64_t *out);
/* The same without looking for mq/ again: a later reading of a disk that answered once. */
int ns_diskstat_read(struct ns_root *root, uint32_t devnum, uint64_t *out);

/* The same from the stat file's text: 0 or -EINVAL. */
int ns_diskstat_parse(const char *text, uint64_t *out);

#endif
