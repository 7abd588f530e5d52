// SPDX-License-Identifier: GPL-2.0
/*
 * The CRIU test workload and the checkpointer / restorer roles
 * (see criu_work.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criu_work.h"

#define CW_N		65536		/* loop elements (256 KiB) */
#define CW_WG		256
#define CW_SDMA_BYTES	(64 * 1024)
#define CW_FILL		0xc0ffee01u
#define CW_FENCE_OFF	(192 * 1024)	/* in CW_DST: two fences */
#define CW_FENCE1	0x1111u
#define CW_FENCE2	0x2222u
#define CW_UPTR_BASE	0x5f0000000000ULL
#define CW_WAIT_MS	(120000 * kt_timeout_scale())
#define CW_SLOT_MASK	(KT_DOORBELL_SIZE - 1)
/* The queue state flag of a queue stopped on an error (debugfs). */
#define KFDSIM_QSTATE_ERROR	0x1

/* Flags beyond the memory type must survive a restore too. */
#define CW_COPYBUF_FLAGS	(KT_GTT | KT_WRITABLE | \
				 KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | \
				 KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED)
/* Read-only for the GPU. */
#define CW_SPARE_FLAGS		(KT_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE | \
				 KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC | \
				 KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE)

/* Content seeds of the BOs the workload fills. */
#define CW_SEED_LOOP	0x1001
#define CW_SEED_SRC	0x2002
#define CW_SEED_SPARE	0x3003
#define CW_SEED_UPTR0	0x4004
#define CW_SEED_UPTR1	0x5005

#ifndef __noreturn
#define __noreturn	__attribute__((noreturn))
#endif

#define CW_FAIL(...) do {				\
	snprintf(msg, len, __VA_ARGS__);		\
	return -1;					\
} while (0)

/* A target's own handles on its workload. */
struct cw_view {
	int kfd;
	int render[CW_NGPUS];
	uint8_t *cpu[CW_NBOS];			/* VRAM/GTT CPU mappings */
	uint64_t *db[CW_NGPUS];			/* doorbell slices */
};

static const char *const cw_role_name[CW_NBOS] = {
	"aql-ring", "aql-ctl", "sdma-ring", "sdma-ctl", "idle-ring",
	"idle-ctl", "signals", "loopbuf", "copybuf", "dst", "src", "evpage",
	"spare", "uptr0", "uptr1", "doorbell",
};

