// SPDX-License-Identifier: GPL-2.0
/*
 * GPU state caught by a checkpoint, carried through RESTORE and finished by
 * the restored process (on the same GPUs, and on the GPUs in reverse order):
 *
 *  - sdma_copy_in_flight: a chain of 2047 COPY_LINEAR packets on an SDMA
 *    queue, each moving one 16 KiB chunk of a 32 MiB VRAM buffer one chunk
 *    down, checkpointed mid-ring. The chain is not idempotent (a replayed
 *    or skipped packet changes the result), so exact bytes after restore
 *    prove it resumed at the packet it stopped at. Its trap event fires
 *    once, after RESUME.
 *  - aql_barrier_pending: a barrier-AND waiting on a signal nobody sets
 *    before the checkpoint, then a loop-kernel dispatch behind it. Nothing
 *    runs before RESUME, nor after it until the restored process sets the
 *    signal; then the dispatch runs exactly once (the loop kernel's result
 *    and its completion signal tell).
 *  - event_waiter: a thread blocked in WAIT_EVENTS while its process is
 *    checkpointed (every thread seized, as CRIU does) and restored; in the
 *    restored process the wait is in the kernel again before RESUME, as
 *    the restarted system call would be, and is woken only by the restored
 *    GPU work (a dispatch behind a barrier, whose completion signal names
 *    the event), with WAIT_RESULT_COMPLETE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kt_harness.h"
#include "gs_snap.h"

#define GS_WAIT_MS	120000

#define CHUNK		(16 * 1024)
#define NCHUNK		2048
#define BUF_BYTES	((uint64_t)CHUNK * NCHUNK)
#define SDMA_RING	(64 * 1024)
#define SEED_BUF	0x5d3a
#define FENCE_VALUE	0xfeedf00du

#define LOOP_N		4096
#define LOOP_STEPS	3
#define SEED_LOOP	0x10a7
#define FILL_VALUE	0x5a5a5a5au

/* Test commands. */
#define C_RING		'R'	/* publish the SDMA chain */
#define C_PAUSED	'P'	/* restored, before RESUME: nothing ran */
#define C_FINISH	'V'	/* after RESUME: let it finish, check */
#define C_WAITER	'T'	/* start the waiting thread */
#define C_STILL		'N'	/* the waiter is still asleep */
#define C_SET		'S'	/* set the barrier's signal */

/* gs_state roles. */
enum { Q0 = 0 };
enum { BO_BUF = 0, BO_FENCE = 1, BO_EVPAGE = 2 };
enum { SIG_DEP = 0, SIG_BARRIER = 1, SIG_DISPATCH = 2 };
enum { V_END = 0, V_WAIT_TID = 1 };
enum { T_ENTERED = 0, T_RETURNED = 1, T_RET = 2, T_RESULT = 3 };

#define FAIL(...) do {					\
	snprintf(msg, len, __VA_ARGS__);		\
	return -1;					\
} while (0)

/* ---- a: SDMA ---- */

