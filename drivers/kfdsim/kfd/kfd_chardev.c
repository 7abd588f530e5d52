// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kfd: open, ioctl dispatch and mmap of per-process pages.
 *
 * One character device serves every GPU, as in amdkfd. A file belongs to the
 * process that opened it: another process (a fork child, or one that got the
 * fd over a socket) gets -EBADF from every ioctl and mmap.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kfd_ioctl.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "kfd_priv.h"

/*
 * The KFD interface version reported by GET_VERSION: that of our uAPI
 * header. The CRIU ioctl (1.7, GTT dma-bufs 1.8) and EXPORT_DMABUF (1.12)
 * are implemented; upstream ioctls the simulator lacks (SVM, SMI events,
 * debugger, GWS, ...) answer -EOPNOTSUPP.
 */
#define KFDSIM_KFD_MAJOR	1
#define KFDSIM_KFD_MINOR	12

/* The simulated GPU clock counter runs at 100 MHz. */
#define KFDSIM_GPU_CLOCK_DIVIDER	10

static int kfd_major;
static struct class *kfd_class;
static struct device *kfd_device;

struct device *kfd_chardev_device(void)
{
	return kfd_device;
}

static bool kfd_is_owner(const struct kfd_process *p)
{
	return p->lead_thread == current->group_leader;
}

/* Is the caller the ptrace tracer of @p's process (as CRIU is)? */
static bool kfd_is_tracer(const struct kfd_process *p)
{
	struct task_struct *tracer;
	bool ret;

	rcu_read_lock();
	tracer = ptrace_parent(p->lead_thread);
	ret = tracer && same_thread_group(tracer, current);
	rcu_read_unlock();
	return ret;
}

static int kfd_ioctl_get_version(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_get_version_args *args = data;

	args->major_version = KFDSIM_KFD_MAJOR;
	args->minor_version = KFDSIM_KFD_MINOR;
	return 0;
}

/* Like amdkfd, an unknown gpu_id yields a zero GPU counter, not an error. */
static int kfd_ioctl_get_clock_counters(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_get_clock_counters_args *args = data;
	u64 now = ktime_get_raw_ns();

	if (args->pad)
		return -EINVAL;
	args->gpu_clock_counter = kfd_process_pdd_by_id(p, args->gpu_id) ?
		div_u64(now, KFDSIM_GPU_CLOCK_DIVIDER) : 0;
	args->cpu_clock_counter = now;
	args->system_clock_counter = ktime_get_boottime_ns();
	args->system_clock_freq = NSEC_PER_SEC;
	return 0;
}

static int kfd_ioctl_get_apertures_new(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_get_process_apertures_new_args *args = data;
	struct kfd_process_device_apertures __user *uap;
	struct kfd_process_device_apertures ap = {};
	unsigned int i, n = 0, visible = 0;

	if (args->pad)
		return -EINVAL;
	for (i = 0; i < kfd_num_devices; i++)
		if (p->pdds[i]->user_gpu_id)
			visible++;
	if (!args->num_of_nodes) {
		args->num_of_nodes = visible;
		return 0;
	}

	uap = u64_to_user_ptr(args->kfd_process_device_apertures_ptr);
	for (i = 0; i < kfd_num_devices && n < args->num_of_nodes; i++) {
		if (!p->pdds[i]->user_gpu_id)
			continue;
		ap.gpu_id = p->pdds[i]->user_gpu_id;
		ap.lds_base = KFDSIM_LDS_BASE;
		ap.lds_limit = KFDSIM_LDS_BASE + KFDSIM_APERTURE_SPAN;
		ap.scratch_base = KFDSIM_SCRATCH_BASE;
		ap.scratch_limit = KFDSIM_SCRATCH_BASE + KFDSIM_APERTURE_SPAN;
		ap.gpuvm_base = KFDSIM_GPUVM_BASE;
		ap.gpuvm_limit = KFDSIM_GPUVM_LIMIT;
		if (copy_to_user(&uap[n++], &ap, sizeof(ap)))
			return -EFAULT;
	}
	args->num_of_nodes = n;
	return 0;
}

