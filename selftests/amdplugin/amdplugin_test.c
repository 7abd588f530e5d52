// SPDX-License-Identifier: GPL-2.0
/*
 * The render node driven the way AMD's own CRIU amdgpu plugin drives it,
 * and the amdgpu behaviour that plugin relies on, as upstream amdgpu (Linux
 * 6.1) has it:
 *
 *  - IB flags are left uninitialised (seen: 0x4c001250); amdgpu ignores the
 *    bits it does not act on.
 *  - At restore the plugin uses the render-node fd it handed to RESTORE for
 *    its own GEM_VA and CS. After ACQUIRE_VM that file's VM *is* the KFD
 *    process's VM: GEM_VA mappings and KFD BOs share one page table, so CS
 *    sees KFD BOs and KFD queues see GEM_VA mappings, and an overlap either
 *    way is -EINVAL (amdgpu_vm_bo_map).
 *  - COPY_LINEAR count is bytes minus one in 22 bits on gfx9 (SDMA 4.x):
 *    one packet moves up to 4 MiB. The plugin writes count = bytes in
 *    2 MiB chunks, one byte more than it means.
 *  - With retry faults off (gfx9), a copy that reads past a BO reads the
 *    dummy page and the submission completes and signals its fence.
 *
 * The copy helper below is written from that description of the plugin,
 * not from its source.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <libdrm/amdgpu.h>
#include <libdrm/amdgpu_drm.h>
#include <linux/kfdsim.h>

#include "kt_harness.h"
#include "kfdsim_test.h"
#include "kfdsim_gpu.h"
#include "abo.h"

/* IB flags AMD's plugin was seen to pass (uninitialised stack). */
#define AP_GARBAGE_FLAGS	0x4c001250u
/* Every flag bit except PREAMBLE (which amdgpu may skip, see the docs). */
#define AP_ALL_BUT_PREAMBLE	(~(uint32_t)AMDGPU_IB_FLAG_PREAMBLE)
/* The plugin's packet size on gfx9 and later. */
#define AP_PLUGIN_CHUNK		(2 * KT_MIB)
/* KFD memory the tests copy; PUBLIC so the CPU may check it anywhere. */
#define AP_VRAM			(KT_VRAM | KT_WRITABLE | \
				 KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC)
#define AP_IB_BYTES		(16 * KT_PAGE)

/*
 * Submit @ndw dwords of @ib on DMA ring 0 in a context of its own, with
 * @flags as the IB flags, the BOs of @bos as the BO list and no user
 * fence, and wait for the fence. 0 or the first error.
 */
static int ap_submit(amdgpu_device_handle dev, const struct abo *ib,
		     uint32_t ndw, uint32_t flags, amdgpu_bo_handle *bos,
		     uint32_t nbos)
{
	struct amdgpu_cs_ib_info info;
	struct amdgpu_cs_request req;
	struct amdgpu_cs_fence fence;
	amdgpu_bo_list_handle list = NULL;
	amdgpu_context_handle ctx;
	uint32_t expired = 0;
	int ret;

	memset(&info, 0, sizeof(info));
	info.flags = flags;
	info.ib_mc_address = ib->va;
	info.size = ndw;
	memset(&req, 0, sizeof(req));
	req.ip_type = AMDGPU_HW_IP_DMA;
	req.number_of_ibs = 1;
	req.ibs = &info;

	if (nbos) {
		ret = amdgpu_bo_list_create(dev, nbos, bos, NULL, &list);
		if (ret)
			return ret;
		req.resources = list;
	}
	ret = amdgpu_cs_ctx_create(dev, &ctx);
	if (ret)
		goto out_list;
	ret = amdgpu_cs_submit(ctx, 0, &req, 1);
	if (ret)
		goto out_ctx;
	memset(&fence, 0, sizeof(fence));
	fence.context = ctx;
	fence.ip_type = AMDGPU_HW_IP_DMA;
	fence.fence = req.seq_no;
	ret = amdgpu_cs_query_fence_status(&fence, AMDGPU_TIMEOUT_INFINITE, 0,
					   &expired);
	if (!ret && !expired)
		ret = -ETIME;
out_ctx:
	amdgpu_cs_ctx_free(ctx);
out_list:
	if (list)
		amdgpu_bo_list_destroy(list);
	return ret;
}