static int sdma_build(struct gs_shared *sh, char *msg, size_t len)
{
	struct gs_state *st = &sh->st;
	struct kg_rt *rt = &st->rt;
	struct kg_queue *q = &st->q[Q0];
	struct kg_bo *buf = &st->bo[BO_BUF], *fence = &st->bo[BO_FENCE];
	struct kfd_ioctl_create_event_args ev;
	uint32_t dw[KFDSIM_SDMA_COPY_DWORDS], i;
	uint64_t src, dst;
	int ret;

	ret = kg_open(rt);
	if (ret || rt->e.ngpus < 2)
		FAIL("kg_open: %d, %d GPUs", ret, rt->e.ngpus);
	if (kg_queue_new(rt, 1, KFD_IOC_QUEUE_TYPE_SDMA, SDMA_RING, q) ||
	    kg_bo_new(rt, 1, BUF_BYTES, KT_VRAM | KT_WRITABLE, KG_MAP_OWN,
		      buf) ||
	    kg_bo_new(rt, 1, KT_PAGE, KT_GTT | KT_WRITABLE, KG_MAP_OWN, fence))
		FAIL("queue or BO creation failed");
	st->nq = 1;
	st->nbo = 2;
	ret = kg_event_new(rt->e.kfd, KFD_IOC_EVENT_SIGNAL, true, 0, &ev);
	if (ret)
		FAIL("CREATE_EVENT: %s", strerror(-ret));
	st->ev[0] = ev.event_id;
	st->nev = 1;
	kt_fill(buf->cpu, BUF_BYTES, SEED_BUF);

	/* Chunk i moves to chunk i - 1, in order: each packet matters. */
	for (i = 1; i < NCHUNK; i++) {
		src = buf->va + (uint64_t)i * CHUNK;
		dst = src - CHUNK;
		kg_sdma_copy_packet(dw, dst, src, CHUNK - 1);
		ret = kg_sdma_write(q, dw, KFDSIM_SDMA_COPY_DWORDS);
		if (ret)
			FAIL("SDMA ring: %s", strerror(-ret));
	}
	kg_sdma_fence_packet(dw, fence->va, FENCE_VALUE);
	ret = kg_sdma_write(q, dw, KFDSIM_SDMA_FENCE_DWORDS);
	kg_sdma_trap_packet(dw, st->ev[0]);
	ret = ret ? ret : kg_sdma_write(q, dw, KFDSIM_SDMA_TRAP_DWORDS);
	if (ret)
		FAIL("SDMA ring: %s", strerror(-ret));
	st->val[V_END] = q->windex;
	return 0;
}

/* What the whole chain leaves: every chunk one chunk down, the last kept. */
static uint8_t *sdma_expected(void)
{
	uint8_t *want = malloc(BUF_BYTES);

	if (!want)
		return NULL;
	kt_fill(want, BUF_BYTES, SEED_BUF);
	memmove(want, want + CHUNK, BUF_BYTES - CHUNK);
	return want;
}

static int sdma_finish(struct gs_shared *sh, char *msg, size_t len)
{
	struct gs_state *st = &sh->st;
	struct kg_queue *q = &st->q[Q0];
	uint8_t *want;
	int ret, i;

	q->windex = st->val[V_END];
	ret = kg_queue_wait_idle(q, GS_WAIT_MS);
	if (ret)
		FAIL("SDMA rptr %llu of %llu after RESUME",
		     (unsigned long long)kg_queue_rptr(q),
		     (unsigned long long)st->val[V_END]);
	ret = kg_wait1(st->rt.e.kfd, st->ev[0], GS_WAIT_MS);
	if (ret != KFD_IOC_WAIT_RESULT_COMPLETE)
		FAIL("trap event %u: %d", st->ev[0], ret);
	if (kg_wait1(st->rt.e.kfd, st->ev[0], 0) !=
	    KFD_IOC_WAIT_RESULT_TIMEOUT)
		FAIL("the trap event fired twice");
	if (*(volatile uint32_t *)st->bo[BO_FENCE].cpu != FENCE_VALUE)
		FAIL("fence 0x%x", *(uint32_t *)st->bo[BO_FENCE].cpu);
	want = sdma_expected();
	if (!want)
		FAIL("out of memory");
	for (i = 0; i < NCHUNK; i++)
		if (memcmp((uint8_t *)st->bo[BO_BUF].cpu + (size_t)i * CHUNK,
			   want + (size_t)i * CHUNK, CHUNK))
			break;
	free(want);
	if (i < NCHUNK)
		FAIL("chunk %d of %d is wrong after the chain finished (a packet replayed or skipped)",
		     i, NCHUNK);
	return 0;
}

