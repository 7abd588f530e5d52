/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Include the kselftest harness the way every kfdsim test does.
 *
 * Under -Wextra -Werror two warnings are switched off for the test files
 * (the library files keep them): the 6.1 harness macros expand to
 * functions with parameters they do not use, and ASSERT_EQ(0, x) compares
 * an int literal with whatever type x has, unsigned or not.
 */
#ifndef KT_HARNESS_H
#define KT_HARNESS_H

#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"

#include "kselftest_harness.h"

#endif /* KT_HARNESS_H */
