// SPDX-License-Identifier: GPL-2.0
/*
 * Preemption through the debugfs hooks: a long loop kernel evicted in the
 * middle stays frozen at a workgroup boundary (memory and saved state do
 * not move), its memory matches the saved progress exactly, and after the
 * restore the result equals an uninterrupted run. Also repeated and nested
 * evictions, every queue and GPU of the process at once, queues created
 * while evicted, and an evicted checksum staying exact. Last, another
 * process's endless work (huge grids, over-sized workgroups, SDMA rings run
 * for ever) delays no one's queue management, eviction or exit.
 *
 * The loop kernel's recurrence is affine per step, so the CPU reference for
 * any number of steps is one multiply-add per element (kg_loop_affine()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kt_harness.h"
#include "kfdsim_gpu.h"

#define AQL	KFD_IOC_QUEUE_TYPE_COMPUTE_AQL
#define N	(256 * 1024)	/* elements of the loop buffer */
#define WG	1024
#define RUN_MS	4000		/* length of an uninterrupted run */
/* What an eviction may take: one CP round, plus a loaded host's stalls. */
#define EVICT_MAX_MS	(5000 * (uint64_t)kt_timeout_scale())

FIXTURE(pre) {
	struct kg_rt rt;
	pid_t pid;
	uint32_t steps;
	uint32_t *init;		/* initial contents of the loop buffer */
	int evicted;		/* evictions to undo in teardown */
};

FIXTURE_SETUP(pre)
{
	ASSERT_EQ(0, kg_open(&self->rt));
	self->pid = getpid();
	self->init = malloc(4 * N);
	ASSERT_NE(NULL, self->init);
	kt_fill(self->init, 4 * N, 2024);
}

FIXTURE_TEARDOWN(pre)
{
	while (self->evicted-- > 0)
		kg_restore(self->pid);
	free(self->init);
	kg_close(&self->rt);
}

struct loop {
	struct kg_queue q;
	struct kg_bo buf;
	struct kg_signal sig;
};

/* Steps of the loop kernel for a run of about RUN_MS, measured once. */
static int calibrate(FIXTURE_DATA(pre) *self)
{
	int ret = 0;

	if (!self->steps) {
		ret = kg_loop_steps_for(&self->rt, 0, N, WG, RUN_MS,
					&self->steps);
		if (self->steps < 8)
			self->steps = 8;
	}
	return ret;
}

static int loop_start(FIXTURE_DATA(pre) *self, int gpu, struct loop *l)
{
	struct kfdsim_args_loop args;
	int ret;

	ret = calibrate(self);
	if (!ret)
		ret = kg_bo_new(&self->rt, gpu, 4 * N, KT_VRAM | KT_WRITABLE, 0,
			&l->buf);
	if (!ret)
		ret = kg_queue_new(&self->rt, gpu, AQL, 1024, &l->q);
	if (!ret)
		ret = kg_signal_new(&self->rt, 1, &l->sig);
	if (ret)
		return ret;
	memcpy(l->buf.cpu, self->init, 4 * N);
	args = (struct kfdsim_args_loop){ .buf = l->buf.va,
					  .steps = self->steps };
	return kg_dispatch(&l->q, KFDSIM_KERNEL_LOOP, &args, sizeof(args), N,
			   WG, l->sig.va);
}

/* Wait until the dispatch reached step @it. */
static int wait_iteration(pid_t pid, struct loop *l, uint32_t it)
{
	struct kg_qinfo qi;
	uint64_t t0 = kg_now_ms();
	int ret;

	while (kg_now_ms() - t0 < KG_TIMEOUT_MS) {
		ret = kg_qinfo(pid, l->q.id, &qi);
		if (ret)
			return ret;
		if (qi.iteration >= it || qi.rptr)
			return 0;
		kg_sleep_ms(10);
	}
	return -ETIMEDOUT;
}

/*
 * Elements whose workgroup ran in step @it have had it + 1 steps, the
 * others it steps. Returns the number of mismatches (logged).
 */
static uint32_t check_progress(struct __test_metadata *_metadata,
			       const uint32_t *init, const uint32_t *buf,
			       uint32_t it, uint32_t next_wg)
{
	uint32_t a0, b0, a1, b1, i, bad = 0;

	kg_loop_affine(0, it, &a0, &b0);
	kg_loop_affine(0, it + 1, &a1, &b1);
	for (i = 0; i < N; i++) {
		uint32_t want = i < next_wg * WG ? init[i] * a1 + b1 :
						   init[i] * a0 + b0;

		if (buf[i] != want && bad++ < 3)
			TH_LOG("step %u wg %u: element %u is 0x%x, want 0x%x",
			       it, next_wg, i, buf[i], want);
	}
	return bad;
}

static uint32_t check_final(struct __test_metadata *_metadata,
			    FIXTURE_DATA(pre) *self, const uint32_t *buf)
{
	return check_progress(_metadata, self->init, buf, self->steps, 0);
}

/*
 * Evict, then check the queue is frozen mid-kernel: evicted in debugfs,
 * state inside the dispatch, memory consistent with it and unchanged over
 * @hold_ms. Returns the saved state in @qi.
 */
