// s_trap: the wave stops with an exception. Kernarg: out (0).
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	s_trap 2
	v_mov_b32 v1, 1
	v_mov_b32 v2, 0
	global_store_dword v2, v1, s[4:5]
	s_endpgm
