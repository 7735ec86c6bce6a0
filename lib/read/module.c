/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/module.h"
#include "base/util.h"

#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <libkmod.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ns_modules {
	struct ns_root *root;
	char *release;	       /* running kernel, for numastor's module directory */
	struct kmod_ctx *kmod; /* live root only */
	struct ns_module **v;  /* stable pointers: callers keep them */
	char **drivers;	       /* driver name of each entry */
	size_t n;
};

int ns_modules_new(struct ns_root *root, struct ns_modules **out)
{
	struct ns_modules *mods = calloc(1, sizeof(*mods));

	if (!mods)
		return -ENOMEM;
	mods->root = root;
	ns_read_str(root, "proc/sys/kernel/osrelease", &mods->release);
	if (ns_root_is_live(root)) {
		mods->kmod = kmod_new(NULL, NULL);
		if (mods->kmod)
			kmod_load_resources(mods->kmod);
	}
	*out = mods;
	return 0;
}

static void module_free(struct ns_module *m)
{
	free(m->name);
	ns_strv_free(m->patches, m->npatches);
	free(m->srcversion);
	free(m->file_srcversion);
	free(m->modinfo_error);
	free(m->code_basis);
}

void ns_modules_free(struct ns_modules *mods)
{
	if (!mods)
		return;
	for (size_t i = 0; i < mods->n; i++) {
		module_free(mods->v[i]);
		free(mods->v[i]);
		free(mods->drivers[i]);
	}
	free(mods->v);
	free(mods->drivers);
	if (mods->kmod)
		kmod_unref(mods->kmod);
	free(mods->release);
	free(mods);
}

static int add_patch(struct ns_module *m, const char *value)
{
	/* a marker value may list several patch ids separated by commas or spaces */
	const char *p = value;
	while (*p) {
		size_t len = strcspn(p, ", ");
		if (len) {
			char **nv = realloc(m->patches, (m->npatches + 1) * sizeof(*nv));
			if (!nv)
				return -ENOMEM;
			m->patches = nv;
			m->patches[m->npatches] = strndup(p, len);
			if (!m->patches[m->npatches])
				return -ENOMEM;
			m->npatches++;
		}
		p += len;
		p += strspn(p, ", ");
	}
	return 0;
}

/* modinfo could not tell: a note, and the reason kept for snapshots. */
static __attribute__((format(printf, 3, 4))) void modinfo_failed(struct ns_module *m, struct ns_notes *notes,
								 const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = ns_vfmt(fmt, ap);
	va_end(ap);
	if (!msg)
		return;
	ns_note(notes, m->name, "module.patched", "%s", msg);
	free(m->modinfo_error);
	m->modinfo_error = msg;
}

/* Live: the modinfo of the module file through libkmod. */
static void modinfo_live(struct ns_modules *mods, struct ns_module *m, char **file_srcversion, struct ns_notes *notes)
{
	struct kmod_module *km = NULL;
	struct kmod_list *info = NULL, *l;
	int r;

	if (!mods->kmod) {
		modinfo_failed(m, notes, "libkmod could not be initialised");
		return;
	}
	r = kmod_module_new_from_name(mods->kmod, m->name, &km);
	if (r < 0) {
		modinfo_failed(m, notes, "libkmod does not know module %s: %s", m->name, strerror(-r));
		return;
	}
	r = kmod_module_get_initstate(km);
	if (m->state == NS_MODULE_BUILTIN)
		;
	else if (r == KMOD_MODULE_BUILTIN)
		m->state = NS_MODULE_BUILTIN;
	else if (r >= 0)
		m->state = NS_MODULE_LIVE;
	/*
	 * An out-of-tree module is not the file modules.dep names: when numastor's module
	 * directory holds a module of that name, that is the one fix --modules loaded.
	 */
	if (m->out_of_tree == 1 && mods->release) {
		char path[512];
		struct kmod_module *patched = NULL;
		snprintf(path, sizeof(path), "/var/lib/numastor/modules/%s/%s.ko", mods->release, m->name);
		if (access(path, R_OK) == 0 && kmod_module_new_from_path(mods->kmod, path, &patched) == 0) {
			kmod_module_unref(km);
			km = patched;
		}
	}
	r = kmod_module_get_info(km, &info);
	if (r < 0) {
		if (m->state == NS_MODULE_BUILTIN)
			modinfo_failed(m, notes,
				       "%s is built into the kernel and modules.builtin.modinfo does not describe it",
				       m->name);
		else
			modinfo_failed(m, notes, "modinfo of %s could not be read: %s", m->name, strerror(-r));
		kmod_module_unref(km);
		return;
	}
	m->patched = 0;
	kmod_list_foreach (l, info) {
		const char *key = kmod_module_info_get_key(l);
		const char *val = kmod_module_info_get_value(l);
		if (!key || !val)
			continue;
		if (strcmp(key, NS_PATCH_MARKER_KEY) == 0) {
			m->patched = 1;
			add_patch(m, val);
		} else if (strcmp(key, "srcversion") == 0 && !*file_srcversion) {
			*file_srcversion = strdup(val);
		}
	}
	kmod_module_info_free_list(info);
	kmod_module_unref(km);
}

