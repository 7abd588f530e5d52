// SPDX-License-Identifier: GPL-2.0
/*
 * The vector ALU, integer and bit operations: VOP1, VOP2, VOPC and VOP3
 * (a and b) share one opcode table in VOP3 numbering (VOPC 0x000-0x0ff,
 * VOP2 0x100 + op, VOP1 0x140 + op, VOP3-only 0x1c0 and up); the decoder
 * turns every encoding into a struct gfx9_vop. Float operations live in
 * vop_fp.c and run inside kernel_fpu_begin()/kernel_fpu_end().
 *
 * VOP2:  [31] 0, op [30:25], vdst [24:17], vsrc1 [16:9], src0 [8:0]
 * VOP1:  [31:25] 0x3f, vdst [24:17], op [16:9], src0 [8:0]
 * VOPC:  [31:25] 0x3e, op [24:17], vsrc1 [16:9], src0 [8:0]
 * VOP3a: [31:26] 0x34, op [25:16], clamp [15], op_sel [14:11], abs [10:8],
 *        vdst [7:0]; neg [63:61], omod [60:59], src2 [58:50],
 *        src1 [49:41], src0 [40:32]
 * VOP3b: as VOP3a with sdst [14:8] in place of op_sel and abs
 *
 * Lanes outside EXEC keep their VGPRs; their bits of a VOPC or carry-out
 * mask are 0.
 */
#include <asm/fpu/api.h>
#include <linux/bitops.h>
#include <linux/bitrev.h>
#include <linux/errno.h>
#include <linux/kernel.h>

#include "gfx9.h"

static s32 sext24(u32 x)
{
	return sign_extend32(x, 23);
}

static u32 vop_bfe(u32 x, u32 off, u32 width, bool sign)
{
	off &= 31;
	width &= 31;
	if (!width)
		return 0;
	x >>= off;
	x &= (1u << width) - 1;
	if (sign && (x & (1u << (width - 1))))
		x |= ~0u << width;
	return x;
}

static u32 vop_perm_byte(u64 in, u32 sel)
{
	sel &= 0xff;
	if (sel < 8)
		return (in >> (8 * sel)) & 0xff;
	switch (sel) {
	case 8:
		return (in & BIT_ULL(15)) ? 0xff : 0;
	case 9:
		return (in & BIT_ULL(31)) ? 0xff : 0;
	case 10:
		return (in & BIT_ULL(47)) ? 0xff : 0;
	case 11:
		return (in & BIT_ULL(63)) ? 0xff : 0;
	case 12:
		return 0;
	default:
		return 0xff;
	}
}

static u32 vop_med3_u(u32 a, u32 b, u32 c)
{
	return max(min(a, b), min(max(a, b), c));
}

static s32 vop_med3_i(s32 a, s32 b, s32 c)
{
	return max_t(s32, min_t(s32, a, b), min_t(s32, max_t(s32, a, b), c));
}

/* One lane of a 32-bit integer operation. */
static u32 vop_int_lane(unsigned int op, u32 x, u32 y, u32 z, unsigned int l)
{
	u32 m;

	switch (op) {
	case 0x106:
		return (s64)sext24(x) * sext24(y);
	case 0x107:
		return (u64)((s64)sext24(x) * sext24(y)) >> 32;
	case 0x108:
		return (u64)(x & 0xffffff) * (y & 0xffffff);
	case 0x109:
		return ((u64)(x & 0xffffff) * (y & 0xffffff)) >> 32;
	case 0x10c:
		return min((s32)x, (s32)y);
	case 0x10d:
		return max((s32)x, (s32)y);
	case 0x10e:
		return min(x, y);
	case 0x10f:
		return max(x, y);
	case 0x110:
		return y >> (x & 31);	/* lshrrev */
	case 0x111:
		return (s32)y >> (x & 31);	/* ashrrev */
	case 0x112:
		return y << (x & 31);	/* lshlrev */
	case 0x113:
		return x & y;
	case 0x114:
		return x | y;
	case 0x115:
		return x ^ y;
	case 0x134:
		return x + y;
	case 0x135:
		return x - y;
	case 0x136:
		return y - x;
	case 0x13d:
		return ~(x ^ y);
	case 0x141:
		return x;	/* v_mov_b32 */
	case 0x16b:
		return ~x;
	case 0x16c:
		return bitrev32(x);
	case 0x16d:
		return x ? 31 - __fls(x) : ~0u;	/* ffbh_u32 */
	case 0x16e:
		return x ? __ffs(x) : ~0u;	/* ffbl_b32 */
	case 0x16f:					/* ffbh_i32 */
		if (x == 0 || x == ~0u)
			return ~0u;
		return 31 - __fls((s32)x < 0 ? ~x : x);
	case 0x1c2:
		return (s32)((s64)sext24(x) * sext24(y)) + z;
	case 0x1c3:
		return (x & 0xffffff) * (y & 0xffffff) + z;
	case 0x1c8:
		return vop_bfe(x, y, z, false);
	case 0x1c9:
		return vop_bfe(x, y, z, true);
	case 0x1ca:
		return (x & y) | (~x & z);	/* bfi */
	case 0x1ce:
		return (((u64)x << 32) | y) >> (z & 31);
	case 0x1cf:
		return (((u64)x << 32) | y) >> (8 * (z & 3));
	case 0x1d1:
		return min3((s32)x, (s32)y, (s32)z);
	case 0x1d2:
		return min3(x, y, z);
	case 0x1d4:
		return max3((s32)x, (s32)y, (s32)z);
	case 0x1d5:
		return max3(x, y, z);
	case 0x1d7:
		return vop_med3_i(x, y, z);
	case 0x1d8:
		return vop_med3_u(x, y, z);
	case 0x1dc:
		return (x > y ? x - y : y - x) + z;	/* sad_u32 */
	case 0x1ed:					/* perm_b32 */
		return vop_perm_byte((u64)x << 32 | y, z) |
		       vop_perm_byte((u64)x << 32 | y, z >> 8) << 8 |
		       vop_perm_byte((u64)x << 32 | y, z >> 16) << 16 |
		       vop_perm_byte((u64)x << 32 | y, z >> 24) << 24;
	case 0x1f3:
		return (x ^ y) + z;	/* xad_u32 */
	case 0x1fd:
		return (x << (y & 31)) + z;	/* lshl_add_u32 */
	case 0x1fe:
		return (x + y) << (z & 31);	/* add_lshl_u32 */
	case 0x1ff:
		return x + y + z;	/* add3_u32 */
	case 0x200:
		return (x << (y & 31)) | z;	/* lshl_or_b32 */
	case 0x201:
		return (x & y) | z;	/* and_or_b32 */
	case 0x202:
		return x | y | z;	/* or3_b32 */
	case 0x285:
		return x * y;	/* mul_lo_u32 */
	case 0x286:
		return ((u64)x * y) >> 32;	/* mul_hi_u32 */
	case 0x287:
		return (u64)((s64)(s32)x * (s32)y) >> 32;
	case 0x28b:
		return hweight32(x) + y;	/* bcnt_u32_b32 */
	case 0x28c:					/* mbcnt_lo */
		m = l < 32 ? BIT(l) - 1 : ~0u;
		return hweight32(x & m) + y;
	case 0x28d:					/* mbcnt_hi */
		m = l < 32 ? 0 : BIT(l - 32) - 1;
		return hweight32(x & m) + y;
	case 0x293:
		return (BIT_ULL(x & 31) - 1) << (y & 31);	/* bfm */
	case 0x29c:
		return x + y;	/* v_add_i32 */
	default:
		return x - y;	/* 0x29d v_sub_i32 */
	}
}

/*
 * VOP3 clamp on the integer add and subtract: the result saturates at the
 * limits of its type instead of wrapping (unsigned for the _u32 forms,
 * signed for v_add_i32 and v_sub_i32).
 */
