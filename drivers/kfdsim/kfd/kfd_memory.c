// SPDX-License-Identifier: GPL-2.0
/*
 * Memory ioctls: ACQUIRE_VM, ALLOC/FREE_MEMORY_OF_GPU, MAP/UNMAP_MEMORY_TO_GPU,
 * AVAILABLE_MEMORY and EXPORT_DMABUF.
 *
 * Every handler validates all of its input before it changes anything, and
 * undoes its own partial work on failure, so a failed ioctl leaves the
 * process exactly as it was.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/file.h>
#include <linux/kfd_ioctl.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>
#include <drm/drm_vma_manager.h>

#include "kfd_criu.h"
#include "kfd_priv.h"

#define KFD_ALLOC_DOMAINS (KFD_IOC_ALLOC_MEM_FLAGS_VRAM | \
			   KFD_IOC_ALLOC_MEM_FLAGS_GTT | \
			   KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | \
			   KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL | \
			   KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)

#define KFD_ALLOC_KNOWN_FLAGS (KFD_ALLOC_DOMAINS | \
			       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | \
			       KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE | \
			       KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC | \
			       KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE | \
			       KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM | \
			       KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | \
			       KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED)

/* More device ids than this in one MAP/UNMAP call is not a real request. */
#define KFD_MAP_MAX_DEVICES	1024

int kfd_ioctl_acquire_vm(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_acquire_vm_args *args = data;
	struct kfd_process_device *pdd = kfd_process_pdd_by_id(p, args->gpu_id);
	struct kfdsim_gpu *adev;
	struct file *filp;
	int ret = 0;

	if (!pdd) {
		kfd_reject("ACQUIRE_VM: no GPU with gpu_id %u\n", args->gpu_id);
		return -EINVAL;
	}
	filp = fget(args->drm_fd);
	if (!filp)
		return -EINVAL;
	adev = amdgpu_amdkfd_render_file_device(filp);
	if (!adev) {
		kfd_reject("ACQUIRE_VM: fd %u is not a kfdsim DRM node\n",
			   args->drm_fd);
		ret = -EINVAL;
		goto out_put;
	}
	if (adev != pdd->gpu->adev) {
		kfd_reject("ACQUIRE_VM: fd %u belongs to another GPU than %u\n",
			   args->drm_fd, args->gpu_id);
		ret = -EINVAL;
		goto out_put;
	}

	mutex_lock(&p->lock);
	if (pdd->drm_file) {
		/* Binding the same file again is a no-op, as upstream. */
		ret = pdd->drm_file == filp ? 0 : -EBUSY;
		mutex_unlock(&p->lock);
		goto out_put;
	}
	ret = kfd_pdd_bind(pdd, filp, "ACQUIRE_VM");
	mutex_unlock(&p->lock);
	if (ret)
		goto out_put;
	return 0;

out_put:
	fput(filp);
	return ret;
}

struct kfd_bo *kfd_bo_lookup(struct kfd_process *p, u64 handle)
{
	struct kfd_process_device *pdd;

	lockdep_assert_held(&p->lock);
	pdd = kfd_process_pdd_by_id(p, KFDSIM_HANDLE_GPU_ID(handle));
	if (!pdd)
		return NULL;
	return idr_find(&pdd->bo_idr, KFDSIM_HANDLE_ID(handle));
}

int kfd_alloc_check(const struct kfd_ioctl_alloc_memory_of_gpu_args *args)
{
	u32 domain = args->flags & KFD_ALLOC_DOMAINS;

	if (args->flags & ~KFD_ALLOC_KNOWN_FLAGS) {
		kfd_reject("ALLOC: unknown flags 0x%x\n",
			   args->flags & ~KFD_ALLOC_KNOWN_FLAGS);
		return -EINVAL;
	}
	if (hweight32(domain) != 1) {
		kfd_reject("ALLOC: flags 0x%x name %s memory type\n",
			   args->flags, domain ? "more than one" : "no");
		return -EINVAL;
	}
	/* As amdkfd: the remap page is exactly one page. */
	if (domain == KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP &&
	    args->size != PAGE_SIZE) {
		kfd_reject("ALLOC: MMIO remap size 0x%llx, the page is 0x%lx\n",
			   args->size, PAGE_SIZE);
		return -EINVAL;
	}
	if (!args->size || !PAGE_ALIGNED(args->size) ||
	    !PAGE_ALIGNED(args->va_addr)) {
		kfd_reject("ALLOC: size 0x%llx or va 0x%llx not page aligned or zero\n",
			   args->size, args->va_addr);
		return -EINVAL;
	}
	if (args->va_addr < KFDSIM_GPUVM_BASE ||
	    args->va_addr > KFDSIM_GPUVM_LIMIT ||
	    args->size - 1 > KFDSIM_GPUVM_LIMIT - args->va_addr) {
		kfd_reject("ALLOC: va 0x%llx size 0x%llx outside the GPUVM aperture\n",
			   args->va_addr, args->size);
		return -EINVAL;
	}
	if (domain == KFD_IOC_ALLOC_MEM_FLAGS_USERPTR &&
	    !PAGE_ALIGNED(args->mmap_offset)) {
		kfd_reject("ALLOC: userptr 0x%llx not page aligned\n",
			   args->mmap_offset);
		return -EINVAL;
	}
	if (domain == KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL &&
	    args->size != KFDSIM_DOORBELL_SLICE_SIZE) {
		kfd_reject("ALLOC: doorbell size 0x%llx, the slice is 0x%lx\n",
			   args->size, KFDSIM_DOORBELL_SLICE_SIZE);
		return -EINVAL;
	}
	return 0;
}

