/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The private data of the KFD CRIU ioctl.
 *
 * User space stores these bytes and hands them back to RESTORE unchanged;
 * only the kernel interprets them. They are untrusted on the way back in.
 *
 * Layout: a struct kfd_criu_header, then header.num_objects objects, each a
 * struct kfd_criu_object followed by its payload (object.size bytes, a
 * multiple of 8). Version 1 writes, in this order: one PROCESS, one DEVICE
 * per device bucket (same order), one BO per BO bucket (same order), one
 * QUEUE per queue, one EVENT per event. Version 2 is version 1 with a
 * QUEUE payload of struct kfd_criu_queue_v1, struct kfd_criu_cwsr_v2 and
 * the control stack in use (kfd_criu_cwsr_v2.stack_bytes, padded to 8).
 *
 * Compatibility rule: a kernel restores every version it ever wrote and
 * refuses newer or unknown versions with -EINVAL and a log line. A payload
 * layout never changes within a version; a new field means a new version.
 * See Documentation/criu.rst.
 */
#ifndef KFD_CRIU_H
#define KFD_CRIU_H

#include <linux/sizes.h>
#include <linux/types.h>

#define KFD_CRIU_MAGIC		0x4b465343u	/* "CSFK" */
#define KFD_CRIU_VERSION	2

/* Refuse private data larger than this outright. */
#define KFD_CRIU_MAX_PRIV_SIZE	SZ_64M
#define KFD_CRIU_MAX_BOS	(1024 * 1024)

/**
 * struct kfd_criu_header - start of the private data
 * @magic: KFD_CRIU_MAGIC
 * @version: KFD_CRIU_VERSION of the writer
 * @size: total bytes, header included; equals the ioctl's priv_data_size
 * @num_objects: objects that follow
 * @pad: zero
 */
struct kfd_criu_header {
	__u32 magic;
	__u32 version;
	__u64 size;
	__u32 num_objects;
	__u32 pad;
};

enum kfd_criu_type {
	KFD_CRIU_PROCESS = 1,
	KFD_CRIU_DEVICE = 2,
	KFD_CRIU_BO = 3,
	KFD_CRIU_QUEUE = 4,
	KFD_CRIU_EVENT = 5,
	KFD_CRIU_SVM_RANGE = 6,		/* reserved, not written yet */
};

/**
 * struct kfd_criu_object - header of one object
 * @type: enum kfd_criu_type
 * @size: payload bytes that follow, a multiple of 8
 */
struct kfd_criu_object {
	__u32 type;
	__u32 size;
};

/**
 * struct kfd_criu_process_v1 - process-wide state
 * @num_devices: DEVICE objects (= device buckets)
 * @num_bos: BO objects (= BO buckets)
 * @num_queues: QUEUE objects
 * @num_events: EVENT objects
 * @events_page: handle of the BO that holds the events page, or 0
 * @flags: zero (reserved)
 * @pad: zero
 */
struct kfd_criu_process_v1 {
	__u32 num_devices;
	__u32 num_bos;
	__u32 num_queues;
	__u32 num_events;
	__u64 events_page;
	__u32 flags;
	__u32 pad;
};

/**
 * struct kfd_criu_device_v1 - one GPU the process uses
 * @user_gpu_id: the gpu_id the process knows the GPU by
 * @pad: zero
 */
struct kfd_criu_device_v1 {
	__u32 user_gpu_id;
	__u32 pad;
};

/**
 * struct kfd_criu_bo_v1 - what a BO bucket does not say
 * @id: the handle's low 32 bits (the high ones are the bucket's gpu_id)
 * @mapped: bit i set when the BO is mapped on the GPU of device bucket i
 * @user_addr: the CPU address of a USERPTR BO, else 0
 */
struct kfd_criu_bo_v1 {
	__u32 id;
	__u32 mapped;
	__u64 user_addr;
};

/**
 * struct kfd_criu_queue_v1 - a user-mode queue and its saved state
 * @id: queue id
 * @user_gpu_id: GPU it runs on
 * @type: KFD_IOC_QUEUE_TYPE_*
 * @doorbell: slot in the doorbell slice
 * @ring_va: ring GPU VA
 * @ring_size: ring bytes
 * @percentage: queue percentage
 * @rptr_va: read pointer GPU VA
 * @wptr_va: write pointer GPU VA
 * @priority: queue priority
 * @ctx_save_size: CREATE_QUEUE's ctx_save_restore_size
 * @eop_va: CREATE_QUEUE's eop_buffer_address
 * @eop_size: CREATE_QUEUE's eop_buffer_size
 * @ctx_save_va: CREATE_QUEUE's ctx_save_restore_address
 * @ctl_stack_size: CREATE_QUEUE's ctl_stack_size
 * @pad: zero
 * @doorbell_value: the doorbell's last value
 * @rptr: saved read pointer
 * @iteration: saved progress of the dispatch at @rptr
 * @next_wg: saved progress of the dispatch at @rptr
 * @state_flags: KFDSIM_QSTATE_*
 * @pad2: zero
 */
struct kfd_criu_queue_v1 {
	__u32 id;
	__u32 user_gpu_id;
	__u32 type;
	__u32 doorbell;
	__u64 ring_va;
	__u32 ring_size;
	__u32 percentage;
	__u64 rptr_va;
	__u64 wptr_va;
	__u32 priority;
	__u32 ctx_save_size;
	__u64 eop_va;
	__u64 eop_size;
	__u64 ctx_save_va;
	__u32 ctl_stack_size;
	__u32 pad;
	__u64 doorbell_value;
	__u64 rptr;
	__u32 iteration;
	__u32 next_wg;
	__u32 state_flags;
	__u32 pad2;
};

/**
 * struct kfd_criu_cwsr_v2 - a queue's context save state (version 2)
 * @cntl_stack_offset: cp_hqd_cntl_stack_offset: the control stack's top
 * @wg_state_offset: cp_hqd_wg_state_offset: end of the saved waves
 * @stack_bytes: control stack bytes that follow (ctl_stack_size minus
 *               @cntl_stack_offset), as amdkfd's checkpoint_mqd() copies
 *               the control stack; 0 for a queue without saved waves
 * @pad: zero
 *
 * A queue without a save area has all of it zero.
 */
struct kfd_criu_cwsr_v2 {
	__u32 cntl_stack_offset;
	__u32 wg_state_offset;
	__u32 stack_bytes;
	__u32 pad;
};

/**
 * struct kfd_criu_event_v1 - one event
 * @id: event id
 * @type: KFD_IOC_EVENT_*
 * @auto_reset: 0 or 1
 * @signaled: 0 or 1
 */
struct kfd_criu_event_v1 {
	__u32 id;
	__u32 type;
	__u32 auto_reset;
	__u32 signaled;
};

#endif /* KFD_CRIU_H */