static u32 vop_int_clamp(unsigned int op, u32 x, u32 y)
{
	s64 r;

	switch (op) {
	case 0x134:				/* v_add_u32 */
		return (u64)x + y > U32_MAX ? U32_MAX : x + y;
	case 0x135:				/* v_sub_u32 */
		return x < y ? 0 : x - y;
	case 0x136:				/* v_subrev_u32 */
		return y < x ? 0 : y - x;
	case 0x29c:				/* v_add_i32 */
		r = (s64)(s32)x + (s32)y;
		break;
	default:				/* 0x29d v_sub_i32 */
		r = (s64)(s32)x - (s32)y;
		break;
	}
	return (u32)clamp_t(s64, r, S32_MIN, S32_MAX);
}

/*
 * One lane of the operations vop_int_fast() has: the same results as
 * vop_int_lane(). Always inlined with a constant @op, so the switch folds
 * away and each operation gets loops of its own.
 */
static __always_inline u32 vop_fast_op(unsigned int op, u32 x, u32 y, u32 z)
{
	switch (op) {
	case 0x106:	/* v_mul_i32_i24 */
		return (s64)sext24(x) * sext24(y);
	case 0x108:	/* v_mul_u32_u24 */
		return (x & 0xffffff) * (y & 0xffffff);
	case 0x10c:
		return min((s32)x, (s32)y);
	case 0x10d:
		return max((s32)x, (s32)y);
	case 0x10e:
		return min(x, y);
	case 0x10f:
		return max(x, y);
	case 0x110:	/* v_lshrrev_b32 */
		return y >> (x & 31);
	case 0x111:	/* v_ashrrev_i32 */
		return (s32)y >> (x & 31);
	case 0x112:	/* v_lshlrev_b32 */
		return y << (x & 31);
	case 0x113:
		return x & y;
	case 0x114:
		return x | y;
	case 0x115:
		return x ^ y;
	case 0x134:	/* v_add_u32 */
		return x + y;
	case 0x135:
		return x - y;
	case 0x136:
		return y - x;
	case 0x13d:
		return ~(x ^ y);
	case 0x141:	/* v_mov_b32 */
		return x;
	case 0x16b:
		return ~x;
	case 0x1c3:	/* v_mad_u32_u24 */
		return (x & 0xffffff) * (y & 0xffffff) + z;
	case 0x1c8:
		return vop_bfe(x, y, z, false);
	case 0x1ca:	/* v_bfi_b32 */
		return (x & y) | (~x & z);
	case 0x1ce:	/* v_alignbit_b32 */
		return (((u64)x << 32) | y) >> (z & 31);
	case 0x1f3:
		return (x ^ y) + z;
	case 0x1fd:
		return (x << (y & 31)) + z;
	case 0x1fe:
		return (x + y) << (z & 31);
	case 0x1ff:
		return x + y + z;
	case 0x200:
		return (x << (y & 31)) | z;
	case 0x201:
		return (x & y) | z;
	case 0x202:
		return x | y | z;
	case 0x285:	/* v_mul_lo_u32 */
		return x * y;
	default:	/* 0x286 v_mul_hi_u32 */
		return ((u64)x * y) >> 32;
	}
}

/*
 * The end of the run of set bits of @m that starts at bit @l (set): the
 * first lane above it not in EXEC, or GFX9_LANES.
 */
static unsigned int vop_run_end(u64 m, unsigned int l)
{
	u64 rest = ~m >> l;

	return rest ? l + __ffs64(rest) : GFX9_LANES;
}

/*
 * Two lanes of @op at once: the low halves of @x and @y are lane 2i, the
 * high halves lane 2i + 1 (x86 is little-endian), so that one 64-bit
 * access moves two lanes of a VGPR row (8-byte aligned: the rows of a
 * wave are 256 bytes each in one allocation).
 */
static __always_inline u64 vop_fast_pair(unsigned int op, u64 x, u64 y,
					 u32 z)
{
	return vop_fast_op(op, x, y, z) |
	       (u64)vop_fast_op(op, x >> 32, y >> 32, z) << 32;
}

/*
 * dst = @op(src0, src1, src2) in the lanes of @exec, operand n being the
 * VGPR row @pn or, if that is NULL, the uniform value @kn. With EXEC full
 * and src2 uniform (every two-operand instruction) a loop of its own for
 * each kind of src0 and src1, two lanes an access and four a turn;
 * otherwise a run of consecutive EXEC lanes at a time, lane l of an
 * operand being p[l & mask] (a VGPR row with a mask of 63, a uniform
 * value with 0).
 */
static __always_inline void vop_fast_loop(unsigned int op, u32 *dst,
					  const u32 *p0, u32 k0,
					  const u32 *p1, u32 k1,
					  const u32 *p2, u32 k2, u64 exec)
{
	const u64 *q0 = (const u64 *)p0, *q1 = (const u64 *)p1;
	u64 c0 = k0 | (u64)k0 << 32, c1 = k1 | (u64)k1 << 32;
	unsigned int m0 = p0 ? GFX9_LANES - 1 : 0;
	unsigned int m1 = p1 ? GFX9_LANES - 1 : 0;
	unsigned int m2 = p2 ? GFX9_LANES - 1 : 0;
	u64 *qd = (u64 *)dst;
	unsigned int l, end;
	u64 m;

	if (exec == ~0ULL && !p2) {
		if (p0 && p1) {
			for (l = 0; l < GFX9_LANES / 2; l += 2) {
				qd[l] = vop_fast_pair(op, q0[l], q1[l], k2);
				qd[l + 1] = vop_fast_pair(op, q0[l + 1],
							  q1[l + 1], k2);
			}
			return;
		}
		if (p1) {
			for (l = 0; l < GFX9_LANES / 2; l += 2) {
				qd[l] = vop_fast_pair(op, c0, q1[l], k2);
				qd[l + 1] = vop_fast_pair(op, c0, q1[l + 1],
							  k2);
			}
			return;
		}
		if (p0) {
			for (l = 0; l < GFX9_LANES / 2; l += 2) {
				qd[l] = vop_fast_pair(op, q0[l], c1, k2);
				qd[l + 1] = vop_fast_pair(op, q0[l + 1], c1,
							  k2);
			}
			return;
		}
	}
	if (!p0)
		p0 = &k0;
	if (!p1)
		p1 = &k1;
	if (!p2)
		p2 = &k2;
	for (m = exec; m; m = end < GFX9_LANES ? m & (~0ULL << end) : 0) {
		l = __ffs64(m);
		end = vop_run_end(m, l);
		for (; l < end; l++)
			dst[l] = vop_fast_op(op, p0[l & m0], p1[l & m1],
					     p2[l & m2]);
	}
}

/* The same loop for the generic path's operands (struct gfx9_src). */
static __always_inline void vop_src_loop(unsigned int op, u32 *dst,
					 const struct gfx9_src *s0,
					 const struct gfx9_src *s1,
					 const struct gfx9_src *s2, u64 exec)
{
	vop_fast_loop(op, dst, s0->lo, s0->k, s1->lo, s1->k, s2->lo, s2->k,
		      exec);
}

/*
 * The common 32-bit integer operations (without clamp), the operation
 * chosen once per instruction instead of once per lane. Returns false
 * for the others (vop_int_lane()).
 */
