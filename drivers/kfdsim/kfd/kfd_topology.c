// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsim: the KFD topology, /sys/class/kfd/kfd/topology.
 *
 * The tree has the layout, key names, key order and number formats that
 * upstream amdkfd (Linux 6.1) uses, because ROCm's thunk and CRIU's amdgpu
 * plugin parse it. Node 0 is the host CPU; node N is GPU kfd_devices[N - 1].
 * The devices are fixed for the module's lifetime, so the whole tree is
 * built once and every value is computed when a file is read.
 *
 * Every directory is a struct topo_obj; they sit on topo_objs in creation
 * order so that teardown can release children before their parents.
 *
 * As upstream, the files describing a GPU (its node's gpu_id, name and
 * properties, and the properties of its memory banks, caches and io_links)
 * fail with -EPERM for a reader whose device cgroup hides the GPU's render
 * node; the directories stay, so node numbers do not change.
 */
#include <linux/cpufreq.h>
#include <linux/cpumask.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "kfd_priv.h"

/* uAPI values (linux/kfd_sysfs.h) printed below. */
#define TOPO_HEAP_TYPE_SYSTEM		0
#define TOPO_HEAP_TYPE_FB_PUBLIC	1
#define TOPO_IOLINK_TYPE_PCIE		2
#define TOPO_IOLINK_ENABLED		BIT(0)
#define TOPO_IOLINK_NON_COHERENT	BIT(1)

#define TOPO_VENDOR_AMD		0x1002
/* amdkfd's PCIe link weight, and gen1 x1 .. gen4 x16 in MB/s. */
#define TOPO_PCIE_WEIGHT	20
#define TOPO_PCIE_MIN_BW	312
#define TOPO_PCIE_MAX_BW	32000
/* amdkfd numbers dGPU compute units from here, in node order. */
#define TOPO_SIMD_ID_BASE	0x80001000
/* GPU n sits alone on the fabricated PCI bus TOPO_PCI_BUS + n. */
#define TOPO_PCI_BUS		0x10
/* Bits per sibling_map group (one group per shader array). */
#define TOPO_SIBLING_BITS	32

/* Fixed platform identity in the ACPI OEM format upstream copies. */
static const char topo_oem_id[] = "KFDSIM";
static const char topo_oem_table_id[] = "SIMGPU00";
#define TOPO_OEM_REVISION	1

/**
 * struct topo_desc - what a topology directory describes
 * @gpu: the GPU of the node; NULL for the CPU node
 * @cache: the cache kind, for caches/C
 * @node: the node number
 * @arg: caches/C: first CU of the instance; io_links/L: the peer node
 */
struct topo_desc {
	const struct kfd_dev *gpu;
	const struct kfdsim_cache *cache;
	u32 node;
	u32 arg;
};

struct topo_obj {
	struct kobject kobj;
	struct list_head link;
	struct topo_desc d;
};

struct topo_prop {
	const char *key;
	u64 val;
	bool gpu_only;
};

static LIST_HEAD(topo_objs);
static u32 topo_generation;

/* The CPU node prints zeros where a GPU node prints ASIC properties. */
static const struct kfdsim_asic topo_no_asic = { .name = "" };

static const struct topo_desc *to_desc(struct kobject *kobj)
{
	return &container_of(kobj, struct topo_obj, kobj)->d;
}

/* 0, or -EPERM if the reader's device cgroup hides @d's GPU. */
static int topo_check_access(const struct topo_desc *d)
{
	return d->gpu ? kfd_devcgroup_check_permission(d->gpu) : 0;
}

static const struct kfdsim_asic *topo_asic(const struct kfd_dev *gpu)
{
	return gpu ? amdgpu_amdkfd_get_asic_info(gpu->adev) : &topo_no_asic;
}

/* Prints "key value" lines; @gpu false skips the GPU-only keys. */
static int topo_emit(char *buf, int len, const struct topo_prop *p,
		     unsigned int n, bool gpu)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (gpu || !p[i].gpu_only)
			len += sysfs_emit_at(buf, len, "%s %llu\n",
					     p[i].key, p[i].val);
	return len;
}

/* The bytes of an OEM string as a little-endian number, like amdkfd. */
static u64 topo_pack(const char *s)
{
	size_t n = strlen(s);
	u64 v = 0;

	while (n--)
		v = (v << 8) | (u8)s[n];
	return v;
}

