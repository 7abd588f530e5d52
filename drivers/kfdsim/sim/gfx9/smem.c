// SPDX-License-Identifier: GPL-2.0
/*
 * Scalar memory: SMEM.
 *
 * dword 0: [31:26] 0x30, op [25:18], imm [17], glc [16], soe [14],
 *          sdata [12:6], sbase [5:0] (in SGPR pairs)
 * dword 1: offset [19:0] (bytes when imm, else an SGPR), soffset [31:25]
 *          (with soe)
 *
 * Loads go through the GPU page table like every other access; the low
 * two bits of the address are ignored, as the hardware does. Scalar loads
 * complete at once, so s_waitcnt has nothing to wait for.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>

#include "gfx9.h"

#define SMEM_MAX_DWORDS	16

static int smem_addr(struct gfx9_disp *d, struct gfx9_wave *w,
		     const struct gfx9_insn *in, u32 *off)
{
	u32 a = in->dw[0], b = in->dw[1];
	bool imm = a & BIT(17), soe = a & BIT(14);

	if (imm) {
		*off = b & 0xfffff;
	} else {
		if (!gfx9_ssrc_valid(b & 0x7f) || (b & 0x7f) > GFX9_EXEC_HI)
			return gfx9_illegal(d, w, in, "SMEM offset");
		*off = w->sreg[b & 0x7f];
	}
	if (soe) {
		if ((b >> 25) > GFX9_EXEC_HI)
			return gfx9_illegal(d, w, in, "SMEM soffset");
		*off += w->sreg[b >> 25];
	}
	return 0;
}

static int smem_load(struct gfx9_disp *d, struct gfx9_wave *w,
		     const struct gfx9_insn *in)
{
	u32 a = in->dw[0], op = (a >> 18) & 0xff;
	u32 sdata = (a >> 6) & 0x7f, sbase = (a & 0x3f) * 2;
	bool buffer = op >= 0x08;
	u32 n = 1u << (op & 7), off, i, buf[SMEM_MAX_DWORDS];
	u64 base, num_records = U64_MAX;
	int ret;

	if (sdata + n > GFX9_EXEC_HI + 1 || (n > 1 && (sdata & 1)) ||
	    sbase + (buffer ? 4 : 2) > GFX9_EXEC_HI + 1)
		return gfx9_illegal(d, w, in, "SMEM registers");
	ret = smem_addr(d, w, in, &off);
	if (ret)
		return ret;
	base = gfx9_sreg64(w, sbase);
	if (buffer) {
		/* V#: base [47:0], stride [61:48], num_records dword 2 */
		if ((w->sreg[sbase + 1] >> 16) & 0x3fff)
			return gfx9_illegal(d, w, in,
					    "s_buffer_load with a stride");
		base &= GENMASK_ULL(47, 0);
		num_records = w->sreg[sbase + 2];
	}
	for (i = 0; i < n; i++) {
		u64 o = (u64)(off & ~3u) + 4 * i;

		if (o + 4 > num_records) {
			buf[i] = 0;
			continue;
		}
		ret = gfx9_mem_read(d, (base + o) & ~3ull, &buf[i], 4);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++)
		w->sreg[sdata + i] = buf[i];
	return 0;
}

static int smem_store(struct gfx9_disp *d, struct gfx9_wave *w,
		      const struct gfx9_insn *in)
{
	u32 a = in->dw[0], op = (a >> 18) & 0xff;
	u32 sdata = (a >> 6) & 0x7f, sbase = (a & 0x3f) * 2;
	u32 n = 1u << (op & 3), off;
	int ret;

	if (sdata + n > GFX9_EXEC_HI + 1 || (n > 1 && (sdata & 1)))
		return gfx9_illegal(d, w, in, "SMEM registers");
	ret = smem_addr(d, w, in, &off);
	if (ret)
		return ret;
	return gfx9_mem_write(d, (gfx9_sreg64(w, sbase) + off) & ~3ull,
			      &w->sreg[sdata], 4 * n);
}

static int smem_nop(struct gfx9_disp *d, struct gfx9_wave *w,
		    const struct gfx9_insn *in)
{
	return 0;
}

/* s_memtime, s_memrealtime: the simulated GPU counts at 100 MHz. */
static int smem_time(struct gfx9_disp *d, struct gfx9_wave *w,
		     const struct gfx9_insn *in)
{
	u32 sdata = (in->dw[0] >> 6) & 0x7f;

	if (!gfx9_sdst_valid(sdata, true))
		return gfx9_illegal(d, w, in, "SMEM registers");
	gfx9_sdst64(w, sdata, div_u64(ktime_get_raw_ns(), 10));
	return 0;
}

const struct gfx9_op gfx9_smem_ops[256] = {
	[0x00] = { "s_load_dword", smem_load },
	[0x01] = { "s_load_dwordx2", smem_load },
	[0x02] = { "s_load_dwordx4", smem_load },
	[0x03] = { "s_load_dwordx8", smem_load },
	[0x04] = { "s_load_dwordx16", smem_load },
	[0x08] = { "s_buffer_load_dword", smem_load },
	[0x09] = { "s_buffer_load_dwordx2", smem_load },
	[0x0a] = { "s_buffer_load_dwordx4", smem_load },
	[0x0b] = { "s_buffer_load_dwordx8", smem_load },
	[0x0c] = { "s_buffer_load_dwordx16", smem_load },
	[0x10] = { "s_store_dword", smem_store },
	[0x11] = { "s_store_dwordx2", smem_store },
	[0x12] = { "s_store_dwordx4", smem_store },
	[0x20] = { "s_dcache_inv", smem_nop },
	[0x21] = { "s_dcache_wb", smem_nop },
	[0x22] = { "s_dcache_inv_vol", smem_nop },
	[0x23] = { "s_dcache_wb_vol", smem_nop },
	[0x24] = { "s_memtime", smem_time },
	[0x25] = { "s_memrealtime", smem_time },
};
