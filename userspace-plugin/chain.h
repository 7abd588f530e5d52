/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Incremental images: the parent images a version 2 kfd image refers to.
 *
 * CRIU links every images directory dumped with --prev-images-dir to its
 * parent with a symlink named "parent" (relative to the directory). An
 * incremental kfd image names the image it was compared with (its id, its
 * dump_id, and how many "parent" links up it is: pre-dump directories in
 * between hold no kfd images). A PARENT chunk of a BO holds what the same
 * chunk of that image's BO parent_bo holds, which may be a PARENT chunk
 * in turn.
 *
 * At dump (kp_base_find()): the nearest ancestor image of the same
 * process, whose chunk checksums tell which chunks did not change.
 * At restore (kp_chain_open()): the whole chain, every link checked (the
 * dump_id, the BOs referred to, the size of each pages image) before any
 * data is read; kp_chain_read() then reads a chunk wherever it lives.
 */
#ifndef KFD_PLUGIN_CHAIN_H
#define KFD_PLUGIN_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "images.h"

/* "parent/" up to KP_MAX_PARENT_DEPTH times, then an image name. */
#define KP_DIR_LEN	(KP_MAX_PARENT_DEPTH * 7 + 1)
#define KP_WHERE_LEN	(KP_DIR_LEN + KP_NAME_LEN)

/*
 * The memory a restore gives one image's chain of parents: their process
 * records (up to KP_MAX_PROCESS_RECORD each, and KP_MAX_PARENT_DEPTH of
 * them) and chunk offsets together. Variable for the unit tests.
 */
#define KP_MAX_CHAIN_BYTES	(1ULL << 30)
extern uint64_t kp_chain_max_bytes;

/* One image of a chain. */
struct kp_chain {
	char where[KP_WHERE_LEN];	/* "parent/kfd-3.img", for messages */
	uint64_t dump_id;
	KfdProcess *p;
	int *pages;			/* per device and lane: -1 or an fd */
	char (*pages_name)[KP_WHERE_LEN];
	uint64_t **off;			/* per BO: each DATA chunk's offset */
	struct kp_chain *parent;
};

/*
 * The chain the process record @p (of the image in @dirfd, called @where
 * in messages, e.g. "kfd-3.img") refers to: *out is NULL if @p is no
 * incremental image. 0, or -errno with an error logged.
 */
int kp_chain_open(int dirfd, const char *where, const KfdProcess *p,
		  struct kp_chain **out);
void kp_chain_free(struct kp_chain *c);

/*
 * The @len bytes of chunk @c of BO @bo of image @ch, following PARENT
 * chunks. 0, or -errno with an error logged. Thread safe.
 */
int kp_chain_read(const struct kp_chain *ch, uint32_t bo, uint64_t c,
		  void *buf, size_t len);

/* The image a dump compares its chunks with. */
struct kp_base {
	KfdProcess *p;			/* NULL: none, a full dump */
	uint64_t dump_id;
	uint32_t id;			/* kfd-<id>.img */
	uint32_t depth;			/* "parent" links up */
	char where[KP_WHERE_LEN];
	uint32_t *order;		/* BO indices by (gpu_id, addr) */
};

/*
 * At dump, in CRIU's images directory: the nearest ancestor image of pid
 * @pid with chunks of size @chunk. No parent, or none usable, is no error
 * (b->p stays NULL; a damaged one is warned about).
 */
void kp_base_find(uint32_t pid, uint32_t chunk, struct kp_base *b);
/* The chunk checksums of @b's BO like this one, or NULL. */
const uint64_t *kp_base_sums(const struct kp_base *b, uint64_t addr,
			     uint64_t size, uint32_t gpu_id, uint32_t flags,
			     uint32_t *index);
void kp_base_free(struct kp_base *b);

#endif /* KFD_PLUGIN_CHAIN_H */
