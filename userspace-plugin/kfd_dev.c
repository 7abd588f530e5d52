// SPDX-License-Identifier: GPL-2.0
/*
 * Recognising and opening /dev/kfd and the KFD GPUs' render nodes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kfd_dev.h"
#include "util.h"

static struct {
	bool probed;
	bool present;
	dev_t rdev;
	struct kp_topology *topo;
	bool topo_failed;
} kp_dev;

bool kp_kfd_present(void)
{
	struct stat st;

	if (!kp_dev.probed) {
		kp_dev.probed = true;
		if (!stat(KP_KFD_PATH, &st) && S_ISCHR(st.st_mode)) {
			kp_dev.present = true;
			kp_dev.rdev = st.st_rdev;
		}
	}
	return kp_dev.present;
}

bool kp_is_kfd(const struct stat *st)
{
	return kp_kfd_present() && S_ISCHR(st->st_mode) &&
	       st->st_rdev == kp_dev.rdev;
}

const struct kp_topology *kp_local_topology(void)
{
	int ret;

	if (kp_dev.topo)
		return kp_dev.topo;
	if (kp_dev.topo_failed)
		return NULL;
	kp_dev.topo = malloc(sizeof(*kp_dev.topo));
	if (!kp_dev.topo) {
		kp_err("out of memory reading the KFD topology");
		return NULL;
	}
	ret = kp_topology_read(kp_dev.topo);
	if (ret) {
		kp_err("cannot read the KFD topology: %s", strerror(-ret));
		free(kp_dev.topo);
		kp_dev.topo = NULL;
		kp_dev.topo_failed = true;
	}
	return kp_dev.topo;
}

const struct kp_gpu *kp_render_gpu(const struct stat *st)
{
	const struct kp_topology *t;

	if (!kp_kfd_present() || !S_ISCHR(st->st_mode) ||
	    major(st->st_rdev) != KP_DRM_MAJOR ||
	    minor(st->st_rdev) < KP_RENDER_MINOR_FIRST)
		return NULL;
	t = kp_local_topology();
	return t ? kp_topology_by_minor(t, minor(st->st_rdev)) : NULL;
}

void kp_dev_reset(void)
{
	free(kp_dev.topo);
	memset(&kp_dev, 0, sizeof(kp_dev));
}

int kp_kfd_open(void)
{
	int fd = open(KP_KFD_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fd = -errno;
		kp_err("cannot open %s: %s", KP_KFD_PATH, strerror(-fd));
	}
	return fd;
}

int kp_ioctl(int fd, unsigned long req, void *arg)
{
	while (ioctl(fd, req, arg)) {
		if (errno != EINTR && errno != EAGAIN)
			return -errno;
	}
	return 0;
}

int kp_kfd_check_version(int kfd, uint32_t *major_out, uint32_t *minor_out)
{
	struct kfd_ioctl_get_version_args v = { 0 };
	int ret;

	ret = kp_ioctl(kfd, AMDKFD_IOC_GET_VERSION, &v);
	if (ret) {
		kp_err("GET_VERSION on %s failed: %s", KP_KFD_PATH,
		       strerror(-ret));
		return ret;
	}
	if (major_out)
		*major_out = v.major_version;
	if (minor_out)
		*minor_out = v.minor_version;
	if (v.major_version < KP_KFD_MIN_MAJOR ||
	    (v.major_version == KP_KFD_MIN_MAJOR &&
	     v.minor_version < KP_KFD_MIN_MINOR)) {
		kp_err("kernel too old: %s reports KFD %u.%u; checkpoint/restore needs KFD %u.%u or newer",
		       KP_KFD_PATH, v.major_version, v.minor_version,
		       KP_KFD_MIN_MAJOR, KP_KFD_MIN_MINOR);
		return -ENOTSUP;
	}
	return 0;
}

int kp_open_render_high(const struct kp_gpu *g)
{
	char path[64];
	struct stat st;
	int fd, ret;

	snprintf(path, sizeof(path), KP_RENDER_PATH_FMT, g->render_minor);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		kp_err("cannot open %s (GPU %u): %s", path, g->gpu_id,
		       strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode) ||
	    major(st.st_rdev) != KP_DRM_MAJOR ||
	    minor(st.st_rdev) != g->render_minor) {
		kp_err("%s is not the render node of GPU %u", path, g->gpu_id);
		close(fd);
		return -ENODEV;
	}
	/* Above every fd now open, so CRIU can put the process's fds back. */
	ret = kp_move_fd_high(fd);
	if (ret < 0)
		kp_err("cannot move the fd of %s: %s", path, strerror(-ret));
	return ret;
}
