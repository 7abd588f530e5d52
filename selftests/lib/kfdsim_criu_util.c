// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers for tests of the KFD CRIU ioctl (see kfdsim_criu_util.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/dma-buf.h>

#include "kfdsim_criu_util.h"
#include "kfdsim_test.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd		438
#endif

/* ---- the ioctl ---- */

int kc_criu(int fd, struct kfd_ioctl_criu_args *args)
{
	return kt_ioctl(fd, AMDKFD_IOC_CRIU_OP, args);
}

int kc_process_info(int fd, struct kc_image *img)
{
	struct kfd_ioctl_criu_args a = { .op = KFD_CRIU_OP_PROCESS_INFO };
	int ret = kc_criu(fd, &a);

	if (ret)
		return ret;
	img->num_devices = a.num_devices;
	img->num_bos = a.num_bos;
	img->num_objects = a.num_objects;
	img->priv_size = a.priv_data_size;
	img->pid = a.pid;
	return 0;
}

static void kc_image_free_arrays(struct kc_image *img)
{
	uint32_t i;

	if (img->data) {
		for (i = 0; i < img->num_bos; i++)
			free(img->data[i]);
	}
	free(img->data);
	free(img->devices);
	free(img->bos);
	free(img->priv);
	img->data = NULL;
	img->devices = NULL;
	img->bos = NULL;
	img->priv = NULL;
}

static int kc_image_alloc(struct kc_image *img)
{
	img->devices = calloc(img->num_devices + 1, sizeof(*img->devices));
	img->bos = calloc(img->num_bos + 1, sizeof(*img->bos));
	img->data = calloc(img->num_bos + 1, sizeof(*img->data));
	img->priv = calloc(1, img->priv_size + 1);
	if (!img->devices || !img->bos || !img->data || !img->priv) {
		kc_image_free_arrays(img);
		return -ENOMEM;
	}
	return 0;
}

int kc_checkpoint(int fd, struct kc_image *img)
{
	struct kfd_ioctl_criu_args a = { .op = KFD_CRIU_OP_CHECKPOINT };
	uint32_t i;
	int ret;

	ret = kc_image_alloc(img);
	if (ret)
		return ret;
	/* Poison the outputs so a field the kernel skips shows. */
	for (i = 0; i < img->num_bos; i++)
		img->bos[i].dmabuf_fd = 0xdeadbeef;
	a.devices = (uintptr_t)img->devices;
	a.bos = (uintptr_t)img->bos;
	a.priv_data = (uintptr_t)img->priv;
	a.num_devices = img->num_devices;
	a.num_bos = img->num_bos;
	a.num_objects = img->num_objects;
	a.priv_data_size = img->priv_size;
	ret = kc_criu(fd, &a);
	if (ret)
		kc_image_free_arrays(img);
	return ret;
}

int kc_unpause(int fd)
{
	struct kfd_ioctl_criu_args a = { .op = KFD_CRIU_OP_UNPAUSE };

	return kc_criu(fd, &a);
}

int kc_resume(int fd, pid_t pid)
{
	struct kfd_ioctl_criu_args a = {
		.op = KFD_CRIU_OP_RESUME,
		.pid = (uint32_t)pid,
	};

	return kc_criu(fd, &a);
}

int kc_restore(int fd, const struct kc_image *img,
	       const struct kfd_criu_device_bucket *devices,
	       struct kfd_criu_bo_bucket *bos_out)
{
	struct kfd_ioctl_criu_args a = {
		.devices = (uintptr_t)devices,
		.bos = (uintptr_t)bos_out,
		.priv_data = (uintptr_t)img->priv,
		.priv_data_size = img->priv_size,
		.num_devices = img->num_devices,
		.num_bos = img->num_bos,
		.num_objects = img->num_objects,
		.op = KFD_CRIU_OP_RESTORE,
	};

	memcpy(bos_out, img->bos, img->num_bos * sizeof(*bos_out));
	return kc_criu(fd, &a);
}

