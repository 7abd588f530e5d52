// SPDX-License-Identifier: GPL-2.0
/*
 * Scalar ALU and program control: SOP2, SOPK, SOP1, SOPC and SOPP.
 *
 * SOP2:  [31:30] 2, op [29:23], sdst [22:16], ssrc1 [15:8], ssrc0 [7:0]
 * SOPK:  [31:28] 0xb, op [27:23], sdst [22:16], simm16 [15:0]
 * SOP1:  [31:23] 0x17d, sdst [22:16], op [15:8], ssrc0 [7:0]
 * SOPC:  [31:23] 0x17e, op [22:16], ssrc1 [15:8], ssrc0 [7:0]
 * SOPP:  [31:23] 0x17f, op [22:16], simm16 [15:0]
 *
 * Semantics as the Vega ISA states them; SCC is written only by the
 * instructions that define it.
 */
#include <linux/bitops.h>
#include <linux/bitrev.h>
#include <linux/errno.h>
#include <linux/kernel.h>

#include "gfx9.h"

#define SOP_SDST(a)	(((a) >> 16) & 0x7f)
#define SOP_SSRC0(a)	((a) & 0xff)
#define SOP_SSRC1(a)	(((a) >> 8) & 0xff)

static bool sop_srcs_ok(const struct gfx9_insn *in, bool two)
{
	return gfx9_ssrc_valid(SOP_SSRC0(in->dw[0])) &&
	       (!two || gfx9_ssrc_valid(SOP_SSRC1(in->dw[0])));
}

/* ---- SOP2 ---- */

static u32 sop_bfe32(u32 v, u32 ctl, bool sign)
{
	u32 off = ctl & 31, width = (ctl >> 16) & 0x7f;

	if (!width)
		return 0;
	if (width >= 32 || off + width > 32)
		width = 32 - off;
	v >>= off;
	if (width < 32) {
		v &= (1u << width) - 1;
		if (sign && (v & (1u << (width - 1))))
			v |= ~0u << width;
	}
	return v;
}

static u64 sop_bfe64(u64 v, u32 ctl, bool sign)
{
	u32 off = ctl & 63, width = (ctl >> 16) & 0x7f;

	if (!width)
		return 0;
	if (width >= 64 || off + width > 64)
		width = 64 - off;
	v >>= off;
	if (width < 64) {
		v &= (1ull << width) - 1;
		if (sign && (v & (1ull << (width - 1))))
			v |= ~0ull << width;
	}
	return v;
}

/*
 * SOP2 operation @op on 32-bit @x and @y into SGPR @dst. Always inlined:
 * with a constant @op (the decoded forms) the switch folds away.
 */
static __always_inline int sop2_32_do(struct gfx9_disp *d,
				      struct gfx9_wave *w,
				      const struct gfx9_insn *in,
				      unsigned int op, u32 dst, u32 x, u32 y)
{
	bool scc = w->scc;
	u32 r;
	u64 t;

	switch (op) {
	case 0x00:	/* s_add_u32 */
		t = (u64)x + y;
		r = t;
		scc = t >> 32;
		break;
	case 0x01:	/* s_sub_u32 */
		r = x - y;
		scc = y > x;
		break;
	case 0x02:	/* s_add_i32 */
		r = x + y;
		scc = !((x ^ y) & BIT(31)) && ((r ^ x) & BIT(31));
		break;
	case 0x03:	/* s_sub_i32 */
		r = x - y;
		scc = ((x ^ y) & BIT(31)) && ((r ^ x) & BIT(31));
		break;
	case 0x04:	/* s_addc_u32 */
		t = (u64)x + y + w->scc;
		r = t;
		scc = t >> 32;
		break;
	case 0x05:	/* s_subb_u32 */
		t = (u64)x - y - w->scc;
		r = t;
		scc = (u64)y + w->scc > x;
		break;
	case 0x06:	/* s_min_i32 */
		scc = (s32)x < (s32)y;
		r = scc ? x : y;
		break;
	case 0x07:	/* s_min_u32 */
		scc = x < y;
		r = scc ? x : y;
		break;
	case 0x08:	/* s_max_i32 */
		scc = (s32)x > (s32)y;
		r = scc ? x : y;
		break;
	case 0x09:	/* s_max_u32 */
		scc = x > y;
		r = scc ? x : y;
		break;
	case 0x0a:	/* s_cselect_b32 */
		r = w->scc ? x : y;
		break;
	case 0x0c:	/* s_and_b32 */
		r = x & y;
		scc = r;
		break;
	case 0x0e:	/* s_or_b32 */
		r = x | y;
		scc = r;
		break;
	case 0x10:	/* s_xor_b32 */
		r = x ^ y;
		scc = r;
		break;
	case 0x12:	/* s_andn2_b32 */
		r = x & ~y;
		scc = r;
		break;
	case 0x14:	/* s_orn2_b32 */
		r = x | ~y;
		scc = r;
		break;
	case 0x16:	/* s_nand_b32 */
		r = ~(x & y);
		scc = r;
		break;
	case 0x18:	/* s_nor_b32 */
		r = ~(x | y);
		scc = r;
		break;
	case 0x1a:	/* s_xnor_b32 */
		r = ~(x ^ y);
		scc = r;
		break;
	case 0x1c:	/* s_lshl_b32 */
		r = x << (y & 31);
		scc = r;
		break;
	case 0x1e:	/* s_lshr_b32 */
		r = x >> (y & 31);
		scc = r;
		break;
	case 0x20:	/* s_ashr_i32 */
		r = (s32)x >> (y & 31);
		scc = r;
		break;
	case 0x22:	/* s_bfm_b32 */
		r = ((x & 31) ? (1u << (x & 31)) - 1 : 0) << (y & 31);
		break;
	case 0x24:	/* s_mul_i32 */
		r = x * y;
		break;
	case 0x25:	/* s_bfe_u32 */
		r = sop_bfe32(x, y, false);
		scc = r;
		break;
	case 0x26:	/* s_bfe_i32 */
		r = sop_bfe32(x, y, true);
		scc = r;
		break;
	case 0x2a:	/* s_absdiff_i32 */
		r = (s32)x > (s32)y ? x - y : y - x;
		scc = r;
		break;
	case 0x2c:	/* s_mul_hi_u32 */
		r = ((u64)x * y) >> 32;
		break;
	case 0x2d:	/* s_mul_hi_i32 */
		r = (u64)((s64)(s32)x * (s32)y) >> 32;
		break;
	case 0x2e:	/* s_lshl1_add_u32 .. s_lshl4_add_u32 */
	case 0x2f:
	case 0x30:
	case 0x31:
		t = ((u64)x << (op - 0x2d)) + y;
		r = t;
		scc = t >> 32;
		break;
	case 0x32:	/* s_pack_ll_b32_b16 */
		r = (x & 0xffff) | y << 16;
		break;
	case 0x33:	/* s_pack_lh_b32_b16 */
		r = (x & 0xffff) | (y & 0xffff0000);
		break;
	case 0x34:	/* s_pack_hh_b32_b16 */
		r = x >> 16 | (y & 0xffff0000);
		break;
	default:
		return gfx9_illegal(d, w, in, "SOP2");
	}
	w->sreg[dst] = r;
	w->scc = scc;
	return 0;
}

