// SPDX-License-Identifier: GPL-2.0
/*
 * A tiny GPU runtime for the kfdsim selftests (see kfdsim_gpu.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kfdsim_gpu.h"

/* ---- misc ---- */

uint64_t kg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void kg_sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void kg_sleep_us(unsigned int us)
{
	struct timespec ts = { .tv_nsec = (long)us * 1000 };

	nanosleep(&ts, NULL);
}

/* Poll @done(@arg) with a growing sleep until it holds or @timeout_ms. */
static int kg_poll(bool (*done)(const void *arg), const void *arg,
		   int timeout_ms)
{
	uint64_t end = kg_now_ms() + (uint64_t)timeout_ms;
	unsigned int us = 20;

	for (;;) {
		if (done(arg))
			return 0;
		if (kg_now_ms() > end)
			return done(arg) ? 0 : -ETIMEDOUT;
		kg_sleep_us(us);
		if (us < 2000)
			us *= 2;
	}
}

void kg_loop_affine(uint32_t first, uint32_t steps, uint32_t *a, uint32_t *b)
{
	uint32_t ma = 1, mb = 0, s;

	/* Apply x -> 1664525 x + 1013904223 + s after the map so far. */
	for (s = first; s < first + steps; s++) {
		ma *= 1664525u;
		mb = mb * 1664525u + 1013904223u + s;
	}
	*a = ma;
	*b = mb;
}

/* ---- runtime ---- */

int kg_open(struct kg_rt *rt)
{
	int ret;

	memset(rt, 0, sizeof(*rt));
	ret = kt_env_open(&rt->e, true);
	if (ret)
		return ret;
	kt_env_ids(&rt->e, rt->ids);
	rt->next_va = KG_VA_BASE;
	return 0;
}

void kg_close(struct kg_rt *rt)
{
	int i;

	for (i = 0; i < rt->e.ngpus; i++)
		if (rt->doorbells[i])
			munmap(rt->doorbells[i], KT_DOORBELL_SIZE);
	if (rt->sigpool.handle)
		kg_bo_free(rt, &rt->sigpool);
	kt_env_close(&rt->e);
}

/* ---- buffer objects ---- */

static uint64_t kg_round_up(uint64_t x, uint64_t align)
{
	return (x + align - 1) / align * align;
}

uint64_t kg_va_hole(struct kg_rt *rt)
{
	uint64_t va = rt->next_va + KG_VA_ALIGN;

	rt->next_va += 3 * KG_VA_ALIGN;
	return va;
}

int kg_bo_new(struct kg_rt *rt, int gpu, uint64_t size, uint32_t flags,
	      unsigned int opts, struct kg_bo *bo)
{
	uint64_t off = 0;
	int ret;

	memset(bo, 0, sizeof(*bo));
	bo->gpu = gpu;
	bo->size = kg_round_up(size, KT_PAGE);
	bo->va = rt->next_va;
	ret = kt_alloc(rt->e.kfd, rt->ids[gpu], bo->va, bo->size, flags,
		       &bo->handle, &off);
	if (ret)
		return ret;
	/* Leave an unmapped gap after every BO: overruns fault. */
	rt->next_va += kg_round_up(bo->size, KG_VA_ALIGN) + KG_VA_ALIGN;
	bo->mmap_offset = off;

	if (!(opts & KG_MAP_NONE)) {
		bo->map_all = opts & KG_MAP_ALL;
		ret = bo->map_all ?
			kt_map(rt->e.kfd, bo->handle, rt->ids, rt->e.ngpus) :
			kt_map(rt->e.kfd, bo->handle, &rt->ids[gpu], 1);
		if (ret)
			goto err_free;
		bo->mapped = true;
	}
	if (!(opts & KG_NO_CPU)) {
		bo->cpu = mmap(NULL, bo->size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, rt->e.render[gpu], (off_t)off);
		if (bo->cpu == MAP_FAILED) {
			ret = -errno;
			bo->cpu = NULL;
			goto err_free;
		}
	}
	return 0;

err_free:
	kg_bo_free(rt, bo);
	return ret;
}

