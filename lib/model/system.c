/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "model/system.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/oom.h"
#include "model/alloc.h"
#include "model/mpath.h"
#include "read/devarg.h"
#include "read/identity.h"
#include "state/journal.h"
#include "state/manifest.h"
#include "read/rates.h"
#include "base/util.h"

/* FNV-1a: the PCI cache's hash of a function's syspath */
static size_t hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

/* The slot of syspath in the PCI cache's hash: its function's, else the empty one it goes in. */
static size_t pci_slot(const struct ns_system *sys, const char *syspath)
{
	size_t mask = sys->npci_slots - 1, i = hash_str(syspath) & mask;

	while (sys->pci_slots[i] && strcmp(sys->pcis[sys->pci_slots[i] - 1]->syspath, syspath) != 0)
		i = (i + 1) & mask;
	return i;
}

/* Room for one more function in the cache: the list and (at most half full) its hash. */
static int pci_room(struct ns_system *sys)
{
	if (sys->npcis == sys->cap_pcis) {
		size_t cap = sys->cap_pcis ? sys->cap_pcis * 2 : 16;
		struct ns_pci **nv = realloc(sys->pcis, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		sys->pcis = nv;
		sys->cap_pcis = cap;
	}
	if (2 * (sys->npcis + 1) > sys->npci_slots) {
		size_t n = sys->npci_slots ? sys->npci_slots * 2 : 64;
		size_t *slots = calloc(n, sizeof(*slots));
		if (!slots)
			return -ENOMEM;
		free(sys->pci_slots);
		sys->pci_slots = slots;
		sys->npci_slots = n;
		for (size_t k = 0; k < sys->npcis; k++)
			sys->pci_slots[pci_slot(sys, sys->pcis[k]->syspath)] = k + 1;
	}
	return 0;
}

int ns_system_pci(struct ns_system *sys, const char *syspath, struct ns_pci **out)
{
	struct ns_pci *pci;
	size_t slot;
	int r;

	/* a hash, not a walk of the list: a machine's disks look their functions up in linear time */
	if (sys->npci_slots && sys->pci_slots[slot = pci_slot(sys, syspath)]) {
		*out = sys->pcis[sys->pci_slots[slot] - 1];
		return 0;
	}
	if ((r = pci_room(sys)) < 0)
		return r;
	pci = calloc(1, sizeof(*pci));
	if (!pci)
		return -ENOMEM;
	if (!sys->buses && !(sys->buses = ns_pci_buses_new())) {
		free(pci);
		return -ENOMEM;
	}
	r = ns_pci_read(sys->root, &sys->machine, sys->modules, sys->buses, syspath, pci, &sys->notes);
	if (r < 0) {
		ns_pci_free(pci);
		free(pci);
		return r;
	}
	/* whether nvme can force a node: the manifest knows the kernel's fix better than its version */
	if (sys->fixes[0].series)
		ns_pci_rejudge(pci, sys->fixes[0].in_kernel, sys->fixes[0].basis);
	sys->pcis[sys->npcis++] = pci;
	sys->pci_slots[pci_slot(sys, pci->syspath)] = sys->npcis;
	*out = pci;
	return 0;
}

/* The index of the disks by name, for ns_system_disk: made again whenever the disks change. */
static int index_disks(struct ns_system *sys);

static int pci_of_system(void *data, const char *syspath, struct ns_pci **out)
{
	return ns_system_pci(data, syspath, out);
}

/* The node of a path without a PCI function: the device that has one, or why there is none. */
static int path_device_node(struct ns_disk *d, const struct ns_path *path)
{
	if (path->device_node >= 0) {
		d->node_source = path->node_basis;
		free(d->node_device);
		d->node_device = path->node_device ? strdup(path->node_device) : NULL;
		return path->device_node;
	}
	d->node_source = path->node_device ? path->node_basis
			 : path->fabric	   ? NS_NODE_SRC_UNKNOWN /* a carrier it could not find */
					   : NS_NODE_SRC_NONE;
	free(d->node_reason);
	d->node_reason = path->no_node_reason ? strdup(path->no_node_reason) : NULL;
	return -1;
}

/*
 * The node the disk really sits on: its function's node, unless forced or the paths disagree;
 * without a function, the device on its path that has a node (ns_path.device_node). A fabric
 * path's function is the one that carries the transport.
 */
static void resolve_node(struct ns_disk *d)
{
	int node = -2;
	bool fabric = false;
	const struct ns_pci *first = NULL;

	d->node = -1;
	if (d->npaths == 0) {
		d->node_source = NS_NODE_SRC_NONE;
		return; /* md/dm (their members: resolve_members), loop, zram */
	}
	if (!d->paths[0].pci && (d->npaths == 1 || !d->paths[0].fabric)) {
		d->node = path_device_node(d, &d->paths[0]);
		return;
	}
	for (size_t i = 0; i < d->npaths; i++) {
		const struct ns_pci *pci = d->paths[i].pci;
		int n;
		if (!pci) {
			d->node_source = NS_NODE_SRC_UNKNOWN;
			free(d->node_reason);
			d->node_reason =
				ns_fmt("path %s: %s", d->paths[i].controller ? d->paths[i].controller : "?",
				       d->paths[i].no_node_reason ? d->paths[i].no_node_reason : "no PCI function");
			ns_cpuset_clear(&d->local_cpus);
			return;
		}
		fabric = fabric || d->paths[i].fabric;
		if (!first)
			first = pci;
		if (pci->forced == 1) {
			d->node_source = NS_NODE_SRC_FORCED;
			return;
		}
		if (pci->forced < 0 && pci->facts.multi_node && pci->numa_node >= 0) {
			/* whether the node was forced is not known (an unreadable bus or node): the
			 * node it reads is no answer */
			d->node_source = NS_NODE_SRC_UNKNOWN;
			return;
		}
		if (pci->node_set == 1) {
			/* not the firmware's: the bus's node when it has one, else none */
			d->node_source = NS_NODE_SRC_SET;
			if (d->npaths == 1 && pci->bus_node >= 0)
				d->node = pci->bus_node;
			return;
		}
		n = pci->numa_node >= 0 ? pci->numa_node : -1;
		if (node != -2 && n != node) {
			d->node_source = NS_NODE_SRC_PATHS_DISAGREE;
			ns_cpuset_clear(&d->local_cpus); /* no one set of local CPUs */
			return;
		}
		node = n;
		ns_cpuset_or(&d->local_cpus, &pci->local_cpus);
		d->local_cpus.known = d->local_cpus.known || pci->local_cpus.known;
	}
	if (node >= 0) {
		d->node = node;
		d->node_source = fabric ? NS_NODE_SRC_FABRIC : NS_NODE_SRC_PCI;
		bool one_function = true;
		for (size_t i = 0; i < d->npaths; i++)
			one_function = one_function && d->paths[i].pci == first;
		if (one_function && first)
			d->node_device = strdup(first->syspath);
	} else {
		d->node_source = NS_NODE_SRC_UNKNOWN;
	}
}

/* Why a disk whose node is null has none, where resolve_node did not already say. */
static int fill_reason(struct ns_disk *d)
{
	const struct ns_pci *pci = d->npaths ? d->paths[0].pci : NULL;

	if (d->node >= 0 || d->node_reason)
		return 0;
	switch (d->node_source) {
	case NS_NODE_SRC_FORCED:
		d->node_reason =
			ns_fmt("the driver forced the PCI function's node: what it reads is not the firmware's");
		break;
	case NS_NODE_SRC_SET:
		d->node_reason = ns_fmt("the PCI function's node was set by someone other than the firmware, and its "
					"root bus has no node of its own");
		break;
	case NS_NODE_SRC_PATHS_DISAGREE:
		d->node_reason = ns_fmt("its paths' PCI functions sit on different nodes");
		break;
	case NS_NODE_SRC_UNKNOWN:
		d->node_reason = pci && pci->numa_node == -1
					 ? ns_fmt("PCI function %s reads numa_node -1: the firmware gave it no node",
						  pci->address)
				 : pci && pci->forced_evidence
					 ? strdup(pci->forced_evidence)
					 : ns_fmt("whether the PCI function's node was forced cannot be told, or it "
						  "could not be read");
		break;
	default:
		d->node_reason = d->kind == NS_DISK_LOOP   ? ns_fmt("a loop device: its I/O goes to its backing file")
				 : d->kind == NS_DISK_ZRAM ? ns_fmt("zram: compressed memory, no device")
							   : ns_fmt("no device on its sysfs path has a numa_node");
	}
	return d->node_reason ? 0 : -ENOMEM;
}

/* md or dm by name, as the kernel names them */
static bool stacked_name(const char *name)
{
	return strncmp(name, "dm-", 3) == 0 || (strncmp(name, "md", 2) == 0 && name[2] >= '0' && name[2] <= '9');
}

/* The disk a block device name belongs to: a partition's parent, else the name itself. */
static int disk_of(struct ns_root *root, const char *name, char **out)
{
	char p[512], *real = NULL, *slash;
	int r;

	snprintf(p, sizeof(p), "sys/class/block/%s/partition", name);
	if ((r = ns_probe(root, p)) < 0)
		return r; /* a partition or a disk: not known */
	if (r == 0)
		return (*out = strdup(name)) ? 0 : -ENOMEM;
	snprintf(p, sizeof(p), "sys/class/block/%s", name);
	if ((r = ns_realpath(root, p, &real)) < 0)
		return r;
	slash = strrchr(real, '/');
	if (slash)
		*slash = '\0';
	slash = strrchr(real, '/');
	*out = strdup(slash ? slash + 1 : real);
	free(real);
	return *out ? 0 : -ENOMEM;
}

/* The node of disk name: from the model when it is there, else read now (check md0 alone). */
static int member_node(struct ns_system *sys, struct ns_disk_env *env, const char *name, int *node)
{
	struct ns_disk tmp;
	const struct ns_disk *d = ns_system_disk(sys, name);
	int r;

	if (d) {
		*node = d->node;
		return 0;
	}
	*node = -1;
	r = ns_disk_read(env, name, &tmp);
	if (r == 0)
		resolve_node(&tmp);
	if (r == 0 || r == -ENOENT)
		*node = r == 0 ? tmp.node : -1;
	ns_disk_free(&tmp);
	return r == -ENOMEM ? r : 0;
}

#define STACK_DEPTH 8

/* A set of names (borrowed), hashed: what one md/dm's walk has met. */
struct name_set {
	const char **slot;
	size_t cap, n; /* cap: a power of two, at least twice n */
};

/* 1 when name joined the set, 0 when it was there already, -ENOMEM. */
static int name_set_add(struct name_set *s, const char *name)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		const char **slot = calloc(cap, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		for (size_t k = 0; k < s->cap; k++) {
			if (!s->slot[k])
				continue;
			for (i = hash_str(s->slot[k]) & (cap - 1); slot[i]; i = (i + 1) & (cap - 1))
				;
			slot[i] = s->slot[k];
		}
		free(s->slot);
		s->slot = slot;
		s->cap = cap;
	}
	for (i = hash_str(name) & (s->cap - 1); s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (strcmp(s->slot[i], name) == 0)
			return 0;
	s->slot[i] = name;
	s->n++;
	return 1;
}

/* One md/dm's walk down its slaves: each leaf and each stacked device met is taken once, so a
 * device reached by many paths (partitions of one disk, a diamond of stacked devices) costs one
 * visit, not one per path. */
struct members_walk {
	struct ns_system *sys;
	struct ns_disk_env *env;
	struct ns_disk *top;
	struct name_set seen; /* borrows the members' names and stacked[] */
	char **stacked;	      /* the stacked devices walked */
	size_t nstacked;
};

/* The leaf members of the md/dm device name, through stacked md/dm, into top->members. */
static int add_members(struct members_walk *w, const char *name, int depth)
{
	struct ns_disk *top = w->top;
	char p[512], **slaves = NULL;
	size_t n = 0;
	int r;

	snprintf(p, sizeof(p), "sys/class/block/%s/slaves", name);
	if ((r = ns_list_dir(w->sys->root, p, &slaves, &n)) < 0)
		return r == -ENOMEM ? r : 0;
	for (size_t i = 0; i < n; i++) {
		char *leaf = NULL;
		if ((r = disk_of(w->sys->root, slaves[i], &leaf)) < 0) {
			if (r == -ENOMEM)
				break;
			r = 0;
			continue;
		}
		if ((r = name_set_add(&w->seen, leaf)) <= 0) {
			free(leaf); /* met before (r 0), or out of memory */
			if (r < 0)
				break;
			continue;
		}
		if (stacked_name(leaf) && depth < STACK_DEPTH) {
			char **nv = realloc(w->stacked, (w->nstacked + 1) * sizeof(*nv));
			if (!nv) {
				free(leaf);
				r = -ENOMEM;
				break;
			}
			w->stacked = nv;
			w->stacked[w->nstacked++] = leaf;
			if ((r = add_members(w, leaf, depth + 1)) < 0)
				break;
			continue;
		}
		struct ns_member *nv = realloc(top->members, (top->nmembers + 1) * sizeof(*nv));
		if (!nv) {
			free(leaf);
			r = -ENOMEM;
			break;
		}
		top->members = nv;
		nv[top->nmembers].name = leaf;
		if ((r = member_node(w->sys, w->env, leaf, &nv[top->nmembers].node)) < 0)
			break;
		top->nmembers++;
	}
	ns_strv_free(slaves, n);
	return r;
}

/*
 * md and dm: the nodes of their leaf members. One node for all: the device's node (members);
 * several: none (members-disagree), which the stacked-cross-node finding reports.
 */
static int resolve_members(struct ns_system *sys, struct ns_disk_env *env)
{
	for (size_t i = 0; i < sys->ndisks; i++) {
		struct ns_disk *d = &sys->disks[i];
		int node = -2, r;
		bool disagree = false;
		if (d->kind != NS_DISK_MD && d->kind != NS_DISK_DM)
			continue;
		struct members_walk w = {.sys = sys, .env = env, .top = d};
		r = name_set_add(&w.seen, d->name); /* a loop back to itself is no member */
		if (r >= 0)
			r = add_members(&w, d->name, 0);
		free(w.seen.slot);
		ns_strv_free(w.stacked, w.nstacked);
		if (r < 0)
			return r;
		d->members_read = true;
		d->members_complete = d->nmembers > 0;
		for (size_t k = 0; k < d->nmembers; k++) {
			int n = d->members[k].node;
			if (n < 0) {
				d->members_complete = false;
				continue;
			}
			disagree = disagree || (node >= 0 && n != node);
			node = n;
		}
		free(d->node_reason);
		d->node_reason = NULL;
		if (disagree) {
			d->node_source = NS_NODE_SRC_MEMBERS_DISAGREE;
			d->node_reason = ns_fmt("its members sit on different nodes");
		} else if (node >= 0 && d->members_complete) {
			d->node = node;
			d->node_source = NS_NODE_SRC_MEMBERS;
		} else {
			d->node_source = d->nmembers ? NS_NODE_SRC_UNKNOWN : NS_NODE_SRC_NONE;
			d->node_reason =
				d->nmembers ? ns_fmt("a member's node is unknown") : ns_fmt("it has no members");
		}
		if (!d->node_reason && d->node < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A snapshot says whether it was taken as root (.numastor/facts privileged=0|1). */
static bool captured_privileged(struct ns_root *root)
{
	char *facts = NULL;
	bool yes = true;

	if (ns_read_str(root, ".numastor/facts", &facts) == 0) {
		const char *p = strstr(facts, "privileged=");
		yes = !(p && (p == facts || p[-1] == '\n') && p[11] == '0');
		free(facts);
	}
	return yes;
}

/* IRQs that numastor fix placed, from its journal, so a report after a fix explains itself. An
 * IRQ is known by its PCI function and first action (numbers change), and only in the boot the
 * journal was written in. */
static void mark_placed(struct ns_system *sys)
{
	struct ns_journal j;
	char *boot;
	int r = ns_journal_load(sys->root, &j);

	if (r == -ENOENT)
		return;
	if (r < 0) {
		ns_note_read(&sys->notes, "machine", "placed_by_numastor", NS_JOURNAL_PATH, r, NULL);
		return;
	}
	boot = ns_journal_read_boot_id(sys->root);
	if (!ns_journal_same_boot(&j, boot)) {
		ns_note(&sys->notes, "machine", "placed_by_numastor",
			"/%s is from another boot (%s): no IRQ is marked placed by numastor", NS_JOURNAL_PATH,
			j.boot_id ? j.boot_id : "unknown");
	} else {
		for (size_t i = 0; i < sys->npcis; i++)
			for (size_t k = 0; k < sys->pcis[i]->nirqs; k++) {
				struct ns_irq *irq = &sys->pcis[i]->irqs[k];
				const struct ns_journal_irq *e =
					ns_journal_find_irq(&j, sys->pcis[i]->address, irq->name);
				irq->placed = ns_journal_irq_placed(e, &irq->affinity);
				if (irq->placed) {
					/* counted since it was placed, not since boot */
					char subj[32];
					snprintf(subj, sizeof(subj), "irq %d", irq->irq);
					ns_rates_since_fix(sys->root, &sys->machine, irq, e->counts, &sys->notes, subj);
				}
			}
	}
	free(boot);
	ns_journal_free(&j);
}

/*
 * Does the running kernel contain each fix? The module build's manifest knows (it tried each
 * patch against the kernel's source); without one, the version says what it can.
 */
void ns_kernel_fixes_read(struct ns_root *root, const struct ns_machine *m, struct ns_kernel_fix fixes[2])
{
	static const char *const series[2] = {"nvme-no-forced-node", "scsi-numa-local-alloc"};
	struct ns_manifest man;
	char dir[512];
	bool have = false;

	snprintf(dir, sizeof(dir), NS_MODULE_DIR "/%s", m->kernel_release ? m->kernel_release : "unknown");
	if (m->kernel_release && ns_manifest_load(root, dir, &man) == 0)
		have = true;
	for (int i = 0; i < 2; i++) {
		struct ns_kernel_fix *f = &fixes[i];
		bool built = false;
		f->series = series[i];
		f->in_kernel = -1;
		if (have) {
			for (size_t k = 0; k < man.nupstream; k++)
				if (strcmp(man.upstream[k], series[i]) == 0)
					f->in_kernel = 1;
			for (size_t k = 0; k < man.n; k++)
				for (size_t p = 0; p < man.v[k].npatches; p++)
					built |= strcmp(man.v[k].patches[p], series[i]) == 0;
			if (f->in_kernel != 1 && built)
				f->in_kernel = 0;
			if (f->in_kernel >= 0) {
				if (asprintf(&f->basis, "the module build tried it against this kernel's source (/%s)",
					     dir) < 0)
					f->basis = NULL;
				continue;
			}
		}
		if (i == 0 && ns_machine_kernel_at_least(m, 6, 6)) {
			f->in_kernel = 1;
			f->basis = strdup("upstream since v6.6 (dad651b2a44e)");
		} else if (i == 0) {
			f->basis = strdup(
				"before v6.6 it depends on the stable backport (6.1.56, 5.10.y): build the modules "
				"to find out");
		} else {
			f->basis = strdup("not in mainline as of 2026: build the modules to find out");
		}
	}
	if (have)
		ns_manifest_free(&man);
}

/*
 * The nvme fix as the running module's own code tells it (lib/read/module: whether its file
 * imports what the removed code did), over what the manifest or the version said: a
 * distribution may revert the fix (RHEL 9 did, RHEL-46616) without changing the version.
 */
void ns_kernel_fixes_by_module(struct ns_kernel_fix fixes[2], const struct ns_modules *mods)
{
	for (size_t i = 0; i < ns_modules_count(mods); i++) {
		const struct ns_module *mod = ns_modules_get(mods, i);
		char *basis;
		if (!mod || strcmp(mod->name, "nvme") != 0 || mod->patched == 1 || !mod->code_basis)
			continue;
		if (mod->code == NS_CODE_UNJUDGED) /* the manifest or the version, and why not the module */
			basis = ns_fmt("%s (not judged by its module: %s)", fixes[0].basis ? fixes[0].basis : "?",
				       mod->code_basis);
		else
			basis = strdup(mod->code_basis);
		if (!basis)
			return;
		free(fixes[0].basis);
		fixes[0].basis = basis;
		if (mod->code != NS_CODE_UNJUDGED)
			fixes[0].in_kernel = mod->code == NS_CODE_FIXED;
	}
}

static void read_kernel_fixes(struct ns_system *sys)
{
	ns_kernel_fixes_read(sys->root, &sys->machine, sys->fixes);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether name is among the disks named (sorted), or nothing was named. */
static bool wanted(const char *name, char *const *disks, size_t ndisks)
{
	return ndisks == 0 || bsearch(&name, disks, ndisks, sizeof(*disks), cmp_str) != NULL;
}

/*
 * The devices named on the command line as the disks they mean (lib/read/devarg.h), each once:
 * the same disk named twice, or by name and by link, is one disk. A partition is noted as
 * such. -ENODEV (noted, the last note) for a name that means no disk. The list comes back
 * sorted, for wanted().
 */
static int resolve_names(struct ns_system *sys, const char *const *only, size_t nonly, char ***disks, size_t *n)
{
	size_t kept = 0;

	*disks = calloc(nonly ? nonly : 1, sizeof(**disks));
	*n = 0;
	if (!*disks)
		return -ENOMEM;
	for (size_t i = 0; i < nonly; i++) {
		struct ns_devarg a;
		int r = ns_devarg_resolve(sys->root, only[i], &a);
		if (r == -ENODEV) {
			ns_note(&sys->notes, only[i], "device",
				"no block device named %s (not a disk under /sys/block, a partition of one, nor "
				"a /dev link to either)",
				only[i]);
			return r;
		}
		if (r < 0)
			return r;
		if (a.partition)
			ns_note(&sys->notes, a.disk, "device-argument", "%s is a partition of %s: reported as %s",
				only[i], a.disk, a.disk);
		(*disks)[(*n)++] = a.disk;
		a.disk = NULL;
		ns_devarg_free(&a);
	}
	qsort(*disks, *n, sizeof(**disks), cmp_str);
	for (size_t i = 0; i < *n; i++) {
		if (kept && strcmp((*disks)[kept - 1], (*disks)[i]) == 0) {
			free((*disks)[i]);
			continue;
		}
		(*disks)[kept++] = (*disks)[i];
	}
	*n = kept;
	return 0;
}

/*
 * The entries of sys/block as disks. A kernel lists each disk once, as a link into its device
 * directory whose last component is the entry's name; entries that resolve to one directory
 * (a damaged or hostile tree) are one disk, read once under the entry named as the directory,
 * else the first in order, and the others noted once. Sorting on the links' targets, then on
 * the directories they resolve to, keeps it linear in the entries (n log n): 20,000 links to
 * one disk cost one resolution, not 20,000 disks.
 */
struct block_entry {
	const char *name; /* names[order] */
	char *link;	  /* the entry's link target as stored; NULL when not a link */
	char *real;	  /* the directory it resolves to; NULL when it does not resolve */
	size_t order;	  /* its place in sys/block */
};

struct block_disk {
	size_t canon;	   /* the entry that stands for this entry's disk (itself for one) */
	size_t next_alias; /* a canon's aliases, in order: the next one, SIZE_MAX at the end */
	size_t last_alias; /* a canon's last alias so far */
	size_t naliases;   /* a canon's: the other entries that resolve to its directory */
	bool wanted;	   /* named on the command line (or nothing was), itself or an alias */
};

static int cmp_opt_str(const char *a, const char *b)
{
	return !a || !b ? (a != NULL) - (b != NULL) : strcmp(a, b);
}

static int cmp_entry_link(const void *pa, const void *pb)
{
	const struct block_entry *a = pa, *b = pb;
	int c = cmp_opt_str(a->link, b->link);
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int cmp_entry_real(const void *pa, const void *pb)
{
	const struct block_entry *a = pa, *b = pb;
	int c = cmp_opt_str(a->real, b->real);
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

/* The directory each entry resolves to: once per distinct link target, since the same text
 * in the same directory resolves the same way. */
static int resolve_entries(struct ns_root *root, struct block_entry *e, size_t n)
{
	char p[512];

	for (size_t i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "sys/block/%s", e[i].name);
		int r = ns_readlink(root, p, &e[i].link);
		if (r == -ENOMEM)
			return r;
	}
	qsort(e, n, sizeof(*e), cmp_entry_link);
	for (size_t i = 0; i < n; i++) {
		int r;
		if (i > 0 && e[i].link && e[i - 1].link && strcmp(e[i].link, e[i - 1].link) == 0) {
			if (e[i - 1].real && !(e[i].real = strdup(e[i - 1].real)))
				return -ENOMEM;
			continue;
		}
		snprintf(p, sizeof(p), "sys/block/%s", e[i].name);
		if ((r = ns_realpath(root, p, &e[i].real)) == -ENOMEM)
			return r;
		if (r < 0)
			e[i].real = NULL; /* ns_disk_read says what became of it */
	}
	return 0;
}

/* b[i] for every entry of sys/block: which entry stands for its disk, and which are wanted. */
static int block_disks(struct ns_system *sys, char *const *names, size_t n, char *const *disks, size_t ndisks,
		       struct block_disk **out)
{
	struct block_entry *e = calloc(n ? n : 1, sizeof(*e));
	struct block_disk *b = calloc(n ? n : 1, sizeof(*b));
	int r = e && b ? 0 : -ENOMEM;

	*out = NULL;
	for (size_t i = 0; r == 0 && i < n; i++) {
		e[i] = (struct block_entry){.name = names[i], .order = i};
		b[i] = (struct block_disk){.canon = i, .next_alias = SIZE_MAX, .last_alias = i};
	}
	if (r == 0)
		r = resolve_entries(sys->root, e, n);
	if (r == 0)
		qsort(e, n, sizeof(*e), cmp_entry_real);
	for (size_t i = 0; r == 0 && i < n;) {
		size_t j = i + 1, canon;
		const char *base;
		if (!e[i].real) {
			i++;
			continue;
		}
		while (j < n && e[j].real && strcmp(e[j].real, e[i].real) == 0)
			j++;
		/* the entry named as the directory, else the first in order (e[i]: sorted by order within) */
		base = strrchr(e[i].real, '/');
		base = base ? base + 1 : e[i].real;
		canon = e[i].order;
		for (size_t k = i; k < j; k++)
			if (strcmp(e[k].name, base) == 0)
				canon = e[k].order;
		for (size_t k = i; k < j; k++)
			b[e[k].order].canon = canon;
		b[canon].naliases = j - i - 1;
		i = j;
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		size_t c = b[i].canon;
		if (wanted(names[i], disks, ndisks))
			b[c].wanted = true;
		if (c == i)
			continue;
		/* the aliases of c in order: i grows, so each joins the end */
		if (b[c].last_alias == c)
			b[c].next_alias = i;
		else
			b[b[c].last_alias].next_alias = i;
		b[c].last_alias = i;
	}
	for (size_t i = 0; e && i < n; i++) {
		free(e[i].link);
		free(e[i].real);
	}
	free(e);
	if (r < 0)
		free(b);
	else
		*out = b;
	return r;
}

/* The one note of a disk that other entries of sys/block resolve to: how many, the first few. */
static void note_aliases(struct ns_system *sys, char *const *names, const struct block_disk *b, size_t canon)
{
	char some[256] = "";
	size_t len = 0, shown = 0;

	for (size_t a = b[canon].next_alias; a != SIZE_MAX && shown < 3; a = b[a].next_alias, shown++)
		len += (size_t)snprintf(some + len, len < sizeof(some) ? sizeof(some) - len : 0, "%s%s",
					shown ? ", " : "", names[a]);
	ns_note(&sys->notes, names[canon], "device",
		"%zu other entr%s of /sys/block (%s%s) resolve%s to the disk %s: a kernel lists a disk once, "
		"under its own name; ignored",
		b[canon].naliases, b[canon].naliases == 1 ? "y" : "ies", some, b[canon].naliases > shown ? ", ..." : "",
		b[canon].naliases == 1 ? "s" : "", names[canon]);
}

/* hidden is 0 or 1; anything else is noted and the disk kept (never dropped unseen) */
static bool is_hidden(struct ns_root *root, const char *name, struct ns_notes *notes)
{
	char p[256], *raw = NULL;
	long long v;
	int r;

	snprintf(p, sizeof(p), "sys/block/%s/hidden", name);
	r = ns_read_dec(root, p, 0, 1, &v, &raw);
	/* absent: a kernel before the file (4.x), where no path disk is in sys/block. Any other
	 * failure leaves it unknown, and says so: a path disk then shows as a device of its own
	 * with the note that explains why (issue 36), never silently */
	if (r < 0 && r != -ENOENT)
		ns_note_read(notes, name, "hidden", p, r, raw);
	free(raw);
	return r == 0 && v == 1;
}

int ns_system_discover(struct ns_root *root, const char *const *only, size_t nonly, struct ns_system *sys)
{
	struct ns_disk_env env = {.root = root, .pci = pci_of_system, .data = sys};
	char **names = NULL, **disks = NULL;
	struct block_disk *bd = NULL;
	size_t n = 0, nread = 0, ndisks = 0;
	int r;

	memset(sys, 0, sizeof(*sys));
	env.machine = &sys->machine;
	env.notes = &sys->notes;
	sys->root = root;
	sys->privileged = ns_root_is_live(root) ? geteuid() == 0 : captured_privileged(root);
	r = ns_machine_read(root, &sys->machine, &sys->notes);
	if (r < 0)
		return r;
	if (!sys->privileged)
		ns_note(&sys->notes, "machine", "privileged",
			"not running as root: debugfs IRQ flags and irqbalance's environment are not read; "
			"fields that need them are null");
	r = ns_modules_new(root, &sys->modules);
	if (r < 0)
		return r;
	read_kernel_fixes(sys); /* before the PCI functions: it tells whether nvme can force a node */
	if (ns_root_needs(root, NS_NEED_IDENTITY))
		sys->udev = ns_identity_open(root);
	r = ns_list_dir(root, "sys/block", &names, &n);
	if (r < 0)
		return r == -ENOTDIR ? -ENOENT : r;
	nread = n;
	if (n > NS_BLOCK_ENTRIES_MAX) {
		ns_note(&sys->notes, "machine", "devices",
			"/sys/block lists %zu entries, more than the %u disks a kernel can number (20-bit minors): "
			"only the first %u are read",
			n, NS_BLOCK_ENTRIES_MAX, NS_BLOCK_ENTRIES_MAX);
		nread = NS_BLOCK_ENTRIES_MAX;
	}
	r = resolve_names(sys, only, nonly, &disks, &ndisks);
	if (r < 0)
		goto out;
	if ((r = block_disks(sys, names, nread, disks, ndisks, &bd)) < 0)
		goto out;
	sys->disks = calloc(nread ? nread : 1, sizeof(*sys->disks));
	if (!sys->disks) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nread; i++) {
		struct ns_disk *d = &sys->disks[sys->ndisks];
		const struct ns_module *host_mod;
		if (bd[i].canon != i || !bd[i].wanted)
			continue; /* another entry for a disk already listed, or not asked for */
		if (nonly == 0 && is_hidden(root, names[i], &sys->notes))
			continue; /* a multipath path device: reported under its namespace */
		if (bd[i].naliases)
			note_aliases(sys, names, bd, i);
		r = ns_disk_read(&env, names[i], d);
		if (r == -ENOENT || r == -ENOTDIR || r == -ELOOP) {
			ns_note(&sys->notes, names[i], "device", "/sys/block/%s vanished while reading: skipped",
				names[i]);
			ns_disk_free(d);
			continue;
		}
		if (r < 0) {
			ns_disk_free(d);
			goto out;
		}
		if (ns_root_needs(root, NS_NEED_IDENTITY))
			ns_identity_read(root, sys->udev, d, &sys->notes);
		resolve_node(d);
		if ((r = ns_mpath_serves(&sys->machine, d)) < 0) {
			ns_disk_free(d);
			goto out;
		}
		if (!sys->scsi_mod && (d->kind == NS_DISK_SCSI || d->kind == NS_DISK_ATA))
			ns_modules_lookup(sys->modules, "scsi_mod", &sys->notes, &sys->scsi_mod);
		host_mod = NULL;
		if (d->kind == NS_DISK_ATA) /* ata_scsi_add_hosts: libata allocates an ATA port's host */
			ns_modules_lookup(sys->modules, "libata", &sys->notes, &host_mod);
		else if (d->kind == NS_DISK_SCSI && d->npaths && d->paths[0].pci)
			host_mod = d->paths[0].pci->module;
		r = ns_alloc_derive(&sys->machine, sys->scsi_mod, host_mod, d);
		if (r < 0) {
			ns_disk_free(d);
			goto out;
		}
		sys->ndisks++;
	}
	(void)index_disks(sys); /* without it, ns_system_disk walks the list */
	if ((r = resolve_members(sys, &env)) < 0)
		goto out;
	for (size_t i = 0; i < sys->ndisks; i++) {
		struct ns_disk *d = &sys->disks[i];
		/* after the members: an md/dm's node is theirs */
		d->node_reliable = d->node < 0 ? -1 : !ns_machine_node_overlaps(&sys->machine, d->node);
		if ((r = fill_reason(d)) < 0)
			goto out;
	}
	mark_placed(sys);
	ns_kernel_fixes_by_module(sys->fixes, sys->modules);
	/* a fact a reader left unknown for want of memory is not the machine's: no model at all */
	r = ns_alloc_failed() ? -ENOMEM : 0;
out:
	free(bd);
	ns_strv_free(names, n);
	ns_strv_free(disks, ndisks);
	return r;
}

void ns_system_free(struct ns_system *sys)
{
	for (size_t i = 0; i < sys->ndisks; i++)
		ns_disk_free(&sys->disks[i]);
	free(sys->disks);
	free(sys->by_name);
	for (size_t i = 0; i < sys->npcis; i++) {
		ns_pci_free(sys->pcis[i]);
		free(sys->pcis[i]);
	}
	free(sys->pcis);
	free(sys->pci_slots);
	ns_pci_buses_free(sys->buses);
	ns_modules_free(sys->modules);
	ns_identity_close(sys->udev);
	ns_machine_free(&sys->machine);
	ns_notes_free(&sys->notes);
	for (int i = 0; i < 2; i++)
		free(sys->fixes[i].basis);
	memset(sys, 0, sizeof(*sys));
}

size_t ns_system_hide_empty(struct ns_system *sys)
{
	size_t kept = 0, n = sys->ndisks;

	for (size_t i = 0; i < n; i++) {
		if (sys->disks[i].size_bytes == 0) {
			ns_disk_free(&sys->disks[i]);
			continue;
		}
		if (kept != i)
			sys->disks[kept] = sys->disks[i];
		kept++;
	}
	sys->ndisks = kept;
	sys->nempty_hidden += n - kept;
	(void)index_disks(sys); /* without it, ns_system_disk walks the list */
	return n - kept;
}

/* by_name's order: the disks' names */
static int cmp_disk_index(const void *a, const void *b, void *disks)
{
	const struct ns_disk *d = disks;
	return strcmp(d[*(const size_t *)a].name, d[*(const size_t *)b].name);
}

static int index_disks(struct ns_system *sys)
{
	size_t *v = malloc((sys->ndisks ? sys->ndisks : 1) * sizeof(*v));

	free(sys->by_name);
	sys->by_name = v;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < sys->ndisks; i++)
		v[i] = i;
	qsort_r(v, sys->ndisks, sizeof(*v), cmp_disk_index, sys->disks);
	return 0;
}

const struct ns_disk *ns_system_disk(const struct ns_system *sys, const char *name)
{
	size_t lo = 0, hi = sys->ndisks;

	if (!sys->by_name) { /* out of memory making the index: the list, one by one */
		for (size_t i = 0; i < sys->ndisks; i++)
			if (strcmp(sys->disks[i].name, name) == 0)
				return &sys->disks[i];
		return NULL;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(sys->disks[sys->by_name[mid]].name, name);
		if (c == 0)
			return &sys->disks[sys->by_name[mid]];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
