// SPDX-License-Identifier: GPL-2.0
/*
 * amdgpu uAPI: contexts, BO lists, command submission and fences.
 *
 * Two IPs exist: DMA, one ring per simulated SDMA engine, and compute, one
 * ring. CS checks the request, copies each indirect buffer through the
 * file's GPU VM (the KFD process's VM once KFD has bound the file) into the
 * kernel, queues the job and returns its sequence number (the fence) at
 * once, as amdgpu hands a job to its GPU scheduler. A kernel worker per file
 * executes the file's jobs in submission order: SDMA packets on the
 * simulated SDMA engine (kfdsim_sdma_exec(), the one KFD SDMA queues use),
 * PM4 packets on the PM4 compute engine (kfdsim_pm4_exec(), whose
 * dispatches run the built-in kernels). WAIT_CS, WAIT_FENCES and
 * GEM_WAIT_IDLE wait for jobs, interruptibly, until an absolute timeout.
 *
 * On an SDMA ring GPU page faults do not stop a job: as on gfx9 with retry
 * faults off, the fault is logged, reads of an unmapped page give zeros and
 * writes to it are dropped. On the compute ring a fault stops the job,
 * since a dispatch cannot go on past one. A job that fails (a packet the
 * engine refuses, a truncated packet, a fault on the compute ring) stops
 * after whatever packets before the bad one did, and its fence signals with
 * -EINVAL. A job that executes for longer than the lockup_timeout module
 * parameter is cancelled: its fence signals with -ETIME, a line names the
 * context and the job, and the context is guilty, as after an amdgpu job
 * timeout: QUERY_STATE2 reports it and further CS on it fail -ECANCELED.
 *
 * The worker stops between packets and dispatch slices: while the KFD
 * process sharing the VM is evicted (a CRIU pause, kfdsim_vm_evict()), for
 * jobs submitted before the eviction; and for good, with -ECANCELED, when
 * the file closes or the job's context is freed.
 *
 * All memory is resident, so BO lists are only checked and kept: a list
 * holds references on its BOs, as in amdgpu.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/highmem.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_auth.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "kfdsim_amdgpu.h"

/* Limits on what one file or one request may ask for. */
#define KFDSIM_AMDGPU_MAX_CTXS		1024
#define KFDSIM_AMDGPU_MAX_BO_LISTS	1024
/* amdgpu's AMDGPU_BO_LIST_MAX_ENTRIES */
#define KFDSIM_AMDGPU_MAX_LIST_BOS	(128 * 1024)
#define KFDSIM_AMDGPU_MAX_CHUNKS	256
#define KFDSIM_AMDGPU_MAX_IBS		64
#define KFDSIM_AMDGPU_MAX_DEPS		1024
#define KFDSIM_AMDGPU_MAX_FENCES	1024
/*
 * An IB is copied into the kernel before it runs. Its size is bounded as
 * amdgpu bounds SDMA IBs: the 20-bit dword count of the IB packet.
 */
#define KFDSIM_AMDGPU_MAX_IB_DWORDS	0xfffff
/* The SDMA IB packet takes a 32-byte aligned base: lower bits are dropped. */
#define KFDSIM_AMDGPU_IB_BASE_ALIGN	32
/* The PM4 INDIRECT_BUFFER packet takes a dword-aligned base. */
#define KFDSIM_AMDGPU_PM4_IB_ALIGN	4

/*
 * A context keeps a sequence number per ring, in slots: the SDMA rings
 * first, then the compute ring.
 */
#define KFDSIM_AMDGPU_SLOT_COMPUTE	KFDSIM_AMDGPU_MAX_RINGS
#define KFDSIM_AMDGPU_RING_SLOTS	(KFDSIM_AMDGPU_MAX_RINGS + \
					 KFDSIM_AMDGPU_COMPUTE_RINGS)
/*
 * Jobs a context may have in flight on one ring (amdgpu_sched_jobs' default);
 * CS waits for room. Fences older than that many count as signalled without
 * error, as amdgpu forgets them.
 */
#define KFDSIM_AMDGPU_CTX_JOBS		32
/* How long FREE_CTX lets the context's jobs finish before cancelling them. */
#define KFDSIM_AMDGPU_CTX_FLUSH		HZ

/*
 * amdgpu's job timeout for every ring (amdgpu.lockup_timeout): 10 s of
 * execution; time a job spends held by an eviction does not count.
 */
static unsigned int lockup_timeout = 10000;
module_param(lockup_timeout, uint, 0644);
MODULE_PARM_DESC(lockup_timeout,
		 "Render-node job timeout in ms of execution, 0: none (default 10000, as amdgpu)");

/**
 * struct kfdsim_amdgpu_ctx - a submission context
 * @ref: held by the file's context table and by jobs
 * @id: the context's id in the file
 * @seq: per ring slot, the sequence number of the last submission (the
 *       file's lock)
 * @done: per ring slot, the sequence number of the last completed job (the
 *        file's job_lock); jobs of a slot complete in order
 * @err: per ring slot, the errors of the last KFDSIM_AMDGPU_CTX_JOBS jobs,
 *       by sequence number modulo that (the file's job_lock)
 * @jobs: jobs submitted and not completed
 * @guilty: a job of the context timed out
 * @reset_seen: QUERY_STATE reported the reset
 * @freed: FREE_CTX gave up waiting: cancel the remaining jobs
 * @pstate: the stable power state last set (recorded only)
 */
struct kfdsim_amdgpu_ctx {
	struct kref ref;
	u32 id;
	u64 seq[KFDSIM_AMDGPU_RING_SLOTS];
	u64 done[KFDSIM_AMDGPU_RING_SLOTS];
	int err[KFDSIM_AMDGPU_RING_SLOTS][KFDSIM_AMDGPU_CTX_JOBS];
	atomic_t jobs;
	bool guilty;
	bool reset_seen;
	bool freed;
	u32 pstate;
};

/**
 * struct kfdsim_amdgpu_bo_list - a BO list (residency list)
 * @count: entries in @objs
 * @objs: the BOs, a reference held on each
 */
struct kfdsim_amdgpu_bo_list {
	u32 count;
	struct drm_gem_object *objs[];
};

static void kfdsim_amdgpu_ctx_release(struct kref *ref)
{
	kfree(container_of(ref, struct kfdsim_amdgpu_ctx, ref));
}

static void kfdsim_amdgpu_ctx_put(struct kfdsim_amdgpu_ctx *ctx)
{
	kref_put(&ctx->ref, kfdsim_amdgpu_ctx_release);
}

static void kfdsim_amdgpu_bo_list_free(struct kfdsim_amdgpu_bo_list *list)
{
	u32 i;

	if (!list)
		return;
	for (i = 0; i < list->count; i++)
		drm_gem_object_put(list->objs[i]);
	kvfree(list);
}

static void kfdsim_amdgpu_job_work(struct work_struct *work);

void kfdsim_amdgpu_cs_init(struct kfdsim_amdgpu_file *af)
{
	spin_lock_init(&af->job_lock);
	INIT_LIST_HEAD(&af->jobs);
	INIT_WORK(&af->job_work, kfdsim_amdgpu_job_work);
	init_waitqueue_head(&af->job_wq);
}

