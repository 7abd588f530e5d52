// SPDX-License-Identifier: GPL-2.0
/*
 * gpu_app: a sample GPU application for the CRIU end-to-end tests.
 *
 * It talks to /dev/kfd directly, the way ROCm's thunk does, with no
 * library in between. On every GPU it uses it:
 *
 *   - allocates VRAM, GTT and USERPTR buffer objects, maps them on the GPU
 *     and, VRAM and GTT, on the CPU through the render node at the same
 *     address as on the GPU (ROCm's convention, which AMD's CRIU plugin
 *     relies on to find a BO's mapping at restore);
 *   - allocates a DOORBELL BO per GPU and maps the doorbell slice from
 *     /dev/kfd at its address, as ROCm's thunk does on dGPUs;
 *   - creates an AQL queue (ring in GTT, read/write pointers in USERPTR
 *     memory) and an SDMA queue (ring in USERPTR memory, pointers in GTT);
 *   - uploads its input with SDMA (GTT -> VRAM), runs the loop kernel on it
 *     in VRAM for a long time (several dispatches of --steps steps), then
 *     runs the checksum kernel and downloads the result with SDMA
 *     (VRAM -> GTT and VRAM -> USERPTR);
 *   - waits by polling completion signals and SDMA fences in GPU-visible
 *     memory, sleeping in between;
 *   - checks the VRAM array, both downloads and the GPU's checksum against
 *     a CPU reference computed at the end;
 *   - with --odd-bos, also holds VRAM BOs of odd sizes (see odd_sizes[]),
 *     filled with a pattern at the start and compared word for word at the
 *     end, so a checkpointer that loses or shifts any part of them fails
 *     the run.
 *
 * With --spread, two more AQL queues per GPU run the same loop dispatches
 * on an array in a GTT BO and on one in USERPTR memory. The GPU's command
 * processor serves its queues round-robin in slices of milliseconds, so
 * it keeps writing all three kinds of memory while it is checkpointed;
 * those two arrays are checked against the same reference once the loops
 * ended. A checkpoint whose memory image is newer or older than its saved
 * queue state (a dispatch stopped at one step, its array already some
 * steps further) makes the restored run end with a wrong array.
 *
 * It then prints "RESULT OK <checksum>" (the checksum depends only on the
 * options, never on gpu_ids) or "RESULT FAIL <why>" and exits 0 or 1.
 * A checkpoint may be taken at any moment; the interesting one is while
 * the loop kernels run (see --ready). With --go PATH it waits, once the
 * loop kernels are done, until PATH exists before it runs the checksum
 * kernel and the downloads and verifies (the end-to-end tests release it
 * so once their dumps are done).
 *
 * Benchmark mode (--hold): allocate the given amount of VRAM, fill it with
 * a pattern, signal --ready, wait until the --go file exists, verify the
 * pattern and exit. With --written PCT only about PCT percent of its
 * 64 KiB blocks are written (a fixed pseudo-random choice), the rest stays
 * as allocated (zero: kfdsim clears new VRAM, and a restore must give
 * zeros back). Each SIGUSR1 then rewrites about --rewrite PCT percent of
 * the blocks (another choice and pattern per phase) and creates the file
 * --ready PATH with ".N" appended once phase N is written. The
 * verification expects every block as the last phase that wrote it left
 * it (zero if none did); the RESULT value is the bytes verified plus the
 * phases applied times 2^48.
 *
 * Run it with stdin from /dev/null and stdout to a file, in its own session
 * (setsid), so CRIU can dump it with --shell-job.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>
#include <linux/kfdsim.h>

#include "app_util.h"

#define TOPOLOGY	"/sys/class/kfd/kfd/topology/nodes"
#define MAX_GPUS	8
#define PAGE		4096ULL
#define MIB		(1ULL << 20)
#define DOORBELL_SLICE	8192ULL

/* GPU VAs of the non-USERPTR BOs, clear of where mmap puts CPU memory. */
#define VA_BASE		0x200000000000ULL
#define VA_ALIGN	(2 * MIB)

#define RING_SIZE	4096u
#define AQL_SLOTS	(RING_SIZE / KFDSIM_AQL_PACKET_SIZE)
#define WG_SIZE		256u

/* Layout of the ctl BO (GTT). */
#define CTL_SDMA_RPTR	0
#define CTL_SDMA_WPTR	8
#define CTL_LOOP_SIG	64
#define CTL_SUM_SIG	128
#define CTL_FENCE	192
#define CTL_SUM		256
#define CTL_SIZE	PAGE

/* Layout of the code BO (VRAM, read-only for the GPU). */
#define CODE_LOOP_DESC	0
#define CODE_SUM_DESC	16
#define CODE_LOOP_ARGS	64
#define CODE_SUM_ARGS	128
#define CODE_LOOP_GTT_ARGS	192	/* --spread */
#define CODE_LOOP_USER_ARGS	256	/* --spread */
#define CODE_SIZE	PAGE

/* Layout of the USERPTR BO: AQL pointers, SDMA ring, download target. */
#define USER_AQL_RPTR(q)	(16 * (q))	/* of AQL queue q */
#define USER_AQL_WPTR(q)	(16 * (q) + 8)
#define USER_SDMA_RING	PAGE
#define USER_RESULT	(2 * PAGE)
#define USER_LOOP	(USER_RESULT + o.size)	/* --spread */

/*
 * --odd-bos: sizes that are no multiple of each other nor of 2 MiB (the
 * chunk AMD's CRIU plugin copies BO contents in), from one page up.
 */
static const uint64_t odd_sizes[] = {
	PAGE, 3 * PAGE, 2 * MIB + PAGE, 3 * MIB - PAGE,
};

#define N_ODD	(sizeof(odd_sizes) / sizeof(odd_sizes[0]))

/* SDMA fence values. */
#define FENCE_UPLOADED		1
#define FENCE_DOWNLOADED	2

struct bo {
	uint64_t handle;
	uint64_t va;
	uint64_t size;
	uint64_t offset;	/* render-node mmap offset */
	void *cpu;
};

/* AQL queues per GPU: 0 for the VRAM array, 1 GTT and 2 USERPTR (--spread). */
#define MAX_AQL		3

struct aql_queue {
	struct bo ring;		/* GTT */
	uint32_t id;
	volatile uint64_t *db;
	uint64_t w;		/* next packet index */
};