static void evict_and_check(struct __test_metadata *_metadata,
			    FIXTURE_DATA(pre) *self, struct loop *l,
			    unsigned int hold_ms, struct kg_qinfo *qi)
{
	struct kg_qinfo later;
	uint64_t t0, took;
	uint32_t *snap;

	snap = malloc(4 * N);
	ASSERT_NE(NULL, snap);
	t0 = kg_now_ms();
	ASSERT_EQ(0, kg_evict(self->pid));
	took = kg_now_ms() - t0;
	self->evicted++;
	/*
	 * One CP round, normally a few ms. The bound is loose because a
	 * loaded host can stall the guest; the state checks below are what
	 * proves the kernel was stopped mid-way rather than waited for.
	 */
	EXPECT_LT(took, EVICT_MAX_MS) TH_LOG("eviction took %lu ms",
				     (unsigned long)took);
	ASSERT_EQ(0, kg_qinfo(self->pid, l->q.id, qi));
	EXPECT_EQ(1, qi->evicted);
	EXPECT_EQ(0, qi->rptr) TH_LOG("the dispatch already completed");
	EXPECT_LT(qi->iteration, self->steps);
	EXPECT_LT(qi->next_wg, N / WG);
	EXPECT_EQ(0, qi->flags);
	memcpy(snap, l->buf.cpu, 4 * N);
	EXPECT_EQ(0, check_progress(_metadata, self->init, snap,
				    qi->iteration, qi->next_wg));
	kg_sleep_ms(hold_ms);
	EXPECT_EQ(0, memcmp(snap, l->buf.cpu, 4 * N))
		TH_LOG("memory changed while evicted");
	ASSERT_EQ(0, kg_qinfo(self->pid, l->q.id, &later));
	EXPECT_EQ(qi->iteration, later.iteration);
	EXPECT_EQ(qi->next_wg, later.next_wg);
	EXPECT_EQ(1, kg_signal_load(&l->sig));
	free(snap);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;
	ssize_t len = (ssize_t)strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

static void restore(struct __test_metadata *_metadata,
		    FIXTURE_DATA(pre) *self)
{
	ASSERT_EQ(0, kg_restore(self->pid));
	self->evicted--;
}

TEST_F_TIMEOUT(pre, evict_mid_kernel_freezes_then_resumes_exactly, 300)
{
	struct kg_qinfo qi;
	struct loop l;

	ASSERT_EQ(0, loop_start(self, 0, &l));
	TH_LOG("loop kernel: %u steps over %u elements", self->steps, N);
	ASSERT_EQ(0, wait_iteration(self->pid, &l, 1));
	evict_and_check(_metadata, self, &l, 300, &qi);
	TH_LOG("evicted at step %u, workgroup %u", qi.iteration, qi.next_wg);
	EXPECT_NE(0, qi.iteration + qi.next_wg);
	restore(_metadata, self);
	ASSERT_EQ(0, kg_qinfo(self->pid, l.q.id, &qi));
	EXPECT_EQ(0, qi.evicted);
	ASSERT_EQ(0, kg_signal_wait(&l.sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(0, kg_queue_wait_idle(&l.q, KG_TIMEOUT_MS));
	EXPECT_EQ(1, kg_queue_rptr(&l.q));
	EXPECT_EQ(0, check_final(_metadata, self, l.buf.cpu));
}

TEST_F_TIMEOUT(pre, repeated_evict_restore_in_one_run, 300)
{
	struct kg_qinfo qi, prev;
	struct loop l;
	int i, try, done = 0;

	/*
	 * The calibrated length can come out short when the host stalls the
	 * guest while it is measured (a debug kernel under load): a run that
	 * ends before three evictions is run again, four times longer.
	 */
	for (try = 0; try < 3 && done < 3; try++) {
		if (try)
			self->steps *= 4;
		ASSERT_EQ(0, loop_start(self, 0, &l));
		memset(&prev, 0, sizeof(prev));
		done = 0;
		for (i = 0; i < 5; i++) {
			kg_sleep_ms(i ? 250 : 100);
			if (kg_signal_load(&l.sig) == 0)
				break;
			evict_and_check(_metadata, self, &l, 100, &qi);
			/* Progress only moves forward. */
			EXPECT_TRUE(qi.iteration > prev.iteration ||
				    (qi.iteration == prev.iteration &&
				     qi.next_wg >= prev.next_wg));
			prev = qi;
			restore(_metadata, self);
			done++;
		}
		TH_LOG("%d evictions during the run, the last at step %u of %u",
		       done, prev.iteration, self->steps);
		ASSERT_EQ(0, kg_signal_wait(&l.sig, 0, KG_TIMEOUT_MS));
		EXPECT_EQ(0, check_final(_metadata, self, l.buf.cpu));
	}
	EXPECT_GE(done, 3);
}

TEST_F_TIMEOUT(pre, nested_evict_needs_two_restores, 300)
{
	struct kg_qinfo qi;
	uint32_t *snap;
	struct loop l;

	snap = malloc(4 * N);
	ASSERT_NE(NULL, snap);
	ASSERT_EQ(0, loop_start(self, 0, &l));
	ASSERT_EQ(0, wait_iteration(self->pid, &l, 1));
	evict_and_check(_metadata, self, &l, 50, &qi);
	ASSERT_EQ(0, kg_evict(self->pid));
	self->evicted++;
	restore(_metadata, self);
	/* Still evicted after one restore. */
	memcpy(snap, l.buf.cpu, 4 * N);
	kg_sleep_ms(300);
	ASSERT_EQ(0, kg_qinfo(self->pid, l.q.id, &qi));
	EXPECT_EQ(1, qi.evicted);
	EXPECT_EQ(0, memcmp(snap, l.buf.cpu, 4 * N));
	EXPECT_EQ(1, kg_signal_load(&l.sig));
	restore(_metadata, self);
	ASSERT_EQ(0, kg_signal_wait(&l.sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(0, check_final(_metadata, self, l.buf.cpu));
	/* One restore too many; and pids without KFD state. */
	EXPECT_EQ(-EINVAL, kg_restore(self->pid));
	EXPECT_EQ(-ESRCH, kg_evict(1));
	EXPECT_EQ(-ESRCH, kg_restore(1));
	EXPECT_EQ(-ESRCH, kg_evict(-5));
	EXPECT_EQ(-EINVAL, write_file(KG_EVICT, "abc\n"));
	free(snap);
}

/* Eviction stops every queue of the process on every GPU, SDMA too. */
TEST_F_TIMEOUT(pre, evict_stops_all_queues_all_gpus, 300)
{
	struct loop l[KT_MAX_GPUS];
	struct kg_queue sdma;
	struct kg_qinfo qi;
	struct kg_bo fb;
	int g;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &fb));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_SDMA, 1024,
				  &sdma));
	for (g = 0; g < self->rt.e.ngpus; g++)
		ASSERT_EQ(0, loop_start(self, g, &l[g]));
	for (g = 0; g < self->rt.e.ngpus; g++)
		ASSERT_EQ(0, wait_iteration(self->pid, &l[g], 1));
	ASSERT_EQ(0, kg_evict(self->pid));
	self->evicted++;
	ASSERT_EQ(0, kg_sdma_fence(&sdma, fb.va, 0x77));
	for (g = 0; g < self->rt.e.ngpus; g++) {
		ASSERT_EQ(0, kg_qinfo(self->pid, l[g].q.id, &qi));
		EXPECT_EQ(1, qi.evicted);
		EXPECT_EQ(0, check_progress(_metadata, self->init,
					    l[g].buf.cpu, qi.iteration,
					    qi.next_wg)) TH_LOG("gpu %d", g);
	}
	ASSERT_EQ(0, kg_qinfo(self->pid, sdma.id, &qi));
	EXPECT_EQ(1, qi.evicted);
	kg_sleep_ms(300);
	EXPECT_EQ(0, *(uint32_t *)fb.cpu);
	EXPECT_EQ(0, kg_queue_rptr(&sdma));
	restore(_metadata, self);
	ASSERT_EQ(0, kg_queue_wait_idle(&sdma, KG_TIMEOUT_MS));
	EXPECT_EQ(0x77, *(uint32_t *)fb.cpu);
	for (g = 0; g < self->rt.e.ngpus; g++) {
		ASSERT_EQ(0, kg_signal_wait(&l[g].sig, 0, KG_TIMEOUT_MS));
		EXPECT_EQ(0, check_final(_metadata, self, l[g].buf.cpu))
			TH_LOG("gpu %d", g);
	}
}

/* A queue created while the process is evicted starts evicted. */
TEST_F(pre, queue_created_while_evicted_waits_for_restore)
{
	struct kfdsim_args_fill fargs;
	struct kg_signal sig;
	struct kg_qinfo qi;
	struct kg_queue q;
	struct kg_bo buf;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 1 % self->rt.e.ngpus, KT_PAGE,
			       KT_GTT | KT_WRITABLE, 0, &buf));
	ASSERT_EQ(0, kg_evict(self->pid));
	self->evicted++;
	ASSERT_EQ(0, kg_queue_new(&self->rt, 1 % self->rt.e.ngpus, AQL, 1024,
				  &q));
	ASSERT_EQ(0, kg_qinfo(self->pid, q.id, &qi));
	EXPECT_EQ(1, qi.evicted);
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 3 };
	ASSERT_EQ(0, kg_dispatch(&q, KG_CODE_FILL_U32, &fargs,
				 sizeof(fargs), 1024, 64, sig.va));
	kg_sleep_ms(300);
	EXPECT_EQ(0, *(uint32_t *)buf.cpu);
	restore(_metadata, self);
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(3, ((uint32_t *)buf.cpu)[1023]);
}