static bool vop_int_fast(unsigned int op, u32 *dst, const struct gfx9_src *s0,
			 const struct gfx9_src *s1, const struct gfx9_src *s2,
			 u64 exec)
{
	switch (op) {
	case 0x106:
		vop_src_loop(0x106, dst, s0, s1, s2, exec);
		break;
	case 0x108:
		vop_src_loop(0x108, dst, s0, s1, s2, exec);
		break;
	case 0x10c:
		vop_src_loop(0x10c, dst, s0, s1, s2, exec);
		break;
	case 0x10d:
		vop_src_loop(0x10d, dst, s0, s1, s2, exec);
		break;
	case 0x10e:
		vop_src_loop(0x10e, dst, s0, s1, s2, exec);
		break;
	case 0x10f:
		vop_src_loop(0x10f, dst, s0, s1, s2, exec);
		break;
	case 0x110:
		vop_src_loop(0x110, dst, s0, s1, s2, exec);
		break;
	case 0x111:
		vop_src_loop(0x111, dst, s0, s1, s2, exec);
		break;
	case 0x112:
		vop_src_loop(0x112, dst, s0, s1, s2, exec);
		break;
	case 0x113:
		vop_src_loop(0x113, dst, s0, s1, s2, exec);
		break;
	case 0x114:
		vop_src_loop(0x114, dst, s0, s1, s2, exec);
		break;
	case 0x115:
		vop_src_loop(0x115, dst, s0, s1, s2, exec);
		break;
	case 0x134:
		vop_src_loop(0x134, dst, s0, s1, s2, exec);
		break;
	case 0x135:
		vop_src_loop(0x135, dst, s0, s1, s2, exec);
		break;
	case 0x136:
		vop_src_loop(0x136, dst, s0, s1, s2, exec);
		break;
	case 0x13d:
		vop_src_loop(0x13d, dst, s0, s1, s2, exec);
		break;
	case 0x141:
		vop_src_loop(0x141, dst, s0, s1, s2, exec);
		break;
	case 0x16b:
		vop_src_loop(0x16b, dst, s0, s1, s2, exec);
		break;
	case 0x1c3:
		vop_src_loop(0x1c3, dst, s0, s1, s2, exec);
		break;
	case 0x1c8:
		vop_src_loop(0x1c8, dst, s0, s1, s2, exec);
		break;
	case 0x1ca:
		vop_src_loop(0x1ca, dst, s0, s1, s2, exec);
		break;
	case 0x1ce:
		vop_src_loop(0x1ce, dst, s0, s1, s2, exec);
		break;
	case 0x1f3:
		vop_src_loop(0x1f3, dst, s0, s1, s2, exec);
		break;
	case 0x1fd:
		vop_src_loop(0x1fd, dst, s0, s1, s2, exec);
		break;
	case 0x1fe:
		vop_src_loop(0x1fe, dst, s0, s1, s2, exec);
		break;
	case 0x1ff:
		vop_src_loop(0x1ff, dst, s0, s1, s2, exec);
		break;
	case 0x200:
		vop_src_loop(0x200, dst, s0, s1, s2, exec);
		break;
	case 0x201:
		vop_src_loop(0x201, dst, s0, s1, s2, exec);
		break;
	case 0x202:
		vop_src_loop(0x202, dst, s0, s1, s2, exec);
		break;
	case 0x285:
		vop_src_loop(0x285, dst, s0, s1, s2, exec);
		break;
	case 0x286:
		vop_src_loop(0x286, dst, s0, s1, s2, exec);
		break;
	default:
		return false;
	}
	return true;
}

static int vop_int(struct gfx9_disp *d, struct gfx9_wave *w,
		   const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	struct gfx9_src s0, s1, s2 = {};
	u32 *dst = gfx9_vreg(w, v->vdst);
	u64 exec = gfx9_exec(w);
	unsigned int l;

	gfx9_vsrc(d, w, in, v->src[0], GFX9_B32, &s0);
	gfx9_vsrc(d, w, in, v->src[1], GFX9_B32, &s1);
	if (v->e64)
		gfx9_vsrc(d, w, in, v->src[2], GFX9_B32, &s2);
	if (!v->clamp && vop_int_fast(in->op, dst, &s0, &s1, &s2, exec))
		return 0;
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		if (v->clamp)	/* only ops flagged GFX9_VOP_CLAMP_INT */
			dst[l] = vop_int_clamp(in->op, gfx9_lane32(&s0, l),
					       gfx9_lane32(&s1, l));
		else
			dst[l] = vop_int_lane(in->op, gfx9_lane32(&s0, l),
					      gfx9_lane32(&s1, l),
					      gfx9_lane32(&s2, l), l);
	}
	return 0;
}

/* v_cndmask_b32: src1 where the mask bit is set, else src0. */
static int vop_cndmask(struct gfx9_disp *d, struct gfx9_wave *w,
		       const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	struct gfx9_src s0, s1;
	u32 *dst = gfx9_vreg(w, v->vdst), x, y;
	u64 exec = gfx9_exec(w), mask;
	unsigned int l;

	if (v->src[2] >= GFX9_SRC_VGPR0 || v->clamp || v->omod)
		return gfx9_illegal(d, w, in, "v_cndmask_b32 operands");
	mask = gfx9_ssrc64(d, w, in, v->src[2], GFX9_B64);
	gfx9_vsrc(d, w, in, v->src[0], GFX9_B32, &s0);
	gfx9_vsrc(d, w, in, v->src[1], GFX9_B32, &s1);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		x = gfx9_lane32(&s0, l);
		y = gfx9_lane32(&s1, l);
		/* VOP3 abs and neg act on the sign bit of each source. */
		if (v->abs & 1)
			x &= ~BIT(31);
		if (v->neg & 1)
			x ^= BIT(31);
		if (v->abs & 2)
			y &= ~BIT(31);
		if (v->neg & 2)
			y ^= BIT(31);
		dst[l] = (mask & BIT_ULL(l)) ? y : x;
	}
	return 0;
}

/* The carry ops: v_add/sub/subrev_co_u32, v_addc/subb/subbrev_co_u32. */
static int vop_carry(struct gfx9_disp *d, struct gfx9_wave *w,
		     const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	struct gfx9_src s0, s1;
	u32 *dst = gfx9_vreg(w, v->vdst);
	u64 exec = gfx9_exec(w), cin = 0, cout = 0, t;
	bool with_carry = in->op >= 0x11c;
	unsigned int l;
	u32 x, y, c;

	if (with_carry) {
		if (v->src[2] >= GFX9_SRC_VGPR0)
			return gfx9_illegal(d, w, in, "carry-in operand");
		cin = gfx9_ssrc64(d, w, in, v->src[2], GFX9_B64);
	}
	gfx9_vsrc(d, w, in, v->src[0], GFX9_B32, &s0);
	gfx9_vsrc(d, w, in, v->src[1], GFX9_B32, &s1);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		x = gfx9_lane32(&s0, l);
		y = gfx9_lane32(&s1, l);
		c = !!(cin & BIT_ULL(l));
		switch (in->op) {
		case 0x119:
		case 0x11c: /* add */
			t = (u64)x + y + c;
			break;
		case 0x11a:
		case 0x11d: /* sub: x - y */
			t = (u64)x - y - c;
			break;
		default:			/* subrev: y - x */
			t = (u64)y - x - c;
			break;
		}
		dst[l] = t;
		if (t >> 32) {
			cout |= BIT_ULL(l);
			/* clamp: saturate at U32_MAX (add) or 0 (sub) */
			if (v->clamp)
				dst[l] = (in->op == 0x119 || in->op == 0x11c) ?
					 U32_MAX : 0;
		}
	}
	gfx9_sdst64(w, v->sdst, cout);
	return 0;
}

/* v_mad_u64_u32 and v_mad_i64_i32: src0 * src1 + src2 (64 bits). */
static int vop_mad64(struct gfx9_disp *d, struct gfx9_wave *w,
		     const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	struct gfx9_src s0, s1, s2;
	u32 *lo = gfx9_vreg(w, v->vdst), *hi = gfx9_vreg(w, v->vdst + 1);
	bool sign = in->op == 0x1e9;
	u64 exec = gfx9_exec(w), cout = 0, acc, r;
	unsigned int l;
	u32 x, y;

	gfx9_vsrc(d, w, in, v->src[0], GFX9_B32, &s0);
	gfx9_vsrc(d, w, in, v->src[1], GFX9_B32, &s1);
	gfx9_vsrc(d, w, in, v->src[2], GFX9_B64, &s2);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		x = gfx9_lane32(&s0, l);
		y = gfx9_lane32(&s1, l);
		acc = gfx9_lane64(&s2, l);
		if (sign) {
			s64 p = (s64)(s32)x * (s32)y;

			r = (u64)p + acc;
			/* signed overflow of the addition */
			if (((p ^ (s64)r) & ((s64)acc ^ (s64)r)) < 0)
				cout |= BIT_ULL(l);
		} else {
			u64 p = (u64)x * y;

			r = p + acc;
			if (r < p)
				cout |= BIT_ULL(l);
		}
		lo[l] = r;
		hi[l] = r >> 32;
	}
	gfx9_sdst64(w, v->sdst, cout);
	return 0;
}

