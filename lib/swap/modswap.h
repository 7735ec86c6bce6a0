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

#include "state/manifest.h"
#include "state/swapjournal.h"
#include "model/system.h"

struct ns_swap_check {
	char *what;
	bool ok;
	char *detail;
};

struct ns_swap_disk {
	char *name;
	char *pci;
	char *hba;     /* the module driving its SCSI host (megaraid_sas, virtio_scsi), NULL for nvme */
	char *id;      /* how it is found again, never by name: ns_swap_disk_key (lib/read/diskid's identity,
			* or for a disk without one its device path); NULL only from an older journal */
	char *refusal; /* why it must not be detached (every holder, named: lib/swap/inuse.h); NULL when it may */
	char group[8]; /* "nvme", "scsi": the group whose removal detaches it */
};

struct ns_swap_step { /* one module, out or in */
	char *module;
	char *file;    /* the .ko to insert (root-relative): the patched one, or the stock one on
			* the way back; NULL: the stock module by name (its modules.dep entry) */
	char *options; /* the options it is inserted with (NULL: none); for the forward swap
			* lib/swap/modparams.h's rule: modprobe.d, the kernel command line and the loaded
			* module's sys/module values, only the parameters this file takes */
	bool remove;
	char group[8]; /* "nvme", "scsi": the disks a removal detaches are that group's */
	/* insert: what the stock module gets back on --revert or a rollback (the same rule
	 * against the stock file's parameters; "" for none): what the swap journal records.
	 * NULL for a remove step, and for steps of a plan back to stock. */
	char *stock_options;
	char **option_notes; /* what was not passed, or is not known, and why */
	size_t noption_notes;
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
	/* a plan back to stock: the modules that must run (stock) and must not run afterwards */
	char **expect_stock;
	size_t nexpect_stock;
	char **expect_out;
	size_t nexpect_out;
};

/*
 * Build the plan to swap the patched modules in. moddir NULL: the default for the running
 * kernel. Returns -ENOENT when there is no manifest, or one that failed a check (another
 * kernel's) and applies to nothing; 0 with no groups when the manifest is this kernel's and
 * nothing in it applies (its fixes in the kernel, its modules running stock): nothing to do.
 */
int ns_swap_plan_build(struct ns_system *sys, const char *moddir, struct ns_swap_plan *plan);
/*
 * Build the plan back to the machine the journal describes: every module it names out (and
 * whatever is stacked on them now), every module that was loaded before in again, from its
 * in-tree file with the options it ran with, every removed PCI function rescanned, every
 * disk waited for by identity. Whatever step a swap died at, this plan restores it. An
 * empty plan (no steps) means the machine already is as the journal describes.
 */
int ns_swap_plan_revert(struct ns_system *sys, const struct ns_swap_journal *j, struct ns_swap_plan *plan);
/* The journal of the before-state that plan changes: written before its first step. */
int ns_swap_journal_from_plan(struct ns_system *sys, const struct ns_swap_plan *plan, struct ns_swap_journal *j);
void ns_swap_plan_free(struct ns_swap_plan *plan);
bool ns_swap_plan_safe(const struct ns_swap_plan *plan);
/*
 * How a swap finds disk (a name under sys/block) again after its driver reloads: lib/read/diskid's
 * identity; for a disk without one, "path:" and its device path (sys/block/NAME's real path)
 * with the numbers a reload renews made "*" (SCSI host, target and H of H:C:T:L, ATA port,
 * NVMe controller, virtio index), so that the whole path, never a part of it, says which disk.
 */
int ns_swap_disk_key(struct ns_root *root, const char *disk, char **key);
/* The default of ns_swap_exec_opts.wait_s: 60 s, and 5 s more per disk the plan detaches. */
unsigned ns_swap_wait_default(const struct ns_swap_plan *plan);

struct ns_swap_event {
	char *text;
	bool ok;
};

struct ns_swap_rename { /* a disk back under another name */
	char *id, *from, *to;
};

struct ns_swap_report {
	struct ns_swap_event *v;
	size_t n;
	struct ns_swap_rename *renamed;
	size_t nrenamed;
	int stopped; /* what opts.stop returned when the swap stopped for it (a signal); 0 */
	bool rolled_back;
	bool rollback_ok; /* the rollback restored everything the journal names */
	bool untouched;	  /* stopped by the recheck before its first change: nothing changed */
	bool ok;
};

