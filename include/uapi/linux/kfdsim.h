/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kfdsim: what the simulated GPU executes.
 *
 * The simulated GPU runs packets that user space writes into user-mode
 * queues: 64-byte HSA AQL packets on compute queues, gfx9-encoded SDMA
 * packets on SDMA queues. The layouts below are the ones ROCm user space
 * writes on real hardware. The "kernel object" of a dispatch is GPU
 * machine code (Documentation/gfx9-engine.rst) or a struct
 * kfdsim_kernel_descriptor naming one of the simulator's built-in kernels.
 *
 * All addresses are GPU virtual addresses, translated through the process's
 * GPU page table of the GPU that runs the queue.
 */
#ifndef _UAPI_LINUX_KFDSIM_H
#define _UAPI_LINUX_KFDSIM_H

#include <linux/types.h>

/* ---- AQL packets (HSA) ---- */

/* Packet type, bits 7:0 of the header. */
#define KFDSIM_AQL_TYPE_VENDOR_SPECIFIC	0
#define KFDSIM_AQL_TYPE_INVALID		1
#define KFDSIM_AQL_TYPE_KERNEL_DISPATCH	2
#define KFDSIM_AQL_TYPE_BARRIER_AND	3
#define KFDSIM_AQL_TYPE_AGENT_DISPATCH	4
#define KFDSIM_AQL_TYPE_BARRIER_OR	5

#define KFDSIM_AQL_HEADER_TYPE_MASK	0xffu
/* Wait for every earlier packet of the queue to complete first. */
#define KFDSIM_AQL_HEADER_BARRIER	(1u << 8)
#define KFDSIM_AQL_HEADER_ACQUIRE_SHIFT	9	/* 2-bit fence scope */
#define KFDSIM_AQL_HEADER_RELEASE_SHIFT	11	/* 2-bit fence scope */
#define KFDSIM_AQL_FENCE_SCOPE_NONE	0
#define KFDSIM_AQL_FENCE_SCOPE_AGENT	1
#define KFDSIM_AQL_FENCE_SCOPE_SYSTEM	2

#define KFDSIM_AQL_PACKET_SIZE		64

/**
 * struct kfdsim_aql_dispatch - HSA kernel dispatch packet
 * @header: type KFDSIM_AQL_TYPE_KERNEL_DISPATCH plus barrier/fence bits
 * @setup: number of grid dimensions (1-3) in bits 1:0
 * @workgroup_size_x: work-items per workgroup, x (y and z likewise)
 * @workgroup_size_y: see @workgroup_size_x
 * @workgroup_size_z: see @workgroup_size_x
 * @reserved0: must be zero
 * @grid_size_x: work-items in the grid, x (y and z likewise)
 * @grid_size_y: see @grid_size_x
 * @grid_size_z: see @grid_size_x
 * @private_segment_size: ignored by the simulator
 * @group_segment_size: ignored by the simulator
 * @kernel_object: GPU VA of a struct kfdsim_kernel_descriptor
 * @kernarg_address: GPU VA of the kernel's arguments
 * @reserved2: must be zero
 * @completion_signal: GPU VA of a struct kfdsim_signal, or 0
 */
struct kfdsim_aql_dispatch {
	__u16 header;
	__u16 setup;
	__u16 workgroup_size_x;
	__u16 workgroup_size_y;
	__u16 workgroup_size_z;
	__u16 reserved0;
	__u32 grid_size_x;
	__u32 grid_size_y;
	__u32 grid_size_z;
	__u32 private_segment_size;
	__u32 group_segment_size;
	__u64 kernel_object;
	__u64 kernarg_address;
	__u64 reserved2;
	__u64 completion_signal;
};

/**
 * struct kfdsim_aql_barrier - HSA barrier-AND / barrier-OR packet
 * @header: type KFDSIM_AQL_TYPE_BARRIER_AND or _OR plus barrier/fence bits
 * @reserved0: must be zero
 * @reserved1: must be zero
 * @dep_signal: GPU VAs of up to five signals (0 = unused); the packet
 *              completes when all (AND) or any (OR) of them reach 0
 * @reserved2: must be zero
 * @completion_signal: GPU VA of a struct kfdsim_signal, or 0
 */
