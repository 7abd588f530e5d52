/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fuzz input: several image files in one buffer, so that a mutation can
 * touch a kfd image, a render image and a pages image together.
 *
 *   repeated { u8 kind; u32 gpu_id; u32 len; u8 data[len]; }  (little endian)
 *
 * kind % 3: 0 kfd-1.img, 1 render-2.img, 2 kfd-pages-1-<gpu_id>.img. A
 * short tail is ignored; at most KF_MAX_FILES files are taken.
 */
#ifndef KFD_FUZZ_BUNDLE_H
#define KFD_FUZZ_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#define KF_MAX_FILES	8
#define KF_ITEM_HDR	9

enum kf_kind { KF_KFD, KF_RENDER, KF_PAGES };

struct kf_file {
	enum kf_kind kind;
	uint32_t gpu_id;
	const uint8_t *data;
	size_t len;
};

/* Split @buf; returns the number of files (at most KF_MAX_FILES). */
unsigned int kf_split(const uint8_t *buf, size_t len, struct kf_file *f);
/* The image name of @f. */
void kf_name(const struct kf_file *f, char *name);
/* Append one item to @out (at @*off, within @cap); -1 if it does not fit. */
int kf_append(uint8_t *out, size_t cap, size_t *off, enum kf_kind kind,
	      uint32_t gpu_id, const void *data, size_t len);

#endif /* KFD_FUZZ_BUNDLE_H */