/* A checksum evicted and restored many times adds every workgroup once. */
TEST_F_TIMEOUT(pre, evicted_checksum_stays_exact, 300)
{
	const uint32_t n = 16 * 1024 * 1024;
	struct kfdsim_args_checksum args;
	struct kg_bo src, res;
	struct kg_signal sig;
	struct kg_queue q;
	uint64_t want = 0;
	uint32_t *p, i;
	int k = 0;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4ULL * n, KT_VRAM, 0, &src));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &res));
	p = src.cpu;
	kt_fill(p, 4ULL * n, 31);
	for (i = 0; i < n; i++)
		want += (uint64_t)p[i] * (2 * (uint64_t)i + 1);
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, AQL, 1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	args = (struct kfdsim_args_checksum){ src.va, res.va };
	ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_CHECKSUM, &args,
				 sizeof(args), n, 512, sig.va));
	while (kg_signal_load(&sig) && k < 50) {
		ASSERT_EQ(0, kg_evict(self->pid));
		self->evicted++;
		kg_sleep_ms(5);
		restore(_metadata, self);
		kg_sleep_ms(5);
		k++;
	}
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	TH_LOG("%d evict/restore cycles during the checksum", k);
	EXPECT_EQ(want, *(uint64_t *)res.cpu);
}

/* A dependency cleared while evicted: the barrier passes only after restore. */
TEST_F(pre, barrier_released_while_evicted_waits_for_restore)
{
	struct kfdsim_args_fill fargs;
	struct kg_signal dep, done;
	struct kg_queue q;
	struct kg_bo buf;
	uint64_t deps[1];

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &buf));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, AQL, 1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &dep));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &done));
	deps[0] = dep.va;
	ASSERT_EQ(0, kg_barrier(&q, KFDSIM_AQL_TYPE_BARRIER_AND, deps, 1, 0));
	fargs = (struct kfdsim_args_fill){ .dst = buf.va, .value = 8 };
	ASSERT_EQ(0, kg_dispatch(&q, KG_CODE_FILL_U32, &fargs,
				 sizeof(fargs), 1, 1, done.va));
	kg_sleep_ms(100);
	ASSERT_EQ(0, kg_evict(self->pid));
	self->evicted++;
	kg_signal_store(&dep, 0);
	kg_sleep_ms(300);
	EXPECT_EQ(0, kg_queue_rptr(&q));
	EXPECT_EQ(0, *(uint32_t *)buf.cpu);
	restore(_metadata, self);
	ASSERT_EQ(0, kg_signal_wait(&done, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(8, *(uint32_t *)buf.cpu);
}

/*
 * Child side of the cross-process tests: run the loop kernel, report its
 * queue id, wait for "go" (or be killed), then check the result.
 */
struct child_run {
	const uint32_t *init;
	uint32_t steps;
	int report;	/* write end: queue id */
	int go;		/* read end */
};

static int loop_child(void *arg, char *msg, size_t len)
{
	struct child_run *c = arg;
	struct kfdsim_args_loop args;
	struct kg_signal sig;
	struct kg_queue q;
	struct kg_bo buf;
	struct kg_rt rt;
	uint32_t a, b, i, *p;
	char go;

	KT_CHECK(!kg_open(&rt), "kg_open");
	KT_CHECK(!kg_bo_new(&rt, 0, 4 * N, KT_GTT | KT_WRITABLE, 0, &buf),
		 "bo");
	KT_CHECK(!kg_queue_new(&rt, 0, AQL, 1024, &q), "queue");
	KT_CHECK(!kg_signal_new(&rt, 1, &sig), "signal");
	p = buf.cpu;
	memcpy(p, c->init, 4 * N);
	args = (struct kfdsim_args_loop){ .buf = buf.va, .steps = c->steps };
	KT_CHECK(!kg_dispatch(&q, KFDSIM_KERNEL_LOOP, &args, sizeof(args), N,
			      WG, sig.va), "dispatch");
	KT_CHECK(write(c->report, &q.id, sizeof(q.id)) == sizeof(q.id),
		 "report");
	KT_CHECK(read(c->go, &go, 1) == 1, "go");
	KT_CHECK(!kg_signal_wait(&sig, 0, KG_TIMEOUT_MS), "signal stuck");
	kg_loop_affine(0, c->steps, &a, &b);
	for (i = 0; i < N; i++)
		KT_CHECK(p[i] == c->init[i] * a + b, "element %u", i);
	kg_close(&rt);
	return 0;
}

/* The pid, other than @not, owning a queue with id @qid (or -1). */
static pid_t queue_owner(uint32_t qid, pid_t not)
{
	FILE *f = fopen(KG_QUEUES, "re");
	char line[256];
	struct kg_qinfo x;
	pid_t found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %d %u", &x.gpu_id, &x.pid,
			   &x.queue) == 3 && x.pid != not && x.queue == qid)
			found = x.pid;
	fclose(f);
	return found;
}

struct parent_run {
	FIXTURE_DATA(pre) *self;
	struct child_run c;
	int report_rd, go_wr;
	char msg[256];
	int ret;
};

static void *run_child_thread(void *arg)
{
	struct parent_run *r = arg;

	r->ret = kt_run_child(loop_child, &r->c, r->msg, sizeof(r->msg));
	return NULL;
}

