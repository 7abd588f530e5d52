// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsim selftests: compute wave save/restore (CWSR) of machine code.
 *
 * A queue with a context save area is preempted (UPDATE_QUEUE to 0 %, or
 * an eviction) while a gfx906 kernel's waves loop; their registers must be
 * in the save area at the offsets of the gfx9 layout
 * (Documentation/gfx9-engine.rst, "Context save and restore"), the
 * control stack must list them (GET_QUEUE_WAVE_STATE), and the dispatch
 * must resume from what is in user memory. Every expected value is worked
 * out here by hand from the kernel (gfx9/kernels/cwsr.s) and the ISA.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt_harness.h"
#include "kfdsim_gpu.h"

/*
 * What amdkfd 6.12 and libhsakmt work out for kfdsim's gfx906 node: 60 CUs
 * (240 SIMDs / 4), min(60 * 40, 4 arrays / 1 * 512) = 2048 waves; control
 * stack page_align(40 + 2048 * 8 + 8) = 0x5000; per CU 0x40000 + 0x4000 +
 * 0x10000 + 0x1000 = 0x55000 bytes, * 60 = 0x13ec000.
 */
#define CW_CTL_STACK		0x5000u
#define CW_SAVE_SIZE		(0x5000u + 0x13ec000u)

/* The kernel's layout in its BO: descriptor, code, kernarg. */
#define CW_CODE_OFF		256
#define CW_KERNARG_OFF		4096
#define CW_BO_SIZE		8192
/* cwsr.s: the loop is at bytes 56..72 of the code, 4 bytes a line. */
#define CW_LOOP			56
#define CW_LOOP_END		72
#define CW_AFTER_ADD		60
/* RSRC1: 64 VGPRs, f32/f64 denormals kept (FLOAT_MODE 0xf0). */
#define CW_RSRC1		(15u | 0xf0u << 12)
#define CW_NVGPR		64
/* RSRC2: 2 user SGPRs (kernarg pointer), workgroup id X. */
#define CW_RSRC2		(2u << 1 | 1u << 7)
#define CW_KCP_KERNARG		(1u << 3)

/* One wave's block: VGPRs, 112 SGPRs, 16 HWREGs, 16 TTMPs, 16 reserved. */
#define CW_SGPRS_OFF		(CW_NVGPR * 64 * 4)
#define CW_HWREGS_OFF		(CW_SGPRS_OFF + 112 * 4)
#define CW_WAVE_BYTES		(CW_HWREGS_OFF + 48 * 4)
#define CW_HW_M0		0
#define CW_HW_PC_LO		1
#define CW_HW_PC_HI		2
#define CW_HW_EXEC_LO		3
#define CW_HW_EXEC_HI		4
#define CW_HW_MODE		9

/* The control stack's words (gfx9: ROCdbgapi's gfx9 decoding). */
#define CW_TAG			0x52535743u
#define CW_STATE		(1u << 31 | (CW_NVGPR / 4 - 1) | 6u << 6)
#define CW_WAVE_LAST		(1u << 16)
#define CW_WAVE_FIRST		(1u << 17)

struct cw {
	struct kg_bo code, out, save;
	struct kg_queue q;
	struct kg_signal sig;
	uint32_t n, items;
};

/* The kernel of gfx9/kernels/cwsr.s behind a code object v3 descriptor. */
static int cw_load(struct kg_rt *rt, struct kg_bo *bo)
{
	char path[PATH_MAX], *p;
	uint32_t kd[16] = { 0 };
	int64_t entry = CW_CODE_OFF;
	ssize_t n;
	int fd, ret;

	ret = kg_bo_new(rt, 0, CW_BO_SIZE, KT_GTT | KT_WRITABLE, 0, bo);
	if (ret)
		return ret;
	p = bo->cpu;
	memcpy(&kd[4], &entry, sizeof(entry));
	kd[12] = CW_RSRC1;
	kd[13] = CW_RSRC2;
	kd[14] = CW_KCP_KERNARG;
	memcpy(p, kd, sizeof(kd));
	ret = kt_exe_sibling("gfx9/cwsr.bin", path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, p + CW_CODE_OFF, CW_KERNARG_OFF - CW_CODE_OFF);
	close(fd);
	return n > 0 ? 0 : -ENOEXEC;
}

