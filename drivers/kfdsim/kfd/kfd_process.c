// SPDX-License-Identifier: GPL-2.0
/*
 * Per-process KFD state.
 *
 * As in amdkfd there is one struct kfd_process per address space: every
 * /dev/kfd file opened by the process shares it. It lives while any of those
 * files is open or any doorbell mapping of it exists; the last reference
 * tears everything down (BOs, GPU mappings, doorbells, render-node bindings).
 *
 * Locking: kfd_processes_lock protects the list and lookups (and is
 * taken by the final put so a lookup never revives a dying process);
 * p->lock serialises all ioctls of one process. Order: list lock, p->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "kfd_priv.h"

static LIST_HEAD(kfd_processes_list);
static DEFINE_MUTEX(kfd_processes_lock);

static struct kfd_process_device *kfd_pdd_create(struct kfd_process *p,
						 struct kfd_dev *gpu)
{
	struct kfd_process_device *pdd;

	pdd = kzalloc(sizeof(*pdd), GFP_KERNEL_ACCOUNT);
	if (!pdd)
		return NULL;
	pdd->p = p;
	pdd->gpu = gpu;
	/* amdkfd's kfd_init_apertures() skips GPUs the cgroup hides. */
	pdd->hidden = kfd_devcgroup_check_permission(gpu) != 0;
	pdd->user_gpu_id = pdd->hidden ? 0 : gpu->gpu_id;
	/* Handle ids start at 1 so a zeroed handle never names a BO. */
	idr_init_base(&pdd->bo_idr, 1);
	mutex_init(&pdd->doorbell_lock);
	/* No page table until a render-node file is bound (kfd_pdd_bind). */
	atomic_inc(&kfd_counters.pdds);
	return pdd;
}

/**
 * kfd_process_teardown_bo - unmap and free one BO
 * @bo: the BO; its handle must already be removed from the idr
 *
 * Called with the process lock held, or from the final teardown.
 */
void kfd_process_teardown_bo(struct kfd_bo *bo)
{
	struct kfd_process *p = bo->pdd->p;
	unsigned long npages = bo->size >> PAGE_SHIFT;
	unsigned int i;

	for_each_set_bit(i, &bo->mapped, KFDSIM_MAX_GPUS)
		amdgpu_amdkfd_gpuvm_unmap_memory_from_gpu(&p->pdds[i]->vm,
							  bo->va, npages);
	bo->mapped = 0;
	interval_tree_remove(&bo->va_node, &p->va_tree);
	p->nr_bos--;
	if (bo->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL)
		bo->pdd->doorbell_bo = false;

	if (bo->gem)
		amdgpu_amdkfd_gpuvm_free_memory_of_gpu(bo->gem,
						       bo->pdd->drm_file);
	kfree(bo);
	atomic_dec(&kfd_counters.bos);
}

static int kfd_pdd_free_bo(int id, void *ptr, void *data)
{
	kfd_process_teardown_bo(ptr);
	return 0;
}

static void kfd_pdd_free_bos(struct kfd_process_device *pdd)
{
	idr_for_each(&pdd->bo_idr, kfd_pdd_free_bo, NULL);
	idr_destroy(&pdd->bo_idr);
}

static void kfd_pdd_free_doorbells(struct kfd_process_device *pdd)
{
	if (!pdd->doorbells)
		return;
	__free_pages(pdd->doorbells, KFDSIM_DOORBELL_ORDER);
	pdd->doorbells = NULL;
	atomic_dec(&kfd_counters.doorbell_slices);
}

/**
 * kfd_pdd_bind - make a render-node file's GPU VM the process's VM on a GPU
 * @pdd: the process and GPU; the process lock must be held
 * @filp: the render-node file of @pdd's GPU; the reference passes to @pdd
 *        on success
 * @op: the request, for the log
 *
 * From now on the file's page table is the pdd's: the file's GEM_VA
 * mappings and CS share it with KFD, as amdgpu's drm file VM becomes the
 * KFD process VM. As amdgpu_amdkfd_gpuvm_acquire_process_vm() and
 * amdgpu_vm_make_compute() do, a file that serves another process, or whose
 * VM already had GEM_VA mappings, is refused with -EINVAL.
 *
 * Return: 0 or -EINVAL.
 */
