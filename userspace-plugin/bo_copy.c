// SPDX-License-Identifier: GPL-2.0
/*
 * BO contents through dma-buf mappings; see bo_copy.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/dma-buf.h>

#include "bo_copy.h"
#include "checksum.h"
#include "sdma_copy.h"
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

static const char *const kp_mode_names[] = {
	[KP_COPY_CPU] = "cpu",
	[KP_COPY_AUTO] = "auto",
	[KP_COPY_SDMA] = "sdma",
};

int kp_copy_mode_parse(const char *s, enum kp_copy_mode *mode)
{
	unsigned int i;

	for (i = 0; i < KP_ARRAY_SIZE(kp_mode_names); i++) {
		if (!strcasecmp(s, kp_mode_names[i])) {
			*mode = (enum kp_copy_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

enum kp_copy_mode kp_copy_mode_from_env(void)
{
	const char *s = getenv("KFD_BO_COPY");
	enum kp_copy_mode mode;

	if (!s)
		return KP_COPY_AUTO;
	if (kp_copy_mode_parse(s, &mode)) {
		kp_warn("KFD_BO_COPY=\"%s\" is not cpu, sdma or auto; using auto",
			s);
		return KP_COPY_AUTO;
	}
	return mode;
}

const char *kp_copy_mode_name(enum kp_copy_mode mode)
{
	return mode < KP_ARRAY_SIZE(kp_mode_names) ? kp_mode_names[mode] : "?";
}

uint64_t kp_prof_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t kp_prof_add(struct kp_copy_prof *pr, enum kp_prof_phase phase,
		     uint64_t t0)
{
	uint64_t now = kp_prof_now();

	pr->ns[phase] += now - t0;
	return now;
}

static const char *const kp_prof_names[KP_PROF_PHASES] = {
	[KP_PROF_MAP] = "map",
	[KP_PROF_TOUCH] = "touch",
	[KP_PROF_SUM] = "sum",
	[KP_PROF_IO] = "io",
	[KP_PROF_FILL] = "fill",
	[KP_PROF_SDMA] = "sdma",
	[KP_PROF_SCAN] = "scan",
	[KP_PROF_COPY] = "copy",
	[KP_PROF_SETUP] = "setup",
};

/* One INFO line: the job's wall time and its phases, in ms. */
static void kp_prof_log(const struct kp_copy_job *j, const char *engine,
			uint64_t wall)
{
	char line[256];
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < KP_PROF_PHASES && n < sizeof(line); i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " %s %" PRIu64,
				      kp_prof_names[i], j->prof.ns[i] / 1000000);
	kp_info("GPU %u: %s via %s, profile (ms): wall %" PRIu64 ",%s; chunk sums %s; %" PRIu64 " windows pipelined; %s",
		j->gpu_id, j->dir == KP_COPY_SAVE ? "save" : "load", engine,
		wall / 1000000, line,
		j->chunk ? kp_sum_kind_name(j->sum_kind) : "none (version 1)",
		j->pipe_windows, j->image);
}

/* Move @n bytes out of the job's pipe into @img. 0 or -errno. */
static int kp_pipe_drain(struct kp_copy_job *j, int img, size_t n)
{
	ssize_t m;

	while (n) {
		m = splice(j->pipe[0], NULL, img, NULL, n, SPLICE_F_MOVE);
		if (m < 0 && errno == EINTR)
			continue;
		if (m < 0)
			return -errno;
		if (!m)
			return -EIO;
		n -= (size_t)m;
	}
	return 0;
}

int kp_img_write(struct kp_copy_job *j, int img, const void *p, size_t len)
{
	struct iovec iov = { .iov_base = (void *)p, .iov_len = len };
	ssize_t n;
	int ret;

	while (j->splice && iov.iov_len) {
		n = vmsplice(j->pipe[1], &iov, 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/*
			 * Nothing is in the pipe. The source cannot be pinned
			 * (EFAULT: a PFN mapping) or the pipe is refused:
			 * write() from now on.
			 */
			j->splice = false;
			close(j->pipe[0]);
			close(j->pipe[1]);
			break;
		}
		ret = kp_pipe_drain(j, img, (size_t)n);
		if (ret)
			return ret;
		iov.iov_base = (uint8_t *)iov.iov_base + n;
		iov.iov_len -= (size_t)n;
	}
	return iov.iov_len ? kp_write_all(img, iov.iov_base, iov.iov_len) : 0;
}

/* Version 1: every byte, straight through. */
static int kp_flat_io(struct kp_copy_job *j, int img,
		      const struct kp_copy_bo *bo, uint64_t off, void *buf,
		      size_t len, struct kp_sum *sum)
{
	uint64_t t;
	ssize_t n;
	int ret;

	if (j->dir == KP_COPY_SAVE) {
		t = kp_prof_now();
		kp_sum_update(sum, buf, len);
		t = kp_prof_add(&j->prof, KP_PROF_SUM, t);
		ret = kp_img_write(j, img, buf, len);
		kp_prof_add(&j->prof, KP_PROF_IO, t);
		if (ret)
			kp_err("cannot write image %s: %s", j->image,
			       strerror(-ret));
		return ret;
	}
	t = kp_prof_now();
	n = kp_read_all(img, buf, len);
	t = kp_prof_add(&j->prof, KP_PROF_IO, t);
	if (n >= 0 && (size_t)n == len) {
		kp_sum_update(sum, buf, len);
		kp_prof_add(&j->prof, KP_PROF_SUM, t);
		return 0;
	}
	if (n >= 0) {
		kp_err("image %s is truncated: BO 0x%" PRIx64 " lacks %" PRIu64 " of its %" PRIu64 " bytes",
		       j->image, bo->addr, bo->size - off - n, bo->size);
		return -EIO;
	}
	kp_err("cannot read image %s: %s", j->image, strerror((int)-n));
	return (int)n;
}

static const char *const kp_kind_names[] = {
	[KFD_CHUNK__KFD_CHUNK_ZERO] = "zero",
	[KFD_CHUNK__KFD_CHUNK_DATA] = "stored",
	[KFD_CHUNK__KFD_CHUNK_PARENT] = "parent's",
};

void kp_chunk_classify(const struct kp_copy_job *j, struct kp_copy_bo *bo,
		       uint64_t c, size_t clen, bool zero, uint64_t h)
{
	if (zero) {
		bo->kinds[c] = KFD_CHUNK__KFD_CHUNK_ZERO;
		bo->sums[c] = clen == j->chunk ?
			      j->zero_sum :
			      kp_chunk_sum_zeros(j->sum_kind, clen);
		return;
	}
	bo->sums[c] = h;
	bo->kinds[c] = bo->base && bo->base[c] == h ?
		       KFD_CHUNK__KFD_CHUNK_PARENT : KFD_CHUNK__KFD_CHUNK_DATA;
}

