/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What --install reads in an initramfs listing (lsinitramfs): a module carried from
 * updates/numastor, and any other copy of it, by its name as the kernel compares names. */
#define _GNU_SOURCE
#include <stdbool.h>

#include "swap/modswap-install.h"
#include "tap.h"

static void carries(const char *listing, const char *name, bool want_ours, bool want_other)
{
	bool ours = !want_ours, other = !want_other;
	ns_swap_initramfs_carries(listing, name, &ours, &other);
	CHECK(ours == want_ours);
	CHECK(other == want_other);
	if (ours != want_ours || other != want_other)
		fprintf(stderr, "  %s in:\n%s\n", name, listing ? listing : "(null)");
}

int main(void)
{
	const char *stock = "usr/lib/modules/6.1.0-57-amd64/kernel/drivers/scsi/scsi_mod.ko\n"
			    "usr/lib/modules/6.1.0-57-amd64/kernel/drivers/scsi/sd_mod.ko\n"
			    "usr/lib/modules/6.1.0-57-amd64/kernel/drivers/scsi/megaraid/megaraid_sas.ko\n"
			    "usr/lib/modules/6.1.0-57-amd64/modules.dep";
	const char *patched = "usr/lib/modules/6.1.0-57-amd64/updates/numastor/scsi_mod.ko\n"
			      "usr/lib/modules/6.1.0-57-amd64/updates/numastor/sd_mod.ko\n"
			      "usr/lib/modules/6.1.0-57-amd64/kernel/drivers/scsi/megaraid/megaraid_sas.ko\n";
	const char *both = "usr/lib/modules/R/updates/numastor/sd_mod.ko\n"
			   "usr/lib/modules/R/updates/dkms/sd_mod.ko.xz\n";

	carries(stock, "scsi_mod", false, true);
	carries(stock, "sd_mod", false, true);
	carries(stock, "nvme", false, false);
	carries(patched, "scsi_mod", true, false);
	carries(patched, "sd_mod", true, false);
	carries(patched, "megaraid_sas", false, true);
	carries(both, "sd_mod", true, true);
	/* names: '-' and '_' alike, compressed files, never a prefix or a suffix of another */
	carries("lib/modules/R/kernel/drivers/scsi/scsi-mod.ko.zst\n", "scsi_mod", false, true);
	carries("lib/modules/R/kernel/drivers/scsi/sd_mod.ko.gz", "sd_mod", false, true);
	carries("lib/modules/R/kernel/drivers/scsi/xsd_mod.ko\nlib/modules/R/kernel/sd_mod2.ko\n"
		"lib/modules/R/kernel/sd_mod.kox\nlib/modules/R/sd_mod.ko/\n",
		"sd_mod", false, false);
	carries("", "sd_mod", false, false);
	carries(NULL, "sd_mod", false, false);
	return tap_done("modswap-install");
}
