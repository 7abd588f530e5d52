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
 *
 * Times are CLOCK_MONOTONIC; each figure is the best of two runs (the
 * host is shared, TCG timings are noisy).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "copy"))
		return do_copy(argv[2], argv[3], argv[4]);
	if (argc == 3 && !strcmp(argv[1], "mem"))
		return do_mem(argv[2]);
	fprintf(stderr, "usage: bench_io copy SRC DST BUF | bench_io mem BYTES\n");
	return 2;
}
