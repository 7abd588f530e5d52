// SPDX-License-Identifier: GPL-2.0
/*
 * The KFD layer's side of the seam with the device (amdkfd: kfd_device.c,
 * kfd_interrupt.c, kfd_debugfs.c): the device list, and the kgd2kfd_*
 * calls of kgd2kfd.h, the only way the device model reaches up into the
 * KFD layer.
 */
#include <linux/debugfs.h>
#include <linux/device_cgroup.h>
#include <linux/kstrtox.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <drm/drm_ioctl.h>

#include "kfd_priv.h"
#include "kgd2kfd.h"

static struct kfd_dev kfd_devs[KFDSIM_MAX_GPUS];
struct kfd_dev *kfd_devices[KFDSIM_MAX_GPUS];
unsigned int kfd_num_devices;
struct kfd_counters kfd_counters;

void kgd2kfd_device_add(struct kfdsim_gpu *adev, unsigned int index,
			u32 gpu_id, const struct kfd_device_ops *ops)
{
	struct kfd_dev *dev = &kfd_devs[index];

	dev->adev = adev;
	dev->index = index;
	dev->gpu_id = gpu_id;
	dev->ops = ops;
	kfd_devices[index] = dev;
	kfd_num_devices = max(kfd_num_devices, index + 1);
}

void kgd2kfd_device_remove(unsigned int index)
{
	kfd_devices[index] = NULL;
	if (index + 1 == kfd_num_devices)
		kfd_num_devices = index;
}

struct kfd_dev *kfd_device_by_id(u32 gpu_id)
{
	unsigned int i;

	if (!gpu_id)
		return NULL;
	for (i = 0; i < kfd_num_devices; i++)
		if (kfd_devices[i]->gpu_id == gpu_id)
			return kfd_devices[i];
	return NULL;
}

/**
 * kfd_devcgroup_check_permission - may the caller use @dev, says its cgroup
 * @dev: a GPU
 *
 * As amdkfd's kfd_devcgroup_check_permission(): a GPU is usable by the
 * calling task only if its device cgroup (the legacy devices controller or
 * a cgroup v2 BPF device program, as container engines install) allows
 * reading and writing the GPU's render node. The check is by device
 * number, so it applies whatever path or mount namespace the caller has.
 *
 * Return: 0 if allowed, else a negative errno (-EPERM).
 */
int kfd_devcgroup_check_permission(const struct kfd_dev *dev)
{
#if defined(CONFIG_CGROUP_DEVICE) || defined(CONFIG_CGROUP_BPF)
	int minor = amdgpu_amdkfd_get_render_minor(dev->adev);

	if (minor < 0)
		return -EPERM;
	return devcgroup_check_permission(DEVCG_DEV_CHAR, DRM_MAJOR, minor,
					  DEVCG_ACC_READ | DEVCG_ACC_WRITE);
#else
	return 0;
#endif
}

int kgd2kfd_init(void)
{
	return kfd_chardev_init();
}

void kgd2kfd_exit(void)
{
	kfd_chardev_fini();
}

void kgd2kfd_signal_event(struct kfd_queue *q, u32 event_id)
{
	kfd_signal_event_from_gpu(q->pdd->p, event_id);
}

void kgd2kfd_memory_exception(struct kfd_queue *q,
			      const struct kfdsim_fault *fault)
{
	kfd_signal_memory_exception(q->pdd->p, q->pdd->user_gpu_id, fault);
}

void kgd2kfd_get_counters(struct kgd2kfd_counters *c)
{
	c->processes = atomic_read(&kfd_counters.processes);
	c->pdds = atomic_read(&kfd_counters.pdds);
	c->bos = atomic_read(&kfd_counters.bos);
	c->doorbell_slices = atomic_read(&kfd_counters.doorbell_slices);
	c->mmio_pages = atomic_read(&kfd_counters.mmio_pages);
	c->queues = atomic_read(&kfd_counters.queues);
}

/*
 * Preemption hooks for tests: writing a pid to "evict" evicts that process's
 * queues, writing it to "restore" undoes one eviction.
 */
static ssize_t kfd_debugfs_evict_write(struct file *file,
				       const char __user *buf, size_t len,
				       loff_t *ppos, bool evict)
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

static ssize_t kfd_debugfs_evict_fop_write(struct file *file,
					   const char __user *buf, size_t len,
					   loff_t *ppos)
{
	return kfd_debugfs_evict_write(file, buf, len, ppos, true);
}

static ssize_t kfd_debugfs_restore_fop_write(struct file *file,
					     const char __user *buf, size_t len,
					     loff_t *ppos)
{
	return kfd_debugfs_evict_write(file, buf, len, ppos, false);
}

static const struct file_operations kfd_debugfs_evict_fops = {
	.owner = THIS_MODULE,
	.write = kfd_debugfs_evict_fop_write,
	.llseek = noop_llseek,
};

static const struct file_operations kfd_debugfs_restore_fops = {
	.owner = THIS_MODULE,
	.write = kfd_debugfs_restore_fop_write,
	.llseek = noop_llseek,
};

/*
 * criu_fail_nth: write N > 0 to make the writer's Nth pass through a fault
 * injection point (kfd_criu_should_fail()) fail, once; 0 disarms. Reads
 * back how many points remain before it fires (0: fired, or disarmed).
 * criu_fail_points: how many points the armed process passed since it
 * armed (the failing one included); it stays readable after disarming.
 */
static int kfd_debugfs_criu_fail_get(void *data, u64 *val)
{
	*val = max(kfd_criu_get_fail_nth(), 0);
	return 0;
}

static int kfd_debugfs_criu_fail_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	kfd_criu_set_fail_nth(val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(kfd_debugfs_criu_fail_fops, kfd_debugfs_criu_fail_get,
			 kfd_debugfs_criu_fail_set, "%llu\n");

static int kfd_debugfs_criu_points_get(void *data, u64 *val)
{
	*val = kfd_criu_get_fail_points();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(kfd_debugfs_criu_points_fops,
			 kfd_debugfs_criu_points_get, NULL, "%llu\n");

/*
 * cp_fail_nth: write N to make the Nth allocation of a CP thread fail,
 * once (the CP retries the packet later); reads back how many remain.
 */

void kgd2kfd_debugfs_init(struct dentry *root)
{
	debugfs_create_file("evict", 0200, root, NULL,
			    &kfd_debugfs_evict_fops);
	debugfs_create_file("restore", 0200, root, NULL,
			    &kfd_debugfs_restore_fops);
	debugfs_create_file_unsafe("criu_fail_nth", 0600, root, NULL,
				   &kfd_debugfs_criu_fail_fops);
	debugfs_create_file_unsafe("criu_fail_points", 0400, root, NULL,
				   &kfd_debugfs_criu_points_fops);
}

void kgd2kfd_debugfs_fini(void)
{
	kfd_criu_set_fail_nth(0);
}
