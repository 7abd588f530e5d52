// SPDX-License-Identifier: GPL-2.0
/*
 * The vector ALU's float operations (binary32 and binary64).
 *
 * This file is built with the x86 SSE2 flags (Kbuild) and its functions
 * may only run between kernel_fpu_begin() and kernel_fpu_end() (vop.c
 * brackets every call): they touch nothing but the wave's registers, so
 * nothing in here can fault or sleep. kernel_fpu_begin() loads the default
 * MXCSR: round to nearest even, no exceptions, subnormals kept, which is
 * gfx9's default mode (MODE.FP_ROUND 0, FP_DENORM 3). Another rounding
 * mode in the wave's MODE is put into MXCSR for the instruction (and the
 * default put back); the file is built with -frounding-math so that the
 * compiler keeps every operation where it is. Subnormal inputs and
 * results are flushed here as MODE.FP_DENORM says, per precision.
 *
 * Fused multiply-adds outside round-to-nearest f32, v_fma_f64,
 * v_div_fmas, ldexp and frexp are exact integer arithmetic (fp_soft.c).
 * The transcendentals (v_exp/v_log/v_sin/v_cos_f32) are evaluated in
 * binary64 by the polynomials below and rounded once to binary32: well
 * within the ISA's 1 ULP.
 *
 * What differs from hardware: the NaN returned for a NaN input is x86's
 * (the input, quieted), not necessarily the GPU's; v_rcp/v_rsq/v_sqrt are
 * correctly rounded (the ISA allows 1 ULP), v_rsq_f64 within 1 ULP.
 */
#include <linux/bits.h>
#include <linux/kernel.h>
#include <linux/limits.h>

#include "fp_soft.h"
#include "gfx9.h"
#include "vop_f16.h"

#define F32_SIGN	0x80000000u
#define F32_ABS		0x7fffffffu
#define F32_EXP		0x7f800000u
#define F32_ONE_MINUS	0x3f7fffffu	/* the largest float below 1.0 */
#define F64_SIGN	BIT_ULL(63)

#define F64_ABS		(F64_SIGN - 1)
#define F64_EXP		0x7ff0000000000000ULL
#define F64_ONE_MINUS	0x3fefffffffffffffULL

/*
 * MODE.FP_ROUND: [1:0] single, [3:2] double and half precision (enum
 * sf_round). MODE.FP_DENORM: [5:4] single, [7:6] double and half; bit 0
 * of each keeps subnormal inputs, bit 1 subnormal results.
 */
#define GFX9_MODE_ROUND32(m)	((m) & 3)
#define GFX9_MODE_ROUND64(m)	(((m) >> 2) & 3)
#define GFX9_MODE_DENORM32(m)	(((m) >> 4) & 3)
#define GFX9_MODE_DENORM64(m)	(((m) >> 6) & 3)

/* How MODE rounds and flushes the binary32 (@f32) or binary64 results. */
static void fp_env(u32 mode, bool f32, struct sf_env *env)
{
	u32 dn = f32 ? GFX9_MODE_DENORM32(mode) : GFX9_MODE_DENORM64(mode);

	env->f32 = f32;
	env->round = f32 ? GFX9_MODE_ROUND32(mode) : GFX9_MODE_ROUND64(mode);
	env->flush_in = !(dn & 1);
	env->flush_out = !(dn & 2);
}

/* MXCSR.RC for an sf_round mode (x86 swaps up and down). */
static void fp_mxcsr_round(unsigned int round)
{
	static const u32 rc[4] = { 0, 2, 1, 3 };
	u32 csr;

	asm volatile("stmxcsr %0" : "=m" (csr) : : "memory");
	csr = (csr & ~(3u << 13)) | rc[round & 3] << 13;
	asm volatile("ldmxcsr %0" : : "m" (csr) : "memory");
}

static float f32(u32 x)
{
	union { u32 u; float f; } v = { .u = x };

	return v.f;
}

static u32 u32f(float f)
{
	union { u32 u; float f; } v = { .f = f };

	return v.u;
}

static double f64(u64 x)
{
	union { u64 u; double f; } v = { .u = x };

	return v.f;
}

static u64 u64f(double f)
{
	union { u64 u; double f; } v = { .f = f };

	return v.u;
}

static bool f32_isnan(u32 x)
{
	return (x & F32_ABS) > F32_EXP;
}

static bool f64_isnan(u64 x)
{
	return (x & ~F64_SIGN) > 0x7ff0000000000000ULL;
}

static u32 f32_flush(u32 x, bool flush)
{
	if (flush && !(x & F32_EXP))
		return x & F32_SIGN;
	return x;
}

static u64 f64_flush(u64 x, bool flush)
{
	if (flush && !(x & F64_EXP))
		return x & F64_SIGN;
	return x;
}

/* Truncate toward zero, on the bits (no SSE4.1 here). */
static u32 f32_trunc(u32 x)
{
	int e = ((x >> 23) & 0xff) - 127;

	if (e >= 23)
		return x;		/* integral, Inf or NaN */
	if (e < 0)
		return x & F32_SIGN;
	return x & ~((1u << (23 - e)) - 1);
}

