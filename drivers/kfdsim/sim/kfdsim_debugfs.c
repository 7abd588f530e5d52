// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: /sys/kernel/debug/kfdsim/counters lists the objects alive in the
 * driver and each GPU's VRAM use, one "name value" pair a line, so tests can
 * check that teardown really returned everything. "evict", "restore" and
 * "queues" expose preemption to tests. "cs_sdma" adds up the SDMA packets
 * amdgpu CS submissions ran and the bytes their copies moved (the e2e
 * tests prove the CRIU plugin's SDMA path with it).
 */
#include <linux/debugfs.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/seq_file.h>

#include "kfdsim.h"

struct kfdsim_counters kfdsim_counters;
atomic64_t kfdsim_cs_sdma_packets;
atomic64_t kfdsim_cs_sdma_copy_bytes;

static struct dentry *kfdsim_debugfs_root;

static int kfdsim_counters_show(struct seq_file *m, void *unused)
{
	struct kfdsim_counters *c = &kfdsim_counters;
	unsigned int i;

	seq_printf(m, "processes %d\n", atomic_read(&c->processes));
	seq_printf(m, "pdds %d\n", atomic_read(&c->pdds));
	seq_printf(m, "bos %d\n", atomic_read(&c->bos));
	seq_printf(m, "gem_objects %d\n", atomic_read(&c->gem_objects));
	seq_printf(m, "pinned_pages %d\n", atomic_read(&c->pinned_pages));
	seq_printf(m, "vm_ptes %d\n", atomic_read(&c->vm_ptes));
	seq_printf(m, "doorbell_slices %d\n",
		   atomic_read(&c->doorbell_slices));
	seq_printf(m, "mmio_pages %d\n", atomic_read(&c->mmio_pages));
	seq_printf(m, "queues %d\n", atomic_read(&c->queues));
	for (i = 0; i < kfdsim_num_gpus; i++)
		seq_printf(m, "gpu%u_vram_used %lld\n", i,
			   atomic64_read(&kfdsim_gpus[i]->vram_used));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsim_counters);

static int kfdsim_cs_sdma_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "packets %lld\n",
		   (long long)atomic64_read(&kfdsim_cs_sdma_packets));
	seq_printf(m, "copy_bytes %lld\n",
		   (long long)atomic64_read(&kfdsim_cs_sdma_copy_bytes));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsim_cs_sdma);

/*
 * Preemption hooks for tests: writing a pid to "evict" evicts that process's
 * queues, writing it to "restore" undoes one eviction. "queues" lists every
 * queue with its saved state.
 */
static ssize_t kfdsim_evict_write(struct file *file, const char __user *buf,
				  size_t len, loff_t *ppos, bool evict)
{
	struct kfd_process *p;
	int pid, ret;

	ret = kstrtoint_from_user(buf, len, 0, &pid);
	if (ret)
		return ret;
	p = kfd_process_find_pid(pid);
	if (!p)
		return -ESRCH;

	mutex_lock(&p->lock);
	if (evict)
		ret = kfd_process_evict_queues(p);
	else if (!p->evict_count)
		ret = -EINVAL;
	else
		kfd_process_restore_queues(p);
	mutex_unlock(&p->lock);
	kfd_process_put(p);
	return ret ? ret : len;
}

static ssize_t kfdsim_evict_fop_write(struct file *file,
				      const char __user *buf, size_t len,
				      loff_t *ppos)
{
	return kfdsim_evict_write(file, buf, len, ppos, true);
}

static ssize_t kfdsim_restore_fop_write(struct file *file,
					const char __user *buf, size_t len,
					loff_t *ppos)
{
	return kfdsim_evict_write(file, buf, len, ppos, false);
}

static const struct file_operations kfdsim_evict_fops = {
	.owner = THIS_MODULE,
	.write = kfdsim_evict_fop_write,
	.llseek = noop_llseek,
};

static const struct file_operations kfdsim_restore_fops = {
	.owner = THIS_MODULE,
	.write = kfdsim_restore_fop_write,
	.llseek = noop_llseek,
};

