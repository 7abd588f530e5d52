// SPDX-License-Identifier: GPL-2.0
/*
 * kfd-demo: the memory path of a ROCm-style program, on every simulated GPU.
 *
 * For each GPU in the KFD topology: bind its render node to this process
 * (ACQUIRE_VM), allocate 1 MiB of VRAM, fill it through a CPU mapping of
 * the render node, export it as a dma-buf and check the contents through a
 * mapping of the dma-buf. Built by `make demo`, run by scripts/demo.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/kfd_ioctl.h>

#define TOPOLOGY	"/sys/class/kfd/kfd/topology/nodes"
#define MAX_NODES	64
#define BO_SIZE		(1UL << 20)
/* GPU VAs: one 1 GiB slot per GPU from 4 GiB up, all inside the aperture. */
#define VA_BASE		0x100000000ULL
#define VA_STRIDE	0x40000000ULL

struct gpu {
	unsigned int node;
	uint32_t gpu_id;
	uint32_t render_minor;
	char name[64];
};

/* ioctl as ROCm's thunk issues it: retried when interrupted. */
static int kfd_ioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, request, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret;
}

/* Read the first line of a sysfs file, without its newline. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Find "key value" in a node's properties file. */
static int read_property(unsigned int node, const char *key, uint64_t *value)
{
	char path[128], name[64];
	unsigned long long v;
	int found = -1;
	FILE *f;

	snprintf(path, sizeof(path), TOPOLOGY "/%u/properties", node);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %llu", name, &v) == 2) {
		if (!strcmp(name, key)) {
			*value = v;
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Collect the GPU nodes (gpu_id != 0) of the topology. */
static int find_gpus(struct gpu *gpus, int max)
{
	char path[128], line[64];
	unsigned int node;
	uint64_t minor;
	int n = 0;

	for (node = 0; node < MAX_NODES && n < max; node++) {
		snprintf(path, sizeof(path), TOPOLOGY "/%u/gpu_id", node);
		if (read_line(path, line, sizeof(line)))
			break;
		if (!strcmp(line, "0"))
			continue;
		gpus[n].node = node;
		gpus[n].gpu_id = (uint32_t)strtoul(line, NULL, 10);
		if (read_property(node, "drm_render_minor", &minor)) {
			fprintf(stderr, "node %u: no drm_render_minor\n", node);
			return -1;
		}
		gpus[n].render_minor = (uint32_t)minor;
		snprintf(path, sizeof(path), TOPOLOGY "/%u/name", node);
		if (read_line(path, gpus[n].name, sizeof(gpus[n].name)))
			strcpy(gpus[n].name, "?");
		n++;
	}
	return n;
}

static uint32_t pattern(uint32_t gpu_id, size_t i)
{
	return gpu_id ^ (uint32_t)(i * 2654435761u);
}

/* The whole round trip on one GPU; everything it opens it also closes. */
static int demo_gpu(int kfd, const struct gpu *gpu, unsigned int index)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args alloc = { 0 };
	struct kfd_ioctl_free_memory_of_gpu_args free_args = { 0 };
	struct kfd_ioctl_export_dmabuf_args export = { 0 };
	struct kfd_ioctl_acquire_vm_args acquire = { 0 };
	struct dma_buf_sync sync = { 0 };
	size_t words = BO_SIZE / sizeof(uint32_t), i;
	uint32_t *cpu = MAP_FAILED, *view = MAP_FAILED;
	int render, dmabuf = -1, ret = -1;
	char path[64];

	snprintf(path, sizeof(path), "/dev/dri/renderD%u", gpu->render_minor);
	render = open(path, O_RDWR | O_CLOEXEC);
	if (render < 0) {
		perror(path);
		return -1;
	}

	acquire.drm_fd = (uint32_t)render;
	acquire.gpu_id = gpu->gpu_id;
	if (kfd_ioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &acquire)) {
		perror("ACQUIRE_VM");
		goto out_render;
	}

	alloc.va_addr = VA_BASE + index * VA_STRIDE;
	alloc.size = BO_SIZE;
	alloc.gpu_id = gpu->gpu_id;
	alloc.flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
		      KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	if (kfd_ioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc)) {
		perror("ALLOC_MEMORY_OF_GPU");
		goto out_render;
	}
	printf("  allocated 1 MiB of VRAM at GPU VA 0x%" PRIx64
	       ", handle 0x%" PRIx64 ", mmap offset 0x%" PRIx64 "\n",
	       (uint64_t)alloc.va_addr, (uint64_t)alloc.handle,
	       (uint64_t)alloc.mmap_offset);

	cpu = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, render,
		   (off_t)alloc.mmap_offset);
	if (cpu == MAP_FAILED) {
		perror("mmap render node");
		goto out_free;
	}
	for (i = 0; i < words; i++)
		cpu[i] = pattern(gpu->gpu_id, i);
	printf("  wrote a pattern through %s\n", path);

	export.handle = alloc.handle;
	export.flags = O_CLOEXEC | O_RDWR;
	if (kfd_ioctl(kfd, AMDKFD_IOC_EXPORT_DMABUF, &export)) {
		perror("EXPORT_DMABUF");
		goto out_unmap;
	}
	dmabuf = (int)export.dmabuf_fd;

	view = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf,
		    0);
	if (view == MAP_FAILED) {
		perror("mmap dma-buf");
		goto out_unmap;
	}

	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ;
	if (kfd_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync)) {
		perror("DMA_BUF_IOCTL_SYNC start");
		goto out_unmap;
	}
	for (i = 0; i < words; i++) {
		if (view[i] != pattern(gpu->gpu_id, i)) {
			fprintf(stderr, "  mismatch at byte %zu: 0x%08x, expected 0x%08x\n",
				i * sizeof(uint32_t), view[i],
				pattern(gpu->gpu_id, i));
			break;
		}
	}
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	if (kfd_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync)) {
		perror("DMA_BUF_IOCTL_SYNC end");
		goto out_unmap;
	}
	if (i != words)
		goto out_unmap;
	printf("  read it back through dma-buf fd %d: all 1 MiB match\n",
	       dmabuf);
	ret = 0;

