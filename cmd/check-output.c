/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor check: the report written in its format, to standard output or atomically to -O's
 * file, and the failed verdict that replaces the last one there when a run fails. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check-output.h"
#include "config.h"
#include "map.h"
#include "out/json.h"
#include "out/outfile.h"
#include "out/snapshot.h"
#include "base/testhook.h"

/* The budget of the JSON report; test builds may lower it (NUMASTOR_TEST_JSON_MAX). */
static size_t json_budget(void)
{
	const char *hook = ns_test_hook("NUMASTOR_TEST_JSON_MAX");
	return hook ? (size_t)strtoull(hook, NULL, 10) : NS_SNAPSHOT_MAX_JSON;
}

/*
 * Where a refused document can be taken back: a regular file (-O's temporary file, or standard
 * output redirected to one: cut back to where the document began) or /dev/null (nothing is
 * kept). A pipe, terminal or socket cannot: what went out stays out. *start is the offset to
 * cut back to.
 */
static bool takes_back(FILE *out, off_t *start)
{
	struct stat st;
	int fd = fileno(out);

	if (fd < 0 || fstat(fd, &st) < 0)
		return false;
	if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) {
		*start = -1;
		return true;
	}
	if (!S_ISREG(st.st_mode) || fflush(out) != 0 || (*start = ftello(out)) < 0)
		return false;
	return true;
}

/*
 * The JSON document, streamed by lib/out/jsonw (no object tree: memory stays flat on machines
 * with hundreds of disks and thousands of vectors). Beyond its budget (NS_SNAPSHOT_MAX_JSON,
 * numastor-snapshot(8)) nothing is written (-EFBIG): into a file, in one pass that writes and
 * counts, cut back when refused; into a pipe or terminal, a counting pass that keeps nothing
 * first, then the pass that writes (one pass into a buffer would hold the whole document, 8 MiB
 * at 64 disks, in memory).
 */
static int ns_print_json_stream(FILE *out, const struct ns_system *sys, const struct ns_findings *findings)
{
	struct ns_jsonw w;
	off_t start;
	int r;

	if (takes_back(out, &start)) {
		r = ns_json_write_check_file(out, json_budget(), sys, findings, NUMASTOR_VERSION, true);
		if (r == -EFBIG && start >= 0 &&
		    (fflush(out) != 0 || ftruncate(fileno(out), start) < 0 || fseeko(out, start, SEEK_SET) < 0))
			r = -errno;
		return r;
	}
	ns_jsonw_init_count(&w, json_budget());
	r = ns_json_write_check(&w, sys, findings, NUMASTOR_VERSION, true);
	ns_jsonw_free(&w);
	return r ? r : ns_json_write_check_file(out, SIZE_MAX, sys, findings, NUMASTOR_VERSION, true);
}

void write_failed_verdict(const struct verdict_file *vf)
{
	const char *reason = ns_cli_last_error();
	struct ns_outfile of = {.fd = -1};
	char *why = NULL;
	FILE *out;
	int r = ns_outfile_open(vf->path, &of, &why);

	if (r == 0 && !(out = fdopen(of.fd, "w"))) {
		r = -errno;
		ns_outfile_abort(&of);
	}
	if (r == 0) {
		if (vf->prom) {
			ns_print_prometheus_failed(out, reason);
		} else if (vf->json) {
			struct json_object *doc =
				ns_json_error(NULL, "check", reason ? reason : "failed", NS_EXIT_UNKNOWN);
			fprintf(out, "%s\n",
				doc ? json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
										  JSON_C_TO_STRING_SPACED |
										  JSON_C_TO_STRING_NOSLASHESCAPE)
				    : "{}");
			json_object_put(doc);
		} else {
			fprintf(out, "summary: UNKNOWN (exit 3): numastor check failed: %s\n", reason ? reason : "?");
		}
		r = fflush(out) != 0 || ferror(out) ? -EIO : 0;
		of.fd = dup(fileno(out));
		fclose(out);
		if (r < 0 || of.fd < 0) {
			ns_outfile_abort(&of);
			r = r < 0 ? r : -EIO;
		} else {
			r = ns_outfile_commit(&of);
		}
	}
	if (r < 0)
		fprintf(stderr, "numastor check: the failure could not be written to %s either: %s\n", vf->path,
			why ? why : strerror(-r));
	free(why);
}

