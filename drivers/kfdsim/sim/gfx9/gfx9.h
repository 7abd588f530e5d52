/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the gfx9 machine-code engine: wave state, the decoded
 * instruction, the per-format opcode tables and the operand helpers the
 * format files share. Only the engine's own files include this.
 */
#ifndef KFDSIM_GFX9_INTERNAL_H
#define KFDSIM_GFX9_INTERNAL_H

#include <linux/bits.h>
#include <linux/types.h>

#include "kfdsim.h"
#include "kfdsim_gfx9.h"

#define GFX9_LANES		64
#define GFX9_MAX_VGPRS		256
#define GFX9_MAX_WAVES		(KFDSIM_MAX_WG_SIZE / GFX9_LANES)
#define GFX9_LDS_SIZE		(64 * 1024)
/*
 * VGPR rows allocated past a wave's count, so that the operands of one
 * instruction that start inside the allocation (checked once) never reach
 * past it: up to 4 dwords of a load or store.
 */
#define GFX9_VGPR_PAD		4

/* Scalar operand encodings (the 8-bit SSRC / SDST fields, 9-bit SRC). */
#define GFX9_SGPR_LAST		101
#define GFX9_FLAT_SCR_LO	102
#define GFX9_XNACK_MASK_LO	104
#define GFX9_VCC_LO		106
#define GFX9_VCC_HI		107
#define GFX9_TTMP0		108
#define GFX9_TTMP15		123
#define GFX9_M0			124
#define GFX9_EXEC_LO		126
#define GFX9_EXEC_HI		127
#define GFX9_SRC_ZERO		128
#define GFX9_SRC_INT_MAX	192	/* 129..192: 1..64 */
#define GFX9_SRC_NEG_MAX	208	/* 193..208: -1..-16 */
#define GFX9_SRC_SHARED_BASE	235
#define GFX9_SRC_SHARED_LIMIT	236
#define GFX9_SRC_PRIVATE_BASE	237
#define GFX9_SRC_PRIVATE_LIMIT	238
#define GFX9_SRC_POPS_EXITING	239
#define GFX9_SRC_FLOAT_FIRST	240	/* 240..248: 0.5 .. 1/(2 pi) */
#define GFX9_SRC_FLOAT_LAST	248
#define GFX9_SRC_SDWA		249
#define GFX9_SRC_DPP		250
#define GFX9_SRC_VCCZ		251
#define GFX9_SRC_EXECZ		252
#define GFX9_SRC_SCC		253
#define GFX9_SRC_LDS_DIRECT	254
#define GFX9_SRC_LITERAL	255
#define GFX9_SRC_VGPR0		256
/*
 * After DPP or SDWA decoding, src0 (and SDWA's src1) name the dispatch's
 * extension rows (struct gfx9_disp.ext) by these codes: the operand as
 * the extension delivers it, lane by lane (dpp.c, sdwa.c).
 */
#define GFX9_SRC_EXT0		GFX9_SRC_SDWA
#define GFX9_SRC_EXT1		GFX9_SRC_DPP

/* How an inline float constant or a literal reads for an operand. */
enum gfx9_kind {
	GFX9_B32,	/* 32 bits; float constants as binary32 */
	GFX9_B64,	/* 64-bit integer; constants sign-extended */
	GFX9_F64,	/* binary64; a literal is the high half */
};

enum gfx9_wave_state {
	GFX9_WAVE_RUN,
	GFX9_WAVE_BARRIER,	/* waiting in s_barrier */
	GFX9_WAVE_DONE,		/* s_endpgm */
};

/**
 * struct gfx9_wave - the architectural state of one 64-lane wave
 * @sreg: scalar registers by operand encoding: s0-s101, FLAT_SCRATCH,
 *        XNACK_MASK, VCC, TTMP0-15, M0, EXEC (so vcc is sreg[106..107])
 * @vgpr: @nvgpr rows of GFX9_LANES lanes, register-major
 * @pc: byte address of the next instruction
 * @scc: the scalar condition code
 * @state: enum gfx9_wave_state
 * @mode: the MODE hardware register (float rounding and denormals)
 * @id: the wave's index in its workgroup
 */
struct gfx9_wave {
	u32 sreg[128];
	u32 *vgpr;
	u64 pc;
	bool scc;
	u8 state;
	u32 mode;
	u32 id;
};

