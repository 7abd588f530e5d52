/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Moving BO contents between dma-buf fds and pages images.
 *
 * One job per pages image (a GPU, or one of its lanes: images.h), each in
 * its own thread. A job walks its BOs in order and moves each one window
 * at a time, so that no more than
 * KFD_MAX_BUFFER_SIZE bytes (all jobs together) are in flight at once,
 * however large a BO is. Two engines move a window:
 *   cpu   a CPU mapping of the BO's dma-buf; the data goes between the
 *         mapping and the image file through a 1 MiB staging buffer
 *   sdma  the GPU's SDMA engine, through a host bounce buffer
 *         (sdma_copy.c)
 * KFD_BO_COPY=cpu|sdma|auto picks one; auto (the default) tries SDMA on
 * each GPU and falls back to the CPU for a GPU where SDMA does not work.
 */
#ifndef KFD_PLUGIN_BO_COPY_H
#define KFD_PLUGIN_BO_COPY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "chain.h"
#include "checksum.h"
#include "images.h"

#define KP_DEFAULT_BUFFER_SIZE	(64ULL << 20)

/*
 * The cpu engine's pipeline (kp_cpu_pipe_window()): staging buffers of
 * KP_CPU_PIECE bytes (whole chunks), KP_CPU_BUFS of them per job, all
 * counted against the job's share of KFD_MAX_BUFFER_SIZE.
 */
#define KP_CPU_BUFS		2
#define KP_CPU_PIECE		(1U << 20)

struct kp_copy_bo {
	uint64_t addr;		/* GPU VA, for messages */
	uint64_t size;
	int dmabuf_fd;
	uint64_t checksum;	/* save: computed; load: expected */

	/* Chunked contents (image version 2), when the job's chunk is set. */
	uint8_t *kinds;		/* KfdChunk per chunk: save sets, load reads */
	uint64_t *sums;		/* kp_sum per chunk: save sets, load checks */
	const uint64_t *base;	/* save: the parent's sums, or NULL */
	const struct kp_chain *chain;	/* load: where PARENT chunks are */
	uint32_t chain_bo;	/* load: this BO's index there */
	uint64_t stored;	/* save: bytes written; sliced load: to read */
	/*
	 * save: the GPU has classified the current window's chunks
	 * (gpu_scan.h): @kinds and @sums are set, and only DATA chunks
	 * hold copied bytes. @scan_zero: the GPU only told zero chunks
	 * apart (a full dump: no sums to compare), the CPU sums DATA ones.
	 */
	bool scanned;
	bool scan_zero;
};

enum kp_copy_mode {
	KP_COPY_CPU,		/* dma-buf mmap only */
	KP_COPY_AUTO,		/* SDMA if it works on the GPU, else CPU */
	KP_COPY_SDMA,		/* SDMA only; a failure is an error */
};

/*
 * Where a job's time goes (kp_copy_run() logs it at INFO level, per GPU):
 *   map    mmap, DMA_BUF_IOCTL_SYNC and munmap of the dma-buf windows
 *   touch  the first read of every page of a mapping (page faults), timed
 *          apart only with KFD_PLUGIN_PROFILE=1, which adds that read;
 *          otherwise the faults are in copy
 *   sum    zero tests and checksums on the CPU
 *   io     writing (save) or reading (load) the pages image
 *   fill   load: zero chunks written, parent chunks read from the chain
 *   sdma   SDMA copies submitted and waited for
 *   scan   chunks classified on the GPU (gpu_scan.h)
 *   copy   memcpy between a mapping and the staging buffer (cpu path;
 *          sdma path: sparse windows, sdma_copy.c)
 *   setup  sdma path: render node, context, IB, bounce buffer (its pages
 *          pinned), the test submission; the GPU scan's self-test and
 *          calibration are in scan
 */
enum kp_prof_phase {
	KP_PROF_MAP,
	KP_PROF_TOUCH,
	KP_PROF_SUM,
	KP_PROF_IO,
	KP_PROF_FILL,
	KP_PROF_SDMA,
	KP_PROF_SCAN,
	KP_PROF_COPY,
	KP_PROF_SETUP,
	KP_PROF_PHASES
};

