/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/isolation.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CGROUP_DIR "sys/fs/cgroup"
/* cgroup directories looked at for isolated partitions (only partition roots are entered) */
#define CGROUP_WALK_MAX 4096

const unsigned ns_isolation_flags[NS_ISO_NFLAGS] = {NS_ISO_DOMAIN, NS_ISO_MANAGED_IRQ, NS_ISO_NOHZ, NS_ISO_IO_QUEUE};

const char *ns_isolation_flag_name(unsigned flag)
{
	switch (flag) {
	case NS_ISO_DOMAIN:
		return "domain";
	case NS_ISO_MANAGED_IRQ:
		return "managed_irq";
	case NS_ISO_NOHZ:
		return "nohz";
	case NS_ISO_IO_QUEUE:
		return "io_queue";
	}
	return "?";
}

/*
 * isolcpus=[flag,]...LIST as housekeeping_isolcpus_setup() reads it: leading words that are
 * flags (each followed by a comma); an unknown word of letters and '_' is skipped, as the kernel
 * skips it; no flag means domain. io_queue is Daniel Wagner's flag (blk-mq sizes the queues to
 * the housekeeping CPUs), taken where a kernel carries it.
 */
static int parse_isolcpus(const char *val, unsigned limit, struct ns_cpuset *cpus, unsigned *flags)
{
	static const struct {
		const char *word;
		unsigned flag;
	} known[] = {{"nohz,", NS_ISO_NOHZ},
		     {"domain,", NS_ISO_DOMAIN},
		     {"managed_irq,", NS_ISO_MANAGED_IRQ},
		     {"io_queue,", NS_ISO_IO_QUEUE}};
	unsigned f = 0;
	struct ns_cpuset s = {0};
	int r;

	while (isalpha((unsigned char)*val)) {
		bool matched = false;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && !matched; i++)
			if (strncmp(val, known[i].word, strlen(known[i].word)) == 0) {
				f |= known[i].flag;
				val += strlen(known[i].word);
				matched = true;
			}
		if (matched)
			continue;
		size_t len = strspn(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_");
		if (val[len] != ',')
			return -EINVAL; /* the kernel refuses the parameter too */
		val += len + 1;
	}
	r = ns_cpuset_parse_list_max(&s, val, limit);
	if (r < 0)
		return r;
	if (!f)
		f = NS_ISO_DOMAIN;
	*flags |= f;
	/* several isolcpus= isolate the union */
	r = ns_cpuset_or(cpus, &s);
	cpus->known = true;
	ns_cpuset_clear(&s);
	return r;
}

static int parse_list_param(const char *val, unsigned limit, struct ns_cpuset *out)
{
	struct ns_cpuset s = {0};
	int r = ns_cpuset_parse_list_max(&s, val, limit);

	if (r < 0)
		return r;
	ns_cpuset_clear(out); /* the last one given is the one the kernel keeps */
	*out = s;
	return 0;
}

int ns_isolation_parse_cmdline(const char *cmdline, unsigned limit, struct ns_isolation *iso, const char **param,
			       char **raw)
{
	const char *p = cmdline;

	*param = NULL;
	char *tok = malloc(strlen(cmdline) + 1); /* a parameter is never longer than the line */

	*raw = NULL;
	if (!tok)
		return -ENOMEM;
	while (*p) {
		size_t n = 0;
		bool quoted = false;
		int r = 0;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		/* one parameter; double quotes group (the kernel's next_arg), and are dropped */
		for (; *p && (quoted || !isspace((unsigned char)*p)); p++) {
			if (*p == '"') {
				quoted = !quoted;
				continue;
			}
			tok[n++] = *p;
		}
		tok[n] = '\0';
		if (strcmp(tok, "--") == 0)
			break; /* the rest is init's */
		if (strncmp(tok, "isolcpus=", 9) == 0) {
			*param = "isolcpus";
			r = parse_isolcpus(tok + 9, limit, &iso->isolcpus, &iso->isolcpus_flags);
		} else if (strncmp(tok, "nohz_full=", 10) == 0) {
			*param = "nohz_full";
			r = parse_list_param(tok + 10, limit, &iso->nohz_full);
		} else if (strncmp(tok, "irqaffinity=", 12) == 0) {
			*param = "irqaffinity";
			r = parse_list_param(tok + 12, limit, &iso->irqaffinity);
		}
		if (r < 0) {
			*raw = strdup(tok);
			free(tok);
			return r;
		}
	}
	free(tok);
	*param = NULL;
	return 0;
}

