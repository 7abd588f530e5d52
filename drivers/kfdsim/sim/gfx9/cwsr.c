// SPDX-License-Identifier: GPL-2.0
/*
 * Compute wave save/restore (CWSR) of the gfx9 engine: when the CP
 * preempts a queue whose workgroup has live waves, every wave is written
 * to the queue's context save area in user memory, in the layout gfx9's
 * trap handler uses and a debugger reads, and the control stack that
 * lists them is written to the queue's MQD state. The queue resumes from
 * there, not from kernel memory. Documentation/gfx9-engine.rst, "Context
 * save and restore (CWSR)".
 *
 * One wave's block, ascending addresses from the wave's base:
 *   VGPRs    nvgpr rows of 64 lanes (256 bytes a row)
 *   SGPRs    112 dwords: s0-s101, FLAT_SCRATCH, XNACK_MASK, VCC, 4 unused
 *   HWREGs   16 dwords: M0, PC_LO, PC_HI, EXEC_LO, EXEC_HI, STATUS,
 *            TRAPSTS, XNACK_MASK_LO, XNACK_MASK_HI, MODE, 6 unused
 *   TTMPs    16 dwords: ttmp0-15
 *   LDS      the workgroup's LDS allocation, first wave only
 *   reserved 16 dwords
 * Waves follow each other from the start of the wave area (the save area
 * at cntl_stack_size); a debugger walks them down from wg_state_offset.
 *
 * The control stack, dwords from its top (cntl_stack_offset) upwards:
 *   two words the hardware's relaunch packets take (kfdsim: a tag and the
 *   workgroup index), one state word (bit 31; VGPR blocks of 4 - 1 in
 *   bits 0-5, SGPR blocks of 16 - 1 in bits 6-8, LDS in 512-byte units in
 *   bits 9-17), then one word per wave, last saved first (bits 30-31
 *   clear; the wave's index in its workgroup in bits 0-5, last wave bit
 *   16, first wave bit 17).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "gfx9.h"

#define CWSR_SGPRS		112	/* 7 blocks of 16 */
#define CWSR_SGPRS_SAVED	108	/* s0-s101 and their 6 aliases */
#define CWSR_HWREGS		16
#define CWSR_TTMPS		16
#define CWSR_RESERVED		16
#define CWSR_FIXED_BYTES	((CWSR_SGPRS + CWSR_HWREGS + CWSR_TTMPS + \
				  CWSR_RESERVED) * 4)
#define CWSR_LDS_UNIT		512
/* HsaUserContextSaveAreaHeader: the control stack may not reach into it. */
#define CWSR_HEADER_BYTES	40

#define CWSR_HW_M0		0
#define CWSR_HW_PC_LO		1
#define CWSR_HW_PC_HI		2
#define CWSR_HW_EXEC_LO		3
#define CWSR_HW_EXEC_HI		4
#define CWSR_HW_STATUS		5
#define CWSR_HW_XNACK_LO	7
#define CWSR_HW_XNACK_HI	8
#define CWSR_HW_MODE		9
#define CWSR_STATUS_SCC		BIT(0)

#define CWSR_TAG		0x52535743	/* "CWSR" */
#define CWSR_STATE		BIT(31)
#define CWSR_EVENT		BIT(30)
#define CWSR_STATE_VGPRS(x)	((x) & 0x3f)
#define CWSR_STATE_SGPRS(x)	(((x) >> 6) & 0x7)
#define CWSR_STATE_LDS(x)	(((x) >> 9) & 0x1ff)
#define CWSR_WAVE_ID(x)		((x) & 0x3f)
#define CWSR_WAVE_LAST		BIT(16)
#define CWSR_WAVE_FIRST		BIT(17)
#define CWSR_WAVE_KNOWN		(0x3f | CWSR_WAVE_LAST | CWSR_WAVE_FIRST)
/* The opcode s_barrier re-executes after a restore (SOPP, 4 bytes). */
#define CWSR_S_BARRIER_BYTES	4

static u32 cwsr_lds_bytes(const struct gfx9_disp *d)
{
	return round_up(d->lds_size, CWSR_LDS_UNIT);
}

static u64 cwsr_wave_bytes(const struct gfx9_disp *d, bool first)
{
	return (u64)d->nvgpr * GFX9_LANES * 4 + CWSR_FIXED_BYTES +
	       (first ? cwsr_lds_bytes(d) : 0);
}

/* Write one wave at @va; returns the bytes it took or a negative errno. */
static s64 cwsr_save_wave(struct gfx9_disp *d, struct kfdsim_vm *vm,
			  const struct gfx9_wave *w, u64 va, bool first,
			  struct kfdsim_fault *fault)
{
	u32 hw[CWSR_HWREGS + CWSR_TTMPS + CWSR_RESERVED] = {};
	u64 vbytes = (u64)d->nvgpr * GFX9_LANES * 4, pc = w->pc;
	u32 sgprs[CWSR_SGPRS] = {};
	int ret;

