/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Will the running kernel load a module file: its load policy, read once, and the judgement
 * of one file's signature against it (lib/swap/loadpolicy.h). */
#define _GNU_SOURCE
#include "swap/loadpolicy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "read/root.h"
#include "base/util.h"

#define SECFS "sys/kernel/security"
#define SECFS_FILE_MAX 65536

/* ---- the live securityfs, mounted in a private mount namespace of a child ---- */

static bool write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		len -= (size_t)w;
	}
	return true;
}

/* The child: syscalls only (the parent may have threads), its answer on fd:
 * int32 mount error, then per name int32 error, uint32 length, the bytes. */
static void __attribute__((noreturn)) secfs_child(int fd, const char *const *names, size_t n)
{
	static char buf[SECFS_FILE_MAX];
	int32_t e = 0;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("securityfs", "/" SECFS, "securityfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		e = errno;
	if (!write_all(fd, &e, sizeof(e)) || e)
		_exit(e ? 1 : 2);
	for (size_t i = 0; i < n; i++) {
		char path[256];
		uint32_t len = 0;
		int32_t err = 0;
		int f;
		snprintf(path, sizeof(path), "/" SECFS "/%s", names[i]);
		f = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (f < 0 && errno == ELOOP) /* ima -> integrity/ima on newer kernels */
			f = open(path, O_RDONLY | O_CLOEXEC);
		if (f < 0)
			err = errno;
		while (f >= 0 && len < sizeof(buf)) {
			ssize_t r = read(f, buf + len, sizeof(buf) - len);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				err = errno;
			if (r <= 0)
				break;
			len += (uint32_t)r;
		}
		if (f >= 0)
			close(f);
		if (err)
			len = 0;
		if (!write_all(fd, &err, sizeof(err)) || !write_all(fd, &len, sizeof(len)) || !write_all(fd, buf, len))
			_exit(2);
	}
	_exit(0);
}

static bool take(const char *buf, size_t len, size_t *at, void *out, size_t n)
{
	if (len - *at < n)
		return false;
	memcpy(out, buf + *at, n);
	*at += n;
	return true;
}

int ns_loadpol_securityfs_private(const char *const *names, size_t n, char **out, int *err)
{
	int pfd[2], status, r = 0;
	size_t len = 0, cap = 0, at = 0;
	char *buf = NULL;
	int32_t e;
	pid_t pid;

	for (size_t i = 0; i < n; i++) {
		out[i] = NULL;
		err[i] = -EIO;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return r;
	}
	if (pid == 0) {
		close(pfd[0]);
		secfs_child(pfd[1], names, n);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t got;
		if (cap - len < 4096) {
			char *nb = cap > (n + 1) * (SECFS_FILE_MAX + 8) ? NULL : realloc(buf, cap + 65536);
			if (!nb) {
				r = -ENOMEM;
				break;
			}
			buf = nb;
			cap += 65536;
		}
		got = read(pfd[0], buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r == 0 && !take(buf, len, &at, &e, sizeof(e)))
		r = -EIO;
	else if (r == 0 && e)
		r = -e;
	for (size_t i = 0; r == 0 && i < n; i++) {
		int32_t fe;
		uint32_t flen;
		if (!take(buf, len, &at, &fe, sizeof(fe)) || !take(buf, len, &at, &flen, sizeof(flen)) ||
		    len - at < flen) {
			r = -EIO;
			break;
		}
		if (fe) {
			err[i] = -fe;
		} else {
			/* ns_read_str's form: trailing whitespace gone, empty is -ENODATA */
			size_t l = flen;
			while (l && isspace((unsigned char)buf[at + l - 1]))
				l--;
			if (!l) {
				err[i] = -ENODATA;
			} else if (!(out[i] = strndup(buf + at, l))) {
				r = -ENOMEM;
				break;
			} else {
				err[i] = 0;
			}
		}
		at += flen;
	}
	free(buf);
	return r;
}

/* ---- reading the policy ---- */

/* securityfs's files through the root, or on the live root when it is not mounted, privately.
 * *how says which, or why neither answered. */
struct secfs {
	enum { SECFS_MOUNTED, SECFS_PRIVATE, SECFS_NONE } mode;
	char *why; /* SECFS_NONE: why it could not be read */
	char *text[3];
	int err[3];
};
static const char *const secfs_names[] = {"lockdown", "lsm", "ima/policy"};
enum { SF_LOCKDOWN, SF_LSM, SF_IMA_POLICY };

static int secfs_read(struct ns_root *root, struct secfs *s)
{
	char **names = NULL;
	size_t n = 0;
	int r = ns_list_dir(root, SECFS, &names, &n);
	ns_strv_free(names, n);
	for (size_t i = 0; i < 3; i++)
		s->err[i] = -EIO; /* not read */
	if (r == 0 && n > 0) {
		s->mode = SECFS_MOUNTED;
		for (size_t i = 0; i < 3; i++) {
			char p[128];
			snprintf(p, sizeof(p), SECFS "/%s", secfs_names[i]);
			s->err[i] = ns_read_str(root, p, &s->text[i]);
		}
		return 0;
	}
	if (!ns_root_is_live(root)) {
		s->mode = SECFS_NONE;
		s->why = ns_fmt("securityfs is not mounted in %s", ns_root_dir(root));
		return s->why ? 0 : -ENOMEM;
	}
	r = ns_loadpol_securityfs_private(secfs_names, 3, s->text, s->err);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		s->mode = SECFS_NONE;
		s->why = ns_fmt("securityfs is not mounted and could not be mounted privately: %s", strerror(-r));
		return s->why ? 0 : -ENOMEM;
	}
	s->mode = SECFS_PRIVATE;
	return 0;
}

static void secfs_free(struct secfs *s)
{
	for (size_t i = 0; i < 3; i++)
		free(s->text[i]);
	free(s->why);
}

/* The bracketed word of "[none] integrity confidentiality". */
static char *lockdown_word(const char *text)
{
	const char *a = strchr(text, '['), *b = a ? strchr(a, ']') : NULL;
	return b ? strndup(a + 1, (size_t)(b - a - 1)) : NULL;
}

static void read_lockdown(struct ns_loadpol *lp, const struct secfs *s)
{
	char *w;
	if (s->mode == SECFS_NONE) {
		lp->lockdown = NS_LP_UNKNOWN;
		lp->lockdown_what = ns_fmt("unknown: %s", s->why);
		return;
	}
	if (s->err[SF_LOCKDOWN] == -ENOENT) { /* securityfs there, no lockdown LSM */
		lp->lockdown = NS_LP_NO;
		lp->lockdown_what = strdup("none (no lockdown LSM)");
		return;
	}
	w = s->err[SF_LOCKDOWN] == 0 ? lockdown_word(s->text[SF_LOCKDOWN]) : NULL;
	if (!w) {
		lp->lockdown = NS_LP_UNKNOWN;
		lp->lockdown_what =
			s->err[SF_LOCKDOWN] == 0
				? ns_fmt("unknown: lockdown reads '%s'", s->text[SF_LOCKDOWN])
				: ns_fmt("unknown: lockdown cannot be read: %s", strerror(-s->err[SF_LOCKDOWN]));
		return;
	}
	lp->lockdown = strcmp(w, "none") == 0 ? NS_LP_NO : NS_LP_YES;
	lp->lockdown_what = w;
}

static bool keyring_trusted(const char *desc)
{
	static const char *const rings[] = {".builtin_trusted_keys", ".secondary_trusted_keys", ".platform",
					    ".machine"};
	for (size_t i = 0; i < sizeof(rings) / sizeof(rings[0]); i++) {
		size_t l = strlen(rings[i]);
		if (strncmp(desc, rings[i], l) == 0 && (desc[l] == ':' || desc[l] == '\0'))
			return true;
	}
	return false;
}

/* Lowercase hex without ':' and leading zero bytes (an ASN.1 serial's sign byte); NULL when
 * s is not hex. */
static char *norm_id(const char *s, size_t len)
{
	char *o = malloc(len + 1), *p = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ':')
			continue;
		if (!isxdigit((unsigned char)s[i])) {
			free(o);
			return NULL;
		}
		*p++ = (char)tolower((unsigned char)s[i]);
	}
	*p = '\0';
	p = o;
	while (p[0] == '0' && p[1] == '0' && p[2])
		p += 2;
	memmove(o, p, strlen(p) + 1);
	if (!o[0]) {
		free(o);
		return NULL;
	}
	return o;
}

