// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency and death around the CRIU ioctl, and a multi-threaded memory
 * stress:
 *
 *  - threads of one process ALLOC/MAP/UNMAP/FREE and CREATE/DESTROY events
 *    and queues at once;
 *  - a multi-threaded target keeps doing so, and a thread of it sleeps in
 *    WAIT_EVENTS, while it is checkpointed again and again (PROCESS_INFO,
 *    CHECKPOINT, UNPAUSE); every CHECKPOINT either succeeds with buckets
 *    that add up or fails with EINVAL (the process changed since
 *    PROCESS_INFO), at least one succeeds, the target's work never fails
 *    and the sleeper wakes with the right result afterwards;
 *  - threads of a restoring process use /dev/kfd while it RESTOREs, which
 *    succeeds every time, and their work succeeds once it did;
 *  - a restored process allocates between RESTORE and RESUME;
 *  - an eviction (debugfs) during a CRIU pause, in both orders: the queues
 *    run only once both ended;
 *  - the target is SIGKILLed at moments spread over a CHECKPOINT's
 *    duration, and the restoring process over a RESTORE's; the clock shows
 *    which kills landed while the ioctl ran, and some must have.
 *
 * After each test every debugfs counter is back where it started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kt_harness.h"
#include "criu_work.h"

#define M	self->msg, sizeof(self->msg)
#define NCHURN	4

/* ---- churn: threads that use /dev/kfd until told to stop ---- */

struct churn {
	int kfd;
	uint32_t ids[KT_MAX_GPUS];
	int ngpus;
	atomic_int stop;
	atomic_int errors;
	atomic_long ops;
	char err[256];
	uint64_t max_iters;	/* 0: until stop */
};

struct churn_arg {
	struct churn *c;
	int idx;
};

static void churn_fail(struct churn *c, const char *what, int ret)
{
	if (atomic_fetch_add(&c->errors, 1) == 0)
		snprintf(c->err, sizeof(c->err), "%s: %s", what,
			 strerror(-ret));
}

/* Thread @idx: BOs at its own VAs (slot 16 + idx), on every GPU. */
static void *churn_mem(void *arg)
{
	struct churn_arg *a = arg;
	struct churn *c = a->c;
	uint64_t h, va, i;
	int g, ret;

	for (i = 0; !atomic_load(&c->stop) &&
	     (!c->max_iters || i < c->max_iters); i++) {
		g = (int)(i % (uint64_t)c->ngpus);
		va = KT_VA(16 + a->idx) + (i % 64) * 0x100000;
		ret = kt_alloc(c->kfd, c->ids[g], va, 64 * 1024,
			       (i & 1 ? KT_VRAM : KT_GTT) | KT_WRITABLE, &h,
			       NULL);
		if (ret) {
			churn_fail(c, "ALLOC", ret);
			continue;
		}
		ret = kt_map(c->kfd, h, c->ids, (uint32_t)c->ngpus);
		if (ret)
			churn_fail(c, "MAP", ret);
		else if ((ret = kt_unmap(c->kfd, h, c->ids,
					 (uint32_t)c->ngpus)))
			churn_fail(c, "UNMAP", ret);
		ret = kt_free(c->kfd, h);
		if (ret)
			churn_fail(c, "FREE", ret);
		atomic_fetch_add(&c->ops, 1);
	}
	return NULL;
}

