// SPDX-License-Identifier: GPL-2.0
/*
 * train_app: a small neural-network training job in HIP, for the CRIU
 * end-to-end test "train" (selftests/e2e/run.sh). Built by Debian's hipcc
 * for gfx906 and run on Debian's HIP runtime (libamdhip64, over ROCr and
 * libhsakmt), so what CRIU checkpoints is a real HIP process.
 *
 * The model: a 2-layer perceptron, 16 inputs -> 32 hidden (ReLU) -> 4
 * outputs, mean-squared error against targets a fixed "teacher" function
 * gives, full-batch plain SGD. The data (-b samples per GPU) is generated
 * on the host from a fixed seed. Data parallel on -g GPUs (default 2): each
 * GPU holds its share of the batch and a copy of the weights, and each step
 * runs on every GPU
 *
 *   fwd_hidden  Z1 = X W1 + b1          (matmul)
 *   relu        H = max(Z1, 0)          (activation)
 *   fwd_out     Y = H W2 + b2           (matmul)
 *   loss_grad   dY = (Y - T) * scale, E = (Y - T)^2
 *   grad_out    gW2 = H^T dY, gb2       (backward matmul), sum of E
 *   grad_hidden dH = (dY W2^T) * [Z1 > 0]
 *   grad_in     gW1 = X^T dH, gb1       (backward matmul)
 *
 * then every GPU's gradient (with its sum of E) is copied to every other
 * GPU (device -> host -> device) and each GPU applies the same update
 *
 *   sgd         W -= lr * (g_0 + g_1 + ...)   (GPU order, always the same)
 *
 * so the weight copies stay bit-identical. No float atomics and every sum
 * runs in one fixed order, so a run is bit-reproducible: the weights hash
 * depends only on the options. Kernels use f32 multiply/add/fma/max and
 * compares only (no division: the 1/N of the mean comes from the host).
 *
 * Output (stdout, flushed per line): "step K begin" and "step K end loss L
 * ms T" around every step, then once the --go file exists (if given)
 *
 *   TRAIN steps N loss_first L0 loss_last L1 step_ms_median M
 *   RESULT OK <weights hash>       or   RESULT FAIL <why>
 *
 * With --stop-at K1,K2,..., the job stops itself (SIGSTOP to itself) in
 * each of those steps, right after it printed "step K begin" and launched
 * the step's kernels on every GPU, so a checkpointer (the e2e test) finds
 * it stopped inside exactly that step, however late it looks, and lets it
 * go on with SIGCONT. Stopping changes nothing the job computes.
 *
 * RESULT OK needs the loss to have decreased and the GPUs' weights to be
 * equal. The weights hash is FNV-1a 64 over the bytes of the final weights.
 *
 * Run it with stdin from /dev/null and stdout to a file, in its own session
 * (setsid), so CRIU can dump it with --shell-job.
 */
#include <hip/hip_runtime.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "app_util.h"
}

#define N_IN		16
#define N_HID		32
#define N_OUT		4
/* Offsets in the flat parameter (and gradient) vector. */
#define P_W1		0
#define P_B1		(P_W1 + N_IN * N_HID)
#define P_W2		(P_B1 + N_HID)
#define P_B2		(P_W2 + N_HID * N_OUT)
#define N_PARAM		(P_B2 + N_OUT)
/* Gradient vector: the parameters' gradients, then the sum of squares. */
#define G_LOSS		N_PARAM
#define N_GRAD		(N_PARAM + 1)
#define MAX_GPUS	8
#define MAX_STOPS	16
#define BLOCK		64

/* ---- device code ---- */

__global__ void fwd_hidden(const float *x, const float *p, float *z1, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int s = i / N_HID, j = i % N_HID;
	float z;

	if (s >= n)
		return;
	z = p[P_B1 + j];
	for (int k = 0; k < N_IN; k++)
		z += x[s * N_IN + k] * p[P_W1 + k * N_HID + j];
	z1[i] = z;
}