/* amdkfd's bounds for the alternate (APE1) aperture of gfx7-9 */
#define KFD_APE1_FIXED_BITS	0xffff80000000ffffULL
#define KFD_APE1_LIMIT_ALIGN	0xffffULL

/*
 * Simulated memory is always coherent, so a policy changes nothing; the
 * arguments are checked as amdkfd checks them, as ROCm's thunk sets one.
 */
static int kfd_ioctl_set_memory_policy(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_set_memory_policy_args *args = data;
	u64 base = args->alternate_aperture_base;
	u64 last = base + args->alternate_aperture_size - 1;
	struct kfd_process_device *pdd;
	int ret = 0;

	if (args->pad ||
	    args->default_policy > KFD_IOC_CACHE_POLICY_NONCOHERENT ||
	    args->alternate_policy > KFD_IOC_CACHE_POLICY_NONCOHERENT)
		return -EINVAL;
	if (args->alternate_aperture_size &&
	    (last <= base || (base & KFD_APE1_FIXED_BITS) ||
	     (last & KFD_APE1_FIXED_BITS) != KFD_APE1_LIMIT_ALIGN))
		return -EINVAL;

	mutex_lock(&p->lock);
	pdd = kfd_process_pdd_by_id(p, args->gpu_id);
	if (!pdd)
		ret = -EINVAL;
	else if (!pdd->drm_file)
		ret = -ESRCH;	/* as amdkfd, a GPU without a VM */
	mutex_unlock(&p->lock);
	return ret;
}

/*
 * The pdd of @gpu_id for an ioctl that configures a device the process has
 * bound with ACQUIRE_VM (what amdkfd's kfd_bind_process_to_device checks).
 * The process lock must be held.
 */
static int kfd_bound_pdd(struct kfd_process *p, u32 gpu_id, const char *op,
			 struct kfd_process_device **out)
{
	struct kfd_process_device *pdd = kfd_process_pdd_by_id(p, gpu_id);

	lockdep_assert_held(&p->lock);
	if (!pdd) {
		kfd_reject("%s: no GPU with gpu_id %u\n", op, gpu_id);
		return -EINVAL;
	}
	if (!pdd->drm_file) {
		kfd_reject("%s: gpu_id %u has no VM, call ACQUIRE_VM first\n",
			   op, gpu_id);
		return -ENODEV;
	}
	*out = pdd;
	return 0;
}

/*
 * On gfx9 the scratch backing address lives in each dispatch's
 * SH_HIDDEN_PRIVATE_BASE; amdkfd only programs it into hardware without
 * HWS. ROCm's thunk sets it when it reserves the scratch aperture. The
 * built-in kernels use no scratch, so it is recorded and nothing more.
 */
static int kfd_ioctl_set_scratch_backing_va(struct kfd_process *p,
					    void *data)
{
	struct kfd_ioctl_set_scratch_backing_va_args *args = data;
	struct kfd_process_device *pdd;
	int ret;

	if (args->pad) {
		kfd_reject("SET_SCRATCH_BACKING_VA: pad 0x%x\n", args->pad);
		return -EINVAL;
	}
	mutex_lock(&p->lock);
	ret = kfd_bound_pdd(p, args->gpu_id, "SET_SCRATCH_BACKING_VA", &pdd);
	if (!ret)
		pdd->scratch_backing_va = args->va_addr;
	mutex_unlock(&p->lock);
	return ret;
}

/*
 * As amdkfd: recorded for the queues of the process on that GPU. The
 * simulated GPU runs built-in kernels that never trap, so no shader code
 * ever runs from tba_addr.
 */
