// SPDX-License-Identifier: GPL-2.0
/*
 * hip_e2e_app: a HIP program for the CRIU end-to-end tests (the hip and
 * hip-other-node tests of run.sh), built by Debian's hipcc for gfx906 and
 * run on Debian's unmodified HIP runtime and ROCr.
 *
 * On each of -g GPUs it launches one kernel, "work": -b workgroups of 256
 * work-items, each running -s steps of integer work (an LCG step, a
 * xorshift and the step number) split into 8 chunks, with a global atomic
 * add of its value into one of 64 accumulators in VRAM every 16 steps, an
 * atomic increment of the GPU's progress counter (coherent host memory)
 * after every chunk, and its final value stored in VRAM.
 *
 * The last workgroup of each GPU parks its waves after chunk 4: they spin
 * on a release flag in coherent host memory. So once the progress counter
 * of every GPU shows exactly the parked amount of work, the kernels are
 * known to be in flight, half done, whatever the speed of the machine:
 * the ready marker is written then, and a checkpoint taken after it stops
 * waves in the middle of their loop (their registers live only in the
 * GPU, or, preempted, in the queue's context save area). When the --go
 * file exists the program checks the counters still show the parked amount
 * (a restore that lost the parked waves' progress or ran work twice would
 * move them), sets the flag, waits for the kernels and compares every
 * value, every accumulator and the final counters with the same
 * computation on the host CPU, then prints "RESULT OK <checksum>" (which
 * depends only on the options) or "RESULT FAIL <why>". --expected prints
 * the RESULT line a good run prints, without touching a GPU.
 *
 * Nothing here is specific to kfdsim: on an AMD gfx906 GPU it runs as is.
 * Run it with stdin from /dev/null and stdout to a file, in its own session
 * (setsid), so CRIU can dump it with --shell-job.
 */
#include <hip/hip_runtime.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "app_util.h"
}

#define WG_SIZE		256
#define CHUNKS		8
#define PARK_CHUNK	4	/* the last workgroup parks after this many */
#define NACC		64
#define ACC_EVERY	16	/* steps between two atomic adds */
#define MAX_GPUS	8
/* How long the parked kernels may take to show up (a hang guard). */
#define PARK_LIMIT_S	600

static struct {
	uint64_t steps, blocks, ngpus, park_limit_s;
	const char *pid_file, *ready, *go;
	bool expected;
} o = { .steps = 4096, .blocks = 4, .ngpus = 2, .park_limit_s = PARK_LIMIT_S };

struct gpu {
	uint32_t *out;		/* one value per work-item, VRAM */
	uint32_t *acc;		/* NACC accumulators, VRAM */
	uint32_t *h_out, *h_acc;
};

static struct gpu gpus[MAX_GPUS];
/* Coherent host memory: progress[g] per GPU, then the release flag. */
static uint32_t *shared;

__host__ __device__ static inline uint32_t first_value(uint32_t seed,
							uint32_t t)
{
	return (t * 0x9e3779b9u) ^ seed;
}

__host__ __device__ static inline uint32_t step(uint32_t x, uint32_t i)
{
	x = x * APP_LCG_MUL + APP_LCG_ADD;
	x ^= x >> 13;
	return x + i;
}

__host__ __device__ static inline uint32_t acc_slot(uint32_t x)
{
	return (x >> 9) % NACC;
}

__global__ void __launch_bounds__(WG_SIZE)
work(uint32_t seed, uint32_t steps, uint32_t *out, uint32_t *acc,
     uint32_t *progress, const uint32_t *release)
{
	uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t per = steps / CHUNKS, x = first_value(seed, t), i = 0;
	bool parks = blockIdx.x == gridDim.x - 1;

	for (uint32_t c = 0; c < CHUNKS; c++) {
		for (uint32_t k = 0; k < per; k++, i++) {
			x = step(x, i);
			if (i % ACC_EVERY == ACC_EVERY - 1)
				atomicAdd(&acc[acc_slot(x)], x);
		}
		atomicAdd(progress, 1u);
		if (parks && c == PARK_CHUNK - 1) {
			while (!*(const volatile uint32_t *)release)
				__builtin_amdgcn_s_sleep(16);
		}
	}
	out[t] = x;
}

static uint32_t gpu_seed(unsigned int g)
{
	return 0x5eed0000u + g * 0x10001u;
}

static uint64_t work_items(void)
{
	return o.blocks * WG_SIZE;
}

/* The counter value with every wave of the last workgroup parked. */
static uint32_t parked_progress(void)
{
	return (uint32_t)((work_items() - WG_SIZE) * CHUNKS +
			  WG_SIZE * PARK_CHUNK);
}

