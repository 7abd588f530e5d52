// SPDX-License-Identifier: GPL-2.0
/*
 * KFD events as Documentation/events.rst describes them: ids, auto and
 * manual reset, wait-any and wait-all, timeouts, signals interrupting a
 * wait, the events page (driver-allocated and user BO), limits, bad ids,
 * and events fired by the simulated GPU (AQL completion signal mailboxes,
 * including the "no usable id" fallback).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kt_harness.h"
#include "kfdsim_gpu.h"

#define EV_PAGE_SIZE	(KFD_SIGNAL_EVENT_LIMIT * 8)
#define FIRST_NONSIGNAL	0x40000000u
#define INFINITE	0xffffffffu

FIXTURE(ev) {
	struct kg_rt rt;
	int kfd;
};

FIXTURE_SETUP(ev)
{
	ASSERT_EQ(0, kg_open(&self->rt));
	self->kfd = self->rt.e.kfd;
}

FIXTURE_TEARDOWN(ev)
{
	kg_close(&self->rt);
}

static uint32_t new_event(struct __test_metadata *_metadata, int kfd,
			  uint32_t type, bool auto_reset)
{
	struct kfd_ioctl_create_event_args a;

	a.event_id = 0;
	ASSERT_EQ(0, kg_event_new(kfd, type, auto_reset, 0, &a));
	return a.event_id;
}

static void *map_events(int kfd, size_t len, uint64_t offset)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, kfd,
		    (off_t)offset);
}

/* Ids and outputs of CREATE_EVENT for every supported type. */
TEST_F(ev, create_ids_and_outputs)
{
	struct kfd_ioctl_create_event_args a;
	uint32_t i;

	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(0, kg_event_new(self->kfd, KFD_IOC_EVENT_SIGNAL,
					  false, 0, &a));
		EXPECT_EQ(i, a.event_id);
		EXPECT_EQ(i, a.event_slot_index);
		EXPECT_EQ(i, a.event_trigger_data);
		EXPECT_EQ(KFD_MMAP_TYPE_EVENTS, a.event_page_offset);
	}
	ASSERT_EQ(0, kg_event_new(self->kfd, KFD_IOC_EVENT_DEBUG_EVENT, false,
				  0, &a));
	EXPECT_EQ(4, a.event_id);
	EXPECT_EQ(4, a.event_slot_index);
	EXPECT_EQ(KFD_MMAP_TYPE_EVENTS, a.event_page_offset);

	ASSERT_EQ(0, kg_event_new(self->kfd, KFD_IOC_EVENT_MEMORY, false, 0,
				  &a));
	EXPECT_EQ(FIRST_NONSIGNAL, a.event_id);
	EXPECT_EQ(FIRST_NONSIGNAL, a.event_trigger_data);
	EXPECT_EQ(0, a.event_page_offset);
	ASSERT_EQ(0, kg_event_new(self->kfd, KFD_IOC_EVENT_HW_EXCEPTION, false,
				  0, &a));
	EXPECT_EQ(FIRST_NONSIGNAL + 1, a.event_id);
	EXPECT_EQ(0, a.event_page_offset);

	/* The lowest free id is reused. */
	EXPECT_EQ(0, kg_event_destroy(self->kfd, 2));
	EXPECT_EQ(0, kg_event_destroy(self->kfd, FIRST_NONSIGNAL));
	EXPECT_EQ(2, new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL,
			       false));
	EXPECT_EQ(FIRST_NONSIGNAL,
		  new_event(_metadata, self->kfd, KFD_IOC_EVENT_MEMORY, false));
}

TEST_F(ev, unsupported_types_rejected)
{
	static const uint32_t bad[] = {
		KFD_IOC_EVENT_NODECHANGE, KFD_IOC_EVENT_DEVICESTATECHANGE,
		KFD_IOC_EVENT_SYSTEM_EVENT, KFD_IOC_EVENT_PROFILE_EVENT,
		KFD_IOC_EVENT_QUEUE_EVENT, 9, 0xffffffff,
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(-EINVAL, kg_event_new(self->kfd, bad[i], false, 0,
						NULL))
			TH_LOG("type %u", bad[i]);
	/* Nothing was created: the first signal event still gets id 1. */
	EXPECT_EQ(1, new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL,
			       false));
}

