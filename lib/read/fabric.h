/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NVMe over fabrics: a controller's transport and address (its sysfs `transport` and
 * `address` files), and the device that carries it on this host: the netdev the route to the
 * target uses (tcp), the IB device behind that netdev (rdma), the FC host whose port is the
 * controller's host_traddr (fc). The carrier's device path leads to the PCI function whose
 * node and IRQs are the path's.
 */
#ifndef NUMASTOR_FABRIC_H
#define NUMASTOR_FABRIC_H

#include "base/notes.h"
#include "read/root.h"

struct ns_fabric {
	char *transport; /* "tcp", "rdma", "fc", "loop", ... as sysfs says */
	char *address;	 /* the raw address file */
	char *traddr, *trsvcid, *host_traddr, *src_addr, *host_iface; /* NULL when absent */
	char *carrier;		   /* netdev, IB device or FC host name; NULL when none was found */
	const char *carrier_kind;  /* "netdev", "ib-device", "fc-host"; NULL with carrier */
	const char *carrier_basis; /* "host_iface", "src_addr", "route", "ipv6_route", "host_traddr" */
	char *carrier_device;	   /* root-relative canonical path of the carrier's device, NULL none */
	char *reason;		   /* why no carrier (device) was found; NULL when one was */
};

/*
 * Read the controller at ctrl_syspath (root-relative, .../nvme-fabrics/ctl/nvmeN). -ENOENT
 * when it is no fabrics controller (no transport file, or "pcie"). Not finding a carrier is
 * no error: reason says why (a device link there but unreadable is noted, too).
 */
int ns_fabric_read(struct ns_root *root, const char *ctrl_syspath, struct ns_fabric *f, struct ns_notes *notes);
/* Split "traddr=...,trsvcid=...,src_addr=..." into f's fields (the others are kept). */
int ns_fabric_parse_address(const char *address, struct ns_fabric *f);
void ns_fabric_free(struct ns_fabric *f);

#endif