/*
 * /proc/keys: "SERIAL FLAGS USAGE TIMEOUT PERM UID GID TYPE DESCRIPTION...". The keys the kernel
 * trusts for modules are asymmetric keys it loaded itself (uid 0, not charged to a quota: no
 * 'Q' flag; instantiated, not revoked, dead or invalidated); which keyring holds each is not
 * in the file, so the trusted keyrings must be listed for any of it to count. A key added at
 * run time by user space (Q) is not counted: where it is linked cannot be told from here.
 */
static int read_keys(struct ns_root *root, struct ns_loadpol *lp)
{
	char *text = NULL, *line, *save = NULL;
	bool ring = false;
	if (ns_read_str(root, "proc/keys", &text) < 0)
		return 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char flags[16], type[16];
		unsigned uid;
		int off = 0;
		const char *desc, *end, *colon;
		if (sscanf(line, "%*s %15s %*s %*s %*s %u %*s %15s %n", flags, &uid, type, &off) != 3 || !off)
			continue;
		desc = line + off;
		if (strcmp(type, "keyring") == 0) {
			ring = ring || keyring_trusted(desc);
			continue;
		}
		if (strcmp(type, "asymmetri") != 0 || uid != 0 || !strchr(flags, 'I') || strpbrk(flags, "QRDi"))
			continue;
		/* "SUBJECT: ID: X509.rsa 1234abcd []": the description ends at the last ": " */
		end = NULL;
		for (const char *p = strstr(desc, ": "); p; p = strstr(p + 1, ": "))
			end = p;
		if (!end)
			continue;
		colon = NULL;
		for (const char *p = strstr(desc, ": "); p && p < end; p = strstr(p + 1, ": "))
			colon = p;
		if (!colon) /* the describe part may be absent: "SUBJECT: ID" */
			colon = end, end = desc + strlen(desc);
		{
			struct ns_lp_key *nk = realloc(lp->keys, (lp->nkeys + 1) * sizeof(*nk));
			char *id = norm_id(colon + 2, (size_t)(end - colon - 2));
			if (!nk) {
				free(id);
				free(text);
				return -ENOMEM;
			}
			lp->keys = nk;
			if (!id)
				continue;
			nk[lp->nkeys].id = id;
			nk[lp->nkeys].subject = strndup(desc, (size_t)(colon - desc));
			if (!nk[lp->nkeys].subject) {
				free(id);
				free(text);
				return -ENOMEM;
			}
			lp->nkeys++;
		}
	}
	free(text);
	lp->keys_known = ring;
	return 0;
}

