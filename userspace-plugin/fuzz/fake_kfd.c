// SPDX-License-Identifier: GPL-2.0
/* The fuzzer's /dev/kfd: see fake_kfd.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/dma-buf.h>

#include "fake_kfd.h"
#include "hsakmt_shm.h"
#include "kfd_dev.h"

static struct kp_topology kf_topo;
static bool kf_topo_ready;

void kf_fake_gpu(unsigned int i, struct kp_gpu *g)
{
	static const struct {
		const char *key;
		uint64_t value;
	} props[] = {
		{ "cpu_cores_count", 0 }, { "simd_count", 240 },
		{ "mem_banks_count", 1 }, { "caches_count", 101 },
		{ "max_waves_per_simd", 10 }, { "lds_size_in_kb", 64 },
		{ "num_gws", 0 }, { "wave_front_size", 64 },
		{ "array_count", 4 }, { "simd_arrays_per_engine", 1 },
		{ "cu_per_simd_array", 15 }, { "simd_per_cu", 4 },
		{ "gfx_target_version", 90006 }, { "vendor_id", 4098 },
		{ "device_id", 26273 }, { "num_sdma_engines", 2 },
		{ "num_cp_queues", 24 }, { "fw_version", 400 },
		{ "capability", 8832 }, { "sdma_fw_version", 145 },
	};
	unsigned int k;

	memset(g, 0, sizeof(*g));
	g->gpu_id = 1000 * (i + 1);
	g->node = i + 1;
	g->render_minor = KP_RENDER_MINOR_FIRST + i;
	g->cpu_node = 0;
	g->vram_size = 256ULL << 20;
	snprintf(g->name, sizeof(g->name), "gfx906");
	for (k = 0; k < sizeof(props) / sizeof(props[0]); k++)
		kp_gpu_set_prop(g, props[k].key, props[k].value);
	kp_gpu_set_prop(g, "drm_render_minor", g->render_minor);
	kp_gpu_set_prop(g, "local_mem_size", g->vram_size);
}

bool kp_kfd_present(void)
{
	return true;
}

bool kp_is_kfd(const struct stat *st)
{
	(void)st;
	return false;
}

const struct kp_gpu *kp_render_gpu(const struct stat *st)
{
	(void)st;
	return NULL;
}

const struct kp_topology *kp_local_topology(void)
{
	unsigned int i;

	if (!kf_topo_ready) {
		kf_topo.ngpus = KF_NGPUS;
		for (i = 0; i < KF_NGPUS; i++)
			kf_fake_gpu(i, &kf_topo.gpus[i]);
		kf_topo_ready = true;
	}
	return &kf_topo;
}

void kp_dev_reset(void)
{
}

int kp_kfd_open(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int kp_kfd_check_version(int kfd, uint32_t *major, uint32_t *minor)
{
	(void)kfd;
	if (major)
		*major = 1;
	if (minor)
		*minor = 12;
	return 0;
}

int kp_open_render_high(const struct kp_gpu *g)
{
	(void)g;
	return kp_kfd_open();
}

/* RESTORE as far as the plugin can tell: a dma-buf per VRAM/GTT BO. */
static int kf_restore(struct kfd_ioctl_criu_args *a)
{
	struct kfd_criu_bo_bucket *b = (void *)(uintptr_t)a->bos;
	const uint32_t mem = KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
			     KFD_IOC_ALLOC_MEM_FLAGS_GTT;
	uint64_t total = 0;
	uint32_t i;
	int fd;

	for (i = 0; i < a->num_bos; i++) {
		b[i].dmabuf_fd = KFD_INVALID_FD;
		b[i].restored_offset = (uint64_t)(i + 1) << 32;
		if (!(b[i].alloc_flags & mem))
			continue;
		if (!b[i].size || b[i].size > KF_MAX_BO_BYTES - total)
			goto fail;
		total += b[i].size;
		fd = memfd_create("bo", MFD_CLOEXEC);
		if (fd < 0)
			goto fail;
		b[i].dmabuf_fd = (uint32_t)fd;
		if (ftruncate(fd, (off_t)b[i].size))
			goto fail;
	}
	return 0;
fail:
	for (; i != UINT32_MAX; i--) {
		if (b[i].dmabuf_fd != KFD_INVALID_FD)
			close((int)b[i].dmabuf_fd);
		b[i].dmabuf_fd = KFD_INVALID_FD;
	}
	return -ENOMEM;
}

int kp_ioctl(int fd, unsigned long req, void *arg)
{
	struct kfd_ioctl_criu_args *a = arg;

	(void)fd;
	if (req == AMDKFD_IOC_CRIU_OP && a->op == KFD_CRIU_OP_RESTORE)
		return kf_restore(a);
	return -ENOTTY;
}

/*
 * The memfds that stand in for dma-bufs know no DMA_BUF_IOCTL_SYNC: accept
 * it here, pass every other ioctl to the kernel. (This definition takes
 * the place of libc's, and of the sanitizer's interceptor, in the fuzzer.)
 */
int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == DMA_BUF_IOCTL_SYNC)
		return 0;
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

/*
 * The fuzzer never touches the host's /dev/shm: libhsakmt's shared memory
 * is only checked the way the real restore checks it before writing.
 */
int kp_hsakmt_shm_restore(const KfdProcess *p)
{
	if (!p->has_hsakmt_shm_size)
		return 0;
	if ((p->has_hsakmt_shm && p->hsakmt_shm.len > p->hsakmt_shm_size) ||
	    p->hsakmt_shm_size > KP_HSAKMT_SHM_SIZE_MAX)
		return -EINVAL;
	return 0;
}