__global__ void relu(const float *z, float *h, int count)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < count)
		h[i] = z[i] > 0.0f ? z[i] : 0.0f;
}

__global__ void fwd_out(const float *h, const float *p, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int s = i / N_OUT, o = i % N_OUT;
	float v;

	if (s >= n)
		return;
	v = p[P_B2 + o];
	for (int j = 0; j < N_HID; j++)
		v += h[s * N_HID + j] * p[P_W2 + j * N_OUT + o];
	y[i] = v;
}

__global__ void loss_grad(const float *y, const float *t, float *dy,
			  float *err, float scale, int count)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float d;

	if (i >= count)
		return;
	d = y[i] - t[i];
	dy[i] = d * scale;
	err[i] = d * d;
}

/*
 * gW2[j][o] = sum_s H[s][j] dY[s][o]; then gb2[o] = sum_s dY[s][o]; then
 * one more thread adds up the squared errors (in index order) into
 * g[G_LOSS], so the loss travels with the gradient.
 */
__global__ void grad_out(const float *h, const float *dy, const float *err,
			 float *g, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = 0.0f;

	if (i < N_HID * N_OUT) {
		int j = i / N_OUT, o = i % N_OUT;

		for (int s = 0; s < n; s++)
			v += h[s * N_HID + j] * dy[s * N_OUT + o];
		g[P_W2 + i] = v;
	} else if (i < N_HID * N_OUT + N_OUT) {
		int o = i - N_HID * N_OUT;

		for (int s = 0; s < n; s++)
			v += dy[s * N_OUT + o];
		g[P_B2 + o] = v;
	} else if (i == N_HID * N_OUT + N_OUT) {
		for (int s = 0; s < n * N_OUT; s++)
			v += err[s];
		g[G_LOSS] = v;
	}
}

/* dH[s][j] = sum_o dY[s][o] W2[j][o], where Z1[s][j] > 0, else 0. */
__global__ void grad_hidden(const float *dy, const float *p, const float *z1,
			    float *dh, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int s = i / N_HID, j = i % N_HID;
	float v = 0.0f;

	if (s >= n)
		return;
	for (int o = 0; o < N_OUT; o++)
		v += dy[s * N_OUT + o] * p[P_W2 + j * N_OUT + o];
	dh[i] = z1[i] > 0.0f ? v : 0.0f;
}

/* gW1[k][j] = sum_s X[s][k] dH[s][j]; then gb1[j] = sum_s dH[s][j]. */
__global__ void grad_in(const float *x, const float *dh, float *g, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = 0.0f;

	if (i < N_IN * N_HID) {
		int k = i / N_HID, j = i % N_HID;

		for (int s = 0; s < n; s++)
			v += x[s * N_IN + k] * dh[s * N_HID + j];
		g[P_W1 + i] = v;
	} else if (i < N_IN * N_HID + N_HID) {
		int j = i - N_IN * N_HID;

		for (int s = 0; s < n; s++)
			v += dh[s * N_HID + j];
		g[P_B1 + j] = v;
	}
}

/* W -= lr * (g[0] + g[1] + ...), the gradients of all GPUs in GPU order. */
__global__ void sgd(float *p, const float *g, int ngpus, float lr)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float sum;

	if (i >= N_PARAM)
		return;
	sum = g[i];
	for (int d = 1; d < ngpus; d++)
		sum += g[d * N_GRAD + i];
	p[i] -= lr * sum;
}

/* ---- host ---- */

static struct {
	unsigned int steps, batch, ngpus;
	uint64_t seed;
	float lr;
	const char *pid_file, *ready, *go;
	unsigned int nstops, stops[MAX_STOPS];
} o = { 12, 256, 2, 1, 0.05f, NULL, NULL, NULL, 0, { 0 } };

struct gpu {
	float *x, *t, *p, *z1, *h, *y, *dy, *err, *dh;
	/* Every GPU's gradient, GPU d's at [d * N_GRAD]. */
	float *g;
};

