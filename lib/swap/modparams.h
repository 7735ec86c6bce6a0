/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The options a replacement module must be loaded with so that it runs as the loaded one
 * does (fix --modules swaps a storage driver out and numastor's build in, --revert and the
 * rollback put the stock one back: each insert carries these options).
 *
 * Sources, in this order; a later one overrides an earlier one for the same parameter:
 *   1. libkmod's options for the module name (kmod_module_get_options): the `options` lines
 *      of modprobe.d and the kernel command line's `NAME.param=value`, in libkmod's order
 *      (the string modprobe would pass). Only on the live root: libkmod reads this
 *      machine's /etc/modprobe.d and /proc/cmdline, never a --sysroot tree's, so under a
 *      sysroot these are unknown and a note says so.
 *   2. The current value of every readable parameter in sys/module/NAME/parameters/ (through
 *      the rooted reader): what the loaded module runs with now, including values written
 *      at runtime and options given to insmod, which no configuration file shows. A
 *      parameter with permission 0 has no file: only source 1 knows it.
 *
 * A value is passed only when it is safe to pass back (each one left out gets a note):
 *   - the parameter exists in the module about to be loaded: a `parm` or `parmtype` entry in
 *     the modinfo of that file (or, for a stock module loaded by name, of the file
 *     modules.dep names; under a sysroot without libkmod, `.numastor/modinfo/NAME`). A module
 *     whose parameters cannot be read gets none of them;
 *   - its text is in a form the kernel's parser takes for the parameter's `parmtype`:
 *     bool/invbool Y, N, y, n, 1, 0 (or a bare name from modprobe.d); byte, short, ushort,
 *     int, uint, long, ulong, ullong, hexint a decimal or 0x number; charp and string any
 *     single line without a double quote (quoted when it holds a space); "array of T" a comma
 *     list of T; a parameter without parmtype (module_param_cb) one token without spaces
 *     or quotes;
 *   - it is set: "(null)" (an unset charp) and empty files (an empty array or string) are
 *     left at the module's default; files that cannot be read (write-only, a get that fails)
 *     are left out.
 *
 * A modprobe.d `install` or `remove` command for the module is a refusal: libkmod's probe
 * would run it through system(), and numastor never does (it also loads with
 * KMOD_PROBE_IGNORE_COMMAND).
 *
 * All functions return 0 or a negative errno and print nothing.
 */
#ifndef NUMASTOR_MODPARAMS_H
#define NUMASTOR_MODPARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "read/root.h"

struct kmod_ctx;

#define NS_MODPARAM_CONFIG "modprobe.d/cmdline"
#define NS_MODPARAM_SYSFS "sysfs"

struct ns_modparam {
	char *name;
	char *value;	    /* NULL: a bare name (a bool set true) */
	const char *source; /* NS_MODPARAM_CONFIG, NS_MODPARAM_SYSFS or the caller's string literal */
};

struct ns_modparams {
	struct ns_modparam *v;
	size_t n;
	char **notes; /* what was left out or is unknown, and why */
	size_t nnotes;
	char *refusal; /* a modprobe.d install/remove command: the swap must not run */
};

/* The parameters a module file takes: names and their parmtype (NULL when it gives none). */
struct ns_modparm_spec {
	char **names;
	char **types;
	size_t n;
	bool known; /* the modinfo was read (a module may have no parameters at all) */
};

/*
 * The parameters for loading `name` from `file` (root-relative path of the .ko, as in a swap
 * plan's steps; NULL: the stock module of that name), into mp (zeroed first).
 */
int ns_modparams_gather(struct ns_root *root, struct kmod_ctx *ctx, const char *name, const char *file,
			struct ns_modparams *mp);
void ns_modparams_free(struct ns_modparams *mp);
/* "a=1 b=\"x y\" c": the string for kmod_module_insert_module / probe's extra options;
 * "" when there is nothing to pass. NULL on ENOMEM. */
char *ns_modparams_string(const struct ns_modparams *mp);

/*
 * The option string to load module `name` with so it runs as the loaded one does:
 * modprobe.d and kernel command line options (libkmod) plus the current values of its
 * settable parameters (sys/module/NAME/parameters). *refusal set (and 0 returned) when a
 * modprobe.d `install`/`remove` command exists for it. The replacement is the stock module
 * of that name; ns_modparams_collect_file names the file about to be loaded instead.
 */
int ns_modparams_collect(struct ns_root *root, struct kmod_ctx *ctx, const char *name, char **options, char **refusal);
int ns_modparams_collect_file(struct ns_root *root, struct kmod_ctx *ctx, const char *name, const char *file,
			      char **options, char **refusal);

/* ---- the pure rules, tested directly ---- */

/* Set one parameter; a later call for the same name overrides the value and source. */
int ns_modparams_set(struct ns_modparams *mp, const char *name, const char *value, const char *source);
/* Parse an option string the kernel's way (whitespace-separated, double quotes) into mp. */
int ns_modparams_add_options(struct ns_modparams *mp, const char *options, const char *source);
/* Record one modinfo entry: key "parm" ("name:description") or "parmtype" ("name:type"). */
int ns_modparm_spec_add(struct ns_modparm_spec *spec, const char *key, const char *value);
void ns_modparm_spec_free(struct ns_modparm_spec *spec);
/* Is value a form the kernel's parser takes for parmtype type (NULL: unknown type)? *why
 * says what is wrong when not. */
bool ns_modparam_value_ok(const char *type, const char *value, const char **why);
/* Keep only the parameters spec has, with values of their type's form; a note for each
 * dropped one ("io_queue_depth: ... lacks it"). module names the replacement in the notes. */
int ns_modparams_filter(struct ns_modparams *mp, const struct ns_modparm_spec *spec, const char *module);

#endif
