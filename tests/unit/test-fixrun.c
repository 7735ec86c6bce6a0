/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fix's engines called directly on fixture trees (tests/fixtures/gen-fixtures.py), their
 * writes going into the tree: a planned IRQ fix's decisions on a dry run (nothing written), a
 * measurement that fails before the change stops it, the placement and its revert (the values
 * come back, the journal goes), a journal of another boot refused (nothing restored, the file
 * kept), a malformed journal refused by fix and by --revert; the module swap's refusal path (a
 * manifest that fails a check changes nothing); and the signal guard a swap runs under.
 *
 *   test-fixrun PYTHON GEN-FIXTURES.PY
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "act/fixrun.h"
#include "read/root.h"
#include "state/journal.h"
#include "state/swapjournal.h"
#include "swap/modswap-run.h"
#include "tap.h"

static char tmp[64];

/* The text of the file rel under tree (the first line, no newline), or "" when unreadable. */
static const char *file(const char *tree, const char *rel)
{
	static char buf[4096];
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	buf[0] = '\0';
	f = fopen(p, "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static bool exists(const char *tree, const char *rel)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	return lstat(p, &st) == 0;
}

static void put(const char *tree, const char *rel, const char *text)
{
	char p[4096];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static __attribute__((format(printf, 1, 2))) int sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int r;
	va_start(ap, fmt);
	r = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (r < 0)
		abort();
	r = system(cmd);
	free(cmd);
	return r;
}

struct calls {
	int before, after, before_ret;
};

static int before(void *data, const struct ns_system *sys, const struct ns_plan *plan)
{
	struct calls *c = data;
	(void)sys, (void)plan;
	c->before++;
	return c->before_ret;
}

static int after(void *data, const struct ns_system *sys, const struct ns_plan *plan)
{
	struct calls *c = data;
	(void)sys, (void)plan;
	c->after++;
	return 0;
}

/* One run of the IRQ engine on tree; res to be freed by the caller. */
static int run_fix(const char *tree, bool dry_run, struct calls *c, struct ns_fix_result *res)
{
	struct ns_root *root;
	struct ns_system sys;
	struct ns_fix_opts o = {.dry_run = dry_run,
				.retries = 1,
				.before_change = c ? before : NULL,
				.after_change = c ? after : NULL,
				.data = c};
	int r;

	if (ns_root_open(tree, &root) < 0)
		return -999;
	r = ns_system_discover(root, NULL, 0, &sys);
	if (r == 0)
		r = ns_fix_irqs(root, &sys, &o, res);
	ns_system_free(&sys);
	ns_root_free(root);
	return r;
}

static const struct ns_plan_irq *plan_irq(const struct ns_plan *p, int irq)
{
	for (size_t i = 0; i < p->nirqs; i++)
		if (p->irqs[i].irq == irq)
			return &p->irqs[i];
	return NULL;
}

static int revert(const char *tree, struct ns_fix_revert *rv)
{
	struct ns_root *root;
	int r;
	if (ns_root_open(tree, &root) < 0)
		return -999;
	r = ns_fix_revert_irqs(root, rv);
	ns_root_free(root);
	return r;
}

static void test_irqs(const char *base)
{
	const char *aff = "proc/irq/57/smp_affinity_list", *jpath = NS_JOURNAL_PATH;
	struct ns_fix_result res;
	struct ns_fix_revert rv;
	struct calls c = {0};
	char tree[4096];
	int r;

	snprintf(tree, sizeof(tree), "%s/irqs", tmp);
	sh("cp -a '%s' '%s' && mkdir -p '%s/proc/sys/kernel/random'", base, tree, tree);
	put(tree, "proc/sys/kernel/random/boot_id", "aaaa\n");
	CHECK_STR(file(tree, aff), "0");

	/* dry run: the decisions (irq 57, the unpaired vector of a disk with no node of its own:
	 * all of node 0's CPUs; an hctx vector: the CPUs its queue serves), nothing written */
	r = run_fix(tree, true, &c, &res);
	CHECK(r == 0);
	CHECK(res.failed == NS_FIX_DONE);
	CHECK(ns_plan_count(&res.plan, NS_PLAN_MOVE) > 0);
	const struct ns_plan_irq *e = plan_irq(&res.plan, 57), *q = plan_irq(&res.plan, 58);
	CHECK(e && e->action == NS_PLAN_MOVE);
	char *t = NULL;
	CHECK(e && ns_cpuset_format(&e->target, &t) == 0 && t && strcmp(t, "0-31") == 0);
	free(t), t = NULL;
	CHECK(q && q->action == NS_PLAN_MOVE && q->hw_queue == 0);
	CHECK(q && ns_cpuset_format(&q->target, &t) == 0 && t && strcmp(t, "0-3") == 0);
	free(t);
	CHECK(res.ir == NULL && res.rr == NULL);
	CHECK(c.before == 0 && c.after == 0);
	ns_fix_result_free(&res);
	CHECK_STR(file(tree, aff), "0");
	CHECK(!exists(tree, jpath));

	/* a measurement before the change that fails: nothing is written, no journal */
	c = (struct calls){.before_ret = -EIO};
	r = run_fix(tree, false, &c, &res);
	CHECK(r == -EIO && res.failed == NS_FIX_BEFORE);
	CHECK(c.before == 1 && c.after == 0);
	ns_fix_result_free(&res);
	CHECK_STR(file(tree, aff), "0");
	CHECK(!exists(tree, jpath));

	/* applied: the value placed, journaled; the callbacks around the change once each */
	c = (struct calls){0};
	r = run_fix(tree, false, &c, &res);
	CHECK(r == 0 && res.failed == NS_FIX_DONE && !res.write_failed);
	CHECK(c.before == 1 && c.after == 1);
	CHECK(res.ir && res.ir[0].status != NS_APPLY_FAILED);
	ns_fix_result_free(&res);
	CHECK_STR(file(tree, aff), "0-31");
	CHECK_STR(file(tree, "proc/irq/58/smp_affinity_list"), "0-3");
	CHECK(exists(tree, jpath));

	/* a journal of another boot: nothing restored, the file kept */
	put(tree, "proc/sys/kernel/random/boot_id", "bbbb\n");
	r = revert(tree, &rv);
	CHECK(!rv.malformed && rv.rep.other_boot);
	CHECK(rv.rep.n > 0 && rv.rep.v[0].status == NS_REVERT_OTHER_BOOT);
	ns_fix_revert_free(&rv);
	CHECK_STR(file(tree, aff), "0-31");
	CHECK(exists(tree, jpath));

	/* this boot's: every value back, the journal gone */
	put(tree, "proc/sys/kernel/random/boot_id", "aaaa\n");
	r = revert(tree, &rv);
	CHECK(r == 0 && !rv.malformed && !rv.rep.other_boot && rv.rep.failed == 0 && rv.rep.left_alone == 0);
	size_t restored = 0;
	for (size_t i = 0; i < rv.rep.n; i++)
		restored += rv.rep.v[i].status == NS_REVERT_RESTORED;
	CHECK(restored > 0 && restored == rv.rep.n);
	ns_fix_revert_free(&rv);
	CHECK_STR(file(tree, aff), "0");
	CHECK_STR(file(tree, "proc/irq/58/smp_affinity_list"), "1");
	CHECK(!exists(tree, jpath));

	/* a malformed journal: refused by --revert and by fix, kept byte for byte, nothing written */
	put(tree, jpath, "{\"version\": 2, \"irqs\": \"a string\"}");
	r = revert(tree, &rv);
	CHECK(r == -EINVAL && rv.malformed && rv.why);
	ns_fix_revert_free(&rv);
	c = (struct calls){0};
	r = run_fix(tree, false, &c, &res);
	CHECK(r == -EINVAL && res.failed == NS_FIX_JOURNAL_MALFORMED && c.before == 0);
	ns_fix_result_free(&res);
	CHECK_STR(file(tree, jpath), "{\"version\": 2, \"irqs\": \"a string\"}");
	CHECK_STR(file(tree, aff), "0");
}

static void test_swap_refused(const char *base)
{
	char tree[4096], *manifest = NULL;
	struct ns_root *root;
	struct ns_system sys;
	struct ns_swap_run run;
	struct ns_swap_run_opts o = {.module_dir = "/var/lib/numastor/modules/t"};
	const char *rel;
	int r;

	snprintf(tree, sizeof(tree), "%s/swap", tmp);
	sh("cp -a '%s' '%s' && mkdir -p '%s/var/lib/numastor/modules/t'", base, tree, tree);
	rel = file(tree, "proc/sys/kernel/osrelease");
	/* a module file that is no module, and a sha256 that is not its own */
	if (asprintf(&manifest,
		     "{\"kernel_release\": \"%s\", \"built\": \"2026-11-30T10:00:00Z\", \"modules\": [{\"name\": "
		     "\"scsi_mod\", \"file\": \"scsi_mod.ko\", \"sha256\": \"%064d\"}], \"already_upstream\": []}",
		     rel, 0) < 0)
		abort();
	put(tree, "var/lib/numastor/modules/t/manifest.json", manifest);
	put(tree, "var/lib/numastor/modules/t/scsi_mod.ko", "garbage\n");
	free(manifest);
	CHECK(ns_root_open(tree, &root) == 0);
	CHECK(ns_system_discover(root, NULL, 0, &sys) == 0);

	/* twin: a dry run plans (the plan is there, unsafe), and ends there */
	o.dry_run = true;
	r = ns_swap_run(root, &sys, &o, &run);
	CHECK(r == 0 && run.outcome == NS_SWAPRUN_PLANNED && run.planned && !run.ran);
	CHECK(run.plan.failed_checks > 0 && run.plan.ngroups > 0);
	ns_swap_run_free(&run);

	/* applying: refused before anything, no journal, the module as it was */
	o.dry_run = false;
	r = ns_swap_run(root, &sys, &o, &run);
	CHECK(r < 0 && run.outcome == NS_SWAPRUN_REFUSED_CHECK && run.ran);
	CHECK(run.rep.n == 0);
	ns_swap_run_free(&run);
	CHECK(!exists(tree, NS_SWAP_JOURNAL_PATH));
	CHECK(exists(tree, "sys/module/scsi_mod"));
	ns_system_free(&sys);
	ns_root_free(root);
}

/* The guard: SIGINT and SIGTERM held (the swap asked to stop), SIGPIPE ignored, each pending one
 * taken at the end; run in a child, so that a signal let through is seen as its death. */
static void test_guard(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct ns_swap_guard g;
		sigset_t now;
		int ok = 1;
		ns_swap_guard_begin(&g);
		ok &= ns_swap_signal_pending(NULL) == 0;
		raise(SIGPIPE);
		raise(SIGTERM);
		raise(SIGINT);
		ok &= ns_swap_signal_pending(NULL) == SIGINT;
		ok &= ns_swap_guard_end(&g) == SIGINT;
		ok &= ns_swap_signal_pending(NULL) == 0;
		sigprocmask(SIG_BLOCK, NULL, &now);
		ok &= sigismember(&now, SIGINT) == 0;
		_exit(ok ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
	char gen[4096];

	if (argc < 3) {
		fprintf(stderr, "usage: test-fixrun PYTHON GEN-FIXTURES.PY\n");
		return 2;
	}
	snprintf(tmp, sizeof(tmp), "/tmp/numastor-test-fixrun.XXXXXX");
	if (!mkdtemp(tmp))
		return 2;
	chmod(tmp, 0755);
	snprintf(gen, sizeof(gen), "%s/gen", tmp);
	if (sh("'%s' '%s' '%s' cloud-2n64c-8nvme-forced-node0 hba-megaraid-node1-scan-sync >/dev/null", argv[1],
	       argv[2], gen) != 0) {
		fprintf(stderr, "test-fixrun: gen-fixtures.py failed\n");
		return 2;
	}
	char a[4096], b[4096];
	snprintf(a, sizeof(a), "%s/cloud-2n64c-8nvme-forced-node0", gen);
	snprintf(b, sizeof(b), "%s/hba-megaraid-node1-scan-sync", gen);
	test_irqs(a);
	test_swap_refused(b);
	test_guard();
	sh("rm -rf '%s'", tmp);
	return tap_done("fixrun");
}
