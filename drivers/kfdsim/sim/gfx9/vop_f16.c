// SPDX-License-Identifier: GPL-2.0
/*
 * binary16 (f16) and 16-bit integer vector operations: the VOP1, VOP2,
 * VOP3 and VOPC ones here (their own opcode table, gfx9_vop16_ops[],
 * looked up where gfx9_vop_ops[] has no entry), the packed VOP3P ones in
 * vop3p.c, which uses the arithmetic below.
 *
 * The f16 arithmetic is done in integers, exactly: an f16 is m * 2^e
 * with m < 2^11 and -24 <= e <= 5, so a sum of two is an integer multiple
 * of 2^-24 below 2^17 (fits 64 bits), a product a multiple of 2^-48
 * below 2^32 (22 significant bits) and a fused a * b + c a multiple of
 * 2^-48 below 2^33 (fits 128 bits). Each result is therefore known
 * exactly and rounded once as MODE.FP_ROUND[3:2] (bits [3:2]) says
 * (f16_pack()): correctly rounded by construction, with no double
 * rounding to argue about and no FPU section. v_mad_f16 is not fused:
 * its product is rounded first.
 *
 * MODE.FP_DENORM[3:2] (bits [7:6]) 0 flushes f16 subnormal inputs and
 * results to a signed zero. The rounding modes toward +Inf, -Inf and
 * zero apply to every f16 result computed here but the transcendentals
 * (v_log/exp/sin/cos_f16, which trap in those modes): an overflow
 * rounded toward zero gives the largest finite f16 (65504), an exact
 * zero sum of operands of opposite signs is -0 when rounding toward
 * -Inf (IEEE 754). A NaN input gives that NaN quieted (the first NaN operand), an
 * invalid operation (Inf - Inf, 0 * Inf) the default NaN 0x7e00; min and
 * max follow IEEE mode (a NaN operand yields the other operand).
 *
 * 16-bit results: on gfx9 the VOP1/VOP2/VOP3 16-bit operations zero the
 * high half of vdst, except v_mac_f16, which keeps it. gfx9 has VOP3
 * op_sel only on v_mad_f16/u16/i16 and v_fma_f16 (elsewhere it traps):
 * op_sel[0..2] read the high half of a source, op_sel[3] writes the high
 * half of vdst and keeps the low one.
 */
#include <linux/bits.h>
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <asm/fpu/api.h>

#include "fp_soft.h"
#include "gfx9.h"
#include "vop_f16.h"

#define F16_SIGN	0x8000
#define F16_ABS		0x7fff
#define F16_INF		0x7c00
#define F16_QNAN	0x0200
#define F16_DEFAULT_NAN	0x7e00
#define F16_ONE		0x3c00
#define F16_MAX		0x7bff

/*
 * How an f16 result is rounded (@fm of the functions below): bit 0
 * (F16_FLUSH) flushes subnormal inputs and results, bits 2:1 are
 * MODE.FP_ROUND[3:2] (enum sf_round). A bool flush is round to nearest.
 */
#define F16_FLUSH	1u
#define F16_ROUND(fm)	(((fm) >> 1) & 3)

/* MODE: FP_ROUND[3:2] and FP_DENORM[3:2] are f64 and f16. */
#define GFX9_MODE_ROUND16(m)	(((m) >> 2) & 3)
#define GFX9_MODE_DENORM16(m)	(((m) >> 6) & 3)

static bool f16_isnan(u16 x)
{
	return (x & F16_ABS) > F16_INF;
}

static bool f16_isinf(u16 x)
{
	return (x & F16_ABS) == F16_INF;
}

/* @x finite as m * 2^e (m 0 for a zero or a flushed subnormal). */
static void f16_unpack(u16 x, bool flush, u64 *m, int *e)
{
	unsigned int exp = (x >> 10) & 0x1f, frac = x & 0x3ff;

	if (!exp) {
		*m = flush ? 0 : frac;
		*e = -24;
	} else {
		*m = frac | 0x400;
		*e = (int)exp - 25;
	}
}

static int u128_fls(unsigned __int128 x)
{
	u64 hi = x >> 64;

	return hi ? 64 + fls64(hi) : fls64((u64)x);
}

/*
 * (-1)^@neg * @mag * 2^@e rounded to f16 as @fm says: to nearest (ties to
 * even), toward +Inf, -Inf or zero. Beyond the largest finite f16 it is
 * Inf, or 65504 when the mode rounds that sign toward zero; a subnormal
 * result is flushed with F16_FLUSH.
 */