struct kfdsim_aql_barrier {
	__u16 header;
	__u16 reserved0;
	__u32 reserved1;
	__u64 dep_signal[5];
	__u64 reserved2;
	__u64 completion_signal;
};

/**
 * struct kfdsim_signal - HSA signal memory (AMD layout of amd_signal_t)
 * @kind: signal kind; the simulator does not interpret it
 * @value: decremented by one when the packet that names it completes
 * @event_mailbox_ptr: if non-zero, GPU VA where @event_id is written on
 *                     completion, after which KFD event @event_id fires
 * @event_id: the KFD event to fire
 * @reserved1: unused
 * @reserved2: pads the signal to 64 bytes
 */
struct kfdsim_signal {
	__s64 kind;
	__s64 value;
	__u64 event_mailbox_ptr;
	__u32 event_id;
	__u32 reserved1;
	__u64 reserved2[4];
};

/* ---- AQL queue errors ---- */

/*
 * A packet the CP cannot run stops its AQL queue; as gfx9 CP firmware does,
 * the CP then reports why through the queue's amd_queue_t, the structure
 * ROCr keeps for each queue (amd_hsa_queue.h): the read pointer a queue is
 * created with is amd_queue_t's read_dispatch_id, followed by a u32 holding
 * the byte offset of read_dispatch_id from the start of amd_queue_t; at
 * KFDSIM_AMD_QUEUE_INACTIVE_SIGNAL from that start lies the GPU VA of the
 * queue's inactive signal (a struct kfdsim_signal). The CP stores one of
 * the codes below into the signal's value, then posts and fires its event;
 * ROCr's queue error handler turns the code into an hsa_status_t.
 *
 * kfdsim reports only to a queue whose layout is exactly ROCr's: the
 * offset is KFDSIM_AMD_QUEUE_READ_DISPATCH_ID, the write pointer is at
 * KFDSIM_AMD_QUEUE_WRITE_DISPATCH_ID and the signal address is not 0.
 */
#define KFDSIM_AMD_QUEUE_WRITE_DISPATCH_ID	56
#define KFDSIM_AMD_QUEUE_READ_DISPATCH_ID	128
#define KFDSIM_AMD_QUEUE_INACTIVE_SIGNAL	192
/*
 * The scratch fields of amd_queue_t the CP reads when a dispatch needs a
 * private segment (Documentation/gfx9-engine.rst, "Scratch"):
 * compute_tmpring_size (WAVES [11:0], WAVESIZE [24:12] in KiB per wave),
 * the scratch buffer resource (4 dwords) and
 * scratch_backing_memory_location (added to the process's
 * SET_SCRATCH_BACKING_VA address: the queue's scratch base).
 */
#define KFDSIM_AMD_QUEUE_TMPRING_SIZE		140
#define KFDSIM_AMD_QUEUE_SCRATCH_RSRC		144
#define KFDSIM_AMD_QUEUE_SCRATCH_LOCATION	160

/*
 * The codes, with the hsa_status_t ROCr 5.2 reports for them:
 * INVALID_DIM: grid or workgroup dimensions invalid (INCOMPATIBLE_ARGUMENTS);
 * INVALID_CODE: the kernel object is 0, a machine-code descriptor the
 * simulator cannot run, or the kernel's arguments are invalid
 * (INVALID_CODE_OBJECT);
 * INVALID_FORMAT: unknown packet type or a reserved field set
 * (INVALID_PACKET_FORMAT); GROUP_TOO_LARGE: more work-items in a workgroup
 * than KFDSIM_MAX_WG_SIZE (INVALID_ARGUMENT); VENDOR_PACKET: a
 * vendor-specific packet (INVALID_PACKET_FORMAT).
 */
