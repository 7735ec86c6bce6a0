/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The module-swap journal: what is saved loads back the same, and a journal that is malformed
 * or names a path outside numastor's places is refused whole (never half-read), so a revert
 * never acts on it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/root.h"
#include "state/swapjournal.h"
#include "tap.h"
#include "base/util.h"
#include "fakeroot.h"

static char base[64];

static void put_journal(const char *text)
{
	char p[4096];
	int fd;
	snprintf(p, sizeof(p), "%s/%s", base, NS_SWAP_JOURNAL_PATH);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror("write");
		close(fd);
	}
}

/* A valid journal with one field replaced by repl (the whole "KEY": VALUE text). */
static const char *good_journal =
	"{\"version\": 1, \"boot_id\": \"b1\", \"kernel_release\": \"6.1.0-57-amd64\", \"runtime\": true,"
	" \"groups\": [\"scsi\"],"
	" \"modules\": [{\"name\": \"scsi_mod\", \"loaded\": true,"
	" \"stock_path\": \"lib/modules/6.1.0-57-amd64/kernel/drivers/scsi/scsi_mod.ko\","
	" \"srcversion\": null, \"options\": \"inq_timeout=7\","
	" \"replacement\": \"var/lib/numastor/modules/6.1.0-57-amd64/scsi_mod.ko\"}],"
	" \"removed_pci\": [], \"disks\": [{\"id\": \"wwid:naa.5000c500aa\", \"name\": \"sda\", \"pci\": "
	"\"0000:82:00.0\", \"hba\": \"megaraid_sas\"}],"
	" \"installed\": [\"lib/modules/6.1.0-57-amd64/updates/numastor/scsi_mod.ko\"], \"initramfs_updated\": true}";

static int load_with(struct ns_root *root, const char *from, const char *to)
{
	char *text = strdup(good_journal), *at = strstr(text, from), *mod;
	struct ns_swap_journal j;
	int r;

	if (!at) {
		free(text);
		return -999; /* the test itself is wrong */
	}
	if (asprintf(&mod, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)) < 0)
		abort();
	put_journal(mod);
	r = ns_swap_journal_load(root, &j);
	if (r == 0)
		ns_swap_journal_free(&j);
	else
		CHECK(j.nmodules == 0 && j.ndisks == 0 && j.ninstalled == 0 && !j.boot_id);
	free(mod);
	free(text);
	return r;
}