/* Create the backing store of a new BO; doorbell and MMIO BOs have none. */
static struct kfdsim_gem *kfd_alloc_gem(struct kfd_process_device *pdd,
					const struct kfd_ioctl_alloc_memory_of_gpu_args *args)
{
	int ret;

	switch (args->flags & KFD_ALLOC_DOMAINS) {
	case KFD_IOC_ALLOC_MEM_FLAGS_VRAM:
	case KFD_IOC_ALLOC_MEM_FLAGS_GTT:
		/* Only the render file bound by ACQUIRE_VM may mmap the BO. */
		return amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu(pdd->gpu->adev,
							       args->flags,
							       args->size,
							       pdd->drm_file);
	case KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP:
		ret = kfd_process_mmio_page(pdd);
		return ret ? ERR_PTR(ret) : NULL;
	default:
		ret = kfd_process_doorbells(pdd);
		return ret ? ERR_PTR(ret) : NULL;
	}
}

/**
 * kfd_bo_pin_userptr - give a USERPTR BO created with @defer_userptr its pages
 * @bo: the BO; its process lock must be held
 * @mm: the address space the user address belongs to
 *
 * Return: 0 (also if the BO has its pages already), or an errno with the BO
 * left without pages.
 */
int kfd_bo_pin_userptr(struct kfd_bo *bo, struct mm_struct *mm)
{
	struct kfdsim_gem *gem;

	lockdep_assert_held(&bo->pdd->p->lock);
	if (bo->gem)
		return 0;
	gem = amdgpu_amdkfd_gpuvm_alloc_userptr(bo->pdd->gpu->adev, mm,
						bo->user_addr, bo->size);
	if (IS_ERR(gem))
		return PTR_ERR(gem);
	bo->gem = gem;
	return 0;
}

/**
 * kfd_bo_create - create a BO (the core of ALLOC_MEMORY_OF_GPU and RESTORE)
 * @pdd: the process and GPU; the process lock must be held
 * @args: validated by kfd_alloc_check()
 * @id: the handle id to give the BO, or 0 for the lowest free one
 * @defer_userptr: create a USERPTR BO without pinning its pages yet (a
 *                 restore pins them at RESUME, once the memory is back)
 * @out: the new BO
 *
 * Return: 0, or an errno with nothing left behind.
 */
