// SPDX-License-Identifier: GPL-2.0
/*
 * The amdgpu DRM uAPI on the render nodes: the subset libdrm_amdgpu needs to
 * open a device, query it, allocate and import buffers, map them into a GPU
 * VM and submit SDMA work, which is how AMD's CRIU plugin moves BO contents,
 * or compute work (PM4 dispatches of the built-in kernels).
 *
 * This file has the ioctl table, the per-file state and the INFO queries.
 * The answers describe the same gfx906 board the KFD topology describes.
 * Requests outside the subset fail with -EINVAL and a log line, the way
 * amdgpu answers requests it does not know; nothing is ignored silently.
 *
 * A render-node file has its own GPU VM (page table). When KFD binds the
 * file with ACQUIRE_VM (or a CRIU restore) that VM becomes the KFD process's
 * VM on the GPU, as in amdgpu: GEM_VA and CS on the file keep working, into
 * the page table KFD maps its BOs and runs its queues through.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>

#include "kfdsim_amdgpu.h"

/* Facts of the simulated board that only the amdgpu uAPI reports. */
#define AI_CHIP_EXTERNAL_REV	0x28	/* Vega20: internal revision + 0x28 */
#define AI_PCI_REV		0x02	/* the MI50 entry of amdgpu.ids */
/* The 100 MHz GPU counter GET_CLOCK_COUNTERS reports, in kHz. */
#define AI_COUNTER_KHZ		100000
#define AI_COUNTER_DIVIDER	10	/* ns per tick */
#define AI_RB_PIPES		16
#define AI_HW_GFX_CONTEXTS	8
#define AI_AO_CUS		2	/* always-on CUs per array, dGPU */
#define AI_CE_RAM_SIZE		0x8000
#define AI_VGPRS		256
#define AI_TCC_BLOCKS		16
#define AI_GS_VGT_TABLE_DEPTH	32
#define AI_GS_PRIM_BUF_DEPTH	1792
#define AI_MAX_GS_WAVES		32
#define AI_PTE_FRAGMENT		(2 * 1024 * 1024)
/* GB_ADDR_CONFIG, the one register libdrm reads on gfx9. */
#define AI_REG_GB_ADDR_CONFIG	0x263e
/* SDMA 4.2.0, driven by amdgpu's sdma_v4_0 IP block (version 4.0). */
#define AI_SDMA_IP_MAJOR	4
#define AI_SDMA_IP_MINOR	0
#define AI_SDMA_IP_DISCOVERY	((4 << 16) | (2 << 8))
#define AI_SDMA_IB_START_ALIGN	256
#define AI_SDMA_IB_SIZE_ALIGN	4
/* GC 9.4.0, driven by amdgpu's gfx_v9_0 IP block (version 9.0). */
#define AI_GFX_IP_MAJOR		9
#define AI_GFX_IP_MINOR		0
#define AI_GFX_IP_DISCOVERY	((9 << 16) | (4 << 8))
#define AI_COMPUTE_IB_START_ALIGN	32
#define AI_COMPUTE_IB_SIZE_ALIGN	32
#define AI_MAX_MMR_REGS		128
/* amdgpu's AMDGPU_GFX_MAX_SE and AMDGPU_GFX_MAX_SH_PER_SE */
#define AI_MAX_SE		4
#define AI_MAX_SH_PER_SE	2
/* The PSP trusted applications (XGMI to secure display) FW_TA indexes. */
#define AI_TA_FW_FIRST		2
#define AI_TA_FW_LAST		7

/* Placeholder devices of the module's load have no GPU behind them. */
struct kfdsim_gpu *kfdsim_amdgpu_gpu_of(struct drm_device *drm)
{
	if (strcmp(to_platform_device(drm->dev)->name, KFDSIM_DRIVER_NAME))
		return NULL;
	return to_kfdsim_gpu(drm);
}

int kfdsim_amdgpu_open(struct drm_device *drm, struct kfdsim_drm_file *kfile)
{
	struct kfdsim_amdgpu_file *af;
	int ret;

	af = kzalloc(sizeof(*af), GFP_KERNEL_ACCOUNT);
	if (!af)
		return -ENOMEM;
	ret = kfdsim_vm_create(&af->vm);
	if (ret) {
		kfree(af);
		return ret;
	}
	af->gpu = kfdsim_amdgpu_gpu_of(drm);
	mutex_init(&af->lock);
	af->mappings = RB_ROOT_CACHED;
	idr_init_base(&af->ctxs, 1);
	idr_init_base(&af->bo_lists, 1);
	kfdsim_amdgpu_cs_init(af);
	kfile->amdgpu = af;
	return 0;
}

