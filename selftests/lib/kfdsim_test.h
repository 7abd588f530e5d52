/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kfdsim selftests: thin ioctl wrappers that return
 * 0 or -errno, topology and debugfs readers, and a way to run code in a
 * child process and get its verdict back.
 *
 * Nothing here includes kselftest_harness.h (it defines global symbols, so
 * only the test's own file may include it); failures come back as return
 * values and a message buffer for the test to assert on.
 */
#ifndef KFDSIM_TEST_H
#define KFDSIM_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/kfd_ioctl.h>
#include <stdlib.h>

/*
 * KFDSIM_TIMEOUT_SCALE (1 to 20, else 1): how many times slower than
 * usual the kernel under test is (make check-debug sets it). Hang guards
 * and the latency bounds tests assert are multiplied by it.
 */
static inline int kt_timeout_scale(void)
{
	const char *s = getenv("KFDSIM_TIMEOUT_SCALE");
	long n = s ? strtol(s, NULL, 10) : 1;

	return n < 2 || n > 20 ? 1 : (int)n;
}

#define KT_TOPOLOGY	"/sys/class/kfd/kfd/topology"
#define KT_NODES	KT_TOPOLOGY "/nodes"
#define KT_COUNTERS	"/sys/kernel/debug/kfdsim/counters"
#define KT_PARAMS	"/sys/module/kfdsim/parameters"

#define KT_MAX_GPUS	8
#define KT_PAGE		4096ULL
#define KT_MIB		(1ULL << 20)

/* Facts of the interface the tests check against. */
#define KT_DOORBELL_SIZE	8192ULL
#define KT_GPUVM_BASE		4096ULL
#define KT_GPUVM_LIMIT		((1ULL << 47) - 1)
#define KT_DRM_MAJOR		226

/* Domain flags, under shorter names. */
#define KT_VRAM		KFD_IOC_ALLOC_MEM_FLAGS_VRAM
#define KT_GTT		KFD_IOC_ALLOC_MEM_FLAGS_GTT
#define KT_USERPTR	KFD_IOC_ALLOC_MEM_FLAGS_USERPTR
#define KT_DOORBELL	KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL
#define KT_WRITABLE	((uint32_t)KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE)

/*
 * GPU virtual addresses for test BOs: slot n starts 4 GiB + n * 256 MiB,
 * clear of the aperture's ends and of each other for BOs up to 256 MiB.
 */
#define KT_VA(n)	(0x100000000ULL + (uint64_t)(n) * 0x10000000ULL)

struct kt_gpu {
	uint32_t gpu_id;
	uint32_t node;		/* topology node number */
	int render_minor;
};

/* A process's view of the simulator: /dev/kfd and one render fd per GPU. */
struct kt_env {
	int kfd;
	int ngpus;
	struct kt_gpu gpu[KT_MAX_GPUS];
	int render[KT_MAX_GPUS];
};

/* Errno-style wrappers: 0 on success, -errno on failure. */
int kt_ioctl(int fd, unsigned long req, void *arg);
/*
 * @name (a relative path) next to the running test binary, in @path of
 * @len bytes (at least 64). 0 or -errno.
 */
int kt_exe_sibling(const char *name, char *path, size_t len);
int kt_open_kfd(void);
int kt_open_render(int minor);
int kt_acquire_vm(int kfd, int drm_fd, uint32_t gpu_id);
/*
 * @offset: in: the user address for USERPTR (ignored otherwise);
 * out: the mmap offset the driver returned. @handle and @offset may be NULL.
 */
int kt_alloc(int kfd, uint32_t gpu_id, uint64_t va, uint64_t size,
	     uint32_t flags, uint64_t *handle, uint64_t *offset);
int kt_free(int kfd, uint64_t handle);
int kt_map(int kfd, uint64_t handle, const uint32_t *ids, uint32_t n);
int kt_unmap(int kfd, uint64_t handle, const uint32_t *ids, uint32_t n);
int kt_available(int kfd, uint32_t gpu_id, uint64_t *avail);
int kt_export(int kfd, uint64_t handle, uint32_t flags, int *dmabuf_fd);

/* GPUs in topology order (nodes with a non-zero gpu_id); count or -errno. */
int kt_gpus(struct kt_gpu *gpus, int max);

/*
 * Open /dev/kfd and a render node per GPU; with @acquire, bind each
 * render fd with ACQUIRE_VM. Returns 0 or -errno (then nothing is open).
 */
int kt_env_open(struct kt_env *e, bool acquire);
void kt_env_close(struct kt_env *e);

/* All GPU ids of @e, for MAP/UNMAP on every GPU. */
void kt_env_ids(const struct kt_env *e, uint32_t *ids);
/* A gpu_id no GPU of @e has: one more than the largest. */
uint32_t kt_unused_gpu_id(const struct kt_env *e);

/* Small sysfs helpers. */
int kt_read_file(const char *path, char *buf, size_t len);	/* bytes */
int kt_read_ull(const char *path, unsigned long long *val);
int kt_param(const char *name, unsigned long long *val);
int kt_count_subdirs(const char *path);

/* "key value" files (topology properties, debugfs counters). */
#define KT_MAX_PROPS	96

struct kt_prop {
	char key[48];
	unsigned long long val;
};

struct kt_props {
	int n;
	struct kt_prop p[KT_MAX_PROPS];
	int sibling_bits;	/* entries of a cache's sibling_map, or -1 */
};

/*
 * Parse @path strictly the way the thunk reads it: every line is
 * "<key> <decimal>\n"; @sibling_map allows a last "sibling_map 0,1,..."
 * line (caches). Returns 0, or -1 with the reason in @err.
 */
int kt_props_read(const char *path, bool sibling_map, struct kt_props *props,
		  char *err, size_t errlen);
bool kt_prop(const struct kt_props *props, const char *key,
	     unsigned long long *val);

/* debugfs counters: one kt_props of "name value" lines. */
int kt_counters(struct kt_props *c, char *err, size_t errlen);
/* Names whose values differ, "name a->b ..." in @buf; returns the count. */
int kt_counters_diff(const struct kt_props *a, const struct kt_props *b,
		     char *buf, size_t len);
long long kt_counter(const struct kt_props *c, const char *name);
/*
 * How far counter @name moved since @base was read: its current value
 * minus its value in @base (a counter that cannot be read counts as -1).
 */
long long kt_counter_delta(const struct kt_props *base, const char *name);

/*
 * Run @fn in a forked child. The child's return value (0 = success) and
 * its message come back; a child that crashes yields -1 and a message
 * saying how it died.
 */
typedef int (*kt_child_fn)(void *arg, char *msg, size_t len);
int kt_run_child(kt_child_fn fn, void *arg, char *msg, size_t len);

/* In a kt_child_fn: fail with a message unless @cond holds. */
#define KT_CHECK(cond, ...) do {				\
	if (!(cond)) {						\
		snprintf(msg, len, __VA_ARGS__);		\
		return -1;					\
	}							\
} while (0)

/* Pass an fd over a unix socket (SCM_RIGHTS). 0 / fd, or -errno. */
int kt_send_fd(int sock, int fd);
int kt_recv_fd(int sock);

/* Fill / check a buffer with a pattern derived from @seed. */
void kt_fill(void *buf, size_t len, uint32_t seed);
bool kt_check(const void *buf, size_t len, uint32_t seed);
bool kt_is_zero(const void *buf, size_t len);
/* The first byte at which two buffers differ, or -1. */
long kt_first_diff(const void *a, const void *b, size_t len);

/* Anonymous private read-write memory (e.g. for USERPTR BOs), or NULL. */
void *kt_anon(size_t size);

#endif /* KFDSIM_TEST_H */
