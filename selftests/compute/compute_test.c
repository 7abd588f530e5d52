// SPDX-License-Identifier: GPL-2.0
/*
 * The command processor running AQL packets: the built-in kernels checked
 * element by element against the CPU, barrier packets, publication of
 * packets (INVALID headers, write index vs doorbell), several queues and
 * processes at once, and GPU page faults. The chunk sums kernel is checked
 * against the CRIU plugin's own checksum (userspace-plugin/checksum.c).
 *
 * Every test runs in its own process (the harness forks), with a fresh
 * runtime: all GPUs acquired, queues and BOs created by the test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kt_harness.h"
#include "kfdsim_gpu.h"
#include "checksum.h"

#define N1M		(1u << 20)
#define WG		256

KG_FIXTURE(cp)

/* A writable GTT page and an AQL queue of 16 slots, both on GPU 0. */
static int page_and_queue(struct kg_rt *rt, struct kg_bo *buf,
			  struct kg_queue *q)
{
	int ret;

	ret = kg_bo_new(rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0, buf);
	if (ret)
		return ret;
	return kg_queue_new(rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 1024, q);
}

/* xorshift32 for test data. */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static float f32(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

static uint32_t bits32(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

/* A finite binary32 operand: normal, subnormal, zero, large or tiny. */
static uint32_t rnd_f32(uint32_t *s)
{
	uint32_t x = rnd(s);

	switch (x & 7) {
	case 0:		/* subnormal or zero */
		x &= 0x807fffff;
		break;
	case 1:		/* near the top of the range: sums overflow */
		x = (x & 0x807fffff) | (0xfdu << 23);
		break;
	default:
		if (((x >> 23) & 0xff) == 0xff)
			x &= ~0x40000000u;
		break;
	}
	return x;
}

/* Two operands likely to cancel: b = -a with its low bits changed. */
static uint32_t rnd_f32_partner(uint32_t *s, uint32_t a)
{
	uint32_t x = rnd(s);

	switch (x & 3) {
	case 0:
		return (a ^ 0x80000000u) ^ (x >> 20 & 0xff);
	case 1:		/* same binade, either sign */
		return (a & 0x7f800000u) | (x & 0x807fffffu);
	default:
		return rnd_f32(s);
	}
}

/* Operand pairs at the edges of binary32 (no NaN inputs or results). */
static const uint32_t special[][2] = {
	{ 0x00000000, 0x80000000 },	/* +0 + -0 = +0 */
	{ 0x80000000, 0x80000000 },	/* -0 + -0 = -0 */
	{ 0x3f800001, 0xbf800001 },	/* x + -x = +0 */
	{ 0x7f7fffff, 0x7f7fffff },	/* overflow to +Inf */
	{ 0xff7fffff, 0xf3000000 },	/* -max - ulp/2: tie, odd, -Inf */
	{ 0xff7fffff, 0xf2ffffff },	/* just under the tie: -max */
	{ 0x00000001, 0x00000001 },	/* smallest subnormals */
	{ 0x007fffff, 0x00000001 },	/* subnormal to smallest normal */
	{ 0x00800000, 0x80000001 },	/* normal to largest subnormal */
	{ 0x3f800000, 0x33800000 },	/* 1 + 2^-24: tie, stays 1 */
	{ 0x3f800001, 0x33800000 },	/* 1+ulp + 2^-24: tie, rounds up */
	{ 0x3f800000, 0x33800001 },	/* just above the tie */
	{ 0x4b800000, 0xbf800000 },	/* 2^24 - 1: exact */
	{ 0x4b800000, 0x3f800000 },	/* 2^24 + 1: tie, stays 2^24 */
	{ 0x7f800000, 0x3f800000 },	/* Inf + 1 */
	{ 0xff800000, 0xff800000 },	/* -Inf + -Inf */
	{ 0x3f800000, 0x0d800000 },	/* exponents far apart */
	{ 0xbf7fffff, 0x3f800000 },	/* cancellation to 2^-24 */
};
#define NSPECIAL	(sizeof(special) / sizeof(special[0]))

static void vadd(struct __test_metadata *_metadata, struct kg_rt *rt,
		 uint32_t op)
{
	struct kfdsim_args_vadd args;
	struct kg_bo a, b, c;
	struct kg_signal sig;
	struct kg_queue q;
	uint32_t s = 12345, *pa, *pb, *pc, i, bad;
	int g;

	for (g = 0; g < rt->e.ngpus; g++) {
		ASSERT_EQ(0, kg_bo_new(rt, g, 4 * N1M, KT_VRAM, 0, &a));
		ASSERT_EQ(0, kg_bo_new(rt, g, 4 * N1M, KT_VRAM, 0, &b));
		ASSERT_EQ(0, kg_bo_new(rt, g, 4 * N1M, KT_VRAM | KT_WRITABLE,
				       0, &c));
		pa = a.cpu;
		pb = b.cpu;
		pc = c.cpu;
		for (i = 0; i < N1M; i++) {
			if (op == KFDSIM_KERNEL_VADD_F32 && i < NSPECIAL) {
				pa[i] = special[i][0];
				pb[i] = special[i][1];
				pc[i] = 0xdeadbeef;
				continue;
			}
			if (op == KFDSIM_KERNEL_VADD_F32) {
				pa[i] = rnd_f32(&s);
				pb[i] = rnd_f32_partner(&s, pa[i]);
			} else {
				pa[i] = rnd(&s);
				pb[i] = rnd(&s);
			}
			pc[i] = 0xdeadbeef;
		}
		ASSERT_EQ(0, kg_queue_new(rt, g, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
					  4096, &q));
		ASSERT_EQ(0, kg_signal_new(rt, 1, &sig));
		args = (struct kfdsim_args_vadd){ a.va, b.va, c.va };
		ASSERT_EQ(0, kg_dispatch(&q, op, &args, sizeof(args), N1M, WG,
					 sig.va));
		ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS))
			TH_LOG("gpu %d: signal %ld, rptr %lu", g,
			       (long)kg_signal_load(&sig),
			       (unsigned long)kg_queue_rptr(&q));
		/* The read index is written back after the signal. */
		EXPECT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
		EXPECT_EQ(1, kg_queue_rptr(&q));
		for (i = 0, bad = 0; i < N1M; i++) {
			uint32_t want = op == KFDSIM_KERNEL_VADD_F32 ?
				bits32(f32(pa[i]) + f32(pb[i])) :
				pa[i] + pb[i];

			if (pc[i] != want && bad++ < 5)
				TH_LOG("gpu %d: c[%u] = 0x%08x, want 0x%08x (a 0x%08x b 0x%08x)",
				       g, i, pc[i], want, pa[i], pb[i]);
		}
		EXPECT_EQ(0, bad) TH_LOG("gpu %d: %u wrong elements", g, bad);
		EXPECT_EQ(0, kg_queue_free(&q));
		EXPECT_EQ(0, kg_bo_free(rt, &a));
		EXPECT_EQ(0, kg_bo_free(rt, &b));
		EXPECT_EQ(0, kg_bo_free(rt, &c));
	}
}

TEST_F_TIMEOUT(cp, vadd_u32_1m_every_gpu, 300)
{
	vadd(_metadata, &self->rt, KFDSIM_KERNEL_VADD_U32);
}

TEST_F_TIMEOUT(cp, vadd_f32_1m_every_gpu_bit_exact, 300)
{
	vadd(_metadata, &self->rt, KFDSIM_KERNEL_VADD_F32);
}

#define CSUM_BYTES	(64 * KT_MIB)
#define CSUM_N		((uint32_t)(CSUM_BYTES / 4))

/* FILL a 64 MiB VRAM buffer with v on every GPU; checksum = v * N^2. */
TEST_F_TIMEOUT(cp, checksum_64m_vram_after_gpu_fill, 300)
{
	struct kfdsim_args_checksum cargs;
	struct kfdsim_args_fill fargs;
	struct kg_bo buf, res;
	struct kg_signal sig;
	struct kg_queue q;
	uint64_t want;
	int g;

	for (g = 0; g < self->rt.e.ngpus; g++) {
		uint32_t v = 0x9e3779b9u + g;

		ASSERT_EQ(0, kg_bo_new(&self->rt, g, CSUM_BYTES,
				       KT_VRAM | KT_WRITABLE, KG_NO_CPU, &buf));
		ASSERT_EQ(0, kg_bo_new(&self->rt, g, KT_PAGE,
				       KT_GTT | KT_WRITABLE, 0, &res));
		ASSERT_EQ(0, kg_queue_new(&self->rt, g,
					  KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
					  4096, &q));
		ASSERT_EQ(0, kg_signal_new(&self->rt, 2, &sig));
		*(uint64_t *)res.cpu = 0;
		fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = v };
		cargs = (struct kfdsim_args_checksum){ buf.va, res.va };
		ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
					 sizeof(fargs), CSUM_N, 1024, sig.va));
		ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_CHECKSUM, &cargs,
					 sizeof(cargs), CSUM_N, 1024, sig.va));
		ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS * 3))
			TH_LOG("signal %ld", (long)kg_signal_load(&sig));
		/* sum over i of (2i + 1) is N^2 */
		want = (uint64_t)v * ((uint64_t)CSUM_N * CSUM_N);
		EXPECT_EQ(want, *(uint64_t *)res.cpu);
		EXPECT_EQ(0, kg_queue_free(&q));
		EXPECT_EQ(0, kg_bo_free(&self->rt, &buf));
		EXPECT_EQ(0, kg_bo_free(&self->rt, &res));
	}
}

/* A 64 MiB VRAM buffer written by the CPU through the render node. */
TEST_F_TIMEOUT(cp, checksum_64m_vram_cpu_written, 300)
{
	struct kfdsim_args_checksum cargs;
	struct kg_bo buf, res;
	struct kg_signal sig;
	struct kg_queue q;
	uint64_t want = 0;
	uint32_t *p, i, s = 777;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, CSUM_BYTES, KT_VRAM, 0, &buf));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &res));
	p = buf.cpu;
	for (i = 0; i < CSUM_N; i++) {
		p[i] = rnd(&s);
		want += (uint64_t)p[i] * (2 * (uint64_t)i + 1);
	}
	/* Not zero: the kernel adds to what is there. */
	*(uint64_t *)res.cpu = 5;
	want += 5;
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  4096, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	cargs = (struct kfdsim_args_checksum){ buf.va, res.va };
	/* 1000 is not a power of two: the last workgroup is partial. */
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_CHECKSUM, &cargs,
				 sizeof(cargs), CSUM_N, 1000, sig.va));
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS * 3));
	EXPECT_EQ(want, *(uint64_t *)res.cpu);
}

