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
