// SPDX-License-Identifier: GPL-2.0
/*
 * rocr_app: a ROCr application for the CRIU end-to-end tests.
 *
 * It runs on Debian's unmodified ROCr (libhsa-runtime64 5.2.3), so what
 * gets checkpointed is everything a real ROCm process holds: the thunk's
 * /dev/kfd and render-node fds and its mappings (VRAM and system memory
 * BOs, doorbells, the events page, the MMIO remap page), ROCr's internal
 * AQL and SDMA queues with their context-save areas, its interrupt signals
 * (KFD events), its event thread blocked in WAIT_EVENTS, and libhsakmt's
 * shared memory (/dev/shm/hsakmt_shared_mem and its semaphore).
 *
 * On each of -g GPUs it keeps an array of -n bytes in VRAM, an AQL queue
 * it created with hsa_queue_create, and, for each of -k rounds:
 *
 *   - uploads the array from host memory with hsa_amd_memory_async_copy
 *     (ROCr's SDMA queue), waiting on an interrupt signal;
 *   - dispatches the built-in loop kernel (-s steps) on it through its own
 *     queue, completing an interrupt signal, and while it runs keeps
 *     copying a 1 MiB pattern host -> VRAM -> host on the SDMA queues and
 *     checking it, so that at nearly any moment a dispatch and an SDMA copy
 *     are both in flight;
 *   - copies the array to the next GPU's VRAM (GPU to GPU, SDMA), then
 *     from there back to host memory, which is the next round's input.
 *
 * The last round runs only once the --go file exists, so a restored
 * process must still run dispatches and copies. Then every element is
 * compared with a CPU reference (the loop kernel's recurrence), and it
 * prints "RESULT OK <checksum>" (which depends only on the options) or
 * "RESULT FAIL <why>". --expected prints the RESULT line a good run
 * prints, without touching a GPU. --make-sem only creates libhsakmt's
 * semaphore, as a ROCm process that ran earlier leaves it, and exits.
 *
 * Run it with stdin from /dev/null and stdout to a file, in its own session
 * (setsid), so CRIU can dump it with --shell-job.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <linux/kfdsim.h>

#include "app_util.h"
#include "rocr_util.h"

#define MAX_GPUS	ROCR_MAX_GPUS
/* How long one wait may take before the run fails (a hang guard). */
#define WAIT_LIMIT_MS	600000
/* The SDMA traffic beside each dispatch. */
#define TRAFFIC_BYTES	(1u << 20)

static struct {
	uint64_t rounds, steps, bytes, ngpus;
	const char *pid_file, *ready, *go;
	bool expected, make_sem;
} o = { .rounds = 6, .steps = 200, .bytes = 1 << 20, .ngpus = 2 };

struct gpu {
	hsa_agent_t agent;
	hsa_amd_memory_pool_t vram;
	hsa_queue_t *queue;
	uint32_t *dev;		/* the array, VRAM */
	uint32_t *mirror;	/* the previous GPU's array, copied here */
	uint32_t *host;		/* input and result, system memory */
	struct kfdsim_kernel_descriptor *desc;
	struct kfdsim_args_loop *args;
	uint32_t *t_dev;	/* traffic: VRAM */
};

/* The agents and pools ROCr offers; gpus[] takes the first -g GPUs. */
static struct rocr_agents ra;
static struct gpu gpus[MAX_GPUS];
static unsigned int ngpus;
static hsa_signal_t sig, tsig;
static uint32_t *t_src, *t_dst;	/* traffic: host memory */
static uint64_t traffic_seq;

/* Pool memory every agent may access. */
static void *alloc(hsa_amd_memory_pool_t pool, size_t size, const char *what)
{
	hsa_status_t s;
	void *p;

	s = hsa_amd_memory_pool_allocate(pool, size, 0, &p);
	if (s)
		app_fail("allocating %s (%zu bytes): 0x%x", what, size, s);
	s = rocr_allow_all(&ra, ngpus, p);
	if (s)
		app_fail("allow access to %s: 0x%x", what, s);
	return p;
}

