// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer objects through libdrm_amdgpu (see abo.h).
 */
#include <string.h>
#include <libdrm/amdgpu_drm.h>

#include "abo.h"
#include "kfdsim_test.h"

int abo_map(amdgpu_device_handle dev, amdgpu_bo_handle bo, uint64_t size,
	    struct abo *o)
{
	int ret;

	memset(o, 0, sizeof(*o));
	o->bo = bo;
	o->size = size;
	ret = amdgpu_va_range_alloc(dev, amdgpu_gpu_va_range_general, size,
				    KT_PAGE, 0, &o->va, &o->va_handle, 0);
	if (ret)
		return ret;
	ret = amdgpu_bo_va_op(bo, 0, size, o->va, 0, AMDGPU_VA_OP_MAP);
	if (ret)
		amdgpu_va_range_free(o->va_handle);
	return ret;
}

int abo_new(amdgpu_device_handle dev, uint64_t size, uint32_t domain,
	    uint64_t flags, amdgpu_bo_handle *bo)
{
	struct amdgpu_bo_alloc_request req = {
		.alloc_size = size,
		.phys_alignment = KT_PAGE,
		.preferred_heap = domain,
		.flags = flags,
	};

	return amdgpu_bo_alloc(dev, &req, bo);
}

int abo_alloc(amdgpu_device_handle dev, uint64_t size, uint32_t domain,
	      struct abo *o)
{
	amdgpu_bo_handle bo;
	int ret;

	ret = abo_new(dev, size, domain, 0, &bo);
	if (ret)
		return ret;
	ret = abo_map(dev, bo, size, o);
	if (!ret)
		ret = amdgpu_bo_cpu_map(bo, &o->cpu);
	if (ret) {
		amdgpu_bo_free(bo);
		memset(o, 0, sizeof(*o));
	}
	return ret;
}

int abo_free(struct abo *o)
{
	int ret;

	if (!o->bo)
		return 0;
	if (o->cpu)
		amdgpu_bo_cpu_unmap(o->bo);
	ret = amdgpu_bo_va_op(o->bo, 0, o->size, o->va, 0, AMDGPU_VA_OP_UNMAP);
	amdgpu_va_range_free(o->va_handle);
	amdgpu_bo_free(o->bo);
	memset(o, 0, sizeof(*o));
	return ret;
}
