/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Will the running kernel load a module file? What decides it beyond the file itself:
 * kernel.modules_disabled; module signature enforcement (module.sig_enforce, lockdown at
 * integrity or above) and, under it, whether the file's signer and key id (libkmod's modinfo
 * sig_id, signer, sig_key, sig_hashalgo) match a key the kernel trusts (the asymmetric keys of
 * /proc/keys the kernel itself loaded: .builtin_trusted_keys, .secondary_trusted_keys,
 * .platform, .machine); IMA appraisal of modules (the policy, or where it cannot be read back
 * the command line's ima_policy= and systemd's /etc/ima/ima-policy), LoadPin and SELinux
 * enforcing. What cannot be established is unknown; unknown where it could refuse is a
 * refusal. Without enforcement an unsigned module loads (the kernel is tainted E): it passes,
 * and the detail says so.
 *
 * Every file is read through the root, so a fixture tree replays it. On the live root with
 * securityfs not mounted, its files (lockdown, lsm, ima/policy) are read in a child process
 * that mounts securityfs in a private mount namespace of its own: the machine's mounts do not
 * change. Those reads are not seen by the root's recorder.
 */
#ifndef NUMASTOR_LOADPOLICY_H
#define NUMASTOR_LOADPOLICY_H

#include <stdbool.h>
#include <stddef.h>

struct ns_root;

enum ns_lp_tri { NS_LP_NO = 0, NS_LP_YES = 1, NS_LP_UNKNOWN = -1 };

/* A key the kernel trusts, from its /proc/keys description "SUBJECT: ID" (ID lowercase hex:
 * the subject key identifier, or the serial for a certificate without one). */
struct ns_lp_key {
	char *subject;
	char *id;
};

struct ns_loadpol {
	enum ns_lp_tri modules_disabled; /* proc/sys/kernel/modules_disabled */
	enum ns_lp_tri sig_checked;	 /* the kernel checks signatures (module.sig_enforce exists) */
	enum ns_lp_tri sig_enforce;	 /* module.sig_enforce is Y */
	enum ns_lp_tri lockdown;	 /* lockdown is integrity or confidentiality */
	char *lockdown_what;		 /* "none", "integrity", ... or why it is not known */
	struct ns_lp_key *keys;
	size_t nkeys;
	bool keys_known; /* /proc/keys was read and lists one of the trusted keyrings */
	char *ima;	 /* why IMA may refuse a module file; NULL when it appraises none */
	char *loadpin;	 /* likewise LoadPin */
	char *selinux;	 /* likewise SELinux (enforcing) */
};

/* What a module file's signature says (modinfo sig_id, signer, sig_key, sig_hashalgo);
 * id_type NULL: unsigned. */
struct ns_modsig {
	const char *id_type;
	const char *signer;
	const char *key;
	const char *hashalgo;
};

/* Read the machine's load policy through root. 0 or -ENOMEM; what cannot be read is unknown. */
int ns_loadpol_read(struct ns_root *root, struct ns_loadpol *lp);
void ns_loadpol_free(struct ns_loadpol *lp);
/*
 * Will the kernel load file (its path, for the messages) signed as sig says? *ok, and *detail
 * (malloc'd): every reason it will not or may not, or, when it will, what that rests on ("not
 * enforced: ... taints the kernel (E)", the trusted key matched). 0 or -ENOMEM.
 */
int ns_loadpol_judge(const struct ns_loadpol *lp, const struct ns_modsig *sig, const char *file, bool *ok,
		     char **detail);
/*
 * Live only: securityfs's files names[0..n) (relative to its root: "lockdown", "ima/policy")
 * as ns_read_str would give them, read by a child that mounts securityfs in a private mount
 * namespace. out[i] the text or NULL, err[i] 0 or -errno. Returns 0, or -errno when the child
 * could not mount it (not root: -EPERM) or could not run.
 */
int ns_loadpol_securityfs_private(const char *const *names, size_t n, char **out, int *err);

#endif
