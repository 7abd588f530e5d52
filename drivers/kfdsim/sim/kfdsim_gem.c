// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer object backing store.
 *
 * VRAM and GTT objects are arrays of pages the driver allocates itself; they
 * belong to no process. VRAM is charged against the GPU's VRAM size, GTT
 * against a global limit of half the system RAM. Userptr objects hold the
 * user's pages pinned for as long as the object lives, counted in the
 * owner's pinned memory (mm->pinned_vm) as other long-term pins by drivers
 * are (ib_umem_get()), and in the user's locked memory (user->locked_vm)
 * as io_uring counts its pinned buffers; without CAP_IPC_LOCK neither may
 * pass RLIMIT_MEMLOCK. The per-user count is what bounds a user who runs
 * many processes, each of which could otherwise pin RLIMIT_MEMLOCK more
 * (even of the same pages). As amdgpu's KFD memory limits
 * (amdgpu_amdkfd_reserve_mem_limit()), GTT and userptr objects together
 * are also charged against a system-memory limit of 15/16 of the RAM,
 * before anything is allocated for them.
 *
 * CPU mappings (through the render node or an exported dma-buf) insert the
 * page frames at fault time into a VM_PFNMAP mapping, as amdgpu does for
 * VRAM, so no process ever owns these pages.
 *
 * Every page of a VRAM or GTT object is zeroed before anyone sees it, and
 * that zeroing is most of what an allocation costs (under TCG a CPU clears
 * about 500 MB/s: a CRIU RESTORE of 1 GiB of VRAM spent about 2 s in it on
 * one CPU while the other idled). So a large object is filled in parts,
 * one per online CPU (module parameter fill_threads caps them; 1 fills
 * on the caller alone): the caller allocates the first part, unbound
 * work items the others, in parallel, and the caller waits for all of
 * them before the object exists for anyone. The work items charge their
 * pages to the memory cgroup of the caller's mm (set_active_memcg()), as
 * the caller's own allocations are, so the limit holds however the work
 * is split. If any part fails, every page of every part is freed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_vma_manager.h>

#include "kfdsim.h"

static atomic64_t kfdsim_gtt_used = ATOMIC64_INIT(0);
static atomic64_t kfdsim_system_used = ATOMIC64_INIT(0);

u64 kfdsim_gtt_limit(void)
{
	return ((u64)totalram_pages() << PAGE_SHIFT) / 2;
}

u64 kfdsim_gtt_usage(void)
{
	return atomic64_read(&kfdsim_gtt_used);
}

static u64 kfdsim_system_limit(void)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;

	return ram - (ram >> 4);
}

static int kfdsim_charge_one(atomic64_t *used, u64 limit, u64 size)
{
	if (size > limit)
		return -ENOMEM;
	if (atomic64_add_return(size, used) > limit) {
		atomic64_sub(size, used);
		return -ENOMEM;
	}
	return 0;
}

/* Reserve @size bytes of the domain's budgets, or fail with -ENOMEM. */
static int kfdsim_charge(struct kfdsim_gpu *gpu, enum kfdsim_domain domain,
			 u64 size)
{
	int ret;

	switch (domain) {
	case KFDSIM_DOMAIN_VRAM:
		return kfdsim_charge_one(&gpu->vram_used, gpu->vram_size, size);
	case KFDSIM_DOMAIN_GTT:
		ret = kfdsim_charge_one(&kfdsim_gtt_used, kfdsim_gtt_limit(),
					size);
		if (ret)
			return ret;
		ret = kfdsim_charge_one(&kfdsim_system_used,
					kfdsim_system_limit(), size);
		if (ret)
			atomic64_sub(size, &kfdsim_gtt_used);
		return ret;
	case KFDSIM_DOMAIN_USERPTR:
		return kfdsim_charge_one(&kfdsim_system_used,
					 kfdsim_system_limit(), size);
	}
	return -EINVAL;
}

static void kfdsim_uncharge(struct kfdsim_gpu *gpu, enum kfdsim_domain domain,
			    u64 size)
{
	if (domain == KFDSIM_DOMAIN_VRAM) {
		atomic64_sub(size, &gpu->vram_used);
		return;
	}
	if (domain == KFDSIM_DOMAIN_GTT)
		atomic64_sub(size, &kfdsim_gtt_used);
	atomic64_sub(size, &kfdsim_system_used);
}

/*
 * Count @npages long-term pinned pages in @user's locked_vm and in @mm's
 * pinned_vm; without CAP_IPC_LOCK neither total may pass RLIMIT_MEMLOCK.
 * On success @mm is grabbed and @user referenced until
 * kfdsim_unaccount_pinned().
 */
