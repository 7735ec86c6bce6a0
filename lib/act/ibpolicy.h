/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * irqbalance with numastor's policy script, through a systemd drop-in: numastor ships it
 * disabled (NUMASTOR_IRQBALANCE_DROPIN) and `fix --irqbalance=policy` links it into
 * irqbalance.service.d/, journaled in var/lib/numastor (the link outlives the boot, so the
 * record does too), so that `fix --revert` takes it out again. Refused while the operator gives
 * irqbalance a policy script of their own (another drop-in, IRQBALANCE_ARGS, the running
 * daemon's command line) or replaces its ExecStart= in another drop-in.
 */
#ifndef NUMASTOR_IBPOLICY_H
#define NUMASTOR_IBPOLICY_H

#include <stdbool.h>

#include "read/machine.h"
#include "read/root.h"

#define NS_IBPOLICY_DIR "etc/systemd/system/irqbalance.service.d"
#define NS_IBPOLICY_LINK NS_IBPOLICY_DIR "/numastor-policy.conf"
#define NS_IBPOLICY_JOURNAL "var/lib/numastor/irqbalance-policy.json"

struct ns_ibpolicy_state {
	bool linked;	/* NS_IBPOLICY_LINK is numastor's link to its drop-in */
	bool journaled; /* NS_IBPOLICY_JOURNAL is there */
	char *already;	/* numastor's script is given elsewhere: where (malloc'd), else NULL */
	char *conflict; /* why enabling is refused: what and where (malloc'd), else NULL */
};

/* Is this policy script numastor's (this build's, or one installed under another prefix)? */
bool ns_ibpolicy_is_numastors(const char *script);

/* What the machine says about irqbalance's units and options; ib is what runs (for its
 * command line). 0, or a negative errno when a file that matters could not be read. */
int ns_ibpolicy_inspect(struct ns_root *root, const struct ns_irqbalance *ib, struct ns_ibpolicy_state *st);
void ns_ibpolicy_state_free(struct ns_ibpolicy_state *st);

/* Journal, then link (making NS_IBPOLICY_DIR when missing). -EEXIST (with *problem) when
 * something not numastor's is at the link's path. */
int ns_ibpolicy_enable(struct ns_root *root, char **problem);
/* From the journal: the link removed when it is still numastor's, then the journal. *removed
 * says whether a link was removed; -ENOENT when nothing was journaled. */
int ns_ibpolicy_disable(struct ns_root *root, bool *removed, char **problem);

/*
 * systemctl daemon-reload, then try-restart irqbalance.service (lib/act/exec: absolute path, live
 * root only). *said is one line for the report (malloc'd). 0 when both ran and succeeded,
 * -ECHILD when one failed, -ENOSYS when systemd does not run here or the root is a captured
 * tree (a test build may name a stand-in with NUMASTOR_TEST_SYSTEMCTL).
 */
int ns_ibpolicy_reload(struct ns_root *root, char **said);

#endif
