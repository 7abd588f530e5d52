// SPDX-License-Identifier: GPL-2.0
/*
 * VOP3P: packed 16-bit math on two halves of each VGPR, and the integer
 * dot products of gfx906.
 *
 * VOP3P: [31:23] 0x1a7, op [22:16], clamp [15], op_sel_hi[2] [14],
 *        op_sel [13:11], neg_hi [10:8], vdst [7:0]; neg [63:61],
 *        op_sel_hi[1:0] [60:59], src2 [58:50], src1 [49:41], src0 [40:32]
 *
 * For the low half of the result, source i is its high half if op_sel[i]
 * is set, else its low half; for the high half of the result op_sel_hi[i]
 * chooses. neg (neg_lo) and neg_hi negate an f16 source of the low and
 * the high half. clamp keeps f16 results in [0, 1] and saturates the
 * integer additions, subtractions, mads and dot products.
 *
 * An inline constant is a 32-bit operand as for VOP3: an integer one
 * (sign-extended), or an f16 float one in the low half with 0 above (the
 * assembler then sets op_sel_hi to 0 for it). Literals do not exist in
 * this encoding.
 *
 * v_fma_mix_f32, v_fma_mix_lo_f16 and v_fma_mix_hi_f16 (0x20-0x22)
 * compute a * b + c fused, each source an f32 or an f16 (below).
 *
 * Not implemented (they trap): v_dot2_f32_f16, neg or op_sel on the
 * integer dot products, clamp on the packed shifts, min/max and mul_lo,
 * an inline constant as an f16 source of v_fma_mix.
 */
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/kernel.h>

#include "fp_soft.h"
#include "gfx9.h"
#include "vop_f16.h"

/**
 * struct vop3p - a decoded VOP3P instruction
 * @src: operand codes
 * @vdst: destination VGPR
 * @op: opcode
 * @opsel: op_sel bits per source (low half of the result)
 * @opsel_hi: op_sel_hi bits per source (high half)
 * @neg: neg_lo bits per source
 * @neg_hi: neg_hi bits per source
 * @clamp: the clamp bit
 */
struct vop3p {
	u16 src[3];
	u8 vdst;
	u8 op;
	u8 opsel;
	u8 opsel_hi;
	u8 neg;
	u8 neg_hi;
	bool clamp;
};

static s32 vop3p_sat(s64 v, bool sign, int bits, bool clamp)
{
	s64 lo = sign ? -BIT_ULL(bits - 1) : 0;
	s64 hi = sign ? BIT_ULL(bits - 1) - 1 : BIT_ULL(bits) - 1;

	return clamp ? clamp_t(s64, v, lo, hi) : (s32)v;
}

/* One half of a packed integer operation; x, y, z are that half's. */
static u16 vop3p_int(unsigned int op, u16 x, u16 y, u16 z, bool clamp)
{
	switch (op) {
	case 0x0:	/* v_pk_mad_i16 */
		return vop3p_sat((s64)(s16)x * (s16)y + (s16)z, true, 16,
				 clamp);
	case 0x1:
		return x * y;
	case 0x2:
		return vop3p_sat((s64)(s16)x + (s16)y, true, 16, clamp);
	case 0x3:
		return vop3p_sat((s64)(s16)x - (s16)y, true, 16, clamp);
	case 0x4:
		return y << (x & 15);
	case 0x5:
		return y >> (x & 15);
	case 0x6:
		return (s16)y >> (x & 15);
	case 0x7:
		return max((s16)x, (s16)y);
	case 0x8:
		return min((s16)x, (s16)y);
	case 0x9:	/* v_pk_mad_u16 */
		return vop3p_sat((s64)x * y + z, false, 16, clamp);
	case 0xa:
		return vop3p_sat((s64)x + y, false, 16, clamp);
	case 0xb:
		return vop3p_sat((s64)x - y, false, 16, clamp);
	case 0xc:
		return max(x, y);
	default:	/* 0xd */
		return min(x, y);
	}
}

/* One half of a packed f16 operation. */
static u16 vop3p_f16(unsigned int op, u16 x, u16 y, u16 z, bool flush)
{
	switch (op) {
	case 0xe:
		return f16_fma(x, y, z, flush);
	case 0xf:
		return f16_add(x, y, flush);
	case 0x10:
		return f16_mul(x, y, flush);
	case 0x11:
		return f16_minmax(x, y, false, flush);
	default:	/* 0x12 */
		return f16_minmax(x, y, true, flush);
	}
}

