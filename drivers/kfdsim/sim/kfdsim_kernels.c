// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated GPU's built-in compute kernels.
 *
 * A dispatch's kernel object names one of a fixed set of kernels instead of
 * machine code (include/uapi/linux/kfdsim.h, Documentation/kernels.rst).
 * Work-item i of the flattened grid handles element i of u32 arrays (for
 * the chunk sums kernel, chunk i of a byte buffer), and a workgroup is a
 * contiguous run of work-items. Workgroups run in order, so a dispatch can
 * stop at any workgroup boundary and later resume from its
 * struct kfdsim_dispatch_progress.
 *
 * Memory is only touched through the GPU page table, one piece at a time.
 * A piece never crosses a page of the kernel's main array (the one it
 * writes, or reads for the checksums): single-array kernels work in place
 * on one mapped page, the others go through one-page bounce buffers.
 */
#include <linux/align.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/math.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xxhash.h>
#include <linux/timekeeping.h>
#include <asm/byteorder.h>

#include "kfdsim.h"
#include "kfdsim_f32.h"

#define KFDSIM_ELEM_SIZE	sizeof(u32)

/* fold64, the CRIU plugin's checksum (include/uapi/linux/kfdsim.h). */
#define KFDSIM_FOLD64_SEED	0x6b66647375636b31ULL
#define KFDSIM_FOLD64_MUL	0x9e3779b97f4a7c15ULL
#define KFDSIM_FOLD64_FINAL_MUL	0xd6e8feb86659fd93ULL

union kfdsim_args {
	struct kfdsim_args_fill fill;
	struct kfdsim_args_copy copy;
	struct kfdsim_args_vadd vadd;
	struct kfdsim_args_checksum checksum;
	struct kfdsim_args_loop loop;
	struct kfdsim_args_chunk_sums chunk_sums;
};

/**
 * struct kfdsim_run - the state of one kfdsim_kernel_run() call
 * @vm: the address space
 * @fault: filled on a GPU page fault
 * @err: filled when the dispatch cannot run (-ENOEXEC)
 * @op: enum kfdsim_kernel_op
 * @args: the kernel's arguments
 * @items: work-items in the grid, at most U32_MAX
 * @wg_size: work-items per workgroup (1 for the chunk sums kernel, whose
 *           work-items are its preemption units)
 * @wgs: workgroups in the grid (work-items for the chunk sums kernel)
 * @steps: steps of the loop kernel, 1 for the other kernels
 * @main: GPU VA of the array whose page boundaries end the pieces
 * @step: the step being run
 * @sum: the checksum kernel's partial sum over the current workgroup
 * @hash: the chunk sums kernel's running fold64 over the current chunk
 * @bits: the chunk sums kernel's running OR over the current chunk
 * @xxh: the chunk XXH64 kernel's running hash over the current chunk
 * @bounce: two pages, for the kernels that use more than one array
 */
struct kfdsim_run {
	struct kfdsim_vm *vm;
	struct kfdsim_fault *fault;
	struct kfdsim_dispatch_error *err;
	u32 op;
	union kfdsim_args args;
	u64 items;
	u64 wg_size;
	u32 wgs;
	u32 steps;
	u64 main;
	u32 step;
	u64 sum;
	u64 hash;
	u64 bits;
	struct xxh64_state xxh;
	void *bounce[2];
};

/* The chunk kernels differ only in the checksum of a chunk (or none). */
static bool kfdsim_chunk_op(u32 op)
{
	return op == KFDSIM_KERNEL_CHUNK_SUMS ||
	       op == KFDSIM_KERNEL_CHUNK_XXH64 || op == KFDSIM_KERNEL_CHUNK_ZERO;
}

/* -ENOEXEC, with why the dispatch cannot run. */
static int kfdsim_refuse(struct kfdsim_run *run, u32 code, const char *what)
{
	run->err->code = code;
	run->err->what = what;
	return -ENOEXEC;
}