static bool word_in(const char *list, const char *word, const char *seps)
{
	size_t l = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += l)
		if ((p == list || strchr(seps, p[-1])) && (!p[l] || strchr(seps, p[l])))
			return true;
	return false;
}

/* The first rule of an IMA policy text that appraises module files: "appraise" with
 * func=MODULE_CHECK, or with no func= at all (every hook: appraise_tcb's fowner=0 rules). */
static char *ima_module_rule(const char *policy)
{
	const char *p = policy;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		char *rule = strndup(p, l);
		if (!rule)
			return NULL;
		if (strncmp(rule, "appraise", 8) == 0 && (rule[8] == ' ' || rule[8] == '\t' || !rule[8]) &&
		    (strstr(rule, "func=MODULE_CHECK") || !strstr(rule, "func=")))
			return rule;
		free(rule);
		p += l;
		if (*p)
			p++;
	}
	return NULL;
}

/* The value of a command line parameter NAME= (the last one), malloc'd, or NULL. */
static char *cmdline_value(const char *cmdline, const char *name)
{
	size_t l = strlen(name);
	char *v = NULL;
	for (const char *p = cmdline; *p;) {
		size_t w;
		while (*p == ' ' || *p == '\t')
			p++;
		w = strcspn(p, " \t");
		if (w > l && strncmp(p, name, l) == 0 && p[l] == '=') {
			free(v);
			v = strndup(p + l + 1, w - l - 1);
		} else if (w == l && strncmp(p, name, l) == 0) {
			free(v);
			v = strdup("");
		}
		p += w;
	}
	return v;
}

