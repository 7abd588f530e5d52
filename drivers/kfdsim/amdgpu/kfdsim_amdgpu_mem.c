// SPDX-License-Identifier: GPL-2.0
/*
 * amdgpu uAPI: buffers and the file's GPU VM.
 *
 * GEM_CREATE and GEM_USERPTR make the same kinds of backing store KFD
 * allocates (kfdsim_gem.c), with a GEM handle in the file. PRIME import of
 * a dma-buf made by this driver gives back the object itself when it comes
 * from the same GPU, and otherwise an alias object on the importing GPU that
 * shares the pages (a peer mapping, as KFD allows between GPUs).
 *
 * GEM_VA maps whole pages of a BO into the file's GPU page table, which is
 * also the KFD process's VM once KFD has bound the file: a range mapped by
 * either side is refused to the other with -EINVAL, as amdgpu_vm_bo_map()
 * refuses any overlap in the one VM. Each mapping holds a reference on its
 * BO, so the pages stay valid until the
 * mapping is removed (by GEM_VA or when the file is closed), even if every
 * handle of the BO is closed first; amdgpu instead drops a BO's mappings
 * when the file's last handle of it goes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/interval_tree.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_vma_manager.h>

#include "kfdsim_amdgpu.h"

/* Creation flags accepted; NO_CPU_ACCESS forbids CPU mappings, the others
 * only steer placement and caching.
 */
#define KFDSIM_AMDGPU_CREATE_FLAGS \
	(AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED | \
	 AMDGPU_GEM_CREATE_NO_CPU_ACCESS | \
	 AMDGPU_GEM_CREATE_CPU_GTT_USWC | \
	 AMDGPU_GEM_CREATE_VRAM_CLEARED | \
	 AMDGPU_GEM_CREATE_VM_ALWAYS_VALID | \
	 AMDGPU_GEM_CREATE_EXPLICIT_SYNC | \
	 AMDGPU_GEM_CREATE_DISCARDABLE)

#define KFDSIM_AMDGPU_SYS_DOMAINS \
	(AMDGPU_GEM_DOMAIN_CPU | AMDGPU_GEM_DOMAIN_GTT)

#define KFDSIM_AMDGPU_USERPTR_FLAGS \
	(AMDGPU_GEM_USERPTR_ANONONLY | AMDGPU_GEM_USERPTR_VALIDATE | \
	 AMDGPU_GEM_USERPTR_REGISTER)

/* The flags amdgpu_gem_va_ioctl() accepts besides PRT. */
#define KFDSIM_AMDGPU_VA_FLAGS \
	(AMDGPU_VM_DELAY_UPDATE | AMDGPU_VM_PAGE_READABLE | \
	 AMDGPU_VM_PAGE_WRITEABLE | AMDGPU_VM_PAGE_EXECUTABLE | \
	 AMDGPU_VM_MTYPE_MASK | AMDGPU_VM_PAGE_NOALLOC)

/* GEM_CREATE with no domain gets system memory, as in amdgpu. */
#define KFDSIM_AMDGPU_DOMAIN_DEFAULT	AMDGPU_GEM_DOMAIN_CPU

/* ---- alias objects: another GPU's pages under this GPU's device ---- */

/**
 * struct kfdsim_amdgpu_alias - a GEM object borrowing another's pages
 * @gem: the object; pages, npages and domain are those of @parent
 * @parent: the object that owns the pages (a reference is held)
 */
struct kfdsim_amdgpu_alias {
	struct kfdsim_gem gem;
	struct kfdsim_gem *parent;
};

static const struct drm_gem_object_funcs kfdsim_amdgpu_alias_funcs;

static struct kfdsim_amdgpu_alias *to_alias(struct drm_gem_object *obj)
{
	return container_of(to_kfdsim_gem(obj), struct kfdsim_amdgpu_alias,
			    gem);
}