	/* A wave held at s_barrier executes it again when it resumes. */
	if (w->state == GFX9_WAVE_BARRIER)
		pc -= CWSR_S_BARRIER_BYTES;
	memcpy(sgprs, w->sreg, CWSR_SGPRS_SAVED * sizeof(u32));
	hw[CWSR_HW_M0] = w->sreg[GFX9_M0];
	hw[CWSR_HW_PC_LO] = lower_32_bits(pc);
	hw[CWSR_HW_PC_HI] = upper_32_bits(pc);
	hw[CWSR_HW_EXEC_LO] = w->sreg[GFX9_EXEC_LO];
	hw[CWSR_HW_EXEC_HI] = w->sreg[GFX9_EXEC_HI];
	hw[CWSR_HW_STATUS] = w->scc ? CWSR_STATUS_SCC : 0;
	hw[CWSR_HW_XNACK_LO] = w->sreg[GFX9_XNACK_MASK_LO];
	hw[CWSR_HW_XNACK_HI] = w->sreg[GFX9_XNACK_MASK_LO + 1];
	hw[CWSR_HW_MODE] = w->mode;
	memcpy(hw + CWSR_HWREGS, &w->sreg[GFX9_TTMP0],
	       CWSR_TTMPS * sizeof(u32));

	ret = kfdsim_vm_write(vm, va, w->vgpr, vbytes, fault);
	if (!ret)
		ret = kfdsim_vm_write(vm, va + vbytes, sgprs, sizeof(sgprs),
				      fault);
	va += vbytes + sizeof(sgprs);
	if (!ret)
		ret = kfdsim_vm_write(vm, va, hw,
				      (CWSR_HWREGS + CWSR_TTMPS) * 4, fault);
	va += (CWSR_HWREGS + CWSR_TTMPS) * 4;
	if (!ret && first && d->lds_size) {
		ret = kfdsim_vm_write(vm, va, d->lds, cwsr_lds_bytes(d),
				      fault);
		va += cwsr_lds_bytes(d);
	}
	if (!ret)
		ret = kfdsim_vm_write(vm, va, hw + CWSR_HWREGS + CWSR_TTMPS,
				      CWSR_RESERVED * 4, fault);
	return ret ? ret : (s64)cwsr_wave_bytes(d, first);
}

/**
 * kfdsim_gfx9_preempt - save a dispatch's live waves to the save area
 * @state: the queue's dispatch state; freed (set to NULL) once saved
 * @vm: the address space of the queue's process
 * @cwsr: the queue's context save state, or NULL
 *
 * For the CP when it takes a queue off the GPU (eviction, a queue made
 * inactive). A dispatch between two workgroups, or a queue without a save
 * area, keeps its state in kernel memory. Return: 0 (saved or kept), or
 * -ENOSPC / -EFAULT when the waves do not fit or the save area faults
 * (the state is kept in kernel memory then, nothing is lost).
 */
int kfdsim_gfx9_preempt(struct kfdsim_gfx9_dispatch **state,
			struct kfdsim_vm *vm, struct kfdsim_cwsr *cwsr)
{
	u32 words[3 + GFX9_MAX_WAVES], n, live = 0, i, top;
	struct kfdsim_fault fault;
	struct gfx9_disp *d;
	bool first = true;
	u64 va, need;
	s64 len;

	if (!*state || !cwsr || !cwsr->cntl_stack || !(*state)->d.wg_started)
		return 0;
	d = &(*state)->d;
	need = 0;
	for (i = 0; i < d->nwaves; i++) {
		if (d->waves[i].state == GFX9_WAVE_DONE)
			continue;
		need += cwsr_wave_bytes(d, !live);
		live++;
	}
	if (!live)
		return 0;
	if ((3 + live) * 4 + CWSR_HEADER_BYTES > cwsr->cntl_stack_size ||
	    cwsr->cntl_stack_offset != cwsr->cntl_stack_size ||
	    need > cwsr->save_size - cwsr->cntl_stack_size) {
		pr_warn_ratelimited("gpu %u queue %u: %u waves do not fit the context save area (%u bytes, control stack %u)\n",
				    d->q->gpu_id, d->q->queue_id, live,
				    cwsr->save_size, cwsr->cntl_stack_size);
		return -ENOSPC;
	}