/* Wait for the completion of one operation that decrements @s to 0. */
static void wait_sig(hsa_signal_t s, const char *what, unsigned int g,
		     uint64_t round)
{
	hsa_signal_value_t v = rocr_wait(s, WAIT_LIMIT_MS);

	if (v != 0)
		app_fail("gpu %u round %" PRIu64 ": %s did not complete (signal %ld)",
			 g, round, what, (long)v);
}

static void copy_n(void *dst, hsa_agent_t dst_agent, const void *src,
		   hsa_agent_t src_agent, size_t bytes, hsa_signal_t done,
		   const char *what, unsigned int g, uint64_t round)
{
	hsa_status_t s;

	hsa_signal_store_screlease(done, 1);
	s = hsa_amd_memory_async_copy(dst, dst_agent, src, src_agent, bytes,
				      0, NULL, done);
	if (s)
		app_fail("gpu %u round %" PRIu64 ": %s: 0x%x", g, round, what,
			 s);
	wait_sig(done, what, g, round);
}

static void copy(void *dst, hsa_agent_t dst_agent, const void *src,
		 hsa_agent_t src_agent, const char *what, unsigned int g,
		 uint64_t round)
{
	copy_n(dst, dst_agent, src, src_agent, o.bytes, sig, what, g, round);
}

/* One round trip of the traffic pattern through GPU @g's VRAM, checked. */
static void traffic(struct gpu *gp, unsigned int g, uint64_t round)
{
	uint64_t seq = traffic_seq++, i;

	for (i = 0; i < TRAFFIC_BYTES / 4; i++)
		t_src[i] = (uint32_t)(app_hold_word(seq, i * 4) >> 7);
	copy_n(gp->t_dev, gp->agent, t_src, ra.cpu, TRAFFIC_BYTES, tsig,
	       "traffic upload", g, round);
	copy_n(t_dst, ra.cpu, gp->t_dev, gp->agent, TRAFFIC_BYTES, tsig,
	       "traffic download", g, round);
	if (memcmp(t_src, t_dst, TRAFFIC_BYTES))
		app_fail("gpu %u round %" PRIu64 ": traffic pattern %" PRIu64 " came back wrong",
			 g, round, seq);
}

/* The loop kernel over the GPU's array, through its own queue. */
static void dispatch_loop(struct gpu *gp, unsigned int g, uint64_t round)
{
	hsa_queue_t *q = gp->queue;
	uint64_t idx;

	hsa_signal_store_screlease(sig, 1);
	idx = hsa_queue_add_write_index_relaxed(q, 1);
	while (idx - hsa_queue_load_read_index_scacquire(q) >= q->size)
		app_sleep_ms(1);
	rocr_write_dispatch(q, idx, gp->desc, gp->args, o.bytes / 4, sig);
	if (round == 0 && g == 0 && o.ready) {
		app_write_marker(o.ready);
		app_log("first dispatch running, ready marker %s written",
			o.ready);
	}
	/* SDMA traffic while the dispatch runs. */
	while (hsa_signal_load_scacquire(sig) >= 1)
		traffic(gp, g, round);
	wait_sig(sig, "loop dispatch", g, round);
}

static void run_round(uint64_t round)
{
	unsigned int g, next;

	for (g = 0; g < ngpus; g++) {
		struct gpu *gp = &gpus[g], *np;

		next = (g + 1) % ngpus;
		np = &gpus[next];
		copy(gp->dev, gp->agent, gp->host, ra.cpu, "upload", g, round);
		dispatch_loop(gp, g, round);
		copy(np->mirror, np->agent, gp->dev, gp->agent,
		     "copy to the next GPU", g, round);
		copy(gp->host, ra.cpu, np->mirror, np->agent, "download", g,
		     round);
	}
	app_log("round %" PRIu64 " done, %" PRIu64 " traffic round trips so far",
		round, traffic_seq);
}

