/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel types drivers/kfdsim/sim/kfdsim_f32.c uses, for a user-space
 * build. Passed with -include, ahead of everything else.
 */
#ifndef F32_SHIM_H
#define F32_SHIM_H

#include <stdbool.h>
#include <linux/types.h>

typedef __u32 u32;
typedef __u64 u64;

#endif /* F32_SHIM_H */
