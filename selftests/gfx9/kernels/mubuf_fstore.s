// MUBUF format stores through a resource the test describes; kernarg as
// in mubuf_fload.s (out unused). Lane l: vdata v[10:13] = l + 0x10000000,
// l + 0x20000000, l + 0x30000000, l + 0x40000000, and with idxen offen
// (index l * i, offset l * o)
//   buffer_store_format_x    offset:0
//   buffer_store_format_xy   offset:16
//   buffer_store_format_xyz  offset:32
//   buffer_store_format_xyzw offset:48
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
	v_add_u32 v10, 0x10000000, v0
	v_add_u32 v11, 0x20000000, v0
	v_add_u32 v12, 0x30000000, v0
	v_add_u32 v13, 0x40000000, v0
	buffer_store_format_x v10, v[2:3], s[8:11], 0 idxen offen
	buffer_store_format_xy v[10:11], v[2:3], s[8:11], 0 idxen offen offset:16
	buffer_store_format_xyz v[10:12], v[2:3], s[8:11], 0 idxen offen offset:32
	buffer_store_format_xyzw v[10:13], v[2:3], s[8:11], 0 idxen offen offset:48
	s_waitcnt vmcnt(0)
	s_endpgm
