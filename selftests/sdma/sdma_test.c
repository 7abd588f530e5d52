// SPDX-License-Identifier: GPL-2.0
/*
 * SDMA queues: linear copies (VRAM <-> GTT, many packets, ring wrap-around,
 * odd sizes and addresses), constant fill, fence, trap, NOP, packets
 * published in pieces, and the packets that stop a queue.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt_harness.h"
#include "kfdsim_gpu.h"

KG_FIXTURE(sdma)

#define SDMA	KFD_IOC_QUEUE_TYPE_SDMA

/* VRAM -> GTT -> another VRAM BO on every GPU, in 4 MiB packets. */
TEST_F_TIMEOUT(sdma, copy_vram_gtt_and_back, 300)
{
	const uint64_t size = 8 * KT_MIB;
	struct kg_bo v1, gtt, v2;
	struct kg_queue q;
	int g;

	for (g = 0; g < self->rt.e.ngpus; g++) {
		ASSERT_EQ(0, kg_bo_new(&self->rt, g, size, KT_VRAM, 0, &v1));
		ASSERT_EQ(0, kg_bo_new(&self->rt, g, size, KT_GTT | KT_WRITABLE,
				       0, &gtt));
		ASSERT_EQ(0, kg_bo_new(&self->rt, g, size,
				       KT_VRAM | KT_WRITABLE, 0, &v2));
		kt_fill(v1.cpu, size, 40 + g);
		ASSERT_EQ(0, kg_queue_new(&self->rt, g, SDMA, 4096, &q));
		ASSERT_EQ(0, kg_sdma_copy(&q, gtt.va, v1.va, size, 0));
		ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
		EXPECT_EQ(-1, kt_first_diff(v1.cpu, gtt.cpu, size));
		ASSERT_EQ(0, kg_sdma_copy(&q, v2.va, gtt.va, size, 0));
		ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
		EXPECT_EQ(-1, kt_first_diff(v1.cpu, v2.cpu, size));
		/* 2 copy packets of 28 bytes each way. */
		EXPECT_EQ(2 * 2 * 28, kg_queue_rptr(&q));
		EXPECT_EQ(0, kg_queue_free(&q));
		EXPECT_EQ(0, kg_bo_free(&self->rt, &v1));
		EXPECT_EQ(0, kg_bo_free(&self->rt, &gtt));
		EXPECT_EQ(0, kg_bo_free(&self->rt, &v2));
	}
}

/*
 * A transient -ENOMEM in the CP (the SDMA engine's bounce buffer, failed
 * once through debugfs cp_fail_nth) does not stop the queue: the copy is
 * retried later and completes, and the queue keeps working.
 */
TEST_F(sdma, transient_enomem_in_cp_is_retried)
{
	const uint64_t size = 16 * KT_PAGE;
	struct kg_bo src, dst;
	struct kg_queue q;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, size, KT_GTT, 0, &src));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, size, KT_GTT | KT_WRITABLE, 0,
			       &dst));
	kt_fill(src.cpu, size, 77);
	memset(dst.cpu, 0, size);
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 4096, &q));
	ASSERT_EQ(0, kg_cp_fail_nth_set(1));
	ASSERT_EQ(0, kg_sdma_copy(&q, dst.va, src.va, size, 0));
	EXPECT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(0, kg_cp_fail_nth_get()) TH_LOG("the failure was not injected");
	kg_cp_fail_nth_set(0);
	EXPECT_EQ(-1, kt_first_diff(src.cpu, dst.cpu, size));
	EXPECT_EQ(28, kg_queue_rptr(&q));
	/* The queue still runs what comes next. */
	kt_fill(src.cpu, size, 78);
	ASSERT_EQ(0, kg_sdma_copy(&q, dst.va, src.va, size, 0));
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(-1, kt_first_diff(src.cpu, dst.cpu, size));
	EXPECT_EQ(0, kg_queue_free(&q));
	EXPECT_EQ(0, kg_bo_free(&self->rt, &src));
	EXPECT_EQ(0, kg_bo_free(&self->rt, &dst));
}