static u32 topo_cpu_id_base(void)
{
	unsigned int cpu = cpumask_first(cpu_online_mask);

#ifdef CONFIG_X86_64
	return cpu_data(cpu).apicid;
#else
	return cpu;
#endif
}

static u32 topo_num_cus(const struct kfdsim_asic *a)
{
	return a->array_count * a->cu_per_simd_array;
}

static u32 topo_simd_id_base(const struct kfd_dev *gpu)
{
	u32 base = TOPO_SIMD_ID_BASE;
	unsigned int i;

	for (i = 0; i < gpu->index; i++)
		base += topo_num_cus(topo_asic(kfd_devices[i]));
	return base;
}

static u32 topo_cus_per_cache(const struct kfdsim_cache *c)
{
	return max(c->cus_per_cache, 1U);
}

/* Caches shared by at most one shader array have an instance per block. */
static bool topo_cache_per_array(const struct kfdsim_asic *a,
				 const struct kfdsim_cache *c)
{
	return topo_cus_per_cache(c) <= a->cu_per_simd_array;
}

static u32 topo_cache_instances(const struct kfdsim_asic *a,
				const struct kfdsim_cache *c)
{
	if (!topo_cache_per_array(a, c))
		return 1;
	return a->array_count *
	       DIV_ROUND_UP(a->cu_per_simd_array, topo_cus_per_cache(c));
}

static u32 topo_num_caches(const struct kfdsim_asic *a)
{
	u32 i, n = 0;

	for (i = 0; i < a->num_caches; i++)
		n += topo_cache_instances(a, &a->caches[i]);
	return n;
}

/* ---- topology/ ---- */

static ssize_t generation_id_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", topo_generation);
}

static ssize_t system_properties_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	const struct topo_prop props[] = {
		{ "platform_oem", topo_pack(topo_oem_table_id) },
		{ "platform_id", topo_pack(topo_oem_id) },
		{ "platform_rev", TOPO_OEM_REVISION },
	};

	return topo_emit(buf, 0, props, ARRAY_SIZE(props), false);
}

static struct kobj_attribute topo_genid_attr = __ATTR_RO(generation_id);
static struct kobj_attribute topo_sysprops_attr = __ATTR_RO(system_properties);

static struct attribute *topo_root_attrs[] = {
	&topo_genid_attr.attr,
	&topo_sysprops_attr.attr,
	NULL
};
ATTRIBUTE_GROUPS(topo_root);

/* ---- nodes/N/ ---- */

static ssize_t gpu_id_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	const struct kfd_dev *gpu = to_desc(kobj)->gpu;
	int ret = topo_check_access(to_desc(kobj));

	if (ret)
		return ret;
	return sysfs_emit(buf, "%u\n", gpu ? gpu->gpu_id : 0);
}

static ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	int ret = topo_check_access(to_desc(kobj));

	if (ret)
		return ret;
	return sysfs_emit(buf, "%s\n", topo_asic(to_desc(kobj)->gpu)->name);
}