/* A queue with a save area of the node's size, running the loop. */
static int cw_start(struct kg_rt *rt, struct cw *c, uint32_t items,
		    uint32_t n)
{
	uint64_t *ka;
	int ret;

	memset(c, 0, sizeof(*c));
	c->n = n;
	c->items = items;
	ret = cw_load(rt, &c->code);
	if (!ret)
		ret = kg_bo_new(rt, 0, 4 * items, KT_GTT | KT_WRITABLE, 0,
				&c->out);
	if (!ret)
		ret = kg_bo_new(rt, 0, CW_SAVE_SIZE, KT_GTT | KT_WRITABLE, 0,
				&c->save);
	if (!ret)
		ret = kg_queue_new_ctx(rt, 0, 4096, c->save.va, CW_SAVE_SIZE,
				       CW_CTL_STACK, &c->q);
	if (!ret)
		ret = kg_signal_new(rt, 1, &c->sig);
	if (ret)
		return ret;
	ka = (uint64_t *)((char *)c->code.cpu + CW_KERNARG_OFF);
	ka[0] = c->out.va;
	ka[1] = n;
	{
		struct kfdsim_aql_dispatch pkt = {
			.header = KG_AQL_HDR(KFDSIM_AQL_TYPE_KERNEL_DISPATCH),
			.setup = 1,
			.workgroup_size_x = items,
			.workgroup_size_y = 1,
			.workgroup_size_z = 1,
			.grid_size_x = items,
			.grid_size_y = 1,
			.grid_size_z = 1,
			.kernel_object = c->code.va,
			.kernarg_address = c->code.va + CW_KERNARG_OFF,
			.completion_signal = c->sig.va,
		};

		ret = kg_aql_submit(&c->q, &pkt);
	}
	return ret;
}

static void cw_free(struct kg_rt *rt, struct cw *c)
{
	kg_queue_free(&c->q);
	kg_bo_free(rt, &c->save);
	kg_bo_free(rt, &c->out);
	kg_bo_free(rt, &c->code);
}

static int cw_update(struct kg_queue *q, uint32_t percentage)
{
	struct kfd_ioctl_update_queue_args u = {
		.ring_base_address = q->ring.va,
		.queue_id = q->id,
		.ring_size = q->ring_size,
		.queue_percentage = percentage,
		.queue_priority = 7,
	};

	return kt_ioctl(q->rt->e.kfd, AMDKFD_IOC_UPDATE_QUEUE, &u);
}

static int cw_wave_state(struct kg_rt *rt, uint32_t queue, void *dst,
			 struct kfd_ioctl_get_queue_wave_state_args *w)
{
	*w = (struct kfd_ioctl_get_queue_wave_state_args){
		.ctl_stack_address = (uintptr_t)dst,
		.queue_id = queue,
	};
	return kt_ioctl(rt->e.kfd, AMDKFD_IOC_GET_QUEUE_WAVE_STATE, w);
}

/*
 * The saved waves of one workgroup of @items work-items, stopped in the
 * loop: registers as cwsr.s leaves them, and the loop's own invariant
 * between the counter s6 and the sum v2.
 */
