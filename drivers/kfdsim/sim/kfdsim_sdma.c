// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated SDMA engine: executes one gfx9-encoded SDMA packet at a time
 * against a GPU address space.
 *
 * It knows nothing about queues: the command processor feeds it packets from
 * KFD SDMA rings, and DRM command submission can feed it indirect buffers.
 *
 * A GPU page fault stops a KFD queue (the process gets a memory exception
 * event). A context with a fault callback instead behaves as amdgpu's gfx9
 * VM with retry faults off: the fault is reported, a read of the page gives
 * zeros (the dummy page), a write to it is dropped, and the packet goes on.
 */
#include <linux/kfdsim.h>
#include <linux/slab.h>

#include "kfdsim.h"

static u64 kfdsim_sdma_addr(u32 lo, u32 hi)
{
	return ((u64)hi << 32) | lo;
}

/* Bytes from @va to the end of its page. */
static size_t kfdsim_sdma_page_left(u64 va)
{
	return PAGE_SIZE - offset_in_page(va);
}

/*
 * A fault the context tolerates (retry faults off, as amdgpu runs gfx9):
 * reported, and the access goes on against the dummy page.
 */
static bool kfdsim_sdma_tolerate(struct kfdsim_sdma_ctx *ctx, int ret,
				 const struct kfdsim_fault *fault)
{
	if (ret != -EFAULT || !ctx->fault)
		return false;
	ctx->fault(ctx->priv, fault);
	return true;
}

/*
 * Read or write @len bytes at @va, which lie in one GPU page. Under
 * kfdsim_sdma_tolerate() a read of an unmapped page gives zeros and a
 * write to it is dropped.
 */
static int kfdsim_sdma_rw(struct kfdsim_sdma_ctx *ctx, u64 va, void *buf,
			  size_t len, bool write, struct kfdsim_fault *fault)
{
	int ret;

	if (write)
		ret = kfdsim_vm_write(ctx->vm, va, buf, len, fault);
	else
		ret = kfdsim_vm_read(ctx->vm, va, buf, len, fault);
	if (!kfdsim_sdma_tolerate(ctx, ret, fault))
		return ret;
	if (!write)
		memset(buf, 0, len);
	return 0;
}

/*
 * Copy page by page: source and destination may be in one BO. Each step
 * stays within one page of the source and one of the destination, so a
 * fault concerns the whole step; it goes straight from page to page, or
 * through a bounce page when it meets a fault.
 */