/* A used dimension must be non-zero; an unused one 0 or 1, meaning 1. */
static bool kfdsim_dim_ok(u32 size, unsigned int dim, unsigned int dims,
			  u64 *product)
{
	if (dim >= dims)
		return size <= 1;
	*product *= size;
	return size != 0;
}

static int kfdsim_geometry(struct kfdsim_run *run,
			   const struct kfdsim_aql_dispatch *pkt)
{
	const u32 grid[3] = {
		pkt->grid_size_x, pkt->grid_size_y, pkt->grid_size_z,
	};
	const u32 wg[3] = {
		pkt->workgroup_size_x, pkt->workgroup_size_y,
		pkt->workgroup_size_z,
	};
	/* The reserved bits above the dimension count must be zero too. */
	unsigned int dims = pkt->setup;
	unsigned int i;

	if (pkt->reserved0 || pkt->reserved2)
		return kfdsim_refuse(run, KFDSIM_AQL_ERROR_INVALID_FORMAT,
				     "dispatch with reserved fields set");
	if (dims < 1 || dims > 3)
		return kfdsim_refuse(run, KFDSIM_AQL_ERROR_INVALID_DIM,
				     "dispatch with a bad dimension count");
	run->items = 1;
	run->wg_size = 1;
	for (i = 0; i < 3; i++) {
		/* Both factors are below 2^32: the product cannot overflow. */
		if (!kfdsim_dim_ok(grid[i], i, dims, &run->items) ||
		    !kfdsim_dim_ok(wg[i], i, dims, &run->wg_size) ||
		    run->items > U32_MAX)
			return kfdsim_refuse(run, KFDSIM_AQL_ERROR_INVALID_DIM,
					     "dispatch with bad grid or workgroup sizes");
	}
	/* Bounds the work between two preemption points. */
	if (run->wg_size > KFDSIM_MAX_WG_SIZE)
		return kfdsim_refuse(run, KFDSIM_AQL_ERROR_GROUP_TOO_LARGE,
				     "dispatch with a workgroup too large");
	/* A workgroup larger than the grid is the whole grid. */
	run->wg_size = min(run->wg_size, run->items);
	run->wgs = DIV_ROUND_UP_ULL(run->items, run->wg_size);
	return 0;
}

static size_t kfdsim_args_size(u32 op)
{
	switch (op) {
	case KFDSIM_KERNEL_FILL_U32:
		return sizeof(struct kfdsim_args_fill);
	case KFDSIM_KERNEL_COPY_U32:
		return sizeof(struct kfdsim_args_copy);
	case KFDSIM_KERNEL_VADD_U32:
	case KFDSIM_KERNEL_VADD_F32:
		return sizeof(struct kfdsim_args_vadd);
	case KFDSIM_KERNEL_CHECKSUM:
		return sizeof(struct kfdsim_args_checksum);
	case KFDSIM_KERNEL_LOOP:
		return sizeof(struct kfdsim_args_loop);
	case KFDSIM_KERNEL_CHUNK_SUMS:
	case KFDSIM_KERNEL_CHUNK_XXH64:
	case KFDSIM_KERNEL_CHUNK_ZERO:
		return sizeof(struct kfdsim_args_chunk_sums);
	default:
		return 0;
	}
}

/* A u32 array with an element per work-item: aligned, not wrapping. */
static bool kfdsim_array_ok(const struct kfdsim_run *run, u64 va)
{
	return IS_ALIGNED(va, KFDSIM_ELEM_SIZE) &&
	       va <= U64_MAX - run->items * KFDSIM_ELEM_SIZE;
}

/*
 * One work-item per chunk of the source. A workgroup of 1024 chunks of
 * 4 MiB would read 4 GiB between two preemption points, so this kernel's
 * preemption unit is the work-item: each writes only its own out pair, and
 * running them one at a time in order is what the workgroups would do.
 */
