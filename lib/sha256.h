/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SHA-256 (FIPS 180-4), for checking module files against their manifest. */
#ifndef NUMASTOR_SHA256_H
#define NUMASTOR_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct ns_sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t nbuf;
};

void ns_sha256_init(struct ns_sha256 *c);
void ns_sha256_update(struct ns_sha256 *c, const void *data, size_t n);
/* hex: 65 bytes, NUL-terminated lowercase hex digest */
void ns_sha256_final(struct ns_sha256 *c, char hex[65]);
/* Digest of a file opened with fd (read to the end). */
int ns_sha256_fd(int fd, char hex[65]);

#endif
