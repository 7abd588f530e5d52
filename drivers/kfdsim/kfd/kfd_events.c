// SPDX-License-Identifier: GPL-2.0
/*
 * KFD events: CREATE/DESTROY/SET/RESET_EVENT, WAIT_EVENTS, the events page
 * and the GPU side of signalling.
 *
 * An event has an id, a type, an auto-reset flag and a signaled flag.
 * Signal events (and debug events, which only the GPU may fire) also own the
 * 64-bit slot of the events page whose index is their id: the GPU writes the
 * id there before it interrupts, so the driver can find the events that
 * fired even when the interrupt carries no usable id. Memory and
 * hardware-exception events are fired by the driver when the GPU faults and
 * carry a payload that WAIT_EVENTS hands back.
 *
 * Ids follow upstream: a signal event's id is its slot index, from 1 (slot 0
 * is never used, so a stray id 0 from the GPU names nothing); other events
 * take ids from the upper half of the positive int range.
 *
 * See Documentation/events.rst for the behaviour of each call.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kfd_ioctl.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "kfd_priv.h"

#define KFD_EVENT_PAGE_SIZE	(KFD_SIGNAL_EVENT_LIMIT * sizeof(u64))
#define KFD_EVENT_PAGE_PAGES	DIV_ROUND_UP(KFD_EVENT_PAGE_SIZE, PAGE_SIZE)
#define KFD_SLOT_UNSIGNALED	(~0ULL)

/* Slots usable before user space maps a driver-allocated events page. */
#define KFD_SLOTS_UNMAPPED	256

#define KFD_FIRST_NONSIGNAL_ID	((INT_MAX >> 1) + 1)
/*
 * Upstream's last id is INT_MAX, but idr_for_each_entry() cannot step past
 * an entry at INT_MAX (its int cursor wraps and idr_get_next() WARNs), so
 * the range stops one short. Only a crafted RESTORE image could ask for it.
 */
#define KFD_LAST_NONSIGNAL_ID	(INT_MAX - 1)

/* Not upstream limits: they bound what one caller makes the kernel allocate. */
#define KFD_NONSIGNAL_EVENT_MAX	4096
#define KFD_WAIT_EVENTS_MAX	(KFD_SIGNAL_EVENT_LIMIT + KFD_NONSIGNAL_EVENT_MAX)

#define KFD_TIMEOUT_INFINITE	0xffffffffu

#define kfd_ev_reject(fmt, ...) \
	pr_info_ratelimited("pid %d: " fmt, task_tgid_nr(current), \
			    ##__VA_ARGS__)

/**
 * struct kfd_event_page - the events page of a process
 * @ref: held by the event table while it is the process's events page,
 *       and by every user mapping of it
 * @slots: kernel mapping of the KFD_SIGNAL_EVENT_LIMIT slots
 * @pages: the pages behind @slots (the first pages of @bo, if any)
 * @bo: the user's BO holding the page (a reference is held), or NULL when
 *      the driver allocated @pages itself
 * @handle: the BO's handle, 0 without @bo
 */
struct kfd_event_page {
	struct kref ref;
	u64 *slots;
	struct page *pages[KFD_EVENT_PAGE_PAGES];
	struct kfdsim_gem *bo;
	u64 handle;
};

/**
 * struct kfd_event - one event
 * @id: the id user space names it by
 * @type: KFD_IOC_EVENT_*
 * @auto_reset: a wait that sees the event signaled resets it
 * @signaled: fired and not yet consumed or reset
 * @waiters: struct kfd_event_waiter.node of every WAIT_EVENTS on the event
 * @mem: payload of a memory event
 * @hw: payload of a hardware-exception event
 */
struct kfd_event {
	u32 id;
	u32 type;
	bool auto_reset;
	bool signaled;
	struct list_head waiters;
	union {
		struct kfd_hsa_memory_exception_data mem;
		struct kfd_hsa_hw_exception_data hw;
	};
};

/**
 * struct kfd_event_waiter - one entry of a WAIT_EVENTS call
 * @ev: the event; set to NULL when the event is destroyed
 * @node: on @ev->waiters while the wait is armed
 * @id: the event id the entry names, as read from user space
 * @type: the event's type, kept for after the wait
 * @activated: the event fired for this wait
 *
 * All a wait keeps while it sleeps: one of these per entry, no copy of the
 * user's array. @ev and @activated change under the table lock only; the
 * sleeping caller reads them without it, to decide whether to wake up.
 */
struct kfd_event_waiter {
	struct kfd_event *ev;
	struct list_head node;
	u32 id;
	u32 type;
	bool activated;
};

/* The payload of a memory or hardware-exception event, for WAIT_EVENTS. */
union kfd_event_payload {
	struct kfd_hsa_memory_exception_data mem;
	struct kfd_hsa_hw_exception_data hw;
};

/* Signal and debug events live in the events page. */
static bool kfd_event_has_slot(u32 type)
{
	return type == KFD_IOC_EVENT_SIGNAL || type == KFD_IOC_EVENT_DEBUG_EVENT;
}

static bool kfd_event_type_known(u32 type)
{
	return kfd_event_has_slot(type) || type == KFD_IOC_EVENT_MEMORY ||
	       type == KFD_IOC_EVENT_HW_EXCEPTION;
}

static struct kfd_event *kfd_event_lookup(struct kfd_event_table *t, u32 id)
{
	lockdep_assert_held(&t->lock);
	return idr_find(&t->events, id);
}

/* ---- the events page ---- */

static void kfd_event_page_free(struct kfd_event_page *page)
{
	unsigned int i;

	if (!page)
		return;
	vunmap(page->slots);
	if (page->bo) {
		amdgpu_amdkfd_gpuvm_free_memory_of_gpu(page->bo, NULL);
	} else {
		for (i = 0; i < KFD_EVENT_PAGE_PAGES; i++)
			if (page->pages[i])
				__free_page(page->pages[i]);
	}
	kfree(page);
}

static void kfd_event_page_release(struct kref *ref)
{
	kfd_event_page_free(container_of(ref, struct kfd_event_page, ref));
}

static void kfd_event_page_put(struct kfd_event_page *page)
{
	if (page)
		kref_put(&page->ref, kfd_event_page_release);
}

static int kfd_event_page_vmap(struct kfd_event_page *page)
{
	page->slots = vmap(page->pages, KFD_EVENT_PAGE_PAGES, VM_MAP,
			   PAGE_KERNEL);
	return page->slots ? 0 : -ENOMEM;
}

static struct kfd_event_page *kfd_event_page_alloc(void)
{
	struct kfd_event_page *page;
	unsigned int i;

	page = kfd_criu_should_fail() ? NULL : kzalloc(sizeof(*page), GFP_KERNEL_ACCOUNT);
	if (!page)
		return NULL;
	kref_init(&page->ref);
	for (i = 0; i < KFD_EVENT_PAGE_PAGES; i++) {
		page->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!page->pages[i])
			goto err;
	}
	if (kfd_event_page_vmap(page))
		goto err;
	return page;

err:
	kfd_event_page_free(page);
	return NULL;
}

