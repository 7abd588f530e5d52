// SPDX-License-Identifier: GPL-2.0
/*
 * The gfx9 instruction decoder: fetch, the table of encodings that tells
 * the formats apart, operand decoding (registers, inline constants,
 * literals) and the hand-off to the format's opcode table.
 *
 * A format is recognised by the fixed bits at the top of its first dword
 * (gfx9_formats[], tried in order: the narrower prefixes first). Each
 * format's opcode field then indexes that format's table; an empty entry,
 * a format without a table, or an operand the engine does not model is an
 * illegal instruction and traps the wave.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "gfx9.h"

enum gfx9_format {
	GFX9_FMT_SOP1,
	GFX9_FMT_SOPC,
	GFX9_FMT_SOPP,
	GFX9_FMT_SOPK,
	GFX9_FMT_SOP2,
	GFX9_FMT_SMEM,
	GFX9_FMT_VOP1,
	GFX9_FMT_VOPC,
	GFX9_FMT_VOP2,
	GFX9_FMT_VOP3P,
	GFX9_FMT_VOP3,
	GFX9_FMT_DS,
	GFX9_FMT_FLAT,
	GFX9_FMT_MUBUF,
	GFX9_FMT_MTBUF,
	GFX9_FMT_MIMG,
	GFX9_FMT_EXP,
	GFX9_FMT_VINTRP,
};

/**
 * struct gfx9_format_desc - how a format is recognised and laid out
 * @mask: the fixed bits of the first dword
 * @match: their value
 * @fmt: enum gfx9_format
 * @dwords: encoding length without a literal
 * @name: for the log
 */
struct gfx9_format_desc {
	u32 mask;
	u32 match;
	u8 fmt;
	u8 dwords;
	const char *name;
};

static const struct gfx9_format_desc gfx9_formats[] = {
	{ 0xff800000, 0xbe800000, GFX9_FMT_SOP1, 1, "SOP1" },
	{ 0xff800000, 0xbf000000, GFX9_FMT_SOPC, 1, "SOPC" },
	{ 0xff800000, 0xbf800000, GFX9_FMT_SOPP, 1, "SOPP" },
	{ 0xf0000000, 0xb0000000, GFX9_FMT_SOPK, 1, "SOPK" },
	{ 0xc0000000, 0x80000000, GFX9_FMT_SOP2, 1, "SOP2" },
	{ 0xfe000000, 0x7e000000, GFX9_FMT_VOP1, 1, "VOP1" },
	{ 0xfe000000, 0x7c000000, GFX9_FMT_VOPC, 1, "VOPC" },
	{ 0x80000000, 0x00000000, GFX9_FMT_VOP2, 1, "VOP2" },
	{ 0xfc000000, 0xc0000000, GFX9_FMT_SMEM, 2, "SMEM" },
	{ 0xff800000, 0xd3800000, GFX9_FMT_VOP3P, 2, "VOP3P" },
	{ 0xfc000000, 0xd0000000, GFX9_FMT_VOP3, 2, "VOP3" },
	{ 0xfc000000, 0xd8000000, GFX9_FMT_DS, 2, "DS" },
	{ 0xfc000000, 0xdc000000, GFX9_FMT_FLAT, 2, "FLAT" },
	{ 0xfc000000, 0xe0000000, GFX9_FMT_MUBUF, 2, "MUBUF" },
	{ 0xfc000000, 0xe8000000, GFX9_FMT_MTBUF, 2, "MTBUF" },
	{ 0xfc000000, 0xf0000000, GFX9_FMT_MIMG, 2, "MIMG" },
	{ 0xfc000000, 0xc4000000, GFX9_FMT_EXP, 2, "EXP" },
	{ 0xfc000000, 0xd4000000, GFX9_FMT_VINTRP, 1, "VINTRP" },
};

/**
 * gfx9_illegal - trap the wave on an instruction the engine cannot run
 * @d: the dispatch
 * @w: the wave; its PC is past the instruction
 * @in: the instruction
 * @what: what is wrong with it
 *
 * Return: -ENOEXEC, with the cause in @d->why for the log and the queue
 * error in @d->code.
 */