/* Captured tree: .numastor/modinfo/<module> holds key=value lines. */
static void modinfo_captured(struct ns_modules *mods, struct ns_module *m, char **file_srcversion,
			     struct ns_notes *notes)
{
	char path[128], *txt, *line, *save = NULL;
	int r;

	snprintf(path, sizeof(path), ".numastor/modinfo/%s", m->name);
	r = ns_read_str(mods->root, path, &txt);
	if (r < 0) {
		ns_note_read(notes, m->name, "module.patched", path, r, NULL);
		return;
	}
	m->patched = 0;
	for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		if (strcmp(line, NS_PATCH_MARKER_KEY) == 0) {
			m->patched = 1;
			add_patch(m, eq + 1);
		} else if (strcmp(line, "srcversion") == 0 && !*file_srcversion) {
			*file_srcversion = strdup(eq + 1);
		} else if (strcmp(line, "builtin") == 0 && strcmp(eq + 1, "1") == 0) {
			m->state = NS_MODULE_BUILTIN;
		} else if (strcmp(line, "error") == 0) {
			/* modinfo could not tell on the captured machine: the same note, nothing known */
			modinfo_failed(m, notes, "%s", eq + 1);
			m->patched = -1;
			ns_strv_free(m->patches, m->npatches);
			m->patches = NULL;
			m->npatches = 0;
			break;
		}
	}
	free(txt);
}

/* xz (liblzma's stream decoder), into a buffer grown up to NS_MODULE_IMAGE_MAX. */
static int unxz(const char *data, size_t len, unsigned char **out, size_t *outlen)
{
	lzma_stream st = LZMA_STREAM_INIT;
	size_t cap = len * 4 + 4096;
	unsigned char *buf = NULL;
	lzma_ret lr;
	int r = 0;

	if (lzma_stream_decoder(&st, UINT64_MAX, 0) != LZMA_OK)
		return -ENOMEM;
	st.next_in = (const uint8_t *)data;
	st.avail_in = len;
	for (;;) {
		if (!buf || st.avail_out == 0) {
			size_t used = buf ? cap : 0;
			unsigned char *nb;
			if (buf)
				cap *= 2;
			if (cap > NS_MODULE_IMAGE_MAX + 1)
				cap = NS_MODULE_IMAGE_MAX + 1;
			if (used >= cap) {
				r = -EFBIG;
				break;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				r = -ENOMEM;
				break;
			}
			buf = nb;
			st.next_out = buf + used;
			st.avail_out = cap - used;
		}
		lr = lzma_code(&st, LZMA_FINISH);
		if (lr == LZMA_STREAM_END)
			break;
		if (lr != LZMA_OK) {
			r = lr == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
			break;
		}
	}
	if (r == 0 && st.total_out > NS_MODULE_IMAGE_MAX)
		r = -EFBIG;
	*outlen = (size_t)st.total_out;
	lzma_end(&st);
	if (r < 0) {
		free(buf);
		return r;
	}
	*out = buf;
	return 0;
}

/* A section header of the image, bounds-checked: its data lies inside the image. */
static const Elf64_Shdr *elf_section(const unsigned char *img, size_t len, const Elf64_Ehdr *eh, size_t i)
{
	const Elf64_Shdr *sh;

	if (i >= eh->e_shnum)
		return NULL;
	sh = (const Elf64_Shdr *)(img + eh->e_shoff + i * sizeof(Elf64_Shdr));
	if (sh->sh_type != SHT_NOBITS && (sh->sh_offset > len || sh->sh_size > len - sh->sh_offset))
		return NULL;
	return sh;
}

