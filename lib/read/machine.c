/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/machine.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <numa.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/envfile.h"
#include "base/number.h"

#define NODE_DIR "sys/devices/system/node"
#define CPU_DIR "sys/devices/system/cpu"

int ns_machine_parse_cpus(const struct ns_machine *m, struct ns_cpuset *s, const char *text, bool mask)
{
	int r = mask ? ns_cpuset_parse_mask_max(s, text, m->cpu_limit)
		     : ns_cpuset_parse_list_max(s, text, m->cpu_limit);

	if (r == 0 && m->possible.known && !ns_cpuset_subset(s, &m->possible)) {
		ns_cpuset_clear(s); /* names a CPU that cannot exist here: not a partial set */
		r = -ERANGE;
	}
	return r;
}

int ns_machine_read_cpus_text(struct ns_root *root, const char *list_path, const char *mask_path, char **txt,
			      bool *mask, struct ns_notes *notes, const char *subject, const char *field)
{
	int r = ns_read_str(root, list_path, txt);

	*mask = false;
	if (r != -ENOENT || !mask_path)
		return r;
	r = ns_read_str(root, mask_path, txt);
	if (r == -ENOENT)
		return r; /* neither form: the list form is the one missing */
	*mask = true;
	if (r == 0 && notes)
		ns_note(notes, subject, field, "/%s is missing (an older kernel's sysfs): read its mask form /%s",
			list_path, mask_path);
	return r;
}

/* A CPU list (or, without it, its mask form when mask_path is given) into s; noted when unknown. */
static void read_cpuset(struct ns_root *root, const struct ns_machine *m, const char *path, const char *mask_path,
			struct ns_cpuset *s, struct ns_notes *notes, const char *field, bool missing_is_empty,
			bool *masked)
{
	char *txt;
	bool mask;
	/* with masked, the caller notes the mask form once for all the files it read so */
	int r = ns_machine_read_cpus_text(root, path, mask_path, &txt, &mask, masked ? NULL : notes, "machine", field);

	if (masked)
		*masked = mask && r == 0;

	if (r == -ENODATA || (r == -ENOENT && missing_is_empty)) {
		ns_cpuset_clear(s);
		s->known = true; /* an empty list is a value */
		return;
	}
	if (r < 0) {
		ns_note_read(notes, "machine", field, mask ? mask_path : path, r, NULL);
		return;
	}
	r = ns_machine_parse_cpus(m, s, txt, mask);
	if (r < 0)
		ns_note_read(notes, "machine", field, mask ? mask_path : path, r, txt);
	free(txt);
}

/* Record an exclusion input that did not parse (raw may be NULL: it could not be read). */
static int record_unparsed(struct ns_machine *m, const char *field, const char *path, const char *raw, int err)
{
	struct ns_unparsed *nv = realloc(m->unparsed, (m->nunparsed + 1) * sizeof(*nv)), *u;

	if (!nv)
		return -ENOMEM;
	m->unparsed = nv;
	u = &nv[m->nunparsed];
	u->field = strdup(field);
	u->path = strdup(path);
	u->raw = raw ? strdup(raw) : NULL;
	u->err = err;
	if (!u->field || !u->path || (raw && !u->raw)) {
		free(u->field);
		free(u->path);
		free(u->raw);
		return -ENOMEM;
	}
	m->nunparsed++;
	return 0;
}

/*
 * read_cpuset()'s failures of the CPU sets fix keeps IRQs off: each one unknown is recorded with
 * the file and the text read again (no CPU is excluded by an unknown set, so fix must refuse).
 */
static int record_unknown_exclusions(struct ns_root *root, struct ns_machine *m)
{
	const struct {
		const struct ns_cpuset *s;
		const char *field, *path;
	} in[] = {
		{&m->online, "online_cpus", CPU_DIR "/online"},
		{&m->isolated, "isolated_cpus", CPU_DIR "/isolated"},
		{&m->nohz_full, "nohz_full_cpus", CPU_DIR "/nohz_full"},
	};

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		char *txt = NULL;
		int r;
		if (in[i].s->known)
			continue;
		r = ns_read_str(root, in[i].path, &txt);
		if (r == 0) { /* the parser's own answer: garbled, or CPUs this machine cannot have */
			struct ns_cpuset again = {0};
			r = ns_machine_parse_cpus(m, &again, txt, false);
			ns_cpuset_clear(&again);
			r = r < 0 ? r : -EINVAL;
		}
		r = record_unparsed(m, in[i].field, in[i].path, txt, r);
		free(txt);
		if (r < 0)
			return r;
	}
	return 0;
}