/*
 * Make @page the events page, all slots unsignaled, unless the process
 * already has one. Return: true if @page was installed.
 */
static bool kfd_event_page_install(struct kfd_event_table *t,
				   struct kfd_event_page *page, u32 nr_slots)
{
	lockdep_assert_held(&t->lock);
	if (t->page)
		return false;
	memset(page->slots, 0xff, KFD_EVENT_PAGE_SIZE);
	WRITE_ONCE(t->page, page);
	WRITE_ONCE(t->nr_slots, nr_slots);
	return true;
}

/* Give the process a driver-allocated events page if it has none. */
static int kfd_event_page_ensure(struct kfd_event_table *t)
{
	struct kfd_event_page *page;
	bool installed;

	mutex_lock(&t->lock);
	installed = !!t->page;
	mutex_unlock(&t->lock);
	if (installed)
		return 0;

	/* Allocate outside the lock, which must stay a leaf. */
	page = kfd_event_page_alloc();
	if (!page)
		return -ENOMEM;
	mutex_lock(&t->lock);
	installed = kfd_event_page_install(t, page, KFD_SLOTS_UNMAPPED);
	mutex_unlock(&t->lock);
	if (!installed)
		kfd_event_page_free(page);
	return 0;
}

/**
 * kfd_events_set_page_bo - use a BO of the process as its events page
 * @p: the process, whose lock the caller holds
 * @handle: handle of a VRAM or GTT BO of at least KFD_SIGNAL_EVENT_LIMIT
 *          slots
 *
 * What CREATE_EVENT does with a non-zero event_page_offset. The BO's first
 * KFD_SIGNAL_EVENT_LIMIT * 8 bytes are set to "unsignaled"; the BO stays
 * referenced until the process dies.
 *
 * Return: 0, -EINVAL (no such BO, wrong kind, too small, or the process
 * already has an events page) or -ENOMEM.
 */
