// SPDX-License-Identifier: GPL-2.0
/*
 * Vector memory through the flat address space: FLAT and GLOBAL.
 *
 * dword 0: [31:26] 0x37, op [24:18], slc [17], glc [16], seg [15:14]
 *          (0 flat, 1 scratch, 2 global), lds [13], offset [12:0]
 *          (global: 13-bit signed; flat: 12-bit unsigned)
 * dword 1: vdst [31:24], saddr [22:16] (0x7f: off), data [15:8],
 *          addr [7:0]
 *
 * Every lane's access goes through the process's GPU page table; a flat
 * address inside the LDS aperture reaches the workgroup's LDS instead, one
 * in the private aperture the lane's scratch (gfx9_scratch_xfer(), from
 * FLAT_SCRATCH, laid out as mubuf.c says). SCRATCH_* (segment 1) take the
 * same path with a private offset from a VGPR or an SGPR.
 * Accesses complete in lane order before the next instruction, so
 * s_waitcnt never waits. Atomics are atomic against the CPU and other
 * queues (locked read-modify-write on the page).
 */
#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "gfx9.h"

#define FLAT_SADDR_OFF	0x7f

int gfx9_mem_read(struct gfx9_disp *d, u64 va, void *buf, size_t len)
{
	return kfdsim_vm_read(d->vm, va, buf, len, d->fault);
}

int gfx9_mem_write(struct gfx9_disp *d, u64 va, const void *buf,
		   size_t len)
{
	return kfdsim_vm_write(d->vm, va, buf, len, d->fault);
}

/**
 * gfx9_atomic - one atomic read-modify-write on 32 or 64 bits
 * @ptr: the naturally aligned location (a page mapping or the LDS)
 * @op: GFX9_ATOMIC_*
 * @wide: 64 bits
 * @src: the operand (for cmpswap: the value to store)
 * @cmp: cmpswap's compare value
 *
 * Return: the value before the operation.
 */
u64 gfx9_atomic(void *ptr, unsigned int op, bool wide, u64 src, u64 cmp)
{
	u64 old, new;

	old = wide ? READ_ONCE(*(u64 *)ptr) : READ_ONCE(*(u32 *)ptr);
	for (;;) {
		switch (op) {
		case GFX9_ATOMIC_SWAP:
			new = src;
			break;
		case GFX9_ATOMIC_CMPSWAP:
			new = old == cmp ? src : old;
			break;
		case GFX9_ATOMIC_ADD:
			new = old + src;
			break;
		case GFX9_ATOMIC_SUB:
			new = old - src;
			break;
		case GFX9_ATOMIC_RSUB:
			new = src - old;
			break;
		case GFX9_ATOMIC_SMIN:
			new = wide ? min((s64)old, (s64)src) :
				     (u32)min((s32)old, (s32)src);
			break;
		case GFX9_ATOMIC_UMIN:
			new = min(old, src);
			break;
		case GFX9_ATOMIC_SMAX:
			new = wide ? max((s64)old, (s64)src) :
				     (u32)max((s32)old, (s32)src);
			break;
		case GFX9_ATOMIC_UMAX:
			new = max(old, src);
			break;
		case GFX9_ATOMIC_AND:
			new = old & src;
			break;
		case GFX9_ATOMIC_OR:
			new = old | src;
			break;
		case GFX9_ATOMIC_XOR:
			new = old ^ src;
			break;
		case GFX9_ATOMIC_INC:
			new = old >= src ? 0 : old + 1;
			break;
		default: /* GFX9_ATOMIC_DEC */
			new = (old == 0 || old > src) ? src : old - 1;
			break;
		}
		if (wide) {
			u64 seen = cmpxchg((u64 *)ptr, old, new);

			if (seen == old)
				return old;
			old = seen;
		} else {
			u32 seen = cmpxchg((u32 *)ptr, (u32)old, (u32)new);

			if (seen == (u32)old)
				return old;
			old = seen;
		}
	}
}

struct flat_atomic_ctx {
	unsigned int op;
	bool wide;
	u64 src;
	u64 cmp;
	u64 old;
};

static int flat_atomic_fn(void *ctx, void *ptr, size_t len, u64 va)
{
	struct flat_atomic_ctx *c = ctx;

	c->old = gfx9_atomic(ptr, c->op, c->wide, c->src, c->cmp);
	return 0;
}

