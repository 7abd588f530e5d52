// SPDX-License-Identifier: GPL-2.0
/*
 * Checkpoint: DUMP_EXT_FILE for /dev/kfd files and KFD render nodes.
 *
 * CRIU hands us, in its own process, a copy of each of the target's file
 * descriptors it cannot dump itself. For a /dev/kfd file we pause the
 * target's queues (PROCESS_INFO), take the checkpoint (CHECKPOINT: device
 * and BO lists, the kernel's private data and a dma-buf fd per VRAM/GTT
 * BO) and save the BO contents while the queues are paused, so they match
 * the queue state in the private data.
 *
 * The queues stay paused after that: CRIU dumps a task's files before its
 * memory, and memory the GPU writes (USERPTR buffers, signals, ring
 * pointers in ordinary memory) must not get ahead of the saved queue
 * state. UNPAUSE comes once CRIU has dumped every task's files and memory
 * (kp_dump_release(): DUMP_DEVICES_LATE on criu-dev, else the plugin's
 * exit), or on any failure. Meanwhile the plugin holds a dup of CRIU's
 * copy of the file: the kernel resumes a paused process when its pauser
 * closes its last descriptor of it, which must not happen when CRIU
 * closes its copy after DUMP_EXT_FILE (and does happen if CRIU dies).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bo_copy.h"
#include "chain.h"
#include "criu_compat.h"
#include "hsakmt_shm.h"
#include "images.h"
#include "kfd_dev.h"
#include "plugin.h"
#include "util.h"

/* /dev/kfd files dumped so far in this run, to spot a second fd of one process. */
struct kp_dumped {
	uint32_t pid;
	uint32_t id;
};

/* A process kept paused until kp_dump_release(), through our own fd. */
struct kp_held {
	uint32_t pid;
	int fd;			/* dup of CRIU's copy of its /dev/kfd file */
	uint64_t paused_ms;	/* kp_now_ms() at PROCESS_INFO */
};

/* CLOCK_MONOTONIC in milliseconds, for the pause times in the log. */
static uint64_t kp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct {
	bool version_ok;
	bool in_inventory;
	uint32_t kfd_major, kfd_minor;
	uint64_t dump_id;
	struct kp_dumped *dumped;
	unsigned int ndumped;
	struct kp_held *held;
	unsigned int nheld;
} kp_dump;

void kp_dump_release(const char *why)
{
	struct kfd_ioctl_criu_args args = { .op = KFD_CRIU_OP_UNPAUSE };
	unsigned int i;
	int ret;

	for (i = 0; i < kp_dump.nheld; i++) {
		ret = kp_ioctl(kp_dump.held[i].fd, AMDKFD_IOC_CRIU_OP, &args);
		if (ret)
			kp_warn("UNPAUSE of pid %u failed: %s",
				kp_dump.held[i].pid, strerror(-ret));
		else
			kp_info("GPU queues of pid %u run again: %s",
				kp_dump.held[i].pid, why);
		kp_info("pid %u: the GPU was paused for %" PRIu64 " ms",
			kp_dump.held[i].pid,
			kp_now_ms() - kp_dump.held[i].paused_ms);
		close(kp_dump.held[i].fd);
	}
	free(kp_dump.held);
	kp_dump.held = NULL;
	kp_dump.nheld = 0;
}

static bool kp_dump_is_held(uint32_t pid)
{
	unsigned int i;

	for (i = 0; i < kp_dump.nheld; i++)
		if (kp_dump.held[i].pid == pid)
			return true;
	return false;
}

void kp_dump_reset(void)
{
	kp_dump_release("the plugin is unloaded");
	free(kp_dump.dumped);
	memset(&kp_dump, 0, sizeof(kp_dump));
}

/*
 * criu >= 4.1: record in the inventory that the images need this plugin,
 * so that a restore without it fails at once (kp_init() claims it).
 */