/*
 * FILL and COPY on arrays that are not page aligned, with a partial last
 * workgroup and a 3-D grid: exactly the elements of the grid change.
 */
TEST_F(cp, fill_copy_unaligned_3d_grid)
{
	struct kfdsim_aql_dispatch pkt;
	struct kfdsim_args_fill fargs;
	struct kfdsim_args_copy cargs;
	const uint32_t n = 10 * 13 * 7, off = 1027;	/* elements */
	struct kg_bo src, dst;
	struct kg_signal sig;
	struct kg_queue q;
	uint32_t *ps, *pd, i, bad = 0;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 64 * KT_PAGE,
			       KT_GTT | KT_WRITABLE, 0, &src));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 64 * KT_PAGE,
			       KT_VRAM | KT_WRITABLE, 0, &dst));
	ps = src.cpu;
	pd = dst.cpu;
	kt_fill(ps, 64 * KT_PAGE, 3);
	memset(pd, 0x5a, 64 * KT_PAGE);
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 2, &sig));

	cargs = (struct kfdsim_args_copy){ src.va + 4 * off, dst.va + 4 * off };
	kg_dispatch_packet(&q, KFDSIM_KERNEL_COPY_U32, &cargs, sizeof(cargs),
			   0, 0, sig.va, &pkt);
	pkt.setup = 3;
	pkt.grid_size_x = 10;
	pkt.grid_size_y = 13;
	pkt.grid_size_z = 7;
	pkt.workgroup_size_x = 4;
	pkt.workgroup_size_y = 3;
	pkt.workgroup_size_z = 2;
	ASSERT_EQ(0, kg_aql_submit(&q, &pkt));
	/* Then overwrite the first 100 copied elements with a fill. */
	fargs = (struct kfdsim_args_fill){ .dst = dst.va + 4 * off,
					   .value = 0x11223344 };
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
				 sizeof(fargs), 100, 64, sig.va));
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	for (i = 0; i < 64 * KT_PAGE / 4; i++) {
		uint32_t want = 0x5a5a5a5a;

		if (i >= off && i < off + 100)
			want = 0x11223344;
		else if (i >= off && i < off + n)
			want = ps[i];
		if (pd[i] != want && bad++ < 5)
			TH_LOG("dst[%u] = 0x%x, want 0x%x", i, pd[i], want);
	}
	EXPECT_EQ(0, bad);
}

/* The completion signal is decremented by one, not set to zero. */
TEST_F(cp, completion_signal_decrements)
{
	struct kfdsim_args_fill fargs;
	struct kg_signal sig;
	struct kg_bo buf;
	struct kg_queue q;

	ASSERT_EQ(0, page_and_queue(&self->rt, &buf, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 10, &sig));
	fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 1 };
	ASSERT_EQ(0, kg_dispatch(&q, KG_CODE_FILL_U32, &fargs,
				 sizeof(fargs), 16, 16, sig.va));
	ASSERT_EQ(0, kg_dispatch(&q, KG_CODE_FILL_U32, &fargs,
				 sizeof(fargs), 16, 16, sig.va));
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(8, kg_signal_load(&sig));
}

/*
 * A transient -ENOMEM in the CP (its kernel engine's bounce buffer, failed
 * once through debugfs cp_fail_nth) does not stop the queue: the CP runs
 * the packet again later, it completes once, and the queue keeps working.
 */
TEST_F(cp, transient_enomem_in_cp_is_retried)
{
	struct kfdsim_args_fill fargs;
	struct kg_signal sig;
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p = NULL;
	unsigned int i, bad = 0;

	ASSERT_EQ(0, page_and_queue(&self->rt, &buf, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 2, &sig));
	p = buf.cpu;
	memset(p, 0, KT_PAGE);
	ASSERT_EQ(0, kg_cp_fail_nth_set(1));
	fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 7 };
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
				 sizeof(fargs), 64, 16, sig.va));
	EXPECT_EQ(0, kg_signal_wait(&sig, 1, KG_TIMEOUT_MS));
	EXPECT_EQ(0, kg_cp_fail_nth_get()) TH_LOG("the failure was not injected");
	kg_cp_fail_nth_set(0);
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(1, kg_queue_rptr(&q));
	EXPECT_EQ(1, kg_signal_load(&sig)) TH_LOG("the packet ran twice");
	for (i = 0; i < 64; i++)
		bad += p[i] != 7;
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, p[64]);
	/* The queue still runs what comes next. */
	fargs.value = 9;
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
				 sizeof(fargs), 64, 16, sig.va));
	EXPECT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(9, p[63]);
}

/* Many more packets than ring slots: the ring wraps around several times. */
TEST_F(cp, aql_ring_wraps_around)
{
	struct kfdsim_args_fill fargs;
	struct kg_signal sig;
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p, i;
	const uint32_t npkt = 200;	/* ring of 16 slots */

	ASSERT_EQ(0, page_and_queue(&self->rt, &buf, &q));
	p = buf.cpu;
	ASSERT_EQ(0, kg_signal_new(&self->rt, npkt, &sig));
	for (i = 0; i < npkt; i++) {
		fargs = (struct kfdsim_args_fill){ .dst = buf.va + 4 * i,
						   .value = i * 7 + 1 };
		ASSERT_EQ(0, kg_dispatch(&q, KG_CODE_FILL_U32, &fargs,
					 sizeof(fargs), 1, 1, sig.va));
	}
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	/* The read index is written back after the signal. */
	EXPECT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(npkt, kg_queue_rptr(&q));
	for (i = 0; i < npkt; i++)
		ASSERT_EQ(i * 7 + 1, p[i]) TH_LOG("element %u", i);
	EXPECT_EQ(0, p[npkt]);
}

/* Publishing through the in-memory write index alone, or the doorbell alone. */
TEST_F(cp, write_index_or_doorbell_alone_publishes)
{
	struct kfdsim_aql_dispatch pkt;
	struct kfdsim_args_fill fargs;
	struct kg_signal sig;
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p;

	ASSERT_EQ(0, page_and_queue(&self->rt, &buf, &q));
	p = buf.cpu;
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));

	fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 1 };
	kg_dispatch_packet(&q, KFDSIM_KERNEL_FILL_U32, &fargs, sizeof(fargs),
			   1, 1, sig.va, &pkt);
	kg_aql_write(&q, &pkt, true);
	kg_aql_commit(&q, KG_RING_WPTR);
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(1, p[0]);

	kg_signal_store(&sig, 1);
	fargs = (struct kfdsim_args_fill){ .dst = buf.va + 4, .value = 2 };
	kg_dispatch_packet(&q, KFDSIM_KERNEL_FILL_U32, &fargs, sizeof(fargs),
			   1, 1, sig.va, &pkt);
	kg_aql_write(&q, &pkt, true);
	kg_aql_commit(&q, KG_RING_DOORBELL);
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(2, p[1]);
	EXPECT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(2, kg_queue_rptr(&q));
}

/*
 * A slot the write index covers but whose header is still INVALID holds the
 * queue until the header is stored, the packets behind it too.
 */
TEST_F(cp, invalid_header_blocks_until_published)
{
	struct kfdsim_aql_dispatch pkt;
	struct kfdsim_args_fill fargs;
	struct kg_signal sig;
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p;
	uint16_t hdr;

	ASSERT_EQ(0, page_and_queue(&self->rt, &buf, &q));
	p = buf.cpu;
	ASSERT_EQ(0, kg_signal_new(&self->rt, 2, &sig));

	fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 1 };
	kg_dispatch_packet(&q, KFDSIM_KERNEL_FILL_U32, &fargs, sizeof(fargs),
			   1, 1, sig.va, &pkt);
	hdr = pkt.header;
	kg_aql_write(&q, &pkt, false);	/* reserved, not published */
	kg_aql_commit(&q, KG_RING_BOTH);
	fargs = (struct kfdsim_args_fill){ .dst = buf.va + 4, .value = 2 };
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
				 sizeof(fargs), 1, 1, sig.va));
	kg_sleep_ms(300);
	EXPECT_EQ(0, kg_queue_rptr(&q));
	EXPECT_EQ(0, p[0]);
	EXPECT_EQ(0, p[1]);
	EXPECT_EQ(2, kg_signal_load(&sig));

	kg_aql_publish(&q, 0, hdr);
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(1, p[0]);
	EXPECT_EQ(2, p[1]);
}

/*
 * Same after the ring wrapped: a reserved slot of the second lap must not
 * run the packet the slot held on the first lap. (ROCr-style producers bump
 * the in-memory write index before they write the packet.)
 */
TEST_F(cp, reserved_slot_on_second_lap_does_not_rerun_old_packet)
{
	struct kfdsim_aql_dispatch pkt;
	struct kfdsim_args_fill fargs;
	struct kg_signal sig, old;
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p, i, entries;
	uint16_t hdr;

	ASSERT_EQ(0, page_and_queue(&self->rt, &buf, &q));
	p = buf.cpu;
	entries = kg_aql_entries(&q);
	ASSERT_EQ(0, kg_signal_new(&self->rt, entries, &old));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	/* Lap one: slot i fills element i with i + 1. */
	for (i = 0; i < entries; i++) {
		fargs = (struct kfdsim_args_fill){ .dst = buf.va + 4 * i,
						   .value = i + 1 };
		ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
					 sizeof(fargs), 1, 1, old.va));
	}
	ASSERT_EQ(0, kg_signal_wait(&old, 0, KG_TIMEOUT_MS));
	memset(p, 0, KT_PAGE);

	/* Lap two, slot 0: reserve (write index only), fill in later. */
	fargs = (struct kfdsim_args_fill){ .dst = buf.va + 4 * 100,
					   .value = 0xabc };
	kg_dispatch_packet(&q, KFDSIM_KERNEL_FILL_U32, &fargs, sizeof(fargs),
			   1, 1, sig.va, &pkt);
	hdr = pkt.header;
	/* The producer has not even started writing the slot's body. */
	kg_aql_commit(&q, KG_RING_WPTR);
	kg_sleep_ms(300);
	EXPECT_EQ(entries, kg_queue_rptr(&q));
	EXPECT_EQ(0, p[0]) TH_LOG("the lap-one packet of slot 0 ran again");
	EXPECT_EQ(0, kg_signal_load(&old));
	/* If the old packet ran, rptr is past the slot: nothing more to see. */
	if (kg_queue_rptr(&q) != entries)
		return;

	/* Now write and publish it properly. */
	q.windex--;
	kg_aql_write(&q, &pkt, false);
	q.windex++;
	kg_aql_publish(&q, entries, hdr);
	__atomic_store_n(q.doorbell, q.windex, __ATOMIC_RELEASE);
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(0xabc, p[100]);
}