/**
 * gfx9_mem_atomic - an atomic on process memory through the GPU page table
 * @d: the dispatch
 * @va: the naturally aligned GPU VA
 * @op: GFX9_ATOMIC_*
 * @wide: 64 bits
 * @src: the operand (for cmpswap: the value to store)
 * @cmp: cmpswap's compare value
 * @old: the value before the operation
 *
 * Return: 0 or -EFAULT (the fault filled).
 */
int gfx9_mem_atomic(struct gfx9_disp *d, u64 va, unsigned int op, bool wide,
		    u64 src, u64 cmp, u64 *old)
{
	struct flat_atomic_ctx c = {
		.op = op, .wide = wide, .src = src, .cmp = cmp,
	};
	int ret;

	ret = kfdsim_vm_access(d->vm, va, wide ? 8 : 4, true, flat_atomic_fn,
			       &c, d->fault);
	*old = c.old;
	return ret;
}

static bool flat_is_lds(u64 va)
{
	return va >= KFDSIM_LDS_BASE &&
	       va - KFDSIM_LDS_BASE <= KFDSIM_APERTURE_SPAN;
}

static bool flat_is_scratch(u64 va)
{
	return va >= KFDSIM_SCRATCH_BASE &&
	       va - KFDSIM_SCRATCH_BASE <= KFDSIM_APERTURE_SPAN;
}

/* The LDS at byte @off, or NULL (out of range: reads 0, writes drop). */
static u8 *flat_lds(struct gfx9_disp *d, u64 off, u32 len)
{
	if (off + len > d->lds_size)
		return NULL;
	return d->lds + off;
}

/*
 * SCRATCH_*: a lane's private offset is the VGPR, or the SGPR saddr names
 * for every lane, plus the 13-bit signed offset; it becomes an address in
 * the private aperture, which flat_xfer() takes to the lane's scratch.
 */
static int flat_scratch_addrs(struct gfx9_disp *d, struct gfx9_wave *w,
			      const struct gfx9_insn *in, u64 *va)
{
	u32 a = in->dw[0], b = in->dw[1];
	u32 saddr = (b >> 16) & 0x7f, addr = b & 0xff, off;
	u64 exec = gfx9_exec(w);
	unsigned int l;

	off = sign_extend32(a & 0x1fff, 12);
	if (saddr != FLAT_SADDR_OFF) {
		if (!gfx9_sdst_valid(saddr, false))
			return gfx9_illegal(d, w, in, "SCRATCH saddr");
		off += w->sreg[saddr];
	} else if (addr >= d->nvgpr) {
		return gfx9_illegal(d, w, in, "SCRATCH address VGPR");
	}
	for (l = 0; l < GFX9_LANES; l++)
		if (exec & BIT_ULL(l))
			va[l] = KFDSIM_SCRATCH_BASE +
				(u32)(off + (saddr == FLAT_SADDR_OFF ?
					     gfx9_vreg(w, addr)[l] : 0));
	return 0;
}

/* The address of each active lane of a FLAT or GLOBAL instruction. */
static int flat_addrs(struct gfx9_disp *d, struct gfx9_wave *w,
		      const struct gfx9_insn *in, u64 *va)
{
	u32 a = in->dw[0], b = in->dw[1];
	u32 seg = (a >> 14) & 3, saddr = (b >> 16) & 0x7f, addr = b & 0xff;
	u64 exec = gfx9_exec(w), base = 0;
	const u32 *lo, *hi;
	s64 off;
	unsigned int l;

	if (seg == 3)
		return gfx9_illegal(d, w, in, "FLAT segment 3");
	if (a & BIT(13))
		return gfx9_illegal(d, w, in, "FLAT lds");
	if (seg == 1)
		return flat_scratch_addrs(d, w, in, va);
	if (seg == 2) {
		off = sign_extend32(a & 0x1fff, 12);
	} else {
		off = a & 0xfff;
		saddr = FLAT_SADDR_OFF;
	}
	if (saddr != FLAT_SADDR_OFF) {
		if (!gfx9_sdst_valid(saddr, true) || addr >= d->nvgpr)
			return gfx9_illegal(d, w, in, "GLOBAL saddr");
		base = gfx9_sreg64(w, saddr);
		lo = gfx9_vreg(w, addr);
		for (l = 0; l < GFX9_LANES; l++)
			if (exec & BIT_ULL(l))
				va[l] = base + lo[l] + off;
		return 0;
	}
	if (addr + 1 >= d->nvgpr + GFX9_VGPR_PAD || addr >= d->nvgpr)
		return gfx9_illegal(d, w, in, "FLAT address VGPRs");
	lo = gfx9_vreg(w, addr);
	hi = gfx9_vreg(w, addr + 1);
	for (l = 0; l < GFX9_LANES; l++)
		if (exec & BIT_ULL(l))
			va[l] = (lo[l] | (u64)hi[l] << 32) + off;
	return 0;
}

