/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor fix: re-spread the interrupts user space may move, journaled and revertible. The
 * options and the dispatch; the engines are lib/act/fixrun.h and lib/swap/modswap-run.h, the
 * renderers cmd/fix-*.c (cmd/fix.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act/apply.h"
#include "base/testhook.h"
#include "fix.h"
#include "options.h"
#include "snapdir.h"
#include "state/journal.h"
#include "state/swapjournal.h"

/* --hotplug: the longest wait for a module swap or revert that holds the lock (a swap waits
 * up to 60 s per disk, then may roll back) */
#define HOTPLUG_SWAP_WAIT_S 1800

static void fix_usage(FILE *out)
{
	fprintf(out, "Usage: numastor fix [OPTIONS] [DEVICE...]\n"
		     "       numastor fix --revert\n"
		     "\n"
		     "Place the interrupts of the devices that `numastor check` faults (or the DEVICEs\n"
		     "named) on the CPUs their hardware queues serve, at runtime: kernel-managed\n"
		     "vectors are never written, every write is read back, the previous values are\n"
		     "journaled in /run/numastor/journal.json first, and --revert restores them.\n"
		     "\n");
	ns_options_usage(out, &ns_options_fix, 80);
	fprintf(out, "\n"
		     "Exit status: 0 done (or nothing to do), 1 some writes failed, or irqbalance runs\n"
		     "without numastor's policy script and will move the vectors back (with --dry-run:\n"
		     "--modules or --irqbalance=policy would be refused), 3 could not run (also: an\n"
		     "excluded-CPU list such as IRQBALANCE_BANNED_CPULIST or cpu/isolated that does\n"
		     "not parse, a malformed journal, which is kept, or a state directory that is not\n"
		     "numastor's own).\n");
}

/* Test-only (lib/base/testhook.h, absent from release builds): write into a --sysroot tree. */
static bool sysroot_writes_allowed(void)
{
	const char *v = ns_test_hook("NUMASTOR_TEST_SYSROOT_WRITES");
	return v && strcmp(v, "1") == 0;
}

/*
 * The options into *o (o->cli set by the caller). Returns -1 to go on, or the exit code to end
 * with (a usage error, --help).
 */
static int fix_parse(int argc, char **argv, struct fix_opts *o)
{
	struct ns_getopt g;
	const char *color = "auto";
	char *end;
	int c;

	ns_getopt_init(&g, &ns_options_fix);
	while ((c = ns_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'n':
			o->dry_run = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'X':
			o->revert = true;
			break;
		case 'A':
			if (strcmp(optarg, "2") != 0)
				return ns_cli_bad_usage(o->cli, "--rq-affinity takes 2, not '%s'", optarg);
			o->rq_affinity = 2;
			break;
		case 'T': {
			unsigned long v;
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || v > 3600)
				return ns_cli_bad_usage(o->cli, "--lock-timeout takes seconds (0-3600), not '%s'",
							optarg);
			o->lock_timeout_s = (unsigned)v;
			break;
		}
		case 'W': {
			unsigned long v;
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > 86400)
				return ns_cli_bad_usage(o->cli, "--timeout takes seconds (1-86400), not '%s'", optarg);
			o->timeout_s = (unsigned)v;
			break;
		}
		case 'R':
			o->sysroot = optarg;
			break;
		case 's':
			o->snapshot = optarg;
			break;
		case 'H':
			o->hotplug = true;
			o->quiet = true;
			break;
		case 'M':
			o->modules = true;
			break;
		case 'D':
			o->module_dir = optarg;
			break;
		case 'I':
			o->install = true;
			break;
		case 'B':
			if (strcmp(optarg, "policy") != 0)
				return ns_cli_bad_usage(o->cli, "--irqbalance takes policy, not '%s'", optarg);
			o->ib_policy = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'C':
			color = optarg;
			break;
		case 'P':
			o->probe_seconds = 3;
			if (optarg && ns_cli_parse_seconds(optarg, 3600, &o->probe_seconds) < 0)
				return ns_cli_bad_usage(o->cli, "--probe takes seconds above 0, at most 3600, not '%s'",
							optarg);
			break;
		case 'h':
			fix_usage(stdout);
			return NS_EXIT_OK;
		default:
			return ns_cli_bad_option(o->cli, c, argv);
		}
	}
	int colored = ns_color_choice(color, stdout);
	if (colored < 0)
		return ns_cli_bad_usage(o->cli, "--color takes auto, always or never, not '%s'", color);
	o->color = colored == 1;
	/* a bundle is a captured machine: its plan is shown, never carried out (not even into the
	 * extracted tree, which goes when the run ends) */
	if (o->snapshot && o->sysroot)
		return ns_cli_bad_usage(o->cli, "--snapshot and --sysroot are two roots; give one");
	if (o->snapshot && !o->dry_run)
		return ns_cli_bad_usage(o->cli, "refused: --snapshot plans on a captured machine and changes nothing "
						"there or here; add --dry-run to see the plan");
	if (o->revert && (o->dry_run || optind < argc || o->rq_affinity))
		return ns_cli_bad_usage(o->cli, "--revert takes no devices and no --dry-run or --rq-affinity");
	if (o->timeout_s && !o->modules && !o->revert)
		return ns_cli_bad_usage(o->cli, "--timeout goes with --modules or --revert");
	if ((o->install || o->module_dir) && !o->modules)
		return ns_cli_bad_usage(o->cli, "--install and --module-dir go with --modules");
	if (o->modules && (o->revert || o->rq_affinity || optind < argc))
		return ns_cli_bad_usage(o->cli, "--modules takes no devices, --revert or --rq-affinity");
	if (o->ib_policy && (o->revert || o->modules || o->hotplug))
		return ns_cli_bad_usage(o->cli, "--irqbalance=policy goes with no --revert, --modules or --hotplug "
						"(--revert removes the drop-in)");
	if (o->probe_seconds > 0 && (o->dry_run || o->revert || o->modules || o->hotplug || o->sysroot))
		return ns_cli_bad_usage(o->cli, "--probe measures before and after a change: not with --dry-run, "
						"--revert, --modules, --hotplug or --sysroot");
	if (o->hotplug && (o->revert || o->modules || o->dry_run || o->json))
		return ns_cli_bad_usage(o->cli, "--hotplug goes with no --revert, --modules, --dry-run or --json");
	if (o->sysroot && !sysroot_writes_allowed()) {
		if (o->revert)
			return ns_cli_bad_usage(o->cli, "--revert acts on the live system only, not on --sysroot");
		o->dry_run = true; /* a captured tree is never written */
	}
	o->devices = argv + optind;
	o->ndevices = (size_t)(argc - optind);
	return -1;
}