/* v_lshlrev_b64, v_lshrrev_b64, v_ashrrev_i64: shift src1 by src0. */
static int vop_shift64(struct gfx9_disp *d, struct gfx9_wave *w,
		       const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	struct gfx9_src s0, s1;
	u32 *lo = gfx9_vreg(w, v->vdst), *hi = gfx9_vreg(w, v->vdst + 1);
	u64 exec = gfx9_exec(w), x, r;
	unsigned int l, sh;

	gfx9_vsrc(d, w, in, v->src[0], GFX9_B32, &s0);
	gfx9_vsrc(d, w, in, v->src[1], GFX9_B64, &s1);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		sh = gfx9_lane32(&s0, l) & 63;
		x = gfx9_lane64(&s1, l);
		if (in->op == 0x28f)
			r = x << sh;
		else if (in->op == 0x290)
			r = x >> sh;
		else
			r = (s64)x >> sh;
		lo[l] = r;
		hi[l] = r >> 32;
	}
	return 0;
}

/* v_readfirstlane_b32, v_readlane_b32, v_writelane_b32. */
static int vop_lane(struct gfx9_disp *d, struct gfx9_wave *w,
		    const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	u64 exec = gfx9_exec(w);
	unsigned int lane;
	struct gfx9_src s0;
	u32 x;

	if (in->op == 0x28a) {	/* writelane: scalar src0 into one lane */
		if (v->src[0] >= GFX9_SRC_VGPR0 ||
		    v->src[1] >= GFX9_SRC_VGPR0)
			return gfx9_illegal(d, w, in, "v_writelane operands");
		x = gfx9_ssrc32(d, w, in, v->src[0], GFX9_B32);
		lane = gfx9_ssrc32(d, w, in, v->src[1], GFX9_B32) & 63;
		gfx9_vreg(w, v->vdst)[lane] = x;
		return 0;
	}
	if (in->op == 0x289) {	/* readlane */
		if (v->src[0] < GFX9_SRC_VGPR0 || v->src[1] >= GFX9_SRC_VGPR0)
			return gfx9_illegal(d, w, in, "v_readlane operands");
		lane = gfx9_ssrc32(d, w, in, v->src[1], GFX9_B32) & 63;
	} else {		/* readfirstlane */
		lane = exec ? __ffs64(exec) : 0;
	}
	gfx9_vsrc(d, w, in, v->src[0], GFX9_B32, &s0);
	gfx9_sdst32(w, v->vdst, gfx9_lane32(&s0, lane));
	return 0;
}

static int vop_nop(struct gfx9_disp *d, struct gfx9_wave *w,
		   const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	return 0;
}

/* Write a VOPC result: sdst (VCC for e32) and, for v_cmpx, EXEC too. */
static void vopc_write(struct gfx9_wave *w, const struct gfx9_vop *v,
		       u64 res, bool cmpx)
{
	gfx9_sdst64(w, v->sdst, res);
	if (cmpx)
		gfx9_set_sreg64(w, GFX9_EXEC_LO, res);
}

static __always_inline bool vopc_int(unsigned int cond, bool sign, u64 x,
				     u64 y, bool wide)
{
	s64 sx = wide ? (s64)x : (s32)x, sy = wide ? (s64)y : (s32)y;

	if (!wide) {
		x = (u32)x;
		y = (u32)y;
	}
	switch (cond) {
	case 0:
		return false;
	case 1:
		return sign ? sx < sy : x < y;
	case 2:
		return x == y;
	case 3:
		return sign ? sx <= sy : x <= y;
	case 4:
		return sign ? sx > sy : x > y;
	case 5:
		return x != y;
	case 6:
		return sign ? sx >= sy : x >= y;
	default:
		return true;
	}
}

/* v_cmp(x)_{i,u}{32,64}: 0xc0-0xff. */
static int vop_cmp_int(struct gfx9_disp *d, struct gfx9_wave *w,
		       const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	unsigned int op = in->op, l;
	bool wide = op >= 0xe0, cmpx = op & 0x10, sign = !(op & 8);
	enum gfx9_kind kind = wide ? GFX9_B64 : GFX9_B32;
	struct gfx9_src s0, s1;
	u64 exec = gfx9_exec(w), res = 0;

	gfx9_vsrc(d, w, in, v->src[0], kind, &s0);
	gfx9_vsrc(d, w, in, v->src[1], kind, &s1);
	for (l = 0; l < GFX9_LANES; l++) {
		u64 x, y;

		if (!(exec & BIT_ULL(l)))
			continue;
		x = wide ? gfx9_lane64(&s0, l) : gfx9_lane32(&s0, l);
		y = wide ? gfx9_lane64(&s1, l) : gfx9_lane32(&s1, l);
		if (vopc_int(op & 7, sign, x, y, wide))
			res |= BIT_ULL(l);
	}
	vopc_write(w, v, res, cmpx);
	return 0;
}

/**
 * gfx9_fclass - the class of a float, as the bit v_cmp_class tests
 * @bits: the value
 * @mbits: fraction bits of its format (10, 23 or 52)
 * @ebits: exponent bits (5, 8 or 11)
 *
 * Return: 0 sNaN, 1 qNaN, 2 -Inf, 3 -normal, 4 -subnormal, 5 -0, 6 +0,
 * 7 +subnormal, 8 +normal, 9 +Inf.
 */
unsigned int gfx9_fclass(u64 bits, unsigned int mbits, unsigned int ebits)
{
	u64 frac = bits & (BIT_ULL(mbits) - 1);
	u64 exp = (bits >> mbits) & (BIT_ULL(ebits) - 1);
	bool neg = bits >> (mbits + ebits);

	if (exp == BIT_ULL(ebits) - 1) {
		if (frac)
			return (frac >> (mbits - 1)) ? 1 : 0;
		return neg ? 2 : 9;
	}
	if (exp)
		return neg ? 3 : 8;
	if (frac)
		return neg ? 4 : 7;
	return neg ? 5 : 6;
}

/* v_cmp(x)_class_f32 / _f64: 0x10-0x13. */
static int vop_cmp_class(struct gfx9_disp *d, struct gfx9_wave *w,
			 const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	bool wide = in->op >= 0x12, cmpx = in->op & 1;
	struct gfx9_src s0, s1;
	u64 exec = gfx9_exec(w), res = 0, x;
	unsigned int l;

	gfx9_vsrc(d, w, in, v->src[0], wide ? GFX9_F64 : GFX9_B32, &s0);
	gfx9_vsrc(d, w, in, v->src[1], GFX9_B32, &s1);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		x = wide ? gfx9_lane64(&s0, l) : gfx9_lane32(&s0, l);
		if (v->abs & 1)
			x &= wide ? ~BIT_ULL(63) : ~BIT(31);
		if (v->neg & 1)
			x ^= wide ? BIT_ULL(63) : BIT(31);
		if (gfx9_lane32(&s1, l) &
		    BIT(gfx9_fclass(x, wide ? 52 : 23, wide ? 11 : 8)))
			res |= BIT_ULL(l);
	}
	vopc_write(w, v, res, cmpx);
	return 0;
}

/**
 * gfx9_fcmp - the v_cmp condition of two floats of any width
 * @cond: the condition, the low 4 bits of the opcode (f, lt, eq, le, gt,
 *        lg, ge, o, u, nge, nlg, ngt, nle, neq, nlt, tru)
 * @lt: a < b
 * @eq: a == b (-0 equals +0)
 * @gt: a > b (none of the three: unordered, a NaN operand)
 *
 * Return: whether the condition holds.
 */