static void cw_check_waves(struct __test_metadata *_metadata,
			   const struct cw *c, const uint8_t *area)
{
	uint32_t waves = (c->items + 63) / 64, w, l, k;
	uint64_t code = c->code.va + CW_CODE_OFF, pc, exec;

	for (w = 0; w < waves; w++) {
		const uint8_t *b = area + CW_CTL_STACK + w * CW_WAVE_BYTES;
		const uint32_t *v = (const uint32_t *)b;
		const uint32_t *s = (const uint32_t *)(b + CW_SGPRS_OFF);
		const uint32_t *hw = (const uint32_t *)(b + CW_HWREGS_OFF);
		uint32_t lanes = c->items - w * 64 < 64 ? c->items - w * 64 : 64;

		/* s[0:1] kernarg, s2 workgroup id, s[4:5] out, s10, s11. */
		EXPECT_EQ((uint32_t)(c->code.va + CW_KERNARG_OFF), s[0]);
		EXPECT_EQ((uint32_t)((c->code.va + CW_KERNARG_OFF) >> 32),
			  s[1]);
		EXPECT_EQ(0u, s[2]);
		EXPECT_EQ((uint32_t)c->out.va, s[4]);
		EXPECT_EQ((uint32_t)(c->out.va >> 32), s[5]);
		EXPECT_EQ(0x12345678u, s[10]);
		EXPECT_EQ(0xcafef00du, s[11]);
		EXPECT_EQ(0x5a5au, hw[CW_HW_M0]);
		EXPECT_EQ(0xf0u, hw[CW_HW_MODE]);
		exec = lanes == 64 ? ~0ull : (1ull << lanes) - 1;
		EXPECT_EQ((uint32_t)exec, hw[CW_HW_EXEC_LO]);
		EXPECT_EQ((uint32_t)(exec >> 32), hw[CW_HW_EXEC_HI]);
		pc = hw[CW_HW_PC_LO] | (uint64_t)hw[CW_HW_PC_HI] << 32;
		ASSERT_LE(code + CW_LOOP, pc) TH_LOG("wave %u", w);
		ASSERT_GT(code + CW_LOOP_END, pc) TH_LOG("wave %u", w);
		ASSERT_EQ(0u, pc % 4);
		/* s6 counts down from n; v2 += v0 once per pass. */
		ASSERT_LT(0u, s[6]);
		ASSERT_GT(c->n, s[6]);
		k = c->n - s[6] + (pc == code + CW_AFTER_ADD ? 1 : 0);
		for (l = 0; l < lanes; l++) {
			uint32_t id = w * 64 + l;

			ASSERT_EQ(id, v[0 * 64 + l]) TH_LOG("v0 lane %u", l);
			ASSERT_EQ(7u + k * id, v[2 * 64 + l])
				TH_LOG("v2 wave %u lane %u", w, l);
			ASSERT_EQ(0x1000u, v[5 * 64 + l]);
			ASSERT_EQ(2 * id, v[6 * 64 + l]);
		}
	}
}

KG_FIXTURE(cwsr)

/*
 * CREATE_QUEUE as amdkfd 6.12 checks the save area: the node's control
 * stack size exactly and at least the node's save area, else -EINVAL.
 */
TEST_F(cwsr, save_area_size_checked)
{
	struct kg_queue q;
	struct kg_bo save;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, CW_SAVE_SIZE,
			       KT_GTT | KT_WRITABLE, 0, &save));
	EXPECT_EQ(-EINVAL, kg_queue_new_ctx(&self->rt, 0, 4096, save.va,
					    CW_SAVE_SIZE - 0x1000,
					    CW_CTL_STACK, &q));
	EXPECT_EQ(-EINVAL, kg_queue_new_ctx(&self->rt, 0, 4096, save.va,
					    CW_SAVE_SIZE, CW_CTL_STACK - 0x1000,
					    &q));
	EXPECT_EQ(-EINVAL, kg_queue_new_ctx(&self->rt, 0, 4096, save.va,
					    0x600, 0x200, &q));
	ASSERT_EQ(0, kg_queue_new_ctx(&self->rt, 0, 4096, save.va,
				      CW_SAVE_SIZE, CW_CTL_STACK, &q));
	EXPECT_EQ(0, kg_queue_free(&q));
	/* Without a save area: accepted, as 5.x kernels accept it. */
	ASSERT_EQ(0, kg_queue_new_ctx(&self->rt, 0, 4096, 0, 0, 0, &q));
	EXPECT_EQ(0, kg_queue_free(&q));
	kg_bo_free(&self->rt, &save);
}

