/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Issue 33 item 6: the nvme judged by its module file. The image reader (an ELF's undefined
 * symbols and .modinfo srcversion, plain or xz; zstd and gzip refused as unread; garbage and
 * truncations refused), and the module read through a fake root: the file modules.dep names,
 * judged only when its srcversion is the loaded module's, the version the fallback otherwise;
 * built in: not read. argv[1]: a pre-fix stand-in (imports node_states), argv[2]: a fixed one
 * (tests/unit/fake-nvme.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>

#include "read/module.h"
#include "read/pci.h"
#include "fakeroot.h"
#include "tap.h"

#define PREFIX_SRC "A1B2C3D4E5F60718293A4B5"
#define FIXED_SRC "0F1E2D3C4B5A69788796A5B"
#define REL "6.12.43+deb13-amd64"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1 << 20);
	*len = f && buf ? fread(buf, 1, 1 << 20, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

static void put_bytes(const char *rel, const void *data, size_t len)
{
	char p[4096];
	FILE *f;
	fr_parent_of(rel);
	snprintf(p, sizeof(p), "%s/%s", fr_base, rel);
	f = fopen(p, "wb");
	if (f) {
		if (fwrite(data, 1, len, f) != len)
			perror("fwrite");
		fclose(f);
	}
}

static int judge(const char *data, size_t len, char **src, const char **form)
{
	return ns_module_image_imports(data, len, NS_NVME_FORCING_IMPORT, src, form);
}

static void image(const char *prefix, size_t plen, const char *fixed, size_t flen)
{
	char *src = NULL, *bad;
	const char *form = NULL;
	uint8_t *xz = malloc(plen + 4096);
	size_t xzlen = 0;

	CHECK(judge(prefix, plen, &src, &form) == 1);
	CHECK_STR(src, PREFIX_SRC);
	CHECK_STR(form, "ELF");
	free(src);
	CHECK(judge(fixed, flen, &src, &form) == 0);
	CHECK_STR(src, FIXED_SRC);
	free(src);
	/* another symbol it imports: the reader is not a constant */
	CHECK(ns_module_image_imports(fixed, flen, "dma_pool_create", NULL, &form) == 1);
	/* a symbol it defines is no import */
	CHECK(ns_module_image_imports(prefix, plen, "nvme_probe", NULL, &form) == 0);

	/* xz, as Debian ships 6.12's and 7.2's modules */
	CHECK(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, (const uint8_t *)prefix, plen, xz, &xzlen,
				      plen + 4096) == LZMA_OK);
	CHECK(judge((const char *)xz, xzlen, &src, &form) == 1);
	CHECK_STR(form, "xz");
	CHECK_STR(src, PREFIX_SRC);
	free(src);
	/* a truncated xz stream: not read */
	CHECK(judge((const char *)xz, xzlen / 2, &src, &form) < 0 && src == NULL);

	/* zstd and gzip: refused as unread (the version decides) */
	CHECK(judge("\x28\xb5\x2f\xfd\x00\x00", 6, &src, &form) == -ENOTSUP);
	CHECK_STR(form, "zstd");
	CHECK(judge("\x1f\x8b\x08\x00", 4, &src, &form) == -ENOTSUP);
	CHECK_STR(form, "gzip");

	/* garbage, empty, truncated, a section table beyond the end */
	CHECK(judge("hello, world", 12, &src, &form) == -EINVAL);
	CHECK(judge("", 0, &src, &form) == -EINVAL);
	CHECK(judge(prefix, 64, &src, &form) == -EINVAL);
	CHECK(judge(prefix, plen - 8, &src, &form) == -EINVAL && src == NULL);
	bad = malloc(plen);
	memcpy(bad, prefix, plen);
	memset(bad + 0x28, 0xff, 8); /* e_shoff */
	CHECK(judge(bad, plen, &src, &form) == -EINVAL);
	memcpy(bad, prefix, plen);
	bad[4] = 1; /* ELFCLASS32 */
	CHECK(judge(bad, plen, &src, &form) == -EINVAL);
	free(bad);
	free(xz);
}

/* The nvme of a fake 6.12 machine whose version says fixed, its file the given image. */
static const struct ns_module *machine(struct ns_root **root, struct ns_modules **mods, const char *loaded_src,
				       const char *dep, const char *img, size_t len, bool builtin)
{
	const struct ns_module *m = NULL;
	struct ns_notes notes = {0};

	fr_make("modcode");
	fr_put("proc/sys/kernel/osrelease", REL "\n");
	fr_mkdirs("sys/module/nvme/parameters");
	if (!builtin) {
		fr_lnk("sys/bus/pci/drivers/nvme/module", "../../../../module/nvme");
		fr_put("sys/module/nvme/initstate", "live\n");
		fr_put("sys/module/nvme/taint", "\n");
		fr_put("sys/module/nvme/srcversion", "%s\n", loaded_src);
	} else {
		fr_mkdirs("sys/bus/pci/drivers/nvme");
	}
	fr_put(".numastor/modinfo/nvme", "name=nvme\nsrcversion=%s\n", loaded_src);
	if (dep)
		fr_put("lib/modules/" REL "/modules.dep", "%s", dep);
	if (img)
		put_bytes("lib/modules/" REL "/kernel/drivers/nvme/host/nvme.ko", img, len);
	if (ns_root_open(fr_base, root) < 0 || ns_modules_new(*root, mods) < 0 ||
	    ns_modules_lookup(*mods, "nvme", &notes, &m) < 0)
		m = NULL;
	ns_notes_free(&notes);
	return m;
}

static void done(struct ns_root *root, struct ns_modules *mods)
{
	char cmd[128];
	ns_modules_free(mods);
	ns_root_free(root);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fr_base);
	if (system(cmd) != 0)
		perror("rm");
}