static void kp_dump_note_inventory(void)
{
	if (kp_dump.in_inventory || !kp_criu.add_inventory_plugin)
		return;
	if (kp_criu.add_inventory_plugin(CR_PLUGIN_DESC.name))
		kp_warn("cannot add %s to the inventory's plugin list",
			CR_PLUGIN_DESC.name);
	else
		kp_dump.in_inventory = true;
}

/* GET_VERSION needs a /dev/kfd of our own: the target's is not ours. */
static int kp_dump_check_version(void)
{
	int kfd, ret;

	if (kp_dump.version_ok)
		return 0;
	kfd = kp_kfd_open();
	if (kfd < 0)
		return kfd;
	ret = kp_kfd_check_version(kfd, &kp_dump.kfd_major,
				   &kp_dump.kfd_minor);
	close(kfd);
	kp_dump.version_ok = !ret;
	return ret;
}

static int kp_write_header_image(const char *name, const KfdHeader *h)
{
	int fd, ret;

	fd = kp_img_create(name);
	if (fd < 0)
		return fd;
	ret = kp_record_write_msg(fd, &h->base);
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		kp_err("cannot write image %s: %s", name, strerror(-ret));
	return ret;
}

/* A number that tells this dump's images from older ones in the directory. */
static uint64_t kp_dump_id(void)
{
	struct timespec ts;

	while (!kp_dump.dump_id) {
		if (getrandom(&kp_dump.dump_id, sizeof(kp_dump.dump_id), 0) !=
		    sizeof(kp_dump.dump_id)) {
			clock_gettime(CLOCK_REALTIME, &ts);
			kp_dump.dump_id = ((uint64_t)ts.tv_sec << 32) ^
					  (uint64_t)ts.tv_nsec ^ (uint64_t)getpid();
		}
	}
	return kp_dump.dump_id;
}

static void kp_header_init(KfdHeader *h, uint32_t kind)
{
	kfd_header__init(h);
	h->version = KP_IMAGE_VERSION;
	h->kind = kind;
	h->has_dump_id = true;
	h->dump_id = kp_dump_id();
	h->has_kfd_major = h->has_kfd_minor = true;
	h->kfd_major = kp_dump.kfd_major;
	h->kfd_minor = kp_dump.kfd_minor;
}

static int kp_dump_render(int id, const struct kp_gpu *g)
{
	struct kp_gpu_msg gm;
	KfdGpu *gpus[1] = { &gm.msg };
	char name[KP_NAME_LEN];
	KfdHeader h;
	int ret;

	ret = kp_dump_check_version();
	if (ret)
		return ret;
	kp_gpu_msg_init(&gm, g);
	kp_header_init(&h, KFD_IMAGE_KIND__KFD_IMAGE_RENDER);
	h.n_gpus = 1;
	h.gpus = gpus;
	h.has_render_gpu_id = true;
	h.render_gpu_id = g->gpu_id;
	kp_name_render(name, id);
	ret = kp_write_header_image(name, &h);
	if (!ret) {
		kp_dump_note_inventory();
		kp_info("dumped render node renderD%u (GPU %u) as %s",
			g->render_minor, g->gpu_id, name);
	}
	return ret;
}

/* ---- /dev/kfd ---- */

/* Everything one /dev/kfd checkpoint holds. */
struct kp_ckpt {
	int fd;				/* the target's file (CRIU's copy) */
	uint32_t id;
	struct kfd_ioctl_criu_args args;
	struct kfd_criu_device_bucket *devices;
	struct kfd_criu_bo_bucket *bos;
	uint8_t *priv;
	const struct kp_gpu **gpus;	/* per device bucket */
	uint64_t *checksums;		/* per BO */
	bool *contents;			/* per BO: got a dma-buf fd */
	/* Chunks (image version 2) */
	uint32_t chunk;			/* bytes per chunk */
	enum kp_sum_kind sum_kind;	/* of the chunk checksums */
	uint64_t *cstart;		/* per BO: its first chunk below */
	uint8_t *kinds;			/* KfdChunk, per chunk of every BO */
	uint64_t *sums;			/* per chunk of every BO */
	uint64_t *stored;		/* per BO: bytes in the pages image */
	uint32_t *base_bo;		/* per BO: its index in base */
	bool *has_base;			/* per BO: base_bo is set */
	uint32_t *lane;			/* per BO: its pages image (lane) */
	struct kp_base base;		/* the parent image compared with */
	bool have_fds;			/* CHECKPOINT installed dmabuf fds */
	bool paused;
	uint64_t paused_ms;		/* kp_now_ms() at PROCESS_INFO */
};

