// SPDX-License-Identifier: GPL-2.0
/*
 * The command processor of a simulated GPU.
 *
 * Each process with queues on a GPU has a worker kthread there
 * ("kfdsim_w<gpu>/<pid>") that serves that process's queues round-robin:
 * in each turn its queues are tried in turn until one makes progress in
 * its time slice. For a queue it compares the read pointer with the
 * write pointer the process published (doorbell, and for AQL also the
 * write index in memory), fetches packets from the ring through the
 * process's GPU page table and executes them, for at most one time slice.
 * The worker is attached to the cgroups of the task that created the
 * process's first queue on the GPU, so the CPU time the CP spends on the
 * process counts against that cgroup (cpu.stat, cpu.max); fairness
 * between processes is the host scheduler's, one worker per process
 * whatever its number of queues.
 *
 * Doorbell writes are plain memory writes the CPU cannot trap, so the worker
 * polls, backing off from KFDSIM_CP_POLL_MIN_US to KFDSIM_CP_POLL_MAX_US while
 * nothing happens, and sleeps without polling while no queue may run at all.
 *
 * The worker holds its process's turn lock (kfdsim_cp_proc.turn) for one
 * turn at a time (at most one slice that makes progress) and drops it
 * between turns, so anyone who takes the lock knows no packet of that
 * process on that GPU is mid-execution, and waits for at most one slice:
 * the kernels and the SDMA engine stop at a workgroup or packet boundary
 * once the slice's deadline passed, a workgroup has at most
 * KFDSIM_MAX_WG_SIZE work-items and an SDMA packet moves at most 4 MiB, and
 * the dispatch progress is saved in the queue state, as for preemption.
 * One process's queues never hold up another's queue management, eviction
 * or exit.
 *
 * Lock order: process lock (kfd_process.lock) -> kfdsim_cp.lock -> turn
 * lock -> what a slice takes (the VM's page-table lock, the event locks).
 * kfdsim_cp.lock guards only the GPU's list of processes and is never held
 * for a slice; no two turn locks are held at once. The process lock is
 * held by everyone who starts or stops a worker (CREATE_QUEUE, DESTROY_QUEUE,
 * RESTORE, process exit), and the worker never takes it.
 *
 * A transient -ENOMEM leaves the queue as it was (nothing of the packet has
 * run yet) and the packet is retried on a later round, after the idle back
 * off; only a GPU page fault or a bad packet stops a queue for good.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/kfd_ioctl.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "kfdsim.h"
#include "gfx9/kfdsim_gfx9.h"

#define KFDSIM_CP_SLICE_NS	(2 * NSEC_PER_MSEC)
#define KFDSIM_CP_POLL_MIN_US	50
#define KFDSIM_CP_POLL_MAX_US	4000
/* After about a second of idle polling, poll this slowly. */
#define KFDSIM_CP_POLL_IDLE_US	20000
#define KFDSIM_CP_IDLE_ROUNDS	250
/* A slice this much longer than planned means a slow workgroup or packet. */
#define KFDSIM_CP_OVERRUN_NS	(2000 * NSEC_PER_MSEC)
/* The longest a worker stands back for kfdsim_cp_turn_lock() callers. */
#define KFDSIM_CP_YIELD_JIFFIES	(HZ / 10)

enum kfdsim_run {
	KFDSIM_RUN_IDLE,	/* nothing to do, or waiting on something */
	KFDSIM_RUN_BUSY,	/* made progress, more may follow */
};

static atomic_t kfdsim_cp_fail_nth = ATOMIC_INIT(0);

/**
 * kfdsim_cp_should_fail - fault injection point of the CP threads
 *
 * The allocations a CP thread makes while it runs a packet (the kernel
 * engine's and the SDMA engine's bounce buffers) pass here first. Once
 * armed through debugfs (cp_fail_nth = N), the Nth call made by a CP
 * thread returns true and disarms; calls from other contexts (amdgpu CS
 * runs the SDMA engine in the submitter's ioctl) neither count nor fail.
 *
 * Return: true if the caller must fail as if its allocation had failed.
 */
bool kfdsim_cp_should_fail(void)
{
	if (!(current->flags & PF_KTHREAD) ||
	    atomic_read(&kfdsim_cp_fail_nth) <= 0 ||
	    atomic_dec_return(&kfdsim_cp_fail_nth))
		return false;
	pr_info("CP: injected allocation failure\n");
	return true;
}

void kfdsim_cp_set_fail_nth(int n)
{
	atomic_set(&kfdsim_cp_fail_nth, n);
}

int kfdsim_cp_get_fail_nth(void)
{
	return max(atomic_read(&kfdsim_cp_fail_nth), 0);
}

static bool kfdsim_queue_runnable(const struct kfd_queue *q)
{
	return !q->evicted && q->percentage &&
	       !(q->state.flags & KFDSIM_QSTATE_ERROR);
}

u64 kfdsim_queue_doorbell_value(struct kfd_queue *q)
{
	u64 *slice = page_address(q->pdd->doorbells);

	return READ_ONCE(slice[q->doorbell]);
}

/* Post @sig's event id to its event mailbox, if it has one, and fire it. */
static int kfdsim_signal_fire(struct kfd_queue *q, u64 sig,
			      struct kfdsim_fault *fault)
{
	struct kfdsim_vm *vm = &q->pdd->vm;
	struct kfdsim_signal s;
	u64 id;
	int ret;

	ret = kfdsim_vm_read(vm, sig, &s, sizeof(s), fault);
	if (ret)
		return ret;
	if (!s.event_mailbox_ptr)
		return 0;
	id = s.event_id;
	ret = kfdsim_vm_write(vm, s.event_mailbox_ptr, &id, sizeof(id), fault);
	if (ret)
		return ret;
	kgd2kfd_signal_event(q, s.event_id);
	return 0;
}