int kfd_pdd_bind(struct kfd_process_device *pdd, struct file *filp,
		 const char *op)
{
	int ret;

	lockdep_assert_held(&pdd->p->lock);
	ret = amdgpu_amdkfd_gpuvm_acquire_process_vm(filp, pdd->p, &pdd->vm);
	if (ret == -EBUSY) {
		kfd_reject("%s: the render node file is the VM of another process\n",
			   op);
		return -EINVAL;
	}
	if (ret) {
		kfd_reject("%s: the render node file's VM already had mappings\n",
			   op);
		return -EINVAL;
	}
	pdd->drm_file = filp;
	return 0;
}

/*
 * Undo kfd_pdd_bind(). The process's own mappings are gone by now; the
 * file keeps its table and its GEM_VA mappings.
 */
static void kfd_pdd_unbind(struct kfd_process_device *pdd)
{
	if (!pdd->drm_file)
		return;
	amdgpu_amdkfd_gpuvm_release_process_vm(pdd->drm_file, pdd->p,
					       &pdd->vm);
	fput(pdd->drm_file);
	pdd->drm_file = NULL;
}

static void kfd_pdd_destroy(struct kfd_process_device *pdd)
{
	kfd_pdd_free_doorbells(pdd);
	if (pdd->mmio_page) {
		__free_page(pdd->mmio_page);
		atomic_dec(&kfd_counters.mmio_pages);
	}
	kfd_pdd_unbind(pdd);
	mutex_destroy(&pdd->doorbell_lock);
	kfree(pdd);
	atomic_dec(&kfd_counters.pdds);
}

static void kfd_process_destroy(struct kfd_process *p)
{
	unsigned int i;

	/* Queues first: they run on the memory and events freed below. */
	kfd_queues_destroy_all(p);

	/* BOs next: a BO of one GPU may be mapped into another GPU's VM. */
	for (i = 0; i < kfd_num_devices; i++)
		if (p->pdds[i])
			kfd_pdd_free_bos(p->pdds[i]);
	for (i = 0; i < kfd_num_devices; i++)
		if (p->pdds[i])
			kfd_pdd_destroy(p->pdds[i]);

	kfd_events_fini(p);
	put_pid(p->criu_pauser);
	mutex_destroy(&p->lock);
	put_task_struct(p->lead_thread);
	mmdrop(p->mm);
	kfree(p);
	atomic_dec(&kfd_counters.processes);
}

/**
 * kfd_process_reset - take a process back to its freshly opened state
 * @p: the process; its lock must be held
 *
 * Undoes a failed RESTORE, which only runs on a fresh process: destroys the
 * queues, events, BOs and VM bindings and forgets the restored gpu_ids.
 * Other threads of @p may be using what is not under the process lock
 * while this runs (WAIT_EVENTS, CREATE_EVENT, mmap of the events page or of
 * the doorbells), so nothing they can hold is re-initialised or freed: the
 * events go one by one under their table's lock (kfd_events_clear()) and
 * a doorbell slice is freed only under its doorbell_lock, when no mapping
 * has it (an mmap in progress holds that lock until its mapping counts).
 */
void kfd_process_reset(struct kfd_process *p)
{
	struct kfd_process_device *pdd;
	unsigned int i;

	lockdep_assert_held(&p->lock);
	kfd_queues_destroy_all(p);
	kfd_events_clear(p);
	for (i = 0; i < kfd_num_devices; i++) {
		kfd_pdd_free_bos(p->pdds[i]);
		idr_init_base(&p->pdds[i]->bo_idr, 1);
	}
	for (i = 0; i < kfd_num_devices; i++) {
		pdd = p->pdds[i];
		kfd_pdd_unbind(pdd);
		mutex_lock(&pdd->doorbell_lock);
		if (!atomic_read(&pdd->doorbell_maps))
			kfd_pdd_free_doorbells(pdd);
		mutex_unlock(&pdd->doorbell_lock);
		pdd->user_gpu_id = pdd->hidden ? 0 : pdd->gpu->gpu_id;
	}
	p->evict_count = 0;
	p->criu_restore_pending = false;
}

