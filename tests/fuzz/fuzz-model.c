/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The whole model: a fixture machine (tests/fixtures/gen-fixtures.py) with one of its files
 * replaced by the input, then what `numastor check` does: discover, findings, the JSON
 * document, the text and Prometheus reports. The JSON must be valid UTF-8 and parse back; the
 * text and Prometheus reports must hold no control character but newline and tab. With
 * $NS_FUZZ_DUMP set every JSON document is written there for tests/fuzz/validate.py (the
 * schema, patterns included).
 *
 * Input: byte 0 is the kind of replacement (bit 0 set: a symlink whose target is the content,
 * else a regular file holding it); byte 1 is n, the length of the selector that follows: the
 * file replaced is the first (in sorted order) whose path ends with the selector, or when none
 * does, the one a hash of the selector picks. The rest is the content. So a seed names its file
 * ("\0\x09numa_node4294967297\n") and a mutated one still lands on some file.
 *
 * The fixture is generated once per process into the scratch directory: $NS_FUZZ_FIXTURE names
 * which (default forced-sibling-other-node: two NVMe functions, one with a forced node); the file is put back after
 * every input.
 */
#define _GNU_SOURCE
#include "fuzz-common.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/findings.h"
#include "out/json.h"
#include "map.h"
#include "numastor.h"
#include "model/system.h"

#ifndef NS_SOURCE_ROOT
#error "NS_SOURCE_ROOT must name the source tree (for tests/fixtures/gen-fixtures.py)"
#endif

struct entry {
	char *rel; /* path inside the tree */
	bool link;
	char *data; /* content, or link target */
	size_t len;
	mode_t mode;
};

static char *tree;
static size_t treelen;
static struct entry *ents;
static size_t nents, cap;

static int collect(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	struct entry e = {0};

	if (!S_ISREG(st->st_mode) && !S_ISLNK(st->st_mode))
		return 0;
	e.rel = strdup(p + treelen + 1);
	e.mode = st->st_mode & 07777;
	e.link = S_ISLNK(st->st_mode);
	if (e.link) {
		char t[4096];
		ssize_t l = readlink(p, t, sizeof(t) - 1);
		if (l < 0)
			abort();
		e.data = fuzz_strndup((const uint8_t *)t, (size_t)l);
		e.len = (size_t)l;
	} else {
		FILE *f = fopen(p, "rb");
		size_t got, c = (size_t)st->st_size + 1;
		if (!f)
			abort();
		e.data = malloc(c);
		got = fread(e.data, 1, c, f);
		fclose(f);
		e.len = got;
	}
	if (nents == cap) {
		cap = cap ? cap * 2 : 1024;
		ents = realloc(ents, cap * sizeof(*ents));
		if (!ents)
			abort();
	}
	ents[nents++] = e;
	return 0;
}

static int by_rel(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->rel, ((const struct entry *)b)->rel);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *name = getenv("NS_FUZZ_FIXTURE");
	char *cmd;

	if (!name || !*name)
		name = "forced-sibling-other-node";
	if (asprintf(&tree, "%s/%s", fuzz_scratch(), name) < 0 ||
	    asprintf(&cmd, "python3 '%s/tests/fixtures/gen-fixtures.py' '%s' '%s' >/dev/null", NS_SOURCE_ROOT,
		     fuzz_scratch(), name) < 0)
		abort();
	if (system(cmd) != 0) {
		fprintf(stderr, "fuzz-model: cannot generate fixture %s (%s)\n", name, cmd);
		exit(1);
	}
	free(cmd);
	treelen = strlen(tree);
	nftw(tree, collect, 16, FTW_PHYS);
	if (nents == 0) {
		fprintf(stderr, "fuzz-model: fixture %s has no files\n", name);
		exit(1);
	}
	qsort(ents, nents, sizeof(*ents), by_rel);
	return 0;
}

static size_t pick(const char *sel, size_t n)
{
	uint32_t h = 2166136261u;

	if (n)
		for (size_t i = 0; i < nents; i++) {
			size_t l = strlen(ents[i].rel);
			if (l >= n && memcmp(ents[i].rel + l - n, sel, n) == 0 &&
			    (l == n || ents[i].rel[l - n - 1] == '/'))
				return i;
		}
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)sel[i]) * 16777619u;
	return h % nents;
}

static char *full(const struct entry *e)
{
	char *p;

	if (asprintf(&p, "%s/%s", tree, e->rel) < 0)
		abort();
	return p;
}