static int sop2_32(struct gfx9_disp *d, struct gfx9_wave *w,
		   const struct gfx9_insn *in)
{
	u32 a = in->dw[0], dst = SOP_SDST(a);

	if (!sop_srcs_ok(in, true) || !gfx9_sdst_valid(dst, false))
		return gfx9_illegal(d, w, in, "SOP2 operand");
	return sop2_32_do(d, w, in, in->op, dst,
			  gfx9_ssrc32(d, w, in, SOP_SSRC0(a), GFX9_B32),
			  gfx9_ssrc32(d, w, in, SOP_SSRC1(a), GFX9_B32));
}

/* The 64-bit SOP2 operations, as sop2_32_do(). */
static __always_inline int sop2_64_do(struct gfx9_disp *d,
				      struct gfx9_wave *w,
				      const struct gfx9_insn *in,
				      unsigned int op, u32 dst, u64 x, u64 y)
{
	u64 r;

	switch (op) {
	case 0x0b:	/* s_cselect_b64 */
		r = w->scc ? x : y;
		gfx9_set_sreg64(w, dst, r);
		return 0;
	case 0x0d:
		r = x & y;
		break;
	case 0x0f:
		r = x | y;
		break;
	case 0x11:
		r = x ^ y;
		break;
	case 0x13:
		r = x & ~y;
		break;
	case 0x15:
		r = x | ~y;
		break;
	case 0x17:
		r = ~(x & y);
		break;
	case 0x19:
		r = ~(x | y);
		break;
	case 0x1b:
		r = ~(x ^ y);
		break;
	case 0x1d:	/* s_lshl_b64 */
		r = x << (y & 63);
		break;
	case 0x1f:	/* s_lshr_b64 */
		r = x >> (y & 63);
		break;
	case 0x21:	/* s_ashr_i64 */
		r = (s64)x >> (y & 63);
		break;
	case 0x23:	/* s_bfm_b64 */
		r = ((x & 63) ? (1ull << (x & 63)) - 1 : 0) << (y & 63);
		gfx9_set_sreg64(w, dst, r);
		return 0;
	case 0x27:	/* s_bfe_u64 */
		r = sop_bfe64(x, y, false);
		break;
	case 0x28:	/* s_bfe_i64 */
		r = sop_bfe64(x, y, true);
		break;
	default:
		return gfx9_illegal(d, w, in, "SOP2");
	}
	gfx9_set_sreg64(w, dst, r);
	w->scc = r;
	return 0;
}

static int sop2_64(struct gfx9_disp *d, struct gfx9_wave *w,
		   const struct gfx9_insn *in)
{
	u32 a = in->dw[0], dst = SOP_SDST(a);
	bool shift = in->op >= 0x1d && in->op <= 0x21;
	bool bfe = in->op == 0x27 || in->op == 0x28;
	bool bfm = in->op == 0x23;
	u64 x, y;

	if (!sop_srcs_ok(in, true) || !gfx9_sdst_valid(dst, true))
		return gfx9_illegal(d, w, in, "SOP2 operand");
	if (bfm) {
		x = gfx9_ssrc32(d, w, in, SOP_SSRC0(a), GFX9_B32);
		y = gfx9_ssrc32(d, w, in, SOP_SSRC1(a), GFX9_B32);
	} else {
		x = gfx9_ssrc64(d, w, in, SOP_SSRC0(a), GFX9_B64);
		y = (shift || bfe) ?
		    gfx9_ssrc32(d, w, in, SOP_SSRC1(a), GFX9_B32) :
		    gfx9_ssrc64(d, w, in, SOP_SSRC1(a), GFX9_B64);
	}
	return sop2_64_do(d, w, in, in->op, dst, x, y);
}

static int sop2(struct gfx9_disp *d, struct gfx9_wave *w,
		const struct gfx9_insn *in)
{
	struct gfx9_insn i = *in;

	i.op = (in->dw[0] >> 23) & 0x7f;
	switch (i.op) {
	case 0x0b:
	case 0x0d:
	case 0x0f:
	case 0x11:
	case 0x13:
	case 0x15:
	case 0x17:
	case 0x19:
	case 0x1b:
	case 0x1d:
	case 0x1f:
	case 0x21:
	case 0x23:
	case 0x27:
	case 0x28:
		return sop2_64(d, w, &i);
	default:
		return sop2_32(d, w, &i);
	}
}