/*
 * 12 MiB in hundreds of packets of an odd size through a 1 KiB ring:
 * packets straddle the end of the ring many times.
 */
TEST_F_TIMEOUT(sdma, copy_many_packets_ring_wraps, 300)
{
	const uint64_t size = 12 * KT_MIB;
	const uint32_t chunk = 32768 + 12;
	struct kg_bo src, dst;
	struct kg_queue q;
	uint64_t packets = (size + chunk - 1) / chunk;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, size, KT_VRAM, 0, &src));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, size, KT_GTT | KT_WRITABLE, 0,
			       &dst));
	kt_fill(src.cpu, size, 99);
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 1024, &q));
	ASSERT_EQ(0, kg_sdma_copy(&q, dst.va, src.va, size, chunk));
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(packets * 28, kg_queue_rptr(&q));
	EXPECT_GT(packets * 28, 10 * 1024);
	EXPECT_EQ(-1, kt_first_diff(src.cpu, dst.cpu, size));
}

/* Unaligned addresses and lengths, overlapping nothing outside the range. */
TEST_F(sdma, copy_odd_addresses_and_lengths)
{
	static const struct { uint32_t so, doff, len; } c[] = {
		{ 0, 0, 1 }, { 1, 3, 7 }, { 4095, 1, 2 }, { 3, 4093, 5000 },
		{ 100, 200, 3 * 4096 + 17 }, { 2, 1, 2 * 1024 * 1024 },
	};
	const uint64_t size = 3 * KT_MIB;
	unsigned char *ref;
	struct kg_bo src, dst;
	struct kg_queue q;
	unsigned int i;

	ref = malloc(size);
	ASSERT_NE(NULL, ref);
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, size, KT_GTT, 0, &src));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, size, KT_VRAM | KT_WRITABLE, 0,
			       &dst));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 4096, &q));
	kt_fill(src.cpu, size, 5);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(dst.cpu, 0xee, size);
		memset(ref, 0xee, size);
		memcpy(ref + c[i].doff, (char *)src.cpu + c[i].so, c[i].len);
		ASSERT_EQ(0, kg_sdma_copy(&q, dst.va + c[i].doff,
					  src.va + c[i].so, c[i].len, 0));
		ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
		EXPECT_EQ(-1, kt_first_diff(ref, dst.cpu, size))
			TH_LOG("copy %u: %u bytes from +%u to +%u", i,
			       c[i].len, c[i].so, c[i].doff);
	}
	free(ref);
}

/* CONST_FILL writes exactly its range, also across many packets. */
TEST_F(sdma, const_fill)
{
	const uint64_t size = 6 * KT_MIB;
	const uint64_t off = 4 * 1001, len = 5 * KT_MIB + 4 * 3;
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p;
	uint64_t i, bad = 0;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 1 % self->rt.e.ngpus, size,
			       KT_VRAM | KT_WRITABLE, 0, &buf));
	p = buf.cpu;
	memset(p, 0x11, size);
	ASSERT_EQ(0, kg_queue_new(&self->rt, 1 % self->rt.e.ngpus, SDMA, 1024,
				  &q));
	ASSERT_EQ(0, kg_sdma_fill(&q, buf.va + off, 0xcafef00d, len));
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	for (i = 0; i < size / 4; i++) {
		uint32_t want = i >= off / 4 && i < (off + len) / 4 ?
				0xcafef00d : 0x11111111;

		if (p[i] != want && bad++ < 5)
			TH_LOG("dword %lu: 0x%x want 0x%x", (unsigned long)i,
			       p[i], want);
	}
	EXPECT_EQ(0, bad);
	/* Two packets (4 + 1 MiB and a bit) of 5 dwords. */
	EXPECT_EQ(2 * 20, kg_queue_rptr(&q));
}

