// SPDX-License-Identifier: GPL-2.0
/*
 * An instruction fuzzer for the gfx9 machine-code engine: random
 * instruction words, each run as a short wave program through real AQL
 * dispatches on kfdsim. Every wave must end in a result (its workgroup
 * ends) or a clean exception: an illegal instruction or s_trap reported to
 * the queue's inactive signal, a GPU page fault reported as a memory
 * exception event. A program still running after the hang limit (a branch
 * back into itself: a real GPU hangs too) must stop when its queue is
 * destroyed. Kernel reports (KASAN, UBSAN, WARN, BUG) are caught by
 * run.sh's check of the guest's kernel log; a stuck CP by the limit.
 *
 * One program per word: a prologue loads s8-s23 with random values and
 * v1-v9 from SGPRs and the lane id, then come three random dwords (the
 * instruction word, and its second dword or literal, or more instructions)
 * and s_endpgm. Words are random dwords (1 in 4) or random dwords with the
 * fixed bits of a format of the gfx9 ISA (SOP*, SMEM, VOP1/2/C/3/3P, DS,
 * FLAT, MUBUF, ...) and operand fields biased to registers in range,
 * inline constants, DPP, SDWA and literals.
 *
 * Many programs per dispatch: the code BO holds FZ_BATCH slots, one
 * program each, FZ_SLOT_STRIDE bytes apart in a sea of s_endpgm (so a
 * branch of the word, +-128 KiB at most, lands on s_endpgm as it would
 * with one program alone). Workgroup j of a dispatch starts at an entry
 * stub that jumps to the slot the table at FZ_TABLE_OFF names for j
 * (s_getpc, s_load_dword, s_setpc). The slot first stores j + 1 into its
 * marker (s_store_dword), then zeroes s0-s7: from there on the wave's
 * state is that of a program dispatched alone. A completed dispatch ends
 * every slot it ran. A stopped queue (trap, fault, hang) ends the one slot
 * running: kfdsim runs one workgroup at a time, so that is the started
 * slot of the highest workgroup id; the other started slots ended, the
 * slots never started are dispatched again on a fresh queue (on the same
 * ring and pointers: only DESTROY_QUEUE and CREATE_QUEUE, with the
 * dispatch already in the ring so that the CP, woken by the new queue,
 * starts it at once).
 *
 * Nearly every word traps (the two dwords after an instruction run as
 * instructions too), so a queue seldom lives for more than one word: the
 * time per word is a queue's life (CREATE_QUEUE, the dispatch until the
 * trap is seen, DESTROY_QUEUE), which the test measures and prints. Most
 * of it is waiting, so several processes (KFDSIM_GFX9_FUZZ_JOBS, spread
 * over the GPUs) overlap their queues' lives.
 *
 * Word n of a run depends on the seed and n only, so the work splits
 * between the processes (batch b of FZ_BATCH words goes to process
 * b mod jobs) and a count and a seed replay the same words whatever the
 * number of processes; FIRST picks out one (FIRST=n COUNT=1).
 *
 * Environment:
 *   KFDSIM_GFX9_FUZZ_COUNT  programs to run (default 1500, the smoke run)
 *   KFDSIM_GFX9_FUZZ_SEED   PRNG seed (default fixed)
 *   KFDSIM_GFX9_FUZZ_FIRST  index of the first word (default 0)
 *   KFDSIM_GFX9_FUZZ_JOBS   processes (default 4)
 *   KFDSIM_GFX9_FUZZ_SECONDS stop taking new batches after this long
 *                           (default 0: no limit)
 * Prints the words run, the time and how many ended how.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kt_harness.h"
#include "kfdsim_gpu.h"

#define FZ_BATCH	64
#define FZ_STUB_OFF	256
#define FZ_TABLE_OFF	1024
#define FZ_SLOT_STRIDE	(256 * 1024)
#define FZ_CODE_SIZE	((FZ_BATCH + 1) * FZ_SLOT_STRIDE)
#define FZ_RING_SIZE	4096
#define FZ_S_ENDPGM	0xbf810000u
#define FZ_HANG_MS	5000
#define FZ_JOBS_MAX	16

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

/* Shared between the processes. */
struct fz_tally {
	uint64_t ends[FZ_NR];
	uint64_t words;
	uint64_t dispatches;
	uint64_t queues;
	uint64_t ns[3];		/* create, dispatch until it ended, destroy */
	int failed;
	char msg[256];
};

