// SPDX-License-Identifier: GPL-2.0
/*
 * The KFD topology under /sys/class/kfd/kfd/topology, read the way AMD's
 * thunk (libhsakmt) and CRIU's amdgpu plugin read it: every properties file
 * is "key value" lines, counts match the directories, GPU nodes name a DRM
 * render node that answers like amdgpu.
 *
 * The seed_ids test compares gpu_ids and render minors across module
 * loads; run.sh drives it through environment variables (see there).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <libdrm/drm.h>

#include "kt_harness.h"
#include "kfdsim_test.h"

/* Keys amdkfd prints for every node, in any order. */
static const char * const node_keys[] = {
	"cpu_cores_count", "simd_count", "mem_banks_count", "caches_count",
	"io_links_count", "p2p_links_count", "cpu_core_id_base",
	"simd_id_base", "max_waves_per_simd", "lds_size_in_kb",
	"gds_size_in_kb", "num_gws", "wave_front_size", "array_count",
	"simd_arrays_per_engine", "cu_per_simd_array", "simd_per_cu",
	"max_slots_scratch_cu", "gfx_target_version", "vendor_id",
	"device_id", "location_id", "domain", "drm_render_minor", "hive_id",
	"num_sdma_engines", "num_sdma_xgmi_engines",
	"num_sdma_queues_per_engine", "num_cp_queues",
	"max_engine_clk_ccompute",
};

/* Keys amdkfd prints only for GPU nodes. */
static const char * const gpu_keys[] = {
	"max_engine_clk_fcompute", "local_mem_size", "fw_version",
	"capability", "sdma_fw_version", "unique_id",
};

static const char * const mem_keys[] = {
	"heap_type", "size_in_bytes", "flags", "width", "mem_clk_max",
};

static const char * const cache_keys[] = {
	"processor_id_low", "level", "size", "cache_line_size",
	"cache_lines_per_tag", "association", "latency", "type",
};

static const char * const link_keys[] = {
	"type", "version_major", "version_minor", "node_from", "node_to",
	"weight", "min_latency", "max_latency", "min_bandwidth",
	"max_bandwidth", "recommended_transfer_size", "flags",
};

#define HEAP_TYPE_SYSTEM	0
#define HEAP_TYPE_FB_PUBLIC	1
#define HEAP_TYPE_FB_PRIVATE	2
/* capability bits 13:12: doorbell type; 2 = 64-bit doorbells (gfx9+) */
#define CAP_DOORBELL_TYPE(c)	(((c) >> 12) & 3)
#define DRM_RENDER_MINOR_BASE	128

#define MAX_NODES	(KT_MAX_GPUS + 1)

FIXTURE(topo) {
	int nnodes;
	unsigned long long num_gpus, vram_bytes;
	struct kt_props node[MAX_NODES];
	char err[512];
};

FIXTURE_SETUP(topo)
{
	char path[128];
	int i;

	ASSERT_EQ(0, kt_param("num_gpus", &self->num_gpus));
	ASSERT_EQ(0, kt_param("vram_mb", &self->vram_bytes));
	self->vram_bytes <<= 20;
	self->nnodes = kt_count_subdirs(KT_NODES);
	ASSERT_GT(self->nnodes, 0);
	ASSERT_LE(self->nnodes, MAX_NODES);
	for (i = 0; i < self->nnodes; i++) {
		snprintf(path, sizeof(path), "%s/%d/properties", KT_NODES, i);
		ASSERT_EQ(0, kt_props_read(path, false, &self->node[i],
					   self->err, sizeof(self->err)))
			TH_LOG("%s", self->err);
	}
}

FIXTURE_TEARDOWN(topo)
{
}

static unsigned long long prop(const struct kt_props *p, const char *key)
{
	unsigned long long v = ~0ULL;

	kt_prop(p, key, &v);
	return v;
}