/* GET_QUEUE_WAVE_STATE's refusals, and a queue with nothing saved. */
TEST_F(cwsr, wave_state_errors)
{
	struct kfd_ioctl_get_queue_wave_state_args w;
	uint32_t buf[CW_CTL_STACK / 4];
	struct kg_queue q, plain;
	struct kg_bo save;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, CW_SAVE_SIZE,
			       KT_GTT | KT_WRITABLE, 0, &save));
	ASSERT_EQ(0, kg_queue_new_ctx(&self->rt, 0, 4096, save.va,
				      CW_SAVE_SIZE, CW_CTL_STACK, &q));
	/* Unknown queue: -EFAULT, as pqm_get_wave_state() answers. */
	EXPECT_EQ(-EFAULT, cw_wave_state(&self->rt, q.id + 100, buf, &w));
	/* Active queue: -EINVAL. */
	EXPECT_EQ(-EINVAL, cw_wave_state(&self->rt, q.id, buf, &w));
	ASSERT_EQ(0, cw_update(&q, 0));
	memset(buf, 0xa5, sizeof(buf));
	w.ctl_stack_used_size = 77;
	w.save_area_used_size = 77;
	ASSERT_EQ(0, cw_wave_state(&self->rt, q.id, buf, &w));
	EXPECT_EQ(0u, w.ctl_stack_used_size);
	EXPECT_EQ(0u, w.save_area_used_size);
	/* Header: empty control stack at its top, no waves. */
	EXPECT_EQ(CW_CTL_STACK, buf[0]);
	EXPECT_EQ(0u, buf[1]);
	EXPECT_EQ(CW_CTL_STACK, buf[2]);
	EXPECT_EQ(0u, buf[3]);
	EXPECT_EQ(0xa5a5a5a5u, buf[4]);
	/* Nonzero padding: -EINVAL (kfdsim refuses it in every ioctl). */
	w = (struct kfd_ioctl_get_queue_wave_state_args){
		.ctl_stack_address = (uintptr_t)buf,
		.queue_id = q.id,
		.pad = 1,
	};
	EXPECT_EQ(-EINVAL, kt_ioctl(self->rt.e.kfd,
				    AMDKFD_IOC_GET_QUEUE_WAVE_STATE, &w));
	/* A bad destination: -EFAULT. */
	EXPECT_EQ(-EFAULT, cw_wave_state(&self->rt, q.id, (void *)8, &w));
	EXPECT_EQ(0, kg_queue_free(&q));

	/* An SDMA queue: -EINVAL. */
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_SDMA, 4096,
				  &plain));
	EXPECT_EQ(-EINVAL, cw_wave_state(&self->rt, plain.id, buf, &w));
	EXPECT_EQ(0, kg_queue_free(&plain));
	kg_bo_free(&self->rt, &save);
}

/*
 * Preempted by UPDATE_QUEUE (0 %): two waves (100 work-items: the second
 * has 36 lanes) are in the save area with the values cwsr.s put in their
 * registers, the control stack lists them; a register changed in the save
 * area is what the resumed wave uses.
 */
