/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The machine reader's numbers (issue 11): node directories named beyond MAX_NUMNODES are
 * refused by their name before anything is sized by them (node4294967297 is not node 1,
 * node1000000 costs nothing), CPU lists are held to kernel_max + 1 and the possible set. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fakeroot.h"
#include "read/machine.h"
#include "base/number.h"
#include "tap.h"

static bool noted(const struct ns_notes *notes, const char *field, const char *text)
{
	for (size_t i = 0; i < notes->n; i++)
		if (strcmp(notes->v[i].field, field) == 0 && strstr(notes->v[i].message, text))
			return true;
	return false;
}

static void node(const char *name, const char *cpulist)
{
	char p[128];
	snprintf(p, sizeof(p), "sys/devices/system/node/%s/cpulist", name);
	fr_put(p, "%s\n", cpulist);
	snprintf(p, sizeof(p), "sys/devices/system/node/%s/distance", name);
	fr_put(p, "10 21\n");
	snprintf(p, sizeof(p), "sys/devices/system/node/%s/meminfo", name);
	fr_put(p, "Node 0 MemTotal:       16384 kB\nNode 0 MemFree:         1024 kB\n");
}

/* The file rel holding exactly len bytes (NULs too). */
static void put_bytes(const char *rel, const char *data, size_t len)
{
	char p[4096];
	int fd;

	fr_put(rel, "%s", "");
	snprintf(p, sizeof(p), "%s/%s", fr_base, rel);
	fd = open(p, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, data, len) == (ssize_t)len);
	if (fd >= 0)
		close(fd);
}

#define PUT_BYTES(rel, lit) put_bytes(rel, lit, sizeof(lit) - 1)

