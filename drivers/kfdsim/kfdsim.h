/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsim: simulated AMD GPUs presented through the KFD uAPI.
 *
 * Internal interfaces shared by the files of the driver. The layering is:
 *
 *   kfd_chardev.c    /dev/kfd: open, ioctl dispatch, mmap
 *   kfd_process.c    per-process state (struct kfdsim_process) and its
 *                    per-GPU part (struct kfdsim_pdd)
 *   kfd_memory.c     the memory ioctls (alloc, free, map, unmap, export)
 *   kfd_queue.c      the queue ioctls
 *   kfd_events.c     events, the events page, WAIT_EVENTS
 *   kfd_criu.c       the CRIU ioctl; RESTORE in kfd_criu_restore.c
 *   kfd_topology.c   /sys/class/kfd/kfd/topology
 *   kfdsim_drv.c     module parameters, the simulated GPUs, render nodes
 *   kfdsim_amdgpu*.c the amdgpu uAPI subset of the render nodes
 *   kfdsim_asic.c    the static description of the simulated ASIC
 *   kfdsim_gem.c     GEM objects: VRAM, GTT and userptr backing, mmap, PRIME
 *   kfdsim_vm.c      the per-process, per-GPU GPU page table
 *   kfdsim_cp.c      the command processor: queues, AQL packets, preemption
 *   kfdsim_sdma.c    the SDMA engine (KFD queues and DRM submissions)
 *   kfdsim_kernels.c the built-in compute kernels (kfdsim_f32.c: f32 add)
 *   kfdsim_debugfs.c live-object counters and preemption hooks for tests
 */
#ifndef KFDSIM_H
#define KFDSIM_H

#include <linux/atomic.h>
#include <linux/idr.h>
#include <linux/interval_tree.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <linux/wait.h>
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <linux/kfd_ioctl.h>
#include <linux/kfdsim.h>

#include "kfd_events.h"

#define KFDSIM_DRIVER_NAME	"kfdsim"
#define KFDSIM_MAX_GPUS		8

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

extern const struct kfdsim_asic kfdsim_gfx906;

/**
 * struct kfdsim_cp - the command processor of one GPU
 * @thread: the kthread that fetches and executes packets
 * @lock: protects @queues and the execution state of every queue on it;
 *        held by @thread while it executes one queue's time slice (and
 *        dropped between slices), so whoever takes it knows no packet of
 *        any queue of this GPU is mid-execution; others take it with
 *        kfdsim_cp_lock()
 * @queues: the queues of all processes on this GPU, in the order the
 *          current round visits them (a visited queue moves to the tail)
 * @round: number of the current round; see kfdsim_queue.cp_round
 * @waiters: callers of kfdsim_cp_lock() waiting for @lock
 * @wq: @thread sleeps here while no queue may run
 * @kick: set when a queue may have become runnable
 */
struct kfdsim_cp {
	struct task_struct *thread;
	struct mutex lock;		/* see above */
	struct list_head queues;
	u64 round;
	atomic_t waiters;
	wait_queue_head_t wq;
	atomic_t kick;
};

/**
 * struct kfdsim_gpu - one simulated GPU
 * @drm: the DRM device behind /dev/dri/renderD<minor>
 * @index: 0-based position; the topology node is @index + 1
 * @gpu_id: the KFD gpu_id (16 bits, non-zero, depends on the seed)
 * @asic: static properties
 * @vram_size: bytes of simulated VRAM
 * @vram_used: bytes of VRAM currently allocated
 * @unique_id: topology unique_id
 * @cp: the command processor
 */
struct kfdsim_gpu {
	struct drm_device drm;
	unsigned int index;
	u32 gpu_id;
	const struct kfdsim_asic *asic;
	u64 vram_size;
	atomic64_t vram_used;
	u64 unique_id;
	struct kfdsim_cp cp;
};

static inline struct kfdsim_gpu *to_kfdsim_gpu(struct drm_device *drm)
{
	return container_of(drm, struct kfdsim_gpu, drm);
}

struct kfdsim_amdgpu_file;

/**
 * struct kfdsim_drm_file - per-open state of a render (or primary) node
 * @kfd_owner: the KFD process that made this file's GPU VM its own with
 *             ACQUIRE_VM (or a CRIU RESTORE), or NULL; set once, with
 *             cmpxchg, and cleared when that process lets go of it
 * @amdgpu: the state of the amdgpu uAPI (kfdsim_amdgpu*.c)
 */
