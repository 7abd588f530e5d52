// SPDX-License-Identifier: GPL-2.0
/*
 * Vector memory through a buffer resource (MUBUF), and the private
 * (scratch) segment that MUBUF, SCRATCH_* and FLAT addresses in the
 * private aperture all reach.
 *
 * dword 0: [31:26] 0x38, op [24:18], slc [17], lds [16], glc [14],
 *          idxen [13], offen [12], offset [11:0] (unsigned)
 * dword 1: soffset [31:24], tfe [23], srsrc [20:16] (SGPR / 4),
 *          vdata [15:8], vaddr [7:0]
 *
 * The buffer resource (four SGPRs, gfx9 layout):
 *   word 0-1: base [47:0], stride [61:48], swizzle enable [63]
 *   word 2:   num_records
 *   word 3:   index stride [22:21] (8 << n), add_tid_enable [23]
 *
 * Per lane: index = (idxen ? vaddr : 0) + (add_tid ? lane : 0), offset =
 * (offen ? vaddr[+1] : 0) + inst_offset. Unswizzled, the address is base
 * + soffset + index * stride + offset; swizzled, elements of 4 bytes of
 * index_stride consecutive indices are interleaved:
 *   base + soffset + ((index / istride) * stride + (offset / 4) * 4) *
 *   istride + (index % istride) * 4 + offset % 4
 * This is how ROCr's scratch descriptor (stride 0, swizzled, index stride
 * 64, add_tid) lays out a wave's private memory: dword k of lane l is at
 * wave base + k * 256 + l * 4. SCRATCH_* and private aperture FLAT
 * addresses use the same layout from FLAT_SCRATCH, so all three see the
 * same bytes.
 *
 * Range check: with stride 0 an access out of [0, num_records) in offset,
 * otherwise an index >= num_records, is out of range: loads return 0,
 * stores are dropped, atomics do neither and return 0. The check covers
 * the whole access ("all or nothing"): the bytes moved, a format's whole
 * element, an atomic's 4 or 8 bytes. Everything else goes through the
 * process's GPU page table; a fault stops the queue.
 *
 * Atomics (0x40-0x4c, 0x60-0x6c for 64 bits) are those of FLAT
 * (gfx9_atomic()): vdata holds the operand (cmpswap: the value to store,
 * then the compare value); with glc the value before the operation comes
 * back in vdata's first register (two for 64 bits). A 64-bit atomic
 * through a swizzled resource would straddle two elements: it traps.
 *
 * Format loads and stores (0x00-0x07) convert through the resource's
 * word 3: DST_SEL_X/Y/Z/W [11:0] (3 bits each: 0 gives 0, 1 gives 1,
 * 4-7 the element's X-W, 2 and 3 reserved), NUM_FORMAT [14:12] and
 * DATA_FORMAT [18:15]. See mubuf_fmt() for the formats modelled.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "gfx9.h"

#define MUBUF_ELEMENT		4

struct mubuf_rsrc {
	u64 base;
	u32 stride;
	u32 records;
	u32 istride;
	u32 word3;
	bool swizzle;
	bool add_tid;
};

static void mubuf_rsrc(const struct gfx9_wave *w, unsigned int sgpr,
		       struct mubuf_rsrc *r)
{
	const u32 *s = &w->sreg[sgpr];

	r->base = s[0] | (u64)(s[1] & 0xffff) << 32;
	r->stride = (s[1] >> 16) & 0x3fff;
	r->swizzle = s[1] & BIT(31);
	r->records = s[2];
	r->istride = 8u << ((s[3] >> 21) & 3);
	r->add_tid = s[3] & BIT(23);
	r->word3 = s[3];
}

/*
 * Move @len bytes at swizzled private byte @off of @lane, one 4-byte
 * element at a time, from or to @base (a wave's private segment).
 */