TEST_F(ev, manual_reset_stays_signaled_until_reset)
{
	uint32_t id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL,
				false);

	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, kg_wait1(self->kfd, id, 0));
	ASSERT_EQ(0, kg_event_set(self->kfd, id));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, kg_wait1(self->kfd, id, 0));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, kg_wait1(self->kfd, id, 100));
	ASSERT_EQ(0, kg_event_reset(self->kfd, id));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, kg_wait1(self->kfd, id, 0));
	/* Resetting an unsignaled event is fine. */
	EXPECT_EQ(0, kg_event_reset(self->kfd, id));
}

TEST_F(ev, auto_reset_consumed_by_one_wait)
{
	uint32_t id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL,
				true);

	ASSERT_EQ(0, kg_event_set(self->kfd, id));
	/* Setting twice does not count twice. */
	ASSERT_EQ(0, kg_event_set(self->kfd, id));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, kg_wait1(self->kfd, id, 0));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, kg_wait1(self->kfd, id, 0));
	ASSERT_EQ(0, kg_event_set(self->kfd, id));
	ASSERT_EQ(0, kg_event_reset(self->kfd, id));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, kg_wait1(self->kfd, id, 0));
}

TEST_F(ev, wait_any_vs_wait_all)
{
	struct kfd_event_data ed[2] = { 0 };
	uint32_t result;

	ed[0].event_id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL,
				   false);
	ed[1].event_id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL,
				   false);
	ASSERT_EQ(0, kg_event_set(self->kfd, ed[1].event_id));
	ASSERT_EQ(0, kg_wait(self->kfd, ed, 2, false, 0, &result));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, result);
	ASSERT_EQ(0, kg_wait(self->kfd, ed, 2, true, 100, &result));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, result);
	ASSERT_EQ(0, kg_event_set(self->kfd, ed[0].event_id));
	ASSERT_EQ(0, kg_wait(self->kfd, ed, 2, true, 0, &result));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, result);
}

/* As documented (and upstream): a timed-out wait keeps what it consumed. */
TEST_F(ev, timed_out_wait_all_keeps_consumed_auto_reset)
{
	struct kfd_event_data ed[2] = { 0 };
	uint32_t result;

	ed[0].event_id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL,
				   true);
	ed[1].event_id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL,
				   true);
	ASSERT_EQ(0, kg_event_set(self->kfd, ed[0].event_id));
	ASSERT_EQ(0, kg_wait(self->kfd, ed, 2, true, 0, &result));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, result);
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT,
		  kg_wait1(self->kfd, ed[0].event_id, 0));
}

TEST_F(ev, zero_events_complete_at_once)
{
	uint32_t result;

	ASSERT_EQ(0, kg_wait(self->kfd, NULL, 0, false, INFINITE, &result));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, result);
	ASSERT_EQ(0, kg_wait(self->kfd, NULL, 0, true, INFINITE, &result));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, result);
}

TEST_F(ev, finite_timeout_waits_at_least_that_long)
{
	uint32_t id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL,
				false);
	uint64_t t0 = kg_now_ms();

	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, kg_wait1(self->kfd, id, 300));
	EXPECT_GE(kg_now_ms() - t0, 300);
	EXPECT_LT(kg_now_ms() - t0, 10000 * (uint64_t)kt_timeout_scale());
}

struct setter {
	int kfd;
	uint32_t id;
	unsigned int delay_ms;
	bool destroy;
	pthread_t kill_thread;	/* if set, signal it first */
	int kill_sig;
	unsigned int kill_delay_ms;
	int ret;
};

static void *setter_fn(void *arg)
{
	struct setter *s = arg;

	if (s->kill_sig) {
		kg_sleep_ms(s->kill_delay_ms);
		pthread_kill(s->kill_thread, s->kill_sig);
	}
	kg_sleep_ms(s->delay_ms);
	s->ret = s->destroy ? kg_event_destroy(s->kfd, s->id) :
			      kg_event_set(s->kfd, s->id);
	return NULL;
}

