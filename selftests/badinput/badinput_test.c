// SPDX-License-Identifier: GPL-2.0
/*
 * Every way to call the part-1 ioctls (and mmap) wrongly, one test each.
 * Each test checks the errno and that the failed call changed nothing: the
 * debugfs counters and AVAILABLE_MEMORY are as before, and where a VA
 * range was involved, a correct call on the same range still succeeds.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kt_harness.h"
#include "kfdsim_test.h"

#define ALL_KNOWN_FLAGS (KT_VRAM | KT_GTT | KT_USERPTR | KT_DOORBELL | \
	KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP | \
	(uint32_t)KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | \
	KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC | \
	KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE | \
	KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM | \
	KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED)

/* The VA of the BO that `bad` tests start with, and a free VA. */
#define BO_VA		KT_VA(1)
#define BO_SIZE		(2 * KT_MIB)
#define FREE_VA		KT_VA(4)

struct state {
	struct kt_props counters;
	uint64_t avail[KT_MAX_GPUS];
};

static int snapshot(const struct kt_env *e, struct state *s)
{
	char err[256];
	int i, ret;

	ret = kt_counters(&s->counters, err, sizeof(err));
	for (i = 0; !ret && i < e->ngpus; i++)
		ret = kt_available(e->kfd, e->gpu[i].gpu_id, &s->avail[i]);
	return ret;
}

/* Nothing the tests can observe differs from @before. */
static void check_unchanged(struct __test_metadata *_metadata,
			    const struct kt_env *e, const struct state *before)
{
	struct state now;
	char diff[512];
	int i;

	ASSERT_EQ(0, snapshot(e, &now));
	EXPECT_EQ(0, kt_counters_diff(&before->counters, &now.counters, diff,
				      sizeof(diff)))
		TH_LOG("counters changed: %s", diff);
	for (i = 0; i < e->ngpus; i++)
		EXPECT_EQ(before->avail[i], now.avail[i]);
}

static int count_fds(void)
{
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

/*
 * `bad`: every render node bound, and one 2 MiB GTT BO at BO_VA on the
 * first GPU, not mapped. `before` is taken after that.
 */
FIXTURE(bad) {
	struct kt_env e;
	uint32_t ids[KT_MAX_GPUS];
	uint64_t bo;
	struct state before;
};

FIXTURE_SETUP(bad)
{
	ASSERT_EQ(0, kt_env_open(&self->e, true));
	kt_env_ids(&self->e, self->ids);
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], BO_VA, BO_SIZE,
			      KT_GTT | KT_WRITABLE, &self->bo, NULL));
	ASSERT_EQ(0, snapshot(&self->e, &self->before));
}

FIXTURE_TEARDOWN(bad)
{
	kt_env_close(&self->e);
}

/* ALLOC with these arguments fails with @err and changes nothing. */
static void alloc_fails(struct __test_metadata *_metadata,
			FIXTURE_DATA(bad) *self, uint32_t gpu_id, uint64_t va,
			uint64_t size, uint32_t flags, uint64_t user, int err)
{
	uint64_t h = 0xdeadbeef, off = user;

	EXPECT_EQ(-err, kt_alloc(self->e.kfd, gpu_id, va, size, flags, &h,
				 &off))
		TH_LOG("va 0x%llx size 0x%llx flags 0x%x",
		       (unsigned long long)va, (unsigned long long)size, flags);
	check_unchanged(_metadata, &self->e, &self->before);
}

/* ...and a correct allocation of that range still succeeds afterwards. */
static void va_still_free(struct __test_metadata *_metadata,
			  FIXTURE_DATA(bad) *self, uint64_t va, uint64_t size)
{
	uint64_t h;

	EXPECT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], va, size, KT_GTT, &h,
			      NULL));
}

/* ---- ACQUIRE_VM (on an unbound process) ---- */

FIXTURE(unbound) {
	struct kt_env e;
	struct state before;
};

FIXTURE_SETUP(unbound)
{
	ASSERT_EQ(0, kt_env_open(&self->e, false));
	ASSERT_EQ(0, snapshot(&self->e, &self->before));
}

FIXTURE_TEARDOWN(unbound)
{
	kt_env_close(&self->e);
}

/* After a refused ACQUIRE_VM, binding the right fd works (not EBUSY). */
static void acquire_still_possible(struct __test_metadata *_metadata,
				   FIXTURE_DATA(unbound) *self)
{
	check_unchanged(_metadata, &self->e, &self->before);
	EXPECT_EQ(0, kt_acquire_vm(self->e.kfd, self->e.render[0],
				   self->e.gpu[0].gpu_id));
}

