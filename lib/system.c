/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "system.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "devarg.h"
#include "identity.h"
#include "journal.h"
#include "manifest.h"
#include "rates.h"

int ns_system_pci(struct ns_system *sys, const char *syspath, struct ns_pci **out)
{
	struct ns_pci **nv, *pci;
	int r;

	for (size_t i = 0; i < sys->npcis; i++)
		if (strcmp(sys->pcis[i]->syspath, syspath) == 0) {
			*out = sys->pcis[i];
			return 0;
		}
	nv = realloc(sys->pcis, (sys->npcis + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	sys->pcis = nv;
	pci = calloc(1, sizeof(*pci));
	if (!pci)
		return -ENOMEM;
	r = ns_pci_read(sys->root, &sys->machine, sys->modules, syspath, pci, &sys->notes);
	if (r < 0) {
		ns_pci_free(pci);
		free(pci);
		return r;
	}
	/* whether nvme can force a node: the manifest knows the kernel's fix better than its version */
	if (sys->fixes[0].series)
		ns_pci_rejudge(pci, sys->fixes[0].in_kernel, sys->fixes[0].basis);
	sys->pcis[sys->npcis++] = pci;
	*out = pci;
	return 0;
}

static int pci_of_system(void *data, const char *syspath, struct ns_pci **out)
{
	return ns_system_pci(data, syspath, out);
}

/* The node the disk really sits on: its function's node, unless forced or the paths disagree. */
static void resolve_node(struct ns_disk *d)
{
	int node = -2;

	d->node = -1;
	if (d->npaths == 0 || !d->paths[0].pci) {
		d->node_source = NS_NODE_SRC_NONE;
		return;
	}
	for (size_t i = 0; i < d->npaths; i++) {
		const struct ns_pci *pci = d->paths[i].pci;
		int n;
		if (!pci) {
			d->node_source = NS_NODE_SRC_UNKNOWN;
			return;
		}
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
		d->node_source = NS_NODE_SRC_PCI;
	} else {
		d->node_source = NS_NODE_SRC_UNKNOWN;
	}
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

static void read_kernel_fixes(struct ns_system *sys)
{
	ns_kernel_fixes_read(sys->root, &sys->machine, sys->fixes);
}

static bool wanted(const char *name, char *const *disks, size_t ndisks)
{
	if (ndisks == 0)
		return true;
	for (size_t i = 0; i < ndisks; i++)
		if (strcmp(disks[i], name) == 0)
			return true;
	return false;
}

/*
 * The devices named on the command line as the disks they mean (lib/devarg.h), each once:
 * the same disk named twice, or by name and by link, is one disk. A partition is noted as
 * such. -ENODEV (noted, the last note) for a name that means no disk.
 */
static int resolve_names(struct ns_system *sys, const char *const *only, size_t nonly, char ***disks, size_t *n)
{
	*disks = calloc(nonly ? nonly : 1, sizeof(**disks));
	*n = 0;
	if (!*disks)
		return -ENOMEM;
	for (size_t i = 0; i < nonly; i++) {
		struct ns_devarg a;
		bool dup = false;
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
		for (size_t k = 0; k < *n && !dup; k++)
			dup = strcmp((*disks)[k], a.disk) == 0;
		if (dup) {
			ns_devarg_free(&a);
			continue;
		}
		(*disks)[(*n)++] = a.disk;
		a.disk = NULL;
		ns_devarg_free(&a);
	}
	return 0;
}

/* hidden is 0 or 1; anything else is noted and the disk kept (never dropped unseen) */
static bool is_hidden(struct ns_root *root, const char *name, struct ns_notes *notes)
{
	char p[256], *raw = NULL;
	long long v;
	int r;

	snprintf(p, sizeof(p), "sys/block/%s/hidden", name);
	r = ns_read_dec(root, p, 0, 1, &v, &raw);
	if (r == -EINVAL || r == -ERANGE)
		ns_note_read(notes, name, "hidden", p, r, raw);
	free(raw);
	return r == 0 && v == 1;
}

int ns_system_discover(struct ns_root *root, const char *const *only, size_t nonly, struct ns_system *sys)
{
	struct ns_disk_env env = {.root = root, .pci = pci_of_system, .data = sys};
	char **names = NULL, **disks = NULL;
	size_t n = 0, ndisks = 0;
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
	sys->udev = ns_identity_open(root);
	r = ns_list_dir(root, "sys/block", &names, &n);
	if (r < 0)
		return r == -ENOTDIR ? -ENOENT : r;
	r = resolve_names(sys, only, nonly, &disks, &ndisks);
	if (r < 0)
		goto out;
	sys->disks = calloc(n ? n : 1, sizeof(*sys->disks));
	if (!sys->disks) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct ns_disk *d = &sys->disks[sys->ndisks];
		const struct ns_module *host_mod;
		if (!wanted(names[i], disks, ndisks))
			continue;
		if (nonly == 0 && is_hidden(root, names[i], &sys->notes))
			continue; /* a multipath path device: reported under its namespace */
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
		ns_identity_read(root, sys->udev, d);
		resolve_node(d);
		d->node_reliable = d->node < 0 ? -1 : !ns_machine_node_overlaps(&sys->machine, d->node);
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
	mark_placed(sys);
	r = 0;
out:
	ns_strv_free(names, n);
	ns_strv_free(disks, ndisks);
	return r;
}

void ns_system_free(struct ns_system *sys)
{
	for (size_t i = 0; i < sys->ndisks; i++)
		ns_disk_free(&sys->disks[i]);
	free(sys->disks);
	for (size_t i = 0; i < sys->npcis; i++) {
		ns_pci_free(sys->pcis[i]);
		free(sys->pcis[i]);
	}
	free(sys->pcis);
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
	return n - kept;
}

const struct ns_disk *ns_system_disk(const struct ns_system *sys, const char *name)
{
	for (size_t i = 0; i < sys->ndisks; i++)
		if (strcmp(sys->disks[i].name, name) == 0)
			return &sys->disks[i];
	return NULL;
}
