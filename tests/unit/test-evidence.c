/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The evidence behind two verdicts, each signal on its own: whose NUMA node a PCI function has
 * (forced by its driver, set by someone else, or the firmware's), and what an IRQ affinity
 * write's errno means on each kernel line. Every check below is one signal flipped against a
 * case where all the others say "forced" (or one errno against each kernel).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "act/apply.h"
#include "read/irq.h"
#include "read/module.h"
#include "read/pci.h"
#include "tap.h"

/* The seed case: nvme reads the first memory node, nothing above it has one, the functions on
 * the bus read -1, the kernel is not tainted and the driver can force. */
static struct ns_node_facts seed(void)
{
	static const int bridges[1] = {-1};
	struct ns_node_facts f = {
		.numa_node = 0,
		.first_memory_node = 0,
		.multi_node = true,
		.bus_node = -1,
		.bus_online_node = -1,
		.bridge_nodes = bridges,
		.nbridges = 1,
		.siblings_without = 2,
		.driver_forces = 1,
		.driver = "nvme",
		.driver_basis = "this kernel lacks the fix",
		.tainted = 0,
		.bus = "0000:00",
	};
	return f;
}

static void judge(const struct ns_node_facts *f, int *forced, int *set, int *bus)
{
	char *ev = NULL;
	ns_pci_judge_node(f, forced, set, bus, &ev);
	free(ev);
}

#define VERDICT(f, want_forced, want_set)      \
	do {                                   \
		int _fo, _se, _bu;             \
		judge(&(f), &_fo, &_se, &_bu); \
		CHECK(_fo == (want_forced));   \
		CHECK(_se == (want_set));      \
	} while (0)

static void test_node(void)
{
	struct ns_node_facts f = seed();
	static const int bridge0[1] = {0}, bridge_unread[1] = {NS_NODE_UNREAD};
	int fo, se, bus;

	VERDICT(f, 1, 0);

	/* the bus has a node: the firmware's, not forced */
	f = seed();
	f.bus_node = 0;
	VERDICT(f, 0, 0);
	f.bus_node = 1; /* reads another node than its bus: set since */
	VERDICT(f, 0, 1);
	f.bus_node = NS_NODE_UNREAD;
	VERDICT(f, -1, -1);

	/* a bridge above has a node */
	f = seed();
	f.bridge_nodes = bridge0;
	VERDICT(f, 0, 0);
	/* a bridge whose numa_node could not be read (noted): not "not forced", untold */
	f.bridge_nodes = bridge_unread;
	VERDICT(f, -1, -1);

	/* a function on the bus that could not be read may be one that vouches: untold (issue 36) */
	f = seed();
	f.siblings_unread = 1;
	VERDICT(f, -1, -1);
	f.siblings_vouching = 1; /* one that does vouch decides whatever the unread one reads */
	VERDICT(f, 0, 1);

	/* taint I: by hand */
	f = seed();
	f.tainted = NS_TAINT_FIRMWARE_WORKAROUND | 4096;
	VERDICT(f, 0, 1);
	f.tainted = 4096; /* O alone says nothing about the node */
	VERDICT(f, 1, 0);
	f.tainted = -1; /* unknown taint does not clear it */
	VERDICT(f, 1, 0);

	/* a forcing driver sets the first memory node only */
	f = seed();
	f.numa_node = 1;
	VERDICT(f, 0, 1);

	/* a function not bound to the driver reads the same node: not its doing */
	f = seed();
	f.siblings_vouching = 1;
	VERDICT(f, 0, 1);
	/* functions of the same driver reading it, or any on another node, do not clear it */
	f = seed();
	f.siblings_same_driver = 7;
	f.siblings_elsewhere = 1;
	VERDICT(f, 1, 0);

	/* the driver cannot force / nothing tells (it may) */
	f = seed();
	f.driver_forces = 0;
	VERDICT(f, 0, 1);
	f.driver_forces = -1;
	VERDICT(f, 1, 0);

	/* -1 is never forced; a single-node machine cannot tell */
	f = seed();
	f.numa_node = -1;
	VERDICT(f, 0, 0);
	f = seed();
	f.multi_node = false;
	VERDICT(f, -1, -1);

	/* a bus seen through offline CPUs: a -1 above or beside says it spans */
	f = seed();
	f.bus_node = NS_BUS_ONLINE_ONLY;
	f.bus_online_node = 0;
	judge(&f, &fo, &se, &bus);
	CHECK(fo == 1 && bus == -1);
	f.siblings_without = 0;
	f.bridge_nodes = bridge0;
	judge(&f, &fo, &se, &bus);
	CHECK(fo == 0 && bus == 0);
	f.siblings_unread = 1; /* the one beside that could not be read might read -1 */
	judge(&f, &fo, &se, &bus);
	CHECK(fo == -1 && bus == -1);
}

static void test_driver(void)
{
	struct ns_module stock = {.patched = 0, .out_of_tree = 0}, patched = {.patched = 1, .out_of_tree = 1},
			 oot = {.patched = 0, .out_of_tree = 1};
	char *b = NULL;

#define FORCES(drv, mod, fix, want)                                              \
	do {                                                                     \
		CHECK(ns_pci_driver_forces(drv, mod, fix, "why", &b) == (want)); \
		free(b);                                                         \
		b = NULL;                                                        \
	} while (0)
	FORCES("nvme", &stock, 0, 1);	/* the kernel lacks the fix */
	FORCES("nvme", &stock, 1, 0);	/* the in-tree nvme has it */
	FORCES("nvme", &stock, -1, -1); /* nothing tells */
	FORCES("nvme", &patched, 0, 0); /* numastor's fixed nvme */
	FORCES("nvme", &oot, 1, 1);	/* out of tree without the marker: may be pre-fix */
	FORCES("ahci", &stock, 0, 0);	/* only nvme forces */
	FORCES(NULL, NULL, 0, 0);	/* no driver */
#undef FORCES
}

static void test_errno(void)
{
	int eio = ns_apply_refusal_errno(6, 1), eperm = ns_apply_refusal_errno(6, 12);

	CHECK(eio == EIO);
	CHECK(ns_apply_refusal_errno(5, 10) == EIO);
	CHECK(eperm == EPERM);
	CHECK(ns_apply_refusal_errno(7, 0) == EPERM);
	CHECK(ns_apply_refusal_errno(0, 0) == 0);
	/* below 6.12: EIO is the refusal, EPERM a permission error */
	CHECK_STR(ns_apply_classify(-EIO, eio), "managed");
	CHECK_STR(ns_apply_classify(-EPERM, eio), "permission");
	/* from 6.12: EPERM is the refusal, EIO is not */
	CHECK_STR(ns_apply_classify(-EPERM, eperm), "managed");
	CHECK_STR(ns_apply_classify(-EIO, eperm), "other");
	/* unknown kernel: neither means managed */
	CHECK_STR(ns_apply_classify(-EIO, 0), "other");
	CHECK_STR(ns_apply_classify(-EPERM, 0), "permission");
	CHECK_STR(ns_apply_classify(-EACCES, eio), "permission");
	CHECK_STR(ns_apply_classify(-EBUSY, eio), "transient");
	CHECK_STR(ns_apply_classify(-ENOSPC, eio), "vector-space-full");
}

static void test_settle(void)
{
	struct ns_irq irq = {.managed = 1, .user_settable = -1, .msi = true};

	/* a managed vector is never user-settable */
	ns_irq_settle(&irq);
	CHECK(irq.user_settable == 0 && irq.user_settable_source == NS_SETTABLE_MANAGED);
	/* what the file mode said is kept */
	irq = (struct ns_irq){.managed = -1, .user_settable = 0, .user_settable_source = NS_SETTABLE_FILE_MODE};
	ns_irq_settle(&irq);
	CHECK(irq.managed == -1 && irq.user_settable == 0 && irq.user_settable_source == NS_SETTABLE_FILE_MODE);
	/* nothing known stays unknown */
	irq = (struct ns_irq){.managed = -1, .user_settable = -1};
	ns_irq_settle(&irq);
	CHECK(irq.managed == -1 && irq.user_settable == -1);
	/* driver knowledge: nvme q0 unmanaged and settable, q1 managed and not */
	irq = (struct ns_irq){.managed = -1, .user_settable = -1, .msi = true, .queue_of_ctl = 0};
	ns_irq_guess_managed(&irq, "nvme", 5);
	CHECK(irq.managed == 0 && irq.managed_source == NS_MANAGED_DRIVER && irq.user_settable == 1);
	irq = (struct ns_irq){.managed = -1, .user_settable = -1, .msi = true, .queue_of_ctl = 1};
	ns_irq_guess_managed(&irq, "nvme", 5);
	CHECK(irq.managed == 1 && irq.user_settable == 0);
	/* a driver nothing is measured of: unknown */
	irq = (struct ns_irq){.managed = -1, .user_settable = -1, .msi = true, .queue_of_ctl = -1};
	ns_irq_guess_managed(&irq, "mpt3sas", 4);
	CHECK(irq.managed == -1 && irq.user_settable == -1);
}

/* A function's vectors hold each run of one chip name once, owned by the run's first vector. */
static void test_share_chips(void)
{
	struct ns_irq v[4] = {0};
	const char *names[4] = {"PCI-MSIX-0000:01:00.0", "PCI-MSIX-0000:01:00.0", "IR-PCI-MSIX-0000:01:00.0",
				"IR-PCI-MSIX-0000:01:00.0"};

	for (int i = 0; i < 4; i++)
		v[i].chip = strdup(names[i]);
	v[2].chip[0] = 'I';
	ns_irq_share_chips(v, 4);
	CHECK(!v[0].chip_shared && v[1].chip_shared &&
	      v[1].chip == v[0].chip);					   /* a run of one chip is held by its first */
	CHECK(!v[2].chip_shared && v[2].chip != v[1].chip);		   /* another chip is its own */
	CHECK(v[3].chip == v[2].chip && strcmp(v[3].chip, names[3]) == 0); /* each run its own string */
	ns_irq_share_chips(v, 4);					   /* twice changes nothing */
	CHECK(v[1].chip == v[0].chip && !v[2].chip_shared);		   /* sharing again changes nothing */
	for (int i = 0; i < 4; i++)
		ns_irq_free(&v[i]); /* in index order: ASan sees any double free */
	CHECK(v[3].chip == NULL);   /* freed */
}

int main(void)
{
	test_share_chips();
	test_node();
	test_driver();
	test_errno();
	test_settle();
	return tap_done("evidence");
}