bool gfx9_fcmp(unsigned int cond, bool lt, bool eq, bool gt)
{
	bool un = !lt && !eq && !gt;

	switch (cond & 15) {
	case 0:
		return false;
	case 1:
		return lt;
	case 2:
		return eq;
	case 3:
		return lt || eq;
	case 4:
		return gt;
	case 5:
		return lt || gt;
	case 6:
		return gt || eq;
	case 7:
		return !un;
	case 8:
		return un;
	case 9:
		return !(gt || eq);
	case 10:
		return !(lt || gt);
	case 11:
		return !gt;
	case 12:
		return !(lt || eq);
	case 13:
		return !eq;
	case 14:
		return !lt;
	default:
		return true;
	}
}

/* The float operations, between kernel_fpu_begin() and _end(). */
static int vop_float(struct gfx9_disp *d, struct gfx9_wave *w,
		     const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	int ret;

	kernel_fpu_begin();
	ret = gfx9_vop_fp(d, w, in, v, in->op);
	kernel_fpu_end();
	if (ret)
		return gfx9_illegal(d, w, in, "float operand or modifier");
	return 0;
}

/* ---- the decoded forms of the common integer operations ---- */

/*
 * A 32-bit source of a decoded form (gfx9_vop_fast()): its VGPR row, or
 * NULL with the uniform value in *@k: an SGPR-file register, or the
 * constant decoded into @v->k.
 */
static __always_inline const u32 *vop_row(const struct gfx9_wave *w,
					  const struct gfx9_vop *v,
					  unsigned int i, u32 *k)
{
	unsigned int code = v->src[i];

	if (code >= GFX9_SRC_VGPR0)
		return gfx9_vreg(w, code - GFX9_SRC_VGPR0);
	*k = code <= GFX9_EXEC_HI ? w->sreg[code] : v->k[i];
	return NULL;
}

/* vop_int() without clamp, for operation @op (a constant). */
static __always_inline int vop_int_do(struct gfx9_wave *w,
				      const struct gfx9_vop *v,
				      unsigned int op)
{
	u32 k0 = 0, k1 = 0, k2 = 0;
	const u32 *p0 = vop_row(w, v, 0, &k0);
	const u32 *p1 = vop_row(w, v, 1, &k1);
	const u32 *p2 = v->e64 ? vop_row(w, v, 2, &k2) : NULL;

	vop_fast_loop(op, gfx9_vreg(w, v->vdst), p0, k0, p1, k1, p2, k2,
		      gfx9_exec(w));
	return 0;
}

/*
 * The 32-bit integer compares (v_cmp and v_cmpx, e32 and e64) for
 * condition @op: every lane compared, two an access (vop_fast_pair()),
 * then the mask ANDed with EXEC (the rows of lanes outside EXEC are read,
 * not used).
 */
static __always_inline int vopc_int_do(struct gfx9_wave *w,
				       const struct gfx9_vop *v,
				       unsigned int op)
{
	bool sign = !(op & 8);
	u32 k0 = 0, k1 = 0;
	const u64 *q0 = (const u64 *)vop_row(w, v, 0, &k0);
	const u64 *q1 = (const u64 *)vop_row(w, v, 1, &k1);
	u64 c0 = k0 | (u64)k0 << 32, c1 = k1 | (u64)k1 << 32;
	unsigned int m0 = q0 ? GFX9_LANES / 2 - 1 : 0;
	unsigned int m1 = q1 ? GFX9_LANES / 2 - 1 : 0;
	u64 res = 0, x, y;
	unsigned int l;

	if (!q0)
		q0 = &c0;
	if (!q1)
		q1 = &c1;
	for (l = 0; l < GFX9_LANES / 2; l++) {
		x = q0[l & m0];
		y = q1[l & m1];
		res |= (u64)vopc_int(op & 7, sign, (u32)x, (u32)y, false) <<
		       (2 * l);
		res |= (u64)vopc_int(op & 7, sign, x >> 32, y >> 32, false) <<
		       (2 * l + 1);
	}
	vopc_write(w, v, res & gfx9_exec(w), op & 0x10);
	return 0;
}

/*
 * The carry operations without clamp (vop_carry()) for @op: with EXEC
 * full a plain loop, else lane by lane; the carry-in (the _co_ forms with
 * it) was decoded to be an SGPR pair or VCC.
 */
static __always_inline int vop_carry_do(struct gfx9_wave *w,
					const struct gfx9_vop *v,
					unsigned int op)
{
	u64 exec = gfx9_exec(w), cin = 0, cout = 0, t;
	u32 *dst = gfx9_vreg(w, v->vdst);
	u32 k0 = 0, k1 = 0, x, y;
	const u32 *p0 = vop_row(w, v, 0, &k0);
	const u32 *p1 = vop_row(w, v, 1, &k1);
	unsigned int m0 = p0 ? GFX9_LANES - 1 : 0;
	unsigned int m1 = p1 ? GFX9_LANES - 1 : 0;
	unsigned int l;

	if (op >= 0x11c)
		cin = gfx9_sreg64(w, v->src[2]);
	if (!p0)
		p0 = &k0;
	if (!p1)
		p1 = &k1;
	for (l = 0; l < GFX9_LANES; l++) {
		if (exec != ~0ULL && !(exec & BIT_ULL(l)))
			continue;
		x = p0[l & m0];
		y = p1[l & m1];
		if (op == 0x119 || op == 0x11c)		/* add */
			t = (u64)x + y + ((cin >> l) & 1);
		else if (op == 0x11a || op == 0x11d)	/* sub */
			t = (u64)x - y - ((cin >> l) & 1);
		else					/* subrev */
			t = (u64)y - x - ((cin >> l) & 1);
		dst[l] = t;
		cout |= ((t >> 32) & 1) << l;
	}
	gfx9_set_sreg64(w, v->sdst, cout);
	return 0;
}

/* v_cndmask_b32 without abs and neg: the select mask an SGPR pair. */
static int vop_cndmask_fast(struct gfx9_disp *d, struct gfx9_wave *w,
			    const struct gfx9_insn *in,
			    const struct gfx9_vop *v)
{
	u64 exec = gfx9_exec(w), mask = gfx9_sreg64(w, v->src[2]);
	u32 *dst = gfx9_vreg(w, v->vdst);
	u32 k0 = 0, k1 = 0;
	const u32 *p0 = vop_row(w, v, 0, &k0);
	const u32 *p1 = vop_row(w, v, 1, &k1);
	unsigned int m0 = p0 ? GFX9_LANES - 1 : 0;
	unsigned int m1 = p1 ? GFX9_LANES - 1 : 0;
	unsigned int l;

	if (!p0)
		p0 = &k0;
	if (!p1)
		p1 = &k1;
	for (l = 0; l < GFX9_LANES; l++)
		if (exec == ~0ULL || (exec & BIT_ULL(l)))
			dst[l] = (mask & BIT_ULL(l)) ? p1[l & m1] : p0[l & m0];
	return 0;
}

#define VOP_FN(kind, o)							\
static int vop_##kind##_##o(struct gfx9_disp *d, struct gfx9_wave *w,	\
			    const struct gfx9_insn *in,			\
			    const struct gfx9_vop *v)			\
{									\
	return vop_##kind##_do(w, v, o);				\
}