/* FENCE writes its 32-bit value and nothing next to it; NOPs are skipped. */
TEST_F(sdma, fence_and_nop)
{
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p;
	uint64_t before;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &buf));
	p = buf.cpu;
	memset(p, 0xff, KT_PAGE);
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 1024, &q));
	ASSERT_EQ(0, kg_sdma_nop(&q, 0));
	ASSERT_EQ(0, kg_sdma_nop(&q, 13));
	ASSERT_EQ(0, kg_sdma_fence(&q, buf.va + 8, 0x12345678));
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(0x12345678, p[2]);
	EXPECT_EQ(0xffffffff, p[1]);
	EXPECT_EQ(0xffffffff, p[3]);
	EXPECT_EQ(4 * (1 + 14 + 4), kg_queue_rptr(&q));

	/* Fences are executed in order: the last value stays. */
	before = q.windex;
	ASSERT_EQ(0, kg_sdma_fence(&q, buf.va + 8, 1));
	ASSERT_EQ(0, kg_sdma_fence(&q, buf.va + 8, 2));
	ASSERT_EQ(0, kg_sdma_fence(&q, buf.va + 8, 3));
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(3, p[2]);
	EXPECT_EQ(before + 3 * 16, kg_queue_rptr(&q));
}

/* A packet published in two steps runs once it is whole. */
TEST_F(sdma, packet_published_in_pieces)
{
	uint32_t dw[KFDSIM_SDMA_FENCE_DWORDS];
	struct kg_bo buf;
	struct kg_queue q;
	uint32_t *p;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &buf));
	p = buf.cpu;
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 1024, &q));
	kg_sdma_fence_packet(dw, buf.va, 77);
	ASSERT_EQ(0, kg_sdma_write(&q, dw, 2));
	kg_sdma_commit(&q);
	kg_sleep_ms(200);
	EXPECT_EQ(0, kg_queue_rptr(&q));
	ASSERT_EQ(0, kg_sdma_write(&q, dw + 2, 2));
	kg_sdma_commit(&q);
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(77, p[0]);

	/* A NOP claiming more dwords than are published waits for them. */
	ASSERT_EQ(0, kg_sdma_nop(&q, 0));
	dw[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_NOP, 0) |
		3u << KFDSIM_SDMA_NOP_COUNT_SHIFT;
	ASSERT_EQ(0, kg_sdma_write(&q, dw, 1));
	kg_sdma_commit(&q);
	kg_sleep_ms(200);
	EXPECT_EQ(20, kg_queue_rptr(&q));
	dw[0] = dw[1] = dw[2] = 0xffffffff;	/* padding is never read */
	ASSERT_EQ(0, kg_sdma_write(&q, dw, 3));
	ASSERT_EQ(0, kg_sdma_fence(&q, buf.va + 4, 88));
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(88, p[1]);
}

/* TRAP fires the event whose id it carries, after the packets before it. */
TEST_F(sdma, trap_fires_event)
{
	struct kfd_ioctl_create_event_args ev[2];
	struct kg_bo src, dst;
	struct kg_queue q;
	int g;

	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_SIGNAL, true,
				  0, &ev[0]));
	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_SIGNAL, true,
				  0, &ev[1]));
	for (g = 0; g < self->rt.e.ngpus; g++) {
		ASSERT_EQ(0, kg_bo_new(&self->rt, g, 4 * KT_MIB, KT_GTT, 0,
				       &src));
		ASSERT_EQ(0, kg_bo_new(&self->rt, g, 4 * KT_MIB,
				       KT_GTT | KT_WRITABLE, 0, &dst));
		kt_fill(src.cpu, 4 * KT_MIB, g);
		ASSERT_EQ(0, kg_queue_new(&self->rt, g, SDMA, 1024, &q));
		ASSERT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT,
			  kg_wait1(self->rt.e.kfd, ev[1].event_id, 0));
		ASSERT_EQ(0, kg_sdma_copy(&q, dst.va, src.va, 4 * KT_MIB, 0));
		ASSERT_EQ(0, kg_sdma_trap(&q, ev[1].event_id));
		EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
			  kg_wait1(self->rt.e.kfd, ev[1].event_id,
				   KG_TIMEOUT_MS));
		EXPECT_TRUE(kt_check(dst.cpu, 4 * KT_MIB, g));
		/* The other event did not fire. */
		EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT,
			  kg_wait1(self->rt.e.kfd, ev[0].event_id, 0));
		EXPECT_EQ(0, kg_queue_free(&q));
		EXPECT_EQ(0, kg_bo_free(&self->rt, &src));
		EXPECT_EQ(0, kg_bo_free(&self->rt, &dst));
	}
}