/* Completing a packet with a signal: decrement its value, then fire it. */
static int kfdsim_signal_complete(struct kfd_queue *q, u64 sig,
				  struct kfdsim_fault *fault)
{
	s64 old;
	int ret;

	if (!sig)
		return 0;
	ret = kfdsim_vm_atomic_add64(&q->pdd->vm,
				     sig + offsetof(struct kfdsim_signal, value),
				     -1, &old, fault);
	if (ret)
		return ret;
	return kfdsim_signal_fire(q, sig, fault);
}

/* The queue's amd_queue_t if it is laid out as ROCr lays it out, or 0. */
static u64 kfdsim_amd_queue(struct kfd_queue *q)
{
	struct kfdsim_fault fault;
	u64 base;
	u32 off;

	if (kfdsim_vm_read(&q->pdd->vm, q->rptr_va + sizeof(u64), &off,
			   sizeof(off), &fault) ||
	    off != KFDSIM_AMD_QUEUE_READ_DISPATCH_ID || q->rptr_va < off)
		return 0;
	base = q->rptr_va - off;
	if (q->wptr_va != base + KFDSIM_AMD_QUEUE_WRITE_DISPATCH_ID)
		return 0;
	return base;
}

/*
 * Tell the runtime why its AQL queue stopped, as gfx9 CP firmware does:
 * store @code into the inactive signal of the queue's amd_queue_t and fire
 * the signal's event (include/uapi/linux/kfdsim.h). Only a queue laid out
 * exactly as ROCr lays it out gets the report. Returns whether it did.
 */
static bool kfdsim_aql_report(struct kfd_queue *q, u32 code)
{
	struct kfdsim_vm *vm = &q->pdd->vm;
	struct kfdsim_fault fault;
	u64 base = kfdsim_amd_queue(q), sig;
	s64 value = code;

	if (!base)
		return false;
	if (kfdsim_vm_read(vm, base + KFDSIM_AMD_QUEUE_INACTIVE_SIGNAL, &sig,
			   sizeof(sig), &fault) || !sig)
		return false;
	if (kfdsim_vm_write(vm, sig + offsetof(struct kfdsim_signal, value),
			    &value, sizeof(value), &fault))
		return false;
	return !kfdsim_signal_fire(q, sig, &fault);
}

/*
 * Stop @q for good: a GPU page fault or a packet it cannot execute (@why
 * says why for an AQL packet). A transient -ENOMEM only makes the CP retry
 * the packet on a later round.
 */
static enum kfdsim_run kfdsim_queue_error(struct kfd_queue *q, int err,
					  const struct kfdsim_fault *fault,
					  const struct kfdsim_dispatch_error *why)
{
	u32 gpu_id = q->pdd->user_gpu_id;

	if (err == -ENOMEM) {
		/* Nothing of the packet ran: try it again later. */
		pr_warn_ratelimited("gpu %u queue %u: out of memory at rptr 0x%llx, retrying\n",
				    gpu_id, q->id, q->state.rptr);
		return KFDSIM_RUN_IDLE;
	}
	q->state.flags |= KFDSIM_QSTATE_ERROR;
	if (err == -EFAULT) {
		pr_info_ratelimited("gpu %u queue %u: GPU page fault at 0x%llx (%s%s), queue stopped\n",
				    gpu_id, q->id, fault->va,
				    fault->write ? "write" : "read",
				    fault->read_only ? " to read-only page" : "");
		kgd2kfd_memory_exception(q, fault);
	} else if (err == -ENOEXEC && why) {
		bool told = kfdsim_aql_report(q, why->code);

		pr_info_ratelimited("gpu %u queue %u: %s at rptr 0x%llx, queue stopped; error 0x%x %s\n",
				    gpu_id, q->id, why->what, q->state.rptr,
				    why->code, told ?
				    "reported to the queue's inactive signal" :
				    "not reported (no ROCr queue layout)");
	} else {
		pr_info_ratelimited("gpu %u queue %u: bad packet at rptr 0x%llx (%d), queue stopped\n",
				    gpu_id, q->id, q->state.rptr, err);
	}
	return KFDSIM_RUN_IDLE;
}

/*
 * A dispatch needs more scratch than the queue's amd_queue_t gives. As gfx9
 * CP firmware does, ask the runtime for it: store INSUFFICIENT_SCRATCH (1)
 * into the queue's inactive signal and fire its event (ROCr's
 * DynamicScratchHandler grows the queue's scratch, rewrites the scratch
 * fields of amd_queue_t and stores 0). The packet stays in place; every
 * poll tries it again, and asks again only once the signal is back to 0.
 * A queue without an inactive signal cannot ask: it stops.
 */
static enum kfdsim_run kfdsim_scratch_request(struct kfd_queue *q,
					      const struct kfdsim_dispatch_error *why)
{
	struct kfdsim_vm *vm = &q->pdd->vm;
	u64 base = kfdsim_amd_queue(q), sig = 0;
	struct kfdsim_fault fault;
	s64 value;

	if (base && kfdsim_vm_read(vm, base + KFDSIM_AMD_QUEUE_INACTIVE_SIGNAL,
				   &sig, sizeof(sig), &fault))
		sig = 0;
	if (!sig)
		return kfdsim_queue_error(q, -ENOEXEC, NULL, why);
	if (kfdsim_vm_read(vm, sig + offsetof(struct kfdsim_signal, value),
			   &value, sizeof(value), &fault))
		return kfdsim_queue_error(q, -EFAULT, &fault, NULL);
	if (value)
		return KFDSIM_RUN_IDLE;	/* the runtime is at it */
	value = KFDSIM_AQL_ERROR_INSUFFICIENT_SCRATCH;
	if (kfdsim_vm_write(vm, sig + offsetof(struct kfdsim_signal, value),
			    &value, sizeof(value), &fault))
		return kfdsim_queue_error(q, -EFAULT, &fault, NULL);
	pr_debug("gpu %u queue %u: dispatch at rptr 0x%llx waits for scratch\n",
		 q->pdd->user_gpu_id, q->id, q->state.rptr);
	if (kfdsim_signal_fire(q, sig, &fault))
		return kfdsim_queue_error(q, -EFAULT, &fault, NULL);
	return KFDSIM_RUN_IDLE;
}

