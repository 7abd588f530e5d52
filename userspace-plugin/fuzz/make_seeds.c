// SPDX-License-Identifier: GPL-2.0
/*
 * Seeds for kfd-image-fuzz, made with the plugin's own image writer:
 *
 *   kfd-fuzz-seeds OUTDIR [IMAGES_DIR...]
 *
 * writes OUTDIR/synthetic-* (a process on the two GPUs of fake_kfd.c with
 * VRAM, GTT and USERPTR BOs, kernel-format private data and pages images
 * whose checksums match, plus a render image, aliases (one of a missing
 * image, two of each other) and sparse and incremental images, one with
 * its parent in parent/), and for every
 * IMAGES_DIR (a real criu dump) OUTDIR/real-N: its first kfd PROCESS image,
 * that image's pages images and one render image, renumbered to the ids
 * the bundle format uses.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/kfd_ioctl.h>

#include "bundle.h"
#include "checksum.h"
#include "fake_kfd.h"
#include "images.h"
#include "util.h"

#define KS_CAP		(8u << 20)

static uint8_t *ks_buf;
static size_t ks_len;

static void ks_die(const char *what)
{
	perror(what);
	exit(2);
}

/* The bytes @fill writes into a memfd. */
static void ks_add_msgs(unsigned int kind, uint32_t gpu,
			const ProtobufCMessage *a, const ProtobufCMessage *b)
{
	int fd = memfd_create("img", MFD_CLOEXEC);
	struct stat st;
	uint8_t *p;

	if (fd < 0 || kp_record_write_msg(fd, a) ||
	    (b && kp_record_write_msg(fd, b)) || fstat(fd, &st))
		ks_die("memfd");
	p = malloc((size_t)st.st_size);
	if (!p || pread(fd, p, (size_t)st.st_size, 0) != st.st_size)
		ks_die("pread");
	if (kf_append(ks_buf, KS_CAP, &ks_len, kind, gpu, p,
		      (size_t)st.st_size))
		ks_die("bundle too big");
	free(p);
	close(fd);
}

static void ks_save(const char *dir, const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, ks_buf, ks_len) != (ssize_t)ks_len)
		ks_die(path);
	close(fd);
	ks_len = 0;
}

/* Private data in the kernel's version-1 layout (process, devices, ...). */
static size_t ks_priv(uint8_t *p)
{
	static const uint32_t types[] = { 1, 2, 2, 3, 3, 3, 3, 4, 5, 5 };
	static const uint32_t sizes[] = { 32, 8, 8, 16, 16, 16, 16, 120, 16, 16 };
	uint32_t hdr[6] = { 0x4b465343u, 1, 0, 0, 10, 0 };
	size_t off = sizeof(hdr), i;

	for (i = 0; i < 10; i++) {
		memcpy(p + off, &types[i], 4);
		memcpy(p + off + 4, &sizes[i], 4);
		memset(p + off + 8, (int)i, sizes[i]);
		off += 8 + sizes[i];
	}
	hdr[2] = (uint32_t)off;
	memcpy(p, hdr, sizeof(hdr));
	return off;
}

/*
 * Image kfd-1 (in parent/ if @in_parent): @h, @p, and per GPU of @g the
 * @dlen bytes of @data as its pages image (none if @dlen is NULL).
 */
static void ks_add_image(bool in_parent, KfdHeader *h, KfdProcess *p,
			 const struct kp_gpu *g, uint8_t data[][16384],
			 const size_t *dlen)
{
	unsigned int d;

	ks_add_msgs(kf_kind_byte(KF_KFD, 0, in_parent, 0), 0, &h->base,
		    &p->base);
	for (d = 0; d < KF_NGPUS; d++)
		if (kf_append(ks_buf, KS_CAP, &ks_len,
			      kf_kind_byte(KF_PAGES, 0, in_parent, 0),
			      g[d].gpu_id, data[d], dlen ? dlen[d] : 0))
			ks_die("bundle");
}

