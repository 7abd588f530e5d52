/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libhsakmt's shared memory: /dev/shm/hsakmt_shared_mem (its performance
 * counter table, opened and mapped by every process of ROCm's thunk) and
 * its semaphore /dev/shm/sem.hsakmt_semaphore (mapped). CRIU restores a
 * process's fd and mappings of these by path, so they must exist, with
 * the size they had, before CRIU opens them: a dump records them with the
 * process's KFD image, a restore creates whichever is missing.
 */
#ifndef KP_HSAKMT_SHM_H
#define KP_HSAKMT_SHM_H

#include <sys/types.h>

#include "kfd_image.pb-c.h"

/* Largest shared memory file whose contents a dump keeps. */
#define KP_HSAKMT_SHM_MAX	(64 * 1024)
/* Largest file a restore creates (libhsakmt's is a few bytes). */
#define KP_HSAKMT_SHM_SIZE_MAX	(16 * 1024 * 1024)

/*
 * Record the shared memory file in @p if it is a regular file process
 * @pid holds or maps (and the semaphore with it, if @pid maps that), its
 * contents in *@buf (free() it after the image is written). @kfd is a
 * file of the process (its /dev/kfd): @pid counts only if /proc/@pid has
 * it. Anything else is warned about and not recorded. 0, or -ENOMEM.
 */
int kp_hsakmt_shm_save(KfdProcess *p, void **buf, pid_t pid, int kfd);
/* Create the file and the semaphore if @p recorded them and they are gone. */
int kp_hsakmt_shm_restore(const KfdProcess *p);

/* Unit tests: /dev/shm/@shm and the semaphore @sem instead of libhsakmt's. */
void kp_hsakmt_test_names(const char *shm, const char *sem);

#endif /* KP_HSAKMT_SHM_H */
