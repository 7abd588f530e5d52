// SPDX-License-Identifier: GPL-2.0
/*
 * The command processor of a simulated GPU.
 *
 * One kthread per GPU serves the GPU's queues, round-robin per process and
 * then per queue: each round gives every process with queues on the GPU
 * one turn, in which its queues are tried in turn until one makes progress
 * in its time slice. For a queue it compares the read pointer with the
 * write pointer the process published (doorbell, and for AQL also the
 * write index in memory), fetches packets from the ring through the
 * process's GPU page table and executes them, for at most one time slice.
 *
 * Doorbell writes are plain memory writes the CPU cannot trap, so the thread
 * polls, backing off from KFDSIM_CP_POLL_MIN_US to KFDSIM_CP_POLL_MAX_US while
 * nothing happens, and sleeps without polling while no queue may run at all.
 *
 * The thread holds cp->lock for one process's turn at a time (at most one
 * slice that makes progress) and drops it between turns, so anyone who
 * takes the lock knows no packet is mid-execution, and waits for at most
 * one slice whoever owns it: the kernels and the SDMA engine stop at a
 * workgroup or packet boundary once the slice's deadline passed, a
 * workgroup has at most
 * KFDSIM_MAX_WG_SIZE work-items and an SDMA packet moves at most 4 MiB, and
 * the dispatch progress is saved in the queue state, as for preemption. So
 * one process's queues cannot hold up another's queue management, eviction
 * or exit, however much work they have.
 *
 * A transient -ENOMEM leaves the queue as it was (nothing of the packet has
 * run yet) and the packet is retried on a later round, after the idle back
 * off; only a GPU page fault or a bad packet stops a queue for good.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

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
/* The longest the thread stands back for kfdsim_cp_lock() callers. */
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
 * kfdsim_cp_lock - take the CP lock from outside the CP thread
 * @cp: the command processor
 *
 * The thread drops the lock between two turns and lets those who wait in
 * here at that moment have it before it takes the lock again: a plain
 * mutex_lock() could lose the race to the thread for many turns in a row.
 */
void kfdsim_cp_lock(struct kfdsim_cp *cp)
{
	atomic_long_inc(&cp->lock_asked);
	mutex_lock(&cp->lock);
	atomic_long_inc(&cp->lock_got);
	wake_up_var(&cp->lock_got);
}

/*
 * Between two turns: stand back (briefly) until as many kfdsim_cp_lock()
 * callers got the lock as were waiting for it now. Callers that come later
 * do not lengthen the wait, so the thread yields at most once per turn and
 * a process that keeps taking the lock (UPDATE_QUEUE in a loop) cannot
 * hold up the CP for everyone.
 */
static void kfdsim_cp_yield(struct kfdsim_cp *cp)
{
	long target = atomic_long_read(&cp->lock_asked);

	if (target - atomic_long_read(&cp->lock_got) > 0)
		wait_var_event_timeout(&cp->lock_got,
				       atomic_long_read(&cp->lock_got) -
				       target >= 0,
				       KFDSIM_CP_YIELD_JIFFIES);
	cond_resched();
}

/*
 * Run one slice of @q with the CP lock held; returns whether @q may run.
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
 * The turn of @pdd's process in round @round: its queues in round-robin
 * order until one makes progress in its slice (a queue with nothing to do
 * passes the turn on to the next). Each visited queue moves to the tail,
 * so the next turn starts with the queue after the one that ran. Returns
 * whether any of its queues may run; *@busy is set if one made progress.
 */
static bool kfdsim_cp_turn(struct kfdsim_gpu *gpu,
			   struct kfd_process_device *pdd, u64 round,
			   bool *busy)
{
	struct kfd_queue *q;
	bool runnable = false, progress = false;

	while (!progress) {
		q = list_first_entry(&pdd->cp_queues, struct kfd_queue,
				     cp_node);
		if (q->cp_round == round)
			break;
		q->cp_round = round;
		list_move_tail(&q->cp_node, &pdd->cp_queues);
		if (kfdsim_cp_slice(gpu, q, &progress))
			runnable = true;
	}
	if (progress)
		*busy = true;
	return runnable;
}

/*
 * One round: each process with queues on the GPU gets one turn, in
 * round-robin order, so a process's share of the CP does not grow with its
 * number of queues. Returns whether any queue may run. A process that
 * had its turn moves to the tail, so the round ends when the head has had
 * its turn; a process that adds its first queue meanwhile gets its turn in
 * this round or the next. The lock is held for one turn (at most one slice
 * that makes progress, plus looks at idle queues) and dropped between
 * turns, so whoever waits for it waits one slice.
 */
