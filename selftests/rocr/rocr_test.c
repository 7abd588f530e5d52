// SPDX-License-Identifier: GPL-2.0
/*
 * Debian's unmodified ROCr (libhsa-runtime64 5.2.3, the HSA runtime under
 * HIP) on the simulated GPUs: hsa_init and the agents it finds, checked
 * against the KFD topology; memory pools; AQL queues; interrupt signals
 * backed by KFD events; SDMA copies (hsa_amd_memory_async_copy) between the
 * host and VRAM and between GPUs; a built-in kernel dispatched through a
 * queue ROCr created, completing a ROCr signal; and hsa_shut_down leaving
 * nothing behind in the driver and nothing in the kernel log.
 *
 * ROCr keeps one global runtime per process; the harness runs every test in
 * a process of its own. Documentation/rocr.rst says what ROCr needs from
 * the driver and what cannot work (ROCr's own blit kernels): such calls
 * end in ROCr's queue error path, checked here, instead of hanging.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <linux/kfdsim.h>

#include "kt_harness.h"
#include "kfdsim_test.h"
#include "rocr_util.h"

#define RT_TIMEOUT_NS	(60ULL * 1000000000ULL)
#define RT_QUEUE_SIZE	256
/* Harness time limit per test: ROCr under TCG is slow to start. */
#define RT_TEST_TIMEOUT	180
/* An odd size, so no copy is a whole number of pages. */
#define RT_COPY_SIZE	(5 * KT_MIB + 4 * KT_PAGE + 12)
#define RT_ELEMS	5000

/* The fixtures size their arrays for KT_MAX_GPUS. */
_Static_assert(ROCR_MAX_GPUS <= KT_MAX_GPUS, "ROCR_MAX_GPUS too large");

static uint64_t rt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* hsa_init and the agents and pools every test uses; 0 or a message. */
static int rt_open(struct rocr_agents *rt, char *msg, size_t len)
{
	hsa_status_t s;

	memset(rt, 0, sizeof(*rt));
	s = hsa_init();
	KT_CHECK(s == HSA_STATUS_SUCCESS, "hsa_init: %d", s);
	s = rocr_agents_find(rt, true);
	KT_CHECK(s == HSA_STATUS_SUCCESS, "hsa_iterate_agents: 0x%x", s);
	KT_CHECK(rt->ncpus >= 1 && rt->ngpus >= 1, "%d CPU, %d GPU agents",
		 rt->ncpus, rt->ngpus);
	KT_CHECK(rt->has_fine && rt->has_kernarg,
		 "system pools: fine %d kernarg %d", rt->has_fine,
		 rt->has_kernarg);
	return 0;
}

/* Pool memory every agent may access; NULL on failure. */
static void *rt_alloc(struct rocr_agents *rt, hsa_amd_memory_pool_t pool,
		      size_t size)
{
	void *p;

	if (hsa_amd_memory_pool_allocate(pool, size, 0, &p))
		return NULL;
	if (rocr_allow_all(rt, rt->ngpus, p)) {
		hsa_amd_memory_pool_free(p);
		return NULL;
	}
	return p;
}

/* Wait until @sig drops below 1; its value, or 1 after the timeout. */
static hsa_signal_value_t rt_wait(hsa_signal_t sig)
{
	return rocr_wait(sig, RT_TIMEOUT_NS / 1000000);
}

/*
 * Wait up to @ms for a kfdsim line containing @needle after @fd's position;
 * 1 with the line in @out, 0 if none came, -1 on error.
 */
static int rt_kmsg_find(int fd, const char *needle, unsigned int ms,
			char *out, size_t outlen)
{
	uint64_t deadline = rt_now_ns() + ms * 1000000ULL;
	char rec[1024];
	ssize_t r;

	out[0] = 0;
	for (;;) {
		r = read(fd, rec, sizeof(rec) - 1);
		if (r < 0 && errno == EPIPE)
			continue;
		if (r < 0 && errno != EAGAIN)
			return -1;
		if (r < 0) {
			if (rt_now_ns() >= deadline)
				return 0;
			usleep(20000);
			continue;
		}
		rec[r] = 0;
		if (strstr(rec, "kfdsim") && strstr(rec, needle)) {
			snprintf(out, outlen, "%s", rec);
			return 1;
		}
	}
}

/*
 * host -> VRAM of GPU 0 -> VRAM of the last GPU -> host, with ROCr's SDMA
 * copies; the bytes must come back exactly.
 */
