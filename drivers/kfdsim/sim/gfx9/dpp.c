// SPDX-License-Identifier: GPL-2.0
/*
 * DPP (data parallel primitives): a VOP1 or VOP2 instruction whose src0
 * field is 250 is followed by a DPP dword, and src0 is then a VGPR read
 * from another lane of the wave:
 *
 * DPP: src0 [7:0], dpp_ctrl [16:8], bound_ctrl [19], src0_neg [20],
 *      src0_abs [21], src1_neg [22], src1_abs [23], bank_mask [27:24],
 *      row_mask [31:28]
 *
 * dpp_ctrl picks, for lane l of a row of 16 lanes, the lane it reads:
 *   0x000-0x0ff quad_perm    quad base + ctrl[2*(l%4)+1 : 2*(l%4)]
 *   0x101-0x10f row_shl:n    l + n, inside the row
 *   0x111-0x11f row_shr:n    l - n, inside the row
 *   0x121-0x12f row_ror:n    row base + (l - n) mod 16
 *   0x130 wave_shl:1 (l + 1), 0x134 wave_rol:1 ((l + 1) mod 64),
 *   0x138 wave_shr:1 (l - 1), 0x13c wave_ror:1 ((l - 1) mod 64)
 *   0x140 row_mirror         row base + 15 - l % 16
 *   0x141 row_half_mirror    half-row base + 7 - l % 8
 *   0x142 row_bcast:15       lane 15 of the previous row (rows 1-3)
 *   0x143 row_bcast:31       lane 31 (rows 2 and 3)
 * Anything else is reserved and traps.
 *
 * A lane writes its result only if its row's bit of row_mask and its
 * bank's (l / 4 % 4) bit of bank_mask are set. When the lane it reads
 * does not exist (shifted out, row 0 of a broadcast) or is not in EXEC,
 * the lane reads 0 if bound_ctrl is set (LLVM spells it "bound_ctrl:0"),
 * and otherwise does not write at all.
 *
 * gfx9 has no DPP form of VOPC and none with 64-bit operands; the engine
 * traps on them, and on v_madmk/v_madak (their second dword is the
 * constant). The operation itself is the ordinary one: src0 arrives as
 * the permuted row (GFX9_SRC_EXT1) and the lanes that do not write are
 * taken out of EXEC while it runs.
 */
#include <linux/bits.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "gfx9.h"

/*
 * Can @op (VOP3 numbering) take a DPP or SDWA dword? Not when it has a
 * 64-bit operand or a literal of its own.
 */
bool gfx9_vop_ext_ok(unsigned int op)
{
	switch (op) {
	case 0x12 ... 0x13:	/* v_cmp(x)_class_f64 */
	case 0x60 ... 0x7f:	/* v_cmp(x)_*_f64 */
	case 0xe0 ... 0xff:	/* v_cmp(x)_*_{i,u}64 */
	case 0x117 ... 0x118:	/* v_madmk_f32, v_madak_f32 */
	case 0x143 ... 0x144:	/* v_cvt_i32_f64, v_cvt_f64_i32 */
	case 0x14f ... 0x150:	/* v_cvt_f32_f64, v_cvt_f64_f32 */
	case 0x155 ... 0x15a:	/* v_cvt_{u32_f64,f64_u32}, trunc..floor */
	case 0x165 ... 0x166:	/* v_rcp_f64, v_rsq_f64 */
	case 0x168:		/* v_sqrt_f64 */
	case 0x170 ... 0x172:	/* v_frexp_*_f64, v_fract_f64 */
		return false;
	default:
		return op < 0x1c0;
	}
}

/* The lane that lane @l reads under @ctrl, or -1 if there is none. */
static int dpp_lane(unsigned int ctrl, unsigned int l)
{
	unsigned int row = l & ~15u, n = ctrl & 15;
	int s;

	if (ctrl <= 0xff)
		return (l & ~3u) + ((ctrl >> (2 * (l & 3))) & 3);
	switch (ctrl & ~15u) {
	case 0x100:	/* row_shl */
		s = (l & 15) + n;
		return s < 16 ? row + s : -1;
	case 0x110:	/* row_shr */
		s = (int)(l & 15) - (int)n;
		return s >= 0 ? row + s : -1;
	case 0x120:	/* row_ror */
		return row + (((l & 15) - n) & 15);
	default:
		break;
	}
	switch (ctrl) {
	case 0x130:	/* wave_shl:1 */
		return l < 63 ? l + 1 : -1;
	case 0x134:	/* wave_rol:1 */
		return (l + 1) & 63;
	case 0x138:	/* wave_shr:1 */
		return l ? (int)l - 1 : -1;
	case 0x13c:	/* wave_ror:1 */
		return (l - 1) & 63;
	case 0x140:	/* row_mirror */
		return row + 15 - (l & 15);
	case 0x141:	/* row_half_mirror */
		return (l & ~7u) + 7 - (l & 7);
	case 0x142:	/* row_bcast:15 */
		return row ? (int)row - 1 : -1;
	default:	/* 0x143 row_bcast:31 */
		return l >= 32 ? 31 : -1;
	}
}

