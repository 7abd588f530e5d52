/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the end-to-end sample applications (gpu_app,
 * plain_app): option values, marker files, clocks, logging, the loop
 * kernel's recurrence and the data patterns.
 *
 * Both applications are meant to be checkpointed by CRIU, so nothing here
 * keeps a file open: marker files are written and closed at once.
 */
#ifndef E2E_APP_UTIL_H
#define E2E_APP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The loop kernel's update, KFDSIM_KERNEL_LOOP in kernels.rst. */
#define APP_LCG_MUL	1664525u
#define APP_LCG_ADD	1013904223u

/* Name in log lines ("gpu_app", "child", ...). */
extern const char *app_name;

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t app_now_ms(void);
/* Sleep, restarting after signals (CRIU interrupts sleeps). */
void app_sleep_ms(unsigned int ms);

/* "name: +12.345s message" on stdout, flushed. */
void app_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "<prefix>RESULT FAIL <why>" and exit 1. */
void app_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* The prefix of the RESULT line: "" for the main process. */
extern const char *app_result_prefix;

/* A size with an optional k/M/G suffix (powers of 1024); false if bad. */
bool app_parse_size(const char *s, uint64_t *out);
/* A decimal number; false if bad. */
bool app_parse_u64(const char *s, uint64_t *out);

/* Write "<pid>\n" to @path and close it; exits through app_fail(). */
void app_write_marker(const char *path);
/* Whether @path exists. */
bool app_exists(const char *path);

/*
 * @steps steps of the loop kernel starting at step 0 are the affine map
 * x -> a * x + b (mod 2^32); compute a and b.
 */
void app_loop_affine(uint32_t steps, uint32_t *a, uint32_t *b);
/* Compose: first (a1, b1), then (a2, b2). */
void app_affine_then(uint32_t *a1, uint32_t *b1, uint32_t a2, uint32_t b2);

/* Initial value of element @i of array @which under @seed. */
uint32_t app_initial(uint64_t seed, uint32_t which, uint64_t i);
/* The checksum kernel: sum of x[i] * (2 i + 1), modulo 2^64. */
uint64_t app_checksum_add(uint64_t sum, uint32_t x, uint64_t i);
/* Fold per-array checksums into the one printed on the RESULT line. */
uint64_t app_fold(uint64_t h, uint64_t v);
#define APP_FOLD_INIT	0xcbf29ce484222325ULL

/* A 64-bit word of the benchmarks' hold pattern at byte offset @off. */
static inline uint64_t app_hold_word(uint64_t seed, uint64_t off)
{
	return (off * 0x9e3779b97f4a7c15ULL) ^ seed;
}

#endif /* E2E_APP_UTIL_H */
