// SPDX-License-Identifier: GPL-2.0
/*
 * The KFD CRIU ioctl (AMDKFD_IOC_CRIU_OP): PROCESS_INFO, CHECKPOINT, UNPAUSE
 * and RESUME live here, RESTORE in kfd_criu_restore.c.
 *
 * The checkpointer (CRIU, the target's ptrace tracer) calls PROCESS_INFO,
 * CHECKPOINT and UNPAUSE on the target's /dev/kfd file. PROCESS_INFO pauses
 * (evicts) the target's queues; the pause ends with UNPAUSE, or when the
 * checkpointer closes any descriptor of that file without unpausing (for
 * instance because it died), so a target is never left frozen.
 * See Documentation/criu.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/kfd_ioctl.h>
#include <linux/pid_namespace.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kfd_criu.h"
#include "kfd_device_ops.h"
#include "kfd_priv.h"

/* ---- fault injection ---- */

/*
 * Fault injection for tests (debugfs criu_fail_nth and criu_fail_points).
 * Arming records the writer's thread group: only its calls pass points, so
 * other processes (a checkpointed worker, a concurrent test) can neither
 * fire nor count them.
 */
static DEFINE_SPINLOCK(kfd_fault_lock);
static struct pid *kfd_fault_tgid;	/* whose calls count; NULL: nobody's */
static int kfd_fault_nth;		/* points left before the failure */
static unsigned int kfd_fault_points;	/* points passed since arming */

/**
 * kfd_criu_should_fail - a fault injection point
 *
 * Every allocation, export and user copy of the CRIU ops, and of the
 * helpers they share with the ordinary ioctls (kfd_bo_create(),
 * kfd_queue_create(), the events page and event table), passes one of
 * these calls first. Once armed through debugfs (criu_fail_nth = N) by a
 * process, that process's Nth call returns true (once); each of its
 * calls until disarmed is counted (criu_fail_points).
 *
 * Return: true if the caller must fail as if its allocation had failed.
 */
bool kfd_criu_should_fail(void)
{
	bool fail = false;

	if (!READ_ONCE(kfd_fault_tgid))
		return false;
	spin_lock(&kfd_fault_lock);
	if (kfd_fault_tgid == task_tgid(current)) {
		kfd_fault_points++;
		fail = kfd_fault_nth > 0 && !--kfd_fault_nth;
	}
	spin_unlock(&kfd_fault_lock);
	if (fail)
		pr_info("injected failure at point %u\n", kfd_fault_points);
	return fail;
}

/*
 * @n > 0 arms for the caller's thread group: its @n-th point fails, and the
 * count of points passed starts from 0. @n == 0 disarms and stops counting;
 * the count stays readable.
 */
void kfd_criu_set_fail_nth(int n)
{
	struct pid *old, *pid = n > 0 ? get_pid(task_tgid(current)) : NULL;

	spin_lock(&kfd_fault_lock);
	old = kfd_fault_tgid;
	WRITE_ONCE(kfd_fault_tgid, pid);
	kfd_fault_nth = max(n, 0);
	if (pid)
		kfd_fault_points = 0;
	spin_unlock(&kfd_fault_lock);
	put_pid(old);
}

int kfd_criu_get_fail_nth(void)
{
	return READ_ONCE(kfd_fault_nth);
}

unsigned int kfd_criu_get_fail_points(void)
{
	return READ_ONCE(kfd_fault_points);
}

void *kfd_criu_kvzalloc(size_t n, size_t size)
{
	if (kfd_criu_should_fail())
		return NULL;
	/* Sizes come from the caller (RESTORE's image): charge it. */
	return kvcalloc(n, size, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
			__GFP_NOWARN);
}

int kfd_criu_copy_to_user(u64 uptr, const void *src, size_t len)
{
	if (kfd_criu_should_fail() ||
	    copy_to_user(u64_to_user_ptr(uptr), src, len))
		return -EFAULT;
	return 0;
}

/* VRAM and GTT BOs have contents the checkpointer copies via dma-bufs. */
bool kfd_criu_bo_has_contents(const struct kfd_bo *bo)
{
	return bo->alloc_flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
				  KFD_IOC_ALLOC_MEM_FLAGS_GTT);
}