/* The reference of element @i of GPU @g's array after every round. */
static uint32_t reference(uint32_t a, uint32_t b, unsigned int g, uint64_t i)
{
	return a * app_initial(g + 1, 0, i) + b;
}

/* a, b: all rounds' loop steps as one affine map. */
static void total_map(uint32_t *a, uint32_t *b)
{
	uint32_t ra, rb;
	uint64_t r;

	*a = 1;
	*b = 0;
	app_loop_affine(o.steps, &ra, &rb);
	for (r = 0; r < o.rounds; r++)
		app_affine_then(a, b, ra, rb);
}

static uint64_t expected_checksum(void)
{
	uint64_t h = APP_FOLD_INIT, n = o.bytes / 4, i, sum;
	uint32_t a, b;
	unsigned int g;

	total_map(&a, &b);
	for (g = 0; g < o.ngpus; g++) {
		sum = 0;
		for (i = 0; i < n; i++)
			sum = app_checksum_add(sum, reference(a, b, g, i), i);
		h = app_fold(h, sum);
	}
	return h;
}

static void verify(void)
{
	uint64_t h = APP_FOLD_INIT, n = o.bytes / 4, i, sum;
	uint32_t a, b;
	unsigned int g;

	total_map(&a, &b);
	for (g = 0; g < ngpus; g++) {
		sum = 0;
		for (i = 0; i < n; i++) {
			uint32_t want = reference(a, b, g, i);

			if (gpus[g].host[i] != want)
				app_fail("gpu %u: element %" PRIu64 " is %#x, expected %#x",
					 g, i, gpus[g].host[i], want);
			sum = app_checksum_add(sum, want, i);
		}
		h = app_fold(h, sum);
	}
	printf("%sRESULT OK %016" PRIx64 "\n", app_result_prefix, h);
	fflush(stdout);
}

static void setup(void)
{
	hsa_status_t s;
	unsigned int g;
	uint64_t i;

	s = hsa_init();
	if (s)
		app_fail("hsa_init: 0x%x", s);
	s = rocr_agents_find(&ra, false);
	if (s)
		app_fail("hsa_iterate_agents: 0x%x", s);
	if (!ra.ncpus || !ra.has_fine || !ra.has_kernarg)
		app_fail("no CPU agent or system pools");
	ngpus = ra.ngpus;
	if (ngpus < o.ngpus)
		app_fail("%u GPU agents, %" PRIu64 " wanted", ngpus, o.ngpus);
	ngpus = o.ngpus;
	for (g = 0; g < ngpus; g++) {
		gpus[g].agent = ra.gpu[g];
		gpus[g].vram = ra.vram[g];
	}
	s = hsa_signal_create(1, 0, NULL, &sig);
	if (!s)
		s = hsa_signal_create(1, 0, NULL, &tsig);
	if (s)
		app_fail("hsa_signal_create: 0x%x", s);
	t_src = alloc(ra.fine, TRAFFIC_BYTES, "the traffic source");
	t_dst = alloc(ra.fine, TRAFFIC_BYTES, "the traffic destination");
	for (g = 0; g < ngpus; g++) {
		struct gpu *gp = &gpus[g];

		gp->dev = alloc(gp->vram, o.bytes, "the VRAM array");
		gp->mirror = alloc(gp->vram, o.bytes, "the VRAM mirror");
		gp->host = alloc(ra.fine, o.bytes, "the host array");
		gp->t_dev = alloc(gp->vram, TRAFFIC_BYTES, "the VRAM traffic");
		gp->desc = alloc(ra.kernarg, sizeof(*gp->desc), "a descriptor");
		gp->args = alloc(ra.kernarg, sizeof(*gp->args), "kernargs");
		*gp->desc = (struct kfdsim_kernel_descriptor){
			.magic = KFDSIM_KERNEL_MAGIC,
			.version = KFDSIM_KERNEL_VERSION,
			.opcode = KFDSIM_KERNEL_LOOP,
		};
		*gp->args = (struct kfdsim_args_loop){
			.buf = (uintptr_t)gp->dev,
			.steps = o.steps,
		};
		for (i = 0; i < o.bytes / 4; i++)
			gp->host[i] = app_initial(g + 1, 0, i);
		s = hsa_queue_create(gp->agent, 256, HSA_QUEUE_TYPE_SINGLE,
				     NULL, NULL, UINT32_MAX, UINT32_MAX,
				     &gp->queue);
		if (s)
			app_fail("hsa_queue_create on gpu %u: 0x%x", g, s);
	}
}