/*
 * Move @size bytes between the BO behind @dmabuf and @host as AMD's
 * plugin does: the dma-buf imported into libdrm and @host wrapped as a
 * userptr BO, each mapped at a VA from libdrm's allocator (source first),
 * an IB BO of 28 bytes per packet, a BO list of the three, COPY_LINEAR
 * packets of at most 2 MiB whose count field is the byte count, and
 * @flags in the IB flags.
 */
static int ap_plugin_copy(amdgpu_device_handle dev, int dmabuf, void *host,
			  uint64_t size, bool to_vram, uint32_t flags)
{
	uint32_t packets = (uint32_t)((size - 1) / AP_PLUGIN_CHUNK + 1);
	struct amdgpu_bo_import_result imp;
	struct abo vram, user, ib;
	amdgpu_bo_handle user_bo, bos[3];
	uint64_t src, dst, left, len;
	uint32_t n = 0;
	int ret;

	memset(&vram, 0, sizeof(vram));
	memset(&user, 0, sizeof(user));
	memset(&ib, 0, sizeof(ib));
	ret = amdgpu_bo_import(dev, amdgpu_bo_handle_type_dma_buf_fd, dmabuf,
			       &imp);
	if (ret)
		return ret;
	ret = amdgpu_create_bo_from_user_mem(dev, host, size, &user_bo);
	if (ret) {
		amdgpu_bo_free(imp.buf_handle);
		return ret;
	}
	if (to_vram) {
		ret = abo_map(dev, user_bo, size, &user);
		if (!ret)
			ret = abo_map(dev, imp.buf_handle, size, &vram);
	} else {
		ret = abo_map(dev, imp.buf_handle, size, &vram);
		if (!ret)
			ret = abo_map(dev, user_bo, size, &user);
	}
	if (!ret)
		ret = abo_alloc(dev, packets * 28, AMDGPU_GEM_DOMAIN_GTT, &ib);
	if (ret)
		goto out;

	src = to_vram ? user.va : vram.va;
	dst = to_vram ? vram.va : user.va;
	for (left = size; left; left -= len) {
		len = left < AP_PLUGIN_CHUNK ? left : AP_PLUGIN_CHUNK;
		/* count = bytes: one byte more than meant, as the plugin */
		n += kg_sdma_copy_packet((uint32_t *)ib.cpu + n, dst, src,
					 (uint32_t)len);
		src += len;
		dst += len;
	}
	n = kg_sdma_pad(ib.cpu, n);
	bos[0] = to_vram ? user.bo : vram.bo;
	bos[1] = to_vram ? vram.bo : user.bo;
	bos[2] = ib.bo;
	ret = ap_submit(dev, &ib, n, flags, bos, 3);
out:
	abo_free(&ib);
	if (user.bo)
		abo_free(&user);
	else
		amdgpu_bo_free(user_bo);
	if (vram.bo)
		abo_free(&vram);
	else
		amdgpu_bo_free(imp.buf_handle);
	return ret;
}

static int ap_dev(int fd, amdgpu_device_handle *dev)
{
	uint32_t major, minor;

	return amdgpu_device_initialize(fd, &major, &minor, dev);
}

/* ---- the plugin's restore path: the RESTORE fd, in the KFD VM ---- */

FIXTURE(shared) {
	struct kg_rt rt;
	struct kt_props base;
	char msg[512];
};

FIXTURE_SETUP(shared)
{
	ASSERT_EQ(0, kt_counters(&self->base, self->msg, sizeof(self->msg)));
	ASSERT_EQ(0, kg_open(&self->rt));
}

FIXTURE_TEARDOWN(shared)
{
	kg_close(&self->rt);
}

/*
 * AMD's plugin at restore: its own GEM_VA and CS on the render fd that
 * ACQUIRE_VM (here; RESTORE in the plugin) bound, with garbage IB flags,
 * 2 MiB + 1 counts, host -> VRAM and back, every GPU, a BO of odd size.
 */