bool kc_bo_has_dmabuf(const struct kfd_criu_bo_bucket *b)
{
	return b->alloc_flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
				 KFD_IOC_ALLOC_MEM_FLAGS_GTT);
}

uint32_t kc_count_dmabufs(const struct kc_image *img)
{
	uint32_t i, n = 0;

	for (i = 0; i < img->num_bos; i++)
		n += kc_bo_has_dmabuf(&img->bos[i]);
	return n;
}

void kc_close_dmabufs(struct kfd_criu_bo_bucket *bos, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (bos[i].dmabuf_fd != KC_INVALID_FD &&
		    bos[i].dmabuf_fd <= INT_MAX)
			close((int)bos[i].dmabuf_fd);
		bos[i].dmabuf_fd = KC_INVALID_FD;
	}
}

/* ---- dma-bufs ---- */

static int kc_dmabuf_sync(int fd, uint64_t flags)
{
	struct dma_buf_sync s = { .flags = flags };

	return kt_ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
}

static int kc_dmabuf_copy(int fd, void *buf, size_t len, bool write)
{
	uint64_t dir = write ? DMA_BUF_SYNC_WRITE : DMA_BUF_SYNC_READ;
	void *map;
	int ret;

	map = mmap(NULL, len, write ? PROT_READ | PROT_WRITE : PROT_READ,
		   MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	ret = kc_dmabuf_sync(fd, DMA_BUF_SYNC_START | dir);
	if (!ret) {
		if (write)
			memcpy(map, buf, len);
		else
			memcpy(buf, map, len);
		ret = kc_dmabuf_sync(fd, DMA_BUF_SYNC_END | dir);
	}
	munmap(map, len);
	return ret;
}

int kc_dmabuf_read(int fd, void *buf, size_t len)
{
	return kc_dmabuf_copy(fd, buf, len, false);
}

int kc_dmabuf_write(int fd, const void *buf, size_t len)
{
	return kc_dmabuf_copy(fd, (void *)buf, len, true);
}

int kc_read_contents(struct kc_image *img, pid_t pid)
{
	struct kfd_criu_bo_bucket *b;
	struct iovec local, remote;
	uint32_t i;
	int ret;

	for (i = 0; i < img->num_bos; i++) {
		b = &img->bos[i];
		if (!kc_bo_has_dmabuf(b) &&
		    (!(b->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) ||
		     pid <= 0))
			continue;
		img->data[i] = malloc(b->size);
		if (!img->data[i])
			return -ENOMEM;
		if (kc_bo_has_dmabuf(b)) {
			if (b->dmabuf_fd > INT_MAX)
				return -EBADF;
			ret = kc_dmabuf_read((int)b->dmabuf_fd, img->data[i],
					     b->size);
			if (ret)
				return ret;
			close((int)b->dmabuf_fd);
			b->dmabuf_fd = KC_INVALID_FD;
			continue;
		}
		/* USERPTR: what CRIU would dump from the target's memory. */
		local.iov_base = img->data[i];
		local.iov_len = b->size;
		remote.iov_base = (void *)(uintptr_t)b->offset;
		remote.iov_len = b->size;
		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) !=
		    (ssize_t)b->size)
			return -EIO;
	}
	return 0;
}

void kc_image_free(struct kc_image *img)
{
	kc_image_free_arrays(img);
	memset(img, 0, sizeof(*img));
}

int kc_image_dup(struct kc_image *dst, const struct kc_image *src)
{
	uint32_t i;

	*dst = *src;
	dst->devices = NULL;
	dst->bos = NULL;
	dst->data = NULL;
	dst->priv = NULL;
	if (kc_image_alloc(dst))
		return -ENOMEM;
	memcpy(dst->devices, src->devices,
	       src->num_devices * sizeof(*src->devices));
	memcpy(dst->bos, src->bos, src->num_bos * sizeof(*src->bos));
	memcpy(dst->priv, src->priv, src->priv_size);
	for (i = 0; i < src->num_bos; i++) {
		if (!src->data[i])
			continue;
		dst->data[i] = malloc(src->bos[i].size);
		if (!dst->data[i]) {
			kc_image_free(dst);
			return -ENOMEM;
		}
		memcpy(dst->data[i], src->data[i], src->bos[i].size);
	}
	return 0;
}