/*
 * INSUFFICIENT_SCRATCH: the dispatch needs more scratch per wave, or more
 * waves of scratch, than the queue's compute_tmpring_size gives. On a ROCr
 * queue it is a request, not an error: the queue waits with the packet in
 * place until the runtime has grown the scratch (ROCr's dynamic scratch
 * handler) and stored 0 into the signal, then tries the dispatch again. A
 * queue without ROCr's layout stops.
 */
#define KFDSIM_AQL_ERROR_INSUFFICIENT_SCRATCH	0x1
#define KFDSIM_AQL_ERROR_INVALID_DIM		0x2
#define KFDSIM_AQL_ERROR_INVALID_CODE		0x8
#define KFDSIM_AQL_ERROR_INVALID_FORMAT		0x20
#define KFDSIM_AQL_ERROR_GROUP_TOO_LARGE	0x40
#define KFDSIM_AQL_ERROR_VENDOR_PACKET		0x100
/*
 * Wave exceptions of GPU machine code (Documentation/gfx9-engine.rst):
 * ILLEGAL_INSTRUCTION: an instruction the simulated GPU does not execute
 * (ILLEGAL_INSTRUCTION); EXCEPTION: s_trap (EXCEPTION).
 */
#define KFDSIM_AQL_ERROR_ILLEGAL_INSTRUCTION	0x40000000u
#define KFDSIM_AQL_ERROR_EXCEPTION		0x80000000u

/* ---- built-in kernels ---- */

#define KFDSIM_KERNEL_MAGIC	0x4d49534bu	/* "KSIM" little endian */
#define KFDSIM_KERNEL_VERSION	1
/*
 * Most work-items in one workgroup, as on gfx9 (ROCr reports 1024 as the
 * agent's workgroup max size): a dispatch with a larger one is invalid.
 */
#define KFDSIM_MAX_WG_SIZE	1024

/**
 * enum kfdsim_kernel_op - the built-in kernels
 * @KFDSIM_KERNEL_FILL_U32: dst[i] = value (struct kfdsim_args_fill)
 * @KFDSIM_KERNEL_COPY_U32: dst[i] = src[i] (struct kfdsim_args_copy)
 * @KFDSIM_KERNEL_VADD_U32: c[i] = a[i] + b[i], modulo 2^32
 *                          (struct kfdsim_args_vadd)
 * @KFDSIM_KERNEL_VADD_F32: c[i] = a[i] + b[i], IEEE-754 binary32, round to
 *                          nearest even (struct kfdsim_args_vadd)
 * @KFDSIM_KERNEL_CHECKSUM: *result += sum of src[i] * (2 * i + 1), modulo
 *                          2^64 (struct kfdsim_args_checksum)
 * @KFDSIM_KERNEL_LOOP: @steps times, for every i in order of steps:
 *                      buf[i] = buf[i] * 1664525 + 1013904223 + step,
 *                      modulo 2^32 (struct kfdsim_args_loop)
 * @KFDSIM_KERNEL_CHUNK_SUMS: work-item c reads chunk c of a byte buffer and
 *                            writes its fold64 checksum and the OR of its
 *                            64-bit words, so that user space can tell
 *                            all-zero chunks and checksum the others without
 *                            copying them (struct kfdsim_args_chunk_sums)
 * @KFDSIM_KERNEL_CHUNK_XXH64: the same, with the XXH64 (seed 0) of each chunk
 *                             instead of its fold64: the CRIU plugin's
 *                             chunk checksum of image version 3
 * @KFDSIM_KERNEL_CHUNK_ZERO: the same without checksums: only whether each
 *                            chunk is all zeros, reading a chunk only up
 *                            to its first non-zero word
 *
 * Work-item i of the grid handles element i (for the chunk sums kernel:
 * chunk i); the grid is flattened (x fastest). Workgroups run in order, so
 * a preempted kernel resumes at a workgroup boundary (and, for the loop
 * kernel, at the step it was in; the chunk sums kernel may also stop and
 * resume between two work-items of a workgroup).
 */