int kg_bo_free(struct kg_rt *rt, struct kg_bo *bo)
{
	int ret = 0, r;

	if (!bo->handle)
		return 0;
	if (bo->cpu)
		munmap(bo->cpu, bo->size);
	bo->cpu = NULL;
	if (bo->mapped) {
		ret = bo->map_all ?
			kt_unmap(rt->e.kfd, bo->handle, rt->ids, rt->e.ngpus) :
			kt_unmap(rt->e.kfd, bo->handle, &rt->ids[bo->gpu], 1);
		bo->mapped = false;
	}
	r = kt_free(rt->e.kfd, bo->handle);
	bo->handle = 0;
	return ret ? ret : r;
}

/* ---- queues ---- */

static int kg_doorbells(struct kg_rt *rt, int gpu, uint64_t offset)
{
	void *p;

	if (rt->doorbells[gpu])
		return 0;
	p = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 rt->e.kfd, (off_t)(offset & ~(KT_DOORBELL_SIZE - 1)));
	if (p == MAP_FAILED)
		return -errno;
	rt->doorbells[gpu] = p;
	return 0;
}

static void kg_write_descriptors(struct kg_queue *q)
{
	struct kfdsim_kernel_descriptor *d;
	uint32_t op;

	for (op = KFDSIM_KERNEL_FILL_U32; op <= KG_KERNEL_LAST; op++) {
		d = (void *)((char *)q->ctl.cpu + KG_CTL_DESC(op));
		d->magic = KFDSIM_KERNEL_MAGIC;
		d->version = KFDSIM_KERNEL_VERSION;
		d->opcode = op;
		d->pad = 0;
	}
}

/* RSRC1: 64 VGPRs (granule 15), 32 SGPRs (granule 3), denormals kept. */
#define KG_KD_RSRC1	(15u | 3u << 6 | 3u << 16 | 3u << 18)
/* RSRC2: 4 user SGPRs (dispatch and kernarg pointers), TGID_X_EN. */
#define KG_KD_RSRC2	(4u << 1 | 1u << 7)
/* kernel_code_properties: dispatch ptr, kernarg segment ptr. */
#define KG_KD_PROPS	(1u << 1 | 1u << 3)

void kg_code_write(void *ctl)
{
	const uint32_t off[] = { kg_fill_u32_off, kg_copy_u32_off };
	struct kg_kd kd = {
		.kernarg_size = 16,
		.compute_pgm_rsrc1 = KG_KD_RSRC1,
		.compute_pgm_rsrc2 = KG_KD_RSRC2,
		.kernel_code_properties = KG_KD_PROPS,
	};
	uint32_t k;

	_Static_assert(KG_CODE_END - KG_CODE_FILL_U32 ==
		       sizeof(off) / sizeof(off[0]), "a kernel per kg_code");
	for (k = KG_CODE_FILL_U32; k < KG_CODE_END; k++) {
		kd.kernel_code_entry_byte_offset =
			KG_CTL_CODE + off[k - KG_CODE_FILL_U32] -
			KG_CTL_CODE_DESC(k);
		memcpy((char *)ctl + KG_CTL_CODE_DESC(k), &kd, sizeof(kd));
	}
	memcpy((char *)ctl + KG_CTL_CODE, kg_code, kg_code_size);
}

/* Fill @a for @q with its pointers at these offsets of its ctl BO. */
static void kg_queue_args_at(struct kg_queue *q,
			     struct kfd_ioctl_create_queue_args *a,
			     uint64_t rptr_off, uint64_t wptr_off)
{
	q->rptr = (uint64_t *)((char *)q->ctl.cpu + rptr_off);
	q->wptr = (uint64_t *)((char *)q->ctl.cpu + wptr_off);
	a->ring_base_address = q->ring.va;
	a->ring_size = q->ring_size;
	a->read_pointer_address = q->ctl.va + rptr_off;
	a->write_pointer_address = q->ctl.va + wptr_off;
	a->gpu_id = q->rt->ids[q->gpu];
	a->queue_type = q->type;
	a->queue_percentage = 100;
	a->queue_priority = 7;
}

void kg_queue_args(struct kg_queue *q, struct kfd_ioctl_create_queue_args *a)
{
	kg_queue_args_at(q, a, KG_CTL_RPTR, KG_CTL_WPTR);
}

