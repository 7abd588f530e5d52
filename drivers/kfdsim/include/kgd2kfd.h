/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsim: what the device calls on the KFD layer.
 *
 * The only way up from the device model (sim/) and the render-node subset
 * (amdgpu/) into the KFD layer, named after amdgpu's kgd2kfd_* calls into
 * amdkfd. The KFD layer implements them in kfd/kfd_device.c.
 */
#ifndef KGD2KFD_H
#define KGD2KFD_H

#include <linux/types.h>

#include "kfd_device_ops.h"

struct dentry;
struct kfd_queue;

/* Module load and unload: /dev/kfd and the topology (kgd2kfd_init()). */
int kgd2kfd_init(void);
void kgd2kfd_exit(void);

/*
 * A device appears (amdgpu: kgd2kfd_device_init()) or goes away, before
 * kgd2kfd_init() and after kgd2kfd_exit(). @index is its 0-based position
 * (topology node @index + 1), @gpu_id its KFD gpu_id, @ops its queue
 * operations.
 */
void kgd2kfd_device_add(struct kfdsim_gpu *adev, unsigned int index,
			u32 gpu_id, const struct kfd_device_ops *ops);
void kgd2kfd_device_remove(unsigned int index);

/* Interrupts (amdgpu: kgd2kfd_interrupt()): a queue's signal and fault. */
void kgd2kfd_signal_event(struct kfd_queue *q, u32 event_id);
void kgd2kfd_memory_exception(struct kfd_queue *q,
			      const struct kfdsim_fault *fault);

/*
 * debugfs: the KFD layer's files (eviction hooks, CRIU fault points) in
 * the module's directory @root; _fini after the directory is removed.
 */
void kgd2kfd_debugfs_init(struct dentry *root);
void kgd2kfd_debugfs_fini(void);

/* The KFD layer's live objects, for debugfs "counters". */
struct kgd2kfd_counters {
	int processes;
	int pdds;
	int bos;
	int doorbell_slices;
	int mmio_pages;
	int queues;
};

void kgd2kfd_get_counters(struct kgd2kfd_counters *c);

#endif /* KGD2KFD_H */
