// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsim: the static description of the simulated ASIC.
 *
 * One gfx906 (Vega20, MI50-class) data-centre GPU. The numbers are what
 * such a board reports through the KFD topology; the simulator itself only
 * relies on the queue and engine counts.
 */
#include <linux/bits.h>
#include <linux/kernel.h>

#include "kfdsim.h"

/* Node capability bits, as defined by the KFD sysfs uAPI. */
#define CAP_WATCH_POINTS_SUPPORTED	BIT(7)
#define CAP_WATCH_POINTS_LOG2(n)	((n) << 8)
#define CAP_DOORBELL_TYPE(t)		((t) << 12)
#define CAP_DOORBELL_TYPE_2_0		2

/* Cache type bits, as defined by the KFD sysfs uAPI. */
#define CACHE_TYPE_DATA			BIT(0)
#define CACHE_TYPE_INSTRUCTION		BIT(1)
#define CACHE_TYPE_HSACU		BIT(3)

/*
 * Per cache kind; the topology lists one entry per instance (60 vector
 * L1s, 20 scalar instruction and 20 scalar data caches, one L2).
 */
static const struct kfdsim_cache kfdsim_gfx906_caches[] = {
	{	/* vector L1, one per CU */
		.level = 1, .size_kb = 16, .line_size = 64,
		.lines_per_tag = 1, .associativity = 4,
		.type = CACHE_TYPE_DATA | CACHE_TYPE_HSACU,
		.cus_per_cache = 1,
	},
	{	/* scalar instruction cache, shared by three CUs */
		.level = 1, .size_kb = 32, .line_size = 64,
		.lines_per_tag = 1, .associativity = 4,
		.type = CACHE_TYPE_INSTRUCTION | CACHE_TYPE_HSACU,
		.cus_per_cache = 3,
	},
	{	/* scalar data cache, shared by three CUs */
		.level = 1, .size_kb = 16, .line_size = 64,
		.lines_per_tag = 1, .associativity = 4,
		.type = CACHE_TYPE_DATA | CACHE_TYPE_HSACU,
		.cus_per_cache = 3,
	},
	{	/* L2, shared by the whole GPU */
		.level = 2, .size_kb = 4096, .line_size = 64,
		.lines_per_tag = 1, .associativity = 16,
		.type = CACHE_TYPE_DATA | CACHE_TYPE_HSACU,
		.cus_per_cache = 60,
	},
};

const struct kfdsim_asic kfdsim_gfx906 = {
	.name = "gfx906",
	.device_id = 0x66a1,
	.gfx_target_version = 90006,
	/* 4 shader engines x 1 array x 15 CUs x 4 SIMDs */
	.simd_count = 240,
	.array_count = 4,
	.simd_arrays_per_engine = 1,
	.cu_per_simd_array = 15,
	.simd_per_cu = 4,
	.max_waves_per_simd = 10,
	.wave_front_size = 64,
	.lds_size_in_kb = 64,
	.gds_size_in_kb = 0,
	/* The simulator has no global wave sync unit to hand out. */
	.num_gws = 0,
	.max_slots_scratch_cu = 32,
	.num_sdma_engines = 2,
	.num_sdma_xgmi_engines = 0,
	.num_sdma_queues_per_engine = 8,
	.num_cp_queues = 24,
	.max_engine_clk_fcompute = 1725,
	/*
	 * Upstream prints the host CPU's cpufreq maximum here. A fixed 0 (what
	 * a guest without cpufreq shows) keeps the GPU node host-independent.
	 */
	.max_engine_clk_ccompute = 0,
	.fw_version = 469,
	.sdma_fw_version = 145,
	/*
	 * What amdkfd reports for a gfx9 dGPU: four address watch points and
	 * 64-bit (2.0) doorbells. Left clear: ATS (no IOMMUv2 on a dGPU), RAS
	 * and EDC (not simulated), the SVM API (the simulator does not
	 * implement the SVM ioctl) and hot-plug.
	 */
	.capability = CAP_WATCH_POINTS_SUPPORTED | CAP_WATCH_POINTS_LOG2(2) |
		      CAP_DOORBELL_TYPE(CAP_DOORBELL_TYPE_2_0),
	.vram_width = 4096,
	.mem_clk_max = 1000,
	/*
	 * gfx_v9_0's value for Vega 20; amdgpu reports the same register to
	 * amdkfd (GET_TILE_CONFIG) and to libdrm (INFO READ_MMR_REG).
	 */
	.gb_addr_config = 0x22014042,
	.num_caches = ARRAY_SIZE(kfdsim_gfx906_caches),
	.caches = kfdsim_gfx906_caches,
};
