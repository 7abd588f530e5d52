/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kfd_ioctl.h - the /dev/kfd interface as implemented by kfdsim
 *
 * kfdsim presents simulated GPUs through the same character-device interface
 * as the amdkfd driver. This header describes that interface: argument
 * structures, ioctl request codes, flags and enumerations. It is binary
 * compatible with the upstream header of KFD interface version 1.11 and
 * keeps its names, so programs written against upstream build against it
 * unchanged. On top of 1.11 it carries:
 *
 *  - AMDKFD_IOC_EXPORT_DMABUF (interface 1.12);
 *  - the layout of /dev/kfd mmap offsets, which upstream keeps private to
 *    the kernel.
 *
 * The include guard is the upstream one on purpose: a translation unit gets
 * either this header or upstream's, never both.
 *
 * Unlike upstream, only <linux/types.h> and <linux/ioctl.h> are needed, so
 * the header can be used on its own by userspace and by the kernel module.
 *
 * In the field descriptions, [in] is written by the caller, [out] by the
 * driver and [in/out] by both.
 */
#ifndef KFD_IOCTL_H_INCLUDED
#define KFD_IOCTL_H_INCLUDED

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * Interface version, reported by AMDKFD_IOC_GET_VERSION. A minor bump only
 * adds ioctls or flags; existing layouts never change.
 *
 *  1.1  first version
 *  1.3  SMI events
 *  1.4  SRAM EDC bit in the topology device properties
 *  1.5  shared virtual memory (SVM)
 *  1.6  SVM get_attr can query the clear flags
 *  1.7  checkpoint/restore (CRIU)
 *  1.8  CRIU copies GTT buffers with SDMA as well
 *  1.9  AMDKFD_IOC_AVAILABLE_MEMORY
 *  1.10 SMI profiler events
 *  1.11 context save/restore area in unified memory
 *  1.12 AMDKFD_IOC_EXPORT_DMABUF
 */
#define KFD_IOCTL_MAJOR_VERSION 1
#define KFD_IOCTL_MINOR_VERSION 12

/**
 * struct kfd_ioctl_get_version_args - interface version of the driver
 * @major_version: [out] KFD_IOCTL_MAJOR_VERSION of the running driver
 * @minor_version: [out] KFD_IOCTL_MINOR_VERSION of the running driver
 */
struct kfd_ioctl_get_version_args {
	__u32 major_version;
	__u32 minor_version;
};

/* ====================================================================== */
/* Queues                                                                 */
/* ====================================================================== */

/* Values of kfd_ioctl_create_queue_args.queue_type. */
#define KFD_IOC_QUEUE_TYPE_COMPUTE		0x0
#define KFD_IOC_QUEUE_TYPE_SDMA			0x1
#define KFD_IOC_QUEUE_TYPE_COMPUTE_AQL		0x2
#define KFD_IOC_QUEUE_TYPE_SDMA_XGMI		0x3

/* Bounds for queue_percentage, queue_priority and ring_size. */
#define KFD_MAX_QUEUE_PERCENTAGE	100
#define KFD_MAX_QUEUE_PRIORITY		15
#define KFD_MIN_QUEUE_RING_SIZE		1024

/**
 * struct kfd_ioctl_create_queue_args - create a user-mode queue
 * @ring_base_address: [in] GPU VA of the ring buffer
 * @write_pointer_address: [in] GPU VA where userspace publishes the
 *	write pointer
 * @read_pointer_address: [in] GPU VA where the engine reports the read
 *	pointer
 * @doorbell_offset: [out] mmap offset of the queue's doorbell on /dev/kfd
 *	(see "mmap offsets" below); on gfx9 and later the byte offset of the
 *	doorbell inside its slice is included in the low bits
 * @ring_size: [in] ring size in bytes, a power of two
 * @gpu_id: [in] device to create the queue on
 * @queue_type: [in] KFD_IOC_QUEUE_TYPE_*
 * @queue_percentage: [in] share of the engine, 0..KFD_MAX_QUEUE_PERCENTAGE
 * @queue_priority: [in] 0..KFD_MAX_QUEUE_PRIORITY
 * @queue_id: [out] process-wide id naming the queue in later calls
 * @eop_buffer_address: [in] GPU VA of the end-of-pipe buffer (compute)
 * @eop_buffer_size: [in] size of that buffer in bytes
 * @ctx_save_restore_address: [in] GPU VA of the context save area (compute)
 * @ctx_save_restore_size: [in] size of the context save area in bytes
 * @ctl_stack_size: [in] size of the control stack inside that area
 */
struct kfd_ioctl_create_queue_args {
	__u64 ring_base_address;
	__u64 write_pointer_address;
	__u64 read_pointer_address;
	__u64 doorbell_offset;

	__u32 ring_size;
	__u32 gpu_id;
	__u32 queue_type;
	__u32 queue_percentage;
	__u32 queue_priority;
	__u32 queue_id;

	__u64 eop_buffer_address;
	__u64 eop_buffer_size;
	__u64 ctx_save_restore_address;
	__u32 ctx_save_restore_size;
	__u32 ctl_stack_size;
};

/**
 * struct kfd_ioctl_destroy_queue_args - destroy a queue
 * @queue_id: [in] queue to destroy
 * @pad: must be zero
 */
struct kfd_ioctl_destroy_queue_args {
	__u32 queue_id;
	__u32 pad;
};

/**
 * struct kfd_ioctl_update_queue_args - move a queue's ring or change its
 *	scheduling parameters
 * @ring_base_address: [in] new GPU VA of the ring buffer
 * @queue_id: [in] queue to update
 * @ring_size: [in] new ring size in bytes
 * @queue_percentage: [in] new share of the engine
 * @queue_priority: [in] new priority
 */
struct kfd_ioctl_update_queue_args {
	__u64 ring_base_address;

	__u32 queue_id;
	__u32 ring_size;
	__u32 queue_percentage;
	__u32 queue_priority;
};

/**
 * struct kfd_ioctl_set_cu_mask_args - restrict a queue to some compute units
 * @queue_id: [in] queue to restrict
 * @num_cu_mask: [in] number of bits in the mask, a multiple of 32
 * @cu_mask_ptr: [in] user pointer to the mask, an array of __u32
 */
struct kfd_ioctl_set_cu_mask_args {
	__u32 queue_id;
	__u32 num_cu_mask;
	__u64 cu_mask_ptr;
};

/**
 * struct kfd_ioctl_get_queue_wave_state_args - read the saved wave state of
 *	a preempted queue
 * @ctl_stack_address: [in] user pointer receiving the control stack
 * @ctl_stack_used_size: [out] bytes of control stack in use
 * @save_area_used_size: [out] bytes of the wave save area in use
 * @queue_id: [in] queue to query
 * @pad: must be zero
 */
