/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor probe's rules that need no device: the node-gap finding's threshold (more than 15%
 * below the best node), the hypervisor flag read through the root, and the nodes --nodes picks. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fakeroot.h"
#include "base/cpuset.h"
#include "model/system.h"
#include "probe/probe.h"
#include "read/root.h"
#include "tap.h"

static void test_gap(void)
{
	/* the seed's measurement: 165k from node 1 against 315k from node 0 */
	CHECK(ns_probe_node_gap(165000, 315000));
	/* exactly 15% below is not more than 15% below; just past it is */
	CHECK(!ns_probe_node_gap(85000, 100000));
	CHECK(ns_probe_node_gap(84999, 100000));
	CHECK(!ns_probe_node_gap(90000, 100000));
	CHECK(!ns_probe_node_gap(100000, 100000));
	/* nothing read at all: no finding to draw */
	CHECK(!ns_probe_node_gap(0, 0));
	CHECK(ns_probe_node_gap(0, 1000));
}

static int hypervisor(const char *cpuinfo)
{
	struct ns_root *root = NULL;
	int r;
	if (cpuinfo)
		fr_put("proc/cpuinfo", "%s", cpuinfo);
	else {
		char p[4096];
		snprintf(p, sizeof(p), "%s/proc/cpuinfo", fr_base);
		unlink(p);
	}
	if (ns_root_open(fr_base, &root) < 0)
		return -99;
	r = ns_probe_under_hypervisor(root);
	ns_root_free(root);
	return r;
}

static void test_hypervisor(void)
{
	char cmd[128];

	if (!fr_make("probe")) {
		CHECK(!"fake root");
		return;
	}
	CHECK(hypervisor("processor\t: 0\nflags\t\t: fpu vme sse2 hypervisor lahf_lm\n\nprocessor\t: 1\n") == 1);
	CHECK(hypervisor("processor\t: 0\nflags\t\t: fpu vme sse2 lahf_lm\n") == 0);
	/* the word elsewhere is not the flag */
	CHECK(hypervisor("model name\t: hypervisor-ready CPU\nflags\t\t: fpu sse2\n") == 0);
	CHECK(hypervisor("flags\t\t: fpu hypervisorx\n") == 0);
	CHECK(hypervisor(NULL) == -1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fr_base);
	if (system(cmd) != 0)
		CHECK(!"cleanup");
}

/* probe --nodes: the nodes named, each with online CPUs, or every node that has them */
static void test_pick_nodes(void)
{
	struct ns_node n[3] = {{.id = 0}, {.id = 1}, {.id = 3}}; /* node 1: memory only */
	struct ns_system sys = {.machine = {.nodes = n, .nnodes = 3}};
	struct ns_cpuset nodes = {0};
	char *s = NULL;
	int missing = -1;

	ns_cpuset_parse_list(&n[0].cpus, "0-3");
	ns_cpuset_parse_list(&n[1].cpus, "");
	ns_cpuset_parse_list(&n[2].cpus, "4-7");
	CHECK(ns_probe_pick_nodes(&sys, NULL, &nodes, &missing) == 0);
	CHECK(ns_cpuset_format(&nodes, &s) == 0);
	CHECK_STR(s, "0,3"); /* the CPU-less node is left out */
	free(s);
	ns_cpuset_clear(&nodes);
	CHECK(ns_probe_pick_nodes(&sys, "3", &nodes, &missing) == 0);
	CHECK(ns_cpuset_count(&nodes) == 1 && ns_cpuset_first(&nodes) == 3);
	ns_cpuset_clear(&nodes);
	CHECK(ns_probe_pick_nodes(&sys, "0-1", &nodes, &missing) == -ENOENT);
	CHECK(missing == 1); /* named, but nothing to run on */
	ns_cpuset_clear(&nodes);
	missing = -1;
	CHECK(ns_probe_pick_nodes(&sys, "2", &nodes, &missing) == -ENOENT && missing == 2); /* no such node */
	ns_cpuset_clear(&nodes);
	CHECK(ns_probe_pick_nodes(&sys, "x", &nodes, &missing) == -EINVAL);
	ns_cpuset_clear(&nodes);
	CHECK(ns_probe_pick_nodes(&sys, "", &nodes, &missing) == -EINVAL);
	ns_cpuset_clear(&nodes);
	CHECK(ns_probe_pick_nodes(&sys, "2000", &nodes, &missing) == -EINVAL); /* past 1023 */
	ns_cpuset_clear(&nodes);
	for (int i = 0; i < 3; i++)
		ns_cpuset_clear(&n[i].cpus);
}

int main(void)
{
	test_gap();
	test_hypervisor();
	test_pick_nodes();
	return tap_done("probe");
}