static int rt_copy_roundtrip(struct rocr_agents *rt, char *msg, size_t len)
{
	int last = rt->ngpus - 1;
	uint8_t *src, *dst, *v0, *v1;
	hsa_signal_t sig;
	int ret = -1;

	src = rt_alloc(rt, rt->fine, RT_COPY_SIZE);
	dst = rt_alloc(rt, rt->fine, RT_COPY_SIZE);
	v0 = rt_alloc(rt, rt->vram[0], RT_COPY_SIZE);
	v1 = rt_alloc(rt, rt->vram[last], RT_COPY_SIZE);
	if (!src || !dst || !v0 || !v1) {
		snprintf(msg, len, "pool allocations failed");
		goto out;
	}
	kt_fill(src, RT_COPY_SIZE, 77);
	memset(dst, 0, RT_COPY_SIZE);
	if (hsa_signal_create(1, 0, NULL, &sig)) {
		snprintf(msg, len, "hsa_signal_create");
		goto out;
	}
	if (hsa_amd_memory_async_copy(v0, rt->gpu[0], src, rt->cpu,
				      RT_COPY_SIZE, 0, NULL, sig) ||
	    rt_wait(sig) != 0) {
		snprintf(msg, len, "copy host -> VRAM of GPU 0");
		goto out_sig;
	}
	hsa_signal_store_relaxed(sig, 1);
	if (hsa_amd_memory_async_copy(v1, rt->gpu[last], v0, rt->gpu[0],
				      RT_COPY_SIZE, 0, NULL, sig) ||
	    rt_wait(sig) != 0) {
		snprintf(msg, len, "copy VRAM of GPU 0 -> GPU %d", last);
		goto out_sig;
	}
	hsa_signal_store_relaxed(sig, 1);
	if (hsa_amd_memory_async_copy(dst, rt->cpu, v1, rt->gpu[last],
				      RT_COPY_SIZE, 0, NULL, sig) ||
	    rt_wait(sig) != 0) {
		snprintf(msg, len, "copy VRAM of GPU %d -> host", last);
		goto out_sig;
	}
	if (!kt_check(dst, RT_COPY_SIZE, 77)) {
		snprintf(msg, len, "bytes differ after the round trip");
		goto out_sig;
	}
	ret = 0;
out_sig:
	hsa_signal_destroy(sig);
out:
	hsa_amd_memory_pool_free(src);
	hsa_amd_memory_pool_free(dst);
	hsa_amd_memory_pool_free(v0);
	hsa_amd_memory_pool_free(v1);
	return ret;
}

/* Write a dispatch of built-in kernel @desc into @q and ring its doorbell. */
static void rt_dispatch(hsa_queue_t *q, const void *desc, const void *kernarg,
			uint32_t n, hsa_signal_t done)
{
	uint64_t idx = hsa_queue_add_write_index_relaxed(q, 1);

	while (idx - hsa_queue_load_read_index_scacquire(q) >= q->size)
		sched_yield();
	rocr_write_dispatch(q, idx, desc, kernarg, n, done);
}

/*
 * c = a + b with the built-in u32 vector add, through an AQL queue that
 * ROCr created on GPU @g, checked against the CPU.
 */
static int rt_vadd(struct rocr_agents *rt, int g, char *msg, size_t len)
{
	struct kfdsim_kernel_descriptor *desc;
	struct kfdsim_args_vadd *args;
	uint32_t *a, *b, *c, i;
	hsa_queue_t *q = NULL;
	hsa_signal_t done;
	hsa_status_t s;
	int ret = -1;

	desc = rt_alloc(rt, rt->kernarg, KT_PAGE);
	args = rt_alloc(rt, rt->kernarg, KT_PAGE);
	a = rt_alloc(rt, rt->fine, RT_ELEMS * 4);
	b = rt_alloc(rt, rt->fine, RT_ELEMS * 4);
	c = rt_alloc(rt, rt->fine, RT_ELEMS * 4);
	if (!desc || !args || !a || !b || !c) {
		snprintf(msg, len, "pool allocations failed");
		goto out;
	}
	desc->magic = KFDSIM_KERNEL_MAGIC;
	desc->version = KFDSIM_KERNEL_VERSION;
	desc->opcode = KFDSIM_KERNEL_VADD_U32;
	desc->pad = 0;
	args->a = (uintptr_t)a;
	args->b = (uintptr_t)b;
	args->c = (uintptr_t)c;
	for (i = 0; i < RT_ELEMS; i++) {
		a[i] = i * 2654435761u;
		b[i] = ~i ^ 0x5a5a5a5au;
		c[i] = 0xdeadbeef;
	}
	s = hsa_queue_create(rt->gpu[g], RT_QUEUE_SIZE, HSA_QUEUE_TYPE_SINGLE,
			     NULL, NULL, UINT32_MAX, UINT32_MAX, &q);
	if (s) {
		snprintf(msg, len, "hsa_queue_create: 0x%x", s);
		goto out;
	}
	if (hsa_signal_create(1, 0, NULL, &done)) {
		snprintf(msg, len, "hsa_signal_create");
		goto out;
	}
	rt_dispatch(q, desc, args, RT_ELEMS, done);
	if (rt_wait(done) != 0) {
		snprintf(msg, len, "the dispatch on GPU %d did not complete",
			 g);
		goto out_sig;
	}
	for (i = 0; i < RT_ELEMS; i++)
		if (c[i] != a[i] + b[i]) {
			snprintf(msg, len, "c[%u] = 0x%x, want 0x%x", i, c[i],
				 a[i] + b[i]);
			goto out_sig;
		}
	ret = 0;
out_sig:
	hsa_signal_destroy(done);
out:
	if (q)
		hsa_queue_destroy(q);
	hsa_amd_memory_pool_free(desc);
	hsa_amd_memory_pool_free(args);
	hsa_amd_memory_pool_free(a);
	hsa_amd_memory_pool_free(b);
	hsa_amd_memory_pool_free(c);
	return ret;
}