/**
 * kfd_process_evict_queues - stop every queue of a process, on all GPUs
 * @p: the process; its lock must be held
 *
 * Evictions nest: the queues run again after as many
 * kfd_process_restore_queues(). On return no queue of @p is executing and
 * none will until the matching restore, and each queue's saved state is
 * consistent (the device's evict_process_queues operation).
 *
 * Return: 0, or the device's errno with nothing evicted.
 */
int kfd_process_evict_queues(struct kfd_process *p)
{
	struct kfd_process_device *pdd;
	unsigned int i;
	int ret;

	lockdep_assert_held(&p->lock);
	if (p->evict_count++)
		return 0;
	for (i = 0; i < kfd_num_devices; i++) {
		pdd = p->pdds[i];
		ret = pdd->gpu->ops->evict_process_queues(pdd->gpu->adev, pdd);
		if (ret)
			goto err_restore;
	}
	return 0;

err_restore:
	while (i--) {
		pdd = p->pdds[i];
		WARN_ON(pdd->gpu->ops->restore_process_queues(pdd->gpu->adev,
							      pdd));
	}
	p->evict_count--;
	return ret;
}

/**
 * kfd_process_restore_queues - undo one kfd_process_evict_queues()
 * @p: the process; its lock must be held
 */
void kfd_process_restore_queues(struct kfd_process *p)
{
	struct kfd_process_device *pdd;
	unsigned int i;

	lockdep_assert_held(&p->lock);
	if (WARN_ON(!p->evict_count) || --p->evict_count)
		return;
	for (i = 0; i < kfd_num_devices; i++) {
		pdd = p->pdds[i];
		WARN_ON(pdd->gpu->ops->restore_process_queues(pdd->gpu->adev,
							      pdd));
	}
}

void kfd_process_put(struct kfd_process *p)
{
	/* Unlink under the list lock so no lookup can revive @p. */
	if (!refcount_dec_and_mutex_lock(&p->ref.refcount,
					 &kfd_processes_lock))
		return;
	list_del(&p->node);
	mutex_unlock(&kfd_processes_lock);
	kfd_process_destroy(p);
}

static struct kfd_process *kfd_process_create(void)
{
	struct kfd_process *p;
	unsigned int i;
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return ERR_PTR(-ENOMEM);
	kref_init(&p->ref);
	mutex_init(&p->lock);
	p->va_tree = RB_ROOT_CACHED;
	idr_init(&p->queues);
	ret = kfd_events_init(p);
	if (ret) {
		mutex_destroy(&p->lock);
		kfree(p);
		return ERR_PTR(ret);
	}
	for (i = 0; i < kfd_num_devices; i++) {
		p->pdds[i] = kfd_pdd_create(p, kfd_devices[i]);
		if (!p->pdds[i])
			goto err_pdds;
	}
	p->mm = current->mm;
	mmgrab(p->mm);
	p->lead_thread = current->group_leader;
	get_task_struct(p->lead_thread);
	atomic_inc(&kfd_counters.processes);
	return p;

err_pdds:
	while (i--)
		kfd_pdd_destroy(p->pdds[i]);
	kfd_events_fini(p);
	mutex_destroy(&p->lock);
	kfree(p);
	return ERR_PTR(-ENOMEM);
}

/*
 * The process with address space @mm, or (when @mm is NULL) with thread
 * group @tgid, with a reference taken; the list lock must be held.
 */
static struct kfd_process *kfd_process_lookup(struct mm_struct *mm,
					      pid_t tgid)
{
	struct kfd_process *p;

	lockdep_assert_held(&kfd_processes_lock);
	list_for_each_entry(p, &kfd_processes_list, node) {
		if (mm ? p->mm == mm : task_tgid_nr(p->lead_thread) == tgid) {
			kref_get(&p->ref);
			return p;
		}
	}
	return NULL;
}

/**
 * kfd_process_get_current - the KFD state of the calling process
 *
 * Looks the state up by the caller's mm, creating it on first use.
 * Return: a referenced process, or an ERR_PTR.
 */
struct kfd_process *kfd_process_get_current(void)
{
	struct kfd_process *p;

	if (!current->mm)
		return ERR_PTR(-EINVAL);

