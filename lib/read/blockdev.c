/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/blockdev.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "base/util.h"

const char *ns_disk_kind_name(enum ns_disk_kind k)
{
	static const char *const names[] = {
		[NS_DISK_OTHER] = "other",
		[NS_DISK_NVME] = "nvme",
		[NS_DISK_NVME_MULTIPATH] = "nvme-multipath",
		[NS_DISK_SCSI] = "scsi",
		[NS_DISK_VIRTIO_BLK] = "virtio-blk",
		[NS_DISK_ATA] = "ata",
		[NS_DISK_DM] = "dm",
		[NS_DISK_MD] = "md",
		[NS_DISK_LOOP] = "loop",
		[NS_DISK_ZRAM] = "zram",
		[NS_DISK_PMEM] = "pmem",
		[NS_DISK_XEN_BLKFRONT] = "xen-blkfront",
	};
	return names[k];
}

const char *ns_transport_name(enum ns_transport t)
{
	static const char *const names[] = {[NS_TRANSPORT_OTHER] = "other",
					    [NS_TRANSPORT_NVME] = "nvme",
					    [NS_TRANSPORT_SCSI] = "scsi",
					    [NS_TRANSPORT_VIRTIO] = "virtio",
					    [NS_TRANSPORT_ATA] = "ata"};
	return names[t];
}

const char *ns_pairing_name(enum ns_pairing p)
{
	static const char *const names[] = {[NS_PAIRING_UNKNOWN] = "unknown",
					    [NS_PAIRING_NVME_NAME] = "nvme-name",
					    [NS_PAIRING_VIRTIO_NAME] = "virtio-name",
					    [NS_PAIRING_SINGLE_VECTOR] = "single-vector",
					    [NS_PAIRING_CPU_LIST] = "cpu-list"};
	return names[p];
}

const char *ns_node_source_name(enum ns_node_source s)
{
	static const char *const names[] = {[NS_NODE_SRC_NONE] = "none",
					    [NS_NODE_SRC_PCI] = "pci",
					    [NS_NODE_SRC_FORCED] = "forced",
					    [NS_NODE_SRC_UNKNOWN] = "unknown",
					    [NS_NODE_SRC_PATHS_DISAGREE] = "paths-disagree",
					    [NS_NODE_SRC_SET] = "set",
					    [NS_NODE_SRC_ND_REGION] = "nd-region",
					    [NS_NODE_SRC_VMBUS] = "vmbus",
					    [NS_NODE_SRC_DEVICE] = "device",
					    [NS_NODE_SRC_FABRIC] = "fabric",
					    [NS_NODE_SRC_MEMBERS] = "members",
					    [NS_NODE_SRC_MEMBERS_DISAGREE] = "members-disagree"};
	return names[s];
}

bool ns_disk_is_virtual(const struct ns_disk *d)
{
	return d->kind == NS_DISK_DM || d->kind == NS_DISK_MD || d->kind == NS_DISK_LOOP || d->kind == NS_DISK_ZRAM;
}