struct gpu {
	int index;		/* 0..ngpus-1: what the results depend on */
	uint32_t id;
	int minor;
	int drm;
	volatile uint64_t *doorbells;
	struct bo doorbell;	/* DOORBELL: the slice, mapped at its VA */

	struct bo code;		/* VRAM: kernel descriptors and arguments */
	struct bo data;		/* VRAM: the array the kernels work on */
	struct bo stage;	/* GTT: input, later the downloaded result */
	struct bo ctl;		/* GTT: signals, SDMA pointers, fence, sum */
	struct bo user;		/* USERPTR: see USER_* */
	struct bo gtt_loop;	/* GTT: the --spread loop array */
	struct bo odd[N_ODD];	/* VRAM, --odd-bos only */

	struct aql_queue aql[MAX_AQL];
	uint32_t sdma_id;
	volatile uint64_t *sdma_db;
	uint64_t sdma_w;	/* next SDMA byte offset */
};

struct opts {
	uint64_t steps;
	uint64_t dispatches;
	uint64_t size;
	uint64_t ngpus;		/* 0: all */
	uint64_t seed;
	uint64_t poll_ms;
	uint64_t timeout_s;	/* 0: none */
	uint64_t hold;		/* benchmark mode: bytes of VRAM */
	uint64_t bo_size;
	uint64_t written;	/* hold: percent of the blocks written */
	uint64_t rewrite;	/* hold: percent rewritten per SIGUSR1 */
	const char *ready;
	const char *go;
	const char *pid_file;
	bool fork;
	bool expected;
	bool spread;
	bool odd_bos;
};

static struct opts o = {
	.steps = 2500,
	.dispatches = 4,
	.size = MIB,
	.seed = 1,
	.poll_ms = 50,
	.bo_size = 64 * MIB,
	.written = 100,
	.rewrite = 5,
};

static int kfd = -1;
static struct gpu gpus[MAX_GPUS];
static int ngpus;
static uint64_t next_va = VA_BASE;
static uint64_t deadline_ms;

/* ---- small helpers ---- */

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

static uint64_t round_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static void check_deadline(const char *what)
{
	if (deadline_ms && app_now_ms() > deadline_ms)
		app_fail("timeout waiting for %s", what);
}

static int read_text(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* ---- GPU discovery ---- */

static int count_nodes(void)
{
	struct dirent *d;
	DIR *dir;
	int n = 0;

	dir = opendir(TOPOLOGY);
	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		if (d->d_name[0] >= '0' && d->d_name[0] <= '9')
			n++;
	closedir(dir);
	return n;
}

/* GPUs in topology order, as the thunk sees them. */
static int discover(void)
{
	char path[256], buf[4096], *p;
	int nodes, node, ret, n = 0;
	unsigned long id;

	nodes = count_nodes();
	if (nodes < 0)
		app_fail("no KFD topology at %s: %s", TOPOLOGY,
			 strerror(-nodes));
	for (node = 0; node < nodes && n < MAX_GPUS; node++) {
		/*
		 * A GPU the device cgroup hides (a container's) answers
		 * EPERM; the thunk skips it, and so do we.
		 */
		snprintf(path, sizeof(path), "%s/%d/gpu_id", TOPOLOGY, node);
		ret = read_text(path, buf, sizeof(buf));
		if (ret == -EPERM)
			continue;
		if (ret)
			app_fail("cannot read %s", path);
		id = strtoul(buf, NULL, 10);
		if (!id)
			continue;
		snprintf(path, sizeof(path), "%s/%d/properties", TOPOLOGY,
			 node);
		ret = read_text(path, buf, sizeof(buf));
		if (ret == -EPERM)
			continue;
		if (ret)
			app_fail("cannot read %s", path);
		p = strstr(buf, "drm_render_minor ");
		if (!p)
			app_fail("%s has no drm_render_minor", path);
		gpus[n].index = n;
		gpus[n].id = (uint32_t)id;
		gpus[n].minor = atoi(p + strlen("drm_render_minor "));
		gpus[n].drm = -1;
		n++;
	}
	return n;
}

static void open_gpus(int want)
{
	struct kfd_ioctl_get_version_args ver = { 0 };
	char path[64];
	int i, found, ret;

	found = discover();
	if (found < want)
		app_fail("%d GPU(s) wanted, %d found", want, found);
	ngpus = want;

	kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	if (kfd < 0)
		app_fail("open /dev/kfd: %s", strerror(errno));
	ret = xioctl(kfd, AMDKFD_IOC_GET_VERSION, &ver);
	if (ret)
		app_fail("GET_VERSION: %s", strerror(-ret));

	for (i = 0; i < ngpus; i++) {
		struct kfd_ioctl_acquire_vm_args acq = { 0 };
		struct gpu *g = &gpus[i];

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", g->minor);
		g->drm = open(path, O_RDWR | O_CLOEXEC);
		if (g->drm < 0)
			app_fail("open %s: %s", path, strerror(errno));
		acq.drm_fd = (uint32_t)g->drm;
		acq.gpu_id = g->id;
		ret = xioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &acq);
		if (ret)
			app_fail("ACQUIRE_VM gpu %u: %s", g->id, strerror(-ret));
	}
	app_log("KFD %u.%u, %d GPU(s) used of %d:", ver.major_version,
		ver.minor_version, ngpus, found);
	for (i = 0; i < ngpus; i++)
		app_log("  gpu %d: gpu_id %u, renderD%d", i, gpus[i].id,
			gpus[i].minor);
}

/* ---- buffer objects ---- */