struct kfd_ioctl_get_queue_wave_state_args {
	__u64 ctl_stack_address;
	__u32 ctl_stack_used_size;
	__u32 save_area_used_size;
	__u32 queue_id;
	__u32 pad;
};

/**
 * struct kfd_ioctl_alloc_queue_gws_args - give a queue global wave sync
 *	resources
 * @queue_id: [in] queue receiving the GWS entries
 * @num_gws: [in] number of entries wanted (0 releases them)
 * @first_gws: [out] index of the first entry; entries are contiguous
 * @pad: must be zero
 */
struct kfd_ioctl_alloc_queue_gws_args {
	__u32 queue_id;
	__u32 num_gws;
	__u32 first_gws;
	__u32 pad;
};

/* ====================================================================== */
/* Process and device settings                                            */
/* ====================================================================== */

/* Values of default_policy and alternate_policy below. */
#define KFD_IOC_CACHE_POLICY_COHERENT 0
#define KFD_IOC_CACHE_POLICY_NONCOHERENT 1

/**
 * struct kfd_ioctl_set_memory_policy_args - choose the cache policy of the
 *	process's apertures on one GPU
 * @alternate_aperture_base: [in] start of the alternate aperture
 * @alternate_aperture_size: [in] size of the alternate aperture in bytes
 * @gpu_id: [in] device to configure
 * @default_policy: [in] KFD_IOC_CACHE_POLICY_* outside the alternate
 *	aperture
 * @alternate_policy: [in] KFD_IOC_CACHE_POLICY_* inside it
 * @pad: must be zero
 */
struct kfd_ioctl_set_memory_policy_args {
	__u64 alternate_aperture_base;
	__u64 alternate_aperture_size;

	__u32 gpu_id;
	__u32 default_policy;
	__u32 alternate_policy;
	__u32 pad;
};

/**
 * struct kfd_ioctl_get_clock_counters_args - sample the GPU and CPU clocks
 *	together, for correlating profiling timestamps
 * @gpu_clock_counter: [out] GPU timestamp counter
 * @cpu_clock_counter: [out] CPU raw monotonic clock, in ns
 * @system_clock_counter: [out] CPU boot-time clock, in ns
 * @system_clock_freq: [out] frequency of @system_clock_counter in Hz
 * @gpu_id: [in] device to sample
 * @pad: must be zero
 *
 * Every counter only moves forward, GPU resets included.
 */
struct kfd_ioctl_get_clock_counters_args {
	__u64 gpu_clock_counter;
	__u64 cpu_clock_counter;
	__u64 system_clock_counter;
	__u64 system_clock_freq;

	__u32 gpu_id;
	__u32 pad;
};

/**
 * struct kfd_process_device_apertures - address ranges of one GPU as seen by
 *	the calling process
 * @lds_base: [out] first address of the local data share aperture
 * @lds_limit: [out] last address of the LDS aperture
 * @scratch_base: [out] first address of the scratch (private) aperture
 * @scratch_limit: [out] last address of the scratch aperture
 * @gpuvm_base: [out] first usable GPU virtual address
 * @gpuvm_limit: [out] last usable GPU virtual address
 * @gpu_id: [out] device these ranges belong to
 * @pad: zero
 */
struct kfd_process_device_apertures {
	__u64 lds_base;
	__u64 lds_limit;
	__u64 scratch_base;
	__u64 scratch_limit;
	__u64 gpuvm_base;
	__u64 gpuvm_limit;
	__u32 gpu_id;
	__u32 pad;
};

/* Capacity of the old, fixed-size apertures call. */
#define NUM_OF_SUPPORTED_GPUS 7

/**
 * struct kfd_ioctl_get_process_apertures_args - apertures of up to
 *	NUM_OF_SUPPORTED_GPUS devices (deprecated)
 * @process_apertures: [out] one entry per device
 * @num_of_nodes: [out] entries filled, 1..NUM_OF_SUPPORTED_GPUS
 * @pad: zero
 *
 * Use AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, which has no device limit.
 */
struct kfd_ioctl_get_process_apertures_args {
	struct kfd_process_device_apertures
			process_apertures[NUM_OF_SUPPORTED_GPUS];
	__u32 num_of_nodes;
	__u32 pad;
};

/**
 * struct kfd_ioctl_get_process_apertures_new_args - apertures of every device
 * @kfd_process_device_apertures_ptr: [in] user pointer to an array of
 *	struct kfd_process_device_apertures
 * @num_of_nodes: [in/out] capacity of the array on input (0 only asks
 *	for the number of devices); entries filled, or the count, on output
 * @pad: must be zero
 */
struct kfd_ioctl_get_process_apertures_new_args {
	__u64 kfd_process_device_apertures_ptr;
	__u32 num_of_nodes;
	__u32 pad;
};

/**
 * struct kfd_ioctl_set_scratch_backing_va_args - tell the driver where the
 *	scratch backing memory of the process lives (ROCm's thunk sets it
 *	when it reserves the scratch aperture)
 * @va_addr: [in] GPU VA of the backing memory
 * @gpu_id: [in] device to configure
 * @pad: must be zero
 */
struct kfd_ioctl_set_scratch_backing_va_args {
	__u64 va_addr;
	__u32 gpu_id;
	__u32 pad;
};

/**
 * struct kfd_ioctl_get_tile_config_args - read the device's tiling tables
 * @tile_config_ptr: [in] user pointer to a __u32 array for tile modes
 * @macro_tile_config_ptr: [in] user pointer to a __u32 array for macro tile
 *	modes
 * @num_tile_configs: [in/out] capacity of the first array; entries written
 * @num_macro_tile_configs: [in/out] capacity of the second array; entries
 *	written
 * @gpu_id: [in] device to query
 * @gb_addr_config: [out] GB_ADDR_CONFIG register value
 * @num_banks: [out] number of memory banks
 * @num_ranks: [out] number of memory ranks
 *
 * Fields may be appended later; the size in the request code tells them apart.
 */
struct kfd_ioctl_get_tile_config_args {
	__u64 tile_config_ptr;
	__u64 macro_tile_config_ptr;
	__u32 num_tile_configs;
	__u32 num_macro_tile_configs;

	__u32 gpu_id;
	__u32 gb_addr_config;
	__u32 num_banks;
	__u32 num_ranks;
};

/**
 * struct kfd_ioctl_set_trap_handler_args - install a shader trap handler
 * @tba_addr: [in] GPU VA of the trap handler code (trap base address)
 * @tma_addr: [in] GPU VA of the trap handler's data (trap memory address)
 * @gpu_id: [in] device to configure
 * @pad: must be zero
 */
struct kfd_ioctl_set_trap_handler_args {
	__u64 tba_addr;
	__u64 tma_addr;
	__u32 gpu_id;
	__u32 pad;
};

