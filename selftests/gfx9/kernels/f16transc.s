// v_log_f16, v_exp_f16, v_sin_f16, v_cos_f16 of every f16 (gfx9_test.c
// f16_transcendentals_every_input). Work-item g (workgroups of 64, s2
// the workgroup id) takes the f16 whose bits are g and writes 4 dwords at
// out[4g]: log2, 2^x, sin and cos of x turns. Kernarg: out (0).
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_lshl_b32 s3, s2, 6
	v_add_u32 v1, s3, v0
	v_lshlrev_b32 v2, 4, v1
	v_log_f16 v10, v1
	v_exp_f16 v11, v1
	v_sin_f16 v12, v1
	v_cos_f16 v13, v1
	s_waitcnt lgkmcnt(0)
	global_store_dwordx4 v2, v[10:13], s[4:5]
	s_endpgm