TEST_F_TIMEOUT(shared, plugin_copies_on_the_bound_fd, 600)
{
	const uint64_t size = 5 * KT_MIB + 3 * KT_PAGE;
	int g;

	for (g = 0; g < self->rt.e.ngpus; g++) {
		amdgpu_device_handle dev;
		void *in, *out;
		struct kg_bo bo;
		int dmabuf;

		ASSERT_EQ(0, kg_bo_new(&self->rt, g, size, AP_VRAM, KG_MAP_OWN,
				       &bo));
		ASSERT_EQ(0, kt_export(self->rt.e.kfd, bo.handle,
				       O_RDWR | O_CLOEXEC, &dmabuf));
		ASSERT_EQ(0, ap_dev(self->rt.e.render[g], &dev));
		in = kt_anon(size);
		out = kt_anon(size);
		ASSERT_NE(NULL, in);
		ASSERT_NE(NULL, out);

		kt_fill(in, size, 40 + g);
		ASSERT_EQ(0, ap_plugin_copy(dev, dmabuf, in, size, true,
					    AP_GARBAGE_FLAGS));
		EXPECT_EQ(-1, kt_first_diff(bo.cpu, in, size))
			TH_LOG("GPU %d: VRAM differs from what was restored", g);
		memset(out, 0, size);
		ASSERT_EQ(0, ap_plugin_copy(dev, dmabuf, out, size, false,
					    AP_ALL_BUT_PREAMBLE));
		EXPECT_TRUE(kt_check(out, size, 40 + g))
			TH_LOG("GPU %d: dumped contents differ at %ld", g,
			       kt_first_diff(out, bo.cpu, size));

		amdgpu_device_deinitialize(dev);
		munmap(in, size);
		munmap(out, size);
		close(dmabuf);
		EXPECT_EQ(0, kg_bo_free(&self->rt, &bo));
	}
	kg_close(&self->rt);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * One page table: an IB on the bound fd reads a KFD BO at the VA KFD
 * mapped it at (no import), and a KFD SDMA queue writes into a GEM_VA
 * mapping of that file.
 */
TEST_F(shared, one_page_table_both_ways)
{
	const uint64_t size = 3 * KT_PAGE;
	amdgpu_device_handle dev;
	struct abo gem, ib;
	struct kg_queue q;
	struct kg_bo bo;
	uint32_t n;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, size, AP_VRAM, KG_MAP_OWN, &bo));
	kt_fill(bo.cpu, size, 7);
	ASSERT_EQ(0, ap_dev(self->rt.e.render[0], &dev));
	ASSERT_EQ(0, abo_alloc(dev, size, AMDGPU_GEM_DOMAIN_GTT, &gem));
	ASSERT_EQ(0, abo_alloc(dev, AP_IB_BYTES, AMDGPU_GEM_DOMAIN_GTT, &ib));

	/* CS: KFD BO (its KFD VA) -> GEM BO */
	memset(gem.cpu, 0, size);
	n = kg_sdma_pad(ib.cpu, kg_sdma_copy_packet(ib.cpu, gem.va, bo.va,
						    (uint32_t)size - 1));
	ASSERT_EQ(0, ap_submit(dev, &ib, n, AP_GARBAGE_FLAGS, NULL, 0));
	EXPECT_TRUE(kt_check(gem.cpu, size, 7));

	/* KFD SDMA queue: KFD BO -> GEM_VA mapping */
	kt_fill(bo.cpu, size, 8);
	memset(gem.cpu, 0, size);
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_SDMA, 4096,
				  &q));
	ASSERT_EQ(0, kg_sdma_copy(&q, gem.va, bo.va, size, 0));
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_TRUE(kt_check(gem.cpu, size, 8));
	EXPECT_EQ(0, kg_queue_free(&q));

	abo_free(&ib);
	abo_free(&gem);
	amdgpu_device_deinitialize(dev);
	EXPECT_EQ(0, kg_bo_free(&self->rt, &bo));
	kg_close(&self->rt);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * A GEM_VA mapping over a KFD mapping is -EINVAL, and so is a KFD MAP
 * over a GEM_VA mapping, as amdgpu_vm_bo_map refuses overlaps in one VM.
 * A KFD BO that is allocated but not mapped on the GPU is not in its VM.
 */
