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
 *
 * /dev/shm is writable by everyone, so any user may have put anything
 * under these names. A dump records a file only if it is a regular file
 * (looked at without following links, opened without blocking: a FIFO
 * would hang the dump with the process frozen) that the dumped process
 * holds an fd of or maps (same device and inode); anything else is
 * warned about and left out, and the dump goes on. A restore creates
 * them exclusively and gives them the recorded owner, then the mode
 * without set-id or sticky bits.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include "hsakmt_shm.h"
#include "util.h"

#define KP_SHM_DIR	"/dev/shm/"

/* libhsakmt's names; the unit tests use their own (kp_hsakmt_test_names). */
static char kp_shm_path[128] = KP_SHM_DIR "hsakmt_shared_mem";
static char kp_sem_name[96] = "hsakmt_semaphore";
static char kp_sem_path[128] = KP_SHM_DIR "sem.hsakmt_semaphore";

void kp_hsakmt_test_names(const char *shm, const char *sem)
{
	snprintf(kp_shm_path, sizeof(kp_shm_path), KP_SHM_DIR "%s", shm);
	snprintf(kp_sem_name, sizeof(kp_sem_name), "%s", sem);
	snprintf(kp_sem_path, sizeof(kp_sem_path), KP_SHM_DIR "sem.%s", sem);
}

/* What an fd of another process is compared with. */
struct kp_fd_match {
	const struct stat *st;	/* the same file (device, inode) */
	int fd;			/* or the same open file as our @fd */
};

/* Is fd @n of process @pid (entry of @dfd, /proc/@pid/fd) what @m says? */
static bool kp_fd_matches(pid_t pid, int dfd, int n,
			  const struct kp_fd_match *m)
{
	struct stat fst;
	char name[16];

	if (!m->st)
		return !syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, m->fd, n);
	snprintf(name, sizeof(name), "%d", n);
	return !fstatat(dfd, name, &fst, 0) && fst.st_dev == m->st->st_dev &&
	       fst.st_ino == m->st->st_ino;
}

/* Has process @pid an fd that matches @m? From /proc (nothing opened). */
static bool kp_proc_has_fd(pid_t pid, const struct kp_fd_match *m)
{
	struct dirent *de;
	bool found = false;
	char path[64], *end;
	DIR *dir;
	long n;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	while (dir && !found && (de = readdir(dir))) {
		n = strtol(de->d_name, &end, 10);
		found = end != de->d_name && !*end && n >= 0 && n < INT32_MAX &&
			kp_fd_matches(pid, dirfd(dir), (int)n, m);
	}
	if (dir)
		closedir(dir);
	return found;
}

/*
 * Does process @pid hold an fd of, or map, the file @st describes?
 * Decided by device and inode, from /proc (nothing is opened).
 */
static bool kp_hsakmt_used(pid_t pid, const struct stat *st)
{
	const struct kp_fd_match m = { .st = st };
	unsigned int maj, min;
	unsigned long ino;
	char path[64], line[4096];
	bool used = kp_proc_has_fd(pid, &m);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = used ? NULL : fopen(path, "re");
	/* "start-end perms offset major:minor inode path" */
	while (f && !used && fgets(line, sizeof(line), f))
		used = sscanf(line, "%*s %*s %*s %x:%x %lu", &maj, &min,
			      &ino) == 3 &&
		       makedev(maj, min) == st->st_dev && ino == st->st_ino;
	if (f)
		fclose(f);
	return used;
}

/*
 * Open @path for reading if it is a regular file (no link, FIFO or
 * device: /dev/shm is writable by everyone) that @pid holds or maps.
 * An fd, or -1 when it is not to be recorded (warned about unless it is
 * absent or unused).
 */