/* Is a barrier packet's condition met? */
static int kfdsim_barrier_ready(struct kfd_queue *q,
				const struct kfdsim_aql_barrier *b, bool any,
				struct kfdsim_fault *fault)
{
	unsigned int i, used = 0;
	s64 value;
	int ret;

	for (i = 0; i < ARRAY_SIZE(b->dep_signal); i++) {
		if (!b->dep_signal[i])
			continue;
		used++;
		ret = kfdsim_vm_read(&q->pdd->vm, b->dep_signal[i] +
				     offsetof(struct kfdsim_signal, value),
				     &value, sizeof(value), fault);
		if (ret)
			return ret;
		if (any && !value)
			return 1;
		if (!any && value)
			return 0;
	}
	/* AND of nothing is true; OR of nothing is true as well (HSA). */
	return !any || !used;
}

/* A dispatch of GPU machine code (sim/gfx9); -ENOENT for a built-in. */
static int kfdsim_run_gfx9(struct kfd_queue *q, u64 slot,
			   const struct kfdsim_aql_dispatch *pkt, u64 deadline,
			   struct kfdsim_fault *fault,
			   struct kfdsim_dispatch_error *why)
{
	struct kfdsim_gfx9_queue gq = {
		.vm = &q->pdd->vm,
		.packet_va = slot,
		.queue_va = kfdsim_amd_queue(q),
		/* SET_SCRATCH_BACKING_VA takes the address in 64 KiB units. */
		.scratch_backing_va = q->pdd->scratch_backing_va << 16,
		.dispatch_id = q->state.rptr,
		.gpu_id = q->pdd->user_gpu_id,
		.queue_id = q->id,
		.cwsr = q->cwsr.cntl_stack ? &q->cwsr : NULL,
	};

	return kfdsim_gfx9_run(&q->gfx9, &gq, pkt, &q->state.progress,
			       deadline, fault, why);
}

/*
 * AMD's vendor-specific AQL packets (ROCr's hsa_ext_amd.h and
 * amd_aql_queue.cpp): byte 2 of the packet is the format, the completion
 * signal is at byte 56 as in every AQL packet.
 */
#define KFDSIM_AMD_AQL_FORMAT_PM4_IB		1
#define KFDSIM_AMD_AQL_FORMAT_BARRIER_VALUE	2
#define KFDSIM_AMD_AQL_SIGNAL			56
/* ROCr's PM4 IB is one page at most. */
#define KFDSIM_AMD_PM4_IB_MAX_DW		1024
#define KFDSIM_PM4_OP_INDIRECT_BUFFER		0x3f

/*
 * PM4_IB: ROCr runs a PM4 indirect buffer through its AQL queue this way
 * (AqlQueue::ExecutePM4), for the cache invalidation that follows loading
 * a code object. Simulated memory has no caches: an IB of NOP and
 * ACQUIRE_MEM packets completes at once; anything else is refused.
 */
static int kfdsim_aql_pm4_ib(struct kfd_queue *q, const u8 *raw,
			     struct kfdsim_fault *fault)
{
	u32 jump[4], ndw, pos, hdr, op, count;
	u64 ib;
	int ret;

	memcpy(jump, raw + 4, sizeof(jump));
	ib = (jump[1] & ~3u) | (u64)(jump[2] & 0xffff) << 32;
	ndw = jump[3] & 0xfffff;
	/* An INDIRECT_BUFFER packet with its valid bit (23) set. */
	if (jump[0] >> KFDSIM_PM4_TYPE_SHIFT != KFDSIM_PM4_TYPE3 ||
	    ((jump[0] >> KFDSIM_PM4_OP_SHIFT) & KFDSIM_PM4_OP_MASK) !=
	    KFDSIM_PM4_OP_INDIRECT_BUFFER || !(jump[3] & BIT(23)) ||
	    ndw > KFDSIM_AMD_PM4_IB_MAX_DW)
		return -ENOEXEC;
	for (pos = 0; pos < ndw; pos += count + 2) {
		ret = kfdsim_vm_read(&q->pdd->vm, ib + pos * 4, &hdr,
				     sizeof(hdr), fault);
		if (ret)
			return ret;
		op = (hdr >> KFDSIM_PM4_OP_SHIFT) & KFDSIM_PM4_OP_MASK;
		count = (hdr >> KFDSIM_PM4_COUNT_SHIFT) & KFDSIM_PM4_COUNT_MASK;
		if (hdr >> KFDSIM_PM4_TYPE_SHIFT != KFDSIM_PM4_TYPE3 ||
		    (op != KFDSIM_PM4_OP_NOP && op != KFDSIM_PM4_OP_ACQUIRE_MEM))
			return -ENOEXEC;
		/* A NOP of count 0x3fff is its header alone. */
		if (op == KFDSIM_PM4_OP_NOP && count == KFDSIM_PM4_COUNT_MASK)
			count = (u32)-1;
	}
	return 0;
}

/*
 * BARRIER_VALUE: complete once (signal value & mask) compares with value
 * as cond says (EQ, NE, LT, GTE); a NULL signal is satisfied. Returns 1
 * when satisfied, 0 while waiting.
 */
static int kfdsim_aql_barrier_value(struct kfd_queue *q, const u8 *raw,
				    struct kfdsim_fault *fault)
{
	s64 value, mask, cur;
	u64 sig;
	u32 cond;
	int ret;