static int read_ima(struct ns_root *root, struct ns_loadpol *lp, const struct secfs *s)
{
	char *cmdline = NULL, *mode = NULL, *pol = NULL, *rule = NULL, *etc = NULL;
	const char *source = NULL;
	int r = 0;
	ns_read_str(root, "proc/cmdline", &cmdline);
	mode = cmdline ? cmdline_value(cmdline, "ima_appraise") : NULL;
	/* securityfs's lsm list without IMA (6.1: "integrity", 6.9 on: "ima"): no appraisal */
	if (s->mode != SECFS_NONE && s->err[SF_LSM] == 0 && !word_in(s->text[SF_LSM], "integrity", ",") &&
	    !word_in(s->text[SF_LSM], "ima", ","))
		goto out;
	if (s->mode != SECFS_NONE && s->err[SF_IMA_POLICY] == 0) {
		rule = ima_module_rule(s->text[SF_IMA_POLICY]);
		source = "the IMA policy";
	} else {
		/* not readable back (no CONFIG_IMA_READ_POLICY: Debian's) or securityfs unknown: what
		 * loads one, the command line's built-in policies and systemd's policy file */
		pol = cmdline ? cmdline_value(cmdline, "ima_policy") : NULL;
		if (pol && (word_in(pol, "appraise_tcb", "|") || word_in(pol, "secure_boot", "|"))) {
			rule = ns_fmt("ima_policy=%s", pol);
			source = "the kernel command line";
		} else if (cmdline && word_in(cmdline, "ima_appraise_tcb", " \t")) {
			rule = strdup("ima_appraise_tcb");
			source = "the kernel command line";
		} else if (ns_read_str(root, "etc/ima/ima-policy", &etc) == 0) {
			rule = ima_module_rule(etc);
			source = "/etc/ima/ima-policy (systemd loads it at boot)";
		}
	}
	/* ima_appraise=off, log or fix: appraisal that does not deny */
	if (rule && !(mode && (strcmp(mode, "off") == 0 || strcmp(mode, "log") == 0 || strcmp(mode, "fix") == 0))) {
		lp->ima = ns_fmt("IMA appraises module files ('%s' in %s): the kernel loads the file only with a "
				 "valid IMA signature",
				 rule, source);
		if (!lp->ima)
			r = -ENOMEM;
	}
out:
	free(cmdline);
	free(mode);
	free(pol);
	free(rule);
	free(etc);
	return r;
}

