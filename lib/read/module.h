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

enum ns_module_code { NS_CODE_UNJUDGED = 0, NS_CODE_PREFIX, NS_CODE_FIXED };

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
	/*
	 * nvme only: does the module file of the running kernel hold the code dad651b2a44e took
	 * out (set_dev_node(first_memory_node), the one import of node_states)? NS_CODE_UNJUDGED
	 * when the file does not say: code_basis says why, or is NULL when the root has no module
	 * directory for the running kernel (an older capture).
	 */
	enum ns_module_code code;
	char *code_basis;
};

struct ns_modules; /* a cache: many functions share one driver */

int ns_modules_new(struct ns_root *root, struct ns_modules **out);
void ns_modules_free(struct ns_modules *mods);
/* The module behind a driver (from sys/bus/pci/drivers/<driver>/module). Borrowed pointer. */
int ns_modules_lookup(struct ns_modules *mods, const char *driver, struct ns_notes *notes,
		      const struct ns_module **out);

/*
 * What the pre-fix nvme-pci imports and the fixed one does not: first_memory_node is
 * first_node(node_states[N_MEMORY]). 5.10, 6.1 and 6.12's stock nvme.ko import no node_states,
 * their pre-fix builds do (tests/vm/README.md, the kernel-facts table); so does 7.2's stock.
 */
#define NS_NVME_FORCING_IMPORT "node_states"

/*
 * Does the module image (an ELF relocatable, xz-compressed or not) import sym (an undefined
 * symbol of its .symtab)? 1 yes, 0 no; -ENOTSUP compressed in a form numastor does not read
 * (zstd, gzip), -EINVAL not an ELF of this machine's class and byte order or garbled, -EFBIG
 * larger than NS_MODULE_IMAGE_MAX once decompressed. *srcversion (when srcversion != NULL):
 * the srcversion of its .modinfo, NULL when it has none. *form: "xz" or "ELF" (static).
 */
#define NS_MODULE_IMAGE_MAX (64u << 20)
int ns_module_image_imports(const char *data, size_t len, const char *sym, char **srcversion, const char **form);

size_t ns_modules_count(const struct ns_modules *mods);
const struct ns_module *ns_modules_get(const struct ns_modules *mods, size_t i);

#endif
