/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsim: the KFD layer's own declarations.
 *
 * What the kfd_*.c files (the uAPI, per-process state, memory, queues,
 * events, CRIU and topology) share: the KFD objects (process, per-GPU
 * process state, BO, queue), the KFD view of a GPU and the functions of
 * the KFD layer. The device is reached only through the seam headers of
 * drivers/kfdsim/include/: its queue operations (kfd_device_ops.h) and the
 * amdgpu_amdkfd_* calls (amdgpu_amdkfd.h); no KFD-layer file includes a
 * device-model header. See Documentation/architecture.rst.
 */
#ifndef KFD_PRIV_H
#define KFD_PRIV_H

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/idr.h>
#include <linux/interval_tree.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <drm/drm_device.h>
#include <linux/kfd_ioctl.h>

#include "amdgpu_amdkfd.h"
#include "kfd_device_ops.h"
#include "kfd_events.h"

/* One doorbell slice per process and GPU: two pages of 64-bit doorbells. */
#define KFDSIM_DOORBELL_SLICE_SIZE	(2 * PAGE_SIZE)
#define KFDSIM_DOORBELL_ORDER		1
#define KFDSIM_DOORBELLS_PER_SLICE	(KFDSIM_DOORBELL_SLICE_SIZE / sizeof(u64))

/* Apertures reported by GET_PROCESS_APERTURES_NEW (gfx9 layout). */
#define KFDSIM_GPUVM_BASE	((u64)PAGE_SIZE)
#define KFDSIM_GPUVM_LIMIT	(BIT_ULL(47) - 1)
#define KFDSIM_LDS_BASE		BIT_ULL(48)
#define KFDSIM_SCRATCH_BASE	(2ULL << 48)
#define KFDSIM_APERTURE_SPAN	0xffffffffULL

/* Handles are (gpu_id << 32) | per-device idr id, as upstream encodes them. */
#define KFDSIM_HANDLE(gpu_id, id)	(((u64)(gpu_id) << 32) | (u32)(id))
#define KFDSIM_HANDLE_GPU_ID(h)		((u32)((h) >> 32))
#define KFDSIM_HANDLE_ID(h)		((u32)(h))

/**
 * struct kfd_dev - one GPU as the KFD layer knows it
 * @adev: the device (opaque; amdkfd: struct amdgpu_device)
 * @index: 0-based position; the topology node is @index + 1
 * @gpu_id: the KFD gpu_id (16 bits, non-zero, depends on the seed)
 * @ops: the device's queue operations (kfd_device_ops.h; amdkfd: the
 *       device queue manager's ops)
 *
 * amdkfd's struct kfd_dev. The device announces it with
 * kgd2kfd_device_add() (kfd_device.c) and it stays for the module's
 * lifetime.
 */
struct kfd_dev {
	struct kfdsim_gpu *adev;
	unsigned int index;
	u32 gpu_id;
	const struct kfd_device_ops *ops;
};

/* The GPUs (amdkfd: the topology's device list), fixed once loaded. */
extern struct kfd_dev *kfd_devices[KFDSIM_MAX_GPUS];
extern unsigned int kfd_num_devices;
struct kfd_dev *kfd_device_by_id(u32 gpu_id);
int kfd_devcgroup_check_permission(const struct kfd_dev *dev);

/* Live KFD objects, for debugfs "counters" (kgd2kfd_get_counters()). */
struct kfd_counters {
	atomic_t processes;
	atomic_t pdds;
	atomic_t bos;
	atomic_t doorbell_slices;
	atomic_t mmio_pages;
	atomic_t queues;
};

extern struct kfd_counters kfd_counters;

/*
 * A rejected request: one rate-limited line naming the caller and the
 * cause, next to the errno the ioctl returns.
 */