static u16 f16_pack(bool neg, unsigned __int128 mag, int e, unsigned int fm)
{
	unsigned __int128 rem, half;
	unsigned int round = F16_ROUND(fm);
	/* a directed mode that takes an inexact magnitude up */
	bool up = (round == SF_RUP && !neg) || (round == SF_RDN && neg);
	u16 sign = neg ? F16_SIGN : 0;
	u16 huge = sign | (round == SF_RNE || up ? F16_INF : F16_MAX);
	int p, big_e, q, drop;
	u64 m;

	if (!mag)
		return sign;
	p = u128_fls(mag) - 1;		/* mag is in [2^p, 2^(p+1)) */
	big_e = p + e;			/* the value in [2^E, 2^(E+1)) */
	q = max(big_e - 10, -24);	/* the exponent of the result's ulp */
	if (q > 6)
		return huge;
	drop = q - e;			/* bits of mag below the ulp */
	if (drop <= 0) {
		m = (u64)(mag << -drop);
	} else if (drop > p + 1) {
		/* below half of the smallest subnormal, not 0 */
		m = round != SF_RNE && up;
	} else {
		m = (u64)(mag >> drop);
		rem = mag - ((unsigned __int128)m << drop);
		half = (unsigned __int128)1 << (drop - 1);
		if (round == SF_RNE) {
			if (rem > half || (rem == half && (m & 1)))
				m++;
		} else if (rem && up) {
			m++;
		}
	}
	if (m == 0x800) {		/* rounded up to the next binade */
		m = 0x400;
		q++;
	}
	if (!m)
		return sign;
	if (m < 0x400)			/* subnormal: q is -24 */
		return (fm & F16_FLUSH) ? sign : sign | (u16)m;
	if (q + 25 >= 31)
		return huge;
	return sign | (u16)((q + 25) << 10) | (u16)(m & 0x3ff);
}

/* (-1)^@neg * @m * 2^@e, exact, as a signed 128-bit multiple of 2^@base. */
static __int128 f16_fixed(bool neg, u64 m, int e, int base)
{
	__int128 v = (__int128)((unsigned __int128)m << (e - base));

	return neg ? -v : v;
}

static u16 f16_from_fixed(__int128 v, int base, bool zero_neg,
			  unsigned int fm)
{
	if (!v)
		return zero_neg ? F16_SIGN : 0;
	if (v < 0)
		return f16_pack(true, (unsigned __int128)-v, base, fm);
	return f16_pack(false, (unsigned __int128)v, base, fm);
}

/*
 * The sign of an exact zero sum (IEEE 754): that of the two addends if
 * both are zeros of one sign (@both_zero, @same, @neg), else -0 when
 * rounding toward -Inf and +0 otherwise.
 */
static bool f16_zero_neg(bool both_zero, bool same, bool neg,
			 unsigned int fm)
{
	if (both_zero && same)
		return neg;
	return F16_ROUND(fm) == SF_RDN;
}

static u16 f16_nan2(u16 a, u16 b)
{
	return (f16_isnan(a) ? a : b) | F16_QNAN;
}

u16 f16_add(u16 a, u16 b, unsigned int fm)
{
	bool flush = fm & F16_FLUSH;
	bool na = a & F16_SIGN, nb = b & F16_SIGN;
	int ea, eb, base;
	u64 ma, mb;

	if (f16_isnan(a) || f16_isnan(b))
		return f16_nan2(a, b);
	if (f16_isinf(a) || f16_isinf(b)) {
		if (f16_isinf(a) && f16_isinf(b) && na != nb)
			return F16_DEFAULT_NAN;
		return f16_isinf(a) ? a : b;
	}
	f16_unpack(a, flush, &ma, &ea);
	f16_unpack(b, flush, &mb, &eb);
	base = min(ea, eb);
	return f16_from_fixed(f16_fixed(na, ma, ea, base) +
			      f16_fixed(nb, mb, eb, base), base,
			      f16_zero_neg(!ma && !mb, na == nb, na, fm), fm);
}

u16 f16_mul(u16 a, u16 b, unsigned int fm)
{
	bool flush = fm & F16_FLUSH;
	bool neg = (a ^ b) & F16_SIGN;
	int ea, eb;
	u64 ma, mb;

	if (f16_isnan(a) || f16_isnan(b))
		return f16_nan2(a, b);
	f16_unpack(a, flush, &ma, &ea);
	f16_unpack(b, flush, &mb, &eb);
	if (f16_isinf(a) || f16_isinf(b)) {
		if ((!f16_isinf(a) && !ma) || (!f16_isinf(b) && !mb))
			return F16_DEFAULT_NAN;
		return (neg ? F16_SIGN : 0) | F16_INF;
	}
	return f16_pack(neg, ma * mb, ea + eb, fm);
}