static u32 f32_floor(u32 x)
{
	u32 t = f32_trunc(x);

	if (t != x && (x & F32_SIGN))
		return u32f(f32(t) - 1.0f);
	return t;
}

static u32 f32_ceil(u32 x)
{
	u32 t = f32_trunc(x);

	if (t != x && !(x & F32_SIGN))
		return u32f(f32(t) + 1.0f);
	return t;
}

/*
 * Round to nearest, ties to even, in any MXCSR rounding mode: every step
 * is exact (x - trunc(x), trunc(x) +- 1 and the halving test).
 */
static u32 f32_rndne(u32 x)
{
	float t = f32(f32_trunc(x)), r = f32(x) - t, h = t * 0.5f;
	bool odd = f32(f32_trunc(u32f(h))) != h;

	if (f32_isnan(x))
		return x;
	if (r > 0.5f || (r == 0.5f && odd))
		return u32f(t + 1.0f);
	if (r < -0.5f || (r == -0.5f && odd))
		return u32f(t - 1.0f);
	return u32f(t);
}

static u64 f64_trunc(u64 x)
{
	int e = ((x >> 52) & 0x7ff) - 1023;

	if (e >= 52)
		return x;		/* integral, Inf or NaN */
	if (e < 0)
		return x & F64_SIGN;
	return x & ~((1ULL << (52 - e)) - 1);
}

static u64 f64_floor(u64 x)
{
	u64 t = f64_trunc(x);

	if (t != x && (x & F64_SIGN))
		return u64f(f64(t) - 1.0);
	return t;
}

static u64 f64_ceil(u64 x)
{
	u64 t = f64_trunc(x);

	if (t != x && !(x & F64_SIGN))
		return u64f(f64(t) + 1.0);
	return t;
}

static u64 f64_rndne(u64 x)
{
	double t = f64(f64_trunc(x)), r = f64(x) - t, h = t * 0.5;
	bool odd = f64(f64_trunc(u64f(h))) != h;

	if (f64_isnan(x))
		return x;
	if (r > 0.5 || (r == 0.5 && odd))
		return u64f(t + 1.0);
	if (r < -0.5 || (r == -0.5 && odd))
		return u64f(t - 1.0);
	return u64f(t);
}

static float f32_sqrt(float f)
{
	asm("sqrtss %1, %0" : "=x" (f) : "x" (f));
	return f;
}

static double f64_sqrt(double f)
{
	asm("sqrtsd %1, %0" : "=x" (f) : "x" (f));
	return f;
}

/* Float to integer as gfx9 converts: NaN is 0, out of range saturates. */
static u32 f32_to_i32(u32 x)
{
	float f = f32(f32_trunc(x));

	if (f32_isnan(x))
		return 0;
	if (f >= 2147483648.0f)
		return S32_MAX;
	if (f < -2147483648.0f)
		return (u32)S32_MIN;
	return (s32)f;
}

static u32 f32_to_u32(u32 x)
{
	float f = f32(f32_trunc(x));

	if (f32_isnan(x) || f <= 0.0f)
		return 0;
	if (f >= 4294967296.0f)
		return U32_MAX;
	return (u32)f;
}

static u32 f64_to_i32(u64 x)
{
	double f = f64(x);

	if (f64_isnan(x))
		return 0;
	if (f >= 2147483648.0)
		return S32_MAX;
	if (f <= -2147483649.0)
		return (u32)S32_MIN;
	return (s32)f;
}

static u32 f64_to_u32(u64 x)
{
	double f = f64(x);

	if (f64_isnan(x) || f <= 0.0)
		return 0;
	if (f >= 4294967296.0)
		return U32_MAX;
	return (u32)f;
}

/*
 * a * b + c rounded once. The product of two binary32 values is exact in
 * binary64; the sum is computed in binary64 and made round-to-odd (its
 * last bit records whether anything was lost), after which the rounding
 * to binary32 is the correctly rounded fused result.
 */
static u32 f32_fma(u32 a, u32 b, u32 c)
{
	double p = (double)f32(a) * (double)f32(b), q = f32(c);
	double s = p + q, t, e;
	u64 bits;

	t = s - p;
	e = (p - (s - t)) + (q - t);
	bits = u64f(s);
	if (e != 0.0 && !(bits & 1) && (bits & ~F64_SIGN) <
	    0x7ff0000000000000ULL) {
		/* step one ulp toward the exact value */
		bool up = e > 0.0, positive = !(bits & F64_SIGN);

		if (up == positive)
			bits++;
		else
			bits--;
		s = f64(bits);
	}
	return u32f((float)s);
}

