/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Swapping numastor's patched nvme/SCSI modules in at runtime (and the stock ones back): the
 * most dangerous thing numastor does, so every step is checked first and undone on failure.
 *
 * A module directory (default /var/lib/numastor/modules/<release>/, written by
 * kmod-patches/build-modules.sh) holds the .ko files and manifest.json. A swap plan says which
 * modules go out and in, in which order, which checks passed, which disks detach (and whether
 * any of them must not), and which PCI functions get removed and rescanned (a node forced by a
 * driver survives a module swap; only remove + rescan undoes it).
 */
#ifndef NUMASTOR_MODSWAP_H
#define NUMASTOR_MODSWAP_H

#include <stdbool.h>
#include <stddef.h>

#include "system.h"

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

/* -ENOENT: no manifest for this kernel; -EINVAL: malformed. */
int ns_manifest_load(struct ns_root *root, const char *dir, struct ns_manifest *m);
void ns_manifest_free(struct ns_manifest *m);
const struct ns_manifest_module *ns_manifest_find(const struct ns_manifest *m, const char *name);

struct ns_swap_check {
	char *what;
	bool ok;
	char *detail;
};

struct ns_swap_disk {
	char *name;
	char *pci;
	char *hba; /* the module driving its SCSI host (megaraid_sas, virtio_scsi), NULL for nvme */
	char *serial, *wwn;
	char *refusal; /* why it must not be detached (every holder, named); NULL when it may */
	char *group;   /* "nvme" or "scsi": the group whose removal detaches it */
};

struct ns_swap_step { /* one module, out or in */
	char *module;
	char *file; /* the patched .ko to insert; NULL: the stock module through modprobe */
	bool remove;
	char *group; /* "nvme" or "scsi" */
};

struct ns_swap_plan {
	bool to_stock; /* --revert: the stock modules go back in */
	struct ns_manifest manifest;
	struct ns_swap_check *checks;
	size_t nchecks, failed_checks;
	struct ns_swap_disk *disks;
	size_t ndisks, refused_disks;
	struct ns_swap_step *steps;
	size_t nsteps;
	char **rescan; /* PCI functions to remove and rescan */
	size_t nrescan;
	char **groups; /* "nvme", "scsi": what the swap replaces */
	size_t ngroups;
	char **busy; /* modules in use beyond their holder modules (an open device): refused */
	size_t nbusy;
};

/*
 * Build the plan. moddir NULL: the default for the running kernel. to_stock: put the stock
 * modules back for the groups named (the journal's). Returns -ENOENT when there is nothing
 * to swap (no manifest, nothing patched and nothing to undo).
 */
int ns_swap_plan_build(struct ns_system *sys, const char *moddir, bool to_stock, char **groups, size_t ngroups,
		       struct ns_swap_plan *plan);
void ns_swap_plan_free(struct ns_swap_plan *plan);
bool ns_swap_plan_safe(const struct ns_swap_plan *plan);

struct ns_swap_event {
	char *text;
	bool ok;
};

struct ns_swap_report {
	struct ns_swap_event *v;
	size_t n;
	bool rolled_back;
	bool untouched; /* stopped before its first change (a disk in use at the recheck): nothing changed */
	bool ok;
};

/* Progress callback: each step as it happens (the front end prints it). */
typedef void (*ns_swap_progress)(void *data, const char *text, bool ok);

/*
 * Carry the plan out. Live root only. Immediately before each module removal, the disks that
 * removal detaches are checked for use again (lib/inuse.h): a claim that appeared since the
 * plan stops the swap before that removal (-EBUSY), and what was done is rolled back. On any
 * failure, rolls back to the stock modules, except for a group whose disks are in use then
 * (said in the report; the journal keeps it for --revert).
 */
int ns_swap_execute(struct ns_system *sys, const struct ns_swap_plan *plan, unsigned wait_s, ns_swap_progress progress,
		    void *data, struct ns_swap_report *rep);
void ns_swap_report_free(struct ns_swap_report *rep);

/*
 * For the next boot instead: copy the patched modules into lib/modules/<release>/updates/numastor/
 * (depmod prefers updates/ over the in-tree module) and run depmod. installed receives the
 * root-relative paths written, for the journal. Live root only.
 */
int ns_swap_install(struct ns_system *sys, const struct ns_swap_plan *plan, char ***installed, size_t *ninstalled);
/* Remove files installed by ns_swap_install and run depmod again. */
int ns_swap_uninstall(struct ns_system *sys, char **installed, size_t ninstalled);

#endif