/* Read or write @len bytes of lane memory at @va (flat: maybe LDS). */
static int flat_xfer(struct gfx9_disp *d, struct gfx9_wave *w,
		     unsigned int lane, u64 va, void *buf, u32 len,
		     bool write)
{
	u8 *p;

	if (flat_is_lds(va)) {
		p = flat_lds(d, va - KFDSIM_LDS_BASE, len);
		if (!write)
			memset(buf, 0, len);
		if (p && write)
			memcpy(p, buf, len);
		else if (p)
			memcpy(buf, p, len);
		return 0;
	}
	if (flat_is_scratch(va))
		return gfx9_scratch_xfer(d, w, lane, va - KFDSIM_SCRATCH_BASE,
					 buf, len, write);
	return write ? gfx9_mem_write(d, va, buf, len) :
		       gfx9_mem_read(d, va, buf, len);
}

/* Loads (0x10-0x17) and stores (0x18-0x1f) of 1 to 16 bytes. */
static int flat_rw(struct gfx9_disp *d, struct gfx9_wave *w,
		   const struct gfx9_insn *in)
{
	static const u8 bytes[8] = { 1, 1, 2, 2, 4, 8, 12, 16 };
	u32 op = (in->dw[0] >> 18) & 0x7f, vdst = in->dw[1] >> 24;
	u32 data = (in->dw[1] >> 8) & 0xff, val[4], i;
	u32 len = bytes[op & 7], n = DIV_ROUND_UP(len, 4);
	bool store = op >= 0x18;
	u64 *va = d->va, exec = gfx9_exec(w);
	unsigned int l;
	int ret;

	if ((store ? data : vdst) >= d->nvgpr)
		return gfx9_illegal(d, w, in, "FLAT registers");
	ret = flat_addrs(d, w, in, va);
	if (ret)
		return ret;
	/* Addresses are all read above; a vdst overlapping addr is fine. */
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		val[0] = 0;
		for (i = 0; store && i < n; i++)
			val[i] = gfx9_vreg(w, data + i)[l];
		/* The _d16_hi stores take the high half of the dword. */
		if (op == 0x19 || op == 0x1b)
			val[0] >>= 16;
		ret = flat_xfer(d, w, l, va[l], val, len, store);
		if (ret)
			return ret;
		if (store)
			continue;
		if (op == 0x11)
			val[0] = (s8)val[0];
		else if (op == 0x13)
			val[0] = (s16)val[0];
		for (i = 0; i < n; i++)
			gfx9_vreg(w, vdst + i)[l] = val[i];
	}
	return 0;
}

/* The atomic of FLAT/GLOBAL and MUBUF opcodes 0x40-0x4c, 0x60-0x6c. */
const u8 gfx9_vmem_atomic_ops[16] = {
	GFX9_ATOMIC_SWAP, GFX9_ATOMIC_CMPSWAP, GFX9_ATOMIC_ADD,
	GFX9_ATOMIC_SUB, GFX9_ATOMIC_SMIN, GFX9_ATOMIC_UMIN,
	GFX9_ATOMIC_SMAX, GFX9_ATOMIC_UMAX, GFX9_ATOMIC_AND, GFX9_ATOMIC_OR,
	GFX9_ATOMIC_XOR, GFX9_ATOMIC_INC, GFX9_ATOMIC_DEC,
};