#define kfd_reject(fmt, ...) \
	pr_info_ratelimited("pid %d: " fmt, task_tgid_nr(current), \
			    ##__VA_ARGS__)

/* ---- processes (kfd_process.c) ---- */

struct dma_buf;
struct kfd_process;
struct kfdsim_cp_proc;

/**
 * struct kfd_process_device - a process's state on one GPU
 * @p: the owning process
 * @gpu: the device
 * @user_gpu_id: the gpu_id the process uses for @gpu (the device's own id,
 *               or after a restore the id on the checkpointed node; 0 hides
 *               the GPU from a restored process that did not use it,
 *               and from a process whose device cgroup hides it)
 * @hidden: the opener's device cgroup hid the GPU's render node when the
 *          process was created (as upstream, which then creates no pdd):
 *          the process never sees the GPU, not even through RESTORE
 * @drm_file: the render-node file bound by ACQUIRE_VM (a reference is held),
 *            NULL until then
 * @bo_idr: handle id -> struct kfd_bo, for BOs allocated on this GPU
 * @vm: this process's GPU VM on this GPU: the page table of @drm_file,
 *      shared with that file's GEM_VA mappings and CS (none before binding)
 * @doorbells: the doorbell slice (an order-1 allocation), allocated on
 *             first use and freed with the process or by a failed
 *             RESTORE when nothing maps it
 * @doorbell_used: doorbell slots of the slice taken by queues
 * @doorbell_lock: held by mmap of the slice from reading @doorbells until
 *                 @doorbell_maps counts the mapping, and by a failed
 *                 RESTORE freeing the slice (a leaf lock)
 * @doorbell_maps: CPU mappings of the doorbell slice
 * @doorbell_bo: the process has a DOORBELL BO on this GPU (at most one, the
 *               one the thunk allocates)
 * @nr_aql: compute queues of this process on this GPU
 * @nr_sdma: SDMA queues of this process on this GPU
 * @mmio_page: the process's simulated MMIO remap (HDP flush) page on this
 *             GPU, allocated by the first MMIO_REMAP BO and freed with the
 *             pdd; CPU mappings of it hold a process reference
 * @scratch_backing_va: SET_SCRATCH_BACKING_VA's address (recorded only)
 * @tba_addr: SET_TRAP_HANDLER's trap handler code address (recorded only)
 * @tma_addr: SET_TRAP_HANDLER's trap handler data address (recorded only)
 * @cp: the command processor's state of the process on this GPU (its
 *      queue list and worker thread), while it has queues there; set and
 *      cleared by the device under the process lock
 */
struct kfd_process_device {
	struct kfd_process *p;
	struct kfd_dev *gpu;
	u32 user_gpu_id;
	bool hidden;
	struct file *drm_file;
	struct idr bo_idr;
	struct kfdsim_vm vm;
	struct page *doorbells;
	DECLARE_BITMAP(doorbell_used, KFDSIM_DOORBELLS_PER_SLICE);
	struct mutex doorbell_lock;	/* see above */
	atomic_t doorbell_maps;
	bool doorbell_bo;
	unsigned int nr_aql;
	unsigned int nr_sdma;
	struct page *mmio_page;
	u64 scratch_backing_va;
	u64 tba_addr;
	u64 tma_addr;
	struct kfdsim_cp_proc *cp;
};

/**
 * struct kfd_process - the KFD state of one process (one per mm)
 * @ref: held by every open /dev/kfd file of the process
 * @lock: protects everything below
 * @mm: the address space this state belongs to (mmgrab'ed)
 * @lead_thread: the thread-group leader that opened /dev/kfd
 * @node: on the global process list
 * @pdds: per-GPU state, indexed by kfd_dev.index; NULL until used
 * @va_tree: GPU VA ranges of all BOs of the process, to refuse overlaps
 * @nr_bos: BOs of the process, all GPUs (at most KFD_CRIU_MAX_BOS, so that
 *          every process can be checkpointed and restored)
 * @queues: queue id -> struct kfd_queue, all GPUs
 * @evict_count: how many evictions are in force; queues run only at 0
 * @criu_pauser: thread group that paused the process with PROCESS_INFO
 * @criu_restore_pending: restored, its queues wait for RESUME
 * @events: the process's KFD events (kfd_events.c)
 * @xnack_enabled: the XNACK mode set with SET_XNACK_MODE (always off: the
 *                 simulated gfx906 does not support it)
 */
struct kfd_process {
	struct kref ref;
	struct mutex lock;		/* see above */
	struct mm_struct *mm;
	struct task_struct *lead_thread;
	struct list_head node;
	struct kfd_process_device *pdds[KFDSIM_MAX_GPUS];
	struct rb_root_cached va_tree;
	unsigned int nr_bos;
	struct idr queues;
	unsigned int evict_count;
	struct pid *criu_pauser;
	bool criu_restore_pending;
	struct kfd_event_table events;
	bool xnack_enabled;
};

/**
 * struct kfd_bo - a KFD memory object (what a handle names)
 * @pdd: the process and GPU it was allocated on
 * @id: idr id in @pdd->bo_idr
 * @va: GPU virtual address
 * @size: bytes, page aligned
 * @alloc_flags: KFD_IOC_ALLOC_MEM_FLAGS_*
 * @va_node: entry in the process's @va_tree
 * @gem: backing store; NULL for doorbell BOs, and for restored userptr
 *       BOs until RESUME pins their pages
 * @mapped: bit i set when mapped into the page table of GPU index i
 * @user_addr: the CPU address of a USERPTR BO
 * @pending_map: GPU indices a restored userptr BO is mapped on at RESUME
 */
struct kfd_bo {
	struct kfd_process_device *pdd;
	u32 id;
	u64 va;
	u64 size;
	u32 alloc_flags;
	struct interval_tree_node va_node;
	struct kfdsim_gem *gem;
	unsigned long mapped;
	u64 user_addr;
	unsigned long pending_map;
};

struct kfd_process *kfd_process_get_current(void);
struct kfd_process *kfd_process_find_pid(pid_t tgid);
struct kfd_bo *kfd_bo_lookup(struct kfd_process *p, u64 handle);
struct kfd_process *kfd_process_find_mm(struct mm_struct *mm);
void kfd_process_reset(struct kfd_process *p);
int kfd_alloc_check(const struct kfd_ioctl_alloc_memory_of_gpu_args *args);
int kfd_bo_create(struct kfd_process_device *pdd,
		  const struct kfd_ioctl_alloc_memory_of_gpu_args *args,
		  u32 id, bool defer_userptr, struct kfd_bo **out);
int kfd_bo_map(struct kfd_bo *bo, unsigned long targets);
u64 kfd_bo_mmap_offset(const struct kfd_bo *bo);
void kfd_process_put(struct kfd_process *p);
struct kfd_process_device *kfd_process_pdd_by_id(struct kfd_process *p,
						 u32 gpu_id);
int kfd_process_doorbells(struct kfd_process_device *pdd);
int kfd_pdd_bind(struct kfd_process_device *pdd, struct file *filp,
		 const char *op);
int kfd_process_mmio_page(struct kfd_process_device *pdd);
void kfd_process_teardown_bo(struct kfd_bo *bo);
int kfd_process_evict_queues(struct kfd_process *p);
void kfd_process_restore_queues(struct kfd_process *p);
int kfd_bo_pin_userptr(struct kfd_bo *bo, struct mm_struct *mm);

/*
 * The 64-bit doorbell @slot in @pdd's doorbell slice, which must exist:
 * where user space writes a queue's write pointer for the device to see.
 */
static inline u64 *kfd_doorbell_slot(const struct kfd_process_device *pdd,
				     u32 slot)
{
	return (u64 *)page_address(pdd->doorbells) + slot;
}

/* ---- queues (kfd_queue.c) ---- */

/**
 * struct kfd_queue - a user-mode queue
 * @pdd: the process and GPU it runs on
 * @id: the process-wide queue id
 * @type: KFD_IOC_QUEUE_TYPE_COMPUTE_AQL or KFD_IOC_QUEUE_TYPE_SDMA(_XGMI)
 * @ring_va: GPU VA of the ring
 * @ring_size: bytes, a power of two
 * @rptr_va: GPU VA where the CP writes the read pointer
 * @wptr_va: GPU VA of the write pointer (the doorbell is authoritative)
 * @doorbell: slot index in the process's doorbell slice
 * @percentage: 0 deactivates the queue
 * @priority: 0-15, recorded only
 * @eop_va: recorded for checkpointing only
 * @eop_size: see @eop_va
 * @ctx_save_va: see @eop_va
 * @ctx_save_size: see @eop_va
 * @ctl_stack_size: see @eop_va
 * @state: execution state, owned by the CP (protected by the turn lock of
 *         @pdd->cp, "CP lock" below)
 * @evicted: the CP must not run the queue (protected by the CP lock)
 * @cp_node: on its process's CP queue list (@pdd->cp->queues)
 * @cp_round: the last CP turn that visited the queue (CP lock)
 * @gfx9: the machine-code dispatch under way, or NULL (CP lock)
 * @cwsr: the context save state (MQD fields and control stack) of an AQL
 *        queue with a save area; cntl_stack NULL otherwise (CP lock)
 */
struct kfd_queue {
	struct kfd_process_device *pdd;
	u32 id;
	u32 type;
	u64 ring_va;
	u32 ring_size;
	u64 rptr_va;
	u64 wptr_va;
	u32 doorbell;
	u32 percentage;
	u32 priority;
	u64 eop_va;
	u64 eop_size;
	u64 ctx_save_va;
	u32 ctx_save_size;
	u32 ctl_stack_size;
	struct kfdsim_queue_state state;
	bool evicted;
	struct list_head cp_node;
	u64 cp_round;
	struct kfdsim_gfx9_dispatch *gfx9;
	struct kfdsim_cwsr cwsr;
};

void kfd_queues_destroy_all(struct kfd_process *p);
int kfd_queue_create(struct kfd_process_device *pdd,
		     struct kfd_ioctl_create_queue_args *args, int id,
		     int slot, bool check_mapped);
int kfd_ioctl_create_queue(struct kfd_process *p, void *data);
int kfd_ioctl_destroy_queue(struct kfd_process *p, void *data);
int kfd_ioctl_update_queue(struct kfd_process *p, void *data);
int kfd_ioctl_get_queue_wave_state(struct kfd_process *p, void *data);

/* ---- CRIU (kfd_criu.c, kfd_criu_restore.c) ---- */

int kfd_ioctl_criu(struct kfd_process *p, void *data);
int kfd_criu_restore(struct kfd_process *p,
		     struct kfd_ioctl_criu_args *args);
int kfd_criu_resume_userptrs(struct kfd_process *p);
void kfd_criu_file_flush(struct file *filp);
bool kfd_criu_should_fail(void);
unsigned int kfd_criu_get_fail_points(void);
void kfd_criu_set_fail_nth(int n);
int kfd_criu_get_fail_nth(void);
void *kfd_criu_kvzalloc(size_t n, size_t size);
int kfd_criu_copy_to_user(u64 uptr, const void *src, size_t len);
bool kfd_criu_bo_has_contents(const struct kfd_bo *bo);
int kfd_criu_export_bo(struct kfd_bo *bo, struct dma_buf **dmabuf);

/* ---- /dev/kfd (kfd_chardev.c) and topology (kfd_topology.c) ---- */

int kfd_chardev_init(void);
void kfd_chardev_fini(void);
struct device *kfd_chardev_device(void);
u64 kfd_mmap_offset(u64 type, const struct kfd_process_device *pdd);

int kfd_topology_init(struct device *kfd_dev);
void kfd_topology_fini(void);

/* ioctl handlers in kfd_memory.c, called with no locks held. */
int kfd_ioctl_acquire_vm(struct kfd_process *p, void *data);
int kfd_ioctl_alloc_memory(struct kfd_process *p, void *data);
int kfd_ioctl_free_memory(struct kfd_process *p, void *data);
int kfd_ioctl_map_memory(struct kfd_process *p, void *data);
int kfd_ioctl_unmap_memory(struct kfd_process *p, void *data);
int kfd_ioctl_available_memory(struct kfd_process *p, void *data);
int kfd_ioctl_export_dmabuf(struct kfd_process *p, void *data);

#endif /* KFD_PRIV_H */