static void parse_kernel_version(struct ns_machine *m)
{
	const char *p = m->kernel_release;
	uint64_t major, minor;

	m->kver_major = m->kver_minor = 0;
	if (!p || ns_parse_dec_prefix(&p, INT_MAX, &major) < 0 || *p++ != '.' ||
	    ns_parse_dec_prefix(&p, INT_MAX, &minor) < 0)
		return;
	m->kver_major = (int)major;
	m->kver_minor = (int)minor;
}

/*
 * The number in a directory entry's name after its prefix ("node12", "cpu7"): 1 and *id when
 * it is one, below max; 0 when the name is another entry (no digit after the prefix); -1 for
 * a name that looks like one but is not in the kernel's form or is out of range (noted).
 */
static int entry_id(const char *name, const char *prefix, uint64_t max, uint64_t *id, struct ns_notes *notes,
		    const char *field, const char *dir)
{
	size_t len = strlen(prefix);
	const char *p = name + len;
	int r;

	if (strncmp(name, prefix, len) != 0 || *p < '0' || *p > '9')
		return 0;
	r = ns_parse_dec_prefix(&p, max, id);
	if (r == 0 && *p == '\0')
		return 1;
	if (r == -ERANGE && (!*p || (*p >= '0' && *p <= '9')))
		ns_note(notes, "machine", field, "/%s/%s: %s id beyond the kernel's limit (%llu): ignored", dir, name,
			prefix, (unsigned long long)max);
	else
		ns_note(notes, "machine", field, "/%s/%s is not a %sN name the kernel makes: ignored", dir, name,
			prefix);
	return -1;
}

/* The node's cpuN links: every CPU registered under it, online or not. */
static void read_node_links(struct ns_root *root, const struct ns_machine *m, const char *node,
			    struct ns_cpuset *present, struct ns_notes *notes)
{
	char path[256], **names;
	size_t n;
	int r;

	snprintf(path, sizeof(path), NODE_DIR "/%s", node);
	if ((r = ns_list_dir(root, path, &names, &n)) < 0) {
		ns_note_read(notes, "machine", "nodes.cpus", path, r, NULL);
		return;
	}
	present->known = true;
	for (size_t i = 0; i < n; i++) {
		uint64_t c;
		if (entry_id(names[i], "cpu", m->cpu_limit - 1, &c, notes, "nodes.cpus", path) == 1)
			ns_cpuset_set(present, (unsigned)c);
	}
	ns_strv_free(names, n);
}

/* "Node N MemTotal:   X kB" in bytes; -EINVAL garbled, -ERANGE when X kB does not fit. */
static int parse_memtotal(const char *txt, long long *bytes)
{
	const char *p = strstr(txt, "MemTotal:");
	uint64_t kb;
	int r;

	if (!p)
		return -EINVAL;
	p += strlen("MemTotal:");
	while (*p == ' ')
		p++;
	r = ns_parse_dec_prefix(&p, (uint64_t)LLONG_MAX / 1024, &kb);
	if (r < 0)
		return r;
	if (strncmp(p, " kB", 3) != 0 || (p[3] != '\0' && p[3] != '\n'))
		return -EINVAL;
	*bytes = (long long)kb * 1024;
	return 0;
}

/* A distance row: one number per node, 10-254 each, separated by single spaces. */
static int parse_distances(const char *txt, int **out, size_t *nout)
{
	size_t cnt = 1, k = 0;
	const char *p = txt;
	int *d;

	for (const char *q = txt; *q; q++)
		cnt += *q == ' ';
	if (cnt > NS_NODE_MAX)
		return -ERANGE;
	d = calloc(cnt, sizeof(int));
	if (!d)
		return -ENOMEM;
	for (;;) {
		char tok[24];
		size_t len = strcspn(p, " ");
		long long v;
		int r;
		if (len == 0 || len >= sizeof(tok)) {
			free(d);
			return len ? -ERANGE : -EINVAL;
		}
		memcpy(tok, p, len);
		tok[len] = '\0';
		r = ns_parse_dec(tok, NS_DISTANCE_MIN, NS_DISTANCE_MAX, &v);
		if (r < 0) {
			free(d);
			return r;
		}
		d[k++] = (int)v;
		p += len;
		if (!*p)
			break;
		p++; /* the one space */
	}
	*out = d;
	*nout = k;
	return 0;
}

/* node/online, node/has_cpu: the kernel's node lists (a capture or kernel without them: unknown) */
static void read_node_list(struct ns_root *root, const char *path, struct ns_cpuset *s, struct ns_notes *notes)
{
	char *txt;
	int r = ns_read_str(root, path, &txt);

	if (r == -ENOENT)
		return;
	if (r < 0) {
		ns_note_read(notes, "machine", "multi_node", path, r, NULL);
		return;
	}
	r = ns_cpuset_parse_list_max(s, txt, NS_NODE_MAX);
	if (r < 0)
		ns_note_read(notes, "machine", "multi_node", path, r, txt);
	free(txt);
}

