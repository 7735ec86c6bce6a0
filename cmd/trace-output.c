/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numastor trace's writers (cmd/trace-output.h): the text report (80 columns, a line per device,
 * the findings after it), the JSON document (schema/numastor-trace.schema.json) and the
 * Prometheus metrics. The verdict on each device is lib/trace's (ns_trace_judge); these only say
 * it, each in its own form, and the exit code follows the same verdicts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "out/json.h"
#include "probe-output.h"
#include "textwrap.h"
#include "trace-output.h"

#define TRACE_SCHEMA_VERSION 1
#define TRACE_WIDTH 80

static const char *severity_name(enum ns_trace_severity s)
{
	return s == NS_TRACE_WARNING ? "warning" : s == NS_TRACE_INFO ? "info" : "none";
}

int trace_exit_code(const struct trace_report *r)
{
	for (size_t i = 0; r->res && i < r->res->ndevices; i++) {
		struct ns_trace_verdict v;
		ns_trace_judge(&r->res->devices[i], &v);
		if (v.severity == NS_TRACE_WARNING)
			return 1;
	}
	return 0;
}

static int write_result(FILE *out)
{
	if (fflush(out) == EOF || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* "81 us", "1.2 ms", "40 ms" */
static void fmt_us(char *buf, size_t len, const struct ns_trace_lat *l)
{
	if (!l->known)
		snprintf(buf, len, "-");
	else if (l->p50_us >= 10000)
		snprintf(buf, len, "%.0f ms", l->p50_us / 1e3);
	else if (l->p50_us >= 1000)
		snprintf(buf, len, "%.1f ms", l->p50_us / 1e3);
	else
		snprintf(buf, len, "%.0f us", l->p50_us);
}

static void fmt_share(char *buf, size_t len, double share)
{
	if (share < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100 * share);
}

static void fmt_node(char *buf, size_t len, int node)
{
	if (node < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%d", node);
}

static const char *irq_source_name(int s)
{
	switch (s) {
	case NS_IRQ_HANDLER:
		return "handler";
	case NS_IRQ_VECTOR:
		return "vector";
	case -1:
		return "mixed";
	default:
		return NULL;
	}
}

static const char *const *because_of(const struct trace_report *r, size_t i)
{
	return r->because ? r->because[i] : NULL;
}

/*
 * The finding's message: what crossed (the share of requests completed on another node than
 * their submitter's, and of interrupts on a remote node) and what it costs (the remote
 * completions' median against the local ones'). NULL when out of memory.
 */
static char *finding_message(const struct ns_trace_device *d, const struct ns_trace_verdict *v, const char *name)
{
	char *msg = NULL, *irq = NULL, *cost = NULL;
	int ok;

	if (v->irq_remote_share >= 0)
		ok = asprintf(&irq,
			      "; its interrupts fired on another node than the submitter's for %.1f%% of the "
			      "requests whose interrupt CPU is known",
			      100 * v->irq_remote_share);
	else
		ok = asprintf(&irq, "; the interrupt CPU is not known for any request");
	if (ok < 0)
		return NULL;
	if (v->latency_gap >= 0)
		ok = asprintf(
			&cost,
			"; a remote completion's median latency is %.2fx the local one's (%.0f us against %.0f us)",
			v->latency_gap, d->remote.p50_us, d->local.p50_us);
	else if (d->remote.known)
		ok = asprintf(&cost,
			      "; no request completed on its submitter's node to compare with (remote median %.0f us)",
			      d->remote.p50_us);
	else
		ok = asprintf(&cost, "%s", "");
	if (ok < 0) {
		free(irq);
		return NULL;
	}
	if (asprintf(&msg, "%s: %.1f%% of %llu requests completed on another node than the one that submitted them%s%s",
		     name, 100 * v->complete_remote_share, (unsigned long long)d->requests, irq, cost) < 0)
		msg = NULL;
	free(irq);
	free(cost);
	return msg;
}

static char *remedy_text(const char *name)
{
	char *s = NULL;

	if (asprintf(&s,
		     "`numastor check %s` says why (where the device, its interrupts and queues sit, and the cause); "
		     "`numastor fix` moves what user space may move",
		     name) < 0)
		return NULL;
	return s;
}

/* ---- text ---- */

static char *esc_text(const char *s)
{
	return ns_escape_text(s ? s : "?");
}

static void text_queues(const struct tw_page *pg, const struct ns_trace_device *d)
{
	static const char *const head[] = {"DISK",   "QUEUE",	 "IRQ",	     "REQUESTS",
					   "SUBMIT", "COMPLETE", "IRQ-CPUS", "SOURCE"};
	struct tw_table tb;

	tw_table_init(&tb, head, sizeof(head) / sizeof(head[0]));
	tb.keep = 1u << 0;
	for (size_t q = 0; q < d->nqueues; q++) {
		const struct ns_trace_queue *tq = &d->queues[q];
		char hwq[16], irq[16], reqs[24], *sub = NULL, *com = NULL, *ic = NULL, *disk = esc_text(tq->disk);
		const char *src = irq_source_name(tq->irq_source);

		snprintf(hwq, sizeof(hwq), "%u", tq->hwq);
		fmt_node(irq, sizeof(irq), tq->irq);
		snprintf(reqs, sizeof(reqs), "%llu", (unsigned long long)tq->requests);
		if (ns_cpuset_format(&tq->submit_cpus, &sub) < 0)
			sub = NULL;
		if (ns_cpuset_format(&tq->complete_cpus, &com) < 0)
			com = NULL;
		if (tq->irq_cpus.known && ns_cpuset_format(&tq->irq_cpus, &ic) < 0)
			ic = NULL;
		const char *cells[] = {disk, hwq, irq, reqs, sub, com, tq->irq_cpus.known ? ic : "-", src ? src : "-"};
		tw_table_row(&tb, NULL, cells);
		free(disk);
		free(sub);
		free(com);
		free(ic);
	}
	tw_table_print(pg, &tb, TRACE_WIDTH, 4, NULL);
	tw_table_free(&tb);
}

static void text_pairs(const struct tw_page *pg, const struct ns_trace_device *d)
{
	static const char *const head[] = {"SUBMIT", "COMPLETE", "REQUESTS", "IRQ-REMOTE", "IRQ-UNKNOWN", "P50", "P99"};
	struct tw_table tb;

	tw_table_init(&tb, head, sizeof(head) / sizeof(head[0]));
	for (size_t k = 0; k < d->npairs; k++) {
		const struct ns_trace_pair *p = &d->pairs[k];
		char sn[16], cn[16], reqs[24], ir[24], iu[24], p50[24], p99[24];
		struct ns_trace_lat l99 = p->lat;

		fmt_node(sn, sizeof(sn), p->submit_node);
		fmt_node(cn, sizeof(cn), p->complete_node);
		snprintf(reqs, sizeof(reqs), "%llu", (unsigned long long)p->requests);
		snprintf(ir, sizeof(ir), "%llu", (unsigned long long)p->irq_remote);
		snprintf(iu, sizeof(iu), "%llu", (unsigned long long)p->irq_unknown);
		fmt_us(p50, sizeof(p50), &p->lat);
		l99.p50_us = p->lat.p99_us;
		fmt_us(p99, sizeof(p99), &l99);
		const char *cells[] = {sn, cn, reqs, ir, iu, p50, p99};
		tw_table_row(&tb, NULL, cells);
	}
	tw_table_print(pg, &tb, TRACE_WIDTH, 4, NULL);
	tw_table_free(&tb);
}

/* "N what" as a note line, wrapped; nothing when n is 0 */
static void count_note(struct tw_page *pg, uint64_t n, const char *what)
{
	char *line;

	if (!n || asprintf(&line, "%llu %s", (unsigned long long)n, what) < 0)
		return;
	tw_wrap(pg, TRACE_WIDTH, 2, 4, NULL, line);
	free(line);
}

int trace_print_text(FILE *out, const struct trace_report *r)
{
	static const char *const head[] = {"DEVICE",	 "NODE",      "REQUESTS",  "LOCAL-COMPLETE",
					   "IRQ-REMOTE", "P50-LOCAL", "P50-REMOTE"};
	const char *cs = nl_langinfo(CODESET);
	struct tw_page pg = {.out = out, .utf8 = cs && strcmp(cs, "UTF-8") == 0};
	const struct ns_trace_result *res = r->res;
	size_t ndev = res ? res->ndevices : 0;
	char *line = NULL;
	bool any = false;

	{
		/* the heading: a window stopped early and a long release may pass 80 columns */
		const char *how = r->attach && !strcmp(r->attach, "raw_tp") ? "raw tracepoints" : "BTF tracepoints";
		char stopped[64] = "";
		if (r->stopped)
			snprintf(stopped, sizeof(stopped), " of %.0f (stopped)", r->seconds_asked);
		if (asprintf(&line, "numastor trace: %.1f s%s on %s (%s), %u node%s", r->seconds, stopped,
			     r->kernel_release ? r->kernel_release : "?", how, r->nnodes,
			     r->nnodes == 1 ? "" : "s") >= 0) {
			tw_wrap(&pg, TRACE_WIDTH, 0, 2, NULL, line);
			free(line);
		}
	}
	if (!ndev) {
		fprintf(out, "  no device to trace\n");
	} else {
		struct tw_table tb;
		tw_table_init(&tb, head, sizeof(head) / sizeof(head[0]));
		tb.keep = 1u << 0;
		for (size_t i = 0; i < ndev; i++) {
			const struct ns_trace_device *d = &res->devices[i];
			char node[16], reqs[24], loc[16], irq[16], pl[24], pr[24], *name = esc_text(d->target->name);

			fmt_node(node, sizeof(node), d->target->node);
			snprintf(reqs, sizeof(reqs), "%llu", (unsigned long long)d->requests);
			fmt_share(loc, sizeof(loc), d->complete_local_share);
			fmt_share(irq, sizeof(irq), d->irq_remote_share);
			fmt_us(pl, sizeof(pl), &d->local);
			fmt_us(pr, sizeof(pr), &d->remote);
			const char *cells[] = {name, node, reqs, loc, irq, pl, pr};
			tw_table_row(&tb, NULL, cells);
			free(name);
		}
		tw_table_print(&pg, &tb, TRACE_WIDTH, 0, NULL);
		tw_table_free(&tb);
	}
	if (r->verbose)
		for (size_t i = 0; i < ndev; i++) {
			const struct ns_trace_device *d = &res->devices[i];
			char *name = esc_text(d->target->name);
			fprintf(out, "\n%s: requests by submitting and completing node\n", name ? name : "?");
			text_pairs(&pg, d);
			if (asprintf(&line, "%s: hardware queues (CPUs that submitted, completed, took the IRQ)",
				     name ? name : "?") >= 0) {
				tw_wrap(&pg, TRACE_WIDTH, 0, 2, NULL, line);
				free(line);
			}
			text_queues(&pg, d);
			free(name);
		}
	for (size_t i = 0; i < ndev; i++) {
		const struct ns_trace_device *d = &res->devices[i];
		const char *const *because = because_of(r, i);
		struct ns_trace_verdict v;
		char *name, *msg, *rem;

		ns_trace_judge(d, &v);
		if (v.severity == NS_TRACE_NONE)
			continue;
		if (!any)
			fprintf(out, "\nfindings\n");
		any = true;
		name = esc_text(d->target->name);
		msg = finding_message(d, &v, name ? name : "?");
		if (asprintf(&line, "%s io-crosses-nodes: %s", severity_name(v.severity), msg ? msg : "?") >= 0) {
			tw_wrap(&pg, TRACE_WIDTH, 2, 4, NULL, line);
			free(line);
		}
		free(msg);
		if (because && because[0]) {
			size_t len = 0;
			for (size_t k = 0; because[k]; k++)
				len += strlen(because[k]) + 2;
			char *list = calloc(1, len + 1);
			for (size_t k = 0; list && because[k]; k++) {
				if (k)
					strcat(list, ", ");
				strcat(list, because[k]);
			}
			if (list && asprintf(&line, "because: %s (numastor check's findings on %s)", list,
					     name ? name : "?") >= 0) {
				tw_wrap(&pg, TRACE_WIDTH, 4, 6, NULL, line);
				free(line);
			}
			free(list);
		}
		rem = remedy_text(name ? name : "?");
		if (rem && asprintf(&line, "remedy: %s", rem) >= 0) {
			tw_wrap(&pg, TRACE_WIDTH, 4, 6, NULL, line);
			free(line);
		}
		free(rem);
		free(name);
	}
	if (r->lost_records || r->missed || r->unseen || r->untimed || (r->notes && r->notes->n) ||
	    (res && res->unattributed)) {
		fprintf(out, "\nnotes\n");
		count_note(&pg, r->lost_records, "requests not counted: a map was full");
		count_note(&pg, r->missed,
			   "completions (of any disk) not counted: the kernel skipped the program, already running on "
			   "that CPU (a completion nested in another's)");
		count_note(&pg, r->unseen,
			   "completions not counted: the disks' own counters (sys/block/*/stat) show them, but the "
			   "kernel did not run the program for them");
		count_note(&pg, r->untimed,
			   "requests counted without a latency: issued before the window opened, so their issue time "
			   "was not seen");
		count_note(&pg, res ? res->unattributed : 0, "requests of disks not asked for are not shown");
		for (size_t i = 0; r->notes && i < r->notes->n; i++) {
			const struct ns_note *n = &r->notes->v[i];
			char *subject = esc_text(n->subject), *field = esc_text(n->field), *m = esc_text(n->message);
			if (asprintf(&line, "%s %s: %s", subject ? subject : "?", field ? field : "?", m ? m : "?") >=
			    0) {
				tw_wrap(&pg, TRACE_WIDTH, 2, 4, NULL, line);
				free(line);
			}
			free(subject);
			free(field);
			free(m);
		}
	}
	return write_result(out);
}

/* ---- JSON ---- */

static struct json_object *lat_json(const struct ns_trace_lat *l)
{
	struct json_object *o;

	if (!l->known)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "p50", ns_probe_jdouble(l->p50_us, 1));
	json_object_object_add(o, "p90", ns_probe_jdouble(l->p90_us, 1));
	json_object_object_add(o, "p99", ns_probe_jdouble(l->p99_us, 1));
	json_object_object_add(o, "mean", ns_probe_jdouble(l->mean_us, 1));
	json_object_object_add(o, "max", ns_probe_jdouble(l->max_us, 1));
	return o;
}

static struct json_object *node_json(int node)
{
	return node >= 0 ? json_object_new_int(node) : NULL;
}

static struct json_object *share_json(double share)
{
	return share >= 0 ? ns_probe_jdouble(share, 4) : NULL;
}

static struct json_object *u64_json(uint64_t v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static struct json_object *device_json(const struct ns_trace_device *d)
{
	const struct ns_trace_target *t = d->target;
	struct json_object *o = json_object_new_object(), *disks = json_object_new_array(),
			   *pairs = json_object_new_array(), *queues = json_object_new_array(),
			   *lat = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(t->name ? t->name : "?"));
	for (size_t k = 0; k < t->ndisks; k++)
		json_object_array_add(
			disks, json_object_new_string(t->disk_names && t->disk_names[k] ? t->disk_names[k] : "?"));
	json_object_object_add(o, "disks", disks);
	json_object_object_add(o, "node", node_json(t->node));
	json_object_object_add(o, "requests", u64_json(d->requests));
	json_object_object_add(o, "bytes", u64_json(d->bytes));
	json_object_object_add(o, "complete_local_share", share_json(d->requests ? d->complete_local_share : -1));
	json_object_object_add(o, "irq_remote_share", share_json(d->irq_remote_share));
	json_object_object_add(o, "irq_unknown", u64_json(d->irq_unknown));
	for (size_t k = 0; k < d->npairs; k++) {
		const struct ns_trace_pair *p = &d->pairs[k];
		struct json_object *pj = json_object_new_object(), *pl = lat_json(&p->lat);
		json_object_object_add(pj, "submit_node", node_json(p->submit_node));
		json_object_object_add(pj, "complete_node", node_json(p->complete_node));
		json_object_object_add(pj, "requests", u64_json(p->requests));
		json_object_object_add(pj, "bytes", u64_json(p->bytes));
		json_object_object_add(pj, "irq_remote", u64_json(p->irq_remote));
		json_object_object_add(pj, "irq_unknown", u64_json(p->irq_unknown));
		json_object_object_add(pj, "latency_us", pl);
		json_object_array_add(pairs, pj);
	}
	json_object_object_add(o, "pairs", pairs);
	json_object_object_add(lat, "local", lat_json(&d->local));
	json_object_object_add(lat, "remote", lat_json(&d->remote));
	json_object_object_add(o, "latency_us", lat);
	for (size_t q = 0; q < d->nqueues; q++) {
		const struct ns_trace_queue *tq = &d->queues[q];
		struct json_object *qj = json_object_new_object();
		const char *src = irq_source_name(tq->irq_source);
		json_object_object_add(qj, "disk", json_object_new_string(tq->disk ? tq->disk : "?"));
		json_object_object_add(qj, "hw_queue", json_object_new_int64(tq->hwq));
		json_object_object_add(qj, "irq", tq->irq >= 0 ? json_object_new_int(tq->irq) : NULL);
		json_object_object_add(qj, "requests", u64_json(tq->requests));
		json_object_object_add(qj, "submit_cpus", ns_cpuset_json(&tq->submit_cpus));
		json_object_object_add(qj, "complete_cpus", ns_cpuset_json(&tq->complete_cpus));
		json_object_object_add(qj, "irq_cpus", tq->irq_cpus.known ? ns_cpuset_json(&tq->irq_cpus) : NULL);
		json_object_object_add(qj, "irq_source", src ? json_object_new_string(src) : NULL);
		json_object_array_add(queues, qj);
	}
	json_object_object_add(o, "queues", queues);
	return o;
}

static struct json_object *finding_json(const struct trace_report *r, size_t i, const struct ns_trace_verdict *v)
{
	const struct ns_trace_device *d = &r->res->devices[i];
	const char *const *because = because_of(r, i);
	struct json_object *f = json_object_new_object(), *ev = json_object_new_object(), *bc = json_object_new_array(),
			   *rem = json_object_new_object();
	const char *name = d->target->name ? d->target->name : "?";
	char *msg = finding_message(d, v, name), *text = remedy_text(name);

	json_object_object_add(f, "id", json_object_new_string("io-crosses-nodes"));
	json_object_object_add(f, "severity", json_object_new_string(severity_name(v->severity)));
	json_object_object_add(f, "device", json_object_new_string(name));
	json_object_object_add(f, "message", json_object_new_string(msg ? msg : "?"));
	json_object_object_add(ev, "requests", u64_json(d->requests));
	json_object_object_add(ev, "complete_remote_share", ns_probe_jdouble(v->complete_remote_share, 4));
	json_object_object_add(ev, "irq_remote_share", share_json(v->irq_remote_share));
	json_object_object_add(ev, "latency_gap", v->latency_gap >= 0 ? ns_probe_jdouble(v->latency_gap, 3) : NULL);
	json_object_object_add(f, "evidence", ev);
	for (size_t k = 0; because && because[k]; k++)
		json_object_array_add(bc, json_object_new_string(because[k]));
	json_object_object_add(f, "because", bc);
	json_object_object_add(rem, "action", json_object_new_string("check"));
	json_object_object_add(rem, "text", json_object_new_string(text ? text : "?"));
	json_object_object_add(f, "remedy", rem);
	free(msg);
	free(text);
	return f;
}

int trace_print_json(FILE *out, const struct trace_report *r)
{
	struct json_object *doc = ns_json_envelope(r->root, TRACE_SCHEMA_VERSION), *o, *a;
	const struct ns_trace_result *res = r->res;
	size_t ndev = res ? res->ndevices : 0;

	if (!doc)
		return -ENOMEM;
	/* the envelope of a live run: no capture's fields (trace never replays a bundle) */
	json_object_object_del(doc, "captured_at");
	json_object_object_del(doc, "captured_host");
	o = json_object_new_object();
	json_object_object_add(o, "seconds", ns_probe_jdouble(r->seconds_asked, 3));
	a = json_object_new_array();
	for (size_t i = 0; i < r->ndevices_asked; i++)
		json_object_array_add(a, json_object_new_string(r->devices_asked[i]));
	json_object_object_add(o, "devices", a);
	json_object_object_add(doc, "parameters", o);
	o = json_object_new_object();
	json_object_object_add(o, "release", r->kernel_release ? json_object_new_string(r->kernel_release) : NULL);
	json_object_object_add(o, "attach", json_object_new_string(r->attach ? r->attach : "raw_tp"));
	json_object_object_add(doc, "kernel", o);
	o = json_object_new_object();
	json_object_object_add(o, "seconds", ns_probe_jdouble(r->seconds, 3));
	json_object_object_add(o, "stopped", json_object_new_boolean(r->stopped));
	json_object_object_add(o, "untimed", u64_json(r->untimed));
	json_object_object_add(doc, "window", o);
	o = json_object_new_object();
	json_object_object_add(o, "records", u64_json(r->lost_records));
	json_object_object_add(o, "missed", u64_json(r->missed));
	json_object_object_add(o, "unseen", r->unseen_known ? u64_json(r->unseen) : NULL);
	json_object_object_add(doc, "lost", o);
	a = json_object_new_array();
	for (size_t i = 0; i < ndev; i++)
		json_object_array_add(a, device_json(&res->devices[i]));
	json_object_object_add(doc, "devices", a);
	a = json_object_new_array();
	for (size_t i = 0; i < ndev; i++) {
		struct ns_trace_verdict v;
		ns_trace_judge(&res->devices[i], &v);
		if (v.severity != NS_TRACE_NONE)
			json_object_array_add(a, finding_json(r, i, &v));
	}
	json_object_object_add(doc, "findings", a);
	a = json_object_new_array();
	for (size_t i = 0; r->notes && i < r->notes->n; i++) {
		const struct ns_note *n = &r->notes->v[i];
		char *s = NULL;
		if (asprintf(&s, "%s %s: %s", n->subject ? n->subject : "?", n->field ? n->field : "?",
			     n->message ? n->message : "?") >= 0) {
			json_object_array_add(a, json_object_new_string(s));
			free(s);
		}
	}
	json_object_object_add(doc, "notes", a);
	json_object_object_add(doc, "exit_code", json_object_new_int(trace_exit_code(r)));
	ns_json_sanitize(doc); /* names and notes come from the machine: valid UTF-8 */
	fprintf(out, "%s\n",
		json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
	return write_result(out);
}

/* ---- Prometheus ---- */

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* node label: the id, or "unknown" for a CPU no node holds */
static void node_label(char *buf, size_t len, int node)
{
	if (node < 0)
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%d", node);
}

enum pair_value { PV_REQUESTS, PV_BYTES, PV_IRQ_REMOTE };

static void prom_pair_family(FILE *out, const struct ns_trace_result *res, char *const *names, const char *name,
			     const char *help, enum pair_value what)
{
	family(out, name, "counter", help);
	for (size_t i = 0; i < res->ndevices; i++) {
		const struct ns_trace_device *d = &res->devices[i];
		for (size_t k = 0; k < d->npairs; k++) {
			const struct ns_trace_pair *p = &d->pairs[k];
			char sn[16], cn[16];
			uint64_t v = what == PV_REQUESTS ? p->requests : what == PV_BYTES ? p->bytes : p->irq_remote;
			node_label(sn, sizeof(sn), p->submit_node);
			node_label(cn, sizeof(cn), p->complete_node);
			fprintf(out, "%s{device=\"%s\",submit_node=\"%s\",complete_node=\"%s\"} %llu\n", name, names[i],
				sn, cn, (unsigned long long)v);
		}
	}
}

/*
 * The timed requests of a latency class (lib/trace/traceagg.h: local, completed and interrupted
 * on the submitter's node or with the interrupt CPU unknown; remote, the rest) and their summed
 * latency in seconds, exact (the records' sums). Untimed requests (issued before the window) have
 * no latency and are in neither.
 */
static void locality_sum(const struct ns_trace_device *d, bool local, uint64_t *count, double *sum_s)
{
	const struct ns_trace_lat *l = local ? &d->local : &d->remote;

	*count = l->count;
	*sum_s = l->sum_us / 1e6;
}

int trace_print_prometheus(FILE *out, const struct trace_report *r)
{
	const struct ns_trace_result *res = r->res;
	size_t ndev = res ? res->ndevices : 0;
	char **names = calloc(ndev ? ndev : 1, sizeof(*names));

	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < ndev; i++) {
		names[i] = ns_escape_prom(res->devices[i].target->name ? res->devices[i].target->name : "");
		if (!names[i]) {
			for (size_t k = 0; k < i; k++)
				free(names[k]);
			free(names);
			return -ENOMEM;
		}
	}
	if (ndev) {
		prom_pair_family(out, res, names, "numastor_io_requests_total",
				 "Block requests of the trace window, by the node that submitted them and the node "
				 "they completed on",
				 PV_REQUESTS);
		prom_pair_family(out, res, names, "numastor_io_bytes_total",
				 "Bytes of the trace window's requests, by submitting and completing node", PV_BYTES);
		prom_pair_family(out, res, names, "numastor_io_irq_remote_total",
				 "Requests of the trace window whose interrupt fired on another node than the "
				 "submitter's",
				 PV_IRQ_REMOTE);
		family(out, "numastor_io_complete_remote_ratio", "gauge",
		       "Share of the window's requests completed on another node than the submitter's (absent "
		       "below 100 requests: too few to judge)");
		for (size_t i = 0; i < ndev; i++) {
			const struct ns_trace_device *d = &res->devices[i];
			if (d->requests >= NS_TRACE_MIN_REQUESTS && d->complete_local_share >= 0)
				fprintf(out, "numastor_io_complete_remote_ratio{device=\"%s\"} %.6g\n", names[i],
					1 - d->complete_local_share);
		}
		family(out, "numastor_io_irq_remote_ratio", "gauge",
		       "Share of the window's requests with a known interrupt CPU whose interrupt fired on "
		       "another node than the submitter's (absent below 100 requests: too few to judge)");
		for (size_t i = 0; i < ndev; i++) {
			const struct ns_trace_device *d = &res->devices[i];
			if (d->requests >= NS_TRACE_MIN_REQUESTS && d->irq_remote_share >= 0)
				fprintf(out, "numastor_io_irq_remote_ratio{device=\"%s\"} %.6g\n", names[i],
					d->irq_remote_share);
		}
		family(out, "numastor_io_latency_seconds", "summary",
		       "Completion latency (issue to completion) of the window's requests, completed on the "
		       "submitter's node (local) or another (remote)");
		for (size_t i = 0; i < ndev; i++) {
			const struct ns_trace_device *d = &res->devices[i];
			for (int loc = 1; loc >= 0; loc--) {
				const struct ns_trace_lat *l = loc ? &d->local : &d->remote;
				const char *lname = loc ? "local" : "remote";
				uint64_t count;
				double sum;
				if (!l->known)
					continue;
				locality_sum(d, loc, &count, &sum);
				fprintf(out,
					"numastor_io_latency_seconds{device=\"%s\",locality=\"%s\",quantile=\"0.5\"} "
					"%.9g\n",
					names[i], lname, l->p50_us / 1e6);
				fprintf(out,
					"numastor_io_latency_seconds{device=\"%s\",locality=\"%s\",quantile=\"0.9\"} "
					"%.9g\n",
					names[i], lname, l->p90_us / 1e6);
				fprintf(out,
					"numastor_io_latency_seconds{device=\"%s\",locality=\"%s\",quantile=\"0.99\"} "
					"%.9g\n",
					names[i], lname, l->p99_us / 1e6);
				fprintf(out, "numastor_io_latency_seconds_sum{device=\"%s\",locality=\"%s\"} %.9g\n",
					names[i], lname, sum);
				fprintf(out, "numastor_io_latency_seconds_count{device=\"%s\",locality=\"%s\"} %llu\n",
					names[i], lname, (unsigned long long)count);
			}
		}
	}
	family(out, "numastor_trace_window_seconds", "gauge", "How long the trace window ran");
	fprintf(out, "numastor_trace_window_seconds %.6g\n", r->seconds);
	family(out, "numastor_trace_up", "gauge", "1: numastor trace ran and wrote these metrics");
	fprintf(out, "numastor_trace_up 1\n");
	for (size_t i = 0; i < ndev; i++)
		free(names[i]);
	free(names);
	return write_result(out);
}
