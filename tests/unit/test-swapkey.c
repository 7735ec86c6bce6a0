/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How a module swap finds a disk again (lib/swap/modswap.h ns_swap_disk_key) on a fake root: by its
 * identity; without one by its whole device path, the numbers a reload renews made "*" (the
 * same disk after a reload under another SCSI host has the same key), never a part of a path
 * (another LUN, another function, a function behind the same bridge: other keys). And the plan's
 * refusal of two disks with one identity, both named, with its twin of distinct disks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "swap/modswap-plan.h"
#include "swap/modswap.h"
#include "read/root.h"
#include "fakeroot.h"
#include "tap.h"

/* sys/block/NAME -> the disk's directory under dev (a PCI path), with its device link. */
static void scsi_disk(const char *name, const char *dev)
{
	char rel[1024], target[1024];
	snprintf(rel, sizeof(rel), "sys/devices/%s/block/%s/size", dev, name);
	fr_put(rel, "2048\n");
	snprintf(rel, sizeof(rel), "sys/block/%s", name);
	snprintf(target, sizeof(target), "../devices/%s/block/%s", dev, name);
	fr_lnk(rel, target);
	snprintf(rel, sizeof(rel), "sys/devices/%s/block/%s/device", dev, name);
	fr_lnk(rel, "../..");
}

static char *key_of(struct ns_root *root, const char *disk)
{
	char *k = NULL;
	if (ns_swap_disk_key(root, disk, &k) < 0)
		return NULL;
	return k;
}

static int same_key(struct ns_root *root, const char *a, const char *b)
{
	char *ka = key_of(root, a), *kb = key_of(root, b);
	int eq = ka && kb && strcmp(ka, kb) == 0;
	free(ka);
	free(kb);
	return eq;
}

static void add_disk(struct ns_swap_plan *p, const char *name, const char *id)
{
	p->disks = realloc(p->disks, (p->ndisks + 1) * sizeof(*p->disks));
	p->disks[p->ndisks++] = (struct ns_swap_disk){.name = strdup(name), .id = id ? strdup(id) : NULL};
}

int main(void)
{
	struct ns_root *root = NULL;
	char *k;

	if (!fr_make("swapkey"))
		return 1;
	/* an identity: the key is lib/read/diskid's */
	scsi_disk("sda", "pci0000:00/0000:00:04.0/virtio1/host2/target2:0:0/2:0:0:0");
	fr_put("sys/devices/pci0000:00/0000:00:04.0/virtio1/host2/target2:0:0/2:0:0:0/wwid", "naa.5000c500aa000001\n");
	/* no identity: LUN 1 of the same HBA, the same LUN after a reload (host3), LUN 2, the same
	 * LUN on the next function, and one behind the bridge 0000:00:04.0 */
	scsi_disk("sdb", "pci0000:00/0000:00:04.0/virtio1/host2/target2:0:1/2:0:1:0");
	scsi_disk("sdc", "pci0000:00/0000:00:04.0/virtio1/host3/target3:0:1/3:0:1:0");
	scsi_disk("sdd", "pci0000:00/0000:00:04.0/virtio1/host2/target2:0:2/2:0:2:0");
	scsi_disk("sde", "pci0000:00/0000:00:04.1/virtio2/host4/target4:0:1/4:0:1:0");
	scsi_disk("sdf", "pci0000:00/0000:00:04.0/0000:05:00.0/host5/target5:0:1/5:0:1:0");
	scsi_disk("sdg", "pci0000:00/0000:00:1f.2/ata3/host6/target6:0:0/6:0:0:0");
	scsi_disk("sdh", "pci0000:00/0000:00:1f.2/ata4/host7/target7:0:0/7:0:0:0");
	if (ns_root_open(fr_base, &root) < 0)
		return 1;

	k = key_of(root, "sda");
	CHECK_STR(k, "wwid:naa.5000c500aa000001");
	free(k);
	k = key_of(root, "sdb");
	CHECK_STR(k, "path:/sys/devices/pci0000:00/0000:00:04.0/virtio*/host*/target*:0:1/*:0:1:0");
	free(k);
	/* the same disk after a reload: another host number, the same key */
	CHECK(same_key(root, "sdb", "sdc"));
	/* twins that must not match: another LUN, another function, a function behind the bridge */
	CHECK(!same_key(root, "sdb", "sdd"));
	CHECK(!same_key(root, "sdb", "sde"));
	CHECK(!same_key(root, "sdb", "sdf"));
	CHECK(!same_key(root, "sdb", "sda"));
	/* two ATA ports of one AHCI function: their paths differ only in numbers a reload renews,
	 * so one key (the plan refuses them below rather than mix them up) */
	CHECK(same_key(root, "sdg", "sdh"));
	CHECK(ns_swap_disk_key(root, "nosuch", &k) < 0);

	/* the plan: two disks with one identity fail a check naming both; distinct ones pass */
	{
		struct ns_swap_plan p = {0};
		add_disk(&p, "sdb", "wwid:naa.5000c500aa000009");
		add_disk(&p, "sdq", "serial:Q1");
		add_disk(&p, "sdc", "wwid:naa.5000c500aa000009");
		add_disk(&p, "sdz", NULL);
		CHECK(ns_swap_check_distinct_disks(&p) == 0);
		CHECK(p.nchecks == 1 && p.failed_checks == 1);
		CHECK(p.nchecks == 1 && strstr(p.checks[0].what, "sdb") && strstr(p.checks[0].what, "sdc"));
		CHECK(p.nchecks == 1 && strstr(p.checks[0].detail, "wwid:naa.5000c500aa000009"));
		CHECK(!ns_swap_plan_safe(&p));
		ns_swap_plan_free(&p);
	}
	{
		struct ns_swap_plan p = {0};
		add_disk(&p, "sdb", "wwid:naa.5000c500aa000009");
		add_disk(&p, "sdc", "wwid:naa.5000c500aa00000a");
		add_disk(&p, "sdd", NULL);
		add_disk(&p, "sde", NULL);
		CHECK(ns_swap_check_distinct_disks(&p) == 0);
		CHECK(p.nchecks == 0 && p.failed_checks == 0);
		CHECK(ns_swap_plan_safe(&p));
		ns_swap_plan_free(&p);
	}
	/* --timeout's default: 60 s, 5 more per disk */
	{
		struct ns_swap_plan p = {0};
		CHECK(ns_swap_wait_default(&p) == 60);
		p.ndisks = 24;
		CHECK(ns_swap_wait_default(&p) == 180);
	}
	ns_root_free(root);
	{
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fr_base);
		if (system(cmd) != 0)
			return 1;
	}
	return tap_done("swapkey");
}