/* Wait until debugfs shows queue @id of this process stopped. */
static int wait_stopped(uint32_t id, struct kg_qinfo *qi)
{
	int t, ret;

	for (t = 0; t < 2000; t++) {
		ret = kg_qinfo(getpid(), id, qi);
		if (ret)
			return ret;
		if (qi->flags)
			return 0;
		kg_sleep_ms(10);
	}
	return -ETIMEDOUT;
}

/*
 * Packets the engine refuses stop the queue at the packet: the read
 * pointer stays, later packets do not run, another queue still works.
 */
TEST_F(sdma, bad_packet_stops_queue_other_queue_works)
{
	static const char *const what[] = {
		"unknown opcode", "copy sub-opcode 1",
		"fill of a non-dword size", "fill to an unaligned address",
		"fill size field not dword", "fence to an unaligned address",
	};
	struct kg_queue q, other;
	struct kg_qinfo qi;
	struct kg_bo buf;
	uint32_t *p, dw[8];
	unsigned int k;
	uint64_t at;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * KT_MIB, KT_GTT | KT_WRITABLE,
			       0, &buf));
	p = buf.cpu;
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 1024, &other));
	for (k = 0; k < sizeof(what) / sizeof(what[0]); k++) {
		memset(p, 0, 64);
		memset(dw, 0, sizeof(dw));
		ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 1024, &q));
		ASSERT_EQ(0, kg_sdma_fence(&q, buf.va, 1));
		at = q.windex;
		switch (k) {
		case 0:
			dw[0] = 0x7f;
			break;
		case 1:
			dw[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_COPY, 1);
			dw[1] = 3;
			dw[3] = (uint32_t)buf.va;
			dw[4] = (uint32_t)(buf.va >> 32);
			dw[5] = (uint32_t)buf.va + 64;
			dw[6] = (uint32_t)(buf.va >> 32);
			break;
		case 2:
		case 3:
		case 4:
			dw[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_CONST_FILL,
						   0) |
				2u << KFDSIM_SDMA_FILL_SIZE_SHIFT;
			dw[1] = (uint32_t)buf.va + 32;
			dw[2] = (uint32_t)(buf.va >> 32);
			dw[3] = 5;
			dw[4] = 7;
			if (k == 2)
				dw[4] = 5;	/* 6 bytes */
			if (k == 3)
				dw[1] += 2;
			if (k == 4)
				dw[0] &= ~(3u << KFDSIM_SDMA_FILL_SIZE_SHIFT);
			break;
		case 5:
			dw[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_FENCE, 0);
			dw[1] = (uint32_t)buf.va + 42;
			dw[2] = (uint32_t)(buf.va >> 32);
			dw[3] = 3;
			break;
		}
		ASSERT_EQ(0, kg_sdma_write(&q, dw, 7));
		ASSERT_EQ(0, kg_sdma_fence(&q, buf.va + 4, 2));
		ASSERT_EQ(0, wait_stopped(q.id, &qi)) TH_LOG("%s", what[k]);
		EXPECT_EQ(1, qi.flags);
		EXPECT_EQ(at, qi.rptr) TH_LOG("%s", what[k]);
		kg_sleep_ms(20);
		EXPECT_EQ(at, kg_queue_rptr(&q)) TH_LOG("%s", what[k]);
		EXPECT_EQ(1, p[0]);
		EXPECT_EQ(0, p[1]) TH_LOG("%s: the fence after it ran",
					  what[k]);
		EXPECT_TRUE(kt_is_zero(p + 8, 64)) TH_LOG("%s", what[k]);

		/* The other queue still runs. */
		ASSERT_EQ(0, kg_sdma_fence(&other, buf.va + 12, k + 100));
		ASSERT_EQ(0, kg_queue_wait_idle(&other, KG_TIMEOUT_MS));
		EXPECT_EQ(k + 100, p[3]);
		EXPECT_EQ(0, kg_queue_free(&q));
	}
}

