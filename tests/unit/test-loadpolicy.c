/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Will the kernel load a module file (lib/swap/loadpolicy.h): each rule on a fake root that starts
 * as a plain Debian 12 machine (sig_enforce N, lockdown none, Debian's key in
 * .builtin_trusted_keys, IMA without a policy, no LoadPin, no SELinux), with its twin that
 * must not refuse: an unsigned file without enforcement passes (saying it taints), a file
 * signed by a trusted key passes under enforcement; unsigned under module.sig_enforce or
 * lockdown, a key only named like a trusted one, an unknown key, a key user space added,
 * unknown lockdown (securityfs not in the tree), modules_disabled, IMA appraisal from the
 * policy / the command line / systemd's file, LoadPin and SELinux enforcing each refuse.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "fakeroot.h"
#include "swap/loadpolicy.h"
#include "read/root.h"
#include "tap.h"

#define FILE_KO "/var/lib/numastor/modules/6.1.0-57-amd64/sd_mod.ko"
/* Debian's: a trusted keyring, its key (SKID form), a key user space added (Q), a revoked one */
#define KEYS_DEBIAN                                                                               \
	"0c0e8c7e I------     1 perm 1f0b0000     0     0 keyring   .builtin_trusted_keys: 1\n"   \
	"1cb5c9a3 I------     1 perm 1f0b0000     0     0 keyring   .secondary_trusted_keys: 2\n" \
	"2a3e4c11 I------     1 perm 1f030000     0     0 asymmetri Debian Secure Boot CA: "      \
	"6ccece7e4c6c0d1f6149f3dd27dfcc5cbb419ea1: X509.rsa cb419ea1 []\n"                        \
	"2b3e4c12 I--Q---     1 perm 3f010000     0     0 asymmetri Added By Hand: "              \
	"aa00bb11cc22dd33ee44ff5566778899aabbccdd: X509.rsa aabbccdd []\n"                        \
	"2c3e4c13 IR-----     1 perm 1f030000     0     0 asymmetri Revoked Key: "                \
	"1111111111111111111111111111111111111111: X509.rsa 11111111 []\n"                        \
	"3d4f5a6b I------     1 perm 1f030000     0     0 asymmetri Acme Ltd: Acme DKMS key: "    \
	"00f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d: X509.rsa 0a1b2c3d []\n"

static void rm(const char *rel)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", fr_base, rel);
	unlink(p);
}

static void rmdir_in(const char *rel)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", fr_base, rel);
	rmdir(p);
}

static void debian(void)
{
	fr_put("proc/sys/kernel/modules_disabled", "0\n");
	fr_put("sys/module/module/parameters/sig_enforce", "N\n");
	fr_put("sys/module/sd_mod/refcnt", "0\n");
	fr_put("sys/kernel/security/lockdown", "[none] integrity confidentiality\n");
	fr_put("sys/kernel/security/lsm", "lockdown,capability,landlock,yama,apparmor,integrity");
	rm("sys/kernel/security/ima/policy");
	rmdir_in("sys/kernel/security/ima");
	fr_put("proc/keys", KEYS_DEBIAN);
	fr_put("proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.1.0-57-amd64 root=/dev/sda1 ro quiet\n");
	rm("etc/ima/ima-policy");
	rm("proc/sys/kernel/loadpin/enabled");
	rm("sys/fs/selinux/enforce");
}

static const struct ns_modsig unsigned_ko = {0};
/* signed with sign-file -k: sig_key is the key's SKID, as libkmod prints it */
static const struct ns_modsig debian_skid = {"PKCS#7", "Debian Secure Boot CA",
					     "6C:CE:CE:7E:4C:6C:0D:1F:61:49:F3:DD:27:DF:CC:5C:BB:41:9E:A1", "sha256"};
/* the same signer by issuer and serial (sign-file's default): the serial is not in /proc/keys */
static const struct ns_modsig debian_serial = {"PKCS#7", "Debian Secure Boot CA", "5B:A1:07:33", "sha256"};
/* "O: CN" subject, a serial with its ASN.1 sign byte in the key, not in libkmod's form */
static const struct ns_modsig acme = {"PKCS#7", "Acme DKMS key",
				      "F1:E2:D3:C4:B5:A6:97:88:79:6A:5B:4C:3D:2E:1F:0A:1B:2C:3D", "sha512"};
static const struct ns_modsig by_hand = {"PKCS#7", "Added By Hand",
					 "AA:00:BB:11:CC:22:DD:33:EE:44:FF:55:66:77:88:99:AA:BB:CC:DD", "sha256"};
static const struct ns_modsig revoked = {"PKCS#7", "Revoked Key",
					 "11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11:11", "sha256"};
static const struct ns_modsig stranger = {"PKCS#7", "Someone Else", "01:02:03:04", "sha256"};
static const struct ns_modsig pgp = {"PGP", "Debian Secure Boot CA", "6C:CE:CE:7E", "sha256"};