/*
 * Save side of one chunk: classify it (one pass: zero test, then the sum
 * of a chunk that is not zero) unless the GPU did. After a GPU scan the
 * CPU still sums every DATA chunk it writes (the bytes are at hand, SDMA
 * just copied them) and holds the GPU to it. The caller writes DATA.
 */
int kp_chunk_save(struct kp_copy_job *j, struct kp_copy_bo *bo,
		  uint64_t c, const uint8_t *p, size_t clen)
{
	uint64_t h = 0, t = kp_prof_now();
	bool zero;

	if (!bo->scanned) {
		zero = kp_chunk_scan(j->sum_kind, p, clen, &h);
		kp_chunk_classify(j, bo, c, clen, zero, h);
	} else if (bo->kinds[c] == KFD_CHUNK__KFD_CHUNK_DATA) {
		h = kp_chunk_sum(j->sum_kind, p, clen);
		if (bo->scan_zero)
			bo->sums[c] = h;
		else if (h != bo->sums[c]) {
			kp_err("BO 0x%" PRIx64 " (GPU %u): the GPU's checksum of its chunk at offset %" PRIu64 " is 0x%016" PRIx64 ", the bytes copied give 0x%016" PRIx64 ": the dump fails",
			       bo->addr, j->gpu_id, c * j->chunk, bo->sums[c],
			       h);
			return -EIO;
		}
	}
	kp_prof_add(&j->prof, KP_PROF_SUM, t);
	return 0;
}

/* Write @len bytes of DATA chunks at @p (a run of them, or nothing). */
int kp_run_write(struct kp_copy_job *j, int img, struct kp_copy_bo *bo,
		 const uint8_t *p, size_t len)
{
	uint64_t t = kp_prof_now();
	int ret;

	if (!len)
		return 0;
	ret = kp_img_write(j, img, p, len);
	kp_prof_add(&j->prof, KP_PROF_IO, t);
	if (ret)
		kp_err("cannot write image %s: %s", j->image, strerror(-ret));
	bo->stored += len;
	return ret;
}

/*
 * Read @len bytes of a run of DATA chunks into @p, the first of them chunk
 * @c of @bo. 0 or -errno, logged.
 */
static int kp_run_read(struct kp_copy_job *j, int img,
		       const struct kp_copy_bo *bo, uint64_t c, uint8_t *p,
		       size_t len)
{
	uint64_t t = kp_prof_now();
	ssize_t n;

	n = kp_read_all(img, p, len);
	kp_prof_add(&j->prof, KP_PROF_IO, t);
	if (n < 0) {
		kp_err("cannot read image %s: %s", j->image, strerror((int)-n));
		return (int)n;
	}
	if ((size_t)n != len) {
		kp_err("image %s is truncated: BO 0x%" PRIx64 " lacks bytes of its chunk at offset %" PRIu64,
		       j->image, bo->addr,
		       (c + (uint64_t)n / j->chunk) * j->chunk);
		return -EIO;
	}
	return 0;
}

/*
 * Load one chunk into @p, from wherever it is, and check its sum. A DATA
 * chunk is already there (kp_run_read()).
 */
static int kp_chunk_load(struct kp_copy_job *j, const struct kp_copy_bo *bo,
			 uint64_t c, uint8_t *p, size_t clen)
{
	uint8_t kind = bo->kinds[c];
	uint64_t h, t = kp_prof_now();
	int ret;

	switch (kind) {
	case KFD_CHUNK__KFD_CHUNK_ZERO:
		memset(p, 0, clen);
		h = clen == j->chunk ? j->zero_sum :
				       kp_chunk_sum_zeros(j->sum_kind, clen);
		kp_prof_add(&j->prof, KP_PROF_FILL, t);
		break;
	case KFD_CHUNK__KFD_CHUNK_DATA:
		h = kp_chunk_sum(j->sum_kind, p, clen);
		kp_prof_add(&j->prof, KP_PROF_SUM, t);
		break;
	default:
		ret = kp_chain_read(bo->chain, bo->chain_bo, c, p, clen);
		if (ret)
			return ret;
		t = kp_prof_add(&j->prof, KP_PROF_FILL, t);
		h = kp_chunk_sum(j->sum_kind, p, clen);
		kp_prof_add(&j->prof, KP_PROF_SUM, t);
	}
	if (h != bo->sums[c]) {
		kp_err("BO 0x%" PRIx64 " (GPU %u): checksum mismatch in its %s chunk at offset %" PRIu64 " (%s%s): recorded 0x%016" PRIx64 ", the data gives 0x%016" PRIx64,
		       bo->addr, j->gpu_id, kp_kind_names[kind], c * j->chunk,
		       kind == KFD_CHUNK__KFD_CHUNK_PARENT ? "from the parent image " : "image ",
		       kind == KFD_CHUNK__KFD_CHUNK_PARENT ? bo->chain->where : j->image,
		       bo->sums[c], h);
		return -EIO;
	}
	return 0;
}

/*
 * Bytes of consecutive DATA chunks moved with one write() or read(): fewer
 * system calls (each costs much under emulation), and still small enough
 * that a run's chunks are in the cache between their sum and their copy.
 */
#define KP_IO_RUN	(1U << 20)

int kp_copy_image_io(struct kp_copy_job *j, int img,
		     struct kp_copy_bo *bo, uint64_t off, void *buf,
		     size_t len, struct kp_sum *sum)
{
	uint8_t *p = buf;
	uint64_t c, d;
	size_t k, clen, run = 0, run_at = 0, have = 0, n;
	int ret;

	if (!j->chunk)
		return kp_flat_io(j, img, bo, off, buf, len, sum);
	/* Windows start at chunk boundaries (kp_copy_run()). */
	for (k = 0; k < len; k += clen) {
		c = (off + k) / j->chunk;
		clen = kp_chunk_len(bo->size, j->chunk, c);
		if (clen > len - k)
			clen = len - k;
		if (j->dir == KP_COPY_SAVE) {
			ret = kp_chunk_save(j, bo, c, p + k, clen);
			if (!ret && (bo->kinds[c] != KFD_CHUNK__KFD_CHUNK_DATA ||
				     run + clen > KP_IO_RUN)) {
				ret = kp_run_write(j, img, bo, p + run_at, run);
				run = 0;
			}
			if (bo->kinds[c] == KFD_CHUNK__KFD_CHUNK_DATA) {
				if (!run)
					run_at = k;
				run += clen;
			}
		} else {
			/* A DATA chunk not read yet: read its run. */
			ret = 0;
			if (bo->kinds[c] == KFD_CHUNK__KFD_CHUNK_DATA &&
			    k >= have) {
				for (n = 0, d = c; k + n < len && n < KP_IO_RUN &&
				     bo->kinds[d] == KFD_CHUNK__KFD_CHUNK_DATA;
				     d++)
					n += KP_MIN(kp_chunk_len(bo->size,
								 j->chunk, d),
						    len - k - n);
				ret = kp_run_read(j, img, bo, c, p + k, n);
				have = k + n;
			}
			if (!ret)
				ret = kp_chunk_load(j, bo, c, p + k, clen);
		}
		if (ret)
			return ret;
		kp_sum_u64(sum, bo->sums[c]);
	}
	return j->dir == KP_COPY_SAVE ?
	       kp_run_write(j, img, bo, p + run_at, run) : 0;
}

