/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "base/notes.h"
#include "base/escape.h"
#include "base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How much of a garbled value a note quotes (escaped bytes, before "...") */
#define NOTE_RAW_MAX 40

/*
 * Notes carry what the machine said (paths, names, raw values): they are recorded escaped
 * for text (lib/base/escape.h), so every output shows the same bytes and none reaches a terminal
 * or a JSON document raw. Escaping is idempotent: the outputs escape again and change nothing.
 */
void ns_note(struct ns_notes *notes, const char *subject, const char *field, const char *fmt, ...)
{
	va_list ap;
	char *raw, *msg;
	struct ns_note *nv;

	va_start(ap, fmt);
	raw = ns_vfmt(fmt, ap);
	va_end(ap);
	msg = ns_escape_text(raw);
	free(raw);
	if (!msg)
		return;
	if (notes->n == notes->cap) {
		size_t cap = notes->cap ? notes->cap * 2 : 8;
		nv = realloc(notes->v, cap * sizeof(*nv));
		if (!nv) {
			free(msg);
			return;
		}
		notes->v = nv;
		notes->cap = cap;
	}
	nv = &notes->v[notes->n];
	nv->subject = ns_escape_text(subject ? subject : "machine");
	nv->field = ns_escape_text(field ? field : "");
	nv->message = msg;
	if (!nv->subject || !nv->field) {
		free(nv->subject);
		free(nv->field);
		free(msg);
		return;
	}
	notes->n++;
}

void ns_note_read(struct ns_notes *notes, const char *subject, const char *field, const char *path, int err,
		  const char *raw)
{
	switch (-err) {
	case ENOENT:
		ns_note(notes, subject, field, "/%s is missing", path);
		break;
	case ENODATA:
		ns_note(notes, subject, field, "/%s is empty", path);
		break;
	case EINVAL:
		if (raw) {
			char *shown = ns_escape(raw, NS_ESCAPE_TEXT, NOTE_RAW_MAX);
			ns_note(notes, subject, field, "/%s holds a garbled value '%s'", path, shown ? shown : "?");
			free(shown);
		} else
			ns_note(notes, subject, field, "/%s holds a garbled value", path);
		break;
	case ERANGE: /* a number in the right form, outside the field's range (lib/base/number.h) */
		if (raw)
			ns_note(notes, subject, field, "/%s holds '%.40s', out of range for the field", path, raw);
		else
			ns_note(notes, subject, field, "/%s holds a value out of range for the field", path);
		break;
	case EACCES:
	case EPERM:
		ns_note(notes, subject, field, "/%s needs root (permission denied)", path);
		break;
	default:
		ns_note(notes, subject, field, "/%s could not be read: %s", path, strerror(-err));
		break;
	}
}

void ns_notes_free(struct ns_notes *notes)
{
	for (size_t i = 0; i < notes->n; i++) {
		free(notes->v[i].subject);
		free(notes->v[i].field);
		free(notes->v[i].message);
	}
	free(notes->v);
	notes->v = NULL;
	notes->n = notes->cap = 0;
}