struct cw_shared *cw_shared_new(void)
{
	void *p = mmap(NULL, sizeof(struct cw_shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int cw_counters_same(const struct kt_props *before, const char *what,
		     char *msg, size_t len)
{
	struct kt_props now;
	char err[128], diff[512];

	if (kt_counters(&now, err, sizeof(err)))
		CW_FAIL("%s: counters: %s", what, err);
	if (kt_counters_diff(before, &now, diff, sizeof(diff)))
		CW_FAIL("%s: counters changed: %s", what, diff);
	return 0;
}

int cw_qinfo(pid_t pid, const struct cw_layout *lay, int q,
	     struct kg_qinfo *qi)
{
	return kg_qinfo(pid, lay->q[q].id, qi);
}

static bool cw_has_slot(const struct cw_bo *b)
{
	return b->flags & (KT_VRAM | KT_GTT);
}

static int cw_role_of(const struct cw_layout *lay, uint64_t va)
{
	int r;

	for (r = 0; r < CW_NBOS; r++)
		if (lay->bo[r].va == va)
			return r;
	return -1;
}

static int cw_gpu_index(const struct cw_layout *lay, uint32_t gpu_id)
{
	uint32_t i;

	for (i = 0; i < lay->ngpus; i++)
		if (lay->gpu_id[i] == gpu_id)
			return (int)i;
	return -1;
}

/* ---- the workload ---- */

static void cw_rec(struct cw_layout *L, struct cw_view *v, int role,
		   const struct kg_bo *b, uint32_t flags, uint32_t mask,
		   uint32_t seed)
{
	L->bo[role] = (struct cw_bo){
		.handle = b->handle,
		.va = b->va,
		.size = b->size,
		.offset = b->mmap_offset,
		.flags = flags,
		.gpu = (uint32_t)b->gpu,
		.map_mask = mask,
		.seed = seed,
	};
	v->cpu[role] = b->cpu;
}

static void cw_rec_queue(struct cw_layout *L, struct cw_view *v, int qi,
			 const struct kg_queue *q, int ring, int ctl)
{
	uint32_t f = KT_GTT | KT_WRITABLE;

	cw_rec(L, v, ring, &q->ring, f, 1u << q->gpu, 0);
	cw_rec(L, v, ctl, &q->ctl, f, 1u << q->gpu, 0);
	L->q[qi] = (struct cw_queue){
		.id = q->id,
		.type = q->type,
		.gpu = (uint32_t)q->gpu,
		.ring_size = q->ring_size,
		.doorbell_offset = q->doorbell_offset,
		.ring = (uint32_t)ring,
		.ctl = (uint32_t)ctl,
		.windex = q->windex,
	};
}

/* A USERPTR BO over fresh user memory at a fixed address. */
static int cw_userptr(struct kg_rt *rt, struct cw_layout *L, int role,
		      int gpu, uint64_t addr, uint64_t size, uint32_t seed,
		      uint32_t mask, bool writable, char *msg, size_t len)
{
	uint32_t flags = KT_USERPTR | (writable ? KT_WRITABLE : 0);
	uint64_t off = addr, handle, va = kg_va_hole(rt);
	void *p;
	int ret;

	p = mmap((void *)(uintptr_t)addr, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)(uintptr_t)addr)
		CW_FAIL("mmap user memory at 0x%llx: %s",
			(unsigned long long)addr, strerror(errno));
	kt_fill(p, size, seed);
	ret = kt_alloc(rt->e.kfd, rt->ids[gpu], va, size, flags, &handle,
		       &off);
	if (ret)
		CW_FAIL("ALLOC userptr: %s", strerror(-ret));
	if (mask) {
		ret = kt_map(rt->e.kfd, handle, rt->ids, rt->e.ngpus);
		if (ret)
			CW_FAIL("MAP userptr: %s", strerror(-ret));
	}
	L->bo[role] = (struct cw_bo){
		.handle = handle, .va = va, .size = size, .offset = off,
		.flags = flags, .gpu = (uint32_t)gpu, .map_mask = mask,
		.seed = seed,
	};
	return 0;
}

static int cw_event(int kfd, struct cw_layout *L, int which, uint32_t type,
		    bool auto_reset, uint64_t page, char *msg, size_t len)
{
	struct kfd_ioctl_create_event_args ev;
	int ret = kg_event_new(kfd, type, auto_reset, page, &ev);

	if (ret)
		CW_FAIL("CREATE_EVENT %d: %s", which, strerror(-ret));
	L->ev[which] = ev.event_id;
	L->ev_type[which] = type;
	return 0;
}

/* Write an SDMA packet into the ring without publishing it. */
static int cw_sdma_put(struct kg_queue *q, const uint32_t *dw, uint32_t n)
{
	return kg_sdma_write(q, dw, n);
}

/* What the stopped queue passes as the CREATE_QUEUE-only fields. */
#define CW_EOP_OFF	0x1000		/* in its ctl BO */
#define CW_EOP_SIZE	0x800
#define CW_CTX_OFF	0x1800
#define CW_CTX_SIZE	0x13f1000	/* the gfx906 node's sizes (kfd_queue.c) */
#define CW_CTL_STACK	0x5000

/*
 * An AQL queue created with the context-save fields set, which only a
 * checkpoint reads back; filled in like kg_queue_new() does.
 */
static int cw_raw_queue(struct kg_rt *rt, int gpu, uint32_t ring_size,
			struct kg_queue *q)
{
	struct kfd_ioctl_create_queue_args a = { 0 };
	uint32_t i;
	void *db;
	int ret;

	memset(q, 0, sizeof(*q));
	q->rt = rt;
	q->gpu = gpu;
	q->type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
	q->ring_size = ring_size;
	ret = kg_bo_new(rt, gpu, ring_size, KT_GTT | KT_WRITABLE, KG_MAP_OWN,
			&q->ring);
	if (!ret)
		ret = kg_bo_new(rt, gpu, 2 * KT_PAGE, KT_GTT | KT_WRITABLE,
				KG_MAP_OWN, &q->ctl);
	if (ret)
		return ret;
	for (i = 0; i < ring_size / KFDSIM_AQL_PACKET_SIZE; i++)
		*(uint16_t *)((char *)q->ring.cpu +
			      i * KFDSIM_AQL_PACKET_SIZE) =
			KFDSIM_AQL_TYPE_INVALID;
	kg_queue_args(q, &a);
	a.eop_buffer_address = q->ctl.va + CW_EOP_OFF;
	a.eop_buffer_size = CW_EOP_SIZE;
	a.ctx_save_restore_address = q->ctl.va + CW_CTX_OFF;
	a.ctx_save_restore_size = CW_CTX_SIZE;
	a.ctl_stack_size = CW_CTL_STACK;
	ret = kt_ioctl(rt->e.kfd, AMDKFD_IOC_CREATE_QUEUE, &a);
	if (ret)
		return ret;
	q->id = a.queue_id;
	q->doorbell_offset = a.doorbell_offset;
	db = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		  rt->e.kfd, (off_t)(a.doorbell_offset & ~CW_SLOT_MASK));
	if (db == MAP_FAILED)
		return -errno;
	q->doorbell = (uint64_t *)((char *)db +
				   (a.doorbell_offset & CW_SLOT_MASK));
	return 0;
}

static int cw_build(struct kg_rt *rt, struct cw_layout *L, struct cw_view *v,
		    uint32_t steps, char *msg, size_t len)
{
	const uint32_t gtt = KT_GTT | KT_WRITABLE, vram = KT_VRAM | KT_WRITABLE;
	struct kg_queue qa, qs, qi;
	struct kg_signal sl, sc;
	struct kg_bo b[CW_NBOS];
	struct kfdsim_args_loop la;
	struct kfdsim_args_copy ca;
	struct kfdsim_aql_dispatch bad;
	uint64_t va, off, h;
	uint32_t *p, dw[KFDSIM_SDMA_COPY_DWORDS], i;
	int ret, g;

	memset(L, 0, sizeof(*L));
	memset(v, 0, sizeof(*v));
	ret = kg_open(rt);
	if (ret)
		CW_FAIL("kg_open: %s", strerror(-ret));
	if (rt->e.ngpus < CW_NGPUS)
		CW_FAIL("%d GPUs, the workload needs %d", rt->e.ngpus,
			CW_NGPUS);
	L->magic = CW_LAYOUT_MAGIC;
	L->ngpus = CW_NGPUS;
	L->kfd_fd = rt->e.kfd;
	L->pid = getpid();
	v->kfd = rt->e.kfd;
	for (g = 0; g < CW_NGPUS; g++) {
		L->gpu_id[g] = rt->ids[g];
		v->render[g] = rt->e.render[g];
	}
	L->n = CW_N;
	L->steps = steps;

	if (kg_queue_new(rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 4096, &qa) ||
	    kg_queue_new(rt, 1, KFD_IOC_QUEUE_TYPE_SDMA, 4096, &qs) ||
	    cw_raw_queue(rt, 1, 1024, &qi))
		CW_FAIL("queue creation failed");
	if (kg_signal_new(rt, 1, &sl) || kg_signal_new(rt, 1, &sc))
		CW_FAIL("signal creation failed");
	cw_rec(L, v, CW_SIGNALS, &rt->sigpool, gtt, 3, 0);
	if (kg_bo_new(rt, 0, 4 * CW_N, vram, KG_MAP_OWN, &b[CW_LOOPBUF]) ||
	    kg_bo_new(rt, 0, 4 * CW_N, CW_COPYBUF_FLAGS, KG_MAP_OWN,
		      &b[CW_COPYBUF]) ||
	    kg_bo_new(rt, 0, 256 * 1024, gtt, KG_MAP_ALL, &b[CW_DST]) ||
	    kg_bo_new(rt, 1, CW_SDMA_BYTES, vram, KG_MAP_ALL, &b[CW_SRC]) ||
	    kg_bo_new(rt, 0, 32 * 1024, gtt, KG_MAP_ALL, &b[CW_EVPAGE]) ||
	    kg_bo_new(rt, 1, 128 * 1024, CW_SPARE_FLAGS, KG_MAP_NONE,
		      &b[CW_SPARE]))
		CW_FAIL("BO creation failed");
	kt_fill(b[CW_LOOPBUF].cpu, 4 * CW_N, CW_SEED_LOOP);
	kt_fill(b[CW_SRC].cpu, CW_SDMA_BYTES, CW_SEED_SRC);
	kt_fill(b[CW_SPARE].cpu, 128 * 1024, CW_SEED_SPARE);
	cw_rec(L, v, CW_LOOPBUF, &b[CW_LOOPBUF], vram, 1, CW_SEED_LOOP);
	cw_rec(L, v, CW_COPYBUF, &b[CW_COPYBUF], CW_COPYBUF_FLAGS, 1, 0);
	cw_rec(L, v, CW_DST, &b[CW_DST], gtt, 3, 0);
	cw_rec(L, v, CW_SRC, &b[CW_SRC], vram, 3, CW_SEED_SRC);
	cw_rec(L, v, CW_EVPAGE, &b[CW_EVPAGE], gtt, 3, 0);
	cw_rec(L, v, CW_SPARE, &b[CW_SPARE], CW_SPARE_FLAGS, 0, CW_SEED_SPARE);
	if (cw_userptr(rt, L, CW_UPTR0, 0, CW_UPTR_BASE, 64 * 1024,
		       CW_SEED_UPTR0, 3, true, msg, len) ||
	    cw_userptr(rt, L, CW_UPTR1, 1, CW_UPTR_BASE + (16 << 20),
		       32 * 1024, CW_SEED_UPTR1, 0, false, msg, len))
		return -1;

	/* The doorbell BO ROCm maps for each GPU it uses. */
	va = kg_va_hole(rt);
	off = 0;
	ret = kt_alloc(rt->e.kfd, rt->ids[0], va, KT_DOORBELL_SIZE,
		       KT_DOORBELL | KT_WRITABLE, &h, &off);
	if (!ret)
		ret = kt_map(rt->e.kfd, h, &rt->ids[0], 1);
	if (ret)
		CW_FAIL("doorbell BO: %s", strerror(-ret));
	L->bo[CW_DOORBELL] = (struct cw_bo){
		.handle = h, .va = va, .size = KT_DOORBELL_SIZE, .offset = off,
		.flags = KT_DOORBELL | KT_WRITABLE, .gpu = 0, .map_mask = 1,
	};

	/* Events: the first signal event hands in the events page BO. */
	if (cw_event(rt->e.kfd, L, CW_EV_DONE, KFD_IOC_EVENT_SIGNAL, false,
		     L->bo[CW_EVPAGE].handle, msg, len) ||
	    cw_event(rt->e.kfd, L, CW_EV_SET, KFD_IOC_EVENT_SIGNAL, false, 0,
		     msg, len) ||
	    cw_event(rt->e.kfd, L, CW_EV_AUTO, KFD_IOC_EVENT_SIGNAL, true, 0,
		     msg, len) ||
	    cw_event(rt->e.kfd, L, CW_EV_MEM, KFD_IOC_EVENT_MEMORY, false, 0,
		     msg, len) ||
	    cw_event(rt->e.kfd, L, CW_EV_SDMA, KFD_IOC_EVENT_SIGNAL, true, 0,
		     msg, len))
		return -1;
	ret = kg_event_set(rt->e.kfd, L->ev[CW_EV_SET]);
	if (!ret)
		ret = kg_event_set(rt->e.kfd, L->ev[CW_EV_AUTO]);
	if (ret)
		CW_FAIL("SET_EVENT: %s", strerror(-ret));

	/* SDMA, published and run: copy src to dst, then overwrite src. */
	if (kg_sdma_copy(&qs, b[CW_DST].va, b[CW_SRC].va, CW_SDMA_BYTES, 0) ||
	    kg_sdma_fill(&qs, b[CW_SRC].va, CW_FILL, CW_SDMA_BYTES) ||
	    kg_sdma_fence(&qs, b[CW_DST].va + CW_FENCE_OFF, CW_FENCE1))
		CW_FAIL("SDMA submission failed");
	ret = kg_queue_wait_idle(&qs, CW_WAIT_MS);
	if (ret)
		CW_FAIL("SDMA did not finish: rptr %llu of %llu",
			(unsigned long long)kg_queue_rptr(&qs),
			(unsigned long long)qs.windex);
	p = (uint32_t *)b[CW_DST].cpu;
	if (!kt_check(p, CW_SDMA_BYTES, CW_SEED_SRC) ||
	    p[CW_FENCE_OFF / 4] != CW_FENCE1)
		CW_FAIL("SDMA copy before the checkpoint is wrong");
	L->sdma_done = qs.windex;
	/* Written, not published: the restored process rings for these. */
	kg_sdma_copy_packet(dw, b[CW_DST].va + CW_SDMA_BYTES,
			    L->bo[CW_UPTR0].va, CW_SDMA_BYTES - 1);
	ret = cw_sdma_put(&qs, dw, KFDSIM_SDMA_COPY_DWORDS);
	kg_sdma_fence_packet(dw, b[CW_DST].va + CW_FENCE_OFF + 8, CW_FENCE2);
	ret = ret ? ret : cw_sdma_put(&qs, dw, KFDSIM_SDMA_FENCE_DWORDS);
	kg_sdma_trap_packet(dw, L->ev[CW_EV_SDMA]);
	ret = ret ? ret : cw_sdma_put(&qs, dw, KFDSIM_SDMA_TRAP_DWORDS);
	if (ret)
		CW_FAIL("SDMA ring: %s", strerror(-ret));
	L->sdma_end = qs.windex;

	/* The loop, whose completion fires CW_EV_DONE, then a copy of it. */
	sl.cpu->event_mailbox_ptr = L->bo[CW_EVPAGE].va +
				    8ULL * L->ev[CW_EV_DONE];
	sl.cpu->event_id = L->ev[CW_EV_DONE];
	L->sig_loop = sl.va;
	L->sig_copy = sc.va;
	la = (struct kfdsim_args_loop){ .buf = b[CW_LOOPBUF].va,
					.steps = steps };
	ca = (struct kfdsim_args_copy){ .src = b[CW_LOOPBUF].va,
					.dst = b[CW_COPYBUF].va };
	/*
	 * The loop stays kfdsim's built-in: its length in steps is what the
	 * checkpoint interrupts, deterministically. The copy is gfx906 code
	 * (KG_CODE_COPY_U32). A checkpoint in the middle of a dispatch of
	 * machine code restarts the workgroup that was running (the engine
	 * does not save waves yet), so such a kernel must stay idempotent:
	 * each work-item writes only its own element, from values no
	 * work-item changes; no accumulating atomics.
	 */
	if (kg_dispatch(&qa, KFDSIM_KERNEL_LOOP, &la, sizeof(la), CW_N, CW_WG,
			sl.va) ||
	    kg_dispatch(&qa, KG_CODE_COPY_U32, &ca, sizeof(ca), CW_N,
			CW_WG, sc.va))
		CW_FAIL("dispatch failed");

	/* A queue stopped for good by a packet it cannot execute. */
	memset(&bad, 0, sizeof(bad));
	bad.header = KG_AQL_HDR(KFDSIM_AQL_TYPE_VENDOR_SPECIFIC);
	if (kg_aql_submit(&qi, &bad))
		CW_FAIL("bad packet");
	for (i = 0;; i++) {
		struct kg_qinfo info;

		if (kg_qinfo(getpid(), qi.id, &info))
			CW_FAIL("queue %u not in debugfs", qi.id);
		if (info.flags & KFDSIM_QSTATE_ERROR)
			break;
		if (i == (uint32_t)CW_WAIT_MS)
			CW_FAIL("queue %u does not stop on a bad packet", qi.id);
		kg_sleep_ms(1);
	}

	cw_rec_queue(L, v, CW_Q_LOOP, &qa, CW_AQL_RING, CW_AQL_CTL);
	cw_rec_queue(L, v, CW_Q_SDMA, &qs, CW_SDMA_RING, CW_SDMA_CTL);
	L->q[CW_Q_SDMA].windex = L->sdma_done;
	cw_rec_queue(L, v, CW_Q_IDLE, &qi, CW_IDLE_RING, CW_IDLE_CTL);
	for (i = 0; i < CW_NBOS; i++)
		if (!L->bo[i].handle)
			CW_FAIL("BO %s missing", cw_role_name[i]);
	return 0;
}

/* ---- a target's checks ---- */

/* The gpu_id a doorbell offset of GPU @g names in the process now. */
static uint32_t cw_doorbell_id(const struct cw_layout *L, uint32_t g)
{
	int q;

	for (q = 0; q < CW_NQUEUES; q++)
		if (L->q[q].gpu == g)
			return KFD_MMAP_GET_GPU_ID(L->q[q].doorbell_offset);
	return L->gpu_id[g];
}

static uint64_t *cw_doorbell(struct cw_view *v, const struct cw_layout *L,
			     int q, char *msg, size_t len)
{
	uint64_t off = L->q[q].doorbell_offset;
	uint32_t g = L->q[q].gpu;
	void *p;

	if (!v->db[g]) {
		p = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED, v->kfd, (off_t)(off & ~CW_SLOT_MASK));
		if (p == MAP_FAILED) {
			snprintf(msg, len, "mmap of the doorbells at 0x%llx: %s",
				 (unsigned long long)(off & ~CW_SLOT_MASK),
				 strerror(errno));
			return NULL;
		}
		v->db[g] = p;
	}
	return v->db[g] + (off & CW_SLOT_MASK) / 8;
}

