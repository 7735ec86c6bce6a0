/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Disks under /sys/block, the PCI functions behind them, and their blk-mq hardware queues. */
#ifndef NUMASTOR_BLOCKDEV_H
#define NUMASTOR_BLOCKDEV_H

#include <stdbool.h>
#include <stddef.h>

#include "base/cpuset.h"
#include "read/fabric.h"
#include "read/pci.h"

enum ns_disk_kind {
	NS_DISK_OTHER = 0,
	NS_DISK_NVME,
	NS_DISK_NVME_MULTIPATH,
	NS_DISK_SCSI,
	NS_DISK_VIRTIO_BLK,
	NS_DISK_ATA,
	NS_DISK_DM,
	NS_DISK_MD,
	NS_DISK_LOOP,
	NS_DISK_ZRAM,
	NS_DISK_PMEM,	      /* libnvdimm: pmemN, pmemNs (btt) */
	NS_DISK_XEN_BLKFRONT, /* Xen's paravirtual disk: xvdX */
};

enum ns_transport {
	NS_TRANSPORT_OTHER = 0,
	NS_TRANSPORT_NVME,
	NS_TRANSPORT_SCSI,
	NS_TRANSPORT_VIRTIO,
	NS_TRANSPORT_ATA
};

/* how a queue found its vector: by the vector's name, by the count (one queue, one vector), or by the
 * CPU lists (a managed vector's affinity holding the queue's CPUs) where a name's place or the count
 * disagreed with them */
enum ns_pairing {
	NS_PAIRING_UNKNOWN = 0,
	NS_PAIRING_NVME_NAME,
	NS_PAIRING_VIRTIO_NAME,
	NS_PAIRING_SINGLE_VECTOR,
	NS_PAIRING_CPU_LIST
};

enum ns_node_source {
	NS_NODE_SRC_NONE = 0,
	NS_NODE_SRC_PCI,
	NS_NODE_SRC_FORCED,
	NS_NODE_SRC_UNKNOWN,
	NS_NODE_SRC_PATHS_DISAGREE,
	NS_NODE_SRC_SET,       /* set by someone other than the firmware and a forcing driver (by hand: taint I) */
	NS_NODE_SRC_ND_REGION, /* pmem: the libnvdimm region's numa_node */
	NS_NODE_SRC_VMBUS,     /* Hyper-V: the VMBus device's numa_node */
	NS_NODE_SRC_DEVICE,    /* another device on the path with a numa_node (platform, cxl, ...) */
	NS_NODE_SRC_FABRIC,    /* NVMe over fabrics: the PCI function that carries the transport */
	NS_NODE_SRC_MEMBERS,   /* md/dm: every member on one node */
	NS_NODE_SRC_MEMBERS_DISAGREE, /* md/dm: members on different nodes */
};

/*
 * A per-path attribute of NVMe multipath (the path disk nvmeXcYnZ's numa_nodes, queue_depth,
 * ana_state): absent, empty and unreadable are three answers, never one silent default.
 * numa_nodes and queue_depth came about v6.15 (6546cc4a5661, 7cbafa3ff018); the kernel prints
 * nothing (0 bytes) in numa_nodes unless the subsystem's iopolicy is numa and in queue_depth
 * unless it is queue-depth; ana_state is shown only for a controller that uses ANA.
 */
enum ns_attr_state {
	NS_ATTR_ABSENT = 0, /* no such file */
	NS_ATTR_EMPTY,	    /* the file is there and the kernel printed nothing */
	NS_ATTR_READ,	    /* read and parsed */
	NS_ATTR_UNREADABLE, /* a read error other than ENOENT, or garbled: noted, the fact unknown */
};

/* A VMBus channel: its relid (channels/N) and the CPU the host signals it on (channels/N/cpu). */
struct ns_vmbus_channel {
	int id;
	int target_cpu; /* -1 unknown */
	int node;	/* -1 unknown */
};

