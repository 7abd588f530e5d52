// SPDX-License-Identifier: GPL-2.0
//
// The plugin's chunk scan as gfx906 machine code (gpu_scan.h): three
// kernels, each at a 256-byte aligned entry (COMPUTE_PGM_LO takes the
// address >> 8). Assembled by llvm-mc-15 at build time; the .text bytes are
// embedded in the plugin (gpu_scan_code.c, generated).
//
// Register state at entry (COMPUTE_PGM_RSRC2: USER_SGPR 2, TGID_X_EN,
// TIDIG_COMP_CNT 0; workgroups of 64 work-items, one wave):
//   s[0:1]  kernarg pointer (COMPUTE_USER_DATA_0/1)
//   s2      workgroup id X
//   v0      work-item id X
// Kernarg (struct kp_scan_args): src u64 @0, out u64 @8, size u64 @16,
// chunk u32 @24, nchunks u32 @28. Work-item c = 64 * s2 + v0 handles chunk c
// (bytes [c * chunk, min((c + 1) * chunk, size)) of src; chunk and size are
// multiples of 8) when c < nchunks, and writes two u64 at out + 16 * c:
//   kp_scan_xxh64   XXH64 (seed 0) of the chunk, then the OR of its words
//   kp_scan_fold64  checksum.c's kp_sum_buf() of the chunk, then the OR
//   kp_scan_zero    0, then 0 if the chunk is all zero, else its first
//                   non-zero word (the rest of the chunk is not read)
// Each lane runs its own chunk's words in order; the lanes of a wave are
// chunks side by side, so EXEC masks the lanes whose chunk (the last,
// shorter one) has ended.
//
// Registers common to the three kernels:
//   s[4:5] src, s[6:7] out, s[8:9] size, s10 chunk, s11 nchunks
//   v7 the chunk's length, v[8:9] the read pointer, v[10:11] where the
//   results go, v[38:39] the OR of the words read, v[44:45] the sum h

// ---- 64-bit helpers on VGPR pairs (numbers of the low register) ----

// v[d:d+1] = v[a:a+1] * s[k:k+1] mod 2^64; v[t:t+1] scratch; d != a.
.macro MUL64 d, a, k, t
	v_mad_u64_u32 v[\d:\d+1], s[28:29], v[\a], s[\k], 0
	v_mul_lo_u32 v[\t], v[\a], s[\k+1]
	v_mul_lo_u32 v[\t+1], v[\a+1], s[\k]
	v_add3_u32 v[\d+1], v[\d+1], v[\t], v[\t+1]
.endm

// v[d:d+1] = rotl64(v[a:a+1], r), 0 < r < 32; d != a.
.macro ROTL64 d, a, r
	v_alignbit_b32 v[\d+1], v[\a+1], v[\a], 32 - \r
	v_alignbit_b32 v[\d], v[\a], v[\a+1], 32 - \r
.endm

// v[d:d+1] = v[a:a+1] + v[b:b+1] mod 2^64.
.macro ADD64 d, a, b
	v_add_co_u32 v[\d], vcc, v[\a], v[\b]
	v_addc_co_u32 v[\d+1], vcc, v[\a+1], v[\b+1], vcc
.endm

// v[d:d+1] = v[a:a+1] ^ v[b:b+1].
.macro XOR64 d, a, b
	v_xor_b32 v[\d], v[\a], v[\b]
	v_xor_b32 v[\d+1], v[\a+1], v[\b+1]
.endm

// v[d:d+1] = lo, hi.
.macro MOV64 d, lo, hi
	v_mov_b32 v[\d], \lo
	v_mov_b32 v[\d+1], \hi
.endm

// s[d:d+1] = lo, hi.
.macro SMOV64 d, lo, hi
	s_mov_b32 s[\d], \lo
	s_mov_b32 s[\d+1], \hi
.endm

// v[p:p+1] += n.
.macro ADVANCE p, n
	v_add_co_u32 v[\p], vcc, \n, v[\p]
	v_addc_co_u32 v[\p+1], vcc, 0, v[\p+1], vcc
.endm