	memcpy(&sig, raw + 8, sizeof(sig));
	memcpy(&value, raw + 16, sizeof(value));
	memcpy(&mask, raw + 24, sizeof(mask));
	memcpy(&cond, raw + 32, sizeof(cond));
	if (cond > 3)
		return -ENOEXEC;
	if (!sig)
		return 1;
	ret = kfdsim_vm_read(&q->pdd->vm,
			     sig + offsetof(struct kfdsim_signal, value), &cur,
			     sizeof(cur), fault);
	if (ret)
		return ret;
	cur &= mask;
	switch (cond) {
	case 0:
		return cur == value;
	case 1:
		return cur != value;
	case 2:
		return cur < value;
	default:
		return cur >= value;
	}
}

static enum kfdsim_run kfdsim_run_aql(struct kfd_queue *q, u64 deadline)
{
	struct kfdsim_vm *vm = &q->pdd->vm;
	u64 entries = q->ring_size / KFDSIM_AQL_PACKET_SIZE;
	const u16 invalid = KFDSIM_AQL_TYPE_INVALID;
	enum kfdsim_run run = KFDSIM_RUN_IDLE;
	struct kfdsim_dispatch_error why = {
		KFDSIM_AQL_ERROR_INVALID_CODE, "dispatch the CP cannot run",
	};
	struct kfdsim_fault fault;
	u64 slot;
	union {
		u16 header;
		struct kfdsim_aql_dispatch dispatch;
		struct kfdsim_aql_barrier barrier;
		u8 raw[KFDSIM_AQL_PACKET_SIZE];
	} pkt;
	u64 wptr, mem_wptr, sig;
	int ret;

	/* The doorbell and the in-memory write index: whichever is ahead. */
	wptr = kfdsim_queue_doorbell_value(q);
	ret = kfdsim_vm_read(vm, q->wptr_va, &mem_wptr, sizeof(mem_wptr),
			     &fault);
	if (ret)
		return kfdsim_queue_error(q, ret, &fault, NULL);
	wptr = max(wptr, mem_wptr);

	while (q->state.rptr < wptr) {
		if (run == KFDSIM_RUN_BUSY && ktime_get_ns() >= deadline)
			return run;
		slot = q->ring_va + (q->state.rptr % entries) *
		       KFDSIM_AQL_PACKET_SIZE;
		/*
		 * The producer stores the header last, with release order:
		 * read it first and the body only after it, never torn.
		 */
		ret = kfdsim_vm_read(vm, slot, &pkt.header, sizeof(pkt.header),
				     &fault);
		if (!ret && (pkt.header & KFDSIM_AQL_HEADER_TYPE_MASK) ==
			    KFDSIM_AQL_TYPE_INVALID)
			return run;
		/* Pairs with the producer's release store of the header. */
		smp_rmb();
		if (!ret)
			ret = kfdsim_vm_read(vm, slot, &pkt, sizeof(pkt), &fault);
		if (ret)
			return kfdsim_queue_error(q, ret, &fault, NULL);

		switch (pkt.header & KFDSIM_AQL_HEADER_TYPE_MASK) {
		case KFDSIM_AQL_TYPE_INVALID:
			/* Reserved, not yet published: wait for the header. */
			return run;
		case KFDSIM_AQL_TYPE_KERNEL_DISPATCH:
			ret = kfdsim_run_gfx9(q, slot, &pkt.dispatch, deadline,
					      &fault, &why);
			if (ret == -ENOENT)	/* a built-in kernel */
				ret = kfdsim_kernel_run(vm, &pkt.dispatch,
							&q->state.progress,
							deadline, &fault, &why);
			if (ret == -EAGAIN)
				return KFDSIM_RUN_BUSY;
			if (ret == -ENOSPC)
				return kfdsim_scratch_request(q, &why);
			sig = pkt.dispatch.completion_signal;
			break;
		case KFDSIM_AQL_TYPE_BARRIER_AND:
		case KFDSIM_AQL_TYPE_BARRIER_OR:
			ret = kfdsim_barrier_ready(q, &pkt.barrier,
						   (pkt.header & 0xff) ==
						   KFDSIM_AQL_TYPE_BARRIER_OR,
						   &fault);
			if (!ret)
				return run;	/* blocked on its signals */
			if (ret > 0)
				ret = 0;
			sig = pkt.barrier.completion_signal;
			break;
		case KFDSIM_AQL_TYPE_VENDOR_SPECIFIC:
			memcpy(&sig, pkt.raw + KFDSIM_AMD_AQL_SIGNAL,
			       sizeof(sig));
			ret = -ENOEXEC;
			if (pkt.raw[2] == KFDSIM_AMD_AQL_FORMAT_PM4_IB)
				ret = kfdsim_aql_pm4_ib(q, pkt.raw, &fault);
			if (pkt.raw[2] == KFDSIM_AMD_AQL_FORMAT_BARRIER_VALUE) {
				ret = kfdsim_aql_barrier_value(q, pkt.raw,
							       &fault);
				if (!ret)
					return run;	/* waiting */
				if (ret > 0)
					ret = 0;
			}
			why.code = KFDSIM_AQL_ERROR_VENDOR_PACKET;
			why.what = "vendor-specific packet";
			break;
		default:
			why.code = KFDSIM_AQL_ERROR_INVALID_FORMAT;
			why.what = "packet of an unsupported type";
			ret = -ENOEXEC;
			break;
		}
		if (ret == -ENOEXEC)
			return kfdsim_queue_error(q, ret, &fault, &why);
		if (!ret)
			ret = kfdsim_signal_complete(q, sig, &fault);
		/*
		 * Hand the slot back to the producer: a slot reserved on the
		 * next lap must read INVALID until its new packet is published.
		 */
		if (!ret)
			ret = kfdsim_vm_write(vm, slot, &invalid, sizeof(invalid),
					      &fault);
		if (ret)
			return kfdsim_queue_error(q, ret, &fault, NULL);

		/* Packets complete in order, which honours the barrier bit. */
		q->state.rptr++;
		q->state.progress = (struct kfdsim_dispatch_progress){};
		ret = kfdsim_vm_write(vm, q->rptr_va, &q->state.rptr,
				      sizeof(q->state.rptr), &fault);
		if (ret)
			return kfdsim_queue_error(q, ret, &fault, NULL);
		run = KFDSIM_RUN_BUSY;
	}
	return run;
}

