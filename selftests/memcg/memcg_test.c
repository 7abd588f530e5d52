// SPDX-License-Identifier: GPL-2.0
/*
 * Memory the driver allocates because a user asked for it is charged to
 * that user's memory cgroup (Documentation/memory.rst, "Kernel memory
 * accounting"): a task in a cgroup with a small memory.max cannot make the
 * driver allocate past the limit. The guest does not mount cgroup2, so the
 * fixture mounts it on a temporary directory, enables the memory
 * controller and makes a child cgroup; each test's worker moves itself
 * into it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libdrm/amdgpu.h>
#include <libdrm/amdgpu_drm.h>

#include "kt_harness.h"
#include "kfdsim_test.h"
#include "kfdsim_gpu.h"
#include <linux/kfdsim.h>
#include "../libdrm/abo.h"

/* The largest IB the render node takes: 0xfffff dwords, rounded to 8. */
#define MC_IB_DWORDS	0xffff8u
#define MC_IB_BYTES	(4 * KT_MIB)
/* What the limit leaves the worker above its usage: well under the IB. */
#define MC_HEADROOM	(1 * KT_MIB)

FIXTURE(memcg) {
	char root[64];
	char cg[128];
	bool mounted;
	bool made;
	char msg[512];
};

static int mc_write(const char *dir, const char *file, const char *val)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

static int mc_read_ull(const char *dir, const char *file,
		       unsigned long long *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return kt_read_ull(path, val);
}

/* The value of @key in a "key value" file such as memory.events. */
static int mc_read_key(const char *dir, const char *file, const char *key,
		       unsigned long long *val)
{
	char path[256], buf[1024], *p;
	size_t klen = strlen(key);
	int n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	n = kt_read_file(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return n;
	buf[n] = '\0';
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, klen) && p[klen] == ' ') {
			*val = strtoull(p + klen + 1, NULL, 10);
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * Mount a cgroup2 hierarchy on a new directory under /tmp, named in ROOT.
 * Returns 0 or -errno; on failure nothing is left behind.
 */
static int cg2_mount(char *root, size_t size)
{
	int ret;

	snprintf(root, size, "/tmp/kfdsim-cg.XXXXXX");
	if (!mkdtemp(root))
		return -errno;
	if (mount("cgroup2", root, "cgroup2", 0, NULL)) {
		ret = -errno;
		rmdir(root);
		return ret;
	}
	return 0;
}

FIXTURE_SETUP(memcg)
{
	int ret;

	ret = cg2_mount(self->root, sizeof(self->root));
	if (ret == -ENODEV)
		SKIP(return, "no cgroup2 in this kernel");
	ASSERT_EQ(0, ret) TH_LOG("mount cgroup2: %s", strerror(-ret));
	self->mounted = true;
	ret = mc_write(self->root, "cgroup.subtree_control", "+memory");
	ASSERT_EQ(0, ret) TH_LOG("enable the memory controller: %s",
				 strerror(-ret));
	snprintf(self->cg, sizeof(self->cg), "%s/kfdsim-%d", self->root,
		 getpid());
	ASSERT_EQ(0, mkdir(self->cg, 0755)) TH_LOG("mkdir %s: %s", self->cg,
						   strerror(errno));
	self->made = true;
}

FIXTURE_TEARDOWN(memcg)
{
	/* Every worker has exited, so the cgroup is empty. */
	if (self->made && rmdir(self->cg))
		TH_LOG("rmdir %s: %s", self->cg, strerror(errno));
	if (self->mounted && umount2(self->root, MNT_DETACH))
		TH_LOG("umount %s: %s", self->root, strerror(errno));
	rmdir(self->root);
}

/* Submit @ndw dwords at @ib->va on the SDMA ring and wait for them. */
static int mc_submit(amdgpu_device_handle dev, const struct abo *ib,
		     uint32_t ndw)
{
	struct amdgpu_cs_ib_info info = {
		.ib_mc_address = ib->va,
		.size = ndw,
	};
	struct amdgpu_cs_request req = {
		.ip_type = AMDGPU_HW_IP_DMA,
		.number_of_ibs = 1,
		.ibs = &info,
	};
	struct amdgpu_cs_fence fence = { 0 };
	amdgpu_context_handle ctx;
	uint32_t expired = 0;
	int ret;

	ret = amdgpu_cs_ctx_create(dev, &ctx);
	if (ret)
		return ret;
	ret = amdgpu_cs_submit(ctx, 0, &req, 1);
	if (!ret) {
		fence.context = ctx;
		fence.ip_type = AMDGPU_HW_IP_DMA;
		fence.fence = req.seq_no;
		ret = amdgpu_cs_query_fence_status(&fence,
						   AMDGPU_TIMEOUT_INFINITE, 0,
						   &expired);
		if (!ret && !expired)
			ret = -ETIME;
	}
	amdgpu_cs_ctx_free(ctx);
	return ret;
}

/* @ndw dwords of SDMA NOPs, each skipping as many dwords as it may. */
static void mc_fill_nops(uint32_t *dw, uint32_t ndw)
{
	uint32_t pos, n;

	for (pos = 0; pos < ndw; pos += 1 + n) {
		n = ndw - pos - 1;
		if (n > KFDSIM_SDMA_NOP_COUNT_MASK)
			n = KFDSIM_SDMA_NOP_COUNT_MASK;
		dw[pos] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_NOP, 0) |
			  n << KFDSIM_SDMA_NOP_COUNT_SHIFT;
	}
}