/* One thread's share of kp_classify_chunks(). */
struct kp_classify_part {
	const struct kp_copy_job *j;
	struct kp_copy_bo *bo;
	const uint8_t *p;	/* chunk c0's bytes */
	uint64_t c0, n;
	bool zero_only;
};

static void kp_classify_part(const struct kp_classify_part *w)
{
	const struct kp_copy_job *j = w->j;
	struct kp_copy_bo *bo = w->bo;
	const uint8_t *q;
	uint64_t c, h;
	size_t clen;
	bool zero;

	for (c = w->c0; c < w->c0 + w->n; c++) {
		clen = kp_chunk_len(bo->size, j->chunk, c);
		q = w->p + (c - w->c0) * j->chunk;
		zero = kp_is_zero(q, clen);
		h = zero || w->zero_only ? 0 : kp_chunk_sum(j->sum_kind, q, clen);
		kp_chunk_classify(j, bo, c, clen, zero, h);
		if (w->zero_only && !zero)
			bo->kinds[c] = KFD_CHUNK__KFD_CHUNK_DATA;
	}
}

static void *kp_classify_worker(void *arg)
{
	kp_classify_part(arg);
	return NULL;
}

void kp_classify_chunks(const struct kp_copy_job *j, struct kp_copy_bo *bo,
			const uint8_t *p, uint64_t c0, uint64_t n,
			bool zero_only)
{
	struct kp_classify_part a = {
		.j = j, .bo = bo, .p = p, .c0 = c0, .n = n,
		.zero_only = zero_only,
	}, b;
	pthread_t worker;
	bool two;
	int err;

	two = j->classify_threads > 1 && n > 1 &&
	      n * j->chunk >= KP_CLASSIFY_SPLIT;
	if (two) {
		b = a;
		a.n = n / 2;
		b.c0 = c0 + a.n;
		b.n = n - a.n;
		b.p = p + a.n * j->chunk;
		err = pthread_create(&worker, NULL, kp_classify_worker, &b);
		if (err) {
			kp_debug("GPU %u: no second classifying thread (%s): one does it all",
				 j->gpu_id, strerror(err));
			two = false;
			a.n = n;
		}
	}
	kp_classify_part(&a);
	if (two)
		pthread_join(worker, NULL);
}

/*
 * The worker's share of a sparse window's store with two threads
 * (kp_sparse_store()): the DATA chunks of the window's chunks [from, to),
 * copied in order into a buffer of its own and summed there, until the
 * next one would not fit. It touches only those chunks' sums.
 */
struct kp_store_part {
	const struct kp_copy_job *j;
	struct kp_copy_bo *bo;
	const uint8_t *map;	/* the window's first chunk (c0) */
	uint64_t c0, from, to;
	uint8_t *buf;
	size_t cap;
	/* results */
	uint64_t next;		/* the first chunk it did not store */
	size_t fill;		/* bytes in buf */
	bool bad;		/* chunk next's sum is not the recorded one */
};

static void *kp_store_worker(void *arg)
{
	struct kp_store_part *w = arg;
	const struct kp_copy_job *j = w->j;
	struct kp_copy_bo *bo = w->bo;
	uint64_t c, h;
	size_t clen;

	for (c = w->from; c < w->to; c++) {
		if (bo->kinds[c] != KFD_CHUNK__KFD_CHUNK_DATA)
			continue;
		clen = kp_chunk_len(bo->size, j->chunk, c);
		if (w->fill + clen > w->cap)
			break;
		memcpy(w->buf + w->fill, w->map + (c - w->c0) * j->chunk,
		       clen);
		/* As kp_chunk_save() after a classification. */
		h = kp_chunk_sum(j->sum_kind, w->buf + w->fill, clen);
		if (bo->scan_zero) {
			bo->sums[c] = h;
		} else if (h != bo->sums[c]) {
			w->bad = true;
			break;
		}
		w->fill += clen;
	}
	w->next = c;
	return NULL;
}

/*
 * The job's thread's share: the DATA chunks among [@from, @to) of the
 * window (chunk @c0 at @map), each copied into the staging buffer behind
 * the one before, summed there while it is in the cache
 * (kp_chunk_save()); a full staging buffer goes to the image in one
 * write. *@fill: bytes in the staging buffer, not yet written.
 */
static int kp_sparse_range(struct kp_copy_job *j, int img,
			   struct kp_copy_bo *bo, uint64_t c0, uint64_t from,
			   uint64_t to, const uint8_t *map, size_t *fill,
			   uint64_t *stored)
{
	uint64_t c, t;
	size_t clen;
	int ret = 0;

	for (c = from; !ret && c < to; c++) {
		if (bo->kinds[c] != KFD_CHUNK__KFD_CHUNK_DATA)
			continue;
		clen = kp_chunk_len(bo->size, j->chunk, c);
		if (*fill + clen > j->stage_len) {
			ret = kp_run_write(j, img, bo, j->stage, *fill);
			*fill = 0;
			if (ret)
				break;
		}
		t = kp_prof_now();
		memcpy(j->stage + *fill, map + (c - c0) * j->chunk, clen);
		kp_prof_add(&j->prof, KP_PROF_COPY, t);
		ret = kp_chunk_save(j, bo, c, j->stage + *fill, clen);
		*fill += clen;
		*stored += clen;
	}
	return ret;
}

