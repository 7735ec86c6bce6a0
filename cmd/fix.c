/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor fix: re-spread the interrupts user space may move, journaled and revertible. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act/apply.h"
#include "config.h"
#include "base/escape.h"
#include "act/ibpolicy.h"
#include "state/journal.h"
#include "probe-output.h"
#include "probe/probe.h"
#include "swap/modswap.h"
#include "state/swapjournal.h"
#include "cli.h"
#include "out/json.h"
#include "numastor.h"
#include "act/plan.h"
#include "base/testhook.h"
#include "base/util.h"

/* fix's documents (plan, modules, revert); every change is listed in schema/CHANGES.md */
#define FIX_SCHEMA_VERSION 6
/* --hotplug: the longest wait for a module swap or revert that holds the lock (a swap waits
 * up to 60 s per disk, then may roll back) */
#define HOTPLUG_SWAP_WAIT_S 1800

static void fix_usage(FILE *out)
{
	fprintf(out, "Usage: numastor fix [OPTIONS] [DEVICE...]\n"
		     "       numastor fix --revert\n"
		     "\n"
		     "Place the interrupts of the devices that `numastor check` faults (or the DEVICEs\n"
		     "named) on the CPUs their hardware queues serve, at runtime: kernel-managed vectors\n"
		     "are never written, every write is read back, the previous values are journaled in\n"
		     "/run/numastor/journal.json first, and --revert restores them.\n"
		     "\n"
		     "Options:\n"
		     "  -n, --dry-run             print the plan and change nothing\n"
		     "  -j, --json                print the plan (and results) as JSON\n"
		     "      --revert              restore every value the journal holds\n"
		     "      --rq-affinity=2       also set rq_affinity=2 where completions are remote and\n"
		     "                            the vectors are kernel-managed\n"
		     "      --lock-timeout SECS   wait at most SECS for another fix to finish (default 30)\n"
		     "      --hotplug             what numastor-fix.service runs when a disk appears: quiet;\n"
		     "                            while a module swap or a revert holds the lock, wait for\n"
		     "                            it (up to 30 min), then plan afresh and apply\n"
		     "      --modules             swap in the numastor-patched nvme/SCSI modules (checked,\n"
		     "                            journaled, rolled back on failure)\n"
		     "      --module-dir DIR      where the patched modules and manifest.json are\n"
		     "                            (default /var/lib/numastor/modules/<release>)\n"
		     "      --install             with --modules: install them for the next boot instead\n"
		     "      --timeout SECS        with --modules or --revert: wait at most SECS for the\n"
		     "                            disks to come back after a reload, and as long again in a\n"
		     "                            rollback (default 60 and 5 more per disk detached)\n"
		     "      --irqbalance=policy   also give irqbalance numastor's policy script: link the\n"
		     "                            drop-in numastor-policy.conf into irqbalance.service.d/,\n"
		     "                            reload systemd and restart irqbalance (--revert removes it;\n"
		     "                            refused while irqbalance has a policy script of its own)\n"
		     "      --probe[=SECONDS]     probe the devices the plan moves vectors of (numastor\n"
		     "                            probe: 4k random reads from each node, SECONDS per node,\n"
		     "                            default 3) before the change and after it, and print\n"
		     "                            the two side by side (not with --dry-run)\n"
		     "  -R, --sysroot DIR         plan for a captured tree (implies --dry-run)\n"
		     "  -q, --quiet               print only problems\n"
		     "      --color WHEN          colour: auto (default), always, never\n"
		     "  -h, --help                show this help\n"
		     "\n"
		     "Exit status: 0 done (or nothing to do), 1 some writes failed, or irqbalance runs without\n"
		     "numastor's policy script and will move the vectors back (with --dry-run: --modules or\n"
		     "--irqbalance=policy would be refused), 3 could not run (also: an excluded-CPU list such as\n"
		     "IRQBALANCE_BANNED_CPULIST or cpu/isolated that does not parse, a malformed journal,\n"
		     "which is kept, or a state directory that is not numastor's own).\n");
}

struct fix_opts {
	const struct ns_cli *cli; /* errors: one line on stderr, or under --json one error document */
	bool dry_run, json, revert, quiet, color, modules, install, hotplug, ib_policy;
	const char *module_dir;
	int rq_affinity;
	unsigned lock_timeout_s;
	unsigned timeout_s; /* --timeout: the disks' return after a module reload; 0: the default */
	const char *sysroot;
	double probe_seconds; /* --probe: per node and device; 0 without */
};

/*
 * An error that ends the run, as `numastor fix --revert: ...` (who names the part of fix:
 * "fix --revert", "fix --modules"): one line on stderr, and under --json the error document
 * on stdout (then nothing else may be printed there). Returns code.
 */
#define fix_fail(o, who, code, ...)                      \
	({                                               \
		struct ns_cli cli_ = *(o)->cli;          \
		cli_.cmd = (who);                        \
		ns_cli_fail(&cli_, (code), __VA_ARGS__); \
	})

/* Test-only (lib/base/testhook.h): NUMASTOR_TEST_STOP_AFTER_WRITES=N dies right after the Nth write,
 * as a kill would. */
static void stop_after_writes(void *data, unsigned nwrites)
{
	unsigned limit = *(unsigned *)data;
	if (limit && nwrites >= limit) {
		fflush(stdout);
		_exit(137);
	}
}

/*
 * Test-only: NUMASTOR_TEST_PAUSE_BEFORE_SWAP=S waits S seconds (at most 60) between the plan
 * (already on stdout) and the module swap, so that a test can put a disk in use in between
 * and show the recheck before each removal catching it.
 */
static void test_pause_before_swap(void)
{
	const char *v = ns_test_hook("NUMASTOR_TEST_PAUSE_BEFORE_SWAP");
	unsigned s = v ? (unsigned)strtoul(v, NULL, 10) : 0;
	fflush(stdout);
	if (s)
		sleep(s > 60 ? 60 : s);
}

static struct json_object *jstr_or_null(const char *s);

static char *cpus(const struct ns_cpuset *s)
{
	char *t = NULL;
	if (!s->known || ns_cpuset_format(s, &t) < 0)
		return strdup("?");
	return t;
}

/* irqbalance and numastor's drop-in for it, as this run found and left them */
struct ib_outcome {
	struct ns_ibpolicy_state st;
	bool undoes;	    /* irqbalance runs without the policy script: it will move the vectors back */
	const char *result; /* --irqbalance=policy: "enabled", "already", "refused", "failed"; else NULL */
	bool holds;	    /* after it, irqbalance runs with numastor's policy script */
	char *reload;	    /* what the reload and restart said (malloc'd), NULL */
};

static struct json_object *ib_json(const struct ns_system *sys, const struct ns_plan *plan,
				   const struct ib_outcome *ibo)
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
				     const struct ib_outcome *ibo)
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

/* The colours of the text report (cmd/output-text.c): a failed write red, a move yellow, a skip dim. */
#define FIX_RED "\033[1;31m"
#define FIX_YELLOW "\033[33m"
#define FIX_DIM "\033[2m"
#define FIX_RESET "\033[0m"

static const char *fix_col(const struct fix_opts *o, const char *c)
{
	return o->color ? c : "";
}

static const char *action_col(const struct fix_opts *o, enum ns_plan_action a, bool failed)
{
	return fix_col(o, failed ? FIX_RED : a == NS_PLAN_MOVE ? FIX_YELLOW : a == NS_PLAN_SKIP ? FIX_DIM : "");
}

