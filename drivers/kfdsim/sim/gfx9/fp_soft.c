// SPDX-License-Identifier: GPL-2.0
/*
 * binary32/binary64 arithmetic done exactly in integers and rounded once:
 * the fused multiply-add in all four rounding modes (v_fma_f64,
 * v_div_fmas_*, and v_fma_f32 outside round-to-nearest), ldexp, frexp and
 * the special-case logic of v_div_scale/v_div_fixup, as the Vega ISA
 * describes them.
 *
 * A finite value is (-1)^s * m * 2^e with an integer m (unsigned
 * __int128). A sum of a product (at most 106 bits) and an addend is
 * formed with both aligned at bit 125; bits shifted out of the smaller
 * one are kept as a sticky bit in bit 0 (far below the rounding point,
 * so the rounding of a difference is still right).
 */
#include <linux/bitops.h>
#include <linux/kernel.h>

#include "fp_soft.h"

struct sf_fmt {
	u8 mbits;	/* stored fraction bits */
	u8 ebits;
	u16 bias;
};

static const struct sf_fmt sf_f32 = { 23, 8, 127 };
static const struct sf_fmt sf_f64 = { 52, 11, 1023 };

static const struct sf_fmt *sf_fmt(bool f32)
{
	return f32 ? &sf_f32 : &sf_f64;
}

static u64 sf_sign(const struct sf_fmt *f)
{
	return 1ULL << (f->mbits + f->ebits);
}

static u32 sf_efield(u64 x, const struct sf_fmt *f)
{
	return (x >> f->mbits) & ((1u << f->ebits) - 1);
}

static u64 sf_frac(u64 x, const struct sf_fmt *f)
{
	return x & ((1ULL << f->mbits) - 1);
}

static u32 sf_emax(const struct sf_fmt *f)
{
	return (1u << f->ebits) - 1;
}

static bool sf_isnan(u64 x, const struct sf_fmt *f)
{
	return sf_efield(x, f) == sf_emax(f) && sf_frac(x, f);
}

static bool sf_isinf(u64 x, const struct sf_fmt *f)
{
	return sf_efield(x, f) == sf_emax(f) && !sf_frac(x, f);
}

static bool sf_iszero(u64 x, const struct sf_fmt *f)
{
	return !(x & (sf_sign(f) - 1));
}

static bool sf_isdenorm(u64 x, const struct sf_fmt *f)
{
	return !sf_efield(x, f) && sf_frac(x, f);
}

static u64 sf_quiet(u64 x, const struct sf_fmt *f)
{
	return x | 1ULL << (f->mbits - 1);
}

static u64 sf_inf(bool neg, const struct sf_fmt *f)
{
	return (neg ? sf_sign(f) : 0) | (u64)sf_emax(f) << f->mbits;
}

static u64 sf_default_nan(const struct sf_fmt *f)
{
	return sf_quiet(sf_inf(false, f), f);
}

u64 sf_widen(u32 x)
{
	u64 s = (u64)(x >> 31) << 63, m = x & 0x7fffff;
	u32 e = (x >> 23) & 0xff;
	int sh;

	if (e == 0xff)
		return s | 0x7ff0000000000000ULL | m << 29;
	if (!e) {
		if (!m)
			return s;
		/* subnormal: normalise, the implicit bit leaves the field */
		sh = 23 - __fls(m);
		return s | (u64)(1023 - 126 - sh) << 52 |
		       ((m << sh) & 0x7fffff) << 29;
	}
	return s | (u64)(e - 127 + 1023) << 52 | m << 29;
}

/* Finite nonzero or zero @x of @f as m * 2^e; false for Inf/NaN. */
static bool sf_unpack(u64 x, const struct sf_fmt *f, bool flush, u64 *m,
		      int *e)
{
	u32 ef = sf_efield(x, f);

	if (ef == sf_emax(f))
		return false;
	*m = sf_frac(x, f);
	if (ef) {
		*m |= 1ULL << f->mbits;
		*e = (int)ef - f->bias - f->mbits;
	} else {
		if (flush)
			*m = 0;
		*e = 1 - f->bias - f->mbits;
	}
	return true;
}

static int sf_fls128(unsigned __int128 m)
{
	u64 hi = m >> 64;

	if (hi)
		return 64 + __fls(hi);
	return __fls((u64)m);
}

/*
 * Round (-1)^@neg * @m * 2^@e (@m nonzero) once into @f as @env says.
 */