static int kfdsim_account_pinned(struct mm_struct *mm,
				 struct user_struct *user,
				 unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long locked;
	s64 pinned;

	locked = atomic_long_add_return(npages, &user->locked_vm);
	if (locked > limit && !capable(CAP_IPC_LOCK)) {
		atomic_long_sub(npages, &user->locked_vm);
		kfdsim_reject("userptr of %lu pages: uid %u has %lu locked, RLIMIT_MEMLOCK %lu\n",
			      npages, from_kuid(&init_user_ns, user->uid),
			      locked - npages, limit);
		return -ENOMEM;
	}
	pinned = atomic64_add_return(npages, &mm->pinned_vm);
	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		atomic_long_sub(npages, &user->locked_vm);
		kfdsim_reject("userptr of %lu pages: %lld pinned, RLIMIT_MEMLOCK allows %lu\n",
			      npages, pinned - npages, limit);
		return -ENOMEM;
	}
	mmgrab(mm);
	get_uid(user);
	return 0;
}

static void kfdsim_unaccount_pinned(struct mm_struct *mm,
				    struct user_struct *user,
				    unsigned long npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
	mmdrop(mm);
	atomic_long_sub(npages, &user->locked_vm);
	free_uid(user);
}

/*
 * Each FOLL_PIN of a small page adds GUP_PIN_COUNTING_BIAS (1024) to its
 * reference count, and GUP refuses a page only once that count has gone
 * negative, so about 2^21 pins of one page overflow it. Every userptr BO
 * pins its pages again, even BOs over the same pages, and the system
 * budget counts bytes, not distinct pages: refuse a pin that leaves a page
 * above half the range, far from the overflow.
 */
#define KFDSIM_PIN_REF_MAX	(INT_MAX / 2)

static bool kfdsim_pins_too_many(struct page **pages, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		if (folio_ref_count(page_folio(pages[i])) > KFDSIM_PIN_REF_MAX)
			return true;
	return false;
}

static void kfdsim_free_pages(struct page **pages, unsigned long n)
{
	while (n)
		__free_page(pages[--n]);
}

static void kfdsim_gem_free(struct drm_gem_object *obj)
{
	struct kfdsim_gem *bo = to_kfdsim_gem(obj);

	if (bo->domain == KFDSIM_DOMAIN_USERPTR) {
		unpin_user_pages_dirty_lock(bo->pages, bo->npages, true);
		atomic_sub(bo->npages, &kfdsim_counters.pinned_pages);
		kfdsim_unaccount_pinned(bo->mm, bo->user, bo->npages);
	} else {
		kfdsim_free_pages(bo->pages, bo->npages);
	}
	kfdsim_uncharge(bo->gpu, bo->domain, obj->size);
	kvfree(bo->pages);
	drm_gem_object_release(obj);
	kfree(bo);
	atomic_dec(&kfdsim_counters.gem_objects);
}

static struct sg_table *kfdsim_gem_get_sg_table(struct drm_gem_object *obj)
{
	struct kfdsim_gem *bo = to_kfdsim_gem(obj);

	return drm_prime_pages_to_sg(obj->dev, bo->pages, bo->npages);
}

static int kfdsim_gem_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	struct kfdsim_gem *bo = to_kfdsim_gem(obj);
	void *vaddr;

	vaddr = vmap(bo->pages, bo->npages, VM_MAP, PAGE_KERNEL);
	if (!vaddr)
		return -ENOMEM;
	iosys_map_set_vaddr(map, vaddr);
	return 0;
}

static void kfdsim_gem_vunmap(struct drm_gem_object *obj,
			      struct iosys_map *map)
{
	vunmap(map->vaddr);
}

/* Pages a fault maps at most: the faulting one and those after it. */
#define KFDSIM_GEM_PREFAULT	16

/*
 * As TTM's fault handler (TTM_BO_VM_NUM_PREFAULT) does for amdgpu: map the
 * faulting page and the next ones of the object that the VMA covers, so
 * that a pass over a mapping takes one fault per 16 pages, not one per
 * page. Only the faulting page's insertion decides the result.
 */
