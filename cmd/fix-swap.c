/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor fix: the module swap's plan and result as text and JSON, the renamed disks (cmd/fix.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "fix.h"
#include "state/swapjournal.h"

void fix_print_progress(void *data, const char *text, bool ok)
{
	const struct fix_opts *o = data;
	if (!o->json && (!o->quiet || !ok)) {
		printf("  %s%s%s %s\n", fix_col(o, ok ? "" : FIX_RED), ok ? "ok  " : "FAIL",
		       fix_col(o, ok ? "" : FIX_RESET), text);
		fflush(stdout);
	}
}

struct json_object *fix_swap_plan_json(const struct ns_swap_plan *p)
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

/* One line of the plan at the page's width, printf-like. */
static void line(const struct fix_page *fp, size_t ind1, size_t ind2, const char *c, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void line(const struct fix_page *fp, size_t ind1, size_t ind2, const char *c, const char *fmt, ...)
{
	char *t = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&t, fmt, ap) < 0)
		t = NULL;
	va_end(ap);
	fix_say(fp, ind1, ind2, c, t);
	free(t);
}

/*
 * The swap plan at the terminal's width: what it changes, its journal and the undo first; the
 * checks that passed counted (--verbose: each), every failed one on its own; the disks it
 * detaches, its steps, the functions it rescans.
 */
void fix_swap_plan_text(const struct ns_swap_plan *p, const struct fix_opts *o)
{
	struct fix_page fp;
	size_t passed = 0;

	fix_page_init(&fp, stdout, o);
	for (size_t i = 0; i < p->nchecks; i++)
		passed += p->checks[i].ok;
	line(&fp, 0, 4, NULL, "module swap%s: %s", p->to_stock ? " back to the stock modules" : "",
	     ns_swap_plan_safe(p) ? "every check passed" : "REFUSED");
	if (p->nsteps && !p->to_stock)
		line(&fp, 2, 6, NULL,
		     "changes: %zu module step%s, %zu disk%s detached meanwhile, %zu PCI function%s rescanned; "
		     "journal: the modules' state goes to /%s before the first change; undo: numastor fix --revert",
		     p->nsteps, p->nsteps == 1 ? "" : "s", p->ndisks, p->ndisks == 1 ? "" : "s", p->nrescan,
		     p->nrescan == 1 ? "" : "s", NS_SWAP_JOURNAL_PATH);
	if (passed && !o->verbose)
		line(&fp, 2, 6, NULL, "checks: %zu passed (--verbose: each)", passed);
	for (size_t i = 0; i < p->nchecks; i++)
		if (!p->checks[i].ok || o->verbose)
			line(&fp, 2, 6, p->checks[i].ok ? NULL : FIX_RED, "check %s %s%s%s",
			     p->checks[i].ok ? "ok  " : "FAIL", p->checks[i].what, p->checks[i].detail ? ": " : "",
			     p->checks[i].detail ? p->checks[i].detail : "");
	for (size_t i = 0; i < p->ndisks; i++)
		line(&fp, 2, 6, NULL, "detaches %s (%s)%s%s", p->disks[i].name, p->disks[i].pci ? p->disks[i].pci : "?",
		     p->disks[i].refusal ? ": must not, " : "", p->disks[i].refusal ? p->disks[i].refusal : "");
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct ns_swap_step *st = &p->steps[i];
		bool opts = st->options && st->options[0];
		line(&fp, 2, 6, NULL, "step %zu: %s %s%s%s%s%s", i + 1, st->remove ? "remove" : "load", st->module,
		     st->file ? " from /" : (st->remove ? "" : " (stock)"), st->file ? st->file : "",
		     opts ? " with " : (st->remove ? "" : " without options"), opts ? st->options : "");
		if (st->file && st->stock_options && strcmp(st->stock_options, st->options ? st->options : ""))
			line(&fp, 4, 8, NULL, "on --revert or a rollback: the stock %s with %s", st->module,
			     st->stock_options[0] ? st->stock_options : "no options");
		for (size_t k = 0; k < st->noption_notes; k++)
			line(&fp, 4, 8, NULL, "options: %s", st->option_notes[k]);
	}
	for (size_t i = 0; i < p->nrescan; i++)
		line(&fp, 2, 6, NULL,
		     "then: remove and rescan PCI function %s (its forced node survives a driver swap)", p->rescan[i]);
	for (size_t i = 0; i < p->nbusy; i++)
		line(&fp, 2, 6, NULL, "busy: %s", p->busy[i]);
}

const char *fix_signal_name(int sig)
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
void fix_say_stdout_lost(const char *who, const char *how)
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
void fix_say_renamed(const struct fix_opts *o, const struct ns_swap_report *rep)
{
	if (!rep->nrenamed || o->json)
		return;
	printf("DISK NAMES CHANGED:");
	for (size_t i = 0; i < rep->nrenamed; i++)
		printf("%s %s is now %s", i ? "," : "", rep->renamed[i].from, rep->renamed[i].to);
	printf(" (found by identity; fstab, scripts or monitoring that name a disk by its name now name another, or "
	       "none; /dev/disk/by-id names do not change)\n");
}

struct json_object *fix_renamed_json(const struct ns_swap_report *rep)
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

/* NS_SWAPRUN_EV_JOURNAL_IO: what could not be done with the swap journal, or NULL. */
const char *fix_swap_journal_io(const struct ns_swap_run *run)
{
	return run->io_remove ? "cannot remove" : "cannot write";
}
