// SPDX-License-Identifier: GPL-2.0
/*
 * Debian's rocRAND (librocrand1 5.3.3) on kfdsim: the library's own gfx906
 * code object generates with the Philox4x32-10 generator and a fixed seed,
 * and the program compares every number with Philox4x32-10 computed here on
 * the CPU from the published algorithm (Salmon et al., "Parallel random
 * numbers: as easy as 1, 2, 3", SC 2011): philox_ref.h, which says what
 * rocRAND's conventions are.
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

#include "philox_ref.h"

#define SEED 0x0123456789abcdefULL

/* Number i of the stream (subsequence 0). */
static uint32_t stream_at(uint64_t i)
{
	return philox_ref_at(SEED, i);
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
		float want = philox_ref_float(stream_at(pos));

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
			double want = philox_ref_double(stream_at(pos),
							stream_at(pos + 1));

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