/*
 * A ROCr-style producer over many laps of a 16-slot ring: reserve the slot
 * by bumping the in-memory write index, write the packet (the producer may
 * be preempted in between, here a short sleep now and then), store the
 * header, ring the doorbell with the packet's index. Every packet must run
 * exactly once.
 */
TEST_F_TIMEOUT(cp, rocr_style_producer_many_laps, 120)
{
	const uint32_t npkt = 400;
	struct kfdsim_aql_dispatch pkt;
	struct kfdsim_args_fill fargs;
	struct kg_signal sig;
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p, i, bad = 0;
	uint64_t index;

	ASSERT_EQ(0, page_and_queue(&self->rt, &buf, &q));
	p = buf.cpu;
	ASSERT_EQ(0, kg_signal_new(&self->rt, npkt, &sig));
	for (i = 0; i < npkt; i++) {
		ASSERT_EQ(0, kg_aql_wait_room(&q, KG_TIMEOUT_MS));
		index = q.windex;
		/* Reserve: the write index moves first. */
		__atomic_store_n(q.wptr, index + 1, __ATOMIC_RELEASE);
		if (i % 4 == 3)
			kg_sleep_ms(2);
		fargs = (struct kfdsim_args_fill){ .dst = buf.va + 4 * i,
						   .value = i + 1 };
		kg_dispatch_packet(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
				   sizeof(fargs), 1, 1, sig.va, &pkt);
		memcpy((char *)kg_aql_slot(&q, index) + 2, (char *)&pkt + 2,
		       sizeof(pkt) - 2);
		kg_aql_publish(&q, index, pkt.header);
		q.windex = index + 1;
		__atomic_store_n(q.doorbell, index, __ATOMIC_RELEASE);
	}
	EXPECT_EQ(0, kg_signal_wait(&sig, 0, 20000))
		TH_LOG("signal %ld", (long)kg_signal_load(&sig));
	EXPECT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	kg_sleep_ms(100);
	EXPECT_EQ(0, kg_signal_load(&sig));
	EXPECT_EQ(npkt, kg_queue_rptr(&q));
	for (i = 0; i < npkt; i++)
		if (p[i] != i + 1 && bad++ < 5)
			TH_LOG("element %u: %u", i, p[i]);
	EXPECT_EQ(0, bad);
}

/* A barrier-AND on a signal the CPU clears later holds back the dispatch. */
TEST_F(cp, barrier_and_holds_later_dispatch)
{
	struct kfdsim_args_fill fargs;
	struct kg_signal dep[2], done, bsig;
	uint64_t deps[2];
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p;

	ASSERT_EQ(0, page_and_queue(&self->rt, &buf, &q));
	p = buf.cpu;
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &dep[0]));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &dep[1]));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &bsig));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &done));
	deps[0] = dep[0].va;
	deps[1] = dep[1].va;
	ASSERT_EQ(0, kg_barrier(&q, KFDSIM_AQL_TYPE_BARRIER_AND, deps, 2,
				bsig.va));
	fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 42 };
	ASSERT_EQ(0, kg_dispatch(&q, KG_CODE_FILL_U32, &fargs,
				 sizeof(fargs), 64, 64, done.va));
	kg_sleep_ms(300);
	EXPECT_EQ(0, kg_queue_rptr(&q));
	EXPECT_EQ(0, p[0]);

	/* One of two dependencies is not enough for AND. */
	kg_signal_store(&dep[1], 0);
	kg_sleep_ms(300);
	EXPECT_EQ(0, kg_queue_rptr(&q));
	EXPECT_EQ(1, kg_signal_load(&bsig));
	EXPECT_EQ(0, p[0]);

	kg_signal_store(&dep[0], 0);
	ASSERT_EQ(0, kg_signal_wait(&done, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(0, kg_signal_load(&bsig));
	EXPECT_EQ(42, p[0]);
	EXPECT_EQ(42, p[63]);
	EXPECT_EQ(0, p[64]);
}

/* Barrier-OR waits for any one dependency; a barrier with none passes. */
TEST_F(cp, barrier_or_and_empty_barriers)
{
	struct kfdsim_args_fill fargs;
	struct kg_signal dep[3], done, b0;
	uint64_t deps[5] = { 0 };
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p;
	int i;

	ASSERT_EQ(0, page_and_queue(&self->rt, &buf, &q));
	p = buf.cpu;
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &dep[i]));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 2, &b0));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &done));

	/* AND and OR of no signals complete at once. */
	ASSERT_EQ(0, kg_barrier(&q, KFDSIM_AQL_TYPE_BARRIER_AND, deps, 5,
				b0.va));
	ASSERT_EQ(0, kg_barrier(&q, KFDSIM_AQL_TYPE_BARRIER_OR, deps, 5,
				b0.va));
	ASSERT_EQ(0, kg_signal_wait(&b0, 0, KG_TIMEOUT_MS));

	/* Dependencies in slots 1, 3 and 4 (0 and 2 unused). */
	deps[1] = dep[0].va;
	deps[3] = dep[1].va;
	deps[4] = dep[2].va;
	ASSERT_EQ(0, kg_barrier(&q, KFDSIM_AQL_TYPE_BARRIER_OR, deps, 5, 0));
	fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 7 };
	ASSERT_EQ(0, kg_dispatch(&q, KG_CODE_FILL_U32, &fargs,
				 sizeof(fargs), 1, 1, done.va));
	kg_sleep_ms(300);
	EXPECT_EQ(2, kg_queue_rptr(&q));
	EXPECT_EQ(0, p[0]);
	kg_signal_store(&dep[2], 0);
	ASSERT_EQ(0, kg_signal_wait(&done, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(7, p[0]);
}

/* Two queues of one process on one GPU, fed alternately. */
TEST_F(cp, two_queues_one_process)
{
	struct kfdsim_args_vadd args;
	struct kg_bo a, b, c[2];
	struct kg_signal sig[2];
	struct kg_queue q[2];
	const uint32_t n = 64 * 1024;
	uint32_t *pa, *pb, i, k, bad = 0;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * n, KT_GTT, 0, &a));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * n, KT_GTT, 0, &b));
	pa = a.cpu;
	pb = b.cpu;
	kt_fill(pa, 4 * n, 1);
	kt_fill(pb, 4 * n, 2);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * n,
				       KT_VRAM | KT_WRITABLE, 0, &c[k]));
		ASSERT_EQ(0, kg_queue_new(&self->rt, 0,
					  KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
					  1024, &q[k]));
		ASSERT_EQ(0, kg_signal_new(&self->rt, 8, &sig[k]));
	}
	ASSERT_NE(q[0].id, q[1].id);
	ASSERT_NE(q[0].doorbell_offset, q[1].doorbell_offset);
	/* Queue k computes c[k] = a + b (k = 0) or c[k] = a + a (k = 1), 8x. */
	for (i = 0; i < 8; i++) {
		for (k = 0; k < 2; k++) {
			args = (struct kfdsim_args_vadd){
				a.va, k ? a.va : b.va, c[k].va };
			ASSERT_EQ(0, kg_dispatch(&q[k], KFDSIM_KERNEL_VADD_U32,
						 &args, sizeof(args), n, 128,
						 sig[k].va));
		}
	}
	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, kg_signal_wait(&sig[k], 0, KG_TIMEOUT_MS));
	for (i = 0; i < n; i++) {
		uint32_t *c0 = c[0].cpu, *c1 = c[1].cpu;

		if ((c0[i] != pa[i] + pb[i] || c1[i] != pa[i] + pa[i]) &&
		    bad++ < 5)
			TH_LOG("element %u: 0x%x 0x%x", i, c0[i], c1[i]);
	}
	EXPECT_EQ(0, bad);
}

/*
 * Run in a child: its own runtime, a loop kernel plus a vector add on every
 * GPU with data derived from @seed, checked against the CPU.
 */
static int proc_compute(uint32_t seed, int start_fd, char *msg, size_t len)
{
	const uint32_t n = 32 * 1024, steps = 40;
	struct kfdsim_args_loop largs;
	struct kfdsim_args_vadd vargs;
	struct kg_bo a[KT_MAX_GPUS], c[KT_MAX_GPUS];
	struct kg_queue q[KT_MAX_GPUS];
	struct kg_signal sig;
	struct kg_rt rt;
	uint32_t i, ma, mb;
	char go;
	int g, ret;

	ret = kg_open(&rt);
	KT_CHECK(!ret, "kg_open: %s", strerror(-ret));
	for (g = 0; g < rt.e.ngpus; g++) {
		KT_CHECK(!kg_bo_new(&rt, g, 4 * n, KT_VRAM | KT_WRITABLE, 0,
				    &a[g]), "alloc a");
		KT_CHECK(!kg_bo_new(&rt, g, 4 * n, KT_GTT | KT_WRITABLE, 0,
				    &c[g]), "alloc c");
		kt_fill(a[g].cpu, 4 * n, seed + g);
		KT_CHECK(!kg_queue_new(&rt, g, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				       4096, &q[g]), "queue");
	}
	KT_CHECK(!kg_signal_new(&rt, 2 * rt.e.ngpus, &sig), "signal");
	/* Start together with the other process. */
	KT_CHECK(read(start_fd, &go, 1) == 1, "start pipe");
	for (g = 0; g < rt.e.ngpus; g++) {
		largs = (struct kfdsim_args_loop){ .buf = a[g].va,
						   .steps = steps };
		vargs = (struct kfdsim_args_vadd){ a[g].va, a[g].va, c[g].va };
		KT_CHECK(!kg_dispatch(&q[g], KFDSIM_KERNEL_LOOP, &largs,
				      sizeof(largs), n, 256, sig.va), "loop");
		KT_CHECK(!kg_dispatch(&q[g], KFDSIM_KERNEL_VADD_U32, &vargs,
				      sizeof(vargs), n, 256, sig.va), "vadd");
	}
	ret = kg_signal_wait(&sig, 0, KG_TIMEOUT_MS * 2);
	KT_CHECK(!ret, "seed %u: signal stuck at %ld", seed,
		 (long)kg_signal_load(&sig));
	kg_loop_affine(0, steps, &ma, &mb);
	for (g = 0; g < rt.e.ngpus; g++) {
		uint32_t *pa = a[g].cpu, *pc = c[g].cpu, s = (seed + g) | 1;

		for (i = 0; i < n; i++) {
			uint32_t x = rnd(&s) * ma + mb;

			KT_CHECK(pa[i] == x && pc[i] == 2 * x,
				 "seed %u gpu %d element %u: %x %x want %x",
				 seed, g, i, pa[i], pc[i], x);
		}
	}
	kg_close(&rt);
	return 0;
}

