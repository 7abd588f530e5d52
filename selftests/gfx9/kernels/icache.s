// Self-modifying code (one wave). Kernarg: out (0). The instruction at
// .Lpatch runs twice: after its first run the wave stores the word of
// .Lnew over it and executes s_icache_inv, so the second run is the new
// instruction. From the code as assembled: v1 = 1 + 16 = 17 (out[0]).
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_getpc_b64 s[10:11]
.Lpc:
	s_add_u32 s12, s10, .Lpatch-.Lpc
	s_addc_u32 s13, s11, 0
	s_add_u32 s10, s10, .Lnew-.Lpc
	s_addc_u32 s11, s11, 0
	s_load_dword s9, s[10:11], 0x0
	s_waitcnt lgkmcnt(0)
	v_mov_b32 v1, 0
	v_mov_b32 v3, 0
	s_mov_b32 s8, 0
.Lpatch:
	v_add_u32 v1, 1, v1
	s_cmp_eq_u32 s8, 1
	s_cbranch_scc1 .Ldone
	v_mov_b32 v2, s9
	global_store_dword v3, v2, s[12:13]
	s_waitcnt vmcnt(0)
	s_icache_inv
	s_mov_b32 s8, 1
	s_branch .Lpatch
.Ldone:
	global_store_dword v3, v1, s[4:5]
	s_endpgm
.Lnew:
	v_add_u32 v1, 16, v1