/* ---- files ---- */

/*
 * All @len bytes of @buf written to @fd (@out) or read from it (@buf is
 * only read from when @out). 0 or -errno; -EIO if the file ended first.
 */
static int kc_xfer(int fd, void *buf, size_t len, bool out)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = out ? write(fd, p, len) : read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

int kc_write_file(const char *dir, const char *name, const void *buf,
		  size_t len)
{
	char path[PATH_MAX];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = kc_xfer(fd, (void *)buf, len, true);
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

int kc_read_exact(const char *dir, const char *name, void *buf, size_t len)
{
	char path[PATH_MAX], extra;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = kc_xfer(fd, buf, len, false);
	/* The file must hold exactly what was asked for. */
	if (!ret && read(fd, &extra, 1) != 0)
		ret = -EIO;
	close(fd);
	return ret;
}

/* The counts, then one file per array and per BO content. */
struct kc_image_hdr {
	uint32_t magic;
	uint32_t num_devices;
	uint32_t num_bos;
	uint32_t num_objects;
	uint64_t priv_size;
	uint32_t pid;
	uint32_t pad;
};

#define KC_IMAGE_MAGIC	0x4b434930u

int kc_image_save(const struct kc_image *img, const char *dir)
{
	struct kc_image_hdr h = {
		.magic = KC_IMAGE_MAGIC,
		.num_devices = img->num_devices,
		.num_bos = img->num_bos,
		.num_objects = img->num_objects,
		.priv_size = img->priv_size,
		.pid = img->pid,
	};
	char name[32];
	uint32_t i;
	int ret;

	ret = kc_write_file(dir, "kc-header", &h, sizeof(h));
	if (!ret)
		ret = kc_write_file(dir, "kc-devices", img->devices,
				    img->num_devices * sizeof(*img->devices));
	if (!ret)
		ret = kc_write_file(dir, "kc-bos", img->bos,
				    img->num_bos * sizeof(*img->bos));
	if (!ret)
		ret = kc_write_file(dir, "kc-priv", img->priv, img->priv_size);
	for (i = 0; !ret && i < img->num_bos; i++) {
		if (!img->data[i])
			continue;
		snprintf(name, sizeof(name), "kc-bo-%u", i);
		ret = kc_write_file(dir, name, img->data[i], img->bos[i].size);
	}
	return ret;
}

int kc_image_load(struct kc_image *img, const char *dir)
{
	struct kc_image_hdr h;
	char name[32], path[PATH_MAX];
	uint32_t i;
	int ret;

	memset(img, 0, sizeof(*img));
	ret = kc_read_exact(dir, "kc-header", &h, sizeof(h));
	if (ret)
		return ret;
	if (h.magic != KC_IMAGE_MAGIC || h.num_bos > (1u << 20) ||
	    h.num_devices > KT_MAX_GPUS || h.priv_size > (64u << 20))
		return -EINVAL;
	img->num_devices = h.num_devices;
	img->num_bos = h.num_bos;
	img->num_objects = h.num_objects;
	img->priv_size = h.priv_size;
	img->pid = h.pid;
	ret = kc_image_alloc(img);
	if (ret)
		return ret;
	ret = kc_read_exact(dir, "kc-devices", img->devices,
			    img->num_devices * sizeof(*img->devices));
	if (!ret)
		ret = kc_read_exact(dir, "kc-bos", img->bos,
				    img->num_bos * sizeof(*img->bos));
	if (!ret)
		ret = kc_read_exact(dir, "kc-priv", img->priv, img->priv_size);
	for (i = 0; !ret && i < img->num_bos; i++) {
		snprintf(name, sizeof(name), "kc-bo-%u", i);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (access(path, F_OK))
			continue;
		if (img->bos[i].size > (1ULL << 30)) {
			ret = -EINVAL;
			break;
		}
		img->data[i] = malloc(img->bos[i].size);
		if (!img->data[i]) {
			ret = -ENOMEM;
			break;
		}
		ret = kc_read_exact(dir, name, img->data[i], img->bos[i].size);
	}
	if (ret)
		kc_image_free(img);
	return ret;
}

/* ---- the target process ---- */

int kc_seize(pid_t pid, bool stop)
{
	int status;

	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL))
		return -errno;
	if (!stop)
		return 0;
	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL))
		return -errno;
	if (waitpid(pid, &status, __WALL) != pid)
		return -errno;
	return WIFSTOPPED(status) ? 0 : -ESRCH;
}

