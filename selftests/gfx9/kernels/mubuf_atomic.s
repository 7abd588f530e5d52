// MUBUF atomics: the 13 operations, 32 and 64 bits, with and without glc,
// through offen, idxen and idxen+offen addressing and an soffset, with
// lanes out of range. One wave of 64 lanes; s[0:1] kernarg:
//   0: in (8 dwords per lane l: src32, cmp32, src64 (2), cmp64 (2), 0, 0)
//   8: mem (512 bytes per lane), 16: out (1 KiB per lane), 24: records
//      of the raw resource, 28: records (elements) of the strided one
// Resources: s[8:11] raw (stride 0), s[12:15] stride 512, both on mem.
// Atomic k (the order above) of each group, for lane l:
//   group 0, 32-bit glc:   raw, offen l*512, offset k*4
//   group 1, 32-bit:       strided, idxen l, offset 64 + k*4
//   group 2, 64-bit glc:   strided, idxen l + offen 128, offset k*8
//   group 3, 64-bit:       raw, offen l*512, soffset 256, offset k*8
// vdata of atomic k: 32-bit v[10+2k:11+2k] = (src32, cmp32), 64-bit
// v[10+4k:13+4k] = (src64, cmp64); after each group its registers go to
// out + l*1024 + 256 * group bytes, one dword each (26 or 52).
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx4 s[16:19], s[0:1], 0x10
	s_waitcnt lgkmcnt(0)
	s_mov_b32 s8, s6
	s_and_b32 s9, s7, 0xffff
	s_mov_b32 s10, s18
	s_mov_b32 s11, 0
	s_mov_b32 s12, s6
	s_and_b32 s13, s7, 0xffff
	s_or_b32 s13, s13, 0x2000000
	s_mov_b32 s14, s19
	s_mov_b32 s15, 0
	s_mov_b32 s18, s16
	s_mov_b32 s19, s17
	s_movk_i32 s16, 0x100
	v_lshlrev_b32 v1, 9, v0
	v_mov_b32 v2, v0
	v_mov_b32 v3, 0x80
	v_lshlrev_b32 v9, 5, v0
	global_load_dwordx4 v[4:7], v9, s[4:5]
	global_load_dwordx2 v[8:9], v9, s[4:5] offset:16
	v_lshlrev_b32 v62, 10, v0
	s_waitcnt vmcnt(0)
// group 0
	v_mov_b32 v10, v4
	v_mov_b32 v11, v5
	v_mov_b32 v12, v4
	v_mov_b32 v13, v5
	v_mov_b32 v14, v4
	v_mov_b32 v15, v5
	v_mov_b32 v16, v4
	v_mov_b32 v17, v5
	v_mov_b32 v18, v4
	v_mov_b32 v19, v5
	v_mov_b32 v20, v4
	v_mov_b32 v21, v5
	v_mov_b32 v22, v4
	v_mov_b32 v23, v5
	v_mov_b32 v24, v4
	v_mov_b32 v25, v5
	v_mov_b32 v26, v4
	v_mov_b32 v27, v5
	v_mov_b32 v28, v4
	v_mov_b32 v29, v5
	v_mov_b32 v30, v4
	v_mov_b32 v31, v5
	v_mov_b32 v32, v4
	v_mov_b32 v33, v5
	v_mov_b32 v34, v4
	v_mov_b32 v35, v5
	buffer_atomic_swap v10, v1, s[8:11], 0 offen offset:0 glc
	buffer_atomic_cmpswap v[12:13], v1, s[8:11], 0 offen offset:4 glc
	buffer_atomic_add v14, v1, s[8:11], 0 offen offset:8 glc
	buffer_atomic_sub v16, v1, s[8:11], 0 offen offset:12 glc
	buffer_atomic_smin v18, v1, s[8:11], 0 offen offset:16 glc
	buffer_atomic_umin v20, v1, s[8:11], 0 offen offset:20 glc
	buffer_atomic_smax v22, v1, s[8:11], 0 offen offset:24 glc
	buffer_atomic_umax v24, v1, s[8:11], 0 offen offset:28 glc
	buffer_atomic_and v26, v1, s[8:11], 0 offen offset:32 glc
	buffer_atomic_or v28, v1, s[8:11], 0 offen offset:36 glc
	buffer_atomic_xor v30, v1, s[8:11], 0 offen offset:40 glc
	buffer_atomic_inc v32, v1, s[8:11], 0 offen offset:44 glc
	buffer_atomic_dec v34, v1, s[8:11], 0 offen offset:48 glc
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v62, v[10:13], s[18:19] offset:0
	global_store_dwordx4 v62, v[14:17], s[18:19] offset:16
	global_store_dwordx4 v62, v[18:21], s[18:19] offset:32
	global_store_dwordx4 v62, v[22:25], s[18:19] offset:48
	global_store_dwordx4 v62, v[26:29], s[18:19] offset:64
	global_store_dwordx4 v62, v[30:33], s[18:19] offset:80
	global_store_dwordx2 v62, v[34:35], s[18:19] offset:96