/* A queue whose read and write pointers sit at these offsets of ctl. */
static int kg_queue_create_ctx(struct kg_rt *rt, int gpu, uint32_t type,
			       uint32_t ring_size, uint64_t rptr_off,
			       uint64_t wptr_off, uint64_t ctx_va,
			       uint32_t ctx_size, uint32_t ctl_stack_size,
			       struct kg_queue *q)
{
	struct kfd_ioctl_create_queue_args a = { 0 };
	bool aql = type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
	uint64_t ctl_size = KG_CTL_KERNARG;
	int ret;

	memset(q, 0, sizeof(*q));
	q->rt = rt;
	q->gpu = gpu;
	q->type = type;
	q->ring_size = ring_size;
	if (aql)
		ctl_size += (uint64_t)ring_size / KFDSIM_AQL_PACKET_SIZE * 64;

	ret = kg_bo_new(rt, gpu, ring_size, KT_GTT | KT_WRITABLE, KG_MAP_OWN,
			&q->ring);
	if (ret)
		return ret;
	ret = kg_bo_new(rt, gpu, ctl_size, KT_GTT | KT_WRITABLE, KG_MAP_OWN,
			&q->ctl);
	if (ret)
		goto err_ring;
	/* An AQL ring starts with every slot INVALID. */
	if (aql) {
		uint32_t i;

		for (i = 0; i < kg_aql_entries(q); i++)
			*(uint16_t *)kg_aql_slot(q, i) =
				KFDSIM_AQL_TYPE_INVALID;
		kg_write_descriptors(q);
		kg_code_write(q->ctl.cpu);
	}
	kg_queue_args_at(q, &a, rptr_off, wptr_off);
	a.ctx_save_restore_address = ctx_va;
	a.ctx_save_restore_size = ctx_size;
	a.ctl_stack_size = ctl_stack_size;
	ret = kt_ioctl(rt->e.kfd, AMDKFD_IOC_CREATE_QUEUE, &a);
	if (ret)
		goto err_ctl;
	q->id = a.queue_id;
	q->doorbell_offset = a.doorbell_offset;
	ret = kg_doorbells(rt, gpu, a.doorbell_offset);
	if (ret)
		goto err_queue;
	q->doorbell = (uint64_t *)((char *)rt->doorbells[gpu] +
				   (a.doorbell_offset &
				    (KT_DOORBELL_SIZE - 1)));
	return 0;

err_queue:
	{
		struct kfd_ioctl_destroy_queue_args d = { .queue_id = q->id };

		kt_ioctl(rt->e.kfd, AMDKFD_IOC_DESTROY_QUEUE, &d);
	}
err_ctl:
	kg_bo_free(rt, &q->ctl);
err_ring:
	kg_bo_free(rt, &q->ring);
	return ret;
}

static int kg_queue_create(struct kg_rt *rt, int gpu, uint32_t type,
			   uint32_t ring_size, uint64_t rptr_off,
			   uint64_t wptr_off, struct kg_queue *q)
{
	return kg_queue_create_ctx(rt, gpu, type, ring_size, rptr_off,
				   wptr_off, 0, 0, 0, q);
}

int kg_queue_new_ctx(struct kg_rt *rt, int gpu, uint32_t ring_size,
		     uint64_t ctx_va, uint32_t ctx_size,
		     uint32_t ctl_stack_size, struct kg_queue *q)
{
	return kg_queue_create_ctx(rt, gpu, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				   ring_size, KG_CTL_RPTR, KG_CTL_WPTR, ctx_va,
				   ctx_size, ctl_stack_size, q);
}

int kg_queue_new(struct kg_rt *rt, int gpu, uint32_t type,
		 uint32_t ring_size, struct kg_queue *q)
{
	return kg_queue_create(rt, gpu, type, ring_size, KG_CTL_RPTR,
			       KG_CTL_WPTR, q);
}

int kg_queue_new_amd(struct kg_rt *rt, int gpu, uint32_t ring_size,
		     struct kg_queue *q)
{
	const uint32_t off = KFDSIM_AMD_QUEUE_READ_DISPATCH_ID;
	int ret;

	ret = kg_queue_create(rt, gpu, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
			      ring_size, KFDSIM_AMD_QUEUE_READ_DISPATCH_ID,
			      KFDSIM_AMD_QUEUE_WRITE_DISPATCH_ID, q);
	if (!ret)
		memcpy((char *)q->ctl.cpu + off + 8, &off, sizeof(off));
	return ret;
}