TEST_F(unbound, acquire_unknown_gpu_id)
{
	EXPECT_EQ(-EINVAL, kt_acquire_vm(self->e.kfd, self->e.render[0],
					 kt_unused_gpu_id(&self->e)));
	EXPECT_EQ(-EINVAL, kt_acquire_vm(self->e.kfd, self->e.render[0], 0));
	acquire_still_possible(_metadata, self);
}

TEST_F(unbound, acquire_fd_not_drm)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EINVAL, kt_acquire_vm(self->e.kfd, fd,
					 self->e.gpu[0].gpu_id));
	EXPECT_EQ(-EINVAL, kt_acquire_vm(self->e.kfd, self->e.kfd,
					 self->e.gpu[0].gpu_id));
	close(fd);
	acquire_still_possible(_metadata, self);
}

TEST_F(unbound, acquire_closed_fd)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	ASSERT_GE(fd, 0);
	close(fd);
	EXPECT_EQ(-EINVAL, kt_acquire_vm(self->e.kfd, fd,
					 self->e.gpu[0].gpu_id));
	EXPECT_EQ(-EINVAL, kt_acquire_vm(self->e.kfd, -1,
					 self->e.gpu[0].gpu_id));
	acquire_still_possible(_metadata, self);
}

TEST_F(unbound, acquire_other_gpus_render_fd)
{
	if (self->e.ngpus < 2)
		SKIP(return, "needs two GPUs");
	EXPECT_EQ(-EINVAL, kt_acquire_vm(self->e.kfd, self->e.render[1],
					 self->e.gpu[0].gpu_id));
	acquire_still_possible(_metadata, self);
}

/* Memory ioctls on a GPU without ACQUIRE_VM: ENODEV. */
TEST_F(unbound, alloc_before_acquire)
{
	uint64_t h;
	int i;

	for (i = 0; i < self->e.ngpus; i++)
		EXPECT_EQ(-ENODEV, kt_alloc(self->e.kfd, self->e.gpu[i].gpu_id,
					    KT_VA(0), KT_MIB, KT_GTT, &h,
					    NULL));
	check_unchanged(_metadata, &self->e, &self->before);
}

/* A device list naming a GPU without a VM maps nothing, not even the rest. */
TEST_F(unbound, map_to_gpu_without_vm)
{
	uint32_t ids[2];
	uint64_t h;

	if (self->e.ngpus < 2)
		SKIP(return, "needs two GPUs");
	ASSERT_EQ(0, kt_acquire_vm(self->e.kfd, self->e.render[0],
				   self->e.gpu[0].gpu_id));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->e.gpu[0].gpu_id, KT_VA(0),
			      KT_MIB, KT_GTT, &h, NULL));
	ASSERT_EQ(0, snapshot(&self->e, &self->before));
	ids[0] = self->e.gpu[0].gpu_id;
	ids[1] = self->e.gpu[1].gpu_id;
	EXPECT_EQ(-ENODEV, kt_map(self->e.kfd, h, ids, 2));
	check_unchanged(_metadata, &self->e, &self->before);
	EXPECT_EQ(0, kt_map(self->e.kfd, h, ids, 1));
}

TEST_F(bad, acquire_different_fd_after_bound)
{
	int fd = kt_open_render(self->e.gpu[0].render_minor);

	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EBUSY, kt_acquire_vm(self->e.kfd, fd, self->ids[0]));
	close(fd);
	check_unchanged(_metadata, &self->e, &self->before);
	EXPECT_EQ(0, kt_acquire_vm(self->e.kfd, self->e.render[0],
				   self->ids[0]));
}

/* ---- ALLOC_MEMORY_OF_GPU ---- */

TEST_F(bad, alloc_unknown_gpu_id)
{
	alloc_fails(_metadata, self, kt_unused_gpu_id(&self->e), FREE_VA,
		    KT_MIB, KT_GTT, 0, EINVAL);
	alloc_fails(_metadata, self, 0, FREE_VA, KT_MIB, KT_GTT, 0, EINVAL);
	va_still_free(_metadata, self, FREE_VA, KT_MIB);
}

/* As amdkfd: the MMIO remap BO is exactly one page. */
TEST_F(bad, alloc_mmio_remap_wrong_size)
{
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, 2 * KT_PAGE,
		    KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP | KT_WRITABLE, 0,
		    EINVAL);
	va_still_free(_metadata, self, FREE_VA, 2 * KT_PAGE);
}

