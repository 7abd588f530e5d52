// An instruction the engine does not implement (image_load, MIMG): the
// wave traps before it stores anything. Kernarg: out (0).
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	v_mov_b32 v1, 1.0
	image_load v1, v[2:5], s[8:15] dmask:0x1 unorm
	v_mov_b32 v2, 0
	global_store_dword v2, v1, s[4:5]
	s_endpgm