int kg_queue_free(struct kg_queue *q)
{
	struct kfd_ioctl_destroy_queue_args d = { .queue_id = q->id };
	int ret;

	if (!q->rt)
		return 0;
	ret = kt_ioctl(q->rt->e.kfd, AMDKFD_IOC_DESTROY_QUEUE, &d);
	kg_bo_free(q->rt, &q->ctl);
	kg_bo_free(q->rt, &q->ring);
	q->rt = NULL;
	return ret;
}

uint64_t kg_queue_rptr(const struct kg_queue *q)
{
	return __atomic_load_n(q->rptr, __ATOMIC_ACQUIRE);
}

static bool kg_queue_idle(const void *arg)
{
	const struct kg_queue *q = arg;

	return kg_queue_rptr(q) == q->windex;
}

int kg_queue_wait_idle(struct kg_queue *q, int timeout_ms)
{
	return kg_poll(kg_queue_idle, q, timeout_ms);
}

/* ---- AQL ---- */

uint32_t kg_aql_entries(const struct kg_queue *q)
{
	return q->ring_size / KFDSIM_AQL_PACKET_SIZE;
}

void *kg_aql_slot(const struct kg_queue *q, uint64_t index)
{
	return (char *)q->ring.cpu +
	       (index % kg_aql_entries(q)) * KFDSIM_AQL_PACKET_SIZE;
}

static bool kg_aql_has_room(const void *arg)
{
	const struct kg_queue *q = arg;

	return q->windex - kg_queue_rptr(q) < kg_aql_entries(q);
}

int kg_aql_wait_room(struct kg_queue *q, int timeout_ms)
{
	return kg_poll(kg_aql_has_room, q, timeout_ms);
}

void kg_aql_write(struct kg_queue *q, const void *pkt, bool header)
{
	uint16_t *slot = kg_aql_slot(q, q->windex);

	__atomic_store_n(slot, KFDSIM_AQL_TYPE_INVALID, __ATOMIC_RELAXED);
	memcpy((char *)slot + 2, (const char *)pkt + 2,
	       KFDSIM_AQL_PACKET_SIZE - 2);
	if (header)
		kg_aql_publish(q, q->windex, *(const uint16_t *)pkt);
}

void kg_aql_publish(struct kg_queue *q, uint64_t index, uint16_t header)
{
	__atomic_store_n((uint16_t *)kg_aql_slot(q, index), header,
			 __ATOMIC_RELEASE);
}

void kg_aql_commit(struct kg_queue *q, unsigned int how)
{
	q->windex++;
	if (how & KG_RING_WPTR)
		__atomic_store_n(q->wptr, q->windex, __ATOMIC_RELEASE);
	if (how & KG_RING_DOORBELL)
		__atomic_store_n(q->doorbell, q->windex, __ATOMIC_RELEASE);
}

int kg_aql_submit(struct kg_queue *q, const void *pkt)
{
	int ret = kg_aql_wait_room(q, KG_TIMEOUT_MS);

	if (ret)
		return ret;
	kg_aql_write(q, pkt, true);
	kg_aql_commit(q, KG_RING_BOTH);
	return 0;
}

void kg_dispatch_packet(struct kg_queue *q, uint32_t op, const void *args,
			size_t args_size, uint32_t n, uint32_t wg,
			uint64_t sig_va, struct kfdsim_aql_dispatch *pkt)
{
	uint64_t slot = q->windex % kg_aql_entries(q);
	uint64_t karg = KG_CTL_KERNARG + slot * 64;

	memset((char *)q->ctl.cpu + karg, 0, 64);
	memcpy((char *)q->ctl.cpu + karg, args,
	       args_size < 64 ? args_size : 64);
	memset(pkt, 0, sizeof(*pkt));
	pkt->header = KG_AQL_HDR(KFDSIM_AQL_TYPE_KERNEL_DISPATCH);
	pkt->setup = 1;
	pkt->workgroup_size_x = (uint16_t)wg;
	pkt->workgroup_size_y = 1;
	pkt->workgroup_size_z = 1;
	pkt->grid_size_x = n;
	pkt->grid_size_y = 1;
	pkt->grid_size_z = 1;
	if (op >= KG_CODE_FILL_U32 && op < KG_CODE_END)
		pkt->kernel_object = q->ctl.va + KG_CTL_CODE_DESC(op);
	else
		pkt->kernel_object = op <= KG_KERNEL_LAST ?
				     q->ctl.va + KG_CTL_DESC(op) : 0;
	pkt->kernarg_address = q->ctl.va + karg;
	pkt->completion_signal = sig_va;
}

