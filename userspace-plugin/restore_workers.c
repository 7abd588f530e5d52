// SPDX-License-Identifier: GPL-2.0
/*
 * Parallel restore of BO contents; see restore_workers.h.
 *
 * Where the copies run, and why there. A restored process does its
 * RESTORE inside RESTORE_EXT_FILE (after CRIU restored its memory
 * contents, before its other files, its mappings and the restorer). It
 * cannot copy in threads of its own: the only hook CRIU calls in it
 * afterwards is UPDATE_VMA_MAP, and only for mappings of device files, so
 * nothing could join them before CRIU's restorer replaces the whole
 * address space (thread stacks included). So the process hands its BOs'
 * dma-buf fds (SCM_RIGHTS) to threads in CRIU's master and returns at
 * once; the master copies while the process, and the rest of the tree,
 * restore their other files, mappings and threads, and while the master
 * waits for them.
 *
 * The join. The last master hook before the processes run is
 * RESUME_DEVICES_LATE (criu 3.17 to 4.2, and criu-dev): it runs per
 * process once every task is stopped on its final rt_sigreturn, and CRIU
 * ignores its return value. So its first call waits for every worker, and
 * if any copy failed, it does not RESUME the process (its queues stay
 * evicted: the GPU never touches it) and kills it. A killed task fails
 * CRIU's very next step on it (restoring its registers and PTRACE_DETACH
 * give ESRCH once SIGKILL is pending), CRIU kills the whole tree and the
 * restore fails: nothing runs with wrong VRAM. POST_FORKING (criu 4.2)
 * is honoured but comes before any file is restored, too early to join.
 *
 * The channel. CRIU closes every fd a restored process inherits from the
 * master except its own service fds, and criu 3.17 calls the plugin's
 * init before its fd store exists, so the master listens on an abstract
 * unix socket (SOCK_SEQPACKET) named with its pid and 64 random bits; the
 * processes, clones of the master, know the name. A process that cannot
 * connect (restored into another network namespace) copies its BOs
 * itself, as in a serial restore.
 *
 * Who may hand over. The name is listed in /proc/net/unix, so anyone in
 * the network namespace can connect. A hand-over starts with HELLO and
 * 32 random bytes drawn at init, which only the master and its forks
 * (criu's processes) hold in memory; a connection without them is not of
 * this restore: it is answered -EACCES, closed, and changes nothing. One
 * with them but with another uid than the master's (a task restored into
 * a user namespace) is answered -EPERM before it hands anything over,
 * and restores its BOs itself, as in a serial restore. Any other
 * refusal of a process of this restore fails the restore. Every
 * connection is
 * served at once by one poll() loop (a silent one blocks no other; one
 * that has not said HELLO after KP_RW_HELLO_TIMEOUT_S is dropped, and
 * first when the table is full). Jobs of plain files (KP_RW_JOB_NO_SYNC)
 * are refused outside the unit tests.
 *
 * The threads start at plugin init, before CRIU forks the root task, and
 * stay blocked in poll() and pthread_cond_wait() (holding no lock) until
 * the first process connects, which happens only after that one fork of
 * the master. They run with every signal blocked, so CRIU's SIGCHLD
 * handling stays in its main thread.
 *
 * One connection carries one RESTORE's contents: a JOB message per GPU
 * (its pages image, render node and copy mode), its BOs in BOS messages of
 * up to KP_RW_MAX_FDS entries with their dma-buf fds, then END; one job
 * per GPU, its pages image named with that GPU. The master then answers
 * ACK with 0 (it has every BO: failures from here on are reported at
 * RESUME) or -errno, and the process fails its RESTORE_EXT_FILE unless
 * the answer is 0: a hand-over nobody confirmed never counts as done.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "chain.h"
#include "images.h"
#include "restore_workers.h"
#include "topology.h"
#include "util.h"

#define KP_RW_MAGIC	0x4b505257u	/* "WRPK" */
#define KP_RW_MAX_FDS	200		/* below SCM_MAX_FD (253) */
#define KP_RW_MAX_BOS	(1u << 20)	/* what RESTORE takes at most */
#define KP_RW_DEFAULT_MAX	8
#define KP_MAX(a, b)		((a) > (b) ? (a) : (b))
/* Fds the master's table holds before the workers start (10k BOs fit). */
#define KP_RW_FD_TABLE		32768
/* A peer that stops sending in the middle of a hand-over. */
#define KP_RW_RECV_TIMEOUT_S	300
/* A peer must say it is of this restore (KP_RW_HELLO) this fast. */
#define KP_RW_HELLO_TIMEOUT_S	30
/* Connections served at once. */
#define KP_RW_MAX_CONNS		256
/* Bytes of the secret only this restore's processes know. */
#define KP_RW_SECRET_LEN	32

enum kp_rw_type {
	KP_RW_JOB = 1,
	KP_RW_BOS = 2,
	KP_RW_END = 3,
	KP_RW_HELLO = 4,	/* first: the secret */
	KP_RW_ACK = 5,		/* the master's answer, last */
};

#define KP_RW_JOB_NO_SYNC	1u	/* plain files, not dma-bufs (tests) */
#define KP_RW_JOB_CHUNKED	2u	/* the master reads the image */