/* Which of @keys @p lacks (present: wanted true) or has (wanted false). */
static int keys_check(const struct kt_props *p, const char * const *keys,
		      unsigned int n, bool wanted, char *buf, size_t len)
{
	unsigned int i;
	size_t off = 0;
	int bad = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		if (kt_prop(p, keys[i], NULL) == wanted)
			continue;
		bad++;
		if (off < len)
			off += snprintf(buf + off, len - off, " %s", keys[i]);
	}
	return bad;
}

static unsigned long long node_gpu_id(int node)
{
	char path[128];
	unsigned long long id = ~0ULL;

	snprintf(path, sizeof(path), "%s/%d/gpu_id", KT_NODES, node);
	if (kt_read_ull(path, &id))
		return ~0ULL;
	return id;
}

/* @dir holds exactly the subdirectories 0..n-1 and nothing else. */
static bool numbered_dirs(const char *dir, int n, char *err, size_t len)
{
	struct dirent *d;
	bool ok = true;
	int count = 0;
	DIR *dp;

	dp = opendir(dir);
	if (!dp) {
		snprintf(err, len, "%s: %s", dir, strerror(errno));
		return false;
	}
	while ((d = readdir(dp))) {
		char *end;
		long v;

		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		v = strtol(d->d_name, &end, 10);
		if (d->d_type != DT_DIR || *end || v < 0 || v >= n ||
		    (d->d_name[0] == '0' && d->d_name[1])) {
			snprintf(err, len, "%s: unexpected entry %s", dir,
				 d->d_name);
			ok = false;
		}
		count++;
	}
	closedir(dp);
	if (ok && count != n) {
		snprintf(err, len, "%s: %d entries, expected %d", dir, count,
			 n);
		ok = false;
	}
	return ok;
}

