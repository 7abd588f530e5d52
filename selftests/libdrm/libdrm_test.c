// SPDX-License-Identifier: GPL-2.0
/*
 * The amdgpu uAPI of the render nodes, driven by Debian's libdrm_amdgpu:
 * device initialisation and the values it reports (checked against the KFD
 * topology), buffers, PRIME import of KFD BOs, the GPU VM, SDMA and compute
 * (PM4) command submission with fences, and the requests that must fail.
 *
 * Every test runs in its own process (the harness forks), so libdrm's
 * per-process device list starts empty; each test checks at its end that
 * the driver's live-object counters are back where they started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <libdrm/amdgpu.h>
#include <libdrm/amdgpu_drm.h>
#include <linux/kfdsim.h>

#include "kt_harness.h"
#include "kfdsim_test.h"
#include "kfdsim_gpu.h"
#include "abo.h"
#include "kfdsim_criu_util.h"
#include "checksum.h"
#include "gpu_scan.h"

/* What the simulated gfx906 is, as amdgpu reports it. */
#define AD_MINOR		49
#define AD_MARKETING		"AMD Instinct MI60 / MI50"
#define AD_COPY_MAX		(2 * KT_MIB)	/* bytes per SDMA copy packet */
#define AD_IB_SIZE		(64 * KT_PAGE)
/* The user fence slot in the IB BO, in units of u64. */
#define AD_FENCE_SLOT		((AD_IB_SIZE - KT_PAGE) / 8)

/* A libdrm device on a render-node file of its own. */
struct ad {
	int fd;
	amdgpu_device_handle dev;
	uint32_t major, minor;
	amdgpu_context_handle ctx;
};

static int ad_open(int minor, struct ad *a)
{
	int ret;

	memset(a, 0, sizeof(*a));
	a->fd = kt_open_render(minor);
	if (a->fd < 0)
		return a->fd;
	ret = amdgpu_device_initialize(a->fd, &a->major, &a->minor, &a->dev);
	if (!ret)
		ret = amdgpu_cs_ctx_create(a->dev, &a->ctx);
	if (ret) {
		if (a->dev)
			amdgpu_device_deinitialize(a->dev);
		close(a->fd);
		a->fd = -1;
	}
	return ret;
}

static void ad_close(struct ad *a)
{
	if (a->fd < 0)
		return;
	amdgpu_cs_ctx_free(a->ctx);
	amdgpu_device_deinitialize(a->dev);
	close(a->fd);
	a->fd = -1;
}

/* Append linear copies of @size bytes, 2 MiB at most each; dwords used. */
static uint32_t ib_copy(uint32_t *ib, uint64_t dst, uint64_t src,
			uint64_t size)
{
	uint32_t n = 0;

	while (size) {
		uint64_t len = size < AD_COPY_MAX ? size : AD_COPY_MAX;

		n += kg_sdma_copy_packet(ib + n, dst, src, (uint32_t)(len - 1));
		src += len;
		dst += len;
		size -= len;
	}
	return n;
}

/*
 * Submit the @ndw dwords at GPU VA @ib_va on ring @ring of IP @ip with a
 * BO list of @bos and the user fence in @ib, then wait for the fence.
 * Returns 0 or the first error; *seq gets the fence's sequence number.
 */
static int submit_ip(struct ad *a, struct abo *ib, uint64_t ib_va,
		     uint32_t ndw, uint32_t ip, uint32_t ring,
		     amdgpu_bo_handle *bos, uint32_t nbos, uint64_t *seq)
{
	struct amdgpu_cs_ib_info info = {
		.ib_mc_address = ib_va,
		.size = ndw,
	};
	struct amdgpu_cs_request req = {
		.ip_type = ip,
		.ring = ring,
		.number_of_ibs = 1,
		.ibs = &info,
		.fence_info = { .handle = ib->bo, .offset = AD_FENCE_SLOT },
	};
	struct amdgpu_cs_fence fence = {
		.context = a->ctx,
		.ip_type = ip,
		.ring = ring,
	};
	amdgpu_bo_list_handle list = NULL;
	uint32_t expired = 0;
	int ret;

	if (nbos) {
		ret = amdgpu_bo_list_create(a->dev, nbos, bos, NULL, &list);
		if (ret)
			return ret;
		req.resources = list;
	}
	ret = amdgpu_cs_submit(a->ctx, 0, &req, 1);
	if (!ret) {
		fence.fence = req.seq_no;
		*seq = req.seq_no;
		ret = amdgpu_cs_query_fence_status(&fence,
						   AMDGPU_TIMEOUT_INFINITE, 0,
						   &expired);
		if (!ret && !expired)
			ret = -ETIME;
	}
	if (list)
		amdgpu_bo_list_destroy(list);
	return ret;
}

/* An SDMA IB at @ib_va. */
static int submit_va(struct ad *a, struct abo *ib, uint64_t ib_va,
		     uint32_t ndw, uint32_t ring, amdgpu_bo_handle *bos,
		     uint32_t nbos, uint64_t *seq)
{
	return submit_ip(a, ib, ib_va, ndw, AMDGPU_HW_IP_DMA, ring, bos, nbos,
			 seq);
}

/* The IB at the start of @ib. */
static int submit(struct ad *a, struct abo *ib, uint32_t ndw, uint32_t ring,
		  amdgpu_bo_handle *bos, uint32_t nbos, uint64_t *seq)
{
	return submit_va(a, ib, ib->va, ndw, ring, bos, nbos, seq);
}

/* An IB anywhere, on ring 0, with the user fence in @ib. */
static int submit_at(struct ad *a, struct abo *ib, uint64_t va, uint32_t ndw,
		     uint64_t *seq)
{
	return submit_va(a, ib, va, ndw, 0, NULL, 0, seq);
}

/* The 64-bit user fence the GPU wrote into @ib. */
static uint64_t user_fence(const struct abo *ib)
{
	return ((volatile uint64_t *)ib->cpu)[AD_FENCE_SLOT];
}

static int topo_props(const struct kt_gpu *g, const char *sub,
		      struct kt_props *p)
{
	char path[256], err[256];

	snprintf(path, sizeof(path), "%s/%u/%s", KT_NODES, g->node, sub);
	return kt_props_read(path, false, p, err, sizeof(err));
}

static unsigned long long prop(const struct kt_props *p, const char *key)
{
	unsigned long long v = ~0ULL;

	kt_prop(p, key, &v);
	return v;
}

FIXTURE(libdrm) {
	struct kt_gpu gpu[KT_MAX_GPUS];
	int ngpus;
	struct kt_props base;	/* counters before the test */
	char msg[512];
};

