// SPDX-License-Identifier: GPL-2.0
/*
 * kfd-inspect: show what the kfd plugin saved in a CRIU images directory.
 *
 *   kfd-inspect [--verify] DIR
 *
 * For each /dev/kfd image: the GPUs (ids, render minor, main properties),
 * the device and BO lists (sizes, decoded flags, offsets, checksums), the
 * queue and event counts (the ioctl's num_objects and what the kernel's
 * private data header says) and the pages images, with the bytes of
 * contents stored against the BOs' sizes (format 2 stores no zero chunks
 * and, incremental, no chunk its parent image has). --verify recomputes
 * the checksums from the pages images, following the parent images. Exit status 1 if an image is damaged
 * or a checksum does not match.
 */
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
#include "checksum.h"
#include "images.h"
#include "util.h"

/*
 * The start of kfdsim's private data (drivers/kfdsim/kfd/kfd_criu.h), for
 * display only: the plugin itself treats the private data as opaque. That
 * header is kernel-internal, so the few fields shown are restated here.
 */
#define KP_PRIV_MAGIC		0x4b465343u	/* "CSFK" */

struct kp_priv_header {
	uint32_t magic;
	uint32_t version;
	uint64_t size;
	uint32_t num_objects;
	uint32_t pad;
};

struct kp_priv_object {
	uint32_t type;
	uint32_t size;		/* payload bytes that follow */
};

static bool verify;

static const char *kp_human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = 0;

	while (u + 1 < KP_ARRAY_SIZE(units) && bytes >= 1024 &&
	       !(bytes % 1024)) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " %s", bytes, units[u]);
	return buf;
}

static uint64_t kp_msg_prop(const KfdGpu *g, const char *key)
{
	size_t i;

	for (i = 0; i < g->n_props; i++)
		if (!strcmp(g->props[i]->key, key))
			return g->props[i]->value;
	return 0;
}

static void kp_show_gpu(const KfdGpu *g)
{
	char vram[32];

	printf("  GPU %u: node %u, renderD%u, %s, gfx_target_version %" PRIu64 ", device_id 0x%" PRIx64 ", simd_count %" PRIu64 ", VRAM %s, fw %" PRIu64 ", sdma_fw %" PRIu64 "\n",
	       g->gpu_id, g->node, g->render_minor,
	       g->name && *g->name ? g->name : "?",
	       kp_msg_prop(g, "gfx_target_version"),
	       kp_msg_prop(g, "device_id"), kp_msg_prop(g, "simd_count"),
	       kp_human(g->vram_size, vram, sizeof(vram)),
	       kp_msg_prop(g, "fw_version"), kp_msg_prop(g, "sdma_fw_version"));
}

/* The header and object types of the kernel's private data. */
static void kp_show_priv(const ProtobufCBinaryData *d)
{
	static const char *const types[] = {
		[1] = "process", [2] = "device", [3] = "bo", [4] = "queue",
		[5] = "event", [6] = "svm range",
	};
	unsigned int count[KP_ARRAY_SIZE(types)] = { 0 }, other = 0, i;
	struct kp_priv_header hdr;
	struct kp_priv_object obj;
	size_t off;

	printf("  private data: %zu bytes", d->len);
	if (d->len < sizeof(hdr)) {
		printf(" (too short for a kfdsim header)\n");
		return;
	}
	memcpy(&hdr, d->data, sizeof(hdr));
	if (hdr.magic != KP_PRIV_MAGIC) {
		printf(", not kfdsim's layout (magic 0x%08x)\n", hdr.magic);
		return;
	}
	off = sizeof(hdr);
	for (i = 0; i < hdr.num_objects; i++) {
		if (d->len - off < sizeof(obj))
			break;
		memcpy(&obj, d->data + off, sizeof(obj));
		off += sizeof(obj);
		if (obj.size > d->len - off)
			break;
		off += obj.size;
		if (obj.type < KP_ARRAY_SIZE(types) && types[obj.type])
			count[obj.type]++;
		else
			other++;
	}
	printf(": magic CSFK, version %u, %u objects:", hdr.version,
	       hdr.num_objects);
	for (i = 0; i < KP_ARRAY_SIZE(types); i++)
		if (types[i] && count[i])
			printf(" %s %u", types[i], count[i]);
	if (other)
		printf(" unknown %u", other);
	printf("\n");
	if (off != d->len || hdr.size != d->len)
		printf("  private data: layout does not add up (header says %" PRIu64 " bytes)\n",
		       (uint64_t)hdr.size);
}

