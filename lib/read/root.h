/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rooted reader: every sysfs, procfs and /etc read of numastor goes through one
 * struct ns_root, either the live "/" or a captured tree (--sysroot). Symlinks inside a
 * captured tree are resolved inside it, never outside.
 *
 * All functions return 0 or a negative errno. Paths are relative to the root ("sys/block").
 */
#ifndef NUMASTOR_ROOT_H
#define NUMASTOR_ROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

struct ns_root;

/*
 * A recorder sees every successful access, with what it returned: a file's bytes and mode,
 * a link's target, a directory's entries, a stat's mode. `numastor snapshot` uses it to
 * capture exactly what a check read.
 */
enum ns_record_op { NS_REC_FILE, NS_REC_LINK, NS_REC_DIR, NS_REC_STAT };
struct ns_record {
	enum ns_record_op op;
	const char *path; /* relative to the root */
	const char *data; /* FILE: bytes; LINK: target */
	size_t len;
	mode_t mode;		    /* FILE, STAT */
	char *const *names;	    /* DIR */
	const unsigned char *types; /* DIR: each entry's d_type (DT_DIR, DT_REG, DT_LNK, DT_UNKNOWN) */
	size_t nnames;
};
typedef void (*ns_recorder)(void *data, const struct ns_record *rec);
void ns_root_set_recorder(struct ns_root *root, ns_recorder fn, void *data);
/*
 * What the reads are for. `numastor check` tells the root which of these files its output uses
 * (text, --format prometheus, --list's columns); the readers (lib/model/system, lib/read/pci,
 * lib/read/blockdev) skip the others. Only reads whose values the output does not show, and that
 * are silent (no note when they fail: notes are output too, text lists them and prometheus counts
 * them) or whose notes it does not print either (--list in columns that judge nothing: no notes,
 * no findings), are ever skipped. A root reads everything unless told (fix, probe, snapshot,
 * --json, a --list that judges, --map): a snapshot replays to --json, so `numastor snapshot`
 * never narrows it.
 */
enum ns_need {
	NS_NEED_IDENTITY = 1u << 0,   /* model, serial, wwn, by-id: the udev data file or sysfs */
	NS_NEED_HOLDERS = 1u << 1,    /* a disk's holders/ */
	NS_NEED_SLAVES = 1u << 2,     /* a disk's slaves/ (md/dm members are read apart) */
	NS_NEED_PARTITIONS = 1u << 3, /* the partition subdirectories of a disk */
	NS_NEED_SCHEDULER = 1u << 4,  /* queue/scheduler */
	NS_NEED_TOPOLOGY = 1u << 5,   /* each online CPU's topology/thread_siblings_list (the map's SMT) */
	/* a PCI function's vectors: msi_irqs/ and each vector's files (/proc/irq, /sys/kernel/irq,
	 * debugfs) */
	NS_NEED_IRQS = 1u << 6,
	/* a disk's blk-mq queues: mq/ and each hardware queue's files, the queue/ settings
	 * (rq_affinity, nr_requests) and blk-mq's debugfs flags */
	NS_NEED_QUEUES = 1u << 7,
};
#define NS_NEED_FULL 0xffu
/* --json: everything but what only the map draws */
#define NS_NEED_JSON (NS_NEED_FULL & ~NS_NEED_TOPOLOGY)
/* text without --verbose: the device table and the notes */
#define NS_NEED_TEXT                                                                                 \
	(NS_NEED_FULL & ~(NS_NEED_IDENTITY | NS_NEED_HOLDERS | NS_NEED_SLAVES | NS_NEED_PARTITIONS | \
			  NS_NEED_SCHEDULER | NS_NEED_TOPOLOGY))
