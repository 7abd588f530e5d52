// SPDX-License-Identifier: GPL-2.0
/*
 * Dispatch of gfx9 machine code: the kernel descriptor, the grid, the
 * initial state of each wave (AMDGPUUsage, "Initial Kernel Execution
 * State") and the scheduler that runs the waves of a workgroup a bounded
 * number of instructions at a time, so the command processor can stop a
 * dispatch between two instructions and resume it later.
 *
 * Workgroups run one after the other; the waves of the running workgroup
 * take turns of GFX9_QUANTUM instructions, and s_barrier holds a wave
 * until every wave of its workgroup that has not ended reached it. The
 * state of a dispatch in progress (waves, VGPRs, LDS) lives in a struct
 * kfdsim_gfx9_dispatch the queue keeps between CP slices; the queue's
 * saved progress says which workgroup runs (next_wg). When the CP preempts
 * the queue, the live waves move to the queue's context save area
 * (cwsr.c) and the dispatch resumes from there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/sched/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>

#include "gfx9.h"

/* Instructions a wave runs before the next wave's turn. */
#define GFX9_QUANTUM		256

/* Code object v3+ kernel descriptor (64 bytes), byte offsets. */
#define KD_GROUP_SEGMENT	0
#define KD_ENTRY_OFFSET		16
#define KD_RSRC3		44
#define KD_RSRC1		48
#define KD_RSRC2		52
#define KD_PROPERTIES		56
#define KD_SIZE			64

/* The legacy amd_kernel_code_t (256 bytes) of ROCr's own blit kernels. */
#define AKC_MACHINE_KIND	8
#define AKC_PROPERTIES		56
#define AKC_GROUP_SEGMENT	64
#define AKC_GRID_COUNT_XYZ	GENMASK(9, 7)
#define AKC_READ		68	/* the fields above */

/* kernel_code_properties: the user SGPRs the CP loads, in this order. */
#define KCP_PRIVATE_SEGMENT_BUFFER	BIT(0)
#define KCP_DISPATCH_PTR		BIT(1)
#define KCP_QUEUE_PTR			BIT(2)
#define KCP_KERNARG_SEGMENT_PTR		BIT(3)
#define KCP_DISPATCH_ID			BIT(4)
#define KCP_FLAT_SCRATCH_INIT		BIT(5)
#define KCP_PRIVATE_SEGMENT_SIZE	BIT(6)
#define KCP_WAVEFRONT_SIZE32		BIT(10)

/* COMPUTE_PGM_RSRC1 / RSRC2 fields. */
#define RSRC1_VGPRS(r)			(((r) & 0x3f) + 1)
#define RSRC1_FLOAT_MODE(r)		(((r) >> 12) & 0xff)
#define RSRC1_DX10_CLAMP		BIT(21)
#define RSRC1_IEEE_MODE			BIT(23)
#define RSRC2_PRIVATE_SEGMENT		BIT(0)
#define RSRC2_USER_SGPRS(r)		(((r) >> 1) & 0x1f)
#define RSRC2_WORKGROUP_ID_X		BIT(7)
#define RSRC2_WORKGROUP_ID_Y		BIT(8)
#define RSRC2_WORKGROUP_ID_Z		BIT(9)
#define RSRC2_WORKGROUP_INFO		BIT(10)
#define RSRC2_WORKITEM_IDS(r)		(((r) >> 11) & 3)
#define RSRC2_LDS_SIZE(r)		((((r) >> 15) & 0x1ff) * 512)

/* COMPUTE_TMPRING_SIZE in amd_queue_t: scratch wave slots and their size. */
#define TMPRING_WAVES(t)		((t) & 0xfff)
#define TMPRING_WAVESIZE(t)		(((t) >> 12) & 0x1fff)
#define TMPRING_UNIT			SZ_1K

static int gfx9_refuse(struct gfx9_disp *d, struct kfdsim_dispatch_error *err,
		       u32 code, const char *what)
{
	err->code = code;
	err->what = what;
	return -ENOEXEC;
}

