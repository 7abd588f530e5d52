// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side test of kfdsim_f32_add(), the integer binary32 addition behind
 * the simulated GPU's VADD_F32 kernel, against the host FPU.
 *
 * The host (x86-64 SSE, default MXCSR: round to nearest even, no flush to
 * zero) is the reference. Results must match bit for bit, except that any
 * NaN matches any NaN: which NaN an operation returns is not part of the
 * contract. A few fixed expectations also check the interesting cases
 * without trusting the host.
 */
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"
#include "kfdsim_f32.h"

#define MAX_LOGGED	10

static u64 rng_state = 0x9e3779b97f4a7c15ull;

/* xorshift64*: fast, and reproducible from the fixed seed. */
static u64 rnd64(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static u32 rnd32(void)
{
	return rnd64() >> 32;
}

static u32 rnd_below(u32 n)
{
	return rnd32() % n;
}

static u32 f32_bits(float f)
{
	u32 u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static float f32_value(u32 u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static bool is_nan(u32 x)
{
	return (x & 0x7fffffffu) > 0x7f800000u;
}

static u32 make(u32 sign, u32 exp, u32 frac)
{
	return (sign << 31) | ((exp & 0xff) << 23) | (frac & 0x7fffff);
}

static u32 host_add(u32 a, u32 b)
{
	return f32_bits(f32_value(a) + f32_value(b));
}

/* Check a + b and b + a; return the number of mismatches (0 to 2). */
static int check(struct __test_metadata *_metadata, int *logged,
		 u32 a, u32 b)
{
	u32 ops[2][2] = { { a, b }, { b, a } };
	u32 want, got;
	int i, bad = 0;

	for (i = 0; i < 2; i++) {
		want = host_add(ops[i][0], ops[i][1]);
		got = kfdsim_f32_add(ops[i][0], ops[i][1]);
		if (got == want || (is_nan(got) && is_nan(want)))
			continue;
		bad++;
		if ((*logged)++ < MAX_LOGGED)
			TH_LOG("%#010x + %#010x: got %#010x, host %#010x",
			       ops[i][0], ops[i][1], got, want);
	}
	return bad;
}

/* The results worked out by hand, independently of the host. */
TEST(fixed)
{
	static const u32 cases[][3] = {
		{ 0x3f800000, 0x3f800000, 0x40000000 },	/* 1 + 1 = 2 */
		{ 0x00000000, 0x80000000, 0x00000000 },	/* +0 + -0 = +0 */
		{ 0x80000000, 0x80000000, 0x80000000 },	/* -0 + -0 = -0 */
		{ 0x3f800000, 0xbf800000, 0x00000000 },	/* 1 - 1 = +0 */
		{ 0x3f800000, 0x33800000, 0x3f800000 },	/* tie, to even */
		{ 0x3f800001, 0x33800000, 0x3f800002 },	/* tie, to even */
		{ 0x3f800000, 0x33800001, 0x3f800001 },	/* above the tie */
		{ 0x3f800000, 0xb3800000, 0x3f7fffff },	/* exact */
		{ 0x3f800000, 0xb3000000, 0x3f800000 },	/* tie, to even */
		{ 0x3f800000, 0xb3000001, 0x3f7fffff },	/* past the tie */
		{ 0x7f7fffff, 0x7f7fffff, 0x7f800000 },	/* overflow */
		{ 0x7f7fffff, 0x73000000, 0x7f800000 },	/* tie overflows */
		{ 0x7f7fffff, 0x72ffffff, 0x7f7fffff },	/* below the tie */
		{ 0xff7fffff, 0xff7fffff, 0xff800000 },	/* -overflow */
		{ 0x00000001, 0x00000001, 0x00000002 },	/* subnormals */
		{ 0x00800000, 0x80000001, 0x007fffff },	/* to subnormal */
		{ 0x007fffff, 0x00000001, 0x00800000 },	/* to normal */
		{ 0x7f800000, 0x3f800000, 0x7f800000 },	/* Inf + 1 */
		{ 0x7f800000, 0x7f800000, 0x7f800000 },	/* Inf + Inf */
		{ 0xff800000, 0x7f7fffff, 0xff800000 },	/* -Inf + max */
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		EXPECT_EQ(cases[i][2], kfdsim_f32_add(cases[i][0], cases[i][1]))
			TH_LOG("%#010x + %#010x", cases[i][0], cases[i][1]);
		EXPECT_EQ(cases[i][2], kfdsim_f32_add(cases[i][1], cases[i][0]))
			TH_LOG("%#010x + %#010x", cases[i][1], cases[i][0]);
	}
	EXPECT_TRUE(is_nan(kfdsim_f32_add(0x7f800000, 0xff800000)));
	EXPECT_TRUE(is_nan(kfdsim_f32_add(0x7fc00000, 0x3f800000)));
	EXPECT_TRUE(is_nan(kfdsim_f32_add(0x3f800000, 0x7f800001)));
	EXPECT_TRUE(is_nan(kfdsim_f32_add(0xffffffff, 0x7f800000)));
}

/* Every pair of a set of special and boundary values, both signs. */
TEST(specials)
{
	static const u32 mag[] = {
		0x00000000, 0x00000001, 0x00000002, 0x00000003, 0x00400000,
		0x007ffffe, 0x007fffff, 0x00800000, 0x00800001, 0x00ffffff,
		0x01000000, 0x0c000000, 0x33000000, 0x33800000, 0x33800001,
		0x34000000, 0x3effffff, 0x3f000000, 0x3f7fffff, 0x3f800000,
		0x3f800001, 0x3f800002, 0x3f800003, 0x3fffffff, 0x40000000,
		0x4b000000, 0x4b7fffff, 0x4b800000, 0x72ffffff, 0x73000000,
		0x73000001, 0x7effffff, 0x7f000000, 0x7f7ffffe, 0x7f7fffff,
		0x7f800000, 0x7f800001, 0x7fbfffff, 0x7fc00000, 0x7fffffff,
	};
	const unsigned int n = ARRAY_SIZE(mag);
	unsigned int i, j, si, sj;
	int logged = 0, bad = 0;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			for (si = 0; si < 2; si++)
				for (sj = 0; sj < 2; sj++)
					bad += check(_metadata, &logged,
						     mag[i] | si << 31,
						     mag[j] | sj << 31);
	ASSERT_EQ(0, bad);
}

/* Uniformly random bit patterns: mostly far apart exponents. */
TEST(random_bits)
{
	int logged = 0, bad = 0;
	long i;

	for (i = 0; i < 4000000; i++)
		bad += check(_metadata, &logged, rnd32(), rnd32());
	ASSERT_EQ(0, bad);
}

/*
 * Exponents at most 30 apart, all normal ranges: alignment shifts, carries,
 * cancellation of many bits and rounding at every distance.
 */
TEST(close_exponents)
{
	int logged = 0, bad = 0;
	u32 ea, eb;
	long i;

	for (i = 0; i < 4000000; i++) {
		ea = rnd_below(256);
		eb = ea + rnd_below(61) - 30;
		bad += check(_metadata, &logged,
			     make(rnd32() & 1, ea, rnd32()),
			     make(rnd32() & 1, eb, rnd32()));
	}
	ASSERT_EQ(0, bad);
}

/* Subnormals and the smallest normals, where no flush to zero may occur. */
TEST(subnormals)
{
	int logged = 0, bad = 0;
	long i;

	for (i = 0; i < 2000000; i++)
		bad += check(_metadata, &logged,
			     make(rnd32() & 1, rnd_below(3), rnd32()),
			     make(rnd32() & 1, rnd_below(3), rnd32()));
	ASSERT_EQ(0, bad);
}

/* Near-equal magnitudes of opposite sign: massive cancellation. */
TEST(cancellation)
{
	int logged = 0, bad = 0;
	u32 a, delta;
	long i;

	for (i = 0; i < 2000000; i++) {
		a = rnd32() & 0x7fffffffu;
		delta = rnd_below(1u << rnd_below(24)) - (1u << 10);
		bad += check(_metadata, &logged, a, (a + delta) ^ 0x80000000u);
	}
	ASSERT_EQ(0, bad);
}

/*
 * b exactly half an ulp of a, or one ulp of b off it: ties to even and
 * the decisions right next to them, for odd and even significands.
 */
TEST(ties)
{
	int logged = 0, bad = 0;
	u32 a, ea, sign, fb;
	int k, d;
	long i;

	for (i = 0; i < 1000000; i++) {
		ea = 27 + rnd_below(227);
		sign = rnd32() & 1;
		a = make(sign, ea, rnd32());
		for (k = 0; k < 3; k++) {
			/* half an ulp of a, times 2^-k below that */
			fb = (k == 0) ? 0 : rnd32();
			for (d = -1; d <= 1; d++) {
				bad += check(_metadata, &logged, a,
					     make(sign, ea - 24 - k, fb) + d);
				bad += check(_metadata, &logged, a,
					     make(!sign, ea - 24 - k, fb) + d);
			}
		}
	}
	ASSERT_EQ(0, bad);
}

/* Sums at the top of the range: overflow to Inf or rounding below it. */
TEST(overflow)
{
	int logged = 0, bad = 0;
	long i;

	for (i = 0; i < 1000000; i++)
		bad += check(_metadata, &logged,
			     make(rnd32() & 1, 254 - rnd_below(2), rnd32()),
			     make(rnd32() & 1, 254 - rnd_below(30), rnd32()));
	ASSERT_EQ(0, bad);
}

TEST_HARNESS_MAIN
