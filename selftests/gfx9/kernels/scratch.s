// The private segment (scratch) through MUBUF, SCRATCH_* and the private
// aperture. Workgroups of 128 (2 waves). User SGPRs: s[0:3] the scratch
// buffer resource, s[4:5] kernarg (out), s[6:7] flat scratch init; system:
// s8 workgroup id X, s9 the wave's scratch byte offset.
// Per work-item g: private dwords a[k] = 16 g + k (k < 8), then
// out[8 g + 0] = a[g & 7] (buffer_load_dword offen)
// out[8 g + 1] = a[g & 7] (scratch_load_dword from a VGPR offset)
// out[8 g + 2] = g ^ 0x5a5a (scratch_store_dword, buffer_load_dword)
// out[8 g + 3] = g (flat_store_dword in the private aperture, buffer load)
// out[8 g + 4] = sign-extended byte (g | 0x80) (store_byte at private
// byte 97, load_sbyte)
// out[8 g + 5] = (g | 0x80) & 0xff) << 8 (the dword holding that byte)
// out[8 g + 6] = a[2] + a[3] (buffer_load_dwordx2)
// out[8 g + 7] = a[5] (scratch_load_dword from an SGPR offset)
	s_load_dwordx2 s[10:11], s[4:5], 0x0
	s_add_u32 flat_scratch_lo, s6, s9
	s_addc_u32 flat_scratch_hi, s7, 0
	s_lshl_b32 s12, s8, 7
	v_add_u32 v1, s12, v0
	v_lshlrev_b32 v2, 4, v1
	v_add_u32 v3, 0, v2
	buffer_store_dword v3, off, s[0:3], s9
	v_add_u32 v3, 1, v2
	buffer_store_dword v3, off, s[0:3], s9 offset:4
	v_add_u32 v3, 2, v2
	v_add_u32 v4, 3, v2
	buffer_store_dwordx2 v[3:4], off, s[0:3], s9 offset:8
	v_add_u32 v3, 4, v2
	v_add_u32 v4, 5, v2
	v_add_u32 v5, 6, v2
	v_add_u32 v6, 7, v2
	buffer_store_dwordx4 v[3:6], off, s[0:3], s9 offset:16
	v_mov_b32 v3, 0
	buffer_store_dword v3, off, s[0:3], s9 offset:96
	// The other wave of the workgroup stores before anyone loads.
	s_waitcnt vmcnt(0)
	s_barrier
	v_and_b32 v5, 7, v1
	v_lshlrev_b32 v5, 2, v5
	buffer_load_dword v20, v5, s[0:3], s9 offen
	scratch_load_dword v21, v5, off
	v_xor_b32 v8, 0x5a5a, v1
	scratch_store_dword v5, v8, off offset:32
	buffer_load_dword v22, v5, s[0:3], s9 offen offset:32
	s_mov_b32 s15, src_private_base
	v_add_u32 v10, 48, v5
	v_mov_b32 v11, s15
	flat_store_dword v[10:11], v1
	s_waitcnt vmcnt(0) lgkmcnt(0)
	buffer_load_dword v23, v5, s[0:3], s9 offen offset:48
	v_or_b32 v12, 0x80, v1
	buffer_store_byte v12, off, s[0:3], s9 offset:97
	buffer_load_sbyte v24, off, s[0:3], s9 offset:97
	buffer_load_dword v25, off, s[0:3], s9 offset:96
	buffer_load_dwordx2 v[28:29], off, s[0:3], s9 offset:8
	s_waitcnt vmcnt(0)
	v_add_u32 v26, v28, v29
	s_mov_b32 s13, 16
	scratch_load_dword v27, off, s13 offset:4
	v_lshlrev_b32 v30, 5, v1
	s_waitcnt vmcnt(0) lgkmcnt(0)
	global_store_dwordx4 v30, v[20:23], s[10:11]
	global_store_dwordx4 v30, v[24:27], s[10:11] offset:16
	s_endpgm
