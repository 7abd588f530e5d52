// SPDX-License-Identifier: GPL-2.0
/*
 * Parent images of incremental kfd images; see chain.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain.h"
#include "util.h"

#define KP_NO_OFF	UINT64_MAX

uint64_t kp_chain_max_bytes = KP_MAX_CHAIN_BYTES;

/*
 * Follow @depth "parent" links from @dirfd, adding them to @prefix (also
 * those that fail, for the message). A new fd, or -errno.
 */
static int kp_open_parents(int dirfd, uint32_t depth, char *prefix,
			   size_t len)
{
	int cur = dirfd, nfd;
	uint32_t i;

	for (i = 0; i < depth; i++) {
		strncat(prefix, "parent/", len - strlen(prefix) - 1);
		nfd = openat(cur, "parent", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (nfd < 0)
			nfd = -errno;
		if (cur != dirfd)
			close(cur);
		if (nfd < 0)
			return nfd;
		cur = nfd;
	}
	return cur == dirfd ? fcntl(dirfd, F_DUPFD_CLOEXEC, 0) : cur;
}

static int kp_device_of(const KfdProcess *p, uint32_t user_gpu_id)
{
	size_t d;

	for (d = 0; d < p->n_devices; d++)
		if (p->devices[d]->user_gpu_id == user_gpu_id)
			return (int)d;
	return -1;
}

/* Every BO of @child with PARENT chunks refers to a BO like it in @c. */
static int kp_chain_check_refs(const struct kp_chain *c,
			       const KfdProcess *child, const char *child_where)
{
	const KfdBo *b, *pb;
	size_t i;

	if (c->p->chunk_size != child->chunk_size) {
		kp_err("image %s is corrupt: its chunks are of %u bytes, those of its parent image %s of %u",
		       child_where, child->chunk_size, c->where,
		       c->p->chunk_size);
		return -EIO;
	}
	if (kp_process_sum_kind(c->p) != kp_process_sum_kind(child)) {
		kp_err("image %s is corrupt: its chunk checksums are %s, those of its parent image %s %s",
		       child_where, kp_sum_kind_name(kp_process_sum_kind(child)),
		       c->where, kp_sum_kind_name(kp_process_sum_kind(c->p)));
		return -EIO;
	}
	for (i = 0; i < child->n_bos; i++) {
		b = child->bos[i];
		if (!kp_bo_has_parent_chunks(child, b))
			continue;
		pb = b->parent_bo < c->p->n_bos ? c->p->bos[b->parent_bo] :
						  NULL;
		if (!pb || !pb->has_contents || pb->size != b->size ||
		    pb->gpu_id != b->gpu_id) {
			kp_err("image %s is corrupt: BO 0x%" PRIx64 " refers to BO %u of its parent image %s, which is not that BO",
			       child_where, b->addr, b->parent_bo, c->where);
			return -EIO;
		}
	}
	return 0;
}

/*
 * Charge @n bytes of the chain's memory to *@bytes: -E2BIG, logged for
 * the image @where, once the whole chain would hold more than
 * kp_chain_max_bytes.
 */
static int kp_chain_charge(uint64_t *bytes, uint64_t n, const char *where)
{
	if (n > kp_chain_max_bytes || *bytes > kp_chain_max_bytes - n) {
		kp_err("the parent images up to %s are too large: more than %" PRIu64 " bytes of records and chunk maps together",
		       where, kp_chain_max_bytes);
		return -E2BIG;
	}
	*bytes += n;
	return 0;
}

/* Index of the pages image of device @d, lane @lane in c->pages. */
static size_t kp_chain_image(size_t d, uint32_t lane)
{
	return d * KP_MAX_LANES + lane;
}

/* Open the pages images of @c and place every DATA chunk in them. */
static int kp_chain_pages(struct kp_chain *c, int dirfd, const char *prefix,
			  uint32_t id, uint64_t *bytes)
{
	const KfdProcess *p = c->p;
	size_t d, i, x, nx = p->n_devices * KP_MAX_LANES;
	char name[KP_NAME_LEN];
	uint64_t total, ch, n;
	uint32_t lane;
	struct stat st;

	c->pages = calloc(nx + 1, sizeof(*c->pages));
	c->pages_name = calloc(nx + 1, sizeof(*c->pages_name));
	c->off = calloc(p->n_bos + 1, sizeof(*c->off));
	if (!c->pages || !c->pages_name || !c->off)
		return -ENOMEM;
	for (x = 0; x < nx; x++)
		c->pages[x] = -1;
	for (x = 0; x < nx; x++) {
		d = x / KP_MAX_LANES;
		lane = x % KP_MAX_LANES;
		total = 0;
		for (i = 0; i < p->n_bos; i++) {
			const KfdBo *b = p->bos[i];

			if (!kp_bo_in_pages(b, p->devices[d]->user_gpu_id,
					    lane))
				continue;
			n = kp_nchunks(b->size, p->chunk_size);
			if (kp_chain_charge(bytes, n * sizeof(uint64_t),
					    c->where))
				return -E2BIG;
			c->off[i] = malloc(n * sizeof(uint64_t));
			if (!c->off[i])
				return -ENOMEM;
			for (ch = 0; ch < n; ch++) {
				c->off[i][ch] = KP_NO_OFF;
				if (b->chunks.data[ch] != KFD_CHUNK__KFD_CHUNK_DATA)
					continue;
				c->off[i][ch] = total;
				total += kp_chunk_len(b->size, p->chunk_size,
						      ch);
			}
		}
		if (!total)
			continue;
		kp_name_pages(name, id, p->devices[d]->user_gpu_id, lane);
		snprintf(c->pages_name[x], KP_WHERE_LEN, "%s%s", prefix, name);
		c->pages[x] = kp_img_openat(dirfd, name);
		if (c->pages[x] < 0) {
			kp_err("parent pages image %s is missing: %s",
			       c->pages_name[x], strerror(-c->pages[x]));
			return -ENOENT;
		}
		if (fstat(c->pages[x], &st) || (uint64_t)st.st_size != total) {
			kp_err("parent pages image %s is damaged: %" PRIu64 " bytes, its BOs' stored chunks are %" PRIu64,
			       c->pages_name[x], (uint64_t)st.st_size, total);
			return -EIO;
		}
	}
	return 0;
}

/* The parent of @child, in @dirfd (@prefix from the top directory). */
static int kp_chain_link(int dirfd, const char *prefix,
			 const char *child_where, const KfdProcess *child,
			 uint32_t used, uint64_t *bytes, struct kp_chain **out)
{
	char dir[KP_DIR_LEN], name[KP_NAME_LEN];
	struct kp_chain *c = NULL;
	KfdHeader *h = NULL;
	struct stat st;
	int fd = -1, img = -1, ret;

	*out = NULL;
	if (!child->has_parent_dump_id)
		return 0;
	if (used + child->parent_depth > KP_MAX_PARENT_DEPTH) {
		kp_err("image %s: more than %u parent links to follow",
		       child_where, KP_MAX_PARENT_DEPTH);
		return -ELOOP;
	}
	snprintf(dir, sizeof(dir), "%s", prefix);
	fd = kp_open_parents(dirfd, child->parent_depth, dir, sizeof(dir));
	if (fd < 0) {
		kp_err("image %s is incremental: its parent images (dump %016" PRIx64 ") should be in %s, which cannot be opened: %s",
		       child_where, child->parent_dump_id, dir, strerror(-fd));
		return fd;
	}
	ret = -ENOMEM;
	c = calloc(1, sizeof(*c));
	if (!c)
		goto err;
	kp_name_kfd(name, child->parent_image);
	snprintf(c->where, sizeof(c->where), "%s%s", dir, name);
	img = kp_img_openat(fd, name);
	if (img < 0) {
		ret = img;
		kp_err("image %s is incremental, but its parent image %s is missing: %s",
		       child_where, c->where, strerror(-ret));
		goto err;
	}
	ret = -EIO;
	h = kp_read_header(img, c->where);
	if (!h)
		goto err;
	if (h->kind != KFD_IMAGE_KIND__KFD_IMAGE_PROCESS || !h->has_dump_id ||
	    h->dump_id != child->parent_dump_id) {
		kp_err("image %s is incremental, but %s is not its parent: dump %016" PRIx64 ", expected %016" PRIx64,
		       child_where, c->where, h->has_dump_id ? h->dump_id : 0,
		       child->parent_dump_id);
		goto err;
	}
	c->dump_id = h->dump_id;
	/* The record is at most the file: charge that before reading it. */
	ret = fstat(img, &st) ? -errno :
	      kp_chain_charge(bytes, (uint64_t)st.st_size, c->where);
	if (ret)
		goto err;
	ret = -EIO;
	c->p = kp_read_process(img, c->where, h);
	if (!c->p)
		goto err;
	if (!kp_chunked(c->p)) {
		kp_err("image %s is incremental, but its parent image %s has no chunks",
		       child_where, c->where);
		goto err;
	}
	ret = kp_chain_check_refs(c, child, child_where);
	if (!ret)
		ret = kp_chain_pages(c, fd, dir, child->parent_image, bytes);
	if (!ret)
		ret = kp_chain_link(fd, dir, c->where, c->p,
				    used + child->parent_depth, bytes,
				    &c->parent);
	if (ret)
		goto err;
	kfd_header__free_unpacked(h, NULL);
	close(img);
	close(fd);
	*out = c;
	return 0;
err:
	if (h)
		kfd_header__free_unpacked(h, NULL);
	if (img >= 0)
		close(img);
	close(fd);
	kp_chain_free(c);
	return ret;
}

int kp_chain_open(int dirfd, const char *where, const KfdProcess *p,
		  struct kp_chain **out)
{
	uint64_t bytes = 0;

	return kp_chain_link(dirfd, "", where, p, 0, &bytes, out);
}

void kp_chain_free(struct kp_chain *c)
{
	struct kp_chain *next;
	size_t i;

	for (; c; c = next) {
		next = c->parent;
		for (i = 0; c->p && c->pages &&
			    i < c->p->n_devices * KP_MAX_LANES; i++)
			if (c->pages[i] >= 0)
				close(c->pages[i]);
		for (i = 0; c->p && c->off && i < c->p->n_bos; i++)
			free(c->off[i]);
		free(c->off);
		free(c->pages);
		free(c->pages_name);
		if (c->p)
			kfd_process__free_unpacked(c->p, NULL);
		free(c);
	}
}

int kp_chain_read(const struct kp_chain *ch, uint32_t bo, uint64_t c,
		  void *buf, size_t len)
{
	const KfdBo *b;
	size_t done = 0, x;
	ssize_t n;

	for (; ch; ch = ch->parent) {
		b = ch->p->bos[bo];
		if (b->chunks.data[c] == KFD_CHUNK__KFD_CHUNK_ZERO) {
			memset(buf, 0, len);
			return 0;
		}
		if (b->chunks.data[c] == KFD_CHUNK__KFD_CHUNK_PARENT) {
			bo = b->parent_bo;
			continue;
		}
		x = kp_chain_image((size_t)kp_device_of(ch->p, b->gpu_id),
				   kp_bo_lane(b));
		while (done < len) {
			n = pread(ch->pages[x], (uint8_t *)buf + done,
				  len - done, (off_t)(ch->off[bo][c] + done));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				kp_err("cannot read parent pages image %s: %s",
				       ch->pages_name[x],
				       n ? strerror(errno) : "truncated");
				return n ? -errno : -EIO;
			}
			done += (size_t)n;
		}
		return 0;
	}
	kp_err("a chunk refers to a parent image that does not exist");
	return -EIO;
}