/* The doorbells read back what the queues were last rung with. */
static int cw_check_doorbells(struct cw_view *v, const struct cw_layout *L,
			      char *msg, size_t len)
{
	volatile uint64_t *db;
	int q;

	for (q = 0; q < CW_NQUEUES; q++) {
		db = cw_doorbell(v, L, q, msg, len);
		if (!db)
			return -1;
		if (*db != L->q[q].windex)
			CW_FAIL("queue %u: doorbell reads %llu, was rung with %llu",
				L->q[q].id, (unsigned long long)*db,
				(unsigned long long)L->q[q].windex);
	}
	return 0;
}

static void *cw_sig(struct cw_view *v, const struct cw_layout *L,
		    uint64_t va)
{
	return v->cpu[CW_SIGNALS] + (va - L->bo[CW_SIGNALS].va);
}

static int cw_wait_u64(volatile uint64_t *p, uint64_t want, int ms)
{
	uint64_t end = kg_now_ms() + (uint64_t)ms;

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != want) {
		if (kg_now_ms() > end)
			return -ETIMEDOUT;
		kg_sleep_ms(1);
	}
	return 0;
}

/* The loop's result, computed on the CPU as if it had never stopped. */
static int cw_check_loop(const uint32_t *buf, const struct cw_layout *L,
			 const char *what, char *msg, size_t len)
{
	uint32_t *x0, a, b, i;

	x0 = malloc(4ULL * L->n);
	if (!x0)
		CW_FAIL("out of memory");
	kt_fill(x0, 4ULL * L->n, CW_SEED_LOOP);
	kg_loop_affine(0, L->steps, &a, &b);
	for (i = 0; i < L->n; i++) {
		if (buf[i] != x0[i] * a + b) {
			snprintf(msg, len, "%s[%u] = 0x%x, an uninterrupted run gives 0x%x",
				 what, i, buf[i], x0[i] * a + b);
			free(x0);
			return -1;
		}
	}
	free(x0);
	return 0;
}