static bool lower_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* DDDD:BB:DD.F exactly as the PCI core names a function ("%04x:%02x:%02x.%d": lowercase, the
 * schema's address pattern), the function 0-7 */
static bool is_bdf(const char *s, size_t n)
{
	size_t i = 0, k;

	for (k = 0; i < n && lower_hex(s[i]); i++, k++)
		;
	if (k < 4 || k > 8 || i >= n || s[i++] != ':')
		return false;
	for (int field = 0; field < 2; field++) {
		if (i + 3 > n || !lower_hex(s[i]) || !lower_hex(s[i + 1]) || s[i + 2] != (field == 0 ? ':' : '.'))
			return false;
		i += 3;
	}
	return i + 1 == n && s[i] >= '0' && s[i] <= '7';
}

/* "nvme<A>" + sep + "<B>" (sep '\0': "nvme<A>" alone), each number in the kernel's form */
static bool nvme_numbers(const char *name, char sep, unsigned *a, unsigned *b)
{
	const char *p = name;
	uint64_t x, y = 0;

	if (strncmp(p, "nvme", 4) != 0)
		return false;
	p += 4;
	if (ns_parse_dec_prefix(&p, UINT_MAX, &x) < 0)
		return false;
	if (sep) {
		if (*p++ != sep || ns_parse_dec_prefix(&p, UINT_MAX, &y) < 0)
			return false;
	}
	if (*p)
		return false;
	*a = (unsigned)x;
	if (b)
		*b = (unsigned)y;
	return true;
}

static bool prefixed_number(const char *s, size_t n, const char *prefix)
{
	size_t pl = strlen(prefix);
	if (n <= pl || strncmp(s, prefix, pl) != 0)
		return false;
	for (size_t i = pl; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* A dev file: "MAJOR:MINOR" as the kernel prints it ("%u:%u", MAJOR below 2^12, MINOR below
 * 2^20), which the JSON's devnum and the run/udev/data/bMAJ:MIN lookup rely on. */
static bool is_devnum(const char *s)
{
	unsigned long part[2] = {0, 0};
	const unsigned long max[2] = {(1UL << 12) - 1, (1UL << 20) - 1};

	for (int k = 0; k < 2; k++) {
		const char *start = s;
		while (isdigit((unsigned char)*s)) {
			part[k] = part[k] * 10 + (unsigned long)(*s - '0');
			if (part[k] > max[k])
				return false;
			s++;
		}
		if (s == start || (s - start > 1 && *start == '0'))
			return false;
		if (*s != (k == 0 ? ':' : '\0'))
			return false;
		s++;
	}
	return true;
}

static enum ns_disk_kind classify(const char *name, const char *syspath)
{
	if (strncmp(name, "dm-", 3) == 0)
		return NS_DISK_DM;
	if (strncmp(name, "md", 2) == 0 && isdigit((unsigned char)name[2]))
		return NS_DISK_MD;
	if (strncmp(name, "loop", 4) == 0)
		return NS_DISK_LOOP;
	if (strncmp(name, "zram", 4) == 0)
		return NS_DISK_ZRAM;
	if (strstr(syspath, "/nvme-subsystem/"))
		return NS_DISK_NVME_MULTIPATH;
	if (strncmp(name, "nvme", 4) == 0)
		return NS_DISK_NVME;
	if (strstr(syspath, "/target") && strstr(syspath, "/host"))
		return strstr(syspath, "/ata") ? NS_DISK_ATA : NS_DISK_SCSI;
	if (strstr(syspath, "/virtio"))
		return NS_DISK_VIRTIO_BLK;
	if (strstr(syspath, "/ndbus"))
		return NS_DISK_PMEM;
	if (strstr(syspath, "/vbd-"))
		return NS_DISK_XEN_BLKFRONT;
	return NS_DISK_OTHER;
}

/* The length of path up to and including its deepest PCI function component, 0 when none. */
static size_t deepest_bdf(const char *path)
{
	size_t end = 0;

	for (const char *comp = path; comp && *comp;) {
		const char *next = strchr(comp, '/');
		size_t n = next ? (size_t)(next - comp) : strlen(comp);
		if (is_bdf(comp, n))
			end = (size_t)(comp - path) + n;
		comp = next ? next + 1 : NULL;
	}
	return end;
}

/* Hyper-V: the channels of the VMBus device at dev (channels/<relid>/cpu: the target CPU). */
static int read_vmbus(struct ns_disk_env *env, const char *dev, int numa_node, struct ns_vmbus **out)
{
	struct ns_vmbus *vb = calloc(1, sizeof(*vb));
	const char *base = strrchr(dev, '/');
	char p[4096], **names = NULL;
	size_t n = 0;
	int r;

	if (!vb || !(vb->device_id = strdup(base ? base + 1 : dev))) {
		free(vb);
		return -ENOMEM;
	}
	vb->numa_node = numa_node;
	vb->channel_nodes.known = true;
	*out = vb;
	snprintf(p, sizeof(p), "%s/channels", dev);
	if ((r = ns_list_dir(env->root, p, &names, &n)) < 0) {
		if (r != -ENOENT) /* kernels before 4.14 have no channels/ */
			ns_note_read(env->notes, vb->device_id, "vmbus.channels", p, r, NULL);
		vb->channel_nodes.known = r == -ENOENT;
		return 0;
	}
	vb->channels = calloc(n ? n : 1, sizeof(*vb->channels));
	if (!vb->channels) {
		ns_strv_free(names, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct ns_vmbus_channel *c = &vb->channels[vb->nchannels];
		long long id, cpu;
		char *txt = NULL;
		if (ns_parse_dec(names[i], 0, INT_MAX, &id) < 0)
			continue;
		c->id = (int)id;
		c->target_cpu = c->node = -1;
		snprintf(p, sizeof(p), "%s/channels/%s/cpu", dev, names[i]);
		if ((r = ns_read_dec(env->root, p, 0, INT_MAX, &cpu, &txt)) == 0) {
			c->target_cpu = (int)cpu;
			c->node = ns_machine_cpu_node(env->machine, c->target_cpu);
		} else {
			ns_note_read(env->notes, vb->device_id, "vmbus.channels.target_cpu", p, r, txt);
		}
		free(txt);
		if (c->node >= 0 && ns_cpuset_set(&vb->channel_nodes, (unsigned)c->node) < 0) {
			ns_strv_free(names, n);
			return -ENOMEM;
		}
		vb->nchannels++;
	}
	ns_strv_free(names, n);
	/* the kernel lists channels/ in no order: by relid, so output does not depend on it */
	for (size_t i = 1; i < vb->nchannels; i++)
		for (size_t j = i; j > 0 && vb->channels[j - 1].id > vb->channels[j].id; j--) {
			struct ns_vmbus_channel t = vb->channels[j];
			vb->channels[j] = vb->channels[j - 1];
			vb->channels[j - 1] = t;
		}
	return 0;
}

/* Why a path that no device gives a node has none, from what its path shows. */
static char *no_node_reason(const char *syspath)
{
	if (strstr(syspath, "/vbd-"))
		return ns_fmt("xen-blkfront: a Xen virtual block device (vbd) has no NUMA node in sysfs");
	if (strstr(syspath, "virtio_mmio") || strstr(syspath, "virtio-mmio"))
		return ns_fmt("virtio-mmio: a platform device, which has no numa_node in sysfs");
	return ns_fmt("no device on its sysfs path has a numa_node");
}

/*
 * A path without a PCI function: the deepest device above the disk that has a numa_node
 * (a pmem namespace's region, a VMBus device, a platform or CXL device). Its subsystem names
 * the basis; a libnvdimm namespace (or btt/pfn) defers to its region, the device the firmware
 * (NFIT) gave the node to.
 */
static int ancestor_node(struct ns_disk_env *env, const char *syspath, struct ns_path *path)
{
	char p[4096], *txt = NULL, *subsys = NULL;
	size_t len = strlen(syspath);
	long long v = -1;
	int r = -ENOENT;

	path->device_node = -1;
	path->node_basis = NS_NODE_SRC_NONE;
	while (len > strlen("sys/devices/")) {
		while (len > 0 && syspath[len - 1] != '/')
			len--;
		if (len-- == 0)
			break;
		snprintf(p, sizeof(p), "%.*s/numa_node", (int)len, syspath);
		r = ns_read_dec(env->root, p, -1, INT_MAX, &v, &txt);
		if (r != -ENOENT)
			break;
	}
	if (r == -ENOMEM) {
		free(txt);
		return r;
	}
	if (r < 0) {
		if (r != -ENOENT)
			ns_note_read(env->notes, path->controller ? path->controller : syspath, "node", p, r, txt);
		free(txt);
		path->no_node_reason = r == -ENOENT ? no_node_reason(syspath) : ns_fmt("/%s could not be read", p);
		return path->no_node_reason ? 0 : -ENOMEM;
	}
	free(txt);
	snprintf(p, sizeof(p), "%.*s/subsystem", (int)len, syspath);
	if ((r = ns_readlink_base(env->root, p, &subsys)) == -ENOMEM)
		return r;
	if (r < 0 && r != -ENOENT) /* a VMBus or nd device taken for a plain one: the source is noted */
		ns_note_read(env->notes, path->controller ? path->controller : syspath, "node_source", p, r, NULL);
	if (subsys && strcmp(subsys, "nd") == 0) {
		/* the namespace (or btt/pfn) in a region: the region's own numa_node */
		size_t up = len;
		long long rv;
		while (up > 0 && syspath[up - 1] != '/')
			up--;
		if (up > 0 && strncmp(syspath + up, "region", 6) != 0) {
			size_t parent_end = up - 1, parent = parent_end;
			while (parent > 0 && syspath[parent - 1] != '/')
				parent--;
			snprintf(p, sizeof(p), "%.*s/numa_node", (int)parent_end, syspath);
			if (strncmp(syspath + parent, "region", 6) == 0 &&
			    ns_read_dec(env->root, p, -1, INT_MAX, &rv, NULL) == 0) {
				len = parent_end;
				v = rv;
			}
		}
		path->node_basis = NS_NODE_SRC_ND_REGION;
	} else if (subsys && strcmp(subsys, "vmbus") == 0) {
		path->node_basis = NS_NODE_SRC_VMBUS;
	} else {
		path->node_basis = NS_NODE_SRC_DEVICE;
	}
	free(subsys);
	if (!(path->node_device = strndup(syspath, len)))
		return -ENOMEM;
	path->device_node = v >= 0 ? (int)v : -1;
	if (v < 0 &&
	    !(path->no_node_reason = ns_fmt("/%s/numa_node reads -1: the firmware gave it no node", path->node_device)))
		return -ENOMEM;
	if (path->node_basis == NS_NODE_SRC_VMBUS)
		return read_vmbus(env, path->node_device, path->device_node, &path->vmbus);
	return 0;
}

/* NVMe over fabrics: the controller directory .../nvme-fabrics/ctl/nvmeN of a path's disk. */
static int fabric_path(struct ns_disk_env *env, const char *disk_syspath, struct ns_path *path)
{
	const char *ctl = strstr(disk_syspath, "/nvme-fabrics/ctl/");
	const char *end;
	char *dir;
	size_t bdf;
	int r;

	if (!ctl)
		return -ENOENT;
	ctl += strlen("/nvme-fabrics/ctl/");
	end = strchr(ctl, '/');
	if (!(dir = strndup(disk_syspath, end ? (size_t)(end - disk_syspath) : strlen(disk_syspath))))
		return -ENOMEM;
	path->fabric = calloc(1, sizeof(*path->fabric));
	r = path->fabric ? ns_fabric_read(env->root, dir, path->fabric, env->notes) : -ENOMEM;
	free(dir);
	if (r < 0) {
		free(path->fabric);
		path->fabric = NULL;
		return r;
	}
	path->device_node = -1;
	if (!path->fabric->carrier_device) {
		path->no_node_reason = strdup(path->fabric->reason ? path->fabric->reason : "no carrier was found");
		return path->no_node_reason ? 0 : -ENOMEM;
	}
	bdf = deepest_bdf(path->fabric->carrier_device);
	if (!bdf) {
		path->no_node_reason = ns_fmt("%s %s is on no PCI function (/%s)", path->fabric->carrier_kind,
					      path->fabric->carrier, path->fabric->carrier_device);
		return path->no_node_reason ? 0 : -ENOMEM;
	}
	if (!(dir = strndup(path->fabric->carrier_device, bdf)))
		return -ENOMEM;
	r = env->pci(env->data, dir, &path->pci);
	free(dir);
	return r;
}

/* Walk a device path: the deepest PCI function and the deepest controller component. */
static int resolve_path(struct ns_disk_env *env, const char *disk_syspath, struct ns_path *path)
{
	const char *s = disk_syspath;
	const char *comp = s;
	size_t pci_end = 0;
	int r;

	path->disk_syspath = strdup(disk_syspath);
	if (!path->disk_syspath)
		return -ENOMEM;
	while (comp && *comp) {
		const char *next = strchr(comp, '/');
		size_t n = next ? (size_t)(next - comp) : strlen(comp);
		enum ns_transport t = NS_TRANSPORT_OTHER;
		bool ctl = true;

		if (is_bdf(comp, n))
			pci_end = (size_t)(comp - s) + n;
		if (prefixed_number(comp, n, "nvme"))
			t = NS_TRANSPORT_NVME;
		else if (prefixed_number(comp, n, "host"))
			t = path->transport == NS_TRANSPORT_ATA ? NS_TRANSPORT_ATA : NS_TRANSPORT_SCSI;
		else if (prefixed_number(comp, n, "virtio"))
			t = NS_TRANSPORT_VIRTIO;
		else if (prefixed_number(comp, n, "ata"))
			t = NS_TRANSPORT_ATA;
		else
			ctl = false;
		if (ctl && !(t == NS_TRANSPORT_ATA && path->controller)) {
			/* ataN/hostM: keep the host as the controller, ATA as the transport */
			free(path->controller);
			path->controller = strndup(comp, n);
			path->transport = t;
		}
		comp = next ? next + 1 : NULL;
	}
	path->device_node = -1;
	if (pci_end) {
		char *pcipath = strndup(s, pci_end);
		if (!pcipath)
			return -ENOMEM;
		r = env->pci(env->data, pcipath, &path->pci);
		free(pcipath);
		return r < 0 ? r : 0;
	}
	r = fabric_path(env, disk_syspath, path);
	if (r != -ENOENT)
		return r;
	return ancestor_node(env, disk_syspath, path);
}

/* slaves/, holders/: absent is none (old kernels, a capture without them); unread is a note */
static void read_list_names(struct ns_disk_env *env, const char *name, const char *field, const char *dir, char ***v,
			    size_t *n)
{
	int r = ns_list_dir(env->root, dir, v, n);

	if (r < 0) {
		if (r != -ENOENT)
			ns_note_read(env->notes, name, field, dir, r, NULL);
		*v = NULL;
		*n = 0;
	}
}

static void read_partitions(struct ns_disk_env *env, struct ns_disk *d)
{
	char **names;
	size_t n;
	int r = ns_list_dir(env->root, d->syspath, &names, &n);

	if (r < 0) {
		ns_note_read(env->notes, d->name, "partitions", d->syspath, r, NULL);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char p[4096];
		if (strncmp(names[i], d->name, strlen(d->name)) != 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s/partition", d->syspath, names[i]);
		if ((r = ns_probe(env->root, p)) < 0)
			ns_note_read(env->notes, d->name, "partitions", p, r, NULL);
		if (r != 1)
			continue;
		char **nv = realloc(d->partitions, (d->npartitions + 1) * sizeof(*nv));
		if (!nv)
			break;
		d->partitions = nv;
		d->partitions[d->npartitions++] = names[i];
		names[i] = NULL;
	}
	ns_strv_free(names, n);
}

static void read_queue(struct ns_disk_env *env, struct ns_disk *d)
{
	char p[4096], *txt = NULL;
	long long v;
	int r;
	bool bio_based;

	/*
	 * A bio-based disk (no mq/: dm, md, zram, and the NVMe multipath head) has no request
	 * queue; since 6.12 (measured on Debian's 6.12.95) its queue/ lacks rq_affinity and
	 * nr_requests, which is no fault of the machine's.
	 */
	snprintf(p, sizeof(p), "%s/mq", d->syspath);
	r = ns_disk_is_virtual(d) ? 0 : ns_probe(env->root, p);
	if (r < 0) /* request-based or not: not told; the queue's own notes follow as for one */
		ns_note_read(env->notes, d->name, "queue.mq", p, r, NULL);
	bio_based = r == 0;
	snprintf(p, sizeof(p), "%s/queue/rq_affinity", d->syspath);
	d->rq_affinity = -1;
	if ((r = ns_read_dec(env->root, p, 0, 2, &v, &txt)) == 0)
		d->rq_affinity = (int)v;
	else if (!bio_based || r != -ENOENT)
		ns_note_read(env->notes, d->name, "queue.rq_affinity", p, r, txt);
	free(txt);
	txt = NULL;
	snprintf(p, sizeof(p), "%s/queue/nr_requests", d->syspath);
	d->nr_requests = -1;
	/* decimal (0x1 is not 1), at most blk-mq's largest depth */
	if ((r = ns_read_dec(env->root, p, 0, NS_BLK_MQ_MAX_DEPTH, &v, &txt)) == 0)
		d->nr_requests = (long)v;
	else if (!bio_based || r != -ENOENT)
		ns_note_read(env->notes, d->name, "queue.nr_requests", p, r, txt);
	free(txt);
	snprintf(p, sizeof(p), "%s/queue/scheduler", d->syspath);
	r = ns_root_needs(env->root, NS_NEED_SCHEDULER) ? ns_read_str(env->root, p, &txt) : -ENOENT;
	if (r < 0 && r != -ENOENT) /* a bio-based disk has none */
		ns_note_read(env->notes, d->name, "queue.scheduler", p, r, NULL);
	if (r == 0) {
		char *open = strchr(txt, '['), *close = open ? strchr(open, ']') : NULL;
		if (open && close)
			d->scheduler = strndup(open + 1, (size_t)(close - open - 1));
		else
			d->scheduler = strdup(txt); /* "none" alone, no brackets */
		free(txt);
	}
}

bool ns_hctx_serves_online(const struct ns_hctx *h)
{
	return !h->online.known || ns_cpuset_count(&h->online) > 0;
}

const struct ns_hctx *ns_disk_queue_of(const struct ns_disk *d, const struct ns_irq *irq)
{
	for (size_t i = 0; i < d->nhctx; i++)
		if (d->hctx[i].irq == irq)
			return &d->hctx[i];
	return NULL;
}

/* The blk-mq hardware queues of one path's disk, paired with the path's vectors. */

/*
 * From 6.9 on (and on Debian's 6.1.192, a backport) blk-mq leaves the isolated CPUs (isolcpus=) out
 * of a hardware queue's cpu_list:
 * its kworker stays off them, but they still submit to it (measured on Debian's 6.12 with
 * isolcpus=2-3: the queue of CPU 2 reads an empty cpu_list, its vector nvme0q1 / virtio request
 * vector is bound to CPU 2). A queue paired by name whose vector's affinity is its cpu_list plus
 * isolated CPUs serves those too: they join its CPUs (and its memory node, blk-mq's first mapped
 * CPU's), and isolated says which they were.
 */
static int isolated_left_out(const struct ns_machine *m, struct ns_hctx *h)
{
	const struct ns_cpuset *aff = h->irq ? &h->irq->affinity : NULL;

	if (ns_cpuset_count(&h->isolated))
		return 0; /* its cpuN entries told (isolated_from_entries) */
	ns_cpuset_clear(&h->isolated);
	h->isolated.known = true;
	if (!aff || !aff->known || !h->cpus.known || !m->isolated.known || !ns_cpuset_count(&m->isolated) ||
	    (h->pairing != NS_PAIRING_NVME_NAME && h->pairing != NS_PAIRING_VIRTIO_NAME &&
	     h->pairing != NS_PAIRING_CPU_LIST) ||
	    !ns_cpuset_subset(&h->cpus, aff) || ns_cpuset_intersects(&h->cpus, &m->isolated) ||
	    ns_cpuset_equal(&h->cpus, aff))
		return 0;
	ns_cpuset_foreach (cpu, aff)
		if (!ns_cpuset_test(&h->cpus, (unsigned)cpu) && !ns_cpuset_test(&m->isolated, (unsigned)cpu))
			return 0; /* a CPU that is neither: a real difference (queue-affinity-mismatch) */
	ns_cpuset_foreach (cpu, aff)
		if (!ns_cpuset_test(&h->cpus, (unsigned)cpu) && ns_cpuset_set(&h->isolated, (unsigned)cpu) < 0)
			return -ENOMEM;
	if (ns_cpuset_or(&h->cpus, &h->isolated) < 0)
		return -ENOMEM;
	ns_machine_nodes_of(m, &h->cpus, &h->nodes); /* it starts the set afresh */
	h->memory_node = ns_machine_cpu_node(m, ns_cpuset_first(&h->cpus));
	return 0;
}
/*
 * blk-mq leaves the isolated CPUs out of a queue's cpu_list but not out of its cpuN entries
 * (mq/N/cpuM, one per software context it maps): measured on Debian's 6.1.192 (a backport) and
 * 6.12 with isolcpus=2-3, where the megasas disk's one queue reads "0, 1" and has cpu0..cpu3.
 * Where CPUs are isolated, the entries give the isolated CPUs the queue serves; a tree without
 * them (a capture of an older numastor) leaves it to isolated_left_out().
 */
static void isolated_from_entries(struct ns_disk_env *env, const struct ns_path *path, const char *hctx,
				  struct ns_hctx *h, struct ns_notes *notes, const char *disk)
{
	const struct ns_cpuset *iso = &env->machine->isolation.cpus;
	char p[4096], **names;
	size_t n;
	int r;

	snprintf(p, sizeof(p), "%s/mq/%s", path->disk_syspath, hctx);
	if ((r = ns_list_dir(env->root, p, &names, &n)) < 0) {
		ns_note_read(notes, disk, "hw_queues.cpus", p, r, NULL);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		long long cpu;
		if (strncmp(names[k], "cpu", 3) != 0 || strcmp(names[k], "cpu_list") == 0 ||
		    ns_parse_dec(names[k] + 3, 0, (long long)env->machine->cpu_limit - 1, &cpu) < 0)
			continue;
		if (!ns_cpuset_test(iso, (unsigned)cpu) || ns_cpuset_test(&h->cpus, (unsigned)cpu))
			continue;
		if (ns_cpuset_set(&h->isolated, (unsigned)cpu) < 0 || ns_cpuset_set(&h->cpus, (unsigned)cpu) < 0) {
			ns_note(notes, disk, "hw_queues.cpus", "out of memory reading /%s", p);
			break;
		}
		h->isolated.known = true;
	}
	ns_strv_free(names, n);
}

/*
 * The CPU lists cross-check a queue's pairing by name or count: blk_mq_map_hw_queues() gives a
 * queue CPUs of its managed vector's affinity only (lib/read/pci.h). When they disagree, a note
 * says so and which pairing stands: the name of an nvme or virtio-blk vector is the driver's own
 * binding of the queue's completions (nvme_create_queue: vector = qid; virtio-blk: vq req.K is
 * queue K) and stands; a place among vectors of one name (virtio-scsi's "request") or a count
 * yields to the vector whose affinity holds the queue's CPUs, when one alone does.
 */
static void pair_by_cpus(struct ns_disk_env *env, const struct ns_disk *d, struct ns_pci *pci, struct ns_hctx *h)
{
	const struct ns_irq *named = h->irq, *by;
	char *cpus = NULL, *aff = NULL;
	bool yields;

	if (ns_irq_holds_cpus(named, &h->cpus))
		return;
	by = ns_pci_irq_by_cpus(pci, &h->cpus, NULL);
	if (!by || by == named)
		return; /* the lists name no other vector: a placement to judge (queue-affinity-mismatch) */
	yields = (h->pairing == NS_PAIRING_SINGLE_VECTOR || ns_irq_queue_by_order(named));
	if (ns_cpuset_format(&h->cpus, &cpus) < 0 || ns_cpuset_format(&named->affinity, &aff) < 0) {
		free(cpus);
		return;
	}
	ns_note(env->notes, d->name, "hw_queues.irq",
		"hardware queue %d serves CPUs %s, not all within the affinity %s of irq %d (%s), its vector by %s; "
		"irq %d (%s)'s affinity holds them: paired by %s",
		h->index, cpus, aff, named->irq, named->name ? named->name : "?",
		h->pairing == NS_PAIRING_SINGLE_VECTOR ? "the count (one queue, one vector)"
		: ns_irq_queue_by_order(named)	       ? "its place among vectors of one name"
						       : "name",
		by->irq, by->name ? by->name : "?",
		yields					 ? "the CPU lists"
		: h->pairing == NS_PAIRING_SINGLE_VECTOR ? "the count"
							 : "name");
	free(cpus);
	free(aff);
	if (!yields)
		return;
	struct ns_irq *w = &pci->irqs[by - pci->irqs];
	if (named->hw_queue == h->index)
		pci->irqs[named - pci->irqs].hw_queue = -1; /* the pairing goes both ways */
	w->hw_queue = h->index;
	h->irq = w;
	h->pairing = NS_PAIRING_CPU_LIST;
}

/* One hardware queue per slot, read on the root's threads (ns_root_parallel). */
struct hctx_batch {
	struct ns_disk_env *env;
	const struct ns_disk *d;
	const struct ns_path *path;
	char **names;
	struct ns_hctx *slots;	/* slot i: mq/names[i] */
	struct ns_notes *notes; /* slot i's notes */
	bool *valid;		/* names[i] is a queue's index */
};

static void read_hctx_item(size_t i, void *data)
{
	struct hctx_batch *b = data;
	struct ns_disk_env *env = b->env;
	const struct ns_disk *d = b->d;
	const struct ns_path *path = b->path;
	struct ns_notes *notes = &b->notes[i];
	struct ns_hctx *h = &b->slots[i];
	char p[4096], *txt = NULL;
	long long idx, v;
	int r;

	if (ns_parse_dec(b->names[i], 0, INT_MAX, &idx) < 0)
		return;
	b->valid[i] = true;
	h->index = (int)idx;
	h->nr_tags = -1;
	h->memory_node = -1;
	h->pci = path->pci;
	/* a multipath head's queues are its paths' own, even with one path (fabrics) */
	if (path->controller && (d->npaths > 1 || d->kind == NS_DISK_NVME_MULTIPATH))
		h->controller = strdup(path->controller);
	snprintf(p, sizeof(p), "%s/mq/%s/cpu_list", path->disk_syspath, b->names[i]);
	if ((r = ns_read_str(env->root, p, &txt)) == 0) {
		if ((r = ns_machine_parse_cpus(env->machine, &h->cpus, txt, false)) < 0)
			ns_note_read(notes, d->name, "hw_queues.cpus", p, r, txt);
		free(txt);
	} else if (r != -ENODATA) {
		ns_note_read(notes, d->name, "hw_queues.cpus", p, r, NULL);
	} else {
		h->cpus.known = true; /* a queue serving no CPU */
	}
	if (h->cpus.known && ns_cpuset_count(&env->machine->isolation.cpus))
		isolated_from_entries(env, path, b->names[i], h, notes, d->name);
	ns_machine_nodes_of(env->machine, &h->cpus, &h->nodes);
	h->memory_node = ns_machine_cpu_node(env->machine, ns_cpuset_first(&h->cpus));
	snprintf(p, sizeof(p), "%s/mq/%s/nr_tags", path->disk_syspath, b->names[i]);
	txt = NULL;
	/* decimal (0x1 is not 1), at most blk-mq's largest depth */
	if ((r = ns_read_dec(env->root, p, 0, NS_BLK_MQ_MAX_DEPTH, &v, &txt)) == 0)
		h->nr_tags = (long)v;
	else
		ns_note_read(notes, d->name, "hw_queues.nr_tags", p, r, txt);
	free(txt);
}

static void read_hctx(struct ns_disk_env *env, struct ns_disk *d, const struct ns_path *path)
{
	char p[4096];
	char **names;
	size_t n;

	snprintf(p, sizeof(p), "%s/mq", path->disk_syspath);
	int r = ns_list_dir(env->root, p, &names, &n);
	if (r < 0) {
		/* a bio-based disk has no mq/; another error leaves its queues untold */
		if (r != -ENOENT)
			ns_note_read(env->notes, d->name, "hw_queues", p, r, NULL);
		return;
	}
	struct ns_hctx *nv = realloc(d->hctx, (d->nhctx + n + 1) * sizeof(*nv));
	if (!nv) {
		ns_strv_free(names, n);
		return;
	}
	d->hctx = nv;
	size_t first = d->nhctx;
	struct hctx_batch b = {.env = env,
			       .d = d,
			       .path = path,
			       .names = names,
			       .slots = calloc(n ? n : 1, sizeof(*b.slots)),
			       .notes = calloc(n ? n : 1, sizeof(*b.notes)),
			       .valid = calloc(n ? n : 1, sizeof(*b.valid))};
	if (!b.slots || !b.notes || !b.valid) {
		free(b.slots);
		free(b.notes);
		free(b.valid);
		ns_strv_free(names, n);
		return;
	}
	/* each queue's files are under mq/: their walks start there */
	bool held = ns_root_hold_dir(env->root, p) == 0;
	ns_root_parallel(env->root, n, read_hctx_item, &b);
	if (held)
		ns_root_drop_dir(env->root);
	/* in the listed order, as if read one after the other */
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < b.notes[i].n; k++)
			ns_note(env->notes, b.notes[i].v[k].subject, b.notes[i].v[k].field, "%s",
				b.notes[i].v[k].message);
		ns_notes_free(&b.notes[i]);
		if (b.valid[i])
			d->hctx[d->nhctx++] = b.slots[i];
	}
	free(b.slots);
	free(b.notes);
	free(b.valid);
	ns_strv_free(names, n);
	/* the vectors named for queues this disk does not have serve none (7.x: fewer groups than vectors) */
	if (path->pci && !path->fabric) {
		int *listed = calloc(d->nhctx - first + 1, sizeof(*listed));
		for (size_t i = first; listed && i < d->nhctx; i++)
			listed[i - first] = d->hctx[i].index;
		if (listed)
			ns_pci_unpair_absent(path->pci, d->name, listed, d->nhctx - first, env->notes);
		free(listed);
	}
	/* pair each queue with its vector */
	for (size_t i = first; i < d->nhctx; i++) {
		struct ns_hctx *h = &d->hctx[i];
		struct ns_pci *pci = path->pci;
		const struct ns_irq *by;
		/* a fabric path's function is a NIC or HBA: its vectors are not the queues' */
		if (pci && !path->fabric) {
			h->irq = ns_pci_irq_for_queue(pci, h->index);
			if (h->irq) {
				h->pairing = path->transport == NS_TRANSPORT_NVME ? NS_PAIRING_NVME_NAME
										  : NS_PAIRING_VIRTIO_NAME;
				pair_by_cpus(env, d, pci, h);
			} else if ((by = ns_pci_irq_by_cpus(pci, &h->cpus, NULL)) && by->hw_queue < 0 &&
				   ns_irq_queue_by_order(by)) {
				/* its vector by place went to the queue whose CPUs it holds: this one's holds these */
				pci->irqs[by - pci->irqs].hw_queue = h->index;
				h->irq = by;
				h->pairing = NS_PAIRING_CPU_LIST;
			} else if (d->nhctx - first == 1 && pci->nirqs == 1) {
				pci->irqs[0].hw_queue = h->index; /* the pairing goes both ways */
				h->irq = &pci->irqs[0];
				h->pairing = NS_PAIRING_SINGLE_VECTOR;
				pair_by_cpus(env, d, pci, h);
			}
			if (isolated_left_out(env->machine, h) < 0)
				return;
		}
		/* every queue's, whatever carries it (a fabric path's, a pmem's) */
		if (ns_cpuset_and(&h->online, &h->cpus, &env->machine->online) < 0)
			return;
	}
}

struct listed_link {
	char *link; /* the entry's target as stored; NULL when it is no link */
	size_t order;
	char *real;
};

static int cmp_listed_link(const void *pa, const void *pb)
{
	const struct listed_link *a = pa, *b = pb;
	int c = !a->link || !b->link ? (a->link != NULL) - (b->link != NULL) : strcmp(a->link, b->link);
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int cmp_listed_order(const void *pa, const void *pb)
{
	const struct listed_link *a = pa, *b = pb;
	return (a->order > b->order) - (a->order < b->order);
}

/*
 * What the first n entries of directory dir resolve to, in their order, into *out (those that
 * resolve): one readlink each and one resolution per distinct target, since the same text in
 * the same directory resolves alike (20,000 links to one path cost one resolution).
 */
static int resolve_listed(struct ns_root *root, struct ns_notes *notes, const char *subject, const char *field,
			  const char *dir, char *const *names, size_t n, char ***out, size_t *nout)
{
	struct listed_link *e = calloc(n ? n : 1, sizeof(*e));
	char p[4096];
	int r = e ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < n; i++) {
		e[i].order = i;
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		int e2 = ns_readlink(root, p, &e[i].link);
		if (e2 == -ENOMEM)
			r = -ENOMEM;
		else if (e2 < 0 && e2 != -ENOENT && e2 != -EINVAL && notes)
			ns_note_read(notes, subject, field, p, e2, NULL);
	}
	if (r == 0)
		qsort(e, n, sizeof(*e), cmp_listed_link);
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (i > 0 && e[i].link && e[i - 1].link && strcmp(e[i].link, e[i - 1].link) == 0) {
			if (e[i - 1].real && !(e[i].real = strdup(e[i - 1].real)))
				r = -ENOMEM;
			continue;
		}
		snprintf(p, sizeof(p), "%s/%s", dir, names[e[i].order]);
		int e2 = ns_realpath(root, p, &e[i].real);
		if (e2 == -ENOMEM)
			r = -ENOMEM;
		else if (e2 < 0 && e2 != -ENOENT && notes) /* dangling: no path; unread: a note */
			ns_note_read(notes, subject, field, p, e2, NULL);
	}
	if (r == 0)
		qsort(e, n, sizeof(*e), cmp_listed_order);
	if (r == 0 && !(*out = calloc(n ? n : 1, sizeof(**out))))
		r = -ENOMEM;
	for (size_t i = 0; e && i < n; i++) {
		if (r == 0 && e[i].real)
			(*out)[(*nout)++] = e[i].real;
		else
			free(e[i].real);
		free(e[i].link);
	}
	free(e);
	return r;
}

/*
 * The paths of multipath head nvmeSnH, as the kernel links them on every line: the head sits in
 * its subsystem's directory (.../nvme-subsystem/nvme-subsysS/nvmeSnH, head_syspath), which links
 * each of the subsystem's controllers (nvmeC); each controller holds its hidden per-path disk
 * nvmeScCnH (device link: the controller). Newer kernels also list the paths in the head's
 * multipath/ directory; 6.1 has none. out: the root-relative directories of the path disks;
 * -ENOENT when none is there.
 */
static int head_paths(struct ns_disk_env *env, const char *head_syspath, const char *head, char ***out, size_t *nout)
{
	struct ns_root *root = env->root;
	unsigned subsys, nsid;
	int r;
	char p[4096], **names;
	size_t n;

	*out = NULL;
	*nout = 0;
	snprintf(p, sizeof(p), "%s/multipath", head_syspath);
	if ((r = ns_list_dir(root, p, &names, &n)) == 0) {
		if (n > NS_NVME_PATHS_MAX)
			ns_note(env->notes, head, "paths",
				"/%s lists %zu entries, more than the %u controllers an NVMe subsystem can have "
				"(16-bit controller IDs): only the first %u are read",
				p, n, NS_NVME_PATHS_MAX, NS_NVME_PATHS_MAX);
		r = resolve_listed(root, env->notes, head, "paths", p, names,
				   n < NS_NVME_PATHS_MAX ? n : NS_NVME_PATHS_MAX, out, nout);
		ns_strv_free(names, n);
		return r < 0 ? r : *nout ? 0 : -ENOENT;
	}
	if (r != -ENOENT)
		return r;
	if (!nvme_numbers(head, 'n', &subsys, &nsid))
		return -ENOENT;
	/* the subsystem directory: the head's parent */
	snprintf(p, sizeof(p), "%s", head_syspath);
	char *slash = strrchr(p, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	char *subsys_dir = strdup(p);
	if (!subsys_dir)
		return -ENOMEM;
	int listed = r = ns_list_dir(root, subsys_dir, &names, &n);
	for (size_t i = 0; r == 0 && i < n && *nout < NS_NVME_PATHS_MAX; i++) {
		unsigned ctrl;
		char *real = NULL;
		if (!nvme_numbers(names[i], '\0', &ctrl, NULL))
			continue; /* not a controller link (the head, iopolicy, ...) */
		snprintf(p, sizeof(p), "%s/%s", subsys_dir, names[i]);
		int e0 = ns_realpath(root, p, &real);
		if (e0 < 0 && e0 != -ENOENT) /* a controller gone since the listing: no path; else not told */
			ns_note_read(env->notes, head, "paths", p, e0, NULL);
		if (e0 < 0)
			continue;
		snprintf(p, sizeof(p), "%s/nvme%uc%un%u", real, subsys, ctrl, nsid);
		free(real);
		int e = ns_probe(root, p);
		if (e == 1)
			r = ns_strv_add(out, nout, p);
		else if (e < 0)
			ns_note_read(env->notes, head, "paths", p, e, NULL);
	}
	if (listed == 0)
		ns_strv_free(names, n);
	free(subsys_dir);
	if (r == 0 && *nout == 0)
		r = -ENOENT;
	return r;
}

static int cmp_path_pos(const void *pa, const void *pb, void *names)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = strcmp(((char **)names)[a], ((char **)names)[b]);
	return c ? c : (a > b) - (a < b);
}

/*
 * A head's paths, each once: entries of multipath/ that resolve to one path disk (a damaged or
 * hostile tree: the kernel links each path once) are that path, the first in order kept and the
 * others noted once. Sorted, not compared pairwise. Returns how many are left in names[].
 */
static size_t unique_paths(struct ns_disk_env *env, const char *head, char **names, size_t n)
{
	size_t *pos = malloc((n ? n : 1) * sizeof(*pos)), kept = 0, dropped = 0;

	if (!pos)
		return n; /* out of memory: each one read, as before */
	for (size_t i = 0; i < n; i++)
		pos[i] = i;
	qsort_r(pos, n, sizeof(*pos), cmp_path_pos, names);
	for (size_t i = 1, first = 0; i < n; i++) {
		if (strcmp(names[pos[i]], names[pos[first]]) != 0) {
			first = i; /* the first entry, in order, of another path */
			continue;
		}
		free(names[pos[i]]); /* a later entry for the path of pos[first] */
		names[pos[i]] = NULL;
		dropped++;
	}
	free(pos);
	for (size_t i = 0; i < n; i++)
		if (names[i])
			names[kept++] = names[i];
	if (dropped)
		ns_note(env->notes, head, "paths",
			"%zu more entr%s of its paths resolve%s to a path already listed: a kernel links each path "
			"once; ignored",
			dropped, dropped == 1 ? "y" : "ies", dropped == 1 ? "s" : "");
	return kept;
}

/*
 * One attribute of a path disk as the kernel printed it: *out the text without its trailing
 * blanks when READ. ENOENT is ABSENT; 0 bytes EMPTY (the kernel's show returned 0: the
 * attribute does not apply under the subsystem's iopolicy); another error, or a NUL inside, is
 * UNREADABLE with a note. Only -ENOMEM is returned as an error.
 */
static int read_path_attr(struct ns_disk_env *env, const char *head, const char *dir, const char *attr,
			  enum ns_attr_state *state, char **out)
{
	char p[4096], field[64], *raw = NULL;
	size_t len;
	int r;

	*out = NULL;
	snprintf(p, sizeof(p), "%s/%s", dir, attr);
	snprintf(field, sizeof(field), "paths.%s", attr);
	r = ns_read_bytes(env->root, p, &raw, &len);
	if (r == -ENOMEM)
		return r;
	if (r == -ENOENT) {
		*state = NS_ATTR_ABSENT;
		return 0;
	}
	if (r == 0 && len == 0) {
		free(raw);
		*state = NS_ATTR_EMPTY;
		return 0;
	}
	if (r == 0 && strlen(raw) != len)
		r = -EINVAL; /* a NUL inside: not the kernel's text */
	if (r < 0) {
		ns_note_read(env->notes, head, field, p, r, NULL);
		free(raw);
		*state = NS_ATTR_UNREADABLE;
		return 0;
	}
	while (len && (raw[len - 1] == '\n' || raw[len - 1] == ' '))
		raw[--len] = '\0';
	*state = NS_ATTR_READ;
	*out = raw;
	return 0;
}

/*
 * A multipath path's own attributes (6.15 on: numa_nodes, queue_depth; ANA: ana_state). A text
 * that does not parse is noted with what it said and left unknown (UNREADABLE).
 */
static int read_mpath_attrs(struct ns_disk_env *env, const char *head, struct ns_path *path)
{
	char *txt, p[4096];
	long long v;
	int r;

	path->queue_depth = -1;
	if ((r = read_path_attr(env, head, path->disk_syspath, "numa_nodes", &path->numa_nodes_state, &txt)) < 0)
		return r;
	if (path->numa_nodes_state == NS_ATTR_READ &&
	    (r = ns_cpuset_parse_list_max(&path->numa_nodes, txt, NS_NODE_MAX)) < 0) {
		if (r == -ENOMEM) {
			free(txt);
			return r;
		}
		snprintf(p, sizeof(p), "%s/numa_nodes", path->disk_syspath);
		ns_note_read(env->notes, head, "paths.numa_nodes", p, r, txt);
		path->numa_nodes_state = NS_ATTR_UNREADABLE;
	}
	free(txt);
	if ((r = read_path_attr(env, head, path->disk_syspath, "queue_depth", &path->queue_depth_state, &txt)) < 0)
		return r;
	if (path->queue_depth_state == NS_ATTR_READ) {
		if ((r = ns_parse_dec(txt, 0, INT_MAX, &v)) == 0) {
			path->queue_depth = (long)v;
		} else {
			snprintf(p, sizeof(p), "%s/queue_depth", path->disk_syspath);
			ns_note_read(env->notes, head, "paths.queue_depth", p, r, txt);
			path->queue_depth_state = NS_ATTR_UNREADABLE;
		}
	}
	free(txt);
	if ((r = read_path_attr(env, head, path->disk_syspath, "ana_state", &path->ana_state_state, &txt)) < 0)
		return r;
	path->ana_state = txt;
	return 0;
}

/*
 * What the allocation model needs beyond the queues: blk-mq's hctx flags in debugfs (whether
 * one tag set is shared by all hardware queues: TAG_HCTX_SHARED) and, for SCSI, the midlayer's
 * scan mode (sys/module/scsi_mod/parameters/scan). Absent files leave them unknown; the scan
 * mode's other errors are noted (the debugfs flags' are not yet: issue 36).
 */
static void read_scsi_scan(struct ns_disk_env *env, struct ns_disk *d)
{
	int r = ns_read_str(env->root, "sys/module/scsi_mod/parameters/scan", &d->scsi_scan);

	if (r < 0 && r != -ENOENT)
		ns_note_read(env->notes, d->name, "scsi_scan", "sys/module/scsi_mod/parameters/scan", r, NULL);
}

static void read_alloc_facts(struct ns_disk_env *env, struct ns_disk *d)
{
	char p[4096], *txt = NULL;

	d->hctx_tags_shared = -1;
	snprintf(p, sizeof(p), "sys/kernel/debug/block/%s/hctx0/flags", d->name);
	if (ns_read_str(env->root, p, &txt) == 0) {
		d->hctx_tags_shared = strstr(txt, "TAG_HCTX_SHARED") != NULL;
		free(txt);
	}
	if (d->kind == NS_DISK_SCSI || d->kind == NS_DISK_ATA)
		read_scsi_scan(env, d);
}

int ns_disk_read(struct ns_disk_env *env, const char *name, struct ns_disk *d)
{
	char p[4096], *txt;
	long long v;
	int r;

	memset(d, 0, sizeof(*d));
	d->node = -1;
	d->hctx_tags_shared = -1;
	d->size_bytes = -1;
	d->rq_affinity = -1;
	d->nr_requests = -1;
	d->alloc.device_node = -1;
	d->alloc.midlayer_node = -1;
	d->alloc.host_alloc_node = -1;
	d->alloc.host_alloc_remote = -1;
	d->name = strdup(name);
	if (!d->name)
		return -ENOMEM;
	snprintf(p, sizeof(p), "sys/block/%s", name);
	r = ns_realpath(env->root, p, &d->syspath);
	if (r < 0)
		return r;
	if ((r = ns_probe(env->root, d->syspath)) == 0)
		return -ENOENT; /* vanished, or a dangling link in a capture */
	if (r < 0)		/* its link resolved: read on, its files say what they can */
		ns_note_read(env->notes, name, "device", d->syspath, r, NULL);
	d->kind = classify(name, d->syspath);

	snprintf(p, sizeof(p), "%s/dev", d->syspath);
	if ((r = ns_read_str(env->root, p, &d->devnum)) < 0) {
		ns_note_read(env->notes, name, "devnum", p, r, NULL);
	} else if (!is_devnum(d->devnum)) {
		ns_note_read(env->notes, name, "devnum", p, -EINVAL, d->devnum);
		free(d->devnum);
		d->devnum = NULL;
	}
	snprintf(p, sizeof(p), "%s/size", d->syspath);
	txt = NULL;
	/* 512-byte sectors: a count whose bytes do not fit is refused, not overflowed */
	if ((r = ns_read_dec(env->root, p, 0, LLONG_MAX / 512, &v, &txt)) == 0)
		d->size_bytes = v * 512;
	else
		ns_note_read(env->notes, name, "size_bytes", p, r, txt);
	free(txt);
	/* lists the chosen output may not show (ns_root_needs) */
	if (ns_root_needs(env->root, NS_NEED_PARTITIONS))
		read_partitions(env, d);
	snprintf(p, sizeof(p), "%s/slaves", d->syspath);
	if (ns_root_needs(env->root, NS_NEED_SLAVES))
		read_list_names(env, name, "slaves", p, &d->slaves, &d->nslaves);
	snprintf(p, sizeof(p), "%s/holders", d->syspath);
	if (ns_root_needs(env->root, NS_NEED_HOLDERS))
		read_list_names(env, name, "holders", p, &d->holders, &d->nholders);
	if (d->kind == NS_DISK_LOOP) {
		snprintf(p, sizeof(p), "%s/loop/backing_file", d->syspath);
		r = ns_read_str(env->root, p, &d->backing_file);
		if (r < 0 && r != -ENOENT) /* no loop/ directory: not attached */
			ns_note_read(env->notes, name, "backing_file", p, r, NULL);
	}
	if (ns_root_needs(env->root, NS_NEED_QUEUES))
		read_queue(env, d);

	if (d->kind == NS_DISK_NVME_MULTIPATH) {
		char **names, *slash;
		size_t n;
		/* the subsystem's path policy: .../nvme-subsystem/nvme-subsysN/iopolicy */
		snprintf(p, sizeof(p), "%s", d->syspath);
		slash = strrchr(p, '/');
		if (slash) {
			snprintf(slash, sizeof(p) - (size_t)(slash - p), "/iopolicy");
			if ((r = ns_read_str(env->root, p, &d->iopolicy)) < 0)
				ns_note_read(env->notes, name, "iopolicy", p, r, NULL);
		}
		if ((r = head_paths(env, d->syspath, name, &names, &n)) < 0) {
			snprintf(p, sizeof(p), "%s/../nvme*/nvme*c*n*", d->syspath);
			ns_note_read(env->notes, name, "paths", p, r, NULL);
			n = 0, names = NULL;
		}
		n = unique_paths(env, name, names, n);
		d->paths = calloc(n ? n : 1, sizeof(*d->paths));
		for (size_t i = 0; d->paths && i < n; i++) {
			char *real = names[i];
			r = resolve_path(env, real, &d->paths[d->npaths]);
			if (r < 0)
				break;
			d->paths[d->npaths].transport = NS_TRANSPORT_NVME;
			if ((r = read_mpath_attrs(env, name, &d->paths[d->npaths++])) < 0)
				break;
		}
		ns_strv_free(names, n);
	} else if (!ns_disk_is_virtual(d)) {
		d->paths = calloc(1, sizeof(*d->paths));
		if (!d->paths)
			return -ENOMEM;
		r = resolve_path(env, d->syspath, &d->paths[0]);
		if (r < 0)
			return r;
		d->npaths = 1;
	}
	if (!ns_root_needs(env->root, NS_NEED_QUEUES))
		return 0;
	read_alloc_facts(env, d);
	for (size_t i = 0; i < d->npaths; i++)
		read_hctx(env, d, &d->paths[i]);
	if (d->npaths == 0)
		read_hctx(env, d, &(struct ns_path){.disk_syspath = d->syspath});
	return 0;
}

void ns_disk_free(struct ns_disk *d)
{
	free(d->name);
	free(d->devnum);
	free(d->syspath);
	ns_strv_free(d->partitions, d->npartitions);
	ns_strv_free(d->slaves, d->nslaves);
	ns_strv_free(d->holders, d->nholders);
	free(d->backing_file);
	free(d->iopolicy);
	free(d->identity.model);
	free(d->identity.serial);
	free(d->identity.wwn);
	free(d->identity.by_id);
	for (size_t i = 0; i < d->npaths; i++) {
		struct ns_path *p = &d->paths[i];
		free(p->controller);
		free(p->disk_syspath);
		if (p->fabric)
			ns_fabric_free(p->fabric);
		free(p->fabric);
		if (p->vmbus) {
			free(p->vmbus->device_id);
			free(p->vmbus->channels);
			ns_cpuset_clear(&p->vmbus->channel_nodes);
			free(p->vmbus);
		}
		free(p->node_device);
		free(p->no_node_reason);
		ns_cpuset_clear(&p->numa_nodes);
		free(p->ana_state);
		ns_cpuset_clear(&p->serves_nodes);
	}
	free(d->paths);
	free(d->node_device);
	free(d->node_reason);
	for (size_t i = 0; i < d->nmembers; i++)
		free(d->members[i].name);
	free(d->members);
	ns_cpuset_clear(&d->local_cpus);
	free(d->scheduler);
	for (size_t i = 0; i < d->nhctx; i++) {
		free(d->hctx[i].controller);
		ns_cpuset_clear(&d->hctx[i].cpus);
		ns_cpuset_clear(&d->hctx[i].isolated);
		ns_cpuset_clear(&d->hctx[i].online);
		ns_cpuset_clear(&d->hctx[i].nodes);
	}
	free(d->hctx);
	free(d->alloc.device_basis);
	free(d->alloc.midlayer_basis);
	free(d->alloc.host_alloc_basis);
	free(d->alloc.host_alloc_module);
	free(d->alloc.tags_basis);
	free(d->alloc.descriptor_basis);
	ns_cpuset_clear(&d->alloc.descriptor_nodes);
	free(d->scsi_scan);
	ns_cpuset_clear(&d->alloc.hw_queue_nodes);
	ns_cpuset_clear(&d->alloc.tags_nodes);
	memset(d, 0, sizeof(*d));
}