#define S2(n)	{ n, sop2 }
const struct gfx9_op gfx9_sop2_ops[128] = {
	[0x00] = S2("s_add_u32"), [0x01] = S2("s_sub_u32"),
	[0x02] = S2("s_add_i32"), [0x03] = S2("s_sub_i32"),
	[0x04] = S2("s_addc_u32"), [0x05] = S2("s_subb_u32"),
	[0x06] = S2("s_min_i32"), [0x07] = S2("s_min_u32"),
	[0x08] = S2("s_max_i32"), [0x09] = S2("s_max_u32"),
	[0x0a] = S2("s_cselect_b32"), [0x0b] = S2("s_cselect_b64"),
	[0x0c] = S2("s_and_b32"), [0x0d] = S2("s_and_b64"),
	[0x0e] = S2("s_or_b32"), [0x0f] = S2("s_or_b64"),
	[0x10] = S2("s_xor_b32"), [0x11] = S2("s_xor_b64"),
	[0x12] = S2("s_andn2_b32"), [0x13] = S2("s_andn2_b64"),
	[0x14] = S2("s_orn2_b32"), [0x15] = S2("s_orn2_b64"),
	[0x16] = S2("s_nand_b32"), [0x17] = S2("s_nand_b64"),
	[0x18] = S2("s_nor_b32"), [0x19] = S2("s_nor_b64"),
	[0x1a] = S2("s_xnor_b32"), [0x1b] = S2("s_xnor_b64"),
	[0x1c] = S2("s_lshl_b32"), [0x1d] = S2("s_lshl_b64"),
	[0x1e] = S2("s_lshr_b32"), [0x1f] = S2("s_lshr_b64"),
	[0x20] = S2("s_ashr_i32"), [0x21] = S2("s_ashr_i64"),
	[0x22] = S2("s_bfm_b32"), [0x23] = S2("s_bfm_b64"),
	[0x24] = S2("s_mul_i32"), [0x25] = S2("s_bfe_u32"),
	[0x26] = S2("s_bfe_i32"), [0x27] = S2("s_bfe_u64"),
	[0x28] = S2("s_bfe_i64"), [0x2a] = S2("s_absdiff_i32"),
	[0x2c] = S2("s_mul_hi_u32"), [0x2d] = S2("s_mul_hi_i32"),
	[0x2e] = S2("s_lshl1_add_u32"), [0x2f] = S2("s_lshl2_add_u32"),
	[0x30] = S2("s_lshl3_add_u32"), [0x31] = S2("s_lshl4_add_u32"),
	[0x32] = S2("s_pack_ll_b32_b16"), [0x33] = S2("s_pack_lh_b32_b16"),
	[0x34] = S2("s_pack_hh_b32_b16"),
};

/* ---- SOPK ---- */

/* SOPK operation @op on SGPR @dst, as sop2_32_do(). */
static __always_inline int sopk_do(struct gfx9_disp *d, struct gfx9_wave *w,
				   const struct gfx9_insn *in,
				   unsigned int op, u32 dst)
{
	u32 a = in->dw[0];
	s32 simm = (s16)(a & 0xffff);
	u32 uimm = a & 0xffff;
	u32 x = w->sreg[dst];
	s32 r;

	switch (op) {
	case 0x00:	/* s_movk_i32 */
		w->sreg[dst] = simm;
		return 0;
	case 0x01:	/* s_cmovk_i32 */
		if (w->scc)
			w->sreg[dst] = simm;
		return 0;
	case 0x02:
		w->scc = (s32)x == simm;
		return 0;
	case 0x03:
		w->scc = (s32)x != simm;
		return 0;
	case 0x04:
		w->scc = (s32)x > simm;
		return 0;
	case 0x05:
		w->scc = (s32)x >= simm;
		return 0;
	case 0x06:
		w->scc = (s32)x < simm;
		return 0;
	case 0x07:
		w->scc = (s32)x <= simm;
		return 0;
	case 0x08:
		w->scc = x == uimm;
		return 0;
	case 0x09:
		w->scc = x != uimm;
		return 0;
	case 0x0a:
		w->scc = x > uimm;
		return 0;
	case 0x0b:
		w->scc = x >= uimm;
		return 0;
	case 0x0c:
		w->scc = x < uimm;
		return 0;
	case 0x0d:
		w->scc = x <= uimm;
		return 0;
	case 0x0e:	/* s_addk_i32: SCC is the signed overflow */
		r = (s32)(x + (u32)simm);
		w->scc = !((x ^ (u32)simm) & BIT(31)) &&
			 ((r ^ x) & BIT(31));
		w->sreg[dst] = r;
		return 0;
	case 0x0f:	/* s_mulk_i32 */
		w->sreg[dst] = x * (u32)simm;
		return 0;
	case 0x15:	/* s_call_b64: the return address, then a branch */
		if (!gfx9_sdst_valid(dst, true))
			return gfx9_illegal(d, w, in, "SOPK operand");
		gfx9_sdst64(w, dst, w->pc);
		w->pc += (s64)simm * 4;
		return 0;
	default:
		return gfx9_illegal(d, w, in, "SOPK");
	}
}

static int sopk(struct gfx9_disp *d, struct gfx9_wave *w,
		const struct gfx9_insn *in)
{
	u32 a = in->dw[0], dst = SOP_SDST(a);

	if (!gfx9_sdst_valid(dst, false))
		return gfx9_illegal(d, w, in, "SOPK operand");
	return sopk_do(d, w, in, (a >> 23) & 0x1f, dst);
}

/*
 * s_getreg_b32 / s_setreg_b32 / s_setreg_imm32_b32 (the value is the
 * literal): MODE is modelled (float rounding and denormals take effect
 * from the next instruction), HW_ID read-only.
 */
#define GFX9_HWREG_MODE		1
#define GFX9_HWREG_HW_ID	4

static int sopk_hwreg(struct gfx9_disp *d, struct gfx9_wave *w,
		      const struct gfx9_insn *in)
{
	u32 a = in->dw[0], dst = SOP_SDST(a);
	u32 id = a & 63, off = (a >> 6) & 31, size = ((a >> 11) & 31) + 1;
	u32 mask = (size >= 32 ? ~0u : (1u << size) - 1) << off;
	bool imm = ((a >> 23) & 0x1f) == 0x14;
	bool set = imm || ((a >> 23) & 0x1f) == 0x12;
	u32 v;

	if (!imm && !gfx9_sdst_valid(dst, false))
		return gfx9_illegal(d, w, in, "hwreg operand");
	if (id == GFX9_HWREG_MODE) {
		if (set) {
			v = (imm ? in->lit : w->sreg[dst]) << off;
			w->mode = (w->mode & ~mask) | (v & mask);
		} else {
			w->sreg[dst] = (w->mode & mask) >> off;
		}
		return 0;
	}
	if (id == GFX9_HWREG_HW_ID && !set) {
		/* wave id [3:0]; SIMD, CU, SE and the rest 0 */
		v = w->id & 15;
		w->sreg[dst] = (v & mask) >> off;
		return 0;
	}
	return gfx9_illegal(d, w, in, "hardware register not modelled");
}

