// SPDX-License-Identifier: GPL-2.0
/*
 * Memory ioctls on the good path: ACQUIRE_VM, ALLOC/FREE, MAP/UNMAP,
 * AVAILABLE_MEMORY, EXPORT_DMABUF, and the CPU mappings of BOs through the
 * render node, dma-bufs and /dev/kfd (doorbells).
 *
 * The GPU page table is observed through the vm_ptes debugfs counter, and
 * VRAM accounting through AVAILABLE_MEMORY. Every test runs in its own
 * process (the harness forks), so it starts with a fresh KFD process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/dma-buf.h>

#include "kt_harness.h"
#include "kfdsim_test.h"

FIXTURE(mem) {
	struct kt_env e;
	uint32_t ids[KT_MAX_GPUS];
	unsigned long long vram_bytes;
	struct kt_props base;	/* counters before the test did anything */
	char msg[512];
};

FIXTURE_SETUP(mem)
{
	ASSERT_EQ(0, kt_param("vram_mb", &self->vram_bytes));
	self->vram_bytes <<= 20;
	ASSERT_EQ(0, kt_env_open(&self->e, true));
	kt_env_ids(&self->e, self->ids);
	ASSERT_EQ(0, kt_counters(&self->base, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
}

FIXTURE_TEARDOWN(mem)
{
	kt_env_close(&self->e);
}

static void *map_rw(int fd, uint64_t offset, size_t size)
{
	return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)offset);
}

TEST_F(mem, acquire_vm_same_fd_again)
{
	int i;

	for (i = 0; i < self->e.ngpus; i++)
		EXPECT_EQ(0, kt_acquire_vm(self->e.kfd, self->e.render[i],
					   self->ids[i]));
}

/* handle = gpu_id << 32 | id, id >= 1; VRAM gets a page-aligned offset. */
TEST_F(mem, alloc_vram_handle)
{
	uint64_t h[2], off[2];
	int i;

	for (i = 0; i < self->e.ngpus; i++) {
		ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[i], KT_VA(2 * i),
				      KT_MIB, KT_VRAM | KT_WRITABLE, &h[0],
				      &off[0]));
		ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[i],
				      KT_VA(2 * i + 1), KT_MIB,
				      KT_VRAM | KT_WRITABLE, &h[1], &off[1]));
		EXPECT_EQ(self->ids[i], h[0] >> 32);
		EXPECT_EQ(self->ids[i], h[1] >> 32);
		EXPECT_GE((uint32_t)h[0], 1);
		EXPECT_GE((uint32_t)h[1], 1);
		EXPECT_NE(h[0], h[1]);
		EXPECT_NE(0, off[0]);
		EXPECT_EQ(0, off[0] % KT_PAGE);
		EXPECT_NE(off[0], off[1]);
	}
}

/* One BO of every kind on every GPU; the counters see each, and only it. */
TEST_F(mem, alloc_every_domain)
{
	static const uint32_t doms[] = {
		KT_VRAM, KT_GTT, KT_USERPTR, KT_DOORBELL,
	};
	uint64_t h[KT_MAX_GPUS][4];
	unsigned int d;
	void *user;
	int i;

	user = mmap(NULL, KT_MIB, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, user);
	for (i = 0; i < self->e.ngpus; i++) {
		for (d = 0; d < 4; d++) {
			uint64_t size = doms[d] == KT_DOORBELL ?
					KT_DOORBELL_SIZE : KT_MIB;
			uint64_t off = (uintptr_t)user;

			ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[i],
					      KT_VA(4 * i + d), size,
					      doms[d] | KT_WRITABLE, &h[i][d],
					      &off))
				TH_LOG("gpu %d domain 0x%x", i, doms[d]);
		}
	}
	EXPECT_EQ(4 * self->e.ngpus, kt_counter_delta(&self->base, "bos"));
	/* VRAM, GTT and userptr have GEM objects, doorbells do not. */
	EXPECT_EQ(3 * self->e.ngpus,
		  kt_counter_delta(&self->base, "gem_objects"));
	EXPECT_EQ(self->e.ngpus * (KT_MIB / KT_PAGE),
		  kt_counter_delta(&self->base, "pinned_pages"));
	EXPECT_EQ(self->e.ngpus,
		  kt_counter_delta(&self->base, "doorbell_slices"));

	for (i = 0; i < self->e.ngpus; i++)
		for (d = 0; d < 4; d++)
			EXPECT_EQ(0, kt_free(self->e.kfd, h[i][d]));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "bos"));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "gem_objects"));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "pinned_pages"));
	munmap(user, KT_MIB);
}

