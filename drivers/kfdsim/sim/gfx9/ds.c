// SPDX-License-Identifier: GPL-2.0
/*
 * The local data share: DS.
 *
 * dword 0: [31:26] 0x36, op [24:17], gds [16], offset1 [15:8],
 *          offset0 [7:0]
 * dword 1: vdst [31:24], data1 [23:16], data0 [15:8], addr [7:0]
 *
 * The LDS of the running workgroup is a kernel buffer of the workgroup's
 * group segment size. As on gfx9, an access beyond it reads 0 and a write
 * beyond it is dropped. Every lane completes in lane order before the next
 * instruction. GDS is not modelled.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "gfx9.h"

#define DS_OFFSET0(a)	((a) & 0xff)
#define DS_OFFSET1(a)	(((a) >> 8) & 0xff)
#define DS_ADDR(b)	((b) & 0xff)
#define DS_DATA0(b)	(((b) >> 8) & 0xff)
#define DS_DATA1(b)	(((b) >> 16) & 0xff)
#define DS_VDST(b)	((b) >> 24)

static u8 *ds_ptr(struct gfx9_disp *d, u64 addr, u32 len)
{
	if (addr + len > d->lds_size)
		return NULL;
	return d->lds + addr;
}

static void ds_read(struct gfx9_disp *d, u64 addr, void *buf, u32 len)
{
	u8 *p = ds_ptr(d, addr, len);

	if (p)
		memcpy(buf, p, len);
	else
		memset(buf, 0, len);
}

static void ds_write(struct gfx9_disp *d, u64 addr, const void *buf, u32 len)
{
	u8 *p = ds_ptr(d, addr, len);

	if (p)
		memcpy(p, buf, len);
}

static bool ds_regs_ok(const struct gfx9_disp *d, const struct gfx9_insn *in)
{
	u32 b = in->dw[1];

	if (in->dw[0] & BIT(16))	/* GDS */
		return false;
	return DS_ADDR(b) < d->nvgpr && DS_DATA0(b) < d->nvgpr &&
	       DS_DATA1(b) < d->nvgpr && DS_VDST(b) < d->nvgpr;
}

static u64 ds_lane(const struct gfx9_wave *w, u32 reg, unsigned int l,
		   bool wide)
{
	u64 v = gfx9_vreg(w, reg)[l];

	if (wide)
		v |= (u64)gfx9_vreg(w, reg + 1)[l] << 32;
	return v;
}

