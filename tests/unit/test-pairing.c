/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Queues and vectors by their CPU lists (issue 33 item 4, lib/read/pci.h): whether a vector may
 * serve a queue's CPUs (only a managed vector's affinity tells), the managed vector holding a
 * queue's CPUs most tightly (none when several alike), which pairings are by place, and the
 * vectors named for queues a disk does not have (7.x: fewer groups than vectors). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/cpuset.h"
#include "base/notes.h"
#include "read/irq.h"
#include "read/pci.h"
#include "tap.h"

static struct ns_cpuset set(const char *list)
{
	struct ns_cpuset s = {0};
	if (list && ns_cpuset_parse_list(&s, list) < 0)
		abort();
	return s;
}

static struct ns_irq vec(int n, const char *name, const char *aff, int managed, int hw_queue)
{
	struct ns_irq v = {.irq = n, .msi = true, .managed = managed, .user_settable = -1, .hw_queue = hw_queue};
	v.name = strdup(name);
	v.affinity = set(aff);
	return v;
}

static void test_holds(void)
{
	struct ns_irq m = vec(1, "nvme0q1", "0-3", 1, 0), u = vec(2, "nvme0q2", "0-3", 0, 1),
		      k = vec(3, "nvme0q3", "0-3", -1, 2);
	struct ns_cpuset in = set("1-2"), all = set("0-3"), out = set("3-4"), none = set(NULL), empty = set("");

	CHECK(ns_irq_holds_cpus(&m, &in));
	CHECK(ns_irq_holds_cpus(&m, &all));   /* equal: the spread's own shape */
	CHECK(!ns_irq_holds_cpus(&m, &out));  /* CPU 4 is outside a managed mask */
	CHECK(ns_irq_holds_cpus(&u, &out));   /* an unmanaged affinity is anyone's to set */
	CHECK(ns_irq_holds_cpus(&k, &out));   /* managed-ness unknown: nothing to tell by */
	CHECK(ns_irq_holds_cpus(&m, &none));  /* cpu_list unread */
	CHECK(ns_irq_holds_cpus(&m, &empty)); /* a queue serving no CPU (isolcpus, 6.9+) */
	CHECK(ns_irq_holds_cpus(NULL, &out));
	ns_irq_free(&m);
	ns_irq_free(&u);
	ns_irq_free(&k);
	ns_cpuset_clear(&in);
	ns_cpuset_clear(&all);
	ns_cpuset_clear(&out);
	ns_cpuset_clear(&empty);
}

static void test_by_cpus(void)
{
	/* 7.2's shape: 4 vectors of one CPU each, 2 more with every CPU (irq_default_affinity), an
	 * unmanaged admin vector on CPU 2 alone */
	struct ns_irq v[] = {vec(10, "nvme0q0", "2", 0, -1), vec(11, "nvme0q1", "0", 1, 0),
			     vec(12, "nvme0q2", "1", 1, 1),  vec(13, "nvme0q3", "2", 1, 2),
			     vec(14, "nvme0q4", "3", 1, 3),  vec(15, "nvme0q5", "0-3", 1, 4),
			     vec(16, "nvme0q6", "0-3", 1, 5)};
	struct ns_pci pci = {.irqs = v, .nirqs = sizeof(v) / sizeof(v[0]), .address = "0000:80:04.0"};
	struct ns_cpuset c2 = set("2"), c01 = set("0-1"), c9 = set("9"), empty = set("");
	bool amb = true;

	CHECK(ns_pci_irq_by_cpus(&pci, &c2, &amb) == &v[3] && !amb); /* the tightest, not the admin's */
	CHECK(ns_pci_irq_by_cpus(&pci, &c01, &amb) == NULL && amb);  /* q5 and q6 alike */
	CHECK(ns_pci_irq_by_cpus(&pci, &c9, &amb) == NULL && !amb);  /* none holds CPU 9 */
	CHECK(ns_pci_irq_by_cpus(&pci, &empty, NULL) == NULL);

	/* the disk registered queues 1 and 5 only: the 4 others named serve none, noted once */
	struct ns_notes notes = {0};
	int listed[] = {5, 1};
	CHECK(ns_pci_unpair_absent(&pci, "nvme0n1", listed, 2, &notes) == 4);
	CHECK(v[0].hw_queue == -1 && v[1].hw_queue == -1 && v[2].hw_queue == 1 && v[3].hw_queue == -1);
	CHECK(v[4].hw_queue == -1 && v[5].hw_queue == -1 && v[6].hw_queue == 5);
	CHECK(notes.n == 1);
	CHECK(notes.n == 1 && strstr(notes.v[0].message, "irqs 11, 13-15") &&
	      strstr(notes.v[0].message, "hardware queues 0,2-4") && strstr(notes.v[0].message, "nvme0n1 does not"));
	CHECK(ns_pci_unpair_absent(&pci, "nvme0n1", listed, 2, &notes) == 0 && notes.n == 1); /* once */
	/* a disk whose queues are all there: nothing unpaired, no note (today's shape) */
	int all[] = {1, 5};
	CHECK(ns_pci_unpair_absent(&pci, "nvme0n2", all, 2, &notes) == 0 && notes.n == 1);
	ns_notes_free(&notes);
	for (size_t i = 0; i < pci.nirqs; i++)
		ns_irq_free(&v[i]);
	ns_cpuset_clear(&c2);
	ns_cpuset_clear(&c01);
	ns_cpuset_clear(&c9);
	ns_cpuset_clear(&empty);
}

static void test_by_order(void)
{
	struct ns_irq a = vec(1, "virtio2-request", "0", 1, 0), b = vec(2, "virtio2-request.3", "0", 1, 0),
		      c = vec(3, "virtio1-req.0", "0", 1, 0), d = vec(4, "nvme0q1", "0", 1, 0),
		      e = vec(5, "virtio2-requests", "0", 1, 0);

	CHECK(ns_irq_queue_by_order(&a));
	CHECK(ns_irq_queue_by_order(&b));
	CHECK(!ns_irq_queue_by_order(&c)); /* virtio-blk's req.K: its number is the queue's */
	CHECK(!ns_irq_queue_by_order(&d));
	CHECK(!ns_irq_queue_by_order(&e));
	CHECK(!ns_irq_queue_by_order(NULL));
	ns_irq_free(&a);
	ns_irq_free(&b);
	ns_irq_free(&c);
	ns_irq_free(&d);
	ns_irq_free(&e);
}

int main(void)
{
	test_holds();
	test_by_cpus();
	test_by_order();
	return tap_done("pairing");
}
