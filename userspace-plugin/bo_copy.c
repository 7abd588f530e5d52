// SPDX-License-Identifier: GPL-2.0
/*
 * BO contents through dma-buf mappings; see bo_copy.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/dma-buf.h>

#include "bo_copy.h"
#include "checksum.h"
#include "util.h"

uint64_t kp_copy_buffer_size(void)
{
	const char *s = getenv("KFD_MAX_BUFFER_SIZE");
	uint64_t v;

	if (!s)
		return KP_DEFAULT_BUFFER_SIZE;
	if (kp_parse_size(s, &v)) {
		kp_warn("KFD_MAX_BUFFER_SIZE=\"%s\" is not a size (bytes, k/M/G); using %llu MiB",
			s, KP_DEFAULT_BUFFER_SIZE >> 20);
		return KP_DEFAULT_BUFFER_SIZE;
	}
	return v;
}

/* Tell the exporter the CPU is about to access, or is done with, the BO. */
static int kp_dmabuf_sync(const struct kp_copy_job *j, int fd, bool start)
{
	struct dma_buf_sync sync = {
		.flags = (start ? DMA_BUF_SYNC_START : DMA_BUF_SYNC_END) |
			 (j->dir == KP_COPY_SAVE ? DMA_BUF_SYNC_READ :
						   DMA_BUF_SYNC_WRITE),
	};

	if (j->no_sync)
		return 0;
	while (ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync)) {
		if (errno != EINTR && errno != EAGAIN)
			return -errno;
	}
	return 0;
}

/* Move one window of a BO; @sum covers the data. */
static int kp_copy_window(struct kp_copy_job *j, int img,
			  const struct kp_copy_bo *bo, uint64_t off,
			  size_t len, struct kp_sum *sum)
{
	int prot = j->dir == KP_COPY_SAVE ? PROT_READ : PROT_READ | PROT_WRITE;
	ssize_t n;
	void *p;
	int ret;

	p = mmap(NULL, len, prot, MAP_SHARED, bo->dmabuf_fd, (off_t)off);
	if (p == MAP_FAILED) {
		ret = -errno;
		kp_err("BO 0x%" PRIx64 " (GPU %u): cannot map %zu bytes at offset %" PRIu64 " of its dma-buf: %s",
		       bo->addr, j->gpu_id, len, off, strerror(-ret));
		return ret;
	}
	ret = kp_dmabuf_sync(j, bo->dmabuf_fd, true);
	if (ret) {
		kp_err("BO 0x%" PRIx64 " (GPU %u): DMA_BUF_IOCTL_SYNC: %s",
		       bo->addr, j->gpu_id, strerror(-ret));
		goto out_unmap;
	}
	if (j->dir == KP_COPY_SAVE) {
		kp_sum_update(sum, p, len);
		ret = kp_write_all(img, p, len);
		if (ret)
			kp_err("cannot write image %s: %s", j->image,
			       strerror(-ret));
	} else {
		n = kp_read_all(img, p, len);
		if (n >= 0 && (size_t)n == len) {
			kp_sum_update(sum, p, len);
			ret = 0;
		} else if (n >= 0) {
			kp_err("image %s is truncated: BO 0x%" PRIx64 " lacks %" PRIu64 " of its %" PRIu64 " bytes",
			       j->image, bo->addr, bo->size - off - n,
			       bo->size);
			ret = -EIO;
		} else {
			kp_err("cannot read image %s: %s", j->image,
			       strerror((int)-n));
			ret = (int)n;
		}
	}
	if (kp_dmabuf_sync(j, bo->dmabuf_fd, false) && !ret) {
		kp_err("BO 0x%" PRIx64 " (GPU %u): DMA_BUF_IOCTL_SYNC end failed",
		       bo->addr, j->gpu_id);
		ret = -EIO;
	}
out_unmap:
	munmap(p, len);
	return ret;
}

