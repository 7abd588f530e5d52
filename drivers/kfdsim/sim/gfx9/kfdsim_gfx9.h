/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The gfx9 (gfx906) machine-code engine of the simulated GPU: the one
 * interface the rest of the driver sees. Documentation/gfx9-engine.rst.
 */
#ifndef KFDSIM_GFX9_H
#define KFDSIM_GFX9_H

#include <linux/atomic.h>
#include <linux/types.h>

struct kfdsim_vm;
struct kfdsim_fault;
struct kfdsim_dispatch_error;
struct kfdsim_dispatch_progress;
struct kfdsim_aql_dispatch;
struct kfdsim_gfx9_dispatch;
struct kfdsim_cwsr;

/**
 * struct kfdsim_gfx9_regs - a dispatch programmed through registers (PM4)
 * @pgm: GPU VA of the first instruction (COMPUTE_PGM_LO/HI << 8)
 * @rsrc1: COMPUTE_PGM_RSRC1
 * @rsrc2: COMPUTE_PGM_RSRC2 (USER_SGPR count, TGID_*_EN, TIDIG_COMP_CNT,
 *         LDS_SIZE in 512-byte granules)
 * @user_data: COMPUTE_USER_DATA_0..15, loaded into s0.. up to the count
 *
 * A PM4 DISPATCH_DIRECT has no kernel descriptor: the command processor
 * takes all of this from the SH registers the packets set.
 */
struct kfdsim_gfx9_regs {
	u64 pgm;
	u32 rsrc1;
	u32 rsrc2;
	u32 user_data[16];
};

/**
 * struct kfdsim_gfx9_queue - where a dispatch of machine code comes from
 * @vm: the address space of the queue's process on the queue's GPU
 * @packet_va: GPU VA of the dispatch packet in the ring (dispatch ptr)
 * @queue_va: GPU VA of the queue's amd_queue_t (queue ptr), or 0 if the
 *            queue is not laid out as ROCr lays it out
 * @scratch_backing_va: the process's SET_SCRATCH_BACKING_VA address on
 *                      the GPU (0 if not set)
 * @dispatch_id: the packet's index in the queue
 * @gpu_id: for the kernel log
 * @queue_id: for the kernel log
 * @regs: for a PM4 dispatch, the registers that replace the kernel
 *        descriptor (pkt->kernel_object is then regs->pgm); NULL for AQL
 * @cwsr: the queue's context save state, or NULL: a dispatch resumes from
 *        the waves saved there when its control stack is not empty
 */
struct kfdsim_gfx9_queue {
	struct kfdsim_vm *vm;
	u64 packet_va;
	u64 queue_va;
	u64 scratch_backing_va;
	u64 dispatch_id;
	u32 gpu_id;
	u32 queue_id;
	const struct kfdsim_gfx9_regs *regs;
	struct kfdsim_cwsr *cwsr;
};

/*
 * Instructions executed by every wave of every dispatch since the module
 * loaded, and the same weighted by the lanes active in EXEC when each
 * started (debugfs kfdsim/gfx9; the interpreter's rate in make bench).
 */
extern atomic64_t kfdsim_gfx9_wave_insns;
extern atomic64_t kfdsim_gfx9_lane_insns;

int kfdsim_gfx9_run(struct kfdsim_gfx9_dispatch **state,
		    const struct kfdsim_gfx9_queue *q,
		    const struct kfdsim_aql_dispatch *pkt,
		    struct kfdsim_dispatch_progress *prog, u64 deadline_ns,
		    struct kfdsim_fault *fault,
		    struct kfdsim_dispatch_error *err);
void kfdsim_gfx9_free(struct kfdsim_gfx9_dispatch **state);
int kfdsim_gfx9_preempt(struct kfdsim_gfx9_dispatch **state,
			struct kfdsim_vm *vm, struct kfdsim_cwsr *cwsr);
int kfdsim_gfx9_cwsr_check(const u32 *words, u32 nwords, u32 wave_bytes,
			   u32 next_wg);

#endif /* KFDSIM_GFX9_H */
