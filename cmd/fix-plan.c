/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor fix: the IRQ placement's plan and results, as text and JSON (cmd/fix.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "config.h"
#include "fix.h"
#include "out/json.h"
#include "state/journal.h"

static struct json_object *ib_json(const struct ns_system *sys, const struct ns_plan *plan, const struct ns_fix_ib *ibo)
{
	struct json_object *ib = json_object_new_object(), *d = json_object_new_object();
	const struct ns_irqbalance *m = &sys->machine.irqbalance;

	json_object_object_add(ib, "running", m->running < 0 ? NULL : json_object_new_boolean(m->running));
	json_object_object_add(ib, "policy_installed",
			       json_object_new_boolean(m->policyscript && strstr(m->policyscript, "numastor")));
	json_object_object_add(ib, "advice",
			       plan->irqbalance_advice ? json_object_new_string(plan->irqbalance_advice) : NULL);
	json_object_object_add(ib, "undoes_placement", json_object_new_boolean(ibo->undoes));
	json_object_object_add(d, "path", json_object_new_string("/" NS_IBPOLICY_LINK));
	json_object_object_add(d, "enabled", json_object_new_boolean(ibo->st.linked));
	json_object_object_add(d, "given_elsewhere", jstr_or_null(ibo->st.already));
	json_object_object_add(d, "conflict", jstr_or_null(ibo->st.conflict));
	json_object_object_add(d, "result", jstr_or_null(ibo->result));
	json_object_object_add(d, "reload", jstr_or_null(ibo->reload));
	json_object_object_add(ib, "drop_in", d);
	return ib;
}

static struct json_object *plan_json(const struct ns_system *sys, const struct ns_plan *plan, const struct fix_opts *o,
				     const struct ns_apply_result *ir, const struct ns_apply_result *rr,
				     const struct ns_fix_ib *ibo)
{
	struct json_object *doc = ns_json_envelope(sys->root, FIX_SCHEMA_VERSION), *irqs = json_object_new_array(),
			   *rqs = json_object_new_array(), *sum = json_object_new_object();

	json_object_object_add(doc, "root", json_object_new_string(ns_root_dir(sys->root)));
	json_object_object_add(doc, "dry_run", json_object_new_boolean(o->dry_run));
	json_object_object_add(doc, "allowed_cpus", ns_cpuset_json(&plan->allowed));
	for (size_t i = 0; i < plan->nirqs; i++) {
		const struct ns_plan_irq *e = &plan->irqs[i];
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "irq", json_object_new_int(e->irq));
		json_object_object_add(x, "name", e->name ? json_object_new_string(e->name) : NULL);
		json_object_object_add(x, "device", json_object_new_string(e->device));
		json_object_object_add(x, "pci", json_object_new_string(e->pci));
		json_object_object_add(x, "hw_queue", e->hw_queue >= 0 ? json_object_new_int(e->hw_queue) : NULL);
		json_object_object_add(x, "managed", e->managed < 0 ? NULL : json_object_new_boolean(e->managed));
		json_object_object_add(x, "current", ns_cpuset_json(&e->current));
		json_object_object_add(x, "target", ns_cpuset_json(&e->target));
		json_object_object_add(x, "isolated_left_out", ns_cpuset_json(&e->isolated_left_out));
		json_object_object_add(x, "action", json_object_new_string(ns_plan_action_name(e->action)));
		/* the decision check shows as the IRQ's fix.rule (lib/model/vecmove.h) */
		json_object_object_add(x, "rule", json_object_new_string(ns_vecmove_rule_name(e->rule)));
		json_object_object_add(x, "reason", json_object_new_string(e->reason));
		json_object_object_add(x, "answers", json_object_new_string(e->answers));
		if (ir) {
			struct json_object *res = json_object_new_object();
			json_object_object_add(res, "status",
					       json_object_new_string(ns_apply_status_name(ir[i].status)));
			json_object_object_add(res, "error",
					       ir[i].err ? json_object_new_string(strerror(-ir[i].err)) : NULL);
			json_object_object_add(res, "error_class",
					       ir[i].err_class ? json_object_new_string(ir[i].err_class) : NULL);
			json_object_object_add(res, "attempts", json_object_new_int((int)ir[i].attempts));
			json_object_object_add(res, "affinity", ns_cpuset_json(&ir[i].after));
			json_object_object_add(res, "effective_affinity", ns_cpuset_json(&ir[i].after_effective));
			json_object_object_add(x, "result", res);
		} else {
			json_object_object_add(x, "result", NULL);
		}
		json_object_array_add(irqs, x);
	}
	json_object_object_add(doc, "irqs", irqs);
	for (size_t i = 0; i < plan->nrqs; i++) {
		const struct ns_plan_rq *e = &plan->rqs[i];
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "device", json_object_new_string(e->device));
		json_object_object_add(x, "current", json_object_new_int(e->current));
		json_object_object_add(x, "target", json_object_new_int(e->target));
		json_object_object_add(x, "action", json_object_new_string(ns_plan_action_name(e->action)));
		json_object_object_add(x, "reason", json_object_new_string(e->reason));
		json_object_object_add(x, "result",
				       rr ? json_object_new_string(ns_apply_status_name(rr[i].status)) : NULL);
		json_object_array_add(rqs, x);
	}
	json_object_object_add(doc, "rq_affinity", rqs);
	json_object_object_add(doc, "irqbalance", ib_json(sys, plan, ibo));
	json_object_object_add(sum, "move", json_object_new_int((int)ns_plan_count(plan, NS_PLAN_MOVE)));
	json_object_object_add(sum, "skip", json_object_new_int((int)ns_plan_count(plan, NS_PLAN_SKIP)));
	json_object_object_add(sum, "unchanged", json_object_new_int((int)ns_plan_count(plan, NS_PLAN_UNCHANGED)));
	if (ir) {
		size_t failed = 0;
		for (size_t i = 0; i < plan->nirqs; i++)
			failed += ir[i].status == NS_APPLY_FAILED;
		for (size_t i = 0; i < plan->nrqs; i++)
			failed += rr[i].status == NS_APPLY_FAILED;
		json_object_object_add(sum, "failed", json_object_new_int((int)failed));
	} else {
		json_object_object_add(sum, "failed", NULL);
	}
	json_object_object_add(doc, "summary", sum);
	return doc;
}