/* Events and SDMA queues (with their own ring and pointers). */
static void *churn_objs(void *arg)
{
	struct churn_arg *a = arg;
	struct churn *c = a->c;
	struct kfd_ioctl_create_event_args ev;
	struct kfd_ioctl_create_queue_args q;
	uint64_t ring, ctl, va = KT_VA(24 + a->idx), i;
	int ret;

	ret = kt_alloc(c->kfd, c->ids[0], va, 64 * 1024, KT_GTT | KT_WRITABLE,
		       &ring, NULL);
	if (!ret)
		ret = kt_map(c->kfd, ring, c->ids, 1);
	ctl = ring;
	if (ret) {
		churn_fail(c, "queue BO", ret);
		return NULL;
	}
	for (i = 0; !atomic_load(&c->stop) &&
	     (!c->max_iters || i < c->max_iters); i++) {
		ret = kg_event_new(c->kfd, KFD_IOC_EVENT_SIGNAL, i & 1, 0, &ev);
		if (ret) {
			churn_fail(c, "CREATE_EVENT", ret);
			continue;
		}
		memset(&q, 0, sizeof(q));
		q.gpu_id = c->ids[0];
		q.queue_type = KFD_IOC_QUEUE_TYPE_SDMA;
		q.ring_base_address = va;
		q.ring_size = 4096;
		q.read_pointer_address = va + 32768;
		q.write_pointer_address = va + 32768 + 8;
		q.queue_percentage = 100;
		ret = kt_ioctl(c->kfd, AMDKFD_IOC_CREATE_QUEUE, &q);
		if (ret) {
			churn_fail(c, "CREATE_QUEUE", ret);
		} else {
			struct kfd_ioctl_destroy_queue_args d = {
				.queue_id = q.queue_id,
			};

			ret = kt_ioctl(c->kfd, AMDKFD_IOC_DESTROY_QUEUE, &d);
			if (ret)
				churn_fail(c, "DESTROY_QUEUE", ret);
		}
		ret = kg_event_destroy(c->kfd, ev.event_id);
		if (ret)
			churn_fail(c, "DESTROY_EVENT", ret);
		atomic_fetch_add(&c->ops, 1);
	}
	kt_unmap(c->kfd, ctl, c->ids, 1);
	kt_free(c->kfd, ring);
	return NULL;
}

static int churn_start(struct churn *c, pthread_t *th, struct churn_arg *args)
{
	int i;

	for (i = 0; i < NCHURN; i++) {
		args[i].c = c;
		args[i].idx = i;
		if (pthread_create(&th[i], NULL, i < NCHURN / 2 ? churn_mem :
				   churn_objs, &args[i]))
			return -1;
	}
	return 0;
}

static void churn_join(struct churn *c, pthread_t *th)
{
	int i;

	atomic_store(&c->stop, 1);
	for (i = 0; i < NCHURN; i++)
		pthread_join(th[i], NULL);
}

static int churn_init(struct churn *c, const struct kg_rt *rt)
{
	memset(c, 0, sizeof(*c));
	c->kfd = rt->e.kfd;
	c->ngpus = rt->e.ngpus;
	memcpy(c->ids, rt->ids, sizeof(c->ids));
	return 0;
}

/* ---- the fixture ---- */

FIXTURE(stress) {
	struct cw_shared *sh;
	struct kt_props base;
	struct cw_target w, r;
	struct cw_image img;
	int tfd;
	char msg[4096];
};

