// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the kfdsim selftests (see kfdsim_test.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kfdsim_test.h"

int kt_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

int kt_exe_sibling(const char *name, char *path, size_t len)
{
	char *slash;
	ssize_t n;

	if (len < 64)
		return -EINVAL;
	n = readlink("/proc/self/exe", path, len - 64);
	if (n < 0)
		return -errno;
	path[n] = 0;
	slash = strrchr(path, '/');
	if (!slash)
		return -ENOENT;
	snprintf(slash, len - (slash - path), "/%s", name);
	return 0;
}

int kt_open_kfd(void)
{
	int fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int kt_open_render(int minor)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int kt_acquire_vm(int kfd, int drm_fd, uint32_t gpu_id)
{
	struct kfd_ioctl_acquire_vm_args a = {
		.drm_fd = (uint32_t)drm_fd,
		.gpu_id = gpu_id,
	};

	return kt_ioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &a);
}

int kt_alloc(int kfd, uint32_t gpu_id, uint64_t va, uint64_t size,
	     uint32_t flags, uint64_t *handle, uint64_t *offset)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args a = {
		.va_addr = va,
		.size = size,
		.gpu_id = gpu_id,
		.flags = flags,
		.mmap_offset = offset ? *offset : 0,
	};
	int ret = kt_ioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a);

	if (ret)
		return ret;
	if (handle)
		*handle = a.handle;
	if (offset)
		*offset = a.mmap_offset;
	return 0;
}

int kt_free(int kfd, uint64_t handle)
{
	struct kfd_ioctl_free_memory_of_gpu_args a = { .handle = handle };

	return kt_ioctl(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &a);
}

/* MAP or UNMAP (@req): both take the same four fields. */
_Static_assert(sizeof(struct kfd_ioctl_map_memory_to_gpu_args) ==
	       sizeof(struct kfd_ioctl_unmap_memory_from_gpu_args),
	       "MAP and UNMAP arguments differ");
static int kt_map_op(int kfd, unsigned long req, uint64_t handle,
		     const uint32_t *ids, uint32_t n)
{
	struct kfd_ioctl_map_memory_to_gpu_args a = {
		.handle = handle,
		.device_ids_array_ptr = (uintptr_t)ids,
		.n_devices = n,
	};
	int ret = kt_ioctl(kfd, req, &a);

	if (!ret && a.n_success != n)
		return -EPROTO;
	return ret;
}

int kt_map(int kfd, uint64_t handle, const uint32_t *ids, uint32_t n)
{
	return kt_map_op(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, handle, ids, n);
}

int kt_unmap(int kfd, uint64_t handle, const uint32_t *ids, uint32_t n)
{
	return kt_map_op(kfd, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, handle, ids, n);
}

int kt_available(int kfd, uint32_t gpu_id, uint64_t *avail)
{
	struct kfd_ioctl_get_available_memory_args a = { .gpu_id = gpu_id };
	int ret = kt_ioctl(kfd, AMDKFD_IOC_AVAILABLE_MEMORY, &a);

	if (!ret)
		*avail = a.available;
	return ret;
}

int kt_export(int kfd, uint64_t handle, uint32_t flags, int *dmabuf_fd)
{
	struct kfd_ioctl_export_dmabuf_args a = {
		.handle = handle,
		.flags = flags,
		.dmabuf_fd = 0xffffffff,
	};
	int ret = kt_ioctl(kfd, AMDKFD_IOC_EXPORT_DMABUF, &a);

	if (!ret)
		*dmabuf_fd = (int)a.dmabuf_fd;
	return ret;
}

int kt_read_file(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got + 1 < len) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		if (!n)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return (int)got;
}

/* A whole file that is one decimal number and a newline. */
int kt_read_ull(const char *path, unsigned long long *val)
{
	char buf[64], *end;
	int n = kt_read_file(path, buf, sizeof(buf));

	if (n < 0)
		return n;
	if (n < 2 || buf[n - 1] != '\n' || !isdigit((unsigned char)buf[0]))
		return -EINVAL;
	errno = 0;
	*val = strtoull(buf, &end, 10);
	if (errno || *end != '\n' || end != buf + n - 1)
		return -EINVAL;
	return 0;
}

int kt_param(const char *name, unsigned long long *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", KT_PARAMS, name);
	return kt_read_ull(path, val);
}

int kt_count_subdirs(const char *path)
{
	struct dirent *d;
	int n = 0;
	DIR *dir;

	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		if (d->d_type == DT_DIR)
			n++;
	}
	closedir(dir);
	return n;
}