/*
 * gfx9 (SDMA 4.x) COPY_LINEAR: a 22-bit count of bytes minus one, so
 * count 0x200000 moves 2 MiB + 1 bytes (what AMD's CRIU plugin writes for
 * a 2 MiB chunk) and count 0x3fffff moves 4 MiB, each in one packet; the
 * bits above the field are not part of the count.
 */
TEST_F_TIMEOUT(sdma, copy_counts_up_to_4mib, 300)
{
	const uint32_t counts[] = { 0x200000, 0x3fffff, 0x400000 | 15 };
	const uint64_t size = 8 * KT_MIB;
	struct kg_bo src, dst;
	struct kg_queue q;
	unsigned char *d;
	unsigned int i;
	uint32_t dw[KFDSIM_SDMA_COPY_DWORDS];

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, size, KT_VRAM | KT_WRITABLE, 0,
			       &src));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, size, KT_VRAM | KT_WRITABLE, 0,
			       &dst));
	kt_fill(src.cpu, size, 61);
	d = dst.cpu;
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 4096, &q));
	for (i = 0; i < 3; i++) {
		uint64_t bytes = (counts[i] & KFDSIM_SDMA_COUNT_MASK) + 1;

		memset(d, 0xee, size);
		kg_sdma_copy_packet(dw, dst.va, src.va, counts[i]);
		ASSERT_EQ(0, kg_sdma_write(&q, dw, KFDSIM_SDMA_COPY_DWORDS));
		kg_sdma_commit(&q);
		ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS))
			TH_LOG("count 0x%x", counts[i]);
		EXPECT_EQ(-1, kt_first_diff(src.cpu, d, bytes))
			TH_LOG("count 0x%x", counts[i]);
		EXPECT_EQ(0xee, d[bytes]) TH_LOG("count 0x%x", counts[i]);
	}
	EXPECT_EQ(0, kg_queue_free(&q));
	EXPECT_EQ(0, kg_bo_free(&self->rt, &src));
	EXPECT_EQ(0, kg_bo_free(&self->rt, &dst));
}

/* A write pointer that is not a whole number of dwords stops the queue. */
TEST_F(sdma, unaligned_doorbell_stops_queue)
{
	struct kg_qinfo qi;
	struct kg_queue q;

	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 1024, &q));
	ASSERT_EQ(0, kg_sdma_nop(&q, 0));
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	__atomic_store_n(q.doorbell, 6, __ATOMIC_RELEASE);
	ASSERT_EQ(0, wait_stopped(q.id, &qi));
	EXPECT_EQ(4, qi.rptr);
}

/*
 * A copy from an unmapped VA: the memory event fires with the page, the
 * queue stops at the packet, the process's other queues go on.
 */
TEST_F(sdma, copy_fault_fires_memory_event)
{
	struct kfd_ioctl_create_event_args ev;
	struct kfd_event_data ed = { 0 };
	struct kg_queue q, other;
	struct kg_qinfo qi;
	struct kg_bo buf;
	uint32_t result;
	uint64_t hole;
	int g;

	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_MEMORY, true,
				  0, &ev));
	for (g = 0; g < self->rt.e.ngpus; g++) {
		ASSERT_EQ(0, kg_bo_new(&self->rt, g, 2 * KT_PAGE,
				       KT_GTT | KT_WRITABLE, 0, &buf));
		ASSERT_EQ(0, kg_queue_new(&self->rt, g, SDMA, 1024, &q));
		ASSERT_EQ(0, kg_queue_new(&self->rt, g,
					  KFD_IOC_QUEUE_TYPE_SDMA_XGMI, 1024,
					  &other));
		hole = kg_va_hole(&self->rt);
		/* The source runs off the end of the BO into the gap. */
		ASSERT_EQ(0, kg_sdma_copy(&q, buf.va, buf.va + KT_PAGE,
					  2 * KT_PAGE, 0));
		ASSERT_EQ(0, kg_sdma_copy(&q, buf.va, hole + 5, 16, 0));
		ed.event_id = ev.event_id;
		ASSERT_EQ(0, kg_wait(self->rt.e.kfd, &ed, 1, false,
				     KG_TIMEOUT_MS, &result));
		ASSERT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, result);
		EXPECT_EQ(buf.va + 2 * KT_PAGE, ed.memory_exception_data.va);
		EXPECT_EQ(self->rt.ids[g], ed.memory_exception_data.gpu_id);
		EXPECT_EQ(1, ed.memory_exception_data.failure.NotPresent);
		ASSERT_EQ(0, wait_stopped(q.id, &qi));
		EXPECT_EQ(0, kg_queue_rptr(&q));
		ASSERT_EQ(0, kg_sdma_fence(&other, buf.va, 5));
		ASSERT_EQ(0, kg_queue_wait_idle(&other, KG_TIMEOUT_MS));
		EXPECT_EQ(5, *(uint32_t *)buf.cpu);
		EXPECT_EQ(0, kg_queue_free(&q));
		EXPECT_EQ(0, kg_queue_free(&other));
		EXPECT_EQ(0, kg_bo_free(&self->rt, &buf));
	}
}