	va = cwsr->save_va + cwsr->cntl_stack_size;
	/* The words are laid out last wave first; fill from the bottom. */
	n = 3 + live;
	for (i = 0; i < d->nwaves; i++) {
		const struct gfx9_wave *w = &d->waves[i];

		if (w->state == GFX9_WAVE_DONE)
			continue;
		len = cwsr_save_wave(d, vm, w, va, first, &fault);
		if (len < 0) {
			pr_warn_ratelimited("gpu %u queue %u: context save area faults at 0x%llx, waves stay in kernel memory\n",
					    d->q->gpu_id, d->q->queue_id,
					    fault.va);
			return len;
		}
		va += len;
		words[--n] = w->id | (first ? CWSR_WAVE_FIRST : 0);
		first = false;
	}
	words[3] |= CWSR_WAVE_LAST;
	words[0] = CWSR_TAG;
	words[1] = d->wg_index;
	words[2] = CWSR_STATE | (d->nvgpr / 4 - 1) |
		   ((CWSR_SGPRS / 16 - 1) << 6) |
		   ((cwsr_lds_bytes(d) / CWSR_LDS_UNIT) << 9);

	top = cwsr->cntl_stack_size - (3 + live) * 4;
	memcpy((u8 *)cwsr->cntl_stack + top, words, (3 + live) * 4);
	cwsr->cntl_stack_offset = top;
	cwsr->wg_state_offset = cwsr->cntl_stack_size + need;
	kfdsim_gfx9_free(state);
	atomic64_add(live, &kfdsim_cwsr_saved_waves);
	return 0;
}

static int cwsr_bad(const char *what)
{
	pr_warn_ratelimited("control stack refused: %s\n", what);
	return -EINVAL;
}

/**
 * kfdsim_gfx9_cwsr_check - check a control stack on its own
 * @words: the control stack in use, from its top
 * @nwords: how many
 * @wave_bytes: what the save area holds for it (wg_state_offset minus
 *              cntl_stack_size)
 * @next_wg: the workgroup the queue's progress says is running
 *
 * For a control stack that comes from outside (a CRIU image): the tag,
 * the workgroup, a state word the engine writes, one to GFX9_MAX_WAVES
 * well-formed wave entries and saved waves that take @wave_bytes exactly.
 * Return: 0 or -EINVAL, with a log line.
 */
int kfdsim_gfx9_cwsr_check(const u32 *words, u32 nwords, u32 wave_bytes,
			   u32 next_wg)
{
	u32 word, n, i, vbytes, lds;
	u64 total;

	if (nwords < 4 || nwords > 3 + GFX9_MAX_WAVES)
		return cwsr_bad("size");
	if (words[0] != CWSR_TAG || words[1] != next_wg)
		return cwsr_bad("not the workgroup the queue runs");
	word = words[2];
	if (!(word & CWSR_STATE) || (word & CWSR_EVENT) ||
	    CWSR_STATE_SGPRS(word) != CWSR_SGPRS / 16 - 1 ||
	    CWSR_STATE_LDS(word) * CWSR_LDS_UNIT > GFX9_LDS_SIZE ||
	    (word & ~(CWSR_STATE | GENMASK(17, 0))))
		return cwsr_bad("state word");
	n = nwords - 3;
	vbytes = (CWSR_STATE_VGPRS(word) + 1) * 4 * GFX9_LANES * 4;
	lds = CWSR_STATE_LDS(word) * CWSR_LDS_UNIT;
	total = (u64)n * (vbytes + CWSR_FIXED_BYTES) + lds;
	if (total != wave_bytes)
		return cwsr_bad("saved waves do not match wg_state_offset");
	/* Word 3 + n - 1 is the first wave saved; word 3 the last. */
	for (i = 0; i < n; i++) {
		word = words[3 + n - 1 - i];
		if ((word & ~CWSR_WAVE_KNOWN) ||
		    !!(word & CWSR_WAVE_FIRST) != !i ||
		    !!(word & CWSR_WAVE_LAST) != (i == n - 1) ||
		    CWSR_WAVE_ID(word) >= GFX9_MAX_WAVES)
			return cwsr_bad("bad wave entry");
	}
	return 0;
}

