// For the context save test (cwsr/): known values in registers, then a
// long loop the test preempts. out[i] = 7 + n * i + 0x1000, the 0x1000
// coming from v5 after the loop. Kernarg: out (0), n (8). s[0:1] kernarg,
// s2 wg id; one workgroup, v0 the work-item id. Byte offsets on the right
// (SMEM and a literal take 8 bytes, the rest 4): the loop is 56..72.
	s_load_dwordx2 s[4:5], s[0:1], 0x0	// 0
	s_load_dword s6, s[0:1], 0x8		// 8
	s_waitcnt lgkmcnt(0)			// 16
	s_mov_b32 s10, 0x12345678		// 20
	s_mov_b32 s11, 0xcafef00d		// 28
	s_movk_i32 m0, 0x5a5a			// 36
	v_mov_b32 v5, 0x1000			// 40
	v_lshlrev_b32 v6, 1, v0			// 48
	v_mov_b32 v2, 7				// 52
.Lloop:
	v_add_u32 v2, v2, v0			// 56
	s_sub_u32 s6, s6, 1			// 60
	s_cmp_lg_u32 s6, 0			// 64
	s_cbranch_scc1 .Lloop			// 68
	v_add_u32 v2, v2, v5			// 72
	v_lshlrev_b32 v3, 2, v0
	global_store_dword v3, v2, s[4:5]
	s_endpgm