/* Each flag bit upstream does not define is refused, with any domain. */
TEST_F(bad, alloc_unknown_flag_bits)
{
	int bit;

	for (bit = 0; bit < 32; bit++) {
		uint32_t f = 1U << bit;

		if (f & ALL_KNOWN_FLAGS)
			continue;
		alloc_fails(_metadata, self, self->ids[0], FREE_VA, KT_MIB,
			    KT_GTT | f, 0, EINVAL);
		alloc_fails(_metadata, self, self->ids[0], FREE_VA, KT_MIB,
			    KT_VRAM | f, 0, EINVAL);
	}
	va_still_free(_metadata, self, FREE_VA, KT_MIB);
}

TEST_F(bad, alloc_no_domain)
{
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, KT_MIB, 0, 0,
		    EINVAL);
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, KT_MIB,
		    KT_WRITABLE | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE, 0, EINVAL);
	va_still_free(_metadata, self, FREE_VA, KT_MIB);
}

TEST_F(bad, alloc_two_domains)
{
	static const uint32_t doms[] = {
		KT_VRAM, KT_GTT, KT_USERPTR, KT_DOORBELL,
		KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP,
	};
	unsigned int a, b;

	for (a = 0; a < ARRAY_SIZE(doms); a++)
		for (b = a + 1; b < ARRAY_SIZE(doms); b++)
			alloc_fails(_metadata, self, self->ids[0], FREE_VA,
				    KT_DOORBELL_SIZE, doms[a] | doms[b], 0,
				    EINVAL);
	va_still_free(_metadata, self, FREE_VA, KT_MIB);
}

TEST_F(bad, alloc_size_zero)
{
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, 0, KT_GTT, 0,
		    EINVAL);
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, 0, KT_VRAM, 0,
		    EINVAL);
	va_still_free(_metadata, self, FREE_VA, KT_MIB);
}

TEST_F(bad, alloc_size_unaligned)
{
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, KT_MIB + 1,
		    KT_VRAM, 0, EINVAL);
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, 100, KT_GTT, 0,
		    EINVAL);
	va_still_free(_metadata, self, FREE_VA, KT_MIB);
}

TEST_F(bad, alloc_va_unaligned)
{
	alloc_fails(_metadata, self, self->ids[0], FREE_VA + 8, KT_MIB,
		    KT_VRAM, 0, EINVAL);
	alloc_fails(_metadata, self, self->ids[0], FREE_VA + KT_PAGE / 2,
		    KT_PAGE, KT_GTT, 0, EINVAL);
	va_still_free(_metadata, self, FREE_VA, KT_MIB);
}

/* Below the aperture: page 0. */
TEST_F(bad, alloc_va_below_aperture)
{
	alloc_fails(_metadata, self, self->ids[0], 0, KT_PAGE, KT_GTT, 0,
		    EINVAL);
	alloc_fails(_metadata, self, self->ids[0], 0, KT_MIB, KT_VRAM, 0,
		    EINVAL);
	va_still_free(_metadata, self, KT_GPUVM_BASE, KT_PAGE);
}

TEST_F(bad, alloc_va_above_aperture)
{
	alloc_fails(_metadata, self, self->ids[0], KT_GPUVM_LIMIT + 1,
		    KT_PAGE, KT_GTT, 0, EINVAL);
	alloc_fails(_metadata, self, self->ids[0], 1ULL << 56, KT_PAGE,
		    KT_GTT, 0, EINVAL);
	alloc_fails(_metadata, self, self->ids[0], ~0ULL & ~(KT_PAGE - 1),
		    KT_PAGE, KT_GTT, 0, EINVAL);
}

TEST_F(bad, alloc_range_crosses_aperture_end)
{
	alloc_fails(_metadata, self, self->ids[0], KT_GPUVM_LIMIT + 1 - KT_PAGE,
		    2 * KT_PAGE, KT_GTT, 0, EINVAL);
	alloc_fails(_metadata, self, self->ids[0], KT_GPUVM_LIMIT + 1 - KT_MIB,
		    2 * KT_MIB, KT_VRAM, 0, EINVAL);
	va_still_free(_metadata, self, KT_GPUVM_LIMIT + 1 - KT_PAGE, KT_PAGE);
}

/* va + size wrapping around 2^64 must not look like a small range. */
TEST_F(bad, alloc_size_wraps)
{
	alloc_fails(_metadata, self, self->ids[0], FREE_VA,
		    0ULL - FREE_VA + KT_PAGE, KT_GTT, 0, EINVAL);
	alloc_fails(_metadata, self, self->ids[0], FREE_VA,
		    ~0ULL & ~(KT_PAGE - 1), KT_GTT, 0, EINVAL);
	va_still_free(_metadata, self, FREE_VA, KT_MIB);
}

