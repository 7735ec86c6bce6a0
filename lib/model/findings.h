/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rules: turn the model into findings with stable ids, severities, evidence and remedies. */
#ifndef NUMASTOR_FINDINGS_H
#define NUMASTOR_FINDINGS_H

#include <json-c/json.h>
#include <stddef.h>

#include "model/system.h"

enum ns_severity { NS_SEV_INFO = 0, NS_SEV_WARNING, NS_SEV_CRITICAL };

/*
 * Causes and effects. A cause is something an operator can change (a forced or set node, a
 * placement, an isolation conflict, a driver without the fix, a setting); an effect is what one
 * does (interrupts confined, irqbalance confining, firing remote, allocations remote). An effect
 * names the cause that explains it on the same device, the first of its kind's causes found
 * there whose severity is at least its own; with none it stands as a cause itself. The graph is
 * this table, and numastor-findings(7) prints it (tests/unit/test-findings-graph.c holds the two
 * together).
 */
enum ns_finding_role { NS_ROLE_CAUSE = 0, NS_ROLE_EFFECT };

#define NS_FINDING_MAX_CAUSES 6

struct ns_finding_kind {
	const char *id;
	enum ns_finding_role role;
	const char *causes[NS_FINDING_MAX_CAUSES + 1]; /* an effect's, in order; NULL-terminated */
};

extern const struct ns_finding_kind ns_finding_kinds[];
extern const size_t ns_nfinding_kinds;
/* NULL for an id no rule raises */
const struct ns_finding_kind *ns_finding_kind(const char *id);

/*
 * One action of a remedy that numastor carries out: what it changes and how to undo it. A
 * remedy's steps go from the least to the most invasive; a person can run each as written.
 */
struct ns_remedy_step {
	const char *command; /* "numastor fix", "numastor fix --modules" ... (static string) */
	char *changes;	     /* what it changes on the machine, one sentence */
	const char *undo;    /* the command that undoes it (static string) */
};

#define NS_REMEDY_MAX_STEPS 3

struct ns_finding {
	const char *id; /* stable: "node-forced" ... (static string) */
	enum ns_severity severity;
	/* the cause that explains this effect (a static id, the root of the chain: an effect of an
	 * effect names the first one's cause); NULL for a cause, or an effect nothing explains */
	const char *caused_by;
	/* which of the rule's sentences was said (a static string, "" for a rule with one): text
	 * groups findings of one id by it, so a group's sentence holds for every device it names */
	const char *form;
	char *device;		      /* NULL for machine-wide findings */
	char *message;		      /* one plain sentence */
	struct json_object *evidence; /* owned */
	char *remedy_text;
	struct ns_remedy_step steps[NS_REMEDY_MAX_STEPS]; /* the remedy's action: steps[0].command */
	size_t nsteps;
};

/* A device the rules could not judge: a fact they need could not be read (its function's
 * numa_node did not parse, or whether a driver forced it cannot be told from what was read). */
struct ns_unjudged {
	char *device;
	char *reason; /* one plain sentence */
};

struct ns_findings {
	struct ns_finding *v;
	size_t n, cap;
	struct ns_unjudged *unjudged;
	size_t nunjudged;
};

int ns_findings_evaluate(const struct ns_system *sys, struct ns_findings *out);
void ns_findings_free(struct ns_findings *f);
const char *ns_severity_name(enum ns_severity s);
/* Monitoring-plugin exit status: 2 critical, 1 warning, 3 unknown (a device could not be
 * judged and nothing worse was found), 0 ok. The causes decide it (an effect is never more
 * severe than its cause). */
int ns_findings_exit_code(const struct ns_findings *f);
/* The causes (findings with no caused_by) of severity s. */
size_t ns_findings_count(const struct ns_findings *f, enum ns_severity s);
/* The effects: findings a cause explains. */
size_t ns_findings_count_effects(const struct ns_findings *f);
/* The distinct cause ids of severity s, in the table's order, into ids (cap of them);
 * returns how many there are (may exceed cap). */
size_t ns_findings_cause_ids(const struct ns_findings *f, enum ns_severity s, const char **ids, size_t cap);

#endif
