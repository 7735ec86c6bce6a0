/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A disk's stable identity, for matching a disk across a driver reload or a rename: never its
 * name, only what the device says about itself in sysfs.
 *
 *   "wwid:<kind>.<value>"  from sys/block/X/wwid (NVMe) or sys/block/X/device/wwid (SCSI): the
 *                          kind prefix kept (naa. eui. nguid. uuid. t10. nvme.), lowercased; the
 *                          value trimmed, hex lowercased (t10 text: inner runs of blanks made one)
 *   "serial:<s>"           else from device/serial or serial, trimmed
 *   "serial:<s>/nsid:<n>"  the same for an NVMe namespace (it has an nsid file): the namespaces of
 *                          one controller share its serial
 *
 * Two disks are the same disk exactly when their identities compare equal with strcmp.
 */
#ifndef NUMASTOR_DISKID_H
#define NUMASTOR_DISKID_H

struct ns_root;

/* *id is malloc'd. -ENOENT when none is known, -EINVAL for a name that is not one component. */
int ns_diskid_from_sysfs(struct ns_root *root, const char *disk, char **id);

/*
 * udev's ID_WWN ("0x5000c500...") or ID_WWN_WITH_EXTENSION, or a sysfs wwid, to the normalised
 * form above without the "wwid:" prefix, so "0x5000c500aa" and "naa.5000c500aa" compare equal.
 * (A 0x form is a NAA name; for NAA type 6 pass ID_WWN_WITH_EXTENSION, which carries the whole
 * 16 bytes as sysfs does.) NULL for an empty or blank string, or when out of memory.
 */
char *ns_diskid_normalise_wwn(const char *s);

#endif
