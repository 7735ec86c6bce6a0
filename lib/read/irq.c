/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/irq.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "base/util.h"

const char *ns_managed_source_name(enum ns_managed_source s)
{
	switch (s) {
	case NS_MANAGED_FILE_MODE:
		return "file-mode";
	case NS_MANAGED_DEBUGFS:
		return "debugfs";
	case NS_MANAGED_DRIVER:
		return "driver";
	default:
		return "unknown";
	}
}

const char *ns_settable_source_name(enum ns_settable_source s)
{
	switch (s) {
	case NS_SETTABLE_FILE_MODE:
		return "file-mode";
	case NS_SETTABLE_DEBUGFS:
		return "debugfs";
	case NS_SETTABLE_MANAGED:
		return "managed";
	default:
		return "unknown";
	}
}

static void read_list(struct ns_root *root, const struct ns_machine *m, const char *path, struct ns_cpuset *s,
		      struct ns_notes *notes, const char *subj, const char *field, bool hex, mode_t *mode)
{
	char *txt;
	int r = ns_read_str_mode(root, path, &txt, mode);

	if (r < 0) {
		ns_note_read(notes, subj, field, path, r, NULL);
		return;
	}
	r = ns_machine_parse_cpus(m, s, txt, hex);
	if (r < 0)
		ns_note_read(notes, subj, field, path, r, txt);
	free(txt);
}

/*
 * Both forms of a per-CPU count list: the kernel's (runs false: plain values, one newline at the
 * end allowed) and the journal's (runs true: value*times too, at most NS_COUNTS_MAX_CPUS values).
 */
static int parse_counts(const char *txt, struct ns_counts *c, bool runs)
{
	const char *s = txt;
	size_t cap = 0;

	memset(c, 0, sizeof(*c));
	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		uint64_t v, k = 1;
		/* "%u" each: the kernel's per-CPU counts are 32-bit, in decimal without leading zeros */
		if (ns_dec_digits(&s, 0xffffffffULL, &v) < 0)
			goto bad;
		if (runs && *s == '*') {
			s++;
			if (ns_parse_dec_prefix(&s, NS_COUNTS_MAX_CPUS, &k) < 0 || k < 1)
				goto bad;
		}
		if (runs && k > NS_COUNTS_MAX_CPUS - c->n)
			goto bad;
		if (c->n + k > cap) {
			size_t ncap = cap ? cap : 64;
			unsigned long long *nv;
			while (ncap < c->n + k)
				ncap *= 2;
			nv = realloc(c->v, ncap * sizeof(*nv));
			if (!nv) {
				ns_counts_free(c);
				return -ENOMEM;
			}
			c->v = nv;
			cap = ncap;
		}
		while (k--)
			c->v[c->n++] = v;
		if (!*s || (!runs && *s == '\n'))
			break;
		if (*s++ != ',')
			goto bad;
	}
	if (*s == '\n' && s[1])
		goto bad;
	return 0;
bad:
	ns_counts_free(c);
	return -EINVAL;
}

/* The file's own form, read for every IRQ (448 values each on the bench's machine): sized once
 * (a value and its comma take two bytes at least), filled through locals. */