/* Every way of touching the existing BO's range: same, head, tail, over, in. */
TEST_F(bad, alloc_overlaps_bo_same_gpu)
{
	alloc_fails(_metadata, self, self->ids[0], BO_VA, BO_SIZE, KT_GTT, 0,
		    EINVAL);
	alloc_fails(_metadata, self, self->ids[0], BO_VA - KT_PAGE,
		    2 * KT_PAGE, KT_VRAM, 0, EINVAL);
	alloc_fails(_metadata, self, self->ids[0], BO_VA + BO_SIZE - KT_PAGE,
		    2 * KT_PAGE, KT_GTT, 0, EINVAL);
	alloc_fails(_metadata, self, self->ids[0], BO_VA - KT_MIB,
		    BO_SIZE + 2 * KT_MIB, KT_GTT, 0, EINVAL);
	alloc_fails(_metadata, self, self->ids[0], BO_VA + KT_PAGE, KT_PAGE,
		    KT_VRAM, 0, EINVAL);
	/* The pages just outside are free. */
	va_still_free(_metadata, self, BO_VA - KT_PAGE, KT_PAGE);
	va_still_free(_metadata, self, BO_VA + BO_SIZE, KT_PAGE);
}

/* The VA space is per process: a BO on one GPU blocks its range on all. */
TEST_F(bad, alloc_overlaps_bo_other_gpu)
{
	int i;

	if (self->e.ngpus < 2)
		SKIP(return, "needs two GPUs");
	for (i = 1; i < self->e.ngpus; i++) {
		alloc_fails(_metadata, self, self->ids[i], BO_VA, KT_PAGE,
			    KT_GTT, 0, EINVAL);
		alloc_fails(_metadata, self, self->ids[i],
			    BO_VA + BO_SIZE - KT_PAGE, KT_MIB, KT_VRAM, 0,
			    EINVAL);
	}
}

/* A single VRAM BO larger than all VRAM, and one larger than what is free. */
TEST_F(bad, alloc_vram_too_large)
{
	unsigned long long vram;
	uint64_t h;

	ASSERT_EQ(0, kt_param("vram_mb", &vram));
	vram <<= 20;
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, vram + KT_PAGE,
		    KT_VRAM, 0, ENOMEM);
	alloc_fails(_metadata, self, self->ids[0], KT_VA(8), 1ULL << 40,
		    KT_VRAM, 0, ENOMEM);

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], FREE_VA, vram / 2,
			      KT_VRAM, &h, NULL));
	ASSERT_EQ(0, snapshot(&self->e, &self->before));
	alloc_fails(_metadata, self, self->ids[0], KT_VA(8),
		    vram / 2 + KT_PAGE, KT_VRAM, 0, ENOMEM);
	EXPECT_EQ(0, kt_free(self->e.kfd, h));
}

TEST_F(bad, alloc_doorbell_wrong_size)
{
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, KT_PAGE,
		    KT_DOORBELL, 0, EINVAL);
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, 4 * KT_PAGE,
		    KT_DOORBELL, 0, EINVAL);
	va_still_free(_metadata, self, FREE_VA, KT_DOORBELL_SIZE);
}

/*
 * One doorbell BO per process and GPU, as the thunk allocates: a second one
 * fails and changes nothing; once the first is freed, it works again.
 */
TEST_F(bad, alloc_second_doorbell_bo)
{
	uint64_t h, h2, off;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(6),
			      KT_DOORBELL_SIZE, KT_DOORBELL | KT_WRITABLE, &h,
			      &off));
	ASSERT_EQ(0, snapshot(&self->e, &self->before));
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, KT_DOORBELL_SIZE,
		    KT_DOORBELL | KT_WRITABLE, 0, EINVAL);
	EXPECT_EQ(0, kt_free(self->e.kfd, h));
	EXPECT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], FREE_VA,
			      KT_DOORBELL_SIZE, KT_DOORBELL | KT_WRITABLE,
			      &h2, &off));
	EXPECT_EQ(0, kt_free(self->e.kfd, h2));
}

TEST_F(bad, alloc_userptr_unaligned)
{
	char *user = mmap(NULL, 2 * KT_MIB, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, user);
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, KT_MIB,
		    KT_USERPTR, (uintptr_t)user + 16, EINVAL);
	va_still_free(_metadata, self, FREE_VA, KT_MIB);
	munmap(user, 2 * KT_MIB);
}

