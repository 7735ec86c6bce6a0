/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/sha256.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/number.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void block(struct ns_sha256 *c, const unsigned char *p)
{
	uint32_t w[64], a, b, d, e, f, g, h, cc;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
		       (uint32_t)p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
		uint32_t ch = (e & f) ^ (~e & g);
		uint32_t t1 = h + s1 + ch + K[i] + w[i];
		uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
		uint32_t maj = (a & b) ^ (a & cc) ^ (b & cc);
		uint32_t t2 = s0 + maj;
		h = g, g = f, f = e, e = d + t1, d = cc, cc = b, b = a, a = t1 + t2;
	}
	c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d;
	c->h[4] += e, c->h[5] += f, c->h[6] += g, c->h[7] += h;
}

void ns_sha256_init(struct ns_sha256 *c)
{
	static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
				       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	memcpy(c->h, H0, sizeof(H0));
	c->len = 0;
	c->nbuf = 0;
}

void ns_sha256_update(struct ns_sha256 *c, const void *data, size_t n)
{
	const unsigned char *p = data;

	c->len += n;
	while (n) {
		size_t take = 64 - c->nbuf < n ? 64 - c->nbuf : n;
		memcpy(c->buf + c->nbuf, p, take);
		c->nbuf += take;
		p += take;
		n -= take;
		if (c->nbuf == 64) {
			block(c, c->buf);
			c->nbuf = 0;
		}
	}
}

void ns_sha256_final_raw(struct ns_sha256 *c, unsigned char out[32])
{
	uint64_t bits = c->len * 8;
	unsigned char pad = 0x80, len[8];

	ns_sha256_update(c, &pad, 1);
	pad = 0;
	while (c->nbuf != 56)
		ns_sha256_update(c, &pad, 1);
	for (int i = 0; i < 8; i++)
		len[i] = (unsigned char)(bits >> (56 - 8 * i));
	ns_sha256_update(c, len, 8);
	for (int i = 0; i < 32; i++)
		out[i] = (unsigned char)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

void ns_sha256_final(struct ns_sha256 *c, char hex[65])
{
	unsigned char d[32];

	ns_sha256_final_raw(c, d);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* 32 lowercase or uppercase hex digits -> 16 bytes; -EINVAL otherwise */
static int id128_parse(const char *s, unsigned char id[16])
{
	for (int i = 0; i < 16; i++) {
		int hi = ns_hex_digit(s[2 * i]), lo = hi < 0 ? -1 : ns_hex_digit(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		id[i] = (unsigned char)(hi << 4 | lo);
	}
	return s[32] == '\0' || s[32] == '\n' ? 0 : -EINVAL;
}

int ns_id128_app_specific(const char *machine_id, const char *app_id, char out[33])
{
	unsigned char key[64] = {0}, app[16], inner[32], mac[32], pad[64];
	struct ns_sha256 c;

	if (id128_parse(machine_id, key) < 0 || id128_parse(app_id, app) < 0)
		return -EINVAL;
	/* HMAC-SHA256 (RFC 2104), keyed by the 16 bytes of the machine id, over the app id */
	for (int i = 0; i < 64; i++)
		pad[i] = key[i] ^ 0x36;
	ns_sha256_init(&c);
	ns_sha256_update(&c, pad, 64);
	ns_sha256_update(&c, app, 16);
	ns_sha256_final_raw(&c, inner);
	for (int i = 0; i < 64; i++)
		pad[i] = key[i] ^ 0x5c;
	ns_sha256_init(&c);
	ns_sha256_update(&c, pad, 64);
	ns_sha256_update(&c, inner, 32);
	ns_sha256_final_raw(&c, mac);
	/* the first 128 bits, made a version-4 UUID as systemd makes them */
	mac[6] = (unsigned char)((mac[6] & 0x0f) | 0x40);
	mac[8] = (unsigned char)((mac[8] & 0x3f) | 0x80);
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
	return 0;
}

int ns_sha256_fd(int fd, char hex[65])
{
	struct ns_sha256 c;
	unsigned char buf[65536];
	ssize_t n;

	ns_sha256_init(&c);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		ns_sha256_update(&c, buf, (size_t)n);
	}
	ns_sha256_final(&c, hex);
	return 0;
}