int kfd_events_set_page_bo(struct kfd_process *p, u64 handle)
{
	struct kfd_event_table *t = &p->events;
	struct kfd_event_page *page;
	struct kfd_bo *bo;
	bool installed;
	int ret;

	lockdep_assert_held(&p->lock);
	/* Checked again when installing, against a racing CREATE_EVENT. */
	if (READ_ONCE(t->page)) {
		kfd_ev_reject("CREATE_EVENT: the events page is already set\n");
		return -EINVAL;
	}
	bo = kfd_bo_lookup(p, handle);
	if (!bo) {
		kfd_ev_reject("CREATE_EVENT: no BO with handle 0x%llx for the events page\n",
			      handle);
		return -EINVAL;
	}
	if (!bo->gem || amdgpu_amdkfd_gpuvm_is_userptr(bo->gem)) {
		kfd_ev_reject("CREATE_EVENT: events page BO 0x%llx is not VRAM or GTT\n",
			      handle);
		return -EINVAL;
	}
	if (bo->size < KFD_EVENT_PAGE_SIZE) {
		kfd_ev_reject("CREATE_EVENT: events page BO 0x%llx has 0x%llx bytes, needs 0x%zx\n",
			      handle, bo->size, KFD_EVENT_PAGE_SIZE);
		return -EINVAL;
	}

	page = kfd_criu_should_fail() ? NULL : kzalloc(sizeof(*page), GFP_KERNEL_ACCOUNT);
	if (!page)
		return -ENOMEM;
	kref_init(&page->ref);
	amdgpu_amdkfd_gpuvm_get_memory(bo->gem);
	page->bo = bo->gem;
	page->handle = handle;
	memcpy(page->pages, amdgpu_amdkfd_gpuvm_pages(bo->gem),
	       sizeof(page->pages));
	ret = kfd_event_page_vmap(page);
	if (ret)
		goto err_free;

	mutex_lock(&t->lock);
	installed = kfd_event_page_install(t, page,
					   min_t(u64, bo->size / sizeof(u64),
						 KFD_SIGNAL_EVENT_LIMIT));
	mutex_unlock(&t->lock);
	if (!installed) {
		kfd_ev_reject("CREATE_EVENT: the events page is already set\n");
		ret = -EINVAL;
		goto err_free;
	}
	return 0;

err_free:
	kfd_event_page_free(page);
	return ret;
}

/**
 * kfd_events_page_handle - the BO holding the events page
 * @p: the process
 *
 * Return: the BO's handle, or 0 if the events page is not a BO (or there is
 * none yet).
 */
u64 kfd_events_page_handle(struct kfd_process *p)
{
	struct kfd_event_table *t = &p->events;
	u64 handle;

	mutex_lock(&t->lock);
	handle = t->page ? t->page->handle : 0;
	mutex_unlock(&t->lock);
	return handle;
}

static void kfd_events_vm_open(struct vm_area_struct *vma)
{
	struct kfd_event_page *page = vma->vm_private_data;

	kref_get(&page->ref);
}

static void kfd_events_vm_close(struct vm_area_struct *vma)
{
	kfd_event_page_put(vma->vm_private_data);
}

/*
 * The mapping keeps the page it maps alive, even once a failed RESTORE took
 * it away from the process (kfd_events_clear()).
 */
static const struct vm_operations_struct kfd_events_vm_ops = {
	.open = kfd_events_vm_open,
	.close = kfd_events_vm_close,
};

/**
 * kfd_mmap_events - map the events page
 * @p: the process
 * @vma: the mapping, of at most the events page's size rounded up to a
 *       power-of-two number of pages
 *
 * Called with mmap_lock held. As upstream, the size mapped also sets how
 * many slots later signal events may use.
 *
 * Return: 0 or a negative errno.
 */
int kfd_mmap_events(struct kfd_process *p, struct vm_area_struct *vma)
{
	struct kfd_event_table *t = &p->events;
	unsigned long size = vma->vm_end - vma->vm_start;
	struct kfd_event_page *page;
	int ret;

	if (get_order(size) > get_order(KFD_EVENT_PAGE_SIZE)) {
		kfd_ev_reject("mmap of the events page: 0x%lx bytes, at most 0x%lx\n",
			      size, PAGE_SIZE << get_order(KFD_EVENT_PAGE_SIZE));
		return -EINVAL;
	}
	mutex_lock(&t->lock);
	page = t->page;
	if (page)
		kref_get(&page->ref);
	mutex_unlock(&t->lock);
	if (!page) {
		kfd_ev_reject("mmap of the events page before any signal event\n");
		return -EINVAL;
	}

	vma->vm_flags |= VM_DONTCOPY | VM_DONTEXPAND | VM_NORESERVE |
			 VM_DONTDUMP;
	ret = vm_map_pages_zero(vma, page->pages, KFD_EVENT_PAGE_PAGES);
	if (ret) {
		kfd_event_page_put(page);
		return ret;
	}

	mutex_lock(&t->lock);
	if (t->page == page)
		WRITE_ONCE(t->nr_slots, min_t(unsigned long,
					      size / sizeof(u64),
					      KFD_SIGNAL_EVENT_LIMIT));
	mutex_unlock(&t->lock);

	vma->vm_private_data = page;
	vma->vm_ops = &kfd_events_vm_ops;
	return 0;
}

/* ---- creating and destroying events ---- */

/*
 * Give @ev an id: @want if not NULL, else the lowest free id of its range.
 * Return: 0, -ENOSPC (range or limit exhausted), -EEXIST (@want is taken),
 * -EAGAIN (a signal event, but the events page went away since the caller
 * made sure of it) or -ENOMEM.
 */