/* Unmapped memory, wholly or from the second page on: EFAULT, no pin left. */
TEST_F(bad, alloc_userptr_unmapped)
{
	char *user = mmap(NULL, KT_MIB, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, user);
	ASSERT_EQ(0, munmap(user + KT_PAGE, KT_MIB - KT_PAGE));
	user[0] = 1;
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, KT_MIB,
		    KT_USERPTR, (uintptr_t)user, EFAULT);
	alloc_fails(_metadata, self, self->ids[0], FREE_VA, KT_PAGE,
		    KT_USERPTR, (uintptr_t)user + KT_PAGE, EFAULT);
	munmap(user, KT_PAGE);
	va_still_free(_metadata, self, FREE_VA, KT_MIB);
}

/*
 * A userptr beyond the system-memory limit (15/16 of the RAM, as amdgpu's
 * KFD limit) fails with ENOMEM before the kernel allocates anything for
 * it: 1 TiB (whose page array alone would be 2 GiB, beyond what kvmalloc
 * accepts), just under that, and one page more than the guest's RAM. The
 * address is mapped only for its first page, so a kernel that tried to pin
 * would say EFAULT instead.
 */
TEST_F(bad, alloc_userptr_beyond_system_memory)
{
	const uint64_t sizes[] = {
		1ULL << 40, (1ULL << 40) - 2 * KT_MIB,
		(uint64_t)sysconf(_SC_PHYS_PAGES) * KT_PAGE + KT_PAGE,
	};
	char *user = mmap(NULL, KT_PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	ASSERT_NE(MAP_FAILED, user);
	user[0] = 1;
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		alloc_fails(_metadata, self, self->ids[0], KT_VA(8), sizes[i],
			    KT_USERPTR | KT_WRITABLE, (uintptr_t)user, ENOMEM);
	va_still_free(_metadata, self, KT_VA(8), KT_MIB);
	munmap(user, KT_PAGE);
}

/* ---- FREE_MEMORY_OF_GPU ---- */

TEST_F(bad, free_unknown_handle)
{
	const uint64_t gpu = (uint64_t)self->ids[0] << 32;

	EXPECT_EQ(-EINVAL, kt_free(self->e.kfd, 0));
	EXPECT_EQ(-EINVAL, kt_free(self->e.kfd, gpu));
	EXPECT_EQ(-EINVAL, kt_free(self->e.kfd, gpu | 0xfffff));
	EXPECT_EQ(-EINVAL, kt_free(self->e.kfd,
				   (uint64_t)kt_unused_gpu_id(&self->e) << 32 |
				   (uint32_t)self->bo));
	EXPECT_EQ(-EINVAL, kt_free(self->e.kfd, (uint32_t)self->bo));
	check_unchanged(_metadata, &self->e, &self->before);
	EXPECT_EQ(0, kt_free(self->e.kfd, self->bo));
}

TEST_F(bad, free_twice)
{
	ASSERT_EQ(0, kt_free(self->e.kfd, self->bo));
	ASSERT_EQ(0, snapshot(&self->e, &self->before));
	EXPECT_EQ(-EINVAL, kt_free(self->e.kfd, self->bo));
	check_unchanged(_metadata, &self->e, &self->before);
}

/* ---- MAP_MEMORY_TO_GPU / UNMAP_MEMORY_FROM_GPU ---- */

static int map_raw(int kfd, unsigned long req, uint64_t h, uint64_t ptr,
		   uint32_t n, uint32_t n_success)
{
	struct kfd_ioctl_map_memory_to_gpu_args a = {
		.handle = h,
		.device_ids_array_ptr = ptr,
		.n_devices = n,
		.n_success = n_success,
	};

	/* MAP and UNMAP take the same layout. */
	return kt_ioctl(kfd, req, &a);
}

#define MAP	AMDKFD_IOC_MAP_MEMORY_TO_GPU
#define UNMAP	AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU

/* For UNMAP tests: the BO mapped on the first GPU, then a snapshot. */
static void map_first(struct __test_metadata *_metadata,
		      FIXTURE_DATA(bad) *self)
{
	ASSERT_EQ(0, kt_map(self->e.kfd, self->bo, self->ids, 1));
	ASSERT_EQ(0, snapshot(&self->e, &self->before));
}

static void n_devices_zero(struct __test_metadata *_metadata,
			   FIXTURE_DATA(bad) *self, unsigned long req)
{
	EXPECT_EQ(-EINVAL, map_raw(self->e.kfd, req, self->bo,
				   (uintptr_t)self->ids, 0, 0));
	check_unchanged(_metadata, &self->e, &self->before);
}

static void n_devices_too_many(struct __test_metadata *_metadata,
			       FIXTURE_DATA(bad) *self, unsigned long req)
{
	uint32_t *ids = calloc(1025, sizeof(*ids));
	int i;

	ASSERT_NE(NULL, ids);
	for (i = 0; i < 1025; i++)
		ids[i] = self->ids[0];
	EXPECT_EQ(-EINVAL, map_raw(self->e.kfd, req, self->bo,
				   (uintptr_t)ids, 1025, 0));
	check_unchanged(_metadata, &self->e, &self->before);
	free(ids);
}

static void n_success_too_big(struct __test_metadata *_metadata,
			      FIXTURE_DATA(bad) *self, unsigned long req)
{
	EXPECT_EQ(-EINVAL, map_raw(self->e.kfd, req, self->bo,
				   (uintptr_t)self->ids, 1, 2));
	check_unchanged(_metadata, &self->e, &self->before);
}

static void bad_pointer(struct __test_metadata *_metadata,
			FIXTURE_DATA(bad) *self, unsigned long req)
{
	void *hole = mmap(NULL, KT_PAGE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, hole);
	EXPECT_EQ(-EFAULT, map_raw(self->e.kfd, req, self->bo, 8, 1, 0));
	EXPECT_EQ(-EFAULT, map_raw(self->e.kfd, req, self->bo,
				   (uintptr_t)hole, 1, 0));
	munmap(hole, KT_PAGE);
	check_unchanged(_metadata, &self->e, &self->before);
}

/* A list with one unknown gpu_id does nothing, even for the valid ones. */
static void unknown_gpu(struct __test_metadata *_metadata,
			FIXTURE_DATA(bad) *self, unsigned long req)
{
	uint32_t ids[2] = { self->ids[0], kt_unused_gpu_id(&self->e) };

	EXPECT_EQ(-EINVAL, map_raw(self->e.kfd, req, self->bo,
				   (uintptr_t)ids, 2, 0));
	ids[1] = 0;
	EXPECT_EQ(-EINVAL, map_raw(self->e.kfd, req, self->bo,
				   (uintptr_t)ids, 2, 0));
	check_unchanged(_metadata, &self->e, &self->before);
}

static void unknown_handle(struct __test_metadata *_metadata,
			   FIXTURE_DATA(bad) *self, unsigned long req)
{
	EXPECT_EQ(-EINVAL, map_raw(self->e.kfd, req, self->bo + 1000,
				   (uintptr_t)self->ids, 1, 0));
	EXPECT_EQ(-EINVAL, map_raw(self->e.kfd, req, 0, (uintptr_t)self->ids,
				   1, 0));
	check_unchanged(_metadata, &self->e, &self->before);
}

TEST_F(bad, map_n_devices_zero)
{
	n_devices_zero(_metadata, self, MAP);
}

TEST_F(bad, map_n_devices_too_many)
{
	n_devices_too_many(_metadata, self, MAP);
}

TEST_F(bad, map_n_success_above_n_devices)
{
	n_success_too_big(_metadata, self, MAP);
}

TEST_F(bad, map_bad_device_list_pointer)
{
	bad_pointer(_metadata, self, MAP);
}

TEST_F(bad, map_unknown_gpu_maps_nothing)
{
	unknown_gpu(_metadata, self, MAP);
}

TEST_F(bad, map_unknown_handle)
{
	unknown_handle(_metadata, self, MAP);
}

TEST_F(bad, unmap_n_devices_zero)
{
	map_first(_metadata, self);
	n_devices_zero(_metadata, self, UNMAP);
}

TEST_F(bad, unmap_n_devices_too_many)
{
	map_first(_metadata, self);
	n_devices_too_many(_metadata, self, UNMAP);
}

TEST_F(bad, unmap_n_success_above_n_devices)
{
	map_first(_metadata, self);
	n_success_too_big(_metadata, self, UNMAP);
}

TEST_F(bad, unmap_bad_device_list_pointer)
{
	map_first(_metadata, self);
	bad_pointer(_metadata, self, UNMAP);
}

TEST_F(bad, unmap_unknown_gpu_unmaps_nothing)
{
	map_first(_metadata, self);
	unknown_gpu(_metadata, self, UNMAP);
}

TEST_F(bad, unmap_unknown_handle)
{
	map_first(_metadata, self);
	unknown_handle(_metadata, self, UNMAP);
}

TEST_F(bad, unmap_not_mapped)
{
	EXPECT_EQ(-EINVAL, map_raw(self->e.kfd, UNMAP, self->bo,
				   (uintptr_t)self->ids, 1, 0));
	check_unchanged(_metadata, &self->e, &self->before);
	/* Mapped and unmapped again: not mapped any more. */
	ASSERT_EQ(0, kt_map(self->e.kfd, self->bo, self->ids, 1));
	ASSERT_EQ(0, kt_unmap(self->e.kfd, self->bo, self->ids, 1));
	EXPECT_EQ(-EINVAL, map_raw(self->e.kfd, UNMAP, self->bo,
				   (uintptr_t)self->ids, 1, 0));
	check_unchanged(_metadata, &self->e, &self->before);
}

/* ---- AVAILABLE_MEMORY ---- */

TEST_F(bad, available_unknown_gpu_id)
{
	uint64_t avail;

	EXPECT_EQ(-EINVAL, kt_available(self->e.kfd, kt_unused_gpu_id(&self->e),
					&avail));
	EXPECT_EQ(-EINVAL, kt_available(self->e.kfd, 0, &avail));
}

TEST_F(bad, available_pad_nonzero)
{
	struct kfd_ioctl_get_available_memory_args a = {
		.gpu_id = self->ids[0],
		.pad = 1,
	};

	EXPECT_EQ(-EINVAL, kt_ioctl(self->e.kfd, AMDKFD_IOC_AVAILABLE_MEMORY,
				    &a));
}

/* ---- EXPORT_DMABUF ---- */

/* EXPORT fails with @err and installs no fd. */
static void export_fails(struct __test_metadata *_metadata,
			 FIXTURE_DATA(bad) *self, uint64_t h, uint32_t flags,
			 int err)
{
	int fds = count_fds(), fd = -1;

	EXPECT_EQ(-err, kt_export(self->e.kfd, h, flags, &fd))
		TH_LOG("flags 0x%x", flags);
	EXPECT_EQ(fds, count_fds());
	if (fd >= 0)
		close(fd);
}

TEST_F(bad, export_bad_flags)
{
	static const uint32_t flags[] = {
		O_NONBLOCK, O_APPEND | O_RDWR, O_WRONLY, O_CREAT, 0x80000000U,
		O_RDWR | O_CLOEXEC | O_TRUNC,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(flags); i++)
		export_fails(_metadata, self, self->bo, flags[i], EINVAL);
	check_unchanged(_metadata, &self->e, &self->before);
}

TEST_F(bad, export_userptr)
{
	char *user = mmap(NULL, KT_MIB, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t h, off = (uintptr_t)user;

	ASSERT_NE(MAP_FAILED, user);
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], FREE_VA, KT_MIB,
			      KT_USERPTR | KT_WRITABLE, &h, &off));
	ASSERT_EQ(0, snapshot(&self->e, &self->before));
	export_fails(_metadata, self, h, O_RDWR | O_CLOEXEC, EINVAL);
	check_unchanged(_metadata, &self->e, &self->before);
	EXPECT_EQ(0, kt_free(self->e.kfd, h));
	munmap(user, KT_MIB);
}