int ns_counts_parse(const char *txt, struct ns_counts *c)
{
	const char *s = txt;
	unsigned long long *v;
	size_t n = 0;

	memset(c, 0, sizeof(*c));
	if (!s || !*s)
		return -EINVAL;
	v = malloc((strlen(s) / 2 + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (;;) {
		uint64_t x;
		/* "%u" each: the kernel's per-CPU counts are 32-bit, in decimal without leading zeros */
		if (ns_dec_digits(&s, 0xffffffffULL, &x) < 0)
			break;
		v[n++] = x;
		if (!*s || *s == '\n') {
			if (*s == '\n' && s[1])
				break;
			c->v = v;
			c->n = n;
			return 0;
		}
		if (*s++ != ',')
			break;
	}
	free(v);
	return -EINVAL;
}

int ns_counts_format(const struct ns_counts *c, char **out)
{
	/* each value at most 10 digits, each run's "*times" at most 5 more, and a comma */
	size_t cap = c->n * 17 + 1, len = 0;
	char *buf;

	*out = NULL;
	if (!c->n)
		return -EINVAL;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < c->n;) {
		size_t k = 1;
		while (i + k < c->n && c->v[i + k] == c->v[i])
			k++;
		if (k < 3)
			k = 1;
		len += (size_t)snprintf(buf + len, cap - len, k > 1 ? "%s%llu*%zu" : "%s%llu", i ? "," : "", c->v[i],
					k);
		i += k;
	}
	*out = buf;
	return 0;
}

int ns_counts_parse_runs(const char *txt, struct ns_counts *c)
{
	return parse_counts(txt, c, true);
}

int ns_counts_read(struct ns_root *root, int irq, struct ns_counts *c, char **raw)
{
	char path[64], *txt;
	int r;

	memset(c, 0, sizeof(*c));
	if (raw)
		*raw = NULL;
	ns_path_num(path, sizeof(path), "sys/kernel/irq/", irq, "/per_cpu_count");
	r = ns_read_str(root, path, &txt);
	if (r < 0)
		return r;
	r = ns_counts_parse(txt, c);
	if (r == 0 && raw)
		*raw = txt;
	else
		free(txt);
	return r;
}

void ns_counts_free(struct ns_counts *c)
{
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

int ns_counts_delta(const struct ns_counts *earlier, const struct ns_counts *later, bool wrap, struct ns_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (earlier->n != later->n || !later->n)
		return -EINVAL;
	out->v = calloc(later->n, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	out->n = later->n;
	for (size_t i = 0; i < later->n; i++) {
		if (later->v[i] >= earlier->v[i]) {
			out->v[i] = later->v[i] - earlier->v[i];
		} else if (wrap) {
			out->v[i] = later->v[i] + 0x100000000ULL - earlier->v[i];
		} else {
			ns_counts_free(out);
			return -ERANGE;
		}
	}
	return 0;
}

/* One past the largest node id (ids are below NS_NODE_MAX): the length of a per_node array. */
static size_t node_slots(const struct ns_machine *m)
{
	size_t nodes = 0;

	for (size_t i = 0; i < m->nnodes; i++)
		if (m->nodes[i].id >= 0 && (size_t)m->nodes[i].id + 1 > nodes)
			nodes = (size_t)m->nodes[i].id + 1;
	return nodes;
}

int ns_counts_fold(const struct ns_machine *m, const struct ns_counts *c, unsigned long long **per_node,
		   size_t *nper_node, unsigned long long *total)
{
	size_t nodes = node_slots(m);

	*nper_node = nodes;
	*per_node = calloc(*nper_node ? *nper_node : 1, sizeof(**per_node));
	*total = 0;
	if (!*per_node)
		return -ENOMEM;
	/* the CPUs the map knows, by its array (ns_machine_cpu_node's), then the rest's total */
	size_t mapped = c->n < m->ncpu_node ? c->n : m->ncpu_node, cpu;
	for (cpu = 0; cpu < mapped; cpu++) {
		int node = m->cpu_node[cpu];
		*total += c->v[cpu];
		if (node >= 0 && (size_t)node < nodes)
			(*per_node)[node] += c->v[cpu];
	}
	for (; cpu < c->n; cpu++)
		*total += c->v[cpu];
	return 0;
}

int ns_counts_sum(const char *s, const struct ns_machine *m, unsigned long long *per_node, size_t nodes,
		  struct ns_counts_sum *sum)
{
	const char *end = s + strlen(s);

	memset(sum, 0, sizeof(*sum));
	for (;;) {
		uint64_t v;
		size_t cpu;

		while (end - s >= 8 && memcmp(s, "0,0,0,0,", 8) == 0) {
			s += 8;
			sum->n += 4;
		}
		/* "%u" each: the kernel's per-CPU counts are 32-bit, in decimal without leading zeros */
		if (ns_dec_digits(&s, 0xffffffffULL, &v) < 0)
			return -EINVAL;
		cpu = sum->n++;
		if (v) {
			sum->total += v;
			if (per_node && cpu < m->ncpu_node && m->cpu_node[cpu] >= 0 && (size_t)m->cpu_node[cpu] < nodes)
				per_node[m->cpu_node[cpu]] += v;
			if (ns_cpuset_test(&m->isolation.cpus, (unsigned)cpu))
				sum->on_isolated += v;
		}
		if (!*s || *s == '\n')
			return *s == '\n' && s[1] ? -EINVAL : 0;
		if (*s++ != ',')
			return -EINVAL;
	}
}

/* per_cpu_count, summed per node (the per-CPU values are not kept). */
static void read_counts(struct ns_root *root, const struct ns_machine *m, struct ns_irq *irq, struct ns_notes *notes,
			const char *subj)
{
	char path[96];
	struct ns_counts_sum sum;
	unsigned long long *per_node = NULL;
	size_t nodes = 0;
	unsigned possible = m->possible.known ? ns_cpuset_count(&m->possible) : 0;
	char *txt;
	int r;

	ns_path_num(path, sizeof(path), "sys/kernel/irq/", irq->irq, "/per_cpu_count");
	r = ns_read_str(root, path, &txt);
	if (r < 0) {
		ns_note_read(notes, subj, "total_count", path, r, NULL);
		return;
	}
	if (ns_machine_cpu_map_complete(m)) {
		/* a node's CPUs are unknown: the total is, the per-node split is not */
		nodes = node_slots(m);
		per_node = calloc(nodes ? nodes : 1, sizeof(*per_node));
		if (!per_node) {
			free(txt);
			return;
		}
	}
	r = ns_counts_sum(txt, m, per_node, nodes, &sum);
	if (r < 0) {
		ns_note_read(notes, subj, "total_count", path, r, txt);
		free(txt);
		free(per_node);
		return;
	}
	free(txt);
	if (m->possible.known && sum.n < possible) {
		/* a truncated list would put counts on the wrong CPUs: refuse it */
		ns_note(notes, subj, "total_count", "/%s has %zu entries for %u possible CPUs (truncated)", path, sum.n,
			possible);
		free(per_node);
		return;
	}
	if ((m->possible.known && sum.n > possible) || sum.n > m->cpu_limit) {
		/* one entry per possible CPU (for_each_possible_cpu): more is not this machine's file */
		ns_note(notes, subj, "total_count", "/%s has %zu entries for %u possible CPUs (too many)", path, sum.n,
			possible);
		free(per_node);
		return;
	}
	irq->per_node = per_node;
	irq->nper_node = per_node ? nodes : 0;
	irq->total = sum.total;
	irq->ncpu = sum.n;
	irq->counts_known = true;
	/* since boot, on the CPUs isolated now (the isolation findings' evidence that it fired there) */
	irq->on_isolated += sum.on_isolated;
}

static void read_managed(struct ns_root *root, const struct ns_machine *m, struct ns_irq *irq, mode_t mode,
			 bool debugfs, struct ns_notes *notes, const char *subj)
{
	char path[96], *txt;
	int r;

	if (debugfs) {
		ns_path_num(path, sizeof(path), "sys/kernel/debug/irq/irqs/", irq->irq, "");
		/* a vector gone since the listing has no file; another error leaves managed untold */
		if ((r = ns_read_str(root, path, &txt)) < 0 && r != -ENOENT)
			ns_note_read(notes, subj, "managed", path, r, NULL);
		if (r == 0) {
			irq->managed = strstr(txt, "IRQD_AFFINITY_MANAGED") ? 1 : 0;
			irq->managed_source = NS_MANAGED_DEBUGFS;
			irq->user_settable = !irq->managed && !strstr(txt, "IRQD_NO_BALANCING");
			irq->user_settable_source = NS_SETTABLE_DEBUGFS;
			free(txt);
		}
	}
	/*
	 * Since 6.12 the affinity files of IRQs user space may not set are read-only
	 * (!irq_can_set_affinity_usr): managed vectors, but also IRQF_NOBALANCING ones and chips
	 * without irq_set_affinity. 0444 says "not user-settable", not "managed"; 0644 does say
	 * "not managed", as a managed vector is never user-settable.
	 */
	if (ns_machine_kernel_at_least(m, 6, 12) && mode) {
		irq->user_settable = (mode & 0222) ? 1 : 0;
		irq->user_settable_source = NS_SETTABLE_FILE_MODE;
		if (irq->user_settable == 1 && irq->managed < 0) {
			irq->managed = 0;
			irq->managed_source = NS_MANAGED_FILE_MODE;
		}
	}
}

int ns_irq_read(struct ns_root *root, const struct ns_machine *m, int n, bool msi, bool debugfs, struct ns_irq *irq,
		struct ns_notes *notes)
{
	char path[96], subj[32], *txt;
	long long node;
	mode_t mode = 0;
	int r;

	memset(irq, 0, sizeof(*irq));
	irq->irq = n;
	irq->msi = msi;
	irq->node = -2;
	irq->managed = -1;
	irq->user_settable = -1;
	irq->hw_queue = -1;
	irq->queue_of_ctl = -1;
	ns_path_num(subj, sizeof(subj), "irq ", n, "");
	ns_path_num(path, sizeof(path), "sys/kernel/irq/", n, "/actions");
	r = ns_read_str(root, path, &irq->actions);
	if (r == -ENOENT) {
		/* no actions file: the IRQ may have vanished since it was listed */
		ns_path_num(path, sizeof(path), "proc/irq/", n, "");
		if (ns_probe(root, path) == 0)
			return -ENOENT; /* an error here is no proof it went: the actions note says it */
		ns_path_num(path, sizeof(path), "sys/kernel/irq/", n, "/actions");
	}
	if (r < 0 && r != -ENODATA)
		ns_note_read(notes, subj, "actions", path, r, NULL);
	if (irq->actions)
		/* one action (nearly every vector): its name is the same string, held once */
		irq->name = irq->actions[strcspn(irq->actions, ",")] ? strndup(irq->actions, strcspn(irq->actions, ","))
								     : irq->actions;
	ns_path_num(path, sizeof(path), "sys/kernel/irq/", n, "/chip_name");
	r = ns_read_str(root, path, &irq->chip);
	if (r < 0)
		ns_note_read(notes, subj, "chip", path, r, NULL);

	ns_path_num(path, sizeof(path), "proc/irq/", n, "/smp_affinity_list");
	/* the mode tells only from 6.12 on (read_managed): before, it costs an fstat for nothing */
	read_list(root, m, path, &irq->affinity, notes, subj, "affinity", false,
		  ns_machine_kernel_at_least(m, 6, 12) ? &mode : NULL);
	ns_path_num(path, sizeof(path), "proc/irq/", n, "/effective_affinity_list");
	read_list(root, m, path, &irq->effective, notes, subj, "effective_affinity", false, NULL);
	ns_path_num(path, sizeof(path), "proc/irq/", n, "/affinity_hint");
	if ((r = ns_read_str(root, path, &txt)) == 0) {
		if ((r = ns_machine_parse_cpus(m, &irq->hint, txt, true)) < 0)
			ns_note_read(notes, subj, "affinity_hint", path, r, txt);
		free(txt);
	} else if (r != -ENOENT) {
		ns_note_read(notes, subj, "affinity_hint", path, r, NULL);
	}
	ns_path_num(path, sizeof(path), "proc/irq/", n, "/node");
	/* -1 or a node id below MAX_NUMNODES, in decimal (0x1 and 4294967297 are not node 1) */
	if ((r = ns_read_dec(root, path, -1, NS_NODE_MAX - 1, &node, &txt)) == 0) {
		irq->node = (int)node;
	} else if (r != -ENOENT) {
		ns_note_read(notes, subj, "node", path, r, txt);
	} else {
		char *target = NULL;
		if (ns_readlink(root, path, &target) == 0) /* a dangling link is not an old kernel */
			ns_note(notes, subj, "node", "/%s is a link to %s, which is not there", path, target);
		free(target);
	}
	free(txt);

	read_counts(root, m, irq, notes, subj);
	read_managed(root, m, irq, mode, debugfs, notes, subj);
	return 0;
}

void ns_irq_guess_managed(struct ns_irq *irq, const char *driver, unsigned nvectors)
{
	const char *name = irq->name ? irq->name : "";
	bool xen = irq->chip && strncmp(irq->chip, "xen", 3) == 0;

	if (irq->managed >= 0) {
		ns_irq_settle(irq);
		return;
	}
	if (!irq->msi) {
		irq->managed = 0; /* INTx lines are never kernel-managed */
	} else if (xen) {
		irq->managed = 0; /* Xen pirq MSIs lose the managed flag */
	} else if (driver && strcmp(driver, "nvme") == 0 && irq->queue_of_ctl >= 0) {
		irq->managed = irq->queue_of_ctl > 0; /* admin queue q0 is never managed */
	} else if (driver && strcmp(driver, "ahci") == 0) {
		irq->managed = 0; /* ahci asks for plain MSI/MSI-X vectors, never PCI_IRQ_AFFINITY */
	} else if (driver && strcmp(driver, "megaraid_sas") == 0 && nvectors == 1) {
		/* measured on Debian's 6.1: megaraid_sas's single-vector setup is never managed,
		 * whatever smp_affinity_enable says */
		irq->managed = 0;
	} else if (driver && strncmp(driver, "virtio", 6) == 0 && strchr(name, '-')) {
		const char *vq = strchr(name, '-') + 1;
		irq->managed = strncmp(vq, "req", 3) == 0 || strncmp(vq, "request", 7) == 0;
	} else {
		ns_irq_settle(irq);
		return;
	}
	irq->managed_source = NS_MANAGED_DRIVER;
	ns_irq_settle(irq);
}

void ns_irq_settle(struct ns_irq *irq)
{
	/* a managed vector is never user-settable; the storage vectors known unmanaged are */
	if (irq->user_settable < 0 && irq->managed >= 0) {
		irq->user_settable = !irq->managed;
		irq->user_settable_source = NS_SETTABLE_MANAGED;
	}
}

void ns_irq_free(struct ns_irq *irq)
{
	if (irq->name != irq->actions)
		free(irq->name);
	free(irq->actions);
	if (!irq->chip_shared)
		free(irq->chip);
	ns_cpuset_clear(&irq->affinity);
	ns_cpuset_clear(&irq->effective);
	ns_cpuset_clear(&irq->hint);
	free(irq->per_node);
	free(irq->since_fix);
	free(irq->in_interval);
	memset(irq, 0, sizeof(*irq));
}

void ns_irq_share_chips(struct ns_irq *irqs, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct ns_irq *prev = &irqs[i - 1], *irq = &irqs[i];
		if (irq->chip_shared || !irq->chip || !prev->chip || strcmp(irq->chip, prev->chip) != 0)
			continue;
		free(irq->chip);
		irq->chip = prev->chip;
		irq->chip_shared = true;
	}
}

const struct ns_cpuset *ns_irq_target(const struct ns_irq *irq)
{
	if (irq->effective.known && ns_cpuset_count(&irq->effective) > 0)
		return &irq->effective;
	return &irq->affinity;
}

char *ns_irq_first_action(struct ns_root *root, int n)
{
	char path[64], *a = NULL, *name;

	ns_path_num(path, sizeof(path), "sys/kernel/irq/", n, "/actions");
	if (ns_read_str(root, path, &a) < 0)
		return NULL;
	name = strndup(a, strcspn(a, ","));
	free(a);
	return name;
}
