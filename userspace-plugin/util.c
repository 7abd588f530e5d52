// SPDX-License-Identifier: GPL-2.0
/*
 * Logging, option parsing, whole-buffer I/O and fd placement.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util.h"

static pthread_mutex_t kp_log_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int kp_log_stderr = CRIU_LOG_WARN;
static char kp_log_line[1024];

void kp_log_set_stderr_level(unsigned int level)
{
	kp_log_stderr = level;
}

const char *kp_log_last(void)
{
	return kp_log_line;
}

void kp_log(unsigned int level, const char *fmt, ...)
{
	int saved_errno = errno;
	va_list ap;

	/* CRIU's logger is not thread safe; the copy threads log too. */
	pthread_mutex_lock(&kp_log_lock);
	va_start(ap, fmt);
	vsnprintf(kp_log_line, sizeof(kp_log_line), fmt, ap);
	va_end(ap);
	if (print_on_level)
		print_on_level(level, "kfd_plugin: %s\n", kp_log_line);
	else if (level <= kp_log_stderr)
		fprintf(stderr, "kfd_plugin: %s\n", kp_log_line);
	pthread_mutex_unlock(&kp_log_lock);
	errno = saved_errno;
}

int kp_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	default:
		return -EINVAL;
	}
	if (shift && end[1] != '\0')
		return -EINVAL;
	if (!v || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int kp_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };
	size_t i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < KP_ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

bool kp_env_bool(const char *name, bool def)
{
	const char *s = getenv(name);
	bool v;

	if (!s)
		return def;
	if (kp_parse_bool(s, &v)) {
		kp_warn("%s=\"%s\" is not 0/1/yes/no; using %s", name, s,
			def ? "yes" : "no");
		return def;
	}
	return v;
}

int kp_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

ssize_t kp_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = read(fd, p + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

void kp_put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t kp_get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int kp_highest_fd(void)
{
	struct dirent *de;
	int highest = -1;
	long v;
	char *end;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		v = strtol(de->d_name, &end, 10);
		if (*end == '\0' && v > highest && v <= INT32_MAX)
			highest = (int)v;
	}
	closedir(dir);
	return highest;
}

int kp_move_fd_high(int fd)
{
	int highest, newfd;

	highest = kp_highest_fd();
	if (highest < 0) {
		close(fd);
		return highest < -1 ? highest : -EBADF;
	}
	newfd = fcntl(fd, F_DUPFD_CLOEXEC, highest + 1);
	if (newfd < 0)
		newfd = -errno;
	close(fd);
	return newfd;
}

size_t kp_page_size(void)
{
	long v = sysconf(_SC_PAGESIZE);

	return v > 0 ? (size_t)v : 4096;
}
