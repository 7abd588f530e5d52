// SPDX-License-Identifier: GPL-2.0
/*
 * An instruction fuzzer for the gfx9 machine-code engine: random
 * instruction words, each run as a short wave program through a real AQL
 * dispatch on kfdsim. Every wave must end in a result (the dispatch
 * completes) or a clean exception: an illegal instruction or s_trap
 * reported to the queue's inactive signal, a GPU page fault reported as a
 * memory exception event. A program still running after the hang limit
 * (a branch back into itself: a real GPU hangs too) must stop when its
 * queue is destroyed. Kernel reports (KASAN, UBSAN, WARN, BUG) are caught
 * by run.sh's check of the guest's kernel log; a stuck CP by the limit.
 *
 * The program: the code BO is filled with s_endpgm; at its start a
 * prologue loads s8-s23 with random values and v1-v8 with SGPRs and the
 * lane id, then come three random dwords (the instruction word, and its
 * second dword or literal, or more instructions) and s_endpgm. Words are
 * random dwords (1 in 4) or random dwords with the fixed bits of a format
 * of the gfx9 ISA (SOP*, SMEM, VOP1/2/C/3/3P, DS, FLAT, MUBUF, ...) and
 * operand fields biased to registers in range, inline constants, DPP,
 * SDWA and literals.
 *
 * Environment:
 *   KFDSIM_GFX9_FUZZ_COUNT  programs to run (default 1500, the smoke run)
 *   KFDSIM_GFX9_FUZZ_SEED   PRNG seed (default fixed: a count and a seed
 *                           replay the same words)
 * Prints the words run and how many ended how.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_harness.h"
#include "kfdsim_gpu.h"

#define FZ_BO_SIZE	(64 * 1024)
#define FZ_CODE_OFF	256
#define FZ_S_ENDPGM	0xbf810000u
#define FZ_HANG_MS	5000

enum fz_end {
	FZ_DONE,
	FZ_ILLEGAL,
	FZ_EXCEPTION,
	FZ_FAULT,
	FZ_HANG,
	FZ_OTHER,
	FZ_NR,
};

static const char *const fz_names[FZ_NR] = {
	"completed", "illegal instruction", "exception (s_trap)",
	"memory fault", "hang, queue destroyed", "other",
};

static uint64_t fz_state;

static uint32_t fz_rand(void)
{
	fz_state ^= fz_state << 13;
	fz_state ^= fz_state >> 7;
	fz_state ^= fz_state << 17;
	return (uint32_t)(fz_state >> 16);
}

/* The formats: fixed bits of the first dword, and the encoding length. */
static const struct {
	uint32_t mask, match;
	unsigned int dwords;
} fz_formats[] = {
	{ 0xff800000, 0xbe800000, 1 },	/* SOP1 */
	{ 0xff800000, 0xbf000000, 1 },	/* SOPC */
	{ 0xff800000, 0xbf800000, 1 },	/* SOPP */
	{ 0xf0000000, 0xb0000000, 1 },	/* SOPK */
	{ 0xc0000000, 0x80000000, 1 },	/* SOP2 */
	{ 0xfe000000, 0x7e000000, 1 },	/* VOP1 */
	{ 0xfe000000, 0x7c000000, 1 },	/* VOPC */
	{ 0x80000000, 0x00000000, 1 },	/* VOP2 */
	{ 0xfc000000, 0xc0000000, 2 },	/* SMEM */
	{ 0xff800000, 0xd3800000, 2 },	/* VOP3P */
	{ 0xfc000000, 0xd0000000, 2 },	/* VOP3 */
	{ 0xfc000000, 0xd8000000, 2 },	/* DS */
	{ 0xfc000000, 0xdc000000, 2 },	/* FLAT */
	{ 0xfc000000, 0xe0000000, 2 },	/* MUBUF */
	{ 0xfc000000, 0xe8000000, 2 },	/* MTBUF */
	{ 0xfc000000, 0xf0000000, 2 },	/* MIMG */
	{ 0xfc000000, 0xc4000000, 2 },	/* EXP */
	{ 0xfc000000, 0xd4000000, 1 },	/* VINTRP */
};

/* A 9-bit source operand: mostly something the engine reads. */
static uint32_t fz_src9(void)
{
	switch (fz_rand() % 8) {
	case 0:
	case 1:
	case 2:
		return 256 + fz_rand() % 12;		/* v0-v11 */
	case 3:
		return 8 + fz_rand() % 16;		/* s8-s23 */
	case 4:
		return 128 + fz_rand() % 81;		/* integer constants */
	case 5:
		return 240 + fz_rand() % 9;		/* float constants */
	case 6:
		return 249 + fz_rand() % 7;		/* SDWA, DPP, ..., literal */
	default:
		return fz_rand() & 0x1ff;
	}
}

