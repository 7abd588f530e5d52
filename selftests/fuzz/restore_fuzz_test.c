// SPDX-License-Identifier: GPL-2.0
/*
 * A mutation fuzzer for RESTORE (AMDKFD_IOC_CRIU_OP): the private data,
 * the BO and device buckets and the counts are untrusted input, so every
 * mutation of a real checkpoint must either fail cleanly (an errno, no fd
 * left, every debugfs counter unchanged) or restore a process that exits
 * cleanly, and the counters must be back at baseline at the end.
 *
 * The seed is a real checkpoint of the CRIU tests' workload (criu_work.c):
 * VRAM, GTT, USERPTR and doorbell BOs on two GPUs, AQL and SDMA queues, an
 * events page and five events. Each blob is a copy of it with one to four
 * mutations: structure-aware (a field of a private-data object or of a
 * bucket set to a boundary value, a count or size moved by a little, an
 * object dropped or repeated) or blind (bytes flipped). A blob is fed to
 * RESTORE in a child process that keeps going until a RESTORE succeeds
 * (its process is then restored and the child exits, leaving the kernel to
 * tear it down) or it has run a batch; the parent forks the next child.
 *
 * Environment (the defaults are the `make check` smoke run):
 *   KFDSIM_FUZZ_COUNT    blobs to try (default 10000, about a minute
 *                        under TCG); with one job and no time limit, a
 *                        seed and a count replay the same blobs
 *   KFDSIM_FUZZ_SECONDS  stop after this long even if COUNT blobs were
 *                        not tried yet (default 0: no limit but the
 *                        test's own hang guard)
 *   KFDSIM_FUZZ_SEED     PRNG seed (default: from the clock; printed)
 *   KFDSIM_FUZZ_JOBS     children RESTOREing at once (default 1). With
 *                        more than one, the debugfs counters are compared
 *                        only at the end (a concurrent restore moves
 *                        them), so a leak is found but not its blob.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kt_harness.h"
#include "criu_work.h"

#define SLACK_PRIV	512
#define SLACK_BOS	4
#define BATCH		2000
/* How often a child compares the counters with its baseline. */
#define COUNTER_EVERY	32

/* Shared with the children: the verdicts they reached. */
struct fz_stats {
	uint64_t tried;
	uint64_t restored;
	uint64_t errs[160];	/* by errno */
	uint64_t other_err;
	int32_t failed;
	char msg[1024];
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static uint64_t interesting(uint64_t old)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 4, 7, 8, 15, 16, 63, 64, 127, 128, 255, 256,
		1023, 1024, 4095, 4096, 4097, 8192, 0x7fff, 0x8000, 0xffff,
		0x10000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
		0x100000000ULL, 1ULL << 40, 1ULL << 47, 0x7fffffffffffffffULL,
		0x8000000000000000ULL, ~0ULL, ~0ULL - 4095,
	};

	switch (rnd_below(4)) {
	case 0:
		return old + 1;
	case 1:
		return old - 1;
	case 2:
		return old ^ (1ULL << rnd_below(64));
	default:
		return v[rnd_below(sizeof(v) / sizeof(v[0]))];
	}
}

/* A RESTORE call being mutated. */
struct blob {
	struct kfd_ioctl_criu_args a;
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS + 1];
	struct kfd_criu_bo_bucket *bos;
	uint8_t *priv;
	uint64_t priv_cap;
};

static void put_field(void *p, size_t size, uint64_t v)
{
	if (size == 8)
		memcpy(p, &v, 8);
	else
		memcpy(p, &v, 4);
}

static uint64_t get_field(const void *p, size_t size)
{
	uint64_t v = 0;

	memcpy(&v, p, size == 8 ? 8 : 4);
	return v;
}

/* A field (u32 or u64, aligned) inside [base, base + len). */
static void mutate_field(uint8_t *base, size_t len)
{
	size_t size = (rnd() & 1) && len >= 8 ? 8 : 4, off;

	if (len < size)
		return;
	off = rnd_below((uint32_t)((len - size) / size + 1)) * size;
	put_field(base + off, size, interesting(get_field(base + off, size)));
}

static void *priv_obj(struct blob *b, uint32_t idx, uint32_t *type,
		      uint32_t *size)
{
	struct kc_image k = { .priv = b->priv, .priv_size = b->a.priv_data_size };

	return kc_priv_object(&k, idx, type, size);
}