TEST_F(ev, infinite_wait_woken_by_setter_thread)
{
	struct setter s = { .kfd = self->kfd, .delay_ms = 300 };
	uint64_t t0;
	pthread_t t;

	s.id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL, true);
	ASSERT_EQ(0, pthread_create(&t, NULL, setter_fn, &s));
	t0 = kg_now_ms();
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
		  kg_wait1(self->kfd, s.id, INFINITE));
	EXPECT_GE(kg_now_ms() - t0, 250);
	pthread_join(t, NULL);
	EXPECT_EQ(0, s.ret);
	/* The wait took the auto-reset signal. */
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, kg_wait1(self->kfd, s.id, 0));
}

TEST_F(ev, finite_wait_woken_early_by_setter_thread)
{
	struct setter s = { .kfd = self->kfd, .delay_ms = 200 };
	uint64_t scale = (uint64_t)kt_timeout_scale(), t0;
	pthread_t t;

	s.id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL, false);
	ASSERT_EQ(0, pthread_create(&t, NULL, setter_fn, &s));
	t0 = kg_now_ms();
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
		  kg_wait1(self->kfd, s.id, (uint32_t)(20000 * scale)));
	/* Woken by the setter, well before the timeout. */
	EXPECT_LT(kg_now_ms() - t0, 15000 * scale);
	pthread_join(t, NULL);
}

TEST_F(ev, destroy_during_wait_fails_it)
{
	struct kfd_ioctl_wait_events_args a = { 0 };
	struct setter s = { .kfd = self->kfd, .delay_ms = 300,
			    .destroy = true };
	struct kfd_event_data ed = { 0 };
	pthread_t t;

	s.id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL, false);
	ed.event_id = s.id;
	a.events_ptr = (uintptr_t)&ed;
	a.num_events = 1;
	a.timeout = INFINITE;
	ASSERT_EQ(0, pthread_create(&t, NULL, setter_fn, &s));
	EXPECT_EQ(-EIO, kt_ioctl(self->kfd, AMDKFD_IOC_WAIT_EVENTS, &a));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_FAIL, a.wait_result);
	pthread_join(t, NULL);
	EXPECT_EQ(0, s.ret);
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	(void)sig;
	got_signal++;
}

static void handle(int sig, int flags)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/*
 * A signal with a handler installed without SA_RESTART ends the wait with
 * EINTR; the finite timeout comes back reduced; the auto-reset signal the
 * wait had consumed is given back.
 */
TEST_F(ev, signal_interrupts_wait_with_eintr)
{
	struct setter s = { .kfd = self->kfd, .delay_ms = 0 };
	struct kfd_ioctl_wait_events_args a = { 0 };
	struct kfd_event_data ed[2] = { 0 };
	uint32_t never;
	pthread_t t;
	int ret, err;

	handle(SIGUSR1, 0);
	ed[0].event_id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL,
				   true);
	ed[1].event_id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL,
				   true);
	never = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL, false);
	ASSERT_EQ(0, kg_event_set(self->kfd, ed[0].event_id));

	/* The thread signals us, then sets an unrelated event. */
	s.id = never;
	s.kill_thread = pthread_self();
	s.kill_sig = SIGUSR1;
	s.kill_delay_ms = 300;
	a.events_ptr = (uintptr_t)ed;
	a.num_events = 2;
	a.wait_for_all = 1;
	a.timeout = 20000;
	got_signal = 0;
	ASSERT_EQ(0, pthread_create(&t, NULL, setter_fn, &s));
	ret = ioctl(self->kfd, AMDKFD_IOC_WAIT_EVENTS, &a);
	err = errno;
	pthread_join(t, NULL);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EINTR, err);
	EXPECT_EQ(1, got_signal);
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_FAIL, a.wait_result);
	EXPECT_LT(a.timeout, 20000);
	EXPECT_GT(a.timeout, 0);
	TH_LOG("timeout left after EINTR: %u ms", a.timeout);
	/* The consumed auto-reset signal of ed[0] was given back. */
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
		  kg_wait1(self->kfd, ed[0].event_id, 0));

	/* An infinite wait interrupted keeps its infinite timeout. */
	a.timeout = INFINITE;
	s.kill_delay_ms = 200;
	ASSERT_EQ(0, pthread_create(&t, NULL, setter_fn, &s));
	ret = ioctl(self->kfd, AMDKFD_IOC_WAIT_EVENTS, &a);
	err = errno;
	pthread_join(t, NULL);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EINTR, err);
	EXPECT_EQ(INFINITE, a.timeout);
	handle(SIGUSR1, SA_RESETHAND);
}

