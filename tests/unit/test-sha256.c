/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SHA-256 against the FIPS 180-4 example vectors and sha256sum on a file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/sha256.h"
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

	/* the app-specific machine id, against systemd's: `systemd-id128 machine-id
	 * --app-specific=0123456789abcdef0123456789abcdef` on a machine whose /etc/machine-id is
	 * 3d1219c7c4c5404aaa1f6d2a48adfda4 printed f50949f4874348419c64d04b15fd1889 */
	{
		char id[33];
		CHECK(ns_id128_app_specific("3d1219c7c4c5404aaa1f6d2a48adfda4\n", "0123456789abcdef0123456789abcdef",
					    id) == 0);
		CHECK_STR(id, "f50949f4874348419c64d04b15fd1889");
		CHECK(ns_id128_app_specific("3D1219C7C4C5404AAA1F6D2A48ADFDA4", "0123456789abcdef0123456789abcdef",
					    id) == 0);
		CHECK_STR(id, "f50949f4874348419c64d04b15fd1889");
		/* anything but 32 hex digits (and one newline) is no id */
		CHECK(ns_id128_app_specific("3d1219c7c4c5404aaa1f6d2a48adfda", "0123456789abcdef0123456789abcdef",
					    id) == -EINVAL);
		CHECK(ns_id128_app_specific("3d1219c7c4c5404aaa1f6d2a48adfda4x", "0123456789abcdef0123456789abcdef",
					    id) == -EINVAL);
		CHECK(ns_id128_app_specific("uninitialized\n", "0123456789abcdef0123456789abcdef", id) == -EINVAL);
		/* and this machine's, when systemd-id128 is here to say it */
		p = popen("/usr/bin/systemd-id128 machine-id --app-specific=0123456789abcdef0123456789abcdef "
			  "2>/dev/null",
			  "r");
		want[0] = '\0';
		if (p) {
			if (fscanf(p, "%32s", want) != 1)
				want[0] = '\0';
			pclose(p);
		}
		fd = open("/etc/machine-id", O_RDONLY);
		if (*want && fd >= 0) {
			char mid[64] = "";
			ssize_t n = read(fd, mid, sizeof(mid) - 1);
			mid[n > 0 ? n : 0] = '\0';
			CHECK(ns_id128_app_specific(mid, "0123456789abcdef0123456789abcdef", id) == 0);
			CHECK_STR(id, want);
		}
		if (fd >= 0)
			close(fd);
	}
	return tap_done("sha256");
}