TEST_F(shared, overlaps_are_refused_both_ways)
{
	struct amdgpu_bo_alloc_request req = {
		.alloc_size = 2 * KT_PAGE,
		.preferred_heap = AMDGPU_GEM_DOMAIN_GTT,
	};
	amdgpu_device_handle dev;
	struct kg_bo mapped, unmapped;
	amdgpu_bo_handle gem;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * KT_PAGE, AP_VRAM,
			       KG_MAP_OWN | KG_NO_CPU, &mapped));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * KT_PAGE, AP_VRAM,
			       KG_MAP_NONE | KG_NO_CPU, &unmapped));
	ASSERT_EQ(0, ap_dev(self->rt.e.render[0], &dev));
	ASSERT_EQ(0, amdgpu_bo_alloc(dev, &req, &gem));

	/* GEM_VA over (part of) a mapped KFD BO */
	EXPECT_EQ(-EINVAL, amdgpu_bo_va_op(gem, 0, 2 * KT_PAGE,
					   mapped.va + 3 * KT_PAGE, 0,
					   AMDGPU_VA_OP_MAP));
	EXPECT_EQ(-EINVAL, amdgpu_bo_va_op(gem, 0, 2 * KT_PAGE,
					   mapped.va - KT_PAGE, 0,
					   AMDGPU_VA_OP_MAP));
	/* just past it is free */
	EXPECT_EQ(0, amdgpu_bo_va_op(gem, 0, 2 * KT_PAGE,
				     mapped.va + 4 * KT_PAGE, 0,
				     AMDGPU_VA_OP_MAP));
	EXPECT_EQ(0, amdgpu_bo_va_op(gem, 0, 2 * KT_PAGE,
				     mapped.va + 4 * KT_PAGE, 0,
				     AMDGPU_VA_OP_UNMAP));

	/* GEM_VA where an unmapped KFD BO lives, then KFD MAP of it */
	ASSERT_EQ(0, amdgpu_bo_va_op(gem, 0, 2 * KT_PAGE,
				     unmapped.va + KT_PAGE, 0,
				     AMDGPU_VA_OP_MAP));
	EXPECT_EQ(-EINVAL, kt_map(self->rt.e.kfd, unmapped.handle,
				  &self->rt.ids[0], 1));
	EXPECT_EQ(0, amdgpu_bo_va_op(gem, 0, 2 * KT_PAGE,
				     unmapped.va + KT_PAGE, 0,
				     AMDGPU_VA_OP_UNMAP));
	ASSERT_EQ(0, kt_map(self->rt.e.kfd, unmapped.handle,
			    &self->rt.ids[0], 1));
	unmapped.mapped = true;

	EXPECT_EQ(0, amdgpu_bo_free(gem));
	amdgpu_device_deinitialize(dev);
	EXPECT_EQ(0, kg_bo_free(&self->rt, &mapped));
	EXPECT_EQ(0, kg_bo_free(&self->rt, &unmapped));
	kg_close(&self->rt);
	KT_EXPECT_COUNTERS_BACK();
}

/* ---- lifetimes: whichever of the file and the process goes first ---- */

FIXTURE(life) {
	struct kt_props base;
	char msg[512];
};

FIXTURE_SETUP(life)
{
	ASSERT_EQ(0, kt_counters(&self->base, self->msg, sizeof(self->msg)));
}

FIXTURE_TEARDOWN(life)
{
}

/*
 * The KFD process goes first: the file keeps its VM and its GEM_VA
 * mappings (CS still copies), the process's BOs are gone from it.
 */
