/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Include the kselftest harness the way every kfdsim test does.
 *
 * Under -Wextra -Werror two warnings are switched off for the test files
 * (the library files keep them): the 6.1 harness macros expand to
 * functions with parameters they do not use, and ASSERT_EQ(0, x) compares
 * an int literal with whatever type x has, unsigned or not.
 *
 * Assertions several test files share, which need the harness, are here too.
 */
#ifndef KT_HARNESS_H
#define KT_HARNESS_H

#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"

#include "kselftest_harness.h"

#include <stdlib.h>

#include "kfdsim_test.h"

/*
 * Every test's timeout is a hang guard: the harness's 30 s default, or
 * TEST_F_TIMEOUT's. A debug kernel (KASAN, lockdep) under TCG runs several
 * times slower, so KFDSIM_TIMEOUT_SCALE=N (a whole number, 1 to 20)
 * multiplies them all before the tests run; make check-debug sets it.
 * Latency bounds a test asserts scale with kt_timeout_scale() too.
 */
static inline void kt_scale_timeouts(void)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t;
	int n = kt_timeout_scale();

	if (n == 1)
		return;
	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t; t = t->next)
			t->timeout *= n;
}

/* The harness's own TEST_HARNESS_MAIN, with the scaling first. */
#undef TEST_HARNESS_MAIN
#define TEST_HARNESS_MAIN \
	static void __attribute__((constructor)) \
	__constructor_order_last(void) \
	{ \
		if (!__constructor_order) \
			__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD; \
	} \
	int main(int argc, char **argv) \
	{ \
		kt_scale_timeouts(); \
		return test_harness_run(argc, argv); \
	}

/*
 * In a test whose fixture has `struct kt_props base` (the debugfs counters
 * at its start) and `char msg[]`: every counter is back at self->base.
 */
#define KT_EXPECT_COUNTERS_BACK() do {					\
	struct kt_props now;						\
									\
	ASSERT_EQ(0, kt_counters(&now, self->msg, sizeof(self->msg)));	\
	EXPECT_EQ(0, kt_counters_diff(&self->base, &now, self->msg,	\
				      sizeof(self->msg)))		\
		TH_LOG("counters changed: %s", self->msg);		\
} while (0)

#endif /* KT_HARNESS_H */