int main(void)
{
	struct ns_root *root = NULL;
	struct ns_swap_journal j = {0}, k;
	char p[4096];

	if (!fr_make("swapjournal")) /* removed when the test ends (fakeroot.h) */
		return 1;
	snprintf(base, sizeof(base), "%s", fr_base);
	if (ns_root_open(base, &root) < 0)
		return 1;

	CHECK(ns_swap_journal_load(root, &k) == -ENOENT);

	/* round trip */
	j.boot_id = strdup("b1");
	j.kernel_release = strdup("6.1.0-57-amd64");
	j.runtime = true;
	ns_strv_add(&j.groups, &j.ngroups, "nvme");
	j.modules = calloc(2, sizeof(*j.modules));
	j.modules[0] = (struct ns_swap_jmodule){.name = strdup("nvme"),
						.loaded = true,
						.stock_path = strdup("lib/modules/r/kernel/drivers/nvme/host/nvme.ko"),
						.srcversion = strdup("ABC"),
						.options = strdup("sgl_threshold=65536")};
	j.modules[1] = (struct ns_swap_jmodule){.name = strdup("sd_mod"), .loaded = false, .options = strdup("")};
	j.nmodules = 2;
	ns_strv_add(&j.removed_pci, &j.nremoved_pci, "0000:00:02.0");
	j.disks = calloc(1, sizeof(*j.disks));
	j.disks[0] = (struct ns_swap_jdisk){.id = strdup("serial:S/nsid:1"), .name = strdup("nvme0n1")};
	j.ndisks = 1;
	CHECK(ns_swap_journal_save(root, &j) == 0);
	snprintf(p, sizeof(p), "%s/%s", base, NS_SWAP_JOURNAL_PATH);
	{
		struct stat st;
		CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
	}
	CHECK(ns_swap_journal_load(root, &k) == 0);
	CHECK_STR(k.boot_id, "b1");
	CHECK(k.runtime && k.nmodules == 2 && k.ndisks == 1 && k.nremoved_pci == 1 && k.ngroups == 1);
	CHECK_STR(k.modules[0].options, "sgl_threshold=65536");
	CHECK_STR(k.modules[0].stock_path, "lib/modules/r/kernel/drivers/nvme/host/nvme.ko");
	CHECK(k.modules[0].loaded && !k.modules[1].loaded && !k.modules[1].stock_path);
	CHECK_STR(k.disks[0].id, "serial:S/nsid:1");
	CHECK(ns_swap_journal_module(&k, "sd_mod") == &k.modules[1] && !ns_swap_journal_module(&k, "sg"));
	ns_swap_journal_free(&k);
	ns_swap_journal_free(&j);

	/* the valid journal loads (the twin of every refusal below) */
	put_journal(good_journal);
	CHECK(ns_swap_journal_load(root, &k) == 0);
	CHECK(k.initramfs_updated && k.ninstalled == 1);
	ns_swap_journal_free(&k);

	/* refused whole */
	CHECK(load_with(root, "\"version\": 1", "\"version\": 2") == -EINVAL);
	CHECK(load_with(root, "\"modules\": [", "\"modules\": \"x\", \"m\": [") == -EINVAL);
	CHECK(load_with(root, "\"installed\": [\"lib/modules/6.1.0-57-amd64/updates/numastor/scsi_mod.ko\"]",
			"\"installed\": [\"../../../../tmp/victim\"]") == -EINVAL);
	CHECK(load_with(root, "\"installed\": [\"lib/modules/6.1.0-57-amd64/updates/numastor/scsi_mod.ko\"]",
			"\"installed\": [\"/lib/modules/r/updates/numastor/x.ko\"]") == -EINVAL);
	CHECK(load_with(root, "\"installed\": [\"lib/modules/6.1.0-57-amd64/updates/numastor/scsi_mod.ko\"]",
			"\"installed\": [\"lib/modules/r/kernel/drivers/scsi/scsi_mod.ko\"]") == -EINVAL);
	CHECK(load_with(root, "\"installed\": [\"lib/modules/6.1.0-57-amd64/updates/numastor/scsi_mod.ko\"]",
			"\"installed\": \"lib/modules/r/updates/numastor/x.ko\"") == -EINVAL);
	CHECK(load_with(root, "lib/modules/6.1.0-57-amd64/kernel/drivers/scsi/scsi_mod.ko",
			"lib/modules/../../../tmp/x.ko") == -EINVAL);
	CHECK(load_with(root, "\"name\": \"scsi_mod\"", "\"name\": \"../scsi_mod\"") == -EINVAL);
	CHECK(load_with(root, "\"runtime\": true,", "") == -EINVAL);
	CHECK(load_with(root, "\"loaded\": true,", "\"loaded\": \"yes\",") == -EINVAL);
	CHECK(load_with(root, "\"name\": \"sda\",", "") == -EINVAL);
	CHECK(load_with(root, "\"groups\": [\"scsi\"]", "\"groups\": [\"\"]") == -EINVAL);
	/* installed: exactly the journal's release's own numastor directory, a plain file name */
	CHECK(load_with(root, "\"installed\": [\"lib/modules/6.1.0-57-amd64/updates/numastor/scsi_mod.ko\"]",
			"\"installed\": [\"lib/modules/6.1.0-99-amd64/updates/numastor/scsi_mod.ko\"]") == -EINVAL);
	CHECK(load_with(root, "\"installed\": [\"lib/modules/6.1.0-57-amd64/updates/numastor/scsi_mod.ko\"]",
			"\"installed\": [\"lib/modules/6.1.0-57-amd64/updates/numastor/sub/x.ko\"]") == -EINVAL);
	CHECK(load_with(root, "\"installed\": [\"lib/modules/6.1.0-57-amd64/updates/numastor/scsi_mod.ko\"]",
			"\"installed\": [\"lib/modules/6.1.0-57-amd64/updates/numastor/\"]") == -EINVAL);
	CHECK(load_with(root, "\"kernel_release\": \"6.1.0-57-amd64\"", "\"kernel_release\": null") == -EINVAL);
	/* initramfs_new: optional (the good journal has none), and only numastor's one name */
	CHECK(load_with(root, "\"initramfs_updated\": true", "\"initramfs_updated\": true, \"initramfs_new\": null") ==
	      0);
	{
		const char *from = "\"initramfs_updated\": true";
		CHECK(load_with(root, from,
				"\"initramfs_updated\": true, \"initramfs_new\": "
				"\"boot/initrd.img-6.1.0-57-amd64.numastor-new\"") == 0);
		CHECK(load_with(root, from,
				"\"initramfs_updated\": true, \"initramfs_new\": \"boot/initrd.img-6.1.0-57-amd64\"") ==
		      -EINVAL);
		CHECK(load_with(root, from,
				"\"initramfs_updated\": true, \"initramfs_new\": "
				"\"boot/initrd.img-6.1.0-99-amd64.numastor-new\"") == -EINVAL);
		CHECK(load_with(root, from, "\"initramfs_updated\": true, \"initramfs_new\": \"../etc/shadow\"") ==
		      -EINVAL);
		CHECK(load_with(root, from, "\"initramfs_updated\": true, \"initramfs_new\": 1") == -EINVAL);
	}
	{
		struct ns_swap_journal w = {0}, r2;
		w.kernel_release = strdup("6.1.0-57-amd64");
		w.initramfs_new = ns_swap_initramfs_new("6.1.0-57-amd64");
		CHECK_STR(w.initramfs_new, "boot/initrd.img-6.1.0-57-amd64.numastor-new");
		CHECK(ns_swap_journal_save(root, &w) == 0 && ns_swap_journal_load(root, &r2) == 0);
		CHECK_STR(r2.initramfs_new, "boot/initrd.img-6.1.0-57-amd64.numastor-new");
		ns_swap_journal_free(&r2);
		ns_swap_journal_free(&w);
		CHECK(!ns_swap_initramfs_new("../x") && !ns_swap_initramfs_new(NULL));
	}
	CHECK(!ns_swap_installed_ok("6.1.0-57-amd64", "lib/modules/6.1.0-57-amd64/updates/numastor/.."));
	CHECK(!ns_swap_installed_ok("..", "lib/modules/../updates/numastor/x.ko"));
	CHECK(ns_swap_installed_ok("6.1.0-57-amd64", "lib/modules/6.1.0-57-amd64/updates/numastor/x.ko"));
	/* and it resolves there: a link on the way that leads out is refused, the file left alone */
	{
		char q[4096];
		int fd;
		snprintf(q, sizeof(q), "%s/lib/modules/R/updates/numastor", base);
		CHECK(ns_mkdir_p(root, "lib/modules/R/updates/numastor") == 0);
		CHECK(ns_mkdir_p(root, "victim") == 0);
		snprintf(q, sizeof(q), "%s/lib/modules/R/updates/numastor/x.ko", base);
		fd = open(q, O_WRONLY | O_CREAT, 0644);
		CHECK(fd >= 0);
		close(fd);
		snprintf(q, sizeof(q), "%s/victim/x.ko", base);
		fd = open(q, O_WRONLY | O_CREAT, 0644);
		close(fd);
		CHECK(ns_swap_installed_resolves(root, "R", "lib/modules/R/updates/numastor/x.ko") == 0);
		CHECK(ns_swap_installed_resolves(root, "R", "lib/modules/R/updates/numastor/gone.ko") == -ENOENT);
		snprintf(q, sizeof(q), "%s/lib/modules/S/updates", base);
		CHECK(ns_mkdir_p(root, "lib/modules/S/updates") == 0);
		snprintf(q, sizeof(q), "%s/lib/modules/S/updates/numastor", base);
		CHECK(symlink("../../../../victim", q) == 0);
		CHECK(ns_swap_installed_resolves(root, "S", "lib/modules/S/updates/numastor/x.ko") == -EXDEV);
		snprintf(q, sizeof(q), "%s/lib/modules/R/updates/numastor/link.ko", base);
		CHECK(symlink("../../../../../victim/x.ko", q) == 0);
		CHECK(ns_swap_installed_resolves(root, "R", "lib/modules/R/updates/numastor/link.ko") == -EXDEV);
	}
	/* merged /usr (Debian 12): lib is a link to usr/lib, and the installed file is still ours */
	{
		char q[4096];
		struct ns_root *merged;
		int fd;
		CHECK(ns_mkdir_p(root, "merged/usr/lib/modules/R/updates/numastor") == 0);
		snprintf(q, sizeof(q), "%s/merged/lib", base);
		CHECK(symlink("usr/lib", q) == 0);
		snprintf(q, sizeof(q), "%s/merged/usr/lib/modules/R/updates/numastor/x.ko", base);
		fd = open(q, O_WRONLY | O_CREAT, 0644);
		CHECK(fd >= 0);
		close(fd);
		snprintf(q, sizeof(q), "%s/merged", base);
		CHECK(ns_root_open(q, &merged) == 0);
		CHECK(ns_swap_installed_resolves(merged, "R", "lib/modules/R/updates/numastor/x.ko") == 0);
		CHECK(ns_swap_installed_resolves(merged, "R", "lib/modules/R/updates/numastor/gone.ko") == -ENOENT);
		ns_root_free(merged);
	}
	put_journal("{\"version\": 1,");
	CHECK(ns_swap_journal_load(root, &k) == -EINVAL);
	put_journal("");
	CHECK(ns_swap_journal_load(root, &k) == -EINVAL);

	CHECK(ns_swap_journal_remove(root) == 0);
	CHECK(ns_swap_journal_remove(root) == 0); /* gone already is fine */
	CHECK(ns_swap_journal_load(root, &k) == -ENOENT);
	ns_root_free(root);
	return tap_done("swapjournal");
}