static void plan_text(FILE *out, const struct ns_system *sys, const struct ns_plan *plan, const struct fix_opts *o,
		      const struct ns_apply_result *ir, const struct ns_apply_result *rr, const struct ib_outcome *ibo)
{
	if (!o->quiet)
		fprintf(out, "numastor fix: %s for %s\n",
			o->dry_run ? "plan (dry run, nothing changed)" : "plan and results", ns_root_dir(sys->root));
	if (!plan->nirqs && !plan->nrqs && !o->quiet)
		fprintf(out, "  nothing to do: no device has a finding about its interrupt placement\n");
	for (size_t i = 0; i < plan->nirqs; i++) {
		const struct ns_plan_irq *e = &plan->irqs[i];
		char *cur = cpus(&e->current), *tgt = cpus(&e->target), q[32] = "";
		bool problem = ir && ir[i].status == NS_APPLY_FAILED;
		if (e->hw_queue >= 0)
			snprintf(q, sizeof(q), " hctx %d", e->hw_queue);
		if (!o->quiet || problem) {
			/* an IRQ's name is what its actions file said: escaped for the terminal */
			char *name = ns_escape_text(e->name ? e->name : "?"), *dev = ns_escape_text(e->device);
			/* its affinity (smp_affinity_list) and, unless skipped, the one it gets */
			fprintf(out, "  irq %d %s (%s%s): affinity %s%s%s  %s%s%s", e->irq, name ? name : "?",
				dev ? dev : "?", q, cur, e->action == NS_PLAN_SKIP ? "" : " -> ",
				e->action == NS_PLAN_SKIP ? "" : tgt, action_col(o, e->action, problem),
				ns_plan_action_name(e->action),
				fix_col(o, *action_col(o, e->action, problem) ? FIX_RESET : ""));
			free(name);
			free(dev);
			if (ir) {
				fprintf(out, ", %s%s%s", fix_col(o, problem ? FIX_RED : ""),
					ns_apply_status_name(ir[i].status), fix_col(o, problem ? FIX_RESET : ""));
				if (ir[i].err)
					fprintf(out, " (%s: %s)", ir[i].err_class, strerror(-ir[i].err));
				if (ir[i].status == NS_APPLY_EFFECTIVE_DIFFERS) {
					char *eff = cpus(&ir[i].after_effective);
					fprintf(out,
						" (effective still %s: without interrupt remapping the kernel moves it "
						"at its next interrupt)",
						eff);
					free(eff);
				}
			}
			char *why = ns_escape_text(e->reason);
			fprintf(out, "\n      %s [%s]\n", why ? why : "?", e->answers);
			free(why);
		}
		free(cur);
		free(tgt);
	}
	for (size_t i = 0; i < plan->nrqs; i++) {
		const struct ns_plan_rq *e = &plan->rqs[i];
		bool problem = rr && rr[i].status == NS_APPLY_FAILED;
		if (!o->quiet || problem)
			fprintf(out, "  %s rq_affinity: %d -> %d  %s%s%s%s%s\n      %s\n", e->device, e->current,
				e->target, action_col(o, e->action, problem), ns_plan_action_name(e->action),
				rr ? ", " : "", rr ? ns_apply_status_name(rr[i].status) : "",
				fix_col(o, *action_col(o, e->action, problem) ? FIX_RESET : ""), e->reason);
	}
	if (o->ib_policy && !o->quiet) {
		if (ibo->st.conflict)
			fprintf(out, "  irqbalance policy: %s: %s\n", o->dry_run ? "would be refused" : "refused",
				ibo->st.conflict);
		else if (ibo->st.already)
			fprintf(out, "  irqbalance policy: numastor's policy script is given in %s already\n",
				ibo->st.already);
		else if (ibo->result && strcmp(ibo->result, "failed") != 0)
			fprintf(out, "  irqbalance policy: %s /%s%s%s\n",
				strcmp(ibo->result, "already") == 0 ? "already linked:" : "linked", NS_IBPOLICY_LINK,
				ibo->reload ? "; " : "", ibo->reload ? ibo->reload : "");
		else if (o->dry_run)
			fprintf(out, "  irqbalance policy: would link /%s -> %s and restart irqbalance\n",
				NS_IBPOLICY_LINK, NUMASTOR_IRQBALANCE_DROPIN);
	}
	if (plan->irqbalance_advice && ibo->undoes && !o->quiet) /* quiet: said once, on stderr (cmd_fix) */
		fprintf(out, "  irqbalance: %s\n", plan->irqbalance_advice);
	if (!o->quiet)
		fprintf(out, "summary: %zu to move, %zu skipped, %zu unchanged\n", ns_plan_count(plan, NS_PLAN_MOVE),
			ns_plan_count(plan, NS_PLAN_SKIP), ns_plan_count(plan, NS_PLAN_UNCHANGED));
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

/* Test-only (lib/base/testhook.h): NUMASTOR_TEST_IRQ_WRITE_ERRNO=EIO|EPERM|EACCES makes every IRQ
 * affinity write fail so, as a kernel would: how the errno classes are shown without one. */
static int fake_irq_errno(void)
{
	const char *v = ns_test_hook("NUMASTOR_TEST_IRQ_WRITE_ERRNO");

	if (!v)
		return 0;
	return strcmp(v, "EIO") == 0 ? EIO : strcmp(v, "EPERM") == 0 ? EPERM : strcmp(v, "EACCES") == 0 ? EACCES : 0;
}

/* Test-only (lib/base/testhook.h, absent from release builds): write into a --sysroot tree. */
static bool sysroot_writes_allowed(void)
{
	const char *v = ns_test_hook("NUMASTOR_TEST_SYSROOT_WRITES");
	return v && strcmp(v, "1") == 0;
}

static struct json_object *jstr_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/*
 * The journal is checked like input before anything acts on it: a malformed one is refused
 * (said on stderr, -EINVAL) and kept byte for byte. 0 when there is none or it is valid; a
 * journal of another version is left to the callers' own message (-EPROTO passes as 0 here).
 */
static int malformed_journal(struct ns_root *root, const char *who, const struct fix_opts *o)
{
	char *why = NULL;
	int r = ns_journal_check(root, NULL, &why);

	if (r != -EINVAL) {
		free(why);
		return 0;
	}
	fix_fail(o, who, NS_EXIT_UNKNOWN,
		 "refused: /%s is malformed (%s): nothing was changed and the file is kept as it is. It is "
		 "not what numastor writes: restore by hand what still applies of it (each entry's previous "
		 "value), then remove it%s",
		 NS_JOURNAL_PATH, why ? why : "?", o->revert ? "" : " and run fix again");
	free(why);
	return -EINVAL;
}

/* The IRQ and rq_affinity revert. With --json the document is left in *docp (the module
 * revert adds to it, then cmd_fix prints it once). */
static int do_revert(struct ns_root *root, const struct fix_opts *o, const struct ns_apply_opts *aopts,
		     struct json_object **docp)
{
	struct ns_revert_report rep;
	size_t restored = 0, unchanged = 0;
	int r;

	if (malformed_journal(root, "fix --revert", o) < 0)
		return NS_EXIT_UNKNOWN;
	r = ns_revert(root, aopts, &rep);

	if (r == -ENOENT) {
		if (o->json) {
			struct json_object *doc = ns_json_envelope(root, FIX_SCHEMA_VERSION);
			/* said in the document, never as text: false again when a swap journal is found */
			json_object_object_add(doc, "nothing_to_revert", json_object_new_boolean(true));
			json_object_object_add(doc, "boot_id", NULL);
			json_object_object_add(doc, "journal_boot_id", NULL);
			json_object_object_add(doc, "other_boot", json_object_new_boolean(false));
			json_object_object_add(doc, "reverted", json_object_new_array());
			json_object_object_add(doc, "failed", json_object_new_int(0));
			json_object_object_add(doc, "left_alone", json_object_new_int(0));
			*docp = doc;
		} else if (!o->quiet) {
			printf("numastor fix --revert: IRQs and queue settings: nothing to revert (no %s)\n",
			       "/" NS_JOURNAL_PATH);
		}
		return NS_EXIT_OK;
	}
	if (r == -EPROTO) {
		fix_fail(o, "fix --revert", NS_EXIT_UNKNOWN,
			 "/%s is a version %d journal, written by another numastor; this one "
			 "reads version %d (IRQs found again by PCI function and action name, disks by identity). "
			 "Nothing was reverted and the file is kept: its entries name IRQs by number and disks by "
			 "name as they were then, which a driver reload may have given to other devices. Restore "
			 "by hand what still applies (check /sys/kernel/irq/N/actions against each entry's name "
			 "first), or revert with the numastor that wrote it; then remove the file.",
			 NS_JOURNAL_PATH, rep.journal_version, NS_JOURNAL_VERSION);
		ns_revert_report_free(&rep);
		return NS_EXIT_UNKNOWN;
	}
	if (r == -EINVAL && !rep.n) {
		fix_fail(o, "fix --revert", NS_EXIT_UNKNOWN, "/%s is malformed; nothing was changed", NS_JOURNAL_PATH);
		ns_revert_report_free(&rep);
		return NS_EXIT_UNKNOWN;
	}
	for (size_t i = 0; i < rep.n; i++) {
		restored += rep.v[i].status == NS_REVERT_RESTORED;
		unchanged += rep.v[i].status == NS_REVERT_UNCHANGED;
	}
	if (o->json) {
		struct json_object *doc = ns_json_envelope(root, FIX_SCHEMA_VERSION), *items = json_object_new_array();
		json_object_object_add(doc, "nothing_to_revert", json_object_new_boolean(false));
		for (size_t i = 0; i < rep.n; i++) {
			const struct ns_revert_item *it = &rep.v[i];
			struct json_object *x = json_object_new_object();
			json_object_object_add(x, "what", json_object_new_string(it->what ? it->what : "?"));
			json_object_object_add(x, "value", jstr_or_null(it->value));
			json_object_object_add(x, "restored", json_object_new_boolean(it->ok));
			json_object_object_add(x, "status", json_object_new_string(ns_revert_status_name(it->status)));
			json_object_object_add(x, "problem", jstr_or_null(it->problem));
			json_object_object_add(x, "pci", jstr_or_null(it->pci));
			json_object_object_add(x, "name", jstr_or_null(it->name));
			json_object_object_add(x, "irq", it->irq >= 0 ? json_object_new_int(it->irq) : NULL);
			json_object_object_add(x, "disk", jstr_or_null(it->disk));
			json_object_object_add(x, "device", jstr_or_null(it->device));
			json_object_array_add(items, x);
		}
		json_object_object_add(doc, "boot_id", jstr_or_null(rep.boot_id));
		json_object_object_add(doc, "journal_boot_id", jstr_or_null(rep.journal_boot_id));
		json_object_object_add(doc, "other_boot", json_object_new_boolean(rep.other_boot));
		json_object_object_add(doc, "reverted", items);
		json_object_object_add(doc, "failed", json_object_new_int((int)rep.failed));
		json_object_object_add(doc, "left_alone", json_object_new_int((int)rep.left_alone));
		*docp = doc;
	} else {
		if (rep.other_boot)
			printf("numastor fix --revert: /%s was written in another boot (boot_id %s; this boot is %s): "
			       "nothing of it was reverted, and the file is kept. Its IRQ numbers and values belong to "
			       "that boot; the reboot gave every IRQ and rq_affinity the kernel's defaults again, so "
			       "there is nothing of numastor's to undo here. Check with `numastor check`, then remove "
			       "the file; `numastor fix` can place the IRQs of this boot afresh.\n",
			       NS_JOURNAL_PATH, rep.journal_boot_id ? rep.journal_boot_id : "unknown",
			       rep.boot_id ? rep.boot_id : "unknown");
		for (size_t i = 0; i < rep.n; i++) {
			const struct ns_revert_item *it = &rep.v[i];
			const char *what = it->what ? it->what : "?";
			if (o->quiet && it->ok)
				continue;
			switch (it->status) {
			case NS_REVERT_RESTORED:
				printf("  %s: restored %s\n", what, it->value);
				break;
			case NS_REVERT_UNCHANGED:
				printf("  %s: already at its previous value %s\n", what, it->value);
				break;
			case NS_REVERT_FAILED:
				printf("  %s: NOT restored: %s\n", what, it->problem ? it->problem : "?");
				break;
			case NS_REVERT_OTHER_BOOT:
				printf("  %s: from another boot, not touched (was %s before numastor)\n", what,
				       it->value);
				break;
			default:
				printf("  %s: stale, not touched: %s\n", what, it->problem ? it->problem : "?");
				break;
			}
		}
		if (!o->quiet || rep.failed || rep.left_alone)
			printf("revert: %zu restored, %zu already at their previous value, %zu failed%s, %zu left "
			       "alone%s\n",
			       restored, unchanged, rep.failed,
			       rep.failed ? " (kept in the journal for another --revert)" : "", rep.left_alone,
			       rep.other_boot ? " (journal of another boot, kept)"
			       : rep.left_alone
				       ? " (gone, ambiguous or changed since by someone else; dropped from the "
					 "journal)"
				       : "");
	}
	if (r < 0)
		fprintf(stderr, "numastor fix --revert: updating the journal: %s\n", strerror(-r));
	r = rep.failed || rep.left_alone || rep.other_boot || r < 0 ? NS_EXIT_WARNING : NS_EXIT_OK;
	ns_revert_report_free(&rep);
	return r;
}

static void print_progress(void *data, const char *text, bool ok)
{
	const struct fix_opts *o = data;
	if (!o->json && (!o->quiet || !ok)) {
		printf("  %s%s%s %s\n", fix_col(o, ok ? "" : FIX_RED), ok ? "ok  " : "FAIL",
		       fix_col(o, ok ? "" : FIX_RESET), text);
		fflush(stdout);
	}
}

/* Progress of the way back: printed, or (with --json) kept as events. */
struct revert_sink {
	const struct fix_opts *o;
	struct json_object *events; /* NULL: print */
	size_t failed;
};

static void revert_progress(void *data, const char *text, bool ok)
{
	struct revert_sink *k = data;
	k->failed += !ok;
	if (k->events) {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "step", json_object_new_string(text));
		json_object_object_add(e, "ok", json_object_new_boolean(ok));
		json_object_array_add(k->events, e);
	} else {
		print_progress((void *)k->o, text, ok);
	}
}