static int kp_criu_op(struct kp_ckpt *c, uint32_t op)
{
	c->args.op = op;
	return kp_ioctl(c->fd, AMDKFD_IOC_CRIU_OP, &c->args);
}

static void kp_unpause(struct kp_ckpt *c)
{
	struct kfd_ioctl_criu_args args = { .op = KFD_CRIU_OP_UNPAUSE };
	int ret;

	if (!c->paused)
		return;
	c->paused = false;
	ret = kp_ioctl(c->fd, AMDKFD_IOC_CRIU_OP, &args);
	if (ret)
		kp_warn("UNPAUSE of pid %u failed: %s", c->args.pid,
			strerror(-ret));
}

/*
 * Keep @c's process paused until kp_dump_release(), through a dup of the
 * file (see the top of this file). Without one, unpause now.
 */
static void kp_hold(struct kp_ckpt *c)
{
	struct kp_held *h;
	int fd;

	fd = fcntl(c->fd, F_DUPFD_CLOEXEC, 0);
	h = fd < 0 ? NULL : realloc(kp_dump.held,
				    (kp_dump.nheld + 1) * sizeof(*h));
	if (!h) {
		kp_warn("cannot keep pid %u paused until the dump ends (%s): its GPU runs again now",
			c->args.pid, fd < 0 ? strerror(errno) : "out of memory");
		if (fd >= 0)
			close(fd);
		kp_unpause(c);
		return;
	}
	h[kp_dump.nheld].pid = c->args.pid;
	h[kp_dump.nheld].fd = fd;
	h[kp_dump.nheld].paused_ms = c->paused_ms;
	kp_dump.held = h;
	kp_dump.nheld++;
	c->paused = false;
}

static void kp_close_dmabufs(struct kp_ckpt *c)
{
	uint32_t i;

	if (!c->have_fds)
		return;
	c->have_fds = false;
	for (i = 0; i < c->args.num_bos; i++) {
		if (c->bos[i].dmabuf_fd != KFD_INVALID_FD) {
			close((int)c->bos[i].dmabuf_fd);
			c->bos[i].dmabuf_fd = KFD_INVALID_FD;
		}
	}
}

static void kp_ckpt_free(struct kp_ckpt *c)
{
	kp_close_dmabufs(c);
	kp_unpause(c);
	free(c->devices);
	free(c->bos);
	free(c->priv);
	free(c->gpus);
	free(c->checksums);
	free(c->contents);
	free(c->cstart);
	free(c->kinds);
	free(c->sums);
	free(c->stored);
	free(c->base_bo);
	free(c->has_base);
	free(c->lane);
	kp_base_free(&c->base);
}

/*
 * The chunk maps, and the parent image whose chunk checksums tell which
 * chunks did not change (CRIU's "parent" link, --prev-images-dir).
 */