int kp_sparse_store(struct kp_copy_job *j, int img, struct kp_copy_bo *bo,
		    size_t len, uint64_t c0, const uint8_t *map,
		    struct kp_sum *sum, uint8_t *buf2, size_t cap2,
		    uint64_t *stored)
{
	uint64_t n = (len + j->chunk - 1) / j->chunk, c, mid = n, t;
	struct kp_store_part w = { 0 };
	pthread_t worker;
	size_t fill = 0;
	bool two = false;
	int ret, err;

	if (j->classify_threads > 1 && n > 1 && len >= KP_CLASSIFY_SPLIT &&
	    buf2 && cap2) {
		mid = n / 2;
		w = (struct kp_store_part){
			.j = j, .bo = bo, .map = map, .c0 = c0,
			.from = c0 + mid, .to = c0 + n,
			.buf = buf2, .cap = cap2,
		};
		err = pthread_create(&worker, NULL, kp_store_worker, &w);
		two = !err;
		if (err) {
			kp_debug("GPU %u: no second storing thread (%s): one does it all",
				 j->gpu_id, strerror(err));
			mid = n;
		}
	}
	ret = kp_sparse_range(j, img, bo, c0, c0, c0 + mid, map, &fill,
			      stored);
	if (two) {
		t = kp_prof_now();
		pthread_join(worker, NULL);
		kp_prof_add(&j->prof, KP_PROF_COPY, t);
		if (!ret && w.bad) {
			/* Sum again here: it logs the mismatch and fails. */
			ret = kp_chunk_save(j, bo, w.next, w.buf + w.fill,
					    kp_chunk_len(bo->size, j->chunk,
							 w.next));
			ret = ret ? ret : -EIO;
		}
		if (!ret)
			ret = kp_run_write(j, img, bo, j->stage, fill);
		fill = 0;
		if (!ret)
			ret = kp_run_write(j, img, bo, w.buf, w.fill);
		*stored += w.fill;
		/* What did not fit in the worker's buffer. */
		if (!ret)
			ret = kp_sparse_range(j, img, bo, c0, w.next, c0 + n,
					      map, &fill, stored);
	}
	if (!ret)
		ret = kp_run_write(j, img, bo, j->stage, fill);
	for (c = c0; !ret && c < c0 + n; c++)
		kp_sum_u64(sum, bo->sums[c]);
	return ret;
}

unsigned int kp_classify_threads_from_env(unsigned int njobs)
{
	const char *s = getenv("KFD_BO_SCAN_THREADS");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int def;

	def = njobs && cpus >= 2 * (long)njobs ? 2 : 1;
	if (!s)
		return def;
	if (!strcmp(s, "1") || !strcmp(s, "2"))
		return (unsigned int)(*s - '0');
	kp_warn("KFD_BO_SCAN_THREADS=\"%s\" is not 1 or 2; using %u", s, def);
	return def;
}

/* Tell the exporter the CPU is about to access, or is done with, the BO. */
int kp_dmabuf_sync(const struct kp_copy_job *j, int fd, bool start)
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

/* Fault in every page of a mapping (KFD_PLUGIN_PROFILE), writing if @w. */
static void kp_touch_pages(void *p, size_t len, bool w)
{
	volatile uint8_t *b = p;
	size_t page = kp_page_size(), i;

	for (i = 0; i < len; i += page) {
		if (w)
			b[i] = 0;	/* the load overwrites every byte */
		else
			(void)b[i];
	}
}

/*
 * The bytes of a mapped window @p, a staging piece at a time: the BO's
 * memory is read (save) or written (load) once, by a memcpy, and the zero
 * test, the sum and the system call work on the staging copy, still in
 * the cache. Measured in the guest: write() and read() into a dma-buf
 * mapping run at half the speed they run with ordinary memory.
 */
static int kp_cpu_staged(struct kp_copy_job *j, int img, struct kp_copy_bo *bo,
			 uint64_t off, uint8_t *p, size_t len,
			 struct kp_sum *sum)
{
	size_t x, n;
	uint64_t t;
	int ret = 0;

	for (x = 0; !ret && x < len; x += n) {
		n = KP_MIN(j->stage_len, len - x);
		if (j->dir == KP_COPY_SAVE) {
			t = kp_prof_now();
			memcpy(j->stage, p + x, n);
			kp_prof_add(&j->prof, KP_PROF_COPY, t);
			ret = kp_copy_image_io(j, img, bo, off + x, j->stage, n,
					       sum);
			continue;
		}
		ret = kp_copy_image_io(j, img, bo, off + x, j->stage, n, sum);
		t = kp_prof_now();
		if (!ret)
			memcpy(p + x, j->stage, n);
		kp_prof_add(&j->prof, KP_PROF_COPY, t);
	}
	return ret;
}

/*
 * The pipelined cpu engine (issue #23): a window's pieces go through the
 * job's staging buffers (j->stage_buf[], piece k in buffer k modulo
 * j->stage_bufs) between two threads, so that the memcpy and the sums
 * of one piece run while the image I/O of another does:
 *   save  the copier memcpys piece k out of the mapping a chunk at a
 *         time and classifies each chunk while it is in the cache
 *         (kp_chunk_save()), while the job's thread writes piece k - 1's
 *         DATA chunks to the image;
 *   load  the job's thread reads piece k's DATA chunks from the image
 *         while the copier fills and checks piece k - 1's chunks
 *         (kp_chunk_load(): a bad sum fails the window before its bytes
 *         reach the BO) and memcpys them into the mapping.
 * Each piece's sums go to the BO's sum in order (only the copier adds
 * to it), so the image and the checksums are those of kp_cpu_staged().
 * @copied counts the pieces the copier is done with, @moved those the
 * job's thread wrote (save) or read (load); a buffer is free for piece k
 * once piece k - stage_bufs is done on both sides. The first error of
 * either thread (@err) stops both; the job's thread joins the copier.
 * Phases: the copier adds to copy, sum and fill only, the job's thread
 * to io only (distinct counters: no lock).
 */
struct kp_cpu_pipe {
	struct kp_copy_job *j;
	struct kp_copy_bo *bo;
	struct kp_sum *sum;
	uint8_t *map;		/* the window's mapping */
	uint64_t off;		/* the window's offset in the BO */
	size_t len;		/* its bytes */
	size_t piece;		/* bytes per piece (whole chunks) */
	uint64_t np;		/* pieces */
	/*
	 * save, another engine (kp_pipe_save_fetched()): piece k is at base
	 * + its window offset, put there by @fetch in the copier's thread
	 * (each piece its own place: no buffer to wait for); else NULL.
	 */
	uint8_t *base;
	kp_pipe_fetch_fn fetch;
	void *fetch_ctx;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t copied;	/* under lock */
	uint64_t moved;		/* under lock */
	int err;		/* under lock */
};

/* Bytes per step of the copier's memcpy of a version 1 image's piece. */
#define KP_CPU_STEP	(64U << 10)