/* ---- at dump ---- */

static int kp_base_cmp(const void *a, const void *b, void *arg)
{
	const KfdProcess *p = arg;
	const KfdBo *x = p->bos[*(const uint32_t *)a];
	const KfdBo *y = p->bos[*(const uint32_t *)b];

	if (x->gpu_id != y->gpu_id)
		return x->gpu_id < y->gpu_id ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The process record of pid @pid in directory @fd, or NULL. */
static KfdProcess *kp_base_scan(int fd, const char *prefix, uint32_t pid,
				struct kp_base *b)
{
	char where[KP_WHERE_LEN];
	KfdProcess *p = NULL;
	struct dirent *de;
	KfdHeader *h;
	uint32_t id;
	int dfd, img;
	DIR *dir;

	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	dir = dfd < 0 ? NULL : fdopendir(dfd);
	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return NULL;
	}
	while (!p && (de = readdir(dir))) {
		if (!kp_parse_name_kfd(de->d_name, &id))
			continue;
		img = kp_img_openat(fd, de->d_name);
		if (img < 0)
			continue;
		snprintf(where, sizeof(where), "%s", prefix);
		kp_name_kfd(where + strlen(where), id);
		h = kp_read_header(img, where);
		if (h && h->kind == KFD_IMAGE_KIND__KFD_IMAGE_PROCESS &&
		    h->has_pid && h->pid == pid && h->has_dump_id) {
			p = kp_read_process(img, where, h);
			b->dump_id = h->dump_id;
			b->id = id;
			snprintf(b->where, sizeof(b->where), "%s", where);
		}
		if (h)
			kfd_header__free_unpacked(h, NULL);
		close(img);
	}
	closedir(dir);
	return p;
}