int cmd_fix(int argc, char **argv)
{
	struct fix_opts o = {.lock_timeout_s = 30};
	struct ns_root *root = NULL;
	struct ns_system sys;
	char *snapdir = NULL;
	int r, code = NS_EXIT_OK, lockfd = -1;
	struct ns_cli cli;
	struct ns_lock_holder holder;

	ns_cli_init(&cli, "fix", argc, argv);
	o.cli = &cli;
	code = fix_parse(argc, argv, &o);
	if (code >= 0)
		return code;
	code = NS_EXIT_OK;
	if (!o.dry_run && !o.sysroot && geteuid() != 0)
		return ns_cli_fail(
			&cli, NS_EXIT_UNKNOWN,
			"changing IRQ affinities needs root; run it as root, or use --dry-run to see the plan");
	if (o.snapshot) {
		code = open_snapshot_root(&cli, o.snapshot, &snapdir, &root);
		if (code != NS_EXIT_OK)
			return code;
	} else if ((r = ns_root_open(o.sysroot, &root)) < 0) {
		return ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot use %s as the root: %s", o.sysroot ? o.sysroot : "/",
				   strerror(-r));
	}
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
		code = fix_revert(root, &o);
		ns_lock_release(lockfd);
		ns_root_free(root);
		return code;
	}

	r = ns_system_discover(root, (const char *const *)o.devices, o.ndevices, &sys);
	if (r < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "%s",
				   r == -ENODEV && sys.notes.n ? sys.notes.v[sys.notes.n - 1].message : strerror(-r));
		goto out;
	}
	code = o.modules ? fix_modules(root, &sys, &o) : fix_irqs(root, &sys, &o);
out:
	ns_system_free(&sys);
	ns_lock_release(lockfd);
	ns_root_free(root);
	remove_snapdir(&snapdir);
	return code;
}