static int read_nodes(struct ns_root *root, struct ns_machine *m, struct ns_notes *notes)
{
	struct ns_cpuset masked_nodes = {0};
	char **names;
	size_t n;
	int r = ns_list_dir(root, NODE_DIR, &names, &n);

	if (r < 0) {
		/* no NUMA support in this kernel (no node/): one node, node 0, whose CPUs are the online
		 * ones (cpumask_of_node(0) is cpu_online_mask, include/asm-generic/topology.h); a
		 * node/ that cannot be read leaves whether the kernel has NUMA unknown */
		m->numa_support = r == -ENOENT ? 0 : -1;
		if (r != -ENOENT)
			ns_note_read(notes, "machine", "nodes", NODE_DIR, r, NULL);
		m->nodes = calloc(1, sizeof(*m->nodes));
		if (!m->nodes)
			return -ENOMEM;
		m->nnodes = 1;
		m->nodes[0].memory_bytes = -1;
		return ns_cpuset_copy(&m->nodes[0].cpus, &m->online);
	}
	m->numa_support = 1;
	m->nodes = calloc(n ? n : 1, sizeof(*m->nodes));
	if (!m->nodes) {
		ns_strv_free(names, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct ns_node *node = &m->nodes[m->nnodes];
		char path[256], mask[256], *txt;
		bool masked;
		uint64_t id;

		/* node ids are below MAX_NUMNODES: node4294967297 is not node 1, and node1000000
		 * costs nothing (refused by its name, before anything is read or sized by it) */
		if (entry_id(names[i], "node", NS_NODE_MAX - 1, &id, notes, "nodes", NODE_DIR) != 1)
			continue;
		node->id = (int)id;
		node->memory_bytes = -1;
		snprintf(path, sizeof(path), NODE_DIR "/%s/cpulist", names[i]);
		snprintf(mask, sizeof(mask), NODE_DIR "/%s/cpumap", names[i]);
		read_cpuset(root, m, path, mask, &node->cpus, notes, "nodes.cpus", false, &masked);
		if (masked && ns_cpuset_set(&masked_nodes, (unsigned)id) < 0) {
			ns_strv_free(names, n);
			return -ENOMEM;
		}
		read_node_links(root, m, names[i], &node->present, notes);
		snprintf(path, sizeof(path), NODE_DIR "/%s/meminfo", names[i]);
		if ((r = ns_read_str(root, path, &txt)) == 0) {
			r = parse_memtotal(txt, &node->memory_bytes);
			if (r < 0) {
				const char *line = strstr(txt, "MemTotal:");
				char *raw = line ? strndup(line, strcspn(line, "\n")) : NULL;
				ns_note_read(notes, "machine", "nodes.memory_bytes", path, r, raw);
				free(raw);
			}
			free(txt);
		} else {
			ns_note_read(notes, "machine", "nodes.memory_bytes", path, r, NULL);
		}
		snprintf(path, sizeof(path), NODE_DIR "/%s/distance", names[i]);
		if ((r = ns_read_str(root, path, &txt)) == 0) {
			r = parse_distances(txt, &node->distances, &node->ndistances);
			if (r < 0) {
				node->distances = NULL;
				node->ndistances = 0;
				ns_note_read(notes, "machine", "nodes.distances", path, r, txt);
			}
			free(txt);
		} else {
			ns_note_read(notes, "machine", "nodes.distances", path, r, NULL);
		}
		m->nnodes++;
	}
	ns_strv_free(names, n);
	if (ns_cpuset_count(&masked_nodes)) {
		char *ids = NULL;
		ns_cpuset_format(&masked_nodes, &ids);
		ns_note(notes, "machine", "nodes.cpus",
			"/" NODE_DIR "/node*/cpulist is missing (an older kernel's sysfs): read its mask form cpumap "
			"for nodes %s",
			ids ? ids : "?");
		free(ids);
		ns_cpuset_clear(&masked_nodes);
	}
	return 0;
}

/*
 * The node's cores, when its SMT folds: every online CPU's thread_siblings_list readable, each
 * holding the CPU, all of one size k > 1, k x cores = CPUs. Anything else leaves smt_threads 0
 * (the map prints the plain cpulist; no note: nothing is judged by it). -ENOMEM only.
 */
static int read_smt(struct ns_root *root, const struct ns_machine *m, struct ns_node *node)
{
	unsigned threads = 0;
	bool fold = node->cpus.known && ns_cpuset_count(&node->cpus) > 1;
	int r = 0;

	for (int c = fold ? ns_cpuset_first(&node->cpus) : -1; fold && c >= 0; c = ns_cpuset_next(&node->cpus, c)) {
		char path[96], *txt = NULL;
		struct ns_cpuset sib = {0};
		snprintf(path, sizeof(path), "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
		fold = ns_read_str(root, path, &txt) == 0 && ns_machine_parse_cpus(m, &sib, txt, false) == 0 &&
		       ns_cpuset_test(&sib, (unsigned)c) && (!threads || ns_cpuset_count(&sib) == threads);
		if (fold) {
			threads = ns_cpuset_count(&sib);
			if (ns_cpuset_first(&sib) == c && (r = ns_cpuset_set(&node->cores, (unsigned)c)) < 0)
				fold = false;
		}
		free(txt);
		ns_cpuset_clear(&sib);
	}
	node->cores.known = true;
	if (fold && threads > 1 && ns_cpuset_count(&node->cores) * threads == ns_cpuset_count(&node->cpus)) {
		node->smt_threads = threads;
		return 0;
	}
	ns_cpuset_clear(&node->cores);
	return r == -ENOMEM ? r : 0;
}

/*
 * On the live root libnuma is the authority for node sizes and distances (it reads the same
 * kernel interfaces a captured tree holds as files, so a replay gives the same values).
 */
static void nodes_from_libnuma(struct ns_machine *m)
{
	if (numa_available() < 0)
		return;
	for (size_t i = 0; i < m->nnodes; i++) {
		struct ns_node *node = &m->nodes[i];
		long long size = numa_node_size64(node->id, NULL);
		int *d;
		if (size >= 0)
			node->memory_bytes = size;
		d = calloc(m->nnodes, sizeof(int));
		if (!d)
			continue;
		for (size_t k = 0; k < m->nnodes; k++)
			d[k] = numa_distance(node->id, m->nodes[k].id);
		if (d[0] == 0) { /* libnuma could not tell: keep what sysfs said */
			free(d);
			continue;
		}
		free(node->distances);
		node->distances = d;
		node->ndistances = m->nnodes;
	}
}

/* A distance row must have one entry per node. */
static void check_distances(struct ns_machine *m, struct ns_notes *notes)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		struct ns_node *n = &m->nodes[i];
		if (n->distances && n->ndistances != m->nnodes) {
			ns_note(notes, "machine", "nodes.distances",
				"/" NODE_DIR "/node%d/distance has %zu entries for %zu nodes (truncated)", n->id,
				n->ndistances, m->nnodes);
			free(n->distances);
			n->distances = NULL;
			n->ndistances = 0;
		}
	}
}