static bool cw_all(const uint32_t *p, size_t n, uint32_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* A kg_queue over a workload queue, to submit to it from this process. */
static int cw_kg_queue(struct cw_view *v, const struct cw_layout *L, int q,
		       struct kg_queue *kq, char *msg, size_t len)
{
	const struct cw_queue *lq = &L->q[q];

	memset(kq, 0, sizeof(*kq));
	kq->gpu = (int)lq->gpu;
	kq->type = lq->type;
	kq->id = lq->id;
	kq->ring_size = lq->ring_size;
	kq->doorbell_offset = lq->doorbell_offset;
	kq->ring.cpu = v->cpu[lq->ring];
	kq->ring.va = L->bo[lq->ring].va;
	kq->ring.size = L->bo[lq->ring].size;
	kq->ctl.cpu = v->cpu[lq->ctl];
	kq->ctl.va = L->bo[lq->ctl].va;
	kq->ctl.size = L->bo[lq->ctl].size;
	kq->rptr = (uint64_t *)((char *)kq->ctl.cpu + KG_CTL_RPTR);
	kq->wptr = (uint64_t *)((char *)kq->ctl.cpu + KG_CTL_WPTR);
	kq->doorbell = cw_doorbell(v, L, q, msg, len);
	kq->windex = lq->windex;
	return kq->doorbell ? 0 : -1;
}

/*
 * Through the SDMA queue @a (ring at CW_DST + 128 KiB, on GPU 1), fill the
 * read-only CW_SPARE BO: the queue must stop on a write fault.
 */
static int cw_write_fault(struct cw_view *v, const struct cw_layout *L,
			  const struct kfd_ioctl_create_queue_args *a,
			  char *msg, size_t len)
{
	const struct cw_bo *sp = &L->bo[CW_SPARE];
	struct kfd_ioctl_create_event_args ce;
	struct kfd_event_data ev = { 0 };
	uint32_t *ring = (uint32_t *)(v->cpu[CW_DST] + 128 * 1024), result;
	volatile uint64_t *db;
	int ret;

	ret = kt_map(v->kfd, sp->handle, &L->gpu_id[sp->gpu], 1);
	if (ret)
		CW_FAIL("MAP of the read-only BO: %s", strerror(-ret));
	ret = kg_event_new(v->kfd, KFD_IOC_EVENT_MEMORY, false, 0, &ce);
	if (ret)
		CW_FAIL("CREATE_EVENT: %s", strerror(-ret));
	kg_sdma_fill_packet(ring, sp->va, 0xdead, KT_PAGE - 1);
	db = v->db[1] + (a->doorbell_offset & CW_SLOT_MASK) / 8;
	__atomic_store_n(db, KFDSIM_SDMA_FILL_DWORDS * 4, __ATOMIC_RELEASE);
	ev.event_id = ce.event_id;
	ret = kg_wait(v->kfd, &ev, 1, false, CW_WAIT_MS, &result);
	if (ret || result != KFD_IOC_WAIT_RESULT_COMPLETE)
		CW_FAIL("no memory event for a write to the read-only BO: %d %u",
			ret, result);
	if (ev.memory_exception_data.gpu_id != L->gpu_id[sp->gpu] ||
	    ev.memory_exception_data.va != sp->va ||
	    !ev.memory_exception_data.failure.ReadOnly)
		CW_FAIL("write fault: gpu_id %u va 0x%llx read-only %u; want gpu_id %u va 0x%llx",
			ev.memory_exception_data.gpu_id,
			(unsigned long long)ev.memory_exception_data.va,
			ev.memory_exception_data.failure.ReadOnly,
			L->gpu_id[sp->gpu], (unsigned long long)sp->va);
	if (!kt_check(v->cpu[CW_SPARE], sp->size, CW_SEED_SPARE))
		CW_FAIL("the GPU wrote to the read-only BO");
	ret = kt_unmap(v->kfd, sp->handle, &L->gpu_id[sp->gpu], 1);
	if (!ret)
		ret = kg_event_destroy(v->kfd, ce.event_id);
	if (ret)
		CW_FAIL("UNMAP / DESTROY_EVENT: %s", strerror(-ret));
	return 0;
}

/* ioctls other than the queues' own take the old gpu_ids and handles. */
static int cw_verify_ids(struct cw_view *v, const struct cw_layout *L,
			 char *msg, size_t len)
{
	struct kfd_ioctl_create_queue_args a = { 0 };
	struct kfd_ioctl_destroy_queue_args d = { 0 };
	struct kfd_event_data ev = { 0 };
	struct kfdsim_args_fill fa = { .dst = 0x10000000, .value = 1 };
	struct kfd_ioctl_create_event_args ce;
	struct kg_queue kq;
	uint64_t avail, slot, dst = L->bo[CW_DST].va;
	uint32_t i, result, *buf;
	int ret, fd, q;

	for (i = 0; i < L->ngpus; i++) {
		ret = kt_available(v->kfd, L->gpu_id[i], &avail);
		if (ret)
			CW_FAIL("AVAILABLE_MEMORY gpu_id %u: %s", L->gpu_id[i],
				strerror(-ret));
	}
	ret = kt_export(v->kfd, L->bo[CW_SRC].handle, O_RDWR | O_CLOEXEC, &fd);
	if (ret)
		CW_FAIL("EXPORT_DMABUF of handle 0x%llx: %s",
			(unsigned long long)L->bo[CW_SRC].handle,
			strerror(-ret));
	buf = malloc(CW_SDMA_BYTES);
	ret = buf ? kc_dmabuf_read(fd, buf, CW_SDMA_BYTES) : -ENOMEM;
	close(fd);
	if (ret || !cw_all(buf, CW_SDMA_BYTES / 4, CW_FILL)) {
		free(buf);
		CW_FAIL("contents of the exported src BO: %d", ret);
	}
	free(buf);

	/* A new queue: its doorbell offset names the device, not the GPU's
	 * old gpu_id (the same as the other queues' of that GPU).
	 */
	a.ring_base_address = dst + 128 * 1024;
	a.ring_size = 4096;
	a.write_pointer_address = dst + 240 * 1024;
	a.read_pointer_address = dst + 240 * 1024 + 8;
	a.gpu_id = L->gpu_id[1];
	a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA;
	a.queue_percentage = 100;
	ret = kt_ioctl(v->kfd, AMDKFD_IOC_CREATE_QUEUE, &a);
	if (ret)
		CW_FAIL("CREATE_QUEUE on gpu_id %u: %s", L->gpu_id[1],
			strerror(-ret));
	slot = (a.doorbell_offset & CW_SLOT_MASK) / 8;
	for (q = 0; q < CW_NQUEUES; q++)
		if (a.queue_id == L->q[q].id ||
		    (L->q[q].gpu == 1 &&
		     slot == (L->q[q].doorbell_offset & CW_SLOT_MASK) / 8))
			CW_FAIL("new queue %u slot %llu collides with queue %u",
				a.queue_id, (unsigned long long)slot,
				L->q[q].id);
	if ((a.doorbell_offset & KFD_MMAP_TYPE_MASK) != KFD_MMAP_TYPE_DOORBELL ||
	    KFD_MMAP_GET_GPU_ID(a.doorbell_offset) != cw_doorbell_id(L, 1))
		CW_FAIL("new queue's doorbell offset 0x%llx, gpu_id %u wanted",
			(unsigned long long)a.doorbell_offset,
			cw_doorbell_id(L, 1));
	/*
	 * Have it write to the read-only BO: a write fault (the restored GPU
	 * mapping kept the BO's permissions), reported with the old gpu_id.
	 */
	if (cw_write_fault(v, L, &a, msg, len))
		return -1;
	d.queue_id = a.queue_id;
	ret = kt_ioctl(v->kfd, AMDKFD_IOC_DESTROY_QUEUE, &d);
	if (ret)
		CW_FAIL("DESTROY_QUEUE of the new queue: %s", strerror(-ret));

	/* A GPU page fault names the old gpu_id in the memory event. */
	if (cw_kg_queue(v, L, CW_Q_LOOP, &kq, msg, len))
		return -1;
	/* A fresh memory event: the workload's one fired already. */
	ret = kg_event_new(v->kfd, KFD_IOC_EVENT_MEMORY, false, 0, &ce);
	if (ret)
		CW_FAIL("CREATE_EVENT: %s", strerror(-ret));
	ret = kg_dispatch(&kq, KFDSIM_KERNEL_FILL_U32, &fa, sizeof(fa), 64, 64,
			  0);
	if (ret)
		CW_FAIL("dispatch: %s", strerror(-ret));
	ev.event_id = ce.event_id;
	ret = kg_wait(v->kfd, &ev, 1, false, CW_WAIT_MS, &result);
	if (ret || result != KFD_IOC_WAIT_RESULT_COMPLETE)
		CW_FAIL("memory event after a GPU fault: %d, result %u", ret,
			result);
	if (ev.memory_exception_data.gpu_id != L->gpu_id[0] ||
	    ev.memory_exception_data.va != fa.dst ||
	    !ev.memory_exception_data.failure.NotPresent)
		CW_FAIL("memory event: gpu_id %u va 0x%llx; want gpu_id %u va 0x%llx",
			ev.memory_exception_data.gpu_id,
			(unsigned long long)ev.memory_exception_data.va,
			L->gpu_id[0], (unsigned long long)fa.dst);
	return 0;
}

/* BOs a queue reads or writes: its ring, its pointers, the signals. */
static bool cw_queue_bo(uint32_t role)
{
	return role == CW_SIGNALS || role == CW_AQL_RING ||
	       role == CW_AQL_CTL || role == CW_SDMA_RING ||
	       role == CW_SDMA_CTL || role == CW_IDLE_RING ||
	       role == CW_IDLE_CTL;
}

static int cw_free(struct cw_view *v, const struct cw_layout *L,
		   uint32_t role)
{
	if (v->cpu[role]) {
		munmap(v->cpu[role], L->bo[role].size);
		v->cpu[role] = NULL;
	}
	return kt_free(v->kfd, L->bo[role].handle);
}

/*
 * Let everything finish and check every result, then use every id the
 * process had: handles, gpu_ids, queue ids, event ids.
 */
static int cw_verify(struct cw_view *v, const struct cw_layout *L,
		     char *msg, size_t len)
{
	struct kfd_process_device_apertures ap[KT_MAX_GPUS];
	struct kfd_ioctl_get_process_apertures_new_args aa = { 0 };
	volatile uint64_t *db, *sdma_ctl;
	const struct cw_bo *bo;
	struct kfdsim_signal *s;
	uint32_t *dst, i;
	uint64_t h;
	int ret, q;

	if (cw_check_doorbells(v, L, msg, len))
		return -1;

	/* The loop completes, fires its event and signal, then the copy. */
	ret = kg_wait1(v->kfd, L->ev[CW_EV_DONE], CW_WAIT_MS);
	if (ret != KFD_IOC_WAIT_RESULT_COMPLETE) {
		struct kg_qinfo qi = { 0 };

		/* Where the loop stands tells a stall from a slow guest. */
		if (cw_qinfo(getpid(), L, CW_Q_LOOP, &qi))
			CW_FAIL("loop completion event %u: %d (loop queue %u not in debugfs)",
				L->ev[CW_EV_DONE], ret, L->q[CW_Q_LOOP].id);
		CW_FAIL("loop completion event %u: %d (loop queue %u: rptr %llu step %u wg %u flags %#x evicted %d)",
			L->ev[CW_EV_DONE], ret, L->q[CW_Q_LOOP].id,
			(unsigned long long)qi.rptr, qi.iteration, qi.next_wg,
			qi.flags, qi.evicted);
	}
	s = cw_sig(v, L, L->sig_loop);
	if (cw_wait_u64((uint64_t *)&s->value, 0, CW_WAIT_MS))
		CW_FAIL("loop signal is %lld after its event",
			(long long)s->value);
	s = cw_sig(v, L, L->sig_copy);
	if (cw_wait_u64((uint64_t *)&s->value, 0, CW_WAIT_MS))
		CW_FAIL("copy signal stuck at %lld", (long long)s->value);
	if (cw_check_loop((uint32_t *)v->cpu[CW_LOOPBUF], L, "loopbuf", msg,
			  len) ||
	    cw_check_loop((uint32_t *)v->cpu[CW_COPYBUF], L, "copybuf", msg,
			  len))
		return -1;
	{
		struct kg_qinfo info;

		if (cw_qinfo(getpid(), L, CW_Q_IDLE, &info) ||
		    !(info.flags & KFDSIM_QSTATE_ERROR) || info.rptr)
			CW_FAIL("the stopped queue %u is not stopped any more",
				L->q[CW_Q_IDLE].id);
	}
	if (*(volatile uint64_t *)v->cpu[CW_AQL_CTL] != 2)
		CW_FAIL("AQL read pointer %llu, want 2",
			(unsigned long long)*(uint64_t *)v->cpu[CW_AQL_CTL]);

	/* Publish the SDMA packets written before the checkpoint. */
	sdma_ctl = (uint64_t *)v->cpu[CW_SDMA_CTL];
	db = cw_doorbell(v, L, CW_Q_SDMA, msg, len);
	if (!db)
		return -1;
	__atomic_store_n(&sdma_ctl[1], L->sdma_end, __ATOMIC_RELEASE);
	__atomic_store_n(db, L->sdma_end, __ATOMIC_RELEASE);
	ret = kg_wait1(v->kfd, L->ev[CW_EV_SDMA], CW_WAIT_MS);
	if (ret != KFD_IOC_WAIT_RESULT_COMPLETE)
		CW_FAIL("SDMA trap event %u: %d (SDMA rptr %llu of %llu)",
			L->ev[CW_EV_SDMA], ret,
			(unsigned long long)sdma_ctl[0],
			(unsigned long long)L->sdma_end);
	if (cw_wait_u64(&sdma_ctl[0], L->sdma_end, CW_WAIT_MS))
		CW_FAIL("SDMA rptr %llu, want %llu",
			(unsigned long long)sdma_ctl[0],
			(unsigned long long)L->sdma_end);
	dst = (uint32_t *)v->cpu[CW_DST];
	if (!kt_check(dst, CW_SDMA_BYTES, CW_SEED_SRC))
		CW_FAIL("dst[0..64K) no longer holds the copy done before the checkpoint (SDMA packets replayed?)");
	if (!kt_check(dst + CW_SDMA_BYTES / 4, CW_SDMA_BYTES, CW_SEED_UPTR0))
		CW_FAIL("SDMA copy from the userptr BO is wrong (not the restored user memory?)");
	if (dst[CW_FENCE_OFF / 4] != CW_FENCE1 ||
	    dst[CW_FENCE_OFF / 4 + 2] != CW_FENCE2)
		CW_FAIL("fences 0x%x 0x%x", dst[CW_FENCE_OFF / 4],
			dst[CW_FENCE_OFF / 4 + 2]);
	if (!cw_all((uint32_t *)v->cpu[CW_SRC], CW_SDMA_BYTES / 4, CW_FILL))
		CW_FAIL("src is not the SDMA fill value");
	if (!kt_check((void *)(uintptr_t)L->bo[CW_UPTR0].offset,
		      L->bo[CW_UPTR0].size, CW_SEED_UPTR0) ||
	    !kt_check((void *)(uintptr_t)L->bo[CW_UPTR1].offset,
		      L->bo[CW_UPTR1].size, CW_SEED_UPTR1))
		CW_FAIL("user memory changed");
	if (!kt_check(v->cpu[CW_SPARE], L->bo[CW_SPARE].size, CW_SEED_SPARE))
		CW_FAIL("the unmapped VRAM BO lost its contents");

	/* Event states: manual-reset events stay signaled. */
	if (kg_wait1(v->kfd, L->ev[CW_EV_SET], 0) !=
	    KFD_IOC_WAIT_RESULT_COMPLETE ||
	    kg_wait1(v->kfd, L->ev[CW_EV_SET], 0) !=
	    KFD_IOC_WAIT_RESULT_COMPLETE)
		CW_FAIL("event %u set before the checkpoint is not signaled",
			L->ev[CW_EV_SET]);
	if (kg_wait1(v->kfd, L->ev[CW_EV_DONE], 0) !=
	    KFD_IOC_WAIT_RESULT_COMPLETE)
		CW_FAIL("manual-reset event %u did not stay signaled",
			L->ev[CW_EV_DONE]);
	if (kg_wait1(v->kfd, L->ev[CW_EV_AUTO], 0) !=
	    KFD_IOC_WAIT_RESULT_COMPLETE ||
	    kg_wait1(v->kfd, L->ev[CW_EV_AUTO], 0) !=
	    KFD_IOC_WAIT_RESULT_TIMEOUT)
		CW_FAIL("auto-reset event %u, set before the checkpoint: not signaled once",
			L->ev[CW_EV_AUTO]);
	if (kg_wait1(v->kfd, L->ev[CW_EV_MEM], 0) !=
	    KFD_IOC_WAIT_RESULT_TIMEOUT ||
	    kg_wait1(v->kfd, L->ev[CW_EV_SDMA], 0) !=
	    KFD_IOC_WAIT_RESULT_TIMEOUT)
		CW_FAIL("an unsignaled event is signaled");

	if (cw_verify_ids(v, L, msg, len))
		return -1;

	/* Handles and gpu_ids are still the ones the process knows. */
	bo = &L->bo[CW_SPARE];
	ret = kt_map(v->kfd, bo->handle, &L->gpu_id[bo->gpu], 1);
	if (!ret)
		ret = kt_unmap(v->kfd, bo->handle, &L->gpu_id[bo->gpu], 1);
	if (ret)
		CW_FAIL("MAP/UNMAP of handle 0x%llx on gpu %u: %s",
			(unsigned long long)bo->handle, L->gpu_id[bo->gpu],
			strerror(-ret));
	ret = kt_free(v->kfd, L->bo[CW_EVPAGE].handle);
	if (ret != -EPERM)
		CW_FAIL("FREE of the events page BO: %d, want -EPERM", ret);
	/* Free what no queue uses; the rest after the queues are gone. */
	for (i = 0; i < CW_NBOS; i++) {
		if (i == CW_EVPAGE || cw_queue_bo(i))
			continue;
		ret = cw_free(v, L, i);
		if (ret)
			CW_FAIL("FREE %s (handle 0x%llx): %s",
				cw_role_name[i],
				(unsigned long long)L->bo[i].handle,
				strerror(-ret));
	}
	aa.kfd_process_device_apertures_ptr = (uintptr_t)ap;
	aa.num_of_nodes = KT_MAX_GPUS;
	ret = kt_ioctl(v->kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &aa);
	if (ret || aa.num_of_nodes != L->ngpus)
		CW_FAIL("apertures: %d, %u nodes", ret, aa.num_of_nodes);
	for (i = 0; i < L->ngpus; i++)
		if (cw_gpu_index(L, ap[i].gpu_id) < 0 ||
		    (i && ap[i].gpu_id == ap[0].gpu_id))
			CW_FAIL("aperture %u has gpu_id %u, the process knows %u and %u",
				i, ap[i].gpu_id, L->gpu_id[0], L->gpu_id[1]);
	for (i = 0; i < L->ngpus; i++) {
		ret = kt_alloc(v->kfd, L->gpu_id[i], KT_VA(i), KT_PAGE,
			       KT_GTT | KT_WRITABLE, &h, NULL);
		if (ret)
			CW_FAIL("ALLOC on gpu_id %u: %s", L->gpu_id[i],
				strerror(-ret));
		if (h >> 32 != L->gpu_id[i])
			CW_FAIL("new handle 0x%llx on gpu_id %u",
				(unsigned long long)h, L->gpu_id[i]);
		kt_free(v->kfd, h);
	}
	for (q = 0; q < CW_NQUEUES; q++) {
		struct kfd_ioctl_destroy_queue_args d = {
			.queue_id = L->q[q].id,
		};

		ret = kt_ioctl(v->kfd, AMDKFD_IOC_DESTROY_QUEUE, &d);
		if (ret)
			CW_FAIL("DESTROY_QUEUE %u: %s", L->q[q].id,
				strerror(-ret));
	}
	for (i = 0; i < CW_NBOS; i++) {
		if (!cw_queue_bo(i))
			continue;
		ret = cw_free(v, L, i);
		if (ret)
			CW_FAIL("FREE %s: %s", cw_role_name[i], strerror(-ret));
	}
	for (q = 0; q < CW_NEVENTS; q++) {
		ret = kg_event_destroy(v->kfd, L->ev[q]);
		if (ret)
			CW_FAIL("DESTROY_EVENT %u: %s", L->ev[q],
				strerror(-ret));
	}
	return 0;
}

/* ---- targets ---- */

static int cw_reply(int sock, struct cw_shared *sh, int ret)
{
	char c = ret ? CW_REPLY_FAIL : CW_REPLY_OK;

	sh->status = ret;
	return write(sock, &c, 1) == 1 ? 0 : -1;
}

/* Obey commands until told to quit or the socket closes. */
static void __noreturn
cw_target_loop(int sock, struct cw_shared *sh, struct cw_view *v,
	       const struct cw_layout *L, const struct cw_image *img)
{
	char c;
	int ret;

	while (read(sock, &c, 1) == 1) {
		switch (c) {
		case CW_CMD_FINISH:
			ret = cw_verify(v, L, sh->msg, sizeof(sh->msg));
			break;
		case CW_CMD_RESUMED:
			ret = 0;
			break;
		case CW_CMD_ALLOC:
			ret = kt_alloc(v->kfd, L->gpu_id[0], KT_VA(7), KT_PAGE,
				       KT_GTT | KT_WRITABLE, NULL, NULL);
			if (ret)
				snprintf(sh->msg, sizeof(sh->msg), "ALLOC: %s",
					 strerror(-ret));
			break;
		case CW_CMD_UPTR:
			ret = img ? cw_map_userptrs(img, false, sh->msg,
						    sizeof(sh->msg)) : -1;
			break;
		case CW_CMD_QUIT:
			_exit(0);
		default:
			snprintf(sh->msg, sizeof(sh->msg), "bad command %c", c);
			ret = -1;
		}
		if (cw_reply(sock, sh, ret))
			_exit(2);
	}
	_exit(0);
}

static int cw_fork(struct cw_target *t, struct cw_shared *sh, int *child_sock)
{
	int sv[2];

	memset(t, 0, sizeof(*t));
	t->sock = -1;
	t->sh = sh;
	sh->msg[0] = '\0';
	sh->status = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	t->pid = fork();
	if (t->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (!t->pid) {
		close(sv[0]);
		*child_sock = sv[1];
		return 0;
	}
	close(sv[1]);
	t->sock = sv[0];
	return 0;
}

static int cw_wait_reply(struct cw_target *t, char *msg, size_t len)
{
	char c;

	if (read(t->sock, &c, 1) != 1) {
		snprintf(msg, len, "target %d died: %s", t->pid, t->sh->msg);
		return -1;
	}
	if (c != CW_REPLY_OK) {
		snprintf(msg, len, "%s", t->sh->msg);
		return -1;
	}
	return 0;
}

int cw_start_worker(struct cw_target *t, struct cw_shared *sh,
		    uint32_t steps, char *msg, size_t len)
{
	struct cw_view v;
	struct kg_rt rt;
	int sock, ret;

	ret = cw_fork(t, sh, &sock);
	if (ret)
		CW_FAIL("fork: %s", strerror(-ret));
	if (!t->pid) {
		ret = cw_build(&rt, &sh->lay, &v, steps, sh->msg,
			       sizeof(sh->msg));
		if (cw_reply(sock, sh, ret) || ret)
			_exit(1);
		cw_target_loop(sock, sh, &v, &sh->lay, NULL);
	}
	return cw_wait_reply(t, msg, len);
}

int cw_command(struct cw_target *t, char cmd, char *msg, size_t len)
{
	if (write(t->sock, &cmd, 1) != 1)
		CW_FAIL("command %c: %s", cmd, strerror(errno));
	return cw_wait_reply(t, msg, len);
}

void cw_kill(struct cw_target *t)
{
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, __WALL);
	}
	if (t->sock >= 0)
		close(t->sock);
	t->pid = 0;
	t->sock = -1;
}

