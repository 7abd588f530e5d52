// SPDX-License-Identifier: GPL-2.0
/*
 * Image names, length-prefixed records and the checks every reader runs
 * on the messages of kfd_image.proto.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/kfd_ioctl.h>

#include "images.h"
#include "util.h"

/* ---- names ---- */

void kp_name_kfd(char *buf, uint32_t id)
{
	snprintf(buf, KP_NAME_LEN, "kfd-%u.img", id);
}

void kp_name_render(char *buf, uint32_t id)
{
	snprintf(buf, KP_NAME_LEN, "render-%u.img", id);
}

void kp_name_pages(char *buf, uint32_t id, uint32_t gpu_id, uint32_t lane)
{
	if (lane)
		snprintf(buf, KP_NAME_LEN, "kfd-pages-%u-%u-%u.img", id,
			 gpu_id, lane);
	else
		snprintf(buf, KP_NAME_LEN, "kfd-pages-%u-%u.img", id, gpu_id);
}

/* "<prefix><u32>.img" exactly. */
static bool kp_parse_name_u32(const char *name, const char *prefix,
			      uint32_t *id)
{
	size_t plen = strlen(prefix);
	unsigned long v;
	char *end;

	if (strncmp(name, prefix, plen) || name[plen] < '0' ||
	    name[plen] > '9')
		return false;
	errno = 0;
	v = strtoul(name + plen, &end, 10);
	if (errno || v > UINT32_MAX || strcmp(end, ".img"))
		return false;
	*id = (uint32_t)v;
	return true;
}

bool kp_parse_name_kfd(const char *name, uint32_t *id)
{
	return kp_parse_name_u32(name, "kfd-", id);
}

bool kp_parse_name_render(const char *name, uint32_t *id)
{
	return kp_parse_name_u32(name, "render-", id);
}

bool kp_parse_name_pages(const char *name, uint32_t *id, uint32_t *gpu_id,
			 uint32_t *lane)
{
	unsigned long a, b, l = 0;
	char *end;

	if (strncmp(name, "kfd-pages-", 10) || name[10] < '0' ||
	    name[10] > '9')
		return false;
	errno = 0;
	a = strtoul(name + 10, &end, 10);
	if (errno || a > UINT32_MAX || *end != '-' || end[1] < '0' ||
	    end[1] > '9')
		return false;
	b = strtoul(end + 1, &end, 10);
	if (errno || b > UINT32_MAX)
		return false;
	/* "-<lane>", 1 to KP_MAX_LANES - 1: lane 0 has the short name */
	if (*end == '-' && end[1] >= '1' && end[1] <= '9') {
		l = strtoul(end + 1, &end, 10);
		if (errno || l >= KP_MAX_LANES)
			return false;
	}
	if (strcmp(end, ".img"))
		return false;
	*id = (uint32_t)a;
	*gpu_id = (uint32_t)b;
	*lane = (uint32_t)l;
	return true;
}

/* ---- files ---- */

static int kp_dirfd = AT_FDCWD;

void kp_set_image_dir(int dirfd)
{
	kp_dirfd = dirfd;
}

int kp_image_dir(void)
{
	if (criu_get_image_dir)
		return criu_get_image_dir();
	return kp_dirfd;
}

int kp_img_create(const char *name)
{
	int fd = openat(kp_image_dir(), name,
			O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0) {
		fd = -errno;
		kp_err("cannot create image %s: %s", name, strerror(-fd));
	}
	return fd;
}

int kp_img_openat(int dirfd, const char *name)
{
	struct stat st;
	int fd;

	/*
	 * Without blocking: a FIFO under an image's name would otherwise
	 * hang the open until someone writes to it.
	 */
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		kp_err("image %s is not a regular file", name);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int kp_img_open(const char *name)
{
	return kp_img_openat(kp_image_dir(), name);
}

/* ---- records ---- */

int kp_record_write_len(int fd, uint64_t len)
{
	uint8_t hdr[8];

	kp_put_le64(hdr, len);
	return kp_write_all(fd, hdr, sizeof(hdr));
}

int kp_record_write(int fd, const void *data, size_t len)
{
	int ret = kp_record_write_len(fd, len);

	return ret ? ret : kp_write_all(fd, data, len);
}

int kp_record_write_msg(int fd, const ProtobufCMessage *msg)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf;
	int ret;

	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	protobuf_c_message_pack(msg, buf);
	ret = kp_record_write(fd, buf, len);
	free(buf);
	return ret;
}

