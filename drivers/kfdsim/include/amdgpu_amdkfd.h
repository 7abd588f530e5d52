/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsim: what the KFD layer calls on a device, besides its queue
 * operations (kfd_device_ops.h).
 *
 * Named after amdgpu's KFD interface (amdgpu_amdkfd.h, amdgpu_amdkfd_*),
 * which amdkfd calls for memory, GPU VMs and device facts. The device
 * model implements every one of them in sim/amdgpu_amdkfd.c, as amdgpu
 * does in amdgpu_amdkfd.c and amdgpu_amdkfd_gpuvm.c. @adev is the device
 * (struct kfdsim_gpu, opaque here, as struct amdgpu_device is to most of
 * amdkfd); @mem a BO's backing store (struct kfdsim_gem, amdkfd: the
 * struct kgd_mem); @vm a KFD process's GPU VM on a device.
 */
#ifndef AMDGPU_AMDKFD_H
#define AMDGPU_AMDKFD_H

#include <linux/types.h>

#include "kfd_device_ops.h"

struct file;
struct mm_struct;
struct page;

/* ---- device facts (amdgpu_amdkfd_get_local_mem_info() and the like) ---- */

const struct kfdsim_asic *
amdgpu_amdkfd_get_asic_info(const struct kfdsim_gpu *adev);
u64 amdgpu_amdkfd_get_vram_size(const struct kfdsim_gpu *adev);
u64 amdgpu_amdkfd_get_available_memory(const struct kfdsim_gpu *adev);
u64 amdgpu_amdkfd_get_unique_id(const struct kfdsim_gpu *adev);
int amdgpu_amdkfd_get_render_minor(const struct kfdsim_gpu *adev);

/* The device whose render node @filp is, or NULL for any other file. */
struct kfdsim_gpu *amdgpu_amdkfd_render_file_device(const struct file *filp);

/* ---- the process GPU VM (amdgpu_amdkfd_gpuvm_*_process_vm()) ---- */

/*
 * Make the GPU VM of the render-node file @filp the VM @vm of the KFD
 * process @owner. Returns 0; -EBUSY if the file serves another process;
 * -ENOTEMPTY if its VM already had mappings of its own.
 */
int amdgpu_amdkfd_gpuvm_acquire_process_vm(struct file *filp, void *owner,
					   struct kfdsim_vm *vm);
void amdgpu_amdkfd_gpuvm_release_process_vm(struct file *filp, void *owner,
					    struct kfdsim_vm *vm);

/* ---- memory (amdgpu_amdkfd_gpuvm_*_memory_*()) ---- */

/*
 * A VRAM or GTT BO of @size bytes (by @alloc_flags, KFD_IOC_ALLOC_MEM_*),
 * mappable through @drm_file's mmap only. Returns it or an ERR_PTR.
 */
struct kfdsim_gem *
amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu(struct kfdsim_gpu *adev,
					u32 alloc_flags, u64 size,
					struct file *drm_file);
/* A USERPTR BO: the @size bytes at @uaddr of @mm, pinned. */
struct kfdsim_gem *
amdgpu_amdkfd_gpuvm_alloc_userptr(struct kfdsim_gpu *adev,
				  struct mm_struct *mm, u64 uaddr, u64 size);
/* Drop a reference; @drm_file (or NULL) loses its mmap permission. */
void amdgpu_amdkfd_gpuvm_free_memory_of_gpu(struct kfdsim_gem *mem,
					    struct file *drm_file);
void amdgpu_amdkfd_gpuvm_get_memory(struct kfdsim_gem *mem);
bool amdgpu_amdkfd_gpuvm_is_userptr(const struct kfdsim_gem *mem);
struct page **amdgpu_amdkfd_gpuvm_pages(const struct kfdsim_gem *mem);
u64 amdgpu_amdkfd_gpuvm_mmap_offset(struct kfdsim_gem *mem);

/*
 * Map @npages pages at @va of @vm: -EEXIST if any is mapped already (by
 * the render node's own GEM_VA), nothing mapped on any error.
 */
int amdgpu_amdkfd_gpuvm_map_memory_to_gpu(struct kfdsim_vm *vm, u64 va,
					  struct page **pages,
					  unsigned long npages,
					  bool writable, bool executable);
void amdgpu_amdkfd_gpuvm_unmap_memory_from_gpu(struct kfdsim_vm *vm, u64 va,
					       unsigned long npages);
/* Whether [@va, @va + @len) is mapped in @vm (and writable, if @write). */
bool amdgpu_amdkfd_gpuvm_is_mapped(struct kfdsim_vm *vm, u64 va, u64 len,
				   bool write);

#endif /* AMDGPU_AMDKFD_H */
