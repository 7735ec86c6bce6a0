/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The module swap's journal reader (lib/state/swapjournal.c): the input is var/lib/numastor/swap.json
 * of a scratch root. A journal that loads names only paths inside numastor's places (never
 * absolute, never ".."; what --revert deletes), and saves and loads again unchanged.
 */
#define _GNU_SOURCE
#include "fuzz-common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/swapjournal.h"

static struct ns_root *root_in, *root_out;
static char *dir_in, *dir_out;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *s = fuzz_scratch();

	if (asprintf(&dir_in, "%s/in", s) < 0 || asprintf(&dir_out, "%s/out", s) < 0)
		abort();
	fuzz_write(dir_in, NS_SWAP_JOURNAL_DIR "/.keep", "", 0, 0644);
	fuzz_write(dir_out, NS_SWAP_JOURNAL_DIR "/.keep", "", 0, 0644);
	if (ns_root_open(dir_in, &root_in) < 0 || ns_root_open(dir_out, &root_out) < 0)
		abort();
	return 0;
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Root-relative, no "..", not absolute. */
/* Relative, and no component is ".." ("nvme-core..ko" is a file name like any other; "lib//x"
 * and "./x" stay where they are). */
static bool inside(const char *p)
{
	if (!p || !p[0] || p[0] == '/')
		return false;
	for (const char *c = p; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 2 && c[0] == '.' && c[1] == '.')
			return false;
		c += n;
		if (*c == '/')
			c++;
	}
	return true;
}

static bool same_strv(char **a, size_t na, char **b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!same(a[i], b[i]))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ns_swap_journal j, again;
	int r;

	if (!root_in)
		LLVMFuzzerInitialize(NULL, NULL);
	fuzz_write(dir_in, NS_SWAP_JOURNAL_PATH, data, size, 0644);
	r = ns_swap_journal_load(root_in, &j);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -EPROTO || r == -ENOMEM || r == -EFBIG || r == -ERANGE, "load: %d",
		    r);
	if (r < 0) {
		FUZZ_ASSERT(!j.modules && !j.disks && !j.installed && !j.nmodules && !j.ninstalled,
			    "a refused journal left entries");
		return 0;
	}
	for (size_t i = 0; i < j.ninstalled; i++)
		FUZZ_ASSERT(inside(j.installed[i]), "installed path '%s' leaves numastor's places", j.installed[i]);
	for (size_t i = 0; i < j.nmodules; i++) {
		const struct ns_swap_jmodule *m = &j.modules[i];
		FUZZ_ASSERT(m->name && m->name[0] && !strchr(m->name, '/'), "module %zu has no plain name", i);
		FUZZ_ASSERT(!m->stock_path || inside(m->stock_path), "stock path '%s' leaves the root", m->stock_path);
		FUZZ_ASSERT(!m->replacement || inside(m->replacement), "replacement '%s' leaves the root",
			    m->replacement);
		FUZZ_ASSERT(ns_swap_journal_module(&j, m->name), "module %s is not found by name", m->name);
	}
	for (size_t i = 0; i < j.ndisks; i++)
		FUZZ_ASSERT(j.disks[i].name, "disk %zu has no name", i);
	r = ns_swap_journal_save(root_out, &j);
	FUZZ_ASSERT(r == 0, "save: %d", r);
	r = ns_swap_journal_load(root_out, &again);
	FUZZ_ASSERT(r == 0, "a saved swap journal does not load again: %d", r);
	FUZZ_ASSERT(same(j.boot_id, again.boot_id) && same(j.kernel_release, again.kernel_release) &&
			    j.runtime == again.runtime && j.initramfs_updated == again.initramfs_updated &&
			    same_strv(j.groups, j.ngroups, again.groups, again.ngroups) &&
			    same_strv(j.removed_pci, j.nremoved_pci, again.removed_pci, again.nremoved_pci) &&
			    same_strv(j.installed, j.ninstalled, again.installed, again.ninstalled) &&
			    j.nmodules == again.nmodules && j.ndisks == again.ndisks,
		    "round trip changed the swap journal");
	for (size_t i = 0; i < j.nmodules; i++) {
		const struct ns_swap_jmodule *a = &j.modules[i], *b = &again.modules[i];
		FUZZ_ASSERT(same(a->name, b->name) && a->loaded == b->loaded && same(a->stock_path, b->stock_path) &&
				    same(a->srcversion, b->srcversion) && same(a->options, b->options) &&
				    same(a->replacement, b->replacement),
			    "round trip changed module %zu", i);
	}
	for (size_t i = 0; i < j.ndisks; i++) {
		const struct ns_swap_jdisk *a = &j.disks[i], *b = &again.disks[i];
		FUZZ_ASSERT(same(a->id, b->id) && same(a->name, b->name) && same(a->pci, b->pci) &&
				    same(a->hba, b->hba),
			    "round trip changed disk %zu", i);
	}
	ns_swap_journal_free(&again);
	ns_swap_journal_free(&j);
	return 0;
}
