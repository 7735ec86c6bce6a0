/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rules: turn the model into findings with stable ids, severities, evidence and remedies. */
#ifndef NUMASTOR_FINDINGS_H
#define NUMASTOR_FINDINGS_H

#include <json-c/json.h>
#include <stddef.h>

#include "system.h"

enum ns_severity { NS_SEV_INFO = 0, NS_SEV_WARNING, NS_SEV_CRITICAL };

struct ns_finding {
	const char *id; /* stable: "node-forced" ... (static string) */
	enum ns_severity severity;
	char *device;		      /* NULL for machine-wide findings */
	char *message;		      /* one plain sentence */
	struct json_object *evidence; /* owned */
	const char *remedy_action;    /* "numastor fix", NULL when manual (static string) */
	char *remedy_text;
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
 * judged and nothing worse was found), 0 ok. */
int ns_findings_exit_code(const struct ns_findings *f);
size_t ns_findings_count(const struct ns_findings *f, enum ns_severity s);

#endif