static int gfx9_swizzled_xfer(struct gfx9_disp *d, u64 base, u32 istride,
			      u64 hi, unsigned int lane, u64 off, u8 *buf,
			      u32 len, bool write)
{
	u32 n;
	u64 va;
	int ret;

	while (len) {
		n = min_t(u32, len, MUBUF_ELEMENT - off % MUBUF_ELEMENT);
		va = base + (hi + off / MUBUF_ELEMENT * MUBUF_ELEMENT) * istride +
		     lane * MUBUF_ELEMENT + off % MUBUF_ELEMENT;
		ret = write ? gfx9_mem_write(d, va, buf, n) :
			      gfx9_mem_read(d, va, buf, n);
		if (ret)
			return ret;
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/**
 * gfx9_scratch_xfer - a lane's access to its private segment
 * @d: the dispatch
 * @w: the wave; its FLAT_SCRATCH is the wave's private base
 * @lane: the lane
 * @off: the lane's private byte offset
 * @buf: data
 * @len: bytes
 * @write: store
 *
 * SCRATCH_* instructions and FLAT addresses in the private aperture. The
 * layout is the one of ROCr's scratch buffer resource (see above).
 *
 * Return: 0 or -EFAULT (the fault filled).
 */
int gfx9_scratch_xfer(struct gfx9_disp *d, struct gfx9_wave *w,
		      unsigned int lane, u64 off, void *buf, u32 len,
		      bool write)
{
	return gfx9_swizzled_xfer(d, gfx9_sreg64(w, GFX9_FLAT_SCR_LO),
				  GFX9_LANES, 0, lane, off, buf, len, write);
}

/* Is an access of @len bytes at @index, @offset outside the resource? */
static bool mubuf_out_of_range(const struct mubuf_rsrc *r, u32 index,
			       u32 offset, u32 len)
{
	return r->stride == 0 ? (u64)offset + len > r->records :
				index >= r->records;
}

/* One lane's access through the resource, range-checked. */
static int mubuf_lane_xfer(struct gfx9_disp *d, const struct mubuf_rsrc *r,
			   u32 soffset, unsigned int lane, u32 index,
			   u32 offset, u8 *buf, u32 len, bool write)
{
	u64 base = r->base + soffset;

	if (mubuf_out_of_range(r, index, offset, len)) {
		if (!write)
			memset(buf, 0, len);
		return 0;
	}
	if (r->swizzle)
		return gfx9_swizzled_xfer(d, base, r->istride,
					  (u64)(index / r->istride) * r->stride,
					  index % r->istride, offset, buf, len,
					  write);
	base += (u64)index * r->stride + offset;
	return write ? gfx9_mem_write(d, base, buf, len) :
		       gfx9_mem_read(d, base, buf, len);
}

/* The operands of a MUBUF instruction, checked by mubuf_operands(). */
struct mubuf_args {
	struct mubuf_rsrc r;
	u32 soffset;
	u32 vaddr;
	u32 vdata;
	u32 offset;
	bool offen;
	bool idxen;
};

/*
 * Check the fields of MUBUF instruction @in (vdata spans @nregs VGPRs) and
 * read its resource and soffset into @m.
 */
static int mubuf_operands(struct gfx9_disp *d, struct gfx9_wave *w,
			  const struct gfx9_insn *in, u32 nregs,
			  struct mubuf_args *m)
{
	u32 a = in->dw[0], b = in->dw[1];
	u32 srsrc = ((b >> 16) & 0x1f) * 4, soff_code = b >> 24;

	m->vaddr = b & 0xff;
	m->vdata = (b >> 8) & 0xff;
	m->offset = a & 0xfff;
	m->offen = a & BIT(12);
	m->idxen = a & BIT(13);
	if (a & BIT(16))
		return gfx9_illegal(d, w, in, "MUBUF lds is not implemented");
	if (b & BIT(23))
		return gfx9_illegal(d, w, in, "MUBUF tfe is not implemented");
	if (m->vdata + nregs > d->nvgpr ||
	    ((m->offen || m->idxen) &&
	     m->vaddr + (m->offen && m->idxen) >= d->nvgpr))
		return gfx9_illegal(d, w, in, "MUBUF registers");
	if (srsrc + 3 > GFX9_SGPR_LAST || soff_code == GFX9_SRC_LITERAL ||
	    !gfx9_ssrc_valid(soff_code))
		return gfx9_illegal(d, w, in, "MUBUF resource or soffset");
	mubuf_rsrc(w, srsrc, &m->r);
	m->soffset = gfx9_ssrc32(d, w, in, soff_code, GFX9_B32);
	return 0;
}

/* Lane @l's index and offset (see the top of the file). */
static void mubuf_lane_addr(const struct gfx9_wave *w,
			    const struct mubuf_args *m, unsigned int l,
			    u32 *index, u32 *offset)
{
	*index = m->idxen ? gfx9_vreg(w, m->vaddr)[l] : 0;
	if (m->r.add_tid)
		*index += l;
	*offset = m->offset +
		  (m->offen ? gfx9_vreg(w, m->vaddr + m->idxen)[l] : 0);
}

/*
 * Loads (0x10-0x17), stores (0x18-0x1f) and the d16 loads (0x20-0x25)
 * that write one half of the destination and keep the other.
 */
static int mubuf_rw(struct gfx9_disp *d, struct gfx9_wave *w,
		    const struct gfx9_insn *in)
{
	static const u8 bytes[8] = { 1, 1, 2, 2, 4, 8, 12, 16 };
	u32 op = (in->dw[0] >> 18) & 0x7f;
	bool d16 = op >= 0x20, store = op >= 0x18 && !d16;
	u32 len = d16 ? (op >= 0x24 ? 2 : 1) : bytes[op & 7];
	u32 n = DIV_ROUND_UP(len, 4), val[4], index, offset, i, old;
	u64 exec = gfx9_exec(w);
	struct mubuf_args m;
	unsigned int l;
	int ret;

	ret = mubuf_operands(d, w, in, n, &m);
	if (ret)
		return ret;
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		mubuf_lane_addr(w, &m, l, &index, &offset);
		val[0] = 0;
		for (i = 0; store && i < n; i++)
			val[i] = gfx9_vreg(w, m.vdata + i)[l];
		/* The _d16_hi stores take the high half of the dword. */
		if (op == 0x19 || op == 0x1b)
			val[0] >>= 16;
		ret = mubuf_lane_xfer(d, &m.r, m.soffset, l, index, offset,
				      (u8 *)val, len, store);
		if (ret)
			return ret;
		if (store)
			continue;
		if (op == 0x11 || op == 0x22 || op == 0x23)
			val[0] = (s8)val[0];
		else if (op == 0x13)
			val[0] = (s16)val[0];
		if (d16) {
			old = gfx9_vreg(w, m.vdata)[l];
			val[0] &= 0xffff;
			/* Odd d16 opcodes load the high half. */
			val[0] = (op & 1) ? (old & 0xffff) | val[0] << 16 :
					    (old & 0xffff0000) | val[0];
		}
		for (i = 0; i < n; i++)
			gfx9_vreg(w, m.vdata + i)[l] = val[i];
	}
	return 0;
}

/*
 * The GPU VA of byte @offset of element @index; swizzled, the access must
 * stay inside one 4-byte element (the callers make sure).
 */
static u64 mubuf_lane_va(const struct mubuf_rsrc *r, u32 soffset, u32 index,
			 u32 offset)
{
	u64 base = r->base + soffset;

	if (!r->swizzle)
		return base + (u64)index * r->stride + offset;
	return base + ((u64)(index / r->istride) * r->stride +
		       offset / MUBUF_ELEMENT * MUBUF_ELEMENT) * r->istride +
	       (index % r->istride) * MUBUF_ELEMENT + offset % MUBUF_ELEMENT;
}

/*
 * buffer_atomic_* (0x40-0x4c) and their _x2 forms (0x60-0x6c): the
 * operation of FLAT's atomics through the page table; out of range, memory
 * is left alone and glc returns 0.
 */
static int mubuf_atomic(struct gfx9_disp *d, struct gfx9_wave *w,
			const struct gfx9_insn *in)
{
	u32 op = (in->dw[0] >> 18) & 0x7f, index, offset;
	unsigned int aop = gfx9_vmem_atomic_ops[op & 0xf], l;
	bool wide = op >= 0x60, glc = in->dw[0] & BIT(14);
	u32 size = wide ? 8 : 4, dregs = wide ? 2 : 1;
	u64 exec = gfx9_exec(w), src, cmp, old, va;
	struct mubuf_args m;
	int ret;

	ret = mubuf_operands(d, w, in,
			     aop == GFX9_ATOMIC_CMPSWAP ? 2 * dregs : dregs,
			     &m);
	if (ret)
		return ret;
	if (wide && m.r.swizzle)
		return gfx9_illegal(d, w, in,
				    "MUBUF 64-bit atomic through a swizzled resource");
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		mubuf_lane_addr(w, &m, l, &index, &offset);
		src = gfx9_vreg(w, m.vdata)[l];
		if (wide)
			src |= (u64)gfx9_vreg(w, m.vdata + 1)[l] << 32;
		cmp = 0;
		if (aop == GFX9_ATOMIC_CMPSWAP) {
			cmp = gfx9_vreg(w, m.vdata + dregs)[l];
			if (wide)
				cmp |= (u64)gfx9_vreg(w, m.vdata + 3)[l] << 32;
		}
		old = 0;
		if (!mubuf_out_of_range(&m.r, index, offset, size)) {
			va = mubuf_lane_va(&m.r, m.soffset, index, offset);
			if (va & (size - 1))
				return gfx9_illegal(d, w, in,
						    "misaligned atomic");
			ret = gfx9_mem_atomic(d, va, aop, wide, src, cmp, &old);
			if (ret)
				return ret;
		}
		if (!glc)
			continue;
		gfx9_vreg(w, m.vdata)[l] = old;
		if (wide)
			gfx9_vreg(w, m.vdata + 1)[l] = old >> 32;
	}
	return 0;
}