/* ---- the words ---- */

static uint64_t fz_state;

static uint64_t fz_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

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

/*
 * Program @n of the run from @seed: the 16 SGPR values of the prologue,
 * then the word's three dwords, all from a PRNG seeded by (seed, n).
 */
static void fz_program(uint64_t seed, uint64_t n, uint32_t *sval,
		       uint32_t *w)
{
	unsigned int i;

	fz_state = fz_mix(seed ^ fz_mix(n)) | 1;
	for (i = 0; i < 16; i++)
		sval[i] = fz_rand();
	fz_word(w);
}

/* ---- the code BO ---- */

/*
 * The entry stub, at FZ_STUB_OFF: s0 is the workgroup id; jump to the
 * table's offset for it, relative to the address after s_getpc_b64.
 */
static const uint32_t fz_stub[] = {
	0xbe821c00u,			/* s_getpc_b64 s[2:3] */
	0x8e048200u,			/* s_lshl_b32 s4, s0, 2 */
	0x80060402u,			/* s_add_u32 s6, s2, s4 */
	0x82078003u,			/* s_addc_u32 s7, s3, 0 */
	0xc0020103u,			/* s_load_dword s4, s[6:7], ... */
	FZ_TABLE_OFF - (FZ_STUB_OFF + 4),
	0xbf8cc07fu,			/* s_waitcnt lgkmcnt(0) */
	0x80020402u,			/* s_add_u32 s2, s2, s4 */
	0x82038003u,			/* s_addc_u32 s3, s3, 0 */
	0xbe801d02u,			/* s_setpc_b64 s[2:3] */
};

static uint32_t fz_slot_off(unsigned int slot)
{
	return (slot + 1) * FZ_SLOT_STRIDE;
}

/*
 * Write program @n into @slot: store the workgroup id + 1 into the slot's
 * marker at @mark_va, zero s0-s7, then the prologue, the word, s_endpgm.
 */
static void fz_slot_write(uint32_t *code, unsigned int slot, uint64_t mark_va,
			  const uint32_t *sval, const uint32_t *w)
{
	uint32_t *p = code + fz_slot_off(slot) / 4;
	unsigned int i;

	*p++ = 0xbe8200ffu;		/* s_mov_b32 s2, lit */
	*p++ = (uint32_t)mark_va;
	*p++ = 0xbe8300ffu;		/* s_mov_b32 s3, lit */
	*p++ = (uint32_t)(mark_va >> 32);
	*p++ = 0x80048100u;		/* s_add_u32 s4, s0, 1 */
	*p++ = 0xc0420101u;		/* s_store_dword s4, s[2:3], 0x0 */
	*p++ = 0x00000000u;
	*p++ = 0xc0840000u;		/* s_dcache_wb */
	*p++ = 0x00000000u;
	*p++ = 0xbf8cc07fu;		/* s_waitcnt lgkmcnt(0) */
	for (i = 0; i < 4; i++)		/* s_mov_b64 s[2i:2i+1], 0 */
		*p++ = 0xbe800180u | (2 * i) << 16;
	for (i = 0; i < 16; i++) {
		*p++ = 0xbe8000ffu | (8 + i) << 16;	/* s_mov_b32 */
		*p++ = sval[i];
	}
	for (i = 0; i < 8; i++)		/* v_mov_b32 v(1+i), s(8+i) */
		*p++ = 0x7e000200u | (1 + i) << 17 | (8 + i);
	/* v_add_u32 v9, v1, v0 (lane-dependent) */
	*p++ = 0x68000000u | 9 << 17 | (256 + 1) << 0 | 0 << 9;
	memcpy(p, w, 3 * sizeof(*w));
	/* the code before this word may have been a longer one */
	for (i = 3; i < 8; i++)
		p[i] = FZ_S_ENDPGM;
}

