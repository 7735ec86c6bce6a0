/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The files numastor writes where the operator asks (check -O FILE, snapshot -o FILE): a regular
 * file, or a name not yet taken, is replaced atomically (a temporary file beside it, fsync,
 * rename), so a reader (the textfile collector, a fleet's copy job) sees the old file or the new
 * one, never half of one. Anything else (a device node such as /dev/null, a FIFO, a socket, a
 * directory, a symlink) is refused and left as it is: a rename would put a regular file in its
 * place. The one way to write into a stream is to ask for it: "-", /dev/stdout, /dev/fd/1 or
 * /proc/self/fd/1 write through to standard output as it is.
 */
#ifndef NUMASTOR_OUTFILE_H
#define NUMASTOR_OUTFILE_H

#include <stdbool.h>

struct ns_outfile {
	int fd;	       /* where to write */
	bool through;  /* standard output, written through */
	char *path;    /* the target (NULL through) */
	char *tmpname; /* the temporary file beside it (NULL through) */
};

/* Does path name standard output ("-", /dev/stdout, /dev/fd/1, /proc/self/fd/1)? */
bool ns_outfile_is_stdout(const char *path);
/*
 * Check the target and open what to write into. 0; -EEXIST when it exists and is not a regular
 * file, -EINVAL for an empty name, with *why (malloc'd) saying so; -errno when the temporary file
 * cannot be made beside it (*why NULL).
 */
int ns_outfile_open(const char *path, struct ns_outfile *o, char **why);
/* Everything written: fsync and rename onto the target (the target checked again first:
 * -EEXIST when something not a regular file took its name meanwhile). Through, an fsync that
 * does not apply (a pipe, a terminal) is no error. Closes the file either way; on an error the
 * temporary file is removed and the target left as it was. */
int ns_outfile_commit(struct ns_outfile *o);
/* Give up: the temporary file removed, the target untouched. */
void ns_outfile_abort(struct ns_outfile *o);
/* Remove the temporary file of every output file open now (async-signal-safe: unlink only), for
 * a run that stops at once without its cleanup (cmd/numastor.c's out-of-memory exit). */
void ns_outfile_discard_pending(void);

#endif