/* The integer dot products: 2 x 16, 4 x 8 or 8 x 4 bits, plus src2. */
static u32 vop3p_dot(unsigned int op, u32 a, u32 b, u32 c, bool clamp)
{
	unsigned int bits = op <= 0x27 ? 16 : op <= 0x29 ? 8 : 4, i;
	bool sign = !(op & 1);
	s64 acc = sign ? (s64)(s32)c : (s64)c;
	u32 mask = BIT(bits) - 1;

	for (i = 0; i < 32 / bits; i++) {
		u32 x = (a >> (i * bits)) & mask, y = (b >> (i * bits)) & mask;

		if (sign)
			acc += (s64)sign_extend32(x, bits - 1) *
			       sign_extend32(y, bits - 1);
		else
			acc += (s64)x * y;
	}
	if (!clamp)
		return (u32)acc;
	if (sign)
		return clamp_t(s64, acc, S32_MIN, S32_MAX);
	return min_t(s64, acc, U32_MAX);
}

static bool vop3p_src_ok(const struct gfx9_disp *d, unsigned int code)
{
	if (code >= GFX9_SRC_VGPR0)
		return code - GFX9_SRC_VGPR0 < d->nvgpr;
	return gfx9_ssrc_valid(code) && code != GFX9_SRC_LITERAL;
}

/* The 16 bits of source @i that the @hi half of the result reads. */
static u16 vop3p_half(const struct vop3p *p, const struct gfx9_src *s,
		      unsigned int i, unsigned int l, bool hi)
{
	bool sel = (hi ? p->opsel_hi : p->opsel) & BIT(i);
	u32 x = gfx9_lane32(s, l);

	return sel ? x >> 16 : x;
}

/* MODE fields of binary32 (f16 shares those of binary64). */
#define VOP3P_ROUND32(m)	((m) & 3)
#define VOP3P_ROUND16(m)	(((m) >> 2) & 3)
#define VOP3P_DENORM32(m)	(((m) >> 4) & 3)

/* VOP3 clamp of a binary32: NaN and below zero to +0, above 1.0 to 1.0. */
static u32 vop3p_clamp32(u32 r)
{
	if ((r & 0x7fffffff) > 0x7f800000 ||
	    ((r & BIT(31)) && (r & 0x7fffffff)))
		return 0;
	return !(r & BIT(31)) && r > 0x3f800000 ? 0x3f800000 : r;
}

/*
 * Source @i of v_fma_mix in binary64 bits: the f32 (op_sel_hi[i] clear),
 * or the f16 half op_sel[i] picks, converted exactly; neg_hi[i] is |x|
 * here and neg[i] negates (LLVM's VOP3PMadMixMods).
 */
static u64 vop3p_mix_src(const struct vop3p *p, const struct gfx9_src *s,
			 unsigned int i, unsigned int l, bool flush16,
			 bool flush32)
{
	u32 x = gfx9_lane32(s, l);

	if (p->opsel_hi & BIT(i))
		x = f16_to_f32(p->opsel & BIT(i) ? x >> 16 : x & 0xffff,
			       flush16);
	else if (flush32 && !(x & 0x7f800000))
		x &= BIT(31);		/* a subnormal f32 input flushed */
	if (p->neg_hi & BIT(i))
		x &= ~BIT(31);
	if (p->neg & BIT(i))
		x ^= BIT(31);
	return sf_widen(x);
}

/*
 * v_fma_mix_f32 rounds a * b + c once, as MODE rounds binary32. The mixlo
 * and mixhi forms round it once to an f16 (nearest even; other f16 modes
 * trap) and write that half of vdst, keeping the other: the exact value
 * is first rounded to odd in binary64 (toward zero, the last bit set if
 * inexact: toward -Inf and +Inf differ), and 53 bits are enough for the
 * second rounding to 11 bits to give the once-rounded result. A product
 * of two f32 and an f32 sum cannot overflow or underflow binary64.
 */
static int vop3p_mix(struct gfx9_disp *d, struct gfx9_wave *w,
		     struct gfx9_insn *in, const struct vop3p *p)
{
	struct sf_env env = {
		.f32 = p->op == 0x20,
		.round = VOP3P_ROUND32(w->mode),
		.flush_out = !(VOP3P_DENORM32(w->mode) & 2),
	};
	struct sf_env env64 = { .f32 = false };
	bool flush16 = f16_flush(w);
	bool flush32 = !(VOP3P_DENORM32(w->mode) & 1);
	u32 *dst = gfx9_vreg(w, p->vdst), r;
	u64 exec = gfx9_exec(w), x[3], lo, hi, odd;
	struct gfx9_src s[3];
	unsigned int i, l;
	u16 h;