int kfd_bo_create(struct kfd_process_device *pdd,
		  const struct kfd_ioctl_alloc_memory_of_gpu_args *args,
		  u32 id, bool defer_userptr, struct kfd_bo **out)
{
	struct kfd_process *p = pdd->p;
	u64 last = args->va_addr + args->size - 1;
	struct kfd_bo *bo;
	int ret;

	lockdep_assert_held(&p->lock);
	if (!pdd->drm_file) {
		kfd_reject("ALLOC: gpu_id %u has no VM, call ACQUIRE_VM first\n",
			   pdd->user_gpu_id);
		return -ENODEV;
	}
	if (interval_tree_iter_first(&p->va_tree, args->va_addr, last)) {
		kfd_reject("ALLOC: va 0x%llx size 0x%llx overlaps another BO\n",
			   args->va_addr, args->size);
		return -EINVAL;
	}
	if (id > INT_MAX)
		return -EINVAL;
	/* Beyond what RESTORE takes, a checkpoint could never be restored. */
	if (p->nr_bos >= KFD_CRIU_MAX_BOS) {
		kfd_reject("ALLOC: the process has %u BOs, the most it may have\n",
			   p->nr_bos);
		return -ENOMEM;
	}
	/* As the thunk: one doorbell BO per process and GPU. */
	if ((args->flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL) &&
	    pdd->doorbell_bo) {
		kfd_reject("ALLOC: gpu_id %u already has a doorbell BO\n",
			   pdd->user_gpu_id);
		return -EINVAL;
	}

	bo = kfd_criu_should_fail() ? NULL :
	     kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return -ENOMEM;
	if (args->flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) {
		bo->user_addr = args->mmap_offset;
		if (defer_userptr)
			bo->gem = NULL;
		else
			bo->gem = amdgpu_amdkfd_gpuvm_alloc_userptr(pdd->gpu->adev,
								    current->mm,
								    args->mmap_offset,
								    args->size);
	} else {
		bo->gem = kfd_alloc_gem(pdd, args);
	}
	if (IS_ERR(bo->gem)) {
		ret = PTR_ERR(bo->gem);
		goto err_free_bo;
	}
	ret = kfd_criu_should_fail() ? -ENOMEM :
	      idr_alloc(&pdd->bo_idr, bo, id ? id : 1, id ? id + 1 : 0,
			GFP_KERNEL);
	if (ret < 0) {
		if (ret == -ENOSPC && id) {
			kfd_reject("RESTORE: handle id %u used twice\n", id);
			ret = -EINVAL;
		}
		goto err_put_gem;
	}

	bo->pdd = pdd;
	bo->id = ret;
	bo->va = args->va_addr;
	bo->size = args->size;
	bo->alloc_flags = args->flags;
	bo->va_node.start = args->va_addr;
	bo->va_node.last = last;
	interval_tree_insert(&bo->va_node, &p->va_tree);
	p->nr_bos++;
	if (args->flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL)
		pdd->doorbell_bo = true;
	atomic_inc(&kfd_counters.bos);
	*out = bo;
	return 0;

err_put_gem:
	if (bo->gem)
		amdgpu_amdkfd_gpuvm_free_memory_of_gpu(bo->gem, pdd->drm_file);
err_free_bo:
	kfree(bo);
	return ret;
}

/*
 * The mmap offset ALLOC, CHECKPOINT and RESTORE report for @bo. Doorbell
 * BOs are mapped through /dev/kfd, at an offset that names the device
 * (kfd_mmap_offset()), as upstream's CHECKPOINT and RESTORE report them.
 * Upstream's ALLOC reports the render-node offset of the sg BO wrapping the
 * doorbell pages instead, which no user space maps (the thunk maps the
 * offset CREATE_QUEUE returned).
 */
u64 kfd_bo_mmap_offset(const struct kfd_bo *bo)
{
	if (bo->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL)
		return kfd_mmap_offset(KFD_MMAP_TYPE_DOORBELL, bo->pdd);
	/* As amdkfd: the MMIO page is mapped through /dev/kfd. */
	if (bo->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)
		return kfd_mmap_offset(KFD_MMAP_TYPE_MMIO, bo->pdd);
	if (bo->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR)
		return bo->user_addr;
	return amdgpu_amdkfd_gpuvm_mmap_offset(bo->gem);
}

int kfd_ioctl_alloc_memory(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args *args = data;
	struct kfd_process_device *pdd = kfd_process_pdd_by_id(p, args->gpu_id);
	struct kfd_bo *bo;
	int ret;

	if (!pdd) {
		kfd_reject("ALLOC: no GPU with gpu_id %u\n", args->gpu_id);
		return -EINVAL;
	}
	ret = kfd_alloc_check(args);
	if (ret)
		return ret;

	mutex_lock(&p->lock);
	ret = kfd_bo_create(pdd, args, 0, false, &bo);
	if (!ret) {
		args->handle = KFDSIM_HANDLE(pdd->user_gpu_id, bo->id);
		args->mmap_offset = kfd_bo_mmap_offset(bo);
	}
	mutex_unlock(&p->lock);
	return ret;
}