/* Loads and stores of 1 to 16 bytes, and the read2/write2 pairs. */
static int ds_rw(struct gfx9_disp *d, struct gfx9_wave *w,
		 const struct gfx9_insn *in)
{
	u32 a = in->dw[0], b = in->dw[1], op = (a >> 17) & 0xff;
	u32 off = DS_OFFSET0(a) | DS_OFFSET1(a) << 8;
	u64 exec = gfx9_exec(w);
	bool write, two = false;
	u32 len, scale = 0, val[4], i, n;
	unsigned int l;

	switch (op) {
	case 0x0d:
		write = true;
		len = 4;
		break;
	case 0x0e:
		write = true;
		len = 4;
		two = true;
		scale = 4;
		break;
	case 0x0f:
		write = true;
		len = 4;
		two = true;
		scale = 256;
		break;
	case 0x1e:
		write = true;
		len = 1;
		break;
	case 0x1f:
		write = true;
		len = 2;
		break;
	case 0x4d:
		write = true;
		len = 8;
		break;
	case 0x4e:
		write = true;
		len = 8;
		two = true;
		scale = 8;
		break;
	case 0x4f:
		write = true;
		len = 8;
		two = true;
		scale = 512;
		break;
	case 0xde:
		write = true;
		len = 12;
		break;
	case 0xdf:
		write = true;
		len = 16;
		break;
	case 0x36:
		write = false;
		len = 4;
		break;
	case 0x37:
		write = false;
		len = 4;
		two = true;
		scale = 4;
		break;
	case 0x38:
		write = false;
		len = 4;
		two = true;
		scale = 256;
		break;
	case 0x39:
	case 0x3a:
		write = false;
		len = 1;
		break;
	case 0x3b:
	case 0x3c:
		write = false;
		len = 2;
		break;
	case 0x76:
		write = false;
		len = 8;
		break;
	case 0x77:
		write = false;
		len = 8;
		two = true;
		scale = 8;
		break;
	case 0x78:
		write = false;
		len = 8;
		two = true;
		scale = 512;
		break;
	case 0xfe:
		write = false;
		len = 12;
		break;
	default:
		write = false;
		len = 16;
		break;	/* 0xff */
	}
	if (!ds_regs_ok(d, in))
		return gfx9_illegal(d, w, in, "DS registers");
	n = DIV_ROUND_UP(len, 4);
	for (l = 0; l < GFX9_LANES; l++) {
		u64 addr;

		if (!(exec & BIT_ULL(l)))
			continue;
		addr = gfx9_vreg(w, DS_ADDR(b))[l];
		if (!two) {
			addr += off;
			if (write) {
				for (i = 0; i < n; i++)
					val[i] = gfx9_vreg(w, DS_DATA0(b) + i)[l];
				ds_write(d, addr, val, len);
			} else {
				val[0] = 0;
				ds_read(d, addr, val, len);
				switch (op) {
				case 0x39:
					val[0] = (s8)val[0];
					break;
				case 0x3a:
					val[0] = (u8)val[0];
					break;
				case 0x3b:
					val[0] = (s16)val[0];
					break;
				case 0x3c:
					val[0] = (u16)val[0];
					break;
				}
				/* Only lane l reads lane l: addr may be vdst. */
				for (i = 0; i < n; i++)
					gfx9_vreg(w, DS_VDST(b) + i)[l] = val[i];
			}
			continue;
		}
		/* read2 / write2: two elements at offset0 and offset1. */
		if (write) {
			u32 words = len / 4;

			for (i = 0; i < words; i++) {
				val[i] = gfx9_vreg(w, DS_DATA0(b) + i)[l];
				val[words + i] =
					gfx9_vreg(w, DS_DATA1(b) + i)[l];
			}
			ds_write(d, addr + DS_OFFSET0(a) * scale, val, len);
			ds_write(d, addr + DS_OFFSET1(a) * scale,
				 val + words, len);
		} else {
			ds_read(d, addr + DS_OFFSET0(a) * scale, val, len);
			ds_read(d, addr + DS_OFFSET1(a) * scale,
				(u8 *)val + len, len);
			for (i = 0; i < 2 * len / 4; i++)
				gfx9_vreg(w, DS_VDST(b) + i)[l] = val[i];
		}
	}
	return 0;
}

static const u8 ds_atomic_map[16] = {
	GFX9_ATOMIC_ADD, GFX9_ATOMIC_SUB, GFX9_ATOMIC_RSUB, GFX9_ATOMIC_INC,
	GFX9_ATOMIC_DEC, GFX9_ATOMIC_SMIN, GFX9_ATOMIC_SMAX,
	GFX9_ATOMIC_UMIN, GFX9_ATOMIC_UMAX, GFX9_ATOMIC_AND, GFX9_ATOMIC_OR,
	GFX9_ATOMIC_XOR,
};

/*
 * The atomics: op & 0x1f picks the operation (0x00-0x0b, 0x0d wrxchg,
 * 0x10 cmpst), 0x20 returns the old value, 0x40 makes it 64 bits.
 */