static int flat_atomic(struct gfx9_disp *d, struct gfx9_wave *w,
		       const struct gfx9_insn *in)
{
	u32 a = in->dw[0], b = in->dw[1], op = (a >> 18) & 0x7f;
	u32 vdst = b >> 24, data = (b >> 8) & 0xff;
	bool glc = a & BIT(16), wide = op >= 0x60;
	struct flat_atomic_ctx c = { .wide = wide };
	u32 size = wide ? 8 : 4;
	u64 *va = d->va, exec = gfx9_exec(w), *ret_val = d->tmp;
	unsigned int l, dregs = wide ? 2 : 1;
	int ret;

	c.op = gfx9_vmem_atomic_ops[op & 0xf];
	if (data >= d->nvgpr || (glc && vdst >= d->nvgpr))
		return gfx9_illegal(d, w, in, "FLAT atomic registers");
	ret = flat_addrs(d, w, in, va);
	if (ret)
		return ret;
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		c.src = gfx9_vreg(w, data)[l];
		if (wide)
			c.src |= (u64)gfx9_vreg(w, data + 1)[l] << 32;
		if (c.op == GFX9_ATOMIC_CMPSWAP) {
			c.cmp = gfx9_vreg(w, data + dregs)[l];
			if (wide)
				c.cmp |= (u64)gfx9_vreg(w, data + 3)[l] << 32;
		}
		if (va[l] & (size - 1))
			return gfx9_illegal(d, w, in, "misaligned atomic");
		if (flat_is_lds(va[l])) {
			u8 *p = flat_lds(d, va[l] - KFDSIM_LDS_BASE, size);

			c.old = p ? gfx9_atomic(p, c.op, wide, c.src, c.cmp) : 0;
		} else if (flat_is_scratch(va[l])) {
			return gfx9_illegal(d, w, in,
					    "flat access to the scratch aperture");
		} else {
			ret = gfx9_mem_atomic(d, va[l], c.op, wide, c.src,
					      c.cmp, &c.old);
			if (ret)
				return ret;
		}
		ret_val[l] = c.old;
	}
	if (!glc)
		return 0;
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		gfx9_vreg(w, vdst)[l] = ret_val[l];
		if (wide)
			gfx9_vreg(w, vdst + 1)[l] = ret_val[l] >> 32;
	}
	return 0;
}

#define FL(n)	{ n, flat_rw }
#define FS(n)	{ n, flat_rw }
#define FA(n)	{ n, flat_atomic }
const struct gfx9_op gfx9_flat_ops[128] = {
	[0x10] = FL("load_ubyte"), [0x11] = FL("load_sbyte"),
	[0x12] = FL("load_ushort"), [0x13] = FL("load_sshort"),
	[0x14] = FL("load_dword"), [0x15] = FL("load_dwordx2"),
	[0x16] = FL("load_dwordx3"), [0x17] = FL("load_dwordx4"),
	[0x18] = FS("store_byte"), [0x19] = FS("store_byte_d16_hi"),
	[0x1a] = FS("store_short"), [0x1b] = FS("store_short_d16_hi"),
	[0x1c] = FS("store_dword"), [0x1d] = FS("store_dwordx2"),
	[0x1e] = FS("store_dwordx3"), [0x1f] = FS("store_dwordx4"),
	[0x40] = FA("atomic_swap"), [0x41] = FA("atomic_cmpswap"),
	[0x42] = FA("atomic_add"), [0x43] = FA("atomic_sub"),
	[0x44] = FA("atomic_smin"), [0x45] = FA("atomic_umin"),
	[0x46] = FA("atomic_smax"), [0x47] = FA("atomic_umax"),
	[0x48] = FA("atomic_and"), [0x49] = FA("atomic_or"),
	[0x4a] = FA("atomic_xor"), [0x4b] = FA("atomic_inc"),
	[0x4c] = FA("atomic_dec"),
	[0x60] = FA("atomic_swap_x2"), [0x61] = FA("atomic_cmpswap_x2"),
	[0x62] = FA("atomic_add_x2"), [0x63] = FA("atomic_sub_x2"),
	[0x64] = FA("atomic_smin_x2"), [0x65] = FA("atomic_umin_x2"),
	[0x66] = FA("atomic_smax_x2"), [0x67] = FA("atomic_umax_x2"),
	[0x68] = FA("atomic_and_x2"), [0x69] = FA("atomic_or_x2"),
	[0x6a] = FA("atomic_xor_x2"), [0x6b] = FA("atomic_inc_x2"),
	[0x6c] = FA("atomic_dec_x2"),
};