static inline u64 gfx9_exec(const struct gfx9_wave *w)
{
	return w->sreg[GFX9_EXEC_LO] | (u64)w->sreg[GFX9_EXEC_HI] << 32;
}

static inline u64 gfx9_sreg64(const struct gfx9_wave *w, unsigned int r)
{
	return w->sreg[r] | (u64)w->sreg[r + 1] << 32;
}

static inline void gfx9_set_sreg64(struct gfx9_wave *w, unsigned int r,
				   u64 v)
{
	w->sreg[r] = lower_32_bits(v);
	w->sreg[r + 1] = upper_32_bits(v);
}

static inline u32 *gfx9_vreg(const struct gfx9_wave *w, unsigned int r)
{
	return w->vgpr + r * GFX9_LANES;
}

/**
 * struct gfx9_insn - one fetched instruction
 * @dw: its dwords: the encoding (1 or 2) and a trailing literal
 * @size: bytes
 * @op: the opcode, in the format's own numbering (VOP*: the VOP3 one)
 * @lit: the literal constant, if @size includes one
 * @sdst: SOP* with a decoded form (gfx9_sop_fast()): the destination code
 * @ssrc: and its source codes; a code above GFX9_EXEC_HI reads @k
 * @k: the value of each source that is a constant (inline or literal)
 */
struct gfx9_insn {
	u32 dw[3];
	u32 size;
	u32 op;
	u32 lit;
	u8 sdst;
	u8 ssrc[2];
	u64 k[2];
};

/**
 * struct gfx9_vop - a VOP1/VOP2/VOPC/VOP3 instruction, encoding-neutral
 * @src: operand codes (9 bits; 256+ are VGPRs)
 * @vdst: destination VGPR (or SGPR code for VOPC, readlane, readfirstlane)
 * @sdst: VOP3b carry-out / VOPC destination SGPR code (VCC for e32 forms)
 * @abs: VOP3 abs bits (float operands)
 * @neg: VOP3 neg bits (float operands)
 * @clamp: VOP3 clamp
 * @omod: VOP3 output modifier
 * @e64: VOP3 encoding
 * @ext: the operands come through the extension rows (DPP or SDWA)
 * @opsel: VOP3 op_sel: [2:0] read the high half of src0-2, [3] write
 *         the high half of vdst (16-bit operations only)
 * @k: decoded forms (gfx9_vop_fast()): the value of each source that is
 *     a constant (inline or literal)
 */
struct gfx9_vop {
	u32 k[3];
	u16 src[3];
	u16 vdst;
	u16 sdst;
	u8 abs;
	u8 neg;
	u8 clamp;
	u8 omod;
	bool e64;
	bool ext;
	u8 opsel;
};

struct gfx9_disp;

/*
 * An instruction's implementation. The PC already points past the
 * instruction. Returns 0, or -EFAULT with the fault filled, or -ENOEXEC
 * through gfx9_illegal() (the wave traps).
 */
typedef int (*gfx9_exec_fn)(struct gfx9_disp *d, struct gfx9_wave *w,
			    const struct gfx9_insn *in);
typedef int (*gfx9_vop_fn)(struct gfx9_disp *d, struct gfx9_wave *w,
			   const struct gfx9_insn *in,
			   const struct gfx9_vop *v);

struct gfx9_op {
	const char *name;
	gfx9_exec_fn fn;
};

struct gfx9_vop_op {
	const char *name;
	gfx9_vop_fn fn;
	u8 flags;
};

/* gfx9_vop_op.flags */
#define GFX9_VOP_VOP3B		BIT(0)	/* VOP3 form has an SGPR carry-out */
#define GFX9_VOP_FLOAT		BIT(1)	/* abs/neg/clamp/omod apply */
#define GFX9_VOP_SGPR_DST	BIT(2)	/* vdst names an SGPR */
#define GFX9_VOP_CLAMP_INT	BIT(3)	/* integer op whose clamp saturates */
#define GFX9_VOP_OPSEL		BIT(4)	/* 16-bit: VOP3 op_sel applies */

/* How a decoded instruction runs (struct gfx9_decoded.kind). */
enum gfx9_dec_kind {
	GFX9_DEC_OP,	/* @fn with @in: every format with a gfx9_op table */
	GFX9_DEC_VOP,	/* @vfn with @in and @v, checked when decoded */
	GFX9_DEC_DPP,	/* VOP1/VOP2 with a DPP dword: dpp.c each time */
	GFX9_DEC_SDWA,	/* VOP1/VOP2/VOPC with an SDWA dword: sdwa.c */
	GFX9_DEC_VOP3P,	/* vop3p.c each time */
};