/*
 * criu_fail_nth: write N > 0 to make the writer's Nth pass through a fault
 * injection point (kfd_criu_should_fail()) fail, once; 0 disarms. Reads
 * back how many points remain before it fires (0: fired, or disarmed).
 * criu_fail_points: how many points the armed process passed since it
 * armed (the failing one included); it stays readable after disarming.
 */
static int kfdsim_criu_fail_get(void *data, u64 *val)
{
	*val = max(kfd_criu_get_fail_nth(), 0);
	return 0;
}

static int kfdsim_criu_fail_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	kfd_criu_set_fail_nth(val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(kfdsim_criu_fail_fops, kfdsim_criu_fail_get,
			 kfdsim_criu_fail_set, "%llu\n");

static int kfdsim_criu_points_get(void *data, u64 *val)
{
	*val = kfd_criu_get_fail_points();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(kfdsim_criu_points_fops, kfdsim_criu_points_get,
			 NULL, "%llu\n");

/*
 * cp_fail_nth: write N to make the Nth allocation of a CP thread fail,
 * once (the CP retries the packet later); reads back how many remain.
 */
static int kfdsim_cp_fail_get(void *data, u64 *val)
{
	*val = kfdsim_cp_get_fail_nth();
	return 0;
}

static int kfdsim_cp_fail_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	kfdsim_cp_set_fail_nth(val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(kfdsim_cp_fail_fops, kfdsim_cp_fail_get,
			 kfdsim_cp_fail_set, "%llu\n");

static int kfdsim_queues_show(struct seq_file *m, void *unused)
{
	struct kfd_queue *q;
	unsigned int i;

	seq_puts(m, "gpu_id pid queue type rptr iteration next_wg flags evicted\n");
	for (i = 0; i < kfdsim_num_gpus; i++) {
		struct kfdsim_cp *cp = kfdsim_gpus[i]->cp;

		kfdsim_cp_lock(cp);
		list_for_each_entry(q, &cp->queues, cp_node)
			seq_printf(m, "%u %d %u %u %llu %u %u 0x%x %d\n",
				   kfdsim_gpus[i]->gpu_id,
				   task_tgid_nr(q->pdd->p->lead_thread), q->id,
				   q->type, q->state.rptr,
				   q->state.progress.iteration,
				   q->state.progress.next_wg, q->state.flags,
				   q->evicted);
		mutex_unlock(&cp->lock);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsim_queues);

int kfdsim_debugfs_init(void)
{
	kfdsim_debugfs_root = debugfs_create_dir(KFDSIM_DRIVER_NAME, NULL);
	debugfs_create_file("counters", 0444, kfdsim_debugfs_root, NULL,
			    &kfdsim_counters_fops);
	debugfs_create_file("queues", 0444, kfdsim_debugfs_root, NULL,
			    &kfdsim_queues_fops);
	debugfs_create_file("cs_sdma", 0444, kfdsim_debugfs_root, NULL,
			    &kfdsim_cs_sdma_fops);
	debugfs_create_file("evict", 0200, kfdsim_debugfs_root, NULL,
			    &kfdsim_evict_fops);
	debugfs_create_file("restore", 0200, kfdsim_debugfs_root, NULL,
			    &kfdsim_restore_fops);
	debugfs_create_file_unsafe("criu_fail_nth", 0600, kfdsim_debugfs_root,
				   NULL, &kfdsim_criu_fail_fops);
	debugfs_create_file_unsafe("criu_fail_points", 0400,
				   kfdsim_debugfs_root, NULL,
				   &kfdsim_criu_points_fops);
	debugfs_create_file_unsafe("cp_fail_nth", 0600, kfdsim_debugfs_root,
				   NULL, &kfdsim_cp_fail_fops);
	return 0;
}

void kfdsim_debugfs_fini(void)
{
	debugfs_remove_recursive(kfdsim_debugfs_root);
	kfd_criu_set_fail_nth(0);
}
