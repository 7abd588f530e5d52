// SPDX-License-Identifier: GPL-2.0
/*
 * Restore: RESTORE_EXT_FILE and UPDATE_VMA_MAP, both running inside the
 * restored process (CRIU forks it, then restores its files, then its
 * memory mappings), so the state below is per process.
 *
 * GPU matching: the checkpointed GPUs are all GPUs named by any kfd or
 * render image of the dump. Every restored process computes the same
 * assignment of local GPUs to them, so a process tree sees one consistent
 * mapping, whichever process restores what first.
 *
 * Render nodes: for each local GPU used, the process gets one render node
 * file, opened here and kept above every fd CRIU will restore. RESTORE
 * binds it (the GPU's VM), the process's own render node fds become dups
 * of it, and the BO mappings are made through it: the kernel lets only
 * the bound file map the BOs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "bo_copy.h"
#include "chain.h"
#include "criu_compat.h"
#include "hsakmt_shm.h"
#include "images.h"
#include "kfd_dev.h"
#include "plugin.h"
#include "restore_workers.h"
#include "util.h"

/* A BO mapping to move: render node offset at checkpoint -> now. */
struct kp_vma_entry {
	uint32_t minor;		/* render minor at checkpoint */
	uint64_t old_off;
	uint64_t size;
	uint64_t new_off;
	int local;		/* index of the local GPU */
};

/*
 * A /dev/kfd mapping to move: the offset of a doorbell or MMIO BO at
 * checkpoint -> the one RESTORE returned.
 */
struct kp_kfd_entry {
	uint64_t old_off;
	uint64_t size;
	uint64_t new_off;
};

static struct {
	pid_t pid;		/* the process this state belongs to */
	bool has_dump_id;	/* images of other dumps are ignored */
	uint64_t dump_id;
	bool mapped;
	unsigned int nckpt;
	struct kp_gpu *ckpt;	/* checkpointed GPUs, by gpu_id */
	int map[KP_MAX_GPUS];	/* ckpt index -> local index */
	int render_fd[KP_MAX_GPUS];	/* by local index, or -1 */
	bool render_fd_theirs[KP_MAX_GPUS];	/* the process's own fd */
	bool adopted;		/* kp_adopt_render_fds() ran */
	uint32_t *restored;	/* kfd image ids restored here */
	unsigned int nrestored;
	struct kp_vma_entry *vmas;
	size_t nvmas;
	bool sorted;
	struct kp_kfd_entry *kfd_vmas;
	size_t nkfd_vmas;
	/* devices restored: gpu_id at checkpoint -> gpu_id here */
	unsigned int ndevs;
	uint32_t dev_old[KP_MAX_GPUS];
	uint32_t dev_new[KP_MAX_GPUS];
} rs;

static void kp_rs_clear(bool close_fds)
{
	unsigned int i;

	for (i = 0; i < KP_MAX_GPUS; i++) {
		if (close_fds && rs.pid == getpid() && rs.render_fd[i] >= 0 &&
		    !rs.render_fd_theirs[i])
			close(rs.render_fd[i]);
		rs.render_fd[i] = -1;
	}
	free(rs.ckpt);
	free(rs.restored);
	free(rs.vmas);
	free(rs.kfd_vmas);
	memset(&rs, 0, sizeof(rs));
	for (i = 0; i < KP_MAX_GPUS; i++)
		rs.render_fd[i] = -1;
}

/* The state of the calling process; a fork does not inherit it. */
static void kp_rs_get(void)
{
	if (rs.pid == getpid())
		return;
	/* Inherited from a parent: its fds are not ours to close. */
	kp_rs_clear(false);
	rs.pid = getpid();
}

void kp_restore_reset(void)
{
	/* Inside CRIU's master the render fds, if any, are ours. */
	kp_rs_clear(true);
}

/* ---- GPU matching ---- */