static ssize_t node_properties_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	const struct kfd_dev *gpu = to_desc(kobj)->gpu;
	const struct kfdsim_asic *a = topo_asic(gpu);
	const struct topo_prop props[] = {
		{ "cpu_cores_count", gpu ? 0 : num_online_cpus() },
		{ "simd_count", a->simd_count },
		{ "mem_banks_count", 1 },
		{ "caches_count", topo_num_caches(a) },
		{ "io_links_count", gpu ? 1 : kfd_num_devices },
		{ "p2p_links_count", 0 },
		{ "cpu_core_id_base", gpu ? 0 : topo_cpu_id_base() },
		{ "simd_id_base", gpu ? topo_simd_id_base(gpu) : 0 },
		{ "max_waves_per_simd", a->max_waves_per_simd },
		{ "lds_size_in_kb", a->lds_size_in_kb },
		{ "gds_size_in_kb", a->gds_size_in_kb },
		{ "num_gws", a->num_gws },
		{ "wave_front_size", a->wave_front_size },
		{ "array_count", a->array_count },
		{ "simd_arrays_per_engine", a->simd_arrays_per_engine },
		{ "cu_per_simd_array", a->cu_per_simd_array },
		{ "simd_per_cu", a->simd_per_cu },
		{ "max_slots_scratch_cu", a->max_slots_scratch_cu },
		{ "gfx_target_version", a->gfx_target_version },
		{ "vendor_id", gpu ? TOPO_VENDOR_AMD : 0 },
		{ "device_id", a->device_id },
		/* PCI bus << 8 | devfn, devfn 0 */
		{ "location_id", gpu ? (TOPO_PCI_BUS + gpu->index) << 8 : 0 },
		{ "domain", 0 },
		/* an int that amdkfd prints unsigned */
		{ "drm_render_minor",
		  gpu ? (u32)amdgpu_amdkfd_get_render_minor(gpu->adev) : 0 },
		{ "hive_id", 0 },
		{ "num_sdma_engines", a->num_sdma_engines },
		{ "num_sdma_xgmi_engines", a->num_sdma_xgmi_engines },
		{ "num_sdma_queues_per_engine", a->num_sdma_queues_per_engine },
		{ "num_cp_queues", a->num_cp_queues },
		{ "max_engine_clk_fcompute", a->max_engine_clk_fcompute, true },
		{ "local_mem_size", gpu ? amdgpu_amdkfd_get_vram_size(gpu->adev) : 0,
		  true },
		{ "fw_version", a->fw_version, true },
		{ "capability", a->capability, true },
		{ "sdma_fw_version", a->sdma_fw_version, true },
		{ "unique_id", gpu ? amdgpu_amdkfd_get_unique_id(gpu->adev) : 0,
		  true },
		{ "max_engine_clk_ccompute", gpu ? a->max_engine_clk_ccompute :
					     cpufreq_quick_get_max(0) / 1000 },
	};
	int ret = topo_check_access(to_desc(kobj));

	if (ret)
		return ret;
	return topo_emit(buf, 0, props, ARRAY_SIZE(props), !!gpu);
}

static struct kobj_attribute topo_gpu_id_attr = __ATTR_RO(gpu_id);
static struct kobj_attribute topo_name_attr = __ATTR_RO(name);
static struct kobj_attribute topo_node_props_attr =
	__ATTR(properties, 0444, node_properties_show, NULL);

static struct attribute *topo_node_attrs[] = {
	&topo_gpu_id_attr.attr,
	&topo_name_attr.attr,
	&topo_node_props_attr.attr,
	NULL
};
ATTRIBUTE_GROUPS(topo_node);

/* ---- nodes/N/mem_banks/0/ ---- */

static ssize_t mem_properties_show(struct kobject *kobj,
				   struct kobj_attribute *attr, char *buf)
{
	const struct kfd_dev *gpu = to_desc(kobj)->gpu;
	const struct kfdsim_asic *a = topo_asic(gpu);
	const struct topo_prop props[] = {
		{ "heap_type", gpu ? TOPO_HEAP_TYPE_FB_PUBLIC :
				     TOPO_HEAP_TYPE_SYSTEM },
		{ "size_in_bytes", gpu ? amdgpu_amdkfd_get_vram_size(gpu->adev) :
				(u64)totalram_pages() << PAGE_SHIFT },
		{ "flags", 0 },
		{ "width", a->vram_width },
		{ "mem_clk_max", a->mem_clk_max },
	};
	int ret = topo_check_access(to_desc(kobj));

	if (ret)
		return ret;
	return topo_emit(buf, 0, props, ARRAY_SIZE(props), false);
}

static struct kobj_attribute topo_mem_props_attr =
	__ATTR(properties, 0444, mem_properties_show, NULL);

static struct attribute *topo_mem_attrs[] = {
	&topo_mem_props_attr.attr,
	NULL
};
ATTRIBUTE_GROUPS(topo_mem);

/* ---- nodes/N/caches/C/ ---- */