// group 1
	v_mov_b32 v10, v4
	v_mov_b32 v11, v5
	v_mov_b32 v12, v4
	v_mov_b32 v13, v5
	v_mov_b32 v14, v4
	v_mov_b32 v15, v5
	v_mov_b32 v16, v4
	v_mov_b32 v17, v5
	v_mov_b32 v18, v4
	v_mov_b32 v19, v5
	v_mov_b32 v20, v4
	v_mov_b32 v21, v5
	v_mov_b32 v22, v4
	v_mov_b32 v23, v5
	v_mov_b32 v24, v4
	v_mov_b32 v25, v5
	v_mov_b32 v26, v4
	v_mov_b32 v27, v5
	v_mov_b32 v28, v4
	v_mov_b32 v29, v5
	v_mov_b32 v30, v4
	v_mov_b32 v31, v5
	v_mov_b32 v32, v4
	v_mov_b32 v33, v5
	v_mov_b32 v34, v4
	v_mov_b32 v35, v5
	buffer_atomic_swap v10, v2, s[12:15], 0 idxen offset:64
	buffer_atomic_cmpswap v[12:13], v2, s[12:15], 0 idxen offset:68
	buffer_atomic_add v14, v2, s[12:15], 0 idxen offset:72
	buffer_atomic_sub v16, v2, s[12:15], 0 idxen offset:76
	buffer_atomic_smin v18, v2, s[12:15], 0 idxen offset:80
	buffer_atomic_umin v20, v2, s[12:15], 0 idxen offset:84
	buffer_atomic_smax v22, v2, s[12:15], 0 idxen offset:88
	buffer_atomic_umax v24, v2, s[12:15], 0 idxen offset:92
	buffer_atomic_and v26, v2, s[12:15], 0 idxen offset:96
	buffer_atomic_or v28, v2, s[12:15], 0 idxen offset:100
	buffer_atomic_xor v30, v2, s[12:15], 0 idxen offset:104
	buffer_atomic_inc v32, v2, s[12:15], 0 idxen offset:108
	buffer_atomic_dec v34, v2, s[12:15], 0 idxen offset:112
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v62, v[10:13], s[18:19] offset:256
	global_store_dwordx4 v62, v[14:17], s[18:19] offset:272
	global_store_dwordx4 v62, v[18:21], s[18:19] offset:288
	global_store_dwordx4 v62, v[22:25], s[18:19] offset:304
	global_store_dwordx4 v62, v[26:29], s[18:19] offset:320
	global_store_dwordx4 v62, v[30:33], s[18:19] offset:336
	global_store_dwordx2 v62, v[34:35], s[18:19] offset:352
