// SPDX-License-Identifier: GPL-2.0
/*
 * Debian's libhsakmt (AMD's ROCt thunk) on the simulated GPUs: opening
 * KFD, the topology it builds (checked against sysfs), memory, events, and
 * SDMA and AQL queues that run work rung through the doorbells the thunk
 * maps. PM4 compute queues, which the simulator lacks, must fail.
 *
 * The thunk keeps one global KFD state per process; every test runs in its
 * own process (the harness forks), and the teardown test runs a whole
 * session in a child to check that the driver gets everything back once
 * that process is gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hsakmt.h>
#include <linux/kfdsim.h>

#include "kt_harness.h"
#include "kfdsim_test.h"
#include "kfdsim_gpu.h"

#define HK_MARKETING	"AMD Instinct MI60 / MI50"
#define HK_TIMEOUT_MS	60000
#define HK_RING_SIZE	(64 * 1024)

/* System memory the GPUs can reach, mapped at the same address. */
static void *hk_sys_alloc(HSAuint64 size)
{
	HsaMemFlags f = { 0 };
	HSAuint64 gpu_va;
	void *p = NULL;

	f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
	f.ui32.HostAccess = 1;
	f.ui32.ExecuteAccess = 1;
	if (hsaKmtAllocMemory(0, size, f, &p) != HSAKMT_STATUS_SUCCESS)
		return NULL;
	if (hsaKmtMapMemoryToGPU(p, size, &gpu_va) != HSAKMT_STATUS_SUCCESS) {
		hsaKmtFreeMemory(p, size);
		return NULL;
	}
	memset(p, 0, size);
	return p;
}

static void hk_free(void *p, HSAuint64 size)
{
	hsaKmtUnmapMemoryToGPU(p);
	hsaKmtFreeMemory(p, size);
}

/* VRAM of @node that the CPU can map too (the simulated BAR is large). */
static void *hk_vram_alloc(HSAuint32 node, HSAuint64 size)
{
	HsaMemFlags f = { 0 };
	HSAuint64 gpu_va;
	void *p = NULL;

	f.ui32.NonPaged = 1;
	f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
	f.ui32.HostAccess = 1;
	if (hsaKmtAllocMemory(node, size, f, &p) != HSAKMT_STATUS_SUCCESS)
		return NULL;
	if (hsaKmtMapMemoryToGPU(p, size, &gpu_va) != HSAKMT_STATUS_SUCCESS) {
		hsaKmtFreeMemory(p, size);
		return NULL;
	}
	return p;
}

static HSAKMT_STATUS hk_signal_event(HSAuint32 node, HsaEvent **ev)
{
	HsaEventDescriptor d = { 0 };

	d.EventType = HSA_EVENTTYPE_SIGNAL;
	d.NodeId = node;
	d.SyncVar.SyncVarSize = sizeof(HSAuint64);
	return hsaKmtCreateEvent(&d, true, false, ev);
}