static const char *kind(uint32_t flags)
{
	if (flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
		return "VRAM";
	if (flags & KFD_IOC_ALLOC_MEM_FLAGS_GTT)
		return "GTT";
	if (flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL)
		return "DOORBELL";
	return "USERPTR";
}

/* CPU-map @bo from @fd at its GPU VA; NULL (errno set) if that fails. */
static void *map_at(const struct bo *bo, int fd)
{
	void *want = (void *)(uintptr_t)bo->va, *p;

	p = mmap(want, bo->size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, (off_t)bo->offset);
	if (p == MAP_FAILED)
		return NULL;
	if (p != want) {	/* a kernel without MAP_FIXED_NOREPLACE */
		munmap(p, bo->size);
		errno = EEXIST;
		return NULL;
	}
	return p;
}

/*
 * Allocate @size bytes of @flags memory on @g, GPU-map it there and, unless
 * it is USERPTR memory (@user: the CPU memory behind it), CPU-map it.
 */
static void bo_new(struct gpu *g, struct bo *bo, uint64_t size,
		   uint32_t flags, void *user)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args a = { 0 };
	struct kfd_ioctl_map_memory_to_gpu_args m = { 0 };
	int ret;

	bo->size = round_up(size, PAGE);
	if (user) {
		/* As ROCm does: the GPU VA of user memory is its CPU VA. */
		bo->va = (uintptr_t)user;
		a.mmap_offset = (uintptr_t)user;
	} else {
		bo->va = next_va;
		next_va += round_up(bo->size, VA_ALIGN) + VA_ALIGN;
	}
	a.va_addr = bo->va;
	a.size = bo->size;
	a.gpu_id = g->id;
	a.flags = flags;
	ret = xioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a);
	if (ret)
		app_fail("alloc %llu bytes of %s on gpu %d: %s",
			 (unsigned long long)bo->size, kind(flags), g->index,
			 strerror(-ret));
	bo->handle = a.handle;
	bo->offset = a.mmap_offset;

	m.handle = bo->handle;
	m.device_ids_array_ptr = (uintptr_t)&g->id;
	m.n_devices = 1;
	ret = xioctl(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m);
	if (ret)
		app_fail("map %s BO on gpu %d: %s", kind(flags), g->index,
			 strerror(-ret));

	if (user) {
		bo->cpu = user;
		return;
	}
	bo->cpu = map_at(bo, flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL ? kfd :
			 g->drm);
	if (!bo->cpu)
		app_fail("mmap %s BO of gpu %d at %#llx: %s", kind(flags),
			 g->index, (unsigned long long)bo->va, strerror(errno));
}

static int bo_free(struct gpu *g, struct bo *bo, bool user)
{
	struct kfd_ioctl_unmap_memory_from_gpu_args u = { 0 };
	struct kfd_ioctl_free_memory_of_gpu_args f = { 0 };
	int ret;

	if (!bo->handle)
		return 0;
	if (!user)
		munmap(bo->cpu, bo->size);
	u.handle = bo->handle;
	u.device_ids_array_ptr = (uintptr_t)&g->id;
	u.n_devices = 1;
	ret = xioctl(kfd, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &u);
	f.handle = bo->handle;
	if (!ret)
		ret = xioctl(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f);
	bo->handle = 0;
	return ret;
}

static void *anon(uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		app_fail("mmap %llu anonymous bytes: %s",
			 (unsigned long long)size, strerror(errno));
	return p;
}

static void *at(struct bo *bo, uint64_t off)
{
	return (char *)bo->cpu + off;
}

/* ---- queues ---- */

static void queue_new(struct gpu *g, uint32_t type, uint64_t ring_va,
		      uint64_t rptr_va, uint64_t wptr_va, uint32_t *id,
		      volatile uint64_t **db)
{
	struct kfd_ioctl_create_queue_args a = { 0 };
	uint64_t slice;
	int ret;

	a.ring_base_address = ring_va;
	a.ring_size = RING_SIZE;
	a.read_pointer_address = rptr_va;
	a.write_pointer_address = wptr_va;
	a.gpu_id = g->id;
	a.queue_type = type;
	a.queue_percentage = 100;
	a.queue_priority = 7;
	ret = xioctl(kfd, AMDKFD_IOC_CREATE_QUEUE, &a);
	if (ret)
		app_fail("create %s queue on gpu %d: %s",
			 type == KFD_IOC_QUEUE_TYPE_SDMA ? "SDMA" : "AQL",
			 g->index, strerror(-ret));
	*id = a.queue_id;

	/*
	 * Both queues of a GPU share the process's doorbell slice, mapped
	 * through a DOORBELL BO whose mmap offset is the slice's.
	 */
	slice = a.doorbell_offset & ~(DOORBELL_SLICE - 1);
	if (!g->doorbells) {
		bo_new(g, &g->doorbell, DOORBELL_SLICE,
		       KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
		       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, NULL);
		if (g->doorbell.offset != slice)
			app_fail("gpu %d: DOORBELL BO offset %#llx, queue doorbell slice %#llx",
				 g->index, (unsigned long long)g->doorbell.offset,
				 (unsigned long long)slice);
		g->doorbells = g->doorbell.cpu;
	}
	*db = g->doorbells + (a.doorbell_offset & (DOORBELL_SLICE - 1)) / 8;
}

static int queue_destroy(uint32_t id)
{
	struct kfd_ioctl_destroy_queue_args a = { .queue_id = id };

	return xioctl(kfd, AMDKFD_IOC_DESTROY_QUEUE, &a);
}

static volatile uint64_t *u64_at(struct bo *bo, uint64_t off)
{
	return (volatile uint64_t *)at(bo, off);
}

/* AQL queues per GPU. */
static int aql_queues(void)
{
	return o.spread ? MAX_AQL : 1;
}

static void aql_submit(struct gpu *g, int q, struct kfdsim_aql_dispatch *pkt)
{
	struct aql_queue *a = &g->aql[q];
	volatile uint64_t *rptr = u64_at(&g->user, USER_AQL_RPTR(q));
	uint16_t header = KFDSIM_AQL_TYPE_KERNEL_DISPATCH |
		KFDSIM_AQL_FENCE_SCOPE_SYSTEM << KFDSIM_AQL_HEADER_ACQUIRE_SHIFT |
		KFDSIM_AQL_FENCE_SCOPE_SYSTEM << KFDSIM_AQL_HEADER_RELEASE_SHIFT;
	char *slot;

	while (a->w - __atomic_load_n(rptr, __ATOMIC_ACQUIRE) >= AQL_SLOTS) {
		check_deadline("room in the AQL ring");
		app_sleep_ms(o.poll_ms);
	}
	slot = at(&a->ring, (a->w % AQL_SLOTS) * KFDSIM_AQL_PACKET_SIZE);
	/* Body first, header last, as HSA requires. */
	memcpy(slot + 2, (char *)pkt + 2, sizeof(*pkt) - 2);
	__atomic_store_n((uint16_t *)slot, header, __ATOMIC_RELEASE);
	a->w++;
	__atomic_store_n(u64_at(&g->user, USER_AQL_WPTR(q)), a->w,
			 __ATOMIC_RELEASE);
	__atomic_store_n(a->db, a->w, __ATOMIC_RELEASE);
}

