// SPDX-License-Identifier: GPL-2.0
/*
 * Debian's rocRAND (librocrand1 5.3.3) on kfdsim: the library's own gfx906
 * code object generates with the Philox4x32-10 generator and a fixed seed,
 * and the program compares every number with Philox4x32-10 computed here on
 * the CPU from the published algorithm (Salmon et al., "Parallel random
 * numbers: as easy as 1, 2, 3", SC 2011).
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
 * plus 2^-53, one rounding. Both are computed here with the host's IEEE
 * arithmetic, which rounds the same way.
 *
 * Prints "ROCRAND OK" and exits 0 when every number matches. With the
 * argument "double" it also checks rocrand_generate_uniform_double().
 */
#include <hip/hip_runtime.h>
#include <rocrand/rocrand.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED 0x0123456789abcdefULL

struct ph_ctr {
	uint32_t w[4];
};

/* Philox4x32-10: ten rounds of the S-box of two 32x32->64 multiplies. */
static void philox(const struct ph_ctr *in, uint64_t seed, uint32_t out[4])
{
	uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
	uint32_t x0 = in->w[0], x1 = in->w[1], x2 = in->w[2], x3 = in->w[3];

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

/* Number i of the stream (subsequence 0). */
static uint32_t stream_at(uint64_t i)
{
	struct ph_ctr c = { { (uint32_t)(i / 4), (uint32_t)(i / 4 >> 32), 0, 0 } };
	uint32_t o[4];

	philox(&c, SEED, o);
	return o[i % 4];
}

#define CK(x) do { hipError_t e = (x); if (e) { printf("FAIL %s: %s\n", #x, hipGetErrorString(e)); return 1; } } while (0)
#define CR(x) do { rocrand_status s = (x); if (s != ROCRAND_STATUS_SUCCESS) { printf("FAIL %s: rocrand status %d\n", #x, (int)s); return 1; } } while (0)

int main(int argc, char **argv)
{
	const size_t n = 1 << 16;	/* a multiple of 4 */
	int with_double = argc > 1 && !strcmp(argv[1], "double");
	uint32_t *u = (uint32_t *)malloc(n * 4);
	float *f = (float *)malloc(n * 4);
	double *d = (double *)malloc(n * 8);
	rocrand_generator g;
	uint64_t pos = 0;
	size_t bad = 0;
	void *dev;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!u || !f || !d)
		return 1;
	CK(hipMalloc(&dev, n * 8));
	CR(rocrand_create_generator(&g, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
	CR(rocrand_set_seed(g, SEED));

	/* Two calls: the second continues the stream. */
	for (int call = 0; call < 2; call++) {
		CR(rocrand_generate(g, (unsigned int *)dev, n));
		CK(hipDeviceSynchronize());
		CK(hipMemcpy(u, dev, n * 4, hipMemcpyDeviceToHost));
		for (size_t i = 0; i < n; i++, pos++)
			if (u[i] != stream_at(pos) && bad++ < 5)
				printf("uint call %d [%zu]: got 0x%08x want 0x%08x\n",
				       call, i, u[i], stream_at(pos));
	}
	printf("rocrand_generate: %zu numbers, %zu wrong\n", 2 * n, bad);

	CR(rocrand_generate_uniform(g, (float *)dev, n));
	CK(hipDeviceSynchronize());
	CK(hipMemcpy(f, dev, n * 4, hipMemcpyDeviceToHost));
	for (size_t i = 0; i < n; i++, pos++) {
		float want = 0x1p-32f + (float)stream_at(pos) * 0x1p-32f;

		if (memcmp(&f[i], &want, 4) && bad++ < 5)
			printf("float [%zu]: got %a want %a\n", i, f[i], want);
	}
	printf("rocrand_generate_uniform: %zu floats, %zu wrong in all\n", n,
	       bad);

	if (with_double) {
		CR(rocrand_generate_uniform_double(g, (double *)dev, n));
		CK(hipDeviceSynchronize());
		CK(hipMemcpy(d, dev, n * 8, hipMemcpyDeviceToHost));
		for (size_t i = 0; i < n; i++, pos += 2) {
			uint64_t v = (uint64_t)(stream_at(pos + 1) >> 11) << 32 |
				     stream_at(pos);
			double want = 0x1p-53 + (double)v * 0x1p-53;

			if (memcmp(&d[i], &want, 8) && bad++ < 5)
				printf("double [%zu]: got %a want %a\n", i,
				       d[i], want);
		}
		printf("rocrand_generate_uniform_double: %zu doubles, %zu wrong in all\n",
		       n, bad);
	}

	CR(rocrand_destroy_generator(g));
	CK(hipFree(dev));
	free(u);
	free(f);
	free(d);
	printf("%s\n", bad ? "ROCRAND WRONG" : "ROCRAND OK");
	return bad ? 1 : 0;
}