/* NUM_FORMAT values of the resource's word 3 */
#define MUBUF_NFMT_UINT		4
#define MUBUF_NFMT_SINT		5
#define MUBUF_NFMT_FLOAT	7
/* DST_SEL values */
#define MUBUF_SEL_0		0
#define MUBUF_SEL_1		1
#define MUBUF_SEL_X		4

/*
 * The element of DATA_FORMAT @dfmt as NUM_FORMAT @nfmt: *@comps
 * components of *@bytes each. Modelled: 32, 32_32, 32_32_32 and
 * 32_32_32_32 as UINT, SINT or FLOAT (the bits move unchanged), and for
 * loads only 8, 8_8, 8_8_8_8, 16, 16_16 and 16_16_16_16 as UINT or SINT
 * (zero- or sign-extended). False for every other combination.
 */
static bool mubuf_fmt(u32 dfmt, u32 nfmt, bool store, u32 *comps,
		      u32 *bytes)
{
	/* components << 4 | bytes of each, by DATA_FORMAT */
	static const u8 fmts[16] = {
		[1] = 0x11, [2] = 0x12, [3] = 0x21, [4] = 0x14, [5] = 0x22,
		[10] = 0x41, [11] = 0x24, [12] = 0x42, [13] = 0x34,
		[14] = 0x44,
	};
	bool integer = nfmt == MUBUF_NFMT_UINT || nfmt == MUBUF_NFMT_SINT;

	if (!fmts[dfmt])
		return false;
	*comps = fmts[dfmt] >> 4;
	*bytes = fmts[dfmt] & 0xf;
	if (*bytes == 4)
		return integer || nfmt == MUBUF_NFMT_FLOAT;
	return integer && !store;
}