/* Wait up to 2 s for a kfdsim line containing @needle after @fd's position. */
static bool mc_kmsg_find(int fd, const char *needle)
{
	char rec[1024];
	int tries = 100;
	ssize_t r;

	while (tries) {
		r = read(fd, rec, sizeof(rec) - 1);
		if (r < 0 && errno == EPIPE)
			continue;
		if (r < 0 && errno != EAGAIN)
			return false;
		if (r < 0) {
			usleep(20000);
			tries--;
			continue;
		}
		rec[r] = '\0';
		if (strstr(rec, "kfdsim") && strstr(rec, needle))
			return true;
	}
	return false;
}

static int mc_set_max(const char *cg, unsigned long long *cur,
		      unsigned long long headroom)
{
	char val[32];
	int ret;

	ret = mc_read_ull(cg, "memory.current", cur);
	if (ret)
		return ret;
	snprintf(val, sizeof(val), "%llu", *cur + headroom);
	return mc_write(cg, "memory.max", val);
}

/*
 * The render node copies a CS's IB into the kernel and keeps the copy
 * while the IB runs: 4 MiB for the largest. The copy is charged to the
 * submitter's cgroup, so with 1 MiB left below memory.max the CS fails with
 * -ENOMEM (and says so in the kernel log) instead of taking the 4 MiB
 * outside the limit; with the limit lifted the same CS runs.
 */