static void usage(void)
{
	fprintf(stderr,
"usage: rocr_app [options]\n"
"  -k, --rounds N       rounds of upload, loop, copies (default 6, >= 2)\n"
"  -s, --steps N        loop kernel steps per round (default 200)\n"
"  -n, --size BYTES     array per GPU, k/M/G suffixes (default 1M)\n"
"  -g, --gpus N         GPUs to use (default 2)\n"
"  -p, --pid-file PATH  write the pid to PATH at start\n"
"  -r, --ready PATH     create PATH once the first dispatch runs\n"
"      --go PATH        wait for PATH before the last round\n"
"      --expected       print the RESULT line a good run prints\n"
"      --make-sem       create libhsakmt's semaphore and exit\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rounds", required_argument, NULL, 'k' },
		{ "steps", required_argument, NULL, 's' },
		{ "size", required_argument, NULL, 'n' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "pid-file", required_argument, NULL, 'p' },
		{ "ready", required_argument, NULL, 'r' },
		{ "go", required_argument, NULL, 'G' },
		{ "expected", no_argument, NULL, 'E' },
		{ "make-sem", no_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t r;
	int c;

	app_name = "rocr_app";
	while ((c = getopt_long(argc, argv, "k:s:n:g:p:r:", lo, NULL)) != -1) {
		switch (c) {
		case 'k': if (!app_parse_u64(optarg, &o.rounds)) usage(); break;
		case 's': if (!app_parse_u64(optarg, &o.steps)) usage(); break;
		case 'n': if (!app_parse_size(optarg, &o.bytes)) usage(); break;
		case 'g': if (!app_parse_u64(optarg, &o.ngpus)) usage(); break;
		case 'p': o.pid_file = optarg; break;
		case 'r': o.ready = optarg; break;
		case 'G': o.go = optarg; break;
		case 'E': o.expected = true; break;
		case 'M': o.make_sem = true; break;
		default: usage();
		}
	}
	if (optind != argc || o.rounds < 2 || o.steps > UINT32_MAX ||
	    !o.ngpus || o.ngpus > MAX_GPUS || !o.bytes || o.bytes % 4 ||
	    o.bytes / 4 > UINT32_MAX)
		usage();
	if (o.make_sem) {
		sem_t *sem = sem_open("hsakmt_semaphore", O_CREAT, 0666, 1);

		if (sem == SEM_FAILED)
			app_fail("sem_open hsakmt_semaphore");
		sem_close(sem);
		return 0;
	}
	if (o.expected) {
		printf("RESULT OK %016" PRIx64 "\n", expected_checksum());
		return 0;
	}
	if (o.pid_file)
		app_write_marker(o.pid_file);

	setup();
	app_log("%u GPUs, %" PRIu64 " rounds of %" PRIu64 " steps over %" PRIu64 " bytes",
		ngpus, o.rounds, o.steps, o.bytes);
	for (r = 0; r + 1 < o.rounds; r++)
		run_round(r);
	app_log("loop done");
	if (o.go) {
		while (!app_exists(o.go))
			app_sleep_ms(50);
		app_log("released");
	}
	run_round(r);
	verify();
	if (hsa_shut_down())
		app_fail("hsa_shut_down");
	return 0;
}