/* The queue has not moved since RESTORE; @what names the moment. */
static int not_running(struct gs_shared *sh, uint64_t rptr, const char *what,
		       char *msg, size_t len)
{
	struct kg_qinfo qi;

	kg_sleep_ms(150);
	if (kg_qinfo(getpid(), sh->st.q[Q0].id, &qi))
		FAIL("queue %u not in debugfs", sh->st.q[Q0].id);
	if (qi.rptr != rptr)
		FAIL("%s: queue %u at rptr %llu, was %llu", what,
		     sh->st.q[Q0].id, (unsigned long long)qi.rptr,
		     (unsigned long long)rptr);
	return 0;
}

static int sdma_fn(struct gs_shared *sh, char cmd, char *msg, size_t len)
{
	switch (cmd) {
	case 0:
		return sdma_build(sh, msg, len);
	case C_RING:
		kg_sdma_commit(&sh->st.q[Q0]);
		return 0;
	case C_PAUSED:
		return not_running(sh, sh->test[0], "before RESUME", msg, len);
	case C_FINISH:
		return sdma_finish(sh, msg, len);
	}
	FAIL("bad command %c", cmd);
}

/* ---- b, c: a barrier and what is behind it ---- */

static int barrier_build(struct gs_shared *sh, bool waiter, char *msg,
			 size_t len)
{
	struct gs_state *st = &sh->st;
	struct kg_rt *rt = &st->rt;
	struct kg_queue *q = &st->q[Q0];
	struct kg_bo *buf = &st->bo[BO_BUF], *page = &st->bo[BO_EVPAGE];
	struct kfd_ioctl_create_event_args ev;
	struct kfdsim_args_loop la = { .steps = LOOP_STEPS };
	struct kfdsim_args_fill fa = { .value = FILL_VALUE };
	struct kfdsim_signal *sd;
	uint32_t i;
	int ret;

	ret = kg_open(rt);
	if (ret || rt->e.ngpus < 2)
		FAIL("kg_open: %d, %d GPUs", ret, rt->e.ngpus);
	/* On GPU 1, so that the swapped restore moves it to GPU 0. */
	if (kg_queue_new(rt, 1, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 4096, q) ||
	    kg_bo_new(rt, 1, 4 * LOOP_N, KT_VRAM | KT_WRITABLE, KG_MAP_OWN,
		      buf) ||
	    kg_bo_new(rt, 0, 32 * 1024, KT_GTT | KT_WRITABLE, KG_MAP_ALL,
		      page))
		FAIL("queue or BO creation failed");
	st->nq = 1;
	st->nbo = 3;
	for (i = 0; i < 3; i++)
		if (kg_signal_new(rt, 1, &st->sig[i]))
			FAIL("signal creation failed");
	st->nsig = 3;
	kt_fill(buf->cpu, 4 * LOOP_N, SEED_LOOP);
	if (waiter) {
		ret = kg_event_new(rt->e.kfd, KFD_IOC_EVENT_SIGNAL, false,
				   page->handle, &ev);
		if (ret)
			FAIL("CREATE_EVENT: %s", strerror(-ret));
		st->ev[0] = ev.event_id;
		st->nev = 1;
		sd = st->sig[SIG_DISPATCH].cpu;
		sd->event_mailbox_ptr = page->va + 8ULL * ev.event_id;
		sd->event_id = ev.event_id;
	}
	ret = kg_barrier(q, KFDSIM_AQL_TYPE_BARRIER_AND, &st->sig[SIG_DEP].va,
			 1, st->sig[SIG_BARRIER].va);
	if (ret)
		FAIL("barrier: %s", strerror(-ret));
	la.buf = buf->va;
	fa.dst = buf->va;
	ret = waiter ?
		kg_dispatch(q, KFDSIM_KERNEL_FILL_U32, &fa, sizeof(fa), LOOP_N,
			    256, st->sig[SIG_DISPATCH].va) :
		kg_dispatch(q, KFDSIM_KERNEL_LOOP, &la, sizeof(la), LOOP_N,
			    256, st->sig[SIG_DISPATCH].va);
	if (ret)
		FAIL("dispatch: %s", strerror(-ret));
	kg_sleep_ms(100);
	if (kg_queue_rptr(q) || kg_signal_load(&st->sig[SIG_BARRIER]) != 1 ||
	    kg_signal_load(&st->sig[SIG_DISPATCH]) != 1 ||
	    !kt_check(buf->cpu, 4 * LOOP_N, SEED_LOOP))
		FAIL("the barrier did not hold before the checkpoint");
	return 0;
}

