// SPDX-License-Identifier: GPL-2.0
/*
 * Process isolation: a /dev/kfd fd works only in the process that opened
 * it (its threads included); any other process holding it, by fork or by
 * SCM_RIGHTS, gets EBADF. A child that opens /dev/kfd itself gets a KFD
 * process of its own, which sees none of the parent's handles, mappings
 * or doorbells.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kt_harness.h"
#include "kfdsim_test.h"

/*
 * `iso`: every render node bound; a 1 MiB VRAM BO at KT_VA(0) mapped on
 * every GPU, and a doorbell BO on the first GPU whose slice is mapped and
 * filled with a pattern. `base` is the counters after all that.
 */
FIXTURE(iso) {
	struct kt_env e;
	uint32_t ids[KT_MAX_GPUS];
	uint64_t vram, vram_off, db, db_off;
	void *db_map;
	struct kt_props base;
	char msg[1024];
};

FIXTURE_SETUP(iso)
{
	ASSERT_EQ(0, kt_env_open(&self->e, true));
	kt_env_ids(&self->e, self->ids);
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(0), KT_MIB,
			      KT_VRAM | KT_WRITABLE, &self->vram,
			      &self->vram_off));
	ASSERT_EQ(0, kt_map(self->e.kfd, self->vram, self->ids,
			    self->e.ngpus));
	ASSERT_EQ(0, kt_alloc(self->e.kfd, self->ids[0], KT_VA(1),
			      KT_DOORBELL_SIZE, KT_DOORBELL, &self->db,
			      &self->db_off));
	self->db_map = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE,
			    MAP_SHARED, self->e.kfd, (off_t)self->db_off);
	ASSERT_NE(MAP_FAILED, self->db_map);
	kt_fill(self->db_map, KT_DOORBELL_SIZE, 5);
	ASSERT_EQ(0, kt_counters(&self->base, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
}

FIXTURE_TEARDOWN(iso)
{
	if (self->db_map && self->db_map != MAP_FAILED)
		munmap(self->db_map, KT_DOORBELL_SIZE);
	kt_env_close(&self->e);
}

/* The parent's state is exactly as the fixture left it, and still works. */
static void parent_intact(struct __test_metadata *_metadata,
			  FIXTURE_DATA(iso) *self)
{
	struct kt_props now;
	char diff[512];
	int fd;

	ASSERT_EQ(0, kt_counters(&now, diff, sizeof(diff)));
	EXPECT_EQ(0, kt_counters_diff(&self->base, &now, diff, sizeof(diff)))
		TH_LOG("counters changed: %s", diff);
	EXPECT_TRUE(kt_check(self->db_map, KT_DOORBELL_SIZE, 5));
	EXPECT_EQ(0, kt_map(self->e.kfd, self->vram, self->ids, 1));
	EXPECT_EQ(0, kt_export(self->e.kfd, self->vram, O_RDWR | O_CLOEXEC,
			       &fd));
	close(fd);
	EXPECT_EQ(0, kt_free(self->e.kfd, self->vram));
}

/*
 * Every implemented ioctl, and mmap, on @kfd (someone else's fd) with
 * otherwise valid arguments: all must fail with EBADF.
 */
static int expect_ebadf_everywhere(FIXTURE_DATA(iso) *self, int kfd,
				   char *msg, size_t len)
{
	struct kfd_ioctl_get_version_args ver = { 0 };
	struct kfd_ioctl_get_clock_counters_args clk = {
		.gpu_id = self->ids[0],
	};
	struct kfd_ioctl_get_process_apertures_new_args ap = { 0 };
	uint64_t h, avail, off;
	int fd, ret;
	void *p;

	ret = kt_ioctl(kfd, AMDKFD_IOC_GET_VERSION, &ver);
	KT_CHECK(ret == -EBADF, "GET_VERSION: %d", ret);
	ret = kt_ioctl(kfd, AMDKFD_IOC_GET_CLOCK_COUNTERS, &clk);
	KT_CHECK(ret == -EBADF, "GET_CLOCK_COUNTERS: %d", ret);
	ret = kt_ioctl(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &ap);
	KT_CHECK(ret == -EBADF, "GET_PROCESS_APERTURES_NEW: %d", ret);
	ret = kt_acquire_vm(kfd, self->e.render[0], self->ids[0]);
	KT_CHECK(ret == -EBADF, "ACQUIRE_VM: %d", ret);
	ret = kt_alloc(kfd, self->ids[0], KT_VA(2), KT_MIB, KT_GTT, &h, NULL);
	KT_CHECK(ret == -EBADF, "ALLOC: %d", ret);
	ret = kt_map(kfd, self->vram, self->ids, 1);
	KT_CHECK(ret == -EBADF, "MAP: %d", ret);
	ret = kt_unmap(kfd, self->vram, self->ids, 1);
	KT_CHECK(ret == -EBADF, "UNMAP: %d", ret);
	ret = kt_available(kfd, self->ids[0], &avail);
	KT_CHECK(ret == -EBADF, "AVAILABLE_MEMORY: %d", ret);
	ret = kt_export(kfd, self->vram, O_RDWR, &fd);
	KT_CHECK(ret == -EBADF, "EXPORT_DMABUF: %d", ret);
	ret = kt_free(kfd, self->vram);
	KT_CHECK(ret == -EBADF, "FREE: %d", ret);

	off = self->db_off;
	p = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 kfd, (off_t)off);
	KT_CHECK(p == MAP_FAILED && errno == EBADF,
		 "doorbell mmap: %s", p == MAP_FAILED ? strerror(errno) :
		 "succeeded");
	return 0;
}