static int kfd_event_insert(struct kfd_event_table *t, struct kfd_event *ev,
			    const u32 *want)
{
	bool slot = kfd_event_has_slot(ev->type);
	int start, end, id;

	lockdep_assert_held(&t->lock);
	if (slot && !t->page)
		return -EAGAIN;
	if (slot) {
		start = 1;
		end = t->nr_slots;
	} else {
		if (t->nr_nonsignal >= KFD_NONSIGNAL_EVENT_MAX)
			return -ENOSPC;
		start = KFD_FIRST_NONSIGNAL_ID;
		end = KFD_LAST_NONSIGNAL_ID + 1;
	}
	if (want) {
		/* The slot limit of a mapped page does not bind a restore. */
		if (*want > (slot ? KFD_SIGNAL_EVENT_LIMIT - 1 :
			     KFD_LAST_NONSIGNAL_ID))
			return -ENOSPC;
		start = *want;
		end = *want + 1;
	}
	if (start >= end)
		return -ENOSPC;

	id = idr_alloc(&t->events, ev, start, end, GFP_KERNEL);
	if (id < 0)
		return id == -ENOSPC && want ? -EEXIST : id;
	ev->id = id;
	if (slot)
		WRITE_ONCE(t->page->slots[id], KFD_SLOT_UNSIGNALED);
	else
		t->nr_nonsignal++;
	t->nr_events++;
	return 0;
}

static int kfd_event_add(struct kfd_process *p, u32 type, bool auto_reset,
			 bool signaled, const u32 *want, u32 *id)
{
	struct kfd_event_table *t = &p->events;
	struct kfd_event *ev;
	int ret;

	ev = kfd_criu_should_fail() ? NULL :
	     kzalloc(sizeof(*ev), GFP_KERNEL_ACCOUNT);
	if (!ev)
		return -ENOMEM;
	ev->type = type;
	ev->auto_reset = auto_reset;
	ev->signaled = signaled;
	INIT_LIST_HEAD(&ev->waiters);

	/* A failed RESTORE in another thread may take the page away. */
	do {
		if (kfd_event_has_slot(type)) {
			ret = kfd_event_page_ensure(t);
			if (ret)
				break;
		}
		mutex_lock(&t->lock);
		ret = kfd_event_insert(t, ev, want);
		if (!ret)
			*id = ev->id;
		mutex_unlock(&t->lock);
	} while (ret == -EAGAIN);
	if (ret)
		kfree(ev);
	return ret;
}

/* Free @ev; its waiters see the event gone and fail. */
static void kfd_event_destroy(struct kfd_event_table *t, struct kfd_event *ev)
{
	struct kfd_event_waiter *w, *tmp;
	bool waited = !list_empty(&ev->waiters);

	lockdep_assert_held(&t->lock);
	list_for_each_entry_safe(w, tmp, &ev->waiters, node) {
		list_del_init(&w->node);
		WRITE_ONCE(w->ev, NULL);
	}
	idr_remove(&t->events, ev->id);
	if (!kfd_event_has_slot(ev->type))
		t->nr_nonsignal--;
	t->nr_events--;
	kfree(ev);
	if (waited)
		wake_up_all(&t->wq);
}

/*
 * Fire @ev. Every wait on it that has not seen it fire yet does now; an
 * auto-reset event that some wait took stays unsignaled.
 */
static void kfd_event_fire(struct kfd_event_table *t, struct kfd_event *ev)
{
	struct kfd_event_waiter *w;
	bool taken = false;

	lockdep_assert_held(&t->lock);
	list_for_each_entry(w, &ev->waiters, node) {
		if (w->activated)
			continue;
		WRITE_ONCE(w->activated, true);
		taken = true;
	}
	ev->signaled = !(ev->auto_reset && taken);
	if (taken)
		wake_up_all(&t->wq);
}

int kfd_ioctl_create_event(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_create_event_args *args = data;
	u32 type = args->event_type;
	u32 id;
	int ret;

	if (!kfd_event_type_known(type)) {
		kfd_ev_reject("CREATE_EVENT: event type %u is not supported\n",
			      type);
		return -EINVAL;
	}
	/* A non-zero offset hands in the events page (dGPU style). */
	if (args->event_page_offset) {
		mutex_lock(&p->lock);
		ret = kfd_events_set_page_bo(p, args->event_page_offset);
		mutex_unlock(&p->lock);
		if (ret)
			return ret;
	}

	ret = kfd_event_add(p, type, args->auto_reset, false, NULL, &id);
	if (ret == -ENOSPC && kfd_event_has_slot(type))
		kfd_ev_reject("CREATE_EVENT: all %u slots of the events page are taken\n",
			      READ_ONCE(p->events.nr_slots));
	else if (ret == -ENOSPC)
		kfd_ev_reject("CREATE_EVENT: limit of %u non-signal events reached\n",
			      KFD_NONSIGNAL_EVENT_MAX);
	if (ret)
		return ret;

	args->event_id = id;
	args->event_trigger_data = id;
	if (kfd_event_has_slot(type)) {
		args->event_page_offset = KFD_MMAP_TYPE_EVENTS;
		args->event_slot_index = id;
	} else {
		args->event_page_offset = 0;
	}
	return 0;
}