static void mutate_once(struct blob *b, const struct cw_image *img)
{
	struct kc_hdr *h = (struct kc_hdr *)b->priv;
	uint32_t t, s, i, n;
	uint8_t *p, *q;

	switch (rnd_below(12)) {
	case 0: case 1: case 2: case 3:	/* a field of an object */
		p = priv_obj(b, rnd_below(h->num_objects), &t, &s);
		if (p)
			mutate_field(p, s);
		break;
	case 4:				/* an object's type or size */
		p = priv_obj(b, rnd_below(h->num_objects), &t, &s);
		if (p)
			mutate_field(p - sizeof(struct kc_obj),
				     sizeof(struct kc_obj));
		break;
	case 5:				/* the header */
		mutate_field(b->priv, sizeof(*h));
		break;
	case 6:				/* a BO bucket */
		if (b->a.num_bos && b->a.num_bos <= img->k.num_bos)
			mutate_field((uint8_t *)&b->bos[rnd_below(b->a.num_bos)],
				     sizeof(*b->bos));
		break;
	case 7:				/* a device bucket's gpu ids */
		i = rnd_below(img->k.num_devices);
		if (rnd() & 1)
			b->dev[i].user_gpu_id =
				(uint32_t)interesting(b->dev[i].user_gpu_id);
		else
			b->dev[i].actual_gpu_id =
				(uint32_t)interesting(b->dev[i].actual_gpu_id);
		break;
	case 8:				/* the counts and the size */
		switch (rnd_below(4)) {
		case 0:
			b->a.num_bos += rnd_below(3) - 1;
			break;
		case 1:
			b->a.num_objects += rnd_below(3) - 1;
			break;
		case 2:
			b->a.num_devices += rnd_below(3) - 1;
			break;
		default:
			b->a.priv_data_size += (int)rnd_below(33) - 16;
			if (b->a.priv_data_size > b->priv_cap)
				b->a.priv_data_size = b->priv_cap;
		}
		break;
	case 9:				/* drop or repeat an object */
		n = h->num_objects;
		p = priv_obj(b, rnd_below(n), &t, &s);
		if (!p)
			break;
		p -= sizeof(struct kc_obj);
		s += sizeof(struct kc_obj);
		q = b->priv + b->a.priv_data_size;
		if (rnd() & 1) {
			memmove(p, p + s, (size_t)(q - p - s));
			b->a.priv_data_size -= s;
			h->size -= s;
			h->num_objects--;
		} else if (b->a.priv_data_size + s <= b->priv_cap) {
			memmove(p + s, p, (size_t)(q - p));
			b->a.priv_data_size += s;
			h->size += s;
			h->num_objects++;
		}
		break;
	default:			/* blind: flip bytes */
		n = 1 + rnd_below(4);
		for (i = 0; i < n && b->a.priv_data_size; i++)
			b->priv[rnd_below((uint32_t)b->a.priv_data_size)] ^=
				(uint8_t)(1 + rnd_below(255));
	}
}

static void blob_from(struct blob *b, const struct cw_image *img,
		      const struct kfd_criu_device_bucket *dev)
{
	uint32_t n, i;

	memcpy(b->dev, dev, sizeof(b->dev));
	memcpy(b->bos, img->k.bos, img->k.num_bos * sizeof(*b->bos));
	memset(b->bos + img->k.num_bos, 0, SLACK_BOS * sizeof(*b->bos));
	memcpy(b->priv, img->k.priv, img->k.priv_size);
	memset(b->priv + img->k.priv_size, 0, SLACK_PRIV);
	b->a = (struct kfd_ioctl_criu_args){
		.devices = (uintptr_t)b->dev,
		.bos = (uintptr_t)b->bos,
		.priv_data = (uintptr_t)b->priv,
		.priv_data_size = img->k.priv_size,
		.num_devices = img->k.num_devices,
		.num_bos = img->k.num_bos,
		.num_objects = img->k.num_objects,
		.op = KFD_CRIU_OP_RESTORE,
	};
	/* One blob in 64 goes in unchanged: it must restore. */
	if (!rnd_below(64))
		return;
	n = 1 + rnd_below(4);
	for (i = 0; i < n; i++)
		mutate_once(b, img);
	/* The kernel reads at most what is there. */
	if (b->a.num_bos > img->k.num_bos + SLACK_BOS)
		b->a.num_bos = img->k.num_bos + SLACK_BOS;
	if (b->a.num_devices > KT_MAX_GPUS + 1)
		b->a.num_devices = KT_MAX_GPUS + 1;
}

static int lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd;
}

