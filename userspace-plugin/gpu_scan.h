/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Classifying a BO's chunks on the GPU instead of on the host.
 *
 * A sparse or incremental dump only stores chunks that are not all zeros
 * and differ from the parent image. Finding out on the host means copying
 * every byte over first. The plugin has gfx906 kernels for it
 * (gpu/chunk_scan.s, assembled at build time and embedded as
 * kp_scan_code[]): for each chunk they give the chunk's checksum (XXH64 or
 * fold64, the same functions as checksum.h's: the image's) and the OR of
 * its words, or only whether it is zero. The plugin dispatches them with
 * PM4 packets on the render node's compute ring, over the BO's import, as
 * amdgpu's user space (Mesa) dispatches compute work: SET_SH_REG of
 * COMPUTE_PGM_LO/HI, RSRC1/RSRC2, USER_DATA_0/1 (the kernarg pointer),
 * NUM_THREAD_X/Y/Z, then DISPATCH_DIRECT; so only the chunks to store are
 * copied.
 *
 * This file builds the dispatch and reads its results; sdma_copy.c owns
 * the render node, the buffers and the submissions. A GPU whose results
 * are not the CPU's on a known page (the self-test) is not used: the CPU
 * classifies, as before.
 */
#ifndef KFD_PLUGIN_GPU_SCAN_H
#define KFD_PLUGIN_GPU_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "bo_copy.h"

/* The largest chunk the kernels take (a chunk's length is 32 bits). */
#define KP_SCAN_MAX_CHUNK	(1u << 22)
/* Dwords of the compute IB kp_scan_build() writes (padded). */
#define KP_SCAN_IB_DWORDS	32
/* The scan buffer: code at 0, kernarg, then the IB at KP_SCAN_HEAD. */
#define KP_SCAN_CODE_MAX	3072
#define KP_SCAN_ARGS_OFF	KP_SCAN_CODE_MAX
#define KP_SCAN_HEAD		(KP_SCAN_ARGS_OFF + 256)
/* Result bytes per chunk: its checksum, then the OR of its words. */
#define KP_SCAN_PAIR		16
/* Work-items (one per chunk) per workgroup: one wave. */
#define KP_SCAN_WG		64
/* COMPUTE_PGM_RSRC1: 64 VGPRs, 48 SGPRs, f32/f64 denormals kept. */
#define KP_SCAN_RSRC1		(15u | 5u << 6 | 0xf0u << 12)
/* COMPUTE_PGM_RSRC2: 2 user SGPRs (the kernarg pointer), TGID_X_EN. */
#define KP_SCAN_RSRC2		(2u << 1 | 1u << 7)

/* The kernels' argument (gpu/chunk_scan.s), at KP_SCAN_ARGS_OFF. */
struct kp_scan_args {
	uint64_t src;		/* GPU VA of the bytes, 8-byte aligned */
	uint64_t out;		/* GPU VA of the results, 16 per chunk */
	uint64_t size;		/* bytes at src, a multiple of 8 */
	uint32_t chunk;		/* bytes per chunk, a multiple of 8 */
	uint32_t nchunks;	/* ceil(size / chunk) */
};

/* gpu/chunk_scan.s assembled (generated gpu_scan_code.c). */
extern const uint8_t kp_scan_code[];
extern const size_t kp_scan_code_size;
extern const uint32_t kp_scan_xxh64_off, kp_scan_fold64_off,
	kp_scan_zero_off;

enum kp_scan_mode {
	KP_SCAN_AUTO,		/* on the GPU where it is faster, else the CPU */
	KP_SCAN_CPU,		/* always the CPU */
	KP_SCAN_GPU,		/* on the GPU whenever it works (tests, bench) */
};

/* KFD_BO_SCAN=auto|cpu|gpu; auto (also, with a warning, when invalid). */
enum kp_scan_mode kp_scan_mode_from_env(void);

/*
 * How long one scan dispatch may run, in ms: KFD_BO_SCAN_MS, default
 * KP_SCAN_DISPATCH_MS. A window is cut into dispatches of the bytes the
 * GPU scanned in that time when it was measured (kp_scan_step()), so
 * that a slow GPU never runs into the job timeout (amdgpu's
 * lockup_timeout, 10 s).
 */
#define KP_SCAN_DISPATCH_MS	1000
unsigned int kp_scan_dispatch_ms(void);

/*
 * Bytes per dispatch for a GPU that scanned @bps bytes per second: whole
 * waves (KP_SCAN_WG chunks of @chunk bytes) for @ms milliseconds, at
 * least one wave (a lane sums its whole chunk: a wave takes as long for
 * one chunk as for 64, so a smaller dispatch would not be shorter), at
 * most @window.
 */
uint64_t kp_scan_step(uint64_t bps, unsigned int ms, uint32_t chunk,
		      uint64_t window);

/* Bytes per second of @bytes in @ns nanoseconds (0 ns: as if 1). */
uint64_t kp_rate(uint64_t bytes, uint64_t ns);

/*
 * Write the code and the kernarg into the scan buffer @head (its CPU
 * mapping; GPU VA @head_va, 256-byte aligned) and the compute IB into
 * @ib: chunks of @chunk bytes over @len bytes at GPU VA @src, checksums
 * @kind (or, with @zero_only, kp_scan_zero: only which chunks are zero),
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
