/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SHA-256 (FIPS 180-4), for checking module files against their manifest, and HMAC-SHA256 for
 * the machine's app-specific id in every JSON document. */
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
/* out: the 32-byte digest */
void ns_sha256_final_raw(struct ns_sha256 *c, unsigned char out[32]);
/*
 * The application-specific id of a machine, as sd_id128_get_machine_app_specific() and
 * `systemd-id128 machine-id --app-specific=APP` give it: HMAC-SHA256 keyed by the machine id
 * over the app id, its first 128 bits as a v4 UUID, 32 lowercase hex digits in out. Both ids
 * are 32 hex digits (machine_id may end in a newline, as /etc/machine-id does). -EINVAL else.
 */
int ns_id128_app_specific(const char *machine_id, const char *app_id, char out[33]);
/* Digest of a file opened with fd (read to the end). */
int ns_sha256_fd(int fd, char hex[65]);

#endif
