// Code replaced under a running wave (one wave). Kernarg: out (0),
// flag (8), callee (16). The wave calls the callee (which adds to v1 and
// returns through s[10:11]), sets the flag to 1 and waits for the test
// to make it 2 (meanwhile the test maps other code at the callee's
// address), then calls the callee again and stores v1 in out[0].
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	s_waitcnt lgkmcnt(0)
	v_mov_b32 v1, 0
	v_mov_b32 v2, 0
	s_swappc_b64 s[10:11], s[8:9]
	v_mov_b32 v3, 1
	global_store_dword v2, v3, s[6:7]
	s_waitcnt vmcnt(0)
.Lwait:
	global_load_dword v3, v2, s[6:7] glc
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32 vcc, 2, v3
	s_cbranch_vccnz .Lwait
	s_swappc_b64 s[10:11], s[8:9]
	global_store_dword v2, v1, s[4:5]
	s_endpgm
