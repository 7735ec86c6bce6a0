/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the kernel and libkmod say about a module, for the swap's rooms (not the front end). */
#ifndef NUMASTOR_MODSWAP_KMOD_H
#define NUMASTOR_MODSWAP_KMOD_H

#include <stdbool.h>
#include <stddef.h>

#include "swap/modswap.h"

struct kmod_ctx;

/* *state: "live", "coming", "going", "builtin" or NULL (not loaded), from the rooted sysfs; the
 * string is only valid until the next call. -errno when sys/module/NAME could not be looked at:
 * loaded or not is then unknown, and the swap refuses or stops on it, never reads it as out. */
int ns_swap_module_state(struct ns_root *root, const char *name, const char **state);
/* 1 loaded (or built in), 0 not, -errno unknown: ns_swap_module_state as a yes or no. */
int ns_swap_module_loaded(struct ns_root *root, const char *name);
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

#endif
