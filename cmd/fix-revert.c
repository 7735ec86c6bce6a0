/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor fix --revert: the IRQs, the modules and irqbalance's drop-in put back, said (cmd/fix.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act/ibpolicy.h"
#include "base/escape.h"
#include "base/util.h"
#include "fix.h"
#include "out/json.h"
#include "state/journal.h"
#include "state/swapjournal.h"

/* An IRQ entry that went back (or already was): grouped with the others of its function. */
static bool groupable(const struct ns_revert_item *it)
{
	return it->pci && it->irq >= 0 && (it->status == NS_REVERT_RESTORED || it->status == NS_REVERT_UNCHANGED);
}

/*
 * What the revert did, at the terminal's width: the IRQs restored (or already at their value)
 * grouped by PCI function as IRQ ranges (--verbose: each on its line), and every other entry
 * (rq_affinity, a failure, one left alone) on its own with why.
 */
static void revert_items_text(const struct ns_revert_report *rep, const struct fix_opts *o)
{
	struct fix_page fp;
	bool *done = calloc(rep->n ? rep->n : 1, sizeof(bool));
	int *irqs = calloc(rep->n ? rep->n : 1, sizeof(int));

	fix_page_init(&fp, stdout, o);
	if (!o->quiet && rep->n) {
		char *t = ns_fmt("numastor fix --revert: the %zu value%s /%s holds, put back", rep->n,
				 rep->n == 1 ? "" : "s", NS_JOURNAL_PATH);
		fix_say(&fp, 0, 4, NULL, t);
		free(t);
	}
	for (size_t i = 0; done && irqs && i < rep->n; i++) {
		const struct ns_revert_item *it = &rep->v[i];
		const char *what = it->what ? it->what : "?";
		char *t = NULL;
		if (done[i] || (o->quiet && it->ok))
			continue;
		if (groupable(it) && !o->verbose) {
			size_t n = 0;
			bool same = true;
			for (size_t j = i; j < rep->n; j++) {
				const struct ns_revert_item *x = &rep->v[j];
				if (done[j] || !groupable(x) || x->status != it->status || strcmp(x->pci, it->pci) != 0)
					continue;
				irqs[n++] = x->irq;
				same &= x->value && it->value && strcmp(x->value, it->value) == 0;
				done[j] = true;
			}
			char *r = fix_ranges(irqs, n), *pci = ns_escape_text(it->pci);
			t = ns_fmt("irq %s (%zu vector%s of %s): %s%s%s", r ? r : "?", n, n == 1 ? "" : "s",
				   pci ? pci : "?", it->status == NS_REVERT_RESTORED ? "restored" : "already at",
				   same				      ? " "
				   : it->status == NS_REVERT_RESTORED ? ", each to its previous value"
								      : " their previous values",
				   same ? it->value : "");
			free(r);
			free(pci);
		} else {
			switch (it->status) {
			case NS_REVERT_RESTORED:
				t = ns_fmt("%s: restored %s", what, it->value);
				break;
			case NS_REVERT_UNCHANGED:
				t = ns_fmt("%s: already at its previous value %s", what, it->value);
				break;
			case NS_REVERT_FAILED:
				t = ns_fmt("%s: NOT restored: %s", what, it->problem ? it->problem : "?");
				break;
			case NS_REVERT_OTHER_BOOT:
				t = ns_fmt("%s: from another boot, not touched (was %s before numastor)", what,
					   it->value);
				break;
			default:
				t = ns_fmt("%s: stale, not touched: %s", what, it->problem ? it->problem : "?");
				break;
			}
		}
		fix_say(&fp, 2, 6, it->status == NS_REVERT_FAILED ? FIX_RED : NULL, t);
		free(t);
	}
	free(done);
	free(irqs);
}

/* The IRQ and rq_affinity revert. With --json the document is left in *docp (the module
 * revert adds to it, then cmd_fix prints it once). */