/* The kernel on the host CPU: the values and the accumulators of GPU @g. */
static void reference(unsigned int g, uint32_t *out, uint32_t *acc)
{
	uint32_t steps = (uint32_t)(o.steps / CHUNKS * CHUNKS);

	memset(acc, 0, NACC * sizeof(*acc));
	for (uint64_t t = 0; t < work_items(); t++) {
		uint32_t x = first_value(gpu_seed(g), (uint32_t)t);

		for (uint32_t i = 0; i < steps; i++) {
			x = step(x, i);
			if (i % ACC_EVERY == ACC_EVERY - 1)
				acc[acc_slot(x)] += x;
		}
		out[t] = x;
	}
}

/*
 * Compare GPU @g's results (or, with @h_out NULL, only compute them) and
 * fold them into the checksum.
 */
static uint64_t check_gpu(unsigned int g, const uint32_t *h_out,
			  const uint32_t *h_acc, uint64_t h)
{
	uint64_t n = work_items(), sum = 0;
	uint32_t *out, acc[NACC];

	out = (uint32_t *)malloc(n * sizeof(*out));
	if (!out)
		app_fail("out of memory for the reference");
	reference(g, out, acc);
	for (uint64_t t = 0; t < n; t++) {
		if (h_out && h_out[t] != out[t])
			app_fail("gpu %u: work-item %" PRIu64 " ended with %#x, expected %#x",
				 g, t, h_out[t], out[t]);
		sum = app_checksum_add(sum, out[t], t);
	}
	for (unsigned int k = 0; k < NACC; k++) {
		if (h_acc && h_acc[k] != acc[k])
			app_fail("gpu %u: accumulator %u is %#x, expected %#x",
				 g, k, h_acc[k], acc[k]);
		sum = app_checksum_add(sum, acc[k], n + k);
	}
	free(out);
	return app_fold(h, sum);
}

#define CK(x, what) do {						\
	hipError_t e_ = (x);						\
	if (e_ != hipSuccess)						\
		app_fail("%s: %s", what, hipGetErrorString(e_));	\
} while (0)

static void launch(unsigned int g)
{
	struct gpu *gp = &gpus[g];
	size_t bytes = work_items() * sizeof(uint32_t);

	CK(hipSetDevice((int)g), "hipSetDevice");
	CK(hipMalloc((void **)&gp->out, bytes), "hipMalloc out");
	CK(hipMalloc((void **)&gp->acc, NACC * sizeof(uint32_t)),
	   "hipMalloc acc");
	CK(hipMemset(gp->acc, 0, NACC * sizeof(uint32_t)), "hipMemset acc");
	CK(hipDeviceSynchronize(), "hipMemset");
	gp->h_out = (uint32_t *)malloc(bytes);
	gp->h_acc = (uint32_t *)malloc(NACC * sizeof(uint32_t));
	if (!gp->h_out || !gp->h_acc)
		app_fail("out of memory");
	hipLaunchKernelGGL(work, dim3((uint32_t)o.blocks), dim3(WG_SIZE), 0, 0,
			   gpu_seed(g), (uint32_t)o.steps, gp->out, gp->acc,
			   &shared[g], (const uint32_t *)&shared[MAX_GPUS]);
	CK(hipGetLastError(), "launching work");
}

static uint32_t progress(unsigned int g)
{
	return __atomic_load_n(&shared[g], __ATOMIC_ACQUIRE);
}

/* Wait until every GPU's kernel has its last workgroup parked. */
static void wait_parked(void)
{
	uint64_t start = app_now_ms();
	unsigned int g;

	for (g = 0; g < o.ngpus; g++) {
		while (progress(g) != parked_progress()) {
			if (progress(g) > parked_progress())
				app_fail("gpu %u: progress %u passed the parked %u",
					 g, progress(g), parked_progress());
			if (app_now_ms() - start > o.park_limit_s * 1000)
				app_fail("gpu %u: progress %u, never reached the parked %u",
					 g, progress(g), parked_progress());
			app_sleep_ms(20);
		}
	}
}