int gfx9_illegal(struct gfx9_disp *d, const struct gfx9_wave *w,
		 const struct gfx9_insn *in, const char *what)
{
	snprintf(d->why, sizeof(d->why),
		 "illegal instruction 0x%08x 0x%08x (%s) at pc 0x%llx (wave %u, workgroup %u), wave trapped",
		 in->dw[0], in->size > 4 ? in->dw[1] : 0, what,
		 w->pc - in->size, w->id, d->wg_index);
	d->code = KFDSIM_AQL_ERROR_ILLEGAL_INSTRUCTION;
	return -ENOEXEC;
}

/* ---- scalar operands ---- */

static const u32 gfx9_f32_consts[] = {
	0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000,
	0x40000000, 0xc0000000, 0x40800000, 0xc0800000, 0x3e22f983,
};

static const u64 gfx9_f64_consts[] = {
	0x3fe0000000000000ULL, 0xbfe0000000000000ULL,
	0x3ff0000000000000ULL, 0xbff0000000000000ULL,
	0x4000000000000000ULL, 0xc000000000000000ULL,
	0x4010000000000000ULL, 0xc010000000000000ULL,
	0x3fc45f306dc9c882ULL,
};

/* Is @code a scalar source the engine models? (VGPRs are not.) */
bool gfx9_ssrc_valid(unsigned int code)
{
	if (code <= GFX9_EXEC_HI)
		return code != 125;
	if (code <= GFX9_SRC_NEG_MAX)
		return true;
	if (code >= GFX9_SRC_SHARED_BASE && code <= GFX9_SRC_FLOAT_LAST)
		return true;
	return code == GFX9_SRC_VCCZ || code == GFX9_SRC_EXECZ ||
	       code == GFX9_SRC_SCC || code == GFX9_SRC_LITERAL;
}

/* Scalar destinations: SGPRs, FLAT_SCRATCH, XNACK, VCC, TTMPs, M0, EXEC. */
bool gfx9_sdst_valid(unsigned int code, bool wide)
{
	if (code > GFX9_EXEC_HI || code == 125)
		return false;
	if (!wide)
		return true;
	/* A pair starts at an even register and does not straddle M0. */
	return !(code & 1) && code != GFX9_M0;
}

static u32 gfx9_aperture_hi(unsigned int code)
{
	switch (code) {
	case GFX9_SRC_SHARED_BASE:
		return upper_32_bits(KFDSIM_LDS_BASE);
	case GFX9_SRC_SHARED_LIMIT:
		return upper_32_bits(KFDSIM_LDS_BASE + KFDSIM_APERTURE_SPAN);
	case GFX9_SRC_PRIVATE_BASE:
		return upper_32_bits(KFDSIM_SCRATCH_BASE);
	case GFX9_SRC_PRIVATE_LIMIT:
		return upper_32_bits(KFDSIM_SCRATCH_BASE + KFDSIM_APERTURE_SPAN);
	default:
		return 0;
	}
}

/* A constant operand (not a register), 64 bits as @kind reads it. */
static u64 gfx9_const(const struct gfx9_wave *w, const struct gfx9_insn *in,
		      unsigned int code, enum gfx9_kind kind)
{
	s64 v;

	if (code <= GFX9_SRC_INT_MAX) {
		v = code - GFX9_SRC_ZERO;
	} else if (code <= GFX9_SRC_NEG_MAX) {
		v = -(s64)(code - GFX9_SRC_INT_MAX);
	} else if (code >= GFX9_SRC_FLOAT_FIRST &&
		   code <= GFX9_SRC_FLOAT_LAST) {
		if (kind == GFX9_B32)
			return gfx9_f32_consts[code - GFX9_SRC_FLOAT_FIRST];
		return gfx9_f64_consts[code - GFX9_SRC_FLOAT_FIRST];
	} else if (code == GFX9_SRC_LITERAL) {
		/* A 64-bit float literal gives the high half. */
		if (kind == GFX9_F64)
			return (u64)in->lit << 32;
		return in->lit;
	} else if (code == GFX9_SRC_VCCZ) {
		return !gfx9_sreg64(w, GFX9_VCC_LO);
	} else if (code == GFX9_SRC_EXECZ) {
		return !gfx9_exec(w);
	} else if (code == GFX9_SRC_SCC) {
		return w->scc;
	} else {
		return gfx9_aperture_hi(code);
	}
	return kind == GFX9_B32 ? (u32)v : (u64)v;
}

/*
 * The value of scalar source @code of @in as @kind reads it, when it is the
 * same for every wave at every step (an inline constant, the literal, an
 * aperture): true and *@k. False for registers, SCC, VCCZ and EXECZ, and
 * for codes the engine does not model.
 */