static int child_inherited_fd(void *arg, char *msg, size_t len)
{
	FIXTURE_DATA(iso) *self = arg;

	return expect_ebadf_everywhere(self, self->e.kfd, msg, len);
}

TEST_F(iso, fork_child_inherited_fd_ebadf)
{
	ASSERT_EQ(0, kt_run_child(child_inherited_fd, self, self->msg,
				  sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	parent_intact(_metadata, self);
}

/* The doorbell mapping is not inherited across fork. */
static int child_no_doorbell_mapping(void *arg, char *msg, size_t len)
{
	FIXTURE_DATA(iso) *self = arg;
	unsigned char vec;
	int ret;

	ret = mincore(self->db_map, KT_PAGE, &vec);
	KT_CHECK(ret < 0 && errno == ENOMEM,
		 "doorbell page still mapped in the child");
	return 0;
}

TEST_F(iso, fork_child_has_no_doorbell_mapping)
{
	ASSERT_EQ(0, kt_run_child(child_no_doorbell_mapping, self, self->msg,
				  sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	parent_intact(_metadata, self);
}

/* A child dropping its copies of the fds takes nothing from the parent. */
static int child_closes_fds(void *arg, char *msg, size_t len)
{
	FIXTURE_DATA(iso) *self = arg;

	kt_env_close(&self->e);
	return 0;
}

TEST_F(iso, fork_child_closing_fds_keeps_parent)
{
	ASSERT_EQ(0, kt_run_child(child_closes_fds, self, self->msg,
				  sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	parent_intact(_metadata, self);
}

/*
 * A child opening /dev/kfd gets its own process: the parent's handles mean
 * nothing there, and its VA space is empty.
 */
static int child_own_process(void *arg, char *msg, size_t len)
{
	FIXTURE_DATA(iso) *self = arg;
	struct kfd_ioctl_get_version_args ver = { 0 };
	struct kt_props c;
	struct kt_env mine;
	uint64_t h;
	int fd, ret;

	ret = kt_env_open(&mine, false);
	KT_CHECK(!ret, "open: %d", ret);
	ret = kt_counters(&c, msg, len);
	if (ret)
		return ret;	/* msg says why */
	KT_CHECK(kt_counter(&c, "processes") ==
		 kt_counter(&self->base, "processes") + 1,
		 "processes %lld, parent saw %lld", kt_counter(&c, "processes"),
		 kt_counter(&self->base, "processes"));
	ret = kt_ioctl(mine.kfd, AMDKFD_IOC_GET_VERSION, &ver);
	KT_CHECK(!ret, "GET_VERSION: %d", ret);

	ret = kt_free(mine.kfd, self->vram);
	KT_CHECK(ret == -EINVAL, "FREE of the parent's handle: %d", ret);
	ret = kt_free(mine.kfd, self->db);
	KT_CHECK(ret == -EINVAL, "FREE of the parent's doorbell: %d", ret);
	ret = kt_map(mine.kfd, self->vram, self->ids, 1);
	KT_CHECK(ret == -EINVAL || ret == -ENODEV,
		 "MAP of the parent's handle: %d", ret);
	ret = kt_export(mine.kfd, self->vram, O_RDWR, &fd);
	KT_CHECK(ret == -EINVAL, "EXPORT of the parent's handle: %d", ret);

	ret = kt_acquire_vm(mine.kfd, mine.render[0], self->ids[0]);
	KT_CHECK(!ret, "ACQUIRE_VM: %d", ret);
	ret = kt_map(mine.kfd, self->vram, self->ids, 1);
	KT_CHECK(ret == -EINVAL, "MAP of the parent's handle: %d", ret);
	/* The parent's VA is free here. */
	ret = kt_alloc(mine.kfd, self->ids[0], KT_VA(0), KT_MIB,
		       KT_VRAM | KT_WRITABLE, &h, NULL);
	KT_CHECK(!ret, "ALLOC at the parent's VA: %d", ret);
	kt_env_close(&mine);
	return 0;
}

TEST_F(iso, child_own_kfd_is_separate_process)
{
	ASSERT_EQ(0, kt_run_child(child_own_process, self, self->msg,
				  sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	parent_intact(_metadata, self);
}

/*
 * As upstream, a render fd already bound by one process cannot be bound
 * by another (here: the child's own KFD process, with the fd it inherited).
 */
static int child_acquire_parents_render_fd(void *arg, char *msg, size_t len)
{
	FIXTURE_DATA(iso) *self = arg;
	int kfd, ret;

	kfd = kt_open_kfd();
	KT_CHECK(kfd >= 0, "open /dev/kfd: %d", kfd);
	ret = kt_acquire_vm(kfd, self->e.render[0], self->ids[0]);
	KT_CHECK(ret == -EINVAL, "ACQUIRE_VM of the parent's render fd: %d",
		 ret);
	close(kfd);
	return 0;
}

TEST_F(iso, render_fd_bound_by_other_process)
{
	ASSERT_EQ(0, kt_run_child(child_acquire_parents_render_fd, self,
				  self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	parent_intact(_metadata, self);
}

/* The parent's BO cannot be mapped through a render fd of the child's. */
static int child_map_parents_bo(void *arg, char *msg, size_t len)
{
	FIXTURE_DATA(iso) *self = arg;
	struct kt_env mine;
	void *p;
	int ret;

	ret = kt_env_open(&mine, true);
	KT_CHECK(!ret, "open: %d", ret);
	p = mmap(NULL, KT_MIB, PROT_READ | PROT_WRITE, MAP_SHARED,
		 mine.render[0], (off_t)self->vram_off);
	KT_CHECK(p == MAP_FAILED && errno == EACCES,
		 "mmap of the parent's BO: %s",
		 p == MAP_FAILED ? strerror(errno) : "succeeded");
	kt_env_close(&mine);
	return 0;
}

TEST_F(iso, child_cannot_map_parents_bo)
{
	ASSERT_EQ(0, kt_run_child(child_map_parents_bo, self, self->msg,
				  sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	parent_intact(_metadata, self);
}

/* The child's doorbell slice is its own: zeroed, not the parent's. */
static int child_doorbells(void *arg, char *msg, size_t len)
{
	FIXTURE_DATA(iso) *self = arg;
	struct kt_env mine;
	uint64_t h, off;
	void *p;
	int ret;

	ret = kt_env_open(&mine, true);
	KT_CHECK(!ret, "open: %d", ret);
	ret = kt_alloc(mine.kfd, self->ids[0], KT_VA(1), KT_DOORBELL_SIZE,
		       KT_DOORBELL, &h, &off);
	KT_CHECK(!ret, "doorbell ALLOC: %d", ret);
	KT_CHECK(off == self->db_off, "doorbell offset 0x%llx, parent 0x%llx",
		 (unsigned long long)off, (unsigned long long)self->db_off);
	p = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 mine.kfd, (off_t)off);
	KT_CHECK(p != MAP_FAILED, "doorbell mmap: %s", strerror(errno));
	KT_CHECK(kt_is_zero(p, KT_DOORBELL_SIZE),
		 "the child's doorbells are not zeroed (parent's data?)");
	kt_fill(p, KT_DOORBELL_SIZE, 6);
	munmap(p, KT_DOORBELL_SIZE);
	kt_env_close(&mine);
	return 0;
}

TEST_F(iso, child_doorbells_are_its_own)
{
	ASSERT_EQ(0, kt_run_child(child_doorbells, self, self->msg,
				  sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	parent_intact(_metadata, self);
}

/* Threads share their process's KFD state and may use its fd. */
struct thread_arg {
	FIXTURE_DATA(iso) *self;
	int ret;
	char what[64];
};

static void *thread_fn(void *p)
{
	struct thread_arg *t = p;
	FIXTURE_DATA(iso) *self = t->self;
	struct kfd_ioctl_get_version_args ver = { 0 };
	uint64_t h;

	snprintf(t->what, sizeof(t->what), "GET_VERSION");
	t->ret = kt_ioctl(self->e.kfd, AMDKFD_IOC_GET_VERSION, &ver);
	if (t->ret)
		return NULL;
	snprintf(t->what, sizeof(t->what), "ALLOC");
	t->ret = kt_alloc(self->e.kfd, self->ids[0], KT_VA(2), KT_MIB,
			  KT_GTT, &h, NULL);
	if (t->ret)
		return NULL;
	snprintf(t->what, sizeof(t->what), "MAP");
	t->ret = kt_map(self->e.kfd, h, self->ids, 1);
	if (t->ret)
		return NULL;
	snprintf(t->what, sizeof(t->what), "FREE");
	t->ret = kt_free(self->e.kfd, h);
	return NULL;
}

TEST_F(iso, thread_uses_process_fd)
{
	struct thread_arg t = { .self = self };
	pthread_t th;

	ASSERT_EQ(0, pthread_create(&th, NULL, thread_fn, &t));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, t.ret) TH_LOG("%s failed in the thread", t.what);
	parent_intact(_metadata, self);
}

/* A second open of /dev/kfd in the same process is the same KFD process. */
TEST_F(iso, second_open_is_same_process)
{
	struct kt_props now;
	int fd2, other;

	fd2 = kt_open_kfd();
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, kt_counters(&now, self->msg, sizeof(self->msg)));
	EXPECT_EQ(kt_counter(&self->base, "processes"),
		  kt_counter(&now, "processes"));
	EXPECT_EQ(kt_counter(&self->base, "pdds"), kt_counter(&now, "pdds"));
	/* Same binding: acquiring the bound fd is a no-op, another is busy. */
	EXPECT_EQ(0, kt_acquire_vm(fd2, self->e.render[0], self->ids[0]));
	other = kt_open_render(self->e.gpu[0].render_minor);
	ASSERT_GE(other, 0);
	EXPECT_EQ(-EBUSY, kt_acquire_vm(fd2, other, self->ids[0]));
	close(other);
	close(fd2);
	parent_intact(_metadata, self);
	/* The handle is the same object through either fd. */
	fd2 = kt_open_kfd();
	ASSERT_GE(fd2, 0);
	EXPECT_EQ(0, kt_free(fd2, self->db));
	EXPECT_EQ(-EINVAL, kt_free(self->e.kfd, self->db));
	close(fd2);
}

/*
 * SCM_RIGHTS: a process that never had the fd receives it over a unix
 * socket and may not use it. The receiver is forked before /dev/kfd is
 * opened, so it holds the file only through the message.
 */
TEST(scm_rights_fd_ebadf)
{
	int sv[2], res[2], status;
	char msg[512] = "";
	struct kt_env e;
	uint64_t info[2];	/* handle and mmap offset of a doorbell BO */
	ssize_t n;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(0, pipe2(res, O_CLOEXEC));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct kfd_ioctl_get_version_args ver = { 0 };
		uint64_t avail;
		int kfd, ret;
		void *p;

		close(sv[0]);
		close(res[0]);
		kfd = kt_recv_fd(sv[1]);
		if (kfd < 0) {
			snprintf(msg, sizeof(msg), "recv: %d", kfd);
		} else if (read(sv[1], info, sizeof(info)) != sizeof(info)) {
			snprintf(msg, sizeof(msg), "short read of the handle");
		} else if ((ret = kt_ioctl(kfd, AMDKFD_IOC_GET_VERSION, &ver)) !=
			   -EBADF) {
			snprintf(msg, sizeof(msg), "GET_VERSION: %d", ret);
		} else if ((ret = kt_free(kfd, info[0])) != -EBADF) {
			snprintf(msg, sizeof(msg), "FREE: %d", ret);
		} else if ((ret = kt_available(kfd, 1, &avail)) != -EBADF) {
			snprintf(msg, sizeof(msg), "AVAILABLE_MEMORY: %d", ret);
		} else {
			p = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ, MAP_SHARED,
				 kfd, (off_t)info[1]);
			if (p != MAP_FAILED || errno != EBADF)
				snprintf(msg, sizeof(msg), "doorbell mmap: %s",
					 p == MAP_FAILED ? strerror(errno) :
					 "succeeded");
		}
		if (write(res[1], msg, strlen(msg)) < 0)
			_exit(2);
		_exit(msg[0] ? 1 : 0);
	}
	close(sv[1]);
	close(res[1]);
	ASSERT_EQ(0, kt_env_open(&e, true));
	ASSERT_EQ(0, kt_alloc(e.kfd, e.gpu[0].gpu_id, KT_VA(0),
			      KT_DOORBELL_SIZE, KT_DOORBELL, &info[0],
			      &info[1]));
	ASSERT_EQ(0, kt_send_fd(sv[0], e.kfd));
	ASSERT_EQ(sizeof(info), write(sv[0], info, sizeof(info)));
	n = read(res[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child: %s (status 0x%x)", msg, status);
	/* Still fine for its owner. */
	EXPECT_EQ(0, kt_free(e.kfd, info[0]));
	kt_env_close(&e);
	close(sv[0]);
	close(res[0]);
}

TEST_HARNESS_MAIN