static int forces(const struct ns_module *m, char **basis)
{
	return ns_pci_driver_forces("nvme", m, 1, "upstream since v6.6 (dad651b2a44e)", basis);
}

static void rooted(const char *prefix, size_t plen, const char *fixed, size_t flen)
{
	static const char dep[] = "kernel/drivers/nvme/host/nvme-core.ko:\n"
				  "kernel/drivers/nvme/host/nvme.ko: kernel/drivers/nvme/host/nvme-core.ko\n";
	struct ns_root *root;
	struct ns_modules *mods;
	const struct ns_module *m;
	char *basis = NULL;

	/* the pre-fix file, loaded: forcing, whatever the version says */
	m = machine(&root, &mods, PREFIX_SRC, dep, prefix, plen, false);
	CHECK(m && m->code == NS_CODE_PREFIX);
	CHECK(m && m->code_basis && strstr(m->code_basis, "imports node_states"));
	CHECK(m && forces(m, &basis) == 1);
	CHECK(basis && strstr(basis, "/lib/modules/" REL "/kernel/drivers/nvme/host/nvme.ko"));
	free(basis);
	done(root, mods);

	/* its twin: the fixed file, loaded: not forcing, by the module */
	m = machine(&root, &mods, FIXED_SRC, dep, fixed, flen, false);
	CHECK(m && m->code == NS_CODE_FIXED);
	CHECK(m && forces(m, &basis) == 0);
	CHECK(basis && strstr(basis, "does not import node_states"));
	free(basis);
	done(root, mods);

	/* the pre-fix file on disk, another module loaded: not judged by the file; the version */
	m = machine(&root, &mods, FIXED_SRC, dep, prefix, plen, false);
	CHECK(m && m->code == NS_CODE_UNJUDGED);
	CHECK(m && m->code_basis && strstr(m->code_basis, "is not the loaded module"));
	CHECK(m && forces(m, &basis) == 0);
	CHECK(basis && strstr(basis, "upstream since v6.6") && strstr(basis, "not judged by its module"));
	free(basis);
	done(root, mods);

	/* modules.dep names nvme-core only: nvme-core is not nvme */
	m = machine(&root, &mods, PREFIX_SRC, "kernel/drivers/nvme/host/nvme-core.ko:\n", prefix, plen, false);
	CHECK(m && m->code == NS_CODE_UNJUDGED && m->code_basis && strstr(m->code_basis, "names no nvme module"));
	done(root, mods);

	/* no module directory under the root (an older capture): silent, the version as before */
	m = machine(&root, &mods, PREFIX_SRC, NULL, NULL, 0, false);
	CHECK(m && m->code == NS_CODE_UNJUDGED && m->code_basis == NULL);
	CHECK(m && forces(m, &basis) == 0);
	CHECK_STR(basis, "the in-tree nvme has the fix: upstream since v6.6 (dad651b2a44e)");
	free(basis);
	done(root, mods);

	/* built in: the kernel image is not read, and the basis says so */
	m = machine(&root, &mods, PREFIX_SRC, dep, prefix, plen, true);
	CHECK(m && m->state == NS_MODULE_BUILTIN && m->code == NS_CODE_UNJUDGED);
	CHECK(m && m->code_basis && strstr(m->code_basis, "built into the kernel"));
	CHECK(m && forces(m, &basis) == 0);
	CHECK(basis && strstr(basis, "built into the kernel"));
	free(basis);
	done(root, mods);
}

int main(int argc, char **argv)
{
	size_t plen, flen;
	char *prefix, *fixed;

	if (argc < 3) {
		fprintf(stderr, "usage: test-modcode PREFIX.o FIXED.o\n");
		return 2;
	}
	prefix = slurp(argv[1], &plen);
	fixed = slurp(argv[2], &flen);
	CHECK(plen > 64 && flen > 64);
	image(prefix, plen, fixed, flen);
	rooted(prefix, plen, fixed, flen);
	free(prefix);
	free(fixed);
	return tap_done("modcode");
}