bool gfx9_sconst(const struct gfx9_insn *in, unsigned int code,
		 enum gfx9_kind kind, u64 *k)
{
	if (code <= GFX9_EXEC_HI || code == GFX9_SRC_VCCZ ||
	    code == GFX9_SRC_EXECZ || code == GFX9_SRC_SCC ||
	    !gfx9_ssrc_valid(code))
		return false;
	*k = gfx9_const(NULL, in, code, kind);
	return true;
}

u32 gfx9_ssrc32(const struct gfx9_disp *d, const struct gfx9_wave *w,
		const struct gfx9_insn *in, unsigned int code,
		enum gfx9_kind kind)
{
	if (code <= GFX9_EXEC_HI)
		return w->sreg[code];
	return gfx9_const(w, in, code, kind);
}

u64 gfx9_ssrc64(const struct gfx9_disp *d, const struct gfx9_wave *w,
		const struct gfx9_insn *in, unsigned int code,
		enum gfx9_kind kind)
{
	if (code < GFX9_EXEC_HI)
		return gfx9_sreg64(w, code);
	if (code == GFX9_EXEC_HI)
		return w->sreg[code];
	return gfx9_const(w, in, code, kind);
}

void gfx9_sdst32(struct gfx9_wave *w, unsigned int code, u32 v)
{
	w->sreg[code] = v;
}

void gfx9_sdst64(struct gfx9_wave *w, unsigned int code, u64 v)
{
	gfx9_set_sreg64(w, code, v);
}

void gfx9_vsrc(const struct gfx9_disp *d, const struct gfx9_wave *w,
	       const struct gfx9_insn *in, unsigned int code,
	       enum gfx9_kind kind, struct gfx9_src *s)
{
	unsigned int r;

	if (code == GFX9_SRC_EXT0 || code == GFX9_SRC_EXT1) {
		/* Only after DPP or SDWA decoding; 32-bit operands only. */
		s->lo = d->ext[code == GFX9_SRC_EXT1];
		s->hi = NULL;
		s->k = 0;
		return;
	}
	if (code >= GFX9_SRC_VGPR0) {
		r = code - GFX9_SRC_VGPR0;
		s->lo = gfx9_vreg(w, r);
		/* Checked against the wave's VGPR count by the decoder. */
		s->hi = kind == GFX9_B32 ? NULL : gfx9_vreg(w, r + 1);
		s->k = 0;
		return;
	}
	s->lo = NULL;
	s->hi = NULL;
	s->k = kind == GFX9_B32 ? gfx9_ssrc32(d, w, in, code, kind) :
				  gfx9_ssrc64(d, w, in, code, kind);
}

/* ---- fetch and dispatch ---- */

static int gfx9_fetch(struct gfx9_disp *d, u64 pc, u32 *dw, unsigned int n)
{
	return kfdsim_vm_read(d->vm, pc, dw, n * sizeof(u32), d->fault);
}

/*
 * A VGPR operand must start inside the wave's allocation; the rows
 * allocated past it (GFX9_VGPR_PAD) take the high half of a 64-bit one.
 */
static bool gfx9_vsrc_ok(const struct gfx9_disp *d,
			 const struct gfx9_vop *v, unsigned int code)
{
	if (v->ext && (code == GFX9_SRC_EXT0 || code == GFX9_SRC_EXT1))
		return true;
	if (code >= GFX9_SRC_VGPR0)
		return code - GFX9_SRC_VGPR0 < d->nvgpr;
	return gfx9_ssrc_valid(code);
}

/*
 * What is wrong with VOP instruction @in, @v for this dispatch, or NULL:
 * every check depends on the encoding and the dispatch's VGPR count only,
 * so it holds for as long as the decoded instruction is cached.
 */