/* gfx9 IEEE-mode min/max: a NaN operand yields the other one. */
static u32 f32_min(u32 a, u32 b)
{
	if (f32_isnan(a))
		return f32_isnan(b) ? a | 0x400000 : b;
	if (f32_isnan(b))
		return a;
	if (f32(a) == f32(b))	/* -0 is below +0 */
		return (a & F32_SIGN) ? a : b;
	return f32(a) < f32(b) ? a : b;
}

static u32 f32_max(u32 a, u32 b)
{
	if (f32_isnan(a))
		return f32_isnan(b) ? a | 0x400000 : b;
	if (f32_isnan(b))
		return a;
	if (f32(a) == f32(b))
		return (a & F32_SIGN) ? b : a;
	return f32(a) > f32(b) ? a : b;
}

static u64 f64_minmax(u64 a, u64 b, bool max)
{
	if (f64_isnan(a))
		return f64_isnan(b) ? a | BIT_ULL(51) : b;
	if (f64_isnan(b))
		return a;
	if (f64(a) == f64(b))
		return ((a & F64_SIGN) != 0) == max ? b : a;
	return (f64(a) < f64(b)) != max ? a : b;
}

/* 2^@k for -1022 <= @k <= 1023 */
static double f64_pow2(int k)
{
	return f64((u64)(1023 + k) << 52);
}

/*
 * 2^v (v_exp_f32/f16) for v below 128: v = k + f with |f| <= 1/2, 2^f by
 * its Taylor series in f * ln 2 (13 terms: error below 2^-60), times 2^k.
 */
static double fp_exp2(double v)
{
	static const double ln2 = 0.69314718055994530942;
	double k, y, p = 1.0, t = 1.0;
	int i;

	if (v < -160.0)
		v = -160.0;		/* below half the least subnormal */
	k = f64(f64_rndne(u64f(v)));
	y = (v - k) * ln2;
	for (i = 1; i <= 13; i++) {
		t = t * y / i;
		p += t;
	}
	return p * f64_pow2((int)k);
}

static u32 f32_exp2(u32 x)
{
	if (f32_isnan(x))
		return x | 0x400000;
	if (f32(x) >= 128.0f)
		return F32_EXP;
	return u32f((float)fp_exp2(f32(x)));
}

/*
 * log2 of a positive normal binary64 @v (v_log_f32/f16): v = m * 2^e with
 * m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s), s = (m - 1) / (m + 1),
 * |s| < 0.172, by its series to s^23 (error below 2^-60).
 */
static double fp_log2(double v)
{
	static const double ln2 = 0.69314718055994530942;
	double m, s, s2, p, sum = 0.0;
	u64 b = u64f(v);
	int e, i;

	e = (int)((b >> 52) & 0x7ff) - 1023;
	m = f64((b & ~F64_EXP) | 0x3ff0000000000000ULL);
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	s = (m - 1.0) / (m + 1.0);
	s2 = s * s;
	p = s;
	for (i = 1; i <= 23; i += 2) {
		sum += p / i;
		p *= s2;
	}
	return e + 2.0 * sum / ln2;
}

static u32 f32_log2(u32 x)
{
	if (f32_isnan(x))
		return x | 0x400000;
	if (!(x & F32_ABS))
		return F32_SIGN | F32_EXP;	/* -Inf */
	if (x & F32_SIGN)
		return 0x7fc00000;
	if (x == F32_EXP)
		return x;
	return u32f((float)fp_log2(f32(x)));
}

/*
 * v_exp_legacy_f32 and v_log_legacy_f32: 2^x and log2 x as v_exp_f32 and
 * v_log_f32 compute them, with the legacy ops' handling of subnormals
 * whatever MODE says: an exponent below -126 gives +0 (2^x would be
 * subnormal; -Inf gives 0 too) and a subnormal input of log is a zero
 * (log2 of +-0 is -Inf). A negative input of log is a NaN, log2 1 is 0.
 */
static u32 f32_exp2_legacy(u32 x)
{
	if (f32_isnan(x))
		return x | 0x400000;
	if (f32(x) < -126.0f)
		return 0;
	return f32_exp2(x);
}

static u32 f32_log2_legacy(u32 x)
{
	return f32_log2(f32_flush(x, true));
}

/*
 * The first 1201 fraction bits of 2/pi (truncated), most significant
 * first: fraction bit n (counting from 1) is bit 63 - (n - 1) % 64 of
 * word (n - 1) / 64; the 15 bits after bit 1201 are 0. Computed with
 * integers from Machin's formula pi = 16 atan(1/5) - 4 atan(1/239) at
 * 1400 bits; the words begin with the well-known a2f9836e 4e441529.
 */
static const u64 two_over_pi[19] = {
	0xa2f9836e4e441529ULL, 0xfc2757d1f534ddc0ULL, 0xdb6295993c439041ULL,
	0xfe5163abdebbc561ULL, 0xb7246e3a424dd2e0ULL, 0x06492eea09d1921cULL,
	0xfe1deb1cb129a73eULL, 0xe88235f52ebb4484ULL, 0xe99c7026b45f7e41ULL,
	0x3991d639835339f4ULL, 0x9c845f8bbdf9283bULL, 0x1ff897ffde05980fULL,
	0xef2f118b5a0a6d1fULL, 0x6d367ecf27cb09b7ULL, 0x4f463f669e5fea2dULL,
	0x7527bac7ebe5f17bULL, 0x3d0739f78a5292eaULL, 0x6bfb5fb11f8d5d08ULL,
	0x56033046fc7b0000ULL,
};

