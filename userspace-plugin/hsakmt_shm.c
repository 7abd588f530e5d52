// SPDX-License-Identifier: GPL-2.0
/*
 * libhsakmt's shared memory across a checkpoint (see hsakmt_shm.h).
 *
 * libhsakmt 5.2 creates both objects with mode 0666 when it opens /dev/kfd
 * (shm_open of "/hsakmt_shared_mem", sem_open of "hsakmt_semaphore" with
 * the value 1) and keeps the file open and mapped. A restore on a machine
 * where no ROCm process ran since boot lacks them; CRIU would then fail to
 * open the file. This module gives them back: the file with the size, the
 * contents (the whole table, where AMD's plugin keeps only its first word),
 * the mode and the owner it had at the dump (CRIU checks size and mode),
 * the semaphore with its mode and owner and free (value 1): a checkpoint
 * is never taken inside libhsakmt's short critical section, whose holder
 * would be the frozen process itself. Files that exist are left alone:
 * other processes may be using them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hsakmt_shm.h"
#include "util.h"

#define KP_HSAKMT_SHM_PATH	"/dev/shm/hsakmt_shared_mem"
#define KP_HSAKMT_SEM_NAME	"hsakmt_semaphore"
#define KP_HSAKMT_SEM_PATH	"/dev/shm/sem." KP_HSAKMT_SEM_NAME

int kp_hsakmt_shm_save(KfdProcess *p, void **buf)
{
	size_t len, got = 0;
	struct stat st;
	ssize_t n;
	int fd, ret = 0;

	*buf = NULL;
	fd = open(KP_HSAKMT_SHM_PATH, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto out;
	}
	if (st.st_size > KP_HSAKMT_SHM_SIZE_MAX) {
		kp_warn("%s has %lld bytes, not libhsakmt's: not recorded",
			KP_HSAKMT_SHM_PATH, (long long)st.st_size);
		goto out;
	}
	len = st.st_size < KP_HSAKMT_SHM_MAX ? st.st_size : KP_HSAKMT_SHM_MAX;
	*buf = calloc(1, len ? len : 1);
	if (!*buf) {
		ret = -ENOMEM;
		goto out;
	}
	while (got < len) {
		n = pread(fd, (char *)*buf + got, len - got, got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* shorter now: keep zeros */
		got += n;
	}
	p->has_hsakmt_shm_size = true;
	p->hsakmt_shm_size = st.st_size;
	p->has_hsakmt_shm_mode = p->has_hsakmt_shm_uid = true;
	p->has_hsakmt_shm_gid = true;
	p->hsakmt_shm_mode = st.st_mode;
	p->hsakmt_shm_uid = st.st_uid;
	p->hsakmt_shm_gid = st.st_gid;
	if (!stat(KP_HSAKMT_SEM_PATH, &st) && S_ISREG(st.st_mode)) {
		p->has_hsakmt_sem_mode = p->has_hsakmt_sem_uid = true;
		p->has_hsakmt_sem_gid = true;
		p->hsakmt_sem_mode = st.st_mode;
		p->hsakmt_sem_uid = st.st_uid;
		p->hsakmt_sem_gid = st.st_gid;
	}
	p->has_hsakmt_shm = true;
	p->hsakmt_shm.len = len;
	p->hsakmt_shm.data = *buf;
out:
	close(fd);
	if (ret) {
		free(*buf);
		*buf = NULL;
	}
	return ret;
}

/* Give @fd the mode and owner a dump recorded, as far as they were. */
static int kp_hsakmt_attrs(int fd, bool has_mode, uint32_t mode,
			   bool has_owner, uint32_t uid, uint32_t gid)
{
	if (fchmod(fd, has_mode ? mode & 07777 : 0666))
		return -errno;
	if (has_owner && fchown(fd, uid, gid))
		return -errno;
	return 0;
}

static int kp_hsakmt_file_restore(const KfdProcess *p)
{
	size_t len = p->has_hsakmt_shm ? p->hsakmt_shm.len : 0, done = 0;
	ssize_t n;
	int fd, ret = 0;

	if (len > p->hsakmt_shm_size ||
	    p->hsakmt_shm_size > KP_HSAKMT_SHM_SIZE_MAX)
		return -EINVAL;
	fd = open(KP_HSAKMT_SHM_PATH,
		  O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0)
		return errno == EEXIST ? 0 : -errno;
	/* As it was, whatever the restorer's umask. */
	ret = kp_hsakmt_attrs(fd, p->has_hsakmt_shm_mode, p->hsakmt_shm_mode,
			      p->has_hsakmt_shm_uid && p->has_hsakmt_shm_gid,
			      p->hsakmt_shm_uid, p->hsakmt_shm_gid);
	if (ret)
		goto out;
	if (ftruncate(fd, p->hsakmt_shm_size)) {
		ret = -errno;
		goto out;
	}
	while (done < len) {
		n = pwrite(fd, p->hsakmt_shm.data + done, len - done, done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			goto out;
		}
		done += n;
	}
	kp_info("created %s (%llu bytes) as it was at the dump",
		KP_HSAKMT_SHM_PATH, (unsigned long long)p->hsakmt_shm_size);
out:
	close(fd);
	if (ret)
		unlink(KP_HSAKMT_SHM_PATH);
	return ret;
}

int kp_hsakmt_shm_restore(const KfdProcess *p)
{
	struct stat st;
	mode_t old;
	sem_t *sem;
	int fd, ret;

	if (!p->has_hsakmt_shm_size)
		return 0;
	ret = kp_hsakmt_file_restore(p);
	if (ret) {
		kp_err("cannot create %s: %s", KP_HSAKMT_SHM_PATH,
		       strerror(-ret));
		return ret;
	}
	if (!stat(KP_HSAKMT_SEM_PATH, &st))
		return 0;
	old = umask(0);
	sem = sem_open(KP_HSAKMT_SEM_NAME, O_CREAT, 0666, 1);
	umask(old);
	if (sem == SEM_FAILED) {
		ret = -errno;
		kp_err("cannot create %s: %s", KP_HSAKMT_SEM_PATH,
		       strerror(-ret));
		return ret;
	}
	sem_close(sem);
	fd = open(KP_HSAKMT_SEM_PATH, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		ret = -errno;
	} else {
		ret = kp_hsakmt_attrs(fd, p->has_hsakmt_sem_mode,
				      p->hsakmt_sem_mode,
				      p->has_hsakmt_sem_uid &&
				      p->has_hsakmt_sem_gid,
				      p->hsakmt_sem_uid, p->hsakmt_sem_gid);
		close(fd);
	}
	if (ret) {
		kp_err("cannot set the mode of %s: %s", KP_HSAKMT_SEM_PATH,
		       strerror(-ret));
		return ret;
	}
	kp_info("created %s", KP_HSAKMT_SEM_PATH);
	return 0;
}