static int ds_atomic(struct gfx9_disp *d, struct gfx9_wave *w,
		     const struct gfx9_insn *in)
{
	u32 a = in->dw[0], b = in->dw[1], op = (a >> 17) & 0xff;
	u32 off = DS_OFFSET0(a) | DS_OFFSET1(a) << 8, base = op & 0x1f;
	bool rtn = op & 0x20, wide = op & 0x40;
	u32 size = wide ? 8 : 4;
	u64 exec = gfx9_exec(w), src, cmp = 0;
	unsigned int kind, l;
	u8 *p;

	if (!ds_regs_ok(d, in))
		return gfx9_illegal(d, w, in, "DS registers");
	if (base == 0x0d)
		kind = GFX9_ATOMIC_SWAP;
	else if (base == 0x10)
		kind = GFX9_ATOMIC_CMPSWAP;
	else
		kind = ds_atomic_map[base];
	for (l = 0; l < GFX9_LANES; l++) {
		u64 addr;

		if (!(exec & BIT_ULL(l)))
			continue;
		addr = (u64)gfx9_vreg(w, DS_ADDR(b))[l] + off;
		if (addr & (size - 1))
			return gfx9_illegal(d, w, in, "misaligned LDS atomic");
		/* ds_cmpst: data0 is the compare value, data1 the new one. */
		if (kind == GFX9_ATOMIC_CMPSWAP) {
			cmp = ds_lane(w, DS_DATA0(b), l, wide);
			src = ds_lane(w, DS_DATA1(b), l, wide);
		} else {
			src = ds_lane(w, DS_DATA0(b), l, wide);
		}
		p = ds_ptr(d, addr, size);
		d->tmp[l] = p ? gfx9_atomic(p, kind, wide, src, cmp) : 0;
	}
	if (!rtn)
		return 0;
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		gfx9_vreg(w, DS_VDST(b))[l] = d->tmp[l];
		if (wide)
			gfx9_vreg(w, DS_VDST(b) + 1)[l] = d->tmp[l] >> 32;
	}
	return 0;
}

/* Cross-lane: ds_swizzle_b32, ds_permute_b32, ds_bpermute_b32. */
static int ds_lanes(struct gfx9_disp *d, struct gfx9_wave *w,
		    const struct gfx9_insn *in)
{
	u32 a = in->dw[0], b = in->dw[1], op = (a >> 17) & 0xff;
	u32 off = DS_OFFSET0(a) | DS_OFFSET1(a) << 8;
	const u32 *addr = gfx9_vreg(w, DS_ADDR(b));
	const u32 *data = gfx9_vreg(w, DS_DATA0(b));
	u64 exec = gfx9_exec(w);
	unsigned int l, src;

	if (!ds_regs_ok(d, in))
		return gfx9_illegal(d, w, in, "DS registers");
	for (l = 0; l < GFX9_LANES; l++)
		d->tmp[l] = 0;
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		if (op == 0x3e) {	/* permute: lane l sends to a lane */
			d->tmp[((addr[l] + off) >> 2) & 63] = data[l];
			continue;
		}
		if (op == 0x3f) {	/* bpermute: lane l fetches */
			src = ((addr[l] + off) >> 2) & 63;
		} else if (off & 0x8000) {	/* swizzle, quad permute */
			src = (l & ~3u) | ((off >> ((l & 3) * 2)) & 3);
		} else {		/* swizzle, bit masks in groups of 32 */
			src = (((l & 31) & (off & 31)) | ((off >> 5) & 31)) ^
			      ((off >> 10) & 31);
			src |= l & 32;
		}
		d->tmp[l] = (exec & BIT_ULL(src)) ? data[src] : 0;
	}
	for (l = 0; l < GFX9_LANES; l++)
		if (exec & BIT_ULL(l))
			gfx9_vreg(w, DS_VDST(b))[l] = d->tmp[l];
	return 0;
}

static int ds_nop(struct gfx9_disp *d, struct gfx9_wave *w,
		  const struct gfx9_insn *in)
{
	return 0;
}