FIXTURE_SETUP(libdrm)
{
	self->ngpus = kt_gpus(self->gpu, KT_MAX_GPUS);
	ASSERT_LT(0, self->ngpus);
	ASSERT_EQ(0, kt_counters(&self->base, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
}

FIXTURE_TEARDOWN(libdrm)
{
}

/* libdrm opens every node and reports the GPU the topology describes. */
TEST_F(libdrm, init_matches_topology)
{
	struct kfd_process_device_apertures ap[KT_MAX_GPUS];
	struct kfd_ioctl_get_process_apertures_new_args aargs = {
		.kfd_process_device_apertures_ptr = (uintptr_t)ap,
		.num_of_nodes = KT_MAX_GPUS,
	};
	struct kt_props node, mem;
	int kfd, i, j;

	kfd = kt_open_kfd();
	ASSERT_LE(0, kfd);
	ASSERT_EQ(0, kt_ioctl(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW,
			      &aargs));
	ASSERT_EQ(self->ngpus, aargs.num_of_nodes);

	for (i = 0; i < self->ngpus; i++) {
		struct drm_amdgpu_info_hw_ip ip;
		struct amdgpu_gpu_info gi;
		struct amdgpu_heap_info heap;
		uint64_t start, end;
		uint32_t count, ver, feat;
		struct ad a;

		ASSERT_EQ(0, topo_props(&self->gpu[i], "properties", &node));
		ASSERT_EQ(0, topo_props(&self->gpu[i], "mem_banks/0/properties",
					&mem));
		ASSERT_EQ(0, ad_open(self->gpu[i].render_minor, &a));
		EXPECT_EQ(3, a.major);
		EXPECT_EQ(AD_MINOR, a.minor);

		ASSERT_EQ(0, amdgpu_query_gpu_info(a.dev, &gi));
		EXPECT_EQ(prop(&node, "device_id"), gi.asic_id);
		EXPECT_EQ(AMDGPU_FAMILY_AI, gi.family_id);
		EXPECT_EQ(prop(&node, "simd_count") / prop(&node, "simd_per_cu"),
			  gi.cu_active_number);
		EXPECT_EQ(prop(&node, "array_count") /
			  prop(&node, "simd_arrays_per_engine"),
			  gi.num_shader_engines);
		EXPECT_EQ(prop(&node, "simd_arrays_per_engine"),
			  gi.num_shader_arrays_per_engine);
		EXPECT_EQ(prop(&node, "max_engine_clk_fcompute") * 1000,
			  gi.max_engine_clk);
		EXPECT_EQ(prop(&mem, "mem_clk_max") * 1000, gi.max_memory_clk);
		EXPECT_EQ(prop(&mem, "width"), gi.vram_bit_width);
		EXPECT_STREQ(AD_MARKETING, amdgpu_get_marketing_name(a.dev));

		/* VRAM is the node's local memory. */
		ASSERT_EQ(0, amdgpu_query_heap_info(a.dev,
						    AMDGPU_GEM_DOMAIN_VRAM, 0,
						    &heap));
		EXPECT_EQ(prop(&node, "local_mem_size"), heap.heap_size);
		EXPECT_EQ(prop(&mem, "size_in_bytes"), heap.heap_size);
		ASSERT_EQ(0, amdgpu_query_heap_info(a.dev,
						    AMDGPU_GEM_DOMAIN_GTT, 0,
						    &heap));
		EXPECT_LT(0, heap.heap_size);

		/*
		 * The VM is amdgpu's lower half, inside KFD's GPUVM aperture
		 * of this GPU: amdgpu reserves its first 2 MiB.
		 */
		for (j = 0; j < self->ngpus; j++)
			if (ap[j].gpu_id == self->gpu[i].gpu_id)
				break;
		ASSERT_LT(j, self->ngpus);
		ASSERT_EQ(0, amdgpu_va_range_query(a.dev,
						   amdgpu_gpu_va_range_general,
						   &start, &end));
		EXPECT_EQ(2 * KT_MIB, start);
		EXPECT_LE(ap[j].gpuvm_base, start);
		EXPECT_EQ(ap[j].gpuvm_limit + 1, end);

		/*
		 * One SDMA block with a ring per engine, one compute ring of
		 * the gfx9 block; no GFX ring.
		 */
		ASSERT_EQ(0, amdgpu_query_hw_ip_count(a.dev, AMDGPU_HW_IP_DMA,
						      &count));
		EXPECT_EQ(1, count);
		ASSERT_EQ(0, amdgpu_query_hw_ip_count(a.dev, AMDGPU_HW_IP_GFX,
						      &count));
		EXPECT_EQ(0, count);
		ASSERT_EQ(0, amdgpu_query_hw_ip_count(a.dev,
						      AMDGPU_HW_IP_COMPUTE,
						      &count));
		EXPECT_EQ(1, count);
		ASSERT_EQ(0, amdgpu_query_hw_ip_info(a.dev, AMDGPU_HW_IP_DMA, 0,
						     &ip));
		EXPECT_EQ((1u << prop(&node, "num_sdma_engines")) - 1,
			  ip.available_rings);
		EXPECT_EQ(4, ip.hw_ip_version_major);
		EXPECT_EQ(256, ip.ib_start_alignment);
		EXPECT_EQ(4, ip.ib_size_alignment);
		/* what amdgpu reports for Vega20's compute rings */
		ASSERT_EQ(0, amdgpu_query_hw_ip_info(a.dev,
						     AMDGPU_HW_IP_COMPUTE, 0,
						     &ip));
		EXPECT_EQ(1, ip.available_rings);
		EXPECT_EQ(9, ip.hw_ip_version_major);
		EXPECT_EQ(0, ip.hw_ip_version_minor);
		EXPECT_EQ(32, ip.ib_start_alignment);
		EXPECT_EQ(32, ip.ib_size_alignment);
		ASSERT_EQ(0, amdgpu_query_hw_ip_info(a.dev, AMDGPU_HW_IP_GFX, 0,
						     &ip));
		EXPECT_EQ(0, ip.available_rings);

		/* Firmware versions are the topology's. */
		ASSERT_EQ(0, amdgpu_query_firmware_version(a.dev,
						AMDGPU_INFO_FW_SDMA, 0, 0,
						&ver, &feat));
		EXPECT_EQ(prop(&node, "sdma_fw_version"), ver);
		ASSERT_EQ(0, amdgpu_query_firmware_version(a.dev,
						AMDGPU_INFO_FW_GFX_MEC, 0, 0,
						&ver, &feat));
		EXPECT_EQ(prop(&node, "fw_version"), ver);

		/* Firmware with no simulated counterpart is version 0. */
		EXPECT_EQ(0, amdgpu_query_firmware_version(a.dev,
					AMDGPU_INFO_FW_UVD, 0, 0, &ver, &feat));
		EXPECT_EQ(0, ver);
		/* What is not simulated says so. */
		EXPECT_EQ(-EINVAL, amdgpu_query_sensor_info(a.dev,
					AMDGPU_INFO_SENSOR_GPU_TEMP, 4, &ver));
		EXPECT_EQ(-EINVAL, amdgpu_query_hw_ip_info(a.dev,
					AMDGPU_HW_IP_NUM, 0, &ip));
		EXPECT_EQ(-EINVAL, amdgpu_query_info(a.dev, 0x7f, 4, &ver));
		ad_close(&a);
	}
	close(kfd);
	KT_EXPECT_COUNTERS_BACK();
}

/* GEM_CREATE in VRAM and GTT, CPU access, usage accounting, free. */
TEST_F(libdrm, bo_alloc_cpu_map_free)
{
	static const uint32_t domains[] = {
		AMDGPU_GEM_DOMAIN_VRAM, AMDGPU_GEM_DOMAIN_GTT,
	};
	const uint64_t size = 3 * KT_MIB + KT_PAGE;
	uint64_t before, after;
	struct ad a;
	unsigned int d;
	int i;

	for (i = 0; i < self->ngpus; i++) {
		ASSERT_EQ(0, ad_open(self->gpu[i].render_minor, &a));
		for (d = 0; d < 2; d++) {
			uint32_t q = domains[d] == AMDGPU_GEM_DOMAIN_VRAM ?
				     AMDGPU_INFO_VRAM_USAGE :
				     AMDGPU_INFO_GTT_USAGE;
			struct abo o;

			ASSERT_EQ(0, amdgpu_query_info(a.dev, q, 8, &before));
			ASSERT_EQ(0, abo_alloc(a.dev, size, domains[d], &o));
			ASSERT_EQ(0, amdgpu_query_info(a.dev, q, 8, &after));
			EXPECT_EQ(size, after - before);
			/* New memory is zeroed, and CPU writes stick. */
			EXPECT_TRUE(kt_is_zero(o.cpu, size));
			kt_fill(o.cpu, size, 7 + d);
			EXPECT_TRUE(kt_check(o.cpu, size, 7 + d));
			EXPECT_EQ(0, abo_free(&o));
			ASSERT_EQ(0, amdgpu_query_info(a.dev, q, 8, &after));
			EXPECT_EQ(before, after);
		}
		ad_close(&a);
	}
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * GEM_CREATE with NO_CPU_ACCESS: no CPU mapping on any path, EPERM, as
 * amdgpu_gem_object_mmap() and amdgpu's GEM_MMAP refuse them: the GEM_MMAP
 * ioctl (amdgpu_bo_cpu_map), mmap of its dma-buf, and of the same BO
 * imported again. The same BO without the flag maps on every path.
 */
TEST_F(libdrm, no_cpu_access_bo_is_never_cpu_mapped)
{
	struct amdgpu_bo_import_result imp;
	amdgpu_bo_handle bo;
	uint32_t fd;
	struct ad a;
	void *cpu;
	int pass;

	ASSERT_EQ(0, ad_open(self->gpu[0].render_minor, &a));
	for (pass = 0; pass < 2; pass++) {
		bool no_cpu = !pass;

		ASSERT_EQ(0, abo_new(a.dev, KT_PAGE, AMDGPU_GEM_DOMAIN_VRAM,
				     no_cpu ? AMDGPU_GEM_CREATE_NO_CPU_ACCESS : 0,
				     &bo));
		cpu = NULL;
		EXPECT_EQ(no_cpu ? -EPERM : 0, amdgpu_bo_cpu_map(bo, &cpu));
		if (cpu)
			EXPECT_EQ(0, amdgpu_bo_cpu_unmap(bo));
		ASSERT_EQ(0, amdgpu_bo_export(bo, amdgpu_bo_handle_type_dma_buf_fd,
					      &fd));
		cpu = mmap(NULL, KT_PAGE, PROT_READ, MAP_SHARED, (int)fd, 0);
		if (no_cpu) {
			EXPECT_TRUE(cpu == MAP_FAILED && errno == EPERM)
				TH_LOG("mmap of the dma-buf: %s",
				       cpu == MAP_FAILED ? strerror(errno) :
				       "mapped");
		} else {
			EXPECT_NE(MAP_FAILED, cpu);
		}
		if (cpu != MAP_FAILED)
			munmap(cpu, KT_PAGE);
		/* Imported again on the same GPU: the same BO. */
		ASSERT_EQ(0, amdgpu_bo_import(a.dev,
					      amdgpu_bo_handle_type_dma_buf_fd,
					      fd, &imp));
		cpu = NULL;
		EXPECT_EQ(no_cpu ? -EPERM : 0,
			  amdgpu_bo_cpu_map(imp.buf_handle, &cpu));
		if (cpu)
			EXPECT_EQ(0, amdgpu_bo_cpu_unmap(imp.buf_handle));
		close((int)fd);
		EXPECT_EQ(0, amdgpu_bo_free(imp.buf_handle));
		EXPECT_EQ(0, amdgpu_bo_free(bo));
	}
	ad_close(&a);
	KT_EXPECT_COUNTERS_BACK();
}

FIXTURE(copy) {
	struct kt_env e;
	struct kt_props base;
	char msg[512];
};

FIXTURE_VARIANT(copy) {
	uint64_t size;
};

FIXTURE_VARIANT_ADD(copy, one_page) { .size = KT_PAGE };
FIXTURE_VARIANT_ADD(copy, odd_pages) { .size = 37 * KT_PAGE };
FIXTURE_VARIANT_ADD(copy, one_packet) { .size = 2 * KT_MIB };
FIXTURE_VARIANT_ADD(copy, packet_and_a_page) { .size = 2 * KT_MIB + KT_PAGE };
FIXTURE_VARIANT_ADD(copy, many_packets) { .size = 17 * KT_MIB };

FIXTURE_SETUP(copy)
{
	ASSERT_EQ(0, kt_counters(&self->base, self->msg, sizeof(self->msg)));
	ASSERT_EQ(0, kt_env_open(&self->e, true));
}

FIXTURE_TEARDOWN(copy)
{
	kt_env_close(&self->e);
}

/*
 * The CRIU plugin's copy path: a KFD VRAM BO, exported as a dma-buf and
 * imported into libdrm on a render-node file of its own, copied by SDMA to
 * a userptr BO and back, on every GPU.
 */
TEST_F_TIMEOUT(copy, kfd_vram_userptr, 600)
{
	const uint64_t size = variant->size;
	uint64_t seq;
	int g;

	for (g = 0; g < self->e.ngpus; g++) {
		struct amdgpu_bo_import_result imp;
		amdgpu_bo_handle user_bo, bos[3];
		struct abo vram, user, ib;
		uint64_t handle, offset;
		uint32_t ndw;
		void *kfd_cpu, *mem, *imp_cpu;
		int dmabuf;
		struct ad a;

		/* The KFD side: a VRAM BO with a known pattern. */
		ASSERT_EQ(0, kt_alloc(self->e.kfd, self->e.gpu[g].gpu_id,
				      KT_VA(1), size,
				      KT_VRAM | KT_WRITABLE, &handle, &offset));
		kfd_cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			       self->e.render[g], (off_t)offset);
		ASSERT_NE(MAP_FAILED, kfd_cpu);
		kt_fill(kfd_cpu, size, 100 + g);
		ASSERT_EQ(0, kt_export(self->e.kfd, handle, O_RDWR | O_CLOEXEC,
				       &dmabuf));

		/* libdrm on a fresh file of the same GPU. */
		ASSERT_EQ(0, ad_open(self->e.gpu[g].render_minor, &a));
		ASSERT_EQ(0, amdgpu_bo_import(a.dev,
					      amdgpu_bo_handle_type_dma_buf_fd,
					      dmabuf, &imp));
		EXPECT_EQ(size, imp.alloc_size);
		ASSERT_EQ(0, abo_map(a.dev, imp.buf_handle, size, &vram));
		/* The import is the KFD BO itself: same memory for the CPU. */
		ASSERT_EQ(0, amdgpu_bo_cpu_map(imp.buf_handle, &imp_cpu));
		EXPECT_TRUE(kt_check(imp_cpu, size, 100 + g));
		EXPECT_EQ(0, amdgpu_bo_cpu_unmap(imp.buf_handle));

		mem = kt_anon(size);
		ASSERT_NE(NULL, mem);
		memset(mem, 0x5a, size);
		ASSERT_EQ(0, amdgpu_create_bo_from_user_mem(a.dev, mem, size,
							    &user_bo));
		ASSERT_EQ(0, abo_map(a.dev, user_bo, size, &user));
		ASSERT_EQ(0, abo_alloc(a.dev, AD_IB_SIZE, AMDGPU_GEM_DOMAIN_GTT,
				       &ib));
		bos[0] = vram.bo;
		bos[1] = user.bo;
		bos[2] = ib.bo;

		/* VRAM -> user memory */
		ndw = kg_sdma_pad(ib.cpu,
				  ib_copy(ib.cpu, user.va, vram.va, size));
		ASSERT_EQ(0, submit(&a, &ib, ndw, 0, bos, 3, &seq));
		EXPECT_EQ(-1, kt_first_diff(kfd_cpu, mem, size));
		/* the first fence of the context on that ring */
		EXPECT_EQ(1, seq);
		EXPECT_EQ(seq, user_fence(&ib));

		/* user memory -> VRAM, on the other ring */
		kt_fill(mem, size, 200 + g);
		ndw = kg_sdma_pad(ib.cpu,
				  ib_copy(ib.cpu, vram.va, user.va, size));
		ASSERT_EQ(0, submit(&a, &ib, ndw, 1, bos, 3, &seq));
		EXPECT_TRUE(kt_check(kfd_cpu, size, 200 + g));
		EXPECT_EQ(1, seq);
		EXPECT_EQ(seq, user_fence(&ib));

		EXPECT_EQ(0, abo_free(&ib));
		EXPECT_EQ(0, abo_free(&user));
		EXPECT_EQ(0, abo_free(&vram));
		ad_close(&a);
		close(dmabuf);
		munmap(mem, size);
		munmap(kfd_cpu, size);
		EXPECT_EQ(0, kt_free(self->e.kfd, handle));
	}
	kt_env_close(&self->e);
	KT_EXPECT_COUNTERS_BACK();
}

FIXTURE(vm) {
	int ngpus;
	struct kt_gpu gpu[KT_MAX_GPUS];
	struct ad a;
	struct abo ib, data;	/* an IB BO and a 4-page GTT BO */
	struct kt_props base;
	char msg[512];
};

FIXTURE_SETUP(vm)
{
	self->a.fd = -1;
	ASSERT_EQ(0, kt_counters(&self->base, self->msg, sizeof(self->msg)));
	self->ngpus = kt_gpus(self->gpu, KT_MAX_GPUS);
	ASSERT_LT(0, self->ngpus);
	ASSERT_EQ(0, ad_open(self->gpu[0].render_minor, &self->a));
	ASSERT_EQ(0, abo_alloc(self->a.dev, AD_IB_SIZE, AMDGPU_GEM_DOMAIN_GTT,
			       &self->ib));
	ASSERT_EQ(0, abo_alloc(self->a.dev, 4 * KT_PAGE, AMDGPU_GEM_DOMAIN_VRAM,
			       &self->data));
}

FIXTURE_TEARDOWN(vm)
{
	ad_close(&self->a);
}

/* Free the fixture's BOs (their CPU mappings hold the file) and close. */
static void vm_close(struct ad *a, struct abo *ib, struct abo *data)
{
	if (a->fd < 0)
		return;
	abo_free(ib);
	abo_free(data);
	ad_close(a);
}

/* Run an IB of @n dwords on ring 0; 0 or the submission's error. */
static int vm_run(struct ad *a, struct abo *ib, const uint32_t *dw,
		  uint32_t n, uint64_t *seq)
{
	memcpy(ib->cpu, dw, n * 4);
	return submit(a, ib, n, 0, NULL, 0, seq);
}

/* A good copy inside the data BO: page 0 -> page 1. */
static int vm_good_copy(struct ad *a, struct abo *ib, struct abo *data,
			uint32_t seed, uint64_t *seq)
{
	uint32_t dw[16];
	uint32_t n;

	kt_fill(data->cpu, KT_PAGE, seed);
	memset((char *)data->cpu + KT_PAGE, 0, KT_PAGE);
	n = kg_sdma_pad(dw, ib_copy(dw, data->va + KT_PAGE, data->va, KT_PAGE));
	if (vm_run(a, ib, dw, n, seq))
		return -1;
	return kt_check((char *)data->cpu + KT_PAGE, KT_PAGE, seed) ? 0 : -1;
}

/*
 * Bad IBs fail their job: its fence signals -EINVAL (the sequence number
 * is used), and the next good submission works.
 */
TEST_F(vm, bad_ibs_fail_and_device_keeps_working)
{
	struct {
		const char *what;
		uint32_t dw[8];
		uint32_t n;
		int err;
	} bad[] = {
		{ "unknown opcode", { 0x000000ff }, 8, -EINVAL },
		{ "unknown copy sub-opcode", { KFDSIM_SDMA_HEADER(1, 3) }, 8,
		  -EINVAL },
		{ "truncated copy", { KFDSIM_SDMA_HEADER(1, 0), 15 }, 2,
		  -EINVAL },
		{ "NOP past the end", { KFDSIM_SDMA_HEADER(0, 0) | 20 << 16 },
		  4, -EINVAL },
	};
	uint64_t seq, good_seq;
	unsigned int i;

	ASSERT_EQ(0, vm_good_copy(&self->a, &self->ib, &self->data, 1,
				  &good_seq));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(bad[i].err, vm_run(&self->a, &self->ib, bad[i].dw,
					     bad[i].n, &seq))
			TH_LOG("%s", bad[i].what);
		EXPECT_EQ(good_seq + 1, seq) TH_LOG("%s", bad[i].what);
		ASSERT_EQ(0, vm_good_copy(&self->a, &self->ib, &self->data,
					  10 + i, &seq))
			TH_LOG("after %s", bad[i].what);
		EXPECT_EQ(good_seq + 2, seq);
		good_seq = seq;
	}
	vm_close(&self->a, &self->ib, &self->data);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * GPU page faults do not fail a submission (gfx9, retry faults off): a
 * read of an unmapped page gives zeros, a write to one is dropped, and the
 * submission completes with the next sequence number. An IB that is not
 * mapped reads as NOPs.
 */
TEST_F(vm, faults_read_zeros_and_complete)
{
	const uint64_t unmapped = 1ULL << 46;
	unsigned char *d = self->data.cpu;
	uint64_t seq, good_seq;
	uint32_t dw[8], n;

	ASSERT_EQ(0, vm_good_copy(&self->a, &self->ib, &self->data, 1,
				  &good_seq));
	/* source not mapped: 16 zeros land in the data BO */
	memset(d, 0x33, 64);
	n = kg_sdma_pad(dw, ib_copy(dw, self->data.va, unmapped, 16));
	EXPECT_EQ(0, vm_run(&self->a, &self->ib, dw, n, &seq));
	EXPECT_EQ(good_seq + 1, seq);
	EXPECT_TRUE(kt_is_zero(d, 16));
	EXPECT_EQ(0x33, d[16]);
	/* destination not mapped: nothing is written anywhere */
	n = kg_sdma_pad(dw, ib_copy(dw, unmapped, self->data.va, 16));
	EXPECT_EQ(0, vm_run(&self->a, &self->ib, dw, n, &seq));
	EXPECT_EQ(good_seq + 2, seq);
	EXPECT_EQ(seq, user_fence(&self->ib));
	/* an IB outside the VM runs as NOPs and completes */
	EXPECT_EQ(0, submit_at(&self->a, &self->ib, unmapped, 8, &seq));
	EXPECT_EQ(good_seq + 3, seq);
	ASSERT_EQ(0, vm_good_copy(&self->a, &self->ib, &self->data, 2, &seq));
	EXPECT_EQ(good_seq + 4, seq);
	vm_close(&self->a, &self->ib, &self->data);
	KT_EXPECT_COUNTERS_BACK();
}

/* Requests CS and the fence calls refuse. */
TEST_F(vm, bad_submissions)
{
	struct amdgpu_cs_ib_info info = { .ib_mc_address = self->ib.va };
	struct amdgpu_cs_request req = {
		.ip_type = AMDGPU_HW_IP_DMA,
		.number_of_ibs = 1,
		.ibs = &info,
	};
	struct amdgpu_cs_fence fence = {
		.context = self->a.ctx,
		.ip_type = AMDGPU_HW_IP_DMA,
	};
	uint32_t *ib = self->ib.cpu, expired;
	uint64_t seq;

	ASSERT_EQ(0, vm_good_copy(&self->a, &self->ib, &self->data, 1, &seq));
	memset(ib, 0, 8 * sizeof(*ib));
	info.size = 8;

	/* No GFX engine, no second compute ring, no third SDMA ring. */
	req.ip_type = AMDGPU_HW_IP_GFX;
	EXPECT_EQ(-EINVAL, amdgpu_cs_submit(self->a.ctx, 0, &req, 1));
	req.ip_type = AMDGPU_HW_IP_COMPUTE;
	req.ring = 1;
	EXPECT_EQ(-EINVAL, amdgpu_cs_submit(self->a.ctx, 0, &req, 1));
	req.ring = 0;
	req.ip_instance = 1;
	EXPECT_EQ(-EINVAL, amdgpu_cs_submit(self->a.ctx, 0, &req, 1));
	req.ip_instance = 0;
	req.ip_type = AMDGPU_HW_IP_DMA;
	req.ring = 2;
	EXPECT_EQ(-EINVAL, amdgpu_cs_submit(self->a.ctx, 0, &req, 1));
	req.ring = 0;
	/* An IB larger than the SDMA IB packet's 20-bit dword count. */
	info.size = 0x100000;
	EXPECT_EQ(-EINVAL, amdgpu_cs_submit(self->a.ctx, 0, &req, 1));
	info.size = 8;

	/* A fence that was never handed out; the last one has signalled. */
	fence.fence = seq + 1;
	EXPECT_EQ(-EINVAL, amdgpu_cs_query_fence_status(&fence, 0, 0,
							 &expired));
	fence.fence = seq;
	EXPECT_EQ(0, amdgpu_cs_query_fence_status(&fence, 0, 0, &expired));
	EXPECT_EQ(1, expired);
	EXPECT_EQ(0, amdgpu_cs_wait_fences(&fence, 1, true, 0, &expired,
					   NULL));
	EXPECT_EQ(1, expired);

	/* Still working. */
	EXPECT_EQ(0, amdgpu_cs_submit(self->a.ctx, 0, &req, 1));
	EXPECT_EQ(seq + 1, req.seq_no);
	vm_close(&self->a, &self->ib, &self->data);
	KT_EXPECT_COUNTERS_BACK();
}

/* A read-only mapping faults on write; CLEAR and REPLACE split mappings. */
TEST_F(vm, va_permissions_clear_replace)
{
	struct amdgpu_bo_alloc_request req = {
		.alloc_size = 4 * KT_PAGE,
		.preferred_heap = AMDGPU_GEM_DOMAIN_GTT,
	};
	const uint64_t ro = 0x7000000000ULL, rw = 0x7000100000ULL;
	amdgpu_bo_handle other;
	void *other_cpu;
	uint32_t dw[16], n;
	uint64_t seq;
	char *d = self->data.cpu;

	/* The data BO again, read-only at @ro */
	ASSERT_EQ(0, amdgpu_bo_va_op_raw(self->a.dev, self->data.bo, 0,
					 4 * KT_PAGE, ro,
					 AMDGPU_VM_PAGE_READABLE,
					 AMDGPU_VA_OP_MAP));
	/* a write through it faults: dropped, the submission completes */
	memset(d, 0x44, KT_PAGE);
	memset(d + KT_PAGE, 0x55, KT_PAGE);
	n = kg_sdma_pad(dw, ib_copy(dw, ro, self->data.va + KT_PAGE, KT_PAGE));
	EXPECT_EQ(0, vm_run(&self->a, &self->ib, dw, n, &seq));
	EXPECT_EQ(0x44, d[0]);
	EXPECT_EQ(0x44, d[KT_PAGE - 1]);
	n = kg_sdma_pad(dw, ib_copy(dw, self->data.va + KT_PAGE, ro, KT_PAGE));
	EXPECT_EQ(0, vm_run(&self->a, &self->ib, dw, n, &seq));
	/* Overlapping an existing mapping is refused. */
	EXPECT_EQ(-EINVAL, amdgpu_bo_va_op_raw(self->a.dev, self->data.bo, 0,
					       KT_PAGE, ro + KT_PAGE,
					       AMDGPU_VM_PAGE_READABLE,
					       AMDGPU_VA_OP_MAP));

	/* The data BO read-write at @rw, then pages 1-2 cleared. */
	ASSERT_EQ(0, amdgpu_bo_va_op_raw(self->a.dev, self->data.bo, 0,
					 4 * KT_PAGE, rw,
					 AMDGPU_VM_PAGE_READABLE |
					 AMDGPU_VM_PAGE_WRITEABLE,
					 AMDGPU_VA_OP_MAP));
	ASSERT_EQ(0, amdgpu_bo_va_op_raw(self->a.dev, NULL, 0, 2 * KT_PAGE,
					 rw + KT_PAGE, 0, AMDGPU_VA_OP_CLEAR));
	memset(d, 0x11, 4 * KT_PAGE);
	d[0] = 0x66;
	n = kg_sdma_pad(dw, ib_copy(dw, rw + KT_PAGE, self->data.va, 4));
	EXPECT_EQ(0, vm_run(&self->a, &self->ib, dw, n, &seq));
	EXPECT_EQ(0x11, d[KT_PAGE]) TH_LOG("a cleared page was written");
	d[0] = 0x11;
	n = kg_sdma_pad(dw, ib_copy(dw, rw + 3 * KT_PAGE, rw, 4));
	EXPECT_EQ(0, vm_run(&self->a, &self->ib, dw, n, &seq));

	/* Page 2 replaced by another BO's first page. */
	ASSERT_EQ(0, amdgpu_bo_alloc(self->a.dev, &req, &other));
	ASSERT_EQ(0, amdgpu_bo_cpu_map(other, &other_cpu));
	memset(other_cpu, 0x22, KT_PAGE);
	ASSERT_EQ(0, amdgpu_bo_va_op_raw(self->a.dev, other, 0, KT_PAGE,
					 rw + 2 * KT_PAGE,
					 AMDGPU_VM_PAGE_READABLE |
					 AMDGPU_VM_PAGE_WRITEABLE,
					 AMDGPU_VA_OP_REPLACE));
	n = kg_sdma_pad(dw, ib_copy(dw, rw, rw + 2 * KT_PAGE, 8));
	EXPECT_EQ(0, vm_run(&self->a, &self->ib, dw, n, &seq));
	EXPECT_EQ(0x22, d[0]);
	EXPECT_EQ(0x22, d[7]);
	EXPECT_EQ(0x11, d[8]);
	/* UNMAP names a mapping by BO and start. */
	EXPECT_EQ(-ENOENT, amdgpu_bo_va_op_raw(self->a.dev, self->data.bo, 0,
					       KT_PAGE, rw + 2 * KT_PAGE, 0,
					       AMDGPU_VA_OP_UNMAP));
	EXPECT_EQ(0, amdgpu_bo_va_op_raw(self->a.dev, other, 0, KT_PAGE,
					 rw + 2 * KT_PAGE, 0,
					 AMDGPU_VA_OP_UNMAP));
	EXPECT_EQ(0, amdgpu_bo_free(other));
	/* The rest goes with the file: mappings hold their BOs. */
	vm_close(&self->a, &self->ib, &self->data);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * The engine copies and fills runs of mapped pages at once; with retry
 * faults off a page in the middle that is not mapped costs that page only:
 * a copy whose source runs through it writes zeros for exactly its bytes,
 * one whose destination runs through it drops exactly those, a fill skips
 * it, and the pages after it are still copied or filled.
 */
TEST_F(vm, copy_and_fill_across_unmapped_page)
{
	struct amdgpu_bo_alloc_request req = {
		.alloc_size = 4 * KT_PAGE,
		.preferred_heap = AMDGPU_GEM_DOMAIN_GTT,
	};
	const uint64_t rw = 0x7000400000ULL, ov = 0x7000600000ULL, so = 100;
	const uint32_t fill = 0xf111f111;
	unsigned char *d = self->data.cpu, *o, *ref;
	amdgpu_bo_handle other;
	uint32_t dw[16], n, i;
	void *other_cpu;
	uint64_t seq;

	ref = malloc(4 * KT_PAGE);
	ASSERT_NE(NULL, ref);
	/* The data BO at @rw with page 1 cleared; another BO at @ov. */
	ASSERT_EQ(0, amdgpu_bo_va_op_raw(self->a.dev, self->data.bo, 0,
					 4 * KT_PAGE, rw,
					 AMDGPU_VM_PAGE_READABLE |
					 AMDGPU_VM_PAGE_WRITEABLE,
					 AMDGPU_VA_OP_MAP));
	ASSERT_EQ(0, amdgpu_bo_va_op_raw(self->a.dev, NULL, 0, KT_PAGE,
					 rw + KT_PAGE, 0, AMDGPU_VA_OP_CLEAR));
	ASSERT_EQ(0, amdgpu_bo_alloc(self->a.dev, &req, &other));
	ASSERT_EQ(0, amdgpu_bo_cpu_map(other, &other_cpu));
	o = other_cpu;
	ASSERT_EQ(0, amdgpu_bo_va_op_raw(self->a.dev, other, 0, 4 * KT_PAGE,
					 ov, AMDGPU_VM_PAGE_READABLE |
					 AMDGPU_VM_PAGE_WRITEABLE,
					 AMDGPU_VA_OP_MAP));

	/* Source through the hole: zeros for page 1 only. */
	kt_fill(d, 4 * KT_PAGE, 31);
	memset(o, 0xee, 4 * KT_PAGE);
	memset(ref, 0xee, 4 * KT_PAGE);
	memcpy(ref, d + so, KT_PAGE - so);
	memset(ref + KT_PAGE - so, 0, KT_PAGE);
	memcpy(ref + 2 * KT_PAGE - so, d + 2 * KT_PAGE, KT_PAGE);
	n = kg_sdma_pad(dw, ib_copy(dw, ov, rw + so, 3 * KT_PAGE - so));
	EXPECT_EQ(0, vm_run(&self->a, &self->ib, dw, n, &seq));
	EXPECT_EQ(-1, kt_first_diff(ref, o, 4 * KT_PAGE));

	/* Destination through the hole: page 1 keeps its bytes. */
	kt_fill(o, 4 * KT_PAGE, 32);
	memcpy(ref, d, 4 * KT_PAGE);
	memcpy(ref + so, o, KT_PAGE - so);
	memcpy(ref + 2 * KT_PAGE, o + 2 * KT_PAGE - so, KT_PAGE);
	n = kg_sdma_pad(dw, ib_copy(dw, rw + so, ov, 3 * KT_PAGE - so));
	EXPECT_EQ(0, vm_run(&self->a, &self->ib, dw, n, &seq));
	EXPECT_EQ(-1, kt_first_diff(ref, d, 4 * KT_PAGE));

	/* A fill through the hole: pages 0 and 2 from byte 8, not page 1. */
	memcpy(ref, d, 4 * KT_PAGE);
	for (i = 2; i < 3 * KT_PAGE / 4; i++)
		if (i >= KT_PAGE / 4 * 2 || i < KT_PAGE / 4)
			memcpy(ref + 4 * i, &fill, 4);
	n = kg_sdma_pad(dw, kg_sdma_fill_packet(dw, rw + 8, fill,
						3 * KT_PAGE - 8 - 1));
	EXPECT_EQ(0, vm_run(&self->a, &self->ib, dw, n, &seq));
	EXPECT_EQ(-1, kt_first_diff(ref, d, 4 * KT_PAGE));

	EXPECT_EQ(0, amdgpu_bo_va_op_raw(self->a.dev, other, 0, 4 * KT_PAGE,
					 ov, 0, AMDGPU_VA_OP_UNMAP));
	EXPECT_EQ(0, amdgpu_bo_cpu_unmap(other));
	EXPECT_EQ(0, amdgpu_bo_free(other));
	free(ref);
	vm_close(&self->a, &self->ib, &self->data);
	KT_EXPECT_COUNTERS_BACK();
}

/* Raw ioctls with arguments the driver must refuse. */
TEST_F(vm, bad_arguments)
{
	union drm_amdgpu_gem_create gc;
	struct drm_amdgpu_gem_userptr up;
	struct drm_amdgpu_gem_va va;
	struct drm_amdgpu_info info;
	struct drm_amdgpu_gem_metadata md;
	union drm_amdgpu_ctx ctx;
	uint32_t handle, val;
	void *mem;
	int fd = self->a.fd, dmabuf;
	amdgpu_bo_handle ubo;

	memset(&gc, 0, sizeof(gc));
	gc.in.bo_size = KT_PAGE;
	gc.in.domains = AMDGPU_GEM_DOMAIN_GDS;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_CREATE, &gc));
	memset(&gc, 0, sizeof(gc));
	gc.in.bo_size = KT_PAGE;
	gc.in.domains = AMDGPU_GEM_DOMAIN_VRAM;
	gc.in.domain_flags = 1ULL << 40;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_CREATE, &gc));
	memset(&gc, 0, sizeof(gc));
	gc.in.domains = AMDGPU_GEM_DOMAIN_VRAM;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_CREATE, &gc));

	/* userptr: read-only is not simulated, writable needs REGISTER */
	mem = kt_anon(KT_PAGE);
	ASSERT_NE(NULL, mem);
	memset(&up, 0, sizeof(up));
	up.addr = (uintptr_t)mem;
	up.size = KT_PAGE;
	up.flags = AMDGPU_GEM_USERPTR_READONLY | AMDGPU_GEM_USERPTR_REGISTER;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_USERPTR, &up));
	up.flags = AMDGPU_GEM_USERPTR_VALIDATE;
	EXPECT_EQ(-EACCES, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_USERPTR, &up));
	up.flags = AMDGPU_GEM_USERPTR_REGISTER;
	up.addr += 8;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_USERPTR, &up));
	/* User memory is not shared as a dma-buf, nor mapped again. */
	ASSERT_EQ(0, amdgpu_create_bo_from_user_mem(self->a.dev, mem, KT_PAGE,
						    &ubo));
	EXPECT_EQ(-EPERM, amdgpu_bo_export(ubo, amdgpu_bo_handle_type_dma_buf_fd,
					   (uint32_t *)&dmabuf));
	EXPECT_EQ(-EPERM, amdgpu_bo_cpu_map(ubo, &mem));
	EXPECT_EQ(0, amdgpu_bo_free(ubo));

	/* GEM_VA: PRT, below the VM, padding, unknown operation */
	ASSERT_EQ(0, amdgpu_bo_export(self->data.bo, amdgpu_bo_handle_type_kms,
				      &handle));
	memset(&va, 0, sizeof(va));
	va.handle = handle;
	va.operation = AMDGPU_VA_OP_MAP;
	va.flags = AMDGPU_VM_PAGE_PRT;
	va.va_address = 0x7100000000ULL;
	va.map_size = KT_PAGE;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va));
	va.flags = AMDGPU_VM_PAGE_READABLE;
	va.va_address = 0;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va));
	va.va_address = 1ULL << 47;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va));
	va.va_address = 1ULL << 20;	/* amdgpu reserves the first 2 MiB */
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va));
	va.va_address = 0x7100000000ULL;
	va.operation = 9;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va));
	va.operation = AMDGPU_VA_OP_MAP;
	va.offset_in_bo = 4 * KT_PAGE;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va));

	/* INFO without a buffer; a context that does not exist */
	memset(&info, 0, sizeof(info));
	info.query = AMDGPU_INFO_ACCEL_WORKING;
	info.return_pointer = (uintptr_t)&val;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_INFO, &info));
	memset(&ctx, 0, sizeof(ctx));
	ctx.in.op = AMDGPU_CTX_OP_FREE_CTX;
	ctx.in.ctx_id = 1000;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_CTX, &ctx));
	ctx.in.op = 99;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_CTX, &ctx));
	/* ioctls outside the subset */
	memset(&md, 0, sizeof(md));
	md.handle = handle;
	md.op = AMDGPU_GEM_METADATA_OP_GET_METADATA;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_METADATA, &md));
	munmap((void *)(uintptr_t)up.addr - 8, KT_PAGE);
	vm_close(&self->a, &self->ib, &self->data);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * A file KFD has bound is the process's VM and stays an amdgpu file:
 * libhsakmt initialises libdrm on it, and GEM_VA and CS work there (AMD's
 * CRIU plugin copies through the fd it handed to RESTORE). A file whose
 * amdgpu VM has had mappings cannot be bound.
 */