TEST(kfd_device_node)
{
	struct stat st;
	int fd;

	ASSERT_EQ(0, stat("/dev/kfd", &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0666, st.st_mode & 0777);
	fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	close(fd);
}

TEST(generation_id)
{
	unsigned long long gen;

	ASSERT_EQ(0, kt_read_ull(KT_TOPOLOGY "/generation_id", &gen));
}

TEST(system_properties)
{
	struct kt_props p;
	char err[256];

	ASSERT_EQ(0, kt_props_read(KT_TOPOLOGY "/system_properties", false,
				   &p, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_TRUE(kt_prop(&p, "platform_oem", NULL));
	EXPECT_TRUE(kt_prop(&p, "platform_id", NULL));
	EXPECT_TRUE(kt_prop(&p, "platform_rev", NULL));
}

/* nodes/ is 0..N-1: the CPU node plus one node per simulated GPU. */
TEST_F(topo, node_directories)
{
	ASSERT_TRUE(numbered_dirs(KT_NODES, self->nnodes, self->err,
				  sizeof(self->err)))
		TH_LOG("%s", self->err);
	EXPECT_EQ(self->num_gpus + 1, (unsigned long long)self->nnodes);
}

TEST_F(topo, cpu_node)
{
	const struct kt_props *p = &self->node[0];
	char name[64], keys[512];

	EXPECT_EQ(0, node_gpu_id(0));
	EXPECT_EQ(0, prop(p, "simd_count"));
	EXPECT_GT(prop(p, "cpu_cores_count"), 0);
	EXPECT_NE(~0ULL, prop(p, "cpu_cores_count"));
	EXPECT_EQ(0, prop(p, "drm_render_minor"));
	EXPECT_EQ(0, keys_check(p, gpu_keys, ARRAY_SIZE(gpu_keys), false,
				keys, sizeof(keys)))
		TH_LOG("CPU node prints GPU-only keys:%s", keys);
	ASSERT_GE(kt_read_file(KT_NODES "/0/name", name, sizeof(name)), 1);
	EXPECT_EQ('\n', name[strlen(name) - 1]);
}

TEST_F(topo, node_properties_keys)
{
	char keys[512];
	int n;

	for (n = 0; n < self->nnodes; n++) {
		EXPECT_EQ(0, keys_check(&self->node[n], node_keys,
					ARRAY_SIZE(node_keys), true, keys,
					sizeof(keys)))
			TH_LOG("node %d lacks:%s", n, keys);
		if (!node_gpu_id(n))
			continue;
		EXPECT_EQ(0, keys_check(&self->node[n], gpu_keys,
					ARRAY_SIZE(gpu_keys), true, keys,
					sizeof(keys)))
			TH_LOG("GPU node %d lacks:%s", n, keys);
	}
}

/* What a gfx906 GPU reports, and what follows from the module params. */
TEST_F(topo, gpu_node_values)
{
	char path[128], name[64], keys[512];
	int n;

	for (n = 1; n < self->nnodes; n++) {
		const struct kt_props *p = &self->node[n];
		unsigned long long gfxv = prop(p, "gfx_target_version");
		unsigned int major, minor, step;

		/* A missing key would read as ~0 below and pass for "> 0". */
		ASSERT_EQ(0, keys_check(p, node_keys, ARRAY_SIZE(node_keys),
					true, keys, sizeof(keys)) +
			     keys_check(p, gpu_keys, ARRAY_SIZE(gpu_keys),
					true, keys, sizeof(keys)))
			TH_LOG("node %d lacks keys", n);
		snprintf(path, sizeof(path), "%s/%d/name", KT_NODES, n);
		ASSERT_GT(kt_read_file(path, name, sizeof(name)), 0);
		EXPECT_STREQ("gfx906\n", name);
		/* gfx_target_version = major * 10000 + minor * 100 + step */
		ASSERT_EQ(3, sscanf(name, "gfx%1u%1x%1x", &major, &minor, &step));
		EXPECT_EQ(major * 10000 + minor * 100 + step, gfxv);

		EXPECT_EQ(4098, prop(p, "vendor_id"));
		EXPECT_NE(0, prop(p, "device_id"));
		EXPECT_EQ(0, prop(p, "cpu_cores_count"));
		EXPECT_GT(prop(p, "simd_count"), 0);
		EXPECT_EQ(prop(p, "array_count") * prop(p, "cu_per_simd_array") *
			  prop(p, "simd_per_cu"), prop(p, "simd_count"));
		ASSERT_GT(prop(p, "simd_arrays_per_engine"), 0);
		EXPECT_EQ(0, prop(p, "array_count") %
			  prop(p, "simd_arrays_per_engine"));
		EXPECT_EQ(64, prop(p, "wave_front_size"));
		EXPECT_EQ(64, prop(p, "lds_size_in_kb"));
		EXPECT_GT(prop(p, "max_waves_per_simd"), 0);
		EXPECT_GT(prop(p, "num_sdma_engines"), 0);
		EXPECT_GT(prop(p, "num_sdma_queues_per_engine"), 0);
		EXPECT_GT(prop(p, "num_cp_queues"), 0);
		EXPECT_GT(prop(p, "fw_version"), 0);
		EXPECT_GT(prop(p, "sdma_fw_version"), 0);
		EXPECT_EQ(self->vram_bytes, prop(p, "local_mem_size"));
		EXPECT_EQ(2, CAP_DOORBELL_TYPE(prop(p, "capability")));
		EXPECT_GE(prop(p, "drm_render_minor"), DRM_RENDER_MINOR_BASE);
		EXPECT_NE(0, prop(p, "unique_id"));
	}
}

/* gpu_ids are 16-bit, non-zero and unique; so are the other identities. */
TEST_F(topo, gpu_identities_unique)
{
	static const char * const uniq[] = {
		"unique_id", "location_id", "drm_render_minor",
	};
	unsigned long long ids[MAX_NODES];
	unsigned int k, shared;
	int a, b;

	for (a = 1; a < self->nnodes; a++) {
		ids[a] = node_gpu_id(a);
		EXPECT_NE(0, ids[a]);
		EXPECT_LT(ids[a], 65536);
	}
	for (a = 1; a < self->nnodes; a++) {
		for (b = a + 1; b < self->nnodes; b++) {
			EXPECT_NE(ids[a], ids[b]);
			shared = 0;
			for (k = 0; k < ARRAY_SIZE(uniq); k++)
				shared += prop(&self->node[a], uniq[k]) ==
					  prop(&self->node[b], uniq[k]);
			EXPECT_EQ(0, shared)
				TH_LOG("nodes %d and %d share an identity", a,
				       b);
		}
	}
}

TEST_F(topo, mem_banks)
{
	char dir[128], path[160], keys[512];
	struct kt_props p;
	int n, m, count;

	for (n = 0; n < self->nnodes; n++) {
		bool gpu = node_gpu_id(n) != 0;

		count = (int)prop(&self->node[n], "mem_banks_count");
		EXPECT_GE(count, 1);
		snprintf(dir, sizeof(dir), "%s/%d/mem_banks", KT_NODES, n);
		ASSERT_TRUE(numbered_dirs(dir, count, self->err,
					  sizeof(self->err)))
			TH_LOG("%s", self->err);
		for (m = 0; m < count; m++) {
			snprintf(path, sizeof(path), "%s/%d/properties", dir, m);
			ASSERT_EQ(0, kt_props_read(path, false, &p, self->err,
						   sizeof(self->err)))
				TH_LOG("%s", self->err);
			EXPECT_EQ(0, keys_check(&p, mem_keys,
						ARRAY_SIZE(mem_keys), true,
						keys, sizeof(keys)))
				TH_LOG("%s lacks:%s", path, keys);
			EXPECT_GT(prop(&p, "size_in_bytes"), 0);
			if (!gpu) {
				EXPECT_EQ(HEAP_TYPE_SYSTEM, prop(&p, "heap_type"));
			} else if (m == 0) {
				unsigned long long h = prop(&p, "heap_type");

				EXPECT_TRUE(h == HEAP_TYPE_FB_PUBLIC ||
					    h == HEAP_TYPE_FB_PRIVATE)
					TH_LOG("GPU bank heap_type %llu", h);
				EXPECT_EQ(self->vram_bytes,
					  prop(&p, "size_in_bytes"));
			}
		}
	}
}

TEST_F(topo, caches)
{
	char dir[128], path[160], keys[512];
	struct kt_props p;
	int n, c, count;

	for (n = 0; n < self->nnodes; n++) {
		count = (int)prop(&self->node[n], "caches_count");
		snprintf(dir, sizeof(dir), "%s/%d/caches", KT_NODES, n);
		ASSERT_TRUE(numbered_dirs(dir, count, self->err,
					  sizeof(self->err)))
			TH_LOG("%s", self->err);
		if (node_gpu_id(n))
			EXPECT_GT(count, 0);
		for (c = 0; c < count; c++) {
			unsigned long long level;

			snprintf(path, sizeof(path), "%s/%d/properties", dir, c);
			ASSERT_EQ(0, kt_props_read(path, true, &p, self->err,
						   sizeof(self->err)))
				TH_LOG("%s", self->err);
			EXPECT_EQ(0, keys_check(&p, cache_keys,
						ARRAY_SIZE(cache_keys), true,
						keys, sizeof(keys)))
				TH_LOG("%s lacks:%s", path, keys);
			EXPECT_GT(p.sibling_bits, 0)
				TH_LOG("%s: no sibling_map", path);
			level = prop(&p, "level");
			EXPECT_TRUE(level >= 1 && level <= 3)
				TH_LOG("%s: level %llu", path, level);
			EXPECT_GT(prop(&p, "size"), 0);
			EXPECT_GT(prop(&p, "cache_line_size"), 0);
			EXPECT_NE(0, prop(&p, "type"));
		}
	}
}

/* Links are between existing nodes, both ways; every GPU reaches node 0. */
TEST_F(topo, io_links)
{
	static bool link[MAX_NODES][MAX_NODES];
	char dir[128], path[160], keys[512];
	struct kt_props p;
	int n, l, count;

	memset(link, 0, sizeof(link));
	for (n = 0; n < self->nnodes; n++) {
		count = (int)prop(&self->node[n], "io_links_count");
		snprintf(dir, sizeof(dir), "%s/%d/io_links", KT_NODES, n);
		ASSERT_TRUE(numbered_dirs(dir, count, self->err,
					  sizeof(self->err)))
			TH_LOG("%s", self->err);
		for (l = 0; l < count; l++) {
			unsigned long long to;

			snprintf(path, sizeof(path), "%s/%d/properties", dir, l);
			ASSERT_EQ(0, kt_props_read(path, false, &p, self->err,
						   sizeof(self->err)))
				TH_LOG("%s", self->err);
			EXPECT_EQ(0, keys_check(&p, link_keys,
						ARRAY_SIZE(link_keys), true,
						keys, sizeof(keys)))
				TH_LOG("%s lacks:%s", path, keys);
			EXPECT_EQ((unsigned long long)n, prop(&p, "node_from"));
			to = prop(&p, "node_to");
			ASSERT_LT(to, (unsigned long long)self->nnodes);
			EXPECT_NE((unsigned long long)n, to);
			EXPECT_NE(0, prop(&p, "type"));
			link[n][to] = true;
		}
	}
	for (n = 0; n < self->nnodes; n++) {
		for (l = 0; l < self->nnodes; l++)
			EXPECT_EQ(link[n][l], link[l][n])
				TH_LOG("link %d->%d has no way back", n, l);
		if (n)
			EXPECT_TRUE(link[n][0])
				TH_LOG("GPU node %d has no link to the CPU", n);
	}
}

TEST_F(topo, p2p_links)
{
	char dir[128];
	struct stat st;
	int n, count;

	for (n = 0; n < self->nnodes; n++) {
		count = (int)prop(&self->node[n], "p2p_links_count");
		snprintf(dir, sizeof(dir), "%s/%d/p2p_links", KT_NODES, n);
		if (stat(dir, &st)) {
			EXPECT_EQ(0, count);
			continue;
		}
		EXPECT_TRUE(numbered_dirs(dir, count, self->err,
					  sizeof(self->err)))
			TH_LOG("%s", self->err);
	}
}

/* What the thunk and libdrm_amdgpu check before they use a GPU node. */
TEST_F(topo, render_nodes_are_amdgpu)
{
	char path[64], name[64], date[64], desc[128];
	struct stat st;
	int n;

	for (n = 1; n < self->nnodes; n++) {
		int minor = (int)prop(&self->node[n], "drm_render_minor");
		struct drm_version v = {
			.name_len = sizeof(name) - 1, .name = name,
			.date_len = sizeof(date) - 1, .date = date,
			.desc_len = sizeof(desc) - 1, .desc = desc,
		};
		int fd;

		memset(name, 0, sizeof(name));
		snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s missing", path);
		EXPECT_TRUE(S_ISCHR(st.st_mode));
		EXPECT_EQ(KT_DRM_MAJOR, major(st.st_rdev));
		EXPECT_EQ((unsigned int)minor, minor(st.st_rdev));
		fd = open(path, O_RDWR | O_CLOEXEC);
		ASSERT_GE(fd, 0);
		EXPECT_EQ(0, kt_ioctl(fd, DRM_IOCTL_VERSION, &v));
		close(fd);
		EXPECT_STREQ("amdgpu", name);
		EXPECT_EQ(3, v.version_major);
	}
}

/* The thunk re-reads generation_id to detect a topology that changed. */
TEST_F(topo, snapshot_stable)
{
	unsigned long long gen1, gen2;
	struct kt_props again;
	char path[128];
	int n;

	ASSERT_EQ(0, kt_read_ull(KT_TOPOLOGY "/generation_id", &gen1));
	for (n = 0; n < self->nnodes; n++) {
		snprintf(path, sizeof(path), "%s/%d/properties", KT_NODES, n);
		ASSERT_EQ(0, kt_props_read(path, false, &again, self->err,
					   sizeof(self->err)));
		EXPECT_EQ(0, memcmp(&again, &self->node[n], sizeof(again)))
			TH_LOG("node %d properties changed between reads", n);
	}
	ASSERT_EQ(0, kt_read_ull(KT_TOPOLOGY "/generation_id", &gen2));
	EXPECT_EQ(gen1, gen2);
}

/*
 * seed_ids: the module's seed decides gpu_ids and render minors.
 *   KFDSIM_TOPO_SAVE=file       record this load's "node gpu_id minor" lines
 *   KFDSIM_TOPO_DIFFERENT=f:g   every GPU's gpu_id and minor differ from
 *                               those recorded in each file
 *   KFDSIM_TOPO_SAME=file       ... are identical to those in file
 * Without any of them there is nothing to compare and the test skips.
 */
struct seed_rec {
	int n;
	unsigned int node[MAX_NODES], id[MAX_NODES], minor[MAX_NODES];
};

static int seed_load(const char *path, struct seed_rec *r)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	r->n = 0;
	while (r->n < MAX_NODES &&
	       fscanf(f, "%u %u %u", &r->node[r->n], &r->id[r->n],
		      &r->minor[r->n]) == 3)
		r->n++;
	fclose(f);
	return 0;
}

TEST(seed_ids)
{
	const char *save = getenv("KFDSIM_TOPO_SAVE");
	const char *diff = getenv("KFDSIM_TOPO_DIFFERENT");
	const char *same = getenv("KFDSIM_TOPO_SAME");
	struct kt_gpu gpus[KT_MAX_GPUS];
	struct seed_rec rec;
	char *list, *tok, *saveptr;
	int n, i;

	if (!save && !diff && !same)
		SKIP(return, "no KFDSIM_TOPO_* comparison requested");
	n = kt_gpus(gpus, KT_MAX_GPUS);
	ASSERT_GT(n, 0);

	if (save) {
		FILE *f = fopen(save, "we");

		ASSERT_NE(NULL, f) TH_LOG("%s: %s", save, strerror(errno));
		for (i = 0; i < n; i++)
			fprintf(f, "%u %u %d\n", gpus[i].node, gpus[i].gpu_id,
				gpus[i].render_minor);
		ASSERT_EQ(0, fclose(f));
	}
	if (same) {
		ASSERT_EQ(0, seed_load(same, &rec)) TH_LOG("%s", same);
		ASSERT_EQ(n, rec.n);
		for (i = 0; i < n; i++) {
			EXPECT_EQ(rec.node[i], gpus[i].node);
			EXPECT_EQ(rec.id[i], gpus[i].gpu_id);
			EXPECT_EQ(rec.minor[i], (unsigned int)gpus[i].render_minor);
		}
	}
	if (diff) {
		list = strdup(diff);
		ASSERT_NE(NULL, list);
		for (tok = strtok_r(list, ":", &saveptr); tok;
		     tok = strtok_r(NULL, ":", &saveptr)) {
			ASSERT_EQ(0, seed_load(tok, &rec)) TH_LOG("%s", tok);
			ASSERT_EQ(n, rec.n);
			for (i = 0; i < n; i++) {
				TH_LOG("node %u: gpu_id %u vs %u, minor %d vs %u (%s)",
				       gpus[i].node, gpus[i].gpu_id, rec.id[i],
				       gpus[i].render_minor, rec.minor[i], tok);
				EXPECT_NE(rec.id[i], gpus[i].gpu_id);
				EXPECT_NE(rec.minor[i],
					  (unsigned int)gpus[i].render_minor);
			}
		}
		free(list);
	}
}

TEST_HARNESS_MAIN
