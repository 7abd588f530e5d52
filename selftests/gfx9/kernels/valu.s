// Vector ALU known answers. Lane i of the grid reads x = in[2i] and
// y = in[2i + 1] and writes 16 results to out[16i ...] (see gfx9_test.c).
// Kernarg: in (0), out (8). s[0:1] kernarg, s2 workgroup id X, wg 64.
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	s_lshl_b32 s3, s2, 6
	v_add_u32 v1, s3, v0
	// 64-bit address of in[2i]: in + i * 8, through v_mad_u64_u32
	v_mov_b32 v2, s4
	v_mov_b32 v3, s5
	v_mov_b32 v4, 8
	v_mad_u64_u32 v[2:3], s[8:9], v1, v4, v[2:3]
	global_load_dwordx2 v[10:11], v[2:3], off
	// out + i * 64, through v_lshlrev_b64 and a carry chain
	v_mov_b32 v6, v1
	v_mov_b32 v7, 0
	v_lshlrev_b64 v[4:5], 6, v[6:7]
	v_add_co_u32 v4, vcc, s6, v4
	v_mov_b32 v6, s7
	v_addc_co_u32 v5, vcc, v6, v5, vcc
	s_waitcnt vmcnt(0)
	v_mul_lo_u32 v20, v10, v11
	v_mul_hi_u32 v21, v10, v11
	v_bfe_u32 v22, v10, 5, 11
	v_and_b32 v12, 31, v11
	v_ashrrev_i32 v23, v12, v10
	v_alignbit_b32 v24, v10, v11, 7
	v_add_co_u32 v25, vcc, v10, v11
	v_addc_co_u32 v26, vcc, v11, v10, vcc
	v_cmp_lt_u32 vcc, v10, v11
	v_cndmask_b32 v27, v10, v11, vcc
	v_ffbh_u32 v28, v10
	v_bcnt_u32_b32 v29, v10, v11
	v_min_i32 v30, v10, v11
	s_mov_b32 s10, 0x0c050a01
	v_perm_b32 v31, v10, v11, s10
	v_cvt_f32_u32 v13, v10
	v_cvt_f32_u32 v14, v11
	v_add_f32 v32, v13, v14
	v_fma_f32 v33, v13, v14, 0.5
	v_mul_f32 v34, v13, v14
	v_mov_b32 v16, v11
	v_mov_b32 v17, v10
	v_mad_u64_u32 v[16:17], s[12:13], v10, v11, v[16:17]
	v_mov_b32 v35, v17
	global_store_dwordx4 v[4:5], v[20:23], off
	global_store_dwordx4 v[4:5], v[24:27], off offset:16
	global_store_dwordx4 v[4:5], v[28:31], off offset:32
	global_store_dwordx4 v[4:5], v[32:35], off offset:48
	s_endpgm