/* Wake the job worker if it waits for an eviction to end. */
static void kfdsim_amdgpu_wake_worker(struct kfdsim_amdgpu_file *af)
{
	wake_up_all(&af->vm.pt->evict_wq);
}

/*
 * No ioctl runs any more: cancel the jobs in flight and wait for the worker
 * to complete them (at its next stop point).
 */
void kfdsim_amdgpu_cs_fini(struct kfdsim_amdgpu_file *af)
{
	struct kfdsim_amdgpu_bo_list *list;
	struct kfdsim_amdgpu_ctx *ctx;
	int id;

	WRITE_ONCE(af->closing, true);
	kfdsim_amdgpu_wake_worker(af);
	flush_work(&af->job_work);
	WARN_ON(!list_empty(&af->jobs));
	idr_for_each_entry(&af->ctxs, ctx, id)
		kfdsim_amdgpu_ctx_put(ctx);
	idr_destroy(&af->ctxs);
	idr_for_each_entry(&af->bo_lists, list, id)
		kfdsim_amdgpu_bo_list_free(list);
	idr_destroy(&af->bo_lists);
}

/* ---- contexts ---- */

static bool kfdsim_amdgpu_prio_valid(s32 prio)
{
	switch (prio) {
	case AMDGPU_CTX_PRIORITY_UNSET:
	case AMDGPU_CTX_PRIORITY_VERY_LOW:
	case AMDGPU_CTX_PRIORITY_LOW:
	case AMDGPU_CTX_PRIORITY_NORMAL:
	case AMDGPU_CTX_PRIORITY_HIGH:
	case AMDGPU_CTX_PRIORITY_VERY_HIGH:
		return true;
	default:
		return false;
	}
}

static int kfdsim_amdgpu_ctx_alloc(struct kfdsim_amdgpu_file *af,
				   struct drm_file *file, s32 prio, u32 *id)
{
	struct kfdsim_amdgpu_ctx *ctx;
	int ret;

	/* As amdgpu: above normal takes CAP_SYS_NICE or DRM master. */
	if (prio > AMDGPU_CTX_PRIORITY_NORMAL && !capable(CAP_SYS_NICE) &&
	    !drm_is_current_master(file))
		return -EACCES;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	kref_init(&ctx->ref);
	atomic_set(&ctx->jobs, 0);

	mutex_lock(&af->lock);
	ret = idr_alloc(&af->ctxs, ctx, 1, KFDSIM_AMDGPU_MAX_CTXS + 1,
			GFP_KERNEL);
	if (ret >= 0)
		ctx->id = ret;
	mutex_unlock(&af->lock);
	if (ret < 0) {
		kfree(ctx);
		return ret == -ENOSPC ? -ENOMEM : ret;
	}
	*id = ret;
	return 0;
}

/*
 * As amdgpu's context release, which flushes the context's scheduler
 * entity for a while and then kills its jobs: let the jobs of @ctx run for
 * up to KFDSIM_AMDGPU_CTX_FLUSH (less if the caller is killed), then cancel
 * the remaining ones and wait for the worker to complete them.
 */
static void kfdsim_amdgpu_ctx_drain(struct kfdsim_amdgpu_file *af,
				    struct kfdsim_amdgpu_ctx *ctx)
{
	if (wait_event_killable_timeout(af->job_wq, !atomic_read(&ctx->jobs),
					KFDSIM_AMDGPU_CTX_FLUSH) > 0)
		return;
	WRITE_ONCE(ctx->freed, true);
	kfdsim_amdgpu_wake_worker(af);
	wait_event(af->job_wq, !atomic_read(&ctx->jobs));
}

/* The context @id with a reference, or NULL. */
static struct kfdsim_amdgpu_ctx *
kfdsim_amdgpu_ctx_get(struct kfdsim_amdgpu_file *af, u32 id)
{
	struct kfdsim_amdgpu_ctx *ctx;

	mutex_lock(&af->lock);
	ctx = id <= INT_MAX ? idr_find(&af->ctxs, id) : NULL;
	if (ctx)
		kref_get(&ctx->ref);
	mutex_unlock(&af->lock);
	return ctx;
}

int kfdsim_amdgpu_ctx(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct kfdsim_amdgpu_file *af = to_amdgpu_file(file);
	union drm_amdgpu_ctx *args = data;
	struct kfdsim_amdgpu_ctx *ctx;
	u32 op = args->in.op, flags = args->in.flags, id = args->in.ctx_id;
	int ret;

	s32 prio = args->in.priority;

	/*
	 * As amdgpu_ctx_ioctl(): a priority it does not know counts as
	 * normal (old user space passes garbage there), ALLOC ignores the
	 * context id, and only SET_STABLE_PSTATE takes flags.
	 */
	if (!kfdsim_amdgpu_prio_valid(prio))
		prio = AMDGPU_CTX_PRIORITY_NORMAL;
	if (flags && op != AMDGPU_CTX_OP_SET_STABLE_PSTATE)
		return -EINVAL;

	switch (op) {
	case AMDGPU_CTX_OP_ALLOC_CTX:
		ret = kfdsim_amdgpu_ctx_alloc(af, file, prio, &id);
		if (ret)
			return ret;
		memset(args, 0, sizeof(*args));
		args->out.alloc.ctx_id = id;
		return 0;
	case AMDGPU_CTX_OP_FREE_CTX:
		mutex_lock(&af->lock);
		ctx = id <= INT_MAX ? idr_remove(&af->ctxs, id) : NULL;
		mutex_unlock(&af->lock);
		if (!ctx)
			return -EINVAL;
		kfdsim_amdgpu_ctx_drain(af, ctx);
		kfdsim_amdgpu_ctx_put(ctx);
		return 0;
	case AMDGPU_CTX_OP_QUERY_STATE:
	case AMDGPU_CTX_OP_QUERY_STATE2:
	case AMDGPU_CTX_OP_GET_STABLE_PSTATE:
	case AMDGPU_CTX_OP_SET_STABLE_PSTATE:
		break;
	default:
		kfdsim_amdgpu_reject("CTX: unknown operation %u\n", op);
		return -EINVAL;
	}

	if (op == AMDGPU_CTX_OP_SET_STABLE_PSTATE &&
	    ((flags & ~AMDGPU_CTX_STABLE_PSTATE_FLAGS_MASK) ||
	     flags > AMDGPU_CTX_STABLE_PSTATE_PEAK))
		return -EINVAL;
	ctx = kfdsim_amdgpu_ctx_get(af, id);
	if (!ctx)
		return -EINVAL;
	memset(args, 0, sizeof(*args));
	switch (op) {
	case AMDGPU_CTX_OP_QUERY_STATE:
		/*
		 * The GPU itself is never reset; a job timeout counts as a
		 * reset of its context. As amdgpu, the old query reports a
		 * reset once, and as of unknown cause.
		 */
		mutex_lock(&af->lock);
		args->out.state.reset_status =
			READ_ONCE(ctx->guilty) && !ctx->reset_seen ?
			AMDGPU_CTX_UNKNOWN_RESET : AMDGPU_CTX_NO_RESET;
		if (READ_ONCE(ctx->guilty))
			ctx->reset_seen = true;
		mutex_unlock(&af->lock);
		break;
	case AMDGPU_CTX_OP_QUERY_STATE2:
		if (READ_ONCE(ctx->guilty))
			args->out.state.flags = AMDGPU_CTX_QUERY2_FLAGS_RESET |
						AMDGPU_CTX_QUERY2_FLAGS_GUILTY;
		break;
	case AMDGPU_CTX_OP_GET_STABLE_PSTATE:
		args->out.pstate.flags = READ_ONCE(ctx->pstate);
		break;
	case AMDGPU_CTX_OP_SET_STABLE_PSTATE:
		WRITE_ONCE(ctx->pstate, flags);
		break;
	}
	kfdsim_amdgpu_ctx_put(ctx);
	return 0;
}