static int kp_hsakmt_open(const char *path, pid_t pid, struct stat *st)
{
	const char *why = NULL;
	int fd;

	if (lstat(path, st)) {
		if (errno != ENOENT)
			kp_warn("cannot look at %s (%s): not recorded", path,
				strerror(errno));
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		kp_warn("%s is not a regular file (mode 0%o, owner %u): not recorded",
			path, (unsigned int)st->st_mode,
			(unsigned int)st->st_uid);
		return -1;
	}
	if (!kp_hsakmt_used(pid, st)) {
		kp_debug("pid %d neither holds nor maps %s: not recorded",
			 (int)pid, path);
		return -1;
	}
	/* What is there now must be what was looked at. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
			O_NOCTTY);
	if (fd < 0)
		why = strerror(errno);
	else if (fstat(fd, st) || !S_ISREG(st->st_mode) ||
		 !kp_hsakmt_used(pid, st))
		why = "replaced while it was looked at";
	if (!why)
		return fd;
	kp_warn("cannot read %s (%s): not recorded", path, why);
	if (fd >= 0)
		close(fd);
	return -1;
}

int kp_hsakmt_shm_save(KfdProcess *p, void **buf, pid_t pid, int kfd)
{
	const struct kp_fd_match holder = { .fd = kfd };
	size_t len, got = 0;
	struct stat st;
	ssize_t n;
	int fd;

	*buf = NULL;
	/*
	 * PROCESS_INFO gives the pid in the process's own pid namespace,
	 * which criu's /proc may give to another process: it must hold the
	 * dumped /dev/kfd file.
	 */
	if (!pid || !kp_proc_has_fd(pid, &holder)) {
		struct stat lst;

		if (!lstat(kp_shm_path, &lst))
			kp_warn("pid %d here is not the process dumped (another pid namespace?): %s not recorded",
				(int)pid, kp_shm_path);
		return 0;
	}
	fd = kp_hsakmt_open(kp_shm_path, pid, &st);
	if (fd < 0)
		return 0;
	if (st.st_size > KP_HSAKMT_SHM_SIZE_MAX) {
		kp_warn("%s has %lld bytes, not libhsakmt's: not recorded",
			kp_shm_path, (long long)st.st_size);
		close(fd);
		return 0;
	}
	len = st.st_size < KP_HSAKMT_SHM_MAX ? st.st_size : KP_HSAKMT_SHM_MAX;
	*buf = calloc(1, len ? len : 1);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < len) {
		n = pread(fd, (char *)*buf + got, len - got, got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* shorter now: keep zeros */
		got += n;
	}
	close(fd);
	p->has_hsakmt_shm_size = true;
	p->hsakmt_shm_size = st.st_size;
	p->has_hsakmt_shm_mode = p->has_hsakmt_shm_uid = true;
	p->has_hsakmt_shm_gid = true;
	p->hsakmt_shm_mode = st.st_mode;
	p->hsakmt_shm_uid = st.st_uid;
	p->hsakmt_shm_gid = st.st_gid;
	fd = kp_hsakmt_open(kp_sem_path, pid, &st);
	if (fd >= 0) {
		close(fd);
		p->has_hsakmt_sem_mode = p->has_hsakmt_sem_uid = true;
		p->has_hsakmt_sem_gid = true;
		p->hsakmt_sem_mode = st.st_mode;
		p->hsakmt_sem_uid = st.st_uid;
		p->hsakmt_sem_gid = st.st_gid;
	}
	p->has_hsakmt_shm = true;
	p->hsakmt_shm.len = len;
	p->hsakmt_shm.data = *buf;
	return 0;
}

/*
 * Give @fd, a file this restore just created, the owner and mode a dump
 * recorded: the owner first (a chown would clear set-id bits a chmod
 * gave), and never set-id or sticky bits, whatever the image says.
 */
static int kp_hsakmt_attrs(int fd, bool has_mode, uint32_t mode,
			   bool has_owner, uint32_t uid, uint32_t gid)
{
	if (has_owner && fchown(fd, uid, gid))
		return -errno;
	if (fchmod(fd, has_mode ? mode & 0777 : 0666))
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
	fd = open(kp_shm_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
			       O_NOFOLLOW | O_NONBLOCK, 0600);
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
	kp_info("created %s (%llu bytes) as it was at the dump", kp_shm_path,
		(unsigned long long)p->hsakmt_shm_size);
out:
	close(fd);
	if (ret)
		unlink(kp_shm_path);
	return ret;
}

/*
 * The semaphore, if no one has it: sem_open() creates it exclusively
 * (a file that appears meanwhile is someone else's and is left alone),
 * then it gets the recorded owner and mode.
 */
static int kp_hsakmt_sem_restore(const KfdProcess *p)
{
	struct stat st;
	sem_t *sem;
	int fd, ret;

	sem = sem_open(kp_sem_name, O_CREAT | O_EXCL, 0600, 1);
	if (sem == SEM_FAILED) {
		if (errno == EEXIST)
			return 0;
		ret = -errno;
		kp_err("cannot create %s: %s", kp_sem_path, strerror(-ret));
		return ret;
	}
	sem_close(sem);
	/* /dev/shm is sticky: no one else can replace our file. */
	fd = open(kp_sem_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
			       O_NOCTTY);
	if (fd < 0)
		ret = -errno;
	else if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
		 st.st_uid != geteuid())
		ret = -EEXIST;
	else
		ret = kp_hsakmt_attrs(fd, p->has_hsakmt_sem_mode,
				      p->hsakmt_sem_mode,
				      p->has_hsakmt_sem_uid &&
				      p->has_hsakmt_sem_gid,
				      p->hsakmt_sem_uid, p->hsakmt_sem_gid);
	if (fd >= 0)
		close(fd);
	if (ret) {
		kp_err("cannot set the mode of %s: %s", kp_sem_path,
		       strerror(-ret));
		return ret;
	}
	kp_info("created %s", kp_sem_path);
	return 0;
}

int kp_hsakmt_shm_restore(const KfdProcess *p)
{
	int ret;

	if (!p->has_hsakmt_shm_size)
		return 0;
	ret = kp_hsakmt_file_restore(p);
	if (ret) {
		kp_err("cannot create %s: %s", kp_shm_path, strerror(-ret));
		return ret;
	}
	return kp_hsakmt_sem_restore(p);
}