/* Grid and workgroup sizes, checked as the built-in kernels check them. */
static int gfx9_geometry(struct gfx9_disp *d,
			 struct kfdsim_dispatch_error *err)
{
	const struct kfdsim_aql_dispatch *p = &d->pkt;
	u32 grid[3] = { p->grid_size_x, p->grid_size_y, p->grid_size_z };
	u32 wg[3] = { p->workgroup_size_x, p->workgroup_size_y,
		      p->workgroup_size_z };
	unsigned int dims = p->setup, i;
	u64 wgs = 1, items = 1;

	if (p->reserved0 || p->reserved2)
		return gfx9_refuse(d, err, KFDSIM_AQL_ERROR_INVALID_FORMAT,
				   "dispatch with reserved fields set");
	if (dims < 1 || dims > 3)
		return gfx9_refuse(d, err, KFDSIM_AQL_ERROR_INVALID_DIM,
				   "dispatch with a bad dimension count");
	for (i = 0; i < 3; i++) {
		if (i >= dims) {
			if (grid[i] > 1 || wg[i] > 1)
				return gfx9_refuse(d, err,
						   KFDSIM_AQL_ERROR_INVALID_DIM,
						   "dispatch with bad grid or workgroup sizes");
			grid[i] = 1;
			wg[i] = 1;
		}
		if (!grid[i] || !wg[i])
			return gfx9_refuse(d, err, KFDSIM_AQL_ERROR_INVALID_DIM,
					   "dispatch with bad grid or workgroup sizes");
		d->grid[i] = grid[i];
		d->wg[i] = wg[i];
		d->nwg[i] = DIV_ROUND_UP(grid[i], wg[i]);
		wgs *= d->nwg[i];
		items *= wg[i];
	}
	if (items > KFDSIM_MAX_WG_SIZE)
		return gfx9_refuse(d, err, KFDSIM_AQL_ERROR_GROUP_TOO_LARGE,
				   "dispatch with a workgroup too large");
	if (wgs > U32_MAX)
		return gfx9_refuse(d, err, KFDSIM_AQL_ERROR_INVALID_DIM,
				   "dispatch with too many workgroups");
	d->wgs = wgs;
	return 0;
}

/* Read the kernel descriptor (either kind) at d->desc_va. */
static bool gfx9_legacy(const u8 *kd)
{
	u32 major;
	u16 kind;

	memcpy(&major, kd, sizeof(major));
	memcpy(&kind, kd + AKC_MACHINE_KIND, sizeof(kind));
	return major == 1 && kind == 1;
}

/* VGPRs and LDS of each workgroup, from RSRC1 and @lds bytes; checks. */
static int gfx9_resources(struct gfx9_disp *d, u32 lds,
			  struct kfdsim_dispatch_error *err)
{
	d->nvgpr = RSRC1_VGPRS(d->rsrc1) * 4;
	d->lds_size = lds;
	if (d->lds_size > GFX9_LDS_SIZE)
		return gfx9_refuse(d, err, KFDSIM_AQL_ERROR_GROUP_TOO_LARGE,
				   "dispatch needs more than 64 KiB of LDS");
	return 0;
}

static int gfx9_descriptor(struct gfx9_disp *d, const u8 *kd,
			   struct kfdsim_dispatch_error *err)
{
	u32 group, props;
	s64 entry;

