/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the running kernel and libkmod say about a module: loaded or built in, its holders,
 * its modinfo, and whether the loaded one is the stock file. */
#define _GNU_SOURCE
#include "swap/modswap-kmod.h"

#include <errno.h>
#include <libkmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* "live", "builtin" or NULL (not loaded), from the rooted sysfs; -errno when not told. */
int ns_swap_module_state(struct ns_root *root, const char *name, const char **state)
{
	char path[256], *s = NULL;
	static char buf[16];
	int r;

	*state = NULL;
	snprintf(path, sizeof(path), "sys/module/%s", name);
	if ((r = ns_probe(root, path)) <= 0)
		return r;
	snprintf(path, sizeof(path), "sys/module/%s/initstate", name);
	r = ns_read_str(root, path, &s);
	if (r == -ENOENT) {
		*state = "builtin"; /* a built-in module has its directory and no initstate */
		return 0;
	}
	if (r < 0)
		return r;
	snprintf(buf, sizeof(buf), "%s", s);
	free(s);
	*state = buf;
	return 0;
}

int ns_swap_module_loaded(struct ns_root *root, const char *name)
{
	const char *state;
	int r = ns_swap_module_state(root, name, &state);

	return r < 0 ? r : state != NULL;
}

/* Holders of a module that are themselves modules, from sys/module/NAME/holders. */
void ns_swap_module_holders(struct ns_root *root, const char *name, char ***v, size_t *n)
{
	char path[256];
	snprintf(path, sizeof(path), "sys/module/%s/holders", name);
	if (ns_list_dir(root, path, v, n) < 0) {
		*v = NULL;
		*n = 0;
	}
}

/* The first value of a modinfo key of mod (consumed). */
static char *modinfo_key(struct kmod_module *mod, const char *key)
{
	struct kmod_list *info = NULL, *l;
	char *val = NULL;

	if (kmod_module_get_info(mod, &info) >= 0) {
		kmod_list_foreach (l, info) {
			if (strcmp(kmod_module_info_get_key(l), key) == 0 && !val) {
				const char *v = kmod_module_info_get_value(l);
				val = strdup(v ? v : "");
			}
		}
		kmod_module_info_free_list(info);
	}
	kmod_module_unref(mod);
	return val;
}

/* modinfo key of a .ko file (absolute path) through libkmod. */
char *ns_swap_modinfo_file(struct kmod_ctx *ctx, const char *abspath, const char *key)
{
	struct kmod_module *mod = NULL;
	return ctx && kmod_module_new_from_path(ctx, abspath, &mod) == 0 ? modinfo_key(mod, key) : NULL;
}

/* modinfo key of the stock module called name (modules.dep of the running kernel). */
char *ns_swap_modinfo_stock(struct kmod_ctx *ctx, const char *name, const char *key)
{
	struct kmod_module *mod = NULL;
	return ctx && kmod_module_new_from_name(ctx, name, &mod) == 0 ? modinfo_key(mod, key) : NULL;
}

char *ns_swap_abs_path(struct ns_root *root, const char *rel)
{
	const char *dir = ns_root_path(root);
	return ns_fmt("%s%s%s", strcmp(dir, "/") == 0 ? "" : dir, rel[0] == '/' ? "" : "/", rel);
}

/* Module names treat '-' and '_' alike. */
static bool same_module_name(const char *a, size_t alen, const char *b)
{
	size_t i;
	for (i = 0; i < alen && b[i]; i++)
		if (a[i] != b[i] && !((a[i] == '-' || a[i] == '_') && (b[i] == '-' || b[i] == '_')))
			return false;
	return i == alen && !b[i];
}