const struct gfx9_op gfx9_sopk_ops[32] = {
	[0x00] = { "s_movk_i32", sopk }, [0x01] = { "s_cmovk_i32", sopk },
	[0x02] = { "s_cmpk_eq_i32", sopk }, [0x03] = { "s_cmpk_lg_i32", sopk },
	[0x04] = { "s_cmpk_gt_i32", sopk }, [0x05] = { "s_cmpk_ge_i32", sopk },
	[0x06] = { "s_cmpk_lt_i32", sopk }, [0x07] = { "s_cmpk_le_i32", sopk },
	[0x08] = { "s_cmpk_eq_u32", sopk }, [0x09] = { "s_cmpk_lg_u32", sopk },
	[0x0a] = { "s_cmpk_gt_u32", sopk }, [0x0b] = { "s_cmpk_ge_u32", sopk },
	[0x0c] = { "s_cmpk_lt_u32", sopk }, [0x0d] = { "s_cmpk_le_u32", sopk },
	[0x0e] = { "s_addk_i32", sopk }, [0x0f] = { "s_mulk_i32", sopk },
	[0x11] = { "s_getreg_b32", sopk_hwreg },
	[0x12] = { "s_setreg_b32", sopk_hwreg },
	[0x14] = { "s_setreg_imm32_b32", sopk_hwreg },
	[0x15] = { "s_call_b64", sopk },
};

/* ---- SOP1 ---- */

/* SOP1 operation @op on 32-bit @x into @dst, as sop2_32_do(). */
static __always_inline int sop1_32(struct gfx9_disp *d, struct gfx9_wave *w,
				   const struct gfx9_insn *in, u32 op,
				   u32 dst, u32 x)
{
	u32 r;

	switch (op) {
	case 0x00:	/* s_mov_b32 */
		r = x;
		break;
	case 0x02:	/* s_cmov_b32 */
		if (!w->scc)
			return 0;
		r = x;
		break;
	case 0x04:	/* s_not_b32 */
		r = ~x;
		w->scc = r;
		break;
	case 0x08:	/* s_brev_b32 */
		r = bitrev32(x);
		break;
	case 0x0a:	/* s_bcnt0_i32_b32 */
		r = 32 - hweight32(x);
		w->scc = r;
		break;
	case 0x0c:	/* s_bcnt1_i32_b32 */
		r = hweight32(x);
		w->scc = r;
		break;
	case 0x0e:	/* s_ff0_i32_b32 */
		r = ~x ? __ffs(~x) : ~0u;
		break;
	case 0x10:	/* s_ff1_i32_b32 */
		r = x ? __ffs(x) : ~0u;
		break;
	case 0x12:	/* s_flbit_i32_b32: leading zeros */
		r = x ? 31 - __fls(x) : ~0u;
		break;
	case 0x14:	/* s_flbit_i32: bits equal to the sign */
		if (x == 0 || x == ~0u)
			r = ~0u;
		else
			r = 31 - __fls((s32)x < 0 ? ~x : x);
		break;
	case 0x16:	/* s_sext_i32_i8 */
		r = (s8)x;
		break;
	case 0x17:	/* s_sext_i32_i16 */
		r = (s16)x;
		break;
	case 0x18:	/* s_bitset0_b32 */
		r = w->sreg[dst] & ~BIT(x & 31);
		break;
	case 0x1a:	/* s_bitset1_b32 */
		r = w->sreg[dst] | BIT(x & 31);
		break;
	case 0x30:	/* s_abs_i32 */
		r = (s32)x < 0 ? -x : x;
		w->scc = r;
		break;
	default:
		return gfx9_illegal(d, w, in, "SOP1");
	}
	gfx9_sdst32(w, dst, r);
	return 0;
}

/* SOP1 operation @op on 64-bit @x, as sop2_32_do(). */
static __always_inline int sop1_64(struct gfx9_disp *d, struct gfx9_wave *w,
				   const struct gfx9_insn *in, u32 op,
				   u32 dst, u64 x)
{
	u64 exec = gfx9_exec(w), r;
	u32 r32;

	switch (op) {
	case 0x01:	/* s_mov_b64 */
		gfx9_sdst64(w, dst, x);
		return 0;
	case 0x03:	/* s_cmov_b64 */
		if (w->scc)
			gfx9_sdst64(w, dst, x);
		return 0;
	case 0x05:	/* s_not_b64 */
		r = ~x;
		w->scc = r;
		gfx9_sdst64(w, dst, r);
		return 0;
	case 0x09:	/* s_brev_b64 */
		gfx9_sdst64(w, dst, (u64)bitrev32(x) << 32 |
				    bitrev32(x >> 32));
		return 0;
	case 0x0b:	/* s_bcnt0_i32_b64 */
	case 0x0d:	/* s_bcnt1_i32_b64 */
		r32 = hweight64(x);
		if (op == 0x0b)
			r32 = 64 - r32;
		w->scc = r32;
		gfx9_sdst32(w, dst, r32);
		return 0;
	case 0x0f:	/* s_ff0_i32_b64 */
		gfx9_sdst32(w, dst, ~x ? __ffs64(~x) : ~0u);
		return 0;
	case 0x11:	/* s_ff1_i32_b64 */
		gfx9_sdst32(w, dst, x ? __ffs64(x) : ~0u);
		return 0;
	case 0x13:	/* s_flbit_i32_b64 */
		gfx9_sdst32(w, dst, x ? 63 - __fls(x) : ~0u);
		return 0;
	case 0x15:	/* s_flbit_i32_i64 */
		if (x == 0 || x == ~0ull)
			r32 = ~0u;
		else
			r32 = 63 - __fls((s64)x < 0 ? ~x : x);
		gfx9_sdst32(w, dst, r32);
		return 0;
	case 0x1d:	/* s_setpc_b64 */
		w->pc = x;
		return 0;
	case 0x1e:	/* s_swappc_b64 */
		gfx9_sdst64(w, dst, w->pc);
		w->pc = x;
		return 0;
	case 0x20:
		r = x & exec;
		break;	/* s_and_saveexec_b64 */
	case 0x21:
		r = x | exec;
		break;	/* s_or_saveexec_b64 */
	case 0x22:
		r = x ^ exec;
		break;	/* s_xor_saveexec_b64 */
	case 0x23:
		r = x & ~exec;
		break;	/* s_andn2_saveexec_b64 */
	case 0x24:
		r = x | ~exec;
		break;	/* s_orn2_saveexec_b64 */
	case 0x25:
		r = ~(x & exec);
		break;	/* s_nand_saveexec_b64 */
	case 0x26:
		r = ~(x | exec);
		break;	/* s_nor_saveexec_b64 */
	case 0x27:
		r = ~(x ^ exec);
		break;	/* s_xnor_saveexec_b64 */
	case 0x33:
		r = ~x & exec;
		break;	/* s_andn1_saveexec_b64 */
	case 0x34:
		r = ~x | exec;
		break;	/* s_orn1_saveexec_b64 */
	case 0x35:	/* s_andn1_wrexec_b64 */
	case 0x36:	/* s_andn2_wrexec_b64 */
		r = op == 0x35 ? ~x & exec : x & ~exec;
		gfx9_set_sreg64(w, GFX9_EXEC_LO, r);
		w->scc = r;
		gfx9_sdst64(w, dst, r);
		return 0;
	default:
		return gfx9_illegal(d, w, in, "SOP1");
	}
	/* The saveexec family: old EXEC to sdst, the result to EXEC. */
	gfx9_sdst64(w, dst, exec);
	gfx9_set_sreg64(w, GFX9_EXEC_LO, r);
	w->scc = r;
	return 0;
}