static int mc_cs_ib_copy(void *arg, char *msg, size_t len)
{
	const char *cg = arg;
	unsigned long long cur, max0, max1;
	amdgpu_device_handle dev;
	struct kt_gpu gpus[KT_MAX_GPUS];
	uint32_t major, minor;
	struct abo ib;
	int fd, kmsg, ret;

	KT_CHECK(!mc_write(cg, "cgroup.procs", "0"), "join %s: %s", cg,
		 strerror(errno));
	KT_CHECK(kt_gpus(gpus, KT_MAX_GPUS) > 0, "no GPU");
	fd = kt_open_render(gpus[0].render_minor);
	KT_CHECK(fd >= 0, "open render node: %d", fd);
	ret = amdgpu_device_initialize(fd, &major, &minor, &dev);
	KT_CHECK(!ret, "amdgpu_device_initialize: %d", ret);
	ret = abo_alloc(dev, MC_IB_BYTES, AMDGPU_GEM_DOMAIN_GTT, &ib);
	KT_CHECK(!ret, "IB BO: %d", ret);
	mc_fill_nops(ib.cpu, MC_IB_DWORDS);
	/* Once without a limit, so libdrm has all it needs mapped. */
	ret = mc_submit(dev, &ib, MC_IB_DWORDS);
	KT_CHECK(!ret, "CS without a limit: %d", ret);

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	KT_CHECK(kmsg >= 0, "open /dev/kmsg: %s", strerror(errno));
	lseek(kmsg, 0, SEEK_END);
	KT_CHECK(!mc_read_key(cg, "memory.events", "max", &max0),
		 "memory.events");
	ret = mc_set_max(cg, &cur, MC_HEADROOM);
	KT_CHECK(!ret, "set memory.max: %d", ret);
	ret = mc_submit(dev, &ib, MC_IB_DWORDS);
	KT_CHECK(!mc_write(cg, "memory.max", "max"), "lift memory.max");
	KT_CHECK(ret == -ENOMEM,
		 "4 MiB IB with %llu KiB used and 1 MiB left: %d, not -ENOMEM",
		 cur >> 10, ret);
	KT_CHECK(mc_kmsg_find(kmsg, "CS: no memory for a copy"),
		 "no log line for the refused copy");
	close(kmsg);
	KT_CHECK(!mc_read_key(cg, "memory.events", "max", &max1),
		 "memory.events");
	KT_CHECK(max1 > max0, "memory.events max stayed at %llu", max0);

	ret = mc_submit(dev, &ib, MC_IB_DWORDS);
	KT_CHECK(!ret, "CS after lifting the limit: %d", ret);
	abo_free(&ib);
	amdgpu_device_deinitialize(dev);
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(memcg, cs_ib_copy_is_charged, 300)
{
	ASSERT_EQ(0, kt_run_child(mc_cs_ib_copy, self->cg, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
}

/* A VRAM BO large enough that kfdsim allocates it on several CPUs. */
#define MC_VRAM_BYTES	(64 * KT_MIB)
/* What else a process's cgroup may gain or keep around an allocation. */
#define MC_SLACK	(4 * KT_MIB)

/*
 * kfdsim allocates and zeroes a large VRAM BO on every online CPU at once
 * (Documentation/memory.rst): work items allocate all but the caller's
 * share. Every page is still charged to the caller's cgroup: a 64 MiB BO
 * raises memory.current by 64 MiB (less MC_SLACK: memory.current counts
 * the charge each CPU holds in stock, which another cgroup's charge on
 * that CPU gives back meanwhile; a work item's share charged elsewhere
 * would be tens of MiB), and freeing it gives them
 * back; with 16 MiB left below memory.max the same allocation fails with
 * -ENOMEM, hits the limit (memory.events max), says so in the kernel log
 * and leaves no charge behind (every part's pages freed, whichever part
 * failed). With one CPU the caller allocates it all and the same holds.
 */
static int mc_vram_fill(void *arg, char *msg, size_t len)
{
	const char *cg = arg;
	unsigned long long cur0, cur1, cur2, max0, max1;
	uint64_t h;
	struct kt_env e;
	int kmsg, ret;

	KT_CHECK(!mc_write(cg, "cgroup.procs", "0"), "join %s: %s", cg,
		 strerror(errno));
	ret = kt_env_open(&e, true);
	KT_CHECK(!ret, "open /dev/kfd and the render nodes: %d", ret);

	KT_CHECK(!mc_read_ull(cg, "memory.current", &cur0), "memory.current");
	ret = kt_alloc(e.kfd, e.gpu[0].gpu_id, KT_VA(0), MC_VRAM_BYTES,
		       KT_VRAM | KT_WRITABLE, &h, NULL);
	KT_CHECK(!ret, "64 MiB VRAM BO without a limit: %d", ret);
	KT_CHECK(!mc_read_ull(cg, "memory.current", &cur1), "memory.current");
	KT_CHECK(cur1 + MC_SLACK >= cur0 + MC_VRAM_BYTES,
		 "64 MiB VRAM BO charged only %llu KiB", (cur1 - cur0) >> 10);
	ret = kt_free(e.kfd, h);
	KT_CHECK(!ret, "free: %d", ret);
	KT_CHECK(!mc_read_ull(cg, "memory.current", &cur2), "memory.current");
	KT_CHECK(cur2 + MC_VRAM_BYTES <= cur1 + MC_SLACK,
		 "freeing the BO gave back only %llu KiB", (cur1 - cur2) >> 10);

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	KT_CHECK(kmsg >= 0, "open /dev/kmsg: %s", strerror(errno));
	lseek(kmsg, 0, SEEK_END);
	KT_CHECK(!mc_read_key(cg, "memory.events", "max", &max0),
		 "memory.events");
	ret = mc_set_max(cg, &cur0, 16 * KT_MIB);
	KT_CHECK(!ret, "set memory.max: %d", ret);
	ret = kt_alloc(e.kfd, e.gpu[0].gpu_id, KT_VA(0), MC_VRAM_BYTES,
		       KT_VRAM | KT_WRITABLE, &h, NULL);
	KT_CHECK(!mc_read_ull(cg, "memory.current", &cur1), "memory.current");
	KT_CHECK(!mc_write(cg, "memory.max", "max"), "lift memory.max");
	KT_CHECK(ret == -ENOMEM,
		 "64 MiB VRAM BO with 16 MiB left: %d, not -ENOMEM", ret);
	KT_CHECK(cur1 <= cur0 + MC_SLACK,
		 "the failed BO left %llu KiB charged", (cur1 - cur0) >> 10);
	KT_CHECK(!mc_read_key(cg, "memory.events", "max", &max1),
		 "memory.events");
	KT_CHECK(max1 > max0, "memory.events max stayed at %llu", max0);
	KT_CHECK(mc_kmsg_find(kmsg, "VRAM object of 16384 pages: out of pages"),
		 "no log line for the refused BO");
	close(kmsg);

	ret = kt_alloc(e.kfd, e.gpu[0].gpu_id, KT_VA(0), MC_VRAM_BYTES,
		       KT_VRAM | KT_WRITABLE, &h, NULL);
	KT_CHECK(!ret, "64 MiB VRAM BO after lifting the limit: %d", ret);
	kt_env_close(&e);
	return 0;
}

TEST_F_TIMEOUT(memcg, vram_fill_is_charged, 300)
{
	ASSERT_EQ(0, kt_run_child(mc_vram_fill, self->cg, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
}

/*
 * The CPU time the command processor spends on a process's queues is
 * charged to that process's cgroup when the module parameter cp_cgroup is
 * set (Documentation/command-processor.rst, "CPU time"): each process's
 * queues on a GPU are run by a worker kthread, then attached to the
 * process's cgroups. The fixture sets cp_cgroup, mounts cgroup2, enables
 * the cpu controller and makes two cgroups, "lim" with cpu.max "5000
 * 100000" (5 % of one CPU) and "unl" without a limit. A child in each runs
 * an endless loop dispatch for CC_WINDOW_MS: the cgroup's cpu.stat
 * usage_usec must grow by at least half of what its worker ran, the
 * worker must be in the child's cgroups, and the limited loop must advance
 * at most a fifth as fast as the unlimited one. Meanwhile a victim in the
 * root cgroup (the test itself) keeps its dispatch latency.
 */
#define CC_N		(64 * 1024)	/* loop buffer elements */
#define CC_WG		256
#define CC_WINDOW_MS	2000
#define CC_SAMPLES	11

#define CC_PARAMS	"/sys/module/kfdsim/parameters"

FIXTURE(cpucg) {
	char param[4];		/* cp_cgroup before the test: "Y\n" or "N\n" */
	char msg[256];		/* a child's failure */
	char root[64];
	char base[128];
	char lim[160];
	char unl[160];
	bool mounted;
	bool cpu_max;		/* CONFIG_CFS_BANDWIDTH: cpu.max exists */
	struct kg_rt rt;
	bool opened;
};

/* rmdir, waiting a little for a just stopped worker to be reaped. */
static int cc_rmdir(const char *dir)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (!rmdir(dir) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			break;
		usleep(10000);
	}
	return -errno;
}

FIXTURE_SETUP(cpucg)
{
	struct stat st;
	char path[256];
	int ret;

	ret = kt_read_file(CC_PARAMS "/cp_cgroup", self->param,
			   sizeof(self->param));
	ASSERT_EQ(2, ret) TH_LOG("read cp_cgroup: %d", ret);
	ASSERT_EQ(0, mc_write(CC_PARAMS, "cp_cgroup", "Y"))
		TH_LOG("set cp_cgroup");
	ret = cg2_mount(self->root, sizeof(self->root));
	if (ret == -ENODEV)
		SKIP(return, "no cgroup2 in this kernel");
	ASSERT_EQ(0, ret) TH_LOG("mount cgroup2: %s", strerror(-ret));
	self->mounted = true;
	ret = mc_write(self->root, "cgroup.subtree_control", "+cpu");
	ASSERT_EQ(0, ret) TH_LOG("enable the cpu controller: %s",
				 strerror(-ret));
	snprintf(self->base, sizeof(self->base), "%s/kfdsim-cpu-%d",
		 self->root, getpid());
	ASSERT_EQ(0, mkdir(self->base, 0755));
	ret = mc_write(self->base, "cgroup.subtree_control", "+cpu");
	ASSERT_EQ(0, ret) TH_LOG("enable cpu below %s: %s", self->base,
				 strerror(-ret));
	snprintf(self->lim, sizeof(self->lim), "%s/lim", self->base);
	snprintf(self->unl, sizeof(self->unl), "%s/unl", self->base);
	ASSERT_EQ(0, mkdir(self->lim, 0755));
	ASSERT_EQ(0, mkdir(self->unl, 0755));
	snprintf(path, sizeof(path), "%s/cpu.max", self->lim);
	self->cpu_max = !stat(path, &st);
	if (self->cpu_max) {
		ret = mc_write(self->lim, "cpu.max", "5000 100000");
		ASSERT_EQ(0, ret) TH_LOG("set cpu.max: %s", strerror(-ret));
	}
	ASSERT_EQ(0, kg_open(&self->rt));
	self->opened = true;
}

FIXTURE_TEARDOWN(cpucg)
{
	/* Back to what it was: "N" unless the user chose otherwise. */
	if (self->param[0] == 'Y' || self->param[0] == 'N')
		mc_write(CC_PARAMS, "cp_cgroup", self->param[0] == 'Y' ? "Y" : "N");
	if (self->opened)
		kg_close(&self->rt);
	if (!self->mounted)
		return;
	if (cc_rmdir(self->lim) || cc_rmdir(self->unl) ||
	    cc_rmdir(self->base))
		TH_LOG("rmdir under %s: %s", self->base, strerror(errno));
	mc_write(self->root, "cgroup.subtree_control", "-cpu");
	if (umount2(self->root, MNT_DETACH))
		TH_LOG("umount %s: %s", self->root, strerror(errno));
	rmdir(self->root);
}

/* What a child saw over its window; in shared memory. */
struct cc_report {
	unsigned long long usage_us;	/* growth of cpu.stat usage_usec */
	unsigned long long throttled;	/* growth of cpu.stat nr_throttled */
	unsigned long long worker_us;	/* CPU time of the worker */
	unsigned long long progress;	/* workgroups the loop ran */
	int ok;
	char msg[240];
};

struct cc_sample {
	unsigned long long usage_us, throttled, worker_ns, progress;
};

static int cc_sample(const char *cg, pid_t worker, uint32_t qid,
		     struct cc_sample *s)
{
	struct kg_qinfo qi;
	int ret;

	ret = mc_read_key(cg, "cpu.stat", "usage_usec", &s->usage_us);
	if (ret)
		return ret;
	/* Only with the cpu controller's bandwidth control. */
	if (mc_read_key(cg, "cpu.stat", "nr_throttled", &s->throttled))
		s->throttled = 0;
	ret = kg_task_cpu_ns(worker, &s->worker_ns);
	if (ret)
		return ret;
	ret = kg_qinfo(getpid(), qid, &qi);
	if (ret)
		return ret;
	s->progress = (unsigned long long)qi.iteration * (CC_N / CC_WG) +
		      qi.next_wg;
	return 0;
}

#define CC_FAIL(r, ...) do {						\
	snprintf((r)->msg, sizeof((r)->msg), __VA_ARGS__);		\
	_exit(1);							\
} while (0)

/*
 * The child: join @cg, start an endless loop dispatch on GPU 0, find its
 * worker, say "go" on @ready and sample the cgroup, the worker and the
 * loop's progress around CC_WINDOW_MS.
 */
static void cc_child(const char *cg, struct cc_report *r, int ready)
{
	struct kfdsim_args_loop args = { .steps = UINT32_MAX };
	char mine[512], its[512], path[64];
	struct cc_sample s0, s1;
	pid_t workers[KT_MAX_GPUS];
	struct kg_queue q;
	struct kg_bo buf;
	struct kg_rt rt;
	int n;

	if (mc_write(cg, "cgroup.procs", "0"))
		CC_FAIL(r, "join %s: %s", cg, strerror(errno));
	if (kg_open(&rt) ||
	    kg_bo_new(&rt, 0, 4 * CC_N, KT_GTT | KT_WRITABLE, KG_NO_CPU,
		      &buf) ||
	    kg_queue_new(&rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 1024, &q))
		CC_FAIL(r, "GPU setup");
	args.buf = buf.va;
	if (kg_dispatch(&q, KFDSIM_KERNEL_LOOP, &args, sizeof(args), CC_N,
			CC_WG, 0))
		CC_FAIL(r, "dispatch");
	n = kg_cp_threads(getpid(), workers, KT_MAX_GPUS);
	if (n != 1)
		CC_FAIL(r, "%d CP workers for one GPU's queue, not 1", n);
	/* The worker is in this process's cgroups (every hierarchy). */
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)workers[0]);
	if (kt_read_file("/proc/self/cgroup", mine, sizeof(mine)) <= 0 ||
	    kt_read_file(path, its, sizeof(its)) <= 0)
		CC_FAIL(r, "read /proc/.../cgroup");
	if (strcmp(mine, its))
		CC_FAIL(r, "worker in cgroups \"%.100s\", its process in \"%.100s\"",
			its, mine);
	kg_sleep_ms(200);
	if (cc_sample(cg, workers[0], q.id, &s0))
		CC_FAIL(r, "first sample");
	if (write(ready, "g", 1) != 1)
		CC_FAIL(r, "ready pipe");
	kg_sleep_ms(CC_WINDOW_MS);
	if (cc_sample(cg, workers[0], q.id, &s1))
		CC_FAIL(r, "second sample");
	r->usage_us = s1.usage_us - s0.usage_us;
	r->throttled = s1.throttled - s0.throttled;
	r->worker_us = (s1.worker_ns - s0.worker_ns) / 1000;
	r->progress = s1.progress - s0.progress;
	r->ok = 1;
	/* Exit with the loop running: the exit stops the worker. */
	_exit(0);
}

static uint64_t cc_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * The median latency of a small dispatch on @q, in us, polling its signal
 * every 50 us; 0 on a failure or timeout.
 */
static uint64_t cc_latency_us(struct kg_queue *q, struct kg_signal *sig,
			      struct kg_bo *buf)
{
	struct kfdsim_args_fill args = { .dst = buf->va };
	struct timespec nap = { .tv_nsec = 50000 };
	uint64_t t[CC_SAMPLES], t0, end, tmp;
	int i, j;

	for (i = -1; i < CC_SAMPLES; i++) {
		args.value = 0x2000 + i;
		kg_signal_store(sig, 1);
		t0 = cc_now_us();
		end = t0 + 1000ULL * KG_TIMEOUT_MS;
		if (kg_dispatch(q, KFDSIM_KERNEL_FILL_U32, &args, sizeof(args),
				256, 256, sig->va))
			return 0;
		while (kg_signal_load(sig)) {
			if (cc_now_us() > end)
				return 0;
			nanosleep(&nap, NULL);
		}
		if (((uint32_t *)buf->cpu)[255] != args.value)
			return 0;
		if (i >= 0)
			t[i] = cc_now_us() - t0;
	}
	for (i = 1; i < CC_SAMPLES; i++)
		for (j = i; j > 0 && t[j - 1] > t[j]; j--) {
			tmp = t[j];
			t[j] = t[j - 1];
			t[j - 1] = tmp;
		}
	return t[CC_SAMPLES / 2];
}

/*
 * Run cc_child() in @cg; while its window runs, measure the victim's
 * latency into *@lat (if @victim). Returns 0 with @r filled, else -1
 * with @r->msg saying why.
 */
static int cc_run(const char *cg, struct cc_report *r, struct kg_queue *victim,
		  struct kg_signal *sig, struct kg_bo *buf, uint64_t *lat)
{
	pid_t pid, workers[KT_MAX_GPUS];
	int p[2], status, i;
	char c;

	memset(r, 0, sizeof(*r));
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[0]);
		cc_child(cg, r, p[1]);
	}
	close(p[1]);
	if (read(p[0], &c, 1) == 1 && victim)
		*lat = cc_latency_us(victim, sig, buf);
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || !r->ok) {
		if (!r->msg[0])
			snprintf(r->msg, sizeof(r->msg), "child status 0x%x",
				 status);
		return -1;
	}
	/* No worker survives its process. */
	for (i = 0; i < 100 && kg_cp_threads(pid, workers, KT_MAX_GPUS); i++)
		kg_sleep_ms(10);
	if (kg_cp_threads(pid, workers, KT_MAX_GPUS)) {
		snprintf(r->msg, sizeof(r->msg),
			 "a CP worker of pid %d outlived it", (int)pid);
		return -1;
	}
	return 0;
}