static int build_cpu_node_map(struct ns_machine *m, struct ns_notes *notes)
{
	int max = -1, first_cpu = -1, first_a = -1, first_b = -1;
	bool all_known;

	for (size_t i = 0; i < m->nnodes; i++) {
		ns_cpuset_foreach (c, &m->nodes[i].cpus)
			if (c > max)
				max = c;
		ns_cpuset_foreach (c, &m->nodes[i].present)
			if (c > max)
				max = c;
	}
	ns_cpuset_foreach (c, &m->possible)
		if (c > max)
			max = c;
	m->ncpu_node = (size_t)(max + 1);
	m->cpu_node = malloc((m->ncpu_node ? m->ncpu_node : 1) * sizeof(int));
	if (!m->cpu_node)
		return -ENOMEM;
	for (size_t c = 0; c < m->ncpu_node; c++)
		m->cpu_node[c] = -1;
	for (size_t i = 0; i < m->nnodes; i++)
		ns_cpuset_foreach (c, &m->nodes[i].cpus) {
			int was = m->cpu_node[c], r;
			if (was >= 0 && was != m->nodes[i].id) {
				/* a firmware bug (SRAT): both nodes' places in the map are unreliable */
				if (first_cpu < 0) {
					first_cpu = c;
					first_a = was;
					first_b = m->nodes[i].id;
				}
				if ((r = ns_cpuset_set(&m->overlapping_cpus, (unsigned)c)) < 0 ||
				    (r = ns_cpuset_set(&m->overlapping_nodes, (unsigned)was)) < 0 ||
				    (r = ns_cpuset_set(&m->overlapping_nodes, (unsigned)m->nodes[i].id)) < 0)
					return r;
				m->cpu_map_partial = true;
				continue;
			}
			m->cpu_node[c] = m->nodes[i].id;
		}
	/* a CPU claimed by several nodes is on none of them for certain */
	ns_cpuset_foreach (c, &m->overlapping_cpus)
		m->cpu_node[c] = -1;
	all_known = true;
	for (size_t i = 0; i < m->nnodes; i++)
		all_known &= m->nodes[i].cpus.known;
	/* an overlap seen is certain; none seen is an answer only when every node's CPUs are known */
	m->overlapping_nodes.known = m->overlapping_cpus.known = first_cpu >= 0 || all_known;
	if (first_cpu >= 0) {
		char *cpus = NULL, *nodes = NULL;
		ns_cpuset_format(&m->overlapping_cpus, &cpus);
		ns_cpuset_format(&m->overlapping_nodes, &nodes);
		ns_note(notes, "machine", "nodes.cpus",
			"CPU %d is on the cpulists of node %d and node %d (CPUs %s are each on more than one node's "
			"cpulist, nodes %s): the CPU -> node map is unknown",
			first_cpu, first_a, first_b, cpus ? cpus : "?", nodes ? nodes : "?");
		free(cpus);
		free(nodes);
	}
	/* every online CPU sits on a node: one on none means a node's cpulist is wrong (said
	 * already when one did not parse); the node whose cpuN link holds it is the one */
	if (m->online.known && m->nnodes && ns_machine_cpu_map_complete(m))
		ns_cpuset_foreach (c, &m->online) {
			const struct ns_node *own = NULL;
			if (ns_machine_cpu_node(m, c) >= 0)
				continue;
			for (size_t i = 0; i < m->nnodes && !own; i++)
				if (ns_cpuset_test(&m->nodes[i].present, (unsigned)c))
					own = &m->nodes[i];
			if (own)
				ns_note(notes, "machine", "nodes.cpus",
					"/" NODE_DIR
					"/node%d/cpulist lacks online CPU %d (its cpu%d link is there): the "
					"CPU -> node map is unknown",
					own->id, c, c);
			else
				ns_note(notes, "machine", "nodes.cpus",
					"online CPU %d is on no node's cpulist (/" NODE_DIR
					"/node*/cpulist): the CPU -> node map is unknown",
					c);
			m->cpu_map_partial = true;
			break;
		}
	m->first_memory_node = -1;
	for (size_t i = 0; i < m->nnodes; i++)
		if (m->nodes[i].memory_bytes != 0 &&
		    (m->first_memory_node < 0 || m->nodes[i].id < m->first_memory_node))
			m->first_memory_node = m->nodes[i].id;
	return 0;
}