/*
 * Every GEM handle of the file is closed by now, and no KFD process shares
 * its VM (a bound process holds the file open); undo what remains.
 */
void kfdsim_amdgpu_postclose(struct kfdsim_drm_file *kfile)
{
	struct kfdsim_amdgpu_file *af = kfile->amdgpu;

	if (!af)
		return;
	kfdsim_amdgpu_cs_fini(af);
	kfdsim_amdgpu_vm_fini(af);
	kfdsim_vm_destroy(&af->vm);
	mutex_destroy(&af->lock);
	kfree(af);
	kfile->amdgpu = NULL;
}

struct kfdsim_vm *kfdsim_drm_file_vm(struct drm_file *file)
{
	return &to_amdgpu_file(file)->vm;
}

/* ---- INFO ---- */

static u32 kfdsim_amdgpu_num_se(const struct kfdsim_asic *a)
{
	return a->array_count / max(a->simd_arrays_per_engine, 1U);
}

static void kfdsim_amdgpu_dev_info(const struct kfdsim_gpu *gpu,
				   struct drm_amdgpu_info_device *d)
{
	const struct kfdsim_asic *a = gpu->asic;
	u32 num_se = kfdsim_amdgpu_num_se(a);
	u32 sh_per_se = a->simd_arrays_per_engine;
	u32 cus = GENMASK(a->cu_per_simd_array - 1, 0);
	u32 ao = GENMASK(min_t(u32, a->cu_per_simd_array, AI_AO_CUS) - 1, 0);
	u32 se, sh;

	d->device_id = a->device_id;
	d->chip_rev = 0;
	d->external_rev = AI_CHIP_EXTERNAL_REV;
	d->pci_rev = AI_PCI_REV;
	d->family = AMDGPU_FAMILY_AI;
	d->num_shader_engines = num_se;
	d->num_shader_arrays_per_engine = sh_per_se;
	d->gpu_counter_freq = AI_COUNTER_KHZ;
	d->max_engine_clock = (u64)a->max_engine_clk_fcompute * 1000;
	d->max_memory_clock = (u64)a->mem_clk_max * 1000;
	d->cu_active_number = a->array_count * a->cu_per_simd_array;
	/* amdgpu's layout: shader array (se, sh) at [se % 4][sh + se / 4] */
	for (se = 0; se < num_se; se++) {
		for (sh = 0; sh < sh_per_se; sh++) {
			if (sh + se / 4 >= 4)
				continue;
			d->cu_bitmap[se % 4][sh + se / 4] = cus;
			d->cu_ao_bitmap[se % 4][sh + se / 4] = ao;
			if (se < 2 && sh < 2)
				d->cu_ao_mask |= ao << (se * 16 + sh * 8);
		}
	}
	d->enabled_rb_pipes_mask = GENMASK(AI_RB_PIPES - 1, 0);
	d->num_rb_pipes = AI_RB_PIPES;
	d->num_hw_gfx_contexts = AI_HW_GFX_CONTEXTS;
	d->ids_flags = 0;
	d->virtual_address_offset = KFDSIM_AMDGPU_VA_START;
	d->virtual_address_max = KFDSIM_AMDGPU_VA_END;
	d->virtual_address_alignment = PAGE_SIZE;
	d->pte_fragment_size = AI_PTE_FRAGMENT;
	d->gart_page_size = PAGE_SIZE;
	d->ce_ram_size = AI_CE_RAM_SIZE;
	d->vram_type = AMDGPU_VRAM_TYPE_HBM;
	d->vram_bit_width = a->vram_width;
	d->gc_double_offchip_lds_buf = 1;
	d->wave_front_size = a->wave_front_size;
	d->num_shader_visible_vgprs = AI_VGPRS;
	d->num_cu_per_sh = a->cu_per_simd_array;
	d->num_tcc_blocks = AI_TCC_BLOCKS;
	d->gs_vgt_table_depth = AI_GS_VGT_TABLE_DEPTH;
	d->gs_prim_buffer_depth = AI_GS_PRIM_BUF_DEPTH;
	d->max_gs_waves_per_vgt = AI_MAX_GS_WAVES;
	/* No upper half of the address space: high_va_* stay 0. */
}

