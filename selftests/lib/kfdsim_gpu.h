/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny GPU "runtime" for the kfdsim selftests of queues, the command
 * processor, SDMA, events and preemption.
 *
 * It sits on top of kfdsim_test.h: a struct kg_rt is a kt_env (one /dev/kfd
 * and an acquired render node per GPU) plus a GPU VA allocator, the doorbell
 * mappings and a pool of HSA signals. Queues keep their ring in a GTT BO and
 * their read/write pointers, kernel descriptors and kernel arguments in a
 * second GTT BO, all GPU-mapped on the queue's GPU and CPU-mapped through
 * the render node.
 *
 * Like kfdsim_test.h this does not include the kselftest harness: functions
 * return 0 or -errno and leave asserting to the test.
 */
#ifndef KFDSIM_GPU_H
#define KFDSIM_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/kfd_ioctl.h>
#include <linux/kfdsim.h>

#include "kfdsim_test.h"

#define KG_DEBUGFS		"/sys/kernel/debug/kfdsim"
#define KG_EVICT		KG_DEBUGFS "/evict"
#define KG_RESTORE		KG_DEBUGFS "/restore"
#define KG_QUEUES		KG_DEBUGFS "/queues"
#define KG_CP_FAIL_NTH		KG_DEBUGFS "/cp_fail_nth"

/* Default wait for the simulated GPU: generous, TCG is slow. */
#define KG_TIMEOUT_MS		(60000 * kt_timeout_scale())

/* GPU VAs handed out by kg_bo_new(), far above the KT_VA() slots. */
#define KG_VA_BASE		0x200000000000ULL
#define KG_VA_ALIGN		(2 * KT_MIB)

/* kg_bo_new() options (the ALLOC flags are passed separately). */
#define KG_MAP_OWN	0x0	/* GPU-map on the BO's own GPU (default) */
#define KG_MAP_ALL	0x1	/* GPU-map on every GPU */
#define KG_MAP_NONE	0x2	/* no GPU mapping */
#define KG_NO_CPU	0x4	/* no CPU mapping */

/* AQL header of a packet type with system-scope acquire and release. */
#define KG_AQL_HDR(type)						\
	((uint16_t)((type) |						\
		    KFDSIM_AQL_FENCE_SCOPE_SYSTEM <<			\
			KFDSIM_AQL_HEADER_ACQUIRE_SHIFT |		\
		    KFDSIM_AQL_FENCE_SCOPE_SYSTEM <<			\
			KFDSIM_AQL_HEADER_RELEASE_SHIFT))

/* kg_aql_commit(): which write pointers to advance. */
#define KG_RING_WPTR		0x1	/* the in-memory write index */
#define KG_RING_DOORBELL	0x2
#define KG_RING_BOTH		(KG_RING_WPTR | KG_RING_DOORBELL)

struct kg_bo {
	uint64_t handle;
	uint64_t va;
	uint64_t size;
	uint64_t mmap_offset;
	void *cpu;		/* CPU mapping, or NULL */
	int gpu;		/* index of the GPU it was allocated on */
	bool mapped;		/* GPU-mapped (on one or all GPUs) */
	bool map_all;
};

struct kg_signal {
	struct kfdsim_signal *cpu;
	uint64_t va;
};

#define KG_SIGNALS_PER_POOL	1024

struct kg_rt {
	struct kt_env e;
	uint32_t ids[KT_MAX_GPUS];
	uint64_t *doorbells[KT_MAX_GPUS];	/* slice mapping, lazily */
	uint64_t next_va;
	struct kg_bo sigpool;		/* made on first use, GPU 0, all mapped */
	unsigned int nsignals;
};

struct kg_queue {
	struct kg_rt *rt;
	int gpu;
	uint32_t type;
	uint32_t id;
	uint32_t ring_size;	/* bytes */
	uint64_t doorbell_offset;
	struct kg_bo ring;
	struct kg_bo ctl;	/* rptr, wptr, descriptors, kernargs */
	volatile uint64_t *rptr;
	volatile uint64_t *wptr;
	volatile uint64_t *doorbell;
	uint64_t windex;	/* next write: AQL packets, SDMA bytes */
};

/* The highest enum kfdsim_kernel_op: every queue has a descriptor up to it. */
#define KG_KERNEL_LAST		KFDSIM_KERNEL_CHUNK_ZERO

