/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Disk identity from sysfs on a fake root: each wwid kind, udev's 0x forms, the serial
 * fallbacks, NVMe namespaces by nsid, and twins that must not compare equal. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/diskid.h"
#include "read/root.h"
#include "fakeroot.h"
#include "tap.h"

static const char *base;

static char *id_of(struct ns_root *root, const char *disk, int *rc)
{
	char *id = NULL;
	*rc = ns_diskid_from_sysfs(root, disk, &id);
	return id;
}

#define CHECK_ID(root, disk, want)                   \
	do {                                         \
		int _rc;                             \
		char *_id = id_of(root, disk, &_rc); \
		CHECK(_rc == 0);                     \
		CHECK_STR(_id, want);                \
		free(_id);                           \
	} while (0)

#define CHECK_NORM(in, want)                            \
	do {                                            \
		char *_n = ns_diskid_normalise_wwn(in); \
		CHECK_STR(_n, want);                    \
		free(_n);                               \
	} while (0)

static int same(struct ns_root *root, const char *a, const char *b)
{
	int ra, rb, eq;
	char *ia = id_of(root, a, &ra), *ib = id_of(root, b, &rb);
	eq = ra == 0 && rb == 0 && strcmp(ia, ib) == 0;
	free(ia);
	free(ib);
	return eq;
}

