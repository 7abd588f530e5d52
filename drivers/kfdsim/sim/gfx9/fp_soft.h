/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exact binary32/binary64 arithmetic in integers (fp_soft.c): the fused
 * multiply-add of every rounding mode, rounded once, and the bit-level
 * helpers of the division and frexp/ldexp instructions. No FPU use, so
 * callable inside or outside a kernel_fpu_begin() section.
 */
#ifndef KFDSIM_GFX9_FP_SOFT_H
#define KFDSIM_GFX9_FP_SOFT_H

#include <linux/types.h>

/* MODE.FP_ROUND encodings (per precision). */
enum sf_round {
	SF_RNE = 0,	/* nearest, ties to even */
	SF_RUP = 1,	/* toward +infinity */
	SF_RDN = 2,	/* toward -infinity */
	SF_RTZ = 3,	/* toward zero */
};

/**
 * struct sf_env - how a result is rounded
 * @f32: the result is binary32 (else binary64)
 * @round: enum sf_round
 * @flush_in: subnormal operands read as zero
 * @flush_out: subnormal results become zero
 */
struct sf_env {
	bool f32;
	u8 round;
	bool flush_in;
	bool flush_out;
};

/* binary64 bits of a binary32 value (exact). */
u64 sf_widen(u32 x);

/*
 * @a * @b + @c * 2^@scale, exact, rounded once as @env says. Operands
 * are binary64 bits (binary32 ones widened by sf_widen()); the result is
 * in @env's format (binary32 in the low 32 bits).
 */
u64 sf_fma(u64 a, u64 b, u64 c, int scale, const struct sf_env *env);

/*
 * The rest take and return bits in the instruction's own format (binary32
 * in the low 32 bits when @f32). v_frexp_mant and v_frexp_exp_i32:
 */
u64 sf_frexp_mant(u64 x, bool f32, bool flush);
s32 sf_frexp_exp(u64 x, bool f32, bool flush);

/* @x * 2^@e rounded once (v_ldexp_f32/f64). */
u64 sf_ldexp(u64 x, s32 e, const struct sf_env *env);

/* v_div_scale: @vcc is set to the lane's VCC bit. */
u64 sf_div_scale(u64 s0, u64 s1, u64 s2, bool f32, bool *vcc);
/* v_div_fixup: @q quotient, @den denominator, @num numerator. */
u64 sf_div_fixup(u64 q, u64 den, u64 num, bool f32);

#endif /* KFDSIM_GFX9_FP_SOFT_H */