#define DA(n)	{ n, ds_atomic }
#define DRW(n)	{ n, ds_rw }
const struct gfx9_op gfx9_ds_ops[256] = {
	[0x00] = DA("ds_add_u32"), [0x01] = DA("ds_sub_u32"),
	[0x02] = DA("ds_rsub_u32"), [0x03] = DA("ds_inc_u32"),
	[0x04] = DA("ds_dec_u32"), [0x05] = DA("ds_min_i32"),
	[0x06] = DA("ds_max_i32"), [0x07] = DA("ds_min_u32"),
	[0x08] = DA("ds_max_u32"), [0x09] = DA("ds_and_b32"),
	[0x0a] = DA("ds_or_b32"), [0x0b] = DA("ds_xor_b32"),
	[0x0d] = DRW("ds_write_b32"), [0x0e] = DRW("ds_write2_b32"),
	[0x0f] = DRW("ds_write2st64_b32"), [0x10] = DA("ds_cmpst_b32"),
	[0x14] = { "ds_nop", ds_nop },
	[0x1e] = DRW("ds_write_b8"), [0x1f] = DRW("ds_write_b16"),
	[0x20] = DA("ds_add_rtn_u32"), [0x21] = DA("ds_sub_rtn_u32"),
	[0x22] = DA("ds_rsub_rtn_u32"), [0x23] = DA("ds_inc_rtn_u32"),
	[0x24] = DA("ds_dec_rtn_u32"), [0x25] = DA("ds_min_rtn_i32"),
	[0x26] = DA("ds_max_rtn_i32"), [0x27] = DA("ds_min_rtn_u32"),
	[0x28] = DA("ds_max_rtn_u32"), [0x29] = DA("ds_and_rtn_b32"),
	[0x2a] = DA("ds_or_rtn_b32"), [0x2b] = DA("ds_xor_rtn_b32"),
	[0x2d] = DA("ds_wrxchg_rtn_b32"), [0x30] = DA("ds_cmpst_rtn_b32"),
	[0x36] = DRW("ds_read_b32"), [0x37] = DRW("ds_read2_b32"),
	[0x38] = DRW("ds_read2st64_b32"), [0x39] = DRW("ds_read_i8"),
	[0x3a] = DRW("ds_read_u8"), [0x3b] = DRW("ds_read_i16"),
	[0x3c] = DRW("ds_read_u16"),
	[0x3d] = { "ds_swizzle_b32", ds_lanes },
	[0x3e] = { "ds_permute_b32", ds_lanes },
	[0x3f] = { "ds_bpermute_b32", ds_lanes },
	[0x40] = DA("ds_add_u64"), [0x41] = DA("ds_sub_u64"),
	[0x42] = DA("ds_rsub_u64"), [0x43] = DA("ds_inc_u64"),
	[0x44] = DA("ds_dec_u64"), [0x45] = DA("ds_min_i64"),
	[0x46] = DA("ds_max_i64"), [0x47] = DA("ds_min_u64"),
	[0x48] = DA("ds_max_u64"), [0x49] = DA("ds_and_b64"),
	[0x4a] = DA("ds_or_b64"), [0x4b] = DA("ds_xor_b64"),
	[0x4d] = DRW("ds_write_b64"), [0x4e] = DRW("ds_write2_b64"),
	[0x4f] = DRW("ds_write2st64_b64"), [0x50] = DA("ds_cmpst_b64"),
	[0x60] = DA("ds_add_rtn_u64"), [0x61] = DA("ds_sub_rtn_u64"),
	[0x62] = DA("ds_rsub_rtn_u64"), [0x63] = DA("ds_inc_rtn_u64"),
	[0x64] = DA("ds_dec_rtn_u64"), [0x65] = DA("ds_min_rtn_i64"),
	[0x66] = DA("ds_max_rtn_i64"), [0x67] = DA("ds_min_rtn_u64"),
	[0x68] = DA("ds_max_rtn_u64"), [0x69] = DA("ds_and_rtn_b64"),
	[0x6a] = DA("ds_or_rtn_b64"), [0x6b] = DA("ds_xor_rtn_b64"),
	[0x6d] = DA("ds_wrxchg_rtn_b64"), [0x70] = DA("ds_cmpst_rtn_b64"),
	[0x76] = DRW("ds_read_b64"), [0x77] = DRW("ds_read2_b64"),
	[0x78] = DRW("ds_read2st64_b64"),
	[0xde] = DRW("ds_write_b96"), [0xdf] = DRW("ds_write_b128"),
	[0xfe] = DRW("ds_read_b96"), [0xff] = DRW("ds_read_b128"),
};
