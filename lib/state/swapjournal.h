/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The module swap's journal: var/lib/numastor/swap.json, the full before-state of the
 * machine as far as a swap may change it, written (atomically, fsync'd) before the first
 * change and kept until `fix --revert` has restored it. /var/lib, not /run: an --install
 * lives on across reboots, and so must what undoes it.
 *
 * It holds every module a swap touches, in the order it is loaded (name, whether it was
 * loaded, its in-tree file, its srcversion, the options it ran with, and the patched file
 * that replaces it), every PCI function the swap removes and rescans, and every disk it
 * detaches by its stable identity (lib/read/diskid), never by name. From this alone a revert
 * brings the stock modules back whatever step a swap died at.
 */
#ifndef NUMASTOR_SWAPJOURNAL_H
#define NUMASTOR_SWAPJOURNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "read/root.h"

#define NS_SWAP_JOURNAL_DIR "var/lib/numastor"
#define NS_SWAP_JOURNAL_PATH NS_SWAP_JOURNAL_DIR "/swap.json"

struct ns_swap_jmodule {
	char *name;
	bool loaded;	   /* loaded before the swap: revert loads it again */
	char *stock_path;  /* the in-tree file, root-relative; NULL when the kernel has none */
	char *srcversion;  /* of the module that ran before; NULL when it has none */
	char *options;	   /* the options it ran with ("" for none) */
	char *replacement; /* the patched file that goes in (root-relative), NULL: the stock one */
};

struct ns_swap_jdisk {
	char *id;   /* lib/read/diskid's identity */
	char *name; /* its name before, for messages only */
	char *pci;  /* the PCI function it sits on */
	char *hba;  /* the module driving its SCSI host, NULL */
};

struct ns_swap_journal {
	char *boot_id;
	char *kernel_release;
	bool runtime; /* a runtime swap was started (not only an --install) */
	char **groups;
	size_t ngroups;
	struct ns_swap_jmodule *modules; /* insertion order: the core first */
	size_t nmodules;
	char **removed_pci; /* functions removed and rescanned */
	size_t nremoved_pci;
	struct ns_swap_jdisk *disks;
	size_t ndisks;
	char **installed; /* files installed for the next boot (root-relative) */
	size_t ninstalled;
	bool initramfs_updated; /* --install put its initramfs at boot/initrd.img-<kernel_release> */
	/* an initramfs --install or --revert is building (ns_swap_initramfs_new's path), journaled
	 * before mkinitramfs writes it and dropped once it is renamed into place: a revert removes
	 * it. NULL: none (and in journals of older numastor, which lack the key). */
	char *initramfs_new;
};

/* The one file an initramfs is built into before it is renamed over boot/initrd.img-<release>:
 * boot/initrd.img-<release>.numastor-new (malloc'd; NULL when release is not a plain name). */
char *ns_swap_initramfs_new(const char *release);

/* Is path one of the files an --install of release writes: exactly
 * lib/modules/<release>/updates/numastor/<file> (release and file plain names)? */
bool ns_swap_installed_ok(const char *release, const char *path);
/* And does it resolve there inside root, a regular file, through no link that leads out?
 * 0 yes; -EXDEV it leads elsewhere or is not a regular file; -ENOENT gone; -EINVAL not such a
 * path. */
int ns_swap_installed_resolves(struct ns_root *root, const char *release, const char *path);

/* -ENOENT: no journal; -EINVAL: malformed or of another version (never half-read). */
int ns_swap_journal_load(struct ns_root *root, struct ns_swap_journal *j);
int ns_swap_journal_save(struct ns_root *root, const struct ns_swap_journal *j);
int ns_swap_journal_remove(struct ns_root *root);
void ns_swap_journal_free(struct ns_swap_journal *j);
const struct ns_swap_jmodule *ns_swap_journal_module(const struct ns_swap_journal *j, const char *name);
/* The running kernel's boot id (proc/sys/kernel/random/boot_id), NULL when unknown. */
char *ns_swap_boot_id(struct ns_root *root);

#endif