static int kfd_ioctl_set_trap_handler(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_set_trap_handler_args *args = data;
	struct kfd_process_device *pdd;
	int ret;

	if (args->pad) {
		kfd_reject("SET_TRAP_HANDLER: pad 0x%x\n", args->pad);
		return -EINVAL;
	}
	mutex_lock(&p->lock);
	ret = kfd_bound_pdd(p, args->gpu_id, "SET_TRAP_HANDLER", &pdd);
	if (!ret) {
		pdd->tba_addr = args->tba_addr;
		pdd->tma_addr = args->tma_addr;
	}
	mutex_unlock(&p->lock);
	return ret;
}

/*
 * What amdgpu tells amdkfd about a gfx9 GPU's tiling (ROCr's image support
 * reads it at start-up): GB_ADDR_CONFIG as the device reports it (the
 * render node's READ_MMR_REG gives the same), and the tile and macro-tile
 * mode tables of 32 and 16 entries, which exist but stay zero from gfx9
 * on, as do the bank and rank counts.
 */
#define KFD_NUM_TILE_CONFIGS		32
#define KFD_NUM_MACRO_TILE_CONFIGS	16

/*
 * As upstream: the arrays are filled up to the smaller of their capacity
 * and the table's size, that count is returned, and a failed copy leaves
 * the count 0 with -EFAULT. An unknown gpu_id is -EINVAL; no VM needed.
 */
static int kfd_ioctl_get_tile_config(struct kfd_process *p, void *data)
{
	static const u32 zero_modes[KFD_NUM_TILE_CONFIGS];
	struct kfd_ioctl_get_tile_config_args *args = data;
	struct kfd_process_device *pdd;
	u32 gb_addr_config = 0;

	mutex_lock(&p->lock);
	pdd = kfd_process_pdd_by_id(p, args->gpu_id);
	if (pdd)
		gb_addr_config =
			amdgpu_amdkfd_get_asic_info(pdd->gpu->adev)->gb_addr_config;
	mutex_unlock(&p->lock);
	if (!pdd)
		return -EINVAL;

	args->gb_addr_config = gb_addr_config;
	args->num_banks = 0;
	args->num_ranks = 0;
	args->num_tile_configs = min_t(u32, args->num_tile_configs,
				       KFD_NUM_TILE_CONFIGS);
	if (copy_to_user(u64_to_user_ptr(args->tile_config_ptr), zero_modes,
			 args->num_tile_configs * sizeof(u32))) {
		args->num_tile_configs = 0;
		return -EFAULT;
	}
	args->num_macro_tile_configs = min_t(u32, args->num_macro_tile_configs,
					     KFD_NUM_MACRO_TILE_CONFIGS);
	if (copy_to_user(u64_to_user_ptr(args->macro_tile_config_ptr),
			 zero_modes,
			 args->num_macro_tile_configs * sizeof(u32))) {
		args->num_macro_tile_configs = 0;
		return -EFAULT;
	}
	return 0;
}

/*
 * amdkfd (kfd_process_xnack_mode) allows XNACK on only where every GPU of
 * the process runs with retry faults enabled; gfx906 (GC 9.4.0) defaults
 * to noretry, so upstream refuses to turn it on with -EPERM, and so does
 * the simulated gfx906. Setting a mode needs a process without queues
 * (-EBUSY otherwise, even for the mode already in force); a negative
 * value queries.
 */
static int kfd_ioctl_set_xnack_mode(struct kfd_process *p, void *data)
{
	struct kfd_ioctl_set_xnack_mode_args *args = data;
	int ret = 0;

	mutex_lock(&p->lock);
	if (args->xnack_enabled < 0) {
		args->xnack_enabled = p->xnack_enabled;
	} else if (!idr_is_empty(&p->queues)) {
		kfd_reject("SET_XNACK_MODE: the process has queues\n");
		ret = -EBUSY;
	} else if (args->xnack_enabled) {
		kfd_reject("SET_XNACK_MODE: gfx906 does not support XNACK\n");
		ret = -EPERM;
	} else {
		p->xnack_enabled = false;
	}
	mutex_unlock(&p->lock);
	return ret;
}

typedef int kfd_ioctl_fn(struct kfd_process *p, void *data);

/* The ioctl serves checkpoint/restore: privileged, usable by the tracer. */
#define KFD_IOC_FLAG_CHECKPOINT_RESTORE	BIT(0)

