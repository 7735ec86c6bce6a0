/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the rooms of the module swap share (lib/modswap-*.c); not for the front end. */
#ifndef NUMASTOR_MODSWAP_INTERNAL_H
#define NUMASTOR_MODSWAP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "modswap.h"

struct kmod_ctx;

/* modswap-kmod.c */
/* "live", "coming", "going", "builtin" or NULL (not loaded), from the rooted sysfs. The string
 * is only valid until the next call. */
const char *ns_swap_module_state(struct ns_root *root, const char *name);
/* Holders of a module that are themselves modules (sys/module/NAME/holders); empty on error. */
void ns_swap_module_holders(struct ns_root *root, const char *name, char ***v, size_t *n);
/* The first value of a modinfo key of a .ko file (absolute path), or of the stock module
 * called name (the running kernel's modules.dep); NULL when unknown. */
char *ns_swap_modinfo_file(struct kmod_ctx *ctx, const char *abspath, const char *key);
char *ns_swap_modinfo_stock(struct kmod_ctx *ctx, const char *name, const char *key);
/* The absolute path of a root-relative one. */
char *ns_swap_abs_path(struct ns_root *root, const char *rel);

/* The in-tree file of module name (root-relative, from lib/modules/RELEASE/modules.order,
 * compressed or not); -ENOENT when the kernel has none. */
int ns_swap_stock_path(struct ns_system *sys, const char *name, char **path);
/* Does the loaded module name run the in-tree file at stock_path (no out-of-tree taint, the
 * file's srcversion where it has one)? */
bool ns_swap_runs_stock(struct ns_root *root, struct kmod_ctx *ctx, const char *name, const char *stock_path);
/* The file modprobe loads for name on the root's machine (libkmod's lookup over its
 * lib/modules/RELEASE and modprobe.d), root-relative: "lib/modules/R/updates/dkms/x.ko".
 * -ENOENT when the name resolves to no file (built in, unknown), another -errno when the
 * machine's index cannot be read. */
int ns_swap_resolve(struct ns_system *sys, const char *name, char **path);

/* modswap-plan.c: record a check (takes what and detail). */
int ns_swap_add_check(struct ns_swap_plan *p, bool ok, char *what, char *detail);
/* modswap-plan.c: a failed check for each two disks of p with one identity (both named): the
 * swap could not tell them apart once their driver reloads. Nothing when all differ. */
int ns_swap_check_distinct_disks(struct ns_swap_plan *p);

/* modswap-checks.c: the checks of one patched module file, added to p. */
int ns_swap_check_candidate(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p,
			    const struct ns_manifest_module *mm);
/* modswap-checks.c: over the patched modules one swap loads (mods[0..n)), one check each: every
 * symbol it imports that its stock module does not (a patched HBA driver's
 * scsi_host_alloc_node) is exported by another of them, with the CRC it was built against. */
int ns_swap_check_imports(struct ns_system *sys, struct kmod_ctx *ctx, struct ns_swap_plan *p,
			  const struct ns_manifest_module *const *mods, size_t n);

/* modswap-install.c: does an initramfs listing (lsinitramfs, one path a line) carry a module
 * file of name (NAME.ko, compressed or not; '-' and '_' alike): from updates/numastor/, and
 * another copy. */
void ns_swap_initramfs_carries(const char *listing, const char *name, bool *numastor, bool *other);

#endif
