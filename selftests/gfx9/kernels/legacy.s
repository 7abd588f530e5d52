// v_exp_legacy_f32, v_log_legacy_f32 and v_trig_preop_f64
// (gfx9_test.c legacy_transc_trig_preop_known_answers). One wave of 64
// lanes: lane l reads 4 dwords at in[4l]: x (binary32), y (binary64),
// seg, and writes 12 dwords at out[12l]. Kernarg: in (0), out (8).
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	v_lshlrev_b32 v2, 4, v0
	v_mul_u32_u24 v3, 48, v0
	s_waitcnt lgkmcnt(0)
	global_load_dwordx4 v[10:13], v2, s[4:5]
	s_waitcnt vmcnt(0)
	v_exp_legacy_f32 v20, v10
	v_log_legacy_f32 v21, v10
	v_log_legacy_f32_e64 v22, |v10|
	v_exp_legacy_f32_e64 v23, -v10
	v_trig_preop_f64 v[24:25], v[11:12], v13
	v_trig_preop_f64 v[26:27], v[11:12], 1
	v_trig_preop_f64 v[28:29], -v[11:12], 2
	v_trig_preop_f64 v[30:31], v[11:12], 0
	global_store_dwordx4 v3, v[20:23], s[6:7]
	global_store_dwordx4 v3, v[24:27], s[6:7] offset:16
	global_store_dwordx4 v3, v[28:31], s[6:7] offset:32
	s_endpgm
