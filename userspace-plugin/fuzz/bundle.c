// SPDX-License-Identifier: GPL-2.0
/* Fuzz input bundles: see bundle.h. */
#define _GNU_SOURCE
#include <string.h>

#include "bundle.h"
#include "images.h"

static uint32_t kf_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

unsigned int kf_split(const uint8_t *buf, size_t len, struct kf_file *f)
{
	unsigned int n = 0;
	size_t off = 0, l;

	while (n < KF_MAX_FILES && len - off >= KF_ITEM_HDR) {
		f[n].kind = (enum kf_kind)(buf[off] % 3);
		f[n].slot = (buf[off] / 3) % KF_SLOTS;
		f[n].parent = (buf[off] / (3 * KF_SLOTS)) % 2;
		f[n].lane = (buf[off] / (6 * KF_SLOTS)) % KP_MAX_LANES;
		f[n].gpu_id = kf_le32(buf + off + 1);
		l = kf_le32(buf + off + 5);
		off += KF_ITEM_HDR;
		if (l > len - off)
			l = len - off;
		f[n].data = buf + off;
		f[n].len = l;
		off += l;
		n++;
	}
	return n;
}

void kf_name(const struct kf_file *f, char *name)
{
	uint32_t id = f->slot ? 2 + f->slot : 1;
	char *at = name;

	if (f->parent)
		at = stpcpy(name, "parent/");
	switch (f->kind) {
	case KF_KFD:
		kp_name_kfd(at, id);
		break;
	case KF_RENDER:
		kp_name_render(at, f->slot ? 5 + f->slot : 2);
		break;
	default:
		kp_name_pages(at, id, f->gpu_id, f->lane);
	}
}

uint8_t kf_kind_byte(enum kf_kind kind, unsigned int slot, bool parent,
		     unsigned int lane)
{
	return (uint8_t)(kind + 3 * (slot % KF_SLOTS) +
			 (parent ? 3 * KF_SLOTS : 0) +
			 6 * KF_SLOTS * (lane % KP_MAX_LANES));
}

static void kf_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

int kf_append(uint8_t *out, size_t cap, size_t *off, unsigned int kind,
	      uint32_t gpu_id, const void *data, size_t len)
{
	if (cap - *off < KF_ITEM_HDR || cap - *off - KF_ITEM_HDR < len ||
	    len > UINT32_MAX)
		return -1;
	out[*off] = (uint8_t)kind;
	kf_put_le32(out + *off + 1, gpu_id);
	kf_put_le32(out + *off + 5, (uint32_t)len);
	memcpy(out + *off + KF_ITEM_HDR, data, len);
	*off += KF_ITEM_HDR + len;
	return 0;
}