struct kfdsim_drm_file {
	struct kfdsim_process *kfd_owner;
	struct kfdsim_amdgpu_file *amdgpu;
};

static inline struct kfdsim_drm_file *to_kfdsim_file(struct drm_file *file)
{
	return file->driver_priv;
}

/* The GPU VM of a render-node file (kfdsim_amdgpu.c). */
struct kfdsim_vm *kfdsim_drm_file_vm(struct drm_file *file);

/* kfdsim_drv.c: the device list, fixed for the module's lifetime. */
extern struct kfdsim_gpu *kfdsim_gpus[KFDSIM_MAX_GPUS];
extern unsigned int kfdsim_num_gpus;
struct kfdsim_gpu *kfdsim_gpu_by_id(u32 gpu_id);
int kfdsim_gpu_render_minor(const struct kfdsim_gpu *gpu);
bool kfdsim_is_render_file(const struct file *filp);

/* Live-object counters, exported through debugfs (kfdsim_debugfs.c). */
struct kfdsim_counters {
	atomic_t processes;
	atomic_t pdds;
	atomic_t bos;		/* KFD memory objects */
	atomic_t gem_objects;
	atomic_t pinned_pages;
	atomic_t vm_ptes;	/* valid GPU page-table entries, all VMs */
	atomic_t doorbell_slices;
	atomic_t mmio_pages;
	atomic_t queues;
};

extern struct kfdsim_counters kfdsim_counters;

/*
 * Work the SDMA engines did for amdgpu CS submissions since the module
 * loaded (debugfs cs_sdma): never decreases, unlike kfdsim_counters.
 */
extern atomic64_t kfdsim_cs_sdma_packets;
extern atomic64_t kfdsim_cs_sdma_copy_bytes;
int kfdsim_debugfs_init(void);
void kfdsim_debugfs_fini(void);

/* ---- GEM objects (kfdsim_gem.c) ---- */

enum kfdsim_domain {
	KFDSIM_DOMAIN_VRAM,
	KFDSIM_DOMAIN_GTT,
	KFDSIM_DOMAIN_USERPTR,
};

/**
 * struct kfdsim_gem - a buffer object's backing store
 * @base: the GEM object, owned by the GPU's DRM device
 * @gpu: the GPU whose memory this is (VRAM is charged to it)
 * @domain: where the pages come from
 * @pages: one entry per page; VRAM and GTT pages are the driver's own,
 *         userptr pages are pinned user pages
 * @npages: number of entries in @pages
 * @mm: userptr only: the address space whose pinned_vm counts the pages
 *      (mmgrab'ed)
 * @no_cpu_access: created with amdgpu's NO_CPU_ACCESS flag: no CPU mapping
 *                 (render node, dma-buf, GEM_MMAP) is allowed, as
 *                 amdgpu_gem_object_mmap() refuses them. KFD never sets it:
 *                 since Linux 5.14 KFD VRAM without the PUBLIC flag is
 *                 CPU-mappable too (the thunk maps every BO).
 */
struct kfdsim_gem {
	struct drm_gem_object base;
	struct kfdsim_gpu *gpu;
	enum kfdsim_domain domain;
	struct page **pages;
	unsigned long npages;
	struct mm_struct *mm;
	bool no_cpu_access;
};

static inline struct kfdsim_gem *to_kfdsim_gem(struct drm_gem_object *obj)
{
	return container_of(obj, struct kfdsim_gem, base);
}

struct kfdsim_gem *kfdsim_gem_create(struct kfdsim_gpu *gpu,
				     enum kfdsim_domain domain, u64 size);
struct kfdsim_gem *kfdsim_gem_create_userptr(struct kfdsim_gpu *gpu,
					     struct mm_struct *mm,
					     u64 uaddr, u64 size);
void kfdsim_gem_put(struct kfdsim_gem *bo);
int kfdsim_gem_cpu_access(const struct kfdsim_gem *bo);
/* The GTT budget shared by all GPUs, and how much of it is allocated. */
u64 kfdsim_gtt_limit(void);
u64 kfdsim_gtt_usage(void);