/* Version 1: the BOs' bytes, one after the other. */
static int kp_verify_flat(int fd, uint32_t gpu_id, const KfdProcess *p,
			  uint8_t *buf, size_t chunk)
{
	unsigned int bad = 0;
	struct kp_sum sum;
	uint64_t off;
	ssize_t n;
	size_t i;

	for (i = 0; i < p->n_bos; i++) {
		const KfdBo *b = p->bos[i];

		if (b->gpu_id != gpu_id || !b->has_contents)
			continue;
		kp_sum_init(&sum);
		for (off = 0; off < b->size; off += (uint64_t)n) {
			n = kp_read_all(fd, buf, KP_MIN(chunk, b->size - off));
			if (n <= 0)
				break;
			kp_sum_update(&sum, buf, (size_t)n);
		}
		if (off != b->size || kp_sum_final(&sum) != b->checksum) {
			printf("    BO 0x%016" PRIx64 ": checksum mismatch\n",
			       b->addr);
			bad++;
		}
	}
	return bad;
}

/*
 * Version 2: this image's DATA chunks in order, the others from the
 * parent images (@chain) or zero; every chunk's and BO's checksum.
 */
static int kp_verify_chunks(int fd, uint32_t gpu_id, uint32_t lane,
			    const KfdProcess *p, const struct kp_chain *chain,
			    uint8_t *buf)
{
	unsigned int bad = 0;
	struct kp_sum sum;
	uint64_t c, n;
	size_t i, len;
	bool ok;

	for (i = 0; i < p->n_bos; i++) {
		const KfdBo *b = p->bos[i];

		if (!kp_bo_in_pages(b, gpu_id, lane))
			continue;
		kp_sum_init(&sum);
		n = kp_nchunks(b->size, p->chunk_size);
		for (c = 0, ok = true; c < n && ok; c++) {
			len = kp_chunk_len(b->size, p->chunk_size, c);
			switch (b->chunks.data[c]) {
			case KFD_CHUNK__KFD_CHUNK_DATA:
				ok = kp_read_all(fd, buf, len) == (ssize_t)len;
				break;
			case KFD_CHUNK__KFD_CHUNK_ZERO:
				memset(buf, 0, len);
				break;
			default:
				ok = chain && !kp_chain_read(chain, b->parent_bo,
							     c, buf, len);
			}
			if (ok && kp_chunk_sum(kp_process_sum_kind(p), buf,
					       len) != b->chunk_sums[c]) {
				printf("    BO 0x%016" PRIx64 ": checksum mismatch in the chunk at offset %" PRIu64 "\n",
				       b->addr, c * p->chunk_size);
				ok = false;
			}
			kp_sum_u64(&sum, b->chunk_sums[c]);
		}
		if (!ok || kp_sum_final(&sum) != b->checksum) {
			printf("    BO 0x%016" PRIx64 ": checksum mismatch\n",
			       b->addr);
			bad++;
		}
	}
	return bad;
}

/*
 * The pages image of one GPU's lane (lane 0: "GPU <n>", the others "GPU
 * <n>, lane <l>", shown only if BOs are in it); with --verify, the
 * checksums too.
 */
