// SPDX-License-Identifier: GPL-2.0
/*
 * Device and process information ioctls that need no ACQUIRE_VM:
 * GET_VERSION, GET_PROCESS_APERTURES_NEW and GET_CLOCK_COUNTERS.
 * (Their bad-input cases are in badinput/.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kt_harness.h"
#include "kfdsim_test.h"

#define LDS_BASE	(1ULL << 48)
#define SCRATCH_BASE	(2ULL << 48)
#define APERTURE_SPAN	0xffffffffULL

FIXTURE(info) {
	struct kt_env e;
};

FIXTURE_SETUP(info)
{
	ASSERT_EQ(0, kt_env_open(&self->e, false));
}

FIXTURE_TEARDOWN(info)
{
	kt_env_close(&self->e);
}

static int apertures(int kfd, struct kfd_process_device_apertures *ap,
		     uint32_t *n)
{
	struct kfd_ioctl_get_process_apertures_new_args a = {
		.kfd_process_device_apertures_ptr = (uintptr_t)ap,
		.num_of_nodes = *n,
	};
	int ret = kt_ioctl(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &a);

	*n = a.num_of_nodes;
	return ret;
}

static int clocks(int kfd, uint32_t gpu_id,
		  struct kfd_ioctl_get_clock_counters_args *c)
{
	memset(c, 0, sizeof(*c));
	c->gpu_id = gpu_id;
	return kt_ioctl(kfd, AMDKFD_IOC_GET_CLOCK_COUNTERS, c);
}

TEST_F(info, get_version)
{
	struct kfd_ioctl_get_version_args v = { 0 };

	ASSERT_EQ(0, kt_ioctl(self->e.kfd, AMDKFD_IOC_GET_VERSION, &v));
	EXPECT_EQ(1, v.major_version);
	EXPECT_EQ(12, v.minor_version);
}

/* num_of_nodes 0 asks how many entries there are; nothing is written. */
TEST_F(info, apertures_count)
{
	uint32_t n = 0;

	ASSERT_EQ(0, apertures(self->e.kfd, NULL, &n));
	EXPECT_EQ((uint32_t)self->e.ngpus, n);
}

/* One entry per GPU with the gfx9 layout, and the topology's gpu_ids. */
TEST_F(info, apertures_values)
{
	struct kfd_process_device_apertures ap[KT_MAX_GPUS];
	uint32_t n = self->e.ngpus;
	int i, j, found;

	memset(ap, 0, sizeof(ap));
	ASSERT_EQ(0, apertures(self->e.kfd, ap, &n));
	ASSERT_EQ((uint32_t)self->e.ngpus, n);
	for (i = 0; i < self->e.ngpus; i++) {
		found = 0;
		for (j = 0; j < self->e.ngpus; j++)
			found += ap[j].gpu_id == self->e.gpu[i].gpu_id;
		EXPECT_EQ(1, found) TH_LOG("gpu_id %u", self->e.gpu[i].gpu_id);
		EXPECT_EQ(KT_GPUVM_BASE, ap[i].gpuvm_base);
		EXPECT_EQ(KT_GPUVM_LIMIT, ap[i].gpuvm_limit);
		EXPECT_EQ(LDS_BASE, ap[i].lds_base);
		EXPECT_EQ(LDS_BASE + APERTURE_SPAN, ap[i].lds_limit);
		EXPECT_EQ(SCRATCH_BASE, ap[i].scratch_base);
		EXPECT_EQ(SCRATCH_BASE + APERTURE_SPAN, ap[i].scratch_limit);
	}
}

/* A short array gets exactly what fits; the entry after it is untouched. */
TEST_F(info, apertures_short_array)
{
	struct kfd_process_device_apertures ap[2];
	uint32_t n = 1;

	memset(ap, 0xa5, sizeof(ap));
	ASSERT_EQ(0, apertures(self->e.kfd, ap, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(self->e.gpu[0].gpu_id, ap[0].gpu_id);
	EXPECT_EQ(KT_GPUVM_BASE, ap[0].gpuvm_base);
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, ap[1].gpuvm_base);
	EXPECT_EQ(0xa5a5a5a5U, ap[1].gpu_id);
}

/* A longer array is filled up to the GPU count; the rest is untouched. */
TEST_F(info, apertures_long_array)
{
	struct kfd_process_device_apertures ap[KT_MAX_GPUS + 4];
	uint32_t n = KT_MAX_GPUS + 4;

	memset(ap, 0xa5, sizeof(ap));
	ASSERT_EQ(0, apertures(self->e.kfd, ap, &n));
	EXPECT_EQ((uint32_t)self->e.ngpus, n);
	EXPECT_EQ(KT_GPUVM_LIMIT, ap[self->e.ngpus - 1].gpuvm_limit);
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, ap[self->e.ngpus].gpuvm_base);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The GPU counter runs at 100 MHz and never goes back; the CPU counters
 * are raw monotonic and boot-time nanoseconds, at 1 GHz.
 */
TEST_F(info, clock_counters)
{
	struct kfd_ioctl_get_clock_counters_args c1, c2;
	uint64_t boot0, boot1, gpu_ticks, cpu_ns;
	int i;

	for (i = 0; i < self->e.ngpus; i++) {
		boot0 = now_ns(CLOCK_BOOTTIME);
		ASSERT_EQ(0, clocks(self->e.kfd, self->e.gpu[i].gpu_id, &c1));
		usleep(20000);
		ASSERT_EQ(0, clocks(self->e.kfd, self->e.gpu[i].gpu_id, &c2));
		boot1 = now_ns(CLOCK_BOOTTIME);

		EXPECT_EQ(1000000000ULL, c1.system_clock_freq);
		EXPECT_NE(0, c1.gpu_clock_counter);
		EXPECT_GT(c2.gpu_clock_counter, c1.gpu_clock_counter);
		EXPECT_GT(c2.cpu_clock_counter, c1.cpu_clock_counter);
		EXPECT_GE(c1.system_clock_counter, boot0);
		EXPECT_LE(c2.system_clock_counter, boot1);

		/* 10 ns per GPU tick, measured against the raw CPU clock. */
		gpu_ticks = c2.gpu_clock_counter - c1.gpu_clock_counter;
		cpu_ns = c2.cpu_clock_counter - c1.cpu_clock_counter;
		EXPECT_LE(gpu_ticks * 10, cpu_ns + cpu_ns / 100 + 20);
		EXPECT_GE(gpu_ticks * 10 + cpu_ns / 100 + 20, cpu_ns);
	}
}

/* As upstream, an unknown gpu_id is not an error: the GPU counter is 0. */
TEST_F(info, clock_counters_unknown_gpu)
{
	struct kfd_ioctl_get_clock_counters_args c;

	ASSERT_EQ(0, clocks(self->e.kfd, kt_unused_gpu_id(&self->e), &c));
	EXPECT_EQ(0, c.gpu_clock_counter);
	EXPECT_NE(0, c.cpu_clock_counter);
	EXPECT_NE(0, c.system_clock_counter);
	EXPECT_EQ(1000000000ULL, c.system_clock_freq);
	ASSERT_EQ(0, clocks(self->e.kfd, 0, &c));
	EXPECT_EQ(0, c.gpu_clock_counter);
}

TEST_HARNESS_MAIN