struct kfd_ioctl_desc {
	unsigned int cmd;
	kfd_ioctl_fn *func;
	const char *name;
	unsigned int flags;
};

#define KFD_IOCTL_FLAGS(ioctl, fn, fl) \
	[_IOC_NR(AMDKFD_IOC_##ioctl)] = { \
		.cmd = AMDKFD_IOC_##ioctl, .func = fn, .name = #ioctl, \
		.flags = fl }
#define KFD_IOCTL(ioctl, fn)	KFD_IOCTL_FLAGS(ioctl, fn, 0)

/* Entries without a function are upstream ioctls the simulator lacks. */
static const struct kfd_ioctl_desc kfd_ioctls[] = {
	KFD_IOCTL(GET_VERSION, kfd_ioctl_get_version),
	KFD_IOCTL(CREATE_QUEUE, kfd_ioctl_create_queue),
	KFD_IOCTL(DESTROY_QUEUE, kfd_ioctl_destroy_queue),
	KFD_IOCTL(SET_MEMORY_POLICY, kfd_ioctl_set_memory_policy),
	KFD_IOCTL(GET_CLOCK_COUNTERS, kfd_ioctl_get_clock_counters),
	KFD_IOCTL(GET_PROCESS_APERTURES, NULL),
	KFD_IOCTL(UPDATE_QUEUE, kfd_ioctl_update_queue),
	KFD_IOCTL(CREATE_EVENT, kfd_ioctl_create_event),
	KFD_IOCTL(DESTROY_EVENT, kfd_ioctl_destroy_event),
	KFD_IOCTL(SET_EVENT, kfd_ioctl_set_event),
	KFD_IOCTL(RESET_EVENT, kfd_ioctl_reset_event),
	KFD_IOCTL(WAIT_EVENTS, kfd_ioctl_wait_events),
	KFD_IOCTL(SET_SCRATCH_BACKING_VA, kfd_ioctl_set_scratch_backing_va),
	KFD_IOCTL(GET_TILE_CONFIG, kfd_ioctl_get_tile_config),
	KFD_IOCTL(SET_TRAP_HANDLER, kfd_ioctl_set_trap_handler),
	KFD_IOCTL(GET_PROCESS_APERTURES_NEW, kfd_ioctl_get_apertures_new),
	KFD_IOCTL(ACQUIRE_VM, kfd_ioctl_acquire_vm),
	KFD_IOCTL(ALLOC_MEMORY_OF_GPU, kfd_ioctl_alloc_memory),
	KFD_IOCTL(FREE_MEMORY_OF_GPU, kfd_ioctl_free_memory),
	KFD_IOCTL(MAP_MEMORY_TO_GPU, kfd_ioctl_map_memory),
	KFD_IOCTL(UNMAP_MEMORY_FROM_GPU, kfd_ioctl_unmap_memory),
	KFD_IOCTL(SET_CU_MASK, NULL),
	KFD_IOCTL(GET_QUEUE_WAVE_STATE, kfd_ioctl_get_queue_wave_state),
	KFD_IOCTL(GET_DMABUF_INFO, NULL),
	KFD_IOCTL(IMPORT_DMABUF, NULL),
	KFD_IOCTL(ALLOC_QUEUE_GWS, NULL),
	KFD_IOCTL(SMI_EVENTS, NULL),
	KFD_IOCTL(SVM, NULL),
	KFD_IOCTL(SET_XNACK_MODE, kfd_ioctl_set_xnack_mode),
	KFD_IOCTL_FLAGS(CRIU_OP, kfd_ioctl_criu,
			KFD_IOC_FLAG_CHECKPOINT_RESTORE),
	KFD_IOCTL(AVAILABLE_MEMORY, kfd_ioctl_available_memory),
	KFD_IOCTL(EXPORT_DMABUF, kfd_ioctl_export_dmabuf),
};

/* Large enough for every argument struct the driver implements. */
#define KFD_IOCTL_ARG_MAX	128

static long kfd_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct kfd_process *p = filp->private_data;
	void __user *uarg = (void __user *)arg;
	const struct kfd_ioctl_desc *desc;
	unsigned int nr = _IOC_NR(cmd);
	unsigned int usize, asize;
	u64 kdata[KFD_IOCTL_ARG_MAX / sizeof(u64)];
	int ret;

	if (_IOC_TYPE(cmd) != AMDKFD_IOCTL_BASE || nr >= ARRAY_SIZE(kfd_ioctls) ||
	    !kfd_ioctls[nr].cmd) {
		pr_debug("unknown ioctl 0x%x\n", cmd);
		return -EINVAL;
	}
	desc = &kfd_ioctls[nr];
	if (!desc->func) {
		pr_info_ratelimited("ioctl %s is not implemented by the simulator\n",
				    desc->name);
		return -EOPNOTSUPP;
	}
	if (!kfd_is_owner(p) &&
	    !((desc->flags & KFD_IOC_FLAG_CHECKPOINT_RESTORE) &&
	      kfd_is_tracer(p))) {
		pr_debug("%s: /dev/kfd fd used by pid %d, not its owner\n",
			 desc->name, task_tgid_nr(current));
		return -EBADF;
	}
	/* CAP_SYS_ADMIN too, as upstream: older containers lack the other. */
	if ((desc->flags & KFD_IOC_FLAG_CHECKPOINT_RESTORE) &&
	    !capable(CAP_CHECKPOINT_RESTORE) && !capable(CAP_SYS_ADMIN)) {
		pr_info_ratelimited("%s: pid %d lacks CAP_CHECKPOINT_RESTORE\n",
				    desc->name, task_tgid_nr(current));
		return -EACCES;
	}

	/* Accept older or newer struct sizes the way upstream does. */
	asize = _IOC_SIZE(desc->cmd);
	usize = min(_IOC_SIZE(cmd), asize);
	if (WARN_ON_ONCE(asize > sizeof(kdata)))
		return -EINVAL;
	memset(kdata, 0, asize);
	if ((desc->cmd & IOC_IN) && copy_from_user(kdata, uarg, usize))
		return -EFAULT;

	ret = desc->func(p, kdata);

	/* As upstream, even on error: WAIT_EVENTS reports through it. */
	if ((desc->cmd & IOC_OUT) && copy_to_user(uarg, kdata, usize))
		ret = -EFAULT;
	return ret;
}