struct ns_vmbus {
	char *device_id; /* the device's directory name (its instance GUID) */
	int numa_node;	 /* -1 none or unknown */
	struct ns_vmbus_channel *channels;
	size_t nchannels;
	struct ns_cpuset channel_nodes; /* the nodes of the channels' target CPUs */
};

struct ns_path {
	enum ns_transport transport;
	char *controller;	  /* nvmeN, hostN, virtioN, ataN */
	char *disk_syspath;	  /* the path's own disk (nvmeXcYnZ) or the disk itself */
	struct ns_pci *pci;	  /* borrowed from the system's PCI cache; NULL when none */
	struct ns_fabric *fabric; /* NVMe over fabrics: the transport and what carries it; NULL local */
	struct ns_vmbus *vmbus;	  /* Hyper-V: the VMBus device the path sits on; NULL otherwise */
	/* without a PCI function: the nearest device on the path that has a numa_node */
	int device_node;		/* -1 none or unknown */
	char *node_device;		/* root-relative path of that device; NULL none */
	enum ns_node_source node_basis; /* ND_REGION, VMBUS, DEVICE; NONE when no device has a node */
	char *no_node_reason;		/* why the path has no node, NULL when it has one */
	/* a multipath head's path: its disk's own attributes (ns_attr_state says which were read) */
	enum ns_attr_state numa_nodes_state, queue_depth_state, ana_state_state;
	struct ns_cpuset numa_nodes; /* the nodes whose current path this is (%*pbl); known when READ, may be empty */
	long queue_depth;	     /* the controller's active requests (iopolicy queue-depth); -1 unless READ */
	char *ana_state;	     /* "optimized", "non-optimized", "inaccessible", ...: when READ */
	/* the model's (lib/model/mpath): the nodes this path serves, and on what basis */
	struct ns_cpuset serves_nodes; /* known when serves_source is set */
	const char *serves_source;     /* "kernel", "inferred", "iopolicy" (static strings); NULL unknown */
};

/* A leaf member of an md/dm device (through stacking, a partition counted as its disk). */
struct ns_member {
	char *name;
	int node; /* -1 unknown */
};

struct ns_hctx {
	int index;
	int memory_node;       /* node of the first CPU of cpus, -1 unknown */
	char *controller;      /* the path it belongs to (multipath) */
	struct ns_cpuset cpus; /* the CPUs it serves: cpu_list, plus isolated_cpus */
	struct ns_cpuset
		isolated;	 /* isolated CPUs it serves that cpu_list leaves out (blk-mq: 6.9, Debian's 6.1.192) */
	struct ns_cpuset online; /* those of cpus online now: empty for a queue that serves only CPUs
				  * not present or offline (hotplug headroom: possible > present) */
	struct ns_cpuset nodes;	 /* node ids of cpus */
	long nr_tags;		 /* -1 unknown */
	const struct ns_irq *irq;
	const struct ns_pci *pci;
	enum ns_pairing pairing;
};

struct ns_identity {
	char *model, *serial, *wwn, *by_id;
};

struct ns_alloc {
	int device_node; /* -1 unknown */
	char *device_basis;
	int midlayer_node;    /* -1 unknown or not applicable */
	char *midlayer_basis; /* NULL when not SCSI */
	/* the Scsi_Host and the HBA driver's private data behind it (scsi_host_alloc) */
	int host_alloc_node;	 /* -1 unknown or not applicable */
	char *host_alloc_basis;	 /* NULL when not SCSI/ATA */
	char *host_alloc_module; /* the module that calls scsi_host_alloc (the HBA driver's, libata for ATA) */
	int host_alloc_remote;	 /* 1 inferred off the HBA's node (stock module, no housekeeping CPU there), 0, -1 */
	struct ns_cpuset hw_queue_nodes;
	int shared_tags;		/* 1: one tag set for all hw queues (BLK_MQ_F_TAG_HCTX_SHARED), 0, -1 unknown */
	const char *shared_tags_source; /* "debugfs", "driver", "unknown" (static strings) */
	struct ns_cpuset tags_nodes;	/* where tags and requests live; known false when unknown */
	char *tags_basis;
	/* nvme-pci on a kernel with per-node PRP/SGL descriptor pools (v6.16 on): their nodes, each
	 * queue's; descriptor_basis NULL elsewhere (one pool pair per device, on its node) */
	struct ns_cpuset descriptor_nodes;
	char *descriptor_basis;
};