/*
 * The decoded-instruction cache of a dispatch: direct-mapped by the
 * instruction's dword address. 1024 entries cover 4 KiB of code without
 * two instructions sharing an entry.
 */
#define GFX9_ICACHE_ENTRIES	1024

/**
 * struct gfx9_decoded - an instruction as the decoder left it
 * @pc: its GPU VA (the cache's key)
 * @gen: the cache generation it was decoded in (gfx9_disp.icache_gen)
 * @in: the fetched words, size, opcode and literal
 * @v: the operands of a VOP instruction, encoding-neutral
 * @kind: enum gfx9_dec_kind
 * @vopc: the DPP or SDWA instruction is a VOPC
 * @fn: the opcode table's implementation (GFX9_DEC_OP)
 * @vfn: the VOP table's implementation (GFX9_DEC_VOP)
 *
 * Everything here follows from the instruction's words and the
 * dispatch's VGPR count alone, so an entry is good for every wave of the
 * dispatch until the code may have changed (decode.c, gfx9_steps()).
 */
struct gfx9_decoded {
	u64 pc;
	u64 gen;
	struct gfx9_insn in;
	struct gfx9_vop v;
	u8 kind;
	bool vopc;
	union {
		gfx9_exec_fn fn;
		gfx9_vop_fn vfn;
	};
};

/**
 * struct gfx9_disp - a dispatch of machine code in progress
 * @vm: the address space (per call of kfdsim_gfx9_run())
 * @fault: filled on a GPU page fault (per call)
 * @q: the queue the dispatch came from (per call)
 * @pkt: the dispatch packet
 * @packet_va: where it is in the ring
 * @desc_va: GPU VA of the kernel descriptor
 * @entry: GPU VA of the first instruction
 * @rsrc1: COMPUTE_PGM_RSRC1
 * @rsrc2: COMPUTE_PGM_RSRC2
 * @props: the descriptor's kernel_code_properties enables
 * @regs: programmed through registers (PM4): no descriptor, the user
 *        SGPRs are @user_data
 * @user_data: COMPUTE_USER_DATA_0..15 of a PM4 dispatch
 * @private_size: private segment bytes per work-item (the packet's,
 *                rounded up to dwords)
 * @scratch_rsrc: the queue's scratch buffer resource (user SGPRs)
 * @scratch_init: the queue's scratch base (flat scratch init user SGPRs)
 * @scratch_wave: bytes of scratch per wave slot (0: none)
 * @lds_size: group segment bytes per workgroup (descriptor + packet)
 * @grid: grid size per dimension
 * @wg: workgroup size per dimension
 * @nwg: workgroups per dimension
 * @wgs: workgroups in the grid
 * @wg_index: the workgroup being run (flattened, x fastest)
 * @wg_started: the waves of @wg_index exist
 * @nvgpr: VGPRs per wave
 * @nwaves: waves of the current workgroup
 * @waves: the current workgroup's waves
 * @vgprs: their VGPRs, @nwaves * @nvgpr * GFX9_LANES
 * @lds: the workgroup's LDS, GFX9_LDS_SIZE bytes
 * @next_wave: round-robin position
 * @va: per-lane addresses of the memory instruction being run
 * @tmp: per-lane values of the memory instruction being run
 * @ext: per-lane source operands of the DPP or SDWA instruction being run
 * @why: the trap's cause, for the log and the error
 * @code: the queue error of the trap (KFDSIM_AQL_ERROR_*)
 * @icache: GFX9_ICACHE_ENTRIES decoded instructions (decode.c)
 * @icache_gen: entries of another generation are empty; a flush (the
 *              code may have changed) moves to the next one
 * @vm_gen: kfdsim_vm_unmap_gen() of @vm when the cache last checked it
 */
