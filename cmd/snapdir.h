/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --snapshot FILE, as check and fix --dry-run take it (cmd/snapdir.c): the bundle extracted into
 * a private directory that goes however the process ends, opened as the root. */
#ifndef NUMASTOR_CMD_SNAPDIR_H
#define NUMASTOR_CMD_SNAPDIR_H

#include "cli.h"
#include "numastor.h"
#include "read/root.h"

/* The extraction directory of --snapshot, removed on every way out (fatal signals too). */
int make_snapdir(char **dir);
void remove_snapdir(char **dir);
/*
 * The bundle at file extracted into a new directory (*dir: remove_snapdir it after ns_root_free)
 * and opened as *root, labelled snapshot:FILE (lib/out/replay.h: the reports then say what the
 * bundle says of its capture). NS_EXIT_OK, or NS_EXIT_UNKNOWN said through cli with nothing left
 * behind (a hostile or malformed bundle: lib/out/snapshot.h).
 */
int open_snapshot_root(struct ns_cli *cli, const char *file, char **dir, struct ns_root **root);

#endif