/* With SA_RESTART the wait goes on after the handler and then completes. */
TEST_F(ev, signal_with_sa_restart_resumes_wait)
{
	struct setter s = { .kfd = self->kfd, .delay_ms = 300 };
	struct kfd_ioctl_wait_events_args a = { 0 };
	struct kfd_event_data ed = { 0 };
	pthread_t t;
	int ret;

	handle(SIGUSR1, SA_RESTART);
	s.id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL, true);
	s.kill_thread = pthread_self();
	s.kill_sig = SIGUSR1;
	s.kill_delay_ms = 200;
	ed.event_id = s.id;
	a.events_ptr = (uintptr_t)&ed;
	a.num_events = 1;
	a.timeout = 30000;
	got_signal = 0;
	ASSERT_EQ(0, pthread_create(&t, NULL, setter_fn, &s));
	ret = ioctl(self->kfd, AMDKFD_IOC_WAIT_EVENTS, &a);
	pthread_join(t, NULL);
	EXPECT_EQ(0, ret) TH_LOG("errno %d", errno);
	EXPECT_EQ(1, got_signal);
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, a.wait_result);
	handle(SIGUSR1, SA_RESETHAND);
}

/* Bad ids and pads: EINVAL, and a bad wait consumes nothing. */
TEST_F(ev, bad_ids_and_pads)
{
	struct kfd_ioctl_destroy_event_args d = { 0 };
	struct kfd_ioctl_set_event_args s = { 0 };
	struct kfd_ioctl_reset_event_args r = { 0 };
	struct kfd_ioctl_wait_events_args w = { 0 };
	struct kfd_event_data ed[2] = { 0 };
	uint32_t sig, mem, hw, dbg, result;

	sig = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL, true);
	mem = new_event(_metadata, self->kfd, KFD_IOC_EVENT_MEMORY, false);
	hw = new_event(_metadata, self->kfd, KFD_IOC_EVENT_HW_EXCEPTION,
		       false);
	dbg = new_event(_metadata, self->kfd, KFD_IOC_EVENT_DEBUG_EVENT,
			false);

	EXPECT_EQ(-EINVAL, kg_event_destroy(self->kfd, 77));
	EXPECT_EQ(-EINVAL, kg_event_set(self->kfd, 77));
	EXPECT_EQ(-EINVAL, kg_event_reset(self->kfd, 77));
	EXPECT_EQ(-EINVAL, kg_event_set(self->kfd, 0));
	EXPECT_EQ(-EINVAL, kg_event_set(self->kfd, mem));
	EXPECT_EQ(-EINVAL, kg_event_reset(self->kfd, mem));
	EXPECT_EQ(-EINVAL, kg_event_set(self->kfd, hw));
	EXPECT_EQ(-EINVAL, kg_event_set(self->kfd, dbg));
	EXPECT_EQ(-EINVAL, kg_event_reset(self->kfd, dbg));

	d.event_id = sig;
	d.pad = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->kfd, AMDKFD_IOC_DESTROY_EVENT, &d));
	s.event_id = sig;
	s.pad = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->kfd, AMDKFD_IOC_SET_EVENT, &s));
	r.event_id = sig;
	r.pad = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->kfd, AMDKFD_IOC_RESET_EVENT, &r));

	/* A wait naming one good (signaled) and one bad id. */
	ASSERT_EQ(0, kg_event_set(self->kfd, sig));
	ed[0].event_id = sig;
	ed[1].event_id = 12345;
	EXPECT_EQ(-EINVAL, kg_wait(self->kfd, ed, 2, false, 0, &result));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_FAIL, result);
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, kg_wait1(self->kfd, sig, 0));

	/* Too many entries; an unreadable array. */
	EXPECT_EQ(-EINVAL, kg_wait(self->kfd, ed, 8193, false, 0, &result));
	w.events_ptr = 8;
	w.num_events = 1;
	EXPECT_EQ(-EFAULT, kt_ioctl(self->kfd, AMDKFD_IOC_WAIT_EVENTS, &w));

	/* The events survived all that. */
	EXPECT_EQ(0, kg_event_destroy(self->kfd, sig));
	EXPECT_EQ(0, kg_event_destroy(self->kfd, mem));
	EXPECT_EQ(0, kg_event_destroy(self->kfd, hw));
	EXPECT_EQ(0, kg_event_destroy(self->kfd, dbg));
	EXPECT_EQ(-EINVAL, kg_event_destroy(self->kfd, sig));
}