struct gfx9_disp {
	struct kfdsim_vm *vm;
	struct kfdsim_fault *fault;
	const struct kfdsim_gfx9_queue *q;
	struct kfdsim_aql_dispatch pkt;
	u64 packet_va;
	u64 desc_va;
	u64 entry;
	u32 rsrc1;
	u32 rsrc2;
	u32 props;
	bool regs;
	u32 user_data[16];
	u32 private_size;
	u32 scratch_rsrc[4];
	u64 scratch_init;
	u32 scratch_wave;
	u32 lds_size;
	u32 grid[3];
	u32 wg[3];
	u32 nwg[3];
	u32 wgs;
	u32 wg_index;
	bool wg_started;
	u32 nvgpr;
	u32 nwaves;
	struct gfx9_wave waves[GFX9_MAX_WAVES];
	u32 *vgprs;
	u8 *lds;
	u32 next_wave;
	u64 va[GFX9_LANES];
	u64 tmp[GFX9_LANES];
	u32 ext[2][GFX9_LANES];
	char why[160];
	u32 code;
	struct gfx9_decoded *icache;
	u64 icache_gen;
	u64 vm_gen;
};

/* kfdsim_gfx9_dispatch is the engine's name for it outside. */
struct kfdsim_gfx9_dispatch {
	struct gfx9_disp d;
};

/* Context save and restore (cwsr.c). */
int gfx9_cwsr_restore(struct gfx9_disp *d, struct kfdsim_cwsr *cwsr);

int gfx9_illegal(struct gfx9_disp *d, const struct gfx9_wave *w,
		 const struct gfx9_insn *in, const char *what);

/* Scalar operands (decode.c). @code is an SSRC/SRC encoding below 256. */
bool gfx9_ssrc_valid(unsigned int code);
u32 gfx9_ssrc32(const struct gfx9_disp *d, const struct gfx9_wave *w,
		const struct gfx9_insn *in, unsigned int code,
		enum gfx9_kind kind);
u64 gfx9_ssrc64(const struct gfx9_disp *d, const struct gfx9_wave *w,
		const struct gfx9_insn *in, unsigned int code,
		enum gfx9_kind kind);
bool gfx9_sconst(const struct gfx9_insn *in, unsigned int code,
		 enum gfx9_kind kind, u64 *k);
bool gfx9_sdst_valid(unsigned int code, bool wide);
void gfx9_sdst32(struct gfx9_wave *w, unsigned int code, u32 v);
void gfx9_sdst64(struct gfx9_wave *w, unsigned int code, u64 v);

/**
 * struct gfx9_src - a vector operand, uniform or per lane
 * @lo: the low (or only) dword per lane, or NULL for a uniform value
 * @hi: the high dword per lane of a 64-bit VGPR operand
 * @k: the uniform value (SGPR, constant or literal)
 */
struct gfx9_src {
	const u32 *lo;
	const u32 *hi;
	u64 k;
};

static inline u32 gfx9_lane32(const struct gfx9_src *s, unsigned int l)
{
	return s->lo ? s->lo[l] : (u32)s->k;
}

static inline u64 gfx9_lane64(const struct gfx9_src *s, unsigned int l)
{
	if (!s->lo)
		return s->k;
	return s->lo[l] | (s->hi ? (u64)s->hi[l] << 32 : 0);
}

/* Fill @s for operand code @code of @kind (32 or 64 bits). */
void gfx9_vsrc(const struct gfx9_disp *d, const struct gfx9_wave *w,
	       const struct gfx9_insn *in, unsigned int code,
	       enum gfx9_kind kind, struct gfx9_src *s);

/* The opcode tables of the formats. */
extern const struct gfx9_op gfx9_sop2_ops[128];
extern const struct gfx9_op gfx9_sopk_ops[32];
extern const struct gfx9_op gfx9_sop1_ops[256];
extern const struct gfx9_op gfx9_sopc_ops[128];
extern const struct gfx9_op gfx9_sopp_ops[128];
extern const struct gfx9_op gfx9_smem_ops[256];
extern const struct gfx9_vop_op gfx9_vop_ops[1024];
/* The 16-bit VOP1/VOP2/VOP3/VOPC operations (vop_f16.c). */
extern const struct gfx9_vop_op gfx9_vop16_ops[1024];
extern const struct gfx9_op gfx9_ds_ops[256];
extern const struct gfx9_op gfx9_flat_ops[128];
extern const struct gfx9_op gfx9_mubuf_ops[128];

/* The table entry of VOP opcode @op (VOP3 numbering). */
static inline const struct gfx9_vop_op *gfx9_vop_op(unsigned int op)
{
	return gfx9_vop_ops[op].fn ? &gfx9_vop_ops[op] : &gfx9_vop16_ops[op];
}