FIXTURE(rocr) {
	struct rocr_agents rt;
};

FIXTURE_SETUP(rocr)
{
	char msg[256];

	ASSERT_EQ(0, rt_open(&self->rt, msg, sizeof(msg))) TH_LOG("%s", msg);
}

FIXTURE_TEARDOWN(rocr)
{
	EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_shut_down());
}

/* One CPU agent and one gfx906 GPU agent per topology GPU, alike. */
TEST_F_TIMEOUT(rocr, agents_match_topology, RT_TEST_TIMEOUT)
{
	struct kt_gpu gpus[KT_MAX_GPUS];
	unsigned long long simds, per_cu, dev_id;
	char path[128], name[64], isa_name[128], msg[256];
	uint32_t node, cus, chip, isa_len, feat;
	struct kt_props props;
	hsa_device_type_t type;
	hsa_isa_t isa;
	int n, i;

	n = kt_gpus(gpus, KT_MAX_GPUS);
	ASSERT_LT(0, n);
	ASSERT_EQ(n, self->rt.ngpus);
	EXPECT_EQ(1, self->rt.ncpus);
	ASSERT_EQ(HSA_STATUS_SUCCESS,
		  hsa_agent_get_info(self->rt.cpu, HSA_AGENT_INFO_DEVICE, &type));
	EXPECT_EQ(HSA_DEVICE_TYPE_CPU, type);

	for (i = 0; i < n; i++) {
		hsa_agent_t a = self->rt.gpu[i];

		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_agent_get_info(a, HSA_AGENT_INFO_NAME, name));
		EXPECT_STREQ("gfx906", name);
		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_agent_get_info(a, HSA_AGENT_INFO_NODE, &node));
		EXPECT_EQ(gpus[i].node, node);
		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_agent_get_info(a, HSA_AGENT_INFO_FEATURE, &feat));
		EXPECT_TRUE(feat & HSA_AGENT_FEATURE_KERNEL_DISPATCH);

		snprintf(path, sizeof(path), KT_NODES "/%u/properties",
			 gpus[i].node);
		ASSERT_EQ(0, kt_props_read(path, false, &props, msg,
					   sizeof(msg))) TH_LOG("%s", msg);
		ASSERT_TRUE(kt_prop(&props, "simd_count", &simds));
		ASSERT_TRUE(kt_prop(&props, "simd_per_cu", &per_cu));
		ASSERT_TRUE(kt_prop(&props, "device_id", &dev_id));
		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_agent_get_info(a, (hsa_agent_info_t)
					     HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT,
					     &cus));
		EXPECT_EQ(simds / per_cu, cus);
		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_agent_get_info(a, (hsa_agent_info_t)
					     HSA_AMD_AGENT_INFO_CHIP_ID, &chip));
		EXPECT_EQ(dev_id, chip);

		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_agent_get_info(a, HSA_AGENT_INFO_ISA, &isa));
		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH,
					       &isa_len));
		ASSERT_LT(isa_len, sizeof(isa_name));
		memset(isa_name, 0, sizeof(isa_name));
		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME,
					       isa_name));
		EXPECT_NE(NULL, strstr(isa_name, "amdgcn-amd-amdhsa--gfx906"))
			TH_LOG("ISA %s", isa_name);
	}
}

