/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsim: the seam between the KFD layer and the device, KFD side.
 *
 * The KFD layer (kfd/: uAPI, process state, CRIU) reaches a device through
 * two things only, as amdkfd reaches the hardware: the queue operations
 * below (struct kfd_device_ops, shaped like amdkfd's struct
 * device_queue_manager_ops and its MQD managers), and the amdgpu_amdkfd_*
 * calls of amdgpu_amdkfd.h (memory, GPU VM, render nodes, device facts),
 * which the device model implements in one file, sim/amdgpu_amdkfd.c. The
 * device calls up only through kgd2kfd.h. See
 * Documentation/architecture.rst.
 *
 * The types below the forward declarations are device state that KFD
 * objects embed by value, and facts the device reports: their layout
 * belongs to the device model, the KFD layer stores them and hands them
 * back without looking inside, except that the CRIU private data
 * (kfd_criu.h) records the fields of a queue's saved state one by one and
 * the topology and the queue limits read the ASIC facts.
 */
#ifndef KFD_DEVICE_OPS_H
#define KFD_DEVICE_OPS_H

#include <linux/bits.h>
#include <linux/types.h>

/* The most GPUs one module load simulates. */
#define KFDSIM_MAX_GPUS		8

struct dma_buf;
struct kfdsim_gem;
struct kfdsim_gpu;
struct kfdsim_page_table;
struct kfd_ioctl_update_queue_args;
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

/**
 * struct kfdsim_cwsr - the context save state of a compute queue (MQD part)
 * @save_va: GPU VA of the queue's context save area (cp_hqd_ctx_save_base)
 * @save_size: its size in bytes (cp_hqd_ctx_save_size)
 * @cntl_stack_size: bytes of control stack (cp_hqd_cntl_stack_size); the
 *                   saved waves start at this offset of the save area
 * @cntl_stack_offset: the control stack's top (cp_hqd_cntl_stack_offset);
 *                     it holds [@cntl_stack_offset, @cntl_stack_size), so
 *                     @cntl_stack_offset == @cntl_stack_size means empty
 * @wg_state_offset: end of the saved waves in the save area
 *                   (cp_hqd_wg_state_offset)
 * @cntl_stack: @cntl_stack_size bytes of kernel memory, as amdkfd keeps
 *              the control stack in the page after the MQD; NULL for a
 *              queue without a save area
 *
 * Documentation/gfx9-engine.rst, "Context save and restore (CWSR)". Owned
 * by the CP (its lock) once the queue exists.
 */
struct kfdsim_cwsr {
	u64 save_va;
	u32 save_size;
	u32 cntl_stack_size;
	u32 cntl_stack_offset;
	u32 wg_state_offset;
	u32 *cntl_stack;
};

/**
 * struct kfdsim_fault - a GPU page fault
 * @va: the faulting GPU virtual address
 * @write: the access was a write
 * @read_only: the page is mapped, but read-only
 */
struct kfdsim_fault {
	u64 va;
	bool write;
	bool read_only;
};

/* ---- facts the device reports (amdgpu_amdkfd_get_asic_info()) ---- */

/**
 * struct kfdsim_asic - static properties of the simulated ASIC
 *
 * Everything the KFD topology reports about a GPU node that does not depend
 * on the module parameters. The command processor sizes itself from these.
 */
struct kfdsim_asic {
	const char *name;		/* topology "name", e.g. "gfx906" */
	u32 device_id;			/* PCI device id */
	u32 gfx_target_version;		/* e.g. 90006 for gfx906 */
	u32 simd_count;
	u32 array_count;
	u32 simd_arrays_per_engine;
	u32 cu_per_simd_array;
	u32 simd_per_cu;
	u32 max_waves_per_simd;
	u32 wave_front_size;
	u32 lds_size_in_kb;
	u32 gds_size_in_kb;
	u32 num_gws;
	u32 max_slots_scratch_cu;
	u32 num_sdma_engines;
	u32 num_sdma_xgmi_engines;
	u32 num_sdma_queues_per_engine;
	u32 num_cp_queues;
	u32 max_engine_clk_fcompute;	/* MHz */
	u32 max_engine_clk_ccompute;	/* MHz */
	u32 fw_version;
	u32 sdma_fw_version;
	u32 capability;
	u32 vram_width;			/* bits */
	u32 mem_clk_max;		/* MHz */
	u32 gb_addr_config;		/* GB_ADDR_CONFIG as amdgpu programs it */
	u32 num_caches;			/* entries in @caches */
	const struct kfdsim_cache *caches;
};

/**
 * struct kfdsim_cache - one cache level reported under nodes/N/caches/
 */
struct kfdsim_cache {
	u32 level;
	u32 size_kb;
	u32 line_size;
	u32 lines_per_tag;
	u32 associativity;
	u32 latency;
	u32 type;			/* HSA cache type bits */
	u32 cus_per_cache;		/* CUs sharing one instance */
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
 *	and its control stack and save area offsets with @cwsr (its
 *	cntl_stack points at the control stack in use; NULL @cwsr: nothing
 *	saved), which come from a checkpoint and are untrusted: the device
 *	validates them. The queue's process must be evicted. Returns 0, or
 *	-EINVAL for a state the device cannot continue from.
 * @create_queue: start running the new queue @q on @dev; @evicted says
 *	whether its process's queues are evicted, and then it waits for
 *	@restore_process_queues. Called with the process lock held, once @q
 *	is complete. Returns 0 or an errno.
 * @destroy_queue: stop @q on @dev; on return the device no longer runs or
 *	reads it, and it may be freed. Called with the process lock held.
 * @update_queue: give @q the ring, percentage and priority of @args, which
 *	the KFD layer checked. Called with the process lock held.
 * @get_wave_state: copy the context save state of @q, whose process is
 *	evicted or which is inactive: its offsets into @cwsr (cntl_stack
 *	left NULL) and the control stack in use to the start of @stack,
 *	which holds @max bytes. Called with the process lock held. Returns
 *	0, or -ENOSPC if the control stack in use is larger than @max.
 * @export_dmabuf: export the memory @mem of a BO on @dev as a dma-buf
 *	opened with @flags (O_RDWR, O_CLOEXEC); the dma-buf holds its own
 *	reference. Returns the dma-buf or an ERR_PTR.
 */
struct kfd_device_ops {
	int (*create_queue)(struct kfdsim_gpu *dev, struct kfd_queue *q,
			    bool evicted);
	void (*destroy_queue)(struct kfdsim_gpu *dev, struct kfd_queue *q);
	void (*update_queue)(struct kfdsim_gpu *dev, struct kfd_queue *q,
			     const struct kfd_ioctl_update_queue_args *args);
	int (*evict_process_queues)(struct kfdsim_gpu *dev,
				    struct kfd_process_device *pdd);
	int (*restore_process_queues)(struct kfdsim_gpu *dev,
				      struct kfd_process_device *pdd);
	int (*checkpoint_mqd)(struct kfdsim_gpu *dev,
			      const struct kfd_queue *q,
			      struct kfdsim_queue_state *mqd);
	int (*restore_mqd)(struct kfdsim_gpu *dev, struct kfd_queue *q,
			   const struct kfdsim_queue_state *mqd,
			   const struct kfdsim_cwsr *cwsr);
	int (*get_wave_state)(struct kfdsim_gpu *dev, struct kfd_queue *q,
			      struct kfdsim_cwsr *cwsr, void *stack, u32 max);
	struct dma_buf *(*export_dmabuf)(struct kfdsim_gpu *dev,
					 struct kfdsim_gem *mem, int flags);
};

#endif /* KFD_DEVICE_OPS_H */