static int kp_show_pages(uint32_t id, uint32_t gpu_id, uint32_t lane,
			 const KfdProcess *p, const struct kp_chain *chain)
{
	uint64_t want = 0, logical = 0, have, file;
	char name[KP_NAME_LEN], sz[32], lsz[32], who[48];
	unsigned int nbos = 0, bad;
	size_t i, chunk = 1 << 20;
	struct stat st;
	uint8_t *buf = NULL;
	int fd, ret = 0;

	for (i = 0; i < p->n_bos; i++) {
		if (kp_bo_in_pages(p->bos[i], gpu_id, lane)) {
			want += kp_bo_stored(p, p->bos[i]);
			logical += p->bos[i]->size;
			nbos++;
		}
	}
	if (lane && !nbos)
		return 0;
	if (lane)
		snprintf(who, sizeof(who), "GPU %u, lane %u", gpu_id, lane);
	else
		snprintf(who, sizeof(who), "GPU %u", gpu_id);
	kp_name_pages(name, id, gpu_id, lane);
	fd = kp_img_open(name);
	if (fd < 0) {
		/* A format 2 image stores nothing for zero or unchanged BOs. */
		if (kp_chunked(p) && !want && nbos) {
			printf("  pages of %s: none stored for %u BOs (%s of contents)\n",
			       who, nbos, kp_human(logical, lsz, sizeof(lsz)));
			return 0;
		}
		printf("  pages of %s: %s: %s%s\n", who, name,
		       strerror(-fd), nbos ? " (MISSING)" : "");
		return nbos ? -1 : 0;
	}
	fstat(fd, &st);
	file = (uint64_t)st.st_size;
	have = file;
	if (!kp_chunked(p)) {
		if (kp_record_read_len(fd, name, UINT64_MAX, &have)) {
			close(fd);
			return -1;
		}
		file -= 8;
	}
	printf("  pages of %s: %s: %s stored of %s of contents (%" PRIu64 ".%02" PRIu64 "%%) for %u BOs, file %" PRIu64 " bytes%s\n",
	       who, name, kp_human(have, sz, sizeof(sz)),
	       kp_human(logical, lsz, sizeof(lsz)),
	       logical ? have * 100 / logical : 0,
	       logical ? have * 10000 / logical % 100 : 0, nbos,
	       (uint64_t)st.st_size,
	       have != want || file != have ? " (SIZE MISMATCH)" : "");
	if (have != want || file != have)
		ret = -1;
	if (!verify || ret) {
		close(fd);
		return ret;
	}

	if (kp_chunked(p))
		chunk = p->chunk_size;
	buf = malloc(chunk);
	if (!buf) {
		close(fd);
		return -1;
	}
	bad = kp_chunked(p) ?
	      kp_verify_chunks(fd, gpu_id, lane, p, chain, buf) :
	      kp_verify_flat(fd, gpu_id, p, buf, chunk);
	printf("    checksums of %s: %s\n", who, bad ? "MISMATCH" : "ok");
	free(buf);
	close(fd);
	return bad ? -1 : 0;
}

/* " chunks: N stored, N zero, N parent's" */
static void kp_show_chunks(const KfdProcess *p, const KfdBo *b)
{
	unsigned int k[3] = { 0 };
	size_t c;

	for (c = 0; c < b->chunks.len; c++)
		k[b->chunks.data[c]]++;
	printf(" chunks: %u stored, %u zero, %u in the parent", k[1], k[0],
	       k[2]);
	(void)p;
}

static int kp_show_process(uint32_t id, int fd, const char *name,
			   const KfdHeader *h)
{
	char flags[160], sz[32];
	uint64_t logical = 0, stored = 0;
	struct kp_chain *chain = NULL, *link;
	KfdProcess *p;
	uint32_t lane;
	size_t i;
	int ret = 0;

	printf("%s: /dev/kfd of pid %u, image format %u, KFD %u.%u at checkpoint, dump %016" PRIx64 "\n",
	       name, h->pid, h->version, h->kfd_major, h->kfd_minor,
	       h->dump_id);
	for (i = 0; i < h->n_gpus; i++)
		kp_show_gpu(h->gpus[i]);
	p = kp_read_process(fd, name, h);
	if (!p)
		return -1;
	printf("  devices: %u\n", p->num_devices);
	for (i = 0; i < p->n_devices; i++)
		printf("    user gpu_id %u on GPU %u\n",
		       p->devices[i]->user_gpu_id, p->devices[i]->gpu_id);
	printf("  queues and events: %u (num_objects)\n", p->num_objects);
	kp_show_priv(&p->priv_data);
	printf("  BOs: %u\n", p->num_bos);
	for (i = 0; i < p->n_bos; i++) {
		const KfdBo *b = p->bos[i];

		kp_alloc_flags_str(b->alloc_flags, flags, sizeof(flags));
		printf("    0x%016" PRIx64 " %10s gpu %u %s offset 0x%" PRIx64,
		       b->addr, kp_human(b->size, sz, sizeof(sz)), b->gpu_id,
		       flags, b->offset);
		if (!b->has_contents) {
			printf(" (no contents saved)\n");
			continue;
		}
		printf(" checksum 0x%016" PRIx64, b->checksum);
		if (kp_bo_lane(b))
			printf(" lane %u", kp_bo_lane(b));
		if (kp_chunked(p))
			kp_show_chunks(p, b);
		printf("\n");
		logical += b->size;
		stored += kp_bo_stored(p, b);
	}
	printf("  contents: %" PRIu64 " bytes, %" PRIu64 " stored in this image (%" PRIu64 ".%02" PRIu64 "%%)\n",
	       logical, stored, logical ? stored * 100 / logical : 0,
	       logical ? stored * 10000 / logical % 100 : 0);
	if (kp_chunked(p))
		printf("  chunks: %u bytes, checksums %s\n", p->chunk_size,
		       kp_sum_kind_name(kp_process_sum_kind(p)));
	if (p->has_parent_dump_id) {
		printf("  incremental: unchanged chunks are in kfd-%u.img of dump %016" PRIx64 ", %u parent link(s) up\n",
		       p->parent_image, p->parent_dump_id, p->parent_depth);
		if (verify && kp_chain_open(kp_image_dir(), name, p, &chain)) {
			printf("  parent images: DAMAGED OR MISSING\n");
			ret = -1;
		}
		for (link = chain; link; link = link->parent)
			printf("  parent image %s (dump %016" PRIx64 ")\n",
			       link->where, link->dump_id);
	}
	for (i = 0; i < p->n_devices; i++)
		for (lane = 0; lane < KP_MAX_LANES; lane++)
			if (kp_show_pages(id, p->devices[i]->user_gpu_id, lane,
					  p, chain))
				ret = -1;
	kp_chain_free(chain);
	kfd_process__free_unpacked(p, NULL);
	return ret;
}

