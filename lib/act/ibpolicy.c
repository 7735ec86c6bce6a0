/* SPDX-License-Identifier: GPL-2.0-or-later */
/* irqbalance's drop-in with numastor's policy script: enabled, journaled, refused, removed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "config.h"
#include "act/exec.h"
#include "act/ibpolicy.h"
#include "state/journal.h"
#include "base/testhook.h"
#include "base/util.h"

#define JOURNAL_DIR "var/lib/numastor"
#define JOURNAL_VERSION 1

/* Where systemd looks for irqbalance.service's drop-ins, in its order of precedence. */
static const char *const dropin_dirs[] = {
	"etc/systemd/system/irqbalance.service.d",	     "run/systemd/system/irqbalance.service.d",
	"usr/local/lib/systemd/system/irqbalance.service.d", "usr/lib/systemd/system/irqbalance.service.d",
	"lib/systemd/system/irqbalance.service.d",
};

/*
 * The policy script an argument string gives irqbalance (--policyscript=X, --policyscript X,
 * -l X, -lX), malloc'd, or NULL when it gives none.
 */
static char *script_in(const char *args)
{
	for (const char *p = args; p && *p; p++) {
		size_t skip = 0;
		if ((p == args || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '"' || p[-1] == '\'' || p[-1] == '=') &&
		    strncmp(p, "--policyscript", 14) == 0)
			skip = 14;
		else if ((p == args || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '"' || p[-1] == '\'' ||
			  p[-1] == '=') &&
			 strncmp(p, "-l", 2) == 0 && (p[2] == ' ' || p[2] == '/' || p[2] == '='))
			skip = 2;
		if (!skip)
			continue;
		p += skip;
		p += strspn(p, "= \t");
		return strndup(p, strcspn(p, " \t\"'\n"));
	}
	return NULL;
}

static bool ours(const char *script)
{
	return ns_ibpolicy_is_numastors(script);
}

bool ns_ibpolicy_is_numastors(const char *script)
{
	static const char tail[] = "/numastor/irqbalance-policy";
	size_t n = strlen(script);

	/* this build's, or a numastor installed under another prefix (/usr, /usr/local) */
	return strcmp(script, NUMASTOR_POLICY_SCRIPT) == 0 ||
	       (n >= sizeof(tail) - 1 && strcmp(script + n - (sizeof(tail) - 1), tail) == 0);
}

/* A drop-in's text: the script it gives, and whether it replaces ExecStart= with a command. */
static void read_dropin(const char *txt, char **script, bool *execstart)
{
	*script = NULL;
	*execstart = false;
	for (const char *l = txt; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		l += strspn(l, " \t");
		if (*l == '#' || *l == ';')
			continue;
		if (strncmp(l, "ExecStart=", 10) == 0) {
			const char *v = l + 10;
			char *line = strndup(v, strcspn(v, "\n"));
			if (line && line[strspn(line, " \t")])
				*execstart = true;
			if (line && !*script)
				*script = script_in(line);
			free(line);
		} else if (strncmp(l, "Environment=", 12) == 0 && strstr(l, "IRQBALANCE_ARGS")) {
			char *line = strndup(l, strcspn(l, "\n"));
			if (line && !*script)
				*script = script_in(line);
			free(line);
		}
	}
}

static int note(char **slot, char *text)
{
	if (!text)
		return -ENOMEM;
	if (*slot)
		free(text); /* the first reason is the one said */
	else
		*slot = text;
	return 0;
}