static const char *gfx9_vop_bad(const struct gfx9_disp *d,
				const struct gfx9_insn *in,
				const struct gfx9_vop *v)
{
	const struct gfx9_vop_op *op = gfx9_vop_op(in->op);
	unsigned int i;
	bool clamp_bad;

	if (!op->fn)
		return "VOP opcode not implemented";
	clamp_bad = v->clamp && !(op->flags & GFX9_VOP_CLAMP_INT);
	if (v->e64 && (op->flags & GFX9_VOP_VOP3B) && (v->abs || clamp_bad))
		return "VOP3b modifiers";
	if (!(op->flags & GFX9_VOP_FLOAT) &&
	    (v->abs || v->neg || clamp_bad || v->omod))
		return "modifiers on an integer VOP are not implemented";
	for (i = 0; i < 3; i++)
		if (!gfx9_vsrc_ok(d, v, v->src[i]))
			return "operand not supported";
	if (v->e64 && (v->src[0] == GFX9_SRC_LITERAL ||
		       v->src[1] == GFX9_SRC_LITERAL ||
		       v->src[2] == GFX9_SRC_LITERAL))
		return "literal in VOP3";
	/* VOPC, readlane and readfirstlane write SGPRs instead. */
	if (in->op >= 0x100 && !(op->flags & GFX9_VOP_SGPR_DST) &&
	    v->vdst >= d->nvgpr)
		return "VGPR beyond the allocation";
	if ((op->flags & GFX9_VOP_SGPR_DST) && !gfx9_sdst_valid(v->vdst, false))
		return "bad scalar destination";
	return NULL;
}

int gfx9_run_vop(struct gfx9_disp *d, struct gfx9_wave *w,
		 struct gfx9_insn *in, struct gfx9_vop *v)
{
	const char *bad = gfx9_vop_bad(d, in, v);

	if (bad)
		return gfx9_illegal(d, w, in, bad);
	return gfx9_vop_op(in->op)->fn(d, w, in, v);
}

/*
 * Decode a VOP1/VOPC/VOP2/VOP3 instruction into @e: its operands, and
 * whether it runs straight from the table (checked now) or through the
 * DPP or SDWA code each time. Returns NULL or what makes it illegal.
 */
static const char *gfx9_decode_vop(const struct gfx9_disp *d,
				   struct gfx9_decoded *e, u8 fmt)
{
	struct gfx9_insn *in = &e->in;
	struct gfx9_vop v = { .sdst = GFX9_VCC_LO };
	u32 a = in->dw[0], b = in->dw[1];
	const char *bad;

	switch (fmt) {
	case GFX9_FMT_VOP1:
		in->op = 0x140 + ((a >> 9) & 0xff);
		v.src[0] = a & 0x1ff;
		v.vdst = (a >> 17) & 0xff;
		break;
	case GFX9_FMT_VOPC:
		in->op = (a >> 17) & 0xff;
		v.src[0] = a & 0x1ff;
		v.src[1] = GFX9_SRC_VGPR0 + ((a >> 9) & 0xff);
		v.vdst = GFX9_VCC_LO;
		break;
	case GFX9_FMT_VOP2:
		in->op = 0x100 + ((a >> 25) & 0x3f);
		v.src[0] = a & 0x1ff;
		v.src[1] = GFX9_SRC_VGPR0 + ((a >> 9) & 0xff);
		v.vdst = (a >> 17) & 0xff;
		/* Carry-in and the cndmask select are VCC in this form. */
		v.src[2] = GFX9_VCC_LO;
		break;
	default:	/* VOP3 */
		in->op = (a >> 16) & 0x3ff;
		v.e64 = true;
		v.vdst = a & 0xff;
		v.clamp = (a >> 15) & 1;
		if (gfx9_vop_op(in->op)->flags & GFX9_VOP_VOP3B) {
			v.sdst = (a >> 8) & 0x7f;
		} else {
			v.abs = (a >> 8) & 7;
			v.opsel = (a >> 11) & 0xf;
			if (v.opsel &&
			    !(gfx9_vop_op(in->op)->flags & GFX9_VOP_OPSEL))
				return "op_sel";
		}
		v.src[0] = b & 0x1ff;
		v.src[1] = (b >> 9) & 0x1ff;
		v.src[2] = (b >> 18) & 0x1ff;
		v.omod = (b >> 27) & 3;
		v.neg = (b >> 29) & 7;
		/* VOPC in VOP3 form: the destination is an SGPR pair. */
		if (in->op < 0x100)
			v.sdst = v.vdst;
		break;
	}
	e->v = v;
	e->vopc = fmt == GFX9_FMT_VOPC;
	if (fmt != GFX9_FMT_VOP3 && v.src[0] == GFX9_SRC_DPP) {
		e->kind = GFX9_DEC_DPP;
		return NULL;
	}
	if (fmt != GFX9_FMT_VOP3 && v.src[0] == GFX9_SRC_SDWA) {
		e->kind = GFX9_DEC_SDWA;
		return NULL;
	}
	if (!gfx9_sdst_valid(v.sdst, true))
		return "bad scalar destination";
	bad = gfx9_vop_bad(d, in, &v);
	if (bad)
		return bad;
	e->kind = GFX9_DEC_VOP;
	e->vfn = gfx9_vop_fast(in, &e->v) ?: gfx9_vop_op(in->op)->fn;
	return NULL;
}