static int kfdsim_check_chunk_sums(struct kfdsim_run *run)
{
	const struct kfdsim_args_chunk_sums *a = &run->args.chunk_sums;
	u64 chunks;
	u32 rem;

	if (a->pad || !a->size || !a->chunk ||
	    a->chunk > KFDSIM_CHUNK_SUMS_MAX_CHUNK ||
	    !IS_ALIGNED(a->src | a->out | a->size | a->chunk, sizeof(u64)) ||
	    a->src > U64_MAX - a->size)
		return kfdsim_refuse(run, KFDSIM_AQL_ERROR_INVALID_CODE,
				     "built-in kernel with invalid arguments");
	chunks = div_u64_rem(a->size, a->chunk, &rem) + !!rem;
	if (chunks != run->items)
		return kfdsim_refuse(run, KFDSIM_AQL_ERROR_INVALID_CODE,
				     "chunk sums dispatch whose grid is not one work-item per chunk");
	/* Both factors are below 2^32: the product cannot overflow. */
	if (a->out > U64_MAX - run->items * 2 * sizeof(u64))
		return kfdsim_refuse(run, KFDSIM_AQL_ERROR_INVALID_CODE,
				     "built-in kernel with invalid arguments");
	run->main = a->src;
	run->wg_size = 1;
	run->wgs = run->items;
	return 0;
}

static int kfdsim_check_args(struct kfdsim_run *run)
{
	const union kfdsim_args *a = &run->args;
	bool ok = false;

	switch (run->op) {
	case KFDSIM_KERNEL_FILL_U32:
		ok = !a->fill.pad && kfdsim_array_ok(run, a->fill.dst);
		run->main = a->fill.dst;
		break;
	case KFDSIM_KERNEL_COPY_U32:
		ok = kfdsim_array_ok(run, a->copy.src) &&
		     kfdsim_array_ok(run, a->copy.dst);
		run->main = a->copy.dst;
		break;
	case KFDSIM_KERNEL_VADD_U32:
	case KFDSIM_KERNEL_VADD_F32:
		ok = kfdsim_array_ok(run, a->vadd.a) &&
		     kfdsim_array_ok(run, a->vadd.b) &&
		     kfdsim_array_ok(run, a->vadd.c);
		run->main = a->vadd.c;
		break;
	case KFDSIM_KERNEL_CHECKSUM:
		ok = kfdsim_array_ok(run, a->checksum.src) &&
		     IS_ALIGNED(a->checksum.result, sizeof(u64));
		run->main = a->checksum.src;
		break;
	case KFDSIM_KERNEL_LOOP:
		ok = !a->loop.pad && kfdsim_array_ok(run, a->loop.buf);
		run->main = a->loop.buf;
		run->steps = a->loop.steps;
		break;
	case KFDSIM_KERNEL_CHUNK_SUMS:
	case KFDSIM_KERNEL_CHUNK_XXH64:
	case KFDSIM_KERNEL_CHUNK_ZERO:
		return kfdsim_check_chunk_sums(run);
	}
	return ok ? 0 : kfdsim_refuse(run, KFDSIM_AQL_ERROR_INVALID_CODE,
				      "built-in kernel with invalid arguments");
}

/* Read and check the kernel descriptor and the kernel's arguments. */
static int kfdsim_read_kernel(struct kfdsim_run *run,
			      const struct kfdsim_aql_dispatch *pkt)
{
	struct kfdsim_kernel_descriptor desc;
	size_t size;
	int ret;

	if (!pkt->kernel_object)
		return kfdsim_refuse(run, KFDSIM_AQL_ERROR_INVALID_CODE,
				     "dispatch of a NULL kernel object");
	ret = kfdsim_vm_read(run->vm, pkt->kernel_object, &desc, sizeof(desc),
			     run->fault);
	if (ret)
		return ret;
	if (desc.magic != KFDSIM_KERNEL_MAGIC)
		return kfdsim_refuse(run, KFDSIM_AQL_ERROR_INVALID_CODE,
				     "kernel object is not a kfdsim built-in kernel (GPU machine code cannot run on kfdsim)");
	size = kfdsim_args_size(desc.opcode);
	if (desc.version != KFDSIM_KERNEL_VERSION || desc.pad || !size)
		return kfdsim_refuse(run, KFDSIM_AQL_ERROR_INVALID_CODE,
				     "kfdsim kernel descriptor of an unknown version or kernel");
	run->op = desc.opcode;

	ret = kfdsim_vm_read(run->vm, pkt->kernarg_address, &run->args, size,
			     run->fault);
	if (ret)
		return ret;
	return kfdsim_check_args(run);
}