VOP_FN(int, 0x106) VOP_FN(int, 0x108) VOP_FN(int, 0x10c) VOP_FN(int, 0x10d)
VOP_FN(int, 0x10e) VOP_FN(int, 0x10f) VOP_FN(int, 0x110) VOP_FN(int, 0x111)
VOP_FN(int, 0x112) VOP_FN(int, 0x113) VOP_FN(int, 0x114) VOP_FN(int, 0x115)
VOP_FN(int, 0x134) VOP_FN(int, 0x135) VOP_FN(int, 0x136) VOP_FN(int, 0x13d)
VOP_FN(int, 0x141) VOP_FN(int, 0x16b) VOP_FN(int, 0x1c3) VOP_FN(int, 0x1c8)
VOP_FN(int, 0x1ca) VOP_FN(int, 0x1ce) VOP_FN(int, 0x1f3) VOP_FN(int, 0x1fd)
VOP_FN(int, 0x1fe) VOP_FN(int, 0x1ff) VOP_FN(int, 0x200) VOP_FN(int, 0x201)
VOP_FN(int, 0x202) VOP_FN(int, 0x285) VOP_FN(int, 0x286)
VOP_FN(carry, 0x119) VOP_FN(carry, 0x11a) VOP_FN(carry, 0x11b)
VOP_FN(carry, 0x11c) VOP_FN(carry, 0x11d) VOP_FN(carry, 0x11e)

#define VOPC_FN(o)							\
static int vop_cmp_##o(struct gfx9_disp *d, struct gfx9_wave *w,	\
		       const struct gfx9_insn *in,			\
		       const struct gfx9_vop *v)			\
{									\
	return vopc_int_do(w, v, o);					\
}

VOPC_FN(0xc1) VOPC_FN(0xc2) VOPC_FN(0xc3) VOPC_FN(0xc4) VOPC_FN(0xc5)
VOPC_FN(0xc6) VOPC_FN(0xc9) VOPC_FN(0xca) VOPC_FN(0xcb) VOPC_FN(0xcc)
VOPC_FN(0xcd) VOPC_FN(0xce) VOPC_FN(0xd1) VOPC_FN(0xd2) VOPC_FN(0xd3)
VOPC_FN(0xd4) VOPC_FN(0xd5) VOPC_FN(0xd6) VOPC_FN(0xd9) VOPC_FN(0xda)
VOPC_FN(0xdb) VOPC_FN(0xdc) VOPC_FN(0xdd) VOPC_FN(0xde)

static const gfx9_vop_fn vop_fast_fns[0x300] = {
	[0x106] = vop_int_0x106, [0x108] = vop_int_0x108,
	[0x10c] = vop_int_0x10c, [0x10d] = vop_int_0x10d,
	[0x10e] = vop_int_0x10e, [0x10f] = vop_int_0x10f,
	[0x110] = vop_int_0x110, [0x111] = vop_int_0x111,
	[0x112] = vop_int_0x112, [0x113] = vop_int_0x113,
	[0x114] = vop_int_0x114, [0x115] = vop_int_0x115,
	[0x134] = vop_int_0x134, [0x135] = vop_int_0x135,
	[0x136] = vop_int_0x136, [0x13d] = vop_int_0x13d,
	[0x141] = vop_int_0x141, [0x16b] = vop_int_0x16b,
	[0x1c3] = vop_int_0x1c3, [0x1c8] = vop_int_0x1c8,
	[0x1ca] = vop_int_0x1ca, [0x1ce] = vop_int_0x1ce,
	[0x1f3] = vop_int_0x1f3, [0x1fd] = vop_int_0x1fd,
	[0x1fe] = vop_int_0x1fe, [0x1ff] = vop_int_0x1ff,
	[0x200] = vop_int_0x200, [0x201] = vop_int_0x201,
	[0x202] = vop_int_0x202, [0x285] = vop_int_0x285,
	[0x286] = vop_int_0x286, [0x119] = vop_carry_0x119,
	[0x11a] = vop_carry_0x11a, [0x11b] = vop_carry_0x11b,
	[0x11c] = vop_carry_0x11c, [0x11d] = vop_carry_0x11d,
	[0x11e] = vop_carry_0x11e, [0xc1] = vop_cmp_0xc1, [0xc2] = vop_cmp_0xc2,
	[0xc3] = vop_cmp_0xc3, [0xc4] = vop_cmp_0xc4, [0xc5] = vop_cmp_0xc5,
	[0xc6] = vop_cmp_0xc6, [0xc9] = vop_cmp_0xc9, [0xca] = vop_cmp_0xca,
	[0xcb] = vop_cmp_0xcb, [0xcc] = vop_cmp_0xcc, [0xcd] = vop_cmp_0xcd,
	[0xce] = vop_cmp_0xce, [0xd1] = vop_cmp_0xd1, [0xd2] = vop_cmp_0xd2,
	[0xd3] = vop_cmp_0xd3, [0xd4] = vop_cmp_0xd4, [0xd5] = vop_cmp_0xd5,
	[0xd6] = vop_cmp_0xd6, [0xd9] = vop_cmp_0xd9, [0xda] = vop_cmp_0xda,
	[0xdb] = vop_cmp_0xdb, [0xdc] = vop_cmp_0xdc, [0xdd] = vop_cmp_0xdd,
	[0xde] = vop_cmp_0xde, [0x100] = vop_cndmask_fast,
};

/**
 * gfx9_vop_fast - the decoded form of a common integer VOP instruction
 * @in: the instruction, decoded and checked (gfx9_decode_vop())
 * @v: its operands; the constants among its sources are stored in @v->k
 *
 * The 32-bit integer operations of vop_int_fast(), the carry operations,
 * v_cndmask_b32 and the 32-bit integer compares, each as a function of its
 * own with the operation fixed, when the instruction has no clamp (and no
 * abs or neg for v_cndmask_b32) and every source is a VGPR, an SGPR-file
 * register (a pair for a carry-in or select mask) or a constant. The same
 * results as the table's function.
 *
 * Return: the function, or NULL: use the table's.
 */
gfx9_vop_fn gfx9_vop_fast(const struct gfx9_insn *in, struct gfx9_vop *v)
{
	gfx9_vop_fn fn = in->op < ARRAY_SIZE(vop_fast_fns) ?
			 vop_fast_fns[in->op] : NULL;
	unsigned int i, nsrc = 3;
	u64 k;

	if (!fn || v->ext || v->clamp || v->abs || v->neg || v->omod)
		return NULL;
	/* The mask of the carry-in and the select: an SGPR pair or VCC. */
	if ((in->op >= 0x11c && in->op <= 0x11e) || in->op == 0x100) {
		if (v->src[2] >= GFX9_EXEC_HI)
			return NULL;
		nsrc = 2;
	}
	for (i = 0; i < nsrc; i++) {
		if (v->src[i] >= GFX9_SRC_VGPR0 || v->src[i] <= GFX9_EXEC_HI)
			continue;
		if (!gfx9_sconst(in, v->src[i], GFX9_B32, &k))
			return NULL;
		v->k[i] = k;
	}
	return fn;
}

#define VI(n)	{ n, vop_int, 0 }
#define VF(n)	{ n, vop_float, GFX9_VOP_FLOAT }
#define VC(n)	{ n, vop_carry, GFX9_VOP_VOP3B | GFX9_VOP_CLAMP_INT }
#define VIC(n)	{ n, vop_int, GFX9_VOP_CLAMP_INT }
#define VCI(n)	{ n, vop_cmp_int, 0 }
#define VCF(n)	{ n, vop_float, GFX9_VOP_FLOAT }
#define VCC(n)	{ n, vop_cmp_class, GFX9_VOP_FLOAT }