/* ---- one process ---- */

struct fz_ctx {
	struct kg_rt rt;
	int gpu;
	uint64_t seed;
	struct kg_bo code, marks, box;
	struct kg_signal done, inactive;
	struct kfd_ioctl_create_event_args ev, mem;
	struct kg_queue q;
	bool have_q, faulted;
	struct fz_tally *t;
	uint64_t ends[FZ_NR], dispatches, queues, ns[3];
};

static uint64_t fz_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/*
 * The queue, created once; after a stop again on the same ring and
 * pointers with @pkt already in the ring and the write index in memory
 * at 1 (*@sent): CREATE_QUEUE wakes the CP, which finds the packet at
 * once instead of at its next poll of the doorbell.
 */
static int fz_queue_make(struct fz_ctx *c,
			 const struct kfdsim_aql_dispatch *pkt, bool *sent)
{
	struct kfd_ioctl_create_queue_args a = { 0 };
	char *ctl = c->q.ctl.cpu;
	uint32_t i, off = KFDSIM_AMD_QUEUE_READ_DISPATCH_ID;
	uint64_t one = 1;
	int ret;

	*sent = false;
	if (!c->q.rt) {
		ret = kg_queue_new_amd(&c->rt, c->gpu, FZ_RING_SIZE, &c->q);
		if (ret)
			return ret;
		memcpy((char *)c->q.ctl.cpu + KFDSIM_AMD_QUEUE_INACTIVE_SIGNAL,
		       &c->inactive.va, sizeof(c->inactive.va));
		c->have_q = true;
		c->queues++;
		return 0;
	}
	/* A fresh queue on the same memory: the packet in slot 0. */
	for (i = 0; i < kg_aql_entries(&c->q); i++)
		*(uint16_t *)kg_aql_slot(&c->q, i) = KFDSIM_AQL_TYPE_INVALID;
	memset(ctl + KFDSIM_AMD_QUEUE_READ_DISPATCH_ID, 0, sizeof(uint64_t));
	memcpy(ctl + off + 8, &off, sizeof(off));
	c->q.windex = 0;
	kg_aql_write(&c->q, pkt, true);
	c->q.windex = 1;
	__atomic_store_n((uint64_t *)(ctl + KFDSIM_AMD_QUEUE_WRITE_DISPATCH_ID),
			 one, __ATOMIC_RELEASE);
	a.ring_base_address = c->q.ring.va;
	a.ring_size = c->q.ring_size;
	a.read_pointer_address = c->q.ctl.va + KFDSIM_AMD_QUEUE_READ_DISPATCH_ID;
	a.write_pointer_address = c->q.ctl.va +
				  KFDSIM_AMD_QUEUE_WRITE_DISPATCH_ID;
	a.gpu_id = c->rt.ids[c->gpu];
	a.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
	a.queue_percentage = 100;
	a.queue_priority = 7;
	ret = kt_ioctl(c->rt.e.kfd, AMDKFD_IOC_CREATE_QUEUE, &a);
	if (ret)
		return ret;
	c->q.id = a.queue_id;
	/* The doorbell slice stays mapped; the slot may be another one. */
	c->q.doorbell = (uint64_t *)((char *)c->rt.doorbells[c->gpu] +
				     (a.doorbell_offset &
				      (KT_DOORBELL_SIZE - 1)));
	__atomic_store_n(c->q.doorbell, c->q.windex, __ATOMIC_RELEASE);
	c->have_q = true;
	c->queues++;
	*sent = true;
	return 0;
}

/* Submit @pkt, creating the queue first if there is none (timed). */
static int fz_queue_submit(struct fz_ctx *c,
			   const struct kfdsim_aql_dispatch *pkt)
{
	uint64_t t0 = fz_ns();
	bool sent = false;
	int ret = 0;

	if (!c->have_q)
		ret = fz_queue_make(c, pkt, &sent);
	c->ns[0] += fz_ns() - t0;
	if (!ret && !sent)
		ret = kg_aql_submit(&c->q, pkt);
	return ret;
}