static int kp_copy_bo(struct kp_copy_job *j, int img, struct kp_copy_bo *bo)
{
	struct kp_sum sum;
	uint64_t off, sz;
	size_t len;
	int ret;

	kp_sum_init(&sum);
	for (off = 0; off < bo->size; off += len) {
		len = (size_t)KP_MIN(j->window, bo->size - off);
		ret = kp_copy_window(j, img, bo, off, len, &sum);
		if (ret)
			return ret;
	}
	sz = kp_sum_final(&sum);
	if (j->dir == KP_COPY_SAVE) {
		bo->checksum = sz;
		return 0;
	}
	if (sz != bo->checksum) {
		kp_err("BO 0x%" PRIx64 " (%" PRIu64 " bytes, GPU %u): checksum mismatch: image %s records 0x%016" PRIx64 ", its data gives 0x%016" PRIx64,
		       bo->addr, bo->size, j->gpu_id, j->image, bo->checksum,
		       sz);
		return -EIO;
	}
	return 0;
}

static uint64_t kp_job_bytes(const struct kp_copy_job *j)
{
	uint64_t total = 0;
	unsigned int i;

	for (i = 0; i < j->nbos; i++)
		total += j->bos[i].size;
	return total;
}

static int kp_job_save(struct kp_copy_job *j)
{
	unsigned int i;
	int img, ret;

	img = kp_img_create(j->image);
	if (img < 0)
		return img;
	ret = kp_record_write_len(img, kp_job_bytes(j));
	if (ret)
		kp_err("cannot write image %s: %s", j->image, strerror(-ret));
	for (i = 0; !ret && i < j->nbos; i++)
		ret = kp_copy_bo(j, img, &j->bos[i]);
	if (close(img) && !ret) {
		ret = -errno;
		kp_err("cannot write image %s: %s", j->image, strerror(-ret));
	}
	return ret;
}

static int kp_job_load(struct kp_copy_job *j)
{
	uint64_t have, want = kp_job_bytes(j);
	unsigned int i;
	uint8_t extra;
	ssize_t n;
	int img, ret;

	img = kp_img_open(j->image);
	if (img < 0) {
		kp_err("image %s is missing: %s", j->image, strerror(-img));
		return img;
	}
	ret = kp_record_read_len(img, j->image, UINT64_MAX, &have);
	if (ret == -ENODATA) {
		kp_err("image %s is truncated: empty", j->image);
		ret = -EIO;
	}
	if (!ret && have != want) {
		kp_err("image %s is corrupt: it holds %" PRIu64 " bytes, the BOs of GPU %u need %" PRIu64,
		       j->image, have, j->gpu_id, want);
		ret = -EIO;
	}
	for (i = 0; !ret && i < j->nbos; i++)
		ret = kp_copy_bo(j, img, &j->bos[i]);
	if (!ret) {
		n = kp_read_all(img, &extra, 1);
		if (n != 0) {
			kp_err("image %s is corrupt: data after the last BO",
			       j->image);
			ret = -EIO;
		}
	}
	close(img);
	return ret;
}

static void *kp_job_main(void *arg)
{
	struct kp_copy_job *j = arg;

	j->ret = j->dir == KP_COPY_SAVE ? kp_job_save(j) : kp_job_load(j);
	return NULL;
}

int kp_copy_run(struct kp_copy_job *jobs, unsigned int njobs,
		uint64_t max_buffer)
{
	uint64_t page = kp_page_size(), window;
	bool *threaded;
	unsigned int i;
	int ret = 0;

	if (!njobs)
		return 0;
	window = max_buffer / njobs / page * page;
	if (window < page)
		window = page;
	threaded = calloc(njobs, sizeof(*threaded));
	if (!threaded)
		return -ENOMEM;

	/* Job 0 runs in the caller; a job whose thread fails runs later. */
	for (i = 0; i < njobs; i++) {
		jobs[i].window = window;
		jobs[i].ret = 0;
		if (i && !pthread_create(&jobs[i].thread, NULL, kp_job_main,
					 &jobs[i]))
			threaded[i] = true;
	}
	for (i = 0; i < njobs; i++) {
		if (threaded[i])
			pthread_join(jobs[i].thread, NULL);
		else
			kp_job_main(&jobs[i]);
		if (jobs[i].ret && !ret)
			ret = jobs[i].ret;
	}
	free(threaded);
	return ret;
}