/* Nothing behind the barrier ran: pointers, signals, memory. */
static int barrier_held(struct gs_shared *sh, const char *what, char *msg,
			size_t len)
{
	struct gs_state *st = &sh->st;

	if (not_running(sh, 0, what, msg, len))
		return -1;
	if (kg_signal_load(&st->sig[SIG_BARRIER]) != 1 ||
	    kg_signal_load(&st->sig[SIG_DISPATCH]) != 1)
		FAIL("%s: barrier signal %lld, dispatch signal %lld", what,
		     (long long)kg_signal_load(&st->sig[SIG_BARRIER]),
		     (long long)kg_signal_load(&st->sig[SIG_DISPATCH]));
	if (!kt_check(st->bo[BO_BUF].cpu, 4 * LOOP_N, SEED_LOOP))
		FAIL("%s: the dispatch behind the barrier ran", what);
	return 0;
}

/* Set the signal; the barrier passes, the dispatch runs once. */
static int barrier_release(struct gs_shared *sh, bool loop, char *msg,
			   size_t len)
{
	struct gs_state *st = &sh->st;
	uint32_t *x, *x0, a, b, i;

	kg_signal_store(&st->sig[SIG_DEP], 0);
	if (kg_signal_wait(&st->sig[SIG_DISPATCH], 0, GS_WAIT_MS))
		FAIL("the dispatch did not complete: signal %lld, rptr %llu",
		     (long long)kg_signal_load(&st->sig[SIG_DISPATCH]),
		     (unsigned long long)kg_queue_rptr(&st->q[Q0]));
	kg_sleep_ms(100);
	if (kg_signal_load(&st->sig[SIG_BARRIER]) != 0 ||
	    kg_signal_load(&st->sig[SIG_DISPATCH]) != 0 ||
	    kg_queue_rptr(&st->q[Q0]) != 2)
		FAIL("barrier signal %lld dispatch signal %lld rptr %llu: want 0 0 2 (each packet once)",
		     (long long)kg_signal_load(&st->sig[SIG_BARRIER]),
		     (long long)kg_signal_load(&st->sig[SIG_DISPATCH]),
		     (unsigned long long)kg_queue_rptr(&st->q[Q0]));
	x = st->bo[BO_BUF].cpu;
	if (!loop) {
		for (i = 0; i < LOOP_N; i++)
			if (x[i] != FILL_VALUE)
				FAIL("x[%u] = 0x%x after the fill", i, x[i]);
		return 0;
	}
	x0 = malloc(4 * LOOP_N);
	if (!x0)
		FAIL("out of memory");
	kt_fill(x0, 4 * LOOP_N, SEED_LOOP);
	kg_loop_affine(0, LOOP_STEPS, &a, &b);
	for (i = 0; i < LOOP_N; i++)
		if (x[i] != x0[i] * a + b)
			break;
	free(x0);
	if (i < LOOP_N)
		FAIL("x[%u] = 0x%x: not the loop kernel run exactly once", i,
		     x[i]);
	return 0;
}

static int barrier_fn(struct gs_shared *sh, char cmd, char *msg, size_t len)
{
	switch (cmd) {
	case 0:
		return barrier_build(sh, false, msg, len);
	case C_PAUSED:
		return barrier_held(sh, "before RESUME", msg, len);
	case C_STILL:
		return barrier_held(sh, "after RESUME, signal not set", msg,
				    len);
	case C_SET:
		return barrier_release(sh, true, msg, len);
	}
	FAIL("bad command %c", cmd);
}