	memcpy(&entry, kd + KD_ENTRY_OFFSET, sizeof(entry));
	memcpy(&d->rsrc1, kd + KD_RSRC1, sizeof(u32));
	memcpy(&d->rsrc2, kd + KD_RSRC2, sizeof(u32));
	if (gfx9_legacy(kd)) {
		/* amd_kernel_code_t version 1 for an AMDGPU machine */
		memcpy(&props, kd + AKC_PROPERTIES, sizeof(props));
		memcpy(&group, kd + AKC_GROUP_SEGMENT, sizeof(u32));
		if (props & AKC_GRID_COUNT_XYZ)
			return gfx9_refuse(d, err, KFDSIM_AQL_ERROR_INVALID_CODE,
					   "amd_kernel_code_t asks for grid workgroup counts (not implemented)");
	} else {
		u16 p16;

		memcpy(&p16, kd + KD_PROPERTIES, sizeof(p16));
		props = p16;
		memcpy(&group, kd + KD_GROUP_SEGMENT, sizeof(u32));
		if (props & KCP_WAVEFRONT_SIZE32)
			return gfx9_refuse(d, err, KFDSIM_AQL_ERROR_INVALID_CODE,
					   "kernel descriptor for wave32 (not gfx9)");
	}
	d->props = props;
	d->entry = d->desc_va + entry;
	return gfx9_resources(d, max(group, d->pkt.group_segment_size), err);
}

/*
 * A PM4 dispatch: the registers say what a descriptor would, and the user
 * SGPRs are COMPUTE_USER_DATA_*, whatever the program made of them.
 */
static int gfx9_registers(struct gfx9_disp *d,
			  const struct kfdsim_gfx9_regs *regs,
			  struct kfdsim_dispatch_error *err)
{
	d->regs = true;
	d->entry = regs->pgm;
	d->rsrc1 = regs->rsrc1;
	d->rsrc2 = regs->rsrc2;
	memcpy(d->user_data, regs->user_data, sizeof(d->user_data));
	return gfx9_resources(d, RSRC2_LDS_SIZE(d->rsrc2), err);
}

/*
 * The private segment (scratch) as gfx9 CP firmware sets it up from the
 * queue's amd_queue_t: the buffer resource and the queue's scratch base
 * for the user SGPRs, and COMPUTE_TMPRING_SIZE's slots. A dispatch whose
 * packet asks for a private segment needs a slot of at least 64 lanes of
 * it for each wave of a workgroup; the waves of the running workgroup take
 * the slots of their index (workgroups run one at a time here, and a
 * workgroup's slots are free again when it ends, as on hardware).
 *
 * Returns -ENOSPC with @err filled when the queue has too little scratch:
 * the CP asks the runtime for more and tries again later.
 */
static int gfx9_scratch(struct gfx9_disp *d, const struct kfdsim_gfx9_queue *q,
			struct kfdsim_fault *fault,
			struct kfdsim_dispatch_error *err)
{
	u32 tmpring = 0, waves;
	u64 location = 0, need;
	int ret;

	if (d->pkt.private_segment_size > SZ_16M)
		return gfx9_refuse(d, err, KFDSIM_AQL_ERROR_INVALID_CODE,
				   "dispatch asks for more than 16 MiB of scratch per work-item");
	d->private_size = ALIGN(d->pkt.private_segment_size, 4);
	if (!q->queue_va) {
		if (!d->private_size)
			return 0;
		return gfx9_refuse(d, err, KFDSIM_AQL_ERROR_INSUFFICIENT_SCRATCH,
				   "dispatch needs scratch, and the queue has no amd_queue_t to give it");
	}
	ret = kfdsim_vm_read(q->vm, q->queue_va + KFDSIM_AMD_QUEUE_TMPRING_SIZE,
			     &tmpring, sizeof(tmpring), fault);
	if (!ret)
		ret = kfdsim_vm_read(q->vm,
				     q->queue_va + KFDSIM_AMD_QUEUE_SCRATCH_RSRC,
				     d->scratch_rsrc, sizeof(d->scratch_rsrc),
				     fault);
	if (!ret)
		ret = kfdsim_vm_read(q->vm, q->queue_va +
				     KFDSIM_AMD_QUEUE_SCRATCH_LOCATION,
				     &location, sizeof(location), fault);
	if (ret)
		return ret;
	d->scratch_init = q->scratch_backing_va + location;
	if (!d->private_size)
		return 0;
	need = DIV_ROUND_UP((u64)d->private_size * GFX9_LANES, TMPRING_UNIT);
	waves = DIV_ROUND_UP(d->wg[0] * d->wg[1] * d->wg[2], GFX9_LANES);
	if (TMPRING_WAVESIZE(tmpring) < need || TMPRING_WAVES(tmpring) < waves) {
		err->code = KFDSIM_AQL_ERROR_INSUFFICIENT_SCRATCH;
		err->what = "dispatch needs more scratch than its queue has";
		return -ENOSPC;
	}
	d->scratch_wave = TMPRING_WAVESIZE(tmpring) * TMPRING_UNIT;
	return 0;
}

