/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A bundle replayed (check --snapshot, fix --dry-run --snapshot): the root it is extracted into
 * is labelled "snapshot:FILE", and what the bundle says of its capture (.numastor/facts, written
 * by numastor snapshot: captured_at, captured_host) is read back through that root for the
 * reports, which name the captured host and time, not the replaying machine and the replay's.
 */
#ifndef NUMASTOR_REPLAY_H
#define NUMASTOR_REPLAY_H

#include <stdbool.h>

#include "read/root.h"

#define NS_REPLAY_LABEL "snapshot:"	  /* the root's label: this, then the bundle's file name */
#define NS_REPLAY_FACTS ".numastor/facts" /* key=value lines (numastor-snapshot(8)) */

/* Label root as the replay of the bundle at file. 0 or -ENOMEM. */
int ns_replay_label(struct ns_root *root, const char *file);
/* Whether root is a bundle's replay (labelled by ns_replay_label). */
bool ns_replay_is(const struct ns_root *root);

/* What the bundle says of its capture; each NULL when it does not say (an older bundle has no
 * captured_host) or says something that is not one (a time not in RFC 3339 UTC, an empty or
 * multi-line host). Values as the bundle has them: escape them where they leave numastor. */
struct ns_replay_meta {
	char *captured_at;   /* RFC 3339 UTC, to the second: 2026-12-02T04:55:52Z */
	char *captured_host; /* the hostname the captured machine had */
};
/* Read from root's NS_REPLAY_FACTS: 0 (with what it says, maybe nothing), or -ENOMEM. */
int ns_replay_meta_read(struct ns_root *root, struct ns_replay_meta *m);
void ns_replay_meta_free(struct ns_replay_meta *m);
/* The facts line numastor snapshot writes for the host (lib/out/replay.c parses it back):
 * "captured_host=NAME\n", or "" when name is NULL, empty or has a line break. malloc'd. */
char *ns_replay_host_line(const char *name);

#endif
