/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The options a replacement module is loaded with (see modparams.h for the rule). */
#define _GNU_SOURCE
#include "swap/modparams.h"

#include <ctype.h>
#include <errno.h>
#include <libkmod.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static __attribute__((format(printf, 2, 3))) int note(struct ns_modparams *mp, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	s = ns_vfmt(fmt, ap);
	va_end(ap);
	if (!s)
		return -ENOMEM;
	r = ns_strv_add(&mp->notes, &mp->nnotes, s);
	free(s);
	return r;
}

/* Module names: libkmod and sysfs use '_' where a name or parameter may be written '-'. */
static void underscores(char *s)
{
	for (; *s; s++)
		if (*s == '-')
			*s = '_';
}

int ns_modparams_set(struct ns_modparams *mp, const char *name, const char *value, const char *source)
{
	char *n = strdup(name), *v = value ? strdup(value) : NULL;
	struct ns_modparam *nv;

	if (!n || (value && !v)) {
		free(n);
		free(v);
		return -ENOMEM;
	}
	underscores(n);
	for (size_t i = 0; i < mp->n; i++)
		if (strcmp(mp->v[i].name, n) == 0) { /* later sources override earlier ones */
			free(n);
			free(mp->v[i].value);
			mp->v[i].value = v;
			mp->v[i].source = source;
			return 0;
		}
	nv = realloc(mp->v, (mp->n + 1) * sizeof(*nv));
	if (!nv) {
		free(n);
		free(v);
		return -ENOMEM;
	}
	mp->v = nv;
	nv[mp->n++] = (struct ns_modparam){.name = n, .value = v, .source = source};
	return 0;
}

/* Remove entry i, keeping the order of the others. */
static void drop(struct ns_modparams *mp, size_t i)
{
	free(mp->v[i].name);
	free(mp->v[i].value);
	memmove(&mp->v[i], &mp->v[i + 1], (mp->n - i - 1) * sizeof(*mp->v));
	mp->n--;
}

/* The kernel's next_arg(): whitespace separates, double quotes group (and are removed). */
int ns_modparams_add_options(struct ns_modparams *mp, const char *options, const char *source)
{
	const char *p = options;
	int r = 0;

	while (p && *p && r == 0) {
		char *tok, *eq, *o;
		bool quoted = false;
		size_t len;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		tok = malloc(strlen(p) + 1);
		if (!tok)
			return -ENOMEM;
		for (o = tok; *p && (quoted || !isspace((unsigned char)*p)); p++)
			if (*p == '"')
				quoted = !quoted;
			else
				*o++ = *p;
		*o = '\0';
		len = strlen(tok);
		eq = strchr(tok, '=');
		if (eq)
			*eq = '\0';
		if (len && tok[0])
			r = ns_modparams_set(mp, tok, eq ? eq + 1 : NULL, source);
		free(tok);
	}
	return r;
}

int ns_modparm_spec_add(struct ns_modparm_spec *spec, const char *key, const char *value)
{
	bool is_type = strcmp(key, "parmtype") == 0;
	const char *colon;
	char *name;
	int r = 0;

	if (!is_type && strcmp(key, "parm") != 0)
		return 0;
	spec->known = true;
	colon = value ? strchr(value, ':') : NULL;
	if (!colon || colon == value)
		return 0;
	name = strndup(value, (size_t)(colon - value));
	if (!name)
		return -ENOMEM;
	underscores(name);
	for (size_t i = 0; i < spec->n; i++)
		if (strcmp(spec->names[i], name) == 0) {
			if (is_type && !spec->types[i] && !(spec->types[i] = strdup(colon + 1)))
				r = -ENOMEM;
			free(name);
			return r;
		}
	{
		char **nn = realloc(spec->names, (spec->n + 1) * sizeof(*nn)), **nt;
		if (!nn) {
			free(name);
			return -ENOMEM;
		}
		spec->names = nn;
		nt = realloc(spec->types, (spec->n + 1) * sizeof(*nt));
		if (!nt) {
			free(name);
			return -ENOMEM;
		}
		spec->types = nt;
		spec->names[spec->n] = name;
		spec->types[spec->n] = is_type ? strdup(colon + 1) : NULL;
		if (is_type && !spec->types[spec->n]) {
			free(name);
			return -ENOMEM;
		}
		spec->n++;
	}
	return 0;
}

