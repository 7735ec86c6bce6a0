/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CPU isolation (issue 27): the command line as the kernel parses isolcpus=, nohz_full= and
 * irqaffinity=, and cgroup v2 isolated partitions from the root's cpuset.cpus.isolated or, on
 * kernels without it (6.1), from the partitions themselves. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "fakeroot.h"
#include "read/isolation.h"
#include "tap.h"

static char *fmt(const struct ns_cpuset *s)
{
	static char buf[256];
	char *t;
	if (!s->known)
		return "unknown";
	if (ns_cpuset_format(s, &t) < 0)
		return NULL;
	snprintf(buf, sizeof(buf), "%s", t);
	free(t);
	return buf;
}

/* Parse a command line into iso (freed first); the result of the parser. */
static int parse(const char *line, struct ns_isolation *iso, const char **param)
{
	char *raw = NULL;
	int r;

	ns_isolation_free(iso);
	r = ns_isolation_parse_cmdline(line, 64, iso, param, &raw);
	free(raw);
	return r;
}

static void cmdline_forms(void)
{
	struct ns_isolation iso = {0};
	const char *param;

	/* a bare list means domain */
	CHECK(parse("BOOT_IMAGE=/vmlinuz ro isolcpus=2-3 quiet", &iso, &param) == 0);
	CHECK_STR(fmt(&iso.isolcpus), "2-3");
	CHECK(iso.isolcpus_flags == NS_ISO_DOMAIN);
	CHECK(!iso.nohz_full.known && !iso.irqaffinity.known);
	/* flags given: only those (managed_irq alone is not domain) */
	CHECK(parse("isolcpus=managed_irq,8-11", &iso, &param) == 0);
	CHECK(iso.isolcpus_flags == NS_ISO_MANAGED_IRQ);
	CHECK_STR(fmt(&iso.isolcpus), "8-11");
	CHECK(parse("isolcpus=nohz,domain,managed_irq,1,3-5 nohz_full=1,3-5 irqaffinity=0", &iso, &param) == 0);
	CHECK(iso.isolcpus_flags == (NS_ISO_NOHZ | NS_ISO_DOMAIN | NS_ISO_MANAGED_IRQ));
	CHECK_STR(fmt(&iso.isolcpus), "1,3-5");
	CHECK_STR(fmt(&iso.nohz_full), "1,3-5");
	CHECK_STR(fmt(&iso.irqaffinity), "0");
	/* io_queue (Wagner's flag) is taken; an unknown word is skipped, as the kernel skips it */
	CHECK(parse("isolcpus=io_queue,future_flag,4-7", &iso, &param) == 0);
	CHECK(iso.isolcpus_flags == NS_ISO_IO_QUEUE);
	CHECK_STR(fmt(&iso.isolcpus), "4-7");
	/* several isolcpus= isolate the union; the last nohz_full= is the one kept */
	CHECK(parse("isolcpus=1 isolcpus=managed_irq,6 nohz_full=2 nohz_full=3", &iso, &param) == 0);
	CHECK_STR(fmt(&iso.isolcpus), "1,6");
	CHECK(iso.isolcpus_flags == (NS_ISO_DOMAIN | NS_ISO_MANAGED_IRQ));
	CHECK_STR(fmt(&iso.nohz_full), "3");
	/* quotes group and are dropped; what follows "--" is init's */
	CHECK(parse("console=\"ttyS0 115200\" isolcpus=\"2\" -- isolcpus=5", &iso, &param) == 0);
	CHECK_STR(fmt(&iso.isolcpus), "2");
	/* a parameter whose name only starts alike is not it */
	CHECK(parse("xisolcpus=3 nohz_fullx=3", &iso, &param) == 0);
	CHECK(!iso.isolcpus.known && !iso.nohz_full.known);
	/* forms numastor does not read fail closed, naming the parameter */
	CHECK(parse("isolcpus=domain,2-N", &iso, &param) == -EINVAL);
	CHECK(param && strcmp(param, "isolcpus") == 0);
	CHECK(parse("nohz_full=0-7:2/4", &iso, &param) == -EINVAL);
	CHECK(param && strcmp(param, "nohz_full") == 0);
	CHECK(parse("isolcpus=bad-flag!,3", &iso, &param) == -EINVAL);
	CHECK(parse("irqaffinity=0-99999", &iso, &param) == -ERANGE);
	CHECK(param && strcmp(param, "irqaffinity") == 0);
	ns_isolation_free(&iso);
}

static int read_iso(struct ns_root *root, struct ns_isolation *iso, struct ns_notes *notes)
{
	static struct ns_cpuset online, possible, isolated, nohz;
	struct ns_isolation_in in = {&online, &possible, &isolated, &nohz, 64};

	ns_cpuset_parse_list(&online, "0-15");
	ns_cpuset_parse_list(&possible, "0-15");
	ns_cpuset_parse_list(&isolated, "8-9");
	ns_cpuset_parse_list(&nohz, "");
	ns_isolation_free(iso);
	ns_notes_free(notes);
	return ns_isolation_read(root, &in, iso, notes);
}