enum kfdsim_kernel_op {
	KFDSIM_KERNEL_FILL_U32 = 1,
	KFDSIM_KERNEL_COPY_U32 = 2,
	KFDSIM_KERNEL_VADD_U32 = 3,
	KFDSIM_KERNEL_VADD_F32 = 4,
	KFDSIM_KERNEL_CHECKSUM = 5,
	KFDSIM_KERNEL_LOOP = 6,
	KFDSIM_KERNEL_CHUNK_SUMS = 7,
	KFDSIM_KERNEL_CHUNK_XXH64 = 8,
	KFDSIM_KERNEL_CHUNK_ZERO = 9,
};

/**
 * struct kfdsim_kernel_descriptor - what a dispatch's kernel_object points at
 * @magic: KFDSIM_KERNEL_MAGIC
 *
 * On the render node's compute ring, COMPUTE_PGM_LO/HI name the descriptor
 * instead (address >> 8, so it must be 256-byte aligned); see "PM4 packets
 * of the compute ring" below.
 * @version: KFDSIM_KERNEL_VERSION
 * @opcode: enum kfdsim_kernel_op
 * @pad: must be zero
 */
struct kfdsim_kernel_descriptor {
	__u32 magic;
	__u32 version;
	__u32 opcode;
	__u32 pad;
};

/**
 * struct kfdsim_args_fill - kernarg of KFDSIM_KERNEL_FILL_U32
 * @dst: GPU VA of the u32 array
 * @value: value stored
 * @pad: must be zero
 */
struct kfdsim_args_fill {
	__u64 dst;
	__u32 value;
	__u32 pad;
};

/**
 * struct kfdsim_args_copy - kernarg of KFDSIM_KERNEL_COPY_U32
 * @src: GPU VA of the source u32 array
 * @dst: GPU VA of the destination u32 array
 */
struct kfdsim_args_copy {
	__u64 src;
	__u64 dst;
};

/**
 * struct kfdsim_args_vadd - kernarg of KFDSIM_KERNEL_VADD_U32 and _F32
 * @a: GPU VA of the first input array
 * @b: GPU VA of the second input array
 * @c: GPU VA of the output array
 */
struct kfdsim_args_vadd {
	__u64 a;
	__u64 b;
	__u64 c;
};

/**
 * struct kfdsim_args_checksum - kernarg of KFDSIM_KERNEL_CHECKSUM
 * @src: GPU VA of the u32 array
 * @result: GPU VA of a u64 the checksum is added to (zero it first)
 */
struct kfdsim_args_checksum {
	__u64 src;
	__u64 result;
};

/**
 * struct kfdsim_args_loop - kernarg of KFDSIM_KERNEL_LOOP
 * @buf: GPU VA of the u32 array, updated in place
 * @steps: number of steps of the recurrence
 * @pad: must be zero
 */
struct kfdsim_args_loop {
	__u64 buf;
	__u32 steps;
	__u32 pad;
};

/* The largest chunk of KFDSIM_KERNEL_CHUNK_SUMS, as much as one SDMA copy. */
#define KFDSIM_CHUNK_SUMS_MAX_CHUNK	(1u << 22)