/* Every modifier flag upstream defines is accepted with every domain. */
TEST_F(mem, alloc_all_modifier_flags)
{
	const uint32_t mods = KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
		KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE |
		KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC |
		KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE |
		KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM |
		KFD_IOC_ALLOC_MEM_FLAGS_COHERENT |
		KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;
	uint64_t h;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_VRAM | mods, &h, NULL));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(1), KT_MIB,
			      KT_GTT | mods, &h, NULL));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(2),
			      KT_DOORBELL_SIZE, KT_DOORBELL | mods, &h, NULL));
}

/* A new BO reads as zeros through the render node and keeps what is written. */
static void mmap_readback(struct __test_metadata *_metadata,
			  FIXTURE_DATA(mem) *self, uint32_t domain)
{
	const size_t size = 2 * KT_MIB;
	uint64_t h, off;
	void *p, *q;
	int i;

	for (i = 0; i < self->e.ngpus; i++) {
		ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[i], KT_VA(i), size,
				      domain | KT_WRITABLE, &h, &off));
		p = map_rw(self->e.render[i], off, size);
		ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
		EXPECT_TRUE(kt_is_zero(p, size));
		kt_fill(p, size, 100 + i);
		/* A second mapping shares the same pages. */
		q = map_rw(self->e.render[i], off, size);
		ASSERT_NE(MAP_FAILED, q);
		EXPECT_TRUE(kt_check(q, size, 100 + i));
		munmap(q, size);
		munmap(p, size);
		p = map_rw(self->e.render[i], off, size);
		ASSERT_NE(MAP_FAILED, p);
		EXPECT_TRUE(kt_check(p, size, 100 + i));
		munmap(p, size);
	}
}

TEST_F(mem, vram_mmap_zeroed_readback)
{
	mmap_readback(_metadata, self, KT_VRAM);
}

TEST_F(mem, gtt_mmap_zeroed_readback)
{
	mmap_readback(_metadata, self, KT_GTT);
}

/*
 * VRAM without the PUBLIC flag is CPU-mappable, as since Linux 5.14
 * ("drm/amdkfd: Allow CPU access for all VRAM BOs"): ROCm's thunk maps
 * every BO at its GPU VA, PROT_NONE and MAP_PRIVATE when it wants no host
 * access, and fails the allocation if that mmap fails. Its dma-buf maps
 * too. A refusal here (-EPERM, as for amdgpu's NO_CPU_ACCESS BOs) would
 * break ROCm.
 */
TEST_F(mem, vram_without_public_is_cpu_mappable)
{
	const uint64_t va = KT_VA(0);
	uint64_t h, off;
	void *p, *q;
	int fd;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], va, KT_MIB,
			      KT_VRAM | KT_WRITABLE, &h, &off));
	p = mmap((void *)(uintptr_t)va, KT_MIB, PROT_NONE,
		 MAP_PRIVATE | MAP_FIXED, self->e.render[0], (off_t)off);
	ASSERT_EQ((void *)(uintptr_t)va, p) TH_LOG("the thunk's PROT_NONE mmap: %s",
					      strerror(errno));
	/* It can never become a writable copy. */
	EXPECT_EQ(-1, mprotect(p, KT_MIB, PROT_READ | PROT_WRITE));
	q = map_rw(self->e.render[0], off, KT_MIB);
	ASSERT_NE(MAP_FAILED, q) TH_LOG("mmap: %s", strerror(errno));
	kt_fill(q, KT_MIB, 41);
	munmap(q, KT_MIB);
	ASSERT_EQ(0, kt_export(self->e.kfd, h, O_RDWR | O_CLOEXEC, &fd));
	q = mmap(NULL, KT_MIB, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, q) TH_LOG("mmap of the dma-buf: %s",
					strerror(errno));
	EXPECT_TRUE(kt_check(q, KT_MIB, 41));
	munmap(q, KT_MIB);
	close(fd);
	munmap(p, KT_MIB);
}

/* Only the render fd bound by ACQUIRE_VM may map the process's BOs. */
TEST_F(mem, mmap_through_unbound_render_fd_eacces)
{
	uint64_t h, off;
	void *p;
	int fd;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_VRAM | KT_WRITABLE, &h, &off));
	fd = kt_open_render(self->e.gpu[0].render_minor);
	ASSERT_GE(fd, 0);
	p = map_rw(fd, off, KT_MIB);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	if (p != MAP_FAILED)
		munmap(p, KT_MIB);
	close(fd);
}

TEST_F(mem, mmap_through_other_gpus_render_fd_fails)
{
	uint64_t h, off;
	void *p;

	if (self->e.ngpus < 2)
		SKIP(return, "needs two GPUs");
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_VRAM | KT_WRITABLE, &h, &off));
	p = map_rw(self->e.render[1], off, KT_MIB);
	EXPECT_EQ(MAP_FAILED, p);
	if (p != MAP_FAILED)
		munmap(p, KT_MIB);
}