/* a * b + c with one rounding. */
u16 f16_fma(u16 a, u16 b, u16 c, unsigned int fm)
{
	bool flush = fm & F16_FLUSH;
	bool np = (a ^ b) & F16_SIGN, nc = c & F16_SIGN;
	int ea, eb, ec, base;
	u64 ma, mb, mc;

	if (f16_isnan(a) || f16_isnan(b) || f16_isnan(c))
		return (f16_isnan(a) ? a : f16_isnan(b) ? b : c) | F16_QNAN;
	f16_unpack(a, flush, &ma, &ea);
	f16_unpack(b, flush, &mb, &eb);
	f16_unpack(c, flush, &mc, &ec);
	if (f16_isinf(a) || f16_isinf(b)) {
		if ((!f16_isinf(a) && !ma) || (!f16_isinf(b) && !mb))
			return F16_DEFAULT_NAN;
		if (f16_isinf(c) && nc != np)
			return F16_DEFAULT_NAN;
		return (np ? F16_SIGN : 0) | F16_INF;
	}
	if (f16_isinf(c))
		return c;
	base = min(ea + eb, ec);
	return f16_from_fixed(f16_fixed(np, ma * mb, ea + eb, base) +
			      f16_fixed(nc, mc, ec, base), base,
			      f16_zero_neg((!ma || !mb) && !mc, np == nc, np, fm),
			      fm);
}

/* IEEE-mode min/max: a NaN operand yields the other; -0 below +0. */
static int f16_key(u16 x)
{
	return (x & F16_SIGN) ? -(int)(x & F16_ABS) - 1 : x;
}

u16 f16_minmax(u16 a, u16 b, bool max, bool flush)
{
	if (f16_isnan(a))
		return f16_isnan(b) ? a | F16_QNAN : b;
	if (f16_isnan(b))
		return a;
	if (flush && !(a & F16_INF))
		a &= F16_SIGN;
	if (flush && !(b & F16_INF))
		b &= F16_SIGN;
	return (f16_key(a) < f16_key(b)) != max ? a : b;
}

/* Clamp to [0, 1]; a NaN becomes 0, -0 stays (as for binary32). */
u16 f16_clamp(u16 r)
{
	if (f16_isnan(r) || ((r & F16_SIGN) && (r & F16_ABS)))
		return 0;
	return (r & F16_SIGN) ? r : min_t(u16, r, F16_ONE);
}

/* omod (x2, x4, /2) and clamp of an f16 result. */
static u16 f16_outmod(u16 r, const struct gfx9_vop *v, unsigned int fm)
{
	static const u16 scale[4] = { 0x3c00, 0x4000, 0x4400, 0x3800 };

	if (v->omod)
		r = f16_mul(r, scale[v->omod], fm);
	return v->clamp ? f16_clamp(r) : r;
}

/* The f16 of an f32 (v_cvt_f16_f32): exact input, one rounding. */
static u16 f16_from_f32(u32 x, unsigned int fm)
{
	unsigned int exp = (x >> 23) & 0xff;
	bool neg = x >> 31;
	u64 m = x & 0x7fffff;

	if (exp == 0xff) {
		if (m)		/* NaN: quiet, the payload's top bits kept */
			return (neg ? F16_SIGN : 0) | F16_INF | F16_QNAN |
			       (u16)(m >> 13);
		return (neg ? F16_SIGN : 0) | F16_INF;
	}
	if (exp)
		m |= BIT(23);
	else
		exp = 1;	/* f32 subnormals are below the f16 range */
	return f16_pack(neg, m, (int)exp - 150, fm);
}

/* The f32 of an f16 (v_cvt_f32_f16): always exact. */
static u32 f32_from_f16(u16 x, bool flush)
{
	u32 sign = (u32)(x & F16_SIGN) << 16;
	int e;
	u64 m;

	if (f16_isnan(x))
		return sign | 0x7fc00000 | (u32)(x & 0x3ff) << 13;
	if (f16_isinf(x))
		return sign | 0x7f800000;
	f16_unpack(x, flush, &m, &e);
	if (!m)
		return sign;
	/* normalise m to 24 bits: value = m * 2^e, exponent field e + 150 */
	while (m < BIT(23)) {
		m <<= 1;
		e--;
	}
	return sign | (u32)(e + 150) << 23 | (u32)(m & 0x7fffff);
}

/**
 * f16_to_f32 - the binary32 of an f16, exact (v_fma_mix sources)
 * @x: the f16
 * @flush: a subnormal reads as zero
 *
 * Return: the binary32 bits; a NaN comes out quiet.
 */
u32 f16_to_f32(u16 x, bool flush)
{
	return f32_from_f16(x, flush);
}

/**
 * f16_from_f64 - a binary64 rounded once to f16, nearest even
 * @x: the binary64 bits
 * @flush: a subnormal result becomes zero
 *
 * Return: the f16 bits; a NaN keeps its sign and the top of its payload
 * and comes out quiet.
 */
u16 f16_from_f64(u64 x, bool flush)
{
	unsigned int exp = (x >> 52) & 0x7ff;
	bool neg = x >> 63;
	u64 m = x & (BIT_ULL(52) - 1);

	if (exp == 0x7ff) {
		if (m)
			return (neg ? F16_SIGN : 0) | F16_INF | F16_QNAN |
			       (u16)(m >> 42);
		return (neg ? F16_SIGN : 0) | F16_INF;
	}
	if (exp)
		m |= BIT_ULL(52);
	else
		exp = 1;
	return f16_pack(neg, m, (int)exp - 1075, flush);
}