static void dispatch(struct gpu *g, int q, uint64_t desc_off,
		     uint64_t args_off, uint64_t sig_off)
{
	struct kfdsim_aql_dispatch pkt = {
		.setup = 1,
		.workgroup_size_x = WG_SIZE,
		.workgroup_size_y = 1,
		.workgroup_size_z = 1,
		.grid_size_x = (uint32_t)(o.size / 4),
		.grid_size_y = 1,
		.grid_size_z = 1,
		.kernel_object = g->code.va + desc_off,
		.kernarg_address = g->code.va + args_off,
		.completion_signal = g->ctl.va + sig_off,
	};

	aql_submit(g, q, &pkt);
}

static void sdma_room(struct gpu *g, uint32_t bytes)
{
	volatile uint64_t *rptr = u64_at(&g->ctl, CTL_SDMA_RPTR);

	while (g->sdma_w + bytes - __atomic_load_n(rptr, __ATOMIC_ACQUIRE) >
	       RING_SIZE) {
		check_deadline("room in the SDMA ring");
		app_sleep_ms(o.poll_ms);
	}
}

/* Append one packet; a packet never straddles the end of the ring. */
static void sdma_emit(struct gpu *g, const uint32_t *dw, uint32_t n)
{
	uint32_t *ring = at(&g->user, USER_SDMA_RING);
	uint32_t left = RING_SIZE - (uint32_t)(g->sdma_w % RING_SIZE);
	uint32_t i;

	if (left < n * 4) {
		sdma_room(g, left);
		for (i = 0; i < left / 4; i++) {
			ring[(g->sdma_w % RING_SIZE) / 4] =
				KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_NOP, 0);
			g->sdma_w += 4;
		}
	}
	sdma_room(g, n * 4);
	for (i = 0; i < n; i++) {
		ring[(g->sdma_w % RING_SIZE) / 4] = dw[i];
		g->sdma_w += 4;
	}
}

static void sdma_commit(struct gpu *g)
{
	__atomic_store_n(u64_at(&g->ctl, CTL_SDMA_WPTR), g->sdma_w,
			 __ATOMIC_RELEASE);
	__atomic_store_n(g->sdma_db, g->sdma_w, __ATOMIC_RELEASE);
}

static void sdma_copy(struct gpu *g, uint64_t dst, uint64_t src,
		      uint64_t bytes)
{
	uint32_t dw[KFDSIM_SDMA_COPY_DWORDS];
	uint64_t n;

	while (bytes) {
		n = bytes < KFDSIM_SDMA_COPY_MAX_BYTES ? bytes :
			KFDSIM_SDMA_COPY_MAX_BYTES;
		dw[0] = KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_COPY,
					   KFDSIM_SDMA_SUBOP_COPY_LINEAR);
		dw[1] = (uint32_t)(n - 1);
		dw[2] = 0;
		dw[3] = (uint32_t)src;
		dw[4] = (uint32_t)(src >> 32);
		dw[5] = (uint32_t)dst;
		dw[6] = (uint32_t)(dst >> 32);
		sdma_emit(g, dw, KFDSIM_SDMA_COPY_DWORDS);
		src += n;
		dst += n;
		bytes -= n;
	}
}

static void sdma_fence(struct gpu *g, uint32_t value)
{
	uint64_t addr = g->ctl.va + CTL_FENCE;
	uint32_t dw[KFDSIM_SDMA_FENCE_DWORDS] = {
		KFDSIM_SDMA_HEADER(KFDSIM_SDMA_OP_FENCE, 0),
		(uint32_t)addr, (uint32_t)(addr >> 32), value,
	};

	sdma_emit(g, dw, KFDSIM_SDMA_FENCE_DWORDS);
	sdma_commit(g);
}

/* ---- the computation ---- */

static struct kfdsim_signal *signal_at(struct gpu *g, uint64_t off)
{
	return at(&g->ctl, off);
}

static int64_t signal_load(struct gpu *g, uint64_t off)
{
	return __atomic_load_n(&signal_at(g, off)->value, __ATOMIC_ACQUIRE);
}

static uint32_t fence_load(struct gpu *g)
{
	return __atomic_load_n((uint32_t *)at(&g->ctl, CTL_FENCE),
			       __ATOMIC_ACQUIRE);
}

/* The pattern of odd BO @k of @g: distinct for every GPU and BO. */
static uint64_t odd_seed(const struct gpu *g, unsigned int k)
{
	return o.seed << 16 | (uint64_t)g->index << 8 | k;
}

static void odd_fill(struct gpu *g)
{
	unsigned int k;
	uint64_t i;

	for (k = 0; k < N_ODD; k++) {
		uint64_t *w;

		bo_new(g, &g->odd[k], odd_sizes[k], KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
		       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, NULL);
		w = g->odd[k].cpu;
		for (i = 0; i < odd_sizes[k] / 8; i++)
			w[i] = app_hold_word(odd_seed(g, k), i * 8);
	}
}

/* Every word of every odd BO is still what odd_fill() wrote. */
static void odd_verify(struct gpu *g)
{
	unsigned int k;
	uint64_t i, want;

	for (k = 0; k < N_ODD; k++) {
		const uint64_t *w = g->odd[k].cpu;

		for (i = 0; i < odd_sizes[k] / 8; i++) {
			want = app_hold_word(odd_seed(g, k), i * 8);
			if (w[i] != want)
				app_fail("gpu %d: odd BO %u (%llu bytes): word at %llu is %#llx, expected %#llx",
					 g->index, k,
					 (unsigned long long)odd_sizes[k],
					 (unsigned long long)i * 8,
					 (unsigned long long)w[i],
					 (unsigned long long)want);
		}
	}
}