static struct json_object *swap_plan_json(const struct ns_swap_plan *p)
{
	struct json_object *doc = json_object_new_object(), *a;

	json_object_object_add(doc, "to_stock", json_object_new_boolean(p->to_stock));
	a = json_object_new_array();
	for (size_t i = 0; i < p->ngroups; i++)
		json_object_array_add(a, json_object_new_string(p->groups[i]));
	json_object_object_add(doc, "groups", a);
	a = json_object_new_array();
	for (size_t i = 0; i < p->nchecks; i++) {
		struct json_object *c = json_object_new_object();
		json_object_object_add(c, "check", json_object_new_string(p->checks[i].what));
		json_object_object_add(c, "ok", json_object_new_boolean(p->checks[i].ok));
		json_object_object_add(c, "detail",
				       p->checks[i].detail ? json_object_new_string(p->checks[i].detail) : NULL);
		json_object_array_add(a, c);
	}
	json_object_object_add(doc, "checks", a);
	a = json_object_new_array();
	for (size_t i = 0; i < p->nsteps; i++) {
		struct json_object *c = json_object_new_object();
		json_object_object_add(c, "step", json_object_new_string(p->steps[i].remove ? "remove" : "insert"));
		json_object_object_add(c, "module", json_object_new_string(p->steps[i].module));
		char *abs = p->steps[i].file ? ns_fmt("/%s", p->steps[i].file) : NULL;
		json_object_object_add(c, "file", abs ? json_object_new_string(abs) : NULL);
		free(abs);
		json_object_object_add(
			c, "options",
			p->steps[i].remove ? NULL
					   : json_object_new_string(p->steps[i].options ? p->steps[i].options : ""));
		json_object_object_add(c, "stock_options",
				       p->steps[i].stock_options ? json_object_new_string(p->steps[i].stock_options)
								 : NULL);
		{
			struct json_object *notes = json_object_new_array();
			for (size_t k = 0; k < p->steps[i].noption_notes; k++)
				json_object_array_add(notes, json_object_new_string(p->steps[i].option_notes[k]));
			json_object_object_add(c, "options_notes", notes);
		}
		json_object_array_add(a, c);
	}
	json_object_object_add(doc, "steps", a);
	a = json_object_new_array();
	for (size_t i = 0; i < p->ndisks; i++) {
		struct json_object *c = json_object_new_object();
		json_object_object_add(c, "device", json_object_new_string(p->disks[i].name));
		json_object_object_add(c, "pci", p->disks[i].pci ? json_object_new_string(p->disks[i].pci) : NULL);
		json_object_object_add(c, "refusal",
				       p->disks[i].refusal ? json_object_new_string(p->disks[i].refusal) : NULL);
		json_object_array_add(a, c);
	}
	json_object_object_add(doc, "detaches", a);
	a = json_object_new_array();
	for (size_t i = 0; i < p->nrescan; i++)
		json_object_array_add(a, json_object_new_string(p->rescan[i]));
	json_object_object_add(doc, "rescan", a);
	a = json_object_new_array();
	for (size_t i = 0; i < p->nbusy; i++)
		json_object_array_add(a, json_object_new_string(p->busy[i]));
	json_object_object_add(doc, "busy", a);
	json_object_object_add(doc, "safe", json_object_new_boolean(ns_swap_plan_safe(p)));
	return doc;
}

static void swap_plan_text(const struct ns_swap_plan *p)
{
	printf("module swap%s: %s\n", p->to_stock ? " back to the stock modules" : "",
	       ns_swap_plan_safe(p) ? "every check passed" : "REFUSED");
	for (size_t i = 0; i < p->nchecks; i++)
		printf("  check %s %s%s%s\n", p->checks[i].ok ? "ok  " : "FAIL", p->checks[i].what,
		       p->checks[i].detail ? ": " : "", p->checks[i].detail ? p->checks[i].detail : "");
	for (size_t i = 0; i < p->ndisks; i++)
		printf("  detaches %s (%s)%s%s\n", p->disks[i].name, p->disks[i].pci ? p->disks[i].pci : "?",
		       p->disks[i].refusal ? ": must not, " : "", p->disks[i].refusal ? p->disks[i].refusal : "");
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct ns_swap_step *st = &p->steps[i];
		bool opts = st->options && st->options[0];
		printf("  step %zu: %s %s%s%s%s%s\n", i + 1, st->remove ? "remove" : "load", st->module,
		       st->file ? " from /" : (st->remove ? "" : " (stock)"), st->file ? st->file : "",
		       opts ? " with " : (st->remove ? "" : " without options"), opts ? st->options : "");
		if (st->file && st->stock_options && strcmp(st->stock_options, st->options ? st->options : ""))
			printf("    on --revert or a rollback: the stock %s with %s\n", st->module,
			       st->stock_options[0] ? st->stock_options : "no options");
		for (size_t k = 0; k < st->noption_notes; k++)
			printf("    options: %s\n", st->option_notes[k]);
	}
	for (size_t i = 0; i < p->nrescan; i++)
		printf("  then: remove and rescan PCI function %s (its forced node survives a driver swap)\n",
		       p->rescan[i]);
	for (size_t i = 0; i < p->nbusy; i++)
		printf("  busy: %s\n", p->busy[i]);
}

/* Test-only (lib/base/testhook.h): NUMASTOR_TEST_STOP_AFTER_STEP=N dies right after the Nth step of a module swap
 * (or of the way back) that changed the machine, as a kill would. */
static void stop_after_step(void *data, unsigned nsteps)
{
	const char *v = ns_test_hook("NUMASTOR_TEST_STOP_AFTER_STEP");
	const char *sig = ns_test_hook("NUMASTOR_TEST_SIGNAL_AFTER_STEP");
	(void)data;
	/* NUMASTOR_TEST_SIGNAL_AFTER_STEP=K:SIG (INT, TERM, HUP, QUIT, PIPE or a number): the
	 * process raises SIG at itself right after the Kth step, as an operator or a hangup would */
	if (sig && strchr(sig, ':') && strtoul(sig, NULL, 10) == nsteps) {
		static const struct {
			const char *name;
			int sig;
		} names[] = {{"INT", SIGINT}, {"TERM", SIGTERM}, {"HUP", SIGHUP}, {"QUIT", SIGQUIT}, {"PIPE", SIGPIPE}};
		const char *n = strchr(sig, ':') + 1;
		int signo = atoi(n);
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strcmp(n, names[i].name) == 0)
				signo = names[i].sig;
		if (signo > 0)
			raise(signo);
	}
	if (v && strtoul(v, NULL, 10) > 0 && nsteps >= (unsigned)strtoul(v, NULL, 10)) {
		fflush(stdout);
		_exit(137);
	}
}

/*
 * A module swap is never left half done by a signal: from its first change until the machine is
 * consistent again (swapped and verified, or rolled back) SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * are blocked, and one that arrives asks the swap to stop at its next step boundary and roll
 * back (lib/swap/modswap.h: ns_swap_exec_opts.stop). SIGPIPE is ignored: a closed stdout (`| head`,
 * a dropped SSH session) loses the output, never the swap. A signal the caller ignores (nohup's
 * SIGHUP) stays ignored.
 */
