/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The swap plan's list of checks and the checks of the patched module files: the plan calls
 * them, never the other way round (not for the front end). */
#ifndef NUMASTOR_MODSWAP_CHECKS_H
#define NUMASTOR_MODSWAP_CHECKS_H

#include <stdbool.h>
#include <stddef.h>

#include "swap/modswap.h"

struct kmod_ctx;

/* Record a check of a swap plan (takes what and detail). */
int ns_swap_add_check(struct ns_swap_plan *p, bool ok, char *what, char *detail);
/* The checks of one patched module file, added to p. */
int ns_swap_check_candidate(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p,
			    const struct ns_manifest_module *mm);
/* Over the patched modules one swap loads (mods[0..n)), one check each: every
 * symbol it imports that its stock module does not (a patched HBA driver's
 * scsi_host_alloc_node) is exported by another of them, with the CRC it was built against. */
int ns_swap_check_imports(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p,
			  const struct ns_manifest_module *const *mods, size_t n);

#endif