static vm_fault_t kfdsim_gem_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct drm_gem_object *obj = vma->vm_private_data;
	struct kfdsim_gem *bo = to_kfdsim_gem(obj);
	unsigned long idx, addr = vmf->address & PAGE_MASK, i;
	vm_fault_t ret;

	/* vm_pgoff still carries the object's fake offset. */
	idx = vmf->pgoff - drm_vma_node_start(&obj->vma_node);
	if (idx >= bo->npages)
		return VM_FAULT_SIGBUS;
	ret = vmf_insert_pfn(vma, addr, page_to_pfn(bo->pages[idx]));
	if (ret != VM_FAULT_NOPAGE)
		return ret;
	for (i = 1; i < KFDSIM_GEM_PREFAULT && idx + i < bo->npages &&
	     addr + i * PAGE_SIZE < vma->vm_end; i++)
		if (vmf_insert_pfn(vma, addr + i * PAGE_SIZE,
				   page_to_pfn(bo->pages[idx + i])) !=
		    VM_FAULT_NOPAGE)
			break;
	return ret;
}

static const struct vm_operations_struct kfdsim_gem_vm_ops = {
	.fault = kfdsim_gem_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

/**
 * kfdsim_gem_cpu_access - may the CPU map @bo?
 * @bo: the object (or an alias of it)
 *
 * As amdgpu_gem_object_mmap() and amdgpu's GEM_MMAP: not an object created
 * with NO_CPU_ACCESS. Every CPU mapping path asks here: mmap of the render
 * node and of a dma-buf, and the GEM_MMAP ioctl. Kernel-side access (dma-buf
 * vmap, begin_cpu_access) is not checked, as upstream does not check it.
 *
 * Return: 0, or -EPERM with a log line.
 */
int kfdsim_gem_cpu_access(const struct kfdsim_gem *bo)
{
	if (!bo->no_cpu_access)
		return 0;
	kfdsim_reject("CPU mapping of a BO created with NO_CPU_ACCESS\n");
	return -EPERM;
}

static int kfdsim_gem_mmap(struct drm_gem_object *obj,
			   struct vm_area_struct *vma)
{
	int ret;

	ret = kfdsim_gem_cpu_access(to_kfdsim_gem(obj));
	if (ret)
		return ret;
	/*
	 * ROCm's thunk reserves the CPU address of a BO it does not map with
	 * a PROT_NONE, MAP_PRIVATE mapping. As amdgpu does, such a mapping
	 * loses VM_MAYWRITE, so it can never become copy-on-write.
	 */
	if (is_cow_mapping(vma->vm_flags) &&
	    !(vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC)))
		vma->vm_flags &= ~VM_MAYWRITE;
	/* PFN mappings cannot be copy-on-write; userptr BOs have no offset. */
	if (to_kfdsim_gem(obj)->domain == KFDSIM_DOMAIN_USERPTR ||
	    is_cow_mapping(vma->vm_flags))
		return -EINVAL;
	vma->vm_flags |= VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_page_prot = vm_get_page_prot(vma->vm_flags);
	return 0;
}

static const struct drm_gem_object_funcs kfdsim_gem_funcs = {
	.free = kfdsim_gem_free,
	.get_sg_table = kfdsim_gem_get_sg_table,
	.vmap = kfdsim_gem_vmap,
	.vunmap = kfdsim_gem_vunmap,
	.mmap = kfdsim_gem_mmap,
	.vm_ops = &kfdsim_gem_vm_ops,
};

static struct kfdsim_gem *kfdsim_gem_alloc(struct kfdsim_gpu *gpu,
					   enum kfdsim_domain domain, u64 size)
{
	struct kfdsim_gem *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return NULL;
	bo->npages = size >> PAGE_SHIFT;
	bo->pages = kvcalloc(bo->npages, sizeof(*bo->pages),
			     GFP_KERNEL_ACCOUNT);
	if (!bo->pages) {
		kfree(bo);
		return NULL;
	}
	bo->gpu = gpu;
	bo->domain = domain;
	bo->base.funcs = &kfdsim_gem_funcs;
	drm_gem_private_object_init(&gpu->drm, &bo->base, size);
	return bo;
}

/* Undo kfdsim_gem_alloc() for an object whose pages are not populated. */
static void kfdsim_gem_discard(struct kfdsim_gem *bo)
{
	drm_gem_object_release(&bo->base);
	kvfree(bo->pages);
	kfree(bo);
}

/* Parts of a fill: at most this many, of at least this many pages each. */
#define KFDSIM_FILL_MAX_PARTS	4
#define KFDSIM_FILL_PART_PAGES	(SZ_4M >> PAGE_SHIFT)

static unsigned int fill_threads;
module_param(fill_threads, uint, 0644);
MODULE_PARM_DESC(fill_threads,
		 "CPUs that allocate and zero a large VRAM/GTT object together (0: one per online CPU, up to 4; 1: the caller alone)");