/**
 * kfd_criu_export_bo - export a BO's contents for CHECKPOINT or RESTORE
 * @bo: a VRAM or GTT BO
 * @dmabuf: receives the dma-buf (readable and writable)
 *
 * The fd is only reserved: the op installs it with fd_install() once
 * nothing can fail any more, or undoes both with put_unused_fd() and
 * dma_buf_put().
 *
 * Return: the reserved fd, or a negative errno with nothing left behind.
 */
int kfd_criu_export_bo(struct kfd_bo *bo, struct dma_buf **dmabuf)
{
	struct kfd_dev *dev = bo->pdd->gpu;
	struct dma_buf *buf;
	int fd;

	if (kfd_criu_should_fail())
		return -ENOMEM;
	buf = dev->ops->export_dmabuf(dev->adev, bo->gem, O_RDWR);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	fd = kfd_criu_should_fail() ? -EMFILE : get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(buf);
		return fd;
	}
	*dmabuf = buf;
	return fd;
}

/* ---- sizes and counts ---- */

struct kfd_criu_counts {
	u32 num_devices;
	u32 num_bos;
	u32 num_queues;
	u32 num_events;
	u64 priv_size;
};

/* Bytes an object with a payload of @size takes in the private data. */
#define KFD_CRIU_OBJ(size)	(sizeof(struct kfd_criu_object) + (size))

/* A QUEUE payload: the queue, its context save state, its control stack. */
static u32 kfd_criu_queue_size(const struct kfd_queue *q)
{
	u32 used = 0;

	if (q->cwsr.cntl_stack)
		used = q->cwsr.cntl_stack_size -
		       READ_ONCE(q->cwsr.cntl_stack_offset);
	return sizeof(struct kfd_criu_queue_v1) +
	       sizeof(struct kfd_criu_cwsr_v2) + ALIGN(used, 8);
}

static int kfd_criu_count(struct kfd_process *p, struct kfd_criu_counts *c)
{
	struct kfd_queue *q;
	struct kfd_bo *bo;
	unsigned int i;
	int id, events;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < kfd_num_devices; i++) {
		if (!p->pdds[i]->drm_file)
			continue;
		c->num_devices++;
		idr_for_each_entry(&p->pdds[i]->bo_idr, bo, id)
			c->num_bos++;
	}
	idr_for_each_entry(&p->queues, q, id) {
		c->num_queues++;
		c->priv_size += KFD_CRIU_OBJ(kfd_criu_queue_size(q));
	}
	events = kfd_events_count(p);
	if (events < 0)
		return events;
	c->num_events = events;

	c->priv_size += sizeof(struct kfd_criu_header) +
		KFD_CRIU_OBJ(sizeof(struct kfd_criu_process_v1)) +
		c->num_devices * KFD_CRIU_OBJ(sizeof(struct kfd_criu_device_v1)) +
		c->num_bos * KFD_CRIU_OBJ(sizeof(struct kfd_criu_bo_v1)) +
		c->num_events * KFD_CRIU_OBJ(sizeof(struct kfd_criu_event_v1));
	return 0;
}

/* ---- PROCESS_INFO / UNPAUSE ---- */

static void kfd_criu_unpause_locked(struct kfd_process *p)
{
	lockdep_assert_held(&p->lock);
	kfd_process_restore_queues(p);
	put_pid(p->criu_pauser);
	p->criu_pauser = NULL;
}

static int kfd_criu_process_info(struct kfd_process *p,
				 struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_counts c;
	struct pid_namespace *ns;
	bool paused_here = false;
	int ret;

	mutex_lock(&p->lock);
	if (p->criu_restore_pending) {
		pr_info_ratelimited("CRIU PROCESS_INFO: process waits for RESUME\n");
		ret = -EBUSY;
		goto out_unlock;
	}
	/* A second PROCESS_INFO of the same pause only recounts. */
	if (!p->criu_pauser) {
		/* A fault point stands for a queue that does not preempt in
		 * time, which upstream's eviction reports as -ETIME.
		 */
		if (!p->evict_count && kfd_criu_should_fail())
			ret = -ETIME;
		else
			ret = kfd_process_evict_queues(p);
		if (ret)
			goto out_unlock;
		p->criu_pauser = get_pid(task_tgid(current));
		paused_here = true;
	}
	ret = kfd_criu_count(p, &c);
	if (ret)
		goto out_unpause;

	args->num_devices = c.num_devices;
	args->num_bos = c.num_bos;
	args->num_objects = c.num_queues + c.num_events;
	args->priv_data_size = c.priv_size;
	rcu_read_lock();
	ns = task_active_pid_ns(p->lead_thread);
	args->pid = ns ? task_tgid_nr_ns(p->lead_thread, ns) : 0;
	rcu_read_unlock();
	mutex_unlock(&p->lock);
	return 0;

out_unpause:
	if (paused_here)
		kfd_criu_unpause_locked(p);
out_unlock:
	mutex_unlock(&p->lock);
	return ret;
}

