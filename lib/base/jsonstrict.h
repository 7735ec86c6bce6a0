/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JSON that numastor wrote and reads back (the fix journal, the swap journal, the irqbalance
 * policy's journal, a module manifest), read strictly: one text of RFC 8259 and nothing after
 * it but whitespace (json-c's strict tokener), and no object that names a key twice. json-c
 * keeps the last of two equal keys without a word, so `..., "irqs": []` appended to a journal
 * would empty it; such a file is not one numastor wrote, and is refused whole.
 */
#ifndef NUMASTOR_JSONSTRICT_H
#define NUMASTOR_JSONSTRICT_H

#include <stdbool.h>

struct json_object;

/*
 * Parse txt (NUL-terminated). 0 with *doc; -EINVAL with *problem (malloc'd, when problem is
 * not NULL) saying what is wrong ("it is not JSON (unexpected character) at byte 17", "its
 * key \"irqs\" appears twice in one object"); -ENOMEM.
 */
int ns_json_parse_strict(const char *txt, struct json_object **doc, char **problem);
/* Does object o hold only keys of allowed (NULL-terminated)? *bad (when not NULL) names the
 * first other one. Anything but an object passes: its reader's own checks say what it needs. */
bool ns_json_only_keys(struct json_object *o, const char *const *allowed, const char **bad);

#endif