static void kfdsim_amdgpu_alias_free(struct drm_gem_object *obj)
{
	struct kfdsim_amdgpu_alias *al = to_alias(obj);

	kfdsim_gem_put(al->parent);
	drm_gem_object_release(obj);
	kfree(al);
	atomic_dec(&kfdsim_counters.gem_objects);
}

static vm_fault_t kfdsim_amdgpu_alias_fault(struct vm_fault *vmf)
{
	struct drm_gem_object *obj = vmf->vma->vm_private_data;
	struct kfdsim_gem *bo = to_kfdsim_gem(obj);
	unsigned long idx;

	idx = vmf->pgoff - drm_vma_node_start(&obj->vma_node);
	if (idx >= bo->npages)
		return VM_FAULT_SIGBUS;
	return vmf_insert_pfn(vmf->vma, vmf->address,
			      page_to_pfn(bo->pages[idx]));
}

static const struct vm_operations_struct kfdsim_amdgpu_alias_vm_ops = {
	.fault = kfdsim_amdgpu_alias_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

/* The same kind of mapping kfdsim_gem.c makes for the parent. */
static int kfdsim_amdgpu_alias_mmap(struct drm_gem_object *obj,
				    struct vm_area_struct *vma)
{
	int ret = kfdsim_gem_cpu_access(to_kfdsim_gem(obj));

	if (ret)
		return ret;
	if (is_cow_mapping(vma->vm_flags) &&
	    !(vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC)))
		vma->vm_flags &= ~VM_MAYWRITE;
	if (is_cow_mapping(vma->vm_flags))
		return -EINVAL;
	vma->vm_flags |= VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_page_prot = vm_get_page_prot(vma->vm_flags);
	return 0;
}

/*
 * No export callbacks: an alias only comes from an import, so it always
 * carries that dma-buf, and PRIME export hands that one out again.
 */
static const struct drm_gem_object_funcs kfdsim_amdgpu_alias_funcs = {
	.free = kfdsim_amdgpu_alias_free,
	.mmap = kfdsim_amdgpu_alias_mmap,
	.vm_ops = &kfdsim_amdgpu_alias_vm_ops,
};

static struct drm_gem_object *
kfdsim_amdgpu_alias_create(struct kfdsim_gpu *gpu, struct kfdsim_gem *parent)
{
	struct kfdsim_amdgpu_alias *al;
	int ret;

	/* Alias the owner of the pages, never another alias. */
	if (parent->base.funcs == &kfdsim_amdgpu_alias_funcs)
		parent = to_alias(&parent->base)->parent;

	al = kzalloc(sizeof(*al), GFP_KERNEL_ACCOUNT);
	if (!al)
		return ERR_PTR(-ENOMEM);
	al->gem.gpu = gpu;
	al->gem.domain = parent->domain;
	al->gem.pages = parent->pages;
	al->gem.npages = parent->npages;
	al->gem.no_cpu_access = parent->no_cpu_access;
	al->gem.base.funcs = &kfdsim_amdgpu_alias_funcs;
	drm_gem_private_object_init(&gpu->drm, &al->gem.base,
				    parent->base.size);
	ret = drm_gem_create_mmap_offset(&al->gem.base);
	if (ret) {
		drm_gem_object_release(&al->gem.base);
		kfree(al);
		return ERR_PTR(ret);
	}
	drm_gem_object_get(&parent->base);
	al->parent = parent;
	atomic_inc(&kfdsim_counters.gem_objects);
	return &al->gem.base;
}

/* ---- PRIME ---- */

/*
 * Called by drm_gem_prime_fd_to_handle() with the device's object_name_lock
 * held, which also guards @obj->dma_buf of this device's objects.
 */
struct drm_gem_object *kfdsim_amdgpu_prime_import(struct drm_device *drm,
						  struct dma_buf *dmabuf)
{
	struct kfdsim_gpu *gpu = kfdsim_amdgpu_gpu_of(drm);
	struct drm_gem_object *obj;

