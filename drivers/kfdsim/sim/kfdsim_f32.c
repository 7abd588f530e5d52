// SPDX-License-Identifier: GPL-2.0
/*
 * binary32 addition with round to nearest, ties to even, and full
 * subnormal support (no flush to zero), using integer arithmetic only.
 *
 * The significands are aligned in a 64-bit word with 39 bits below the
 * result's last place, so the sum is exact unless the exponents are more
 * than 39 apart. Bits shifted out beyond that are kept as a sticky bit in
 * bit 0, far below the rounding point, so an inexact sum is never taken
 * for an exact one or an exact tie.
 */
#include "kfdsim_f32.h"

#define F32_SIGN	0x80000000u
#define F32_EXP_MAX	0xffu		/* exponent field of Inf and NaN */
#define F32_FRAC_BITS	23
#define F32_FRAC_MASK	0x007fffffu
#define F32_QUIET	0x00400000u	/* the quiet bit of a NaN */
#define F32_DEFAULT_NAN	0x7fc00000u

/* Extra bits below the result's last place while computing. */
#define F32_EXTRA	39
/* Position of the implicit leading one of a normalised operand. */
#define F32_TOP		(F32_FRAC_BITS + F32_EXTRA)

static bool f32_is_nan(u32 x)
{
	return (x & ~F32_SIGN) > (F32_EXP_MAX << F32_FRAC_BITS);
}

/*
 * Split @x (finite) into a biased exponent and a significand. Subnormals
 * have the exponent of the smallest normal and no implicit one, so both
 * kinds share one scale.
 */
static void f32_unpack(u32 x, int *exp, u64 *sig)
{
	u32 field = (x >> F32_FRAC_BITS) & F32_EXP_MAX;
	u64 frac = x & F32_FRAC_MASK;

	if (field) {
		*exp = field;
		*sig = (frac | (1ull << F32_FRAC_BITS)) << F32_EXTRA;
	} else {
		*exp = 1;
		*sig = frac << F32_EXTRA;
	}
}

/* @sig >> @shift, with bit 0 set if any one bit was shifted out. */
static u64 f32_shift_sticky(u64 sig, int shift)
{
	if (shift >= 64)
		return sig != 0;
	return (sig >> shift) | ((sig & ((1ull << shift) - 1)) != 0);
}

/**
 * kfdsim_f32_add - add two binary32 values
 * @a: bit pattern of the first operand
 * @b: bit pattern of the second operand
 *
 * A NaN operand is returned quieted (@a's if both are NaN); Inf + -Inf is
 * the default NaN. An exact zero sum is +0 unless both operands are -0.
 *
 * Return: the bit pattern of the correctly rounded sum.
 */
u32 kfdsim_f32_add(u32 a, u32 b)
{
	u32 sign, tmp;
	u64 sig_a, sig_b, sig, half, rest;
	int exp_a, exp_b, exp;

	if (f32_is_nan(a))
		return a | F32_QUIET;
	if (f32_is_nan(b))
		return b | F32_QUIET;

	/* Order by magnitude, so that |a| >= |b| and a - b is not negative. */
	if ((b & ~F32_SIGN) > (a & ~F32_SIGN)) {
		tmp = a;
		a = b;
		b = tmp;
	}
	sign = a & F32_SIGN;

	/* Inf + finite is Inf; Inf + Inf depends on the signs. */
	if ((a & ~F32_SIGN) == F32_EXP_MAX << F32_FRAC_BITS) {
		if (b == (a ^ F32_SIGN))
			return F32_DEFAULT_NAN;
		return a;
	}

	f32_unpack(a, &exp_a, &sig_a);
	f32_unpack(b, &exp_b, &sig_b);
	sig_b = f32_shift_sticky(sig_b, exp_a - exp_b);
	if ((a ^ b) & F32_SIGN)
		sig = sig_a - sig_b;
	else
		sig = sig_a + sig_b;

	/* Exact zero: -0 only for (-0) + (-0), as round to nearest demands. */
	if (!sig)
		return a & b & F32_SIGN;

	/* Normalise: a carry out moves right, cancellation moves left. */
	exp = exp_a;
	if (sig >> (F32_TOP + 1)) {
		sig = f32_shift_sticky(sig, 1);
		exp++;
	} else {
		/* Stop at the smallest exponent: the result is subnormal. */
		while (!(sig >> F32_TOP) && exp > 1) {
			sig <<= 1;
			exp--;
		}
	}
	if (exp >= (int)F32_EXP_MAX)
		return sign | (F32_EXP_MAX << F32_FRAC_BITS);

	/* Round to nearest, ties to even. */
	half = 1ull << (F32_EXTRA - 1);
	rest = sig & ((1ull << F32_EXTRA) - 1);
	sig >>= F32_EXTRA;
	if (rest > half || (rest == half && (sig & 1)))
		sig++;

	/*
	 * Adding the significand, implicit one included, to (exp - 1) in the
	 * exponent field gives the right encoding in every case: a normal
	 * number, a subnormal (exp is 1 and there is no implicit one), a
	 * subnormal rounded up to the smallest normal, and a carry out of
	 * rounding, which also turns the largest finite value into Inf.
	 */
	return sign + ((u32)(exp - 1) << F32_FRAC_BITS) + (u32)sig;
}