static u64 sf_round(bool neg, int e, unsigned __int128 m,
		    const struct sf_fmt *f, const struct sf_env *env)
{
	int top = e + sf_fls128(m);		/* exponent of the leading bit */
	int emin = 1 - f->bias, lsb, sh;
	bool guard = false, sticky = false, up;
	u64 keep, sign = neg ? sf_sign(f) : 0, max;

	/* weight of the result's last bit: normal or subnormal */
	lsb = (top < emin ? emin : top) - f->mbits;
	sh = lsb - e;
	if (sh <= 0) {
		/* exact; the value fits (top - lsb <= mbits) */
		keep = (u64)(m << -sh);
	} else if (sh > 128) {
		keep = 0;
		sticky = true;
	} else {
		unsigned __int128 one = 1, rest;

		rest = sh == 128 ? m : m & ((one << sh) - 1);
		keep = sh == 128 ? 0 : (u64)(m >> sh);
		guard = (rest >> (sh - 1)) & 1;
		sticky = (rest & ((one << (sh - 1)) - 1)) != 0;
	}
	switch (env->round) {
	case SF_RNE:
		up = guard && (sticky || (keep & 1));
		break;
	case SF_RUP:
		up = !neg && (guard || sticky);
		break;
	case SF_RDN:
		up = neg && (guard || sticky);
		break;
	default:
		up = false;
		break;
	}
	keep += up;
	if (keep >> (f->mbits + 1)) {	/* rounded up into the next binade */
		keep >>= 1;
		lsb++;
	}
	if (!(keep >> f->mbits)) {	/* subnormal (or zero) */
		if (env->flush_out)
			return sign;
		return sign | keep;
	}
	if (lsb + f->mbits + f->bias >= (int)sf_emax(f)) {
		/* overflow: Inf, or the largest finite toward zero */
		max = sf_inf(neg, f) - 1;
		if (env->round == SF_RTZ ||
		    (env->round == SF_RUP && neg) ||
		    (env->round == SF_RDN && !neg))
			return max;
		return sf_inf(neg, f);
	}
	return sign | (u64)(lsb + f->mbits + f->bias) << f->mbits |
	       (keep & ((1ULL << f->mbits) - 1));
}

/* A binary64 NaN as a NaN of @f, quieted. */
static u64 sf_nan_out(u64 x, const struct sf_fmt *f)
{
	u64 r;

	if (f == &sf_f64)
		return sf_quiet(x, f);
	r = (x >> 63) << 31 | 0x7f800000 | ((x >> 29) & 0x7fffff);
	return sf_quiet(r, f);
}

/* Is binary64 @x below the smallest normal of @f (a subnormal of it)? */
static bool sf_tiny(u64 x, const struct sf_fmt *f)
{
	return ((x >> 52) & 0x7ff) < (u32)(1023 - f->bias + 1);
}

u64 sf_fma(u64 a, u64 b, u64 c, int scale, const struct sf_env *env)
{
	const struct sf_fmt *f = sf_fmt(env->f32);
	bool sp = (a ^ b) >> 63, sc = c >> 63, neg;
	u64 ma, mb, mc;
	int ea, eb, ec, ep, d;
	unsigned __int128 p, q, s, one = 1;

	if (sf_isnan(a, &sf_f64))
		return sf_nan_out(a, f);
	if (sf_isnan(b, &sf_f64))
		return sf_nan_out(b, f);
	if (sf_isnan(c, &sf_f64))
		return sf_nan_out(c, f);
	if (env->flush_in) {
		if (sf_tiny(a, f))
			a &= BIT_ULL(63);
		if (sf_tiny(b, f))
			b &= BIT_ULL(63);
		if (sf_tiny(c, f))
			c &= BIT_ULL(63);
	}
	if (sf_isinf(a, &sf_f64) || sf_isinf(b, &sf_f64)) {
		if (sf_iszero(a, &sf_f64) || sf_iszero(b, &sf_f64))
			return sf_default_nan(f);
		if (sf_isinf(c, &sf_f64) && sc != sp)
			return sf_default_nan(f);
		return sf_inf(sp, f);
	}
	if (sf_isinf(c, &sf_f64))
		return sf_inf(sc, f);
	sf_unpack(a, &sf_f64, false, &ma, &ea);
	sf_unpack(b, &sf_f64, false, &mb, &eb);
	sf_unpack(c, &sf_f64, false, &mc, &ec);
	p = (unsigned __int128)ma * mb;
	ep = ea + eb;
	if (!p && !mc) {
		/* exact zero: like signs keep theirs, else +0 (-0 downward) */
		if (sp == sc)
			return sp ? sf_sign(f) : 0;
		return env->round == SF_RDN ? sf_sign(f) : 0;
	}
	if (!p)
		return sf_round(sc, ec + scale, mc, f, env);
	if (!mc)
		return sf_round(sp, ep + scale, p, f, env);
	/* both at bit 125 */
	d = 125 - sf_fls128(p);
	p <<= d;
	ep -= d;
	q = (unsigned __int128)mc << (125 - __fls(mc));
	ec -= 125 - __fls(mc);
	if (ep < ec) {
		swap(p, q);
		swap(ep, ec);
		swap(sp, sc);
	}
	/* p is the larger in exponent; q is shifted down to it */
	d = ep - ec;
	if (d >= 126)
		q = 1;
	else if (d)
		q = (q >> d) | ((q & ((one << d) - 1)) != 0);
	if (sp == sc) {
		s = p + q;
		neg = sp;
	} else if (p >= q) {
		s = p - q;
		neg = sp;
	} else {
		s = q - p;
		neg = sc;
	}
	if (!s)
		return env->round == SF_RDN ? sf_sign(f) : 0;
	return sf_round(neg, ep + scale, s, f, env);
}

