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

static inline uint64_t kp_load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * 256 bytes a step: the OR of 32 words, then one test and branch. Under
 * emulation (TCG) every guest branch ends a translated block, so a longer
 * step costs fewer block exits per byte (measured in the guest: bench_io
 * mem, "zero-test" against the 64-byte step it replaced).
 */
#define KP_ZERO_STEP	256

bool kp_is_zero(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t acc;
	unsigned int i;

	for (; len >= KP_ZERO_STEP; p += KP_ZERO_STEP, len -= KP_ZERO_STEP) {
		acc = 0;
#pragma GCC unroll 32
		for (i = 0; i < KP_ZERO_STEP; i += 8)
			acc |= kp_load64(p + i);
		if (acc)
			return false;
	}
	for (; len >= 8; p += 8, len -= 8)
		if (kp_load64(p))
			return false;
	while (len--)
		if (*p++)
			return false;
	return true;
}

/* ---- XXH64 (seed 0), after the xxHash specification ---- */

#define KP_X1	0x9e3779b185ebca87ULL
#define KP_X2	0xc2b2ae3d27d4eb4fULL
#define KP_X3	0x165667b19e3779f9ULL
#define KP_X4	0x85ebca77c2b2ae63ULL
#define KP_X5	0x27d4eb2f165667c5ULL

static inline uint64_t kp_rotl64(uint64_t v, unsigned int r)
{
	return (v << r) | (v >> (64 - r));
}

static inline uint64_t kp_xround(uint64_t acc, uint64_t in)
{
	return kp_rotl64(acc + in * KP_X2, 31) * KP_X1;
}

static inline uint64_t kp_xmerge(uint64_t h, uint64_t lane)
{
	return (h ^ kp_xround(0, lane)) * KP_X1 + KP_X4;
}

static inline void kp_xinit(uint64_t *a, uint64_t *b, uint64_t *c,
			    uint64_t *d)
{
	*a = KP_X1 + KP_X2;
	*b = KP_X2;
	*c = 0;
	*d = -KP_X1;
}

/* The four lanes into one value. */
static inline uint64_t kp_xlanes(uint64_t a, uint64_t b, uint64_t c,
				 uint64_t d)
{
	uint64_t h = kp_rotl64(a, 1) + kp_rotl64(b, 7) + kp_rotl64(c, 12) +
		     kp_rotl64(d, 18);

	return kp_xmerge(kp_xmerge(kp_xmerge(kp_xmerge(h, a), b), c), d);
}

static inline uint64_t kp_xavalanche(uint64_t h)
{
	h ^= h >> 33;
	h *= KP_X2;
	h ^= h >> 29;
	h *= KP_X3;
	return h ^ (h >> 32);
}

static inline uint32_t kp_load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

uint64_t kp_xxh64(const void *data, size_t len)
{
	const uint8_t *p = data, *end = p + len;
	uint64_t h, a, b, c, d;

	if (len >= 32) {
		kp_xinit(&a, &b, &c, &d);
		/* 32-byte stripes: four lanes that do not wait on each other. */
		do {
			a = kp_xround(a, kp_load_le64(p));
			b = kp_xround(b, kp_load_le64(p + 8));
			c = kp_xround(c, kp_load_le64(p + 16));
			d = kp_xround(d, kp_load_le64(p + 24));
			p += 32;
		} while (end - p >= 32);
		h = kp_xlanes(a, b, c, d);
	} else {
		h = KP_X5;
	}
	h += (uint64_t)len;
	for (; end - p >= 8; p += 8)
		h = kp_rotl64(h ^ kp_xround(0, kp_load_le64(p)), 27) * KP_X1 +
		    KP_X4;
	if (end - p >= 4) {
		h = kp_rotl64(h ^ (uint64_t)kp_load_le32(p) * KP_X1, 23) *
		    KP_X2 + KP_X3;
		p += 4;
	}
	for (; p < end; p++)
		h = kp_rotl64(h ^ *p * KP_X5, 11) * KP_X1;
	return kp_xavalanche(h);
}

uint64_t kp_chunk_sum(enum kp_sum_kind kind, const void *data, size_t len)
{
	return kind == KP_SUM_XXH64 ? kp_xxh64(data, len) :
				      kp_sum_buf(data, len);
}

/* XXH64 of @len zero bytes: kp_xxh64() with every load 0. */
static uint64_t kp_xxh64_zeros(uint64_t len)
{
	uint64_t h, a, b, c, d, left = len;

	if (len >= 32) {
		kp_xinit(&a, &b, &c, &d);
		do {
			a = kp_xround(a, 0);
			b = kp_xround(b, 0);
			c = kp_xround(c, 0);
			d = kp_xround(d, 0);
			left -= 32;
		} while (left >= 32);
		h = kp_xlanes(a, b, c, d);
	} else {
		h = KP_X5;
	}
	h += len;
	for (; left >= 8; left -= 8)
		h = kp_rotl64(h ^ kp_xround(0, 0), 27) * KP_X1 + KP_X4;
	if (left >= 4) {
		h = kp_rotl64(h, 23) * KP_X2 + KP_X3;
		left -= 4;
	}
	for (; left; left--)
		h = kp_rotl64(h, 11) * KP_X1;
	return kp_xavalanche(h);
}

uint64_t kp_chunk_sum_zeros(enum kp_sum_kind kind, uint64_t len)
{
	return kind == KP_SUM_XXH64 ? kp_xxh64_zeros(len) : kp_sum_zeros(len);
}

const char *kp_sum_kind_name(unsigned int kind)
{
	return kind == KP_SUM_FOLD64 ? "fold64" :
	       kind == KP_SUM_XXH64 ? "xxh64" : "?";
}

bool kp_chunk_scan(enum kp_sum_kind kind, const void *data, size_t len,
		   uint64_t *sum)
{
	if (kp_is_zero(data, len))
		return true;
	*sum = kp_chunk_sum(kind, data, len);
	return false;
}
