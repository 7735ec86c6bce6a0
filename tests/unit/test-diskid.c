/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Disk identity from sysfs on a fake root: each wwid kind, udev's 0x forms, the serial
 * fallbacks, NVMe namespaces by nsid, and twins that must not compare equal. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diskid.h"
#include "root.h"
#include "tap.h"

static const char *base;

static void mkdirs(const char *rel)
{
	char p[4096], *s;
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	for (s = p + strlen(base) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

/* put("sys/block/sda/device/wwid", ...) makes the directories on the way */
static void put(const char *rel, const char *text)
{
	char p[4096], d[4096], *slash;
	int fd;
	snprintf(d, sizeof(d), "%s", rel);
	slash = strrchr(d, '/');
	if (slash) {
		*slash = '\0';
		mkdirs(d);
	}
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror("write");
		close(fd);
	}
}

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
	put("sys/block/sda/device/wwid", "naa.5000C500AA\n");
	put("sys/block/sda/device/serial", "Z1234\n");
	/* its twin: the next WWN */
	put("sys/block/sdb/device/wwid", "naa.5000c500ab\n");
	/* an ATA disk behind libata: t10 */
	put("sys/block/sdc/device/wwid", "t10.ATA     QEMU HARDDISK                           QM00001 \n");
	put("sys/block/sdd/device/wwid", "t10.ATA     QEMU HARDDISK                           QM00002 \n");
	/* wwid empty: the serial */
	put("sys/block/sde/device/wwid", "\n");
	put("sys/block/sde/device/serial", "  SER-E  \n");
	/* no wwid at all, a virtio disk's own serial file */
	put("sys/block/vda/serial", "virtio-disk-1\n");
	put("sys/block/vdb/serial", "virtio-disk-2\n");
	/* device/serial preferred over serial */
	put("sys/block/vdc/device/serial", "from-device\n");
	put("sys/block/vdc/serial", "from-disk\n");
	/* nothing known */
	put("sys/block/loop0/size", "0\n");
	/* NVMe: eui, nguid, uuid, and the kernel's nvme. fallback */
	put("sys/block/nvme0n1/wwid", "eui.0025388B91D0A8D4\n");
	put("sys/block/nvme0n1/nsid", "1\n");
	put("sys/block/nvme0n1/device/serial", "S4EWNX0R\n");
	put("sys/block/nvme1n1/wwid", "uuid.3E5F9B2C-1D4A-4E6B-9F00-ABCDEF012345\n");
	put("sys/block/nvme2n1/wwid", "nguid.0025388b91d0a8d40000000000000001\n");
	/* NVMe without a wwid: controller serial plus nsid; two namespaces of one controller */
	put("sys/block/nvme3n1/nsid", "1\n");
	put("sys/block/nvme3n1/device/serial", "deadbeef            \n");
	put("sys/block/nvme3n2/nsid", "2\n");
	put("sys/block/nvme3n2/device/serial", "deadbeef\n");
	/* the same namespace under another name after a reload */
	put("sys/block/nvme7n1/nsid", "1\n");
	put("sys/block/nvme7n1/device/serial", "deadbeef\n");
	/* a garbled nsid is left out rather than guessed */
	put("sys/block/nvme4n1/nsid", "x\n");
	put("sys/block/nvme4n1/device/serial", "cafe\n");

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