/*
 * A source or a fill range that runs through many mapped pages (65; an
 * odd source offset makes two steps a page) into an unmapped one faults at
 * the first unmapped byte: the bytes before it are written, none after
 * it, and the queue stops at the packet. An engine that copies runs of
 * pages at once must keep this.
 */
TEST_F(sdma, copy_and_fill_fault_at_first_unmapped_page)
{
	const uint64_t npg = 65, so = 100, len = (npg + 2) * KT_PAGE - so;
	struct kfd_ioctl_create_event_args ev;
	struct kfd_event_data ed = { 0 };
	struct kg_bo a, b, dst;
	struct kg_queue q, q2;
	struct kg_qinfo qi;
	unsigned char *ref;
	uint32_t result, *p;
	uint64_t i, bad = 0;

	ref = malloc((npg + 2) * KT_PAGE);
	ASSERT_NE(NULL, ref);
	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_MEMORY, true,
				  0, &ev));
	/* @a: pages 0-64, page 65 unmapped, @b: page 66. */
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, npg * KT_PAGE,
			       KT_GTT | KT_WRITABLE, 0, &a));
	self->rt.next_va = a.va + (npg + 1) * KT_PAGE;
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &b));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, (npg + 2) * KT_PAGE,
			       KT_VRAM | KT_WRITABLE, 0, &dst));
	kt_fill(a.cpu, npg * KT_PAGE, 21);
	kt_fill(b.cpu, KT_PAGE, 22);
	memset(dst.cpu, 0xee, (npg + 2) * KT_PAGE);
	memset(ref, 0xee, (npg + 2) * KT_PAGE);
	memcpy(ref, (char *)a.cpu + so, npg * KT_PAGE - so);
	ed.event_id = ev.event_id;

	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 1024, &q));
	ASSERT_EQ(0, kg_sdma_copy(&q, dst.va, a.va + so, len, 0));
	ASSERT_EQ(0, kg_wait(self->rt.e.kfd, &ed, 1, false, KG_TIMEOUT_MS,
			     &result));
	ASSERT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, result);
	EXPECT_EQ(a.va + npg * KT_PAGE, ed.memory_exception_data.va);
	EXPECT_EQ(1, ed.memory_exception_data.failure.NotPresent);
	ASSERT_EQ(0, wait_stopped(q.id, &qi));
	EXPECT_EQ(0, kg_queue_rptr(&q));
	EXPECT_EQ(-1, kt_first_diff(ref, dst.cpu, (npg + 2) * KT_PAGE));

	/* A fill over the same pages: @a filled, @b untouched. */
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 1024, &q2));
	ASSERT_EQ(0, kg_sdma_fill(&q2, a.va + 8, 0x600dcafe,
				  (npg + 2) * KT_PAGE - 8));
	memset(&ed.memory_exception_data, 0,
	       sizeof(ed.memory_exception_data));
	ASSERT_EQ(0, kg_wait(self->rt.e.kfd, &ed, 1, false, KG_TIMEOUT_MS,
			     &result));
	ASSERT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, result);
	EXPECT_EQ(a.va + npg * KT_PAGE, ed.memory_exception_data.va);
	ASSERT_EQ(0, wait_stopped(q2.id, &qi));
	EXPECT_EQ(0, kg_queue_rptr(&q2));
	kt_fill(ref, npg * KT_PAGE, 21);
	p = a.cpu;
	for (i = 0; i < npg * KT_PAGE / 4; i++) {
		uint32_t want = i >= 2 ? 0x600dcafe : ((uint32_t *)ref)[i];

		if (p[i] != want && bad++ < 5)
			TH_LOG("dword %lu: 0x%x want 0x%x", (unsigned long)i,
			       p[i], want);
	}
	EXPECT_EQ(0, bad);
	kt_fill(ref, KT_PAGE, 22);
	EXPECT_EQ(-1, kt_first_diff(ref, b.cpu, KT_PAGE));

	EXPECT_EQ(0, kg_queue_free(&q));
	EXPECT_EQ(0, kg_queue_free(&q2));
	EXPECT_EQ(0, kg_bo_free(&self->rt, &a));
	EXPECT_EQ(0, kg_bo_free(&self->rt, &b));
	EXPECT_EQ(0, kg_bo_free(&self->rt, &dst));
	EXPECT_EQ(0, kg_event_destroy(self->rt.e.kfd, ev.event_id));
	free(ref);
}