static ssize_t cache_properties_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	const struct topo_desc *d = to_desc(kobj);
	const struct kfdsim_asic *a = topo_asic(d->gpu);
	const struct kfdsim_cache *c = d->cache;
	const struct topo_prop props[] = {
		{ "processor_id_low", topo_simd_id_base(d->gpu) + d->arg },
		{ "level", c->level },
		{ "size", c->size_kb },
		{ "cache_line_size", c->line_size },
		{ "cache_lines_per_tag", c->lines_per_tag },
		{ "association", c->associativity },
		{ "latency", c->latency },
		{ "type", c->type },
	};
	u32 groups, bits, g, i;
	int len, ret;

	ret = topo_check_access(d);
	if (ret)
		return ret;

	/*
	 * The CUs sharing this instance, relative to its first CU: one
	 * 32-bit group for a per-array cache, one per array otherwise.
	 */
	if (topo_cache_per_array(a, c)) {
		groups = 1;
		bits = min(topo_cus_per_cache(c), a->cu_per_simd_array -
			   d->arg % a->cu_per_simd_array);
	} else {
		groups = a->array_count;
		bits = a->cu_per_simd_array;
	}

	len = topo_emit(buf, 0, props, ARRAY_SIZE(props), true);
	len += sysfs_emit_at(buf, len, "sibling_map ");
	for (g = 0; g < groups; g++)
		for (i = 0; i < TOPO_SIBLING_BITS; i++)
			len += sysfs_emit_at(buf, len, "%d,", i < bits);
	/* The last separator ends the line. */
	buf[len - 1] = '\n';
	return len;
}

static struct kobj_attribute topo_cache_props_attr =
	__ATTR(properties, 0444, cache_properties_show, NULL);

static struct attribute *topo_cache_attrs[] = {
	&topo_cache_props_attr.attr,
	NULL
};
ATTRIBUTE_GROUPS(topo_cache);

/* ---- nodes/N/io_links/L/ ---- */

static ssize_t link_properties_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	const struct topo_desc *d = to_desc(kobj);
	/* amdkfd marks the CPU -> GPU direction of PCIe non-coherent. */
	u32 flags = d->gpu ? TOPO_IOLINK_ENABLED :
		    TOPO_IOLINK_ENABLED | TOPO_IOLINK_NON_COHERENT;
	const struct topo_prop props[] = {
		{ "type", TOPO_IOLINK_TYPE_PCIE },
		{ "version_major", 0 },
		{ "version_minor", 0 },
		{ "node_from", d->node },
		{ "node_to", d->arg },
		{ "weight", TOPO_PCIE_WEIGHT },
		{ "min_latency", 0 },
		{ "max_latency", 0 },
		{ "min_bandwidth", TOPO_PCIE_MIN_BW },
		{ "max_bandwidth", TOPO_PCIE_MAX_BW },
		{ "recommended_transfer_size", 0 },
		{ "flags", flags },
	};
	int ret = topo_check_access(d);

	if (ret)
		return ret;
	return topo_emit(buf, 0, props, ARRAY_SIZE(props), false);
}

static struct kobj_attribute topo_link_props_attr =
	__ATTR(properties, 0444, link_properties_show, NULL);

static struct attribute *topo_link_attrs[] = {
	&topo_link_props_attr.attr,
	NULL
};
ATTRIBUTE_GROUPS(topo_link);

/* ---- building and tearing down ---- */

static void topo_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct topo_obj, kobj));
}

static const struct kobj_type topo_root_type = {
	.release = topo_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = topo_root_groups,
};

static const struct kobj_type topo_dir_type = {
	.release = topo_release,
	.sysfs_ops = &kobj_sysfs_ops,
};

static const struct kobj_type topo_node_type = {
	.release = topo_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = topo_node_groups,
};

static const struct kobj_type topo_mem_type = {
	.release = topo_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = topo_mem_groups,
};

static const struct kobj_type topo_cache_type = {
	.release = topo_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = topo_cache_groups,
};

static const struct kobj_type topo_link_type = {
	.release = topo_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = topo_link_groups,
};

/*
 * Adds a directory (with the files of @type) describing @d under @parent
 * and, if @out is set, returns its kobject there.
 */
static __printf(5, 6)
int topo_add(struct kobject **out, const struct kobj_type *type,
	     struct kobject *parent, const struct topo_desc *d,
	     const char *fmt, ...)
{
	struct topo_obj *o;
	char name[16];
	va_list args;
	int ret;

	va_start(args, fmt);
	vsnprintf(name, sizeof(name), fmt, args);
	va_end(args);

	o = kzalloc(sizeof(*o), GFP_KERNEL);
	if (!o)
		return -ENOMEM;
	o->d = *d;

	ret = kobject_init_and_add(&o->kobj, type, parent, "%s", name);
	if (ret) {
		kobject_put(&o->kobj);
		return ret;
	}
	list_add_tail(&o->link, &topo_objs);
	if (out)
		*out = &o->kobj;
	return 0;
}