TEST_F(libdrm, kfd_bound_file)
{
	const uint64_t va = 0x7200000000ULL;
	struct abo ib, data;
	uint64_t seq;
	struct kt_env e;
	struct ad a;

	ASSERT_EQ(0, kt_env_open(&e, true));
	memset(&a, 0, sizeof(a));
	a.fd = -1;
	ASSERT_EQ(0, amdgpu_device_initialize(e.render[0], &a.major,
					      &a.minor, &a.dev));
	ASSERT_EQ(0, amdgpu_cs_ctx_create(a.dev, &a.ctx));
	ASSERT_EQ(0, abo_alloc(a.dev, AD_IB_SIZE, AMDGPU_GEM_DOMAIN_GTT, &ib));
	ASSERT_EQ(0, abo_alloc(a.dev, 4 * KT_PAGE, AMDGPU_GEM_DOMAIN_GTT,
			       &data));
	EXPECT_EQ(0, vm_good_copy(&a, &ib, &data, 9, &seq));
	EXPECT_EQ(1, seq);
	EXPECT_EQ(0, abo_free(&data));
	EXPECT_EQ(0, abo_free(&ib));
	EXPECT_EQ(0, amdgpu_cs_ctx_free(a.ctx));
	amdgpu_device_deinitialize(a.dev);
	kt_env_close(&e);

	ASSERT_EQ(0, ad_open(self->gpu[0].render_minor, &a));
	ASSERT_EQ(0, abo_alloc(a.dev, KT_PAGE, AMDGPU_GEM_DOMAIN_GTT, &data));
	ASSERT_EQ(0, amdgpu_bo_va_op(data.bo, 0, KT_PAGE, va, 0,
				     AMDGPU_VA_OP_MAP));
	ASSERT_EQ(0, kt_env_open(&e, false));
	EXPECT_EQ(-EINVAL, kt_acquire_vm(e.kfd, a.fd, e.gpu[0].gpu_id));
	kt_env_close(&e);
	EXPECT_EQ(0, amdgpu_bo_va_op(data.bo, 0, KT_PAGE, va, 0,
				     AMDGPU_VA_OP_UNMAP));
	EXPECT_EQ(0, abo_free(&data));
	ad_close(&a);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * Arguments amdgpu (Linux 6.1) accepts, which the render node once
 * refused: padding and flags it does not look at, garbage context
 * priorities, any BO list entry size, destroying a missing BO list,
 * firmware it reports as version 0, empty and unaligned IBs.
 */
TEST_F(vm, upstream_argument_rules)
{
	union drm_amdgpu_gem_wait_idle wi;
	struct drm_gem_close gem_close = { 0 };
	union drm_amdgpu_gem_create gc;
	union drm_amdgpu_gem_mmap gm;
	union drm_amdgpu_bo_list bl;
	struct drm_amdgpu_gem_va va;
	struct drm_amdgpu_info info;
	struct drm_amdgpu_info_firmware fw;
	union drm_amdgpu_ctx ctx;
	struct drm_amdgpu_bo_list_entry entry;
	uint32_t handle, regs[2];
	uint32_t *ib = self->ib.cpu;
	uint64_t seq, seq2;
	int fd = self->a.fd;

	ASSERT_EQ(0, amdgpu_bo_export(self->data.bo, amdgpu_bo_handle_type_kms,
				      &handle));
	/* GEM_CREATE: no domain is system memory; alignment is a hint */
	memset(&gc, 0, sizeof(gc));
	gc.in.bo_size = KT_PAGE;
	gc.in.alignment = 3 * KT_PAGE;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_CREATE, &gc));
	/* GEM_MMAP and GEM_WAIT_IDLE: padding and flags are not looked at */
	memset(&gm, 0, sizeof(gm));
	gm.in.handle = gc.out.handle;
	gm.in._pad = 7;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_MMAP, &gm));
	EXPECT_NE(0, gm.out.addr_ptr);
	memset(&wi, 0, sizeof(wi));
	wi.in.handle = gc.out.handle;
	wi.in.flags = 0xff;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE, &wi));
	EXPECT_EQ(0, wi.out.status);	/* idle */
	EXPECT_EQ(0, wi.out.domain);
	/* GEM_VA: padding ignored, any MTYPE, mapped at 2 MiB */
	memset(&va, 0, sizeof(va));
	va.handle = gc.out.handle;
	va.operation = AMDGPU_VA_OP_MAP;
	va.flags = AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_MTYPE_MASK;
	va.va_address = 2ULL << 20;
	va.map_size = KT_PAGE;
	va._pad = 1;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va));
	va.operation = AMDGPU_VA_OP_UNMAP;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va));

	/* CTX: a garbage priority is normal, ALLOC ignores ctx_id */
	memset(&ctx, 0, sizeof(ctx));
	ctx.in.op = AMDGPU_CTX_OP_ALLOC_CTX;
	ctx.in.ctx_id = 77;
	ctx.in.priority = 5;
	ASSERT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_CTX, &ctx));
	ctx.in.ctx_id = ctx.out.alloc.ctx_id;
	ctx.in.op = AMDGPU_CTX_OP_FREE_CTX;
	ctx.in.priority = 0;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_CTX, &ctx));

	/* BO_LIST: 4-byte entries, CREATE ignores the handle, missing DESTROY */
	entry.bo_handle = handle;
	entry.bo_priority = 0;
	memset(&bl, 0, sizeof(bl));
	bl.in.operation = AMDGPU_BO_LIST_OP_CREATE;
	bl.in.list_handle = 1234;
	bl.in.bo_number = 1;
	bl.in.bo_info_size = sizeof(entry.bo_handle);
	bl.in.bo_info_ptr = (uintptr_t)&entry;
	ASSERT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_BO_LIST, &bl));
	bl.in.list_handle = bl.out.list_handle;
	bl.in.operation = AMDGPU_BO_LIST_OP_DESTROY;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_BO_LIST, &bl));
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_BO_LIST, &bl));

	/* INFO: unused argument bytes, firmware types, MMR flags */
	memset(&info, 0, sizeof(info));
	info.return_pointer = (uintptr_t)&fw;
	info.return_size = sizeof(fw);
	info.query = AMDGPU_INFO_FW_VERSION;
	info.query_fw.fw_type = AMDGPU_INFO_FW_GFX_ME;
	info.query_fw.index = 0;
	info.query_fw._pad = 9;
	fw.ver = 1;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_INFO, &info));
	EXPECT_EQ(0, fw.ver);
	info.query_fw.fw_type = AMDGPU_INFO_FW_GFX_MEC;
	info.query_fw.index = 1;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_INFO, &info));
	EXPECT_NE(0, fw.ver);
	info.query_fw.index = 2;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_INFO, &info));
	info.query_fw.fw_type = 9;	/* a number amdgpu never used */
	info.query_fw.index = 0;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_INFO, &info));
	memset(&info, 0, sizeof(info));
	info.query = AMDGPU_INFO_ACCEL_WORKING;
	info.return_pointer = (uintptr_t)regs;
	info.return_size = sizeof(regs[0]);
	info.query_hw_ip.type = 0xdead;	/* not looked at */
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_INFO, &info));
	EXPECT_EQ(1, regs[0]);
	/* GB_ADDR_CONFIG: gfx_v9_0's Vega 20 value, as GET_TILE_CONFIG says */
	regs[0] = 0;
	EXPECT_EQ(0, amdgpu_read_mm_registers(self->a.dev, 0x263e, 1,
					      0xffffffff, 1, regs));
	EXPECT_EQ(0x22014042u, regs[0]);

	/* CS: empty IB, IB base rounded down to 32 bytes, CS flags */
	ASSERT_EQ(0, vm_good_copy(&self->a, &self->ib, &self->data, 1, &seq));
	EXPECT_EQ(0, submit_at(&self->a, &self->ib, self->ib.va, 0, &seq2));
	EXPECT_EQ(seq + 1, seq2);
	memset(ib, 0, 64);
	kg_sdma_fence_packet(ib, self->data.va, 0xfeedf00d);
	EXPECT_EQ(0, submit_at(&self->a, &self->ib, self->ib.va + 20, 8,
			       &seq2));
	EXPECT_EQ(0xfeedf00d, *(uint32_t *)self->data.cpu);
	EXPECT_EQ(seq + 2, seq2);

	gem_close.handle = gc.out.handle;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &gem_close));
	vm_close(&self->a, &self->ib, &self->data);
	KT_EXPECT_COUNTERS_BACK();
}

