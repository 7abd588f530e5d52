// binary64 compares (VOPC 0x60-0x7f). Kernarg: in (0), out (8).
// s[0:1] kernarg, s2 workgroup id; workgroups of 64. Per work-item g,
// a = in[2 g], b = in[2 g + 1] (doubles); out[24 g + k], 1 if true else 0:
//  k 0-15   v_cmp_{f,lt,eq,le,gt,lg,ge,o,u,nge,nlg,ngt,nle,neq,nlt,tru}_f64
//           a, b (VOP3, into an SGPR pair)
//  k 16     v_cmp_lt_f64 -|a|, b
//  k 17     v_cmpx_le_f64 a, b (the EXEC it leaves)
//  k 18     v_cmp_ge_f64 (e32, into VCC) a, b
//  k 19     v_cmp_eq_f64 a, 1.0 (inline constant)
//  k 20, 21 with MODE.FP_DENORM for f64 set to 0 (subnormal inputs
//           flushed): v_cmp_eq_f64 a, 0 and v_cmp_lt_f64 a, b
//  k 22, 23 0
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	s_lshl_b32 s3, s2, 6
	v_add_u32 v1, s3, v0
	v_lshlrev_b32 v2, 4, v1
	global_load_dwordx4 v[3:6], v2, s[4:5]
	s_waitcnt vmcnt(0)
	v_cmp_f_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v10, 0, 1, s[8:9]
	v_cmp_lt_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v11, 0, 1, s[8:9]
	v_cmp_eq_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v12, 0, 1, s[8:9]
	v_cmp_le_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v13, 0, 1, s[8:9]
	v_cmp_gt_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v14, 0, 1, s[8:9]
	v_cmp_lg_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v15, 0, 1, s[8:9]
	v_cmp_ge_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v16, 0, 1, s[8:9]
	v_cmp_o_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v17, 0, 1, s[8:9]
	v_cmp_u_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v18, 0, 1, s[8:9]
	v_cmp_nge_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v19, 0, 1, s[8:9]
	v_cmp_nlg_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v20, 0, 1, s[8:9]
	v_cmp_ngt_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v21, 0, 1, s[8:9]
	v_cmp_nle_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v22, 0, 1, s[8:9]
	v_cmp_neq_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v23, 0, 1, s[8:9]
	v_cmp_nlt_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v24, 0, 1, s[8:9]
	v_cmp_tru_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v25, 0, 1, s[8:9]
	v_cmp_lt_f64_e64 s[8:9], -|v[3:4]|, v[5:6]
	v_cndmask_b32_e64 v26, 0, 1, s[8:9]
	s_mov_b64 s[10:11], exec
	v_cmpx_le_f64_e64 s[8:9], v[3:4], v[5:6]
	s_mov_b64 s[12:13], exec
	s_mov_b64 exec, s[10:11]
	v_cndmask_b32_e64 v27, 0, 1, s[12:13]
	v_cmp_ge_f64 vcc, v[3:4], v[5:6]
	v_cndmask_b32_e64 v28, 0, 1, vcc
	v_cmp_eq_f64_e64 s[8:9], v[3:4], 1.0
	v_cndmask_b32_e64 v29, 0, 1, s[8:9]
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 6, 2), 0
	v_cmp_eq_f64_e64 s[8:9], v[3:4], 0
	v_cndmask_b32_e64 v30, 0, 1, s[8:9]
	v_cmp_lt_f64_e64 s[8:9], v[3:4], v[5:6]
	v_cndmask_b32_e64 v31, 0, 1, s[8:9]
	v_mov_b32 v32, 0
	v_mov_b32 v33, 0
	v_mul_u32_u24 v2, 0x60, v1
	global_store_dwordx4 v2, v[10:13], s[6:7]
	global_store_dwordx4 v2, v[14:17], s[6:7] offset:16
	global_store_dwordx4 v2, v[18:21], s[6:7] offset:32
	global_store_dwordx4 v2, v[22:25], s[6:7] offset:48
	global_store_dwordx4 v2, v[26:29], s[6:7] offset:64
	global_store_dwordx4 v2, v[30:33], s[6:7] offset:80
	s_endpgm