/**
 * struct kfdsim_args_chunk_sums - kernarg of KFDSIM_KERNEL_CHUNK_SUMS
 * @src: GPU VA of the bytes to classify, 8-byte aligned
 * @out: GPU VA of the results, 16 bytes per chunk, 8-byte aligned
 * @size: bytes at @src, a non-zero multiple of 8
 * @chunk: bytes per chunk, a non-zero multiple of 8, at most
 *         KFDSIM_CHUNK_SUMS_MAX_CHUNK
 * @pad: must be zero
 *
 * Chunk c is bytes [c * @chunk, min((c + 1) * @chunk, @size)) of @src, so
 * only the last chunk may be shorter. The grid must have exactly
 * ceil(@size / @chunk) work-items; work-item c handles chunk c and writes
 * two little-endian u64 at @out + 16 * c:
 *
 * [0] the fold64 checksum of the chunk: h = 0x6b66647375636b31; for each
 * little-endian u64 word w of the chunk in order, h = (h ^ w) *
 * 0x9e3779b97f4a7c15 and then h ^= h >> 29; at the end h ^= the chunk's
 * length in bytes, h ^= h >> 31, h *= 0xd6e8feb86659fd93, h ^= h >> 32,
 * h *= 0xd6e8feb86659fd93, h ^= h >> 32 (all modulo 2^64). This is the
 * CRIU plugin's checksum of a buffer whose length is a multiple of 8
 * (userspace-plugin/checksum.c): the device and the plugin agree bit for
 * bit.
 *
 * KFDSIM_KERNEL_CHUNK_XXH64 writes XXH64 with seed 0 of the chunk's bytes
 * there instead (the xxHash project's 64-bit hash); KFDSIM_KERNEL_CHUNK_ZERO
 * writes 0 there, and in [1] 0 for an all-zero chunk, else the first
 * non-zero word it met (the rest of such a chunk is not read).
 *
 * [1] the bitwise OR of the chunk's u64 words, which is 0 exactly when the
 * chunk is all zero bytes.
 *
 * Invalid arguments, or a grid of another size, stop the queue as any bad
 * kernarg does (KFDSIM_AQL_ERROR_INVALID_CODE).
 */
struct kfdsim_args_chunk_sums {
	__u64 src;
	__u64 out;
	__u64 size;
	__u32 chunk;
	__u32 pad;
};

/* ---- SDMA packets (gfx9 encoding) ---- */

/* Header dword: opcode in bits 7:0, sub-opcode in bits 15:8. */
#define KFDSIM_SDMA_OP_NOP		0
#define KFDSIM_SDMA_OP_COPY		1
#define KFDSIM_SDMA_OP_FENCE		5
#define KFDSIM_SDMA_OP_TRAP		6
#define KFDSIM_SDMA_OP_POLL_REGMEM	8
#define KFDSIM_SDMA_OP_ATOMIC		10
#define KFDSIM_SDMA_OP_CONST_FILL	11

#define KFDSIM_SDMA_SUBOP_COPY_LINEAR	0

#define KFDSIM_SDMA_HEADER(op, subop)	((__u32)(op) | ((__u32)(subop) << 8))
/* NOP: bits 29:16 of the header count extra dwords to skip. */
#define KFDSIM_SDMA_NOP_COUNT_SHIFT	16
#define KFDSIM_SDMA_NOP_COUNT_MASK	0x3fffu
/* CONST_FILL: bits 31:30 of the header give the fill size (2 = dword). */
#define KFDSIM_SDMA_FILL_SIZE_SHIFT	30
#define KFDSIM_SDMA_FILL_SIZE_DWORD	2

/*
 * COPY_LINEAR and CONST_FILL: the count dword holds the byte count minus
 * one in its low 22 bits, as on gfx9 (SDMA 4.x), so one packet moves 1 byte
 * to 4 MiB (amdgpu's sdma_v4_0 copy_max_bytes and fill_max_bytes are both
 * 0x400000). The engine decodes only that field: the bits above it are
 * reserved and ignored, as the hardware ignores them.
 */
#define KFDSIM_SDMA_COUNT_MASK		0x003fffffu
#define KFDSIM_SDMA_COPY_MAX_BYTES	(1u << 22)
#define KFDSIM_SDMA_FILL_MAX_BYTES	(1u << 22)

/*
 * POLL_REGMEM: header bit 31 (mem_poll) polls the dword at the packet's
 * address until (value & mask) compares to the reference with the function
 * in bits 30:28; the packet completes then (later packets wait). Without
 * mem_poll it polls a register: only the HDP flush forms exist on the
 * simulated GPU (bit 26 set, or function 0 "always", which ROCr's SDMA
 * blits use) and complete at once, as its memory is always coherent.
 */
#define KFDSIM_SDMA_POLL_MEM		(1u << 31)
#define KFDSIM_SDMA_POLL_HDP_FLUSH	(1u << 26)
#define KFDSIM_SDMA_POLL_FUNC_SHIFT	28
#define KFDSIM_SDMA_POLL_FUNC_MASK	0x7u
/* Functions: 0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 > (7 reserved). */
#define KFDSIM_SDMA_POLL_FUNC_EQUAL	3