int kfd_ioctl_destroy_event(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_destroy_event_args *args = data;
	struct kfd_event_table *t = &p->events;
	struct kfd_event *ev;

	if (args->pad) {
		kfd_ev_reject("DESTROY_EVENT: pad is not zero\n");
		return -EINVAL;
	}
	mutex_lock(&t->lock);
	ev = kfd_event_lookup(t, args->event_id);
	if (ev)
		kfd_event_destroy(t, ev);
	mutex_unlock(&t->lock);
	if (!ev) {
		kfd_ev_reject("DESTROY_EVENT: no event %u\n", args->event_id);
		return -EINVAL;
	}
	return 0;
}

/* SET_EVENT and RESET_EVENT: only signal events are the CPU's to change. */
static int kfd_event_set_state(struct kfd_process *p, u32 id, u32 pad,
			       bool set, const char *op)
{
	struct kfd_event_table *t = &p->events;
	struct kfd_event *ev;
	int ret = 0;

	if (pad) {
		kfd_ev_reject("%s: pad is not zero\n", op);
		return -EINVAL;
	}
	mutex_lock(&t->lock);
	ev = kfd_event_lookup(t, id);
	if (!ev) {
		kfd_ev_reject("%s: no event %u\n", op, id);
		ret = -EINVAL;
	} else if (ev->type != KFD_IOC_EVENT_SIGNAL) {
		kfd_ev_reject("%s: event %u has type %u, not a signal event\n",
			      op, id, ev->type);
		ret = -EINVAL;
	} else if (set) {
		kfd_event_fire(t, ev);
	} else {
		ev->signaled = false;
	}
	mutex_unlock(&t->lock);
	return ret;
}

int kfd_ioctl_set_event(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_set_event_args *args = data;

	return kfd_event_set_state(p, args->event_id, args->pad, true,
				   "SET_EVENT");
}

int kfd_ioctl_reset_event(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_reset_event_args *args = data;

	return kfd_event_set_state(p, args->event_id, args->pad, false,
				   "RESET_EVENT");
}

/* ---- waiting ---- */

static u32 kfd_wait_result(const struct kfd_event_waiter *w, u32 n, bool all)
{
	u32 i, fired = 0;

	for (i = 0; i < n; i++) {
		if (!READ_ONCE(w[i].ev))
			return KFD_IOC_WAIT_RESULT_FAIL;
		if (READ_ONCE(w[i].activated)) {
			if (!all)
				return KFD_IOC_WAIT_RESULT_COMPLETE;
			fired++;
		}
	}
	return fired == n ? KFD_IOC_WAIT_RESULT_COMPLETE :
			    KFD_IOC_WAIT_RESULT_TIMEOUT;
}

static bool kfd_event_has_payload(u32 type)
{
	return type == KFD_IOC_EVENT_MEMORY || type == KFD_IOC_EVENT_HW_EXCEPTION;
}

/*
 * Read the event id of each entry of the user's array, one entry at a
 * time as upstream does, so the kernel never holds a copy of the array.
 * No lock is held: the reads may fault.
 */
static int kfd_wait_read_ids(const struct kfd_event_data __user *udata,
			     struct kfd_event_waiter *w, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (get_user(w[i].id, &udata[i].event_id)) {
			kfd_ev_reject("WAIT_EVENTS: entry %u is not readable\n",
				      i);
			return -EFAULT;
		}
	}
	return 0;
}

/*
 * Attach each waiter to the event its entry names. An event already
 * signaled counts as fired for this wait, and an auto-reset one is
 * consumed. Sets *@nr_payload to the number of entries naming an event
 * with a payload (memory or hardware exception).
 */
static int kfd_wait_arm(struct kfd_event_table *t, struct kfd_event_waiter *w,
			u32 n, u32 *nr_payload)
{
	struct kfd_event *ev;
	u32 i;

	*nr_payload = 0;
	mutex_lock(&t->lock);
	/* Check every id first, so a bad one consumes nothing. */
	for (i = 0; i < n; i++) {
		if (!kfd_event_lookup(t, w[i].id)) {
			mutex_unlock(&t->lock);
			kfd_ev_reject("WAIT_EVENTS: no event %u (entry %u)\n",
				      w[i].id, i);
			return -EINVAL;
		}
	}
	for (i = 0; i < n; i++) {
		ev = kfd_event_lookup(t, w[i].id);
		w[i].ev = ev;
		w[i].type = ev->type;
		w[i].activated = ev->signaled;
		if (ev->auto_reset)
			ev->signaled = false;
		list_add_tail(&w[i].node, &ev->waiters);
		if (kfd_event_has_payload(ev->type))
			(*nr_payload)++;
	}
	mutex_unlock(&t->lock);
	return 0;
}