static const struct gfx9_op *gfx9_lookup(u8 fmt, u32 a)
{
	switch (fmt) {
	case GFX9_FMT_SOP1:
		return &gfx9_sop1_ops[(a >> 8) & 0xff];
	case GFX9_FMT_SOPC:
		return &gfx9_sopc_ops[(a >> 16) & 0x7f];
	case GFX9_FMT_SOPP:
		return &gfx9_sopp_ops[(a >> 16) & 0x7f];
	case GFX9_FMT_SOPK:
		return &gfx9_sopk_ops[(a >> 23) & 0x1f];
	case GFX9_FMT_SOP2:
		return &gfx9_sop2_ops[(a >> 23) & 0x7f];
	case GFX9_FMT_SMEM:
		return &gfx9_smem_ops[(a >> 18) & 0xff];
	case GFX9_FMT_DS:
		return &gfx9_ds_ops[(a >> 17) & 0xff];
	case GFX9_FMT_FLAT:
		return &gfx9_flat_ops[(a >> 18) & 0x7f];
	case GFX9_FMT_MUBUF:
		return &gfx9_mubuf_ops[(a >> 18) & 0x7f];
	default:
		return NULL;
	}
}

/*
 * Does the 32-bit encoding @a of @fmt carry a DPP or SDWA dword after it
 * (src0 250 or 249)? Then it has no literal.
 */
static bool gfx9_has_ext(u8 fmt, u32 a)
{
	if (fmt != GFX9_FMT_VOP1 && fmt != GFX9_FMT_VOP2 &&
	    fmt != GFX9_FMT_VOPC)
		return false;
	return (a & 0x1ff) == GFX9_SRC_DPP || (a & 0x1ff) == GFX9_SRC_SDWA;
}

/* Does the 32-bit encoding @a of @fmt carry a literal dword after it? */
static bool gfx9_has_literal(u8 fmt, u32 a)
{
	switch (fmt) {
	case GFX9_FMT_SOP2:
	case GFX9_FMT_SOPC:
		return (a & 0xff) == GFX9_SRC_LITERAL ||
		       ((a >> 8) & 0xff) == GFX9_SRC_LITERAL;
	case GFX9_FMT_SOP1:
		return (a & 0xff) == GFX9_SRC_LITERAL;
	case GFX9_FMT_SOPK:	/* s_setreg_imm32_b32 */
		return ((a >> 23) & 0x1f) == 0x14;
	case GFX9_FMT_VOP1:
	case GFX9_FMT_VOPC:
		return (a & 0x1ff) == GFX9_SRC_LITERAL;
	case GFX9_FMT_VOP2:
		/* v_madmk_f32 and v_madak_f32 always have one. */
		return (a & 0x1ff) == GFX9_SRC_LITERAL ||
		       ((a >> 25) & 0x3f) == 0x17 ||
		       ((a >> 25) & 0x3f) == 0x18;
	default:
		return false;
	}
}

/*
 * Fetch and decode the instruction at @w's PC into @e. Returns 0, -EFAULT
 * (the fetch faulted) or -ENOEXEC (illegal: the wave's PC moved past the
 * words fetched and the trap's cause is in @d->why).
 */
static int gfx9_decode(struct gfx9_disp *d, struct gfx9_wave *w,
		       struct gfx9_decoded *e)
{
	const struct gfx9_format_desc *f = NULL;
	struct gfx9_insn *in = &e->in;
	const struct gfx9_op *op;
	const char *bad = NULL;
	unsigned int i, n;
	int ret;

