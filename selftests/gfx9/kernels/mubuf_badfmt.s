// A format load of a format the engine does not model (DATA_FORMAT 16,
// NUM_FORMAT FLOAT) traps; the store after it must not run.
// s[0:1] kernarg: 0: out.
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	s_mov_b32 s8, s4
	s_and_b32 s9, s5, 0xffff
	s_movk_i32 s10, 0x100
	s_mov_b32 s11, 0x17fac
	v_mov_b32 v1, 0
	buffer_load_format_x v1, off, s[8:11], 0
	s_waitcnt vmcnt(0)
	v_mov_b32 v2, 0
	global_store_dword v2, v1, s[4:5]
	s_endpgm
