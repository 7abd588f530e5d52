/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IEEE-754 binary32 arithmetic in integer code, for the VADD_F32 kernel.
 *
 * Kernel code may not use the FPU, so the simulated GPU adds floats with
 * integer operations. Only <linux/types.h> is needed, which lets the
 * host-side unit test (selftests/f32) build the same file in user space.
 */
#ifndef KFDSIM_F32_H
#define KFDSIM_F32_H

#include <linux/types.h>

u32 kfdsim_f32_add(u32 a, u32 b);

#endif /* KFDSIM_F32_H */
