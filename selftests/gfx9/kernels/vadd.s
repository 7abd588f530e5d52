// c[i] = a[i] + b[i] (u32), i < n.
// Descriptor: kernarg ptr in s[0:1] (user SGPRs 2), workgroup id X in s2,
// workgroups of 256. Kernarg: a (0), b (8), c (16), n (24).
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	s_load_dword s10, s[0:1], 0x18
	s_waitcnt lgkmcnt(0)
	s_lshl_b32 s3, s2, 8
	v_add_u32 v1, s3, v0
	v_cmp_gt_u32 vcc, s10, v1
	s_and_saveexec_b64 s[12:13], vcc
	s_cbranch_execz .Lend
	v_lshlrev_b32 v2, 2, v1
	global_load_dword v3, v2, s[4:5]
	global_load_dword v4, v2, s[6:7]
	s_waitcnt vmcnt(0)
	v_add_u32 v3, v3, v4
	global_store_dword v2, v3, s[8:9]
.Lend:
	s_endpgm
