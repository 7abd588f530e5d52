// SPDX-License-Identifier: GPL-2.0
/*
 * Teardown: whatever a process holds in the driver goes away when it exits,
 * is killed, or closes its fds, without any FREE or UNMAP. The debugfs
 * counters (processes, pdds, bos, gem_objects, pinned_pages, vm_ptes,
 * doorbell_slices, gpuN_vram_used) must return to what they were before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kt_harness.h"
#include "kfdsim_test.h"

#define BO_SIZE		KT_MIB
#define NDOMAINS	4

/* What one process holds: a BO of each kind per GPU, mapped everywhere. */
struct hold {
	struct kt_env e;
	uint64_t h[KT_MAX_GPUS][NDOMAINS];
	void *user[KT_MAX_GPUS];
	void *cpu[KT_MAX_GPUS][NDOMAINS];	/* CPU mappings, or NULL */
	int dmabuf;
};

static const uint32_t domains[NDOMAINS] = {
	KT_VRAM, KT_GTT, KT_USERPTR, KT_DOORBELL,
};

static uint64_t domain_size(int d)
{
	return domains[d] == KT_DOORBELL ? KT_DOORBELL_SIZE : BO_SIZE;
}

/*
 * Allocate VRAM, GTT, userptr and doorbell BOs on every GPU, map each on
 * every GPU, export the first VRAM BO; with @cpu_maps also mmap the VRAM,
 * GTT and doorbell BOs and the dma-buf. Returns 0 or -1 with @msg set.
 */
static int grab(struct hold *g, bool cpu_maps, char *msg, size_t len)
{
	uint32_t ids[KT_MAX_GPUS];
	int i, d, ret, fd;

	memset(g, 0, sizeof(*g));
	g->dmabuf = -1;
	ret = kt_env_open(&g->e, true);
	KT_CHECK(!ret, "open: %d", ret);
	kt_env_ids(&g->e, ids);
	for (i = 0; i < g->e.ngpus; i++) {
		g->user[i] = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		KT_CHECK(g->user[i] != MAP_FAILED, "mmap: %s", strerror(errno));
		for (d = 0; d < NDOMAINS; d++) {
			uint64_t off = (uintptr_t)g->user[i];

			ret = kt_alloc(g->e.kfd, ids[i],
				       KT_VA(i * NDOMAINS + d), domain_size(d),
				       domains[d] | KT_WRITABLE, &g->h[i][d],
				       &off);
			KT_CHECK(!ret, "ALLOC gpu %d domain 0x%x: %d", i,
				 domains[d], ret);
			ret = kt_map(g->e.kfd, g->h[i][d], ids, g->e.ngpus);
			KT_CHECK(!ret, "MAP: %d", ret);
			if (!cpu_maps || domains[d] == KT_USERPTR)
				continue;
			fd = domains[d] == KT_DOORBELL ? g->e.kfd :
			     g->e.render[i];
			g->cpu[i][d] = mmap(NULL, domain_size(d),
					    PROT_READ | PROT_WRITE, MAP_SHARED,
					    fd, (off_t)off);
			KT_CHECK(g->cpu[i][d] != MAP_FAILED, "mmap: %s",
				 strerror(errno));
			memset(g->cpu[i][d], 0x5a, domain_size(d));
		}
	}
	ret = kt_export(g->e.kfd, g->h[0][0], O_RDWR | O_CLOEXEC, &g->dmabuf);
	KT_CHECK(!ret, "EXPORT: %d", ret);
	return 0;
}

static void unmap_all(struct hold *g)
{
	int i, d;

	for (i = 0; i < g->e.ngpus; i++)
		for (d = 0; d < NDOMAINS; d++)
			if (g->cpu[i][d] && g->cpu[i][d] != MAP_FAILED)
				munmap(g->cpu[i][d], domain_size(d));
}

/* The counters show @g's holdings on top of @base. */
static int check_held(const struct kt_props *base, int ngpus, char *msg,
		      size_t len)
{
	const long long pages = BO_SIZE / KT_PAGE;
	const long long bo_pages = 3 * pages + KT_DOORBELL_SIZE / KT_PAGE;
	struct kt_props now;
	int ret;

	ret = kt_counters(&now, msg, len);
	if (ret)
		return ret;
#define HELD(name, n)							\
	KT_CHECK(kt_counter(&now, name) == kt_counter(base, name) + (n), \
		 "%s: %lld, expected %lld + %lld", name,		\
		 kt_counter(&now, name), kt_counter(base, name),	\
		 (long long)(n))
	HELD("processes", 1);
	HELD("pdds", ngpus);
	HELD("bos", NDOMAINS * ngpus);
	HELD("gem_objects", 3 * ngpus);
	HELD("pinned_pages", pages * ngpus);
	HELD("vm_ptes", bo_pages * ngpus * ngpus);
	HELD("doorbell_slices", ngpus);
	HELD("gpu0_vram_used", BO_SIZE);
#undef HELD
	return 0;
}