int ns_ibpolicy_inspect(struct ns_root *root, const struct ns_irqbalance *ib, struct ns_ibpolicy_state *st)
{
	static const char *const optfiles[] = {"etc/default/irqbalance", "etc/sysconfig/irqbalance"};
	char *target = NULL;
	int r = 0;

	memset(st, 0, sizeof(*st));
	int e = ns_probe(root, NS_IBPOLICY_JOURNAL);
	st->journaled = e == 1;
	if (e < 0) /* ours or not: not told, so nothing is done to it */
		r = note(&st->conflict, ns_fmt("/%s could not be looked at: %s", NS_IBPOLICY_JOURNAL, strerror(-e)));
	if (r == 0 && ns_readlink(root, NS_IBPOLICY_LINK, &target) == 0) {
		st->linked = strcmp(target, NUMASTOR_IRQBALANCE_DROPIN) == 0;
		if (!st->linked)
			r = note(&st->conflict, ns_fmt("/%s is a link to %s, not to numastor's drop-in %s",
						       NS_IBPOLICY_LINK, target, NUMASTOR_IRQBALANCE_DROPIN));
		free(target);
	} else if (r == 0 && (e = ns_probe(root, NS_IBPOLICY_LINK)) != 0) {
		r = note(&st->conflict,
			 e > 0 ? ns_fmt("/%s is a file of its own, not numastor's link", NS_IBPOLICY_LINK)
			       : ns_fmt("/%s could not be looked at: %s", NS_IBPOLICY_LINK, strerror(-e)));
	}
	for (size_t d = 0; r == 0 && d < sizeof(dropin_dirs) / sizeof(*dropin_dirs); d++) {
		char **names;
		size_t n;
		if (ns_list_dir(root, dropin_dirs[d], &names, &n) < 0)
			continue;
		for (size_t i = 0; r == 0 && i < n; i++) {
			char path[512], *txt, *script;
			bool execstart;
			size_t len = strlen(names[i]);
			if (len < 5 || strcmp(names[i] + len - 5, ".conf") != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dropin_dirs[d], names[i]);
			if (strcmp(path, NS_IBPOLICY_LINK) == 0)
				continue; /* judged above */
			if (ns_read_str(root, path, &txt) < 0)
				continue; /* a link to /dev/null (masked) or unreadable: gives nothing */
			read_dropin(txt, &script, &execstart);
			free(txt);
			if (script && !ours(script))
				r = note(&st->conflict,
					 ns_fmt("the drop-in /%s gives irqbalance the policy script %s", path, script));
			else if (script)
				r = note(&st->already, ns_fmt("/%s", path));
			else if (execstart)
				r = note(&st->conflict,
					 ns_fmt("the drop-in /%s replaces irqbalance's ExecStart= (whichever of two "
						"drop-ins sorts last wins)",
						path));
			free(script);
		}
		ns_strv_free(names, n);
	}
	for (size_t i = 0; r == 0 && i < 2; i++) {
		char *txt, *script = NULL;
		if (ns_read_str(root, optfiles[i], &txt) < 0)
			continue;
		for (const char *l = txt; l && *l && !script; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			l += strspn(l, " \t");
			if (strncmp(l, "IRQBALANCE_ARGS=", 16) == 0) {
				char *line = strndup(l + 16, strcspn(l + 16, "\n"));
				script = line ? script_in(line) : NULL;
				free(line);
			}
		}
		free(txt);
		if (script && !ours(script))
			r = note(&st->conflict, ns_fmt("IRQBALANCE_ARGS in /%s gives irqbalance the policy script %s",
						       optfiles[i], script));
		else if (script)
			r = note(&st->already, ns_fmt("IRQBALANCE_ARGS in /%s", optfiles[i]));
		free(script);
	}
	if (r == 0 && ib->running == 1 && ib->policyscript && !ours(ib->policyscript) && !st->conflict)
		r = note(&st->conflict, ns_fmt("the running irqbalance (pid %ld) has the policy script %s", ib->pid,
					       ib->policyscript));
	return r;
}

void ns_ibpolicy_state_free(struct ns_ibpolicy_state *st)
{
	free(st->already);
	free(st->conflict);
	memset(st, 0, sizeof(*st));
}

int ns_ibpolicy_enable(struct ns_root *root, char **problem)
{
	struct json_object *doc;
	char *target = NULL;
	int r = ns_probe(root, NS_IBPOLICY_DIR);
	bool made_dir = r == 0, have = false;

	*problem = NULL;
	if (r < 0) {
		*problem = ns_fmt("/%s could not be looked at: %s", NS_IBPOLICY_DIR, strerror(-r));
		return r;
	}
	if (ns_readlink(root, NS_IBPOLICY_LINK, &target) == 0) {
		bool same = strcmp(target, NUMASTOR_IRQBALANCE_DROPIN) == 0;
		free(target);
		have = true;
		if (!same) {
			*problem = ns_fmt("/%s exists and is not numastor's", NS_IBPOLICY_LINK);
			return -EEXIST;
		}
	} else if ((r = ns_probe(root, NS_IBPOLICY_LINK)) != 0) {
		*problem = r > 0 ? ns_fmt("/%s exists and is not numastor's", NS_IBPOLICY_LINK)
				 : ns_fmt("/%s could not be looked at: %s", NS_IBPOLICY_LINK, strerror(-r));
		return r > 0 ? -EEXIST : r;
	}
	/* the record first: a link made and then forgotten is what --revert could not undo */
	r = ns_state_dir_ensure(root, JOURNAL_DIR, problem);
	if (r < 0)
		return r;
	doc = json_object_new_object();
	json_object_object_add(doc, "version", json_object_new_int(JOURNAL_VERSION));
	json_object_object_add(doc, "link", json_object_new_string("/" NS_IBPOLICY_LINK));
	json_object_object_add(doc, "target", json_object_new_string(NUMASTOR_IRQBALANCE_DROPIN));
	json_object_object_add(doc, "made_dir", json_object_new_boolean(made_dir));
	r = ns_write_atomic(
		root, NS_IBPOLICY_JOURNAL,
		json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), 0644);
	json_object_put(doc);
	if (r < 0) {
		*problem = ns_fmt("cannot write /%s: %s", NS_IBPOLICY_JOURNAL, strerror(-r));
		return r;
	}
	r = ns_mkdir_p(root, NS_IBPOLICY_DIR);
	if (r == 0 && !have)
		r = ns_symlink(root, NUMASTOR_IRQBALANCE_DROPIN, NS_IBPOLICY_LINK);
	if (r < 0)
		*problem = ns_fmt("cannot link /%s: %s", NS_IBPOLICY_LINK, strerror(-r));
	return r;
}

