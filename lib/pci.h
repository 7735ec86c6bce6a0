/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A PCI function: identity, driver, node (and whether a driver forced it), local CPUs, IRQs. */
#ifndef NUMASTOR_PCI_H
#define NUMASTOR_PCI_H

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"
#include "irq.h"
#include "machine.h"
#include "module.h"
#include "notes.h"
#include "root.h"

#define NS_NODE_UNREAD (-2) /* numa_node could not be read */

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
	int forced; /* 1 a driver forced the node, 0 not, -1 cannot tell */
	char *forced_evidence;
	struct ns_irq *irqs;
	size_t nirqs;
};

int ns_pci_read(struct ns_root *root, const struct ns_machine *m, struct ns_modules *mods, const char *syspath,
		struct ns_pci *pci, struct ns_notes *notes);
void ns_pci_free(struct ns_pci *pci);
/* Is sysfs directory path a PCI function (its subsystem link ends in "/pci")? */
bool ns_pci_is_function(struct ns_root *root, const char *path);
/* The IRQ of this function serving hctx q, or NULL. */
const struct ns_irq *ns_pci_irq_for_queue(const struct ns_pci *pci, int q);

#endif
