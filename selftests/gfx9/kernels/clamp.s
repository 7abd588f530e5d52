// VOP3 clamp on integer add and subtract: saturation instead of wrap.
// Kernarg: in (0), out (8). s[0:1] kernarg, s2 workgroup id; workgroups
// of 64. Per work-item g, a = in[2 g], b = in[2 g + 1]:
// out[8 g + 0..7] = v_add_u32, v_sub_u32, v_subrev_u32 (b - a),
// v_add_i32, v_sub_i32, v_add_co_u32, v_sub_co_u32 and v_addc_co_u32
// (carry-in: odd lanes) of a and b, each with clamp.
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	s_lshl_b32 s3, s2, 6
	v_add_u32 v1, s3, v0
	v_lshlrev_b32 v2, 3, v1
	global_load_dwordx2 v[3:4], v2, s[4:5]
	s_mov_b32 s12, 0xaaaaaaaa
	s_mov_b32 s13, 0xaaaaaaaa
	s_waitcnt vmcnt(0)
	v_add_u32_e64 v10, v3, v4 clamp
	v_sub_u32_e64 v11, v3, v4 clamp
	v_subrev_u32_e64 v12, v3, v4 clamp
	v_add_i32 v13, v3, v4 clamp
	v_sub_i32 v14, v3, v4 clamp
	v_add_co_u32_e64 v15, s[8:9], v3, v4 clamp
	v_sub_co_u32_e64 v16, s[8:9], v3, v4 clamp
	v_addc_co_u32_e64 v17, s[8:9], v3, v4, s[12:13] clamp
	v_lshlrev_b32 v2, 5, v1
	global_store_dwordx4 v2, v[10:13], s[6:7]
	global_store_dwordx4 v2, v[14:17], s[6:7] offset:16
	s_endpgm