/* 64 bits of 2/pi from fraction bit @pos + 1 on (0 past the table). */
static u64 two_over_pi_at(unsigned int pos)
{
	unsigned int i = pos / 64, off = pos % 64;
	u64 hi = i < ARRAY_SIZE(two_over_pi) ? two_over_pi[i] : 0;
	u64 lo = i + 1 < ARRAY_SIZE(two_over_pi) ? two_over_pi[i + 1] : 0;

	return off ? hi << off | lo >> (64 - off) : hi;
}

/*
 * v_trig_preop_f64 (gfx9 ISA): 53 bits of 2/pi from fraction bit shift + 1
 * on, as an integer scaled by 2^(-53 - shift), where shift is 53 times
 * the segment @seg[4:0], plus exp - 1077 when the biased exponent exp of
 * @x is above 1077 (|x| >= 2^55). From an exponent of 1968 on the result
 * is scaled up by 2^128 (ocml scales such inputs down by as much). The
 * sign of @x is ignored; Inf and NaN take the exponent 2047. The integer
 * is exact in binary64; a subnormal result is truncated (round toward
 * zero, as the ISA says), bits past the 1201st are 0.
 */
static u64 f64_trig_preop(u64 x, u32 seg)
{
	unsigned int e = (x >> 52) & 0x7ff, shift = (seg & 31) * 53, top;
	int scale, sub;
	u64 m;

	if (e > 1077)
		shift += e - 1077;
	scale = -53 - (int)shift;
	if (e >= 1968)
		scale += 128;
	m = two_over_pi_at(shift) >> 11;
	if (!m)
		return 0;
	top = fls64(m) - 1;
	if ((int)top + scale >= -1022)
		return (u64)(top + scale + 1023) << 52 |
		       ((m << (52 - top)) & ~(F64_SIGN | F64_EXP));
	/* subnormal: the fraction field is m * 2^(scale + 1074) */
	sub = scale + 1074;
	if (sub >= 0)
		return m << sub;
	return -sub >= 64 ? 0 : m >> -sub;
}

/* sin and cos of @a, |a| <= pi/4, by their Taylor series (error < 2^-60). */
static double fp_sin_poly(double a)
{
	double a2 = a * a, t = a, sum = a;
	int i;

	for (i = 3; i <= 19; i += 2) {
		t = -t * a2 / ((i - 1) * i);
		sum += t;
	}
	return sum;
}

static double fp_cos_poly(double a)
{
	double a2 = a * a, t = 1.0, sum = 1.0;
	int i;

	for (i = 2; i <= 18; i += 2) {
		t = -t * a2 / ((i - 1) * i);
		sum += t;
	}
	return sum;
}

/*
 * v_sin_f32/f16, v_cos_f32/f16: sin or cos of v * 2 pi, v in revolutions,
 * finite, nonzero and below 2^24 in magnitude. v is cut exactly into
 * quarter turns q and t = v - q / 4, |t| <= 1/8; the series then runs on
 * 2 pi t. (Hardware specifies [-256, 256] only.)
 */
static double fp_sincos(double v, bool cos)
{
	static const double two_pi = 6.28318530717958647693;
	double q, a;
	unsigned int k;

	q = f64(f64_rndne(u64f(4.0 * v)));
	a = (v - q * 0.25) * two_pi;
	k = ((unsigned int)(s32)q + (cos ? 1 : 0)) & 3;
	/* sin(a + k pi / 2); cos(x) = sin(x + pi / 2) */
	switch (k) {
	case 0:
		return fp_sin_poly(a);
	case 1:
		return fp_cos_poly(a);
	case 2:
		return -fp_sin_poly(a);
	default:
		return -fp_cos_poly(a);
	}
}

static u32 f32_sincos(u32 x, bool cos)
{
	if (f32_isnan(x))
		return x | 0x400000;
	if ((x & F32_ABS) == F32_EXP)
		return 0x7fc00000;
	if (!(x & F32_ABS))
		return cos ? 0x3f800000 : x;
	if (f32(x & F32_ABS) >= 16777216.0f)	/* a whole number of turns */
		return cos ? 0x3f800000 : 0;
	return u32f((float)fp_sincos(f32(x), cos));
}

/**
 * gfx9_fp_transc16 - v_log/exp/sin/cos_f16 in binary64
 * @op: the VOP1 opcode: 0x180 log, 0x181 exp, 0x189 sin, 0x18a cos
 * @x: the f16 operand as a binary32 (exact), not a NaN
 *
 * Call only between kernel_fpu_begin() and kernel_fpu_end().
 *
 * Return: the binary64 bits of the result, within 2^-60 of the exact
 * value, for the caller to round once to f16.
 */
