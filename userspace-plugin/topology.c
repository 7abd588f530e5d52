// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the KFD topology and matching checkpointed GPUs to local ones.
 *
 * A GPU can stand in for a checkpointed one when everything that shapes
 * the code and the queues running on it is the same (the "exact" keys),
 * and it has at least as much of what only has to be sufficient (VRAM,
 * firmware versions, caches, GWS). Location, ids and clocks do not matter.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"
#include "util.h"

/* ---- reading ---- */

static const char *kp_topology_root(void)
{
	const char *root = getenv(KP_TOPOLOGY_ENV);

	return root && *root ? root : KP_TOPOLOGY_DEFAULT;
}

/* snprintf() into a path buffer; -ENAMETOOLONG if it does not fit. */
static int kp_pathf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int kp_pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The first line of a small file, without the newline. */
static int kp_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int kp_read_u32(const char *path, uint32_t *out)
{
	char buf[64], *end;
	unsigned long v;
	int ret;

	ret = kp_read_line(path, buf, sizeof(buf));
	if (ret)
		return ret;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || end == buf || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/*
 * Parse a "key value" properties file. @fn is called for every line;
 * returns 0 or -errno.
 */
static int kp_read_props(const char *path,
			 int (*fn)(void *ctx, const char *key, uint64_t v),
			 void *ctx)
{
	char line[256], key[KP_PROP_KEY_LEN];
	unsigned long long v;
	FILE *f;
	int ret = 0;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%47s %llu", key, &v) != 2)
			continue;
		ret = fn(ctx, key, v);
	}
	fclose(f);
	return ret;
}

static int kp_prop_cb(void *ctx, const char *key, uint64_t v)
{
	return kp_gpu_set_prop(ctx, key, v);
}

struct kp_sum_ctx {
	const char *key;
	uint64_t sum;
	bool found;
};

static int kp_sum_cb(void *ctx, const char *key, uint64_t v)
{
	struct kp_sum_ctx *c = ctx;

	if (!strcmp(key, c->key)) {
		c->sum += v;
		c->found = true;
	}
	return 0;
}

