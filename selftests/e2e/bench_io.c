// SPDX-License-Identifier: GPL-2.0
/*
 * What bounds a dump on this machine, for scripts/bench-guest:
 *
 *   bench_io copy SRC DST BUF
 *       read() SRC and write() every byte of it to the new file DST,
 *       BUF bytes (k/M/G suffixes) at a time (the plugin writes its images a chunk at a
 *       time: use its chunk size); prints "copy BYTES NS".
 *   bench_io mem BYTES
 *       (k/M/G suffixes) the CPU passes over memory that a dump makes, each over BYTES
 *       in 64 MiB pieces from a buffer of pseudo-random bytes: memcpy,
 *       the zero test (over zeros: a whole read, what a zero chunk costs)
 *       and both chunk checksums of the CRIU plugin (its own checksum.c)
 *       per 64 KiB chunk; prints "NAME BYTES NS" lines.
 *   bench_io write BYTES DIR [NAME...]
 *       the ways a dump can put BYTES of memory (pseudo-random, in a
 *       64 MiB buffer) into a new file in DIR (the images directory),
 *       or only the cases NAME... (an unknown name fails):
 *       write() of 64 KiB, 1 MiB and 8 MiB; 1 MiB writes into a file
 *       fallocate()d first (the allocation timed too); 1 MiB pwrite()s
 *       over a file that already holds every page (no page allocation);
 *       vmsplice() of 1 MiB into a pipe and splice() into the file (what
 *       CRIU does with anonymous memory); two threads, each putting
 *       alternate 1 MiB pieces at their offsets into one file (two image
 *       writers for one GPU), and two threads each writing half the bytes
 *       into a file of its own (one writer per GPU, two GPUs), each by
 *       pwrite() or write() and by splice(); prints "NAME BYTES NS" lines.
 *
 * Times are CLOCK_MONOTONIC; each figure is the best of two runs (the
 * host is shared, TCG timings are noisy).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "checksum.h"

#define PIECE	(64ULL << 20)
#define CHUNK	(64U << 10)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One read-and-write pass of @src to @dst; bytes copied, or -1. */
static int64_t copy_once(const char *src, const char *dst, uint8_t *buf,
			 size_t bufsz)
{
	int in, out, bad = 0;
	int64_t total = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return -1;
	}
	for (;;) {
		n = read(in, buf, bufsz);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			bad = n < 0;
			break;
		}
		if (write_all(out, buf, (size_t)n)) {
			bad = 1;
			break;
		}
		total += n;
	}
	close(in);
	if (close(out))
		bad = 1;
	return bad ? -1 : total;
}

/* BYTES with an optional k, M or G suffix; 0 if it is not one. */
static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K':
		v <<= 10;
		end++;
		break;
	case 'm': case 'M':
		v <<= 20;
		end++;
		break;
	case 'g': case 'G':
		v <<= 30;
		end++;
		break;
	}
	return *end ? 0 : v;
}

static int do_copy(const char *src, const char *dst, const char *bufarg)
{
	size_t bufsz = (size_t)parse_size(bufarg);
	uint64_t t, best = UINT64_MAX;
	int64_t bytes = 0;
	uint8_t *buf;
	int i;

	if (!bufsz) {
		fprintf(stderr, "bench_io: bad buffer size %s\n", bufarg);
		return 2;
	}
	buf = malloc(bufsz);
	if (!buf)
		return 1;
	for (i = 0; i < 2; i++) {
		t = now_ns();
		bytes = copy_once(src, dst, buf, bufsz);
		t = now_ns() - t;
		unlink(dst);
		if (bytes < 0) {
			fprintf(stderr, "bench_io: copying %s to %s: %s\n", src,
				dst, strerror(errno));
			free(buf);
			return 1;
		}
		if (t < best)
			best = t;
	}
	free(buf);
	printf("copy %" PRId64 " %" PRIu64 "\n", bytes, best);
	return 0;
}

enum pass { P_MEMCPY, P_ZERO, P_FOLD64, P_XXH64, P_PASSES };

static const char *const pass_names[P_PASSES] = {
	"memcpy", "zero-test", "fold64", "xxh64",
};

/* A sink the compiler cannot drop the passes' results into. */
static volatile uint64_t sink;

static void run_pass(enum pass p, uint8_t *dst, const uint8_t *src,
		     const uint8_t *zeros, size_t len)
{
	uint64_t acc = 0;
	size_t off;

	if (p == P_MEMCPY) {
		memcpy(dst, src, len);
		sink = dst[len - 1];
		return;
	}
	for (off = 0; off < len; off += CHUNK) {
		if (p == P_ZERO)
			acc += kp_is_zero(zeros + off, CHUNK);
		else
			acc ^= kp_chunk_sum(p == P_FOLD64 ? KP_SUM_FOLD64 :
							    KP_SUM_XXH64,
					    src + off, CHUNK);
	}
	sink = acc;
}

