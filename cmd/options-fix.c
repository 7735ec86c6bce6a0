/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor fix's options (cmd/options.h); each val is what cmd/fix.c's switch takes. */
#include "options.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct ns_option fix_options[] = {
	{"dry-run", 0, NS_ARG_NONE, NULL, "print the plan and change nothing", .val = 'n'},
	/* until 0.3.0 (NEWS.md): -n is check's --noheadings, as lsblk's */
	{NULL, 'n', NS_ARG_NONE, NULL, "--dry-run", .hidden = true, .val = 'n'},
	{"json", 'j', NS_ARG_NONE, NULL, "print the plan (and results) as JSON", .val = 'j'},
	{"revert", 0, NS_ARG_NONE, NULL, "restore every value the journal holds", .val = 'X'},
	{"rq-affinity", 0, NS_ARG_WORD, "2",
	 "also set rq_affinity=2 where completions are remote and the vectors are kernel-managed", NS_COMPLETE_WORDS,
	 "2", .val = 'A'},
	{"lock-timeout", 0, NS_ARG_REQUIRED, "SECS", "wait at most SECS for another fix to finish (default 30)",
	 .val = 'T'},
	{"hotplug", 0, NS_ARG_NONE, NULL,
	 "what numastor-fix.service runs when a disk appears: quiet; while a module swap or a revert holds "
	 "the lock, wait for it (up to 30 min), then plan afresh and apply",
	 .val = 'H'},
	{"modules", 0, NS_ARG_NONE, NULL,
	 "swap in the numastor-patched nvme/SCSI modules (checked, journaled, rolled back on failure)", .val = 'M'},
	{"module-dir", 0, NS_ARG_REQUIRED, "DIR",
	 "where the patched modules and manifest.json are (default /var/lib/numastor/modules/<release>)",
	 NS_COMPLETE_DIRS, .val = 'D'},
	{"install", 0, NS_ARG_NONE, NULL, "with --modules: install them for the next boot instead", .val = 'I'},
	{"timeout", 0, NS_ARG_REQUIRED, "SECS",
	 "with --modules or --revert: wait at most SECS for the disks to come back after a reload, and as "
	 "long again in a rollback (default 60 and 5 more per disk detached)",
	 .val = 'W'},
	{"irqbalance", 0, NS_ARG_WORD, "policy",
	 "also give irqbalance numastor's policy script: link the drop-in numastor-policy.conf into "
	 "irqbalance.service.d/, reload systemd and restart irqbalance (--revert removes it; refused while "
	 "irqbalance has a policy script of its own)",
	 NS_COMPLETE_WORDS, "policy", .val = 'B'},
	{"probe", 0, NS_ARG_OPTIONAL, "SECONDS",
	 "probe the devices the plan moves vectors of (numastor probe: 4k random reads from each node, "
	 "SECONDS per node, default 3) before the change and after it, and print the two side by side (not "
	 "with --dry-run)",
	 NS_COMPLETE_WORDS, "1 3 10", .val = 'P'},
	{"sysroot", 'R', NS_ARG_REQUIRED, "DIR", "plan for a captured tree (implies --dry-run)", NS_COMPLETE_DIRS,
	 .val = 'R'},
	{"snapshot", 's', NS_ARG_REQUIRED, "FILE",
	 "with --dry-run: plan for the machine a bundle written by `numastor snapshot` captured", NS_COMPLETE_FILES,
	 .val = 's'},
	{"quiet", 'q', NS_ARG_NONE, NULL, "print only problems", .val = 'q'},
	{"verbose", 'v', NS_ARG_NONE, NULL, "the plan and results one line per vector, not grouped", .val = 'v'},
	{"color", 0, NS_ARG_REQUIRED, "WHEN", "colour: auto (default), always, never", NS_COMPLETE_WORDS,
	 "auto always never", .val = 'C'},
	{"help", 'h', NS_ARG_NONE, NULL, "show this help", .val = 'h'},
};

const struct ns_options ns_options_fix = {"fix", fix_options, N(fix_options)};