static int topo_add_caches(struct kobject *dir, struct topo_desc d)
{
	const struct kfdsim_asic *a = topo_asic(d.gpu);
	u32 i, arr, cu, idx = 0;
	int ret;

	for (i = 0; i < a->num_caches; i++) {
		const struct kfdsim_cache *c = &a->caches[i];

		d.cache = c;
		if (!topo_cache_per_array(a, c)) {
			d.arg = 0;
			ret = topo_add(NULL, &topo_cache_type, dir, &d, "%u",
				       idx++);
			if (ret)
				return ret;
			continue;
		}
		for (arr = 0; arr < a->array_count; arr++) {
			for (cu = 0; cu < a->cu_per_simd_array;
			     cu += topo_cus_per_cache(c)) {
				d.arg = arr * a->cu_per_simd_array + cu;
				ret = topo_add(NULL, &topo_cache_type, dir, &d,
					       "%u", idx++);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

static int topo_add_links(struct kobject *dir, struct topo_desc d)
{
	unsigned int i;
	int ret;

	if (d.gpu) {
		d.arg = 0;
		return topo_add(NULL, &topo_link_type, dir, &d, "0");
	}
	for (i = 0; i < kfd_num_devices; i++) {
		d.arg = kfd_devices[i]->index + 1;
		ret = topo_add(NULL, &topo_link_type, dir, &d, "%u", i);
		if (ret)
			return ret;
	}
	return 0;
}

/* Node @node; @gpu is NULL for the CPU node. */
static int topo_add_node(struct kobject *nodes, const struct kfd_dev *gpu,
			 u32 node)
{
	const struct topo_desc d = { .gpu = gpu, .node = node };
	struct kobject *kn, *dir;
	int ret;

	ret = topo_add(&kn, &topo_node_type, nodes, &d, "%u", node);
	if (ret)
		return ret;

	ret = topo_add(&dir, &topo_dir_type, kn, &d, "mem_banks");
	if (!ret)
		ret = topo_add(NULL, &topo_mem_type, dir, &d, "0");
	if (!ret)
		ret = topo_add(&dir, &topo_dir_type, kn, &d, "caches");
	if (!ret)
		ret = topo_add_caches(dir, d);
	if (!ret)
		ret = topo_add(&dir, &topo_dir_type, kn, &d, "io_links");
	if (!ret)
		ret = topo_add_links(dir, d);
	/* No peer-to-peer or indirect links, no IOMMU counters: empty. */
	if (!ret)
		ret = topo_add(NULL, &topo_dir_type, kn, &d, "p2p_links");
	if (!ret)
		ret = topo_add(NULL, &topo_dir_type, kn, &d, "perf");
	return ret;
}

/**
 * kfd_topology_fini() - remove the topology tree
 *
 * Children go before their parents. Removing a file waits for its readers,
 * so the GPUs may be freed once this returns.
 */
void kfd_topology_fini(void)
{
	struct topo_obj *o;

	while (!list_empty(&topo_objs)) {
		o = list_last_entry(&topo_objs, struct topo_obj, link);
		list_del(&o->link);
		kobject_del(&o->kobj);
		kobject_put(&o->kobj);
	}
}

/**
 * kfd_topology_init() - build the topology tree
 * @kfd_dev: the device of /dev/kfd; the tree goes in its "topology" directory
 *
 * Call after the GPUs are set up and before /dev/kfd can be opened.
 *
 * Return: 0 or a negative errno, with nothing left behind.
 */
int kfd_topology_init(struct device *kfd_dev)
{
	const struct topo_desc none = { };
	struct kobject *top, *nodes;
	unsigned int i;
	int ret;

	ret = topo_add(&top, &topo_root_type, &kfd_dev->kobj, &none,
		       "topology");
	if (ret)
		return ret;
	ret = topo_add(&nodes, &topo_dir_type, top, &none, "nodes");
	if (ret)
		goto err_unwind;

	ret = topo_add_node(nodes, NULL, 0);
	if (ret)
		goto err_unwind;
	for (i = 0; i < kfd_num_devices; i++) {
		const struct kfd_dev *gpu = kfd_devices[i];

		ret = topo_add_node(nodes, gpu, gpu->index + 1);
		if (ret)
			goto err_unwind;
	}

	topo_generation++;
	return 0;

err_unwind:
	kfd_topology_fini();
	return ret;
}
