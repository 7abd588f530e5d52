// SPDX-License-Identifier: GPL-2.0
/*
 * Checkpoint/restore of targets that build their own GPU work
 * (see gs_snap.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gs_snap.h"

#define GS_SLOT_MASK	(KT_DOORBELL_SIZE - 1)

#define GS_FAIL(...) do {				\
	snprintf(msg, len, __VA_ARGS__);		\
	return -1;					\
} while (0)

uint64_t gs_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t gs_hash(const void *buf, size_t len)
{
	const uint64_t *p = buf;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	/* Word-wise FNV-1a: the multi-GiB BO must not take minutes. */
	for (i = 0; i < len / 8; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	for (i = len & ~7UL; i < len; i++)
		h = (h ^ ((const uint8_t *)buf)[i]) * 0x100000001b3ULL;
	return h;
}

bool gs_in_ioctl(pid_t pid, pid_t tid)
{
	char path[64], buf[256], stat[512], *s;
	long nr = -1;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	n = kt_read_file(path, buf, sizeof(buf));
	if (n <= 0 || sscanf(buf, "%ld", &nr) != 1 || nr != 16)
		return false;	/* 16: ioctl on x86-64 */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	n = kt_read_file(path, stat, sizeof(stat));
	s = n > 0 ? strrchr(stat, ')') : NULL;
	return s && s[1] == ' ' && s[2] == 'S';
}

struct gs_shared *gs_shared_new(void)
{
	void *p = mmap(NULL, sizeof(struct gs_shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, sizeof(struct gs_shared));
	return p;
}

void gs_shared_free(struct gs_shared *sh)
{
	if (sh)
		munmap(sh, sizeof(*sh));
}

/* ---- processes ---- */

static int gs_reply(int sock, struct gs_shared *sh, int ret)
{
	char c = ret ? '-' : '+';

	sh->status = ret;
	return write(sock, &c, 1) == 1 ? 0 : -1;
}

static void __attribute__((noreturn))
gs_loop(int sock, struct gs_shared *sh, gs_fn fn)
{
	char c;

	while (read(sock, &c, 1) == 1) {
		if (c == GS_CMD_QUIT)
			_exit(0);
		sh->msg[0] = '\0';
		if (gs_reply(sock, sh, fn(sh, c, sh->msg, sizeof(sh->msg))))
			_exit(2);
	}
	_exit(0);
}

static int gs_fork(struct gs_proc *p, struct gs_shared *sh, int *child_sock)
{
	int sv[2];

	memset(p, 0, sizeof(*p));
	p->sock = -1;
	p->sh = sh;
	sh->msg[0] = '\0';
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	p->pid = fork();
	if (p->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (!p->pid) {
		close(sv[0]);
		*child_sock = sv[1];
		return 0;
	}
	close(sv[1]);
	p->sock = sv[0];
	return 0;
}

static int gs_wait_reply(struct gs_proc *p, char *msg, size_t len)
{
	char c;

	if (read(p->sock, &c, 1) != 1)
		GS_FAIL("process %d died: %s", p->pid, p->sh->msg);
	if (c != '+')
		GS_FAIL("%s", p->sh->msg);
	return 0;
}

int gs_start(struct gs_proc *p, struct gs_shared *sh, gs_fn fn, char *msg,
	     size_t len)
{
	int sock, ret;

	ret = gs_fork(p, sh, &sock);
	if (ret)
		GS_FAIL("fork: %s", strerror(-ret));
	if (!p->pid) {
		ret = fn(sh, 0, sh->msg, sizeof(sh->msg));
		if (gs_reply(sock, sh, ret) || ret)
			_exit(1);
		gs_loop(sock, sh, fn);
	}
	return gs_wait_reply(p, msg, len);
}

int gs_command(struct gs_proc *p, char cmd, char *msg, size_t len)
{
	if (write(p->sock, &cmd, 1) != 1)
		GS_FAIL("command %c: %s", cmd, strerror(errno));
	return gs_wait_reply(p, msg, len);
}

/* The thread ids of @pid. */
static int gs_tids(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir)) && n < max)
		if (d->d_name[0] != '.')
			tids[n++] = atoi(d->d_name);
	closedir(dir);
	return n;
}

void gs_kill(struct gs_proc *p)
{
	pid_t tids[GS_MAX_TIDS];
	int n, i;

	if (p->pid > 0) {
		n = gs_tids(p->pid, tids, GS_MAX_TIDS);
		kill(p->pid, SIGKILL);
		/* Traced threads are ours to reap, the leader last. */
		for (i = 0; i < n; i++)
			if (tids[i] != p->pid)
				waitpid(tids[i], NULL, __WALL);
		waitpid(p->pid, NULL, __WALL);
	}
	if (p->sock >= 0)
		close(p->sock);
	p->pid = 0;
	p->sock = -1;
}