/* A random instruction and the two dwords after it. */
static void fz_word(uint32_t *w)
{
	unsigned int f;

	w[0] = fz_rand();
	w[1] = fz_rand();
	w[2] = fz_rand();
	if (fz_rand() % 4 == 0)
		return;				/* plain random dwords */
	f = fz_rand() % ARRAY_SIZE(fz_formats);
	w[0] = (w[0] & ~fz_formats[f].mask) | fz_formats[f].match;
	switch (f) {
	case 5:		/* VOP1: vdst v0-v15, src0 */
	case 6:		/* VOPC: vsrc1 v0-v15, src0 */
		w[0] = (w[0] & ~0x1ffffu) | (fz_rand() % 16) << 9 | fz_src9();
		if (f == 5)
			w[0] = (w[0] & ~(0xffu << 17)) | (fz_rand() % 16) << 17;
		break;
	case 7:		/* VOP2 */
		w[0] = (w[0] & 0xfe000000u) | (fz_rand() % 16) << 17 |
		       (fz_rand() % 16) << 9 | fz_src9();
		break;
	case 9:		/* VOP3P */
	case 10:	/* VOP3 */
		w[0] = (w[0] & ~0xffu) | fz_rand() % 16;
		w[1] = (w[1] & 0xf8000000u) | fz_src9() | fz_src9() << 9 |
		       fz_src9() << 18;
		break;
	default:
		break;
	}
	/* Sometimes a DPP or SDWA dword with its src0 in range. */
	if ((w[0] & 0x1ff) == 249 || (w[0] & 0x1ff) == 250)
		w[1] = (w[1] & ~0xffu) | fz_rand() % 16;
}

/* s_mov_b32 s<n>, <literal> and v_mov_b32 v<n>, s<m>. */
static uint32_t *fz_prologue(uint32_t *p)
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		*p++ = 0xbe8000ffu | (8 + i) << 16;	/* s_mov_b32 */
		*p++ = fz_rand();
	}
	for (i = 0; i < 8; i++)		/* v_mov_b32 v(1+i), s(8+i) */
		*p++ = 0x7e000200u | (1 + i) << 17 | (8 + i);
	/* v_add_u32 v9, v0, v1 (lane-dependent) */
	*p++ = 0x68000000u | 9 << 17 | (256 + 1) << 0 | 0 << 9;
	return p;
}

struct fz_ctx {
	struct kg_rt *rt;
	struct kg_bo code;
	struct kg_signal done, inactive;
	struct kg_bo box;
	struct kfd_ioctl_create_event_args ev, mem;
	struct kg_queue q;
	bool have_q;
};

static int fz_queue(struct fz_ctx *c)
{
	int ret;

	if (c->have_q)
		return 0;
	ret = kg_queue_new_amd(c->rt, 0, 4096, &c->q);
	if (ret)
		return ret;
	memcpy((char *)c->q.ctl.cpu + KFDSIM_AMD_QUEUE_INACTIVE_SIGNAL,
	       &c->inactive.va, sizeof(c->inactive.va));
	c->have_q = true;
	return 0;
}

static int fz_queue_drop(struct fz_ctx *c)
{
	c->have_q = false;
	return kg_queue_free(&c->q);
}

/* Run the program in the code BO once; how did it end? */
static int fz_run(struct fz_ctx *c, enum fz_end *end)
{
	struct kfdsim_aql_dispatch pkt = {
		.header = KG_AQL_HDR(KFDSIM_AQL_TYPE_KERNEL_DISPATCH),
		.setup = 1,
		.workgroup_size_x = 64,
		.workgroup_size_y = 1,
		.workgroup_size_z = 1,
		.grid_size_x = 64,
		.grid_size_y = 1,
		.grid_size_z = 1,
		.kernel_object = c->code.va,
		.completion_signal = c->done.va,
	};
	struct kfd_event_data ev[2] = {
		{ .event_id = c->ev.event_id },
		{ .event_id = c->mem.event_id },
	};
	uint64_t t0 = kg_now_ms();
	bool fault = false;
	int64_t code;
	uint32_t res;
	int ret;

	ret = fz_queue(c);
	if (ret)
		return ret;
	kg_signal_store(&c->done, 1);
	kg_signal_store(&c->inactive, 0);
	/* Both events auto-reset: take what the last program left set. */
	kg_wait1(c->rt->e.kfd, c->ev.event_id, 0);
	kg_wait1(c->rt->e.kfd, c->mem.event_id, 0);
	ret = kg_aql_submit(&c->q, &pkt);
	if (ret)
		return ret;
	for (;;) {
		if (kg_signal_load(&c->done) == 0) {
			*end = FZ_DONE;
			return 0;
		}
		code = kg_signal_load(&c->inactive);
		if (code) {
			*end = code == KFDSIM_AQL_ERROR_ILLEGAL_INSTRUCTION ?
			       FZ_ILLEGAL : code == KFDSIM_AQL_ERROR_EXCEPTION ?
			       FZ_EXCEPTION : FZ_OTHER;
			return fz_queue_drop(c);
		}
		if (fault) {
			*end = FZ_FAULT;
			return fz_queue_drop(c);
		}
		if (kg_now_ms() - t0 > FZ_HANG_MS) {
			*end = FZ_HANG;
			return fz_queue_drop(c);
		}
		ret = kg_wait(c->rt->e.kfd, ev, 2, false, 100, &res);
		if (ret)
			return ret;
		/*
		 * Woken with neither signal set (they are written before
		 * their event fires): the memory exception event it was.
		 */
		if (res == KFD_IOC_WAIT_RESULT_COMPLETE &&
		    kg_signal_load(&c->done) != 0 &&
		    !kg_signal_load(&c->inactive))
			fault = true;
	}
}