static bool kfdsim_cp_round(struct kfdsim_gpu *gpu, bool *busy)
{
	struct kfdsim_cp *cp = gpu->cp;
	struct kfd_process_device *pdd;
	bool runnable = false;
	u64 round;

	mutex_lock(&cp->lock);
	round = ++cp->round;
	for (;;) {
		pdd = list_first_entry_or_null(&cp->procs,
					       struct kfd_process_device,
					       cp_node);
		if (!pdd || pdd->cp_round == round)
			break;
		pdd->cp_round = round;
		list_move_tail(&pdd->cp_node, &cp->procs);
		if (kfdsim_cp_turn(gpu, pdd, round, busy))
			runnable = true;
		/*
		 * Let whoever waits for the lock in between two turns; @pdd
		 * may be gone once the lock is dropped.
		 */
		mutex_unlock(&cp->lock);
		kfdsim_cp_yield(cp);
		mutex_lock(&cp->lock);
	}
	mutex_unlock(&cp->lock);
	return runnable;
}

static int kfdsim_cp_thread(void *data)
{
	struct kfdsim_gpu *gpu = data;
	struct kfdsim_cp *cp = gpu->cp;
	unsigned int poll_us = KFDSIM_CP_POLL_MIN_US, idle_rounds = 0;
	bool busy;

	while (!kthread_should_stop()) {
		busy = false;
		atomic_set(&cp->kick, 0);
		if (!kfdsim_cp_round(gpu, &busy)) {
			/* Nothing may run: sleep until a queue changes. */
			wait_event_idle(cp->wq, kthread_should_stop() ||
					atomic_read(&cp->kick));
			poll_us = KFDSIM_CP_POLL_MIN_US;
			idle_rounds = 0;
			continue;
		}
		if (busy || atomic_read(&cp->kick)) {
			poll_us = KFDSIM_CP_POLL_MIN_US;
			idle_rounds = 0;
			cond_resched();
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

void kfdsim_cp_kick(struct kfdsim_gpu *gpu)
{
	atomic_set(&gpu->cp->kick, 1);
	wake_up(&gpu->cp->wq);
}

int kfdsim_cp_init(struct kfdsim_gpu *gpu)
{
	struct kfdsim_cp *cp;

	cp = kzalloc(sizeof(*cp), GFP_KERNEL);
	if (!cp)
		return -ENOMEM;
	gpu->cp = cp;
	mutex_init(&cp->lock);
	INIT_LIST_HEAD(&cp->procs);
	cp->round = 0;
	atomic_long_set(&cp->lock_asked, 0);
	atomic_long_set(&cp->lock_got, 0);
	init_waitqueue_head(&cp->wq);
	atomic_set(&cp->kick, 0);
	cp->thread = kthread_run(kfdsim_cp_thread, gpu, "kfdsim_cp%u",
				 gpu->index);
	if (IS_ERR(cp->thread)) {
		int ret = PTR_ERR(cp->thread);

		mutex_destroy(&cp->lock);
		kfree(cp);
		gpu->cp = NULL;
		return ret;
	}
	return 0;
}

/* Every process is gone by now, so the process list is empty. */
void kfdsim_cp_fini(struct kfdsim_gpu *gpu)
{
	kthread_stop(gpu->cp->thread);
	WARN_ON(!list_empty(&gpu->cp->procs));
	mutex_destroy(&gpu->cp->lock);
	kfree(gpu->cp);
	gpu->cp = NULL;
}

/*
 * The CP keeps a list of the processes with queues on the GPU and, for each,
 * a list of its queues: a process joins with its first queue (at the tail,
 * so it gets its turn in this round or the next) and leaves with its last.
 */
void kfdsim_cp_add_queue(struct kfd_queue *q)
{
	struct kfd_process_device *pdd = q->pdd;
	struct kfdsim_gpu *gpu = pdd->gpu->adev;

	kfdsim_cp_lock(gpu->cp);
	if (!pdd->cp_nr_queues++) {
		INIT_LIST_HEAD(&pdd->cp_queues);
		pdd->cp_round = 0;
		list_add_tail(&pdd->cp_node, &gpu->cp->procs);
	}
	q->cp_round = 0;
	list_add_tail(&q->cp_node, &pdd->cp_queues);
	mutex_unlock(&gpu->cp->lock);
	kfdsim_cp_kick(gpu);
}

/* Returns once the CP no longer runs @q; it may then be freed. */
void kfdsim_cp_remove_queue(struct kfd_queue *q)
{
	struct kfdsim_cp *cp = q->pdd->gpu->adev->cp;

	kfdsim_cp_lock(cp);
	list_del(&q->cp_node);
	if (!--q->pdd->cp_nr_queues)
		list_del(&q->pdd->cp_node);
	kfdsim_gfx9_free(&q->gfx9);
	mutex_unlock(&cp->lock);
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
	kfdsim_cp_add_queue(q);
	return 0;
}

static void kfdsim_destroy_queue(struct kfdsim_gpu *gpu, struct kfd_queue *q)
{
	kfdsim_cp_remove_queue(q);
}

/*
 * The queue leaves the GPU: as amdkfd's unmap of a queue with a context
 * save area makes its waves save themselves (CWSR), the live waves of a
 * machine-code dispatch go to the save area. Called with the CP lock held.
 */
static void kfdsim_cp_cwsr_preempt(struct kfd_queue *q)
{
	if (q->gfx9 && q->cwsr.cntl_stack)
		kfdsim_gfx9_preempt(&q->gfx9, &q->pdd->vm, &q->cwsr);
}

static void kfdsim_update_queue(struct kfdsim_gpu *gpu, struct kfd_queue *q,
				const struct kfd_ioctl_update_queue_args *args)
{
	kfdsim_cp_lock(gpu->cp);
	q->ring_va = args->ring_base_address;
	q->ring_size = args->ring_size;
	q->percentage = args->queue_percentage;
	q->priority = args->queue_priority;
	if (!q->percentage)
		kfdsim_cp_cwsr_preempt(q);
	mutex_unlock(&gpu->cp->lock);
	kfdsim_cp_kick(gpu);
}

/* Mark the queues of @pdd's process on @gpu evicted or runnable. */
static void kfdsim_set_process_queues_evicted(struct kfdsim_gpu *gpu,
					      struct kfd_process_device *pdd,
					      bool evicted)
{
	struct kfd_queue *q;
	int id;

	lockdep_assert_held(&pdd->p->lock);
	kfdsim_cp_lock(gpu->cp);
	idr_for_each_entry(&pdd->p->queues, q, id)
		if (q->pdd == pdd) {
			q->evicted = evicted;
			if (evicted)
				kfdsim_cp_cwsr_preempt(q);
		}
	mutex_unlock(&gpu->cp->lock);
	if (!evicted)
		kfdsim_cp_kick(gpu);
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
 * Once the CP lock is taken no packet of any queue on @gpu is executing,
 * so the queues are stopped with their state consistent: the packet at
 * rptr either not started, or stopped at a workgroup boundary recorded in
 * its progress. This waits for at most one CP slice (of any process's
 * queue).
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
	kfdsim_cp_lock(gpu->cp);
	*mqd = q->state;
	mutex_unlock(&gpu->cp->lock);
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
	kfdsim_cp_lock(gpu->cp);
	q->state = *mqd;
	if (cwsr && q->cwsr.cntl_stack) {
		used = q->cwsr.cntl_stack_size - cwsr->cntl_stack_offset;
		memcpy((u8 *)q->cwsr.cntl_stack + cwsr->cntl_stack_offset,
		       cwsr->cntl_stack, used);
		q->cwsr.cntl_stack_offset = cwsr->cntl_stack_offset;
		q->cwsr.wg_state_offset = cwsr->wg_state_offset;
	}
	mutex_unlock(&gpu->cp->lock);
	return 0;
}

static int kfdsim_get_wave_state(struct kfdsim_gpu *gpu, struct kfd_queue *q,
				 struct kfdsim_cwsr *cwsr, void *stack, u32 max)
{
	u32 used;
	int ret = 0;

	kfdsim_cp_lock(gpu->cp);
	*cwsr = q->cwsr;
	cwsr->cntl_stack = NULL;
	used = q->cwsr.cntl_stack_size - q->cwsr.cntl_stack_offset;
	if (used > max)
		ret = -ENOSPC;
	else if (used)
		memcpy(stack, (u8 *)q->cwsr.cntl_stack +
		       q->cwsr.cntl_stack_offset, used);
	mutex_unlock(&gpu->cp->lock);
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
