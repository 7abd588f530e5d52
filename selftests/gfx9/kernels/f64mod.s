// VOP3 output modifiers (mul:2, mul:4, div:2) and clamp on binary64
// operations (gfx9_test.c f64_omod_clamp_known_answers). One wave of 64
// lanes: lane l reads 8 dwords at in[8l]: a, b, c (binary64), k (int),
// and writes 32 dwords at out[32l]. Kernarg: in (0), out (8).
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	v_lshlrev_b32 v2, 5, v0
	v_lshlrev_b32 v3, 7, v0
	s_waitcnt lgkmcnt(0)
	global_load_dwordx4 v[10:13], v2, s[4:5]
	global_load_dwordx4 v[14:17], v2, s[4:5] offset:16
	s_waitcnt vmcnt(0)
	v_add_f64 v[20:21], v[10:11], v[12:13] mul:2
	v_add_f64 v[22:23], v[10:11], v[12:13] div:2
	v_mul_f64 v[24:25], v[10:11], v[12:13] mul:4
	v_fma_f64 v[26:27], v[10:11], v[12:13], v[14:15] clamp
	v_add_f64 v[28:29], v[10:11], v[12:13] clamp mul:2
	v_max_f64 v[30:31], v[10:11], v[12:13] clamp
	v_cvt_f64_i32_e64 v[32:33], v16 div:2
	v_fract_f64_e64 v[34:35], v[10:11] mul:4
	v_cvt_f32_f64_e64 v36, v[10:11] clamp
	v_mov_b32 v37, 0
	v_ldexp_f64 v[38:39], v[10:11], v16 clamp
	v_sqrt_f64_e64 v[40:41], |v[10:11]| div:2
	v_min_f64 v[42:43], -v[10:11], v[12:13] clamp mul:2
	global_store_dwordx4 v3, v[20:23], s[6:7]
	global_store_dwordx4 v3, v[24:27], s[6:7] offset:16
	global_store_dwordx4 v3, v[28:31], s[6:7] offset:32
	global_store_dwordx4 v3, v[32:35], s[6:7] offset:48
	global_store_dwordx4 v3, v[36:39], s[6:7] offset:64
	global_store_dwordx4 v3, v[40:43], s[6:7] offset:80
	s_endpgm