/* A value read from the machine, quoted and escaped for the terminal (at most 60 bytes of it). */
static void print_value(FILE *out, const char *v)
{
	char *e = ns_escape(v, NS_ESCAPE_TEXT, 60);

	fprintf(out, "'%s'", e ? e : "?");
	free(e);
}

/* Why the plan was refused (-EBADMSG): each exclusion input that did not parse, by file and
 * value, in the one error of the run. Returns NS_EXIT_UNKNOWN. */
static int print_unparsed(const struct ns_machine *m, const struct fix_opts *o)
{
	char *msg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&msg, &len);
	int code;

	if (!f)
		return fix_fail(o, "fix", NS_EXIT_UNKNOWN, "refused: an excluded-CPU input does not parse");
	for (size_t i = 0; i < m->nunparsed; i++) {
		const struct ns_unparsed *u = &m->unparsed[i];
		bool mask = strcmp(u->field, "irqbalance.banned_cpus_mask") == 0,
		     banned = mask || strcmp(u->field, "irqbalance.banned_cpus") == 0;
		fprintf(f, "refused: %s/%s ",
			!banned ? ""
			: mask	? "IRQBALANCE_BANNED_CPUS in "
				: "IRQBALANCE_BANNED_CPULIST in ",
			u->path);
		if (u->raw && strcmp(u->field, "irqbalance.options") == 0) {
			/* a line of irqbalance's options file (lib/read/envfile.h): the doubt, not a CPU list */
			fputs("reads ", f);
			print_value(f, u->raw);
			fputs(", a line a shell sourcing the file and systemd's EnvironmentFile= may read "
			      "differently, so the CPUs irqbalance bans are not known (numastor check's notes say "
			      "why); ",
			      f);
		} else if (u->raw) {
			fputs(banned ? "is " : "reads ", f);
			print_value(f, u->raw);
			if (u->err == -ERANGE)
				fputs(", which names a CPU this machine cannot have (beyond kernel_max or the possible "
				      "CPUs); ",
				      f);
			else
				fprintf(f, ", which does not parse as a CPU %s (%s); ", mask ? "mask" : "list",
					strerror(-u->err));
		} else {
			fprintf(f, "cannot be read (%s); ", strerror(-u->err));
		}
	}
	fprintf(f,
		"%s: fix never places IRQs from a partial set of excluded CPUs (offline, isolated, nohz_full, "
		"banned by irqbalance); correct the value and run fix again",
		o->dry_run ? "nothing was planned" : "nothing was planned or changed");
	fclose(f);
	code = fix_fail(o, "fix", NS_EXIT_UNKNOWN, "%s", msg ? msg : "refused");
	free(msg);
	return code;
}

int fix_journal_malformed(const struct fix_opts *o, const char *who, const char *why)
{
	return fix_fail(o, who, NS_EXIT_UNKNOWN,
			"refused: /%s is malformed (%s): nothing was changed and the file is kept as it is. It is "
			"not what numastor writes: restore by hand what still applies of it (each entry's previous "
			"value), then remove it%s",
			NS_JOURNAL_PATH, why ? why : "?", o->revert ? "" : " and run fix again");
}