/* Piece @k: its staging buffer, offset in the window and length. */
static uint8_t *kp_pipe_piece(const struct kp_cpu_pipe *pp, uint64_t k,
			      uint64_t *at, size_t *n)
{
	*at = k * pp->piece;
	*n = (size_t)KP_MIN((uint64_t)pp->piece, pp->len - *at);
	if (pp->base)
		return pp->base + *at;
	return pp->j->stage_buf[k % pp->j->stage_bufs];
}

/*
 * Wait until *@count > @k (@k is ready) or, with @free, until piece @k
 * has a free buffer (*@count + stage_bufs > @k). false: stop, an error.
 */
static bool kp_pipe_wait(struct kp_cpu_pipe *pp, const uint64_t *count,
			 uint64_t k, bool free)
{
	uint64_t ahead = free ? pp->j->stage_bufs : 0;
	bool go;

	pthread_mutex_lock(&pp->lock);
	while (!pp->err && *count + ahead <= k)
		pthread_cond_wait(&pp->cond, &pp->lock);
	go = !pp->err;
	pthread_mutex_unlock(&pp->lock);
	return go;
}

/* No error on either side yet? */
static bool kp_pipe_ok(struct kp_cpu_pipe *pp)
{
	bool ok;

	pthread_mutex_lock(&pp->lock);
	ok = !pp->err;
	pthread_mutex_unlock(&pp->lock);
	return ok;
}

/* Piece @k is done on one side (*@count), or that side failed (@ret). */
static void kp_pipe_done(struct kp_cpu_pipe *pp, uint64_t *count, uint64_t k,
			 int ret)
{
	pthread_mutex_lock(&pp->lock);
	if (ret && !pp->err)
		pp->err = ret;
	else if (!ret)
		*count = k + 1;
	pthread_cond_broadcast(&pp->cond);
	pthread_mutex_unlock(&pp->lock);
}

/*
 * The step of a piece's loop at byte @k of its @n (window offset @at):
 * its chunk *@c and length, a chunk (version 1: KP_CPU_STEP bytes).
 */
static size_t kp_pipe_step(const struct kp_cpu_pipe *pp, uint64_t at,
			   size_t k, size_t n, uint64_t *c)
{
	const struct kp_copy_job *j = pp->j;
	size_t clen;

	*c = j->chunk ? (pp->off + at + k) / j->chunk : 0;
	clen = j->chunk ? kp_chunk_len(pp->bo->size, j->chunk, *c) :
			  KP_CPU_STEP;
	return KP_MIN(clen, n - k);
}

/*
 * The copier's part of piece @buf (window offset @at, @n bytes). save:
 * one memcpy of the piece out of the mapping, then each chunk (version 1:
 * KP_CPU_STEP bytes) classified and summed (kp_chunk_save()); load: each
 * chunk filled and checked (kp_chunk_load(): the job's thread read the
 * DATA ones), then one memcpy of the piece into the mapping. One memcpy
 * per piece, not per chunk: 64 KiB memcpys from the copier made the
 * guest's copy 3.7 times slower (Documentation/benchmarks.rst).
 */
static int kp_pipe_copy(struct kp_cpu_pipe *pp, uint64_t piece, uint8_t *buf,
			uint64_t at, size_t n)
{
	struct kp_copy_job *j = pp->j;
	struct kp_copy_bo *bo = pp->bo;
	bool save = j->dir == KP_COPY_SAVE;
	size_t k, clen;
	uint64_t c, t;
	int ret;

	t = kp_prof_now();
	if (pp->fetch) {
		ret = pp->fetch(pp->fetch_ctx, piece, at, n);
		if (ret)
			return ret;
	} else if (save) {
		memcpy(buf, pp->map + at, n);
		kp_prof_add(&j->prof, KP_PROF_COPY, t);
	}
	for (k = 0; k < n; k += clen) {
		clen = kp_pipe_step(pp, at, k, n, &c);
		t = kp_prof_now();
		if (j->chunk) {
			ret = save ? kp_chunk_save(j, bo, c, buf + k, clen) :
				     kp_chunk_load(j, bo, c, buf + k, clen);
			if (ret)
				return ret;
			kp_sum_u64(pp->sum, bo->sums[c]);
		} else {
			kp_sum_update(pp->sum, buf + k, clen);
			kp_prof_add(&j->prof, KP_PROF_SUM, t);
		}
	}
	if (!save) {
		t = kp_prof_now();
		memcpy(pp->map + at, buf, n);
		kp_prof_add(&j->prof, KP_PROF_COPY, t);
	}
	return 0;
}

static void *kp_pipe_copier(void *arg)
{
	struct kp_cpu_pipe *pp = arg;
	bool save = pp->j->dir == KP_COPY_SAVE;
	uint64_t k, at;
	uint8_t *buf;
	size_t n;
	int ret;

	for (k = 0; k < pp->np; k++) {
		/*
		 * save: a free buffer (each piece its own place at pp->base:
		 * only no error); load: the piece read.
		 */
		if (save && pp->base ? !kp_pipe_ok(pp) :
		    !kp_pipe_wait(pp, &pp->moved, k, save))
			break;
		buf = kp_pipe_piece(pp, k, &at, &n);
		ret = kp_pipe_copy(pp, k, buf, at, n);
		kp_pipe_done(pp, &pp->copied, k, ret);
		if (ret)
			break;
	}
	return NULL;
}

/* save: the DATA chunks of piece @buf (window offset @at), in runs. */
static int kp_pipe_write(struct kp_cpu_pipe *pp, int img, const uint8_t *buf,
			 uint64_t at, size_t n)
{
	struct kp_copy_job *j = pp->j;
	struct kp_copy_bo *bo = pp->bo;
	size_t k, clen, run = 0, run_at = 0;
	uint64_t c, t;
	int ret;

	if (!j->chunk) {
		t = kp_prof_now();
		ret = kp_img_write(j, img, buf, n);
		kp_prof_add(&j->prof, KP_PROF_IO, t);
		if (ret)
			kp_err("cannot write image %s: %s", j->image,
			       strerror(-ret));
		return ret;
	}
	for (k = 0; k < n; k += clen) {
		clen = kp_pipe_step(pp, at, k, n, &c);
		if (bo->kinds[c] == KFD_CHUNK__KFD_CHUNK_DATA) {
			if (!run)
				run_at = k;
			run += clen;
			continue;
		}
		ret = kp_run_write(j, img, bo, buf + run_at, run);
		run = 0;
		if (ret)
			return ret;
	}
	return kp_run_write(j, img, bo, buf + run_at, run);
}