static int fz_queue_stop(struct fz_ctx *c)
{
	struct kfd_ioctl_destroy_queue_args d = { .queue_id = c->q.id };
	uint64_t t0 = fz_ns();
	int ret;

	c->have_q = false;
	ret = kt_ioctl(c->rt.e.kfd, AMDKFD_IOC_DESTROY_QUEUE, &d);
	c->ns[2] += fz_ns() - t0;
	return ret;
}

/* Set up a process's GPU objects: code, markers, signals, events. */
static int fz_setup(struct fz_ctx *c)
{
	struct kg_kd kd = {
		.kernel_code_entry_byte_offset = FZ_STUB_OFF,
		/* 64 VGPRs, 96 SGPRs, f32/f64/f16 denormals kept */
		.compute_pgm_rsrc1 = 15u | 11u << 6 | 3u << 16 | 3u << 18,
		/* no user SGPRs; the workgroup id X in s0 */
		.compute_pgm_rsrc2 = 1u << 7,
	};
	uint32_t *code, i;
	int ret;

	ret = kg_bo_new(&c->rt, c->gpu, FZ_CODE_SIZE, KT_GTT | KT_WRITABLE, 0,
			&c->code);
	ret = ret ?: kg_bo_new(&c->rt, c->gpu, KT_PAGE, KT_GTT | KT_WRITABLE,
			       0, &c->marks);
	ret = ret ?: kg_bo_new(&c->rt, c->gpu, KT_PAGE, KT_GTT | KT_WRITABLE,
			       0, &c->box);
	ret = ret ?: kg_event_new(c->rt.e.kfd, KFD_IOC_EVENT_SIGNAL, true, 0,
				  &c->ev);
	ret = ret ?: kg_event_new(c->rt.e.kfd, KFD_IOC_EVENT_MEMORY, true, 0,
				  &c->mem);
	ret = ret ?: kg_signal_new(&c->rt, 1, &c->done);
	ret = ret ?: kg_signal_new(&c->rt, 0, &c->inactive);
	if (ret)
		return ret;
	c->done.cpu->event_mailbox_ptr = c->box.va;
	c->done.cpu->event_id = c->ev.event_id;
	c->inactive.cpu->event_mailbox_ptr = c->box.va;
	c->inactive.cpu->event_id = c->ev.event_id;
	code = c->code.cpu;
	for (i = 0; i < FZ_CODE_SIZE / 4; i++)
		code[i] = FZ_S_ENDPGM;
	memcpy(code, &kd, sizeof(kd));
	memcpy(code + FZ_STUB_OFF / 4, fz_stub, sizeof(fz_stub));
	return 0;
}

/* The first failure of the run is the one reported. */
static void __attribute__((format(printf, 2, 3)))
fz_fail(struct fz_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (!c->t->failed)
		vsnprintf(c->t->msg, sizeof(c->t->msg), fmt, ap);
	va_end(ap);
	c->t->failed = 1;
}

/*
 * Dispatch the @npend slots in @pend (workgroup j runs slot pend[j]) and
 * wait until the dispatch completes (*stopped = FZ_DONE) or the queue
 * stops (*stopped: how; the caller destroys it).
 */
static int fz_dispatch_wait(struct fz_ctx *c, const unsigned int *pend,
			    unsigned int npend, enum fz_end *stopped);

/* The same; *@t holds its start and gets the time until it ended. */
static int fz_dispatch(struct fz_ctx *c, const unsigned int *pend,
		       unsigned int npend, enum fz_end *stopped, uint64_t *t)
{
	int ret = fz_dispatch_wait(c, pend, npend, stopped);

	*t = fz_ns() - *t;
	return ret;
}

