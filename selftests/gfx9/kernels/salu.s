// Scalar ALU and branches. Kernarg: a (0), b (4), out (8). Writes 16
// dwords to out (every lane the same values). s[0:1] kernarg.
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dwordx2 s[6:7], s[0:1], 0x8
	s_waitcnt lgkmcnt(0)
	s_add_u32 s20, s4, s5
	s_cselect_b32 s21, 1, 0
	s_sub_u32 s22, s4, s5
	s_mul_i32 s23, s4, s5
	s_mul_hi_u32 s24, s4, s5
	s_bfe_u32 s25, s4, 0x50003
	s_ashr_i32 s26, s4, 7
	s_min_i32 s27, s4, s5
	s_flbit_i32_b32 s28, s5
	s_bcnt1_i32_b32 s29, s4
	s_brev_b32 s30, s4
	s_lshl2_add_u32 s31, s4, s5
	s_pack_ll_b32_b16 s32, s4, s5
	// s33 = 1 + 2 + ... + 10 with a counted loop
	s_mov_b32 s33, 0
	s_movk_i32 s34, 0x1
.Lloop:
	s_add_u32 s33, s33, s34
	s_addk_i32 s34, 0x1
	s_cmpk_le_u32 s34, 0xa
	s_cbranch_scc1 .Lloop
	// s[36:37] = {a, b} << 13 (64-bit)
	s_mov_b32 s36, s4
	s_mov_b32 s37, s5
	s_lshl_b64 s[36:37], s[36:37], 13
	v_mov_b32 v0, s20
	v_mov_b32 v1, s21
	v_mov_b32 v2, s22
	v_mov_b32 v3, s23
	v_mov_b32 v4, s24
	v_mov_b32 v5, s25
	v_mov_b32 v6, s26
	v_mov_b32 v7, s27
	v_mov_b32 v8, s28
	v_mov_b32 v9, s29
	v_mov_b32 v10, s30
	v_mov_b32 v11, s31
	v_mov_b32 v12, s32
	v_mov_b32 v13, s33
	v_mov_b32 v14, s36
	v_mov_b32 v15, s37
	v_mov_b32 v20, s6
	v_mov_b32 v21, s7
	global_store_dwordx4 v[20:21], v[0:3], off
	global_store_dwordx4 v[20:21], v[4:7], off offset:16
	global_store_dwordx4 v[20:21], v[8:11], off offset:32
	global_store_dwordx4 v[20:21], v[12:15], off offset:48
	s_endpgm
