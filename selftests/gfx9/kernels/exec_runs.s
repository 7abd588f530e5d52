// Vector integer operations under an EXEC with runs of every length and
// gaps at both ends (one wave). Kernarg: out (0). Every lane first gets
// v1 = 3 * lane + 5 and v2 = 0x11111111; then, in the lanes of EXEC
// 0x7f00ff00f0f0a5a4 only: v1 = v1 * lane + 0x12345 (VGPR * VGPR, then
// a literal + VGPR) and v2 = 0xdeadbeef ^ lane (an SGPR ^ VGPR). out
// gets v1 and v2 of every lane, 8 bytes a lane.
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	v_mul_u32_u24 v1, 3, v0
	v_add_u32 v1, 5, v1
	v_mov_b32 v2, 0x11111111
	s_mov_b32 s6, 0xdeadbeef
	s_mov_b32 exec_lo, 0xf0f0a5a4
	s_mov_b32 exec_hi, 0x7f00ff00
	v_mul_lo_u32 v1, v1, v0
	v_add_u32 v1, 0x12345, v1
	v_xor_b32 v2, s6, v0
	s_mov_b64 exec, -1
	v_lshlrev_b32 v4, 3, v0
	global_store_dwordx2 v4, v[1:2], s[4:5]
	s_endpgm