int kp_record_read_len(int fd, const char *name, uint64_t max,
		       uint64_t *len)
{
	uint8_t hdr[8];
	ssize_t n;

	n = kp_read_all(fd, hdr, sizeof(hdr));
	if (n < 0) {
		kp_err("cannot read image %s: %s", name, strerror((int)-n));
		return (int)n;
	}
	if (n == 0)
		return -ENODATA;
	if (n < (ssize_t)sizeof(hdr)) {
		kp_err("image %s is truncated: %zd of 8 length bytes", name, n);
		return -EIO;
	}
	*len = kp_get_le64(hdr);
	if (*len > max) {
		kp_err("image %s is corrupt: record of %" PRIu64 " bytes (at most %" PRIu64 ")",
		       name, *len, max);
		return -EIO;
	}
	return 0;
}

int kp_record_read(int fd, const char *name, uint64_t max, uint8_t **buf,
		   size_t *len)
{
	uint64_t want;
	uint8_t *p;
	ssize_t n;
	int ret;

	ret = kp_record_read_len(fd, name, max, &want);
	if (ret)
		return ret;
	p = malloc(want ? want : 1);
	if (!p)
		return -ENOMEM;
	n = kp_read_all(fd, p, want);
	if (n < 0 || (uint64_t)n != want) {
		if (n < 0)
			kp_err("cannot read image %s: %s", name,
			       strerror((int)-n));
		else
			kp_err("image %s is truncated: record of %" PRIu64 " bytes, %zd present",
			       name, want, n);
		free(p);
		return n < 0 ? (int)n : -EIO;
	}
	*buf = p;
	*len = want;
	return 0;
}

/* ---- messages ---- */

KfdHeader *kp_read_header(int fd, const char *name)
{
	KfdHeader *h;
	uint8_t *buf;
	size_t len;
	int ret;

	ret = kp_record_read(fd, name, KP_MAX_HEADER_RECORD, &buf, &len);
	if (ret == -ENODATA)
		kp_err("image %s is truncated: empty", name);
	if (ret)
		return NULL;
	h = kfd_header__unpack(NULL, len, buf);
	free(buf);
	if (!h) {
		kp_err("image %s is corrupt: cannot parse its header", name);
		return NULL;
	}
	if (!h->version || h->version > KP_IMAGE_VERSION) {
		kp_err("image %s has format version %u; this plugin reads versions 1 to %u",
		       name, h->version, KP_IMAGE_VERSION);
		goto err;
	}
	if (h->kind < KFD_IMAGE_KIND__KFD_IMAGE_PROCESS ||
	    h->kind > KFD_IMAGE_KIND__KFD_IMAGE_ALIAS) {
		kp_err("image %s is of unknown kind %u", name, h->kind);
		goto err;
	}
	if ((h->kind == KFD_IMAGE_KIND__KFD_IMAGE_RENDER &&
	     (!h->has_render_gpu_id ||
	      !kp_header_gpu(h, h->render_gpu_id))) ||
	    (h->kind == KFD_IMAGE_KIND__KFD_IMAGE_ALIAS && !h->has_alias_of)) {
		kp_err("image %s is corrupt: incomplete header", name);
		goto err;
	}
	return h;
err:
	kfd_header__free_unpacked(h, NULL);
	return NULL;
}

uint64_t kp_nchunks(uint64_t size, uint32_t chunk)
{
	return size / chunk + !!(size % chunk);
}

size_t kp_chunk_len(uint64_t size, uint32_t chunk, uint64_t c)
{
	uint64_t off = c * chunk;

	return (size_t)KP_MIN((uint64_t)chunk, size - off);
}

bool kp_chunk_size_ok(uint64_t chunk)
{
	return chunk >= KP_MIN_CHUNK_SIZE && chunk <= KP_MAX_CHUNK_SIZE &&
	       !(chunk & (chunk - 1));
}

