// SPDX-License-Identifier: GPL-2.0
/*
 * CRIU RESTORE: rebuild a checkpointed process inside the freshly opened
 * /dev/kfd of the restored process, and RESUME's userptr step.
 *
 * Everything that comes in is untrusted. RESTORE copies in the buckets and
 * the private data and checks their structure in full (sizes, counts,
 * version, padding, object types) before it touches the process; the
 * rebuild (devices, BOs, events, queues) validates each object again as it
 * creates it. Whatever fails, the process is reset to its freshly opened
 * state and no fd is handed out, so the caller may retry. Queues stay
 * evicted, and userptr BOs unpinned, until the checkpointer sends RESUME.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/file.h>
#include <linux/kfd_ioctl.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kfd_criu.h"
#include "kfd_device_ops.h"
#include "kfd_priv.h"

/* Queues and events together cannot exceed this. */
#define KFD_CRIU_MAX_OBJECTS	(1024 + 2 * KFD_SIGNAL_EVENT_LIMIT)

#define rst_reject(fmt, ...) \
	pr_info_ratelimited("CRIU RESTORE: pid %d: " fmt, \
			    task_tgid_nr(current), ##__VA_ARGS__)

struct kfd_criu_rst {
	struct kfd_process *p;
	struct kfd_ioctl_criu_args *args;
	struct kfd_criu_device_bucket *devices;
	struct kfd_criu_bo_bucket *bos;
	u8 *priv;

	/* The objects of the private data, by type, in order. */
	const struct kfd_criu_process_v1 *proc;
	const struct kfd_criu_device_v1 *dev_objs[KFDSIM_MAX_GPUS];
	const struct kfd_criu_bo_v1 **bo_objs;
	const struct kfd_criu_queue_v1 **queue_objs;
	const struct kfd_criu_event_v1 **event_objs;
	u32 nr_dev, nr_bo, nr_queue, nr_event;
	u32 version;

	struct kfd_process_device *dev_pdd[KFDSIM_MAX_GPUS];
	struct file *drm_files[KFDSIM_MAX_GPUS];
	struct kfd_bo **bo_ptrs;
	struct dma_buf **dmabufs;
};

/* ---- structure of the input ---- */

/* Version 1: the queue alone; 2: its context save state follows. */
static bool kfd_rst_queue_size_ok(const struct kfd_criu_rst *r, u32 size,
				  const void *payload)
{
	const struct kfd_criu_queue_v1 *o = payload;
	const struct kfd_criu_cwsr_v2 *cw = (const void *)(o + 1);

	if (r->version < 2)
		return size == sizeof(*o);
	if (size < sizeof(*o) + sizeof(*cw) || cw->pad ||
	    cw->stack_bytes % sizeof(u32))
		return false;
	return size == sizeof(*o) + sizeof(*cw) +
		       ALIGN((u64)cw->stack_bytes, 8);
}

static int kfd_rst_take(struct kfd_criu_rst *r, u32 type, u32 size,
			const void *payload)
{
	u32 max_objects = r->args->num_objects;

	switch (type) {
	case KFD_CRIU_PROCESS:
		if (size != sizeof(*r->proc) || r->proc)
			break;
		r->proc = payload;
		return 0;
	case KFD_CRIU_DEVICE:
		if (size != sizeof(**r->dev_objs) ||
		    r->nr_dev >= r->args->num_devices)
			break;
		r->dev_objs[r->nr_dev++] = payload;
		return 0;
	case KFD_CRIU_BO:
		if (size != sizeof(**r->bo_objs) ||
		    r->nr_bo >= r->args->num_bos)
			break;
		r->bo_objs[r->nr_bo++] = payload;
		return 0;
	case KFD_CRIU_QUEUE:
		if (!kfd_rst_queue_size_ok(r, size, payload) ||
		    r->nr_queue + r->nr_event >= max_objects)
			break;
		r->queue_objs[r->nr_queue++] = payload;
		return 0;
	case KFD_CRIU_EVENT:
		if (size != sizeof(**r->event_objs) ||
		    r->nr_queue + r->nr_event >= max_objects)
			break;
		r->event_objs[r->nr_event++] = payload;
		return 0;
	default:
		rst_reject("unknown object type %u\n", type);
		return -EINVAL;
	}
	rst_reject("object of type %u: size %u, or one too many\n", type, size);
	return -EINVAL;
}

static int kfd_rst_parse(struct kfd_criu_rst *r)
{
	const struct kfd_criu_header *hdr = (const void *)r->priv;
	const struct kfd_criu_object *obj;
	u64 size = r->args->priv_data_size;
	u64 off = sizeof(*hdr);
	const struct kfd_criu_process_v1 *proc;
	u32 i;
	int ret;

	if (hdr->magic != KFD_CRIU_MAGIC) {
		rst_reject("private data has a bad magic 0x%x\n", hdr->magic);
		return -EINVAL;
	}
	if (!hdr->version || hdr->version > KFD_CRIU_VERSION) {
		rst_reject("private data version %u; this kernel restores 1 to %u\n",
			   hdr->version, KFD_CRIU_VERSION);
		return -EINVAL;
	}
	if (hdr->size != size) {
		rst_reject("header says %llu bytes, priv_data_size is %llu\n",
			   hdr->size, size);
		return -EINVAL;
	}
	if (hdr->pad) {
		rst_reject("header padding is 0x%x, not zero\n", hdr->pad);
		return -EINVAL;
	}
	r->version = hdr->version;
	for (i = 0; i < hdr->num_objects; i++) {
		if (size - off < sizeof(*obj)) {
			rst_reject("private data truncated at object %u\n", i);
			return -EINVAL;
		}
		obj = (const void *)(r->priv + off);
		off += sizeof(*obj);
		if (obj->size % 8 || obj->size > size - off) {
			rst_reject("object %u: size %u past the end\n", i,
				   obj->size);
			return -EINVAL;
		}
		ret = kfd_rst_take(r, obj->type, obj->size, r->priv + off);
		if (ret)
			return ret;
		off += obj->size;
	}
	if (off != size) {
		rst_reject("%llu bytes after the last object\n", size - off);
		return -EINVAL;
	}

	proc = r->proc;
	if (!proc || proc->flags || proc->pad ||
	    proc->num_devices != r->nr_dev ||
	    r->nr_dev != r->args->num_devices ||
	    proc->num_bos != r->nr_bo || r->nr_bo != r->args->num_bos ||
	    proc->num_queues != r->nr_queue ||
	    proc->num_events != r->nr_event ||
	    r->args->num_objects != r->nr_queue + r->nr_event) {
		rst_reject("object counts disagree with the process record or the arguments\n");
		return -EINVAL;
	}
	return 0;
}

/* ---- devices ---- */

static int kfd_rst_device_index(struct kfd_criu_rst *r, u32 user_gpu_id)
{
	u32 i;

	for (i = 0; i < r->nr_dev; i++)
		if (r->devices[i].user_gpu_id == user_gpu_id)
			return i;
	return -1;
}

static int kfd_rst_check_devices(struct kfd_criu_rst *r)
{
	struct kfd_criu_device_bucket *b;
	struct kfdsim_gpu *adev;
	struct kfd_dev *gpu;
	u32 i, j;

	for (i = 0; i < r->nr_dev; i++) {
		b = &r->devices[i];
		if (b->pad || r->dev_objs[i]->pad || !b->user_gpu_id ||
		    b->user_gpu_id > 0xffff ||
		    b->user_gpu_id != r->dev_objs[i]->user_gpu_id) {
			rst_reject("device %u: bad user_gpu_id %u or padding\n",
				   i, b->user_gpu_id);
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			if (r->devices[j].user_gpu_id == b->user_gpu_id ||
			    r->devices[j].actual_gpu_id == b->actual_gpu_id) {
				rst_reject("device %u: gpu_id used twice\n", i);
				return -EINVAL;
			}
		}
		gpu = kfd_device_by_id(b->actual_gpu_id);
		if (!gpu) {
			rst_reject("device %u: no local GPU %u\n", i,
				   b->actual_gpu_id);
			return -EINVAL;
		}
		r->drm_files[i] = fget(b->drm_fd);
		adev = r->drm_files[i] ?
		       amdgpu_amdkfd_render_file_device(r->drm_files[i]) : NULL;
		if (!adev) {
			rst_reject("device %u: fd %u is not a kfdsim DRM node\n",
				   i, b->drm_fd);
			return -EINVAL;
		}
		if (adev != gpu->adev) {
			rst_reject("device %u: fd %u is not GPU %u's node\n", i,
				   b->drm_fd, b->actual_gpu_id);
			return -EINVAL;
		}
		r->dev_pdd[i] = r->p->pdds[gpu->index];
		if (r->dev_pdd[i]->hidden) {
			rst_reject("device %u: GPU %u hidden by the device cgroup\n",
				   i, b->actual_gpu_id);
			return -EINVAL;
		}
	}
	return 0;
}

/* Bind the render files and give the GPUs their checkpointed gpu_ids. */
static int kfd_rst_devices(struct kfd_criu_rst *r)
{
	u32 i;
	int ret;

	/* GPUs the checkpointed process did not use stay invisible to it. */
	for (i = 0; i < kfd_num_devices; i++)
		r->p->pdds[i]->user_gpu_id = 0;
	for (i = 0; i < r->nr_dev; i++) {
		ret = kfd_pdd_bind(r->dev_pdd[i], r->drm_files[i], "RESTORE");
		if (ret)
			return ret;
		r->drm_files[i] = NULL;
		r->dev_pdd[i]->user_gpu_id = r->devices[i].user_gpu_id;
	}
	return 0;
}

/* ---- BOs ---- */

static int kfd_rst_bo(struct kfd_criu_rst *r, u32 i)
{
	const struct kfd_criu_bo_v1 *o = r->bo_objs[i];
	struct kfd_criu_bo_bucket *b = &r->bos[i];
	struct kfd_ioctl_alloc_memory_of_gpu_args a = {
		.va_addr = b->addr,
		.size = b->size,
		.mmap_offset = o->user_addr,
		.gpu_id = b->gpu_id,
		.flags = b->alloc_flags,
	};
	bool userptr = b->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR;
	unsigned long targets = 0;
	struct kfd_bo *bo;
	int dev, ret;
	u32 j;

	dev = kfd_rst_device_index(r, b->gpu_id);
	if (dev < 0 || b->pad || !o->id || o->id > INT_MAX ||
	    (userptr ? !o->user_addr : o->user_addr != 0) ||
	    o->mapped >> r->nr_dev) {
		rst_reject("BO %u: bad gpu_id %u, id, user address or mapping\n",
			   i, b->gpu_id);
		return -EINVAL;
	}
	ret = kfd_alloc_check(&a);
	if (ret)
		return ret;
	for (j = 0; j < r->nr_dev; j++)
		if (o->mapped & BIT(j))
			__set_bit(r->dev_pdd[j]->gpu->index, &targets);

	ret = kfd_bo_create(r->dev_pdd[dev], &a, o->id, true, &bo);
	if (ret)
		return ret;
	r->bo_ptrs[i] = bo;
	if (userptr) {
		bo->pending_map = targets;
		return 0;
	}
	if (kfd_criu_should_fail())
		return -ENOMEM;
	return kfd_bo_map(bo, targets);
}

/* ---- queues and events ---- */

/* Is [va, va + len) inside one BO that will be mapped on @pdd's GPU? */
static bool kfd_rst_va_planned(struct kfd_process_device *pdd, u64 va, u64 len,
			       bool write)
{
	struct interval_tree_node *node;
	struct kfd_bo *bo;

	if (!len || va + len < va)
		return false;
	node = interval_tree_iter_first(&pdd->p->va_tree, va, va + len - 1);
	if (!node)
		return false;
	bo = container_of(node, struct kfd_bo, va_node);
	if (va < bo->va || va + len > bo->va + bo->size)
		return false;
	if (!test_bit(pdd->gpu->index, &bo->mapped) &&
	    !test_bit(pdd->gpu->index, &bo->pending_map))
		return false;
	return !write || (bo->alloc_flags & (KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
					     KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL));
}

static int kfd_rst_queue(struct kfd_criu_rst *r, u32 i)
{
	const struct kfd_criu_queue_v1 *o = r->queue_objs[i];
	struct kfd_ioctl_create_queue_args a = {
		.ring_base_address = o->ring_va,
		.write_pointer_address = o->wptr_va,
		.read_pointer_address = o->rptr_va,
		.ring_size = o->ring_size,
		.gpu_id = o->user_gpu_id,
		.queue_type = o->type,
		.queue_percentage = o->percentage,
		.queue_priority = o->priority,
		.eop_buffer_address = o->eop_va,
		.eop_buffer_size = o->eop_size,
		.ctx_save_restore_address = o->ctx_save_va,
		.ctx_save_restore_size = o->ctx_save_size,
		.ctl_stack_size = o->ctl_stack_size,
	};
	struct kfdsim_queue_state st = {
		.rptr = o->rptr,
		.progress = { o->iteration, o->next_wg },
		.flags = o->state_flags,
	};
	const struct kfd_criu_cwsr_v2 *cw;
	struct kfdsim_cwsr in = {};
	struct kfd_queue *q;
	struct kfd_process_device *pdd;
	int dev, ret;

	dev = kfd_rst_device_index(r, o->user_gpu_id);
	if (dev < 0 || o->pad || o->pad2 || o->id >= 1024 ||
	    o->doorbell >= KFDSIM_DOORBELLS_PER_SLICE) {
		rst_reject("queue %u: bad gpu_id %u, id, doorbell or padding\n",
			   i, o->user_gpu_id);
		return -EINVAL;
	}
	pdd = r->dev_pdd[dev];
	if (!kfd_rst_va_planned(pdd, o->ring_va, o->ring_size,
				o->type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL) ||
	    !kfd_rst_va_planned(pdd, o->rptr_va, sizeof(u64), true) ||
	    !kfd_rst_va_planned(pdd, o->wptr_va, sizeof(u64), false)) {
		rst_reject("queue %u: ring or pointers not in memory mapped on its GPU\n",
			   o->id);
		return -EINVAL;
	}
	ret = kfd_queue_create(pdd, &a, o->id, o->doorbell, false);
	if (ret)
		return ret;
	q = idr_find(&r->p->queues, o->id);
	if (r->version >= 2) {
		cw = (const void *)(o + 1);
		in.cntl_stack_offset = cw->cntl_stack_offset;
		in.wg_state_offset = cw->wg_state_offset;
		in.cntl_stack = (u32 *)(cw + 1);
		/* The stack in the image is what the offset says, no more. */
		if (cw->cntl_stack_offset > q->ctl_stack_size ||
		    cw->stack_bytes != (q->cwsr.cntl_stack ?
					q->ctl_stack_size -
					cw->cntl_stack_offset : 0)) {
			rst_reject("queue %u: control stack of %u bytes at 0x%x does not fit\n",
				   o->id, cw->stack_bytes,
				   cw->cntl_stack_offset);
			return -EINVAL;
		}
	}
	ret = pdd->gpu->ops->restore_mqd(pdd->gpu->adev, q, &st,
					 r->version >= 2 ? &in : NULL);
	if (ret) {
		rst_reject("queue %u: bad saved state or control stack\n",
			   o->id);
		return ret;
	}
	WRITE_ONCE(*kfd_doorbell_slot(pdd, o->doorbell), o->doorbell_value);
	return 0;
}

static int kfd_rst_event(struct kfd_criu_rst *r, u32 i)
{
	const struct kfd_criu_event_v1 *o = r->event_objs[i];
	int ret;

	if (o->auto_reset > 1 || o->signaled > 1) {
		rst_reject("event %u: bad flags\n", o->id);
		return -EINVAL;
	}
	ret = kfd_event_restore(r->p, o->id, o->type, o->auto_reset,
				o->signaled);
	/* A taken id or a full table here means malformed input. */
	if (ret == -EEXIST || ret == -ENOSPC) {
		rst_reject("event %u: duplicate id or too many events\n", o->id);
		ret = -EINVAL;
	}
	return ret;
}

/* ---- the op ---- */

static int kfd_rst_export(struct kfd_criu_rst *r)
{
	struct kfd_criu_bo_bucket *b;
	struct kfd_bo *bo;
	u32 i;
	int fd;

	for (i = 0; i < r->nr_bo; i++) {
		bo = r->bo_ptrs[i];
		b = &r->bos[i];
		b->restored_offset = kfd_bo_mmap_offset(bo);
		b->dmabuf_fd = KFD_INVALID_FD;
		if (!kfd_criu_bo_has_contents(bo))
			continue;
		fd = kfd_criu_export_bo(bo, &r->dmabufs[i]);
		if (fd < 0)
			return fd;
		b->dmabuf_fd = fd;
	}
	return 0;
}

static bool kfd_rst_process_is_fresh(struct kfd_process *p)
{
	unsigned int i;

	for (i = 0; i < kfd_num_devices; i++)
		if (p->pdds[i]->drm_file || !idr_is_empty(&p->pdds[i]->bo_idr))
			return false;
	return idr_is_empty(&p->queues) && !kfd_events_count(p) &&
	       !p->evict_count && !p->criu_pauser && !p->criu_restore_pending;
}

static int kfd_rst_copy_in(struct kfd_criu_rst *r)
{
	struct kfd_ioctl_criu_args *args = r->args;

	if (args->num_devices > kfd_num_devices) {
		rst_reject("the checkpoint used %u GPUs, this node has %u\n",
			   args->num_devices, kfd_num_devices);
		return -EINVAL;
	}
	if (args->num_bos > KFD_CRIU_MAX_BOS ||
	    args->num_objects > KFD_CRIU_MAX_OBJECTS ||
	    args->priv_data_size < sizeof(struct kfd_criu_header) ||
	    args->priv_data_size > KFD_CRIU_MAX_PRIV_SIZE) {
		rst_reject("%u BOs, %u objects, %llu bytes of private data: out of range\n",
			   args->num_bos, args->num_objects,
			   args->priv_data_size);
		return -EINVAL;
	}

	/* Each only if the one before succeeded: the first failure ends it. */
	r->devices = kfd_criu_kvzalloc(args->num_devices + 1,
				       sizeof(*r->devices));
	if (r->devices)
		r->bos = kfd_criu_kvzalloc(args->num_bos + 1, sizeof(*r->bos));
	if (r->bos)
		r->bo_objs = kfd_criu_kvzalloc(args->num_bos + 1,
					       sizeof(*r->bo_objs));
	if (r->bo_objs)
		r->bo_ptrs = kfd_criu_kvzalloc(args->num_bos + 1,
					       sizeof(*r->bo_ptrs));
	if (r->bo_ptrs)
		r->dmabufs = kfd_criu_kvzalloc(args->num_bos + 1,
					       sizeof(*r->dmabufs));
	if (r->dmabufs)
		r->queue_objs = kfd_criu_kvzalloc(args->num_objects + 1,
						  sizeof(*r->queue_objs));
	if (r->queue_objs)
		r->event_objs = kfd_criu_kvzalloc(args->num_objects + 1,
						  sizeof(*r->event_objs));
	if (r->event_objs)
		r->priv = kfd_criu_kvzalloc(1, args->priv_data_size);
	if (!r->priv) {
		rst_reject("no memory for %u BOs, %u objects, %llu bytes of private data\n",
			   args->num_bos, args->num_objects,
			   args->priv_data_size);
		return -ENOMEM;
	}

	if (kfd_criu_should_fail() ||
	    copy_from_user(r->devices, u64_to_user_ptr(args->devices),
			   args->num_devices * sizeof(*r->devices)) ||
	    copy_from_user(r->bos, u64_to_user_ptr(args->bos),
			   args->num_bos * sizeof(*r->bos)) ||
	    copy_from_user(r->priv, u64_to_user_ptr(args->priv_data),
			   args->priv_data_size))
		return -EFAULT;
	return 0;
}

static int kfd_rst_rebuild(struct kfd_criu_rst *r)
{
	u32 i;
	int ret;

	ret = kfd_rst_devices(r);
	for (i = 0; !ret && i < r->nr_bo; i++)
		ret = kfd_rst_bo(r, i);
	if (!ret && r->proc->events_page)
		ret = kfd_events_set_page_bo(r->p, r->proc->events_page);
	for (i = 0; !ret && i < r->nr_event; i++)
		ret = kfd_rst_event(r, i);
	if (ret)
		return ret;

	/* From here on the queues exist, but run only after RESUME. */
	ret = kfd_process_evict_queues(r->p);
	if (ret)
		return ret;
	r->p->criu_restore_pending = true;
	for (i = 0; !ret && i < r->nr_queue; i++)
		ret = kfd_rst_queue(r, i);
	if (!ret)
		ret = kfd_rst_export(r);
	return ret;
}

static void kfd_rst_release(struct kfd_criu_rst *r, bool success)
{
	u32 i;

	for (i = 0; r->dmabufs && i < r->nr_bo; i++) {
		if (!r->dmabufs[i])
			continue;
		if (success) {
			fd_install(r->bos[i].dmabuf_fd, r->dmabufs[i]->file);
		} else {
			put_unused_fd(r->bos[i].dmabuf_fd);
			dma_buf_put(r->dmabufs[i]);
		}
	}
	for (i = 0; i < KFDSIM_MAX_GPUS; i++)
		if (r->drm_files[i])
			fput(r->drm_files[i]);
	kvfree(r->devices);
	kvfree(r->bos);
	kvfree(r->bo_objs);
	kvfree(r->bo_ptrs);
	kvfree(r->dmabufs);
	kvfree(r->queue_objs);
	kvfree(r->event_objs);
	kvfree(r->priv);
}

int kfd_criu_restore(struct kfd_process *p,
		     struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_rst r = { .p = p, .args = args };
	bool touched = false;
	int ret;

	/* User copies may fault: none of them runs under the process lock. */
	ret = kfd_rst_copy_in(&r);
	if (ret)
		goto out_release;

	mutex_lock(&p->lock);
	if (!kfd_rst_process_is_fresh(p)) {
		rst_reject("needs a freshly opened /dev/kfd with nothing in it\n");
		ret = -EINVAL;
		goto out_unlock;
	}
	ret = kfd_rst_parse(&r);
	if (!ret)
		ret = kfd_rst_check_devices(&r);
	if (!ret) {
		touched = true;
		ret = kfd_rst_rebuild(&r);
	}
	if (ret && touched)
		kfd_process_reset(p);
out_unlock:
	mutex_unlock(&p->lock);

	if (!ret) {
		ret = kfd_criu_copy_to_user(args->bos, r.bos,
					    r.nr_bo * sizeof(*r.bos));
		if (ret) {
			mutex_lock(&p->lock);
			kfd_process_reset(p);
			mutex_unlock(&p->lock);
		}
	}
out_release:
	kfd_rst_release(&r, !ret);
	return ret;
}

/**
 * kfd_criu_resume_userptrs - pin and map the userptr BOs of a restore
 * @p: the restored process; its lock must be held
 *
 * At RESUME the process's memory is back in place, so the pages behind its
 * userptr BOs can finally be pinned (in @p's address space, from the
 * checkpointer's context) and mapped on the GPUs they were mapped on.
 *
 * Return: 0, or an errno (the BOs done so far stay done; RESUME may be
 * retried).
 */
int kfd_criu_resume_userptrs(struct kfd_process *p)
{
	struct kfd_bo *bo;
	unsigned int i;
	int id, ret;

	lockdep_assert_held(&p->lock);
	for (i = 0; i < kfd_num_devices; i++) {
		idr_for_each_entry(&p->pdds[i]->bo_idr, bo, id) {
			if (!(bo->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR))
				continue;
			if (!bo->gem) {
				if (kfd_criu_should_fail())
					return -ENOMEM;
				ret = kfd_bo_pin_userptr(bo, p->mm);
				if (ret)
					return ret;
			}
			if (!bo->pending_map)
				continue;
			if (kfd_criu_should_fail())
				return -ENOMEM;
			ret = kfd_bo_map(bo, bo->pending_map);
			if (ret)
				return ret;
			bo->pending_map = 0;
		}
	}
	return 0;
}