int gs_quit(struct gs_proc *p, char *msg, size_t len)
{
	char c = GS_CMD_QUIT;
	int status;

	if (write(p->sock, &c, 1) != 1) {
		gs_kill(p);
		GS_FAIL("quit: %s", strerror(errno));
	}
	close(p->sock);
	p->sock = -1;
	if (waitpid(p->pid, &status, __WALL) != p->pid)
		GS_FAIL("waitpid: %s", strerror(errno));
	p->pid = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		GS_FAIL("exit status 0x%x", status);
	return 0;
}

/* ---- checkpoint ---- */

static int gs_seize_all(pid_t pid, struct gs_ck *ck, char *msg, size_t len)
{
	int i;

	ck->ntids = gs_tids(pid, ck->tids, GS_MAX_TIDS);
	if (ck->ntids <= 0)
		GS_FAIL("threads of %d: %s", pid, strerror(-ck->ntids));
	for (i = 0; i < ck->ntids; i++)
		if (ptrace(PTRACE_SEIZE, ck->tids[i], NULL, NULL))
			GS_FAIL("seize thread %d: %s", ck->tids[i],
				strerror(errno));
	return 0;
}

static int gs_stop_all(struct gs_ck *ck, char *msg, size_t len)
{
	int i, status;

	if (ck->stopped)
		return 0;
	ck->stopped = true;
	for (i = 0; i < ck->ntids; i++) {
		if (ptrace(PTRACE_INTERRUPT, ck->tids[i], NULL, NULL))
			GS_FAIL("interrupt thread %d: %s", ck->tids[i],
				strerror(errno));
		if (waitpid(ck->tids[i], &status, __WALL) != ck->tids[i] ||
		    !WIFSTOPPED(status))
			GS_FAIL("thread %d did not stop", ck->tids[i]);
	}
	return 0;
}

int gs_attach(pid_t pid, int kfd_fd, struct gs_ck *ck, char *msg,
	      size_t len)
{
	struct kt_gpu gpus[KT_MAX_GPUS];
	int n, i;

	memset(ck, 0, sizeof(*ck));
	ck->tfd = -1;
	n = kt_gpus(gpus, KT_MAX_GPUS);
	if (n < 0)
		GS_FAIL("topology: %s", strerror(-n));
	ck->img.node.ngpus = (uint32_t)n;
	for (i = 0; i < n; i++)
		ck->img.node.ids[i] = gpus[i].gpu_id;
	if (gs_seize_all(pid, ck, msg, len))
		return -1;
	ck->tfd = kc_getfd(pid, kfd_fd);
	if (ck->tfd < 0)
		GS_FAIL("pidfd_getfd: %s", strerror(-ck->tfd));
	return 0;
}

int gs_dump(pid_t pid, struct gs_ck *ck, char *msg, size_t len)
{
	uint64_t t;
	int ret;

	t = gs_ns();
	ret = kc_process_info(ck->tfd, &ck->img.k);
	ck->info_ns = gs_ns() - t;
	if (ret)
		GS_FAIL("PROCESS_INFO: %s", strerror(-ret));
	if (gs_stop_all(ck, msg, len))
		return -1;
	t = gs_ns();
	ret = kc_checkpoint(ck->tfd, &ck->img.k);
	ck->ckpt_ns = gs_ns() - t;
	if (ret)
		GS_FAIL("CHECKPOINT: %s", strerror(-ret));
	t = gs_ns();
	ret = kc_read_contents(&ck->img.k, pid);
	ck->read_ns = gs_ns() - t;
	if (ret)
		GS_FAIL("reading the contents: %s", strerror(-ret));
	return 0;
}

int gs_checkpoint(pid_t pid, int kfd_fd, struct gs_ck *ck, char *msg,
		  size_t len)
{
	if (gs_attach(pid, kfd_fd, ck, msg, len))
		return -1;
	/* As CRIU: every thread stopped before the plugin runs. */
	if (gs_stop_all(ck, msg, len))
		return -1;
	return gs_dump(pid, ck, msg, len);
}

void gs_ck_free(struct gs_ck *ck)
{
	cw_image_free(&ck->img);
	if (ck->tfd >= 0)
		close(ck->tfd);
	ck->tfd = -1;
}

void gs_kill_dumped(struct gs_proc *p, struct gs_ck *ck)
{
	gs_kill(p);
	if (ck->tfd >= 0)
		close(ck->tfd);
	ck->tfd = -1;
}

