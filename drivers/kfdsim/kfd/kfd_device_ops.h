/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsim: the operations the KFD layer calls on a device.
 *
 * The seam between the KFD layer (kfd_*.c: uAPI, process state, CRIU) and
 * the device model (kfdsim_*.c: the simulated GPU). Each GPU's struct
 * kfdsim_gpu points to a struct kfd_device_ops; the CRIU core reaches the
 * device only through it. The operations are named after what amdkfd's
 * device queue manager (struct device_queue_manager_ops), its MQD managers
 * and amdgpu's KFD interface (amdgpu_amdkfd_*) call the same step, so that
 * a port to amdkfd maps one to the other; see
 * Documentation/architecture.rst.
 *
 * The types below the forward declarations are device state that KFD
 * objects embed by value: their layout belongs to the device model, the
 * KFD layer stores them and hands them back without looking inside, except
 * that the CRIU private data (kfd_criu.h) records the fields of a queue's
 * saved state one by one.
 */
#ifndef KFD_DEVICE_OPS_H
#define KFD_DEVICE_OPS_H

#include <linux/bits.h>
#include <linux/types.h>

struct dma_buf;
struct kfdsim_gem;
struct kfdsim_gpu;
struct kfdsim_page_table;
struct kfd_process_device;
struct kfd_queue;

/* ---- device state embedded in KFD objects ---- */

/**
 * struct kfdsim_vm - a GPU address space: the page table it resolves through
 * @pt: a render-node file's own table, which a KFD process's pdd shares
 *      once the file is bound (NULL before: nothing is mapped)
 *
 * The command processor translates every GPU virtual address through this
 * table and nothing else.
 */
struct kfdsim_vm {
	struct kfdsim_page_table *pt;
};

/**
 * struct kfdsim_dispatch_progress - how far an in-flight dispatch got
 * @iteration: the loop kernel's current step (0 for other kernels)
 * @next_wg: the next workgroup to run (within @iteration); for the chunk
 *           sums kernel, which may stop inside a workgroup, the next
 *           work-item
 *
 * Zero means "not started". Part of the saved queue state.
 */
struct kfdsim_dispatch_progress {
	u32 iteration;
	u32 next_wg;
};

/* The queue stopped on a GPU page fault or a packet it cannot execute. */
#define KFDSIM_QSTATE_ERROR	BIT(0)

/**
 * struct kfdsim_queue_state - the saved state of a queue
 * @rptr: AQL: index of the next packet to run; SDMA: byte offset of the
 *        next packet (both count up, the ring position is modulo its size)
 * @progress: how far the AQL dispatch at @rptr got, zero if not started
 * @flags: KFDSIM_QSTATE_*
 * @pad: zero
 *
 * The simulator's equivalent of an MQD plus control stack: together with the
 * queue's creation parameters and the process's memory it is everything
 * needed to continue the queue, on this GPU or another.
 */
struct kfdsim_queue_state {
	u64 rptr;
	struct kfdsim_dispatch_progress progress;
	u32 flags;
	u32 pad;
};

/* ---- the operations ---- */

/**
 * struct kfd_device_ops - what the KFD layer asks of a device
 * @evict_process_queues: stop every queue of @pdd's process on @dev. On
 *	return none of them is executing, none will until
 *	@restore_process_queues, and each one's saved state is consistent.
 *	Called with the process lock held, by kfd_process_evict_queues(),
 *	which counts nested evictions. Returns 0 or an errno.
 * @restore_process_queues: let the queues of @pdd's process on @dev run
 *	again, from where they stopped. Called with the process lock held.
 * @checkpoint_mqd: copy out the saved state of @q (its MQD and control
 *	stack). The queue's process must be evicted. Returns 0 or an errno.
 * @restore_mqd: replace the saved state of a newly created @q with @mqd,
 *	which comes from a checkpoint and is untrusted: the device validates
 *	it. The queue's process must be evicted. Returns 0, or -EINVAL for a
 *	state the device cannot continue from.
 * @export_dmabuf: export the memory @mem of a BO on @dev as a dma-buf
 *	opened with @flags (O_RDWR, O_CLOEXEC); the dma-buf holds its own
 *	reference. Returns the dma-buf or an ERR_PTR.
 */
struct kfd_device_ops {
	int (*evict_process_queues)(struct kfdsim_gpu *dev,
				    struct kfd_process_device *pdd);
	int (*restore_process_queues)(struct kfdsim_gpu *dev,
				      struct kfd_process_device *pdd);
	int (*checkpoint_mqd)(struct kfdsim_gpu *dev,
			      const struct kfd_queue *q,
			      struct kfdsim_queue_state *mqd);
	int (*restore_mqd)(struct kfdsim_gpu *dev, struct kfd_queue *q,
			   const struct kfdsim_queue_state *mqd);
	struct dma_buf *(*export_dmabuf)(struct kfdsim_gpu *dev,
					 struct kfdsim_gem *mem, int flags);
};

#endif /* KFD_DEVICE_OPS_H */
