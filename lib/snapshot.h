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

#include "root.h"

#define NS_SNAPSHOT_MAX_FILE (1u << 20)	   /* the reader's own limit */
#define NS_SNAPSHOT_MAX_TOTAL (512u << 20) /* all files together */
#define NS_SNAPSHOT_MAX_ENTRIES 2000000u

struct ns_capture;

int ns_capture_new(struct ns_capture **out);
void ns_capture_free(struct ns_capture *c);
/* Record every access made through root from now on. */
void ns_capture_attach(struct ns_capture *c, struct ns_root *root);
void ns_capture_detach(struct ns_root *root);
/* A file that is not in the tree read (facts, modinfo, udev data, the check's own JSON). */
int ns_capture_add(struct ns_capture *c, const char *path, const char *data, size_t len, mode_t mode);
/* Write the bundle to path (temp file beside it, then rename). */
int ns_capture_write(struct ns_capture *c, const char *path);
size_t ns_capture_count(const struct ns_capture *c);

/*
 * Extract the bundle at file into a new private directory (*dir, caller frees and removes
 * it with ns_snapshot_remove). -EINVAL for a malformed or hostile bundle, with *why saying
 * what was wrong (caller frees).
 */
int ns_snapshot_extract(const char *file, char **dir, char **why);
int ns_snapshot_remove(const char *dir);

#endif
