/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * irqbalance's options as their readers read them. The options file (/etc/default/irqbalance,
 * /etc/sysconfig/irqbalance) has two readers that do not agree on every line: a POSIX shell
 * sourcing it (an init script) and systemd's EnvironmentFile= (src/basic/env-file.c). numastor
 * takes a value only where both would take the same one, and names the line otherwise. The
 * running daemon's own values are in its environ, NUL-separated entries, as getenv() sees
 * them. Which of irqbalance's two variables bans which CPUs is irqbalance 1.9's rule
 * (cputree.c, setup_banned_cpus).
 *
 * Nothing here reads a file: the texts come from the caller (lib/read/machine.c reads them through
 * the root), so the fuzz harness (tests/fuzz/fuzz-envfile.c) feeds them directly.
 */
#ifndef NUMASTOR_ENVFILE_H
#define NUMASTOR_ENVFILE_H

#include <stddef.h>

#include "base/cpuset.h"

/* A line of an options file numastor cannot read with certainty. */
struct ns_envfile_doubt {
	unsigned line;	 /* 1-based; 0: none */
	char *text;	 /* the line as written, without its newline (malloc'd; NULL when line is 0) */
	const char *why; /* static: what a shell and systemd would make of it */
};

/*
 * The values of keys[0..nkeys) in an options file's text, as a shell sourcing it and systemd's
 * EnvironmentFile= would both take them: blank lines and # comments skipped, blanks around a
 * line ignored, KEY=value, KEY='value' or KEY="value", the last assignment of a key winning.
 * values[i] is the value (malloc'd; the caller frees it), NULL when no line assigns keys[i];
 * lines[i] (when lines is not NULL) that assignment's line, else 0.
 *
 * A line the two readers may read differently, or whose effect a shell alone decides, is a
 * doubt: -EINVAL with *doubt filled (free it with ns_envfile_doubt_free) and no value set.
 * Doubts anywhere in the file: a command (`. FILE`, `KEY =v`, `KEY= v`, anything but
 * assignments), an expansion or escape outside single quotes ($, `, \), a shell operator
 * (; & | < > ( )), a quote left open at the end of its line, a carriage return, invalid UTF-8
 * outside a comment, a comment ending in a backslash (systemd before 254 continued it). On a
 * line assigning one of keys also: `export` (systemd ignores such a line), more than one word
 * (a shell makes several assignments, systemd one value), a comment after the value (systemd
 * keeps it in the value), a value of several quoted or unquoted parts (systemd takes a quote
 * only at the start), an unquoted ~ (a shell expands it).
 * Returns 0, -EINVAL (a doubt) or -ENOMEM.
 */
int ns_envfile_get(const char *text, const char *const *keys, size_t nkeys, char **values, unsigned *lines,
		   struct ns_envfile_doubt *doubt);
void ns_envfile_doubt_free(struct ns_envfile_doubt *doubt);

/*
 * getenv(key) over a process's environment as the kernel shows it (proc/PID/environ: len bytes
 * of NUL-terminated KEY=value entries, the last one possibly unterminated): the value of the
 * first entry for key (malloc'd), *value NULL when there is none. A value holding " KEY=..."
 * is a value, never an entry. Returns 0 or -ENOMEM.
 */
int ns_environ_get(const char *env, size_t len, const char *key, char **value);

/* irqbalance's two variables: the older hex mask and the CPU list (irqbalance 1.8 on) */
#define NS_IRQBALANCE_BANNED_MASK "IRQBALANCE_BANNED_CPUS"
#define NS_IRQBALANCE_BANNED_LIST "IRQBALANCE_BANNED_CPULIST"
/* irqbalance's cpumask_t size (cpumask.h, NR_CPUS) */
#define NS_IRQBALANCE_NR_CPUS 4096

enum ns_ban_from {
	NS_BAN_NONE, /* neither is set to a non-empty value: irqbalance bans the isolated and
			nohz_full CPUs, which numastor keeps IRQs off anyway */
	NS_BAN_MASK, /* IRQBALANCE_BANNED_CPUS */
	NS_BAN_LIST, /* IRQBALANCE_BANNED_CPULIST */
};

/*
 * The CPUs irqbalance 1.9 bans given its two variables (NULL: unset): IRQBALANCE_BANNED_CPUS
 * when set and non-empty (irqbalance reads the mask first, and then not the list), else
 * IRQBALANCE_BANNED_CPULIST when set and non-empty, else none (*from says which). The value is
 * taken only in a form irqbalance reads to exactly the set numastor reads: blanks around it
 * (isspace) ignored; a list of decimal CPUs and ranges with no blank, empty item or trailing
 * comma inside (irqbalance would read "0, 1" as CPU 0 and "0-3,,5" with CPU 0 added); a mask of
 * comma-separated hex groups of at most 8 significant digits, each group but the first 32 bits
 * as in the kernel's format ("f,1" is CPUs 0 and 32-35). No CPU at or beyond limit, nor beyond
 * irqbalance's own NR_CPUS (cpumask.h: past it irqbalance keeps the CPUs before it).
 * Returns 0 with *out known; -EINVAL (not such a form) or -ERANGE (a CPU at or beyond limit)
 * with *out empty and unknown; -ENOMEM.
 */
int ns_irqbalance_banned(const char *mask, const char *list, unsigned limit, struct ns_cpuset *out,
			 enum ns_ban_from *from);

#endif