int kc_detach(pid_t pid)
{
	int status;

	if (!ptrace(PTRACE_DETACH, pid, NULL, NULL))
		return 0;
	if (errno != ESRCH)
		return -errno;
	/* Not stopped: stop it, then detach. */
	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL))
		return -errno;
	if (waitpid(pid, &status, __WALL) != pid)
		return -errno;
	return ptrace(PTRACE_DETACH, pid, NULL, NULL) ? -errno : 0;
}

int kc_getfd(pid_t pid, int fd)
{
	int pidfd, ret;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	ret = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (ret < 0)
		ret = -errno;
	close(pidfd);
	return ret;
}

/* ---- bookkeeping ---- */

int kc_count_fds(void)
{
	struct dirent *d;
	DIR *dir;
	int n = 0;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	/* Do not count the directory's own fd. */
	return n - 1;
}

int kc_fail_nth_set(int n)
{
	char buf[32];
	int fd, len, ret = 0;

	fd = open(KC_FAIL_NTH, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%d\n", n);
	if (write(fd, buf, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

int kc_fail_nth_get(void)
{
	unsigned long long v;
	int ret = kt_read_ull(KC_FAIL_NTH, &v);

	return ret ? ret : (int)v;
}

int kc_fail_nth_done(int *left, int *points)
{
	unsigned long long v;
	int ret;

	*left = kc_fail_nth_get();
	ret = kc_fail_nth_set(0);
	if (!ret)
		ret = kt_read_ull(KC_FAIL_POINTS, &v);
	*points = ret ? -1 : (int)v;
	return *left < 0 ? *left : ret;
}

/* ---- the private data ---- */

void *kc_priv_object(const struct kc_image *img, uint32_t index,
		     uint32_t *type, uint32_t *size)
{
	const struct kc_hdr *h = (const void *)img->priv;
	struct kc_obj *obj;
	uint64_t off = sizeof(*h);
	uint32_t i;

	if (img->priv_size < sizeof(*h) || index >= h->num_objects)
		return NULL;
	for (i = 0;; i++) {
		if (img->priv_size - off < sizeof(*obj))
			return NULL;
		obj = (void *)(img->priv + off);
		off += sizeof(*obj);
		if (obj->size > img->priv_size - off)
			return NULL;
		if (i == index) {
			*type = obj->type;
			*size = obj->size;
			return obj + 1;
		}
		off += obj->size;
	}
}

void *kc_priv_find(const struct kc_image *img, uint32_t type, uint32_t nth)
{
	const struct kc_hdr *h = (const void *)img->priv;
	uint32_t i, t, s;
	void *p;

	if (img->priv_size < sizeof(*h))
		return NULL;
	for (i = 0; i < h->num_objects; i++) {
		p = kc_priv_object(img, i, &t, &s);
		if (!p)
			return NULL;
		if (t == type && !nth--)
			return p;
	}
	return NULL;
}
