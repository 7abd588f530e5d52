// SPDX-License-Identifier: GPL-2.0
/*
 * Every real allocation failure (opt-in: `make failslab`, under a kernel
 * with CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC and
 * FAULT_INJECTION_USERCOPY, such as scripts/debug-kernel's).
 *
 * The kernel's per-task fail-nth (/proc/thread-self/fail-nth) fails the
 * Nth slab allocation, page allocation or user copy the calling thread
 * makes; failslab and fail_page_alloc are set up through debugfs to count
 * every allocation (sleeping ones, order 0, highmem) and to fail nothing
 * on their own (probability 0, task filter on). Each call under test is
 * made with N = 1, 2, ... until it succeeds with the Nth fault not
 * reached. Each failure must be a clean error: a negative errno, the
 * driver's counters and the caller's fds as before the call, and the
 * process usable (the next try runs in it); vm-run fails the run on any
 * kernel report. One exception is the copy of an ioctl's arguments back
 * to the caller, after the call did its work: as upstream's amdkfd and
 * DRM, the call then fails with -EFAULT although it took effect. Such
 * -EFAULTs are counted and reported; what they left is freed when the
 * process exits (checked after each test's child process is gone). The
 * fault positions are not stable from one try to the next (a slab that
 * needs a new page, kmemleak's pool), so "the last point" cannot be
 * pinned down by its number.
 *
 * A fault the kernel absorbs (kvmalloc() falling back to vmalloc,
 * kmemleak's object pool) lets a call succeed although the fault fired;
 * the sweep then undoes the call and goes on.
 *
 * Calls: ALLOC (GTT, VRAM, USERPTR), FREE, MAP, UNMAP, CREATE_QUEUE,
 * DESTROY_QUEUE, CREATE_EVENT; on the render node GEM_CREATE, GEM_VA and
 * CS; the CRIU ops PROCESS_INFO, CHECKPOINT and UNPAUSE (on the test's own
 * process), RESTORE (in a fresh child) and RESUME (of a freshly restored
 * child for each N). Each prints how many fault points it reached.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <libdrm/amdgpu_drm.h>

#include "kt_harness.h"
#include "kfdsim_gpu.h"
#include "kfdsim_criu_util.h"

#define FS_MAX_N	5000
#define FS_DEBUGFS	"/sys/kernel/debug"
#define FS_GEM_VA	0x7e0000000000ULL

/* ---- the kernel's fault injection ---- */

static int fs_nth_fd = -1;
static pid_t fs_nth_tid;

/* The calling thread's fail-nth, opened before any fault is armed. */
static int fs_nth_open(void)
{
	if (fs_nth_fd >= 0 && fs_nth_tid == gettid())
		return 0;
	if (fs_nth_fd >= 0)
		close(fs_nth_fd);
	fs_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	fs_nth_tid = gettid();
	return fs_nth_fd < 0 ? -errno : 0;
}

static int fs_nth_arm(int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", n);

	return pwrite(fs_nth_fd, buf, len, 0) == len ? 0 : -errno;
}

/*
 * How many faults were still to go (0: the fault fired), then disarm.
 * Reading copies to user space, which is itself a fault point: with
 * exactly 1 to go, that copy fails and the read says -EFAULT. A write
 * that fails the same way leaves the count at 0 as well.
 */
static int fs_nth_done(void)
{
	char buf[16] = "";
	ssize_t n;
	int left;

	n = pread(fs_nth_fd, buf, sizeof(buf) - 1, 0);
	if (n < 0 && errno == EFAULT)
		left = 1;
	else if (n <= 0)
		return -EIO;
	else
		left = atoi(buf);
	while (pwrite(fs_nth_fd, "0", 1, 0) != 1)
		if (errno != EFAULT)
			return -errno;
	return left;
}

static int fs_write(const char *attr, const char *file, const char *val)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), FS_DEBUGFS "/%s/%s", attr, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

