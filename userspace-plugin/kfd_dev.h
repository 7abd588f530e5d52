/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The devices this plugin handles: /dev/kfd and the DRM render nodes of
 * the GPUs in the KFD topology.
 */
#ifndef KFD_PLUGIN_KFD_DEV_H
#define KFD_PLUGIN_KFD_DEV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <linux/kfd_ioctl.h>

#include "topology.h"

#define KP_KFD_PATH		"/dev/kfd"
#define KP_RENDER_PATH_FMT	"/dev/dri/renderD%u"
#define KP_DRM_MAJOR		226
#define KP_RENDER_MINOR_FIRST	128

/* The oldest KFD whose CRIU ioctl this plugin can use. */
#define KP_KFD_MIN_MAJOR	1
#define KP_KFD_MIN_MINOR	8

/* Does this host have /dev/kfd? (Checked once, silently.) */
bool kp_kfd_present(void);
bool kp_is_kfd(const struct stat *st);
/*
 * The GPU whose render node @st is, if it is a KFD GPU's render node
 * (char major 226, minor >= 128, listed in the topology); else NULL.
 */
const struct kp_gpu *kp_render_gpu(const struct stat *st);
/* The local topology, read on first use; NULL (error logged) if unreadable. */
const struct kp_topology *kp_local_topology(void);
/* Forget the cached device state (plugin exit). */
void kp_dev_reset(void);

/* open(/dev/kfd), close-on-exec: fd or -errno (error logged). */
int kp_kfd_open(void);
/* ioctl() retried on EINTR/EAGAIN: 0 or -errno. */
int kp_ioctl(int fd, unsigned long req, void *arg);
/*
 * GET_VERSION on @kfd (a /dev/kfd of the caller). 0 if it is at least
 * 1.8; -ENOTSUP with an error line if older.
 */
int kp_kfd_check_version(int kfd, uint32_t *major, uint32_t *minor);
/* An open render node of @g, placed above every fd open now: fd or -errno. */
int kp_open_render_high(const struct kp_gpu *g);

#endif /* KFD_PLUGIN_KFD_DEV_H */
