// SPDX-License-Identifier: GPL-2.0
/*
 * CRIU at scale (opt-in: `make scale`, not part of `make check`). Each test
 * needs kfdsim loaded with its own parameters, so the binary runs once per
 * load and KFDSIM_SCALE names the tests to run (the others skip):
 *
 *  - bos: 100, 1,000 and 10,000 BOs (4 KiB, VRAM and GTT alternating,
 *    GPU-mapped) in one process through PROCESS_INFO, CHECKPOINT and
 *    RESTORE; prints each step's time and its cost per BO, and fails if
 *    CHECKPOINT's or RESTORE's cost per BO at 10,000 is more than 3x the
 *    larger of its costs at 100 and 1,000 (quadratic growth is 10x);
 *  - short: RESTORE onto a node whose VRAM is held by the still running
 *    original: ENOMEM, no fd and no driver object left (debugfs counters),
 *    and the same image restores once the VRAM is free;
 *  - gpus: 8 GPUs (num_gpus=8), an AQL queue and a VRAM BO on each,
 *    restored onto the GPUs in reverse order; every BO keeps its contents
 *    and every queue runs a kernel afterwards;
 *  - big: one VRAM BO of KFDSIM_SCALE_BIG_MB MiB (default: vram_mb - 64)
 *    checkpointed and restored, its 64-bit FNV-1a checksum the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kt_harness.h"
#include "gs_snap.h"

#define SC_BO_SIZE	KT_PAGE
#define SC_MAX_BOS	10000
#define SC_SEED(i)	(0x9000u + (uint32_t)(i))
#define SC_WAIT_MS	300000

#define C_VERIFY	'V'
#define C_RUN		'X'

#define FAIL(...) do {					\
	snprintf(msg, len, __VA_ARGS__);		\
	return -1;					\
} while (0)

static bool sc_wanted(const char *name)
{
	const char *list = getenv("KFDSIM_SCALE");
	size_t n = strlen(name);
	const char *p;

	for (p = list; p && (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

#define SC_NEED(name) do {						\
	if (!sc_wanted(name))						\
		SKIP(return, "not in KFDSIM_SCALE (make scale runs it)"); \
} while (0)

/* The index of the BO at @va among the scale BOs (VAs are evenly spaced). */
static long sc_index(const struct gs_state *st, uint64_t va)
{
	uint64_t first = st->val[1], step = st->val[2];

	if (va < first || (va - first) % step)
		return -1;
	return (long)((va - first) / step);
}

/* ---- bos ---- */

static int bos_build(struct gs_shared *sh, char *msg, size_t len)
{
	struct gs_state *st = &sh->st;
	struct kg_rt *rt = &st->rt;
	uint64_t n = st->val[0], i, va, h, off;
	uint32_t flags;
	void *p;
	int ret;

	ret = kg_open(rt);
	if (ret)
		FAIL("kg_open: %s", strerror(-ret));
	st->val[1] = KG_VA_BASE;
	st->val[2] = 2 * KT_PAGE;
	for (i = 0; i < n; i++) {
		va = st->val[1] + i * st->val[2];
		flags = (i & 1 ? KT_GTT : KT_VRAM) | KT_WRITABLE;
		off = 0;
		ret = kt_alloc(rt->e.kfd, rt->ids[i % rt->e.ngpus], va,
			       SC_BO_SIZE, flags, &h, &off);
		if (!ret)
			ret = kt_map(rt->e.kfd, h, &rt->ids[i % rt->e.ngpus],
				     1);
		if (ret)
			FAIL("BO %llu: %s", (unsigned long long)i,
			     strerror(-ret));
		p = mmap(NULL, SC_BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 rt->e.render[i % rt->e.ngpus], (off_t)off);
		if (p == MAP_FAILED)
			FAIL("mmap BO %llu: %s", (unsigned long long)i,
			     strerror(errno));
		kt_fill(p, SC_BO_SIZE, SC_SEED(i));
		munmap(p, SC_BO_SIZE);
	}
	return 0;
}