/* Compare and class of floats of any width (vop.c; integers only). */
bool gfx9_fcmp(unsigned int cond, bool lt, bool eq, bool gt);
unsigned int gfx9_fclass(u64 bits, unsigned int mbits, unsigned int ebits);

/* Float VOP operations (vop_fp.c), run between kernel_fpu_begin/end. */
int gfx9_vop_fp(struct gfx9_disp *d, struct gfx9_wave *w,
		const struct gfx9_insn *in, const struct gfx9_vop *v,
		unsigned int op);

/*
 * The forms of the common scalar and integer vector operations that take
 * their operation and operands as decoded once (sop.c, vop.c): the
 * function for the decoded-instruction cache, or NULL (the format's
 * generic function). gfx9_sop_fast() fills @in's sdst, ssrc and k,
 * gfx9_vop_fast() @v's k.
 */
gfx9_exec_fn gfx9_sop_fast(struct gfx9_insn *in);
gfx9_vop_fn gfx9_vop_fast(const struct gfx9_insn *in, struct gfx9_vop *v);

/* Check and run a decoded VOP instruction (decode.c). */
int gfx9_run_vop(struct gfx9_disp *d, struct gfx9_wave *w,
		 struct gfx9_insn *in, struct gfx9_vop *v);

/* VOP1/VOP2/VOPC with a DPP or SDWA dword (dpp.c, sdwa.c). */
int gfx9_vop_dpp(struct gfx9_disp *d, struct gfx9_wave *w,
		 struct gfx9_insn *in, struct gfx9_vop *v, bool vopc);
int gfx9_vop_sdwa(struct gfx9_disp *d, struct gfx9_wave *w,
		  struct gfx9_insn *in, struct gfx9_vop *v, bool vopc);
bool gfx9_vop_ext_ok(unsigned int op);
int gfx9_vop_ext_run(struct gfx9_disp *d, struct gfx9_wave *w,
		     struct gfx9_insn *in, struct gfx9_vop *v, u64 exec);

/* VOP3P: packed 16-bit math and dot products (vop3p.c). */
int gfx9_vop3p(struct gfx9_disp *d, struct gfx9_wave *w,
	       struct gfx9_insn *in);

/* Run up to @max instructions of @w (decode.c). */
int gfx9_steps(struct gfx9_disp *d, struct gfx9_wave *w, unsigned int max,
	       u64 *insns);

/*
 * Forget every decoded instruction of the dispatch (s_icache_inv; the
 * code may have changed).
 */
static inline void gfx9_icache_flush(struct gfx9_disp *d)
{
	d->icache_gen++;
}

/* Atomic operations of FLAT, GLOBAL, MUBUF and DS (flat.c). */
enum {
	GFX9_ATOMIC_SWAP,
	GFX9_ATOMIC_CMPSWAP,
	GFX9_ATOMIC_ADD,
	GFX9_ATOMIC_SUB,
	GFX9_ATOMIC_RSUB,
	GFX9_ATOMIC_SMIN,
	GFX9_ATOMIC_UMIN,
	GFX9_ATOMIC_SMAX,
	GFX9_ATOMIC_UMAX,
	GFX9_ATOMIC_AND,
	GFX9_ATOMIC_OR,
	GFX9_ATOMIC_XOR,
	GFX9_ATOMIC_INC,
	GFX9_ATOMIC_DEC,
};

u64 gfx9_atomic(void *ptr, unsigned int op, bool wide, u64 src, u64 cmp);
int gfx9_mem_atomic(struct gfx9_disp *d, u64 va, unsigned int op, bool wide,
		    u64 src, u64 cmp, u64 *old);
/* GFX9_ATOMIC_* of vector memory atomic opcode & 0xf (FLAT, MUBUF). */
extern const u8 gfx9_vmem_atomic_ops[16];

/* Memory helpers (flat.c). */
int gfx9_mem_read(struct gfx9_disp *d, u64 va, void *buf, size_t len);
int gfx9_mem_write(struct gfx9_disp *d, u64 va, const void *buf,
		   size_t len);

/* A lane's access to its private segment from FLAT_SCRATCH (mubuf.c). */
int gfx9_scratch_xfer(struct gfx9_disp *d, struct gfx9_wave *w,
		      unsigned int lane, u64 off, void *buf, u32 len,
		      bool write);

#endif /* KFDSIM_GFX9_INTERNAL_H */
