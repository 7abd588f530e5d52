/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Philox4x32-10 on the host CPU, the reference for what Debian's rocRAND
 * (librocrand1 5.3.3) generates with ROCRAND_RNG_PSEUDO_PHILOX4_32_10:
 * computed here from the published algorithm (Salmon et al., "Parallel
 * random numbers: as easy as 1, 2, 3", SC 2011), not from the library.
 * Used by the gfx9 area's rocrand_app and by the e2e test's rocm_lib_app.
 *
 * rocRAND's conventions (its 5.3.3 sources, library/src/rng/
 * philox4x32_10.hpp and rocrand_philox4x32_10.h): the key is the seed (low
 * word first), the 128-bit counter starts at 0 (subsequence 0, offset 0),
 * counter value c gives numbers 4c..4c+3 of the stream, and each
 * rocrand_generate*() call continues where the previous one stopped (a
 * uniform double takes two numbers). On an aligned buffer whose size is a
 * multiple of 4 the output is the stream in order.
 *
 * uniform float: 2^-32 + v * 2^-32, exact product, one rounding;
 * uniform double: the 53-bit integer (v2 >> 11) << 32 | v1, times 2^-53
 * plus 2^-53, one rounding. Both are computed with the host's IEEE
 * arithmetic, which rounds the same way.
 */
#ifndef KFDSIM_PHILOX_REF_H
#define KFDSIM_PHILOX_REF_H

#include <stdint.h>

/* One block: ten rounds of the S-box of two 32x32->64 multiplies. */
static inline void philox_ref_block(const uint32_t ctr[4], uint64_t seed,
				    uint32_t out[4])
{
	uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
	uint32_t x0 = ctr[0], x1 = ctr[1], x2 = ctr[2], x3 = ctr[3];

	for (int r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)0xD2511F53u * x0;
		uint64_t p1 = (uint64_t)0xCD9E8D57u * x2;
		uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0;
		uint32_t y1 = (uint32_t)p1;
		uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1;
		uint32_t y3 = (uint32_t)p0;

		x0 = y0;
		x1 = y1;
		x2 = y2;
		x3 = y3;
		k0 += 0x9E3779B9u;	/* golden ratio */
		k1 += 0xBB67AE85u;	/* sqrt(3) - 1 */
	}
	out[0] = x0;
	out[1] = x1;
	out[2] = x2;
	out[3] = x3;
}

/* Number @i of the stream of @seed (subsequence 0). */
static inline uint32_t philox_ref_at(uint64_t seed, uint64_t i)
{
	uint32_t c[4] = { (uint32_t)(i / 4), (uint32_t)(i / 4 >> 32), 0, 0 };
	uint32_t o[4];

	philox_ref_block(c, seed, o);
	return o[i % 4];
}

/* rocrand_generate_uniform()'s float for the number @v. */
static inline float philox_ref_float(uint32_t v)
{
	return 0x1p-32f + (float)v * 0x1p-32f;
}

/* rocrand_generate_uniform_double()'s double for numbers @v1, @v2. */
static inline double philox_ref_double(uint32_t v1, uint32_t v2)
{
	uint64_t v = (uint64_t)(v2 >> 11) << 32 | v1;

	return 0x1p-53 + (double)v * 0x1p-53;
}

#endif /* KFDSIM_PHILOX_REF_H */