static int fz_dispatch_wait(struct fz_ctx *c, const unsigned int *pend,
			    unsigned int npend, enum fz_end *stopped)
{
	struct kfdsim_aql_dispatch pkt = {
		.header = KG_AQL_HDR(KFDSIM_AQL_TYPE_KERNEL_DISPATCH),
		.setup = 1,
		.workgroup_size_x = 64,
		.workgroup_size_y = 1,
		.workgroup_size_z = 1,
		.grid_size_x = 64 * npend,
		.grid_size_y = 1,
		.grid_size_z = 1,
		.kernel_object = c->code.va,
		.completion_signal = c->done.va,
	};
	struct kfd_event_data ev[2] = {
		{ .event_id = c->ev.event_id },
		{ .event_id = c->mem.event_id },
	};
	volatile uint32_t *marks = c->marks.cpu;
	uint32_t *table = (uint32_t *)c->code.cpu + FZ_TABLE_OFF / 4;
	uint64_t t_progress = kg_now_ms();
	unsigned int j, started = 0, s;
	bool fault = false;
	int64_t code;
	uint32_t res;
	int ret;

	for (j = 0; j < npend; j++) {
		table[j] = fz_slot_off(pend[j]) - (FZ_STUB_OFF + 4);
		marks[pend[j]] = 0;
	}
	kg_signal_store(&c->done, 1);
	kg_signal_store(&c->inactive, 0);
	/*
	 * Both events auto-reset: take what the last dispatch left set (the
	 * memory event fires only for a fault).
	 */
	kg_wait1(c->rt.e.kfd, c->ev.event_id, 0);
	if (c->faulted)
		kg_wait1(c->rt.e.kfd, c->mem.event_id, 0);
	c->faulted = false;
	ret = fz_queue_submit(c, &pkt);
	if (ret)
		return ret;
	c->dispatches++;
	for (;;) {
		if (kg_signal_load(&c->done) == 0) {
			*stopped = FZ_DONE;
			return 0;
		}
		code = kg_signal_load(&c->inactive);
		if (code) {
			*stopped = code == KFDSIM_AQL_ERROR_ILLEGAL_INSTRUCTION ?
				   FZ_ILLEGAL :
				   code == KFDSIM_AQL_ERROR_EXCEPTION ?
				   FZ_EXCEPTION : FZ_OTHER;
			return 0;
		}
		if (fault) {
			*stopped = FZ_FAULT;
			c->faulted = true;
			return 0;
		}
		/* A hang: no slot started for the hang limit. */
		for (s = 0, j = 0; j < npend; j++)
			s += marks[pend[j]] != 0;
		if (s != started) {
			started = s;
			t_progress = kg_now_ms();
		} else if (kg_now_ms() - t_progress >
			   FZ_HANG_MS * (uint64_t)kt_timeout_scale()) {
			*stopped = FZ_HANG;
			return 0;
		}
		ret = kg_wait(c->rt.e.kfd, ev, 2, false, 100, &res);
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

static void fz_report(uint64_t n, const uint32_t *w, enum fz_end end)
{
	printf("# program %llu: 0x%08x 0x%08x 0x%08x: %s\n",
	       (unsigned long long)n, w[0], w[1], w[2], fz_names[end]);
}

/* Run programs [n0, n0 + nr) in the slots of one batch. */
static int fz_batch(struct fz_ctx *c, uint64_t n0, unsigned int nr)
{
	uint32_t sval[16], w[FZ_BATCH][3];
	unsigned int pend[FZ_BATCH], npend = nr, i, j, k, left;
	volatile uint32_t *marks = c->marks.cpu;
	enum fz_end stopped = FZ_OTHER;
	uint64_t t0;
	int ret;

	for (i = 0; i < nr; i++) {
		fz_program(c->seed, n0 + i, sval, w[i]);
		fz_slot_write(c->code.cpu, i, c->marks.va + 4 * i, sval, w[i]);
		pend[i] = i;
	}
	while (npend) {
		t0 = fz_ns();
		ret = fz_dispatch(c, pend, npend, &stopped, &t0);
		c->ns[1] += t0;
		if (ret) {
			fz_fail(c, "program %llu: dispatch: %d",
				(unsigned long long)(n0 + pend[0]), ret);
			return ret;
		}
		if (stopped == FZ_DONE) {
			/* Every workgroup ran, so every slot was started. */
			for (j = 0; j < npend; j++) {
				if (marks[pend[j]] != j + 1) {
					fz_fail(c, "program %llu: dispatch completed, marker %u",
						(unsigned long long)(n0 + pend[j]),
						marks[pend[j]]);
					return -EIO;
				}
				c->ends[FZ_DONE]++;
			}
			return 0;
		}
		/* The queue stopped: destroy it (a hang's too). */
		ret = fz_queue_stop(c);
		if (ret) {
			fz_fail(c, "program %llu: DESTROY_QUEUE: %d",
				(unsigned long long)(n0 + pend[0]), ret);
			return ret;
		}
		/* The one running when the queue stopped: the last started. */
		for (k = npend, j = 0; j < npend; j++)
			if (marks[pend[j]] == j + 1)
				k = j;
		if (k == npend) {
			fz_fail(c, "program %llu: queue stopped (%s) before any program started",
				(unsigned long long)(n0 + pend[0]),
				fz_names[stopped]);
			return -EIO;
		}
		c->ends[stopped]++;
		if (stopped == FZ_OTHER || stopped == FZ_HANG)
			fz_report(n0 + pend[k], w[pend[k]], stopped);
		for (left = 0, j = 0; j < npend; j++) {
			if (j == k)
				continue;
			if (marks[pend[j]] == j + 1)
				c->ends[FZ_DONE]++;
			else
				pend[left++] = pend[j];
		}
		npend = left;
	}
	return 0;
}

/* A process: batches b = job, job + jobs, ... of the run. */
static int fz_job(struct fz_tally *t, uint64_t seed, uint64_t first,
		  uint64_t count, unsigned int job, unsigned int jobs,
		  uint64_t end_ms)
{
	struct fz_ctx c = { .seed = seed, .t = t };
	uint64_t b, n0, done = 0, t0 = kg_now_ms();
	unsigned int i;
	int ret, r;

	ret = kg_open(&c.rt);
	if (ret) {
		fz_fail(&c, "job %u: kg_open: %d", job, ret);
		return ret;
	}
	c.gpu = job % c.rt.e.ngpus;
	ret = fz_setup(&c);
	if (ret) {
		fz_fail(&c, "job %u: setup: %d", job, ret);
		goto out;
	}
	for (b = job; b * FZ_BATCH < count && !t->failed &&
	     (!end_ms || kg_now_ms() < end_ms); b += jobs) {
		n0 = first + b * FZ_BATCH;
		i = count - b * FZ_BATCH < FZ_BATCH ?
		    count - b * FZ_BATCH : FZ_BATCH;
		ret = fz_batch(&c, n0, i);
		if (ret)
			break;
		done += i;
		if (job == 0 && done / 10000 != (done - i) / 10000)
			printf("# job 0 of %u: %llu programs, %llu s\n", jobs,
			       (unsigned long long)done,
			       (unsigned long long)(kg_now_ms() - t0) / 1000);
	}
	if (c.have_q) {
		r = fz_queue_stop(&c);
		if (r)
			fz_fail(&c, "job %u: DESTROY_QUEUE: %d", job, r);
	}
	kg_bo_free(&c.rt, &c.q.ctl);
	kg_bo_free(&c.rt, &c.q.ring);
	r = kg_event_destroy(c.rt.e.kfd, c.ev.event_id);
	r = r ?: kg_event_destroy(c.rt.e.kfd, c.mem.event_id);
	if (r)
		fz_fail(&c, "job %u: DESTROY_EVENT: %d", job, r);
	for (i = 0; i < FZ_NR; i++)
		__atomic_add_fetch(&t->ends[i], c.ends[i], __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->words, done, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->dispatches, c.dispatches, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->queues, c.queues, __ATOMIC_RELAXED);
	for (i = 0; i < 3; i++)
		__atomic_add_fetch(&t->ns[i], c.ns[i], __ATOMIC_RELAXED);
out:
	kg_bo_free(&c.rt, &c.box);
	kg_bo_free(&c.rt, &c.marks);
	kg_bo_free(&c.rt, &c.code);
	kg_close(&c.rt);
	return ret;
}

static uint64_t fz_env(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

/* Each process opens /dev/kfd itself: the fixture holds nothing. */
FIXTURE(gfx9_fuzz) {
	int unused;
};

FIXTURE_SETUP(gfx9_fuzz)
{
}

FIXTURE_TEARDOWN(gfx9_fuzz)
{
}

/* A million programs take most of an hour under TCG (make fuzz). */
TEST_F_TIMEOUT(gfx9_fuzz, words_end_cleanly, 6 * 3600)
{
	uint64_t count = fz_env("KFDSIM_GFX9_FUZZ_COUNT", 1500);
	uint64_t seed = fz_env("KFDSIM_GFX9_FUZZ_SEED", 0x67667839);
	uint64_t first = fz_env("KFDSIM_GFX9_FUZZ_FIRST", 0);
	uint64_t jobs = fz_env("KFDSIM_GFX9_FUZZ_JOBS", 4), t0, sum = 0;
	uint64_t secs = fz_env("KFDSIM_GFX9_FUZZ_SECONDS", 0), end_ms;
	struct fz_tally *t;
	unsigned int i, running = 0;
	int status;
	pid_t pid;

	ASSERT_LE(1, jobs);
	ASSERT_GE(FZ_JOBS_MAX, jobs);
	/* Lines out as they are printed: the harness's child ends with _exit. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, t);
	memset(t, 0, sizeof(*t));
	printf("# seed 0x%llx, programs %llu-%llu, %llu processes, %u per dispatch\n",
	       (unsigned long long)seed, (unsigned long long)first,
	       (unsigned long long)(first + count - 1),
	       (unsigned long long)jobs, FZ_BATCH);
	t0 = kg_now_ms();
	end_ms = secs ? t0 + secs * 1000 : 0;
	for (i = 0; i < jobs; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(fz_job(t, seed, first, count, i, jobs, end_ms) ?
			      1 : 0);
		running++;
	}
	while (running) {
		pid = waitpid(-1, &status, 0);
		ASSERT_LT(0, pid);
		running--;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			if (!t->failed)
				snprintf(t->msg, sizeof(t->msg),
					 "process %d ended with status 0x%x",
					 pid, status);
			t->failed = 1;
		}
	}
	printf("# %llu words run in %llu ms: %llu dispatches, %llu queues\n",
	       (unsigned long long)t->words,
	       (unsigned long long)(kg_now_ms() - t0),
	       (unsigned long long)t->dispatches,
	       (unsigned long long)t->queues);
	/* Where the time goes, summed over the processes. */
	printf("# per dispatch: %llu us to create its queue (part of the next), %llu us from the start until it ended, %llu us to destroy the queue\n",
	       (unsigned long long)(t->ns[0] / 1000 / (t->dispatches ?: 1)),
	       (unsigned long long)(t->ns[1] / 1000 / (t->dispatches ?: 1)),
	       (unsigned long long)(t->ns[2] / 1000 / (t->dispatches ?: 1)));
	for (i = 0; i < FZ_NR; i++) {
		printf("#   %-24s %llu\n", fz_names[i],
		       (unsigned long long)t->ends[i]);
		sum += t->ends[i];
	}
	EXPECT_EQ(0, t->failed) TH_LOG("%s", t->msg);
	if (secs && t->words < count)
		printf("# stopped by KFDSIM_GFX9_FUZZ_SECONDS=%llu after %llu of %llu words\n",
		       (unsigned long long)secs,
		       (unsigned long long)t->words,
		       (unsigned long long)count);
	else
		EXPECT_EQ(count, t->words);
	EXPECT_EQ(t->words, sum);
	EXPECT_EQ(0u, t->ends[FZ_OTHER]);
	munmap(t, sizeof(*t));
}

TEST_HARNESS_MAIN
