/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsim: simulated AMD GPUs presented through the KFD uAPI.
 *
 * Declarations of the device model (sim/), shared by its files and by the
 * amdgpu render-node subset (amdgpu/). See Documentation/architecture.rst:
 *   kfdsim_drv.c      module parameters, the simulated GPUs, render nodes
 *   kfdsim_asic.c     the static description of the simulated ASIC
 *   kfdsim_gem.c      GEM objects: VRAM, GTT and userptr backing, mmap, PRIME
 *   kfdsim_vm.c       the per-process, per-GPU GPU page table
 *   kfdsim_cp.c       the command processor: queues, AQL packets, preemption
 *   kfdsim_sdma.c     the SDMA engine (KFD queues and DRM submissions)
 *   kfdsim_kernels.c  the built-in compute kernels (kfdsim_f32.c: f32 add)
 *   kfdsim_debugfs.c  live-object counters and queue state for tests
 *   amdgpu_amdkfd.c   the calls the KFD layer makes (amdgpu_amdkfd.h)
 *
 * The device model reaches the KFD layer only through kgd2kfd.h. It reads
 * the KFD queue objects it runs (struct kfd_queue and its process device)
 * from kfd_priv.h, but calls nothing declared there.
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

#include "../kfd/kfd_priv.h"

struct mem_cgroup;
struct user_struct;
#include "amdgpu_amdkfd.h"
#include "kfd_device_ops.h"
#include "kgd2kfd.h"

#define KFDSIM_DRIVER_NAME	"kfdsim"

/*
 * A rejected request: one rate-limited line naming the caller and the
 * cause, next to the errno the call returns (as the KFD layer's).
 */
