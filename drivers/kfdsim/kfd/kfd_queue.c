// SPDX-License-Identifier: GPL-2.0
/*
 * Queue ioctls: CREATE_QUEUE, DESTROY_QUEUE, UPDATE_QUEUE.
 *
 * A queue is created only once everything it will touch is known to be
 * GPU-mapped (ring, read and write pointers), so it cannot fault at birth.
 * Queue ids are process-wide, doorbell slots are per process and GPU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kfd_ioctl.h>
#include <linux/kfdsim.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kfd_priv.h"

/*
 * The context save area sizes amdkfd gives a gfx9 node (6.12:
 * kfd_queue_ctx_save_restore_size(); libhsakmt makes the same sums in
 * update_ctx_save_restore_size()): per CU VGPRs, SGPRs, LDS and hardware
 * registers; a control stack of 8 bytes per wave plus 8 after the 40-byte
 * HsaUserContextSaveAreaHeader, page-aligned.
 */
#define KFD_CWSR_BYTES_PER_CU		(0x40000 + 0x4000 + 0x10000 + 0x1000)
#define KFD_CWSR_STACK_PER_WAVE		8
#define KFD_CWSR_HEADER			40

/* Upstream's per-process queue id space. */
#define KFD_MAX_QUEUES_PER_PROCESS	1024
#define KFD_MAX_RING_SIZE		SZ_1G

static bool kfd_queue_is_sdma(u32 type)
{
	return type == KFD_IOC_QUEUE_TYPE_SDMA ||
	       type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI;
}

/* The CP invalidates consumed AQL packets, so an AQL ring must be writable. */
static int kfd_queue_check_ring(struct kfd_process_device *pdd, u64 ring_va,
				u32 ring_size, const char *op, bool check_mapped,
				bool writable)
{
	if (!ring_va || ring_size < KFD_MIN_QUEUE_RING_SIZE ||
	    ring_size > KFD_MAX_RING_SIZE || !is_power_of_2(ring_size)) {
		kfd_reject("%s: ring 0x%llx size %u (want a power of two >= %u)\n",
			   op, ring_va, ring_size, KFD_MIN_QUEUE_RING_SIZE);
		return -EINVAL;
	}
	if (!IS_ALIGNED(ring_va, KFDSIM_AQL_PACKET_SIZE) ||
	    (check_mapped &&
	     !amdgpu_amdkfd_gpuvm_is_mapped(&pdd->vm, ring_va, ring_size, writable))) {
		kfd_reject("%s: ring 0x%llx size %u not aligned or not GPU-mapped on gpu %u\n",
			   op, ring_va, ring_size, pdd->user_gpu_id);
		return -EINVAL;
	}
	return 0;
}

static void kfd_queue_cwsr_sizes(struct kfd_process_device *pdd,
				 u32 *ctl_stack, u32 *total)
{
	const struct kfdsim_asic *a =
		amdgpu_amdkfd_get_asic_info(pdd->gpu->adev);
	u32 cus = a->simd_count / a->simd_per_cu;
	u32 waves = min(cus * 40,
			a->array_count / a->simd_arrays_per_engine * 512);

	*ctl_stack = PAGE_ALIGN(KFD_CWSR_HEADER +
				waves * KFD_CWSR_STACK_PER_WAVE + 8);
	*total = *ctl_stack + PAGE_ALIGN(cus * KFD_CWSR_BYTES_PER_CU);
}

/*
 * amdkfd 6.12 (kfd_queue_acquire_buffers()) refuses a compute queue whose
 * control stack size is not the node's or whose save area is smaller than
 * the node's; 5.x kernels check neither. A queue without a save area is
 * accepted as 5.x kernels accept it (6.12 refuses it): its waves are never
 * saved to user memory.
 */
static int kfd_queue_check_cwsr(struct kfd_process_device *pdd,
				const struct kfd_ioctl_create_queue_args *args)
{
	u32 ctl_stack, total;

	if (args->queue_type != KFD_IOC_QUEUE_TYPE_COMPUTE_AQL ||
	    !args->ctx_save_restore_address)
		return 0;
	kfd_queue_cwsr_sizes(pdd, &ctl_stack, &total);
	if (args->ctl_stack_size != ctl_stack ||
	    args->ctx_save_restore_size < total) {
		kfd_reject("CREATE_QUEUE: save area 0x%x, ctl stack 0x%x (gpu %u: 0x%x, 0x%x)\n",
			   args->ctx_save_restore_size, args->ctl_stack_size,
			   pdd->user_gpu_id, total, ctl_stack);
		return -EINVAL;
	}
	return 0;
}