/* load: the DATA chunks of piece @buf (window offset @at), in runs. */
static int kp_pipe_read(struct kp_cpu_pipe *pp, int img, uint8_t *buf,
			uint64_t at, size_t n)
{
	struct kp_copy_job *j = pp->j;
	const struct kp_copy_bo *bo = pp->bo;
	size_t k, clen, run;
	uint64_t c, d, t;
	ssize_t got;
	int ret;

	if (!j->chunk) {
		t = kp_prof_now();
		got = kp_read_all(img, buf, n);
		kp_prof_add(&j->prof, KP_PROF_IO, t);
		if (got >= 0 && (size_t)got == n)
			return 0;
		if (got < 0) {
			kp_err("cannot read image %s: %s", j->image,
			       strerror((int)-got));
			return (int)got;
		}
		kp_err("image %s is truncated: BO 0x%" PRIx64 " lacks %" PRIu64 " of its %" PRIu64 " bytes",
		       j->image, bo->addr, bo->size - pp->off - at - got,
		       bo->size);
		return -EIO;
	}
	for (k = 0; k < n; k += clen) {
		clen = kp_pipe_step(pp, at, k, n, &c);
		if (bo->kinds[c] != KFD_CHUNK__KFD_CHUNK_DATA)
			continue;
		for (run = 0, d = c; k + run < n &&
		     bo->kinds[d] == KFD_CHUNK__KFD_CHUNK_DATA; d++)
			run += KP_MIN(kp_chunk_len(bo->size, j->chunk, d),
				      n - k - run);
		ret = kp_run_read(j, img, bo, c, buf + k, run);
		if (ret)
			return ret;
		clen = run;
	}
	return 0;
}

/*
 * Move a window through the pipeline of @pp: the copier thread and the
 * job's thread. 1 if no copier thread can be started (nothing was moved:
 * the caller moves the window on one thread), else 0 or -errno.
 */
static int kp_pipe_run(struct kp_cpu_pipe *pp, int img)
{
	struct kp_copy_job *j = pp->j;
	bool save = j->dir == KP_COPY_SAVE;
	pthread_t copier;
	uint64_t k, at;
	uint8_t *buf;
	size_t n;
	int ret;

	pp->np = (pp->len + pp->piece - 1) / pp->piece;
	pthread_mutex_init(&pp->lock, NULL);
	pthread_cond_init(&pp->cond, NULL);
	ret = pthread_create(&copier, NULL, kp_pipe_copier, pp);
	if (ret) {
		kp_debug("GPU %u: no copier thread (%s): one thread moves the window",
			 j->gpu_id, strerror(ret));
		ret = 1;
		goto out;
	}
	j->pipe_windows++;
	for (k = 0; k < pp->np; k++) {
		/* save: the piece copied; load: a free buffer. */
		if (!kp_pipe_wait(pp, &pp->copied, k, !save))
			break;
		buf = kp_pipe_piece(pp, k, &at, &n);
		ret = save ? kp_pipe_write(pp, img, buf, at, n) :
			     kp_pipe_read(pp, img, buf, at, n);
		kp_pipe_done(pp, &pp->moved, k, ret);
		if (ret)
			break;
	}
	pthread_join(copier, NULL);
	ret = pp->err;
out:
	pthread_cond_destroy(&pp->cond);
	pthread_mutex_destroy(&pp->lock);
	return ret;
}

static int kp_cpu_pipe_window(struct kp_copy_job *j, int img,
			      struct kp_copy_bo *bo, uint64_t off, uint8_t *p,
			      size_t len, struct kp_sum *sum)
{
	struct kp_cpu_pipe pp = {
		.j = j, .bo = bo, .sum = sum, .map = p, .off = off,
		.len = len, .piece = j->stage_len,
	};
	int ret = kp_pipe_run(&pp, img);

	return ret == 1 ? kp_cpu_staged(j, img, bo, off, p, len, sum) : ret;
}

int kp_pipe_save_fetched(struct kp_copy_job *j, int img,
			 struct kp_copy_bo *bo, uint64_t off, uint8_t *base,
			 size_t len, size_t piece, struct kp_sum *sum,
			 kp_pipe_fetch_fn fetch, void *ctx)
{
	struct kp_cpu_pipe pp = {
		.j = j, .bo = bo, .sum = sum, .off = off, .len = len,
		.piece = piece, .base = base, .fetch = fetch, .fetch_ctx = ctx,
	};

	return kp_pipe_run(&pp, img);
}

/* The CPU engine: one window through a mapping of the BO's dma-buf. */
static int kp_cpu_window(void *ctx, int img, struct kp_copy_bo *bo,
			 uint64_t off, size_t len, struct kp_sum *sum)
{
	struct kp_copy_job *j = ctx;
	int prot = j->dir == KP_COPY_SAVE ? PROT_READ : PROT_READ | PROT_WRITE;
	uint64_t t = kp_prof_now();
	void *p;
	int ret;

	p = mmap(NULL, len, prot, MAP_SHARED, bo->dmabuf_fd, (off_t)off);
	if (p == MAP_FAILED) {
		ret = -errno;
		/* amdgpu refuses CPU mappings of NO_CPU_ACCESS BOs. */
		kp_err("BO 0x%" PRIx64 " (GPU %u): cannot map %zu bytes at offset %" PRIu64 " of its dma-buf: %s%s",
		       bo->addr, j->gpu_id, len, off, strerror(-ret),
		       ret == -EPERM ?
		       " (the kernel allows no CPU access to it; copy it with KFD_BO_COPY=sdma)" :
		       "");
		return ret;
	}
	ret = kp_dmabuf_sync(j, bo->dmabuf_fd, true);
	if (ret) {
		kp_err("BO 0x%" PRIx64 " (GPU %u): DMA_BUF_IOCTL_SYNC: %s",
		       bo->addr, j->gpu_id, strerror(-ret));
		goto out_unmap;
	}
	t = kp_prof_add(&j->prof, KP_PROF_MAP, t);
	if (j->prof.touch) {
		kp_touch_pages(p, len, j->dir == KP_COPY_LOAD);
		kp_prof_add(&j->prof, KP_PROF_TOUCH, t);
	}
	if (j->stage_bufs > 1 && len > j->stage_len)
		ret = kp_cpu_pipe_window(j, img, bo, off, p, len, sum);
	else if (j->stage)
		ret = kp_cpu_staged(j, img, bo, off, p, len, sum);
	else
		ret = kp_copy_image_io(j, img, bo, off, p, len, sum);
	t = kp_prof_now();
	if (kp_dmabuf_sync(j, bo->dmabuf_fd, false) && !ret) {
		kp_err("BO 0x%" PRIx64 " (GPU %u): DMA_BUF_IOCTL_SYNC end failed",
		       bo->addr, j->gpu_id);
		ret = -EIO;
	}
out_unmap:
	munmap(p, len);
	kp_prof_add(&j->prof, KP_PROF_MAP, t);
	return ret;
}