/* kfdsim_vm_access() callbacks: @ptr maps the piece at GPU VA @va. */

static int kfdsim_fill_fn(void *ctx, void *ptr, size_t len, u64 va)
{
	const struct kfdsim_run *run = ctx;
	u32 value = run->args.fill.value;
	u32 *dst = ptr;
	size_t i;

	for (i = 0; i < len / KFDSIM_ELEM_SIZE; i++)
		dst[i] = value;
	return 0;
}

static int kfdsim_checksum_fn(void *ctx, void *ptr, size_t len, u64 va)
{
	struct kfdsim_run *run = ctx;
	u64 item = (va - run->args.checksum.src) / KFDSIM_ELEM_SIZE;
	const u32 *src = ptr;
	u64 sum = 0;
	size_t i;

	for (i = 0; i < len / KFDSIM_ELEM_SIZE; i++)
		sum += (u64)src[i] * (2 * (item + i) + 1);
	run->sum += sum;
	return 0;
}

static int kfdsim_chunk_sums_fn(void *ctx, void *ptr, size_t len, u64 va)
{
	struct kfdsim_run *run = ctx;
	const __le64 *src = ptr;
	u64 h = run->hash, bits = run->bits, w;
	size_t i;

	/* Pieces start and end on 8-byte boundaries: src and chunk are. */
	if (run->op == KFDSIM_KERNEL_CHUNK_ZERO) {
		for (i = 0; i < len / sizeof(u64) && !bits; i++)
			bits = le64_to_cpu(src[i]);
		run->bits = bits;
		return 0;
	}
	if (run->op == KFDSIM_KERNEL_CHUNK_XXH64) {
		for (i = 0; i < len / sizeof(u64); i++)
			bits |= le64_to_cpu(src[i]);
		run->bits = bits;
		return xxh64_update(&run->xxh, ptr, len) ? -EINVAL : 0;
	}
	for (i = 0; i < len / sizeof(u64); i++) {
		w = le64_to_cpu(src[i]);
		h = (h ^ w) * KFDSIM_FOLD64_MUL;
		h ^= h >> 29;
		bits |= w;
	}
	run->hash = h;
	run->bits = bits;
	return 0;
}

/* Finish chunk @c of @len bytes: its checksum and OR go to out[c]. */
static int kfdsim_chunk_sums_done(struct kfdsim_run *run, u64 c, u64 len)
{
	__le64 out[2];
	u64 h = run->hash ^ len;

	if (run->op == KFDSIM_KERNEL_CHUNK_ZERO) {
		h = 0;
	} else if (run->op == KFDSIM_KERNEL_CHUNK_XXH64) {
		h = xxh64_digest(&run->xxh);
	} else {
		h ^= h >> 31;
		h *= KFDSIM_FOLD64_FINAL_MUL;
		h ^= h >> 32;
		h *= KFDSIM_FOLD64_FINAL_MUL;
		h ^= h >> 32;
	}
	out[0] = cpu_to_le64(h);
	out[1] = cpu_to_le64(run->bits);
	return kfdsim_vm_write(run->vm, run->args.chunk_sums.out +
			       c * sizeof(out), out, sizeof(out), run->fault);
}