static int kfd_queue_check_args(struct kfd_process_device *pdd,
				struct kfd_ioctl_create_queue_args *args,
				bool check_mapped)
{
	u32 type = args->queue_type;
	int ret;

	if (type == KFD_IOC_QUEUE_TYPE_COMPUTE) {
		kfd_reject("CREATE_QUEUE: PM4 compute queues are not simulated\n");
		return -EOPNOTSUPP;
	}
	if (type != KFD_IOC_QUEUE_TYPE_COMPUTE_AQL && !kfd_queue_is_sdma(type)) {
		kfd_reject("CREATE_QUEUE: unknown queue type %u\n", type);
		return -EINVAL;
	}
	if (args->queue_percentage > KFD_MAX_QUEUE_PERCENTAGE ||
	    args->queue_priority > KFD_MAX_QUEUE_PRIORITY) {
		kfd_reject("CREATE_QUEUE: percentage %u or priority %u out of range\n",
			   args->queue_percentage, args->queue_priority);
		return -EINVAL;
	}
	ret = kfd_queue_check_ring(pdd, args->ring_base_address,
				   args->ring_size, "CREATE_QUEUE", check_mapped,
				   type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL);
	if (ret)
		return ret;
	if (!IS_ALIGNED(args->read_pointer_address, sizeof(u64)) ||
	    !IS_ALIGNED(args->write_pointer_address, sizeof(u64)) ||
	    (check_mapped &&
	     (!amdgpu_amdkfd_gpuvm_is_mapped(&pdd->vm, args->read_pointer_address,
				   sizeof(u64), true) ||
	      !amdgpu_amdkfd_gpuvm_is_mapped(&pdd->vm, args->write_pointer_address,
				   sizeof(u64), false)))) {
		kfd_reject("CREATE_QUEUE: rptr 0x%llx / wptr 0x%llx unaligned or unmapped\n",
			   args->read_pointer_address,
			   args->write_pointer_address);
		return -EINVAL;
	}
	return kfd_queue_check_cwsr(pdd, args);
}

/* Reserve a hardware slot of the queue's kind; upstream's errno is -ENOMEM. */
static int kfd_queue_take_slot(struct kfd_process_device *pdd, u32 type)
{
	const struct kfdsim_asic *asic =
		amdgpu_amdkfd_get_asic_info(pdd->gpu->adev);

	if (kfd_queue_is_sdma(type)) {
		if (pdd->nr_sdma >= asic->num_sdma_engines *
				    asic->num_sdma_queues_per_engine)
			return -ENOMEM;
		pdd->nr_sdma++;
	} else {
		if (pdd->nr_aql >= asic->num_cp_queues)
			return -ENOMEM;
		pdd->nr_aql++;
	}
	return 0;
}

static void kfd_queue_put_slot(struct kfd_process_device *pdd, u32 type)
{
	if (kfd_queue_is_sdma(type))
		pdd->nr_sdma--;
	else
		pdd->nr_aql--;
}

/**
 * kfd_queue_create - create a queue (the core of CREATE_QUEUE and RESTORE)
 * @pdd: the process and GPU; the process lock must be held
 * @args: the CREATE_QUEUE arguments (queue_id and doorbell_offset are set
 *        on success)
 * @id: the queue id to use, or -1 for the lowest free one
 * @slot: the doorbell slot to use, or -1 for the lowest free one
 * @check_mapped: check that ring and pointers are GPU-mapped now (a restore
 *                checks against the mappings it is about to restore)
 *
 * The queue starts evicted if its process is. Return: 0 or an errno, with
 * nothing left behind.
 */