int ns_ibpolicy_disable(struct ns_root *root, bool *removed, char **problem)
{
	char *txt = NULL, *target = NULL;
	struct json_object *doc, *v;
	bool made_dir = false;
	int r;

	*removed = false;
	*problem = NULL;
	r = ns_read_str(root, NS_IBPOLICY_JOURNAL, &txt);
	if (r < 0)
		return r;
	doc = ns_journal_parse_json(txt);
	free(txt);
	if (!doc || !json_object_object_get_ex(doc, "version", &v) || json_object_get_int(v) != JOURNAL_VERSION) {
		json_object_put(doc);
		*problem = ns_fmt("/%s is not a journal this numastor wrote: kept, the link left alone",
				  NS_IBPOLICY_JOURNAL);
		return -EINVAL;
	}
	if (json_object_object_get_ex(doc, "made_dir", &v))
		made_dir = json_object_get_boolean(v);
	json_object_put(doc);
	if (ns_readlink(root, NS_IBPOLICY_LINK, &target) == 0) {
		/* only numastor's own link: what an operator put there since stays */
		if (strcmp(target, NUMASTOR_IRQBALANCE_DROPIN) == 0) {
			r = ns_unlink(root, NS_IBPOLICY_LINK);
			if (r < 0) {
				free(target);
				*problem = ns_fmt("cannot remove /%s: %s", NS_IBPOLICY_LINK, strerror(-r));
				return r;
			}
			*removed = true;
		} else {
			*problem = ns_fmt("/%s now links to %s, not numastor's drop-in: left alone", NS_IBPOLICY_LINK,
					  target);
		}
		free(target);
	}
	if (made_dir)
		ns_rmdir(root, NS_IBPOLICY_DIR); /* only when empty: the operator's drop-ins stay */
	r = ns_unlink(root, NS_IBPOLICY_JOURNAL);
	return r == -ENOENT ? 0 : r;
}

/* One systemctl run: 0 when it exited 0, else -ECHILD with what it said appended to *said. */
static int systemctl(const char *path, char *const argv[], char **said)
{
	struct ns_exec_result res = {0};
	int r = ns_exec_run(path, argv, false, &res);
	char *line, *all;

	if (r == 0 && ns_exec_ok(&res)) {
		ns_exec_result_free(&res);
		return 0;
	}
	line = r == 0 ? ns_exec_describe(path, &res) : ns_fmt("%s could not run: %s", path, strerror(-r));
	all = ns_fmt("%s%s%s", *said ? *said : "", *said ? "; " : "", line ? line : "?");
	free(line);
	free(*said);
	*said = all;
	ns_exec_result_free(&res);
	return -ECHILD;
}

int ns_ibpolicy_reload(struct ns_root *root, char **said)
{
	static const char *const paths[] = {"/usr/bin/systemctl", "/bin/systemctl", NULL};
	const char *path = ns_test_hook("NUMASTOR_TEST_SYSTEMCTL");
	char *reload[] = {"systemctl", "daemon-reload", NULL},
	     *restart[] = {"systemctl", "try-restart", "irqbalance.service", NULL};
	int r;

	*said = NULL;
	if (!path) {
		if (!ns_root_is_live(root)) {
			*said = ns_fmt("not reloaded: a captured tree runs no systemctl");
			return -ENOSYS;
		}
		if ((r = ns_probe(root, "run/systemd/system")) <= 0) {
			*said = r == 0 ? ns_fmt("not reloaded: systemd does not run here; restart irqbalance with the "
						"drop-in yourself")
				       : ns_fmt("not reloaded: whether systemd runs here could not be told "
						"(/run/systemd/system: %s); restart irqbalance with the drop-in "
						"yourself",
						strerror(-r));
			return r == 0 ? -ENOSYS : r;
		}
		path = ns_exec_find(paths);
		if (!path) {
			*said = ns_fmt("not reloaded: no systemctl in /usr/bin or /bin");
			return -ENOSYS;
		}
	}
	r = systemctl(path, reload, said);
	if (r == 0)
		r = systemctl(path, restart, said);
	if (r == 0)
		*said = ns_fmt("systemctl daemon-reload and try-restart irqbalance.service done");
	return *said ? r : -ENOMEM;
}
