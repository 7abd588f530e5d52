// SPDX-License-Identifier: GPL-2.0
/*
 * BO contents through the GPU's SDMA engine; see sdma_copy.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <amdgpu.h>
#include <amdgpu_drm.h>
#include <xf86drm.h>
#include <linux/kfdsim.h>

#include "gpu_scan.h"
#include "sdma_copy.h"
#include "util.h"

#define KP_SDMA_COPY_MAX	KFDSIM_SDMA_COPY_MAX_BYTES
#define KP_SDMA_NOP		KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_NOP, 0)
#define KP_SDMA_IB_ALIGN	8	/* dwords */
/* The buffer of kp_sparse_store()'s worker thread. */
#define KP_STORE2_BYTES		(4U << 20)

/*
 * A whole window moves in pieces of KP_SDMA_PIECE bytes, up to
 * KP_SDMA_AHEAD of them queued on the ring at once, so that the engine
 * copies one piece while the CPU sums and writes (save) or reads and
 * checks (load) another. Waiting for each copy before touching the image
 * left the engine and the CPU idle in turn (issue #23: SDMA 2.4 s and image
 * I/O 2.9 s of a 1 GiB dump, one after the other).
 */
#define KP_SDMA_PIECE		(4ULL << 20)
#define KP_SDMA_AHEAD		4

/* A BO with a GPU VA in our VM. */
struct kp_sdma_bo {
	amdgpu_bo_handle bo;
	amdgpu_va_handle va_handle;
	uint64_t va;
	uint64_t size;		/* mapped bytes */
};

struct kp_sdma {
	struct kp_copy_job *j;
	int fd;
	amdgpu_device_handle dev;
	amdgpu_context_handle ctx;
	struct kp_sdma_bo ib;		/* IB, then a page for the fence */
	uint32_t *ib_cpu;
	uint32_t fence_slot;		/* in u64 units into the IB BO */
	uint64_t piece;			/* bytes per queued copy */
	uint32_t slot_dw;		/* IB dwords per queued copy */
	/*
	 * The bounce buffer (a userptr BO over bounce_mem, its pages pinned),
	 * the current BO's import and the BO list of both are set up at the
	 * first SDMA copy or GPU scan they are needed for (kp_sdma_ready()):
	 * a save whose windows the CPU stores from the mapping needs none.
	 */
	struct kp_sdma_bo bounce;
	void *bounce_mem;
	size_t bounce_size;
	const struct kp_copy_bo *cur;	/* the BO of kp_sdma_begin() */
	struct kp_sdma_bo data;		/* its import, or none yet */
	amdgpu_bo_list_handle list;
	/* Chunk classification on the GPU (gpu_scan.h), when it works. */
	struct kp_sdma_bo scan;		/* descriptor, kernarg, IB, results */
	uint8_t *scan_cpu;
	uint64_t scan_out;		/* offset of the results */
	uint64_t scan_cal;		/* of the self-test/calibration bytes */
	uint64_t scan_cal_len;
	uint64_t scan_chunks;		/* chunks classified there */
	uint64_t scan_step;		/* bytes per dispatch (its time bound) */
	bool scan_zero;			/* only the zero test: no parent */
	/* Or on the CPU, reading the BO through its dma-buf mapping. */
	bool map_scan;
	uint64_t map_chunks;		/* chunks classified that way */
	/* The worker's buffer of kp_sparse_store() (two threads), or NULL. */
	uint8_t *store2;
	void *store2_mem;
	uint64_t copied;		/* bytes SDMA moved */
	uint64_t cpu_stored;		/* bytes the CPU copied out of the map */
	bool engine;			/* the failure was SDMA's */
	char *why;
	size_t why_len;
};

/* Record why SDMA failed (the caller decides how to report it). */
static int __attribute__((format(printf, 3, 4)))
kp_sdma_fail(struct kp_sdma *s, int ret, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	s->engine = true;
	va_start(ap, fmt);
	vsnprintf(s->why, s->why_len, fmt, ap);
	va_end(ap);
	n = strlen(s->why);
	if (ret < 0 && n < s->why_len)
		snprintf(s->why + n, s->why_len - n, ": %s", strerror(-ret));
	return ret < 0 ? ret : -EIO;
}

static uint64_t kp_round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* Give @bo a GPU VA and map @size bytes of it there. */
static int kp_sdma_map(struct kp_sdma *s, amdgpu_bo_handle bo, uint64_t size,
		       struct kp_sdma_bo *m)
{
	int ret;

	m->bo = bo;
	m->size = size;
	ret = amdgpu_va_range_alloc(s->dev, amdgpu_gpu_va_range_general, size,
				    kp_page_size(), 0, &m->va, &m->va_handle,
				    0);
	if (ret) {
		m->va_handle = NULL;
		return ret;
	}
	ret = amdgpu_bo_va_op(bo, 0, size, m->va, 0, AMDGPU_VA_OP_MAP);
	if (ret) {
		amdgpu_va_range_free(m->va_handle);
		m->va_handle = NULL;
	}
	return ret;
}

/* Undo kp_sdma_map() (if it happened) and drop the BO. */
static void kp_sdma_unmap(struct kp_sdma_bo *m)
{
	if (m->va_handle) {
		amdgpu_bo_va_op(m->bo, 0, m->size, m->va, 0,
				AMDGPU_VA_OP_UNMAP);
		amdgpu_va_range_free(m->va_handle);
	}
	if (m->bo)
		amdgpu_bo_free(m->bo);
	memset(m, 0, sizeof(*m));
}

/* Run @ndw dwords at GPU VA @va on ring 0 of @ip and wait. */
/*
 * Queue the @ndw dwords at GPU VA @va on ring @ip; *@seq is its fence. The
 * IB must stay as it is until that fence signals (amdgpu reads it then).
 */
static int kp_ring_queue(struct kp_sdma *s, uint32_t ip, uint64_t va,
			 uint32_t ndw, amdgpu_bo_list_handle list,
			 uint64_t *seq)
{
	struct amdgpu_cs_ib_info ib = {
		.ib_mc_address = va,
		.size = ndw,
	};
	struct amdgpu_cs_request req = {
		.ip_type = ip,
		.resources = list,
		.number_of_ibs = 1,
		.ibs = &ib,
		.fence_info = { .handle = s->ib.bo, .offset = s->fence_slot },
	};
	int ret;

	ret = amdgpu_cs_submit(s->ctx, 0, &req, 1);
	if (ret)
		return kp_sdma_fail(s, ret, "command submission");
	*seq = req.seq_no;
	return 0;
}

