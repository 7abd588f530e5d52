/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsim: the amdgpu DRM uAPI subset of the render nodes.
 *
 *   kfdsim_amdgpu.c      ioctl table, per-file state, INFO queries
 *   kfdsim_amdgpu_mem.c  GEM buffers, PRIME import, the file's GPU VM
 *   kfdsim_amdgpu_cs.c   contexts, BO lists, command submission (SDMA and
 *                        compute rings), fences
 *
 * Layouts and numbers come from <drm/amdgpu_drm.h>, the kernel's copy of the
 * uAPI libdrm_amdgpu is built against.
 */
#ifndef KFDSIM_AMDGPU_H
#define KFDSIM_AMDGPU_H

#include <linux/idr.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/amdgpu_drm.h>
#include <drm/drm_ioctl.h>

#include "kfdsim.h"

/*
 * The amdgpu KMS interface version of Linux 6.1 (3.49), the uAPI revision
 * whose subset the render nodes implement; libdrm_amdgpu only requires the
 * major version to be 3.
 */
#define KFDSIM_AMDGPU_MINOR		49

/* One entry per amdgpu ioctl number up to SCHED, the last one of 6.1. */
#define KFDSIM_AMDGPU_NUM_IOCTLS	(DRM_AMDGPU_SCHED + 1)
extern const struct drm_ioctl_desc
	kfdsim_amdgpu_ioctls[KFDSIM_AMDGPU_NUM_IOCTLS];

/*
 * The file's GPU VM is the lower half of amdgpu's gfx9 VM: GEM_VA accepts
 * [START, END). As in amdgpu the first 2 MiB are reserved
 * (AMDGPU_VA_RESERVED_SIZE); the simulator has no upper half.
 */
#define KFDSIM_AMDGPU_VA_START		(2ULL << 20)
#define KFDSIM_AMDGPU_VA_END		(KFDSIM_GPUVM_LIMIT + 1)

/* SDMA rings a context can address (libdrm's AMDGPU_CS_MAX_RINGS). */
#define KFDSIM_AMDGPU_MAX_RINGS		8
/* Compute rings of every GPU (the PM4 engine of kfdsim_pm4.c). */
#define KFDSIM_AMDGPU_COMPUTE_RINGS	1

/**
 * struct kfdsim_amdgpu_file - the amdgpu state of one render-node file
 * @gpu: the file's GPU; NULL on the placeholder devices of module load
 * @lock: protects everything below; taken before the VM's own lock
 * @vm: the file's GPU VM; its page table is also the VM of the KFD process
 *      that bound the file, if any
 * @mappings: GEM_VA mappings (struct kfdsim_amdgpu_va) by GPU VA
 * @ctxs: context id -> struct kfdsim_amdgpu_ctx
 * @bo_lists: BO list id -> struct kfdsim_amdgpu_bo_list
 * @job_lock: protects @jobs and the fence state of the file's contexts
 * @jobs: submitted jobs not yet completed, in submission order; the first
 *        one is executing
 * @job_work: executes @jobs, one after the other
 * @job_wq: woken when a job completes
 * @closing: the file is being closed: cancel every job
 */
struct kfdsim_amdgpu_file {
	struct kfdsim_gpu *gpu;
	struct mutex lock;		/* see above */
	struct kfdsim_vm vm;
	struct rb_root_cached mappings;
	struct idr ctxs;
	struct idr bo_lists;
	spinlock_t job_lock;		/* see above */
	struct list_head jobs;
	struct work_struct job_work;
	wait_queue_head_t job_wq;
	bool closing;
};

static inline struct kfdsim_amdgpu_file *to_amdgpu_file(struct drm_file *f)
{
	return to_kfdsim_file(f)->amdgpu;
}

#define kfdsim_amdgpu_reject(fmt, ...) \
	pr_info_ratelimited("amdgpu: pid %d: " fmt, task_tgid_nr(current), \
			    ##__VA_ARGS__)

/* kfdsim_drv.c: the DRM driver's hooks. */
int kfdsim_amdgpu_open(struct drm_device *drm, struct kfdsim_drm_file *kfile);
void kfdsim_amdgpu_postclose(struct kfdsim_drm_file *kfile);
struct drm_gem_object *kfdsim_amdgpu_prime_import(struct drm_device *drm,
						  struct dma_buf *dmabuf);
int kfdsim_amdgpu_prime_handle_to_fd(struct drm_device *drm,
				     struct drm_file *file, u32 handle,
				     u32 flags, int *prime_fd);

/* The GPU of a kfdsim DRM device, NULL for a placeholder device. */
struct kfdsim_gpu *kfdsim_amdgpu_gpu_of(struct drm_device *drm);

/* kfdsim_amdgpu_mem.c */
void kfdsim_amdgpu_vm_fini(struct kfdsim_amdgpu_file *af);
int kfdsim_amdgpu_gem_create(struct drm_device *drm, void *data,
			     struct drm_file *file);
int kfdsim_amdgpu_gem_mmap(struct drm_device *drm, void *data,
			   struct drm_file *file);
int kfdsim_amdgpu_gem_userptr(struct drm_device *drm, void *data,
			      struct drm_file *file);
int kfdsim_amdgpu_gem_wait_idle(struct drm_device *drm, void *data,
				struct drm_file *file);
int kfdsim_amdgpu_gem_va(struct drm_device *drm, void *data,
			 struct drm_file *file);

/* kfdsim_amdgpu_cs.c */
void kfdsim_amdgpu_cs_init(struct kfdsim_amdgpu_file *af);
void kfdsim_amdgpu_cs_fini(struct kfdsim_amdgpu_file *af);
long kfdsim_amdgpu_timeout(u64 timeout_ns);
bool kfdsim_amdgpu_idle(struct kfdsim_amdgpu_file *af);
int kfdsim_amdgpu_ctx(struct drm_device *drm, void *data,
		      struct drm_file *file);
int kfdsim_amdgpu_bo_list(struct drm_device *drm, void *data,
			  struct drm_file *file);
int kfdsim_amdgpu_cs(struct drm_device *drm, void *data,
		     struct drm_file *file);
int kfdsim_amdgpu_wait_cs(struct drm_device *drm, void *data,
			  struct drm_file *file);
int kfdsim_amdgpu_wait_fences(struct drm_device *drm, void *data,
			      struct drm_file *file);

#endif /* KFDSIM_AMDGPU_H */