static const int swap_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

struct swap_guard {
	sigset_t old;
};

static void swap_guard_begin(struct swap_guard *g)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(swap_signals) / sizeof(swap_signals[0]); i++)
		sigaddset(&set, swap_signals[i]);
	sigprocmask(SIG_BLOCK, &set, &g->old);
	signal(SIGPIPE, SIG_IGN);
}

/* ns_swap_exec_opts.stop: the first blocked signal pending, or 0. */
static int swap_signal_pending(void *data)
{
	sigset_t pending;
	(void)data;
	if (sigpending(&pending) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(swap_signals) / sizeof(swap_signals[0]); i++)
		if (sigismember(&pending, swap_signals[i]) == 1)
			return swap_signals[i];
	return 0;
}

/* The machine is consistent: the signals are let through again, each pending one taken here
 * (it was answered). Returns the first of them, or 0. */
static int swap_guard_end(struct swap_guard *g)
{
	const struct timespec now = {0, 0};
	sigset_t set;
	int sig, first = 0;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(swap_signals) / sizeof(swap_signals[0]); i++)
		sigaddset(&set, swap_signals[i]);
	while ((sig = sigtimedwait(&set, NULL, &now)) > 0)
		first = first ? first : sig;
	sigprocmask(SIG_SETMASK, &g->old, NULL);
	return first;
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGINT:
		return "SIGINT";
	case SIGTERM:
		return "SIGTERM";
	case SIGHUP:
		return "SIGHUP";
	case SIGQUIT:
		return "SIGQUIT";
	default:
		return "a signal";
	}
}

/* stdout was closed under the swap (EPIPE): its lines are lost; stderr says how it ended. */
static void say_stdout_lost(const char *who, const char *how)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return;
	fprintf(stderr,
		"numastor fix %s: standard output was closed during the swap: its lines were lost; the swap %s "
		"(/%s says what is left to revert)\n",
		who, how, NS_SWAP_JOURNAL_PATH);
}

/* Every disk back under another name, in one line of its own (also under --quiet; with --json
 * the result's renamed): what names a disk by its name means another disk now. */
static void say_renamed(const struct fix_opts *o, const struct ns_swap_report *rep)
{
	if (!rep->nrenamed || o->json)
		return;
	printf("DISK NAMES CHANGED:");
	for (size_t i = 0; i < rep->nrenamed; i++)
		printf("%s %s is now %s", i ? "," : "", rep->renamed[i].from, rep->renamed[i].to);
	printf(" (found by identity; fstab, scripts or monitoring that name a disk by its name now name another, or "
	       "none; /dev/disk/by-id names do not change)\n");
}

static struct json_object *renamed_json(const struct ns_swap_report *rep)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < rep->nrenamed; i++) {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "id", jstr_or_null(rep->renamed[i].id));
		json_object_object_add(e, "from", json_object_new_string(rep->renamed[i].from));
		json_object_object_add(e, "to", json_object_new_string(rep->renamed[i].to));
		json_object_array_add(a, e);
	}
	return a;
}

static int save_swap_journal(struct ns_root *root, const struct ns_swap_journal *j, const char *who)
{
	int r = ns_swap_journal_save(root, j);
	if (r < 0)
		fprintf(stderr, "numastor fix %s: cannot write /%s: %s\n", who, NS_SWAP_JOURNAL_PATH, strerror(-r));
	return r;
}

/* What a journal keeps once its runtime swap is undone: only an --install, if any. */
static void drop_runtime(struct ns_swap_journal *j)
{
	struct ns_swap_journal keep = {0};
	keep.boot_id = j->boot_id, j->boot_id = NULL;
	keep.kernel_release = j->kernel_release, j->kernel_release = NULL;
	keep.installed = j->installed, j->installed = NULL;
	keep.ninstalled = j->ninstalled, j->ninstalled = 0;
	keep.initramfs_updated = j->initramfs_updated;
	keep.initramfs_new = j->initramfs_new, j->initramfs_new = NULL;
	ns_swap_journal_free(j);
	*j = keep;
}

static bool journal_empty(const struct ns_swap_journal *j)
{
	return !j->runtime && !j->ninstalled && !j->initramfs_updated && !j->initramfs_new;
}

/* Save what is left of the journal, or remove it when nothing is. */
static int settle_swap_journal(struct ns_root *root, const struct ns_swap_journal *j, const char *who)
{
	if (journal_empty(j)) {
		int r = ns_swap_journal_remove(root);
		if (r < 0)
			fprintf(stderr, "numastor fix %s: cannot remove /%s: %s\n", who, NS_SWAP_JOURNAL_PATH,
				strerror(-r));
		return r;
	}
	return save_swap_journal(root, j, who);
}