static void cgroup_forms(struct ns_root *root)
{
	struct ns_isolation iso = {0};
	struct ns_notes notes = {0};
	char cmd[512];

	/* no cgroup v2 hierarchy: no partition can exist */
	fr_put("proc/cmdline", "ro isolcpus=managed_irq,10-11\n");
	CHECK(read_iso(root, &iso, &notes) == 0);
	CHECK(iso.cgroup.known && ns_cpuset_count(&iso.cgroup) == 0);
	CHECK_STR(iso.cgroup_basis, "no-cgroup2");
	/* every source in the union: cpu/isolated 8-9 and isolcpus= 10-11 (managed_irq only) */
	CHECK_STR(fmt(&iso.cpus), "8-11");
	CHECK_STR(fmt(&iso.managed_irq), "10-11");
	CHECK_STR(fmt(&iso.housekeeping), "0-7,12-15");

	/* 6.1: no cpuset.cpus.isolated at the root; partitions walked through partition roots */
	fr_put("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	fr_put("sys/fs/cgroup/cgroup.procs", "1\n");
	fr_put("sys/fs/cgroup/rt/cpuset.cpus.partition", "isolated\n");
	fr_put("sys/fs/cgroup/rt/cpuset.cpus.effective", "14\n");
	fr_put("sys/fs/cgroup/part/cpuset.cpus.partition", "root\n");
	fr_put("sys/fs/cgroup/part/cpuset.cpus.effective", "4-7\n");
	fr_put("sys/fs/cgroup/part/inner/cpuset.cpus.partition", "isolated\n");
	fr_put("sys/fs/cgroup/part/inner/cpuset.cpus.effective", "6-7\n");
	/* a member's children cannot be partitions: not entered */
	fr_put("sys/fs/cgroup/system.slice/cpuset.cpus.partition", "member\n");
	fr_put("sys/fs/cgroup/system.slice/x/cpuset.cpus.partition", "isolated\n");
	fr_put("sys/fs/cgroup/system.slice/x/cpuset.cpus.effective", "1\n");
	/* an invalid partition is none: its CPUs went back to the parent */
	fr_put("sys/fs/cgroup/bad/cpuset.cpus.partition", "isolated invalid (Cpu list in cpuset.cpus not exclusive)\n");
	fr_put("sys/fs/cgroup/bad/cpuset.cpus.effective", "2\n");
	/* a cgroup without cpuset has no partition file */
	fr_mkdirs("sys/fs/cgroup/user.slice");
	CHECK(read_iso(root, &iso, &notes) == 0);
	CHECK_STR(iso.cgroup_basis, "partitions");
	CHECK_STR(fmt(&iso.cgroup), "6-7,14");
	CHECK_STR(fmt(&iso.cpus), "6-11,14");
	/* a partition whose CPUs do not parse: unknown, never a partial set */
	fr_put("sys/fs/cgroup/rt/cpuset.cpus.effective", "14,\n");
	CHECK(read_iso(root, &iso, &notes) == 0);
	CHECK(!iso.cgroup.known && !iso.cpus.known && !iso.housekeeping.known);
	fr_put("sys/fs/cgroup/rt/cpuset.cpus.effective", "14\n");

	/* 6.7 on: the root's file is the answer (the partitions are not walked) */
	fr_put("sys/fs/cgroup/cpuset.cpus.isolated", "12-13\n");
	CHECK(read_iso(root, &iso, &notes) == 0);
	CHECK_STR(iso.cgroup_basis, "cpuset.cpus.isolated");
	CHECK_STR(fmt(&iso.cgroup), "12-13");
	/* it also lists the CPUs isolated at boot (cpu/isolated 8-9 here; 6.12.95 does so with no
	 * partition): those are not a partition's */
	fr_put("sys/fs/cgroup/cpuset.cpus.isolated", "8-9,12-13\n");
	CHECK(read_iso(root, &iso, &notes) == 0);
	CHECK_STR(fmt(&iso.cgroup), "12-13");
	CHECK_STR(fmt(&iso.cpus), "8-13");
	fr_put("sys/fs/cgroup/cpuset.cpus.isolated", "\n");
	CHECK(read_iso(root, &iso, &notes) == 0);
	CHECK(iso.cgroup.known && ns_cpuset_count(&iso.cgroup) == 0);

	/* a command line numastor cannot read: said, and the union unknown */
	fr_put("proc/cmdline", "ro nohz_full=1-N\n");
	CHECK(read_iso(root, &iso, &notes) == 0);
	CHECK(iso.unparsed_param && strcmp(iso.unparsed_param, "nohz_full") == 0);
	CHECK(!iso.cpus.known && notes.n == 1);
	/* no command line (an older capture): the files alone */
	snprintf(cmd, sizeof(cmd), "%s/proc/cmdline", fr_base);
	CHECK(unlink(cmd) == 0);
	CHECK(read_iso(root, &iso, &notes) == 0);
	CHECK(!iso.cmdline_known && iso.cpus.known && notes.n == 0);
	CHECK_STR(fmt(&iso.cpus), "8-9");
	ns_isolation_free(&iso);
	ns_notes_free(&notes);
}

int main(void)
{
	struct ns_root *root = NULL;
	char cmd[128];

	cmdline_forms();
	if (!fr_make("isolation")) {
		CHECK(!"mkdtemp");
		return tap_done("isolation");
	}
	fr_mkdirs("proc");
	CHECK(ns_root_open(fr_base, &root) == 0);
	if (root) {
		cgroup_forms(root);
		ns_root_free(root);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fr_base);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", fr_base);
	return tap_done("isolation");
}
