/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/pci.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "base/util.h"

bool ns_pci_is_function(struct ns_root *root, const char *path)
{
	char p[4096], *sub;
	bool yes;

	snprintf(p, sizeof(p), "%s/subsystem", path);
	if (ns_readlink_base(root, p, &sub) < 0)
		return false;
	yes = strcmp(sub, "pci") == 0;
	free(sub);
	return yes;
}

static bool lower_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* DDDD:BB:DD.F as the PCI core names a function ("%04x:%02x:%02x.%d"), the function 0-7 */
static bool is_bdf(const char *s)
{
	size_t i = 0;

	while (lower_hex(s[i]))
		i++;
	if (i < 4 || i > 8 || s[i++] != ':')
		return false;
	for (int field = 0; field < 2; field++, i += 3)
		if (!lower_hex(s[i]) || !lower_hex(s[i + 1]) || s[i + 2] != (field == 0 ? ':' : '.'))
			return false;
	return s[i] >= '0' && s[i] <= '7' && s[i + 1] == '\0';
}

static int read_node(struct ns_root *root, const char *dir, struct ns_notes *notes, const char *subj, const char *field)
{
	char p[4096], *raw = NULL;
	long long v;
	int r;

	/* -1 (none) or a node id below MAX_NUMNODES, in decimal: 4294967297 is not node 1 */
	snprintf(p, sizeof(p), "%s/numa_node", dir);
	r = ns_read_dec(root, p, -1, NS_NODE_MAX - 1, &v, &raw);
	if (r < 0) {
		if (notes)
			ns_note_read(notes, subj, field, p, r, raw);
		free(raw);
		return NS_NODE_UNREAD;
	}
	return (int)v;
}

static char *read_opt(struct ns_root *root, const char *dir, const char *file, struct ns_notes *notes, const char *subj,
		      const char *field)
{
	char p[4096], *v = NULL;
	int r;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	r = ns_read_str(root, p, &v);
	if (r < 0 && notes)
		ns_note_read(notes, subj, field, p, r, NULL);
	return r < 0 ? NULL : v;
}

/* An id file as the kernel prints it, "0x%04x" (vendor, device) or "0x%06x" (class): anything
 * else is null with a note quoting it, so the JSON's ids have the schema's form. */
static char *read_id(struct ns_root *root, const char *dir, const char *file, size_t digits, struct ns_notes *notes,
		     const char *subj, const char *field)
{
	char *v = read_opt(root, dir, file, notes, subj, field), p[4096];
	bool ok = v && strlen(v) == digits + 2 && v[0] == '0' && v[1] == 'x';

	for (size_t i = 2; ok && v[i]; i++)
		ok = isdigit((unsigned char)v[i]) || (v[i] >= 'a' && v[i] <= 'f');
	if (v && !ok) {
		snprintf(p, sizeof(p), "%s/%s", dir, file);
		if (notes)
			ns_note_read(notes, subj, field, p, -EINVAL, v);
		free(v);
		v = NULL;
	}
	return v;
}

/*
 * The root bus node: the node all CPUs in its cpulistaffinity belong to, -1 when they span
 * nodes. A node-less bus shows the online CPUs: when those sit on one node while other nodes'
 * CPUs are offline, NS_BUS_ONLINE_ONLY (the functions on it decide). An empty list is a bus on
 * a node without CPUs: that node when the function reads a CPU-less node, else unknown.
 */
static int read_bus_node(struct ns_root *root, const struct ns_machine *m, const struct ns_pci *pci, int *online_node,
			 struct ns_notes *notes)
{
	char p[4096], pm[4096], bus[64], *txt;
	const char *syspath = pci->syspath;
	bool mask;
	const char *top = strstr(syspath, "/pci");
	struct ns_cpuset cpus = {0}, nodes = {0};
	int r, node = NS_NODE_UNREAD;

	if (!top || sscanf(top + 4, "%63[0-9a-fA-F:]", bus) != 1)
		return NS_NODE_UNREAD;
	snprintf(p, sizeof(p), "%.*s/pci%s/pci_bus/%s/cpulistaffinity", (int)(top - syspath), syspath, bus, bus);
	snprintf(pm, sizeof(pm), "%.*s/pci%s/pci_bus/%s/cpuaffinity", (int)(top - syspath), syspath, bus, bus);
	r = ns_machine_read_cpus_text(root, p, pm, &txt, &mask, notes, pci->address, "pci.bus_node");
	if (r == -ENODATA) {
		txt = strdup("");
	} else if (r < 0) {
		ns_note_read(notes, pci->address, "pci.bus_node", mask ? pm : p, r, NULL);
		return NS_NODE_UNREAD;
	}
	/* a node whose CPUs are unknown leaves the CPU -> node map partial: no bus node from it */
	if (!ns_machine_cpu_map_complete(m)) {
		free(txt);
		return NS_NODE_UNREAD;
	}
	if (txt && (r = ns_machine_parse_cpus(m, &cpus, txt, mask)) < 0)
		ns_note_read(notes, pci->address, "pci.bus_node", mask ? pm : p, r, txt);
	else if (txt && ns_machine_nodes_of(m, &cpus, &nodes) == 0) {
		unsigned n = ns_cpuset_count(&nodes);
		if (ns_cpuset_count(&cpus) == 0) {
			const struct ns_node *own = pci->numa_node >= 0 ? ns_machine_node(m, pci->numa_node) : NULL;
			node = own && ns_cpuset_count(&own->cpus) == 0 ? own->id : NS_NODE_UNREAD;
		} else if (n == 1) {
			node = ns_cpuset_first(&nodes);
			if (ns_cpuset_equal(&cpus, &m->online) && ns_machine_offline_elsewhere(m, &nodes)) {
				*online_node = node;
				node = NS_BUS_ONLINE_ONLY;
			}
		} else {
			node = -1;
		}
	}
	free(txt);
	ns_cpuset_clear(&cpus);
	ns_cpuset_clear(&nodes);
	return node;
}

