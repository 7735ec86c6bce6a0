/* SPDX-License-Identifier: GPL-2.0-or-later */
/* In-use detection on small fake roots: each kind of use found with its holder named, and a
 * twin that must not trigger it (another disk's mount, our own namespace seen twice, an fd to
 * another device, another disk's holder, swap and btrfs), and the kernel's users (loop, nvmet,
 * LIO, Xen blkback) with theirs (a file on another disk, a namespace on another disk). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "swap/inuse.h"
#include "read/root.h"
#include "fakeroot.h"
#include "tap.h"

static char base[64];

static void rm(const char *rel)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (unlink(p) < 0)
		perror(p);
}

static void rm_dir(const char *rel)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", base, rel);
	if (system(cmd) != 0)
		perror(cmd);
}

/* A disk NAME with dev MAJ:MIN under sys/devices/pci0000:00/DIR, and its partitions. */
static void disk(const char *name, const char *dir, int maj, int min, int nparts)
{
	char p[512], t[512];
	snprintf(p, sizeof(p), "sys/devices/pci0000:00/%s/%s", dir, name);
	fr_mkdirs(p);
	snprintf(t, sizeof(t), "%s/dev", p);
	fr_put(t, "%d:%d\n", maj, min);
	snprintf(t, sizeof(t), "%s/holders", p);
	fr_mkdirs(t);
	for (int i = 1; i <= nparts; i++) {
		snprintf(t, sizeof(t), "%s/%s%s%d/partition", p, name, strncmp(name, "nvme", 4) ? "" : "p", i);
		fr_put(t, "%d\n", i);
		snprintf(t, sizeof(t), "%s/%s%s%d/dev", p, name, strncmp(name, "nvme", 4) ? "" : "p", i);
		fr_put(t, "%d:%d\n", maj, min + i);
		snprintf(t, sizeof(t), "%s/%s%s%d/holders", p, name, strncmp(name, "nvme", 4) ? "" : "p", i);
		fr_mkdirs(t);
	}
	snprintf(t, sizeof(t), "sys/block/%s", name);
	snprintf(p, sizeof(p), "../devices/pci0000:00/%s/%s", dir, name);
	fr_lnk(t, p);
}

/* A process PID (comm COMM) in mount namespace NS with that mountinfo. */
static void proc(int pid, const char *comm, const char *ns, const char *mountinfo)
{
	char p[256];
	snprintf(p, sizeof(p), "proc/%d/comm", pid);
	fr_put(p, "%s\n", comm);
	snprintf(p, sizeof(p), "proc/%d/ns/mnt", pid);
	fr_lnk(p, ns);
	snprintf(p, sizeof(p), "proc/%d/mountinfo", pid);
	fr_put(p, "%s", mountinfo);
	snprintf(p, sizeof(p), "proc/%d/fd", pid);
	fr_mkdirs(p);
	snprintf(p, sizeof(p), "proc/%d/maps", pid);
	fr_put(p, "55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 131 /usr/bin/sleep\n");
}

static const char *ROOT_MI = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
			     "23 22 0:21 / /proc rw shared:2 - proc proc rw\n";

/* pid 1 and pid 50, both in our namespace: the same mountinfo */
static void ours(const char *mountinfo)
{
	fr_put("proc/1/mountinfo", "%s", mountinfo);
	fr_put("proc/50/mountinfo", "%s", mountinfo);
}

/* The holders found for disk name, as "device kind detail" lines, or "error N". */
static char *holders(struct ns_root *root, const char *name)
{
	struct ns_inuse_report rep;
	char *out = strdup("");
	int r = ns_inuse_check_name(root, name, &rep);
	if (r < 0) {
		free(out);
		return ns_inuse_report_text(&rep, name) ?: strdup("error");
	}
	for (size_t i = 0; i < rep.n; i++) {
		char *n;
		if (asprintf(&n, "%s%s %s %s\n", out, rep.v[i].device, rep.v[i].kind, rep.v[i].detail) < 0)
			break;
		free(out);
		out = n;
	}
	ns_inuse_report_free(&rep);
	return out;
}