/*
 * gfx906 machine code for what a test's point does not need kfdsim for
 * (lib/kernels/kg_code.s): kg_dispatch() takes these in place of the
 * built-in op of the same name, with the same kernarg; code that would run
 * on an AMD GPU as well. Expected results come from the test, by hand.
 */
enum kg_code {
	KG_CODE_FILL_U32 = 0x100,	/* struct kfdsim_args_fill */
	KG_CODE_COPY_U32,		/* struct kfdsim_args_copy */
	KG_CODE_END
};

/* Offsets inside a queue's ctl BO. */
#define KG_CTL_RPTR		0
#define KG_CTL_WPTR		8
#define KG_CTL_DESC(op)		(256 + 64 * (op))	/* op 1..KG_KERNEL_LAST */
/* AMDHSA kernel descriptors of the kg_code kernels, then their code. */
#define KG_CTL_CODE_DESC(k)	(1024 + 64 * ((k) - KG_CODE_FILL_U32))
#define KG_CTL_CODE		1280
#define KG_CTL_CODE_MAX		(4096 - KG_CTL_CODE)
#define KG_CTL_KERNARG		4096		/* 64 B per ring slot */

/* An AMDHSA code object v3 kernel descriptor (AMDGPUUsage), 64 bytes. */
struct kg_kd {
	uint32_t group_segment_fixed_size;
	uint32_t private_segment_fixed_size;
	uint32_t kernarg_size;
	uint32_t reserved0;
	int64_t kernel_code_entry_byte_offset;
	uint8_t reserved1[20];
	uint32_t compute_pgm_rsrc3;
	uint32_t compute_pgm_rsrc1;
	uint32_t compute_pgm_rsrc2;
	uint16_t kernel_code_properties;
	uint8_t reserved2[6];
};

_Static_assert(sizeof(struct kg_kd) == 64, "kernel descriptor size");

/* lib/kernels/kg_code.s assembled (generated kg_code.c). */
extern const uint8_t kg_code[];
extern const size_t kg_code_size;
extern const uint32_t kg_fill_u32_off, kg_copy_u32_off;

/*
 * Write the descriptors of the kg_code kernels and their code into the
 * ctl BO of an AQL queue at @ctl (CPU mapping), as every kg queue has.
 */
void kg_code_write(void *ctl);

/* ---- runtime ---- */

/* Open /dev/kfd and every GPU, acquire every VM. 0 or -errno. */
int kg_open(struct kg_rt *rt);
void kg_close(struct kg_rt *rt);

/*
 * For test files (kt_harness.h): a fixture NAME that holds only a runtime,
 * self->rt, opened by the setup and closed by the teardown.
 */
#define KG_FIXTURE(name)				\
	FIXTURE(name) {					\
		struct kg_rt rt;			\
	};						\
	FIXTURE_SETUP(name)				\
	{						\
		ASSERT_EQ(0, kg_open(&self->rt));	\
	}						\
	FIXTURE_TEARDOWN(name)				\
	{						\
		kg_close(&self->rt);			\
	}

/* ---- buffer objects ---- */

/*
 * Allocate @size bytes (rounded up to a page) of @flags memory
 * (KT_VRAM/KT_GTT | KT_WRITABLE ...) on GPU index @gpu at a fresh GPU VA
 * followed by an unmapped gap, then map it as @opts says.
 */
int kg_bo_new(struct kg_rt *rt, int gpu, uint64_t size, uint32_t flags,
	      unsigned int opts, struct kg_bo *bo);
int kg_bo_free(struct kg_rt *rt, struct kg_bo *bo);
/* A GPU VA with nothing mapped within 2 MiB either side. */
uint64_t kg_va_hole(struct kg_rt *rt);

/* ---- queues ---- */

/*
 * Create a queue of @type (KFD_IOC_QUEUE_TYPE_COMPUTE_AQL or _SDMA) with a
 * ring of @ring_size bytes on GPU index @gpu, and map its doorbell.
 */
int kg_queue_new(struct kg_rt *rt, int gpu, uint32_t type,
		 uint32_t ring_size, struct kg_queue *q);
/*
 * An AQL queue as kg_queue_new() makes one, with a context save area of
 * @ctx_size bytes at @ctx_va (the caller maps it) and a control stack of
 * @ctl_stack_size bytes. 0 or -errno (CREATE_QUEUE's).
 */