#define CK(call) do {							\
	hipError_t e_ = (call);						\
	if (e_ != hipSuccess)						\
		app_fail("%s: %s", #call, hipGetErrorString(e_));	\
} while (0)

static uint64_t rng_state;

static uint32_t rng_next(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

/* Uniform in [-1, 1), a multiple of 2^-23. */
static float rng_unit(void)
{
	return (float)((int32_t)(rng_next() >> 8) - (1 << 23)) / (float)(1 << 23);
}

static unsigned int blocks(unsigned int threads)
{
	return (threads + BLOCK - 1) / BLOCK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
"usage: %s [options]\n"
"  -s, --steps N      training steps (default 12)\n"
"  -b, --batch N      samples per GPU (default 256)\n"
"  -g, --gpus N       GPUs to use (default 2)\n"
"      --seed N       data and initial weights seed (default 1)\n"
"  -p, --pid-file P   write the pid to P at start\n"
"  -r, --ready P      create P once the first step is done\n"
"      --go P         wait for P before printing the result\n"
"      --stop-at LIST stop (SIGSTOP) inside each of these steps, after\n"
"                     launching its kernels (LIST: K1,K2,..., up to 16)\n",
		argv0);
	exit(2);
}

/* --stop-at K1,K2,...: step numbers, each below 1000000. */
static void parse_stops(const char *arg, const char *argv0)
{
	char buf[256], *tok, *save = NULL;
	uint64_t v;

	if (strlen(arg) >= sizeof(buf))
		usage(argv0);
	strcpy(buf, arg);
	o.nstops = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o.nstops == MAX_STOPS || !app_parse_u64(tok, &v) ||
		    v >= 1000000)
			usage(argv0);
		o.stops[o.nstops++] = v;
	}
	if (!o.nstops)
		usage(argv0);
}

static bool stop_in(unsigned int step)
{
	for (unsigned int i = 0; i < o.nstops; i++)
		if (o.stops[i] == step)
			return true;
	return false;
}

static void parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "steps", required_argument, NULL, 's' },
		{ "batch", required_argument, NULL, 'b' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 'S' },
		{ "pid-file", required_argument, NULL, 'p' },
		{ "ready", required_argument, NULL, 'r' },
		{ "go", required_argument, NULL, 'G' },
		{ "stop-at", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "s:b:g:p:r:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'b':
		case 'g':
			if (!app_parse_u64(optarg, &v) || !v || v > 1000000)
				usage(argv[0]);
			if (c == 's')
				o.steps = v;
			else if (c == 'b')
				o.batch = v;
			else if (v <= MAX_GPUS)
				o.ngpus = v;
			else
				usage(argv[0]);
			break;
		case 'S':
			if (!app_parse_u64(optarg, &o.seed))
				usage(argv[0]);
			break;
		case 'p': o.pid_file = optarg; break;
		case 'r': o.ready = optarg; break;
		case 'G': o.go = optarg; break;
		case 'T': parse_stops(optarg, argv[0]); break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
}

/* The teacher: a fixed function of the inputs the network learns. */
static void teacher(const float *x, float *t)
{
	for (int q = 0; q < N_OUT; q++) {
		double v = 0.1 * q;

		for (int k = 0; k < N_IN; k++)
			v += x[k] * ((k * 7 + q * 3) % 11 - 5) * 0.06;
		t[q] = (float)(v > 0 ? v : 0.3 * v);
	}
}

static void upload(struct gpu *gp, int d, const float *x, const float *t,
		   const float *p)
{
	size_t n = o.batch;

	CK(hipSetDevice(d));
	CK(hipMalloc(&gp->x, n * N_IN * 4));
	CK(hipMalloc(&gp->t, n * N_OUT * 4));
	CK(hipMalloc(&gp->p, N_PARAM * 4));
	CK(hipMalloc(&gp->z1, n * N_HID * 4));
	CK(hipMalloc(&gp->h, n * N_HID * 4));
	CK(hipMalloc(&gp->dh, n * N_HID * 4));
	CK(hipMalloc(&gp->y, n * N_OUT * 4));
	CK(hipMalloc(&gp->dy, n * N_OUT * 4));
	CK(hipMalloc(&gp->err, n * N_OUT * 4));
	CK(hipMalloc(&gp->g, (size_t)o.ngpus * N_GRAD * 4));
	CK(hipMemcpy(gp->x, x + (size_t)d * n * N_IN, n * N_IN * 4,
		     hipMemcpyHostToDevice));
	CK(hipMemcpy(gp->t, t + (size_t)d * n * N_OUT, n * N_OUT * 4,
		     hipMemcpyHostToDevice));
	CK(hipMemcpy(gp->p, p, N_PARAM * 4, hipMemcpyHostToDevice));
}

