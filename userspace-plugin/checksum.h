/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A streaming 64-bit checksum of BO contents.
 *
 * Not cryptographic: it only has to catch a damaged or mixed-up pages
 * image. The data is taken as little-endian 64-bit words; each word is
 * folded in with a multiply and a shift (so every input bit reaches every
 * output bit), and the total length is mixed in at the end. Feeding the
 * data in pieces of any size gives the same result as one piece.
 */
#ifndef KFD_PLUGIN_CHECKSUM_H
#define KFD_PLUGIN_CHECKSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_sum {
	uint64_t h;
	uint64_t len;
	uint8_t tail[8];	/* bytes of an incomplete word */
	unsigned int ntail;
};

void kp_sum_init(struct kp_sum *s);
void kp_sum_update(struct kp_sum *s, const void *data, size_t len);
uint64_t kp_sum_final(const struct kp_sum *s);
/* Checksum of one buffer. */
uint64_t kp_sum_buf(const void *data, size_t len);
/* Feed one value, as 8 little-endian bytes. */
void kp_sum_u64(struct kp_sum *s, uint64_t v);
/* Checksum of @len zero bytes, without a buffer of them. */
uint64_t kp_sum_zeros(uint64_t len);
/* Does @data hold only zero bytes? */
bool kp_is_zero(const void *data, size_t len);

#endif /* KFD_PLUGIN_CHECKSUM_H */