/* In the restored process: every BO at its new offset holds its seed. */
static int bos_verify(struct gs_shared *sh, char *msg, size_t len)
{
	const struct kfd_criu_bo_bucket *b = gs_restored_buckets();
	struct gs_state *st = &sh->st;
	uint32_t i, seen = 0;
	long idx;
	int g;
	void *p;

	for (i = 0; b && i < st->val[3]; i++) {
		idx = sc_index(st, b[i].addr);
		for (g = 0; g < st->rt.e.ngpus; g++)
			if (st->rt.ids[g] == b[i].gpu_id)
				break;
		if (idx < 0 || g == st->rt.e.ngpus)
			FAIL("bucket %u: va 0x%llx gpu_id %u", i,
			     (unsigned long long)b[i].addr, b[i].gpu_id);
		p = mmap(NULL, SC_BO_SIZE, PROT_READ, MAP_SHARED,
			 st->rt.e.render[g], (off_t)b[i].restored_offset);
		if (p == MAP_FAILED)
			FAIL("mmap BO %ld: %s", idx, strerror(errno));
		if (!kt_check(p, SC_BO_SIZE, SC_SEED(idx)))
			FAIL("BO %ld lost its contents", idx);
		munmap(p, SC_BO_SIZE);
		seen++;
	}
	if (seen != st->val[0])
		FAIL("%u BOs restored, %llu made", seen,
		     (unsigned long long)st->val[0]);
	return 0;
}

static int bos_fn(struct gs_shared *sh, char cmd, char *msg, size_t len)
{
	if (!cmd)
		return bos_build(sh, msg, len);
	if (cmd == C_VERIFY)
		return bos_verify(sh, msg, len);
	FAIL("bad command %c", cmd);
}

/* ---- 8 GPUs ---- */

static int gpus_build(struct gs_shared *sh, char *msg, size_t len)
{
	struct gs_state *st = &sh->st;
	struct kg_rt *rt = &st->rt;
	int g, ret;

	ret = kg_open(rt);
	if (ret)
		FAIL("kg_open: %s", strerror(-ret));
	if (rt->e.ngpus != GS_MAX_QUEUES)
		FAIL("%d GPUs, want %d", rt->e.ngpus, GS_MAX_QUEUES);
	for (g = 0; g < rt->e.ngpus; g++) {
		if (kg_queue_new(rt, g, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 4096,
				 &st->q[g]) ||
		    kg_bo_new(rt, g, 64 * 1024, KT_VRAM | KT_WRITABLE,
			      KG_MAP_OWN, &st->bo[g]) ||
		    kg_signal_new(rt, 1, &st->sig[g]))
			FAIL("GPU %d: queue, BO or signal creation failed", g);
		kt_fill(st->bo[g].cpu, 64 * 1024, SC_SEED(g));
	}
	st->nq = st->nbo = st->nsig = (uint32_t)rt->e.ngpus;
	return 0;
}

static int gpus_run(struct gs_shared *sh, char *msg, size_t len)
{
	struct gs_state *st = &sh->st;
	struct kfdsim_args_fill fa = { 0 };
	uint32_t *p, i;
	uint32_t g;

	for (g = 0; g < st->nq; g++) {
		if (!kt_check(st->bo[g].cpu, 64 * 1024, SC_SEED(g)))
			FAIL("GPU %u: the BO lost its contents", g);
		fa.dst = st->bo[g].va;
		fa.value = 0x100 + g;
		if (kg_dispatch(&st->q[g], KFDSIM_KERNEL_FILL_U32, &fa,
				sizeof(fa), 16 * 1024, 256, st->sig[g].va))
			FAIL("GPU %u: dispatch failed", g);
	}
	for (g = 0; g < st->nq; g++) {
		if (kg_signal_wait(&st->sig[g], 0, SC_WAIT_MS))
			FAIL("GPU %u: the dispatch does not complete", g);
		p = st->bo[g].cpu;
		for (i = 0; i < 16 * 1024; i++)
			if (p[i] != 0x100 + g)
				FAIL("GPU %u: x[%u] = 0x%x", g, i, p[i]);
	}
	return 0;
}

static int gpus_fn(struct gs_shared *sh, char cmd, char *msg, size_t len)
{
	if (!cmd)
		return gpus_build(sh, msg, len);
	if (cmd == C_RUN)
		return gpus_run(sh, msg, len);
	FAIL("bad command %c", cmd);
}

/* ---- one big BO, and VRAM held by the original ---- */