/* Forward and backward pass on GPU d: its gradient in g[d * N_GRAD]. */
static void launch_pass(struct gpu *gp, int d, float scale)
{
	int n = o.batch;

	CK(hipSetDevice(d));
	hipLaunchKernelGGL(fwd_hidden, dim3(blocks(n * N_HID)), dim3(BLOCK), 0, 0,
			   gp->x, gp->p, gp->z1, n);
	hipLaunchKernelGGL(relu, dim3(blocks(n * N_HID)), dim3(BLOCK), 0, 0,
			   gp->z1, gp->h, n * N_HID);
	hipLaunchKernelGGL(fwd_out, dim3(blocks(n * N_OUT)), dim3(BLOCK), 0, 0,
			   gp->h, gp->p, gp->y, n);
	hipLaunchKernelGGL(loss_grad, dim3(blocks(n * N_OUT)), dim3(BLOCK), 0, 0,
			   gp->y, gp->t, gp->dy, gp->err, scale, n * N_OUT);
	hipLaunchKernelGGL(grad_out, dim3(blocks(N_HID * N_OUT + N_OUT + 1)),
			   dim3(BLOCK), 0, 0, gp->h, gp->dy, gp->err,
			   gp->g + (size_t)d * N_GRAD, n);
	hipLaunchKernelGGL(grad_hidden, dim3(blocks(n * N_HID)), dim3(BLOCK), 0, 0,
			   gp->dy, gp->p, gp->z1, gp->dh, n);
	hipLaunchKernelGGL(grad_in, dim3(blocks(N_IN * N_HID + N_HID)),
			   dim3(BLOCK), 0, 0, gp->x, gp->dh,
			   gp->g + (size_t)d * N_GRAD, n);
	CK(hipGetLastError());
}