static void kfd_doorbell_vm_open(struct vm_area_struct *vma)
{
	struct kfd_process_device *pdd = vma->vm_private_data;

	kref_get(&pdd->p->ref);
	atomic_inc(&pdd->doorbell_maps);
}

static void kfd_doorbell_vm_close(struct vm_area_struct *vma)
{
	struct kfd_process_device *pdd = vma->vm_private_data;

	atomic_dec(&pdd->doorbell_maps);
	kfd_process_put(pdd->p);
}

/* The mapping keeps the process, and so the doorbell pages, alive. */
static const struct vm_operations_struct kfd_doorbell_vm_ops = {
	.open = kfd_doorbell_vm_open,
	.close = kfd_doorbell_vm_close,
};

static int kfd_mmap_doorbells(struct kfd_process_device *pdd,
			      struct vm_area_struct *vma)
{
	int ret;

	if (vma->vm_end - vma->vm_start != KFDSIM_DOORBELL_SLICE_SIZE) {
		kfd_reject("mmap of the doorbells: 0x%lx bytes, the slice is 0x%lx\n",
			   vma->vm_end - vma->vm_start,
			   KFDSIM_DOORBELL_SLICE_SIZE);
		return -EINVAL;
	}
	/* A failed RESTORE may free an unmapped slice: see kfd_process_reset. */
	mutex_lock(&pdd->doorbell_lock);
	ret = kfd_process_doorbells(pdd);
	if (ret)
		goto out_unlock;