/**
 * struct kfd_ioctl_acquire_vm_args - bind the process to a render node's GPU
 *	address space
 * @drm_fd: [in] file descriptor of an open render node of the device
 * @gpu_id: [in] device the render node belongs to
 *
 * Must precede any memory ioctl on that device.
 */
struct kfd_ioctl_acquire_vm_args {
	__u32 drm_fd;
	__u32 gpu_id;
};

/* ====================================================================== */
/* Debugger interface of KFD 1.x (deprecated)                            */
/* ====================================================================== */

#define MAX_ALLOWED_NUM_POINTS    100
#define MAX_ALLOWED_AW_BUFF_SIZE 4096
#define MAX_ALLOWED_WAC_BUFF_SIZE  128

/**
 * struct kfd_ioctl_dbg_register_args - attach the old debugger interface
 * @gpu_id: [in] device
 * @pad: must be zero
 */
struct kfd_ioctl_dbg_register_args {
	__u32 gpu_id;
	__u32 pad;
};

/**
 * struct kfd_ioctl_dbg_unregister_args - detach the old debugger interface
 * @gpu_id: [in] device
 * @pad: must be zero
 */
struct kfd_ioctl_dbg_unregister_args {
	__u32 gpu_id;
	__u32 pad;
};

/**
 * struct kfd_ioctl_dbg_address_watch_args - set address watch points
 * @content_ptr: [in] user pointer to the packed watch point description
 * @gpu_id: [in] device
 * @buf_size_in_bytes: [in] size of the whole request, this header included
 */
struct kfd_ioctl_dbg_address_watch_args {
	__u64 content_ptr;
	__u32 gpu_id;
	__u32 buf_size_in_bytes;
};

/**
 * struct kfd_ioctl_dbg_wave_control_args - control running waves
 * @content_ptr: [in] user pointer to the packed wave control request
 * @gpu_id: [in] device
 * @buf_size_in_bytes: [in] size of the whole request, this header included
 */
struct kfd_ioctl_dbg_wave_control_args {
	__u64 content_ptr;
	__u32 gpu_id;
	__u32 buf_size_in_bytes;
};

/* ====================================================================== */
/* Events                                                                 */
/* ====================================================================== */

/* A file descriptor field that holds no descriptor. */
#define KFD_INVALID_FD     0xffffffff

/* Values of kfd_ioctl_create_event_args.event_type (the HSA event types). */
#define KFD_IOC_EVENT_SIGNAL			0
#define KFD_IOC_EVENT_NODECHANGE		1
#define KFD_IOC_EVENT_DEVICESTATECHANGE		2
#define KFD_IOC_EVENT_HW_EXCEPTION		3
#define KFD_IOC_EVENT_SYSTEM_EVENT		4
#define KFD_IOC_EVENT_DEBUG_EVENT		5
#define KFD_IOC_EVENT_PROFILE_EVENT		6
#define KFD_IOC_EVENT_QUEUE_EVENT		7
#define KFD_IOC_EVENT_MEMORY			8

/* Values of kfd_ioctl_wait_events_args.wait_result. */
#define KFD_IOC_WAIT_RESULT_COMPLETE		0
#define KFD_IOC_WAIT_RESULT_TIMEOUT		1
#define KFD_IOC_WAIT_RESULT_FAIL		2

/* Number of signal event slots in a process's event page. */
#define KFD_SIGNAL_EVENT_LIMIT			4096

/* Values of kfd_hsa_hw_exception_data.reset_type. */
#define KFD_HW_EXCEPTION_WHOLE_GPU_RESET	0
#define KFD_HW_EXCEPTION_PER_ENGINE_RESET	1

/* Values of kfd_hsa_hw_exception_data.reset_cause. */
#define KFD_HW_EXCEPTION_GPU_HANG	0
#define KFD_HW_EXCEPTION_ECC		1

/* Values of kfd_hsa_memory_exception_data.ErrorType. */
#define KFD_MEM_ERR_NO_RAS		0
#define KFD_MEM_ERR_SRAM_ECC		1
#define KFD_MEM_ERR_POISON_CONSUMED	2
#define KFD_MEM_ERR_GPU_HANG		3

/**
 * struct kfd_ioctl_create_event_args - create an event
 * @event_page_offset: [in/out] for signal events: on the first one, the
 *	handle of a buffer userspace allocated for the event page (0 lets the
 *	driver allocate it); on output, the mmap offset of the event page on
 *	/dev/kfd
 * @event_trigger_data: [out] value to write to the mailbox to signal the
 *	event (signal events only)
 * @event_type: [in] KFD_IOC_EVENT_*
 * @auto_reset: [in] non-zero if a successful wait resets the event
 * @node_id: [in] topology node, for the event types that are per device
 * @event_id: [out] id naming the event in later calls
 * @event_slot_index: [out] slot of the event in the event page
 */
struct kfd_ioctl_create_event_args {
	__u64 event_page_offset;
	__u32 event_trigger_data;
	__u32 event_type;
	__u32 auto_reset;
	__u32 node_id;
	__u32 event_id;
	__u32 event_slot_index;
};

/**
 * struct kfd_ioctl_destroy_event_args - destroy an event
 * @event_id: [in] event to destroy
 * @pad: must be zero
 */
struct kfd_ioctl_destroy_event_args {
	__u32 event_id;
	__u32 pad;
};

/**
 * struct kfd_ioctl_set_event_args - signal an event from the CPU
 * @event_id: [in] event to signal
 * @pad: must be zero
 */
struct kfd_ioctl_set_event_args {
	__u32 event_id;
	__u32 pad;
};

/**
 * struct kfd_ioctl_reset_event_args - return an event to the unsignaled state
 * @event_id: [in] event to reset
 * @pad: must be zero
 */
struct kfd_ioctl_reset_event_args {
	__u32 event_id;
	__u32 pad;
};

/**
 * struct kfd_memory_exception_failure - why a GPU memory access faulted
 * @NotPresent: [out] page absent or privileged
 * @ReadOnly: [out] write to a read-only page
 * @NoExecute: [out] instruction fetch from a non-executable page
 * @imprecise: [out] the faulting address is not exact
 *
 * Each field is a boolean.
 */
struct kfd_memory_exception_failure {
	__u32 NotPresent;
	__u32 ReadOnly;
	__u32 NoExecute;
	__u32 imprecise;
};

/**
 * struct kfd_hsa_memory_exception_data - payload of a memory event
 * @failure: [out] kind of fault
 * @va: [out] faulting GPU virtual address
 * @gpu_id: [out] device that faulted
 * @ErrorType: [out] KFD_MEM_ERR_*; other values are reserved
 */