/* The usual checkpoint flow: another process (the child) is evicted. */
TEST_F_TIMEOUT(pre, evict_other_process, 300)
{
	struct parent_run r = { .self = self };
	struct kg_qinfo qi, later;
	int rep[2], go[2];
	pthread_t t;
	pid_t child = -1;
	uint32_t qid;

	ASSERT_EQ(0, calibrate(self));
	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(0, pipe(go));
	r.c = (struct child_run){ self->init, self->steps, rep[1], go[0] };
	ASSERT_EQ(0, pthread_create(&t, NULL, run_child_thread, &r));
	ASSERT_EQ(sizeof(qid), read(rep[0], &qid, sizeof(qid)));
	child = queue_owner(qid, self->pid);
	ASSERT_GT(child, 0);
	kg_sleep_ms(300);
	ASSERT_EQ(0, kg_evict(child));
	ASSERT_EQ(0, kg_qinfo(child, qid, &qi));
	EXPECT_EQ(1, qi.evicted);
	EXPECT_EQ(0, qi.rptr);
	kg_sleep_ms(300);
	ASSERT_EQ(0, kg_qinfo(child, qid, &later));
	EXPECT_EQ(qi.iteration, later.iteration);
	EXPECT_EQ(qi.next_wg, later.next_wg);
	TH_LOG("child evicted at step %u, workgroup %u", qi.iteration,
	       qi.next_wg);
	EXPECT_EQ(0, kg_restore(child));
	EXPECT_EQ(1, write(go[1], "g", 1));
	pthread_join(t, NULL);
	EXPECT_EQ(0, r.ret) TH_LOG("child: %s", r.msg);
	close(rep[0]);
	close(rep[1]);
	close(go[0]);
	close(go[1]);
}

/* A process that dies while evicted leaves nothing behind. */
TEST_F_TIMEOUT(pre, process_killed_while_evicted, 300)
{
	struct kt_props base, now;
	char msg[512];
	int rep[2], status;
	uint32_t qid;
	pid_t pid;

	ASSERT_EQ(0, calibrate(self));
	ASSERT_EQ(0, kt_counters(&base, msg, sizeof(msg)));
	ASSERT_EQ(0, pipe(rep));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct child_run c = { self->init, self->steps, rep[1], -1 };
		int never[2];

		if (pipe(never))
			_exit(1);
		c.go = never[0];
		_exit(loop_child(&c, msg, sizeof(msg)) ? 1 : 0);
	}
	ASSERT_EQ(sizeof(qid), read(rep[0], &qid, sizeof(qid)));
	kg_sleep_ms(200);
	ASSERT_EQ(0, kg_evict(pid));
	ASSERT_EQ(0, kg_evict(pid));
	ASSERT_EQ(1, kg_qcount(pid));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, kg_qcount(pid));
	EXPECT_EQ(-ESRCH, kg_restore(pid));
	/* Our own runtime is in the counters both times. */
	ASSERT_EQ(0, kt_counters(&now, msg, sizeof(msg)));
	EXPECT_EQ(0, kt_counters_diff(&base, &now, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	close(rep[0]);
	close(rep[1]);
}

/*
 * Evicting an SDMA queue busy with 2 MiB copies: prompt, stopped at a
 * packet boundary, and every copy right after the restore.
 */
TEST_F_TIMEOUT(pre, evict_busy_sdma_queue, 300)
{
	const uint64_t chunk = 2 * KT_MIB;
	const int ncopies = 30;
	struct kg_bo src, dst;
	struct kg_qinfo qi, later;
	struct kg_queue q;
	uint64_t t0, took;
	int i;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, chunk, KT_VRAM, 0, &src));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, ncopies * chunk,
			       KT_GTT | KT_WRITABLE, 0, &dst));
	kt_fill(src.cpu, chunk, 77);
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_SDMA, 4096,
				  &q));
	for (i = 0; i < ncopies; i++)
		ASSERT_EQ(0, kg_sdma_copy(&q, dst.va + i * chunk, src.va, chunk,
					  0));
	kg_sleep_ms(50);
	t0 = kg_now_ms();
	ASSERT_EQ(0, kg_evict(self->pid));
	took = kg_now_ms() - t0;
	self->evicted++;
	TH_LOG("eviction of a busy SDMA queue took %lu ms",
	       (unsigned long)took);
	EXPECT_LT(took, EVICT_MAX_MS);
	ASSERT_EQ(0, kg_qinfo(self->pid, q.id, &qi));
	EXPECT_EQ(0, qi.rptr % 28);
	EXPECT_LT(qi.rptr, ncopies * 28) TH_LOG("all copies done already");
	EXPECT_EQ(qi.rptr, kg_queue_rptr(&q));
	kg_sleep_ms(200);
	ASSERT_EQ(0, kg_qinfo(self->pid, q.id, &later));
	EXPECT_EQ(qi.rptr, later.rptr);
	restore(_metadata, self);
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	for (i = 0; i < ncopies; i++)
		ASSERT_TRUE(kt_check((char *)dst.cpu + i * chunk, chunk, 77))
			TH_LOG("copy %d", i);
}

/*
 * ---- One process's work does not stall another's queue management ----
 *
 * A "hog" process fills GPU 0 with work that never ends: loop kernels over
 * a 64 MiB buffer with millions of steps, dispatches whose single
 * workgroup spans the whole buffer, and SDMA queues whose doorbell is 2^40
 * bytes ahead, so the engine goes round a ring of 4 MiB copies for ever.
 * Meanwhile this process creates and destroys queues, runs a dispatch,
 * evicts itself and reaps a process that exits with a queue: each must
 * take well under a second (the CP holds its lock for one slice,
 * and a workgroup has at most KFDSIM_MAX_WG_SIZE work-items). The hog's own
 * small dispatch completes correctly, its over-sized workgroups stop their
 * queues with a packet error, and killing the hog is just as prompt.
 */
#define HOG_BYTES	(64 * KT_MIB)
#define HOG_SIDE	4096		/* 2-D grid HOG_SIDE^2 = HOG_BYTES / 4 */
#define HOG_HUGE	12		/* queues with one-workgroup dispatches */
#define HOG_BIG		4		/* queues with long legal dispatches */
#define HOG_SDMA	2		/* SDMA queues busy for ever */
#define HOG_SMALL_N	4096
#define HOG_SMALL_STEPS	20
/* What one operation may take (longer under a debug kernel). */
#define OP_MAX_MS	(1000 * (uint64_t)kt_timeout_scale())

struct hog_report {
	uint32_t huge_qid[HOG_HUGE];
	uint32_t big_qid[HOG_BIG];
	char msg[200];			/* empty when the hog is fine */
};