/*
 * Format 2 seeds from the process of ks_synthetic(): chunks of 4 KiB, the
 * first chunk of every BO zero and not stored, the others stored; then
 * the same as an incremental image whose second chunks are the parent's,
 * once without its parent (the restore must refuse it cleanly) and once
 * with the sparse image as its parent, in parent/ (it restores).
 */
static void ks_chunked(const char *out, KfdHeader *h, KfdProcess *p,
		       const KfdHeader *r, const struct kp_gpu *g)
{
	static uint8_t kinds[8][2];
	static uint64_t sums[8][2];
	uint8_t data[KF_NGPUS][16384], chunk[4096], *parent;
	size_t dlen[KF_NGPUS] = { 0 }, i, c, n, parent_len;
	struct kp_sum s;
	unsigned int d;

	p->has_chunk_size = true;
	p->chunk_size = sizeof(chunk);
	for (i = 0; i < p->n_bos; i++) {
		KfdBo *b = p->bos[i];

		if (!b->has_contents)
			continue;
		d = b->gpu_id == g[0].gpu_id ? 0 : 1;
		n = b->size / sizeof(chunk);
		kp_sum_init(&s);
		for (c = 0; c < n; c++) {
			memset(chunk, c ? 0x40 + (int)i : 0, sizeof(chunk));
			kinds[i][c] = c ? KFD_CHUNK__KFD_CHUNK_DATA :
					  KFD_CHUNK__KFD_CHUNK_ZERO;
			sums[i][c] = kp_sum_buf(chunk, sizeof(chunk));
			kp_sum_u64(&s, sums[i][c]);
			if (c) {
				memcpy(data[d] + dlen[d], chunk, sizeof(chunk));
				dlen[d] += sizeof(chunk);
			}
		}
		b->checksum = kp_sum_final(&s);
		b->has_chunks = true;
		b->chunks.len = n;
		b->chunks.data = kinds[i];
		b->n_chunk_sums = n;
		b->chunk_sums = sums[i];
	}
	ks_add_image(false, h, p, g, data, dlen);
	ks_add_msgs(KF_RENDER, 0, &r->base, NULL);
	ks_save(out, "synthetic-sparse");

	/* The same, as the parent image of the chain below. */
	h->has_dump_id = true;
	h->dump_id = 0x1111;
	ks_add_image(true, h, p, g, data, dlen);
	parent = malloc(ks_len);
	if (!parent)
		ks_die("malloc");
	memcpy(parent, ks_buf, ks_len);
	parent_len = ks_len;
	ks_len = 0;
	h->dump_id = 0x2222;

	/* Incremental: second chunks in the parent, nothing stored. */
	p->has_parent_dump_id = true;
	p->has_parent_image = true;
	p->has_parent_depth = true;
	p->parent_dump_id = 0x1111;
	p->parent_image = 1;
	p->parent_depth = 1;
	for (i = 0; i < p->n_bos; i++) {
		if (!p->bos[i]->has_contents)
			continue;
		for (c = 1; c < p->bos[i]->chunks.len; c++)
			kinds[i][c] = KFD_CHUNK__KFD_CHUNK_PARENT;
		p->bos[i]->has_parent_bo = true;
		p->bos[i]->parent_bo = (uint32_t)i;
	}
	ks_add_image(false, h, p, g, data, NULL);
	ks_save(out, "synthetic-incremental");

	/* With its parent. */
	if (ks_len + parent_len > KS_CAP)
		ks_die("bundle");
	memcpy(ks_buf, parent, parent_len);
	ks_len = parent_len;
	ks_add_image(false, h, p, g, data, NULL);
	ks_save(out, "synthetic-chain");
	free(parent);
}