int gs_release(struct gs_ck *ck, char *msg, size_t len)
{
	int i, ret = kc_unpause(ck->tfd);

	for (i = 0; i < ck->ntids; i++)
		ptrace(PTRACE_DETACH, ck->tids[i], NULL, NULL);
	gs_ck_free(ck);
	if (ret)
		GS_FAIL("UNPAUSE: %s", strerror(-ret));
	return 0;
}

/* ---- restore ---- */

/* In a restored process: RESTORE's output buckets. */
static struct kfd_criu_bo_bucket *gs_buckets;

const struct kfd_criu_bo_bucket *gs_restored_buckets(void)
{
	return gs_buckets;
}

struct gs_restored {
	const struct cw_image *img;
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	struct kfd_criu_bo_bucket *bos;
};

static const struct kfd_criu_device_bucket *
gs_dev_of(const struct gs_restored *r, uint32_t user_id)
{
	uint32_t i;

	for (i = 0; i < r->img->k.num_devices; i++)
		if (r->dev[i].user_gpu_id == user_id)
			return &r->dev[i];
	return NULL;
}

/* CPU-map @bo again at the offset RESTORE gave it. */
static int gs_rebind_bo(const struct gs_restored *r, struct kg_rt *rt,
			struct kg_bo *bo, char *msg, size_t len)
{
	uint32_t i;
	void *p;

	if (!bo->handle || !bo->cpu)
		return 0;
	for (i = 0; i < r->img->k.num_bos; i++)
		if (r->bos[i].addr == bo->va)
			break;
	if (i == r->img->k.num_bos)
		GS_FAIL("no BO bucket at 0x%llx", (unsigned long long)bo->va);
	bo->mmap_offset = r->bos[i].restored_offset;
	p = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 rt->e.render[bo->gpu], (off_t)bo->mmap_offset);
	if (p == MAP_FAILED)
		GS_FAIL("mmap BO 0x%llx at 0x%llx: %s",
			(unsigned long long)bo->va,
			(unsigned long long)bo->mmap_offset, strerror(errno));
	bo->cpu = p;
	return 0;
}

/* Doorbells: the new device's gpu_id in the offset, as CRIU's plugin does. */
static int gs_rebind_queue(const struct gs_restored *r, struct kg_rt *rt,
			   struct kg_queue *q, char *msg, size_t len)
{
	const struct kfd_criu_device_bucket *d = gs_dev_of(r, rt->ids[q->gpu]);
	uint64_t off;
	void *p;

	if (!d)
		GS_FAIL("no device for gpu_id %u", rt->ids[q->gpu]);
	if (gs_rebind_bo(r, rt, &q->ring, msg, len) ||
	    gs_rebind_bo(r, rt, &q->ctl, msg, len))
		return -1;
	q->rt = rt;
	q->rptr = (uint64_t *)((char *)q->ctl.cpu + KG_CTL_RPTR);
	q->wptr = (uint64_t *)((char *)q->ctl.cpu + KG_CTL_WPTR);
	off = (q->doorbell_offset & ~KFD_MMAP_GPU_ID_MASK) |
	      KFD_MMAP_GPU_ID(d->actual_gpu_id);
	q->doorbell_offset = off;
	if (!rt->doorbells[q->gpu]) {
		p = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED, rt->e.kfd, (off_t)(off & ~GS_SLOT_MASK));
		if (p == MAP_FAILED)
			GS_FAIL("mmap doorbells at 0x%llx: %s",
				(unsigned long long)(off & ~GS_SLOT_MASK),
				strerror(errno));
		rt->doorbells[q->gpu] = p;
	}
	q->doorbell = (uint64_t *)((char *)rt->doorbells[q->gpu] +
				   (off & GS_SLOT_MASK));
	return 0;
}

static int gs_rebind(struct gs_restored *r, struct gs_state *st, int kfd,
		     char *msg, size_t len)
{
	struct kg_rt *rt = &st->rt;
	const struct kfd_criu_device_bucket *d;
	uint32_t i;
	int g;

	rt->e.kfd = kfd;
	for (g = 0; g < rt->e.ngpus; g++) {
		d = gs_dev_of(r, rt->ids[g]);
		rt->e.render[g] = d ? (int)d->drm_fd : -1;
		rt->doorbells[g] = NULL;
	}
	if (gs_rebind_bo(r, rt, &rt->sigpool, msg, len))
		return -1;
	for (i = 0; i < st->nsig; i++)
		st->sig[i].cpu = (struct kfdsim_signal *)rt->sigpool.cpu +
			(st->sig[i].va - rt->sigpool.va) /
			sizeof(struct kfdsim_signal);
	for (i = 0; i < st->nbo; i++)
		if (gs_rebind_bo(r, rt, &st->bo[i], msg, len))
			return -1;
	for (i = 0; i < st->nq; i++)
		if (gs_rebind_queue(r, rt, &st->q[i], msg, len))
			return -1;
	return 0;
}