FIXTURE_SETUP(stress)
{
	struct kt_gpu gpus[KT_MAX_GPUS];
	char err[128];

	self->tfd = -1;
	self->w.sock = -1;
	self->r.sock = -1;
	ASSERT_EQ(0, geteuid()) TH_LOG("needs root");
	ASSERT_LE(CW_NGPUS, kt_gpus(gpus, KT_MAX_GPUS));
	self->sh = cw_shared_new();
	ASSERT_NE(NULL, self->sh);
	ASSERT_EQ(0, kt_counters(&self->base, err, sizeof(err)))
		TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(stress)
{
	cw_kill(&self->w);
	cw_kill(&self->r);
	if (self->tfd >= 0)
		close(self->tfd);
	cw_image_free(&self->img);
}

#define ASSERT_BASELINE(what) \
	ASSERT_EQ(0, cw_counters_same(&self->base, what, M)) \
		TH_LOG("%s", self->msg)

/* ---- 1. threads of one process ---- */

TEST_F_TIMEOUT(stress, threads_alloc_map_free_queues_events, 300)
{
	struct churn_arg args[NCHURN];
	pthread_t th[NCHURN];
	struct churn c;
	struct kg_rt rt;

	ASSERT_EQ(0, kg_open(&rt));
	churn_init(&c, &rt);
	c.max_iters = 150;
	ASSERT_EQ(0, churn_start(&c, th, args));
	for (int i = 0; i < NCHURN; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, atomic_load(&c.errors)) TH_LOG("%s", c.err);
	EXPECT_EQ(NCHURN * 150, atomic_load(&c.ops));
	kg_close(&rt);
	ASSERT_BASELINE("after the threads");
}

/* ---- 2. a multi-threaded target checkpointed while it works ---- */

struct mt_shared {
	atomic_int ready;
	atomic_int stop;
	atomic_int kfd_fd;
	atomic_int event;
	int32_t wait_ret;
	uint32_t wait_result;
	int32_t errors;
	long ops;
	char err[256];
};

struct sleeper {
	int kfd;
	uint32_t event;
	int ret;
	uint32_t result;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	struct kfd_event_data ev = { .event_id = s->event };

	/* No timeout: only SET_EVENT ends this. */
	s->ret = kg_wait(s->kfd, &ev, 1, true, 0xffffffffu, &s->result);
	return NULL;
}

static void mt_target(struct mt_shared *m)
{
	struct kfd_ioctl_create_event_args ev;
	struct churn_arg args[NCHURN];
	pthread_t th[NCHURN], st;
	struct sleeper s = { 0 };
	struct churn c;
	struct kg_rt rt;

	if (kg_open(&rt) ||
	    kg_event_new(rt.e.kfd, KFD_IOC_EVENT_SIGNAL, false, 0, &ev))
		_exit(2);
	churn_init(&c, &rt);
	s.kfd = rt.e.kfd;
	s.event = ev.event_id;
	if (pthread_create(&st, NULL, sleeper_main, &s) ||
	    churn_start(&c, th, args))
		_exit(3);
	atomic_store(&m->kfd_fd, rt.e.kfd);
	atomic_store(&m->event, (int)ev.event_id);
	atomic_store(&m->ready, 1);
	while (!atomic_load(&m->stop))
		kg_sleep_ms(5);
	churn_join(&c, th);
	kg_event_set(rt.e.kfd, ev.event_id);
	pthread_join(st, NULL);
	m->wait_ret = s.ret;
	m->wait_result = s.result;
	m->errors = atomic_load(&c.errors);
	m->ops = atomic_load(&c.ops);
	memcpy(m->err, c.err, sizeof(m->err));
	kg_close(&rt);
	_exit(0);
}

/*
 * Rounds of checkpointing the busy target: MT_ROUNDS, then more (up to
 * MT_ROUNDS_MAX) as long as no CHECKPOINT has completed yet, so that the
 * test cannot pass on refusals alone.
 */
#define MT_ROUNDS	30
#define MT_ROUNDS_MAX	300

TEST_F_TIMEOUT(stress, checkpoint_a_busy_multithreaded_target, 900)
{
	struct mt_shared *m;
	struct kc_image k;
	int ok = 0, failed = 0, round, ret, status;
	pid_t pid;

	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	memset(m, 0, sizeof(*m));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		mt_target(m);
	self->w.pid = pid;	/* the teardown kills it on failure */
	while (!atomic_load(&m->ready))
		kg_sleep_ms(5);
	/* As criu: the tracer of a running target. */
	ASSERT_EQ(0, kc_seize(pid, false));
	self->tfd = kc_getfd(pid, atomic_load(&m->kfd_fd));
	ASSERT_LE(0, self->tfd);

	for (round = 0; round < MT_ROUNDS || (!ok && round < MT_ROUNDS_MAX);
	     round++) {
		memset(&k, 0, sizeof(k));
		ret = kc_process_info(self->tfd, &k);
		ASSERT_EQ(0, ret) TH_LOG("PROCESS_INFO: %s", strerror(-ret));
		ret = kc_checkpoint(self->tfd, &k);
		if (!ret) {
			/* Buckets that add up: each BO on a device. */
			for (uint32_t i = 0; i < k.num_bos; i++) {
				uint32_t d;

				for (d = 0; d < k.num_devices; d++)
					if (k.devices[d].user_gpu_id ==
					    k.bos[i].gpu_id)
						break;
				EXPECT_LT(d, k.num_devices);
			}
			ASSERT_NE(NULL, kc_priv_find(&k, KC_OBJ_PROCESS, 0));
			kc_close_dmabufs(k.bos, k.num_bos);
			ok++;
		} else {
			/* The process changed since PROCESS_INFO. */
			EXPECT_EQ(-EINVAL, ret);
			failed++;
		}
		kc_image_free(&k);
		ret = kc_unpause(self->tfd);
		/* A failed CHECKPOINT ends the pause itself. */
		EXPECT_EQ(0, ret && ret != -EINVAL);
		kg_sleep_ms(10);
	}
	TH_LOG("%d checkpoints of a busy target: %d complete, %d refused",
	       round, ok, failed);
	/* Refusals alone would test nothing but the refusal. */
	EXPECT_LT(0, ok) TH_LOG("no CHECKPOINT of the busy target completed");
	ASSERT_EQ(0, kc_detach(pid));
	atomic_store(&m->stop, 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	self->w.pid = 0;
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("target status 0x%x", status);
	EXPECT_EQ(0, m->errors) TH_LOG("the target's own work: %s", m->err);
	EXPECT_LT(0, m->ops);
	EXPECT_EQ(0, m->wait_ret) TH_LOG("WAIT_EVENTS across the checkpoints: %s",
					 strerror(-m->wait_ret));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, m->wait_result);
	TH_LOG("the target did %ld ALLOC/MAP or queue/event rounds meanwhile",
	       m->ops);
	close(self->tfd);
	self->tfd = -1;
	munmap(m, sizeof(*m));
	ASSERT_BASELINE("after the target exited");
}

/* ---- 3. RESTORE while other threads of the process use /dev/kfd ---- */

struct rr_arg {
	const struct cw_image *img;
};

static int restore_with_churn(void *arg, char *msg, size_t len)
{
	const struct rr_arg *ra = arg;
	const struct cw_image *img = ra->img;
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	struct kfd_criu_bo_bucket *bos;
	struct churn_arg args[NCHURN];
	pthread_t th[NCHURN];
	struct churn c;
	uint64_t t0;
	uint32_t i, nfd = 0;
	int ret, fds;

	if (cw_map_userptrs(img, false, msg, len))
		return -1;
	memset(&c, 0, sizeof(c));
	c.kfd = kt_open_kfd();
	KT_CHECK(c.kfd >= 0, "open /dev/kfd");
	if (cw_devices(img, dev, msg, len))
		return -1;
	c.ngpus = (int)img->k.num_devices;
	for (int i = 0; i < c.ngpus; i++)
		c.ids[i] = dev[i].user_gpu_id;
	bos = calloc(img->k.num_bos + 1, sizeof(*bos));
	KT_CHECK(bos, "out of memory");
	fds = kc_count_fds();
	/*
	 * The threads' ioctls fail as long as the process has no VM (the
	 * queue threads give up at once), so they create nothing that would
	 * make the process not fresh: RESTORE must succeed.
	 */
	c.max_iters = 0;
	KT_CHECK(!churn_start(&c, th, args), "threads");
	kg_sleep_ms(2);
	ret = kc_restore(c.kfd, &img->k, dev, bos);
	/* Restored, the process has a VM: the BO threads' rounds succeed. */
	t0 = kg_now_ms();
	while (!ret && atomic_load(&c.ops) < NCHURN / 2 &&
	       kg_now_ms() - t0 < KG_TIMEOUT_MS)
		kg_sleep_ms(5);
	churn_join(&c, th);
	for (i = 0; !ret && i < img->k.num_bos; i++) {
		if (!kc_bo_has_dmabuf(&img->k.bos[i]))
			continue;
		KT_CHECK(bos[i].dmabuf_fd != KC_INVALID_FD &&
			 fcntl((int)bos[i].dmabuf_fd, F_GETFD) >= 0,
			 "restored BO %u has no dma-buf fd", i);
		nfd++;
	}
	if (!ret)
		kc_close_dmabufs(bos, img->k.num_bos);
	KT_CHECK(kc_count_fds() == fds, "%d fds left (RESTORE: %s)",
		 kc_count_fds() - fds, strerror(-ret));
	KT_CHECK(!ret, "RESTORE while %d threads used /dev/kfd: %s", NCHURN,
		 strerror(-ret));
	KT_CHECK(atomic_load(&c.ops) >= NCHURN / 2,
		 "the threads' BO rounds on the restored process: %ld done (%s)",
		 atomic_load(&c.ops), c.err);
	snprintf(msg, len,
		 "RESTORE ok (%u dma-bufs), then %ld thread rounds; %d thread errors, the first: %s",
		 nfd, atomic_load(&c.ops), atomic_load(&c.errors), c.err);
	return 0;
}

TEST_F_TIMEOUT(stress, restore_while_threads_use_kfd, 600)
{
	struct rr_arg ra = { .img = &self->img };
	int i;

	ASSERT_EQ(0, cw_checkpoint_worker(&self->w, self->sh, 0, CW_CK_STOP,
					  &self->img, M))
		TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the worker died");
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, kt_run_child(restore_with_churn, &ra, M))
			TH_LOG("%s", self->msg);
		TH_LOG("round %d: %s", i, self->msg);
		ASSERT_BASELINE("after the restoring process exited");
	}
}