/* Sleep until the wait is decided, @timeout runs out or a signal comes. */
static int kfd_wait_sleep(struct kfd_event_table *t,
			  const struct kfd_event_waiter *w, u32 n, bool all,
			  long *timeout)
{
	DEFINE_WAIT(wait);
	int ret = 0;

	for (;;) {
		prepare_to_wait(&t->wq, &wait, TASK_INTERRUPTIBLE);
		if (kfd_wait_result(w, n, all) != KFD_IOC_WAIT_RESULT_TIMEOUT ||
		    !*timeout)
			break;
		if (signal_pending(current)) {
			ret = fatal_signal_pending(current) ? -EINTR :
							      -ERESTARTSYS;
			break;
		}
		*timeout = schedule_timeout(*timeout);
	}
	finish_wait(&t->wq, &wait);
	return ret;
}

/*
 * Detach the waiters and decide the result. Unless @undo, copy the payload
 * of each entry naming a memory or hardware-exception event that fired
 * into @pay, which has one element per such entry, in entry order. When
 * the call is to be restarted or failed (@undo), give back the auto-reset
 * signals it consumed.
 */
static u32 kfd_wait_disarm(struct kfd_event_table *t,
			   struct kfd_event_waiter *w,
			   union kfd_event_payload *pay, u32 n, bool all,
			   bool undo)
{
	struct kfd_event *ev;
	u32 result, i, j = 0;

	mutex_lock(&t->lock);
	result = kfd_wait_result(w, n, all);
	for (i = 0; i < n; i++)
		if (w[i].ev)
			list_del(&w[i].node);
	/* With every waiter detached, re-firing cannot feed this wait. */
	for (i = 0; i < n; i++) {
		ev = w[i].ev;
		if (ev && w[i].activated) {
			if (undo) {
				if (ev->auto_reset)
					kfd_event_fire(t, ev);
			} else if (ev->type == KFD_IOC_EVENT_MEMORY) {
				pay[j].mem = ev->mem;
			} else if (ev->type == KFD_IOC_EVENT_HW_EXCEPTION) {
				pay[j].hw = ev->hw;
			}
		}
		if (kfd_event_has_payload(w[i].type))
			j++;
	}
	mutex_unlock(&t->lock);
	return result;
}

/* Give user space the payloads of the exception events that fired. */
static int kfd_wait_copy_out(struct kfd_event_data __user *udata,
			     const struct kfd_event_waiter *w,
			     const union kfd_event_payload *pay, u32 n)
{
	u32 i, j = 0;

	for (i = 0; i < n; i++) {
		if (!kfd_event_has_payload(w[i].type))
			continue;
		if (w[i].activated && w[i].type == KFD_IOC_EVENT_MEMORY &&
		    copy_to_user(&udata[i].memory_exception_data, &pay[j].mem,
				 sizeof(pay[j].mem)))
			return -EFAULT;
		if (w[i].activated && w[i].type == KFD_IOC_EVENT_HW_EXCEPTION &&
		    copy_to_user(&udata[i].hw_exception_data, &pay[j].hw,
				 sizeof(pay[j].hw)))
			return -EFAULT;
		j++;
	}
	return 0;
}

/*
 * What WAIT_EVENTS allocates follows the caller's num_events: charge it to
 * the caller's memory cgroup, and fail at its limit rather than invoke the
 * OOM killer.
 */
#define KFD_WAIT_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

static long kfd_wait_jiffies(u32 ms)
{
	if (!ms)
		return 0;
	if (ms == KFD_TIMEOUT_INFINITE)
		return MAX_SCHEDULE_TIMEOUT;
	/* One more jiffy, so the wait never ends early. */
	return msecs_to_jiffies(min_t(u32, ms, INT_MAX)) + 1;
}

