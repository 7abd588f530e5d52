// SPDX-License-Identifier: GPL-2.0
/*
 * Classifying a BO's chunks on the GPU; see gpu_scan.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/kfdsim.h>

#include "gpu_scan.h"
#include "images.h"
#include "util.h"

enum kp_scan_mode kp_scan_mode_from_env(void)
{
	const char *s = getenv("KFD_BO_SCAN");

	if (!s || !strcasecmp(s, "auto"))
		return KP_SCAN_AUTO;
	if (!strcasecmp(s, "cpu"))
		return KP_SCAN_CPU;
	if (!strcasecmp(s, "gpu"))
		return KP_SCAN_GPU;
	kp_warn("KFD_BO_SCAN=\"%s\" is not auto, cpu or gpu; using auto", s);
	return KP_SCAN_AUTO;
}

unsigned int kp_scan_dispatch_ms(void)
{
	const char *s = getenv("KFD_BO_SCAN_MS");
	unsigned long v;
	char *end;

	if (!s || !*s)
		return KP_SCAN_DISPATCH_MS;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !v || v > 600000) {
		kp_warn("KFD_BO_SCAN_MS=\"%s\" is not a number of ms from 1 to 600000; using %u",
			s, KP_SCAN_DISPATCH_MS);
		return KP_SCAN_DISPATCH_MS;
	}
	return (unsigned int)v;
}

uint64_t kp_scan_step(uint64_t bps, unsigned int ms, uint32_t chunk,
		      uint64_t window)
{
	uint64_t step;

	/* bps * ms / 1000 without overflow for any rate below 2^54. */
	uint64_t wave = (uint64_t)chunk * KP_SCAN_WG;

	step = bps / 1000 * ms + bps % 1000 * ms / 1000;
	/* Whole waves: fewer chunks would not take less time. */
	step = step / wave * wave;
	if (step < wave)
		step = wave;
	return step < window ? step : window;
}

uint64_t kp_rate(uint64_t bytes, uint64_t ns)
{
	if (!ns)
		ns = 1;
	return (uint64_t)((__uint128_t)bytes * 1000000000U / ns);
}

/* SET_SH_REG of @n registers from @reg, values @v. */
static uint32_t kp_pm4_set_sh(uint32_t *ib, uint32_t reg, const uint32_t *v,
			      uint32_t n)
{
	uint32_t i, k = 0;

	ib[k++] = KFDSIM_PM4_TYPE3_HDR(KFDSIM_PM4_OP_SET_SH_REG, n + 1);
	ib[k++] = reg - KFDSIM_PM4_SH_REG_BASE;
	for (i = 0; i < n; i++)
		ib[k++] = v[i];
	return k;
}

uint32_t kp_scan_build(uint32_t *ib, void *head, uint64_t head_va,
		       uint64_t src, uint64_t len, uint32_t chunk,
		       enum kp_sum_kind kind, bool zero_only, uint64_t out)
{
	uint64_t nchunks = (len + chunk - 1) / chunk;
	struct kp_scan_args args = {
		.src = src,
		.out = out,
		.size = len,
		.chunk = chunk,
		.nchunks = (uint32_t)nchunks,
	};
	uint64_t entry = head_va + (zero_only ? kp_scan_zero_off :
				    kind == KP_SUM_XXH64 ? kp_scan_xxh64_off :
							   kp_scan_fold64_off);
	uint64_t args_va = head_va + KP_SCAN_ARGS_OFF;
	uint32_t pgm[2] = { (uint32_t)(entry >> 8), (uint32_t)(entry >> 40) };
	uint32_t rsrc[2] = { KP_SCAN_RSRC1, KP_SCAN_RSRC2 };
	uint32_t user[2] = { (uint32_t)args_va, (uint32_t)(args_va >> 32) };
	uint32_t threads[3] = { KP_SCAN_WG, 1, 1 };
	uint32_t zero = 0, n = 0, pad;

	memcpy(head, kp_scan_code, kp_scan_code_size);
	memcpy((uint8_t *)head + KP_SCAN_ARGS_OFF, &args, sizeof(args));

	n += kp_pm4_set_sh(ib + n, KFDSIM_PM4_REG_COMPUTE_PGM_LO, pgm, 2);
	n += kp_pm4_set_sh(ib + n, KFDSIM_PM4_REG_COMPUTE_PGM_RSRC1, rsrc, 2);
	n += kp_pm4_set_sh(ib + n, KFDSIM_PM4_REG_COMPUTE_RESOURCE_LIMITS,
			   &zero, 1);
	n += kp_pm4_set_sh(ib + n, KFDSIM_PM4_REG_COMPUTE_TMPRING_SIZE, &zero,
			   1);
	n += kp_pm4_set_sh(ib + n, KFDSIM_PM4_REG_COMPUTE_USER_DATA_0, user, 2);
	n += kp_pm4_set_sh(ib + n, KFDSIM_PM4_REG_COMPUTE_NUM_THREAD_X, threads,
			   3);
	/* Whole workgroups of one wave; the lanes past nchunks end. */
	ib[n++] = KFDSIM_PM4_TYPE3_HDR(KFDSIM_PM4_OP_DISPATCH_DIRECT,
				       KFDSIM_PM4_DISPATCH_DIRECT_NDW);
	ib[n++] = (uint32_t)((nchunks + KP_SCAN_WG - 1) / KP_SCAN_WG);
	ib[n++] = 1;
	ib[n++] = 1;
	ib[n++] = KFDSIM_PM4_DISPATCH_COMPUTE_SHADER_EN;
	/* Pad with one NOP to a multiple of 8 dwords. */
	pad = (8 - (n + 1) % 8) % 8;
	if (!pad) {
		ib[n++] = KFDSIM_PM4_NOP_1DW;
		return n;
	}
	ib[n++] = KFDSIM_PM4_TYPE3_HDR(KFDSIM_PM4_OP_NOP, pad);
	while (pad--)
		ib[n++] = 0;
	return n;
}

int kp_scan_classify(const struct kp_copy_job *j, struct kp_copy_bo *bo,
		     uint64_t c0, uint64_t n, const uint64_t *pairs,
		     bool zero_only, char *why, size_t why_len)
{
	uint64_t c, h;
	bool zero;

	for (c = c0; c < c0 + n; c++) {
		h = pairs[2 * (c - c0)];
		zero = !pairs[2 * (c - c0) + 1];
		if (zero_only) {
			/* Sums: the zero chunk's, the CPU's for the others. */
			kp_chunk_classify(j, bo, c,
					  kp_chunk_len(bo->size, j->chunk, c),
					  zero, 0);
			if (!zero)
				bo->kinds[c] = KFD_CHUNK__KFD_CHUNK_DATA;
			continue;
		}
		kp_chunk_classify(j, bo, c, kp_chunk_len(bo->size, j->chunk, c),
				  zero, h);
		if (zero && h != bo->sums[c]) {
			snprintf(why, why_len,
				 "BO 0x%" PRIx64 ": the GPU's checksum of zero chunk %" PRIu64 " is 0x%016" PRIx64 ", not 0x%016" PRIx64,
				 bo->addr, c, h, bo->sums[c]);
			return -EIO;
		}
	}
	return 0;
}
