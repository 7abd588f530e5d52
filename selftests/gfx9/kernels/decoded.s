// The common scalar and integer vector operations in the forms the
// engine runs from its decoded-instruction cache (one wave): literals,
// inline constants (negative, float, 64-bit), SCC in and out, 64-bit SGPR
// operands; compares, carry operations and v_cndmask_b32 with VCC and
// SGPR-pair destinations under a scattered EXEC; v_cmpx; a VOP3 with an
// SGPR and an inline constant. Kernarg: out (0). out[0..43] get the
// scalar results (the same from every lane), out[64 + 16 l + j] lane l's
// v1..v12 (j 0..11) and EXEC after v_cmpx (j 12, 13).
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	// ---- scalar ----
	s_mov_b32 s10, 0x9abcdef0
	s_mov_b32 s11, -7
	s_add_u32 s12, s10, 0x70000000		// carry out
	s_addc_u32 s13, s11, 0			// + carry in, no carry out
	s_cselect_b32 s14, 1, 2			// SCC of s_addc
	s_sub_i32 s15, s11, 0x7ffffffc		// signed overflow
	s_cselect_b32 s16, 0.5, -1
	s_mov_b64 s[18:19], -3
	s_xor_b64 s[20:21], s[18:19], -16
	s_cselect_b64 s[22:23], s[18:19], 0
	s_andn2_b64 s[24:25], s[18:19], s[20:21]
	s_cmp_lt_i32 s11, 1
	s_cselect_b32 s26, 11, 22
	s_cmp_eq_u64 s[18:19], -3
	s_cselect_b32 s27, 33, 44
	s_cmp_gt_u32 1, s11
	s_cselect_b32 s28, 55, 66
	s_movk_i32 s29, 0x8000
	s_cmpk_lt_i32 s29, 0x0
	s_cselect_b32 s30, 7, 8
	s_addk_i32 s29, 0x7fff
	s_not_b32 s31, s10
	s_cselect_b32 s32, 9, 10
	s_lshl_b32 s33, s11, 28
	s_mul_i32 s34, s11, s10
	s_max_u32 s35, s11, 1.0
	s_subb_u32 s36, 0, 1			// SCC 1 in (s_max_u32): 0 - 1 - 1
	s_cselect_b32 s37, 5, 6
	s_cmov_b32 s37, 123
	// ---- vector: v1, v2 per lane, v3..v12 sentinels ----
	s_mov_b32 s38, 0x1000193
	s_mov_b32 s39, 0x9e3779b1
	v_mul_lo_u32 v1, v0, s38
	v_add_u32 v1, 7, v1
	v_mul_lo_u32 v2, v1, s39
	v_mov_b32 v3, 0x5a5a0003
	v_mov_b32 v4, 0x5a5a0004
	v_mov_b32 v5, 0x5a5a0005
	v_mov_b32 v6, 0x5a5a0006
	v_mov_b32 v7, 0x5a5a0007
	v_mov_b32 v8, 0x5a5a0008
	v_mov_b32 v9, 0x5a5a0009
	v_mov_b32 v10, 0x5a5a000a
	v_mov_b32 v11, 0x5a5a000b
	v_mov_b32 v12, 0x5a5a000c
	s_mov_b32 s58, 0
	s_mov_b32 s59, 0
	s_mov_b32 exec_lo, 0xf0f0a5a4
	s_mov_b32 exec_hi, 0x7f00ff00
	v_cmp_lt_u32 vcc, v1, v2
	s_mov_b64 s[40:41], vcc
	v_cmp_ge_i32_e64 s[42:43], v2, 5
	v_cmp_ne_u32_e64 s[44:45], s11, v1
	v_add_co_u32 v3, vcc, v1, v2
	s_mov_b64 s[46:47], vcc
	v_add_co_u32_e64 v4, s[48:49], -1, v2
	v_addc_co_u32 v5, vcc, v1, v2, vcc
	s_mov_b64 s[50:51], vcc
	v_subb_co_u32_e64 v6, s[52:53], v1, v2, s[46:47]
	v_subbrev_co_u32_e64 v7, s[54:55], v1, v2, s[48:49]
	v_sub_co_u32 v8, vcc, s10, v1
	v_subrev_co_u32 v9, vcc, v1, v2
	s_mov_b64 s[56:57], vcc
	v_cndmask_b32 v10, v1, v2, vcc
	v_cndmask_b32_e64 v11, 17, v2, s[42:43]
	v_cmpx_gt_u32 vcc, v1, v2
	s_mov_b64 s[58:59], exec
	v_add3_u32 v12, v1, s11, -1
	s_mov_b64 exec, -1
	// ---- out ----
	v_mov_b32 v20, s4
	v_mov_b32 v21, s5
	v_mov_b32 v30, s12
	v_mov_b32 v31, s13
	v_mov_b32 v32, s14
	v_mov_b32 v33, s15
	global_store_dwordx4 v[20:21], v[30:33], off
	v_mov_b32 v30, s16
	v_mov_b32 v31, s20
	v_mov_b32 v32, s21
	v_mov_b32 v33, s22
	global_store_dwordx4 v[20:21], v[30:33], off offset:16
	v_mov_b32 v30, s23
	v_mov_b32 v31, s24
	v_mov_b32 v32, s25
	v_mov_b32 v33, s26
	global_store_dwordx4 v[20:21], v[30:33], off offset:32
	v_mov_b32 v30, s27
	v_mov_b32 v31, s28
	v_mov_b32 v32, s29
	v_mov_b32 v33, s30
	global_store_dwordx4 v[20:21], v[30:33], off offset:48
	v_mov_b32 v30, s31
	v_mov_b32 v31, s32
	v_mov_b32 v32, s33
	v_mov_b32 v33, s34
	global_store_dwordx4 v[20:21], v[30:33], off offset:64
	v_mov_b32 v30, s35
	v_mov_b32 v31, s36
	v_mov_b32 v32, s37
	v_mov_b32 v33, s40
	global_store_dwordx4 v[20:21], v[30:33], off offset:80
	v_mov_b32 v30, s41
	v_mov_b32 v31, s42
	v_mov_b32 v32, s43
	v_mov_b32 v33, s44
	global_store_dwordx4 v[20:21], v[30:33], off offset:96
	v_mov_b32 v30, s45
	v_mov_b32 v31, s46
	v_mov_b32 v32, s47
	v_mov_b32 v33, s48
	global_store_dwordx4 v[20:21], v[30:33], off offset:112
	v_mov_b32 v30, s49
	v_mov_b32 v31, s50
	v_mov_b32 v32, s51
	v_mov_b32 v33, s52
	global_store_dwordx4 v[20:21], v[30:33], off offset:128
	v_mov_b32 v30, s53
	v_mov_b32 v31, s54
	v_mov_b32 v32, s55
	v_mov_b32 v33, s56
	global_store_dwordx4 v[20:21], v[30:33], off offset:144
	v_mov_b32 v30, s57
	v_mov_b32 v31, s18
	v_mov_b32 v32, s19
	v_mov_b32 v33, 0
	global_store_dwordx4 v[20:21], v[30:33], off offset:160
	v_mov_b32 v13, s58
	v_mov_b32 v14, s59
	v_mov_b32 v15, 0
	v_mov_b32 v16, 0
	v_lshlrev_b32 v22, 6, v0
	global_store_dwordx4 v22, v[1:4], s[4:5] offset:256
	global_store_dwordx4 v22, v[5:8], s[4:5] offset:272
	global_store_dwordx4 v22, v[9:12], s[4:5] offset:288
	global_store_dwordx4 v22, v[13:16], s[4:5] offset:304
	s_endpgm