TEST_F(bad, export_doorbell)
{
	uint64_t h;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], FREE_VA,
			      KT_DOORBELL_SIZE, KT_DOORBELL, &h, NULL));
	ASSERT_EQ(0, snapshot(&self->e, &self->before));
	export_fails(_metadata, self, h, O_RDWR | O_CLOEXEC, EINVAL);
	check_unchanged(_metadata, &self->e, &self->before);
}

TEST_F(bad, export_unknown_handle)
{
	export_fails(_metadata, self, self->bo + 1000, O_RDWR, EINVAL);
	export_fails(_metadata, self, 0, O_RDWR, EINVAL);
	ASSERT_EQ(0, kt_free(self->e.kfd, self->bo));
	export_fails(_metadata, self, self->bo, O_RDWR, EINVAL);
}

/* ---- GET_PROCESS_APERTURES_NEW, GET_CLOCK_COUNTERS ---- */

TEST_F(bad, apertures_pad_nonzero)
{
	struct kfd_process_device_apertures ap[KT_MAX_GPUS];
	struct kfd_ioctl_get_process_apertures_new_args a = {
		.kfd_process_device_apertures_ptr = (uintptr_t)ap,
		.num_of_nodes = KT_MAX_GPUS,
		.pad = 1,
	};

	memset(ap, 0xa5, sizeof(ap));
	EXPECT_EQ(-EINVAL, kt_ioctl(self->e.kfd,
				    AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &a));
	EXPECT_EQ(0xa5a5a5a5U, ap[0].gpu_id);
	a.num_of_nodes = 0;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->e.kfd,
				    AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &a));
}