static int kfd_criu_unpause(struct kfd_process *p)
{
	int ret = 0;

	mutex_lock(&p->lock);
	if (p->criu_pauser && kfd_criu_should_fail()) {
		/*
		 * Restarting the queues failed (upstream's restore may): the
		 * process stays paused, UNPAUSE may be retried, and closing
		 * the checkpointer's last descriptor still resumes it.
		 */
		ret = -ETIME;
	} else if (p->criu_pauser) {
		kfd_criu_unpause_locked(p);
	} else {
		pr_info_ratelimited("CRIU UNPAUSE: process is not paused\n");
		ret = -EINVAL;
	}
	mutex_unlock(&p->lock);
	return ret;
}

/* iterate_fd() callback: is @f a /dev/kfd file of the same process as @kfd? */
static int kfd_criu_same_process(const void *kfd, struct file *f,
				 unsigned int fd)
{
	const struct file *filp = kfd;

	return f->f_op == filp->f_op && f->private_data == filp->private_data;
}

/**
 * kfd_criu_file_flush - a descriptor of a /dev/kfd file is being closed
 * @filp: the file, of the process that may be paused
 *
 * If the closer paused the process, did not unpause it and now holds no
 * other descriptor of a /dev/kfd file of that process, it gave up on the
 * checkpoint (or died: its files are then closed with its file table
 * already gone): resume the process's queues. Closing one of several
 * descriptors is an ordinary close (CRIU closes its copy of each dumped
 * file while the plugin keeps the process paused through a dup of it).
 * The closed descriptor is no longer in the table when ->flush runs.
 */
void kfd_criu_file_flush(struct file *filp)
{
	struct kfd_process *p = filp->private_data;

	if (!READ_ONCE(p->criu_pauser))
		return;
	if (iterate_fd(current->files, 0, kfd_criu_same_process, filp))
		return;
	mutex_lock(&p->lock);
	if (p->criu_pauser == task_tgid(current)) {
		pr_info("CRIU: checkpointer %d closed its last /dev/kfd descriptor of the process without UNPAUSE, resuming the process\n",
			task_tgid_nr(current));
		kfd_criu_unpause_locked(p);
	}
	mutex_unlock(&p->lock);
}

/* ---- CHECKPOINT ---- */

/*
 * Everything CHECKPOINT hands out. The dma-buf fds are reserved while the
 * buckets are filled and installed only once nothing can fail any more.
 */
struct kfd_criu_dump {
	struct kfd_process *p;
	struct kfd_criu_counts c;
	struct kfd_criu_device_bucket *devices;
	struct kfd_criu_bo_bucket *bos;
	struct dma_buf **dmabufs;
	u8 *priv;
	u64 priv_used;
	u32 num_objects;
	u32 events_seen;
	int dev_index[KFDSIM_MAX_GPUS];
};

static void *kfd_criu_put_obj(struct kfd_criu_dump *d, u32 type, u32 size)
{
	struct kfd_criu_object *obj = (void *)(d->priv + d->priv_used);

	if (d->priv_used + sizeof(*obj) + size > d->c.priv_size)
		return NULL;
	obj->type = type;
	obj->size = size;
	d->priv_used += sizeof(*obj) + size;
	d->num_objects++;
	return obj + 1;
}