int kg_queue_new_ctx(struct kg_rt *rt, int gpu, uint32_t ring_size,
		     uint64_t ctx_va, uint32_t ctx_size,
		     uint32_t ctl_stack_size, struct kg_queue *q);
/*
 * For a queue built by hand, as kg_queue_new() builds one: point @q's read
 * and write pointers into its ctl BO and fill in the CREATE_QUEUE fields
 * for its ring, pointers, GPU and type (100 %, priority 7). The other
 * fields of @a are the caller's.
 */
void kg_queue_args(struct kg_queue *q, struct kfd_ioctl_create_queue_args *a);
/*
 * An AQL queue whose ctl BO starts with an amd_queue_t as ROCr lays it out
 * (include/uapi/linux/kfdsim.h): read pointer at read_dispatch_id, its
 * offset after it, write pointer at write_dispatch_id; the inactive signal
 * (a u64 GPU VA at KFDSIM_AMD_QUEUE_INACTIVE_SIGNAL of ctl) starts at 0.
 */
int kg_queue_new_amd(struct kg_rt *rt, int gpu, uint32_t ring_size,
		     struct kg_queue *q);
/* DESTROY_QUEUE, then free the queue's BOs. Returns the ioctl's result. */
int kg_queue_free(struct kg_queue *q);
/* Wait until the queue's read pointer reaches its write index. */
int kg_queue_wait_idle(struct kg_queue *q, int timeout_ms);
/* The CP's read pointer as it last wrote it. */
uint64_t kg_queue_rptr(const struct kg_queue *q);

/* ---- AQL ---- */

uint32_t kg_aql_entries(const struct kg_queue *q);
void *kg_aql_slot(const struct kg_queue *q, uint64_t index);
/* Wait for a free slot at the write index. 0 or -ETIMEDOUT. */
int kg_aql_wait_room(struct kg_queue *q, int timeout_ms);
/*
 * Copy @pkt (64 bytes) into the slot at the write index: the body first,
 * then, if @header, the header with a release store (else the slot's header
 * is set to INVALID). The write index does not move.
 */
void kg_aql_write(struct kg_queue *q, const void *pkt, bool header);
/* Store @header into slot @index with release semantics. */
void kg_aql_publish(struct kg_queue *q, uint64_t index, uint16_t header);
/* Advance the write index by one and publish it as @how says. */
void kg_aql_commit(struct kg_queue *q, unsigned int how);
/* wait_room + write + commit(BOTH). */
int kg_aql_submit(struct kg_queue *q, const void *pkt);

/*
 * Build a dispatch packet of built-in kernel @op over @n work-items in
 * workgroups of @wg; its arguments (@args, @args_size bytes, <= 64) go to
 * the kernarg slot of the packet's ring slot. @sig_va may be 0.
 */
void kg_dispatch_packet(struct kg_queue *q, uint32_t op, const void *args,
			size_t args_size, uint32_t n, uint32_t wg,
			uint64_t sig_va, struct kfdsim_aql_dispatch *pkt);
int kg_dispatch(struct kg_queue *q, uint32_t op, const void *args,
		size_t args_size, uint32_t n, uint32_t wg, uint64_t sig_va);
/* Barrier-AND or -OR (@type) on up to 5 signal VAs (0 = unused). */
int kg_barrier(struct kg_queue *q, uint32_t type, const uint64_t *deps,
	       unsigned int ndeps, uint64_t sig_va);

/* ---- signals ---- */

int kg_signal_new(struct kg_rt *rt, int64_t value, struct kg_signal *s);
void kg_signal_store(struct kg_signal *s, int64_t value);
int64_t kg_signal_load(const struct kg_signal *s);
/* Wait until the value equals @value: 0, or -ETIMEDOUT. */
int kg_signal_wait(const struct kg_signal *s, int64_t value, int timeout_ms);

/* ---- SDMA ---- */

/*
 * Packet encoders: each writes one packet into @dw and returns its length
 * in dwords. @count is the packet's count field as is: the number of
 * bytes minus one for a well-formed packet.
 */
uint32_t kg_sdma_copy_packet(uint32_t *dw, uint64_t dst, uint64_t src,
			     uint32_t count);
/* A constant fill of dwords. */
uint32_t kg_sdma_fill_packet(uint32_t *dw, uint64_t dst, uint32_t value,
			     uint32_t count);