int kfd_ioctl_wait_events(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_wait_events_args *args = data;
	struct kfd_event_data __user *udata = u64_to_user_ptr(args->events_ptr);
	struct kfd_event_table *t = &p->events;
	union kfd_event_payload *pay = NULL;
	struct kfd_event_waiter *w = NULL;
	bool all = args->wait_for_all;
	u32 n = args->num_events;
	u32 result, nr_payload;
	long timeout;
	int ret;

	args->wait_result = KFD_IOC_WAIT_RESULT_FAIL;
	if (n > KFD_WAIT_EVENTS_MAX) {
		kfd_ev_reject("WAIT_EVENTS: %u events, at most %u\n", n,
			      KFD_WAIT_EVENTS_MAX);
		return -EINVAL;
	}
	if (n) {
		w = kvcalloc(n, sizeof(*w), KFD_WAIT_GFP);
		if (!w) {
			kfd_ev_reject("WAIT_EVENTS: no memory to wait for %u events\n",
				      n);
			return -ENOMEM;
		}
	}
	ret = kfd_wait_read_ids(udata, w, n);
	if (!ret)
		ret = kfd_wait_arm(t, w, n, &nr_payload);
	if (ret)
		goto out_free;

	timeout = kfd_wait_jiffies(args->timeout);
	ret = kfd_wait_sleep(t, w, n, all, &timeout);
	/* Room for the payloads only now that the sleep is over. */
	if (!ret && nr_payload) {
		pay = kvcalloc(nr_payload, sizeof(*pay), KFD_WAIT_GFP);
		if (!pay) {
			kfd_ev_reject("WAIT_EVENTS: no memory for %u event payloads\n",
				      nr_payload);
			ret = -ENOMEM;
		}
	}
	result = kfd_wait_disarm(t, w, pay, n, all,
				 ret == -ERESTARTSYS || ret == -ENOMEM);

	if (ret == -ERESTARTSYS && args->timeout &&
	    args->timeout != KFD_TIMEOUT_INFINITE)
		args->timeout = jiffies_to_msecs(max(0L, timeout - 1));
	if (ret)
		goto out_free;
	if (result == KFD_IOC_WAIT_RESULT_FAIL) {
		kfd_ev_reject("WAIT_EVENTS: an event was destroyed during the wait\n");
		ret = -EIO;
		goto out_free;
	}
	if (result == KFD_IOC_WAIT_RESULT_COMPLETE) {
		ret = kfd_wait_copy_out(udata, w, pay, n);
		if (ret)
			goto out_free;
	}
	args->wait_result = result;

out_free:
	kvfree(pay);
	kvfree(w);
	return ret;
}

/* ---- the GPU side ---- */

/* The GPU fired @ev: free its slot for the next signal, then fire it. */
static void kfd_event_fire_from_gpu(struct kfd_event_table *t,
				    struct kfd_event *ev)
{
	WRITE_ONCE(t->page->slots[ev->id], KFD_SLOT_UNSIGNALED);
	kfd_event_fire(t, ev);
}

/**
 * kfd_signal_event_from_gpu - the GPU signalled an event
 * @p: the process whose queue signalled
 * @event_id: the id the packet named
 *
 * Fires @event_id if it is a signal or debug event of @p. Any other id is
 * treated as upstream treats an interrupt without a usable id: every such
 * event whose slot in the events page holds something other than
 * "unsignaled" fires.
 */
void kfd_signal_event_from_gpu(struct kfd_process *p, u32 event_id)
{
	struct kfd_event_table *t = &p->events;
	struct kfd_event *ev = NULL;
	int id;

	mutex_lock(&t->lock);
	if (!t->page)
		goto out;
	if (event_id < KFD_SIGNAL_EVENT_LIMIT)
		ev = kfd_event_lookup(t, event_id);
	if (ev && kfd_event_has_slot(ev->type)) {
		kfd_event_fire_from_gpu(t, ev);
		goto out;
	}
	idr_for_each_entry(&t->events, ev, id) {
		if (id >= KFD_SIGNAL_EVENT_LIMIT)
			break;
		if (kfd_event_has_slot(ev->type) &&
		    READ_ONCE(t->page->slots[id]) != KFD_SLOT_UNSIGNALED)
			kfd_event_fire_from_gpu(t, ev);
	}
out:
	mutex_unlock(&t->lock);
}

/**
 * kfd_signal_memory_exception - a GPU page fault in a queue of @p
 * @p: the process
 * @gpu_id: the GPU that faulted
 * @f: the fault
 *
 * Fires every memory event of @p with the fault as payload. As upstream's
 * VM fault handling, hardware-exception events are left alone.
 */
void kfd_signal_memory_exception(struct kfd_process *p, u32 gpu_id,
				 const struct kfdsim_fault *f)
{
	struct kfd_hsa_memory_exception_data data = {
		.va = f->va & PAGE_MASK,
		.gpu_id = gpu_id,
		.ErrorType = KFD_MEM_ERR_NO_RAS,
	};
	struct kfd_event_table *t = &p->events;
	struct kfd_event *ev;
	int id;

	data.failure.NotPresent = !f->read_only;
	data.failure.ReadOnly = f->read_only;

	mutex_lock(&t->lock);
	idr_for_each_entry(&t->events, ev, id) {
		if (ev->type != KFD_IOC_EVENT_MEMORY)
			continue;
		ev->mem = data;
		kfd_event_fire(t, ev);
	}
	mutex_unlock(&t->lock);
}

/* ---- life cycle, queries, checkpoint and restore ---- */

int kfd_events_init(struct kfd_process *p)
{
	struct kfd_event_table *t = &p->events;

	mutex_init(&t->lock);
	idr_init(&t->events);
	init_waitqueue_head(&t->wq);
	t->page = NULL;
	t->nr_slots = 0;
	t->nr_events = 0;
	t->nr_nonsignal = 0;
	return 0;
}