int cw_quit(struct cw_target *t, char *msg, size_t len)
{
	char c = CW_CMD_QUIT;
	int status;

	if (write(t->sock, &c, 1) != 1) {
		cw_kill(t);
		CW_FAIL("quit: %s", strerror(errno));
	}
	close(t->sock);
	t->sock = -1;
	if (waitpid(t->pid, &status, __WALL) != t->pid)
		CW_FAIL("waitpid: %s", strerror(errno));
	t->pid = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		CW_FAIL("target exit status 0x%x", status);
	return 0;
}

/* ---- restoring ---- */

int cw_devices(const struct cw_image *img,
	       struct kfd_criu_device_bucket *dev, char *msg, size_t len)
{
	return cw_devices_ex(img, dev, false, msg, len);
}

int cw_devices_ex(const struct cw_image *img,
		  struct kfd_criu_device_bucket *dev, bool swap, char *msg,
		  size_t len)
{
	struct kt_gpu gpus[KT_MAX_GPUS];
	uint32_t i, j;
	int n, fd;

	n = kt_gpus(gpus, KT_MAX_GPUS);
	if (n < 0)
		CW_FAIL("topology: %s", strerror(-n));
	for (i = 0; i < img->k.num_devices; i++) {
		/* The same position in the topology as on the old node. */
		for (j = 0; j < img->node.ngpus; j++)
			if (img->node.ids[j] == img->k.devices[i].actual_gpu_id)
				break;
		if (j == img->node.ngpus || (int)j >= n)
			CW_FAIL("no GPU here for gpu_id %u",
				img->k.devices[i].actual_gpu_id);
		if (swap)
			j = (uint32_t)n - 1 - j;
		fd = kt_open_render(gpus[j].render_minor);
		if (fd < 0)
			CW_FAIL("open renderD%d: %s", gpus[j].render_minor,
				strerror(-fd));
		dev[i] = (struct kfd_criu_device_bucket){
			.user_gpu_id = img->k.devices[i].user_gpu_id,
			.actual_gpu_id = gpus[j].gpu_id,
			.drm_fd = (uint32_t)fd,
		};
	}
	return 0;
}

void cw_devices_close(const struct cw_image *img,
		      struct kfd_criu_device_bucket *dev)
{
	uint32_t i;

	for (i = 0; i < img->k.num_devices; i++)
		close((int)dev[i].drm_fd);
}