struct kp_copy_prof {
	uint64_t ns[KP_PROF_PHASES];
	bool touch;		/* KFD_PLUGIN_PROFILE: time the page faults */
};

/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t kp_prof_now(void);
/* Add the time since @t0 to @phase; returns now. */
uint64_t kp_prof_add(struct kp_copy_prof *pr, enum kp_prof_phase phase,
		     uint64_t t0);

enum kp_copy_dir {
	KP_COPY_SAVE,		/* BOs -> image */
	KP_COPY_LOAD,		/* image -> BOs, checksums verified */
};

struct kp_copy_job {
	enum kp_copy_dir dir;
	char image[KP_NAME_LEN];
	uint32_t gpu_id;	/* for messages */
	uint32_t lane;		/* which of the GPU's pages images */
	/*
	 * save: threads that classify a window's chunks through the dma-buf
	 * mapping (kp_classify_chunks()): 1 or 2; kp_copy_run() sets it.
	 */
	unsigned int classify_threads;
	unsigned int nbos;
	struct kp_copy_bo *bos;
	bool no_sync;		/* tests: plain files, not dma-bufs */
	enum kp_copy_mode mode;
	uint32_t render_minor;	/* the GPU's render node here (SDMA) */
	bool cpu_scan;		/* save: never classify chunks on the GPU */
	bool gpu_scan;		/* save: on the GPU even where it is slower */
	/*
	 * Load a slice of the image (parallel restore): the image holds
	 * @slice_total bytes of contents and this job's BOs start
	 * @slice_skip bytes into them (chunked: stored chunks only, each
	 * BO's @stored set). 0 and 0: the whole image.
	 */
	uint64_t slice_skip;
	uint64_t slice_total;
	/*
	 * Bytes per chunk, 0 for version 1 images (every byte stored, after
	 * a length). Chunked: zero chunks are not stored (save) and written
	 * as zeros (load: a restored BO's contents are undefined until
	 * then); chunks whose sum equals the base's refer to the parent.
	 */
	uint32_t chunk;
	/*
	 * The chunk checksum function (checksum.h): save, what this dump
	 * writes (its parent's, if it has one); load, what the image says.
	 */
	enum kp_sum_kind sum_kind;

	/* set by kp_copy_run() */
	uint64_t window;	/* a multiple of chunk */
	uint64_t zero_sum;	/* of a whole zero chunk */
	struct kp_copy_prof prof;
	/*
	 * cpu engine: move a window's pieces in a pipeline of two threads
	 * (kp_cpu_pipe_from_env()); kp_job_main() turns it off where the
	 * budget has no room for its staging buffers.
	 */
	bool cpu_pipe;
	uint64_t pipe_windows;	/* windows the pipeline moved (profile) */
	uint8_t *stage;		/* staging buffer (kp_stage_alloc()), or NULL */
	size_t stage_len;
	/* the pipeline's staging buffers (stage is the first), or 1 */
	uint8_t *stage_buf[KP_CPU_BUFS];
	unsigned int stage_bufs;
	void *stage_mem;	/* their allocation (they are inside it) */
	/*
	 * save: the pipe the image writes go through (kp_img_write()),
	 * when @splice; set up by kp_copy_walk().
	 */
	int pipe[2];
	bool splice;
	int ret;
	pthread_t thread;
};

/* KFD_MAX_BUFFER_SIZE, or the default. */
uint64_t kp_copy_buffer_size(void);

/* "cpu", "sdma", "auto" (any case). 0 or -EINVAL. */
int kp_copy_mode_parse(const char *s, enum kp_copy_mode *mode);
/* KFD_BO_COPY, or auto (also, with a warning, when it is invalid). */
enum kp_copy_mode kp_copy_mode_from_env(void);
const char *kp_copy_mode_name(enum kp_copy_mode mode);

/*
 * How an engine moves one BO: @begin and @end (optional) bracket the
 * windows of a BO; @window moves bytes [off, off + len) between the BO
 * and the image @img and feeds them to @sum. Each returns 0 or -errno.
 */
struct kp_copy_ops {
	int (*begin)(void *ctx, const struct kp_copy_bo *bo);
	int (*window)(void *ctx, int img, struct kp_copy_bo *bo,
		      uint64_t off, size_t len, struct kp_sum *sum);
	void (*end)(void *ctx, const struct kp_copy_bo *bo);
};