/* Numeric entries of a directory, sorted; count or -errno. */
static int kp_list_numeric(const char *path, uint32_t *out, int max)
{
	struct dirent *de;
	unsigned long v;
	char *end;
	int n = 0, i, j;
	uint32_t t;
	DIR *dir;

	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		v = strtoul(de->d_name, &end, 10);
		if (*end || v > UINT32_MAX)
			continue;
		if (n == max) {
			closedir(dir);
			return -E2BIG;
		}
		out[n++] = (uint32_t)v;
	}
	closedir(dir);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && out[j - 1] > out[j]; j--) {
			t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/* Sum of @key over the properties files of every subdirectory of @dir. */
static uint64_t kp_sum_subdirs(const char *dir, const char *key)
{
	struct kp_sum_ctx c = { .key = key };
	uint32_t idx[256];
	char path[PATH_MAX];
	int n, i;

	n = kp_list_numeric(dir, idx, KP_ARRAY_SIZE(idx));
	for (i = 0; i < n; i++) {
		if (!kp_pathf(path, sizeof(path), "%s/%u/properties", dir,
			      idx[i]))
			kp_read_props(path, kp_sum_cb, &c);
	}
	return c.sum;
}

struct kp_link_ctx {
	const uint32_t *cpu_nodes;
	int ncpu;
	uint32_t best;
};

static int kp_link_cb(void *ctx, const char *key, uint64_t v)
{
	struct kp_link_ctx *c = ctx;
	int i;

	if (strcmp(key, "node_to"))
		return 0;
	for (i = 0; i < c->ncpu; i++)
		if (c->cpu_nodes[i] == v && v < c->best)
			c->best = (uint32_t)v;
	return 0;
}

static uint32_t kp_cpu_affinity(const char *node_dir, const uint32_t *cpus,
				int ncpu)
{
	struct kp_link_ctx c = { .cpu_nodes = cpus, .ncpu = ncpu,
				 .best = KP_NO_NODE };
	char dir[PATH_MAX], path[PATH_MAX];
	uint32_t idx[256];
	int n, i;

	if (kp_pathf(dir, sizeof(dir), "%s/io_links", node_dir))
		return KP_NO_NODE;
	n = kp_list_numeric(dir, idx, KP_ARRAY_SIZE(idx));
	for (i = 0; i < n; i++)
		if (!kp_pathf(path, sizeof(path), "%s/%u/properties", dir,
			      idx[i]))
			kp_read_props(path, kp_link_cb, &c);
	return c.best;
}

static int kp_read_gpu(const char *node_dir, uint32_t node, uint32_t gpu_id,
		       const uint32_t *cpus, int ncpu, struct kp_gpu *g)
{
	char path[PATH_MAX];
	uint64_t v;
	int ret;

	memset(g, 0, sizeof(*g));
	g->gpu_id = gpu_id;
	g->node = node;
	ret = kp_pathf(path, sizeof(path), "%s/properties", node_dir);
	if (!ret)
		ret = kp_read_props(path, kp_prop_cb, g);
	if (ret)
		return ret;
	if (!kp_pathf(path, sizeof(path), "%s/name", node_dir))
		kp_read_line(path, g->name, sizeof(g->name));
	g->render_minor = kp_gpu_prop(g, "drm_render_minor", &v) ?
			  (uint32_t)v : 0;
	if (!kp_pathf(path, sizeof(path), "%s/mem_banks", node_dir))
		g->vram_size = kp_sum_subdirs(path, "size_in_bytes");
	g->cpu_node = kp_cpu_affinity(node_dir, cpus, ncpu);
	return 0;
}

int kp_topology_read(struct kp_topology *t)
{
	const char *root = kp_topology_root();
	uint32_t nodes[KP_MAX_GPUS * 2], ids[KP_MAX_GPUS * 2];
	uint32_t cpus[KP_MAX_GPUS * 2];
	bool hidden[KP_MAX_GPUS * 2];
	char dir[PATH_MAX], node_dir[PATH_MAX], path[PATH_MAX];
	int n, ncpu = 0, i, ret;

	memset(t, 0, sizeof(*t));
	ret = kp_pathf(dir, sizeof(dir), "%s/nodes", root);
	if (ret)
		return ret;
	n = kp_list_numeric(dir, nodes, KP_ARRAY_SIZE(nodes));
	if (n < 0)
		return n;

	/*
	 * CPU nodes first: the GPUs' NUMA affinity refers to them. A GPU
	 * the device cgroup hides from us (a container's) answers -EPERM,
	 * as amdkfd does; like AMD's plugin, skip it: it is not ours to
	 * checkpoint or to restore onto.
	 */
	for (i = 0; i < n; i++) {
		hidden[i] = false;
		ret = kp_pathf(path, sizeof(path), "%s/%u/gpu_id", dir,
			       nodes[i]);
		if (!ret)
			ret = kp_read_u32(path, &ids[i]);
		if (ret == -EPERM) {
			kp_debug("topology node %u hidden (device cgroup)\n",
				 nodes[i]);
			hidden[i] = true;
			continue;
		}
		if (ret)
			return ret;
		if (!ids[i])
			cpus[ncpu++] = nodes[i];
	}
	for (i = 0; i < n; i++) {
		if (hidden[i] || !ids[i])
			continue;
		if (t->ngpus == KP_MAX_GPUS)
			return -E2BIG;
		ret = kp_pathf(node_dir, sizeof(node_dir), "%s/%u", dir,
			       nodes[i]);
		if (ret)
			return ret;
		ret = kp_read_gpu(node_dir, nodes[i], ids[i], cpus, ncpu,
				  &t->gpus[t->ngpus]);
		if (ret == -EPERM) {
			kp_debug("topology node %u hidden (device cgroup)\n",
				 nodes[i]);
			continue;
		}
		if (ret)
			return ret;
		t->ngpus++;
	}
	return 0;
}

const struct kp_gpu *kp_topology_by_id(const struct kp_topology *t,
				       uint32_t gpu_id)
{
	unsigned int i;

	for (i = 0; i < t->ngpus; i++)
		if (t->gpus[i].gpu_id == gpu_id)
			return &t->gpus[i];
	return NULL;
}

const struct kp_gpu *kp_topology_by_minor(const struct kp_topology *t,
					  uint32_t minor)
{
	unsigned int i;

	for (i = 0; i < t->ngpus; i++)
		if (t->gpus[i].render_minor == minor)
			return &t->gpus[i];
	return NULL;
}

bool kp_gpu_prop(const struct kp_gpu *g, const char *key, uint64_t *value)
{
	unsigned int i;

	for (i = 0; i < g->nprops; i++) {
		if (!strcmp(g->props[i].key, key)) {
			*value = g->props[i].value;
			return true;
		}
	}
	return false;
}

int kp_gpu_set_prop(struct kp_gpu *g, const char *key, uint64_t value)
{
	unsigned int i;

	if (strlen(key) >= KP_PROP_KEY_LEN)
		return -EINVAL;
	for (i = 0; i < g->nprops; i++) {
		if (!strcmp(g->props[i].key, key)) {
			g->props[i].value = value;
			return 0;
		}
	}
	if (g->nprops == KP_MAX_PROPS)
		return -E2BIG;
	strcpy(g->props[g->nprops].key, key);
	g->props[g->nprops++].value = value;
	return 0;
}

/* ---- matching ---- */

/* Keys that must be equal: they shape the code and the queues. */
static const char *const kp_exact_keys[] = {
	"simd_count", "array_count", "simd_arrays_per_engine",
	"cu_per_simd_array", "simd_per_cu", "max_waves_per_simd",
	"wave_front_size", "lds_size_in_kb", "gds_size_in_kb",
	"max_slots_scratch_cu", "gfx_target_version", "vendor_id",
	"device_id", "num_sdma_engines", "num_sdma_xgmi_engines",
	"num_sdma_queues_per_engine", "num_cp_queues", "num_xcc",
};

void kp_match_opts_default(struct kp_match_opts *o)
{
	o->fw_version = true;
	o->sdma_fw_version = true;
	o->caches_count = true;
	o->num_gws = true;
	o->vram_size = true;
	o->numa = true;
	o->capability = true;
}

void kp_match_opts_from_env(struct kp_match_opts *o)
{
	o->fw_version = kp_env_bool("KFD_FW_VER_CHECK", true);
	o->sdma_fw_version = kp_env_bool("KFD_SDMA_FW_VER_CHECK", true);
	o->caches_count = kp_env_bool("KFD_CACHES_COUNT_CHECK", true);
	o->num_gws = kp_env_bool("KFD_NUM_GWS_CHECK", true);
	o->vram_size = kp_env_bool("KFD_VRAM_SIZE_CHECK", true);
	o->numa = kp_env_bool("KFD_NUMA_CHECK", true);
	o->capability = kp_env_bool("KFD_CAPABILITY_CHECK", true);
}

/* A missing key reads as 0 (an older kernel that does not print it). */
static uint64_t kp_prop_or_zero(const struct kp_gpu *g, const char *key)
{
	uint64_t v = 0;

	kp_gpu_prop(g, key, &v);
	return v;
}

static int kp_differs(const char *key, uint64_t local, uint64_t ckpt,
		      char *why, size_t len)
{
	snprintf(why, len, "%s %" PRIu64 ", checkpoint %" PRIu64, key, local,
		 ckpt);
	return -1;
}

/* @key of @local must be at least that of @ckpt. */
static int kp_check_at_least(const struct kp_gpu *ckpt,
			     const struct kp_gpu *local, const char *key,
			     char *why, size_t len)
{
	uint64_t l = kp_prop_or_zero(local, key);
	uint64_t c = kp_prop_or_zero(ckpt, key);

	return l < c ? kp_differs(key, l, c, why, len) : 0;
}

int kp_gpu_compatible(const struct kp_gpu *ckpt, const struct kp_gpu *local,
		      const struct kp_match_opts *o, char *why, size_t len)
{
	uint64_t l, c;
	size_t i;

	for (i = 0; i < KP_ARRAY_SIZE(kp_exact_keys); i++) {
		l = kp_prop_or_zero(local, kp_exact_keys[i]);
		c = kp_prop_or_zero(ckpt, kp_exact_keys[i]);
		if (l != c)
			return kp_differs(kp_exact_keys[i], l, c, why, len);
	}
	if (o->capability) {
		l = kp_prop_or_zero(local, "capability");
		c = kp_prop_or_zero(ckpt, "capability");
		if (l != c)
			return kp_differs("capability", l, c, why, len);
	}
	if (o->fw_version &&
	    kp_check_at_least(ckpt, local, "fw_version", why, len))
		return -1;
	if (o->sdma_fw_version &&
	    kp_check_at_least(ckpt, local, "sdma_fw_version", why, len))
		return -1;
	if (o->caches_count &&
	    kp_check_at_least(ckpt, local, "caches_count", why, len))
		return -1;
	if (o->num_gws && kp_check_at_least(ckpt, local, "num_gws", why, len))
		return -1;
	if (o->vram_size && local->vram_size < ckpt->vram_size)
		return kp_differs("VRAM bytes", local->vram_size,
				  ckpt->vram_size, why, len);
	if (o->numa && local->cpu_node != ckpt->cpu_node)
		return kp_differs("NUMA node", local->cpu_node,
				  ckpt->cpu_node, why, len);
	return 0;
}

struct kp_matcher {
	unsigned int n, nlocal;
	bool ok[KP_MAX_GPUS][KP_MAX_GPUS];	/* ok[ckpt][local] */
	int order[KP_MAX_GPUS][KP_MAX_GPUS];	/* candidates, preferred first */
	int owner[KP_MAX_GPUS];			/* local -> ckpt, or -1 */
	bool seen[KP_MAX_GPUS];
};

/*
 * One augmenting-path step of bipartite matching (Kuhn): take the first
 * free candidate; only if there is none, move an earlier GPU elsewhere.
 * Trying the free ones first keeps the natural order when it works.
 */
static bool kp_augment(struct kp_matcher *m, unsigned int c)
{
	unsigned int k;
	int l;

	for (k = 0; k < m->nlocal; k++) {
		l = m->order[c][k];
		if (l >= 0 && !m->seen[l] && m->owner[l] < 0) {
			m->seen[l] = true;
			m->owner[l] = c;
			return true;
		}
	}
	for (k = 0; k < m->nlocal; k++) {
		l = m->order[c][k];
		if (l < 0 || m->seen[l])
			continue;
		m->seen[l] = true;
		if (kp_augment(m, m->owner[l])) {
			m->owner[l] = c;
			return true;
		}
	}
	return false;
}

int kp_match_gpus(const struct kp_gpu *ckpt, unsigned int n,
		  const struct kp_topology *local,
		  const struct kp_match_opts *o, int *map)
{
	char why[160], all[512];
	struct kp_matcher *m;
	unsigned int c, l, k;
	size_t used;
	int ret = 0;

	if (!n)
		return 0;
	if (n > local->ngpus) {
		kp_err("too few GPUs: the checkpoint uses %u GPUs, this host has %u",
		       n, local->ngpus);
		return -ENODEV;
	}
	if (n > KP_MAX_GPUS)
		return -E2BIG;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->n = n;
	m->nlocal = local->ngpus;

	for (c = 0; c < n; c++) {
		k = 0;
		used = 0;
		all[0] = '\0';
		for (l = 0; l < local->ngpus; l++) {
			m->ok[c][l] = !kp_gpu_compatible(&ckpt[c],
							  &local->gpus[l], o,
							  why, sizeof(why));
			if (!m->ok[c][l] && used < sizeof(all))
				used += snprintf(all + used, sizeof(all) - used,
						 "%sGPU %u: %s", used ? "; " : "",
						 local->gpus[l].gpu_id, why);
		}
		/* The same gpu_id first, then node order. */
		for (l = 0; l < local->ngpus; l++)
			if (m->ok[c][l] && local->gpus[l].gpu_id == ckpt[c].gpu_id)
				m->order[c][k++] = l;
		for (l = 0; l < local->ngpus; l++)
			if (m->ok[c][l] && local->gpus[l].gpu_id != ckpt[c].gpu_id)
				m->order[c][k++] = l;
		if (!k) {
			kp_err("no matching GPU for checkpointed GPU %u (%s, node %u): %s",
			       ckpt[c].gpu_id, ckpt[c].name[0] ? ckpt[c].name : "?",
			       ckpt[c].node, all);
			ret = -ENODEV;
			goto out;
		}
		while (k < local->ngpus)
			m->order[c][k++] = -1;
	}

	for (l = 0; l < local->ngpus; l++)
		m->owner[l] = -1;
	for (c = 0; c < n; c++) {
		memset(m->seen, 0, sizeof(m->seen));
		if (!kp_augment(m, c)) {
			kp_err("no matching GPU for checkpointed GPU %u: every compatible local GPU is taken by another of the %u checkpointed GPUs",
			       ckpt[c].gpu_id, n);
			ret = -ENODEV;
			goto out;
		}
	}
	for (l = 0; l < local->ngpus; l++)
		if (m->owner[l] >= 0)
			map[m->owner[l]] = l;
out:
	free(m);
	return ret;
}
