/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fix journal reader (lib/state/journal.c): the input is run/numastor/journal.json of a scratch
 * root. A journal that loads must save and load again to the same entries (what --revert
 * restores is what was journaled), and every lookup on it must hold. With $NS_FUZZ_DUMP set,
 * every input that loads is written there, so tests/fuzz/validate.py can hold it against
 * schema/journal.schema.json: what the C reader accepts, the schema accepts.
 */
#define _GNU_SOURCE
#include "fuzz-common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/journal.h"

static struct ns_root *root_in, *root_out;
static char *dir_in, *dir_out;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *s = fuzz_scratch();

	if (asprintf(&dir_in, "%s/in", s) < 0 || asprintf(&dir_out, "%s/out", s) < 0)
		abort();
	fuzz_write(dir_in, NS_STATE_DIR "/.keep", "", 0, 0644);
	fuzz_write(dir_out, NS_STATE_DIR "/.keep", "", 0, 0644);
	if (ns_root_open(dir_in, &root_in) < 0 || ns_root_open(dir_out, &root_out) < 0)
		abort();
	return 0;
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ns_journal j, again;
	struct ns_cpuset cur = {0};
	int r;

	if (!root_in)
		LLVMFuzzerInitialize(NULL, NULL);
	fuzz_write(dir_in, NS_JOURNAL_PATH, data, size, 0644);
	r = ns_journal_load(root_in, &j);
	FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -EPROTO || r == -ENOMEM || r == -EFBIG || r == -ERANGE, "load: %d",
		    r);
	if (r < 0) {
		FUZZ_ASSERT(j.nirqs == 0 && j.nrqs == 0 && !j.irqs && !j.rqs, "a refused journal left entries");
		return 0;
	}
	fuzz_dump(data, size); /* the bytes as read, NULs and all */
	FUZZ_ASSERT(j.version == NS_JOURNAL_VERSION, "loaded a version %d journal", j.version);
	for (size_t i = 0; i < j.nirqs; i++) {
		const struct ns_journal_irq *e = &j.irqs[i];
		FUZZ_ASSERT(e->pci && e->name && e->previous && e->placed, "irq entry %zu lacks a field", i);
		FUZZ_ASSERT(ns_journal_find_irq(&j, e->pci, e->name) == e, "irq entry %zu is not found by its key", i);
		if (ns_cpuset_parse_list(&cur, e->placed) == 0)
			FUZZ_ASSERT(ns_journal_irq_placed(e, &cur), "irq entry %zu: its own placed set is not placed",
				    i);
		ns_cpuset_clear(&cur);
	}
	for (size_t i = 0; i < j.nrqs; i++)
		FUZZ_ASSERT(j.rqs[i].disk, "rq entry %zu has no disk", i);
	ns_journal_same_boot(&j, "00000000-0000-0000-0000-000000000000");
	/* what is saved loads again to the same entries */
	r = ns_journal_save(root_out, &j);
	FUZZ_ASSERT(r == 0, "save: %d", r);
	r = ns_journal_load(root_out, &again);
	FUZZ_ASSERT(r == 0, "a saved journal does not load again: %d", r);
	FUZZ_ASSERT(same(j.boot_id, again.boot_id) && j.nirqs == again.nirqs && j.nrqs == again.nrqs,
		    "round trip changed the journal's shape");
	for (size_t i = 0; i < j.nirqs; i++) {
		const struct ns_journal_irq *a = &j.irqs[i], *b = &again.irqs[i];
		FUZZ_ASSERT(same(a->pci, b->pci) && same(a->name, b->name) && same(a->previous, b->previous) &&
				    same(a->placed, b->placed) && same(a->counts, b->counts) &&
				    (a->irq == b->irq || (a->irq < 0 && b->irq < 0)),
			    "round trip changed irq entry %zu", i);
	}
	for (size_t i = 0; i < j.nrqs; i++) {
		const struct ns_journal_rq *a = &j.rqs[i], *b = &again.rqs[i];
		FUZZ_ASSERT(same(a->disk, b->disk) && same(a->device, b->device) && a->previous == b->previous &&
				    a->placed == b->placed,
			    "round trip changed rq entry %zu", i);
	}
	ns_journal_free(&again);
	ns_journal_free(&j);
	return 0;
}