/*
 * As amdgpu: an IP the GPU lacks has no rings, which is not an error. The
 * compute ring belongs to the GFX block (whose own GFX ring is not
 * simulated); amdgpu reports the block's version for both.
 */
static int kfdsim_amdgpu_hw_ip_info(const struct kfdsim_gpu *gpu,
				    const struct drm_amdgpu_info *info,
				    struct drm_amdgpu_info_hw_ip *ip)
{
	u32 rings = gpu->asic->num_sdma_engines;

	if (info->query_hw_ip.type >= AMDGPU_HW_IP_NUM ||
	    info->query_hw_ip.ip_instance >= AMDGPU_HW_IP_INSTANCE_MAX_COUNT)
		return -EINVAL;
	switch (info->query_hw_ip.type) {
	case AMDGPU_HW_IP_DMA:
		ip->hw_ip_version_major = AI_SDMA_IP_MAJOR;
		ip->hw_ip_version_minor = AI_SDMA_IP_MINOR;
		ip->ip_discovery_version = AI_SDMA_IP_DISCOVERY;
		ip->ib_start_alignment = AI_SDMA_IB_START_ALIGN;
		ip->ib_size_alignment = AI_SDMA_IB_SIZE_ALIGN;
		ip->available_rings = GENMASK(min(rings, 32U) - 1, 0);
		break;
	case AMDGPU_HW_IP_COMPUTE:
		ip->hw_ip_version_major = AI_GFX_IP_MAJOR;
		ip->hw_ip_version_minor = AI_GFX_IP_MINOR;
		ip->ip_discovery_version = AI_GFX_IP_DISCOVERY;
		ip->ib_start_alignment = AI_COMPUTE_IB_START_ALIGN;
		ip->ib_size_alignment = AI_COMPUTE_IB_SIZE_ALIGN;
		ip->available_rings = GENMASK(KFDSIM_AMDGPU_COMPUTE_RINGS - 1,
					      0);
		break;
	}
	return 0;
}

/*
 * As amdgpu_firmware_info(): MEC (two of them) and SDMA (one per engine)
 * report the versions KFD reports; the other firmware amdgpu knows of has
 * no simulated counterpart and reports version 0, as amdgpu does for
 * firmware a board did not load; TA needs one of its PSP indices.
 */
static int kfdsim_amdgpu_fw_version(const struct kfdsim_gpu *gpu,
				    const struct drm_amdgpu_query_fw *fw,
				    struct drm_amdgpu_info_firmware *out)
{
	switch (fw->fw_type) {
	case AMDGPU_INFO_FW_GFX_MEC:
		if (fw->index > 1)
			return -EINVAL;
		out->ver = gpu->asic->fw_version;
		return 0;
	case AMDGPU_INFO_FW_SDMA:
		if (fw->index >= gpu->asic->num_sdma_engines)
			return -EINVAL;
		out->ver = gpu->asic->sdma_fw_version;
		return 0;
	case AMDGPU_INFO_FW_TA:
		if (fw->index < AI_TA_FW_FIRST || fw->index > AI_TA_FW_LAST)
			return -EINVAL;
		return 0;
	case AMDGPU_INFO_FW_VCE ... AMDGPU_INFO_FW_GFX_RLC:
	case AMDGPU_INFO_FW_SMC:
	case AMDGPU_INFO_FW_SOS ... AMDGPU_INFO_FW_DMCU:
	case AMDGPU_INFO_FW_DMCUB ... AMDGPU_INFO_FW_IMU:
		return 0;
	default:
		kfdsim_amdgpu_reject("INFO: unknown firmware type %u\n",
				     fw->fw_type);
		return -EINVAL;
	}
}