/* At process teardown: no ioctl, mapping or queue can reach @p any more. */
void kfd_events_fini(struct kfd_process *p)
{
	struct kfd_event_table *t = &p->events;
	struct kfd_event *ev;
	int id;

	idr_for_each_entry(&t->events, ev, id) {
		WARN_ON_ONCE(!list_empty(&ev->waiters));
		kfree(ev);
	}
	idr_destroy(&t->events);
	kfd_event_page_put(t->page);
	t->page = NULL;
	mutex_destroy(&t->lock);
}

/**
 * kfd_events_clear - destroy every event and drop the events page
 * @p: the process
 *
 * Undoes the events part of a failed RESTORE while other threads of @p may
 * be waiting on the events, creating new ones or mapping the page: the
 * table's lock, idr and wait queue stay as they are, waiters of the
 * destroyed events are woken and fail, and the page lives on as long as a
 * user mapping of it does.
 */
void kfd_events_clear(struct kfd_process *p)
{
	struct kfd_event_table *t = &p->events;
	struct kfd_event_page *page;
	struct kfd_event *ev;
	int id;

	mutex_lock(&t->lock);
	idr_for_each_entry(&t->events, ev, id)
		kfd_event_destroy(t, ev);
	page = t->page;
	WRITE_ONCE(t->page, NULL);
	WRITE_ONCE(t->nr_slots, 0);
	mutex_unlock(&t->lock);
	kfd_event_page_put(page);
}

/**
 * kfd_events_count - number of events of @p
 * @p: the process
 *
 * Return: the count, all types.
 */
int kfd_events_count(struct kfd_process *p)
{
	struct kfd_event_table *t = &p->events;
	int n;

	mutex_lock(&t->lock);
	n = t->nr_events;
	mutex_unlock(&t->lock);
	return n;
}

/**
 * kfd_event_restore - recreate an event with a given id
 * @p: the process
 * @event_id: the id it had
 * @type: KFD_IOC_EVENT_SIGNAL, _DEBUG_EVENT, _MEMORY or _HW_EXCEPTION
 * @auto_reset: as at creation
 * @signaled: its state when it was saved
 *
 * For a signal or debug event the events page must already be restored if
 * it was a BO (kfd_events_set_page_bo()); otherwise the driver allocates
 * one. The slot limit set by mapping the page does not apply.
 *
 * Return: 0; -EINVAL for an unknown type or an id outside the type's range;
 * -EEXIST if the id is taken; -ENOSPC at the non-signal event limit;
 * -ENOMEM.
 */
int kfd_event_restore(struct kfd_process *p, u32 event_id, u32 type,
		      bool auto_reset, bool signaled)
{
	u32 id;
	bool ok;
	int ret;

	if (kfd_event_has_slot(type))
		ok = event_id && event_id < KFD_SIGNAL_EVENT_LIMIT;
	else if (kfd_event_type_known(type))
		ok = event_id >= KFD_FIRST_NONSIGNAL_ID &&
		     event_id <= KFD_LAST_NONSIGNAL_ID;
	else
		ok = false;
	if (!ok) {
		kfd_ev_reject("restore: event %u of type %u is not valid\n",
			      event_id, type);
		return -EINVAL;
	}
	ret = kfd_event_add(p, type, auto_reset, signaled, &event_id, &id);
	if (ret)
		kfd_ev_reject("restore: event %u of type %u: error %d\n",
			      event_id, type, ret);
	return ret;
}

struct kfd_event_info {
	u32 id;
	u32 type;
	bool auto_reset;
	bool signaled;
};

/**
 * kfd_events_for_each - call @fn for each event of @p, in id order
 * @p: the process
 * @fn: the callback; a non-zero return stops the walk and is returned
 * @ctx: passed to @fn
 *
 * @fn runs without any event lock held (on a snapshot), so it may copy to
 * user memory or take other locks.
 *
 * Return: 0, -ENOMEM, or what @fn returned.
 */
int kfd_events_for_each(struct kfd_process *p,
			int (*fn)(void *ctx, u32 id, u32 type, bool auto_reset,
				  bool signaled),
			void *ctx)
{
	struct kfd_event_table *t = &p->events;
	struct kfd_event_info *info;
	struct kfd_event *ev;
	u32 n, i = 0;
	int id, ret = 0;

	/* Size the snapshot outside the lock; retry if the count moved. */
	for (;;) {
		n = kfd_events_count(p);
		info = kvcalloc(n, sizeof(*info), GFP_KERNEL_ACCOUNT);
		if (!info)
			return -ENOMEM;
		mutex_lock(&t->lock);
		if (t->nr_events == n)
			break;
		mutex_unlock(&t->lock);
		kvfree(info);
	}
	idr_for_each_entry(&t->events, ev, id) {
		info[i].id = ev->id;
		info[i].type = ev->type;
		info[i].auto_reset = ev->auto_reset;
		info[i].signaled = ev->signaled;
		i++;
	}
	mutex_unlock(&t->lock);

	for (i = 0; i < n && !ret; i++)
		ret = fn(ctx, info[i].id, info[i].type, info[i].auto_reset,
			 info[i].signaled);
	kvfree(info);
	return ret;
}
