// SPDX-License-Identifier: GPL-2.0
/*
 * The vector ALU's float operations (binary32 and binary64).
 *
 * This file is built with the x86 SSE2 flags (Kbuild) and its functions
 * may only run between kernel_fpu_begin() and kernel_fpu_end() (vop.c
 * brackets every call): they touch nothing but the wave's registers, so
 * nothing in here can fault or sleep. kernel_fpu_begin() loads the default
 * MXCSR: round to nearest even, no exceptions, subnormals kept, which is
 * gfx9's default mode (MODE.FP_ROUND 0, FP_DENORM 3). Where the wave's
 * MODE flushes binary32 subnormals, inputs and results are flushed here.
 *
 * What differs from hardware: the NaN returned for a NaN input is x86's
 * (the input, quieted), not necessarily the GPU's; v_rcp/v_rsq/v_sqrt are
 * correctly rounded (the ISA allows 1 ULP); fused multiply-add is exact.
 */
#include <linux/bits.h>
#include <linux/kernel.h>
#include <linux/limits.h>

#include "gfx9.h"

#define F32_SIGN	0x80000000u
#define F32_ABS		0x7fffffffu
#define F32_EXP		0x7f800000u
#define F32_ONE_MINUS	0x3f7fffffu	/* the largest float below 1.0 */
#define F64_SIGN	BIT_ULL(63)

/* MODE.FP_DENORM: bits [5:4] single precision (0 flushes in and out). */
#define GFX9_MODE_DENORM32(m)	(((m) >> 4) & 3)

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
 * Round to nearest, ties to even: below 2^23 adding and taking away 2^23
 * rounds away the fraction in the current (nearest-even) rounding mode.
 */
