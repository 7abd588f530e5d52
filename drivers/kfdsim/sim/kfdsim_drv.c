// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsim module: parameters, the simulated GPUs and their DRM render nodes.
 *
 * Each GPU is a platform device carrying one DRM device (render node and
 * primary node). The set of GPUs is fixed between module load and unload, so
 * the rest of the driver may look GPUs up without locking.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/hash.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_prime.h>
#include <linux/slab.h>

#include "kfdsim.h"
#include "kfdsim_amdgpu.h"

static unsigned int num_gpus = 2;
module_param(num_gpus, uint, 0444);
MODULE_PARM_DESC(num_gpus, "Number of simulated GPUs (1-8, default 2)");

static unsigned int vram_mb = 256;
module_param(vram_mb, uint, 0444);
MODULE_PARM_DESC(vram_mb, "VRAM per GPU in MiB (16-65536, default 256)");

static unsigned int seed;
module_param(seed, uint, 0444);
MODULE_PARM_DESC(seed, "Changes the gpu_ids and render minors this load presents (default 0)");

#define KFDSIM_VRAM_MB_MIN	16
#define KFDSIM_VRAM_MB_MAX	65536
/* Render minors are shifted by up to this many placeholder devices. */
#define KFDSIM_MINOR_SHIFT_MAX	4

struct kfdsim_gpu *kfdsim_gpus[KFDSIM_MAX_GPUS];
unsigned int kfdsim_num_gpus;

static struct platform_device *kfdsim_pdevs[KFDSIM_MAX_GPUS];

DEFINE_DRM_GEM_FOPS(kfdsim_drm_fops);

static int kfdsim_drm_open(struct drm_device *drm, struct drm_file *file)
{
	struct kfdsim_drm_file *kfile;
	int ret;

	kfile = kzalloc(sizeof(*kfile), GFP_KERNEL_ACCOUNT);
	if (!kfile)
		return -ENOMEM;
	ret = kfdsim_amdgpu_open(drm, kfile);
	if (ret) {
		kfree(kfile);
		return ret;
	}
	file->driver_priv = kfile;
	return 0;
}

/* A bound file is held by its KFD process, so it is unbound by now. */
static void kfdsim_drm_postclose(struct drm_device *drm,
				 struct drm_file *file)
{
	struct kfdsim_drm_file *kfile = to_kfdsim_file(file);

	kfdsim_amdgpu_postclose(kfile);
	WARN_ON(kfile->vm_owner);
	kfree(kfile);
}

static const struct drm_driver kfdsim_drm_driver = {
	.driver_features	= DRIVER_GEM | DRIVER_RENDER,
	.fops			= &kfdsim_drm_fops,
	.open			= kfdsim_drm_open,
	.postclose		= kfdsim_drm_postclose,
	.prime_handle_to_fd	= kfdsim_amdgpu_prime_handle_to_fd,
	.prime_fd_to_handle	= drm_gem_prime_fd_to_handle,
	.gem_prime_import	= kfdsim_amdgpu_prime_import,
	.gem_prime_mmap		= drm_gem_prime_mmap,
	.ioctls			= kfdsim_amdgpu_ioctls,
	.num_ioctls		= KFDSIM_AMDGPU_NUM_IOCTLS,
	/* amdgpu's name and version, so AMD userspace accepts the node */
	.name			= "amdgpu",
	.desc			= "kfdsim simulated AMD GPU",
	.date			= "20261122",
	.major			= 3,
	.minor			= KFDSIM_AMDGPU_MINOR,
	.patchlevel		= 0,
};

int kfdsim_gpu_render_minor(const struct kfdsim_gpu *gpu)
{
	return gpu->drm.render ? gpu->drm.render->index : -1;
}

/* A render node of a kfdsim GPU (the primary nodes share the fops). */
bool kfdsim_is_render_file(const struct file *filp)
{
	const struct drm_file *file = filp->private_data;

	return filp->f_op == &kfdsim_drm_fops &&
	       file->minor->type == DRM_MINOR_RENDER;
}

/*
 * gpu_ids are 16 bits (they are packed into mmap offsets), non-zero and
 * unique. Upstream derives them from a hash of the device's properties; we
 * hash the seed and the index so another seed looks like another machine.
 */
static u32 kfdsim_make_gpu_id(unsigned int index)
{
	u32 key = seed * 0x9e3779b1u + index;
	u32 id;
	unsigned int i;

	for (;;) {
		id = hash_32(key++, 16);
		if (!id)
			continue;
		for (i = 0; i < index; i++)
			if (kfdsim_gpus[i]->gpu_id == id)
				break;
		if (i == index)
			return id;
	}
}

static struct kfdsim_gpu *kfdsim_gpu_create(unsigned int index)
{
	struct platform_device *pdev;
	struct kfdsim_gpu *gpu;
	int ret;

	pdev = platform_device_register_simple(KFDSIM_DRIVER_NAME, index,
					       NULL, 0);
	if (IS_ERR(pdev))
		return ERR_CAST(pdev);

	if (!devres_open_group(&pdev->dev, NULL, GFP_KERNEL)) {
		ret = -ENOMEM;
		goto err_pdev;
	}
	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_devres;

	gpu = devm_drm_dev_alloc(&pdev->dev, &kfdsim_drm_driver,
				 struct kfdsim_gpu, drm);
	if (IS_ERR(gpu)) {
		ret = PTR_ERR(gpu);
		goto err_devres;
	}
	gpu->index = index;
	gpu->asic = &kfdsim_gfx906;
	gpu->vram_size = (u64)vram_mb << 20;
	atomic64_set(&gpu->vram_used, 0);
	gpu->gpu_id = kfdsim_make_gpu_id(index);
	gpu->unique_id = ((u64)hash_32(seed, 32) << 32) | (0x5a000000u + index);