/* Wait for fence @seq of ring @ip. */
static int kp_ring_wait(struct kp_sdma *s, uint32_t ip, uint64_t seq)
{
	struct amdgpu_cs_fence fence = {
		.context = s->ctx,
		.ip_type = ip,
		.fence = seq,
	};
	uint32_t expired = 0;
	int ret;

	ret = amdgpu_cs_query_fence_status(&fence, AMDGPU_TIMEOUT_INFINITE, 0,
					   &expired);
	if (ret)
		return kp_sdma_fail(s, ret, "waiting for fence %" PRIu64, seq);
	if (!expired)
		return kp_sdma_fail(s, -ETIME, "fence %" PRIu64, seq);
	return 0;
}

static int kp_ring_submit(struct kp_sdma *s, uint32_t ip, uint64_t va,
			  uint32_t ndw, amdgpu_bo_list_handle list)
{
	uint64_t seq = 0;
	int ret;

	ret = kp_ring_queue(s, ip, va, ndw, list, &seq);
	return ret ? ret : kp_ring_wait(s, ip, seq);
}

/* Run the first @ndw dwords of the IB on SDMA ring 0 and wait. */
static int kp_sdma_submit(struct kp_sdma *s, uint32_t ndw,
			  amdgpu_bo_list_handle list)
{
	return kp_ring_submit(s, AMDGPU_HW_IP_DMA, s->ib.va, ndw, list);
}

/*
 * Write the packets that copy @len bytes from GPU VA @src to @dst into
 * @ib: linear copies of at most KP_SDMA_COPY_MAX bytes each. Returns the
 * dwords written.
 */
static uint32_t kp_sdma_copy_packets(uint32_t *ib, uint64_t dst,
				     uint64_t src, uint64_t len)
{
	uint32_t n = 0;

	while (len) {
		uint64_t chunk = KP_MIN(len, (uint64_t)KP_SDMA_COPY_MAX);

		ib[n++] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_COPY,
					     KFDSIM_SDMA_SUBOP_COPY_LINEAR);
		ib[n++] = (uint32_t)(chunk - 1);
		ib[n++] = 0;
		ib[n++] = (uint32_t)src;
		ib[n++] = (uint32_t)(src >> 32);
		ib[n++] = (uint32_t)dst;
		ib[n++] = (uint32_t)(dst >> 32);
		src += chunk;
		dst += chunk;
		len -= chunk;
	}
	return n;
}

/* NOPs up to the IB alignment after @n dwords; the IB's dwords. */
static uint32_t kp_sdma_pad(uint32_t *ib, uint32_t n)
{
	while (n % KP_SDMA_IB_ALIGN)
		ib[n++] = KP_SDMA_NOP;
	return n;
}

/* Dwords of the IB for one window of @window bytes. */
static uint64_t kp_sdma_ib_dwords(uint64_t window)
{
	uint64_t packets = (window + KP_SDMA_COPY_MAX - 1) / KP_SDMA_COPY_MAX;

	return packets * KFDSIM_SDMA_COPY_DWORDS + KP_SDMA_IB_ALIGN;
}

/*
 * Queue the @n dwords of copy packets written in IB slot @slot, which
 * move @bytes bytes (padded here); *@seq is their fence, or 0 when @n is 0
 * (nothing queued). The time since @t counts as SDMA time.
 */
static int kp_sdma_queue_slot(struct kp_sdma *s, unsigned int slot,
			      uint32_t n, uint64_t bytes, uint64_t *seq,
			      uint64_t t)
{
	uint32_t at = slot * s->slot_dw;
	int ret = 0;

	*seq = 0;
	if (n) {
		ret = kp_ring_queue(s, AMDGPU_HW_IP_DMA, s->ib.va + at * 4ULL,
				    kp_sdma_pad(s->ib_cpu + at, n), s->list,
				    seq);
		if (!ret)
			s->copied += bytes;
	}
	kp_prof_add(&s->j->prof, KP_PROF_SDMA, t);
	return ret;
}

/* Queue the copy of one piece, its packets in IB slot @slot. */
static int kp_sdma_queue(struct kp_sdma *s, unsigned int slot, uint64_t dst,
			 uint64_t src, uint64_t len, uint64_t *seq)
{
	uint64_t t = kp_prof_now();
	uint32_t n;

	n = kp_sdma_copy_packets(s->ib_cpu + slot * s->slot_dw, dst, src, len);
	return kp_sdma_queue_slot(s, slot, n, len, seq, t);
}

/*
 * Queue the copy of the DATA chunks of a classified piece (@len bytes, @at
 * bytes into the window at @off of @bo) into the bounce buffer, one linear
 * copy per run of them, so that SDMA moves exactly the bytes to store.
 * *@seq is 0 when the piece has none (nothing queued).
 */
static int kp_sdma_queue_data(struct kp_sdma *s, unsigned int slot,
			      const struct kp_copy_bo *bo, uint64_t off,
			      uint64_t at, uint64_t len, uint64_t *seq)
{
	const struct kp_copy_job *j = s->j;
	uint32_t *ib = s->ib_cpu + slot * s->slot_dw;
	uint64_t c = (off + at) / j->chunk, end = off + at + len;
	uint64_t t = kp_prof_now(), from, to, bytes = 0;
	uint32_t n = 0;

	for (; c * j->chunk < end; c++) {
		if (bo->kinds[c] != KFD_CHUNK__KFD_CHUNK_DATA)
			continue;
		from = c * j->chunk;
		while ((c + 1) * j->chunk < end &&
		       bo->kinds[c + 1] == KFD_CHUNK__KFD_CHUNK_DATA)
			c++;
		to = KP_MIN((c + 1) * j->chunk, end);
		n += kp_sdma_copy_packets(ib + n, s->bounce.va + from - off,
					  s->data.va + from, to - from);
		bytes += to - from;
	}
	return kp_sdma_queue_slot(s, slot, n, bytes, seq, t);
}