static void ks_synthetic(const char *out)
{
	static const struct {
		uint32_t dev;
		uint64_t size;
		uint32_t flags;
		bool contents;
	} bo[] = {
		{ 0, 8192, KFD_IOC_ALLOC_MEM_FLAGS_VRAM, true },
		{ 1, 4096, KFD_IOC_ALLOC_MEM_FLAGS_VRAM, true },
		{ 0, 4096, KFD_IOC_ALLOC_MEM_FLAGS_GTT, true },
		{ 1, 4096, KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, false },
		{ 0, 8192, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, false },
	};
	const unsigned int nb = sizeof(bo) / sizeof(bo[0]);
	struct kp_gpu g[KF_NGPUS];
	struct kp_gpu_msg gm[KF_NGPUS];
	KfdGpu *gpus[KF_NGPUS];
	KfdDevice devs[KF_NGPUS], *pdevs[KF_NGPUS];
	KfdBo bos[8], *pbos[8];
	uint8_t priv[1024], contents[KF_NGPUS][16384];
	size_t clen[KF_NGPUS] = { 0 };
	KfdHeader h, r, al;
	KfdProcess p;
	unsigned int i, d;

	kfd_header__init(&h);
	h.version = KP_IMAGE_VERSION;
	h.kind = KFD_IMAGE_KIND__KFD_IMAGE_PROCESS;
	h.has_pid = true;
	h.pid = 42;
	h.has_dump_id = true;
	h.dump_id = 0x1234;
	h.has_kfd_major = h.has_kfd_minor = true;
	h.kfd_major = 1;
	h.kfd_minor = 12;
	kfd_process__init(&p);
	for (i = 0; i < KF_NGPUS; i++) {
		kf_fake_gpu(i, &g[i]);
		kp_gpu_msg_init(&gm[i], &g[i]);
		gpus[i] = &gm[i].msg;
		kfd_device__init(&devs[i]);
		devs[i].user_gpu_id = g[i].gpu_id;
		devs[i].gpu_id = g[i].gpu_id;
		pdevs[i] = &devs[i];
	}
	h.n_gpus = KF_NGPUS;
	h.gpus = gpus;
	p.num_devices = p.n_devices = KF_NGPUS;
	p.devices = pdevs;
	for (i = 0; i < nb; i++) {
		d = bo[i].dev;
		kfd_bo__init(&bos[i]);
		bos[i].addr = 0x100000000ULL + (uint64_t)i * 0x10000000ULL;
		bos[i].size = bo[i].size;
		bos[i].offset = (uint64_t)(i + 1) << 20;
		bos[i].gpu_id = g[d].gpu_id;
		bos[i].alloc_flags = bo[i].flags;
		bos[i].has_contents = bo[i].contents;
		if (bo[i].contents) {
			memset(contents[d] + clen[d], 0x40 + (int)i,
			       bo[i].size);
			bos[i].has_checksum = true;
			bos[i].checksum = kp_sum_buf(contents[d] + clen[d],
						     bo[i].size);
			clen[d] += bo[i].size;
		}
		pbos[i] = &bos[i];
	}
	p.num_bos = p.n_bos = nb;
	p.bos = pbos;
	p.num_objects = 3;
	p.priv_data.data = priv;
	p.priv_data.len = ks_priv(priv);

	kfd_header__init(&r);
	r.version = KP_IMAGE_VERSION;
	r.kind = KFD_IMAGE_KIND__KFD_IMAGE_RENDER;
	r.n_gpus = 1;
	r.gpus = gpus;
	r.has_render_gpu_id = true;
	r.render_gpu_id = g[0].gpu_id;
	r.has_dump_id = true;
	r.dump_id = h.dump_id;

	/* The whole dump. */
	ks_add_msgs(KF_KFD, 0, &h.base, &p.base);
	ks_add_msgs(KF_RENDER, 0, &r.base, NULL);
	for (d = 0; d < KF_NGPUS; d++) {
		uint8_t rec[8 + sizeof(contents[0])];
		uint64_t l = clen[d];

		for (i = 0; i < 8; i++)
			rec[i] = (uint8_t)(l >> (8 * i));
		memcpy(rec + 8, contents[d], clen[d]);
		if (kf_append(ks_buf, KS_CAP, &ks_len, KF_PAGES, g[d].gpu_id,
			      rec, 8 + clen[d]))
			ks_die("bundle");
	}
	ks_save(out, "synthetic-dump");

	/* The process alone, without contents. */
	ks_add_msgs(KF_KFD, 0, &h.base, &p.base);
	ks_save(out, "synthetic-kfd");

	/* A render image alone, and an alias of a missing image. */
	ks_add_msgs(KF_RENDER, 0, &r.base, NULL);
	ks_save(out, "synthetic-render");
	kfd_header__init(&al);
	al.version = KP_IMAGE_VERSION;
	al.kind = KFD_IMAGE_KIND__KFD_IMAGE_ALIAS;
	al.has_alias_of = true;
	al.alias_of = 7;
	ks_add_msgs(KF_KFD, 0, &al.base, NULL);
	ks_save(out, "synthetic-alias");
	/* kfd-1.img an alias of kfd-3.img, which is an alias of kfd-1.img. */
	al.alias_of = 3;
	ks_add_msgs(KF_KFD, 0, &al.base, NULL);
	al.alias_of = 1;
	ks_add_msgs(kf_kind_byte(KF_KFD, 1, false, 0), 0, &al.base, NULL);
	ks_save(out, "synthetic-alias-cycle");

	ks_chunked(out, &h, &p, &r, g);
}