static int kfd_criu_dump_devices(struct kfd_criu_dump *d)
{
	struct kfd_criu_device_v1 *dev;
	struct kfd_process_device *pdd;
	unsigned int i, n = 0;

	for (i = 0; i < kfd_num_devices; i++) {
		pdd = d->p->pdds[i];
		d->dev_index[i] = -1;
		if (!pdd->drm_file)
			continue;
		dev = kfd_criu_put_obj(d, KFD_CRIU_DEVICE, sizeof(*dev));
		if (!dev)
			return -EINVAL;
		dev->user_gpu_id = pdd->user_gpu_id;
		d->devices[n].user_gpu_id = pdd->user_gpu_id;
		d->devices[n].actual_gpu_id = pdd->gpu->gpu_id;
		d->dev_index[i] = n++;
	}
	return 0;
}

static int kfd_criu_dump_bo(struct kfd_criu_dump *d, struct kfd_bo *bo,
			    unsigned int n)
{
	struct kfd_criu_bo_bucket *b = &d->bos[n];
	struct kfd_process_device *pdd = bo->pdd;
	struct kfd_criu_bo_v1 *obj;
	unsigned int i;
	int fd;

	obj = kfd_criu_put_obj(d, KFD_CRIU_BO, sizeof(*obj));
	if (!obj)
		return -EINVAL;
	obj->id = bo->id;
	obj->user_addr = bo->user_addr;
	for_each_set_bit(i, &bo->mapped, KFDSIM_MAX_GPUS)
		obj->mapped |= BIT(d->dev_index[i]);

	b->addr = bo->va;
	b->size = bo->size;
	b->offset = kfd_bo_mmap_offset(bo);
	b->gpu_id = pdd->user_gpu_id;
	b->alloc_flags = bo->alloc_flags;
	b->dmabuf_fd = KFD_INVALID_FD;
	if (!kfd_criu_bo_has_contents(bo))
		return 0;
	fd = kfd_criu_export_bo(bo, &d->dmabufs[n]);
	if (fd < 0)
		return fd;
	b->dmabuf_fd = fd;
	return 0;
}

static int kfd_criu_dump_bos(struct kfd_criu_dump *d)
{
	struct kfd_bo *bo;
	unsigned int i, n = 0;
	int id, ret;

	for (i = 0; i < kfd_num_devices; i++) {
		idr_for_each_entry(&d->p->pdds[i]->bo_idr, bo, id) {
			if (n == d->c.num_bos)
				return -EINVAL;
			ret = kfd_criu_dump_bo(d, bo, n++);
			if (ret)
				return ret;
		}
	}
	return n == d->c.num_bos ? 0 : -EINVAL;
}

static int kfd_criu_dump_queues(struct kfd_criu_dump *d)
{
	struct kfdsim_queue_state st;
	struct kfd_criu_cwsr_v2 *cw;
	struct kfdsim_cwsr snap;
	struct kfd_criu_queue_v1 *o;
	u32 size;
	struct kfd_queue *q;
	struct kfd_dev *dev;
	int id, ret;

	idr_for_each_entry(&d->p->queues, q, id) {
		size = kfd_criu_queue_size(q);
		o = kfd_criu_put_obj(d, KFD_CRIU_QUEUE, size);
		if (!o)
			return -EINVAL;
		dev = q->pdd->gpu;
		ret = dev->ops->checkpoint_mqd(dev->adev, q, &st);
		if (ret)
			return ret;
		/* As amdkfd's checkpoint_mqd() copies the control stack. */
		cw = (void *)(o + 1);
		if (q->cwsr.cntl_stack) {
			ret = dev->ops->get_wave_state(dev->adev, q, &snap,
						       cw + 1, size - sizeof(*o) -
						       sizeof(*cw));
			if (ret)
				return -EINVAL;
			cw->cntl_stack_offset = snap.cntl_stack_offset;
			cw->wg_state_offset = snap.wg_state_offset;
			cw->stack_bytes = snap.cntl_stack_size -
					  snap.cntl_stack_offset;
		}
		o->id = q->id;
		o->user_gpu_id = q->pdd->user_gpu_id;
		o->type = q->type;
		o->doorbell = q->doorbell;
		o->ring_va = q->ring_va;
		o->ring_size = q->ring_size;
		o->percentage = q->percentage;
		o->rptr_va = q->rptr_va;
		o->wptr_va = q->wptr_va;
		o->priority = q->priority;
		o->ctx_save_size = q->ctx_save_size;
		o->eop_va = q->eop_va;
		o->eop_size = q->eop_size;
		o->ctx_save_va = q->ctx_save_va;
		o->ctl_stack_size = q->ctl_stack_size;
		o->doorbell_value =
			READ_ONCE(*kfd_doorbell_slot(q->pdd, q->doorbell));
		o->rptr = st.rptr;
		o->iteration = st.progress.iteration;
		o->next_wg = st.progress.next_wg;
		o->state_flags = st.flags;
	}
	return 0;
}