/* Component of @bytes at @p, as a 32-bit value of its number format. */
static u32 mubuf_comp(const u8 *p, u32 bytes, bool sint)
{
	u16 h;
	u32 v;

	switch (bytes) {
	case 1:
		return sint ? (u32)(s8)p[0] : p[0];
	case 2:
		memcpy(&h, p, sizeof(h));
		return sint ? (u32)(s16)h : h;
	default:
		memcpy(&v, p, sizeof(v));
		return v;
	}
}

/*
 * buffer_load_format_x/xy/xyz/xyzw (0x00-0x03) and buffer_store_format_*
 * (0x04-0x07). A load reads the format's whole element and converts its
 * components; components the format lacks read as 0, 0, 0 and 1 (X, Y, Z,
 * W), and out of range all read as 0. Then destination i gets what
 * DST_SEL of i names: 0, 1 (1.0 for FLOAT), or a component. A store
 * writes the components the instruction has that the format has too,
 * unconverted (only 32-bit formats); it ignores DST_SEL.
 */
static int mubuf_format(struct gfx9_disp *d, struct gfx9_wave *w,
			const struct gfx9_insn *in)
{
	u32 op = (in->dw[0] >> 18) & 0x7f, n = (op & 3) + 1;
	u32 w3, dfmt, nfmt, comps, bytes, sel[4], one, index, offset, c[4];
	bool store = op & 4;
	u64 exec = gfx9_exec(w);
	struct mubuf_args m;
	unsigned int l, i;
	char why[96];
	u8 buf[16];
	int ret;

	ret = mubuf_operands(d, w, in, n, &m);
	if (ret)
		return ret;
	w3 = m.r.word3;
	dfmt = (w3 >> 15) & 0xf;
	nfmt = (w3 >> 12) & 7;
	if (!mubuf_fmt(dfmt, nfmt, store, &comps, &bytes)) {
		snprintf(why, sizeof(why),
			 "MUBUF %s format: data format %u, number format %u not implemented",
			 store ? "store" : "load", dfmt, nfmt);
		return gfx9_illegal(d, w, in, why);
	}
	for (i = 0; i < 4; i++) {
		sel[i] = (w3 >> (3 * i)) & 7;
		if (!store && i < n && sel[i] != MUBUF_SEL_0 &&
		    sel[i] != MUBUF_SEL_1 && sel[i] < MUBUF_SEL_X)
			return gfx9_illegal(d, w, in,
					    "MUBUF format: reserved DST_SEL");
	}
	one = nfmt == MUBUF_NFMT_FLOAT ? 0x3f800000 : 1;
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		mubuf_lane_addr(w, &m, l, &index, &offset);
		if (mubuf_out_of_range(&m.r, index, offset, comps * bytes)) {
			if (store)
				continue;
			memset(c, 0, sizeof(c));
		} else if (store) {
			for (i = 0; i < min(n, comps); i++)
				c[i] = gfx9_vreg(w, m.vdata + i)[l];
			ret = mubuf_lane_xfer(d, &m.r, m.soffset, l, index,
					      offset, (u8 *)c,
					      min(n, comps) * bytes, true);
			if (ret)
				return ret;
			continue;
		} else {
			ret = mubuf_lane_xfer(d, &m.r, m.soffset, l, index,
					      offset, buf, comps * bytes,
					      false);
			if (ret)
				return ret;
			c[1] = 0;
			c[2] = 0;
			c[3] = one;
			for (i = 0; i < comps; i++)
				c[i] = mubuf_comp(buf + i * bytes, bytes,
						  nfmt == MUBUF_NFMT_SINT);
		}
		for (i = 0; i < n; i++)
			gfx9_vreg(w, m.vdata + i)[l] =
				sel[i] >= MUBUF_SEL_X ? c[sel[i] - MUBUF_SEL_X] :
				sel[i] == MUBUF_SEL_1 ? one : 0;
	}
	return 0;
}

