/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for tests of the KFD CRIU ioctl (AMDKFD_IOC_CRIU_OP) that do what
 * CRIU and its amdgpu plugin do, without CRIU: become the target's tracer,
 * take its /dev/kfd fd with pidfd_getfd(), run PROCESS_INFO and CHECKPOINT,
 * copy the buffer contents out through the dma-bufs, store everything in a
 * struct kc_image (in memory or in a directory), and hand it to RESTORE.
 *
 * Like kfdsim_test.h this does not include the kselftest harness: functions
 * return 0 or -errno.
 */
#ifndef KFDSIM_CRIU_UTIL_H
#define KFDSIM_CRIU_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/kfd_ioctl.h>

#define KC_FAIL_NTH	"/sys/kernel/debug/kfdsim/criu_fail_nth"
#define KC_FAIL_POINTS	"/sys/kernel/debug/kfdsim/criu_fail_points"
#define KC_INVALID_FD	0xffffffffu

/*
 * Everything a checkpoint of one /dev/kfd produces: the counts of
 * PROCESS_INFO, the device and BO buckets and the private data of
 * CHECKPOINT, and the contents of every BO (VRAM and GTT read through the
 * dma-buf, USERPTR read from the target's memory; NULL for the rest).
 */
struct kc_image {
	uint32_t num_devices;
	uint32_t num_bos;
	uint32_t num_objects;
	uint32_t pid;
	uint64_t priv_size;
	struct kfd_criu_device_bucket *devices;
	struct kfd_criu_bo_bucket *bos;
	uint8_t *priv;
	uint8_t **data;
};

/* ---- the ioctl ---- */

int kc_criu(int fd, struct kfd_ioctl_criu_args *args);
/* PROCESS_INFO: fills the counts, priv_size and pid of @img. */
int kc_process_info(int fd, struct kc_image *img);
/*
 * CHECKPOINT with the counts in @img (allocating the arrays). On success
 * the BO buckets hold the new dma-buf fds; on failure the arrays are freed.
 */
int kc_checkpoint(int fd, struct kc_image *img);
int kc_unpause(int fd);
int kc_resume(int fd, pid_t pid);

/*
 * RESTORE @img with @devices (num_devices entries, drm_fd set). The BO
 * buckets go in as CHECKPOINT wrote them and come back in @bos_out
 * (num_bos entries) with restored_offset and dmabuf_fd.
 */
int kc_restore(int fd, const struct kc_image *img,
	       const struct kfd_criu_device_bucket *devices,
	       struct kfd_criu_bo_bucket *bos_out);

/* Is @b a BO CHECKPOINT/RESTORE gives a dma-buf for? */
bool kc_bo_has_dmabuf(const struct kfd_criu_bo_bucket *b);
/* dma-buf fds in the buckets of @img (CHECKPOINT's output). */
uint32_t kc_count_dmabufs(const struct kc_image *img);
/* Close every dma-buf fd of the buckets and mark it KC_INVALID_FD. */
void kc_close_dmabufs(struct kfd_criu_bo_bucket *bos, uint32_t n);

/*
 * Copy the contents of every BO of @img into img->data: through the
 * dma-buf (which is then closed) or, for USERPTR BOs and @pid > 0, out of
 * the memory of @pid.
 */
int kc_read_contents(struct kc_image *img, pid_t pid);

void kc_image_free(struct kc_image *img);
/* Deep copy; 0 or -ENOMEM. */
int kc_image_dup(struct kc_image *dst, const struct kc_image *src);

/* Store @img as files in the existing directory @dir, and back. */
int kc_image_save(const struct kc_image *img, const char *dir);
int kc_image_load(struct kc_image *img, const char *dir);

/* Whole files (for a test's own additions to an image directory). */
int kc_write_file(const char *dir, const char *name, const void *buf,
		  size_t len);
/* Exactly @len bytes, else -EIO. */
int kc_read_exact(const char *dir, const char *name, void *buf, size_t len);

/* ---- dma-bufs ---- */

/* mmap the dma-buf and copy, bracketed by DMA_BUF_IOCTL_SYNC. */
int kc_dmabuf_read(int fd, void *buf, size_t len);
int kc_dmabuf_write(int fd, const void *buf, size_t len);

/* ---- the target process ---- */