/* Fork @n children running proc_compute() at once; 0 if all passed. */
static int run_procs(int n, char *msg, size_t len)
{
	int start[2], res[8][2], i, status, failed = 0;
	pid_t pid[8];
	char m[512];

	if (pipe(start))
		return -1;
	for (i = 0; i < n; i++) {
		if (pipe(res[i]))
			return -1;
		fflush(stdout);
		fflush(stderr);
		pid[i] = fork();
		if (!pid[i]) {
			int r;

			close(start[1]);
			close(res[i][0]);
			m[0] = '\0';
			r = proc_compute(1000 * (i + 1), start[0], m,
					 sizeof(m));
			if (write(res[i][1], m, strlen(m)) < 0)
				_exit(3);
			_exit(r ? 1 : 0);
		}
		close(res[i][1]);
	}
	close(start[0]);
	/* Release all children at once. */
	for (i = 0; i < n; i++)
		if (write(start[1], "g", 1) != 1)
			failed = 1;
	close(start[1]);
	msg[0] = '\0';
	for (i = 0; i < n; i++) {
		ssize_t got = read(res[i][0], m, sizeof(m) - 1);

		m[got > 0 ? got : 0] = '\0';
		close(res[i][0]);
		if (waitpid(pid[i], &status, 0) != pid[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			failed = 1;
			snprintf(msg, len, "child %d: %s (status 0x%x)", i, m,
				 status);
		}
	}
	return failed;
}

/* Tests that fork before any /dev/kfd is open in the test process. */
FIXTURE(nokfd) {
	int unused;
};

FIXTURE_SETUP(nokfd)
{
}

FIXTURE_TEARDOWN(nokfd)
{
}

/* Two processes, each with a queue per GPU, computing at the same time. */
TEST_F_TIMEOUT(nokfd, two_processes_at_once, 300)
{
	char msg[1024];

	EXPECT_EQ(0, run_procs(2, msg, sizeof(msg))) TH_LOG("%s", msg);
}

/* Wait for the memory event @id; check its payload. */
static void expect_fault(struct __test_metadata *_metadata, struct kg_rt *rt,
			 uint32_t id, uint64_t va, uint32_t gpu_id,
			 bool read_only)
{
	struct kfd_event_data ev = { .event_id = id };
	struct kfd_hsa_memory_exception_data *d = &ev.memory_exception_data;
	uint32_t result;

	ASSERT_EQ(0, kg_wait(rt->e.kfd, &ev, 1, false, KG_TIMEOUT_MS,
			     &result));
	ASSERT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, result);
	EXPECT_EQ(va & ~(KT_PAGE - 1), d->va);
	EXPECT_EQ(gpu_id, d->gpu_id);
	EXPECT_EQ(!read_only, d->failure.NotPresent);
	EXPECT_EQ(read_only, d->failure.ReadOnly);
	EXPECT_EQ(0, d->failure.NoExecute);
	EXPECT_EQ(0, d->ErrorType);
}

/*
 * A dispatch writing to an unmapped VA on each GPU: the memory event fires
 * with the fault; that queue stops at the packet (rptr stays, later
 * packets do not run); another queue of the process still computes.
 */
TEST_F(cp, unmapped_va_fault_event_other_queue_works)
{
	struct kfd_ioctl_create_event_args ev;
	struct kfdsim_args_fill fargs;
	struct kfdsim_args_vadd vargs;
	struct kg_queue bad, good;
	struct kg_signal sig, sig2;
	struct kg_bo buf;
	struct kg_qinfo qi;
	uint64_t hole;
	uint32_t *p, i;
	int g;

	/* Auto-reset: each wait takes one fault. */
	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_MEMORY, true,
				  0, &ev));
	for (g = 0; g < self->rt.e.ngpus; g++) {
		ASSERT_EQ(0, kg_bo_new(&self->rt, g, KT_PAGE,
				       KT_GTT | KT_WRITABLE, 0, &buf));
		p = buf.cpu;
		ASSERT_EQ(0, kg_queue_new(&self->rt, g,
					  KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
					  1024, &bad));
		ASSERT_EQ(0, kg_queue_new(&self->rt, g,
					  KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
					  1024, &good));
		ASSERT_EQ(0, kg_signal_new(&self->rt, 3, &sig));
		ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig2));

		hole = kg_va_hole(&self->rt) + 0x1234;
		fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 1 };
		ASSERT_EQ(0, kg_dispatch(&bad, KFDSIM_KERNEL_FILL_U32, &fargs,
					 sizeof(fargs), 4, 4, sig.va));
		fargs.dst = hole;
		ASSERT_EQ(0, kg_dispatch(&bad, KFDSIM_KERNEL_FILL_U32, &fargs,
					 sizeof(fargs), 4, 4, sig.va));
		fargs = (struct kfdsim_args_fill){ .dst = buf.va + 64,
						   .value = 3 };
		ASSERT_EQ(0, kg_dispatch(&bad, KFDSIM_KERNEL_FILL_U32, &fargs,
					 sizeof(fargs), 4, 4, sig.va));
		expect_fault(_metadata, &self->rt, ev.event_id, hole,
			     self->rt.ids[g], false);
		kg_sleep_ms(100);
		EXPECT_EQ(1, kg_queue_rptr(&bad));
		EXPECT_EQ(2, kg_signal_load(&sig));
		EXPECT_EQ(1, p[0]);
		EXPECT_EQ(0, p[16]) TH_LOG("a packet after the fault ran");
		ASSERT_EQ(0, kg_qinfo(getpid(), bad.id, &qi));
		EXPECT_EQ(1, qi.rptr);
		EXPECT_EQ(1, qi.flags & 1);

		/* The other queue: c = a + b within buf. */
		for (i = 0; i < 32; i++)
			p[256 + i] = i, p[512 + i] = 1000 * i;
		vargs = (struct kfdsim_args_vadd){ buf.va + 1024,
						   buf.va + 2048,
						   buf.va + 3072 };
		ASSERT_EQ(0, kg_dispatch(&good, KFDSIM_KERNEL_VADD_U32, &vargs,
					 sizeof(vargs), 32, 8, sig2.va));
		ASSERT_EQ(0, kg_signal_wait(&sig2, 0, KG_TIMEOUT_MS));
		for (i = 0; i < 32; i++)
			ASSERT_EQ(1001 * i, p[768 + i]);
		ASSERT_EQ(0, kg_qinfo(getpid(), good.id, &qi));
		EXPECT_EQ(0, qi.flags);
		EXPECT_EQ(0, kg_queue_free(&bad));
		EXPECT_EQ(0, kg_queue_free(&good));
		EXPECT_EQ(0, kg_bo_free(&self->rt, &buf));
	}
}

/* A write to a BO allocated without WRITABLE: a read-only fault. */
TEST_F(cp, write_to_read_only_bo_faults)
{
	struct kfd_ioctl_create_event_args ev;
	struct kfdsim_args_fill fargs;
	struct kg_bo ro;
	struct kg_queue q;
	uint32_t *p;

	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_MEMORY, false,
				  0, &ev));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * KT_PAGE, KT_GTT, 0, &ro));
	p = ro.cpu;
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q));
	/* Starts in page 1 of the BO. */
	fargs = (struct kfdsim_args_fill){ .dst = ro.va + KT_PAGE + 8,
					   .value = 9 };
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
				 sizeof(fargs), 100, 10, 0));
	expect_fault(_metadata, &self->rt, ev.event_id, ro.va + KT_PAGE,
		     self->rt.ids[0], true);
	EXPECT_TRUE(kt_is_zero(p, 4 * KT_PAGE));
	EXPECT_EQ(0, kg_queue_rptr(&q));
}

/*
 * A packet the CP cannot run (bad descriptor, bad geometry, unknown type)
 * stops its queue without a memory event.
 */
TEST_F(cp, bad_packets_stop_queue_without_fault_event)
{
	static const char *const what[] = {
		"descriptor with a bad magic", "setup 0", "setup 4",
		"setup with reserved bits", "unused dimension of 2",
		"grid size 0", "workgroup size 0", "reserved0 not 0",
		"reserved2 not 0", "vendor-specific packet",
		"agent dispatch packet", "packet type 200",
		"descriptor version 2", "descriptor opcode 8",
		"descriptor pad not 0", "fill pad not 0",
		"fill dst not 4-byte aligned",
		"fill dst wraps the address space",
		"checksum result not 8-byte aligned", "loop pad not 0",
	};
	struct kfd_ioctl_create_event_args ev;
	struct kfdsim_kernel_descriptor *desc;
	struct kfdsim_aql_dispatch pkt;
	struct kfdsim_args_fill fargs, *ka;
	struct kg_signal sig;
	struct kg_qinfo qi;
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p;
	unsigned int k;

	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_MEMORY, false,
				  0, &ev));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &buf));
	p = buf.cpu;
	for (k = 0; k < sizeof(what) / sizeof(what[0]); k++) {
		ASSERT_EQ(0, kg_queue_new(&self->rt, 0,
					  KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
					  1024, &q));
		ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
		fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 5 };
		kg_dispatch_packet(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
				   sizeof(fargs), 4, 4, sig.va, &pkt);
		/* The kernarg of slot 0, and a spare descriptor slot. */
		ka = (void *)((char *)q.ctl.cpu + KG_CTL_KERNARG);
		desc = (void *)((char *)q.ctl.cpu + KG_CTL_DESC(0));
		*desc = (struct kfdsim_kernel_descriptor){ KFDSIM_KERNEL_MAGIC,
			KFDSIM_KERNEL_VERSION, KFDSIM_KERNEL_FILL_U32, 0 };
		switch (k) {
		case 0: desc->magic = 0; break;
		case 1: pkt.setup = 0; break;
		case 2: pkt.setup = 4; break;
		case 3: pkt.setup = 0x101; break;
		case 4: pkt.grid_size_y = 2; break;
		case 5: pkt.grid_size_x = 0; break;
		case 6: pkt.workgroup_size_x = 0; break;
		case 7: pkt.reserved0 = 1; break;
		case 8: pkt.reserved2 = 1; break;
		case 9:
			pkt.header =
				KG_AQL_HDR(KFDSIM_AQL_TYPE_VENDOR_SPECIFIC);
			break;
		case 10:
			pkt.header = KG_AQL_HDR(KFDSIM_AQL_TYPE_AGENT_DISPATCH);
			break;
		case 11: pkt.header = KG_AQL_HDR(200); break;
		case 12: desc->version = 2; break;
		case 13: desc->opcode = KG_KERNEL_LAST + 1; break;
		case 14: desc->pad = 1; break;
		case 15: ka->pad = 1; break;
		case 16: ka->dst += 2; break;
		case 17: ka->dst = 0xfffffffffffffff8ULL; break;
		case 18:
			desc->opcode = KFDSIM_KERNEL_CHECKSUM;
			((struct kfdsim_args_checksum *)ka)->result =
				buf.va + 4;
			break;
		case 19:
			desc->opcode = KFDSIM_KERNEL_LOOP;
			*(struct kfdsim_args_loop *)ka =
				(struct kfdsim_args_loop){ buf.va, 1, 1 };
			break;
		}
		if (k == 0 || (k >= 12 && k <= 14) || k >= 18)
			pkt.kernel_object = q.ctl.va + KG_CTL_DESC(0);
		ASSERT_EQ(0, kg_aql_submit(&q, &pkt));
		fargs.value = 6;
		ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
					 sizeof(fargs), 4, 4, 0));
		/* The error shows in debugfs once the CP got there. */
		for (int t = 0; t < 1000; t++) {
			ASSERT_EQ(0, kg_qinfo(getpid(), q.id, &qi));
			if (qi.flags)
				break;
			kg_sleep_ms(10);
		}
		EXPECT_EQ(1, qi.flags) TH_LOG("%s", what[k]);
		kg_sleep_ms(20);
		EXPECT_EQ(0, kg_queue_rptr(&q)) TH_LOG("%s", what[k]);
		EXPECT_EQ(1, kg_signal_load(&sig)) TH_LOG("%s", what[k]);
		EXPECT_TRUE(kt_is_zero(p, 64)) TH_LOG("%s", what[k]);
		EXPECT_EQ(0, kg_queue_free(&q));
	}
	/* None of these is a page fault. */
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT,
		  kg_wait1(self->rt.e.kfd, ev.event_id, 0));
}