int kt_gpus(struct kt_gpu *gpus, int max)
{
	char path[256];
	unsigned long long id, minor;
	struct kt_props *props;
	int nodes, node, n = 0;

	nodes = kt_count_subdirs(KT_NODES);
	if (nodes < 0)
		return nodes;
	props = malloc(sizeof(*props));
	if (!props)
		return -ENOMEM;
	for (node = 0; node < nodes; node++) {
		char err[128];

		snprintf(path, sizeof(path), "%s/%d/gpu_id", KT_NODES, node);
		if (kt_read_ull(path, &id))
			goto bad;
		if (!id)
			continue;
		snprintf(path, sizeof(path), "%s/%d/properties", KT_NODES,
			 node);
		if (kt_props_read(path, false, props, err, sizeof(err)) ||
		    !kt_prop(props, "drm_render_minor", &minor))
			goto bad;
		if (n == max)
			break;
		gpus[n].gpu_id = (uint32_t)id;
		gpus[n].node = node;
		gpus[n].render_minor = (int)minor;
		n++;
	}
	free(props);
	return n;
bad:
	free(props);
	return -EINVAL;
}

void kt_env_close(struct kt_env *e)
{
	int i;

	for (i = 0; i < e->ngpus; i++)
		if (e->render[i] >= 0)
			close(e->render[i]);
	if (e->kfd >= 0)
		close(e->kfd);
	e->kfd = -1;
	e->ngpus = 0;
}

int kt_env_open(struct kt_env *e, bool acquire)
{
	int i, ret;

	e->kfd = -1;
	e->ngpus = 0;
	ret = kt_gpus(e->gpu, KT_MAX_GPUS);
	if (ret < 0)
		return ret;
	if (!ret)
		return -ENODEV;
	e->ngpus = ret;
	for (i = 0; i < e->ngpus; i++)
		e->render[i] = -1;

	ret = kt_open_kfd();
	if (ret < 0)
		goto err;
	e->kfd = ret;
	for (i = 0; i < e->ngpus; i++) {
		ret = kt_open_render(e->gpu[i].render_minor);
		if (ret < 0)
			goto err;
		e->render[i] = ret;
		if (acquire) {
			ret = kt_acquire_vm(e->kfd, e->render[i],
					    e->gpu[i].gpu_id);
			if (ret)
				goto err;
		}
	}
	return 0;
err:
	kt_env_close(e);
	return ret;
}

void kt_env_ids(const struct kt_env *e, uint32_t *ids)
{
	int i;

	for (i = 0; i < e->ngpus; i++)
		ids[i] = e->gpu[i].gpu_id;
}

uint32_t kt_unused_gpu_id(const struct kt_env *e)
{
	uint32_t id = 0;
	int i;

	for (i = 0; i < e->ngpus; i++)
		if (e->gpu[i].gpu_id > id)
			id = e->gpu[i].gpu_id;
	return id + 1;
}