u64 gfx9_fp_transc16(unsigned int op, u32 x)
{
	bool inf = (x & F32_ABS) == F32_EXP, zero = !(x & F32_ABS);
	double v = f32(x);

	switch (op) {
	case 0x180:
		if (zero)
			return F64_SIGN | F64_EXP;
		if (x & F32_SIGN)
			return 0x7ff8000000000000ULL;
		return inf ? F64_EXP : u64f(fp_log2(v));
	case 0x181:
		if (inf)
			return x & F32_SIGN ? 0 : F64_EXP;
		return v >= 128.0 ? F64_EXP : u64f(fp_exp2(v));
	default:
		if (inf)
			return 0x7ff8000000000000ULL;
		if (zero)
			return op == 0x18a ? u64f(1.0) : u64f(v);
		return u64f(fp_sincos(v, op == 0x18a));
	}
}

/* The v_cmp condition @cond of two values (binary32 ones exactly). */
static bool fp_cmp(unsigned int cond, double x, double y)
{
	return gfx9_fcmp(cond, x < y, x == y, x > y);
}

/* Source modifiers of a float operand. */
static u32 f32_mods(u32 x, const struct gfx9_vop *v, unsigned int i)
{
	if (v->abs & BIT(i))
		x &= F32_ABS;
	if (v->neg & BIT(i))
		x ^= F32_SIGN;
	return x;
}

static u64 f64_mods(u64 x, const struct gfx9_vop *v, unsigned int i)
{
	if (v->abs & BIT(i))
		x &= ~F64_SIGN;
	if (v->neg & BIT(i))
		x ^= F64_SIGN;
	return x;
}

/* Output modifier and clamp of a binary32 result. */
static u32 f32_omod(u32 r, const struct gfx9_vop *v)
{
	static const float scale[4] = { 1.0f, 2.0f, 4.0f, 0.5f };

	if (v->omod)
		r = u32f(f32(r) * scale[v->omod]);
	if (v->clamp) {
		if (f32_isnan(r) || f32(r) < 0.0f)
			r = 0;
		else if (f32(r) > 1.0f)
			r = 0x3f800000;
	}
	return r;
}

/*
 * Output modifier and clamp of a binary64 result, as f32_omod(): the
 * scaling is one multiplication by 2, 4 or 0.5 (exact but for overflow and
 * subnormal results, which MXCSR rounds as MODE says), then clamp to
 * [0, 1] with NaN to 0.
 */
static u64 f64_omod(u64 r, const struct gfx9_vop *v)
{
	static const double scale[4] = { 1.0, 2.0, 4.0, 0.5 };

	if (v->omod)
		r = u64f(f64(r) * scale[v->omod]);
	if (v->clamp) {
		if (f64_isnan(r) || f64(r) < 0.0)
			r = 0;
		else if (f64(r) > 1.0)
			r = 0x3ff0000000000000ULL;
	}
	return r;
}

/*
 * One lane of a binary32 operation with 1 to 3 operands; @env rounds the
 * exact ones, @vcc is the lane's VCC bit (v_div_fmas).
 */