/* ATOMIC: bits 31:25 of the header name the operation; only ADD64. */
#define KFDSIM_SDMA_ATOMIC_OP_SHIFT	25
#define KFDSIM_SDMA_ATOMIC_ADD64	47
/* ATOMIC: header bit 16 asks for a compare loop, which ADD64 never needs. */
#define KFDSIM_SDMA_ATOMIC_LOOP		(1u << 16)

/*
 * Packet lengths in dwords:
 *   NOP         1 (+ count)  header
 *   COPY_LINEAR 7            header, bytes - 1, parameters (0),
 *                            src lo, src hi, dst lo, dst hi
 *   FENCE       4            header, addr lo, addr hi, value (u32)
 *   TRAP        2            header, event id (bits 27:0)
 *   CONST_FILL  5            header, dst lo, dst hi, value (u32),
 *                            bytes - 1
 *   POLL_REGMEM 6            header, addr lo, addr hi, reference, mask,
 *                            interval (bits 15:0) and retries (27:16),
 *                            both ignored: the engine polls until it holds
 *   ATOMIC      8            header, addr lo, addr hi (8-byte aligned),
 *                            src lo, src hi (the addend), cmp lo, cmp hi,
 *                            loop interval
 */
#define KFDSIM_SDMA_COPY_DWORDS		7
#define KFDSIM_SDMA_FENCE_DWORDS	4
#define KFDSIM_SDMA_TRAP_DWORDS		2
#define KFDSIM_SDMA_FILL_DWORDS		5
#define KFDSIM_SDMA_POLL_DWORDS		6
#define KFDSIM_SDMA_ATOMIC_DWORDS	8
#define KFDSIM_SDMA_TRAP_EVENT_MASK	0x0fffffffu

/* ---- PM4 packets of the compute ring (gfx9 encoding) ---- */

/**
 * DOC: PM4 packets of the compute ring
 *
 * A kfdsim render node's amdgpu uAPI has one compute ring per GPU
 * (AMDGPU_HW_IP_COMPUTE, instance 0, ring 0). Its indirect buffers hold
 * gfx9 PM4 type-3 packets, and the simulated CP runs this subset of them,
 * with the opcodes, register offsets and field positions of real gfx9:
 *
 *   NOP             any length; count 0x3fff is the one-dword NOP
 *                   (KFDSIM_PM4_NOP_1DW)
 *   SET_SH_REG      register offset - KFDSIM_PM4_SH_REG_BASE, then one
 *                   value per register; only the registers below
 *   DISPATCH_DIRECT dim_x, dim_y, dim_z, dispatch_initiator
 *   ACQUIRE_MEM     6 dwords, a no-op (memory is always coherent)
 *   RELEASE_MEM     7 dwords; writes nothing, 32 or 64 bits of data
 *                   (DATA_SEL 0, 1, 2) to memory (DST_SEL 0 or 1)
 *   WRITE_DATA      control, address lo, address hi, data...; memory
 *                   destinations only (DST_SEL 1, 2 or 5), a 4-byte
 *                   aligned address
 *
 * Anything else (another opcode or packet type, a predicated packet, a
 * register outside the set, a field value the simulator does not know)
 * fails the submission with -EINVAL and a kernel log line naming it, as
 * does a GPU page fault of any packet (or of the IB fetch).
 *
 * Dispatch: COMPUTE_PGM_LO holds bits 39:8 and bits 7:0 of COMPUTE_PGM_HI
 * bits 47:40 of the GPU VA of the first instruction of gfx906 machine code
 * (therefore 256-byte aligned), which the gfx9 engine runs as the hardware
 * would: COMPUTE_PGM_RSRC1/RSRC2 say what a kernel descriptor's fields
 * would (VGPRs, user SGPR count, workgroup ids, work-item ids, LDS size),
 * and COMPUTE_USER_DATA_0.. are loaded into s0... When that address holds
 * a struct kfdsim_kernel_descriptor instead (KFDSIM_KERNEL_MAGIC), it runs
 * that built-in kernel, and COMPUTE_USER_DATA_0 and _1 hold the low and
 * high halves of its argument (kernarg) address. COMPUTE_NUM_THREAD_X/Y/Z (NUM_THREAD_FULL,
 * bits 15:0) give the workgroup size; DISPATCH_DIRECT's dim_x/y/z count
 * workgroups, so the grid is dim * NUM_THREAD per dimension, or dim
 * work-items with KFDSIM_PM4_DISPATCH_USE_THREAD_DIMENSIONS. The
 * dispatch_initiator must set KFDSIM_PM4_DISPATCH_COMPUTE_SHADER_EN; a
 * dispatch with a dimension of 0 runs nothing; COMPUTE_START_X/Y/Z must be
 * 0 unless KFDSIM_PM4_DISPATCH_FORCE_START_AT_000 is set. The kernel runs to
 * completion before the next packet; as on an AQL queue, the grid is
 * flattened (x fastest) and work-item i handles element i.
 *
 * The registers start at 0 for each submission and keep their values from
 * one IB of the submission to the next.
 */