int main(int argc, char **argv)
{
	static struct gpu gpus[MAX_GPUS];
	size_t total, n;
	float *x, *t, *p, *g, *pw, scale;
	double loss, loss_first = 0, *step_ms;
	uint64_t hash, t0;
	int count;

	app_name = "train_app";
	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.pid_file)
		app_write_marker(o.pid_file);

	n = o.batch;
	total = n * o.ngpus;
	x = (float *)malloc(total * N_IN * 4);
	t = (float *)malloc(total * N_OUT * 4);
	p = (float *)malloc(N_PARAM * 4);
	pw = (float *)malloc(N_PARAM * 4);
	g = (float *)malloc(N_GRAD * 4);
	step_ms = (double *)calloc(o.steps, sizeof(*step_ms));
	if (!x || !t || !p || !pw || !g || !step_ms)
		app_fail("out of memory");

	rng_state = 0x9e3779b97f4a7c15ULL ^ o.seed;
	for (size_t s = 0; s < total; s++) {
		for (int k = 0; k < N_IN; k++)
			x[s * N_IN + k] = rng_unit();
		teacher(x + s * N_IN, t + s * N_OUT);
	}
	/* Small initial weights (about 1/sqrt(fan-in)), zero biases. */
	for (int i = 0; i < N_PARAM; i++)
		p[i] = 0;
	for (int i = 0; i < N_IN * N_HID; i++)
		p[P_W1 + i] = rng_unit() * 0.25f;
	for (int i = 0; i < N_HID * N_OUT; i++)
		p[P_W2 + i] = rng_unit() * 0.18f;
	/* d(mean of squares)/dY: the 2/N as a host-computed factor. */
	scale = (float)(2.0 / ((double)total * N_OUT));

	if (hipGetDeviceCount(&count) != hipSuccess || count < (int)o.ngpus)
		app_fail("%u GPUs wanted, HIP sees %d", o.ngpus, count);
	for (unsigned int d = 0; d < o.ngpus; d++)
		upload(&gpus[d], d, x, t, p);
	app_log("%u GPUs, %zu samples each, %d parameters, %u steps",
		o.ngpus, n, N_PARAM, o.steps);

	for (unsigned int step = 0; step < o.steps; step++) {
		t0 = app_now_ms();
		printf("step %u begin\n", step);
		for (unsigned int d = 0; d < o.ngpus; d++)
			launch_pass(&gpus[d], d, scale);
		/* Kernels in flight; the checkpointer takes over from here. */
		if (stop_in(step) && raise(SIGSTOP))
			app_fail("raise(SIGSTOP) in step %u failed", step);
		/*
		 * All-gather of the gradients through the host; the loss of
		 * this step's forward pass comes with them, added up in GPU
		 * order.
		 */
		loss = 0;
		for (unsigned int d = 0; d < o.ngpus; d++) {
			CK(hipSetDevice(d));
			CK(hipMemcpy(g, gpus[d].g + (size_t)d * N_GRAD,
				     N_GRAD * 4, hipMemcpyDeviceToHost));
			loss += g[G_LOSS];
			for (unsigned int e = 0; e < o.ngpus; e++) {
				if (e == d)
					continue;
				CK(hipSetDevice(e));
				CK(hipMemcpy(gpus[e].g + (size_t)d * N_GRAD, g,
					     N_GRAD * 4, hipMemcpyHostToDevice));
			}
		}
		loss /= (double)total * N_OUT;
		if (step == 0)
			loss_first = loss;
		for (unsigned int d = 0; d < o.ngpus; d++) {
			CK(hipSetDevice(d));
			hipLaunchKernelGGL(sgd, dim3(blocks(N_PARAM)), dim3(BLOCK),
					   0, 0, gpus[d].p, gpus[d].g, (int)o.ngpus,
					   o.lr);
			CK(hipGetLastError());
		}
		for (unsigned int d = 0; d < o.ngpus; d++) {
			CK(hipSetDevice(d));
			CK(hipDeviceSynchronize());
		}
		step_ms[step] = (double)(app_now_ms() - t0);
		printf("step %u end loss %.9g ms %.0f\n", step, loss,
		       step_ms[step]);
		if (step == 0 && o.ready)
			app_write_marker(o.ready);
	}

	if (o.go)
		while (!app_exists(o.go))
			app_sleep_ms(50);

	/* The final weights of every GPU; they must all be equal. */
	CK(hipSetDevice(0));
	CK(hipMemcpy(p, gpus[0].p, N_PARAM * 4, hipMemcpyDeviceToHost));
	for (unsigned int d = 1; d < o.ngpus; d++) {
		CK(hipSetDevice(d));
		CK(hipMemcpy(pw, gpus[d].p, N_PARAM * 4, hipMemcpyDeviceToHost));
		if (memcmp(p, pw, N_PARAM * 4))
			app_fail("the weights of GPU %u differ from GPU 0's", d);
	}
	hash = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < N_PARAM * 4; i++) {
		hash ^= ((const unsigned char *)p)[i];
		hash *= 0x100000001b3ULL;
	}
	qsort(step_ms, o.steps, sizeof(*step_ms), cmp_double);
	printf("TRAIN steps %u loss_first %.9g loss_last %.9g step_ms_median %.0f\n",
	       o.steps, loss_first, loss, step_ms[o.steps / 2]);
	if (!(loss < loss_first))
		app_fail("the loss did not decrease: %.9g -> %.9g",
			 loss_first, loss);
	printf("RESULT OK %016" PRIx64 "\n", hash);
	return 0;
}