int kg_dispatch(struct kg_queue *q, uint32_t op, const void *args,
		size_t args_size, uint32_t n, uint32_t wg, uint64_t sig_va)
{
	struct kfdsim_aql_dispatch pkt;
	int ret = kg_aql_wait_room(q, KG_TIMEOUT_MS);

	if (ret)
		return ret;
	kg_dispatch_packet(q, op, args, args_size, n, wg, sig_va, &pkt);
	kg_aql_write(q, &pkt, true);
	kg_aql_commit(q, KG_RING_BOTH);
	return 0;
}

int kg_barrier(struct kg_queue *q, uint32_t type, const uint64_t *deps,
	       unsigned int ndeps, uint64_t sig_va)
{
	struct kfdsim_aql_barrier b = { 0 };
	unsigned int i;

	b.header = KG_AQL_HDR(type);
	for (i = 0; i < ndeps && i < 5; i++)
		b.dep_signal[i] = deps[i];
	b.completion_signal = sig_va;
	return kg_aql_submit(q, &b);
}

/* ---- signals ---- */

int kg_signal_new(struct kg_rt *rt, int64_t value, struct kg_signal *s)
{
	int ret;

	if (!rt->sigpool.handle) {
		ret = kg_bo_new(rt, 0, KG_SIGNALS_PER_POOL *
				sizeof(struct kfdsim_signal),
				KT_GTT | KT_WRITABLE, KG_MAP_ALL, &rt->sigpool);
		if (ret)
			return ret;
	}
	if (rt->nsignals == KG_SIGNALS_PER_POOL)
		return -ENOSPC;
	s->cpu = (struct kfdsim_signal *)rt->sigpool.cpu + rt->nsignals;
	s->va = rt->sigpool.va + rt->nsignals * sizeof(struct kfdsim_signal);
	rt->nsignals++;
	memset(s->cpu, 0, sizeof(*s->cpu));
	kg_signal_store(s, value);
	return 0;
}

void kg_signal_store(struct kg_signal *s, int64_t value)
{
	__atomic_store_n(&s->cpu->value, value, __ATOMIC_RELEASE);
}

int64_t kg_signal_load(const struct kg_signal *s)
{
	return __atomic_load_n(&s->cpu->value, __ATOMIC_ACQUIRE);
}

struct kg_sigwait {
	const struct kg_signal *s;
	int64_t value;
};

static bool kg_signal_reached(const void *arg)
{
	const struct kg_sigwait *w = arg;

	return kg_signal_load(w->s) == w->value;
}

int kg_signal_wait(const struct kg_signal *s, int64_t value, int timeout_ms)
{
	struct kg_sigwait w = { .s = s, .value = value };

	return kg_poll(kg_signal_reached, &w, timeout_ms);
}

/* ---- SDMA ---- */

struct kg_room {
	const struct kg_queue *q;
	uint64_t bytes;
};

static bool kg_sdma_has_room(const void *arg)
{
	const struct kg_room *r = arg;

	return r->q->windex + r->bytes - kg_queue_rptr(r->q) <=
	       r->q->ring_size;
}

int kg_sdma_write(struct kg_queue *q, const uint32_t *dw, uint32_t ndw)
{
	struct kg_room room = { .q = q, .bytes = (uint64_t)ndw * 4 };
	uint32_t i;
	int ret;

	if (!kg_sdma_has_room(&room)) {
		/* The engine only makes room for what was published. */
		kg_sdma_commit(q);
		ret = kg_poll(kg_sdma_has_room, &room, KG_TIMEOUT_MS);
		if (ret)
			return ret;
	}
	for (i = 0; i < ndw; i++) {
		uint32_t off = (uint32_t)((q->windex + 4ULL * i) &
					  (q->ring_size - 1));

		*(uint32_t *)((char *)q->ring.cpu + off) = dw[i];
	}
	q->windex += 4ULL * ndw;
	return 0;
}

void kg_sdma_commit(struct kg_queue *q)
{
	__atomic_store_n(q->wptr, q->windex, __ATOMIC_RELEASE);
	__atomic_store_n(q->doorbell, q->windex, __ATOMIC_RELEASE);
}