/* val[0]: size; a few small BOs around it, so a failed RESTORE unwinds. */
static int big_build(struct gs_shared *sh, char *msg, size_t len)
{
	struct gs_state *st = &sh->st;
	struct kg_rt *rt = &st->rt;
	uint64_t t;
	int ret;

	ret = kg_open(rt);
	if (ret)
		FAIL("kg_open: %s", strerror(-ret));
	if (kg_queue_new(rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 4096,
			 &st->q[0]) ||
	    kg_bo_new(rt, 0, 64 * 1024, KT_VRAM | KT_WRITABLE, KG_MAP_OWN,
		      &st->bo[1]))
		FAIL("queue or small BO creation failed");
	ret = kg_bo_new(rt, 0, st->val[0], KT_VRAM | KT_WRITABLE, KG_MAP_OWN,
			&st->bo[0]);
	if (ret)
		FAIL("ALLOC of a %llu MiB VRAM BO: %s",
		     (unsigned long long)(st->val[0] >> 20), strerror(-ret));
	if (kg_bo_new(rt, 0, 64 * 1024, KT_GTT | KT_WRITABLE, KG_MAP_OWN,
		      &st->bo[2]))
		FAIL("small BO creation failed");
	st->nq = 1;
	st->nbo = 3;
	t = gs_ns();
	kt_fill(st->bo[0].cpu, st->val[0], SC_SEED(0));
	kt_fill(st->bo[1].cpu, 64 * 1024, SC_SEED(1));
	kt_fill(st->bo[2].cpu, 64 * 1024, SC_SEED(2));
	st->val[1] = gs_hash(st->bo[0].cpu, st->val[0]);
	sh->test[0] = gs_ns() - t;
	return 0;
}

static int big_verify(struct gs_shared *sh, char *msg, size_t len)
{
	struct gs_state *st = &sh->st;
	uint64_t t = gs_ns(), h = gs_hash(st->bo[0].cpu, st->val[0]);

	sh->test[1] = gs_ns() - t;
	if (h != st->val[1])
		FAIL("checksum 0x%llx after restore, 0x%llx before",
		     (unsigned long long)h, (unsigned long long)st->val[1]);
	if (!kt_check(st->bo[1].cpu, 64 * 1024, SC_SEED(1)) ||
	    !kt_check(st->bo[2].cpu, 64 * 1024, SC_SEED(2)))
		FAIL("a small BO lost its contents");
	return 0;
}

static int big_fn(struct gs_shared *sh, char cmd, char *msg, size_t len)
{
	if (!cmd)
		return big_build(sh, msg, len);
	if (cmd == C_VERIFY)
		return big_verify(sh, msg, len);
	FAIL("bad command %c", cmd);
}

/* ---- the tests ---- */

FIXTURE(scale) {
	struct gs_shared *sh, *sh2;
	struct gs_proc orig, rest;
	struct gs_ck ck;
	struct kt_props before;
	char msg[2048];
};