static u32 f32_lane(unsigned int op, u32 x, u32 y, u32 z, u32 lit, u32 dst,
		    const struct sf_env *env, bool vcc)
{
	bool flush = env->flush_in;

	x = f32_flush(x, flush);
	y = f32_flush(y, flush);
	z = f32_flush(z, flush);
	switch (op) {
	case 0x101:
		return u32f(f32(x) + f32(y));
	case 0x102:
		return u32f(f32(x) - f32(y));
	case 0x103:
		return u32f(f32(y) - f32(x));
	case 0x104:	/* mul_legacy: 0 times anything is 0 */
		if (!(x & F32_ABS) || !(y & F32_ABS))
			return 0;
		return u32f(f32(x) * f32(y));
	case 0x105:
		return u32f(f32(x) * f32(y));
	case 0x10a:
		return f32_min(x, y);
	case 0x10b:
		return f32_max(x, y);
	case 0x116:	/* mac: unfused, denormals flushed as v_mad does */
		return f32_flush(u32f(f32(f32_flush(u32f(f32(x) * f32(y)),
						   true)) + f32(dst)), true);
	case 0x117:	/* madmk: x * K + y */
		return f32_flush(u32f(f32(f32_flush(u32f(f32(x) * f32(lit)),
						   true)) + f32(y)), true);
	case 0x118:	/* madak: x * y + K */
		return f32_flush(u32f(f32(f32_flush(u32f(f32(x) * f32(y)),
						   true)) + f32(lit)), true);
	case 0x13b:
		if (env->round != SF_RNE)
			return sf_fma(sf_widen(x), sf_widen(y), sf_widen(dst),
				      0, env);
		return f32_fma(x, y, dst);
	case 0x145:
		return u32f((float)(s32)x);
	case 0x146:
		return u32f((float)x);
	case 0x147:
		return f32_to_u32(x);
	case 0x148:
		return f32_to_i32(x);
	case 0x14c:
		return f32_to_i32(f32_floor(u32f(f32(x) + 0.5f)));
	case 0x14d:
		return f32_to_i32(f32_floor(x));
	case 0x151:
		return u32f((float)(x & 0xff));
	case 0x152:
		return u32f((float)((x >> 8) & 0xff));
	case 0x153:
		return u32f((float)((x >> 16) & 0xff));
	case 0x154:
		return u32f((float)(x >> 24));
	case 0x15b:	/* fract: x - floor(x), below 1.0 */
		if (f32_isnan(x) || (x & F32_ABS) == F32_EXP)
			return f32_isnan(x) ? x : 0x7fc00000;
		return f32_min(u32f(f32(x) - f32(f32_floor(x))),
			       F32_ONE_MINUS);
	case 0x15c:
		return f32_trunc(x);
	case 0x15d:
		return f32_ceil(x);
	case 0x15e:
		return f32_rndne(x);
	case 0x15f:
		return f32_floor(x);
	case 0x162:
	case 0x163:
		return u32f(1.0f / f32(x));
	case 0x164:
		return u32f((float)(1.0 / f64_sqrt(f32(x))));
	case 0x167:
		return u32f(f32_sqrt(f32(x)));
	case 0x160:
		return f32_exp2(x);
	case 0x161:
		return f32_log2(x);
	case 0x169:
		return f32_sincos(x, false);
	case 0x16a:
		return f32_sincos(x, true);
	case 0x173:
		return sf_frexp_exp(x, true, false);
	case 0x174:
		return sf_frexp_mant(x, true, false);
	case 0x18b:
		return f32_exp2_legacy(x);
	case 0x18c:
		return f32_log2_legacy(x);
	case 0x1de:
		return sf_div_fixup(x, y, z, true);
	case 0x1e2:	/* div_fmas: fma, scaled back where div_scale scaled */
		return sf_fma(sf_widen(x), sf_widen(y), sf_widen(z),
			      !vcc ? 0 : (z & F32_ABS) >= 0x3f800000 ? 64 : -64,
			      env);
	case 0x1c1:	/* mad_f32: unfused */
		return f32_flush(u32f(f32(f32_flush(u32f(f32(x) * f32(y)),
						   true)) + f32(z)), true);
	case 0x1cb:
		if (env->round != SF_RNE)
			return sf_fma(sf_widen(x), sf_widen(y), sf_widen(z), 0,
				      env);
		return f32_fma(x, y, z);
	case 0x1d0:
		return f32_min(f32_min(x, y), z);
	case 0x1d3:
		return f32_max(f32_max(x, y), z);
	default:	/* 0x288 ldexp_f32 */
		return sf_ldexp(x, y, env);
	}
}

static bool gfx9_fp32_op(unsigned int op)
{
	switch (op) {
	case 0x101 ... 0x105:
	case 0x10a:
	case 0x10b:
	case 0x116 ... 0x118:
	case 0x13b:
	case 0x145 ... 0x148:
	case 0x14c:
	case 0x14d:
	case 0x151 ... 0x154:
	case 0x15b ... 0x15f:
	case 0x160 ... 0x164:
	case 0x167:
	case 0x169:
	case 0x16a:
	case 0x173:
	case 0x174:
	case 0x18b:
	case 0x18c:
	case 0x1c1:
	case 0x1cb:
	case 0x1de:
	case 0x1e2:
	case 0x1d0:
	case 0x1d3:
	case 0x288:
		return true;
	default:
		return false;
	}
}

static int fp32(struct gfx9_disp *d, struct gfx9_wave *w,
		const struct gfx9_insn *in, const struct gfx9_vop *v,
		unsigned int op)
{
	struct gfx9_src s0, s1, s2 = {};
	struct sf_env env;
	/* Sources that are integers: no float modifiers on them. */
	bool int_src = (op >= 0x145 && op <= 0x146) ||
		       (op >= 0x151 && op <= 0x154);
	/* Results that are integers: no output modifier. */
	bool int_dst = (op >= 0x147 && op <= 0x14d) || op == 0x173;
	u32 *dst = gfx9_vreg(w, v->vdst), x, y, z, r;
	u64 exec = gfx9_exec(w), vcc = gfx9_sreg64(w, GFX9_VCC_LO);
	unsigned int l;

	fp_env(w->mode, true, &env);

	if ((int_src && (v->abs || v->neg)) ||
	    (op == 0x288 && ((v->abs | v->neg) & 2)))
		return -EINVAL;
	gfx9_vsrc(d, w, in, v->src[0], GFX9_B32, &s0);
	gfx9_vsrc(d, w, in, v->src[1], GFX9_B32, &s1);
	if (v->e64)
		gfx9_vsrc(d, w, in, v->src[2], GFX9_B32, &s2);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		x = f32_mods(gfx9_lane32(&s0, l), v, 0);
		y = f32_mods(gfx9_lane32(&s1, l), v, 1);
		z = f32_mods(gfx9_lane32(&s2, l), v, 2);
		r = f32_lane(op, x, y, z, in->lit, dst[l], &env,
			     vcc & BIT_ULL(l));
		if (!int_dst)
			r = f32_flush(f32_omod(r, v), env.flush_out);
		dst[l] = r;
	}
	return 0;
}