#define NS_NEED_TEXT_VERBOSE (NS_NEED_FULL & ~(NS_NEED_HOLDERS | NS_NEED_TOPOLOGY))
/* prometheus: the model label, no lists, no scheduler */
#define NS_NEED_PROM \
	(NS_NEED_FULL & ~(NS_NEED_HOLDERS | NS_NEED_SLAVES | NS_NEED_PARTITIONS | NS_NEED_SCHEDULER | NS_NEED_TOPOLOGY))
void ns_root_set_needs(struct ns_root *root, unsigned needs);
/* Whether what (NS_NEED_*) is to be read. */
bool ns_root_needs(const struct ns_root *root, unsigned what);
/*
 * Per-item reading on a small pool of threads (the per-IRQ and per-queue files): the root
 * runs fn(i, data) once for every i in [0, n), each on one of its threads, and returns when
 * all have run. Callers write each item's results (notes too) into a slot of their own and
 * assemble the slots in index order afterwards, so the output does not depend on the threads.
 * The root's readers are thread-safe while no recorder is set; with one (a snapshot) the
 * items run here, one after the other, in order, as with one thread.
 *
 * The thread count is min(NS_THREADS_DEFAULT_MAX, online CPUs / 8), at least 1, unless the
 * environment's NUMASTOR_THREADS gives a decimal 1..NS_THREADS_MAX; any other value (garbage,
 * 0, too many) means 1: one thread, the items in order, the reader as it always was.
 */
#define NS_THREADS_DEFAULT_MAX 16
#define NS_THREADS_MAX 64
/* The rule above, for NUMASTOR_THREADS's value env (NULL when unset) and online CPUs. */
unsigned ns_threads_pick(const char *env, long online);
unsigned ns_root_threads(const struct ns_root *root);
void ns_root_parallel(struct ns_root *root, size_t n, void (*fn)(size_t i, void *data), void *data);
/*
 * A directory many reads will go under (a PCI function's vectors in proc/irq and
 * sys/kernel/irq, a disk's mq/): held open, so that each read under it walks from there and
 * not from the root (the walk of "sys/devices/.../nvme0n1/mq/3/cpu_list" is most of what its
 * open costs). What a read returns does not change: only a read that succeeds from the held
 * directory is taken (in a captured tree it may not leave it), anything else is read from the
 * root as before. Held and dropped (last held first) only while no ns_root_parallel batch
 * runs, at most NS_HELD_DIRS_MAX at once; -EBUSY beyond, or the open's -errno (then reads walk
 * from the root). The snapshot's recorder and the paths in notes are unchanged.
 */
#define NS_HELD_DIRS_MAX 4
int ns_root_hold_dir(struct ns_root *root, const char *path);
void ns_root_drop_dir(struct ns_root *root);
/* What reports call the root ("/", the --sysroot directory, "snapshot:FILE"). */
void ns_root_set_label(struct ns_root *root, const char *label);

/* dir NULL or "/" opens the live root. -ENOENT / -ENOTDIR when dir is not a directory. */
int ns_root_open(const char *dir, struct ns_root **out);
void ns_root_free(struct ns_root *root);
bool ns_root_is_live(const struct ns_root *root);
const char *ns_root_dir(const struct ns_root *root); /* the label when one was set */
const char *ns_root_path(const struct ns_root *root);

/* Largest file the reader accepts; sysfs attributes are at most a page, but some
 * (per_cpu_count on big machines, meminfo) are larger. */
#define NS_READ_MAX (1024 * 1024)

/*
 * Read a whole file with cat semantics (sysfs sizes lie), trailing whitespace removed.
 * *out is a NUL-terminated malloc'd string. -ENODATA when the file is empty.
 */
int ns_read_str(struct ns_root *root, const char *path, char **out);
/* The same, also giving the file's mode (the permission bits tell managed IRQs apart). On the
 * live root this costs an fstat the other reads do without: ask for it only where it tells. */
int ns_read_str_mode(struct ns_root *root, const char *path, char **out, mode_t *mode);
/* The same for a text numastor itself wrote (its journals): a NUL byte anywhere in it is
 * -EBADMSG rather than a space, since such a file is damaged, not text. */