/* A process's environ as it is (NULs and all: a value holding " KEY=v" is not an entry of its
 * own), recorded for a snapshot like any read (lib/read/root.h ns_read_bytes). */
static int read_environ(struct ns_root *root, const char *path, char **out, size_t *len)
{
	return ns_read_bytes(root, path, out, len);
}

/* irqbalance 1.9 takes an empty value as none (lib/read/envfile.h, ns_irqbalance_banned) */
static bool set(const char *v)
{
	return v && *v;
}

static void unset(char **v)
{
	free(v[0]);
	free(v[1]);
	v[0] = v[1] = NULL;
}

/*
 * The two variables as the options files give them: /etc/default/irqbalance, else
 * /etc/sysconfig/irqbalance (the first that assigns either), each read as a shell sourcing it
 * and systemd's EnvironmentFile= would both read it (lib/read/envfile.h). A file that cannot be read,
 * or a line numastor cannot be sure of, is recorded in m->unparsed (fix refuses, naming it).
 * Returns 0 (v[] set, *from the file, or "" when neither file gives either a non-empty value)
 * or -ENOMEM.
 */
static int ban_from_files(struct ns_root *root, struct ns_machine *m, struct ns_notes *notes, char **v, char *from,
			  size_t fromlen, bool *refused)
{
	static const char *const files[] = {"etc/default/irqbalance", "etc/sysconfig/irqbalance"};
	static const char *const keys[] = {NS_IRQBALANCE_BANNED_MASK, NS_IRQBALANCE_BANNED_LIST};

	*refused = false;
	for (size_t i = 0; i < 2; i++) {
		struct ns_envfile_doubt doubt;
		char *txt, where[64];
		/* a NUL byte is -EBADMSG: systemd stops reading at it, a shell does not */
		int r = ns_read_text(root, files[i], &txt);
		if (r == -ENOENT || r == -ENODATA)
			continue;
		if (r < 0) {
			ns_note_read(notes, "machine", "irqbalance.banned_cpus", files[i], r, NULL);
			*refused = true;
			return record_unparsed(m, "irqbalance.options", files[i], NULL, r);
		}
		r = ns_envfile_get(txt, keys, 2, v, NULL, &doubt);
		free(txt);
		if (r == -EINVAL) {
			snprintf(where, sizeof(where), "%s:%u", files[i], doubt.line);
			ns_note(notes, "machine", "irqbalance.banned_cpus",
				"/%s reads '%.80s': %s; irqbalance's banned CPUs are unknown", where, doubt.text,
				doubt.why);
			r = record_unparsed(m, "irqbalance.options", where, doubt.text, -EINVAL);
			ns_envfile_doubt_free(&doubt);
			*refused = true;
			return r;
		}
		if (r < 0)
			return r;
		if (set(v[0]) || set(v[1])) {
			snprintf(from, fromlen, "%s", files[i]);
			return 0;
		}
		unset(v);
	}
	return 0;
}

