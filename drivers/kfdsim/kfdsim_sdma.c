// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated SDMA engine: executes one gfx9-encoded SDMA packet at a time
 * against a GPU address space.
 *
 * It knows nothing about queues: the command processor feeds it packets from
 * KFD SDMA rings, and DRM command submission can feed it indirect buffers.
 */
#include <linux/kfdsim.h>
#include <linux/slab.h>

#include "kfdsim.h"

static u64 kfdsim_sdma_addr(u32 lo, u32 hi)
{
	return ((u64)hi << 32) | lo;
}

/* Copy through a bounce page: source and destination may be in one BO. */
static int kfdsim_sdma_copy(struct kfdsim_vm *vm, u64 src, u64 dst, u32 bytes,
			    struct kfdsim_fault *fault)
{
	size_t chunk;
	void *buf;
	int ret = 0;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	while (bytes) {
		chunk = min_t(u32, bytes, PAGE_SIZE);
		ret = kfdsim_vm_read(vm, src, buf, chunk, fault);
		if (ret)
			break;
		ret = kfdsim_vm_write(vm, dst, buf, chunk, fault);
		if (ret)
			break;
		src += chunk;
		dst += chunk;
		bytes -= chunk;
	}
	kfree(buf);
	return ret;
}

static int kfdsim_sdma_fill_piece(void *ctx, void *ptr, size_t len, u64 va)
{
	u32 value = *(u32 *)ctx;
	u32 *p = ptr;
	size_t i;

	for (i = 0; i < len / sizeof(u32); i++)
		p[i] = value;
	return 0;
}

/**
 * kfdsim_sdma_exec - execute the SDMA packet at the start of @dw
 * @ctx: address space and trap callback
 * @dw: the packet's dwords, as far as they are available
 * @ndw: number of dwords available in @dw
 * @fault: filled on a GPU page fault
 *
 * A NOP may claim more dwords than @ndw (its padding is never read); the
 * caller checks that the claimed dwords exist before consuming them.
 *
 * Return: dwords consumed (> 0); -EAGAIN if the packet is longer than
 * @ndw; -EFAULT on a GPU page fault; -ENOEXEC for a packet the engine
 * does not accept (unknown opcode, oversize or misaligned operation);
 * -ENOMEM.
 */
int kfdsim_sdma_exec(struct kfdsim_sdma_ctx *ctx, const u32 *dw, u32 ndw,
		     struct kfdsim_fault *fault)
{
	u32 op = dw[0] & 0xff;
	u32 subop = (dw[0] >> 8) & 0xff;
	u32 bytes, value;
	u64 addr;
	int ret;

	switch (op) {
	case KFDSIM_SDMA_OP_NOP:
		return 1 + ((dw[0] >> KFDSIM_SDMA_NOP_COUNT_SHIFT) &
			    KFDSIM_SDMA_NOP_COUNT_MASK);

	case KFDSIM_SDMA_OP_COPY:
		if (subop != KFDSIM_SDMA_SUBOP_COPY_LINEAR)
			return -ENOEXEC;
		if (ndw < KFDSIM_SDMA_COPY_DWORDS)
			return -EAGAIN;
		if (dw[1] >= KFDSIM_SDMA_COPY_MAX_BYTES)
			return -ENOEXEC;
		bytes = dw[1] + 1;
		ret = kfdsim_sdma_copy(ctx->vm, kfdsim_sdma_addr(dw[3], dw[4]),
				       kfdsim_sdma_addr(dw[5], dw[6]), bytes,
				       fault);
		return ret ? ret : KFDSIM_SDMA_COPY_DWORDS;

	case KFDSIM_SDMA_OP_FENCE:
		if (ndw < KFDSIM_SDMA_FENCE_DWORDS)
			return -EAGAIN;
		addr = kfdsim_sdma_addr(dw[1], dw[2]);
		if (!IS_ALIGNED(addr, sizeof(u32)))
			return -ENOEXEC;
		ret = kfdsim_vm_write(ctx->vm, addr, &dw[3], sizeof(u32),
				      fault);
		return ret ? ret : KFDSIM_SDMA_FENCE_DWORDS;

	case KFDSIM_SDMA_OP_TRAP:
		if (ndw < KFDSIM_SDMA_TRAP_DWORDS)
			return -EAGAIN;
		if (ctx->trap)
			ctx->trap(ctx->priv,
				  dw[1] & KFDSIM_SDMA_TRAP_EVENT_MASK);
		return KFDSIM_SDMA_TRAP_DWORDS;

	case KFDSIM_SDMA_OP_CONST_FILL:
		if (ndw < KFDSIM_SDMA_FILL_DWORDS)
			return -EAGAIN;
		if ((dw[0] >> KFDSIM_SDMA_FILL_SIZE_SHIFT) !=
		    KFDSIM_SDMA_FILL_SIZE_DWORD)
			return -ENOEXEC;
		addr = kfdsim_sdma_addr(dw[1], dw[2]);
		value = dw[3];
		if (dw[4] >= KFDSIM_SDMA_COPY_MAX_BYTES)
			return -ENOEXEC;
		bytes = dw[4] + 1;
		if (!IS_ALIGNED(addr, sizeof(u32)) ||
		    !IS_ALIGNED(bytes, sizeof(u32)))
			return -ENOEXEC;
		ret = kfdsim_vm_access(ctx->vm, addr, bytes, true,
				       kfdsim_sdma_fill_piece, &value, fault);
		return ret ? ret : KFDSIM_SDMA_FILL_DWORDS;

	default:
		return -ENOEXEC;
	}
}