/* f16 to a 16-bit integer, truncating; NaN 0; out of range saturates. */
static u16 f16_to_int(u16 x, bool sign, bool flush)
{
	bool neg = x & F16_SIGN;
	s64 lo = sign ? -32768 : 0, hi = sign ? 32767 : 65535, v;
	int e;
	u64 m;

	if (f16_isnan(x))
		return 0;
	if (f16_isinf(x))
		return neg ? lo : hi;
	f16_unpack(x, flush, &m, &e);
	v = e >= 0 ? (s64)(m << e) : (s64)(m >> -e);
	if (neg)
		v = -v;
	return clamp(v, lo, hi);
}

/* The f16 inline constants (0.5 .. 1/(2 pi)) in place of f32 ones. */
static const u16 f16_consts[] = {
	0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400,
	0x3118,
};

void f16_vsrc(const struct gfx9_disp *d, const struct gfx9_wave *w,
	      const struct gfx9_insn *in, unsigned int code,
	      struct gfx9_src *s)
{
	gfx9_vsrc(d, w, in, code, GFX9_B32, s);
	if (code >= GFX9_SRC_FLOAT_FIRST && code <= GFX9_SRC_FLOAT_LAST)
		s->k = f16_consts[code - GFX9_SRC_FLOAT_FIRST];
}

/* The 16 bits of a source lane op_sel picks. */
static u16 f16_half(const struct gfx9_src *s, unsigned int l, bool hi)
{
	u32 x = gfx9_lane32(s, l);

	return hi ? x >> 16 : x;
}

static u16 f16_mods(u16 x, const struct gfx9_vop *v, unsigned int i)
{
	if (v->abs & BIT(i))
		x &= F16_ABS;
	if (v->neg & BIT(i))
		x ^= F16_SIGN;
	return x;
}

/* Write a 16-bit result: low half (high zeroed or kept) or high half. */
static u32 f16_write(u32 old, u16 r, const struct gfx9_vop *v, bool keep)
{
	if (v->opsel & 8)
		return (old & 0xffff) | (u32)r << 16;
	return keep ? (old & 0xffff0000) | r : r;
}

static bool f16_mode_ok(const struct gfx9_wave *w)
{
	return !GFX9_MODE_ROUND16(w->mode);
}

bool f16_flush(const struct gfx9_wave *w)
{
	return !GFX9_MODE_DENORM16(w->mode);
}

/* MODE's f16 rounding and flushing as an @fm for f16_pack(). */
static unsigned int f16_fm(const struct gfx9_wave *w)
{
	return (f16_flush(w) ? F16_FLUSH : 0) | GFX9_MODE_ROUND16(w->mode) << 1;
}

/* floor(sqrt(@x)); *@rest gets @x minus its square. */
static u64 f16_isqrt(u64 x, u64 *rest)
{
	u64 r = 0, b = BIT_ULL(62);

	while (b > x)
		b >>= 2;
	while (b) {
		if (x >= r + b) {
			x -= r + b;
			r = (r >> 1) + b;
		} else {
			r >>= 1;
		}
		b >>= 2;
	}
	*rest = x;
	return r;
}

/*
 * v_rcp_f16, v_sqrt_f16, v_rsq_f16, correctly rounded (the ISA allows 1
 * ULP): x = m * 2^e, the quotient or root computed in integers to more
 * than 24 bits, the remainder kept as a sticky bit below them, then
 * rounded once. sqrt(-0) is -0, a root of another negative the default
 * NaN, 1/+-0 and rsq(+-0) +-Inf.
 */
static u16 f16_rcp(u16 x, unsigned int fm)
{
	bool flush = fm & F16_FLUSH;
	u16 sign = x & F16_SIGN;
	u64 m, q;
	int e;

	if (f16_isnan(x))
		return x | F16_QNAN;
	if (f16_isinf(x))
		return sign;
	f16_unpack(x, flush, &m, &e);
	if (!m)
		return sign | F16_INF;
	/* 1 / (m 2^e) = (2^62 / m) * 2^(-62 - e) */
	q = BIT_ULL(62) / m;
	return f16_pack(sign, (unsigned __int128)q << 1 |
			(BIT_ULL(62) % m != 0), -63 - e, fm);
}