static void setup_gpu(struct gpu *g)
{
	struct kfdsim_kernel_descriptor *d;
	struct kfdsim_args_checksum *sa;
	struct kfdsim_args_loop *la;
	uint32_t *in;
	uint64_t i;
	int q;

	bo_new(g, &g->code, CODE_SIZE, KFD_IOC_ALLOC_MEM_FLAGS_VRAM, NULL);
	bo_new(g, &g->data, o.size, KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
	       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, NULL);
	bo_new(g, &g->stage, o.size, KFD_IOC_ALLOC_MEM_FLAGS_GTT |
	       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, NULL);
	bo_new(g, &g->ctl, CTL_SIZE, KFD_IOC_ALLOC_MEM_FLAGS_GTT |
	       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, NULL);
	for (q = 0; q < aql_queues(); q++)
		bo_new(g, &g->aql[q].ring, RING_SIZE,
		       KFD_IOC_ALLOC_MEM_FLAGS_GTT |
		       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, NULL);
	bo_new(g, &g->user, USER_RESULT + o.size * (o.spread ? 2 : 1),
	       KFD_IOC_ALLOC_MEM_FLAGS_USERPTR |
	       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
	       anon(USER_RESULT + o.size * (o.spread ? 2 : 1)));
	if (o.spread)
		bo_new(g, &g->gtt_loop, o.size, KFD_IOC_ALLOC_MEM_FLAGS_GTT |
		       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, NULL);

	if (o.odd_bos)
		odd_fill(g);

	/* Kernel descriptors and arguments, written through the VRAM map. */
	d = at(&g->code, CODE_LOOP_DESC);
	*d = (struct kfdsim_kernel_descriptor){
		.magic = KFDSIM_KERNEL_MAGIC,
		.version = KFDSIM_KERNEL_VERSION,
		.opcode = KFDSIM_KERNEL_LOOP,
	};
	d = at(&g->code, CODE_SUM_DESC);
	*d = (struct kfdsim_kernel_descriptor){
		.magic = KFDSIM_KERNEL_MAGIC,
		.version = KFDSIM_KERNEL_VERSION,
		.opcode = KFDSIM_KERNEL_CHECKSUM,
	};
	la = at(&g->code, CODE_LOOP_ARGS);
	*la = (struct kfdsim_args_loop){
		.buf = g->data.va,
		.steps = (uint32_t)o.steps,
	};
	sa = at(&g->code, CODE_SUM_ARGS);
	*sa = (struct kfdsim_args_checksum){
		.src = g->data.va,
		.result = g->ctl.va + CTL_SUM,
	};
	if (o.spread) {
		la = at(&g->code, CODE_LOOP_GTT_ARGS);
		*la = (struct kfdsim_args_loop){
			.buf = g->gtt_loop.va,
			.steps = (uint32_t)o.steps,
		};
		la = at(&g->code, CODE_LOOP_USER_ARGS);
		*la = (struct kfdsim_args_loop){
			.buf = g->user.va + USER_LOOP,
			.steps = (uint32_t)o.steps,
		};
	}

	for (q = 0; q < aql_queues(); q++) {
		struct aql_queue *a = &g->aql[q];

		/* Every AQL slot starts INVALID: not yet published. */
		for (i = 0; i < AQL_SLOTS; i++)
			*(uint16_t *)at(&a->ring, i * KFDSIM_AQL_PACKET_SIZE) =
				KFDSIM_AQL_TYPE_INVALID;
		queue_new(g, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, a->ring.va,
			  g->user.va + USER_AQL_RPTR(q),
			  g->user.va + USER_AQL_WPTR(q), &a->id, &a->db);
	}
	queue_new(g, KFD_IOC_QUEUE_TYPE_SDMA, g->user.va + USER_SDMA_RING,
		  g->ctl.va + CTL_SDMA_RPTR, g->ctl.va + CTL_SDMA_WPTR,
		  &g->sdma_id, &g->sdma_db);

	/* The input goes to GTT; SDMA uploads it to VRAM. */
	in = g->stage.cpu;
	for (i = 0; i < o.size / 4; i++)
		in[i] = app_initial(o.seed, g->index, i);
	if (o.spread) {
		memcpy(g->gtt_loop.cpu, in, o.size);
		memcpy(at(&g->user, USER_LOOP), in, o.size);
	}
	sdma_copy(g, g->data.va, g->stage.va, o.size);
	sdma_fence(g, FENCE_UPLOADED);
}

static void wait_fences(uint32_t value, const char *what)
{
	int i;

	for (i = 0; i < ngpus; i++) {
		while (fence_load(&gpus[i]) != value) {
			check_deadline(what);
			app_sleep_ms(o.poll_ms);
		}
	}
}

static bool loops_done(void)
{
	bool done = true;
	int i;

	for (i = 0; i < ngpus; i++)
		if (signal_load(&gpus[i], CTL_LOOP_SIG) != 0)
			done = false;
	return done;
}

/* Loop dispatches per GPU: o.dispatches on every AQL queue. */
static uint64_t loop_dispatches(void)
{
	return o.dispatches * (uint64_t)aql_queues();
}

static void start_loops(void)
{
	static const uint64_t args[MAX_AQL] = {
		CODE_LOOP_ARGS, CODE_LOOP_GTT_ARGS, CODE_LOOP_USER_ARGS,
	};
	uint64_t k;
	int i, q;

	for (i = 0; i < ngpus; i++) {
		struct gpu *g = &gpus[i];

		signal_at(g, CTL_LOOP_SIG)->value = (int64_t)loop_dispatches();
		for (k = 0; k < o.dispatches; k++)
			for (q = 0; q < aql_queues(); q++)
				dispatch(g, q, CODE_LOOP_DESC, args[q],
					 CTL_LOOP_SIG);
	}
}

static void report_progress(void)
{
	char line[256];
	size_t off = 0;
	int i;

	for (i = 0; i < ngpus; i++)
		off += snprintf(line + off, sizeof(line) - off,
				" gpu%d %lld/%llu", i,
				(long long)(loop_dispatches() -
					    signal_load(&gpus[i], CTL_LOOP_SIG)),
				(unsigned long long)loop_dispatches());
	app_log("loop dispatches done:%s", line);
}

static void wait_loops(void)
{
	uint64_t next = app_now_ms() + 5000;

	while (!loops_done()) {
		check_deadline("the loop kernels");
		app_sleep_ms(o.poll_ms);
		if (app_now_ms() >= next) {
			report_progress();
			next = app_now_ms() + 5000;
		}
	}
}

/* Checksum kernel and downloads, submitted only after the loops ended. */
static void finish_gpus(void)
{
	int i;

	for (i = 0; i < ngpus; i++) {
		struct gpu *g = &gpus[i];

		*(volatile uint64_t *)at(&g->ctl, CTL_SUM) = 0;
		signal_at(g, CTL_SUM_SIG)->value = 1;
		dispatch(g, 0, CODE_SUM_DESC, CODE_SUM_ARGS, CTL_SUM_SIG);
		sdma_copy(g, g->stage.va, g->data.va, o.size);
		sdma_copy(g, g->user.va + USER_RESULT, g->data.va, o.size);
		sdma_fence(g, FENCE_DOWNLOADED);
	}
	for (i = 0; i < ngpus; i++)
		while (signal_load(&gpus[i], CTL_SUM_SIG) != 0) {
			check_deadline("the checksum kernels");
			app_sleep_ms(o.poll_ms);
		}
	wait_fences(FENCE_DOWNLOADED, "the downloads");
}