/* ok and the detail of one judgement on the tree as it is now; the detail must contain want */
static bool judge(const struct ns_modsig *sig, bool want_ok, const char *want, int line)
{
	struct ns_root *root = NULL;
	struct ns_loadpol lp;
	char *detail = NULL;
	bool ok = false, good;
	int r = ns_root_open(fr_base, &root);
	if (r == 0)
		r = ns_loadpol_read(root, &lp);
	if (r == 0) {
		r = ns_loadpol_judge(&lp, sig, FILE_KO, &ok, &detail);
		ns_loadpol_free(&lp);
	}
	ns_root_free(root);
	good = r == 0 && ok == want_ok && detail && (!want || strstr(detail, want));
	if (!good)
		fprintf(stderr, "line %d: r=%d ok=%d (want %d) detail: %s\n  wanted: %s\n", line, r, ok, want_ok,
			detail ? detail : "(null)", want ? want : "-");
	free(detail);
	return good;
}
#define JUDGE(sig, ok, want) CHECK(judge(sig, ok, want, __LINE__))

static void test_debian(void)
{
	debian();
	/* the twins: nothing enforced; unsigned loads, tainting */
	JUDGE(&unsigned_ko, true,
	      "not enforced (module.sig_enforce N, lockdown none): unsigned, loading taints the kernel (E)");
	JUDGE(&stranger, true, "not enforced");
	JUDGE(&debian_skid, true, "a key the kernel trusts ('Debian Secure Boot CA: 6ccece7e");
	/* IMA built in without a policy: Debian's plain machine is not refused */
	fr_mkdirs("sys/kernel/security/ima");
	JUDGE(&unsigned_ko, true, NULL);
}

static void test_sig_enforce(void)
{
	debian();
	fr_put("sys/module/module/parameters/sig_enforce", "Y\n");
	JUDGE(&unsigned_ko, false,
	      "the kernel only loads modules signed by a key it trusts (module.sig_enforce) and " FILE_KO
	      " is unsigned");
	/* the twin: signed by a key the kernel trusts, matched by its key id */
	JUDGE(&debian_skid, true, "a key the kernel trusts");
	JUDGE(&acme, true, "a key the kernel trusts ('Acme Ltd: Acme DKMS key: f1e2d3c4");
	/* a trusted key's name but a serial /proc/keys does not show: not established */
	JUDGE(&debian_serial, false, "a key the kernel trusts is named 'Debian Secure Boot CA' but /proc/keys");
	JUDGE(&stranger, false,
	      "which no key the kernel trusts matches (module.sig_enforce): the kernel will reject it");
	/* keys user space added (its keyring unknown) and revoked keys are not counted */
	JUDGE(&by_hand, false, "no key the kernel trusts matches");
	JUDGE(&revoked, false, "no key the kernel trusts matches");
	JUDGE(&pgp, false, "the kernel takes PKCS#7 module signatures only");
	/* /proc/keys without a trusted keyring (read by a user who sees none): unknown */
	fr_put("proc/keys", "2a3e4c11 I------     1 perm 1f030000     0     0 asymmetri Debian Secure Boot CA: "
			    "6ccece7e4c6c0d1f6149f3dd27dfcc5cbb419ea1: X509.rsa cb419ea1 []\n");
	JUDGE(&debian_skid, false, "the keys the kernel trusts are not known");
	rm("proc/keys");
	JUDGE(&debian_skid, false, "the keys the kernel trusts are not known");
}