/* buffer_wbinvl1(_vol): simulated memory has no caches. */
static int mubuf_nop(struct gfx9_disp *d, struct gfx9_wave *w,
		     const struct gfx9_insn *in)
{
	return 0;
}

#define MB(n)	{ n, mubuf_rw }
#define MF(n)	{ n, mubuf_format }
#define MA(n)	{ n, mubuf_atomic }
const struct gfx9_op gfx9_mubuf_ops[128] = {
	[0x00] = MF("buffer_load_format_x"),
	[0x01] = MF("buffer_load_format_xy"),
	[0x02] = MF("buffer_load_format_xyz"),
	[0x03] = MF("buffer_load_format_xyzw"),
	[0x04] = MF("buffer_store_format_x"),
	[0x05] = MF("buffer_store_format_xy"),
	[0x06] = MF("buffer_store_format_xyz"),
	[0x07] = MF("buffer_store_format_xyzw"),
	[0x10] = MB("buffer_load_ubyte"), [0x11] = MB("buffer_load_sbyte"),
	[0x12] = MB("buffer_load_ushort"), [0x13] = MB("buffer_load_sshort"),
	[0x14] = MB("buffer_load_dword"), [0x15] = MB("buffer_load_dwordx2"),
	[0x16] = MB("buffer_load_dwordx3"), [0x17] = MB("buffer_load_dwordx4"),
	[0x18] = MB("buffer_store_byte"),
	[0x19] = MB("buffer_store_byte_d16_hi"),
	[0x1a] = MB("buffer_store_short"),
	[0x1b] = MB("buffer_store_short_d16_hi"),
	[0x1c] = MB("buffer_store_dword"),
	[0x1d] = MB("buffer_store_dwordx2"),
	[0x1e] = MB("buffer_store_dwordx3"),
	[0x1f] = MB("buffer_store_dwordx4"),
	[0x20] = MB("buffer_load_ubyte_d16"),
	[0x21] = MB("buffer_load_ubyte_d16_hi"),
	[0x22] = MB("buffer_load_sbyte_d16"),
	[0x23] = MB("buffer_load_sbyte_d16_hi"),
	[0x24] = MB("buffer_load_short_d16"),
	[0x25] = MB("buffer_load_short_d16_hi"),
	[0x3e] = { "buffer_wbinvl1", mubuf_nop },
	[0x3f] = { "buffer_wbinvl1_vol", mubuf_nop },
	[0x40] = MA("buffer_atomic_swap"), [0x41] = MA("buffer_atomic_cmpswap"),
	[0x42] = MA("buffer_atomic_add"), [0x43] = MA("buffer_atomic_sub"),
	[0x44] = MA("buffer_atomic_smin"), [0x45] = MA("buffer_atomic_umin"),
	[0x46] = MA("buffer_atomic_smax"), [0x47] = MA("buffer_atomic_umax"),
	[0x48] = MA("buffer_atomic_and"), [0x49] = MA("buffer_atomic_or"),
	[0x4a] = MA("buffer_atomic_xor"), [0x4b] = MA("buffer_atomic_inc"),
	[0x4c] = MA("buffer_atomic_dec"),
	[0x60] = MA("buffer_atomic_swap_x2"),
	[0x61] = MA("buffer_atomic_cmpswap_x2"),
	[0x62] = MA("buffer_atomic_add_x2"), [0x63] = MA("buffer_atomic_sub_x2"),
	[0x64] = MA("buffer_atomic_smin_x2"),
	[0x65] = MA("buffer_atomic_umin_x2"),
	[0x66] = MA("buffer_atomic_smax_x2"),
	[0x67] = MA("buffer_atomic_umax_x2"),
	[0x68] = MA("buffer_atomic_and_x2"), [0x69] = MA("buffer_atomic_or_x2"),
	[0x6a] = MA("buffer_atomic_xor_x2"),
	[0x6b] = MA("buffer_atomic_inc_x2"),
	[0x6c] = MA("buffer_atomic_dec_x2"),
};