struct kfd_hsa_memory_exception_data {
	struct kfd_memory_exception_failure failure;
	__u64 va;
	__u32 gpu_id;
	__u32 ErrorType;
};

/**
 * struct kfd_hsa_hw_exception_data - payload of a hardware exception event
 * @reset_type: [out] KFD_HW_EXCEPTION_WHOLE_GPU_RESET or
 *	KFD_HW_EXCEPTION_PER_ENGINE_RESET
 * @reset_cause: [out] KFD_HW_EXCEPTION_GPU_HANG or KFD_HW_EXCEPTION_ECC
 * @memory_lost: [out] non-zero if device memory contents were lost
 * @gpu_id: [out] device that was reset
 */
struct kfd_hsa_hw_exception_data {
	__u32 reset_type;
	__u32 reset_cause;
	__u32 memory_lost;
	__u32 gpu_id;
};

/**
 * struct kfd_event_data - one entry of the array given to WAIT_EVENTS
 * @memory_exception_data: [out] payload, for KFD_IOC_EVENT_MEMORY events
 * @hw_exception_data: [out] payload, for KFD_IOC_EVENT_HW_EXCEPTION events
 * @kfd_event_data_ext: [in] user pointer reserved for larger payloads
 * @event_id: [in] event to wait for
 * @pad: must be zero
 */
struct kfd_event_data {
	__extension__ union {	/* anonymous unions are C11 */
		struct kfd_hsa_memory_exception_data memory_exception_data;
		struct kfd_hsa_hw_exception_data hw_exception_data;
	};
	__u64 kfd_event_data_ext;
	__u32 event_id;
	__u32 pad;
};

/**
 * struct kfd_ioctl_wait_events_args - wait for one or all of some events
 * @events_ptr: [in] user pointer to an array of struct kfd_event_data
 * @num_events: [in] entries in that array
 * @wait_for_all: [in] non-zero to wait for every event, zero for any one
 * @timeout: [in] limit in milliseconds; 0xffffffff waits forever
 * @wait_result: [out] KFD_IOC_WAIT_RESULT_*
 */
struct kfd_ioctl_wait_events_args {
	__u64 events_ptr;
	__u32 num_events;
	__u32 wait_for_all;
	__u32 timeout;
	__u32 wait_result;
};

/* ====================================================================== */
/* Memory                                                                 */
/* ====================================================================== */

/*
 * kfd_ioctl_alloc_memory_of_gpu_args.flags: exactly one of the kinds of
 * memory...
 */
#define KFD_IOC_ALLOC_MEM_FLAGS_VRAM		(1 << 0)
#define KFD_IOC_ALLOC_MEM_FLAGS_GTT		(1 << 1)
#define KFD_IOC_ALLOC_MEM_FLAGS_USERPTR		(1 << 2)
#define KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL	(1 << 3)
#define KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP	(1 << 4)
/*
 * ...and any of the attributes. These are ints like upstream's; bit 31 is
 * spelled so that it does not shift into the sign bit.
 */
#define KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE	((int)(1U << 31))
#define KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE	(1 << 30)
#define KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC		(1 << 29)
#define KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE	(1 << 28)
#define KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM	(1 << 27)
#define KFD_IOC_ALLOC_MEM_FLAGS_COHERENT	(1 << 26)
#define KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED	(1 << 25)

/**
 * struct kfd_ioctl_alloc_memory_of_gpu_args - allocate a buffer object
 * @va_addr: [in] GPU VA the buffer will have on every GPU it is mapped to
 * @size: [in] size in bytes
 * @handle: [out] handle naming the buffer in later calls
 * @mmap_offset: [in/out] for USERPTR: the CPU address of the user memory;
 *	for others, on output, the offset at which to mmap the buffer through
 *	the render node (MMIO_REMAP: through /dev/kfd)
 * @gpu_id: [in] device the buffer belongs to
 * @flags: [in] KFD_IOC_ALLOC_MEM_FLAGS_*
 *
 * The buffer is not GPU-accessible until AMDKFD_IOC_MAP_MEMORY_TO_GPU.
 */
struct kfd_ioctl_alloc_memory_of_gpu_args {
	__u64 va_addr;
	__u64 size;
	__u64 handle;
	__u64 mmap_offset;
	__u32 gpu_id;
	__u32 flags;
};

/**
 * struct kfd_ioctl_free_memory_of_gpu_args - free a buffer object
 * @handle: [in] handle from AMDKFD_IOC_ALLOC_MEMORY_OF_GPU or IMPORT_DMABUF
 */
struct kfd_ioctl_free_memory_of_gpu_args {
	__u64 handle;
};

/**
 * struct kfd_ioctl_map_memory_to_gpu_args - map a buffer on some GPUs
 * @handle: [in] buffer to map
 * @device_ids_array_ptr: [in] user pointer to an array of __u32 gpu_ids
 * @n_devices: [in] entries in that array
 * @n_success: [in/out] leading entries already done: 0 on the first call,
 *	the returned value when retrying after an error
 *
 * On success @n_success equals @n_devices.
 */
struct kfd_ioctl_map_memory_to_gpu_args {
	__u64 handle;
	__u64 device_ids_array_ptr;
	__u32 n_devices;
	__u32 n_success;
};

/**
 * struct kfd_ioctl_unmap_memory_from_gpu_args - unmap a buffer from some GPUs
 * @handle: [in] buffer to unmap
 * @device_ids_array_ptr: [in] user pointer to an array of __u32 gpu_ids
 * @n_devices: [in] entries in that array
 * @n_success: [in/out] as for struct kfd_ioctl_map_memory_to_gpu_args
 */
struct kfd_ioctl_unmap_memory_from_gpu_args {
	__u64 handle;
	__u64 device_ids_array_ptr;
	__u32 n_devices;
	__u32 n_success;
};

/**
 * struct kfd_ioctl_get_available_memory_args - VRAM still allocatable
 * @available: [out] bytes the process can still allocate on the device
 * @gpu_id: [in] device to query
 * @pad: must be zero
 */
struct kfd_ioctl_get_available_memory_args {
	__u64 available;
	__u32 gpu_id;
	__u32 pad;
};

/**
 * struct kfd_ioctl_get_dmabuf_info_args - describe a dma-buf before import
 * @size: [out] size of the buffer in bytes
 * @metadata_ptr: [in] user pointer receiving the buffer's metadata, or 0
 * @metadata_size: [in/out] room at @metadata_ptr; size of the metadata
 * @gpu_id: [out] device the buffer belongs to
 * @flags: [out] KFD_IOC_ALLOC_MEM_FLAGS_* of the buffer
 * @dmabuf_fd: [in] the dma-buf file descriptor
 */
struct kfd_ioctl_get_dmabuf_info_args {
	__u64 size;
	__u64 metadata_ptr;
	__u32 metadata_size;
	__u32 gpu_id;
	__u32 flags;
	__u32 dmabuf_fd;
};

