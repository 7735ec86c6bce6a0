/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The JSON document of `numastor check --json` (schema/numastor.schema.json, schema_version 1). */
#ifndef NUMASTOR_JSON_H
#define NUMASTOR_JSON_H

#include <json-c/json.h>

#include "findings.h"
#include "system.h"

#define NS_SCHEMA_VERSION 1

/* A new document; NULL when out of memory. */
struct json_object *ns_json_document(const struct ns_system *sys, const struct ns_findings *findings,
				     const char *version);

#endif
