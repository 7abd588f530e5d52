// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the end-to-end sample applications (see app_util.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app_util.h"

const char *app_name = "app";
const char *app_result_prefix = "";
static uint64_t app_start_ms;

uint64_t app_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void app_sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void app_vlog(const char *prefix, const char *fmt, va_list ap)
{
	uint64_t now = app_now_ms();

	if (!app_start_ms)
		app_start_ms = now;
	now -= app_start_ms;
	printf("%s%s: +%llu.%03llus ", prefix, app_name,
	       (unsigned long long)(now / 1000),
	       (unsigned long long)(now % 1000));
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

void app_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	app_vlog("", fmt, ap);
	va_end(ap);
}

void app_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%sRESULT FAIL ", app_result_prefix);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	va_end(ap);
	exit(1);
}

bool app_parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && !*end;
}

bool app_parse_size(const char *s, uint64_t *out)
{
	unsigned int shift = 0;
	char *end;
	uint64_t v;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case '\0':
		break;
	default:
		return false;
	}
	if (shift && end[1])
		return false;
	if (v > (UINT64_MAX >> shift))
		return false;
	*out = v << shift;
	return true;
}

void app_write_marker(const char *path)
{
	char buf[32], tmp[4096];
	int fd, len;

	/* Write a temporary name and rename it: readers never see it empty. */
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		app_fail("marker path too long: %s", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		app_fail("create %s: %s", tmp, strerror(errno));
	len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write(fd, buf, len) != len) {
		close(fd);
		app_fail("write %s: %s", tmp, strerror(errno));
	}
	close(fd);
	if (rename(tmp, path))
		app_fail("rename %s: %s", tmp, strerror(errno));
}

bool app_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

void app_affine_then(uint32_t *a1, uint32_t *b1, uint32_t a2, uint32_t b2)
{
	/* a2 * (a1 x + b1) + b2 */
	*b1 = a2 * *b1 + b2;
	*a1 = a2 * *a1;
}

void app_loop_affine(uint32_t steps, uint32_t *a, uint32_t *b)
{
	uint32_t s;

	*a = 1;
	*b = 0;
	for (s = 0; s < steps; s++)
		app_affine_then(a, b, APP_LCG_MUL, APP_LCG_ADD + s);
}

uint32_t app_initial(uint64_t seed, uint32_t which, uint64_t i)
{
	/* splitmix64-style mixing: cheap, and every input bit matters. */
	uint64_t z = seed * 0x9e3779b97f4a7c15ULL + ((uint64_t)which << 40) + i;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (uint32_t)(z ^ (z >> 31));
}

uint64_t app_checksum_add(uint64_t sum, uint32_t x, uint64_t i)
{
	return sum + (uint64_t)x * (2 * i + 1);
}

uint64_t app_fold(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ULL;
}