	/* drm_gem_prime_export() records the DRM driver's module as owner. */
	if (dmabuf->owner != THIS_MODULE) {
		kfdsim_amdgpu_reject("PRIME import: not a kfdsim dma-buf\n");
		return ERR_PTR(-EINVAL);
	}
	obj = dmabuf->priv;

	/*
	 * Our own object, unless it already stands for another dma-buf of
	 * it (KFD exports a new dma-buf each time): then an alias, since
	 * DRM keeps one dma-buf per object.
	 */
	if (obj->dev == drm && (!obj->dma_buf || obj->dma_buf == dmabuf)) {
		drm_gem_object_get(obj);
		return obj;
	}
	if (!gpu)
		return ERR_PTR(-ENODEV);
	return kfdsim_amdgpu_alias_create(gpu, to_kfdsim_gem(obj));
}

/* As amdgpu, user memory cannot be shared through a dma-buf. */
int kfdsim_amdgpu_prime_handle_to_fd(struct drm_device *drm,
				     struct drm_file *file, u32 handle,
				     u32 flags, int *prime_fd)
{
	struct drm_gem_object *obj;
	bool userptr;

	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return -ENOENT;
	userptr = to_kfdsim_gem(obj)->domain == KFDSIM_DOMAIN_USERPTR;
	drm_gem_object_put(obj);
	if (userptr) {
		kfdsim_amdgpu_reject("PRIME export: handle %u is user memory\n",
				     handle);
		return -EPERM;
	}
	return drm_gem_prime_handle_to_fd(drm, file, handle, flags, prime_fd);
}

/* ---- GEM_CREATE, GEM_MMAP, GEM_USERPTR, GEM_WAIT_IDLE ---- */

static int kfdsim_amdgpu_new_handle(struct drm_file *file,
				    struct kfdsim_gem *bo, u32 *handle)
{
	int ret;

	/* The handle takes over the caller's reference. */
	ret = drm_gem_handle_create(file, &bo->base, handle);
	kfdsim_gem_put(bo);
	return ret;
}

int kfdsim_amdgpu_gem_create(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct kfdsim_gpu *gpu = to_amdgpu_file(file)->gpu;
	union drm_amdgpu_gem_create *args = data;
	u64 domains = args->in.domains;
	u64 size = args->in.bo_size;
	struct kfdsim_gem *bo;
	u32 handle;
	int ret;

	if (!gpu)
		return -ENODEV;
	if (args->in.domain_flags & ~(u64)KFDSIM_AMDGPU_CREATE_FLAGS) {
		kfdsim_amdgpu_reject("GEM_CREATE: unsupported flags 0x%llx\n",
				     args->in.domain_flags &
				     ~(u64)KFDSIM_AMDGPU_CREATE_FLAGS);
		return -EINVAL;
	}
	if (!domains)
		domains = KFDSIM_AMDGPU_DOMAIN_DEFAULT;
	if (domains & ~(u64)(KFDSIM_AMDGPU_SYS_DOMAINS |
			     AMDGPU_GEM_DOMAIN_VRAM)) {
		kfdsim_amdgpu_reject("GEM_CREATE: domains 0x%llx (VRAM, GTT, CPU only)\n",
				     domains);
		return -EINVAL;
	}
	/* The alignment is a placement hint; pages are always aligned. */
	if (!size || size > U64_MAX - PAGE_SIZE) {
		kfdsim_amdgpu_reject("GEM_CREATE: size 0x%llx\n", size);
		return -EINVAL;
	}
	size = PAGE_ALIGN(size);

	/*
	 * VRAM first when asked for, system memory if VRAM is full: like
	 * amdgpu_gem_create_ioctl(), which retries a VRAM-only request in
	 * VRAM or GTT.
	 */
	bo = ERR_PTR(-ENOMEM);
	if (domains & AMDGPU_GEM_DOMAIN_VRAM)
		bo = kfdsim_gem_create(gpu, KFDSIM_DOMAIN_VRAM, size);
	if (IS_ERR(bo) && PTR_ERR(bo) == -ENOMEM)
		bo = kfdsim_gem_create(gpu, KFDSIM_DOMAIN_GTT, size);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	bo->no_cpu_access = args->in.domain_flags &
			    AMDGPU_GEM_CREATE_NO_CPU_ACCESS;

	ret = kfdsim_amdgpu_new_handle(file, bo, &handle);
	if (ret)
		return ret;
	memset(args, 0, sizeof(*args));
	args->out.handle = handle;
	return 0;
}