int ns_read_text(struct ns_root *root, const char *path, char **out);
/* The file's bytes as they are, NULs and all (an environ split on its NULs): *len of them, and a
 * NUL after the last for the caller's convenience. An empty file is 0 with *len 0. */
int ns_read_bytes(struct ns_root *root, const char *path, char **out, size_t *len);
/* ns_read_text for a file that may be larger than NS_READ_MAX: up to max bytes (never less than
 * NS_READ_MAX), -EFBIG beyond. The fix journal's limit is its writer's (lib/state/journal.h). */
int ns_read_text_max(struct ns_root *root, const char *path, size_t max, char **out);
/*
 * A decimal integer in the kernel's form (lib/base/number.h, ns_parse_dec): ns_read_str, then
 * ns_parse_dec. -EINVAL when garbled, -ERANGE outside [min, max]; on either, *raw (when raw
 * != NULL) holds the file's text for the caller's note (else NULL; the caller frees it).
 */
int ns_read_dec(struct ns_root *root, const char *path, long long min, long long max, long long *out, char **raw);
/* ns_read_dec over the whole range of long. */
int ns_read_long(struct ns_root *root, const char *path, long *out, char **raw);
/* Each thread reads into a buffer of its own; a thread that read frees it with this before it
 * ends (the main thread's goes with the process). */
void ns_root_thread_release(void);
/* The target of a symlink (as stored, not resolved). */
int ns_readlink(struct ns_root *root, const char *path, char **out);
/* The last component of a symlink's target ("../../bus/pci" -> "pci"). */
int ns_readlink_base(struct ns_root *root, const char *path, char **out);
/* Entries of a directory, sorted by strverscmp, without "." and "..". */
int ns_list_dir(struct ns_root *root, const char *path, char ***names, size_t *n);
void ns_strv_free(char **v, size_t n);
int ns_stat(struct ns_root *root, const char *path, struct stat *st);
/*
 * Is there anything at path: 1 present, 0 absent (-ENOENT, -ENOTDIR: nothing there or a file
 * where a directory is walked through), -errno when it could not be told (EIO, EMFILE, ENOMEM,
 * EACCES, ELOOP...). The caller decides what an error means: a note and the fact unknown where
 * it reports, a refusal where it changes the machine; never "absent".
 */
int ns_probe(struct ns_root *root, const char *path);
/* Canonical path (no symlinks, no "..") of path inside the root, relative to it. */
int ns_realpath(struct ns_root *root, const char *path, char **out);

/*
 * Writing, through the same root. On the live root these are the kernel's files; under a
 * sysroot they are plain files, which lets the journal, lock and revert logic be tested on a
 * captured tree (the kernel's refusals are then not simulated).
 */
/* Write text to an existing file (sysfs/procfs semantics: one write, then close). */
int ns_write_str(struct ns_root *root, const char *path, const char *text);
/* Create dir and its parents (mode 0755). */
int ns_mkdir_p(struct ns_root *root, const char *dir);
/* Replace path atomically: temp file in the same directory, fsync, rename, fsync the directory. */
int ns_write_atomic(struct ns_root *root, const char *path, const char *text, mode_t mode);
int ns_unlink(struct ns_root *root, const char *path);
/* a symbolic link at path (inside the root) to target, as given; rmdir: only an empty directory */
int ns_symlink(struct ns_root *root, const char *target, const char *path);
int ns_rmdir(struct ns_root *root, const char *path);
/* Open a file for reading, as the readers do (no symlink at the end); the fd or -errno. For the
 * few files too big for ns_read_str (proc/kallsyms). */
int ns_open_read(struct ns_root *root, const char *path);
/* Open (creating) a file for locking; returns the fd or -errno. */
int ns_open_rw(struct ns_root *root, const char *path, mode_t mode);

#endif