/*
 * A queue laid out as ROCr's amd_queue_t with a fresh inactive signal (0)
 * whose completion writes the first u64 of @box (zeroed here) and fires
 * event @event_id, and a fresh completion signal @done (1).
 */
static int rocr_queue(struct kg_rt *rt, uint32_t event_id, struct kg_bo *box,
		      struct kg_queue *q, struct kg_signal *inactive,
		      struct kg_signal *done)
{
	int ret;

	ret = kg_queue_new_amd(rt, 0, 1024, q);
	if (!ret)
		ret = kg_signal_new(rt, 1, done);
	if (!ret)
		ret = kg_signal_new(rt, 0, inactive);
	if (ret)
		return ret;
	*(uint64_t *)box->cpu = 0;
	inactive->cpu->event_mailbox_ptr = box->va;
	inactive->cpu->event_id = event_id;
	memcpy((char *)q->ctl.cpu + KFDSIM_AMD_QUEUE_INACTIVE_SIGNAL,
	       &inactive->va, sizeof(inactive->va));
	return 0;
}

/*
 * On a queue laid out as ROCr's amd_queue_t, a packet the CP cannot run
 * also stores the CP's error code into the queue's inactive signal and
 * fires that signal's event, as gfx9 firmware does for ROCr's queue error
 * handler; the packet's own completion signal stays untouched.
 */
TEST_F(cp, bad_packets_reported_to_inactive_signal)
{
	static const struct {
		const char *what;
		int64_t code;
	} want[] = {
		{ "machine code starting with an illegal instruction",
		  KFDSIM_AQL_ERROR_ILLEGAL_INSTRUCTION },
		{ "NULL kernel object", KFDSIM_AQL_ERROR_INVALID_CODE },
		{ "fill dst not 4-byte aligned", KFDSIM_AQL_ERROR_INVALID_CODE },
		{ "setup 0", KFDSIM_AQL_ERROR_INVALID_DIM },
		{ "grid size 0", KFDSIM_AQL_ERROR_INVALID_DIM },
		{ "workgroup of 2048", KFDSIM_AQL_ERROR_GROUP_TOO_LARGE },
		{ "reserved2 not 0", KFDSIM_AQL_ERROR_INVALID_FORMAT },
		{ "packet type 200", KFDSIM_AQL_ERROR_INVALID_FORMAT },
		{ "vendor-specific packet", KFDSIM_AQL_ERROR_VENDOR_PACKET },
	};
	struct kfd_ioctl_create_event_args ev;
	struct kfdsim_aql_dispatch pkt;
	struct kfdsim_args_fill fargs, *ka;
	struct kg_signal done, inactive;
	struct kg_bo buf, box, code;
	struct kg_qinfo qi;
	struct kg_queue q;
	uint64_t *mb;
	unsigned int k;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &buf));
	/*
	 * gfx9 machine code (Documentation/gfx9-engine.rst): a kernel
	 * descriptor whose code, 256 bytes on, is a MIMG instruction.
	 */
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &code));
	((uint64_t *)code.cpu)[2] = 256;	/* code entry offset */
	((uint32_t *)code.cpu)[64] = 0xf0000000;
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &box));
	mb = box.cpu;
	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_SIGNAL, true,
				  0, &ev));
	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		ASSERT_EQ(0, rocr_queue(&self->rt, ev.event_id, &box, &q,
					&inactive, &done));
		fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 5 };
		kg_dispatch_packet(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
				   sizeof(fargs), 4, 4, done.va, &pkt);
		ka = (void *)((char *)q.ctl.cpu + KG_CTL_KERNARG);
		switch (k) {
		case 0: pkt.kernel_object = code.va; break;
		case 1: pkt.kernel_object = 0; break;
		case 2: ka->dst += 2; break;
		case 3: pkt.setup = 0; break;
		case 4: pkt.grid_size_x = 0; break;
		case 5:
			pkt.workgroup_size_x = 2048;
			pkt.grid_size_x = 4096;
			break;
		case 6: pkt.reserved2 = 1; break;
		case 7: pkt.header = KG_AQL_HDR(200); break;
		case 8:
			pkt.header =
				KG_AQL_HDR(KFDSIM_AQL_TYPE_VENDOR_SPECIFIC);
			break;
		}
		ASSERT_EQ(0, kg_aql_submit(&q, &pkt));
		EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
			  kg_wait1(self->rt.e.kfd, ev.event_id, KG_TIMEOUT_MS))
			TH_LOG("%s", want[k].what);
		EXPECT_EQ(want[k].code, kg_signal_load(&inactive))
			TH_LOG("%s", want[k].what);
		EXPECT_EQ(ev.event_id, mb[0]) TH_LOG("%s", want[k].what);
		EXPECT_EQ(1, kg_signal_load(&done)) TH_LOG("%s", want[k].what);
		EXPECT_EQ(0, kg_queue_rptr(&q)) TH_LOG("%s", want[k].what);
		EXPECT_TRUE(kt_is_zero(buf.cpu, 64)) TH_LOG("%s", want[k].what);
		EXPECT_EQ(0, kg_queue_free(&q));
	}
	/* A queue without ROCr's layout stops without a report. */
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q));
	kg_dispatch_packet(&q, KFDSIM_KERNEL_FILL_U32, &fargs, sizeof(fargs),
			   4, 4, 0, &pkt);
	pkt.kernel_object = buf.va;
	ASSERT_EQ(0, kg_aql_submit(&q, &pkt));
	for (k = 0; k < 1000; k++) {
		ASSERT_EQ(0, kg_qinfo(getpid(), q.id, &qi));
		if (qi.flags)
			break;
		kg_sleep_ms(10);
	}
	EXPECT_EQ(1, qi.flags);
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT,
		  kg_wait1(self->rt.e.kfd, ev.event_id, 0));
	EXPECT_EQ(0, kg_queue_free(&q));
}

/* VADD with a, b and c at different offsets within their pages. */
TEST_F(cp, vadd_arrays_at_different_page_offsets)
{
	const uint32_t n = 5 * 1024 + 3;
	struct kfdsim_args_vadd args;
	struct kg_signal sig;
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *a, *b, *c, i, bad = 0;
	const uint32_t oa = 12, ob = 4096 + 1000, oc = 3 * 4096 * 8 + 2052;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 32 * KT_PAGE,
			       KT_VRAM | KT_WRITABLE, 0, &buf));
	a = (uint32_t *)((char *)buf.cpu + oa);
	b = (uint32_t *)((char *)buf.cpu + ob * 2);
	c = (uint32_t *)((char *)buf.cpu + oc);
	memset(buf.cpu, 0xa5, 32 * KT_PAGE);
	kt_fill(a, 4 * n, 8);
	kt_fill(b, 4 * n, 9);
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	args = (struct kfdsim_args_vadd){ buf.va + oa, buf.va + ob * 2,
					  buf.va + oc };
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_VADD_U32, &args,
				 sizeof(args), n, 100, sig.va));
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	for (i = 0; i < n; i++)
		if (c[i] != a[i] + b[i] && bad++ < 5)
			TH_LOG("c[%u] = 0x%x, want 0x%x", i, c[i], a[i] + b[i]);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0xa5a5a5a5, c[n]);
	EXPECT_EQ(0xa5a5a5a5, c[-1]);
}