/* Load one wave saved at @va into @w (slot @slot); returns bytes read. */
static s64 cwsr_load_wave(struct gfx9_disp *d, struct gfx9_wave *w,
			  unsigned int slot, u32 id, u64 va, bool first)
{
	u32 hw[CWSR_HWREGS + CWSR_TTMPS];
	u64 vbytes = (u64)d->nvgpr * GFX9_LANES * 4;
	u32 sgprs[CWSR_SGPRS];
	int ret;

	memset(w, 0, sizeof(*w));
	w->id = id;
	w->vgpr = d->vgprs + (size_t)slot * (d->nvgpr + GFX9_VGPR_PAD) *
		  GFX9_LANES;
	ret = kfdsim_vm_read(d->vm, va, w->vgpr, vbytes, d->fault);
	if (!ret)
		ret = kfdsim_vm_read(d->vm, va + vbytes, sgprs, sizeof(sgprs),
				     d->fault);
	va += vbytes + sizeof(sgprs);
	if (!ret)
		ret = kfdsim_vm_read(d->vm, va, hw, sizeof(hw), d->fault);
	va += sizeof(hw);
	if (!ret && first && d->lds_size)
		ret = kfdsim_vm_read(d->vm, va, d->lds, cwsr_lds_bytes(d),
				     d->fault);
	if (ret)
		return ret;
	memcpy(w->sreg, sgprs, CWSR_SGPRS_SAVED * sizeof(u32));
	w->sreg[GFX9_M0] = hw[CWSR_HW_M0];
	w->pc = hw[CWSR_HW_PC_LO] | (u64)hw[CWSR_HW_PC_HI] << 32;
	w->sreg[GFX9_EXEC_LO] = hw[CWSR_HW_EXEC_LO];
	w->sreg[GFX9_EXEC_HI] = hw[CWSR_HW_EXEC_HI];
	w->scc = hw[CWSR_HW_STATUS] & CWSR_STATUS_SCC;
	w->sreg[GFX9_XNACK_MASK_LO] = hw[CWSR_HW_XNACK_LO];
	w->sreg[GFX9_XNACK_MASK_LO + 1] = hw[CWSR_HW_XNACK_HI];
	w->mode = hw[CWSR_HW_MODE];
	memcpy(&w->sreg[GFX9_TTMP0], hw + CWSR_HWREGS,
	       CWSR_TTMPS * sizeof(u32));
	w->state = GFX9_WAVE_RUN;
	return cwsr_wave_bytes(d, first);
}

/**
 * gfx9_cwsr_restore - resume the workgroup saved in the save area
 * @d: a dispatch just set up for the workgroup @d->wg_index
 * @cwsr: the queue's context save state, with a control stack
 *
 * The control stack is untrusted (it comes back from a checkpoint, and the
 * save area is user memory): it must name this workgroup, this kernel's
 * VGPR and LDS sizes and no more waves than the workgroup has. Once the
 * waves are loaded the control stack is empty again.
 *
 * Return: 0; -EINVAL for a control stack that does not fit the dispatch;
 * -EFAULT if the save area faults (@d->fault filled).
 */
int gfx9_cwsr_restore(struct gfx9_disp *d, struct kfdsim_cwsr *cwsr)
{
	u32 size = cwsr->cntl_stack_size, off = cwsr->cntl_stack_offset;
	u32 nwords = (size - off) / 4, items, maxw, i, n, word;
	const u32 *words = (const u32 *)((u8 *)cwsr->cntl_stack + off);
	u64 va = cwsr->save_va + size;
	s64 len;
	int ret;

	if (off % 4 || cwsr->wg_state_offset < size ||
	    cwsr->wg_state_offset > cwsr->save_size)
		return cwsr_bad("offsets");
	ret = kfdsim_gfx9_cwsr_check(words, nwords,
				     cwsr->wg_state_offset - size,
				     d->wg_index);
	if (ret)
		return ret;
	word = words[2];
	if ((CWSR_STATE_VGPRS(word) + 1) * 4 != d->nvgpr ||
	    CWSR_STATE_LDS(word) * CWSR_LDS_UNIT != cwsr_lds_bytes(d))
		return cwsr_bad("state word does not match the kernel");
	items = d->wg[0] * d->wg[1] * d->wg[2];
	maxw = DIV_ROUND_UP(items, GFX9_LANES);
	n = nwords - 3;
	if (n > maxw)
		return cwsr_bad("more waves than the workgroup has");
	for (i = 0; i < n; i++)
		if (CWSR_WAVE_ID(words[3 + i]) >= maxw)
			return cwsr_bad("more waves than the workgroup has");

	memset(d->vgprs, 0, (size_t)maxw * (d->nvgpr + GFX9_VGPR_PAD) *
	       GFX9_LANES * sizeof(u32));
	memset(d->lds, 0, GFX9_LDS_SIZE);
	for (i = 0; i < n; i++) {
		word = words[3 + n - 1 - i];
		len = cwsr_load_wave(d, &d->waves[i], i, CWSR_WAVE_ID(word),
				     va, !i);
		if (len < 0)
			return len;
		va += len;
	}
	d->nwaves = n;
	d->next_wave = 0;
	d->wg_started = true;
	cwsr->cntl_stack_offset = size;
	cwsr->wg_state_offset = size;
	atomic64_add(n, &kfdsim_cwsr_restored_waves);
	return 0;
}