TEST_F(life, process_closes_first)
{
	amdgpu_device_handle dev;
	struct abo a, b, ib;
	uint64_t handle;
	struct kt_env e;
	uint32_t n;

	ASSERT_EQ(0, kt_env_open(&e, true));
	ASSERT_EQ(0, kt_alloc(e.kfd, e.gpu[0].gpu_id, KG_VA_BASE, KT_PAGE,
			      AP_VRAM, &handle, NULL));
	ASSERT_EQ(0, kt_map(e.kfd, handle, &e.gpu[0].gpu_id, 1));
	ASSERT_EQ(0, ap_dev(e.render[0], &dev));
	ASSERT_EQ(0, abo_alloc(dev, KT_PAGE, AMDGPU_GEM_DOMAIN_GTT, &a));
	ASSERT_EQ(0, abo_alloc(dev, KT_PAGE, AMDGPU_GEM_DOMAIN_GTT, &b));
	ASSERT_EQ(0, abo_alloc(dev, AP_IB_BYTES, AMDGPU_GEM_DOMAIN_GTT, &ib));

	/* /dev/kfd closed: the process and its binding go */
	close(e.kfd);
	e.kfd = -1;

	kt_fill(a.cpu, KT_PAGE, 3);
	n = kg_sdma_pad(ib.cpu, kg_sdma_copy_packet(ib.cpu, b.va, a.va,
						    KT_PAGE - 1));
	ASSERT_EQ(0, ap_submit(dev, &ib, n, 0, NULL, 0));
	EXPECT_TRUE(kt_check(b.cpu, KT_PAGE, 3));
	/* the KFD BO's VA reads as the dummy page now */
	n = kg_sdma_pad(ib.cpu, kg_sdma_copy_packet(ib.cpu, b.va, KG_VA_BASE,
						    KT_PAGE - 1));
	ASSERT_EQ(0, ap_submit(dev, &ib, n, 0, NULL, 0));
	EXPECT_TRUE(kt_is_zero(b.cpu, KT_PAGE));

	abo_free(&ib);
	abo_free(&b);
	abo_free(&a);
	amdgpu_device_deinitialize(dev);
	kt_env_close(&e);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * The user closes the render fd first: KFD holds the file, so the file's
 * GEM handles and GEM_VA mappings stay, in the page table the process's
 * queues use, until the process lets the file go.
 */
TEST_F(life, file_closes_first)
{
	const uint64_t gva = 0x7000000000ULL;
	union drm_amdgpu_gem_create gc;
	union drm_amdgpu_gem_mmap gm;
	struct drm_amdgpu_gem_va va;
	struct kg_queue q;
	struct kg_bo dst;
	struct kg_rt rt;
	void *cpu;
	int fd;

	ASSERT_EQ(0, kg_open(&rt));
	fd = rt.e.render[0];
	ASSERT_EQ(0, kg_bo_new(&rt, 0, KT_PAGE, AP_VRAM, KG_MAP_OWN, &dst));
	memset(&gc, 0, sizeof(gc));
	gc.in.bo_size = KT_PAGE;
	gc.in.domains = AMDGPU_GEM_DOMAIN_GTT;
	ASSERT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_CREATE, &gc));
	memset(&gm, 0, sizeof(gm));
	gm.in.handle = gc.out.handle;
	ASSERT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_MMAP, &gm));
	cpu = mmap(NULL, KT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)gm.out.addr_ptr);
	ASSERT_NE(MAP_FAILED, cpu);
	kt_fill(cpu, KT_PAGE, 11);
	munmap(cpu, KT_PAGE);
	memset(&va, 0, sizeof(va));
	va.handle = gc.out.handle;
	va.operation = AMDGPU_VA_OP_MAP;
	va.flags = AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE;
	va.va_address = gva;
	va.map_size = KT_PAGE;
	ASSERT_EQ(0, kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va));
	/* the queue's BOs are CPU-mapped through the fd: make it first */
	ASSERT_EQ(0, kg_queue_new(&rt, 0, KFD_IOC_QUEUE_TYPE_SDMA, 4096, &q));
	close(fd);
	rt.e.render[0] = -1;

	memset(dst.cpu, 0, KT_PAGE);
	ASSERT_EQ(0, kg_sdma_copy(&q, dst.va, gva, KT_PAGE, 0));
	ASSERT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_TRUE(kt_check(dst.cpu, KT_PAGE, 11));
	EXPECT_EQ(0, kg_queue_free(&q));
	EXPECT_EQ(0, kg_bo_free(&rt, &dst));
	/* the process lets the file go: its handle and mapping go with it */
	kg_close(&rt);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * ACQUIRE_VM takes a file whose VM is clean even if libdrm already
 * opened it, made a context and allocated a BO; a file that has had a
 * mapping is refused (amdgpu_vm_make_compute's check).
 */
TEST_F(life, acquire_needs_a_clean_vm)
{
	struct amdgpu_bo_alloc_request req = {
		.alloc_size = KT_PAGE,
		.preferred_heap = AMDGPU_GEM_DOMAIN_GTT,
	};
	amdgpu_context_handle ctx;
	amdgpu_device_handle dev;
	amdgpu_bo_handle bo;
	struct kt_gpu gpus[KT_MAX_GPUS];
	int kfd, used, fresh;

	ASSERT_LT(0, kt_gpus(gpus, KT_MAX_GPUS));
	kfd = kt_open_kfd();
	ASSERT_LE(0, kfd);
	used = kt_open_render(gpus[0].render_minor);
	ASSERT_LE(0, used);
	ASSERT_EQ(0, ap_dev(used, &dev));
	ASSERT_EQ(0, amdgpu_bo_alloc(dev, &req, &bo));
	ASSERT_EQ(0, amdgpu_bo_va_op(bo, 0, KT_PAGE, 0x7000000000ULL, 0,
				     AMDGPU_VA_OP_MAP));
	ASSERT_EQ(0, amdgpu_bo_va_op(bo, 0, KT_PAGE, 0x7000000000ULL, 0,
				     AMDGPU_VA_OP_UNMAP));
	EXPECT_EQ(-EINVAL, kt_acquire_vm(kfd, used, gpus[0].gpu_id));
	EXPECT_EQ(0, amdgpu_bo_free(bo));
	amdgpu_device_deinitialize(dev);

	fresh = kt_open_render(gpus[0].render_minor);
	ASSERT_LE(0, fresh);
	ASSERT_EQ(0, ap_dev(fresh, &dev));
	ASSERT_EQ(0, amdgpu_cs_ctx_create(dev, &ctx));
	ASSERT_EQ(0, amdgpu_bo_alloc(dev, &req, &bo));
	EXPECT_EQ(0, kt_acquire_vm(kfd, fresh, gpus[0].gpu_id));
	/* and the amdgpu side keeps working on it */
	EXPECT_EQ(0, amdgpu_bo_va_op(bo, 0, KT_PAGE, 0x7000000000ULL, 0,
				     AMDGPU_VA_OP_MAP));
	EXPECT_EQ(0, amdgpu_bo_va_op(bo, 0, KT_PAGE, 0x7000000000ULL, 0,
				     AMDGPU_VA_OP_UNMAP));
	EXPECT_EQ(0, amdgpu_bo_free(bo));
	EXPECT_EQ(0, amdgpu_cs_ctx_free(ctx));
	amdgpu_device_deinitialize(dev);
	close(fresh);
	close(used);
	close(kfd);
	KT_EXPECT_COUNTERS_BACK();
}

/* ---- packet limits and faults on the CS path ---- */

FIXTURE(cs) {
	amdgpu_device_handle dev;
	int fd;
	struct abo src, dst, ib;
	struct kt_props base;
	char msg[512];
};

#define AP_BIG		(8 * KT_MIB)

FIXTURE_SETUP(cs)
{
	struct kt_gpu gpus[KT_MAX_GPUS];

	ASSERT_EQ(0, kt_counters(&self->base, self->msg, sizeof(self->msg)));
	ASSERT_LT(0, kt_gpus(gpus, KT_MAX_GPUS));
	self->fd = kt_open_render(gpus[0].render_minor);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ap_dev(self->fd, &self->dev));
	ASSERT_EQ(0, abo_alloc(self->dev, AP_BIG, AMDGPU_GEM_DOMAIN_VRAM,
			       &self->src));
	ASSERT_EQ(0, abo_alloc(self->dev, AP_BIG, AMDGPU_GEM_DOMAIN_VRAM,
			       &self->dst));
	ASSERT_EQ(0, abo_alloc(self->dev, AP_IB_BYTES, AMDGPU_GEM_DOMAIN_GTT,
			       &self->ib));
}