int kfdsim_amdgpu_gem_mmap(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	union drm_amdgpu_gem_mmap *args = data;
	struct drm_gem_object *obj;
	int ret = 0;

	/* As amdgpu, the padding is not looked at. */
	obj = drm_gem_object_lookup(file, args->in.handle);
	if (!obj)
		return -ENOENT;
	/* As amdgpu: user memory is mapped where it already is. */
	if (to_kfdsim_gem(obj)->domain == KFDSIM_DOMAIN_USERPTR) {
		kfdsim_amdgpu_reject("GEM_MMAP: handle %u is user memory\n",
				     args->in.handle);
		ret = -EPERM;
	} else if (to_kfdsim_gem(obj)->no_cpu_access) {
		kfdsim_amdgpu_reject("GEM_MMAP: handle %u was created with NO_CPU_ACCESS\n",
				     args->in.handle);
		ret = -EPERM;
	} else {
		memset(args, 0, sizeof(*args));
		args->out.addr_ptr = drm_vma_node_offset_addr(&obj->vma_node);
	}
	drm_gem_object_put(obj);
	return ret;
}

/* ANONONLY: every page of the range must be anonymous memory. */
static int kfdsim_amdgpu_check_anon(u64 addr, u64 size)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	u64 end = addr + size;
	int ret = 0;

	mmap_read_lock(mm);
	while (addr < end) {
		vma = vma_lookup(mm, addr);
		if (!vma) {
			ret = -EFAULT;
			break;
		}
		if (vma->vm_file) {
			ret = -EPERM;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

int kfdsim_amdgpu_gem_userptr(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct kfdsim_gpu *gpu = to_amdgpu_file(file)->gpu;
	struct drm_amdgpu_gem_userptr *args = data;
	struct kfdsim_gem *bo;
	u32 handle;
	int ret;

	if (!gpu)
		return -ENODEV;
	if (args->flags & AMDGPU_GEM_USERPTR_READONLY) {
		kfdsim_amdgpu_reject("GEM_USERPTR: read-only user memory is not simulated\n");
		return -EINVAL;
	}
	if (args->flags & ~KFDSIM_AMDGPU_USERPTR_FLAGS) {
		kfdsim_amdgpu_reject("GEM_USERPTR: unknown flags 0x%x\n",
				     args->flags);
		return -EINVAL;
	}
	/* As amdgpu: memory the GPU writes must be registered. */
	if (!(args->flags & AMDGPU_GEM_USERPTR_REGISTER))
		return -EACCES;
	if (!args->size || !PAGE_ALIGNED(args->addr | args->size) ||
	    args->addr + args->size < args->addr) {
		kfdsim_amdgpu_reject("GEM_USERPTR: addr 0x%llx size 0x%llx\n",
				     args->addr, args->size);
		return -EINVAL;
	}
	/* Pinned memory is held to the budget of system memory BOs. */
	if (args->size > kfdsim_gtt_limit())
		return -ENOMEM;
	if (args->flags & AMDGPU_GEM_USERPTR_ANONONLY) {
		ret = kfdsim_amdgpu_check_anon(args->addr, args->size);
		if (ret)
			return ret;
	}

	bo = kfdsim_gem_create_userptr(gpu, current->mm, args->addr,
				       args->size);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	ret = kfdsim_amdgpu_new_handle(file, bo, &handle);
	if (ret)
		return ret;
	args->handle = handle;
	return 0;
}

/*
 * As amdgpu_gem_wait_idle_ioctl(): the timeout is absolute (CLOCK_MONOTONIC
 * ns), status 1 if still busy when it passed, domain 0, flags ignored.
 */
int kfdsim_amdgpu_gem_wait_idle(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct kfdsim_amdgpu_file *af = to_amdgpu_file(file);
	union drm_amdgpu_gem_wait_idle *args = data;
	struct drm_gem_object *obj;
	long ret;

	obj = drm_gem_object_lookup(file, args->in.handle);
	if (!obj)
		return -ENOENT;
	drm_gem_object_put(obj);
	/* BOs are not tracked per job: idle when the file's jobs are done. */
	ret = wait_event_interruptible_timeout(af->job_wq,
					       kfdsim_amdgpu_idle(af),
					       kfdsim_amdgpu_timeout(args->in.timeout));
	if (ret < 0)
		return ret;
	memset(args, 0, sizeof(*args));
	args->out.status = !ret;
	return 0;
}

/* ---- GEM_VA: the file's GPU VM ---- */

/**
 * struct kfdsim_amdgpu_va - one GEM_VA mapping
 * @node: the mapped GPU VA range, in bytes, inclusive
 * @bo: the mapped BO (a reference is held)
 * @offset: byte offset in @bo of the first mapped page
 */
struct kfdsim_amdgpu_va {
	struct interval_tree_node node;
	struct kfdsim_gem *bo;
	u64 offset;
};

static u64 va_pages(u64 first, u64 last)
{
	return (last - first + 1) >> PAGE_SHIFT;
}

static void kfdsim_amdgpu_va_free(struct kfdsim_amdgpu_va *m)
{
	kfdsim_gem_put(m->bo);
	kfree(m);
}

/*
 * Remove every page mapped in [first, last], trimming or splitting the
 * mappings that extend beyond it. A split needs one more mapping: @spare,
 * which is consumed (set to NULL) if used.
 */
static void kfdsim_amdgpu_va_clear(struct kfdsim_amdgpu_file *af, u64 first,
				   u64 last, struct kfdsim_amdgpu_va **spare)
{
	struct interval_tree_node *it;
	struct kfdsim_amdgpu_va *m, *tail;
	u64 lo, hi;

	lockdep_assert_held(&af->lock);
	while ((it = interval_tree_iter_first(&af->mappings, first, last))) {
		m = container_of(it, struct kfdsim_amdgpu_va, node);
		lo = max_t(u64, it->start, first);
		hi = min_t(u64, it->last, last);
		kfdsim_vm_unmap(&af->vm, lo, va_pages(lo, hi));
		interval_tree_remove(it, &af->mappings);

		if (it->last > hi && it->start < lo) {
			/* Only the one mapping spanning the range splits. */
			tail = *spare;
			*spare = NULL;
			tail->node.start = hi + 1;
			tail->node.last = it->last;
			tail->offset = m->offset + (hi + 1 - it->start);
			drm_gem_object_get(&m->bo->base);
			tail->bo = m->bo;
			interval_tree_insert(&tail->node, &af->mappings);
		} else if (it->last > hi) {
			m->offset += hi + 1 - it->start;
			it->start = hi + 1;
			interval_tree_insert(it, &af->mappings);
			continue;
		}
		if (it->start < lo) {
			it->last = lo - 1;
			interval_tree_insert(it, &af->mappings);
			continue;
		}
		kfdsim_amdgpu_va_free(m);
	}
}

static int kfdsim_amdgpu_va_map(struct kfdsim_amdgpu_file *af,
				struct kfdsim_gem *bo,
				const struct drm_amdgpu_gem_va *args,
				struct kfdsim_amdgpu_va *m)
{
	u64 last = args->va_address + args->map_size - 1;
	u32 pte_flags = 0;
	int ret;

	lockdep_assert_held(&af->lock);
	if (interval_tree_iter_first(&af->mappings, args->va_address, last)) {
		kfdsim_amdgpu_reject("GEM_VA: 0x%llx-0x%llx overlaps a mapping\n",
				     args->va_address, last);
		return -EINVAL;
	}
	if (args->flags & AMDGPU_VM_PAGE_WRITEABLE)
		pte_flags |= KFDSIM_PTE_WRITABLE;
	if (args->flags & AMDGPU_VM_PAGE_EXECUTABLE)
		pte_flags |= KFDSIM_PTE_EXECUTABLE;
	ret = kfdsim_vm_map(&af->vm, args->va_address,
			    bo->pages + (args->offset_in_bo >> PAGE_SHIFT),
			    args->map_size >> PAGE_SHIFT, pte_flags);
	if (ret == -EEXIST) {
		/* KFD mapped a BO there: the file's VM is the process's. */
		kfdsim_amdgpu_reject("GEM_VA: 0x%llx-0x%llx overlaps a KFD mapping\n",
				     args->va_address, last);
		return -EINVAL;
	}
	if (ret)
		return ret;
	kfdsim_vm_mark_used(&af->vm);

	drm_gem_object_get(&bo->base);
	m->bo = bo;
	m->offset = args->offset_in_bo;
	m->node.start = args->va_address;
	m->node.last = last;
	interval_tree_insert(&m->node, &af->mappings);
	return 0;
}

/* UNMAP names a mapping by its BO and start address, as in amdgpu. */
static int kfdsim_amdgpu_va_unmap(struct kfdsim_amdgpu_file *af,
				  struct kfdsim_gem *bo, u64 va)
{
	struct interval_tree_node *it;
	struct kfdsim_amdgpu_va *m;

	lockdep_assert_held(&af->lock);
	it = interval_tree_iter_first(&af->mappings, va, va);
	m = it ? container_of(it, struct kfdsim_amdgpu_va, node) : NULL;
	if (!m || it->start != va || m->bo != bo) {
		kfdsim_amdgpu_reject("GEM_VA: no mapping of that BO at 0x%llx\n",
				     va);
		return -ENOENT;
	}
	kfdsim_vm_unmap(&af->vm, it->start, va_pages(it->start, it->last));
	interval_tree_remove(it, &af->mappings);
	kfdsim_amdgpu_va_free(m);
	return 0;
}

/*
 * The checks of amdgpu_gem_va_ioctl() and amdgpu_vm_bo_map(), in their
 * order: the address (for every operation), the flags, then the layout of
 * a new mapping. The padding is not looked at.
 */
static int kfdsim_amdgpu_va_check(const struct drm_amdgpu_gem_va *args)
{
	if (args->va_address < KFDSIM_AMDGPU_VA_START ||
	    args->va_address >= KFDSIM_AMDGPU_VA_END ||
	    args->map_size > KFDSIM_AMDGPU_VA_END - args->va_address) {
		kfdsim_amdgpu_reject("GEM_VA: 0x%llx size 0x%llx outside [0x%llx, 0x%llx)\n",
				     args->va_address, args->map_size,
				     KFDSIM_AMDGPU_VA_START,
				     KFDSIM_AMDGPU_VA_END);
		return -EINVAL;
	}
	if (args->flags & AMDGPU_VM_PAGE_PRT) {
		kfdsim_amdgpu_reject("GEM_VA: partially resident mappings are not simulated\n");
		return -EINVAL;
	}
	if (args->flags & ~KFDSIM_AMDGPU_VA_FLAGS) {
		kfdsim_amdgpu_reject("GEM_VA: unknown flags 0x%x\n",
				     args->flags);
		return -EINVAL;
	}
	if (args->operation == AMDGPU_VA_OP_UNMAP)
		return 0;
	if (!args->map_size ||
	    !PAGE_ALIGNED(args->va_address | args->map_size |
			  args->offset_in_bo)) {
		kfdsim_amdgpu_reject("GEM_VA: va 0x%llx size 0x%llx offset 0x%llx: %s\n",
				     args->va_address, args->map_size,
				     args->offset_in_bo,
				     "empty or not page aligned");
		return -EINVAL;
	}
	return 0;
}

int kfdsim_amdgpu_gem_va(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct kfdsim_amdgpu_file *af = to_amdgpu_file(file);
	struct drm_amdgpu_gem_va *args = data;
	struct kfdsim_amdgpu_va *m = NULL, *spare = NULL;
	struct drm_gem_object *obj = NULL;
	struct kfdsim_gem *bo = NULL;
	int ret;

	ret = kfdsim_amdgpu_va_check(args);
	if (ret)
		return ret;
	switch (args->operation) {
	case AMDGPU_VA_OP_MAP:
	case AMDGPU_VA_OP_UNMAP:
	case AMDGPU_VA_OP_CLEAR:
	case AMDGPU_VA_OP_REPLACE:
		break;
	default:
		kfdsim_amdgpu_reject("GEM_VA: unknown operation %u\n",
				     args->operation);
		return -EINVAL;
	}

	/* As amdgpu, CLEAR names no BO. */
	if (args->operation != AMDGPU_VA_OP_CLEAR) {
		obj = drm_gem_object_lookup(file, args->handle);
		if (!obj)
			return -ENOENT;
		bo = to_kfdsim_gem(obj);
	}
	if (bo && args->operation != AMDGPU_VA_OP_UNMAP &&
	    (args->offset_in_bo > obj->size ||
	     args->map_size > obj->size - args->offset_in_bo)) {
		kfdsim_amdgpu_reject("GEM_VA: offset 0x%llx size 0x%llx beyond the BO (0x%zx)\n",
				     args->offset_in_bo, args->map_size,
				     obj->size);
		ret = -EINVAL;
		goto out_put;
	}

	/* Allocate before changing anything, so only the VM can fail. */
	if (args->operation != AMDGPU_VA_OP_UNMAP) {
		m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
		spare = kzalloc(sizeof(*spare), GFP_KERNEL_ACCOUNT);
		if (!m || !spare) {
			ret = -ENOMEM;
			goto out_free;
		}
	}

	mutex_lock(&af->lock);
	switch (args->operation) {
	case AMDGPU_VA_OP_MAP:
		ret = kfdsim_amdgpu_va_map(af, bo, args, m);
		break;
	case AMDGPU_VA_OP_UNMAP:
		ret = kfdsim_amdgpu_va_unmap(af, bo, args->va_address);
		break;
	case AMDGPU_VA_OP_CLEAR:
		kfdsim_amdgpu_va_clear(af, args->va_address,
				       args->va_address + args->map_size - 1,
				       &spare);
		break;
	case AMDGPU_VA_OP_REPLACE:
		kfdsim_amdgpu_va_clear(af, args->va_address,
				       args->va_address + args->map_size - 1,
				       &spare);
		ret = kfdsim_amdgpu_va_map(af, bo, args, m);
		break;
	}
	mutex_unlock(&af->lock);
	if (!ret && (args->operation == AMDGPU_VA_OP_MAP ||
		     args->operation == AMDGPU_VA_OP_REPLACE))
		m = NULL;

out_free:
	kfree(spare);
	kfree(m);
out_put:
	if (obj)
		drm_gem_object_put(obj);
	return ret;
}

/* At close: drop every mapping left. */
void kfdsim_amdgpu_vm_fini(struct kfdsim_amdgpu_file *af)
{
	struct interval_tree_node *it;
	struct kfdsim_amdgpu_va *m;

	mutex_lock(&af->lock);
	while ((it = interval_tree_iter_first(&af->mappings, 0, U64_MAX))) {
		m = container_of(it, struct kfdsim_amdgpu_va, node);
		kfdsim_vm_unmap(&af->vm, it->start,
				va_pages(it->start, it->last));
		interval_tree_remove(it, &af->mappings);
		kfdsim_amdgpu_va_free(m);
	}
	mutex_unlock(&af->lock);
}