/* The VRAM pool is the GPU's VRAM; allocations come and go in every pool. */
TEST_F_TIMEOUT(rocr, pools_allocate_free, RT_TEST_TIMEOUT)
{
	unsigned long long vram_mb;
	struct kt_props c0, c1;
	char msg[256];
	size_t size;
	void *p[KT_MAX_GPUS + 2];
	int i, n = self->rt.ngpus;

	ASSERT_EQ(0, kt_param("vram_mb", &vram_mb));
	/*
	 * ROCr's fragment allocator keeps a 2 MiB block of each GPU from the
	 * first small allocation on; count after it exists.
	 */
	for (i = 0; i < n; i++) {
		p[i] = rt_alloc(&self->rt, self->rt.vram[i], KT_PAGE);
		ASSERT_NE(NULL, p[i]);
		ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_amd_memory_pool_free(p[i]));
	}
	ASSERT_EQ(0, kt_counters(&c0, msg, sizeof(msg))) TH_LOG("%s", msg);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_amd_memory_pool_get_info(self->rt.vram[i],
				HSA_AMD_MEMORY_POOL_INFO_SIZE, &size));
		EXPECT_EQ(vram_mb * KT_MIB, size);
		p[i] = rt_alloc(&self->rt, self->rt.vram[i], 2 * KT_MIB);
		ASSERT_NE(NULL, p[i]);
	}
	p[n] = rt_alloc(&self->rt, self->rt.fine, KT_MIB);
	p[n + 1] = rt_alloc(&self->rt, self->rt.kernarg, KT_PAGE);
	ASSERT_NE(NULL, p[n]);
	ASSERT_NE(NULL, p[n + 1]);
	memset(p[n], 0x5a, KT_MIB);
	memset(p[n + 1], 0xa5, KT_PAGE);

	ASSERT_EQ(0, kt_counters(&c1, msg, sizeof(msg))) TH_LOG("%s", msg);
	for (i = 0; i < n; i++) {
		char key[32];

		snprintf(key, sizeof(key), "gpu%d_vram_used", i);
		EXPECT_EQ(2 * KT_MIB,
			  kt_counter(&c1, key) - kt_counter(&c0, key));
	}
	for (i = 0; i < n + 2; i++)
		EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_amd_memory_pool_free(p[i]));
	ASSERT_EQ(0, kt_counters(&c1, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_EQ(0, kt_counters_diff(&c0, &c1, msg, sizeof(msg)))
		TH_LOG("counters changed: %s", msg);
}

/*
 * An AQL queue per GPU exists in the driver exactly while ROCr has it (the
 * first queue may bring ROCr's own internal queues along, which stay).
 */
TEST_F_TIMEOUT(rocr, queue_create_destroy, RT_TEST_TIMEOUT)
{
	hsa_queue_t *q[KT_MAX_GPUS];
	struct kt_props c0, c1;
	char msg[256];
	int i, n = self->rt.ngpus;

	ASSERT_EQ(0, kt_counters(&c0, msg, sizeof(msg))) TH_LOG("%s", msg);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_queue_create(self->rt.gpu[i], RT_QUEUE_SIZE,
					   HSA_QUEUE_TYPE_MULTI, NULL, NULL,
					   UINT32_MAX, UINT32_MAX, &q[i]));
		EXPECT_EQ(RT_QUEUE_SIZE, q[i]->size);
		EXPECT_EQ(HSA_QUEUE_TYPE_MULTI, q[i]->type);
	}
	ASSERT_EQ(0, kt_counters(&c1, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_LE(n, kt_counter(&c1, "queues") - kt_counter(&c0, "queues"));
	for (i = 0; i < n; i++)
		EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_queue_destroy(q[i]));
	ASSERT_EQ(0, kt_counters(&c0, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_EQ(n, kt_counter(&c1, "queues") - kt_counter(&c0, "queues"));
}

struct rt_waker {
	hsa_signal_t sig;
	unsigned int delay_ms;
};

static void *rt_waker_fn(void *arg)
{
	struct rt_waker *w = arg;

	usleep(w->delay_ms * 1000);
	hsa_signal_store_screlease(w->sig, 0);
	return NULL;
}

/*
 * A signal with no named consumers is an interrupt signal (a KFD event
 * behind it): a blocked wait sleeps until another thread stores to it.
 */
TEST_F_TIMEOUT(rocr, interrupt_signal_blocks_and_wakes, RT_TEST_TIMEOUT)
{
	struct rt_waker w = { .delay_ms = 300 };
	hsa_signal_value_t v;
	pthread_t thread;
	uint64_t t0, ms;

	ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_signal_create(1, 0, NULL, &w.sig));
	t0 = rt_now_ns();
	ASSERT_EQ(0, pthread_create(&thread, NULL, rt_waker_fn, &w));
	v = hsa_signal_wait_scacquire(w.sig, HSA_SIGNAL_CONDITION_LT, 1,
				      UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
	ms = (rt_now_ns() - t0) / 1000000;
	pthread_join(thread, NULL);
	EXPECT_EQ(0, v);
	EXPECT_LE(w.delay_ms - 50, ms) TH_LOG("woke after %llu ms",
					      (unsigned long long)ms);
	EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_signal_destroy(w.sig));
}

/* ROCr's SDMA copies: host <-> VRAM and GPU <-> GPU, bytes exact. */
TEST_F_TIMEOUT(rocr, async_copy_host_vram_gpu, RT_TEST_TIMEOUT)
{
	char msg[256];

	ASSERT_EQ(0, rt_copy_roundtrip(&self->rt, msg, sizeof(msg)))
		TH_LOG("%s", msg);
}

/* A built-in kernel through every GPU's ROCr queue, against the CPU. */
TEST_F_TIMEOUT(rocr, dispatch_builtin_kernel, RT_TEST_TIMEOUT)
{
	char msg[256];
	int i;

	for (i = 0; i < self->rt.ngpus; i++)
		ASSERT_EQ(0, rt_vadd(&self->rt, i, msg, sizeof(msg)))
			TH_LOG("GPU %d: %s", i, msg);
}

struct rt_qerr {
	int fired;		/* set last, with release order */
	hsa_status_t status;
	hsa_queue_t *source;
};

/* A queue's error callback; ROCr calls it from its event thread. */
static void rt_qerr_cb(hsa_status_t status, hsa_queue_t *source, void *data)
{
	struct rt_qerr *e = data;

	e->status = status;
	e->source = source;
	__atomic_store_n(&e->fired, 1, __ATOMIC_RELEASE);
}

/* The broken dispatches of queue_error_callback_names_the_cause. */
enum rt_bad {
	RT_BAD_GPU_CODE,	/* gfx9 machine code, an illegal instruction */
	RT_BAD_GRID_ZERO,
	RT_BAD_GROUP_TOO_LARGE,
	RT_BAD_VENDOR_PACKET,
	RT_BAD_COUNT,
};

/*
 * Each packet the CP cannot run stops its queue and reaches the callback
 * given to hsa_queue_create with the status ROCr derives from the CP's
 * error code; the completion signal never fires and the queue can still
 * be destroyed.
 */
TEST_F_TIMEOUT(rocr, queue_error_callback_names_the_cause, RT_TEST_TIMEOUT)
{
	static const struct {
		hsa_status_t status;
		const char *log;
	} want[RT_BAD_COUNT] = {
		{ (hsa_status_t)HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION,
		  "illegal instruction 0xf0000000" },
		{ HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
		  "bad grid or workgroup sizes" },
		{ HSA_STATUS_ERROR_INVALID_ARGUMENT,
		  "workgroup too large" },
		{ HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
		  "vendor-specific packet" },
	};
	struct kfdsim_kernel_descriptor *desc;
	struct kfdsim_args_fill *args;
	uint32_t *code, *buf, i;
	char line[1024];
	int kmsg, k;

	desc = rt_alloc(&self->rt, self->rt.kernarg, KT_PAGE);
	args = rt_alloc(&self->rt, self->rt.kernarg, KT_PAGE);
	code = rt_alloc(&self->rt, self->rt.kernarg, KT_PAGE);
	buf = rt_alloc(&self->rt, self->rt.fine, KT_PAGE);
	ASSERT_TRUE(desc && args && code && buf);
	*desc = (struct kfdsim_kernel_descriptor){ KFDSIM_KERNEL_MAGIC,
		KFDSIM_KERNEL_VERSION, KFDSIM_KERNEL_FILL_U32, 0 };
	*args = (struct kfdsim_args_fill){ .dst = (uintptr_t)buf,
					   .value = 7 };
	/*
	 * gfx9 machine code (Documentation/gfx9-engine.rst): a kernel
	 * descriptor whose code, 256 bytes on, starts with a MIMG
	 * instruction the simulated GPU does not execute.
	 */
	for (i = 0; i < KT_PAGE / 4; i++)
		code[i] = 0xbf810000u;	/* s_endpgm */
	memset(code, 0, 64);
	code[4] = 256;			/* kernel_code_entry_byte_offset */
	code[64] = 0xf0000000u;
	memset(buf, 0, KT_PAGE);
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));

	for (k = 0; k < RT_BAD_COUNT; k++) {
		struct rt_qerr e = { 0 };
		hsa_kernel_dispatch_packet_t *pkt;
		uint64_t deadline, idx;
		hsa_signal_t done;
		hsa_queue_t *q;
		uint16_t header;

		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_queue_create(self->rt.gpu[0], RT_QUEUE_SIZE,
					   HSA_QUEUE_TYPE_SINGLE, rt_qerr_cb,
					   &e, UINT32_MAX, UINT32_MAX, &q));
		ASSERT_EQ(HSA_STATUS_SUCCESS,
			  hsa_signal_create(1, 0, NULL, &done));
		idx = hsa_queue_add_write_index_relaxed(q, 1);
		pkt = (hsa_kernel_dispatch_packet_t *)q->base_address +
		      (idx & (q->size - 1));
		memset((uint8_t *)pkt + 4, 0, sizeof(*pkt) - 4);
		pkt->workgroup_size_x = 64;
		pkt->workgroup_size_y = 1;
		pkt->workgroup_size_z = 1;
		pkt->grid_size_x = 64;
		pkt->grid_size_y = 1;
		pkt->grid_size_z = 1;
		pkt->kernel_object = (uintptr_t)desc;
		pkt->kernarg_address = args;
		pkt->completion_signal = done;
		header = HSA_PACKET_TYPE_KERNEL_DISPATCH;
		switch (k) {
		case RT_BAD_GPU_CODE:
			pkt->kernel_object = (uintptr_t)code;
			break;
		case RT_BAD_GRID_ZERO:
			pkt->grid_size_x = 0;
			break;
		case RT_BAD_GROUP_TOO_LARGE:
			pkt->workgroup_size_x = 2048;
			pkt->grid_size_x = 4096;
			break;
		case RT_BAD_VENDOR_PACKET:
			header = HSA_PACKET_TYPE_VENDOR_SPECIFIC;
			break;
		}
		header |= 1 << HSA_PACKET_HEADER_BARRIER;
		__atomic_store_n((uint32_t *)pkt, header | 1u << 16,
				 __ATOMIC_RELEASE);
		hsa_signal_store_screlease(q->doorbell_signal, idx);

		deadline = rt_now_ns() + RT_TIMEOUT_NS;
		while (!__atomic_load_n(&e.fired, __ATOMIC_ACQUIRE) &&
		       rt_now_ns() < deadline)
			usleep(10000);
		EXPECT_EQ(1, __atomic_load_n(&e.fired, __ATOMIC_ACQUIRE))
			TH_LOG("case %d: no queue error callback", k);
		EXPECT_EQ(want[k].status, e.status) TH_LOG("case %d", k);
		EXPECT_EQ(q, e.source) TH_LOG("case %d", k);
		EXPECT_EQ(1, hsa_signal_load_scacquire(done))
			TH_LOG("case %d", k);
		EXPECT_EQ(1, rt_kmsg_find(kmsg, want[k].log, 1000, line,
					  sizeof(line)))
			TH_LOG("case %d: no kernel log line with \"%s\"", k,
			       want[k].log);
		EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_queue_destroy(q));
		EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_signal_destroy(done));
	}
	close(kmsg);
	/* Nothing ran. */
	EXPECT_TRUE(kt_is_zero(buf, KT_PAGE));
	hsa_amd_memory_pool_free(desc);
	hsa_amd_memory_pool_free(args);
	hsa_amd_memory_pool_free(code);
	hsa_amd_memory_pool_free(buf);
}

