// The callee of remap.s mapped in place of remap_a.s: v1 += 16.
	v_add_u32 v1, 16, v1
	s_setpc_b64 s[10:11]
