/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The whole model of one machine: what `numastor check` reports and `numastor fix` acts on.
 * Built by ns_system_discover() from one root.
 */
#ifndef NUMASTOR_SYSTEM_H
#define NUMASTOR_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>

#include "read/blockdev.h"
#include "read/machine.h"
#include "read/module.h"
#include "base/notes.h"
#include "read/pci.h"
#include "read/root.h"

/* Whether the running kernel already contains one of numastor's patch series. */
struct ns_kernel_fix {
	const char *series; /* static */
	int in_kernel;	    /* 1, 0, -1 unknown */
	char *basis;
};

struct ns_system {
	struct ns_root *root; /* borrowed */
	bool privileged;      /* root-only files could be read */
	struct ns_machine machine;
	struct ns_modules *modules;
	const struct ns_module *scsi_mod; /* the SCSI midlayer module, when a SCSI disk was found */
	struct ns_pci **pcis;		  /* cache: a function shared by several disks is read once */
	size_t npcis;
	size_t *pci_slots; /* the cache's hash of syspaths: 1 + index into pcis, 0 empty */
	size_t npci_slots; /* a power of two, at least twice npcis */
	size_t cap_pcis;
	struct ns_pci_buses *buses; /* what the functions on each root bus read of one another */
	struct ns_disk *disks;
	size_t ndisks;
	size_t *by_name; /* indices into disks sorted by name (ns_system_disk) */
	struct ns_notes notes;
	void *udev; /* struct udev *, live root only */
	struct ns_kernel_fix fixes[2];
	double interval_seconds; /* check --interval: measured time between its two samples; 0 without */
	size_t nempty_hidden;	 /* disks of size 0 ns_system_hide_empty() took out */
};

/*
 * How many entries of sys/block a tree may present. A disk's minor number has 20 bits
 * (MINORBITS in include/linux/kdev_t.h): every disk of a driver without a major of its own
 * (NVMe, pmem, virtio-blk, ...) is numbered from the block layer's extended range, which holds
 * 2^20 of them (NR_EXT_DEVT in block/genhd.c), and sd packs its index into the minors of its 16
 * majors, below 2^20 too. The largest machines have tens of thousands of disks (a SAN's LUNs
 * times their paths), far below. Entries beyond are noted and not read.
 */
#define NS_BLOCK_ENTRIES_MAX (1u << 20)

/*
 * Discover every disk (or only those named in only[], nonly > 0). -ENOENT when the root has no
 * sys/block (nothing to check); -ENODEV when a name in only[] is not a disk.
 *
 * Each disk is one disk however many entries of sys/block resolve to its directory: a kernel
 * lists a disk once, as a link whose last component is its name, so more entries for one
 * directory mean a damaged or hostile tree. The disk is read once, under the entry named as
 * its directory (else the first in order), and the others are noted once. Naming one of them
 * on the command line names that disk.
 */
/* Whether the running kernel contains each of numastor's series (fixes[0] nvme-no-forced-node,
 * fixes[1] scsi-numa-local-alloc): the module build's manifest, else the version. Free each basis. */
void ns_kernel_fixes_read(struct ns_root *root, const struct ns_machine *m, struct ns_kernel_fix fixes[2]);
/* fixes[0] (the nvme fix) from the loaded nvme's module file when it was judged by its code. */
void ns_kernel_fixes_by_module(struct ns_kernel_fix fixes[2], const struct ns_modules *mods);

int ns_system_discover(struct ns_root *root, const char *const *only, size_t nonly, struct ns_system *sys);
void ns_system_free(struct ns_system *sys);
/* The cached PCI function at syspath, reading it on first use. */
int ns_system_pci(struct ns_system *sys, const char *syspath, struct ns_pci **out);
/*
 * Take the empty disks (size 0: an unattached loop, an unused zram, an empty card reader) out
 * of the model, as lsblk does without -a, before findings are evaluated, so that no output
 * shows them. A size that could not be read (-1) is kept. Returns how many went (also added
 * to sys->nempty_hidden). The caller skips it for -a/--all and for disks named on the command line.
 */
size_t ns_system_hide_empty(struct ns_system *sys);
const struct ns_disk *ns_system_disk(const struct ns_system *sys, const char *name);

#endif