static int do_mem(const char *bytesarg)
{
	uint64_t bytes = parse_size(bytesarg), done, t, best;
	uint64_t x = 0x243f6a8885a308d3ULL;
	uint8_t *a, *b, *z;
	size_t i;
	int p, r;

	bytes = (bytes + PIECE - 1) / PIECE * PIECE;
	if (!bytes) {
		fprintf(stderr, "bench_io: bad byte count %s\n", bytesarg);
		return 2;
	}
	a = mmap(NULL, PIECE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, PIECE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	z = mmap(NULL, PIECE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED || z == MAP_FAILED)
		return 1;
	/* Real zero pages, not the shared zero page. */
	memset(z, 0, PIECE);
	/* Data that is not zero anywhere: the zero test reads every chunk's
	 * head only, as for a dense BO. */
	for (i = 0; i < PIECE; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(a + i, &x, 8);
	}
	memset(b, 1, PIECE);
	for (p = 0; p < P_PASSES; p++) {
		best = UINT64_MAX;
		for (r = 0; r < 2; r++) {
			t = now_ns();
			for (done = 0; done < bytes; done += PIECE)
				run_pass((enum pass)p, b, a, z, PIECE);
			t = now_ns() - t;
			if (t < best)
				best = t;
		}
		printf("%s %" PRIu64 " %" PRIu64 "\n", pass_names[p], bytes,
		       best);
	}
	munmap(a, PIECE);
	munmap(b, PIECE);
	munmap(z, PIECE);
	return 0;
}

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum wmode { W_WRITE, W_FALLOC, W_REWRITE, W_SPLICE };

struct wcase {
	const char *name;
	enum wmode mode;	/* two threads: W_WRITE or W_SPLICE only */
	size_t piece;
	unsigned int files;	/* two threads into 1 or 2 files; 0: one thread */
};

static const struct wcase wcases[] = {
	{ "write-64K", W_WRITE, 64U << 10, 0 },
	{ "write-1M", W_WRITE, 1U << 20, 0 },
	{ "write-8M", W_WRITE, 8U << 20, 0 },
	{ "fallocate+write-1M", W_FALLOC, 1U << 20, 0 },
	{ "rewrite-1M", W_REWRITE, 1U << 20, 0 },
	{ "vmsplice+splice-1M", W_SPLICE, 1U << 20, 0 },
	{ "2-threads-1-file-pwrite-1M", W_WRITE, 1U << 20, 1 },
	{ "2-threads-1-file-splice-1M", W_SPLICE, 1U << 20, 1 },
	{ "2-threads-2-files-write-1M", W_WRITE, 1U << 20, 2 },
	{ "2-threads-2-files-splice-1M", W_SPLICE, 1U << 20, 2 },
};

/*
 * @len bytes of @buf moved into @fd by splice(), through pipe @pp: at
 * *@at (advanced), or at the file's position if @at is NULL.
 */
static int splice_all(int fd, const int *pp, uint8_t *buf, size_t len,
		      loff_t *at)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	ssize_t n;

	while (iov.iov_len) {
		n = vmsplice(pp[1], &iov, 1, 0);
		if (n <= 0)
			return -1;
		iov.iov_base = (uint8_t *)iov.iov_base + n;
		iov.iov_len -= (size_t)n;
		while (n > 0) {
			ssize_t m = splice(pp[0], NULL, fd, at, (size_t)n,
					   SPLICE_F_MOVE);

			if (m <= 0)
				return -1;
			n -= m;
		}
	}
	return 0;
}

/* One of the two writers of a two-thread case. */
struct writer {
	int fd;
	bool alternate;		/* one file: pieces 2k + @first, at their offsets */
	bool splice;		/* through @pp, else pwrite() or write() */
	int pp[2];
	unsigned int first;
	uint8_t *buf;
	size_t piece;
	uint64_t bytes;		/* the whole file's (two files: this writer's) */
	int bad;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t k, step = w->alternate ? 2 : 1;
	loff_t at;
	ssize_t n;

	for (k = w->alternate ? w->first : 0; !w->bad &&
	     k * w->piece < w->bytes; k += step) {
		at = (loff_t)(k * w->piece);
		if (w->splice) {
			w->bad = splice_all(w->fd, w->pp, w->buf + at % PIECE,
					    w->piece,
					    w->alternate ? &at : NULL);
		} else if (!w->alternate) {
			w->bad = write_all(w->fd, w->buf + at % PIECE,
					   w->piece);
		} else {
			n = pwrite(w->fd, w->buf + at % PIECE, w->piece, at);
			w->bad = n < 0 || (size_t)n != w->piece;
		}
	}
	return NULL;
}

/*
 * Two writer threads: into @fd (@wc->files 1) or into @fd and a second
 * file @path2 (2: @bytes split between them). 0 or -1.
 */