static int kfdsim_amdgpu_read_mmr(const struct kfdsim_gpu *gpu,
				  const struct drm_amdgpu_info *info,
				  u32 *regs)
{
	u32 se = (info->read_mmr_reg.instance >> AMDGPU_INFO_MMR_SE_INDEX_SHIFT) &
		 AMDGPU_INFO_MMR_SE_INDEX_MASK;
	u32 sh = (info->read_mmr_reg.instance >> AMDGPU_INFO_MMR_SH_INDEX_SHIFT) &
		 AMDGPU_INFO_MMR_SH_INDEX_MASK;
	u32 count = info->read_mmr_reg.count;
	u32 i;

	/* amdgpu_info_ioctl()'s bounds; the flags are not looked at. */
	if (count > AI_MAX_MMR_REGS ||
	    (se != AMDGPU_INFO_MMR_SE_INDEX_MASK && se >= AI_MAX_SE) ||
	    (sh != AMDGPU_INFO_MMR_SH_INDEX_MASK && sh >= AI_MAX_SH_PER_SE))
		return -EINVAL;
	/* As amdgpu, a register outside the readable set is -EFAULT. */
	for (i = 0; i < count; i++) {
		if (info->read_mmr_reg.dword_offset + i !=
		    AI_REG_GB_ADDR_CONFIG) {
			kfdsim_amdgpu_reject("INFO: register 0x%x is not simulated\n",
					     info->read_mmr_reg.dword_offset + i);
			return -EFAULT;
		}
		regs[i] = gpu->asic->gb_addr_config;
	}
	return 0;
}

static void kfdsim_amdgpu_heap(struct drm_amdgpu_heap_info *h, u64 total,
			       u64 used)
{
	h->total_heap_size = total;
	h->usable_heap_size = total;
	h->heap_usage = min(used, total);
	/* amdgpu's largest single allocation: three quarters of the heap */
	h->max_allocation = div_u64(total * 3, 4);
}

static int kfdsim_amdgpu_info(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct kfdsim_gpu *gpu = to_amdgpu_file(file)->gpu;
	struct drm_amdgpu_info *info = data;
	void __user *out = u64_to_user_ptr(info->return_pointer);
	union {
		u32 ui32;
		u64 ui64;
		u32 regs[AI_MAX_MMR_REGS];
		struct drm_amdgpu_info_hw_ip ip;
		struct drm_amdgpu_info_firmware fw;
		struct drm_amdgpu_info_vram_gtt vram_gtt;
		struct drm_amdgpu_memory_info mem;
		struct drm_amdgpu_info_gds gds;
		struct drm_amdgpu_info_device dev;
	} *r;
	size_t len;
	int ret;

	if (!gpu)
		return -ENODEV;
	if (!info->return_size || !info->return_pointer)
		return -EINVAL;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;

	ret = 0;
	switch (info->query) {
	case AMDGPU_INFO_HW_IP_INFO:
		ret = kfdsim_amdgpu_hw_ip_info(gpu, info, &r->ip);
		len = sizeof(r->ip);
		break;
	case AMDGPU_INFO_HW_IP_COUNT:
		if (info->query_hw_ip.type >= AMDGPU_HW_IP_NUM) {
			ret = -EINVAL;
			goto out;
		}
		/*
		 * One SDMA block driving every engine and the GFX block
		 * behind the compute ring; nothing else.
		 */
		r->ui32 = info->query_hw_ip.type == AMDGPU_HW_IP_DMA ||
			  info->query_hw_ip.type == AMDGPU_HW_IP_COMPUTE;
		len = sizeof(r->ui32);
		break;
	case AMDGPU_INFO_FW_VERSION:
		if (info->query_fw.ip_instance) {
			ret = -EINVAL;
			goto out;
		}
		ret = kfdsim_amdgpu_fw_version(gpu, &info->query_fw, &r->fw);
		len = sizeof(r->fw);
		break;
	case AMDGPU_INFO_READ_MMR_REG:
		ret = kfdsim_amdgpu_read_mmr(gpu, info, r->regs);
		len = (size_t)info->read_mmr_reg.count * sizeof(u32);
		break;
	case AMDGPU_INFO_ACCEL_WORKING:
		r->ui32 = 1;
		len = sizeof(r->ui32);
		break;
	case AMDGPU_INFO_DEV_INFO:
		kfdsim_amdgpu_dev_info(gpu, &r->dev);
		len = sizeof(r->dev);
		break;
	case AMDGPU_INFO_TIMESTAMP:
		r->ui64 = div_u64(ktime_get_raw_ns(), AI_COUNTER_DIVIDER);
		len = sizeof(r->ui64);
		break;
	case AMDGPU_INFO_VRAM_GTT:
		r->vram_gtt.vram_size = gpu->vram_size;
		/* all of VRAM is CPU-visible, as with a large BAR */
		r->vram_gtt.vram_cpu_accessible_size = gpu->vram_size;
		r->vram_gtt.gtt_size = kfdsim_gtt_limit();
		len = sizeof(r->vram_gtt);
		break;
	case AMDGPU_INFO_VRAM_USAGE:
	case AMDGPU_INFO_VIS_VRAM_USAGE:
		r->ui64 = atomic64_read(&gpu->vram_used);
		len = sizeof(r->ui64);
		break;
	case AMDGPU_INFO_GTT_USAGE:
		r->ui64 = kfdsim_gtt_usage();
		len = sizeof(r->ui64);
		break;
	case AMDGPU_INFO_MEMORY:
		kfdsim_amdgpu_heap(&r->mem.vram, gpu->vram_size,
				   atomic64_read(&gpu->vram_used));
		r->mem.cpu_accessible_vram = r->mem.vram;
		kfdsim_amdgpu_heap(&r->mem.gtt, kfdsim_gtt_limit(),
				   kfdsim_gtt_usage());
		len = sizeof(r->mem);
		break;
	case AMDGPU_INFO_GDS_CONFIG:
		/* the topology reports no GDS, and no GWS is handed out */
		len = sizeof(r->gds);
		break;
	case AMDGPU_INFO_NUM_BYTES_MOVED:
	case AMDGPU_INFO_NUM_EVICTIONS:
	case AMDGPU_INFO_NUM_VRAM_CPU_PAGE_FAULTS:
	case AMDGPU_INFO_RAS_ENABLED_FEATURES:
		/* simulated memory never moves, faults or reports errors */
		len = sizeof(r->ui64);
		break;
	case AMDGPU_INFO_VRAM_LOST_COUNTER:
		len = sizeof(r->ui32);
		break;
	default:
		kfdsim_amdgpu_reject("INFO: query 0x%x is not simulated\n",
				     info->query);
		ret = -EINVAL;
		goto out;
	}

	if (!ret && copy_to_user(out, r, min_t(size_t, len, info->return_size)))
		ret = -EFAULT;
out:
	kfree(r);
	return ret;
}