	mutex_lock(&kfd_processes_lock);
	p = kfd_process_lookup(current->mm, 0);
	if (!p) {
		p = kfd_process_create();
		if (!IS_ERR(p))
			list_add(&p->node, &kfd_processes_list);
	}
	mutex_unlock(&kfd_processes_lock);
	return p;
}

/**
 * kfd_process_find_pid - the KFD state of the process with thread group @tgid
 * @tgid: a pid in the initial pid namespace
 *
 * Return: a referenced process, or NULL.
 */
struct kfd_process *kfd_process_find_pid(pid_t tgid)
{
	struct kfd_process *p;

	mutex_lock(&kfd_processes_lock);
	p = kfd_process_lookup(NULL, tgid);
	mutex_unlock(&kfd_processes_lock);
	return p;
}

/**
 * kfd_process_find_mm - the KFD state of the address space @mm
 * @mm: an address space
 *
 * Return: a referenced process, or NULL.
 */
struct kfd_process *kfd_process_find_mm(struct mm_struct *mm)
{
	struct kfd_process *p;

	mutex_lock(&kfd_processes_lock);
	p = kfd_process_lookup(mm, 0);
	mutex_unlock(&kfd_processes_lock);
	return p;
}

/**
 * kfd_process_pdd_by_id - the process's state on the GPU it calls @gpu_id
 * @p: the process
 * @gpu_id: a gpu_id as the process knows it
 *
 * A restored process keeps the gpu_ids of the node it was checkpointed on;
 * each pdd records the id its process uses, and every gpu_id that crosses
 * the uAPI is translated here (and back with pdd->user_gpu_id).
 *
 * Return: the pdd, or NULL if the process has no GPU of that id.
 */
struct kfd_process_device *kfd_process_pdd_by_id(struct kfd_process *p,
						 u32 gpu_id)
{
	unsigned int i;

	if (!gpu_id)
		return NULL;
	for (i = 0; i < kfd_num_devices; i++)
		if (p->pdds[i]->user_gpu_id == gpu_id)
			return p->pdds[i];
	return NULL;
}

/**
 * kfd_process_doorbells - allocate the doorbell slice of @pdd if needed
 * @pdd: process-device data
 *
 * Called from mmap (under mmap_lock) as well as from ioctls (under the
 * process lock), so it takes no lock itself: racing callers agree through
 * cmpxchg and the loser frees its pages.
 *
 * Return: 0 or -ENOMEM.
 */
int kfd_process_doorbells(struct kfd_process_device *pdd)
{
	struct page *page;

	if (READ_ONCE(pdd->doorbells))
		return 0;
	page = alloc_pages(GFP_KERNEL_ACCOUNT | __GFP_ZERO,
			   KFDSIM_DOORBELL_ORDER);
	if (!page)
		return -ENOMEM;
	if (cmpxchg(&pdd->doorbells, NULL, page)) {
		__free_pages(page, KFDSIM_DOORBELL_ORDER);
		return 0;
	}
	atomic_inc(&kfd_counters.doorbell_slices);
	return 0;
}

/**
 * kfd_process_mmio_page - allocate the MMIO remap page of @pdd if needed
 * @pdd: process-device data
 *
 * Upstream maps the GPU's HDP flush register page; the simulated GPU's
 * memory is always coherent, so a zeroed page per process and GPU stands in
 * for it (writes to it flush nothing because nothing needs flushing). A
 * page of its own per process keeps processes from seeing each other's
 * writes. It lives as long as the pdd, so CPU and GPU mappings of it stay
 * valid after the BO that named it is freed. Called from mmap (under
 * mmap_lock) as well as from ioctls (under the process lock), so it takes
 * no lock itself: racing callers agree through cmpxchg.
 *
 * Return: 0 or -ENOMEM.
 */
int kfd_process_mmio_page(struct kfd_process_device *pdd)
{
	struct page *page;

	if (READ_ONCE(pdd->mmio_page))
		return 0;
	page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!page)
		return -ENOMEM;
	if (cmpxchg(&pdd->mmio_page, NULL, page)) {
		__free_page(page);
		return 0;
	}
	atomic_inc(&kfd_counters.mmio_pages);
	return 0;
}
