/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The module directory's manifest reader (lib/state/manifest.c): the input is
 * var/lib/numastor/modules/<release>/manifest.json of a scratch root. Every module file a
 * manifest that loads names lies directly in that directory (the swap loads and installs it).
 */
#define _GNU_SOURCE
#include "fuzz-common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/manifest.h"

#define DIR NS_MODULE_DIR "/6.1.0-fuzz-amd64"

static struct ns_root *root;
static char *dir;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (asprintf(&dir, "%s/m", fuzz_scratch()) < 0)
		abort();
	fuzz_write(dir, DIR "/.keep", "", 0, 0644);
	if (ns_root_open(dir, &root) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ns_manifest m;
	size_t dl = strlen(DIR);
	int r;

	if (!root)
		LLVMFuzzerInitialize(NULL, NULL);
	fuzz_write(dir, DIR "/manifest.json", data, size, 0644);
	r = ns_manifest_load(root, DIR, &m);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ENOMEM || r == -EFBIG || r == -ERANGE, "load: %d", r);
	if (r < 0) {
		FUZZ_ASSERT(!m.v && !m.n && !m.upstream && !m.nupstream, "a refused manifest left entries");
		return 0;
	}
	FUZZ_ASSERT(m.kernel_release && m.dir && strcmp(m.dir, DIR) == 0, "manifest without release or dir");
	for (size_t i = 0; i < m.n; i++) {
		const struct ns_manifest_module *e = &m.v[i];
		const char *base;
		FUZZ_ASSERT(e->name && e->file && e->sha256, "module %zu lacks name, file or sha256", i);
		FUZZ_ASSERT(strncmp(e->file, DIR "/", dl + 1) == 0, "module file '%s' is outside %s", e->file, DIR);
		base = e->file + dl + 1;
		FUZZ_ASSERT(base[0] && !strchr(base, '/') && strcmp(base, "..") != 0 && strcmp(base, ".") != 0,
			    "module file '%s' is not a plain name in %s", e->file, DIR);
		FUZZ_ASSERT(ns_manifest_find(&m, e->name), "module %s not found by name", e->name);
		for (size_t k = 0; k < e->npatches; k++)
			FUZZ_ASSERT(e->patches[k], "module %s: patch %zu is NULL", e->name, k);
	}
	for (size_t i = 0; i < m.nupstream; i++)
		FUZZ_ASSERT(m.upstream[i], "upstream %zu is NULL", i);
	ns_manifest_free(&m);
	return 0;
}