static int do_modules(struct ns_root *root, struct ns_system *sys, const struct fix_opts *o)
{
	struct ns_swap_plan plan;
	struct ns_swap_report rep = {0};
	struct ns_swap_journal j = {0};
	struct ns_swap_exec_opts xo = {.wait_s = 60,
				       .progress = print_progress,
				       .data = (void *)o,
				       .after_step = stop_after_step,
				       .stop = swap_signal_pending};
	struct swap_guard guard;
	bool ran = false, have_journal = false;
	int r = ns_swap_plan_build(sys, o->module_dir, &plan), code = NS_EXIT_OK, late = 0;

	if (r == -ENOENT)
		return fix_fail(o, "fix --modules", NS_EXIT_UNKNOWN,
				"nothing to swap: no manifest.json in %s%s, or nothing in it "
				"applies to this machine (build the modules with " NUMASTOR_BUILD_MODULES ")",
				o->module_dir ? o->module_dir : "/" NS_MODULE_DIR "/",
				o->module_dir ? "" : (sys->machine.kernel_release ? sys->machine.kernel_release : "?"));
	if (r == -EBADMSG)
		return fix_fail(
			o, "fix --modules", NS_EXIT_UNKNOWN,
			"nothing was changed: the manifest.json in %s%s is not one numastor's module build "
			"wrote (a key it does not write, a key twice, a module without name, file or "
			"sha256, or not JSON): left as it is; build the modules again with " NUMASTOR_BUILD_MODULES,
			o->module_dir ? o->module_dir : "/" NS_MODULE_DIR "/",
			o->module_dir ? "" : (sys->machine.kernel_release ? sys->machine.kernel_release : "?"));
	if (r < 0)
		return fix_fail(o, "fix --modules", NS_EXIT_UNKNOWN, "%s", strerror(-r));
	/* --install: every file it copies checked, the other copies and the initramfs tool known,
	 * before anything is written */
	if (o->install && plan.manifest.n && (r = ns_swap_install_check(sys, &plan)) < 0) {
		ns_swap_plan_free(&plan);
		return fix_fail(o, "fix --modules --install", NS_EXIT_UNKNOWN, "%s", strerror(-r));
	}
	if (o->install && plan.manifest.n == 0) {
		/* every fix in the running kernel: no file to install, no journal */
		if (!o->json && !o->quiet)
			printf("nothing to install: every fix in %s%s/manifest.json is in the running kernel; "
			       "nothing was changed\n",
			       o->module_dir ? o->module_dir : "/" NS_MODULE_DIR "/",
			       o->module_dir ? "" : (sys->machine.kernel_release ? sys->machine.kernel_release : "?"));
		goto out;
	}
	if (plan.ngroups == 0 && !o->install) {
		/* the manifest's fixes are all in the running kernel: nothing to swap, no journal */
		if (!o->json && !o->quiet)
			printf("nothing to swap: every fix in %s%s/manifest.json is in the running kernel, and the "
			       "modules it names run stock; nothing was changed\n",
			       o->module_dir ? o->module_dir : "/" NS_MODULE_DIR "/",
			       o->module_dir ? "" : (sys->machine.kernel_release ? sys->machine.kernel_release : "?"));
		goto out;
	}
	/* JSON: the plan, then (when it ran) what happened, printed once at the end */
	if (!o->json)
		swap_plan_text(&plan);
	if (o->dry_run) {
		/* --install detaches nothing: only its checks decide */
		code = (o->install ? plan.failed_checks == 0 : ns_swap_plan_safe(&plan)) ? NS_EXIT_OK : NS_EXIT_WARNING;
		goto out;
	}
	ran = true;
	xo.wait_s = o->timeout_s ? o->timeout_s : ns_swap_wait_default(&plan);
	if (plan.failed_checks) {
		fprintf(stderr, "numastor fix --modules: refused: a check failed (see above); nothing was changed\n");
		code = NS_EXIT_UNKNOWN;
		goto out;
	}
	/* an earlier swap's journal is the only record of the machine before it: never overwritten */
	r = ns_swap_journal_load(root, &j);
	if (r == 0) {
		have_journal = true;
	} else if (r != -ENOENT) {
		fprintf(stderr, "numastor fix --modules: /%s is malformed (%s): nothing was changed\n",
			NS_SWAP_JOURNAL_PATH, strerror(-r));
		code = NS_EXIT_UNKNOWN;
		goto out;
	}
	if (have_journal && j.runtime) {
		fprintf(stderr,
			"numastor fix --modules: refused: /%s holds a module swap not yet reverted; run "
			"`numastor fix --revert` first; nothing was changed\n",
			NS_SWAP_JOURNAL_PATH);
		code = NS_EXIT_UNKNOWN;
		goto out;
	}
	if (o->install) {
		/* journal first: the files about to be written; ns_swap_install journals each further
		 * step, and undoes the prefix when one fails */
		bool before = have_journal;
		r = ns_swap_install_prepare(sys, &plan, &j);
		if (r == -EXDEV) {
			fprintf(stderr,
				"numastor fix --modules --install: refused: /%s journals an install for kernel %s; "
				"run `numastor fix --revert` first; nothing was changed\n",
				NS_SWAP_JOURNAL_PATH, j.kernel_release);
			code = NS_EXIT_UNKNOWN;
			goto out;
		}
		if (r == 0)
			r = save_swap_journal(root, &j, "--modules --install");
		if (r == 0)
			r = ns_swap_install(sys, &plan, &j, print_progress, (void *)o);
		if (r < 0 && journal_empty(&j) && !before) {
			/* undone whole: nothing of the boot changed, and no journal of it */
			settle_swap_journal(root, &j, "--modules --install");
			fprintf(stderr,
				"numastor fix --modules --install: failed (%s); undone: the modules, depmod's "
				"indexes and /boot's initramfs are as they were\n",
				strerror(-r));
			code = NS_EXIT_WARNING;
		} else if (r < 0) {
			settle_swap_journal(root, &j, "--modules --install");
			fprintf(stderr,
				"numastor fix --modules --install: failed (%s); what is left is journaled in /%s: "
				"`numastor fix --revert` removes it\n",
				strerror(-r), NS_SWAP_JOURNAL_PATH);
			code = NS_EXIT_WARNING;
		} else if (!o->quiet && !o->json) {
			printf("installed for the next boot under /lib/modules/%s/updates/numastor (depmod run%s); "
			       "journaled in /%s; `numastor fix --revert` removes them\n",
			       sys->machine.kernel_release, j.initramfs_updated ? ", initramfs rewritten" : "",
			       NS_SWAP_JOURNAL_PATH);
		}
		goto out;
	}
	if (plan.refused_disks || plan.nbusy) {
		fprintf(stderr, "numastor fix --modules: refused: the swap would detach a disk in use (see above); "
				"nothing was changed. `numastor fix --modules --install` installs the modules for the "
				"next boot instead\n");
		code = NS_EXIT_UNKNOWN;
		goto out;
	}
	/* journal first: the whole before-state, so --revert restores it from any step */
	{
		struct ns_swap_journal install = j;
		r = ns_swap_journal_from_plan(sys, &plan, &j);
		if (r == 0) {
			j.installed = install.installed, install.installed = NULL;
			j.ninstalled = install.ninstalled, install.ninstalled = 0;
			j.initramfs_updated = install.initramfs_updated;
			j.initramfs_new = install.initramfs_new, install.initramfs_new = NULL;
		}
		ns_swap_journal_free(&install);
	}
	if (r == 0)
		r = save_swap_journal(root, &j, "--modules");
	if (r < 0) {
		fprintf(stderr, "numastor fix --modules: nothing was changed: cannot journal the swap: %s\n",
			strerror(-r));
		code = NS_EXIT_UNKNOWN;
		goto out;
	}
	test_pause_before_swap();
	/* no signal leaves it half done: from here until the journal says how it ended */
	swap_guard_begin(&guard);
	r = ns_swap_execute(sys, &plan, &j, &xo, &rep);
	if (r < 0 && (rep.untouched || (rep.rolled_back && rep.rollback_ok))) {
		/* nothing changed, or all of it undone: the journal's runtime part is done with */
		drop_runtime(&j);
		settle_swap_journal(root, &j, "--modules");
	}
	late = swap_guard_end(&guard);
	if (r < 0 && rep.stopped) {
		code = NS_EXIT_WARNING;
		fprintf(stderr, "numastor fix --modules: interrupted by %s: %s\n", signal_name(rep.stopped),
			rep.untouched	  ? "stopped before the first change; nothing was changed"
			: rep.rollback_ok ? "rolled back"
					  : "the rollback did not restore everything (see above): `numastor fix "
					    "--revert` tries again");
	} else if (r < 0 && rep.untouched) {
		/* a disk came into use after the plan: the recheck stopped before the first removal */
		const char *why = NULL;
		for (size_t i = 0; i < rep.n && !why; i++)
			why = rep.v[i].ok ? NULL : rep.v[i].text;
		fprintf(stderr, "numastor fix --modules: refused: %s; nothing was changed\n", why ? why : strerror(-r));
		code = NS_EXIT_UNKNOWN;
	} else if (r < 0) {
		fprintf(stderr, "numastor fix --modules: the swap failed (%s)%s\n", strerror(-r),
			rep.rolled_back ? (rep.rollback_ok ? "; rolled back to the stock modules"
							   : "; the rollback did not restore everything (see "
							     "above): `numastor fix --revert` tries again")
					: "");
		code = NS_EXIT_WARNING;
	} else if (!o->quiet && !o->json) {
		printf("module swap done; journaled in /%s; `numastor fix --revert` returns to the stock modules\n",
		       NS_SWAP_JOURNAL_PATH);
	}
	if (late && !rep.stopped)
		fprintf(stderr,
			"numastor fix --modules: %s arrived while the machine was being made consistent: "
			"answered once it was (%s)\n",
			signal_name(late), r == 0 ? "the swap is complete and kept" : "see above");
	say_renamed(o, &rep);
	say_stdout_lost("--modules", r == 0				  ? "completed: the patched modules run"
				     : rep.untouched			  ? "changed nothing"
				     : rep.rolled_back && rep.rollback_ok ? "was rolled back"
									  : "failed and was not fully rolled back");
out:
	if (o->json) {
		struct json_object *doc = ns_json_envelope(root, FIX_SCHEMA_VERSION), *res = NULL;
		json_object_object_add(doc, "dry_run", json_object_new_boolean(o->dry_run));
		json_object_object_add(doc, "modules", swap_plan_json(&plan));
		if (ran) {
			struct json_object *ev = json_object_new_array();
			res = json_object_new_object();
			json_object_object_add(res, "exit_code", json_object_new_int(code));
			json_object_object_add(res, "swapped", json_object_new_boolean(rep.ok));
			json_object_object_add(res, "rolled_back", json_object_new_boolean(rep.rolled_back));
			json_object_object_add(res, "interrupted_by",
					       rep.stopped ? json_object_new_string(signal_name(rep.stopped)) : NULL);
			json_object_object_add(res, "timeout_s", json_object_new_int((int)xo.wait_s));
			json_object_object_add(res, "renamed", renamed_json(&rep));
			for (size_t i = 0; i < rep.n; i++) {
				struct json_object *e = json_object_new_object();
				json_object_object_add(e, "step", json_object_new_string(rep.v[i].text));
				json_object_object_add(e, "ok", json_object_new_boolean(rep.v[i].ok));
				json_object_array_add(ev, e);
			}
			json_object_object_add(res, "events", ev);
		}
		json_object_object_add(doc, "result", res);
		ns_json_sanitize(doc); /* what the machine said, valid UTF-8 (lib/base/escape.h) */
		puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(doc);
	}
	ns_swap_journal_free(&j);
	ns_swap_report_free(&rep);
	ns_swap_plan_free(&plan);
	return code;
}

/*
 * After the IRQ revert: the machine the swap journal describes (the stock modules, with their
 * options, every removed function rescanned, every disk back by identity), and no file
 * installed for the next boot.
 */