/* Why the run stopped before the change (nothing was changed): said once. Returns the code. */
static int say_failure(const struct ns_system *sys, const struct fix_opts *o, const struct ns_fix_result *res,
		       const struct fix_probe *fp)
{
	int r = res->err;

	switch (res->failed) {
	case NS_FIX_UNPARSED:
		return print_unparsed(&sys->machine, o);
	case NS_FIX_PLAN:
		return fix_fail(o, "fix", NS_EXIT_UNKNOWN, "building the plan: %s", strerror(-r));
	case NS_FIX_JOURNAL_MALFORMED:
		return fix_journal_malformed(o, "fix", res->why);
	case NS_FIX_IB_INSPECT:
		return fix_fail(o, "fix", NS_EXIT_UNKNOWN, "reading irqbalance's units and options: %s", strerror(-r));
	case NS_FIX_IB_CONFLICT:
		return fix_fail(o, "fix", NS_EXIT_UNKNOWN,
				"refused: --irqbalance=policy: %s; nothing was changed. Remove it (or "
				"give irqbalance %s there yourself), then run fix again",
				res->ib.st.conflict, NUMASTOR_POLICY_SCRIPT);
	case NS_FIX_BEFORE:
		return fix_fail(o, "fix", NS_EXIT_UNKNOWN, "nothing was changed: --probe: %s",
				fix_probe_problem(fp) ? fix_probe_problem(fp) : strerror(-r));
	case NS_FIX_APPLY:
		if (r == -ESTALE || r == -EPROTO)
			return fix_fail(o, "fix", NS_EXIT_UNKNOWN,
					"nothing was changed: /%s is %s; `numastor fix --revert` says what it holds. "
					"Remove it once you have seen to it, then run fix again",
					NS_JOURNAL_PATH,
					r == -ESTALE ? "from another boot" : "a journal of another numastor version");
		if (r == -EFBIG)
			return fix_fail(o, "fix", NS_EXIT_UNKNOWN,
					"nothing was changed: the journal of this plan would exceed the %zu bytes "
					"`fix --revert` reads back, so it could not be undone; fix fewer devices at "
					"a time (DEVICE arguments)",
					ns_journal_max());
		return fix_fail(o, "fix", NS_EXIT_UNKNOWN, "nothing was changed: cannot write the journal /%s: %s",
				NS_JOURNAL_PATH, strerror(-r));
	default:
		return fix_fail(o, "fix", NS_EXIT_UNKNOWN, "out of memory");
	}
}

int fix_irqs(struct ns_root *root, struct ns_system *sys, const struct fix_opts *o)
{
	struct fix_probe *fp = o->probe_seconds > 0 ? fix_probe_new(root, o) : NULL;
	struct ns_fix_opts fo = {.dry_run = o->dry_run,
				 .ib_policy = o->ib_policy,
				 .plan = {.rq_affinity = o->rq_affinity},
				 .retries = 3,
				 .retry_delay_ms = 50,
				 .before_change = fp ? fix_probe_before : NULL,
				 .after_change = fp ? fix_probe_after : NULL,
				 .data = fp};
	struct ns_fix_result res;
	struct ns_fix_ib *ibo = &res.ib;
	int code = NS_EXIT_OK, r;

	if (o->probe_seconds > 0 && !fp)
		return fix_fail(o, "fix", NS_EXIT_UNKNOWN, "out of memory");
	r = ns_fix_irqs(root, sys, &fo, &res);
	if (r < 0) {
		code = say_failure(sys, o, &res, fp);
		goto out;
	}
	if (res.failed == NS_FIX_IB_CONFLICT) /* a dry run: --irqbalance=policy would be refused */
		code = NS_EXIT_WARNING;
	if (res.write_failed || res.after_failed)
		code = NS_EXIT_WARNING;
	if (ibo->result && strcmp(ibo->result, "failed") == 0) {
		if (ibo->linked_failed)
			fprintf(stderr, "numastor fix: --irqbalance=policy: /%s is linked, but %s\n", NS_IBPOLICY_LINK,
				ibo->reload ? ibo->reload : strerror(-ibo->err));
		else
			fprintf(stderr, "numastor fix: --irqbalance=policy: %s\n",
				ibo->problem ? ibo->problem : strerror(-ibo->err));
		code = NS_EXIT_WARNING;
	}
	/* irqbalance without numastor's policy script moves the vectors back at its next pass: the
	 * placement does not hold, and the exit status says so */
	if (ibo->undoes && !o->dry_run)
		code = code > NS_EXIT_WARNING ? code : NS_EXIT_WARNING;
	if (o->json) {
		struct json_object *doc = plan_json(sys, &res.plan, o, res.ir, res.rr, ibo);
		if (o->probe_seconds > 0)
			json_object_object_add(doc, "probe", fix_probe_json(sys, o, fp));
		ns_json_sanitize(doc); /* what the machine said, valid UTF-8 (lib/base/escape.h) */
		puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(doc);
	} else {
		fix_plan_text(stdout, sys, &res.findings, &res.plan, o, res.ir, res.rr, ibo);
		if (o->probe_seconds > 0 && !o->quiet)
			fix_probe_text(sys, o, fp);
	}
	if (res.plan.irqbalance_advice && ibo->undoes && !o->json && o->quiet)
		fprintf(stderr, "numastor fix: %s\n", res.plan.irqbalance_advice);
out:
	fix_probe_free(fp);
	ns_fix_result_free(&res);
	return code;
}