/**
 * struct kfd_ioctl_import_dmabuf_args - make a dma-buf a KFD buffer object
 * @va_addr: [in] GPU VA to give the buffer
 * @handle: [out] handle of the new buffer object
 * @gpu_id: [in] device to import into
 * @dmabuf_fd: [in] the dma-buf file descriptor
 */
struct kfd_ioctl_import_dmabuf_args {
	__u64 va_addr;
	__u64 handle;
	__u32 gpu_id;
	__u32 dmabuf_fd;
};

/**
 * struct kfd_ioctl_export_dmabuf_args - export a buffer object as a dma-buf
 *	(interface 1.12)
 * @handle: [in] buffer to export
 * @flags: [in] flags of the new descriptor: O_CLOEXEC or 0
 * @dmabuf_fd: [out] the new dma-buf file descriptor
 */
struct kfd_ioctl_export_dmabuf_args {
	__u64 handle;
	__u32 flags;
	__u32 dmabuf_fd;
};

/**
 * enum kfd_mmio_remap - register offsets inside the MMIO_REMAP page
 * @KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL: write to flush the HDP memory path
 * @KFD_MMIO_REMAP_HDP_REG_FLUSH_CNTL: write to flush the HDP register path
 */
enum kfd_mmio_remap {
	KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL = 0,
	KFD_MMIO_REMAP_HDP_REG_FLUSH_CNTL = 4
};

/* ====================================================================== */
/* SMI (system management interface) events                               */
/* ====================================================================== */

/**
 * enum kfd_smi_event - events readable from an SMI event file
 * @KFD_SMI_EVENT_NONE: unused
 * @KFD_SMI_EVENT_VMFAULT: a GPU virtual memory fault occurred
 * @KFD_SMI_EVENT_THERMAL_THROTTLE: the device is throttling for heat
 * @KFD_SMI_EVENT_GPU_PRE_RESET: the device is about to be reset
 * @KFD_SMI_EVENT_GPU_POST_RESET: the device reset is over
 * @KFD_SMI_EVENT_MIGRATE_START: SVM migration started
 * @KFD_SMI_EVENT_MIGRATE_END: SVM migration finished
 * @KFD_SMI_EVENT_PAGE_FAULT_START: recoverable page fault being handled
 * @KFD_SMI_EVENT_PAGE_FAULT_END: recoverable page fault handled
 * @KFD_SMI_EVENT_QUEUE_EVICTION: a process's queues were evicted
 * @KFD_SMI_EVENT_QUEUE_RESTORE: a process's queues were restored
 * @KFD_SMI_EVENT_UNMAP_FROM_GPU: memory was unmapped from the GPU
 * @KFD_SMI_EVENT_ALL_PROCESS: not an event: as a mask bit, asks for the
 *	events of every process (privileged) rather than the caller's only
 *
 * The mask written to the event file has bit KFD_SMI_EVENT_MASK_FROM_INDEX()
 * set for each wanted event.
 */
enum kfd_smi_event {
	KFD_SMI_EVENT_NONE = 0,
	KFD_SMI_EVENT_VMFAULT = 1,
	KFD_SMI_EVENT_THERMAL_THROTTLE = 2,
	KFD_SMI_EVENT_GPU_PRE_RESET = 3,
	KFD_SMI_EVENT_GPU_POST_RESET = 4,
	KFD_SMI_EVENT_MIGRATE_START = 5,
	KFD_SMI_EVENT_MIGRATE_END = 6,
	KFD_SMI_EVENT_PAGE_FAULT_START = 7,
	KFD_SMI_EVENT_PAGE_FAULT_END = 8,
	KFD_SMI_EVENT_QUEUE_EVICTION = 9,
	KFD_SMI_EVENT_QUEUE_RESTORE = 10,
	KFD_SMI_EVENT_UNMAP_FROM_GPU = 11,
	KFD_SMI_EVENT_ALL_PROCESS = 64
};

/**
 * enum KFD_MIGRATE_TRIGGERS - why SVM memory migrated
 * @KFD_MIGRATE_TRIGGER_PREFETCH: an explicit prefetch
 * @KFD_MIGRATE_TRIGGER_PAGEFAULT_GPU: a GPU page fault
 * @KFD_MIGRATE_TRIGGER_PAGEFAULT_CPU: a CPU page fault
 * @KFD_MIGRATE_TRIGGER_TTM_EVICTION: VRAM eviction
 */
enum KFD_MIGRATE_TRIGGERS {
	KFD_MIGRATE_TRIGGER_PREFETCH,
	KFD_MIGRATE_TRIGGER_PAGEFAULT_GPU,
	KFD_MIGRATE_TRIGGER_PAGEFAULT_CPU,
	KFD_MIGRATE_TRIGGER_TTM_EVICTION
};

/**
 * enum KFD_QUEUE_EVICTION_TRIGGERS - why a process's queues were evicted
 * @KFD_QUEUE_EVICTION_TRIGGER_SVM: SVM range invalidation
 * @KFD_QUEUE_EVICTION_TRIGGER_USERPTR: userptr invalidation
 * @KFD_QUEUE_EVICTION_TRIGGER_TTM: buffer eviction
 * @KFD_QUEUE_EVICTION_TRIGGER_SUSPEND: system suspend
 * @KFD_QUEUE_EVICTION_CRIU_CHECKPOINT: CRIU PROCESS_INFO
 * @KFD_QUEUE_EVICTION_CRIU_RESTORE: CRIU RESTORE, until RESUME
 */
enum KFD_QUEUE_EVICTION_TRIGGERS {
	KFD_QUEUE_EVICTION_TRIGGER_SVM,
	KFD_QUEUE_EVICTION_TRIGGER_USERPTR,
	KFD_QUEUE_EVICTION_TRIGGER_TTM,
	KFD_QUEUE_EVICTION_TRIGGER_SUSPEND,
	KFD_QUEUE_EVICTION_CRIU_CHECKPOINT,
	KFD_QUEUE_EVICTION_CRIU_RESTORE
};

/**
 * enum KFD_SVM_UNMAP_TRIGGERS - why SVM memory was unmapped from the GPU
 * @KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY: the CPU mapping changed
 * @KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY_MIGRATE: the pages are migrating
 * @KFD_SVM_UNMAP_TRIGGER_UNMAP_FROM_CPU: the CPU range was unmapped
 */
enum KFD_SVM_UNMAP_TRIGGERS {
	KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY,
	KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY_MIGRATE,
	KFD_SVM_UNMAP_TRIGGER_UNMAP_FROM_CPU
};