	if (p->op > 0x20 && VOP3P_ROUND16(w->mode))
		return gfx9_illegal(d, w, in, "f16 rounding mode not implemented");
	for (i = 0; i < 3; i++) {
		if (!(p->opsel_hi & BIT(i)) && (p->opsel & BIT(i)))
			return gfx9_illegal(d, w, in, "op_sel on an f32 source");
		if ((p->opsel_hi & BIT(i)) && p->src[i] >= GFX9_SRC_ZERO &&
		    p->src[i] < GFX9_SRC_VGPR0)
			return gfx9_illegal(d, w, in, "constant as an f16 source");
		gfx9_vsrc(d, w, in, p->src[i], GFX9_B32, &s[i]);
	}
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		for (i = 0; i < 3; i++)
			x[i] = vop3p_mix_src(p, &s[i], i, l, flush16,
					     flush32);
		if (env.f32) {
			r = sf_fma(x[0], x[1], x[2], 0, &env);
			dst[l] = p->clamp ? vop3p_clamp32(r) : r;
			continue;
		}
		env64.round = SF_RTZ;
		odd = sf_fma(x[0], x[1], x[2], 0, &env64);
		env64.round = SF_RDN;
		lo = sf_fma(x[0], x[1], x[2], 0, &env64);
		env64.round = SF_RUP;
		hi = sf_fma(x[0], x[1], x[2], 0, &env64);
		if (lo != hi && (odd & 0x7ff0000000000000ULL) !=
		    0x7ff0000000000000ULL)
			odd |= 1;
		h = f16_from_f64(odd, flush16);
		if (p->clamp)
			h = f16_clamp(h);
		dst[l] = p->op == 0x21 ? (dst[l] & 0xffff0000) | h :
					 (dst[l] & 0xffff) | (u32)h << 16;
	}
	return 0;
}

int gfx9_vop3p(struct gfx9_disp *d, struct gfx9_wave *w,
	       struct gfx9_insn *in)
{
	u32 a = in->dw[0], b = in->dw[1], *dst;
	struct vop3p p = {
		.vdst = a & 0xff,
		.neg_hi = (a >> 8) & 7,
		.opsel = (a >> 11) & 7,
		.opsel_hi = ((a >> 14) & 1) << 2 | ((b >> 27) & 3),
		.clamp = (a >> 15) & 1,
		.op = (a >> 16) & 0x7f,
		.src = { b & 0x1ff, (b >> 9) & 0x1ff, (b >> 18) & 0x1ff },
		.neg = (b >> 29) & 7,
	};
	bool is_f16 = p.op >= 0xe && p.op <= 0x12, flush = f16_flush(w);
	bool is_dot = p.op >= 0x26 && p.op <= 0x2b;
	struct gfx9_src s[3];
	u64 exec = gfx9_exec(w);
	unsigned int i, l, h;
	u16 r[2], x[3];

	in->op = p.op;
	if (p.op >= 0x20 && p.op <= 0x22) {
		if (p.vdst >= d->nvgpr)
			return gfx9_illegal(d, w, in, "VGPR beyond the allocation");
		for (i = 0; i < 3; i++)
			if (!vop3p_src_ok(d, p.src[i]))
				return gfx9_illegal(d, w, in,
						    "operand not supported");
		return vop3p_mix(d, w, in, &p);
	}
	if (!is_f16 && !is_dot && p.op > 0xd)
		return gfx9_illegal(d, w, in, "VOP3P opcode not implemented");
	if (p.vdst >= d->nvgpr)
		return gfx9_illegal(d, w, in, "VGPR beyond the allocation");
	for (i = 0; i < 3; i++)
		if (!vop3p_src_ok(d, p.src[i]))
			return gfx9_illegal(d, w, in, "operand not supported");
	if (!is_f16 && (p.neg || p.neg_hi))
		return gfx9_illegal(d, w, in, "neg on an integer VOP3P");
	if (is_dot && (p.opsel || p.opsel_hi != 7))
		return gfx9_illegal(d, w, in, "op_sel on a dot product");
	if (p.clamp && !is_f16 && !is_dot && p.op != 0x0 && p.op != 0x2 &&
	    p.op != 0x3 && !(p.op >= 0x9 && p.op <= 0xb))
		return gfx9_illegal(d, w, in, "clamp not implemented");
	if (is_f16 && ((w->mode >> 2) & 3))
		return gfx9_illegal(d, w, in, "f16 rounding mode not implemented");
	for (i = 0; i < 3; i++) {
		if (is_f16)
			f16_vsrc(d, w, in, p.src[i], &s[i]);
		else
			gfx9_vsrc(d, w, in, p.src[i], GFX9_B32, &s[i]);
	}
	dst = gfx9_vreg(w, p.vdst);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		if (is_dot) {
			dst[l] = vop3p_dot(p.op, gfx9_lane32(&s[0], l),
					   gfx9_lane32(&s[1], l),
					   gfx9_lane32(&s[2], l), p.clamp);
			continue;
		}
		for (h = 0; h < 2; h++) {
			for (i = 0; i < 3; i++) {
				x[i] = vop3p_half(&p, &s[i], i, l, h);
				if ((h ? p.neg_hi : p.neg) & BIT(i))
					x[i] ^= 0x8000;
			}
			if (is_f16) {
				r[h] = vop3p_f16(p.op, x[0], x[1], x[2], flush);
				if (p.clamp)
					r[h] = f16_clamp(r[h]);
			} else {
				r[h] = vop3p_int(p.op, x[0], x[1], x[2],
						 p.clamp);
			}
		}
		dst[l] = r[0] | (u32)r[1] << 16;
	}
	return 0;
}
