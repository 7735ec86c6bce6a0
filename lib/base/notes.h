/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Notes: why a value is null. The library never prints; it records a note per field it could
 * not read (missing, empty, garbled, vanished, needs root) and the front end shows them.
 */
#ifndef NUMASTOR_NOTES_H
#define NUMASTOR_NOTES_H

#include <stddef.h>

struct ns_note {
	char *subject; /* "nvme0n1", "0000:00:04.0", "irq 45", "machine" */
	char *field;   /* "pci.numa_node" */
	char *message;
};

struct ns_notes {
	struct ns_note *v;
	size_t n, cap;
};

__attribute__((format(printf, 4, 5))) void ns_note(struct ns_notes *notes, const char *subject, const char *field,
						   const char *fmt, ...);
/* A note for a failed read: the message says what err means for that path. */
void ns_note_read(struct ns_notes *notes, const char *subject, const char *field, const char *path, int err,
		  const char *raw);
void ns_notes_free(struct ns_notes *notes);

#endif