/*
 * Wait for the queued pieces *@waited .. @queued - 1 (their fences in
 * @seq, by piece modulo KP_SDMA_AHEAD). After a failure (@ret) the rest is
 * still waited for, so no copy runs once the caller goes on; the first
 * error is returned.
 */
static int kp_sdma_drain(struct kp_sdma *s, const uint64_t *seq,
			 uint64_t *waited, uint64_t queued, int ret)
{
	uint64_t t = kp_prof_now();
	int r;

	for (; *waited < queued; (*waited)++) {
		/* A classified piece without DATA chunks queued nothing. */
		if (!seq[*waited % KP_SDMA_AHEAD])
			continue;
		r = kp_ring_wait(s, AMDGPU_HW_IP_DMA,
				 seq[*waited % KP_SDMA_AHEAD]);
		if (!ret)
			ret = r;
	}
	kp_prof_add(&s->j->prof, KP_PROF_SDMA, t);
	return ret;
}

/* A window's bytes [@at, @at + @len) in the bounce buffer. */
static uint8_t *kp_bounce_at(const struct kp_sdma *s, uint64_t at)
{
	return (uint8_t *)s->bounce_mem + at;
}

/*
 * The copies of one window being saved: pieces [waited, queued) are on the
 * ring, their fences in seq[] by piece modulo KP_SDMA_AHEAD.
 */
struct kp_sdma_save {
	struct kp_sdma *s;
	const struct kp_copy_bo *bo;
	uint64_t off, len, piece, np;
	bool data;		/* classified: only DATA chunks are copied */
	uint64_t seq[KP_SDMA_AHEAD];
	uint64_t queued, waited;
};

/*
 * Piece @k of the window is in the bounce buffer once this returns 0:
 * pieces up to k + KP_SDMA_AHEAD - 1 are queued, then piece k's copy is
 * waited for. Called for k = 0, 1, ... in order.
 */
static int kp_sdma_save_fetch(void *ctx, uint64_t k, uint64_t at, size_t n)
{
	struct kp_sdma_save *w = ctx;
	struct kp_sdma *s = w->s;
	uint64_t *seq;
	int ret = 0;

	(void)at;
	(void)n;
	while (w->queued < w->np && w->queued < w->waited + KP_SDMA_AHEAD) {
		at = w->queued * w->piece;
		n = (size_t)KP_MIN(w->piece, w->len - at);
		seq = &w->seq[w->queued % KP_SDMA_AHEAD];
		if (w->data)
			ret = kp_sdma_queue_data(s, w->queued % KP_SDMA_AHEAD,
						 w->bo, w->off, at, n, seq);
		else
			ret = kp_sdma_queue(s, w->queued % KP_SDMA_AHEAD,
					    s->bounce.va + at,
					    s->data.va + w->off + at, n, seq);
		if (ret)
			return ret;
		w->queued++;
	}
	return kp_sdma_drain(s, w->seq, &w->waited, k + 1, 0);
}

/*
 * Save the window at @off (@len bytes) of @bo: piece k + KP_SDMA_AHEAD - 1
 * is queued before piece k, just copied, is summed and written to the
 * image. With the job's pipeline (j->cpu_pipe: two CPUs per job) a copier
 * thread waits for the copies and sums each piece while the job's thread
 * writes the one before it (kp_pipe_save_fetched()); else one thread does
 * both in turn. @data: the window's chunks are classified (bo->scanned),
 * only DATA ones are copied.
 */
static int kp_sdma_save_window(struct kp_sdma *s, int img,
			       struct kp_copy_bo *bo, uint64_t off, size_t len,
			       struct kp_sum *sum, bool data)
{
	struct kp_sdma_save w = {
		.s = s, .bo = bo, .off = off, .len = len, .data = data,
		.piece = KP_MIN(s->piece, (uint64_t)len),
	};
	uint64_t at;
	int ret = 1;

	w.np = (len + w.piece - 1) / w.piece;
	if (s->j->cpu_pipe && w.np > 1)
		ret = kp_pipe_save_fetched(s->j, img, bo, off,
					   kp_bounce_at(s, 0), len,
					   (size_t)w.piece, sum,
					   kp_sdma_save_fetch, &w);
	/* One thread: fetch piece k, then sum and write it. */
	if (ret == 1) {
		for (ret = 0; !ret && w.waited < w.np;) {
			at = w.waited * w.piece;
			ret = kp_sdma_save_fetch(&w, w.waited, at, 0);
			if (!ret)
				ret = kp_copy_image_io(s->j, img, bo, off + at,
						       kp_bounce_at(s, at),
						       KP_MIN(w.piece,
							      len - at),
						       sum);
		}
	}
	return kp_sdma_drain(s, w.seq, &w.waited, w.queued, ret);
}

/*
 * Load the window at @off (@len bytes) of @bo: piece k is read from the
 * image (and checked) while the pieces before it are copied into the BO.
 */
static int kp_sdma_load_window(struct kp_sdma *s, int img,
			       struct kp_copy_bo *bo, uint64_t off, size_t len,
			       struct kp_sum *sum)
{
	uint64_t piece = KP_MIN(s->piece, (uint64_t)len);
	uint64_t np = (len + piece - 1) / piece, queued = 0, waited = 0;
	uint64_t seq[KP_SDMA_AHEAD] = { 0 }, at, n;
	int ret = 0;

	while (!ret && queued < np) {
		at = queued * piece;
		n = KP_MIN(piece, len - at);
		ret = kp_copy_image_io(s->j, img, bo, off + at,
				       kp_bounce_at(s, at), n, sum);
		/* Its IB slot is free once the copy that used it is done. */
		if (!ret && queued >= KP_SDMA_AHEAD)
			ret = kp_sdma_drain(s, seq, &waited,
					    queued - KP_SDMA_AHEAD + 1, 0);
		if (!ret)
			ret = kp_sdma_queue(s, queued % KP_SDMA_AHEAD,
					    s->data.va + off + at,
					    s->bounce.va + at, n,
					    &seq[queued % KP_SDMA_AHEAD]);
		if (!ret)
			queued++;
	}
	return kp_sdma_drain(s, seq, &waited, queued, ret);
}

/*
 * Scan @len bytes at GPU VA @src in one dispatch, in chunks of @chunk
 * bytes; the results land @out_off bytes into s->scan_out.
 */