int ns_loadpol_read(struct ns_root *root, struct ns_loadpol *lp)
{
	struct secfs s = {0};
	char *v = NULL, **names = NULL;
	size_t n = 0;
	int r;

	memset(lp, 0, sizeof(*lp));
	/* modules_disabled: 1 until reboot once set */
	lp->modules_disabled = NS_LP_UNKNOWN;
	if (ns_read_str(root, "proc/sys/kernel/modules_disabled", &v) == 0)
		lp->modules_disabled = strcmp(v, "0") == 0 ? NS_LP_NO : NS_LP_YES;
	free(v);
	v = NULL;
	/* module.sig_enforce: there exactly when the kernel checks signatures (CONFIG_MODULE_SIG) */
	lp->sig_checked = lp->sig_enforce = NS_LP_UNKNOWN;
	r = ns_read_str(root, "sys/module/module/parameters/sig_enforce", &v);
	if (r == 0) {
		lp->sig_checked = NS_LP_YES;
		lp->sig_enforce = strcmp(v, "Y") == 0 ? NS_LP_YES : strcmp(v, "N") == 0 ? NS_LP_NO : NS_LP_UNKNOWN;
	} else if (r == -ENOENT && ns_list_dir(root, "sys/module", &names, &n) == 0 && n > 0) {
		lp->sig_checked = NS_LP_NO;
		lp->sig_enforce = NS_LP_NO;
	}
	ns_strv_free(names, n);
	free(v);
	v = NULL;
	r = secfs_read(root, &s);
	if (r < 0)
		goto out;
	read_lockdown(lp, &s);
	if (!lp->lockdown_what) {
		r = -ENOMEM;
		goto out;
	}
	r = read_keys(root, lp);
	if (r < 0)
		goto out;
	r = read_ima(root, lp, &s);
	if (r < 0)
		goto out;
	/* LoadPin: active when securityfs's lsm lists it; enforcing unless its sysctl says 0 (the
	 * sysctl exists only while the pinned file system is writable) */
	if (ns_read_str(root, "proc/sys/kernel/loadpin/enabled", &v) == 0
		    ? strcmp(v, "0") != 0
		    : s.err[SF_LSM] == 0 && word_in(s.text[SF_LSM], "loadpin", ",")) {
		lp->loadpin = strdup("LoadPin is enforcing: modules load only from the file system the first one "
				     "came from, and whether the file is on it is not established");
		if (!lp->loadpin)
			r = -ENOMEM;
	}
	free(v);
	v = NULL;
	if (r == 0 && ns_read_str(root, "sys/fs/selinux/enforce", &v) == 0 && strcmp(v, "1") == 0) {
		lp->selinux = strdup("SELinux is enforcing: whether its policy lets this process load the file "
				     "(system module_load) is not established");
		if (!lp->selinux)
			r = -ENOMEM;
	}
	free(v);
out:
	secfs_free(&s);
	if (r < 0)
		ns_loadpol_free(lp);
	return r;
}

void ns_loadpol_free(struct ns_loadpol *lp)
{
	for (size_t i = 0; i < lp->nkeys; i++) {
		free(lp->keys[i].subject);
		free(lp->keys[i].id);
	}
	free(lp->keys);
	free(lp->lockdown_what);
	free(lp->ima);
	free(lp->loadpin);
	free(lp->selinux);
	memset(lp, 0, sizeof(*lp));
}

/* ---- one file ---- */

/* The kernel's subject for a key: "CN", or "O: CN" (x509_fabricate_name) */
static bool subject_is(const char *subject, const char *signer)
{
	size_t a = strlen(subject), b = strlen(signer);
	return strcmp(subject, signer) == 0 ||
	       (a > b + 2 && strcmp(subject + a - b, signer) == 0 && strncmp(subject + a - b - 2, ": ", 2) == 0);
}