/* USERPTR pins the user's pages and hands the address back unchanged. */
TEST_F(mem, userptr_pins_pages)
{
	uint64_t h, off;
	char *user;

	user = mmap(NULL, KT_MIB, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, user);
	off = (uintptr_t)user;
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_USERPTR | KT_WRITABLE, &h, &off));
	EXPECT_EQ((uintptr_t)user, off);
	EXPECT_EQ(KT_MIB / KT_PAGE,
		  kt_counter_delta(&self->base, "pinned_pages"));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "gpu0_vram_used"));
	EXPECT_EQ(0, kt_free(self->e.kfd, h));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "pinned_pages"));
	EXPECT_EQ(0, munmap(user, KT_MIB));
}

/* The process's pinned memory as the kernel accounts it (VmPin, in KiB). */
static long vm_pin_kib(void)
{
	char line[128];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/*
 * Userptr pages are pinned long-term, so they count as the process's
 * pinned memory (mm->pinned_vm, VmPin) while the BO lives, and without
 * CAP_IPC_LOCK they may not exceed RLIMIT_MEMLOCK: beyond it ALLOC fails
 * with ENOMEM and pins nothing; freeing a BO gives its share back.
 */
TEST_F(mem, userptr_counts_against_memlock)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct caps[2];
	struct rlimit rl = { .rlim_cur = KT_MIB, .rlim_max = KT_MIB };
	uint64_t h[3], off;
	long pin0;
	char *user;
	int i;

	user = mmap(NULL, 2 * KT_MIB, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, user);
	pin0 = vm_pin_kib();
	ASSERT_LE(0, pin0);

	/* Counted even for root. */
	off = (uintptr_t)user;
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), 2 * KT_MIB,
			      KT_USERPTR | KT_WRITABLE, &h[0], &off));
	EXPECT_EQ(pin0 + 2048, vm_pin_kib());
	EXPECT_EQ(0, kt_free(self->e.kfd, h[0]));
	EXPECT_EQ(pin0, vm_pin_kib());

	/* Without CAP_IPC_LOCK (this test runs in a child of its own), a
	 * 1 MiB RLIMIT_MEMLOCK holds.
	 */
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, syscall(SYS_capget, &hdr, caps));
	caps[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &=
		~CAP_TO_MASK(CAP_IPC_LOCK);
	ASSERT_EQ(0, syscall(SYS_capset, &hdr, caps));

	off = (uintptr_t)user;
	EXPECT_EQ(-ENOMEM, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0),
				    2 * KT_MIB, KT_USERPTR | KT_WRITABLE,
				    &h[0], &off));
	EXPECT_EQ(pin0, vm_pin_kib());
	EXPECT_EQ(0, kt_counter_delta(&self->base, "pinned_pages"));
	for (i = 0; i < 2; i++) {
		off = (uintptr_t)user + i * KT_MIB / 2;
		ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(i),
				      KT_MIB / 2, KT_USERPTR | KT_WRITABLE,
				      &h[i], &off));
	}
	off = (uintptr_t)user + KT_MIB;
	EXPECT_EQ(-ENOMEM, kt_alloc(self->e.kfd, self->ids[0], KT_VA(2),
				    KT_PAGE, KT_USERPTR | KT_WRITABLE, &h[2],
				    &off));
	EXPECT_EQ(pin0 + 1024, vm_pin_kib());
	EXPECT_EQ(0, kt_free(self->e.kfd, h[1]));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(2), KT_MIB / 2,
			      KT_USERPTR | KT_WRITABLE, &h[2], &off));
	EXPECT_EQ(0, kt_free(self->e.kfd, h[0]));
	EXPECT_EQ(0, kt_free(self->e.kfd, h[2]));
	EXPECT_EQ(pin0, vm_pin_kib());
	EXPECT_EQ(0, munmap(user, 2 * KT_MIB));
}

#define MEM_NOBODY	65534

/* In a child: open /dev/kfd as root, then as nobody pin @size bytes. */
static int mem_pin_as_nobody(int ready, int go, uint64_t size)
{
	struct kt_env e;
	uint64_t h, off;
	void *user;
	char c = 0;
	int ret;

	if (kt_env_open(&e, true))
		return 10;
	user = kt_anon(size);
	if (!user || setresgid(MEM_NOBODY, MEM_NOBODY, MEM_NOBODY) ||
	    setresuid(MEM_NOBODY, MEM_NOBODY, MEM_NOBODY))
		return 11;
	off = (uintptr_t)user;
	ret = kt_alloc(e.kfd, e.gpu[0].gpu_id, KT_VA(0), size,
		       KT_USERPTR | KT_WRITABLE, &h, &off);
	c = ret ? 'n' : 'y';
	if (write(ready, &c, 1) != 1 || ret)
		return 12;
	if (read(go, &c, 1) != 1)
		return 13;
	if (kt_free(e.kfd, h))
		return 14;
	kt_env_close(&e);
	return 0;
}