#define kfdsim_reject(fmt, ...) \
	pr_info_ratelimited("pid %d: " fmt, task_tgid_nr(current), \
			    ##__VA_ARGS__)

struct kfdsim_cp;

/**
 * struct kfdsim_gpu - one simulated GPU (amdgpu: struct amdgpu_device)
 * @drm: the DRM device behind /dev/dri/renderD<minor>
 * @index: 0-based position; the topology node is @index + 1
 * @gpu_id: the KFD gpu_id (16 bits, non-zero, depends on the seed)
 * @asic: static properties
 * @vram_size: bytes of simulated VRAM
 * @vram_used: bytes of VRAM currently allocated
 * @unique_id: topology unique_id
 * @cp: the command processor
 *
 * Created by kfdsim_drv.c, which announces it to the KFD layer with
 * kgd2kfd_device_add(); the KFD layer holds it as an opaque pointer
 * (struct kfd_dev.adev) and asks about it through amdgpu_amdkfd.h.
 */
struct kfdsim_gpu {
	struct drm_device drm;
	unsigned int index;
	u32 gpu_id;
	const struct kfdsim_asic *asic;
	u64 vram_size;
	atomic64_t vram_used;
	u64 unique_id;
	struct kfdsim_cp *cp;
};

static inline struct kfdsim_gpu *to_kfdsim_gpu(struct drm_device *drm)
{
	return container_of(drm, struct kfdsim_gpu, drm);
}

/* The GPUs, created by kfdsim_drv.c at load, fixed while loaded. */
extern struct kfdsim_gpu *kfdsim_gpus[KFDSIM_MAX_GPUS];
extern unsigned int kfdsim_num_gpus;
int kfdsim_gpu_render_minor(const struct kfdsim_gpu *gpu);
bool kfdsim_is_render_file(const struct file *filp);

extern const struct kfdsim_asic kfdsim_gfx906;

/**
 * struct kfdsim_cp - the command processor of one GPU
 * @lock: protects @procs (and nothing else: the queues of a process are
 *        under its kfdsim_cp_proc.turn)
 * @procs: the processes with queues on this GPU (their kfdsim_cp_proc.node)
 *
 * The work is done by one worker kthread per process and GPU, in that
 * process's cgroups (kfdsim_cp.c), so the host CPU time the CP spends on
 * a process's queues is charged to it.
 */
struct kfdsim_cp {
	struct mutex lock;		/* see above */
	struct list_head procs;
};

/**
 * struct kfdsim_cp_proc - the CP's part of one process on one GPU
 * @gpu: the GPU
 * @pdd: the process's device data; its @cp points back here
 * @worker: the kthread that runs this process's queues on @gpu, attached
 *          to the cgroups of the task that created the first queue
 * @turn: held by @worker while it runs one queue's time slice (dropped
 *        between slices), so whoever takes it knows no packet of this
 *        process on @gpu is mid-execution; protects @queues, @round and
 *        the execution state of every queue on @queues; others take it
 *        with kfdsim_cp_turn_lock()
 * @node: on @gpu's kfdsim_cp.procs (kfdsim_cp.lock)
 * @queues: the process's queues on @gpu (their kfd_queue.cp_node), in the
 *          order the worker's turns visit them
 * @nr_queues: queues on @queues; changes under the process lock and @turn
 * @round: number of the worker's current turn; see kfd_queue.cp_round
 * @lock_asked: kfdsim_cp_turn_lock() calls so far (counted before the wait)
 * @lock_got: kfdsim_cp_turn_lock() calls that got @turn so far
 * @wq: @worker sleeps here while none of its queues may run
 * @kick: set when a queue may have become runnable
 */
struct kfdsim_cp_proc {
	struct kfdsim_gpu *gpu;
	struct kfd_process_device *pdd;
	struct task_struct *worker;
	struct mutex turn;		/* see above */
	struct list_head node;
	struct list_head queues;
	unsigned int nr_queues;
	u64 round;
	atomic_long_t lock_asked;
	atomic_long_t lock_got;
	wait_queue_head_t wq;
	atomic_t kick;
};

struct kfdsim_amdgpu_file;

/**
 * struct kfdsim_drm_file - per-open state of a render (or primary) node
 * @vm_owner: the KFD process that made this file's GPU VM its own with
 *            ACQUIRE_VM (or a CRIU RESTORE), or NULL; set once, with
 *            cmpxchg, and cleared when that process lets go of it
 * @amdgpu: the state of the amdgpu uAPI (kfdsim_amdgpu*.c)
 */
struct kfdsim_drm_file {
	void *vm_owner;
	struct kfdsim_amdgpu_file *amdgpu;
};

static inline struct kfdsim_drm_file *to_kfdsim_file(struct drm_file *file)
{
	return file->driver_priv;
}

/* The GPU VM of a render-node file (kfdsim_amdgpu.c). */
struct kfdsim_vm *kfdsim_drm_file_vm(struct drm_file *file);

/*
 * The device model's live-object counters, exported through debugfs with
 * the KFD layer's (kfdsim_debugfs.c).
 */
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
/*
 * Waves the gfx9 engine wrote to a context save area (CWSR) and loaded
 * back from one since the module loaded (debugfs cwsr): never decrease.
 */
extern atomic64_t kfdsim_cwsr_saved_waves;
extern atomic64_t kfdsim_cwsr_restored_waves;

/*
 * Page-table updates (debugfs vm), never decreasing: the times a map or
 * unmap let go of a table's write lock between two batches of entries,
 * and the maps a fatal signal ended (kfdsim_vm.c).
 */
extern atomic64_t kfdsim_vm_lock_drops;
extern atomic64_t kfdsim_vm_maps_interrupted;
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
 * @user: userptr only: the user whose locked_vm counts the pages (a
 *        reference)
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
	struct user_struct *user;
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
 * @exec_lock: held by the render node's job worker while it executes work
 *             through the table (between two of its stop points), so that
 *             an eviction can wait for that work to reach one
 * @evict_wq: the job worker waits here while the table's process is evicted
 * @evicted: the KFD process sharing the table is evicted (its queues stopped)
 * @evict_epoch: counts evictions; render-node work submitted before the
 *               current eviction began is held, work submitted during it runs
 * @memcg: memory cgroup of the task that created the table (a reference),
 *         charged for what the GPU allocates on behalf of its users
 * @unmap_gen: changes (to a value no table had before) whenever entries
 *             are removed, so that whoever keeps something it read through
 *             the table (the gfx9 engine's decoded instructions) knows to
 *             read it again: kfdsim_vm_unmap_gen()
 */
struct kfdsim_page_table {
	struct xarray ptes;
	unsigned long nr_ptes;
	struct rw_semaphore lock;
	bool used;
	struct mutex exec_lock;		/* see above */
	wait_queue_head_t evict_wq;
	bool evicted;
	u64 evict_epoch;
	struct mem_cgroup *memcg;
	u64 unmap_gen;
};

int kfdsim_vm_create(struct kfdsim_vm *vm);
void kfdsim_vm_destroy(struct kfdsim_vm *vm);
void kfdsim_vm_share(struct kfdsim_vm *vm, struct kfdsim_vm *owner);
void kfdsim_vm_unshare(struct kfdsim_vm *vm);
bool kfdsim_vm_clean(struct kfdsim_vm *vm);
void kfdsim_vm_mark_used(struct kfdsim_vm *vm);
struct mem_cgroup *kfdsim_vm_memcg(struct kfdsim_vm *vm);
int kfdsim_vm_map(struct kfdsim_vm *vm, u64 va, struct page **pages,
		  unsigned long npages, u32 pte_flags);
void kfdsim_vm_unmap(struct kfdsim_vm *vm, u64 va, unsigned long npages);
bool kfdsim_vm_is_mapped(struct kfdsim_vm *vm, u64 va, u64 len, bool write);

/**
 * kfdsim_vm_unmap_gen - which removal of entries @vm's table has seen last
 * @vm: a VM handle
 *
 * Something read through the table (an instruction a GPU engine keeps
 * decoded) is still what the table maps while this value stays the same:
 * it changes before any entry is removed, and a different table (or none)
 * never gives a value seen before. Lock-free: a reader that sees the old
 * value runs as if it had read just before the removal began.
 * Return: the table's generation, or 0 without a table.
 */
static inline u64 kfdsim_vm_unmap_gen(struct kfdsim_vm *vm)
{
	struct kfdsim_page_table *pt = READ_ONCE(vm->pt);

	return pt ? READ_ONCE(pt->unmap_gen) : 0;
}

/*
 * Eviction of the KFD process that shares a table, as the render node's job
 * worker sees it (see kfdsim_vm.c).
 */
void kfdsim_vm_evict(struct kfdsim_vm *vm);
void kfdsim_vm_unevict(struct kfdsim_vm *vm);
u64 kfdsim_vm_epoch(struct kfdsim_vm *vm);
bool kfdsim_vm_held(struct kfdsim_vm *vm, u64 epoch);

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
/*
 * Copy @len bytes from @src to @dst, each range within one page, page to
 * page (memmove: they may overlap) when both are mapped. -EFAULT, having
 * done nothing, when either is not: the caller goes the slow way, which
 * reports the fault as its accesses meet it.
 */
int kfdsim_vm_copy_in_page(struct kfdsim_vm *vm, u64 src, u64 dst,
			   size_t len);

/* ---- built-in kernels (kfdsim_kernels.c) ---- */

/**
 * struct kfdsim_dispatch_error - why the CP cannot run a packet
 * @code: KFDSIM_AQL_ERROR_*, reported to the queue's inactive signal
 * @what: the cause, for the kernel log
 */
struct kfdsim_dispatch_error {
	u32 code;
	const char *what;
};

int kfdsim_kernel_run(struct kfdsim_vm *vm,
		      const struct kfdsim_aql_dispatch *pkt,
		      struct kfdsim_dispatch_progress *prog, u64 deadline_ns,
		      struct kfdsim_fault *fault,
		      struct kfdsim_dispatch_error *err);

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

/* ---- PM4 compute engine (kfdsim_pm4.c) ---- */

/* The SH registers kept: COMPUTE_DISPATCH_INITIATOR to USER_DATA_15. */
#define KFDSIM_PM4_REG_FIRST	0x2e00
#define KFDSIM_PM4_NUM_REGS	0x50

/**
 * struct kfdsim_pm4_ctx - what PM4 packets execute against
 * @vm: the address space
 * @regs: the compute SH registers from KFDSIM_PM4_REG_FIRST; zero at the
 *        start of a submission
 * @dispatches: DISPATCH_DIRECT packets that ran a kernel
 * @why: when a packet is refused (-ENOEXEC), the reason, for the log
 */
struct kfdsim_pm4_ctx {
	struct kfdsim_vm *vm;
	int (*yield)(void *priv);	/* between dispatch slices: 0 or stop */
	void *priv;
	u32 regs[KFDSIM_PM4_NUM_REGS];
	u64 dispatches;
	char why[128];
};

int kfdsim_pm4_exec(struct kfdsim_pm4_ctx *ctx, const u32 *dw, u32 ndw,
		    struct kfdsim_fault *fault);

/* ---- the command processor (kfdsim_cp.c) ---- */

int kfdsim_cp_init(struct kfdsim_gpu *gpu);
void kfdsim_cp_fini(struct kfdsim_gpu *gpu);
void kfdsim_cp_turn_lock(struct kfdsim_cp_proc *proc);
int kfdsim_cp_add_queue(struct kfd_queue *q);
void kfdsim_cp_remove_queue(struct kfd_queue *q);
u64 kfdsim_queue_doorbell_value(struct kfd_queue *q);

/* CP allocation fault injection (debugfs cp_fail_nth). */
bool kfdsim_cp_should_fail(void);
void kfdsim_cp_set_fail_nth(int n);
int kfdsim_cp_get_fail_nth(void);

/* The device's struct kfd_device_ops (kfdsim_cp.c, with kfdsim_gem.c). */
extern const struct kfd_device_ops kfdsim_device_ops;
struct dma_buf *kfdsim_gem_export_dmabuf(struct kfdsim_gpu *gpu,
					 struct kfdsim_gem *bo, int flags);

#endif /* KFDSIM_H */