/* PTRACE_SEIZE @pid; with @stop also PTRACE_INTERRUPT and wait for it. */
int kc_seize(pid_t pid, bool stop);
/* PTRACE_DETACH (the tracee must be stopped) or, if it runs, interrupt
 * it first. */
int kc_detach(pid_t pid);
/* A copy of fd @fd of process @pid (pidfd_open + pidfd_getfd). */
int kc_getfd(pid_t pid, int fd);

/* ---- bookkeeping ---- */

/* Open fds of the calling process. */
int kc_count_fds(void);
/*
 * Fault injection (debugfs criu_fail_nth, criu_fail_points): arm the
 * calling process's Nth fault-injection point (0 disarms) / read what is
 * left. kc_fail_nth_done() reads what is left and how many points the
 * process passed since arming (the failing one included), then disarms.
 */
int kc_fail_nth_set(int n);
int kc_fail_nth_get(void);
int kc_fail_nth_done(int *left, int *points);

/*
 * ---- the private data ----
 *
 * The kernel's format, version 2, described here independently of the
 * driver's kfd_criu.h: a version's layout may never change, so the tests
 * pin it. A header, then objects, each a type/size pair and its payload.
 * Version 2 is version 1 with a QUEUE payload that goes on after
 * kc_queue_v1 with a kc_cwsr_v2 and the control stack in use.
 */
#define KC_MAGIC	0x4b465343u
#define KC_MAX_PRIV	(64ULL << 20)
#define KC_VERSION	2

enum kc_obj_type {
	KC_OBJ_PROCESS = 1,
	KC_OBJ_DEVICE = 2,
	KC_OBJ_BO = 3,
	KC_OBJ_QUEUE = 4,
	KC_OBJ_EVENT = 5,
	KC_OBJ_SVM_RANGE = 6,
};

struct kc_hdr {
	uint32_t magic;
	uint32_t version;
	uint64_t size;
	uint32_t num_objects;
	uint32_t pad;
};

struct kc_obj {
	uint32_t type;
	uint32_t size;
};

struct kc_proc_v1 {
	uint32_t num_devices;
	uint32_t num_bos;
	uint32_t num_queues;
	uint32_t num_events;
	uint64_t events_page;
	uint32_t flags;
	uint32_t pad;
};

struct kc_dev_v1 {
	uint32_t user_gpu_id;
	uint32_t pad;
};

struct kc_bo_v1 {
	uint32_t id;
	uint32_t mapped;
	uint64_t user_addr;
};

struct kc_queue_v1 {
	uint32_t id;
	uint32_t user_gpu_id;
	uint32_t type;
	uint32_t doorbell;
	uint64_t ring_va;
	uint32_t ring_size;
	uint32_t percentage;
	uint64_t rptr_va;
	uint64_t wptr_va;
	uint32_t priority;
	uint32_t ctx_save_size;
	uint64_t eop_va;
	uint64_t eop_size;
	uint64_t ctx_save_va;
	uint32_t ctl_stack_size;
	uint32_t pad;
	uint64_t doorbell_value;
	uint64_t rptr;
	uint32_t iteration;
	uint32_t next_wg;
	uint32_t state_flags;
	uint32_t pad2;
};

/* Version 2: after each kc_queue_v1, and stack_bytes (padded to 8). */
struct kc_cwsr_v2 {
	uint32_t cntl_stack_offset;
	uint32_t wg_state_offset;
	uint32_t stack_bytes;
	uint32_t pad;
};

struct kc_event_v1 {
	uint32_t id;
	uint32_t type;
	uint32_t auto_reset;
	uint32_t signaled;
};

_Static_assert(sizeof(struct kc_hdr) == 24, "kc_hdr");
_Static_assert(sizeof(struct kc_proc_v1) == 32, "kc_proc_v1");
_Static_assert(sizeof(struct kc_queue_v1) == 120, "kc_queue_v1");

/*
 * The @index-th object of the private data (0 = the first after the
 * header), its type and payload size, or NULL if there is no such object or
 * the data is malformed.
 */
void *kc_priv_object(const struct kc_image *img, uint32_t index,
		     uint32_t *type, uint32_t *size);
/* The @nth object of type @type, or NULL. */
void *kc_priv_find(const struct kc_image *img, uint32_t type, uint32_t nth);

#endif /* KFDSIM_CRIU_UTIL_H */