/*
 * RLIMIT_MEMLOCK bounds a user's userptr pins across all of its processes
 * (user->locked_vm, as io_uring counts pinned buffers), not only per
 * process: otherwise every new process could pin the limit again, even of
 * the same pages, and fill the system budget. A second process of the
 * same (unprivileged) user is refused while the first holds the limit,
 * and gets it once the first let go.
 */
TEST_F(mem, userptr_memlock_is_per_user)
{
	struct rlimit rl = { .rlim_cur = KT_MIB, .rlim_max = KT_MIB };
	int ready[2], go[2], status;
	uint64_t h, off;
	char *user, c;
	pid_t pid;

	user = kt_anon(KT_MIB);
	ASSERT_NE(NULL, user);
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(mem_pin_as_nobody(ready[1], go[0], KT_MIB));
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ('y', c) TH_LOG("the first process could not pin 1 MiB");

	ASSERT_EQ(0, setresgid(MEM_NOBODY, MEM_NOBODY, MEM_NOBODY));
	ASSERT_EQ(0, setresuid(MEM_NOBODY, MEM_NOBODY, MEM_NOBODY));
	off = (uintptr_t)user;
	EXPECT_EQ(-ENOMEM, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0),
				    KT_PAGE, KT_USERPTR | KT_WRITABLE, &h,
				    &off));
	EXPECT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child status 0x%x", status);

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_USERPTR | KT_WRITABLE, &h, &off));
	EXPECT_EQ(0, kt_free(self->e.kfd, h));
	close(ready[0]);
	close(go[1]);
}

/*
 * DOORBELL returns the /dev/kfd offset of the process's doorbell slice,
 * which maps (exactly 8 KiB), starts zeroed and is writable.
 */
TEST_F(mem, doorbell_offset_and_mmap)
{
	uint64_t h, off, want;
	void *p;
	int i;

	for (i = 0; i < self->e.ngpus; i++) {
		ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[i], KT_VA(i),
				      KT_DOORBELL_SIZE, KT_DOORBELL | KT_WRITABLE,
				      &h, &off));
		want = KFD_MMAP_TYPE_DOORBELL | KFD_MMAP_GPU_ID(self->ids[i]);
		EXPECT_EQ(want, off);
		EXPECT_EQ((3ULL << 62) | ((uint64_t)self->ids[i] << 46), off);
		p = map_rw(self->e.kfd, off, KT_DOORBELL_SIZE);
		ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
		EXPECT_TRUE(kt_is_zero(p, KT_DOORBELL_SIZE));
		kt_fill(p, KT_DOORBELL_SIZE, 7);
		EXPECT_TRUE(kt_check(p, KT_DOORBELL_SIZE, 7));
		EXPECT_EQ(0, munmap(p, KT_DOORBELL_SIZE));
	}
	EXPECT_EQ(self->e.ngpus,
		  kt_counter_delta(&self->base, "doorbell_slices"));
}

/* A 1 MiB BO mapped on every GPU has one PTE per page per GPU. */
TEST_F(mem, map_on_every_gpu_counts_ptes)
{
	const long long pages = KT_MIB / KT_PAGE;
	struct kfd_ioctl_map_memory_to_gpu_args a;
	uint64_t h;
	int i;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_VRAM | KT_WRITABLE, &h, NULL));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "vm_ptes"));
	a = (struct kfd_ioctl_map_memory_to_gpu_args) {
		.handle = h,
		.device_ids_array_ptr = (uintptr_t)self->ids,
		.n_devices = self->e.ngpus,
	};
	ASSERT_EQ(0, kt_ioctl(self->e.kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &a));
	EXPECT_EQ((uint32_t)self->e.ngpus, a.n_success);
	EXPECT_EQ(pages * self->e.ngpus,
		  kt_counter_delta(&self->base, "vm_ptes"));

	/* Unmap one GPU at a time. */
	for (i = self->e.ngpus - 1; i >= 0; i--) {
		ASSERT_EQ(0, kt_unmap(self->e.kfd, h, &self->ids[i], 1));
		EXPECT_EQ(pages * i, kt_counter_delta(&self->base, "vm_ptes"));
	}
}