static void kfdsim_sdma_trap(void *priv, u32 event_id)
{
	struct kfd_queue *q = priv;

	kgd2kfd_signal_event(q, event_id);
}

/* Read up to @ndw dwords of the ring at byte position @pos, wrapping. */
static int kfdsim_sdma_fetch(struct kfd_queue *q, u64 pos, u32 *dw,
			     u32 ndw, struct kfdsim_fault *fault)
{
	u32 off = pos & (q->ring_size - 1);
	u32 first = min_t(u32, ndw, (q->ring_size - off) / sizeof(u32));
	int ret;

	ret = kfdsim_vm_read(&q->pdd->vm, q->ring_va + off, dw,
			     first * sizeof(u32), fault);
	if (ret || first == ndw)
		return ret;
	return kfdsim_vm_read(&q->pdd->vm, q->ring_va, dw + first,
			      (ndw - first) * sizeof(u32), fault);
}

static enum kfdsim_run kfdsim_run_sdma(struct kfd_queue *q, u64 deadline)
{
	struct kfdsim_sdma_ctx ctx = {
		.vm = &q->pdd->vm,
		.trap = kfdsim_sdma_trap,
		.priv = q,
	};
	enum kfdsim_run run = KFDSIM_RUN_IDLE;
	u32 dw[KFDSIM_SDMA_MAX_DWORDS];
	struct kfdsim_fault fault;
	u64 wptr, avail;
	u32 ndw;
	int ret;

	wptr = kfdsim_queue_doorbell_value(q);
	if (!IS_ALIGNED(wptr, sizeof(u32)))
		return kfdsim_queue_error(q, -ENOEXEC, &fault, NULL);

	while (q->state.rptr < wptr) {
		if (run == KFDSIM_RUN_BUSY && ktime_get_ns() >= deadline)
			return run;
		avail = (wptr - q->state.rptr) / sizeof(u32);
		ndw = min_t(u64, avail, KFDSIM_SDMA_MAX_DWORDS);
		ret = kfdsim_sdma_fetch(q, q->state.rptr, dw, ndw, &fault);
		if (!ret)
			ret = kfdsim_sdma_exec(&ctx, dw, ndw, &fault);
		if (ret == -EAGAIN || (ret > 0 && ret > avail))
			return run;	/* packet not fully written yet */
		if (ret == -EBUSY)
			return run;	/* a poll that does not hold yet */
		if (ret < 0)
			return kfdsim_queue_error(q, ret, &fault, NULL);

		q->state.rptr += ret * sizeof(u32);
		ret = kfdsim_vm_write(ctx.vm, q->rptr_va, &q->state.rptr,
				      sizeof(q->state.rptr), &fault);
		if (ret)
			return kfdsim_queue_error(q, ret, &fault, NULL);
		run = KFDSIM_RUN_BUSY;
	}
	return run;
}

static enum kfdsim_run kfdsim_run_queue(struct kfd_queue *q)
{
	u64 deadline = ktime_get_ns() + KFDSIM_CP_SLICE_NS;

	if (q->type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL)
		return kfdsim_run_aql(q, deadline);
	return kfdsim_run_sdma(q, deadline);
}

/**
 * kfdsim_cp_turn_lock - take a process's CP turn lock from outside its worker
 * @proc: the process on one GPU
 *
 * The worker drops the lock between two slices and lets those who wait in
 * here at that moment have it before it takes the lock again: a plain
 * mutex_lock() could lose the race to the worker for many slices in a row.
 */
void kfdsim_cp_turn_lock(struct kfdsim_cp_proc *proc)
{
	atomic_long_inc(&proc->lock_asked);
	mutex_lock(&proc->turn);
	atomic_long_inc(&proc->lock_got);
	wake_up_var(&proc->lock_got);
}

/*
 * Between two turns: stand back (briefly) until as many
 * kfdsim_cp_turn_lock() callers got the lock as were waiting for it now.
 * Callers that come later do not lengthen the wait, so the worker yields
 * at most once per turn and threads that keep taking the lock
 * (UPDATE_QUEUE in a loop) cannot hold up their process's queues for ever.
 */
static void kfdsim_cp_yield(struct kfdsim_cp_proc *proc)
{
	long target = atomic_long_read(&proc->lock_asked);

	if (target - atomic_long_read(&proc->lock_got) > 0)
		wait_var_event_timeout(&proc->lock_got,
				       atomic_long_read(&proc->lock_got) -
				       target >= 0,
				       KFDSIM_CP_YIELD_JIFFIES);
	cond_resched();
}

/*
 * Run one slice of @q with the turn lock held; returns whether @q may run.
 * *@busy is set when the slice made progress.
 */
static bool kfdsim_cp_slice(struct kfdsim_gpu *gpu, struct kfd_queue *q,
			    bool *busy)
{
	u64 start;

	if (!kfdsim_queue_runnable(q))
		return false;
	start = ktime_get_ns();
	if (kfdsim_run_queue(q) == KFDSIM_RUN_BUSY)
		*busy = true;
	if (ktime_get_ns() - start > KFDSIM_CP_SLICE_NS + KFDSIM_CP_OVERRUN_NS)
		pr_warn_ratelimited("gpu %u: a slice took %llu ms, a workgroup or packet is slow to preempt\n",
				    gpu->gpu_id,
				    (ktime_get_ns() - start) / NSEC_PER_MSEC);
	return true;
}

/*
 * One turn of @proc's worker, with the turn lock held: the process's
 * queues in round-robin order until one makes progress in its slice (a
 * queue with nothing to do passes the turn on to the next). Each visited
 * queue moves to the tail, so the next turn starts with the queue after
 * the one that ran. Returns whether any of its queues may run; *@busy is
 * set if one made progress.
 */
