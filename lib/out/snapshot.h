/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Snapshots: exactly the files a check read (with the bytes it read, links as links, modes
 * kept), plus what was not a file (facts, modinfo from libkmod, identity from libudev), in
 * one tar.gz written through libarchive; and the safe way back: a bundle extracted into a
 * private directory only after every entry has been checked.
 */
#ifndef NUMASTOR_SNAPSHOT_H
#define NUMASTOR_SNAPSHOT_H

#include <stddef.h>
#include <sys/types.h>

#include "read/root.h"

/*
 * The replay budgets (numastor-snapshot(8), BUDGETS): a bundle beyond any of them is refused
 * from its headers, before anything of it is extracted. Sizes go by the kind of file: what the
 * reader reads is bounded by the reader's own limit, each and together; the check's own JSON,
 * which numastor wrote, by what check --json may write (1,024 NVMe drives on 1,024 CPUs: 135
 * MB); so a bundle holds at most MAX_TOTAL + MAX_JSON bytes of files.
 */
#define NS_SNAPSHOT_MAX_FILE NS_READ_MAX   /* a file the reader reads: the reader's own limit */
#define NS_SNAPSHOT_MAX_JSON (256u << 20)  /* .numastor/check.json, and check --json's whole output */
#define NS_SNAPSHOT_MAX_TOTAL (128u << 20) /* the files the reader reads together (check.json aside) */
#define NS_SNAPSHOT_MAX_ENTRIES 1048576u   /* files, directories and links together (1,024 NVMe: 764k) */
#define NS_SNAPSHOT_MAX_DEPTH 64u	   /* components of a path */
#define NS_SNAPSHOT_MAX_PATH 1024u	   /* bytes of a path, and of a link's target */
#define NS_SNAPSHOT_MAX_NODE 1024u	   /* node ids (nodeN in a name) are below it: MAX_NUMNODES */
#define NS_SNAPSHOT_MAX_CPU 8192u	   /* CPU ids (cpuN in a name) are below it: the largest NR_CPUS */

struct ns_capture;

/*
 * libarchive is loaded on first use, not linked: 0 once it is, else -ENOPKG with *why (caller
 * frees) naming the library and its package. The writing and extracting calls below load it
 * themselves; a command may call this first to fail before any work.
 */
int ns_snapshot_archive_load(char **why);

/*
 * A capture streams (lib/out/snapshot.c says how): ns_capture_start opens the bundle on fd, every
 * access made through an attached root is written to it as it is made (a file from the reader's
 * own buffer, a path once), and ns_capture_finish writes what was held back (links, directories,
 * names only listed) and ends it. The caller writes fd to a temporary file (lib/out/outfile.h, or
 * one of its own for standard output) and keeps it only when finish returned 0: -EFBIG, with
 * *why saying which budget (caller frees), when check --snapshot would refuse the bundle; the
 * capture then writes nothing more.
 */
int ns_capture_new(struct ns_capture **out);
void ns_capture_free(struct ns_capture *c);
int ns_capture_start(struct ns_capture *c, int fd, char **why);
/* Record every access made through root from now on. */
void ns_capture_attach(struct ns_capture *c, struct ns_root *root);
void ns_capture_detach(struct ns_root *root);
/* A file that is not in the tree read (facts, modinfo, udev data): under .numastor/ or
 * run/udev/data/, where it wins over a read of the same path. */
int ns_capture_add(struct ns_capture *c, const char *path, const char *data, size_t len, mode_t mode);
/* The same with fd's whole content (a regular file: the check's own JSON, spooled), copied in
 * 64 KiB pieces. */
int ns_capture_add_fd(struct ns_capture *c, const char *path, int fd, mode_t mode);
int ns_capture_finish(struct ns_capture *c, char **why);
size_t ns_capture_count(const struct ns_capture *c);
/* What the capture holds: tests and the benchmark show it. */
struct ns_capture_stats {
	size_t entries;	   /* written */
	size_t nodes;	   /* paths in its tree (each recorded path and the directories above) */
	size_t book_bytes; /* the tree's memory */
	size_t held_max;   /* the most bytes of file content it held at once (copies) */
	size_t duplicates; /* files read again, written once */
	size_t late_links; /* links recorded after a path read through them (kept as directories) */
};
void ns_capture_stats(const struct ns_capture *c, struct ns_capture_stats *st);
/* An anonymous temporary file (O_TMPFILE under TMPDIR, else /tmp), open for reading and
 * writing: the fd or -errno. */
int ns_snapshot_tmpfile(void);

/*
 * Replay. ns_snapshot_mkdir makes a new private directory (under TMPDIR, else /tmp; *dir is
 * canonical, the caller frees it); ns_snapshot_extract_into checks the bundle at file against
 * the budgets and safety rules (one pass over its headers, writing nothing), then extracts it
 * into dir, checking again. -EINVAL for a malformed, hostile or over-budget bundle, with *why
 * saying what was wrong and which budget (caller frees). The caller removes dir whatever the
 * outcome.
 */
int ns_snapshot_mkdir(char **dir);
int ns_snapshot_extract_into(const char *file, const char *dir, char **why);
/* Both, the directory removed on failure. */
int ns_snapshot_extract(const char *file, char **dir, char **why);
/*
 * Remove an extraction directory whatever the modes inside it (each directory is made 0700
 * first; links are removed, never followed). Async-signal-safe (no allocation, no stdio, errno
 * kept): a handler of SIGINT or SIGTERM may call it.
 */
int ns_snapshot_remove(const char *dir);

#endif