int kfd_ioctl_free_memory(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_free_memory_of_gpu_args *args = data;
	struct kfd_bo *bo;

	mutex_lock(&p->lock);
	bo = kfd_bo_lookup(p, args->handle);
	if (!bo) {
		mutex_unlock(&p->lock);
		kfd_reject("FREE: no BO with handle 0x%llx\n", args->handle);
		return -EINVAL;
	}
	/* As upstream: the events page lives as long as the process. */
	if (args->handle == kfd_events_page_handle(p)) {
		mutex_unlock(&p->lock);
		kfd_reject("FREE: BO 0x%llx holds the events page\n",
			   args->handle);
		return -EPERM;
	}
	idr_remove(&bo->pdd->bo_idr, bo->id);
	kfd_process_teardown_bo(bo);
	mutex_unlock(&p->lock);
	return 0;
}

/* The pages a BO maps into a GPU page table. */
static struct page **kfd_bo_pages(struct kfd_bo *bo,
				  struct page *doorbell[2])
{
	if (bo->gem)
		return amdgpu_amdkfd_gpuvm_pages(bo->gem);
	if (bo->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)
		return &bo->pdd->mmio_page;
	doorbell[0] = bo->pdd->doorbells;
	doorbell[1] = bo->pdd->doorbells + 1;
	return doorbell;
}

static bool kfd_bo_writable(const struct kfd_bo *bo)
{
	return bo->alloc_flags & (KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
				  KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
				  KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP);
}

/*
 * Copy in the device list of a MAP/UNMAP call; done before the process lock
 * is taken, so no user copy (which may fault) runs under it.
 */
static u32 *kfd_map_read_ids(const char *op, u64 uptr, u32 n_devices,
			     u32 n_success)
{
	if (!n_devices || n_devices > KFD_MAP_MAX_DEVICES ||
	    n_success > n_devices) {
		kfd_reject("%s: n_devices %u n_success %u\n", op, n_devices,
			   n_success);
		return ERR_PTR(-EINVAL);
	}
	return memdup_user(u64_to_user_ptr(uptr), n_devices * sizeof(u32));
}

/*
 * Turn a device list into a mask of GPU indices, checking that each GPU
 * exists and has a VM in this process. Only entries from n_success on are
 * considered, as upstream resumes there.
 */
static int kfd_map_targets(struct kfd_process *p, const char *op,
			   const u32 *ids, u32 n_devices, u32 n_success,
			   unsigned long *mask)
{
	struct kfd_process_device *pdd;
	u32 i;

	lockdep_assert_held(&p->lock);
	*mask = 0;
	for (i = n_success; i < n_devices; i++) {
		pdd = kfd_process_pdd_by_id(p, ids[i]);
		if (!pdd) {
			kfd_reject("%s: no GPU with gpu_id %u\n", op, ids[i]);
			return -EINVAL;
		}
		if (!pdd->drm_file) {
			kfd_reject("%s: gpu_id %u has no VM\n", op, ids[i]);
			return -ENODEV;
		}
		__set_bit(pdd->gpu->index, mask);
	}
	return 0;
}

/**
 * kfd_bo_map - map @bo into the page tables of the GPUs in @targets
 * @bo: the BO; the process lock must be held
 * @targets: mask of GPU indices; GPUs already mapped are skipped
 *
 * All or nothing. Return: 0, -EBUSY for a restored userptr BO whose pages
 * are not back yet, -EINVAL if the range is taken by a GEM_VA mapping of
 * the bound render node file, or the page table's errno.
 */
int kfd_bo_map(struct kfd_bo *bo, unsigned long targets)
{
	struct kfd_process *p = bo->pdd->p;
	unsigned long npages = bo->size >> PAGE_SHIFT;
	bool executable = bo->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE;
	bool writable = kfd_bo_writable(bo);
	unsigned long done = 0;
	struct page *doorbell[2];
	struct page **pages;
	unsigned int i;
	int ret;

	lockdep_assert_held(&p->lock);
	if (!bo->gem && !(bo->alloc_flags & (KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
					     KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)))
		return -EBUSY;
	pages = kfd_bo_pages(bo, doorbell);
	for_each_set_bit(i, &targets, KFDSIM_MAX_GPUS) {
		if (test_bit(i, &bo->mapped))
			continue;
		ret = amdgpu_amdkfd_gpuvm_map_memory_to_gpu(&p->pdds[i]->vm,
							    bo->va, pages,
							    npages, writable,
							    executable);
		if (ret == -EEXIST) {
			/*
			 * A GEM_VA mapping of the bound render node file is
			 * there: one VM, so amdgpu_vm_bo_map()'s -EINVAL.
			 */
			kfd_reject("MAP: va 0x%llx size 0x%llx overlaps a GEM_VA mapping\n",
				   bo->va, bo->size);
			ret = -EINVAL;
		}
		if (ret)
			goto err_unmap;
		__set_bit(i, &done);
	}
	bo->mapped |= done;
	return 0;

err_unmap:
	for_each_set_bit(i, &done, KFDSIM_MAX_GPUS)
		amdgpu_amdkfd_gpuvm_unmap_memory_from_gpu(&p->pdds[i]->vm,
							  bo->va, npages);
	return ret;
}