static bool kfdsim_cp_turn(struct kfdsim_cp_proc *proc, bool *busy)
{
	struct kfd_queue *q;
	bool runnable = false, progress = false;
	u64 round = ++proc->round;

	while (!progress) {
		q = list_first_entry_or_null(&proc->queues, struct kfd_queue,
					     cp_node);
		if (!q || q->cp_round == round)
			break;
		q->cp_round = round;
		list_move_tail(&q->cp_node, &proc->queues);
		if (kfdsim_cp_slice(proc->gpu, q, &progress))
			runnable = true;
	}
	if (progress)
		*busy = true;
	return runnable;
}

/*
 * The worker of one process on one GPU. It runs in the cgroups of the
 * process (kfdsim_cp_proc_create()), so the scheduler charges its CPU time
 * there and cpu.max throttles it: fairness between processes is the host
 * scheduler's, one runnable worker per process and GPU whatever its number
 * of queues. The turn lock is held for one turn (at most one slice that
 * makes progress, plus looks at idle queues) and dropped between turns,
 * so a queue operation, eviction or exit of the process waits for one
 * slice of its own queues (longer only while cpu.max throttles the worker
 * mid-slice, which delays nobody else).
 */
static int kfdsim_cp_worker(void *data)
{
	struct kfdsim_cp_proc *proc = data;
	unsigned int poll_us = KFDSIM_CP_POLL_MIN_US, idle_rounds = 0;
	bool busy, runnable;

	while (!kthread_should_stop()) {
		busy = false;
		atomic_set(&proc->kick, 0);
		mutex_lock(&proc->turn);
		runnable = kfdsim_cp_turn(proc, &busy);
		mutex_unlock(&proc->turn);
		kfdsim_cp_yield(proc);
		if (!runnable) {
			/* Nothing may run: sleep until a queue changes. */
			wait_event_idle(proc->wq, kthread_should_stop() ||
					atomic_read(&proc->kick));
			poll_us = KFDSIM_CP_POLL_MIN_US;
			idle_rounds = 0;
			continue;
		}
		if (busy || atomic_read(&proc->kick)) {
			poll_us = KFDSIM_CP_POLL_MIN_US;
			idle_rounds = 0;
			continue;
		}
		usleep_range_state(poll_us, 2 * poll_us, TASK_IDLE);
		if (poll_us < KFDSIM_CP_POLL_MAX_US)
			poll_us = min(2 * poll_us, KFDSIM_CP_POLL_MAX_US);
		else if (++idle_rounds > KFDSIM_CP_IDLE_ROUNDS)
			poll_us = KFDSIM_CP_POLL_IDLE_US;
	}
	return 0;
}

static void kfdsim_cp_kick(struct kfdsim_cp_proc *proc)
{
	atomic_set(&proc->kick, 1);
	wake_up(&proc->wq);
}

int kfdsim_cp_init(struct kfdsim_gpu *gpu)
{
	struct kfdsim_cp *cp;

	cp = kzalloc(sizeof(*cp), GFP_KERNEL);
	if (!cp)
		return -ENOMEM;
	mutex_init(&cp->lock);
	INIT_LIST_HEAD(&cp->procs);
	gpu->cp = cp;
	return 0;
}

/*
 * Every process is gone by now, so the process list is empty and so no
 * worker is left: the last queue of a process stops its worker.
 */
void kfdsim_cp_fini(struct kfdsim_gpu *gpu)
{
	WARN_ON(!list_empty(&gpu->cp->procs));
	mutex_destroy(&gpu->cp->lock);
	kfree(gpu->cp);
	gpu->cp = NULL;
}

/*
 * Opt-in, because criu cannot dump a container with such a worker in it:
 * runc freezes the container's cgroup and criu then finds a task there it
 * cannot seize ("Unseizable non-zombie"). amdkfd has no such thread: a
 * real GPU's work is charged to nobody's CPU time.
 */
static bool cp_cgroup;
module_param(cp_cgroup, bool, 0644);
MODULE_PARM_DESC(cp_cgroup,
		 "Run each process's CP worker in the process's cgroups, so that its CPU time counts against the process's cpu limits; criu can then not dump a container (default: N)");

/*
 * Move @worker into the cgroups of the calling task. The move is done
 * with the kernel's credentials: cpuset's can_attach() asks whether the
 * caller may change the scheduling of the task it moves, and a process in
 * a container (no CAP_SYS_NICE, fewer capabilities than a kthread) may
 * not, so with the caller's own credentials every queue of a podman
 * container failed (EPERM). Putting our own thread under the caller's
 * limits grants nothing.
 */
static int kfdsim_cp_attach(struct task_struct *worker)
{
	const struct cred *old;
	struct cred *kcred;
	int ret;

	kcred = prepare_kernel_cred(&init_task);
	if (!kcred)
		return -ENOMEM;
	old = override_creds(kcred);
	ret = cgroup_attach_task_all(current, worker);
	revert_creds(old);
	put_cred(kcred);
	return ret;
}

/*
 * The first queue of @pdd's process on @gpu: start its worker, with
 * cp_cgroup in the cgroups of the calling task (CREATE_QUEUE, or a CRIU
 * RESTORE, both run by the process itself), as vhost attached its worker
 * to its owner's cgroups. The worker is attached before it first runs, so
 * none of its time is charged elsewhere. Called with the process lock
 * held.
 */
static struct kfdsim_cp_proc *kfdsim_cp_proc_create(struct kfdsim_gpu *gpu,
						    struct kfd_process_device *pdd)
{
	struct kfdsim_cp_proc *proc;
	struct task_struct *worker;
	int ret;

	proc = kzalloc(sizeof(*proc), GFP_KERNEL_ACCOUNT);
	if (!proc)
		return ERR_PTR(-ENOMEM);	/* the allocator said why */
	proc->gpu = gpu;
	proc->pdd = pdd;
	mutex_init(&proc->turn);
	INIT_LIST_HEAD(&proc->queues);
	atomic_long_set(&proc->lock_asked, 0);
	atomic_long_set(&proc->lock_got, 0);
	init_waitqueue_head(&proc->wq);
	atomic_set(&proc->kick, 0);

