// MUBUF format loads through a resource the test describes. One wave of
// 64 lanes; s[0:1] kernarg: 0: mem, 8: out, 16: word 3 of the resource
// (DST_SEL, NUM_FORMAT, DATA_FORMAT), 20: num_records, 24: stride,
// 28: index multiplier i, 32: offset multiplier o.
// Lane l: idxen offen with index l * i and offset l * o, and
//   v10      = buffer_load_format_x
//   v[11:12] = buffer_load_format_xy
//   v[13:15] = buffer_load_format_xyz
//   v[16:19] = buffer_load_format_xyzw   (all 0xdeadbeef before)
// stored to out + l * 64 (10 dwords).
	s_load_dwordx8 s[16:23], s[0:1], 0x0
	s_load_dword s24, s[0:1], 0x20
	s_waitcnt lgkmcnt(0)
	s_mov_b32 s8, s16
	s_and_b32 s9, s17, 0xffff
	s_lshl_b32 s22, s22, 16
	s_or_b32 s9, s9, s22
	s_mov_b32 s10, s21
	s_mov_b32 s11, s20
	v_mul_lo_u32 v2, v0, s23
	v_mul_lo_u32 v3, v0, s24
	v_mov_b32 v10, 0xdeadbeef
	v_mov_b32 v11, v10
	v_mov_b32 v12, v10
	v_mov_b32 v13, v10
	v_mov_b32 v14, v10
	v_mov_b32 v15, v10
	v_mov_b32 v16, v10
	v_mov_b32 v17, v10
	v_mov_b32 v18, v10
	v_mov_b32 v19, v10
	buffer_load_format_x v10, v[2:3], s[8:11], 0 idxen offen
	buffer_load_format_xy v[11:12], v[2:3], s[8:11], 0 idxen offen
	buffer_load_format_xyz v[13:15], v[2:3], s[8:11], 0 idxen offen
	buffer_load_format_xyzw v[16:19], v[2:3], s[8:11], 0 idxen offen
	v_lshlrev_b32 v4, 6, v0
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v4, v[10:13], s[18:19]
	global_store_dwordx4 v4, v[14:17], s[18:19] offset:16
	global_store_dwordx2 v4, v[18:19], s[18:19] offset:32
	s_endpgm
