// binary64 operations, frexp/ldexp and the binary32 transcendentals
// (gfx9_test.c fp64_transcendental_known_answers). One wave of 64 lanes:
// lane l reads 8 dwords at in[8l]: a, b, c (binary64), x (binary32), k
// (int), and writes 32 dwords at out[32l]. Kernarg: in (0), out (8).
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	v_lshlrev_b32 v2, 5, v0
	v_lshlrev_b32 v3, 7, v0
	s_waitcnt lgkmcnt(0)
	global_load_dwordx4 v[10:13], v2, s[4:5]
	global_load_dwordx4 v[14:17], v2, s[4:5] offset:16
	s_waitcnt vmcnt(0)
	v_fma_f64 v[20:21], v[10:11], v[12:13], v[14:15]
	v_rcp_f64 v[22:23], v[10:11]
	v_sqrt_f64_e64 v[24:25], |v[10:11]|
	v_rsq_f64_e64 v[26:27], |v[10:11]|
	v_frexp_mant_f64 v[28:29], v[10:11]
	v_frexp_exp_i32_f64 v30, v[10:11]
	v_cmp_lt_f64 vcc, v[10:11], v[12:13]
	v_cndmask_b32 v31, 0, 1, vcc
	v_cmp_neq_f64_e64 s[8:9], v[10:11], v[12:13]
	v_cndmask_b32_e64 v32, 0, 1, s[8:9]
	v_frexp_exp_i32_f32 v33, v16
	v_ldexp_f64 v[34:35], v[10:11], v17
	v_fract_f64 v[36:37], v[10:11]
	v_floor_f64 v[38:39], v[10:11]
	v_rndne_f64 v[40:41], v[10:11]
	v_exp_f32 v42, v16
	v_log_f32 v43, v16
	v_sin_f32 v44, v16
	v_cos_f32 v45, v16
	v_frexp_mant_f32 v46, v16
	v_ldexp_f32 v47, v16, v17
	v_trunc_f64 v[48:49], v[10:11]
	v_ceil_f64 v[50:51], v[10:11]
	global_store_dwordx4 v3, v[20:23], s[6:7]
	global_store_dwordx4 v3, v[24:27], s[6:7] offset:16
	global_store_dwordx4 v3, v[28:31], s[6:7] offset:32
	global_store_dwordx4 v3, v[32:35], s[6:7] offset:48
	global_store_dwordx4 v3, v[36:39], s[6:7] offset:64
	global_store_dwordx4 v3, v[40:43], s[6:7] offset:80
	global_store_dwordx4 v3, v[44:47], s[6:7] offset:96
	global_store_dwordx4 v3, v[48:51], s[6:7] offset:112
	s_endpgm