uint32_t kg_sdma_copy_packet(uint32_t *dw, uint64_t dst, uint64_t src,
			     uint32_t count)
{
	dw[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_COPY,
				   KFDSIM_SDMA_SUBOP_COPY_LINEAR);
	dw[1] = count;
	dw[2] = 0;
	dw[3] = (uint32_t)src;
	dw[4] = (uint32_t)(src >> 32);
	dw[5] = (uint32_t)dst;
	dw[6] = (uint32_t)(dst >> 32);
	return KFDSIM_SDMA_COPY_DWORDS;
}

uint32_t kg_sdma_fill_packet(uint32_t *dw, uint64_t dst, uint32_t value,
			     uint32_t count)
{
	dw[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_CONST_FILL, 0) |
		(uint32_t)KFDSIM_SDMA_FILL_SIZE_DWORD <<
			KFDSIM_SDMA_FILL_SIZE_SHIFT;
	dw[1] = (uint32_t)dst;
	dw[2] = (uint32_t)(dst >> 32);
	dw[3] = value;
	dw[4] = count;
	return KFDSIM_SDMA_FILL_DWORDS;
}

uint32_t kg_sdma_fence_packet(uint32_t *dw, uint64_t addr, uint32_t value)
{
	dw[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_FENCE, 0);
	dw[1] = (uint32_t)addr;
	dw[2] = (uint32_t)(addr >> 32);
	dw[3] = value;
	return KFDSIM_SDMA_FENCE_DWORDS;
}

uint32_t kg_sdma_trap_packet(uint32_t *dw, uint32_t event_id)
{
	dw[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_TRAP, 0);
	dw[1] = event_id;
	return KFDSIM_SDMA_TRAP_DWORDS;
}

uint32_t kg_sdma_pad(uint32_t *dw, uint32_t n)
{
	while (n % 8)
		dw[n++] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_NOP, 0);
	return n;
}

int kg_sdma_copy(struct kg_queue *q, uint64_t dst, uint64_t src,
		 uint64_t bytes, uint32_t chunk)
{
	uint32_t dw[KFDSIM_SDMA_COPY_DWORDS];
	uint64_t n;
	int ret;

	if (!chunk || chunk > KFDSIM_SDMA_COPY_MAX_BYTES)
		chunk = KFDSIM_SDMA_COPY_MAX_BYTES;
	while (bytes) {
		n = bytes < chunk ? bytes : chunk;
		kg_sdma_copy_packet(dw, dst, src, (uint32_t)(n - 1));
		ret = kg_sdma_write(q, dw, KFDSIM_SDMA_COPY_DWORDS);
		if (ret)
			return ret;
		src += n;
		dst += n;
		bytes -= n;
	}
	kg_sdma_commit(q);
	return 0;
}

int kg_sdma_fill(struct kg_queue *q, uint64_t dst, uint32_t value,
		 uint64_t bytes)
{
	uint32_t dw[KFDSIM_SDMA_FILL_DWORDS];
	uint64_t n;
	int ret;

	while (bytes) {
		n = bytes < KFDSIM_SDMA_FILL_MAX_BYTES ? bytes :
			KFDSIM_SDMA_FILL_MAX_BYTES;
		kg_sdma_fill_packet(dw, dst, value, (uint32_t)(n - 1));
		ret = kg_sdma_write(q, dw, KFDSIM_SDMA_FILL_DWORDS);
		if (ret)
			return ret;
		dst += n;
		bytes -= n;
	}
	kg_sdma_commit(q);
	return 0;
}

int kg_sdma_fence(struct kg_queue *q, uint64_t addr, uint32_t value)
{
	uint32_t dw[KFDSIM_SDMA_FENCE_DWORDS];
	int ret;

	kg_sdma_fence_packet(dw, addr, value);
	ret = kg_sdma_write(q, dw, KFDSIM_SDMA_FENCE_DWORDS);
	if (!ret)
		kg_sdma_commit(q);
	return ret;
}

int kg_sdma_trap(struct kg_queue *q, uint32_t event_id)
{
	uint32_t dw[KFDSIM_SDMA_TRAP_DWORDS];
	int ret;

	kg_sdma_trap_packet(dw, event_id & KFDSIM_SDMA_TRAP_EVENT_MASK);
	ret = kg_sdma_write(q, dw, KFDSIM_SDMA_TRAP_DWORDS);
	if (!ret)
		kg_sdma_commit(q);
	return ret;
}