out_unmap:
	if (view != MAP_FAILED)
		munmap(view, BO_SIZE);
	if (dmabuf >= 0)
		close(dmabuf);
	if (cpu != MAP_FAILED)
		munmap(cpu, BO_SIZE);
out_free:
	free_args.handle = alloc.handle;
	if (kfd_ioctl(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &free_args)) {
		perror("FREE_MEMORY_OF_GPU");
		ret = -1;
	} else if (!ret) {
		printf("  freed the buffer\n");
	}
out_render:
	close(render);
	return ret;
}

int main(void)
{
	struct kfd_ioctl_get_version_args version = { 0 };
	struct gpu gpus[MAX_NODES];
	int kfd, n, i, failed = 0;

	kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	if (kfd < 0) {
		perror("/dev/kfd");
		return 1;
	}
	if (kfd_ioctl(kfd, AMDKFD_IOC_GET_VERSION, &version)) {
		perror("GET_VERSION");
		close(kfd);
		return 1;
	}
	printf("/dev/kfd: KFD interface %u.%u\n", version.major_version,
	       version.minor_version);

	n = find_gpus(gpus, MAX_NODES);
	if (n <= 0) {
		fprintf(stderr, "no GPU in %s\n", TOPOLOGY);
		close(kfd);
		return 1;
	}

	for (i = 0; i < n; i++) {
		printf("GPU %u (%s, node %u, renderD%u):\n", gpus[i].gpu_id,
		       gpus[i].name, gpus[i].node, gpus[i].render_minor);
		if (demo_gpu(kfd, &gpus[i], (unsigned int)i)) {
			printf("  FAILED\n");
			failed++;
		}
	}
	close(kfd);

	printf("%d of %d GPUs passed the memory round trip\n", n - failed, n);
	return failed ? 1 : 0;
}