/* Mapping a BO where it is already mapped succeeds and adds nothing. */
TEST_F(mem, map_twice_ok)
{
	const long long pages = KT_MIB / KT_PAGE;
	uint64_t h;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_GTT | KT_WRITABLE, &h, NULL));
	ASSERT_EQ(0, kt_map(self->e.kfd, h, self->ids, 1));
	ASSERT_EQ(0, kt_map(self->e.kfd, h, self->ids, 1));
	EXPECT_EQ(pages, kt_counter_delta(&self->base, "vm_ptes"));
	ASSERT_EQ(0, kt_map(self->e.kfd, h, self->ids, self->e.ngpus));
	EXPECT_EQ(pages * self->e.ngpus,
		  kt_counter_delta(&self->base, "vm_ptes"));
	ASSERT_EQ(0, kt_unmap(self->e.kfd, h, self->ids, self->e.ngpus));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "vm_ptes"));
}

/* As upstream, a retried MAP skips the first n_success devices. */
TEST_F(mem, map_resumes_after_n_success)
{
	const long long pages = KT_MIB / KT_PAGE;
	struct kfd_ioctl_map_memory_to_gpu_args a;
	uint64_t h;

	if (self->e.ngpus < 2)
		SKIP(return, "needs two GPUs");
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_VRAM | KT_WRITABLE, &h, NULL));
	a = (struct kfd_ioctl_map_memory_to_gpu_args) {
		.handle = h,
		.device_ids_array_ptr = (uintptr_t)self->ids,
		.n_devices = 2,
		.n_success = 1,
	};
	ASSERT_EQ(0, kt_ioctl(self->e.kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &a));
	EXPECT_EQ(2, a.n_success);
	EXPECT_EQ(pages, kt_counter_delta(&self->base, "vm_ptes"));
	/* It was GPU 1 that got mapped: unmapping GPU 0 changes nothing. */
	ASSERT_EQ(0, kt_unmap(self->e.kfd, h, &self->ids[0], 1));
	EXPECT_EQ(pages, kt_counter_delta(&self->base, "vm_ptes"));
	ASSERT_EQ(0, kt_unmap(self->e.kfd, h, &self->ids[1], 1));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "vm_ptes"));
}

/* 1024 entries is the most a device list may have; repeats are harmless. */
TEST_F(mem, map_1024_devices)
{
	const long long pages = KT_MIB / KT_PAGE;
	uint32_t *ids = calloc(1024, sizeof(*ids));
	uint64_t h;
	int i;

	ASSERT_NE(NULL, ids);
	for (i = 0; i < 1024; i++)
		ids[i] = self->ids[i % self->e.ngpus];
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_GTT, &h, NULL));
	EXPECT_EQ(0, kt_map(self->e.kfd, h, ids, 1024));
	EXPECT_EQ(pages * self->e.ngpus,
		  kt_counter_delta(&self->base, "vm_ptes"));
	EXPECT_EQ(0, kt_unmap(self->e.kfd, h, ids, 1024));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "vm_ptes"));
	free(ids);
}

/* GTT, userptr and doorbell BOs map like VRAM. */
TEST_F(mem, map_every_domain)
{
	uint64_t hg, hu, hd, off;
	long long want;
	void *user;

	user = mmap(NULL, KT_MIB, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, user);
	off = (uintptr_t)user;
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_GTT | KT_WRITABLE, &hg, NULL));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(1), KT_MIB,
			      KT_USERPTR | KT_WRITABLE, &hu, &off));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(2),
			      KT_DOORBELL_SIZE, KT_DOORBELL, &hd, NULL));
	ASSERT_EQ(0, kt_map(self->e.kfd, hg, self->ids, self->e.ngpus));
	ASSERT_EQ(0, kt_map(self->e.kfd, hu, self->ids, self->e.ngpus));
	ASSERT_EQ(0, kt_map(self->e.kfd, hd, self->ids, self->e.ngpus));
	want = self->e.ngpus * (2 * KT_MIB + KT_DOORBELL_SIZE) / KT_PAGE;
	EXPECT_EQ(want, kt_counter_delta(&self->base, "vm_ptes"));
	EXPECT_EQ(0, kt_free(self->e.kfd, hg));
	EXPECT_EQ(0, kt_free(self->e.kfd, hu));
	EXPECT_EQ(0, kt_free(self->e.kfd, hd));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "vm_ptes"));
	munmap(user, KT_MIB);
}

/* debugfs vm: page-table update counters (never decrease). */
#define KT_VM_STATS	"/sys/kernel/debug/kfdsim/vm"
#define KT_VM_BATCH	512	/* entries per hold of the table lock */

static long long vm_stat(const char *name)
{
	struct kt_props c;
	char err[256];

	if (kt_props_read(KT_VM_STATS, false, &c, err, sizeof(err)))
		return -1;
	return kt_counter(&c, name);
}

/*
 * Mapping and unmapping a BO of many pages lets go of the page-table lock
 * between batches of KFDSIM_VM_BATCH entries, so that the CP (waiting for
 * it with its own lock held) is not held up for the whole BO: a map of 16
 * batches lets go of it at least 15 times, and so does the unmap. Other
 * processes' maps can only add to the count.
 */