/*
 * irqbalance: a process named irqbalance, its --policyscript, and its banned CPUs, from its two
 * variables as irqbalance 1.9 takes them (lib/read/envfile.h, ns_irqbalance_banned: the hex mask
 * IRQBALANCE_BANNED_CPUS when non-empty, else IRQBALANCE_BANNED_CPULIST): the running daemon's
 * environ (split on its NULs) when it gives either a non-empty value, else the options file
 * (what the daemon takes at its next start: a ban there is honoured, never widened away). A
 * value that does not parse, an options line numastor cannot be sure of, or a process list
 * that cannot be read is recorded in m->unparsed.
 */
static int read_irqbalance(struct ns_root *root, struct ns_machine *m, struct ns_notes *notes)
{
	struct ns_irqbalance *ib = &m->irqbalance;
	char **names;
	size_t n;
	int r;
	char *v[2] = {NULL, NULL}, from[64] = "";
	enum ns_ban_from ban;

	ib->running = -1;
	ib->pid = -1;
	r = ns_list_dir(root, "proc", &names, &n);
	if (r < 0) {
		ns_note_read(notes, "machine", "irqbalance.running", "proc", r, NULL);
		/* whether a daemon runs with its own banned list is unknown */
		return record_unparsed(m, "irqbalance.banned_cpus", "proc", NULL, r);
	}
	ib->running = 0;
	r = 0;
	for (size_t i = 0; i < n && ib->running != 1; i++) {
		char path[64], *comm;
		long long pid;
		if (ns_parse_dec(names[i], 1, NS_PID_MAX, &pid) < 0)
			continue; /* not a process (PID_MAX_LIMIT is 2^22) */
		snprintf(path, sizeof(path), "proc/%s/comm", names[i]);
		if (ns_read_str(root, path, &comm) < 0)
			continue; /* exited meanwhile */
		if (strcmp(comm, "irqbalance") == 0) {
			char *cmd, *env;
			size_t len;
			ib->running = 1;
			ib->pid = (long)pid;
			snprintf(path, sizeof(path), "proc/%s/cmdline", names[i]);
			if (ns_read_str(root, path, &cmd) == 0) {
				/* NULs became spaces: options are separated by spaces */
				char *p = strstr(cmd, "--policyscript");
				if (!p)
					p = strstr(cmd, " -l ");
				if (p) {
					p += strcspn(p, "= ");
					p += strspn(p, "= ");
					ib->policyscript = strndup(p, strcspn(p, " "));
				}
				free(cmd);
			}
			snprintf(path, sizeof(path), "proc/%s/environ", names[i]);
			r = read_environ(root, path, &env, &len);
			if (r == 0) {
				/* getenv(): the first entry of each */
				r = ns_environ_get(env, len, NS_IRQBALANCE_BANNED_MASK, &v[0]);
				if (r == 0)
					r = ns_environ_get(env, len, NS_IRQBALANCE_BANNED_LIST, &v[1]);
				if (set(v[0]) || set(v[1]))
					snprintf(from, sizeof(from), "%s", path);
				else
					unset(v); /* empty is unset to irqbalance: the file's may say more */
				free(env);
			} else if (r == -EACCES || r == -EPERM) {
				ns_note_read(notes, "machine", "irqbalance.banned_cpus", path, r, NULL);
			}
			if (r != -ENOMEM)
				r = 0;
		}
		free(comm);
		if (r < 0)
			break;
	}
	ns_strv_free(names, n);
	if (r == 0 && !from[0]) {
		bool refused;
		r = ban_from_files(root, m, notes, v, from, sizeof(from), &refused);
		if (r < 0 || refused)
			goto out;
	}
	if (r < 0)
		goto out;
	/* a CPU beyond kernel_max is no CPU of this kernel, and a list reaching far beyond would
	 * cost a set that large */
	r = ns_irqbalance_banned(v[0], v[1], m->cpu_limit, &ib->banned_cpus, &ban);
	if (r == -EINVAL || r == -ERANGE) {
		bool mask = ban == NS_BAN_MASK;
		const char *raw = v[mask ? 0 : 1];
		ns_note(notes, "machine", "irqbalance.banned_cpus", "%s holds a garbled value '%.40s'",
			mask ? NS_IRQBALANCE_BANNED_MASK : NS_IRQBALANCE_BANNED_LIST, raw);
		r = record_unparsed(m, mask ? "irqbalance.banned_cpus_mask" : "irqbalance.banned_cpus", from, raw, r);
	}
out:
	free(v[0]);
	free(v[1]);
	return r;
}

