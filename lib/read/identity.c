/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/identity.h"

#include <errno.h>
#include <libudev.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/notes.h"
#include "read/blockdev.h"
#include "read/root.h"

void *ns_identity_open(struct ns_root *root)
{
	return ns_root_is_live(root) ? udev_new() : NULL;
}

void ns_identity_close(void *udev)
{
	if (udev)
		udev_unref(udev);
}

static void set(char **dst, const char *v)
{
	if (!*dst && v && *v)
		*dst = strdup(v);
}

static void from_libudev(struct udev *udev, struct ns_disk *d)
{
	char syspath[4096];
	struct udev_device *dev;
	struct udev_list_entry *e;

	snprintf(syspath, sizeof(syspath), "/%s", d->syspath);
	dev = udev_device_new_from_syspath(udev, syspath);
	if (!dev)
		return;
	set(&d->identity.model, udev_device_get_property_value(dev, "ID_MODEL"));
	/* ID_SERIAL_SHORT is the device's own serial (as sysfs has it); ID_SERIAL adds the model */
	set(&d->identity.serial, udev_device_get_property_value(dev, "ID_SERIAL_SHORT"));
	set(&d->identity.serial, udev_device_get_property_value(dev, "ID_SERIAL"));
	set(&d->identity.wwn, udev_device_get_property_value(dev, "ID_WWN"));
	udev_list_entry_foreach (e, udev_device_get_devlinks_list_entry(dev)) {
		const char *link = udev_list_entry_get_name(e);
		if (strstr(link, "/by-id/")) {
			set(&d->identity.by_id, link);
			break;
		}
	}
	udev_device_unref(dev);
}

/* The udev database file format: "E:KEY=value" properties, "S:link" symlinks below /dev. */
static void from_udev_data(struct ns_root *root, struct ns_disk *d, struct ns_notes *notes)
{
	char p[128], *txt, *line, *save = NULL;
	char *serial_short = NULL, *serial_long = NULL;
	int r;

	if (!d->devnum)
		return;
	snprintf(p, sizeof(p), "run/udev/data/b%s", d->devnum);
	if ((r = ns_read_str(root, p, &txt)) < 0) {
		/* absent: udev knows nothing of it (sysfs then says what it can) */
		if (r != -ENOENT && r != -ENODATA) /* empty: udev knows nothing either */
			ns_note_read(notes, d->name, "identity", p, r, NULL);
		return;
	}
	for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "E:ID_MODEL=", 11) == 0)
			set(&d->identity.model, line + 11);
		else if (strncmp(line, "E:ID_SERIAL_SHORT=", 18) == 0)
			set(&serial_short, line + 18);
		else if (strncmp(line, "E:ID_SERIAL=", 12) == 0)
			set(&serial_long, line + 12);
		else if (strncmp(line, "E:ID_WWN=", 9) == 0)
			set(&d->identity.wwn, line + 9);
		else if (strncmp(line, "S:disk/by-id/", 13) == 0 && !d->identity.by_id) {
			if (asprintf(&d->identity.by_id, "/dev/%s", line + 2) < 0)
				d->identity.by_id = NULL;
		}
	}
	/* the short form is the device's own serial, as sysfs has it: prefer it */
	d->identity.serial = serial_short ? serial_short : serial_long;
	if (serial_short)
		free(serial_long);
	free(txt);
}

/* What the kernel itself exposes (nvme, SCSI and virtio attributes). */
static void from_sysfs(struct ns_root *root, struct ns_disk *d, struct ns_notes *notes)
{
	static const struct {
		const char *file;
		size_t off;
	} attrs[] = {
		{"device/model", offsetof(struct ns_identity, model)},
		{"device/serial", offsetof(struct ns_identity, serial)},
		{"serial", offsetof(struct ns_identity, serial)},
		{"wwid", offsetof(struct ns_identity, wwn)},
		{"device/wwid", offsetof(struct ns_identity, wwn)},
	};

	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		char **dst = (char **)((char *)&d->identity + attrs[i].off);
		char p[4096], *v;
		if (*dst)
			continue;
		snprintf(p, sizeof(p), "%s/%s", d->syspath, attrs[i].file);
		int r = ns_read_str(root, p, &v);
		/*
		 * A SCSI device's wwid read fails with EINVAL when the device has no identification
		 * VPD page (scsi_vpd_lun_id; QEMU's SCSI disks on 6.1): the kernel's way of saying it
		 * has none, as an absent file says it. A snapshot records no failed read, so its
		 * replay finds the file absent: noted live and silent replayed would differ.
		 */
		if (r == 0)
			*dst = v;
		else if (r != -ENOENT && r != -ENOTDIR && r != -ENODATA &&
			 !(r == -EINVAL && strstr(attrs[i].file, "wwid")))
			ns_note_read(notes, d->name, "identity", p, r, NULL);
	}
}

void ns_identity_read(struct ns_root *root, void *udev, struct ns_disk *d, struct ns_notes *notes)
{
	if (ns_disk_is_virtual(d))
		return;
	if (udev)
		from_libudev(udev, d);
	else
		from_udev_data(root, d, notes);
	from_sysfs(root, d, notes);
}
