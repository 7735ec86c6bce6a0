/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A PCI function: identity, driver, node (and whether a driver forced it), local CPUs, IRQs. */
#ifndef NUMASTOR_PCI_H
#define NUMASTOR_PCI_H

#include <stdbool.h>
#include <stddef.h>

#include "base/cpuset.h"
#include "read/irq.h"
#include "read/machine.h"
#include "read/module.h"
#include "base/notes.h"
#include "read/root.h"

#define NS_NODE_UNREAD (-2) /* numa_node could not be read */
/* A root bus whose cpulistaffinity lists exactly the online CPUs, all on one node, while CPUs
 * of other nodes are offline: a node-less bus shows cpu_online_mask, so it spans every node or
 * sits on that one, and the functions on it tell which. */
#define NS_BUS_ONLINE_ONLY (-3)

/*
 * What says where a function's node came from. The PCI core gives every function its root
 * bus's node; a node nothing above the function has was set later: by a driver that forces
 * it (nvme-pci before dad651b2a44e sets the first memory node), or by someone else (a write
 * to numa_node, which taints the kernel 'I'; the hypervisor's bus driver; a driver swapped
 * out since). Only the first is "forced".
 */
struct ns_node_facts {
	int numa_node, first_memory_node;
	bool multi_node;
	bool node_overlaps;  /* numa_node is a node whose CPUs another node claims too */
	int bus_node;	     /* -1 spans, >= 0, NS_NODE_UNREAD, NS_BUS_ONLINE_ONLY */
	int bus_online_node; /* with NS_BUS_ONLINE_ONLY: the node of the online CPUs */
	const int *bridge_nodes;
	size_t nbridges;
	unsigned siblings_without;     /* other functions on the root bus reading -1 */
	unsigned siblings_same_driver; /* reading this node, bound to the same driver */
	unsigned siblings_vouching;    /* reading this node, of another driver or none */
	unsigned siblings_elsewhere;   /* reading another node: set by something else, no bearing */
	unsigned siblings_unread;      /* whose node or driver could not be read (noted), or 1 when the
					* bus could not be listed */
	int driver_forces;	       /* 1 can force, 0 cannot, -1 nothing tells (it may) */
	const char *driver, *driver_basis;
	long long tainted; /* -1 unknown */
	const char *bus;   /* "0000:00" */
	bool hyperv_vpci;  /* the root bus hangs under a VMBus device: pci-hyperv gives the host's node */
};
/* The verdict: *forced and *set each 1, 0 or -1, *evidence why (allocated; NULL when none). */
void ns_pci_judge_node(const struct ns_node_facts *f, int *forced, int *set, int *bus_node, char **evidence);
/* Can the loaded driver force a node? From its name, its module (numastor's fix marker, out of
 * tree) and whether the kernel has the nvme fix (fix_in_kernel 1/0/-1, fix_basis why). */
int ns_pci_driver_forces(const char *driver, const struct ns_module *mod, int fix_in_kernel, const char *fix_basis,
			 char **basis);

struct ns_pci {
	char *address; /* "0000:00:04.0" */
	char *syspath; /* "sys/devices/pci0000:00/0000:00:04.0" */
	char *vendor, *device, *class_code, *driver;
	const struct ns_module *module; /* borrowed from ns_modules; NULL without a driver */
	int numa_node;			/* as read: -1 none, NS_NODE_UNREAD unknown */
	struct ns_cpuset local_cpus;
	int bus_node;	   /* root bus node from cpulistaffinity: -1 spans nodes, NS_NODE_UNREAD */
	int *bridge_nodes; /* numa_node of each bridge above, top first */
	size_t nbridges;
	int virtfn; /* 1 an SR-IOV virtual function (it has a physfn link), 0 not, -1 unread (noted) */
	int forced; /* 1 a driver forced the node, 0 not, -1 cannot tell */
	char *forced_evidence;
	int node_set; /* 1 the node was set by someone other than the firmware and a forcing driver */
	char *node_set_evidence;
	struct ns_node_facts facts; /* what the verdict rests on */
	char *driver_basis;
	char *bus_name; /* the root bus, "0000:00" */
	struct ns_irq *irqs;
	size_t nirqs;
};

/*
 * What the functions on one root bus read of one another (each other function's node and
 * driver, for the forcing verdict), kept across ns_pci_read calls so that a bus of N functions
 * costs N reads of each, not N x N. Owned by whoever reads the functions (the system); a NULL
 * one reads them for each function.
 */
struct ns_pci_buses;
struct ns_pci_buses *ns_pci_buses_new(void);
void ns_pci_buses_free(struct ns_pci_buses *buses);
int ns_pci_read(struct ns_root *root, const struct ns_machine *m, struct ns_modules *mods, struct ns_pci_buses *buses,
		const char *syspath, struct ns_pci *pci, struct ns_notes *notes);
void ns_pci_free(struct ns_pci *pci);
/* Judge the node again with the kernel's nvme fix presence as the system knows it (the module
 * build's manifest); ns_pci_read judges by the kernel version alone. */
void ns_pci_rejudge(struct ns_pci *pci, int fix_in_kernel, const char *fix_basis);
/* Is sysfs directory path a PCI function (its subsystem link ends in "/pci")? */
bool ns_pci_is_function(struct ns_root *root, const char *path);
/* The IRQ of this function serving hctx q, or NULL. */
const struct ns_irq *ns_pci_irq_for_queue(const struct ns_pci *pci, int q);

/*
 * Queues and vectors by their CPU lists. blk_mq_map_hw_queues() gives hardware queue q the CPUs of
 * its vector's spread mask (pci_irq_get_affinity: the managed vector's affinity) that no later
 * queue's mask took, so a queue's CPUs lie within its vector's affinity. From 7.x (group_cpus_evenly
 * returning fewer groups than vectors, nr_masks) the vectors past the groups keep the default
 * affinity and their queues may take every CPU of the earlier ones: the count of managed vectors
 * need not be the count of queues, and a queue no CPU maps to is not registered (no mq/N).
 */
/* May irq serve a queue of CPUs cpus? True unless irq is managed, both sets are known and cpus (not
 * empty) has a CPU outside irq's affinity: an unmanaged vector's affinity is anyone's to set. */
bool ns_irq_holds_cpus(const struct ns_irq *irq, const struct ns_cpuset *cpus);
/* The managed vector whose affinity holds cpus most tightly, or NULL when none does or several do
 * alike (then *ambiguous is set, when ambiguous is not NULL). */
const struct ns_irq *ns_pci_irq_by_cpus(const struct ns_pci *pci, const struct ns_cpuset *cpus, bool *ambiguous);
/* Was irq given its queue by its place among vectors of one name (virtio-scsi's "request"), not by a
 * number in its name? Such a pairing yields to the CPU lists. */
bool ns_irq_queue_by_order(const struct ns_irq *irq);
/* The vectors named for a queue (nvmeXqN, virtioN-req.K) that disk does not have (listed: the mq/
 * indices read, n of them) serve no queue: unpaired, and one note says which. Returns how many. */
size_t ns_pci_unpair_absent(struct ns_pci *pci, const char *disk, const int *listed, size_t n, struct ns_notes *notes);

#endif