// ---- the part every kernel starts with ----
//
// Kernarg into s[4:11]; EXEC = the lanes with a chunk (the rest end);
// v7 = the chunk's length, v[8:9] = src + c * chunk, v[10:11] = out + 16 c,
// v[38:39] = 0. Branches to \end when no lane has a chunk.
.macro PROLOGUE end
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx4 s[8:11], s[0:1], 0x10
	s_waitcnt lgkmcnt(0)
	s_lshl_b32 s3, s2, 6
	v_add_u32 v1, s3, v0
	v_cmp_gt_u32 vcc, s11, v1
	s_and_saveexec_b64 s[12:13], vcc
	s_cbranch_execz \end
	// off = c * chunk; the bytes left from there, at most chunk.
	v_mad_u64_u32 v[2:3], s[14:15], v1, s10, 0
	v_mov_b32 v6, s9
	v_sub_co_u32 v4, vcc, s8, v2
	v_subb_co_u32 v5, vcc, v6, v3, vcc
	v_mov_b32 v6, s10
	v_cmp_ne_u32 vcc, 0, v5
	v_cndmask_b32 v4, v4, v6, vcc
	v_min_u32 v7, v4, v6
	// Read pointer and result address.
	v_mov_b32 v9, s5
	v_add_co_u32 v8, vcc, s4, v2
	v_addc_co_u32 v9, vcc, v9, v3, vcc
	v_lshrrev_b32 v11, 28, v1
	v_lshlrev_b32 v10, 4, v1
	v_mov_b32 v12, s7
	v_add_co_u32 v10, vcc, s6, v10
	v_addc_co_u32 v11, vcc, v12, v11, vcc
	MOV64 38, 0, 0
.endm

// Store v[44:45], v[38:39] at v[10:11] and end.
.macro EPILOGUE
	v_mov_b32 v48, v44
	v_mov_b32 v49, v45
	v_mov_b32 v50, v38
	v_mov_b32 v51, v39
	global_store_dwordx4 v[10:11], v[48:51], off
	s_waitcnt vmcnt(0)
.endm

// ---- XXH64 ----

// XXH64's primes in SGPRs: P1 s[16:17], P2 s[18:19], P3 s[20:21].
.macro XXH_PRIMES
	SMOV64 16, 0x85ebca87, 0x9e3779b1
	SMOV64 18, 0x27d4eb4f, 0xc2b2ae3d
	SMOV64 20, 0x9e3779f9, 0x165667b1
.endm

// v[acc] = rotl64(v[acc] + v[in] * P2, 31) * P1; v[t..t+3] scratch.
.macro XROUND acc, in, t
	MUL64 \t, \in, 18, \t + 2
	ADD64 \t, \t, \acc
	ROTL64 \t + 2, \t, 31
	MUL64 \acc, \t + 2, 16, \t
.endm

// v[d] = the round of a zero accumulator: rotl64(v[in] * P2, 31) * P1.
.macro XROUND0 d, in, t
	MUL64 \t, \in, 18, \t + 2
	ROTL64 \t + 2, \t, 31
	MUL64 \d, \t + 2, 16, \t
.endm

// h = (h ^ round0(lane)) * P1 + P4, P4 in v[14:15]; v[40..47] scratch.
.macro XMERGE lane
	XROUND0 46, \lane, 40
	XOR64 40, 44, 46
	MUL64 44, 40, 16, 42
	ADD64 44, 44, 14
.endm

	.text
	.p2align 8
	.globl kp_scan_xxh64
kp_scan_xxh64:
	PROLOGUE .Lx_end
	XXH_PRIMES
	MOV64 14, 0xc2b2ae63, 0x85ebca77	// P4
	MOV64 44, 0x165667c5, 0x27d4eb2f	// h = P5 for a chunk under 32 bytes
	v_lshrrev_b32 v12, 5, v7		// 32-byte stripes
	v_bfe_u32 v13, v7, 3, 2			// 8-byte words after them
	// Four lanes: P1 + P2, P2, 0, -P1.
	MOV64 30, 0xadc0b5d6, 0x60ea27ee
	MOV64 32, 0x27d4eb4f, 0xc2b2ae3d
	MOV64 34, 0, 0
	MOV64 36, 0x7a143579, 0x61c8864e
	v_cmp_ne_u32 vcc, 0, v12
	s_and_saveexec_b64 s[30:31], vcc	// s[30:31]: lanes with a chunk
	s_mov_b64 s[32:33], exec		// lanes with stripes
	s_cbranch_execz .Lx_words
.Lx_stripe:
	global_load_dwordx4 v[20:23], v[8:9], off
	global_load_dwordx4 v[24:27], v[8:9], off offset:16
	s_waitcnt vmcnt(0)
	v_or3_b32 v38, v38, v20, v22
	v_or3_b32 v38, v38, v24, v26
	v_or3_b32 v39, v39, v21, v23
	v_or3_b32 v39, v39, v25, v27
	XROUND 30, 20, 40
	XROUND 32, 22, 40
	XROUND 34, 24, 40
	XROUND 36, 26, 40
	ADVANCE 8, 32
	v_add_u32 v12, -1, v12
	v_cmp_ne_u32 vcc, 0, v12
	s_and_b64 exec, exec, vcc
	s_cbranch_execnz .Lx_stripe
	// h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18), merged.
	s_mov_b64 exec, s[32:33]
	ROTL64 44, 30, 1
	ROTL64 46, 32, 7
	ADD64 44, 44, 46
	ROTL64 46, 34, 12
	ADD64 44, 44, 46
	ROTL64 46, 36, 18
	ADD64 44, 44, 46
	XMERGE 30
	XMERGE 32
	XMERGE 34
	XMERGE 36
