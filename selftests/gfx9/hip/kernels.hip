// SPDX-License-Identifier: GPL-2.0
/*
 * HIP kernels the gfx9 selftests run from the code object hipcc builds
 * for gfx906 (the host side of this file is never run).
 */
#include <hip/hip_runtime.h>

__global__ void saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = a * x[i] + y[i];
}

/* A tree reduction in LDS with __syncthreads, then one atomicAdd. */
__global__ void reduce(const unsigned int *in, unsigned int *out, int n)
{
	__shared__ unsigned int s[256];
	unsigned int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;

	s[t] = i < (unsigned int)n ? in[i] : 0;
	__syncthreads();
	for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (t < k)
			s[t] += s[t + k];
		__syncthreads();
	}
	if (t == 0)
		atomicAdd(out, s[0]);
}

/* Division as hipcc -O2 expands it: div_scale, rcp, fma, div_fmas, div_fixup. */
__global__ void divide(const double *x, const double *y, double *q,
		       const float *a, const float *b, float *r, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		q[i] = x[i] / y[i];
		r[i] = a[i] / b[i];
	}
}