static int kfd_criu_dump_event(void *ctx, u32 id, u32 type, bool auto_reset,
			       bool signaled)
{
	struct kfd_criu_dump *d = ctx;
	struct kfd_criu_event_v1 *o;

	/* Events created since PROCESS_INFO counted them do not fit. */
	if (++d->events_seen > d->c.num_events)
		return -EINVAL;
	o = kfd_criu_put_obj(d, KFD_CRIU_EVENT, sizeof(*o));
	if (!o)
		return -EINVAL;
	o->id = id;
	o->type = type;
	o->auto_reset = auto_reset;
	o->signaled = signaled;
	return 0;
}

static int kfd_criu_dump_all(struct kfd_criu_dump *d)
{
	struct kfd_criu_header *hdr = (void *)d->priv;
	struct kfd_criu_process_v1 *proc;
	int ret;

	d->priv_used = sizeof(*hdr);
	proc = kfd_criu_put_obj(d, KFD_CRIU_PROCESS, sizeof(*proc));
	if (!proc)
		return -EINVAL;
	proc->num_devices = d->c.num_devices;
	proc->num_bos = d->c.num_bos;
	proc->num_queues = d->c.num_queues;
	proc->num_events = d->c.num_events;
	proc->events_page = kfd_events_page_handle(d->p);

	ret = kfd_criu_dump_devices(d);
	if (!ret)
		ret = kfd_criu_dump_bos(d);
	if (!ret)
		ret = kfd_criu_dump_queues(d);
	if (!ret)
		ret = kfd_events_for_each(d->p, kfd_criu_dump_event, d);
	if (ret)
		return ret;
	if (d->events_seen != d->c.num_events ||
	    d->priv_used != d->c.priv_size)
		return -EINVAL;

	hdr->magic = KFD_CRIU_MAGIC;
	hdr->version = KFD_CRIU_VERSION;
	hdr->size = d->priv_used;
	hdr->num_objects = d->num_objects;
	return 0;
}

static void kfd_criu_dump_release(struct kfd_criu_dump *d, bool installed)
{
	u32 i;

	for (i = 0; d->dmabufs && i < d->c.num_bos; i++) {
		if (!d->dmabufs[i])
			continue;
		if (installed) {
			fd_install(d->bos[i].dmabuf_fd, d->dmabufs[i]->file);
		} else {
			put_unused_fd(d->bos[i].dmabuf_fd);
			dma_buf_put(d->dmabufs[i]);
		}
	}
	kvfree(d->dmabufs);
	kvfree(d->devices);
	kvfree(d->bos);
	kvfree(d->priv);
}