static u16 f16_root(u16 x, bool recip, unsigned int fm)
{
	bool flush = fm & F16_FLUSH;
	u16 sign = x & F16_SIGN;
	u64 m, r, rest, y, yrest = 0;
	int e;

	if (f16_isnan(x))
		return x | F16_QNAN;
	if (f16_isinf(x))
		return sign ? F16_DEFAULT_NAN : recip ? 0 : F16_INF;
	f16_unpack(x, flush, &m, &e);
	if (!m)
		return recip ? sign | F16_INF : sign;
	if (sign)
		return F16_DEFAULT_NAN;
	if (e & 1) {			/* an even exponent halves exactly */
		m <<= 1;
		e--;
	}
	if (!recip) {
		/* sqrt(m 2^e) = sqrt(m 2^40) * 2^(e/2 - 20) */
		r = f16_isqrt(m << 40, &rest);
		return f16_pack(false, (unsigned __int128)r << 1 | (rest != 0),
				e / 2 - 21, fm);
	}
	/* 1 / sqrt(m 2^e) = sqrt(2^62 / m) * 2^(-31 - e/2) */
	y = BIT_ULL(62) / m;
	yrest = BIT_ULL(62) % m;
	r = f16_isqrt(y, &rest);
	return f16_pack(false, (unsigned __int128)r << 1 | ((rest | yrest) != 0),
			-32 - e / 2, fm);
}

/* One lane of an f16 operation of the table below. */
static u16 vop_f16_lane(unsigned int op, u16 x, u16 y, u16 z, unsigned int fm)
{
	switch (op) {
	case 0x11f:
		return f16_add(x, y, fm);
	case 0x120:
		return f16_add(x, y ^ F16_SIGN, fm);
	case 0x121:
		return f16_add(y, x ^ F16_SIGN, fm);
	case 0x122:
		return f16_mul(x, y, fm);
	case 0x12d:
		return f16_minmax(x, y, true, fm & F16_FLUSH);
	case 0x12e:
		return f16_minmax(x, y, false, fm & F16_FLUSH);
	case 0x17d:
		return f16_rcp(x, fm);
	case 0x17e:
		return f16_root(x, false, fm);
	case 0x17f:
		return f16_root(x, true, fm);
	case 0x203:	/* v_mad_f16: product rounded, then the sum */
		return f16_add(f16_mul(x, y, fm), z, fm);
	default:	/* 0x123 v_mac_f16 (z is vdst), 0x206 v_fma_f16 */
		return op == 0x123 ? f16_add(f16_mul(x, y, fm), z, fm) :
				     f16_fma(x, y, z, fm);
	}
}

static int vop_f16(struct gfx9_disp *d, struct gfx9_wave *w,
		   const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	u32 *dst = gfx9_vreg(w, v->vdst);
	struct gfx9_src s0, s1, s2 = {};
	u64 exec = gfx9_exec(w);
	unsigned int fm = f16_fm(w);
	unsigned int op = in->op, l;
	/* VOP1 (0x140-0x1bf): one source */
	bool unary = op >= 0x140 && op < 0x1c0;
	u16 x, y = 0, z, r;

	f16_vsrc(d, w, in, v->src[0], &s0);
	if (!unary)
		f16_vsrc(d, w, in, v->src[1], &s1);
	if (v->e64)
		f16_vsrc(d, w, in, v->src[2], &s2);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		x = f16_mods(f16_half(&s0, l, v->opsel & 1), v, 0);
		if (!unary)
			y = f16_mods(f16_half(&s1, l, v->opsel & 2), v, 1);
		if (op == 0x123)
			z = dst[l];
		else
			z = f16_mods(f16_half(&s2, l, v->opsel & 4), v, 2);
		r = f16_outmod(vop_f16_lane(op, x, y, z, fm), v, fm);
		dst[l] = f16_write(dst[l], r, v, op == 0x123);
	}
	return 0;
}

/*
 * v_log_f16, v_exp_f16, v_sin_f16, v_cos_f16: the f16 widened exactly,
 * the function evaluated in binary64 by vop_fp.c (inside a
 * kernel_fpu_begin() section: only registers are touched there) to
 * within 2^-60, then rounded once to f16, within the ISA's 1 ULP.
 */
static int vop_f16_transc(struct gfx9_disp *d, struct gfx9_wave *w,
			  const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	u32 *dst = gfx9_vreg(w, v->vdst);
	u64 exec = gfx9_exec(w);
	bool flush = f16_flush(w);
	struct gfx9_src s0;
	unsigned int l;
	u16 x, r;

	if (!f16_mode_ok(w))
		return gfx9_illegal(d, w, in, "f16 rounding mode not implemented");
	f16_vsrc(d, w, in, v->src[0], &s0);
	kernel_fpu_begin();
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		x = f16_mods(f16_half(&s0, l, v->opsel & 1), v, 0);
		if (f16_isnan(x))
			r = x | F16_QNAN;
		else
			r = f16_from_f64(gfx9_fp_transc16(in->op,
							  f32_from_f16(x, flush)),
					 flush);
		dst[l] = f16_write(dst[l], f16_outmod(r, v, flush), v, false);
	}
	kernel_fpu_end();
	return 0;
}

