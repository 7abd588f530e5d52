// SPDX-License-Identifier: GPL-2.0
/*
 * kfd-demo-compute: run work on every simulated GPU and show it beside the
 * CPU's answer.
 *
 * For each GPU: an AQL queue, three VRAM buffers of N elements, a vector
 * add of u32 and one of f32 dispatched as built-in kernels, and a checksum
 * kernel over the u32 result. The GPU's results are read back through the
 * BOs' CPU mappings and compared with the same computation on the CPU.
 * Exits 0 when every GPU agrees with the CPU.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kfdsim_gpu.h"

#define N	(256 * 1024)
#define SHOWN	4

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static float bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static int run_gpu(struct kg_rt *rt, int g)
{
	struct kfdsim_args_checksum cs;
	struct kfdsim_args_vadd va;
	struct kg_bo a, b, c, sum;
	uint32_t *pa, *pb, *pc;
	uint64_t cpu_sum = 0;
	struct kg_queue q;
	struct kg_signal s;
	int i, bad = 0, ret;

	ret = kg_queue_new(rt, g, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 4096, &q);
	ret = ret ?: kg_bo_new(rt, g, N * 4, KT_VRAM | KT_WRITABLE, 0, &a);
	ret = ret ?: kg_bo_new(rt, g, N * 4, KT_VRAM | KT_WRITABLE, 0, &b);
	ret = ret ?: kg_bo_new(rt, g, N * 4, KT_VRAM | KT_WRITABLE, 0, &c);
	ret = ret ?: kg_bo_new(rt, g, 4096, KT_GTT | KT_WRITABLE, 0, &sum);
	ret = ret ?: kg_signal_new(rt, 1, &s);
	if (ret) {
		fprintf(stderr, "GPU %d: setup failed: %s\n", g, strerror(-ret));
		return 1;
	}
	pa = a.cpu;
	pb = b.cpu;
	pc = c.cpu;

	for (i = 0; i < N; i++) {
		pa[i] = 3u * i + 7;
		pb[i] = 0xfffffff0u + (i & 31);
	}
	va = (struct kfdsim_args_vadd){ .a = a.va, .b = b.va, .c = c.va };
	kg_signal_store(&s, 1);
	ret = kg_dispatch(&q, KFDSIM_KERNEL_VADD_U32, &va, sizeof(va), N, 256,
			  s.va);
	ret = ret ?: kg_signal_wait(&s, 0, KG_TIMEOUT_MS);

	/* The checksum kernel adds into a zeroed u64. */
	memset(sum.cpu, 0, 8);
	cs = (struct kfdsim_args_checksum){ .src = c.va, .result = sum.va };
	kg_signal_store(&s, 1);
	ret = ret ?: kg_dispatch(&q, KFDSIM_KERNEL_CHECKSUM, &cs, sizeof(cs), N,
				 256, s.va);
	ret = ret ?: kg_signal_wait(&s, 0, KG_TIMEOUT_MS);
	if (ret) {
		fprintf(stderr, "GPU %d: u32 work failed: %s\n", g,
			strerror(-ret));
		return 1;
	}
	for (i = 0; i < N; i++) {
		uint32_t want = pa[i] + pb[i];

		bad += pc[i] != want;
		cpu_sum += (uint64_t)want * (2 * (uint64_t)i + 1);
	}
	printf("GPU %d (gpu_id %u): u32 vector add of %d elements\n", g,
	       rt->ids[g], N);
	for (i = 0; i < SHOWN; i++)
		printf("  c[%d] = %" PRIu32 " + %" PRIu32 " = GPU %" PRIu32
		       "  CPU %" PRIu32 "\n", i, pa[i], pb[i], pc[i],
		       pa[i] + pb[i]);
	printf("  checksum kernel: GPU %016" PRIx64 "  CPU %016" PRIx64 "\n",
	       *(uint64_t *)sum.cpu, cpu_sum);
	bad += *(uint64_t *)sum.cpu != cpu_sum;

	for (i = 0; i < N; i++) {
		pa[i] = f32_bits(i * 0.5f + 0.25f);
		pb[i] = f32_bits(1.0f / (i + 1));
	}
	kg_signal_store(&s, 1);
	ret = kg_dispatch(&q, KFDSIM_KERNEL_VADD_F32, &va, sizeof(va), N, 256,
			  s.va);
	ret = ret ?: kg_signal_wait(&s, 0, KG_TIMEOUT_MS);
	if (ret) {
		fprintf(stderr, "GPU %d: f32 work failed: %s\n", g,
			strerror(-ret));
		return 1;
	}
	for (i = 0; i < N; i++)
		bad += pc[i] != f32_bits(bits_f32(pa[i]) + bits_f32(pb[i]));
	printf("  f32 vector add of %d elements\n", N);
	for (i = 0; i < SHOWN; i++)
		printf("  c[%d] = %g + %g = GPU %.9g  CPU %.9g\n", i,
		       bits_f32(pa[i]), bits_f32(pb[i]), bits_f32(pc[i]),
		       bits_f32(pa[i]) + bits_f32(pb[i]));
	printf("  %s: %d of %d results differ from the CPU\n",
	       bad ? "MISMATCH" : "match", bad, 2 * N + 1);

	kg_queue_free(&q);
	kg_bo_free(rt, &sum);
	kg_bo_free(rt, &c);
	kg_bo_free(rt, &b);
	kg_bo_free(rt, &a);
	return bad != 0;
}

int main(void)
{
	struct kg_rt rt;
	int g, failed = 0;

	if (kg_open(&rt)) {
		fprintf(stderr, "kfd-demo-compute: cannot open the GPUs\n");
		return 1;
	}
	for (g = 0; g < rt.e.ngpus; g++)
		failed += run_gpu(&rt, g);
	kg_close(&rt);
	return failed ? 1 : 0;
}