/* The driver-allocated events page: mmap rules and contents. */
TEST_F(ev, events_page_mmap)
{
	uint64_t *page, *again;
	uint32_t id, i, bad = 0;

	/* No page before the first signal event. */
	EXPECT_EQ(MAP_FAILED, map_events(self->kfd, EV_PAGE_SIZE,
					 KFD_MMAP_TYPE_EVENTS));
	EXPECT_EQ(EINVAL, errno);
	new_event(_metadata, self->kfd, KFD_IOC_EVENT_MEMORY, false);
	EXPECT_EQ(MAP_FAILED, map_events(self->kfd, EV_PAGE_SIZE,
					 KFD_MMAP_TYPE_EVENTS));

	id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL, false);
	page = map_events(self->kfd, EV_PAGE_SIZE, KFD_MMAP_TYPE_EVENTS);
	ASSERT_NE(MAP_FAILED, page) TH_LOG("mmap: %s", strerror(errno));
	for (i = 0; i < KFD_SIGNAL_EVENT_LIMIT; i++)
		if (page[i] != ~0ULL && bad++ < 3)
			TH_LOG("slot %u: 0x%llx", i,
			       (unsigned long long)page[i]);
	EXPECT_EQ(0, bad);
	/* SET_EVENT does not touch the page. */
	ASSERT_EQ(0, kg_event_set(self->kfd, id));
	EXPECT_EQ(~0ULL, page[id]);

	/* Too long; other offset bits ignored; a second mapping shares it. */
	EXPECT_EQ(MAP_FAILED, map_events(self->kfd, 2 * EV_PAGE_SIZE,
					 KFD_MMAP_TYPE_EVENTS));
	again = map_events(self->kfd, KT_PAGE, KFD_MMAP_TYPE_EVENTS | 0x5000);
	ASSERT_NE(MAP_FAILED, again);
	page[3] = 0x1234;
	EXPECT_EQ(0x1234, again[3]);
	page[3] = ~0ULL;
	munmap(again, KT_PAGE);
	munmap(page, EV_PAGE_SIZE);
}

/* Slot limits: 255 signal events before mapping the page, 4095 after. */
TEST_F_TIMEOUT(ev, signal_event_limits, 120)
{
	struct kfd_ioctl_create_event_args a;
	uint32_t i;
	void *page;
	int ret = 0;

	for (i = 1; i <= 255; i++) {
		ret = kg_event_new(self->kfd, KFD_IOC_EVENT_SIGNAL, false, 0,
				   &a);
		if (ret)
			break;
	}
	EXPECT_EQ(0, ret) TH_LOG("event %u", i);
	EXPECT_EQ(255, a.event_id);
	EXPECT_EQ(-ENOSPC, kg_event_new(self->kfd, KFD_IOC_EVENT_SIGNAL, false,
					0, NULL));
	/* Non-signal events are not limited by the slots. */
	EXPECT_EQ(0, kg_event_new(self->kfd, KFD_IOC_EVENT_MEMORY, false, 0,
				  NULL));

	page = map_events(self->kfd, EV_PAGE_SIZE, KFD_MMAP_TYPE_EVENTS);
	ASSERT_NE(MAP_FAILED, page);
	for (i = 256; i < KFD_SIGNAL_EVENT_LIMIT; i++) {
		ret = kg_event_new(self->kfd, KFD_IOC_EVENT_SIGNAL, false, 0,
				   &a);
		if (ret)
			break;
	}
	EXPECT_EQ(0, ret) TH_LOG("event %u", i);
	EXPECT_EQ(4095, a.event_id);
	EXPECT_EQ(-ENOSPC, kg_event_new(self->kfd, KFD_IOC_EVENT_SIGNAL, false,
					0, NULL));
	EXPECT_EQ(-ENOSPC, kg_event_new(self->kfd, KFD_IOC_EVENT_DEBUG_EVENT,
					false, 0, NULL));
	/* Freeing one makes room for one. */
	EXPECT_EQ(0, kg_event_destroy(self->kfd, 1000));
	ASSERT_EQ(0, kg_event_new(self->kfd, KFD_IOC_EVENT_SIGNAL, false, 0,
				  &a));
	EXPECT_EQ(1000, a.event_id);
	munmap(page, EV_PAGE_SIZE);
}