int ns_machine_read(struct ns_root *root, struct ns_machine *m, struct ns_notes *notes)
{
	int r;

	memset(m, 0, sizeof(*m));
	r = ns_read_str(root, "proc/sys/kernel/osrelease", &m->kernel_release);
	if (r < 0)
		ns_note_read(notes, "machine", "kernel_release", "proc/sys/kernel/osrelease", r, NULL);
	parse_kernel_version(m);
	if (ns_root_needs(root, NS_NEED_IRQS)) {
		/* one look for the machine, not one for each PCI function: not there, or unreadable, is
		 * the same for every vector (managed-ness then comes from the other sources) */
		m->irq_debugfs = ns_probe(root, "sys/kernel/debug/irq/irqs");
		if (m->irq_debugfs < 0)
			ns_note_read(notes, "machine", "irq.managed", "sys/kernel/debug/irq/irqs", m->irq_debugfs,
				     NULL);
	}
	{
		long long t;
		char *raw = NULL;
		m->tainted = -1;
		r = ns_read_dec(root, "proc/sys/kernel/tainted", 0, LLONG_MAX, &t, &raw);
		if (r == 0)
			m->tainted = t;
		else
			ns_note_read(notes, "machine", "tainted", "proc/sys/kernel/tainted", r, raw);
		free(raw);
	}
	{
		/* CPU ids are below kernel_max + 1 (NR_CPUS); every CPU list is held to it */
		long long k;
		char *raw = NULL;
		m->cpu_limit = NS_CPU_MAX;
		r = ns_read_dec(root, CPU_DIR "/kernel_max", 0, NS_CPU_MAX - 1, &k, &raw);
		if (r == 0)
			m->cpu_limit = (unsigned)k + 1;
		else if (r != -ENOENT) /* older captures lack it */
			ns_note_read(notes, "machine", "kernel_max", CPU_DIR "/kernel_max", r, raw);
		free(raw);
	}
	read_cpuset(root, m, CPU_DIR "/possible", NULL, &m->possible, notes, "possible_cpus", false, NULL);
	/* the kernel always has a CPU 0 possible and online: an empty list is not this machine's
	 * (and must not make every other list fail as outside it) */
	if (m->possible.known && ns_cpuset_count(&m->possible) == 0) {
		ns_note(notes, "machine", "possible_cpus", "/" CPU_DIR "/possible is empty");
		m->possible.known = false;
	}
	read_cpuset(root, m, CPU_DIR "/online", NULL, &m->online, notes, "online_cpus", false, NULL);
	if (m->online.known && ns_cpuset_count(&m->online) == 0) {
		ns_note(notes, "machine", "online_cpus", "/" CPU_DIR "/online is empty");
		m->online.known = false;
	}
	if (!m->possible.known && m->online.known)
		ns_cpuset_copy(&m->possible, &m->online);
	read_cpuset(root, m, CPU_DIR "/isolated", NULL, &m->isolated, notes, "isolated_cpus", true, NULL);
	read_cpuset(root, m, CPU_DIR "/nohz_full", NULL, &m->nohz_full, notes, "nohz_full_cpus", true, NULL);
	r = record_unknown_exclusions(root, m);
	if (r < 0)
		return r;
	{
		struct ns_isolation_in in = {.online = &m->online,
					     .possible = &m->possible,
					     .isolated = &m->isolated,
					     .nohz_full = &m->nohz_full,
					     .cpu_limit = m->cpu_limit};
		struct ns_isolation *iso = &m->isolation;
		r = ns_isolation_read(root, &in, iso, notes);
		if (r < 0)
			return r;
		/* fix keeps IRQs off every isolated CPU: an isolation input it cannot read is a refusal */
		if (iso->unparsed_param) {
			char field[64];
			snprintf(field, sizeof(field), "isolation.%s", iso->unparsed_param);
			r = record_unparsed(m, field, "proc/cmdline", iso->unparsed_raw, iso->unparsed_err);
		} else if (!iso->cgroup.known) {
			r = record_unparsed(m, "isolation.cgroup_isolated_cpus", "sys/fs/cgroup", NULL, -EIO);
		}
		if (r < 0)
			return r;
	}
	read_node_list(root, NODE_DIR "/online", &m->online_nodes, notes);
	read_node_list(root, NODE_DIR "/has_cpu", &m->cpu_nodes, notes);
	r = read_nodes(root, m, notes);
	if (r < 0)
		return r;
	if (ns_root_is_live(root))
		nodes_from_libnuma(m);
	check_distances(m, notes);
	if (ns_root_needs(root, NS_NEED_TOPOLOGY))
		for (size_t i = 0; i < m->nnodes; i++)
			if ((r = read_smt(root, m, &m->nodes[i])) < 0)
				return r;
	r = build_cpu_node_map(m, notes);
	if (r < 0)
		return r;
	return read_irqbalance(root, m, notes);
}