TEST_F(mem, huge_map_and_unmap_let_go_of_the_table_lock)
{
	const long long pages = 16 * KT_VM_BATCH;
	long long drops0, drops1, drops2;
	uint64_t h;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0),
			      pages * KT_PAGE, KT_GTT | KT_WRITABLE, &h,
			      NULL));
	drops0 = vm_stat("lock_drops");
	ASSERT_LE(0, drops0);
	ASSERT_EQ(0, kt_map(self->e.kfd, h, self->ids, 1));
	EXPECT_EQ(pages, kt_counter_delta(&self->base, "vm_ptes"));
	drops1 = vm_stat("lock_drops");
	EXPECT_LE(drops0 + 15, drops1);
	ASSERT_EQ(0, kt_unmap(self->e.kfd, h, self->ids, 1));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "vm_ptes"));
	drops2 = vm_stat("lock_drops");
	EXPECT_LE(drops1 + 15, drops2);
	ASSERT_EQ(0, kt_free(self->e.kfd, h));
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#define HUGE_MAP_BYTES	(512 * KT_MIB)
#define HUGE_MAP_TRIES	5

/* The child: allocate a huge GTT BO, say so on @ready, then map it. */
static void huge_map_child(int ready)
{
	uint32_t ids[KT_MAX_GPUS];
	struct kt_env e;
	uint64_t h;
	char c = 0;

	if (kt_env_open(&e, true))
		_exit(2);
	kt_env_ids(&e, ids);
	if (kt_alloc(e.kfd, ids[0], KT_VA(16), HUGE_MAP_BYTES,
		     KT_GTT | KT_WRITABLE, &h, NULL))
		_exit(3);
	if (write(ready, &c, 1) != 1)
		_exit(4);
	kt_map(e.kfd, h, ids, 1);
	_exit(0);
}

/*
 * SIGKILL lands while a process maps a 512 MiB BO: the map ends between
 * two batches (debugfs vm maps_interrupted counts it) and removes the
 * entries it wrote. Teardown unmaps only BOs whose map succeeded, so a
 * partial mapping left behind would stay in vm_ptes: once the process is
 * gone every counter is back where it was. The parent kills as soon as
 * vm_ptes shows part of the BO mapped; should the map finish first (the
 * counter jumps past the whole BO, not seen under TCG), it tries again.
 */
TEST_F_TIMEOUT(mem, fatal_signal_ends_huge_map_without_leftovers, 600)
{
	const long long pages = HUGE_MAP_BYTES / KT_PAGE;
	long long intr0, ptes = 0, now;
	int tries, status, ready[2];
	struct kt_props after;
	char c, diff[512];
	uint64_t end;
	pid_t pid;

	intr0 = vm_stat("maps_interrupted");
	ASSERT_LE(0, intr0);
	for (tries = 0; tries < HUGE_MAP_TRIES; tries++) {
		ASSERT_EQ(0, pipe(ready));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(ready[0]);
			huge_map_child(ready[1]);
		}
		close(ready[1]);
		ASSERT_EQ(1, read(ready[0], &c, 1));
		close(ready[0]);
		/* Wait for the map to be under way, then kill. */
		end = now_ms() + 60000ULL * kt_timeout_scale();
		do {
			ptes = kt_counter_delta(&self->base, "vm_ptes");
		} while (ptes <= 0 && now_ms() < end);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			TH_LOG("child status 0x%x", status);
		TH_LOG("try %d: killed with %lld of %lld entries written",
		       tries, ptes, pages);
		if (vm_stat("maps_interrupted") > intr0)
			break;
	}
	EXPECT_LT(tries, HUGE_MAP_TRIES)
		TH_LOG("no map was ended by the signal");
	EXPECT_LT(0, ptes);

	/* The killed process's teardown leaves nothing behind. */
	end = now_ms() + 30000ULL * kt_timeout_scale();
	do {
		ASSERT_EQ(0, kt_counters(&after, self->msg,
					 sizeof(self->msg)));
		now = kt_counters_diff(&self->base, &after, diff,
				       sizeof(diff));
	} while (now && now_ms() < end && !usleep(10000));
	EXPECT_EQ(0, now) TH_LOG("counters moved: %s", diff);
}

/* FREE of a BO still mapped on every GPU removes its PTEs too. */
TEST_F(mem, free_while_mapped)
{
	uint64_t h;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_VRAM | KT_WRITABLE, &h, NULL));
	ASSERT_EQ(0, kt_map(self->e.kfd, h, self->ids, self->e.ngpus));
	EXPECT_NE(0, kt_counter_delta(&self->base, "vm_ptes"));
	ASSERT_EQ(0, kt_free(self->e.kfd, h));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "vm_ptes"));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "bos"));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "gem_objects"));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "gpu0_vram_used"));
}