// group 2
	v_mov_b32 v10, v6
	v_mov_b32 v11, v7
	v_mov_b32 v12, v8
	v_mov_b32 v13, v9
	v_mov_b32 v14, v6
	v_mov_b32 v15, v7
	v_mov_b32 v16, v8
	v_mov_b32 v17, v9
	v_mov_b32 v18, v6
	v_mov_b32 v19, v7
	v_mov_b32 v20, v8
	v_mov_b32 v21, v9
	v_mov_b32 v22, v6
	v_mov_b32 v23, v7
	v_mov_b32 v24, v8
	v_mov_b32 v25, v9
	v_mov_b32 v26, v6
	v_mov_b32 v27, v7
	v_mov_b32 v28, v8
	v_mov_b32 v29, v9
	v_mov_b32 v30, v6
	v_mov_b32 v31, v7
	v_mov_b32 v32, v8
	v_mov_b32 v33, v9
	v_mov_b32 v34, v6
	v_mov_b32 v35, v7
	v_mov_b32 v36, v8
	v_mov_b32 v37, v9
	v_mov_b32 v38, v6
	v_mov_b32 v39, v7
	v_mov_b32 v40, v8
	v_mov_b32 v41, v9
	v_mov_b32 v42, v6
	v_mov_b32 v43, v7
	v_mov_b32 v44, v8
	v_mov_b32 v45, v9
	v_mov_b32 v46, v6
	v_mov_b32 v47, v7
	v_mov_b32 v48, v8
	v_mov_b32 v49, v9
	v_mov_b32 v50, v6
	v_mov_b32 v51, v7
	v_mov_b32 v52, v8
	v_mov_b32 v53, v9
	v_mov_b32 v54, v6
	v_mov_b32 v55, v7
	v_mov_b32 v56, v8
	v_mov_b32 v57, v9
	v_mov_b32 v58, v6
	v_mov_b32 v59, v7
	v_mov_b32 v60, v8
	v_mov_b32 v61, v9
	buffer_atomic_swap_x2 v[10:11], v[2:3], s[12:15], 0 idxen offen offset:0 glc
	buffer_atomic_cmpswap_x2 v[14:17], v[2:3], s[12:15], 0 idxen offen offset:8 glc
	buffer_atomic_add_x2 v[18:19], v[2:3], s[12:15], 0 idxen offen offset:16 glc
	buffer_atomic_sub_x2 v[22:23], v[2:3], s[12:15], 0 idxen offen offset:24 glc
	buffer_atomic_smin_x2 v[26:27], v[2:3], s[12:15], 0 idxen offen offset:32 glc
	buffer_atomic_umin_x2 v[30:31], v[2:3], s[12:15], 0 idxen offen offset:40 glc
	buffer_atomic_smax_x2 v[34:35], v[2:3], s[12:15], 0 idxen offen offset:48 glc
	buffer_atomic_umax_x2 v[38:39], v[2:3], s[12:15], 0 idxen offen offset:56 glc
	buffer_atomic_and_x2 v[42:43], v[2:3], s[12:15], 0 idxen offen offset:64 glc
	buffer_atomic_or_x2 v[46:47], v[2:3], s[12:15], 0 idxen offen offset:72 glc
	buffer_atomic_xor_x2 v[50:51], v[2:3], s[12:15], 0 idxen offen offset:80 glc
	buffer_atomic_inc_x2 v[54:55], v[2:3], s[12:15], 0 idxen offen offset:88 glc
	buffer_atomic_dec_x2 v[58:59], v[2:3], s[12:15], 0 idxen offen offset:96 glc
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v62, v[10:13], s[18:19] offset:512
	global_store_dwordx4 v62, v[14:17], s[18:19] offset:528
	global_store_dwordx4 v62, v[18:21], s[18:19] offset:544
	global_store_dwordx4 v62, v[22:25], s[18:19] offset:560
	global_store_dwordx4 v62, v[26:29], s[18:19] offset:576
	global_store_dwordx4 v62, v[30:33], s[18:19] offset:592
	global_store_dwordx4 v62, v[34:37], s[18:19] offset:608
	global_store_dwordx4 v62, v[38:41], s[18:19] offset:624
	global_store_dwordx4 v62, v[42:45], s[18:19] offset:640
	global_store_dwordx4 v62, v[46:49], s[18:19] offset:656
	global_store_dwordx4 v62, v[50:53], s[18:19] offset:672
	global_store_dwordx4 v62, v[54:57], s[18:19] offset:688
	global_store_dwordx4 v62, v[58:61], s[18:19] offset:704