/* Count every allocation and user copy; fail none but the Nth. */
static int fs_setup_faults(char *msg, size_t len)
{
	static const char *const attrs[] = {
		"failslab", "fail_page_alloc", "fail_usercopy",
	};
	unsigned int i;

	for (i = 0; i < 3; i++)
		if (fs_write(attrs[i], "probability", "0") ||
		    fs_write(attrs[i], "task-filter", "Y") ||
		    fs_write(attrs[i], "verbose", "0") ||
		    fs_write(attrs[i], "times", "-1")) {
			snprintf(msg, len, "%s/%s not set up: needs CONFIG_FAULT_INJECTION_DEBUG_FS, FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_USERCOPY",
				 FS_DEBUGFS, attrs[i]);
			return -1;
		}
	if (fs_write("failslab", "ignore-gfp-wait", "N") ||
	    fs_write("fail_page_alloc", "ignore-gfp-wait", "N") ||
	    fs_write("fail_page_alloc", "ignore-gfp-highmem", "N") ||
	    fs_write("fail_page_alloc", "min-order", "0")) {
		snprintf(msg, len, "failslab / fail_page_alloc filters not set");
		return -1;
	}
	if (fs_nth_open()) {
		snprintf(msg, len, "/proc/thread-self/fail-nth: %s (needs CONFIG_FAULT_INJECTION)",
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- the process under test ---- */

struct fs {
	struct kg_rt rt;
	/* scratch of the call under test, set up by its prep */
	uint64_t handle, va;
	uint32_t id, ctx, gem;
	void *uptr;
	struct kg_bo ring, ctl, ib;
	uint32_t *ib_cpu;
	struct kfd_ioctl_criu_args criu;
	struct kc_image img;
	pid_t child;
	int sock;
};

/*
 * A call under test: prep (unarmed) sets up what it needs, call is made
 * with the fault armed, after (unarmed) takes the process back to where it
 * was before prep, whether call succeeded (ret 0) or not.
 */
struct fs_op {
	const char *name;
	int (*prep)(struct fs *f);
	int (*call)(struct fs *f);
	int (*after)(struct fs *f, int ret);
};

static int fs_none(struct fs *f)
{
	(void)f;
	return 0;
}

static int fs_alloc(struct fs *f, uint32_t flags)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args a = {
		.va_addr = f->va,
		.size = 2 * KT_PAGE,
		.gpu_id = f->rt.ids[0],
		.flags = flags | KT_WRITABLE,
		.mmap_offset = (uintptr_t)f->uptr,
	};
	int ret = kt_ioctl(f->rt.e.kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a);

	f->handle = a.handle;
	return ret;
}

static int alloc_prep(struct fs *f)
{
	f->va = kg_va_hole(&f->rt);
	return 0;
}

static int alloc_gtt(struct fs *f)
{
	return fs_alloc(f, KT_GTT);
}

static int alloc_vram(struct fs *f)
{
	return fs_alloc(f, KT_VRAM);
}

static int alloc_uptr(struct fs *f)
{
	return fs_alloc(f, KT_USERPTR);
}

static int alloc_after(struct fs *f, int ret)
{
	return ret ? 0 : kt_free(f->rt.e.kfd, f->handle);
}

/* A GTT BO for FREE, MAP and UNMAP. */
static int bo_prep(struct fs *f)
{
	alloc_prep(f);
	return alloc_gtt(f);
}

static int free_call(struct fs *f)
{
	return kt_free(f->rt.e.kfd, f->handle);
}

static int free_after(struct fs *f, int ret)
{
	return ret ? kt_free(f->rt.e.kfd, f->handle) : 0;
}

static int map_call(struct fs *f)
{
	return kt_map(f->rt.e.kfd, f->handle, f->rt.ids, f->rt.e.ngpus);
}

static int map_after(struct fs *f, int ret)
{
	(void)ret;
	return kt_free(f->rt.e.kfd, f->handle);
}

static int unmap_prep(struct fs *f)
{
	return bo_prep(f) ?: map_call(f);
}

static int unmap_call(struct fs *f)
{
	return kt_unmap(f->rt.e.kfd, f->handle, f->rt.ids, f->rt.e.ngpus);
}

static int queue_create(struct fs *f)
{
	struct kfd_ioctl_create_queue_args a = {
		.ring_base_address = f->ring.va,
		.ring_size = (uint32_t)f->ring.size,
		.read_pointer_address = f->ctl.va,
		.write_pointer_address = f->ctl.va + 8,
		.gpu_id = f->rt.ids[0],
		.queue_type = KFD_IOC_QUEUE_TYPE_SDMA,
		.queue_percentage = 100,
		.queue_priority = 7,
	};
	int ret = kt_ioctl(f->rt.e.kfd, AMDKFD_IOC_CREATE_QUEUE, &a);

	f->id = a.queue_id;
	return ret;
}

static int queue_destroy(struct fs *f)
{
	struct kfd_ioctl_destroy_queue_args a = { .queue_id = f->id };

	return kt_ioctl(f->rt.e.kfd, AMDKFD_IOC_DESTROY_QUEUE, &a);
}

static int queue_create_after(struct fs *f, int ret)
{
	return ret ? 0 : queue_destroy(f);
}

static int queue_destroy_after(struct fs *f, int ret)
{
	return ret ? queue_destroy(f) : 0;
}

static int event_create(struct fs *f)
{
	struct kfd_ioctl_create_event_args a;
	int ret = kg_event_new(f->rt.e.kfd, KFD_IOC_EVENT_SIGNAL, true, 0, &a);

	f->id = a.event_id;
	return ret;
}

static int event_after(struct fs *f, int ret)
{
	return ret ? 0 : kg_event_destroy(f->rt.e.kfd, f->id);
}

/* ---- the render node ---- */

static int gem_create(struct fs *f)
{
	union drm_amdgpu_gem_create gc = { 0 };
	int ret;

	gc.in.bo_size = 2 * KT_PAGE;
	gc.in.domains = AMDGPU_GEM_DOMAIN_GTT;
	ret = kt_ioctl(f->rt.e.render[0], DRM_IOCTL_AMDGPU_GEM_CREATE, &gc);
	f->gem = gc.out.handle;
	return ret;
}

static int gem_close(struct fs *f)
{
	struct drm_gem_close c = { .handle = f->gem };

	return kt_ioctl(f->rt.e.render[0], DRM_IOCTL_GEM_CLOSE, &c);
}

static int gem_create_after(struct fs *f, int ret)
{
	return ret ? 0 : gem_close(f);
}

static int gem_va(struct fs *f, uint32_t op)
{
	struct drm_amdgpu_gem_va va = {
		.handle = f->gem,
		.operation = op,
		.flags = AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE,
		.va_address = FS_GEM_VA,
		.map_size = 2 * KT_PAGE,
	};

	return kt_ioctl(f->rt.e.render[0], DRM_IOCTL_AMDGPU_GEM_VA, &va);
}

static int gem_va_map(struct fs *f)
{
	return gem_va(f, AMDGPU_VA_OP_MAP);
}

static int gem_va_after(struct fs *f, int ret)
{
	return (ret ? 0 : gem_va(f, AMDGPU_VA_OP_UNMAP)) ?: gem_close(f);
}

/* One SDMA IB: copy a page of the IB BO onto its second page, a fence. */
static int cs_call(struct fs *f)
{
	struct drm_amdgpu_cs_chunk_ib ci = {
		.ip_type = AMDGPU_HW_IP_DMA,
		.va_start = f->ib.va,
		.ib_bytes = 8 * 4,
	};
	struct drm_amdgpu_cs_chunk chunk = {
		.chunk_id = AMDGPU_CHUNK_ID_IB,
		.length_dw = sizeof(ci) / 4,
		.chunk_data = (uintptr_t)&ci,
	};
	uint64_t ptr = (uintptr_t)&chunk;
	union drm_amdgpu_cs cs = { 0 };

	cs.in.ctx_id = f->ctx;
	cs.in.num_chunks = 1;
	cs.in.chunks = (uintptr_t)&ptr;
	return kt_ioctl(f->rt.e.render[0], DRM_IOCTL_AMDGPU_CS, &cs);
}

/* ---- CRIU on the test's own process ---- */

static int criu_op(struct fs *f, uint32_t op)
{
	f->criu.op = op;
	return kt_ioctl(f->rt.e.kfd, AMDKFD_IOC_CRIU_OP, &f->criu);
}

static int pinfo_call(struct fs *f)
{
	memset(&f->criu, 0, sizeof(f->criu));
	return criu_op(f, KFD_CRIU_OP_PROCESS_INFO);
}

static int pinfo_after(struct fs *f, int ret)
{
	return ret ? 0 : kc_unpause(f->rt.e.kfd);
}

/* PROCESS_INFO, then the arrays CHECKPOINT fills (no malloc once armed). */
static int ckpt_prep(struct fs *f)
{
	struct kc_image *k = &f->img;
	int ret;

	kc_image_free(k);
	ret = kc_process_info(f->rt.e.kfd, k);
	if (ret)
		return ret;
	k->devices = calloc(k->num_devices + 1, sizeof(*k->devices));
	k->bos = calloc(k->num_bos + 1, sizeof(*k->bos));
	k->priv = calloc(1, k->priv_size);
	if (!k->devices || !k->bos || !k->priv)
		return -ENOMEM;
	memset(k->bos, 0xff, (k->num_bos + 1) * sizeof(*k->bos));
	f->criu = (struct kfd_ioctl_criu_args){
		.devices = (uintptr_t)k->devices,
		.bos = (uintptr_t)k->bos,
		.priv_data = (uintptr_t)k->priv,
		.num_devices = k->num_devices,
		.num_bos = k->num_bos,
		.num_objects = k->num_objects,
		.priv_data_size = k->priv_size,
	};
	return 0;
}

static int ckpt_call(struct fs *f)
{
	return criu_op(f, KFD_CRIU_OP_CHECKPOINT);
}

/*
 * After a success (or a failed copy-out at the last point, which also
 * installed the fds): close the dma-bufs and unpause. A failed CHECKPOINT
 * unpaused by itself, so UNPAUSE then says -EINVAL.
 */
static int ckpt_after(struct fs *f, int ret)
{
	int u;

	if (!ret || ret == -EFAULT)
		kc_close_dmabufs(f->img.bos, f->img.num_bos);
	u = kc_unpause(f->rt.e.kfd);
	return !u || (ret && u == -EINVAL) ? 0 : u;
}

static int unpause_prep(struct fs *f)
{
	return kc_unpause(f->rt.e.kfd) == -EINVAL ?
	       pinfo_call(f) : -EBUSY;
}

static int unpause_call(struct fs *f)
{
	return criu_op(f, KFD_CRIU_OP_UNPAUSE);
}

static int unpause_after(struct fs *f, int ret)
{
	int r;

	if (!ret)
		return 0;
	r = kc_unpause(f->rt.e.kfd);
	/* A failed copy-out follows an UNPAUSE that took effect. */
	return r == -EINVAL && ret == -EFAULT ? 0 : r;
}

static const struct fs_op fs_ops[] = {
	{ "ALLOC GTT", alloc_prep, alloc_gtt, alloc_after },
	{ "ALLOC VRAM", alloc_prep, alloc_vram, alloc_after },
	{ "ALLOC USERPTR", alloc_prep, alloc_uptr, alloc_after },
	{ "FREE", bo_prep, free_call, free_after },
	{ "MAP", bo_prep, map_call, map_after },
	{ "UNMAP", unmap_prep, unmap_call, map_after },
	{ "CREATE_QUEUE", fs_none, queue_create, queue_create_after },
	{ "DESTROY_QUEUE", queue_create, queue_destroy, queue_destroy_after },
	{ "CREATE_EVENT", fs_none, event_create, event_after },
	{ "GEM_CREATE", fs_none, gem_create, gem_create_after },
	{ "GEM_VA", gem_create, gem_va_map, gem_va_after },
	{ "CS", fs_none, cs_call, NULL },
	{ "PROCESS_INFO", fs_none, pinfo_call, pinfo_after },
	{ "CHECKPOINT", ckpt_prep, ckpt_call, ckpt_after },
	{ "UNPAUSE", unpause_prep, unpause_call, unpause_after },
};

#define FS_NOPS	(sizeof(fs_ops) / sizeof(fs_ops[0]))

/*
 * Sweep @op: N = 1, 2, ... until the call succeeds without the Nth fault.
 * Returns the number of fault points it reached, or -1 with @msg.
 */
static int fs_sweep(struct fs *f, const struct fs_op *op, char *msg,
		    size_t len)
{
	struct kt_props before, after;
	int n, ret, left, fds, dirty = 0, absorbed = 0;
	char err[256];

	for (n = 1; n < FS_MAX_N; n++) {
		ret = op->prep(f);
		KT_CHECK(!ret, "%s: setting up try %d: %s", op->name, n,
			 strerror(-ret));
		KT_CHECK(!kt_counters(&before, err, sizeof(err)), "%s", err);
		fds = kc_count_fds();
		KT_CHECK(!fs_nth_arm(n), "arming fail-nth: %s",
			 strerror(errno));
		ret = op->call(f);
		left = fs_nth_done();
		KT_CHECK(left >= 0, "reading fail-nth: %s", strerror(-left));
		if (!ret) {
			if (op->after)
				KT_CHECK(!op->after(f, 0),
					 "%s: undoing try %d failed", op->name,
					 n);
			if (left)
				break;
			absorbed++;
			continue;
		}
		KT_CHECK(!left, "%s failed (%s) without an injected fault (N %d)",
			 op->name, strerror(-ret), n);
		KT_CHECK(ret == -ENOMEM || ret == -EFAULT,
			 "%s: fault %d ended in %d (%s)", op->name, n, ret,
			 strerror(-ret));
		KT_CHECK(!kt_counters(&after, err, sizeof(err)), "%s", err);
		if (kt_counters_diff(&before, &after, err, sizeof(err)) ||
		    kc_count_fds() != fds) {
			/* Only the last point may: see the file's header. */
			KT_CHECK(ret == -EFAULT, "%s: fault %d (%s) left %s, %d fds",
				 op->name, n, strerror(-ret), err,
				 kc_count_fds() - fds);
			/* Undo what can be (ALLOC's handle never came back). */
			dirty++;
			if (op->after)
				op->after(f, 0);
			continue;
		}
		if (op->after)
			KT_CHECK(!op->after(f, ret),
				 "%s: cleaning up after fault %d failed",
				 op->name, n);
	}
	KT_CHECK(n < FS_MAX_N, "%s still fails after %d faults", op->name, n);
	KT_CHECK(n > 1, "%s reached no fault point", op->name);
	printf("# %s: %d fault points, %d faults absorbed, %d failed copy-outs after the call took effect\n",
	       op->name, n - 1, absorbed, dirty);
	return n - 1;
}

/* The process's state for the sweeps: BOs, a queue, events, a CS context. */
static int fs_open(struct fs *f, char *msg, size_t len)
{
	union drm_amdgpu_ctx ctx = { 0 };
	struct kg_queue q;
	int ret;

	memset(f, 0, sizeof(*f));
	ret = kg_open(&f->rt);
	KT_CHECK(!ret, "kg_open: %s", strerror(-ret));
	f->uptr = mmap(NULL, 2 * KT_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	KT_CHECK(f->uptr != MAP_FAILED, "mmap: %s", strerror(errno));
	ret = kg_bo_new(&f->rt, 0, 4 * KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			&f->ring);
	if (!ret)
		ret = kg_bo_new(&f->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
				&f->ctl);
	if (!ret)
		ret = kg_bo_new(&f->rt, 0, 2 * KT_PAGE, KT_GTT | KT_WRITABLE,
				0, &f->ib);
	/* An AQL queue and events for the CRIU ops to find. */
	if (!ret)
		ret = kg_queue_new(&f->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				   1024, &q);
	if (!ret)
		ret = event_create(f);
	KT_CHECK(!ret, "setting up: %s", strerror(-ret));
	f->ib_cpu = f->ib.cpu;
	f->ib_cpu[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_COPY,
					  KFDSIM_SDMA_SUBOP_COPY_LINEAR);
	f->ib_cpu[1] = 256 - 1;
	f->ib_cpu[2] = 0;
	f->ib_cpu[3] = (uint32_t)f->ib.va;
	f->ib_cpu[4] = (uint32_t)(f->ib.va >> 32);
	f->ib_cpu[5] = (uint32_t)(f->ib.va + KT_PAGE);
	f->ib_cpu[6] = (uint32_t)((f->ib.va + KT_PAGE) >> 32);
	f->ib_cpu[7] = 0;
	ctx.in.op = AMDGPU_CTX_OP_ALLOC_CTX;
	ret = kt_ioctl(f->rt.e.render[0], DRM_IOCTL_AMDGPU_CTX, &ctx);
	KT_CHECK(!ret, "CTX: %s", strerror(-ret));
	f->ctx = ctx.out.alloc.ctx_id;
	return 0;
}

/* Every op of fs_ops in one process (a child of the test). */
static int run_ioctls(void *arg, char *msg, size_t len)
{
	struct fs *f = arg;
	unsigned int i;

	if (fs_setup_faults(msg, len) || fs_open(f, msg, len))
		return -1;
	for (i = 0; i < FS_NOPS; i++)
		if (fs_sweep(f, &fs_ops[i], msg, len) < 0)
			return -1;
	fflush(stdout);
	return 0;
}

/* ---- RESTORE and RESUME ---- */

/* A checkpoint of a process set up by fs_open() (the caller's). */
static int fs_checkpoint(struct fs *f, char *msg, size_t len)
{
	int ret;

	ret = ckpt_prep(f);
	if (!ret)
		ret = ckpt_call(f);
	KT_CHECK(!ret, "checkpoint: %s", strerror(-ret));
	kc_close_dmabufs(f->img.bos, f->img.num_bos);
	ret = kc_unpause(f->rt.e.kfd);
	KT_CHECK(!ret, "UNPAUSE: %s", strerror(-ret));
	return 0;
}

/*
 * What a restored child reports: restored at try n, the fault unreached
 * ('R') or absorbed ('A'); or RESTORE failed at try n after it took effect
 * ('D', only allowed at the last point, the copy-out of the arguments).
 */
struct fs_rst {
	int kind;
	int n;
};

/*
 * In a fresh child of the checkpointed process (so the USERPTR memory is
 * in place): open /dev/kfd and the render nodes, RESTORE with fault N =
 * @from, @from + 1, ... until it succeeds (@from 0: no fault), report to
 * the parent through @sock and wait to be killed.
 */
static int fs_restore_child(struct fs *f, int from, int sock, char *msg,
			    size_t len)
{
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	struct kfd_criu_bo_bucket *bos;
	struct kt_props before, after;
	struct fs_rst res;
	char err[256];
	uint32_t i, j;
	int kfd, ret, n, left, fds;

	kfd = kt_open_kfd();
	KT_CHECK(kfd >= 0, "open /dev/kfd: %s", strerror(-kfd));
	for (i = 0; i < f->img.num_devices; i++) {
		dev[i] = f->img.devices[i];
		for (j = 0; j < (uint32_t)f->rt.e.ngpus; j++)
			if (f->rt.e.gpu[j].gpu_id == dev[i].actual_gpu_id)
				break;
		KT_CHECK(j < (uint32_t)f->rt.e.ngpus, "gpu %u not found",
			 dev[i].actual_gpu_id);
		ret = kt_open_render(f->rt.e.gpu[j].render_minor);
		KT_CHECK(ret >= 0, "render node: %s", strerror(-ret));
		dev[i].drm_fd = ret;
	}
	bos = calloc(f->img.num_bos + 1, sizeof(*bos));
	KT_CHECK(bos, "out of memory");
	if (from)
		KT_CHECK(!fs_nth_open(), "fail-nth: %s", strerror(errno));
	for (n = from; n < FS_MAX_N; n++) {
		KT_CHECK(!kt_counters(&before, err, sizeof(err)), "%s", err);
		fds = kc_count_fds();
		if (from)
			KT_CHECK(!fs_nth_arm(n), "fail-nth: %s",
				 strerror(errno));
		ret = kc_restore(kfd, &f->img, dev, bos);
		left = from ? fs_nth_done() : 1;
		KT_CHECK(left >= 0, "reading fail-nth: %s", strerror(-left));
		if (!ret)
			break;
		KT_CHECK(!left, "RESTORE failed (%s) without an injected fault",
			 strerror(-ret));
		KT_CHECK(ret == -ENOMEM || ret == -EFAULT,
			 "RESTORE: fault %d ended in %d (%s)", n, ret,
			 strerror(-ret));
		KT_CHECK(!kt_counters(&after, err, sizeof(err)), "%s", err);
		if (kt_counters_diff(&before, &after, err, sizeof(err)) ||
		    kc_count_fds() != fds) {
			KT_CHECK(ret == -EFAULT,
				 "RESTORE: fault %d (%s) left %s, %d fds", n,
				 strerror(-ret), err, kc_count_fds() - fds);
			left = -1;
			break;
		}
	}
	KT_CHECK(n < FS_MAX_N, "RESTORE still fails after %d faults", n);
	kc_close_dmabufs(bos, f->img.num_bos);
	free(bos);
	res = (struct fs_rst){ left < 0 ? 'D' : left ? 'R' : 'A', n };
	KT_CHECK(write(sock, &res, sizeof(res)) == sizeof(res), "write: %s",
		 strerror(errno));
	pause();
	return 0;
}

/* Fork a restored child (see fs_restore_child); wait for its report. */
static int fs_restored(struct fs *f, int from, struct fs_rst *res,
		       char *msg, size_t len)
{
	int sv[2];

	KT_CHECK(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
		 "socketpair: %s", strerror(errno));
	fflush(stdout);
	f->child = fork();
	KT_CHECK(f->child >= 0, "fork: %s", strerror(errno));
	if (!f->child) {
		close(sv[0]);
		if (fs_restore_child(f, from, sv[1], msg, len))
			fprintf(stderr, "# restored child: %s\n", msg);
		_exit(1);
	}
	close(sv[1]);
	f->sock = sv[0];
	if (read(f->sock, res, sizeof(*res)) != sizeof(*res)) {
		waitpid(f->child, NULL, 0);
		close(f->sock);
		KT_CHECK(0, "the restored child failed (see its output)");
	}
	return 0;
}

static void fs_reap(struct fs *f)
{
	kill(f->child, SIGKILL);
	waitpid(f->child, NULL, 0);
	close(f->sock);
}

/*
 * RESTORE swept in restored children (a new one after each fault the
 * kernel absorbed, since a restored process cannot restore again); then,
 * for N = 1, 2, ..., a freshly restored child whose RESUME fails at its
 * Nth fault (a failed RESUME leaves the process waiting for RESUME, and
 * its exit frees everything: fs_run() checks).
 */
static int run_criu(void *arg, char *msg, size_t len)
{
	struct fs *f = arg;
	struct fs_rst res = { 'A', 0 };
	int kfd, n, ret, left, absorbed = 0, dirty = 0;

	if (fs_setup_faults(msg, len) || fs_open(f, msg, len) ||
	    fs_checkpoint(f, msg, len))
		return -1;
	for (;;) {
		if (fs_restored(f, res.n + 1, &res, msg, len))
			return -1;
		fs_reap(f);
		if (res.kind == 'R')
			break;
		if (res.kind == 'D')
			dirty++;
		else
			absorbed++;
	}
	KT_CHECK(res.n > 1, "RESTORE reached no fault point");
	printf("# RESTORE: %d fault points, %d faults absorbed, %d failed copy-outs after the call took effect\n",
	       res.n - 1, absorbed, dirty);
	fflush(stdout);

	kfd = kt_open_kfd();
	KT_CHECK(kfd >= 0, "open /dev/kfd: %s", strerror(-kfd));
	KT_CHECK(!fs_nth_open(), "fail-nth: %s", strerror(errno));
	for (absorbed = 0, n = 1; n < FS_MAX_N; n++) {
		if (fs_restored(f, 0, &res, msg, len))
			return -1;
		KT_CHECK(!fs_nth_arm(n), "fail-nth: %s", strerror(errno));
		ret = kc_resume(kfd, f->child);
		left = fs_nth_done();
		fs_reap(f);
		KT_CHECK(left >= 0, "reading fail-nth: %s", strerror(-left));
		if (!ret && left)
			break;
		if (!ret) {
			absorbed++;
			continue;
		}
		KT_CHECK(!left, "RESUME failed (%s) without an injected fault",
			 strerror(-ret));
		KT_CHECK(ret == -ENOMEM || ret == -EFAULT,
			 "RESUME: fault %d ended in %d (%s)", n, ret,
			 strerror(-ret));
	}
	close(kfd);
	KT_CHECK(n < FS_MAX_N, "RESUME still fails after %d faults", n);
	KT_CHECK(n > 1, "RESUME reached no fault point");
	printf("# RESUME: %d fault points, %d faults absorbed\n", n - 1,
	       absorbed);
	fflush(stdout);
	return 0;
}

/* ---- the tests ---- */

static void fs_run(struct __test_metadata *_metadata, kt_child_fn fn)
{
	struct kt_props base, end;
	struct fs *f;
	char msg[4096], err[256];

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, kt_counters(&base, err, sizeof(err))) TH_LOG("%s", err);
	f = calloc(1, sizeof(*f));
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, kt_run_child(fn, f, msg, sizeof(msg))) TH_LOG("%s", msg);
	free(f);
	/* What the processes left (a last-point copy-out) died with them. */
	ASSERT_EQ(0, kt_counters(&end, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, kt_counters_diff(&base, &end, err, sizeof(err)))
		TH_LOG("after the processes exited: %s", err);
}

FIXTURE(failslab) {
	int unused;
};

FIXTURE_SETUP(failslab)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(failslab)
{
}

TEST_F_TIMEOUT(failslab, ioctls_fail_cleanly_at_every_fault, 3000)
{
	fs_run(_metadata, run_ioctls);
}

TEST_F_TIMEOUT(failslab, restore_and_resume_fail_cleanly_at_every_fault,
	       3000)
{
	fs_run(_metadata, run_criu);
}

TEST_HARNESS_MAIN
