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
 *    that add up or fails with an errno, the target's work never fails and
 *    the sleeper wakes with the right result afterwards;
 *  - threads of a restoring process use /dev/kfd while it RESTOREs;
 *  - a restored process allocates between RESTORE and RESUME;
 *  - an eviction (debugfs) during a CRIU pause, in both orders: the queues
 *    run only once both ended;
 *  - the target is SIGKILLed at random moments while CHECKPOINT runs, and
 *    the restoring process while RESTORE runs.
 *
 * After each test every debugfs counter is back where it started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
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

TEST_F_TIMEOUT(stress, checkpoint_a_busy_multithreaded_target, 600)
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

	for (round = 0; round < 30; round++) {
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
	TH_LOG("30 checkpoints of a busy target: %d complete, %d refused",
	       ok, failed);
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
	/* The threads' ioctls fail as long as the process has no VM. */
	c.max_iters = 0;
	KT_CHECK(!churn_start(&c, th, args), "threads");
	kg_sleep_ms(2);
	ret = kc_restore(c.kfd, &img->k, dev, bos);
	churn_join(&c, th);
	if (!ret)
		kc_close_dmabufs(bos, img->k.num_bos);
	KT_CHECK(kc_count_fds() == fds, "%d fds left (RESTORE: %s)",
		 kc_count_fds() - fds, strerror(-ret));
	snprintf(msg, len, "RESTORE %s, %ld thread rounds, %d thread errors",
		 ret ? strerror(-ret) : "ok", atomic_load(&c.ops),
		 atomic_load(&c.errors));
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

struct killer {
	pid_t pid;
	unsigned int delay_us;
};

static void *killer_main(void *arg)
{
	struct killer *k = arg;

	usleep(k->delay_us);
	kill(k->pid, SIGKILL);
	return NULL;
}

/* The target is SIGKILLed at a moment CHECKPOINT is likely running. */
TEST_F_TIMEOUT(stress, target_killed_while_checkpointing, 900)
{
	struct kt_props mid;
	struct killer kl;
	pthread_t th;
	char err[128];
	int round, ok = 0, failed = 0;

	for (round = 0; round < 12; round++) {
		struct kc_image k = { 0 };
		int ret;

		ASSERT_EQ(0, cw_start_worker(&self->w, self->sh, 2000, M))
			TH_LOG("%s", self->msg);
		ASSERT_EQ(0, kc_seize(self->w.pid, false));
		self->tfd = kc_getfd(self->w.pid, self->sh->lay.kfd_fd);
		ASSERT_LE(0, self->tfd);
		ASSERT_EQ(0, kc_process_info(self->tfd, &k));
		kl.pid = self->w.pid;
		kl.delay_us = (unsigned int)round * 150;
		ASSERT_EQ(0, pthread_create(&th, NULL, killer_main, &kl));
		ret = kc_checkpoint(self->tfd, &k);
		pthread_join(th, NULL);
		if (!ret) {
			kc_close_dmabufs(k.bos, k.num_bos);
			ok++;
		} else {
			failed++;
		}
		kc_image_free(&k);
		cw_kill(&self->w);
		close(self->tfd);
		self->tfd = -1;
		ASSERT_EQ(0, kt_counters(&mid, err, sizeof(err)));
		ASSERT_BASELINE("after the killed target and its checkpoint");
	}
	TH_LOG("12 targets killed 0..1.65 ms into CHECKPOINT: %d checkpoints complete, %d failed",
	       ok, failed);
}

/* The process running RESTORE is SIGKILLed after 0..N ms. */
static int restore_until_killed(const struct cw_image *img)
{
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	struct kfd_criu_bo_bucket *bos;
	char msg[256];
	int kfd;

	if (cw_map_userptrs(img, false, msg, sizeof(msg)))
		return 1;
	kfd = kt_open_kfd();
	if (kfd < 0 || cw_devices(img, dev, msg, sizeof(msg)))
		return 1;
	bos = calloc(img->k.num_bos + 1, sizeof(*bos));
	if (!bos)
		return 1;
	return kc_restore(kfd, &img->k, dev, bos) ? 1 : 0;
}

TEST_F_TIMEOUT(stress, restorer_killed_inside_restore, 900)
{
	int round, status, finished = 0;
	pid_t pid;

	ASSERT_EQ(0, cw_checkpoint_worker(&self->w, self->sh, 0, CW_CK_STOP,
					  &self->img, M))
		TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the worker died");
	for (round = 0; round < 20; round++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(restore_until_killed(&self->img) ? 1 : 0);
		usleep((unsigned int)round * 1000);
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (WIFEXITED(status)) {
			ASSERT_EQ(0, WEXITSTATUS(status));
			finished++;
		}
		ASSERT_BASELINE("after the killed restorer");
	}
	TH_LOG("20 restorers killed after 0..19 ms: %d had finished RESTORE",
	       finished);
}

TEST_HARNESS_MAIN