/* CS chunks for a raw DRM_IOCTL_AMDGPU_CS: an IB @ci, then a fence @f. */
static void ib_fence_chunks(struct drm_amdgpu_cs_chunk chunks[2],
			    uint64_t ptrs[2], struct drm_amdgpu_cs_chunk_ib *ci,
			    struct drm_amdgpu_cs_chunk_fence *f)
{
	chunks[0].chunk_id = AMDGPU_CHUNK_ID_IB;
	chunks[0].length_dw = sizeof(*ci) / 4;
	chunks[0].chunk_data = (uintptr_t)ci;
	chunks[1].chunk_id = AMDGPU_CHUNK_ID_FENCE;
	chunks[1].length_dw = sizeof(*f) / 4;
	chunks[1].chunk_data = (uintptr_t)f;
	ptrs[0] = (uintptr_t)&chunks[0];
	ptrs[1] = (uintptr_t)&chunks[1];
}

/*
 * CS with flags the kernel does not look at, and user-fence errors as
 * amdgpu_cs_p1_user_fence() reports them (all -EINVAL).
 */
TEST_F(vm, cs_flags_and_user_fence_errors)
{
	struct drm_amdgpu_cs_chunk_fence f = { 0 };
	struct drm_amdgpu_cs_chunk_ib ci = { 0 };
	struct drm_amdgpu_cs_chunk chunks[2];
	uint64_t ptrs[2];
	union drm_amdgpu_cs cs;
	uint32_t ubo_handle, ib_handle;
	amdgpu_bo_handle ubo;
	void *mem;
	int fd = self->a.fd;

	ASSERT_EQ(0, amdgpu_bo_export(self->ib.bo, amdgpu_bo_handle_type_kms,
				      &ib_handle));
	memset(self->ib.cpu, 0, 32);
	ci.ip_type = AMDGPU_HW_IP_DMA;
	ci.va_start = self->ib.va;
	ci.ib_bytes = 32;
	ci.flags = 0xffffffff & ~AMDGPU_IB_FLAG_PREAMBLE;
	ci._pad = 0xabcd;
	ib_fence_chunks(chunks, ptrs, &ci, &f);

	/* the fixture's context is the file's first: id 1, as in amdgpu */
	memset(&cs, 0, sizeof(cs));
	cs.in.ctx_id = 1;
	cs.in.num_chunks = 1;
	cs.in.flags = 0x5a;
	cs.in.chunks = (uintptr_t)ptrs;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_CS, &cs));

	/* user fence: a handle that does not exist, or user memory */
	memset(&cs, 0, sizeof(cs));
	cs.in.ctx_id = 1;
	cs.in.num_chunks = 2;
	cs.in.chunks = (uintptr_t)ptrs;
	f.handle = 0xfff;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_CS, &cs));
	mem = kt_anon(KT_PAGE);
	ASSERT_NE(NULL, mem);
	ASSERT_EQ(0, amdgpu_create_bo_from_user_mem(self->a.dev, mem, KT_PAGE,
						    &ubo));
	ASSERT_EQ(0, amdgpu_bo_export(ubo, amdgpu_bo_handle_type_kms,
				      &ubo_handle));
	f.handle = ubo_handle;
	memset(&cs, 0, sizeof(cs));
	cs.in.ctx_id = 1;
	cs.in.num_chunks = 2;
	cs.in.chunks = (uintptr_t)ptrs;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_CS, &cs));
	/* a fence slot past the BO */
	f.handle = ib_handle;
	f.offset = AD_IB_SIZE - 4;
	memset(&cs, 0, sizeof(cs));
	cs.in.ctx_id = 1;
	cs.in.num_chunks = 2;
	cs.in.chunks = (uintptr_t)ptrs;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_CS, &cs));
	EXPECT_EQ(0, amdgpu_bo_free(ubo));
	munmap(mem, KT_PAGE);
	vm_close(&self->a, &self->ib, &self->data);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * A KFD BO of GPU 0 imported on GPU 1's node is the same memory: the CPU
 * sees it through either, and GPU 1's SDMA copies from it.
 */