.Lx_words:
	s_mov_b64 exec, s[30:31]
	// h += len, then up to three 8-byte words.
	v_add_co_u32 v44, vcc, v44, v7
	v_addc_co_u32 v45, vcc, 0, v45, vcc
	v_cmp_ne_u32 vcc, 0, v13
	s_and_b64 exec, exec, vcc
	s_cbranch_execz .Lx_final
.Lx_word:
	global_load_dwordx2 v[20:21], v[8:9], off
	s_waitcnt vmcnt(0)
	v_or_b32 v38, v38, v20
	v_or_b32 v39, v39, v21
	// h = rotl(h ^ round0(w), 27) * P1 + P4
	XROUND0 46, 20, 40
	XOR64 40, 44, 46
	ROTL64 42, 40, 27
	MUL64 44, 42, 16, 40
	ADD64 44, 44, 14
	ADVANCE 8, 8
	v_add_u32 v13, -1, v13
	v_cmp_ne_u32 vcc, 0, v13
	s_and_b64 exec, exec, vcc
	s_cbranch_execnz .Lx_word
.Lx_final:
	s_mov_b64 exec, s[30:31]
	// Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3;
	// h ^= h >> 32.
	v_lshrrev_b64 v[40:41], 33, v[44:45]
	XOR64 44, 44, 40
	MUL64 40, 44, 18, 46
	v_lshrrev_b64 v[42:43], 29, v[40:41]
	XOR64 40, 40, 42
	MUL64 44, 40, 20, 46
	v_xor_b32 v44, v44, v45
	EPILOGUE
.Lx_end:
	s_endpgm

// ---- fold64: checksum.c's kp_sum_buf() of a multiple of 8 bytes ----

	.p2align 8
	.globl kp_scan_fold64
kp_scan_fold64:
	PROLOGUE .Lf_end
	SMOV64 16, 0x7f4a7c15, 0x9e3779b9	// the word multiplier
	SMOV64 18, 0x6659fd93, 0xd6e8feb8	// the final one
	MOV64 44, 0x75636b31, 0x6b666473	// the seed
	v_lshrrev_b32 v12, 3, v7		// words
	v_cmp_ne_u32 vcc, 0, v12
	s_and_saveexec_b64 s[30:31], vcc
	s_cbranch_execz .Lf_final
.Lf_word:
	// h = (h ^ w) * M; h ^= h >> 29
	global_load_dwordx2 v[20:21], v[8:9], off
	s_waitcnt vmcnt(0)
	v_or_b32 v38, v38, v20
	v_or_b32 v39, v39, v21
	XOR64 44, 44, 20
	MUL64 40, 44, 16, 46
	v_lshrrev_b64 v[42:43], 29, v[40:41]
	XOR64 44, 40, 42
	ADVANCE 8, 8
	v_add_u32 v12, -1, v12
	v_cmp_ne_u32 vcc, 0, v12
	s_and_b64 exec, exec, vcc
	s_cbranch_execnz .Lf_word
.Lf_final:
	s_mov_b64 exec, s[30:31]
	// h ^= len; h ^= h >> 31; h *= F; h ^= h >> 32; h *= F; h ^= h >> 32
	v_xor_b32 v44, v44, v7
	v_lshrrev_b64 v[40:41], 31, v[44:45]
	XOR64 44, 44, 40
	MUL64 40, 44, 18, 46
	v_xor_b32 v40, v40, v41
	MUL64 44, 40, 18, 46
	v_xor_b32 v44, v44, v45
	EPILOGUE
.Lf_end:
	s_endpgm

// ---- zero test: stop at a chunk's first non-zero word ----

	.p2align 8
	.globl kp_scan_zero
kp_scan_zero:
	PROLOGUE .Lz_end
	MOV64 44, 0, 0
	v_lshrrev_b32 v12, 3, v7		// words
	v_cmp_ne_u32 vcc, 0, v12
	s_and_saveexec_b64 s[30:31], vcc
	s_cbranch_execz .Lz_done
.Lz_word:
	global_load_dwordx2 v[38:39], v[8:9], off
	s_waitcnt vmcnt(0)
	ADVANCE 8, 8
	v_add_u32 v12, -1, v12
	// Go on while the words are zero and the chunk has more.
	v_or_b32 v40, v38, v39
	v_cmp_eq_u32 vcc, 0, v40
	s_and_b64 exec, exec, vcc
	v_cmp_ne_u32 vcc, 0, v12
	s_and_b64 exec, exec, vcc
	s_cbranch_execnz .Lz_word
.Lz_done:
	s_mov_b64 exec, s[30:31]
	EPILOGUE
.Lz_end:
	s_endpgm
