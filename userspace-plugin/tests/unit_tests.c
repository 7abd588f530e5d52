// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the kfd plugin's parts that need no GPU: option
 * parsing, the checksum, topology reading (from a fake sysfs tree) and GPU
 * matching, image records, the contents copy engine (with memfds
 * standing in for dma-bufs) and the parallel restore's hand-over to
 * worker threads (a forked child plays the restored process).
 *
 *   make -C userspace-plugin check
 */
#define _GNU_SOURCE
#include <errno.h>
#include <semaphore.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kfd_ioctl.h>
#include <linux/kfdsim.h>

#include "bo_copy.h"
#include "chain.h"
#include "checksum.h"
#include "gpu_scan.h"
#include "hsakmt_shm.h"
#include "images.h"
#include "restore_workers.h"
#include "topology.h"
#include "util.h"

static int failures, checks;

#define CHECK(cond)							\
	do {								\
		checks++;						\
		if (!(cond)) {						\
			failures++;					\
			fprintf(stderr, "FAIL %s:%d: %s\n", __func__,	\
				__LINE__, #cond);			\
		}							\
	} while (0)

static char tmpdir[64];

/* ---- helpers ---- */

static void put_file(const char *fmt, const char *content, ...)
	__attribute__((format(printf, 1, 3)));

static void put_file(const char *fmt, const char *content, ...)
{
	char path[512], dir[512], *slash;
	va_list ap;
	FILE *f;

	va_start(ap, content);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	/* mkdir -p of the parent */
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(content, f);
	fclose(f);
}

struct fake_gpu {
	uint32_t gpu_id;
	uint32_t minor;
	uint32_t simd_count;
	uint64_t vram;
	uint32_t fw;
};

/* A kfdsim-like topology: node 0 a CPU, then one node per GPU. */
static void make_topology(const char *root, const struct fake_gpu *g, int n)
{
	char props[2048], cmd[600], id[32];
	int i;

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		exit(2);
	put_file("%s/nodes/0/gpu_id", "0\n", root);
	put_file("%s/nodes/0/properties",
		 "cpu_cores_count 2\nsimd_count 0\nmem_banks_count 1\n", root);
	for (i = 0; i < n; i++) {
		snprintf(props, sizeof(props),
			 "cpu_cores_count 0\nsimd_count %u\nmem_banks_count 1\n"
			 "caches_count 101\nio_links_count 1\n"
			 "max_waves_per_simd 10\nlds_size_in_kb 64\n"
			 "gds_size_in_kb 0\nnum_gws 0\nwave_front_size 64\n"
			 "array_count 4\nsimd_arrays_per_engine 1\n"
			 "cu_per_simd_array 15\nsimd_per_cu 4\n"
			 "max_slots_scratch_cu 32\ngfx_target_version 90006\n"
			 "vendor_id 4098\ndevice_id 26273\nlocation_id %u\n"
			 "drm_render_minor %u\nnum_sdma_engines 2\n"
			 "num_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 8\n"
			 "num_cp_queues 24\nlocal_mem_size %" PRIu64 "\n"
			 "fw_version %u\ncapability 8832\nsdma_fw_version 145\n"
			 "unique_id %u\n",
			 g[i].simd_count, (0x10 + i) << 8, g[i].minor,
			 g[i].vram, g[i].fw, 1000 + i);
		snprintf(id, sizeof(id), "%u\n", g[i].gpu_id);
		put_file("%s/nodes/%d/gpu_id", id, root, i + 1);
		put_file("%s/nodes/%d/properties", props, root, i + 1);
		put_file("%s/nodes/%d/name", "gfx906\n", root, i + 1);
		snprintf(props, sizeof(props),
			 "heap_type 1\nsize_in_bytes %" PRIu64 "\nflags 0\n",
			 g[i].vram);
		put_file("%s/nodes/%d/mem_banks/0/properties", props, root,
			 i + 1);
		put_file("%s/nodes/%d/io_links/0/properties",
			 "type 2\nnode_from 1\nnode_to 0\nweight 20\n", root,
			 i + 1);
	}
}

/*
 * The test binary is linked with --wrap=fopen: opening a path that
 * contains @eperm_path fails with EPERM, as amdkfd's topology files of a
 * GPU the device cgroup hides do (root cannot get that from a plain file).
 */
static const char *eperm_path;
FILE *__real_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode);

FILE *__wrap_fopen(const char *path, const char *mode)
{
	if (eperm_path && strstr(path, eperm_path)) {
		errno = EPERM;
		return NULL;
	}
	return __real_fopen(path, mode);
}

static int read_topology(const char *root, struct kp_topology *t)
{
	setenv(KP_TOPOLOGY_ENV, root, 1);
	return kp_topology_read(t);
}

/* ---- tests ---- */

static void test_parse(void)
{
	enum kp_copy_mode mode;
	uint64_t v;
	bool b;

	CHECK(!kp_parse_size("4096", &v) && v == 4096);
	CHECK(!kp_parse_size("64k", &v) && v == 64 << 10);
	CHECK(!kp_parse_size("64M", &v) && v == 64 << 20);
	CHECK(!kp_parse_size("2G", &v) && v == 2ULL << 30);
	CHECK(!kp_parse_size("3g", &v) && v == 3ULL << 30);
	CHECK(kp_parse_size("0", &v) == -EINVAL);
	CHECK(kp_parse_size("", &v) == -EINVAL);
	CHECK(kp_parse_size("12X", &v) == -EINVAL);
	CHECK(kp_parse_size("12MB", &v) == -EINVAL);
	CHECK(kp_parse_size("-5", &v) == -EINVAL);
	CHECK(kp_parse_size("99999999999999999999", &v) == -EINVAL);
	CHECK(kp_parse_size("17179869184G", &v) == -EINVAL);
	CHECK(!kp_parse_bool("yes", &b) && b);
	CHECK(!kp_parse_bool("0", &b) && !b);
	CHECK(!kp_parse_bool("NO", &b) && !b);
	CHECK(kp_parse_bool("maybe", &b) == -EINVAL);

	setenv("KP_TEST_BOOL", "no", 1);
	CHECK(!kp_env_bool("KP_TEST_BOOL", true));
	setenv("KP_TEST_BOOL", "junk", 1);
	CHECK(kp_env_bool("KP_TEST_BOOL", true));
	unsetenv("KP_TEST_BOOL");
	CHECK(!kp_env_bool("KP_TEST_BOOL", false));

	setenv("KFD_MAX_BUFFER_SIZE", "1M", 1);
	CHECK(kp_copy_buffer_size() == 1 << 20);
	setenv("KFD_MAX_BUFFER_SIZE", "lots", 1);
	CHECK(kp_copy_buffer_size() == KP_DEFAULT_BUFFER_SIZE);
	unsetenv("KFD_MAX_BUFFER_SIZE");
	CHECK(kp_copy_buffer_size() == KP_DEFAULT_BUFFER_SIZE);

	CHECK(!kp_copy_mode_parse("cpu", &mode) && mode == KP_COPY_CPU);
	CHECK(!kp_copy_mode_parse("SDMA", &mode) && mode == KP_COPY_SDMA);
	CHECK(!kp_copy_mode_parse("auto", &mode) && mode == KP_COPY_AUTO);
	CHECK(kp_copy_mode_parse("gpu", &mode) == -EINVAL);
	CHECK(kp_copy_mode_parse("", &mode) == -EINVAL);
	setenv("KFD_BO_COPY", "cpu", 1);
	CHECK(kp_copy_mode_from_env() == KP_COPY_CPU);
	setenv("KFD_BO_COPY", "fast", 1);
	CHECK(kp_copy_mode_from_env() == KP_COPY_AUTO);
	CHECK(strstr(kp_log_last(), "KFD_BO_COPY"));
	unsetenv("KFD_BO_COPY");
	CHECK(kp_copy_mode_from_env() == KP_COPY_AUTO);
	CHECK(!strcmp(kp_copy_mode_name(KP_COPY_SDMA), "sdma"));
}

static void test_checksum(void)
{
	uint8_t buf[1000];
	struct kp_sum s;
	uint64_t whole;
	size_t i, cut;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	whole = kp_sum_buf(buf, sizeof(buf));
	/* Any split gives the same sum. */
	for (cut = 0; cut <= sizeof(buf); cut += 13) {
		kp_sum_init(&s);
		kp_sum_update(&s, buf, cut);
		kp_sum_update(&s, buf + cut, sizeof(buf) - cut);
		CHECK(kp_sum_final(&s) == whole);
	}
	kp_sum_init(&s);
	for (i = 0; i < sizeof(buf); i++)
		kp_sum_update(&s, buf + i, 1);
	CHECK(kp_sum_final(&s) == whole);
	/* Every single-bit change is seen, so is the length. */
	for (i = 0; i < sizeof(buf) * 8; i += 7) {
		buf[i / 8] ^= 1 << (i % 8);
		CHECK(kp_sum_buf(buf, sizeof(buf)) != whole);
		buf[i / 8] ^= 1 << (i % 8);
	}
	CHECK(kp_sum_buf(buf, sizeof(buf) - 1) != whole);
	memset(buf, 0, sizeof(buf));
	CHECK(kp_sum_buf(buf, 8) != kp_sum_buf(buf, 16));
	CHECK(kp_sum_buf(buf, 0) != kp_sum_buf(buf, 1));
}

/*
 * The zero test: zeros of every length up to a few of its 256-byte steps,
 * at every alignment, are zero; one non-zero byte anywhere in them (the
 * first byte, inside a step, the last word, the tail) is seen.
 */
static void test_is_zero(void)
{
	static uint8_t buf[8 + 3 * 256 + 16];
	size_t a, len, i;
	bool ok = true;

	for (a = 0; a < 8; a++) {
		for (len = 0; len <= 3 * 256 + 9; len++) {
			ok &= kp_is_zero(buf + a, len);
			for (i = 0; i < len; i += (i < 16 || len - i < 16) ? 1 : 29) {
				buf[a + i] = 0x80;
				ok &= !kp_is_zero(buf + a, len);
				buf[a + i] = 0;
			}
			/* A byte just past the end is not looked at. */
			buf[a + len] = 1;
			ok &= kp_is_zero(buf + a, len);
			buf[a + len] = 0;
		}
	}
	CHECK(ok);
}

/*
 * The image write of a save job: through the job's pipe (vmsplice and
 * splice) and without one (write()), the file gets the bytes in order,
 * and a source buffer reused at once does not change what was written.
 */
static void test_img_write(void)
{
	struct kp_copy_job j = { .dir = KP_COPY_SAVE };
	size_t len = (3U << 20) + 4097, i;
	uint8_t *a, *back;
	char path[128];
	bool same;
	int fd, pass;

	a = malloc(len);
	back = malloc(2 * len);
	CHECK(a && back);
	if (!a || !back)
		goto out;
	snprintf(path, sizeof(path), "%s/img-write", tmpdir);
	for (pass = 0; pass < 2; pass++) {
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		CHECK(fd >= 0);
		j.splice = !pass && !pipe(j.pipe);
		CHECK(j.splice == !pass);
		for (i = 0; i < len; i++)
			a[i] = (uint8_t)(i * 131 + pass);
		CHECK(!kp_img_write(&j, fd, a, len));
		/* The same buffer again, changed: the first copy stays. */
		memset(a, 0x5a, len);
		CHECK(!kp_img_write(&j, fd, a, len));
		memset(a, 0, len);
		CHECK(pread(fd, back, 2 * len, 0) == (ssize_t)(2 * len));
		same = true;
		for (i = 0; i < len; i++)
			same &= back[i] == (uint8_t)(i * 131 + pass) &&
				back[len + i] == 0x5a;
		CHECK(same);
		if (j.splice) {
			close(j.pipe[0]);
			close(j.pipe[1]);
		}
		close(fd);
		unlink(path);
	}
out:
	free(a);
	free(back);
}

/*
 * XXH64 against values from the xxHash project's own tool (xxhsum -H1),
 * and the zero-chunk shortcut and the one-pass chunk scan against it.
 */
static void test_xxh64(void)
{
	static const struct {
		size_t len;
		uint64_t h;
	} pattern[] = {
		{ 3, 0x22c08528601d4f27ULL },	{ 31, 0xe4a0e629e519a4aeULL },
		{ 32, 0xcc6b8aaada790b2dULL },	{ 33, 0x35ec49850475a832ULL },
		{ 100, 0x4826e367566ea023ULL },	{ 1000, 0x128da10cfbdc59d9ULL },
		{ 4099, 0xb0160f2f6a9797cbULL }, { 65536, 0x017cc14c7769505eULL },
	};
	static uint8_t buf[65536];
	uint64_t h = 0;
	size_t i;

	CHECK(kp_xxh64("", 0) == 0xef46db3751d8e999ULL);
	CHECK(kp_xxh64("a", 1) == 0xd24ec4f1a98c6e5bULL);
	CHECK(kp_xxh64("abc", 3) == 0x44bc2cf5ad770999ULL);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	for (i = 0; i < KP_ARRAY_SIZE(pattern); i++)
		CHECK(kp_xxh64(buf, pattern[i].len) == pattern[i].h);
	CHECK(kp_chunk_sum(KP_SUM_XXH64, buf, 100) == 0x4826e367566ea023ULL);
	CHECK(kp_chunk_sum(KP_SUM_FOLD64, buf, 100) == kp_sum_buf(buf, 100));
	/* Unaligned input gives the same result. */
	memmove(buf + 1, buf, 1000);
	CHECK(kp_xxh64(buf + 1, 1000) == 0x128da10cfbdc59d9ULL);
	CHECK(!kp_chunk_scan(KP_SUM_XXH64, buf + 1, 1000, &h) &&
	      h == 0x128da10cfbdc59d9ULL);

	CHECK(kp_chunk_sum_zeros(KP_SUM_XXH64, 20) == 0x5c41df61e8f6b241ULL);
	CHECK(kp_chunk_sum_zeros(KP_SUM_XXH64, 4096) == 0xac869b6f32d8bbdbULL);
	CHECK(kp_chunk_sum_zeros(KP_SUM_XXH64, 65536) ==
	      0x5983dda9f15715a4ULL);
	CHECK(kp_chunk_sum_zeros(KP_SUM_FOLD64, 4096) == kp_sum_zeros(4096));
	memset(buf, 0, sizeof(buf));
	for (i = 0; i <= 70; i++)
		CHECK(kp_chunk_sum_zeros(KP_SUM_XXH64, i) == kp_xxh64(buf, i));
	/* A zero chunk is found as such; one non-zero byte anywhere is not. */
	h = 1;
	CHECK(kp_chunk_scan(KP_SUM_XXH64, buf, sizeof(buf), &h) && h == 1);
	buf[sizeof(buf) - 1] = 1;
	CHECK(!kp_chunk_scan(KP_SUM_XXH64, buf, sizeof(buf), &h) &&
	      h == kp_xxh64(buf, sizeof(buf)));
	CHECK(!kp_chunk_scan(KP_SUM_FOLD64, buf, sizeof(buf), &h) &&
	      h == kp_sum_buf(buf, sizeof(buf)));
	CHECK(!strcmp(kp_sum_kind_name(KP_SUM_XXH64), "xxh64"));
	CHECK(!strcmp(kp_sum_kind_name(7), "?"));
}