static u32 f32_rndne(u32 x)
{
	float a = f32(x & F32_ABS), big = 8388608.0f;

	if (!(a < big))
		return x;		/* integral already, Inf or NaN */
	a = (a + big) - big;
	return u32f(a) | (x & F32_SIGN);
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

static u32 f32_ldexp(u32 x, s32 e)
{
	float f = f32(x);

	e = clamp(e, -300, 300);
	while (e > 0) {
		int s = min(e, 100);

		f *= f32(((u32)(127 + s)) << 23);
		e -= s;
	}
	while (e < 0) {
		int s = min(-e, 100);

		f *= f32(((u32)(127 - s)) << 23);
		e += s;
	}
	return u32f(f);
}

static bool f32_cmp(unsigned int cond, u32 a, u32 b)
{
	float x = f32(a), y = f32(b);
	bool unord = f32_isnan(a) || f32_isnan(b);

	switch (cond) {
	case 0x0:
		return false;
	case 0x1:
		return x < y;
	case 0x2:
		return x == y;
	case 0x3:
		return x <= y;
	case 0x4:
		return x > y;
	case 0x5:
		return x < y || x > y;	/* lg */
	case 0x6:
		return x >= y;
	case 0x7:
		return !unord;
	case 0x8:
		return unord;
	case 0x9:
		return !(x >= y);
	case 0xa:
		return !(x < y || x > y);
	case 0xb:
		return !(x > y);
	case 0xc:
		return !(x <= y);
	case 0xd:
		return !(x == y);
	case 0xe:
		return !(x < y);
	default:
		return true;
	}
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

/* One lane of a binary32 operation with 1 to 3 operands. */
static u32 f32_lane(unsigned int op, u32 x, u32 y, u32 z, u32 lit, u32 dst,
		    bool flush)
{
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
	case 0x1c1:	/* mad_f32: unfused */
		return f32_flush(u32f(f32(f32_flush(u32f(f32(x) * f32(y)),
						   true)) + f32(z)), true);
	case 0x1cb:
		return f32_fma(x, y, z);
	case 0x1d0:
		return f32_min(f32_min(x, y), z);
	case 0x1d3:
		return f32_max(f32_max(x, y), z);
	default:	/* 0x288 ldexp_f32 */
		return f32_ldexp(x, y);
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
	case 0x162 ... 0x164:
	case 0x167:
	case 0x1c1:
	case 0x1cb:
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
	bool flush = !GFX9_MODE_DENORM32(w->mode);
	/* Sources that are integers: no float modifiers on them. */
	bool int_src = (op >= 0x145 && op <= 0x146) ||
		       (op >= 0x151 && op <= 0x154);
	u32 *dst = gfx9_vreg(w, v->vdst), x, y, z, r;
	u64 exec = gfx9_exec(w);
	unsigned int l;

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
		r = f32_lane(op, x, y, z, in->lit, dst[l], flush);
		/* Integer results take no output modifier. */
		if (!(op >= 0x147 && op <= 0x14d))
			r = f32_flush(f32_omod(r, v), flush);
		dst[l] = r;
	}
	return 0;
}

/* binary64: add, mul, min, max and the conversions. */
static int fp64(struct gfx9_disp *d, struct gfx9_wave *w,
		const struct gfx9_insn *in, const struct gfx9_vop *v,
		unsigned int op)
{
	bool src64 = op >= 0x280 || op == 0x143 || op == 0x14f || op == 0x155;
	bool dst64 = op >= 0x280 || op == 0x144 || op == 0x150 || op == 0x156;
	u32 *lo = gfx9_vreg(w, v->vdst), *hi = gfx9_vreg(w, v->vdst + 1);
	struct gfx9_src s0, s1;
	u64 exec = gfx9_exec(w), x, y, r;
	unsigned int l;

	if (v->omod || v->clamp)
		return -EINVAL;
	if (!src64 && (v->abs || v->neg))
		return -EINVAL;
	gfx9_vsrc(d, w, in, v->src[0], src64 ? GFX9_F64 : GFX9_B32, &s0);
	gfx9_vsrc(d, w, in, v->src[1], GFX9_F64, &s1);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		x = src64 ? f64_mods(gfx9_lane64(&s0, l), v, 0) :
			    gfx9_lane32(&s0, l);
		y = op >= 0x280 ? f64_mods(gfx9_lane64(&s1, l), v, 1) : 0;
		switch (op) {
		case 0x143:
			r = f64_to_i32(x);
			break;
		case 0x144:
			r = u64f((double)(s32)x);
			break;
		case 0x14f:
			r = u32f((float)f64(x));
			break;
		case 0x150:
			r = u64f((double)f32(x));
			break;
		case 0x155:
			r = f64_to_u32(x);
			break;
		case 0x156:
			r = u64f((double)(u32)x);
			break;
		case 0x280:
			r = u64f(f64(x) + f64(y));
			break;
		case 0x281:
			r = u64f(f64(x) * f64(y));
			break;
		case 0x282:
			r = f64_minmax(x, y, false);
			break;
		default:
			r = f64_minmax(x, y, true);
			break;	/* 0x283 */
		}
		lo[l] = r;
		if (dst64)
			hi[l] = r >> 32;
	}
	return 0;
}

/* v_cmp(x)_*_f32: 0x40-0x5f. */
static int fpcmp(struct gfx9_disp *d, struct gfx9_wave *w,
		 const struct gfx9_insn *in, const struct gfx9_vop *v,
		 unsigned int op)
{
	struct gfx9_src s0, s1;
	u64 exec = gfx9_exec(w), res = 0;
	unsigned int l;

	if (v->omod || v->clamp)
		return -EINVAL;
	gfx9_vsrc(d, w, in, v->src[0], GFX9_B32, &s0);
	gfx9_vsrc(d, w, in, v->src[1], GFX9_B32, &s1);
	for (l = 0; l < GFX9_LANES; l++)
		if ((exec & BIT_ULL(l)) &&
		    f32_cmp(op & 0xf, f32_mods(gfx9_lane32(&s0, l), v, 0),
			    f32_mods(gfx9_lane32(&s1, l), v, 1)))
			res |= BIT_ULL(l);
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
	if (op >= 0x40 && op <= 0x5f)
		return fpcmp(d, w, in, v, op);
	if (gfx9_fp32_op(op))
		return fp32(d, w, in, v, op);
	return fp64(d, w, in, v, op);
}