struct fz_run {
	const struct cw_image *img;
	struct fz_stats *st;
	uint64_t count;
	time_t deadline;	/* 0: none */
	bool alone;	/* no other child runs: counters are comparable */
};

/* The stats are shared by children running at once. */
static uint64_t fz_inc(uint64_t *v)
{
	return __atomic_add_fetch(v, 1, __ATOMIC_RELAXED);
}

#define FZ_FAIL(...) do {						\
	snprintf(st->msg, sizeof(st->msg), __VA_ARGS__);		\
	st->failed = 1;							\
	_exit(1);							\
} while (0)

/* More blobs to try: not COUNT yet, not past the deadline (if any). */
static bool fz_more(const struct fz_run *r)
{
	return r->st->tried < r->count &&
	       (!r->deadline || time(NULL) < r->deadline);
}

/* One child: RESTORE blobs until one restores or the batch is done. */
static void fz_child(const struct fz_run *r)
{
	const struct cw_image *img = r->img;
	struct fz_stats *st = r->st;
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS + 1] = { 0 };
	struct kt_props before;
	struct blob b;
	char msg[512], err[128];
	uint32_t i, nfd;
	int kfd, lowfd, ret, k;

	if (cw_map_userptrs(img, false, msg, sizeof(msg)))
		FZ_FAIL("%s", msg);
	kfd = kt_open_kfd();
	if (kfd < 0)
		FZ_FAIL("open /dev/kfd: %d", kfd);
	if (cw_devices(img, dev, msg, sizeof(msg)))
		FZ_FAIL("%s", msg);
	b.priv_cap = img->k.priv_size + SLACK_PRIV;
	b.priv = calloc(1, b.priv_cap);
	b.bos = calloc(img->k.num_bos + SLACK_BOS, sizeof(*b.bos));
	if (!b.priv || !b.bos)
		FZ_FAIL("out of memory");
	if (kt_counters(&before, err, sizeof(err)))
		FZ_FAIL("counters: %s", err);
	lowfd = lowest_free_fd();

	for (k = 0; k < BATCH && fz_more(r); k++) {
		blob_from(&b, img, dev);
		fz_inc(&st->tried);
		ret = kc_criu(kfd, &b.a);
		if (!ret) {
			/* Restored: every dma-buf it gave must be an fd. */
			fz_inc(&st->restored);
			nfd = 0;
			for (i = 0; i < b.a.num_bos; i++) {
				if (b.bos[i].dmabuf_fd == KC_INVALID_FD)
					continue;
				if (fcntl((int)b.bos[i].dmabuf_fd, F_GETFD) < 0)
					FZ_FAIL("restored BO %u: dmabuf_fd %u is not open",
						i, b.bos[i].dmabuf_fd);
				close((int)b.bos[i].dmabuf_fd);
				nfd++;
			}
			if (lowest_free_fd() != lowfd)
				FZ_FAIL("a successful RESTORE left fds beyond its %u dma-bufs",
					nfd);
			_exit(0);
		}
		if (-ret > 0 && -ret < (int)(sizeof(st->errs) / sizeof(st->errs[0])))
			fz_inc(&st->errs[-ret]);
		else
			fz_inc(&st->other_err);
		if (lowest_free_fd() != lowfd)
			FZ_FAIL("RESTORE failing with %s left an fd open (blob %llu)",
				strerror(-ret), (unsigned long long)st->tried);
		if (r->alone && !(k % COUNTER_EVERY) &&
		    cw_counters_same(&before, "after failed RESTOREs", msg,
				     sizeof(msg)))
			FZ_FAIL("%s (blob %llu, last %s)", msg,
				(unsigned long long)st->tried, strerror(-ret));
	}
	if (r->alone &&
	    cw_counters_same(&before, "after failed RESTOREs", msg,
			     sizeof(msg)))
		FZ_FAIL("%s", msg);
	_exit(0);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

FIXTURE(fz) {
	struct cw_shared *sh;
	struct kt_props base;
	struct cw_target w;
	struct cw_image img;
	int tfd;
	char msg[4096];
};