static int sop1(struct gfx9_disp *d, struct gfx9_wave *w,
		const struct gfx9_insn *in)
{
	u32 a = in->dw[0], op = (a >> 8) & 0xff, dst = SOP_SDST(a);
	bool wide_src, wide_dst, exec_op;
	u64 x = 0;

	if (op == 0x1c) {	/* s_getpc_b64 */
		if (!gfx9_sdst_valid(dst, true))
			return gfx9_illegal(d, w, in, "SOP1 operand");
		gfx9_sdst64(w, dst, w->pc);
		return 0;
	}
	/* The _b64 sources (odd opcodes below 0x16) and the exec ops. */
	exec_op = (op >= 0x20 && op <= 0x27) || (op >= 0x33 && op <= 0x36);
	wide_src = (op < 0x16 && (op & 1)) || op == 0x1d || op == 0x1e ||
		   exec_op;
	wide_dst = (op < 0x0a && (op & 1)) || op == 0x19 || op == 0x1b ||
		   op == 0x1e || exec_op;
	if (!gfx9_ssrc_valid(SOP_SSRC0(a)) ||
	    (op != 0x1d && !gfx9_sdst_valid(dst, wide_dst)))
		return gfx9_illegal(d, w, in, "SOP1 operand");
	if (wide_src)
		x = gfx9_ssrc64(d, w, in, SOP_SSRC0(a), GFX9_B64);
	else
		x = gfx9_ssrc32(d, w, in, SOP_SSRC0(a), GFX9_B32);
	if (op == 0x19 || op == 0x1b) {	/* s_bitset0/1_b64 */
		u64 v = gfx9_sreg64(w, dst);

		v = op == 0x19 ? v & ~BIT_ULL(x & 63) : v | BIT_ULL(x & 63);
		gfx9_sdst64(w, dst, v);
		return 0;
	}
	if (wide_src)
		return sop1_64(d, w, in, op, dst, x);
	return sop1_32(d, w, in, op, dst, x);
}

#define S1(n)	{ n, sop1 }
const struct gfx9_op gfx9_sop1_ops[256] = {
	[0x00] = S1("s_mov_b32"), [0x01] = S1("s_mov_b64"),
	[0x02] = S1("s_cmov_b32"), [0x03] = S1("s_cmov_b64"),
	[0x04] = S1("s_not_b32"), [0x05] = S1("s_not_b64"),
	[0x08] = S1("s_brev_b32"), [0x09] = S1("s_brev_b64"),
	[0x0a] = S1("s_bcnt0_i32_b32"), [0x0b] = S1("s_bcnt0_i32_b64"),
	[0x0c] = S1("s_bcnt1_i32_b32"), [0x0d] = S1("s_bcnt1_i32_b64"),
	[0x0e] = S1("s_ff0_i32_b32"), [0x0f] = S1("s_ff0_i32_b64"),
	[0x10] = S1("s_ff1_i32_b32"), [0x11] = S1("s_ff1_i32_b64"),
	[0x12] = S1("s_flbit_i32_b32"), [0x13] = S1("s_flbit_i32_b64"),
	[0x14] = S1("s_flbit_i32"), [0x15] = S1("s_flbit_i32_i64"),
	[0x16] = S1("s_sext_i32_i8"), [0x17] = S1("s_sext_i32_i16"),
	[0x18] = S1("s_bitset0_b32"), [0x19] = S1("s_bitset0_b64"),
	[0x1a] = S1("s_bitset1_b32"), [0x1b] = S1("s_bitset1_b64"),
	[0x1c] = S1("s_getpc_b64"), [0x1d] = S1("s_setpc_b64"),
	[0x1e] = S1("s_swappc_b64"),
	[0x20] = S1("s_and_saveexec_b64"), [0x21] = S1("s_or_saveexec_b64"),
	[0x22] = S1("s_xor_saveexec_b64"),
	[0x23] = S1("s_andn2_saveexec_b64"),
	[0x24] = S1("s_orn2_saveexec_b64"),
	[0x25] = S1("s_nand_saveexec_b64"),
	[0x26] = S1("s_nor_saveexec_b64"),
	[0x27] = S1("s_xnor_saveexec_b64"), [0x30] = S1("s_abs_i32"),
	[0x33] = S1("s_andn1_saveexec_b64"),
	[0x34] = S1("s_orn1_saveexec_b64"),
	[0x35] = S1("s_andn1_wrexec_b64"), [0x36] = S1("s_andn2_wrexec_b64"),
};

/* ---- SOPC ---- */

/* SOPC comparison @op of @x and @y into SCC, as sop2_32_do(). */
static __always_inline int sopc_do(struct gfx9_disp *d, struct gfx9_wave *w,
				   const struct gfx9_insn *in,
				   unsigned int op, u64 x, u64 y)
{
	switch (op) {
	case 0x00:
		w->scc = (s32)x == (s32)y;
		break;
	case 0x01:
		w->scc = (s32)x != (s32)y;
		break;
	case 0x02:
		w->scc = (s32)x > (s32)y;
		break;
	case 0x03:
		w->scc = (s32)x >= (s32)y;
		break;
	case 0x04:
		w->scc = (s32)x < (s32)y;
		break;
	case 0x05:
		w->scc = (s32)x <= (s32)y;
		break;
	case 0x06:
		w->scc = (u32)x == (u32)y;
		break;
	case 0x07:
		w->scc = (u32)x != (u32)y;
		break;
	case 0x08:
		w->scc = (u32)x > (u32)y;
		break;
	case 0x09:
		w->scc = (u32)x >= (u32)y;
		break;
	case 0x0a:
		w->scc = (u32)x < (u32)y;
		break;
	case 0x0b:
		w->scc = (u32)x <= (u32)y;
		break;
	case 0x0c:
		w->scc = !(x & BIT(y & 31));
		break;
	case 0x0d:
		w->scc = !!(x & BIT(y & 31));
		break;
	case 0x0e:
		w->scc = !(x & BIT_ULL(y & 63));
		break;
	case 0x0f:
		w->scc = !!(x & BIT_ULL(y & 63));
		break;
	case 0x12:
		w->scc = x == y;
		break;
	case 0x13:
		w->scc = x != y;
		break;
	default:
		return gfx9_illegal(d, w, in, "SOPC");
	}
	return 0;
}