/* A whole ROCr session, in a child the test outlives. */
static int rt_session(void *arg, char *msg, size_t len)
{
	struct rocr_agents rt;

	(void)arg;
	if (rt_open(&rt, msg, len) || rt_copy_roundtrip(&rt, msg, len) ||
	    rt_vadd(&rt, rt.ngpus - 1, msg, len))
		return -1;
	KT_CHECK(hsa_shut_down() == HSA_STATUS_SUCCESS, "hsa_shut_down");
	return 0;
}

/* Kernel log lines from kfdsim since @fd was opened; -1 on error. */
static int rt_kmsg_kfdsim_lines(int fd, char *out, size_t outlen)
{
	char rec[1024];
	int n = 0;
	ssize_t r;

	out[0] = 0;
	for (;;) {
		r = read(fd, rec, sizeof(rec) - 1);
		if (r < 0 && errno == EPIPE)
			continue;	/* overwritten records */
		if (r < 0)
			return errno == EAGAIN ? n : -1;
		rec[r] = 0;
		if (strstr(rec, "kfdsim")) {
			if (!n++)
				snprintf(out, outlen, "%s", rec);
		}
	}
}

/* How long a call that ends in ROCr's queue error path may take at most. */
#define RT_ERROR_PATH_MS	120000

/*
 * Run @fn in a child whose stderr goes to @err; the child is killed if it
 * has not ended within RT_ERROR_PATH_MS (a hang guard, not a measure).
 * Returns the child's wait status, or -1 if it hung or on error.
 */
