// SPDX-License-Identifier: GPL-2.0
/*
 * A whole HIP program, built by Debian's hipcc for gfx906 and run
 * unmodified by selftests/gfx9 (gfx9.hip_program): device memory, copies
 * in every direction, hipMemset, three kernel launches (saxpy, an LDS
 * reduction with __syncthreads and atomicAdd, and a private array indexed
 * by data, which hipcc -O2 keeps in scratch: ROCr's dynamic scratch),
 * checked on the CPU.
 * Prints "HIP OK" and exits 0 when every result is exact.
 */
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

__global__ void saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}
__global__ void reduce(const unsigned *in, unsigned *out, int n)
{
	__shared__ unsigned s[256];
	unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
	s[t] = i < (unsigned)n ? in[i] : 0;
	__syncthreads();
	for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
		if (t < k)
			s[t] += s[t + k];
		__syncthreads();
	}
	if (t == 0)
		atomicAdd(out, s[0]);
}
/* 64 dwords of private memory per work-item, indexed by data. */
__host__ __device__ static unsigned privmix_one(unsigned x)
{
	unsigned a[64];

	for (int k = 0; k < 64; k++)
		a[k] = x * (k + 1) + k;
	for (int k = 0; k < 64; k++) {
		unsigned j = (x >> (k & 15)) & 63;
		a[j] ^= a[(j * 7 + k) & 63] + (unsigned)k;
	}
	return a[x & 63] + a[(x >> 6) & 63];
}
__global__ void privmix(const unsigned *in, unsigned *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = privmix_one(in[i]);
}
#define CK(x) do { hipError_t e = (x); if (e) { printf("FAIL %s: %s\n", #x, hipGetErrorString(e)); return 1; } } while (0)
int main()
{
	const int n = 100000;
	float *x, *y, *dx, *dy, *dz;
	unsigned *u, *du, *dsum, sum = 0, got = 0;
	int bad = 0, pbad = 0;
	const int np = 3000;
	unsigned *pm, *dpm;

	x = (float *)malloc(n * 4); y = (float *)malloc(n * 4); u = (unsigned *)malloc(n * 4);
	for (int i = 0; i < n; i++) { x[i] = i * 0.5f; y[i] = 1.0f / (i + 1); u[i] = i * 2654435761u; sum += u[i]; }
	printf("hipMalloc\n"); fflush(stdout);
	CK(hipMalloc(&dx, n * 4)); CK(hipMalloc(&dy, n * 4)); CK(hipMalloc(&dz, n * 4));
	CK(hipMalloc(&du, n * 4)); CK(hipMalloc(&dsum, 4));
	printf("hipMemcpy H2D\n"); fflush(stdout);
	CK(hipMemcpy(dx, x, n * 4, hipMemcpyHostToDevice));
	CK(hipMemcpy(dy, y, n * 4, hipMemcpyHostToDevice));
	CK(hipMemcpy(du, u, n * 4, hipMemcpyHostToDevice));
	printf("hipMemset\n"); fflush(stdout);
	CK(hipMemset(dsum, 0, 4));
	printf("launch saxpy\n"); fflush(stdout);
	hipLaunchKernelGGL(saxpy, dim3((n + 255) / 256), dim3(256), 0, 0, 3.0f, dx, dy, n);
	CK(hipGetLastError());
	printf("launch reduce\n"); fflush(stdout);
	hipLaunchKernelGGL(reduce, dim3((n + 255) / 256), dim3(256), 0, 0, du, dsum, n);
	CK(hipDeviceSynchronize());
	printf("launch privmix\n"); fflush(stdout);
	pm = (unsigned *)malloc(np * 4);
	CK(hipMalloc(&dpm, np * 4));
	hipLaunchKernelGGL(privmix, dim3((np + 255) / 256), dim3(256), 0, 0, du, dpm, np);
	CK(hipDeviceSynchronize());
	CK(hipMemcpy(pm, dpm, np * 4, hipMemcpyDeviceToHost));
	for (int i = 0; i < np; i++)
		if (pm[i] != privmix_one(u[i]))
			pbad++;
	printf("D2D copy\n"); fflush(stdout);
	CK(hipMemcpy(dz, dy, n * 4, hipMemcpyDeviceToDevice));
	CK(hipMemcpy(y, dz, n * 4, hipMemcpyDeviceToHost));
	CK(hipMemcpy(&got, dsum, 4, hipMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		if (y[i] != fmaf(3.0f, i * 0.5f, 1.0f / (i + 1)))
			bad++;
	printf("saxpy mismatches %d, reduce got %u want %u, privmix mismatches %d\n",
	       bad, got, sum, pbad);
	bad += pbad;
	printf("%s\n", !bad && got == sum ? "HIP OK" : "HIP WRONG");
	return !bad && got == sum ? 0 : 1;
}