FIXTURE_SETUP(fz)
{
	char err[128];

	self->tfd = -1;
	self->w.sock = -1;
	if (geteuid())
		SKIP(return, "needs root");
	{
		struct kt_gpu gpus[KT_MAX_GPUS];

		ASSERT_LE(CW_NGPUS, kt_gpus(gpus, KT_MAX_GPUS));
	}
	self->sh = cw_shared_new();
	ASSERT_NE(NULL, self->sh);
	ASSERT_EQ(0, kt_counters(&self->base, err, sizeof(err)))
		TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(fz)
{
	cw_kill(&self->w);
	if (self->tfd >= 0)
		close(self->tfd);
	cw_image_free(&self->img);
}

TEST_F_TIMEOUT(fz, restore_mutations, 7200)
{
	struct fz_stats *st;
	struct fz_run r;
	struct timespec t0, t1;
	uint64_t seed = env_u64("KFDSIM_FUZZ_SEED", 0);
	uint64_t jobs = env_u64("KFDSIM_FUZZ_JOBS", 1);
	uint64_t children = 0, running = 0, secs_max;
	double secs;
	int status, e;
	pid_t pid;

	if (_metadata->skip)
		return;
	if (!seed)
		seed = (uint64_t)time(NULL) * 2654435761ULL | 1;
	rng_state = seed;
	/* A real checkpoint: a stopped worker with all of its state. */
	ASSERT_EQ(0, cw_start_worker(&self->w, self->sh, 0, self->msg,
				     sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_checkpoint(self->w.pid, &self->sh->lay, NULL,
				   CW_CK_STOP, &self->img, &self->tfd,
				   self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	cw_kill(&self->w);
	close(self->tfd);
	self->tfd = -1;
	ASSERT_EQ(0, cw_counters_same(&self->base, "after the worker died",
				      self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, st);
	r.img = &self->img;
	r.st = st;
	r.count = env_u64("KFDSIM_FUZZ_COUNT", 10000);
	secs_max = env_u64("KFDSIM_FUZZ_SECONDS", 0);
	r.deadline = secs_max ? time(NULL) + (time_t)secs_max : 0;
	ASSERT_LE(1, jobs);
	ASSERT_GE(64, jobs);
	r.alone = jobs == 1;
	TH_LOG("seed 0x%llx, %llu blobs, %llu jobs, %u BOs, %u objects, %llu bytes of private data",
	       (unsigned long long)seed, (unsigned long long)r.count,
	       (unsigned long long)jobs,
	       self->img.k.num_bos,
	       self->img.k.num_objects,
	       (unsigned long long)self->img.k.priv_size);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		bool more = !st->failed && fz_more(&r);

		if (more && running < jobs) {
			/* Each child draws from its own stream. */
			rng_state = seed + 0x9e3779b97f4a7c15ULL * ++children;
			pid = fork();
			ASSERT_LE(0, pid);
			if (!pid)
				fz_child(&r);
			running++;
			continue;
		}
		if (!running)
			break;
		pid = waitpid(-1, &status, 0);
		ASSERT_LT(0, pid);
		running--;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			if (!st->failed)
				snprintf(st->msg, sizeof(st->msg),
					 "child %d died: status 0x%x (blob %llu)",
					 pid, status,
					 (unsigned long long)st->tried);
			st->failed = 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	TH_LOG("%llu blobs in %.1f s (%.0f/s), %llu processes, %llu restored",
	       (unsigned long long)st->tried, secs,
	       secs > 0 ? (double)st->tried / secs : 0.0,
	       (unsigned long long)children,
	       (unsigned long long)st->restored);
	for (e = 1; e < (int)(sizeof(st->errs) / sizeof(st->errs[0])); e++)
		if (st->errs[e])
			TH_LOG("  -%s: %llu", strerrorname_np(e),
			       (unsigned long long)st->errs[e]);
	if (st->other_err)
		TH_LOG("  other errors: %llu", (unsigned long long)st->other_err);
	EXPECT_EQ(0, st->failed) TH_LOG("%s", st->msg);
	if (!st->failed && st->tried < r.count)
		TH_LOG("stopped by KFDSIM_FUZZ_SECONDS=%llu after %llu of %llu blobs",
		       (unsigned long long)secs_max,
		       (unsigned long long)st->tried,
		       (unsigned long long)r.count);
	/* Without a time limit the run is COUNT blobs long (exactly, alone). */
	if (!st->failed && !r.deadline) {
		EXPECT_LE(r.count, st->tried);
		if (r.alone)
			EXPECT_EQ(r.count, st->tried);
	}
	/* Something restored (the unchanged blobs at least) and failed. */
	EXPECT_LT(0, st->restored);
	EXPECT_LT(st->restored, st->tried);
	EXPECT_EQ(0, cw_counters_same(&self->base, "after the fuzzing",
				      self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	munmap(st, sizeof(*st));
}

TEST_HARNESS_MAIN