static int add_reason(char **acc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_reason(char **acc, const char *fmt, ...)
{
	va_list ap;
	char *one, *both;
	va_start(ap, fmt);
	one = ns_vfmt(fmt, ap);
	va_end(ap);
	if (!one)
		return -ENOMEM;
	both = *acc ? ns_fmt("%s; %s", *acc, one) : one;
	if (*acc)
		free(one);
	if (!both)
		return -ENOMEM;
	free(*acc);
	*acc = both;
	return 0;
}

int ns_loadpol_judge(const struct ns_loadpol *lp, const struct ns_modsig *sig, const char *file, bool *ok,
		     char **detail)
{
	enum ns_lp_tri enforce;
	char *why = NULL, *enf = NULL, *key = NULL, *what = NULL;
	const struct ns_lp_key *match = NULL, *named = NULL;
	int r = 0;

	*detail = NULL;
	*ok = false;
	/* is a signature required, and by what */
	if (lp->sig_checked == NS_LP_NO) {
		enforce = NS_LP_NO;
		enf = strdup("the kernel does not check module signatures");
	} else if (lp->sig_enforce == NS_LP_YES || lp->lockdown == NS_LP_YES) {
		enforce = NS_LP_YES;
		enf = lp->sig_enforce == NS_LP_YES ? strdup("module.sig_enforce")
						   : ns_fmt("lockdown %s", lp->lockdown_what);
	} else if (lp->sig_enforce == NS_LP_UNKNOWN || lp->lockdown == NS_LP_UNKNOWN) {
		enforce = NS_LP_UNKNOWN;
		enf = ns_fmt(
			"whether the kernel requires signed modules is not known (module.sig_enforce %s, lockdown %s)",
			lp->sig_enforce == NS_LP_UNKNOWN ? "unknown" : "N", lp->lockdown_what);
	} else {
		enforce = NS_LP_NO;
		enf = ns_fmt("module.sig_enforce N, lockdown %s", lp->lockdown_what);
	}
	if (!enf)
		return -ENOMEM;
	/* what the signature is */
	if (sig->id_type) {
		key = sig->key ? norm_id(sig->key, strlen(sig->key)) : NULL;
		for (size_t i = 0; lp->keys_known && i < lp->nkeys && !match; i++) {
			if (key && strcmp(lp->keys[i].id, key) == 0)
				match = &lp->keys[i];
			else if (sig->signer && subject_is(lp->keys[i].subject, sig->signer) && !named)
				named = &lp->keys[i];
		}
		what = ns_fmt("signed (%s, %s) by '%s' key %s", sig->id_type, sig->hashalgo ? sig->hashalgo : "?",
			      sig->signer ? sig->signer : "?", sig->key ? sig->key : "?");
	} else {
		what = strdup("unsigned");
	}
	if (!what) {
		r = -ENOMEM;
		goto out;
	}

	if (lp->modules_disabled != NS_LP_NO)
		r = add_reason(&why,
			       lp->modules_disabled == NS_LP_YES
				       ? "kernel.modules_disabled is 1: the kernel loads no module until it reboots"
				       : "whether module loading is disabled (kernel.modules_disabled) is not known");
	if (r == 0 && enforce != NS_LP_NO) {
		const char *req =
			enforce == NS_LP_YES ? "the kernel only loads modules signed by a key it trusts" : NULL;
		if (!sig->id_type)
			r = req ? add_reason(&why,
					     "%s (%s) and %s is unsigned: sign it with a key the kernel trusts (MOK), "
					     "or install it for a boot without enforcement",
					     req, enf, file)
				: add_reason(&why, "%s, and %s is unsigned", enf, file);
		else if (strcmp(sig->id_type, "PKCS#7") != 0)
			r = add_reason(&why, "%s is %s: the kernel takes PKCS#7 module signatures only (%s)", file,
				       what, enf);
		else if (match)
			; /* the key is one the kernel trusts: taken */
		else if (!lp->keys_known)
			r = add_reason(&why,
				       "%s is %s, and the keys the kernel trusts are not known (/proc/keys lists no "
				       "trusted keyring to this process) (%s)",
				       file, what, enf);
		else if (named)
			r = add_reason(&why,
				       "%s is %s: a key the kernel trusts is named '%s' but /proc/keys shows its "
				       "key id as %s, not the signature's (a signature naming the certificate's "
				       "serial cannot be matched: sign with sign-file -k) (%s)",
				       file, what, named->subject, named->id, enf);
		else
			r = add_reason(&why,
				       "%s is %s, which no key the kernel trusts matches (%s): the kernel will "
				       "reject it",
				       file, what, enf);
	}
	if (r == 0 && lp->ima)
		r = add_reason(&why, "%s", lp->ima);
	if (r == 0 && lp->loadpin)
		r = add_reason(&why, "%s", lp->loadpin);
	if (r == 0 && lp->selinux)
		r = add_reason(&why, "%s", lp->selinux);
	if (r < 0)
		goto out;
	if (why) {
		*detail = why;
		why = NULL;
		goto out;
	}
	*ok = true;
	if (match)
		*detail =
			ns_fmt("%s, a key the kernel trusts ('%s: %s' in /proc/keys)", what, match->subject, match->id);
	else if (!sig->id_type)
		*detail = ns_fmt("not enforced (%s): unsigned, loading taints the kernel (E)", enf);
	else
		*detail = ns_fmt("not enforced (%s): %s, a key the kernel is not known to trust: loading may taint the "
				 "kernel (E)",
				 enf, what);
	if (!*detail)
		r = -ENOMEM;
out:
	free(why);
	free(enf);
	free(key);
	free(what);
	return r;
}
