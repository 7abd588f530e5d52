/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Buffer objects through Debian's libdrm_amdgpu, for the tests that link
 * it (libdrm, amdplugin): a BO with a GPU VA from libdrm's allocator,
 * mapped there read-write-execute, and maybe for the CPU.
 */
#ifndef ABO_H
#define ABO_H

#include <stdint.h>
#include <libdrm/amdgpu.h>

struct abo {
	amdgpu_bo_handle bo;
	amdgpu_va_handle va_handle;
	uint64_t va;
	uint64_t size;
	void *cpu;
};

/*
 * Give @bo (of @size bytes) a GPU VA and map it there. On failure @o still
 * names @bo, which stays the caller's.
 */
int abo_map(amdgpu_device_handle dev, amdgpu_bo_handle bo, uint64_t size,
	    struct abo *o);
/* A new BO of @size bytes in @domain with AMDGPU_GEM_CREATE_* @flags. */
int abo_new(amdgpu_device_handle dev, uint64_t size, uint32_t domain,
	    uint64_t flags, amdgpu_bo_handle *bo);
/* A new BO in @domain, mapped at a GPU VA and for the CPU. */
int abo_alloc(amdgpu_device_handle dev, uint64_t size, uint32_t domain,
	      struct abo *o);
/*
 * Undo abo_map() (and the CPU mapping) and drop the BO; nothing if @o
 * holds none. Returns the GPU unmap's result.
 */
int abo_free(struct abo *o);

#endif /* ABO_H */