static int do_revert(struct ns_root *root, const struct fix_opts *o, struct json_object **docp)
{
	struct ns_fix_revert rv;
	struct ns_revert_report rep;
	size_t restored = 0, unchanged = 0;
	int r = ns_fix_revert_irqs(root, &rv);

	if (rv.malformed) {
		fix_journal_malformed(o, "fix --revert", rv.why);
		ns_fix_revert_free(&rv);
		return NS_EXIT_UNKNOWN;
	}
	free(rv.why);
	rep = rv.rep;

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
		revert_items_text(&rep, o);
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

/* Progress of the way back: printed, or (with --json) kept as events. */
struct revert_sink {
	const struct fix_opts *o;
	struct json_object *events; /* NULL: print */
	struct json_object *plan_doc;
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
		fix_print_progress((void *)k->o, text, ok);
	}
}

static void revert_event(void *data, enum ns_swap_run_event ev, const struct ns_swap_run *run)
{
	struct revert_sink *k = data;
	const struct fix_opts *o = k->o;

	switch (ev) {
	case NS_SWAPRUN_EV_EARLIER_BOOT:
		if (!o->json)
			printf("  the module swap journaled in /%s was made in an earlier boot (%s): it ended with "
			       "that "
			       "boot, so nothing of it is swapped back%s\n",
			       NS_SWAP_JOURNAL_PATH, run->j.boot_id,
			       run->j.ninstalled ? "; the files installed for the next boot are removed" : "");
		break;
	case NS_SWAPRUN_EV_BACK_PLAN_FAILED:
		fprintf(stderr, "numastor fix --revert: planning the swap back: %s\n", strerror(-run->err));
		break;
	case NS_SWAPRUN_EV_PLANNED:
		if (!o->quiet && !o->json)
			fix_swap_plan_text(&run->plan, o);
		if (k->events)
			k->plan_doc = fix_swap_plan_json(&run->plan);
		break;
	case NS_SWAPRUN_EV_BACK_REFUSED:
		fprintf(stderr,
			"numastor fix --revert: refused: a disk the swap back would detach is in use "
			"(see above); the numastor modules stay loaded and /%s is kept\n",
			NS_SWAP_JOURNAL_PATH);
		break;
	case NS_SWAPRUN_EV_BACK_DONE:
		if (run->late)
			fprintf(stderr,
				"numastor fix --revert: %s arrived during the swap back: answered "
				"once it was done\n",
				fix_signal_name(run->late));
		fix_say_renamed(o, &run->rep);
		if (run->err < 0)
			fprintf(stderr,
				"numastor fix --revert: swapping back did not restore everything (%s; "
				"the FAIL lines above say what); /%s is kept for another --revert\n",
				strerror(-run->err), NS_SWAP_JOURNAL_PATH);
		break;
	case NS_SWAPRUN_EV_UNINSTALLED:
		if (run->err < 0)
			fprintf(stderr, "numastor fix --revert: removing the modules installed for the next boot: %s\n",
				strerror(-run->err));
		else if (!o->quiet && !o->json)
			printf("  removed the modules installed for the next boot; the stock modules load at the next "
			       "boot\n");
		break;
	case NS_SWAPRUN_EV_JOURNAL_IO:
		fprintf(stderr, "numastor fix --revert: %s /%s: %s\n", fix_swap_journal_io(run), NS_SWAP_JOURNAL_PATH,
			strerror(-run->io_err));
		break;
	}
}

/*
 * After the IRQ revert: the machine the swap journal describes (the stock modules, with their
 * options, every removed function rescanned, every disk back by identity), and no file
 * installed for the next boot.
 */