/* An SDMA ring of 4 MiB copies, exactly one ring long, run for ever. */
static int hog_sdma(struct kg_queue *q,
		    const struct kg_bo *src, const struct kg_bo *dst)
{
	int ret = 0;

	while (!ret && q->windex + 28 <= q->ring_size - 8)
		ret = kg_sdma_copy(q, dst->va, src->va, src->size, 0);
	if (!ret)
		ret = kg_sdma_nop(q, (q->ring_size - q->windex) / 4 - 1);
	if (ret || q->windex != q->ring_size)
		return ret ? ret : -EINVAL;
	__atomic_store_n(q->doorbell, q->windex + (1ULL << 40),
			 __ATOMIC_RELEASE);
	return 0;
}

static int hog_fill(struct kg_rt *rt, struct hog_report *r)
{
	struct kfdsim_args_loop args = { .steps = UINT32_MAX };
	struct kfdsim_aql_dispatch pkt;
	struct kg_bo buf, small, src, dst;
	struct kg_queue q, sq;
	struct kg_signal sig;
	uint32_t a, b, i, *init, *p;
	int ret, k;

	ret = kg_bo_new(rt, 0, HOG_BYTES, KT_GTT | KT_WRITABLE, 0, &buf);
	if (ret)
		return snprintf(r->msg, sizeof(r->msg), "hog bo: %d", ret);
	args.buf = buf.va;
	for (k = 0; k < HOG_HUGE + HOG_BIG; k++) {
		ret = kg_queue_new(rt, 0, AQL, 1024, &q);
		if (ret)
			return snprintf(r->msg, sizeof(r->msg),
					"hog queue %d: %d", k, ret);
		kg_dispatch_packet(&q, KFDSIM_KERNEL_LOOP, &args, sizeof(args),
				   HOG_SIDE * HOG_SIDE, WG, 0, &pkt);
		if (k < HOG_HUGE) {
			/* One workgroup of 2^24 work-items: too large. */
			pkt.setup = 2;
			pkt.grid_size_x = HOG_SIDE;
			pkt.grid_size_y = HOG_SIDE;
			pkt.workgroup_size_x = HOG_SIDE;
			pkt.workgroup_size_y = HOG_SIDE;
			r->huge_qid[k] = q.id;
		} else {
			r->big_qid[k - HOG_HUGE] = q.id;
		}
		ret = kg_aql_submit(&q, &pkt);
		if (ret)
			return snprintf(r->msg, sizeof(r->msg),
					"hog dispatch %d: %d", k, ret);
	}
	ret = kg_bo_new(rt, 0, KFDSIM_SDMA_COPY_MAX_BYTES, KT_VRAM, 0, &src);
	if (!ret)
		ret = kg_bo_new(rt, 0, KFDSIM_SDMA_COPY_MAX_BYTES,
				KT_GTT | KT_WRITABLE, 0, &dst);
	for (k = 0; !ret && k < HOG_SDMA; k++) {
		ret = kg_queue_new(rt, 0, KFD_IOC_QUEUE_TYPE_SDMA, 4096, &sq);
		if (!ret)
			ret = hog_sdma(&sq, &src, &dst);
	}
	if (ret)
		return snprintf(r->msg, sizeof(r->msg), "hog sdma: %d", ret);

	/* Small enough work still finishes, and right. */
	ret = kg_bo_new(rt, 0, 4 * HOG_SMALL_N, KT_GTT | KT_WRITABLE, 0,
			&small);
	if (!ret)
		ret = kg_queue_new(rt, 0, AQL, 1024, &q);
	if (!ret)
		ret = kg_signal_new(rt, 1, &sig);
	init = malloc(4 * HOG_SMALL_N);
	if (ret || !init)
		return snprintf(r->msg, sizeof(r->msg), "hog small: %d", ret);
	kt_fill(init, 4 * HOG_SMALL_N, 7);
	p = small.cpu;
	memcpy(p, init, 4 * HOG_SMALL_N);
	args = (struct kfdsim_args_loop){ .buf = small.va,
					  .steps = HOG_SMALL_STEPS };
	ret = kg_dispatch(&q, KFDSIM_KERNEL_LOOP, &args, sizeof(args),
			  HOG_SMALL_N, 256, sig.va);
	if (!ret)
		ret = kg_signal_wait(&sig, 0, KG_TIMEOUT_MS);
	if (ret)
		return snprintf(r->msg, sizeof(r->msg),
				"hog small dispatch: %d", ret);
	kg_loop_affine(0, HOG_SMALL_STEPS, &a, &b);
	for (i = 0; i < HOG_SMALL_N; i++)
		if (p[i] != init[i] * a + b)
			return snprintf(r->msg, sizeof(r->msg),
					"hog small: element %u", i);
	free(init);
	return 0;
}