int main(void)
{
	char tmpl[] = "/tmp/numastor-test-diskid.XXXXXX";
	struct ns_root *root = NULL;
	char *id = NULL;
	int rc;

	base = mkdtemp(tmpl);
	if (!base)
		return 1;
	snprintf(fr_base, sizeof(fr_base), "%s", base);

	/* normalisation: udev's forms and sysfs's forms meet */
	CHECK_NORM("0x5000c500AA", "naa.5000c500aa");
	CHECK_NORM("naa.5000C500aa", "naa.5000c500aa");
	CHECK_NORM("NAA.5000c500aa\n", "naa.5000c500aa");
	CHECK_NORM("  0X5000C500AA  ", "naa.5000c500aa");
	CHECK_NORM("0x6005076801808000d000000000000001", "naa.6005076801808000d000000000000001");
	CHECK_NORM("eui.0025388B91D0A8D4", "eui.0025388b91d0a8d4");
	CHECK_NORM("nguid.0025388B91D0A8D40000000000000001", "nguid.0025388b91d0a8d40000000000000001");
	CHECK_NORM("uuid.3E5F9B2C-1D4A-4E6B-9F00-ABCDEF012345", "uuid.3e5f9b2c-1d4a-4e6b-9f00-abcdef012345");
	/* t10 is vendor text: blanks trimmed and squeezed, case kept */
	CHECK_NORM("t10.ATA     QEMU HARDDISK                           QM00001 ", "t10.ATA QEMU HARDDISK QM00001");
	CHECK_NORM("nvme.1b36-6465616462656566-51454d55204e564d65204374726c-00000001",
		   "nvme.1b36-6465616462656566-51454d55204e564d65204374726c-00000001");
	CHECK(ns_diskid_normalise_wwn("") == NULL);
	CHECK(ns_diskid_normalise_wwn("   \n") == NULL);
	CHECK(ns_diskid_normalise_wwn(NULL) == NULL);
	{
		/* twins: one digit apart, or the same digits under another kind */
		char *a = ns_diskid_normalise_wwn("0x5000c500aa");
		char *b = ns_diskid_normalise_wwn("naa.5000c500ab");
		char *c = ns_diskid_normalise_wwn("eui.5000c500aa");
		char *d = ns_diskid_normalise_wwn("t10.ATA QEMU HARDDISK QM00001");
		char *e = ns_diskid_normalise_wwn("t10.ATA QEMU HARDDISK QM00002");
		CHECK(a && b && strcmp(a, b) != 0);
		CHECK(a && c && strcmp(a, c) != 0);
		CHECK(d && e && strcmp(d, e) != 0);
		free(a);
		free(b);
		free(c);
		free(d);
		free(e);
	}

	/* SCSI: device/wwid */
	fr_put("sys/block/sda/device/wwid", "%s", "naa.5000C500AA\n");
	fr_put("sys/block/sda/device/serial", "%s", "Z1234\n");
	/* its twin: the next WWN */
	fr_put("sys/block/sdb/device/wwid", "%s", "naa.5000c500ab\n");
	/* an ATA disk behind libata: t10 */
	fr_put("sys/block/sdc/device/wwid", "%s", "t10.ATA     QEMU HARDDISK                           QM00001 \n");
	fr_put("sys/block/sdd/device/wwid", "%s", "t10.ATA     QEMU HARDDISK                           QM00002 \n");
	/* wwid empty: the serial */
	fr_put("sys/block/sde/device/wwid", "%s", "\n");
	fr_put("sys/block/sde/device/serial", "%s", "  SER-E  \n");
	/* no wwid at all, a virtio disk's own serial file */
	fr_put("sys/block/vda/serial", "%s", "virtio-disk-1\n");
	fr_put("sys/block/vdb/serial", "%s", "virtio-disk-2\n");
	/* device/serial preferred over serial */
	fr_put("sys/block/vdc/device/serial", "%s", "from-device\n");
	fr_put("sys/block/vdc/serial", "%s", "from-disk\n");
	/* nothing known */
	fr_put("sys/block/loop0/size", "%s", "0\n");
	/* NVMe: eui, nguid, uuid, and the kernel's nvme. fallback */
	fr_put("sys/block/nvme0n1/wwid", "%s", "eui.0025388B91D0A8D4\n");
	fr_put("sys/block/nvme0n1/nsid", "%s", "1\n");
	fr_put("sys/block/nvme0n1/device/serial", "%s", "S4EWNX0R\n");
	fr_put("sys/block/nvme1n1/wwid", "%s", "uuid.3E5F9B2C-1D4A-4E6B-9F00-ABCDEF012345\n");
	fr_put("sys/block/nvme2n1/wwid", "%s", "nguid.0025388b91d0a8d40000000000000001\n");
	/* NVMe without a wwid: controller serial plus nsid; two namespaces of one controller */
	fr_put("sys/block/nvme3n1/nsid", "%s", "1\n");
	fr_put("sys/block/nvme3n1/device/serial", "%s", "deadbeef            \n");
	fr_put("sys/block/nvme3n2/nsid", "%s", "2\n");
	fr_put("sys/block/nvme3n2/device/serial", "%s", "deadbeef\n");
	/* the same namespace under another name after a reload */
	fr_put("sys/block/nvme7n1/nsid", "%s", "1\n");
	fr_put("sys/block/nvme7n1/device/serial", "%s", "deadbeef\n");
	/* a garbled nsid is left out rather than guessed */
	fr_put("sys/block/nvme4n1/nsid", "%s", "x\n");
	fr_put("sys/block/nvme4n1/device/serial", "%s", "cafe\n");

	CHECK(ns_root_open(base, &root) == 0);
	CHECK_ID(root, "sda", "wwid:naa.5000c500aa");
	CHECK_ID(root, "sdb", "wwid:naa.5000c500ab");
	CHECK_ID(root, "sdc", "wwid:t10.ATA QEMU HARDDISK QM00001");
	CHECK_ID(root, "sde", "serial:SER-E");
	CHECK_ID(root, "vda", "serial:virtio-disk-1");
	CHECK_ID(root, "vdc", "serial:from-device");
	CHECK_ID(root, "nvme0n1", "wwid:eui.0025388b91d0a8d4");
	CHECK_ID(root, "nvme1n1", "wwid:uuid.3e5f9b2c-1d4a-4e6b-9f00-abcdef012345");
	CHECK_ID(root, "nvme2n1", "wwid:nguid.0025388b91d0a8d40000000000000001");
	CHECK_ID(root, "nvme3n1", "serial:deadbeef/nsid:1");
	CHECK_ID(root, "nvme3n2", "serial:deadbeef/nsid:2");
	CHECK_ID(root, "nvme4n1", "serial:cafe");

	/* twins */
	CHECK(!same(root, "sda", "sdb"));
	CHECK(!same(root, "sdc", "sdd"));
	CHECK(!same(root, "vda", "vdb"));
	CHECK(!same(root, "nvme3n1", "nvme3n2"));
	/* renamed, the same */
	CHECK(same(root, "nvme3n1", "nvme7n1"));
	{
		/* udev's ID_WWN of sda against its sysfs identity */
		char *n = ns_diskid_normalise_wwn("0x5000c500aa"), *want = NULL;
		CHECK(n != NULL);
		if (n && asprintf(&want, "wwid:%s", n) > 0) {
			char *got = id_of(root, "sda", &rc);
			CHECK_STR(got, want);
			free(got);
			free(want);
		}
		free(n);
	}

	CHECK(ns_diskid_from_sysfs(root, "loop0", &id) == -ENOENT && id == NULL);
	CHECK(ns_diskid_from_sysfs(root, "missing", &id) == -ENOENT && id == NULL);
	CHECK(ns_diskid_from_sysfs(root, "../sda", &id) == -EINVAL);
	CHECK(ns_diskid_from_sysfs(root, "..", &id) == -EINVAL);
	CHECK(ns_diskid_from_sysfs(root, "", &id) == -EINVAL);

	ns_root_free(root);
	{
		char cmd[4200];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", base);
	}
	return tap_done("diskid");
}