/* RESTORE, then the contents written back as CRIU's plugin does. */
static int gs_restore(struct gs_shared *sh, struct gs_restored *r, int kfd,
		      unsigned int flags, char *msg, size_t len)
{
	const struct kc_image *k = &r->img->k;
	struct kt_props before;
	char err[128];
	uint64_t t;
	uint32_t i;
	int ret, fds;

	if (kt_counters(&before, err, sizeof(err)))
		GS_FAIL("counters: %s", err);
	fds = kc_count_fds();
	t = gs_ns();
	ret = kc_restore(kfd, k, r->dev, r->bos);
	sh->restore_ns = gs_ns() - t;
	sh->restore_err = ret;
	if (flags & GS_R_FAIL) {
		if (!ret)
			GS_FAIL("RESTORE succeeded");
		if (kc_count_fds() != fds)
			GS_FAIL("failed RESTORE (%s) left %d fds",
				strerror(-ret), kc_count_fds() - fds);
		return cw_counters_same(&before, "failed RESTORE", msg, len);
	}
	if (ret)
		GS_FAIL("RESTORE: %s", strerror(-ret));
	t = gs_ns();
	for (i = 0; i < k->num_bos; i++) {
		if (!kc_bo_has_dmabuf(&k->bos[i]))
			continue;
		ret = k->data[i] ? kc_dmabuf_write((int)r->bos[i].dmabuf_fd,
						   k->data[i], k->bos[i].size) :
				   -ENODATA;
		if (ret)
			GS_FAIL("writing BO 0x%llx back: %s",
				(unsigned long long)k->bos[i].addr,
				strerror(-ret));
	}
	sh->fill_ns = gs_ns() - t;
	kc_close_dmabufs(r->bos, k->num_bos);
	return 0;
}

static int gs_restore_proc(struct gs_shared *sh, const struct gs_state *from,
			   const struct cw_image *img, unsigned int flags,
			   char *msg, size_t len)
{
	struct gs_restored r = { .img = img };
	int kfd;

	if (!(flags & GS_R_NOSTATE))
		sh->st = *from;
	kfd = kt_open_kfd();
	if (kfd < 0)
		GS_FAIL("open /dev/kfd: %s", strerror(-kfd));
	if (cw_devices_ex(img, r.dev, flags & GS_R_SWAP, msg, len))
		return -1;
	r.bos = calloc(img->k.num_bos + 1, sizeof(*r.bos));
	if (!r.bos)
		GS_FAIL("out of memory");
	if (gs_restore(sh, &r, kfd, flags, msg, len))
		return -1;
	gs_buckets = r.bos;
	if (flags & (GS_R_FAIL | GS_R_NOSTATE)) {
		sh->st.rt.e.kfd = kfd;
		return 0;
	}
	return gs_rebind(&r, &sh->st, kfd, msg, len);
}

int gs_start_restored(struct gs_proc *p, struct gs_shared *sh,
		      const struct gs_state *from, const struct cw_image *img,
		      unsigned int flags, gs_fn fn, char *msg, size_t len)
{
	int sock, ret, status;

	ret = gs_fork(p, sh, &sock);
	if (ret)
		GS_FAIL("fork: %s", strerror(-ret));
	if (!p->pid) {
		ret = gs_restore_proc(sh, from, img, flags, sh->msg,
				      sizeof(sh->msg));
		if (gs_reply(sock, sh, ret) || ret || (flags & GS_R_FAIL))
			_exit(ret ? 1 : 0);
		gs_loop(sock, sh, fn);
	}
	ret = gs_wait_reply(p, msg, len);
	if (flags & GS_R_FAIL) {
		close(p->sock);
		p->sock = -1;
		waitpid(p->pid, &status, 0);
		p->pid = 0;
	}
	return ret;
}

int gs_move(struct gs_proc *orig, struct gs_ck *ck, struct gs_proc *rest,
	    struct gs_shared *sh2, unsigned int flags, gs_fn fn, char *msg,
	    size_t len)
{
	if (gs_checkpoint(orig->pid, orig->sh->st.rt.e.kfd, ck, msg, len))
		return -1;
	gs_kill_dumped(orig, ck);
	return gs_start_restored(rest, sh2, &orig->sh->st, &ck->img, flags, fn,
				 msg, len);
}