struct ns_disk {
	char *name;
	enum ns_disk_kind kind;
	char *devnum;	      /* "259:0" */
	char *syspath;	      /* canonical, relative to the root */
	long long size_bytes; /* -1 unknown */
	char **partitions, **slaves, **holders;
	char *backing_file; /* loop devices: the file they sit on */
	char *iopolicy;	    /* NVMe multipath: the subsystem's iopolicy */
	size_t npartitions, nslaves, nholders;
	struct ns_identity identity;
	struct ns_path *paths;
	size_t npaths;
	int node; /* -1 unknown */
	enum ns_node_source node_source;
	char *node_device;	   /* root-relative: the device whose numa_node gave node; NULL none */
	char *node_reason;	   /* why node is unknown, in words; NULL when it is known */
	struct ns_member *members; /* md/dm: leaf members (ns_system_discover fills them) */
	size_t nmembers;
	bool members_read;     /* members were looked for (md/dm) */
	bool members_complete; /* every member's node is known */
	int node_reliable;     /* 0: its node's CPUs overlap another node's (node-cpus-overlap); 1; -1 no node */
	struct ns_cpuset local_cpus;
	int rq_affinity; /* -1 unknown */
	char *scheduler;
	long nr_requests; /* -1 unknown */
	struct ns_hctx *hctx;
	size_t nhctx;
	int hctx_tags_shared; /* debugfs block/NAME/hctxN/flags: 1 TAG_HCTX_SHARED, 0 not, -1 unread */
	char *scsi_scan;      /* SCSI/ATA: sys/module/scsi_mod/parameters/scan, NULL unread */
	struct ns_alloc alloc;
};

const char *ns_disk_kind_name(enum ns_disk_kind k);
const char *ns_transport_name(enum ns_transport t);
const char *ns_pairing_name(enum ns_pairing p);
const char *ns_node_source_name(enum ns_node_source s);
bool ns_disk_is_virtual(const struct ns_disk *d);
/* Does the queue serve an online CPU (or is that unknown)? A queue of CPUs that are not present
 * or are offline (possible > present: hotplug headroom) carries no I/O now: no placement of it is
 * judged. */
bool ns_hctx_serves_online(const struct ns_hctx *h);
/* The hardware queue of d that irq serves, NULL when none. */
const struct ns_hctx *ns_disk_queue_of(const struct ns_disk *d, const struct ns_irq *irq);

/* What reading a disk needs: the root, the machine (nodes of CPUs), where notes go, and the PCI
 * function cache (a function shared by several disks is read once): pci(data, syspath, &out)
 * returns the function at syspath, reading it on first use. */
struct ns_disk_env {
	struct ns_root *root;
	const struct ns_machine *machine;
	struct ns_notes *notes;
	int (*pci)(void *data, const char *syspath, struct ns_pci **out);
	void *data;
};

/*
 * How many paths a multipath head may have: one per controller of its NVMe subsystem, and a
 * controller ID (CNTLID) is 16 bits, 0xfff0 and above reserved (NVMe base specification): at
 * most 65520. Entries beyond are noted and not read.
 */
#define NS_NVME_PATHS_MAX 65520u

/* Read one disk by its /sys/block name into d. Its paths (a multipath head's) are each read
 * once, however many entries resolve to one. */
int ns_disk_read(struct ns_disk_env *env, const char *name, struct ns_disk *d);
void ns_disk_free(struct ns_disk *d);

#endif