static const struct fake_gpu two[] = {
	{ .gpu_id = 1111, .minor = 128, .simd_count = 240, .vram = 512ULL << 20,
	  .fw = 469 },
	{ .gpu_id = 2222, .minor = 129, .simd_count = 240, .vram = 512ULL << 20,
	  .fw = 469 },
};

static void test_topology_read(void)
{
	struct kp_topology *t = calloc(1, sizeof(*t));
	char root[128];
	uint64_t v;

	snprintf(root, sizeof(root), "%s/topo", tmpdir);
	make_topology(root, two, 2);
	CHECK(!read_topology(root, t));
	CHECK(t->ngpus == 2);
	CHECK(t->gpus[0].gpu_id == 1111 && t->gpus[0].node == 1);
	CHECK(t->gpus[1].gpu_id == 2222 && t->gpus[1].render_minor == 129);
	CHECK(t->gpus[0].vram_size == 512ULL << 20);
	CHECK(t->gpus[0].cpu_node == 0);
	CHECK(!strcmp(t->gpus[0].name, "gfx906"));
	CHECK(kp_gpu_prop(&t->gpus[0], "gfx_target_version", &v) &&
	      v == 90006);
	CHECK(!kp_gpu_prop(&t->gpus[0], "no_such_key", &v));
	CHECK(kp_topology_by_minor(t, 129) == &t->gpus[1]);
	CHECK(kp_topology_by_id(t, 3333) == NULL);

	snprintf(root, sizeof(root), "%s/none", tmpdir);
	CHECK(read_topology(root, t) == -ENOENT);
	unsetenv(KP_TOPOLOGY_ENV);
	free(t);
}

/* GPUs hidden by the device cgroup are skipped, not an error. */
static void test_topology_hidden(void)
{
	struct kp_topology *t = calloc(1, sizeof(*t));
	char root[128];

	snprintf(root, sizeof(root), "%s/topo", tmpdir);
	make_topology(root, two, 2);
	/* Node 1 hidden from its gpu_id on, as amdkfd does. */
	eperm_path = "/nodes/1/";
	CHECK(!read_topology(root, t));
	CHECK(t->ngpus == 1);
	CHECK(t->gpus[0].gpu_id == 2222 && t->gpus[0].node == 2);
	CHECK(kp_topology_by_id(t, 1111) == NULL);
	/* Only the properties refused: still skipped. */
	eperm_path = "/nodes/2/properties";
	CHECK(!read_topology(root, t));
	CHECK(t->ngpus == 1 && t->gpus[0].gpu_id == 1111);
	/* Every node hidden: no GPUs, no error. */
	eperm_path = "/nodes/";
	CHECK(!read_topology(root, t) && t->ngpus == 0);
	eperm_path = NULL;
	CHECK(!read_topology(root, t) && t->ngpus == 2);
	/* Any other error still fails the read. */
	snprintf(root, sizeof(root), "%s/topo/nodes/1/gpu_id", tmpdir);
	CHECK(!unlink(root));
	snprintf(root, sizeof(root), "%s/topo", tmpdir);
	CHECK(read_topology(root, t) == -ENOENT);
	unsetenv(KP_TOPOLOGY_ENV);
	free(t);
}

/* Match the GPUs of @ckpt_gpus against @local_gpus. */
static int match(const struct fake_gpu *c, int nc, const struct fake_gpu *l,
		 int nl, const struct kp_match_opts *o, int *map)
{
	struct kp_topology *ct = calloc(1, sizeof(*ct));
	struct kp_topology *lt = calloc(1, sizeof(*lt));
	char root[128];
	int ret;

	snprintf(root, sizeof(root), "%s/ckpt", tmpdir);
	make_topology(root, c, nc);
	if (read_topology(root, ct))
		exit(2);
	snprintf(root, sizeof(root), "%s/local", tmpdir);
	make_topology(root, l, nl);
	if (read_topology(root, lt))
		exit(2);
	unsetenv(KP_TOPOLOGY_ENV);
	ret = kp_match_gpus(ct->gpus, ct->ngpus, lt, o, map);
	free(ct);
	free(lt);
	return ret;
}

static void test_match(void)
{
	struct kp_match_opts o;
	struct fake_gpu l[3], c[2];
	int map[4];

	kp_match_opts_default(&o);

	/* Same host: identity. */
	CHECK(!match(two, 2, two, 2, &o, map));
	CHECK(map[0] == 0 && map[1] == 1);

	/* Another seed: other gpu_ids and minors, node order kept. */
	memcpy(l, two, sizeof(two));
	l[0].gpu_id = 7;
	l[0].minor = 130;
	l[1].gpu_id = 9;
	l[1].minor = 131;
	CHECK(!match(two, 2, l, 2, &o, map));
	CHECK(map[0] == 0 && map[1] == 1);

	/* The same gpu_ids in another order: follow the ids. */
	l[0] = two[1];
	l[1] = two[0];
	CHECK(!match(two, 2, l, 2, &o, map));
	CHECK(map[0] == 1 && map[1] == 0);

	/* Too few GPUs. */
	CHECK(match(two, 2, two, 1, &o, map) == -ENODEV);
	CHECK(strstr(kp_log_last(), "too few GPUs"));

	/* A different ASIC does not match. */
	memcpy(l, two, sizeof(two));
	l[0].simd_count = l[1].simd_count = 120;
	CHECK(match(two, 1, l, 2, &o, map) == -ENODEV);
	CHECK(strstr(kp_log_last(), "no matching GPU"));
	CHECK(strstr(kp_log_last(), "simd_count 120, checkpoint 240"));

	/* Less VRAM: refused unless KFD_VRAM_SIZE_CHECK is off; more is fine. */
	memcpy(l, two, sizeof(two));
	l[0].vram = l[1].vram = 256ULL << 20;
	CHECK(match(two, 1, l, 2, &o, map) == -ENODEV);
	o.vram_size = false;
	CHECK(!match(two, 1, l, 2, &o, map));
	o.vram_size = true;
	l[0].vram = l[1].vram = 1ULL << 30;
	CHECK(!match(two, 2, l, 2, &o, map));

	/* Older firmware: refused unless KFD_FW_VER_CHECK is off. */
	memcpy(l, two, sizeof(two));
	l[0].fw = l[1].fw = 400;
	CHECK(match(two, 1, l, 2, &o, map) == -ENODEV);
	setenv("KFD_FW_VER_CHECK", "no", 1);
	kp_match_opts_from_env(&o);
	unsetenv("KFD_FW_VER_CHECK");
	CHECK(!o.fw_version && o.vram_size && o.numa);
	CHECK(!match(two, 1, l, 2, &o, map));
	kp_match_opts_default(&o);
	l[0].fw = l[1].fw = 500;
	CHECK(!match(two, 1, l, 2, &o, map));

	/* Each checkpointed GPU needs a distinct local one. */
	memcpy(l, two, sizeof(two));
	l[1].simd_count = 120;
	CHECK(match(two, 2, l, 2, &o, map) == -ENODEV);
	CHECK(strstr(kp_log_last(), "taken by another"));

	/* Needs reassignment: c0 fits l0 and l1, c1 only l0. */
	c[0] = two[0];
	c[1] = two[1];
	c[0].vram = 256ULL << 20;	/* c0: fits both */
	c[1].vram = 1ULL << 30;		/* c1: only the big one */
	l[0] = two[0];
	l[0].gpu_id = 50;
	l[0].vram = 1ULL << 30;
	l[1] = two[1];
	l[1].gpu_id = 60;
	l[1].vram = 512ULL << 20;
	CHECK(!match(c, 2, l, 2, &o, map));
	CHECK(map[0] == 1 && map[1] == 0);

	/* Nothing to match. */
	CHECK(!match(two, 0, l, 0, &o, map));
}

static void test_names(void)
{
	char name[KP_NAME_LEN];
	uint32_t a, b, l;

	kp_name_kfd(name, 12);
	CHECK(!strcmp(name, "kfd-12.img"));
	CHECK(kp_parse_name_kfd(name, &a) && a == 12);
	kp_name_pages(name, 12, 4660, 0);
	CHECK(!strcmp(name, "kfd-pages-12-4660.img"));
	CHECK(!kp_parse_name_kfd(name, &a));
	CHECK(kp_parse_name_pages(name, &a, &b, &l) && a == 12 && b == 4660 &&
	      l == 0);
	kp_name_pages(name, 12, 4660, 3);
	CHECK(!strcmp(name, "kfd-pages-12-4660-3.img"));
	CHECK(kp_parse_name_pages(name, &a, &b, &l) && a == 12 && b == 4660 &&
	      l == 3);
	/* lane 0 has the short name only; lanes end at KP_MAX_LANES - 1 */
	CHECK(!kp_parse_name_pages("kfd-pages-1-2-0.img", &a, &b, &l));
	CHECK(!kp_parse_name_pages("kfd-pages-1-2-4.img", &a, &b, &l));
	CHECK(!kp_parse_name_pages("kfd-pages-1-2-1-1.img", &a, &b, &l));
	CHECK(!kp_parse_name_pages("kfd-pages-1-2-.img", &a, &b, &l));
	kp_name_render(name, 3);
	CHECK(kp_parse_name_render(name, &a) && a == 3);
	CHECK(!kp_parse_name_kfd("kfd-.img", &a));
	CHECK(!kp_parse_name_kfd("kfd-1.imgx", &a));
	CHECK(!kp_parse_name_render("render-1-2.img", &a));
}

/*
 * A PROCESS header of format @version naming GPU 1111 of a fake topology;
 * @gm points into the returned topology (free() it after use).
 */
static struct kp_topology *one_gpu_header(KfdHeader *h,
					  struct kp_gpu_msg *gm,
					  KfdGpu **gpus, uint32_t version)
{
	struct kp_topology *t = calloc(1, sizeof(*t));
	char root[128];

	snprintf(root, sizeof(root), "%s/topo", tmpdir);
	make_topology(root, two, 1);
	if (!t || read_topology(root, t))
		exit(2);
	unsetenv(KP_TOPOLOGY_ENV);
	kp_gpu_msg_init(gm, &t->gpus[0]);
	gpus[0] = &gm->msg;
	kfd_header__init(h);
	h->version = version;
	h->kind = KFD_IMAGE_KIND__KFD_IMAGE_PROCESS;
	h->n_gpus = 1;
	h->gpus = gpus;
	return t;
}

/* Write a kfd image with one GPU, one device, two BOs. */
static void write_kfd_image(int dirfd, const char *name, uint32_t version)
{
	struct kp_topology *t;
	struct kp_gpu_msg gm;
	KfdGpu *gpus[1];
	KfdDevice dev, *devs[1] = { &dev };
	KfdBo bo[2], *bos[2] = { &bo[0], &bo[1] };
	KfdHeader h;
	KfdProcess p;
	uint8_t priv[24] = { 1, 2, 3 };
	int fd;

	t = one_gpu_header(&h, &gm, gpus, version);
	kfd_process__init(&p);
	kfd_device__init(&dev);
	dev.user_gpu_id = 1111;
	dev.gpu_id = 1111;
	kfd_bo__init(&bo[0]);
	bo[0].addr = 0x200000000000ULL;
	bo[0].size = 8192;
	bo[0].gpu_id = 1111;
	bo[0].alloc_flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM;
	bo[0].has_contents = true;
	bo[0].has_checksum = true;
	bo[0].checksum = 42;
	kfd_bo__init(&bo[1]);
	bo[1].addr = 0x300000000000ULL;
	bo[1].size = 4096;
	bo[1].gpu_id = 1111;
	bo[1].alloc_flags = KFD_IOC_ALLOC_MEM_FLAGS_USERPTR;
	p.num_devices = 1;
	p.n_devices = 1;
	p.devices = devs;
	p.num_bos = 2;
	p.n_bos = 2;
	p.bos = bos;
	p.num_objects = 3;
	p.priv_data.len = sizeof(priv);
	p.priv_data.data = priv;

	kp_set_image_dir(dirfd);
	fd = kp_img_create(name);
	CHECK(fd >= 0);
	CHECK(!kp_record_write_msg(fd, &h.base));
	CHECK(!kp_record_write_msg(fd, &p.base));
	close(fd);
	free(t);
}

static void test_images(void)
{
	char dir[128];
	KfdHeader *h;
	KfdProcess *p;
	struct stat st;
	int dirfd, fd;

	snprintf(dir, sizeof(dir), "%s/img", tmpdir);
	mkdir(dir, 0755);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dirfd >= 0);
	kp_set_image_dir(dirfd);

	write_kfd_image(dirfd, "kfd-1.img", KP_IMAGE_VERSION);
	fd = kp_img_open("kfd-1.img");
	CHECK(fd >= 0);
	h = kp_read_header(fd, "kfd-1.img");
	CHECK(h && h->n_gpus == 1 && h->gpus[0]->gpu_id == 1111);
	p = h ? kp_read_process(fd, "kfd-1.img", h) : NULL;
	CHECK(p && p->n_bos == 2 && p->bos[0]->checksum == 42);
	CHECK(p && p->priv_data.len == 24 && p->priv_data.data[2] == 3);
	CHECK(p && !p->bos[1]->has_contents);
	if (p)
		kfd_process__free_unpacked(p, NULL);
	if (h)
		kfd_header__free_unpacked(h, NULL);
	close(fd);

	/* Cut short: the process record is truncated. */
	CHECK(!fstatat(dirfd, "kfd-1.img", &st, 0));
	fd = openat(dirfd, "kfd-1.img", O_RDWR | O_CLOEXEC);
	CHECK(!ftruncate(fd, st.st_size - 5));
	close(fd);
	fd = kp_img_open("kfd-1.img");
	h = kp_read_header(fd, "kfd-1.img");
	CHECK(h);
	p = h ? kp_read_process(fd, "kfd-1.img", h) : NULL;
	CHECK(!p);
	CHECK(strstr(kp_log_last(), "kfd-1.img is truncated"));
	if (h)
		kfd_header__free_unpacked(h, NULL);
	close(fd);

	/* Format 1 (every byte stored) still reads. */
	write_kfd_image(dirfd, "kfd-4.img", 1);
	fd = kp_img_open("kfd-4.img");
	h = kp_read_header(fd, "kfd-4.img");
	p = h ? kp_read_process(fd, "kfd-4.img", h) : NULL;
	CHECK(p && !kp_chunked(p) && kp_bo_stored(p, p->bos[0]) == 8192);
	if (p)
		kfd_process__free_unpacked(p, NULL);
	if (h)
		kfd_header__free_unpacked(h, NULL);
	close(fd);

	/* A newer format is refused, naming the versions. */
	write_kfd_image(dirfd, "kfd-2.img", KP_IMAGE_VERSION + 1);
	fd = kp_img_open("kfd-2.img");
	CHECK(!kp_read_header(fd, "kfd-2.img"));
	CHECK(strstr(kp_log_last(), "format version"));
	close(fd);

	/* Empty file. */
	fd = kp_img_create("kfd-3.img");
	close(fd);
	fd = kp_img_open("kfd-3.img");
	CHECK(!kp_read_header(fd, "kfd-3.img"));
	CHECK(strstr(kp_log_last(), "truncated"));
	close(fd);
	CHECK(kp_img_open("kfd-99.img") == -ENOENT);

	kp_set_image_dir(AT_FDCWD);
	close(dirfd);
}