/* The dump the images CRIU asks us for belong to. */
static void kp_note_dump_id(const KfdHeader *h)
{
	if (!rs.has_dump_id && h->has_dump_id) {
		rs.has_dump_id = true;
		rs.dump_id = h->dump_id;
	}
}

static int kp_ckpt_index(uint32_t gpu_id)
{
	unsigned int i;

	for (i = 0; i < rs.nckpt; i++)
		if (rs.ckpt[i].gpu_id == gpu_id)
			return (int)i;
	return -1;
}

static int kp_ckpt_index_by_minor(uint32_t minor)
{
	unsigned int i;

	for (i = 0; i < rs.nckpt; i++)
		if (rs.ckpt[i].render_minor == minor)
			return (int)i;
	return -1;
}

static int kp_collect_gpus(const KfdHeader *h, const char *name)
{
	struct kp_gpu *g;
	size_t i;
	int ret;

	for (i = 0; i < h->n_gpus; i++) {
		if (kp_ckpt_index(h->gpus[i]->gpu_id) >= 0)
			continue;
		if (rs.nckpt == KP_MAX_GPUS) {
			kp_err("the checkpoint names more than %u GPUs",
			       KP_MAX_GPUS);
			return -E2BIG;
		}
		g = &rs.ckpt[rs.nckpt];
		ret = kp_gpu_from_msg(h->gpus[i], g);
		if (ret) {
			kp_err("image %s is corrupt: bad GPU description", name);
			return ret;
		}
		rs.nckpt++;
	}
	return 0;
}

static int kp_gpu_id_cmp(const void *a, const void *b)
{
	const struct kp_gpu *x = a, *y = b;

	return x->gpu_id < y->gpu_id ? -1 : x->gpu_id > y->gpu_id;
}