uint64_t kp_bo_stored(const KfdProcess *p, const KfdBo *b)
{
	uint64_t c, n, stored = 0;

	if (!b->has_contents)
		return 0;
	if (!kp_chunked(p))
		return b->size;
	n = kp_nchunks(b->size, p->chunk_size);
	for (c = 0; c < n && c < b->chunks.len; c++)
		if (b->chunks.data[c] == KFD_CHUNK__KFD_CHUNK_DATA)
			stored += kp_chunk_len(b->size, p->chunk_size, c);
	return stored;
}

bool kp_bo_has_parent_chunks(const KfdProcess *p, const KfdBo *b)
{
	size_t c;

	if (!b->has_contents || !kp_chunked(p))
		return false;
	for (c = 0; c < b->chunks.len; c++)
		if (b->chunks.data[c] == KFD_CHUNK__KFD_CHUNK_PARENT)
			return true;
	return false;
}

/* The chunk map of a version 2 BO with contents. */
static bool kp_bo_chunks_ok(const KfdProcess *p, const KfdBo *b)
{
	uint64_t n = kp_nchunks(b->size, p->chunk_size);
	bool parent = false;
	size_t c;

	if (!b->size || b->chunks.len != n || b->n_chunk_sums != n)
		return false;
	for (c = 0; c < n; c++) {
		if (b->chunks.data[c] > KFD_CHUNK__KFD_CHUNK_PARENT)
			return false;
		if (b->chunks.data[c] == KFD_CHUNK__KFD_CHUNK_PARENT)
			parent = true;
	}
	return !parent || (b->has_parent_bo && p->has_parent_dump_id);
}

/*
 * Lanes are version 4, of chunked BOs with contents, below KP_MAX_LANES;
 * and a restore runs one job per pages image: at most KP_MAX_GPUS.
 */
static bool kp_lanes_ok(const KfdProcess *p, const KfdHeader *h)
{
	unsigned int images = 0;
	uint32_t used;
	size_t i, d;

	for (i = 0; i < p->n_bos; i++)
		if (p->bos[i]->has_lane &&
		    (h->version < 4 || !kp_chunked(p) ||
		     !p->bos[i]->has_contents ||
		     p->bos[i]->lane >= KP_MAX_LANES))
			return false;
	for (d = 0; d < p->n_devices; d++) {
		used = 0;
		for (i = 0; i < p->n_bos; i++)
			if (p->bos[i]->has_contents &&
			    p->bos[i]->gpu_id == p->devices[d]->user_gpu_id)
				used |= 1U << kp_bo_lane(p->bos[i]);
		images += (unsigned int)__builtin_popcount(used);
	}
	return images <= KP_MAX_GPUS;
}

static bool kp_process_is_consistent(const KfdProcess *p, const KfdHeader *h)
{
	size_t i, j;

	if (p->n_devices != p->num_devices || p->n_bos != p->num_bos)
		return false;
	/* Chunks and parents are version 2; an incremental image has both. */
	if ((kp_chunked(p) || p->has_parent_dump_id) &&
	    (h->version < 2 || !kp_chunked(p) ||
	     !kp_chunk_size_ok(p->chunk_size)))
		return false;
	/* The chunk sum function is version 3, and one this reader knows. */
	if (p->has_chunk_sum &&
	    (h->version < 3 || !kp_chunked(p) || p->chunk_sum >= KP_SUM_KINDS))
		return false;
	if (p->has_parent_dump_id &&
	    (!p->has_parent_image || !p->has_parent_depth ||
	     !p->parent_depth || p->parent_depth > KP_MAX_PARENT_DEPTH))
		return false;
	for (i = 0; i < p->n_devices; i++) {
		if (!p->devices[i]->user_gpu_id ||
		    !kp_header_gpu(h, p->devices[i]->gpu_id))
			return false;
		for (j = 0; j < i; j++)
			if (p->devices[j]->user_gpu_id ==
			    p->devices[i]->user_gpu_id)
				return false;
	}
	if (!kp_lanes_ok(p, h))
		return false;
	for (i = 0; i < p->n_bos; i++) {
		for (j = 0; j < p->n_devices; j++)
			if (p->devices[j]->user_gpu_id == p->bos[i]->gpu_id)
				break;
		if (j == p->n_devices)
			return false;
		if (p->bos[i]->has_contents && !p->bos[i]->has_checksum)
			return false;
		if (p->bos[i]->has_contents && kp_chunked(p) &&
		    !kp_bo_chunks_ok(p, p->bos[i]))
			return false;
	}
	return true;
}