/* 4096 memory and hardware-exception events at most (a kfdsim limit). */
TEST_F_TIMEOUT(ev, nonsignal_event_limit, 120)
{
	uint32_t i;
	int ret = 0;

	for (i = 0; i < 4096; i++) {
		ret = kg_event_new(self->kfd, i & 1 ? KFD_IOC_EVENT_MEMORY :
				   KFD_IOC_EVENT_HW_EXCEPTION, false, 0, NULL);
		if (ret)
			break;
	}
	EXPECT_EQ(0, ret) TH_LOG("event %u", i);
	EXPECT_EQ(-ENOSPC, kg_event_new(self->kfd, KFD_IOC_EVENT_MEMORY, false,
					0, NULL));
	EXPECT_EQ(0, kg_event_new(self->kfd, KFD_IOC_EVENT_SIGNAL, false, 0,
				  NULL));
}

/*
 * Run a one-item FILL on a new queue of GPU @g whose completion signal
 * names @event_id and @mailbox.
 */
static int gpu_fire(struct kg_rt *rt, int g, uint64_t mailbox,
		    uint32_t event_id, struct kg_bo *buf)
{
	struct kfdsim_args_fill fargs = { .dst = buf->va, .value = 1 };
	struct kg_signal sig;
	struct kg_queue q;
	int ret;

	ret = kg_queue_new(rt, g, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 1024, &q);
	if (ret)
		return ret;
	ret = kg_signal_new(rt, 1, &sig);
	if (!ret) {
		sig.cpu->event_mailbox_ptr = mailbox;
		sig.cpu->event_id = event_id;
		ret = kg_dispatch(&q, KG_CODE_FILL_U32, &fargs,
				  sizeof(fargs), 1, 1, sig.va);
	}
	if (!ret)
		ret = kg_signal_wait(&sig, 0, KG_TIMEOUT_MS);
	if (!ret)
		ret = kg_queue_wait_idle(&q, KG_TIMEOUT_MS);
	kg_queue_free(&q);
	return ret;
}

/*
 * An AQL completion signal with an event mailbox fires the event. The
 * driver-allocated events page has no GPU VA (CREATE_EVENT gives only an
 * mmap offset), so the mailbox is a u64 in a GPU-mapped BO; the GPU writes
 * the event id there, the page's slot stays "unsignaled".
 */