int kg_sdma_nop(struct kg_queue *q, uint32_t extra)
{
	uint32_t dw[1 + 64] = { 0 };
	int ret;

	if (extra > 64)
		return -EINVAL;
	dw[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_NOP, 0) |
		extra << KFDSIM_SDMA_NOP_COUNT_SHIFT;
	ret = kg_sdma_write(q, dw, 1 + extra);
	if (!ret)
		kg_sdma_commit(q);
	return ret;
}

/* ---- events ---- */

int kg_event_new(int kfd, uint32_t type, bool auto_reset, uint64_t page,
		 struct kfd_ioctl_create_event_args *out)
{
	struct kfd_ioctl_create_event_args a = {
		.event_page_offset = page,
		.event_type = type,
		.auto_reset = auto_reset,
	};
	int ret = kt_ioctl(kfd, AMDKFD_IOC_CREATE_EVENT, &a);

	if (!ret && out)
		*out = a;
	return ret;
}

int kg_event_destroy(int kfd, uint32_t id)
{
	struct kfd_ioctl_destroy_event_args a = { .event_id = id };

	return kt_ioctl(kfd, AMDKFD_IOC_DESTROY_EVENT, &a);
}

int kg_event_set(int kfd, uint32_t id)
{
	struct kfd_ioctl_set_event_args a = { .event_id = id };

	return kt_ioctl(kfd, AMDKFD_IOC_SET_EVENT, &a);
}

int kg_event_reset(int kfd, uint32_t id)
{
	struct kfd_ioctl_reset_event_args a = { .event_id = id };

	return kt_ioctl(kfd, AMDKFD_IOC_RESET_EVENT, &a);
}

int kg_wait(int kfd, struct kfd_event_data *ev, uint32_t n, bool all,
	    uint32_t timeout_ms, uint32_t *result)
{
	struct kfd_ioctl_wait_events_args a = {
		.events_ptr = (uintptr_t)ev,
		.num_events = n,
		.wait_for_all = all,
		.timeout = timeout_ms,
		.wait_result = 0xdead,
	};
	int ret = kt_ioctl(kfd, AMDKFD_IOC_WAIT_EVENTS, &a);

	if (result)
		*result = a.wait_result;
	return ret;
}

int kg_wait1(int kfd, uint32_t id, uint32_t timeout_ms)
{
	struct kfd_event_data ev = { .event_id = id };
	uint32_t result;
	int ret = kg_wait(kfd, &ev, 1, false, timeout_ms, &result);

	return ret ? ret : (int)result;
}

/* ---- preemption and debugfs ---- */

static int kg_write_int(const char *path, int val)
{
	char buf[32];
	int fd, len, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%d\n", val);
	if (write(fd, buf, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

int kg_evict(pid_t pid)
{
	return kg_write_int(KG_EVICT, pid);
}

int kg_restore(pid_t pid)
{
	return kg_write_int(KG_RESTORE, pid);
}

int kg_cp_fail_nth_set(int n)
{
	return kg_write_int(KG_CP_FAIL_NTH, n);
}

int kg_cp_fail_nth_get(void)
{
	unsigned long long v;
	int ret = kt_read_ull(KG_CP_FAIL_NTH, &v);

	return ret ? ret : (int)v;
}

/* Read the queues file; call @fn per queue line of @pid. */
static int kg_queues_scan(pid_t pid, int (*fn)(const struct kg_qinfo *,
					       void *), void *arg)
{
	struct kg_qinfo qi;
	char line[256];
	FILE *f;
	int ret = 0;

	f = fopen(KG_QUEUES, "re");
	if (!f)
		return -errno;
	/* The first line is the column header. */
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EIO;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %d %u %u %" SCNu64 " %u %u %x %d",
			   &qi.gpu_id, &qi.pid, &qi.queue, &qi.type, &qi.rptr,
			   &qi.iteration, &qi.next_wg, &qi.flags,
			   &qi.evicted) != 9) {
			ret = -EPROTO;
			break;
		}
		if (qi.pid == pid)
			ret = fn(&qi, arg);
	}
	fclose(f);
	return ret;
}

struct kg_qfind {
	uint32_t queue;
	struct kg_qinfo *out;
};