/* The workgroup's size in each dimension: the last ones may be partial. */
static void gfx9_wg_dims(const struct gfx9_disp *d, const u32 *id, u32 *size)
{
	unsigned int i;

	for (i = 0; i < 3; i++)
		size[i] = min(d->wg[i], d->grid[i] - id[i] * d->wg[i]);
}

static void gfx9_wave_init(struct gfx9_disp *d, struct gfx9_wave *w,
			   unsigned int idx, const u32 *id, const u32 *size)
{
	u32 items = size[0] * size[1] * size[2], user = RSRC2_USER_SGPRS(d->rsrc2);
	u32 vals[16], n = 0, i, l, flat;
	u32 ids = RSRC2_WORKITEM_IDS(d->rsrc2);
	u64 exec = 0;

	memset(w, 0, sizeof(*w));
	w->id = idx;
	w->pc = d->entry;
	w->vgpr = d->vgprs + (size_t)idx * (d->nvgpr + GFX9_VGPR_PAD) *
		  GFX9_LANES;
	w->mode = RSRC1_FLOAT_MODE(d->rsrc1) |
		  ((d->rsrc1 & RSRC1_DX10_CLAMP) ? BIT(8) : 0) |
		  ((d->rsrc1 & RSRC1_IEEE_MODE) ? BIT(9) : 0);

	/* User SGPRs, in the order AMDGPUUsage gives (PM4: the registers). */
	if (d->regs) {
		memcpy(vals, d->user_data, sizeof(vals));
		n = ARRAY_SIZE(vals);
	}
	if (d->props & KCP_PRIVATE_SEGMENT_BUFFER)
		for (i = 0; i < 4; i++)
			vals[n++] = d->scratch_rsrc[i];
	if (d->props & KCP_DISPATCH_PTR) {
		vals[n++] = lower_32_bits(d->q->packet_va);
		vals[n++] = upper_32_bits(d->q->packet_va);
	}
	if (d->props & KCP_QUEUE_PTR) {
		vals[n++] = lower_32_bits(d->q->queue_va);
		vals[n++] = upper_32_bits(d->q->queue_va);
	}
	if (d->props & KCP_KERNARG_SEGMENT_PTR) {
		vals[n++] = lower_32_bits(d->pkt.kernarg_address);
		vals[n++] = upper_32_bits(d->pkt.kernarg_address);
	}
	if (d->props & KCP_DISPATCH_ID) {
		vals[n++] = lower_32_bits(d->q->dispatch_id);
		vals[n++] = upper_32_bits(d->q->dispatch_id);
	}
	if (d->props & KCP_FLAT_SCRATCH_INIT) {
		vals[n++] = lower_32_bits(d->scratch_init);
		vals[n++] = upper_32_bits(d->scratch_init);
	}
	if (d->props & KCP_PRIVATE_SEGMENT_SIZE)
		vals[n++] = d->private_size;
	for (i = 0; i < min(n, user); i++)
		w->sreg[i] = vals[i];

	/* System SGPRs follow the user SGPRs. */
	n = user;
	if (d->rsrc2 & RSRC2_WORKGROUP_ID_X)
		w->sreg[n++] = id[0];
	if (d->rsrc2 & RSRC2_WORKGROUP_ID_Y)
		w->sreg[n++] = id[1];
	if (d->rsrc2 & RSRC2_WORKGROUP_ID_Z)
		w->sreg[n++] = id[2];
	if (d->rsrc2 & RSRC2_WORKGROUP_INFO)
		w->sreg[n++] = (idx == 0 ? BIT(31) : 0) | d->nwaves;
	/* The wave's scratch slot: its index in the workgroup. */
	if (d->rsrc2 & RSRC2_PRIVATE_SEGMENT)
		w->sreg[n++] = idx * d->scratch_wave;

	/* VGPR0-2: the work-item id in each dimension; EXEC: live lanes. */
	for (l = 0; l < GFX9_LANES; l++) {
		flat = idx * GFX9_LANES + l;
		if (flat >= items)
			break;
		exec |= BIT_ULL(l);
		gfx9_vreg(w, 0)[l] = flat % size[0];
		if (ids >= 1 && d->nvgpr > 1)
			gfx9_vreg(w, 1)[l] = (flat / size[0]) % size[1];
		if (ids >= 2 && d->nvgpr > 2)
			gfx9_vreg(w, 2)[l] = flat / (size[0] * size[1]);
	}
	gfx9_set_sreg64(w, GFX9_EXEC_LO, exec);
}

