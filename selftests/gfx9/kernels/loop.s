// A long loop for preemption: out[i] = i * n + 7, computed by adding i
// n times. Kernarg: out (0), n (8). s[0:1] kernarg, s2 wg id, wg 64.
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dword s6, s[0:1], 0x8
	s_waitcnt lgkmcnt(0)
	s_lshl_b32 s3, s2, 6
	v_add_u32 v1, s3, v0
	v_mov_b32 v2, 7
.Lloop:
	v_add_u32 v2, v2, v1
	s_sub_u32 s6, s6, 1
	s_cmp_lg_u32 s6, 0
	s_cbranch_scc1 .Lloop
	v_lshlrev_b32 v3, 2, v1
	global_store_dword v3, v2, s[4:5]
	s_endpgm
