// SPDX-License-Identifier: GPL-2.0
/*
 * The device's side of the seam with the KFD layer: every amdgpu_amdkfd_*
 * call of amdgpu_amdkfd.h, as amdgpu implements them for amdkfd in
 * amdgpu_amdkfd.c and amdgpu_amdkfd_gpuvm.c. The queue operations of
 * kfd_device_ops.h are kfdsim_device_ops (kfdsim_cp.c, kfdsim_gem.c).
 */
#include <linux/err.h>
#include <linux/file.h>
#include <linux/kfd_ioctl.h>
#include <drm/drm_file.h>
#include <drm/drm_vma_manager.h>

#include "kfdsim.h"

const struct kfdsim_asic *
amdgpu_amdkfd_get_asic_info(const struct kfdsim_gpu *adev)
{
	return adev->asic;
}

u64 amdgpu_amdkfd_get_vram_size(const struct kfdsim_gpu *adev)
{
	return adev->vram_size;
}

u64 amdgpu_amdkfd_get_available_memory(const struct kfdsim_gpu *adev)
{
	u64 used = atomic64_read(&adev->vram_used);

	return adev->vram_size - min_t(u64, used, adev->vram_size);
}

u64 amdgpu_amdkfd_get_unique_id(const struct kfdsim_gpu *adev)
{
	return adev->unique_id;
}

int amdgpu_amdkfd_get_render_minor(const struct kfdsim_gpu *adev)
{
	return kfdsim_gpu_render_minor(adev);
}

struct kfdsim_gpu *amdgpu_amdkfd_render_file_device(const struct file *filp)
{
	const struct drm_file *dfile = filp->private_data;

	if (!kfdsim_is_render_file(filp))
		return NULL;
	return to_kfdsim_gpu(dfile->minor->dev);
}

/*
 * As amdgpu_amdkfd_gpuvm_acquire_process_vm() and amdgpu_vm_make_compute():
 * a file that serves another process, or whose VM already had GEM_VA
 * mappings, is refused.
 */
int amdgpu_amdkfd_gpuvm_acquire_process_vm(struct file *filp, void *owner,
					   struct kfdsim_vm *vm)
{
	struct drm_file *dfile = filp->private_data;
	struct kfdsim_drm_file *kfile = to_kfdsim_file(dfile);

	if (cmpxchg(&kfile->vm_owner, NULL, owner))
		return -EBUSY;
	if (!kfdsim_vm_clean(kfdsim_drm_file_vm(dfile))) {
		cmpxchg(&kfile->vm_owner, owner, NULL);
		return -ENOTEMPTY;
	}
	kfdsim_vm_share(vm, kfdsim_drm_file_vm(dfile));
	return 0;
}

void amdgpu_amdkfd_gpuvm_release_process_vm(struct file *filp, void *owner,
					    struct kfdsim_vm *vm)
{
	struct drm_file *dfile = filp->private_data;

	kfdsim_vm_unshare(vm);
	cmpxchg(&to_kfdsim_file(dfile)->vm_owner, owner, NULL);
}

struct kfdsim_gem *
amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu(struct kfdsim_gpu *adev,
					u32 alloc_flags, u64 size,
					struct file *drm_file)
{
	enum kfdsim_domain domain = alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM ?
				    KFDSIM_DOMAIN_VRAM : KFDSIM_DOMAIN_GTT;
	struct kfdsim_gem *gem;
	int ret;

	gem = kfdsim_gem_create(adev, domain, size);
	if (IS_ERR(gem))
		return gem;

	/* Only the render file bound by ACQUIRE_VM may mmap the BO. */
	ret = drm_vma_node_allow(&gem->base.vma_node, drm_file->private_data);
	if (ret) {
		kfdsim_gem_put(gem);
		return ERR_PTR(ret);
	}
	return gem;
}

struct kfdsim_gem *
amdgpu_amdkfd_gpuvm_alloc_userptr(struct kfdsim_gpu *adev,
				  struct mm_struct *mm, u64 uaddr, u64 size)
{
	return kfdsim_gem_create_userptr(adev, mm, uaddr, size);
}

void amdgpu_amdkfd_gpuvm_free_memory_of_gpu(struct kfdsim_gem *mem,
					    struct file *drm_file)
{
	if (drm_file)
		drm_vma_node_revoke(&mem->base.vma_node,
				    drm_file->private_data);
	kfdsim_gem_put(mem);
}

void amdgpu_amdkfd_gpuvm_get_memory(struct kfdsim_gem *mem)
{
	drm_gem_object_get(&mem->base);
}

bool amdgpu_amdkfd_gpuvm_is_userptr(const struct kfdsim_gem *mem)
{
	return mem->domain == KFDSIM_DOMAIN_USERPTR;
}

struct page **amdgpu_amdkfd_gpuvm_pages(const struct kfdsim_gem *mem)
{
	return mem->pages;
}

u64 amdgpu_amdkfd_gpuvm_mmap_offset(struct kfdsim_gem *mem)
{
	return drm_vma_node_offset_addr(&mem->base.vma_node);
}

int amdgpu_amdkfd_gpuvm_map_memory_to_gpu(struct kfdsim_vm *vm, u64 va,
					  struct page **pages,
					  unsigned long npages,
					  bool writable, bool executable)
{
	u32 flags = 0;

	if (writable)
		flags |= KFDSIM_PTE_WRITABLE;
	if (executable)
		flags |= KFDSIM_PTE_EXECUTABLE;
	return kfdsim_vm_map(vm, va, pages, npages, flags);
}

void amdgpu_amdkfd_gpuvm_unmap_memory_from_gpu(struct kfdsim_vm *vm, u64 va,
					       unsigned long npages)
{
	kfdsim_vm_unmap(vm, va, npages);
}

bool amdgpu_amdkfd_gpuvm_is_mapped(struct kfdsim_vm *vm, u64 va, u64 len,
				   bool write)
{
	return kfdsim_vm_is_mapped(vm, va, len, write);
}