void kp_base_find(uint32_t pid, uint32_t chunk, struct kp_base *b)
{
	char prefix[KP_DIR_LEN] = "";
	int top = kp_image_dir(), fd;
	KfdProcess *p = NULL;
	uint32_t depth, i;

	memset(b, 0, sizeof(*b));
	for (depth = 1; !p && depth <= KP_MAX_PARENT_DEPTH; depth++) {
		prefix[0] = '\0';
		fd = kp_open_parents(top, depth, prefix, sizeof(prefix));
		if (fd < 0) {
			if (depth > 1 || fd != -ENOENT)
				kp_debug("no images directory at %s: %s", prefix,
					 strerror(-fd));
			return;
		}
		p = kp_base_scan(fd, prefix, pid, b);
		close(fd);
		b->depth = depth;
	}
	if (!p)
		return;
	if (!kp_chunked(p) || p->chunk_size != chunk) {
		kp_info("parent image %s has no chunks of %u bytes: a full dump",
			b->where, chunk);
		kfd_process__free_unpacked(p, NULL);
		return;
	}
	b->order = calloc(p->n_bos + 1, sizeof(*b->order));
	if (!b->order) {
		kfd_process__free_unpacked(p, NULL);
		return;
	}
	for (i = 0; i < p->n_bos; i++)
		b->order[i] = i;
	qsort_r(b->order, p->n_bos, sizeof(*b->order), kp_base_cmp, p);
	b->p = p;
}

const uint64_t *kp_base_sums(const struct kp_base *b, uint64_t addr,
			     uint64_t size, uint32_t gpu_id, uint32_t flags,
			     uint32_t *index)
{
	size_t lo = 0, hi, mid;
	const KfdBo *x;

	if (!b->p)
		return NULL;
	hi = b->p->n_bos;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		x = b->p->bos[b->order[mid]];
		if (x->gpu_id < gpu_id ||
		    (x->gpu_id == gpu_id && x->addr < addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == b->p->n_bos)
		return NULL;
	x = b->p->bos[b->order[lo]];
	if (x->gpu_id != gpu_id || x->addr != addr || x->size != size ||
	    x->alloc_flags != flags || !x->has_contents)
		return NULL;
	*index = b->order[lo];
	return x->chunk_sums;
}

void kp_base_free(struct kp_base *b)
{
	if (b->p)
		kfd_process__free_unpacked(b->p, NULL);
	free(b->order);
	memset(b, 0, sizeof(*b));
}
