// SPDX-License-Identifier: GPL-2.0
//
// gfx906 versions of the selftests' workhorse kernels, for tests whose
// point is not a kfdsim-only feature: the same kernarg as the built-in
// kernels of the same name (include/uapi/linux/kfdsim.h), so a test swaps
// KFDSIM_KERNEL_X for KG_CODE_X. Assembled by llvm-mc-15 at build time and
// embedded in the test binaries (kg_code.c, generated; lib/kfdsim_gpu.c
// puts a kernel descriptor in front of each).
//
// Entry state (descriptor: dispatch ptr and kernarg ptr, TGID_X_EN):
//   s[0:1] dispatch packet, s[2:3] kernarg, s4 workgroup id X, v0 work-item
//   id X. Work-item i = s4 * workgroup_size_x + v0 handles element i when
//   i < grid_size_x (read from the packet: workgroup_size_x at 4, a u16;
//   grid_size_x at 12).
//
// Each work-item writes only its own element, from values no work-item
// changes: a workgroup run again (a checkpoint that interrupts a dispatch
// of machine code restarts the running workgroup until the engine saves
// waves) writes the same values.

// v1 = i; EXEC = the work-items with an element, or branch to \end.
// v[2:3] = 4 * i, the byte offset of element i.
.macro ELEMENT end
	s_load_dword s5, s[0:1], 0x4
	s_load_dword s6, s[0:1], 0xc
	s_load_dwordx4 s[8:11], s[2:3], 0x0
	s_waitcnt lgkmcnt(0)
	s_and_b32 s5, s5, 0xffff
	s_mul_i32 s7, s4, s5
	v_add_u32 v1, s7, v0
	v_cmp_gt_u32 vcc, s6, v1
	s_and_saveexec_b64 s[12:13], vcc
	s_cbranch_execz \end
	v_mov_b32 v2, 0
	v_lshlrev_b64 v[2:3], 2, v[1:2]
.endm

// v[d:d+1] = v[2:3] + s[b:b+1]
.macro AT d, b
	v_mov_b32 v[\d+1], s[\b+1]
	v_add_co_u32 v[\d], vcc, s[\b], v2
	v_addc_co_u32 v[\d+1], vcc, v[\d+1], v3, vcc
.endm

	.text
// dst[i] = value: struct kfdsim_args_fill { u64 dst; u32 value; u32 pad; }
	.p2align 8
	.globl kg_fill_u32
kg_fill_u32:
	ELEMENT .Lfill_end
	AT 4, 8
	v_mov_b32 v6, s10
	global_store_dword v[4:5], v6, off
	s_waitcnt vmcnt(0)
.Lfill_end:
	s_endpgm

// dst[i] = src[i]: struct kfdsim_args_copy { u64 src; u64 dst; }
	.p2align 8
	.globl kg_copy_u32
kg_copy_u32:
	ELEMENT .Lcopy_end
	AT 4, 8
	AT 6, 10
	global_load_dword v8, v[4:5], off
	s_waitcnt vmcnt(0)
	global_store_dword v[6:7], v8, off
	s_waitcnt vmcnt(0)
.Lcopy_end:
	s_endpgm