/* The affine map of the whole run: o.dispatches times o.steps steps. */
static void run_affine(uint32_t *a, uint32_t *b)
{
	uint32_t sa, sb;
	uint64_t k;

	app_loop_affine((uint32_t)o.steps, &sa, &sb);
	*a = 1;
	*b = 0;
	for (k = 0; k < o.dispatches; k++)
		app_affine_then(a, b, sa, sb);
}

/* The checksum of GPU index @index's final array, computed on the CPU. */
static uint64_t reference_sum(int index)
{
	uint64_t i, sum = 0;
	uint32_t a, b;

	run_affine(&a, &b);
	for (i = 0; i < o.size / 4; i++)
		sum = app_checksum_add(sum, a * app_initial(o.seed, index, i) + b,
				       i);
	return sum;
}

/* --spread: the GTT and USERPTR loop arrays, before anything else runs. */
static void verify_spread(struct gpu *g)
{
	const uint32_t *gtt = g->gtt_loop.cpu, *user = at(&g->user, USER_LOOP);
	uint32_t a, b, want;
	uint64_t i;

	run_affine(&a, &b);
	for (i = 0; i < o.size / 4; i++) {
		want = a * app_initial(o.seed, g->index, i) + b;
		if (gtt[i] != want)
			app_fail("gpu %d: GTT loop array[%llu] = %#x, expected %#x",
				 g->index, (unsigned long long)i, gtt[i], want);
		if (user[i] != want)
			app_fail("gpu %d: USERPTR loop array[%llu] = %#x, expected %#x",
				 g->index, (unsigned long long)i, user[i],
				 want);
	}
}

/* Check one GPU's results; returns its checksum. */
static uint64_t verify_gpu(struct gpu *g)
{
	const uint32_t *vram = g->data.cpu, *gtt = g->stage.cpu;
	const uint32_t *user = at(&g->user, USER_RESULT);
	uint64_t i, sum = 0, gpu_sum;
	uint32_t a, b, want;

	run_affine(&a, &b);
	for (i = 0; i < o.size / 4; i++) {
		want = a * app_initial(o.seed, g->index, i) + b;
		if (vram[i] != want)
			app_fail("gpu %d: VRAM[%llu] = %#x, expected %#x",
				 g->index, (unsigned long long)i, vram[i],
				 want);
		if (gtt[i] != want)
			app_fail("gpu %d: GTT copy[%llu] = %#x, expected %#x",
				 g->index, (unsigned long long)i, gtt[i],
				 want);
		if (user[i] != want)
			app_fail("gpu %d: USERPTR copy[%llu] = %#x, expected %#x",
				 g->index, (unsigned long long)i, user[i],
				 want);
		sum = app_checksum_add(sum, want, i);
	}
	if (o.odd_bos)
		odd_verify(g);
	gpu_sum = *(volatile uint64_t *)at(&g->ctl, CTL_SUM);
	if (gpu_sum != sum)
		app_fail("gpu %d: checksum kernel gave %#llx, expected %#llx",
			 g->index, (unsigned long long)gpu_sum,
			 (unsigned long long)sum);
	return sum;
}

static void teardown(void)
{
	unsigned int k;
	int i, q, ret;

	for (i = 0; i < ngpus; i++) {
		struct gpu *g = &gpus[i];

		ret = queue_destroy(g->sdma_id);
		for (q = 0; q < aql_queues() && !ret; q++)
			ret = queue_destroy(g->aql[q].id);
		if (ret)
			app_fail("gpu %d: DESTROY_QUEUE: %s", i, strerror(-ret));
		ret = bo_free(g, &g->doorbell, false);
		if (!ret)
			ret = bo_free(g, &g->code, false);
		if (!ret)
			ret = bo_free(g, &g->data, false);
		if (!ret)
			ret = bo_free(g, &g->stage, false);
		if (!ret)
			ret = bo_free(g, &g->ctl, false);
		for (q = 0; q < aql_queues() && !ret; q++)
			ret = bo_free(g, &g->aql[q].ring, false);
		if (!ret)
			ret = bo_free(g, &g->user, true);
		if (!ret)
			ret = bo_free(g, &g->gtt_loop, false);
		for (k = 0; k < N_ODD && !ret; k++)
			ret = bo_free(g, &g->odd[k], false);
		if (ret)
			app_fail("gpu %d: freeing BOs: %s", i, strerror(-ret));
		close(g->drm);
	}
	close(kfd);
}

/* Wait for the --ready marker of the child (see run_fork()). */
static void wait_child_ready(const char *path, pid_t child)
{
	int status;

	while (!app_exists(path)) {
		check_deadline("the child's ready marker");
		if (waitpid(child, &status, WNOHANG) == child)
			app_fail("the child process ended before it got ready (status %#x)",
				 status);
		app_sleep_ms(o.poll_ms);
	}
}

static uint64_t compute(const char *child_ready, pid_t child)
{
	uint64_t total = APP_FOLD_INIT, t;
	int i;

	for (i = 0; i < ngpus; i++)
		setup_gpu(&gpus[i]);
	t = app_now_ms();
	wait_fences(FENCE_UPLOADED, "the uploads");
	app_log("uploaded %llu bytes per GPU with SDMA in %llu ms",
		(unsigned long long)o.size,
		(unsigned long long)(app_now_ms() - t));

	start_loops();
	app_log("loop kernels submitted: %llu x %llu steps over %llu elements per GPU",
		(unsigned long long)o.dispatches, (unsigned long long)o.steps,
		(unsigned long long)(o.size / 4));
	app_sleep_ms(o.poll_ms);
	if (loops_done())
		app_log("warning: the loop kernels finished before the ready marker");
	if (child_ready)
		wait_child_ready(child_ready, child);
	if (o.ready) {
		app_write_marker(o.ready);
		app_log("kernels running, ready marker %s written", o.ready);
	}

	t = app_now_ms();
	wait_loops();
	app_log("loop done in %llu ms", (unsigned long long)(app_now_ms() - t));
	/*
	 * Stay alive until released (--go), with the queues and BOs still
	 * there: a test dumps as many times as it wants and releases the
	 * process afterwards, so no dump finds it gone. The checksum kernel
	 * and the downloads still run after the release, on restored queues.
	 */
	while (o.go && !app_exists(o.go))
		app_sleep_ms(o.poll_ms);
	if (o.spread) {
		for (i = 0; i < ngpus; i++)
			verify_spread(&gpus[i]);
		app_log("GTT and USERPTR loop arrays verified");
	}
	finish_gpus();
	app_log("checksum kernels and downloads done");

	for (i = 0; i < ngpus; i++)
		total = app_fold(total, verify_gpu(&gpus[i]));
	teardown();
	app_log("results verified against the CPU reference");
	return total;
}