static int kfd_criu_checkpoint(struct kfd_process *p,
			       struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_dump d = { .p = p };
	int ret;

	mutex_lock(&p->lock);
	if (!p->criu_pauser) {
		pr_info_ratelimited("CRIU CHECKPOINT: call PROCESS_INFO first\n");
		ret = -EINVAL;
		goto out_unlock;
	}
	ret = kfd_criu_count(p, &d.c);
	if (ret)
		goto out_release;
	if (args->num_devices != d.c.num_devices ||
	    args->num_bos != d.c.num_bos ||
	    args->num_objects != d.c.num_queues + d.c.num_events ||
	    args->priv_data_size != d.c.priv_size) {
		pr_info_ratelimited("CRIU CHECKPOINT: counts differ from PROCESS_INFO's\n");
		ret = -EINVAL;
		goto out_release;
	}

	/* Each only if the one before succeeded: the first failure ends it. */
	ret = -ENOMEM;
	d.devices = kfd_criu_kvzalloc(d.c.num_devices, sizeof(*d.devices));
	if (d.devices)
		d.bos = kfd_criu_kvzalloc(d.c.num_bos, sizeof(*d.bos));
	if (d.bos)
		d.dmabufs = kfd_criu_kvzalloc(d.c.num_bos, sizeof(*d.dmabufs));
	if (d.dmabufs)
		d.priv = kfd_criu_kvzalloc(1, d.c.priv_size);
	if (!d.priv) {
		pr_info_ratelimited("CRIU CHECKPOINT: no memory for the tables of %u BOs, %llu bytes of private data\n",
				    d.c.num_bos, d.c.priv_size);
		goto out_release;
	}

	ret = kfd_criu_dump_all(&d);
	if (ret)
		goto out_release;
	mutex_unlock(&p->lock);

	/* The user copies may fault, so they run without the process lock. */
	ret = kfd_criu_copy_to_user(args->devices, d.devices,
				    d.c.num_devices * sizeof(*d.devices));
	if (!ret)
		ret = kfd_criu_copy_to_user(args->bos, d.bos,
					    d.c.num_bos * sizeof(*d.bos));
	if (!ret)
		ret = kfd_criu_copy_to_user(args->priv_data, d.priv,
					    d.c.priv_size);
	if (!ret) {
		kfd_criu_dump_release(&d, true);
		return 0;
	}
	mutex_lock(&p->lock);
out_release:
	kfd_criu_dump_release(&d, false);
	/* A failed checkpoint leaves the target running. */
	if (p->criu_pauser)
		kfd_criu_unpause_locked(p);
out_unlock:
	mutex_unlock(&p->lock);
	return ret;
}

/* ---- RESUME ---- */

/*
 * The target of RESUME, by pid in the caller's pid namespace. The caller
 * passed the CRIU capability check (in the initial user namespace), which
 * is the permission upstream requires as well.
 */
static struct kfd_process *kfd_criu_find_target(pid_t pid)
{
	struct kfd_process *target = NULL;
	struct task_struct *task;
	struct mm_struct *mm;

	rcu_read_lock();
	task = get_pid_task(find_vpid(pid), PIDTYPE_PID);
	rcu_read_unlock();
	if (!task)
		return ERR_PTR(-ESRCH);
	mm = get_task_mm(task);
	if (mm) {
		target = kfd_process_find_mm(mm);
		mmput(mm);
	}
	put_task_struct(task);
	return target ? target : ERR_PTR(-ESRCH);
}

static int kfd_criu_resume(struct kfd_ioctl_criu_args *args)
{
	struct kfd_process *target;
	int ret;

	target = kfd_criu_find_target(args->pid);
	if (IS_ERR(target)) {
		/* -ESRCH: not a KFD process, which plugins treat as "not mine" */
		pr_debug("CRIU RESUME: pid %u: %ld\n", args->pid,
			 PTR_ERR(target));
		return PTR_ERR(target);
	}

	mutex_lock(&target->lock);
	if (!target->criu_restore_pending) {
		pr_info_ratelimited("CRIU RESUME: pid %u was not restored\n",
				    args->pid);
		ret = -EINVAL;
		goto out_unlock;
	}
	ret = kfd_criu_resume_userptrs(target);
	if (ret) {
		pr_info_ratelimited("CRIU RESUME: pid %u: userptr memory not restorable (%d)\n",
				    args->pid, ret);
		goto out_unlock;
	}
	target->criu_restore_pending = false;
	kfd_process_restore_queues(target);
out_unlock:
	mutex_unlock(&target->lock);
	kfd_process_put(target);
	return ret;
}

/* ---- the ioctl ---- */

int kfd_ioctl_criu(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_criu_args *args = data;

	switch (args->op) {
	case KFD_CRIU_OP_PROCESS_INFO:
		return kfd_criu_process_info(p, args);
	case KFD_CRIU_OP_CHECKPOINT:
		return kfd_criu_checkpoint(p, args);
	case KFD_CRIU_OP_UNPAUSE:
		return kfd_criu_unpause(p);
	case KFD_CRIU_OP_RESTORE:
		return kfd_criu_restore(p, args);
	case KFD_CRIU_OP_RESUME:
		return kfd_criu_resume(args);
	default:
		pr_info_ratelimited("CRIU: unknown op %u\n", args->op);
		return -EINVAL;
	}
}