int ns_swap_stock_path(struct ns_system *sys, const char *name, char **path)
{
	static const char *const suffixes[] = {"", ".xz", ".zst", ".gz"};
	const char *rel = sys->machine.kernel_release;
	char order_path[512], *order = NULL;
	int r = -ENOENT;

	*path = NULL;
	if (!rel)
		return -ENOENT;
	snprintf(order_path, sizeof(order_path), "lib/modules/%s/modules.order", rel);
	if (ns_read_str(sys->root, order_path, &order) < 0)
		return -ENOENT;
	/* "kernel/drivers/nvme/host/nvme.ko": the in-tree modules, one a line */
	for (char *line = strtok(order, "\n"); line && r == -ENOENT; line = strtok(NULL, "\n")) {
		const char *base = strrchr(line, '/');
		size_t len;
		base = base ? base + 1 : line;
		len = strlen(base);
		if (len < 4 || strcmp(base + len - 3, ".ko") != 0 || !same_module_name(base, len - 3, name))
			continue;
		for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
			char *p = ns_fmt("lib/modules/%s/%s%s", rel, line, suffixes[i]);
			if (!p) {
				r = -ENOMEM;
				break;
			}
			int e = ns_probe(sys->root, p);
			if (e != 0) {
				if (e == 1)
					*path = p;
				else
					free(p); /* not told: no file is named for an unread one */
				r = e == 1 ? 0 : e;
				break;
			}
			free(p);
		}
	}
	free(order);
	return r;
}

bool ns_swap_runs_stock(struct ns_root *root, struct kmod_ctx *ctx, const char *name, const char *stock_path)
{
	char path[256], *taint = NULL, *src = NULL, *abs, *want = NULL;
	bool stock = true;

	snprintf(path, sizeof(path), "sys/module/%s/taint", name);
	if (ns_read_str(root, path, &taint) == 0 && strchr(taint, 'O'))
		stock = false;
	snprintf(path, sizeof(path), "sys/module/%s/srcversion", name);
	if (stock && stock_path && ns_read_str(root, path, &src) == 0 && (abs = ns_swap_abs_path(root, stock_path))) {
		want = ns_swap_modinfo_file(ctx, abs, "srcversion");
		stock = !want || strcmp(want, src) == 0;
		free(abs);
	}
	free(want);
	free(taint);
	free(src);
	return stock;
}

int ns_swap_resolve(struct ns_system *sys, const char *name, char **path)
{
	const char *rel = sys->machine.kernel_release;
	const char *root = ns_root_path(sys->root);
	struct kmod_ctx *ctx;
	struct kmod_list *list = NULL;
	static const char *const conf[] = {"etc/modprobe.d", "run/modprobe.d", "usr/local/lib/modprobe.d",
					   "lib/modprobe.d"};
	char reldir[320], *dir, *confs[5] = {NULL};
	int r;

	*path = NULL;
	if (!rel || !rel[0] || strchr(rel, '/'))
		return -ENOENT;
	snprintf(reldir, sizeof(reldir), "lib/modules/%s", rel);
	dir = ns_swap_abs_path(sys->root, reldir);
	if (!dir)
		return -ENOMEM;
	for (size_t i = 0; i < 4; i++)
		confs[i] = ns_swap_abs_path(sys->root, conf[i]);
	/* the root's own module tree and modprobe.d, as modprobe on that machine reads them (not
	 * this host's) */
	ctx = confs[3] ? kmod_new(dir, (const char *const *)confs) : NULL;
	free(dir);
	for (size_t i = 0; i < 4; i++)
		free(confs[i]);
	if (!ctx)
		return -ENOMEM;
	r = kmod_module_new_from_lookup(ctx, name, &list);
	if (r == 0 && !list)
		r = -ENOENT;
	if (r == 0) {
		struct kmod_module *mod = kmod_module_get_module(list);
		const char *p = mod ? kmod_module_get_path(mod) : NULL;
		size_t skip = strcmp(root, "/") == 0 ? 0 : strlen(root);
		if (!p)
			r = -ENOENT; /* built in, or an alias of nothing */
		else if (strncmp(p, root, skip) != 0)
			r = -EXDEV;
		else if (!(*path = strdup(p + skip + strspn(p + skip, "/"))))
			r = -ENOMEM;
		if (mod)
			kmod_module_unref(mod);
	}
	kmod_module_unref_list(list);
	kmod_unref(ctx);
	return r;
}