static int kp_ckpt_chunks(struct kp_ckpt *c)
{
	uint32_t nb = c->args.num_bos, i;
	uint64_t total = 0;

	c->chunk = kp_config.chunk_size ? kp_config.chunk_size : KP_CHUNK_SIZE;
	c->cstart = calloc(nb + 1, sizeof(*c->cstart));
	c->stored = calloc(nb + 1, sizeof(*c->stored));
	c->base_bo = calloc(nb + 1, sizeof(*c->base_bo));
	c->has_base = calloc(nb + 1, sizeof(*c->has_base));
	c->lane = calloc(nb + 1, sizeof(*c->lane));
	if (!c->cstart || !c->stored || !c->base_bo || !c->has_base ||
	    !c->lane)
		return -ENOMEM;
	for (i = 0; i < nb; i++) {
		c->cstart[i] = total;
		if (c->contents[i])
			total += kp_nchunks(c->bos[i].size, c->chunk);
	}
	c->kinds = calloc(total + 1, sizeof(*c->kinds));
	c->sums = calloc(total + 1, sizeof(*c->sums));
	if (!c->kinds || !c->sums)
		return -ENOMEM;
	kp_base_find(c->args.pid, c->chunk, &c->base);
	/* A chain keeps one sum function: the parent's, else the fast one. */
	c->sum_kind = c->base.p ? kp_process_sum_kind(c->base.p) : KP_SUM_XXH64;
	if (c->base.p)
		kp_info("pid %u: comparing with parent image %s (dump %016" PRIx64 ", chunk sums %s): unchanged chunks refer to it",
			c->args.pid, c->base.where, c->base.dump_id,
			kp_sum_kind_name(c->sum_kind));
	return 0;
}

static int kp_device_index(const struct kp_ckpt *c, uint32_t user_gpu_id)
{
	uint32_t i;

	for (i = 0; i < c->args.num_devices; i++)
		if (c->devices[i].user_gpu_id == user_gpu_id)
			return (int)i;
	return -1;
}