	vma->vm_flags |= VM_IO | VM_DONTCOPY | VM_DONTEXPAND | VM_NORESERVE |
			 VM_DONTDUMP | VM_PFNMAP;
	ret = remap_pfn_range(vma, vma->vm_start,
			      page_to_pfn(pdd->doorbells),
			      KFDSIM_DOORBELL_SLICE_SIZE, vma->vm_page_prot);
	if (ret)
		goto out_unlock;
	vma->vm_private_data = pdd;
	vma->vm_ops = &kfd_doorbell_vm_ops;
	kfd_doorbell_vm_open(vma);
out_unlock:
	mutex_unlock(&pdd->doorbell_lock);
	return ret;
}

static void kfd_mmio_vm_open(struct vm_area_struct *vma)
{
	struct kfd_process_device *pdd = vma->vm_private_data;

	kref_get(&pdd->p->ref);
}

static void kfd_mmio_vm_close(struct vm_area_struct *vma)
{
	struct kfd_process_device *pdd = vma->vm_private_data;

	kfd_process_put(pdd->p);
}

/* The mapping keeps the process, and so its MMIO page, alive. */
static const struct vm_operations_struct kfd_mmio_vm_ops = {
	.open = kfd_mmio_vm_open,
	.close = kfd_mmio_vm_close,
};

/*
 * The MMIO remap page, as amdkfd's kfd_mmio_mmap maps it: exactly one
 * page, as an I/O mapping, for a device named by its actual gpu_id, with
 * or without an MMIO_REMAP BO (the register page always exists). Upstream
 * maps registers uncached; the simulated page is RAM, which x86 PAT wants
 * mapped write-back.
 */
static int kfd_mmap_mmio(struct kfd_process_device *pdd,
			 struct vm_area_struct *vma)
{
	struct page *page;
	int ret;

	if (vma->vm_end - vma->vm_start != PAGE_SIZE) {
		kfd_reject("mmap: MMIO page mapped with size 0x%lx\n",
			   vma->vm_end - vma->vm_start);
		return -EINVAL;
	}
	ret = kfd_process_mmio_page(pdd);
	if (ret)
		return ret;
	page = pdd->mmio_page;

	vma->vm_flags |= VM_IO | VM_DONTCOPY | VM_DONTEXPAND | VM_NORESERVE |
			 VM_DONTDUMP | VM_PFNMAP;
	ret = remap_pfn_range(vma, vma->vm_start, page_to_pfn(page), PAGE_SIZE,
			      vma->vm_page_prot);
	if (ret)
		return ret;
	vma->vm_private_data = pdd;
	vma->vm_ops = &kfd_mmio_vm_ops;
	kfd_mmio_vm_open(vma);
	return 0;
}

/**
 * kfd_mmap_offset - the /dev/kfd mmap offset of a per-device mapping
 * @type: KFD_MMAP_TYPE_DOORBELL or KFD_MMAP_TYPE_MMIO
 * @pdd: the process and device the mapping belongs to
 *
 * As upstream, the offset names the device by its own gpu_id, never by the
 * one a restored process knows it by: kfd_mmap() resolves the gpu_id bits
 * as a device (upstream's kfd_device_by_id()), then takes the caller's
 * state on that device. CREATE_QUEUE, ALLOC and CRIU all build their
 * offsets here; kfd_mmap_device() is the inverse.
 *
 * Return: the offset, with the in-mapping bits zero.
 */
u64 kfd_mmap_offset(u64 type, const struct kfd_process_device *pdd)
{
	return type | KFD_MMAP_GPU_ID(pdd->gpu->gpu_id);
}

/*
 * The caller's state on the device an mmap offset names: ERR_PTR(-ENODEV)
 * if no device has that gpu_id, ERR_PTR(-EINVAL) if the caller's device
 * cgroup hid it (upstream finds the device but no pdd).
 */
static struct kfd_process_device *kfd_mmap_device(struct kfd_process *p,
						  u64 offset)
{
	struct kfd_dev *gpu;

	gpu = kfd_device_by_id(KFD_MMAP_GET_GPU_ID(offset));
	if (!gpu)
		return ERR_PTR(-ENODEV);
	if (p->pdds[gpu->index]->hidden)
		return ERR_PTR(-EINVAL);
	return p->pdds[gpu->index];
}