#define KFDSIM_GEM_GFP	(GFP_HIGHUSER | __GFP_ZERO | __GFP_ACCOUNT | \
			 __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

/* One part of a fill: @n zeroed pages into @pages. */
struct kfdsim_fill_part {
	struct work_struct work;
	struct mem_cgroup *memcg;
	struct page **pages;
	unsigned long n;
	unsigned long done;	/* pages allocated, from the first on */
};

/* Allocate @n zeroed pages into @pages; returns how many it got. */
static unsigned long kfdsim_alloc_pages(struct page **pages, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(KFDSIM_GEM_GFP);
		if (!pages[i])
			break;
	}
	return i;
}

static void kfdsim_fill_work(struct work_struct *work)
{
	struct kfdsim_fill_part *f = container_of(work, struct kfdsim_fill_part,
						  work);
	struct mem_cgroup *old = set_active_memcg(f->memcg);

	f->done = kfdsim_alloc_pages(f->pages, f->n);
	set_active_memcg(old);
}

static unsigned int kfdsim_fill_parts(unsigned long npages)
{
	unsigned int parts = min_t(unsigned int, num_online_cpus(),
				   KFDSIM_FILL_MAX_PARTS);
	unsigned int cap = READ_ONCE(fill_threads);

	if (cap && cap < parts)
		parts = cap;
	return min_t(unsigned long, parts, npages / KFDSIM_FILL_PART_PAGES);
}

/*
 * Populate @bo's page array with zeroed pages, in parallel for a large
 * object (see the top of this file).
 * Return: 0, or -ENOMEM with no page left allocated.
 */
static int kfdsim_gem_fill(struct kfdsim_gem *bo)
{
	struct kfdsim_fill_part part[KFDSIM_FILL_MAX_PARTS];
	unsigned long n = bo->npages, first;
	struct mem_cgroup *memcg;
	unsigned int parts, k;
	int ret = 0;

	parts = kfdsim_fill_parts(n);
	if (parts <= 1) {
		first = kfdsim_alloc_pages(bo->pages, n);
		if (first == n)
			return 0;
		kfdsim_free_pages(bo->pages, first);
		return -ENOMEM;
	}

	memcg = get_mem_cgroup_from_mm(current->mm);
	for (k = 0; k < parts; k++) {
		first = n * k / parts;
		part[k].pages = bo->pages + first;
		part[k].n = n * (k + 1) / parts - first;
		part[k].done = 0;
		part[k].memcg = memcg;
		if (!k)
			continue;
		INIT_WORK_ONSTACK(&part[k].work, kfdsim_fill_work);
		queue_work(system_unbound_wq, &part[k].work);
	}
	part[0].done = kfdsim_alloc_pages(part[0].pages, part[0].n);
	for (k = 1; k < parts; k++) {
		flush_work(&part[k].work);
		destroy_work_on_stack(&part[k].work);
	}
	mem_cgroup_put(memcg);

	for (k = 0; k < parts; k++)
		if (part[k].done != part[k].n)
			ret = -ENOMEM;
	if (ret)
		for (k = 0; k < parts; k++)
			kfdsim_free_pages(part[k].pages, part[k].done);
	return ret;
}

/**
 * kfdsim_gem_create - allocate a VRAM or GTT object of @size bytes
 * @gpu: owning GPU (VRAM is charged to it)
 * @domain: KFDSIM_DOMAIN_VRAM or KFDSIM_DOMAIN_GTT
 * @size: page-aligned, non-zero
 *
 * The pages are zeroed, so no data leaks between processes; a large object
 * is allocated by several CPUs at once (kfdsim_gem_fill()).
 * Return: the object with one reference, or an ERR_PTR.
 */
struct kfdsim_gem *kfdsim_gem_create(struct kfdsim_gpu *gpu,
				     enum kfdsim_domain domain, u64 size)
{
	struct kfdsim_gem *bo;
	int ret;

	ret = kfdsim_charge(gpu, domain, size);
	if (ret)
		return ERR_PTR(ret);

	bo = kfdsim_gem_alloc(gpu, domain, size);
	if (!bo) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	ret = kfdsim_gem_fill(bo);
	if (ret) {
		pr_info_ratelimited("%s object of %lu pages: out of pages (RAM or the memory cgroup's limit)\n",
				    domain == KFDSIM_DOMAIN_VRAM ? "VRAM" : "GTT",
				    bo->npages);
		goto err_discard;
	}
	ret = drm_gem_create_mmap_offset(&bo->base);
	if (ret)
		goto err_pages;