/* A memfd of @size bytes filled from @seed, standing in for a dma-buf. */
static int fake_bo(size_t size, unsigned int seed)
{
	int fd = memfd_create("bo", MFD_CLOEXEC);
	uint8_t *p;
	size_t i;

	if (fd < 0 || ftruncate(fd, size))
		exit(2);
	p = mmap(NULL, size, PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		exit(2);
	for (i = 0; i < size; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 12));
	munmap(p, size);
	return fd;
}

static bool same_contents(int a, int b, size_t size)
{
	void *pa = mmap(NULL, size, PROT_READ, MAP_SHARED, a, 0);
	void *pb = mmap(NULL, size, PROT_READ, MAP_SHARED, b, 0);
	bool same = pa != MAP_FAILED && pb != MAP_FAILED &&
		    !memcmp(pa, pb, size);

	munmap(pa, size);
	munmap(pb, size);
	return same;
}

/*
 * A fresh image directory tmpdir/@name (made the image directory; its fd
 * returned) and three BOs of @sizes at @va, 2 * @va, 3 * @va: @src filled
 * with seeds @mul * i, @dst (to load into) with @dst_seed + i. Save jobs
 * for two GPUs: BOs 0 and 1 on GPU 1, BO 2 on GPU 2, images of dump 7.
 */
static int two_gpu_setup(const char *name, const size_t sizes[3],
			 uint64_t va, int mul, int dst_seed,
			 struct kp_copy_bo src[3], struct kp_copy_bo dst[3],
			 struct kp_copy_job jobs[2])
{
	char dir[128];
	int dirfd, i;

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, name);
	mkdir(dir, 0755);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	kp_set_image_dir(dirfd);
	for (i = 0; i < 3; i++) {
		src[i] = (struct kp_copy_bo){ .addr = va * (uint64_t)(i + 1),
					      .size = sizes[i],
					      .dmabuf_fd = fake_bo(sizes[i], mul * i) };
		dst[i] = src[i];
		dst[i].dmabuf_fd = fake_bo(sizes[i], dst_seed + i);
	}
	memset(jobs, 0, 2 * sizeof(*jobs));
	jobs[0] = (struct kp_copy_job){ .dir = KP_COPY_SAVE, .gpu_id = 1,
					.nbos = 2, .bos = &src[0],
					.no_sync = true };
	jobs[1] = (struct kp_copy_job){ .dir = KP_COPY_SAVE, .gpu_id = 2,
					.nbos = 1, .bos = &src[2],
					.no_sync = true };
	kp_name_pages(jobs[0].image, 7, 1, 0);
	kp_name_pages(jobs[1].image, 7, 2, 0);
	return dirfd;
}

/*
 * two_gpu_setup(), the images saved, and @jobs turned into the jobs
 * that load them into @dst.
 */
static int load_setup(const char *name, const size_t sizes[3], uint64_t va,
		      int mul, int dst_seed, struct kp_copy_bo src[3],
		      struct kp_copy_bo dst[3], struct kp_copy_job jobs[2])
{
	int dirfd, i;

	dirfd = two_gpu_setup(name, sizes, va, mul, dst_seed, src, dst, jobs);
	CHECK(!kp_copy_run(jobs, 2, 64 << 20));
	for (i = 0; i < 3; i++)
		dst[i].checksum = src[i].checksum;
	jobs[0].dir = jobs[1].dir = KP_COPY_LOAD;
	jobs[0].bos = &dst[0];
	jobs[1].bos = &dst[2];
	return dirfd;
}

/* The end of a two_gpu_setup() test. */
static void two_gpu_teardown(int dirfd, struct kp_copy_bo src[3],
			     struct kp_copy_bo dst[3])
{
	int i;

	for (i = 0; i < 3; i++) {
		close(src[i].dmabuf_fd);
		close(dst[i].dmabuf_fd);
	}
	kp_set_image_dir(AT_FDCWD);
	close(dirfd);
}

static void test_copy(void)
{
	size_t page = kp_page_size();
	size_t sizes[3] = { 5 * page, page, 3 * page };
	struct kp_copy_bo src[3], dst[3];
	struct kp_copy_job jobs[2];
	int dirfd, fd, i;
	uint8_t byte;

	dirfd = two_gpu_setup("copy", sizes, 0x1000000, 1, 100, src, dst,
			      jobs);
	/* Two pages for both jobs: one page windows, BOs in pieces. */
	CHECK(!kp_copy_run(jobs, 2, 2 * page));
	CHECK(jobs[0].window == page);
	CHECK(src[0].checksum && src[0].checksum != src[1].checksum);

	for (i = 0; i < 3; i++)
		dst[i].checksum = src[i].checksum;
	jobs[0].dir = jobs[1].dir = KP_COPY_LOAD;
	jobs[0].bos = &dst[0];
	jobs[1].bos = &dst[2];
	CHECK(!kp_copy_run(jobs, 2, 64 << 20));
	for (i = 0; i < 3; i++)
		CHECK(same_contents(src[i].dmabuf_fd, dst[i].dmabuf_fd,
				    sizes[i]));

	/*
	 * No render node renderD4000: forced SDMA fails (naming the node),
	 * auto falls back to the CPU and gives the same image.
	 */
	jobs[0].mode = jobs[1].mode = KP_COPY_SDMA;
	jobs[0].render_minor = jobs[1].render_minor = 4000;
	CHECK(kp_copy_run(jobs, 2, 64 << 20) == -ENOENT);
	CHECK(strstr(kp_log_last(), "renderD4000"));
	jobs[0].mode = jobs[1].mode = KP_COPY_AUTO;
	CHECK(!kp_copy_run(jobs, 2, 64 << 20));
	CHECK(strstr(kp_log_last(), "via cpu"));
	for (i = 0; i < 3; i++)
		CHECK(same_contents(src[i].dmabuf_fd, dst[i].dmabuf_fd,
				    sizes[i]));
	jobs[0].mode = jobs[1].mode = KP_COPY_CPU;

	/* One flipped byte in BO 1's part: named in the error. */
	fd = openat(dirfd, jobs[0].image, O_RDWR | O_CLOEXEC);
	CHECK(pread(fd, &byte, 1, 8 + sizes[0] + 100) == 1);
	byte ^= 0x40;
	CHECK(pwrite(fd, &byte, 1, 8 + sizes[0] + 100) == 1);
	close(fd);
	CHECK(kp_copy_run(jobs, 1, 64 << 20) == -EIO);
	CHECK(strstr(kp_log_last(), "BO 0x2000000"));
	CHECK(strstr(kp_log_last(), "checksum mismatch"));

	/* Truncated pages image. */
	fd = openat(dirfd, jobs[1].image, O_RDWR | O_CLOEXEC);
	CHECK(!ftruncate(fd, 8 + sizes[2] - page));
	close(fd);
	CHECK(kp_copy_run(&jobs[1], 1, 64 << 20) == -EIO);
	CHECK(strstr(kp_log_last(), "is truncated"));

	/* Missing pages image. */
	CHECK(!unlinkat(dirfd, jobs[1].image, 0));
	CHECK(kp_copy_run(&jobs[1], 1, 64 << 20) == -ENOENT);
	CHECK(strstr(kp_log_last(), "is missing"));

	/* Data after the last BO. */
	jobs[1].dir = KP_COPY_SAVE;
	jobs[1].bos = &src[2];
	CHECK(!kp_copy_run(&jobs[1], 1, 64 << 20));
	fd = openat(dirfd, jobs[1].image, O_WRONLY | O_APPEND | O_CLOEXEC);
	CHECK(write(fd, "x", 1) == 1);
	close(fd);
	jobs[1].dir = KP_COPY_LOAD;
	jobs[1].bos = &dst[2];
	CHECK(kp_copy_run(&jobs[1], 1, 64 << 20) == -EIO);

	two_gpu_teardown(dirfd, src, dst);
}

/* The open fds of this process. */
static int count_fds(void)
{
	char path[64];
	int n = 0, fd;

	for (fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (!access(path, F_OK))
			n++;
	}
	return n;
}

/*
 * A forked child (the restored process) hands @jobs of image @id over
 * (the pages images of kfd-@id.img), as uid and gid @uid unless it is
 * -1; returns what kp_rw_submit() returned there (as a negative errno),
 * or 1000 if it did not exit normally. Sets *child to its pid.
 */
static int submit_in_child_as(uint32_t id, struct kp_copy_job *jobs,
			      unsigned int njobs, pid_t *child, int uid)
{
	int st;

	*child = fork();
	if (*child < 0)
		return 1000;
	if (!*child) {
		if (uid >= 0 && (setresgid(uid, uid, uid) ||
				 setresuid(uid, uid, uid)))
			_exit(100);
		_exit(-kp_rw_submit(id, jobs, njobs) & 0xff);
	}
	if (waitpid(*child, &st, 0) != *child || !WIFEXITED(st))
		return 1000;
	return -WEXITSTATUS(st);
}

static int submit_in_child(uint32_t id, struct kp_copy_job *jobs,
			   unsigned int njobs, pid_t *child)
{
	return submit_in_child_as(id, jobs, njobs, child, -1);
}

static void test_parallel_restore(void)
{
	size_t page = kp_page_size();
	size_t sizes[3] = { 3 * page, 2 * page, page };
	struct kp_copy_bo src[3], dst[3];
	struct kp_copy_job jobs[2];
	int dirfd, fd, fds_before, i;
	uint8_t byte;
	pid_t child;

	dirfd = load_setup("parallel", sizes, 0x4000000, 3, 50, src, dst,
			   jobs);

	fds_before = count_fds();
	/* Serial: no workers, the process copies itself. */
	CHECK(!kp_rw_start(0, 64 << 20));
	CHECK(submit_in_child(7, jobs, 2, &child) == -EAGAIN);
	CHECK(!kp_rw_finish(child));
	kp_rw_stop();
	CHECK(count_fds() == fds_before);

	/* Two workers, a window of one page: the copies land in dst. */
	CHECK(!kp_rw_start(2, 2 * page));
	CHECK(count_fds() == fds_before + 3);	/* socket, stop pipe */
	CHECK(!submit_in_child(7, jobs, 2, &child));
	CHECK(!kp_rw_finish(child));
	CHECK(strstr(kp_log_last(), "BO contents of 1 processes are in place"));
	CHECK(!kp_rw_finish(child));		/* later pids: same answer */
	for (i = 0; i < 3; i++)
		CHECK(same_contents(src[i].dmabuf_fd, dst[i].dmabuf_fd,
				    sizes[i]));
	kp_rw_stop();
	CHECK(count_fds() == fds_before);

	/*
	 * Four workers, one GPU's job of two BOs: split into two slices
	 * (each reads its part of the image), same contents.
	 */
	for (i = 0; i < 2; i++) {
		close(dst[i].dmabuf_fd);
		dst[i].dmabuf_fd = fake_bo(sizes[i], 90 + i);
	}
	CHECK(!kp_rw_start(4, 64 << 20));
	CHECK(!submit_in_child(7, jobs, 1, &child));
	CHECK(!kp_rw_finish(child));
	for (i = 0; i < 2; i++)
		CHECK(same_contents(src[i].dmabuf_fd, dst[i].dmabuf_fd,
				    sizes[i]));
	kp_rw_stop();
	CHECK(count_fds() == fds_before);

	/*
	 * A byte flipped in BO 1's part of the image: only the worker sees
	 * it (by the checksum); the hand-over succeeded, finish fails. Then
	 * the same with the job in two slices (BO 1 is the second).
	 */
	fd = openat(dirfd, jobs[0].image, O_RDWR | O_CLOEXEC);
	CHECK(pread(fd, &byte, 1, 8 + sizes[0] + 5) == 1);
	byte ^= 0x01;
	CHECK(pwrite(fd, &byte, 1, 8 + sizes[0] + 5) == 1);
	close(fd);
	CHECK(!kp_rw_start(3, 64 << 20));
	CHECK(!submit_in_child(7, jobs, 2, &child));
	CHECK(kp_rw_finish(child) == -EIO);
	CHECK(strstr(kp_log_last(), "1 of 1 processes' BO contents failed"));
	CHECK(kp_rw_finish(child) == -EIO);
	kp_rw_stop();
	CHECK(count_fds() == fds_before);
	CHECK(!kp_rw_start(4, 64 << 20));
	CHECK(!submit_in_child(7, jobs, 1, &child));
	CHECK(kp_rw_finish(child) == -EIO);
	kp_rw_stop();
	CHECK(count_fds() == fds_before);

	/* A restore that fails before any resume: exit stops everything. */
	CHECK(!kp_rw_start(1, 64 << 20));
	CHECK(!submit_in_child(7, &jobs[1], 1, &child));
	kp_rw_stop();
	CHECK(count_fds() == fds_before);

	two_gpu_teardown(dirfd, src, dst);
}

/* In a child: connect to the master's socket as anyone could, by its
 * name in /proc/net/unix; -1 if it is not there. */