TEST_F(bad, apertures_bad_pointer)
{
	struct kfd_ioctl_get_process_apertures_new_args a = {
		.kfd_process_device_apertures_ptr = 16,
		.num_of_nodes = KT_MAX_GPUS,
	};

	EXPECT_EQ(-EFAULT, kt_ioctl(self->e.kfd,
				    AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &a));
}

TEST_F(bad, clock_counters_pad_nonzero)
{
	struct kfd_ioctl_get_clock_counters_args c = {
		.gpu_id = self->ids[0],
		.pad = 1,
	};

	EXPECT_EQ(-EINVAL, kt_ioctl(self->e.kfd, AMDKFD_IOC_GET_CLOCK_COUNTERS,
				    &c));
	EXPECT_EQ(0, c.gpu_clock_counter);
}

/* ---- ioctl numbers ---- */

/* Not a KFD request at all: a foreign type letter, or a number past 0x24. */
TEST_F(bad, ioctl_unknown)
{
	struct kfd_ioctl_get_version_args v;
	char buf[256] = { 0 };

	EXPECT_EQ(-EINVAL, kt_ioctl(self->e.kfd,
				    _IOR('X', 0x01, struct kfd_ioctl_get_version_args),
				    &v));
	EXPECT_EQ(-EINVAL, kt_ioctl(self->e.kfd, AMDKFD_IOWR(0x25, char[8]),
				    buf));
	EXPECT_EQ(-EINVAL, kt_ioctl(self->e.kfd, AMDKFD_IOWR(0x7f, char[8]),
				    buf));
	EXPECT_EQ(-EINVAL, kt_ioctl(self->e.kfd, AMDKFD_IOWR(0x00, char[8]),
				    buf));
	check_unchanged(_metadata, &self->e, &self->before);
}