/* The conversions: f16 <-> f32, u16, i16. */
static int vop_f16_cvt(struct gfx9_disp *d, struct gfx9_wave *w,
		       const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	u32 *dst = gfx9_vreg(w, v->vdst), x, r;
	bool flush = f16_flush(w), flush32 = !((w->mode >> 4) & 3);
	u64 exec = gfx9_exec(w);
	unsigned int op = in->op, l, fm = f16_fm(w);
	struct gfx9_src s0;

	/* Integer sources and results take no float modifiers. */
	if ((op == 0x179 || op == 0x17a) && (v->abs || v->neg))
		return gfx9_illegal(d, w, in, "modifiers on an integer source");
	if ((op == 0x17b || op == 0x17c || op == 0x14b) &&
	    (v->omod || v->clamp))
		return gfx9_illegal(d, w, in, "output modifier not implemented");
	f16_vsrc(d, w, in, v->src[0], &s0);
	if (op == 0x14a)	/* an f32 source reads f32 constants */
		gfx9_vsrc(d, w, in, v->src[0], GFX9_B32, &s0);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		x = gfx9_lane32(&s0, l);
		switch (op) {
		case 0x14a:	/* v_cvt_f16_f32 */
			if (v->abs & 1)
				x &= ~BIT(31);
			if (v->neg & 1)
				x ^= BIT(31);
			if (flush32 && !(x & 0x7f800000))
				x &= BIT(31);
			r = f16_outmod(f16_from_f32(x, fm), v, fm);
			dst[l] = f16_write(dst[l], r, v, false);
			continue;
		case 0x14b:	/* v_cvt_f32_f16: a 32-bit result */
			x = f16_mods(f16_half(&s0, l, v->opsel & 1), v, 0);
			r = f32_from_f16(x, flush);
			if (flush32 && !(r & 0x7f800000))
				r &= BIT(31);
			dst[l] = r;
			continue;
		case 0x179:	/* v_cvt_f16_u16 */
			x = f16_half(&s0, l, v->opsel & 1);
			r = f16_pack(false, x, 0, fm);
			break;
		case 0x17a:	/* v_cvt_f16_i16 */
			x = f16_half(&s0, l, v->opsel & 1);
			r = f16_pack((s16)x < 0, abs((s16)x), 0, fm);
			break;
		default:	/* 0x17b v_cvt_u16_f16, 0x17c v_cvt_i16_f16 */
			x = f16_mods(f16_half(&s0, l, v->opsel & 1), v, 0);
			dst[l] = f16_write(dst[l],
					   f16_to_int(x, op == 0x17c, flush),
					   v, false);
			continue;
		}
		dst[l] = f16_write(dst[l], f16_outmod(r, v, fm), v, false);
	}
	return 0;
}

static bool f16_cmp(unsigned int cond, u16 x, u16 y)
{
	bool un = f16_isnan(x) || f16_isnan(y);
	int a = un ? 0 : f16_key(x), b = un ? 0 : f16_key(y);

	/* -0 and +0 are equal */
	if ((x & F16_ABS) == 0)
		a = 0;
	if ((y & F16_ABS) == 0)
		b = 0;
	return gfx9_fcmp(cond, !un && a < b, !un && a == b, !un && a > b);
}

static bool i16_cmp(unsigned int cond, bool sign, u16 x, u16 y)
{
	int a = sign ? (s16)x : x, b = sign ? (s16)y : y;

	switch (cond) {
	case 0:
		return false;
	case 1:
		return a < b;
	case 2:
		return a == b;
	case 3:
		return a <= b;
	case 4:
		return a > b;
	case 5:
		return a != b;
	case 6:
		return a >= b;
	default:
		return true;
	}
}

/*
 * VOPC: v_cmp(x)_class_f16 0x14-0x15, v_cmp(x)_*_f16 0x20-0x3f,
 * v_cmp(x)_*_{i,u}16 0xa0-0xbf.
 */
static int vop_cmp16(struct gfx9_disp *d, struct gfx9_wave *w,
		     const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	unsigned int op = in->op, l;
	bool flush = f16_flush(w), cmpx;
	u64 exec = gfx9_exec(w), res = 0;
	struct gfx9_src s0, s1;
	u16 x, y;
	bool t;

	if (op < 0x20) {
		cmpx = op & 1;
		f16_vsrc(d, w, in, v->src[0], &s0);
		gfx9_vsrc(d, w, in, v->src[1], GFX9_B32, &s1);
	} else if (op < 0x40) {
		cmpx = op & 0x10;
		f16_vsrc(d, w, in, v->src[0], &s0);
		f16_vsrc(d, w, in, v->src[1], &s1);
	} else {
		if (v->abs || v->neg)
			return gfx9_illegal(d, w, in,
					    "modifiers on an integer compare");
		cmpx = op & 0x10;
		gfx9_vsrc(d, w, in, v->src[0], GFX9_B32, &s0);
		gfx9_vsrc(d, w, in, v->src[1], GFX9_B32, &s1);
	}
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		x = f16_half(&s0, l, v->opsel & 1);
		y = f16_half(&s1, l, v->opsel & 2);
		if (op < 0x20) {
			x = f16_mods(x, v, 0);
			t = gfx9_lane32(&s1, l) & BIT(gfx9_fclass(x, 10, 5));
		} else if (op < 0x40) {
			x = f16_mods(x, v, 0);
			y = f16_mods(y, v, 1);
			if (flush && !(x & F16_INF))
				x &= F16_SIGN;
			if (flush && !(y & F16_INF))
				y &= F16_SIGN;
			t = f16_cmp(op & 15, x, y);
		} else {
			t = i16_cmp(op & 7, !(op & 8), x, y);
		}
		if (t)
			res |= BIT_ULL(l);
	}
	gfx9_sdst64(w, v->sdst, res);
	if (cmpx)
		gfx9_set_sreg64(w, GFX9_EXEC_LO, res);
	return 0;
}

