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

/*
 * The function of the chunk checksums of an image (KfdProcess.chunk_sum).
 * A chain of incremental images uses one function throughout: a dump
 * takes its parent's.
 *   KP_SUM_FOLD64  kp_sum_buf() above: image version 2 (written before
 *                  version 3; chunk_sum absent). One multiply chain, 8
 *                  bytes a step.
 *   KP_SUM_XXH64   XXH64 with seed 0, the xxHash project's 64-bit hash
 *                  (four independent lanes of 8 bytes, so several words
 *                  are in flight at once): what version 3 dumps write.
 */
enum kp_sum_kind {
	KP_SUM_FOLD64 = 0,
	KP_SUM_XXH64 = 1,
};
#define KP_SUM_KINDS	2

/* XXH64 of one buffer, seed 0. */
uint64_t kp_xxh64(const void *data, size_t len);
/* The chunk checksum @kind of @data; @kind must be a known one. */
uint64_t kp_chunk_sum(enum kp_sum_kind kind, const void *data, size_t len);
/* The chunk checksum @kind of @len zero bytes. */
uint64_t kp_chunk_sum_zeros(enum kp_sum_kind kind, uint64_t len);
/* "fold64", "xxh64", or "?" */
const char *kp_sum_kind_name(unsigned int kind);
/*
 * Save side of one chunk, one pass: is it all zeros? If not, its
 * checksum @kind goes to @sum. Only a chunk that starts with zeros is
 * read twice, and then only its zero head (cache-hot).
 */
bool kp_chunk_scan(enum kp_sum_kind kind, const void *data, size_t len,
		   uint64_t *sum);

#endif /* KFD_PLUGIN_CHECKSUM_H */
