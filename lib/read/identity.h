/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Who a disk is: model, serial, WWN, by-id link. libudev on the live root, captured udev data
 * (run/udev/data/b<maj>:<min>) under a sysroot, sysfs attributes when udev knows nothing. */
#ifndef NUMASTOR_IDENTITY_H
#define NUMASTOR_IDENTITY_H

struct ns_disk;
struct ns_notes;
struct ns_root;

/* Fill d->identity; udev is ns_identity_open()'s context (NULL under a sysroot). A file that is
 * there but cannot be read is noted: the identity it would give is then not told. */
void ns_identity_read(struct ns_root *root, void *udev, struct ns_disk *d, struct ns_notes *notes);
/* libudev context for the live root (NULL elsewhere); freed with ns_identity_close(). */
void *ns_identity_open(struct ns_root *root);
void ns_identity_close(void *udev);

#endif