	worker = kthread_create(kfdsim_cp_worker, proc, "kfdsim_w%u/%d",
				gpu->index, task_tgid_nr(current));
	if (IS_ERR(worker)) {
		ret = PTR_ERR(worker);
		pr_warn("gpu %u: cannot create the CP worker of pid %d (%d)\n",
			gpu->gpu_id, task_tgid_nr(current), ret);
		goto err_free;
	}
	ret = READ_ONCE(cp_cgroup) ? kfdsim_cp_attach(worker) : 0;
	if (ret) {
		pr_warn("gpu %u: cannot attach the CP worker of pid %d to its cgroups (%d)\n",
			gpu->gpu_id, task_tgid_nr(current), ret);
		goto err_stop;
	}
	proc->worker = worker;

	mutex_lock(&gpu->cp->lock);
	list_add_tail(&proc->node, &gpu->cp->procs);
	mutex_unlock(&gpu->cp->lock);
	wake_up_process(worker);
	return proc;

err_stop:
	/* Never woken: it exits without running kfdsim_cp_worker(). */
	kthread_stop(worker);
err_free:
	mutex_destroy(&proc->turn);
	kfree(proc);
	return ERR_PTR(ret);
}

/*
 * The last queue of the process on the GPU is gone: stop the worker (it
 * holds no lock the caller may hold, and exits within one slice of its
 * own queues) and free the state. Called with the process lock held.
 */
static void kfdsim_cp_proc_destroy(struct kfdsim_cp_proc *proc)
{
	struct kfdsim_cp *cp = proc->gpu->cp;

	mutex_lock(&cp->lock);
	list_del(&proc->node);
	mutex_unlock(&cp->lock);
	kthread_stop(proc->worker);
	WARN_ON(!list_empty(&proc->queues));
	proc->pdd->cp = NULL;
	mutex_destroy(&proc->turn);
	kfree(proc);
}

/*
 * The process's queues on the GPU are on its own list, served by its
 * worker, which starts with the first queue and stops with the last.
 * Returns 0, or the errno of starting the worker (logged).
 */
int kfdsim_cp_add_queue(struct kfd_queue *q)
{
	struct kfd_process_device *pdd = q->pdd;
	struct kfdsim_gpu *gpu = pdd->gpu->adev;
	struct kfdsim_cp_proc *proc = pdd->cp;

	if (!proc) {
		proc = kfdsim_cp_proc_create(gpu, pdd);
		if (IS_ERR(proc))
			return PTR_ERR(proc);
		pdd->cp = proc;
	}
	kfdsim_cp_turn_lock(proc);
	proc->nr_queues++;
	q->cp_round = 0;
	list_add_tail(&q->cp_node, &proc->queues);
	mutex_unlock(&proc->turn);
	kfdsim_cp_kick(proc);
	return 0;
}

/* Returns once the CP no longer runs @q; it may then be freed. */
void kfdsim_cp_remove_queue(struct kfd_queue *q)
{
	struct kfdsim_cp_proc *proc = q->pdd->cp;
	bool last;

	kfdsim_cp_turn_lock(proc);
	list_del(&q->cp_node);
	last = !--proc->nr_queues;
	kfdsim_gfx9_free(&q->gfx9);
	mutex_unlock(&proc->turn);
	if (last)
		kfdsim_cp_proc_destroy(proc);
}

/*
 * The device operations of the queues (struct kfd_device_ops), the
 * simulator's counterpart of amdkfd's device queue manager. See
 * Documentation/command-processor.rst.
 */

static int kfdsim_create_queue(struct kfdsim_gpu *gpu, struct kfd_queue *q,
			       bool evicted)
{
	q->evicted = evicted;
	return kfdsim_cp_add_queue(q);
}

static void kfdsim_destroy_queue(struct kfdsim_gpu *gpu, struct kfd_queue *q)
{
	kfdsim_cp_remove_queue(q);
}

/*
 * The queue leaves the GPU: as amdkfd's unmap of a queue with a context
 * save area makes its waves save themselves (CWSR), the live waves of a
 * machine-code dispatch go to the save area. Called with the turn lock of
 * the queue's process held.
 */
static void kfdsim_cp_cwsr_preempt(struct kfd_queue *q)
{
	if (q->gfx9 && q->cwsr.cntl_stack)
		kfdsim_gfx9_preempt(&q->gfx9, &q->pdd->vm, &q->cwsr);
}

static void kfdsim_update_queue(struct kfdsim_gpu *gpu, struct kfd_queue *q,
				const struct kfd_ioctl_update_queue_args *args)
{
	struct kfdsim_cp_proc *proc = q->pdd->cp;

	kfdsim_cp_turn_lock(proc);
	q->ring_va = args->ring_base_address;
	q->ring_size = args->ring_size;
	q->percentage = args->queue_percentage;
	q->priority = args->queue_priority;
	if (!q->percentage)
		kfdsim_cp_cwsr_preempt(q);
	mutex_unlock(&proc->turn);
	kfdsim_cp_kick(proc);
}

/* Mark the queues of @pdd's process on @gpu evicted or runnable. */
static void kfdsim_set_process_queues_evicted(struct kfdsim_gpu *gpu,
					      struct kfd_process_device *pdd,
					      bool evicted)
{
	struct kfdsim_cp_proc *proc = pdd->cp;
	struct kfd_queue *q;

	lockdep_assert_held(&pdd->p->lock);
	if (!proc)
		return;		/* no queue on @gpu */
	kfdsim_cp_turn_lock(proc);
	list_for_each_entry(q, &proc->queues, cp_node) {
		q->evicted = evicted;
		if (evicted)
			kfdsim_cp_cwsr_preempt(q);
	}
	mutex_unlock(&proc->turn);
	if (!evicted)
		kfdsim_cp_kick(proc);
}