/* ---- GPU page table (kfdsim_vm.c) ---- */

#define KFDSIM_PTE_VALID	BIT(0)
#define KFDSIM_PTE_WRITABLE	BIT(1)
#define KFDSIM_PTE_EXECUTABLE	BIT(2)
#define KFDSIM_PTE_FLAGS	GENMASK(2, 0)

/**
 * struct kfdsim_page_table - a GPU page table
 * @ptes: GPU page frame number -> PTE (page frame and KFDSIM_PTE_* flags)
 * @nr_ptes: entries in @ptes
 * @lock: held for reading while the GPU accesses memory through the table,
 *        for writing while mappings change, so a page is never freed while
 *        the GPU is using it
 * @used: the table's owner mapped something once (it is no longer clean)
 */
struct kfdsim_page_table {
	struct xarray ptes;
	unsigned long nr_ptes;
	struct rw_semaphore lock;
	bool used;
};

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

int kfdsim_vm_create(struct kfdsim_vm *vm);
void kfdsim_vm_destroy(struct kfdsim_vm *vm);
void kfdsim_vm_share(struct kfdsim_vm *vm, struct kfdsim_vm *owner);
void kfdsim_vm_unshare(struct kfdsim_vm *vm);
bool kfdsim_vm_clean(struct kfdsim_vm *vm);
void kfdsim_vm_mark_used(struct kfdsim_vm *vm);
int kfdsim_vm_map(struct kfdsim_vm *vm, u64 va, struct page **pages,
		  unsigned long npages, u32 pte_flags);
void kfdsim_vm_unmap(struct kfdsim_vm *vm, u64 va, unsigned long npages);
bool kfdsim_vm_is_mapped(struct kfdsim_vm *vm, u64 va, u64 len, bool write);

/*
 * GPU memory access. Each call translates every page it touches; on a fault
 * it returns -EFAULT and fills @fault, having done the accesses before it.
 * kfdsim_vm_access() calls @fn on each piece of the range that lies in one
 * page, with a kernel mapping of that piece; @fn returns 0 to go on.
 */
typedef int (*kfdsim_vm_access_fn)(void *ctx, void *ptr, size_t len,
				   u64 va);
int kfdsim_vm_access(struct kfdsim_vm *vm, u64 va, u64 len, bool write,
		     kfdsim_vm_access_fn fn, void *ctx,
		     struct kfdsim_fault *fault);
int kfdsim_vm_read(struct kfdsim_vm *vm, u64 va, void *buf, size_t len,
		   struct kfdsim_fault *fault);
int kfdsim_vm_write(struct kfdsim_vm *vm, u64 va, const void *buf,
		    size_t len, struct kfdsim_fault *fault);
int kfdsim_vm_atomic_add64(struct kfdsim_vm *vm, u64 va, s64 delta,
			   s64 *old, struct kfdsim_fault *fault);

/* ---- built-in kernels (kfdsim_kernels.c) ---- */

/**
 * struct kfdsim_dispatch_progress - how far an in-flight dispatch got
 * @iteration: the loop kernel's current step (0 for other kernels)
 * @next_wg: the next workgroup to run (within @iteration)
 *
 * Zero means "not started". Part of the saved queue state.
 */
struct kfdsim_dispatch_progress {
	u32 iteration;
	u32 next_wg;
};

int kfdsim_kernel_run(struct kfdsim_vm *vm,
		      const struct kfdsim_aql_dispatch *pkt,
		      struct kfdsim_dispatch_progress *prog, u64 deadline_ns,
		      struct kfdsim_fault *fault);

/* ---- SDMA engine (kfdsim_sdma.c) ---- */

/**
 * struct kfdsim_sdma_ctx - what SDMA packets execute against
 * @vm: the address space
 * @trap: called for a TRAP packet with its event id, or NULL
 * @fault: NULL to stop at a GPU page fault (-EFAULT); otherwise called for
 *         each fault, and the access goes on against the dummy page
 * @priv: passed to @trap and @fault
 */
struct kfdsim_sdma_ctx {
	struct kfdsim_vm *vm;
	void (*trap)(void *priv, u32 event_id);
	void (*fault)(void *priv, const struct kfdsim_fault *fault);
	void *priv;
	u64 copied;	/* bytes COPY_LINEAR packets moved, added up */
};