	atomic_inc(&kfdsim_counters.gem_objects);
	return bo;

err_pages:
	kfdsim_free_pages(bo->pages, bo->npages);
err_discard:
	kfdsim_gem_discard(bo);
err_uncharge:
	kfdsim_uncharge(gpu, domain, size);
	return ERR_PTR(ret);
}

static long kfdsim_pin_remote(struct mm_struct *mm, u64 uaddr,
			      unsigned long npages, struct page **pages)
{
	long pinned;

	if (!mmget_not_zero(mm))
		return -ESRCH;
	mmap_read_lock(mm);
	pinned = pin_user_pages_remote(mm, uaddr, npages,
				       FOLL_WRITE | FOLL_LONGTERM, pages,
				       NULL, NULL);
	mmap_read_unlock(mm);
	mmput(mm);
	return pinned;
}

/**
 * kfdsim_gem_create_userptr - pin @size bytes of user memory at @uaddr
 * @gpu: the GPU the object is allocated on
 * @mm: the address space: the caller's, or (at a CRIU RESUME) the
 *      restored process's
 * @uaddr: page-aligned user address
 * @size: page-aligned, non-zero
 *
 * The pages count in the calling task's user's locked memory (at a CRIU
 * RESUME that is CRIU's user, which has CAP_IPC_LOCK).
 *
 * Return: the object with one reference, or an ERR_PTR (-ENOMEM when @size
 * is beyond the system-memory limit, checked before the page array is
 * allocated, beyond RLIMIT_MEMLOCK, or when a page is pinned too often
 * already; -EFAULT when the range is not fully backed by writable user
 * memory).
 */
struct kfdsim_gem *kfdsim_gem_create_userptr(struct kfdsim_gpu *gpu,
					     struct mm_struct *mm,
					     u64 uaddr, u64 size)
{
	struct user_struct *user = current_user();
	struct kfdsim_gem *bo;
	long pinned;
	int ret;

	ret = kfdsim_charge(gpu, KFDSIM_DOMAIN_USERPTR, size);
	if (ret) {
		kfdsim_reject("userptr of 0x%llx bytes: system-memory limit of 0x%llx reached\n",
			      size, kfdsim_system_limit());
		return ERR_PTR(ret);
	}
	ret = kfdsim_account_pinned(mm, user, size >> PAGE_SHIFT);
	if (ret)
		goto err_uncharge;
	bo = kfdsim_gem_alloc(gpu, KFDSIM_DOMAIN_USERPTR, size);
	if (!bo) {
		ret = -ENOMEM;
		goto err_unaccount;
	}
	bo->mm = mm;
	bo->user = user;

	if (mm == current->mm)
		pinned = pin_user_pages_fast(uaddr, bo->npages,
					     FOLL_WRITE | FOLL_LONGTERM,
					     bo->pages);
	else
		pinned = kfdsim_pin_remote(mm, uaddr, bo->npages, bo->pages);
	if (pinned != bo->npages) {
		if (pinned > 0)
			unpin_user_pages(bo->pages, pinned);
		kfdsim_gem_discard(bo);
		ret = pinned < 0 ? (int)pinned : -EFAULT;
		goto err_unaccount;
	}
	if (kfdsim_pins_too_many(bo->pages, bo->npages)) {
		kfdsim_reject("userptr at 0x%llx: a page is pinned too often already\n",
			      uaddr);
		unpin_user_pages(bo->pages, bo->npages);
		kfdsim_gem_discard(bo);
		ret = -ENOMEM;
		goto err_unaccount;
	}
	atomic_add(bo->npages, &kfdsim_counters.pinned_pages);
	atomic_inc(&kfdsim_counters.gem_objects);
	return bo;

err_unaccount:
	kfdsim_unaccount_pinned(mm, user, size >> PAGE_SHIFT);
err_uncharge:
	kfdsim_uncharge(gpu, KFDSIM_DOMAIN_USERPTR, size);
	return ERR_PTR(ret);
}

void kfdsim_gem_put(struct kfdsim_gem *bo)
{
	drm_gem_object_put(&bo->base);
}

/**
 * kfdsim_gem_export_dmabuf - the export_dmabuf device operation
 * @gpu: the GPU that owns @bo
 * @bo: VRAM or GTT memory
 * @flags: O_RDWR and O_CLOEXEC
 *
 * Return: a dma-buf holding its own reference on @bo, or an ERR_PTR.
 */
struct dma_buf *kfdsim_gem_export_dmabuf(struct kfdsim_gpu *gpu,
					 struct kfdsim_gem *bo, int flags)
{
	WARN_ON(bo->gpu != gpu);
	return drm_gem_prime_export(&bo->base, flags);
}