/* ---- BO lists ---- */

/*
 * Read @n entries of @stride bytes (the start of each is a struct
 * drm_amdgpu_bo_list_entry) and look their handles up.
 */
static struct kfdsim_amdgpu_bo_list *
kfdsim_amdgpu_bo_list_read(struct drm_file *file, u64 uptr, u32 n,
			   u32 stride)
{
	struct drm_amdgpu_bo_list_entry entry;
	struct kfdsim_amdgpu_bo_list *list;
	size_t len = min_t(size_t, stride, sizeof(entry));
	int ret = 0;

	/*
	 * As amdgpu_bo_create_list_entry_array(): any entry size, the
	 * bytes an entry lacks read as zero.
	 */
	if (n > KFDSIM_AMDGPU_MAX_LIST_BOS) {
		kfdsim_amdgpu_reject("BO list of %u entries (at most %u)\n",
				     n, KFDSIM_AMDGPU_MAX_LIST_BOS);
		return ERR_PTR(-EINVAL);
	}
	list = kvzalloc(struct_size(list, objs, n), GFP_KERNEL_ACCOUNT);
	if (!list)
		return ERR_PTR(-ENOMEM);
	for (list->count = 0; list->count < n; list->count++) {
		memset(&entry, 0, sizeof(entry));
		if (copy_from_user(&entry, u64_to_user_ptr(uptr), len)) {
			ret = -EFAULT;
			break;
		}
		list->objs[list->count] = drm_gem_object_lookup(file,
								entry.bo_handle);
		if (!list->objs[list->count]) {
			kfdsim_amdgpu_reject("BO list: no BO with handle %u\n",
					     entry.bo_handle);
			ret = -ENOENT;
			break;
		}
		uptr += stride;
	}
	if (ret) {
		kfdsim_amdgpu_bo_list_free(list);
		return ERR_PTR(ret);
	}
	return list;
}

int kfdsim_amdgpu_bo_list(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct kfdsim_amdgpu_file *af = to_amdgpu_file(file);
	union drm_amdgpu_bo_list *args = data;
	struct kfdsim_amdgpu_bo_list *list = NULL;
	u32 id = args->in.list_handle;
	int ret = 0;

	/* As amdgpu_bo_list_ioctl(): CREATE ignores the list handle. */
	switch (args->in.operation) {
	case AMDGPU_BO_LIST_OP_CREATE:
	case AMDGPU_BO_LIST_OP_UPDATE:
		list = kfdsim_amdgpu_bo_list_read(file, args->in.bo_info_ptr,
						  args->in.bo_number,
						  args->in.bo_info_size);
		if (IS_ERR(list))
			return PTR_ERR(list);
		break;
	case AMDGPU_BO_LIST_OP_DESTROY:
		break;
	default:
		kfdsim_amdgpu_reject("BO_LIST: unknown operation %u\n",
				     args->in.operation);
		return -EINVAL;
	}
	mutex_lock(&af->lock);
	switch (args->in.operation) {
	case AMDGPU_BO_LIST_OP_CREATE:
		ret = idr_alloc(&af->bo_lists, list, 1,
				KFDSIM_AMDGPU_MAX_BO_LISTS + 1, GFP_KERNEL);
		if (ret >= 0) {
			id = ret;
			list = NULL;
			ret = 0;
		} else if (ret == -ENOSPC) {
			ret = -ENOMEM;
		}
		break;
	case AMDGPU_BO_LIST_OP_UPDATE:
		/* The old list is freed below, outside the lock. */
		if (id <= INT_MAX && idr_find(&af->bo_lists, id))
			list = idr_replace(&af->bo_lists, list, id);
		else
			ret = -ENOENT;
		break;
	case AMDGPU_BO_LIST_OP_DESTROY:
		/* As amdgpu, destroying a list that does not exist is no error. */
		list = id <= INT_MAX ? idr_remove(&af->bo_lists, id) : NULL;
		id = 0;
		break;
	}
	mutex_unlock(&af->lock);
	if (!ret) {
		memset(args, 0, sizeof(*args));
		args->out.list_handle = id;
	}
	kfdsim_amdgpu_bo_list_free(list);
	return ret;
}

/* ---- command submission ---- */

/**
 * struct kfdsim_amdgpu_job - a CS request, from parsing to completion
 * @link: in the file's job list
 * @af: the file
 * @ctx: the context (a reference is held)
 * @seq: the job's sequence number on its context's ring
 * @epoch: the eviction epoch of the VM when the job was submitted
 * @pid: the submitter, for log lines
 * @ran_ns: execution time before the current stretch
 * @start_ns: when the current stretch of execution began
 * @ibs: the IB chunks, in submission order
 * @dw: the IBs' contents, copied at submission (NULL for an empty IB)
 * @nr_ibs: entries in @ibs
 * @fence: the user fence BO (a reference is held), or NULL
 * @fence_offset: byte offset in @fence of the 64-bit fence value
 * @bo_handles: a BO_HANDLES chunk was given
 * @slot: the ring slot every IB runs on
 * @pm4: the compute ring's state, shared by the IBs of the submission
 */
struct kfdsim_amdgpu_job {
	struct list_head link;
	struct kfdsim_amdgpu_file *af;
	struct kfdsim_amdgpu_ctx *ctx;
	u64 seq;
	u64 epoch;
	pid_t pid;
	u64 ran_ns;
	u64 start_ns;
	struct drm_amdgpu_cs_chunk_ib ibs[KFDSIM_AMDGPU_MAX_IBS];
	u32 *dw[KFDSIM_AMDGPU_MAX_IBS];
	u32 nr_ibs;
	struct drm_gem_object *fence;
	u32 fence_offset;
	bool bo_handles;
	u32 slot;
	struct kfdsim_pm4_ctx pm4;
};