/* Longest SDMA packet the engine reads, in dwords. */
#define KFDSIM_SDMA_MAX_DWORDS	8

int kfdsim_sdma_exec(struct kfdsim_sdma_ctx *ctx, const u32 *dw, u32 ndw,
		     struct kfdsim_fault *fault);

/*
 * A rejected request: one rate-limited line naming the caller and the
 * cause, next to the errno the ioctl returns.
 */
#define kfd_reject(fmt, ...) \
	pr_info_ratelimited("pid %d: " fmt, task_tgid_nr(current), \
			    ##__VA_ARGS__)

/* ---- processes (kfd_process.c) ---- */

struct dma_buf;
struct kfdsim_process;

/**
 * struct kfdsim_pdd - a process's state on one GPU
 * @p: the owning process
 * @gpu: the device
 * @user_gpu_id: the gpu_id the process uses for @gpu (the device's own id,
 *               or after a restore the id on the checkpointed node; 0 hides
 *               the GPU from a restored process that did not use it)
 * @drm_file: the render-node file bound by ACQUIRE_VM (a reference is held),
 *            NULL until then
 * @bo_idr: handle id -> struct kfdsim_bo, for BOs allocated on this GPU
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
 */
struct kfdsim_pdd {
	struct kfdsim_process *p;
	struct kfdsim_gpu *gpu;
	u32 user_gpu_id;
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
};

/**
 * struct kfdsim_process - the KFD state of one process (one per mm)
 * @ref: held by every open /dev/kfd file of the process
 * @lock: protects everything below
 * @mm: the address space this state belongs to (mmgrab'ed)
 * @lead_thread: the thread-group leader that opened /dev/kfd
 * @node: on the global process list
 * @pdds: per-GPU state, indexed by kfdsim_gpu.index; NULL until used
 * @va_tree: GPU VA ranges of all BOs of the process, to refuse overlaps
 * @nr_bos: BOs of the process, all GPUs (at most KFD_CRIU_MAX_BOS, so that
 *          every process can be checkpointed and restored)
 * @queues: queue id -> struct kfdsim_queue, all GPUs
 * @evict_count: how many evictions are in force; queues run only at 0
 * @criu_pauser: thread group that paused the process with PROCESS_INFO
 * @criu_restore_pending: restored, its queues wait for RESUME
 * @events: the process's KFD events (kfd_events.c)
 * @xnack_enabled: the XNACK mode set with SET_XNACK_MODE (always off: the
 *                 simulated gfx906 does not support it)
 */
struct kfdsim_process {
	struct kref ref;
	struct mutex lock;		/* see above */
	struct mm_struct *mm;
	struct task_struct *lead_thread;
	struct list_head node;
	struct kfdsim_pdd *pdds[KFDSIM_MAX_GPUS];
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
 * struct kfdsim_bo - a KFD memory object (what a handle names)
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
struct kfdsim_bo {
	struct kfdsim_pdd *pdd;
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

struct kfdsim_process *kfd_process_get_current(void);
struct kfdsim_process *kfd_process_find_pid(pid_t tgid);
struct kfdsim_bo *kfd_bo_lookup(struct kfdsim_process *p, u64 handle);
struct kfdsim_process *kfd_process_find_mm(struct mm_struct *mm);
void kfd_process_reset(struct kfdsim_process *p);
int kfd_alloc_check(const struct kfd_ioctl_alloc_memory_of_gpu_args *args);
int kfd_bo_create(struct kfdsim_pdd *pdd,
		  const struct kfd_ioctl_alloc_memory_of_gpu_args *args,
		  u32 id, bool defer_userptr, struct kfdsim_bo **out);
int kfd_bo_map(struct kfdsim_bo *bo, unsigned long targets);
u64 kfd_bo_mmap_offset(const struct kfdsim_bo *bo);
void kfd_process_put(struct kfdsim_process *p);
struct kfdsim_pdd *kfd_process_pdd_by_id(struct kfdsim_process *p,
					 u32 gpu_id);
int kfd_process_doorbells(struct kfdsim_pdd *pdd);
int kfd_pdd_bind(struct kfdsim_pdd *pdd, struct file *filp, const char *op);
int kfd_process_mmio_page(struct kfdsim_pdd *pdd);
void kfd_process_teardown_bo(struct kfdsim_bo *bo);

/* ---- queues (kfd_queue.c) and the command processor (kfdsim_cp.c) ---- */

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
 * struct kfdsim_queue - a user-mode queue
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
 * @state: execution state, owned by the CP (protected by its lock)
 * @evicted: the CP must not run the queue (protected by the CP lock)
 * @cp_node: on the GPU's CP queue list
 * @cp_round: the last CP round that visited the queue (CP lock)
 */
struct kfdsim_queue {
	struct kfdsim_pdd *pdd;
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
};

int kfdsim_cp_init(struct kfdsim_gpu *gpu);
void kfdsim_cp_fini(struct kfdsim_gpu *gpu);
void kfdsim_cp_lock(struct kfdsim_cp *cp);
void kfdsim_cp_add_queue(struct kfdsim_queue *q);
void kfdsim_cp_remove_queue(struct kfdsim_queue *q);
void kfdsim_cp_kick(struct kfdsim_gpu *gpu);
u64 kfdsim_queue_doorbell_value(struct kfdsim_queue *q);

/* Device operations for preemption; see Documentation/preemption.rst. */
bool kfdsim_cp_should_fail(void);
void kfdsim_cp_set_fail_nth(int n);
int kfdsim_cp_get_fail_nth(void);
int kfdsim_process_evict(struct kfdsim_process *p);
void kfdsim_process_restore(struct kfdsim_process *p);
void kfdsim_queue_save_state(struct kfdsim_queue *q,
			     struct kfdsim_queue_state *st);
int kfdsim_queue_load_state(struct kfdsim_queue *q,
			    const struct kfdsim_queue_state *st);

void kfd_queues_destroy_all(struct kfdsim_process *p);
int kfd_queue_create(struct kfdsim_pdd *pdd,
		     struct kfd_ioctl_create_queue_args *args, int id,
		     int slot, bool check_mapped);
int kfd_ioctl_create_queue(struct kfdsim_process *p, void *data);
int kfd_ioctl_destroy_queue(struct kfdsim_process *p, void *data);
int kfd_ioctl_update_queue(struct kfdsim_process *p, void *data);

/* ---- CRIU (kfd_criu.c, kfd_criu_restore.c) ---- */

int kfd_ioctl_criu(struct kfdsim_process *p, void *data);
int kfd_criu_restore(struct kfdsim_process *p,
		     struct kfd_ioctl_criu_args *args);
int kfd_criu_resume_userptrs(struct kfdsim_process *p);
void kfd_criu_file_flush(struct file *filp);
bool kfd_criu_should_fail(void);
void kfd_criu_set_fail_nth(int n);
int kfd_criu_get_fail_nth(void);
unsigned int kfd_criu_get_fail_points(void);
void *kfd_criu_kvzalloc(size_t n, size_t size);
int kfd_criu_copy_to_user(u64 uptr, const void *src, size_t len);
bool kfd_criu_bo_has_contents(const struct kfdsim_bo *bo);
int kfd_criu_export_bo(struct kfdsim_bo *bo, struct dma_buf **dmabuf);

/* ---- /dev/kfd (kfd_chardev.c) and topology (kfd_topology.c) ---- */

int kfd_chardev_init(void);
void kfd_chardev_fini(void);
struct device *kfd_chardev_device(void);
u64 kfd_mmap_offset(u64 type, const struct kfdsim_pdd *pdd);

int kfd_topology_init(struct device *kfd_dev);
void kfd_topology_fini(void);

/* ioctl handlers in kfd_memory.c, called with no locks held. */
int kfd_ioctl_acquire_vm(struct kfdsim_process *p, void *data);
int kfd_ioctl_alloc_memory(struct kfdsim_process *p, void *data);
int kfd_ioctl_free_memory(struct kfdsim_process *p, void *data);
int kfd_ioctl_map_memory(struct kfdsim_process *p, void *data);
int kfd_ioctl_unmap_memory(struct kfdsim_process *p, void *data);
int kfd_ioctl_available_memory(struct kfdsim_process *p, void *data);
int kfd_ioctl_export_dmabuf(struct kfdsim_process *p, void *data);

#endif /* KFDSIM_H */