static int kfdsim_sdma_copy(struct kfdsim_sdma_ctx *ctx, u64 src, u64 dst,
			    u32 bytes, struct kfdsim_fault *fault)
{
	size_t chunk;
	void *buf;
	int ret = 0;

	buf = kfdsim_cp_should_fail() ? NULL : kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	while (bytes) {
		chunk = min3((size_t)bytes, kfdsim_sdma_page_left(src),
			     kfdsim_sdma_page_left(dst));
		/*
		 * Both pages mapped: one copy between them. The bounce page is
		 * the way for a step that faults, so that it reports what it
		 * meets first as before.
		 */
		if (!kfdsim_vm_copy_in_page(ctx->vm, src, dst, chunk))
			goto next;
		ret = kfdsim_sdma_rw(ctx, src, buf, chunk, false, fault);
		if (ret)
			break;
		ret = kfdsim_sdma_rw(ctx, dst, buf, chunk, true, fault);
		if (ret)
			break;
next:
		src += chunk;
		dst += chunk;
		bytes -= chunk;
		ctx->copied += chunk;
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

/* Fill page by page, so a tolerated fault drops only its page. */
static int kfdsim_sdma_fill(struct kfdsim_sdma_ctx *ctx, u64 addr, u32 value,
			    u32 bytes, struct kfdsim_fault *fault)
{
	size_t chunk;
	int ret;

	while (bytes) {
		chunk = min_t(size_t, bytes, kfdsim_sdma_page_left(addr));
		ret = kfdsim_vm_access(ctx->vm, addr, chunk, true,
				       kfdsim_sdma_fill_piece, &value, fault);
		if (ret && !kfdsim_sdma_tolerate(ctx, ret, fault))
			return ret;
		addr += chunk;
		bytes -= chunk;
	}
	return 0;
}

/* Does @val compare to @ref with POLL_REGMEM function @func? */
static bool kfdsim_sdma_poll_holds(u32 func, u32 val, u32 ref)
{
	switch (func) {
	case 0:
		return true;
	case 1:
		return val < ref;
	case 2:
		return val <= ref;
	case 3:
		return val == ref;
	case 4:
		return val != ref;
	case 5:
		return val >= ref;
	default:
		return val > ref;
	}
}

/* POLL_REGMEM, as ROCr's SDMA blits wait on signals and flush the HDP. */
static int kfdsim_sdma_poll(struct kfdsim_sdma_ctx *ctx, const u32 *dw,
			    struct kfdsim_fault *fault)
{
	u32 func = (dw[0] >> KFDSIM_SDMA_POLL_FUNC_SHIFT) &
		   KFDSIM_SDMA_POLL_FUNC_MASK;
	u64 addr = kfdsim_sdma_addr(dw[1], dw[2]);
	u32 val;
	int ret;

	/*
	 * A register poll: the HDP flush forms (the HDP_FLUSH bit, or
	 * ROCr's "always" poll) complete at once; no other register exists.
	 */
	if (!(dw[0] & KFDSIM_SDMA_POLL_MEM))
		return ((dw[0] & KFDSIM_SDMA_POLL_HDP_FLUSH) || !func) ?
		       KFDSIM_SDMA_POLL_DWORDS : -ENOEXEC;
	if (func > 6 || !IS_ALIGNED(addr, sizeof(u32)))
		return -ENOEXEC;
	ret = kfdsim_vm_read(ctx->vm, addr, &val, sizeof(val), fault);
	if (ret)
		return ret;
	return kfdsim_sdma_poll_holds(func, val & dw[4], dw[3]) ?
	       KFDSIM_SDMA_POLL_DWORDS : -EBUSY;
}

/* ATOMIC: only the 64-bit add ROCr uses to decrement a signal. */
static int kfdsim_sdma_atomic(struct kfdsim_sdma_ctx *ctx, const u32 *dw,
			      struct kfdsim_fault *fault)
{
	u64 addr = kfdsim_sdma_addr(dw[1], dw[2]);
	s64 old;
	int ret;

	if ((dw[0] >> KFDSIM_SDMA_ATOMIC_OP_SHIFT) != KFDSIM_SDMA_ATOMIC_ADD64 ||
	    (dw[0] & KFDSIM_SDMA_ATOMIC_LOOP) || !IS_ALIGNED(addr, sizeof(u64)))
		return -ENOEXEC;
	ret = kfdsim_vm_atomic_add64(ctx->vm, addr,
				     (s64)kfdsim_sdma_addr(dw[3], dw[4]), &old,
				     fault);
	return ret ? ret : KFDSIM_SDMA_ATOMIC_DWORDS;
}

/**
 * kfdsim_sdma_exec - execute the SDMA packet at the start of @dw
 * @ctx: address space, trap and fault callbacks
 * @dw: the packet's dwords, as far as they are available
 * @ndw: number of dwords available in @dw
 * @fault: filled on a GPU page fault
 *
 * A NOP may claim more dwords than @ndw (its padding is never read); the
 * caller checks that the claimed dwords exist before consuming them.
 *
 * Return: dwords consumed (> 0); -EAGAIN if the packet is longer than
 * @ndw; -EBUSY for a POLL_REGMEM whose condition does not hold yet (run
 * it again later); -EFAULT on a GPU page fault the context does not
 * tolerate (no @ctx->fault); -ENOEXEC for a packet the engine does not
 * accept (unknown opcode, misaligned operation); -ENOMEM.
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
		bytes = (dw[1] & KFDSIM_SDMA_COUNT_MASK) + 1;
		ret = kfdsim_sdma_copy(ctx, kfdsim_sdma_addr(dw[3], dw[4]),
				       kfdsim_sdma_addr(dw[5], dw[6]), bytes,
				       fault);
		return ret ? ret : KFDSIM_SDMA_COPY_DWORDS;

	case KFDSIM_SDMA_OP_FENCE:
		if (ndw < KFDSIM_SDMA_FENCE_DWORDS)
			return -EAGAIN;
		addr = kfdsim_sdma_addr(dw[1], dw[2]);
		if (!IS_ALIGNED(addr, sizeof(u32)))
			return -ENOEXEC;
		value = dw[3];
		ret = kfdsim_sdma_rw(ctx, addr, &value, sizeof(value), true,
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
		bytes = (dw[4] & KFDSIM_SDMA_COUNT_MASK) + 1;
		if (!IS_ALIGNED(addr, sizeof(u32)) ||
		    !IS_ALIGNED(bytes, sizeof(u32)))
			return -ENOEXEC;
		ret = kfdsim_sdma_fill(ctx, addr, value, bytes, fault);
		return ret ? ret : KFDSIM_SDMA_FILL_DWORDS;

	case KFDSIM_SDMA_OP_POLL_REGMEM:
		if (ndw < KFDSIM_SDMA_POLL_DWORDS)
			return -EAGAIN;
		return kfdsim_sdma_poll(ctx, dw, fault);

	case KFDSIM_SDMA_OP_ATOMIC:
		if (ndw < KFDSIM_SDMA_ATOMIC_DWORDS)
			return -EAGAIN;
		return kfdsim_sdma_atomic(ctx, dw, fault);

	default:
		return -ENOEXEC;
	}
}