void ns_modparm_spec_free(struct ns_modparm_spec *spec)
{
	for (size_t i = 0; i < spec->n; i++) {
		free(spec->names[i]);
		free(spec->types[i]);
	}
	free(spec->names);
	free(spec->types);
	memset(spec, 0, sizeof(*spec));
}

static bool number_ok(const char *s, size_t len)
{
	size_t i = 0;
	bool hex;

	if (i < len && (s[i] == '-' || s[i] == '+'))
		i++;
	hex = len - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
	if (hex)
		i += 2;
	if (i >= len)
		return false;
	for (; i < len; i++)
		if (hex ? !isxdigit((unsigned char)s[i]) : !isdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool element_ok(const char *type, const char *s, size_t len, const char **why)
{
	static const char *const numbers[] = {"byte", "short", "ushort", "int",	   "uint",
					      "long", "ulong", "ullong", "hexint", NULL};

	if (!type) { /* module_param_cb without a type: one plain token */
		for (size_t i = 0; i < len; i++)
			if (isspace((unsigned char)s[i]) || s[i] == '"' || !isprint((unsigned char)s[i])) {
				*why = "a parameter of unknown type whose value is not one plain token";
				return false;
			}
		return true;
	}
	if (strcmp(type, "bool") == 0 || strcmp(type, "invbool") == 0) {
		if (len == 1 && strchr("YyNn10", s[0]))
			return true;
		*why = "not Y, N, 1 or 0 for a bool";
		return false;
	}
	for (size_t i = 0; numbers[i]; i++)
		if (strcmp(type, numbers[i]) == 0) {
			if (number_ok(s, len))
				return true;
			*why = "not a number";
			return false;
		}
	if (strcmp(type, "charp") == 0 || strcmp(type, "string") == 0) {
		for (size_t i = 0; i < len; i++)
			if (s[i] == '"' || s[i] == '\n' || (!isprint((unsigned char)s[i]) && s[i] != '\t')) {
				*why = "a string with a quote or a control character";
				return false;
			}
		return true;
	}
	*why = "a parmtype numastor does not know";
	return false;
}

bool ns_modparam_value_ok(const char *type, const char *value, const char **why)
{
	const char *dummy;

	if (!why)
		why = &dummy;
	*why = NULL;
	if (!value) { /* a bare name: only a bool takes it (true) */
		if (type && (strcmp(type, "bool") == 0 || strcmp(type, "invbool") == 0))
			return true;
		*why = "a bare name for a parameter that is not a bool";
		return false;
	}
	if (strcmp(value, "(null)") == 0) {
		*why = "(null): not set, the module's default is kept";
		return false;
	}
	if (!value[0]) {
		*why = "empty: the module's default is kept";
		return false;
	}
	if (type && strncmp(type, "array of ", 9) == 0) {
		const char *p = value;
		for (;;) {
			size_t len = strcspn(p, ",");
			if (!len) {
				*why = "an empty element in an array";
				return false;
			}
			if (!element_ok(type + 9, p, len, why))
				return false;
			if (!p[len])
				return true;
			p += len + 1;
		}
	}
	return element_ok(type, value, strlen(value), why);
}

int ns_modparams_filter(struct ns_modparams *mp, const struct ns_modparm_spec *spec, const char *module)
{
	for (size_t i = 0; i < mp->n;) {
		const char *why = NULL;
		size_t k;
		int r;

		for (k = 0; k < spec->n && strcmp(spec->names[k], mp->v[i].name) != 0; k++)
			;
		if (k == spec->n) {
			r = note(mp, "%s=%s (%s): not passed, %s lacks this parameter", mp->v[i].name,
				 mp->v[i].value ? mp->v[i].value : "", mp->v[i].source, module);
		} else if (!ns_modparam_value_ok(spec->types[k], mp->v[i].value, &why)) {
			r = note(mp, "%s=%s (%s): not passed, %s", mp->v[i].name, mp->v[i].value ? mp->v[i].value : "",
				 mp->v[i].source, why);
		} else {
			i++;
			continue;
		}
		if (r < 0)
			return r;
		drop(mp, i);
	}
	return 0;
}

char *ns_modparams_string(const struct ns_modparams *mp)
{
	size_t len = 1;
	char *s, *o;

	for (size_t i = 0; i < mp->n; i++)
		len += strlen(mp->v[i].name) + (mp->v[i].value ? strlen(mp->v[i].value) + 3 : 0) + 1;
	s = o = malloc(len);
	if (!s)
		return NULL;
	*o = '\0';
	for (size_t i = 0; i < mp->n; i++) {
		const char *v = mp->v[i].value;
		bool quote = v && strpbrk(v, " \t");
		o += sprintf(o, "%s%s%s%s%s%s", i ? " " : "", mp->v[i].name, v ? "=" : "", quote ? "\"" : "",
			     v ? v : "", quote ? "\"" : "");
	}
	return s;
}

void ns_modparams_free(struct ns_modparams *mp)
{
	for (size_t i = 0; i < mp->n; i++) {
		free(mp->v[i].name);
		free(mp->v[i].value);
	}
	free(mp->v);
	ns_strv_free(mp->notes, mp->nnotes);
	free(mp->refusal);
	memset(mp, 0, sizeof(*mp));
}

/* ---- the sources ---- */

/* The parameters of the module about to be loaded: the file's modinfo (libkmod), the stock
 * module's by name, or under a sysroot without libkmod .numastor/modinfo/NAME. */
static int read_spec(struct ns_root *root, struct kmod_ctx *ctx, const char *name, const char *file,
		     struct ns_modparm_spec *spec)
{
	struct kmod_module *mod = NULL;
	struct kmod_list *info = NULL, *l;
	int r;

	if (ctx && file) {
		const char *dir = ns_root_path(root);
		char *abs = ns_fmt("%s%s%s", strcmp(dir, "/") == 0 ? "" : dir, file[0] == '/' ? "" : "/", file);
		if (!abs)
			return -ENOMEM;
		r = kmod_module_new_from_path(ctx, abs, &mod);
		free(abs);
	} else if (ctx && ns_root_is_live(root)) {
		r = kmod_module_new_from_name(ctx, name, &mod);
	} else {
		char path[512], *txt = NULL;
		snprintf(path, sizeof(path), ".numastor/modinfo/%s", name);
		r = ns_read_str(root, path, &txt);
		if (r < 0)
			return r;
		spec->known = true;
		for (char *save = NULL, *line = strtok_r(txt, "\n", &save); line && r >= 0;
		     line = strtok_r(NULL, "\n", &save)) {
			char *eq = strchr(line, '=');
			if (eq) {
				*eq = '\0';
				r = ns_modparm_spec_add(spec, line, eq + 1);
			}
		}
		free(txt);
		return r < 0 ? r : 0;
	}
	if (r < 0)
		return r;
	r = kmod_module_get_info(mod, &info);
	if (r >= 0) {
		spec->known = true;
		r = 0;
		kmod_list_foreach (l, info)
			if (r == 0)
				r = ns_modparm_spec_add(spec, kmod_module_info_get_key(l),
							kmod_module_info_get_value(l));
		kmod_module_info_free_list(info);
	}
	kmod_module_unref(mod);
	return r;
}

/* Source 1 and the refusal: libkmod's view of modprobe.d and the kernel command line. */
static int from_config(struct ns_root *root, struct kmod_ctx *ctx, const char *name, struct ns_modparams *mp)
{
	struct kmod_module *mod = NULL;
	const char *install, *remove;
	int r;

	if (!ns_root_is_live(root) || !ctx)
		return note(mp,
			    "modprobe.d and kernel command-line options of %s are not known here (libkmod reads "
			    "this machine's /etc/modprobe.d and /proc/cmdline, not the tree's): only sys/module "
			    "values are used",
			    name);
	r = kmod_module_new_from_name(ctx, name, &mod);
	if (r < 0)
		return r;
	install = kmod_module_get_install_commands(mod);
	remove = kmod_module_get_remove_commands(mod);
	if (install || remove) {
		mp->refusal = ns_fmt("modprobe.d has %s `%s` command for %s: numastor will not run it through "
				     "libkmod's system(); remove it or swap by hand",
				     install ? "an" : "a", install ? "install" : "remove", kmod_module_get_name(mod));
		if (!mp->refusal) {
			kmod_module_unref(mod);
			return -ENOMEM;
		}
	}
	r = ns_modparams_add_options(mp, kmod_module_get_options(mod), NS_MODPARAM_CONFIG);
	kmod_module_unref(mod);
	return r;
}

/* Source 2: what the loaded module runs with now. */
static int from_sysfs(struct ns_root *root, const char *name, struct ns_modparams *mp)
{
	char path[512], **names = NULL, mod[256];
	size_t n = 0;
	int r;

	snprintf(mod, sizeof(mod), "%s", name);
	underscores(mod);
	name = mod;
	snprintf(path, sizeof(path), "sys/module/%s/parameters", name);
	r = ns_list_dir(root, path, &names, &n);
	if (r == -ENOENT)
		return 0; /* not loaded, or no parameter it shows */
	if (r < 0)
		return note(mp, "sys/module/%s/parameters cannot be listed: %s", name, strerror(-r));
	for (size_t i = 0; i < n && r >= 0; i++) {
		char *val = NULL;
		snprintf(path, sizeof(path), "sys/module/%s/parameters/%s", name, names[i]);
		r = ns_read_str(root, path, &val);
		if (r == -ENODATA)
			r = note(mp, "%s: empty in sysfs, left at the module's default", names[i]);
		else if (r < 0)
			r = note(mp, "%s: not passed, /sys/module/%s/parameters/%s cannot be read: %s", names[i], name,
				 names[i], strerror(-r));
		else
			r = ns_modparams_set(mp, names[i], val, NS_MODPARAM_SYSFS);
		free(val);
	}
	ns_strv_free(names, n);
	return r < 0 ? r : 0;
}

int ns_modparams_gather(struct ns_root *root, struct kmod_ctx *ctx, const char *name, const char *file,
			struct ns_modparams *mp)
{
	struct ns_modparm_spec spec = {0};
	int r;

	memset(mp, 0, sizeof(*mp));
	r = from_config(root, ctx, name, mp);
	if (r == 0)
		r = from_sysfs(root, name, mp);
	if (r == 0) {
		int s = read_spec(root, ctx, name, file, &spec);
		if (s == -ENOMEM)
			r = s;
		else if (s < 0 || !spec.known) {
			/* nothing is known of the replacement's parameters: pass none */
			if (mp->n)
				r = note(mp, "the parameters of %s%s%s cannot be read (%s): none of %zu passed", name,
					 file ? " at /" : "", file ? file : "", strerror(s < 0 ? -s : ENOENT), mp->n);
			while (r == 0 && mp->n)
				drop(mp, mp->n - 1);
		} else {
			char *what =
				file ? ns_fmt("the %s to be loaded (/%s)", name, file) : ns_fmt("the stock %s", name);
			r = what ? ns_modparams_filter(mp, &spec, what) : -ENOMEM;
			free(what);
		}
	}
	ns_modparm_spec_free(&spec);
	if (r < 0)
		ns_modparams_free(mp);
	return r;
}

static int collect(struct ns_root *root, struct kmod_ctx *ctx, const char *name, const char *file, char **options,
		   char **refusal)
{
	struct ns_modparams mp;
	int r = ns_modparams_gather(root, ctx, name, file, &mp);

	*options = NULL;
	*refusal = NULL;
	if (r < 0)
		return r;
	*options = ns_modparams_string(&mp);
	if (!*options) {
		ns_modparams_free(&mp);
		return -ENOMEM;
	}
	*refusal = mp.refusal;
	mp.refusal = NULL;
	ns_modparams_free(&mp);
	return 0;
}

int ns_modparams_collect(struct ns_root *root, struct kmod_ctx *ctx, const char *name, char **options, char **refusal)
{
	return collect(root, ctx, name, NULL, options, refusal);
}

int ns_modparams_collect_file(struct ns_root *root, struct kmod_ctx *ctx, const char *name, const char *file,
			      char **options, char **refusal)
{
	return collect(root, ctx, name, file, options, refusal);
}