TEST_F_TIMEOUT(cpucg, cp_time_is_charged_and_throttled, 300)
{
	uint64_t lat0 = 0, latl = 0, bound, floor;
	struct cc_report *lim, *unl;
	struct kg_signal sig;
	struct kg_queue q;
	struct kg_bo buf;

	lim = mmap(NULL, 2 * sizeof(*lim), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, lim);
	unl = lim + 1;
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &buf));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	lat0 = cc_latency_us(&q, &sig, &buf);
	ASSERT_NE(0, lat0);

	ASSERT_EQ(0, cc_run(self->unl, unl, NULL, NULL, NULL, NULL))
		TH_LOG("unlimited child: %s", unl->msg);
	ASSERT_EQ(0, cc_run(self->lim, lim, &q, &sig, &buf, &latl))
		TH_LOG("limited child: %s", lim->msg);
	ASSERT_NE(0, latl);

	TH_LOG("over %d ms: unlimited cgroup usage_usec +%llu, its worker ran %llu us, loop +%llu workgroups",
	       CC_WINDOW_MS, unl->usage_us, unl->worker_us, unl->progress);
	TH_LOG("cpu.max 5000 100000%s: usage_usec +%llu, worker ran %llu us, throttled %llu times, loop +%llu workgroups",
	       self->cpu_max ? "" : " (no cpu.max in this kernel)",
	       lim->usage_us, lim->worker_us, lim->throttled, lim->progress);
	TH_LOG("victim in the root cgroup: %lu us alone, %lu us while the limited loop runs (median of %d)",
	       (unsigned long)lat0, (unsigned long)latl, CC_SAMPLES);

	/* The worker's time shows up in its process's cgroup. */
	EXPECT_GT(unl->worker_us, 0);
	EXPECT_GE(2 * unl->usage_us, unl->worker_us);
	EXPECT_GT(lim->worker_us, 0);
	EXPECT_GE(2 * lim->usage_us, lim->worker_us);
	EXPECT_GT(unl->progress, 0);
	if (self->cpu_max) {
		/* 5 % of a CPU against what the unlimited loop got. */
		EXPECT_GT(lim->throttled, 0);
		EXPECT_LE(5 * lim->progress, unl->progress);
	} else {
		TH_LOG("no cpu.max (CONFIG_CFS_BANDWIDTH): throttling not checked");
	}
	/* The victim's worker is its own: the limited one does not slow it. */
	floor = 4000;
	bound = (3 + kt_timeout_scale() / 3) * (lat0 > floor ? lat0 : floor);
	EXPECT_LT(latl, bound) TH_LOG("bound %lu us", (unsigned long)bound);

	ASSERT_EQ(0, kg_queue_free(&q));
	ASSERT_EQ(0, kg_bo_free(&self->rt, &buf));
	munmap(lim, 2 * sizeof(*lim));
}