int kfd_ioctl_map_memory(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_map_memory_to_gpu_args *args = data;
	unsigned long targets;
	struct kfd_bo *bo;
	u32 *ids;
	int ret;

	ids = kfd_map_read_ids("MAP", args->device_ids_array_ptr,
			       args->n_devices, args->n_success);
	if (IS_ERR(ids))
		return PTR_ERR(ids);

	mutex_lock(&p->lock);
	bo = kfd_bo_lookup(p, args->handle);
	if (!bo) {
		kfd_reject("MAP: no BO with handle 0x%llx\n", args->handle);
		ret = -EINVAL;
		goto out_unlock;
	}
	ret = kfd_map_targets(p, "MAP", ids, args->n_devices, args->n_success,
			      &targets);
	if (ret)
		goto out_unlock;
	ret = kfd_bo_map(bo, targets);
	if (!ret)
		args->n_success = args->n_devices;
out_unlock:
	mutex_unlock(&p->lock);
	kfree(ids);
	return ret;
}

int kfd_ioctl_unmap_memory(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_unmap_memory_from_gpu_args *args = data;
	unsigned long targets;
	struct kfd_bo *bo;
	unsigned int i;
	u32 *ids;
	int ret;

	ids = kfd_map_read_ids("UNMAP", args->device_ids_array_ptr,
			       args->n_devices, args->n_success);
	if (IS_ERR(ids))
		return PTR_ERR(ids);

	mutex_lock(&p->lock);
	bo = kfd_bo_lookup(p, args->handle);
	if (!bo) {
		kfd_reject("UNMAP: no BO with handle 0x%llx\n", args->handle);
		ret = -EINVAL;
		goto out_unlock;
	}
	ret = kfd_map_targets(p, "UNMAP", ids, args->n_devices,
			      args->n_success, &targets);
	if (ret)
		goto out_unlock;
	if (!bo->mapped) {
		kfd_reject("UNMAP: BO 0x%llx is not mapped\n", args->handle);
		ret = -EINVAL;
		goto out_unlock;
	}

	for_each_set_bit(i, &targets, KFDSIM_MAX_GPUS) {
		if (!test_bit(i, &bo->mapped))
			continue;
		amdgpu_amdkfd_gpuvm_unmap_memory_from_gpu(&p->pdds[i]->vm, bo->va,
							  bo->size >> PAGE_SHIFT);
		__clear_bit(i, &bo->mapped);
	}
	args->n_success = args->n_devices;
out_unlock:
	mutex_unlock(&p->lock);
	kfree(ids);
	return ret;
}

int kfd_ioctl_available_memory(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_get_available_memory_args *args = data;
	struct kfd_process_device *pdd = kfd_process_pdd_by_id(p, args->gpu_id);

	if (!pdd || args->pad)
		return -EINVAL;
	args->available = amdgpu_amdkfd_get_available_memory(pdd->gpu->adev);
	return 0;
}

int kfd_ioctl_export_dmabuf(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_export_dmabuf_args *args = data;
	struct dma_buf *dmabuf;
	struct kfd_bo *bo;
	int fd;

	if (args->flags & ~(O_CLOEXEC | O_RDWR)) {
		kfd_reject("EXPORT_DMABUF: flags 0x%x\n", args->flags);
		return -EINVAL;
	}

	mutex_lock(&p->lock);
	bo = kfd_bo_lookup(p, args->handle);
	if (!bo || !bo->gem || amdgpu_amdkfd_gpuvm_is_userptr(bo->gem)) {
		mutex_unlock(&p->lock);
		kfd_reject("EXPORT_DMABUF: handle 0x%llx is not a VRAM or GTT BO\n",
			   args->handle);
		return -EINVAL;
	}
	/* The dma-buf holds its own reference on the object. */
	dmabuf = bo->pdd->gpu->ops->export_dmabuf(bo->pdd->gpu->adev, bo->gem,
						 args->flags);
	mutex_unlock(&p->lock);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);

	fd = dma_buf_fd(dmabuf, args->flags);
	if (fd < 0) {
		dma_buf_put(dmabuf);
		return fd;
	}
	args->dmabuf_fd = fd;
	return 0;
}