/* One lane of a binary64 operation; conversions take or give 32 bits. */
static u64 f64_lane(unsigned int op, u64 x, u64 y, u64 z,
		    const struct sf_env *env, bool vcc)
{
	switch (op) {
	case 0x143:
		return f64_to_i32(x);
	case 0x144:
		return u64f((double)(s32)x);
	case 0x14f:
		return u32f((float)f64(x));
	case 0x150:
		return u64f((double)f32(x));
	case 0x155:
		return f64_to_u32(x);
	case 0x156:
		return u64f((double)(u32)x);
	case 0x157:
		return f64_trunc(x);
	case 0x158:
		return f64_ceil(x);
	case 0x159:
		return f64_rndne(x);
	case 0x15a:
		return f64_floor(x);
	case 0x165:
		return u64f(1.0 / f64(x));
	case 0x166:
		return u64f(1.0 / f64_sqrt(f64(x)));
	case 0x168:
		return u64f(f64_sqrt(f64(x)));
	case 0x170:
		return (u32)sf_frexp_exp(x, false, false);
	case 0x171:
		return sf_frexp_mant(x, false, false);
	case 0x172:	/* fract: x - floor(x), below 1.0 */
		if (f64_isnan(x) || (x & F64_ABS) == F64_EXP)
			return f64_isnan(x) ? x : 0x7ff8000000000000ULL;
		return f64_minmax(u64f(f64(x) - f64(f64_floor(x))),
				  F64_ONE_MINUS, false);
	case 0x1cc:
		return sf_fma(x, y, z, 0, env);
	case 0x1df:
		return sf_div_fixup(x, y, z, false);
	case 0x1e3:	/* div_fmas: fma, scaled back where div_scale scaled */
		return sf_fma(x, y, z, !vcc ? 0 :
			      (z & F64_ABS) >= 0x3ff0000000000000ULL ? 128 :
			      -128, env);
	case 0x280:
		return u64f(f64(x) + f64(y));
	case 0x281:
		return u64f(f64(x) * f64(y));
	case 0x282:
		return f64_minmax(x, y, false);
	case 0x283:
		return f64_minmax(x, y, true);
	case 0x292:
		return f64_trig_preop(x, y);
	default:	/* 0x284 ldexp_f64 */
		return sf_ldexp(x, (s32)y, env);
	}
}

/* binary64 arithmetic and the conversions to and from it. */
static int fp64(struct gfx9_disp *d, struct gfx9_wave *w,
		const struct gfx9_insn *in, const struct gfx9_vop *v,
		unsigned int op)
{
	bool src64 = op != 0x144 && op != 0x150 && op != 0x156;
	bool dst64 = op != 0x143 && op != 0x14f && op != 0x155 && op != 0x170;
	/* the second operand: none, 32 bits (ldexp, trig_preop) or binary64 */
	bool two = op >= 0x1cc, y64 = two && op != 0x284 && op != 0x292;
	bool three = op >= 0x1cc && op <= 0x1e3;
	u32 *lo = gfx9_vreg(w, v->vdst), *hi = gfx9_vreg(w, v->vdst + 1);
	struct gfx9_src s0, s1, s2;
	struct sf_env env;
	u64 exec = gfx9_exec(w), vcc = gfx9_sreg64(w, GFX9_VCC_LO), x, y, z;
	u64 r;
	unsigned int l;

	/* Integer results take no output modifier. */
	if ((v->omod || v->clamp) && !dst64 && op != 0x14f)
		return -EINVAL;
	if ((!src64 && (v->abs || v->neg)) ||
	    (!y64 && ((v->abs | v->neg) & 6)) ||
	    (!three && ((v->abs | v->neg) & 4)))
		return -EINVAL;
	fp_env(w->mode, false, &env);
	gfx9_vsrc(d, w, in, v->src[0], src64 ? GFX9_F64 : GFX9_B32, &s0);
	gfx9_vsrc(d, w, in, v->src[1], y64 ? GFX9_F64 : GFX9_B32, &s1);
	gfx9_vsrc(d, w, in, v->src[2], GFX9_F64, &s2);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		x = src64 ? f64_flush(f64_mods(gfx9_lane64(&s0, l), v, 0),
				      env.flush_in) : gfx9_lane32(&s0, l);
		y = !two ? 0 : !y64 ? gfx9_lane32(&s1, l) :
		    f64_flush(f64_mods(gfx9_lane64(&s1, l), v, 1),
			      env.flush_in);
		z = !three ? 0 : f64_flush(f64_mods(gfx9_lane64(&s2, l), v, 2),
					   env.flush_in);
		r = f64_lane(op, x, y, z, &env, vcc & BIT_ULL(l));
		if (dst64)
			r = f64_omod(r, v);
		else if (op == 0x14f)	/* cvt_f32_f64 */
			r = f32_omod(r, v);
		if (dst64 && op != 0x144 && op != 0x156)
			r = f64_flush(r, env.flush_out);
		lo[l] = r;
		if (dst64)
			hi[l] = r >> 32;
	}
	return 0;
}

