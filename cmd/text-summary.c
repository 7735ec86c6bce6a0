/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The report's head: a replayed bundle's capture (which host, when), the verdict, what could
 * not be judged, and the machine (kernel, isolation, irqbalance, the kernel fixes, the nodes'
 * table). */
#define _GNU_SOURCE
#include <string.h>

#include "out/replay.h"
#include "text-report.h"

/* ---------------------------------------------------------------------------------------------
 * The summary and the machine
 * --------------------------------------------------------------------------------------------- */

/* "1 cause (node-forced) critical, 2 causes (a, b) warning", or "no findings" */
static char *summary_causes(const struct ns_findings *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	bool any = false;

	if (!m)
		return NULL;
	for (int s = NS_SEV_CRITICAL; s >= NS_SEV_INFO; s--) {
		const char *ids[8];
		size_t n = ns_findings_cause_ids(f, (enum ns_severity)s, ids, 8);
		if (!n)
			continue;
		fprintf(m, "%s%zu cause%s (", any ? ", " : "", n, n == 1 ? "" : "s");
		for (size_t k = 0; k < n && k < 8; k++)
			fprintf(m, "%s%s", k ? ", " : "", ids[k]);
		fprintf(m, "%s) %s", n > 8 ? ", ..." : "", ns_severity_name((enum ns_severity)s));
		any = true;
	}
	if (!any)
		fputs("no findings", m);
	fclose(m);
	return buf;
}

/* A bundle's replay says first whose machine it is and when it was captured: the report is
 * about then and there, not the machine it is read on (the JSON's captured_at, captured_host). */
static void text_captured(const struct pen *p, struct ns_root *root)
{
	struct ns_replay_meta m;
	char *host;

	if (!ns_replay_is(root) || ns_replay_meta_read(root, &m) < 0)
		return;
	host = m.captured_host ? strdup(t(p, m.captured_host)) : NULL;
	/* what the bundle does not say is said unknown, never filled in from elsewhere */
	say(p, 0, NULL, "captured %s, host %s (replayed from a snapshot)",
	    m.captured_at ? m.captured_at : "at an unknown time", host ? host : "unknown");
	free(host);
	ns_replay_meta_free(&m);
}

void text_summary(const struct pen *p, const struct ns_system *sys, const struct ns_findings *f)
{
	int code = ns_findings_exit_code(f);
	const char *c = code == 2 ? C_RED : code == 1 || code == 3 ? C_YELLOW : C_BOLD;
	char *causes;

	text_captured(p, sys->root);
	causes = summary_causes(f);
	say(p, 0, NULL, "%ssummary: %s%s, %zu device%s: %s (exit %d)", col(p, c),
	    code == 2	? "CRITICAL"
	    : code == 1 ? "WARNING"
	    : code == 3 ? "UNKNOWN"
			: "OK",
	    col(p, C_RESET), sys->ndisks, sys->ndisks == 1 ? "" : "s", causes ? causes : "?", code);
	free(causes);
	/* right under the verdict: what it could not speak for, and why */
	if (f->nunjudged)
		say(p, 2, NULL, "%zu device%s could not be judged:", f->nunjudged, f->nunjudged == 1 ? "" : "s");
	for (size_t i = 0; i < f->nunjudged; i++) {
		char *dev = strdup(t(p, f->unjudged[i].device));
		say(p, 4, NULL, "%s: %s", dev ? dev : "?", t(p, f->unjudged[i].reason));
		free(dev);
	}
}

/* How CPUs were isolated beyond cpu/isolated and cpu/nohz_full: the command line's flags and
 * lists, cgroup partitions, and what is left for housekeeping. Nothing when nothing is isolated. */
static void print_isolation(const struct pen *p, const struct ns_machine *m)
{
	const struct ns_isolation *iso = &m->isolation;
	char *line = NULL, *c;
	size_t len = 0;
	FILE *f;

	if (!ns_cpuset_count(&iso->cpus) && !ns_cpuset_count(&iso->irqaffinity) && iso->cgroup.known)
		return;
	if (!(f = open_memstream(&line, &len)))
		return;
	fputs("isolation:", f);
	if (iso->isolcpus.known) {
		fputs(" isolcpus=", f);
		for (size_t i = 0, k = 0; i < NS_ISO_NFLAGS; i++)
			if (iso->isolcpus_flags & ns_isolation_flags[i])
				fprintf(f, "%s%s", k++ ? "," : "", ns_isolation_flag_name(ns_isolation_flags[i]));
		c = ns_text_cpus(&iso->isolcpus);
		fprintf(f, " %s,", c);
		free(c);
	}
	if (iso->nohz_full.known) {
		c = ns_text_cpus(&iso->nohz_full);
		fprintf(f, " nohz_full= %s,", c);
		free(c);
	}
	if (iso->irqaffinity.known) {
		c = ns_text_cpus(&iso->irqaffinity);
		fprintf(f, " irqaffinity= %s,", c);
		free(c);
	}
	c = ns_text_cpus(&iso->cgroup);
	fprintf(f, " cgroup partitions %s;", iso->cgroup.known && !ns_cpuset_count(&iso->cgroup) ? "none" : c);
	free(c);
	c = ns_text_cpus(&iso->housekeeping);
	fprintf(f, " housekeeping CPUs %s", c);
	free(c);
	if (!iso->cmdline_known)
		fputs(" (kernel command line unknown)", f);
	fclose(f);
	if (line)
		say(p, 2, NULL, "%s", line);
	free(line);
}