/* Mask bit for enum kfd_smi_event value i (events are numbered from 1). */
#define KFD_SMI_EVENT_MASK_FROM_INDEX(i) (1ULL << ((i) - 1))
/* Longest text record read from an SMI event file, in bytes. */
#define KFD_SMI_EVENT_MSG_SIZE	96

/**
 * struct kfd_ioctl_smi_events_args - open an SMI event file for a device
 * @gpuid: [in] device to watch
 * @anon_fd: [out] new file descriptor; write a __u64 event mask to it, then
 *	read text records
 */
struct kfd_ioctl_smi_events_args {
	__u32 gpuid;
	__u32 anon_fd;
};

/* ====================================================================== */
/* Checkpoint/restore (CRIU)                                              */
/* ====================================================================== */

/**
 * enum kfd_criu_op - operations of AMDKFD_IOC_CRIU_OP
 * @KFD_CRIU_OP_PROCESS_INFO: checkpointer, on the target's /dev/kfd:
 *	evict the target's queues and report the counts and the size of the
 *	private data. The queues stay evicted until UNPAUSE.
 * @KFD_CRIU_OP_CHECKPOINT: checkpointer, after PROCESS_INFO: fill in the
 *	device and buffer arrays and the private data; every VRAM and GTT
 *	buffer comes with a new dma-buf fd in the caller
 * @KFD_CRIU_OP_UNPAUSE: checkpointer: let the target's queues run again
 * @KFD_CRIU_OP_RESTORE: the restored process, on a fresh /dev/kfd: recreate
 *	everything from the arrays and the private data
 * @KFD_CRIU_OP_RESUME: checkpointer, once the restored process's memory
 *	mappings are all in place: let its queues run
 */
enum kfd_criu_op {
	KFD_CRIU_OP_PROCESS_INFO,
	KFD_CRIU_OP_CHECKPOINT,
	KFD_CRIU_OP_UNPAUSE,
	KFD_CRIU_OP_RESTORE,
	KFD_CRIU_OP_RESUME
};

/**
 * struct kfd_ioctl_criu_args - argument of AMDKFD_IOC_CRIU_OP
 * @devices: [in] user pointer to an array of struct kfd_criu_device_bucket
 *	(CHECKPOINT, RESTORE)
 * @bos: [in] user pointer to an array of struct kfd_criu_bo_bucket
 *	(CHECKPOINT, RESTORE)
 * @priv_data: [in] user pointer to the opaque private data (CHECKPOINT
 *	writes it, RESTORE reads it)
 * @priv_data_size: [in/out] bytes of private data (PROCESS_INFO reports it,
 *	CHECKPOINT and RESTORE take it)
 * @num_devices: [in/out] entries in @devices (PROCESS_INFO reports it)
 * @num_bos: [in/out] entries in @bos (PROCESS_INFO reports it)
 * @num_objects: [in/out] number of opaque objects in the private data
 *	(PROCESS_INFO reports it)
 * @pid: [in/out] the target process (PROCESS_INFO reports it, RESUME
 *	takes it)
 * @op: [in] enum kfd_criu_op
 *
 * The private data is private to the driver and versioned by it.
 *
 * On 64-bit ABIs the struct ends in 4 bytes of implicit padding. The layout
 * is upstream's, so the padding stays unnamed; the kernel ignores it.
 */
struct kfd_ioctl_criu_args {
	__u64 devices;
	__u64 bos;
	__u64 priv_data;
	__u64 priv_data_size;
	__u32 num_devices;
	__u32 num_bos;
	__u32 num_objects;
	__u32 pid;
	__u32 op;
};

/**
 * struct kfd_criu_device_bucket - one GPU of a checkpointed process
 * @user_gpu_id: [in/out] gpu_id the process knows the device by
 * @actual_gpu_id: [in/out] gpu_id of the device on this system
 * @drm_fd: [in] for RESTORE: a render node file descriptor of the device,
 *	opened by the caller
 * @pad: zero
 *
 * CHECKPOINT fills the array; RESTORE takes it back with @actual_gpu_id
 * naming the device chosen on the restoring system.
 */
struct kfd_criu_device_bucket {
	__u32 user_gpu_id;
	__u32 actual_gpu_id;
	__u32 drm_fd;
	__u32 pad;
};

/**
 * struct kfd_criu_bo_bucket - one buffer object of a checkpointed process
 * @addr: [in/out] GPU VA of the buffer
 * @size: [in/out] size in bytes
 * @offset: [in/out] mmap offset of the buffer at checkpoint time: on
 *	/dev/kfd for DOORBELL and MMIO_REMAP buffers, on the render node
 *	otherwise
 * @restored_offset: [out] the buffer's mmap offset after RESTORE, which
 *	replaces @offset in the restored process's mappings
 * @gpu_id: [in/out] device, as the process's own (user) gpu_id
 * @alloc_flags: [in/out] KFD_IOC_ALLOC_MEM_FLAGS_* of the buffer
 * @dmabuf_fd: [out] new dma-buf fd giving access to the contents (VRAM
 *	and GTT buffers), else KFD_INVALID_FD
 * @pad: zero
 *
 * CHECKPOINT fills the array; RESTORE takes it back and fills in
 * @restored_offset and @dmabuf_fd.
 */
struct kfd_criu_bo_bucket {
	__u64 addr;
	__u64 size;
	__u64 offset;
	__u64 restored_offset;
	__u32 gpu_id;
	__u32 alloc_flags;
	__u32 dmabuf_fd;
	__u32 pad;
};

/* ====================================================================== */
/* Shared virtual memory (SVM) and XNACK                                  */
/* ====================================================================== */

/* Range flags, set with KFD_IOCTL_SVM_ATTR_SET_FLAGS. */
/* The CPU can always access the range. */
#define KFD_IOCTL_SVM_FLAG_HOST_ACCESS 0x00000001
/* Accesses are coherent across every device that maps the range. */
#define KFD_IOCTL_SVM_FLAG_COHERENT    0x00000002
/* Any GPU of the preferred device's XGMI hive will do. */
#define KFD_IOCTL_SVM_FLAG_HIVE_LOCAL  0x00000004
/* GPUs only read the range, so it may be copied to each of them. */
#define KFD_IOCTL_SVM_FLAG_GPU_RO      0x00000008
/* GPUs may execute code from the range. */
#define KFD_IOCTL_SVM_FLAG_GPU_EXEC    0x00000010
/* GPUs mostly read the range; writes fault. */
#define KFD_IOCTL_SVM_FLAG_GPU_READ_MOSTLY     0x00000020
/* Keep the GPU mapping valid at all times, as without XNACK. */
#define KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED   0x00000040

/**
 * enum kfd_ioctl_svm_op - operations of AMDKFD_IOC_SVM
 * @KFD_IOCTL_SVM_OP_SET_ATTR: set the given attributes on the range
 * @KFD_IOCTL_SVM_OP_GET_ATTR: read the given attributes of the range
 */
