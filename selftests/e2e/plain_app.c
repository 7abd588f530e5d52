// SPDX-License-Identifier: GPL-2.0
/*
 * plain_app: an ordinary process for the CRIU end-to-end tests. It never
 * opens /dev/kfd; the tests dump and restore it with the KFD plugin loaded
 * to show the plugin leaves such processes alone.
 *
 * It runs the loop kernel's recurrence on the CPU over an array in
 * anonymous memory, one step at a time with a sleep after each, checks the
 * array against the closed form at the end and prints the same kind of
 * RESULT line as gpu_app.
 *
 * Benchmark mode (--hold): fill the given amount of anonymous memory with
 * the pattern gpu_app --hold uses, signal --ready, wait for --go, verify.
 *
 * With --go, the computing mode too waits for that file after its last
 * step, before it verifies and exits: a test releases it only once it has
 * done its checkpoints, so the process is always there to be dumped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "app_util.h"

struct opts {
	uint64_t steps;
	uint64_t size;
	uint64_t seed;
	uint64_t sleep_ms;
	uint64_t hold;
	const char *ready;
	const char *go;
	const char *pid_file;
	bool expected;
};

static struct opts o = {
	.steps = 200,
	.size = 256 * 1024,
	.seed = 1,
	.sleep_ms = 50,
};

static void *anon(uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		app_fail("mmap %llu bytes: %s", (unsigned long long)size,
			 strerror(errno));
	return p;
}

static uint64_t expected_sum(void)
{
	uint64_t i, sum = 0;
	uint32_t a, b;

	app_loop_affine((uint32_t)o.steps, &a, &b);
	for (i = 0; i < o.size / 4; i++)
		sum = app_checksum_add(sum, a * app_initial(o.seed, 0, i) + b,
				       i);
	return app_fold(APP_FOLD_INIT, sum);
}

static void compute(void)
{
	uint64_t n = o.size / 4, i, s, sum = 0, next;
	uint32_t *buf = anon(o.size), a, b, want;

	for (i = 0; i < n; i++)
		buf[i] = app_initial(o.seed, 0, i);
	app_log("computing %llu steps over %llu elements",
		(unsigned long long)o.steps, (unsigned long long)n);
	next = app_now_ms() + 5000;
	for (s = 0; s < o.steps; s++) {
		for (i = 0; i < n; i++)
			buf[i] = buf[i] * APP_LCG_MUL + APP_LCG_ADD +
				 (uint32_t)s;
		if (s == 0 && o.ready)
			app_write_marker(o.ready);
		if (app_now_ms() >= next) {
			app_log("step %llu/%llu", (unsigned long long)s + 1,
				(unsigned long long)o.steps);
			next = app_now_ms() + 5000;
		}
		app_sleep_ms((unsigned int)o.sleep_ms);
	}
	if (!o.steps && o.ready)
		app_write_marker(o.ready);
	app_log("steps done");
	/* Stay alive until released, so a checkpoint always finds us. */
	while (o.go && !app_exists(o.go))
		app_sleep_ms(50);

	app_loop_affine((uint32_t)o.steps, &a, &b);
	for (i = 0; i < n; i++) {
		want = a * app_initial(o.seed, 0, i) + b;
		if (buf[i] != want)
			app_fail("element %llu is %#x, expected %#x",
				 (unsigned long long)i, buf[i], want);
		sum = app_checksum_add(sum, want, i);
	}
	app_log("results verified");
	printf("RESULT OK %016llx\n",
	       (unsigned long long)app_fold(APP_FOLD_INIT, sum));
	fflush(stdout);
}

static void hold(void)
{
	uint64_t *w = anon(o.hold), i, t = app_now_ms();

	for (i = 0; i < o.hold / 8; i++)
		w[i] = app_hold_word(o.seed, i * 8);
	app_log("holding %llu bytes of anonymous memory, filled in %llu ms",
		(unsigned long long)o.hold,
		(unsigned long long)(app_now_ms() - t));
	if (o.ready)
		app_write_marker(o.ready);
	while (o.go && !app_exists(o.go))
		app_sleep_ms(50);
	t = app_now_ms();
	for (i = 0; i < o.hold / 8; i++)
		if (w[i] != app_hold_word(o.seed, i * 8))
			app_fail("word at %llu is %#llx",
				 (unsigned long long)i * 8,
				 (unsigned long long)w[i]);
	app_log("verified %llu bytes in %llu ms", (unsigned long long)o.hold,
		(unsigned long long)(app_now_ms() - t));
	printf("RESULT OK %016llx\n", (unsigned long long)o.hold);
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr,
"Usage: plain_app [OPTIONS]\n"
"  -s, --steps N        steps of the recurrence (default 200)\n"
"  -n, --size BYTES     array size, k/M/G suffixes (default 256k)\n"
"      --seed N         input data seed (default 1)\n"
"      --sleep-ms MS    sleep after each step (default 50)\n"
"  -r, --ready PATH     create PATH once the first step is done\n"
"  -p, --pid-file PATH  write the pid to PATH at start\n"
"      --expected       print the RESULT line a run would print and exit\n"
"      --hold BYTES     benchmark: hold BYTES of anonymous memory\n"
"      --go PATH        verify and exit only once PATH exists\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "steps", required_argument, NULL, 's' },
		{ "size", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 'S' },
		{ "sleep-ms", required_argument, NULL, 'L' },
		{ "ready", required_argument, NULL, 'r' },
		{ "pid-file", required_argument, NULL, 'p' },
		{ "expected", no_argument, NULL, 'E' },
		{ "hold", required_argument, NULL, 'H' },
		{ "go", required_argument, NULL, 'G' },
		{ NULL, 0, NULL, 0 },
	};
	bool ok = true;
	FILE *f;
	int c;

	app_name = "plain_app";
	while ((c = getopt_long(argc, argv, "s:n:r:p:", lo, NULL)) != -1) {
		switch (c) {
		case 's': ok = app_parse_u64(optarg, &o.steps); break;
		case 'n': ok = app_parse_size(optarg, &o.size); break;
		case 'S': ok = app_parse_u64(optarg, &o.seed); break;
		case 'L': ok = app_parse_u64(optarg, &o.sleep_ms); break;
		case 'r': o.ready = optarg; break;
		case 'p': o.pid_file = optarg; break;
		case 'E': o.expected = true; break;
		case 'H': ok = app_parse_size(optarg, &o.hold); break;
		case 'G': o.go = optarg; break;
		default: usage();
		}
		if (!ok) {
			fprintf(stderr, "plain_app: bad value '%s'\n", optarg);
			usage();
		}
	}
	if (optind != argc || o.steps > UINT32_MAX || !o.size || o.size % 4 ||
	    o.sleep_ms > 10000 || o.hold % 8) {
		fprintf(stderr, "plain_app: bad options\n");
		usage();
	}
	if (o.expected) {
		printf("RESULT OK %016llx\n",
		       (unsigned long long)expected_sum());
		return 0;
	}
	app_log("pid %d", (int)getpid());
	if (o.pid_file) {
		f = fopen(o.pid_file, "we");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			app_fail("cannot write %s", o.pid_file);
	}
	if (o.hold)
		hold();
	else
		compute();
	return 0;
}