KfdProcess *kp_read_process(int fd, const char *name, const KfdHeader *h)
{
	KfdProcess *p;
	uint8_t *buf;
	size_t len;
	int ret;

	ret = kp_record_read(fd, name, KP_MAX_PROCESS_RECORD, &buf, &len);
	if (ret == -ENODATA)
		kp_err("image %s is truncated: the process record is missing",
		       name);
	if (ret)
		return NULL;
	p = kfd_process__unpack(NULL, len, buf);
	free(buf);
	if (!p) {
		kp_err("image %s is corrupt: cannot parse its process record",
		       name);
		return NULL;
	}
	if (!kp_process_is_consistent(p, h)) {
		kp_err("image %s is corrupt: its devices and BOs disagree", name);
		kfd_process__free_unpacked(p, NULL);
		return NULL;
	}
	return p;
}

void kp_gpu_msg_init(struct kp_gpu_msg *m, const struct kp_gpu *g)
{
	unsigned int i;

	kfd_gpu__init(&m->msg);
	m->msg.gpu_id = g->gpu_id;
	m->msg.node = g->node;
	m->msg.render_minor = g->render_minor;
	m->msg.vram_size = g->vram_size;
	m->msg.name = (char *)g->name;
	m->msg.has_cpu_node = true;
	m->msg.cpu_node = g->cpu_node;
	for (i = 0; i < g->nprops; i++) {
		kfd_prop__init(&m->props[i]);
		m->props[i].key = (char *)g->props[i].key;
		m->props[i].value = g->props[i].value;
		m->pprops[i] = &m->props[i];
	}
	m->msg.n_props = g->nprops;
	m->msg.props = m->pprops;
}

int kp_gpu_from_msg(const KfdGpu *msg, struct kp_gpu *g)
{
	size_t i;
	int ret;

	memset(g, 0, sizeof(*g));
	g->gpu_id = msg->gpu_id;
	g->node = msg->node;
	g->render_minor = msg->render_minor;
	g->vram_size = msg->vram_size;
	g->cpu_node = msg->has_cpu_node ? msg->cpu_node : KP_NO_NODE;
	if (msg->name)
		snprintf(g->name, sizeof(g->name), "%s", msg->name);
	for (i = 0; i < msg->n_props; i++) {
		ret = kp_gpu_set_prop(g, msg->props[i]->key,
				      msg->props[i]->value);
		if (ret)
			return ret;
	}
	return 0;
}

const KfdGpu *kp_header_gpu(const KfdHeader *h, uint32_t gpu_id)
{
	size_t i;

	for (i = 0; i < h->n_gpus; i++)
		if (h->gpus[i]->gpu_id == gpu_id)
			return h->gpus[i];
	return NULL;
}

void kp_alloc_flags_str(uint32_t flags, char *buf, size_t len)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ KFD_IOC_ALLOC_MEM_FLAGS_VRAM, "VRAM" },
		{ KFD_IOC_ALLOC_MEM_FLAGS_GTT, "GTT" },
		{ KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, "USERPTR" },
		{ KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, "DOORBELL" },
		{ KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP, "MMIO_REMAP" },
		{ (uint32_t)KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, "WRITABLE" },
		{ KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE, "EXECUTABLE" },
		{ KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC, "PUBLIC" },
		{ KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE, "NO_SUBSTITUTE" },
		{ KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM, "AQL_QUEUE_MEM" },
		{ KFD_IOC_ALLOC_MEM_FLAGS_COHERENT, "COHERENT" },
		{ KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED, "UNCACHED" },
	};
	uint32_t rest = flags;
	size_t used = 0, i;

	buf[0] = '\0';
	for (i = 0; i < KP_ARRAY_SIZE(names) && used < len; i++) {
		if (!(flags & names[i].bit))
			continue;
		used += snprintf(buf + used, len - used, "%s%s",
				 used ? "|" : "", names[i].name);
		rest &= ~names[i].bit;
	}
	if (rest && used < len)
		used += snprintf(buf + used, len - used, "%s0x%x",
				 used ? "|" : "", rest);
	if (!used && len)
		snprintf(buf, len, "0");
}
