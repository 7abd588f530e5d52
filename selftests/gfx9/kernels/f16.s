// f16, 16-bit integer, packed (VOP3P) and dot-product known answers
// (gfx9_test.c f16_packed_known_answers). One wave of 64 lanes: lane l
// reads x = in[3l], y = in[3l + 1], z = in[3l + 2] and writes 24 results
// to out[24l ...]. Kernarg: in (0), out (8). s[0:1] kernarg, wg 64.
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	v_mul_u32_u24 v2, 12, v0
	v_mul_u32_u24 v3, 0x60, v0
	s_waitcnt lgkmcnt(0)
	global_load_dwordx3 v[10:12], v2, s[4:5]
	s_waitcnt vmcnt(0)
	v_add_f16 v20, v10, v11
	v_mul_f16 v21, v10, v11
	v_fma_f16 v22, v10, v11, v12 op_sel:[1,0,1,0]
	v_fma_f16 v23, v10, v11, v12
	v_mad_f16 v24, -v10, |v11|, v12
	v_max_f16 v25, v10, v11
	v_mad_u16 v25, v10, v11, v12 op_sel:[0,1,0,1]
	v_cvt_f16_f32 v26, v12
	v_cvt_f32_f16 v27, v10
	v_pk_add_f16 v28, v10, v11
	v_pk_mul_f16 v29, v10, v11 op_sel:[1,0] op_sel_hi:[0,1]
	v_pk_fma_f16 v30, v10, v11, v12 neg_lo:[1,0,0] neg_hi:[0,0,1]
	v_pk_max_f16 v31, v10, v11
	v_pk_add_f16 v32, v10, v11 clamp
	v_pk_add_u16 v33, v10, v11
	v_pk_mad_i16 v34, v10, v11, v12
	v_pk_sub_i16 v35, v10, v11 clamp
	v_dot2_i32_i16 v36, v10, v11, v12
	v_dot4_u32_u8 v37, v10, v11, v12
	v_dot8_i32_i4 v38, v10, v11, v12 clamp
	v_cmp_lt_f16 vcc, v10, v11
	v_cndmask_b32_e64 v39, 0, 1, vcc
	v_mul_lo_u16 v40, v10, v11
	v_mov_b32 v41, v10
	v_add_f16_sdwa v41, v10, v11 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0
	v_pk_lshrrev_b16 v42, v10, v11
	v_mov_b32 v43, v12
	v_mac_f16 v43, v10, v11
	global_store_dwordx4 v3, v[20:23], s[6:7]
	global_store_dwordx4 v3, v[24:27], s[6:7] offset:16
	global_store_dwordx4 v3, v[28:31], s[6:7] offset:32
	global_store_dwordx4 v3, v[32:35], s[6:7] offset:48
	global_store_dwordx4 v3, v[36:39], s[6:7] offset:64
	global_store_dwordx4 v3, v[40:43], s[6:7] offset:80
	s_endpgm
