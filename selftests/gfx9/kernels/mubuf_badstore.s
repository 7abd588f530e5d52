// A format store to an 8-bit format (DATA_FORMAT 8, NUM_FORMAT UINT),
// which the engine models for loads only, traps; nothing is written.
// s[0:1] kernarg: 0: out.
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	s_mov_b32 s8, s4
	s_and_b32 s9, s5, 0xffff
	s_movk_i32 s10, 0x100
	s_mov_b32 s11, 0xcfac
	v_mov_b32 v1, 0x77
	buffer_store_format_x v1, off, s[8:11], 0
	v_mov_b32 v2, 4
	global_store_dword v2, v1, s[4:5]
	s_endpgm
