/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KFD events: signal, memory-exception and hardware-exception events of one
 * process, the events page, and waiting on events.
 */
#ifndef KFD_EVENTS_H
#define KFD_EVENTS_H

#include <linux/idr.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>

struct kfdsim_process;
struct kfdsim_fault;
struct vm_area_struct;

/**
 * struct kfd_event_table - the events of one process
 * @lock: protects the table and every event in it
 * @events: event id -> struct kfd_event
 */
struct kfd_event_table {
	struct mutex lock;
	struct idr events;
};

#endif /* KFD_EVENTS_H */
