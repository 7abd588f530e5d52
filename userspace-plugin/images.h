/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The plugin's image files: names, records, and the protobuf messages of
 * kfd_image.proto. Every file is written and read front to back; each
 * record carries its length in front (no seeking, so that a stream of
 * images would do).
 */
#ifndef KFD_PLUGIN_IMAGES_H
#define KFD_PLUGIN_IMAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "checksum.h"
#include "kfd_image.pb-c.h"
#include "topology.h"

/* Format version this plugin writes, and the newest it reads. */
#define KP_IMAGE_VERSION	4

/*
 * Version 2 keeps BO contents in chunks (kfd_image.proto, KfdChunk): zero
 * chunks are not stored, chunks equal to the parent image's are referred
 * to. KFD_CHUNK_SIZE (bytes, k/M suffixes, a power of two from 4 KiB to
 * 64 MiB) overrides the default at dump.
 */
#define KP_CHUNK_SIZE		(64U << 10)
/*
 * Version 3 names the function of the chunk checksums (KfdProcess.
 * chunk_sum); version 2 images use fold64.
 */
static inline enum kp_sum_kind kp_process_sum_kind(const KfdProcess *p)
{
	return p->has_chunk_sum ? (enum kp_sum_kind)p->chunk_sum :
				  KP_SUM_FOLD64;
}
#define KP_MIN_CHUNK_SIZE	(4U << 10)
#define KP_MAX_CHUNK_SIZE	(64U << 20)
/* "parent" links a reader follows at most (pre-dumps and dumps). */
#define KP_MAX_PARENT_DEPTH	64

/* Bounds on what a reader accepts (a corrupt length must not OOM us). */
#define KP_MAX_HEADER_RECORD	(16ULL << 20)
#define KP_MAX_PROCESS_RECORD	(1ULL << 30)

#define KP_NAME_LEN		64

void kp_name_kfd(char *buf, uint32_t id);
void kp_name_render(char *buf, uint32_t id);
/*
 * Version 4 spreads a GPU's BOs over up to KP_MAX_LANES pages images
 * (KfdBo.lane), so that a dump has one writer per file and more than one
 * per GPU: "kfd-pages-<id>-<gpu>.img" for lane 0 (the only one before),
 * "kfd-pages-<id>-<gpu>-<lane>.img" for the others.
 */
#define KP_MAX_LANES		4U
void kp_name_pages(char *buf, uint32_t id, uint32_t gpu_id, uint32_t lane);
/* Parse "kfd-<id>.img" / "render-<id>.img"; false for other names. */
bool kp_parse_name_kfd(const char *name, uint32_t *id);
bool kp_parse_name_render(const char *name, uint32_t *id);
/* Either pages name; *lane is 0 for the first. */
bool kp_parse_name_pages(const char *name, uint32_t *id, uint32_t *gpu_id,
			 uint32_t *lane);
/* The pages image (lane) of its GPU that holds BO @b's chunks. */
static inline uint32_t kp_bo_lane(const KfdBo *b)
{
	return b->has_lane ? b->lane : 0;
}
/* Are BO @b's contents in the pages image of GPU @gpu_id, lane @lane? */
static inline bool kp_bo_in_pages(const KfdBo *b, uint32_t gpu_id,
				  uint32_t lane)
{
	return b->has_contents && b->gpu_id == gpu_id &&
	       kp_bo_lane(b) == lane;
}

/*
 * The directory images live in: CRIU's (criu_get_image_dir()) inside
 * CRIU, else the one set with kp_set_image_dir() (kfd-inspect, tests).
 */
void kp_set_image_dir(int dirfd);
int kp_image_dir(void);

/* Create (truncate) an image for writing; fd or -errno. */
int kp_img_create(const char *name);
/*
 * Open an image for reading; fd or -errno (-ENOENT if absent; -EINVAL,
 * logged, if it is no regular file). Never blocks (a FIFO is refused).
 */
int kp_img_open(const char *name);
/* The same in directory @dirfd (parent images). */
int kp_img_openat(int dirfd, const char *name);

/* A record: the 8-byte length, then @len bytes. */
int kp_record_write(int fd, const void *data, size_t len);
int kp_record_write_len(int fd, uint64_t len);
/* Pack @msg into one record. */
int kp_record_write_msg(int fd, const ProtobufCMessage *msg);
/*
 * Read a record's length (at most @max). Returns 0, -ENODATA at a clean
 * end of file, or another -errno with an error logged naming @name.
 */
int kp_record_read_len(int fd, const char *name, uint64_t max,
		       uint64_t *len);
/* Read one record into a new buffer (free() it). Errors as above. */
int kp_record_read(int fd, const char *name, uint64_t max, uint8_t **buf,
		   size_t *len);

/*
 * Read and check the header record: version, kind. NULL with an error
 * logged on failure (free with kfd_header__free_unpacked(h, NULL)).
 */
KfdHeader *kp_read_header(int fd, const char *name);
/* Read and check the process record against @h. NULL on failure. */
KfdProcess *kp_read_process(int fd, const char *name, const KfdHeader *h);

/* Chunks of a BO of @size bytes, and the length of chunk @c. */
uint64_t kp_nchunks(uint64_t size, uint32_t chunk);
size_t kp_chunk_len(uint64_t size, uint32_t chunk, uint64_t c);
/* Is @p chunked (version 2 contents)? */
static inline bool kp_chunked(const KfdProcess *p)
{
	return p->has_chunk_size;
}
/* Bytes of BO @b in its pages image (every byte in version 1). */
uint64_t kp_bo_stored(const KfdProcess *p, const KfdBo *b);
/* Does BO @b have a chunk that refers to the parent image? */
bool kp_bo_has_parent_chunks(const KfdProcess *p, const KfdBo *b);
/* A chunk size is valid: a power of two within the bounds above. */
bool kp_chunk_size_ok(uint64_t chunk);

/* A KfdGpu message pointing into a struct kp_gpu (no allocation). */
struct kp_gpu_msg {
	KfdGpu msg;
	KfdProp props[KP_MAX_PROPS];
	KfdProp *pprops[KP_MAX_PROPS];
};

void kp_gpu_msg_init(struct kp_gpu_msg *m, const struct kp_gpu *g);
/* The topology entry an image describes. 0 or -errno. */
int kp_gpu_from_msg(const KfdGpu *msg, struct kp_gpu *g);

/* The GPU of a header with gpu_id @gpu_id, or NULL. */
const KfdGpu *kp_header_gpu(const KfdHeader *h, uint32_t gpu_id);

/* "VRAM|WRITABLE|..." for KFD_IOC_ALLOC_MEM_FLAGS_* bits. */
void kp_alloc_flags_str(uint32_t flags, char *buf, size_t len);

#endif /* KFD_PLUGIN_IMAGES_H */
