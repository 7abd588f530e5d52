/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exact binary16 arithmetic of vop_f16.c, shared with the packed
 * operations of vop3p.c. Every function rounds once: to nearest even
 * where it takes @flush, which flushes subnormal inputs and results
 * (MODE.FP_DENORM[3:2] 0); as @fm says where it takes that (bit 0 the
 * flush, bits 2:1 MODE.FP_ROUND[3:2]; a bool flush is a valid @fm).
 */
#ifndef KFDSIM_GFX9_VOP_F16_H
#define KFDSIM_GFX9_VOP_F16_H

#include <linux/types.h>

struct gfx9_disp;
struct gfx9_wave;
struct gfx9_insn;
struct gfx9_src;

u16 f16_add(u16 a, u16 b, unsigned int fm);
u16 f16_mul(u16 a, u16 b, unsigned int fm);
u16 f16_fma(u16 a, u16 b, u16 c, unsigned int fm);
u16 f16_minmax(u16 a, u16 b, bool max, bool flush);
u16 f16_clamp(u16 r);
bool f16_flush(const struct gfx9_wave *w);
u32 f16_to_f32(u16 x, bool flush);
u16 f16_from_f64(u64 x, bool flush);
/* vop_fp.c, inside kernel_fpu_begin()/_end(): v_log/exp/sin/cos_f16. */
u64 gfx9_fp_transc16(unsigned int op, u32 x);
/* A vector operand whose inline float constants are f16 ones. */
void f16_vsrc(const struct gfx9_disp *d, const struct gfx9_wave *w,
	      const struct gfx9_insn *in, unsigned int code,
	      struct gfx9_src *s);

#endif /* KFDSIM_GFX9_VOP_F16_H */
