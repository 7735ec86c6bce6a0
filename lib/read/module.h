/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The driver module behind a PCI function: stock, or carrying a numastor patch marker. */
#ifndef NUMASTOR_MODULE_H
#define NUMASTOR_MODULE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/notes.h"
#include "read/root.h"

/* modinfo key every numastor-patched module carries: MODULE_INFO(numastor, "<patch ids>") */
#define NS_PATCH_MARKER_KEY "numastor"

enum ns_module_state { NS_MODULE_UNKNOWN = 0, NS_MODULE_LIVE, NS_MODULE_BUILTIN };

struct ns_module {
	char *name;
	enum ns_module_state state;
	int patched; /* 1, 0, -1 unknown */
	char **patches;
	size_t npatches;
	char *srcversion; /* of the loaded module (sysfs), else of its file */
	int out_of_tree;  /* taint O: 1, 0, -1 unknown */
	/* what modinfo said, kept so a snapshot can replay it exactly */
	char *file_srcversion;
	char *modinfo_error;
};

struct ns_modules; /* a cache: many functions share one driver */

int ns_modules_new(struct ns_root *root, struct ns_modules **out);
void ns_modules_free(struct ns_modules *mods);
/* The module behind a driver (from sys/bus/pci/drivers/<driver>/module). Borrowed pointer. */
int ns_modules_lookup(struct ns_modules *mods, const char *driver, struct ns_notes *notes,
		      const struct ns_module **out);

size_t ns_modules_count(const struct ns_modules *mods);
const struct ns_module *ns_modules_get(const struct ns_modules *mods, size_t i);

#endif