static uint64_t fz_env(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

KG_FIXTURE(gfx9_fuzz)

/* A million programs take hours under TCG; run.sh's limit bounds the smoke run. */
TEST_F_TIMEOUT(gfx9_fuzz, words_end_cleanly, 6 * 3600)
{
	uint64_t count = fz_env("KFDSIM_GFX9_FUZZ_COUNT", 1500);
	uint64_t seed = fz_env("KFDSIM_GFX9_FUZZ_SEED", 0x67667839);
	struct kg_kd kd = {
		.kernel_code_entry_byte_offset = FZ_CODE_OFF,
		/* 64 VGPRs, 96 SGPRs, f32/f64/f16 denormals kept */
		.compute_pgm_rsrc1 = 15u | 11u << 6 | 3u << 16 | 3u << 18,
		.compute_pgm_rsrc2 = 0,
	};
	uint64_t n, ends[FZ_NR] = { 0 }, t0 = kg_now_ms();
	struct fz_ctx c = { .rt = &self->rt };
	uint32_t *code, *p, w[3];
	enum fz_end end;
	unsigned int i;

	/* Lines out as they are printed: the harness's child ends with _exit. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	fz_state = seed ? seed : 1;
	ASSERT_EQ(0, kg_bo_new(c.rt, 0, FZ_BO_SIZE, KT_GTT | KT_WRITABLE, 0,
			       &c.code));
	ASSERT_EQ(0, kg_bo_new(c.rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &c.box));
	ASSERT_EQ(0, kg_event_new(c.rt->e.kfd, KFD_IOC_EVENT_SIGNAL, true, 0,
				  &c.ev));
	ASSERT_EQ(0, kg_event_new(c.rt->e.kfd, KFD_IOC_EVENT_MEMORY, true, 0,
				  &c.mem));
	ASSERT_EQ(0, kg_signal_new(c.rt, 1, &c.done));
	ASSERT_EQ(0, kg_signal_new(c.rt, 0, &c.inactive));
	c.done.cpu->event_mailbox_ptr = c.box.va;
	c.done.cpu->event_id = c.ev.event_id;
	c.inactive.cpu->event_mailbox_ptr = c.box.va;
	c.inactive.cpu->event_id = c.ev.event_id;
	code = c.code.cpu;
	for (i = 0; i < FZ_BO_SIZE / 4; i++)
		code[i] = FZ_S_ENDPGM;
	memcpy(code, &kd, sizeof(kd));
	printf("# seed 0x%llx, %llu programs\n", (unsigned long long)seed,
	       (unsigned long long)count);
	for (n = 0; n < count; n++) {
		p = fz_prologue(code + FZ_CODE_OFF / 4);
		fz_word(w);
		memcpy(p, w, sizeof(w));
		p[3] = FZ_S_ENDPGM;
		/* the code before this word may have been a longer one */
		for (i = 4; i < 8; i++)
			p[i] = FZ_S_ENDPGM;
		ASSERT_EQ(0, fz_run(&c, &end))
			TH_LOG("program %llu: 0x%08x 0x%08x 0x%08x",
			       (unsigned long long)n, w[0], w[1], w[2]);
		ends[end]++;
		if (end == FZ_OTHER || end == FZ_HANG)
			printf("# program %llu: 0x%08x 0x%08x 0x%08x: %s\n",
			       (unsigned long long)n, w[0], w[1], w[2],
			       fz_names[end]);
		if (n && n % 100000 == 0)
			printf("# %llu programs, %llu s\n",
			       (unsigned long long)n,
			       (unsigned long long)(kg_now_ms() - t0) / 1000);
	}
	printf("# %llu words run in %llu ms\n", (unsigned long long)count,
	       (unsigned long long)(kg_now_ms() - t0));
	for (i = 0; i < FZ_NR; i++)
		printf("#   %-24s %llu\n", fz_names[i],
		       (unsigned long long)ends[i]);
	EXPECT_EQ(0u, ends[FZ_OTHER]);
	if (c.have_q)
		EXPECT_EQ(0, fz_queue_drop(&c));
	EXPECT_EQ(0, kg_event_destroy(c.rt->e.kfd, c.ev.event_id));
	EXPECT_EQ(0, kg_event_destroy(c.rt->e.kfd, c.mem.event_id));
}

TEST_HARNESS_MAIN
