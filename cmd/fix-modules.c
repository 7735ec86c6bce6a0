/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor fix --modules: the swap engine (lib/swap/modswap-run.h) run and its outcome said (cmd/fix.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fix.h"
#include "out/json.h"
#include "state/swapjournal.h"

struct modules_ctx {
	const struct fix_opts *o;
	const char *who; /* "--modules" or "--modules --install" */
};

static void modules_event(void *data, enum ns_swap_run_event ev, const struct ns_swap_run *run)
{
	const struct modules_ctx *c = data;

	/* JSON: the plan, then (when it ran) what happened, printed once at the end */
	if (ev == NS_SWAPRUN_EV_PLANNED && !c->o->json)
		fix_swap_plan_text(&run->plan, c->o);
	else if (ev == NS_SWAPRUN_EV_JOURNAL_IO)
		fprintf(stderr, "numastor fix %s: %s /%s: %s\n", c->who, fix_swap_journal_io(run), NS_SWAP_JOURNAL_PATH,
			strerror(-run->io_err));
}

static void modules_progress(void *data, const char *text, bool ok)
{
	const struct modules_ctx *c = data;
	fix_print_progress((void *)c->o, text, ok);
}

/* An applying run's outcome on stderr (or stdout when done); returns the exit code. */
static int say_outcome(const struct ns_system *sys, const struct fix_opts *o, const struct ns_swap_run *run)
{
	const struct ns_swap_report *rep = &run->rep;
	int r = run->err;

	switch (run->outcome) {
	case NS_SWAPRUN_REFUSED_CHECK:
		fprintf(stderr, "numastor fix --modules: refused: a check failed (see above); nothing was changed\n");
		return NS_EXIT_UNKNOWN;
	case NS_SWAPRUN_JOURNAL_MALFORMED:
		fprintf(stderr, "numastor fix --modules: /%s is malformed (%s): nothing was changed\n",
			NS_SWAP_JOURNAL_PATH, strerror(-r));
		return NS_EXIT_UNKNOWN;
	case NS_SWAPRUN_REFUSED_PENDING:
		fprintf(stderr,
			"numastor fix --modules: refused: /%s holds a module swap not yet reverted; run "
			"`numastor fix --revert` first; nothing was changed\n",
			NS_SWAP_JOURNAL_PATH);
		return NS_EXIT_UNKNOWN;
	case NS_SWAPRUN_INSTALL_OTHER:
		fprintf(stderr,
			"numastor fix --modules --install: refused: /%s journals an install for kernel %s; "
			"run `numastor fix --revert` first; nothing was changed\n",
			NS_SWAP_JOURNAL_PATH, run->j.kernel_release);
		return NS_EXIT_UNKNOWN;
	case NS_SWAPRUN_INSTALL_UNDONE:
		fprintf(stderr,
			"numastor fix --modules --install: failed (%s); undone: the modules, depmod's "
			"indexes and /boot's initramfs are as they were\n",
			strerror(-r));
		return NS_EXIT_WARNING;
	case NS_SWAPRUN_INSTALL_LEFT:
		fprintf(stderr,
			"numastor fix --modules --install: failed (%s); what is left is journaled in /%s: "
			"`numastor fix --revert` removes it\n",
			strerror(-r), NS_SWAP_JOURNAL_PATH);
		return NS_EXIT_WARNING;
	case NS_SWAPRUN_INSTALLED:
		if (!o->quiet && !o->json)
			printf("installed for the next boot under /lib/modules/%s/updates/numastor (depmod run%s); "
			       "journaled in /%s; `numastor fix --revert` removes them\n",
			       sys->machine.kernel_release, run->j.initramfs_updated ? ", initramfs rewritten" : "",
			       NS_SWAP_JOURNAL_PATH);
		return NS_EXIT_OK;
	case NS_SWAPRUN_REFUSED_BUSY:
		fprintf(stderr, "numastor fix --modules: refused: the swap would detach a disk in use (see above); "
				"nothing was changed. `numastor fix --modules --install` installs the modules for the "
				"next boot instead\n");
		return NS_EXIT_UNKNOWN;
	case NS_SWAPRUN_JOURNAL_FAILED:
		fprintf(stderr, "numastor fix --modules: nothing was changed: cannot journal the swap: %s\n",
			strerror(-r));
		return NS_EXIT_UNKNOWN;
	default:
		break;
	}
	/* NS_SWAPRUN_EXECUTED */
	int code = NS_EXIT_OK;
	if (r < 0 && rep->stopped) {
		code = NS_EXIT_WARNING;
		fprintf(stderr, "numastor fix --modules: interrupted by %s: %s\n", fix_signal_name(rep->stopped),
			rep->untouched	   ? "stopped before the first change; nothing was changed"
			: rep->rollback_ok ? "rolled back"
					   : "the rollback did not restore everything (see above): `numastor fix "
					     "--revert` tries again");
	} else if (r < 0 && rep->untouched) {
		/* a disk came into use after the plan: the recheck stopped before the first removal */
		const char *why = NULL;
		for (size_t i = 0; i < rep->n && !why; i++)
			why = rep->v[i].ok ? NULL : rep->v[i].text;
		fprintf(stderr, "numastor fix --modules: refused: %s; nothing was changed\n", why ? why : strerror(-r));
		code = NS_EXIT_UNKNOWN;
	} else if (r < 0) {
		fprintf(stderr, "numastor fix --modules: the swap failed (%s)%s\n", strerror(-r),
			rep->rolled_back ? (rep->rollback_ok ? "; rolled back to the stock modules"
							     : "; the rollback did not restore everything (see "
							       "above): `numastor fix --revert` tries again")
					 : "");
		code = NS_EXIT_WARNING;
	} else if (!o->quiet && !o->json) {
		printf("module swap done; journaled in /%s; `numastor fix --revert` returns to the stock modules\n",
		       NS_SWAP_JOURNAL_PATH);
	}
	if (run->late && !rep->stopped)
		fprintf(stderr,
			"numastor fix --modules: %s arrived while the machine was being made consistent: "
			"answered once it was (%s)\n",
			fix_signal_name(run->late), r == 0 ? "the swap is complete and kept" : "see above");
	fix_say_renamed(o, rep);
	fix_say_stdout_lost("--modules", r == 0		  ? "completed: the patched modules run"
					 : rep->untouched ? "changed nothing"
					 : rep->rolled_back && rep->rollback_ok
						 ? "was rolled back"
						 : "failed and was not fully rolled back");
	return code;
}

static void print_doc(const struct fix_opts *o, struct ns_root *root, const struct ns_swap_run *run, int code)
{
	struct json_object *doc = ns_json_envelope(root, FIX_SCHEMA_VERSION), *res = NULL;
	const struct ns_swap_report *rep = &run->rep;

	json_object_object_add(doc, "dry_run", json_object_new_boolean(o->dry_run));
	json_object_object_add(doc, "modules", fix_swap_plan_json(&run->plan));
	if (run->ran) {
		struct json_object *ev = json_object_new_array();
		res = json_object_new_object();
		json_object_object_add(res, "exit_code", json_object_new_int(code));
		json_object_object_add(res, "swapped", json_object_new_boolean(rep->ok));
		json_object_object_add(res, "rolled_back", json_object_new_boolean(rep->rolled_back));
		json_object_object_add(res, "interrupted_by",
				       rep->stopped ? json_object_new_string(fix_signal_name(rep->stopped)) : NULL);
		json_object_object_add(res, "timeout_s", json_object_new_int((int)run->wait_s));
		json_object_object_add(res, "renamed", fix_renamed_json(rep));
		for (size_t i = 0; i < rep->n; i++) {
			struct json_object *e = json_object_new_object();
			json_object_object_add(e, "step", json_object_new_string(rep->v[i].text));
			json_object_object_add(e, "ok", json_object_new_boolean(rep->v[i].ok));
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

int fix_modules(struct ns_root *root, struct ns_system *sys, const struct fix_opts *o)
{
	struct modules_ctx ctx = {.o = o, .who = o->install ? "--modules --install" : "--modules"};
	struct ns_swap_run_opts so = {.module_dir = o->module_dir,
				      .install = o->install,
				      .dry_run = o->dry_run,
				      .timeout_s = o->timeout_s,
				      .progress = modules_progress,
				      .event = modules_event,
				      .data = &ctx};
	struct ns_swap_run run;
	const char *dir = o->module_dir ? o->module_dir : "/" NS_MODULE_DIR "/",
		   *rel = o->module_dir ? "" : (sys->machine.kernel_release ? sys->machine.kernel_release : "?");
	int code = NS_EXIT_OK;

	ns_swap_run(root, sys, &so, &run);
	switch (run.outcome) {
	case NS_SWAPRUN_NO_MANIFEST:
		code = fix_fail(o, "fix --modules", NS_EXIT_UNKNOWN,
				"nothing to swap: no manifest.json in %s%s, or nothing in it "
				"applies to this machine (build the modules with " NUMASTOR_BUILD_MODULES ")",
				dir, rel);
		goto free;
	case NS_SWAPRUN_BAD_MANIFEST:
		code = fix_fail(
			o, "fix --modules", NS_EXIT_UNKNOWN,
			"nothing was changed: the manifest.json in %s%s is not one numastor's module build "
			"wrote (a key it does not write, a key twice, a module without name, file or "
			"sha256, or not JSON): left as it is; build the modules again with " NUMASTOR_BUILD_MODULES,
			dir, rel);
		goto free;
	case NS_SWAPRUN_PLAN_FAILED:
		code = fix_fail(o, "fix --modules", NS_EXIT_UNKNOWN, "%s", strerror(-run.err));
		goto free;
	case NS_SWAPRUN_INSTALL_CHECK:
		code = fix_fail(o, "fix --modules --install", NS_EXIT_UNKNOWN, "%s", strerror(-run.err));
		goto free;
	case NS_SWAPRUN_NOTHING_TO_INSTALL:
		if (!o->json && !o->quiet)
			printf("nothing to install: every fix in %s%s/manifest.json is in the running kernel; "
			       "nothing was changed\n",
			       dir, rel);
		break;
	case NS_SWAPRUN_NOTHING_TO_SWAP:
		if (!o->json && !o->quiet)
			printf("nothing to swap: every fix in %s%s/manifest.json is in the running kernel, and the "
			       "modules it names run stock; nothing was changed\n",
			       dir, rel);
		break;
	case NS_SWAPRUN_PLANNED:
		/* --install detaches nothing: only its checks decide */
		code = (o->install ? run.plan.failed_checks == 0 : ns_swap_plan_safe(&run.plan)) ? NS_EXIT_OK
												 : NS_EXIT_WARNING;
		break;
	default:
		code = say_outcome(sys, o, &run);
		break;
	}
	if (o->json)
		print_doc(o, root, &run, code);
free:
	ns_swap_run_free(&run);
	return code;
}