	ret = kfdsim_cp_init(gpu);
	if (ret)
		goto err_devres;

	ret = drm_dev_register(&gpu->drm, 0);
	if (ret)
		goto err_cp;

	kfdsim_pdevs[index] = pdev;
	return gpu;

err_cp:
	kfdsim_cp_fini(gpu);
err_devres:
	devres_release_group(&pdev->dev, NULL);
err_pdev:
	platform_device_unregister(pdev);
	return ERR_PTR(ret);
}

static void kfdsim_gpu_destroy(unsigned int index)
{
	struct platform_device *pdev = kfdsim_pdevs[index];

	kgd2kfd_device_remove(index);
	drm_dev_unregister(&kfdsim_gpus[index]->drm);
	kfdsim_cp_fini(kfdsim_gpus[index]);
	devres_release_group(&pdev->dev, NULL);
	platform_device_unregister(pdev);
	kfdsim_pdevs[index] = NULL;
	kfdsim_gpus[index] = NULL;
}

/*
 * DRM hands out the lowest free render minor. To make the minors depend on
 * the seed, register a few placeholder render devices first and remove them
 * once the real GPUs hold their minors.
 */
struct kfdsim_spacer {
	struct platform_device *pdev;
	struct drm_device *drm[KFDSIM_MINOR_SHIFT_MAX];
	unsigned int count;
};

static int kfdsim_spacer_add(struct kfdsim_spacer *sp, unsigned int count)
{
	struct drm_device *drm;
	int ret;

	sp->count = 0;
	if (!count)
		return 0;
	sp->pdev = platform_device_register_simple("kfdsim-spacer", -1,
						   NULL, 0);
	if (IS_ERR(sp->pdev))
		return PTR_ERR(sp->pdev);

	while (sp->count < count) {
		drm = drm_dev_alloc(&kfdsim_drm_driver, &sp->pdev->dev);
		if (IS_ERR(drm))
			return PTR_ERR(drm);
		ret = drm_dev_register(drm, 0);
		if (ret) {
			drm_dev_put(drm);
			return ret;
		}
		sp->drm[sp->count++] = drm;
	}
	return 0;
}

static void kfdsim_spacer_remove(struct kfdsim_spacer *sp)
{
	while (sp->count) {
		struct drm_device *drm = sp->drm[--sp->count];

		drm_dev_unregister(drm);
		drm_dev_put(drm);
	}
	if (!IS_ERR_OR_NULL(sp->pdev))
		platform_device_unregister(sp->pdev);
	sp->pdev = NULL;
}

static void kfdsim_gpus_destroy(void)
{
	while (kfdsim_num_gpus)
		kfdsim_gpu_destroy(--kfdsim_num_gpus);
}

static int kfdsim_gpus_create(void)
{
	struct kfdsim_spacer spacer = {};
	struct kfdsim_gpu *gpu;
	int ret;

	ret = kfdsim_spacer_add(&spacer, seed % KFDSIM_MINOR_SHIFT_MAX);
	if (ret)
		goto out;

	while (kfdsim_num_gpus < num_gpus) {
		gpu = kfdsim_gpu_create(kfdsim_num_gpus);
		if (IS_ERR(gpu)) {
			ret = PTR_ERR(gpu);
			kfdsim_gpus_destroy();
			goto out;
		}
		kfdsim_gpus[kfdsim_num_gpus] = gpu;
		kgd2kfd_device_add(gpu, kfdsim_num_gpus, gpu->gpu_id,
				   &kfdsim_device_ops);
		kfdsim_num_gpus++;
	}
out:
	kfdsim_spacer_remove(&spacer);
	return ret;
}

static int __init kfdsim_init(void)
{
	int ret;

	if (num_gpus < 1 || num_gpus > KFDSIM_MAX_GPUS) {
		pr_err("num_gpus=%u out of range 1..%u\n", num_gpus,
		       KFDSIM_MAX_GPUS);
		return -EINVAL;
	}
	if (vram_mb < KFDSIM_VRAM_MB_MIN || vram_mb > KFDSIM_VRAM_MB_MAX) {
		pr_err("vram_mb=%u out of range %u..%u\n", vram_mb,
		       KFDSIM_VRAM_MB_MIN, KFDSIM_VRAM_MB_MAX);
		return -EINVAL;
	}

	ret = kfdsim_gpus_create();
	if (ret)
		return ret;

	ret = kgd2kfd_init();
	if (ret)
		goto err_gpus;

	ret = kfdsim_debugfs_init();
	if (ret)
		goto err_chardev;

	pr_info("%u simulated GPU(s), %u MiB VRAM each, seed %u\n",
		kfdsim_num_gpus, vram_mb, seed);
	return 0;

err_chardev:
	kgd2kfd_exit();
err_gpus:
	kfdsim_gpus_destroy();
	return ret;
}

static void __exit kfdsim_exit(void)
{
	kfdsim_debugfs_fini();
	kgd2kfd_exit();
	kfdsim_gpus_destroy();
}

module_init(kfdsim_init);
module_exit(kfdsim_exit);

MODULE_DESCRIPTION("Simulated AMD GPUs behind the KFD compute interface");
MODULE_AUTHOR("kfd-criu developers");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
