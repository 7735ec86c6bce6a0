/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What of --install's checks a unit test calls (not for the front end). */
#ifndef NUMASTOR_MODSWAP_INSTALL_H
#define NUMASTOR_MODSWAP_INSTALL_H

#include <stdbool.h>

/* Does an initramfs listing (lsinitramfs, one path a line) carry a module
 * file of name (NAME.ko, compressed or not; '-' and '_' alike): from updates/numastor/, and
 * another copy. */
void ns_swap_initramfs_carries(const char *listing, const char *name, bool *numastor, bool *other);

#endif
