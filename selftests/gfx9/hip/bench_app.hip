// SPDX-License-Identifier: GPL-2.0
/*
 * The interpreter's speed (make bench, scripts/bench-guest-gfx9): one HIP
 * kernel, built by Debian's hipcc for gfx906, against the same loop
 * compiled for the CPU this program runs on, same work, same process.
 *
 * Every item runs ITERS rounds of an integer mix (a multiply-add, a shift
 * and xor, an add) from its own start value; the kernel writes each item's
 * result, the CPU computes the same function on one thread, and the results
 * must be equal. The kernel's time is the wall time of the launch and
 * hipDeviceSynchronize() after a warm-up launch (which loads the code
 * object). When /sys/kernel/debug/kfdsim/gfx9 is readable, the instructions
 * the waves executed during the timed kernel come from there.
 *
 * Usage: bench_app [ITEMS [ITERS]]. Prints one line of "name value" pairs
 * for the script and "BENCH OK", exit 0, when the results match.
 */
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__host__ __device__ static unsigned int mix(unsigned int x, int iters)
{
	for (int k = 0; k < iters; k++) {
		x = x * 1664525u + 1013904223u;
		x ^= x >> 13;
		x += (unsigned int)k;
	}
	return x;
}

__global__ void mix_kernel(unsigned int *out, int n, int iters)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = mix((unsigned int)i * 2654435761u, iters);
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* wave_insns and lane_insns from kfdsim's debugfs; -1 if unreadable. */
static void insns(long long *wave, long long *lane)
{
	FILE *f = fopen("/sys/kernel/debug/kfdsim/gfx9", "r");

	*wave = -1;
	*lane = -1;
	if (!f)
		return;
	if (fscanf(f, "wave_insns %lld lane_insns %lld", wave, lane) != 2) {
		*wave = -1;
		*lane = -1;
	}
	fclose(f);
}

#define CK(x) do { hipError_t e = (x); if (e) { printf("FAIL %s: %s\n", #x, hipGetErrorString(e)); return 1; } } while (0)

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 16384;
	int iters = argc > 2 ? atoi(argv[2]) : 256;
	long long w0, l0, w1, l1, t0, gpu_ns, cpu_ns;
	unsigned int *got, *want, *dev;
	int bad = 0;

	if (n <= 0 || iters <= 0)
		return 2;
	got = (unsigned int *)malloc(n * sizeof(*got));
	want = (unsigned int *)malloc(n * sizeof(*want));
	if (!got || !want)
		return 1;
	CK(hipMalloc(&dev, n * sizeof(*dev)));
	/* Warm-up: loads the code object, first-dispatch costs. */
	hipLaunchKernelGGL(mix_kernel, dim3(1), dim3(64), 0, 0, dev, 64, 1);
	CK(hipGetLastError());
	CK(hipDeviceSynchronize());

	insns(&w0, &l0);
	t0 = now_ns();
	hipLaunchKernelGGL(mix_kernel, dim3((n + 255) / 256), dim3(256), 0, 0,
			   dev, n, iters);
	CK(hipGetLastError());
	CK(hipDeviceSynchronize());
	gpu_ns = now_ns() - t0;
	insns(&w1, &l1);
	CK(hipMemcpy(got, dev, n * sizeof(*got), hipMemcpyDeviceToHost));

	t0 = now_ns();
	for (int i = 0; i < n; i++)
		want[i] = mix((unsigned int)i * 2654435761u, iters);
	cpu_ns = now_ns() - t0;

	for (int i = 0; i < n; i++)
		if (got[i] != want[i] && bad++ < 5)
			printf("item %d: got 0x%08x want 0x%08x\n", i, got[i],
			       want[i]);
	printf("items %d iters %d gpu_ns %lld cpu_ns %lld wave_insns %lld lane_insns %lld\n",
	       n, iters, gpu_ns, cpu_ns, w0 < 0 || w1 < 0 ? -1 : w1 - w0,
	       l0 < 0 || l1 < 0 ? -1 : l1 - l0);
	CK(hipFree(dev));
	free(got);
	free(want);
	printf("%s\n", bad ? "BENCH WRONG" : "BENCH OK");
	return bad ? 1 : 0;
}