struct kp_rw_hdr {
	uint32_t magic;
	uint32_t type;
};

struct kp_rw_job_msg {
	struct kp_rw_hdr h;
	uint32_t gpu_id;
	uint32_t render_minor;
	uint32_t mode;
	uint32_t flags;
	uint32_t nbos;
	uint32_t pad;
	char image[KP_NAME_LEN];
};

struct kp_rw_bo_msg {
	uint64_t addr;
	uint64_t size;
	uint64_t checksum;
};

struct kp_rw_bos_msg {
	struct kp_rw_hdr h;
	uint32_t n;
	uint32_t pad;
	struct kp_rw_bo_msg bo[KP_RW_MAX_FDS];
};

struct kp_rw_end_msg {
	struct kp_rw_hdr h;
	uint32_t image_id;
	uint32_t njobs;
};

struct kp_rw_hello_msg {
	struct kp_rw_hdr h;
	uint8_t secret[KP_RW_SECRET_LEN];
};

/* 0: the master has every BO and will copy them; else -errno. */
struct kp_rw_ack_msg {
	struct kp_rw_hdr h;
	int32_t status;
	uint32_t pad;
};

union kp_rw_msg {
	struct kp_rw_hdr h;
	struct kp_rw_hello_msg hello;
	struct kp_rw_job_msg job;
	struct kp_rw_bos_msg bos;
	struct kp_rw_end_msg end;
};

/* One RESTORE's contents, as one connection brought them. */
struct kp_rw_batch {
	struct kp_rw_batch *next;
	pid_t pid;
	uint32_t image_id;
	unsigned int njobs;
	unsigned int nbos;
	int ret;
	struct kp_copy_job jobs[KP_MAX_GPUS];
	unsigned int want[KP_MAX_GPUS];	/* BOs each JOB announced */
	/* a chunked image, read by the master (kp_rw_read_image()) */
	bool chunked;
	KfdHeader *h;
	KfdProcess *p;
	struct kp_chain *chain;
};

/* A connection the master serves. */
struct kp_rw_conn {
	int fd;
	struct ucred cr;	/* SO_PEERCRED */
	bool cred_ok;		/* the master's uid */
	bool authed;		/* it sent the secret */
	uint64_t deadline;	/* ms, CLOCK_MONOTONIC */
	struct kp_rw_batch *b;
};

static struct {
	/* set in the master, inherited by the restored processes */
	bool started;
	pid_t master;
	struct sockaddr_un addr;
	socklen_t addrlen;
	uint8_t secret[KP_RW_SECRET_LEN];
	bool test_mode;		/* kp_rw_test_mode() */

