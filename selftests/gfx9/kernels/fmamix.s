// v_fma_mix_f32 / v_fma_mixlo_f16 / v_fma_mixhi_f16: a * b + c fused,
// each source an f32 or an f16 half (gfx9_test.c fma_mix_known_answers).
// One wave of 64 lanes: lane l reads 8 dwords at in[8l]: a, b, c (f32),
// h, g (two f16 each), and writes 8 dwords at out[8l]. Kernarg: in (0),
// out (8). s2, the workgroup id, is 0.
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	v_lshlrev_b32 v2, 5, v0
	s_waitcnt lgkmcnt(0)
	global_load_dwordx4 v[10:13], v2, s[4:5]
	global_load_dwordx4 v[14:17], v2, s[4:5] offset:16
	s_waitcnt vmcnt(0)
	v_fma_mix_f32 v20, v10, v11, v12
	v_fma_mix_f32 v21, v13, v13, v12 op_sel:[0,1,0] op_sel_hi:[1,1,0]
	v_fma_mix_f32 v22, -v10, v14, |v13| op_sel:[0,1,0] op_sel_hi:[0,1,1]
	v_mov_b32 v23, 0x5a5a1234
	v_fma_mixlo_f16 v23, v10, v11, v12
	v_mov_b32 v24, 0x5a5a1234
	v_fma_mixhi_f16 v24, v13, v14, v10 op_sel_hi:[1,1,0]
	v_fma_mix_f32 v25, v10, v11, v12 clamp
	v_mov_b32 v26, 0x5a5a1234
	v_fma_mixlo_f16 v26, v13, -v14, v13 op_sel:[0,0,1] op_sel_hi:[1,1,1] clamp
	v_fma_mix_f32 v27, s2, v11, 1.0
	global_store_dwordx4 v2, v[20:23], s[6:7]
	global_store_dwordx4 v2, v[24:27], s[6:7] offset:16
	s_endpgm