/* cpuset.cpus.partition: "member", "root", "isolated", or "isolated invalid (REASON)" (no partition). */
static int partition_kind(struct ns_root *root, const char *dir, char **kind)
{
	char path[4096], *txt;
	int r;

	snprintf(path, sizeof(path), "%s/cpuset.cpus.partition", dir);
	r = ns_read_str(root, path, &txt);
	if (r < 0)
		return r;
	*kind = txt;
	return 0;
}

/*
 * Isolated partitions under dir (a partition root): each child whose cpuset.cpus.partition reads
 * "isolated" adds its cpuset.cpus.effective; children that are partitions themselves ("root",
 * "isolated") are entered, as only they can hold partitions. An invalid one ("isolated invalid
 * (...)") is no partition: the kernel gives its CPUs back to the parent.
 */
static int walk_partitions(struct ns_root *root, const char *dir, unsigned limit, struct ns_cpuset *out, size_t *budget,
			   struct ns_notes *notes)
{
	char **names;
	size_t n;
	int r = ns_list_dir(root, dir, &names, &n);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n && r == 0; i++) {
		char child[4096], *kind = NULL;
		if (*budget == 0) {
			r = -E2BIG;
			break;
		}
		(*budget)--;
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", dir, names[i]) >= sizeof(child))
			continue;
		if (partition_kind(root, child, &kind) < 0)
			continue; /* a file, or a cgroup without cpuset */
		if (strcmp(kind, "isolated") == 0) {
			char path[4096], *txt;
			struct ns_cpuset s = {0};
			snprintf(path, sizeof(path), "%s/cpuset.cpus.effective", child);
			r = ns_read_str(root, path, &txt);
			if (r == -ENODATA) {
				r = 0; /* an empty partition */
			} else if (r == 0) {
				r = ns_cpuset_parse_list_max(&s, txt, limit);
				if (r < 0)
					ns_note_read(notes, "machine", "isolation.cgroup_isolated_cpus", path, r, txt);
				else
					r = ns_cpuset_or(out, &s);
				ns_cpuset_clear(&s);
				free(txt);
			} else {
				ns_note_read(notes, "machine", "isolation.cgroup_isolated_cpus", path, r, NULL);
			}
		}
		if (r == 0 && (strcmp(kind, "root") == 0 || strcmp(kind, "isolated") == 0))
			r = walk_partitions(root, child, limit, out, budget, notes);
		free(kind);
	}
	ns_strv_free(names, n);
	return r;
}

/* The CPUs of cgroup v2 isolated partitions into iso->cgroup (unknown when they cannot be told). */
static void read_cgroup(struct ns_root *root, unsigned limit, struct ns_isolation *iso, struct ns_notes *notes)
{
	char *txt;
	size_t budget = CGROUP_WALK_MAX;
	int r = ns_read_str(root, CGROUP_DIR "/cpuset.cpus.isolated", &txt);

	ns_cpuset_clear(&iso->cgroup);
	if (r == -ENODATA) { /* the kernel's empty list */
		iso->cgroup_basis = "cpuset.cpus.isolated";
		iso->cgroup.known = true;
		return;
	}
	if (r == 0) {
		iso->cgroup_basis = "cpuset.cpus.isolated";
		r = ns_cpuset_parse_list_max(&iso->cgroup, txt, limit);
		if (r < 0)
			ns_note_read(notes, "machine", "isolation.cgroup_isolated_cpus",
				     CGROUP_DIR "/cpuset.cpus.isolated", r, txt);
		free(txt);
		return;
	}
	if (r != -ENOENT) {
		ns_note_read(notes, "machine", "isolation.cgroup_isolated_cpus", CGROUP_DIR "/cpuset.cpus.isolated", r,
			     NULL);
		return;
	}
	/* no cgroup v2 hierarchy here (none mounted, or v1): no isolated partition can exist */
	r = ns_probe(root, CGROUP_DIR "/cgroup.controllers");
	if (r < 0) {
		/* v2 or not: not told, so neither is whether a partition isolates CPUs */
		ns_note_read(notes, "machine", "isolation.cgroup_isolated_cpus", CGROUP_DIR "/cgroup.controllers", r,
			     NULL);
		return;
	}
	if (r == 0) {
		iso->cgroup_basis = "no-cgroup2";
		iso->cgroup.known = true;
		return;
	}
	iso->cgroup_basis = "partitions";
	r = walk_partitions(root, CGROUP_DIR, limit, &iso->cgroup, &budget, notes);
	if (r < 0) {
		ns_cpuset_clear(&iso->cgroup);
		if (r == -E2BIG)
			ns_note(notes, "machine", "isolation.cgroup_isolated_cpus",
				"/" CGROUP_DIR " holds more than %d cgroups to look at for isolated partitions: their "
				"CPUs are unknown",
				CGROUP_WALK_MAX);
		else
			ns_note_read(notes, "machine", "isolation.cgroup_isolated_cpus", CGROUP_DIR, r, NULL);
		return;
	}
	iso->cgroup.known = true;
}