/* Header: type in bits 31:30, dwords after the header - 1 in bits 29:16. */
#define KFDSIM_PM4_TYPE3		3u
#define KFDSIM_PM4_TYPE_SHIFT		30
#define KFDSIM_PM4_COUNT_SHIFT		16
#define KFDSIM_PM4_COUNT_MASK		0x3fffu
#define KFDSIM_PM4_OP_SHIFT		8
#define KFDSIM_PM4_OP_MASK		0xffu
/* Bit 1 marks a compute packet (ignored); bit 0 predicates (refused). */
#define KFDSIM_PM4_SHADER_TYPE_COMPUTE	(1u << 1)
#define KFDSIM_PM4_PREDICATE		(1u << 0)

/* A type-3 header of opcode @op followed by @ndw (1 to 0x4000) dwords. */
#define KFDSIM_PM4_TYPE3_HDR(op, ndw)					\
	((KFDSIM_PM4_TYPE3 << KFDSIM_PM4_TYPE_SHIFT) |			\
	 ((((__u32)(ndw) - 1) & KFDSIM_PM4_COUNT_MASK) <<		\
	  KFDSIM_PM4_COUNT_SHIFT) |					\
	 (((__u32)(op) & KFDSIM_PM4_OP_MASK) << KFDSIM_PM4_OP_SHIFT))

#define KFDSIM_PM4_OP_NOP		0x10
#define KFDSIM_PM4_OP_DISPATCH_DIRECT	0x15
#define KFDSIM_PM4_OP_WRITE_DATA	0x37
#define KFDSIM_PM4_OP_RELEASE_MEM	0x49
#define KFDSIM_PM4_OP_ACQUIRE_MEM	0x58
#define KFDSIM_PM4_OP_SET_SH_REG	0x76

/* A NOP of count 0x3fff is the header alone (what amdgpu pads with). */
#define KFDSIM_PM4_NOP_1DW	KFDSIM_PM4_TYPE3_HDR(KFDSIM_PM4_OP_NOP, 0x4000)

/* Dwords after the header of the fixed-length packets. */
#define KFDSIM_PM4_DISPATCH_DIRECT_NDW	4
#define KFDSIM_PM4_ACQUIRE_MEM_NDW	6
#define KFDSIM_PM4_RELEASE_MEM_NDW	7
/* WRITE_DATA: control, address lo, address hi, then 1 or more dwords. */
#define KFDSIM_PM4_WRITE_DATA_HDR_NDW	3

/* SET_SH_REG: the first dword is the register's offset from this base. */
#define KFDSIM_PM4_SH_REG_BASE		0x2c00
#define KFDSIM_PM4_SH_REG_OFFSET_MASK	0xffffu