/*
 * Every mapping type of amdkfd's kfd_mmap(). The events page belongs to
 * the process; the others to the device the offset names, and without
 * one they fail with -ENODEV, as upstream.
 */
static int kfd_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct kfd_process *p = filp->private_data;
	u64 offset = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 type = offset & KFD_MMAP_TYPE_MASK;
	struct kfd_process_device *pdd;

	if (!kfd_is_owner(p))
		return -EBADF;
	if (type == KFD_MMAP_TYPE_EVENTS)
		return kfd_mmap_events(p, vma);

	pdd = kfd_mmap_device(p, offset);
	if (IS_ERR(pdd)) {
		kfd_reject("mmap of /dev/kfd at 0x%llx: no gpu_id %llu here\n",
			   offset, KFD_MMAP_GET_GPU_ID(offset));
		return PTR_ERR(pdd);
	}
	switch (type) {
	case KFD_MMAP_TYPE_DOORBELL:
		return kfd_mmap_doorbells(pdd, vma);
	case KFD_MMAP_TYPE_MMIO:
		return kfd_mmap_mmio(pdd, vma);
	default:
		/* Upstream maps the CWSR trap handler of APUs here. */
		kfd_reject("mmap of /dev/kfd at 0x%llx: reserved memory (CWSR) is not simulated\n",
			   offset);
		return -EINVAL;
	}
}

static int kfd_open(struct inode *inode, struct file *filp)
{
	struct kfd_process *p;

	if (iminor(inode) != 0)
		return -ENODEV;
	/* As upstream: 32-bit processes are not supported. */
	if (in_compat_syscall())
		return -EPERM;

	p = kfd_process_get_current();
	if (IS_ERR(p))
		return PTR_ERR(p);
	filp->private_data = p;
	return 0;
}

static int kfd_flush(struct file *filp, fl_owner_t id)
{
	kfd_criu_file_flush(filp);
	return 0;
}

static int kfd_release(struct inode *inode, struct file *filp)
{
	kfd_process_put(filp->private_data);
	return 0;
}

static const struct file_operations kfd_fops = {
	.owner = THIS_MODULE,
	.open = kfd_open,
	.flush = kfd_flush,
	.release = kfd_release,
	.unlocked_ioctl = kfd_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = kfd_mmap,
	.llseek = noop_llseek,
};

/* Like amdkfd, /dev/kfd is open to every user; access is per process. */
static char *kfd_devnode(struct device *dev, umode_t *mode)
{
	if (mode)
		*mode = 0666;
	return NULL;
}

int kfd_chardev_init(void)
{
	int ret;

	kfd_major = register_chrdev(0, "kfd", &kfd_fops);
	if (kfd_major < 0)
		return kfd_major;

	kfd_class = class_create(THIS_MODULE, "kfd");
	if (IS_ERR(kfd_class)) {
		ret = PTR_ERR(kfd_class);
		goto err_chrdev;
	}
	kfd_class->devnode = kfd_devnode;

	kfd_device = device_create(kfd_class, NULL, MKDEV(kfd_major, 0), NULL,
				   "kfd");
	if (IS_ERR(kfd_device)) {
		ret = PTR_ERR(kfd_device);
		goto err_class;
	}

	ret = kfd_topology_init(kfd_device);
	if (ret)
		goto err_device;
	return 0;

err_device:
	device_destroy(kfd_class, MKDEV(kfd_major, 0));
err_class:
	class_destroy(kfd_class);
err_chrdev:
	unregister_chrdev(kfd_major, "kfd");
	return ret;
}

void kfd_chardev_fini(void)
{
	kfd_topology_fini();
	device_destroy(kfd_class, MKDEV(kfd_major, 0));
	class_destroy(kfd_class);
	unregister_chrdev(kfd_major, "kfd");
}