static void read_bridges(struct ns_root *root, struct ns_pci *pci, struct ns_notes *notes)
{
	/* each path component between "pciDDDD:BB" and the function itself is a bridge */
	char dir[4096];
	const char *p = strstr(pci->syspath, "/pci");
	size_t cap = 0;

	if (!p)
		return;
	p = strchr(p + 1, '/');
	while (p && *p) {
		const char *next = strchr(p + 1, '/');
		size_t len = next ? (size_t)(next - pci->syspath) : strlen(pci->syspath);
		char name[64];
		size_t nl = (size_t)((next ? next : pci->syspath + len) - (p + 1));
		if (!next || nl >= sizeof(name))
			break; /* the last component is the function itself */
		memcpy(name, p + 1, nl);
		name[nl] = '\0';
		if (is_bdf(name)) {
			snprintf(dir, sizeof(dir), "%.*s", (int)len, pci->syspath);
			if (pci->nbridges == cap) {
				size_t nc = cap ? cap * 2 : 4;
				int *nv = realloc(pci->bridge_nodes, nc * sizeof(int));
				if (!nv)
					return;
				pci->bridge_nodes = nv;
				cap = nc;
			}
			/* unread: noted, and the verdict that rests on it is not told */
			pci->bridge_nodes[pci->nbridges++] =
				read_node(root, dir, notes, pci->address, "pci.bridge_node");
		}
		p = next;
	}
}

int ns_pci_driver_forces(const char *driver, const struct ns_module *mod, int fix_in_kernel, const char *fix_basis,
			 char **basis)
{
	int r;

	if (!driver) {
		r = 0;
		*basis = ns_fmt("no driver is bound");
	} else if (strcmp(driver, "nvme") != 0) {
		r = 0;
		*basis = ns_fmt("driver %s does not set the node (only nvme-pci before dad651b2a44e forces the first "
				"memory node)",
				driver);
	} else if (mod && mod->patched == 1) {
		r = 0;
		*basis = ns_fmt("the running nvme carries numastor's fix (modinfo numastor=)");
	} else if (mod && mod->code != NS_CODE_UNJUDGED) {
		/* the module's own code, whatever its version says (a distribution may revert the fix) */
		r = mod->code == NS_CODE_PREFIX;
		*basis = ns_fmt("%s", mod->code_basis ? mod->code_basis : "?");
	} else if (mod && mod->out_of_tree == 1) {
		r = 1;
		*basis = ns_fmt("the running nvme is out of tree (taint O) without numastor's fix marker: it may be a "
				"pre-fix build");
	} else if (fix_in_kernel == 1) {
		r = 0;
		*basis = ns_fmt("the in-tree nvme has the fix: %s", fix_basis ? fix_basis : "?");
	} else if (fix_in_kernel == 0) {
		r = 1;
		*basis = ns_fmt("this kernel lacks the fix: %s", fix_basis ? fix_basis : "?");
	} else {
		r = -1;
		*basis = ns_fmt("whether this kernel's nvme has the fix is not known (%s): it may force",
				fix_basis ? fix_basis : "?");
	}
	/* judged by the manifest or the version: why not by the module, when something says */
	if (driver && strcmp(driver, "nvme") == 0 && mod && mod->patched != 1 && mod->code == NS_CODE_UNJUDGED &&
	    mod->code_basis && *basis) {
		char *b = ns_fmt("%s (not judged by its module: %s)", *basis, mod->code_basis);
		if (b) {
			free(*basis);
			*basis = b;
		}
	}
	return r;
}

static char *taint_text(long long tainted)
{
	return tainted < 0 ? ns_fmt("the kernel's taint is unknown")
			   : ns_fmt("the kernel is not tainted I (tainted %lld)", tainted);
}