static int kg_qfind_fn(const struct kg_qinfo *qi, void *arg)
{
	struct kg_qfind *f = arg;

	if (qi->queue != f->queue)
		return 0;
	*f->out = *qi;
	return 1;
}

int kg_qinfo(pid_t pid, uint32_t queue, struct kg_qinfo *qi)
{
	struct kg_qfind f = { .queue = queue, .out = qi };
	int ret = kg_queues_scan(pid, kg_qfind_fn, &f);

	if (ret < 0)
		return ret;
	return ret ? 0 : -ENOENT;
}

static int kg_qcount_fn(const struct kg_qinfo *qi, void *arg)
{
	(void)qi;
	(*(int *)arg)++;
	return 0;
}

int kg_qcount(pid_t pid)
{
	int n = 0, ret = kg_queues_scan(pid, kg_qcount_fn, &n);

	return ret < 0 ? ret : n;
}

int kg_cp_threads(pid_t owner, pid_t *pids, int max)
{
	char path[300], comm[64], *slash;
	struct dirent *d;
	DIR *dir;
	int n = 0, len;

	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((d = readdir(dir)) && n < max) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		len = kt_read_file(path, comm, sizeof(comm) - 1);
		if (len <= 0)
			continue;
		comm[len] = '\0';
		if (strncmp(comm, "kfdsim_w", 8))
			continue;
		slash = strchr(comm, '/');
		/* The name may be cut at 15 characters: no match then. */
		if (owner && (!slash || atoi(slash + 1) != owner))
			continue;
		pids[n++] = atoi(d->d_name);
	}
	closedir(dir);
	return n;
}

int kg_task_cpu_ns(pid_t pid, unsigned long long *ns)
{
	unsigned long long ticks;
	char path[64], buf[128];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	n = kt_read_file(path, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		if (sscanf(buf, "%llu", ns) == 1)
			return 0;
	}
	n = kg_task_ticks(pid, &ticks);
	if (n)
		return n;
	*ns = ticks * (1000000000ULL / (unsigned long long)sysconf(_SC_CLK_TCK));
	return 0;
}

int kg_task_ticks(pid_t pid, unsigned long long *ticks)
{
	char path[64], buf[1024], *p;
	unsigned long long utime, stime;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = kt_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	/* Skip "pid (comm)"; comm may hold spaces, so find the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EPROTO;
	/* Fields 3..13 come first; utime and stime are fields 14 and 15. */
	if (sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &utime, &stime) != 2)
		return -EPROTO;
	*ticks = utime + stime;
	return 0;
}

int kg_loop_steps_for(struct kg_rt *rt, int gpu, uint32_t n, uint32_t wg,
		      unsigned int ms, uint32_t *steps)
{
	struct kfdsim_args_loop args = { .steps = 2 };
	double rate = 0;	/* best steps per ms seen */
	struct kg_signal sig;
	struct kg_queue q;
	struct kg_bo buf;
	uint64_t t0, t = 0;
	int ret;

	ret = kg_bo_new(rt, gpu, 4ULL * n, KT_GTT | KT_WRITABLE, KG_NO_CPU,
			&buf);
	if (ret)
		return ret;
	ret = kg_queue_new(rt, gpu, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 1024, &q);
	if (ret)
		goto out_buf;
	args.buf = buf.va;
	/*
	 * Double the steps until a run takes 400 ms. A stall of the host
	 * only makes a run slower, so the fastest rate seen is the truth.
	 */
	while (!ret && t < 400 && args.steps < (1u << 30)) {
		args.steps *= 2;
		ret = kg_signal_new(rt, 1, &sig);
		if (ret)
			break;
		t0 = kg_now_ms();
		ret = kg_dispatch(&q, KFDSIM_KERNEL_LOOP, &args, sizeof(args),
				  n, wg, sig.va);
		if (!ret)
			ret = kg_signal_wait(&sig, 0, KG_TIMEOUT_MS);
		t = kg_now_ms() - t0;
		if (t >= 50 && (double)args.steps / (double)t > rate)
			rate = (double)args.steps / (double)t;
	}
	if (!ret) {
		double s = rate > 0 ? rate * ms : (double)args.steps;

		*steps = s < 1 ? 1 : s > (1u << 30) ? (1u << 30) : (uint32_t)s;
	}
	kg_queue_free(&q);
out_buf:
	kg_bo_free(rt, &buf);
	return ret;
}