/* The waiting thread: one WAIT_EVENTS, no retry, its outcome recorded. */
static void *waiter(void *arg)
{
	struct gs_shared *sh = arg;
	struct kfd_event_data ev = { .event_id = sh->st.ev[0] };
	struct kfd_ioctl_wait_events_args a = {
		.events_ptr = (uintptr_t)&ev,
		.num_events = 1,
		.wait_for_all = 1,
		.timeout = 0xffffffffu,
	};
	int ret;

	sh->st.val[V_WAIT_TID] = (uint64_t)gettid();
	__atomic_store_n(&sh->test[T_ENTERED], 1, __ATOMIC_RELEASE);
	ret = ioctl(sh->st.rt.e.kfd, AMDKFD_IOC_WAIT_EVENTS, &a);
	sh->test[T_RET] = (uint64_t)(ret ? errno : 0);
	sh->test[T_RESULT] = a.wait_result;
	__atomic_add_fetch(&sh->test[T_RETURNED], 1, __ATOMIC_RELEASE);
	return NULL;
}

static int start_waiter(struct gs_shared *sh, char *msg, size_t len)
{
	pthread_t th;
	uint64_t end = kg_now_ms() + GS_WAIT_MS;

	memset(sh->test, 0, sizeof(sh->test));
	if (pthread_create(&th, NULL, waiter, sh))
		FAIL("pthread_create failed");
	pthread_detach(th);
	while (!__atomic_load_n(&sh->test[T_ENTERED], __ATOMIC_ACQUIRE) ||
	       !gs_in_ioctl(getpid(), (pid_t)sh->st.val[V_WAIT_TID])) {
		if (__atomic_load_n(&sh->test[T_RETURNED], __ATOMIC_ACQUIRE))
			FAIL("WAIT_EVENTS returned at once: errno %llu result %llu",
			     (unsigned long long)sh->test[T_RET],
			     (unsigned long long)sh->test[T_RESULT]);
		if (kg_now_ms() > end)
			FAIL("the waiter does not sleep in WAIT_EVENTS");
		kg_sleep_ms(1);
	}
	return 0;
}

static int waiter_asleep(struct gs_shared *sh, const char *what, char *msg,
			 size_t len)
{
	if (barrier_held(sh, what, msg, len))
		return -1;
	if (__atomic_load_n(&sh->test[T_RETURNED], __ATOMIC_ACQUIRE) ||
	    !gs_in_ioctl(getpid(), (pid_t)sh->st.val[V_WAIT_TID]))
		FAIL("%s: the waiter woke (errno %llu, result %llu)", what,
		     (unsigned long long)sh->test[T_RET],
		     (unsigned long long)sh->test[T_RESULT]);
	return 0;
}

static int waiter_woken(struct gs_shared *sh, char *msg, size_t len)
{
	struct gs_state *st = &sh->st;
	uint64_t end = kg_now_ms() + GS_WAIT_MS;

	if (barrier_release(sh, false, msg, len))
		return -1;
	while (!__atomic_load_n(&sh->test[T_RETURNED], __ATOMIC_ACQUIRE)) {
		if (kg_now_ms() > end)
			FAIL("the waiter was not woken by the restored GPU work");
		kg_sleep_ms(1);
	}
	kg_sleep_ms(50);
	if (sh->test[T_RETURNED] != 1 || sh->test[T_RET] ||
	    sh->test[T_RESULT] != KFD_IOC_WAIT_RESULT_COMPLETE)
		FAIL("waiter: returned %llu times, errno %llu, result %llu; want once, 0, COMPLETE",
		     (unsigned long long)sh->test[T_RETURNED],
		     (unsigned long long)sh->test[T_RET],
		     (unsigned long long)sh->test[T_RESULT]);
	/* Manual-reset: it stays signaled. */
	if (kg_wait1(st->rt.e.kfd, st->ev[0], 0) !=
	    KFD_IOC_WAIT_RESULT_COMPLETE)
		FAIL("the event is not signaled after the wake-up");
	return 0;
}