u64 sf_ldexp(u64 x, s32 e, const struct sf_env *env)
{
	const struct sf_fmt *f = sf_fmt(env->f32);
	u64 m;
	int ex;

	if (sf_isnan(x, f))
		return sf_quiet(x, f);
	if (!sf_unpack(x, f, env->flush_in, &m, &ex))
		return x;			/* Inf */
	if (!m)
		return x & sf_sign(f);
	e = clamp(e, -4096, 4096);
	return sf_round(x & sf_sign(f), ex + e, m, f, env);
}

u64 sf_frexp_mant(u64 x, bool f32, bool flush)
{
	const struct sf_fmt *f = sf_fmt(f32);
	u64 m;
	int e;

	if (!sf_unpack(x, f, flush, &m, &e))
		return x;			/* Inf or NaN as they are */
	if (!m)
		return x & sf_sign(f);
	m <<= f->mbits - __fls(m);
	return (x & sf_sign(f)) | (u64)(f->bias - 1) << f->mbits |
	       sf_frac(m, f);
}

s32 sf_frexp_exp(u64 x, bool f32, bool flush)
{
	const struct sf_fmt *f = sf_fmt(f32);
	u64 m;
	int e;

	if (!sf_unpack(x, f, flush, &m, &e) || !m)
		return 0;
	/* x = m * 2^e with m in [2^k, 2^(k+1)): exponent in [0.5, 1) */
	return e + __fls(m) + 1;
}

/*
 * The Vega ISA's v_div_scale: scale the numerator or the denominator by
 * 2^+-K (K 64 for binary32, 128 for binary64) where the quotient, the
 * reciprocal or the operands would leave the normal range, and set VCC
 * where the quotient comes out scaled and v_div_fmas must undo it.
 */
u64 sf_div_scale(u64 s0, u64 s1, u64 s2, bool f32, bool *vcc)
{
	const struct sf_fmt *f = sf_fmt(f32);
	struct sf_env env = { .f32 = f32, .round = SF_RNE };
	int k = f32 ? 64 : 128, far = f32 ? 96 : 768;
	int e1 = sf_efield(s1, f), e2 = sf_efield(s2, f);
	/* 1 / s1 subnormal: |s1| above 2^(bias - 1) */
	bool rcp_tiny = e1 > (int)(2 * f->bias - 1) ||
			(e1 == (int)(2 * f->bias - 1) && sf_frac(s1, f));
	/* s2 / s1 subnormal (with a little margin) */
	bool quot_tiny = e2 - e1 <= -(int)(f->bias - 1);

	*vcc = false;
	if (sf_isnan(s0, f) || sf_isnan(s1, f) || sf_isnan(s2, f))
		return sf_default_nan(f);
	if (sf_iszero(s1, f) || sf_iszero(s2, f))
		return sf_default_nan(f);
	if (sf_isinf(s1, f) || sf_isinf(s2, f))
		return s0;			/* v_div_fixup decides */
	if (e2 - e1 >= far) {
		*vcc = true;
		return s0 == s1 ? sf_ldexp(s0, k, &env) : s0;
	}
	if (sf_isdenorm(s1, f))
		return sf_ldexp(s0, k, &env);
	if (rcp_tiny && quot_tiny) {
		*vcc = true;
		return s0 == s1 ? sf_ldexp(s0, -k, &env) : s0;
	}
	if (rcp_tiny)
		return sf_ldexp(s0, -k, &env);
	if (quot_tiny) {
		*vcc = true;
		return s0 == s2 ? sf_ldexp(s0, k, &env) : s0;
	}
	if (e2 <= f->mbits + 1)
		return sf_ldexp(s0, k, &env);
	return s0;
}

u64 sf_div_fixup(u64 q, u64 den, u64 num, bool f32)
{
	const struct sf_fmt *f = sf_fmt(f32);
	bool neg = ((den ^ num) & sf_sign(f)) != 0;

	if (sf_isnan(num, f))
		return sf_quiet(num, f);
	if (sf_isnan(den, f))
		return sf_quiet(den, f);
	if ((sf_iszero(den, f) && sf_iszero(num, f)) ||
	    (sf_isinf(den, f) && sf_isinf(num, f)))
		return sf_default_nan(f);
	if (sf_iszero(den, f) || sf_isinf(num, f))
		return sf_inf(neg, f);
	if (sf_isinf(den, f) || sf_iszero(num, f))
		return neg ? sf_sign(f) : 0;
	/*
	 * Finite nonzero operands: a quotient far beyond the range, which
	 * the scaling of v_div_scale could not bring back, overflows (the
	 * iteration made it Inf or NaN).
	 */
	if (sf_isnan(q, f) || sf_isinf(q, f))
		return sf_inf(neg, f);
	return (q & ~sf_sign(f)) | (neg ? sf_sign(f) : 0);
}