int check_write(struct ns_cli *cli, const struct check_args *a, const struct ns_system *sys,
		const struct ns_findings *findings, struct verdict_file *vf)
{
	struct ns_outfile of = {.fd = -1};
	char *why = NULL;
	FILE *out = stdout;
	bool json = a->json, prom = a->prom, svg = a->svg;
	struct ns_text_opts topts = a->topts;
	struct ns_list_opts lopts = a->lopts;
	int r, code, verdict;

	/* the verdict, unless writing it fails: from here code says only whether that failed (an
	 * unjudged device's verdict is 3 too, and is written) */
	verdict = ns_findings_exit_code(findings);
	code = 0;
	if (a->output_file) {
		/* beside the target, so the rename is atomic: the textfile collector never sees half a file */
		r = ns_outfile_open(a->output_file, &of, &why);
		if (r == 0 && !(out = fdopen(of.fd, "w"))) {
			r = -errno;
			ns_outfile_abort(&of);
		}
		if (r < 0) {
			code = why ? ns_cli_fail(cli, NS_EXIT_UNKNOWN, "not writing %s: %s", a->output_file, why)
				   : ns_cli_fail(cli, NS_EXIT_UNKNOWN, "cannot create a file beside %s: %s",
						 a->output_file, strerror(-r));
			out = stdout;
			goto out;
		}
	}
	if (a->list) {
		if (ns_print_list(out, sys, findings, &lopts) < 0)
			code = ns_cli_fail(cli, NS_EXIT_UNKNOWN, "out of memory");
	} else if (json) {
		r = ns_print_json_stream(out, sys, findings);
		if (r == -EFBIG) {
			code = ns_cli_fail(cli, NS_EXIT_UNKNOWN,
					   "the JSON report would be more than %zu bytes, its budget "
					   "(numastor-snapshot(8), BUDGETS); nothing was written",
					   json_budget());
		} else if (r < 0) {
			code = ns_cli_fail(cli, NS_EXIT_UNKNOWN, "out of memory");
		}
	} else if (prom) {
		if ((r = ns_print_prometheus(out, sys, findings)) < 0)
			code = ns_cli_fail(cli, NS_EXIT_UNKNOWN, "writing the metrics: %s", strerror(-r));
	} else if (svg) {
		if (ns_print_svg(out, sys, findings) < 0)
			code = ns_cli_fail(cli, NS_EXIT_UNKNOWN, "out of memory");
	} else if (a->map) {
		ns_print_map(out, sys, findings, ns_text_width(out));
	} else {
		ns_print_text(out, sys, findings, &topts);
	}
	if (fflush(out) != 0 || ferror(out)) {
		code = ns_cli_fail(cli, NS_EXIT_UNKNOWN, "writing the report%s%s: %s", a->output_file ? " to " : "",
				   a->output_file ? a->output_file : "", strerror(errno));
	}
	if (a->output_file) {
		/* the descriptor goes with the stream: the outfile only syncs (through fsync on a
		 * duplicate) and renames */
		int fd = dup(fileno(out));
		if (fclose(out) != 0 && code != NS_EXIT_UNKNOWN)
			code = ns_cli_fail(cli, NS_EXIT_UNKNOWN, "writing %s: %s", a->output_file, strerror(errno));
		out = stdout;
		of.fd = fd;
		if (fd < 0 && code != NS_EXIT_UNKNOWN)
			code = ns_cli_fail(cli, NS_EXIT_UNKNOWN, "writing %s: %s", a->output_file, strerror(errno));
		if (code == NS_EXIT_UNKNOWN) {
			ns_outfile_abort(&of);
		} else if ((r = ns_outfile_commit(&of)) == 0) {
			vf->written = true;
		} else {
			code = ns_cli_fail(
				cli, NS_EXIT_UNKNOWN, "cannot put the report in place as %s: %s", a->output_file,
				r == -EEXIST ? "something not a regular file took its name meanwhile" : strerror(-r));
		}
	}
	if (code == 0)
		code = verdict;
out:
	free(why);
	return code;
}