/* AVAILABLE_MEMORY moves by exactly the VRAM allocated, on that GPU only. */
TEST_F(mem, available_tracks_vram)
{
	uint64_t before[KT_MAX_GPUS], now, h, hg;
	int i;

	for (i = 0; i < self->e.ngpus; i++)
		ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[i],
					  &before[i]));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), 3 * KT_MIB,
			      KT_VRAM | KT_WRITABLE, &h, NULL));
	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &now));
	EXPECT_EQ(before[0] - 3 * KT_MIB, now);
	EXPECT_EQ(3 * KT_MIB, kt_counter_delta(&self->base, "gpu0_vram_used"));
	for (i = 1; i < self->e.ngpus; i++) {
		ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[i], &now));
		EXPECT_EQ(before[i], now);
	}
	/* GTT is not VRAM. */
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(1), KT_MIB,
			      KT_GTT | KT_WRITABLE, &hg, NULL));
	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &now));
	EXPECT_EQ(before[0] - 3 * KT_MIB, now);

	ASSERT_EQ(0, kt_free(self->e.kfd, h));
	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &now));
	EXPECT_EQ(before[0], now);
}

/* With nothing allocated, all of a GPU's VRAM is available. */
TEST_F(mem, available_is_vram_size)
{
	uint64_t now;
	int i;

	for (i = 0; i < self->e.ngpus; i++) {
		ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[i], &now));
		EXPECT_EQ(self->vram_bytes, now);
	}
}

/*
 * Fill a GPU's VRAM in four chunks: one more page fails with ENOMEM and
 * changes nothing; freeing a chunk makes exactly that much allocatable.
 */
TEST_F_TIMEOUT(mem, vram_exhaustion, 300)
{
	uint64_t h[4], extra, now, chunk;
	int i;

	chunk = self->vram_bytes / 4;
	ASSERT_EQ(0, chunk % KT_PAGE);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(i),
				      chunk, KT_VRAM, &h[i], NULL))
			TH_LOG("chunk %d", i);
	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &now));
	EXPECT_EQ(0, now);
	EXPECT_EQ(-ENOMEM, kt_alloc(self->e.kfd, self->ids[0], KT_VA(4),
				    KT_PAGE, KT_VRAM, &extra, NULL));
	EXPECT_EQ(4, kt_counter_delta(&self->base, "bos"));
	/* GTT does not come out of VRAM. */
	EXPECT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(5), KT_PAGE,
			      KT_GTT, &extra, NULL));
	EXPECT_EQ(0, kt_free(self->e.kfd, extra));

	ASSERT_EQ(0, kt_free(self->e.kfd, h[2]));
	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &now));
	EXPECT_EQ(chunk, now);
	EXPECT_EQ(-ENOMEM, kt_alloc(self->e.kfd, self->ids[0], KT_VA(4),
				    chunk + KT_PAGE, KT_VRAM, &extra, NULL));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(4), chunk,
			      KT_VRAM, &h[2], NULL));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, kt_free(self->e.kfd, h[i]));
	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &now));
	EXPECT_EQ(self->vram_bytes, now);
}

/* A freed VA range can be allocated again; adjacent ranges do not clash. */
TEST_F(mem, va_reuse_and_adjacent)
{
	const uint32_t last = self->e.ngpus - 1;
	uint64_t h1, h2, h3;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_GTT, &h1, NULL));
	ASSERT_EQ(0, kt_free(self->e.kfd, h1));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_VRAM, &h1, NULL));
	/* Right after it, on another GPU, and right before it. */
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[last], KT_VA(0) + KT_MIB,
			      KT_MIB, KT_GTT, &h2, NULL));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0) - KT_PAGE,
			      KT_PAGE, KT_GTT, &h3, NULL));
}

/* The first and the last page of the GPUVM aperture are usable. */
TEST_F(mem, aperture_edges)
{
	uint64_t h;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_GPUVM_BASE,
			      KT_PAGE, KT_GTT, &h, NULL));
	ASSERT_EQ(0, kt_map(self->e.kfd, h, self->ids, 1));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0],
			      KT_GPUVM_LIMIT + 1 - KT_MIB, KT_MIB, KT_GTT, &h,
			      NULL));
	ASSERT_EQ(0, kt_map(self->e.kfd, h, self->ids, 1));
}

static void *export_and_map(struct __test_metadata *_metadata, int kfd,
			    uint64_t h, size_t size, int *fd)
{
	void *p;

	*fd = -1;
	if (kt_export(kfd, h, O_RDWR | O_CLOEXEC, fd))
		return MAP_FAILED;
	p = map_rw(*fd, 0, size);
	if (p == MAP_FAILED)
		TH_LOG("dma-buf mmap: %s", strerror(errno));
	return p;
}