FIXTURE_SETUP(scale)
{
	struct rlimit rl = { 65536, 65536 };
	char err[128];

	memset(&self->orig, 0, sizeof(self->orig));
	memset(&self->rest, 0, sizeof(self->rest));
	self->ck.tfd = -1;
	/* CHECKPOINT and RESTORE install a dma-buf fd per BO, as CRIU's. */
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	self->sh = gs_shared_new();
	self->sh2 = gs_shared_new();
	ASSERT_TRUE(self->sh && self->sh2);
	ASSERT_EQ(0, kt_counters(&self->before, err, sizeof(err)))
		TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(scale)
{
	gs_kill(&self->orig);
	gs_kill(&self->rest);
	gs_ck_free(&self->ck);
	EXPECT_EQ(0, cw_counters_same(&self->before, "after the test",
				      self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	gs_shared_free(self->sh);
	gs_shared_free(self->sh2);
}

/* Checkpoint the original, kill it, restore and RESUME. */
static int sc_move(FIXTURE_DATA(scale) *self, gs_fn fn, unsigned int flags,
		   char *msg, size_t len)
{
	if (gs_move(&self->orig, &self->ck, &self->rest, self->sh2, flags, fn,
		    msg, len))
		return -1;
	return cw_send_resume(self->rest.pid, msg, len);
}

static double per_bo_us(uint64_t ns, uint64_t n)
{
	return (double)ns / 1000.0 / (double)n;
}

TEST_F_TIMEOUT(scale, bos_100_1k_10k, 3600)
{
	static const uint64_t counts[] = { 100, 1000, SC_MAX_BOS };
	double cost[3][3];
	uint64_t t;
	unsigned int i, s;

	SC_NEED("bos");
	ksft_print_msg("%8s %10s %10s %10s %10s %10s | us/BO: %8s %8s %8s\n",
		       "BOs", "info ms", "ckpt ms", "read ms", "restore ms",
		       "fill ms", "info", "ckpt", "restore");
	for (i = 0; i < 3; i++) {
		memset(self->sh, 0, sizeof(*self->sh));
		memset(self->sh2, 0, sizeof(*self->sh2));
		self->sh->st.val[0] = counts[i];
		t = gs_ns();
		ASSERT_EQ(0, gs_start(&self->orig, self->sh, bos_fn, self->msg,
				      sizeof(self->msg)))
			TH_LOG("%s", self->msg);
		t = gs_ns() - t;
		ASSERT_EQ(0, sc_move(self, bos_fn, 0, self->msg,
				     sizeof(self->msg)))
			TH_LOG("%s", self->msg);
		ASSERT_EQ(counts[i], self->ck.img.k.num_bos);
		self->sh2->st.val[3] = self->ck.img.k.num_bos;
		ASSERT_EQ(0, gs_command(&self->rest, C_VERIFY, self->msg,
					sizeof(self->msg)))
			TH_LOG("%s", self->msg);
		cost[i][0] = per_bo_us(self->ck.info_ns, counts[i]);
		cost[i][1] = per_bo_us(self->ck.ckpt_ns, counts[i]);
		cost[i][2] = per_bo_us(self->sh2->restore_ns, counts[i]);
		ksft_print_msg("%8llu %10.1f %10.1f %10.1f %10.1f %10.1f | %15.1f %8.1f %8.1f (building took %.0f ms)\n",
			       (unsigned long long)counts[i],
			       self->ck.info_ns / 1e6, self->ck.ckpt_ns / 1e6,
			       self->ck.read_ns / 1e6,
			       self->sh2->restore_ns / 1e6,
			       self->sh2->fill_ns / 1e6, cost[i][0],
			       cost[i][1], cost[i][2], t / 1e6);
		EXPECT_EQ(0, gs_quit(&self->rest, self->msg,
				     sizeof(self->msg)))
			TH_LOG("%s", self->msg);
		gs_ck_free(&self->ck);
	}
	/*
	 * One timing of a few hundred ms on a shared machine is noisy, so
	 * compare with the worse of the 100- and 1,000-BO costs: a step
	 * quadratic in the BOs still costs ~10x (~100x) more per BO at 10k.
	 */
	for (s = 0; s < 3; s++) {
		double base = cost[0][s] > cost[1][s] ? cost[0][s] : cost[1][s];

		ksft_print_msg("step %s: cost per BO at 10k / at 1k x%.2f, / max(100, 1k) x%.2f\n",
			       s == 0 ? "PROCESS_INFO" : s == 1 ? "CHECKPOINT" :
			       "RESTORE", cost[2][s] / cost[1][s],
			       cost[2][s] / base);
		/* PROCESS_INFO is cheap enough for timer noise to dominate. */
		if (s)
			EXPECT_GT(3.0, cost[2][s] / base)
				TH_LOG("superlinear: %.1f us/BO at 100, %.1f at 1k, %.1f at 10k",
				       cost[0][s], cost[1][s], cost[2][s]);
	}
}

TEST_F_TIMEOUT(scale, restore_short_of_vram, 900)
{
	unsigned long long vram_mb;
	uint32_t i;

	SC_NEED("short");
	ASSERT_EQ(0, kt_param("vram_mb", &vram_mb));
	/* The original keeps 5/8 of GPU 0's VRAM; a copy does not fit. */
	self->sh->st.val[0] = (vram_mb * 5 / 8) << 20;
	ASSERT_EQ(0, gs_start(&self->orig, self->sh, big_fn, self->msg,
			      sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, gs_checkpoint(self->orig.pid, self->sh->st.rt.e.kfd,
				   &self->ck, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	/* Leave it running (criu dump --leave-running): UNPAUSE, detach. */
	ASSERT_EQ(0, kc_unpause(self->ck.tfd));
	for (i = 0; i < (uint32_t)self->ck.ntids; i++)
		ptrace(PTRACE_DETACH, self->ck.tids[i], NULL, NULL);
	/* Our copy of its /dev/kfd would keep its VRAM after it exits. */
	close(self->ck.tfd);
	self->ck.tfd = -1;
	ASSERT_EQ(0, gs_start_restored(&self->rest, self->sh2, &self->sh->st,
				       &self->ck.img, GS_R_FAIL, big_fn,
				       self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	ksft_print_msg("RESTORE with %llu of %llu MiB VRAM held: %s after %.1f ms\n",
		       (unsigned long long)(self->sh->st.val[0] >> 20), vram_mb,
		       strerror(-self->sh2->restore_err),
		       self->sh2->restore_ns / 1e6);
	EXPECT_EQ(-ENOMEM, self->sh2->restore_err);

	/* Once the original is gone the same image restores. */
	ASSERT_EQ(0, gs_quit(&self->orig, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	memset(self->sh2, 0, sizeof(*self->sh2));
	ASSERT_EQ(0, gs_start_restored(&self->rest, self->sh2, &self->sh->st,
				       &self->ck.img, 0, big_fn, self->msg,
				       sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_send_resume(self->rest.pid, self->msg,
				    sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, gs_command(&self->rest, C_VERIFY, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	EXPECT_EQ(0, gs_quit(&self->rest, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
}

TEST_F_TIMEOUT(scale, eight_gpus, 900)
{
	struct kt_gpu gpus[KT_MAX_GPUS];
	int n, i, j;

	SC_NEED("gpus");
	n = kt_gpus(gpus, KT_MAX_GPUS);
	ASSERT_EQ(8, n);
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			ASSERT_TRUE(gpus[i].gpu_id != gpus[j].gpu_id &&
				    gpus[i].render_minor !=
				    gpus[j].render_minor);
	ASSERT_EQ(0, gs_start(&self->orig, self->sh, gpus_fn, self->msg,
			      sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, sc_move(self, gpus_fn, GS_R_SWAP, self->msg,
			     sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(8, self->ck.img.k.num_devices);
	/* Per GPU a ring, its pointers and a BO; the signals. */
	ASSERT_EQ(3 * 8 + 1, self->ck.img.k.num_bos);
	ksft_print_msg("8 GPUs, 8 queues, 25 BOs: PROCESS_INFO %.1f ms, CHECKPOINT %.1f ms, RESTORE %.1f ms\n",
		       self->ck.info_ns / 1e6, self->ck.ckpt_ns / 1e6,
		       self->sh2->restore_ns / 1e6);
	ASSERT_EQ(0, gs_command(&self->rest, C_RUN, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	EXPECT_EQ(0, gs_quit(&self->rest, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
}

TEST_F_TIMEOUT(scale, one_big_bo, 3600)
{
	unsigned long long vram_mb, mb;
	const char *env = getenv("KFDSIM_SCALE_BIG_MB");
	uint64_t h = 0;
	uint32_t i;

	SC_NEED("big");
	ASSERT_EQ(0, kt_param("vram_mb", &vram_mb));
	mb = env ? strtoull(env, NULL, 0) : vram_mb - 64;
	self->sh->st.val[0] = (uint64_t)mb << 20;
	ASSERT_EQ(0, gs_start(&self->orig, self->sh, big_fn, self->msg,
			      sizeof(self->msg))) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, sc_move(self, big_fn, 0, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	for (i = 0; i < self->ck.img.k.num_bos; i++)
		if (self->ck.img.k.bos[i].size == self->sh->st.val[0])
			h = gs_hash(self->ck.img.k.data[i],
				    self->ck.img.k.bos[i].size);
	EXPECT_EQ(self->sh->st.val[1], h) TH_LOG("the image's checksum differs");
	ASSERT_EQ(0, gs_command(&self->rest, C_VERIFY, self->msg,
				sizeof(self->msg))) TH_LOG("%s", self->msg);
	ksft_print_msg("%llu MiB VRAM BO: fill+hash %.1f s, PROCESS_INFO %.1f ms, CHECKPOINT %.1f ms, read %.1f s, RESTORE %.1f ms, write back %.1f s, hash %.1f s\n",
		       mb, self->sh->test[0] / 1e9, self->ck.info_ns / 1e6,
		       self->ck.ckpt_ns / 1e6, self->ck.read_ns / 1e9,
		       self->sh2->restore_ns / 1e6, self->sh2->fill_ns / 1e9,
		       self->sh2->test[1] / 1e9);
	EXPECT_EQ(0, gs_quit(&self->rest, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
}

TEST_HARNESS_MAIN
