/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numastor irqbalance-policy DEVPATH IRQ: irqbalance's --policyscript protocol. irqbalance
 * runs it for every IRQ with the device's sysfs path and the IRQ number and reads key=value
 * lines: numastor says ban=true for the IRQs `numastor fix` placed (so irqbalance does not
 * move them back), and numa_node=-1 for devices whose node a driver forced (so irqbalance
 * stops confining them to that node). Exit 0 (with or without a policy); 3: error, as every
 * command's (numastor(8)). irqbalance 1.9 skips a single policy script that exits non-zero, with a log line per IRQ, so
 * "nothing to say" is exit 0 with no output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "state/journal.h"
#include "base/number.h"
#include "read/machine.h"
#include "read/module.h"
#include "numastor.h"
#include "options.h"
#include "read/pci.h"
#include "model/system.h"

static void policy_usage(FILE *out)
{
	fprintf(out, "Usage: numastor irqbalance-policy [--sysroot DIR] DEVPATH IRQ\n"
		     "\n"
		     "For irqbalance's policy script: prints ban=true for an IRQ that `numastor fix`\n"
		     "placed, and numa_node=-1 for a device whose NUMA node a driver forced.\n"
		     "Exit status: 0 (a policy printed, or nothing to say about this IRQ), 3 error.\n"
		     "\n");
	ns_options_usage(out, &ns_options_irqbalance_policy, 80);
}

/* The PCI address of the function at devpath ("/sys/bus/pci/devices/0000:00:04.0" or its
 * /sys/devices path), NULL when it is none. */
static char *pci_of(struct ns_root *root, const char *devpath)
{
	char *real = NULL, *bdf = NULL;

	if (ns_realpath(root, devpath, &real) < 0)
		return NULL;
	if (ns_pci_is_function(root, real)) {
		const char *base = strrchr(real, '/');
		bdf = strdup(base ? base + 1 : real);
	}
	free(real);
	return bdf;
}

/* Is the PCI function at devpath's node forced by its driver? */
static int device_forced(struct ns_root *root, const char *devpath)
{
	struct ns_machine m;
	struct ns_notes notes = {0};
	struct ns_modules *mods = NULL;
	struct ns_pci pci;
	char *real = NULL;
	int forced = 0;

	if (ns_realpath(root, devpath, &real) < 0)
		return 0;
	if (!ns_pci_is_function(root, real) || ns_machine_read(root, &m, &notes) < 0) {
		free(real);
		ns_notes_free(&notes);
		return 0;
	}
	if (ns_modules_new(root, &mods) == 0 && ns_pci_read(root, &m, mods, NULL, real, &pci, &notes) == 0) {
		/* whether its driver can force, as check judges it (the module build's manifest) */
		struct ns_kernel_fix fixes[2] = {{0}};
		ns_kernel_fixes_read(root, &m, fixes);
		ns_pci_rejudge(&pci, fixes[0].in_kernel, fixes[0].basis);
		free(fixes[0].basis);
		free(fixes[1].basis);
		forced = pci.forced == 1;
		ns_pci_free(&pci);
	}
	ns_modules_free(mods);
	ns_machine_free(&m);
	ns_notes_free(&notes);
	free(real);
	return forced;
}

int cmd_irqbalance_policy(int argc, char **argv)
{
	const char *sysroot = NULL;
	struct ns_root *root;
	struct ns_journal j;
	char *name;
	long long irq;
	struct ns_cli cli;
	struct ns_getopt g;
	int c, r;

	/* every error exits 3, as every command's; the wrapper passes it on to irqbalance, which
	 * skips a policy script that exits non-zero (numastor-irqbalance-policy(8)) */
	ns_cli_init(&cli, "irqbalance-policy", argc, argv);
	ns_getopt_init(&g, &ns_options_irqbalance_policy);
	while ((c = ns_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'R':
			sysroot = optarg;
			break;
		case 'h':
			policy_usage(stdout);
			return 0;
		default:
			return ns_cli_bad_option(&cli, c, argv);
		}
	}
	if (argc - optind != 2)
		return ns_cli_bad_usage(&cli, "takes DEVPATH and IRQ (irqbalance's --policyscript arguments)");
	if (ns_parse_dec(argv[optind + 1], 0, INT_MAX, &irq) < 0)
		return ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "'%s' is not an IRQ number", argv[optind + 1]);
	r = ns_root_open(sysroot, &root);
	if (r < 0)
		return ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot use %s as the root: %s", sysroot ? sysroot : "/",
				   strerror(-r));
	r = ns_journal_load(root, &j);
	if (r == 0) {
		struct ns_cpuset current = {0};
		char path[64], *txt = NULL, *boot = ns_journal_read_boot_id(root), *pci = pci_of(root, argv[optind]);
		const struct ns_journal_irq *e = NULL;
		/* the IRQ is known by its device's PCI function and its action name, in this boot only */
		name = ns_irq_first_action(root, (int)irq);
		if (pci && ns_journal_same_boot(&j, boot) && ns_journal_irq_of_pci(root, pci, (int)irq))
			e = ns_journal_find_irq(&j, pci, name);
		snprintf(path, sizeof(path), "proc/irq/%lld/smp_affinity_list", irq);
		if (e && ns_read_str(root, path, &txt) == 0)
			ns_cpuset_parse_list(&current, txt);
		/* only what numastor really wrote and still holds */
		if (ns_journal_irq_placed(e, &current))
			printf("ban=true\n");
		ns_cpuset_clear(&current);
		free(txt);
		free(name);
		free(boot);
		free(pci);
		ns_journal_free(&j);
	}
	if (device_forced(root, argv[optind]))
		printf("numa_node=-1\n");
	ns_root_free(root);
	return 0;
}