static int kp_scan_run(struct kp_sdma *s, uint64_t src, uint64_t len,
		       uint32_t chunk, uint64_t out_off,
		       amdgpu_bo_list_handle list)
{
	uint64_t t = kp_prof_now();
	uint32_t ndw;
	int ret;

	ndw = kp_scan_build((uint32_t *)(s->scan_cpu + KP_SCAN_HEAD),
			    s->scan_cpu, s->scan.va, src, len, chunk,
			    s->j->sum_kind, s->scan_zero,
			    s->scan.va + s->scan_out + out_off);
	ret = kp_ring_submit(s, AMDGPU_HW_IP_COMPUTE, s->scan.va + KP_SCAN_HEAD,
			     ndw, list);
	kp_prof_add(&s->j->prof, KP_PROF_SCAN, t);
	return ret;
}

static void kp_scan_teardown(struct kp_sdma *s)
{
	if (s->scan_cpu)
		amdgpu_bo_cpu_unmap(s->scan.bo);
	s->scan_cpu = NULL;
	kp_sdma_unmap(&s->scan);
}

/* Does any BO of @j have a parent image's chunk sums to compare with? */
static bool kp_job_has_base(const struct kp_copy_job *j)
{
	unsigned int i;

	for (i = 0; i < j->nbos; i++)
		if (j->bos[i].base)
			return true;
	return false;
}

/* MB/s (10^6 bytes) of a rate in bytes per second, for messages. */
static double kp_mbs(uint64_t bps)
{
	return (double)bps / 1e6;
}

/*
 * The CPU classifies the chunks (kp_map_classify()): through a mapping of
 * each BO's dma-buf, so that only the chunks to store go through SDMA,
 * unless KFD_BO_SCAN_MAP=0 (then SDMA copies every byte over first, and
 * the CPU classifies the copy). A mapping the kernel refuses (amdgpu:
 * VRAM without CPU access) falls back to that at the first window.
 */
static void kp_map_scan_setup(struct kp_sdma *s, const char *why)
{
	const char *e = getenv("KFD_BO_SCAN_MAP");

	s->map_scan = !e || strcmp(e, "0");
	/* For the sparse windows the CPU stores (kp_sparse_store()). */
	if (s->map_scan && !s->j->stage)
		kp_stage_alloc(s->j);
	/* Half a page off, as the staging buffer, for a forward memcpy. */
	if (s->map_scan && s->j->classify_threads > 1 && !s->store2_mem) {
		s->store2_mem = aligned_alloc(4096, KP_STORE2_BYTES + 4096);
		s->store2 = s->store2_mem ?
			    (uint8_t *)s->store2_mem + 2048 : NULL;
	}
	kp_info("GPU %u: chunks classified on the CPU (%s), %s, %u thread%s",
		s->j->gpu_id, why,
		s->map_scan ? "reading each BO through its dma-buf mapping" :
			      "after SDMA copied every byte (KFD_BO_SCAN_MAP=0)",
		s->map_scan ? s->j->classify_threads : 1,
		s->map_scan && s->j->classify_threads > 1 ? "s" : "");
}

/*
 * The CPU's time for what the scan kernel does over @len bytes at @p
 * (zero test; with a parent, also the sum of every chunk, as the kernel
 * sums them all), in ns.
 */
static uint64_t kp_scan_cpu_ns(const struct kp_sdma *s, const uint8_t *p,
			       uint64_t len)
{
	const struct kp_copy_job *j = s->j;
	uint64_t t = kp_prof_now(), x, n, acc = 0;

	for (x = 0; x < len; x += n) {
		n = KP_MIN(len - x, (uint64_t)j->chunk);
		acc += kp_is_zero(p + x, n);
		if (!s->scan_zero)
			acc += kp_chunk_sum(j->sum_kind, p + x, n);
	}
	/* Keep the work: the result goes nowhere else. */
	__asm__ volatile("" : : "r"(acc));
	return kp_prof_now() - t;
}

/*
 * Measure the scan kernel and the CPU over the same zero bytes of the
 * scan buffer's calibration area (the zero test's slowest case: it reads
 * every word): from KP_SCAN_CAL_MIN bytes up, four times more until a
 * dispatch takes KP_SCAN_CAL_NS (so that submission overhead does not
 * hide a fast GPU) or the area (at most KP_SCAN_CAL_MAX) is used up.
 * It stops early when the GPU loses by more than KP_SCAN_CAL_LOSS even
 * with @fixed_ns, the whole time of the one-page self-test dispatch,
 * taken off as the cost of a dispatch: a larger dispatch cannot make up
 * for that (on kfdsim's interpreter the first step already shows it,
 * and each further one would cost four times more). Every dispatch fills
 * whole waves: its chunks are len / 64 bytes up to the job's chunk size,
 * then more waves of those (a wave takes as long for one chunk as for
 * 64: with the 4 chunks of 256 KiB at 64 KiB it would show a 16th of the
 * rate). Rates in bytes per second.
 */
#define KP_SCAN_CAL_MIN		(256ULL << 10)
#define KP_SCAN_CAL_MAX		(4ULL << 20)
#define KP_SCAN_CAL_NS		(20ULL * 1000 * 1000)
#define KP_SCAN_CAL_LOSS	2

static int kp_scan_calibrate(struct kp_sdma *s, uint64_t fixed_ns,
			     uint64_t *gpu_bps, uint64_t *cpu_bps,
			     uint64_t *bytes)
{
	const uint64_t wave = 8 * KP_SCAN_WG;
	uint64_t most = s->scan_cal_len / wave * wave, len = KP_SCAN_CAL_MIN;
	uint8_t *cal = s->scan_cpu + s->scan_cal;
	uint64_t results = (s->scan_cal - s->scan_out) / KP_SCAN_PAIR *
			   s->j->chunk, t, ns, cpu_ns, chunk;
	int ret;

	most = KP_MIN(most, results);
	for (;;) {
		len = KP_MIN(len, most);
		chunk = KP_MIN(len / KP_SCAN_WG / 8 * 8, (uint64_t)s->j->chunk);
		/* Zeros (and pages the CPU's pass below does not fault in). */
		memset(cal, 0, len);
		t = kp_prof_now();
		ret = kp_scan_run(s, s->scan.va + s->scan_cal, len,
				  (uint32_t)chunk, 0, NULL);
		ns = kp_prof_now() - t;
		if (ret)
			return ret;
		cpu_ns = kp_scan_cpu_ns(s, cal, len);
		if (ns >= KP_SCAN_CAL_NS || len == most)
			break;
		if (ns > fixed_ns &&
		    ns - fixed_ns > KP_SCAN_CAL_LOSS * cpu_ns)
			break;
		len *= 4;
	}
	*gpu_bps = kp_rate(len, ns);
	*cpu_bps = kp_rate(len, cpu_ns);
	*bytes = len;
	return 0;
}