TEST_F(ev, aql_completion_signal_fires_event)
{
	struct kg_bo box;
	uint64_t *page, *mb;
	uint32_t id, other;
	int g;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE,
			       KG_MAP_ALL, &box));
	mb = box.cpu;
	other = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL, true);
	id = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL, true);
	page = map_events(self->kfd, EV_PAGE_SIZE, KFD_MMAP_TYPE_EVENTS);
	ASSERT_NE(MAP_FAILED, page);
	for (g = 0; g < self->rt.e.ngpus; g++) {
		mb[0] = 0;
		ASSERT_EQ(0, gpu_fire(&self->rt, g, box.va, id, &box));
		EXPECT_EQ(id, mb[0]);
		EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
			  kg_wait1(self->kfd, id, KG_TIMEOUT_MS));
		EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT,
			  kg_wait1(self->kfd, other, 0));
		EXPECT_EQ(~0ULL, page[id]);
	}
	/* A debug event: only the GPU fires it. */
	{
		uint32_t dbg = new_event(_metadata, self->kfd,
					 KFD_IOC_EVENT_DEBUG_EVENT, false);

		EXPECT_EQ(-EINVAL, kg_event_set(self->kfd, dbg));
		ASSERT_EQ(0, gpu_fire(&self->rt, 0, box.va, dbg, &box));
		EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
			  kg_wait1(self->kfd, dbg, KG_TIMEOUT_MS));
	}
	/* An id that names no event fires nothing (no slot is written). */
	ASSERT_EQ(0, gpu_fire(&self->rt, 0, box.va, 999, &box));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, kg_wait1(self->kfd, id, 100));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, kg_wait1(self->kfd, other, 0));
	munmap(page, EV_PAGE_SIZE);
}

/*
 * A user BO as the events page (dGPU style): the driver fills it with
 * "unsignaled"; the GPU posts to the slot through its page table; an
 * interrupt without a usable id (event_id 0) fires the events whose slot
 * was written, and the driver resets their slots.
 */
TEST_F(ev, user_bo_events_page)
{
	struct kfd_ioctl_create_event_args a;
	struct kg_bo page, small, buf;
	uint64_t *slots;
	uint32_t id, id2, i, bad = 0;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, EV_PAGE_SIZE,
			       KT_GTT | KT_WRITABLE, KG_MAP_ALL, &page));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, EV_PAGE_SIZE - KT_PAGE,
			       KT_GTT | KT_WRITABLE, 0, &small));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE,
			       KG_MAP_ALL, &buf));
	slots = page.cpu;
	memset(slots, 0, EV_PAGE_SIZE);

	/* Too small, or not a BO of ours. */
	EXPECT_EQ(-EINVAL, kg_event_new(self->kfd, KFD_IOC_EVENT_SIGNAL,
					false, small.handle, NULL));
	EXPECT_EQ(-EINVAL, kg_event_new(self->kfd, KFD_IOC_EVENT_SIGNAL,
					false, page.handle + 100, NULL));

	ASSERT_EQ(0, kg_event_new(self->kfd, KFD_IOC_EVENT_SIGNAL, true,
				  page.handle, &a));
	id = a.event_id;
	EXPECT_EQ(1, id);
	for (i = 0; i < KFD_SIGNAL_EVENT_LIMIT; i++)
		if (slots[i] != ~0ULL)
			bad++;
	EXPECT_EQ(0, bad) TH_LOG("slots not set to unsignaled");
	/* Once set, the page cannot be handed in again. */
	EXPECT_EQ(-EINVAL, kg_event_new(self->kfd, KFD_IOC_EVENT_SIGNAL,
					false, page.handle, NULL));
	/* The events page BO cannot be freed. */
	EXPECT_EQ(-EPERM, kt_free(self->kfd, page.handle));
	id2 = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL, true);
	EXPECT_EQ(2, id2);

	/* Mailbox = the event's slot, id given: fires, slot reset. */
	ASSERT_EQ(0, gpu_fire(&self->rt, 0, page.va + 8 * id, id, &buf));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
		  kg_wait1(self->kfd, id, KG_TIMEOUT_MS));
	EXPECT_EQ(~0ULL, slots[id]);
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, kg_wait1(self->kfd, id2, 0));

	/* Id 0 (unusable): the driver finds the written slot of id2. */
	ASSERT_EQ(0, gpu_fire(&self->rt, self->rt.e.ngpus - 1,
			      page.va + 8 * id2, 0, &buf));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
		  kg_wait1(self->kfd, id2, KG_TIMEOUT_MS));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_TIMEOUT, kg_wait1(self->kfd, id, 0));
	EXPECT_EQ(~0ULL, slots[id2]);
	EXPECT_EQ(~0ULL, slots[0]);
}