FIXTURE_TEARDOWN(cs)
{
}

static void cs_close(struct _test_data_cs *self)
{
	abo_free(&self->ib);
	abo_free(&self->dst);
	abo_free(&self->src);
	amdgpu_device_deinitialize(self->dev);
	close(self->fd);
}

/*
 * COPY_LINEAR count 0x200000 moves 2 MiB + 1 bytes and count 0x3fffff
 * moves 4 MiB, in one packet each (gfx9's 22-bit field); CONST_FILL
 * takes the same 22-bit count.
 */
TEST_F_TIMEOUT(cs, copy_and_fill_counts, 300)
{
	const uint32_t counts[] = { 2 * KT_MIB, 4 * KT_MIB - 1 };
	unsigned char *d = self->dst.cpu;
	uint32_t *ib = self->ib.cpu;
	unsigned int i;
	uint32_t n;

	kt_fill(self->src.cpu, AP_BIG, 21);
	for (i = 0; i < 2; i++) {
		uint64_t bytes = (uint64_t)counts[i] + 1;

		memset(d, 0xee, AP_BIG);
		n = kg_sdma_pad(ib, kg_sdma_copy_packet(ib, self->dst.va,
							self->src.va,
							counts[i]));
		ASSERT_EQ(0, ap_submit(self->dev, &self->ib, n,
				       AP_GARBAGE_FLAGS, NULL, 0));
		EXPECT_EQ(-1, kt_first_diff(d, self->src.cpu, bytes))
			TH_LOG("count 0x%x", counts[i]);
		EXPECT_EQ(0xee, d[bytes]) TH_LOG("count 0x%x", counts[i]);
	}

	/* CONST_FILL of 4 MiB (count 0x3fffff) */
	memset(d, 0xee, AP_BIG);
	ib[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_CONST_FILL, 0) |
		KFDSIM_SDMA_FILL_SIZE_DWORD << KFDSIM_SDMA_FILL_SIZE_SHIFT;
	ib[1] = (uint32_t)self->dst.va;
	ib[2] = (uint32_t)(self->dst.va >> 32);
	ib[3] = 0x12345678;
	ib[4] = KFDSIM_SDMA_FILL_MAX_BYTES - 1;
	n = kg_sdma_pad(ib, KFDSIM_SDMA_FILL_DWORDS);
	ASSERT_EQ(0, ap_submit(self->dev, &self->ib, n, 0, NULL, 0));
	EXPECT_EQ(0x12345678, ((uint32_t *)d)[0]);
	EXPECT_EQ(0x12345678,
		  ((uint32_t *)d)[KFDSIM_SDMA_FILL_MAX_BYTES / 4 - 1]);
	EXPECT_EQ(0xee, d[KFDSIM_SDMA_FILL_MAX_BYTES]);
	cs_close(self);
	KT_EXPECT_COUNTERS_BACK();
}