/*
 * v_div_scale_f32/f64 (VOP3b): each lane's VCC bit goes to the SGPR pair
 * @v->sdst (0 for inactive lanes).
 */
static int fp_div_scale(struct gfx9_disp *d, struct gfx9_wave *w,
			const struct gfx9_insn *in, const struct gfx9_vop *v,
			unsigned int op)
{
	bool wide = op == 0x1e1, c;
	enum gfx9_kind kind = wide ? GFX9_F64 : GFX9_B32;
	u32 *lo = gfx9_vreg(w, v->vdst), *hi = gfx9_vreg(w, v->vdst + 1);
	struct gfx9_src s[3];
	u64 exec = gfx9_exec(w), mask = 0, x[3], r;
	unsigned int l, i;

	if (v->omod)
		return -EINVAL;
	for (i = 0; i < 3; i++)
		gfx9_vsrc(d, w, in, v->src[i], kind, &s[i]);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		for (i = 0; i < 3; i++)
			x[i] = wide ? f64_mods(gfx9_lane64(&s[i], l), v, i) :
				      f32_mods(gfx9_lane32(&s[i], l), v, i);
		r = sf_div_scale(x[0], x[1], x[2], !wide, &c);
		if (c)
			mask |= BIT_ULL(l);
		lo[l] = r;
		if (wide)
			hi[l] = r >> 32;
	}
	gfx9_sdst64(w, v->sdst, mask);
	return 0;
}

/* v_cmp(x)_*_f32: 0x40-0x5f; v_cmp(x)_*_f64: 0x60-0x7f. */
static int fpcmp(struct gfx9_disp *d, struct gfx9_wave *w,
		 const struct gfx9_insn *in, const struct gfx9_vop *v,
		 unsigned int op)
{
	bool wide = op >= 0x60;
	enum gfx9_kind kind = wide ? GFX9_F64 : GFX9_B32;
	struct gfx9_src s0, s1;
	u64 exec = gfx9_exec(w), res = 0;
	struct sf_env env;
	double x, y;
	unsigned int l;

	if (v->omod || v->clamp)
		return -EINVAL;
	/* Compares see subnormal inputs as MODE.FP_DENORM has them. */
	fp_env(w->mode, !wide, &env);
	gfx9_vsrc(d, w, in, v->src[0], kind, &s0);
	gfx9_vsrc(d, w, in, v->src[1], kind, &s1);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		if (wide) {
			x = f64(f64_flush(f64_mods(gfx9_lane64(&s0, l), v, 0),
					  env.flush_in));
			y = f64(f64_flush(f64_mods(gfx9_lane64(&s1, l), v, 1),
					  env.flush_in));
		} else {
			x = f32(f32_flush(f32_mods(gfx9_lane32(&s0, l), v, 0),
					  env.flush_in));
			y = f32(f32_flush(f32_mods(gfx9_lane32(&s1, l), v, 1),
					  env.flush_in));
		}
		if (fp_cmp(op & 0xf, x, y))
			res |= BIT_ULL(l);
	}
	gfx9_sdst64(w, v->sdst, res);
	if (op & 0x10)
		gfx9_set_sreg64(w, GFX9_EXEC_LO, res);
	return 0;
}

/**
 * gfx9_vop_fp - run a float VOP instruction on every active lane
 * @d: the dispatch
 * @w: the wave
 * @in: the instruction (for literals)
 * @v: its decoded operands
 * @op: the VOP3 opcode
 *
 * Call only between kernel_fpu_begin() and kernel_fpu_end().
 *
 * Return: 0, or -EINVAL for a modifier the operation does not take.
 */
int gfx9_vop_fp(struct gfx9_disp *d, struct gfx9_wave *w,
		const struct gfx9_insn *in, const struct gfx9_vop *v,
		unsigned int op)
{
	unsigned int round;
	int ret;

	if (op >= 0x40 && op <= 0x7f)
		return fpcmp(d, w, in, v, op);
	if (op == 0x1e0 || op == 0x1e1)
		return fp_div_scale(d, w, in, v, op);
	round = gfx9_fp32_op(op) ? GFX9_MODE_ROUND32(w->mode) :
				   GFX9_MODE_ROUND64(w->mode);
	if (round != SF_RNE)
		fp_mxcsr_round(round);
	if (gfx9_fp32_op(op))
		ret = fp32(d, w, in, v, op);
	else
		ret = fp64(d, w, in, v, op);
	if (round != SF_RNE)
		fp_mxcsr_round(SF_RNE);
	return ret;
}