/* amdgpu ioctls the simulator does not implement. */
static int kfdsim_amdgpu_unsupported(struct drm_device *drm, void *data,
				     struct drm_file *file)
{
	kfdsim_amdgpu_reject("this amdgpu ioctl is not simulated\n");
	return -EINVAL;
}

#define KFDSIM_AMDGPU_IOCTL(name, fn) \
	DRM_IOCTL_DEF_DRV(AMDGPU_##name, fn, DRM_AUTH | DRM_RENDER_ALLOW)

const struct drm_ioctl_desc kfdsim_amdgpu_ioctls[KFDSIM_AMDGPU_NUM_IOCTLS] = {
	KFDSIM_AMDGPU_IOCTL(GEM_CREATE, kfdsim_amdgpu_gem_create),
	KFDSIM_AMDGPU_IOCTL(GEM_MMAP, kfdsim_amdgpu_gem_mmap),
	KFDSIM_AMDGPU_IOCTL(CTX, kfdsim_amdgpu_ctx),
	KFDSIM_AMDGPU_IOCTL(BO_LIST, kfdsim_amdgpu_bo_list),
	KFDSIM_AMDGPU_IOCTL(CS, kfdsim_amdgpu_cs),
	KFDSIM_AMDGPU_IOCTL(INFO, kfdsim_amdgpu_info),
	KFDSIM_AMDGPU_IOCTL(GEM_METADATA, kfdsim_amdgpu_unsupported),
	KFDSIM_AMDGPU_IOCTL(GEM_WAIT_IDLE, kfdsim_amdgpu_gem_wait_idle),
	KFDSIM_AMDGPU_IOCTL(GEM_VA, kfdsim_amdgpu_gem_va),
	KFDSIM_AMDGPU_IOCTL(WAIT_CS, kfdsim_amdgpu_wait_cs),
	KFDSIM_AMDGPU_IOCTL(GEM_OP, kfdsim_amdgpu_unsupported),
	KFDSIM_AMDGPU_IOCTL(GEM_USERPTR, kfdsim_amdgpu_gem_userptr),
	KFDSIM_AMDGPU_IOCTL(WAIT_FENCES, kfdsim_amdgpu_wait_fences),
	KFDSIM_AMDGPU_IOCTL(VM, kfdsim_amdgpu_unsupported),
	KFDSIM_AMDGPU_IOCTL(FENCE_TO_HANDLE, kfdsim_amdgpu_unsupported),
	KFDSIM_AMDGPU_IOCTL(SCHED, kfdsim_amdgpu_unsupported),
};