void ns_pci_judge_node(const struct ns_node_facts *f, int *forced, int *set, int *bus_node, char **evidence)
{
	int bus = f->bus_node;
	char *t = NULL;

	*forced = -1;
	*set = -1;
	*evidence = NULL;
	if (f->numa_node == -1) {
		*forced = *set = 0;
		*bus_node = bus == NS_BUS_ONLINE_ONLY ? -1 : bus;
		return;
	}
	if (bus == NS_BUS_ONLINE_ONLY) {
		/* a node-less bus shows the online CPUs: the functions on it say which it is */
		bool above_without = f->siblings_without > 0;
		for (size_t i = 0; i < f->nbridges; i++)
			above_without |= f->bridge_nodes[i] == -1;
		if (!above_without && f->siblings_unread) {
			*bus_node = -1;
			*evidence =
				ns_fmt("root bus %s shows the online CPUs and the other functions on it, which tell "
				       "whether it spans every node, could not all be read (noted)",
				       f->bus ? f->bus : "?");
			return;
		}
		bus = above_without ? -1 : f->bus_online_node;
	}
	*bus_node = bus;
	if (f->numa_node == NS_NODE_UNREAD || !f->multi_node)
		return;
	/*
	 * Hyper-V's virtual PCI (pci-hyperv, Azure's NVMe and VFs): no firmware describes the
	 * bus; the driver gives each function the virtual NUMA node the host offers for it
	 * (hv_pci_assign_numa_node), before any driver binds. That node is the machine's truth,
	 * unless it is the first memory node and the driver bound could have forced it there
	 * because the host offered none.
	 */
	if (f->hyperv_vpci) {
		if (f->numa_node == f->first_memory_node && f->driver_forces != 0) {
			*evidence =
				ns_fmt("pci-hyperv gives the function the node the Hyper-V host offers; it reads %d, "
				       "the first memory node, where %s also puts it when the host offers none: "
				       "cannot tell which",
				       f->numa_node, f->driver ? f->driver : "its driver");
			return;
		}
		*forced = *set = 0;
		return;
	}
	if (bus == NS_NODE_UNREAD) {
		/* nodes that claim the same CPUs leave the bus's node untold by its CPUs: a node
		 * other than the first memory node (the one a forcing driver sets) was not forced,
		 * and is reported, unreliable as its node (node-cpus-overlap) */
		if (f->node_overlaps && f->first_memory_node >= 0 && f->numa_node != f->first_memory_node)
			*forced = 0;
		*evidence = ns_fmt("root bus %s's cpulistaffinity could not be read", f->bus ? f->bus : "?");
		return;
	}
	/* the firmware describes the bus: the function has the bus's node (or one set since) */
	if (bus >= 0) {
		*forced = 0;
		*set = f->numa_node != bus;
		if (*set)
			*evidence = ns_fmt("numa_node reads %d while root bus %s sits on node %d: set since the PCI "
					   "core gave it the bus's node",
					   f->numa_node, f->bus ? f->bus : "?", bus);
		return;
	}
	/* the first bridge above with a node decides; one that could not be read (noted) tells nothing */
	size_t first = 0;
	while (first < f->nbridges && f->bridge_nodes[first] == -1)
		first++;
	if (first < f->nbridges && f->bridge_nodes[first] == NS_NODE_UNREAD) {
		*evidence = ns_fmt("the numa_node of a bridge above it could not be read (noted)");
		return;
	}
	for (size_t i = 0; i < f->nbridges; i++)
		if (f->bridge_nodes[i] != -1) {
			*forced = 0;
			*set = f->bridge_nodes[i] >= 0 && f->bridge_nodes[i] != f->numa_node;
			if (*set)
				*evidence = ns_fmt("numa_node reads %d while a bridge above it reads %d", f->numa_node,
						   f->bridge_nodes[i]);
			return;
		}
	/* nothing above the function has a node: it was set after the PCI core gave it -1 */
	*forced = 0;
	*set = 1;
	if (f->tainted >= 0 && (f->tainted & NS_TAINT_FIRMWARE_WORKAROUND)) {
		*evidence = ns_fmt("numa_node reads %d while nothing above it has a node, and the kernel is tainted I "
				   "(TAINT_FIRMWARE_WORKAROUND, tainted %lld), as a write to numa_node leaves it: set "
				   "by hand, not by driver %s",
				   f->numa_node, f->tainted, f->driver ? f->driver : "(none)");
		return;
	}
	if (f->numa_node != f->first_memory_node) {
		*evidence = ns_fmt("numa_node reads %d while nothing above it has a node; a forcing driver sets the "
				   "first memory node (%d), not this one",
				   f->numa_node, f->first_memory_node);
		return;
	}
	if (f->siblings_vouching) {
		*evidence = ns_fmt("numa_node reads %d while nothing above it has a node, and %u other function(s) "
				   "on root bus %s not bound to %s read %d too: not that driver's doing",
				   f->numa_node, f->siblings_vouching, f->bus ? f->bus : "?",
				   f->driver ? f->driver : "(none)", f->numa_node);
		return;
	}
	if (f->driver_forces == 0) {
		*evidence = ns_fmt("numa_node reads %d (the first memory node) while nothing above it has a node, "
				   "but %s: set by someone else (by hand, the hypervisor's bus driver, or a driver "
				   "swapped out since: a forced node survives a driver swap)",
				   f->numa_node, f->driver_basis ? f->driver_basis : "its driver cannot force it");
		return;
	}
	if (f->siblings_unread) {
		/* one of them may read this node with another driver: a vouching sibling */
		*forced = *set = -1;
		*evidence = ns_fmt("numa_node reads %d (the first memory node) while nothing above it has a node, "
				   "and %u other function(s) on root bus %s could not be read (noted): whether one "
				   "of another driver reads it too is not known",
				   f->numa_node, f->siblings_unread, f->bus ? f->bus : "?");
		return;
	}
	*forced = 1;
	*set = 0;
	t = taint_text(f->tainted);
	*evidence = ns_fmt("numa_node reads %d (the first memory node) while root bus %s spans every node, %zu "
			   "bridge(s) above read -1, %u other function(s) on the bus read -1 and %u of driver %s read "
			   "%d too (%u on other nodes, set by something else, have no bearing); %s; %s",
			   f->numa_node, f->bus ? f->bus : "?", f->nbridges, f->siblings_without,
			   f->siblings_same_driver, f->driver ? f->driver : "(none)", f->numa_node,
			   f->siblings_elsewhere, t ? t : "?", f->driver_basis ? f->driver_basis : "?");
	free(t);
}