TEST_F_TIMEOUT(libdrm, import_from_another_gpu, 120)
{
	const uint64_t size = 3 * KT_MIB;
	struct amdgpu_bo_import_result imp, again;
	struct abo peer, user, ib;
	amdgpu_bo_handle ubo;
	uint64_t handle, offset, seq;
	void *mem, *cpu;
	struct kt_env e;
	int dmabuf;
	struct ad a;

	if (self->ngpus < 2)
		SKIP(return, "needs two GPUs");
	ASSERT_EQ(0, kt_env_open(&e, true));
	ASSERT_EQ(0, kt_alloc(e.kfd, e.gpu[0].gpu_id, KT_VA(3), size,
			      KT_VRAM | KT_WRITABLE, &handle, &offset));
	ASSERT_EQ(0, kt_export(e.kfd, handle, O_RDWR | O_CLOEXEC, &dmabuf));
	cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, cpu);
	kt_fill(cpu, size, 77);

	ASSERT_EQ(0, ad_open(e.gpu[1].render_minor, &a));
	ASSERT_EQ(0, amdgpu_bo_import(a.dev, amdgpu_bo_handle_type_dma_buf_fd,
				      dmabuf, &imp));
	EXPECT_EQ(size, imp.alloc_size);
	ASSERT_EQ(0, abo_map(a.dev, imp.buf_handle, size, &peer));
	ASSERT_EQ(0, amdgpu_bo_cpu_map(imp.buf_handle, &peer.cpu));
	EXPECT_TRUE(kt_check(peer.cpu, size, 77));
	mem = kt_anon(size);
	ASSERT_NE(NULL, mem);
	ASSERT_EQ(0, amdgpu_create_bo_from_user_mem(a.dev, mem, size, &ubo));
	ASSERT_EQ(0, abo_map(a.dev, ubo, size, &user));
	ASSERT_EQ(0, abo_alloc(a.dev, AD_IB_SIZE, AMDGPU_GEM_DOMAIN_GTT, &ib));
	ASSERT_EQ(0, submit(&a, &ib,
			    kg_sdma_pad(ib.cpu, ib_copy(ib.cpu, user.va,
							peer.va, size)),
			    0, NULL, 0, &seq));
	EXPECT_TRUE(kt_check(mem, size, 77));

	/* Importing the same dma-buf again gives the same BO back. */
	ASSERT_EQ(0, amdgpu_bo_import(a.dev, amdgpu_bo_handle_type_dma_buf_fd,
				      dmabuf, &again));
	EXPECT_EQ(imp.buf_handle, again.buf_handle);
	EXPECT_EQ(0, amdgpu_bo_free(again.buf_handle));
	EXPECT_EQ(0, abo_free(&ib));
	EXPECT_EQ(0, abo_free(&user));
	EXPECT_EQ(0, abo_free(&peer));
	ad_close(&a);
	munmap(mem, size);
	munmap(cpu, size);
	close(dmabuf);
	EXPECT_EQ(0, kt_free(e.kfd, handle));
	kt_env_close(&e);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * KFD makes a new dma-buf per export. Both exports of one BO import into
 * one file, as two handles of the same memory.
 */
TEST_F(libdrm, import_two_exports_of_one_bo)
{
	struct amdgpu_bo_import_result imp[2];
	uint64_t handle, offset;
	struct kt_env e;
	int dmabuf[2], i;
	void *cpu[2];
	struct ad a;

	ASSERT_EQ(0, kt_env_open(&e, true));
	ASSERT_EQ(0, kt_alloc(e.kfd, e.gpu[0].gpu_id, KT_VA(2), KT_MIB,
			      KT_VRAM | KT_WRITABLE, &handle, &offset));
	ASSERT_EQ(0, ad_open(e.gpu[0].render_minor, &a));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, kt_export(e.kfd, handle, O_RDWR | O_CLOEXEC,
				       &dmabuf[i]));
		ASSERT_EQ(0, amdgpu_bo_import(a.dev,
					      amdgpu_bo_handle_type_dma_buf_fd,
					      dmabuf[i], &imp[i]));
		ASSERT_EQ(0, amdgpu_bo_cpu_map(imp[i].buf_handle, &cpu[i]));
	}
	EXPECT_NE(imp[0].buf_handle, imp[1].buf_handle);
	kt_fill(cpu[0], KT_MIB, 5);
	EXPECT_TRUE(kt_check(cpu[1], KT_MIB, 5));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, amdgpu_bo_free(imp[i].buf_handle));
		close(dmabuf[i]);
	}
	ad_close(&a);
	EXPECT_EQ(0, kt_free(e.kfd, handle));
	kt_env_close(&e);
	KT_EXPECT_COUNTERS_BACK();
}

/* ---- the compute ring: PM4 dispatches of the built-in kernels ---- */

/*
 * The compute fixture's IB BO: the IB at 0, a kernel descriptor (256-byte
 * aligned, as COMPUTE_PGM_LO/HI require), its kernarg, and a page that
 * WRITE_DATA and RELEASE_MEM write to.
 */
#define CP_DESC_OFF	(16 * KT_PAGE)
#define CP_ARGS_OFF	(CP_DESC_OFF + 256)
#define CP_MEM_OFF	(CP_DESC_OFF + KT_PAGE)
#define CP_PKT(op, ndw)	(KFDSIM_PM4_TYPE3_HDR(op, ndw) |		\
			 KFDSIM_PM4_SHADER_TYPE_COMPUTE)
#define CP_INIT		KFDSIM_PM4_DISPATCH_COMPUTE_SHADER_EN
/* Never mapped in a render-node file's VM. */
#define CP_UNMAPPED	(1ULL << 46)

/* SET_SH_REG of @n registers from @reg; dwords used. */
static uint32_t pm4_set_sh(uint32_t *ib, uint32_t reg, const uint32_t *v,
			   uint32_t n)
{
	uint32_t i;

	ib[0] = CP_PKT(KFDSIM_PM4_OP_SET_SH_REG, n + 1);
	ib[1] = reg - KFDSIM_PM4_SH_REG_BASE;
	for (i = 0; i < n; i++)
		ib[2 + i] = v[i];
	return n + 2;
}

/*
 * The registers of a dispatch of the descriptor at @desc with kernarg
 * @args and workgroups of @nt work-items, then DISPATCH_DIRECT of @dim
 * with @init; dwords used.
 */
static uint32_t pm4_dispatch(uint32_t *ib, uint64_t desc, uint64_t args,
			     const uint32_t nt[3], const uint32_t dim[3],
			     uint32_t init)
{
	uint32_t v[2], n = 0;

	v[0] = (uint32_t)(desc >> KFDSIM_PM4_PGM_SHIFT);
	v[1] = (uint32_t)(desc >> (32 + KFDSIM_PM4_PGM_SHIFT));
	n += pm4_set_sh(ib + n, KFDSIM_PM4_REG_COMPUTE_PGM_LO, v, 2);
	v[0] = (uint32_t)args;
	v[1] = (uint32_t)(args >> 32);
	n += pm4_set_sh(ib + n, KFDSIM_PM4_REG_COMPUTE_USER_DATA_0, v, 2);
	n += pm4_set_sh(ib + n, KFDSIM_PM4_REG_COMPUTE_NUM_THREAD_X, nt, 3);
	ib[n++] = CP_PKT(KFDSIM_PM4_OP_DISPATCH_DIRECT,
			 KFDSIM_PM4_DISPATCH_DIRECT_NDW);
	ib[n++] = dim[0];
	ib[n++] = dim[1];
	ib[n++] = dim[2];
	ib[n++] = init;
	return n;
}

/* WRITE_DATA of @n dwords to memory at @va, with control bits @ctl. */
static uint32_t pm4_write_data(uint32_t *ib, uint64_t va, uint32_t ctl,
			       const uint32_t *data, uint32_t n)
{
	uint32_t i;

	ib[0] = CP_PKT(KFDSIM_PM4_OP_WRITE_DATA,
		       KFDSIM_PM4_WRITE_DATA_HDR_NDW + n);
	ib[1] = ctl;
	ib[2] = (uint32_t)va;
	ib[3] = (uint32_t)(va >> 32);
	for (i = 0; i < n; i++)
		ib[4 + i] = data[i];
	return KFDSIM_PM4_WRITE_DATA_HDR_NDW + n + 1;
}

#define CP_WRITE_MEM	(KFDSIM_PM4_WRITE_DATA_DST_MEM <<		\
			 KFDSIM_PM4_WRITE_DATA_DST_SEL_SHIFT |		\
			 KFDSIM_PM4_WRITE_DATA_WR_CONFIRM)

/* RELEASE_MEM of an end-of-pipe event writing @value as @data_sel says. */
static uint32_t pm4_release_mem(uint32_t *ib, uint64_t va, uint64_t value,
				uint32_t data_sel)
{
	ib[0] = CP_PKT(KFDSIM_PM4_OP_RELEASE_MEM, KFDSIM_PM4_RELEASE_MEM_NDW);
	ib[1] = 0x14 | 5 << 8;	/* CACHE_FLUSH_AND_INV_TS_EVENT, index 5 */
	ib[2] = data_sel << KFDSIM_PM4_RELEASE_DATA_SEL_SHIFT |
		2 << KFDSIM_PM4_RELEASE_INT_SEL_SHIFT;
	ib[3] = (uint32_t)va;
	ib[4] = (uint32_t)(va >> 32);
	ib[5] = (uint32_t)value;
	ib[6] = (uint32_t)(value >> 32);
	ib[7] = 0;
	return 8;
}

/* Pad to the compute ring's 32-byte IB size with one-dword NOPs. */
static uint32_t pm4_pad(uint32_t *ib, uint32_t n)
{
	while (n % 8)
		ib[n++] = KFDSIM_PM4_NOP_1DW;
	return n;
}

FIXTURE(compute) {
	struct kt_env e;
	struct ad a;
	struct abo ib;
	struct kt_props base;
	char msg[512];
};

FIXTURE_SETUP(compute)
{
	ASSERT_EQ(0, kt_counters(&self->base, self->msg, sizeof(self->msg)));
	ASSERT_EQ(0, kt_env_open(&self->e, true));
	ASSERT_EQ(0, ad_open(self->e.gpu[0].render_minor, &self->a));
	ASSERT_EQ(0, abo_alloc(self->a.dev, AD_IB_SIZE, AMDGPU_GEM_DOMAIN_GTT,
			       &self->ib));
}

FIXTURE_TEARDOWN(compute)
{
	abo_free(&self->ib);
	ad_close(&self->a);
	kt_env_close(&self->e);
}

/* Put a kfdsim kernel descriptor of @op in the IB BO; its GPU VA. */
static uint64_t cp_desc(struct abo *ib, uint32_t op)
{
	struct kfdsim_kernel_descriptor d = {
		.magic = KFDSIM_KERNEL_MAGIC,
		.version = KFDSIM_KERNEL_VERSION,
		.opcode = op,
	};

	memcpy((char *)ib->cpu + CP_DESC_OFF, &d, sizeof(d));
	return ib->va + CP_DESC_OFF;
}