/* Fault the GPU: a FILL to an unmapped VA on a new queue of GPU @g. */
static int gpu_fault(struct kg_rt *rt, int g, uint64_t va, struct kg_queue *q)
{
	struct kfdsim_args_fill fargs = { .dst = va, .value = 1 };
	int ret = kg_queue_new(rt, g, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 1024, q);

	if (!ret)
		ret = kg_dispatch(q, KFDSIM_KERNEL_FILL_U32, &fargs,
				  sizeof(fargs), 1, 1, 0);
	return ret;
}

struct waiter {
	int kfd;
	struct kfd_event_data ed[2];
	uint32_t n;
	uint32_t result;
	int ret;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->ret = kg_wait(w->kfd, w->ed, w->n, false, KG_TIMEOUT_MS,
			 &w->result);
	return NULL;
}

/*
 * Two threads wait on one manual-reset memory event (one of them mixed
 * with a signal event that does not fire): both see the fault's payload;
 * the entry of the signal event keeps what the caller put there.
 */
TEST_F(ev, memory_event_payload_to_every_waiter)
{
	struct kfd_ioctl_create_event_args mem;
	struct waiter w[2];
	struct kg_queue q;
	pthread_t t[2];
	uint64_t hole = kg_va_hole(&self->rt) + 3 * KT_PAGE + 40;
	uint32_t sig;
	int i;

	ASSERT_EQ(0, kg_event_new(self->kfd, KFD_IOC_EVENT_MEMORY, false, 0,
				  &mem));
	sig = new_event(_metadata, self->kfd, KFD_IOC_EVENT_SIGNAL, false);
	for (i = 0; i < 2; i++) {
		memset(&w[i], 0xab, sizeof(w[i]));
		w[i].kfd = self->kfd;
		w[i].n = i + 1;
		w[i].ed[0].event_id = mem.event_id;
		w[i].ed[1].event_id = sig;
		w[i].ed[0].kfd_event_data_ext = 0;
		w[i].ed[1].kfd_event_data_ext = 0;
	}
	/* Entry order: thread 1 waits on [mem, sig]. */
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, waiter_fn, &w[i]));
	kg_sleep_ms(200);
	ASSERT_EQ(0, gpu_fault(&self->rt, self->rt.e.ngpus - 1, hole, &q));
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, w[i].ret);
		EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE, w[i].result);
		EXPECT_EQ(hole & ~(KT_PAGE - 1),
			  w[i].ed[0].memory_exception_data.va);
		EXPECT_EQ(self->rt.ids[self->rt.e.ngpus - 1],
			  w[i].ed[0].memory_exception_data.gpu_id);
		EXPECT_EQ(1, w[i].ed[0].memory_exception_data.failure
				     .NotPresent);
	}
	/* The signal entry was not written. */
	EXPECT_EQ(0xababababu, w[1].ed[1].hw_exception_data.reset_type);
	EXPECT_EQ(0xababababu, w[1].ed[1].hw_exception_data.gpu_id);
	/* Manual reset: still signaled, payload kept. */
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
		  kg_wait1(self->kfd, mem.event_id, 0));
}

/* A payload that cannot be written back: EFAULT. */
TEST_F(ev, unwritable_payload_efault)
{
	struct kfd_ioctl_create_event_args mem;
	struct kfd_event_data *ed;
	struct kg_queue q;
	uint32_t result;

	ASSERT_EQ(0, kg_event_new(self->kfd, KFD_IOC_EVENT_MEMORY, false, 0,
				  &mem));
	ASSERT_EQ(0, gpu_fault(&self->rt, 0, kg_va_hole(&self->rt), &q));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
		  kg_wait1(self->kfd, mem.event_id, KG_TIMEOUT_MS));
	ed = mmap(NULL, KT_PAGE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ed);
	ed->event_id = mem.event_id;
	ASSERT_EQ(0, mprotect(ed, KT_PAGE, PROT_READ));
	EXPECT_EQ(-EFAULT, kg_wait(self->kfd, ed, 1, false, 0, &result));
	EXPECT_EQ(KFD_IOC_WAIT_RESULT_FAIL, result);
	munmap(ed, KT_PAGE);
}

TEST_HARNESS_MAIN