	memset(e, 0, sizeof(*e));
	ret = gfx9_fetch(d, w->pc, in->dw, 1);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(gfx9_formats); i++) {
		if ((in->dw[0] & gfx9_formats[i].mask) ==
		    gfx9_formats[i].match) {
			f = &gfx9_formats[i];
			break;
		}
	}
	if (!f) {	/* a reserved encoding (0xc8..0xcf, 0xe4..0xe7, ...) */
		in->size = 4;
		w->pc += 4;
		return gfx9_illegal(d, w, in, "no such encoding");
	}
	n = f->dwords;
	if (gfx9_has_ext(f->fmt, in->dw[0]))
		n++;
	else if (gfx9_has_literal(f->fmt, in->dw[0]))
		n++;
	if (n > 1) {
		ret = gfx9_fetch(d, w->pc + 4, in->dw + 1, n - 1);
		if (ret)
			return ret;
	}
	in->size = n * 4;
	if (n > f->dwords && !gfx9_has_ext(f->fmt, in->dw[0]))
		in->lit = in->dw[f->dwords];

	switch (f->fmt) {
	case GFX9_FMT_VOP1:
	case GFX9_FMT_VOPC:
	case GFX9_FMT_VOP2:
	case GFX9_FMT_VOP3:
		bad = gfx9_decode_vop(d, e, f->fmt);
		break;
	case GFX9_FMT_VOP3P:
		e->kind = GFX9_DEC_VOP3P;
		break;
	default:
		op = gfx9_lookup(f->fmt, in->dw[0]);
		if (!op || !op->fn)
			bad = f->name;
		else if (f->fmt <= GFX9_FMT_SOP2)
			e->fn = gfx9_sop_fast(in) ?: op->fn;
		else
			e->fn = op->fn;
		break;
	}
	if (bad) {
		w->pc += in->size;
		return gfx9_illegal(d, w, in, bad);
	}
	e->pc = w->pc;
	e->gen = d->icache_gen;
	return 0;
}

/* Run decoded instruction @e; @w's PC is already past it. */
static int gfx9_execute(struct gfx9_disp *d, struct gfx9_wave *w,
			const struct gfx9_decoded *e)
{
	struct gfx9_insn in;
	struct gfx9_vop v;

	switch (e->kind) {
	case GFX9_DEC_OP:
		return e->fn(d, w, &e->in);
	case GFX9_DEC_VOP:
		return e->vfn(d, w, &e->in, &e->v);
	default:
		break;
	}
	/* These change their copy of the instruction as they go. */
	in = e->in;
	v = e->v;
	switch (e->kind) {
	case GFX9_DEC_DPP:
		return gfx9_vop_dpp(d, w, &in, &v, e->vopc);
	case GFX9_DEC_SDWA:
		return gfx9_vop_sdwa(d, w, &in, &v, e->vopc);
	default:
		return gfx9_vop3p(d, w, &in);
	}
}

/**
 * gfx9_steps - execute up to @max instructions of a wave
 * @d: the dispatch
 * @w: the wave
 * @max: how many at most; fewer when the wave stops running (s_endpgm,
 *       s_barrier)
 * @insns: where to add the instructions started ([0]) and the lanes
 *         active in EXEC when each started ([1])
 *
 * Each instruction is decoded once and kept in the dispatch's
 * decoded-instruction cache (@d->icache, keyed by its GPU VA) for every
 * later execution by any wave of the dispatch. The cache is emptied when
 * the code may have changed: s_icache_inv, and any removal of entries
 * from the page table (a BO unmapped, or remapped, even between two
 * instructions: checked before each one). It lives as long as the
 * dispatch state: a new dispatch, and a wave restored from a context save
 * area, decode afresh.
 *
 * Return: 0, -EFAULT (a GPU page fault, also on fetch) or -ENOEXEC (the
 * wave trapped; the cause is in @d->why).
 */
int gfx9_steps(struct gfx9_disp *d, struct gfx9_wave *w, unsigned int max,
	       u64 *insns)
{
	struct gfx9_decoded *e;
	u64 gen, waves = 0, lanes = 0;
	unsigned int n;
	int ret = 0;

	for (n = 0; n < max && w->state == GFX9_WAVE_RUN; n++) {
		waves++;
		lanes += hweight64(gfx9_exec(w));
		gen = kfdsim_vm_unmap_gen(d->vm);
		if (unlikely(gen != d->vm_gen)) {
			d->vm_gen = gen;
			gfx9_icache_flush(d);
		}
		e = &d->icache[(w->pc >> 2) % GFX9_ICACHE_ENTRIES];
		if (unlikely(e->pc != w->pc || e->gen != d->icache_gen)) {
			ret = gfx9_decode(d, w, e);
			if (ret)
				break;	/* the entry stays empty */
		}
		w->pc += e->in.size;
		ret = gfx9_execute(d, w, e);
		if (ret)
			break;
	}
	insns[0] += waves;
	insns[1] += lanes;
	return ret;
}