static int rt_child_stderr(int (*fn)(void *arg), void *arg, char *err,
			   size_t errlen)
{
	uint64_t deadline = rt_now_ns() + RT_ERROR_PATH_MS * 1000000ULL;
	int pipefd[2], status, hung = 0;
	struct pollfd pfd;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	err[0] = 0;
	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (!pid) {
		struct rlimit nocore = { 0, 0 };

		setrlimit(RLIMIT_CORE, &nocore);
		if (dup2(pipefd[1], STDERR_FILENO) < 0)
			_exit(3);
		_exit(fn(arg) ? 1 : 0);
	}
	close(pipefd[1]);
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	for (;;) {
		uint64_t now = rt_now_ns();

		if (now >= deadline) {
			hung = 1;
			break;
		}
		n = poll(&pfd, 1, (deadline - now) / 1000000 + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			continue;
		n = read(pipefd[0], err + got, errlen - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* the child is gone, or the buffer is full */
		got += n;
		if (got + 1 >= errlen)
			break;
	}
	err[got] = 0;
	close(pipefd[0]);
	if (hung)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return hung ? -1 : status;
}

/* hsa_amd_memory_fill of VRAM: ROCr runs its fill kernel (GPU code). */
/*
 * ROCr's own kernels (gfx9 machine code in a legacy amd_kernel_code_t)
 * behind hsa_amd_memory_fill and a same-GPU copy of 4 MiB or more run on
 * the simulated GPU (Documentation/gfx9-engine.rst). Each runs in a child
 * process, so that a queue error (ROCr aborts) fails the test instead of
 * the test binary; the result is read back with an SDMA copy and compared
 * here.
 */
static int rt_readback(struct rocr_agents *rt, void *dst, const void *src,
		       size_t size)
{
	hsa_signal_t sig;
	int ret = -1;

	if (hsa_signal_create(1, 0, NULL, &sig))
		return -1;
	if (!hsa_amd_memory_async_copy(dst, rt->cpu, src, rt->gpu[0], size, 0,
				       NULL, sig) && rt_wait(sig) == 0)
		ret = 0;
	hsa_signal_destroy(sig);
	return ret;
}

/* An odd number of dwords, so the kernel's tail handling runs too. */
#define RT_FILL_DWORDS	(KT_MIB / 4 + 3)

static int rt_fill_child(void *arg)
{
	size_t size = RT_FILL_DWORDS * 4, i;
	struct rocr_agents rt;
	uint32_t *v, *host;
	char msg[256];
	hsa_status_t s;

	(void)arg;
	if (rt_open(&rt, msg, sizeof(msg))) {
		fprintf(stderr, "%s\n", msg);
		return -1;
	}
	v = rt_alloc(&rt, rt.vram[0], size);
	host = rt_alloc(&rt, rt.fine, size);
	if (!v || !host)
		return -1;
	s = hsa_amd_memory_fill(v, 0x5a5aa5a5u, RT_FILL_DWORDS);
	if (s != HSA_STATUS_SUCCESS) {
		fprintf(stderr, "fill returned 0x%x\n", s);
		return -1;
	}
	memset(host, 0, size);
	if (rt_readback(&rt, host, v, size)) {
		fprintf(stderr, "read back failed\n");
		return -1;
	}
	for (i = 0; i < RT_FILL_DWORDS; i++) {
		if (host[i] != 0x5a5aa5a5u) {
			fprintf(stderr, "dword %zu is 0x%x\n", i, host[i]);
			return -1;
		}
	}
	return hsa_shut_down() == HSA_STATUS_SUCCESS ? 0 : -1;
}

/*
 * A copy of 4 MiB and a few bytes within the VRAM of one GPU: ROCr uses
 * its copy kernel, not SDMA.
 */
static int rt_same_gpu_copy_child(void *arg)
{
	size_t size = 4 * KT_MIB + 12;
	struct rocr_agents rt;
	uint8_t *a, *b, *host;
	hsa_signal_t sig;
	char msg[256];

	(void)arg;
	if (rt_open(&rt, msg, sizeof(msg))) {
		fprintf(stderr, "%s\n", msg);
		return -1;
	}
	a = rt_alloc(&rt, rt.vram[0], size);
	b = rt_alloc(&rt, rt.vram[0], size);
	host = rt_alloc(&rt, rt.fine, size);
	if (!a || !b || !host || hsa_signal_create(1, 0, NULL, &sig))
		return -1;
	kt_fill(host, size, 91);
	/* host -> a by SDMA, a -> b by ROCr's copy kernel, b -> host. */
	if (hsa_amd_memory_async_copy(a, rt.gpu[0], host, rt.cpu, size, 0,
				      NULL, sig) || rt_wait(sig) != 0) {
		fprintf(stderr, "copy host -> VRAM failed\n");
		return -1;
	}
	hsa_signal_store_relaxed(sig, 1);
	if (hsa_amd_memory_async_copy(b, rt.gpu[0], a, rt.gpu[0], size, 0,
				      NULL, sig) || rt_wait(sig) != 0) {
		fprintf(stderr, "same-GPU copy failed\n");
		return -1;
	}
	memset(host, 0, size);
	if (rt_readback(&rt, host, b, size) || !kt_check(host, size, 91)) {
		fprintf(stderr, "bytes differ after the copy kernel\n");
		return -1;
	}
	hsa_signal_destroy(sig);
	return hsa_shut_down() == HSA_STATUS_SUCCESS ? 0 : -1;
}

/*
 * The call runs ROCr's kernel to the right result, kfdsim logs nothing
 * about it, and the process gives everything back.
 */
static void rt_expect_rocr_kernel_ok(struct __test_metadata *_metadata,
				     int (*fn)(void *arg))
{
	char err[4096], line[1024];
	struct kt_props c0, c1;
	char msg[512];
	int kmsg, status;

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	ASSERT_EQ(0, kt_counters(&c0, msg, sizeof(msg))) TH_LOG("%s", msg);
	status = rt_child_stderr(fn, NULL, err, sizeof(err));
	ASSERT_NE(-1, status) TH_LOG("the call hung; stderr: %s", err);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("wait status 0x%x; stderr: %s", status, err);
	EXPECT_EQ(0, rt_kmsg_kfdsim_lines(kmsg, line, sizeof(line)))
		TH_LOG("kernel log: %s", line);
	close(kmsg);
	ASSERT_EQ(0, kt_counters(&c1, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_EQ(0, kt_counters_diff(&c0, &c1, msg, sizeof(msg)))
		TH_LOG("counters changed: %s", msg);
}

/* The ioctls ROCr needs that kfdsim used to lack, checked directly. */
FIXTURE(kfd) {
	struct kt_env e;
};

FIXTURE_SETUP(kfd)
{
	ASSERT_EQ(0, kt_env_open(&self->e, false));
}

FIXTURE_TEARDOWN(kfd)
{
	kt_env_close(&self->e);
}

/* gfx906 runs without XNACK: queries say off, turning it on is -EPERM. */
TEST_F(kfd, set_xnack_mode)
{
	struct kfd_ioctl_set_xnack_mode_args a = { .xnack_enabled = -1 };

	ASSERT_EQ(0, kt_ioctl(self->e.kfd, AMDKFD_IOC_SET_XNACK_MODE, &a));
	EXPECT_EQ(0, a.xnack_enabled);
	a.xnack_enabled = 1;
	EXPECT_EQ(-EPERM, kt_ioctl(self->e.kfd, AMDKFD_IOC_SET_XNACK_MODE, &a));
	a.xnack_enabled = 0;
	EXPECT_EQ(0, kt_ioctl(self->e.kfd, AMDKFD_IOC_SET_XNACK_MODE, &a));
	a.xnack_enabled = -1;
	ASSERT_EQ(0, kt_ioctl(self->e.kfd, AMDKFD_IOC_SET_XNACK_MODE, &a));
	EXPECT_EQ(0, a.xnack_enabled);
}

/* Both need a known GPU with a VM (amdkfd's kfd_bind_process_to_device). */
TEST_F(kfd, scratch_backing_va_and_trap_handler)
{
	struct kfd_ioctl_set_scratch_backing_va_args s = {
		.va_addr = 0x7f0000000000ULL >> 16,
		.gpu_id = self->e.gpu[0].gpu_id,
	};
	struct kfd_ioctl_set_trap_handler_args t = {
		.tba_addr = 0x7f0000100000ULL,
		.tma_addr = 0x7f0000200000ULL,
		.gpu_id = self->e.gpu[0].gpu_id,
	};
	int kfd = self->e.kfd;

	EXPECT_EQ(-ENODEV, kt_ioctl(kfd, AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &s));
	EXPECT_EQ(-ENODEV, kt_ioctl(kfd, AMDKFD_IOC_SET_TRAP_HANDLER, &t));
	ASSERT_EQ(0, kt_acquire_vm(kfd, self->e.render[0], s.gpu_id));
	EXPECT_EQ(0, kt_ioctl(kfd, AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &s));
	EXPECT_EQ(0, kt_ioctl(kfd, AMDKFD_IOC_SET_TRAP_HANDLER, &t));
	s.pad = t.pad = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(kfd, AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &s));
	EXPECT_EQ(-EINVAL, kt_ioctl(kfd, AMDKFD_IOC_SET_TRAP_HANDLER, &t));
	s.pad = t.pad = 0;
	s.gpu_id = t.gpu_id = 0;
	EXPECT_EQ(-EINVAL, kt_ioctl(kfd, AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &s));
	EXPECT_EQ(-EINVAL, kt_ioctl(kfd, AMDKFD_IOC_SET_TRAP_HANDLER, &t));
}

/*
 * The MMIO remap BO: one page, mapped through /dev/kfd at an offset that
 * carries the device's gpu_id, writable by the CPU and GPU-mappable.
 */
TEST_F(kfd, mmio_remap_page)
{
	uint32_t id = self->e.gpu[0].gpu_id;
	uint64_t handle, off;
	volatile uint32_t *reg;

	ASSERT_EQ(0, kt_acquire_vm(self->e.kfd, self->e.render[0], id));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, id, KT_VA(1), KT_PAGE,
			      KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP | KT_WRITABLE,
			      &handle, &off));
	EXPECT_EQ(KFD_MMAP_TYPE_MMIO | KFD_MMAP_GPU_ID(id), off);
	ASSERT_EQ(0, kt_map(self->e.kfd, handle, &id, 1));
	reg = mmap(NULL, KT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   self->e.kfd, off);
	ASSERT_NE(MAP_FAILED, reg);
	reg[KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL / 4] = 1;
	EXPECT_EQ(1, reg[KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL / 4]);
	EXPECT_EQ(-EINVAL, kt_export(self->e.kfd, handle, 0, NULL));
	munmap((void *)reg, KT_PAGE);
	EXPECT_EQ(0, kt_unmap(self->e.kfd, handle, &id, 1));
	EXPECT_EQ(0, kt_free(self->e.kfd, handle));
}

/* Changing the XNACK mode needs a process without queues. */
TEST_F_TIMEOUT(rocr, xnack_mode_busy_with_queues, RT_TEST_TIMEOUT)
{
	struct kfd_ioctl_set_xnack_mode_args a = { .xnack_enabled = 0 };
	hsa_queue_t *q;
	int kfd;

	ASSERT_EQ(HSA_STATUS_SUCCESS,
		  hsa_queue_create(self->rt.gpu[0], RT_QUEUE_SIZE,
				   HSA_QUEUE_TYPE_SINGLE, NULL, NULL,
				   UINT32_MAX, UINT32_MAX, &q));
	/* Another open of /dev/kfd reaches the same process state. */
	kfd = kt_open_kfd();
	ASSERT_LE(0, kfd);
	EXPECT_EQ(-EBUSY, kt_ioctl(kfd, AMDKFD_IOC_SET_XNACK_MODE, &a));
	close(kfd);
	EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_queue_destroy(q));
}