static int kfdsim_loop_fn(void *ctx, void *ptr, size_t len, u64 va)
{
	const struct kfdsim_run *run = ctx;
	u32 add = 1013904223 + run->step;
	u32 *buf = ptr;
	size_t i;

	for (i = 0; i < len / KFDSIM_ELEM_SIZE; i++)
		buf[i] = buf[i] * 1664525 + add;
	return 0;
}

static int kfdsim_copy_piece(struct kfdsim_run *run, u64 off, size_t len)
{
	const struct kfdsim_args_copy *args = &run->args.copy;
	int ret;

	ret = kfdsim_vm_read(run->vm, args->src + off, run->bounce[0], len,
			     run->fault);
	if (ret)
		return ret;
	return kfdsim_vm_write(run->vm, args->dst + off, run->bounce[0], len,
			       run->fault);
}

static int kfdsim_vadd_piece(struct kfdsim_run *run, u64 off, size_t len)
{
	const struct kfdsim_args_vadd *args = &run->args.vadd;
	u32 *a = run->bounce[0];
	const u32 *b = run->bounce[1];
	size_t i, n = len / KFDSIM_ELEM_SIZE;
	int ret;

	ret = kfdsim_vm_read(run->vm, args->a + off, a, len, run->fault);
	if (ret)
		return ret;
	ret = kfdsim_vm_read(run->vm, args->b + off, run->bounce[1], len,
			     run->fault);
	if (ret)
		return ret;

	if (run->op == KFDSIM_KERNEL_VADD_F32) {
		for (i = 0; i < n; i++)
			a[i] = kfdsim_f32_add(a[i], b[i]);
	} else {
		for (i = 0; i < n; i++)
			a[i] += b[i];
	}
	return kfdsim_vm_write(run->vm, args->c + off, a, len, run->fault);
}

/*
 * Run the elements at byte offsets [@off, @off + @len) of the arrays (for
 * the chunk sums kernel, those bytes of the source).
 */
static int kfdsim_run_piece(struct kfdsim_run *run, u64 off, size_t len)
{
	const union kfdsim_args *a = &run->args;

	switch (run->op) {
	case KFDSIM_KERNEL_FILL_U32:
		return kfdsim_vm_access(run->vm, a->fill.dst + off, len, true,
					kfdsim_fill_fn, run, run->fault);
	case KFDSIM_KERNEL_COPY_U32:
		return kfdsim_copy_piece(run, off, len);
	case KFDSIM_KERNEL_VADD_U32:
	case KFDSIM_KERNEL_VADD_F32:
		return kfdsim_vadd_piece(run, off, len);
	case KFDSIM_KERNEL_CHECKSUM:
		return kfdsim_vm_access(run->vm, a->checksum.src + off, len,
					false, kfdsim_checksum_fn, run,
					run->fault);
	case KFDSIM_KERNEL_LOOP:
		return kfdsim_vm_access(run->vm, a->loop.buf + off, len, true,
					kfdsim_loop_fn, run, run->fault);
	case KFDSIM_KERNEL_CHUNK_SUMS:
	case KFDSIM_KERNEL_CHUNK_XXH64:
	case KFDSIM_KERNEL_CHUNK_ZERO:
		return kfdsim_vm_access(run->vm, a->chunk_sums.src + off, len,
					false, kfdsim_chunk_sums_fn, run,
					run->fault);
	default:
		return -ENOEXEC;
	}
}