static void gfx9_wg_launch(struct gfx9_disp *d)
{
	u32 id[3], size[3], items, i, rest = d->wg_index;

	id[0] = rest % d->nwg[0];
	rest /= d->nwg[0];
	id[1] = rest % d->nwg[1];
	id[2] = rest / d->nwg[1];
	gfx9_wg_dims(d, id, size);
	items = size[0] * size[1] * size[2];
	d->nwaves = DIV_ROUND_UP(items, GFX9_LANES);
	memset(d->vgprs, 0, (size_t)d->nwaves * (d->nvgpr + GFX9_VGPR_PAD) *
	       GFX9_LANES * sizeof(u32));
	memset(d->lds, 0, d->lds_size);
	for (i = 0; i < d->nwaves; i++)
		gfx9_wave_init(d, &d->waves[i], i, id, size);
	d->next_wave = 0;
	d->wg_started = true;
}

atomic64_t kfdsim_gfx9_wave_insns;
atomic64_t kfdsim_gfx9_lane_insns;

/*
 * Run the current workgroup until it ends (0), the deadline passes
 * (-EAGAIN, after at least one turn) or a wave faults or traps; count the
 * instructions started in @insns (wave instructions, lane instructions).
 */
static int gfx9_wg_steps(struct gfx9_disp *d, u64 deadline_ns, u64 *insns)
{
	struct gfx9_wave *w;
	unsigned int i, live, waiting;
	int ret;

	for (;;) {
		live = 0;
		waiting = 0;
		for (i = 0; i < d->nwaves; i++) {
			w = &d->waves[(d->next_wave + i) % d->nwaves];
			if (w->state == GFX9_WAVE_DONE)
				continue;
			live++;
			if (w->state == GFX9_WAVE_BARRIER) {
				waiting++;
				continue;
			}
			ret = gfx9_steps(d, w, GFX9_QUANTUM, insns);
			if (ret)
				return ret;
		}
		d->next_wave = (d->next_wave + 1) % d->nwaves;
		if (!live)
			return 0;
		/* Everyone still running waits at the barrier: release. */
		if (waiting == live)
			for (i = 0; i < d->nwaves; i++)
				if (d->waves[i].state == GFX9_WAVE_BARRIER)
					d->waves[i].state = GFX9_WAVE_RUN;
		if (ktime_get_ns() >= deadline_ns)
			return -EAGAIN;
		cond_resched();
	}
}

static int gfx9_wg_run(struct gfx9_disp *d, u64 deadline_ns)
{
	u64 insns[2] = {};
	int ret;

	ret = gfx9_wg_steps(d, deadline_ns, insns);
	atomic64_add(insns[0], &kfdsim_gfx9_wave_insns);
	atomic64_add(insns[1], &kfdsim_gfx9_lane_insns);
	return ret;
}