static bool kt_key_ok(const char *s, size_t n)
{
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) &&
		    !isdigit((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

/* "0,1,1,0": returns the number of entries, or -1. */
static int kt_sibling_map(const char *s, size_t n)
{
	size_t i;
	int bits = 0;

	for (i = 0; i < n; i += 2) {
		if (s[i] != '0' && s[i] != '1')
			return -1;
		bits++;
		if (i + 1 < n && s[i + 1] != ',')
			return -1;
	}
	return (n && s[n - 1] != ',') ? bits : -1;
}

int kt_props_read(const char *path, bool sibling_map, struct kt_props *props,
		  char *err, size_t errlen)
{
	static char buf[16384];
	char *line, *next, *sp, *end;
	int n, lineno = 0;

	props->n = 0;
	props->sibling_bits = -1;
	n = kt_read_file(path, buf, sizeof(buf));
	if (n < 0) {
		snprintf(err, errlen, "%s: read failed: %s", path,
			 strerror(-n));
		return -1;
	}
	/* The thunk reads one page; anything past it would be lost. */
	if (n == 0 || n >= 4096 || buf[n - 1] != '\n') {
		snprintf(err, errlen, "%s: %d bytes, %s", path, n,
			 n && buf[n - 1] == '\n' ? "too long" :
			 "not newline-terminated");
		return -1;
	}
	for (line = buf; *line; line = next) {
		unsigned long long v;
		int i;

		lineno++;
		next = strchr(line, '\n');
		*next++ = '\0';
		sp = strchr(line, ' ');
		if (!sp || !kt_key_ok(line, sp - line) ||
		    (size_t)(sp - line) >= sizeof(props->p[0].key)) {
			snprintf(err, errlen, "%s:%d: bad line '%s'", path,
				 lineno, line);
			return -1;
		}
		*sp++ = '\0';
		if (sibling_map && !strcmp(line, "sibling_map")) {
			props->sibling_bits = kt_sibling_map(sp, strlen(sp));
			if (props->sibling_bits < 0 || *next) {
				snprintf(err, errlen,
					 "%s:%d: bad or misplaced sibling_map",
					 path, lineno);
				return -1;
			}
			continue;
		}
		errno = 0;
		v = strtoull(sp, &end, 10);
		if (!isdigit((unsigned char)*sp) || errno || *end) {
			snprintf(err, errlen, "%s:%d: '%s' value '%s' is not a decimal number",
				 path, lineno, line, sp);
			return -1;
		}
		for (i = 0; i < props->n; i++) {
			if (!strcmp(props->p[i].key, line)) {
				snprintf(err, errlen, "%s:%d: duplicate key %s",
					 path, lineno, line);
				return -1;
			}
		}
		if (props->n == KT_MAX_PROPS) {
			snprintf(err, errlen, "%s: too many lines", path);
			return -1;
		}
		strcpy(props->p[props->n].key, line);
		props->p[props->n].val = v;
		props->n++;
	}
	return 0;
}

bool kt_prop(const struct kt_props *props, const char *key,
	     unsigned long long *val)
{
	int i;

	for (i = 0; i < props->n; i++) {
		if (!strcmp(props->p[i].key, key)) {
			if (val)
				*val = props->p[i].val;
			return true;
		}
	}
	return false;
}

int kt_counters(struct kt_props *c, char *err, size_t errlen)
{
	return kt_props_read(KT_COUNTERS, false, c, err, errlen);
}

long long kt_counter(const struct kt_props *c, const char *name)
{
	unsigned long long v;

	return kt_prop(c, name, &v) ? (long long)v : -1;
}

long long kt_counter_delta(const struct kt_props *base, const char *name)
{
	struct kt_props c;
	char err[256];
	long long now = -1;

	if (!kt_counters(&c, err, sizeof(err)))
		now = kt_counter(&c, name);
	return now - kt_counter(base, name);
}

int kt_counters_diff(const struct kt_props *a, const struct kt_props *b,
		     char *buf, size_t len)
{
	size_t off = 0;
	int i, ndiff = 0;

	buf[0] = '\0';
	for (i = 0; i < a->n; i++) {
		long long vb = kt_counter(b, a->p[i].key);

		if (vb == (long long)a->p[i].val)
			continue;
		ndiff++;
		if (off < len)
			off += snprintf(buf + off, len - off, "%s %llu->%lld ",
					a->p[i].key, a->p[i].val, vb);
	}
	if (a->n != b->n) {
		ndiff++;
		if (off < len)
			snprintf(buf + off, len - off, "(%d vs %d counters)",
				 a->n, b->n);
	}
	return ndiff;
}

int kt_run_child(kt_child_fn fn, void *arg, char *msg, size_t len)
{
	int pipefd[2], status, ret;
	ssize_t n;
	size_t got = 0;
	pid_t pid;

	msg[0] = '\0';
	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return ret;
	}
	if (!pid) {
		close(pipefd[0]);
		ret = fn(arg, msg, len);
		if (write(pipefd[1], msg, strlen(msg)) < 0)
			_exit(3);
		_exit(ret ? 1 : 0);
	}
	close(pipefd[1]);
	while (got + 1 < len) {
		n = read(pipefd[0], msg + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	msg[got] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		snprintf(msg + got, len - got, " (child killed by signal %d)",
			 WTERMSIG(status));
	else if (!got)
		snprintf(msg, len, "child exited with status %d",
			 WEXITSTATUS(status));
	return -1;
}

int kt_send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'F';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -errno;
}

int kt_recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -EIO;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* xorshift32: cheap, and a different seed gives a different pattern. */
static uint32_t kt_next(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

void kt_fill(void *buf, size_t len, uint32_t seed)
{
	uint32_t s = seed | 1, *p = buf;
	size_t i;

	for (i = 0; i < len / 4; i++)
		p[i] = kt_next(&s);
}

bool kt_check(const void *buf, size_t len, uint32_t seed)
{
	uint32_t s = seed | 1;
	const uint32_t *p = buf;
	size_t i;

	for (i = 0; i < len / 4; i++)
		if (p[i] != kt_next(&s))
			return false;
	return true;
}

bool kt_is_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

long kt_first_diff(const void *a, const void *b, size_t len)
{
	const unsigned char *x = a, *y = b;
	size_t i;

	if (!memcmp(a, b, len))
		return -1;
	for (i = 0; i < len; i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
}

void *kt_anon(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}