/* Map the devices to topology nodes and sanity-check the BO list. */
static int kp_ckpt_check(struct kp_ckpt *c)
{
	const struct kp_topology *t = kp_local_topology();
	uint32_t i;

	if (!t)
		return -ENODEV;
	for (i = 0; i < c->args.num_devices; i++) {
		c->gpus[i] = kp_topology_by_id(t, c->devices[i].actual_gpu_id);
		if (!c->gpus[i]) {
			kp_err("CHECKPOINT named GPU %u, which is not in the topology",
			       c->devices[i].actual_gpu_id);
			return -ENODEV;
		}
	}
	for (i = 0; i < c->args.num_bos; i++) {
		if (kp_device_index(c, c->bos[i].gpu_id) < 0) {
			kp_err("CHECKPOINT: BO 0x%" PRIx64 " is on gpu_id %u, which is not among the devices",
			       (uint64_t)c->bos[i].addr, c->bos[i].gpu_id);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Spread the BOs with contents of device @d over up to @lanes pages
 * images: each BO, in order, to the lane with the fewest bytes so far, so
 * that the lanes' writers finish together. Sets c->lane[]; returns the
 * lanes used (at least 1).
 */
static unsigned int kp_ckpt_lanes(struct kp_ckpt *c, uint32_t d,
				  unsigned int lanes)
{
	uint64_t bytes[KP_MAX_LANES] = { 0 };
	unsigned int l, best, used = 1;
	uint32_t i;

	for (i = 0; i < c->args.num_bos; i++) {
		if (c->bos[i].gpu_id != c->devices[d].user_gpu_id ||
		    !c->contents[i])
			continue;
		for (best = 0, l = 1; l < lanes; l++)
			if (bytes[l] < bytes[best])
				best = l;
		c->lane[i] = best;
		bytes[best] += c->bos[i].size;
		used = KP_MAX(used, best + 1);
	}
	return used;
}

/* Save the contents: one copy job (thread) per pages image. */
static int kp_ckpt_contents(struct kp_ckpt *c)
{
	uint32_t nd = c->args.num_devices, nb = c->args.num_bos, d, i;
	unsigned int lanes = kp_lanes_from_env(nd), used, l, njobs = 0;
	struct kp_copy_bo *cbos = NULL;
	struct kp_copy_job *jobs;
	uint32_t *bo_of = NULL;		/* per cbos entry: its BO */
	unsigned int k = 0;
	int ret;

	jobs = calloc(nd ? nd * lanes : 1, sizeof(*jobs));
	cbos = calloc(nb ? nb : 1, sizeof(*cbos));
	bo_of = calloc(nb ? nb : 1, sizeof(*bo_of));
	if (!jobs || !cbos || !bo_of) {
		ret = -ENOMEM;
		goto out;
	}
	for (d = 0; d < nd; d++) {
		used = kp_ckpt_lanes(c, d, lanes);
		for (l = 0; l < used; l++) {
			struct kp_copy_job *j = &jobs[njobs++];

			j->dir = KP_COPY_SAVE;
			j->gpu_id = c->devices[d].user_gpu_id;
			j->lane = l;
			j->mode = kp_config.copy_mode;
			j->render_minor = c->gpus[d]->render_minor;
			j->chunk = c->chunk;
			j->sum_kind = c->sum_kind;
			j->cpu_scan = kp_config.scan_mode == KP_SCAN_CPU;
			j->gpu_scan = kp_config.scan_mode == KP_SCAN_GPU;
			kp_name_pages(j->image, c->id, j->gpu_id, l);
			j->bos = &cbos[k];
			for (i = 0; i < nb; i++) {
				if (c->bos[i].gpu_id != j->gpu_id ||
				    !c->contents[i] || c->lane[i] != l)
					continue;
				bo_of[k] = i;
				cbos[k].addr = c->bos[i].addr;
				cbos[k].size = c->bos[i].size;
				cbos[k].dmabuf_fd = (int)c->bos[i].dmabuf_fd;
				cbos[k].kinds = &c->kinds[c->cstart[i]];
				cbos[k].sums = &c->sums[c->cstart[i]];
				cbos[k].base = kp_base_sums(&c->base,
							    c->bos[i].addr,
							    c->bos[i].size,
							    c->bos[i].gpu_id,
							    c->bos[i].alloc_flags,
							    &c->base_bo[i]);
				c->has_base[i] = cbos[k].base;
				k++;
				j->nbos++;
			}
		}
	}
	if (lanes > 1)
		kp_info("pid %u: %u BOs with contents in %u pages images (up to %u per GPU)",
			c->args.pid, k, njobs, lanes);
	ret = kp_copy_run(jobs, njobs, kp_config.max_buffer);
	if (ret)
		goto out;

	/* Hand the checksums back to their BOs. */
	for (i = 0; i < k; i++) {
		c->stored[bo_of[i]] = cbos[i].stored;
		c->checksums[bo_of[i]] = cbos[i].checksum;
	}
out:
	free(jobs);
	free(cbos);
	free(bo_of);
	return ret;
}

static int kp_ckpt_write(struct kp_ckpt *c, uint32_t pid)
{
	uint32_t nd = c->args.num_devices, nb = c->args.num_bos, i;
	struct kp_gpu_msg *gm = NULL;
	KfdGpu **gpus = NULL;
	KfdDevice *devs = NULL, **pdevs = NULL;
	KfdBo *bos = NULL, **pbos = NULL;
	char name[KP_NAME_LEN];
	bool parent = false;
	void *shm = NULL;
	KfdProcess p;
	KfdHeader h;
	size_t n;
	int fd, ret = -ENOMEM;

	gm = calloc(nd ? nd : 1, sizeof(*gm));
	gpus = calloc(nd ? nd : 1, sizeof(*gpus));
	devs = calloc(nd ? nd : 1, sizeof(*devs));
	pdevs = calloc(nd ? nd : 1, sizeof(*pdevs));
	bos = calloc(nb ? nb : 1, sizeof(*bos));
	pbos = calloc(nb ? nb : 1, sizeof(*pbos));
	if (!gm || !gpus || !devs || !pdevs || !bos || !pbos)
		goto out;

	kp_header_init(&h, KFD_IMAGE_KIND__KFD_IMAGE_PROCESS);
	h.has_pid = true;
	h.pid = pid;
	kfd_process__init(&p);
	p.num_devices = nd;
	p.num_bos = nb;
	p.num_objects = c->args.num_objects;
	for (i = 0; i < nd; i++) {
		kp_gpu_msg_init(&gm[i], c->gpus[i]);
		gpus[i] = &gm[i].msg;
		kfd_device__init(&devs[i]);
		devs[i].user_gpu_id = c->devices[i].user_gpu_id;
		devs[i].gpu_id = c->devices[i].actual_gpu_id;
		pdevs[i] = &devs[i];
	}
	h.n_gpus = nd;
	h.gpus = gpus;
	p.n_devices = nd;
	p.devices = pdevs;
	for (i = 0; i < nb; i++) {
		kfd_bo__init(&bos[i]);
		bos[i].addr = c->bos[i].addr;
		bos[i].size = c->bos[i].size;
		bos[i].offset = c->bos[i].offset;
		bos[i].gpu_id = c->bos[i].gpu_id;
		bos[i].alloc_flags = c->bos[i].alloc_flags;
		bos[i].has_contents = c->contents[i];
		bos[i].has_checksum = bos[i].has_contents;
		bos[i].checksum = c->checksums[i];
		if (c->contents[i]) {
			n = kp_nchunks(c->bos[i].size, c->chunk);
			bos[i].has_chunks = true;
			bos[i].chunks.len = n;
			bos[i].chunks.data = &c->kinds[c->cstart[i]];
			bos[i].n_chunk_sums = n;
			bos[i].chunk_sums = &c->sums[c->cstart[i]];
			bos[i].has_parent_bo = c->has_base[i] &&
				memchr(bos[i].chunks.data,
				       KFD_CHUNK__KFD_CHUNK_PARENT, n);
			bos[i].parent_bo = c->base_bo[i];
			parent |= bos[i].has_parent_bo;
			bos[i].has_lane = c->lane[i] != 0;
			bos[i].lane = c->lane[i];
		}
		pbos[i] = &bos[i];
	}
	p.has_chunk_size = true;
	p.chunk_size = c->chunk;
	p.has_chunk_sum = true;
	p.chunk_sum = c->sum_kind;
	if (parent) {
		p.has_parent_dump_id = true;
		p.has_parent_image = true;
		p.has_parent_depth = true;
		p.parent_dump_id = c->base.dump_id;
		p.parent_image = c->base.id;
		p.parent_depth = c->base.depth;
	}
	p.n_bos = nb;
	p.bos = pbos;
	p.priv_data.len = c->args.priv_data_size;
	p.priv_data.data = c->priv;
	ret = kp_hsakmt_shm_save(&p, &shm, (pid_t)pid, c->fd);
	if (ret) {
		kp_err("cannot read libhsakmt's shared memory: %s",
		       strerror(-ret));
		goto out;
	}

	kp_name_kfd(name, c->id);
	fd = kp_img_create(name);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	ret = kp_record_write_msg(fd, &h.base);
	if (!ret)
		ret = kp_record_write_msg(fd, &p.base);
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		kp_err("cannot write image %s: %s", name, strerror(-ret));
out:
	free(shm);
	free(gm);
	free(gpus);
	free(devs);
	free(pdevs);
	free(bos);
	free(pbos);
	return ret;
}

/* A second /dev/kfd file of a process already dumped: just point at it. */
static int kp_dump_alias(uint32_t id, const struct kp_dumped *first)
{
	char name[KP_NAME_LEN];
	KfdHeader h;
	int ret;

	kp_header_init(&h, KFD_IMAGE_KIND__KFD_IMAGE_ALIAS);
	h.has_alias_of = true;
	h.alias_of = first->id;
	h.has_pid = true;
	h.pid = first->pid;
	kp_name_kfd(name, id);
	ret = kp_write_header_image(name, &h);
	if (!ret)
		kp_info("/dev/kfd file %u is another file of pid %u (image kfd-%u.img)",
			id, first->pid, first->id);
	return ret;
}

static int kp_remember(uint32_t pid, uint32_t id)
{
	struct kp_dumped *d;

	d = realloc(kp_dump.dumped, (kp_dump.ndumped + 1) * sizeof(*d));
	if (!d)
		return -ENOMEM;
	d[kp_dump.ndumped].pid = pid;
	d[kp_dump.ndumped].id = id;
	kp_dump.dumped = d;
	kp_dump.ndumped++;
	return 0;
}

static int kp_dump_kfd(int fd, uint32_t id)
{
	struct kp_ckpt c = { .fd = fd, .id = id };
	uint32_t nd, nb, i, pid;
	uint64_t bytes = 0, stored = 0;
	int ret;

	ret = kp_dump_check_version();
	if (ret)
		return ret;
	c.paused_ms = kp_now_ms();
	ret = kp_criu_op(&c, KFD_CRIU_OP_PROCESS_INFO);
	if (ret) {
		kp_err("PROCESS_INFO on /dev/kfd file %u failed: %s", id,
		       strerror(-ret));
		return ret;
	}
	pid = c.args.pid;
	/* A second file of a process this dump holds paused pauses nothing. */
	c.paused = !kp_dump_is_held(pid);

	for (i = 0; pid && i < kp_dump.ndumped; i++) {
		if (kp_dump.dumped[i].pid == pid) {
			kp_unpause(&c);
			return kp_dump_alias(id, &kp_dump.dumped[i]);
		}
	}

	nd = c.args.num_devices;
	nb = c.args.num_bos;
	c.devices = calloc(nd ? nd : 1, sizeof(*c.devices));
	c.bos = calloc(nb ? nb : 1, sizeof(*c.bos));
	c.priv = malloc(c.args.priv_data_size ? c.args.priv_data_size : 1);
	c.gpus = calloc(nd ? nd : 1, sizeof(*c.gpus));
	c.checksums = calloc(nb ? nb : 1, sizeof(*c.checksums));
	c.contents = calloc(nb ? nb : 1, sizeof(*c.contents));
	if (!c.devices || !c.bos || !c.priv || !c.gpus || !c.checksums ||
	    !c.contents) {
		ret = -ENOMEM;
		goto out;
	}
	c.args.devices = (uintptr_t)c.devices;
	c.args.bos = (uintptr_t)c.bos;
	c.args.priv_data = (uintptr_t)c.priv;
	ret = kp_criu_op(&c, KFD_CRIU_OP_CHECKPOINT);
	if (ret) {
		/* The kernel unpaused the target and installed no fd. */
		c.paused = false;
		kp_err("CHECKPOINT of pid %u failed: %s", pid, strerror(-ret));
		goto out;
	}

	c.have_fds = true;
	for (i = 0; i < nb; i++) {
		c.contents[i] = c.bos[i].dmabuf_fd != KFD_INVALID_FD;
		if (c.contents[i])
			bytes += c.bos[i].size;
	}
	ret = kp_ckpt_check(&c);
	if (!ret)
		ret = kp_ckpt_chunks(&c);
	if (!ret)
		ret = kp_ckpt_contents(&c);
	if (ret)
		goto out;
	kp_info("pid %u: BO contents saved %" PRIu64 " ms after the GPU was paused",
		pid, kp_now_ms() - c.paused_ms);
	kp_close_dmabufs(&c);
	/* The contents are saved; the GPU waits for the end of the dump. */
	kp_hold(&c);
	ret = kp_ckpt_write(&c, pid);
	if (!ret)
		ret = kp_remember(pid, id);
	if (!ret)
		kp_dump_note_inventory();
	for (i = 0; i < nb; i++)
		stored += c.stored[i];
	if (!ret)
		kp_info("dumped /dev/kfd file %u of pid %u: %u GPUs, %u BOs (%" PRIu64 " bytes of contents, %" PRIu64 " stored: %" PRIu64 ".%02" PRIu64 "%%), %u queues and events",
			id, pid, nd, nb, bytes, stored,
			bytes ? stored * 100 / bytes : 0,
			bytes ? stored * 10000 / bytes % 100 : 0,
			c.args.num_objects);
out:
	kp_ckpt_free(&c);
	return ret;
}

int kp_dump_file(int fd, int id)
{
	const struct kp_gpu *g;
	struct stat st;

	if (!kp_kfd_present() || fstat(fd, &st) || !S_ISCHR(st.st_mode))
		return -ENOTSUP;
	if (kp_is_kfd(&st))
		return kp_dump_kfd(fd, (uint32_t)id);
	g = kp_render_gpu(&st);
	if (g)
		return kp_dump_render((uint32_t)id, g);
	return -ENOTSUP;
}
