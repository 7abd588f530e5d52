// DPP known answers (gfx9_test.c dpp_known_answers). One wave of 64
// lanes: lane l reads x = in[l] and writes 16 results to out[16l ...].
// Kernarg: in (0), out (8). s[0:1] kernarg, wg 64.
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	v_lshlrev_b32 v2, 2, v0
	v_lshlrev_b32 v3, 6, v0
	s_waitcnt lgkmcnt(0)
	global_load_dword v1, v2, s[4:5]
	s_waitcnt vmcnt(0)
	v_mov_b32 v20, -1
	v_mov_b32 v21, -1
	v_mov_b32 v22, -1
	v_mov_b32 v23, -1
	v_mov_b32 v24, -1
	v_mov_b32 v25, -1
	v_mov_b32 v26, -1
	v_mov_b32 v27, -1
	v_mov_b32 v28, -1
	v_mov_b32 v29, -1
	v_mov_b32 v30, -1
	v_mov_b32 v31, -1
	v_mov_b32 v32, -1
	v_mov_b32 v33, -1
	v_mov_b32 v34, -1
	v_mov_b32 v35, -1
	v_mov_b32_dpp v20, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
	v_mov_b32_dpp v21, v1 row_shl:1 row_mask:0xf bank_mask:0xf
	v_mov_b32_dpp v22, v1 row_shr:3 row_mask:0xf bank_mask:0xf bound_ctrl:0
	v_mov_b32_dpp v23, v1 row_ror:5 row_mask:0xf bank_mask:0xf
	v_mov_b32_dpp v24, v1 wave_shl:1 row_mask:0xf bank_mask:0xf
	v_mov_b32_dpp v25, v1 wave_rol:1 row_mask:0xf bank_mask:0xf
	v_mov_b32_dpp v26, v1 wave_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:0
	v_mov_b32_dpp v27, v1 wave_ror:1 row_mask:0xf bank_mask:0xf
	v_mov_b32_dpp v28, v1 row_mirror row_mask:0xf bank_mask:0xf
	v_mov_b32_dpp v29, v1 row_half_mirror row_mask:0xf bank_mask:0xf
	v_mov_b32_dpp v30, v1 row_bcast:15 row_mask:0xa bank_mask:0xf
	v_mov_b32_dpp v31, v1 row_bcast:31 row_mask:0xc bank_mask:0xf
	// VOP2: src0 from another lane, src1 the lane's own
	v_add_u32_dpp v32, v1, v1 row_shr:1 row_mask:0xf bank_mask:0x5
	// f32 with neg and abs: v4 = x & 0xffff, v5 = -(x >> 16) as floats
	v_and_b32 v4, 0xffff, v1
	v_cvt_f32_u32 v4, v4
	v_lshrrev_b32 v5, 16, v1
	v_cvt_f32_u32 v5, v5
	v_sub_f32 v5, 0, v5
	v_add_f32_dpp v33, -v4, |v5| quad_perm:[3,2,1,0] row_mask:0x7 bank_mask:0xf
	// EXEC: even lanes only; odd source lanes are disabled
	s_mov_b64 s[8:9], exec
	s_mov_b32 s10, 0x55555555
	s_mov_b32 s11, s10
	s_mov_b64 exec, s[10:11]
	v_mov_b32_dpp v34, v1 quad_perm:[2,1,3,1] row_mask:0xf bank_mask:0xf
	v_mov_b32_dpp v35, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf bound_ctrl:0
	s_mov_b64 exec, s[8:9]
	global_store_dwordx4 v3, v[20:23], s[6:7]
	global_store_dwordx4 v3, v[24:27], s[6:7] offset:16
	global_store_dwordx4 v3, v[28:31], s[6:7] offset:32
	global_store_dwordx4 v3, v[32:35], s[6:7] offset:48
	s_endpgm