enum kfd_ioctl_svm_op {
	KFD_IOCTL_SVM_OP_SET_ATTR,
	KFD_IOCTL_SVM_OP_GET_ATTR
};

/**
 * enum kfd_ioctl_svm_location - locations that are not a gpu_id
 * @KFD_IOCTL_SVM_LOCATION_SYSMEM: system memory
 * @KFD_IOCTL_SVM_LOCATION_UNDEFINED: no preference; also what GET_ATTR
 *	reports when the pages of the range disagree
 *
 * __extension__: the value does not fit an int, which ISO C frowns upon.
 */
__extension__ enum kfd_ioctl_svm_location {
	KFD_IOCTL_SVM_LOCATION_SYSMEM = 0,
	KFD_IOCTL_SVM_LOCATION_UNDEFINED = 0xffffffff
};

/**
 * enum kfd_ioctl_svm_attr_type - attribute types of struct
 *	kfd_ioctl_svm_attribute
 * @KFD_IOCTL_SVM_ATTR_PREFERRED_LOC: value is the gpu_id where the range
 *	should live, or a kfd_ioctl_svm_location
 * @KFD_IOCTL_SVM_ATTR_PREFETCH_LOC: value is where to migrate the range
 *	now, as for PREFERRED_LOC
 * @KFD_IOCTL_SVM_ATTR_ACCESS: value is a gpu_id that may access the range
 *	(mapped on demand)
 * @KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE: value is a gpu_id that may access
 *	the range where it is, without migration
 * @KFD_IOCTL_SVM_ATTR_NO_ACCESS: value is a gpu_id that may not access the
 *	range
 * @KFD_IOCTL_SVM_ATTR_SET_FLAGS: value is a mask of KFD_IOCTL_SVM_FLAG_* to
 *	set
 * @KFD_IOCTL_SVM_ATTR_CLR_FLAGS: value is a mask of KFD_IOCTL_SVM_FLAG_* to
 *	clear
 * @KFD_IOCTL_SVM_ATTR_GRANULARITY: value is the migration granularity, as
 *	log2 of a page count
 */
enum kfd_ioctl_svm_attr_type {
	KFD_IOCTL_SVM_ATTR_PREFERRED_LOC,
	KFD_IOCTL_SVM_ATTR_PREFETCH_LOC,
	KFD_IOCTL_SVM_ATTR_ACCESS,
	KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE,
	KFD_IOCTL_SVM_ATTR_NO_ACCESS,
	KFD_IOCTL_SVM_ATTR_SET_FLAGS,
	KFD_IOCTL_SVM_ATTR_CLR_FLAGS,
	KFD_IOCTL_SVM_ATTR_GRANULARITY
};

/**
 * struct kfd_ioctl_svm_attribute - one attribute of an SVM range
 * @type: [in/out] enum kfd_ioctl_svm_attr_type; GET_ATTR rewrites the
 *	access types to say which access the gpu_id in @value has
 * @value: [in/out] meaning depends on @type
 */
struct kfd_ioctl_svm_attribute {
	__u32 type;
	__u32 value;
};

/**
 * struct kfd_ioctl_svm_args - argument of AMDKFD_IOC_SVM
 * @start_addr: [in] first byte of the range, page aligned
 * @size: [in] length of the range in bytes, page aligned
 * @op: [in] enum kfd_ioctl_svm_op
 * @nattr: [in] entries in @attrs
 * @attrs: [in/out] the attributes to set or to read
 *
 * SET_ATTR applies the attributes to exactly the given range, splitting
 * existing ranges where needed. GET_ATTR combines the attributes of every
 * page in the range: locations that differ read as
 * KFD_IOCTL_SVM_LOCATION_UNDEFINED, SET_FLAGS reads the flags set on every
 * page, CLR_FLAGS the flags clear on every page, GRANULARITY the smallest.
 * An unknown attribute type fails with -EINVAL.
 */
struct kfd_ioctl_svm_args {
	__u64 start_addr;
	__u64 size;
	__u32 op;
	__u32 nattr;
	struct kfd_ioctl_svm_attribute attrs[];
};

/**
 * struct kfd_ioctl_set_xnack_mode_args - query or switch XNACK (retry on
 *	GPU page faults) for the process
 * @xnack_enabled: [in/out] on input 0 disables, a positive value enables,
 *	a negative value only queries; on output the mode now in force
 *
 * The mode can only change while the process has no queues, and only if
 * every GPU it uses supports the new mode. Shaders must be built for it.
 */
struct kfd_ioctl_set_xnack_mode_args {
	__s32 xnack_enabled;
};

/* ====================================================================== */
/* mmap offsets on /dev/kfd (published by kfdsim; private upstream)       */
/* ====================================================================== */

/*
 * An offset passed to mmap() on /dev/kfd says what to map: the mapping type
 * in bits 63:62 and, for per-device mappings, the gpu_id in bits 61:46. The
 * driver hands these offsets out (CREATE_QUEUE's doorbell_offset,
 * CREATE_EVENT's event_page_offset, the mmap_offset of MMIO_REMAP buffers,
 * the CRIU offsets of DOORBELL and MMIO_REMAP buffers); users normally pass
 * them on unchanged. The values
 * are those of the upstream kernel, which does not export them.
 */
#define KFD_MMAP_TYPE_SHIFT		62ULL
#define KFD_MMAP_TYPE_MASK		(0x3ULL << KFD_MMAP_TYPE_SHIFT)
/* The process's doorbell slice on one GPU. */
#define KFD_MMAP_TYPE_DOORBELL		(0x3ULL << KFD_MMAP_TYPE_SHIFT)
/* The process's event (signal) page. */
#define KFD_MMAP_TYPE_EVENTS		(0x2ULL << KFD_MMAP_TYPE_SHIFT)
/* Memory reserved for the CWSR trap handler on one GPU. */
#define KFD_MMAP_TYPE_RESERVED_MEM	(0x1ULL << KFD_MMAP_TYPE_SHIFT)
/* The MMIO_REMAP register page of one GPU. */
#define KFD_MMAP_TYPE_MMIO		(0x0ULL << KFD_MMAP_TYPE_SHIFT)

#define KFD_MMAP_GPU_ID_SHIFT		46ULL
#define KFD_MMAP_GPU_ID_MASK		(0xffffULL << KFD_MMAP_GPU_ID_SHIFT)
/* The gpu_id bits of an offset for device gpu_id. */
#define KFD_MMAP_GPU_ID(gpu_id) \
	((((__u64)(gpu_id)) << KFD_MMAP_GPU_ID_SHIFT) & KFD_MMAP_GPU_ID_MASK)