static int revert_modules(struct ns_root *root, const struct fix_opts *o, struct json_object *doc)
{
	struct ns_swap_journal j;
	struct ns_system sys;
	struct json_object *mj = NULL, *plan_doc = NULL;
	struct revert_sink sink = {.o = o, .events = doc ? json_object_new_array() : NULL};
	struct ns_swap_exec_opts xo = {
		.wait_s = 60, .progress = revert_progress, .data = &sink, .after_step = stop_after_step};
	int r = ns_swap_journal_load(root, &j), code = NS_EXIT_OK;
	bool earlier_boot = false;
	char *boot;

	if (r == -ENOENT) {
		json_object_put(sink.events);
		if (doc)
			json_object_object_add(doc, "modules", NULL);
		return NS_EXIT_OK;
	}
	if (doc) /* a swap journal: something to revert, or to say why not */
		json_object_object_add(doc, "nothing_to_revert", json_object_new_boolean(false));
	if (r < 0) {
		fprintf(stderr, "numastor fix --revert: /%s is malformed (%s); the modules were not touched\n",
			NS_SWAP_JOURNAL_PATH, strerror(-r));
		json_object_put(sink.events);
		if (doc)
			json_object_object_add(doc, "modules", NULL);
		return NS_EXIT_UNKNOWN;
	}
	r = ns_system_discover(root, NULL, 0, &sys);
	if (r < 0) {
		fprintf(stderr, "numastor fix --revert: %s\n", strerror(-r));
		ns_swap_journal_free(&j);
		json_object_put(sink.events);
		if (doc)
			json_object_object_add(doc, "modules", NULL);
		return NS_EXIT_UNKNOWN;
	}
	boot = ns_swap_boot_id(root);
	if (j.runtime && j.boot_id && boot && strcmp(j.boot_id, boot) != 0) {
		/* a runtime swap ends with its boot: this boot loaded what modules.dep says */
		earlier_boot = true;
		if (!o->json)
			printf("  the module swap journaled in /%s was made in an earlier boot (%s): it ended with "
			       "that "
			       "boot, so nothing of it is swapped back%s\n",
			       NS_SWAP_JOURNAL_PATH, j.boot_id,
			       j.ninstalled ? "; the files installed for the next boot are removed" : "");
		drop_runtime(&j);
	}
	if (j.runtime) {
		struct ns_swap_plan plan;
		struct ns_swap_report rep = {0};
		r = ns_swap_plan_revert(&sys, &j, &plan);
		if (r < 0) {
			fprintf(stderr, "numastor fix --revert: planning the swap back: %s\n", strerror(-r));
			code = NS_EXIT_WARNING;
		} else {
			if (!o->quiet && !o->json)
				swap_plan_text(&plan);
			if (doc)
				plan_doc = swap_plan_json(&plan);
			if (!ns_swap_plan_safe(&plan)) {
				fprintf(stderr,
					"numastor fix --revert: refused: a disk the swap back would detach is in use "
					"(see above); the numastor modules stay loaded and /%s is kept\n",
					NS_SWAP_JOURNAL_PATH);
				code = NS_EXIT_WARNING;
			} else {
				struct swap_guard guard;
				int late;
				xo.wait_s = o->timeout_s ? o->timeout_s : ns_swap_wait_default(&plan);
				/* a signal does not stop the way back: it is the way to a consistent machine */
				swap_guard_begin(&guard);
				r = ns_swap_execute(&sys, &plan, NULL, &xo, &rep);
				if (r == 0)
					drop_runtime(&j);
				late = swap_guard_end(&guard);
				if (late)
					fprintf(stderr,
						"numastor fix --revert: %s arrived during the swap back: answered "
						"once it was done\n",
						signal_name(late));
				say_renamed(o, &rep);
				if (r < 0) {
					fprintf(stderr,
						"numastor fix --revert: swapping back did not restore everything (%s; "
						"the FAIL lines above say what); /%s is kept for another --revert\n",
						strerror(-r), NS_SWAP_JOURNAL_PATH);
					code = NS_EXIT_WARNING;
				}
				ns_swap_report_free(&rep);
			}
			ns_swap_plan_free(&plan);
		}
	}
	if (!j.runtime && (j.ninstalled || j.initramfs_updated || j.initramfs_new)) {
		r = ns_swap_uninstall(&sys, &j, revert_progress, &sink);
		if (r < 0) {
			fprintf(stderr, "numastor fix --revert: removing the modules installed for the next boot: %s\n",
				strerror(-r));
			code = NS_EXIT_WARNING;
		} else if (!o->quiet && !o->json) {
			printf("  removed the modules installed for the next boot; the stock modules load at the next "
			       "boot\n");
		}
	}
	if (settle_swap_journal(root, &j, "--revert") < 0 && code == NS_EXIT_OK)
		code = NS_EXIT_WARNING;
	if (doc) {
		mj = json_object_new_object();
		json_object_object_add(mj, "journal", json_object_new_string("/" NS_SWAP_JOURNAL_PATH));
		json_object_object_add(mj, "earlier_boot", json_object_new_boolean(earlier_boot));
		json_object_object_add(mj, "plan", plan_doc);
		json_object_object_add(mj, "events", sink.events);
		json_object_object_add(mj, "restored", json_object_new_boolean(code == NS_EXIT_OK));
		json_object_object_add(mj, "journal_kept", json_object_new_boolean(!journal_empty(&j)));
		json_object_object_add(doc, "modules", mj);
	}
	free(boot);
	ns_swap_journal_free(&j);
	ns_system_free(&sys);
	return code;
}

/*
 * --irqbalance=policy, once the placement is journaled and written: link the drop-in (journaled
 * first), reload systemd, restart irqbalance, and look again at what runs. ibo->result becomes
 * "enabled" or "already" when the link is in place (ibo->holds when irqbalance now runs
 * with numastor's policy script), "failed" (< 0) when the link or the restart failed.
 */
static int irqbalance_policy(struct ns_root *root, const struct ns_system *sys, struct ib_outcome *ibo)
{
	struct ns_machine now = {0};
	struct ns_notes notes = {0};
	char *problem = NULL;
	bool linked_now = false;
	int r = 0;

	if (ibo->st.already) {
		ibo->result = "already";
	} else if (ibo->st.linked) {
		ibo->result = "already";
	} else {
		r = ns_ibpolicy_enable(root, &problem);
		if (r < 0) {
			fprintf(stderr, "numastor fix: --irqbalance=policy: %s\n", problem ? problem : strerror(-r));
			free(problem);
			ibo->result = "failed";
			return r;
		}
		ibo->st.linked = linked_now = true;
		ibo->result = "enabled";
	}
	/* a daemon that runs without the script is restarted, also when the link was there */
	if (linked_now || (sys->machine.irqbalance.running == 1 &&
			   (!sys->machine.irqbalance.policyscript ||
			    !ns_ibpolicy_is_numastors(sys->machine.irqbalance.policyscript)))) {
		r = ns_ibpolicy_reload(root, &ibo->reload);
		if (r < 0 && r != -ENOSYS) {
			fprintf(stderr, "numastor fix: --irqbalance=policy: /%s is linked, but %s\n", NS_IBPOLICY_LINK,
				ibo->reload ? ibo->reload : strerror(-r));
			ibo->result = "failed";
			return r;
		}
	}
	r = ns_machine_read(root, &now, &notes);
	if (r == 0 && now.irqbalance.running == 1 && now.irqbalance.policyscript &&
	    ns_ibpolicy_is_numastors(now.irqbalance.policyscript))
		ibo->holds = true;
	ns_machine_free(&now);
	ns_notes_free(&notes);
	return 0;
}

/* After the IRQs and the modules: numastor's drop-in for irqbalance out again, when fix put it
 * there (its journal in var/lib/numastor says so), and irqbalance restarted without it. */
static int revert_irqbalance_policy(struct ns_root *root, const struct fix_opts *o, struct json_object *doc)
{
	char *problem = NULL, *said = NULL;
	bool removed = false;
	int r = ns_ibpolicy_disable(root, &removed, &problem), code = NS_EXIT_OK;
	struct json_object *x;

	if (r == -ENOENT) {
		if (doc)
			json_object_object_add(doc, "irqbalance_policy", NULL);
		return NS_EXIT_OK;
	}
	if (r < 0 || problem) {
		fprintf(stderr, "numastor fix --revert: irqbalance's drop-in: %s\n", problem ? problem : strerror(-r));
		code = NS_EXIT_WARNING;
	}
	if (removed) {
		int rr = ns_ibpolicy_reload(root, &said);
		if (rr < 0 && rr != -ENOSYS) {
			fprintf(stderr, "numastor fix --revert: /%s removed, but %s\n", NS_IBPOLICY_LINK,
				said ? said : strerror(-rr));
			code = NS_EXIT_WARNING;
		}
		if (!o->json && !o->quiet)
			printf("  irqbalance: removed /%s (numastor's policy script)%s%s\n", NS_IBPOLICY_LINK,
			       said ? "; " : "", said ? said : "");
	}
	if (doc) {
		x = json_object_new_object();
		json_object_object_add(x, "link", json_object_new_string("/" NS_IBPOLICY_LINK));
		json_object_object_add(x, "removed", json_object_new_boolean(removed));
		json_object_object_add(x, "problem", jstr_or_null(problem));
		json_object_object_add(x, "reload", jstr_or_null(said));
		json_object_object_add(doc, "irqbalance_policy", x);
	}
	free(problem);
	free(said);
	return code;
}

/* --- fix --probe: the devices the plan moves vectors of, probed before and after -------- */

struct fix_probe {
	struct ns_probe_disk *before, *after; /* n each, the same disks in the same order */
	size_t n;
	char *problem;
};

static void probe_free(struct fix_probe *fp)
{
	for (size_t i = 0; i < fp->n; i++) {
		if (fp->before)
			ns_probe_disk_free(&fp->before[i]);
		if (fp->after)
			ns_probe_disk_free(&fp->after[i]);
	}
	free(fp->before);
	free(fp->after);
	free(fp->problem);
	memset(fp, 0, sizeof(*fp));
}

static volatile sig_atomic_t probe_stop;

static void probe_progress(void *data, const char *disk, int node, double elapsed, uint64_t ios)
{
	const struct fix_opts *o = data;
	if (o->json || o->quiet || !isatty(STDERR_FILENO))
		return;
	ns_probe_progress_line("probe ", disk, node, elapsed, o->probe_seconds, ios);
}

/* Probe every disk the plan moves a vector of, from every node with CPUs: into fp->before, or
 * (after) into fp->after for the same disks. */