static int kfdsim_run_wg(struct kfdsim_run *run, u32 wg)
{
	const struct kfdsim_args_chunk_sums *cs = &run->args.chunk_sums;
	u64 first = (u64)wg * run->wg_size;
	u64 end = min(first + run->wg_size, run->items) * KFDSIM_ELEM_SIZE;
	u64 off = first * KFDSIM_ELEM_SIZE;
	size_t len;
	s64 old;
	int ret;

	/* A chunk sums "workgroup" is one work-item: chunk @wg. */
	if (kfdsim_chunk_op(run->op)) {
		off = (u64)wg * cs->chunk;
		end = min(off + cs->chunk, cs->size);
	}
	run->sum = 0;
	run->hash = KFDSIM_FOLD64_SEED;
	run->bits = 0;
	if (run->op == KFDSIM_KERNEL_CHUNK_XXH64)
		xxh64_reset(&run->xxh, 0);
	while (off < end) {
		/* The main array is 4-byte aligned, so @len is as well. */
		len = min_t(u64, end - off,
			    PAGE_SIZE - offset_in_page(run->main + off));
		ret = kfdsim_run_piece(run, off, len);
		if (ret)
			return ret;
		off += len;
		/* The zero test is done at a chunk's first non-zero word. */
		if (run->op == KFDSIM_KERNEL_CHUNK_ZERO && run->bits)
			break;
		cond_resched();
	}

	/* One atomic add per workgroup: a resumed checksum stays exact. */
	if (run->op == KFDSIM_KERNEL_CHECKSUM)
		return kfdsim_vm_atomic_add64(run->vm, run->args.checksum.result,
					      run->sum, &old, run->fault);
	if (kfdsim_chunk_op(run->op))
		return kfdsim_chunk_sums_done(run, wg,
					      end - (u64)wg * cs->chunk);
	return 0;
}

/**
 * kfdsim_kernel_run - run (or resume) a kernel dispatch
 * @vm: the address space of the queue's process on the queue's GPU
 * @pkt: the dispatch packet, already copied out of the ring
 * @prog: where the dispatch got to; all zero for a new dispatch
 * @deadline_ns: ktime_get_ns() time after which to stop at the next
 *               workgroup boundary; at least one workgroup always runs
 * @fault: filled on a GPU page fault
 * @err: filled when the dispatch cannot run
 *
 * The kernel descriptor and arguments are read again on every call.
 *
 * Return: 0 when the dispatch is complete; -EAGAIN at the deadline, with
 * @prog updated; -EFAULT on a GPU page fault, with @fault filled and the
 * writes before it done; -ENOEXEC for an invalid packet, descriptor or
 * arguments, with @err filled; -EINVAL if @prog lies outside the dispatch;
 * -ENOMEM.
 */
int kfdsim_kernel_run(struct kfdsim_vm *vm,
		      const struct kfdsim_aql_dispatch *pkt,
		      struct kfdsim_dispatch_progress *prog, u64 deadline_ns,
		      struct kfdsim_fault *fault,
		      struct kfdsim_dispatch_error *err)
{
	struct kfdsim_run run = {
		.vm = vm, .fault = fault, .err = err, .steps = 1,
	};
	bool ran = false;
	u32 step, wg;
	int ret;

	ret = kfdsim_geometry(&run, pkt);
	if (ret)
		return ret;
	ret = kfdsim_read_kernel(&run, pkt);
	if (ret)
		return ret;
	/* Progress is only ever saved at a point inside the dispatch. */
	if ((prog->iteration || prog->next_wg) &&
	    (prog->iteration >= run.steps || prog->next_wg >= run.wgs))
		return -EINVAL;

	run.bounce[0] = kfdsim_cp_should_fail() ? NULL :
			kmalloc(2 * PAGE_SIZE, GFP_KERNEL);
	if (!run.bounce[0])
		return -ENOMEM;
	run.bounce[1] = run.bounce[0] + PAGE_SIZE;

	wg = prog->next_wg;
	for (step = prog->iteration; step < run.steps; step++, wg = 0) {
		run.step = step;
		for (; wg < run.wgs; wg++) {
			if (ran && ktime_get_ns() >= deadline_ns) {
				prog->iteration = step;
				prog->next_wg = wg;
				ret = -EAGAIN;
				goto out;
			}
			ret = kfdsim_run_wg(&run, wg);
			if (ret)
				goto out;
			ran = true;
		}
	}
out:
	kfree(run.bounce[0]);
	return ret;
}