/*
 * Run job @j with @ops: create (save) or check (load) the image, move
 * every BO, set (save) or verify (load) the checksums. 0 or -errno.
 */
int kp_copy_walk(struct kp_copy_job *j, const struct kp_copy_ops *ops,
		 void *ctx);

/*
 * The image side of a window held in @buf: write it (save) or fill it
 * from the image (load), and add it to @sum. Errors are logged.
 */
int kp_copy_image_io(struct kp_copy_job *j, int img,
		     struct kp_copy_bo *bo, uint64_t off, void *buf,
		     size_t len, struct kp_sum *sum);

/*
 * The job's staging buffer (stage, stage_len: whole chunks, about 1 MiB,
 * placed so that glibc's memcpy out of a mapping runs forward), or NULL
 * stage if there is no memory for it; and its release. kp_stage_alloc_n():
 * @n (at most KP_CPU_BUFS) such buffers of about @piece bytes each
 * (stage_buf[], stage_bufs; stage is the first).
 */
void kp_stage_alloc(struct kp_copy_job *j);
void kp_stage_alloc_n(struct kp_copy_job *j, unsigned int n, size_t piece);
void kp_stage_free(struct kp_copy_job *j);

/*
 * Whether the cpu engine pipelines its windows, for @njobs jobs at once:
 * KFD_BO_CPU_PIPE=0 or 1, else (auto) where the machine has at least two
 * online CPUs per job (sysconf).
 */
bool kp_cpu_pipe_from_env(unsigned int njobs);

/*
 * Pages images (lanes, images.h) a dump spreads each GPU's BOs over, for
 * @ngpus GPUs: KFD_BO_LANES (1 to KP_MAX_LANES), else (auto) one per
 * online CPU per GPU; at most KP_MAX_LANES, and KP_MAX_GPUS images in all.
 */
unsigned int kp_lanes_from_env(unsigned int ngpus);
/* How many GPUs @n jobs are for (a GPU's lanes are jobs of their own). */
unsigned int kp_jobs_gpus(const struct kp_copy_job *jobs, unsigned int n);

/*
 * Fills piece @k (@n bytes at offset @at of the window) of a
 * kp_pipe_save_fetched() window; runs in the copier thread, in piece
 * order. 0 or -errno (the window stops).
 */
typedef int (*kp_pipe_fetch_fn)(void *ctx, uint64_t k, uint64_t at,
				size_t n);

/*
 * Save the window at @off (@len bytes) of @bo whose bytes another engine
 * puts at @base (piece k, of @piece bytes, whole chunks, at base + k *
 * @piece, by @fetch): a copier thread fetches each piece, then classifies
 * and sums its chunks (kp_chunk_save(), adding to @sum in order) while the
 * job's thread writes the pieces before it to @img. The image and the
 * sums are those of kp_copy_image_io() over the same bytes. 1 if no
 * thread can be started (nothing done: the caller moves the window
 * itself), else 0 or -errno (the first error of either thread; @fetch is
 * not called again after it).
 */
int kp_pipe_save_fetched(struct kp_copy_job *j, int img,
			 struct kp_copy_bo *bo, uint64_t off, uint8_t *base,
			 size_t len, size_t piece, struct kp_sum *sum,
			 kp_pipe_fetch_fn fetch, void *ctx);

/*
 * Write @len bytes at @p to the pages image @img of a save job: vmsplice()
 * into the job's pipe and splice() into the file where that works (an
 * unpinnable source, e.g. a dma-buf mapping, falls back to write()), which
 * in the guest moves a GiB into tmpfs in 0.65 of write()'s time
 * (Documentation/benchmarks.rst). The bytes are in the file when it
 * returns: @p may be reused. 0 or -errno (not logged).
 */
int kp_img_write(struct kp_copy_job *j, int img, const void *p, size_t len);

/*
 * Save side of chunk @c of @bo, its @clen bytes at @p: classify it (zero
 * test and sum) unless it was classified before (bo->scanned; then a
 * DATA chunk's sum is taken or checked). 0 or -EIO (logged).
 */