void text_machine(const struct pen *p, const struct ns_system *sys)
{
	static const char *const head[] = {"NODE", "CPUS", "COUNT", "MEMORY", "DISTANCES"};
	const struct ns_machine *m = &sys->machine;
	const struct ns_irqbalance *ib = &m->irqbalance;
	char *on = ns_text_cpus(&m->online), *iso = ns_text_cpus(&m->isolated), *nohz = ns_text_cpus(&m->nohz_full),
	     *fixes = NULL;
	size_t flen = 0;
	struct tw_table tb;
	FILE *fx;

	say(p, 0, NULL, "%snumastor%s: kernel %s, CPUs %s online", col(p, C_BOLD), col(p, C_RESET),
	    m->kernel_release ? t(p, m->kernel_release) : "?", on);
	say(p, 2, NULL, "root %s", t(p, ns_root_dir(sys->root))); /* its own line: a long path wraps alone */
	if (strcmp(iso, "-") != 0 || strcmp(nohz, "-") != 0)
		say(p, 2, NULL, "isolated CPUs %s, nohz_full CPUs %s", iso, nohz);
	print_isolation(p, m);
	if (ib->running == 1)
		say(p, 2, NULL, "irqbalance: running (pid %ld), %s", ib->pid,
		    ib->policyscript ? t(p, ib->policyscript) : "no policy script");
	else if (ib->running == 0)
		say(p, 2, NULL, "irqbalance: not running");
	else
		say(p, 2, NULL, "irqbalance: unknown");
	if ((fx = open_memstream(&fixes, &flen))) {
		for (int i = 0, k = 0; i < 2; i++) {
			const struct ns_kernel_fix *x = &sys->fixes[i];
			const char *state = x->in_kernel == 1	? "in this kernel"
					    : x->in_kernel == 0 ? "not in this kernel"
								: "unknown";
			if (!x->series)
				continue;
			if (p->verbose) /* the basis is a sentence */
				say(p, 2, NULL, "kernel fix %s: %s (%s)", x->series, state,
				    x->basis ? t(p, x->basis) : "?");
			else
				fprintf(fx, "%s%s %s", k++ ? ", " : "", x->series, state);
		}
		fclose(fx);
		if (fixes && *fixes)
			say(p, 2, NULL, "kernel fixes: %s", fixes);
		free(fixes);
	}
	if (m->numa_support == 0)
		say(p, 2, NULL,
		    "no NUMA support in this kernel (no node/ in sysfs): node 0 is the online CPUs, "
		    "locality is moot.");
	else if (!ns_machine_multi_node(m))
		say(p, 2, NULL, "single NUMA node: locality is moot.");
	tw_table_init(&tb, head, sizeof(head) / sizeof(head[0]));
	for (size_t i = 0; i < m->nnodes; i++) {
		const struct ns_node *n = &m->nodes[i];
		char *c = ns_text_cpus(&n->cpus), mem[32], count[16] = "?", id[16], *dist = NULL;
		size_t dlen = 0;
		FILE *d = open_memstream(&dist, &dlen);
		ns_text_bytes(mem, sizeof(mem), n->memory_bytes);
		if (n->cpus.known) /* an unreadable cpulist has no count either */
			snprintf(count, sizeof(count), "%u", ns_cpuset_count(&n->cpus));
		snprintf(id, sizeof(id), "%d", n->id);
		if (d) {
			for (size_t k = 0; n->distances && k < n->ndistances; k++)
				fprintf(d, "%s%d", k ? " " : "", n->distances[k]);
			if (!n->distances)
				fputc('?', d);
			fclose(d);
		}
		const char *cells[] = {id, c, count, mem, dist ? dist : "?"};
		tw_table_row(&tb, NULL, cells);
		free(dist);
		free(c);
	}
	text_table(p, &tb, 2);
	tw_table_free(&tb);
	free(on);
	free(iso);
	free(nohz);
}