FIXTURE(td) {
	struct kt_props base;
	int ngpus;
	char msg[1024];
};

FIXTURE_SETUP(td)
{
	struct kt_gpu gpus[KT_MAX_GPUS];

	self->ngpus = kt_gpus(gpus, KT_MAX_GPUS);
	ASSERT_GT(self->ngpus, 0);
	ASSERT_EQ(0, kt_counters(&self->base, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
}

FIXTURE_TEARDOWN(td)
{
}

/* Every counter is back where it was when the test started. */
static void at_baseline(struct __test_metadata *_metadata,
			FIXTURE_DATA(td) *self)
{
	struct kt_props now;
	char diff[512];

	ASSERT_EQ(0, kt_counters(&now, diff, sizeof(diff)));
	EXPECT_EQ(0, kt_counters_diff(&self->base, &now, diff, sizeof(diff)))
		TH_LOG("not back to baseline: %s", diff);
}

struct child_arg {
	FIXTURE_DATA(td) *self;
	bool cpu_maps;
};

/* Grab everything, check it shows, and exit without releasing anything. */
static int child_grab_and_exit(void *p, char *msg, size_t len)
{
	struct child_arg *a = p;
	struct hold g;

	if (grab(&g, a->cpu_maps, msg, len))
		return -1;
	return check_held(&a->self->base, a->self->ngpus, msg, len);
}

TEST_F(td, child_exit_without_free)
{
	struct child_arg a = { .self = self, .cpu_maps = false };

	ASSERT_EQ(0, kt_run_child(child_grab_and_exit, &a, self->msg,
				  sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	at_baseline(_metadata, self);
}

TEST_F(td, child_exit_with_cpu_mappings)
{
	struct child_arg a = { .self = self, .cpu_maps = true };

	ASSERT_EQ(0, kt_run_child(child_grab_and_exit, &a, self->msg,
				  sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	at_baseline(_metadata, self);
}

/* SIGKILL while holding everything, CPU mappings included. */
TEST_F(td, child_killed)
{
	int ready[2], status;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct hold g;

		close(ready[0]);
		if (grab(&g, true, self->msg, sizeof(self->msg)) ||
		    check_held(&self->base, self->ngpus, self->msg,
			       sizeof(self->msg)))
			c = 'F';
		else
			c = 'R';
		if (write(ready[1], &c, 1) != 1 || c != 'R') {
			fprintf(stderr, "# child: %s\n", self->msg);
			_exit(1);
		}
		for (;;)
			pause();
	}
	close(ready[1]);
	EXPECT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	EXPECT_EQ('R', c);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	at_baseline(_metadata, self);
}

/* Without CPU mappings, closing the fds alone releases everything. */
static void close_fds(struct __test_metadata *_metadata,
		      FIXTURE_DATA(td) *self, bool kfd_first)
{
	struct hold g;
	int i;

	ASSERT_EQ(0, grab(&g, false, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, check_held(&self->base, self->ngpus, self->msg,
				sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	close(g.dmabuf);
	if (kfd_first)
		close(g.e.kfd);
	for (i = 0; i < g.e.ngpus; i++)
		close(g.e.render[i]);
	if (!kfd_first)
		close(g.e.kfd);
	at_baseline(_metadata, self);
}

TEST_F(td, close_kfd_then_render_fds)
{
	close_fds(_metadata, self, true);
}

TEST_F(td, close_render_then_kfd_fds)
{
	close_fds(_metadata, self, false);
}

/* With CPU mappings, everything goes once the fds and the mappings do. */
TEST_F(td, close_fds_and_unmap)
{
	struct hold g;
	int i;

	ASSERT_EQ(0, grab(&g, true, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	close(g.dmabuf);
	close(g.e.kfd);
	for (i = 0; i < g.e.ngpus; i++)
		close(g.e.render[i]);
	unmap_all(&g);
	at_baseline(_metadata, self);
}

/*
 * A dma-buf sent to another process outlives its exporter: after the
 * exporter exits only the buffer remains, with its contents, until the
 * receiver lets go of it.
 */
static int child_export_and_send(void *p, char *msg, size_t len)
{
	int sock = *(int *)p;
	struct kt_env e;
	uint64_t h, off;
	void *cpu;
	int ret, fd;

	ret = kt_env_open(&e, true);
	KT_CHECK(!ret, "open: %d", ret);
	ret = kt_alloc(e.kfd, e.gpu[0].gpu_id, KT_VA(0), BO_SIZE,
		       KT_VRAM | KT_WRITABLE, &h, &off);
	KT_CHECK(!ret, "ALLOC: %d", ret);
	cpu = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   e.render[0], (off_t)off);
	KT_CHECK(cpu != MAP_FAILED, "mmap: %s", strerror(errno));
	kt_fill(cpu, BO_SIZE, 77);
	ret = kt_export(e.kfd, h, O_RDWR | O_CLOEXEC, &fd);
	KT_CHECK(!ret, "EXPORT: %d", ret);
	ret = kt_send_fd(sock, fd);
	KT_CHECK(!ret, "send: %d", ret);
	return 0;
}

TEST_F(td, dmabuf_outlives_exporter)
{
	struct kt_props now;
	int sv[2], fd;
	void *p;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(0, kt_run_child(child_export_and_send, &sv[1], self->msg,
				  sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	fd = kt_recv_fd(sv[0]);
	close(sv[0]);
	close(sv[1]);
	ASSERT_GE(fd, 0);

	ASSERT_EQ(0, kt_counters(&now, self->msg, sizeof(self->msg)));
	EXPECT_EQ(kt_counter(&self->base, "processes"),
		  kt_counter(&now, "processes"));
	EXPECT_EQ(kt_counter(&self->base, "bos"), kt_counter(&now, "bos"));
	EXPECT_EQ(kt_counter(&self->base, "vm_ptes"),
		  kt_counter(&now, "vm_ptes"));
	EXPECT_EQ(kt_counter(&self->base, "gem_objects") + 1,
		  kt_counter(&now, "gem_objects"));
	EXPECT_EQ(kt_counter(&self->base, "gpu0_vram_used") + (long long)BO_SIZE,
		  kt_counter(&now, "gpu0_vram_used"));

	p = mmap(NULL, BO_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("dma-buf mmap: %s", strerror(errno));
	EXPECT_TRUE(kt_check(p, BO_SIZE, 77));
	munmap(p, BO_SIZE);
	close(fd);
	at_baseline(_metadata, self);
}

/* Several processes holding everything at once, then all exiting. */
TEST_F_TIMEOUT(td, concurrent_processes, 120)
{
	int go[2], ready[2], status, i, failed = 0;
	struct kt_props now;
	pid_t pids[4];
	char c;

	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i]) {
			struct hold g;

			close(go[1]);
			close(ready[0]);
			c = grab(&g, true, self->msg, sizeof(self->msg)) ?
			    'F' : 'R';
			if (c != 'R')
				fprintf(stderr, "# child %d: %s\n", i,
					self->msg);
			if (write(ready[1], &c, 1) != 1)
				_exit(2);
			/* Hold on until the parent closes the pipe. */
			if (read(go[0], &c, 1) < 0)
				_exit(2);
			_exit(0);
		}
	}
	close(go[0]);
	close(ready[1]);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(1, read(ready[0], &c, 1));
		EXPECT_EQ('R', c);
	}
	close(ready[0]);
	ASSERT_EQ(0, kt_counters(&now, self->msg, sizeof(self->msg)));
	EXPECT_EQ(kt_counter(&self->base, "processes") + 4,
		  kt_counter(&now, "processes"));
	close(go[1]);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		failed += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	EXPECT_EQ(0, failed);
	at_baseline(_metadata, self);
}

/* Open, use and close many times in one process: no slow leak. */
TEST_F_TIMEOUT(td, repeated_open_close, 120)
{
	struct hold g;
	int round, i;

	for (round = 0; round < 10; round++) {
		ASSERT_EQ(0, grab(&g, true, self->msg, sizeof(self->msg)))
			TH_LOG("round %d: %s", round, self->msg);
		close(g.dmabuf);
		close(g.e.kfd);
		for (i = 0; i < g.e.ngpus; i++) {
			close(g.e.render[i]);
			munmap(g.user[i], BO_SIZE);
		}
		unmap_all(&g);
	}
	at_baseline(_metadata, self);
}

TEST_HARNESS_MAIN