static int kp_show_image(const char *name, bool kfd, uint32_t id)
{
	KfdHeader *h;
	int fd, ret = 0;

	fd = kp_img_open(name);
	if (fd < 0) {
		printf("%s: %s\n", name, strerror(-fd));
		return -1;
	}
	h = kp_read_header(fd, name);
	if (!h) {
		close(fd);
		return -1;
	}
	if (kfd && h->kind == KFD_IMAGE_KIND__KFD_IMAGE_PROCESS) {
		ret = kp_show_process(id, fd, name, h);
	} else if (kfd && h->kind == KFD_IMAGE_KIND__KFD_IMAGE_ALIAS) {
		printf("%s: another /dev/kfd file of pid %u, see kfd-%u.img\n",
		       name, h->pid, h->alias_of);
	} else if (!kfd && h->kind == KFD_IMAGE_KIND__KFD_IMAGE_RENDER) {
		printf("%s: render node of GPU %u, image format %u\n", name,
		       h->render_gpu_id, h->version);
		kp_show_gpu(kp_header_gpu(h, h->render_gpu_id));
	} else {
		printf("%s: unexpected image kind %u\n", name, h->kind);
		ret = -1;
	}
	kfd_header__free_unpacked(h, NULL);
	close(fd);
	return ret;
}

struct kp_entry {
	bool kfd;
	uint32_t id;
	char name[KP_NAME_LEN];
};

static int kp_entry_cmp(const void *a, const void *b)
{
	const struct kp_entry *x = a, *y = b;

	if (x->kfd != y->kfd)
		return x->kfd ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void usage(void)
{
	fprintf(stderr, "usage: kfd-inspect [--verify] IMAGES_DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct kp_entry *e = NULL, *ne;
	const char *dirname = NULL;
	size_t n = 0, i;
	struct dirent *de;
	uint32_t id;
	int dfd, status = 0, a;
	DIR *dir;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--verify") || !strcmp(argv[a], "-c"))
			verify = true;
		else if (argv[a][0] == '-' || dirname)
			usage();
		else
			dirname = argv[a];
	}
	if (!dirname)
		usage();
	dfd = open(dirname, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		perror(dirname);
		return 2;
	}
	kp_set_image_dir(dfd);
	dir = fdopendir(fcntl(dfd, F_DUPFD_CLOEXEC, 0));
	if (!dir) {
		perror(dirname);
		return 2;
	}
	while ((de = readdir(dir))) {
		bool kfd = kp_parse_name_kfd(de->d_name, &id);

		if (!kfd && !kp_parse_name_render(de->d_name, &id))
			continue;
		ne = realloc(e, (n + 1) * sizeof(*e));
		if (!ne) {
			perror("realloc");
			return 2;
		}
		e = ne;
		e[n].kfd = kfd;
		e[n].id = id;
		if (kfd)
			kp_name_kfd(e[n].name, id);
		else
			kp_name_render(e[n].name, id);
		/* Only the names the plugin writes ("kfd-007.img" is not). */
		if (!strcmp(e[n].name, de->d_name))
			n++;
	}
	closedir(dir);
	if (!n)
		printf("%s: no kfd plugin images\n", dirname);
	if (n)
		qsort(e, n, sizeof(*e), kp_entry_cmp);
	for (i = 0; i < n; i++)
		if (kp_show_image(e[i].name, e[i].kfd, e[i].id))
			status = 1;
	free(e);
	close(dfd);
	return status;
}
