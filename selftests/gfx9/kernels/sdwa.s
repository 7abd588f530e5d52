// SDWA known answers (gfx9_test.c sdwa_known_answers). One wave of 64
// lanes: lane l reads x = in[2l], y = in[2l + 1] and writes 12 results to
// out[12l ...]. Kernarg: in (0), out (8). s[0:1] kernarg, wg 64.
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	v_lshlrev_b32 v2, 3, v0
	v_mul_u32_u24 v3, 48, v0
	s_waitcnt lgkmcnt(0)
	global_load_dwordx2 v[10:11], v2, s[4:5]
	s_waitcnt vmcnt(0)
	v_add_u32_sdwa v20, v10, v11 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:WORD_1
	v_add_u32_sdwa v21, sext(v10), v11 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_0 src1_sel:WORD_0
	v_mov_b32 v22, v11
	v_sub_u32_sdwa v22, v10, v11 dst_sel:BYTE_2 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_3 src1_sel:BYTE_0
	v_mov_b32_sdwa v23, v10 dst_sel:WORD_0 dst_unused:UNUSED_PAD src0_sel:WORD_1
	s_mov_b32 s10, 0x12345678
	v_or_b32_sdwa v24, s10, v11 dst_sel:BYTE_3 dst_unused:UNUSED_PAD src0_sel:BYTE_2 src1_sel:BYTE_1
	v_mul_u32_u24_sdwa v25, sext(v10), sext(v11) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:WORD_1
	v_cmp_lt_i32_sdwa s[12:13], sext(v10), v11 src0_sel:BYTE_0 src1_sel:BYTE_1
	v_cndmask_b32_e64 v26, 0, 1, s[12:13]
	v_cmp_gt_u32_sdwa vcc, v10, v11 src0_sel:WORD_1 src1_sel:WORD_1
	v_cndmask_b32_e64 v27, 0, 1, vcc
	// floats: v4 = x >> 8, v5 = -(y >> 8) converted
	v_lshrrev_b32 v4, 8, v10
	v_cvt_f32_u32 v4, v4
	v_lshrrev_b32 v5, 8, v11
	v_cvt_f32_u32 v5, v5
	v_sub_f32 v5, 0, v5
	v_add_f32_sdwa v28, -v4, |v5| dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
	v_mul_f32_sdwa v29, v4, v5 mul:2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
	v_add_f32_sdwa v30, v4, v5 clamp dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
	v_cvt_f32_u32_sdwa v31, v10 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_2
	global_store_dwordx4 v3, v[20:23], s[6:7]
	global_store_dwordx4 v3, v[24:27], s[6:7] offset:16
	global_store_dwordx4 v3, v[28:31], s[6:7] offset:32
	s_endpgm