/* Fork the hog; it reports in @r once all its work is queued. */
static pid_t hog_start(struct hog_report *r)
{
	int rep[2];
	pid_t pid;

	if (pipe(rep))
		return -1;
	pid = fork();
	if (!pid) {
		struct kg_rt rt;

		close(rep[0]);
		/* Gone with the test, whatever happens to it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		memset(r, 0, sizeof(*r));
		if (kg_open(&rt))
			snprintf(r->msg, sizeof(r->msg), "hog: kg_open");
		else
			hog_fill(&rt, r);
		if (write(rep[1], r, sizeof(*r)) != sizeof(*r))
			_exit(1);
		for (;;)
			pause();
	}
	close(rep[1]);
	if (pid > 0 && read(rep[0], r, sizeof(*r)) != sizeof(*r)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(rep[0]);
	return pid;
}

/* A process with a queue and a dispatch, killed: how long to reap it. */
static uint64_t exit_time_ms(void)
{
	int rep[2];
	uint64_t t0;
	pid_t pid;
	char c = 0;

	if (pipe(rep))
		return UINT64_MAX;
	pid = fork();
	if (!pid) {
		struct kfdsim_args_fill args = { .value = 1 };
		struct kg_queue q;
		struct kg_bo buf;
		struct kg_rt rt;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		c = kg_open(&rt) ||
		    kg_bo_new(&rt, 0, 4 * N, KT_GTT | KT_WRITABLE, 0, &buf) ||
		    kg_queue_new(&rt, 0, AQL, 1024, &q);
		args.dst = buf.va;
		if (!c)
			c = kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &args,
					sizeof(args), N, WG, 0) != 0;
		if (write(rep[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(rep[1]);
	if (pid < 0 || read(rep[0], &c, 1) != 1 || c) {
		close(rep[0]);
		if (pid > 0)
			kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return UINT64_MAX;
	}
	close(rep[0]);
	t0 = kg_now_ms();
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return kg_now_ms() - t0;
}

#define TIMED(max, expr) do {						\
	uint64_t _t0 = kg_now_ms(), _dt;				\
	ASSERT_EQ(0, (expr));						\
	_dt = kg_now_ms() - _t0;					\
	if (_dt > (max))						\
		(max) = _dt;						\
} while (0)

TEST_F_TIMEOUT(pre, other_process_work_does_not_stall_queue_management, 600)
{
	uint64_t create = 0, destroy = 0, dispatch = 0, evict = 0, reap;
	struct kfdsim_args_fill fargs = { .value = 0x5a5a5a5a };
	struct kt_props base, now;
	struct hog_report r;
	struct kg_signal sig;
	struct kg_qinfo qi;
	struct kg_queue q;
	struct kg_bo buf;
	char msg[512];
	pid_t hog;
	int i;

	/* The signal pool and the doorbell slice stay: make them first. */
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, AQL, 1024, &q));
	ASSERT_EQ(0, kg_queue_free(&q));
	ASSERT_EQ(0, kt_counters(&base, msg, sizeof(msg)));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * HOG_SMALL_N,
			       KT_GTT | KT_WRITABLE, 0, &buf));
	fargs.dst = buf.va;
	hog = hog_start(&r);
	ASSERT_GT(hog, 0);
	ASSERT_STREQ("", r.msg);
	kg_sleep_ms(300);
	TH_LOG("the hog is running");

	for (i = 0; i < 5; i++) {
		TIMED(create, kg_queue_new(&self->rt, 0, AQL, 1024, &q));
		TIMED(destroy, kg_queue_free(&q));
		TIMED(create, kg_queue_new(&self->rt, 0,
					   KFD_IOC_QUEUE_TYPE_SDMA, 4096, &q));
		TIMED(destroy, kg_queue_free(&q));
	}
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, AQL, 1024, &q));
	for (i = 0; i < 3; i++) {
		kg_signal_store(&sig, 1);
		ASSERT_EQ(0, kg_dispatch(&q, KFDSIM_KERNEL_FILL_U32, &fargs,
					 sizeof(fargs), HOG_SMALL_N, 256,
					 sig.va));
		TIMED(dispatch, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
		TIMED(evict, kg_evict(self->pid));
		ASSERT_EQ(0, kg_restore(self->pid));
	}
	ASSERT_EQ(0, kg_queue_free(&q));
	reap = exit_time_ms();
	TH_LOG("worst: create %lu ms, destroy %lu ms, dispatch %lu ms, evict %lu ms, exit %lu ms",
	       (unsigned long)create, (unsigned long)destroy,
	       (unsigned long)dispatch, (unsigned long)evict,
	       (unsigned long)reap);
	EXPECT_LT(create, OP_MAX_MS);
	EXPECT_LT(destroy, OP_MAX_MS);
	EXPECT_LT(dispatch, 2 * OP_MAX_MS);
	EXPECT_LT(evict, OP_MAX_MS);
	EXPECT_LT(reap, OP_MAX_MS);
	for (i = 0; i < HOG_SMALL_N; i++)
		if (((uint32_t *)buf.cpu)[i] != fargs.value)
			break;
	EXPECT_EQ(HOG_SMALL_N, i);

	/* Over-sized workgroups are bad packets; the others still run. */
	for (i = 0; i < HOG_HUGE; i++) {
		ASSERT_EQ(0, kg_qinfo(hog, r.huge_qid[i], &qi));
		EXPECT_EQ(1, qi.flags) TH_LOG("huge queue %d", i);
	}
	for (i = 0; i < HOG_BIG; i++) {
		ASSERT_EQ(0, kg_qinfo(hog, r.big_qid[i], &qi));
		EXPECT_EQ(0, qi.flags) TH_LOG("big queue %d", i);
		EXPECT_EQ(0, qi.rptr);
	}

	/* The hog itself dies as promptly, and leaves nothing behind. */
	reap = kg_now_ms();
	kill(hog, SIGKILL);
	ASSERT_EQ(hog, waitpid(hog, NULL, 0));
	reap = kg_now_ms() - reap;
	TH_LOG("the hog exited in %lu ms", (unsigned long)reap);
	EXPECT_LT(reap, OP_MAX_MS);
	ASSERT_EQ(0, kg_bo_free(&self->rt, &buf));
	ASSERT_EQ(0, kt_counters(&now, msg, sizeof(msg)));
	EXPECT_EQ(0, kt_counters_diff(&base, &now, msg, sizeof(msg)))
		TH_LOG("%s", msg);
}

/*
 * Fairness of the CP between processes. A helper process (the attacker)
 * keeps @nq AQL queues busy with endless loop dispatches, or (with @nq
 * negative) keeps -@nq threads calling UPDATE_QUEUE on one queue (they
 * take turns: the ioctl holds the process lock); it reports its queue ids
 * and then waits to be killed.
 */
#define FAIR_NQ		24	/* the most AQL queues a process may have */
#define FAIR_N		(64 * 1024)
#define FAIR_SAMPLES	11
#define HAMMER_PROCS	3
/* @nq for an attacker with one busy queue and a thread mapping a huge BO */
#define FAIR_MAPPER	1000
#define MAPPER_BYTES	(256 * KT_MIB)

struct attacker {
	pid_t pid;
	uint32_t qid[FAIR_NQ];
	char msg[120];			/* empty when it is running */
	volatile uint64_t updates;	/* UPDATE_QUEUE calls made */
	volatile uint64_t maps;		/* FAIR_MAPPER: MAP + UNMAP pairs, */
	volatile uint64_t map_us;	/* and the time spent in MAP */
};

struct hammer_arg {
	struct attacker *a;
	struct kg_queue *q;
};