static int add_known(struct ns_cpuset *to, const struct ns_cpuset *s)
{
	return s->known ? ns_cpuset_or(to, s) : 0;
}

int ns_isolation_read(struct ns_root *root, const struct ns_isolation_in *in, struct ns_isolation *iso,
		      struct ns_notes *notes)
{
	char *cmdline;
	int r;

	memset(iso, 0, sizeof(*iso));
	r = ns_read_str(root, "proc/cmdline", &cmdline);
	if (r == 0) {
		const char *param;
		iso->cmdline_known = true;
		r = ns_isolation_parse_cmdline(cmdline, in->cpu_limit, iso, &param, &iso->unparsed_raw);
		free(cmdline);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			/* a list the kernel took in a form numastor does not ("N", "0-7:2/4"): unknown */
			iso->unparsed_param = param;
			iso->unparsed_err = r;
			ns_note(notes, "machine", "isolation",
				"/proc/cmdline: %s= '%.60s' does not parse as a CPU list", param,
				iso->unparsed_raw ? iso->unparsed_raw : "");
			if (strcmp(param, "isolcpus") == 0)
				ns_cpuset_clear(&iso->isolcpus);
			else if (strcmp(param, "nohz_full") == 0)
				ns_cpuset_clear(&iso->nohz_full);
			else
				ns_cpuset_clear(&iso->irqaffinity);
		}
	} else if (r != -ENOENT) { /* a capture of an older numastor has no proc/cmdline */
		ns_note_read(notes, "machine", "isolation.cmdline_known", "proc/cmdline", r, NULL);
	}
	read_cgroup(root, in->cpu_limit, iso, notes);
	/* the root's cpuset.cpus.isolated also lists the CPUs isolcpus= isolated at boot, with no
	 * partition made (measured on 6.12.95 with isolcpus=2-3): a partition's are the others */
	if (iso->cgroup.known && iso->cgroup_basis && strcmp(iso->cgroup_basis, "cpuset.cpus.isolated") == 0 &&
	    in->isolated->known && (r = ns_cpuset_andnot(&iso->cgroup, &iso->cgroup, in->isolated)) < 0)
		return r;
	/* the kernel keeps only the possible CPUs of a boot list */
	if (in->possible->known) {
		struct ns_cpuset *lists[] = {&iso->isolcpus, &iso->nohz_full, &iso->irqaffinity};
		for (size_t i = 0; i < 3; i++)
			if (lists[i]->known && (r = ns_cpuset_and(lists[i], lists[i], in->possible)) < 0)
				return r;
	}
	iso->managed_irq.known = true;
	if ((iso->isolcpus_flags & NS_ISO_MANAGED_IRQ) && (r = ns_cpuset_or(&iso->managed_irq, &iso->isolcpus)) < 0)
		return r;
	/* every isolated CPU: what the kernel's files say and what it was told */
	const struct ns_cpuset *sources[] = {
		in->isolated,	 /* cpu/isolated: isolcpus= with domain */
		in->nohz_full,	 /* cpu/nohz_full */
		&iso->isolcpus,	 /* isolcpus= whatever its flags (managed_irq alone is in no file) */
		&iso->nohz_full, /* nohz_full= */
		&iso->cgroup,	 /* cgroup v2 isolated partitions */
	};
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if ((r = add_known(&iso->cpus, sources[i])) < 0)
			return r;
	iso->cpus.known = in->isolated->known && in->nohz_full->known && iso->cgroup.known && !iso->unparsed_param;
	if (in->online->known && (r = ns_cpuset_andnot(&iso->housekeeping, in->online, &iso->cpus)) < 0)
		return r;
	iso->housekeeping.known = in->online->known && iso->cpus.known;
	return 0;
}

void ns_isolation_free(struct ns_isolation *iso)
{
	ns_cpuset_clear(&iso->isolcpus);
	ns_cpuset_clear(&iso->nohz_full);
	ns_cpuset_clear(&iso->irqaffinity);
	ns_cpuset_clear(&iso->cgroup);
	ns_cpuset_clear(&iso->managed_irq);
	ns_cpuset_clear(&iso->cpus);
	ns_cpuset_clear(&iso->housekeeping);
	free(iso->unparsed_raw);
	memset(iso, 0, sizeof(*iso));
}
