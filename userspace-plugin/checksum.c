// SPDX-License-Identifier: GPL-2.0
/*
 * The BO contents checksum; see checksum.h.
 */
#include <string.h>

#include "checksum.h"

#define KP_SUM_SEED	0x6b66647375636b31ULL	/* arbitrary start value */
#define KP_SUM_MUL	0x9e3779b97f4a7c15ULL	/* odd, dense bit pattern */

static inline uint64_t kp_sum_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * KP_SUM_MUL;
	return h ^ (h >> 29);
}

static inline uint64_t kp_load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

void kp_sum_init(struct kp_sum *s)
{
	memset(s, 0, sizeof(*s));
	s->h = KP_SUM_SEED;
}

void kp_sum_update(struct kp_sum *s, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t take;

	s->len += len;
	if (s->ntail) {
		take = 8 - s->ntail;
		if (take > len)
			take = len;
		memcpy(s->tail + s->ntail, p, take);
		s->ntail += take;
		p += take;
		len -= take;
		if (s->ntail < 8)
			return;
		s->h = kp_sum_word(s->h, kp_load_le64(s->tail));
		s->ntail = 0;
	}
	for (; len >= 8; p += 8, len -= 8)
		s->h = kp_sum_word(s->h, kp_load_le64(p));
	memcpy(s->tail, p, len);
	s->ntail = len;
}

uint64_t kp_sum_final(const struct kp_sum *s)
{
	uint8_t last[8] = { 0 };
	uint64_t h = s->h;

	if (s->ntail) {
		memcpy(last, s->tail, s->ntail);
		h = kp_sum_word(h, kp_load_le64(last));
	}
	/* Length, then a final avalanche (xor-shift-multiply rounds). */
	h ^= s->len;
	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ULL;
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ULL;
	h ^= h >> 32;
	return h;
}

uint64_t kp_sum_buf(const void *data, size_t len)
{
	struct kp_sum s;

	kp_sum_init(&s);
	kp_sum_update(&s, data, len);
	return kp_sum_final(&s);
}

void kp_sum_u64(struct kp_sum *s, uint64_t v)
{
	uint8_t b[8];
	unsigned int i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	kp_sum_update(s, b, sizeof(b));
}

static const uint64_t kp_zero_words[512];

uint64_t kp_sum_zeros(uint64_t len)
{
	struct kp_sum s;
	size_t n;

	kp_sum_init(&s);
	while (len) {
		n = len < sizeof(kp_zero_words) ? (size_t)len :
						  sizeof(kp_zero_words);
		kp_sum_update(&s, kp_zero_words, n);
		len -= n;
	}
	return kp_sum_final(&s);
}

bool kp_is_zero(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t w[8], acc;
	unsigned int i;

	/* 64 bytes at a time (memcpy: no alignment assumed), early out. */
	for (; len >= sizeof(w); p += sizeof(w), len -= sizeof(w)) {
		memcpy(w, p, sizeof(w));
		acc = 0;
		for (i = 0; i < 8; i++)
			acc |= w[i];
		if (acc)
			return false;
	}
	while (len--)
		if (*p++)
			return false;
	return true;
}