static void put(const struct entry *e, bool link, const char *data, size_t len)
{
	char *p = full(e);

	unlink(p);
	if (link) {
		char *t = fuzz_strndup((const uint8_t *)data, len);
		/* an empty target is no link at all, nor one beyond PATH_MAX (ENAMETOOLONG):
		 * the file is then simply gone */
		if (*t && symlink(t, p) < 0 && errno != ENAMETOOLONG)
			abort();
		free(t);
	} else {
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			abort();
		if (len && write(fd, data, len) != (ssize_t)len)
			abort();
		fchmod(fd, e->mode);
		close(fd);
	}
	free(p);
}

static void clean_text(const char *what, const char *s, size_t len, const char *file)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		FUZZ_ASSERT(c >= 0x20 ? c != 0x7f : (c == '\n' || c == '\t'),
			    "%s report holds control byte 0x%02x at %zu (file %s)", what, c, i, file);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ns_root *root = NULL;
	struct ns_system sys;
	struct ns_findings findings = {0};
	const struct entry *e;
	size_t n, skip;
	bool link;
	int r;

	if (!tree)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size < 2)
		return 0;
	link = data[0] & 1;
	n = data[1];
	if (n > size - 2)
		n = size - 2;
	e = &ents[pick((const char *)data + 2, n)];
	skip = 2 + n;
	put(e, link, (const char *)data + skip, size - skip);

	r = ns_root_open(tree, &root);
	FUZZ_ASSERT(r == 0, "root: %d", r);
	r = ns_system_discover(root, NULL, 0, &sys);
	if (r == 0) {
		struct json_object *back;
		struct ns_jsonw w;
		char *txt;
		size_t txtlen = 0;
		char *buf = NULL;
		size_t len = 0;
		FILE *f;
		struct ns_text_opts topts = {0};

		r = ns_findings_evaluate(&sys, &findings);
		FUZZ_ASSERT(r == 0, "findings: %d (file %s)", r, e->rel);
		/* the document check --json streams, through the writer */
		ns_jsonw_init_buffer(&w, SIZE_MAX);
		r = ns_json_write_check(&w, &sys, &findings, "fuzz", true);
		FUZZ_ASSERT(r == 0, "no JSON document: %d (file %s)", r, e->rel);
		txt = ns_jsonw_buffer(&w, &txtlen);
		ns_jsonw_free(&w);
		FUZZ_ASSERT(txt && strlen(txt) == txtlen, "JSON document with a NUL (file %s)", e->rel);
		FUZZ_ASSERT(fuzz_utf8_valid(txt, txtlen), "JSON is not valid UTF-8 (file %s)", e->rel);
		back = json_tokener_parse(txt);
		FUZZ_ASSERT(back && json_object_is_type(back, json_type_object), "JSON does not parse back (file %s)",
			    e->rel);
		fuzz_dump(txt, txtlen);
		json_object_put(back);
		free(txt);

		f = open_memstream(&buf, &len);
		FUZZ_ASSERT(f, "memstream");
		ns_print_text(f, &sys, &findings, &topts);
		fclose(f);
		clean_text("text", buf, len, e->rel);
		free(buf);
		buf = NULL;
		f = open_memstream(&buf, &len);
		FUZZ_ASSERT(f, "memstream");
		ns_print_prometheus(f, &sys, &findings);
		fclose(f);
		clean_text("prometheus", buf, len, e->rel);
		free(buf);
		buf = NULL;
		/* the map, at the narrowest width it takes, and its SVG */
		f = open_memstream(&buf, &len);
		FUZZ_ASSERT(f, "memstream");
		ns_print_map(f, &sys, &findings, 40);
		fclose(f);
		clean_text("map", buf, len, e->rel);
		free(buf);
		buf = NULL;
		f = open_memstream(&buf, &len);
		FUZZ_ASSERT(f, "memstream");
		FUZZ_ASSERT(ns_print_svg(f, &sys, &findings) == 0, "no SVG (file %s)", e->rel);
		fclose(f);
		clean_text("svg", buf, len, e->rel);
		free(buf);
		ns_findings_free(&findings);
		ns_system_free(&sys);
	} else {
		/* check exits 3 with the reason: any errno will do, as long as nothing broke */
		ns_system_free(&sys);
	}
	ns_root_free(root);
	put(e, e->link, e->data, e->len);
	return 0;
}
