// Rounding and denormal modes set by s_setreg_imm32_b32, read back by
// s_getreg_b32 (gfx9_test.c float_modes_take_effect). One wave of 64
// lanes: lane l reads 16 dwords at in[16l]: a, b, c (binary64), x, y, z,
// p, q, w (binary32), d, e (binary64); writes 32 dwords at
// out[32l]. Kernarg: in (0), out (8).
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	v_lshlrev_b32 v2, 6, v0
	v_lshlrev_b32 v3, 7, v0
	s_waitcnt lgkmcnt(0)
	global_load_dwordx4 v[10:13], v2, s[4:5]
	global_load_dwordx4 v[14:17], v2, s[4:5] offset:16
	global_load_dwordx4 v[18:21], v2, s[4:5] offset:32
	global_load_dwordx4 v[22:25], v2, s[4:5] offset:48
	s_waitcnt vmcnt(0)
	// toward +Inf (1), then -Inf (2), then zero (3), single and double
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0x5
	v_add_f32 v30, v16, v17
	v_mul_f32 v31, v16, v17
	v_fma_f32 v32, v16, v17, v18
	v_cvt_f32_f64 v33, v[10:11]
	v_add_f64 v[34:35], v[10:11], v[12:13]
	v_fma_f64 v[36:37], v[10:11], v[12:13], v[14:15]
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0xa
	v_add_f32 v38, v16, v17
	v_mul_f32 v39, v16, v17
	v_fma_f32 v40, v16, v17, v18
	v_cvt_f32_f64 v41, v[10:11]
	v_add_f64 v[42:43], v[10:11], v[12:13]
	v_fma_f64 v[44:45], v[10:11], v[12:13], v[14:15]
	s_mov_b32 s10, 0xf
	s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s10
	v_add_f32 v46, v16, v17
	v_mul_f32 v47, v16, v17
	v_fma_f32 v48, v16, v17, v18
	v_cvt_f32_f64 v49, v[10:11]
	v_add_f64 v[50:51], v[10:11], v[12:13]
	v_fma_f64 v[52:53], v[10:11], v[12:13], v[14:15]
	s_getreg_b32 s11, hwreg(HW_REG_MODE, 0, 8)
	v_mov_b32 v54, s11
	// nearest; subnormals flushed in and out, single and double
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 8), 0
	v_mul_f32 v55, v19, v20
	v_mul_f64 v[56:57], v[22:23], v[24:25]
	v_add_f32 v58, v19, v21
	// single: inputs kept, results flushed; then the reverse; then none
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 1
	v_add_f32 v59, v21, v21
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 2
	v_mul_f32 v60, v19, v20
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 3
	v_add_f32 v61, v21, v21
	global_store_dwordx4 v3, v[30:33], s[6:7]
	global_store_dwordx4 v3, v[34:37], s[6:7] offset:16
	global_store_dwordx4 v3, v[38:41], s[6:7] offset:32
	global_store_dwordx4 v3, v[42:45], s[6:7] offset:48
	global_store_dwordx4 v3, v[46:49], s[6:7] offset:64
	global_store_dwordx4 v3, v[50:53], s[6:7] offset:80
	global_store_dwordx4 v3, v[54:57], s[6:7] offset:96
	global_store_dwordx4 v3, v[58:61], s[6:7] offset:112
	s_endpgm