/* The compute registers SET_SH_REG accepts (dword register offsets). */
#define KFDSIM_PM4_REG_COMPUTE_START_X		0x2e04
#define KFDSIM_PM4_REG_COMPUTE_START_Y		0x2e05
#define KFDSIM_PM4_REG_COMPUTE_START_Z		0x2e06
#define KFDSIM_PM4_REG_COMPUTE_NUM_THREAD_X	0x2e07
#define KFDSIM_PM4_REG_COMPUTE_NUM_THREAD_Y	0x2e08
#define KFDSIM_PM4_REG_COMPUTE_NUM_THREAD_Z	0x2e09
#define KFDSIM_PM4_REG_COMPUTE_PGM_LO		0x2e0c
#define KFDSIM_PM4_REG_COMPUTE_PGM_HI		0x2e0d
/* Machine code only (built-in kernels ignore them): */
#define KFDSIM_PM4_REG_COMPUTE_PGM_RSRC1	0x2e12
#define KFDSIM_PM4_REG_COMPUTE_PGM_RSRC2	0x2e13
/* Accepted and ignored: */
#define KFDSIM_PM4_REG_COMPUTE_RESOURCE_LIMITS	0x2e15
#define KFDSIM_PM4_REG_COMPUTE_TMPRING_SIZE	0x2e18
/* COMPUTE_USER_DATA_0 to _15 */
#define KFDSIM_PM4_REG_COMPUTE_USER_DATA_0	0x2e40
#define KFDSIM_PM4_COMPUTE_USER_DATA_COUNT	16

#define KFDSIM_PM4_NUM_THREAD_FULL_MASK		0xffffu
#define KFDSIM_PM4_PGM_HI_MASK			0xffu
#define KFDSIM_PM4_PGM_SHIFT			8

/* DISPATCH_DIRECT's dispatch_initiator (COMPUTE_DISPATCH_INITIATOR). */
#define KFDSIM_PM4_DISPATCH_COMPUTE_SHADER_EN		(1u << 0)
#define KFDSIM_PM4_DISPATCH_FORCE_START_AT_000		(1u << 2)
#define KFDSIM_PM4_DISPATCH_USE_THREAD_DIMENSIONS	(1u << 5)

/* WRITE_DATA control: destination in bits 11:8, one address in bit 16. */
#define KFDSIM_PM4_WRITE_DATA_DST_SEL_SHIFT	8
#define KFDSIM_PM4_WRITE_DATA_DST_SEL_MASK	0xfu
#define KFDSIM_PM4_WRITE_DATA_DST_MEM_GRBM	1
#define KFDSIM_PM4_WRITE_DATA_DST_TC_L2		2
#define KFDSIM_PM4_WRITE_DATA_DST_MEM		5
#define KFDSIM_PM4_WRITE_DATA_ONE_ADDR		(1u << 16)
#define KFDSIM_PM4_WRITE_DATA_WR_CONFIRM	(1u << 20)

/*
 * RELEASE_MEM: dword 1 is the event (ignored), dword 2 selects the data
 * (bits 31:29), the interrupt (bits 26:24, ignored: nothing waits) and the
 * destination (bits 17:16); then address lo, address hi, data lo, data hi
 * and an interrupt context id (ignored). 32-bit data needs a 4-byte, 64-bit
 * data an 8-byte aligned address.
 */
#define KFDSIM_PM4_RELEASE_DATA_SEL_SHIFT	29
#define KFDSIM_PM4_RELEASE_DATA_SEL_MASK	0x7u
#define KFDSIM_PM4_RELEASE_DATA_NONE		0
#define KFDSIM_PM4_RELEASE_DATA_32		1
#define KFDSIM_PM4_RELEASE_DATA_64		2
#define KFDSIM_PM4_RELEASE_INT_SEL_SHIFT	24
#define KFDSIM_PM4_RELEASE_DST_SEL_SHIFT	16
#define KFDSIM_PM4_RELEASE_DST_SEL_MASK		0x3u
#define KFDSIM_PM4_RELEASE_DST_MEM		0
#define KFDSIM_PM4_RELEASE_DST_TC_L2		1

#endif /* _UAPI_LINUX_KFDSIM_H */
