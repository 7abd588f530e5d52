// LDS, barriers, cross-lane ops and atomics. Workgroups of 256 (4 waves).
// Kernarg: in (0), out (8), total (16). s[0:1] kernarg, s2 workgroup id.
// out[2g] = in of the work-item 255 - l of the same workgroup,
// out[2g + 1] = in[g & ~1] + in[g | 1] (a pair through ds_read2_b32),
// bp[g] (out + 8 * n) = in of the lane l ^ 1 of the same wave (bpermute);
// total[0] += sum of in over the grid (LDS atomics, then one global
// atomic per workgroup), total[1] += 1 per work-item.
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	s_waitcnt lgkmcnt(0)
	s_lshl_b32 s3, s2, 8
	v_add_u32 v1, s3, v0
	v_lshlrev_b32 v2, 2, v1
	global_load_dword v3, v2, s[4:5]
	v_lshlrev_b32 v4, 2, v0
	v_mov_b32 v5, 0
	v_cmp_eq_u32 vcc, 0, v0
	s_and_saveexec_b64 s[10:11], vcc
	ds_write_b32 v5, v5 offset:1024
	s_or_b64 exec, exec, s[10:11]
	s_waitcnt vmcnt(0)
	ds_write_b32 v4, v3
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_add_u32 v5, v3 offset:1024
	v_sub_u32 v6, 255, v0
	v_lshlrev_b32 v6, 2, v6
	ds_read_b32 v7, v6
	v_and_b32 v8, -2, v0
	v_lshlrev_b32 v8, 2, v8
	ds_read2_b32 v[8:9], v8 offset1:1
	s_waitcnt lgkmcnt(0)
	v_add_u32 v9, v8, v9
	v_mov_b32 v8, v7
	v_lshlrev_b32 v10, 3, v1
	global_store_dwordx2 v10, v[8:9], s[6:7]
	v_mbcnt_lo_u32_b32 v11, -1, 0
	v_mbcnt_hi_u32_b32 v11, -1, v11
	v_xor_b32 v11, 1, v11
	v_lshlrev_b32 v11, 2, v11
	ds_bpermute_b32 v12, v11, v3
	s_load_dword s12, s[0:1], 0x18
	s_waitcnt lgkmcnt(0)
	s_lshl_b32 s12, s12, 3
	s_add_u32 s14, s6, s12
	s_addc_u32 s15, s7, 0
	global_store_dword v2, v12, s[14:15]
	v_mov_b32 v13, 1
	global_atomic_add v5, v13, s[8:9] offset:4
	s_barrier
	s_and_saveexec_b64 s[10:11], vcc
	ds_read_b32 v14, v5 offset:1024
	s_waitcnt lgkmcnt(0)
	global_atomic_add v5, v14, s[8:9]
	s_endpgm
