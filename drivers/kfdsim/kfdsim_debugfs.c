// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: /sys/kernel/debug/kfdsim/counters lists the objects alive in the
 * driver and each GPU's VRAM use, one "name value" pair a line, so tests can
 * check that teardown really returned everything.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "kfdsim.h"

struct kfdsim_counters kfdsim_counters;

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
	for (i = 0; i < kfdsim_num_gpus; i++)
		seq_printf(m, "gpu%u_vram_used %lld\n", i,
			   atomic64_read(&kfdsim_gpus[i]->vram_used));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsim_counters);

int kfdsim_debugfs_init(void)
{
	kfdsim_debugfs_root = debugfs_create_dir(KFDSIM_DRIVER_NAME, NULL);
	debugfs_create_file("counters", 0444, kfdsim_debugfs_root, NULL,
			    &kfdsim_counters_fops);
	return 0;
}

void kfdsim_debugfs_fini(void)
{
	debugfs_remove_recursive(kfdsim_debugfs_root);
}
