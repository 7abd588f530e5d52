// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: /sys/kernel/debug/kfdsim/counters lists the objects alive in the
 * driver and each GPU's VRAM use, one "name value" pair a line, so tests can
 * check that teardown really returned everything (the KFD objects' counts
 * come from the KFD layer). "queues" lists every queue with its saved
 * state. "cs_sdma" adds up the SDMA packets amdgpu CS submissions ran and
 * the bytes their copies moved (the e2e tests prove the CRIU plugin's SDMA
 * path with it). "vm" counts the times a GPU map or unmap let go of the
 * page-table lock between two batches and the maps a fatal signal ended.
 * "gfx9" counts the machine-code instructions the waves executed, and
 * those times the lanes active in EXEC (make bench's interpreter rate).
 * The KFD layer adds its own files to the directory:
 * "evict", "restore" and the CRIU fault points (kfd/kfd_device.c).
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/seq_file.h>

#include "kfdsim.h"
#include "kgd2kfd.h"
#include "gfx9/kfdsim_gfx9.h"

struct kfdsim_counters kfdsim_counters;
atomic64_t kfdsim_cs_sdma_packets;
atomic64_t kfdsim_cs_sdma_copy_bytes;
atomic64_t kfdsim_cwsr_saved_waves;
atomic64_t kfdsim_cwsr_restored_waves;

static struct dentry *kfdsim_debugfs_root;

static int kfdsim_counters_show(struct seq_file *m, void *unused)
{
	struct kfdsim_counters *c = &kfdsim_counters;
	struct kgd2kfd_counters k;
	unsigned int i;

	kgd2kfd_get_counters(&k);
	seq_printf(m, "processes %d\n", k.processes);
	seq_printf(m, "pdds %d\n", k.pdds);
	seq_printf(m, "bos %d\n", k.bos);
	seq_printf(m, "gem_objects %d\n", atomic_read(&c->gem_objects));
	seq_printf(m, "pinned_pages %d\n", atomic_read(&c->pinned_pages));
	seq_printf(m, "vm_ptes %d\n", atomic_read(&c->vm_ptes));
	seq_printf(m, "doorbell_slices %d\n", k.doorbell_slices);
	seq_printf(m, "mmio_pages %d\n", k.mmio_pages);
	seq_printf(m, "queues %d\n", k.queues);
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

static int kfdsim_cwsr_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "saved_waves %lld\n",
		   (long long)atomic64_read(&kfdsim_cwsr_saved_waves));
	seq_printf(m, "restored_waves %lld\n",
		   (long long)atomic64_read(&kfdsim_cwsr_restored_waves));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsim_cwsr);

static int kfdsim_vm_stats_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "lock_drops %lld\n",
		   (long long)atomic64_read(&kfdsim_vm_lock_drops));
	seq_printf(m, "maps_interrupted %lld\n",
		   (long long)atomic64_read(&kfdsim_vm_maps_interrupted));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsim_vm_stats);

static int kfdsim_gfx9_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "wave_insns %lld\n",
		   (long long)atomic64_read(&kfdsim_gfx9_wave_insns));
	seq_printf(m, "lane_insns %lld\n",
		   (long long)atomic64_read(&kfdsim_gfx9_lane_insns));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsim_gfx9);

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
	struct kfdsim_cp_proc *proc;
	struct kfd_queue *q;
	unsigned int i;

	seq_puts(m, "gpu_id pid queue type rptr iteration next_wg flags evicted\n");
	for (i = 0; i < kfdsim_num_gpus; i++) {
		struct kfdsim_cp *cp = kfdsim_gpus[i]->cp;

		/* The CP's lock order: the list first, then each turn lock. */
		mutex_lock(&cp->lock);
		list_for_each_entry(proc, &cp->procs, node) {
			kfdsim_cp_turn_lock(proc);
			list_for_each_entry(q, &proc->queues, cp_node)
				seq_printf(m, "%u %d %u %u %llu %u %u 0x%x %d\n",
					   kfdsim_gpus[i]->gpu_id,
					   task_tgid_nr(proc->pdd->p->lead_thread),
					   q->id, q->type, q->state.rptr,
					   q->state.progress.iteration,
					   q->state.progress.next_wg,
					   q->state.flags, q->evicted);
			mutex_unlock(&proc->turn);
		}
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
	debugfs_create_file("cwsr", 0444, kfdsim_debugfs_root, NULL,
			    &kfdsim_cwsr_fops);
	debugfs_create_file("vm", 0444, kfdsim_debugfs_root, NULL,
			    &kfdsim_vm_stats_fops);
	debugfs_create_file("gfx9", 0444, kfdsim_debugfs_root, NULL,
			    &kfdsim_gfx9_fops);
	kgd2kfd_debugfs_init(kfdsim_debugfs_root);
	debugfs_create_file_unsafe("cp_fail_nth", 0600, kfdsim_debugfs_root,
				   NULL, &kfdsim_cp_fail_fops);
	return 0;
}

void kfdsim_debugfs_fini(void)
{
	debugfs_remove_recursive(kfdsim_debugfs_root);
	kgd2kfd_debugfs_fini();
}
