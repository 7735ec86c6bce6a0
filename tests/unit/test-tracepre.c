/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numastor trace's checks before it loads anything (lib/trace/tracebpf.h's preflight), through a
 * root of the test's own making: a kernel without sys/kernel/btf/vmlinux is refused as "no BTF";
 * lockdown's confidentiality mode (the bracketed word of sys/kernel/security/lockdown) is refused,
 * its integrity mode and none are not, nor a kernel without the lockdown file. A build without BPF
 * refuses everything as "built without BPF support".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "read/root.h"
#include "tap.h"
#include "trace/tracebpf.h"

static char base[] = "/tmp/numastor-tracepre.XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	for (slash = strchr(path + strlen(base) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static void cleanup(void)
{
	static const char *const made[] = {"sys/kernel/security/lockdown",
					   "sys/kernel/security",
					   "sys/kernel/btf/vmlinux",
					   "sys/kernel/btf",
					   "sys/kernel",
					   "sys/devices/system/cpu/online",
					   "sys/devices/system/cpu",
					   "sys/devices/system",
					   "sys/devices",
					   "sys",
					   ""};
	char path[512];

	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", base, made[i]);
		if (unlink(path))
			rmdir(path);
	}
}

static int preflight(enum ns_trace_why *why, char *reason, size_t len)
{
	struct ns_root *root = NULL;
	int r;

	if (ns_root_open(base, &root))
		abort();
	r = ns_trace_bpf_preflight(root, why, reason, len);
	ns_root_free(root);
	return r;
}

int main(void)
{
	enum ns_trace_why why;
	char reason[320];

	if (!mkdtemp(base))
		return 1;
	put("sys/devices/system/cpu/online", "0-3\n");
	if (!NUMASTOR_HAVE_BPF) {
		CHECK(preflight(&why, reason, sizeof(reason)) == -EOPNOTSUPP);
		CHECK(why == NS_TRACE_NO_SUPPORT && strstr(reason, "without BPF support"));
		cleanup();
		return tap_done("tracepre");
	}
	/* no BTF */
	CHECK(preflight(&why, reason, sizeof(reason)) == -ENOENT);
	CHECK(why == NS_TRACE_NO_BTF && strstr(reason, "no BTF"));
	/* BTF, no lockdown file (a kernel without the LSM): goes on */
	put("sys/kernel/btf/vmlinux", "BTF");
	CHECK(preflight(&why, reason, sizeof(reason)) == 0 && why == NS_TRACE_OK);
	/* lockdown modes, the kernel's own format: the mode in force bracketed */
	put("sys/kernel/security/lockdown", "[none] integrity confidentiality\n");
	CHECK(preflight(&why, reason, sizeof(reason)) == 0 && why == NS_TRACE_OK);
	put("sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
	CHECK(preflight(&why, reason, sizeof(reason)) == 0 && why == NS_TRACE_OK);
	put("sys/kernel/security/lockdown", "none integrity [confidentiality]\n");
	CHECK(preflight(&why, reason, sizeof(reason)) == -EPERM);
	CHECK(why == NS_TRACE_LOCKDOWN && strstr(reason, "lockdown"));
	cleanup();
	return tap_done("tracepre");
}