static int connect_by_name(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char line[512], want[64], *at;
	size_t len;
	FILE *f;
	int s = -1;

	snprintf(want, sizeof(want), "@kfd_plugin-restore-%d-", (int)getppid());
	f = fopen("/proc/net/unix", "r");
	if (!f)
		return -1;
	while (s < 0 && fgets(line, sizeof(line), f)) {
		at = strstr(line, want);
		if (!at)
			continue;
		len = strcspn(at, " \n");
		if (len > sizeof(a.sun_path))
			break;
		memcpy(a.sun_path, at, len);
		a.sun_path[0] = '\0';
		s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (s >= 0 && connect(s, (struct sockaddr *)&a,
				      (socklen_t)(offsetof(struct sockaddr_un,
							   sun_path) + len))) {
			close(s);
			s = -1;
		}
	}
	fclose(f);
	return s;
}

/*
 * A stranger (any process in the network namespace) connects to the
 * master: with @garbage it sends a message that is no hand-over of this
 * restore and exits 0 if the master closed the connection on it;
 * without, it holds the connection open, silent, until killed.
 */
static pid_t stranger(bool garbage)
{
	char buf[64] = "not a restore's process";
	pid_t pid = fork();
	int s;

	if (pid)
		return pid;
	s = connect_by_name();
	if (s < 0)
		_exit(3);
	if (!garbage) {
		for (;;)
			pause();
	}
	if (send(s, buf, sizeof(buf), MSG_NOSIGNAL) != sizeof(buf))
		_exit(4);
	/* The master answers (or not) and closes: the end comes. */
	while (recv(s, buf, sizeof(buf), 0) > 0)
		;
	_exit(0);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * The parallel restore's channel against peers that are not this
 * restore's processes, and hand-overs the master must refuse: each
 * refusal fails the submitting process and the restore (nothing may run
 * with contents that were not written); a stranger neither fails the
 * restore nor holds up the processes of it.
 */
static void test_parallel_restore_peers(void)
{
	size_t page = kp_page_size();
	size_t sizes[3] = { 2 * page, page, 3 * page };
	struct kp_copy_bo src[3], dst[3];
	struct kp_copy_job jobs[2], bad[2];
	int dirfd, fds_before, i, ret, st;
	pid_t child, s1, s2;
	double t0;

	dirfd = load_setup("peers", sizes, 0x8000000, 5, 70, src, dst, jobs);
	fds_before = count_fds();

	/*
	 * A process of this restore (it has the secret) running as another
	 * uid (a task restored into a user namespace): the master takes
	 * nothing from it and tells it so, every time, and it restores its
	 * BOs itself (-EAGAIN); nothing is missing, the restore goes on.
	 */
	if (geteuid() == 0) {
		for (i = 0; i < 10; i++) {
			CHECK(!kp_rw_start(2, 64 << 20));
			ret = submit_in_child_as(7, jobs, 2, &child, 65534);
			CHECK(ret == -EAGAIN);
			CHECK(!kp_rw_finish(child));
			kp_rw_stop();
		}
		CHECK(strstr(kp_log_last(), "BO contents of 0 processes are in place"));
	} else {
		printf("# not root: the other-uid peer is not tested\n");
	}
	CHECK(count_fds() == fds_before);

	/*
	 * Strangers: one sends garbage (cut off, the restore not failed),
	 * one holds a silent connection; this restore's process is served
	 * at once all the same, and its contents land.
	 */
	CHECK(!kp_rw_start(2, 64 << 20));
	s1 = stranger(false);
	s2 = stranger(true);
	CHECK(waitpid(s2, &st, 0) == s2 && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0);
	t0 = now_s();
	CHECK(!submit_in_child(7, jobs, 2, &child));
	CHECK(now_s() - t0 < 20);
	CHECK(!kp_rw_finish(child));
	CHECK(now_s() - t0 < 20);
	for (i = 0; i < 3; i++)
		CHECK(same_contents(src[i].dmabuf_fd, dst[i].dmabuf_fd,
				    sizes[i]));
	kill(s1, SIGKILL);
	waitpid(s1, NULL, 0);
	kp_rw_stop();
	CHECK(count_fds() == fds_before);

	/* Jobs of plain files (no dma-buf sync): for the tests only. */
	kp_rw_test_mode(false);
	CHECK(!kp_rw_start(2, 64 << 20));
	CHECK(submit_in_child(7, jobs, 2, &child) == -EPROTO);
	CHECK(kp_rw_finish(child) == -EPROTO);
	kp_rw_stop();
	kp_rw_test_mode(true);

	/* A pages image of another GPU than the job's; two jobs of a GPU. */
	bad[0] = jobs[0];
	kp_name_pages(bad[0].image, 7, 2, 0);
	CHECK(!kp_rw_start(2, 64 << 20));
	CHECK(submit_in_child(7, bad, 1, &child) == -EPROTO);
	CHECK(kp_rw_finish(child) == -EPROTO);
	kp_rw_stop();
	bad[0] = bad[1] = jobs[0];
	CHECK(!kp_rw_start(2, 64 << 20));
	CHECK(submit_in_child(7, bad, 2, &child) == -EPROTO);
	CHECK(kp_rw_finish(child) == -EPROTO);
	kp_rw_stop();
	CHECK(count_fds() == fds_before);

	two_gpu_teardown(dirfd, src, dst);
}

/* ---- libhsakmt's shared memory (hsakmt_shm.c) ---- */

/*
 * kp_hsakmt_shm_save() of this process in a child that gets 10 s: 0 if
 * it returned 0 and recorded nothing, 1 if it recorded the file, 2 on an
 * error, 3 if it hung (or crashed).
 */
static int hsakmt_save_in_child(void)
{
	KfdProcess p = KFD_PROCESS__INIT;
	void *buf;
	pid_t pid;
	int st;

	pid = fork();
	if (!pid) {
		alarm(10);
		if (kp_hsakmt_shm_save(&p, &buf, getpid(), 0))
			_exit(2);
		_exit(p.has_hsakmt_shm_size ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 3;
	return WEXITSTATUS(st);
}

static void test_hsakmt_shm(void)
{
	char shm[64], sem[64], shm_path[96], sem_path[96], target[128];
	static const char data[16] = "0123456789abcdef";
	KfdProcess p = KFD_PROCESS__INIT;
	bool root = geteuid() == 0;
	struct stat st;
	sem_t *sm;
	void *buf, *map;
	mode_t old_umask = umask(022);
	int fd;

	snprintf(shm, sizeof(shm), "kfd-plugin-test-shm-%d", (int)getpid());
	snprintf(sem, sizeof(sem), "kfd-plugin-test-sem-%d", (int)getpid());
	snprintf(shm_path, sizeof(shm_path), "/dev/shm/%s", shm);
	snprintf(sem_path, sizeof(sem_path), "/dev/shm/sem.%s", sem);
	snprintf(target, sizeof(target), "%s/hsakmt-target", tmpdir);
	kp_hsakmt_test_names(shm, sem);
	unlink(shm_path);
	unlink(sem_path);

	/* Absent: nothing recorded, no error. */
	CHECK(hsakmt_save_in_child() == 0);

	/* A FIFO another user put there: no hang, no failure. */
	CHECK(!mkfifo(shm_path, 0666));
	CHECK(!root || !chown(shm_path, 65534, 65534));
	CHECK(hsakmt_save_in_child() == 0);
	unlink(shm_path);

	/*
	 * A symlink another user put there, to a file this process holds:
	 * not followed, not recorded, no failure.
	 */
	fd = open(target, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && write(fd, data, sizeof(data)) == sizeof(data));
	CHECK(!symlink(target, shm_path));
	CHECK(!root || !lchown(shm_path, 65534, 65534));
	CHECK(hsakmt_save_in_child() == 0);
	close(fd);
	unlink(shm_path);

	/* A regular file this process neither holds nor maps. */
	fd = open(shm_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && write(fd, data, sizeof(data)) == sizeof(data));
	close(fd);
	CHECK(hsakmt_save_in_child() == 0);

	/* Held: recorded, contents, mode and owner; no semaphore mapped. */
	fd = open(shm_path, O_RDONLY | O_CLOEXEC);
	/* Not the process the file given is of: nothing recorded. */
	CHECK(!kp_hsakmt_shm_save(&p, &buf, getppid(), fd) &&
	      !p.has_hsakmt_shm_size);
	CHECK(!kp_hsakmt_shm_save(&p, &buf, getpid(), fd));
	CHECK(p.has_hsakmt_shm_size && p.hsakmt_shm_size == sizeof(data) &&
	      p.hsakmt_shm.len == sizeof(data) &&
	      !memcmp(p.hsakmt_shm.data, data, sizeof(data)));
	CHECK((p.hsakmt_shm_mode & 07777) == 0644 &&
	      p.hsakmt_shm_uid == geteuid());
	CHECK(!p.has_hsakmt_sem_mode);
	free(buf);

	/* Mapped only (no fd), and the semaphore mapped: both recorded. */
	map = mmap(NULL, sizeof(data), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	sm = sem_open(sem, O_CREAT | O_EXCL, 0640, 1);
	CHECK(map != MAP_FAILED && sm != SEM_FAILED);
	p = (KfdProcess)KFD_PROCESS__INIT;
	CHECK(!kp_hsakmt_shm_save(&p, &buf, getpid(), 0));
	CHECK(p.has_hsakmt_shm_size && p.has_hsakmt_sem_mode &&
	      (p.hsakmt_sem_mode & 07777) == 0640);
	free(buf);
	munmap(map, sizeof(data));
	sem_close(sm);

	/*
	 * Restore where neither exists, of an image that asks for set-id
	 * and sticky bits: created, without them. The file's record has no
	 * owner (nothing to chown), the semaphore's has.
	 */
	unlink(shm_path);
	unlink(sem_path);
	p = (KfdProcess)KFD_PROCESS__INIT;
	p.has_hsakmt_shm_size = p.has_hsakmt_shm = true;
	p.hsakmt_shm_size = sizeof(data);
	p.hsakmt_shm.len = sizeof(data);
	p.hsakmt_shm.data = (uint8_t *)data;
	p.has_hsakmt_shm_mode = p.has_hsakmt_sem_mode = true;
	p.hsakmt_shm_mode = S_IFREG | 04777;
	p.hsakmt_sem_mode = S_IFREG | 03766;
	p.has_hsakmt_sem_uid = p.has_hsakmt_sem_gid = true;
	p.hsakmt_sem_uid = geteuid();
	p.hsakmt_sem_gid = getegid();
	CHECK(!kp_hsakmt_shm_restore(&p));
	CHECK(!stat(shm_path, &st) && (st.st_mode & 07777) == 0777 &&
	      st.st_size == sizeof(data));
	CHECK(!stat(sem_path, &st) && (st.st_mode & 07777) == 0766);

	/* Existing ones are someone's: left as they are. */
	CHECK(!chmod(shm_path, 0600) && !chmod(sem_path, 0640));
	CHECK(!kp_hsakmt_shm_restore(&p));
	CHECK(!stat(shm_path, &st) && (st.st_mode & 07777) == 0600);
	CHECK(!stat(sem_path, &st) && (st.st_mode & 07777) == 0640);

	unlink(shm_path);
	unlink(sem_path);
	unlink(target);
	kp_hsakmt_test_names("hsakmt_shared_mem", "hsakmt_semaphore");
	umask(old_umask);
}

/* ---- sparse and incremental images (format 2) ---- */

#define CH	4096u		/* chunk size of these tests */
#define NCH	6		/* chunks of the test BO */
#define BO_VA	0x7000000ULL

/* The test BO's chunk @c: zero when @pattern is 0. */
static void put_chunk(int fd, unsigned int c, unsigned int pattern)
{
	uint8_t buf[CH];

	memset(buf, 0, sizeof(buf));
	if (pattern) {
		memset(buf, (int)pattern, sizeof(buf));
		buf[c] = 0;	/* differs from chunk to chunk */
	}
	CHECK(pwrite(fd, buf, CH, (off_t)c * CH) == CH);
}

/* A memfd of @size bytes of 0xee: VRAM nobody cleared. */
static int dirty_bo(size_t size)
{
	int fd = memfd_create("vram", MFD_CLOEXEC);
	uint8_t *p;

	if (fd < 0 || ftruncate(fd, size))
		exit(2);
	p = mmap(NULL, size, PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		exit(2);
	memset(p, 0xee, size);
	munmap(p, size);
	return fd;
}

/*
 * The chunk sum function of the chunked tests' dumps: fold64 makes them
 * version 2 images as the plugin wrote them before version 3 (no
 * chunk_sum field), which must still restore; xxh64 is what it writes now.
 */
static enum kp_sum_kind test_sum_kind;
/* The pages image (lane, format 4) the chain's images keep the BO in. */
static uint32_t test_lane;

/* One image of the chain: dump_id, parent and the saved BO's chunk map. */
struct chunked {
	uint8_t kinds[NCH];
	uint64_t sums[NCH];
	uint64_t checksum, stored;
	uint32_t parent_bo;
};

static int open_dir(const char *name)
{
	char dir[128];

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, name);
	mkdir(dir, 0755);
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Save @fd (the BO) into @dirfd, comparing with @base (or NULL). */
static int save_chunked(int dirfd, int fd, const struct chunked *base,
			struct chunked *out)
{
	struct kp_copy_bo bo = {
		.addr = BO_VA, .size = NCH * CH, .dmabuf_fd = fd,
		.kinds = out->kinds, .sums = out->sums,
		.base = base ? base->sums : NULL,
	};
	struct kp_copy_job j = {
		.dir = KP_COPY_SAVE, .gpu_id = 1111, .nbos = 1, .bos = &bo,
		.no_sync = true, .chunk = CH, .sum_kind = test_sum_kind,
		.lane = test_lane,
	};
	int ret;

	kp_set_image_dir(dirfd);
	kp_name_pages(j.image, 1, 1111, test_lane);
	/* Two chunks per window: chunks and windows must agree. */
	ret = kp_copy_run(&j, 1, 2 * CH);
	out->checksum = bo.checksum;
	out->stored = bo.stored;
	return ret;
}

/* kfd-1.img of a format 2 dump: one device, the test BO. */
static void write_chunked_image(int dirfd, uint64_t dump_id,
				const struct chunked *c, uint64_t parent_dump,
				uint32_t depth)
{
	struct kp_topology *t;
	struct kp_gpu_msg gm;
	KfdGpu *gpus[1];
	KfdDevice dev, *devs[1] = { &dev };
	KfdBo bo, *bos[1] = { &bo };
	uint8_t priv[8] = { 0 };
	KfdHeader h;
	KfdProcess p;
	int fd;

	t = one_gpu_header(&h, &gm, gpus,
			   test_sum_kind == KP_SUM_FOLD64 && !test_lane ?
			   2 : KP_IMAGE_VERSION);
	h.has_pid = h.has_dump_id = true;
	h.pid = 4242;
	h.dump_id = dump_id;
	kfd_process__init(&p);
	kfd_device__init(&dev);
	dev.user_gpu_id = dev.gpu_id = 1111;
	kfd_bo__init(&bo);
	bo.addr = BO_VA;
	bo.size = NCH * CH;
	bo.gpu_id = 1111;
	bo.alloc_flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM;
	bo.has_contents = bo.has_checksum = true;
	bo.checksum = c->checksum;
	bo.has_chunks = true;
	bo.chunks.len = NCH;
	bo.chunks.data = (uint8_t *)c->kinds;
	bo.n_chunk_sums = NCH;
	bo.chunk_sums = (uint64_t *)c->sums;
	bo.has_parent_bo = !!parent_dump;
	bo.parent_bo = c->parent_bo;
	bo.has_lane = test_lane != 0;
	bo.lane = test_lane;
	p.num_devices = p.n_devices = 1;
	p.devices = devs;
	p.num_bos = p.n_bos = 1;
	p.bos = bos;
	p.priv_data.len = sizeof(priv);
	p.priv_data.data = priv;
	p.has_chunk_size = true;
	p.chunk_size = CH;
	p.has_chunk_sum = test_sum_kind != KP_SUM_FOLD64;
	p.chunk_sum = test_sum_kind;
	if (parent_dump) {
		p.has_parent_dump_id = p.has_parent_image = true;
		p.has_parent_depth = true;
		p.parent_dump_id = parent_dump;
		p.parent_image = 1;
		p.parent_depth = depth;
	}
	kp_set_image_dir(dirfd);
	fd = kp_img_create("kfd-1.img");
	CHECK(fd >= 0);
	CHECK(!kp_record_write_msg(fd, &h.base));
	CHECK(!kp_record_write_msg(fd, &p.base));
	close(fd);
	free(t);
}

/*
 * Make @dirfd the image directory and read its kfd-1.img: the process
 * record (NULL if it cannot be read), its header in *@h (or NULL).
 */
static KfdProcess *read_kfd1(int dirfd, KfdHeader **h)
{
	KfdProcess *p;
	int img;

	kp_set_image_dir(dirfd);
	img = kp_img_open("kfd-1.img");
	*h = img < 0 ? NULL : kp_read_header(img, "kfd-1.img");
	p = *h ? kp_read_process(img, "kfd-1.img", *h) : NULL;
	if (img >= 0)
		close(img);
	return p;
}

/* Restore the image in @dirfd into a dirty BO; 0 and the same as @src. */
static int restore_chunked(int dirfd, int src)
{
	struct kp_chain *chain = NULL;
	KfdHeader *h = NULL;
	KfdProcess *p = NULL;
	struct kp_copy_bo bo = { .addr = BO_VA, .size = NCH * CH };
	struct kp_copy_job j = {
		.dir = KP_COPY_LOAD, .gpu_id = 1111, .nbos = 1, .bos = &bo,
		.no_sync = true, .chunk = CH,
	};
	int ret = -EIO;

	p = read_kfd1(dirfd, &h);
	if (!p)
		goto out;
	/* As restore.c: the image says which function its sums are. */
	j.sum_kind = kp_process_sum_kind(p);
	CHECK(j.sum_kind == test_sum_kind);
	ret = kp_chain_open(dirfd, "kfd-1.img", p, &chain);
	if (ret)
		goto out;
	bo.dmabuf_fd = dirty_bo(NCH * CH);
	bo.checksum = p->bos[0]->checksum;
	bo.kinds = p->bos[0]->chunks.data;
	bo.sums = p->bos[0]->chunk_sums;
	bo.chain = chain;
	bo.chain_bo = p->bos[0]->parent_bo;
	j.lane = test_lane;
	kp_name_pages(j.image, 1, 1111, test_lane);
	ret = kp_copy_run(&j, 1, 64 << 20);
	if (!ret && !same_contents(src, bo.dmabuf_fd, NCH * CH))
		ret = -EBADMSG;
	close(bo.dmabuf_fd);
out:
	kp_chain_free(chain);
	if (p)
		kfd_process__free_unpacked(p, NULL);
	if (h)
		kfd_header__free_unpacked(h, NULL);
	return ret;
}

/* restore_chunked() in a child given 10 s; 1000 if it hung or crashed. */
static int restore_chunked_in_child(int dirfd, int src)
{
	pid_t pid = fork();
	int st;

	if (!pid) {
		alarm(10);
		_exit(-restore_chunked(dirfd, src) & 0xff);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 1000;
	return -WEXITSTATUS(st);
}

/*
 * The same through the parallel restore's workers: the restored process
 * hands over only the BO and its fd; the workers read the chunk map and
 * the chain from the image in @dirfd. 0 and the same as @src.
 */
static int restore_chunked_parallel(int dirfd, int src)
{
	struct kp_copy_bo bo = { .addr = BO_VA, .size = NCH * CH };
	struct kp_copy_job j = {
		.dir = KP_COPY_LOAD, .gpu_id = 1111, .nbos = 1, .bos = &bo,
		.no_sync = true, .chunk = CH,
	};
	KfdHeader *h = NULL;
	KfdProcess *p = NULL;
	pid_t child;
	int ret;

	p = read_kfd1(dirfd, &h);
	if (!p) {
		ret = -EIO;
		goto out;
	}
	bo.checksum = p->bos[0]->checksum;
	bo.dmabuf_fd = dirty_bo(NCH * CH);
	j.lane = test_lane;
	kp_name_pages(j.image, 1, 1111, test_lane);
	ret = kp_rw_start(3, 64 << 20);
	if (!ret) {
		ret = submit_in_child(1, &j, 1, &child);
		if (!ret)
			ret = kp_rw_finish(child);
		kp_rw_stop();
	}
	if (!ret && !same_contents(src, bo.dmabuf_fd, NCH * CH))
		ret = -EBADMSG;
	close(bo.dmabuf_fd);
out:
	if (p)
		kfd_process__free_unpacked(p, NULL);
	if (h)
		kfd_header__free_unpacked(h, NULL);
	return ret;
}

/*
 * Slices of a chunked job (parallel restore): three BOs with zero and
 * stored chunks saved as one job, loaded back as three slices whose
 * offsets count stored bytes only; a wrong offset fails by checksum.
 */
static void test_chunked_slices(void)
{
	struct kp_copy_bo src[3], dst[3];
	uint8_t kinds[3][NCH];
	uint64_t sums[3][NCH], total = 0, skip;
	struct kp_copy_job j = {
		.dir = KP_COPY_SAVE, .gpu_id = 1111, .nbos = 3, .bos = src,
		.no_sync = true, .chunk = CH,
	};
	struct kp_copy_job s[3];
	int dirfd, i;

	dirfd = open_dir("slices");
	kp_set_image_dir(dirfd);
	kp_name_pages(j.image, 1, 1111, 0);
	for (i = 0; i < 3; i++) {
		src[i] = (struct kp_copy_bo){ .addr = BO_VA + i * NCH * CH,
					      .size = NCH * CH,
					      .kinds = kinds[i],
					      .sums = sums[i] };
		src[i].dmabuf_fd = memfd_create("bo", MFD_CLOEXEC);
		CHECK(!ftruncate(src[i].dmabuf_fd, NCH * CH));
		put_chunk(src[i].dmabuf_fd, (unsigned int)i + 1, 0x30 + i);
		if (i != 1)
			put_chunk(src[i].dmabuf_fd, 4, 0x40 + i);
	}
	CHECK(!kp_copy_run(&j, 1, 2 * CH));
	for (i = 0; i < 3; i++) {
		dst[i] = src[i];
		dst[i].dmabuf_fd = dirty_bo(NCH * CH);
		total += src[i].stored;
	}
	CHECK(total == 5 * CH && src[1].stored == CH);
	for (skip = 0, i = 0; i < 3; i++) {
		s[i] = j;
		s[i].dir = KP_COPY_LOAD;
		s[i].bos = &dst[i];
		s[i].nbos = 1;
		s[i].slice_skip = skip;
		s[i].slice_total = total;
		skip += dst[i].stored;
	}
	CHECK(!kp_copy_run(s, 3, 64 << 20));
	for (i = 0; i < 3; i++)
		CHECK(same_contents(src[i].dmabuf_fd, dst[i].dmabuf_fd,
				    NCH * CH));
	/* Offsets in BO bytes, as for a version 1 image: wrong data. */
	s[1].slice_skip = NCH * CH;
	s[2].slice_skip = 2 * NCH * CH;
	CHECK(kp_copy_run(s, 3, 64 << 20) == -EIO);
	two_gpu_teardown(dirfd, src, dst);
}

static uint64_t file_size(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, 0) ? UINT64_MAX : (uint64_t)st.st_size;
}

static void test_sparse_incremental(void)
{
	char pages[KP_NAME_LEN], msg[128];
	struct chunked c1 = { 0 }, c2 = { 0 }, c3 = { 0 };
	struct kp_base base;
	int d1, dp, d2, d3, src, fd;
	uint8_t byte;
	unsigned int i;

	kp_name_pages(pages, 1, 1111, test_lane);
	d1 = open_dir("inc1");
	dp = open_dir("inc1p");		/* a pre-dump: no kfd images */
	d2 = open_dir("inc2");
	d3 = open_dir("inc3");
	CHECK(!symlinkat("../inc1", dp, "parent"));
	CHECK(!symlinkat("../inc1p", d2, "parent"));
	CHECK(!symlinkat("../inc2", d3, "parent"));

	/* Dump 1: chunks 1 and 4 written, the rest never: 2 of 6 stored. */
	src = memfd_create("bo", MFD_CLOEXEC);
	CHECK(!ftruncate(src, NCH * CH));
	put_chunk(src, 1, 0x11);
	put_chunk(src, 4, 0x44);
	CHECK(!save_chunked(d1, src, NULL, &c1));
	CHECK(c1.kinds[0] == KFD_CHUNK__KFD_CHUNK_ZERO &&
	      c1.kinds[1] == KFD_CHUNK__KFD_CHUNK_DATA &&
	      c1.kinds[4] == KFD_CHUNK__KFD_CHUNK_DATA &&
	      c1.kinds[5] == KFD_CHUNK__KFD_CHUNK_ZERO);
	CHECK(c1.stored == 2 * CH);
	CHECK(file_size(d1, pages) == 2 * CH);
	CHECK(c1.sums[0] == kp_chunk_sum_zeros(test_sum_kind, CH) &&
	      c1.sums[1] != c1.sums[4]);
	CHECK(kp_chunk_size_ok(CH) && kp_chunk_size_ok(64U << 20));
	CHECK(!kp_chunk_size_ok(2048) && !kp_chunk_size_ok(3 * CH) &&
	      !kp_chunk_size_ok(128U << 20));
	CHECK(kp_nchunks(NCH * CH + 1, CH) == NCH + 1 &&
	      kp_chunk_len(NCH * CH + 1, CH, NCH) == 1);
	write_chunked_image(d1, 111, &c1, 0, 0);
	/* The unwritten chunks come back as zeros over dirty VRAM. */
	CHECK(!restore_chunked(d1, src));

	/* Dump 2, two links up (across the pre-dump): chunk 2 written. */
	kp_set_image_dir(d2);
	kp_base_find(4242, CH, &base);
	CHECK(base.p && base.depth == 2 && base.dump_id == 111 &&
	      base.id == 1);
	CHECK(base.p && kp_base_sums(&base, BO_VA, NCH * CH, 1111,
				     KFD_IOC_ALLOC_MEM_FLAGS_VRAM,
				     &c2.parent_bo) &&
	      c2.parent_bo == 0);
	CHECK(!kp_base_sums(&base, BO_VA, NCH * CH + CH, 1111,
			    KFD_IOC_ALLOC_MEM_FLAGS_VRAM, &i));
	kp_base_free(&base);
	kp_base_find(4242, 2 * CH, &base);	/* other chunks: full dump */
	CHECK(!base.p);
	kp_base_find(999, CH, &base);		/* another process */
	CHECK(!base.p);
	put_chunk(src, 2, 0x22);
	CHECK(!save_chunked(d2, src, &c1, &c2));
	CHECK(c2.kinds[1] == KFD_CHUNK__KFD_CHUNK_PARENT &&
	      c2.kinds[2] == KFD_CHUNK__KFD_CHUNK_DATA &&
	      c2.kinds[4] == KFD_CHUNK__KFD_CHUNK_PARENT &&
	      c2.kinds[0] == KFD_CHUNK__KFD_CHUNK_ZERO);
	CHECK(c2.stored == CH && file_size(d2, pages) == CH);
	write_chunked_image(d2, 222, &c2, 111, 2);
	CHECK(!restore_chunked(d2, src));

	/* Dump 3: chunk 4 rewritten, chunk 1 cleared. */
	put_chunk(src, 4, 0x55);
	put_chunk(src, 1, 0);
	c3.parent_bo = 0;
	CHECK(!save_chunked(d3, src, &c2, &c3));
	CHECK(c3.kinds[1] == KFD_CHUNK__KFD_CHUNK_ZERO &&
	      c3.kinds[2] == KFD_CHUNK__KFD_CHUNK_PARENT &&
	      c3.kinds[4] == KFD_CHUNK__KFD_CHUNK_DATA);
	CHECK(c3.stored == CH);
	write_chunked_image(d3, 333, &c3, 222, 1);
	/* Chunk 2 lives in dump 2, the rest in dump 3 or nowhere. */
	CHECK(!restore_chunked(d3, src));
	CHECK(!restore_chunked_parallel(d3, src));
	CHECK(strstr(kp_log_last(), "BO contents of 1 processes are in place"));
	/* Dump 2 still restores to what it saved: chunk 4 of dump 1. */
	put_chunk(src, 4, 0x44);
	put_chunk(src, 1, 0x11);
	CHECK(!restore_chunked(d2, src));
	CHECK(!restore_chunked_parallel(d2, src));
	put_chunk(src, 4, 0x55);
	put_chunk(src, 1, 0);

	/*
	 * The memory of a chain is capped: dump 3's two parents (records
	 * and chunk maps) need more than 64 bytes, and fit the default.
	 */
	kp_chain_max_bytes = 64;
	CHECK(restore_chunked(d3, src) == -E2BIG);
	CHECK(strstr(kp_log_last(), "are too large"));
	kp_chain_max_bytes = KP_MAX_CHAIN_BYTES;
	CHECK(!restore_chunked(d3, src));

	/* FIFOs for a parent's pages image and a parent image: no hang. */
	CHECK(!renameat(d1, pages, d1, "saved"));
	CHECK(!mkfifoat(d1, pages, 0600));
	CHECK(restore_chunked_in_child(d3, src) == -ENOENT);
	CHECK(!unlinkat(d1, pages, 0) && !renameat(d1, "saved", d1, pages));
	CHECK(!renameat(d1, "kfd-1.img", d1, "saved"));
	CHECK(!mkfifoat(d1, "kfd-1.img", 0600));
	CHECK(restore_chunked_in_child(d3, src) == -EINVAL);
	CHECK(!unlinkat(d1, "kfd-1.img", 0) &&
	      !renameat(d1, "saved", d1, "kfd-1.img"));
	CHECK(!restore_chunked(d3, src));

	/* A damaged parent: one flipped byte in dump 1's chunk 1, used by 2. */
	fd = openat(d1, pages, O_RDWR | O_CLOEXEC);
	CHECK(pread(fd, &byte, 1, 100) == 1);
	byte ^= 0x01;
	CHECK(pwrite(fd, &byte, 1, 100) == 1);
	CHECK(restore_chunked(d2, src) == -EIO);
	CHECK(strstr(kp_log_last(), "checksum mismatch"));
	CHECK(strstr(kp_log_last(), "from the parent image parent/parent/kfd-1.img"));
	/* The workers check the parent's chunks too. */
	CHECK(restore_chunked_parallel(d2, src) == -EIO);
	CHECK(strstr(kp_log_last(), "1 of 1 processes' BO contents failed"));
	/* Dump 3 does not need that chunk (it is zero there now). */
	CHECK(!restore_chunked(d3, src));
	byte ^= 0x01;
	CHECK(pwrite(fd, &byte, 1, 100) == 1);
	/* Truncated parent pages image. */
	CHECK(!ftruncate(fd, CH));
	CHECK(restore_chunked(d3, src) == -EIO);
	snprintf(msg, sizeof(msg),
		 "parent pages image parent/parent/parent/%s is damaged", pages);
	CHECK(strstr(kp_log_last(), msg));
	close(fd);

	/* A parent from another dump. */
	write_chunked_image(d2, 999, &c2, 111, 2);
	CHECK(restore_chunked(d3, src) == -EIO);
	CHECK(strstr(kp_log_last(), "is not its parent"));
	write_chunked_image(d2, 222, &c2, 111, 2);
	/* Missing parent image, missing parent link. */
	CHECK(!unlinkat(d2, "kfd-1.img", 0));
	CHECK(restore_chunked(d3, src) == -ENOENT);
	CHECK(strstr(kp_log_last(), "parent image parent/kfd-1.img is missing"));
	write_chunked_image(d2, 222, &c2, 111, 2);
	CHECK(!unlinkat(d3, "parent", 0));
	CHECK(restore_chunked(d3, src) == -ENOENT);
	CHECK(strstr(kp_log_last(), "should be in parent/"));

	/* A BO reference out of range is a corrupt image. */
	CHECK(!symlinkat("../inc2", d3, "parent"));
	c3.parent_bo = 5;
	write_chunked_image(d3, 333, &c3, 222, 1);
	CHECK(restore_chunked(d3, src) == -EIO);
	CHECK(strstr(kp_log_last(), "refers to BO 5"));
	/* A chunk kind that does not exist. */
	c3.parent_bo = 0;
	c3.kinds[0] = 7;
	write_chunked_image(d3, 333, &c3, 222, 1);
	CHECK(restore_chunked(d3, src) == -EIO);
	CHECK(strstr(kp_log_last(), "disagree"));
	/* A lane this reader does not have is a corrupt image too. */
	if (test_lane) {
		c3.kinds[0] = KFD_CHUNK__KFD_CHUNK_ZERO;
		test_lane = KP_MAX_LANES;
		write_chunked_image(d3, 333, &c3, 222, 1);
		test_lane = 1;
		CHECK(restore_chunked(d3, src) == -EIO);
		CHECK(strstr(kp_log_last(), "disagree"));
	}

	close(src);
	kp_set_image_dir(AT_FDCWD);
	close(d1);
	close(dp);
	close(d2);
	close(d3);
}

/* ---- chunks classified on the GPU (gpu_scan.c) ---- */

/* The whole of file @name in @dirfd (malloc'd), or NULL. */
static uint8_t *read_file_at(int dirfd, const char *name, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *buf = NULL;

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st)) {
		buf = malloc((size_t)st.st_size + 1);
		if (buf && pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)st.st_size;
	}
	close(fd);
	return buf;
}

/* What the GPU's CHUNK_SUMS kernel gives for chunk @c of @p (@size bytes). */
static void device_pair(const uint8_t *p, uint64_t size, uint64_t c,
			uint64_t *pair)
{
	size_t len = kp_chunk_len(size, CH, c), i;
	uint64_t w, or = 0;

	for (i = 0; i < len; i += 8) {
		memcpy(&w, p + c * CH + i, 8);
		or |= w;
	}
	pair[0] = kp_sum_buf(p + c * CH, len);
	pair[1] = or;
}

/*
 * The dispatch: the code, the kernarg, and an IB of whole PM4 packets that
 * program the registers a gfx9 compute dispatch reads (the entry of the
 * kernel the job needs, RSRC1/RSRC2, the kernarg pointer in USER_DATA_0/1,
 * workgroups of one wave) and dispatch whole workgroups.
 */
static uint32_t scan_reg(const uint32_t *ib, uint32_t n, uint32_t reg,
			 uint32_t *dims)
{
	uint32_t k, op, cnt, r, val = 0xdeadbeef;

	for (k = 0; k < n; k += cnt + 2) {
		CHECK(ib[k] >> 30 == 3);
		op = (ib[k] >> 8) & 0xff;
		cnt = (ib[k] >> 16) & 0x3fff;
		if (ib[k] == KFDSIM_PM4_NOP_1DW)
			cnt = (uint32_t)-1;	/* the header alone */
		if (op == KFDSIM_PM4_OP_DISPATCH_DIRECT) {
			*dims = ib[k + 1];
			CHECK(ib[k + 2] == 1 && ib[k + 3] == 1 &&
			      ib[k + 4] == KFDSIM_PM4_DISPATCH_COMPUTE_SHADER_EN);
		}
		if (op != KFDSIM_PM4_OP_SET_SH_REG)
			continue;
		for (r = 0; r < cnt; r++)
			if (ib[k + 1] + r + KFDSIM_PM4_SH_REG_BASE == reg)
				val = ib[k + 2 + r];
	}
	CHECK(k == n);
	return val;
}

/* KFD_BO_SCAN, KFD_BO_SCAN_MS and how a window is cut into dispatches. */
static void test_scan_step(void)
{
	const uint32_t ch = 64 << 10;

	unsetenv("KFD_BO_SCAN");
	CHECK(kp_scan_mode_from_env() == KP_SCAN_AUTO);
	setenv("KFD_BO_SCAN", "GPU", 1);
	CHECK(kp_scan_mode_from_env() == KP_SCAN_GPU);
	setenv("KFD_BO_SCAN", "cpu", 1);
	CHECK(kp_scan_mode_from_env() == KP_SCAN_CPU);
	setenv("KFD_BO_SCAN", "fast", 1);
	CHECK(kp_scan_mode_from_env() == KP_SCAN_AUTO);
	unsetenv("KFD_BO_SCAN");

	unsetenv("KFD_BO_SCAN_MS");
	CHECK(kp_scan_dispatch_ms() == KP_SCAN_DISPATCH_MS);
	setenv("KFD_BO_SCAN_MS", "250", 1);
	CHECK(kp_scan_dispatch_ms() == 250);
	setenv("KFD_BO_SCAN_MS", "0", 1);
	CHECK(kp_scan_dispatch_ms() == KP_SCAN_DISPATCH_MS);
	setenv("KFD_BO_SCAN_MS", "12x", 1);
	CHECK(kp_scan_dispatch_ms() == KP_SCAN_DISPATCH_MS);
	unsetenv("KFD_BO_SCAN_MS");

	/* 11 MB/s (kfdsim's interpreter), 1 s: 2 waves of 64 KiB chunks. */
	CHECK(kp_scan_step(11000000, 1000, ch, 64ULL << 20) == 128ULL * ch);
	/* 4 KiB chunks: 41 waves (11 MB / 256 KiB = 41.96). */
	CHECK(kp_scan_step(11000000, 1000, 4096, 64ULL << 20) ==
	      41ULL * 64 * 4096);
	/* 250 ms of 64 KiB chunks: less than a wave, still one wave. */
	CHECK(kp_scan_step(11000000, 250, ch, 64ULL << 20) == 64ULL * ch);
	CHECK(kp_scan_step(1000, 1000, ch, 64ULL << 20) == 64ULL * ch);
	/* ... but never more than the window. */
	CHECK(kp_scan_step(1000, 1000, ch, 16ULL * ch) == 16ULL * ch);
	/* A real GPU (500 GB/s): the whole window in one dispatch. */
	CHECK(kp_scan_step(500000000000ULL, 1000, ch, 64ULL << 20) ==
	      64ULL << 20);
	/* No overflow near the top of the rates. */
	CHECK(kp_scan_step(1ULL << 53, 600000, ch, 1ULL << 40) == 1ULL << 40);

	CHECK(kp_rate(1 << 20, 1000000000ULL) == 1 << 20);
	CHECK(kp_rate(1 << 20, 0) == (1ULL << 20) * 1000000000ULL);
	CHECK(kp_rate(1ULL << 40, 1000000000ULL) == 1ULL << 40);
	CHECK(kp_rate(3000000, 250000000ULL) == 12000000);
}

static void test_scan_build(void)
{
	static uint8_t head[KP_SCAN_HEAD] __attribute__((aligned(8)));
	const uint64_t hva = 0x7f1234500000ULL;
	uint32_t ib[KP_SCAN_IB_DWORDS], n, dims = 0;
	struct kp_scan_args a;
	uint64_t pgm;

	CHECK(kp_scan_code_size > 0 && kp_scan_code_size <= KP_SCAN_CODE_MAX);
	/* Entries 256-byte aligned (PGM_LO is the address >> 8), distinct. */
	CHECK(!(kp_scan_xxh64_off % 256) && !(kp_scan_fold64_off % 256) &&
	      !(kp_scan_zero_off % 256));
	CHECK(kp_scan_xxh64_off != kp_scan_fold64_off &&
	      kp_scan_fold64_off != kp_scan_zero_off &&
	      kp_scan_zero_off != kp_scan_xxh64_off);
	CHECK(kp_scan_xxh64_off < kp_scan_code_size &&
	      kp_scan_fold64_off < kp_scan_code_size &&
	      kp_scan_zero_off < kp_scan_code_size);
	/* The first instruction: s_load_dwordx4 s[4:7], s[0:1], 0 (SMEM). */
	CHECK(!memcmp(kp_scan_code + kp_scan_zero_off,
		      "\x00\x01\x0a\xc0\x00\x00\x00\x00", 8));

	/* Image version 3's sums: the XXH64 kernel. */
	n = kp_scan_build(ib, head, hva, 0x200000, CH, CH, KP_SUM_XXH64,
			  false, 0x300000);
	pgm = scan_reg(ib, n, KFDSIM_PM4_REG_COMPUTE_PGM_LO, &dims) |
	      (uint64_t)scan_reg(ib, n, KFDSIM_PM4_REG_COMPUTE_PGM_HI,
				 &dims) << 32;
	CHECK(pgm << 8 == hva + kp_scan_xxh64_off);
	CHECK(!memcmp(head, kp_scan_code, kp_scan_code_size));
	CHECK(dims == 1);
	/* A full dump's zero test. */
	n = kp_scan_build(ib, head, hva, 0x200000, CH, CH, KP_SUM_XXH64,
			  true, 0x300000);
	CHECK(scan_reg(ib, n, KFDSIM_PM4_REG_COMPUTE_PGM_LO, &dims) << 8 ==
	      (uint32_t)(hva + kp_scan_zero_off));
	/* fold64 (image version 2), 65 chunks of which the last is short. */
	n = kp_scan_build(ib, head, hva, 0x200000, 64 * CH + 8, CH,
			  KP_SUM_FOLD64, false, 0x300000);
	CHECK(scan_reg(ib, n, KFDSIM_PM4_REG_COMPUTE_PGM_LO, &dims) << 8 ==
	      (uint32_t)(hva + kp_scan_fold64_off));
	CHECK(scan_reg(ib, n, KFDSIM_PM4_REG_COMPUTE_PGM_RSRC1, &dims) ==
	      KP_SCAN_RSRC1);
	CHECK(scan_reg(ib, n, KFDSIM_PM4_REG_COMPUTE_PGM_RSRC2, &dims) ==
	      KP_SCAN_RSRC2);
	CHECK(scan_reg(ib, n, KFDSIM_PM4_REG_COMPUTE_USER_DATA_0, &dims) ==
	      (uint32_t)(hva + KP_SCAN_ARGS_OFF));
	CHECK(scan_reg(ib, n, KFDSIM_PM4_REG_COMPUTE_USER_DATA_0 + 1, &dims) ==
	      (uint32_t)((hva + KP_SCAN_ARGS_OFF) >> 32));
	CHECK(scan_reg(ib, n, KFDSIM_PM4_REG_COMPUTE_NUM_THREAD_X, &dims) ==
	      KP_SCAN_WG);
	memcpy(&a, head + KP_SCAN_ARGS_OFF, sizeof(a));
	CHECK(a.src == 0x200000 && a.out == 0x300000 &&
	      a.size == 64 * CH + 8 && a.chunk == CH && a.nchunks == 65);
	CHECK(n <= KP_SCAN_IB_DWORDS && n % 8 == 0);
	CHECK(dims == 2);	/* 65 work-items: two workgroups of 64 */
}

/*
 * Save the classified BO of @j as sdma_copy.c does after a GPU scan: only
 * the DATA chunks of @p copied to the bounce buffer. 0 or -errno.
 */
static int save_scanned(struct kp_copy_job *j, const uint8_t *p)
{
	struct kp_copy_bo *bo = j->bos;
	uint8_t *copy = calloc(NCH, CH);
	struct kp_sum sum;
	int img, ret = -ENOMEM;
	uint64_t c;

	img = kp_img_create(j->image);
	CHECK(img >= 0 && copy);
	if (copy && img >= 0) {
		for (c = 0; c < NCH; c++)
			if (bo->kinds[c] == KFD_CHUNK__KFD_CHUNK_DATA)
				memcpy(copy + c * CH, p + c * CH, CH);
		kp_sum_init(&sum);
		bo->scanned = true;
		ret = kp_copy_image_io(j, img, bo, 0, copy, NCH * CH, &sum);
		bo->scanned = false;
	}
	if (img >= 0)
		close(img);
	free(copy);
	return ret;
}

/*
 * The GPU's results classify as the CPU would, and a save from them
 * writes the same image, having copied only the stored chunks.
 */
static void test_scan_classify(void)
{
	static const unsigned int pattern[NCH] = { 0, 0x11, 0, 0x22, 0x33, 0 };
	uint64_t pairs[2 * NCH], base[NCH];
	uint8_t *p, kinds[NCH], *a, *b;
	struct chunked cpu = { 0 };
	struct kp_copy_bo bo = { .addr = BO_VA, .size = NCH * CH };
	struct kp_copy_job j = {
		.dir = KP_COPY_SAVE, .gpu_id = 2222, .nbos = 1, .bos = &bo,
		.no_sync = true, .chunk = CH,
	};
	char why[256] = "", name[KP_NAME_LEN];
	int fd, dirfd;
	uint64_t sums[NCH], c;
	size_t alen, blen;
	unsigned int i;

	dirfd = open_dir("scan");
	fd = dirty_bo(NCH * CH);
	for (i = 0; i < NCH; i++)
		put_chunk(fd, i, pattern[i]);
	/* The CPU's save, and a parent that has chunk 3 (not chunk 1). */
	CHECK(!save_chunked(dirfd, fd, NULL, &cpu));
	memcpy(base, cpu.sums, sizeof(base));
	base[1] ^= 1;
	kp_name_pages(name, 1, 1111, 0);
	a = read_file_at(dirfd, name, &alen);

	p = mmap(NULL, NCH * CH, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	for (c = 0; c < NCH; c++)
		device_pair(p, NCH * CH, c, &pairs[2 * c]);
	j.zero_sum = kp_sum_zeros(CH);
	bo.kinds = kinds;
	bo.sums = sums;
	CHECK(!kp_scan_classify(&j, &bo, 0, NCH, pairs, false, why, sizeof(why)));
	CHECK(!memcmp(kinds, cpu.kinds, NCH) &&
	      !memcmp(sums, cpu.sums, sizeof(sums)));

	/* As sdma_copy.c does: only the stored chunks' bytes are there. */
	bo.base = base;
	CHECK(!kp_scan_classify(&j, &bo, 0, NCH, pairs, false, why, sizeof(why)));
	CHECK(kinds[3] == KFD_CHUNK__KFD_CHUNK_PARENT &&
	      kinds[1] == KFD_CHUNK__KFD_CHUNK_DATA &&
	      kinds[0] == KFD_CHUNK__KFD_CHUNK_ZERO);
	bo.base = NULL;
	CHECK(!kp_scan_classify(&j, &bo, 0, NCH, pairs, false, why, sizeof(why)));
	kp_set_image_dir(dirfd);
	kp_name_pages(j.image, 1, 2222, 0);
	CHECK(!save_scanned(&j, p) && bo.stored == cpu.stored &&
	      bo.stored == 3 * CH);
	b = read_file_at(dirfd, j.image, &blen);
	CHECK(a && b && alen == blen && !memcmp(a, b, alen));
	free(b);

	/*
	 * A DATA chunk whose GPU checksum is not what its bytes give: the
	 * CPU sums what it writes, and the dump fails there and then.
	 */
	sums[3] ^= 1ULL << 40;
	CHECK(save_scanned(&j, p) == -EIO);
	CHECK(strstr(kp_log_last(), "the GPU's checksum") &&
	      strstr(kp_log_last(), "offset 12288"));
	sums[3] ^= 1ULL << 40;

	/*
	 * A full dump's zero test (KFDSIM_KERNEL_CHUNK_ZERO: no sums, any
	 * non-zero word for a chunk with data): the same chunk map, and the
	 * CPU's sums of the stored chunks; the same image.
	 */
	{
		uint64_t zp[2 * NCH];

		for (c = 0; c < NCH; c++) {
			zp[2 * c] = 0;
			zp[2 * c + 1] = pairs[2 * c + 1] ? 0xee : 0;
		}
		memset(sums, 0, sizeof(sums));
		CHECK(!kp_scan_classify(&j, &bo, 0, NCH, zp, true, why,
					sizeof(why)));
		CHECK(!memcmp(kinds, cpu.kinds, NCH));
		bo.scan_zero = true;
		CHECK(!save_scanned(&j, p));
		bo.scan_zero = false;
		CHECK(!memcmp(sums, cpu.sums, sizeof(sums)));
		b = read_file_at(dirfd, j.image, &blen);
		CHECK(a && b && alen == blen && !memcmp(a, b, alen));
		free(b);
	}
	free(a);

	/* A zero chunk whose checksum is not the CPU's: not trusted. */
	pairs[0] ^= 1;
	why[0] = 0;
	CHECK(kp_scan_classify(&j, &bo, 0, NCH, pairs, false, why,
			       sizeof(why)) == -EIO && why[0]);
	munmap(p, NCH * CH);
	close(fd);
	kp_set_image_dir(AT_FDCWD);
	close(dirfd);
}

/*
 * kp_classify_chunks() with one thread and with two (the second half of
 * the chunks on a worker): the same kinds and sums as the bytes say, for
 * a full dump's zero test and with sums and a parent; and the pages image
 * a save writes from them is the one the CPU copy path writes.
 */
#define TC_NCH	600		/* 2.4 MiB of 4 KiB chunks: two threads */
#define TC_SIZE	((uint64_t)TC_NCH * CH - 1000)	/* a short last chunk */

/* Is chunk @c of @p zero? Byte by byte, as plainly as it gets. */
static bool tc_chunk_zero(const uint8_t *p, uint64_t c)
{
	uint64_t i, end = KP_MIN((c + 1) * CH, TC_SIZE);

	for (i = c * CH; i < end; i++)
		if (p[i])
			return false;
	return true;
}

/* Save @bo's classified chunks at @p into image @name of @dirfd. */
static int tc_save(struct kp_copy_job *j, int dirfd, const char *name,
		   const uint8_t *p)
{
	struct kp_sum sum;
	int img, ret;

	kp_set_image_dir(dirfd);
	snprintf(j->image, sizeof(j->image), "%s", name);
	img = kp_img_create(j->image);
	if (img < 0)
		return img;
	kp_sum_init(&sum);
	j->bos->scanned = true;
	j->bos->scan_zero = true;
	ret = kp_copy_image_io(j, img, j->bos, 0, (void *)p, TC_SIZE, &sum);
	j->bos->scanned = false;
	j->bos->scan_zero = false;
	j->bos->checksum = kp_sum_final(&sum);
	close(img);
	kp_set_image_dir(AT_FDCWD);
	return ret;
}

static void test_classify_threads(void)
{
	static uint8_t kinds[2][TC_NCH], cpu_kinds[TC_NCH];
	static uint64_t sums[2][TC_NCH], cpu_sums[TC_NCH], base[TC_NCH];
	struct kp_copy_bo bo = { .addr = BO_VA, .size = TC_SIZE };
	struct kp_copy_job j = {
		.dir = KP_COPY_SAVE, .gpu_id = 3333, .nbos = 1, .bos = &bo,
		.no_sync = true, .chunk = CH, .sum_kind = KP_SUM_XXH64,
	};
	uint8_t *a, *b, *p;
	size_t alen, blen, clen;
	unsigned int t, round;
	uint64_t c, h;
	bool zero;
	int fd, dirfd, ret;

	p = calloc(1, TC_SIZE);
	CHECK(p);
	if (!p)
		return;
	/* About one chunk in ten with data, some of it only in a last byte. */
	for (c = 0; c < TC_NCH; c++) {
		clen = kp_chunk_len(TC_SIZE, CH, c);
		if (c % 10 == 3)
			memset(p + c * CH, (int)(c % 251) + 1, clen);
		else if (c % 97 == 5 || c == TC_NCH - 1)
			p[c * CH + clen - 1] = 0x80;
		else if (c % 89 == 7)
			p[c * CH] = 1;
	}
	j.zero_sum = kp_chunk_sum_zeros(j.sum_kind, CH);
	for (c = 0; c < TC_NCH; c++)
		base[c] = c % 20 == 3 ?
			  kp_chunk_sum(j.sum_kind, p + c * CH,
				       kp_chunk_len(TC_SIZE, CH, c)) :
			  c;

	/* round 0: a full dump's zero test; 1: sums; 2: sums and a parent */
	for (round = 0; round < 3; round++) {
		bo.base = round == 2 ? base : NULL;
		for (t = 0; t < 2; t++) {
			memset(kinds[t], 0xff, TC_NCH);
			memset(sums[t], 0xa5, sizeof(sums[t]));
			bo.kinds = kinds[t];
			bo.sums = sums[t];
			j.classify_threads = t + 1;
			kp_classify_chunks(&j, &bo, p, 0, TC_NCH, round == 0);
		}
		CHECK(!memcmp(kinds[0], kinds[1], TC_NCH));
		CHECK(!memcmp(sums[0], sums[1], sizeof(sums[0])));
		for (c = 0; c < TC_NCH; c++) {
			clen = kp_chunk_len(TC_SIZE, CH, c);
			zero = tc_chunk_zero(p, c);
			h = kp_chunk_sum(j.sum_kind, p + c * CH, clen);
			if (zero) {
				CHECK(kinds[1][c] == KFD_CHUNK__KFD_CHUNK_ZERO &&
				      sums[1][c] == h);
				continue;
			}
			CHECK(kinds[1][c] == (round == 2 && c % 20 == 3 ?
					      KFD_CHUNK__KFD_CHUNK_PARENT :
					      KFD_CHUNK__KFD_CHUNK_DATA));
			CHECK(sums[1][c] == (round ? h : 0));
		}
	}
	CHECK(kinds[1][3] == KFD_CHUNK__KFD_CHUNK_PARENT &&
	      kinds[1][13] == KFD_CHUNK__KFD_CHUNK_DATA &&
	      kinds[1][5] == KFD_CHUNK__KFD_CHUNK_DATA &&
	      kinds[1][7] == KFD_CHUNK__KFD_CHUNK_DATA &&
	      kinds[1][0] == KFD_CHUNK__KFD_CHUNK_ZERO &&
	      kinds[1][TC_NCH - 1] == KFD_CHUNK__KFD_CHUNK_DATA);

	/*
	 * Images: one thread's and two threads' zero test, then the save
	 * (sums of the stored chunks), against the CPU copy path's image of
	 * the same bytes in a memfd.
	 */
	dirfd = open_dir("classify");
	bo.base = NULL;
	for (t = 0; t < 2; t++) {
		bo.kinds = kinds[t];
		bo.sums = sums[t];
		j.classify_threads = t + 1;
		kp_classify_chunks(&j, &bo, p, 0, TC_NCH, true);
		CHECK(!tc_save(&j, dirfd, t ? "two.img" : "one.img", p));
	}
	CHECK(!memcmp(kinds[0], kinds[1], TC_NCH) &&
	      !memcmp(sums[0], sums[1], sizeof(sums[0])));
	fd = memfd_create("vram", MFD_CLOEXEC);
	CHECK(fd >= 0 && pwrite(fd, p, TC_SIZE, 0) == (ssize_t)TC_SIZE);
	bo.dmabuf_fd = fd;
	bo.kinds = cpu_kinds;
	bo.sums = cpu_sums;
	j.mode = KP_COPY_CPU;
	kp_set_image_dir(dirfd);
	snprintf(j.image, sizeof(j.image), "cpu.img");
	CHECK(!kp_copy_run(&j, 1, 64 << 20));
	kp_set_image_dir(AT_FDCWD);
	CHECK(!memcmp(kinds[1], cpu_kinds, TC_NCH) &&
	      !memcmp(sums[1], cpu_sums, sizeof(cpu_sums)));
	a = read_file_at(dirfd, "two.img", &alen);
	b = read_file_at(dirfd, "cpu.img", &blen);
	CHECK(a && b && alen == blen && !memcmp(a, b, alen));
	free(a);
	a = read_file_at(dirfd, "one.img", &alen);
	CHECK(a && b && alen == blen && !memcmp(a, b, alen));
	free(a);

	/*
	 * The sparse store out of the mapping (kp_sparse_store()): one
	 * thread, two with room for all of the worker's chunks, two with
	 * room for a few (this thread stores the rest), a wrong recorded
	 * sum in the worker's half.
	 */
	{
		static const size_t caps[] = { 4 << 20, 4 << 20, 3 * CH };
		uint8_t *buf2 = malloc(4 << 20);
		uint64_t stored, want = 0, cpu_checksum = bo.checksum;
		struct kp_sum sum;
		int img;

		for (c = 0; c < TC_NCH; c++)
			if (cpu_kinds[c] == KFD_CHUNK__KFD_CHUNK_DATA)
				want += kp_chunk_len(TC_SIZE, CH, c);
		kp_stage_alloc(&j);
		CHECK(buf2 && j.stage);
		kp_set_image_dir(dirfd);
		for (t = 0; buf2 && j.stage && t < 4; t++) {
			bo.kinds = kinds[0];
			bo.sums = sums[0];
			j.classify_threads = t ? 2 : 1;
			kp_classify_chunks(&j, &bo, p, 0, TC_NCH, t < 3);
			snprintf(j.image, sizeof(j.image), "sparse%u.img", t);
			img = kp_img_create(j.image);
			CHECK(img >= 0);
			kp_sum_init(&sum);
			stored = 0;
			bo.stored = 0;
			bo.scanned = true;
			bo.scan_zero = t < 3;
			if (t == 3)	/* a chunk of the worker's half */
				sums[0][TC_NCH - 7] ^= 4;
			ret = kp_sparse_store(&j, img, &bo, TC_SIZE, 0, p, &sum,
					      buf2, t == 3 ? 4 << 20 : caps[t],
					      &stored);
			bo.scanned = false;
			bo.scan_zero = false;
			close(img);
			if (t == 3) {
				CHECK(ret == -EIO &&
				      strstr(kp_log_last(), "checksum") &&
				      strstr(kp_log_last(), "offset 2428928"));
				continue;
			}
			CHECK(!ret && stored == want && bo.stored == want);
			CHECK(kp_sum_final(&sum) == cpu_checksum);
			CHECK(!memcmp(kinds[0], cpu_kinds, TC_NCH) &&
			      !memcmp(sums[0], cpu_sums, sizeof(cpu_sums)));
			a = read_file_at(dirfd, j.image, &alen);
			CHECK(a && b && alen == blen && !memcmp(a, b, alen));
			free(a);
		}
		kp_set_image_dir(AT_FDCWD);
		kp_stage_free(&j);
		free(buf2);
	}
	free(b);
	close(fd);
	close(dirfd);
	free(p);

	/* The knob: 1 or 2, else the default (with a warning). */
	setenv("KFD_BO_SCAN_THREADS", "1", 1);
	CHECK(kp_classify_threads_from_env(1) == 1);
	setenv("KFD_BO_SCAN_THREADS", "2", 1);
	CHECK(kp_classify_threads_from_env(8) == 2);
	setenv("KFD_BO_SCAN_THREADS", "3", 1);
	t = kp_classify_threads_from_env(1);
	CHECK(strstr(kp_log_last(), "KFD_BO_SCAN_THREADS") && (t == 1 || t == 2));
	unsetenv("KFD_BO_SCAN_THREADS");
	CHECK(kp_classify_threads_from_env(1) ==
	      (sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2u : 1u));
	CHECK(kp_classify_threads_from_env(1u << 20) == 1);
}

/* ---- the cpu engine's pipeline (kp_cpu_pipe_window()) ---- */

#define CP_PIECE	(4 * CH)	/* KFD_BO_CPU_PIECE of these tests */
#define CP_NCH		62		/* chunks of the BO, the last partial */
#define CP_SIZE		((CP_NCH - 1) * CH + 100)

/* Entries of a /proc/self directory or lines of a /proc/self file. */
static int proc_count(const char *path, bool lines)
{
	char cmd[128], out[32];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof(cmd), lines ? "wc -l < %s" : "ls %s | wc -l",
		 path);
	f = popen(cmd, "r");
	if (f && fgets(out, sizeof(out), f))
		n = atoi(out);
	if (f)
		pclose(f);
	return n;
}

struct cp_leaks {
	int fds, tasks, maps;
};

static void cp_leaks_get(struct cp_leaks *l)
{
	l->fds = count_fds();
	l->tasks = proc_count("/proc/self/task", false);
	l->maps = proc_count("/proc/self/maps", true);
}

/* Nothing left behind since @before: fds, threads, mappings. */
static bool cp_no_leaks(const struct cp_leaks *before)
{
	struct cp_leaks now;

	cp_leaks_get(&now);
	return now.fds == before->fds && now.tasks == before->tasks &&
	       now.maps == before->maps;
}

/* The test BO's bytes: every fifth chunk zero, the others not. */
static int cp_bo(uint8_t *copy)
{
	int fd = fake_bo(CP_SIZE, 3);
	uint8_t *p;
	unsigned int c;

	p = mmap(NULL, CP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		exit(2);
	for (c = 0; c < CP_NCH; c += 5)
		memset(p + c * CH, 0, kp_chunk_len(CP_SIZE, CH, c));
	memcpy(copy, p, CP_SIZE);
	munmap(p, CP_SIZE);
	return fd;
}

/*
 * One job over @bo (image @name in @dirfd), the pipeline on or off, in
 * windows of KFD_MAX_BUFFER_SIZE @budget. Returns kp_copy_run()'s result;
 * *@window the job's window.
 */
static uint64_t cp_pipelined;	/* windows of cp_run()'s last job */

static int cp_run(int dirfd, const char *name, enum kp_copy_dir dir,
		  uint32_t chunk, struct kp_copy_bo *bo, bool pipe,
		  uint64_t budget, uint64_t *window)
{
	struct kp_copy_job j = {
		.dir = dir, .gpu_id = 4444, .nbos = 1, .bos = bo,
		.no_sync = true, .chunk = chunk, .sum_kind = KP_SUM_XXH64,
		.mode = KP_COPY_CPU,
	};
	int ret;

	setenv("KFD_BO_CPU_PIPE", pipe ? "1" : "0", 1);
	kp_set_image_dir(dirfd);
	snprintf(j.image, sizeof(j.image), "%s", name);
	ret = kp_copy_run(&j, 1, budget);
	kp_set_image_dir(AT_FDCWD);
	unsetenv("KFD_BO_CPU_PIPE");
	if (window)
		*window = j.window;
	cp_pipelined = j.pipe_windows;
	return ret;
}

static bool cp_same_file(int dirfd, const char *a, const char *b)
{
	size_t alen = 0, blen = 1;
	uint8_t *pa = read_file_at(dirfd, a, &alen);
	uint8_t *pb = read_file_at(dirfd, b, &blen);
	bool same = pa && pb && alen == blen && !memcmp(pa, pb, alen);

	free(pa);
	free(pb);
	return same;
}

static void test_cpu_pipe(void)
{
	static uint8_t kinds[3][CP_NCH], src_bytes[CP_SIZE];
	static uint64_t sums[3][CP_NCH];
	static const uint32_t chunks[] = { CH, 0 };
	struct kp_copy_bo bo[3];
	struct cp_leaks before;
	struct rlimit fsize, small;
	uint64_t window, c, off;
	uint8_t byte, *p;
	unsigned int i, k;
	int src, dst, dirfd, fd, ret;

	dirfd = open_dir("cpu_pipe");
	src = cp_bo(src_bytes);
	setenv("KFD_BO_CPU_PIECE", "16K", 1);

	/*
	 * Chunked (sparse: zero chunks not stored) and version 1 images:
	 * the serial path's image and the pipeline's (8 windows of 2
	 * pieces, the budget of 64 KiB less the two staging buffers) are the
	 * same bytes with the same chunk map and sums; each restores with
	 * the other path.
	 */
	for (k = 0; k < 2; k++) {
		for (i = 0; i < 2; i++) {
			bo[i] = (struct kp_copy_bo){
				.addr = BO_VA, .size = CP_SIZE,
				.dmabuf_fd = src, .kinds = kinds[i],
				.sums = sums[i],
			};
			memset(kinds[i], 0xff, CP_NCH);
			memset(sums[i], 0xa5, sizeof(sums[i]));
			CHECK(!cp_run(dirfd, i ? "pipe.img" : "serial.img",
				      KP_COPY_SAVE, chunks[k], &bo[i], i, 64 << 10,
				      &window));
			CHECK(window == (i ? 32U << 10 : 64U << 10));
			CHECK(cp_pipelined == (i ? 8 : 0));
			CHECK(strstr(kp_log_last(), i ? "; 8 windows pipelined" :
						 "; 0 windows pipelined"));
		}
		CHECK(cp_same_file(dirfd, "serial.img", "pipe.img"));
		CHECK(bo[0].checksum == bo[1].checksum &&
		      bo[0].stored == bo[1].stored);
		if (chunks[k]) {
			CHECK(!memcmp(kinds[0], kinds[1], CP_NCH) &&
			      !memcmp(sums[0], sums[1], sizeof(sums[0])));
			CHECK(kinds[1][0] == KFD_CHUNK__KFD_CHUNK_ZERO &&
			      kinds[1][1] == KFD_CHUNK__KFD_CHUNK_DATA &&
			      kinds[1][CP_NCH - 1] == KFD_CHUNK__KFD_CHUNK_DATA);
			CHECK(bo[1].stored == CP_SIZE - (CP_NCH + 4) / 5 * CH);
			CHECK(sums[1][1] == kp_chunk_sum(KP_SUM_XXH64,
							 src_bytes + CH, CH));
		}
		for (i = 0; i < 2; i++) {
			dst = dirty_bo(CP_SIZE);
			bo[2] = bo[1];
			bo[2].dmabuf_fd = dst;
			bo[2].kinds = kinds[1];
			bo[2].sums = sums[1];
			cp_leaks_get(&before);
			CHECK(!cp_run(dirfd, i ? "serial.img" : "pipe.img",
				      KP_COPY_LOAD, chunks[k], &bo[2], !i,
				      64 << 10, NULL));
			CHECK(cp_no_leaks(&before));
			CHECK(cp_pipelined == (i ? 0 : 8));
			CHECK(same_contents(src, dst, CP_SIZE));
			close(dst);
		}
	}

	/*
	 * An error in the writer (the job's thread): the file size limit
	 * stops the image at 70000 bytes, in the third window's second
	 * piece; the copier stops too, both are joined, nothing is left
	 * open or mapped.
	 */
	bo[1].kinds = kinds[1];
	bo[1].sums = sums[1];
	CHECK(!getrlimit(RLIMIT_FSIZE, &fsize));
	small = fsize;
	small.rlim_cur = 70000;
	signal(SIGXFSZ, SIG_IGN);
	cp_leaks_get(&before);
	CHECK(!setrlimit(RLIMIT_FSIZE, &small));
	ret = cp_run(dirfd, "full.img", KP_COPY_SAVE, CH, &bo[1], true,
		     64 << 10, NULL);
	CHECK(!setrlimit(RLIMIT_FSIZE, &fsize));
	signal(SIGXFSZ, SIG_DFL);
	CHECK(ret == -EFBIG && cp_pipelined == 3);
	CHECK(strstr(kp_log_last(), "cannot write image full.img"));
	CHECK(cp_no_leaks(&before));

	/*
	 * An error in the copier at dump: chunks said to be classified
	 * (bo->scanned, as after a GPU scan) with a recorded sum that the
	 * copied bytes of chunk 37 (window 4, its second piece) do not give.
	 */
	bo[1].scanned = true;
	for (c = 0; c < CP_NCH; c++) {
		kinds[2][c] = KFD_CHUNK__KFD_CHUNK_DATA;
		sums[2][c] = kp_chunk_sum(KP_SUM_XXH64, src_bytes + c * CH,
					  kp_chunk_len(CP_SIZE, CH, c));
	}
	sums[2][37] ^= 1;
	bo[1].kinds = kinds[2];
	bo[1].sums = sums[2];
	cp_leaks_get(&before);
	CHECK(cp_run(dirfd, "scanned.img", KP_COPY_SAVE, CH, &bo[1], true,
		     64 << 10, NULL) == -EIO);
	CHECK(cp_pipelined == 5);
	CHECK(strstr(kp_log_last(), "chunk at offset 151552"));
	CHECK(cp_no_leaks(&before));
	bo[1].scanned = false;

	/*
	 * The restore of a corrupted piece: one flipped byte in stored chunk
	 * 37 fails it, naming the chunk, before that chunk's bytes reach the
	 * BO.
	 */
	bo[2] = bo[1];
	bo[2].kinds = kinds[1];
	bo[2].sums = sums[1];
	CHECK(!cp_run(dirfd, "pipe.img", KP_COPY_SAVE, CH, &bo[2], true,
		      64 << 10, NULL));
	for (off = 0, c = 0; c < 37; c++)
		if (kinds[1][c] == KFD_CHUNK__KFD_CHUNK_DATA)
			off += CH;
	fd = openat(dirfd, "pipe.img", O_RDWR | O_CLOEXEC);
	CHECK(pread(fd, &byte, 1, (off_t)off + 5) == 1);
	byte ^= 0x10;
	CHECK(pwrite(fd, &byte, 1, (off_t)off + 5) == 1);
	dst = dirty_bo(CP_SIZE);
	bo[2].dmabuf_fd = dst;
	cp_leaks_get(&before);
	CHECK(cp_run(dirfd, "pipe.img", KP_COPY_LOAD, CH, &bo[2], true,
		     64 << 10, NULL) == -EIO);
	CHECK(cp_pipelined == 5);
	CHECK(strstr(kp_log_last(), "checksum mismatch in its stored chunk at offset 151552"));
	CHECK(cp_no_leaks(&before));
	p = mmap(NULL, CP_SIZE, PROT_READ, MAP_SHARED, dst, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED) {
		CHECK(!memcmp(p + CH, src_bytes + CH, CH));
		for (c = 0; c < CH && p[37 * CH + c] == 0xee; c++)
			;
		CHECK(c == CH);
		munmap(p, CP_SIZE);
	}

	/* A truncated image: the reader (the job's thread) fails. */
	CHECK(!ftruncate(fd, (off_t)off + CH / 2));
	close(fd);
	cp_leaks_get(&before);
	CHECK(cp_run(dirfd, "pipe.img", KP_COPY_LOAD, CH, &bo[2], true,
		     64 << 10, NULL) == -EIO);
	CHECK(strstr(kp_log_last(), "is truncated"));
	CHECK(cp_no_leaks(&before));
	close(dst);

	/*
	 * A budget without room for two pieces besides the staging
	 * buffers: the serial path, its window the whole budget.
	 */
	bo[2].dmabuf_fd = src;
	CHECK(!cp_run(dirfd, "small.img", KP_COPY_SAVE, CH, &bo[2], true,
		      48 << 10, &window));
	CHECK(window == 48U << 10 && !cp_pipelined);
	CHECK(bo[2].stored == CP_SIZE - (CP_NCH + 4) / 5 * CH);

	unsetenv("KFD_BO_CPU_PIECE");
	close(src);
	close(dirfd);
}

int main(void)
{
	char cmd[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/kfd-plugin-tests.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	/* The failures the tests provoke are expected: keep them quiet. */
	kp_log_set_stderr_level(CRIU_LOG_MSG);
	/* The jobs here are of plain files (memfds), not dma-bufs. */
	kp_rw_test_mode(true);

	test_parse();
	test_checksum();
	test_is_zero();
	test_img_write();
	test_xxh64();
	test_topology_read();
	test_topology_hidden();
	test_match();
	test_names();
	test_images();
	test_copy();
	test_parallel_restore();
	test_parallel_restore_peers();
	test_hsakmt_shm();
	test_sparse_incremental();
	/*
	 * Again with what dumps write now (version 3, XXH64 chunk sums), in
	 * a directory of its own below the first run's.
	 */
	{
		size_t n = strlen(tmpdir);

		strcat(tmpdir, "/xxh64");
		CHECK(!mkdir(tmpdir, 0755));
		test_sum_kind = KP_SUM_XXH64;
		test_sparse_incremental();
		/* And with the BO in the pages image of lane 1 (format 4). */
		strcat(tmpdir, "/lane1");
		CHECK(!mkdir(tmpdir, 0755));
		test_lane = 1;
		test_sparse_incremental();
		test_lane = 0;
		test_sum_kind = KP_SUM_FOLD64;
		tmpdir[n] = 0;
	}
	test_chunked_slices();
	test_scan_step();
	test_scan_build();
	test_scan_classify();
	test_classify_threads();
	test_cpu_pipe();

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	printf("kfd plugin unit tests: %d checks, %d failed\n", checks,
	       failures);
	return failures ? 1 : 0;
}