int kp_chunk_save(struct kp_copy_job *j, struct kp_copy_bo *bo, uint64_t c,
		  const uint8_t *p, size_t clen);

/*
 * Append @len bytes of DATA chunks at @p to the pages image @img (nothing
 * if @len is 0) and count them in bo->stored. 0 or -errno (logged).
 */
int kp_run_write(struct kp_copy_job *j, int img, struct kp_copy_bo *bo,
		 const uint8_t *p, size_t len);

/*
 * Record chunk @c (@clen bytes) of @bo: ZERO when @zero (with the checksum
 * of that many zero bytes), else its checksum @h and PARENT when the
 * parent's (bo->base) is the same, DATA otherwise.
 *
 * When the GPU classified the chunks (bo->scanned), the CPU checks the
 * GPU's sum of every DATA chunk against the bytes it writes: a wrong sum
 * fails the dump instead of the restore (after a zero test alone,
 * bo->scan_zero, the CPU's sum is the chunk's).
 */
void kp_chunk_classify(const struct kp_copy_job *j, struct kp_copy_bo *bo,
		       uint64_t c, size_t clen, bool zero, uint64_t h);

/*
 * Chunks [@c0, @c0 + @n) of @bo, their bytes at @p (chunk @c0's first):
 * the zero test of each, and unless @zero_only the sum of each that is
 * not zero, recorded by kp_chunk_classify(); with @zero_only a chunk
 * that is not zero is DATA and its sum is left to the caller (sums[] 0).
 * With j->classify_threads 2 and at least KP_CLASSIFY_SPLIT bytes, a
 * worker thread takes the second half of the chunks while the caller's
 * thread does the first, and is joined before this returns: each thread
 * writes only its own chunks' kinds[] and sums[], so the results, and
 * the image, are the same as with one thread. Nothing here can fail; if
 * the worker cannot be started, the caller's thread does all of it.
 */
#define KP_CLASSIFY_SPLIT	(1U << 20)
void kp_classify_chunks(const struct kp_copy_job *j, struct kp_copy_bo *bo,
			const uint8_t *p, uint64_t c0, uint64_t n,
			bool zero_only);

/*
 * Store the classified window of @len bytes from chunk @c0 of @bo on, out
 * of its mapping @map (a sparse window of the SDMA path, bo->scanned
 * set): the DATA chunks are copied into the job's staging buffer, one
 * behind the other, summed there (kp_chunk_save()) and written a full
 * staging buffer at a time; the pages image is the DATA chunks in order,
 * however scattered they were. With j->classify_threads 2 and at least
 * KP_CLASSIFY_SPLIT bytes, a worker thread copies and sums the second
 * half's DATA chunks into @buf2 (@cap2 bytes) meanwhile, and this thread
 * writes them after its own and stores what did not fit there itself;
 * the worker is joined before this returns and touches only its chunks'
 * sums. Every chunk's sum goes to @sum, in order; @stored counts the
 * bytes copied. 0 or -errno (logged).
 */
int kp_sparse_store(struct kp_copy_job *j, int img, struct kp_copy_bo *bo,
		    size_t len, uint64_t c0, const uint8_t *map,
		    struct kp_sum *sum, uint8_t *buf2, size_t cap2,
		    uint64_t *stored);

/*
 * How many threads classify each copy job's chunks, for @njobs jobs at
 * once: KFD_BO_SCAN_THREADS (1 or 2), else 2 where the machine has at
 * least two online CPUs per job (sysconf), else 1.
 */
unsigned int kp_classify_threads_from_env(unsigned int njobs);

/*
 * DMA_BUF_IOCTL_SYNC of @fd: the CPU starts (@start) or ends reading
 * (save) or writing (load) it. Nothing for j->no_sync. 0 or -errno.
 */
int kp_dmabuf_sync(const struct kp_copy_job *j, int fd, bool start);

/*
 * Run the jobs, one thread each, with at most @max_buffer bytes mapped
 * at a time overall. Returns 0 or the first job's error (each failure has
 * been logged).
 */
int kp_copy_run(struct kp_copy_job *jobs, unsigned int njobs,
		uint64_t max_buffer);

#endif /* KFD_PLUGIN_BO_COPY_H */