	/* the master only */
	int lsk;
	int stop[2];
	uint64_t window;
	pthread_t receiver;
	unsigned int nworkers;
	pthread_t workers[KP_RW_MAX_THREADS];
	bool joined;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct kp_rw_batch *queue, *tail;	/* to copy */
	struct kp_rw_batch *done;		/* copied or refused */
	bool no_more;		/* the receiver is gone */
	bool abort;		/* plugin exit: copy nothing more */
	int result;		/* the first failure */
	unsigned int nbatches, nfailed;
} rw = {
	.lsk = -1,
	.stop = { -1, -1 },
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

unsigned int kp_rw_threads_from_env(void)
{
	const char *s = getenv("KFD_PLUGIN_RESTORE_THREADS");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int def;
	char *end;
	long v;

	def = cpus < 1 ? 1 : cpus > KP_RW_DEFAULT_MAX ? KP_RW_DEFAULT_MAX :
		(unsigned int)cpus;
	if (!s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0) {
		kp_warn("KFD_PLUGIN_RESTORE_THREADS=\"%s\" is not a number; using %u",
			s, def);
		return def;
	}
	if (v > KP_RW_MAX_THREADS) {
		kp_warn("KFD_PLUGIN_RESTORE_THREADS=%ld is above %u; using %u", v,
			KP_RW_MAX_THREADS, KP_RW_MAX_THREADS);
		return KP_RW_MAX_THREADS;
	}
	return (unsigned int)v;
}

/* ---- the master ---- */

static void kp_rw_free_image(struct kp_rw_batch *b)
{
	kp_chain_free(b->chain);
	b->chain = NULL;
	if (b->p)
		kfd_process__free_unpacked(b->p, NULL);
	b->p = NULL;
	if (b->h)
		kfd_header__free_unpacked(b->h, NULL);
	b->h = NULL;
}

static void kp_rw_free_batch(struct kp_rw_batch *b)
{
	unsigned int i, k;

	for (i = 0; i < b->njobs; i++) {
		for (k = 0; k < b->jobs[i].nbos; k++)
			if (b->jobs[i].bos[k].dmabuf_fd >= 0)
				close(b->jobs[i].bos[k].dmabuf_fd);
		free(b->jobs[i].bos);
	}
	kp_rw_free_image(b);
	free(b);
}

/* Under rw.lock: @b is over, with @ret. */
static void kp_rw_record(struct kp_rw_batch *b, int ret)
{
	unsigned int i, k;

	for (i = 0; i < b->njobs; i++) {
		for (k = 0; k < b->jobs[i].nbos; k++) {
			if (b->jobs[i].bos[k].dmabuf_fd >= 0)
				close(b->jobs[i].bos[k].dmabuf_fd);
			b->jobs[i].bos[k].dmabuf_fd = -1;
		}
	}
	kp_rw_free_image(b);
	b->ret = ret;
	b->next = rw.done;
	rw.done = b;
	rw.nbatches++;
	if (ret) {
		rw.nfailed++;
		if (!rw.result)
			rw.result = ret;
	}
}

static double kp_rw_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Bytes of BO @k of @j in the pages image: stored chunks only. */
static uint64_t kp_rw_image_bytes(const struct kp_copy_job *j, unsigned int k)
{
	return j->chunk ? j->bos[k].stored : j->bos[k].size;
}

/*
 * The hand-over of a chunked image carries no chunk kinds, sums or
 * parent chain: read them from the process's image in criu's images dir
 * (and its parents, kp_chain_open(), every link checked), and check that
 * the BOs handed over are the image's BOs with contents, in its order.
 * 0 or -errno with an error logged.
 */
static int kp_rw_read_image(struct kp_rw_batch *b)
{
	char name[KP_NAME_LEN];
	struct kp_copy_job *j = NULL;
	struct kp_copy_bo *bo;
	const KfdBo *pb;
	unsigned int i, k;
	size_t n;
	int img, ret;

	kp_name_kfd(name, b->image_id);
	img = kp_img_open(name);
	if (img < 0) {
		kp_err("image %s is missing: %s", name, strerror(-img));
		return img;
	}
	b->h = kp_read_header(img, name);
	b->p = b->h ? kp_read_process(img, name, b->h) : NULL;
	close(img);
	if (!b->p)
		return -EIO;
	ret = kp_chain_open(kp_image_dir(), name, b->p, &b->chain);
	if (ret)
		return ret;
	for (i = 0; i < b->njobs; i++) {
		j = &b->jobs[i];
		j->chunk = kp_chunked(b->p) ? b->p->chunk_size : 0;
		j->sum_kind = kp_process_sum_kind(b->p);
		for (k = 0, n = 0; n < b->p->n_bos; n++) {
			pb = b->p->bos[n];
			if (!kp_bo_in_pages(pb, j->gpu_id, j->lane))
				continue;
			bo = k < j->nbos ? &j->bos[k++] : NULL;
			if (!bo || bo->addr != pb->addr ||
			    bo->size != pb->size || bo->checksum != pb->checksum)
				goto mismatch;
			bo->stored = kp_bo_stored(b->p, pb);
			if (!j->chunk)
				continue;
			bo->kinds = pb->chunks.data;
			bo->sums = pb->chunk_sums;
			bo->chain = b->chain;
			bo->chain_bo = pb->parent_bo;
		}
		if (k != j->nbos)
			goto mismatch;
	}
	return 0;
mismatch:
	kp_err("restore workers: process %d handed over BOs of GPU %u (pages image %s) that are not those of %s",
	       (int)b->pid, j->gpu_id, j->image, name);
	return -EPROTO;
}

/*
 * Split each GPU's job of @b into up to @k slices of consecutive BOs with
 * about the same bytes each, so that a process with one GPU keeps several
 * threads busy too. Fills @out (KP_MAX_GPUS entries); returns the count.
 */
static unsigned int kp_rw_split(struct kp_rw_batch *b, unsigned int k,
				struct kp_copy_job *out)
{
	unsigned int i, n = 0, s, slices, first, end;
	uint64_t total, itotal, skip, acc;
	struct kp_copy_job *j;

	for (i = 0; i < b->njobs; i++) {
		j = &b->jobs[i];
		slices = KP_MIN(k, j->nbos);
		/* leave room for one entry per remaining job */
		slices = KP_MIN(slices, KP_MAX_GPUS - n - (b->njobs - 1 - i));
		out[n] = *j;
		if (slices <= 1) {
			n++;
			continue;
		}
		for (total = 0, itotal = 0, end = 0; end < j->nbos; end++) {
			total += j->bos[end].size;
			itotal += kp_rw_image_bytes(j, end);
		}
		first = 0;
		acc = 0;
		skip = 0;
		for (s = 0; s < slices; s++) {
			/* at least one BO, and one left for each later slice */
			end = first;
			do
				acc += j->bos[end++].size;
			while (end < j->nbos - (slices - 1 - s) &&
			       acc < total / slices * (s + 1));
			if (s == slices - 1)
				end = j->nbos;
			out[n] = *j;
			out[n].bos = &j->bos[first];
			out[n].nbos = end - first;
			out[n].slice_skip = skip;
			out[n].slice_total = itotal;
			n++;
			for (; first < end; first++)
				skip += kp_rw_image_bytes(j, first);
		}
	}
	return n;
}

/*
 * A thread of ours in criu's master gets an fs_struct (root, cwd, umask)
 * of its own, a copy of the master's: setns() into a mount namespace
 * fails with EINVAL while the caller shares it with another thread, and
 * criu's master joins the restored container's mount namespace to clean
 * up ghost and link-remap files after the post-restore RPC, before the
 * RESUME that joins these threads ("mnt: `- Can't switch: Invalid
 * argument", then "Restoring FAILED", in every podman restore). The
 * threads reach the images through criu's image directory fd.
 */
static void kp_rw_own_fs(const char *who)
{
	if (unshare(CLONE_FS))
		kp_warn("restore workers: %s: unshare(CLONE_FS): %s; criu's master may fail to enter a mount namespace while it runs",
			who, strerror(errno));
}

static void *kp_rw_worker(void *arg)
{
	struct kp_copy_job jobs[KP_MAX_GPUS];
	struct kp_rw_batch *b;
	struct timespec t0;
	unsigned int n;
	int ret;

	(void)arg;
	kp_rw_own_fs("worker");
	pthread_mutex_lock(&rw.lock);
	for (;;) {
		while (!rw.queue && !rw.no_more)
			pthread_cond_wait(&rw.cond, &rw.lock);
		b = rw.queue;
		if (!b)
			break;
		rw.queue = b->next;
		if (!rw.queue)
			rw.tail = NULL;
		if (rw.abort) {
			kp_rw_record(b, -ECANCELED);
			continue;
		}
		pthread_mutex_unlock(&rw.lock);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		n = 0;
		ret = b->chunked ? kp_rw_read_image(b) : 0;
		if (!ret) {
			n = kp_rw_split(b, KP_MAX(rw.nworkers / b->njobs, 1u),
					jobs);
			ret = kp_copy_run(jobs, n, rw.window);
		}
		if (ret)
			kp_err("restore worker: the BO contents of process %d (kfd-%u.img) failed: %s",
			       (int)b->pid, b->image_id, strerror(-ret));
		else
			kp_info("restore worker: process %d (kfd-%u.img): %u BOs on %u GPUs restored in %.1f ms, %u threads",
				(int)b->pid, b->image_id, b->nbos,
				kp_jobs_gpus(b->jobs, b->njobs), kp_rw_ms(&t0),
				n);
		pthread_mutex_lock(&rw.lock);
		kp_rw_record(b, ret);
	}
	pthread_mutex_unlock(&rw.lock);
	return NULL;
}

/*
 * One message of a hand-over, with its fds (closed again on any error).
 * Returns its length, -EAGAIN if none is waiting, 0 at the end of the
 * connection, or another -errno.
 */
static ssize_t kp_rw_recv(int c, union kp_rw_msg *m, int *fds,
			  unsigned int *nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * KP_RW_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;
	unsigned int i, n;
	ssize_t len;

	*nfds = 0;
	do
		len = recvmsg(c, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (len < 0 && errno == EINTR);
	if (len < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (unsigned int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			if (*nfds < KP_RW_MAX_FDS)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		for (i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		return -EMSGSIZE;
	}
	return len;
}

static int kp_rw_take_job(struct kp_rw_batch *b, const struct kp_rw_job_msg *m)
{
	struct kp_copy_job *j;
	uint32_t id, gpu, lane;
	unsigned int k;

	if (b->njobs == KP_MAX_GPUS || !m->nbos || m->nbos > KP_RW_MAX_BOS ||
	    m->mode > KP_COPY_SDMA ||
	    (m->flags & ~(KP_RW_JOB_NO_SYNC | KP_RW_JOB_CHUNKED)) ||
	    m->pad || strnlen(m->image, KP_NAME_LEN) == KP_NAME_LEN ||
	    !kp_parse_name_pages(m->image, &id, &gpu, &lane) ||
	    gpu != m->gpu_id ||
	    (b->njobs && id != b->image_id) ||
	    (b->njobs && b->chunked != !!(m->flags & KP_RW_JOB_CHUNKED)))
		return -EPROTO;
	/* One job per pages image: a second would load the same BOs twice. */
	for (k = 0; k < b->njobs; k++)
		if (b->jobs[k].gpu_id == m->gpu_id && b->jobs[k].lane == lane)
			return -EPROTO;
	/* Plain files instead of dma-bufs: only the unit tests do that. */
	if ((m->flags & KP_RW_JOB_NO_SYNC) && !rw.test_mode)
		return -EPROTO;
	b->image_id = id;
	j = &b->jobs[b->njobs];
	j->bos = calloc(m->nbos, sizeof(*j->bos));
	if (!j->bos)
		return -ENOMEM;
	for (k = 0; k < m->nbos; k++)
		j->bos[k].dmabuf_fd = -1;
	j->dir = KP_COPY_LOAD;
	memcpy(j->image, m->image, KP_NAME_LEN);
	j->gpu_id = m->gpu_id;
	j->lane = lane;
	j->render_minor = m->render_minor;
	j->mode = (enum kp_copy_mode)m->mode;
	j->no_sync = m->flags & KP_RW_JOB_NO_SYNC;
	b->chunked = m->flags & KP_RW_JOB_CHUNKED;
	j->nbos = 0;		/* the BOs received so far */
	b->want[b->njobs++] = m->nbos;
	return 0;
}

static uint64_t kp_rw_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Does @s hold this restore's secret? In constant time. */
static bool kp_rw_secret_ok(const uint8_t *s)
{
	uint8_t diff = 0;
	unsigned int i;

	for (i = 0; i < KP_RW_SECRET_LEN; i++)
		diff |= s[i] ^ rw.secret[i];
	return !diff;
}

/*
 * Message @m of connection @c, with @nfds fds (taken: *nfds set to 0).
 * 0 to go on, 1 when the hand-over is complete, or -errno.
 */
static int kp_rw_conn_msg(struct kp_rw_conn *c, const union kp_rw_msg *m,
			  size_t len, const int *fds, unsigned int *nfds)
{
	const size_t bos_head = offsetof(struct kp_rw_bos_msg, bo);
	struct kp_rw_batch *b = c->b;
	struct kp_copy_job *j;
	unsigned int i, n;
	bool full;

	if (len < sizeof(m->h) || m->h.magic != KP_RW_MAGIC)
		return c->authed ? -EPROTO : -EACCES;
	if (!c->authed) {
		/* Only criu's own processes hold the secret. */
		if (m->h.type != KP_RW_HELLO || len != sizeof(m->hello) ||
		    *nfds || !kp_rw_secret_ok(m->hello.secret))
			return -EACCES;
		c->authed = true;
		if (!c->cred_ok) {
			kp_warn("restore workers: process %d of this restore runs as uid %u, not as criu's %u: it restores its BO contents itself",
				(int)c->cr.pid, (unsigned int)c->cr.uid,
				(unsigned int)geteuid());
			return -EPERM;
		}
		return 0;
	}
	j = b->njobs ? &b->jobs[b->njobs - 1] : NULL;
	full = !j || j->nbos == b->want[b->njobs - 1];
	if (m->h.type == KP_RW_END)
		return len == sizeof(m->end) && !*nfds && j && full &&
		       m->end.image_id == b->image_id &&
		       m->end.njobs == b->njobs ? 1 : -EPROTO;
	if (m->h.type == KP_RW_JOB) {
		if (len != sizeof(m->job) || *nfds || !full)
			return -EPROTO;
		return kp_rw_take_job(b, &m->job);
	}
	if (m->h.type != KP_RW_BOS || !j || len < bos_head)
		return -EPROTO;
	n = m->bos.n;
	if (!n || n != *nfds || m->bos.pad ||
	    len != bos_head + n * sizeof(m->bos.bo[0]) ||
	    n > b->want[b->njobs - 1] - j->nbos)
		return -EPROTO;
	for (i = 0; i < n; i++) {
		struct kp_copy_bo *bo = &j->bos[j->nbos++];

		bo->addr = m->bos.bo[i].addr;
		bo->size = m->bos.bo[i].size;
		bo->checksum = m->bos.bo[i].checksum;
		bo->dmabuf_fd = fds[i];
	}
	b->nbos += n;
	*nfds = 0;
	return 0;
}

/* The waiting messages of @c: 0 to go on, 1 when complete, or -errno. */
static int kp_rw_conn_read(struct kp_rw_conn *c, union kp_rw_msg *m,
			   int *fds)
{
	unsigned int nfds, i;
	ssize_t len;
	int ret;

	for (;;) {
		len = kp_rw_recv(c->fd, m, fds, &nfds);
		if (len == -EAGAIN)
			return 0;
		if (len <= 0)
			return len ? (int)len : c->authed ? -EPIPE : -EACCES;
		ret = kp_rw_conn_msg(c, m, (size_t)len, fds, &nfds);
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (ret)
			return ret;
		c->deadline = kp_rw_now_ms() + KP_RW_RECV_TIMEOUT_S * 1000;
	}
}

/* Tell the peer of @fd how its hand-over went (it may be gone). */
static void kp_rw_answer(int fd, int status)
{
	struct kp_rw_ack_msg a = {
		.h = { .magic = KP_RW_MAGIC, .type = KP_RW_ACK },
		.status = status,
	};

	if (send(fd, &a, sizeof(a), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		kp_debug("restore workers: no answer to a connection: %s",
			 strerror(errno));
}

/*
 * Connection @c is over: complete (@ret 0: its contents are queued for
 * the workers), or with @ret. Every connection of this restore's
 * processes that fails is a failure of the restore; one of a process
 * without the secret is not of this restore and is only warned about.
 */
static void kp_rw_conn_end(struct kp_rw_conn *c, int ret)
{
	struct kp_rw_batch *b = c->b;

	pthread_mutex_lock(&rw.lock);
	if (!ret) {
		kp_debug("restore workers: process %d handed over %u BOs of kfd-%u.img",
			 (int)c->cr.pid, b->nbos, b->image_id);
		if (rw.tail)
			rw.tail->next = b;
		else
			rw.queue = b;
		rw.tail = b;
		pthread_cond_signal(&rw.cond);
	} else if (c->authed && ret != -EPERM) {
		kp_err("restore workers: process %d handed over its BOs only in part: %s",
		       (int)c->cr.pid, strerror(-ret));
		kp_rw_record(b, ret);
	} else if (c->authed) {
		/* Refused before any BO came: it copies them itself. */
		kp_rw_free_batch(b);
	} else {
		kp_warn("restore workers: a connection from pid %d (uid %u) without this restore's secret: ignored (%s)",
			(int)c->cr.pid, (unsigned int)c->cr.uid,
			strerror(-ret));
		kp_rw_free_batch(b);
	}
	pthread_mutex_unlock(&rw.lock);
	kp_rw_answer(c->fd, ret);
	close(c->fd);
	c->fd = -1;
	c->b = NULL;
}

/* A new connection @fd: who is there, and until when it may be silent. */
static int kp_rw_conn_start(struct kp_rw_conn *c, int fd)
{
	socklen_t l = sizeof(c->cr);

	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->b = calloc(1, sizeof(*c->b));
	if (!c->b)
		return -ENOMEM;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cr, &l)) {
		c->cr.pid = 0;
		c->cr.uid = (uid_t)-1;
	} else {
		c->cred_ok = c->cr.uid == geteuid();
	}
	c->b->pid = c->cr.pid;
	c->deadline = kp_rw_now_ms() + KP_RW_HELLO_TIMEOUT_S * 1000;
	return 0;
}

/*
 * Serve every connection at once: none can hold up another. A full
 * table drops its oldest connection that has not proved to be of this
 * restore; if every one has, new ones wait in the listen queue.
 */
static bool kp_rw_make_room(struct kp_rw_conn *conns, unsigned int *n)
{
	unsigned int i, old = *n;

	for (i = 0; i < *n; i++)
		if (!conns[i].authed &&
		    (old == *n || conns[i].deadline < conns[old].deadline))
			old = i;
	if (old == *n)
		return false;
	kp_rw_conn_end(&conns[old], -EACCES);
	conns[old] = conns[--*n];
	return true;
}

static void *kp_rw_receiver(void *arg)
{
	struct pollfd p[2 + KP_RW_MAX_CONNS];
	struct kp_rw_conn *conns;
	unsigned int n = 0, i;
	union kp_rw_msg *m;
	int *fds;
	uint64_t now;
	int c, ret, timeout;

	(void)arg;
	kp_rw_own_fs("receiver");
	conns = calloc(KP_RW_MAX_CONNS, sizeof(*conns));
	fds = calloc(KP_RW_MAX_FDS, sizeof(*fds));
	m = malloc(sizeof(*m));
	if (!conns || !fds || !m) {
		kp_err("restore workers: out of memory");
		pthread_mutex_lock(&rw.lock);
		rw.nfailed++;
		if (!rw.result)
			rw.result = -ENOMEM;
		pthread_mutex_unlock(&rw.lock);
		goto out;
	}
	for (;;) {
		now = kp_rw_now_ms();
		timeout = -1;
		for (i = n; i-- > 0;) {
			if (now >= conns[i].deadline) {
				kp_rw_conn_end(&conns[i], -ETIMEDOUT);
				conns[i] = conns[--n];
			}
		}
		for (i = 0; i < n; i++) {
			uint64_t left = conns[i].deadline - now;

			if (timeout < 0 || left < (uint64_t)timeout)
				timeout = (int)KP_MIN(left, (uint64_t)INT32_MAX);
			p[2 + i] = (struct pollfd){ .fd = conns[i].fd,
						    .events = POLLIN };
		}
		p[0] = (struct pollfd){ .fd = rw.stop[0], .events = POLLIN };
		p[1] = (struct pollfd){ .fd = rw.lsk, .events = POLLIN };
		if (n == KP_RW_MAX_CONNS && !kp_rw_make_room(conns, &n))
			p[1].events = 0;
		if (poll(p, 2 + n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			kp_err("restore workers: poll: %s", strerror(errno));
			break;
		}
		if (p[0].revents)
			break;
		/* Backwards: an ended connection takes the last one's place. */
		for (i = n; i-- > 0;) {
			if (!p[2 + i].revents)
				continue;
			ret = kp_rw_conn_read(&conns[i], m, fds);
			if (!ret)
				continue;
			kp_rw_conn_end(&conns[i], ret > 0 ? 0 : ret);
			conns[i] = conns[--n];
		}
		if (!(p[1].revents & POLLIN) || n == KP_RW_MAX_CONNS)
			continue;
		c = accept4(rw.lsk, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0)
			continue;
		if (kp_rw_conn_start(&conns[n], c)) {
			free(conns[n].b);
			close(c);
			continue;
		}
		n++;
	}
	/*
	 * Every process of this restore had its answer before it left
	 * RESTORE_EXT_FILE, long before the stop: what is left is not
	 * complete (a failure if it is of this restore).
	 */
	for (i = 0; i < n; i++)
		kp_rw_conn_end(&conns[i], -ECANCELED);
	if (fcntl(rw.lsk, F_SETFL, O_NONBLOCK) == 0) {
		while ((c = accept4(rw.lsk, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
			kp_rw_answer(c, -ECANCELED);
			close(c);
		}
	}
out:
	free(conns);
	free(fds);
	free(m);
	pthread_mutex_lock(&rw.lock);
	rw.no_more = true;
	pthread_cond_broadcast(&rw.cond);
	pthread_mutex_unlock(&rw.lock);
	return NULL;
}

static void kp_rw_close_master_fds(void)
{
	if (rw.lsk >= 0)
		close(rw.lsk);
	if (rw.stop[0] >= 0)
		close(rw.stop[0]);
	if (rw.stop[1] >= 0)
		close(rw.stop[1]);
	rw.lsk = rw.stop[0] = rw.stop[1] = -1;
}

/*
 * The master receives one fd per BO. Once the workers run, its fd table
 * is shared, and the kernel then waits for an RCU grace period at every
 * doubling of the table (fs/file.c, expand_fdtable()), which takes long
 * on a busy machine. Grow it once now, while the master is still
 * single-threaded, to KP_RW_FD_TABLE fds (or the fd limit): a dup at
 * that number (F_DUPFD never replaces an open fd), closed at once.
 */
static void kp_rw_grow_fd_table(int fd)
{
	struct rlimit rl;
	rlim_t want = KP_RW_FD_TABLE;
	int hi;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < want)
		want = rl.rlim_cur;
	if (want < 2)
		return;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)(want - 1));
	if (hi >= 0)
		close(hi);
}

int kp_rw_start(unsigned int threads, uint64_t max_buffer)
{
	uint64_t page = kp_page_size(), rnd;
	sigset_t all, old;
	unsigned int i;
	int ret;

	if (rw.started || !threads)
		return 0;
	if (threads > KP_RW_MAX_THREADS)
		threads = KP_RW_MAX_THREADS;
	/*
	 * The name is listed in /proc/net/unix: what proves a peer is one
	 * of this restore's processes is the secret, which only the master
	 * and its forks hold. No randomness, no secret: no workers.
	 */
	if (getrandom(rw.secret, sizeof(rw.secret), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(rw.secret) ||
	    getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
		ret = -EAGAIN;
		goto fail_logged;
	}
	memset(&rw.addr, 0, sizeof(rw.addr));
	rw.addr.sun_family = AF_UNIX;
	/* Abstract: sun_path[0] stays 0. */
	ret = snprintf(rw.addr.sun_path + 1, sizeof(rw.addr.sun_path) - 1,
		       "kfd_plugin-restore-%d-%016" PRIx64, (int)getpid(),
		       rnd);
	rw.addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				 (size_t)ret);
	rw.lsk = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (rw.lsk < 0 ||
	    bind(rw.lsk, (struct sockaddr *)&rw.addr, rw.addrlen) ||
	    listen(rw.lsk, SOMAXCONN) ||
	    pipe2(rw.stop, O_CLOEXEC)) {
		ret = -errno;
		goto fail;
	}
	rw.window = max_buffer / threads / page * page;
	if (rw.window < page)
		rw.window = page;
	rw.queue = rw.tail = rw.done = NULL;
	rw.no_more = rw.abort = rw.joined = false;
	rw.result = 0;
	rw.nbatches = rw.nfailed = 0;
	rw.nworkers = 0;

	kp_rw_grow_fd_table(rw.lsk);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&rw.receiver, NULL, kp_rw_receiver, NULL);
	if (!ret) {
		rw.master = getpid();
		rw.started = true;
		for (i = 0; i < threads; i++) {
			ret = -pthread_create(&rw.workers[i], NULL,
					      kp_rw_worker, NULL);
			if (ret)
				break;
			rw.nworkers++;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!rw.started)
		goto fail;
	if (!rw.nworkers) {
		kp_rw_stop();
		goto fail_logged;
	}
	kp_info("parallel restore: %u worker threads in criu's master, at most %" PRIu64 " bytes in flight each",
		rw.nworkers, rw.window);
	return 0;
fail:
	kp_rw_close_master_fds();
fail_logged:
	memset(rw.secret, 0, sizeof(rw.secret));
	kp_warn("parallel restore unavailable (%s): BO contents are restored serially",
		strerror(-ret));
	return ret;
}

static void kp_rw_join(void)
{
	unsigned int i;
	char c = 0;

	if (rw.joined)
		return;
	rw.joined = true;
	if (write(rw.stop[1], &c, 1) != 1)
		kp_err("restore workers: cannot stop the receiver: %s",
		       strerror(errno));
	pthread_join(rw.receiver, NULL);
	for (i = 0; i < rw.nworkers; i++)
		pthread_join(rw.workers[i], NULL);
}

void kp_rw_test_mode(bool on)
{
	rw.test_mode = on;
}

int kp_rw_finish(pid_t pid)
{
	if (!rw.started || rw.master != getpid())
		return 0;
	if (!rw.joined) {
		struct timespec t0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		kp_rw_join();
		if (rw.result)
			kp_err("parallel restore: %u of %u processes' BO contents failed (first error: %s): no process of this restore may run",
			       rw.nfailed, rw.nbatches, strerror(-rw.result));
		else
			kp_info("parallel restore: the BO contents of %u processes are in place (waited %.1f ms at the resume of pid %d)",
				rw.nbatches, kp_rw_ms(&t0), (int)pid);
	}
	return rw.result;
}

void kp_rw_stop(void)
{
	struct kp_rw_batch *b;

	if (!rw.started || rw.master != getpid())
		return;
	pthread_mutex_lock(&rw.lock);
	rw.abort = true;
	pthread_mutex_unlock(&rw.lock);
	kp_rw_join();
	while ((b = rw.done)) {
		rw.done = b->next;
		kp_rw_free_batch(b);
	}
	/* Nothing is queued once the workers are gone; be safe anyway. */
	while ((b = rw.queue)) {
		rw.queue = b->next;
		kp_rw_free_batch(b);
	}
	rw.tail = NULL;
	kp_rw_close_master_fds();
	rw.started = false;
}

/* ---- a restored process ---- */

static int kp_rw_send(int s, const void *buf, size_t len, const int *fds,
		      unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * KP_RW_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (nfds) {
		memset(ctl.buf, 0, sizeof(ctl.buf));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(s, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EMSGSIZE;
}

static int kp_rw_send_job(int s, const struct kp_copy_job *j,
			  struct kp_rw_bos_msg *bm)
{
	struct kp_rw_job_msg jm = {
		.h = { .magic = KP_RW_MAGIC, .type = KP_RW_JOB },
		.gpu_id = j->gpu_id,
		.render_minor = j->render_minor,
		.mode = (uint32_t)j->mode,
		.flags = (j->no_sync ? KP_RW_JOB_NO_SYNC : 0) |
			 (j->chunk ? KP_RW_JOB_CHUNKED : 0),
		.nbos = j->nbos,
	};
	int fds[KP_RW_MAX_FDS];
	unsigned int i, k, n;
	int ret;

	memcpy(jm.image, j->image, KP_NAME_LEN);
	ret = kp_rw_send(s, &jm, sizeof(jm), NULL, 0);
	for (i = 0; !ret && i < j->nbos; i += n) {
		n = KP_MIN(j->nbos - i, (unsigned int)KP_RW_MAX_FDS);
		memset(bm, 0, sizeof(*bm));
		bm->h = (struct kp_rw_hdr){ KP_RW_MAGIC, KP_RW_BOS };
		bm->n = n;
		for (k = 0; k < n; k++) {
			bm->bo[k].addr = j->bos[i + k].addr;
			bm->bo[k].size = j->bos[i + k].size;
			bm->bo[k].checksum = j->bos[i + k].checksum;
			fds[k] = j->bos[i + k].dmabuf_fd;
		}
		ret = kp_rw_send(s, bm, offsetof(struct kp_rw_bos_msg, bo) +
					n * sizeof(bm->bo[0]), fds, n);
	}
	return ret;
}

/*
 * The master's answer on @s after the hand-over, which ended with @ret:
 * its status. After a failed send, only an answer already there counts.
 */
static int kp_rw_wait_answer(int s, int ret)
{
	struct timeval tv = { .tv_sec = KP_RW_RECV_TIMEOUT_S };
	struct kp_rw_ack_msg a;
	bool reset = false;
	ssize_t n;

	if (!ret)
		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/*
	 * A master that refused closes with our messages unread: the reset
	 * is reported first, its answer, still queued, on the next read.
	 */
	for (;;) {
		n = recv(s, &a, sizeof(a), ret ? MSG_DONTWAIT : 0);
		if (n >= 0 || (errno != EINTR && (errno != ECONNRESET || reset)))
			break;
		reset |= errno == ECONNRESET;
	}
	if (n == (ssize_t)sizeof(a) && a.h.magic == KP_RW_MAGIC &&
	    a.h.type == KP_RW_ACK && !a.pad && a.status <= 0 &&
	    a.status > -4096)
		return a.status ? a.status : ret;
	if (ret)
		return ret;
	if (n < 0)
		return errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
	return n ? -EPROTO : -EPIPE;
}

int kp_rw_submit(uint32_t image_id, const struct kp_copy_job *jobs,
		 unsigned int njobs)
{
	struct kp_rw_end_msg em = {
		.h = { .magic = KP_RW_MAGIC, .type = KP_RW_END },
		.image_id = image_id,
	};
	struct kp_rw_hello_msg hello = {
		.h = { .magic = KP_RW_MAGIC, .type = KP_RW_HELLO },
	};
	struct kp_rw_bos_msg *bm;
	unsigned int i, nbos = 0;
	int s, ret = 0;

	if (!rw.started || rw.master == getpid())
		return -EAGAIN;
	for (i = 0; i < njobs; i++)
		nbos += jobs[i].nbos;
	if (!nbos)
		return 0;
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&rw.addr, rw.addrlen)) {
		kp_info("cannot reach the restore workers in criu's master (%s): restoring the BO contents in this process",
			strerror(errno));
		if (s >= 0)
			close(s);
		return -EAGAIN;
	}
	memcpy(hello.secret, rw.secret, sizeof(hello.secret));
	bm = malloc(sizeof(*bm));
	ret = bm ? kp_rw_send(s, &hello, sizeof(hello), NULL, 0) : -ENOMEM;
	memset(hello.secret, 0, sizeof(hello.secret));
	for (i = 0; !ret && i < njobs; i++) {
		if (!jobs[i].nbos)
			continue;
		ret = kp_rw_send_job(s, &jobs[i], bm);
		em.njobs++;
	}
	if (!ret)
		ret = kp_rw_send(s, &em, sizeof(em), NULL, 0);
	/* Handed over only once the master says so (or why not). */
	ret = kp_rw_wait_answer(s, ret);
	free(bm);
	close(s);
	if (ret == -EPERM) {
		kp_info("criu's master takes no BOs from a process of uid %u: restoring the BO contents in this process",
			(unsigned int)geteuid());
		return -EAGAIN;
	}
	if (ret) {
		kp_err("cannot hand the BO contents over to criu's master: %s",
		       strerror(-ret));
		return ret;
	}
	kp_info("handed %u BOs on %u GPUs (%u pages images) over to the restore workers in criu's master",
		nbos, kp_jobs_gpus(jobs, njobs), em.njobs);
	return 0;
}