static void *hammer_thread(void *arg)
{
	struct hammer_arg *h = arg;
	struct kfd_ioctl_update_queue_args u = {
		.ring_base_address = h->q->ring.va,
		.queue_id = h->q->id,
		.ring_size = h->q->ring_size,
		.queue_percentage = 100,
	};

	for (;;)
		if (!kt_ioctl(h->q->rt->e.kfd, AMDKFD_IOC_UPDATE_QUEUE, &u))
			__atomic_add_fetch(&h->a->updates, 1, __ATOMIC_RELAXED);
	return NULL;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The attacker's KFD process (one per attacker, a forked child). */
static struct kg_rt attacker_rt;

/*
 * FAIR_MAPPER: map and unmap a MAPPER_BYTES GTT BO on GPU 0 for ever,
 * counting the pairs and the time spent mapping.
 */
static void *mapper_thread(void *arg)
{
	struct attacker *a = arg;
	struct kg_rt *rt = &attacker_rt;
	uint64_t h, t0;

	if (kt_alloc(rt->e.kfd, rt->ids[0], KT_VA(4), MAPPER_BYTES,
		     KT_GTT | KT_WRITABLE, &h, NULL)) {
		a->maps = UINT64_MAX;
		return NULL;
	}
	for (;;) {
		t0 = now_us();
		if (kt_map(rt->e.kfd, h, rt->ids, 1))
			break;
		a->map_us += now_us() - t0;
		if (kt_unmap(rt->e.kfd, h, rt->ids, 1))
			break;
		a->maps++;
	}
	a->maps = UINT64_MAX;
	return NULL;
}

static void attacker_fill(struct attacker *a, int nq)
{
	struct kfdsim_args_loop args = { .steps = UINT32_MAX };
	static struct hammer_arg h;
	static struct kg_queue q[FAIR_NQ];
	struct kg_rt *rt = &attacker_rt;
	struct kg_bo buf;
	pthread_t t;
	int i, ret;

	ret = kg_open(rt);
	if (!ret)
		ret = kg_bo_new(rt, 0, 4 * FAIR_N, KT_GTT | KT_WRITABLE,
				KG_NO_CPU, &buf);
	args.buf = buf.va;
	for (i = 0; !ret && i < (nq > 0 && nq != FAIR_MAPPER ? nq : 1); i++) {
		ret = kg_queue_new(rt, 0, AQL, 1024, &q[i]);
		a->qid[i] = q[i].id;
		if (!ret && nq > 0)
			ret = kg_dispatch(&q[i], KFDSIM_KERNEL_LOOP, &args,
					  sizeof(args), FAIR_N, WG, 0);
		if (ret)
			break;
	}
	if (ret) {
		snprintf(a->msg, sizeof(a->msg), "attacker queue %d: %d", i,
			 ret);
		return;
	}
	if (nq == FAIR_MAPPER &&
	    pthread_create(&t, NULL, mapper_thread, a)) {
		snprintf(a->msg, sizeof(a->msg), "mapper thread");
		return;
	}
	h = (struct hammer_arg){ .a = a, .q = &q[0] };
	for (i = 0; i < -nq; i++)
		if (pthread_create(&t, NULL, hammer_thread, &h)) {
			snprintf(a->msg, sizeof(a->msg), "hammer thread %d", i);
			return;
		}
}

/* Start the attacker; @a is shared memory. Returns its pid, or -1. */
static pid_t attacker_start(struct attacker *a, int nq)
{
	int rep[2];
	char c = 0;
	pid_t pid;

	memset((void *)a, 0, sizeof(*a));
	if (pipe(rep))
		return -1;
	pid = fork();
	if (!pid) {
		close(rep[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		attacker_fill(a, nq);
		if (write(rep[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(rep[1]);
	if (pid > 0 && read(rep[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(rep[0]);
	a->pid = pid;
	return pid;
}

static void attacker_stop(struct attacker *a)
{
	if (a->pid > 0) {
		kill(a->pid, SIGKILL);
		waitpid(a->pid, NULL, 0);
	}
	a->pid = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The median time, in us, from submitting a small fill dispatch on @q to
 * its completion signal, over FAIR_SAMPLES runs (after one not counted);
 * 0 on a failure or timeout.
 */
static uint64_t victim_latency_us(struct kg_queue *q, struct kg_signal *sig,
				  struct kg_bo *buf)
{
	struct kfdsim_args_fill args = { .dst = buf->va };
	uint64_t t[FAIR_SAMPLES], t0, end;
	struct timespec nap = { .tv_nsec = 50000 };
	int i;

	for (i = -1; i < FAIR_SAMPLES; i++) {
		args.value = 0x1000 + i;
		kg_signal_store(sig, 1);
		t0 = now_us();
		end = t0 + 1000ULL * KG_TIMEOUT_MS;
		if (kg_dispatch(q, KFDSIM_KERNEL_FILL_U32, &args, sizeof(args),
				256, 256, sig->va))
			return 0;
		while (kg_signal_load(sig)) {
			if (now_us() > end)
				return 0;
			nanosleep(&nap, NULL);
		}
		if (i >= 0)
			t[i] = now_us() - t0;
		if (((uint32_t *)buf->cpu)[255] != args.value)
			return 0;
	}
	qsort(t, FAIR_SAMPLES, sizeof(t[0]), cmp_u64);
	return t[FAIR_SAMPLES / 2];
}

/*
 * The CP gives each process with runnable queues one turn per round, then
 * goes round-robin among that process's queues: a victim's dispatch
 * latency must not grow with the number of busy queues another process
 * has. With one busy attacker queue the victim waits about one attacker
 * slice; with FAIR_NQ it must wait about as long, where a per-queue round
 * robin makes it wait FAIR_NQ slices. The bound is a ratio of the two, so
 * a slow or loaded host moves both alike. Every attacker queue still gets
 * its turns.
 */
TEST_F_TIMEOUT(pre, victim_latency_independent_of_other_process_queues, 600)
{
	uint64_t lat0, lat1, latn, bound, floor;
	struct attacker *a;
	struct kg_signal sig;
	struct kg_qinfo qi;
	struct kg_queue q;
	struct kg_bo buf;
	int i;

	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &buf));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, AQL, 1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));

	lat0 = victim_latency_us(&q, &sig, &buf);
	ASSERT_NE(0, lat0);

	ASSERT_GT(attacker_start(a, 1), 0);
	ASSERT_STREQ("", a->msg);
	lat1 = victim_latency_us(&q, &sig, &buf);
	attacker_stop(a);
	ASSERT_NE(0, lat1);

	ASSERT_GT(attacker_start(a, FAIR_NQ), 0);
	ASSERT_STREQ("", a->msg);
	latn = victim_latency_us(&q, &sig, &buf);
	/* Every queue of the attacker had turns meanwhile. */
	kg_sleep_ms(200 * kt_timeout_scale());
	for (i = 0; i < FAIR_NQ; i++) {
		ASSERT_EQ(0, kg_qinfo(a->pid, a->qid[i], &qi));
		EXPECT_TRUE(qi.iteration || qi.next_wg)
			TH_LOG("attacker queue %d never ran", i);
		EXPECT_EQ(0, qi.flags);
	}
	attacker_stop(a);
	ASSERT_NE(0, latn);

	TH_LOG("victim dispatch latency (median of %d): %lu us alone, %lu us with 1 busy queue in another process, %lu us with %d",
	       FAIR_SAMPLES, (unsigned long)lat0, (unsigned long)lat1,
	       (unsigned long)latn, FAIR_NQ);
	/*
	 * Per process, latn is about lat1 (0.6 to 0.9 times it measured under
	 * TCG on a loaded host); a per-queue round robin gave 8 to 100 times
	 * it, and at least FAIR_NQ slices of 2 ms. The floor of FAIR_NQ / 4
	 * slices keeps a lucky lat1 from making the bound too tight, while 3
	 * times it stays below FAIR_NQ slices.
	 */
	floor = FAIR_NQ / 4 * 2000;
	bound = (3 + kt_timeout_scale() / 3) * (lat1 > floor ? lat1 : floor);
	EXPECT_LT(latn, bound) TH_LOG("bound %lu us", (unsigned long)bound);
	ASSERT_EQ(0, kg_queue_free(&q));
	ASSERT_EQ(0, kg_bo_free(&self->rt, &buf));
	munmap(a, sizeof(*a));
}

/*
 * Mapping or unmapping a huge BO holds the page-table lock only for a batch
 * of entries at a time. The CP waits for that lock, holding its own, when
 * it runs a queue of the mapping process, so a map holding it for the
 * whole BO stalled every process's queues for as long as the map took. A
 * victim's dispatch latency with an attacker that keeps one queue busy and
 * maps and unmaps a MAPPER_BYTES BO in a loop must stay near the latency
 * with the busy queue alone, well under the time one map takes. It is a
 * guard, not proof: with the lock held for the whole BO the victim's
 * median was 186, 60 and 13 ms in three runs (this bound caught 1 of
 * them), in batches 11, 12 and 13 ms; the debugfs counters of the memory
 * tests are what shows the batches.
 */
TEST_F_TIMEOUT(pre, victim_latency_while_other_process_maps_huge_bo, 600)
{
	uint64_t lat1, latm, map_us, maps, bound;
	struct attacker *a;
	struct kg_signal sig;
	struct kg_queue q;
	struct kg_bo buf;

	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &buf));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, AQL, 1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));

	ASSERT_GT(attacker_start(a, 1), 0);
	ASSERT_STREQ("", a->msg);
	lat1 = victim_latency_us(&q, &sig, &buf);
	attacker_stop(a);
	ASSERT_NE(0, lat1);

	ASSERT_GT(attacker_start(a, FAIR_MAPPER), 0);
	ASSERT_STREQ("", a->msg);
	/* Measure once the mapper is under way. */
	while (!a->maps)
		kg_sleep_ms(10);
	latm = victim_latency_us(&q, &sig, &buf);
	maps = a->maps;
	map_us = a->map_us;
	attacker_stop(a);
	ASSERT_NE(UINT64_MAX, maps) TH_LOG("the mapper failed");
	ASSERT_NE(0, latm);
	map_us /= maps;

	TH_LOG("victim dispatch latency (median of %d): %lu us with 1 busy queue in another process, %lu us while it also maps and unmaps %llu MiB (%lu us a map, %lu maps)",
	       FAIR_SAMPLES, (unsigned long)lat1, (unsigned long)latm,
	       MAPPER_BYTES / KT_MIB, (unsigned long)map_us,
	       (unsigned long)maps);
	bound = 3 * lat1 + map_us / 4;
	EXPECT_LT(latm, bound) TH_LOG("bound %lu us", (unsigned long)bound);
	ASSERT_EQ(0, kg_queue_free(&q));
	ASSERT_EQ(0, kg_bo_free(&self->rt, &buf));
	munmap(a, sizeof(*a));
}

/*
 * Queue operations of other processes take the CP lock, and the CP stands
 * back for them between turns, but only once per turn: processes calling
 * UPDATE_QUEUE in a loop must not stall the CP for everyone. A victim's
 * loop dispatch of about HAMMER_RUN_MS takes not much longer while
 * HAMMER_PROCS processes hammer (their threads do compete for the CPU
 * with the CP thread) than alone. Waiting until no one waits for the lock
 * lets the CP stand back up to 100 ms a turn while they keep coming.
 */
#define HAMMER_RUN_MS	300
#define HAMMER_N	(16 * 1024)

static uint64_t loop_run_ms(struct kg_queue *q, struct kg_bo *buf,
			    struct kg_signal *sig, uint32_t steps)
{
	struct kfdsim_args_loop args = { .buf = buf->va, .steps = steps };
	uint64_t t0 = kg_now_ms();

	kg_signal_store(sig, 1);
	if (kg_dispatch(q, KFDSIM_KERNEL_LOOP, &args, sizeof(args), HAMMER_N,
			256, sig->va) ||
	    kg_signal_wait(sig, 0, KG_TIMEOUT_MS))
		return 0;
	return kg_now_ms() - t0;
}

TEST_F_TIMEOUT(pre, update_queue_hammering_does_not_stall_cp, 600)
{
	uint64_t alone, hammered, updates = 0, bound;
	struct attacker *a;
	struct kg_signal sig;
	struct kg_queue q;
	struct kg_bo buf;
	uint32_t steps;

	int i;

	a = mmap(NULL, HAMMER_PROCS * sizeof(*a), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_EQ(0, kg_loop_steps_for(&self->rt, 0, HAMMER_N, 256,
				       HAMMER_RUN_MS, &steps));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * HAMMER_N,
			       KT_GTT | KT_WRITABLE, KG_NO_CPU, &buf));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, AQL, 1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));

	alone = loop_run_ms(&q, &buf, &sig, steps);
	ASSERT_NE(0, alone);
	for (i = 0; i < HAMMER_PROCS; i++) {
		ASSERT_GT(attacker_start(&a[i], -1), 0);
		ASSERT_STREQ("", a[i].msg);
	}
	kg_sleep_ms(100);
	for (i = 0; i < HAMMER_PROCS; i++)
		updates -= a[i].updates;
	hammered = loop_run_ms(&q, &buf, &sig, steps);
	for (i = 0; i < HAMMER_PROCS; i++) {
		updates += a[i].updates;
		attacker_stop(&a[i]);
	}
	ASSERT_NE(0, hammered);

	TH_LOG("victim loop dispatch: %lu ms alone, %lu ms while %d other processes made %lu UPDATE_QUEUE calls",
	       (unsigned long)alone, (unsigned long)hammered, HAMMER_PROCS,
	       (unsigned long)updates);
	EXPECT_GT(updates, 100) TH_LOG("the attacker did not hammer");
	/*
	 * Three busy hammering processes share the guest's two CPUs with the
	 * CP thread, so the victim's loop gets about half a CPU whatever the
	 * CP does (7.6x its time alone was seen on a quiet host); the stall
	 * this guards against (about 100 ms per 2 ms turn) is 50x.
	 */
	bound = (10 + kt_timeout_scale()) * alone;
	EXPECT_LT(hammered, bound) TH_LOG("bound %lu ms", (unsigned long)bound);
	ASSERT_EQ(0, kg_queue_free(&q));
	ASSERT_EQ(0, kg_bo_free(&self->rt, &buf));
	munmap(a, HAMMER_PROCS * sizeof(*a));
}

TEST_HARNESS_MAIN
