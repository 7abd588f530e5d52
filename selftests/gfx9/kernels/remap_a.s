// The first callee of remap.s: v1 += 1.
	v_add_u32 v1, 1, v1
	s_setpc_b64 s[10:11]