/* The NUL-terminated string at off of a string table section, or NULL. */
static const char *elf_str(const unsigned char *img, const Elf64_Shdr *strtab, size_t off)
{
	const char *s = (const char *)img + strtab->sh_offset;

	if (strtab->sh_type == SHT_NOBITS || off >= strtab->sh_size || !memchr(s + off, '\0', strtab->sh_size - off))
		return NULL;
	return s + off;
}

/* .modinfo's srcversion= (strings separated by NULs, padding NULs between). */
static char *elf_srcversion(const unsigned char *img, const Elf64_Shdr *sh)
{
	const char *p = (const char *)img + sh->sh_offset, *end = p + sh->sh_size;

	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);
		if (n > 11 && memcmp(p, "srcversion=", 11) == 0)
			return strndup(p + 11, n - 11);
		p += n + 1;
	}
	return NULL;
}

/* The ELF itself: a 64-bit relocatable of this machine's byte order (a module of this kernel). */
static int elf_imports(const unsigned char *img, size_t len, const char *sym, char **srcversion)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *shstr;
	int found = 0, symtabs = 0;

	if (len < sizeof(*eh) || memcmp(img, ELFMAG, SELFMAG) != 0 || img[EI_CLASS] != ELFCLASS64 ||
	    img[EI_DATA] != (__BYTE_ORDER == __LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB) || eh->e_type != ET_REL ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > len ||
	    (size_t)eh->e_shnum > (len - eh->e_shoff) / sizeof(Elf64_Shdr) || (uintptr_t)img % 8 || eh->e_shoff % 8)
		return -EINVAL;
	shstr = elf_section(img, len, eh, eh->e_shstrndx);
	for (size_t i = 1; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = elf_section(img, len, eh, i), *strtab;
		const char *name;
		if (!sh)
			return -EINVAL;
		name = shstr ? elf_str(img, shstr, sh->sh_name) : NULL;
		if (srcversion && !*srcversion && name && strcmp(name, ".modinfo") == 0 && sh->sh_type == SHT_PROGBITS)
			*srcversion = elf_srcversion(img, sh);
		if (sh->sh_type != SHT_SYMTAB)
			continue;
		strtab = elf_section(img, len, eh, sh->sh_link);
		if (!strtab || strtab->sh_type != SHT_STRTAB || sh->sh_entsize != sizeof(Elf64_Sym) ||
		    sh->sh_offset % 8)
			return -EINVAL;
		symtabs++;
		for (size_t k = 1; k < sh->sh_size / sizeof(Elf64_Sym); k++) {
			const Elf64_Sym *s = (const Elf64_Sym *)(img + sh->sh_offset) + k;
			const char *sn;
			if (s->st_shndx != SHN_UNDEF || ELF64_ST_BIND(s->st_info) == STB_LOCAL)
				continue;
			sn = elf_str(img, strtab, s->st_name);
			found |= sn && strcmp(sn, sym) == 0;
		}
	}
	return symtabs ? found : -EINVAL; /* a module without a symbol table tells nothing */
}

int ns_module_image_imports(const char *data, size_t len, const char *sym, char **srcversion, const char **form)
{
	static const unsigned char xz[] = {0xfd, '7', 'z', 'X', 'Z', 0}, zst[] = {0x28, 0xb5, 0x2f, 0xfd},
				   gz[] = {0x1f, 0x8b};
	unsigned char *img = NULL;
	size_t n = 0;
	int r;

	if (srcversion)
		*srcversion = NULL;
	*form = "ELF";
	if (len >= sizeof(xz) && memcmp(data, xz, sizeof(xz)) == 0) {
		*form = "xz";
		r = unxz(data, len, &img, &n);
		if (r < 0)
			return r;
	} else if ((len >= sizeof(zst) && memcmp(data, zst, sizeof(zst)) == 0) ||
		   (len >= sizeof(gz) && memcmp(data, gz, sizeof(gz)) == 0)) {
		*form = data[0] == 0x1f ? "gzip" : "zstd";
		return -ENOTSUP;
	} else {
		/* a copy: the reader's buffer has no alignment the ELF structures can rely on */
		img = malloc(len ? len : 1);
		if (!img)
			return -ENOMEM;
		memcpy(img, data, len);
		n = len;
	}
	r = elf_imports(img, n, sym, srcversion);
	if (r < 0 && srcversion) {
		free(*srcversion);
		*srcversion = NULL;
	}
	free(img);
	return r;
}