/*
 * Save with chunks: classify them before the copy, so that zero and
 * unchanged chunks are never copied. With a parent image the kernel sums
 * every chunk (kp_scan_xxh64 or kp_scan_fold64, the image's function)
 * to compare with the parent's; a full dump has nothing to compare with,
 * and a sum would read every byte once more before the copy reads it
 * again, so the kernel only tells zero chunks apart, reading a chunk with
 * data no further than its first non-zero word (kp_scan_zero),
 * and the CPU sums the chunks as they pass through the bounce buffer. A
 * page of a known pattern must give the CPU's answer first.
 *
 * KFD_BO_SCAN=auto uses the GPU only where it is faster than the CPU: the
 * kernel and the CPU are timed over the same bytes (kp_scan_calibrate();
 * on AMD hardware the GPU wins by far, on kfdsim's interpreter the CPU
 * does). KFD_BO_SCAN=gpu takes the GPU whenever it works. Either way a
 * window is scanned in dispatches of at most KFD_BO_SCAN_MS worth of
 * bytes at the measured rate. If the GPU loses or anything fails, the CPU
 * classifies (this is not an SDMA failure).
 */
static void kp_scan_setup(struct kp_sdma *s)
{
	struct kp_copy_job *j = s->j;
	struct amdgpu_bo_alloc_request req = { 0 };
	uint64_t page = kp_page_size(), size, *pairs;
	uint64_t gpu_bps, cpu_bps, cal, fixed;
	const char *no = NULL;
	uint8_t *test;
	unsigned int ms;
	char slower[160];
	amdgpu_bo_handle bo;
	void *cpu;
	uint64_t i;
	int ret;

	if (j->dir != KP_COPY_SAVE || !j->chunk)
		return;
	s->scan_zero = !kp_job_has_base(j);
	if (j->cpu_scan)
		no = "KFD_BO_SCAN=cpu";
	else if (j->chunk > KP_SCAN_MAX_CHUNK || j->chunk % 8)
		no = "the chunk size is not one the GPU kernel takes";
	if (no) {
		kp_map_scan_setup(s, no);
		return;
	}

	/*
	 * Code, kernarg and IB; the results; the self-test's page and the
	 * calibration's zeros (not the bounce buffer, which a dump that
	 * SDMA copies nothing for never pins).
	 */
	s->scan_out = page;
	s->scan_cal = page + kp_round_up(j->window / j->chunk * KP_SCAN_PAIR,
					 page);
	s->scan_cal_len = kp_round_up(KP_MIN(s->bounce_size, KP_SCAN_CAL_MAX),
				      page);
	size = s->scan_cal + s->scan_cal_len;
	req.alloc_size = size;
	req.phys_alignment = page;
	req.preferred_heap = AMDGPU_GEM_DOMAIN_GTT;
	ret = amdgpu_bo_alloc(s->dev, &req, &bo);
	if (ret) {
		kp_sdma_fail(s, ret, "scan buffer allocation");
		goto fail;
	}
	ret = kp_sdma_map(s, bo, size, &s->scan);
	if (ret) {
		kp_sdma_fail(s, ret, "scan buffer mapping");
		goto fail;
	}
	ret = amdgpu_bo_cpu_map(bo, &cpu);
	if (ret) {
		kp_sdma_fail(s, ret, "scan buffer CPU mapping");
		goto fail;
	}
	s->scan_cpu = cpu;
	test = s->scan_cpu + s->scan_cal;

	for (i = 0; i < page; i++)
		test[i] = (uint8_t)(i * 131 + 7);
	fixed = kp_prof_now();
	ret = kp_scan_run(s, s->scan.va + s->scan_cal, page, j->chunk, 0,
			  NULL);
	fixed = kp_prof_now() - fixed;
	pairs = (uint64_t *)(s->scan_cpu + s->scan_out);
	if (!ret && (pairs[0] != (s->scan_zero ? 0 :
				  kp_chunk_sum(j->sum_kind, test, page)) ||
		     !pairs[1]))
		ret = kp_sdma_fail(s, -EIO,
				   "self-test: %s checksum 0x%016" PRIx64 ", the CPU's 0x%016" PRIx64,
				   s->scan_zero ? "zero-test" :
				   kp_sum_kind_name(j->sum_kind), pairs[0],
				   s->scan_zero ? 0 :
				   kp_chunk_sum(j->sum_kind, test, page));
	if (!ret)
		ret = kp_scan_calibrate(s, fixed, &gpu_bps, &cpu_bps, &cal);
	if (ret)
		goto fail;
	ms = kp_scan_dispatch_ms();
	s->scan_step = kp_scan_step(gpu_bps, ms, j->chunk, j->window);
	if (!j->gpu_scan && gpu_bps <= cpu_bps) {
		snprintf(slower, sizeof(slower),
			 "KFD_BO_SCAN=auto: the GPU scan is slower, GPU %.1f MB/s, CPU %.1f MB/s over %" PRIu64 " KiB",
			 kp_mbs(gpu_bps), kp_mbs(cpu_bps), cal >> 10);
		kp_scan_teardown(s);
		kp_map_scan_setup(s, slower);
		return;
	}
	kp_info("GPU %u: chunks classified on the GPU (gfx906 kernel %s on the compute ring of renderD%u; %s: GPU %.1f MB/s, CPU %.1f MB/s over %" PRIu64 " KiB; dispatches of at most %" PRIu64 " KiB, %u ms at that rate)",
		j->gpu_id,
		s->scan_zero ? "kp_scan_zero, a full dump" :
		j->sum_kind == KP_SUM_XXH64 ? "kp_scan_xxh64" :
					      "kp_scan_fold64",
		j->render_minor,
		j->gpu_scan ? "KFD_BO_SCAN=gpu" : "KFD_BO_SCAN=auto, faster",
		kp_mbs(gpu_bps), kp_mbs(cpu_bps), cal >> 10,
		s->scan_step >> 10, ms);
	return;
fail:
	kp_info("GPU %u: the GPU scan failed: %s", j->gpu_id, s->why);
	kp_scan_teardown(s);
	s->engine = false;
	s->why[0] = 0;
	kp_map_scan_setup(s, "the GPU scan failed");
}

