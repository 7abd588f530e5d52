/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parallel restore of BO contents: the restored processes hand their BOs'
 * dma-buf fds to worker threads in CRIU's master, which copy the contents
 * while CRIU goes on restoring; RESUME_DEVICES_LATE waits for them and
 * refuses to let a process run when any copy failed. See
 * restore_workers.c and Documentation/criu.rst ("Parallel restore").
 */
#ifndef KFD_PLUGIN_RESTORE_WORKERS_H
#define KFD_PLUGIN_RESTORE_WORKERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bo_copy.h"

/* Most worker threads KFD_PLUGIN_RESTORE_THREADS may ask for. */
#define KP_RW_MAX_THREADS	16

/*
 * KFD_PLUGIN_RESTORE_THREADS: 0 (serial restore, in the restored process),
 * 1..KP_RW_MAX_THREADS, or unset (the online CPUs, at most 8). A bad value
 * warns and gives the default.
 */
unsigned int kp_rw_threads_from_env(void);

/*
 * CRIU's master, plugin init at restore: with @threads > 0, listen for the
 * restored processes and start the workers. On failure, logs and leaves
 * the restore serial. Returns 0 or -errno.
 */
int kp_rw_start(unsigned int threads, uint64_t max_buffer);

/*
 * A restored process (RESTORE_EXT_FILE): hand the load jobs @jobs to the
 * master's workers. 0 once they have every BO (the caller closes its
 * dma-buf fds, the master holds its own); -EAGAIN when there are no
 * workers (serial restore, they cannot be reached, or the image is
 * chunked (version 2): the caller copies itself); another -errno on
 * failure.
 */
int kp_rw_submit(uint32_t image_id, const struct kp_copy_job *jobs,
		 unsigned int njobs);

/*
 * CRIU's master, RESUME_DEVICES_LATE of @pid: the first call waits until
 * every process's contents are copied. 0 if every copy succeeded (or
 * there were no workers); otherwise -errno, and then no process of this
 * restore may run.
 */
int kp_rw_finish(pid_t pid);

/*
 * The unit tests only (never inside criu): the master accepts jobs of
 * plain files (no dma-buf sync), which a peer could otherwise use to have
 * the master write a pages image into any file it hands over.
 */
void kp_rw_test_mode(bool on);

/* CRIU's master, plugin exit: stop and join everything, close every fd. */
void kp_rw_stop(void);

#endif /* KFD_PLUGIN_RESTORE_WORKERS_H */
