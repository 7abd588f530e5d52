/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fuzz input: several image files in one buffer, so that a mutation can
 * touch a kfd image, a render image and a pages image together.
 *
 *   repeated { u8 kind; u32 gpu_id; u32 len; u8 data[len]; }  (little endian)
 *
 * kind % 3: 0 a kfd image, 1 a render image, 2 a pages image (of GPU
 * gpu_id). (kind / 3) % 4, the slot, gives the image id: slot 0 kfd-1,
 * render-2, kfd-pages-1-<gpu_id> (the only files of the first format,
 * whose inputs read the same); slot s > 0 kfd-<2+s>, render-<5+s>,
 * kfd-pages-<2+s>-<gpu_id>. (kind / 12) % 2 = 1 puts the file in the
 * subdirectory "parent" (CRIU's link to the previous dump's images), so
 * that an input can hold aliases of each other and an incremental image
 * with its parents. (kind / 24) % KP_MAX_LANES, the lane, names a pages
 * image of a lane other than 0: kfd-pages-<id>-<gpu_id>-<lane>. A short tail is ignored; at most KF_MAX_FILES files
 * are taken.
 */
#ifndef KFD_FUZZ_BUNDLE_H
#define KFD_FUZZ_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_MAX_FILES	8
#define KF_ITEM_HDR	9

enum kf_kind { KF_KFD, KF_RENDER, KF_PAGES };

#define KF_SLOTS	4

struct kf_file {
	enum kf_kind kind;
	unsigned int slot;	/* the image id, see above */
	bool parent;		/* in parent/ */
	uint32_t lane;		/* pages: which of the GPU's images */
	uint32_t gpu_id;
	const uint8_t *data;
	size_t len;
};

/* Split @buf; returns the number of files (at most KF_MAX_FILES). */
unsigned int kf_split(const uint8_t *buf, size_t len, struct kf_file *f);
/* The path of @f below the bundle's directory (KP_NAME_LEN + 7 bytes). */
void kf_name(const struct kf_file *f, char *name);
/*
 * The kind byte of a file of @kind in @slot, in parent/ if @parent, of
 * @lane (pages; 0 for the others).
 */
uint8_t kf_kind_byte(enum kf_kind kind, unsigned int slot, bool parent,
		     unsigned int lane);
/*
 * Append one item of kind byte @kind (an enum kf_kind, or kf_kind_byte())
 * to @out (at @*off, within @cap); -1 if it does not fit.
 */
int kf_append(uint8_t *out, size_t cap, size_t *off, unsigned int kind,
	      uint32_t gpu_id, const void *data, size_t len);

#endif /* KFD_FUZZ_BUNDLE_H */
