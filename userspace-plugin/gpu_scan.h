/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Classifying a BO's chunks on the GPU instead of on the host.
 *
 * A sparse or incremental dump only stores chunks that are not all zeros
 * and differ from the parent image. Finding out on the host means copying
 * every byte over first. kfdsim has a built-in kernel for it
 * (KFDSIM_KERNEL_CHUNK_SUMS, KFDSIM_KERNEL_CHUNK_XXH64): for each chunk it
 * gives the chunk's checksum (fold64 or XXH64, the same functions as
 * checksum.h's: the image's) and the OR of its words. The plugin
 * dispatches it with PM4 packets on the render node's compute ring, over
 * the BO's import, so that only the chunks to store are copied.
 *
 * This file builds the dispatch and reads its results; sdma_copy.c owns
 * the render node, the buffers and the submissions. A GPU without the
 * kernel (real AMD hardware: no kfdsim descriptor) fails the self-test
 * and the CPU classifies, as before.
 */
#ifndef KFD_PLUGIN_GPU_SCAN_H
#define KFD_PLUGIN_GPU_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "bo_copy.h"

/* The largest chunk the kernel takes. */
#define KP_SCAN_MAX_CHUNK	KFDSIM_CHUNK_SUMS_MAX_CHUNK
/* Dwords of the compute IB kp_scan_build() writes (padded). */
#define KP_SCAN_IB_DWORDS	32
/* Bytes of descriptor + kernarg at the start of the scan buffer. */
#define KP_SCAN_HEAD		512
/* Result bytes per chunk: its checksum, then the OR of its words. */
#define KP_SCAN_PAIR		16

enum kp_scan_mode {
	KP_SCAN_AUTO,		/* on the GPU when it can, else the CPU */
	KP_SCAN_CPU,		/* always the CPU */
};

/* KFD_BO_SCAN=auto|cpu; auto (also, with a warning, when invalid). */
enum kp_scan_mode kp_scan_mode_from_env(void);

/*
 * Write the kernel descriptor and kernarg into the scan buffer @head (its
 * CPU mapping; GPU VA @head_va) and the compute IB into @ib: chunks of
 * @chunk bytes over @len bytes at GPU VA @src, checksums @kind (or, with
 * @zero_only, KFDSIM_KERNEL_CHUNK_ZERO: only which chunks are zero),
 * results to GPU VA @out. Returns the IB's length in dwords.
 */
uint32_t kp_scan_build(uint32_t *ib, void *head, uint64_t head_va,
		       uint64_t src, uint64_t len, uint32_t chunk,
		       enum kp_sum_kind kind, bool zero_only, uint64_t out);

/*
 * Chunks [@c0, @c0 + @n) of @bo from the kernel's @pairs: zero chunks,
 * chunks the parent has (bo->base), chunks to store; their sums. -EIO if
 * a zero chunk's checksum is not the CPU's (the device disagrees: its
 * results cannot be trusted), with the reason in @why. With @zero_only
 * (the zero test kernel) the chunks are zero or to store, and the sums of
 * the latter are left to the CPU.
 */
int kp_scan_classify(const struct kp_copy_job *j, struct kp_copy_bo *bo,
		     uint64_t c0, uint64_t n, const uint64_t *pairs,
		     bool zero_only, char *why, size_t why_len);

#endif /* KFD_PLUGIN_GPU_SCAN_H */