static const struct kp_copy_ops kp_cpu_ops = {
	.window = kp_cpu_window,
};

static int kp_copy_bo(struct kp_copy_job *j, int img, struct kp_copy_bo *bo,
		      const struct kp_copy_ops *ops, void *ctx)
{
	struct kp_sum sum;
	uint64_t off, sz;
	size_t len;
	int ret = 0;

	kp_sum_init(&sum);
	if (j->dir == KP_COPY_SAVE)
		bo->stored = 0;
	if (ops->begin) {
		ret = ops->begin(ctx, bo);
		if (ret)
			return ret;
	}
	for (off = 0; !ret && off < bo->size; off += len) {
		len = (size_t)KP_MIN(j->window, bo->size - off);
		ret = ops->window(ctx, img, bo, off, len, &sum);
	}
	if (ops->end)
		ops->end(ctx, bo);
	if (ret)
		return ret;
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

/* Bytes of the job's BOs in the pages image (load; stored if chunked). */
static uint64_t kp_job_image_bytes(const struct kp_copy_job *j)
{
	uint64_t total = 0;
	unsigned int i;

	for (i = 0; i < j->nbos; i++)
		total += j->chunk ? j->bos[i].stored : j->bos[i].size;
	return total;
}

/*
 * The pipe of kp_img_write(), as large as one write of a run (a smaller
 * one, if the system's pipe-max-size says so, only takes more calls).
 * Without a pipe, write().
 */
static void kp_pipe_setup(struct kp_copy_job *j)
{
	j->splice = !pipe2(j->pipe, O_CLOEXEC);
	if (j->splice)
		(void)fcntl(j->pipe[1], F_SETPIPE_SZ, (int)KP_IO_RUN);
}

static int kp_job_save(struct kp_copy_job *j, const struct kp_copy_ops *ops,
		       void *ctx)
{
	unsigned int i;
	int img, ret;

	img = kp_img_create(j->image);
	if (img < 0)
		return img;
	kp_pipe_setup(j);
	/* Chunked: the process record says what the pages image holds. */
	ret = j->chunk ? 0 : kp_record_write_len(img, kp_job_bytes(j));
	if (ret)
		kp_err("cannot write image %s: %s", j->image, strerror(-ret));
	for (i = 0; !ret && i < j->nbos; i++)
		ret = kp_copy_bo(j, img, &j->bos[i], ops, ctx);
	if (j->splice) {
		close(j->pipe[0]);
		close(j->pipe[1]);
		j->splice = false;
	}
	if (close(img) && !ret) {
		ret = -errno;
		kp_err("cannot write image %s: %s", j->image, strerror(-ret));
	}
	return ret;
}

static int kp_job_load(struct kp_copy_job *j, const struct kp_copy_ops *ops,
		       void *ctx)
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
	ret = j->chunk ? 0 :
	      kp_record_read_len(img, j->image, UINT64_MAX, &have);
	if (ret == -ENODATA) {
		kp_err("image %s is truncated: empty", j->image);
		ret = -EIO;
	}
	if (j->slice_total)
		want = j->slice_total;
	/* Chunked: no length; each chunk read checks there is enough. */
	if (j->chunk)
		have = want;
	if (!ret && have != want) {
		kp_err("image %s is corrupt: it holds %" PRIu64 " bytes, the BOs of GPU %u need %" PRIu64,
		       j->image, have, j->gpu_id, want);
		ret = -EIO;
	}
	if (!ret && j->slice_skip &&
	    lseek(img, (off_t)j->slice_skip, SEEK_CUR) < 0) {
		ret = -errno;
		kp_err("cannot read image %s: %s", j->image, strerror(-ret));
	}
	for (i = 0; !ret && i < j->nbos; i++)
		ret = kp_copy_bo(j, img, &j->bos[i], ops, ctx);
	/* Only the last slice checks the end of the image. */
	if (!ret && (!j->slice_total ||
		     j->slice_skip + kp_job_image_bytes(j) == want)) {
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

int kp_copy_walk(struct kp_copy_job *j, const struct kp_copy_ops *ops,
		 void *ctx)
{
	return j->dir == KP_COPY_SAVE ? kp_job_save(j, ops, ctx) :
					kp_job_load(j, ops, ctx);
}

/* The staging buffer sits KP_STAGE_ALIGN / 2 past such a boundary. */
#define KP_STAGE_ALIGN	4096

void kp_stage_alloc_n(struct kp_copy_job *j, unsigned int n, size_t piece)
{
	size_t stride;
	unsigned int i;

	n = KP_MAX(KP_MIN(n, (unsigned int)KP_CPU_BUFS), 1U);
	/* Staging pieces: whole chunks, about @piece bytes. */
	j->stage_len = j->chunk ? KP_MAX(piece / j->chunk, 1) * j->chunk :
				  piece;
	/*
	 * Half a page off a page boundary: glibc's memcpy copies a piece this
	 * large backwards when destination and source are (nearly) equal
	 * modulo 4 KiB, as a malloc'd buffer and a page-aligned mapping are.
	 * The dma-buf fault handler maps the faulting page and the 15 after
	 * it (as TTM's does), so a backward copy out of a fresh mapping takes
	 * a fault per page: 3-5 times slower dumps in the guest (issue #23).
	 */
	stride = (j->stage_len + KP_STAGE_ALIGN - 1) / KP_STAGE_ALIGN *
		 KP_STAGE_ALIGN + KP_STAGE_ALIGN;
	j->stage_mem = aligned_alloc(KP_STAGE_ALIGN, stride * n);
	j->stage_bufs = j->stage_mem ? n : 0;
	for (i = 0; i < KP_CPU_BUFS; i++)
		j->stage_buf[i] = i < j->stage_bufs ?
				  (uint8_t *)j->stage_mem + i * stride +
				  KP_STAGE_ALIGN / 2 : NULL;
	j->stage = j->stage_buf[0];
}

void kp_stage_alloc(struct kp_copy_job *j)
{
	kp_stage_alloc_n(j, 1, KP_IO_RUN);
}

void kp_stage_free(struct kp_copy_job *j)
{
	unsigned int i;

	free(j->stage_mem);
	j->stage_mem = NULL;
	j->stage = NULL;
	for (i = 0; i < KP_CPU_BUFS; i++)
		j->stage_buf[i] = NULL;
	j->stage_bufs = 0;
}

bool kp_cpu_pipe_from_env(unsigned int njobs)
{
	const char *s = getenv("KFD_BO_CPU_PIPE");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	bool def = njobs && cpus >= 2 * (long)njobs;

	if (!s || !strcasecmp(s, "auto"))
		return def;
	if (!strcmp(s, "0") || !strcmp(s, "1"))
		return *s == '1';
	kp_warn("KFD_BO_CPU_PIPE=\"%s\" is not 0, 1 or auto; using auto", s);
	return def;
}

unsigned int kp_jobs_gpus(const struct kp_copy_job *jobs, unsigned int n)
{
	unsigned int i, k, gpus = 0;

	for (i = 0; i < n; i++) {
		for (k = 0; k < i; k++)
			if (jobs[k].gpu_id == jobs[i].gpu_id)
				break;
		gpus += k == i;
	}
	return gpus;
}

unsigned int kp_lanes_from_env(unsigned int ngpus)
{
	const char *s = getenv("KFD_BO_LANES");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int def = 1, most;

	if (!ngpus)
		return 1;
	most = KP_MIN(KP_MAX_LANES, KP_MAX(KP_MAX_GPUS / ngpus, 1U));
	if (cpus > (long)ngpus)
		def = (unsigned int)KP_MIN((long)most, cpus / (long)ngpus);
	if (!s || !strcasecmp(s, "auto"))
		return def;
	if (s[0] >= '1' && s[0] <= '0' + (int)KP_MAX_LANES && !s[1])
		return KP_MIN((unsigned int)(s[0] - '0'), most);
	kp_warn("KFD_BO_LANES=\"%s\" is not 1 to %u or auto; using auto (%u)",
		s, KP_MAX_LANES, def);
	return def;
}

/*
 * The cpu engine's staging buffers: KP_CPU_BUFS pieces of KP_CPU_PIECE
 * bytes (KFD_BO_CPU_PIECE) for the pipeline, taken off the job's window
 * so that the mapping and the buffers stay within its share of
 * KFD_MAX_BUFFER_SIZE, if the window keeps at least two pieces; else the
 * one 1 MiB buffer of the serial path (as before the pipeline).
 */
static void kp_cpu_stage_setup(struct kp_copy_job *j)
{
	const char *e = getenv("KFD_BO_CPU_PIECE");
	uint64_t piece = KP_CPU_PIECE, bufs;

	if (e && (kp_parse_size(e, &piece) || !piece || piece > (1U << 30))) {
		kp_warn("KFD_BO_CPU_PIECE=\"%s\" is not a size from 1 byte to 1 GiB; using %u KiB",
			e, KP_CPU_PIECE >> 10);
		piece = KP_CPU_PIECE;
	}
	/* As kp_stage_alloc_n() rounds it: whole chunks. */
	if (j->chunk)
		piece = KP_MAX(piece / j->chunk, 1) * j->chunk;
	bufs = KP_CPU_BUFS * piece;
	if (j->cpu_pipe && j->window >= bufs + 2 * piece) {
		kp_stage_alloc_n(j, KP_CPU_BUFS, (size_t)piece);
		if (j->stage_bufs > 1) {
			j->window -= bufs;
			kp_debug("GPU %u: cpu pipeline, %u staging buffers of %zu bytes, windows of %" PRIu64 " bytes",
				 j->gpu_id, j->stage_bufs, j->stage_len,
				 j->window);
			return;
		}
	}
	kp_stage_alloc(j);
}

static void *kp_job_main(void *arg)
{
	struct kp_copy_job *j = arg;
	const char *what = j->dir == KP_COPY_SAVE ? "saving" : "restoring";
	uint64_t t0 = kp_prof_now();
	char why[256];
	bool engine;

	if (j->mode != KP_COPY_CPU && j->nbos) {
		why[0] = 0;
		j->ret = kp_sdma_run_job(j, &engine, why, sizeof(why));
		if (!j->ret)
			kp_prof_log(j, "sdma", kp_prof_now() - t0);
		if (!j->ret || !engine)
			return NULL;
		if (j->mode == KP_COPY_SDMA) {
			kp_err("GPU %u: SDMA copy on renderD%u failed (KFD_BO_COPY=sdma): %s",
			       j->gpu_id, j->render_minor, why);
			return NULL;
		}
		kp_warn("GPU %u: SDMA copy on renderD%u failed: %s; falling back to the CPU",
			j->gpu_id, j->render_minor, why);
	}
	if (j->nbos)
		kp_info("GPU %u: %s BO contents via cpu (dma-buf mmap), %u BOs",
			j->gpu_id, what, j->nbos);
	memset(j->prof.ns, 0, sizeof(j->prof.ns));
	t0 = kp_prof_now();
	if (j->nbos)
		kp_cpu_stage_setup(j);
	j->ret = kp_copy_walk(j, &kp_cpu_ops, j);
	kp_stage_free(j);
	if (!j->ret && j->nbos)
		kp_prof_log(j, "cpu", kp_prof_now() - t0);
	return NULL;
}

int kp_copy_run(struct kp_copy_job *jobs, unsigned int njobs,
		uint64_t max_buffer)
{
	uint64_t page = kp_page_size(), window;
	const char *prof = getenv("KFD_PLUGIN_PROFILE");
	unsigned int i, classify;
	bool *threaded, pipe;
	int ret = 0;

	if (!njobs)
		return 0;
	classify = kp_classify_threads_from_env(njobs);
	pipe = kp_cpu_pipe_from_env(njobs);
	window = max_buffer / njobs / page * page;
	if (window < page)
		window = page;
	threaded = calloc(njobs, sizeof(*threaded));
	if (!threaded)
		return -ENOMEM;

	/* Job 0 runs in the caller; a job whose thread fails runs later. */
	for (i = 0; i < njobs; i++) {
		jobs[i].window = window;
		/* Whole chunks: at least one, even above the cap. */
		if (jobs[i].chunk) {
			jobs[i].window = KP_MAX(window / jobs[i].chunk, 1) *
					 jobs[i].chunk;
			jobs[i].zero_sum = kp_chunk_sum_zeros(jobs[i].sum_kind,
							      jobs[i].chunk);
		}
		memset(&jobs[i].prof, 0, sizeof(jobs[i].prof));
		jobs[i].prof.touch = prof && !strcmp(prof, "1");
		jobs[i].ret = 0;
		jobs[i].classify_threads = classify;
		jobs[i].cpu_pipe = pipe;
		jobs[i].pipe_windows = 0;
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