static void finish(void)
{
	uint64_t h = APP_FOLD_INIT;
	unsigned int g;

	for (g = 0; g < o.ngpus; g++) {
		CK(hipSetDevice((int)g), "hipSetDevice");
		CK(hipDeviceSynchronize(), "the work kernel");
		if (progress(g) != work_items() * CHUNKS)
			app_fail("gpu %u: progress %u at the end, expected %" PRIu64,
				 g, progress(g), work_items() * CHUNKS);
	}
	app_log("loop done");
	for (g = 0; g < o.ngpus; g++) {
		struct gpu *gp = &gpus[g];

		CK(hipSetDevice((int)g), "hipSetDevice");
		CK(hipMemcpy(gp->h_out, gp->out, work_items() * sizeof(uint32_t),
			     hipMemcpyDeviceToHost), "hipMemcpy out");
		CK(hipMemcpy(gp->h_acc, gp->acc, NACC * sizeof(uint32_t),
			     hipMemcpyDeviceToHost), "hipMemcpy acc");
		h = check_gpu(g, gp->h_out, gp->h_acc, h);
	}
	printf("%sRESULT OK %016" PRIx64 "\n", app_result_prefix, h);
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr,
"usage: hip_e2e_app [options]\n"
"  -s, --steps N        steps per work-item, a multiple of 8 (default 4096)\n"
"  -b, --blocks N       workgroups of 256 per GPU, >= 1 (default 4)\n"
"  -g, --gpus N         GPUs to use (default 2)\n"
"  -p, --pid-file PATH  write the pid to PATH at start\n"
"  -r, --ready PATH     create PATH once every kernel is parked half way\n"
"      --go PATH        wait for PATH before the kernels may finish\n"
"      --park-limit S   fail if the kernels are not parked within S\n"
"                       seconds of their launch (default 600)\n"
"      --expected       print the RESULT line a good run prints\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "steps", required_argument, NULL, 's' },
		{ "blocks", required_argument, NULL, 'b' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "pid-file", required_argument, NULL, 'p' },
		{ "ready", required_argument, NULL, 'r' },
		{ "go", required_argument, NULL, 'G' },
		{ "expected", no_argument, NULL, 'E' },
		{ "park-limit", required_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t h = APP_FOLD_INIT;
	unsigned int g;
	int c, n;

	app_name = "hip_e2e_app";
	while ((c = getopt_long(argc, argv, "s:b:g:p:r:", lo, NULL)) != -1) {
		switch (c) {
		case 's': if (!app_parse_u64(optarg, &o.steps)) usage(); break;
		case 'b': if (!app_parse_u64(optarg, &o.blocks)) usage(); break;
		case 'g': if (!app_parse_u64(optarg, &o.ngpus)) usage(); break;
		case 'p': o.pid_file = optarg; break;
		case 'r': o.ready = optarg; break;
		case 'G': o.go = optarg; break;
		case 'E': o.expected = true; break;
		case 'L':
			if (!app_parse_u64(optarg, &o.park_limit_s))
				usage();
			break;
		default: usage();
		}
	}
	if (optind != argc || !o.steps || o.steps % CHUNKS ||
	    o.steps > UINT32_MAX || !o.blocks || o.blocks > 4096 ||
	    !o.ngpus || o.ngpus > MAX_GPUS || !o.park_limit_s ||
	    o.park_limit_s > 86400)
		usage();
	if (o.expected) {
		for (g = 0; g < o.ngpus; g++)
			h = check_gpu(g, NULL, NULL, h);
		printf("RESULT OK %016" PRIx64 "\n", h);
		return 0;
	}
	if (o.pid_file)
		app_write_marker(o.pid_file);

	CK(hipGetDeviceCount(&n), "hipGetDeviceCount");
	if ((uint64_t)n < o.ngpus)
		app_fail("%d GPUs, %" PRIu64 " wanted", n, o.ngpus);
	CK(hipHostMalloc((void **)&shared, (MAX_GPUS + 1) * sizeof(uint32_t),
			 hipHostMallocCoherent | hipHostMallocPortable),
	   "hipHostMalloc");
	memset(shared, 0, (MAX_GPUS + 1) * sizeof(uint32_t));
	app_log("%" PRIu64 " GPUs, %" PRIu64 " workgroups of %d, %" PRIu64 " steps each",
		o.ngpus, o.blocks, WG_SIZE, o.steps);
	for (g = 0; g < o.ngpus; g++) {
		launch(g);
		app_log("gpu %u: work launched", g);
	}
	wait_parked();
	app_log("parked: every GPU's progress is %u of %" PRIu64,
		parked_progress(), work_items() * CHUNKS);
	if (o.ready)
		app_write_marker(o.ready);
	if (o.go) {
		while (!app_exists(o.go))
			app_sleep_ms(50);
		app_log("released");
	}
	for (g = 0; g < o.ngpus; g++)
		if (progress(g) != parked_progress())
			app_fail("gpu %u: progress %u before the release, expected the parked %u",
				 g, progress(g), parked_progress());
	app_log("progress still %u on every GPU: releasing the parked waves",
		parked_progress());
	__atomic_store_n(&shared[MAX_GPUS], 1, __ATOMIC_RELEASE);
	finish();
	return 0;
}