/* A line about a job, naming its submitter (the worker logs it). */
#define kfdsim_job_info(job, fmt, ...) \
	pr_info_ratelimited("amdgpu: pid %d: " fmt, (job)->pid, ##__VA_ARGS__)

static void kfdsim_amdgpu_job_free(struct kfdsim_amdgpu_job *job)
{
	u32 i;

	for (i = 0; i < job->nr_ibs; i++)
		kvfree(job->dw[i]);
	if (job->fence)
		drm_gem_object_put(job->fence);
	if (job->ctx)
		kfdsim_amdgpu_ctx_put(job->ctx);
	kfree(job);
}

/* The slot of the ring (ip_type, ip_instance, ring) names, or -EINVAL. */
static int kfdsim_amdgpu_ring(const struct kfdsim_gpu *gpu, u32 ip_type,
			      u32 ip_instance, u32 ring)
{
	switch (ip_type) {
	case AMDGPU_HW_IP_DMA:
		if (ip_instance || ring >= gpu->asic->num_sdma_engines ||
		    ring >= KFDSIM_AMDGPU_MAX_RINGS)
			return -EINVAL;
		return ring;
	case AMDGPU_HW_IP_COMPUTE:
		if (ip_instance || ring >= KFDSIM_AMDGPU_COMPUTE_RINGS)
			return -EINVAL;
		return KFDSIM_AMDGPU_SLOT_COMPUTE + ring;
	default:
		kfdsim_amdgpu_reject("IP type %u is not simulated (compute %u, DMA %u)\n",
				     ip_type, AMDGPU_HW_IP_COMPUTE,
				     AMDGPU_HW_IP_DMA);
		return -EINVAL;
	}
}

static bool kfdsim_amdgpu_slot_is_compute(u32 slot)
{
	return slot >= KFDSIM_AMDGPU_SLOT_COMPUTE;
}

/**
 * struct kfdsim_amdgpu_fence - a fence to wait for
 * @ctx: its context (a reference is held)
 * @slot: its ring slot
 * @seq: its sequence number
 */
struct kfdsim_amdgpu_fence {
	struct kfdsim_amdgpu_ctx *ctx;
	u32 slot;
	u64 seq;
};

/*
 * Look the fence (ctx_id, ring, seq) up: -EINVAL unless this file handed it
 * out. A wait for seq 0 is always valid, ~0 means the latest.
 */
static int kfdsim_amdgpu_fence_get(struct kfdsim_amdgpu_file *af,
				   u32 ctx_id, u32 ip_type, u32 ip_instance,
				   u32 ring, u64 seq,
				   struct kfdsim_amdgpu_fence *f)
{
	struct kfdsim_amdgpu_ctx *ctx;
	u64 last;
	int r;

	r = kfdsim_amdgpu_ring(af->gpu, ip_type, ip_instance, ring);
	if (r < 0)
		return r;
	ctx = kfdsim_amdgpu_ctx_get(af, ctx_id);
	if (!ctx)
		return -EINVAL;
	mutex_lock(&af->lock);
	last = ctx->seq[r];
	mutex_unlock(&af->lock);
	if (seq == U64_MAX) {
		seq = last;
	} else if (seq > last) {
		kfdsim_amdgpu_reject("fence %llu of context %u was never submitted\n",
				     seq, ctx_id);
		kfdsim_amdgpu_ctx_put(ctx);
		return -EINVAL;
	}
	f->ctx = ctx;
	f->slot = r;
	f->seq = seq;
	return 0;
}

/* Has @f signalled? If so, *@err is its error (0 for success). */
static bool kfdsim_amdgpu_fence_done(struct kfdsim_amdgpu_file *af,
				     const struct kfdsim_amdgpu_fence *f,
				     int *err)
{
	const struct kfdsim_amdgpu_ctx *ctx = f->ctx;
	bool done;
	u64 last;

	spin_lock(&af->job_lock);
	last = ctx->done[f->slot];
	done = f->seq <= last;
	*err = 0;
	if (done && f->seq && f->seq + KFDSIM_AMDGPU_CTX_JOBS > last)
		*err = ctx->err[f->slot][f->seq % KFDSIM_AMDGPU_CTX_JOBS];
	spin_unlock(&af->job_lock);
	return done;
}

/* Has no job of the file to complete? */
bool kfdsim_amdgpu_idle(struct kfdsim_amdgpu_file *af)
{
	bool idle;

	spin_lock(&af->job_lock);
	idle = list_empty(&af->jobs);
	spin_unlock(&af->job_lock);
	return idle;
}

/*
 * As amdgpu_gem_timeout(): an absolute CLOCK_MONOTONIC time in ns to a
 * wait in jiffies; one in the past is 0, a negative one forever.
 */
long kfdsim_amdgpu_timeout(u64 timeout_ns)
{
	u64 now = ktime_get_ns(), j;

	if ((s64)timeout_ns < 0)
		return MAX_SCHEDULE_TIMEOUT;
	if (timeout_ns <= now)
		return 0;
	j = nsecs_to_jiffies64(timeout_ns - now);
	return j >= MAX_SCHEDULE_TIMEOUT ? MAX_SCHEDULE_TIMEOUT - 1 : j;
}

static int kfdsim_amdgpu_chunk_ib(struct kfdsim_amdgpu_file *af,
				  struct kfdsim_amdgpu_job *job, u64 uptr)
{
	struct drm_amdgpu_cs_chunk_ib *ib = &job->ibs[job->nr_ibs];
	int ring;

	if (job->nr_ibs == KFDSIM_AMDGPU_MAX_IBS)
		return -EINVAL;
	if (copy_from_user(ib, u64_to_user_ptr(uptr), sizeof(*ib)))
		return -EFAULT;
	/*
	 * As amdgpu: the flags and the padding are not checked. Of the
	 * defined flags only GFX rings act on CE, PREEMPT, the cache and GDS
	 * bits; an SDMA ring has no memory-sync packet (EMIT_MEM_SYNC), the
	 * compute ring's memory is always coherent, and SECURE needs TMZ,
	 * which gfx906 lacks. PREAMBLE is not skipped (see
	 * Documentation/upstream-differences.rst).
	 */
	ring = kfdsim_amdgpu_ring(af->gpu, ib->ip_type, ib->ip_instance,
				  ib->ring);
	if (ring < 0)
		return ring;
	/* One job runs on one ring (no gang submission). */
	if (job->nr_ibs && ring != job->slot) {
		kfdsim_amdgpu_reject("CS: IBs on rings (%u, %u) and (%u, %u) in one submission\n",
				     job->ibs[0].ip_type, job->ibs[0].ring,
				     ib->ip_type, ib->ring);
		return -EINVAL;
	}
	job->slot = ring;
	/* amdgpu WARNs and feeds the low bits to the CP as its swap field. */
	if (kfdsim_amdgpu_slot_is_compute(ring) &&
	    !IS_ALIGNED(ib->va_start, KFDSIM_AMDGPU_PM4_IB_ALIGN)) {
		kfdsim_amdgpu_reject("CS: compute IB at 0x%llx is not dword aligned\n",
				     ib->va_start);
		return -EINVAL;
	}
	if (ib->ib_bytes / sizeof(u32) > KFDSIM_AMDGPU_MAX_IB_DWORDS) {
		kfdsim_amdgpu_reject("CS: IB of %u bytes (at most %u dwords)\n",
				     ib->ib_bytes, KFDSIM_AMDGPU_MAX_IB_DWORDS);
		return -EINVAL;
	}
	job->nr_ibs++;
	return 0;
}

static int kfdsim_amdgpu_chunk_fence(struct drm_file *file,
				     struct kfdsim_amdgpu_job *job, u64 uptr)
{
	struct drm_amdgpu_cs_chunk_fence f;

	if (job->fence)
		return -EINVAL;
	if (copy_from_user(&f, u64_to_user_ptr(uptr), sizeof(f)))
		return -EFAULT;
	/* As amdgpu_cs_p1_user_fence(): every refusal is -EINVAL. */
	job->fence = drm_gem_object_lookup(file, f.handle);
	if (!job->fence) {
		kfdsim_amdgpu_reject("CS: no user fence BO with handle %u\n",
				     f.handle);
		return -EINVAL;
	}
	if (to_kfdsim_gem(job->fence)->domain == KFDSIM_DOMAIN_USERPTR) {
		kfdsim_amdgpu_reject("CS: the user fence BO is user memory\n");
		return -EINVAL;
	}
	/* The SDMA fence packet writes dwords: 4-byte alignment. */
	if (!IS_ALIGNED(f.offset, sizeof(u32)) ||
	    f.offset > job->fence->size - sizeof(u64)) {
		kfdsim_amdgpu_reject("CS: user fence at offset %u of a %zu-byte BO\n",
				     f.offset, job->fence->size);
		return -EINVAL;
	}
	job->fence_offset = f.offset;
	return 0;
}

static int kfdsim_amdgpu_chunk_deps(struct kfdsim_amdgpu_file *af, u64 uptr,
				    u32 bytes)
{
	struct drm_amdgpu_cs_chunk_dep dep;
	u32 i, n = bytes / sizeof(dep);
	struct kfdsim_amdgpu_fence f;
	int ret;

	if (bytes % sizeof(dep) || n > KFDSIM_AMDGPU_MAX_DEPS)
		return -EINVAL;
	/*
	 * A fence of the file is one of its jobs, and the file's jobs run in
	 * submission order: every dependency is met. Only check the names.
	 */
	for (i = 0; i < n; i++, uptr += sizeof(dep)) {
		if (copy_from_user(&dep, u64_to_user_ptr(uptr), sizeof(dep)))
			return -EFAULT;
		ret = kfdsim_amdgpu_fence_get(af, dep.ctx_id, dep.ip_type,
					      dep.ip_instance, dep.ring,
					      dep.handle, &f);
		if (ret)
			return ret;
		kfdsim_amdgpu_ctx_put(f.ctx);
	}
	return 0;
}

static int kfdsim_amdgpu_chunk_bo_handles(struct drm_file *file,
					  struct kfdsim_amdgpu_job *job,
					  u64 uptr)
{
	struct kfdsim_amdgpu_bo_list *list;
	struct drm_amdgpu_bo_list_in in;

	if (job->bo_handles)
		return -EINVAL;
	if (copy_from_user(&in, u64_to_user_ptr(uptr), sizeof(in)))
		return -EFAULT;
	list = kfdsim_amdgpu_bo_list_read(file, in.bo_info_ptr, in.bo_number,
					  in.bo_info_size);
	if (IS_ERR(list))
		return PTR_ERR(list);
	kfdsim_amdgpu_bo_list_free(list);
	job->bo_handles = true;
	return 0;
}

/* The minimum length of each chunk kind, in bytes. */
static size_t kfdsim_amdgpu_chunk_min(u32 id)
{
	switch (id) {
	case AMDGPU_CHUNK_ID_IB:
		return sizeof(struct drm_amdgpu_cs_chunk_ib);
	case AMDGPU_CHUNK_ID_FENCE:
		return sizeof(struct drm_amdgpu_cs_chunk_fence);
	case AMDGPU_CHUNK_ID_BO_HANDLES:
		return sizeof(struct drm_amdgpu_bo_list_in);
	default:
		return 0;
	}
}

static int kfdsim_amdgpu_cs_parse(struct drm_file *file,
				  const struct drm_amdgpu_cs_in *in,
				  struct kfdsim_amdgpu_job *job)
{
	struct kfdsim_amdgpu_file *af = to_amdgpu_file(file);
	struct drm_amdgpu_cs_chunk chunk;
	u64 *ptrs;
	u32 i;
	int ret = 0;

	ptrs = memdup_user(u64_to_user_ptr(in->chunks),
			   in->num_chunks * sizeof(*ptrs));
	if (IS_ERR(ptrs))
		return PTR_ERR(ptrs);

	for (i = 0; i < in->num_chunks && !ret; i++) {
		if (copy_from_user(&chunk, u64_to_user_ptr(ptrs[i]),
				   sizeof(chunk))) {
			ret = -EFAULT;
			break;
		}
		if ((u64)chunk.length_dw * 4 <
		    kfdsim_amdgpu_chunk_min(chunk.chunk_id)) {
			kfdsim_amdgpu_reject("CS: chunk %u of kind %u is too short\n",
					     i, chunk.chunk_id);
			ret = -EINVAL;
			break;
		}
		switch (chunk.chunk_id) {
		case AMDGPU_CHUNK_ID_IB:
			ret = kfdsim_amdgpu_chunk_ib(af, job, chunk.chunk_data);
			break;
		case AMDGPU_CHUNK_ID_FENCE:
			ret = kfdsim_amdgpu_chunk_fence(file, job,
							chunk.chunk_data);
			break;
		case AMDGPU_CHUNK_ID_DEPENDENCIES:
		case AMDGPU_CHUNK_ID_SCHEDULED_DEPENDENCIES:
			ret = kfdsim_amdgpu_chunk_deps(af, chunk.chunk_data,
						       chunk.length_dw * 4);
			break;
		case AMDGPU_CHUNK_ID_BO_HANDLES:
			ret = kfdsim_amdgpu_chunk_bo_handles(file, job,
							     chunk.chunk_data);
			break;
		default:
			kfdsim_amdgpu_reject("CS: chunk kind %u is not simulated (no syncobjs)\n",
					     chunk.chunk_id);
			ret = -EINVAL;
			break;
		}
	}
	kfree(ptrs);
	if (ret)
		return ret;
	if (!job->nr_ibs) {
		kfdsim_amdgpu_reject("CS: no IB\n");
		return -EINVAL;
	}
	/* The compute ring writes the 64-bit fence with one RELEASE_MEM. */
	if (job->fence && kfdsim_amdgpu_slot_is_compute(job->slot) &&
	    !IS_ALIGNED(job->fence_offset, sizeof(u64))) {
		kfdsim_amdgpu_reject("CS: compute user fence at offset %u is not 8-byte aligned\n",
				     job->fence_offset);
		return -EINVAL;
	}
	/* As amdgpu: a BO list or inline BO handles, not both. */
	if (in->bo_list_handle && job->bo_handles)
		return -EINVAL;
	if (in->bo_list_handle) {
		mutex_lock(&af->lock);
		if (in->bo_list_handle > INT_MAX ||
		    !idr_find(&af->bo_lists, in->bo_list_handle))
			ret = -ENOENT;
		mutex_unlock(&af->lock);
	}
	return ret;
}

/**
 * struct kfdsim_amdgpu_faults - the GPU page faults of one IB
 * @first: the first fault
 * @count: how many accesses faulted
 */
struct kfdsim_amdgpu_faults {
	struct kfdsim_fault first;
	u32 count;
};

static void kfdsim_amdgpu_fault(void *priv, const struct kfdsim_fault *fault)
{
	struct kfdsim_amdgpu_faults *f = priv;

	if (!f->count++)
		f->first = *fault;
}

/*
 * amdgpu logs a rate-limited line per VM fault and the IB runs on; one
 * line per faulting IB here (its fetch, then its execution), naming the
 * first address.
 */
static void kfdsim_amdgpu_log_faults(const struct kfdsim_amdgpu_job *job,
				     const struct kfdsim_amdgpu_faults *f,
				     u32 ring)
{
	if (!f->count)
		return;
	kfdsim_job_info(job, "[mmhub] page fault on SDMA ring %u at address 0x%llx (%s%s), %u faulting accesses: reads gave zeros, writes were dropped\n",
			ring, f->first.va,
			f->first.write ? "write" : "read",
			f->first.read_only ? " to a read-only page" : "",
			f->count);
}

/*
 * A fault on the compute ring stops the submission: one line naming the
 * address, and the IB dword of the packet (@where), or "IB fetch".
 */
static void kfdsim_amdgpu_log_pm4_fault(const struct kfdsim_amdgpu_job *job,
					const struct kfdsim_fault *f,
					const char *where)
{
	kfdsim_job_info(job, "[gfxhub] page fault on compute ring 0 at address 0x%llx (%s%s), %s: submission stopped\n",
			f->va, f->write ? "write" : "read",
			f->read_only ? " to a read-only page" : "", where);
}

/*
 * Fetch @ndw dwords of IB from @va page by page; an unmapped page reads as
 * zeros (NOPs), as the engine fetching through a faulting VM does.
 */
static void kfdsim_amdgpu_fetch_ib(struct kfdsim_amdgpu_file *af, u64 va,
				   u32 *dw, u32 ndw,
				   struct kfdsim_amdgpu_faults *faults)
{
	size_t left = (size_t)ndw * sizeof(u32), chunk;
	struct kfdsim_fault fault;
	u8 *p = (u8 *)dw;

	while (left) {
		chunk = min_t(size_t, left, PAGE_SIZE - offset_in_page(va));
		if (kfdsim_vm_read(&af->vm, va, p, chunk, &fault)) {
			kfdsim_amdgpu_fault(faults, &fault);
			memset(p, 0, chunk);
		}
		va += chunk;
		p += chunk;
		left -= chunk;
	}
}

/*
 * Copy the job's IBs into the kernel, charged to the submitter. A compute
 * IB whose fetch faults is refused, as before anything of it could run.
 */
static int kfdsim_amdgpu_job_fetch(struct kfdsim_amdgpu_file *af,
				   struct kfdsim_amdgpu_job *job)
{
	bool compute = kfdsim_amdgpu_slot_is_compute(job->slot);
	const struct drm_amdgpu_cs_chunk_ib *ib;
	struct kfdsim_amdgpu_faults faults;
	u32 i, ndw;

	for (i = 0; i < job->nr_ibs; i++) {
		ib = &job->ibs[i];
		ndw = ib->ib_bytes / sizeof(u32);
		/* As amdgpu: an empty IB runs nothing. */
		if (!ndw)
			continue;
		job->dw[i] = kvmalloc_array(ndw, sizeof(u32),
					    GFP_KERNEL_ACCOUNT |
					    __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
		if (!job->dw[i]) {
			kfdsim_amdgpu_reject("CS: no memory for a copy of the %u-byte IB\n",
					     ib->ib_bytes);
			return -ENOMEM;
		}
		memset(&faults, 0, sizeof(faults));
		kfdsim_amdgpu_fetch_ib(af, compute ? ib->va_start :
				       round_down(ib->va_start,
						  KFDSIM_AMDGPU_IB_BASE_ALIGN),
				       job->dw[i], ndw, &faults);
		if (compute && faults.count) {
			kfdsim_amdgpu_log_pm4_fault(job, &faults.first,
						    "IB fetch");
			return -EINVAL;
		}
		kfdsim_amdgpu_log_faults(job, &faults, ib->ring);
	}
	return 0;
}

static bool kfdsim_amdgpu_job_cancelled(const struct kfdsim_amdgpu_job *job)
{
	return READ_ONCE(job->af->closing) || READ_ONCE(job->ctx->freed);
}

/*
 * A stop point of the job, with the VM's exec_lock held: wait while an
 * eviction holds the job; -ECANCELED if the job is cancelled, -ETIME if it
 * executed for longer than lockup_timeout.
 */
static int kfdsim_amdgpu_job_check(struct kfdsim_amdgpu_job *job)
{
	struct kfdsim_amdgpu_file *af = job->af;
	struct kfdsim_page_table *pt = af->vm.pt;
	u64 limit = (u64)READ_ONCE(lockup_timeout) * NSEC_PER_MSEC;
	u64 ran;

	while (!kfdsim_amdgpu_job_cancelled(job) &&
	       kfdsim_vm_held(&af->vm, job->epoch)) {
		job->ran_ns += ktime_get_ns() - job->start_ns;
		mutex_unlock(&pt->exec_lock);
		wait_event_idle(pt->evict_wq,
				kfdsim_amdgpu_job_cancelled(job) ||
				!kfdsim_vm_held(&af->vm, job->epoch));
		mutex_lock(&pt->exec_lock);
		job->start_ns = ktime_get_ns();
	}
	if (kfdsim_amdgpu_job_cancelled(job))
		return -ECANCELED;
	ran = job->ran_ns + ktime_get_ns() - job->start_ns;
	if (limit && ran > limit) {
		pr_warn("amdgpu: pid %d: ring %s%u timeout: context %u job %llu executed for %llu ms (lockup_timeout %u ms): cancelled, the context is guilty\n",
			job->pid,
			kfdsim_amdgpu_slot_is_compute(job->slot) ? "comp_" :
			"sdma", kfdsim_amdgpu_slot_is_compute(job->slot) ?
			job->slot - KFDSIM_AMDGPU_SLOT_COMPUTE : job->slot,
			job->ctx->id, job->seq, div_u64(ran, NSEC_PER_MSEC),
			READ_ONCE(lockup_timeout));
		return -ETIME;
	}
	return 0;
}

/* Between packets and dispatch slices: let others run, then check. */
static int kfdsim_amdgpu_job_yield(void *priv)
{
	struct kfdsim_amdgpu_job *job = priv;
	struct kfdsim_page_table *pt = job->af->vm.pt;

	mutex_unlock(&pt->exec_lock);
	cond_resched();
	mutex_lock(&pt->exec_lock);
	return kfdsim_amdgpu_job_check(job);
}

/* Run the PM4 packets of one IB on the compute ring. */
static int kfdsim_amdgpu_run_pm4(struct kfdsim_amdgpu_job *job,
				 const u32 *dw, u32 ndw)
{
	struct kfdsim_pm4_ctx *pm4 = &job->pm4;
	struct kfdsim_fault fault;
	char where[32];
	u32 pos;
	int n, ret;

	for (pos = 0; pos < ndw; pos += n) {
		n = kfdsim_pm4_exec(pm4, dw + pos, ndw - pos, &fault);
		if (n == -ENOEXEC) {
			kfdsim_job_info(job, "CS: PM4 packet 0x%08x at IB dword %u refused: %s\n",
					dw[pos], pos, pm4->why);
			return -EINVAL;
		}
		if (n == -EFAULT) {
			snprintf(where, sizeof(where), "packet at IB dword %u",
				 pos);
			kfdsim_amdgpu_log_pm4_fault(job, &fault, where);
			return -EINVAL;
		}
		if (n < 0)
			return n;
		ret = kfdsim_amdgpu_job_yield(job);
		if (ret)
			return ret;
	}
	return 0;
}

/* Run IB @i of @job on its ring's engine, against the file's VM. */
static int kfdsim_amdgpu_run_ib(struct kfdsim_amdgpu_file *af,
				struct kfdsim_amdgpu_job *job, u32 i)
{
	const struct drm_amdgpu_cs_chunk_ib *ib = &job->ibs[i];
	struct kfdsim_amdgpu_faults faults = {};
	struct kfdsim_sdma_ctx sdma = {
		.vm = &af->vm,
		.fault = kfdsim_amdgpu_fault,
		.priv = &faults,
	};
	u32 ndw = ib->ib_bytes / sizeof(u32);
	const u32 *dw = job->dw[i];
	struct kfdsim_fault fault;
	u32 pos;
	int n, ret = 0;

	if (!ndw)
		return 0;
	if (kfdsim_amdgpu_slot_is_compute(job->slot)) {
		job->pm4.vm = &af->vm;
		job->pm4.yield = kfdsim_amdgpu_job_yield;
		job->pm4.priv = job;
		return kfdsim_amdgpu_run_pm4(job, dw, ndw);
	}

	for (pos = 0; pos < ndw; pos += n) {
		n = kfdsim_sdma_exec(&sdma, dw + pos, ndw - pos, &fault);
		if (n == -ENOEXEC) {
			kfdsim_job_info(job, "CS: bad SDMA packet 0x%08x at IB dword %u\n",
					dw[pos], pos);
			ret = -EINVAL;
			break;
		}
		/* POLL_REGMEM on a ring of the render node never waits. */
		if (n == -EBUSY) {
			kfdsim_job_info(job, "CS: POLL_REGMEM at IB dword %u does not hold\n",
					pos);
			ret = -EINVAL;
			break;
		}
		if (n < 0 && n != -EAGAIN) {
			ret = n;
			break;
		}
		/* A packet, or the dwords a NOP skips, past the IB's end */
		if (n == -EAGAIN || (u32)n > ndw - pos) {
			kfdsim_job_info(job, "CS: SDMA packet 0x%08x at IB dword %u is truncated\n",
					dw[pos], pos);
			ret = -EINVAL;
			break;
		}
		atomic64_inc(&kfdsim_cs_sdma_packets);
		ret = kfdsim_amdgpu_job_yield(job);
		if (ret)
			break;
	}
	atomic64_add(sdma.copied, &kfdsim_cs_sdma_copy_bytes);
	kfdsim_amdgpu_log_faults(job, &faults, ib->ring);
	return ret;
}

/* Write one dword of the user fence. */
static void kfdsim_amdgpu_fence_dword(struct kfdsim_gem *bo, u32 offset,
				      u32 value)
{
	void *va;

	va = kmap_local_page(bo->pages[offset >> PAGE_SHIFT]);
	WRITE_ONCE(*(u32 *)(va + offset_in_page(offset)), value);
	kunmap_local(va);
}

/*
 * The GPU writes the 64-bit sequence number to the user fence when done,
 * low dword first, as the SDMA fence packets amdgpu emits do.
 */
static void kfdsim_amdgpu_write_fence(struct kfdsim_amdgpu_job *job, u64 seq)
{
	struct kfdsim_gem *bo = to_kfdsim_gem(job->fence);

	kfdsim_amdgpu_fence_dword(bo, job->fence_offset, lower_32_bits(seq));
	kfdsim_amdgpu_fence_dword(bo, job->fence_offset + sizeof(u32),
				  upper_32_bits(seq));
}

/* Execute @job; 0 or the error its fence signals with. */
static int kfdsim_amdgpu_job_run(struct kfdsim_amdgpu_file *af,
				 struct kfdsim_amdgpu_job *job)
{
	struct kfdsim_page_table *pt = af->vm.pt;
	u32 i;
	int ret;

	/* As amdgpu after a timeout: the guilty context's jobs are skipped. */
	if (READ_ONCE(job->ctx->guilty))
		return -ECANCELED;
	mutex_lock(&pt->exec_lock);
	job->start_ns = ktime_get_ns();
	ret = kfdsim_amdgpu_job_check(job);
	for (i = 0; i < job->nr_ibs && !ret; i++)
		ret = kfdsim_amdgpu_run_ib(af, job, i);
	mutex_unlock(&pt->exec_lock);
	return ret;
}

/* Signal @job's fence with @err and free it. */
static void kfdsim_amdgpu_job_done(struct kfdsim_amdgpu_file *af,
				   struct kfdsim_amdgpu_job *job, int err)
{
	struct kfdsim_amdgpu_ctx *ctx = job->ctx;

	if (!err && job->fence)
		kfdsim_amdgpu_write_fence(job, job->seq);
	if (err == -ETIME)
		WRITE_ONCE(ctx->guilty, true);
	spin_lock(&af->job_lock);
	list_del(&job->link);
	ctx->err[job->slot][job->seq % KFDSIM_AMDGPU_CTX_JOBS] = err;
	ctx->done[job->slot] = job->seq;
	atomic_dec(&ctx->jobs);
	spin_unlock(&af->job_lock);
	wake_up_all(&af->job_wq);
	kfdsim_amdgpu_job_free(job);
}

/* The file's worker: execute its jobs in submission order. */
static void kfdsim_amdgpu_job_work(struct work_struct *work)
{
	struct kfdsim_amdgpu_file *af =
		container_of(work, struct kfdsim_amdgpu_file, job_work);
	struct kfdsim_amdgpu_job *job;

	for (;;) {
		spin_lock(&af->job_lock);
		job = list_first_entry_or_null(&af->jobs,
					       struct kfdsim_amdgpu_job, link);
		spin_unlock(&af->job_lock);
		if (!job)
			return;
		kfdsim_amdgpu_job_done(af, job, kfdsim_amdgpu_job_run(af, job));
		cond_resched();
	}
}

/* Has ring @slot of @ctx room for another job? */
static bool kfdsim_amdgpu_ring_room(struct kfdsim_amdgpu_file *af,
				    struct kfdsim_amdgpu_ctx *ctx, u32 slot)
{
	bool room;

	spin_lock(&af->job_lock);
	room = READ_ONCE(ctx->seq[slot]) - ctx->done[slot] <
	       KFDSIM_AMDGPU_CTX_JOBS;
	spin_unlock(&af->job_lock);
	return room;
}

/*
 * Give @job the next sequence number of its ring (in *@seq) and queue it,
 * once the ring has room (as amdgpu_ctx_add_fence(), interruptibly). The
 * worker owns the job from then on: it may be freed before this returns.
 */
static int kfdsim_amdgpu_job_push(struct kfdsim_amdgpu_file *af,
				  struct kfdsim_amdgpu_job *job, u64 *seq)
{
	struct kfdsim_amdgpu_ctx *ctx = job->ctx;
	int ret;

	for (;;) {
		ret = wait_event_interruptible(af->job_wq,
					       kfdsim_amdgpu_ring_room(af, ctx,
								       job->slot));
		if (ret)
			return ret;
		mutex_lock(&af->lock);
		if (kfdsim_amdgpu_ring_room(af, ctx, job->slot))
			break;
		mutex_unlock(&af->lock);
	}
	job->seq = ++ctx->seq[job->slot];
	*seq = job->seq;
	job->epoch = kfdsim_vm_epoch(&af->vm);
	atomic_inc(&ctx->jobs);
	spin_lock(&af->job_lock);
	list_add_tail(&job->link, &af->jobs);
	spin_unlock(&af->job_lock);
	mutex_unlock(&af->lock);
	queue_work(system_unbound_wq, &af->job_work);
	return 0;
}

int kfdsim_amdgpu_cs(struct drm_device *drm, void *data,
		     struct drm_file *file)
{
	struct kfdsim_amdgpu_file *af = to_amdgpu_file(file);
	union drm_amdgpu_cs *cs = data;
	struct kfdsim_amdgpu_job *job;
	u64 seq;
	int ret;

	if (!af->gpu)
		return -ENODEV;
	/* As amdgpu, the flags are not looked at. */
	if (!cs->in.num_chunks ||
	    cs->in.num_chunks > KFDSIM_AMDGPU_MAX_CHUNKS) {
		kfdsim_amdgpu_reject("CS: %u chunks (1 to %u)\n",
				     cs->in.num_chunks,
				     KFDSIM_AMDGPU_MAX_CHUNKS);
		return -EINVAL;
	}
	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job)
		return -ENOMEM;
	job->af = af;
	job->pid = task_tgid_nr(current);
	ret = kfdsim_amdgpu_cs_parse(file, &cs->in, job);
	if (ret)
		goto fail;
	job->ctx = kfdsim_amdgpu_ctx_get(af, cs->in.ctx_id);
	if (!job->ctx) {
		ret = -EINVAL;
		goto fail;
	}
	/* As amdgpu_cs_parser_init(): a guilty context takes no more work. */
	if (READ_ONCE(job->ctx->guilty)) {
		kfdsim_amdgpu_reject("CS: context %u had a job time out\n",
				     cs->in.ctx_id);
		ret = -ECANCELED;
		goto fail;
	}
	ret = kfdsim_amdgpu_job_fetch(af, job);
	if (ret)
		goto fail;
	ret = kfdsim_amdgpu_job_push(af, job, &seq);
	if (ret)
		goto fail;
	memset(cs, 0, sizeof(*cs));
	cs->out.handle = seq;
	return 0;

fail:
	kfdsim_amdgpu_job_free(job);
	return ret;
}

/*
 * As amdgpu_cs_wait_ioctl(): status 1 if the fence has not signalled by
 * the absolute timeout, else 0, or the job's error.
 */
int kfdsim_amdgpu_wait_cs(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct kfdsim_amdgpu_file *af = to_amdgpu_file(file);
	union drm_amdgpu_wait_cs *args = data;
	struct kfdsim_amdgpu_fence f;
	int ret, err = 0;
	long left;

	if (!af->gpu)
		return -ENODEV;
	ret = kfdsim_amdgpu_fence_get(af, args->in.ctx_id, args->in.ip_type,
				      args->in.ip_instance, args->in.ring,
				      args->in.handle, &f);
	if (ret)
		return ret;
	left = wait_event_interruptible_timeout(af->job_wq,
						kfdsim_amdgpu_fence_done(af, &f,
									 &err),
						kfdsim_amdgpu_timeout(args->in.timeout));
	kfdsim_amdgpu_ctx_put(f.ctx);
	if (left < 0)
		return left;
	if (left && err)
		return err;
	memset(args, 0, sizeof(*args));
	args->out.status = !left;
	return 0;
}

/* Has any of @f signalled? *@first: the first one that has, its error. */
static bool kfdsim_amdgpu_any_done(struct kfdsim_amdgpu_file *af,
				   const struct kfdsim_amdgpu_fence *f, u32 n,
				   u32 *first, int *err)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (kfdsim_amdgpu_fence_done(af, &f[i], err)) {
			*first = i;
			return true;
		}
	}
	return false;
}

