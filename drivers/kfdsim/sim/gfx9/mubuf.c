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
 * stores are dropped. Everything else goes through the process's GPU page
 * table; a fault stops the queue.
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

/* One lane's access through the resource, range-checked. */
static int mubuf_lane_xfer(struct gfx9_disp *d, const struct mubuf_rsrc *r,
			   u32 soffset, unsigned int lane, u32 index,
			   u32 offset, u8 *buf, u32 len, bool write)
{
	u64 base = r->base + soffset;

	if (r->stride == 0 ? (u64)offset + len > r->records :
			     index >= r->records) {
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

/*
 * Loads (0x10-0x17), stores (0x18-0x1f) and the d16 loads (0x20-0x25)
 * that write one half of the destination and keep the other.
 */
static int mubuf_rw(struct gfx9_disp *d, struct gfx9_wave *w,
		    const struct gfx9_insn *in)
{
	static const u8 bytes[8] = { 1, 1, 2, 2, 4, 8, 12, 16 };
	u32 a = in->dw[0], b = in->dw[1], op = (a >> 18) & 0x7f;
	u32 vaddr = b & 0xff, vdata = (b >> 8) & 0xff;
	u32 srsrc = ((b >> 16) & 0x1f) * 4, soff_code = b >> 24;
	bool offen = a & BIT(12), idxen = a & BIT(13);
	bool d16 = op >= 0x20, store = op >= 0x18 && !d16;
	u32 len = d16 ? (op >= 0x24 ? 2 : 1) : bytes[op & 7];
	u32 n = DIV_ROUND_UP(len, 4), val[4], index, offset, soffset, i, old;
	u64 exec = gfx9_exec(w);
	struct mubuf_rsrc r;
	unsigned int l;
	int ret;

	if (a & BIT(16))
		return gfx9_illegal(d, w, in, "MUBUF lds is not implemented");
	if (b & BIT(23))
		return gfx9_illegal(d, w, in, "MUBUF tfe is not implemented");
	if (vdata + n > d->nvgpr ||
	    ((offen || idxen) && vaddr + (offen && idxen) >= d->nvgpr))
		return gfx9_illegal(d, w, in, "MUBUF registers");
	if (srsrc + 3 > GFX9_SGPR_LAST || soff_code == GFX9_SRC_LITERAL ||
	    !gfx9_ssrc_valid(soff_code))
		return gfx9_illegal(d, w, in, "MUBUF resource or soffset");
	mubuf_rsrc(w, srsrc, &r);
	soffset = gfx9_ssrc32(d, w, in, soff_code, GFX9_B32);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		index = idxen ? gfx9_vreg(w, vaddr)[l] : 0;
		if (r.add_tid)
			index += l;
		offset = (a & 0xfff) +
			 (offen ? gfx9_vreg(w, vaddr + idxen)[l] : 0);
		val[0] = 0;
		for (i = 0; store && i < n; i++)
			val[i] = gfx9_vreg(w, vdata + i)[l];
		/* The _d16_hi stores take the high half of the dword. */
		if (op == 0x19 || op == 0x1b)
			val[0] >>= 16;
		ret = mubuf_lane_xfer(d, &r, soffset, l, index, offset,
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
			old = gfx9_vreg(w, vdata)[l];
			val[0] &= 0xffff;
			/* Odd d16 opcodes load the high half. */
			val[0] = (op & 1) ? (old & 0xffff) | val[0] << 16 :
					    (old & 0xffff0000) | val[0];
		}
		for (i = 0; i < n; i++)
			gfx9_vreg(w, vdata + i)[l] = val[i];
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
const struct gfx9_op gfx9_mubuf_ops[128] = {
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
};
