/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The driver of a plain (non-libFuzzer) build: feeds every file named, and every file in every
 * directory named, to the harness once. `meson test --suite fuzz` replays each harness's seed
 * corpus (and every input that ever crashed it) this way in the gcc and the ASan builds.
 */
#define _GNU_SOURCE
#include "fuzz-common.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f) {
		perror(path);
		return -1;
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = 0;
	int bad = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			bad = 1;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			struct dirent **ents;
			int k = scandir(argv[i], &ents, NULL, alphasort);
			if (k < 0) {
				perror(argv[i]);
				bad = 1;
				continue;
			}
			for (int e = 0; e < k; e++) {
				char *p;
				if (ents[e]->d_name[0] != '.' && asprintf(&p, "%s/%s", argv[i], ents[e]->d_name) >= 0) {
					struct stat fs;
					if (stat(p, &fs) == 0 && S_ISREG(fs.st_mode)) {
						bad |= run_file(p) < 0;
						n++;
					}
					free(p);
				}
				free(ents[e]);
			}
			free(ents);
		} else {
			bad |= run_file(argv[i]) < 0;
			n++;
		}
	}
	printf("%s: %lu inputs replayed\n", argv[0], n);
	if (n == 0) {
		fprintf(stderr, "%s: no input to replay\n", argv[0]);
		return 1;
	}
	return bad;
}