/* FILL_U32 arguments in the IB BO; their GPU VA. */
static uint64_t cp_fill_args(struct abo *ib, uint64_t dst, uint32_t value)
{
	struct kfdsim_args_fill f = { .dst = dst, .value = value };

	memcpy((char *)ib->cpu + CP_ARGS_OFF, &f, sizeof(f));
	return ib->va + CP_ARGS_OFF;
}

/* Run the @n dwords at the start of the IB BO on the compute ring. */
static int cp_run(struct ad *a, struct abo *ib, uint32_t n, uint64_t *seq)
{
	return submit_ip(a, ib, ib->va, n, AMDGPU_HW_IP_COMPUTE, 0, NULL, 0,
			 seq);
}

/* Is u32 element i of @p @value for every i in [@from, @to)? */
static bool cp_all(const void *p, size_t from, size_t to, uint32_t value)
{
	const uint32_t *u = p;
	size_t i;

	for (i = from; i < to; i++)
		if (u[i] != value)
			return false;
	return true;
}

/*
 * The plugin's path: a KFD VRAM BO exported as a dma-buf, imported into
 * libdrm on a file of its own, filled by FILL_U32 dispatched on the
 * compute ring: 1-D, 2-D, and in work-items (a partial workgroup). Each
 * submission takes the ring's next sequence number.
 */
TEST_F(compute, fill_imported_bo)
{
	const uint64_t size = 40 * KT_PAGE;
	const size_t elems = size / 4, used = 637 * 64;
	uint32_t *ib = self->ib.cpu, n;
	uint64_t handle, offset, desc, args, seq;
	struct amdgpu_bo_import_result imp;
	struct abo dst;
	uint32_t *kfd_cpu;
	int dmabuf;

	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->e.gpu[0].gpu_id, KT_VA(1),
			      size, KT_VRAM | KT_WRITABLE, &handle, &offset));
	kfd_cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       self->e.render[0], (off_t)offset);
	ASSERT_NE(MAP_FAILED, kfd_cpu);
	memset(kfd_cpu, 0xa5, size);
	ASSERT_EQ(0, kt_export(self->e.kfd, handle, O_RDWR | O_CLOEXEC,
			       &dmabuf));
	ASSERT_EQ(0, amdgpu_bo_import(self->a.dev,
				      amdgpu_bo_handle_type_dma_buf_fd,
				      dmabuf, &imp));
	ASSERT_EQ(0, abo_map(self->a.dev, imp.buf_handle, size, &dst));
	desc = cp_desc(&self->ib, KFDSIM_KERNEL_FILL_U32);

	/* 637 workgroups of 64: all but the last 192 elements */
	args = cp_fill_args(&self->ib, dst.va, 0x11111111);
	n = pm4_dispatch(ib, desc, args, (uint32_t[3]){ 64, 1, 1 },
			 (uint32_t[3]){ 637, 1, 1 }, CP_INIT);
	ASSERT_EQ(0, cp_run(&self->a, &self->ib, pm4_pad(ib, n), &seq));
	EXPECT_EQ(1, seq);
	EXPECT_EQ(seq, user_fence(&self->ib));
	EXPECT_TRUE(cp_all(kfd_cpu, 0, used, 0x11111111));
	EXPECT_TRUE(cp_all(kfd_cpu, used, elems, 0xa5a5a5a5));

	/* 2-D: 5 x 3 workgroups of 16 x 4, 960 work-items */
	args = cp_fill_args(&self->ib, dst.va, 0x22222222);
	n = pm4_dispatch(ib, desc, args, (uint32_t[3]){ 16, 4, 1 },
			 (uint32_t[3]){ 5, 3, 1 }, CP_INIT);
	ASSERT_EQ(0, cp_run(&self->a, &self->ib, pm4_pad(ib, n), &seq));
	EXPECT_EQ(2, seq);
	EXPECT_TRUE(cp_all(kfd_cpu, 0, 960, 0x22222222));
	EXPECT_TRUE(cp_all(kfd_cpu, 960, used, 0x11111111));

	/* 100 work-items in groups of 64, START_X ignored when forced */
	args = cp_fill_args(&self->ib, dst.va, 0x33333333);
	n = pm4_set_sh(ib, KFDSIM_PM4_REG_COMPUTE_START_X,
		       (uint32_t[3]){ 7, 0, 0 }, 3);
	n += pm4_dispatch(ib + n, desc, args, (uint32_t[3]){ 64, 1, 1 },
			  (uint32_t[3]){ 100, 1, 1 },
			  CP_INIT | KFDSIM_PM4_DISPATCH_USE_THREAD_DIMENSIONS |
			  KFDSIM_PM4_DISPATCH_FORCE_START_AT_000);
	ASSERT_EQ(0, cp_run(&self->a, &self->ib, pm4_pad(ib, n), &seq));
	EXPECT_EQ(3, seq);
	EXPECT_TRUE(cp_all(kfd_cpu, 0, 100, 0x33333333));
	EXPECT_TRUE(cp_all(kfd_cpu, 100, 960, 0x22222222));

	/* A dimension of 0 dispatches nothing. */
	args = cp_fill_args(&self->ib, dst.va, 0x44444444);
	n = pm4_dispatch(ib, desc, args, (uint32_t[3]){ 64, 1, 1 },
			 (uint32_t[3]){ 4, 0, 1 }, CP_INIT);
	ASSERT_EQ(0, cp_run(&self->a, &self->ib, pm4_pad(ib, n), &seq));
	EXPECT_EQ(4, seq);
	EXPECT_TRUE(cp_all(kfd_cpu, 0, 100, 0x33333333));

	EXPECT_EQ(0, abo_free(&dst));
	close(dmabuf);
	munmap(kfd_cpu, size);
	EXPECT_EQ(0, kt_free(self->e.kfd, handle));
	abo_free(&self->ib);
	ad_close(&self->a);
	kt_env_close(&self->e);
	KT_EXPECT_COUNTERS_BACK();
}

/* ---- the CRIU plugin's chunk scan: gfx906 code on the compute ring ---- */

/*
 * Run the plugin's scan kernel at @entry (an offset in kp_scan_code) over
 * @size bytes at @src in chunks of @chunk, results to @out, as the plugin
 * programs it (gpu_scan.c): code and kernarg in @code, the registers of a
 * gfx9 compute dispatch, whole workgroups of KP_SCAN_WG.
 */
static int scan_run(struct ad *a, struct abo *ib, struct abo *code,
		    uint32_t entry, uint64_t src, uint64_t size,
		    uint32_t chunk, uint64_t out)
{
	struct kp_scan_args args = {
		.src = src, .out = out, .size = size, .chunk = chunk,
		.nchunks = (uint32_t)((size + chunk - 1) / chunk),
	};
	uint64_t pgm = code->va + entry, kva = code->va + KP_SCAN_ARGS_OFF;
	uint32_t *d = ib->cpu, n = 0, seq_dw;
	uint64_t seq;

	memcpy(code->cpu, kp_scan_code, kp_scan_code_size);
	memcpy((char *)code->cpu + KP_SCAN_ARGS_OFF, &args, sizeof(args));
	n += pm4_set_sh(d + n, KFDSIM_PM4_REG_COMPUTE_PGM_LO,
			(uint32_t[2]){ (uint32_t)(pgm >> 8),
				       (uint32_t)(pgm >> 40) }, 2);
	n += pm4_set_sh(d + n, KFDSIM_PM4_REG_COMPUTE_PGM_RSRC1,
			(uint32_t[2]){ KP_SCAN_RSRC1, KP_SCAN_RSRC2 }, 2);
	n += pm4_set_sh(d + n, KFDSIM_PM4_REG_COMPUTE_USER_DATA_0,
			(uint32_t[2]){ (uint32_t)kva, (uint32_t)(kva >> 32) },
			2);
	n += pm4_set_sh(d + n, KFDSIM_PM4_REG_COMPUTE_NUM_THREAD_X,
			(uint32_t[3]){ KP_SCAN_WG, 1, 1 }, 3);
	d[n++] = CP_PKT(KFDSIM_PM4_OP_DISPATCH_DIRECT,
			KFDSIM_PM4_DISPATCH_DIRECT_NDW);
	d[n++] = (args.nchunks + KP_SCAN_WG - 1) / KP_SCAN_WG;
	d[n++] = 1;
	d[n++] = 1;
	d[n++] = CP_INIT;
	seq_dw = pm4_pad(d, n);
	return cp_run(a, ib, seq_dw, &seq);
}

/*
 * Pairs [0, @n) of @out against the CPU: the plugin's own XXH64 or fold64
 * of each chunk and the OR of its words (@zero_test: 0 and the chunk's
 * first non-zero word); pair @n keeps its 0xa5 fill. Mismatches.
 */
static uint32_t scan_check(struct __test_metadata *_metadata,
			   const uint8_t *p, const uint64_t *out,
			   uint64_t size, uint32_t chunk, uint32_t n,
			   enum kp_sum_kind kind, bool zero_test)
{
	uint64_t len, h, bits, w, i;
	uint32_t c, bad = 0;

	for (c = 0; c < n; c++) {
		len = size - (uint64_t)c * chunk;
		if (len > chunk)
			len = chunk;
		bits = 0;
		for (i = 0; i < len && !(zero_test && bits); i += 8) {
			memcpy(&w, p + (uint64_t)c * chunk + i, 8);
			bits |= w;
		}
		h = zero_test ? 0 : kp_chunk_sum(kind, p + (uint64_t)c * chunk,
						 len);
		if (out[2 * c] == h && out[2 * c + 1] == bits)
			continue;
		if (bad++ < 5)
			TH_LOG("GPU gives sum 0x%llx, OR 0x%llx for chunk %u (%llu bytes); the CPU 0x%llx, 0x%llx",
			       (unsigned long long)out[2 * c],
			       (unsigned long long)out[2 * c + 1], c,
			       (unsigned long long)len, (unsigned long long)h,
			       (unsigned long long)bits);
	}
	if (out[2 * n] != 0xa5a5a5a5a5a5a5a5ULL && bad++ < 5)
		TH_LOG("the pair after the last chunk was written");
	return bad;
}

/*
 * The CRIU plugin's GPU chunk scan (userspace-plugin/gpu/chunk_scan.s,
 * gfx906 machine code, nothing kfdsim-specific) dispatched with PM4 as the
 * plugin dispatches it, on random data with all-zero chunks, a chunk zero
 * but for its last byte, and a short last chunk: XXH64, fold64 and the
 * zero test give what the plugin's CPU code gives for every chunk, for
 * chunks of 8 bytes (lanes of a wave ending at different words), 4 KiB
 * and 4 KiB + 8 (a length that is not a multiple of 32: XXH64's tail).
 */
TEST_F_TIMEOUT(compute, plugin_scan_code_matches_cpu, 600)
{
	static const uint32_t chunks[] = { KT_PAGE, KT_PAGE + 8, 8 };
	const uint64_t size = 96 * KT_PAGE + 24;
	const struct {
		uint32_t entry;
		enum kp_sum_kind kind;
		bool zero;
	} k[] = {
		{ kp_scan_xxh64_off, KP_SUM_XXH64, false },
		{ kp_scan_fold64_off, KP_SUM_FOLD64, false },
		{ kp_scan_zero_off, KP_SUM_XXH64, true },
	};
	struct abo code, src, out;
	uint32_t i, c, n;
	uint64_t *o;
	uint8_t *p;

	ASSERT_EQ(0, abo_alloc(self->a.dev, KT_PAGE, AMDGPU_GEM_DOMAIN_GTT,
			       &code));
	ASSERT_EQ(0, abo_alloc(self->a.dev, size + 8, AMDGPU_GEM_DOMAIN_GTT,
			       &src));
	ASSERT_EQ(0, abo_alloc(self->a.dev, 2 * size + KT_PAGE,
			       AMDGPU_GEM_DOMAIN_GTT, &out));
	p = src.cpu;
	o = out.cpu;
	kt_fill(p, size, 2718);
	memset(p + 3 * KT_PAGE, 0, 2 * KT_PAGE);	/* zero chunks */
	memset(p + 40 * KT_PAGE, 0, KT_PAGE);
	p[41 * KT_PAGE - 1] = 0x80;			/* zero but its last byte */
	memset(p + 90 * KT_PAGE, 0, 6 * KT_PAGE + 24);	/* the zero tail */

	for (i = 0; i < 3 * ARRAY_SIZE(chunks); i++) {
		uint32_t kk = i / ARRAY_SIZE(chunks);

		c = chunks[i % ARRAY_SIZE(chunks)];
		n = (uint32_t)((size + c - 1) / c);
		memset(o, 0xa5, 2 * size + KT_PAGE);
		ASSERT_EQ(0, scan_run(&self->a, &self->ib, &code,
				      k[kk].entry, src.va, size, c, out.va))
			TH_LOG("kernel at 0x%x, chunks of %u", k[kk].entry, c);
		EXPECT_EQ(0, scan_check(_metadata, p, o, size, c, n,
					k[kk].kind, k[kk].zero))
			TH_LOG("kernel at 0x%x, chunks of %u", k[kk].entry, c);
		if (c != KT_PAGE)
			continue;
		/* Hand-checked cases: the zero chunks and the almost-zero. */
		EXPECT_EQ(0, o[2 * 3 + 1]);
		EXPECT_EQ(0, o[2 * 4 + 1]);
		EXPECT_EQ(0x8000000000000000ULL, o[2 * 40 + 1]);
		EXPECT_EQ(k[kk].zero ? 0 : kp_chunk_sum_zeros(k[kk].kind,
							      KT_PAGE),
			  o[2 * 3]);
		/* The 24-byte last chunk: XXH64 without a stripe. */
		EXPECT_EQ(k[kk].zero ? 0 : kp_chunk_sum_zeros(k[kk].kind, 24),
			  o[2 * 96]);
	}
	EXPECT_EQ(0, abo_free(&out));
	EXPECT_EQ(0, abo_free(&src));
	EXPECT_EQ(0, abo_free(&code));
}