static int write_two(const struct wcase *wc, int fd, const char *path2,
		     uint8_t *buf, uint64_t bytes)
{
	bool one = wc->files == 1;
	struct writer w[2] = {
		{ .pp = { -1, -1 } }, { .pp = { -1, -1 } }	/* closed below */
	};
	pthread_t th[2];
	int bad = 0, fd2 = -1;
	unsigned int i;

	if (!one) {
		fd2 = open(path2, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
			   0600);
		if (fd2 < 0)
			return -1;
	}
	for (i = 0; i < 2; i++) {
		w[i] = (struct writer){
			.fd = i && !one ? fd2 : fd, .alternate = one,
			.splice = wc->mode == W_SPLICE, .pp = { -1, -1 },
			.first = i, .buf = buf, .piece = wc->piece,
			.bytes = one ? bytes : bytes / 2,
		};
		if (w[i].splice && (pipe(w[i].pp) ||
		    fcntl(w[i].pp[1], F_SETPIPE_SZ, (int)wc->piece) < 0))
			w[i].bad = 1;
		if (w[i].bad || pthread_create(&th[i], NULL, writer_main,
					       &w[i])) {
			bad = 1;
			break;
		}
	}
	while (i--) {
		pthread_join(th[i], NULL);
		bad |= w[i].bad;
	}
	for (i = 0; i < 2; i++) {
		if (w[i].pp[0] >= 0) {
			close(w[i].pp[0]);
			close(w[i].pp[1]);
		}
	}
	if (fd2 >= 0) {
		if (close(fd2))
			bad = 1;
		unlink(path2);
	}
	return bad ? -1 : 0;
}

/* One timed run of @wc: @bytes from @buf (PIECE bytes) into @path. */
static int write_case(const struct wcase *wc, const char *path, uint8_t *buf,
		      uint64_t bytes, uint64_t *ns)
{
	uint64_t done, t = 0;
	int fd, pp[2] = { -1, -1 }, bad = 0;
	char path2[4100];

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (wc->mode == W_REWRITE) {
		for (done = 0; !bad && done < bytes; done += PIECE)
			bad = write_all(fd, buf, PIECE);
		if (lseek(fd, 0, SEEK_SET))
			bad = 1;
	}
	if (wc->mode == W_SPLICE && !wc->files &&
	    (pipe(pp) || fcntl(pp[1], F_SETPIPE_SZ, (int)wc->piece) < 0))
		bad = 1;
	t = now_ns();
	if (!bad && wc->mode == W_FALLOC && fallocate(fd, 0, 0, (off_t)bytes))
		bad = 1;
	if (!bad && wc->files) {
		snprintf(path2, sizeof(path2), "%s.2", path);
		bad = write_two(wc, fd, path2, buf, bytes);
	}
	for (done = 0; !bad && !wc->files && done < bytes;
	     done += wc->piece) {
		uint8_t *p = buf + done % PIECE;

		bad = wc->mode == W_SPLICE ?
		      splice_all(fd, pp, p, wc->piece, NULL) :
		      write_all(fd, p, wc->piece);
	}
	*ns = now_ns() - t;
	if (pp[0] >= 0) {
		close(pp[0]);
		close(pp[1]);
	}
	if (close(fd))
		bad = 1;
	unlink(path);
	return bad ? -1 : 0;
}

/* Is @name one of the @n names at @want (or is @n 0)? */
static bool wanted(const char *name, char **want, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, want[i]))
			return true;
	return !n;
}

static int do_write(const char *bytesarg, const char *dir, char **want,
		    int nwant)
{
	uint64_t bytes = parse_size(bytesarg), x = 0x13198a2e03707344ULL;
	uint64_t ns, best;
	char path[4096];
	unsigned int c;
	int ran = 0;
	uint8_t *buf;
	size_t i;
	int r;

	bytes = (bytes + PIECE - 1) / PIECE * PIECE;
	if (!bytes) {
		fprintf(stderr, "bench_io: bad byte count %s\n", bytesarg);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/bench_io.write", dir);
	buf = mmap(NULL, PIECE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	for (i = 0; i < PIECE; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(buf + i, &x, 8);
	}
	for (c = 0; c < ARRAY_SIZE(wcases); c++) {
		if (!wanted(wcases[c].name, want, nwant))
			continue;
		best = UINT64_MAX;
		for (r = 0; r < 2; r++) {
			if (write_case(&wcases[c], path, buf, bytes, &ns)) {
				fprintf(stderr, "bench_io: %s into %s: %s\n",
					wcases[c].name, path, strerror(errno));
				munmap(buf, PIECE);
				return 1;
			}
			if (ns < best)
				best = ns;
		}
		printf("%s %" PRIu64 " %" PRIu64 "\n", wcases[c].name, bytes,
		       best);
		fflush(stdout);
		ran++;
	}
	munmap(buf, PIECE);
	if (nwant && ran != nwant) {
		fprintf(stderr, "bench_io: %d of the %d write cases named are not known\n",
			nwant - ran, nwant);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "write"))
		return do_write(argv[2], argv[3], argv + 4, argc - 4);
	if (argc == 5 && !strcmp(argv[1], "copy"))
		return do_copy(argv[2], argv[3], argv[4]);
	if (argc == 3 && !strcmp(argv[1], "mem"))
		return do_mem(argv[2]);
	fprintf(stderr,
		"usage: bench_io copy SRC DST BUF | bench_io mem BYTES | bench_io write BYTES DIR [NAME...]\n");
	return 2;
}