void ns_machine_free(struct ns_machine *m)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		ns_cpuset_clear(&m->nodes[i].cpus);
		ns_cpuset_clear(&m->nodes[i].present);
		ns_cpuset_clear(&m->nodes[i].cores);
		free(m->nodes[i].distances);
	}
	free(m->nodes);
	free(m->kernel_release);
	ns_cpuset_clear(&m->online);
	ns_cpuset_clear(&m->possible);
	ns_cpuset_clear(&m->isolated);
	ns_cpuset_clear(&m->nohz_full);
	ns_cpuset_clear(&m->online_nodes);
	ns_cpuset_clear(&m->cpu_nodes);
	ns_cpuset_clear(&m->overlapping_nodes);
	ns_cpuset_clear(&m->overlapping_cpus);
	free(m->cpu_node);
	for (size_t i = 0; i < m->nunparsed; i++) {
		free(m->unparsed[i].field);
		free(m->unparsed[i].path);
		free(m->unparsed[i].raw);
	}
	free(m->unparsed);
	ns_isolation_free(&m->isolation);
	free(m->irqbalance.policyscript);
	ns_cpuset_clear(&m->irqbalance.banned_cpus);
	memset(m, 0, sizeof(*m));
}

bool ns_machine_cpu_map_complete(const struct ns_machine *m)
{
	if (m->cpu_map_partial)
		return false;
	for (size_t i = 0; i < m->nnodes; i++)
		if (!m->nodes[i].cpus.known)
			return false;
	return true;
}

int ns_machine_cpu_node(const struct ns_machine *m, int cpu)
{
	if (cpu < 0 || (size_t)cpu >= m->ncpu_node)
		return -1;
	return m->cpu_node[cpu];
}

int ns_machine_nodes_of(const struct ns_machine *m, const struct ns_cpuset *s, struct ns_cpuset *nodes)
{
	bool complete = ns_machine_cpu_map_complete(m);

	ns_cpuset_clear(nodes);
	nodes->known = s->known;
	ns_cpuset_foreach (c, s) {
		int n = ns_machine_cpu_node(m, c);
		if (n < 0 && !complete) {
			/* maybe on the node whose cpulist did not parse: not an answer */
			ns_cpuset_clear(nodes);
			return 0;
		}
		if (n >= 0) {
			int r = ns_cpuset_set(nodes, (unsigned)n);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

bool ns_machine_multi_node(const struct ns_machine *m)
{
	/* the kernel's node list (has_cpu, else online: a capture may lack has_cpu), with the nodes
	 * whose CPU lists or cpuN links show CPUs (has_cpu leaves out a node whose CPUs are all
	 * offline now); never only the nodes whose cpulist could be read */
	const struct ns_cpuset *listed = m->cpu_nodes.known ? &m->cpu_nodes : &m->online_nodes;
	struct ns_cpuset with_cpus = {0};
	bool multi;

	if (listed->known && ns_cpuset_copy(&with_cpus, listed) < 0)
		return ns_cpuset_count(listed) > 1;
	for (size_t i = 0; i < m->nnodes; i++)
		if (ns_cpuset_count(&m->nodes[i].cpus) > 0 || ns_cpuset_count(&m->nodes[i].present) > 0)
			if (ns_cpuset_set(&with_cpus, (unsigned)m->nodes[i].id) < 0)
				break;
	multi = ns_cpuset_count(&with_cpus) > 1;
	ns_cpuset_clear(&with_cpus);
	return multi;
}

bool ns_machine_offline_elsewhere(const struct ns_machine *m, const struct ns_cpuset *nodes)
{
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct ns_node *n = &m->nodes[i];
		if (ns_cpuset_test(nodes, (unsigned)n->id))
			continue;
		ns_cpuset_foreach (c, &n->present)
			if (!ns_cpuset_test(&m->online, (unsigned)c))
				return true;
	}
	return false;
}

bool ns_machine_spans_all_nodes(const struct ns_machine *m, const struct ns_cpuset *nodes)
{
	for (size_t i = 0; i < m->nnodes; i++)
		if (ns_cpuset_count(&m->nodes[i].cpus) && !ns_cpuset_test(nodes, (unsigned)m->nodes[i].id))
			return false;
	return true;
}

const struct ns_node *ns_machine_node(const struct ns_machine *m, int id)
{
	for (size_t i = 0; i < m->nnodes; i++)
		if (m->nodes[i].id == id)
			return &m->nodes[i];
	return NULL;
}

bool ns_machine_node_overlaps(const struct ns_machine *m, int id)
{
	return id >= 0 && ns_cpuset_test(&m->overlapping_nodes, (unsigned)id);
}

bool ns_machine_kernel_at_least(const struct ns_machine *m, int major, int minor)
{
	if (m->kver_major == 0)
		return false;
	return m->kver_major > major || (m->kver_major == major && m->kver_minor >= minor);
}