/* Read the headers of every kfd and render image of the dump. */
static int kp_scan_images(void)
{
	struct dirent *de;
	KfdHeader *h;
	uint32_t id;
	int dfd, fd, ret = 0;
	DIR *dir;

	dfd = openat(kp_image_dir(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(dir = fdopendir(dfd))) {
		ret = -errno;
		if (dfd >= 0)
			close(dfd);
		kp_err("cannot list the images directory: %s", strerror(-ret));
		return ret;
	}
	while (!ret && (de = readdir(dir))) {
		if (!kp_parse_name_kfd(de->d_name, &id) &&
		    !kp_parse_name_render(de->d_name, &id))
			continue;
		fd = kp_img_open(de->d_name);
		if (fd < 0) {
			kp_err("cannot open image %s: %s", de->d_name,
			       strerror(-fd));
			ret = fd;
			break;
		}
		h = kp_read_header(fd, de->d_name);
		close(fd);
		if (!h) {
			ret = -EIO;
			break;
		}
		if (rs.has_dump_id && h->has_dump_id &&
		    h->dump_id != rs.dump_id)
			kp_debug("%s is from another dump: ignored", de->d_name);
		else
			ret = kp_collect_gpus(h, de->d_name);
		kfd_header__free_unpacked(h, NULL);
	}
	closedir(dir);
	return ret;
}

/* Decide, once per process, which local GPU stands in for which. */
static int kp_map_gpus(void)
{
	const struct kp_topology *local;
	unsigned int i;
	int ret;

	if (rs.mapped)
		return 0;
	rs.nckpt = 0;
	free(rs.ckpt);
	rs.ckpt = calloc(KP_MAX_GPUS, sizeof(*rs.ckpt));
	if (!rs.ckpt)
		return -ENOMEM;
	ret = kp_scan_images();
	if (ret)
		return ret;
	qsort(rs.ckpt, rs.nckpt, sizeof(*rs.ckpt), kp_gpu_id_cmp);

	local = kp_local_topology();
	if (!local)
		return -ENODEV;
	ret = kp_match_gpus(rs.ckpt, rs.nckpt, local, &kp_config.match,
			    rs.map);
	if (ret)
		return ret;
	for (i = 0; i < rs.nckpt; i++)
		kp_info("checkpointed GPU %u (renderD%u) -> local GPU %u (renderD%u)",
			rs.ckpt[i].gpu_id, rs.ckpt[i].render_minor,
			local->gpus[rs.map[i]].gpu_id,
			local->gpus[rs.map[i]].render_minor);
	rs.mapped = true;
	return 0;
}

/* The render node fd of local GPU @l, opened on first use. */
static int kp_render_fd(int l)
{
	const struct kp_topology *local = kp_local_topology();
	int fd;

	if (rs.render_fd[l] >= 0)
		return rs.render_fd[l];
	if (!local)
		return -ENODEV;
	fd = kp_open_render_high(&local->gpus[l]);
	if (fd >= 0)
		rs.render_fd[l] = fd;
	return fd;
}

/* ---- /dev/kfd ---- */

static bool kp_was_restored(uint32_t id)
{
	unsigned int i;

	for (i = 0; i < rs.nrestored; i++)
		if (rs.restored[i] == id)
			return true;
	return false;
}

static int kp_mark_restored(uint32_t id)
{
	uint32_t *r;

	r = realloc(rs.restored, (rs.nrestored + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	r[rs.nrestored++] = id;
	rs.restored = r;
	return 0;
}

static int kp_add_vmas(const KfdProcess *p, const struct kfd_criu_bo_bucket *b,
		       const int *dev_ckpt)
{
	const uint32_t render_mem = KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
				    KFD_IOC_ALLOC_MEM_FLAGS_GTT;
	struct kp_vma_entry *v;
	size_t i, d, n = 0;
	int c;

	for (i = 0; i < p->n_bos; i++)
		if (p->bos[i]->alloc_flags & render_mem)
			n++;
	v = realloc(rs.vmas, (rs.nvmas + n) * sizeof(*v) + 1);
	if (!v)
		return -ENOMEM;
	rs.vmas = v;
	for (i = 0; i < p->n_bos; i++) {
		if (!(p->bos[i]->alloc_flags & render_mem))
			continue;
		for (d = 0; d < p->n_devices; d++)
			if (p->devices[d]->user_gpu_id == p->bos[i]->gpu_id)
				break;
		c = dev_ckpt[d];
		v = &rs.vmas[rs.nvmas++];
		v->minor = rs.ckpt[c].render_minor;
		v->old_off = p->bos[i]->offset;
		v->size = p->bos[i]->size;
		v->new_off = b[i].restored_offset;
		v->local = rs.map[c];
	}
	rs.sorted = false;
	return 0;
}

/*
 * The /dev/kfd offsets to move (see kp_update_kfd_vma()): those of the
 * doorbell and MMIO BOs, as AMD's plugin keeps them, and the device each
 * checkpointed device now is, for mappings no BO describes.
 */
static int kp_add_kfd_vmas(const KfdProcess *p,
			   const struct kfd_criu_bo_bucket *b,
			   const struct kfd_criu_device_bucket *devs)
{
	const uint32_t kfd_mem = KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
				 KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP;
	struct kp_kfd_entry *v;
	unsigned int j;
	size_t i, n = 0;

	for (i = 0; i < p->n_bos; i++)
		if (p->bos[i]->alloc_flags & kfd_mem)
			n++;
	v = realloc(rs.kfd_vmas, (rs.nkfd_vmas + n) * sizeof(*v) + 1);
	if (!v)
		return -ENOMEM;
	rs.kfd_vmas = v;
	for (i = 0; i < p->n_bos; i++) {
		if (!(p->bos[i]->alloc_flags & kfd_mem))
			continue;
		v = &rs.kfd_vmas[rs.nkfd_vmas++];
		v->old_off = p->bos[i]->offset;
		v->size = p->bos[i]->size;
		v->new_off = b[i].restored_offset;
	}
	for (i = 0; i < p->n_devices; i++) {
		for (j = 0; j < rs.ndevs; j++)
			if (rs.dev_old[j] == p->devices[i]->gpu_id)
				break;
		if (j < rs.ndevs)
			continue;
		if (rs.ndevs == KP_MAX_GPUS)
			return -E2BIG;
		rs.dev_old[rs.ndevs] = p->devices[i]->gpu_id;
		rs.dev_new[rs.ndevs++] = devs[i].actual_gpu_id;
	}
	return 0;
}

/*
 * Write the BO contents back: hand them to the workers in CRIU's master
 * (restore_workers.c), or, in a serial restore, one thread per GPU here.
 * An incremental image's parent images are opened and checked first
 * (kp_chain_open()); the workers open it again from the image.
 */
static int kp_restore_contents(uint32_t id, const char *name,
			       const KfdProcess *p,
			       const struct kfd_criu_bo_bucket *b)
{
	struct kp_chain *chain = NULL, *link;
	struct kp_copy_bo *cbos = NULL;
	struct kp_copy_job *jobs = NULL;
	size_t nd = p->n_devices, nb = p->n_bos, d, i, n;
	unsigned int njobs = 0, k = 0, l;
	int ret = 0, c;

	ret = kp_chain_open(kp_image_dir(), name, p, &chain);
	if (ret)
		return ret;
	for (link = chain; link; link = link->parent)
		kp_info("%s is incremental: it refers to %s (dump %016" PRIx64 ")",
			name, link->where, link->dump_id);
	jobs = calloc(nd ? nd * KP_MAX_LANES : 1, sizeof(*jobs));
	cbos = calloc(nb ? nb : 1, sizeof(*cbos));
	if (!jobs || !cbos) {
		ret = -ENOMEM;
		goto out;
	}
	/* One job per pages image: per GPU and lane (images.h). */
	for (n = 0; n < nd * KP_MAX_LANES; n++) {
		struct kp_copy_job *j = &jobs[njobs];

		d = n / KP_MAX_LANES;
		l = n % KP_MAX_LANES;

		c = kp_ckpt_index(p->devices[d]->gpu_id);
		if (c < 0) {
			ret = -EIO;
			goto out;
		}
		j->dir = KP_COPY_LOAD;
		j->gpu_id = p->devices[d]->user_gpu_id;
		j->mode = kp_config.copy_mode;
		j->render_minor =
			kp_local_topology()->gpus[rs.map[c]].render_minor;
		j->chunk = kp_chunked(p) ? p->chunk_size : 0;
		j->sum_kind = kp_process_sum_kind(p);
		j->lane = l;
		kp_name_pages(j->image, id, j->gpu_id, l);
		j->bos = &cbos[k];
		for (i = 0; i < nb; i++) {
			if (!kp_bo_in_pages(p->bos[i], j->gpu_id, l))
				continue;
			if (b[i].dmabuf_fd == KFD_INVALID_FD) {
				kp_err("RESTORE gave no dma-buf for BO 0x%" PRIx64 ", whose contents were saved",
				       p->bos[i]->addr);
				ret = -EINVAL;
				goto out;
			}
			cbos[k].addr = p->bos[i]->addr;
			cbos[k].size = p->bos[i]->size;
			cbos[k].dmabuf_fd = (int)b[i].dmabuf_fd;
			cbos[k].checksum = p->bos[i]->checksum;
			if (j->chunk) {
				cbos[k].kinds = p->bos[i]->chunks.data;
				cbos[k].sums = p->bos[i]->chunk_sums;
				cbos[k].chain = chain;
				cbos[k].chain_bo = p->bos[i]->parent_bo;
			}
			k++;
			j->nbos++;
		}
		if (j->nbos)
			njobs++;
	}
	ret = kp_rw_submit(id, jobs, njobs);
	if (ret == -EAGAIN)
		ret = kp_copy_run(jobs, njobs, kp_config.max_buffer);
out:
	free(jobs);
	free(cbos);
	kp_chain_free(chain);
	return ret;
}

static int kp_restore_process(uint32_t id, int img, const char *name,
			      const KfdHeader *h)
{
	struct kfd_ioctl_criu_args args = { .op = KFD_CRIU_OP_RESTORE };
	struct kfd_criu_device_bucket *devs = NULL;
	struct kfd_criu_bo_bucket *bos = NULL;
	int dev_ckpt[KP_MAX_GPUS];
	const struct kp_topology *local;
	uint64_t t0, bytes = 0;
	KfdProcess *p;
	bool have_fds = false;
	size_t i;
	int kfd = -1, c, rfd, ret;

	p = kp_read_process(img, name, h);
	if (!p)
		return -EIO;
	/* Before CRIU opens the process's fd and maps of them, by path. */
	ret = kp_hsakmt_shm_restore(p);
	if (ret)
		goto out;
	ret = kp_map_gpus();
	if (ret)
		goto out;
	local = kp_local_topology();
	if (p->n_devices > KP_MAX_GPUS || !local) {
		ret = -E2BIG;
		goto out;
	}
	kfd = kp_kfd_open();
	if (kfd < 0) {
		ret = kfd;
		goto out;
	}
	ret = kp_kfd_check_version(kfd, NULL, NULL);
	if (ret)
		goto out;

	ret = -ENOMEM;
	devs = calloc(p->n_devices + 1, sizeof(*devs));
	bos = calloc(p->n_bos + 1, sizeof(*bos));
	if (!devs || !bos)
		goto out;
	for (i = 0; i < p->n_devices; i++) {
		c = kp_ckpt_index(p->devices[i]->gpu_id);
		if (c < 0) {
			ret = -EIO;
			goto out;
		}
		rfd = kp_render_fd(rs.map[c]);
		if (rfd < 0) {
			ret = rfd;
			goto out;
		}
		dev_ckpt[i] = c;
		devs[i].user_gpu_id = p->devices[i]->user_gpu_id;
		devs[i].actual_gpu_id = local->gpus[rs.map[c]].gpu_id;
		devs[i].drm_fd = (uint32_t)rfd;
	}
	for (i = 0; i < p->n_bos; i++) {
		bos[i].addr = p->bos[i]->addr;
		bos[i].size = p->bos[i]->size;
		bos[i].offset = p->bos[i]->offset;
		bos[i].gpu_id = p->bos[i]->gpu_id;
		bos[i].alloc_flags = p->bos[i]->alloc_flags;
		bytes += p->bos[i]->size;
	}
	args.devices = (uintptr_t)devs;
	args.bos = (uintptr_t)bos;
	args.priv_data = (uintptr_t)p->priv_data.data;
	args.priv_data_size = p->priv_data.len;
	args.num_devices = p->num_devices;
	args.num_bos = p->num_bos;
	args.num_objects = p->num_objects;
	/* The kernel allocates (and zeroes) every BO here: time it. */
	t0 = kp_prof_now();
	ret = kp_ioctl(kfd, AMDKFD_IOC_CRIU_OP, &args);
	if (ret) {
		kp_err("RESTORE of %s failed: %s (see the kernel log)", name,
		       strerror(-ret));
		goto out;
	}
	kp_info("RESTORE ioctl of %s: %zu BOs, %" PRIu64 " MiB, in %.1f ms",
		name, p->n_bos, bytes >> 20,
		(double)(kp_prof_now() - t0) / 1e6);
	have_fds = true;

	ret = kp_restore_contents(id, name, p, bos);
	if (!ret)
		ret = kp_add_vmas(p, bos, dev_ckpt);
	if (!ret)
		ret = kp_add_kfd_vmas(p, bos, devs);
	if (!ret)
		ret = kp_mark_restored(id);
	if (!ret)
		kp_info("restored %s: %zu GPUs, %zu BOs, %u queues and events",
			name, p->n_devices, p->n_bos, p->num_objects);
out:
	for (i = 0; have_fds && i < p->n_bos; i++)
		if (bos[i].dmabuf_fd != KFD_INVALID_FD)
			close((int)bos[i].dmabuf_fd);
	if (ret && kfd >= 0)
		close(kfd);
	free(devs);
	free(bos);
	kfd_process__free_unpacked(p, NULL);
	return ret ? ret : kfd;
}

/*
 * Another file of a process already restored here: every /dev/kfd file
 * of a process reaches the same KFD state, so a fresh open is it.
 */
static int kp_reopen_kfd(void)
{
	return kp_kfd_open();
}

/*
 * Aliases a restore follows from one image. The plugin writes an alias
 * only of a PROCESS image (one step); a longer path is a damaged or
 * crafted image, and a cycle would recurse until the stack ran out.
 */
#define KP_MAX_ALIAS_DEPTH	8

static int kp_restore_kfd_image(uint32_t id, bool must_exist,
				unsigned int depth);

static int kp_restore_alias(uint32_t id, const KfdHeader *h,
			    unsigned int depth)
{
	if (h->alias_of == id) {
		kp_err("image kfd-%u.img is corrupt: an alias of itself", id);
		return -EIO;
	}
	if (kp_was_restored(h->alias_of))
		return kp_reopen_kfd();
	if (depth >= KP_MAX_ALIAS_DEPTH) {
		kp_err("image kfd-%u.img is corrupt: more than %u aliases to follow (a cycle?)",
		       id, KP_MAX_ALIAS_DEPTH);
		return -ELOOP;
	}
	return kp_restore_kfd_image(h->alias_of, true, depth + 1);
}

static int kp_restore_kfd_image(uint32_t id, bool must_exist,
				unsigned int depth)
{
	char name[KP_NAME_LEN];
	KfdHeader *h;
	int img, ret;

	kp_name_kfd(name, id);
	img = kp_img_open(name);
	if (img < 0) {
		if (img == -ENOENT && !must_exist)
			return -ENOTSUP;
		kp_err("image %s is missing: %s", name, strerror(-img));
		return img;
	}
	if (!kp_kfd_present()) {
		kp_err("image %s needs %s, which this host does not have", name,
		       KP_KFD_PATH);
		close(img);
		return -ENODEV;
	}
	h = kp_read_header(img, name);
	if (!h) {
		close(img);
		return -EIO;
	}
	kp_note_dump_id(h);
	switch (h->kind) {
	case KFD_IMAGE_KIND__KFD_IMAGE_PROCESS:
		ret = kp_was_restored(id) ? kp_reopen_kfd() :
		      kp_restore_process(id, img, name, h);
		break;
	case KFD_IMAGE_KIND__KFD_IMAGE_ALIAS:
		ret = kp_restore_alias(id, h, depth);
		break;
	default:
		kp_err("image %s is corrupt: not a /dev/kfd image", name);
		ret = -EIO;
	}
	kfd_header__free_unpacked(h, NULL);
	close(img);
	return ret;
}

/* ---- render nodes ---- */

static int kp_restore_render(uint32_t id, int img, const char *name)
{
	KfdHeader *h;
	int c, fd, ret;

	if (!kp_kfd_present()) {
		kp_err("image %s needs %s, which this host does not have", name,
		       KP_KFD_PATH);
		return -ENODEV;
	}
	h = kp_read_header(img, name);
	if (!h)
		return -EIO;
	kp_note_dump_id(h);
	if (h->kind != KFD_IMAGE_KIND__KFD_IMAGE_RENDER) {
		kp_err("image %s is corrupt: not a render node image", name);
		ret = -EIO;
		goto out;
	}
	ret = kp_map_gpus();
	if (ret)
		goto out;
	c = kp_ckpt_index(h->render_gpu_id);
	fd = c < 0 ? -ENODEV : kp_render_fd(rs.map[c]);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	/* CRIU moves the returned fd to its number; ours stays. */
	ret = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (ret < 0) {
		ret = -errno;
		kp_err("cannot dup a render node fd: %s", strerror(-ret));
		goto out;
	}
	kp_info("restored render node file %u (GPU %u) on renderD%u", id,
		h->render_gpu_id,
		kp_local_topology()->gpus[rs.map[c]].render_minor);
out:
	kfd_header__free_unpacked(h, NULL);
	return ret;
}

int kp_restore_file(int id)
{
	char name[KP_NAME_LEN];
	int img, ret;

	kp_rs_get();
	ret = kp_restore_kfd_image((uint32_t)id, false, 0);
	if (ret != -ENOTSUP)
		return ret;
	kp_name_render(name, (uint32_t)id);
	img = kp_img_open(name);
	if (img < 0)
		return img == -ENOENT ? -ENOTSUP : img;
	ret = kp_restore_render((uint32_t)id, img, name);
	close(img);
	return ret;
}

/* ---- memory mappings ---- */

/* An fd other than @fd open on the same open file, or -1. */
static int kp_same_file_fd(int fd)
{
	pid_t pid = getpid();
	struct dirent *de;
	int found = -1, n;
	char *end;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	while (found < 0 && (de = readdir(dir))) {
		n = (int)strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || n == fd || n == dirfd(dir))
			continue;
		if (!syscall(SYS_kcmp, pid, pid, KCMP_FILE, fd, n))
			found = n;
	}
	closedir(dir);
	return found;
}

/*
 * The first mapping is restored after all the process's fds. If the
 * process has a render node fd of its own for a GPU (one we handed out
 * as a dup), map through that and close ours, so that the process ends
 * up with exactly the fds it had. Checked only now: later, CRIU's own
 * dups of our fds exist too.
 */
static void kp_adopt_render_fds(void)
{
	int l, fd;

	if (rs.adopted)
		return;
	rs.adopted = true;
	for (l = 0; l < KP_MAX_GPUS; l++) {
		if (rs.render_fd[l] < 0)
			continue;
		fd = kp_same_file_fd(rs.render_fd[l]);
		if (fd < 0)
			continue;
		kp_debug("render node fd %d is the process's fd %d: closing ours",
			 rs.render_fd[l], fd);
		close(rs.render_fd[l]);
		rs.render_fd[l] = fd;
		rs.render_fd_theirs[l] = true;
	}
}

static int kp_vma_cmp(const void *a, const void *b)
{
	const struct kp_vma_entry *x = a, *y = b;

	if (x->minor != y->minor)
		return x->minor < y->minor ? -1 : 1;
	return x->old_off < y->old_off ? -1 : x->old_off > y->old_off;
}

/* The BO mapped at @off of render minor @minor at checkpoint. */
static const struct kp_vma_entry *kp_find_vma(uint32_t minor, uint64_t off)
{
	size_t lo = 0, hi, mid;
	const struct kp_vma_entry *v;

	if (!rs.nvmas)
		return NULL;	/* rs.vmas may be NULL: no qsort() of it */
	if (!rs.sorted) {
		qsort(rs.vmas, rs.nvmas, sizeof(*rs.vmas), kp_vma_cmp);
		rs.sorted = true;
	}
	/* The last entry starting at or before (minor, off). */
	hi = rs.nvmas;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		v = &rs.vmas[mid];
		if (v->minor < minor ||
		    (v->minor == minor && v->old_off <= off))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	v = &rs.vmas[lo - 1];
	if (v->minor != minor || off - v->old_off >= v->size)
		return NULL;
	return v;
}

/*
 * A mapping of /dev/kfd. Its offset names a device by that device's own
 * gpu_id (the kernel's mmap resolves it as a device, as amdkfd's kfd_mmap()
 * does), except the events page's, which names none and stays. So after a
 * restore on other devices it must move: to the offset RESTORE returned
 * for the doorbell or MMIO BO it maps, as AMD's plugin does, or, for a
 * mapping no BO describes (a doorbell slice mapped at the offset
 * CREATE_QUEUE returned), to the same offset on the device its device is
 * now. CRIU maps it through a new open of /dev/kfd, which reaches the same
 * restored process.
 */
static int kp_update_kfd_vma(uint64_t addr, uint64_t old_off,
			     uint64_t *new_off)
{
	uint32_t old_id = (uint32_t)KFD_MMAP_GET_GPU_ID(old_off);
	const struct kp_kfd_entry *v;
	unsigned int j;
	size_t i;

	*new_off = old_off;
	if ((old_off & KFD_MMAP_TYPE_MASK) == KFD_MMAP_TYPE_EVENTS)
		return 0;
	for (i = 0; i < rs.nkfd_vmas; i++) {
		v = &rs.kfd_vmas[i];
		if (old_off >= v->old_off && old_off - v->old_off < v->size) {
			*new_off = v->new_off + (old_off - v->old_off);
			goto moved;
		}
	}
	for (j = 0; j < rs.ndevs; j++) {
		if (rs.dev_old[j] == old_id) {
			*new_off = (old_off & ~KFD_MMAP_GPU_ID_MASK) |
				   KFD_MMAP_GPU_ID(rs.dev_new[j]);
			goto moved;
		}
	}
	kp_err("mapping 0x%" PRIx64 " of /dev/kfd at offset 0x%" PRIx64 " names gpu_id %u, which no device restored in this process had",
	       addr, old_off, old_id);
	return -ENOENT;
moved:
	kp_debug("mapping 0x%" PRIx64 ": /dev/kfd offset 0x%" PRIx64 " -> 0x%" PRIx64,
		 addr, old_off, *new_off);
	return 1;
}

int kp_update_vma_map(const char *path, uint64_t addr, uint64_t old_off,
		      uint64_t *new_off, int *plugin_fd)
{
	const struct kp_vma_entry *v;
	unsigned int minor;
	int end = 0, fd;

	*plugin_fd = -1;
	if (!kp_kfd_present())
		return -ENOTSUP;
	while (*path == '/')
		path++;
	kp_rs_get();
	kp_adopt_render_fds();

	if (!strcmp(path, "dev/kfd")) {
		if (!rs.nrestored) {
			kp_err("mapping 0x%" PRIx64 " of /dev/kfd, but this process restored no /dev/kfd file",
			       addr);
			return -ENOENT;
		}
		return kp_update_kfd_vma(addr, old_off, new_off);
	}

	if (sscanf(path, "dev/dri/renderD%u%n", &minor, &end) != 1 ||
	    path[end] != '\0')
		return -ENOTSUP;
	if (kp_map_gpus() || kp_ckpt_index_by_minor(minor) < 0)
		return -ENOTSUP;	/* not a GPU of this checkpoint */

	v = kp_find_vma(minor, old_off);
	if (!v) {
		kp_err("mapping 0x%" PRIx64 " of /dev/dri/renderD%u at offset 0x%" PRIx64 ": no BO restored in this process was there",
		       addr, minor, old_off);
		return -ENOENT;
	}
	fd = kp_render_fd(v->local);
	if (fd < 0)
		return fd;
	/*
	 * criu >= 3.19 owns the fd it gets and closes it; older ones dup()
	 * it and leave ours alone, so a dup there would stay in the process.
	 */
	if (kp_criu.vma_fd_owned) {
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			fd = -errno;
			kp_err("cannot dup a render node fd: %s", strerror(-fd));
			return fd;
		}
	}
	*new_off = v->new_off + (old_off - v->old_off);
	*plugin_fd = fd;
	kp_debug("mapping 0x%" PRIx64 ": renderD%u offset 0x%" PRIx64 " -> 0x%" PRIx64 " through fd %d",
		 addr, minor, old_off, *new_off, fd);
	return 1;
}