static int revert_modules(struct ns_root *root, const struct fix_opts *o, struct json_object *doc)
{
	struct revert_sink sink = {.o = o, .events = doc ? json_object_new_array() : NULL};
	struct ns_swap_run_opts so = {
		.timeout_s = o->timeout_s, .progress = revert_progress, .event = revert_event, .data = &sink};
	struct ns_swap_run run;
	int r = ns_swap_revert_run(root, &so, &run), code = NS_EXIT_OK;

	if (run.none) {
		json_object_put(sink.events);
		if (doc)
			json_object_object_add(doc, "modules", NULL);
		ns_swap_run_free(&run);
		return NS_EXIT_OK;
	}
	if (doc) /* a swap journal: something to revert, or to say why not */
		json_object_object_add(doc, "nothing_to_revert", json_object_new_boolean(false));
	if (run.outcome == NS_SWAPRUN_JOURNAL_MALFORMED || run.outcome == NS_SWAPRUN_DISCOVER_FAILED) {
		if (run.outcome == NS_SWAPRUN_JOURNAL_MALFORMED)
			fprintf(stderr, "numastor fix --revert: /%s is malformed (%s); the modules were not touched\n",
				NS_SWAP_JOURNAL_PATH, strerror(-run.err));
		else
			fprintf(stderr, "numastor fix --revert: %s\n", strerror(-run.err));
		json_object_put(sink.events);
		if (doc)
			json_object_object_add(doc, "modules", NULL);
		ns_swap_run_free(&run);
		return NS_EXIT_UNKNOWN;
	}
	if (r < 0)
		code = NS_EXIT_WARNING;
	if (doc) {
		struct json_object *mj = json_object_new_object();
		json_object_object_add(mj, "journal", json_object_new_string("/" NS_SWAP_JOURNAL_PATH));
		json_object_object_add(mj, "earlier_boot", json_object_new_boolean(run.earlier_boot));
		json_object_object_add(mj, "plan", sink.plan_doc);
		json_object_object_add(mj, "events", sink.events);
		json_object_object_add(mj, "restored", json_object_new_boolean(code == NS_EXIT_OK));
		json_object_object_add(mj, "journal_kept", json_object_new_boolean(run.journal_kept));
		json_object_object_add(doc, "modules", mj);
	}
	ns_swap_run_free(&run);
	return code;
}

/* After the IRQs and the modules: numastor's drop-in for irqbalance out again, when fix put it
 * there (its journal in var/lib/numastor says so), and irqbalance restarted without it. */
static int revert_irqbalance_policy(struct ns_root *root, const struct fix_opts *o, struct json_object *doc)
{
	struct ns_fix_ib_revert ib;
	int code = NS_EXIT_OK;

	ns_fix_revert_ibpolicy(root, &ib);
	if (ib.none) {
		if (doc)
			json_object_object_add(doc, "irqbalance_policy", NULL);
		ns_fix_ib_revert_free(&ib);
		return NS_EXIT_OK;
	}
	if (ib.err < 0 || ib.problem) {
		fprintf(stderr, "numastor fix --revert: irqbalance's drop-in: %s\n",
			ib.problem ? ib.problem : strerror(-ib.err));
		code = NS_EXIT_WARNING;
	}
	if (ib.removed) {
		if (ib.reload_err < 0) {
			fprintf(stderr, "numastor fix --revert: /%s removed, but %s\n", NS_IBPOLICY_LINK,
				ib.said ? ib.said : strerror(-ib.reload_err));
			code = NS_EXIT_WARNING;
		}
		if (!o->json && !o->quiet)
			printf("  irqbalance: removed /%s (numastor's policy script)%s%s\n", NS_IBPOLICY_LINK,
			       ib.said ? "; " : "", ib.said ? ib.said : "");
	}
	if (doc) {
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "link", json_object_new_string("/" NS_IBPOLICY_LINK));
		json_object_object_add(x, "removed", json_object_new_boolean(ib.removed));
		json_object_object_add(x, "problem", jstr_or_null(ib.problem));
		json_object_object_add(x, "reload", jstr_or_null(ib.said));
		json_object_object_add(doc, "irqbalance_policy", x);
	}
	ns_fix_ib_revert_free(&ib);
	return code;
}

int fix_revert(struct ns_root *root, const struct fix_opts *o)
{
	struct json_object *doc = NULL;
	int code = do_revert(root, o, &doc), mc;

	/* the swap journal is its own: undone even when the IRQ journal could not be read */
	mc = revert_modules(root, o, doc);
	if (mc > code)
		code = mc;
	mc = revert_irqbalance_policy(root, o, doc);
	if (mc > code)
		code = mc;
	if (doc) {
		ns_json_sanitize(doc); /* what the machine said, valid UTF-8 (lib/base/escape.h) */
		puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(doc);
	}
	return code;
}