uint32_t kg_sdma_fence_packet(uint32_t *dw, uint64_t addr, uint32_t value);
/* @event_id goes into the packet unmasked. */
uint32_t kg_sdma_trap_packet(uint32_t *dw, uint32_t event_id);
/* Pad @n dwords of packets with NOPs to a multiple of 8, as ROCm pads IBs. */
uint32_t kg_sdma_pad(uint32_t *dw, uint32_t n);

/* Copy @ndw dwords into the ring (waiting for room), do not ring. */
int kg_sdma_write(struct kg_queue *q, const uint32_t *dw, uint32_t ndw);
/* Publish everything written: write pointer and doorbell, in bytes. */
void kg_sdma_commit(struct kg_queue *q);
/* Linear copies of at most @chunk bytes each (0: the 4 MiB maximum). */
int kg_sdma_copy(struct kg_queue *q, uint64_t dst, uint64_t src,
		 uint64_t bytes, uint32_t chunk);
int kg_sdma_fill(struct kg_queue *q, uint64_t dst, uint32_t value,
		 uint64_t bytes);
int kg_sdma_fence(struct kg_queue *q, uint64_t addr, uint32_t value);
int kg_sdma_trap(struct kg_queue *q, uint32_t event_id);
int kg_sdma_nop(struct kg_queue *q, uint32_t extra);

/* ---- events ---- */

int kg_event_new(int kfd, uint32_t type, bool auto_reset, uint64_t page,
		 struct kfd_ioctl_create_event_args *out);
int kg_event_destroy(int kfd, uint32_t id);
int kg_event_set(int kfd, uint32_t id);
int kg_event_reset(int kfd, uint32_t id);
/*
 * WAIT_EVENTS on @n entries of @ev (event_id filled in). Returns the ioctl
 * result (0 or -errno, EINTR retried with the updated timeout); the
 * wait_result in @result.
 */
int kg_wait(int kfd, struct kfd_event_data *ev, uint32_t n, bool all,
	    uint32_t timeout_ms, uint32_t *result);
/* One event: returns the wait_result, or a negative errno. */
int kg_wait1(int kfd, uint32_t id, uint32_t timeout_ms);

/* ---- preemption and debugfs ---- */

int kg_evict(pid_t pid);
int kg_restore(pid_t pid);
/* Make the Nth allocation of a CP thread fail, once / read what is left. */
int kg_cp_fail_nth_set(int n);
int kg_cp_fail_nth_get(void);

struct kg_qinfo {
	uint32_t gpu_id;
	int pid;
	uint32_t queue;
	uint32_t type;
	uint64_t rptr;
	uint32_t iteration;
	uint32_t next_wg;
	uint32_t flags;
	int evicted;
};

/* The debugfs "queues" line of queue @queue of process @pid: 0 / -ENOENT. */
int kg_qinfo(pid_t pid, uint32_t queue, struct kg_qinfo *qi);
/* Number of queues of @pid listed (-errno on error). */
int kg_qcount(pid_t pid);

/*
 * pids of the CP worker kthreads of process @owner ("kfdsim_w<gpu>/<owner>",
 * one per GPU it has queues on), or of every process if @owner is 0;
 * count or -errno.
 */
int kg_cp_threads(pid_t owner, pid_t *pids, int max);
/* CPU time of a task in ns (schedstat, else utime + stime); 0 or -errno. */
int kg_task_cpu_ns(pid_t pid, unsigned long long *ns);
/* utime + stime of a task, in clock ticks. */
int kg_task_ticks(pid_t pid, unsigned long long *ticks);

/* ---- misc ---- */

uint64_t kg_now_ms(void);
void kg_sleep_ms(unsigned int ms);

/*
 * The loop kernel's recurrence is affine, so @steps steps from step @first
 * are x -> A * x + B; compute A and B.
 */
void kg_loop_affine(uint32_t first, uint32_t steps, uint32_t *a, uint32_t *b);

/*
 * How many steps of the loop kernel over @n elements (workgroups of @wg)
 * take about @ms milliseconds on GPU index @gpu, measured with a short run.
 */
int kg_loop_steps_for(struct kg_rt *rt, int gpu, uint32_t n, uint32_t wg,
		      unsigned int ms, uint32_t *steps);

#endif /* KFDSIM_GPU_H */