static bool dpp_ctrl_valid(unsigned int ctrl)
{
	if (ctrl <= 0xff)
		return true;
	switch (ctrl & ~15u) {
	case 0x100:
	case 0x110:
	case 0x120:
		return ctrl & 15;	/* a shift of 0 is reserved */
	default:
		break;
	}
	return ctrl == 0x130 || ctrl == 0x134 || ctrl == 0x138 ||
	       ctrl == 0x13c || (ctrl >= 0x140 && ctrl <= 0x143);
}

/* The lanes that row_mask and bank_mask let write. */
static u64 dpp_write_mask(u32 dpp)
{
	unsigned int row_mask = (dpp >> 28) & 15, bank_mask = (dpp >> 24) & 15;
	u64 m = 0;
	unsigned int l;

	for (l = 0; l < GFX9_LANES; l++)
		if ((row_mask & BIT(l / 16)) && (bank_mask & BIT((l / 4) & 3)))
			m |= BIT_ULL(l);
	return m;
}

/*
 * Run @v with EXEC narrowed to @exec for the operation, then give EXEC
 * back, unless the operation itself wrote it (v_cmpx, a VOPC or
 * v_readfirstlane naming EXEC).
 */
int gfx9_vop_ext_run(struct gfx9_disp *d, struct gfx9_wave *w,
		     struct gfx9_insn *in, struct gfx9_vop *v, u64 exec)
{
	const struct gfx9_vop_op *op = gfx9_vop_op(in->op);
	u32 lo = w->sreg[GFX9_EXEC_LO], hi = w->sreg[GFX9_EXEC_HI];
	bool keep_lo = false, keep_hi = false;
	int ret;

	if (in->op < 0x100 && op->name &&
	    (strstr(op->name, "cmpx") || v->sdst == GFX9_EXEC_LO)) {
		keep_lo = true;
		keep_hi = true;
	} else if (op->flags & GFX9_VOP_SGPR_DST) {
		keep_lo = v->vdst == GFX9_EXEC_LO;
		keep_hi = v->vdst == GFX9_EXEC_HI;
	}
	gfx9_set_sreg64(w, GFX9_EXEC_LO, exec);
	ret = gfx9_run_vop(d, w, in, v);
	if (!keep_lo || ret)
		w->sreg[GFX9_EXEC_LO] = lo;
	if (!keep_hi || ret)
		w->sreg[GFX9_EXEC_HI] = hi;
	return ret;
}

int gfx9_vop_dpp(struct gfx9_disp *d, struct gfx9_wave *w,
		 struct gfx9_insn *in, struct gfx9_vop *v, bool vopc)
{
	u32 dpp = in->dw[1], *row, *x = d->ext[1];
	unsigned int ctrl = (dpp >> 8) & 0x1ff, reg = dpp & 0xff, l;
	u64 exec = gfx9_exec(w), wmask;
	bool bound_zero = dpp & BIT(19);
	int s;

	if (vopc)
		return gfx9_illegal(d, w, in, "gfx9 has no DPP form of VOPC");
	if (!gfx9_vop_ext_ok(in->op) ||
	    (gfx9_vop_op(in->op)->flags & GFX9_VOP_SGPR_DST))
		return gfx9_illegal(d, w, in, "no DPP form of this opcode");
	if (!dpp_ctrl_valid(ctrl))
		return gfx9_illegal(d, w, in, "reserved dpp_ctrl");
	if (reg >= d->nvgpr)
		return gfx9_illegal(d, w, in, "VGPR beyond the allocation");
	row = gfx9_vreg(w, reg);
	wmask = exec & dpp_write_mask(dpp);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(wmask & BIT_ULL(l)))
			continue;
		s = dpp_lane(ctrl, l);
		if (s >= 0 && (exec & BIT_ULL(s)))
			x[l] = row[s];
		else if (bound_zero)
			x[l] = 0;
		else
			wmask &= ~BIT_ULL(l);
	}
	v->ext = true;
	v->src[0] = GFX9_SRC_EXT1;
	v->neg = ((dpp >> 20) & 1) | ((dpp >> 22) & 1) << 1;
	v->abs = ((dpp >> 21) & 1) | ((dpp >> 23) & 1) << 1;
	return gfx9_vop_ext_run(d, w, in, v, wmask);
}
