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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <libdrm/amdgpu.h>
#include <libdrm/amdgpu_drm.h>

#include "kt_harness.h"
#include "kfdsim_test.h"
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

FIXTURE_SETUP(memcg)
{
	int ret;

	snprintf(self->root, sizeof(self->root), "/tmp/kfdsim-cg.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->root));
	if (mount("cgroup2", self->root, "cgroup2", 0, NULL)) {
		ret = errno;
		rmdir(self->root);
		if (ret == ENODEV)
			SKIP(return, "no cgroup2 in this kernel");
		ASSERT_EQ(0, ret) TH_LOG("mount cgroup2: %s", strerror(ret));
	}
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

TEST_HARNESS_MAIN