/*
 * The render-node submissions through the process's VM on the device stop
 * and go on with its queues (kfdsim_vm_evict()).
 */
static void kfdsim_evict_render_work(struct kfd_process_device *pdd)
{
	kfdsim_vm_evict(&pdd->vm);
}

static void kfdsim_restore_render_work(struct kfd_process_device *pdd)
{
	kfdsim_vm_unevict(&pdd->vm);
}

/*
 * Once the process's turn lock is taken no packet of its queues on @gpu
 * is executing, so the queues are stopped with their state consistent:
 * the packet at rptr either not started, or stopped at a workgroup
 * boundary recorded in its progress. This waits for at most one CP slice
 * of the process's own queues (longer while cpu.max throttles its worker).
 */
static int kfdsim_evict_process_queues(struct kfdsim_gpu *gpu,
				       struct kfd_process_device *pdd)
{
	kfdsim_set_process_queues_evicted(gpu, pdd, true);
	kfdsim_evict_render_work(pdd);
	return 0;
}

static int kfdsim_restore_process_queues(struct kfdsim_gpu *gpu,
					 struct kfd_process_device *pdd)
{
	kfdsim_restore_render_work(pdd);
	kfdsim_set_process_queues_evicted(gpu, pdd, false);
	return 0;
}

static int kfdsim_checkpoint_mqd(struct kfdsim_gpu *gpu,
				 const struct kfd_queue *q,
				 struct kfdsim_queue_state *mqd)
{
	WARN_ON(!q->evicted);
	kfdsim_cp_turn_lock(q->pdd->cp);
	*mqd = q->state;
	mutex_unlock(&q->pdd->cp->turn);
	return 0;
}

/*
 * A control stack from a checkpoint (upstream's restore_mqd() copies it
 * back): offsets within the queue's own sizes, and a stack the gfx9
 * engine would have written for the workgroup the progress names.
 */
static int kfdsim_restore_cwsr(const struct kfd_queue *q,
			       const struct kfdsim_queue_state *mqd,
			       const struct kfdsim_cwsr *in)
{
	const struct kfdsim_cwsr *own = &q->cwsr;
	u32 used;

	if (!in || (!in->cntl_stack_offset && !in->wg_state_offset &&
		    !own->cntl_stack))
		return 0;
	if (!own->cntl_stack || in->cntl_stack_offset % 4 ||
	    in->cntl_stack_offset > own->cntl_stack_size ||
	    in->wg_state_offset < own->cntl_stack_size ||
	    in->wg_state_offset > own->save_size)
		return -EINVAL;
	used = own->cntl_stack_size - in->cntl_stack_offset;
	if (!used)
		return in->wg_state_offset == own->cntl_stack_size ? 0 :
		       -EINVAL;
	/* Room for the save area header below the stack, as written. */
	if (in->cntl_stack_offset < 40 || mqd->progress.iteration)
		return -EINVAL;
	return kfdsim_gfx9_cwsr_check(in->cntl_stack, used / 4,
				      in->wg_state_offset -
				      own->cntl_stack_size,
				      mqd->progress.next_wg);
}

/* The state is untrusted: unknown flags or nonzero padding are -EINVAL. */
static int kfdsim_restore_mqd(struct kfdsim_gpu *gpu, struct kfd_queue *q,
			      const struct kfdsim_queue_state *mqd,
			      const struct kfdsim_cwsr *cwsr)
{
	u32 used;

	if (mqd->pad || (mqd->flags & ~KFDSIM_QSTATE_ERROR))
		return -EINVAL;
	if (q->type != KFD_IOC_QUEUE_TYPE_COMPUTE_AQL &&
	    (mqd->progress.iteration || mqd->progress.next_wg ||
	     !IS_ALIGNED(mqd->rptr, sizeof(u32))))
		return -EINVAL;
	if (kfdsim_restore_cwsr(q, mqd, cwsr))
		return -EINVAL;
	WARN_ON(!q->evicted);
	kfdsim_cp_turn_lock(q->pdd->cp);
	q->state = *mqd;
	if (cwsr && q->cwsr.cntl_stack) {
		used = q->cwsr.cntl_stack_size - cwsr->cntl_stack_offset;
		memcpy((u8 *)q->cwsr.cntl_stack + cwsr->cntl_stack_offset,
		       cwsr->cntl_stack, used);
		q->cwsr.cntl_stack_offset = cwsr->cntl_stack_offset;
		q->cwsr.wg_state_offset = cwsr->wg_state_offset;
	}
	mutex_unlock(&q->pdd->cp->turn);
	return 0;
}

static int kfdsim_get_wave_state(struct kfdsim_gpu *gpu, struct kfd_queue *q,
				 struct kfdsim_cwsr *cwsr, void *stack, u32 max)
{
	u32 used;
	int ret = 0;

	kfdsim_cp_turn_lock(q->pdd->cp);
	*cwsr = q->cwsr;
	cwsr->cntl_stack = NULL;
	used = q->cwsr.cntl_stack_size - q->cwsr.cntl_stack_offset;
	if (used > max)
		ret = -ENOSPC;
	else if (used)
		memcpy(stack, (u8 *)q->cwsr.cntl_stack +
		       q->cwsr.cntl_stack_offset, used);
	mutex_unlock(&q->pdd->cp->turn);
	return ret;
}

const struct kfd_device_ops kfdsim_device_ops = {
	.create_queue = kfdsim_create_queue,
	.destroy_queue = kfdsim_destroy_queue,
	.update_queue = kfdsim_update_queue,
	.evict_process_queues = kfdsim_evict_process_queues,
	.restore_process_queues = kfdsim_restore_process_queues,
	.checkpoint_mqd = kfdsim_checkpoint_mqd,
	.restore_mqd = kfdsim_restore_mqd,
	.get_wave_state = kfdsim_get_wave_state,
	.export_dmabuf = kfdsim_gem_export_dmabuf,
};