const struct gfx9_vop_op gfx9_vop_ops[1024] = {
	/* VOPC */
	[0x10] = VCC("v_cmp_class_f32"), [0x11] = VCC("v_cmpx_class_f32"),
	[0x12] = VCC("v_cmp_class_f64"), [0x13] = VCC("v_cmpx_class_f64"),
	[0x40] = VCF("v_cmp_f_f32"), [0x41] = VCF("v_cmp_lt_f32"),
	[0x42] = VCF("v_cmp_eq_f32"), [0x43] = VCF("v_cmp_le_f32"),
	[0x44] = VCF("v_cmp_gt_f32"), [0x45] = VCF("v_cmp_lg_f32"),
	[0x46] = VCF("v_cmp_ge_f32"), [0x47] = VCF("v_cmp_o_f32"),
	[0x48] = VCF("v_cmp_u_f32"), [0x49] = VCF("v_cmp_nge_f32"),
	[0x4a] = VCF("v_cmp_nlg_f32"), [0x4b] = VCF("v_cmp_ngt_f32"),
	[0x4c] = VCF("v_cmp_nle_f32"), [0x4d] = VCF("v_cmp_neq_f32"),
	[0x4e] = VCF("v_cmp_nlt_f32"), [0x4f] = VCF("v_cmp_tru_f32"),
	[0x50] = VCF("v_cmpx_f_f32"), [0x51] = VCF("v_cmpx_lt_f32"),
	[0x52] = VCF("v_cmpx_eq_f32"), [0x53] = VCF("v_cmpx_le_f32"),
	[0x54] = VCF("v_cmpx_gt_f32"), [0x55] = VCF("v_cmpx_lg_f32"),
	[0x56] = VCF("v_cmpx_ge_f32"), [0x57] = VCF("v_cmpx_o_f32"),
	[0x58] = VCF("v_cmpx_u_f32"), [0x59] = VCF("v_cmpx_nge_f32"),
	[0x5a] = VCF("v_cmpx_nlg_f32"), [0x5b] = VCF("v_cmpx_ngt_f32"),
	[0x5c] = VCF("v_cmpx_nle_f32"), [0x5d] = VCF("v_cmpx_neq_f32"),
	[0x5e] = VCF("v_cmpx_nlt_f32"), [0x5f] = VCF("v_cmpx_tru_f32"),
	[0x60] = VCF("v_cmp_f_f64"), [0x61] = VCF("v_cmp_lt_f64"),
	[0x62] = VCF("v_cmp_eq_f64"), [0x63] = VCF("v_cmp_le_f64"),
	[0x64] = VCF("v_cmp_gt_f64"), [0x65] = VCF("v_cmp_lg_f64"),
	[0x66] = VCF("v_cmp_ge_f64"), [0x67] = VCF("v_cmp_o_f64"),
	[0x68] = VCF("v_cmp_u_f64"), [0x69] = VCF("v_cmp_nge_f64"),
	[0x6a] = VCF("v_cmp_nlg_f64"), [0x6b] = VCF("v_cmp_ngt_f64"),
	[0x6c] = VCF("v_cmp_nle_f64"), [0x6d] = VCF("v_cmp_neq_f64"),
	[0x6e] = VCF("v_cmp_nlt_f64"), [0x6f] = VCF("v_cmp_tru_f64"),
	[0x70] = VCF("v_cmpx_f_f64"), [0x71] = VCF("v_cmpx_lt_f64"),
	[0x72] = VCF("v_cmpx_eq_f64"), [0x73] = VCF("v_cmpx_le_f64"),
	[0x74] = VCF("v_cmpx_gt_f64"), [0x75] = VCF("v_cmpx_lg_f64"),
	[0x76] = VCF("v_cmpx_ge_f64"), [0x77] = VCF("v_cmpx_o_f64"),
	[0x78] = VCF("v_cmpx_u_f64"), [0x79] = VCF("v_cmpx_nge_f64"),
	[0x7a] = VCF("v_cmpx_nlg_f64"), [0x7b] = VCF("v_cmpx_ngt_f64"),
	[0x7c] = VCF("v_cmpx_nle_f64"), [0x7d] = VCF("v_cmpx_neq_f64"),
	[0x7e] = VCF("v_cmpx_nlt_f64"), [0x7f] = VCF("v_cmpx_tru_f64"),
	[0xc0] = VCI("v_cmp_f_i32"), [0xc1] = VCI("v_cmp_lt_i32"),
	[0xc2] = VCI("v_cmp_eq_i32"), [0xc3] = VCI("v_cmp_le_i32"),
	[0xc4] = VCI("v_cmp_gt_i32"), [0xc5] = VCI("v_cmp_ne_i32"),
	[0xc6] = VCI("v_cmp_ge_i32"), [0xc7] = VCI("v_cmp_t_i32"),
	[0xc8] = VCI("v_cmp_f_u32"), [0xc9] = VCI("v_cmp_lt_u32"),
	[0xca] = VCI("v_cmp_eq_u32"), [0xcb] = VCI("v_cmp_le_u32"),
	[0xcc] = VCI("v_cmp_gt_u32"), [0xcd] = VCI("v_cmp_ne_u32"),
	[0xce] = VCI("v_cmp_ge_u32"), [0xcf] = VCI("v_cmp_t_u32"),
	[0xd0] = VCI("v_cmpx_f_i32"), [0xd1] = VCI("v_cmpx_lt_i32"),
	[0xd2] = VCI("v_cmpx_eq_i32"), [0xd3] = VCI("v_cmpx_le_i32"),
	[0xd4] = VCI("v_cmpx_gt_i32"), [0xd5] = VCI("v_cmpx_ne_i32"),
	[0xd6] = VCI("v_cmpx_ge_i32"), [0xd7] = VCI("v_cmpx_t_i32"),
	[0xd8] = VCI("v_cmpx_f_u32"), [0xd9] = VCI("v_cmpx_lt_u32"),
	[0xda] = VCI("v_cmpx_eq_u32"), [0xdb] = VCI("v_cmpx_le_u32"),
	[0xdc] = VCI("v_cmpx_gt_u32"), [0xdd] = VCI("v_cmpx_ne_u32"),
	[0xde] = VCI("v_cmpx_ge_u32"), [0xdf] = VCI("v_cmpx_t_u32"),
	[0xe0] = VCI("v_cmp_f_i64"), [0xe1] = VCI("v_cmp_lt_i64"),
	[0xe2] = VCI("v_cmp_eq_i64"), [0xe3] = VCI("v_cmp_le_i64"),
	[0xe4] = VCI("v_cmp_gt_i64"), [0xe5] = VCI("v_cmp_ne_i64"),
	[0xe6] = VCI("v_cmp_ge_i64"), [0xe7] = VCI("v_cmp_t_i64"),
	[0xe8] = VCI("v_cmp_f_u64"), [0xe9] = VCI("v_cmp_lt_u64"),
	[0xea] = VCI("v_cmp_eq_u64"), [0xeb] = VCI("v_cmp_le_u64"),
	[0xec] = VCI("v_cmp_gt_u64"), [0xed] = VCI("v_cmp_ne_u64"),
	[0xee] = VCI("v_cmp_ge_u64"), [0xef] = VCI("v_cmp_t_u64"),
	[0xf0] = VCI("v_cmpx_f_i64"), [0xf1] = VCI("v_cmpx_lt_i64"),
	[0xf2] = VCI("v_cmpx_eq_i64"), [0xf3] = VCI("v_cmpx_le_i64"),
	[0xf4] = VCI("v_cmpx_gt_i64"), [0xf5] = VCI("v_cmpx_ne_i64"),
	[0xf6] = VCI("v_cmpx_ge_i64"), [0xf7] = VCI("v_cmpx_t_i64"),
	[0xf8] = VCI("v_cmpx_f_u64"), [0xf9] = VCI("v_cmpx_lt_u64"),
	[0xfa] = VCI("v_cmpx_eq_u64"), [0xfb] = VCI("v_cmpx_le_u64"),
	[0xfc] = VCI("v_cmpx_gt_u64"), [0xfd] = VCI("v_cmpx_ne_u64"),
	[0xfe] = VCI("v_cmpx_ge_u64"), [0xff] = VCI("v_cmpx_t_u64"),
	/* VOP2 */
	[0x100] = { "v_cndmask_b32", vop_cndmask, GFX9_VOP_FLOAT },
	[0x101] = VF("v_add_f32"), [0x102] = VF("v_sub_f32"),
	[0x103] = VF("v_subrev_f32"), [0x104] = VF("v_mul_legacy_f32"),
	[0x105] = VF("v_mul_f32"),
	[0x106] = VI("v_mul_i32_i24"), [0x107] = VI("v_mul_hi_i32_i24"),
	[0x108] = VI("v_mul_u32_u24"), [0x109] = VI("v_mul_hi_u32_u24"),
	[0x10a] = VF("v_min_f32"), [0x10b] = VF("v_max_f32"),
	[0x10c] = VI("v_min_i32"), [0x10d] = VI("v_max_i32"),
	[0x10e] = VI("v_min_u32"), [0x10f] = VI("v_max_u32"),
	[0x110] = VI("v_lshrrev_b32"), [0x111] = VI("v_ashrrev_i32"),
	[0x112] = VI("v_lshlrev_b32"), [0x113] = VI("v_and_b32"),
	[0x114] = VI("v_or_b32"), [0x115] = VI("v_xor_b32"),
	[0x116] = VF("v_mac_f32"), [0x117] = VF("v_madmk_f32"),
	[0x118] = VF("v_madak_f32"),
	[0x119] = VC("v_add_co_u32"), [0x11a] = VC("v_sub_co_u32"),
	[0x11b] = VC("v_subrev_co_u32"), [0x11c] = VC("v_addc_co_u32"),
	[0x11d] = VC("v_subb_co_u32"), [0x11e] = VC("v_subbrev_co_u32"),
	[0x134] = VIC("v_add_u32"), [0x135] = VIC("v_sub_u32"),
	[0x136] = VIC("v_subrev_u32"), [0x13b] = VF("v_fmac_f32"),
	[0x13d] = VI("v_xnor_b32"),
	/* VOP1 */
	[0x140] = { "v_nop", vop_nop, 0 },
	[0x141] = VI("v_mov_b32"),
	[0x142] = { "v_readfirstlane_b32", vop_lane, GFX9_VOP_SGPR_DST },
	[0x143] = VF("v_cvt_i32_f64"), [0x144] = VF("v_cvt_f64_i32"),
	[0x145] = VF("v_cvt_f32_i32"), [0x146] = VF("v_cvt_f32_u32"),
	[0x147] = VF("v_cvt_u32_f32"), [0x148] = VF("v_cvt_i32_f32"),
	[0x14c] = VF("v_cvt_rpi_i32_f32"), [0x14d] = VF("v_cvt_flr_i32_f32"),
	[0x14f] = VF("v_cvt_f32_f64"), [0x150] = VF("v_cvt_f64_f32"),
	[0x151] = VF("v_cvt_f32_ubyte0"), [0x152] = VF("v_cvt_f32_ubyte1"),
	[0x153] = VF("v_cvt_f32_ubyte2"), [0x154] = VF("v_cvt_f32_ubyte3"),
	[0x155] = VF("v_cvt_u32_f64"), [0x156] = VF("v_cvt_f64_u32"),
	[0x157] = VF("v_trunc_f64"), [0x158] = VF("v_ceil_f64"),
	[0x159] = VF("v_rndne_f64"), [0x15a] = VF("v_floor_f64"),
	[0x15b] = VF("v_fract_f32"), [0x15c] = VF("v_trunc_f32"),
	[0x15d] = VF("v_ceil_f32"), [0x15e] = VF("v_rndne_f32"),
	[0x15f] = VF("v_floor_f32"),
	[0x160] = VF("v_exp_f32"), [0x161] = VF("v_log_f32"),
	[0x162] = VF("v_rcp_f32"), [0x163] = VF("v_rcp_iflag_f32"),
	[0x164] = VF("v_rsq_f32"), [0x165] = VF("v_rcp_f64"),
	[0x166] = VF("v_rsq_f64"), [0x167] = VF("v_sqrt_f32"),
	[0x168] = VF("v_sqrt_f64"), [0x169] = VF("v_sin_f32"),
	[0x16a] = VF("v_cos_f32"),
	[0x16b] = VI("v_not_b32"), [0x16c] = VI("v_bfrev_b32"),
	[0x16d] = VI("v_ffbh_u32"), [0x16e] = VI("v_ffbl_b32"),
	[0x16f] = VI("v_ffbh_i32"),
	[0x170] = VF("v_frexp_exp_i32_f64"), [0x171] = VF("v_frexp_mant_f64"),
	[0x172] = VF("v_fract_f64"), [0x173] = VF("v_frexp_exp_i32_f32"),
	[0x174] = VF("v_frexp_mant_f32"),
	[0x18b] = VF("v_exp_legacy_f32"), [0x18c] = VF("v_log_legacy_f32"),
	/* VOP3 only */
	[0x1c1] = VF("v_mad_f32"),
	[0x1c2] = VI("v_mad_i32_i24"), [0x1c3] = VI("v_mad_u32_u24"),
	[0x1c8] = VI("v_bfe_u32"), [0x1c9] = VI("v_bfe_i32"),
	[0x1ca] = VI("v_bfi_b32"), [0x1cb] = VF("v_fma_f32"),
	[0x1cc] = VF("v_fma_f64"),
	[0x1ce] = VI("v_alignbit_b32"), [0x1cf] = VI("v_alignbyte_b32"),
	[0x1d0] = VF("v_min3_f32"), [0x1d1] = VI("v_min3_i32"),
	[0x1d2] = VI("v_min3_u32"), [0x1d3] = VF("v_max3_f32"),
	[0x1d4] = VI("v_max3_i32"), [0x1d5] = VI("v_max3_u32"),
	[0x1d7] = VI("v_med3_i32"), [0x1d8] = VI("v_med3_u32"),
	[0x1dc] = VI("v_sad_u32"),
	[0x1de] = VF("v_div_fixup_f32"), [0x1df] = VF("v_div_fixup_f64"),
	[0x1e0] = { "v_div_scale_f32", vop_float,
		    GFX9_VOP_VOP3B | GFX9_VOP_FLOAT },
	[0x1e1] = { "v_div_scale_f64", vop_float,
		    GFX9_VOP_VOP3B | GFX9_VOP_FLOAT },
	[0x1e2] = VF("v_div_fmas_f32"), [0x1e3] = VF("v_div_fmas_f64"),
	[0x1e8] = { "v_mad_u64_u32", vop_mad64, GFX9_VOP_VOP3B },
	[0x1e9] = { "v_mad_i64_i32", vop_mad64, GFX9_VOP_VOP3B },
	[0x1ed] = VI("v_perm_b32"), [0x1f3] = VI("v_xad_u32"),
	[0x1fd] = VI("v_lshl_add_u32"), [0x1fe] = VI("v_add_lshl_u32"),
	[0x1ff] = VI("v_add3_u32"), [0x200] = VI("v_lshl_or_b32"),
	[0x201] = VI("v_and_or_b32"), [0x202] = VI("v_or3_b32"),
	[0x280] = VF("v_add_f64"), [0x281] = VF("v_mul_f64"),
	[0x282] = VF("v_min_f64"), [0x283] = VF("v_max_f64"),
	[0x284] = VF("v_ldexp_f64"),
	[0x285] = VI("v_mul_lo_u32"), [0x286] = VI("v_mul_hi_u32"),
	[0x287] = VI("v_mul_hi_i32"), [0x288] = VF("v_ldexp_f32"),
	[0x289] = { "v_readlane_b32", vop_lane, GFX9_VOP_SGPR_DST },
	[0x28a] = { "v_writelane_b32", vop_lane, 0 },
	[0x28b] = VI("v_bcnt_u32_b32"), [0x28c] = VI("v_mbcnt_lo_u32_b32"),
	[0x28d] = VI("v_mbcnt_hi_u32_b32"),
	[0x28f] = { "v_lshlrev_b64", vop_shift64, 0 },
	[0x290] = { "v_lshrrev_b64", vop_shift64, 0 },
	[0x291] = { "v_ashrrev_i64", vop_shift64, 0 },
	[0x292] = VF("v_trig_preop_f64"),
	[0x293] = VI("v_bfm_b32"),
	[0x29c] = VIC("v_add_i32"), [0x29d] = VIC("v_sub_i32"),
};