/* Ring, pointers and kernel objects may live in VRAM as well. */
TEST_F(cp, queue_memory_in_vram)
{
	struct kfd_ioctl_create_queue_args a = { 0 };
	struct kfdsim_aql_dispatch pkt = { 0 };
	struct kfdsim_kernel_descriptor *d;
	struct kfdsim_args_fill *fa;
	struct kg_bo mem, out;
	uint64_t *db, *wp;
	void *slice;
	char *m;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * KT_PAGE,
			       KT_VRAM | KT_WRITABLE, 0, &mem));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_VRAM | KT_WRITABLE, 0,
			       &out));
	m = mem.cpu;
	/* page 0: ring; page 1: rptr, wptr; page 2: descriptor, kernarg */
	d = (void *)(m + 2 * KT_PAGE);
	*d = (struct kfdsim_kernel_descriptor){ KFDSIM_KERNEL_MAGIC,
		KFDSIM_KERNEL_VERSION, KFDSIM_KERNEL_FILL_U32, 0 };
	fa = (void *)(m + 2 * KT_PAGE + 64);
	*fa = (struct kfdsim_args_fill){ .dst = out.va, .value = 0x600d };
	a.ring_base_address = mem.va;
	a.ring_size = 4096;
	a.read_pointer_address = mem.va + KT_PAGE;
	a.write_pointer_address = mem.va + KT_PAGE + 8;
	a.gpu_id = self->rt.ids[0];
	a.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
	a.queue_percentage = 100;
	ASSERT_EQ(0, kt_ioctl(self->rt.e.kfd, AMDKFD_IOC_CREATE_QUEUE, &a));
	slice = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE,
		     MAP_SHARED, self->rt.e.kfd,
		     (off_t)(a.doorbell_offset & ~0x1fffULL));
	ASSERT_NE(MAP_FAILED, slice);
	db = (uint64_t *)((char *)slice + (a.doorbell_offset & 0x1fff));
	wp = (uint64_t *)(m + KT_PAGE + 8);

	pkt.setup = 1;
	pkt.workgroup_size_x = 64;
	pkt.grid_size_x = 256;
	pkt.kernel_object = mem.va + 2 * KT_PAGE;
	pkt.kernarg_address = mem.va + 2 * KT_PAGE + 64;
	memcpy(m + 2, (char *)&pkt + 2, sizeof(pkt) - 2);
	__atomic_store_n((uint16_t *)m,
			 KG_AQL_HDR(KFDSIM_AQL_TYPE_KERNEL_DISPATCH),
			 __ATOMIC_RELEASE);
	__atomic_store_n(wp, 1, __ATOMIC_RELEASE);
	__atomic_store_n(db, 0, __ATOMIC_RELEASE);	/* ROCm: last index */
	for (int t = 0; t < 6000 && !*(volatile uint64_t *)(m + KT_PAGE); t++)
		kg_sleep_ms(10);
	EXPECT_EQ(1, *(volatile uint64_t *)(m + KT_PAGE));
	EXPECT_EQ(0x600d, ((uint32_t *)out.cpu)[255]);
	EXPECT_EQ(0, ((uint32_t *)out.cpu)[256]);
	munmap(slice, KT_DOORBELL_SIZE);
}

/*
 * A completion signal whose mailbox is unmapped faults (after the signal
 * was decremented) and stops the queue.
 */
TEST_F(cp, unmapped_event_mailbox_faults)
{
	struct kfd_ioctl_create_event_args mev, sev;
	struct kfdsim_args_fill fargs;
	struct kg_signal sig;
	struct kg_bo buf;
	struct kg_queue q;
	uint64_t hole = kg_va_hole(&self->rt);

	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_MEMORY, true,
				  0, &mev));
	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_SIGNAL, true,
				  0, &sev));
	ASSERT_EQ(0, page_and_queue(&self->rt, &buf, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	sig.cpu->event_mailbox_ptr = hole;
	sig.cpu->event_id = sev.event_id;
	fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 4 };
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
				 sizeof(fargs), 4, 4, sig.va));
	expect_fault(_metadata, &self->rt, mev.event_id, hole, self->rt.ids[0],
		     false);
	EXPECT_EQ(4, *(uint32_t *)buf.cpu);
	EXPECT_EQ(0, kg_signal_load(&sig));
	EXPECT_EQ(0, kg_queue_rptr(&q));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT,
		  kg_wait1(self->rt.e.kfd, sev.event_id, 0));
}

/* Child: a memory event and a fault of its own; report the payload. */
static int faulting_child(void *arg, char *msg, size_t len)
{
	struct kfd_ioctl_create_event_args ev;
	struct kfdsim_args_fill fargs = { .value = 1 };
	struct kfd_event_data ed = { 0 };
	struct kg_queue q;
	struct kg_rt rt;
	uint32_t result;
	int ret;

	(void)arg;
	ret = kg_open(&rt);
	KT_CHECK(!ret, "kg_open %d", ret);
	KT_CHECK(!kg_event_new(rt.e.kfd, KFD_IOC_EVENT_MEMORY, false, 0, &ev),
		 "event");
	KT_CHECK(!kg_queue_new(&rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 1024,
			       &q), "queue");
	fargs.dst = kg_va_hole(&rt);
	KT_CHECK(!kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
			      sizeof(fargs), 1, 1, 0), "dispatch");
	ed.event_id = ev.event_id;
	ret = kg_wait(rt.e.kfd, &ed, 1, false, KG_TIMEOUT_MS, &result);
	KT_CHECK(!ret && result == KFD_IOC_WAIT_RESULT_COMPLETE,
		 "child wait: %d %u", ret, result);
	KT_CHECK(ed.memory_exception_data.va == fargs.dst, "child va");
	kg_close(&rt);
	return 0;
}

/* A fault in another process fires none of this process's events. */
TEST_F(cp, fault_in_other_process_not_seen_here)
{
	struct kfd_ioctl_create_event_args ev;
	struct kfdsim_args_loop largs;
	struct kg_signal sig;
	struct kg_queue q;
	struct kg_bo buf;
	char msg[256];

	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_MEMORY, false,
				  0, &ev));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 64 * KT_PAGE,
			       KT_GTT | KT_WRITABLE, 0, &buf));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	largs = (struct kfdsim_args_loop){ .buf = buf.va, .steps = 200 };
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_LOOP, &largs,
				 sizeof(largs), 16 * 1024, 256, sig.va));
	EXPECT_EQ(0, kt_run_child(faulting_child, NULL, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT,
		  kg_wait1(self->rt.e.kfd, ev.event_id, 0));
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT,
		  kg_wait1(self->rt.e.kfd, ev.event_id, 0));
}

/*
 * A barrier on one GPU waiting for a dispatch on the other GPU, and a
 * barrier on a second queue of the same GPU waiting for the first queue.
 */
TEST_F(cp, barriers_across_queues_and_gpus)
{
	struct kfdsim_args_loop largs;
	struct kfdsim_args_copy cargs;
	struct kg_signal s0, s1, done;
	struct kg_queue q0, q1, q2;
	uint64_t deps[1];
	struct kg_bo buf;
	uint32_t *p, a, b, i;
	int g1 = self->rt.e.ngpus - 1;
	const uint32_t n = 4096, steps = 300;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 8 * n, KT_GTT | KT_WRITABLE,
			       KG_MAP_ALL, &buf));
	p = buf.cpu;
	for (i = 0; i < n; i++)
		p[i] = i;
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q0));
	ASSERT_EQ(0, kg_queue_new(&self->rt, g1, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q1));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q2));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &s0));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &s1));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &done));

	/* q1 (other GPU): wait for q0's loop, then copy the result. */
	deps[0] = s0.va;
	ASSERT_EQ(0, kg_barrier(&q1, KFDSIM_AQL_TYPE_BARRIER_AND, deps, 1, 0));
	cargs = (struct kfdsim_args_copy){ buf.va, buf.va + 4 * n };
	ASSERT_EQ(0, kg_dispatch(&q1, KFDSIM_KERNEL_COPY_U32, &cargs,
				 sizeof(cargs), n, 64, s1.va));
	/* q2 (same GPU as q0): wait for the copy, then loop once more. */
	deps[0] = s1.va;
	ASSERT_EQ(0, kg_barrier(&q2, KFDSIM_AQL_TYPE_BARRIER_AND, deps, 1, 0));
	largs = (struct kfdsim_args_loop){ .buf = buf.va + 4 * n, .steps = 1 };
	ASSERT_EQ(0, kg_dispatch(&q2, KFDSIM_KERNEL_LOOP, &largs,
				 sizeof(largs), n, 64, done.va));
	kg_sleep_ms(200);
	EXPECT_EQ(0, kg_queue_rptr(&q1));
	EXPECT_EQ(0, kg_queue_rptr(&q2));
	/* Now q0 runs the loop the others wait for. */
	largs = (struct kfdsim_args_loop){ .buf = buf.va, .steps = steps };
	ASSERT_EQ(0, kg_dispatch(&q0, KFDSIM_KERNEL_LOOP, &largs,
				 sizeof(largs), n, 64, s0.va));
	ASSERT_EQ(0, kg_signal_wait(&done, 0, KG_TIMEOUT_MS));
	kg_loop_affine(0, steps, &a, &b);
	for (i = 0; i < n; i++) {
		uint32_t x = i * a + b;

		ASSERT_EQ(x, p[i]);
		ASSERT_EQ(x * 1664525u + 1013904223u, p[n + i]) TH_LOG("%u", i);
	}
}

/* Buffers and the signal in user memory registered as USERPTR BOs. */
TEST_F(cp, userptr_buffers_and_signal)
{
	const size_t size = 64 * KT_PAGE;
	struct kfdsim_args_vadd args;
	struct kfdsim_signal *sig;
	struct kg_queue q;
	uint64_t h, off, va;
	uint32_t *mem, *a, *b, *c, i, n = 4096;
	uint32_t id = self->rt.ids[0];

	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	a = mem;
	b = mem + n;
	c = mem + 2 * n;
	sig = (struct kfdsim_signal *)(mem + 3 * n);
	kt_fill(a, 4 * n, 17);
	kt_fill(b, 4 * n, 18);
	memset(sig, 0, sizeof(*sig));
	sig->value = 1;
	va = kg_va_hole(&self->rt);
	off = (uintptr_t)mem;
	ASSERT_EQ(0, kt_alloc(self->rt.e.kfd, id, va, size,
			      KT_USERPTR | KT_WRITABLE, &h, &off));
	ASSERT_EQ(0, kt_map(self->rt.e.kfd, h, &id, 1));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q));
	args = (struct kfdsim_args_vadd){ va, va + 4 * n, va + 8 * n };
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_VADD_U32, &args,
				 sizeof(args), n, 256, va + 12 * n));
	for (i = 0; i < 6000 && __atomic_load_n(&sig->value, __ATOMIC_ACQUIRE);
	     i++)
		kg_sleep_ms(10);
	ASSERT_EQ(0, sig->value);
	for (i = 0; i < n; i++)
		ASSERT_EQ(a[i] + b[i], c[i]) TH_LOG("element %u", i);
	EXPECT_EQ(0, kg_queue_free(&q));
	EXPECT_EQ(0, kt_unmap(self->rt.e.kfd, h, &id, 1));
	EXPECT_EQ(0, kt_free(self->rt.e.kfd, h));
	munmap(mem, size);
}