/* ---- benchmark mode ---- */

#define HOLD_BLOCK	(64 * 1024ULL)
/* HOLD_BLOCK, or the BO size when BOs are smaller (the per-BO bench). */
static uint64_t hold_block = HOLD_BLOCK;

static volatile sig_atomic_t hold_requests;

static void hold_sigusr1(int sig)
{
	(void)sig;
	hold_requests++;
}

/* Does phase @k write block @b (a fixed pseudo-random choice)? */
static bool hold_writes(uint64_t b, uint64_t k)
{
	uint64_t pct = k ? o.rewrite : o.written;
	uint64_t h = (b + 1) * 0x9e3779b97f4a7c15ULL ^ (k + 1) * 0xbf58476d1ce4e5b9ULL;

	if (pct >= 100)
		return true;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 29;
	return h % 100 < pct;
}

/* The word at @off (of all BOs) once phases 0..@phases were written. */
static uint64_t hold_expect(uint64_t off, uint64_t phases)
{
	uint64_t k;

	for (k = phases + 1; k-- > 0;)
		if (hold_writes(off / hold_block, k))
			return app_hold_word(o.seed + k * 7919, off);
	return 0;
}

/* Write phase @k into the BOs; returns the bytes written. */
static uint64_t hold_phase(struct bo *bos, int nbos, uint64_t k)
{
	uint64_t off = 0, written = 0, i, j;
	int n;

	for (n = 0; n < nbos; n++) {
		uint64_t *w = bos[n].cpu;

		/* BO sizes are multiples of the block (see hold()). */
		for (i = 0; i < bos[n].size; i += hold_block, off += hold_block) {
			if (!hold_writes(off / hold_block, k))
				continue;
			for (j = 0; j < hold_block; j += 8)
				w[(i + j) / 8] = app_hold_word(o.seed + k * 7919,
							       off + j);
			written += hold_block;
		}
	}
	return written;
}

static void hold(void)
{
	uint64_t per_gpu, bo_size, nbos_max;
	uint64_t off = 0, i, n, left, t, checked = 0, phases = 0, w;
	struct bo *bos;
	char marker[4096];
	int g, nbos = 0, k;

	/* Blocks never straddle BOs: BO sizes are multiples of a block. */
	if (o.bo_size < HOLD_BLOCK)
		hold_block = o.bo_size;
	per_gpu = round_up(o.hold / (uint64_t)ngpus, hold_block);
	bo_size = round_up(o.bo_size, hold_block);
	nbos_max = (per_gpu + bo_size - 1) / bo_size;

	if (signal(SIGUSR1, hold_sigusr1) == SIG_ERR)
		app_fail("signal: %s", strerror(errno));
	bos = calloc(nbos_max * ngpus, sizeof(*bos));
	if (!bos)
		app_fail("out of memory");
	t = app_now_ms();
	for (g = 0; g < ngpus; g++) {
		for (left = per_gpu; left; left -= n) {
			n = left < bo_size ? left : bo_size;
			bo_new(&gpus[g], &bos[nbos], n,
			       KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
			       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, NULL);
			off += n;
			nbos++;
		}
	}
	w = hold_phase(bos, nbos, 0);
	app_log("holding %llu bytes in %d VRAM BOs on %d GPU(s), %llu written in %llu ms",
		(unsigned long long)off, nbos, ngpus, (unsigned long long)w,
		(unsigned long long)(app_now_ms() - t));
	if (o.ready)
		app_write_marker(o.ready);
	while (o.go && !app_exists(o.go)) {
		while (phases < (uint64_t)hold_requests) {
			phases++;
			w = hold_phase(bos, nbos, phases);
			app_log("phase %llu: rewrote %llu bytes",
				(unsigned long long)phases,
				(unsigned long long)w);
			if (o.ready) {
				snprintf(marker, sizeof(marker), "%s.%llu",
					 o.ready, (unsigned long long)phases);
				app_write_marker(marker);
			}
		}
		app_sleep_ms(o.poll_ms);
	}

	t = app_now_ms();
	off = 0;
	for (k = 0; k < nbos; k++) {
		const uint64_t *wp = bos[k].cpu;

		for (i = 0; i < bos[k].size / 8; i++, off += 8) {
			if (wp[i] != hold_expect(off, phases))
				app_fail("VRAM word at %llu is %#llx, expected %#llx (%llu phases)",
					 (unsigned long long)off,
					 (unsigned long long)wp[i],
					 (unsigned long long)hold_expect(off, phases),
					 (unsigned long long)phases);
		}
		checked += bos[k].size;
	}
	app_log("verified %llu bytes in %llu ms", (unsigned long long)checked,
		(unsigned long long)(app_now_ms() - t));
	printf("RESULT OK %016llx\n",
	       (unsigned long long)(checked + (phases << 48)));
	fflush(stdout);
	free(bos);
}

/* ---- main ---- */