static int sopc(struct gfx9_disp *d, struct gfx9_wave *w,
		const struct gfx9_insn *in)
{
	u32 a = in->dw[0], op = (a >> 16) & 0x7f;
	bool wide = op >= 0x12;
	u64 x, y;

	if (!sop_srcs_ok(in, true))
		return gfx9_illegal(d, w, in, "SOPC operand");
	if (wide || op == 0x0e || op == 0x0f)
		x = gfx9_ssrc64(d, w, in, SOP_SSRC0(a), GFX9_B64);
	else
		x = gfx9_ssrc32(d, w, in, SOP_SSRC0(a), GFX9_B32);
	if (wide)
		y = gfx9_ssrc64(d, w, in, SOP_SSRC1(a), GFX9_B64);
	else
		y = gfx9_ssrc32(d, w, in, SOP_SSRC1(a), GFX9_B32);
	return sopc_do(d, w, in, op, x, y);
}

#define SC(n)	{ n, sopc }
const struct gfx9_op gfx9_sopc_ops[128] = {
	[0x00] = SC("s_cmp_eq_i32"), [0x01] = SC("s_cmp_lg_i32"),
	[0x02] = SC("s_cmp_gt_i32"), [0x03] = SC("s_cmp_ge_i32"),
	[0x04] = SC("s_cmp_lt_i32"), [0x05] = SC("s_cmp_le_i32"),
	[0x06] = SC("s_cmp_eq_u32"), [0x07] = SC("s_cmp_lg_u32"),
	[0x08] = SC("s_cmp_gt_u32"), [0x09] = SC("s_cmp_ge_u32"),
	[0x0a] = SC("s_cmp_lt_u32"), [0x0b] = SC("s_cmp_le_u32"),
	[0x0c] = SC("s_bitcmp0_b32"), [0x0d] = SC("s_bitcmp1_b32"),
	[0x0e] = SC("s_bitcmp0_b64"), [0x0f] = SC("s_bitcmp1_b64"),
	[0x12] = SC("s_cmp_eq_u64"), [0x13] = SC("s_cmp_lg_u64"),
};

/* ---- SOPP ---- */

static int sopp_nop(struct gfx9_disp *d, struct gfx9_wave *w,
		    const struct gfx9_insn *in)
{
	/* Memory operations complete before the next instruction. */
	return 0;
}

static int sopp_endpgm(struct gfx9_disp *d, struct gfx9_wave *w,
		       const struct gfx9_insn *in)
{
	w->state = GFX9_WAVE_DONE;
	return 0;
}

static int sopp_barrier(struct gfx9_disp *d, struct gfx9_wave *w,
			const struct gfx9_insn *in)
{
	w->state = GFX9_WAVE_BARRIER;
	return 0;
}

/* Branch @op, as sop2_32_do(). */
static __always_inline int sopp_branch_do(struct gfx9_disp *d,
					  struct gfx9_wave *w,
					  const struct gfx9_insn *in,
					  unsigned int op)
{
	s64 off = (s16)(in->dw[0] & 0xffff) * 4;
	bool take;

	switch (op) {
	case 0x02:
		take = true;
		break;
	case 0x04:
		take = !w->scc;
		break;
	case 0x05:
		take = w->scc;
		break;
	case 0x06:
		take = !gfx9_sreg64(w, GFX9_VCC_LO);
		break;
	case 0x07:
		take = gfx9_sreg64(w, GFX9_VCC_LO);
		break;
	case 0x08:
		take = !gfx9_exec(w);
		break;
	case 0x09:
		take = gfx9_exec(w);
		break;
	default:
		return gfx9_illegal(d, w, in, "SOPP");
	}
	if (take)
		w->pc += off;
	return 0;
}

static int sopp_branch(struct gfx9_disp *d, struct gfx9_wave *w,
		       const struct gfx9_insn *in)
{
	return sopp_branch_do(d, w, in, (in->dw[0] >> 16) & 0x7f);
}

/* The next instructions are fetched and decoded again (decode.c). */
static int sopp_icache_inv(struct gfx9_disp *d, struct gfx9_wave *w,
			   const struct gfx9_insn *in)
{
	gfx9_icache_flush(d);
	return 0;
}

static int sopp_trap(struct gfx9_disp *d, struct gfx9_wave *w,
		     const struct gfx9_insn *in)
{
	snprintf(d->why, sizeof(d->why),
		 "s_trap %u at pc 0x%llx (wave %u, workgroup %u), wave stopped",
		 in->dw[0] & 0xff, w->pc - in->size, w->id, d->wg_index);
	d->code = KFDSIM_AQL_ERROR_EXCEPTION;
	return -ENOEXEC;
}

const struct gfx9_op gfx9_sopp_ops[128] = {
	[0x00] = { "s_nop", sopp_nop },
	[0x01] = { "s_endpgm", sopp_endpgm },
	[0x02] = { "s_branch", sopp_branch },
	[0x04] = { "s_cbranch_scc0", sopp_branch },
	[0x05] = { "s_cbranch_scc1", sopp_branch },
	[0x06] = { "s_cbranch_vccz", sopp_branch },
	[0x07] = { "s_cbranch_vccnz", sopp_branch },
	[0x08] = { "s_cbranch_execz", sopp_branch },
	[0x09] = { "s_cbranch_execnz", sopp_branch },
	[0x0a] = { "s_barrier", sopp_barrier },
	[0x0c] = { "s_waitcnt", sopp_nop },
	[0x0e] = { "s_sleep", sopp_nop },
	[0x0f] = { "s_setprio", sopp_nop },
	[0x12] = { "s_trap", sopp_trap },
	[0x13] = { "s_icache_inv", sopp_icache_inv },
	[0x14] = { "s_incperflevel", sopp_nop },
	[0x15] = { "s_decperflevel", sopp_nop },
};

/* ---- the decoded forms ---- */