/* Wait up to @left jiffies for one of @f; as wait_event_*_timeout(). */
static long kfdsim_amdgpu_wait_any(struct kfdsim_amdgpu_file *af,
				   const struct kfdsim_amdgpu_fence *f, u32 n,
				   u32 *first, int *err, long left)
{
	return wait_event_interruptible_timeout(af->job_wq,
						kfdsim_amdgpu_any_done(af, f, n,
								       first,
								       err),
						left);
}

/*
 * As amdgpu_cs_wait_fences_ioctl(): status 1 if all (wait_all) or any
 * fence signalled by the absolute timeout; a signalled fence's error is
 * returned (for "any", the first signalled one's).
 */
int kfdsim_amdgpu_wait_fences(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct kfdsim_amdgpu_file *af = to_amdgpu_file(file);
	union drm_amdgpu_wait_fences *args = data;
	u32 i, got = 0, first = U32_MAX, n = args->in.fence_count;
	bool all = args->in.wait_all;
	struct kfdsim_amdgpu_fence *f = NULL;
	struct drm_amdgpu_fence *fences;
	long left;
	int ret = 0, err = 0;

	if (!af->gpu)
		return -ENODEV;
	if (!n || n > KFDSIM_AMDGPU_MAX_FENCES || args->in.wait_all > 1)
		return -EINVAL;
	fences = memdup_user(u64_to_user_ptr(args->in.fences),
			     n * sizeof(*fences));
	if (IS_ERR(fences))
		return PTR_ERR(fences);
	f = kcalloc(n, sizeof(*f), GFP_KERNEL);
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	for (got = 0; got < n; got++) {
		ret = kfdsim_amdgpu_fence_get(af, fences[got].ctx_id,
					      fences[got].ip_type,
					      fences[got].ip_instance,
					      fences[got].ring,
					      fences[got].seq_no, &f[got]);
		if (ret)
			goto out;
	}

	left = kfdsim_amdgpu_timeout(args->in.timeout_ns);
	for (i = 0; all && i < n; i++) {
		left = kfdsim_amdgpu_wait_any(af, &f[i], 1, &first, &err, left);
		if (left <= 0)
			break;
		if (err) {
			ret = err;
			goto out;
		}
	}
	if (!all)
		left = kfdsim_amdgpu_wait_any(af, f, n, &first, &err, left);
	if (left < 0) {
		ret = left;
		goto out;
	}
	memset(args, 0, sizeof(*args));
	args->out.status = left > 0;
	args->out.first_signaled = first;
	if (left > 0 && !all)
		ret = err;
out:
	for (i = 0; i < got; i++)
		kfdsim_amdgpu_ctx_put(f[i].ctx);
	kfree(f);
	kfree(fences);
	return ret;
}
