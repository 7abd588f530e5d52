/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KFD events: signal, memory-exception and hardware-exception events of one
 * process, the events page, and waiting on events.
 *
 * Locking: kfd_event_table.lock is a leaf. It is taken inside the process
 * lock (ioctls), inside mmap_lock (mmap of the events page) and inside the
 * command processor's lock (GPU-side signalling), and nothing else is taken
 * while it is held: no user memory is touched under it.
 */
#ifndef KFD_EVENTS_H
#define KFD_EVENTS_H

#include <linux/idr.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>

struct kfd_process;
struct kfdsim_fault;
struct kfd_event_page;
struct vm_area_struct;

/**
 * struct kfd_event_table - the events of one process
 * @lock: protects the table and every event in it
 * @events: event id -> struct kfd_event
 * @wq: WAIT_EVENTS callers sleep here; woken whenever a waited-on event
 *      fires or is destroyed
 * @page: the events page, NULL until the first signal event or until
 *        user space hands in a buffer for it; never replaced once set,
 *        only dropped by a failed RESTORE (kfd_events_clear())
 * @nr_slots: slots of the events page new signal events may use, from the
 *            size user space mapped (or handed in)
 * @nr_events: events in @events
 * @nr_nonsignal: memory and hardware-exception events in @events
 */
struct kfd_event_table {
	struct mutex lock;	/* a leaf lock, see the top of this file */
	struct idr events;
	wait_queue_head_t wq;
	struct kfd_event_page *page;
	u32 nr_slots;
	u32 nr_events;
	u32 nr_nonsignal;
};

/* Life cycle, from kfd_process.c. */
int kfd_events_init(struct kfd_process *p);
void kfd_events_fini(struct kfd_process *p);
void kfd_events_clear(struct kfd_process *p);

/* ioctl handlers, called with no locks held. */
int kfd_ioctl_create_event(struct kfd_process *p, void *data);
int kfd_ioctl_destroy_event(struct kfd_process *p, void *data);
int kfd_ioctl_set_event(struct kfd_process *p, void *data);
int kfd_ioctl_reset_event(struct kfd_process *p, void *data);
int kfd_ioctl_wait_events(struct kfd_process *p, void *data);

/* mmap of KFD_MMAP_TYPE_EVENTS, called with mmap_lock held. */
int kfd_mmap_events(struct kfd_process *p, struct vm_area_struct *vma);

/* GPU side: the command processor, which may hold its own lock. */
void kfd_signal_event_from_gpu(struct kfd_process *p, u32 event_id);
void kfd_signal_memory_exception(struct kfd_process *p, u32 gpu_id,
				 const struct kfdsim_fault *f);

/* Queries and checkpoint/restore helpers; see Documentation/events.rst. */
int kfd_events_count(struct kfd_process *p);
u64 kfd_events_page_handle(struct kfd_process *p);
int kfd_events_set_page_bo(struct kfd_process *p, u64 handle);
int kfd_event_restore(struct kfd_process *p, u32 event_id, u32 type,
		      bool auto_reset, bool signaled);
int kfd_events_for_each(struct kfd_process *p,
			int (*fn)(void *ctx, u32 id, u32 type, bool auto_reset,
				  bool signaled),
			void *ctx);

#endif /* KFD_EVENTS_H */