// group 3
	v_mov_b32 v10, v6
	v_mov_b32 v11, v7
	v_mov_b32 v12, v8
	v_mov_b32 v13, v9
	v_mov_b32 v14, v6
	v_mov_b32 v15, v7
	v_mov_b32 v16, v8
	v_mov_b32 v17, v9
	v_mov_b32 v18, v6
	v_mov_b32 v19, v7
	v_mov_b32 v20, v8
	v_mov_b32 v21, v9
	v_mov_b32 v22, v6
	v_mov_b32 v23, v7
	v_mov_b32 v24, v8
	v_mov_b32 v25, v9
	v_mov_b32 v26, v6
	v_mov_b32 v27, v7
	v_mov_b32 v28, v8
	v_mov_b32 v29, v9
	v_mov_b32 v30, v6
	v_mov_b32 v31, v7
	v_mov_b32 v32, v8
	v_mov_b32 v33, v9
	v_mov_b32 v34, v6
	v_mov_b32 v35, v7
	v_mov_b32 v36, v8
	v_mov_b32 v37, v9
	v_mov_b32 v38, v6
	v_mov_b32 v39, v7
	v_mov_b32 v40, v8
	v_mov_b32 v41, v9
	v_mov_b32 v42, v6
	v_mov_b32 v43, v7
	v_mov_b32 v44, v8
	v_mov_b32 v45, v9
	v_mov_b32 v46, v6
	v_mov_b32 v47, v7
	v_mov_b32 v48, v8
	v_mov_b32 v49, v9
	v_mov_b32 v50, v6
	v_mov_b32 v51, v7
	v_mov_b32 v52, v8
	v_mov_b32 v53, v9
	v_mov_b32 v54, v6
	v_mov_b32 v55, v7
	v_mov_b32 v56, v8
	v_mov_b32 v57, v9
	v_mov_b32 v58, v6
	v_mov_b32 v59, v7
	v_mov_b32 v60, v8
	v_mov_b32 v61, v9
	buffer_atomic_swap_x2 v[10:11], v1, s[8:11], s16 offen offset:0
	buffer_atomic_cmpswap_x2 v[14:17], v1, s[8:11], s16 offen offset:8
	buffer_atomic_add_x2 v[18:19], v1, s[8:11], s16 offen offset:16
	buffer_atomic_sub_x2 v[22:23], v1, s[8:11], s16 offen offset:24
	buffer_atomic_smin_x2 v[26:27], v1, s[8:11], s16 offen offset:32
	buffer_atomic_umin_x2 v[30:31], v1, s[8:11], s16 offen offset:40
	buffer_atomic_smax_x2 v[34:35], v1, s[8:11], s16 offen offset:48
	buffer_atomic_umax_x2 v[38:39], v1, s[8:11], s16 offen offset:56
	buffer_atomic_and_x2 v[42:43], v1, s[8:11], s16 offen offset:64
	buffer_atomic_or_x2 v[46:47], v1, s[8:11], s16 offen offset:72
	buffer_atomic_xor_x2 v[50:51], v1, s[8:11], s16 offen offset:80
	buffer_atomic_inc_x2 v[54:55], v1, s[8:11], s16 offen offset:88
	buffer_atomic_dec_x2 v[58:59], v1, s[8:11], s16 offen offset:96
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v62, v[10:13], s[18:19] offset:768
	global_store_dwordx4 v62, v[14:17], s[18:19] offset:784
	global_store_dwordx4 v62, v[18:21], s[18:19] offset:800
	global_store_dwordx4 v62, v[22:25], s[18:19] offset:816
	global_store_dwordx4 v62, v[26:29], s[18:19] offset:832
	global_store_dwordx4 v62, v[30:33], s[18:19] offset:848
	global_store_dwordx4 v62, v[34:37], s[18:19] offset:864
	global_store_dwordx4 v62, v[38:41], s[18:19] offset:880
	global_store_dwordx4 v62, v[42:45], s[18:19] offset:896
	global_store_dwordx4 v62, v[46:49], s[18:19] offset:912
	global_store_dwordx4 v62, v[50:53], s[18:19] offset:928
	global_store_dwordx4 v62, v[54:57], s[18:19] offset:944
	global_store_dwordx4 v62, v[58:61], s[18:19] offset:960
	s_endpgm