/*
 * libdrm_amdgpu (2.4.114) gives every amdgpu_device_initialize() of one
 * GPU the same handle, and may give it out while another thread drops
 * its last reference (criu aborted: "update_references: Assertion
 * `atomic_read(src) > 0' failed"), as when the restore workers copy two
 * processes' BOs on one GPU at once: initialize and deinitialize one
 * thread at a time.
 */
static pthread_mutex_t kp_sdma_dev_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Device, context, IB; then a submission of NOPs, and the GPU scan's
 * setup. The bounce buffer only gets its size here: kp_bounce_setup().
 */
static int kp_sdma_setup(struct kp_sdma *s)
{
	uint64_t page = kp_page_size(), ib_bytes, largest = page;
	struct amdgpu_bo_alloc_request req = { 0 };
	amdgpu_bo_handle bo;
	uint32_t major, minor, i;
	char path[64];
	void *cpu;
	int ret;

	snprintf(path, sizeof(path), "/dev/dri/renderD%u", s->j->render_minor);
	s->fd = open(path, O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		return kp_sdma_fail(s, -errno, "cannot open %s", path);
	pthread_mutex_lock(&kp_sdma_dev_lock);
	ret = amdgpu_device_initialize(s->fd, &major, &minor, &s->dev);
	pthread_mutex_unlock(&kp_sdma_dev_lock);
	if (ret) {
		s->dev = NULL;
		return kp_sdma_fail(s, ret, "libdrm_amdgpu device init");
	}
	ret = amdgpu_cs_ctx_create(s->dev, &s->ctx);
	if (ret) {
		s->ctx = NULL;
		return kp_sdma_fail(s, ret, "context creation");
	}

	/* Whole windows (sparse runs) or KP_SDMA_AHEAD queued pieces. */
	s->piece = s->j->chunk ? kp_round_up(KP_SDMA_PIECE, s->j->chunk) :
				 KP_SDMA_PIECE;
	/* A classified piece: at worst a copy per chunk (kp_sdma_queue_data). */
	s->slot_dw = (uint32_t)kp_round_up(kp_sdma_ib_dwords(s->piece) +
					   (s->j->chunk ? s->piece / s->j->chunk *
					    KFDSIM_SDMA_COPY_DWORDS : 0),
					   KP_SDMA_IB_ALIGN);
	ib_bytes = kp_round_up(KP_MAX(kp_sdma_ib_dwords(s->j->window),
				      (uint64_t)KP_SDMA_AHEAD * s->slot_dw) * 4,
			       page);
	req.alloc_size = ib_bytes + page;
	req.phys_alignment = page;
	req.preferred_heap = AMDGPU_GEM_DOMAIN_GTT;
	ret = amdgpu_bo_alloc(s->dev, &req, &bo);
	if (ret)
		return kp_sdma_fail(s, ret, "IB allocation");
	ret = kp_sdma_map(s, bo, req.alloc_size, &s->ib);
	if (ret)
		return kp_sdma_fail(s, ret, "IB mapping");
	ret = amdgpu_bo_cpu_map(bo, &cpu);
	if (ret)
		return kp_sdma_fail(s, ret, "IB CPU mapping");
	s->ib_cpu = cpu;
	s->fence_slot = (uint32_t)(ib_bytes / 8);

	/* No larger than a window or the largest BO needs. */
	for (i = 0; i < s->j->nbos; i++)
		largest = KP_MAX(largest, s->j->bos[i].size);
	s->bounce_size = (size_t)kp_round_up(KP_MIN(s->j->window, largest),
					     page);

	/* The test submission: does this GPU run SDMA IBs for us at all? */
	for (i = 0; i < KP_SDMA_IB_ALIGN; i++)
		s->ib_cpu[i] = KP_SDMA_NOP;
	ret = kp_sdma_submit(s, KP_SDMA_IB_ALIGN, NULL);
	if (ret)
		return ret;
	kp_scan_setup(s);
	return 0;
}

/*
 * The bounce buffer, once per job: anonymous memory that a userptr BO
 * pins (page by page: for a 64 MiB window in the guest about 0.1 s, and
 * as much again to release it) and maps into the GPU VM.
 */
static int kp_bounce_setup(struct kp_sdma *s)
{
	amdgpu_bo_handle bo;
	void *mem;
	int ret;

	if (s->bounce_mem)
		return 0;
	mem = mmap(NULL, s->bounce_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return kp_sdma_fail(s, -errno, "bounce buffer of %zu bytes",
				    s->bounce_size);
	s->bounce_mem = mem;
	ret = amdgpu_create_bo_from_user_mem(s->dev, s->bounce_mem,
					     s->bounce_size, &bo);
	if (ret)
		return kp_sdma_fail(s, ret, "userptr BO of the bounce buffer");
	ret = kp_sdma_map(s, bo, s->bounce_size, &s->bounce);
	if (ret)
		return kp_sdma_fail(s, ret, "bounce buffer mapping");
	return 0;
}

static void kp_sdma_teardown(struct kp_sdma *s)
{
	kp_stage_free(s->j);
	free(s->store2_mem);
	kp_scan_teardown(s);
	kp_sdma_unmap(&s->bounce);
	if (s->bounce_mem)
		munmap(s->bounce_mem, s->bounce_size);
	if (s->ib_cpu)
		amdgpu_bo_cpu_unmap(s->ib.bo);
	kp_sdma_unmap(&s->ib);
	if (s->ctx)
		amdgpu_cs_ctx_free(s->ctx);
	if (s->dev) {
		pthread_mutex_lock(&kp_sdma_dev_lock);
		amdgpu_device_deinitialize(s->dev);
		pthread_mutex_unlock(&kp_sdma_dev_lock);
	}
	if (s->fd >= 0)
		close(s->fd);
}

/* Import the BO's dma-buf and map it; one BO list for its windows. */
static int kp_sdma_import(struct kp_sdma *s, const struct kp_copy_bo *bo)
{
	struct amdgpu_bo_import_result imp;
	amdgpu_bo_handle bos[4];
	uint64_t size = kp_round_up(bo->size, kp_page_size());
	int ret;

	ret = amdgpu_bo_import(s->dev, amdgpu_bo_handle_type_dma_buf_fd,
			       (uint32_t)bo->dmabuf_fd, &imp);
	if (ret)
		return kp_sdma_fail(s, ret, "BO 0x%" PRIx64 ": dma-buf import",
				    bo->addr);
	if (imp.alloc_size < size) {
		amdgpu_bo_free(imp.buf_handle);
		return kp_sdma_fail(s, -EINVAL,
				    "BO 0x%" PRIx64 ": the import has %" PRIu64 " bytes, not %" PRIu64,
				    bo->addr, imp.alloc_size, size);
	}
	ret = kp_sdma_map(s, imp.buf_handle, size, &s->data);
	if (ret) {
		kp_sdma_unmap(&s->data);
		return kp_sdma_fail(s, ret, "BO 0x%" PRIx64 ": GPU VA mapping",
				    bo->addr);
	}
	bos[0] = s->data.bo;
	bos[1] = s->bounce.bo;
	bos[2] = s->ib.bo;
	bos[3] = s->scan.bo;
	ret = amdgpu_bo_list_create(s->dev, s->scan_cpu ? 4 : 3, bos, NULL,
				    &s->list);
	if (ret) {
		s->list = NULL;
		kp_sdma_unmap(&s->data);
		return kp_sdma_fail(s, ret, "BO 0x%" PRIx64 ": BO list",
				    bo->addr);
	}
	return 0;
}

/* A BO's windows begin: nothing is set up for it until it is needed. */
static int kp_sdma_begin(void *ctx, const struct kp_copy_bo *bo)
{
	struct kp_sdma *s = ctx;

	s->cur = bo;
	return 0;
}

/*
 * Before the first SDMA copy or GPU scan of the current BO: the bounce
 * buffer (the first time in the job), the BO's import and its BO list.
 * Timed as setup. 0 or -errno (an SDMA failure).
 */
static int kp_sdma_ready(struct kp_sdma *s)
{
	uint64_t t;
	int ret;

	if (s->list)
		return 0;
	t = kp_prof_now();
	ret = kp_bounce_setup(s);
	if (!ret)
		ret = kp_sdma_import(s, s->cur);
	kp_prof_add(&s->j->prof, KP_PROF_SETUP, t);
	return ret;
}

static void kp_sdma_end(void *ctx, const struct kp_copy_bo *bo)
{
	struct kp_sdma *s = ctx;

	(void)bo;
	if (s->list)
		amdgpu_bo_list_destroy(s->list);
	s->list = NULL;
	kp_sdma_unmap(&s->data);
}

/*
 * Chunks [@c0, @c0 + @n) of @bo (the window at @off, @len bytes) on the
 * GPU: dispatches of at most s->scan_step bytes, each well inside the
 * job timeout at the rate measured, then the results checked.
 */
static int kp_scan_window(struct kp_sdma *s, struct kp_copy_bo *bo,
			  uint64_t off, size_t len, uint64_t c0, uint64_t n)
{
	struct kp_copy_job *j = s->j;
	uint64_t x, step;
	int ret;

	ret = kp_sdma_ready(s);
	if (ret)
		return ret;
	for (x = 0; x < len; x += step) {
		step = KP_MIN(s->scan_step, (uint64_t)len - x);
		ret = kp_scan_run(s, s->data.va + off + x, step, j->chunk,
				  x / j->chunk * KP_SCAN_PAIR, s->list);
		if (ret)
			return ret;
	}
	ret = kp_scan_classify(j, bo, c0, n,
			       (const uint64_t *)(s->scan_cpu + s->scan_out),
			       s->scan_zero, s->why, s->why_len);
	if (ret) {
		s->engine = true;
		return ret;
	}
	s->scan_chunks += n;
	return 0;
}

/*
 * The same on the CPU, through a read-only mapping of the window of the
 * BO's dma-buf: the zero test (a chunk with data is read no further than
 * its first non-zero word), and with a parent the sum of each chunk that
 * is not zero. On success *@map is the mapping, still open for CPU reads
 * (kp_map_release() ends that). 1 if the kernel refuses the mapping (the
 * caller copies the window over by SDMA and classifies the copy), else 0
 * or -errno.
 */
static int kp_map_classify(struct kp_sdma *s, struct kp_copy_bo *bo,
			   uint64_t off, size_t len, uint64_t c0, uint64_t n,
			   uint8_t **map)
{
	struct kp_copy_job *j = s->j;
	uint64_t t = kp_prof_now();
	uint8_t *p;
	int ret;

	p = mmap(NULL, len, PROT_READ, MAP_SHARED, bo->dmabuf_fd, (off_t)off);
	if (p == MAP_FAILED) {
		kp_info("GPU %u: BO 0x%" PRIx64 ": no CPU mapping of its dma-buf (%s): SDMA copies every byte to classify the chunks",
			j->gpu_id, bo->addr, strerror(errno));
		s->map_scan = false;
		return 1;
	}
	ret = kp_dmabuf_sync(j, bo->dmabuf_fd, true);
	if (ret) {
		kp_err("BO 0x%" PRIx64 " (GPU %u): DMA_BUF_IOCTL_SYNC: %s",
		       bo->addr, j->gpu_id, strerror(-ret));
		munmap(p, len);
		kp_prof_add(&j->prof, KP_PROF_MAP, t);
		return ret;
	}
	t = kp_prof_add(&j->prof, KP_PROF_MAP, t);
	/*
	 * A full dump (scan_zero): the CPU sums DATA chunks where it copies
	 * them (the staging or the bounce buffer).
	 */
	kp_classify_chunks(j, bo, p, c0, n, s->scan_zero);
	kp_prof_add(&j->prof, KP_PROF_SUM, t);
	s->map_chunks += n;
	*map = p;
	return 0;
}

/* End the CPU's reads of kp_map_classify()'s mapping @p and unmap it. */
static int kp_map_release(struct kp_sdma *s, const struct kp_copy_bo *bo,
			  uint8_t *p, size_t len)
{
	struct kp_copy_job *j = s->j;
	uint64_t t = kp_prof_now();
	int ret;

	ret = kp_dmabuf_sync(j, bo->dmabuf_fd, false);
	if (ret)
		kp_err("BO 0x%" PRIx64 " (GPU %u): DMA_BUF_IOCTL_SYNC end: %s",
		       bo->addr, j->gpu_id, strerror(-ret));
	munmap(p, len);
	kp_prof_add(&j->prof, KP_PROF_MAP, t);
	return ret;
}

/*
 * A window classified through the mapping whose chunks to store are at
 * most 1 / KP_MAP_STORE_DIV of it is sparse: the CPU copies those chunks
 * out of the mapping itself (kp_sparse_store()). The zero test has just
 * faulted in the pages of every one of them (each fault maps a chunk's 16
 * pages), and SDMA would move their scattered runs one submission and
 * fence wait each (on kfdsim 10% of 1 GiB in 64 KiB runs: 0.7 s of SDMA
 * on a quiet host). Denser windows go by SDMA, in long runs.
 */
#define KP_MAP_STORE_DIV	4

/* Bytes of the DATA chunks among chunks [@c0, @c0 + @n) of @bo. */
static uint64_t kp_data_bytes(const struct kp_copy_job *j,
			      const struct kp_copy_bo *bo, uint64_t c0,
			      uint64_t n)
{
	uint64_t c, bytes = 0;

	for (c = c0; c < c0 + n; c++)
		if (bo->kinds[c] == KFD_CHUNK__KFD_CHUNK_DATA)
			bytes += kp_chunk_len(bo->size, j->chunk, c);
	return bytes;
}

/*
 * save, chunks classified first (on the GPU, or on the CPU through the
 * mapping): then move only the runs of chunks to store, by SDMA into the
 * bounce buffer piece by piece as kp_sdma_save_window() pipelines them, or
 * (a sparse window, see KP_MAP_STORE_DIV) with kp_sparse_store(). 1: not
 * classified (no mapping), copy everything.
 */
static int kp_sdma_save_classified(struct kp_sdma *s, int img,
				   struct kp_copy_bo *bo, uint64_t off,
				   size_t len, struct kp_sum *sum)
{
	struct kp_copy_job *j = s->j;
	uint64_t c0 = off / j->chunk, n = (len + j->chunk - 1) / j->chunk;
	uint8_t *map = NULL;
	int ret, ret2;

	ret = s->scan_cpu ? kp_scan_window(s, bo, off, len, c0, n) :
			    kp_map_classify(s, bo, off, len, c0, n, &map);
	if (ret)
		return ret;
	bo->scanned = true;
	bo->scan_zero = s->scan_zero;
	if (map && j->stage &&
	    kp_data_bytes(j, bo, c0, n) * KP_MAP_STORE_DIV <= len) {
		ret = kp_sparse_store(j, img, bo, len, c0, map, sum, s->store2,
				      s->store2 ? KP_STORE2_BYTES : 0,
				      &s->cpu_stored);
		goto out;
	}
	/* The mapping was only read to classify: SDMA moves the bytes. */
	if (map) {
		ret = kp_map_release(s, bo, map, len);
		map = NULL;
		if (ret)
			goto out;
	}
	ret = kp_sdma_ready(s);
	if (!ret)
		ret = kp_sdma_save_window(s, img, bo, off, len, sum, true);
out:
	if (map) {
		ret2 = kp_map_release(s, bo, map, len);
		if (!ret)
			ret = ret2;
	}
	bo->scanned = bo->scan_zero = false;
	return ret;
}

/* save: BO -> bounce -> image; load: image -> bounce -> BO. */
static int kp_sdma_window(void *ctx, int img, struct kp_copy_bo *bo,
			  uint64_t off, size_t len, struct kp_sum *sum)
{
	struct kp_sdma *s = ctx;
	int ret;

	if (s->j->dir == KP_COPY_SAVE && (s->scan_cpu || s->map_scan)) {
		ret = kp_sdma_save_classified(s, img, bo, off, len, sum);
		if (ret <= 0)
			return ret;
	}
	ret = kp_sdma_ready(s);
	if (ret)
		return ret;
	if (s->j->dir == KP_COPY_SAVE)
		return kp_sdma_save_window(s, img, bo, off, len, sum, false);
	return kp_sdma_load_window(s, img, bo, off, len, sum);
}

static const struct kp_copy_ops kp_sdma_ops = {
	.begin = kp_sdma_begin,
	.window = kp_sdma_window,
	.end = kp_sdma_end,
};

int kp_sdma_run_job(struct kp_copy_job *j, bool *engine, char *why,
		    size_t why_len)
{
	struct kp_sdma s = { .j = j, .fd = -1, .why = why, .why_len = why_len };
	uint64_t t = kp_prof_now(), scan = j->prof.ns[KP_PROF_SCAN];
	int ret;

	ret = kp_sdma_setup(&s);
	kp_prof_add(&j->prof, KP_PROF_SETUP, t);
	j->prof.ns[KP_PROF_SETUP] -= j->prof.ns[KP_PROF_SCAN] - scan;
	if (!ret) {
		kp_info("GPU %u: %s BO contents via sdma (renderD%u), %u BOs, bounce buffer %zu bytes (pinned at the first SDMA copy)",
			j->gpu_id,
			j->dir == KP_COPY_SAVE ? "saving" : "restoring",
			j->render_minor, j->nbos, s.bounce_size);
		ret = kp_copy_walk(j, &kp_sdma_ops, &s);
	}
	if (!ret)
		kp_info("GPU %u: SDMA moved %" PRIu64 " bytes; %" PRIu64 " chunks classified on the GPU, %" PRIu64 " on the CPU through the dma-buf mapping; the CPU copied %" PRIu64 " bytes of sparse windows out of that mapping",
			j->gpu_id, s.copied, s.scan_chunks, s.map_chunks,
			s.cpu_stored);
	kp_sdma_teardown(&s);
	*engine = s.engine;
	return ret;
}