static void test_lockdown(void)
{
	debian();
	fr_put("sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
	JUDGE(&unsigned_ko, false, "(lockdown integrity) and " FILE_KO " is unsigned");
	JUDGE(&debian_skid, true, "a key the kernel trusts");
	fr_put("sys/kernel/security/lockdown", "none integrity [confidentiality]\n");
	JUDGE(&stranger, false, "(lockdown confidentiality): the kernel will reject it");
	/* securityfs mounted without the lockdown LSM: no lockdown */
	rm("sys/kernel/security/lockdown");
	JUDGE(&unsigned_ko, true, "lockdown none (no lockdown LSM)");
	/* securityfs not mounted in the tree: lockdown unknown; unsigned is refused as unknown */
	rm("sys/kernel/security/lsm");
	JUDGE(&unsigned_ko, false, "whether the kernel requires signed modules is not known");
	JUDGE(&stranger, false, "whether the kernel requires signed modules is not known");
	/* the twin: what a trusted key signed is taken whatever lockdown is */
	JUDGE(&debian_skid, true, "a key the kernel trusts");
	/* ... and module.sig_enforce Y decides without lockdown */
	fr_put("sys/module/module/parameters/sig_enforce", "Y\n");
	JUDGE(&unsigned_ko, false, "(module.sig_enforce) and");
}

static void test_no_module_signing(void)
{
	debian();
	/* no CONFIG_MODULE_SIG: no sig_enforce parameter, and lockdown asks for no signature */
	rm("sys/module/module/parameters/sig_enforce");
	fr_put("sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
	JUDGE(&unsigned_ko, true, "not enforced (the kernel does not check module signatures)");
	/* a garbled sig_enforce is not "N" */
	fr_put("sys/module/module/parameters/sig_enforce", "1\n");
	fr_put("sys/kernel/security/lockdown", "[none] integrity confidentiality\n");
	JUDGE(&unsigned_ko, false, "module.sig_enforce unknown");
}

static void test_modules_disabled(void)
{
	debian();
	fr_put("proc/sys/kernel/modules_disabled", "1\n");
	JUDGE(&debian_skid, false, "kernel.modules_disabled is 1");
	rm("proc/sys/kernel/modules_disabled");
	JUDGE(&debian_skid, false, "whether module loading is disabled (kernel.modules_disabled) is not known");
}

static void test_ima(void)
{
	debian();
	fr_put("sys/kernel/security/ima/policy",
	       "measure func=MODULE_CHECK\nappraise func=BPRM_CHECK appraise_type=imasig\n");
	JUDGE(&debian_skid, true, NULL); /* twin: measuring modules, appraising something else */
	fr_put("sys/kernel/security/ima/policy",
	       "measure func=MODULE_CHECK\nappraise func=MODULE_CHECK appraise_type=imasig\n");
	JUDGE(&debian_skid, false,
	      "IMA appraises module files ('appraise func=MODULE_CHECK appraise_type=imasig' in the IMA policy)");
	fr_put("proc/cmdline", "root=/dev/sda1 ima_appraise=log\n");
	JUDGE(&debian_skid, true, NULL); /* appraisal that only logs */
	/* appraise_tcb's rules name no hook: modules owned by root too */
	fr_put("proc/cmdline", "root=/dev/sda1\n");
	fr_put("sys/kernel/security/ima/policy", "dont_appraise fsmagic=0x9fa0\nappraise fowner=0\n");
	JUDGE(&debian_skid, false, "'appraise fowner=0'");
	/* the policy not readable back (Debian: no CONFIG_IMA_READ_POLICY): the command line ... */
	rm("sys/kernel/security/ima/policy");
	fr_put("proc/cmdline", "root=/dev/sda1 ima_policy=tcb|secure_boot\n");
	JUDGE(&debian_skid, false, "('ima_policy=tcb|secure_boot' in the kernel command line)");
	fr_put("proc/cmdline", "root=/dev/sda1 ima_policy=tcb\n");
	JUDGE(&debian_skid, true, NULL); /* measurement only */
	/* ... and the policy systemd loads */
	fr_put("etc/ima/ima-policy", "# appraise modules\nappraise func=MODULE_CHECK appraise_type=imasig|modsig\n");
	JUDGE(&debian_skid, false, "in /etc/ima/ima-policy (systemd loads it at boot)");
	/* securityfs's lsm without IMA: no appraisal, whatever the files say */
	fr_put("sys/kernel/security/lsm", "lockdown,capability,yama,apparmor");
	JUDGE(&debian_skid, true, NULL);
}

static void test_loadpin_selinux(void)
{
	debian();
	fr_put("proc/sys/kernel/loadpin/enabled", "1\n");
	JUDGE(&debian_skid, false, "LoadPin is enforcing");
	fr_put("proc/sys/kernel/loadpin/enabled", "0\n");
	JUDGE(&debian_skid, true, NULL);
	/* pinned to a read-only file system: no sysctl, LoadPin listed active */
	rm("proc/sys/kernel/loadpin/enabled");
	fr_put("sys/kernel/security/lsm", "lockdown,capability,loadpin,yama,integrity");
	JUDGE(&debian_skid, false, "LoadPin is enforcing");
	debian();
	fr_put("sys/fs/selinux/enforce", "1");
	JUDGE(&debian_skid, false, "SELinux is enforcing");
	fr_put("sys/fs/selinux/enforce", "0");
	JUDGE(&debian_skid, true, NULL); /* permissive */
	/* every reason is named */
	fr_put("sys/fs/selinux/enforce", "1");
	fr_put("sys/module/module/parameters/sig_enforce", "Y\n");
	JUDGE(&unsigned_ko, false,
	      "is unsigned: sign it with a key the kernel trusts (MOK), or install it for a boot without enforcement; "
	      "SELinux is enforcing");
}

static void test_private_securityfs(void)
{
	/* the live helper: as root it answers (lockdown or ENOENT for a kernel without it);
	 * otherwise mounting is refused and nothing is returned */
	const char *const names[] = {"lockdown", "no-such-file"};
	char *out[2];
	int err[2];
	int r = ns_loadpol_securityfs_private(names, 2, out, err);
	if (geteuid() != 0) {
		CHECK(r == -EPERM);
		CHECK(!out[0] && !out[1]);
	} else if (r == 0) {
		CHECK(err[1] == -ENOENT && !out[1]);
		CHECK(err[0] == -ENOENT || (out[0] && strchr(out[0], '[')));
	}
	free(out[0]);
	free(out[1]);
}

int main(void)
{
	if (!fr_make("loadpolicy"))
		return 1;
	test_debian();
	test_sig_enforce();
	test_lockdown();
	test_no_module_signing();
	test_modules_disabled();
	test_ima();
	test_loadpin_selinux();
	test_private_securityfs();
	return tap_done("loadpolicy");
}
