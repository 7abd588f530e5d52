// SPDX-License-Identifier: GPL-2.0
/*
 * SDWA (sub-dword addressing): a VOP1, VOP2 or VOPC instruction whose
 * src0 field is 249 is followed by an SDWA dword, which selects a byte or
 * a word of each source and says where the result goes:
 *
 * SDWA:  src0 [7:0], dst_sel [10:8], dst_unused [12:11], clamp [13],
 *        omod [15:14], src0_sel [18:16], src0_sext [19], src0_neg [20],
 *        src0_abs [21], s0 [23], src1_sel [26:24], src1_sext [27],
 *        src1_neg [28], src1_abs [29], s1 [31]
 * VOPC:  bits [15:8] are sdst [14:8] and sd [15] instead (sd 0: VCC)
 *
 * sel: 0-3 byte 0-3, 4 word 0, 5 word 1, 6 dword; 7 is reserved. A
 * selected byte or word is zero-extended, or sign-extended with sext.
 * s0 (s1) makes src0 (the VOP2/VOPC vsrc1 field) a scalar operand:
 * an SGPR or an inline constant, never a literal.
 *
 * The result's low 8 or 16 bits go to the dst_sel field of vdst; the
 * other bits are, by dst_unused: 0 zero, 1 the field's sign above it and
 * zero below it, 2 the old value of vdst (3 is reserved).
 *
 * The operation is the ordinary one: its sources arrive selected and
 * extended in the extension rows (GFX9_SRC_EXT0/EXT1), neg/abs/clamp/omod
 * as VOP3's, and the result is placed afterwards.
 */
#include <linux/bits.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "gfx9.h"

#define SDWA_DWORD	6

static u32 sdwa_sel(u32 x, unsigned int sel, bool sext)
{
	unsigned int sh = sel < 4 ? 8 * sel : 16 * (sel - 4);
	unsigned int width = sel < 4 ? 8 : 16;

	if (sel == SDWA_DWORD)
		return x;
	x = (x >> sh) & (BIT(width) - 1);
	return sext ? (u32)sign_extend32(x, width - 1) : x;
}

static u32 sdwa_dst(u32 res, u32 old, unsigned int sel, unsigned int unused)
{
	unsigned int sh, width;
	u32 field, v;

	/* First: a dword's shift of 32 would be undefined below. */
	if (sel == SDWA_DWORD)
		return res;
	sh = sel < 4 ? 8 * sel : 16 * (sel - 4);
	width = sel < 4 ? 8 : 16;
	field = (BIT(width) - 1) << sh;
	v = (res << sh) & field;
	if (unused == 1 && (res & BIT(width - 1)) && sh + width < 32)
		v |= ~0u << (sh + width);
	else if (unused == 2)
		v |= old & ~field;
	return v;
}

/* Read operand @code into @row, selected by @sel and @sext. */
static int sdwa_src(struct gfx9_disp *d, struct gfx9_wave *w,
		    struct gfx9_insn *in, unsigned int code, unsigned int sel,
		    bool sext, u32 *row)
{
	struct gfx9_src s;
	unsigned int l;

	if (code >= GFX9_SRC_VGPR0 ? code - GFX9_SRC_VGPR0 >= d->nvgpr :
	    !gfx9_ssrc_valid(code) || code == GFX9_SRC_LITERAL)
		return gfx9_illegal(d, w, in, "SDWA operand not supported");
	if (sel > SDWA_DWORD)
		return gfx9_illegal(d, w, in, "reserved SDWA sel");
	gfx9_vsrc(d, w, in, code, GFX9_B32, &s);
	for (l = 0; l < GFX9_LANES; l++)
		row[l] = sdwa_sel(gfx9_lane32(&s, l), sel, sext);
	return 0;
}

int gfx9_vop_sdwa(struct gfx9_disp *d, struct gfx9_wave *w,
		  struct gfx9_insn *in, struct gfx9_vop *v, bool vopc)
{
	u32 sdwa = in->dw[1], *dst, *old;
	unsigned int dst_sel = (sdwa >> 8) & 7, unused = (sdwa >> 11) & 3;
	unsigned int code, l;
	bool vop1 = in->op >= 0x140;
	u64 exec = gfx9_exec(w);
	int ret;

	if (!gfx9_vop_ext_ok(in->op) ||
	    (gfx9_vop_op(in->op)->flags & GFX9_VOP_SGPR_DST))
		return gfx9_illegal(d, w, in, "no SDWA form of this opcode");
	code = sdwa & 0xff;
	if (!(sdwa & BIT(23)))
		code += GFX9_SRC_VGPR0;
	ret = sdwa_src(d, w, in, code, (sdwa >> 16) & 7, sdwa & BIT(19),
		       d->ext[0]);
	if (ret)
		return ret;
	v->src[0] = GFX9_SRC_EXT0;
	v->neg = (sdwa >> 20) & 1;
	v->abs = (sdwa >> 21) & 1;
	if (!vop1) {
		code = v->src[1];
		if (sdwa & BIT(31))
			code -= GFX9_SRC_VGPR0;
		ret = sdwa_src(d, w, in, code, (sdwa >> 24) & 7,
			       sdwa & BIT(27), d->ext[1]);
		if (ret)
			return ret;
		v->src[1] = GFX9_SRC_EXT1;
		v->neg |= ((sdwa >> 28) & 1) << 1;
		v->abs |= ((sdwa >> 29) & 1) << 1;
	}
	v->ext = true;
	if (vopc) {
		if (sdwa & BIT(15))
			v->sdst = (sdwa >> 8) & 0x7f;
		v->vdst = v->sdst;
		if (!gfx9_sdst_valid(v->sdst, true))
			return gfx9_illegal(d, w, in, "bad scalar destination");
		return gfx9_vop_ext_run(d, w, in, v, exec);
	}
	if (dst_sel > SDWA_DWORD || unused == 3)
		return gfx9_illegal(d, w, in, "reserved SDWA dst_sel/dst_unused");
	if (v->vdst >= d->nvgpr)
		return gfx9_illegal(d, w, in, "VGPR beyond the allocation");
	v->clamp = (sdwa >> 13) & 1;
	v->omod = (sdwa >> 14) & 3;
	dst = gfx9_vreg(w, v->vdst);
	/* d->tmp (u64 per lane) holds the old destination meanwhile. */
	old = (u32 *)d->tmp;
	memcpy(old, dst, GFX9_LANES * sizeof(u32));
	ret = gfx9_run_vop(d, w, in, v);
	if (ret)
		return ret;
	for (l = 0; l < GFX9_LANES; l++)
		if (exec & BIT_ULL(l))
			dst[l] = sdwa_dst(dst[l], old[l], dst_sel, unused);
	return 0;
}
