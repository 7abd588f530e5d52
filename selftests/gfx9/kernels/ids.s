// Initial wave state: work-item ids X/Y/Z (VGPR0-2), workgroup ids X/Y/Z
// (s4-s6, after the user SGPRs) and the dispatch packet (dispatch ptr in
// s[0:1], kernarg ptr in s[2:3]). Work-item (gx, gy, gz) of the grid
// writes gx | gy << 10 | gz << 20 at out[gx + gy * GX + gz * GX * GY],
// with the workgroup and grid sizes read from the packet. Kernarg: out.
	s_load_dwordx2 s[10:11], s[0:1], 0x4
	s_load_dwordx2 s[12:13], s[0:1], 0xc
	s_load_dwordx2 s[14:15], s[2:3], 0x0
	s_waitcnt lgkmcnt(0)
	s_and_b32 s16, s10, 0xffff
	s_lshr_b32 s17, s10, 16
	s_and_b32 s18, s11, 0xffff
	s_mul_i32 s19, s4, s16
	v_add_u32 v3, s19, v0
	s_mul_i32 s19, s5, s17
	v_add_u32 v4, s19, v1
	s_mul_i32 s19, s6, s18
	v_add_u32 v5, s19, v2
	v_mul_lo_u32 v6, v4, s12
	v_add_u32 v6, v6, v3
	s_mul_i32 s19, s12, s13
	v_mul_lo_u32 v7, v5, s19
	v_add_u32 v6, v6, v7
	v_lshlrev_b32 v6, 2, v6
	v_lshlrev_b32 v8, 10, v4
	v_lshlrev_b32 v9, 20, v5
	v_or3_b32 v8, v3, v8, v9
	global_store_dword v6, v8, s[14:15]
	s_endpgm