/*
 * A copy of a BO's size + 1 from a BO with nothing mapped after it, into
 * one with nothing mapped after it: the byte past the source reads the
 * dummy page, the byte past the destination is dropped, the submission
 * completes and its fence signals, and every byte of the BO is right.
 */
TEST_F(cs, copy_one_byte_past_a_bo)
{
	const uint64_t size = 2 * KT_PAGE;
	amdgpu_va_handle sh, dh;
	uint64_t sva, dva;
	uint32_t n;

	ASSERT_EQ(0, amdgpu_va_range_alloc(self->dev,
					   amdgpu_gpu_va_range_general,
					   size + KT_PAGE, KT_PAGE, 0, &sva,
					   &sh, 0));
	ASSERT_EQ(0, amdgpu_va_range_alloc(self->dev,
					   amdgpu_gpu_va_range_general,
					   size + KT_PAGE, KT_PAGE, 0, &dva,
					   &dh, 0));
	ASSERT_EQ(0, amdgpu_bo_va_op(self->src.bo, 0, size, sva, 0,
				     AMDGPU_VA_OP_MAP));
	ASSERT_EQ(0, amdgpu_bo_va_op(self->dst.bo, 0, size, dva, 0,
				     AMDGPU_VA_OP_MAP));
	kt_fill(self->src.cpu, size, 5);
	memset(self->dst.cpu, 0, AP_BIG);
	n = kg_sdma_copy_packet(self->ib.cpu, dva, sva, (uint32_t)size);
	n = kg_sdma_pad(self->ib.cpu, n);
	EXPECT_EQ(0, ap_submit(self->dev, &self->ib, n, AP_GARBAGE_FLAGS,
			       NULL, 0));
	EXPECT_TRUE(kt_check(self->dst.cpu, size, 5));
	/* the dropped write did not land in the next page of the BO */
	EXPECT_EQ(0, ((unsigned char *)self->dst.cpu)[size]);

	EXPECT_EQ(0, amdgpu_bo_va_op(self->src.bo, 0, size, sva, 0,
				     AMDGPU_VA_OP_UNMAP));
	EXPECT_EQ(0, amdgpu_bo_va_op(self->dst.bo, 0, size, dva, 0,
				     AMDGPU_VA_OP_UNMAP));
	amdgpu_va_range_free(sh);
	amdgpu_va_range_free(dh);
	cs_close(self);
	KT_EXPECT_COUNTERS_BACK();
}

TEST_HARNESS_MAIN