/* One lane of a 16-bit integer operation (x src0, y src1, z src2). */
static u16 vop_i16_lane(unsigned int op, u16 x, u16 y, u16 z)
{
	switch (op) {
	case 0x126:
		return x + y;
	case 0x127:
		return x - y;
	case 0x128:
		return y - x;
	case 0x129:
		return x * y;
	case 0x12a:
		return y << (x & 15);
	case 0x12b:
		return y >> (x & 15);
	case 0x12c:
		return (s16)y >> (x & 15);
	case 0x12f:
		return max(x, y);
	case 0x130:
		return max((s16)x, (s16)y);
	case 0x131:
		return min(x, y);
	case 0x132:
		return min((s16)x, (s16)y);
	case 0x204:
		return x * y + z;	/* v_mad_u16 */
	default:
		return (s16)x * (s16)y + z;	/* 0x205 v_mad_i16 */
	}
}

static int vop_i16(struct gfx9_disp *d, struct gfx9_wave *w,
		   const struct gfx9_insn *in, const struct gfx9_vop *v)
{
	u32 *dst = gfx9_vreg(w, v->vdst);
	struct gfx9_src s0, s1, s2 = {};
	u64 exec = gfx9_exec(w);
	unsigned int l;
	u16 r;

	gfx9_vsrc(d, w, in, v->src[0], GFX9_B32, &s0);
	gfx9_vsrc(d, w, in, v->src[1], GFX9_B32, &s1);
	if (v->e64)
		gfx9_vsrc(d, w, in, v->src[2], GFX9_B32, &s2);
	for (l = 0; l < GFX9_LANES; l++) {
		if (!(exec & BIT_ULL(l)))
			continue;
		r = vop_i16_lane(in->op, f16_half(&s0, l, v->opsel & 1),
				 f16_half(&s1, l, v->opsel & 2),
				 f16_half(&s2, l, v->opsel & 4));
		dst[l] = f16_write(dst[l], r, v, false);
	}
	return 0;
}

/* Of these, gfx9 has op_sel on the mads and v_fma_f16 only. */
#define H_F(n)	{ n, vop_f16, GFX9_VOP_FLOAT }
#define H_FO(n)	{ n, vop_f16, GFX9_VOP_FLOAT | GFX9_VOP_OPSEL }
#define H_CV(n)	{ n, vop_f16_cvt, GFX9_VOP_FLOAT }
#define H_T(n)	{ n, vop_f16_transc, GFX9_VOP_FLOAT }
#define H_I(n)	{ n, vop_i16, 0 }
#define H_IO(n)	{ n, vop_i16, GFX9_VOP_OPSEL }
#define H_CF(n)	{ n, vop_cmp16, GFX9_VOP_FLOAT }
#define H_CI(n)	{ n, vop_cmp16, 0 }