/*
 * A dma-buf of a BO shows what was written through the render node and
 * the other way round, with DMA_BUF_IOCTL_SYNC around CPU access.
 */
static void dmabuf_roundtrip(struct __test_metadata *_metadata,
			     FIXTURE_DATA(mem) *self, uint32_t domain)
{
	const size_t size = KT_MIB;
	struct dma_buf_sync sync;
	uint64_t h, off;
	void *r, *d;
	int fd;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), size,
			      domain | KT_WRITABLE, &h, &off));
	r = map_rw(self->e.render[0], off, size);
	ASSERT_NE(MAP_FAILED, r);
	kt_fill(r, size, 11);

	ASSERT_EQ(0, kt_export(self->e.kfd, h, O_RDWR | O_CLOEXEC, &fd));
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ((off_t)size, lseek(fd, 0, SEEK_END));
	d = map_rw(fd, 0, size);
	ASSERT_NE(MAP_FAILED, d) TH_LOG("dma-buf mmap: %s", strerror(errno));

	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW;
	EXPECT_EQ(0, kt_ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync));
	EXPECT_TRUE(kt_check(d, size, 11));
	kt_fill(d, size, 12);
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
	EXPECT_EQ(0, kt_ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync));
	EXPECT_TRUE(kt_check(r, size, 12));

	munmap(d, size);
	munmap(r, size);
	close(fd);
}

TEST_F(mem, export_vram_dmabuf_roundtrip)
{
	dmabuf_roundtrip(_metadata, self, KT_VRAM);
}

TEST_F(mem, export_gtt_dmabuf_roundtrip)
{
	dmabuf_roundtrip(_metadata, self, KT_GTT);
}

/* O_CLOEXEC in the flags decides FD_CLOEXEC on the new fd. */
TEST_F(mem, export_cloexec_flag)
{
	uint64_t h;
	int fd;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_GTT | KT_WRITABLE, &h, NULL));
	ASSERT_EQ(0, kt_export(self->e.kfd, h, O_RDWR, &fd));
	EXPECT_EQ(0, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	ASSERT_EQ(0, kt_export(self->e.kfd, h, O_RDWR | O_CLOEXEC, &fd));
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

/*
 * A dma-buf keeps its VRAM after FREE: the pool gets the memory back only
 * once the fd and its mappings are gone.
 */
TEST_F(mem, dmabuf_keeps_memory_after_free)
{
	const size_t size = 2 * KT_MIB;
	uint64_t h, off, before, now;
	void *r, *d;
	int fd;

	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &before));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), size,
			      KT_VRAM | KT_WRITABLE, &h, &off));
	r = map_rw(self->e.render[0], off, size);
	ASSERT_NE(MAP_FAILED, r);
	kt_fill(r, size, 21);
	munmap(r, size);
	d = export_and_map(_metadata, self->e.kfd, h, size, &fd);
	ASSERT_NE(MAP_FAILED, d);

	ASSERT_EQ(0, kt_free(self->e.kfd, h));
	EXPECT_EQ(0, kt_counter_delta(&self->base, "bos"));
	EXPECT_EQ(1, kt_counter_delta(&self->base, "gem_objects"));
	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &now));
	EXPECT_EQ(before - size, now);
	EXPECT_TRUE(kt_check(d, size, 21));

	close(fd);
	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &now));
	EXPECT_EQ(before - size, now) TH_LOG("the mapping still holds it");
	EXPECT_TRUE(kt_check(d, size, 21));

	munmap(d, size);
	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &now));
	EXPECT_EQ(before, now);
	EXPECT_EQ(0, kt_counter_delta(&self->base, "gem_objects"));
}

/* A render-node mapping also outlives FREE; its pages stay valid. */
TEST_F(mem, cpu_mapping_keeps_memory_after_free)
{
	const size_t size = KT_MIB;
	uint64_t h, off, before, now;
	void *r;

	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &before));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), size,
			      KT_VRAM | KT_WRITABLE, &h, &off));
	r = map_rw(self->e.render[0], off, size);
	ASSERT_NE(MAP_FAILED, r);
	kt_fill(r, size, 31);
	ASSERT_EQ(0, kt_free(self->e.kfd, h));
	EXPECT_TRUE(kt_check(r, size, 31));
	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &now));
	EXPECT_EQ(before - size, now);
	munmap(r, size);
	ASSERT_EQ(0, kt_available(self->e.kfd, self->ids[0], &now));
	EXPECT_EQ(before, now);
}

TEST_HARNESS_MAIN