static void gfx9_disp_free(struct kfdsim_gfx9_dispatch *s)
{
	if (!s)
		return;
	kvfree(s->d.vgprs);
	kvfree(s->d.lds);
	kvfree(s->d.icache);
	kvfree(s);
}

/**
 * kfdsim_gfx9_free - drop a queue's dispatch state
 * @state: the queue's pointer to it; set to NULL
 *
 * For the CP when it destroys a queue. The dispatch, if any, is lost.
 */
void kfdsim_gfx9_free(struct kfdsim_gfx9_dispatch **state)
{
	gfx9_disp_free(*state);
	*state = NULL;
}

/*
 * The dispatch state and the wave registers: their size follows the
 * user's packet (up to 1 MiB of VGPRs for a 1024-item workgroup), so they
 * are charged to the memory cgroup of the queue's process, not to the CP
 * thread's, and fail rather than invoke the OOM killer there.
 */
#define GFX9_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/* Set up a new dispatch: descriptor, grid, buffers. */
static int gfx9_start(struct kfdsim_gfx9_dispatch **state,
		      const struct kfdsim_gfx9_queue *q,
		      const struct kfdsim_aql_dispatch *pkt,
		      const struct kfdsim_dispatch_progress *prog,
		      struct kfdsim_fault *fault,
		      struct kfdsim_dispatch_error *err)
{
	struct kfdsim_gfx9_dispatch *s;
	struct mem_cgroup *memcg;
	struct gfx9_disp *d;
	u8 kd[AKC_READ];
	u32 magic;
	int ret;

	/*
	 * A NULL object and kfdsim's own descriptors: the built-in path. For
	 * PM4 the object is the code itself, which does not start with the
	 * magic (0x4d49534b decodes as a v_add_u16 of VGPRs that no kernel
	 * has set at its entry).
	 */
	if (!pkt->kernel_object)
		return -ENOENT;
	ret = kfdsim_vm_read(q->vm, pkt->kernel_object, &magic, sizeof(magic),
			     fault);
	if (ret)
		return ret;
	if (magic == KFDSIM_KERNEL_MAGIC)
		return -ENOENT;
	if (!q->regs) {
		ret = kfdsim_vm_read(q->vm, pkt->kernel_object, kd, KD_SIZE,
				     fault);
		if (!ret && gfx9_legacy(kd))
			ret = kfdsim_vm_read(q->vm, pkt->kernel_object, kd,
					     AKC_READ, fault);
		if (ret)
			return ret;
	}

	memcg = set_active_memcg(kfdsim_vm_memcg(q->vm));
	s = kfdsim_cp_should_fail() ? NULL : kvzalloc(sizeof(*s), GFX9_GFP);
	if (!s) {
		ret = -ENOMEM;
		goto out;
	}
	d = &s->d;
	d->pkt = *pkt;
	d->packet_va = q->packet_va;
	d->desc_va = pkt->kernel_object;
	d->q = q;
	ret = gfx9_geometry(d, err);
	if (!ret && q->regs)
		ret = gfx9_registers(d, q->regs, err);
	else if (!ret)
		ret = gfx9_descriptor(d, kd, err);
	if (!ret)
		ret = gfx9_scratch(d, q, fault, err);
	if (!ret && prog->iteration)
		ret = -EINVAL;
	if (!ret && prog->next_wg >= d->wgs)
		ret = -EINVAL;
	if (ret)
		goto fail;
	d->wg_index = prog->next_wg;
	ret = -ENOMEM;
	d->lds = kvzalloc(GFX9_LDS_SIZE, GFX9_GFP);
	d->vgprs = kvcalloc((size_t)DIV_ROUND_UP(d->wg[0] * d->wg[1] * d->wg[2],
						 GFX9_LANES) *
			    (d->nvgpr + GFX9_VGPR_PAD) * GFX9_LANES,
			    sizeof(u32), GFX9_GFP);
	d->icache = kvcalloc(GFX9_ICACHE_ENTRIES, sizeof(*d->icache),
			     GFX9_GFP);
	if (!d->lds || !d->vgprs || !d->icache)
		goto fail;
	/* Entries of generation 0 are empty. */
	d->icache_gen = 1;
	d->vm_gen = kfdsim_vm_unmap_gen(q->vm);
	*state = s;
	ret = 0;
	goto out;
fail:
	/* err->what may point into @s only for traps, not here. */
	gfx9_disp_free(s);
out:
	set_active_memcg(memcg);
	return ret;
}