int cw_map_userptrs(const struct cw_image *img, bool late, char *msg,
		    size_t len)
{
	const struct kfd_criu_bo_bucket *b;
	void *want, *p;
	uint32_t i;

	for (i = 0; i < img->k.num_bos; i++) {
		b = &img->k.bos[i];
		if (!(b->alloc_flags & KT_USERPTR))
			continue;
		if (late && b->addr != img->lay.bo[CW_UPTR0].va)
			continue;
		want = (void *)(uintptr_t)b->offset;
		p = mmap(want, b->size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
		if (p == MAP_FAILED && errno == EEXIST && !late)
			continue;	/* back already */
		if (p != want)
			CW_FAIL("mmap user memory at %p: %s", want,
				strerror(errno));
		if (img->k.data[i])
			memcpy(p, img->k.data[i], b->size);
	}
	return 0;
}

/* The gpu_id of the device RESTORE put the process's GPU @user_id on. */
static uint32_t cw_actual_id(const struct cw_image *img,
			     const struct kfd_criu_device_bucket *dev,
			     uint32_t user_id)
{
	uint32_t i;

	for (i = 0; i < img->k.num_devices; i++)
		if (dev[i].user_gpu_id == user_id)
			return dev[i].actual_gpu_id;
	return 0;
}

/*
 * What CRIU and its plugin do for the process's /dev/kfd mappings: a
 * doorbell offset names the device by its own gpu_id, so after a restore
 * onto other devices the mappings move to the offsets of the new ones.
 */
static void cw_move_doorbells(const struct cw_image *img,
			      const struct kfd_criu_device_bucket *dev,
			      struct cw_layout *L)
{
	uint64_t off;
	int q;

	for (q = 0; q < CW_NQUEUES; q++) {
		off = L->q[q].doorbell_offset & ~KFD_MMAP_GPU_ID_MASK;
		L->q[q].doorbell_offset = off | KFD_MMAP_GPU_ID(
			cw_actual_id(img, dev, L->gpu_id[L->q[q].gpu]));
	}
}

/* Check what RESTORE returned and write the contents back. */
static int cw_restore_fill(const struct cw_image *img,
			   const struct kfd_criu_device_bucket *dev,
			   struct kfd_criu_bo_bucket *bos, struct cw_layout *L,
			   char *msg, size_t len)
{
	const struct kfd_criu_bo_bucket *in;
	uint32_t i, user_id;
	int r, ret;

	for (i = 0; i < img->k.num_bos; i++) {
		in = &img->k.bos[i];
		r = cw_role_of(L, in->addr);
		if (r < 0)
			CW_FAIL("bucket %u: no BO at 0x%llx", i,
				(unsigned long long)in->addr);
		user_id = L->gpu_id[L->bo[r].gpu];
		if (bos[i].addr != in->addr || bos[i].size != in->size ||
		    bos[i].gpu_id != in->gpu_id ||
		    bos[i].alloc_flags != in->alloc_flags)
			CW_FAIL("RESTORE changed the inputs of bucket %u", i);
		if (!kc_bo_has_dmabuf(in)) {
			/* Doorbells: the device's own gpu_id, as upstream. */
			uint64_t want = in->alloc_flags & KT_USERPTR ?
				in->offset :
				KFD_MMAP_TYPE_DOORBELL |
				KFD_MMAP_GPU_ID(cw_actual_id(img, dev, user_id));

			if (bos[i].dmabuf_fd != KC_INVALID_FD)
				CW_FAIL("%s: dmabuf_fd %u, want none",
					cw_role_name[r], bos[i].dmabuf_fd);
			if (bos[i].restored_offset != want)
				CW_FAIL("%s: restored_offset 0x%llx, want 0x%llx",
					cw_role_name[r],
					(unsigned long long)bos[i].restored_offset,
					(unsigned long long)want);
			L->bo[r].offset = bos[i].restored_offset;
			continue;
		}
		if (bos[i].dmabuf_fd == KC_INVALID_FD ||
		    fcntl((int)bos[i].dmabuf_fd, F_GETFD) != FD_CLOEXEC)
			CW_FAIL("%s: no dma-buf fd, or not close-on-exec (%d)",
				cw_role_name[r], (int)bos[i].dmabuf_fd);
		if (bos[i].restored_offset & KFD_MMAP_TYPE_MASK ||
		    !bos[i].restored_offset)
			CW_FAIL("%s: restored_offset 0x%llx", cw_role_name[r],
				(unsigned long long)bos[i].restored_offset);
		if (!img->k.data[i])
			CW_FAIL("%s: no contents in the image", cw_role_name[r]);
		ret = kc_dmabuf_write((int)bos[i].dmabuf_fd, img->k.data[i],
				      in->size);
		if (ret)
			CW_FAIL("%s: writing through the dma-buf: %s",
				cw_role_name[r], strerror(-ret));
		L->bo[r].offset = bos[i].restored_offset;
	}
	return 0;
}

/* The state of a restored process before RESUME. */
static int cw_check_restored(struct cw_view *v, const struct cw_image *img,
			     const struct cw_layout *L, bool late_uptr,
			     char *msg, size_t len)
{
	struct kg_qinfo qi, q0;
	const uint8_t *want;
	uint32_t i;
	int r, q;

	/* Every BO holds what the checkpoint saw. */
	for (i = 0; i < img->k.num_bos; i++) {
		r = cw_role_of(L, img->k.bos[i].addr);
		want = img->k.data[i];
		if (!want)
			continue;
		if (kc_bo_has_dmabuf(&img->k.bos[i])) {
			if (memcmp(v->cpu[r], want, L->bo[r].size))
				CW_FAIL("%s: contents differ from the checkpoint",
					cw_role_name[r]);
		} else if (!(late_uptr && r == CW_UPTR1) &&
			   memcmp((void *)(uintptr_t)L->bo[r].offset, want,
				  L->bo[r].size)) {
			CW_FAIL("%s: user memory differs", cw_role_name[r]);
		}
	}
	/* The queues are back with their saved state, and do not run. */
	for (q = 0; q < CW_NQUEUES; q++) {
		if (cw_qinfo(getpid(), L, q, &qi))
			CW_FAIL("queue %u is not in debugfs", L->q[q].id);
		if (!qi.evicted || qi.rptr != img->qs[q].rptr ||
		    qi.iteration != img->qs[q].iteration ||
		    qi.next_wg != img->qs[q].next_wg ||
		    qi.flags != img->qs[q].flags || qi.type != L->q[q].type)
			CW_FAIL("queue %u: evicted %d rptr %llu it %u wg %u flags %x; checkpoint: rptr %llu it %u wg %u flags %x",
				L->q[q].id, qi.evicted,
				(unsigned long long)qi.rptr, qi.iteration,
				qi.next_wg, qi.flags,
				(unsigned long long)img->qs[q].rptr,
				img->qs[q].iteration, img->qs[q].next_wg,
				img->qs[q].flags);
	}
	cw_qinfo(getpid(), L, CW_Q_LOOP, &q0);
	kg_sleep_ms(100);
	cw_qinfo(getpid(), L, CW_Q_LOOP, &qi);
	if (qi.rptr != q0.rptr || qi.iteration != q0.iteration ||
	    qi.next_wg != q0.next_wg)
		CW_FAIL("the loop queue ran before RESUME");
	for (i = 0; i < img->k.num_bos; i++)
		if (img->k.bos[i].addr == L->bo[CW_LOOPBUF].va &&
		    memcmp(v->cpu[CW_LOOPBUF], img->k.data[i],
			   L->bo[CW_LOOPBUF].size))
			CW_FAIL("the loop buffer changed before RESUME");
	return cw_check_doorbells(v, L, msg, len);
}

/* In the restored process: everything up to the point RESUME is due. */
static int cw_restore_proc(struct cw_shared *sh, const struct cw_image *img,
			   unsigned int flags, struct cw_view *v,
			   struct cw_layout *L, char *msg, size_t len)
{
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	struct kfd_criu_bo_bucket *bos;
	struct kt_props before;
	char err[128];
	int ret, fds, n, left, points, g;
	uint32_t i;

	memset(v, 0, sizeof(*v));
	*L = img->lay;
	if (cw_map_userptrs(img, flags & CW_R_LATE_UPTR, msg, len))
		return -1;
	v->kfd = kt_open_kfd();
	if (v->kfd < 0)
		CW_FAIL("open /dev/kfd: %s", strerror(-v->kfd));
	if (cw_devices_ex(img, dev, flags & CW_R_SWAP, msg, len))
		return -1;
	for (i = 0; i < img->k.num_devices; i++) {
		g = cw_gpu_index(L, dev[i].user_gpu_id);
		if (g < 0)
			CW_FAIL("device bucket %u: gpu_id %u unknown", i,
				dev[i].user_gpu_id);
		v->render[g] = (int)dev[i].drm_fd;
	}
	bos = calloc(img->k.num_bos + 1, sizeof(*bos));
	if (!bos)
		CW_FAIL("out of memory");
	if (kt_counters(&before, err, sizeof(err)))
		CW_FAIL("counters: %s", err);
	fds = kc_count_fds();

	/* Fail each injection point in turn; each failure must be clean. */
	for (n = 1; flags & CW_R_SWEEP; n++) {
		if (n > 1000)
			CW_FAIL("RESTORE still failing after 1000 injections");
		kc_fail_nth_set(n);
		ret = kc_restore(v->kfd, &img->k, dev, bos);
		if (kc_fail_nth_done(&left, &points))
			CW_FAIL("reading %s", KC_FAIL_POINTS);
		if (!ret) {
			if (!left)
				CW_FAIL("RESTORE succeeded although injection point %d failed",
					n);
			if (points != n - 1)
				CW_FAIL("RESTORE passed %d injection points, %d expected",
					points, n - 1);
			sh->points = n - 1;
			break;
		}
		if (left)
			CW_FAIL("RESTORE failed (%s) without an injected failure (point %d)",
				strerror(-ret), n);
		if (points != n)
			CW_FAIL("RESTORE went on after its injection point %d failed (%d points)",
				n, points);
		if (kc_count_fds() != fds)
			CW_FAIL("RESTORE failure at point %d left %d fds behind",
				n, kc_count_fds() - fds);
		if (cw_counters_same(&before, "failed RESTORE", msg, len)) {
			snprintf(msg + strlen(msg), len - strlen(msg),
				 " (injection point %d, %s)", n,
				 strerror(-ret));
			return -1;
		}
	}
	if (!(flags & CW_R_SWEEP)) {
		ret = kc_restore(v->kfd, &img->k, dev, bos);
		if (ret)
			CW_FAIL("RESTORE: %s", strerror(-ret));
	}
	if (cw_restore_fill(img, dev, bos, L, msg, len))
		return -1;
	cw_move_doorbells(img, dev, L);
	kc_close_dmabufs(bos, img->k.num_bos);
	free(bos);
	if (kc_count_fds() != fds)
		CW_FAIL("RESTORE left %d more fds than its dma-bufs",
			kc_count_fds() - fds);
	L->kfd_fd = v->kfd;
	L->pid = getpid();
	if (flags & CW_R_EXIT)
		return 0;

	for (i = 0; i < CW_NBOS; i++) {
		void *p;

		if (!cw_has_slot(&L->bo[i]))
			continue;
		p = mmap(NULL, L->bo[i].size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, v->render[L->bo[i].gpu],
			 (off_t)L->bo[i].offset);
		if (p == MAP_FAILED)
			CW_FAIL("mmap %s at restored offset 0x%llx: %s",
				cw_role_name[i],
				(unsigned long long)L->bo[i].offset,
				strerror(errno));
		v->cpu[i] = p;
	}
	return cw_check_restored(v, img, L, flags & CW_R_LATE_UPTR, msg, len);
}

int cw_start_restored(struct cw_target *t, struct cw_shared *sh,
		      const struct cw_image *img, unsigned int flags,
		      char *msg, size_t len)
{
	struct cw_layout L;
	struct cw_view v;
	int sock, ret;

	ret = cw_fork(t, sh, &sock);
	if (ret)
		CW_FAIL("fork: %s", strerror(-ret));
	if (!t->pid) {
		ret = cw_restore_proc(sh, img, flags, &v, &L, sh->msg,
				      sizeof(sh->msg));
		if (!ret)
			sh->lay = L;
		if (cw_reply(sock, sh, ret) || ret || (flags & CW_R_EXIT))
			_exit(ret ? 1 : 0);
		cw_target_loop(sock, sh, &v, &sh->lay, img);
	}
	return cw_wait_reply(t, msg, len);
}

int cw_resumed(struct cw_target *t, char *msg, size_t len)
{
	return cw_command(t, CW_CMD_RESUMED, msg, len);
}

/* ---- checkpointing ---- */

int cw_send_resume(pid_t pid, char *msg, size_t len)
{
	int fd, ret;

	fd = kt_open_kfd();
	if (fd < 0)
		CW_FAIL("open /dev/kfd: %s", strerror(-fd));
	ret = kc_resume(fd, pid);
	if (ret) {
		close(fd);
		CW_FAIL("RESUME %d: %s", pid, strerror(-ret));
	}
	ret = kc_resume(fd, pid);
	close(fd);
	if (ret != -EINVAL)
		CW_FAIL("second RESUME %d: %d, want -EINVAL", pid, ret);
	return 0;
}

static int cw_check_buckets(const struct cw_image *img,
			    const struct cw_layout *L, char *msg, size_t len)
{
	const struct kfd_criu_bo_bucket *b;
	const struct cw_bo *bo;
	uint32_t seen = 0, i;
	int r;

	/* Each GPU of the process once, each on a GPU of this node. */
	for (i = 0; i < img->k.num_devices; i++) {
		const struct kfd_criu_device_bucket *d = &img->k.devices[i];
		uint32_t j, found = 0;

		for (j = 0; j < img->node.ngpus; j++)
			found += d->actual_gpu_id == img->node.ids[j];
		for (j = 0; j < i; j++)
			if (img->k.devices[j].user_gpu_id == d->user_gpu_id ||
			    img->k.devices[j].actual_gpu_id == d->actual_gpu_id)
				found = 0;
		if (cw_gpu_index(L, d->user_gpu_id) < 0 || found != 1 || d->pad)
			CW_FAIL("device bucket %u: user %u actual %u pad %u",
				i, d->user_gpu_id, d->actual_gpu_id, d->pad);
	}
	for (i = 0; i < img->k.num_bos; i++) {
		b = &img->k.bos[i];
		r = cw_role_of(L, b->addr);
		if (r < 0 || seen & (1u << r))
			CW_FAIL("BO bucket %u: address 0x%llx unknown or twice",
				i, (unsigned long long)b->addr);
		seen |= 1u << r;
		bo = &L->bo[r];
		if (b->size != bo->size || b->alloc_flags != bo->flags ||
		    b->gpu_id != L->gpu_id[bo->gpu] || b->offset != bo->offset ||
		    b->pad)
			CW_FAIL("%s: size 0x%llx flags 0x%x gpu %u offset 0x%llx; want 0x%llx 0x%x %u 0x%llx",
				cw_role_name[r], (unsigned long long)b->size,
				b->alloc_flags, b->gpu_id,
				(unsigned long long)b->offset,
				(unsigned long long)bo->size, bo->flags,
				L->gpu_id[bo->gpu],
				(unsigned long long)bo->offset);
		if (kc_bo_has_dmabuf(b) ?
		    b->dmabuf_fd == KC_INVALID_FD ||
		    fcntl((int)b->dmabuf_fd, F_GETFD) != FD_CLOEXEC :
		    b->dmabuf_fd != KC_INVALID_FD)
			CW_FAIL("%s: dmabuf_fd %d (want a close-on-exec fd for VRAM/GTT, else none)",
				cw_role_name[r], (int)b->dmabuf_fd);
	}
	return 0;
}

int cw_check_priv(const struct cw_image *img, const struct cw_layout *L,
		  char *msg, size_t len)
{
	const struct kc_hdr *h = (const void *)img->k.priv;
	const struct kc_proc_v1 *proc;
	const struct kc_dev_v1 *dev;
	const struct kc_queue_v1 *q;
	const struct kc_cwsr_v2 *cs;
	const struct kc_event_v1 *ev;
	const struct kc_bo_v1 *bo;
	const struct cw_bo *lb;
	uint32_t nobj = 1 + img->k.num_devices + img->k.num_bos +
			CW_NQUEUES + CW_NEVENTS;
	uint32_t i, j, type, size, idx = 0, mask, prev = 0;
	bool loop_done = img->qs[CW_Q_LOOP].rptr >= 1;
	uint64_t want;
	void *p;
	int r;

	if (img->k.priv_size < sizeof(*h))
		CW_FAIL("private data of %llu bytes",
			(unsigned long long)img->k.priv_size);
	if (h->magic != KC_MAGIC || h->version != KC_VERSION ||
	    h->size != img->k.priv_size || h->pad || h->num_objects != nobj)
		CW_FAIL("header: magic 0x%x version %u size %llu pad %u objects %u; want version 2, %llu bytes, %u objects",
			h->magic, h->version, (unsigned long long)h->size,
			h->pad, h->num_objects,
			(unsigned long long)img->k.priv_size, nobj);
	/* Version 1 and 2 order: PROCESS, DEVICEs, BOs, QUEUEs, EVENTs. */
	for (i = 0; i < nobj; i++) {
		uint32_t want_type = i == 0 ? KC_OBJ_PROCESS :
			i <= img->k.num_devices ? KC_OBJ_DEVICE :
			i <= img->k.num_devices + img->k.num_bos ? KC_OBJ_BO :
			i <= img->k.num_devices + img->k.num_bos + CW_NQUEUES ?
			KC_OBJ_QUEUE : KC_OBJ_EVENT;

		static const uint32_t want_size[] = {
			[KC_OBJ_PROCESS] = sizeof(struct kc_proc_v1),
			[KC_OBJ_DEVICE] = sizeof(struct kc_dev_v1),
			[KC_OBJ_BO] = sizeof(struct kc_bo_v1),
			/* No saved waves: no control stack bytes. */
			[KC_OBJ_QUEUE] = sizeof(struct kc_queue_v1) +
					 sizeof(struct kc_cwsr_v2),
			[KC_OBJ_EVENT] = sizeof(struct kc_event_v1),
		};

		p = kc_priv_object(&img->k, i, &type, &size);
		if (!p || type != want_type || size != want_size[type])
			CW_FAIL("object %u: type %u size %u, want type %u size %u",
				i, p ? type : 0, p ? size : 0, want_type,
				want_size[want_type]);
	}
	proc = kc_priv_object(&img->k, idx++, &type, &size);
	if (size != sizeof(*proc) ||
	    proc->num_devices != img->k.num_devices ||
	    proc->num_bos != img->k.num_bos ||
	    proc->num_queues != CW_NQUEUES || proc->num_events != CW_NEVENTS ||
	    proc->events_page != L->bo[CW_EVPAGE].handle || proc->flags ||
	    proc->pad)
		CW_FAIL("process object: %u devices %u bos %u queues %u events page 0x%llx",
			proc->num_devices, proc->num_bos, proc->num_queues,
			proc->num_events,
			(unsigned long long)proc->events_page);
	for (i = 0; i < img->k.num_devices; i++) {
		dev = kc_priv_object(&img->k, idx++, &type, &size);
		if (dev->user_gpu_id != img->k.devices[i].user_gpu_id ||
		    dev->pad)
			CW_FAIL("device object %u: gpu_id %u", i,
				dev->user_gpu_id);
	}
	for (i = 0; i < img->k.num_bos; i++) {
		bo = kc_priv_object(&img->k, idx++, &type, &size);
		r = cw_role_of(L, img->k.bos[i].addr);
		lb = &L->bo[r];
		want = ((uint64_t)img->k.bos[i].gpu_id << 32) | bo->id;
		if (want != lb->handle)
			CW_FAIL("%s: handle 0x%llx from the checkpoint, the process has 0x%llx",
				cw_role_name[r], (unsigned long long)want,
				(unsigned long long)lb->handle);
		mask = 0;
		for (j = 0; j < img->k.num_devices; j++)
			if (bo->mapped & (1u << j))
				mask |= 1u << cw_gpu_index(L,
					img->k.devices[j].user_gpu_id);
		if (mask != lb->map_mask || bo->mapped >> img->k.num_devices)
			CW_FAIL("%s: mapped 0x%x, want GPUs 0x%x",
				cw_role_name[r], bo->mapped, lb->map_mask);
		if (bo->user_addr != (lb->flags & KT_USERPTR ? lb->offset : 0))
			CW_FAIL("%s: user_addr 0x%llx", cw_role_name[r],
				(unsigned long long)bo->user_addr);
	}
	for (i = 0; i < CW_NQUEUES; i++) {
		const struct cw_queue *lq = NULL;

		q = kc_priv_object(&img->k, idx++, &type, &size);
		for (j = 0; j < CW_NQUEUES; j++)
			if (L->q[j].id == q->id)
				lq = &L->q[j];
		if (!lq)
			CW_FAIL("queue object %u: unknown id %u", i, q->id);
		j = (uint32_t)(lq - L->q);
		if (q->type != lq->type || q->user_gpu_id != L->gpu_id[lq->gpu] ||
		    q->doorbell != (lq->doorbell_offset & CW_SLOT_MASK) / 8 ||
		    q->ring_va != L->bo[lq->ring].va ||
		    q->ring_size != lq->ring_size ||
		    q->rptr_va != L->bo[lq->ctl].va + KG_CTL_RPTR ||
		    q->wptr_va != L->bo[lq->ctl].va + KG_CTL_WPTR ||
		    q->percentage != 100 || q->priority != 7 || q->pad ||
		    q->pad2 ||
		    q->eop_va != (j == CW_Q_IDLE ?
				  L->bo[lq->ctl].va + CW_EOP_OFF : 0) ||
		    q->eop_size != (j == CW_Q_IDLE ? CW_EOP_SIZE : 0) ||
		    q->ctx_save_va != (j == CW_Q_IDLE ?
				       L->bo[lq->ctl].va + CW_CTX_OFF : 0) ||
		    q->ctx_save_size != (j == CW_Q_IDLE ? CW_CTX_SIZE : 0) ||
		    q->ctl_stack_size != (j == CW_Q_IDLE ? CW_CTL_STACK : 0))
			CW_FAIL("queue %u: its object does not match its creation",
				q->id);
		if (q->doorbell_value != lq->windex ||
		    q->rptr != img->qs[j].rptr ||
		    q->iteration != img->qs[j].iteration ||
		    q->next_wg != img->qs[j].next_wg ||
		    q->state_flags != img->qs[j].flags)
			CW_FAIL("queue %u: doorbell %llu rptr %llu it %u wg %u; want %llu %llu %u %u",
				q->id, (unsigned long long)q->doorbell_value,
				(unsigned long long)q->rptr, q->iteration,
				q->next_wg, (unsigned long long)lq->windex,
				(unsigned long long)img->qs[j].rptr,
				img->qs[j].iteration, img->qs[j].next_wg);
		/* Only the idle queue has a save area, with nothing saved. */
		cs = (const void *)(q + 1);
		if (cs->cntl_stack_offset != (j == CW_Q_IDLE ? CW_CTL_STACK : 0) ||
		    cs->wg_state_offset != (j == CW_Q_IDLE ? CW_CTL_STACK : 0) ||
		    cs->stack_bytes || cs->pad)
			CW_FAIL("queue %u: context save state %u %u %u %u",
				q->id, cs->cntl_stack_offset,
				cs->wg_state_offset, cs->stack_bytes, cs->pad);
	}
	for (i = 0; i < CW_NEVENTS; i++) {
		int which = -1;

		ev = kc_priv_object(&img->k, idx++, &type, &size);
		for (j = 0; j < CW_NEVENTS; j++)
			if (L->ev[j] == ev->id)
				which = (int)j;
		if (which < 0 || (i && ev->id <= prev))
			CW_FAIL("event object %u: id %u unknown or out of order",
				i, ev->id);
		prev = ev->id;
		if (ev->type != L->ev_type[which] ||
		    ev->auto_reset != (which == CW_EV_AUTO ||
				       which == CW_EV_SDMA) ||
		    ev->signaled != (which == CW_EV_SET || which == CW_EV_AUTO ||
				     (which == CW_EV_DONE && loop_done)))
			CW_FAIL("event %u: type %u auto_reset %u signaled %u",
				ev->id, ev->type, ev->auto_reset,
				ev->signaled);
	}
	return 0;
}

/* Wait until the loop kernel is mid-way, and past @since if given. */
static int cw_wait_midloop(pid_t pid, const struct cw_layout *L,
			   const struct kg_qinfo *since, char *msg, size_t len)
{
	uint64_t end = kg_now_ms() + CW_WAIT_MS;
	struct kg_qinfo qi;

	for (;;) {
		if (cw_qinfo(pid, L, CW_Q_LOOP, &qi))
			CW_FAIL("loop queue %u of %d not in debugfs",
				L->q[CW_Q_LOOP].id, pid);
		if (qi.rptr)
			CW_FAIL("the loop kernel (%u steps) finished before the checkpoint",
				L->steps);
		if ((qi.iteration || qi.next_wg) &&
		    (!since || qi.iteration != since->iteration ||
		     qi.next_wg != since->next_wg))
			return 0;
		if (kg_now_ms() > end)
			CW_FAIL("the loop kernel does not progress (it %u wg %u)",
				qi.iteration, qi.next_wg);
		kg_sleep_ms(1);
	}
}

int cw_checkpoint(pid_t pid, const struct cw_layout *lay,
		  const struct kg_qinfo *since, unsigned int flags,
		  struct cw_image *img, int *tfd, char *msg, size_t len)
{
	struct kt_gpu gpus[KT_MAX_GPUS];
	struct kg_qinfo qi;
	int ret, fd, fds, n, q;

	*tfd = -1;
	memset(img, 0, sizeof(*img));
	img->lay = *lay;
	n = kt_gpus(gpus, KT_MAX_GPUS);
	if (n < 0)
		CW_FAIL("topology: %s", strerror(-n));
	img->node.ngpus = (uint32_t)n;
	for (q = 0; q < n; q++)
		img->node.ids[q] = gpus[q].gpu_id;

	ret = kc_seize(pid, flags & CW_CK_STOP);
	if (ret)
		CW_FAIL("PTRACE_SEIZE %d: %s", pid, strerror(-ret));
	if ((flags & CW_CK_MIDLOOP) &&
	    cw_wait_midloop(pid, lay, since, msg, len))
		return -1;
	fd = kc_getfd(pid, lay->kfd_fd);
	if (fd < 0)
		CW_FAIL("pidfd_getfd: %s", strerror(-fd));
	*tfd = fd;
	ret = kc_process_info(fd, &img->k);
	if (ret)
		CW_FAIL("PROCESS_INFO: %s", strerror(-ret));
	if (img->k.num_devices != lay->ngpus || img->k.num_bos != CW_NBOS ||
	    img->k.num_objects != CW_NQUEUES + CW_NEVENTS ||
	    img->k.pid != (uint32_t)pid)
		CW_FAIL("PROCESS_INFO: %u devices, %u BOs, %u objects, pid %u; want %u %u %u %d",
			img->k.num_devices, img->k.num_bos, img->k.num_objects,
			img->k.pid, lay->ngpus, CW_NBOS,
			CW_NQUEUES + CW_NEVENTS, pid);
	for (q = 0; q < CW_NQUEUES; q++) {
		if (cw_qinfo(pid, lay, q, &img->qs[q]))
			CW_FAIL("queue %u not in debugfs", lay->q[q].id);
		if (!img->qs[q].evicted)
			CW_FAIL("queue %u runs after PROCESS_INFO",
				lay->q[q].id);
	}
	if (flags & CW_CK_MIDLOOP) {
		qi = img->qs[CW_Q_LOOP];
		if (qi.rptr || !(qi.iteration || qi.next_wg) ||
		    qi.iteration >= lay->steps)
			CW_FAIL("loop not mid-way once paused: rptr %llu it %u wg %u",
				(unsigned long long)qi.rptr, qi.iteration,
				qi.next_wg);
		kg_sleep_ms(30);
		cw_qinfo(pid, lay, CW_Q_LOOP, &qi);
		if (qi.iteration != img->qs[CW_Q_LOOP].iteration ||
		    qi.next_wg != img->qs[CW_Q_LOOP].next_wg)
			CW_FAIL("the loop still runs after PROCESS_INFO");
	}
	fds = kc_count_fds();
	ret = kc_checkpoint(fd, &img->k);
	if (ret)
		CW_FAIL("CHECKPOINT: %s", strerror(-ret));
	if (kc_count_fds() != fds + (int)kc_count_dmabufs(&img->k))
		CW_FAIL("CHECKPOINT gave %d fds for %u VRAM/GTT BOs",
			kc_count_fds() - fds, kc_count_dmabufs(&img->k));
	if (cw_check_buckets(img, lay, msg, len) ||
	    cw_check_priv(img, lay, msg, len))
		return -1;
	ret = kc_read_contents(&img->k, pid);
	if (ret)
		CW_FAIL("reading the BO contents: %s", strerror(-ret));
	if (kc_count_fds() != fds)
		CW_FAIL("fds left after reading the dma-bufs");
	return 0;
}

int cw_checkpoint_worker(struct cw_target *w, struct cw_shared *sh,
			 uint32_t steps, unsigned int flags,
			 struct cw_image *img, char *msg, size_t len)
{
	int ret, tfd = -1;

	ret = cw_start_worker(w, sh, steps, msg, len);
	if (!ret)
		ret = cw_checkpoint(w->pid, &sh->lay, NULL, flags, img, &tfd,
				    msg, len);
	cw_kill(w);
	if (tfd >= 0)
		close(tfd);
	return ret;
}

/* ---- images on disk ---- */

int cw_image_save(const struct cw_image *img, const char *dir)
{
	int ret = kc_image_save(&img->k, dir);

	if (!ret)
		ret = kc_write_file(dir, "cw-layout", &img->lay,
				    sizeof(img->lay));
	if (!ret)
		ret = kc_write_file(dir, "cw-node", &img->node,
				    sizeof(img->node));
	if (!ret)
		ret = kc_write_file(dir, "cw-queues", img->qs, sizeof(img->qs));
	return ret;
}

int cw_image_load(struct cw_image *img, const char *dir)
{
	int ret;

	memset(img, 0, sizeof(*img));
	ret = kc_image_load(&img->k, dir);
	if (!ret)
		ret = kc_read_exact(dir, "cw-layout", &img->lay,
				    sizeof(img->lay));
	if (!ret)
		ret = kc_read_exact(dir, "cw-node", &img->node,
				    sizeof(img->node));
	if (!ret)
		ret = kc_read_exact(dir, "cw-queues", img->qs, sizeof(img->qs));
	if (!ret && (img->lay.magic != CW_LAYOUT_MAGIC ||
		     img->node.ngpus > KT_MAX_GPUS))
		ret = -EINVAL;
	if (ret)
		kc_image_free(&img->k);
	return ret;
}

void cw_image_free(struct cw_image *img)
{
	kc_image_free(&img->k);
}