static void usage(void)
{
	fprintf(stderr,
"Usage: gpu_app [OPTIONS]\n"
"  -s, --steps N        loop kernel steps per dispatch (default 2500)\n"
"  -k, --dispatches N   loop dispatches per GPU, at most 60 (default 4)\n"
"  -n, --size BYTES     array per GPU, k/M/G suffixes (default 1M)\n"
"  -g, --gpus N         GPUs to use (default: all)\n"
"      --seed N         input data seed (default 1)\n"
"  -r, --ready PATH     create PATH once the loop kernels run\n"
"  -p, --pid-file PATH  write the pid to PATH at start\n"
"      --spread         also run the loop kernel on an array in GTT and\n"
"                       one in USERPTR memory, each on an AQL queue of\n"
"                       its own\n"
"      --odd-bos        also hold VRAM BOs of odd sizes and check every\n"
"                       word of them at the end\n"
"      --fork           also run a child process with its own /dev/kfd\n"
"                       (seed + 1; its result line is \"child RESULT ...\")\n"
"      --expected       print the RESULT line(s) a run would print, using\n"
"                       the CPU only, and exit\n"
"      --poll-ms MS     sleep between polls (default 50)\n"
"      --timeout SEC    give up after SEC seconds (default: never)\n"
"      --hold BYTES     benchmark: hold BYTES of VRAM, spread over the GPUs\n"
"      --bo-size BYTES  benchmark: largest BO (default 64M)\n"
"      --written PCT    benchmark: write about PCT%% of the 64 KiB blocks\n"
"                       (default 100)\n"
"      --rewrite PCT    benchmark: rewrite about PCT%% of them at each\n"
"                       SIGUSR1 (default 5)\n"
"      --go PATH        wait for PATH to exist before the checksum\n"
"                       kernel and the verification (benchmark: before\n"
"                       verifying)\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "steps", required_argument, NULL, 's' },
		{ "dispatches", required_argument, NULL, 'k' },
		{ "size", required_argument, NULL, 'n' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 'S' },
		{ "ready", required_argument, NULL, 'r' },
		{ "pid-file", required_argument, NULL, 'p' },
		{ "fork", no_argument, NULL, 'F' },
		{ "spread", no_argument, NULL, 'A' },
		{ "odd-bos", no_argument, NULL, 'O' },
		{ "expected", no_argument, NULL, 'E' },
		{ "poll-ms", required_argument, NULL, 'P' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "hold", required_argument, NULL, 'H' },
		{ "bo-size", required_argument, NULL, 'B' },
		{ "written", required_argument, NULL, 'W' },
		{ "rewrite", required_argument, NULL, 'R' },
		{ "go", required_argument, NULL, 'G' },
		{ NULL, 0, NULL, 0 },
	};
	bool ok = true;
	int c;

	while ((c = getopt_long(argc, argv, "s:k:n:g:r:p:", lo, NULL)) != -1) {
		switch (c) {
		case 's': ok = app_parse_u64(optarg, &o.steps); break;
		case 'k': ok = app_parse_u64(optarg, &o.dispatches); break;
		case 'n': ok = app_parse_size(optarg, &o.size); break;
		case 'g': ok = app_parse_u64(optarg, &o.ngpus); break;
		case 'S': ok = app_parse_u64(optarg, &o.seed); break;
		case 'r': o.ready = optarg; break;
		case 'p': o.pid_file = optarg; break;
		case 'F': o.fork = true; break;
		case 'A': o.spread = true; break;
		case 'O': o.odd_bos = true; break;
		case 'E': o.expected = true; break;
		case 'P': ok = app_parse_u64(optarg, &o.poll_ms); break;
		case 'T': ok = app_parse_u64(optarg, &o.timeout_s); break;
		case 'H': ok = app_parse_size(optarg, &o.hold); break;
		case 'B': ok = app_parse_size(optarg, &o.bo_size); break;
		case 'W': ok = app_parse_u64(optarg, &o.written); break;
		case 'R': ok = app_parse_u64(optarg, &o.rewrite); break;
		case 'G': o.go = optarg; break;
		default: usage();
		}
		if (!ok) {
			fprintf(stderr, "gpu_app: bad value '%s'\n", optarg);
			usage();
		}
	}
	if (optind != argc || o.steps > UINT32_MAX || !o.dispatches ||
	    o.dispatches > AQL_SLOTS - 4 || !o.size || o.size % PAGE ||
	    o.size / 4 > UINT32_MAX || o.ngpus > MAX_GPUS ||
	    o.poll_ms > 10000 || !o.bo_size || o.bo_size % PAGE) {
		fprintf(stderr, "gpu_app: bad options (sizes are multiples of 4 KiB)\n");
		usage();
	}
}

/* The RESULT line(s) of a run with these options. */
static void print_expected(int n)
{
	uint64_t total;
	int g, pass;

	for (pass = o.fork ? 0 : 1; pass < 2; pass++) {
		uint64_t seed = o.seed;

		if (!pass)
			o.seed = seed + 1;
		total = APP_FOLD_INIT;
		for (g = 0; g < n; g++)
			total = app_fold(total, reference_sum(g));
		printf("%sRESULT OK %016llx\n", pass ? "" : "child ",
		       (unsigned long long)total);
		o.seed = seed;
	}
}

static void write_pid_file(void)
{
	FILE *f = fopen(o.pid_file, "we");

	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
		app_fail("cannot write %s", o.pid_file);
}

/* Returns the child's pid in the parent, 0 in the child. */
static pid_t run_fork(char **child_ready)
{
	pid_t pid;

	*child_ready = NULL;
	if (o.ready && asprintf(child_ready, "%s.child", o.ready) < 0)
		app_fail("out of memory");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		app_fail("fork: %s", strerror(errno));
	if (pid)
		return pid;
	app_name = "child";
	app_result_prefix = "child ";
	o.seed++;
	o.ready = *child_ready;
	*child_ready = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	char *child_ready = NULL;
	pid_t child = 0;
	uint64_t total;
	int want, status;

	app_name = "gpu_app";
	parse(argc, argv);
	if (o.expected) {
		want = o.ngpus ? (int)o.ngpus : discover();
		if (want <= 0)
			app_fail("no GPU");
		print_expected(want);
		return 0;
	}
	app_log("pid %d", (int)getpid());
	if (o.pid_file)
		write_pid_file();
	if (o.timeout_s)
		deadline_ms = app_now_ms() + o.timeout_s * 1000;

	if (o.fork && !o.hold) {
		child = run_fork(&child_ready);
		if (!child)
			app_log("pid %d, child of %d", (int)getpid(),
				(int)getppid());
	}

	want = o.ngpus ? (int)o.ngpus : discover();
	if (want <= 0)
		app_fail("no GPU");
	open_gpus(want);
	if (o.hold) {
		hold();
		return 0;
	}
	total = compute(child_ready, child);
	if (child) {
		if (waitpid(child, &status, 0) != child)
			app_fail("waitpid: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			app_fail("the child process failed (status %#x)",
				 status);
		app_log("the child process succeeded");
	}
	printf("%sRESULT OK %016llx\n", app_result_prefix,
	       (unsigned long long)total);
	fflush(stdout);
	free(child_ready);
	return 0;
}