/*
 * The functions directly on a root bus, as the functions under it see one another: each one's
 * node and driver, read the first time a function asks and kept for the next. One function
 * would read its N siblings' files; N functions on one bus read them N times over (64 reads
 * of each root port on a bus of eight NVMe drives, 1,000 a bus at 32).
 */
struct bus_fn {
	char *name;
	int node;	/* read_node's answer; node_read says whether it was asked */
	char *driver;	/* its driver link's last component, NULL when none or unreadable */
	int driver_err; /* the link's -errno but -ENOENT (no driver), noted when read */
	bool node_read, driver_read;
};

struct ns_pci_bus {
	char *dir;  /* sys/devices/pci0000:00 */
	int listed; /* 0, or the listing's -errno */
	bool noted; /* a failed listing noted */
	struct bus_fn *fns;
	size_t n;
};

struct ns_pci_buses {
	struct ns_pci_bus *v;
	size_t n, cap;
};

struct ns_pci_buses *ns_pci_buses_new(void)
{
	return calloc(1, sizeof(struct ns_pci_buses));
}

static void bus_free(struct ns_pci_bus *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->fns[i].name);
		free(b->fns[i].driver);
	}
	free(b->fns);
	free(b->dir);
	memset(b, 0, sizeof(*b)); /* freed again by a caller that had it listed into its own */
}

void ns_pci_buses_free(struct ns_pci_buses *buses)
{
	if (!buses)
		return;
	for (size_t i = 0; i < buses->n; i++)
		bus_free(&buses->v[i]);
	free(buses->v);
	free(buses);
}