static void ks_add_file(int dfd, const char *name, unsigned int kind,
			uint32_t gpu)
{
	struct stat st;
	uint8_t *p;
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st))
		ks_die(name);
	if ((size_t)st.st_size > KS_CAP / 2) {
		fprintf(stderr, "%s: too big for a seed, skipped\n", name);
		close(fd);
		return;
	}
	p = malloc((size_t)st.st_size + 1);
	if (!p || read(fd, p, (size_t)st.st_size) != st.st_size)
		ks_die(name);
	if (kf_append(ks_buf, KS_CAP, &ks_len, kind, gpu, p,
		      (size_t)st.st_size))
		fprintf(stderr, "%s: does not fit, skipped\n", name);
	free(p);
	close(fd);
}

/* The first PROCESS kfd image of @dir, its pages and a render image. */
static int ks_real(const char *out, const char *dir, int n)
{
	uint32_t id, kid = 0, gpu, pid, lane;
	bool have_kfd = false, have_render = false;
	char name[64];
	struct dirent *de;
	KfdHeader *h;
	int dfd, fd;
	DIR *d;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		ks_die(dir);
	kp_set_image_dir(dfd);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (kp_parse_name_kfd(de->d_name, &id) && !have_kfd) {
			fd = kp_img_open(de->d_name);
			h = fd < 0 ? NULL : kp_read_header(fd, de->d_name);
			if (h && h->kind == KFD_IMAGE_KIND__KFD_IMAGE_PROCESS) {
				ks_add_file(dfd, de->d_name, KF_KFD, 0);
				have_kfd = true;
				kid = id;
			}
			if (h)
				kfd_header__free_unpacked(h, NULL);
			if (fd >= 0)
				close(fd);
		} else if (kp_parse_name_render(de->d_name, &id) &&
			   !have_render) {
			ks_add_file(dfd, de->d_name, KF_RENDER, 0);
			have_render = true;
		}
	}
	if (d)
		rewinddir(d);
	while (have_kfd && d && (de = readdir(d)))
		if (kp_parse_name_pages(de->d_name, &pid, &gpu, &lane) &&
		    pid == kid)
			ks_add_file(dfd, de->d_name,
				    kf_kind_byte(KF_PAGES, 0, false, lane), gpu);
	if (d)
		closedir(d);
	close(dfd);
	if (!have_kfd) {
		fprintf(stderr, "%s: no kfd process image\n", dir);
		ks_len = 0;
		return -1;
	}
	snprintf(name, sizeof(name), "real-%d", n);
	ks_save(out, name);
	return 0;
}

int main(int argc, char **argv)
{
	int i, ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: kfd-fuzz-seeds OUTDIR [IMAGES_DIR...]\n");
		return 2;
	}
	ks_buf = malloc(KS_CAP);
	if (!ks_buf)
		ks_die("malloc");
	mkdir(argv[1], 0755);
	ks_synthetic(argv[1]);
	for (i = 2; i < argc; i++)
		if (ks_real(argv[1], argv[i], i - 1))
			ret = 1;
	free(ks_buf);
	return ret;
}