int main(void)
{
	struct ns_root *root = NULL;
	struct ns_machine m;
	struct ns_notes notes = {0};
	struct ns_cpuset s = {0};
	struct timespec t0, t1;
	char cmd[128];

	if (!fr_make("machine")) {
		CHECK(!"mkdtemp");
		return tap_done("machine");
	}
	fr_put("proc/sys/kernel/osrelease", "6.12.43+deb13-amd64\n");
	fr_put("proc/sys/kernel/tainted", "0\n");
	fr_put("sys/devices/system/cpu/kernel_max", "7\n");
	fr_put("sys/devices/system/cpu/possible", "0-5\n");
	fr_put("sys/devices/system/cpu/online", "0-5\n");
	/* a CPU beyond the possible set: the list fails closed, it is not cut to 0-3 */
	fr_put("sys/devices/system/cpu/isolated", "0-3,6\n");
	fr_put("sys/devices/system/cpu/nohz_full", "(null)\n");
	node("node0", "0-2");
	node("node1", "3-5");
	node("node1000000", "");
	node("node4294967297", "3-5");
	node("node01", "3-5");
	fr_mkdirs("proc");
	CHECK(ns_root_open(fr_base, &root) == 0);
	if (!root)
		return tap_done("machine");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 < 0.5);
	CHECK(m.cpu_limit == 8);
	CHECK(m.nnodes == 2);
	CHECK(m.nnodes == 2 && m.nodes[0].id == 0 && m.nodes[1].id == 1);
	CHECK(noted(&notes, "nodes", "node1000000: node id beyond"));
	CHECK(noted(&notes, "nodes", "node4294967297: node id beyond"));
	CHECK(noted(&notes, "nodes", "node01 is not a nodeN name"));
	CHECK(m.nnodes >= 1 && m.nodes[0].memory_bytes == 16384LL * 1024);
	CHECK(m.online.known && ns_cpuset_count(&m.online) == 6);
	CHECK(!m.isolated.known && ns_cpuset_count(&m.isolated) == 0);
	CHECK(noted(&notes, "isolated_cpus", "'0-3,6'"));
	CHECK(m.nohz_full.known && ns_cpuset_count(&m.nohz_full) == 0);
	/* every list read from this machine: below kernel_max + 1 and within the possible set */
	CHECK(ns_machine_parse_cpus(&m, &s, "0-5", false) == 0 && ns_cpuset_count(&s) == 6);
	CHECK(ns_machine_parse_cpus(&m, &s, "5-6", false) == -ERANGE && !s.known);
	CHECK(ns_machine_parse_cpus(&m, &s, "8", false) == -ERANGE && !s.known);
	CHECK(ns_machine_parse_cpus(&m, &s, "3f", true) == 0 && ns_cpuset_count(&s) == 6);
	CHECK(ns_machine_parse_cpus(&m, &s, "40", true) == -ERANGE && !s.known);
	CHECK(ns_machine_parse_cpus(&m, &s, "100", true) == -ERANGE && !s.known);
	CHECK(ns_machine_parse_cpus(&m, &s, "0-1048575", false) == -ERANGE && s.nwords == 0);
	CHECK(ns_machine_cpu_map_complete(&m));
	ns_machine_free(&m);
	ns_notes_free(&notes);
	/* node 1's cpulist empty while its CPUs are online: the map is partial, not "on no node" */
	node("node1", "");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(!ns_machine_cpu_map_complete(&m));
	CHECK(noted(&notes, "nodes.cpus", "online CPU 3 is on no node's cpulist"));
	ns_machine_free(&m);
	ns_notes_free(&notes);
	/* a CPU on two nodes' cpulists: partial too */
	node("node1", "2-5");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(!ns_machine_cpu_map_complete(&m));
	CHECK(noted(&notes, "nodes.cpus", "CPU 2 is on the cpulists of node 0 and node 1"));
	/* the CPUs both claim are on neither for certain; both nodes overlap (issue 17) */
	CHECK(ns_machine_cpu_node(&m, 2) == -1 && ns_machine_cpu_node(&m, 3) == 1);
	CHECK(ns_machine_cpu_node(&m, 1) == 0 && ns_machine_cpu_node(&m, 4) == 1);
	CHECK(m.overlapping_nodes.known && ns_cpuset_count(&m.overlapping_nodes) == 2);
	CHECK(ns_machine_node_overlaps(&m, 0) && ns_machine_node_overlaps(&m, 1) && !ns_machine_node_overlaps(&m, 2));
	CHECK(ns_cpuset_count(&m.overlapping_cpus) == 1 && ns_cpuset_test(&m.overlapping_cpus, 2));
	ns_machine_free(&m);
	ns_notes_free(&notes);
	/* a node whose cpulist does not parse: partial, its CPUs unknown */
	node("node1", "3-5,zz");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(!ns_machine_cpu_map_complete(&m) && m.nnodes == 2 && !m.nodes[1].cpus.known);
	ns_machine_free(&m);
	ns_notes_free(&notes);
	/* an empty possible list is not the machine's: noted, and online stands in for it */
	node("node1", "3-5");
	fr_put("sys/devices/system/cpu/possible", "%s", "");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(noted(&notes, "possible_cpus", "possible is empty"));
	CHECK(m.possible.known && ns_cpuset_count(&m.possible) == 6 && m.online.known);
	CHECK(m.nnodes == 2 && m.nodes[1].cpus.known && ns_machine_cpu_map_complete(&m));
	CHECK(m.overlapping_nodes.known && ns_cpuset_count(&m.overlapping_nodes) == 0);
	ns_machine_free(&m);
	ns_notes_free(&notes);
	/* issue 17: a 3.x sysfs has only the mask form cpumap: read it, and say so */
	fr_put("sys/devices/system/cpu/possible", "0-5\n");
	snprintf(cmd, sizeof(cmd), "%s/sys/devices/system/node/node1/cpulist", fr_base);
	CHECK(unlink(cmd) == 0);
	fr_put("sys/devices/system/node/node1/cpumap", "00000000,00000038\n");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(m.nnodes == 2 && m.nodes[1].cpus.known && ns_cpuset_count(&m.nodes[1].cpus) == 3);
	CHECK(ns_cpuset_test(&m.nodes[1].cpus, 3) && ns_cpuset_test(&m.nodes[1].cpus, 5));
	CHECK(noted(&notes, "nodes.cpus", "read its mask form cpumap for nodes 1"));
	CHECK(ns_machine_cpu_map_complete(&m) && ns_machine_multi_node(&m));
	ns_machine_free(&m);
	ns_notes_free(&notes);
	/* no CPU file for any node: no node lists, no multi-node; node/has_cpu (else online) says */
	snprintf(cmd, sizeof(cmd), "%s/sys/devices/system/node/node1/cpumap", fr_base);
	CHECK(unlink(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "%s/sys/devices/system/node/node0/cpulist", fr_base);
	CHECK(unlink(cmd) == 0);
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(!m.nodes[0].cpus.known && !m.nodes[1].cpus.known && !ns_machine_multi_node(&m));
	CHECK(!m.overlapping_nodes.known);
	ns_machine_free(&m);
	ns_notes_free(&notes);
	fr_put("sys/devices/system/node/online", "0-1\n");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(m.online_nodes.known && ns_machine_multi_node(&m));
	ns_machine_free(&m);
	ns_notes_free(&notes);
	fr_put("sys/devices/system/node/has_cpu", "1\n");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(m.cpu_nodes.known && !ns_machine_multi_node(&m)); /* node 0: memory only */
	ns_machine_free(&m);
	ns_notes_free(&notes);
	fr_put("sys/devices/system/node/has_cpu", "0-1\n");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(ns_machine_multi_node(&m));
	ns_machine_free(&m);
	ns_notes_free(&notes);
	/* issue 27: a command-line isolation list numastor does not read ("N") is an exclusion input
	 * fix must refuse on, like a garbled cpu/isolated; one it reads joins the isolated CPUs */
	fr_put("sys/devices/system/cpu/isolated", "\n");
	fr_put("proc/cmdline", "ro quiet nohz_full=1-N\n");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(m.nunparsed == 1 && m.nunparsed && strcmp(m.unparsed[0].field, "isolation.nohz_full") == 0);
	CHECK(m.nunparsed && strcmp(m.unparsed[0].path, "proc/cmdline") == 0);
	ns_machine_free(&m);
	ns_notes_free(&notes);
	fr_put("proc/cmdline", "ro quiet isolcpus=managed_irq,1\n");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(m.nunparsed == 0 && ns_cpuset_test(&m.isolation.cpus, 1) &&
	      !ns_cpuset_test(&m.isolation.housekeeping, 1));
	ns_machine_free(&m);
	ns_notes_free(&notes);
	/* issue 28: the daemon's environ split on its NULs, not on spaces: another variable's value
	 * holding " IRQBALANCE_BANNED_CPULIST=4-5" is no entry; the real one bans CPUs 0-1 */
	fr_put("proc/cmdline", "ro quiet\n");
	fr_put("proc/812/comm", "irqbalance\n");
	fr_put("proc/812/cmdline", "%s", "");
	PUT_BYTES("proc/812/environ", "LANG=C\0X=a IRQBALANCE_BANNED_CPULIST=4-5\0IRQBALANCE_BANNED_CPULIST=0-1\0");
	fr_put("etc/default/irqbalance", "IRQBALANCE_BANNED_CPULIST=3\n");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(m.irqbalance.running == 1 && m.nunparsed == 0 && m.irqbalance.banned_cpus.known);
	CHECK(ns_cpuset_count(&m.irqbalance.banned_cpus) == 2 && ns_cpuset_test(&m.irqbalance.banned_cpus, 0) &&
	      ns_cpuset_test(&m.irqbalance.banned_cpus, 1));
	ns_machine_free(&m);
	ns_notes_free(&notes);
	/* the environ without either: the options file, read as shell and systemd read it; its
	 * line numastor cannot be sure of is recorded with the line's number, and fix refuses */
	PUT_BYTES("proc/812/environ", "LANG=C\0");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(m.nunparsed == 0 && ns_cpuset_count(&m.irqbalance.banned_cpus) == 1 &&
	      ns_cpuset_test(&m.irqbalance.banned_cpus, 3));
	ns_machine_free(&m);
	ns_notes_free(&notes);
	fr_put("etc/default/irqbalance", "# ours\nexport IRQBALANCE_BANNED_CPULIST=0-3\n");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(m.nunparsed == 1 && !m.irqbalance.banned_cpus.known);
	CHECK(m.nunparsed && strcmp(m.unparsed[0].field, "irqbalance.options") == 0 &&
	      strcmp(m.unparsed[0].path, "etc/default/irqbalance:2") == 0 && m.unparsed[0].raw &&
	      strcmp(m.unparsed[0].raw, "export IRQBALANCE_BANNED_CPULIST=0-3") == 0);
	CHECK(noted(&notes, "irqbalance.banned_cpus", "export: a shell assigns it"));
	ns_machine_free(&m);
	ns_notes_free(&notes);
	/* an options file numastor cannot read (a NUL byte: systemd stops there, a shell does not) */
	PUT_BYTES("etc/default/irqbalance", "IRQBALANCE_BANNED_CPULIST=0-3\0\nIRQBALANCE_BANNED_CPULIST=1\n");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(m.nunparsed == 1 && m.nunparsed && strcmp(m.unparsed[0].field, "irqbalance.options") == 0 &&
	      !m.unparsed[0].raw && m.unparsed[0].err == -EBADMSG && !m.irqbalance.banned_cpus.known);
	ns_machine_free(&m);
	ns_notes_free(&notes);
	/* irqbalance 1.9 reads the mask first; a value that does not parse names its variable */
	fr_put("etc/default/irqbalance", "IRQBALANCE_BANNED_CPULIST=1\nIRQBALANCE_BANNED_CPUS=0,,1\n");
	CHECK(ns_machine_read(root, &m, &notes) == 0);
	CHECK(m.nunparsed == 1 && m.nunparsed && strcmp(m.unparsed[0].field, "irqbalance.banned_cpus_mask") == 0 &&
	      strcmp(m.unparsed[0].path, "etc/default/irqbalance") == 0);
	ns_machine_free(&m);
	ns_notes_free(&notes);
	ns_root_free(root);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fr_base);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", fr_base);
	return tap_done("machine");
}
