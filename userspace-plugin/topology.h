/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The KFD topology (/sys/class/kfd/kfd/topology) and matching the GPUs of
 * a checkpoint to the GPUs of the restoring host.
 */
#ifndef KFD_PLUGIN_TOPOLOGY_H
#define KFD_PLUGIN_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KP_TOPOLOGY_DEFAULT	"/sys/class/kfd/kfd/topology"
/* Tests point the plugin at a fake tree with this variable. */
#define KP_TOPOLOGY_ENV		"KFD_TOPOLOGY_ROOT"

#define KP_MAX_GPUS		64
#define KP_MAX_PROPS		96
#define KP_PROP_KEY_LEN		48
#define KP_NO_NODE		UINT32_MAX

struct kp_prop {
	char key[KP_PROP_KEY_LEN];
	uint64_t value;
};

/**
 * struct kp_gpu - one GPU node of a topology
 * @gpu_id: its gpu_id on the host it was read on
 * @node: topology node number
 * @render_minor: drm_render_minor
 * @cpu_node: the lowest CPU node its io_links lead to (its NUMA
 *	affinity), or KP_NO_NODE
 * @vram_size: bytes of all its memory banks
 * @name: the node's name file
 * @nprops: entries in @props
 * @props: every key of nodes/N/properties, in file order
 */
struct kp_gpu {
	uint32_t gpu_id;
	uint32_t node;
	uint32_t render_minor;
	uint32_t cpu_node;
	uint64_t vram_size;
	char name[64];
	unsigned int nprops;
	struct kp_prop props[KP_MAX_PROPS];
};

struct kp_topology {
	unsigned int ngpus;
	struct kp_gpu gpus[KP_MAX_GPUS];	/* in node order */
};

/*
 * Read the topology (KFD_TOPOLOGY_ROOT, else the sysfs tree). Nodes whose
 * files answer -EPERM (GPUs the caller's device cgroup hides) are left
 * out. Returns 0 (possibly with no GPUs), -ENOENT if there is no
 * topology, or -errno.
 */
int kp_topology_read(struct kp_topology *t);
const struct kp_gpu *kp_topology_by_id(const struct kp_topology *t,
				       uint32_t gpu_id);
const struct kp_gpu *kp_topology_by_minor(const struct kp_topology *t,
					  uint32_t minor);
/* The value of property @key, or false if the node has no such key. */
bool kp_gpu_prop(const struct kp_gpu *g, const char *key, uint64_t *value);
/* Add or replace a property (used when building from an image). */
int kp_gpu_set_prop(struct kp_gpu *g, const char *key, uint64_t value);

/* Which of the relaxable checks are on (all by default). */
struct kp_match_opts {
	bool fw_version;	/* KFD_FW_VER_CHECK */
	bool sdma_fw_version;	/* KFD_SDMA_FW_VER_CHECK */
	bool caches_count;	/* KFD_CACHES_COUNT_CHECK */
	bool num_gws;		/* KFD_NUM_GWS_CHECK */
	bool vram_size;		/* KFD_VRAM_SIZE_CHECK */
	bool numa;		/* KFD_NUMA_CHECK */
	bool capability;	/* KFD_CAPABILITY_CHECK */
};

void kp_match_opts_default(struct kp_match_opts *o);
void kp_match_opts_from_env(struct kp_match_opts *o);

/*
 * Can @local run what ran on @ckpt? 0 if so; otherwise -1 and the first
 * difference in @why ("simd_count 120, checkpoint 240").
 */
int kp_gpu_compatible(const struct kp_gpu *ckpt, const struct kp_gpu *local,
		      const struct kp_match_opts *o, char *why, size_t len);

/*
 * Give every one of the @n checkpointed GPUs a distinct compatible local
 * GPU: map[i] is the index in @local->gpus for @ckpt[i]. A local GPU with
 * the same gpu_id is preferred, so a restore on the same host keeps the
 * same devices. Returns 0, or -ENODEV with one error line logged saying
 * why (too few GPUs, no match for a GPU, no distinct assignment).
 */
int kp_match_gpus(const struct kp_gpu *ckpt, unsigned int n,
		  const struct kp_topology *local,
		  const struct kp_match_opts *o, int *map);

#endif /* KFD_PLUGIN_TOPOLOGY_H */