/* dir's functions (listed once); -ENOMEM */
static int bus_list(struct ns_root *root, const char *dir, struct ns_pci_bus *b)
{
	char **names = NULL;
	size_t n = 0;

	memset(b, 0, sizeof(*b));
	b->dir = strdup(dir);
	if (!b->dir)
		return -ENOMEM;
	b->listed = ns_list_dir(root, dir, &names, &n);
	if (b->listed < 0)
		return 0;
	b->fns = calloc(n ? n : 1, sizeof(*b->fns));
	if (!b->fns) {
		ns_strv_free(names, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (!is_bdf(names[i])) {
			free(names[i]);
			continue;
		}
		b->fns[b->n++].name = names[i];
	}
	free(names);
	return 0;
}

/* The bus at dir: from buses when it was listed before, else listed into *tmp (buses NULL, or
 * no room to keep it). NULL when out of memory. */
static struct ns_pci_bus *bus_of(struct ns_root *root, struct ns_pci_buses *buses, const char *dir,
				 struct ns_pci_bus *tmp)
{
	for (size_t i = 0; buses && i < buses->n; i++)
		if (strcmp(buses->v[i].dir, dir) == 0)
			return &buses->v[i];
	if (bus_list(root, dir, tmp) < 0) {
		bus_free(tmp);
		return NULL;
	}
	if (buses && buses->n == buses->cap) {
		size_t nc = buses->cap ? buses->cap * 2 : 8;
		struct ns_pci_bus *nv = realloc(buses->v, nc * sizeof(*nv));
		if (nv) {
			buses->v = nv;
			buses->cap = nc;
		}
	}
	if (!buses || buses->n == buses->cap)
		return tmp;
	buses->v[buses->n] = *tmp;
	memset(tmp, 0, sizeof(*tmp));
	return &buses->v[buses->n++];
}

/* The other functions directly on the root bus: which node each reads, and whose they are. */
static void read_siblings(struct ns_root *root, struct ns_pci *pci, struct ns_pci_buses *buses, struct ns_notes *notes)
{
	const char *top = strstr(pci->syspath, "/pci");
	const char *end = top ? strchr(top + 1, '/') : NULL;
	char busdir[4096];
	struct ns_pci_bus tmp = {0}, *bus;

	if (!end)
		return;
	snprintf(busdir, sizeof(busdir), "%.*s", (int)(end - pci->syspath), pci->syspath);
	bus = bus_of(root, buses, busdir, &tmp);
	if (bus && bus->listed < 0) {
		/* noted by the function that listed it, once a bus (each run of a bus not kept) */
		if (!bus->noted)
			ns_note_read(notes, pci->address, "pci.siblings", busdir, bus->listed, NULL);
		bus->noted = true;
		pci->facts.siblings_unread++;
	}
	if (!bus || bus->listed < 0) {
		bus_free(&tmp);
		return;
	}
	for (size_t i = 0; i < bus->n; i++) {
		struct bus_fn *f = &bus->fns[i];
		char dir[4096];
		if (strcmp(f->name, pci->address) == 0)
			continue;
		if (!f->node_read) {
			snprintf(dir, sizeof(dir), "%s/%s", busdir, f->name);
			/* a failed read noted once, by the first function that asks; a garbled or empty
			 * value is that function's own note (pci.numa_node), not noted twice */
			char p[4096];
			long long v;
			snprintf(p, sizeof(p), "%s/numa_node", dir);
			int r = ns_read_dec(root, p, -1, NS_NODE_MAX - 1, &v, NULL);
			f->node = r < 0 ? NS_NODE_UNREAD : (int)v;
			if (r < 0 && r != -EINVAL && r != -ERANGE && r != -ENODATA)
				ns_note_read(notes, pci->address, "pci.siblings", p, r, NULL);
			f->node_read = true;
		}
		if (f->node == NS_NODE_UNREAD) {
			pci->facts.siblings_unread++;
		} else if (f->node == -1) {
			pci->facts.siblings_without++;
		} else if (f->node >= 0 && f->node == pci->numa_node) {
			if (!f->driver_read) {
				snprintf(dir, sizeof(dir), "%s/%s/driver", busdir, f->name);
				int r = ns_readlink_base(root, dir, &f->driver);
				if (r < 0)
					f->driver = NULL;
				if (r < 0 && r != -ENOENT) {
					f->driver_err = r;
					ns_note_read(notes, pci->address, "pci.siblings", dir, r, NULL);
				}
				f->driver_read = true;
			}
			if (f->driver_err)
				pci->facts.siblings_unread++;
			else if (f->driver && pci->driver && strcmp(f->driver, pci->driver) == 0)
				pci->facts.siblings_same_driver++;
			else
				pci->facts.siblings_vouching++;
		} else if (f->node >= 0) {
			pci->facts.siblings_elsewhere++;
		}
	}
	bus_free(&tmp);
}

static void judge(struct ns_pci *pci)
{
	char *ev = NULL;

	free(pci->forced_evidence);
	free(pci->node_set_evidence);
	pci->forced_evidence = pci->node_set_evidence = NULL;
	pci->facts.bridge_nodes = pci->bridge_nodes;
	pci->facts.nbridges = pci->nbridges;
	pci->facts.driver = pci->driver;
	pci->facts.driver_basis = pci->driver_basis;
	ns_pci_judge_node(&pci->facts, &pci->forced, &pci->node_set, &pci->bus_node, &ev);
	if (pci->forced != 0) /* forced, or why it cannot be told */
		pci->forced_evidence = ev;
	else if (pci->node_set == 1)
		pci->node_set_evidence = ev;
	else
		free(ev);
}

void ns_pci_rejudge(struct ns_pci *pci, int fix_in_kernel, const char *fix_basis)
{
	free(pci->driver_basis);
	pci->driver_basis = NULL;
	pci->facts.driver_forces =
		ns_pci_driver_forces(pci->driver, pci->module, fix_in_kernel, fix_basis, &pci->driver_basis);
	judge(pci);
}

static void detect_forced(struct ns_root *root, const struct ns_machine *m, struct ns_pci *pci,
			  struct ns_pci_buses *buses, struct ns_notes *notes)
{
	const char *top = strstr(pci->syspath, "/pci");
	char bus[64];

	bus[0] = '\0';
	if (top)
		sscanf(top + 4, "%63[0-9a-fA-F:]", bus);
	pci->facts.numa_node = pci->numa_node;
	pci->facts.first_memory_node = m->first_memory_node;
	pci->facts.multi_node = ns_machine_multi_node(m);
	pci->facts.node_overlaps = ns_machine_node_overlaps(m, pci->numa_node);
	pci->facts.tainted = m->tainted;
	pci->facts.bus = NULL;
	pci->facts.hyperv_vpci = strstr(pci->syspath, "/VMBUS:") != NULL;
	pci->facts.bus_online_node = -1;
	pci->facts.bus_node = read_bus_node(root, m, pci, &pci->facts.bus_online_node, notes);
	read_siblings(root, pci, buses, notes);
	pci->bus_name = strdup(bus);
	pci->facts.bus = pci->bus_name;
	/* by the kernel version alone; the system knows better from the module build's manifest */
	ns_pci_rejudge(pci, ns_machine_kernel_at_least(m, 6, 6) ? 1 : -1,
		       ns_machine_kernel_at_least(m, 6, 6)
			       ? "upstream since v6.6 (dad651b2a44e)"
			       : "before v6.6 it depends on the stable backport (6.1.56, 5.10.y)");
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* nvme vectors are named nvme<ctl>q<N>: queue N serves hctx N-1. */
static int nvme_queue_of(const char *name)
{
	const char *q;
	uint64_t v;

	if (!name || strncmp(name, "nvme", 4) != 0)
		return -1;
	q = strchr(name + 4, 'q');
	if (!q)
		return -1;
	q++;
	if (ns_parse_dec_prefix(&q, INT_MAX, &v) < 0 || *q)
		return -1;
	return (int)v;
}

/* virtio vectors: virtio<N>-req.<q> (virtio-blk) or virtio<N>-request (virtio-scsi, in order). */
static void pair_virtio(struct ns_pci *pci)
{
	int next_request = 0;

	for (size_t i = 0; i < pci->nirqs; i++) {
		const char *name = pci->irqs[i].name, *vq;
		if (!name || strncmp(name, "virtio", 6) != 0 || !(vq = strchr(name, '-')))
			continue;
		vq++;
		const char *qn = vq + 4;
		uint64_t q;
		if (strncmp(vq, "req.", 4) == 0 && ns_parse_dec_prefix(&qn, INT_MAX, &q) == 0 && !*qn)
			pci->irqs[i].hw_queue = (int)q;
		else if (strcmp(vq, "request") == 0 || strncmp(vq, "request.", 8) == 0)
			pci->irqs[i].hw_queue = next_request++;
	}
}

bool ns_irq_queue_by_order(const struct ns_irq *irq)
{
	const char *vq = irq && irq->name && strncmp(irq->name, "virtio", 6) == 0 ? strchr(irq->name, '-') : NULL;

	return vq && (strcmp(vq + 1, "request") == 0 || strncmp(vq + 1, "request.", 8) == 0);
}

bool ns_irq_holds_cpus(const struct ns_irq *irq, const struct ns_cpuset *cpus)
{
	if (!irq || irq->managed != 1 || !irq->affinity.known || !cpus || !cpus->known || !ns_cpuset_count(cpus))
		return true; /* nothing to tell by */
	return ns_cpuset_subset(cpus, &irq->affinity);
}

const struct ns_irq *ns_pci_irq_by_cpus(const struct ns_pci *pci, const struct ns_cpuset *cpus, bool *ambiguous)
{
	const struct ns_irq *best = NULL;
	unsigned best_n = 0;
	bool tie = false;

	if (ambiguous)
		*ambiguous = false;
	if (!cpus || !cpus->known || !ns_cpuset_count(cpus))
		return NULL;
	for (size_t i = 0; i < pci->nirqs; i++) {
		const struct ns_irq *irq = &pci->irqs[i];
		unsigned n;
		if (irq->managed != 1 || !irq->affinity.known || !ns_cpuset_subset(cpus, &irq->affinity))
			continue;
		n = ns_cpuset_count(&irq->affinity);
		if (!best || n < best_n) {
			best = irq;
			best_n = n;
			tie = false;
		} else if (n == best_n) {
			tie = true;
		}
	}
	if (tie) {
		if (ambiguous)
			*ambiguous = true;
		return NULL;
	}
	return best;
}

size_t ns_pci_unpair_absent(struct ns_pci *pci, const char *disk, const int *listed, size_t n, struct ns_notes *notes)
{
	struct ns_cpuset queues = {0};
	int *nums = calloc(pci->nirqs ? pci->nirqs : 1, sizeof(*nums));
	char *q = NULL, *v = NULL;
	size_t gone = 0, vlen = 0;
	FILE *f;

	for (size_t i = 0; i < pci->nirqs; i++) {
		struct ns_irq *irq = &pci->irqs[i];
		bool there = false;
		if (irq->hw_queue < 0)
			continue;
		for (size_t k = 0; k < n && !there; k++)
			there = listed[k] == irq->hw_queue;
		if (there)
			continue;
		if (ns_cpuset_set(&queues, (unsigned)irq->hw_queue) == 0) /* the indices as a list, "0-18" */
			queues.known = true;
		if (nums)
			nums[gone] = irq->irq; /* in order: the slots are sorted by number */
		irq->hw_queue = -1;
		gone++;
	}
	if (gone && nums && ns_cpuset_format(&queues, &q) == 0 && (f = open_memstream(&v, &vlen))) {
		ns_irq_list_write(f, nums, gone);
		if (fclose(f) == 0)
			ns_note(notes, disk, "hw_queues.irq",
				"%s of %s name%s hardware queue%s %s, which %s does not have (blk-mq registers no "
				"queue "
				"that no CPU maps to): paired with none",
				v, pci->address, gone == 1 ? "s" : "", gone == 1 ? "" : "s", q, disk);
	}
	free(q);
	free(v);
	free(nums);
	ns_cpuset_clear(&queues);
	return gone;
}

/* One IRQ per slot, read on the root's threads (ns_root_parallel); slots are assembled in order. */
struct irq_batch {
	struct ns_root *root;
	const struct ns_machine *m;
	const int *nums;
	bool msi, debugfs;
	struct ns_irq *irqs;	/* slot i: IRQ nums[i] */
	struct ns_notes *notes; /* slot i's notes */
	int *ret;		/* slot i's ns_irq_read result */
};

static void read_irq_item(size_t i, void *data)
{
	struct irq_batch *b = data;

	b->ret[i] = ns_irq_read(b->root, b->m, b->nums[i], b->msi, b->debugfs, &b->irqs[i], &b->notes[i]);
}

/* The notes of a slot, after those before it: as if read one after the other. */
static void move_notes(struct ns_notes *to, struct ns_notes *from)
{
	for (size_t k = 0; k < from->n; k++)
		ns_note(to, from->v[k].subject, from->v[k].field, "%s", from->v[k].message);
	ns_notes_free(from);
}

static void read_irqs(struct ns_root *root, const struct ns_machine *m, struct ns_pci *pci, struct ns_notes *notes)
{
	char p[4096];
	char **names = NULL;
	size_t n = 0;
	int *nums = NULL;
	size_t nnums = 0;
	bool msi = true, debugfs;
	int r;

	snprintf(p, sizeof(p), "%s/msi_irqs", pci->syspath);
	r = ns_list_dir(root, p, &names, &n);
	if (r < 0 && r != -ENOENT)
		/* unread, not absent: the legacy line below is then all that is known */
		ns_note_read(notes, pci->address, "irqs", p, r, NULL);
	if (r == 0 && n > 0) {
		nums = calloc(n, sizeof(int));
		for (size_t i = 0; nums && i < n; i++) {
			long long v;
			if (ns_parse_dec(names[i], 0, INT_MAX, &v) < 0)
				continue;
			nums[nnums++] = (int)v;
		}
		ns_strv_free(names, n);
	} else {
		long long v;
		ns_strv_free(names, n);
		msi = false;
		snprintf(p, sizeof(p), "%s/irq", pci->syspath);
		if ((r = ns_read_dec(root, p, 1, INT_MAX, &v, NULL)) == 0) {
			nums = calloc(1, sizeof(int));
			if (nums)
				nums[nnums++] = (int)v;
		} else if (r != -ENOENT && r != -EINVAL && r != -ERANGE) {
			ns_note_read(notes, pci->address, "irqs", p, r, NULL);
		}
	}
	if (!nums)
		return;
	debugfs = m->irq_debugfs == 1; /* looked up once for the machine (ns_machine_read) */
	qsort(nums, nnums, sizeof(int), cmp_int);
	pci->irqs = calloc(nnums ? nnums : 1, sizeof(*pci->irqs));
	struct irq_batch b = {.root = root,
			      .m = m,
			      .nums = nums,
			      .msi = msi,
			      .debugfs = debugfs,
			      .irqs = pci->irqs,
			      .notes = calloc(nnums ? nnums : 1, sizeof(*b.notes)),
			      .ret = calloc(nnums ? nnums : 1, sizeof(*b.ret))};
	if (!pci->irqs || !b.notes || !b.ret) {
		free(pci->irqs);
		pci->irqs = NULL;
		free(b.notes);
		free(b.ret);
		free(nums);
		return;
	}
	/* every vector's files are under these: their walks start there */
	static const char *const under[] = {"proc/irq", "sys/kernel/irq", "sys/kernel/debug/irq/irqs"};
	size_t held = 0;
	for (size_t i = 0; i < (debugfs ? 3u : 2u); i++)
		held += ns_root_hold_dir(root, under[i]) == 0;
	ns_root_parallel(root, nnums, read_irq_item, &b);
	while (held--)
		ns_root_drop_dir(root);
	/* in the listed order, the slots that read moved down over those that did not */
	for (size_t i = 0; i < nnums; i++) {
		struct ns_irq *irq = &pci->irqs[pci->nirqs];
		r = b.ret[i];
		move_notes(notes, &b.notes[i]);
		if (r == -ENOENT) {
			char subj[32];
			snprintf(subj, sizeof(subj), "irq %d", nums[i]);
			ns_note(notes, subj, "irq", "listed in /%s/msi_irqs but gone from /proc/irq: skipped",
				pci->syspath);
		} else if (r < 0) {
			char subj[32];
			snprintf(subj, sizeof(subj), "irq %d", nums[i]);
			ns_note(notes, subj, "irq", "listed in /%s/msi_irqs and could not be read: %s: skipped",
				pci->syspath, strerror(-r));
		}
		if (r < 0) {
			ns_irq_free(&pci->irqs[i]);
			continue;
		}
		if (irq != &pci->irqs[i]) {
			*irq = pci->irqs[i];
			memset(&pci->irqs[i], 0, sizeof(pci->irqs[i]));
		}
		irq->queue_of_ctl = nvme_queue_of(irq->name);
		if (pci->driver && strcmp(pci->driver, "nvme") == 0 && irq->queue_of_ctl > 0)
			irq->hw_queue = irq->queue_of_ctl - 1;
		pci->nirqs++;
	}
	free(b.notes);
	free(b.ret);
	free(nums);
	ns_irq_share_chips(pci->irqs, pci->nirqs);
	if (pci->driver && strncmp(pci->driver, "virtio", 6) == 0)
		pair_virtio(pci);
	for (size_t i = 0; i < pci->nirqs; i++)
		ns_irq_guess_managed(&pci->irqs[i], pci->driver, (unsigned)pci->nirqs);
}

int ns_pci_read(struct ns_root *root, const struct ns_machine *m, struct ns_modules *mods, struct ns_pci_buses *buses,
		const char *syspath, struct ns_pci *pci, struct ns_notes *notes)
{
	const char *base = strrchr(syspath, '/');
	char p[4096], pm[4096], *txt;
	bool mask;
	int r;

	memset(pci, 0, sizeof(*pci));
	pci->syspath = strdup(syspath);
	pci->address = strdup(base ? base + 1 : syspath);
	if (!pci->syspath || !pci->address)
		return -ENOMEM;
	pci->vendor = read_id(root, syspath, "vendor", 4, notes, pci->address, "pci.vendor");
	pci->device = read_id(root, syspath, "device", 4, notes, pci->address, "pci.device");
	pci->class_code = read_id(root, syspath, "class", 6, notes, pci->address, "pci.class");
	snprintf(p, sizeof(p), "%s/driver", syspath);
	r = ns_readlink_base(root, p, &pci->driver);
	if (r < 0 && r != -ENOENT)
		ns_note_read(notes, pci->address, "pci.driver", p, r, NULL);
	if (pci->driver)
		ns_modules_lookup(mods, pci->driver, notes, &pci->module);
	/* a VF probed while its PF's driver probes runs on the calling CPU (pci_physfn_is_probed) */
	snprintf(p, sizeof(p), "%s/physfn", syspath);
	r = ns_probe(root, p);
	if (r < 0)
		ns_note_read(notes, pci->address, "pci.virtfn", p, r, NULL);
	pci->virtfn = r < 0 ? -1 : r;
	pci->numa_node = read_node(root, syspath, notes, pci->address, "pci.numa_node");
	if (pci->numa_node >= 0 && !ns_machine_node(m, pci->numa_node)) {
		ns_note(notes, pci->address, "pci.numa_node",
			"/%s/numa_node names node %d, which this machine does not have", syspath, pci->numa_node);
		pci->numa_node = NS_NODE_UNREAD;
	}
	snprintf(p, sizeof(p), "%s/local_cpulist", syspath);
	snprintf(pm, sizeof(pm), "%s/local_cpus", syspath);
	if ((r = ns_machine_read_cpus_text(root, p, pm, &txt, &mask, notes, pci->address, "pci.local_cpus")) == 0) {
		if ((r = ns_machine_parse_cpus(m, &pci->local_cpus, txt, mask)) < 0)
			ns_note_read(notes, pci->address, "pci.local_cpus", mask ? pm : p, r, txt);
		free(txt);
	} else if (r == -ENODATA) {
		/* a function on a node without CPUs (cpumask_of_node is empty) */
		ns_cpuset_clear(&pci->local_cpus);
		pci->local_cpus.known = true;
	} else {
		ns_note_read(notes, pci->address, "pci.local_cpus", mask ? pm : p, r, NULL);
	}
	read_bridges(root, pci, notes);
	detect_forced(root, m, pci, buses, notes);
	if (ns_root_needs(root, NS_NEED_IRQS))
		read_irqs(root, m, pci, notes);
	return 0;
}

void ns_pci_free(struct ns_pci *pci)
{
	free(pci->address);
	free(pci->syspath);
	free(pci->vendor);
	free(pci->device);
	free(pci->class_code);
	free(pci->driver);
	ns_cpuset_clear(&pci->local_cpus);
	free(pci->bridge_nodes);
	free(pci->forced_evidence);
	free(pci->node_set_evidence);
	free(pci->driver_basis);
	free(pci->bus_name);
	for (size_t i = 0; i < pci->nirqs; i++)
		ns_irq_free(&pci->irqs[i]);
	free(pci->irqs);
	memset(pci, 0, sizeof(*pci));
}

const struct ns_irq *ns_pci_irq_for_queue(const struct ns_pci *pci, int q)
{
	for (size_t i = 0; i < pci->nirqs; i++)
		if (pci->irqs[i].hw_queue == q)
			return &pci->irqs[i];
	return NULL;
}