/* Round-robin: a tiny packet on a second queue runs beside a long kernel. */
TEST_F_TIMEOUT(cp, short_packet_not_starved_by_long_kernel, 120)
{
	struct kfdsim_args_loop largs;
	struct kfdsim_args_fill fargs;
	struct kg_signal long_sig, short_sig;
	struct kg_queue ql, qs;
	struct kg_bo buf, small;
	uint32_t steps;
	uint64_t t0, took;

	ASSERT_EQ(0, kg_loop_steps_for(&self->rt, 0, 64 * 1024, 256, 5000,
				       &steps));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 256 * 1024, KT_GTT | KT_WRITABLE,
			       KG_NO_CPU, &buf));
	ASSERT_EQ(0, page_and_queue(&self->rt, &small, &ql));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &qs));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &long_sig));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &short_sig));
	largs = (struct kfdsim_args_loop){ .buf = buf.va, .steps = steps };
	ASSERT_EQ(0, kg_dispatch(&ql, KFDSIM_KERNEL_LOOP, &largs,
				 sizeof(largs), 64 * 1024, 256, long_sig.va));
	kg_sleep_ms(300);
	fargs = (struct kfdsim_args_fill){ .dst = small.va, .value = 1 };
	t0 = kg_now_ms();
	ASSERT_EQ(0, kg_dispatch(&qs, KFDSIM_KERNEL_FILL_U32, &fargs,
				 sizeof(fargs), 1, 1, short_sig.va));
	ASSERT_EQ(0, kg_signal_wait(&short_sig, 0, KG_TIMEOUT_MS));
	took = kg_now_ms() - t0;
	TH_LOG("short packet done after %lu ms beside a %u-step loop",
	       (unsigned long)took, steps);
	/* Not after the long kernel: it still runs. Loose bound for TCG. */
	EXPECT_EQ(1, kg_signal_load(&long_sig));
	EXPECT_LT(took, 3000);
	ASSERT_EQ(0, kg_signal_wait(&long_sig, 0, KG_TIMEOUT_MS));
}

/*
 * Unmapping and freeing a buffer while a kernel writes it: the kernel
 * faults on the vanished page (memory event), nothing else happens.
 */
TEST_F_TIMEOUT(cp, free_buffer_under_running_kernel, 120)
{
	struct kfd_ioctl_create_event_args ev;
	struct kfd_event_data ed = { 0 };
	struct kfdsim_args_loop largs;
	struct kg_signal sig;
	struct kg_qinfo qi;
	struct kg_queue q;
	struct kg_bo buf;
	uint32_t result, steps;

	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_MEMORY, true,
				  0, &ev));
	ASSERT_EQ(0, kg_loop_steps_for(&self->rt, 0, 64 * 1024, 256, 5000,
				       &steps));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 256 * 1024, KT_VRAM | KT_WRITABLE,
			       KG_NO_CPU, &buf));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	largs = (struct kfdsim_args_loop){ .buf = buf.va, .steps = steps };
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_LOOP, &largs,
				 sizeof(largs), 64 * 1024, 256, sig.va));
	kg_sleep_ms(300);
	EXPECT_EQ(0, kg_bo_free(&self->rt, &buf));
	ed.event_id = ev.event_id;
	ASSERT_EQ(0, kg_wait(self->rt.e.kfd, &ed, 1, false, KG_TIMEOUT_MS,
			     &result));
	ASSERT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, result);
	EXPECT_GE(ed.memory_exception_data.va, buf.va);
	EXPECT_LT(ed.memory_exception_data.va, buf.va + 256 * 1024);
	ASSERT_EQ(0, kg_qinfo(getpid(), q.id, &qi));
	EXPECT_EQ(1, qi.flags);
	EXPECT_EQ(1, kg_signal_load(&sig));
}

/* ---- KFDSIM_KERNEL_CHUNK_SUMS ---- */

static uint64_t ref_or64(const uint8_t *p, uint64_t len)
{
	uint64_t bits = 0, w, i;

	for (i = 0; i < len; i += 8) {
		memcpy(&w, p + i, sizeof(w));
		bits |= w;
	}
	return bits;
}

static uint32_t cs_chunks(uint64_t size, uint32_t chunk)
{
	return (uint32_t)((size + chunk - 1) / chunk);
}

/* The chunk kernel the cs_ helpers dispatch and check against. */
static uint32_t cs_op = KFDSIM_KERNEL_CHUNK_SUMS;

static uint64_t cs_ref_sum(const uint8_t *p, uint64_t len)
{
	if (cs_op == KFDSIM_KERNEL_CHUNK_ZERO)
		return 0;
	return cs_op == KFDSIM_KERNEL_CHUNK_XXH64 ? kp_xxh64(p, len) :
						    kp_sum_buf(p, len);
}

/* What [1] holds: the OR of the words, or (zero test) the first non-zero. */
static uint64_t cs_ref_bits(const uint8_t *p, uint64_t len)
{
	uint64_t w = 0, i;

	if (cs_op != KFDSIM_KERNEL_CHUNK_ZERO)
		return ref_or64(p, len);
	for (i = 0; i < len && !w; i += 8)
		memcpy(&w, p + i, sizeof(w));
	return w;
}

static int cs_dispatch(struct kg_queue *q, uint64_t src, uint64_t out,
		       uint64_t size, uint32_t chunk, uint32_t wg,
		       uint64_t sig_va)
{
	struct kfdsim_args_chunk_sums args = {
		.src = src, .out = out, .size = size, .chunk = chunk,
	};

	return kg_dispatch(q, cs_op, &args, sizeof(args),
			   cs_chunks(size, chunk), wg, sig_va);
}

/*
 * Fill @out with 0xa5, run the chunk kernel over @size bytes at @src_va
 * and wait for it. 0, else -1 with the completion signal's value in
 * *@sig_val.
 */
static int cs_run(struct kg_rt *rt, struct kg_queue *q, uint64_t src_va,
		  struct kg_bo *out, uint64_t size, uint32_t chunk, uint32_t wg,
		  long *sig_val)
{
	struct kg_signal sig;

	*sig_val = 0;
	memset(out->cpu, 0xa5, 2 * size + KT_PAGE);
	if (kg_signal_new(rt, 1, &sig) ||
	    cs_dispatch(q, src_va, out->va, size, chunk, wg, sig.va))
		return -1;
	if (kg_signal_wait(&sig, 0, KG_TIMEOUT_MS)) {
		*sig_val = (long)kg_signal_load(&sig);
		return -1;
	}
	return 0;
}

/*
 * Compare out pairs [0, @last) with the plugin's own checksum, kp_sum_buf()
 * (the fold64 of include/uapi/linux/kfdsim.h: device and plugin must
 * agree), and the OR of the chunk's words; the pairs from @last to @limit
 * must still hold the 0xa5 fill. Returns the number of mismatches (the
 * first few logged).
 */
static uint32_t cs_check(struct __test_metadata *_metadata, const void *src,
			 const uint64_t *out, uint64_t size, uint32_t chunk,
			 uint32_t last, uint32_t limit)
{
	const uint64_t fill = 0xa5a5a5a5a5a5a5a5ULL;
	uint32_t c, bad = 0;

	for (c = 0; c < limit; c++) {
		const uint8_t *p = (const uint8_t *)src + (uint64_t)c * chunk;
		uint64_t len = size - (uint64_t)c * chunk;
		uint64_t h, bits;

		if (c >= last) {
			if ((out[2 * c] != fill || out[2 * c + 1] != fill) &&
			    bad++ < 5)
				TH_LOG("chunk %u (not run yet) written", c);
			continue;
		}
		if (len > chunk)
			len = chunk;
		h = cs_ref_sum(p, len);
		bits = cs_ref_bits(p, len);
		if (!bits != kp_is_zero(p, len) && bad++ < 5)
			TH_LOG("chunk %u: OR 0x%llx but kp_is_zero() %d", c,
			       (unsigned long long)bits, kp_is_zero(p, len));
		if ((out[2 * c] != h || out[2 * c + 1] != bits) && bad++ < 5)
			TH_LOG("chunk %u of %llu bytes: 0x%llx 0x%llx, want 0x%llx 0x%llx",
			       c, (unsigned long long)len,
			       (unsigned long long)out[2 * c],
			       (unsigned long long)out[2 * c + 1],
			       (unsigned long long)h, (unsigned long long)bits);
	}
	return bad;
}

/*
 * Every chunk kernel, against the plugin's function.
 * Random data with all-zero chunks (the plugin's case for skipping a chunk)
 * and a short last chunk, src not page aligned, chunks from 8 bytes to
 * 4 MiB and workgroups from 1 to 1024 work-items, partial last ones.
 */
TEST_F_TIMEOUT(cp, chunk_sums_match_plugin_checksum, 300)
{
	/*
	 * 8-byte chunks over the first MiB only: 655360 of them over the
	 * whole buffer took over 4 minutes under a debug kernel.
	 */
	static const struct {
		uint32_t chunk, wg;
		uint64_t size;
	} cfg[] = {
		{ 64 * 1024, 64, 5 * KT_MIB + KT_PAGE + 24 },
		{ KFDSIM_CHUNK_SUMS_MAX_CHUNK, 1, 5 * KT_MIB + KT_PAGE + 24 },
		{ 8, 1024, KT_MIB + 24 },
		{ KT_PAGE + 8, 3, 5 * KT_MIB + KT_PAGE + 24 },
	};
	const uint64_t size = 5 * KT_MIB + KT_PAGE + 24, soff = 8;
	const uint32_t zero[] = { 0, 3, 17, 78 };	/* 64 KiB chunks */
	const uint32_t ops[] = { KFDSIM_KERNEL_CHUNK_SUMS,
				 KFDSIM_KERNEL_CHUNK_XXH64,
				 KFDSIM_KERNEL_CHUNK_ZERO };
	long sig_val;
	struct kg_bo src, out;
	struct kg_queue q;
	uint8_t *p;
	uint32_t i, k, c, n;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, size + soff, KT_VRAM, 0, &src));
	/* Enough for the 8-byte chunks: 16 bytes per 8 of source. */
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 2 * size + KT_PAGE,
			       KT_GTT | KT_WRITABLE, 0, &out));
	p = (uint8_t *)src.cpu + soff;
	kt_fill(src.cpu, size + soff, 4242);
	for (i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
		memset(p + zero[i] * 64 * 1024ULL, 0, 64 * 1024);
	/* Zero but for the first byte: not an all-zero chunk. */
	memset(p + 5 * 64 * 1024ULL, 0, 64 * 1024);
	p[5 * 64 * 1024] = 1;
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q));
	/*
	 * Every configuration with KFDSIM_KERNEL_CHUNK_SUMS (fold64), with
	 * KFDSIM_KERNEL_CHUNK_XXH64 (image version 3's XXH64) and with the
	 * zero test alone, KFDSIM_KERNEL_CHUNK_ZERO.
	 */
	for (k = 0; k < 3 * sizeof(cfg) / sizeof(cfg[0]); k++) {
		cs_op = ops[k / (sizeof(cfg) / sizeof(cfg[0]))];
		c = k % (sizeof(cfg) / sizeof(cfg[0]));
		n = cs_chunks(cfg[c].size, cfg[c].chunk);
		ASSERT_EQ(0, cs_run(&self->rt, &q, src.va + soff, &out,
				    cfg[c].size, cfg[c].chunk, cfg[c].wg,
				    &sig_val))
			TH_LOG("kernel %u, chunk %u: signal %ld", cs_op,
			       cfg[c].chunk, sig_val);
		/* One pair past the last chunk stays as it was. */
		EXPECT_EQ(0, cs_check(_metadata, p, out.cpu, cfg[c].size,
				      cfg[c].chunk, n, n + 1))
			TH_LOG("kernel %u, chunk %u, workgroups of %u", cs_op,
			       cfg[c].chunk, cfg[c].wg);
		if (cfg[c].chunk == 64 * 1024) {
			uint64_t *o = out.cpu;

			for (i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
				EXPECT_EQ(0, o[2 * zero[i] + 1]);
				EXPECT_EQ(cs_op == KFDSIM_KERNEL_CHUNK_ZERO ? 0 :
					  cs_op == KFDSIM_KERNEL_CHUNK_SUMS ?
					  kp_sum_zeros(64 * 1024) :
					  kp_chunk_sum_zeros(KP_SUM_XXH64,
							     64 * 1024),
					  o[2 * zero[i]]);
			}
			EXPECT_EQ(1, o[2 * 5 + 1]);
			/* The last chunk: 4 KiB + 24 bytes. */
			EXPECT_EQ(cs_ref_sum(p + 80 * 64 * 1024ULL,
					     KT_PAGE + 24), o[2 * 80]);
		}
	}
	cs_op = KFDSIM_KERNEL_CHUNK_SUMS;
	EXPECT_EQ(0, kg_queue_free(&q));
}

