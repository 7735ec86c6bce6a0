/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The module directory's manifest.json (written by kmod-patches/build-modules.sh): which
 * numastor-patched modules it holds for one kernel release, their sha256, vermagic and
 * srcversion, and which patch series that kernel already has upstream. Read by the report
 * (is a fix in the running kernel?) and by the module swap.
 */
#ifndef NUMASTOR_MANIFEST_H
#define NUMASTOR_MANIFEST_H

#include <stddef.h>

#include "read/root.h"

#define NS_MODULE_DIR "var/lib/numastor/modules"

struct ns_manifest_module {
	char *name;
	char *file; /* root-relative path of the .ko */
	char *sha256, *vermagic, *srcversion;
	char **patches;
	size_t npatches;
};

struct ns_manifest {
	char *dir;
	char *kernel_release;
	struct ns_manifest_module *v;
	size_t n;
	char **upstream; /* series already in the kernel's source */
	size_t nupstream;
};

/* -ENOENT: no manifest for this kernel; -EINVAL: malformed (not JSON, a key twice, a key
 * build-modules.sh does not write, a module without name, file or sha256). */
int ns_manifest_load(struct ns_root *root, const char *dir, struct ns_manifest *m);
void ns_manifest_free(struct ns_manifest *m);
const struct ns_manifest_module *ns_manifest_find(const struct ns_manifest *m, const char *name);

#endif
