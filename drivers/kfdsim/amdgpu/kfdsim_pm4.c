// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated PM4 compute engine: executes one gfx9 PM4 type-3 packet at
 * a time against a GPU address space, for the render node's compute ring.
 *
 * Only the packets a compute dispatch needs exist (see "PM4 packets of the
 * compute ring" in include/uapi/linux/kfdsim.h): SET_SH_REG fills a small
 * file of compute registers, DISPATCH_DIRECT turns that state into an HSA
 * dispatch packet and runs it to completion: gfx9 machine code at
 * COMPUTE_PGM_LO/HI with the RSRC1/RSRC2 and USER_DATA registers, as
 * amdgpu's user space (Mesa) programs a compute dispatch, in the gfx9
 * engine (kfdsim_gfx9_run()); or, when the program address holds a kfdsim
 * built-in descriptor, that kernel with kfdsim_kernel_run(). WRITE_DATA
 * and RELEASE_MEM write memory, NOP and ACQUIRE_MEM do nothing. Everything
 * else is refused, with the reason in the context for the caller's log
 * line.
 *
 * A GPU page fault stops the packet (-EFAULT, with the fault filled): a
 * dispatch cannot go on past one, and the ring treats every fault alike.
 */
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "kfdsim.h"
#include "gfx9/kfdsim_gfx9.h"

/* How long a dispatch runs between two looks at signals and the CPU. */
#define KFDSIM_PM4_SLICE_NS	(2 * NSEC_PER_MSEC)

#define KFDSIM_PM4_REG(name)	(KFDSIM_PM4_REG_##name - KFDSIM_PM4_REG_FIRST)

/* -ENOEXEC, with why the packet is refused. */
static __printf(2, 3) int kfdsim_pm4_refuse(struct kfdsim_pm4_ctx *ctx,
					    const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(ctx->why, sizeof(ctx->why), fmt, args);
	va_end(args);
	return -ENOEXEC;
}

static u64 kfdsim_pm4_addr(u32 lo, u32 hi)
{
	return ((u64)hi << 32) | lo;
}

/* Is @reg one of the registers SET_SH_REG may write? */
static bool kfdsim_pm4_reg_ok(u32 reg)
{
	switch (reg) {
	case KFDSIM_PM4_REG_COMPUTE_START_X ... KFDSIM_PM4_REG_COMPUTE_NUM_THREAD_Z:
	case KFDSIM_PM4_REG_COMPUTE_PGM_LO:
	case KFDSIM_PM4_REG_COMPUTE_PGM_HI:
	case KFDSIM_PM4_REG_COMPUTE_PGM_RSRC1:
	case KFDSIM_PM4_REG_COMPUTE_PGM_RSRC2:
	case KFDSIM_PM4_REG_COMPUTE_RESOURCE_LIMITS:
	case KFDSIM_PM4_REG_COMPUTE_TMPRING_SIZE:
		return true;
	default:
		return reg >= KFDSIM_PM4_REG_COMPUTE_USER_DATA_0 &&
		       reg < KFDSIM_PM4_REG_COMPUTE_USER_DATA_0 +
			     KFDSIM_PM4_COMPUTE_USER_DATA_COUNT;
	}
}

static int kfdsim_pm4_set_sh_reg(struct kfdsim_pm4_ctx *ctx, const u32 *body,
				 u32 n)
{
	u32 reg = KFDSIM_PM4_SH_REG_BASE +
		  (body[0] & KFDSIM_PM4_SH_REG_OFFSET_MASK);
	u32 i;

	if (n < 2)
		return kfdsim_pm4_refuse(ctx, "SET_SH_REG of no register");
	for (i = 1; i < n; i++, reg++) {
		if (!kfdsim_pm4_reg_ok(reg))
			return kfdsim_pm4_refuse(ctx,
						 "SET_SH_REG of register 0x%x, which is not simulated",
						 reg);
		ctx->regs[reg - KFDSIM_PM4_REG_FIRST] = body[i];
	}
	return 0;
}

/*
 * Run @pkt to completion, a slice at a time: machine code at @pkt's
 * kernel_object with the registers @regs, or a built-in kernel. Between
 * slices the ring's yield hook may stop it (its errno is returned).
 */
static int kfdsim_pm4_run_kernel(struct kfdsim_pm4_ctx *ctx,
				 const struct kfdsim_aql_dispatch *pkt,
				 const struct kfdsim_gfx9_regs *regs,
				 struct kfdsim_fault *fault)
{
	struct kfdsim_gfx9_queue gq = { .vm = ctx->vm, .regs = regs };
	struct kfdsim_dispatch_progress prog = {};
	struct kfdsim_dispatch_error err = {};
	struct kfdsim_gfx9_dispatch *gfx9 = NULL;
	bool builtin = false;
	int ret;

	for (;;) {
		u64 deadline = ktime_get_ns() + KFDSIM_PM4_SLICE_NS;

		ret = -ENOENT;
		if (!builtin)
			ret = kfdsim_gfx9_run(&gfx9, &gq, pkt, &prog, deadline,
					      fault, &err);
		if (ret == -ENOENT) {
			builtin = true;
			ret = kfdsim_kernel_run(ctx->vm, pkt, &prog, deadline,
						fault, &err);
		}
		if (ret != -EAGAIN)
			break;
		ret = ctx->yield(ctx->priv);
		if (ret)
			break;
	}
	if (ret == -ENOEXEC)
		ret = kfdsim_pm4_refuse(ctx, "DISPATCH_DIRECT refused: %s",
					err.what);
	/* err.what may point into the engine's state: freed only now. */
	kfdsim_gfx9_free(&gfx9);
	if (!ret)
		ctx->dispatches++;
	return ret;
}

/* DISPATCH_DIRECT: dim_x, dim_y, dim_z, dispatch_initiator. */
static int kfdsim_pm4_dispatch(struct kfdsim_pm4_ctx *ctx, const u32 *body,
			       struct kfdsim_fault *fault)
{
	const u32 *r = ctx->regs;
	u32 init = body[3];
	bool threads = init & KFDSIM_PM4_DISPATCH_USE_THREAD_DIMENSIONS;
	struct kfdsim_aql_dispatch pkt = {
		.header = KFDSIM_AQL_TYPE_KERNEL_DISPATCH,
		.setup = 3,
	};
	struct kfdsim_gfx9_regs regs;
	u64 grid[3];
	u16 wg[3];
	int i;

	if (!(init & KFDSIM_PM4_DISPATCH_COMPUTE_SHADER_EN))
		return kfdsim_pm4_refuse(ctx,
					 "DISPATCH_DIRECT without COMPUTE_SHADER_EN (initiator 0x%x)",
					 init);
	if (!(init & KFDSIM_PM4_DISPATCH_FORCE_START_AT_000) &&
	    (r[KFDSIM_PM4_REG(COMPUTE_START_X)] ||
	     r[KFDSIM_PM4_REG(COMPUTE_START_Y)] ||
	     r[KFDSIM_PM4_REG(COMPUTE_START_Z)]))
		return kfdsim_pm4_refuse(ctx,
					 "DISPATCH_DIRECT with a non-zero COMPUTE_START_X/Y/Z");
	/* As the hardware: an empty grid launches no workgroup. */
	if (!body[0] || !body[1] || !body[2])
		return 0;
	for (i = 0; i < 3; i++) {
		wg[i] = r[KFDSIM_PM4_REG(COMPUTE_NUM_THREAD_X) + i] &
			KFDSIM_PM4_NUM_THREAD_FULL_MASK;
		grid[i] = threads ? body[i] : (u64)body[i] * wg[i];
		if (grid[i] > U32_MAX)
			return kfdsim_pm4_refuse(ctx,
						 "DISPATCH_DIRECT of more than 2^32 - 1 work-items in a dimension");
	}
	pkt.workgroup_size_x = wg[0];
	pkt.workgroup_size_y = wg[1];
	pkt.workgroup_size_z = wg[2];
	pkt.grid_size_x = grid[0];
	pkt.grid_size_y = grid[1];
	pkt.grid_size_z = grid[2];
	pkt.kernel_object =
		kfdsim_pm4_addr(r[KFDSIM_PM4_REG(COMPUTE_PGM_LO)],
				r[KFDSIM_PM4_REG(COMPUTE_PGM_HI)] &
				KFDSIM_PM4_PGM_HI_MASK) << KFDSIM_PM4_PGM_SHIFT;
	pkt.kernarg_address =
		kfdsim_pm4_addr(r[KFDSIM_PM4_REG(COMPUTE_USER_DATA_0)],
				r[KFDSIM_PM4_REG(COMPUTE_USER_DATA_0) + 1]);
	BUILD_BUG_ON(ARRAY_SIZE(regs.user_data) !=
		     KFDSIM_PM4_COMPUTE_USER_DATA_COUNT);
	regs.pgm = pkt.kernel_object;
	regs.rsrc1 = r[KFDSIM_PM4_REG(COMPUTE_PGM_RSRC1)];
	regs.rsrc2 = r[KFDSIM_PM4_REG(COMPUTE_PGM_RSRC2)];
	memcpy(regs.user_data, &r[KFDSIM_PM4_REG(COMPUTE_USER_DATA_0)],
	       sizeof(regs.user_data));
	return kfdsim_pm4_run_kernel(ctx, &pkt, &regs, fault);
}

/* WRITE_DATA: control, address lo, address hi, then @n - 3 dwords. */
static int kfdsim_pm4_write_data(struct kfdsim_pm4_ctx *ctx, const u32 *body,
				 u32 n, struct kfdsim_fault *fault)
{
	u32 dst = (body[0] >> KFDSIM_PM4_WRITE_DATA_DST_SEL_SHIFT) &
		  KFDSIM_PM4_WRITE_DATA_DST_SEL_MASK;
	u64 va = kfdsim_pm4_addr(body[1], body[2]);
	const u32 *data = body + KFDSIM_PM4_WRITE_DATA_HDR_NDW;
	u32 count = n - KFDSIM_PM4_WRITE_DATA_HDR_NDW;

	if (n <= KFDSIM_PM4_WRITE_DATA_HDR_NDW)
		return kfdsim_pm4_refuse(ctx, "WRITE_DATA without data");
	if (dst != KFDSIM_PM4_WRITE_DATA_DST_MEM_GRBM &&
	    dst != KFDSIM_PM4_WRITE_DATA_DST_TC_L2 &&
	    dst != KFDSIM_PM4_WRITE_DATA_DST_MEM)
		return kfdsim_pm4_refuse(ctx,
					 "WRITE_DATA to destination %u (only memory, 1, 2 or 5, is simulated)",
					 dst);
	if (!IS_ALIGNED(va, sizeof(u32)))
		return kfdsim_pm4_refuse(ctx,
					 "WRITE_DATA to 0x%llx, not 4-byte aligned",
					 va);
	/* Every dword to the one address: the last one stays. */
	if (body[0] & KFDSIM_PM4_WRITE_DATA_ONE_ADDR) {
		data += count - 1;
		count = 1;
	}
	return kfdsim_vm_write(ctx->vm, va, data, count * sizeof(u32), fault);
}

/*
 * RELEASE_MEM: event, selects, address lo, address hi, data lo, data hi,
 * interrupt context. The event's cache actions have nothing to do.
 */
static int kfdsim_pm4_release_mem(struct kfdsim_pm4_ctx *ctx,
				  const u32 *body, struct kfdsim_fault *fault)
{
	u32 data_sel = (body[1] >> KFDSIM_PM4_RELEASE_DATA_SEL_SHIFT) &
		       KFDSIM_PM4_RELEASE_DATA_SEL_MASK;
	u32 dst = (body[1] >> KFDSIM_PM4_RELEASE_DST_SEL_SHIFT) &
		  KFDSIM_PM4_RELEASE_DST_SEL_MASK;
	u64 va = kfdsim_pm4_addr(body[2], body[3]);
	size_t len;

	switch (data_sel) {
	case KFDSIM_PM4_RELEASE_DATA_NONE:
		return 0;
	case KFDSIM_PM4_RELEASE_DATA_32:
		len = sizeof(u32);
		break;
	case KFDSIM_PM4_RELEASE_DATA_64:
		len = sizeof(u64);
		break;
	default:
		return kfdsim_pm4_refuse(ctx,
					 "RELEASE_MEM with DATA_SEL %u (only 0, 1 and 2 are simulated)",
					 data_sel);
	}
	if (dst != KFDSIM_PM4_RELEASE_DST_MEM &&
	    dst != KFDSIM_PM4_RELEASE_DST_TC_L2)
		return kfdsim_pm4_refuse(ctx,
					 "RELEASE_MEM to destination %u (only memory, 0 or 1)",
					 dst);
	if (!IS_ALIGNED(va, len))
		return kfdsim_pm4_refuse(ctx,
					 "RELEASE_MEM of %zu bytes to 0x%llx, not aligned to them",
					 len, va);
	/* Data lo and hi are consecutive dwords: little-endian u64 order. */
	return kfdsim_vm_write(ctx->vm, va, body + 4, len, fault);
}

/* Check a fixed-length packet's length. */
static int kfdsim_pm4_len(struct kfdsim_pm4_ctx *ctx, const char *name,
			  u32 n, u32 want)
{
	if (n == want)
		return 0;
	return kfdsim_pm4_refuse(ctx, "%s of %u dwords after the header (%u)",
				 name, n, want);
}

/**
 * kfdsim_pm4_exec - execute the PM4 packet at @dw
 * @ctx: the engine state
 * @dw: the packet and what follows it
 * @ndw: dwords available at @dw, at least 1
 * @fault: filled on a GPU page fault
 *
 * Return: the packet's length in dwords; -ENOEXEC for a packet the engine
 * refuses, including one that does not fit in @ndw, with @ctx->why set;
 * -EFAULT on a GPU page fault, with @fault filled and the writes before it
 * done; the yield hook's errno if it stopped a dispatch; -ENOMEM.
 */
int kfdsim_pm4_exec(struct kfdsim_pm4_ctx *ctx, const u32 *dw, u32 ndw,
		    struct kfdsim_fault *fault)
{
	u32 hdr = dw[0];
	u32 type = hdr >> KFDSIM_PM4_TYPE_SHIFT;
	u32 op = (hdr >> KFDSIM_PM4_OP_SHIFT) & KFDSIM_PM4_OP_MASK;
	u32 count = (hdr >> KFDSIM_PM4_COUNT_SHIFT) & KFDSIM_PM4_COUNT_MASK;
	const u32 *body = dw + 1;
	u32 n = count + 1;
	int ret;

	if (type != KFDSIM_PM4_TYPE3)
		return kfdsim_pm4_refuse(ctx,
					 "type-%u packet (only type 3 is simulated)",
					 type);
	if (hdr & KFDSIM_PM4_PREDICATE)
		return kfdsim_pm4_refuse(ctx,
					 "predicated packet (opcode 0x%x)", op);
	/* The one-dword NOP */
	if (op == KFDSIM_PM4_OP_NOP && count == KFDSIM_PM4_COUNT_MASK)
		return 1;
	if (n > ndw - 1)
		return kfdsim_pm4_refuse(ctx,
					 "packet of opcode 0x%x and %u dwords truncated by the end of the IB",
					 op, n + 1);

	switch (op) {
	case KFDSIM_PM4_OP_NOP:
		ret = 0;
		break;
	case KFDSIM_PM4_OP_SET_SH_REG:
		ret = kfdsim_pm4_set_sh_reg(ctx, body, n);
		break;
	case KFDSIM_PM4_OP_DISPATCH_DIRECT:
		ret = kfdsim_pm4_len(ctx, "DISPATCH_DIRECT", n,
				     KFDSIM_PM4_DISPATCH_DIRECT_NDW);
		if (!ret)
			ret = kfdsim_pm4_dispatch(ctx, body, fault);
		break;
	case KFDSIM_PM4_OP_ACQUIRE_MEM:
		/* Memory is always coherent: nothing to acquire. */
		ret = kfdsim_pm4_len(ctx, "ACQUIRE_MEM", n,
				     KFDSIM_PM4_ACQUIRE_MEM_NDW);
		break;
	case KFDSIM_PM4_OP_RELEASE_MEM:
		ret = kfdsim_pm4_len(ctx, "RELEASE_MEM", n,
				     KFDSIM_PM4_RELEASE_MEM_NDW);
		if (!ret)
			ret = kfdsim_pm4_release_mem(ctx, body, fault);
		break;
	case KFDSIM_PM4_OP_WRITE_DATA:
		ret = kfdsim_pm4_write_data(ctx, body, n, fault);
		break;
	default:
		ret = kfdsim_pm4_refuse(ctx,
					"opcode 0x%x is not simulated", op);
		break;
	}
	return ret ? ret : n + 1;
}