const struct gfx9_vop_op gfx9_vop16_ops[1024] = {
	/* VOPC */
	[0x14] = H_CF("v_cmp_class_f16"), [0x15] = H_CF("v_cmpx_class_f16"),
	[0x20] = H_CF("v_cmp_f_f16"), [0x21] = H_CF("v_cmp_lt_f16"),
	[0x22] = H_CF("v_cmp_eq_f16"), [0x23] = H_CF("v_cmp_le_f16"),
	[0x24] = H_CF("v_cmp_gt_f16"), [0x25] = H_CF("v_cmp_lg_f16"),
	[0x26] = H_CF("v_cmp_ge_f16"), [0x27] = H_CF("v_cmp_o_f16"),
	[0x28] = H_CF("v_cmp_u_f16"), [0x29] = H_CF("v_cmp_nge_f16"),
	[0x2a] = H_CF("v_cmp_nlg_f16"), [0x2b] = H_CF("v_cmp_ngt_f16"),
	[0x2c] = H_CF("v_cmp_nle_f16"), [0x2d] = H_CF("v_cmp_neq_f16"),
	[0x2e] = H_CF("v_cmp_nlt_f16"), [0x2f] = H_CF("v_cmp_tru_f16"),
	[0x30] = H_CF("v_cmpx_f_f16"), [0x31] = H_CF("v_cmpx_lt_f16"),
	[0x32] = H_CF("v_cmpx_eq_f16"), [0x33] = H_CF("v_cmpx_le_f16"),
	[0x34] = H_CF("v_cmpx_gt_f16"), [0x35] = H_CF("v_cmpx_lg_f16"),
	[0x36] = H_CF("v_cmpx_ge_f16"), [0x37] = H_CF("v_cmpx_o_f16"),
	[0x38] = H_CF("v_cmpx_u_f16"), [0x39] = H_CF("v_cmpx_nge_f16"),
	[0x3a] = H_CF("v_cmpx_nlg_f16"), [0x3b] = H_CF("v_cmpx_ngt_f16"),
	[0x3c] = H_CF("v_cmpx_nle_f16"), [0x3d] = H_CF("v_cmpx_neq_f16"),
	[0x3e] = H_CF("v_cmpx_nlt_f16"), [0x3f] = H_CF("v_cmpx_tru_f16"),
	[0xa0] = H_CI("v_cmp_f_i16"), [0xa1] = H_CI("v_cmp_lt_i16"),
	[0xa2] = H_CI("v_cmp_eq_i16"), [0xa3] = H_CI("v_cmp_le_i16"),
	[0xa4] = H_CI("v_cmp_gt_i16"), [0xa5] = H_CI("v_cmp_ne_i16"),
	[0xa6] = H_CI("v_cmp_ge_i16"), [0xa7] = H_CI("v_cmp_t_i16"),
	[0xa8] = H_CI("v_cmp_f_u16"), [0xa9] = H_CI("v_cmp_lt_u16"),
	[0xaa] = H_CI("v_cmp_eq_u16"), [0xab] = H_CI("v_cmp_le_u16"),
	[0xac] = H_CI("v_cmp_gt_u16"), [0xad] = H_CI("v_cmp_ne_u16"),
	[0xae] = H_CI("v_cmp_ge_u16"), [0xaf] = H_CI("v_cmp_t_u16"),
	[0xb0] = H_CI("v_cmpx_f_i16"), [0xb1] = H_CI("v_cmpx_lt_i16"),
	[0xb2] = H_CI("v_cmpx_eq_i16"), [0xb3] = H_CI("v_cmpx_le_i16"),
	[0xb4] = H_CI("v_cmpx_gt_i16"), [0xb5] = H_CI("v_cmpx_ne_i16"),
	[0xb6] = H_CI("v_cmpx_ge_i16"), [0xb7] = H_CI("v_cmpx_t_i16"),
	[0xb8] = H_CI("v_cmpx_f_u16"), [0xb9] = H_CI("v_cmpx_lt_u16"),
	[0xba] = H_CI("v_cmpx_eq_u16"), [0xbb] = H_CI("v_cmpx_le_u16"),
	[0xbc] = H_CI("v_cmpx_gt_u16"), [0xbd] = H_CI("v_cmpx_ne_u16"),
	[0xbe] = H_CI("v_cmpx_ge_u16"), [0xbf] = H_CI("v_cmpx_t_u16"),
	/* VOP2 */
	[0x11f] = H_F("v_add_f16"), [0x120] = H_F("v_sub_f16"),
	[0x121] = H_F("v_subrev_f16"), [0x122] = H_F("v_mul_f16"),
	[0x123] = H_F("v_mac_f16"),
	[0x126] = H_I("v_add_u16"), [0x127] = H_I("v_sub_u16"),
	[0x128] = H_I("v_subrev_u16"), [0x129] = H_I("v_mul_lo_u16"),
	[0x12a] = H_I("v_lshlrev_b16"), [0x12b] = H_I("v_lshrrev_b16"),
	[0x12c] = H_I("v_ashrrev_i16"),
	[0x12d] = H_F("v_max_f16"), [0x12e] = H_F("v_min_f16"),
	[0x12f] = H_I("v_max_u16"), [0x130] = H_I("v_max_i16"),
	[0x131] = H_I("v_min_u16"), [0x132] = H_I("v_min_i16"),
	/* VOP1 */
	[0x14a] = H_CV("v_cvt_f16_f32"), [0x14b] = H_CV("v_cvt_f32_f16"),
	[0x179] = H_CV("v_cvt_f16_u16"), [0x17a] = H_CV("v_cvt_f16_i16"),
	[0x17b] = H_CV("v_cvt_u16_f16"), [0x17c] = H_CV("v_cvt_i16_f16"),
	[0x17d] = H_F("v_rcp_f16"), [0x17e] = H_F("v_sqrt_f16"),
	[0x17f] = H_F("v_rsq_f16"),
	[0x180] = H_T("v_log_f16"), [0x181] = H_T("v_exp_f16"),
	[0x189] = H_T("v_sin_f16"), [0x18a] = H_T("v_cos_f16"),
	/* VOP3 only */
	[0x203] = H_FO("v_mad_f16"), [0x204] = H_IO("v_mad_u16"),
	[0x205] = H_IO("v_mad_i16"), [0x206] = H_FO("v_fma_f16"),
};