/* WRITE_DATA and RELEASE_MEM write memory; NOP and ACQUIRE_MEM do not. */
TEST_F(compute, write_data_and_release_mem)
{
	const uint64_t va = self->ib.va + CP_MEM_OFF;
	uint32_t *mem = (uint32_t *)((char *)self->ib.cpu + CP_MEM_OFF);
	uint32_t *ib = self->ib.cpu, n = 0, i;
	uint64_t seq;

	memset(mem, 0xee, 64);
	n += pm4_write_data(ib + n, va, CP_WRITE_MEM,
			    (uint32_t[3]){ 0xa0, 0xa1, 0xa2 }, 3);
	/* one address: the last dword stays */
	n += pm4_write_data(ib + n, va + 16,
			    CP_WRITE_MEM | KFDSIM_PM4_WRITE_DATA_ONE_ADDR,
			    (uint32_t[2]){ 0xb0, 0xb1 }, 2);
	/* a NOP with a body, which is skipped */
	ib[n++] = CP_PKT(KFDSIM_PM4_OP_NOP, 3);
	ib[n++] = 0xdeadbeef;
	ib[n++] = CP_PKT(0xff, 1);
	ib[n++] = 0;
	ib[n++] = CP_PKT(KFDSIM_PM4_OP_ACQUIRE_MEM,
			 KFDSIM_PM4_ACQUIRE_MEM_NDW);
	for (i = 0; i < KFDSIM_PM4_ACQUIRE_MEM_NDW; i++)
		ib[n++] = i ? 0 : 0xffffffff;
	n += pm4_release_mem(ib + n, va + 24, 0x1234567890abcdefULL,
			     KFDSIM_PM4_RELEASE_DATA_64);
	/* 32 bits: the high dword is not written */
	n += pm4_release_mem(ib + n, va + 32, 0x5555555566666666ULL,
			     KFDSIM_PM4_RELEASE_DATA_32);
	n += pm4_release_mem(ib + n, va + 40, 7, KFDSIM_PM4_RELEASE_DATA_NONE);
	ASSERT_EQ(0, cp_run(&self->a, &self->ib, pm4_pad(ib, n), &seq));
	EXPECT_EQ(1, seq);
	EXPECT_EQ(0xa0, mem[0]);
	EXPECT_EQ(0xa1, mem[1]);
	EXPECT_EQ(0xa2, mem[2]);
	EXPECT_EQ(0xeeeeeeee, mem[3]);
	EXPECT_EQ(0xb1, mem[4]);
	EXPECT_EQ(0xeeeeeeee, mem[5]);
	EXPECT_EQ(0x90abcdef, mem[6]);
	EXPECT_EQ(0x12345678, mem[7]);
	EXPECT_EQ(0x66666666, mem[8]);
	EXPECT_EQ(0xeeeeeeee, mem[9]);
	EXPECT_EQ(0xeeeeeeee, mem[10]);
	EXPECT_EQ(0xeeeeeeee, mem[11]);
	EXPECT_EQ(seq, user_fence(&self->ib));
	abo_free(&self->ib);
	ad_close(&self->a);
	kt_env_close(&self->e);
	KT_EXPECT_COUNTERS_BACK();
}

/* One good submission: a WRITE_DATA of @value; 0 if it ran and landed. */
static int cp_good(struct ad *a, struct abo *ib, uint32_t value,
		   uint64_t *seq)
{
	uint32_t *mem = (uint32_t *)((char *)ib->cpu + CP_MEM_OFF);
	uint32_t n;
	int ret;

	n = pm4_write_data(ib->cpu, ib->va + CP_MEM_OFF, CP_WRITE_MEM, &value,
			   1);
	ret = cp_run(a, ib, pm4_pad(ib->cpu, n), seq);
	if (ret)
		return ret;
	return *mem == value ? 0 : -1;
}

/*
 * Packets the compute ring refuses: each fails its job, whose fence
 * signals -EINVAL; the next good one works. An IB that cannot be fetched
 * fails CS itself and uses no sequence number.
 */
TEST_F(compute, bad_packets_refused)
{
	enum { UNKNOWN_OP, TYPE0, TYPE2, PREDICATED, REG_OUTSIDE, INITIATOR_REG,
	       REG_PAST_USER_DATA, TRUNCATED, DISPATCH_LEN, DESC_UNMAPPED,
	       DESC_NOT_KFDSIM, DESC_BAD_KERNEL, ARGS_UNMAPPED, NO_SHADER_EN,
	       NO_NUM_THREAD, WG_TOO_LARGE, START_X, WRITE_REGISTER,
	       WRITE_UNMAPPED, RELEASE_UNALIGNED, ACQUIRE_LEN, NR_BAD };
	static const char * const what[NR_BAD] = {
		"unknown opcode (INDIRECT_BUFFER)", "type-0 packet",
		"type-2 packet", "predicated NOP",
		"SET_SH_REG of a register outside the set",
		"SET_SH_REG of COMPUTE_DISPATCH_INITIATOR",
		"SET_SH_REG past COMPUTE_USER_DATA_15",
		"packet truncated by the IB's end",
		"DISPATCH_DIRECT of the wrong length",
		"descriptor address not mapped (fault)",
		"machine code that traps (s_trap)",
		"descriptor of an unknown kernel", "kernarg not mapped (fault)",
		"dispatch without COMPUTE_SHADER_EN",
		"dispatch with NUM_THREAD 0", "workgroup of 2048",
		"non-zero COMPUTE_START_X", "WRITE_DATA to a register",
		"WRITE_DATA to an unmapped page (fault)",
		"RELEASE_MEM of 64 bits, 4-byte aligned",
		"ACQUIRE_MEM of the wrong length",
	};
	uint32_t *ib = self->ib.cpu, *desc_cpu, n, i;
	uint64_t desc, args, seq, good_seq;
	const uint64_t data = self->ib.va + CP_MEM_OFF;

	ASSERT_EQ(0, cp_good(&self->a, &self->ib, 1, &good_seq));
	for (i = 0; i < NR_BAD; i++) {
		uint32_t nt[3] = { 64, 1, 1 }, dim[3] = { 1, 1, 1 };
		uint32_t init = CP_INIT;

		desc = cp_desc(&self->ib, KFDSIM_KERNEL_FILL_U32);
		desc_cpu = (uint32_t *)((char *)self->ib.cpu + CP_DESC_OFF);
		args = cp_fill_args(&self->ib, data, 5);
		memset(ib, 0, 64 * 4);
		n = 0;
		switch (i) {
		case UNKNOWN_OP:
			ib[n++] = CP_PKT(0x3f, 3);
			n += 3;
			break;
		case TYPE0:
			ib[n++] = 0x2e04;	/* PACKET0 of COMPUTE_START_X */
			ib[n++] = 0;
			break;
		case TYPE2:
			ib[n++] = 0x80000000;
			break;
		case PREDICATED:
			ib[n++] = KFDSIM_PM4_NOP_1DW | KFDSIM_PM4_PREDICATE;
			break;
		case REG_OUTSIDE:
			n += pm4_set_sh(ib, 0x2e10, (uint32_t[1]){ 0 }, 1);
			break;
		case INITIATOR_REG:
			n += pm4_set_sh(ib, 0x2e00, (uint32_t[1]){ 1 }, 1);
			break;
		case REG_PAST_USER_DATA:
			n += pm4_set_sh(ib, KFDSIM_PM4_REG_COMPUTE_USER_DATA_0 +
					15, (uint32_t[2]){ 0, 0 }, 2);
			break;
		case TRUNCATED:
			n += pm4_dispatch(ib, desc, args, nt, dim, init) - 2;
			break;
		case DISPATCH_LEN:
			ib[n++] = CP_PKT(KFDSIM_PM4_OP_DISPATCH_DIRECT, 3);
			n += 3;
			break;
		case DESC_UNMAPPED:
			desc = CP_UNMAPPED;
			break;
		case DESC_NOT_KFDSIM:
			/* Machine code runs, and this one traps. */
			desc_cpu[0] = 0xbf920002;	/* s_trap 2 */
			break;
		case DESC_BAD_KERNEL:
			desc_cpu[2] = 99;
			break;
		case ARGS_UNMAPPED:
			args = CP_UNMAPPED;
			break;
		case NO_SHADER_EN:
			init = 0;
			break;
		case NO_NUM_THREAD:
			nt[0] = 0;
			break;
		case WG_TOO_LARGE:
			nt[0] = 2048;
			break;
		case START_X:
			n += pm4_set_sh(ib, KFDSIM_PM4_REG_COMPUTE_START_X,
					(uint32_t[1]){ 1 }, 1);
			break;
		case WRITE_REGISTER:
			n += pm4_write_data(ib, 0x2e40, 0, (uint32_t[1]){ 1 },
					    1);
			break;
		case WRITE_UNMAPPED:
			n += pm4_write_data(ib, CP_UNMAPPED, CP_WRITE_MEM,
					    (uint32_t[1]){ 1 }, 1);
			break;
		case RELEASE_UNALIGNED:
			n += pm4_release_mem(ib, data + 4, 1,
					     KFDSIM_PM4_RELEASE_DATA_64);
			break;
		case ACQUIRE_LEN:
			ib[n++] = CP_PKT(KFDSIM_PM4_OP_ACQUIRE_MEM, 5);
			n += 5;
			break;
		}
		/* the dispatch cases end with a dispatch */
		if (!n || i == START_X)
			n += pm4_dispatch(ib + n, desc, args, nt, dim, init);
		if (i != TRUNCATED)
			n = pm4_pad(ib, n);
		EXPECT_EQ(-EINVAL, cp_run(&self->a, &self->ib, n, &seq))
			TH_LOG("%s", what[i]);
		EXPECT_EQ(good_seq + 1, seq) TH_LOG("%s", what[i]);
		ASSERT_EQ(0, cp_good(&self->a, &self->ib, 100 + i, &seq))
			TH_LOG("after %s", what[i]);
		EXPECT_EQ(good_seq + 2, seq) TH_LOG("after %s", what[i]);
		good_seq = seq;
	}

	/* An IB that is not dword aligned, or not mapped */
	n = pm4_pad(ib, 0);
	EXPECT_EQ(-EINVAL, submit_ip(&self->a, &self->ib, self->ib.va + 2, 8,
				     AMDGPU_HW_IP_COMPUTE, 0, NULL, 0, &seq));
	EXPECT_EQ(-EINVAL, submit_ip(&self->a, &self->ib, CP_UNMAPPED, 8,
				     AMDGPU_HW_IP_COMPUTE, 0, NULL, 0, &seq));
	ASSERT_EQ(0, cp_good(&self->a, &self->ib, 7, &seq));
	EXPECT_EQ(good_seq + 1, seq);
	abo_free(&self->ib);
	ad_close(&self->a);
	kt_env_close(&self->e);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * The compute ring has its own sequence numbers per context; its fences
 * signal, and WAIT_CS and WAIT_FENCES know them. Its 64-bit user fence
 * must be 8-byte aligned.
 */
TEST_F(compute, fences_per_ring)
{
	struct amdgpu_cs_fence fences[2] = {
		{ .context = self->a.ctx, .ip_type = AMDGPU_HW_IP_COMPUTE },
		{ .context = self->a.ctx, .ip_type = AMDGPU_HW_IP_DMA },
	};
	struct drm_amdgpu_cs_chunk_fence f = { 0 };
	struct drm_amdgpu_cs_chunk_ib ci = { 0 };
	struct drm_amdgpu_cs_chunk chunks[2];
	union drm_amdgpu_cs cs;
	uint32_t expired, first, ib_handle;
	uint64_t ptrs[2], seq;
	int fd = self->a.fd;

	ASSERT_EQ(0, cp_good(&self->a, &self->ib, 1, &seq));
	EXPECT_EQ(1, seq);
	ASSERT_EQ(0, cp_good(&self->a, &self->ib, 2, &seq));
	EXPECT_EQ(2, seq);
	EXPECT_EQ(2, user_fence(&self->ib));
	/* SDMA ring 0 of the same context counts on its own */
	memset(self->ib.cpu, 0, 32);
	ASSERT_EQ(0, submit(&self->a, &self->ib, 8, 0, NULL, 0, &seq));
	EXPECT_EQ(1, seq);
	ASSERT_EQ(0, cp_good(&self->a, &self->ib, 3, &seq));
	EXPECT_EQ(3, seq);

	fences[0].fence = 3;
	EXPECT_EQ(0, amdgpu_cs_query_fence_status(&fences[0],
						  AMDGPU_TIMEOUT_INFINITE, 0,
						  &expired));
	EXPECT_EQ(1, expired);
	fences[1].fence = 1;
	EXPECT_EQ(0, amdgpu_cs_wait_fences(fences, 2, true,
					   AMDGPU_TIMEOUT_INFINITE, &expired,
					   &first));
	EXPECT_EQ(1, expired);
	/* never handed out on the compute ring */
	fences[0].fence = 4;
	EXPECT_EQ(-EINVAL, amdgpu_cs_query_fence_status(&fences[0], 0, 0,
							 &expired));

	/* the user fence of a compute submission: 8-byte aligned */
	ASSERT_EQ(0, amdgpu_bo_export(self->ib.bo, amdgpu_bo_handle_type_kms,
				      &ib_handle));
	pm4_pad(self->ib.cpu, 0);
	ci.ip_type = AMDGPU_HW_IP_COMPUTE;
	ci.va_start = self->ib.va;
	ci.ib_bytes = 32;
	f.handle = ib_handle;
	f.offset = AD_FENCE_SLOT * 8 + 4;
	ib_fence_chunks(chunks, ptrs, &ci, &f);
	memset(&cs, 0, sizeof(cs));
	cs.in.ctx_id = 1;
	cs.in.num_chunks = 2;
	cs.in.chunks = (uintptr_t)ptrs;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, DRM_IOCTL_AMDGPU_CS, &cs));
	f.offset = AD_FENCE_SLOT * 8;
	memset(&cs, 0, sizeof(cs));
	cs.in.ctx_id = 1;
	cs.in.num_chunks = 2;
	cs.in.chunks = (uintptr_t)ptrs;
	EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_CS, &cs));
	EXPECT_EQ(4, cs.out.handle);
	fences[0].fence = 4;
	expired = 0;
	EXPECT_EQ(0, amdgpu_cs_query_fence_status(&fences[0],
						  AMDGPU_TIMEOUT_INFINITE, 0,
						  &expired));
	EXPECT_EQ(1, expired);
	EXPECT_EQ(4, user_fence(&self->ib));
	abo_free(&self->ib);
	ad_close(&self->a);
	kt_env_close(&self->e);
	KT_EXPECT_COUNTERS_BACK();
}