/* The gpu_id encoded in offset off. */
#define KFD_MMAP_GET_GPU_ID(off) \
	((((__u64)(off)) & KFD_MMAP_GPU_ID_MASK) >> KFD_MMAP_GPU_ID_SHIFT)

/* ====================================================================== */
/* ioctl request codes                                                    */
/* ====================================================================== */

#define AMDKFD_IOCTL_BASE 'K'
#define AMDKFD_IO(nr)			_IO(AMDKFD_IOCTL_BASE, nr)
#define AMDKFD_IOR(nr, type)		_IOR(AMDKFD_IOCTL_BASE, nr, type)
#define AMDKFD_IOW(nr, type)		_IOW(AMDKFD_IOCTL_BASE, nr, type)
#define AMDKFD_IOWR(nr, type)		_IOWR(AMDKFD_IOCTL_BASE, nr, type)

#define AMDKFD_IOC_GET_VERSION \
	AMDKFD_IOR(0x01, struct kfd_ioctl_get_version_args)
#define AMDKFD_IOC_CREATE_QUEUE \
	AMDKFD_IOWR(0x02, struct kfd_ioctl_create_queue_args)
#define AMDKFD_IOC_DESTROY_QUEUE \
	AMDKFD_IOWR(0x03, struct kfd_ioctl_destroy_queue_args)
#define AMDKFD_IOC_SET_MEMORY_POLICY \
	AMDKFD_IOW(0x04, struct kfd_ioctl_set_memory_policy_args)
#define AMDKFD_IOC_GET_CLOCK_COUNTERS \
	AMDKFD_IOWR(0x05, struct kfd_ioctl_get_clock_counters_args)
#define AMDKFD_IOC_GET_PROCESS_APERTURES \
	AMDKFD_IOR(0x06, struct kfd_ioctl_get_process_apertures_args)
#define AMDKFD_IOC_UPDATE_QUEUE \
	AMDKFD_IOW(0x07, struct kfd_ioctl_update_queue_args)
#define AMDKFD_IOC_CREATE_EVENT \
	AMDKFD_IOWR(0x08, struct kfd_ioctl_create_event_args)
#define AMDKFD_IOC_DESTROY_EVENT \
	AMDKFD_IOW(0x09, struct kfd_ioctl_destroy_event_args)
#define AMDKFD_IOC_SET_EVENT \
	AMDKFD_IOW(0x0A, struct kfd_ioctl_set_event_args)
#define AMDKFD_IOC_RESET_EVENT \
	AMDKFD_IOW(0x0B, struct kfd_ioctl_reset_event_args)
#define AMDKFD_IOC_WAIT_EVENTS \
	AMDKFD_IOWR(0x0C, struct kfd_ioctl_wait_events_args)
#define AMDKFD_IOC_DBG_REGISTER_DEPRECATED \
	AMDKFD_IOW(0x0D, struct kfd_ioctl_dbg_register_args)
#define AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED \
	AMDKFD_IOW(0x0E, struct kfd_ioctl_dbg_unregister_args)
#define AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED \
	AMDKFD_IOW(0x0F, struct kfd_ioctl_dbg_address_watch_args)
#define AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED \
	AMDKFD_IOW(0x10, struct kfd_ioctl_dbg_wave_control_args)
#define AMDKFD_IOC_SET_SCRATCH_BACKING_VA \
	AMDKFD_IOWR(0x11, struct kfd_ioctl_set_scratch_backing_va_args)
#define AMDKFD_IOC_GET_TILE_CONFIG \
	AMDKFD_IOWR(0x12, struct kfd_ioctl_get_tile_config_args)
#define AMDKFD_IOC_SET_TRAP_HANDLER \
	AMDKFD_IOW(0x13, struct kfd_ioctl_set_trap_handler_args)
#define AMDKFD_IOC_GET_PROCESS_APERTURES_NEW \
	AMDKFD_IOWR(0x14, struct kfd_ioctl_get_process_apertures_new_args)
#define AMDKFD_IOC_ACQUIRE_VM \
	AMDKFD_IOW(0x15, struct kfd_ioctl_acquire_vm_args)
#define AMDKFD_IOC_ALLOC_MEMORY_OF_GPU \
	AMDKFD_IOWR(0x16, struct kfd_ioctl_alloc_memory_of_gpu_args)
#define AMDKFD_IOC_FREE_MEMORY_OF_GPU \
	AMDKFD_IOW(0x17, struct kfd_ioctl_free_memory_of_gpu_args)
#define AMDKFD_IOC_MAP_MEMORY_TO_GPU \
	AMDKFD_IOWR(0x18, struct kfd_ioctl_map_memory_to_gpu_args)
#define AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU \
	AMDKFD_IOWR(0x19, struct kfd_ioctl_unmap_memory_from_gpu_args)
#define AMDKFD_IOC_SET_CU_MASK \
	AMDKFD_IOW(0x1A, struct kfd_ioctl_set_cu_mask_args)
#define AMDKFD_IOC_GET_QUEUE_WAVE_STATE \
	AMDKFD_IOWR(0x1B, struct kfd_ioctl_get_queue_wave_state_args)
#define AMDKFD_IOC_GET_DMABUF_INFO \
	AMDKFD_IOWR(0x1C, struct kfd_ioctl_get_dmabuf_info_args)
#define AMDKFD_IOC_IMPORT_DMABUF \
	AMDKFD_IOWR(0x1D, struct kfd_ioctl_import_dmabuf_args)
#define AMDKFD_IOC_ALLOC_QUEUE_GWS \
	AMDKFD_IOWR(0x1E, struct kfd_ioctl_alloc_queue_gws_args)
#define AMDKFD_IOC_SMI_EVENTS \
	AMDKFD_IOWR(0x1F, struct kfd_ioctl_smi_events_args)
#define AMDKFD_IOC_SVM \
	AMDKFD_IOWR(0x20, struct kfd_ioctl_svm_args)
#define AMDKFD_IOC_SET_XNACK_MODE \
	AMDKFD_IOWR(0x21, struct kfd_ioctl_set_xnack_mode_args)
#define AMDKFD_IOC_CRIU_OP \
	AMDKFD_IOWR(0x22, struct kfd_ioctl_criu_args)
#define AMDKFD_IOC_AVAILABLE_MEMORY \
	AMDKFD_IOWR(0x23, struct kfd_ioctl_get_available_memory_args)
#define AMDKFD_IOC_EXPORT_DMABUF \
	AMDKFD_IOWR(0x24, struct kfd_ioctl_export_dmabuf_args)

/* Valid request numbers are AMDKFD_COMMAND_START .. AMDKFD_COMMAND_END - 1. */
#define AMDKFD_COMMAND_START		0x01
#define AMDKFD_COMMAND_END		0x25

#endif /* KFD_IOCTL_H_INCLUDED */