TEST_F_TIMEOUT(cwsr, preempted_waves_saved_and_resumed, 300)
{
	const uint32_t items = 100, n = 1000000;
	struct kfd_ioctl_get_queue_wave_state_args w;
	const uint32_t used = 5 * 4, saved = 2 * CW_WAVE_BYTES;
	uint32_t *hdr, *stack, *o, i, l;
	uint8_t *area;
	struct cw c;

	ASSERT_EQ(0, cw_start(&self->rt, &c, items, n));
	area = c.save.cpu;
	hdr = c.save.cpu;
	kg_sleep_ms(50);
	ASSERT_EQ(0, cw_update(&c.q, 0));
	ASSERT_EQ(1, kg_signal_load(&c.sig)) TH_LOG("the loop ended: raise n");

	ASSERT_EQ(0, cw_wave_state(&self->rt, c.q.id, area, &w));
	EXPECT_EQ(used, w.ctl_stack_used_size);
	EXPECT_EQ(saved, w.save_area_used_size);
	EXPECT_EQ(CW_CTL_STACK - used, hdr[0]);
	EXPECT_EQ(used, hdr[1]);
	EXPECT_EQ(CW_CTL_STACK + saved, hdr[2]);
	EXPECT_EQ(saved, hdr[3]);
	stack = (uint32_t *)(area + CW_CTL_STACK - used);
	EXPECT_EQ(CW_TAG, stack[0]);
	EXPECT_EQ(0u, stack[1]);		/* workgroup 0 */
	EXPECT_EQ(CW_STATE, stack[2]);
	EXPECT_EQ(1u | CW_WAVE_LAST, stack[3]);
	EXPECT_EQ(0u | CW_WAVE_FIRST, stack[4]);
	cw_check_waves(_metadata, &c, area);

	/* Inactive: nothing moves. */
	kg_sleep_ms(100);
	EXPECT_EQ(1, kg_signal_load(&c.sig));
	/* The truth is in user memory: wave 0's v5 becomes 0x2000. */
	for (l = 0; l < 64; l++)
		((uint32_t *)(area + CW_CTL_STACK))[5 * 64 + l] = 0x2000;
	ASSERT_EQ(0, cw_update(&c.q, 100));
	EXPECT_EQ(-EINVAL, cw_wave_state(&self->rt, c.q.id, area, &w));
	ASSERT_EQ(0, kg_signal_wait(&c.sig, 0, KG_TIMEOUT_MS));
	o = c.out.cpu;
	for (i = 0; i < items; i++)
		ASSERT_EQ(7u + n * i + (i < 64 ? 0x2000u : 0x1000u), o[i])
			TH_LOG("item %u", i);
	/* Resumed: the control stack is empty again. */
	ASSERT_EQ(0, cw_update(&c.q, 0));
	ASSERT_EQ(0, cw_wave_state(&self->rt, c.q.id, area, &w));
	EXPECT_EQ(0u, w.ctl_stack_used_size);
	EXPECT_EQ(0u, w.save_area_used_size);
	cw_free(&self->rt, &c);
}

/* An eviction (as CRIU's pause does) saves the waves the same way. */
TEST_F_TIMEOUT(cwsr, evicted_waves_saved_and_resumed, 300)
{
	const uint32_t items = 128, n = 1000000;
	struct kfd_ioctl_get_queue_wave_state_args w;
	uint32_t *o, i;
	struct cw c;

	ASSERT_EQ(0, cw_start(&self->rt, &c, items, n));
	kg_sleep_ms(50);
	ASSERT_EQ(0, kg_evict(getpid()));
	ASSERT_EQ(1, kg_signal_load(&c.sig)) TH_LOG("the loop ended: raise n");
	ASSERT_EQ(0, cw_wave_state(&self->rt, c.q.id, c.save.cpu, &w));
	EXPECT_EQ(5u * 4, w.ctl_stack_used_size);
	EXPECT_EQ(2u * CW_WAVE_BYTES, w.save_area_used_size);
	cw_check_waves(_metadata, &c, c.save.cpu);
	ASSERT_EQ(0, kg_restore(getpid()));
	ASSERT_EQ(0, kg_signal_wait(&c.sig, 0, KG_TIMEOUT_MS));
	o = c.out.cpu;
	for (i = 0; i < items; i++)
		ASSERT_EQ(7u + n * i + 0x1000u, o[i]) TH_LOG("item %u", i);
	cw_free(&self->rt, &c);
}

TEST_HARNESS_MAIN
