/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The JSON documents: `numastor check --json` (schema/numastor.schema.json), the envelope every
 * document starts with, and the error document (schema/numastor-error.schema.json). */
#ifndef NUMASTOR_JSON_H
#define NUMASTOR_JSON_H

#include <json-c/json.h>

#include "model/findings.h"
#include "out/jsonw.h"
#include "model/system.h"

/* check's document; every change is listed in schema/CHANGES.md */
/* numastor's application id: host.machine_id is the machine's id for it (ns_id128_app_specific),
 * never /etc/machine-id itself, which machine-id(5) calls confidential */
#define NS_APP_ID "02ba7b0cb4dc41f38f834e081248e6c9"
/* A capture's stand-in for etc/machine-id: the app-specific id, already derived */
#define NS_MACHINE_APP_ID_PATH ".numastor/machine-app-id"
#define NS_SCHEMA_VERSION 9
/* check --list --json's document (schema/numastor-list.schema.json) */
#define NS_LIST_SCHEMA_VERSION 3
/* the error document of every command */
#define NS_ERROR_SCHEMA_VERSION 1

/*
 * check's document (schema_version NS_SCHEMA_VERSION) written through w: the envelope, tool,
 * root, privileged, interval_seconds, machine, "devices" (one object per disk), "findings",
 * "summary" and "notes", streamed as it is walked. streamed: the form `check --json` prints
 * (an empty device list as `[]`, a newline at the end); else json-c's form of the whole
 * document (a snapshot's check.json). 0, or w's error (-EFBIG past its budget, -ENOMEM).
 */
int ns_json_write_check(struct ns_jsonw *w, const struct ns_system *sys, const struct ns_findings *findings,
			const char *version, bool streamed);
/* The same into f in one pass, held to max bytes (-EFBIG past it: what went out stays there, the
 * caller cuts it back), flushed through f's buffer. */
int ns_json_write_check_file(FILE *f, size_t max, const struct ns_system *sys, const struct ns_findings *findings,
			     const char *version, bool streamed);
/* The notes as json-c objects (check --list --json). NULL when out of memory. */
struct json_object *ns_json_notes(const struct ns_system *sys);
/*
 * Strings built elsewhere (a finding's evidence, fix's plan) made valid UTF-8 in place, each
 * invalid sequence replaced by U+FFFD (lib/base/escape.h); ns_json_sanitized does it to a deep copy.
 */
void ns_json_sanitize(struct json_object *o);
struct json_object *ns_json_sanitized(struct json_object *o);
/*
 * What every document starts with: schema_version, host {hostname, boot_id, machine_id}
 * read through root (each null when unreadable; all null when root is NULL, nothing open
 * yet) and generated_at (RFC 3339 UTC; NUMASTOR_TEST_NOW=EPOCH fixes it in test builds);
 * for a bundle's replay (lib/out/replay.h) also captured_at and captured_host, what the bundle
 * says of its capture (each null when it does not say). NULL when out of memory.
 */
struct json_object *ns_json_envelope(const struct ns_root *root, int schema_version);
/* The envelope's host object alone. */
struct json_object *ns_json_host(const struct ns_root *root);
/* The document of a command that failed (schema/numastor-error.schema.json): the envelope, the
 * command, and error {message, exit_code}. */
struct json_object *ns_json_error(const struct ns_root *root, const char *command, const char *message, int exit_code);
#endif