static int waiter_fn(struct gs_shared *sh, char cmd, char *msg, size_t len)
{
	int ret;

	switch (cmd) {
	case 0:
		ret = barrier_build(sh, true, msg, len);
		return ret ? ret : start_waiter(sh, msg, len);
	case C_WAITER:
		return start_waiter(sh, msg, len);
	case C_PAUSED:
		return waiter_asleep(sh, "before RESUME", msg, len);
	case C_STILL:
		return waiter_asleep(sh, "after RESUME, signal not set", msg,
				     len);
	case C_SET:
		return waiter_woken(sh, msg, len);
	}
	FAIL("bad command %c", cmd);
}

/* ---- the tests ---- */

FIXTURE(gpustate) {
	struct gs_shared *sh, *sh2;
	struct gs_proc orig, rest;
	struct gs_ck ck;
	struct kt_props before;
	char msg[2048];
};

FIXTURE_VARIANT(gpustate) {
	unsigned int flags;
};

FIXTURE_VARIANT_ADD(gpustate, same_gpus) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(gpustate, gpus_swapped) {
	.flags = GS_R_SWAP,
};

FIXTURE_SETUP(gpustate)
{
	char err[128];

	memset(&self->orig, 0, sizeof(self->orig));
	memset(&self->rest, 0, sizeof(self->rest));
	self->ck.tfd = -1;
	self->sh = gs_shared_new();
	self->sh2 = gs_shared_new();
	ASSERT_TRUE(self->sh && self->sh2);
	ASSERT_EQ(0, kt_counters(&self->before, err, sizeof(err)))
		TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(gpustate)
{
	gs_kill(&self->orig);
	gs_kill(&self->rest);
	gs_ck_free(&self->ck);
	EXPECT_EQ(0, cw_counters_same(&self->before, "after the test",
				      self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	gs_shared_free(self->sh);
	gs_shared_free(self->sh2);
}

/*
 * Checkpoint the original, kill it as CRIU does, restore the image in a
 * fresh process and check nothing ran there before RESUME.
 */
static int move(FIXTURE_DATA(gpustate) *self, unsigned int flags,
		gs_fn fn, char *msg, size_t len)
{
	if (gs_move(&self->orig, &self->ck, &self->rest, self->sh2, flags, fn,
		    msg, len) ||
	    gs_command(&self->rest, C_PAUSED, msg, len) ||
	    cw_send_resume(self->rest.pid, msg, len))
		return -1;
	return 0;
}

TEST_F_TIMEOUT(gpustate, sdma_copy_in_flight, 600)
{
	struct gs_state *st = &self->sh->st;
	struct kg_qinfo qi;
	uint64_t end = kg_now_ms() + GS_WAIT_MS;
	const uint8_t *img = NULL;
	uint8_t *init;
	uint32_t i, moved;

	ASSERT_EQ(0, gs_start(&self->orig, self->sh, sdma_fn, self->msg,
			      sizeof(self->msg))) TH_LOG("%s", self->msg);
	/* Seized but running: PROCESS_INFO can follow the first packet. */
	ASSERT_EQ(0, gs_attach(self->orig.pid, st->rt.e.kfd, &self->ck,
			       self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, gs_command(&self->orig, C_RING, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	/* Checkpoint as soon as the engine is in the chain. */
	do {
		ASSERT_EQ(0, kg_qinfo(self->orig.pid, st->q[Q0].id, &qi));
		ASSERT_GT(end, kg_now_ms()) TH_LOG("the SDMA chain does not start");
	} while (!qi.rptr);
	ASSERT_EQ(0, gs_dump(self->orig.pid, &self->ck, self->msg,
			     sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, kg_qinfo(self->orig.pid, st->q[Q0].id, &qi));
	ASSERT_TRUE(qi.evicted);
	ASSERT_LT(0, qi.rptr);
	ASSERT_GT(st->val[V_END], qi.rptr)
		TH_LOG("the chain finished before the checkpoint: too fast a machine for this test");
	self->sh2->test[0] = qi.rptr;

	/* The image holds the buffer mid-chain: some chunks moved. */
	for (i = 0; i < self->ck.img.k.num_bos; i++)
		if (self->ck.img.k.bos[i].addr == st->bo[BO_BUF].va)
			img = self->ck.img.k.data[i];
	ASSERT_NE(NULL, img);
	init = malloc(BUF_BYTES);
	ASSERT_NE(NULL, init);
	kt_fill(init, BUF_BYTES, SEED_BUF);
	for (moved = 0; moved < NCHUNK - 1; moved++)
		if (memcmp(img + (size_t)moved * CHUNK,
			   init + (size_t)(moved + 1) * CHUNK, CHUNK))
			break;
	EXPECT_EQ(0, memcmp(img + (size_t)moved * CHUNK,
			    init + (size_t)moved * CHUNK,
			    BUF_BYTES - (size_t)moved * CHUNK))
		TH_LOG("the image is not the buffer after %u whole packets",
		       moved);
	free(init);
	TH_LOG("checkpointed at SDMA rptr %llu of %llu, %u of %u copies done",
	       (unsigned long long)qi.rptr,
	       (unsigned long long)st->val[V_END], moved, NCHUNK - 1);
	ASSERT_EQ((uint64_t)moved * KFDSIM_SDMA_COPY_DWORDS * 4, qi.rptr);

	gs_kill_dumped(&self->orig, &self->ck);
	ASSERT_EQ(0, gs_start_restored(&self->rest, self->sh2, st,
				       &self->ck.img, variant->flags, sdma_fn,
				       self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, gs_command(&self->rest, C_PAUSED, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_send_resume(self->rest.pid, self->msg,
				    sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, gs_command(&self->rest, C_FINISH, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	EXPECT_EQ(0, gs_quit(&self->rest, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
}

TEST_F_TIMEOUT(gpustate, aql_barrier_pending, 600)
{
	ASSERT_EQ(0, gs_start(&self->orig, self->sh, barrier_fn, self->msg,
			      sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, move(self, variant->flags, barrier_fn, self->msg,
			  sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, gs_command(&self->rest, C_STILL, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, gs_command(&self->rest, C_SET, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	EXPECT_EQ(0, gs_quit(&self->rest, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
}

TEST_F_TIMEOUT(gpustate, event_waiter, 600)
{
	struct gs_shared *sh = self->sh;

	ASSERT_EQ(0, gs_start(&self->orig, sh, waiter_fn, self->msg,
			      sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, gs_checkpoint(self->orig.pid, sh->st.rt.e.kfd, &self->ck,
				   self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	/* Both threads were stopped; the wait never came back to user space. */
	ASSERT_EQ(2, self->ck.ntids);
	ASSERT_EQ(0, sh->test[T_RETURNED])
		TH_LOG("WAIT_EVENTS returned during the checkpoint: errno %llu result %llu",
		       (unsigned long long)sh->test[T_RET],
		       (unsigned long long)sh->test[T_RESULT]);
	gs_kill_dumped(&self->orig, &self->ck);

	ASSERT_EQ(0, gs_start_restored(&self->rest, self->sh2, &sh->st,
				       &self->ck.img, variant->flags,
				       waiter_fn, self->msg,
				       sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	/* The restarted wait, in the kernel before RESUME. */
	ASSERT_EQ(0, gs_command(&self->rest, C_WAITER, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, gs_command(&self->rest, C_PAUSED, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_send_resume(self->rest.pid, self->msg,
				    sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, gs_command(&self->rest, C_STILL, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, gs_command(&self->rest, C_SET, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	EXPECT_EQ(0, gs_quit(&self->rest, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
}

TEST_HARNESS_MAIN