/*
 * Source @i of an instruction gfx9_sop_fast() decoded: an SGPR-file code
 * reads the register, any other is the constant it stored in in->k.
 */
static __always_inline u32 sop_x32(const struct gfx9_wave *w,
				   const struct gfx9_insn *in, unsigned int i)
{
	unsigned int code = in->ssrc[i];

	return code <= GFX9_EXEC_HI ? w->sreg[code] : (u32)in->k[i];
}

static __always_inline u64 sop_x64(const struct gfx9_wave *w,
				   const struct gfx9_insn *in, unsigned int i)
{
	unsigned int code = in->ssrc[i];

	return code < GFX9_EXEC_HI ? gfx9_sreg64(w, code) : in->k[i];
}

/*
 * One function per opcode of the formats below, the operation and the
 * operands' kinds fixed at compile time; the operand and destination
 * codes were checked when decoded.
 */
#define SOP2_32_FN(o)							\
static int sop2_32_##o(struct gfx9_disp *d, struct gfx9_wave *w,	\
		       const struct gfx9_insn *in)			\
{									\
	return sop2_32_do(d, w, in, o, in->sdst, sop_x32(w, in, 0),	\
			  sop_x32(w, in, 1));				\
}

#define SOP2_64_FN(o)							\
static int sop2_64_##o(struct gfx9_disp *d, struct gfx9_wave *w,	\
		       const struct gfx9_insn *in)			\
{									\
	return sop2_64_do(d, w, in, o, in->sdst, sop_x64(w, in, 0),	\
			  sop_x64(w, in, 1));				\
}

#define SOPC_32_FN(o)							\
static int sopc_32_##o(struct gfx9_disp *d, struct gfx9_wave *w,	\
		       const struct gfx9_insn *in)			\
{									\
	return sopc_do(d, w, in, o, sop_x32(w, in, 0),			\
		       sop_x32(w, in, 1));				\
}

#define SOPC_64_FN(o)							\
static int sopc_64_##o(struct gfx9_disp *d, struct gfx9_wave *w,	\
		       const struct gfx9_insn *in)			\
{									\
	return sopc_do(d, w, in, o, sop_x64(w, in, 0),			\
		       sop_x64(w, in, 1));				\
}

#define SOPK_FN(o)							\
static int sopk_##o(struct gfx9_disp *d, struct gfx9_wave *w,		\
		    const struct gfx9_insn *in)				\
{									\
	return sopk_do(d, w, in, o, in->sdst);				\
}

#define SOP1_32_FN(o)							\
static int sop1_32_##o(struct gfx9_disp *d, struct gfx9_wave *w,	\
		       const struct gfx9_insn *in)			\
{									\
	return sop1_32(d, w, in, o, in->sdst, sop_x32(w, in, 0));	\
}

#define SOP1_64_FN(o)							\
static int sop1_64_##o(struct gfx9_disp *d, struct gfx9_wave *w,	\
		       const struct gfx9_insn *in)			\
{									\
	return sop1_64(d, w, in, o, in->sdst, sop_x64(w, in, 0));	\
}

#define SOPP_FN(o)							\
static int sopp_##o(struct gfx9_disp *d, struct gfx9_wave *w,		\
		    const struct gfx9_insn *in)				\
{									\
	return sopp_branch_do(d, w, in, o);				\
}

SOP2_32_FN(0x00) SOP2_32_FN(0x01) SOP2_32_FN(0x02) SOP2_32_FN(0x03)
SOP2_32_FN(0x04) SOP2_32_FN(0x05) SOP2_32_FN(0x06) SOP2_32_FN(0x07)
SOP2_32_FN(0x08) SOP2_32_FN(0x09) SOP2_32_FN(0x0a) SOP2_32_FN(0x0c)
SOP2_32_FN(0x0e) SOP2_32_FN(0x10) SOP2_32_FN(0x12) SOP2_32_FN(0x14)
SOP2_32_FN(0x1c) SOP2_32_FN(0x1e) SOP2_32_FN(0x20) SOP2_32_FN(0x24)
SOP2_32_FN(0x25) SOP2_32_FN(0x26) SOP2_32_FN(0x2c) SOP2_32_FN(0x2e)
SOP2_32_FN(0x2f) SOP2_32_FN(0x30) SOP2_32_FN(0x31)
SOP2_64_FN(0x0b) SOP2_64_FN(0x0d) SOP2_64_FN(0x0f) SOP2_64_FN(0x11)
SOP2_64_FN(0x13) SOP2_64_FN(0x15)
SOPC_32_FN(0x00) SOPC_32_FN(0x01) SOPC_32_FN(0x02) SOPC_32_FN(0x03)
SOPC_32_FN(0x04) SOPC_32_FN(0x05) SOPC_32_FN(0x06) SOPC_32_FN(0x07)
SOPC_32_FN(0x08) SOPC_32_FN(0x09) SOPC_32_FN(0x0a) SOPC_32_FN(0x0b)
SOPC_64_FN(0x12) SOPC_64_FN(0x13)
SOPK_FN(0x00) SOPK_FN(0x01) SOPK_FN(0x02) SOPK_FN(0x03) SOPK_FN(0x04)
SOPK_FN(0x05) SOPK_FN(0x06) SOPK_FN(0x07) SOPK_FN(0x08) SOPK_FN(0x09)
SOPK_FN(0x0a) SOPK_FN(0x0b) SOPK_FN(0x0c) SOPK_FN(0x0d) SOPK_FN(0x0e)
SOPK_FN(0x0f)
SOP1_32_FN(0x00) SOP1_32_FN(0x02) SOP1_32_FN(0x04)
SOP1_64_FN(0x01) SOP1_64_FN(0x03) SOP1_64_FN(0x05) SOP1_64_FN(0x20)
SOP1_64_FN(0x21) SOP1_64_FN(0x22) SOP1_64_FN(0x23) SOP1_64_FN(0x33)
SOPP_FN(0x02) SOPP_FN(0x04) SOPP_FN(0x05) SOPP_FN(0x06) SOPP_FN(0x07)
SOPP_FN(0x08) SOPP_FN(0x09)