#define EXPECT(name, want)                      \
	do {                                    \
		char *_h = holders(root, name); \
		CHECK_STR(_h, want);            \
		free(_h);                       \
	} while (0)

int main(void)
{
	char tmpl[] = "/tmp/numastor-test-inuse.XXXXXX";
	struct ns_root *root = NULL;
	struct ns_inuse_report rep;
	char *s;

	if (!mkdtemp(tmpl))
		return 1;
	snprintf(base, sizeof(base), "%s", tmpl);
	snprintf(fr_base, sizeof(fr_base), "%s", tmpl);
	/* the machine: sda (root on sda1), sdb (2 partitions), sdc, nvme0n1 (1 partition), an
	 * NVMe multipath namespace nvme1n1 with its two paths */
	disk("sda", "0000:00:02.0/host0/target0:0:0/0:0:0:0/block", 8, 0, 1);
	disk("sdb", "0000:00:03.0/host1/target1:0:0/1:0:0:0/block", 8, 16, 2);
	disk("sdc", "0000:00:03.0/host1/target1:0:1/1:0:1:0/block", 8, 32, 0);
	disk("nvme0n1", "0000:00:04.0/nvme/nvme0", 259, 0, 1);
	disk("nvme1c1n1", "0000:00:05.0/nvme/nvme1", 259, 10, 0);
	disk("nvme1c2n1", "0000:00:06.0/nvme/nvme2", 259, 11, 0);
	fr_mkdirs("sys/devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1/holders");
	fr_put("sys/devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1/dev", "259:12\n");
	fr_lnk("sys/block/nvme1n1", "../devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1");
	proc(1, "init", "mnt:[4026531841]", ROOT_MI);
	proc(50, "sh", "mnt:[4026531841]", ROOT_MI);
	fr_put("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
	CHECK(ns_root_open(base, &root) == 0);

	/* nothing uses sdc; sda1 holds the root file system (pid 1's /) */
	EXPECT("sdc", "");
	EXPECT("sda", "sda1 root-fs holds the root file system (/, pid 1's)\n");
	CHECK(ns_inuse_check_name(root, "sdz", &rep) == -ENOENT);

	/* mount: sdb2 mounted in our namespace (pid 1's, seen again through pid 50: listed once) */
	proc(1, "init", "mnt:[4026531841]",
	     "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n30 22 8:18 / /mnt/data\\040x rw - ext4 /dev/sdb2 rw\n");
	proc(50, "sh", "mnt:[4026531841]",
	     "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n30 22 8:18 / /mnt/data\\040x rw - ext4 /dev/sdb2 rw\n");
	EXPECT("sdb", "sdb2 mount mounted at /mnt/data x\n");
	EXPECT("sdc", ""); /* twin: another disk's mount */
	CHECK(ns_inuse_check_name(root, "sdb", &rep) == 0);
	s = ns_inuse_report_text(&rep, "sdb");
	CHECK_STR(s, "sdb2 mounted at /mnt/data x");
	free(s);
	ns_inuse_report_free(&rep);
	proc(1, "init", "mnt:[4026531841]", ROOT_MI);
	proc(50, "sh", "mnt:[4026531841]", ROOT_MI);

	/* mount in another namespace only (pid 60 after unshare -m) */
	proc(60, "unshare", "mnt:[4026532200]",
	     "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n31 22 8:32 / /srv rw - ext4 /dev/sdc rw\n");
	EXPECT("sdc", "sdc mount mounted at /srv in mount namespace mnt:[4026532200] (pid 60 unshare)\n");
	/* twin: the same mountinfo in our own namespace is just "mounted at" */
	proc(60, "unshare", "mnt:[4026531841]", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
	EXPECT("sdc", "");
	/* a namespace whose ns link is unreadable is still looked at */
	rm("proc/60/ns/mnt");
	proc(61, "db", "mnt:[4026532201]", "31 22 8:32 / /srv rw - ext4 /dev/sdc rw\n");
	EXPECT("sdc", "sdc mount mounted at /srv in mount namespace mnt:[4026532201] (pid 61 db)\n");
	fr_put("proc/61/mountinfo", "%s", "");
	/* twin: an unreadable ns link whose table is ours (pid 1's) is our namespace, not another */
	fr_put("proc/60/mountinfo", "%s", ROOT_MI);
	EXPECT("sda", "sda1 root-fs holds the root file system (/, pid 1's)\n");
	fr_lnk("proc/60/ns/mnt", "mnt:[4026531841]");

	/* btrfs: an anonymous device in mountinfo, the members in sys/fs/btrfs/UUID/devices/ */
	fr_mkdirs("sys/fs/btrfs/features");
	fr_lnk("sys/fs/btrfs/5d1e-aa/devices/nvme1n1",
	       "../../../../devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1");
	ours("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n40 22 0:45 / /mnt/b rw - btrfs /dev/nvme1n1 rw\n");
	/* asked for a path device, the head is what is mounted */
	EXPECT("nvme1c1n1", "nvme1n1 btrfs nvme1n1: member of btrfs 5d1e-aa mounted at /mnt/b\n");
	EXPECT("nvme1n1", "nvme1n1 btrfs nvme1n1: member of btrfs 5d1e-aa mounted at /mnt/b\n");
	EXPECT("nvme0n1", ""); /* twin: another NVMe */
	/* mounted, but no mount point seen (a namespace we cannot read): still refused */
	ours(ROOT_MI);
	EXPECT("nvme1n1", "nvme1n1 btrfs nvme1n1: member of btrfs 5d1e-aa, which is mounted (no mount point found in "
			  "any mount namespace)\n");
	rm("sys/fs/btrfs/5d1e-aa/devices/nvme1n1");
	EXPECT("nvme1n1", "");
	/* zfs mounted while the module is there: unknown; without the module, not ours */
	ours("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n41 22 0:46 / /tank rw - zfs tank rw\n");
	EXPECT("sdc", "");
	fr_mkdirs("sys/module/zfs");
	EXPECT("sdc", "sdc unknown-fs a zfs file system is mounted at /tank and which disks it uses cannot be told "
		      "from sysfs: refused while one is mounted\n");
	ours(ROOT_MI);

	/* open descriptors: by name; twin: another device, a socket */
	fr_lnk("proc/50/fd/0", "/dev/null");
	fr_lnk("proc/50/fd/3", "socket:[123]");
	fr_lnk("proc/50/fd/4", "/dev/sdb");
	EXPECT("sdb", "sdb open-fd open by sh (pid 50)\n");
	EXPECT("sdc", "");
	rm("proc/50/fd/4");
	fr_lnk("proc/50/fd/5", "/dev/nvme1n1 (deleted)");
	EXPECT("nvme1c2n1", "nvme1n1 open-fd open by sh (pid 50)\n");
	rm("proc/50/fd/5");

	/* mappings */
	fr_put("proc/50/maps", "7f0000000000-7f0000100000 r--s 00000000 00:05 301 /dev/sdb1\n"
			       "7f0000200000-7f0000300000 r--p 00000000 08:01 131 /usr/lib/libc.so.6\n");
	EXPECT("sdb", "sdb1 mapping mapped by sh (pid 50)\n");
	EXPECT("sdc", "");
	fr_put("proc/50/maps", "%s", "");

	/* holders: dm on a partition, by its dm name; md; twin: another disk's */
	fr_lnk("sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/nvme0n1p1/holders/dm-0",
	       "../../../../../../virtual/block/dm-0");
	fr_put("sys/devices/virtual/block/dm-0/dm/name", "vg-data\n");
	fr_lnk("sys/block/dm-0", "../devices/virtual/block/dm-0");
	EXPECT("nvme0n1", "nvme0n1p1 holder held by dm-0 (device-mapper vg-data)\n");
	EXPECT("nvme1n1", "");
	fr_lnk("sys/devices/pci0000:00/0000:00:03.0/host1/target1:0:1/1:0:1:0/block/sdc/holders/md127", "x");
	EXPECT("sdc", "sdc holder held by md127 (md array)\n");
	rm("sys/devices/pci0000:00/0000:00:03.0/host1/target1:0:1/1:0:1:0/block/sdc/holders/md127");

	/* root through dm: pid 1's / on dm-0, whose slave is nvme0n1p1 */
	fr_lnk("sys/devices/virtual/block/dm-0/slaves/nvme0n1p1",
	       "../../../../pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/nvme0n1p1");
	fr_lnk("sys/dev/block/253:0", "../../devices/virtual/block/dm-0");
	proc(1, "init", "mnt:[4026531841]", "22 1 253:0 / / rw - ext4 /dev/mapper/vg-data rw\n");
	EXPECT("nvme0n1", "nvme0n1p1 root-fs holds the root file system (/, pid 1's) through dm-0 (vg-data)\n"
			  "nvme0n1p1 holder held by dm-0 (device-mapper vg-data)\n");
	/* /usr on the same dm (and / elsewhere); twin: sda no longer holds / */
	proc(1, "init", "mnt:[4026531841]",
	     "22 1 8:32 / / rw - ext4 /dev/sdc rw\n23 22 253:0 / /usr rw - ext4 /dev/mapper/vg-data rw\n");
	rm("sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/nvme0n1p1/holders/dm-0");
	EXPECT("nvme0n1", "nvme0n1p1 usr-fs holds the /usr file system (/usr, pid 1's) through dm-0 (vg-data)\n");
	EXPECT("sda", "");
	EXPECT("sdc", "sdc root-fs holds the root file system (/, pid 1's)\n");
	/* root on btrfs (anonymous device): through its members */
	fr_lnk("sys/fs/btrfs/77aa/devices/sdb1", "x");
	proc(1, "init", "mnt:[4026531841]", "22 1 0:30 / / rw - btrfs /dev/sdb1 rw\n");
	EXPECT("sdb", "sdb1 root-fs holds the root file system (/, pid 1's) through btrfs 77aa\n");
	rm("sys/fs/btrfs/77aa/devices/sdb1");
	proc(1, "init", "mnt:[4026531841]", ROOT_MI);

	/* swap: by name under a sysroot; twin: another disk's partition */
	fr_put("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n/dev/sdb1  partition\t1048572\t0\t-2\n");
	EXPECT("sdb", "sdb1 swap used as swap (/dev/sdb1)\n");
	EXPECT("sdc", "");
	CHECK(ns_inuse_check_name(root, "sdb", &rep) == 0);
	s = ns_inuse_report_text(&rep, "sdb");
	CHECK_STR(s, "used as swap (/dev/sdb1)"); /* the detail names the device itself */
	free(s);
	ns_inuse_report_free(&rep);
	fr_put("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");

	/* the kernel's users, none of them a mount, fd or holder. A loop device: its backing file
	 * the head (asked for a path device or the head), twin another NVMe; on a per-path disk of
	 * the head: asked for the head, its paths are what the swap detaches too */
	fr_put("sys/devices/virtual/block/loop0/dev", "7:0\n");
	fr_lnk("sys/block/loop0", "../devices/virtual/block/loop0");
	fr_put("sys/devices/virtual/block/loop0/loop/backing_file", "/dev/nvme1n1\n");
	EXPECT("nvme1c1n1", "nvme1n1 loop backs loop0 (backing file /dev/nvme1n1)\n");
	EXPECT("nvme1n1", "nvme1n1 loop backs loop0 (backing file /dev/nvme1n1)\n");
	EXPECT("nvme0n1", "");
	fr_put("sys/devices/virtual/block/loop0/loop/backing_file", "/dev/nvme1c2n1\n");
	EXPECT("nvme1n1", "nvme1c2n1 loop backs loop0 (backing file /dev/nvme1c2n1)\n");
	/* a partition by a /dev/disk/by-id link, resolved to its device number (class/block) */
	fr_put("dev/nvme0n1p1", "%s", "");
	fr_lnk("dev/disk/by-id/nvme-ROOT-part1", "../../nvme0n1p1");
	fr_lnk("sys/class/block/nvme0n1p1", "../../devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/nvme0n1p1");
	fr_lnk("sys/class/block/sdb1",
	       "../../devices/pci0000:00/0000:00:03.0/host1/target1:0:0/1:0:0:0/block/sdb/sdb1");
	fr_put("sys/devices/virtual/block/loop0/loop/backing_file", "/dev/disk/by-id/nvme-ROOT-part1\n");
	EXPECT("nvme0n1", "nvme0n1p1 loop backs loop0 (backing file /dev/disk/by-id/nvme-ROOT-part1)\n");
	EXPECT("nvme1n1", "");
	/* twin: the link's name says nvme, the device it leads to is another disk's partition */
	fr_put("dev/sdb1", "%s", "");
	fr_lnk("dev/disk/by-id/nvme-ROOT-part1", "../../sdb1");
	EXPECT("nvme0n1", "");
	EXPECT("sdb", "sdb1 loop backs loop0 (backing file /dev/disk/by-id/nvme-ROOT-part1)\n");
	/* a file on a file system of the disk (sdc at /srv); twins: on the root disk, on tmpfs */
	ours("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n24 22 0:30 / /tmp rw - tmpfs tmpfs rw\n"
	     "31 22 8:32 / /srv rw - ext4 /dev/sdc rw\n");
	fr_put("sys/devices/virtual/block/loop0/loop/backing_file", "/srv/img/disk.img\n");
	EXPECT("sdc", "sdc mount mounted at /srv\nsdc loop backs loop0 (backing file /srv/img/disk.img)\n");
	EXPECT("sdb", "");
	fr_put("sys/devices/virtual/block/loop0/loop/backing_file", "/srvx/disk.img\n");
	EXPECT("sdc", "sdc mount mounted at /srv\n");
	fr_put("sys/devices/virtual/block/loop0/loop/backing_file", "/tmp/disk.img\n");
	EXPECT("sdc", "sdc mount mounted at /srv\n");
	/* a file on dm-0 (its slave nvme0n1p1), mounted lazily away: no mount but the loop's */
	ours("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n32 22 253:0 / /data rw - ext4 /dev/mapper/vg-data rw\n");
	fr_put("sys/devices/virtual/block/loop0/loop/backing_file", "/data/x.img\n");
	EXPECT("nvme0n1", "nvme0n1p1 loop backs loop0 (backing file /data/x.img)\n");
	EXPECT("sdc", "");
	ours(ROOT_MI);
	/* cannot be resolved: deleted, or bound with no readable backing file; twin: unbound */
	fr_put("sys/devices/virtual/block/loop0/loop/backing_file", "/srv/img/disk.img (deleted)\n");
	EXPECT("sdc", "sdc unknown-user loop0: its backing file /srv/img/disk.img (deleted) cannot be resolved (No "
		      "such file or directory): whether it lies on sdc is unknown\n");
	rm("sys/devices/virtual/block/loop0/loop/backing_file");
	EXPECT("sdc", "sdc unknown-user loop0 is bound and its backing file cannot be read "
		      "(/sys/block/loop0/loop/backing_file: No such file or directory): whether it lies on sdc is "
		      "unknown\n");
	rm_dir("sys/devices/virtual/block/loop0/loop");
	EXPECT("sdc", "");

	/* nvmet: a namespace on the head, enabled or not; twin: on another disk */
	fr_mkdirs("sys/module/nvmet");
	EXPECT("sdc", "sdc unknown-user the nvmet module is loaded and /sys/kernel/config/nvmet is not there "
		      "(configfs not mounted at /sys/kernel/config): whether an NVMe target namespace uses sdc is "
		      "unknown\n");
	fr_mkdirs("sys/kernel/config/nvmet/subsystems/nqn.2024-01.io.test:t1/namespaces/1");
	EXPECT("sdc", "");
	fr_put("sys/kernel/config/nvmet/subsystems/nqn.2024-01.io.test:t1/namespaces/1/device_path", "/dev/nvme1n1\n");
	fr_put("sys/kernel/config/nvmet/subsystems/nqn.2024-01.io.test:t1/namespaces/1/enable", "0\n");
	EXPECT("nvme1c1n1", "nvme1n1 nvmet backs nvmet namespace 1 of subsystem nqn.2024-01.io.test:t1 (disabled) "
			    "(device_path /dev/nvme1n1)\n");
	EXPECT("nvme0n1", "");
	fr_put("sys/kernel/config/nvmet/subsystems/nqn.2024-01.io.test:t1/namespaces/1/device_path", "/dev/sdc\n");
	fr_put("sys/kernel/config/nvmet/subsystems/nqn.2024-01.io.test:t1/namespaces/1/enable", "1\n");
	EXPECT("nvme1n1", "");
	EXPECT("sdc", "sdc nvmet backs nvmet namespace 1 of subsystem nqn.2024-01.io.test:t1 (enabled) (device_path "
		      "/dev/sdc)\n");
	/* a path that names nothing: unknown while enabled, nothing held while disabled */
	fr_put("sys/kernel/config/nvmet/subsystems/nqn.2024-01.io.test:t1/namespaces/1/device_path", "/dev/sdq\n");
	EXPECT("sdc", "sdc unknown-user nvmet namespace 1 of subsystem nqn.2024-01.io.test:t1 (enabled): its "
		      "device_path /dev/sdq cannot be resolved (No such file or directory): whether it lies on sdc "
		      "is unknown\n");
	fr_put("sys/kernel/config/nvmet/subsystems/nqn.2024-01.io.test:t1/namespaces/1/enable", "0\n");
	EXPECT("sdc", "");
	rm_dir("sys/kernel/config/nvmet");
	rm_dir("sys/module/nvmet");

	/* LIO: an iblock backstore on a partition, a pscsi one on a disk; alua/ holds no device */
	fr_mkdirs("sys/module/target_core_mod");
	EXPECT("sdb", "sdb unknown-user the target_core_mod module is loaded and /sys/kernel/config/target is not "
		      "there (configfs not mounted at /sys/kernel/config): whether a LIO backstore uses sdb is "
		      "unknown\n");
	fr_mkdirs("sys/kernel/config/target/core/alua/lu_gps/default_lu_gp");
	fr_put("sys/kernel/config/target/core/iblock_0/data1/udev_path", "/dev/sdb1\n");
	fr_put("sys/kernel/config/target/core/pscsi_0/sc0/udev_path", "/dev/sdc\n");
	fr_mkdirs("sys/kernel/config/target/core/fileio_0/empty");
	EXPECT("sdb", "sdb1 lio backs LIO backstore iblock_0/data1 (udev_path /dev/sdb1)\n");
	EXPECT("sdc", "sdc lio backs LIO backstore pscsi_0/sc0 (udev_path /dev/sdc)\n");
	EXPECT("nvme0n1", "");
	rm_dir("sys/kernel/config/target");
	rm_dir("sys/module/target_core_mod");

	/* Xen blkback: physical_device in hex (8:10 is sdb, 8:16); twin: sdc; unknown: unreadable */
	fr_put("sys/bus/xen-backend/devices/vbd-3-51712/physical_device", "8:10\n");
	fr_mkdirs("sys/bus/xen-backend/devices/vif-3-0");
	EXPECT("sdb", "sdb xen-blkback backs Xen blkback vbd-3-51712 (physical_device 8:10)\n");
	EXPECT("sdc", "");
	fr_put("sys/bus/xen-backend/devices/vbd-3-51712/physical_device", "8:zz\n");
	EXPECT("sdc", "sdc unknown-user Xen blkback vbd-3-51712: its physical device is not known "
		      "(/sys/bus/xen-backend/devices/vbd-3-51712/physical_device: 8:zz): whether it is sdc is "
		      "unknown\n");
	rm_dir("sys/bus/xen-backend");
	EXPECT("sdc", "");

	/* several at once, in one line for a refusal */
	fr_lnk("proc/50/fd/4", "/dev/sdc");
	proc(60, "unshare", "mnt:[4026532200]", "31 22 8:32 / /srv rw - ext4 /dev/sdc rw\n");
	CHECK(ns_inuse_check_name(root, "sdc", &rep) == 0);
	s = ns_inuse_report_text(&rep, "sdc");
	CHECK_STR(s, "mounted at /srv in mount namespace mnt:[4026532200] (pid 60 unshare); open by sh (pid 50)");
	free(s);
	ns_inuse_report_free(&rep);

	ns_root_free(root);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd) != 0)
			perror("rm");
	}
	return tap_done("inuse");
}