/* lib/modules/RELEASE/modules.dep's path of module name (relative to that directory), or NULL. */
static char *moddep_path(const char *dep, const char *name)
{
	const char *line = dep;

	while (line && *line) {
		const char *colon = strchr(line, ':'), *eol = strchr(line, '\n');
		if (colon && (!eol || colon < eol)) {
			const char *base = line;
			size_t n;
			for (const char *p = line; p < colon; p++)
				if (*p == '/')
					base = p + 1;
			n = strcspn(base, ".:");
			if (n == strlen(name) && strncmp(base + n, ".ko", 3) == 0) {
				bool same = true;
				for (size_t i = 0; i < n && same; i++)
					same = (base[i] == '-' ? '_' : base[i]) == (name[i] == '-' ? '_' : name[i]);
				if (same)
					return strndup(line, (size_t)(colon - line));
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return NULL;
}

/*
 * nvme: is the pre-fix node code in the module the running kernel loaded? Its file is the one
 * the root's lib/modules/RELEASE/modules.dep names (what libkmod's lookup reads, as text through
 * the root, so that a snapshot records it and replays the same), judged only when its
 * srcversion is the loaded module's (sys/module/nvme/srcversion): a file replaced on disk since
 * is not what runs.
 */
static void judge_code(struct ns_modules *mods, struct ns_module *m, const char *loaded_srcversion,
		       struct ns_notes *notes)
{
	char dir[300], path[1024], *dep = NULL, *rel = NULL, *img = NULL, *src = NULL;
	const char *form = "ELF";
	size_t len = 0;
	int r;

	m->code = NS_CODE_UNJUDGED;
	if (strcmp(m->name, "nvme") != 0)
		return;
	if (m->state == NS_MODULE_BUILTIN) {
		m->code_basis = ns_fmt("nvme is built into the kernel, whose image numastor does not read");
		return;
	}
	if (!mods->release)
		return;
	snprintf(dir, sizeof(dir), "lib/modules/%s", mods->release);
	snprintf(path, sizeof(path), "%s/modules.dep", dir);
	r = ns_read_str(mods->root, path, &dep);
	if (r == -ENOENT || r == -ENOTDIR)
		return; /* no module directory for this kernel under the root: nothing to say */
	if (r < 0) {
		m->code_basis = ns_fmt("/%s could not be read: %s", path, strerror(-r));
		ns_note_read(notes, m->name, "module.code", path, r, NULL);
		return;
	}
	rel = moddep_path(dep, m->name);
	free(dep);
	if (!rel) {
		m->code_basis = ns_fmt("/%s names no %s module", path, m->name);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	free(rel);
	r = ns_read_bytes(mods->root, path, &img, &len);
	if (r == 0)
		r = ns_module_image_imports(img, len, NS_NVME_FORCING_IMPORT, &src, &form);
	free(img);
	if (r == -ENOTSUP)
		m->code_basis =
			ns_fmt("its module file /%s is %s-compressed, which numastor does not read", path, form);
	else if (r < 0)
		m->code_basis = ns_fmt("its module file /%s could not be read as %s: %s", path, form, strerror(-r));
	else if (!src || !loaded_srcversion)
		m->code_basis =
			ns_fmt("its module file /%s cannot be told to be the loaded module (srcversion %s, "
			       "loaded %s)",
			       path, src ? src : "absent", loaded_srcversion ? loaded_srcversion : "unreadable");
	else if (strcmp(src, loaded_srcversion) != 0)
		m->code_basis = ns_fmt("its module file /%s (srcversion %s) is not the loaded module (srcversion %s): "
				       "replaced on disk since it was loaded",
				       path, src, loaded_srcversion);
	else if (r == 1) {
		m->code = NS_CODE_PREFIX;
		m->code_basis =
			ns_fmt("the loaded nvme's module file /%s (srcversion %s) imports " NS_NVME_FORCING_IMPORT
			       ": it holds the node code dad651b2a44e took out (set_dev_node to the first "
			       "memory node)",
			       path, src);
	} else {
		m->code = NS_CODE_FIXED;
		m->code_basis = ns_fmt(
			"the loaded nvme's module file /%s (srcversion %s) does not import " NS_NVME_FORCING_IMPORT
			": the node code dad651b2a44e took out is not in it",
			path, src);
	}
	free(src);
}

static int module_read(struct ns_modules *mods, const char *driver, struct ns_module *m, struct ns_notes *notes)
{
	char path[256], *taint = NULL, *file_srcversion = NULL;
	int r;

	memset(m, 0, sizeof(*m));
	m->patched = -1;
	m->out_of_tree = -1;
	snprintf(path, sizeof(path), "sys/bus/pci/drivers/%s/module", driver);
	r = ns_readlink_base(mods->root, path, &m->name);
	if (r < 0 && r != -ENOENT && r != -ENOMEM)
		ns_note_read(notes, driver, "module.name", path, r, NULL);
	if (r < 0) {
		/* a built-in driver has no module link */
		m->name = strdup(driver);
		if (!m->name)
			return -ENOMEM;
		for (char *p = m->name; *p; p++)
			if (*p == '-')
				*p = '_';
	} else {
		m->state = NS_MODULE_LIVE;
	}
	/* a built-in module has a sys/module directory but no initstate */
	snprintf(path, sizeof(path), "sys/module/%s/initstate", m->name);
	if ((r = ns_probe(mods->root, path)) == 0) {
		snprintf(path, sizeof(path), "sys/module/%s", m->name);
		r = ns_probe(mods->root, path);
		if (r == 1)
			m->state = NS_MODULE_BUILTIN;
	}
	if (r < 0) {
		m->state = NS_MODULE_UNKNOWN; /* loadable or built in: not told */
		ns_note_read(notes, m->name, "module.state", path, r, NULL);
	}
	snprintf(path, sizeof(path), "sys/module/%s/srcversion", m->name);
	ns_read_str(mods->root, path, &m->srcversion);
	snprintf(path, sizeof(path), "sys/module/%s/taint", m->name);
	r = ns_read_str(mods->root, path, &taint);
	if (r == 0 || r == -ENODATA) {
		m->out_of_tree = taint && strchr(taint, 'O');
		free(taint);
	} else if (r != -ENOENT) { /* a built-in module has no taint: out of tree not told, nothing to say */
		ns_note_read(notes, m->name, "module.out_of_tree", path, r, NULL);
	}
	if (ns_root_is_live(mods->root))
		modinfo_live(mods, m, &file_srcversion, notes);
	else
		modinfo_captured(mods, m, &file_srcversion, notes);
	/* the file modinfo read may not be what is loaded (a module insmod'ed from elsewhere):
	 * then neither "stock" nor "patched" is known */
	if (m->srcversion && file_srcversion && strcmp(m->srcversion, file_srcversion) != 0) {
		ns_note(notes, m->name, "module.patched",
			"the loaded %s (srcversion %s) is not the file modinfo describes (%s)", m->name, m->srcversion,
			file_srcversion);
		m->patched = -1;
		ns_strv_free(m->patches, m->npatches);
		m->patches = NULL;
		m->npatches = 0;
	}
	m->file_srcversion = file_srcversion;
	judge_code(mods, m, m->srcversion, notes);
	if (!m->srcversion && file_srcversion)
		m->srcversion = strdup(file_srcversion);
	return 0;
}

int ns_modules_lookup(struct ns_modules *mods, const char *driver, struct ns_notes *notes, const struct ns_module **out)
{
	struct ns_module **nv, *m;
	char **nd;
	int r;

	for (size_t i = 0; i < mods->n; i++)
		if (strcmp(mods->drivers[i], driver) == 0) {
			*out = mods->v[i];
			return 0;
		}
	nv = realloc(mods->v, (mods->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	mods->v = nv;
	nd = realloc(mods->drivers, (mods->n + 1) * sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	mods->drivers = nd;
	m = calloc(1, sizeof(*m));
	mods->drivers[mods->n] = strdup(driver);
	if (!m || !mods->drivers[mods->n]) {
		free(m);
		free(mods->drivers[mods->n]);
		return -ENOMEM;
	}
	r = module_read(mods, driver, m, notes);
	if (r < 0) {
		module_free(m);
		free(m);
		free(mods->drivers[mods->n]);
		return r;
	}
	mods->v[mods->n++] = m;
	*out = m;
	return 0;
}

size_t ns_modules_count(const struct ns_modules *mods)
{
	return mods->n;
}

const struct ns_module *ns_modules_get(const struct ns_modules *mods, size_t i)
{
	return i < mods->n ? mods->v[i] : NULL;
}
