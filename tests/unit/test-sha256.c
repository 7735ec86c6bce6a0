/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SHA-256 against the FIPS 180-4 example vectors and sha256sum on a file. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "sha256.h"
#include "tap.h"

static const char *digest(const char *s, size_t repeat)
{
	static char hex[65];
	struct ns_sha256 c;
	ns_sha256_init(&c);
	for (size_t i = 0; i < repeat; i++)
		ns_sha256_update(&c, s, strlen(s));
	ns_sha256_final(&c, hex);
	return hex;
}

int main(void)
{
	char hex[65], cmd[256], want[65] = "";
	char path[] = "/tmp/numastor-sha256.XXXXXX";
	int fd;
	FILE *p;

	CHECK_STR(digest("abc", 1), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CHECK_STR(digest("", 1), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	CHECK_STR(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1),
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	CHECK_STR(digest("a", 1000000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	/* a file, against coreutils */
	fd = mkstemp(path);
	CHECK(fd >= 0);
	{
		ssize_t total = 0;
		for (int i = 0; i < 1000; i++)
			total += write(fd, "numastor\n", 9);
		CHECK(total == 9000);
	}
	lseek(fd, 0, SEEK_SET);
	CHECK(ns_sha256_fd(fd, hex) == 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "sha256sum %s", path);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%64s", want) != 1)
			want[0] = '\0';
		pclose(p);
	}
	CHECK_STR(hex, want);
	unlink(path);
	return tap_done("sha256");
}