/**
 * kfdsim_gfx9_run - run (or resume) a dispatch of gfx9 machine code
 * @state: the queue's dispatch state, NULL when no dispatch is under way;
 *         kept between calls while the dispatch runs
 * @q: where the dispatch comes from (address space, packet, queue)
 * @pkt: the dispatch packet, already copied out of the ring
 * @prog: the queue's saved progress: next_wg is the workgroup that runs
 * @deadline_ns: ktime_get_ns() time after which to stop between two
 *               instructions; at least one turn of one wave always runs
 * @fault: filled on a GPU page fault
 * @err: filled when the dispatch cannot run or a wave traps
 *
 * Return: -ENOENT if the kernel object is not machine code (a kfdsim
 * built-in descriptor, or NULL: the caller runs kfdsim_kernel_run()); 0
 * when the dispatch is complete; -EAGAIN at the deadline, with the state
 * kept and @prog updated; -EFAULT on a GPU page fault; -ENOEXEC for a
 * dispatch the engine refuses or a wave that traps (illegal instruction,
 * s_trap), with @err filled (the text stays valid until the state is
 * freed); -ENOSPC when the dispatch needs more scratch than the queue's
 * amd_queue_t gives (@err filled; nothing ran, the state is not kept);
 * -EINVAL if @prog lies outside the dispatch or the queue's control stack
 * does not fit it; -ENOMEM.
 */
int kfdsim_gfx9_run(struct kfdsim_gfx9_dispatch **state,
		    const struct kfdsim_gfx9_queue *q,
		    const struct kfdsim_aql_dispatch *pkt,
		    struct kfdsim_dispatch_progress *prog, u64 deadline_ns,
		    struct kfdsim_fault *fault,
		    struct kfdsim_dispatch_error *err)
{
	struct gfx9_disp *d;
	int ret;

	/* A state left from another packet (a queue restored) is stale. */
	if (*state && (memcmp(&(*state)->d.pkt, pkt, sizeof(*pkt)) ||
		       (*state)->d.packet_va != q->packet_va))
		kfdsim_gfx9_free(state);
	if (!*state) {
		ret = gfx9_start(state, q, pkt, prog, fault, err);
		if (ret)
			return ret;
		d = &(*state)->d;
		d->vm = q->vm;
		d->q = q;
		d->fault = fault;
		/* Waves preempted into the save area resume from there. */
		if (q->cwsr && q->cwsr->cntl_stack &&
		    q->cwsr->cntl_stack_offset < q->cwsr->cntl_stack_size) {
			ret = gfx9_cwsr_restore(d, q->cwsr);
			if (ret) {
				kfdsim_gfx9_free(state);
				return ret;
			}
		}
	}
	d = &(*state)->d;
	d->vm = q->vm;
	d->q = q;
	d->fault = fault;

	while (d->wg_index < d->wgs) {
		if (!d->wg_started)
			gfx9_wg_launch(d);
		ret = gfx9_wg_run(d, deadline_ns);
		if (ret == -EAGAIN) {
			prog->iteration = 0;
			prog->next_wg = d->wg_index;
			return ret;
		}
		if (ret == -ENOEXEC) {
			err->code = d->code;
			err->what = d->why;
		}
		if (ret)
			return ret;
		d->wg_started = false;
		d->wg_index++;
		if (d->wg_index < d->wgs && ktime_get_ns() >= deadline_ns) {
			prog->iteration = 0;
			prog->next_wg = d->wg_index;
			return -EAGAIN;
		}
	}
	kfdsim_gfx9_free(state);
	return 0;
}
