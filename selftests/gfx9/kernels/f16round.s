// f16 arithmetic in the four rounding modes of MODE.FP_ROUND[3:2]
// (gfx9_test.c f16_rounding_modes_known_answers). One wave of 64 lanes:
// lane l reads 4 dwords at in[4l]: a (f16, low half) and b (f16, high
// half), c (f16), x (binary32), k (16-bit integer), and writes 48 dwords
// at out[48l]: 12 results for nearest, then toward +Inf, -Inf and zero.
// Kernarg: in (0), out (8).
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	v_lshlrev_b32 v2, 4, v0
	v_mul_u32_u24 v3, 0xc0, v0
	s_waitcnt lgkmcnt(0)
	global_load_dwordx4 v[10:13], v2, s[4:5]
	s_waitcnt vmcnt(0)
	v_lshrrev_b32 v14, 16, v10		// b
.irp mode, 0, 1, 2, 3
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), \mode
	v_add_f16 v20, v10, v14
	v_sub_f16 v21, v10, v14
	v_mul_f16 v22, v10, v14
	v_fma_f16 v23, v10, v14, v11
	v_mad_f16 v24, v10, v14, v11
	v_cvt_f16_f32 v25, v12
	v_cvt_f16_i16 v26, v13
	v_sqrt_f16_e64 v27, |v10|
	v_rcp_f16 v28, v10
	v_mul_f16_e64 v29, v10, v14 mul:2
	v_cvt_f16_u16 v30, v13
	v_mov_b32 v31, v11
	v_mac_f16 v31, v10, v14
	global_store_dwordx4 v3, v[20:23], s[6:7]
	global_store_dwordx4 v3, v[24:27], s[6:7] offset:16
	global_store_dwordx4 v3, v[28:31], s[6:7] offset:32
	v_add_u32 v3, 48, v3
.endr
	s_endpgm