/* An upstream ioctl the simulator does not implement (yet). */
TEST_F(bad, ioctl_not_implemented)
{
	struct kfd_ioctl_set_cu_mask_args m = {};

	EXPECT_EQ(-EOPNOTSUPP, kt_ioctl(self->e.kfd,
					AMDKFD_IOC_SET_CU_MASK, &m));
	check_unchanged(_metadata, &self->e, &self->before);
}

/* ---- mmap of /dev/kfd ---- */

static int kfd_mmap_errno(int kfd, uint64_t off, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, kfd,
		       (off_t)off);

	if (p != MAP_FAILED) {
		munmap(p, len);
		return 0;
	}
	return errno;
}

TEST_F(bad, mmap_doorbell_wrong_length)
{
	uint64_t h, off;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], FREE_VA,
			      KT_DOORBELL_SIZE, KT_DOORBELL, &h, &off));
	EXPECT_EQ(EINVAL, kfd_mmap_errno(self->e.kfd, off, KT_PAGE));
	EXPECT_EQ(EINVAL, kfd_mmap_errno(self->e.kfd, off,
					 2 * KT_DOORBELL_SIZE));
	EXPECT_EQ(0, kfd_mmap_errno(self->e.kfd, off, KT_DOORBELL_SIZE));
}

/* As amdkfd's kfd_mmap: a doorbell offset naming no device is -ENODEV. */
TEST_F(bad, mmap_doorbell_unknown_gpu)
{
	uint64_t off = KFD_MMAP_TYPE_DOORBELL |
		       KFD_MMAP_GPU_ID(kt_unused_gpu_id(&self->e));

	EXPECT_EQ(ENODEV, kfd_mmap_errno(self->e.kfd, off, KT_DOORBELL_SIZE));
	check_unchanged(_metadata, &self->e, &self->before);
}

/*
 * MMIO offsets (type 0): as amdkfd's kfd_mmap, a gpu_id no device has is
 * -ENODEV, and the remap page is mapped one page at a time.
 */
TEST_F(bad, mmap_mmio_offset)
{
	EXPECT_EQ(ENODEV, kfd_mmap_errno(self->e.kfd, 0, KT_PAGE));
	EXPECT_EQ(ENODEV,
		  kfd_mmap_errno(self->e.kfd, KFD_MMAP_TYPE_MMIO |
				 KFD_MMAP_GPU_ID(kt_unused_gpu_id(&self->e)),
				 KT_PAGE));
	EXPECT_EQ(EINVAL, kfd_mmap_errno(self->e.kfd,
					 KFD_MMAP_TYPE_MMIO |
					 KFD_MMAP_GPU_ID(self->ids[0]),
					 2 * KT_PAGE));
	check_unchanged(_metadata, &self->e, &self->before);
}

TEST_HARNESS_MAIN