int kfd_queue_create(struct kfd_process_device *pdd,
		     struct kfd_ioctl_create_queue_args *args, int id,
		     int slot, bool check_mapped)
{
	struct kfd_process *p = pdd->p;
	struct kfd_queue *q;
	u64 *slice;
	int ret;

	lockdep_assert_held(&p->lock);
	if (!pdd->drm_file) {
		kfd_reject("CREATE_QUEUE: gpu_id %u has no VM\n", args->gpu_id);
		return -ESRCH;
	}
	ret = kfd_queue_check_args(pdd, args, check_mapped);
	if (ret)
		return ret;
	if (slot >= (int)KFDSIM_DOORBELLS_PER_SLICE)
		return -EINVAL;
	if (slot < 0)
		slot = find_first_zero_bit(pdd->doorbell_used,
					   KFDSIM_DOORBELLS_PER_SLICE);
	if (slot >= KFDSIM_DOORBELLS_PER_SLICE ||
	    test_bit(slot, pdd->doorbell_used)) {
		kfd_reject("CREATE_QUEUE: doorbell slot %d taken\n", slot);
		return slot >= KFDSIM_DOORBELLS_PER_SLICE ? -ENOMEM : -EINVAL;
	}
	ret = kfd_process_doorbells(pdd);
	if (ret)
		return ret;
	ret = kfd_queue_take_slot(pdd, args->queue_type);
	if (ret) {
		kfd_reject("CREATE_QUEUE: gpu %u has no free queue of type %u\n",
			   args->gpu_id, args->queue_type);
		return ret;
	}

	q = kfd_criu_should_fail() ? NULL :
	    kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q) {
		ret = -ENOMEM;
		goto err_slot;
	}
	if (kfd_criu_should_fail())
		ret = -ENOMEM;
	else if (id < 0)
		ret = idr_alloc(&p->queues, q, 0, KFD_MAX_QUEUES_PER_PROCESS,
				GFP_KERNEL);
	else
		ret = idr_alloc(&p->queues, q, id, id + 1, GFP_KERNEL);
	if (ret < 0) {
		ret = ret == -ENOSPC ? (id < 0 ? -ENOMEM : -EINVAL) : ret;
		goto err_free;
	}

	q->pdd = pdd;
	q->id = ret;
	q->type = args->queue_type;
	q->ring_va = args->ring_base_address;
	q->ring_size = args->ring_size;
	q->rptr_va = args->read_pointer_address;
	q->wptr_va = args->write_pointer_address;
	q->doorbell = slot;
	q->percentage = args->queue_percentage;
	q->priority = args->queue_priority;
	q->eop_va = args->eop_buffer_address;
	q->eop_size = args->eop_buffer_size;
	q->ctx_save_va = args->ctx_save_restore_address;
	q->ctx_save_size = args->ctx_save_restore_size;
	q->ctl_stack_size = args->ctl_stack_size;
	if (q->type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL && q->ctx_save_va) {
		/* As init_mqd() sets up cp_hqd_cntl_stack_* for CWSR. */
		q->cwsr.cntl_stack = kfd_criu_should_fail() ? NULL :
			kvzalloc(q->ctl_stack_size, GFP_KERNEL_ACCOUNT);
		if (!q->cwsr.cntl_stack) {
			ret = -ENOMEM;
			goto err_idr;
		}
		q->cwsr.save_va = q->ctx_save_va;
		q->cwsr.save_size = q->ctx_save_size;
		q->cwsr.cntl_stack_size = q->ctl_stack_size;
		q->cwsr.cntl_stack_offset = q->ctl_stack_size;
		q->cwsr.wg_state_offset = q->ctl_stack_size;
	}
	__set_bit(slot, pdd->doorbell_used);

	/* A stale value from an earlier queue in this slot means nothing. */
	slice = page_address(pdd->doorbells);
	WRITE_ONCE(slice[slot], 0);
	ret = pdd->gpu->ops->create_queue(pdd->gpu->adev, q,
					  p->evict_count > 0);
	if (ret)
		goto err_remove;
	atomic_inc(&kfd_counters.queues);

	args->queue_id = q->id;
	/* The device's own gpu_id, not the caller's: see kfd_mmap_offset(). */
	args->doorbell_offset = kfd_mmap_offset(KFD_MMAP_TYPE_DOORBELL, pdd) |
				(u64)slot * sizeof(u64);
	return 0;

err_remove:
	__clear_bit(slot, pdd->doorbell_used);
	kvfree(q->cwsr.cntl_stack);
err_idr:
	idr_remove(&p->queues, q->id);
err_free:
	kfree(q);
err_slot:
	kfd_queue_put_slot(pdd, args->queue_type);
	return ret;
}

int kfd_ioctl_create_queue(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_create_queue_args *args = data;
	struct kfd_process_device *pdd;
	int ret;

	pdd = kfd_process_pdd_by_id(p, args->gpu_id);
	if (!pdd) {
		kfd_reject("CREATE_QUEUE: no GPU with gpu_id %u\n", args->gpu_id);
		return -EINVAL;
	}
	mutex_lock(&p->lock);
	ret = kfd_queue_create(pdd, args, -1, -1, true);
	mutex_unlock(&p->lock);
	return ret;
}

static void kfd_queue_destroy(struct kfd_process *p, struct kfd_queue *q)
{
	q->pdd->gpu->ops->destroy_queue(q->pdd->gpu->adev, q);
	idr_remove(&p->queues, q->id);
	__clear_bit(q->doorbell, q->pdd->doorbell_used);
	kfd_queue_put_slot(q->pdd, q->type);
	kvfree(q->cwsr.cntl_stack);
	kfree(q);
	atomic_dec(&kfd_counters.queues);
}