/*
 * Without cp_cgroup (the default) the worker stays where kthreads are, so
 * that criu can dump a container with queues: runc freezes the
 * container's cgroup and criu gives up on a task there it cannot seize.
 * A child in "unl" makes a queue; its worker must not be in its cgroup.
 */
static int cc_worker_left_out(void *arg, char *msg, size_t len)
{
	const char *cg = arg;
	char mine[512], its[512], path[64];
	pid_t workers[KT_MAX_GPUS];
	struct kg_queue q;
	struct kg_rt rt;
	int n;

	KT_CHECK(!mc_write(cg, "cgroup.procs", "0"), "join %s: %s", cg,
		 strerror(errno));
	KT_CHECK(!kg_open(&rt), "open /dev/kfd");
	KT_CHECK(!kg_queue_new(&rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 1024,
			       &q), "queue");
	n = kg_cp_threads(getpid(), workers, KT_MAX_GPUS);
	KT_CHECK(n == 1, "%d CP workers for one GPU's queue, not 1", n);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)workers[0]);
	KT_CHECK(kt_read_file("/proc/self/cgroup", mine, sizeof(mine)) > 0 &&
		 kt_read_file(path, its, sizeof(its)) > 0,
		 "read /proc/.../cgroup");
	KT_CHECK(strcmp(mine, its), "worker in the process's cgroups \"%.100s\"",
		 mine);
	KT_CHECK(!kg_queue_free(&q), "free the queue");
	kg_close(&rt);
	return 0;
}

TEST_F_TIMEOUT(cpucg, cp_worker_outside_cgroups_by_default, 120)
{
	ASSERT_EQ(0, mc_write(CC_PARAMS, "cp_cgroup", "N"));
	ASSERT_EQ(0, kt_run_child(cc_worker_left_out, self->unl, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
}

TEST_HARNESS_MAIN