/* ---- 4. ioctls between RESTORE and RESUME ---- */

TEST_F_TIMEOUT(stress, alloc_between_restore_and_resume, 600)
{
	ASSERT_EQ(0, cw_checkpoint_worker(&self->w, self->sh, 200, CW_CK_STOP,
					  &self->img, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_start_restored(&self->r, self->sh, &self->img, 0, M))
		TH_LOG("%s", self->msg);
	/* Restored, not resumed: a new BO is allowed (as upstream). */
	ASSERT_EQ(0, cw_command(&self->r, CW_CMD_ALLOC, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_send_resume(self->r.pid, M)) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_resumed(&self->r, M)) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_command(&self->r, CW_CMD_FINISH, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_quit(&self->r, M)) TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the restored process exited");
}

/* ---- 5. an eviction during a CRIU pause ---- */

static int loop_evicted(FIXTURE_DATA(stress) *self)
{
	struct kg_qinfo qi;

	if (cw_qinfo(self->w.pid, &self->sh->lay, CW_Q_LOOP, &qi))
		return -1;
	return qi.evicted;
}

TEST_F_TIMEOUT(stress, eviction_during_a_criu_pause, 600)
{
	struct kc_image k = { 0 };
	int order;

	ASSERT_EQ(0, cw_start_worker(&self->w, self->sh, 2000, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, kc_seize(self->w.pid, false));
	self->tfd = kc_getfd(self->w.pid, self->sh->lay.kfd_fd);
	ASSERT_LE(0, self->tfd);
	for (order = 0; order < 2; order++) {
		ASSERT_EQ(0, loop_evicted(self));
		if (order) {
			ASSERT_EQ(0, kg_evict(self->w.pid));
			ASSERT_EQ(0, kc_process_info(self->tfd, &k));
		} else {
			ASSERT_EQ(0, kc_process_info(self->tfd, &k));
			ASSERT_EQ(0, kg_evict(self->w.pid));
		}
		ASSERT_EQ(1, loop_evicted(self));
		if (order) {
			/* The eviction ends first: still paused. */
			ASSERT_EQ(0, kg_restore(self->w.pid));
			ASSERT_EQ(1, loop_evicted(self));
			ASSERT_EQ(0, kc_unpause(self->tfd));
		} else {
			/* The pause ends first: still evicted. */
			ASSERT_EQ(0, kc_unpause(self->tfd));
			ASSERT_EQ(1, loop_evicted(self))
				TH_LOG("UNPAUSE ended an eviction it did not start");
			ASSERT_EQ(0, kg_restore(self->w.pid));
		}
		ASSERT_EQ(0, loop_evicted(self));
	}
	ASSERT_EQ(0, kc_detach(self->w.pid));
	ASSERT_EQ(0, cw_command(&self->w, CW_CMD_FINISH, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_quit(&self->w, M)) TH_LOG("%s", self->msg);
	close(self->tfd);
	self->tfd = -1;
	ASSERT_BASELINE("after the worker exited");
}

/* ---- 6. death at every stage ---- */

/* CLOCK_MONOTONIC in microseconds: one clock for every process. */
static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Kills are spread over [0, KILL_SPREAD_PCT% of @span]. */
#define KILL_SPREAD_PCT	120

static unsigned int kill_delay_us(int round, int rounds, uint64_t span)
{
	return (unsigned int)(span * KILL_SPREAD_PCT / 100 *
			      (uint64_t)round / (uint64_t)rounds);
}

struct killer {
	pid_t pid;
	unsigned int delay_us;
	atomic_int ready;	/* the killer runs */
	atomic_int go;		/* set just before the ioctl is entered ... */
	uint64_t go_us;		/* ... at this time */
	uint64_t sent_us;	/* when kill() was called ... */
	uint64_t done_us;	/* ... and when it had returned */
};

/*
 * Runs (spinning) before CHECKPOINT begins and counts its delay on the
 * clock: a thread that slept would often first run after CHECKPOINT
 * ended, which does not give up its CPU.
 */
static void *killer_main(void *arg)
{
	struct killer *k = arg;

	atomic_store(&k->ready, 1);
	while (!atomic_load(&k->go))
		;
	while (now_us() < k->go_us + k->delay_us)
		;
	k->sent_us = now_us();
	kill(k->pid, SIGKILL);
	k->done_us = now_us();
	return NULL;
}

/*
 * Rounds: CK_KILL_ROUNDS, then more (up to CK_KILL_ROUNDS_MAX) as long as
 * no kill has landed inside CHECKPOINT yet.
 */
#define CK_KILL_ROUNDS		12
#define CK_KILL_ROUNDS_MAX	48

/*
 * The target is SIGKILLed while CHECKPOINT runs: the kill is sent at
 * moments spread over the shortest CHECKPOINT so far, and counted as
 * inside when it was sent after the ioctl was entered and kill() returned
 * (the target marked for death) before the ioctl returned.
 */
TEST_F_TIMEOUT(stress, target_killed_while_checkpointing, 1800)
{
	uint64_t longest = 0, shortest = 0, t_in, t_out;
	int round, ok = 0, failed = 0, inside = 0;
	struct killer kl;
	pthread_t th;

	for (round = 0; round < CK_KILL_ROUNDS ||
	     (!inside && round < CK_KILL_ROUNDS_MAX); round++) {
		struct kc_image k = { 0 };
		bool in;
		int ret;

		ASSERT_EQ(0, cw_start_worker(&self->w, self->sh, 2000, M))
			TH_LOG("%s", self->msg);
		ASSERT_EQ(0, kc_seize(self->w.pid, false));
		self->tfd = kc_getfd(self->w.pid, self->sh->lay.kfd_fd);
		ASSERT_LE(0, self->tfd);
		memset(&kl, 0, sizeof(kl));
		kl.pid = self->w.pid;
		kl.delay_us = kill_delay_us(round % CK_KILL_ROUNDS,
					    CK_KILL_ROUNDS, shortest);
		ASSERT_EQ(0, kc_process_info(self->tfd, &k));
		ASSERT_EQ(0, pthread_create(&th, NULL, killer_main, &kl));
		while (!atomic_load(&kl.ready))
			sched_yield();
		t_in = now_us();
		kl.go_us = t_in;
		atomic_store(&kl.go, 1);
		ret = kc_checkpoint(self->tfd, &k);
		t_out = now_us();
		pthread_join(th, NULL);
		if (t_out - t_in > longest)
			longest = t_out - t_in;
		if (!shortest || t_out - t_in < shortest)
			shortest = t_out - t_in;
		in = kl.sent_us >= t_in && kl.done_us <= t_out;
		inside += in;
		if (!ret) {
			kc_close_dmabufs(k.bos, k.num_bos);
			ok++;
		} else {
			failed++;
		}
		TH_LOG("round %d: kill sent %lld us and done %lld us after entry (delay %u us), CHECKPOINT took %llu us (%s): %s",
		       round, (long long)(kl.sent_us - t_in),
		       (long long)(kl.done_us - t_in), kl.delay_us,
		       (unsigned long long)(t_out - t_in),
		       ret ? strerror(-ret) : "ok", in ? "inside" : "outside");
		kc_image_free(&k);
		cw_kill(&self->w);
		close(self->tfd);
		self->tfd = -1;
		ASSERT_BASELINE("after the killed target and its checkpoint");
	}
	TH_LOG("%d of %d targets killed during CHECKPOINT (it took %llu to %llu us): %d checkpoints complete, %d failed",
	       inside, round, (unsigned long long)shortest,
	       (unsigned long long)longest, ok, failed);
	EXPECT_LT(0, inside) TH_LOG("no kill landed inside CHECKPOINT");
}

/* What a restorer tells the test about its RESTORE (shared memory). */
struct rst_times {
	uint64_t enter_us;	/* just before the ioctl, 0 until then */
	uint64_t return_us;	/* just after it, 0 until then */
	int32_t ret;
};

/* The process running RESTORE: stamps its times, then waits to die. */
static int restore_until_killed(const struct cw_image *img,
				struct rst_times *t)
{
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	struct kfd_criu_bo_bucket *bos;
	char msg[256];
	int kfd, ret;

	if (cw_map_userptrs(img, false, msg, sizeof(msg)))
		return 1;
	kfd = kt_open_kfd();
	if (kfd < 0 || cw_devices(img, dev, msg, sizeof(msg)))
		return 1;
	bos = calloc(img->k.num_bos + 1, sizeof(*bos));
	if (!bos)
		return 1;
	__atomic_store_n(&t->enter_us, now_us(), __ATOMIC_SEQ_CST);
	ret = kc_restore(kfd, &img->k, dev, bos);
	__atomic_store_n(&t->return_us, now_us(), __ATOMIC_SEQ_CST);
	t->ret = ret;
	for (;;)
		pause();
}

/* As for CHECKPOINT: more rounds (up to the MAX) until a kill was inside. */
#define RST_KILL_ROUNDS		20
#define RST_KILL_ROUNDS_MAX	60

/*
 * The process running RESTORE is SIGKILLed at moments spread over the
 * longest RESTORE so far (the first one runs to its end to measure it): a
 * kill is inside when it was sent after the restorer entered the ioctl and
 * the restorer never came back from it (or came back after kill()
 * returned: the kill was then pending before it left the kernel).
 */
TEST_F_TIMEOUT(stress, restorer_killed_inside_restore, 1800)
{
	uint64_t longest = 0, t0, sent, done;
	int round, status, finished = 0, inside = 0;
	struct rst_times *t;
	unsigned int delay;
	pid_t pid;

	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, t);
	ASSERT_EQ(0, cw_checkpoint_worker(&self->w, self->sh, 0, CW_CK_STOP,
					  &self->img, M))
		TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the worker died");
	for (round = -1; round < RST_KILL_ROUNDS ||
	     (!inside && round < RST_KILL_ROUNDS_MAX); round++) {
		memset(t, 0, sizeof(*t));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(restore_until_killed(&self->img, t));
		/* Wait for the restorer to enter RESTORE. */
		t0 = kg_now_ms();
		while (!__atomic_load_n(&t->enter_us, __ATOMIC_SEQ_CST) &&
		       kg_now_ms() - t0 < KG_TIMEOUT_MS &&
		       waitpid(pid, &status, WNOHANG) == 0)
			usleep(100);
		ASSERT_NE(0, __atomic_load_n(&t->enter_us, __ATOMIC_SEQ_CST))
			TH_LOG("the restorer never reached RESTORE");
		if (round < 0) {
			/* Calibration: let the RESTORE finish. */
			while (!__atomic_load_n(&t->return_us,
						__ATOMIC_SEQ_CST) &&
			       kg_now_ms() - t0 < KG_TIMEOUT_MS)
				usleep(100);
			ASSERT_EQ(0, t->ret) TH_LOG("RESTORE: %s",
						    strerror(-t->ret));
			delay = 0;
		} else {
			delay = kill_delay_us(round % RST_KILL_ROUNDS,
					      RST_KILL_ROUNDS, longest);
			/* Counted from the entry, on the clock (no sleep). */
			while (now_us() < t->enter_us + delay)
				;
		}
		sent = now_us();
		kill(pid, SIGKILL);
		done = now_us();
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFSIGNALED(status) &&
			    WTERMSIG(status) == SIGKILL)
			TH_LOG("restorer status 0x%x", status);
		if (t->return_us) {
			ASSERT_EQ(0, t->ret) TH_LOG("RESTORE: %s",
						    strerror(-t->ret));
			if (t->return_us - t->enter_us > longest)
				longest = t->return_us - t->enter_us;
		}
		if (round < 0)
			continue;
		if (t->return_us)
			finished++;
		if (sent >= t->enter_us &&
		    (!t->return_us || t->return_us >= done))
			inside++;
		TH_LOG("round %d: kill %u us after entry: %s", round, delay,
		       !t->return_us ? "RESTORE never returned" :
		       t->return_us >= done ? "RESTORE returned after the kill" :
		       "RESTORE had returned");
		ASSERT_BASELINE("after the killed restorer");
	}
	TH_LOG("%d of %d restorers killed inside RESTORE (the longest took %llu us), %d had finished it",
	       inside, round, (unsigned long long)longest, finished);
	EXPECT_LT(0, inside) TH_LOG("no kill landed inside RESTORE");
	munmap(t, sizeof(*t));
}

TEST_HARNESS_MAIN