/* A copy into a BO allocated without WRITABLE: a read-only fault. */
TEST_F(sdma, copy_to_read_only_bo_faults)
{
	struct kfd_ioctl_create_event_args ev;
	struct kfd_event_data ed = { 0 };
	struct kg_bo src, ro;
	struct kg_queue q;
	uint32_t result;

	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_MEMORY, true,
				  0, &ev));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 2 * KT_PAGE, KT_GTT, 0, &src));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 2 * KT_PAGE, KT_VRAM, 0, &ro));
	kt_fill(src.cpu, 2 * KT_PAGE, 1);
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 1024, &q));
	ASSERT_EQ(0, kg_sdma_copy(&q, ro.va + 100, src.va, 64, 0));
	ed.event_id = ev.event_id;
	ASSERT_EQ(0, kg_wait(self->rt.e.kfd, &ed, 1, false, KG_TIMEOUT_MS,
			     &result));
	ASSERT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, result);
	EXPECT_EQ(ro.va, ed.memory_exception_data.va);
	EXPECT_EQ(0, ed.memory_exception_data.failure.NotPresent);
	EXPECT_EQ(1, ed.memory_exception_data.failure.ReadOnly);
	EXPECT_TRUE(kt_is_zero(ro.cpu, 2 * KT_PAGE));
}

/*
 * A doorbell BO mapped into the GPU VM: an SDMA FENCE to it rings an AQL
 * queue of the process (GPU-side enqueue); the CP picks the packet up.
 */
TEST_F(sdma, fence_to_doorbell_bo_rings_aql_queue)
{
	struct kfdsim_aql_dispatch pkt;
	struct kfdsim_args_fill fargs;
	struct kg_queue aql, sdma;
	struct kg_signal sig;
	struct kg_bo db, buf;
	uint64_t off;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_DOORBELL_SIZE,
			       KT_DOORBELL | KT_WRITABLE, KG_NO_CPU, &db));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &buf));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &aql));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, SDMA, 1024, &sdma));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	off = aql.doorbell_offset & (KT_DOORBELL_SIZE - 1);

	/* Write the packet; publish it neither in memory nor by the CPU. */
	fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 0xd00b };
	kg_dispatch_packet(&aql, KFDSIM_KERNEL_FILL_U32, &fargs, sizeof(fargs),
			   8, 8, sig.va, &pkt);
	kg_aql_write(&aql, &pkt, true);
	aql.windex++;
	kg_sleep_ms(100);
	EXPECT_EQ(0, kg_queue_rptr(&aql));
	ASSERT_EQ(0, kg_sdma_fence(&sdma, db.va + off, 1));
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(1, *aql.doorbell);
	EXPECT_EQ(0xd00b, ((uint32_t *)buf.cpu)[7]);
}

TEST_HARNESS_MAIN