FIXTURE(session) {
	int unused;
};

FIXTURE_SETUP(session)
{
}

FIXTURE_TEARDOWN(session)
{
}

TEST_F_TIMEOUT(session, shutdown_leaks_nothing_quiet_log, RT_TEST_TIMEOUT)
{
	struct kt_props before, after;
	char msg[512], line[1024];
	int kmsg;

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	ASSERT_EQ(0, kt_counters(&before, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, kt_run_child(rt_session, NULL, msg, sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, kt_counters(&after, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_EQ(0, kt_counters_diff(&before, &after, msg, sizeof(msg)))
		TH_LOG("counters changed: %s", msg);
	EXPECT_EQ(0, rt_kmsg_kfdsim_lines(kmsg, line, sizeof(line)))
		TH_LOG("kernel log: %s", line);
	close(kmsg);
}

/* hsa_amd_memory_fill runs ROCr's fill kernel on the simulated GPU. */
TEST_F_TIMEOUT(session, memory_fill_runs_rocr_kernel, RT_TEST_TIMEOUT)
{
	rt_expect_rocr_kernel_ok(_metadata, rt_fill_child);
}

/* So does a same-GPU copy of 4 MiB (HSA_FORCE_SDMA_SIZE) and more. */
TEST_F_TIMEOUT(session, same_gpu_copy_4mib_runs_rocr_kernel,
	       RT_TEST_TIMEOUT)
{
	rt_expect_rocr_kernel_ok(_metadata, rt_same_gpu_copy_child);
}

TEST_HARNESS_MAIN