static bool hk_wait_u64(volatile HSAuint64 *p, HSAuint64 value)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	for (i = 0; i < HK_TIMEOUT_MS; i++) {
		if (__atomic_load_n(p, __ATOMIC_ACQUIRE) == value)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

static bool all_u32(const void *buf, size_t n, uint32_t v)
{
	const uint32_t *p = buf;
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

FIXTURE(hk) {
	struct kt_gpu gpu[KT_MAX_GPUS];
	int ngpus;
	HsaSystemProperties sys;
};

FIXTURE_SETUP(hk)
{
	self->ngpus = kt_gpus(self->gpu, KT_MAX_GPUS);
	ASSERT_LT(0, self->ngpus);
	ASSERT_EQ(HSAKMT_STATUS_SUCCESS, hsaKmtOpenKFD());
	ASSERT_EQ(HSAKMT_STATUS_SUCCESS,
		  hsaKmtAcquireSystemProperties(&self->sys));
}

FIXTURE_TEARDOWN(hk)
{
	hsaKmtReleaseSystemProperties();
	hsaKmtCloseKFD();
}

TEST_F(hk, version)
{
	HsaVersionInfo v;

	ASSERT_EQ(HSAKMT_STATUS_SUCCESS, hsaKmtGetVersion(&v));
	EXPECT_EQ(1, v.KernelInterfaceMajorVersion);
	EXPECT_LE(12, v.KernelInterfaceMinorVersion);
}

/* The thunk's node properties are the sysfs topology's. */
TEST_F(hk, node_properties)
{
	int i;

	ASSERT_EQ(self->ngpus + 1, self->sys.NumNodes);
	for (i = 0; i < self->ngpus; i++) {
		char path[256], err[256], name[HSA_PUBLIC_NAME_SIZE + 1];
		HsaMemoryProperties mem[8];
		struct kt_props p;
		HsaNodeProperties np;
		unsigned long long v;
		HSAuint32 node = self->gpu[i].node;
		unsigned int k, vram = 0;

		snprintf(path, sizeof(path), "%s/%u/properties", KT_NODES, node);
		ASSERT_EQ(0, kt_props_read(path, false, &p, err, sizeof(err)));
		ASSERT_EQ(HSAKMT_STATUS_SUCCESS,
			  hsaKmtGetNodeProperties(node, &np));
		ASSERT_TRUE(kt_prop(&p, "simd_count", &v));
		EXPECT_EQ(v, np.NumFComputeCores);
		ASSERT_TRUE(kt_prop(&p, "device_id", &v));
		EXPECT_EQ(v, np.DeviceId);
		ASSERT_TRUE(kt_prop(&p, "local_mem_size", &v));
		EXPECT_EQ(v, np.LocalMemSize);
		ASSERT_TRUE(kt_prop(&p, "num_sdma_engines", &v));
		EXPECT_EQ(v, np.NumSdmaEngines);
		ASSERT_TRUE(kt_prop(&p, "unique_id", &v));
		EXPECT_EQ(v, np.UniqueID);
		/* gfx906 */
		EXPECT_EQ(9, (unsigned int)np.EngineId.ui32.Major);
		EXPECT_EQ(0, (unsigned int)np.EngineId.ui32.Minor);
		EXPECT_EQ(6, (unsigned int)np.EngineId.ui32.Stepping);
		/* The marketing name comes from libdrm_amdgpu on the node. */
		for (k = 0; k < HSA_PUBLIC_NAME_SIZE && np.MarketingName[k]; k++)
			name[k] = (char)np.MarketingName[k];
		name[k] = '\0';
		EXPECT_STREQ(HK_MARKETING, name);

		ASSERT_GE(8, np.NumMemoryBanks);
		ASSERT_EQ(HSAKMT_STATUS_SUCCESS,
			  hsaKmtGetNodeMemoryProperties(node, np.NumMemoryBanks,
							mem));
		for (k = 0; k < np.NumMemoryBanks; k++)
			if (mem[k].HeapType ==
			    HSA_HEAPTYPE_FRAME_BUFFER_PUBLIC) {
				vram++;
				EXPECT_EQ(np.LocalMemSize, mem[k].SizeInBytes);
			}
		EXPECT_EQ(1, vram);
	}
}

/* VRAM and system memory: allocate, map to the GPU, touch, free. */
TEST_F(hk, alloc_map_memory)
{
	const HSAuint64 size = 2 * KT_MIB;
	int i;

	for (i = 0; i < self->ngpus; i++) {
		HsaMemFlags f = { 0 };
		HSAuint64 gpu_va = 0;
		void *v, *s;

		v = hk_vram_alloc(self->gpu[i].node, size);
		ASSERT_NE(NULL, v);
		kt_fill(v, size, 3 + i);
		EXPECT_TRUE(kt_check(v, size, 3 + i));
		hk_free(v, size);

		s = hk_sys_alloc(size);
		ASSERT_NE(NULL, s);
		kt_fill(s, size, 9);
		EXPECT_TRUE(kt_check(s, size, 9));
		hk_free(s, size);

		/* VRAM the CPU never maps */
		f.ui32.NonPaged = 1;
		f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
		v = NULL;
		ASSERT_EQ(HSAKMT_STATUS_SUCCESS,
			  hsaKmtAllocMemory(self->gpu[i].node, size, f, &v));
		EXPECT_EQ(HSAKMT_STATUS_SUCCESS,
			  hsaKmtMapMemoryToGPU(v, size, &gpu_va));
		EXPECT_EQ(HSAKMT_STATUS_SUCCESS, hsaKmtUnmapMemoryToGPU(v));
		EXPECT_EQ(HSAKMT_STATUS_SUCCESS, hsaKmtFreeMemory(v, size));
	}
}

TEST_F(hk, events)
{
	HsaEvent *ev = NULL;

	ASSERT_EQ(HSAKMT_STATUS_SUCCESS,
		  hk_signal_event(self->gpu[0].node, &ev));
	EXPECT_EQ(HSAKMT_STATUS_WAIT_TIMEOUT, hsaKmtWaitOnEvent(ev, 10));
	EXPECT_EQ(HSAKMT_STATUS_SUCCESS, hsaKmtSetEvent(ev));
	EXPECT_EQ(HSAKMT_STATUS_SUCCESS, hsaKmtWaitOnEvent(ev, 0));
	EXPECT_EQ(HSAKMT_STATUS_SUCCESS, hsaKmtResetEvent(ev));
	EXPECT_EQ(HSAKMT_STATUS_WAIT_TIMEOUT, hsaKmtWaitOnEvent(ev, 10));
	EXPECT_EQ(HSAKMT_STATUS_SUCCESS, hsaKmtDestroyEvent(ev));
}

/* An SDMA queue fills VRAM and fires an event with a TRAP packet. */
TEST_F_TIMEOUT(hk, sdma_queue_fill_and_trap, 120)
{
	const HSAuint64 size = 256 * 1024;
	int i;

	for (i = 0; i < self->ngpus; i++) {
		HSAuint32 node = self->gpu[i].node;
		HsaQueueResource qr = { 0 };
		HsaEvent *ev = NULL;
		uint32_t *ring, *dst, n = 0;
		uint64_t va;

		dst = hk_vram_alloc(node, size);
		ASSERT_NE(NULL, dst);
		memset(dst, 0, size);
		ring = hk_sys_alloc(HK_RING_SIZE);
		ASSERT_NE(NULL, ring);
		ASSERT_EQ(HSAKMT_STATUS_SUCCESS, hk_signal_event(node, &ev));
		ASSERT_EQ(HSAKMT_STATUS_SUCCESS,
			  hsaKmtCreateQueue(node, HSA_QUEUE_SDMA, 100,
					    HSA_QUEUE_PRIORITY_NORMAL, ring,
					    HK_RING_SIZE, NULL, &qr));

		va = (uintptr_t)dst;
		n += kg_sdma_fill_packet(ring + n, va, 0xc0ffee00 + i,
					 (uint32_t)size - 1);
		n += kg_sdma_trap_packet(ring + n, ev->EventId);
		/* The doorbell takes the byte write pointer, 64 bits. */
		__atomic_store_n(qr.Queue_write_ptr_aql, (HSAuint64)n * 4,
				 __ATOMIC_RELEASE);
		__atomic_store_n(qr.Queue_DoorBell_aql, (HSAuint64)n * 4,
				 __ATOMIC_RELEASE);

		EXPECT_EQ(HSAKMT_STATUS_SUCCESS,
			  hsaKmtWaitOnEvent(ev, HK_TIMEOUT_MS));
		EXPECT_TRUE(hk_wait_u64(qr.Queue_read_ptr_aql, n * 4));
		EXPECT_TRUE(all_u32(dst, size / 4, 0xc0ffee00 + i));

		EXPECT_EQ(HSAKMT_STATUS_SUCCESS,
			  hsaKmtDestroyQueue(qr.QueueId));
		EXPECT_EQ(HSAKMT_STATUS_SUCCESS, hsaKmtDestroyEvent(ev));
		hk_free(ring, HK_RING_SIZE);
		hk_free(dst, size);
	}
}

/*
 * An AQL queue runs a built-in fill kernel; its completion signal names
 * the event's mailbox, as ROCr's signals do.
 */
TEST_F_TIMEOUT(hk, aql_queue_dispatch_and_event, 120)
{
	const uint32_t n = 64 * 1024;
	int i;

	for (i = 0; i < self->ngpus; i++) {
		HSAuint32 node = self->gpu[i].node;
		struct kfdsim_kernel_descriptor *kd;
		struct kfdsim_aql_dispatch *pkt, p = { 0 };
		struct kfdsim_args_fill *args;
		struct kfdsim_signal *sig;
		HsaQueueResource qr = { 0 };
		HSAuint64 *ptrs;
		HsaEvent *ev = NULL;
		uint32_t *dst;
		char *ctl;

		dst = hk_vram_alloc(node, n * 4);
		ASSERT_NE(NULL, dst);
		memset(dst, 0, n * 4);
		pkt = hk_sys_alloc(HK_RING_SIZE);
		ASSERT_NE(NULL, pkt);
		ctl = hk_sys_alloc(KT_PAGE);
		ASSERT_NE(NULL, ctl);
		ASSERT_EQ(HSAKMT_STATUS_SUCCESS, hk_signal_event(node, &ev));

		/* ctl page: rptr, wptr, descriptor, kernarg, signal */
		ptrs = (HSAuint64 *)ctl;
		kd = (void *)(ctl + 64);
		args = (void *)(ctl + 128);
		sig = (void *)(ctl + 256);
		kd->magic = KFDSIM_KERNEL_MAGIC;
		kd->version = KFDSIM_KERNEL_VERSION;
		kd->opcode = KFDSIM_KERNEL_FILL_U32;
		args->dst = (uintptr_t)dst;
		args->value = 0xa11a0000 + i;
		sig->value = 1;
		sig->event_mailbox_ptr = ev->EventData.HWData2;
		sig->event_id = ev->EventData.HWData3;

		/* ROCr passes its own read and write index for AQL queues. */
		qr.Queue_read_ptr_aql = &ptrs[0];
		qr.Queue_write_ptr_aql = &ptrs[1];
		ASSERT_EQ(HSAKMT_STATUS_SUCCESS,
			  hsaKmtCreateQueue(node, HSA_QUEUE_COMPUTE_AQL, 100,
					    HSA_QUEUE_PRIORITY_NORMAL, pkt,
					    HK_RING_SIZE, NULL, &qr));

		p.setup = 1;
		p.workgroup_size_x = 64;
		p.workgroup_size_y = 1;
		p.workgroup_size_z = 1;
		p.grid_size_x = n;
		p.grid_size_y = 1;
		p.grid_size_z = 1;
		p.kernel_object = (uintptr_t)kd;
		p.kernarg_address = (uintptr_t)args;
		p.completion_signal = (uintptr_t)sig;
		memcpy((char *)pkt + 2, (char *)&p + 2, sizeof(p) - 2);
		__atomic_store_n(&pkt->header,
				 (uint16_t)(KFDSIM_AQL_TYPE_KERNEL_DISPATCH |
					    KFDSIM_AQL_FENCE_SCOPE_SYSTEM <<
					    KFDSIM_AQL_HEADER_ACQUIRE_SHIFT |
					    KFDSIM_AQL_FENCE_SCOPE_SYSTEM <<
					    KFDSIM_AQL_HEADER_RELEASE_SHIFT),
				 __ATOMIC_RELEASE);
		/* ROCm: next index in memory, the packet's index rung */
		__atomic_store_n(&ptrs[1], 1, __ATOMIC_RELEASE);
		__atomic_store_n(qr.Queue_DoorBell_aql, 0, __ATOMIC_RELEASE);

		EXPECT_EQ(HSAKMT_STATUS_SUCCESS,
			  hsaKmtWaitOnEvent(ev, HK_TIMEOUT_MS));
		EXPECT_TRUE(hk_wait_u64((HSAuint64 *)&sig->value, 0));
		EXPECT_TRUE(hk_wait_u64(&ptrs[0], 1));
		EXPECT_TRUE(all_u32(dst, n, 0xa11a0000 + i));

		EXPECT_EQ(HSAKMT_STATUS_SUCCESS,
			  hsaKmtDestroyQueue(qr.QueueId));
		EXPECT_EQ(HSAKMT_STATUS_SUCCESS, hsaKmtDestroyEvent(ev));
		hk_free(ctl, KT_PAGE);
		hk_free(pkt, HK_RING_SIZE);
		hk_free(dst, n * 4);
	}
}

/* PM4 compute queues are not simulated: the thunk reports an error. */
TEST_F(hk, pm4_queue_refused)
{
	HsaQueueResource qr = { 0 };
	void *ring = hk_sys_alloc(HK_RING_SIZE);

	ASSERT_NE(NULL, ring);
	EXPECT_EQ(HSAKMT_STATUS_ERROR,
		  hsaKmtCreateQueue(self->gpu[0].node, HSA_QUEUE_COMPUTE, 100,
				    HSA_QUEUE_PRIORITY_NORMAL, ring,
				    HK_RING_SIZE, NULL, &qr));
	hk_free(ring, HK_RING_SIZE);
}

/* A whole session, left for the driver to clean up when the process goes. */
static int hk_session(void *arg, char *msg, size_t len)
{
	HsaSystemProperties sys;
	HsaQueueResource qr = { 0 };
	HsaEvent *ev = NULL;
	const struct kt_gpu *gpu = arg;
	void *ring, *v;

	KT_CHECK(hsaKmtOpenKFD() == HSAKMT_STATUS_SUCCESS, "open");
	KT_CHECK(hsaKmtAcquireSystemProperties(&sys) == HSAKMT_STATUS_SUCCESS,
		 "topology");
	v = hk_vram_alloc(gpu->node, KT_MIB);
	ring = hk_sys_alloc(HK_RING_SIZE);
	KT_CHECK(v && ring, "memory");
	KT_CHECK(hk_signal_event(gpu->node, &ev) == HSAKMT_STATUS_SUCCESS,
		 "event");
	KT_CHECK(hsaKmtCreateQueue(gpu->node, HSA_QUEUE_SDMA, 100,
				   HSA_QUEUE_PRIORITY_NORMAL, ring,
				   HK_RING_SIZE, NULL, &qr) ==
		 HSAKMT_STATUS_SUCCESS, "queue");
	return 0;
}

TEST(teardown_returns_everything)
{
	struct kt_gpu gpu[KT_MAX_GPUS];
	struct kt_props before, after;
	char msg[512];

	ASSERT_LT(0, kt_gpus(gpu, KT_MAX_GPUS));
	ASSERT_EQ(0, kt_counters(&before, msg, sizeof(msg)));
	ASSERT_EQ(0, kt_run_child(hk_session, &gpu[0], msg, sizeof(msg)))
		TH_LOG("%s", msg);
	ASSERT_EQ(0, kt_counters(&after, msg, sizeof(msg)));
	EXPECT_EQ(0, kt_counters_diff(&before, &after, msg, sizeof(msg)))
		TH_LOG("counters changed: %s", msg);
}

TEST_HARNESS_MAIN