int kfd_ioctl_destroy_queue(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_destroy_queue_args *args = data;
	struct kfd_queue *q;
	int ret = 0;

	if (args->pad)
		return -EINVAL;
	mutex_lock(&p->lock);
	q = idr_find(&p->queues, args->queue_id);
	if (q) {
		kfd_queue_destroy(p, q);
	} else {
		kfd_reject("DESTROY_QUEUE: no queue %u\n", args->queue_id);
		ret = -EINVAL;
	}
	mutex_unlock(&p->lock);
	return ret;
}

/* Process teardown: stop and free every queue before memory goes away. */
void kfd_queues_destroy_all(struct kfd_process *p)
{
	struct kfd_queue *q;
	int id;

	idr_for_each_entry(&p->queues, q, id)
		kfd_queue_destroy(p, q);
	idr_destroy(&p->queues);
}

/*
 * The control stack of an inactive queue, as amdkfd's get_wave_state()
 * (6.x, kfd_mqd_manager_v9.c) gives it: the four offset/size words of the
 * save area header at @ctl_stack_address, the control stack in use at its
 * own offset from there. Unknown queue: -EFAULT (pqm_get_wave_state());
 * SDMA or active queue, or a nonzero pad (this driver's rule): -EINVAL.
 */
int kfd_ioctl_get_queue_wave_state(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_get_queue_wave_state_args *args = data;
	void __user *dst = u64_to_user_ptr(args->ctl_stack_address);
	struct kfdsim_cwsr snap = {};
	struct kfd_queue *q;
	u32 header[4], used;
	void *stack = NULL;
	int ret = 0;

	if (args->pad) {
		kfd_reject("GET_QUEUE_WAVE_STATE: pad 0x%x\n", args->pad);
		return -EINVAL;
	}
	mutex_lock(&p->lock);
	q = idr_find(&p->queues, args->queue_id);
	if (!q) {
		kfd_reject("GET_QUEUE_WAVE_STATE: no queue %u\n",
			   args->queue_id);
		ret = -EFAULT;
		goto out_unlock;
	}
	if (q->type != KFD_IOC_QUEUE_TYPE_COMPUTE_AQL ||
	    (q->percentage && !q->evicted)) {
		kfd_reject("GET_QUEUE_WAVE_STATE: queue %u is not an inactive compute queue\n",
			   args->queue_id);
		ret = -EINVAL;
		goto out_unlock;
	}
	if (q->cwsr.cntl_stack) {
		stack = kvzalloc(q->cwsr.cntl_stack_size, GFP_KERNEL);
		if (!stack) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		ret = q->pdd->gpu->ops->get_wave_state(q->pdd->gpu->adev, q,
						       &snap, stack,
						       q->cwsr.cntl_stack_size);
	}
out_unlock:
	mutex_unlock(&p->lock);
	if (ret) {
		kvfree(stack);
		return ret;
	}

	used = snap.cntl_stack_size - snap.cntl_stack_offset;
	header[0] = snap.cntl_stack_offset;
	header[1] = used;
	header[2] = snap.wg_state_offset;
	header[3] = snap.wg_state_offset - snap.cntl_stack_size;
	if (copy_to_user(dst, header, sizeof(header)) ||
	    (used && copy_to_user(dst + snap.cntl_stack_offset, stack,
				  used))) {
		kfd_reject("GET_QUEUE_WAVE_STATE: cannot write to 0x%llx\n",
			   args->ctl_stack_address);
		ret = -EFAULT;
	}
	kvfree(stack);
	if (!ret) {
		args->ctl_stack_used_size = used;
		args->save_area_used_size = header[3];
	}
	return ret;
}

int kfd_ioctl_update_queue(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_update_queue_args *args = data;
	struct kfd_queue *q;
	int ret;

	if (args->queue_percentage > KFD_MAX_QUEUE_PERCENTAGE ||
	    args->queue_priority > KFD_MAX_QUEUE_PRIORITY) {
		kfd_reject("UPDATE_QUEUE: percentage %u or priority %u out of range\n",
			   args->queue_percentage, args->queue_priority);
		return -EINVAL;
	}

	mutex_lock(&p->lock);
	q = idr_find(&p->queues, args->queue_id);
	if (!q) {
		kfd_reject("UPDATE_QUEUE: no queue %u\n", args->queue_id);
		ret = -EINVAL;
		goto out_unlock;
	}
	ret = kfd_queue_check_ring(q->pdd, args->ring_base_address,
				   args->ring_size, "UPDATE_QUEUE", true,
				   q->type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL);
	if (ret)
		goto out_unlock;

	q->pdd->gpu->ops->update_queue(q->pdd->gpu->adev, q, args);
out_unlock:
	mutex_unlock(&p->lock);
	return ret;
}
