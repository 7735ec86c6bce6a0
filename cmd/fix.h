/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numastor fix's front end, over its engines (lib/act/fixrun.h: the IRQs, their revert and
 * irqbalance's drop-in; lib/swap/modswap-run.h: the module swap and its revert): fix.c parses
 * the options and dispatches, each other fix-*.c renders one part as text or JSON.
 */
#ifndef NUMASTOR_CMD_FIX_H
#define NUMASTOR_CMD_FIX_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>

#include "act/fixrun.h"
#include "cli.h"
#include "numastor.h"
#include "swap/modswap-run.h"
#include "textwrap.h"

/* fix's documents (plan, modules, revert); every change is listed in schema/CHANGES.md */
#define FIX_SCHEMA_VERSION 7

struct fix_opts {
	const struct ns_cli *cli; /* errors: one line on stderr, or under --json one error document */
	bool dry_run, json, revert, quiet, verbose, color, modules, install, hotplug, ib_policy;
	const char *module_dir;
	int rq_affinity; /* --rq-affinity=2; 0 without */
	char **devices;	 /* the DEVICEs named */
	size_t ndevices;
	unsigned lock_timeout_s;
	unsigned timeout_s; /* --timeout: the disks' return after a module reload; 0: the default */
	const char *sysroot;
	const char *snapshot; /* --snapshot: a bundle's file (with --dry-run only) */
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

/* The colours of the text report (cmd/text-report.h): a failed write red, a move yellow, a skip dim. */
#define FIX_RED "\033[1;31m"
#define FIX_YELLOW "\033[33m"
#define FIX_DIM "\033[2m"
#define FIX_RESET "\033[0m"

static inline const char *fix_col(const struct fix_opts *o, const char *c)
{
	return o->color ? c : "";
}

static inline struct json_object *jstr_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* fix-plan.c: the IRQ placement, planned and (unless a dry run) done, rendered; an exit code */
int fix_irqs(struct ns_root *root, struct ns_system *sys, const struct fix_opts *o);
/* fix-text.c: fix's text at the terminal's width (at most 80 columns), over cmd/textwrap */
struct fix_page {
	struct tw_page pg;
	size_t width;
};
void fix_page_init(struct fix_page *fp, FILE *out, const struct fix_opts *o);
/* text wrapped at width, its first line indented by ind1, the rest by ind2, in colour c (NULL: none) */
void fix_say(const struct fix_page *fp, size_t ind1, size_t ind2, const char *c, const char *text);
char *fix_cpus_text(const struct ns_cpuset *s); /* "?" when unknown */
/* v[0..n) sorted, as ranges: "58-73,90" */
char *fix_ranges(int *v, size_t n);
/* a reason's shape: each number (or list of them) as '#', so that reasons of one rule compare equal */
char *fix_shape(const char *s);
/* why the plan takes dev: the causes its answers (comma-separated finding ids) come down to,
 * each once with the effects it explains here, as check groups them */
char *fix_causes_text(const struct ns_findings *fs, const char *dev, const char *answers);
/* the devices of the plan in its order (its IRQs, then its rq_affinity writes) into devs; their count */
size_t fix_plan_devices(const struct ns_plan *plan, const char **devs);

/* fix-plan-text.c: the plan (and results) as a report at the terminal's width: what changes, the
 * journal and the undo; per device its cause once and its vectors grouped (o->verbose: each) */
void fix_plan_text(FILE *out, const struct ns_system *sys, const struct ns_findings *fs, const struct ns_plan *plan,
		   const struct fix_opts *o, const struct ns_apply_result *ir, const struct ns_apply_result *rr,
		   const struct ns_fix_ib *ibo);
/* The JSON text of a malformed journal's refusal (fix and fix --revert). */
int fix_journal_malformed(const struct fix_opts *o, const char *who, const char *why);

/* fix-probe.c: --probe's measurement around the change (the engine's before/after callbacks) */
struct fix_probe;
struct fix_probe *fix_probe_new(struct ns_root *root, const struct fix_opts *o);
void fix_probe_free(struct fix_probe *fp);
int fix_probe_before(void *data, const struct ns_system *sys, const struct ns_plan *plan);
int fix_probe_after(void *data, const struct ns_system *sys, const struct ns_plan *plan);
const char *fix_probe_problem(const struct fix_probe *fp);
void fix_probe_text(const struct ns_system *sys, const struct fix_opts *o, const struct fix_probe *fp);
struct json_object *fix_probe_json(const struct ns_system *sys, const struct fix_opts *o, const struct fix_probe *fp);

/* fix-swap.c: the swap plan and its result as text and JSON, the renamed disks, the progress */
void fix_print_progress(void *data, const char *text, bool ok);
struct json_object *fix_swap_plan_json(const struct ns_swap_plan *p);
void fix_swap_plan_text(const struct ns_swap_plan *p, const struct fix_opts *o);
const char *fix_signal_name(int sig);
void fix_say_renamed(const struct fix_opts *o, const struct ns_swap_report *rep);
struct json_object *fix_renamed_json(const struct ns_swap_report *rep);
void fix_say_stdout_lost(const char *who, const char *how);
const char *fix_swap_journal_io(const struct ns_swap_run *run);

/* fix-modules.c: fix --modules */
int fix_modules(struct ns_root *root, struct ns_system *sys, const struct fix_opts *o);

/* fix-revert.c: fix --revert (the IRQs, the modules, irqbalance's drop-in) */
int fix_revert(struct ns_root *root, const struct fix_opts *o);

#endif