static uint64_t cp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* SIGKILL @pid and reap it: its wait status, and how long that took. */
static int cp_kill(pid_t pid, int *status, uint64_t *ms)
{
	uint64_t start = cp_now_ms();

	if (kill(pid, SIGKILL) || waitpid(pid, status, 0) != pid)
		return -1;
	*ms = cp_now_ms() - start;
	return 0;
}

/*
 * A process killed while it waits for a LOOP kernel that would run for
 * hours exits at once: closing its file cancels the job.
 */
TEST_F_TIMEOUT(compute, dispatch_stops_on_fatal_signal, 60)
{
	uint64_t ms;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct kfdsim_args_loop loop = { .steps = 0xffffffff };
		uint32_t *ib = self->ib.cpu, n;
		uint64_t desc, seq;

		loop.buf = self->ib.va + CP_MEM_OFF;
		memcpy((char *)self->ib.cpu + CP_ARGS_OFF, &loop, sizeof(loop));
		desc = cp_desc(&self->ib, KFDSIM_KERNEL_LOOP);
		n = pm4_dispatch(ib, desc, self->ib.va + CP_ARGS_OFF,
				 (uint32_t[3]){ 64, 1, 1 },
				 (uint32_t[3]){ 16, 1, 1 }, CP_INIT);
		cp_run(&self->a, &self->ib, pm4_pad(ib, n), &seq);
		_exit(3);	/* only if the submission returned */
	}
	usleep(300 * 1000);
	ASSERT_EQ(0, cp_kill(pid, &status, &ms));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("the child exited with status 0x%x", status);
	EXPECT_GT(5000, ms);
	abo_free(&self->ib);
	ad_close(&self->a);
	kt_env_close(&self->e);
	KT_EXPECT_COUNTERS_BACK();
}

/* A LOOP dispatch of @steps over one workgroup of 64 in @ib; its dwords. */
static uint32_t cp_loop_ib(struct abo *ib, uint32_t steps)
{
	struct kfdsim_args_loop loop = {
		.buf = ib->va + CP_MEM_OFF,
		.steps = steps,
	};
	uint64_t desc;
	uint32_t n;

	memcpy((char *)ib->cpu + CP_ARGS_OFF, &loop, sizeof(loop));
	desc = cp_desc(ib, KFDSIM_KERNEL_LOOP);
	n = pm4_dispatch(ib->cpu, desc, ib->va + CP_ARGS_OFF,
			 (uint32_t[3]){ 64, 1, 1 }, (uint32_t[3]){ 1, 1, 1 },
			 CP_INIT);
	return pm4_pad(ib->cpu, n);
}

/* Submit the @n dwords of @ib on the compute ring; do not wait. */
static int cp_submit(struct ad *a, struct abo *ib, uint32_t n, uint64_t *seq)
{
	struct amdgpu_cs_ib_info info = { .ib_mc_address = ib->va, .size = n };
	struct amdgpu_cs_request req = {
		.ip_type = AMDGPU_HW_IP_COMPUTE,
		.number_of_ibs = 1,
		.ibs = &info,
	};
	int ret;

	ret = amdgpu_cs_submit(a->ctx, 0, &req, 1);
	*seq = req.seq_no;
	return ret;
}

static uint64_t cp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The raw WAIT_CS for compute fence @seq of context 1 (a file's first),
 * with @abs_ns an absolute CLOCK_MONOTONIC time; 0 and *status, or -errno.
 */
static int cp_wait_cs(int fd, uint64_t seq, uint64_t abs_ns, uint64_t *status)
{
	union drm_amdgpu_wait_cs w;
	int ret;

	memset(&w, 0, sizeof(w));
	w.in.handle = seq;
	w.in.ip_type = AMDGPU_HW_IP_COMPUTE;
	w.in.ctx_id = 1;
	w.in.timeout = abs_ns;
	ret = kt_ioctl(fd, DRM_IOCTL_AMDGPU_WAIT_CS, &w);
	*status = w.out.status;
	return ret;
}

/*
 * CS returns at once even for a dispatch of hours; the submitter, waiting
 * for its fence, stops on SIGSTOP; when it is killed, closing its file
 * cancels the job at once and leaves nothing behind.
 */
TEST_F_TIMEOUT(compute, cs_returns_at_once_and_submitter_stops, 120)
{
	uint64_t start, ms;
	int status, p[2];
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct amdgpu_cs_fence fence = { .ip_type = AMDGPU_HW_IP_COMPUTE };
		uint64_t seq, t0;
		uint32_t expired;
		struct abo ib;
		struct ad a;

		close(p[0]);
		if (ad_open(self->e.gpu[0].render_minor, &a) ||
		    abo_alloc(a.dev, AD_IB_SIZE, AMDGPU_GEM_DOMAIN_GTT, &ib))
			_exit(1);
		t0 = cp_now_ms();
		if (cp_submit(&a, &ib, cp_loop_ib(&ib, 0xffffffff), &seq))
			_exit(2);
		c = cp_now_ms() - t0 < 1000 ? 'y' : 'n';
		if (write(p[1], &c, 1) != 1)
			_exit(4);
		fence.context = a.ctx;
		fence.fence = seq;
		amdgpu_cs_query_fence_status(&fence, AMDGPU_TIMEOUT_INFINITE,
					     0, &expired);
		_exit(3);	/* only if the wait returned */
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &c, 1));
	close(p[0]);
	EXPECT_EQ('y', c) TH_LOG("CS took a second or more");
	usleep(200 * 1000);
	start = cp_now_ms();
	ASSERT_EQ(0, kill(pid, SIGSTOP));
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	EXPECT_TRUE(WIFSTOPPED(status))
		TH_LOG("the child ended with status 0x%x", status);
	EXPECT_GT(5000, cp_now_ms() - start);
	ASSERT_EQ(0, kill(pid, SIGCONT));
	ASSERT_EQ(0, cp_kill(pid, &status, &ms));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("the child exited with status 0x%x", status);
	EXPECT_GT(5000, ms);
	abo_free(&self->ib);
	ad_close(&self->a);
	kt_env_close(&self->e);
	KT_EXPECT_COUNTERS_BACK();
}

/* lockup_timeout of the module: read, or set to @ms; -1 on error. */
static long cp_lockup_timeout(long ms)
{
	const char *path = "/sys/module/kfdsim/parameters/lockup_timeout";
	long old = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &old) != 1)
		old = -1;
	fclose(f);
	if (ms < 0 || old < 0)
		return old;
	f = fopen(path, "w");
	if (!f)
		return -1;
	if (fprintf(f, "%ld\n", ms) < 0)
		old = -1;
	if (fclose(f))
		old = -1;
	return old;
}

/* Wait up to @ms for a kfdsim kernel log line with @needle on @fd. */
static bool cp_kmsg_find(int fd, const char *needle, unsigned int ms)
{
	uint64_t end = cp_now_ms() + ms;
	char rec[1024];
	ssize_t r;

	while (cp_now_ms() < end) {
		r = read(fd, rec, sizeof(rec) - 1);
		if (r < 0 && errno == EAGAIN) {
			usleep(20 * 1000);
			continue;
		}
		if (r < 0 && errno != EPIPE)
			return false;
		if (r <= 0)
			continue;
		rec[r] = 0;
		if (strstr(rec, "kfdsim") && strstr(rec, needle))
			return true;
	}
	return false;
}

/*
 * WAIT_CS takes an absolute CLOCK_MONOTONIC timeout and reports a fence
 * not signalled by then in out.status. A job that executes for longer
 * than lockup_timeout is cancelled: its fence signals -ETIME, a line names
 * the context and the job, the context reports itself guilty and takes no
 * more work (-ECANCELED), as amdgpu's after a job timeout.
 */
TEST_F_TIMEOUT(compute, wait_cs_timeout_and_lockup, 120)
{
	const long lockup_ms = 1500;
	uint64_t seq, status, t0, t1, flags = 0;
	long old;
	int kmsg;

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	old = cp_lockup_timeout(lockup_ms);
	ASSERT_LE(0, old);
	t0 = cp_now_ns();
	ASSERT_EQ(0, cp_submit(&self->a, &self->ib,
			       cp_loop_ib(&self->ib, 0xffffffff), &seq));
	EXPECT_EQ(1, seq);
	/* a time already past: not signalled, at once */
	status = 0;
	EXPECT_EQ(0, cp_wait_cs(self->a.fd, seq, 1, &status));
	EXPECT_EQ(1, status);
	/*
	 * 300 ms from now: not signalled, after 300 ms less at most one
	 * jiffy (10 ms at HZ=100): the time left is turned into whole
	 * jiffies rounding down, as amdgpu_gem_timeout() does.
	 */
	t1 = cp_now_ns();
	status = 0;
	EXPECT_EQ(0, cp_wait_cs(self->a.fd, seq, t1 + 300000000ULL, &status));
	EXPECT_EQ(1, status);
	EXPECT_LE(290, (cp_now_ns() - t1) / 1000000);
	/* forever (negative): the job times out */
	EXPECT_EQ(-ETIME, cp_wait_cs(self->a.fd, seq, UINT64_MAX, &status));
	EXPECT_LE(lockup_ms, (cp_now_ns() - t0) / 1000000);
	EXPECT_TRUE(cp_kmsg_find(kmsg, "timeout: context 1 job 1 ", 5000));
	EXPECT_EQ(lockup_ms, cp_lockup_timeout(old));
	EXPECT_EQ(0, amdgpu_cs_query_reset_state2(self->a.ctx, &flags));
	EXPECT_EQ(AMDGPU_CTX_QUERY2_FLAGS_RESET |
		  AMDGPU_CTX_QUERY2_FLAGS_GUILTY, flags);
	EXPECT_EQ(-ECANCELED, cp_submit(&self->a, &self->ib,
					pm4_pad(self->ib.cpu, 0), &seq));
	close(kmsg);
	abo_free(&self->ib);
	ad_close(&self->a);
	kt_env_close(&self->e);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * A CRIU pause (PROCESS_INFO) of the process that bound the render node
 * holds its running job: the job's buffer does not change and its fence
 * does not signal while paused; UNPAUSE lets it finish with the exact
 * result of the recurrence (computed here on the CPU).
 */
TEST_F_TIMEOUT(compute, criu_pause_holds_job, 300)
{
	uint64_t seq, status, t0, dt;
	uint32_t init[64], snap[64], *mem, steps, ma, mb, i;
	struct kc_image img = { 0 };
	struct abo ib;
	struct ad b;

	/* libdrm would share the fixture's device: the same render node */
	abo_free(&self->ib);
	ad_close(&self->a);
	memset(&b, 0, sizeof(b));
	b.fd = self->e.render[0];
	ASSERT_EQ(0, amdgpu_device_initialize(b.fd, &b.major, &b.minor,
					      &b.dev));
	ASSERT_EQ(0, amdgpu_cs_ctx_create(b.dev, &b.ctx));
	ASSERT_EQ(0, abo_alloc(b.dev, AD_IB_SIZE, AMDGPU_GEM_DOMAIN_GTT, &ib));
	mem = (uint32_t *)((char *)ib.cpu + CP_MEM_OFF);
	for (i = 0; i < 64; i++)
		init[i] = i * 7 + 1;

	/* Calibrate: about 4 s of steps. */
	memcpy(mem, init, sizeof(init));
	t0 = cp_now_ms();
	ASSERT_EQ(0, cp_run(&b, &ib, cp_loop_ib(&ib, 2000), &seq));
	dt = cp_now_ms() - t0 + 1;
	steps = 2000 * 4000 / dt;
	steps = steps < 20000 ? 20000 : steps > (1u << 26) ? 1u << 26 : steps;

	memcpy(mem, init, sizeof(init));
	ASSERT_EQ(0, cp_submit(&b, &ib, cp_loop_ib(&ib, steps), &seq));
	/* running: the buffer changes */
	t0 = cp_now_ms();
	while (!memcmp(mem, init, sizeof(init)) && cp_now_ms() - t0 < 10000)
		usleep(10 * 1000);
	ASSERT_NE(0, memcmp(mem, init, sizeof(init)));
	ASSERT_EQ(0, kc_process_info(self->e.kfd, &img));
	memcpy(snap, mem, sizeof(snap));
	EXPECT_EQ(0, cp_wait_cs(b.fd, seq, 0, &status));
	ASSERT_EQ(1, status) TH_LOG("the job ended before the pause");
	/* paused for a second: no progress, no signal */
	EXPECT_EQ(0, cp_wait_cs(b.fd, seq, cp_now_ns() + 1000000000ULL,
				&status));
	EXPECT_EQ(1, status);
	EXPECT_EQ(0, memcmp(mem, snap, sizeof(snap)));
	EXPECT_EQ(0, kc_unpause(self->e.kfd));
	EXPECT_EQ(0, cp_wait_cs(b.fd, seq, UINT64_MAX, &status));
	EXPECT_EQ(0, status);
	kg_loop_affine(0, steps, &ma, &mb);
	for (i = 0; i < 64; i++)
		ASSERT_EQ(ma * init[i] + mb, mem[i]) TH_LOG("element %u", i);
	abo_free(&ib);
	EXPECT_EQ(0, amdgpu_cs_ctx_free(b.ctx));
	amdgpu_device_deinitialize(b.dev);
	abo_free(&self->ib);
	ad_close(&self->a);
	kt_env_close(&self->e);
	KT_EXPECT_COUNTERS_BACK();
}

TEST_HARNESS_MAIN
