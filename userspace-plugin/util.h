/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the plugin and kfd-inspect: logging, option
 * parsing, whole-buffer I/O and file descriptor placement.
 */
#ifndef KFD_PLUGIN_UTIL_H
#define KFD_PLUGIN_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "criu_plugin.h"

#define KP_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define KP_MIN(a, b)		((a) < (b) ? (a) : (b))
#define KP_MAX(a, b)		((a) > (b) ? (a) : (b))

/*
 * One log line, prefixed "kfd_plugin: ", into CRIU's log when running
 * inside CRIU, else to stderr (errors and warnings only, by default).
 * Safe to call from the copy threads. Keeps errno.
 */
void kp_log(unsigned int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define kp_err(...)	kp_log(CRIU_LOG_ERROR, "error: " __VA_ARGS__)
#define kp_warn(...)	kp_log(CRIU_LOG_WARN, "warning: " __VA_ARGS__)
#define kp_info(...)	kp_log(CRIU_LOG_INFO, __VA_ARGS__)
#define kp_debug(...)	kp_log(CRIU_LOG_DEBUG, __VA_ARGS__)

/* Outside CRIU: print lines up to this level to stderr (default WARN). */
void kp_log_set_stderr_level(unsigned int level);
/* The last line logged (tests check messages with it). */
const char *kp_log_last(void);

/*
 * "123", "64k", "64M", "2G" (binary units, either case) to bytes.
 * Returns 0, or -EINVAL for anything else (including 0 and overflow).
 */
int kp_parse_size(const char *s, uint64_t *out);
/* "1"/"yes"/"true"/"on" and "0"/"no"/"false"/"off". 0 or -EINVAL. */
int kp_parse_bool(const char *s, bool *out);
/* Environment variable @name as a boolean; @def if unset or invalid. */
bool kp_env_bool(const char *name, bool def);

/* write()/read() everything, retrying short transfers and EINTR. */
int kp_write_all(int fd, const void *buf, size_t len);
/* Returns the bytes read (less than @len only at end of file) or -errno. */
ssize_t kp_read_all(int fd, void *buf, size_t len);

/* Little-endian 64-bit values in byte buffers. */
void kp_put_le64(uint8_t *p, uint64_t v);
uint64_t kp_get_le64(const uint8_t *p);

/* Highest open fd of the calling process (-1 if none), or -errno. */
int kp_highest_fd(void);
/*
 * Move @fd to the lowest free number above every fd the process has open
 * now, close-on-exec, and close the old number. Returns the new fd, or
 * -errno with @fd closed.
 */
int kp_move_fd_high(int fd);

/* Page size of the running system. */
size_t kp_page_size(void);

#endif /* KFD_PLUGIN_UTIL_H */