/* SOP2: 32-bit operands, or (the _64 functions) 64-bit ones. */
static const gfx9_exec_fn sop2_fast[128] = {
	[0x00] = sop2_32_0x00, [0x01] = sop2_32_0x01, [0x02] = sop2_32_0x02,
	[0x03] = sop2_32_0x03, [0x04] = sop2_32_0x04, [0x05] = sop2_32_0x05,
	[0x06] = sop2_32_0x06, [0x07] = sop2_32_0x07, [0x08] = sop2_32_0x08,
	[0x09] = sop2_32_0x09, [0x0a] = sop2_32_0x0a, [0x0c] = sop2_32_0x0c,
	[0x0e] = sop2_32_0x0e, [0x10] = sop2_32_0x10, [0x12] = sop2_32_0x12,
	[0x14] = sop2_32_0x14, [0x1c] = sop2_32_0x1c, [0x1e] = sop2_32_0x1e,
	[0x20] = sop2_32_0x20, [0x24] = sop2_32_0x24, [0x25] = sop2_32_0x25,
	[0x26] = sop2_32_0x26, [0x2c] = sop2_32_0x2c, [0x2e] = sop2_32_0x2e,
	[0x2f] = sop2_32_0x2f, [0x30] = sop2_32_0x30, [0x31] = sop2_32_0x31,
	[0x0b] = sop2_64_0x0b, [0x0d] = sop2_64_0x0d, [0x0f] = sop2_64_0x0f,
	[0x11] = sop2_64_0x11, [0x13] = sop2_64_0x13, [0x15] = sop2_64_0x15,
};

static const gfx9_exec_fn sopc_fast[128] = {
	[0x00] = sopc_32_0x00, [0x01] = sopc_32_0x01, [0x02] = sopc_32_0x02,
	[0x03] = sopc_32_0x03, [0x04] = sopc_32_0x04, [0x05] = sopc_32_0x05,
	[0x06] = sopc_32_0x06, [0x07] = sopc_32_0x07, [0x08] = sopc_32_0x08,
	[0x09] = sopc_32_0x09, [0x0a] = sopc_32_0x0a, [0x0b] = sopc_32_0x0b,
	[0x12] = sopc_64_0x12, [0x13] = sopc_64_0x13,
};

static const gfx9_exec_fn sopk_fast[32] = {
	[0x00] = sopk_0x00, [0x01] = sopk_0x01, [0x02] = sopk_0x02,
	[0x03] = sopk_0x03, [0x04] = sopk_0x04, [0x05] = sopk_0x05,
	[0x06] = sopk_0x06, [0x07] = sopk_0x07, [0x08] = sopk_0x08,
	[0x09] = sopk_0x09, [0x0a] = sopk_0x0a, [0x0b] = sopk_0x0b,
	[0x0c] = sopk_0x0c, [0x0d] = sopk_0x0d, [0x0e] = sopk_0x0e,
	[0x0f] = sopk_0x0f,
};

/* SOP1: the _64 ones have a 64-bit source and destination. */
static const gfx9_exec_fn sop1_fast[256] = {
	[0x00] = sop1_32_0x00, [0x02] = sop1_32_0x02, [0x04] = sop1_32_0x04,
	[0x01] = sop1_64_0x01, [0x03] = sop1_64_0x03, [0x05] = sop1_64_0x05,
	[0x20] = sop1_64_0x20, [0x21] = sop1_64_0x21, [0x22] = sop1_64_0x22,
	[0x23] = sop1_64_0x23, [0x33] = sop1_64_0x33,
};

static const gfx9_exec_fn sopp_fast[128] = {
	[0x02] = sopp_0x02, [0x04] = sopp_0x04, [0x05] = sopp_0x05,
	[0x06] = sopp_0x06, [0x07] = sopp_0x07, [0x08] = sopp_0x08,
	[0x09] = sopp_0x09,
};

/*
 * Decode source @i of @in, code @code, for a decoded form: an SGPR-file
 * register (a 64-bit one starting below EXEC_HI) or a constant. False
 * for anything else (SCC, VCCZ, EXECZ, unmodelled codes), which the
 * generic function reads or rejects.
 */
static bool sop_fast_src(struct gfx9_insn *in, unsigned int i,
			 unsigned int code, bool wide)
{
	in->ssrc[i] = code;
	if (code < GFX9_EXEC_HI || (!wide && code == GFX9_EXEC_HI))
		return code != 125;
	return gfx9_sconst(in, code, wide ? GFX9_B64 : GFX9_B32, &in->k[i]);
}

/**
 * gfx9_sop_fast - the decoded form of a SOP2, SOPK, SOP1, SOPC or SOPP
 * @in: the instruction (its format one of those), fetched
 *
 * For the common opcodes whose operands are registers or constants, the
 * function that runs @in with its operation fixed and its operands as
 * decoded here into @in (the same results as the format's function,
 * including SCC). Everything the format's function checks at each step
 * is checked here, once.
 *
 * Return: the function, or NULL: use the format's table.
 */
gfx9_exec_fn gfx9_sop_fast(struct gfx9_insn *in)
{
	u32 a = in->dw[0], op;
	gfx9_exec_fn fn;
	bool wide;

	in->sdst = SOP_SDST(a);
	switch (a >> 23) {
	case 0x17f:	/* SOPP */
		return sopp_fast[(a >> 16) & 0x7f];
	case 0x17e:	/* SOPC */
		op = (a >> 16) & 0x7f;
		fn = sopc_fast[op];
		wide = op >= 0x12;
		if (!fn || !sop_fast_src(in, 0, SOP_SSRC0(a), wide) ||
		    !sop_fast_src(in, 1, SOP_SSRC1(a), wide))
			return NULL;
		return fn;
	case 0x17d:	/* SOP1 */
		op = (a >> 8) & 0xff;
		fn = sop1_fast[op];
		wide = op & 1 || op >= 0x20;
		if (!fn || !sop_fast_src(in, 0, SOP_SSRC0(a), wide) ||
		    !gfx9_sdst_valid(in->sdst, wide))
			return NULL;
		return fn;
	}
	if ((a >> 28) == 0xb) {	/* SOPK */
		fn = sopk_fast[(a >> 23) & 0x1f];
		if (!fn || !gfx9_sdst_valid(in->sdst, false))
			return NULL;
		return fn;
	}
	op = (a >> 23) & 0x7f;	/* SOP2 */
	fn = sop2_fast[op];
	wide = op & 1 && op >= 0x0b && op < 0x20;
	if (!fn || !sop_fast_src(in, 0, SOP_SSRC0(a), wide) ||
	    !sop_fast_src(in, 1, SOP_SSRC1(a), wide) ||
	    !gfx9_sdst_valid(in->sdst, wide))
		return NULL;
	return fn;
}