static int probe_plan(struct ns_root *root, const struct ns_system *sys, const struct ns_plan *plan,
		      const struct fix_opts *o, struct fix_probe *fp, bool after)
{
	struct ns_probe_params p = {.block_size = 4096,
				    .iodepth = 32,
				    .jobs = 1,
				    .seconds = o->probe_seconds,
				    .progress = probe_progress,
				    .data = (void *)o,
				    .stop = &probe_stop};
	struct ns_probe_disk *set;
	int r = 0;

	if (!after) {
		fp->before = calloc(plan->nirqs + 1, sizeof(*fp->before));
		fp->after = calloc(plan->nirqs + 1, sizeof(*fp->after));
		if (!fp->before || !fp->after)
			return -ENOMEM;
		for (size_t i = 0; i < plan->nirqs; i++) {
			const struct ns_disk *d;
			bool seen = false;
			if (plan->irqs[i].action != NS_PLAN_MOVE)
				continue;
			d = ns_system_disk(sys, plan->irqs[i].device);
			for (size_t k = 0; d && k < fp->n; k++)
				seen |= fp->before[k].disk == d;
			if (d && !seen) {
				fp->before[fp->n].disk = d;
				fp->after[fp->n++].disk = d;
			}
		}
	}
	set = after ? fp->after : fp->before;
	for (size_t i = 0; i < fp->n && r == 0; i++) {
		r = ns_probe_disk_measure(root, sys, NULL, &p, &set[i]);
		if (r < 0 && !fp->problem &&
		    asprintf(&fp->problem, "reading /dev/%s%s: %s", set[i].disk->name,
			     set[i].failed_node >= 0 ? " from a node" : "", strerror(-r)) < 0)
			fp->problem = NULL;
	}
	if (!o->json && !o->quiet && isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K");
	return r;
}

static void probe_text(const struct ns_system *sys, const struct fix_opts *o, const struct fix_probe *fp)
{
	if (!fp->n) {
		printf("\nprobe: the plan moves no vector: nothing to measure\n");
		return;
	}
	printf("\nprobe: 4k random reads, iodepth 32, %.1f s per node, before the change and after it\n",
	       o->probe_seconds);
	printf("%-10s %4s %9s %9s  %-22s %s\n", "DEVICE", "NODE", "IOPS", "", "IRQS BY NODE", "");
	printf("%-10s %4s %9s %9s  %-22s %s\n", "", "", "before", "after", "before", "after");
	for (size_t i = 0; i < fp->n; i++) {
		const struct ns_probe_disk *b = &fp->before[i], *a = &fp->after[i];
		for (size_t k = 0; k < b->nruns; k++) {
			const struct ns_probe_node_run *rb = &b->runs[k], *ra = k < a->nruns ? &a->runs[k] : NULL;
			char ib[16], ia[16] = "-", qb[128], qa[128] = "-";
			ns_probe_fmt_count(ib, sizeof(ib), ns_probe_iops(rb));
			ns_probe_fmt_irqs(qb, sizeof(qb), sys, rb);
			if (ra) {
				ns_probe_fmt_count(ia, sizeof(ia), ns_probe_iops(ra));
				ns_probe_fmt_irqs(qa, sizeof(qa), sys, ra);
			}
			printf("%-10s %4d %9s %9s  %-22s %s\n", k ? "" : b->disk->name, rb->node, ib, ia, qb, qa);
		}
	}
}

static struct json_object *probe_json(const struct ns_system *sys, const struct fix_opts *o, const struct fix_probe *fp)
{
	struct json_object *pj = json_object_new_object(), *params = json_object_new_object(),
			   *ds = json_object_new_array();

	json_object_object_add(params, "block_size", json_object_new_int(4096));
	json_object_object_add(params, "iodepth", json_object_new_int(32));
	json_object_object_add(params, "jobs", json_object_new_int(1));
	json_object_object_add(params, "seconds", ns_probe_jdouble(o->probe_seconds, 3));
	json_object_object_add(pj, "parameters", params);
	for (size_t i = 0; i < fp->n; i++) {
		const struct ns_probe_disk *b = &fp->before[i], *a = &fp->after[i];
		struct json_object *dj = json_object_new_object(), *nodes = json_object_new_array();
		json_object_object_add(dj, "name", json_object_new_string(b->disk->name));
		for (size_t k = 0; k < b->nruns; k++) {
			struct json_object *nj = json_object_new_object();
			json_object_object_add(nj, "node", json_object_new_int(b->runs[k].node));
			json_object_object_add(nj, "before", ns_probe_run_json(sys, &b->runs[k]));
			json_object_object_add(nj, "after", k < a->nruns ? ns_probe_run_json(sys, &a->runs[k]) : NULL);
			json_object_array_add(nodes, nj);
		}
		json_object_object_add(dj, "nodes", nodes);
		json_object_array_add(ds, dj);
	}
	json_object_object_add(pj, "devices", ds);
	json_object_object_add(pj, "problem", fp->problem ? json_object_new_string(fp->problem) : NULL);
	return pj;
}

/* The before/after table as the journal's probe: the fix document's probe, once more. */
static int journal_probe(struct ns_root *root, const struct ns_system *sys, const struct fix_opts *o,
			 const struct fix_probe *fp)
{
	struct ns_journal j;
	struct json_object *pj;
	int r = ns_journal_load(root, &j);

	if (r < 0)
		return r;
	pj = probe_json(sys, o, fp);
	free(j.probe);
	j.probe = pj ? strdup(json_object_to_json_string_ext(pj, JSON_C_TO_STRING_PLAIN)) : NULL;
	json_object_put(pj);
	r = j.probe ? ns_journal_save(root, &j) : -ENOMEM;
	ns_journal_free(&j);
	return r;
}

int cmd_fix(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"dry-run", no_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		{"revert", no_argument, NULL, 'X'},
		{"rq-affinity", required_argument, NULL, 'A'},
		{"lock-timeout", required_argument, NULL, 'T'},
		{"timeout", required_argument, NULL, 'W'},
		{"hotplug", no_argument, NULL, 'H'},
		{"modules", no_argument, NULL, 'M'},
		{"module-dir", required_argument, NULL, 'D'},
		{"install", no_argument, NULL, 'I'},
		{"irqbalance", required_argument, NULL, 'B'},
		{"sysroot", required_argument, NULL, 'R'},
		{"quiet", no_argument, NULL, 'q'},
		{"color", required_argument, NULL, 'C'},
		{"probe", optional_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct fix_opts o = {.lock_timeout_s = 30};
	const char *color = "auto";
	struct ns_root *root = NULL;
	struct ns_system sys;
	struct ns_findings findings = {0};
	struct ns_plan plan = {0};
	struct ns_plan_opts popts = {0};
	struct ns_apply_result *ir = NULL, *rr = NULL;
	unsigned stop_after = 0;
	struct ns_apply_opts aopts = {
		.retries = 3, .retry_delay_ms = 50, .after_write = stop_after_writes, .data = &stop_after};
	int c, r, code = NS_EXIT_OK, lockfd = -1;
	struct ns_cli cli;
	struct ns_lock_holder holder;
	struct ib_outcome ibo = {0};
	struct fix_probe probe = {0};
	char *end;

	ns_cli_init(&cli, "fix", argc, argv);
	o.cli = &cli;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":njR:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o.dry_run = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'X':
			o.revert = true;
			break;
		case 'A':
			if (strcmp(optarg, "2") != 0)
				return ns_cli_bad_usage(&cli, "--rq-affinity takes 2, not '%s'", optarg);
			popts.rq_affinity = 2;
			break;
		case 'T': {
			unsigned long v;
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || v > 3600)
				return ns_cli_bad_usage(&cli, "--lock-timeout takes seconds (0-3600), not '%s'",
							optarg);
			o.lock_timeout_s = (unsigned)v;
			break;
		}
		case 'W': {
			unsigned long v;
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > 86400)
				return ns_cli_bad_usage(&cli, "--timeout takes seconds (1-86400), not '%s'", optarg);
			o.timeout_s = (unsigned)v;
			break;
		}
		case 'R':
			o.sysroot = optarg;
			break;
		case 'H':
			o.hotplug = true;
			o.quiet = true;
			break;
		case 'M':
			o.modules = true;
			break;
		case 'D':
			o.module_dir = optarg;
			break;
		case 'I':
			o.install = true;
			break;
		case 'B':
			if (strcmp(optarg, "policy") != 0)
				return ns_cli_bad_usage(&cli, "--irqbalance takes policy, not '%s'", optarg);
			o.ib_policy = true;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'C':
			color = optarg;
			break;
		case 'P':
			o.probe_seconds = 3;
			if (optarg && ns_cli_parse_seconds(optarg, 3600, &o.probe_seconds) < 0)
				return ns_cli_bad_usage(&cli, "--probe takes seconds above 0, at most 3600, not '%s'",
							optarg);
			break;
		case 'h':
			fix_usage(stdout);
			return NS_EXIT_OK;
		default:
			return ns_cli_bad_option(&cli, c, argv);
		}
	}
	int colored = ns_color_choice(color, stdout);
	if (colored < 0)
		return ns_cli_bad_usage(&cli, "--color takes auto, always or never, not '%s'", color);
	o.color = colored == 1;
	if (o.revert && (o.dry_run || optind < argc || popts.rq_affinity))
		return ns_cli_bad_usage(&cli, "--revert takes no devices and no --dry-run or --rq-affinity");
	if (o.timeout_s && !o.modules && !o.revert)
		return ns_cli_bad_usage(&cli, "--timeout goes with --modules or --revert");
	if ((o.install || o.module_dir) && !o.modules)
		return ns_cli_bad_usage(&cli, "--install and --module-dir go with --modules");
	if (o.modules && (o.revert || popts.rq_affinity || optind < argc))
		return ns_cli_bad_usage(&cli, "--modules takes no devices, --revert or --rq-affinity");
	if (o.ib_policy && (o.revert || o.modules || o.hotplug))
		return ns_cli_bad_usage(&cli, "--irqbalance=policy goes with no --revert, --modules or --hotplug "
					      "(--revert removes the drop-in)");
	if (o.probe_seconds > 0 && (o.dry_run || o.revert || o.modules || o.hotplug || o.sysroot))
		return ns_cli_bad_usage(&cli, "--probe measures before and after a change: not with --dry-run, "
					      "--revert, --modules, --hotplug or --sysroot");
	if (o.hotplug && (o.revert || o.modules || o.dry_run || o.json))
		return ns_cli_bad_usage(&cli, "--hotplug goes with no --revert, --modules, --dry-run or --json");
	if (o.sysroot && !sysroot_writes_allowed()) {
		if (o.revert)
			return ns_cli_bad_usage(&cli, "--revert acts on the live system only, not on --sysroot");
		o.dry_run = true; /* a captured tree is never written */
	}
	if (ns_test_hook("NUMASTOR_TEST_STOP_AFTER_WRITES"))
		stop_after = (unsigned)strtoul(ns_test_hook("NUMASTOR_TEST_STOP_AFTER_WRITES"), NULL, 10);
	if (!o.dry_run && !o.sysroot && geteuid() != 0)
		return ns_cli_fail(
			&cli, NS_EXIT_UNKNOWN,
			"changing IRQ affinities needs root; run it as root, or use --dry-run to see the plan");
	r = ns_root_open(o.sysroot, &root);
	if (r < 0)
		return ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot use %s as the root: %s", o.sysroot ? o.sysroot : "/",
				   strerror(-r));
	cli.root = root; /* an error document from here on says which machine */
	if (!o.dry_run) {
		/* the journal and the lock only in numastor's own directories: a symlink or a directory
		 * others may write would send them (and what --revert trusts) elsewhere */
		char *why = NULL;
		const char *dir = NS_STATE_DIR;
		r = ns_state_dir_ensure(root, dir, &why);
		if (r == 0 && (o.revert || o.modules)) {
			dir = NS_SWAP_JOURNAL_DIR;
			r = ns_state_dir_check(root, dir, &why);
			if (r == -ENOENT)
				r = 0; /* made (and checked) when a swap first journals */
		}
		if (r < 0) {
			ns_cli_fail(&cli, NS_EXIT_UNKNOWN,
				    "refused: %s; numastor keeps its journal and lock only in a real directory owned "
				    "by root that no one else may write (/%s): nothing was changed",
				    why ? why : strerror(-r), dir);
			free(why);
			ns_root_free(root);
			return NS_EXIT_UNKNOWN;
		}
	}
	if (!o.dry_run) {
		/* the lock says what this run does, so that a waiter can tell a swap from a fix; the
		 * plan is built only once the lock is ours, so a fix that waited plans afresh */
		const char *what = o.revert ? "revert" : o.modules ? "modules" : "irqs";
		unsigned swap_wait_s = o.hotplug ? HOTPLUG_SWAP_WAIT_S : o.lock_timeout_s;
		r = ns_lock_acquire(root, what, o.lock_timeout_s * 1000, swap_wait_s * 1000, &lockfd, &holder);
		if (r == -EWOULDBLOCK) {
			bool swap = ns_lock_holder_is_swap(&holder);
			ns_cli_fail(&cli, NS_EXIT_UNKNOWN,
				    "another numastor fix (pid %ld%s) holds /%s; gave up after %u s", holder.pid,
				    !holder.what[0]			 ? ""
				    : strcmp(holder.what, "irqs") == 0	 ? ", placing interrupts"
				    : strcmp(holder.what, "revert") == 0 ? ", reverting"
									 : ", swapping modules",
				    NS_LOCK_PATH, swap ? swap_wait_s : o.lock_timeout_s);
			ns_root_free(root);
			return NS_EXIT_UNKNOWN;
		}
		if (r < 0) {
			ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot take /%s: %s", NS_LOCK_PATH, strerror(-r));
			ns_root_free(root);
			return NS_EXIT_UNKNOWN;
		}
	}
	if (o.revert) {
		struct json_object *doc = NULL;
		code = do_revert(root, &o, &aopts, &doc);
		/* the swap journal is its own: undone even when the IRQ journal could not be read */
		{
			int mc = revert_modules(root, &o, doc);
			if (mc > code)
				code = mc;
			mc = revert_irqbalance_policy(root, &o, doc);
			if (mc > code)
				code = mc;
		}
		if (doc) {
			ns_json_sanitize(doc); /* what the machine said, valid UTF-8 (lib/base/escape.h) */
			puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
									 JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(doc);
		}
		ns_lock_release(lockfd);
		ns_root_free(root);
		return code;
	}

	r = ns_system_discover(root, (const char *const *)argv + optind, (size_t)(argc - optind), &sys);
	if (r < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "%s",
				   r == -ENODEV && sys.notes.n ? sys.notes.v[sys.notes.n - 1].message : strerror(-r));
		goto out;
	}
	if (o.modules) {
		code = do_modules(root, &sys, &o);
		goto out;
	}
	/* what this kernel answers a write to a vector user space may not set */
	aopts.refusal_errno = ns_apply_refusal_errno(sys.machine.kver_major, sys.machine.kver_minor);
	aopts.fake_irq_errno = fake_irq_errno();
	r = ns_findings_evaluate(&sys, &findings);
	if (r == 0)
		r = ns_plan_build(&sys, &findings, &popts, &plan);
	if (r == -EBADMSG) {
		code = print_unparsed(&sys.machine, &o);
		goto out;
	}
	if (r < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "building the plan: %s", strerror(-r));
		goto out;
	}
	if (!o.dry_run && (r = malformed_journal(root, "fix", &o)) < 0) {
		code = NS_EXIT_UNKNOWN;
		goto out;
	}
	r = ns_ibpolicy_inspect(root, &sys.machine.irqbalance, &ibo.st);
	if (r < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "reading irqbalance's units and options: %s", strerror(-r));
		goto out;
	}
	if (o.ib_policy && ibo.st.conflict) {
		/* the operator's own policy script or ExecStart=: theirs to change, not numastor's */
		ibo.result = "refused";
		if (!o.dry_run) {
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN,
					   "refused: --irqbalance=policy: %s; nothing was changed. Remove it (or "
					   "give irqbalance %s there yourself), then run fix again",
					   ibo.st.conflict, NUMASTOR_POLICY_SCRIPT);
			goto out;
		}
		code = NS_EXIT_WARNING;
	}
	if (!o.dry_run) {
		ir = calloc(plan.nirqs + 1, sizeof(*ir));
		rr = calloc(plan.nrqs + 1, sizeof(*rr));
		if (!ir || !rr) {
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "out of memory");
			goto out;
		}
		if (o.probe_seconds > 0) {
			/* the measurement first: a fix asked to prove itself does not change what it
			 * cannot measure */
			r = probe_plan(root, &sys, &plan, &o, &probe, false);
			if (r < 0) {
				code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "nothing was changed: --probe: %s",
						   probe.problem ? probe.problem : strerror(-r));
				goto out;
			}
		}
		r = ns_apply_plan(root, &plan, &aopts, ir, rr);
		if (r == -ESTALE || r == -EPROTO) {
			code = ns_cli_fail(
				&cli, NS_EXIT_UNKNOWN,
				"nothing was changed: /%s is %s; `numastor fix --revert` says what it holds. "
				"Remove it once you have seen to it, then run fix again",
				NS_JOURNAL_PATH,
				r == -ESTALE ? "from another boot" : "a journal of another numastor version");
			goto out;
		}
		if (r == -EFBIG) {
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN,
					   "nothing was changed: the journal of this plan would exceed the %zu bytes "
					   "`fix --revert` reads back, so it could not be undone; fix fewer devices at "
					   "a time (DEVICE arguments)",
					   ns_journal_max());
			goto out;
		}
		if (r < 0) {
			code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN,
					   "nothing was changed: cannot write the journal /%s: %s", NS_JOURNAL_PATH,
					   strerror(-r));
			goto out;
		}
		/* applied-effective-differs is reported, not failed: without interrupt remapping the
		 * kernel moves an MSI vector at its next interrupt */
		for (size_t i = 0; i < plan.nirqs; i++)
			if (ir[i].status == NS_APPLY_FAILED)
				code = NS_EXIT_WARNING;
		for (size_t i = 0; i < plan.nrqs; i++)
			if (rr[i].status == NS_APPLY_FAILED)
				code = NS_EXIT_WARNING;
		if (o.probe_seconds > 0 && probe.n && probe_plan(root, &sys, &plan, &o, &probe, true) < 0) {
			fprintf(stderr, "numastor fix: --probe after the change: %s\n",
				probe.problem ? probe.problem : "failed");
			code = code > NS_EXIT_WARNING ? code : NS_EXIT_WARNING;
		}
		/* the table goes into the journal beside what it measured (the lock is still ours) */
		if (o.probe_seconds > 0 && probe.n && (r = journal_probe(root, &sys, &o, &probe)) < 0) {
			fprintf(stderr, "numastor fix: --probe: recording the measurements in /%s: %s\n",
				NS_JOURNAL_PATH, strerror(-r));
			code = code > NS_EXIT_WARNING ? code : NS_EXIT_WARNING;
		}
		/* after the placement: irqbalance, restarted with the policy script, bans what the
		 * journal now holds from its first pass on */
		if (o.ib_policy && irqbalance_policy(root, &sys, &ibo) < 0)
			code = NS_EXIT_WARNING;
	}
	/* irqbalance without numastor's policy script moves the vectors back at its next pass: the
	 * placement does not hold, and the exit status says so */
	ibo.undoes = plan.irqbalance_advice && !ibo.holds;
	if (ibo.undoes && !o.dry_run)
		code = code > NS_EXIT_WARNING ? code : NS_EXIT_WARNING;
	if (o.json) {
		struct json_object *doc = plan_json(&sys, &plan, &o, ir, rr, &ibo);
		if (o.probe_seconds > 0)
			json_object_object_add(doc, "probe", probe_json(&sys, &o, &probe));
		ns_json_sanitize(doc); /* what the machine said, valid UTF-8 (lib/base/escape.h) */
		puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(doc);
	} else {
		plan_text(stdout, &sys, &plan, &o, ir, rr, &ibo);
		if (o.probe_seconds > 0 && !o.quiet)
			probe_text(&sys, &o, &probe);
	}
	if (plan.irqbalance_advice && ibo.undoes && !o.json && o.quiet)
		fprintf(stderr, "numastor fix: %s\n", plan.irqbalance_advice);
out:
	probe_free(&probe);
	ns_ibpolicy_state_free(&ibo.st);
	free(ibo.reload);
	for (size_t i = 0; ir && i < plan.nirqs; i++)
		ns_apply_result_free(&ir[i]);
	free(ir);
	free(rr);
	ns_plan_free(&plan);
	ns_findings_free(&findings);
	ns_system_free(&sys);
	ns_lock_release(lockfd);
	ns_root_free(root);
	return code;
}