/* Progress callback: each step as it happens (the front end prints it). */
typedef void (*ns_swap_progress)(void *data, const char *text, bool ok);

struct ns_swap_exec_opts {
	unsigned wait_s;	   /* how long to wait for the disks to come back (and again in a rollback) */
	ns_swap_progress progress; /* each step as it happens */
	void *data;
	/* called after each step that changed the machine (the test-only kill hook lives here) */
	void (*after_step)(void *data, unsigned nsteps);
	/* asked at each step boundary of a swap in (never of its rollback, nor of a plan back to
	 * stock, which finish whatever is asked): nonzero (a signal number) stops the swap there
	 * and rolls back (-EINTR, report.stopped); NULL: never */
	int (*stop)(void *data);
};

/*
 * Carry the plan out. Live root only. Immediately before each module removal, and before each
 * PCI function's removal, the disks of that step's group still there are checked for use
 * again (lib/swap/inuse.h): a claim that appeared since the plan stops it before that removal
 * (-EBUSY, the holder named in the report; untouched when nothing was changed yet). The
 * rollback's removals are rechecked the same way. On any failure, rolls back to the machine
 * journal describes (a swap in: the journal the caller wrote first; NULL for a plan back to
 * stock, which has nothing further to go back to). A plan back to stock (and a rollback)
 * inserts every module it can, in order, past one that fails, each failure reported.
 * Every disk is found again by ns_swap_disk_key; one back under another name is in
 * report.renamed.
 */
int ns_swap_execute(struct ns_system *sys, const struct ns_swap_plan *plan, const struct ns_swap_journal *journal,
		    const struct ns_swap_exec_opts *opts, struct ns_swap_report *rep);
void ns_swap_report_free(struct ns_swap_report *rep);

/*
 * --install's checks, added to plan before anything is written (through the root: a captured
 * tree answers them too): every manifest file the plan did not check (a module of a loaded
 * group that is not loaded itself) gets a swap's candidate checks and the imports check over
 * its group; no other copy of a module under lib/modules/<release>/{updates,extra,weak-updates}
 * (depmod would pick one of the two arbitrarily), each named; the initramfs is one numastor
 * knows: initramfs-tools (update-initramfs, mkinitramfs, lsinitramfs) and no dracut, with
 * /boot/initrd.img-<release> a regular file (a UKI or kernel-install layout is refused).
 */
int ns_swap_install_check(struct ns_system *sys, struct ns_swap_plan *plan);
/* Journal first: the files an install will write (-EXDEV: j journals another release's). */
int ns_swap_install_prepare(struct ns_system *sys, const struct ns_swap_plan *plan, struct ns_swap_journal *j);
/*
 * For the next boot instead, only with every check passed: read which of the modules /boot's
 * initramfs carries (lsinitramfs; nothing is written when it cannot be read), copy the patched
 * modules into lib/modules/<release>/updates/numastor/ (depmod prefers updates/ over the
 * in-tree module), run depmod, verify with libkmod's lookup that each name resolves to the file
 * installed; when the initramfs carries one of them, build a new one into
 * ns_swap_initramfs_new's file (mkinitramfs -o), verify it carries numastor's files in place of
 * the stock ones (lsinitramfs), and only then rename it over /boot/initrd.img-<release>. Each
 * step is journaled in j (saved) before it is taken; on any failure the prefix is undone (the
 * new file, the files, depmod) and j keeps only what could not be. Each file and program run
 * is reported through progress. Live root only.
 */
int ns_swap_install(struct ns_system *sys, const struct ns_swap_plan *plan, struct ns_swap_journal *j,
		    ns_swap_progress progress, void *data);
/* Remove the initramfs being built and the files j says were installed, run depmod, and when
 * /boot's initramfs is numastor's, build it again without them (the same new file, read back,
 * renamed). What is undone is dropped from j. */
int ns_swap_uninstall(struct ns_system *sys, struct ns_swap_journal *j, ns_swap_progress progress, void *data);

#endif