/* All zero but the chunk's very last byte: the OR is not 0. */
TEST_F(cp, chunk_sums_last_byte_makes_chunk_nonzero)
{
	const uint32_t chunk = 64 * 1024;
	struct kg_signal sig;
	struct kg_bo src, out;
	struct kg_queue q;
	uint8_t *p;
	uint64_t *o;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 3 * chunk, KT_GTT, 0, &src));
	ASSERT_EQ(0, page_and_queue(&self->rt, &out, &q));
	p = src.cpu;
	o = out.cpu;
	memset(p, 0, 3 * chunk);
	p[2 * chunk - 1] = 0x80;
	memset(o, 0xa5, KT_PAGE);
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	ASSERT_EQ(0, cs_dispatch(&q, src.va, out.va, 3 * chunk, chunk, 2,
				 sig.va));
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(0, o[1]);
	EXPECT_EQ(0x80ULL << 56, o[3]);
	EXPECT_EQ(0, o[5]);
	EXPECT_EQ(kp_sum_zeros(chunk), o[0]);
	EXPECT_EQ(kp_sum_zeros(chunk), o[4]);
	EXPECT_NE(o[0], o[2]);
	EXPECT_EQ(kp_sum_buf(p + chunk, chunk), o[2]);
	EXPECT_EQ(0, cs_check(_metadata, p, o, 3 * chunk, chunk, 3, 4));
}

/*
 * Bad arguments or a grid that is not one work-item per chunk stop a ROCr
 * queue with "invalid code" in its inactive signal, as a bad kernarg of
 * another kernel does; nothing is written and no fault is raised. The
 * first case is valid and must complete.
 */
TEST_F(cp, chunk_sums_bad_kernargs_refused)
{
	static const char *const what[] = {
		"valid", "size not a multiple of 8", "size 0", "chunk 0",
		"chunk of 4 MiB + 8", "chunk not a multiple of 8", "pad not 0",
		"src not 8-byte aligned", "out not 8-byte aligned",
		"grid one work-item short", "grid one work-item too many",
		"src + size wraps the address space",
	};
	const uint32_t chunk = 64 * 1024;
	struct kfd_ioctl_create_event_args ev, fev;
	struct kfdsim_args_chunk_sums args;
	struct kfdsim_aql_dispatch pkt;
	struct kg_signal done, inactive;
	struct kg_bo src, out, box;
	struct kg_queue q;
	uint64_t *mb;
	unsigned int k;
	uint32_t n;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * chunk, KT_GTT, 0, &src));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &out));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &box));
	mb = box.cpu;
	kt_fill(src.cpu, 4 * chunk, 99);
	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_SIGNAL, true,
				  0, &ev));
	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_MEMORY, false,
				  0, &fev));
	for (k = 0; k < sizeof(what) / sizeof(what[0]); k++) {
		ASSERT_EQ(0, rocr_queue(&self->rt, ev.event_id, &box, &q,
					&inactive, &done));
		memset(out.cpu, 0, KT_PAGE);
		args = (struct kfdsim_args_chunk_sums){
			.src = src.va, .out = out.va, .size = 4 * chunk,
			.chunk = chunk,
		};
		n = 4;		/* the grid size, when not the case */
		switch (k) {
		case 1: args.size -= 4; break;
		case 2: args.size = 0; n = 1; break;
		case 3: args.chunk = 0; n = 1; break;
		case 4:
			args.chunk = KFDSIM_CHUNK_SUMS_MAX_CHUNK + 8;
			n = 1;
			break;
		case 5: args.chunk = 12; args.size = 48; break;
		case 6: args.pad = 1; break;
		case 7: args.src += 4; args.size -= 8; break;
		case 8: args.out += 4; break;
		case 9: n = 3; break;
		case 10: n = 5; break;
		case 11:
			args.src = 0xffffffffffff0000ULL;
			args.size = 2 * chunk;
			n = 2;
			break;
		}
		kg_dispatch_packet(&q, KFDSIM_KERNEL_CHUNK_SUMS, &args,
				   sizeof(args), n, 1, done.va, &pkt);
		ASSERT_EQ(0, kg_aql_submit(&q, &pkt));
		if (!k) {
			EXPECT_EQ(0, kg_signal_wait(&done, 0, KG_TIMEOUT_MS));
			EXPECT_FALSE(kt_is_zero(out.cpu, 64));
			EXPECT_EQ(0, kg_queue_free(&q));
			continue;
		}
		EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
			  kg_wait1(self->rt.e.kfd, ev.event_id, KG_TIMEOUT_MS))
			TH_LOG("%s", what[k]);
		EXPECT_EQ(KFDSIM_AQL_ERROR_INVALID_CODE,
			  kg_signal_load(&inactive)) TH_LOG("%s", what[k]);
		EXPECT_EQ(ev.event_id, mb[0]) TH_LOG("%s", what[k]);
		EXPECT_EQ(1, kg_signal_load(&done)) TH_LOG("%s", what[k]);
		EXPECT_EQ(0, kg_queue_rptr(&q)) TH_LOG("%s", what[k]);
		EXPECT_TRUE(kt_is_zero(out.cpu, KT_PAGE)) TH_LOG("%s", what[k]);
		EXPECT_EQ(0, kg_queue_free(&q));
	}
	/* None of these is a page fault. */
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT,
		  kg_wait1(self->rt.e.kfd, fev.event_id, 0));
}

/*
 * A source running into unmapped memory: a read fault at the first
 * unmapped page, the queue stops, the chunks before it are written.
 */
TEST_F(cp, chunk_sums_unmapped_source_faults)
{
	struct kfd_ioctl_create_event_args ev;
	struct kg_bo src, out;
	struct kg_queue q;
	uint64_t *o;

	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_MEMORY, false,
				  0, &ev));
	/* kg_bo_new() leaves an unmapped gap after the BO. */
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 2 * KT_PAGE, KT_GTT, 0, &src));
	ASSERT_EQ(0, page_and_queue(&self->rt, &out, &q));
	kt_fill(src.cpu, 2 * KT_PAGE, 5);
	o = out.cpu;
	memset(o, 0xa5, KT_PAGE);
	ASSERT_EQ(0, cs_dispatch(&q, src.va, out.va, 4 * KT_PAGE, KT_PAGE, 1,
				 0));
	expect_fault(_metadata, &self->rt, ev.event_id, src.va + 2 * KT_PAGE,
		     self->rt.ids[0], false);
	EXPECT_EQ(0, kg_queue_rptr(&q));
	EXPECT_EQ(0, cs_check(_metadata, src.cpu, o, 4 * KT_PAGE, KT_PAGE, 2,
			      4));
}

/*
 * 16 MiB in 256 chunks, evicted and restored over and over while it runs.
 * Whenever the dispatch is frozen mid-way, the chunks before the saved
 * progress are done and the others untouched (the kernel stops between
 * chunks); the end result is the uninterrupted one.
 */
TEST_F_TIMEOUT(cp, chunk_sums_evicted_and_resumed, 300)
{
	const uint64_t size = 16 * KT_MIB;
	const uint32_t chunk = 64 * 1024, n = 256;
	struct kg_signal sig;
	struct kg_bo src, out;
	struct kg_qinfo qi;
	struct kg_queue q;
	pid_t pid = getpid();
	int k = 0, mid = 0;
	uint32_t i;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, size, KT_VRAM, 0, &src));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 16 * n, KT_VRAM | KT_WRITABLE, 0,
			       &out));
	kt_fill(src.cpu, size, 2025);
	for (i = 0; i < n; i += 7)
		memset((char *)src.cpu + (uint64_t)i * chunk, 0, chunk);
	memset(out.cpu, 0xa5, 16 * n);
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	ASSERT_EQ(0, cs_dispatch(&q, src.va, out.va, size, chunk, 16, sig.va));
	while (kg_signal_load(&sig) && k < 100) {
		ASSERT_EQ(0, kg_evict(pid));
		if (!kg_qinfo(pid, q.id, &qi) && !qi.rptr && qi.next_wg) {
			/* Progress counts chunks for this kernel. */
			EXPECT_LT(qi.next_wg, n);
			EXPECT_EQ(0, qi.iteration);
			EXPECT_EQ(0, cs_check(_metadata, src.cpu, out.cpu,
					      size, chunk, qi.next_wg, n))
				TH_LOG("frozen at chunk %u", qi.next_wg);
			mid++;
		}
		ASSERT_EQ(0, kg_restore(pid));
		kg_sleep_ms(2);
		k++;
	}
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	TH_LOG("%d evictions, %d of them mid-dispatch", k, mid);
	EXPECT_EQ(0, cs_check(_metadata, src.cpu, out.cpu, size, chunk, n, n));
}

TEST_HARNESS_MAIN
