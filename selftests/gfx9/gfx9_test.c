// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsim selftests: the gfx9 machine-code engine.
 *
 * Known-answer kernels written in gfx906 assembly (gfx9/kernels/, one .s file each),
 * assembled at build time by Debian's LLVM 15 (llvm-mc) into raw code
 * (build/selftests/gfx9/<name>.bin, next to this binary), placed behind a
 * kernel descriptor built here as AMDGPUUsage lays it out, and dispatched
 * through a KFD AQL queue. Every expected value is computed here on the
 * CPU from the ISA's stated semantics, never by the engine under test.
 *
 * Also GET_TILE_CONFIG, which ROCr's image support reads at start-up.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include "kt_harness.h"
#include "kfdsim_gpu.h"

/* The kernel descriptor: struct kg_kd (kfdsim_gpu.h). */
#define g9_kd kg_kd

/* kernel_code_properties */
#define G9_KCP_DISPATCH_PTR	(1u << 1)
#define G9_KCP_KERNARG_PTR	(1u << 3)
/* RSRC1: 64 VGPRs (granule 15), f32 and f64 denormals kept (mode 3). */
#define G9_RSRC1		(15u | 3u << 16 | 3u << 18)
/* RSRC2 */
#define G9_RSRC2_USER_SGPRS(n)	((uint32_t)(n) << 1)
#define G9_RSRC2_WGID_X		(1u << 7)
#define G9_RSRC2_WGID_Y		(1u << 8)
#define G9_RSRC2_WGID_Z		(1u << 9)
#define G9_RSRC2_VGPR_IDS(n)	((uint32_t)(n) << 11)

/* Layout of a kernel's BO: descriptor, code, kernarg. */
#define G9_CODE_OFF		256
#define G9_KERNARG_OFF		(16 * 1024)
#define G9_BO_SIZE		(32 * 1024)

struct g9_kernel {
	struct kg_bo bo;
	void *kernarg;
};

/* @name in ./gfx9/ next to this binary, where make selftests puts it. */
static int g9_path(const char *name, char *path, size_t len)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "gfx9/%s", name);
	return kt_exe_sibling(rel, path, len);
}

static int g9_read_file(const char *name, void *buf, size_t max)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	n = g9_path(name, path, sizeof(path));
	if (n)
		return n;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, max);
	close(fd);
	return n < 0 ? -errno : (int)n;
}

static int g9_load(struct kg_rt *rt, const char *name, uint32_t rsrc2,
		   uint16_t props, uint32_t lds, struct g9_kernel *k)
{
	struct g9_kd kd = {
		.group_segment_fixed_size = lds,
		.kernel_code_entry_byte_offset = G9_CODE_OFF,
		.compute_pgm_rsrc1 = G9_RSRC1,
		.compute_pgm_rsrc2 = rsrc2,
		.kernel_code_properties = props,
	};
	char file[64];
	int ret, n;

	ret = kg_bo_new(rt, 0, G9_BO_SIZE, KT_GTT | KT_WRITABLE, 0, &k->bo);
	if (ret)
		return ret;
	memcpy(k->bo.cpu, &kd, sizeof(kd));
	snprintf(file, sizeof(file), "%s.bin", name);
	n = g9_read_file(file, (char *)k->bo.cpu + G9_CODE_OFF,
			 G9_KERNARG_OFF - G9_CODE_OFF);
	if (n <= 0)
		return n ? n : -ENOEXEC;
	k->kernarg = (char *)k->bo.cpu + G9_KERNARG_OFF;
	return 0;
}

/* A dispatch packet of @k over a grid, completing @sig (or none). */
static void g9_packet(const struct g9_kernel *k, uint64_t kd_va,
		      uint64_t kernarg_va, unsigned int dims,
		      const uint32_t *grid, const uint16_t *wg,
		      const struct kg_signal *sig,
		      struct kfdsim_aql_dispatch *pkt)
{
	*pkt = (struct kfdsim_aql_dispatch){
		.header = KG_AQL_HDR(KFDSIM_AQL_TYPE_KERNEL_DISPATCH),
		.setup = dims,
		.workgroup_size_x = wg[0],
		.workgroup_size_y = dims > 1 ? wg[1] : 1,
		.workgroup_size_z = dims > 2 ? wg[2] : 1,
		.grid_size_x = grid[0],
		.grid_size_y = dims > 1 ? grid[1] : 1,
		.grid_size_z = dims > 2 ? grid[2] : 1,
		.kernel_object = kd_va ? kd_va : k->bo.va,
		.kernarg_address = kernarg_va,
		.completion_signal = sig ? sig->va : 0,
	};
}

/* Dispatch @k (descriptor and kernarg in its BO) over a grid. */
static int g9_dispatch(struct kg_queue *q, const struct g9_kernel *k,
		       unsigned int dims, const uint32_t *grid,
		       const uint16_t *wg, struct kg_signal *sig)
{
	struct kfdsim_aql_dispatch pkt;

	g9_packet(k, 0, k->bo.va + G9_KERNARG_OFF, dims, grid, wg, sig, &pkt);
	return kg_aql_submit(q, &pkt);
}

/* Submit @pkt on a new queue and wait for it; its signal is set here. */
static int g9_submit_wait(struct kg_rt *rt, struct kfdsim_aql_dispatch *pkt)
{
	struct kg_signal sig;
	struct kg_queue q;
	int ret;

	ret = kg_queue_new(rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 4096, &q);
	if (ret)
		return ret;
	ret = kg_signal_new(rt, 1, &sig);
	pkt->completion_signal = sig.va;
	if (!ret)
		ret = kg_aql_submit(&q, pkt);
	if (!ret)
		ret = kg_signal_wait(&sig, 0, KG_TIMEOUT_MS);
	kg_queue_free(&q);
	return ret;
}

static int g9_run1(struct kg_rt *rt, const struct g9_kernel *k,
		   uint32_t n, uint16_t wg)
{
	struct kfdsim_aql_dispatch pkt;

	g9_packet(k, 0, k->bo.va + G9_KERNARG_OFF, 1, &n, &wg, NULL, &pkt);
	return g9_submit_wait(rt, &pkt);
}

static void g9_fill(uint32_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		p[i] = seed ^ (seed >> 15);
	}
}

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

KG_FIXTURE(gfx9)

/* GET_TILE_CONFIG as amdkfd answers for a gfx9 GPU. */
TEST_F(gfx9, tile_config)
{
	uint32_t tile[40], macro[20];
	struct kfd_ioctl_get_tile_config_args t = {
		.tile_config_ptr = (uintptr_t)tile,
		.macro_tile_config_ptr = (uintptr_t)macro,
		.num_tile_configs = 40,
		.num_macro_tile_configs = 20,
		.gpu_id = self->rt.ids[0],
	};
	unsigned int i;

	memset(tile, 0xa5, sizeof(tile));
	memset(macro, 0xa5, sizeof(macro));
	ASSERT_EQ(0, kt_ioctl(self->rt.e.kfd, AMDKFD_IOC_GET_TILE_CONFIG, &t));
	EXPECT_EQ(0x22014042u, t.gb_addr_config);
	EXPECT_EQ(0u, t.num_banks);
	EXPECT_EQ(0u, t.num_ranks);
	EXPECT_EQ(32u, t.num_tile_configs);
	EXPECT_EQ(16u, t.num_macro_tile_configs);
	for (i = 0; i < 40; i++)
		EXPECT_EQ(i < 32 ? 0u : 0xa5a5a5a5u, tile[i]);
	for (i = 0; i < 20; i++)
		EXPECT_EQ(i < 16 ? 0u : 0xa5a5a5a5u, macro[i]);

	/* Fewer slots than entries: that many are written. */
	t.num_tile_configs = 3;
	t.num_macro_tile_configs = 0;
	t.macro_tile_config_ptr = 0;
	ASSERT_EQ(0, kt_ioctl(self->rt.e.kfd, AMDKFD_IOC_GET_TILE_CONFIG, &t));
	EXPECT_EQ(3u, t.num_tile_configs);
	EXPECT_EQ(0u, t.num_macro_tile_configs);

	/* A bad buffer: -EFAULT and a count of 0. */
	t.num_tile_configs = 4;
	t.tile_config_ptr = 8;
	EXPECT_EQ(-EFAULT, kt_ioctl(self->rt.e.kfd, AMDKFD_IOC_GET_TILE_CONFIG,
				    &t));
	t.gpu_id = kt_unused_gpu_id(&self->rt.e);
	t.tile_config_ptr = (uintptr_t)tile;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->rt.e.kfd, AMDKFD_IOC_GET_TILE_CONFIG,
				    &t));
}

/* c = a + b over 1000 elements: a partial last workgroup of 256. */
TEST_F(gfx9, vadd)
{
	const uint32_t n = 1000;
	struct kg_bo a, b, c;
	struct g9_kernel k;
	uint64_t *ka;
	uint32_t i;

	ASSERT_EQ(0, g9_load(&self->rt, "vadd", G9_RSRC2_USER_SGPRS(2) |
			     G9_RSRC2_WGID_X, G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * n, KT_GTT | KT_WRITABLE, 0,
			       &a));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * n, KT_GTT | KT_WRITABLE, 0,
			       &b));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * n + 64, KT_GTT | KT_WRITABLE,
			       0, &c));
	g9_fill(a.cpu, n, 1);
	g9_fill(b.cpu, n, 2);
	memset(c.cpu, 0xee, 4 * n + 64);
	ka = k.kernarg;
	ka[0] = a.va;
	ka[1] = b.va;
	ka[2] = c.va;
	ka[3] = n;
	ASSERT_EQ(0, g9_run1(&self->rt, &k, n, 256));
	for (i = 0; i < n; i++)
		ASSERT_EQ(((uint32_t *)a.cpu)[i] + ((uint32_t *)b.cpu)[i],
			  ((uint32_t *)c.cpu)[i]) TH_LOG("element %u", i);
	/* Nothing past the grid. */
	EXPECT_EQ(0xeeeeeeeeu, ((uint32_t *)c.cpu)[n]);
}

/* Vector ALU ops against the ISA's definitions, computed here. */
TEST_F(gfx9, valu_known_answers)
{
	const uint32_t n = 192;		/* three waves, one per workgroup */
	struct kg_bo in, out;
	struct g9_kernel k;
	uint32_t i, *x, *o, e[16];
	uint64_t *ka;

	ASSERT_EQ(0, g9_load(&self->rt, "valu", G9_RSRC2_USER_SGPRS(2) |
			     G9_RSRC2_WGID_X, G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 8 * n, KT_GTT | KT_WRITABLE, 0,
			       &in));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 64 * n, KT_GTT | KT_WRITABLE, 0,
			       &out));
	x = in.cpu;
	g9_fill(x, 2 * n, 7);
	/* Some special inputs. */
	x[0] = 0;
	x[1] = 0;
	x[2] = 0xffffffffu;
	x[3] = 1;
	x[4] = 0x80000000u;
	x[5] = 0x7fffffffu;
	x[6] = 12345;
	x[7] = 12345;
	ka = k.kernarg;
	ka[0] = in.va;
	ka[1] = out.va;
	ASSERT_EQ(0, g9_run1(&self->rt, &k, n, 64));
	o = out.cpu;
	for (i = 0; i < n; i++) {
		uint32_t a = x[2 * i], b = x[2 * i + 1];
		uint64_t s = (uint64_t)a + b, m;
		float fa = (float)a, fb = (float)b;
		uint8_t bytes[8];
		unsigned int j;

		e[0] = a * b;
		e[1] = ((uint64_t)a * b) >> 32;
		e[2] = (a >> 5) & 0x7ff;
		e[3] = (uint32_t)((int32_t)a >> (b & 31));
		e[4] = (uint32_t)((((uint64_t)a << 32) | b) >> 7);
		/* {a, b} + {b, a}: low word, then high word with carry */
		e[5] = (uint32_t)s;
		e[6] = b + a + (uint32_t)(s >> 32);
		e[7] = a < b ? b : a;
		e[8] = a ? (uint32_t)__builtin_clz(a) : 0xffffffffu;
		e[9] = (uint32_t)__builtin_popcount(a) + b;
		e[10] = (int32_t)a < (int32_t)b ? a : b;
		/* v_perm_b32 a, b, 0x0c050a01: bytes of {a:b}, b low */
		m = ((uint64_t)a << 32) | b;
		for (j = 0; j < 8; j++)
			bytes[j] = m >> (8 * j);
		/* selector 0x0a: byte 5's sign; 0x0c: the constant 0 */
		e[11] = bytes[1] | ((m >> 47) & 1 ? 0xffu : 0) << 8 |
			(uint32_t)bytes[5] << 16;
		e[12] = f2u(fa + fb);
		e[13] = f2u(fmaf(fa, fb, 0.5f));
		e[14] = f2u(fa * fb);
		e[15] = (uint32_t)(((uint64_t)a * b +
				    (((uint64_t)a << 32) | b)) >> 32);
		for (j = 0; j < 16; j++)
			EXPECT_EQ(e[j], o[16 * i + j])
				TH_LOG("lane %u result %u: x 0x%x y 0x%x", i,
				       j, a, b);
		if (_metadata->passed == 0)
			break;
	}
}

/* Run kernel @name over one wave: @nin dwords in, @nout dwords out. */
static int g9_run_wave(struct kg_rt *rt, const char *name, uint32_t *in,
		       size_t nin, struct kg_bo *out, size_t nout)
{
	struct g9_kernel k;
	struct kg_bo ib;
	uint64_t *ka;
	int ret;

	ret = g9_load(rt, name, G9_RSRC2_USER_SGPRS(2) | G9_RSRC2_WGID_X,
		      G9_KCP_KERNARG_PTR, 0, &k);
	if (!ret)
		ret = kg_bo_new(rt, 0, 4 * nin, KT_GTT | KT_WRITABLE, 0, &ib);
	if (!ret)
		ret = kg_bo_new(rt, 0, 4 * nout, KT_GTT | KT_WRITABLE, 0, out);
	if (ret)
		return ret;
	memcpy(ib.cpu, in, 4 * nin);
	memset(out->cpu, 0xcc, 4 * nout);
	ka = k.kernarg;
	ka[0] = ib.va;
	ka[1] = out->va;
	return g9_run1(rt, &k, 64, 64);
}

/*
 * DPP: lane l of the destination reads src0 from the lane dpp_ctrl names
 * (gfx9 ISA, "DPP"); rows are 16 lanes, banks 4. A lane whose source is
 * out of range or disabled writes 0 with bound_ctrl, else nothing (-1
 * stays); row_mask/bank_mask keep lanes from writing.
 */
TEST_F(gfx9, dpp_known_answers)
{
	uint32_t x[64], *o, e[16];
	unsigned int l, j, row, q;
	struct kg_bo out;

	g9_fill(x, 64, 11);
	ASSERT_EQ(0, g9_run_wave(&self->rt, "dpp", x, 64, &out, 64 * 16));
	o = out.cpu;
	for (l = 0; l < 64; l++) {
		row = l & ~15u;
		e[0] = x[l ^ 1];
		e[1] = (l & 15) < 15 ? x[l + 1] : ~0u;
		e[2] = (l & 15) >= 3 ? x[l - 3] : 0;
		e[3] = x[row | ((l - 5) & 15)];
		e[4] = l < 63 ? x[l + 1] : ~0u;
		e[5] = x[(l + 1) & 63];
		e[6] = l ? x[l - 1] : 0;
		e[7] = x[(l + 63) & 63];
		e[8] = x[row + 15 - (l & 15)];
		e[9] = x[(l & ~7u) + 7 - (l & 7)];
		e[10] = (l / 16 == 1 || l / 16 == 3) ? x[row - 1] : ~0u;
		e[11] = l >= 32 ? x[31] : ~0u;
		/* bank_mask 0x5: banks 0 and 2 of each row */
		e[12] = ((l / 4) & 1) == 0 && (l & 15) ? x[l - 1] + x[l] : ~0u;
		q = (l & ~3u) + 3 - (l & 3);
		/* src0 from lane q, src1 the lane's own */
		e[13] = l < 48 ? f2u(-(float)(x[q] & 0xffff) +
				     fabsf(-(float)(x[l] >> 16))) : ~0u;
		/* EXEC has the even lanes only */
		e[14] = ~0u;
		if ((l & 3) == 0)
			e[14] = x[l + 2];
		e[15] = l & 1 ? ~0u : 0;
		for (j = 0; j < 16; j++)
			EXPECT_EQ(e[j], o[16 * l + j])
				TH_LOG("lane %u result %u", l, j);
		if (_metadata->passed == 0)
			break;
	}
}

/*
 * SDWA: sources are a byte or word of the register, zero- or
 * sign-extended; the result goes to a byte or word of vdst, the rest
 * zero, sign or kept (gfx9 ISA, "SDWA"); VOPC writes an SGPR pair.
 */
TEST_F(gfx9, sdwa_known_answers)
{
	uint32_t in[128], *o, e[12], x, y, r, a, b;
	struct kg_bo out;
	unsigned int l, j;
	float fa, fb, f;

	g9_fill(in, 128, 12);
	in[0] = 0x80ff7f01u;
	in[1] = 0xffff8080u;
	ASSERT_EQ(0, g9_run_wave(&self->rt, "sdwa", in, 128, &out, 64 * 12));
	o = out.cpu;
	for (l = 0; l < 64; l++) {
		x = in[2 * l];
		y = in[2 * l + 1];
		e[0] = ((x >> 8) & 0xff) + (y >> 16);
		r = (uint32_t)(int8_t)(x & 0xff) + (y & 0xffff);
		e[1] = (r & 0xff) << 8 | (r & 0x80 ? 0xffff0000u : 0);
		r = (x >> 24) - (y & 0xff);
		e[2] = (y & ~0xff0000u) | (r & 0xff) << 16;
		e[3] = x >> 16;
		e[4] = (0x34u | ((y >> 8) & 0xff)) << 24;
		a = (uint32_t)(int16_t)(x & 0xffff) & 0xffffff;
		b = (uint32_t)(int16_t)(y >> 16) & 0xffffff;
		e[5] = a * b;
		e[6] = (int8_t)(x & 0xff) < (int32_t)((y >> 8) & 0xff);
		e[7] = (x >> 16) > (y >> 16);
		fa = (float)(x >> 8);
		fb = -(float)(y >> 8);
		e[8] = f2u(-fa + fabsf(fb));
		f = fa * fb;
		e[9] = f2u(f * 2.0f);
		f = fa + fb;
		e[10] = f2u(f < 0.0f ? 0.0f : f > 1.0f ? 1.0f : f);
		e[11] = f2u((float)((x >> 16) & 0xff));
		for (j = 0; j < 12; j++)
			EXPECT_EQ(e[j], o[12 * l + j])
				TH_LOG("lane %u result %u: x 0x%x y 0x%x", l, j,
				       x, y);
		if (_metadata->passed == 0)
			break;
	}
}

/*
 * binary16 on the host: the exact result in binary128 (113 bits hold any
 * sum, product or a * b + c of binary16 values exactly), rounded once to
 * binary16 by the compiler's conversion (nearest even, subnormals kept).
 */
typedef __float128 g9_q;

static uint16_t g9_h(_Float16 f)
{
	uint16_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static g9_q g9_hq(uint16_t u)
{
	_Float16 f;

	memcpy(&f, &u, sizeof(f));
	return (g9_q)f;
}

static uint16_t g9_qh(g9_q q)
{
	return g9_h((_Float16)q);
}

static int g9_hnan(uint16_t u)
{
	return (u & 0x7fff) > 0x7c00;
}

/* IEEE-mode max/min: a NaN operand gives the other; -0 below +0. */
static uint16_t g9_hminmax(uint16_t a, uint16_t b, int max)
{
	g9_q x = g9_hq(a), y = g9_hq(b);

	if (g9_hnan(a))
		return g9_hnan(b) ? a | 0x200 : b;
	if (g9_hnan(b))
		return a;
	if (x == y)
		return ((a & 0x8000) != 0) == !!max ? b : a;
	return (x < y) != !!max ? a : b;
}

static uint16_t g9_hclamp(uint16_t a)
{
	g9_q x = g9_hq(a);

	if (g9_hnan(a) || x < 0)
		return 0;
	return x > 1 ? 0x3c00 : a;
}

/* Equal, or both NaN in the halves that are f16 (@mask bit per half). */
static int g9_heq(uint32_t e, uint32_t o, unsigned int fmask)
{
	unsigned int h;

	for (h = 0; h < 2; h++) {
		uint16_t a = e >> (16 * h), b = o >> (16 * h);

		if (a != b && !((fmask & (1u << h)) && g9_hnan(a) &&
				g9_hnan(b)))
			return 0;
	}
	return 1;
}

static int32_t g9_sat32(int64_t v)
{
	return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
}

/*
 * f16 arithmetic (VOP2/VOP3, op_sel, neg/abs, mad unfused and fma fused,
 * conversions, compare, SDWA), the packed VOP3P operations with op_sel,
 * op_sel_hi, neg_lo/neg_hi and clamp, and the integer dot products,
 * against the exact host computation above.
 */
TEST_F(gfx9, f16_packed_known_answers)
{
	uint32_t in[3 * 64], *o, e[24], x, y, z, r;
	unsigned int l, j, i, fm[24];
	uint16_t xl, xh, yl, yh, zl, zh;
	struct kg_bo out;
	int64_t acc;
	float fz;

	g9_fill(in, 3 * 64, 13);
	for (l = 0; l < 64; l++) {
		/* Most lanes: f16 halves of moderate size; every 4th: any bits. */
		if (l % 4) {
			for (j = 0; j < 3; j++)
				in[3 * l + j] = (in[3 * l + j] & 0x83ff83ffu) |
						(0x3000u + (in[3 * l + j] >> 5 & 0x1c00u)) * 0x10001u;
		}
		/* z as an f32 from 2^-26 to 2^20: f16 subnormals to overflow */
		if (l % 2)
			in[3 * l + 2] = (in[3 * l + 2] & 0x807fffffu) |
					(101u + in[3 * l + 2] % 47u) << 23;
	}
	/* Inf - Inf, 0 * Inf, signed zeros, a NaN, subnormals */
	in[0] = 0x7c00fc00u;
	in[1] = 0x7c000000u;
	in[3] = 0x80008000u;
	in[4] = 0x80000000u;
	in[6] = 0x7e010001u;
	in[7] = 0x03ff8001u;
	ASSERT_EQ(0, g9_run_wave(&self->rt, "f16", in, 3 * 64, &out, 64 * 24));
	o = out.cpu;
	for (l = 0; l < 64; l++) {
		x = in[3 * l];
		y = in[3 * l + 1];
		z = in[3 * l + 2];
		xl = x, xh = x >> 16, yl = y, yh = y >> 16, zl = z, zh = z >> 16;
		memset(fm, 0, sizeof(fm));
		e[0] = g9_qh(g9_hq(xl) + g9_hq(yl));
		e[1] = g9_qh(g9_hq(xl) * g9_hq(yl));
		e[2] = g9_qh(g9_hq(xh) * g9_hq(yl) + g9_hq(zh));
		e[3] = g9_qh(g9_hq(xl) * g9_hq(yl) + g9_hq(zl));
		e[4] = g9_qh(g9_hq(g9_qh(-g9_hq(xl) * g9_hq(yl & 0x7fff))) +
			     g9_hq(zl));
		e[5] = g9_hminmax(xl, yl, 1) |
		       (uint32_t)(uint16_t)((uint32_t)xl * yh + zl) << 16;
		memcpy(&fz, &z, sizeof(fz));
		e[6] = g9_h((_Float16)fz);
		e[7] = f2u((float)g9_hq(xl));
		e[8] = g9_qh(g9_hq(xl) + g9_hq(yl)) |
		       (uint32_t)g9_qh(g9_hq(xh) + g9_hq(yh)) << 16;
		e[9] = g9_qh(g9_hq(xh) * g9_hq(yl)) |
		       (uint32_t)g9_qh(g9_hq(xl) * g9_hq(yh)) << 16;
		e[10] = g9_qh(-g9_hq(xl) * g9_hq(yl) + g9_hq(zl)) |
			(uint32_t)g9_qh(g9_hq(xh) * g9_hq(yh) - g9_hq(zh)) << 16;
		e[11] = g9_hminmax(xl, yl, 1) |
			(uint32_t)g9_hminmax(xh, yh, 1) << 16;
		e[12] = g9_hclamp(g9_qh(g9_hq(xl) + g9_hq(yl))) |
			(uint32_t)g9_hclamp(g9_qh(g9_hq(xh) + g9_hq(yh))) << 16;
		e[13] = (uint16_t)(xl + yl) | (uint32_t)(uint16_t)(xh + yh) << 16;
		e[14] = (uint16_t)((int16_t)xl * (int16_t)yl + zl) |
			(uint32_t)(uint16_t)((int16_t)xh * (int16_t)yh + zh)
				<< 16;
		r = 0;
		for (i = 0; i < 2; i++) {
			int32_t d = (int16_t)(i ? xh : xl) - (int16_t)(i ? yh : yl);

			d = d > 32767 ? 32767 : d < -32768 ? -32768 : d;
			r |= (uint32_t)(uint16_t)d << (16 * i);
		}
		e[15] = r;
		e[16] = (uint32_t)((int64_t)(int16_t)xl * (int16_t)yl +
				   (int64_t)(int16_t)xh * (int16_t)yh +
				   (int32_t)z);
		r = z;
		for (i = 0; i < 4; i++)
			r += (x >> (8 * i) & 0xff) * (y >> (8 * i) & 0xff);
		e[17] = r;
		acc = (int32_t)z;
		for (i = 0; i < 8; i++) {
			int a = (int)(x >> (4 * i) & 15), b = (int)(y >> (4 * i) & 15);

			acc += (int64_t)(a >= 8 ? a - 16 : a) * (b >= 8 ? b - 16 : b);
		}
		e[18] = (uint32_t)g9_sat32(acc);
		e[19] = g9_hq(xl) < g9_hq(yl);
		e[20] = (uint16_t)((uint32_t)xl * yl);
		e[21] = (x & 0xffff) |
			(uint32_t)g9_qh(g9_hq(xh) + g9_hq(yl)) << 16;
		e[22] = (uint16_t)(yl >> (xl & 15)) |
			(uint32_t)(uint16_t)(yh >> (xh & 15)) << 16;
		e[23] = (z & 0xffff0000u) |
			g9_qh(g9_hq(g9_qh(g9_hq(xl) * g9_hq(yl))) + g9_hq(zl));
		/* the halves that are f16 results, where any NaN is right */
		for (j = 0; j <= 12; j++)
			fm[j] = j == 5 ? 1 : j >= 8 ? 3 : j == 7 ? 0 : 1;
		fm[21] = 2;
		fm[23] = 1;
		for (j = 0; j < 24; j++) {
			if (j == 7 && (o[24 * l + j] & 0x7fffffffu) > 0x7f800000u &&
			    g9_hnan(xl))
				continue;	/* a NaN converted: any NaN */
			EXPECT_TRUE(g9_heq(e[j], o[24 * l + j], fm[j]))
				TH_LOG("lane %u result %u: x 0x%08x y 0x%08x z 0x%08x: expected 0x%08x got 0x%08x",
				       l, j, x, y, z, e[j], o[24 * l + j]);
		}
		if (_metadata->passed == 0)
			break;
	}
}

/* Scalar ALU ops and a counted loop, against the ISA's definitions. */
TEST_F(gfx9, salu_known_answers)
{
	static const uint32_t pairs[][2] = {
		{ 0x12345678, 0x9abcdef0 }, { 0xffffffff, 1 },
		{ 0x80000000, 0x7fffffff }, { 0, 0 }, { 5, 0xfffffffb },
	};
	struct g9_kernel k;
	struct kg_bo out;
	uint32_t e[16], *o;
	unsigned int p, j;

	ASSERT_EQ(0, g9_load(&self->rt, "salu", G9_RSRC2_USER_SGPRS(2),
			     G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &out));
	o = out.cpu;
	for (p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++) {
		uint32_t a = pairs[p][0], b = pairs[p][1];
		uint64_t ab = ((uint64_t)b << 32 | a) << 13;

		((uint32_t *)k.kernarg)[0] = a;
		((uint32_t *)k.kernarg)[1] = b;
		((uint64_t *)k.kernarg)[1] = out.va;
		memset(o, 0, 64);
		ASSERT_EQ(0, g9_run1(&self->rt, &k, 64, 64));
		e[0] = a + b;
		e[1] = (uint64_t)a + b > 0xffffffffu;
		e[2] = a - b;
		e[3] = a * b;
		e[4] = ((uint64_t)a * b) >> 32;
		e[5] = (a >> 3) & 0x1f;		/* offset 3, width 5 */
		e[6] = (uint32_t)((int32_t)a >> 7);
		e[7] = (int32_t)a < (int32_t)b ? a : b;
		e[8] = b ? (uint32_t)__builtin_clz(b) : 0xffffffffu;
		e[9] = __builtin_popcount(a);
		e[10] = 0;
		for (j = 0; j < 32; j++)
			e[10] |= ((a >> j) & 1) << (31 - j);
		e[11] = (a << 2) + b;
		e[12] = (a & 0xffff) | b << 16;
		e[13] = 55;
		e[14] = (uint32_t)ab;
		e[15] = ab >> 32;
		for (j = 0; j < 16; j++)
			EXPECT_EQ(e[j], o[j]) TH_LOG("a 0x%x b 0x%x result %u",
						     a, b, j);
	}
}

/* LDS, s_barrier across 4 waves, ds_read2, ds_bpermute, atomics. */
TEST_F(gfx9, lds_barrier_atomics)
{
	const uint32_t n = 512;
	struct kg_bo in, out, total;
	struct g9_kernel k;
	uint32_t *x, *o, g, l;
	uint64_t *ka, sum = 0;

	ASSERT_EQ(0, g9_load(&self->rt, "lds", G9_RSRC2_USER_SGPRS(2) |
			     G9_RSRC2_WGID_X, G9_KCP_KERNARG_PTR, 2048, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * n, KT_GTT | KT_WRITABLE, 0,
			       &in));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 12 * n, KT_GTT | KT_WRITABLE, 0,
			       &out));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &total));
	x = in.cpu;
	g9_fill(x, n, 3);
	for (g = 0; g < n; g++) {
		x[g] &= 0xffffff;	/* the sum fits 32 bits */
		sum += x[g];
	}
	ka = k.kernarg;
	ka[0] = in.va;
	ka[1] = out.va;
	ka[2] = total.va;
	ka[3] = n;
	ASSERT_EQ(0, g9_run1(&self->rt, &k, n, 256));
	o = out.cpu;
	for (g = 0; g < n; g++) {
		l = g % 256;
		ASSERT_EQ(x[g - l + 255 - l], o[2 * g]) TH_LOG("item %u", g);
		ASSERT_EQ(x[g & ~1u] + x[g | 1u], o[2 * g + 1])
			TH_LOG("item %u", g);
		ASSERT_EQ(x[g ^ 1u], o[2 * n + g]) TH_LOG("item %u", g);
	}
	EXPECT_EQ((uint32_t)sum, ((uint32_t *)total.cpu)[0]);
	EXPECT_EQ(n, ((uint32_t *)total.cpu)[1]);
}

/*
 * The initial wave state in three dimensions with partial workgroups in
 * each: work-item and workgroup ids, the dispatch packet pointer.
 */
TEST_F(gfx9, ids_3d_partial_workgroups)
{
	const uint32_t grid[3] = { 13, 7, 5 };
	const uint16_t wg[3] = { 4, 3, 2 };
	uint32_t x, y, z, *o;
	struct kg_signal sig;
	struct g9_kernel k;
	struct kg_queue q;
	struct kg_bo out;

	ASSERT_EQ(0, g9_load(&self->rt, "ids", G9_RSRC2_USER_SGPRS(4) |
			     G9_RSRC2_WGID_X | G9_RSRC2_WGID_Y |
			     G9_RSRC2_WGID_Z | G9_RSRC2_VGPR_IDS(2),
			     G9_KCP_DISPATCH_PTR | G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * 13 * 7 * 5 + 64,
			       KT_GTT | KT_WRITABLE, 0, &out));
	memset(out.cpu, 0xee, 4 * 13 * 7 * 5 + 64);
	*(uint64_t *)k.kernarg = out.va;
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  4096, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	ASSERT_EQ(0, g9_dispatch(&q, &k, 3, grid, wg, &sig));
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	o = out.cpu;
	for (z = 0; z < 5; z++)
		for (y = 0; y < 7; y++)
			for (x = 0; x < 13; x++)
				ASSERT_EQ(x | y << 10 | z << 20,
					  o[x + 13 * y + 13 * 7 * z])
					TH_LOG("(%u, %u, %u)", x, y, z);
	EXPECT_EQ(0xeeeeeeeeu, o[13 * 7 * 5]);
	EXPECT_EQ(0, kg_queue_free(&q));
}

/*
 * A long dispatch is preempted between instructions (evict through
 * debugfs), sits still while evicted and ends with the exact result once
 * restored.
 */
TEST_F(gfx9, preempted_between_instructions)
{
	const uint32_t n = 128, iters = 100000;
	struct kg_signal sig;
	struct kg_qinfo qi;
	struct g9_kernel k;
	struct kg_queue q;
	struct kg_bo out;
	uint32_t i, *o;
	uint64_t *ka;
	int64_t v;

	ASSERT_EQ(0, g9_load(&self->rt, "loop", G9_RSRC2_USER_SGPRS(2) |
			     G9_RSRC2_WGID_X, G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * n, KT_GTT | KT_WRITABLE, 0,
			       &out));
	ka = k.kernarg;
	ka[0] = out.va;
	ka[1] = iters;
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  4096, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	ASSERT_EQ(0, g9_dispatch(&q, &k, 1, &n, (const uint16_t[]){ 64 },
				 &sig));
	kg_sleep_ms(20);
	ASSERT_EQ(0, kg_evict(getpid()));
	v = kg_signal_load(&sig);
	ASSERT_EQ(0, kg_qinfo(getpid(), q.id, &qi));
	EXPECT_EQ(1, qi.evicted);
	kg_sleep_ms(200);
	/* Evicted: nothing moves. */
	EXPECT_EQ(v, kg_signal_load(&sig));
	ASSERT_EQ(0, kg_restore(getpid()));
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	o = out.cpu;
	for (i = 0; i < n; i++)
		ASSERT_EQ(i * iters + 7, o[i]) TH_LOG("item %u", i);
	EXPECT_EQ(0, kg_queue_free(&q));
}

/*
 * Load hipcc's code object (build/selftests/gfx9/hip.co) the way ROCr's
 * loader does for this simple case: every PT_LOAD segment at its virtual
 * address from the start of a BO; @kd_va gets the GPU address of the
 * kernel descriptor named @kd (from .dynsym).
 */
#define G9_CO_MAX		(48 * 1024)

static int g9_load_co(struct kg_rt *rt, const char *kd, struct g9_kernel *k,
		      uint64_t *kd_va)
{
	static char img[G9_CO_MAX];
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Phdr *ph;
	const Elf64_Shdr *sh;
	unsigned int i, j;
	int n, ret;

	n = g9_read_file("hip.co", img, sizeof(img));
	if (n < (int)sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_machine != EM_AMDGPU)
		return -ENOEXEC;
	ret = kg_bo_new(rt, 0, 64 * 1024, KT_GTT | KT_WRITABLE, 0, &k->bo);
	if (ret)
		return ret;
	memset(k->bo.cpu, 0, 64 * 1024);
	for (i = 0; i < eh->e_phnum; i++) {
		ph = (const void *)(img + eh->e_phoff + i * eh->e_phentsize);
		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_vaddr + ph->p_memsz > G9_CO_MAX ||
		    ph->p_offset + ph->p_filesz > (uint64_t)n)
			return -ENOEXEC;
		memcpy((char *)k->bo.cpu + ph->p_vaddr, img + ph->p_offset,
		       ph->p_filesz);
	}
	k->kernarg = (char *)k->bo.cpu + G9_CO_MAX;
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const char *names;

		sh = (const void *)(img + eh->e_shoff + i * eh->e_shentsize);
		if (sh->sh_type != SHT_DYNSYM)
			continue;
		names = img + ((const Elf64_Shdr *)(img + eh->e_shoff +
				sh->sh_link * eh->e_shentsize))->sh_offset;
		for (j = 0; j < sh->sh_size / sizeof(*sym); j++) {
			sym = (const void *)(img + sh->sh_offset +
					     j * sizeof(*sym));
			if (!strcmp(names + sym->st_name, kd)) {
				*kd_va = k->bo.va + sym->st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* Dispatch the way HIP launches <<<blocks, 256>>>: the grid in items. */
static int g9_run_co(struct kg_rt *rt, const struct g9_kernel *k,
		     uint64_t kd_va, uint32_t blocks)
{
	const uint32_t items = blocks * 256;
	const uint16_t wg = 256;
	struct kfdsim_aql_dispatch pkt;

	g9_packet(k, kd_va, k->bo.va + G9_CO_MAX, 1, &items, &wg, NULL, &pkt);
	pkt.group_segment_size = 1024;
	return g9_submit_wait(rt, &pkt);
}

/* saxpy as hipcc -O2 compiles it (a fused multiply-add per element). */
TEST_F(gfx9, hipcc_saxpy)
{
	const int n = 1000;
	struct g9_kernel k;
	struct kg_bo x, y;
	float *fx, *fy, *want;
	uint64_t kd;
	char *ka;
	int i;

	ASSERT_EQ(0, g9_load_co(&self->rt, "_Z5saxpyfPKfPfi.kd", &k, &kd));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * n, KT_GTT | KT_WRITABLE, 0,
			       &x));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * n + 64, KT_GTT | KT_WRITABLE,
			       0, &y));
	fx = x.cpu;
	fy = y.cpu;
	want = calloc(n, sizeof(*want));
	ASSERT_NE(NULL, want);
	for (i = 0; i < n; i++) {
		fx[i] = (float)(i * 7 % 101) / 3.0f - 11.0f;
		fy[i] = (float)(i * 13 % 97) * 0.37f + 1.0f / (i + 1);
		want[i] = fmaf(2.5f, fx[i], fy[i]);
	}
	fy[n] = 123.0f;
	ka = k.kernarg;
	*(float *)ka = 2.5f;
	memcpy(ka + 8, &x.va, 8);
	memcpy(ka + 16, &y.va, 8);
	memcpy(ka + 24, &n, 4);
	ASSERT_EQ(0, g9_run_co(&self->rt, &k, kd, (n + 255) / 256));
	for (i = 0; i < n; i++)
		ASSERT_EQ(f2u(want[i]), f2u(fy[i])) TH_LOG("element %d", i);
	EXPECT_EQ(123.0f, fy[n]);
	free(want);
}

/* An LDS tree reduction with __syncthreads and atomicAdd. */
TEST_F(gfx9, hipcc_lds_reduction)
{
	const int n = 1000;
	struct kg_bo in, out;
	struct g9_kernel k;
	uint32_t sum = 0;
	uint64_t kd;
	char *ka;
	int i;

	ASSERT_EQ(0, g9_load_co(&self->rt, "_Z6reducePKjPji.kd", &k, &kd));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 4 * n, KT_GTT | KT_WRITABLE, 0,
			       &in));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &out));
	g9_fill(in.cpu, n, 11);
	for (i = 0; i < n; i++)
		sum += ((uint32_t *)in.cpu)[i];
	*(uint32_t *)out.cpu = 5;
	ka = k.kernarg;
	memcpy(ka, &in.va, 8);
	memcpy(ka + 8, &out.va, 8);
	memcpy(ka + 16, &n, 4);
	ASSERT_EQ(0, g9_run_co(&self->rt, &k, kd, (n + 255) / 256));
	EXPECT_EQ(sum + 5, *(uint32_t *)out.cpu);
}

/* The bits of a double, and the double or float of some bits. */
#define g9_d2u(x)	((union { double d; uint64_t u; }){ .d = (x) }.u)
#define g9_u2d(x)	((union { uint64_t u; double d; }){ .u = (x) }.d)
#define g9_u2f(x)	((union { uint32_t u; float f; }){ .u = (x) }.f)

/* A 64-bit pattern: any bits, a moderate exponent, subnormal or special. */
static uint64_t g9_pick64(uint64_t r, unsigned int kind)
{
	const uint64_t frac = r & 0x800fffffffffffffULL;

	switch (kind % 8) {
	case 0:
		return frac | (uint64_t)(1023 - 40 + (r >> 53) % 80) << 52;
	case 1:
		return frac;				/* subnormal */
	case 2:
		return frac | (uint64_t)((r >> 52) % 64) << 52;
	case 3:
		return frac | (uint64_t)(2046 - (r >> 52) % 64) << 52;
	case 4:
		return (r & (1ULL << 63)) | ((r >> 20) & 1 ?
					     0x7ff0000000000000ULL : 0);
	default:
		return r;
	}
}

static uint32_t g9_pick32(uint64_t r, unsigned int kind)
{
	const uint32_t frac = (uint32_t)r & 0x807fffffu;

	switch (kind % 8) {
	case 0:
		return frac | (uint32_t)(127 - 20 + (r >> 40) % 40) << 23;
	case 1:
		return frac;
	case 2:
		return frac | (uint32_t)((r >> 40) % 32) << 23;
	case 3:
		return frac | (uint32_t)(254 - (r >> 40) % 32) << 23;
	case 4:
		return ((uint32_t)r & 0x80000000u) | ((r >> 20) & 1 ?
						      0x7f800000u : 0);
	default:
		return (uint32_t)(r >> 32);
	}
}

static uint64_t g9_rand64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Double and float division as hipcc -O2 expands it (v_div_scale,
 * v_rcp, v_fma, v_div_fmas, v_div_fixup): every quotient must be the
 * correctly rounded one the host's division gives, over moderate,
 * extreme, subnormal, zero, Inf and NaN operands.
 */
TEST_F(gfx9, hipcc_division)
{
	const int n = 2048;
	/* x, y, q (binary64), a, b, r (binary32), in kernarg order */
	struct kg_bo bo[6];
	uint64_t *x, *y, *q, kd, s = 0x9e3779b97f4a7c15ULL;
	uint32_t *a, *b, *r;
	struct g9_kernel k;
	char *ka;
	int i;

	ASSERT_EQ(0, g9_load_co(&self->rt,
				"_Z6dividePKdS0_PdPKfS3_Pfi.kd", &k, &kd));
	ka = k.kernarg;
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(0, kg_bo_new(&self->rt, 0, (i < 3 ? 8 : 4) * n,
				       KT_GTT | KT_WRITABLE, 0, &bo[i]));
		memcpy(ka + 8 * i, &bo[i].va, 8);
	}
	x = bo[0].cpu;
	y = bo[1].cpu;
	q = bo[2].cpu;
	a = bo[3].cpu;
	b = bo[4].cpu;
	r = bo[5].cpu;
	for (i = 0; i < n; i++) {
		unsigned int kx = i % 8, ky = (i / 8) % 8;

		x[i] = g9_pick64(g9_rand64(&s), kx);
		y[i] = g9_pick64(g9_rand64(&s), ky);
		a[i] = g9_pick32(g9_rand64(&s), kx);
		b[i] = g9_pick32(g9_rand64(&s), ky);
	}
	/* and some exact ones */
	x[0] = g9_d2u(1.0);
	y[0] = g9_d2u(3.0);
	x[1] = g9_d2u(-10.0);
	y[1] = g9_d2u(4.0);
	a[1] = f2u(-10.0f);
	b[1] = f2u(4.0f);
	memcpy(ka + 48, &n, 4);
	ASSERT_EQ(0, g9_run_co(&self->rt, &k, kd, n / 256));
	EXPECT_EQ(g9_d2u(1.0 / 3.0), q[0]);
	EXPECT_EQ(g9_d2u(-2.5), q[1]);
	EXPECT_EQ(f2u(-2.5f), r[1]);
	for (i = 0; i < n; i++) {
		double dq = g9_u2d(x[i]) / g9_u2d(y[i]);
		float fq = g9_u2f(a[i]) / g9_u2f(b[i]);

		/* any NaN where the host's is NaN */
		if (isnan(dq) && isnan(g9_u2d(q[i])))
			q[i] = g9_d2u(dq);
		if (isnan(fq) && isnan(g9_u2f(r[i])))
			r[i] = f2u(fq);
		EXPECT_EQ(g9_d2u(dq), q[i])
			TH_LOG("double %d: %a / %a = %a, got %a", i,
			       g9_u2d(x[i]), g9_u2d(y[i]), dq, g9_u2d(q[i]));
		EXPECT_EQ(f2u(fq), r[i])
			TH_LOG("float %d: %a / %a = %a, got %a", i,
			       (double)g9_u2f(a[i]), (double)g9_u2f(b[i]),
			       (double)fq, (double)g9_u2f(r[i]));
		if (_metadata->passed == 0)
			break;
	}
}

/* Distance in representable values between two same-signed results. */
static uint64_t g9_ulps64(uint64_t a, uint64_t b)
{
	if ((a ^ b) >> 63)
		return ((a | b) << 1) ? UINT64_MAX : 0;	/* only +-0 */
	return a > b ? a - b : b - a;
}

static uint64_t g9_ulps32(uint32_t a, uint32_t b)
{
	if ((a ^ b) >> 31)
		return ((a | b) << 1) ? UINT64_MAX : 0;
	return a > b ? a - b : b - a;
}

/* Equal bits, or both NaN. */
static int g9_same64(uint64_t want, uint64_t got)
{
	return want == got || (isnan(g9_u2d(want)) && isnan(g9_u2d(got)));
}

static int g9_same32(uint32_t want, uint32_t got)
{
	return want == got || (isnan(g9_u2f(want)) && isnan(g9_u2f(got)));
}

/* Within @ulps of the correctly rounded @want (NaN for NaN, zeros alike). */
static int g9_near32(long double want, uint32_t got, uint64_t ulps)
{
	uint32_t w = f2u((float)want);

	if (isnan(want))
		return isnan(g9_u2f(got));
	if (!(w << 1) && !(got << 1))
		return 1;
	return g9_ulps32(w, got) <= ulps;
}

static int g9_near64(long double want, uint64_t got, uint64_t ulps)
{
	uint64_t w = g9_d2u((double)want);

	if (isnan(want))
		return isnan(g9_u2d(got));
	return g9_ulps64(w, got) <= ulps;
}

/* sin (or cos) of x turns: exact quarter-turn reduction, then libm. */
static long double g9_sinturns(float x, int cos)
{
	static const long double two_pi =
		6.283185307179586476925286766559005768L;
	long double q = rintl(4.0L * x), t = x - q / 4;
	unsigned int k = ((unsigned int)(long long)q + (cos ? 1 : 0)) & 3;
	long double s = k & 1 ? cosl(two_pi * t) : sinl(two_pi * t);

	return k & 2 ? -s : s;
}

/*
 * binary64 fma (fused, one rounding), rcp/sqrt/rsq (1 ULP), frexp,
 * ldexp, fract, floor/ceil/trunc/rndne, compares; binary32 exp, log (1
 * ULP, the ISA's bound), sin and cos of turns (1 ULP, inside the ISA's
 * domain of +-256 turns), frexp and ldexp: against the host's libm in
 * binary64 and long double (fp64.s).
 */
TEST_F(gfx9, fp64_transcendental_known_answers)
{
	uint32_t in[64 * 8], *o;
	uint64_t s = 0x2545f4914f6cdd1dULL;
	struct kg_bo out;
	unsigned int l;

	for (l = 0; l < 64; l++) {
		uint64_t abc[3];
		uint32_t x, r = (uint32_t)g9_rand64(&s);
		int k;

		abc[0] = g9_pick64(g9_rand64(&s), l % 8);
		abc[1] = g9_pick64(g9_rand64(&s), l / 8);
		abc[2] = g9_pick64(g9_rand64(&s), l / 3);
		if (l % 4 == 0)	/* moderate x: -256..256 */
			x = f2u((float)((int32_t)r % 65536) / 128.0f +
				(float)(r >> 16) / 16777216.0f);
		else if (l % 4 == 1)	/* positive, any scale */
			x = g9_pick32(g9_rand64(&s), l / 4) & 0x7fffffffu;
		else
			x = g9_pick32(g9_rand64(&s), l / 4);
		k = l % 2 ? (int)(r % 400) - 200 : (int)(r % 4400) - 2200;
		memcpy(&in[8 * l], abc, sizeof(abc));
		in[8 * l + 6] = x;
		in[8 * l + 7] = (uint32_t)k;
	}
	/* exact cases: half and quarter turns, exp of an integer, log 8 */
	in[8 * 0 + 6] = f2u(0.5f);
	in[8 * 4 + 6] = f2u(-0.25f);
	in[8 * 8 + 6] = f2u(3.0f);
	in[8 * 12 + 6] = f2u(-20.0f);
	ASSERT_EQ(0, g9_run_wave(&self->rt, "fp64", in, 64 * 8, &out,
				 64 * 32));
	o = out.cpu;
	for (l = 0; l < 64; l++) {
		const uint32_t *ol = o + 32 * l;
		uint64_t a, b, c, got[16];
		float x = g9_u2f(in[8 * l + 6]);
		int k = (int32_t)in[8 * l + 7], ex;
		double da, fl, m;
		float fm;

		memcpy(&a, &in[8 * l], 8);
		memcpy(&b, &in[8 * l + 2], 8);
		memcpy(&c, &in[8 * l + 4], 8);
		memcpy(got, ol, sizeof(got));
		da = g9_u2d(a);
		EXPECT_TRUE(g9_same64(g9_d2u(fma(da, g9_u2d(b), g9_u2d(c))),
				      got[0]))
			TH_LOG("lane %u fma %a %a %a: %a", l, da, g9_u2d(b),
			       g9_u2d(c), g9_u2d(got[0]));
		EXPECT_TRUE(g9_near64(1.0L / da, got[1], 1))
			TH_LOG("lane %u rcp %a: %a", l, da, g9_u2d(got[1]));
		EXPECT_TRUE(g9_near64(sqrtl(fabsl(da)), got[2], 1))
			TH_LOG("lane %u sqrt %a: %a", l, da, g9_u2d(got[2]));
		EXPECT_TRUE(g9_near64(1.0L / sqrtl(fabsl(da)), got[3], 1))
			TH_LOG("lane %u rsq %a: %a", l, da, g9_u2d(got[3]));
		m = isfinite(da) ? frexp(da, &ex) : da;
		if (!isfinite(da))
			ex = 0;
		EXPECT_TRUE(g9_same64(g9_d2u(m), got[4]))
			TH_LOG("lane %u frexp_mant %a: %a", l, da,
			       g9_u2d(got[4]));
		EXPECT_EQ((uint32_t)ex, ol[10]) TH_LOG("lane %u", l);
		EXPECT_EQ(da < g9_u2d(b) ? 1u : 0u, ol[11]) TH_LOG("lane %u", l);
		EXPECT_EQ(da == g9_u2d(b) ? 0u : 1u, ol[12])
			TH_LOG("lane %u", l);
		if (isfinite(x))
			frexpf(x, &ex);
		else
			ex = 0;
		EXPECT_EQ((uint32_t)ex, ol[13]) TH_LOG("lane %u", l);
		memcpy(got, ol + 14, 8 * 4);
		EXPECT_TRUE(g9_same64(g9_d2u(ldexp(da, k)), got[0]))
			TH_LOG("lane %u ldexp %a %d: %a", l, da, k,
			       g9_u2d(got[0]));
		fl = floor(da);
		m = isinf(da) ? NAN : da - fl;
		if (m > 0x1.fffffffffffffp-1)
			m = 0x1.fffffffffffffp-1;
		EXPECT_TRUE(g9_same64(g9_d2u(m), got[1]))
			TH_LOG("lane %u fract %a: %a", l, da, g9_u2d(got[1]));
		EXPECT_TRUE(g9_same64(g9_d2u(fl), got[2])) TH_LOG("lane %u", l);
		EXPECT_TRUE(g9_same64(g9_d2u(nearbyint(da)), got[3]))
			TH_LOG("lane %u rndne %a: %a", l, da, g9_u2d(got[3]));
		EXPECT_TRUE(g9_near32(exp2l(x), ol[22], 1))
			TH_LOG("lane %u exp %a: %a", l, (double)x,
			       (double)g9_u2f(ol[22]));
		EXPECT_TRUE(g9_near32(log2l(x), ol[23], 1))
			TH_LOG("lane %u log %a: %a", l, (double)x,
			       (double)g9_u2f(ol[23]));
		if (fabsf(x) <= 256.0f) {
			EXPECT_TRUE(g9_near32(g9_sinturns(x, 0), ol[24], 1))
				TH_LOG("lane %u sin %a: %a", l, (double)x,
				       (double)g9_u2f(ol[24]));
			EXPECT_TRUE(g9_near32(g9_sinturns(x, 1), ol[25], 1))
				TH_LOG("lane %u cos %a: %a", l, (double)x,
				       (double)g9_u2f(ol[25]));
		}
		fm = isfinite(x) ? frexpf(x, &ex) : x;
		EXPECT_TRUE(g9_same32(f2u(fm), ol[26])) TH_LOG("lane %u", l);
		EXPECT_TRUE(g9_same32(f2u(ldexpf(x, k)), ol[27]))
			TH_LOG("lane %u ldexpf %a %d: %a", l, (double)x, k,
			       (double)g9_u2f(ol[27]));
		memcpy(got, ol + 28, 16);
		EXPECT_TRUE(g9_same64(g9_d2u(trunc(da)), got[0]))
			TH_LOG("lane %u", l);
		EXPECT_TRUE(g9_same64(g9_d2u(ceil(da)), got[1]))
			TH_LOG("lane %u", l);
		if (_metadata->passed == 0)
			return;
	}
	/* the exact ones */
	EXPECT_EQ(0u, o[24] << 1);		/* sin(pi) = 0 */
	EXPECT_EQ(f2u(-1.0f), o[32 * 0 + 25]);	/* cos(pi) */
	EXPECT_EQ(f2u(-1.0f), o[32 * 4 + 24]);	/* sin(-pi / 2) */
	EXPECT_EQ(f2u(8.0f), o[32 * 8 + 22]);	/* 2^3 */
	EXPECT_EQ(f2u(0x1p-20f), o[32 * 12 + 22]);
}

/* VOP3 clamp of a float result: NaN and below 0 to +0, above 1 to 1. */
static double g9_dclamp(double r)
{
	return isnan(r) || r < 0 ? 0 : r > 1 ? 1 : r;
}

/* min/max as IEEE mode has them: a NaN operand gives the other one. */
static double g9_dminmax(double a, double b, int max)
{
	if (isnan(a) || isnan(b))
		return isnan(a) ? b : a;
	if (a == b)	/* -0 is below +0 */
		return !signbit(a) == !max ? b : a;
	return (a < b) != max ? a : b;
}

/*
 * VOP3 omod (mul:2, mul:4, div:2) and clamp on binary64 operations and
 * conversions (f64mod.s): the operation rounded as the host rounds it,
 * then scaled (one more rounding, for overflow and subnormal results),
 * then clamped to [0, 1] with NaN to 0, as the ISA defines the modifiers.
 */
TEST_F(gfx9, f64_omod_clamp_known_answers)
{
	uint32_t in[64 * 8], *o;
	uint64_t s = 0x6f6d6f64636c616dULL, got[12];
	struct kg_bo out;
	unsigned int l, j;

	for (l = 0; l < 64; l++) {
		uint64_t abc[3];

		abc[0] = g9_pick64(g9_rand64(&s), l % 8);
		abc[1] = g9_pick64(g9_rand64(&s), l / 8);
		abc[2] = g9_pick64(g9_rand64(&s), l / 3);
		/* in [0, 1] and around it, where clamp decides */
		if (l % 5 == 0)
			abc[0] = g9_d2u((double)(g9_rand64(&s) % 3000) / 1000 -
					1.0);
		if (l % 7 == 0)
			abc[1] = g9_d2u((double)(g9_rand64(&s) % 3000) / 1000 -
					1.0);
		memcpy(&in[8 * l], abc, sizeof(abc));
		in[8 * l + 6] = (uint32_t)g9_rand64(&s);
		if (l % 2)
			in[8 * l + 6] = (uint32_t)((int32_t)in[8 * l + 6] %
						   2100);
		in[8 * l + 7] = 0;
	}
	/* overflow by the scale, a subnormal halved, NaN, -0 + -0 */
	in[8 * 1 + 1] = 0x7fe00000;
	in[8 * 1 + 3] = 0x7fd00000;
	in[8 * 2 + 0] = 3;
	in[8 * 2 + 1] = 0;
	in[8 * 2 + 2] = 0;
	in[8 * 2 + 3] = 0;
	in[8 * 3 + 1] = 0x7ff80000;
	in[8 * 3 + 3] = 0x3ff00000;
	in[8 * 4 + 1] = 0x80000000;
	in[8 * 4 + 3] = 0x80000000;
	in[8 * 1 + 0] = in[8 * 1 + 2] = in[8 * 3 + 0] = in[8 * 3 + 2] = 0;
	in[8 * 4 + 0] = in[8 * 4 + 2] = 0;
	ASSERT_EQ(0, g9_run_wave(&self->rt, "f64mod", in, 64 * 8, &out,
				 64 * 32));
	o = out.cpu;
	for (l = 0; l < 64; l++) {
		const uint32_t *ol = o + 32 * l;
		int32_t k = (int32_t)in[8 * l + 6];
		double a, b, c, want[12], f;
		float fa;

		memcpy(&a, &in[8 * l], 8);
		memcpy(&b, &in[8 * l + 2], 8);
		memcpy(&c, &in[8 * l + 4], 8);
		memcpy(got, ol, sizeof(got));
		f = isnan(a) ? a : isinf(a) ? NAN :
		    fmin(a - floor(a), 0x1.fffffffffffffp-1);
		want[0] = (a + b) * 2;
		want[1] = (a + b) * 0.5;
		want[2] = (a * b) * 4;
		want[3] = g9_dclamp(fma(a, b, c));
		want[4] = g9_dclamp((a + b) * 2);
		want[5] = g9_dclamp(g9_dminmax(a, b, 1));
		want[6] = (double)k * 0.5;
		want[7] = f * 4;
		want[8] = 0;		/* binary32, below */
		want[9] = g9_dclamp(ldexp(a, k));
		want[10] = sqrt(fabs(a)) * 0.5;
		want[11] = g9_dclamp(g9_dminmax(-a, b, 0) * 2);
		for (j = 0; j < 12; j++) {
			if (j == 8)
				continue;
			EXPECT_TRUE(g9_same64(g9_d2u(want[j]), got[j]))
				TH_LOG("lane %u result %u of %a, %a, %a, %d: %a, want %a",
				       l, j, a, b, c, k, g9_u2d(got[j]),
				       want[j]);
		}
		fa = (float)a;
		fa = isnan(fa) || fa < 0 ? 0 : fa > 1 ? 1 : fa;
		EXPECT_EQ(f2u(fa), ol[16])
			TH_LOG("lane %u cvt_f32_f64 clamp %a: %a", l, a,
			       (double)g9_u2f(ol[16]));
		EXPECT_EQ(0u, ol[17]);
	}
	/* the exact ones: 2^1023 * 2 overflows, 3 * 2^-1074 / 2 rounds */
	EXPECT_EQ(0x7ff0000000000000ULL, ((uint64_t *)(o + 32))[0]);
	EXPECT_EQ(2ULL, ((uint64_t *)(o + 64))[1]);
	EXPECT_EQ(0ULL, ((uint64_t *)(o + 96))[3]);
	EXPECT_EQ(0x8000000000000000ULL, ((uint64_t *)(o + 128))[0]);
}

/*
 * 2/pi as v_trig_preop_f64 reads it: its first 1201 fraction bits
 * (truncated), in hex, then 3 zero bits. Computed on a host with Python's
 * integers from Machin's formula (pi = 16 atan(1/5) - 4 atan(1/239), 1400
 * bits) and checked against mpmath's 2/pi at 1400 bits; it begins with the
 * well-known digits a2f9836e4e441529 fc2757d1. g9_two_over_pi_ok() checks
 * its first 64 bits against the host's long double 2/pi (G9_2_PI_L).
 */
static const char g9_two_over_pi[] =
	"a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561"
	"b7246e3a424dd2e006492eea09d1921cfe1deb1cb129a73ee88235f52ebb4484"
	"e99c7026b45f7e413991d639835339f49c845f8bbdf9283b1ff897ffde05980f"
	"ef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d7527bac7ebe5f17b"
	"3d0739f78a5292ea6bfb5fb11f8d5d0856033046fc7b0";

/* Fraction bit @n (from 1) of 2/pi; 0 past the 1201st. */
static unsigned int g9_2pi_bit(unsigned int n)
{
	char c[2] = { 0, 0 };

	if (n < 1 || n > 1201)
		return 0;
	c[0] = g9_two_over_pi[(n - 1) / 4];
	return (strtoul(c, NULL, 16) >> (3 - (n - 1) % 4)) & 1;
}

/*
 * v_trig_preop_f64 as the gfx9 ISA defines it: shift = seg[4:0] * 53, plus
 * exponent - 1077 for a biased exponent above 1077; the 53 bits of 2/pi
 * after the first shift ones as an integer, times 2^(-53 - shift), times
 * 2^128 more from an exponent of 1968 on; rounded toward zero. Here: bit
 * by bit from the hex string, scaled exactly in long double and
 * converted to binary64 in the host's round-toward-zero mode.
 */
static double g9_trig_preop(double x, uint32_t seg)
{
	unsigned int e = (g9_d2u(x) >> 52) & 0x7ff, shift = (seg & 31) * 53;
	uint64_t m = 0;
	long double v;
	int scale, mode;
	double r;
	unsigned int i;

	if (e > 1077)
		shift += e - 1077;
	scale = -53 - (int)shift;
	if (e >= 1968)
		scale += 128;
	for (i = 1; i <= 53; i++)
		m = m << 1 | g9_2pi_bit(shift + i);
	v = ldexpl((long double)m, scale);	/* exact: 64-bit significand */
	mode = fegetround();
	fesetround(FE_TOWARDZERO);
	r = (double)v;
	fesetround(mode);
	return r;
}

/* 2/pi from its well-known decimal digits, rounded to long double. */
#define G9_2_PI_L	0.636619772367581343075535053490057448137839L

/* The table's first 64 bits against the host's long double 2/pi. */
static int g9_two_over_pi_ok(void)
{
	uint64_t t = 0, h = (uint64_t)ldexpl(G9_2_PI_L, 64);
	unsigned int i;

	for (i = 1; i <= 64; i++)
		t = t << 1 | g9_2pi_bit(i);
	/* that is 2/pi rounded to 64 bits: equal or one above */
	return h == t || h == t + 1;
}

/*
 * v_exp_legacy_f32, v_log_legacy_f32 and v_trig_preop_f64 (legacy.s).
 * exp/log: within the ISA's 1 ULP of the host's exp2l/log2l rounded to
 * binary32, with the legacy subnormal handling whatever MODE says (MODE
 * keeps subnormals here): 2^x of x below -126 is +0, log2 of a subnormal
 * is -Inf, as of +-0; log2 of a negative number is a NaN, log2 1 = 0,
 * 2^-Inf = 0, 2^+Inf = +Inf. trig_preop: bit-exact against
 * g9_trig_preop() over the segments, the exponent thresholds 1077 and
 * 1968, Inf, NaN, zero, subnormals and negative inputs (sign ignored).
 */
TEST_F(gfx9, legacy_transc_trig_preop_known_answers)
{
	static const uint32_t xs[] = {
		0xff800000, 0x7f800000, 0x7fc00000, 0x80000000, 0x00000000,
		0x3f800000, 0xbf800000, 0x00000001, 0x007fffff, 0x80000010,
		0xc2fc0000 /* -126 */, 0xc2fd0000 /* -126.5 */,
		0xc2fbfffe, 0x42ffcccd /* 127.9 */, 0x43000000 /* 128 */,
		0x40400000 /* 3 */, 0x3f000000 /* 0.5 */, 0x41000000 /* 8 */,
		0x00800000, 0x7f7fffff,
	};
	static const uint64_t ys[] = {
		0x3ff0000000000000ULL, 0x4350000000000000ULL /* 2^54 */,
		0x4360000000000000ULL /* 2^55 */, 0x4363ffffffffffffULL,
		0x7af0000000000000ULL /* e 1967 */,
		0x7b00000000000000ULL /* e 1968 */, 0x7fefffffffffffffULL,
		0x7ff0000000000000ULL, 0x7ff8000000000000ULL, 0,
		0x8000000000000001ULL, 0xc630000000000000ULL, 0x400921fb54442d18ULL,
		0x4430000000000000ULL, 0x44b0000000000000ULL,
		0x4340000000000000ULL /* 2^53 */,
	};
	uint32_t in[64 * 4], *o;
	uint64_t s = 0x7472696770726570ULL, got[4];
	struct kg_bo out;
	long double p;
	unsigned int l;

	ASSERT_TRUE(g9_two_over_pi_ok());
	for (l = 0; l < 64; l++) {
		uint64_t r = g9_rand64(&s), y;
		uint32_t x;

		/* random x: exponents around the range 2^x covers */
		x = l < ARRAY_SIZE(xs) ? xs[l] :
		    f2u((float)((int64_t)(r % 520000) - 260000) / 1000.0f);
		if (l >= 40 && l < 48)
			x = (uint32_t)r & 0x7fffffff;	/* any positive */
		y = l < ARRAY_SIZE(ys) ? ys[l] :
		    ((r >> 12) & 0x800fffffffffffffULL) |
		    (uint64_t)((r >> 20) % 2047) << 52;
		in[4 * l] = x;
		in[4 * l + 1] = (uint32_t)y;
		in[4 * l + 2] = (uint32_t)(y >> 32);
		/* segment in bits 4:0; the bits above must not count */
		in[4 * l + 3] = (l % 32) | (uint32_t)(r >> 32) << 5;
	}
	ASSERT_EQ(0, g9_run_wave(&self->rt, "legacy", in, 64 * 4, &out,
				 64 * 12));
	o = out.cpu;
	for (l = 0; l < 64; l++) {
		const uint32_t *ol = o + 12 * l;
		uint32_t xb = in[4 * l], ab = xb & 0x7fffffff;
		float x = g9_u2f(xb), ax = g9_u2f(ab);
		double y = g9_u2d((uint64_t)in[4 * l + 2] << 32 | in[4 * l + 1]);
		long double e;
		double want[4];
		unsigned int j;

		/* exp_legacy(x), exp_legacy(-x) */
		for (j = 0; j < 2; j++) {
			float t = j ? -x : x;
			uint32_t g = ol[j ? 3 : 0];

			if (isnan(t)) {
				EXPECT_TRUE(isnan(g9_u2f(g))) TH_LOG("lane %u", l);
			} else if (t < -126.0f) {
				EXPECT_EQ(0u, g) TH_LOG("lane %u exp %a: %a", l,
						       (double)t,
						       (double)g9_u2f(g));
			} else {
				EXPECT_TRUE(g9_near32(exp2l(t), g, 1))
					TH_LOG("lane %u exp %a: %a", l,
					       (double)t, (double)g9_u2f(g));
			}
		}
		/* log_legacy(x), log_legacy(|x|) */
		for (j = 0; j < 2; j++) {
			uint32_t b = j ? ab : xb, g = ol[1 + j];
			float t = j ? ax : x;

			if (isnan(t) || (t < 0 && (b & 0x7f800000)))
				e = NAN;
			else if (!(b & 0x7f800000))	/* 0, subnormal */
				e = -INFINITY;
			else
				e = log2l(t);
			if (!isnan(e) && isinf(e)) {
				EXPECT_EQ(f2u((float)e), g)
					TH_LOG("lane %u log %a: %a", l,
					       (double)t, (double)g9_u2f(g));
			} else {
				EXPECT_TRUE(g9_near32(e, g, 1))
					TH_LOG("lane %u log %a: %a", l,
					       (double)t, (double)g9_u2f(g));
			}
		}
		want[0] = g9_trig_preop(y, in[4 * l + 3]);
		want[1] = g9_trig_preop(y, 1);
		want[2] = g9_trig_preop(-y, 2);
		want[3] = g9_trig_preop(y, 0);
		memcpy(got, ol + 4, sizeof(got));
		for (j = 0; j < 4; j++) {
			uint64_t w = g9_d2u(want[j]), g = got[j];

			EXPECT_EQ(w, g)
				TH_LOG("lane %u trig_preop %a result %u: %a, want %a",
				       l, y, j, g9_u2d(g), g9_u2d(w));
		}
		if (_metadata->passed == 0)
			return;
	}
	/* the exact ones */
	EXPECT_EQ(f2u(0x1p-126f), o[12 * 10]);		/* 2^-126 */
	EXPECT_EQ(0u, o[12 * 11]);			/* 2^-126.5 */
	EXPECT_EQ(f2u(8.0f), o[12 * 15]);		/* 2^3 */
	EXPECT_EQ(f2u(0.125f), o[12 * 15 + 3]);		/* 2^-3 */
	EXPECT_EQ(f2u(3.0f), o[12 * 17 + 1]);		/* log2 8 */
	EXPECT_EQ(f2u(-1.0f), o[12 * 16 + 1]);		/* log2 0.5 */
	EXPECT_EQ(0u, o[12 * 5 + 1]);			/* log2 1 */
	EXPECT_EQ(0xff800000u, o[12 * 7 + 1]);		/* subnormal */
	EXPECT_EQ(0x7f800000u, o[12 * 14]);		/* 2^128 */
	EXPECT_EQ(0u, o[12 * 0]);			/* 2^-Inf */
	/*
	 * Segment 0 of 1.0 is 2/pi truncated to 53 bits, and segments 0 + 1
	 * give 2/pi to beyond long double's 64 bits: within 1 ULP of it.
	 */
	memcpy(got, o + 4, sizeof(got));
	EXPECT_EQ(0x3fe45f306dc9c882ULL, got[3]);
	p = (long double)g9_u2d(got[3]) + g9_u2d(got[1]);
	EXPECT_TRUE(fabsl(p - G9_2_PI_L) <= ldexpl(1.0L, -64))
		TH_LOG("segments 0 + 1: %La", p);
	/*
	 * By hand (Python's exact fractions on the same bits): 2^55, one bit
	 * further on; 2^944 (exponent 1967) and 2^945 (1968: scaled by 2^128).
	 */
	memcpy(got, o + 12 * 2 + 4, sizeof(got));
	EXPECT_EQ(0x3fc17cc1b727220aULL, got[3]);
	memcpy(got, o + 12 * 4 + 4, sizeof(got));
	EXPECT_EQ(0x084ba7a31fb34f2fULL, got[3]);
	memcpy(got, o + 12 * 5 + 4, sizeof(got));
	EXPECT_EQ(0x10374f463f669e5fULL, got[3]);
}

/* An f32 with a random mantissa and an exponent in [-@e, @e]. */
static uint32_t g9_mid32(uint64_t r, int e)
{
	return ((uint32_t)r & 0x807fffffu) |
	       (uint32_t)(127 - e + (int)((r >> 40) % (2 * e + 1))) << 23;
}

/* A normal f16 with an exponent in [-@e, @e], or a subnormal one. */
static uint16_t g9_mid16(uint64_t r, int e)
{
	if ((r >> 60) == 0)
		return (uint16_t)(r & 0x83ff);
	return (uint16_t)((r & 0x83ff) |
			  (15 - e + (int)((r >> 40) % (2 * e + 1))) << 10);
}

static float g9_hf(uint16_t u)
{
	return (float)g9_hq(u);
}

/* f16 of a * b + c rounded once: exact in binary128 for these inputs. */
static uint16_t g9_mixh(float a, float b, float c)
{
	return g9_qh((g9_q)a * (g9_q)b + (g9_q)c);
}

/* The f16 next to @h toward +Inf (@up) or -Inf. */
static uint16_t g9_hnext(uint16_t h, int up)
{
	if (!(h & 0x7fff))			/* +-0 */
		return up ? 0x0001 : 0x8001;
	if (!(h & 0x8000))
		return up ? h + 1 : h - 1;
	return up ? h - 1 : h + 1;
}

/*
 * @v (not 0, not NaN) rounded to f16 in MODE's rounding @mode: 0 nearest
 * even (the host's _Float16 conversion), 1 toward +Inf, 2 toward -Inf,
 * 3 toward zero: the nearest f16, moved to its neighbour where it lies
 * on the wrong side of @v. @v must be exact or closer to the true value
 * than to any f16 and any midpoint between two (see the callers).
 */
static uint16_t g9_round16(g9_q v, int mode)
{
	uint16_t r = g9_qh(v);
	g9_q rv = g9_hq(r);

	if (mode == 0 || rv == v)
		return r;
	if (mode == 1 && rv < v)
		return g9_hnext(r, 1);
	if (mode == 2 && rv > v)
		return g9_hnext(r, 0);
	if (mode == 3 && (v < 0 ? -rv : rv) > (v < 0 ? -v : v))
		return g9_hnext(r, v < 0);
	return r;
}

/*
 * An exact sum or product @v in @mode: a zero is -0 when both addends
 * are zeros of sign @zneg (@zsame), else -0 only toward -Inf (IEEE 754).
 */
static uint16_t g9_sum16(g9_q v, int mode, int zsame, int zneg)
{
	if (v == 0)
		return (zsame ? zneg : mode == 2) ? 0x8000 : 0;
	return g9_round16(v, mode);
}

/*
 * f16 arithmetic in the four rounding modes (f16round.s: s_setreg of
 * MODE.FP_ROUND[3:2]): add, sub, mul, fma, mad and mac (product rounded
 * first), cvt from f32, i16 and u16, sqrt, rcp and mul with omod mul:2
 * (a second rounding). Expected values: the exact result in binary128
 * (sums and products of f16 values are exact there; 1/a in binary128 and
 * sqrt in long double are close enough to the true value that none lies
 * on the other side of an f16 or a midpoint) rounded by hand as the
 * mode says; overflow gives Inf or 65504, an exact zero sum -0 toward
 * -Inf. 16-bit results zero the high half, v_mac_f16 keeps it.
 */
TEST_F(gfx9, f16_rounding_modes_known_answers)
{
	static const uint16_t ab[][2] = {
		{ 0x7bff, 0x7bff }, { 0xfbff, 0x7bff }, { 0x3c00, 0xbc00 },
		{ 0x0000, 0x8000 }, { 0x8000, 0x8000 }, { 0x0001, 0x3400 },
		{ 0x3c00, 0x0001 }, { 0xbc00, 0x0001 }, { 0x5bff, 0x5bff },
		{ 0x8001, 0x3800 }, { 0x3c01, 0x3bff }, { 0xfbff, 0x4000 },
	};
	uint32_t in[64 * 4], *o;
	uint64_t s = 0x663136726f756e64ULL;
	struct kg_bo out;
	unsigned int l, m, j, bad = 0;

	for (l = 0; l < 64; l++) {
		uint64_t r1 = g9_rand64(&s), r2 = g9_rand64(&s);
		uint16_t a = g9_mid16(r1, l % 4 ? 6 : 15);
		uint16_t b = g9_mid16(r1 >> 16, l % 3 ? 6 : 15);

		if (l < ARRAY_SIZE(ab)) {
			a = ab[l][0];
			b = ab[l][1];
		} else if (l % 7 == 0) {
			b = a ^ 0x8000;			/* a - a */
		}
		in[4 * l] = a | (uint32_t)b << 16;
		in[4 * l + 1] = g9_mid16(r2, 8) | (uint32_t)(r2 >> 48) << 16;
		in[4 * l + 2] = g9_mid32(r2 >> 8, l % 2 ? 20 : 8);
		in[4 * l + 3] = (uint32_t)(r1 >> 40);
	}
	in[4 * 12 + 3] = 0xffff;	/* u16 65535: beyond 65504 */
	in[4 * 13 + 3] = 0xfff1;
	in[4 * 14 + 2] = 0x477ff000;	/* 65520: the f16 midpoint to Inf */
	in[4 * 15 + 2] = 0x33000001;	/* just above 2^-25 */
	ASSERT_EQ(0, g9_run_wave(&self->rt, "f16round", in, 64 * 4, &out,
				 64 * 48));
	o = out.cpu;
	for (l = 0; l < 64; l++) {
		uint16_t a = in[4 * l], b = in[4 * l] >> 16, c = in[4 * l + 1];
		g9_q qa = g9_hq(a), qb = g9_hq(b), qc = g9_hq(c);
		float x = g9_u2f(in[4 * l + 2]);
		uint16_t k = in[4 * l + 3];
		int na = a >> 15, nb = b >> 15, nc = c >> 15;

		for (m = 0; m < 4; m++) {
			const uint32_t *ol = o + 48 * l + 12 * m;
			uint16_t want[12], t;
			int zp = !(a & 0x7fff) || !(b & 0x7fff);

			want[0] = g9_sum16(qa + qb, m, !(a & 0x7fff) &&
					   !(b & 0x7fff) && na == nb, na);
			want[1] = g9_sum16(qa - qb, m, !(a & 0x7fff) &&
					   !(b & 0x7fff) && na != nb, na);
			want[2] = g9_sum16(qa * qb, m, 1, na ^ nb);
			want[3] = g9_sum16(qa * qb + qc, m,
					   zp && !(c & 0x7fff) &&
					   (na ^ nb) == nc, nc);
			t = want[2];
			if ((t & 0x7fff) == 0x7c00)	/* Inf + finite */
				want[4] = t;
			else
				want[4] = g9_sum16(g9_hq(t) + qc, m,
						   !(t & 0x7fff) &&
						   !(c & 0x7fff) &&
						   (t >> 15) == nc, nc);
			want[5] = x == 0 ? (in[4 * l + 2] >> 31) << 15 :
				  g9_round16((g9_q)x, m);
			want[6] = g9_sum16((g9_q)(int16_t)k, m, 1, 0);
			want[7] = !(a & 0x7fff) ? 0 :
				  g9_round16((g9_q)sqrtl(fabsl(
					  (long double)g9_hf(a))), m);
			want[8] = !(a & 0x7fff) ? (a & 0x8000) | 0x7c00 :
				  g9_round16(1 / qa, m);
			want[9] = (t & 0x7fff) == 0x7c00 ? t :
				  g9_sum16(g9_hq(t) * 2, m, 1, t >> 15);
			want[10] = g9_sum16((g9_q)k, m, 1, 0);
			want[11] = want[4];
			for (j = 0; j < 12; j++) {
				/* v_mac_f16 keeps the high half of c */
				uint32_t w = want[j] |
					     (j == 11 ? in[4 * l + 1] &
					      0xffff0000 : 0);

				EXPECT_EQ(w, ol[j])
					TH_LOG("lane %u mode %u result %u: a %04x b %04x c %04x x %a k %04x",
					       l, m, j, a, b, c, (double)x, k);
				bad += w != ol[j];
			}
			if (bad > 10)
				return;
		}
	}
	/* by hand: 65504 + 65504 is Inf, or 65504 toward zero and -Inf */
	EXPECT_EQ(0x7c00u, o[48 * 0 + 12 * 0]);
	EXPECT_EQ(0x7c00u, o[48 * 0 + 12 * 1]);
	EXPECT_EQ(0x7bffu, o[48 * 0 + 12 * 2]);
	EXPECT_EQ(0x7bffu, o[48 * 0 + 12 * 3]);
	/* 1 - 1 is +0, but -0 toward -Inf */
	EXPECT_EQ(0u, o[48 * 2 + 12 * 3]);
	EXPECT_EQ(0x8000u, o[48 * 2 + 12 * 2]);
	/* 2^-24 * 0.25 is 0, but 2^-24 toward +Inf */
	EXPECT_EQ(0u, o[48 * 5 + 12 * 0 + 2]);
	EXPECT_EQ(1u, o[48 * 5 + 12 * 1 + 2]);
	/* 1 + 2^-24: 1, 1 + 2^-10 toward +Inf */
	EXPECT_EQ(0x3c00u, o[48 * 6 + 12 * 0]);
	EXPECT_EQ(0x3c01u, o[48 * 6 + 12 * 1]);
	EXPECT_EQ(0x3c00u, o[48 * 6 + 12 * 3]);
	/* u16 65535: Inf to nearest and up, 65504 down and toward zero */
	EXPECT_EQ(0x7c00u, o[48 * 12 + 12 * 0 + 10]);
	EXPECT_EQ(0x7bffu, o[48 * 12 + 12 * 3 + 10]);
}

/*
 * v_fma_mix_f32/lo/hi (fmamix.s): f32 and f16 sources (op_sel_hi picks
 * f16, op_sel the half), neg and abs (neg_hi), clamp, an f32 inline
 * constant; the f32 result is the host's fmaf, an f16 one the exact value
 * rounded once (binary128 holds it exactly: exponents are kept within
 * +-10 but for the special lanes). Lane 0 would go wrong if the fused
 * result were rounded to f32 first: (1 + 2^-11) * 1 + 2^-40 lies just
 * above an f16 tie.
 */
TEST_F(gfx9, fma_mix_known_answers)
{
	uint32_t in[64 * 8], *o, want[8];
	uint64_t s = 0x6d69786d69786d69ULL;
	struct kg_bo out;
	unsigned int l, j;

	for (l = 0; l < 64; l++) {
		uint32_t *il = in + 8 * l;

		for (j = 0; j < 3; j++)
			il[j] = g9_mid32(g9_rand64(&s), 10);
		il[3] = g9_mid16(g9_rand64(&s), 10) |
			(uint32_t)g9_mid16(g9_rand64(&s), 10) << 16;
		il[4] = g9_mid16(g9_rand64(&s), 10) |
			(uint32_t)g9_mid16(g9_rand64(&s), 10) << 16;
		il[5] = il[6] = il[7] = 0;
		if (l % 4 == 1)		/* results in [0, 1]: clamp keeps */
			il[2] = f2u(g9_u2f(il[2]) * 0x1p-12f);
	}
	in[0] = f2u(1.0f + 0x1p-11f);
	in[1] = f2u(1.0f);
	in[2] = f2u(0x1p-40f);
	in[8 * 1 + 0] = 0x7fc00000;		/* NaN */
	in[8 * 2 + 0] = 0x7f800000;		/* Inf * 0 */
	in[8 * 2 + 1] = 0;
	in[8 * 3 + 0] = f2u(300.0f);		/* beyond f16 */
	in[8 * 3 + 1] = f2u(300.0f);
	in[8 * 4 + 0] = f2u(0x1p-13f);		/* an f16 subnormal */
	in[8 * 4 + 1] = f2u(0x1p-13f);
	in[8 * 4 + 2] = f2u(0x1.8p-23f);
	in[8 * 5 + 3] = 0x7c00fc00;		/* -Inf, Inf halves */
	ASSERT_EQ(0, g9_run_wave(&self->rt, "fmamix", in, 64 * 8, &out,
				 64 * 8));
	o = out.cpu;
	for (l = 0; l < 64; l++) {
		const uint32_t *il = in + 8 * l;
		float a = g9_u2f(il[0]), b = g9_u2f(il[1]), c = g9_u2f(il[2]);
		float h0 = g9_hf(il[3] & 0xffff), h1 = g9_hf(il[3] >> 16);
		float g0 = g9_hf(il[4] & 0xffff), g1 = g9_hf(il[4] >> 16);
		float r;

		want[0] = f2u(fmaf(a, b, c));
		want[1] = f2u(fmaf(h0, h1, c));
		want[2] = f2u(fmaf(-a, g1, fabsf(h0)));
		want[3] = 0x5a5a0000 | g9_mixh(a, b, c);
		want[4] = 0x1234 | (uint32_t)g9_mixh(h0, g0, a) << 16;
		r = fmaf(a, b, c);
		want[5] = f2u(isnan(r) || r < 0 ? 0 : r > 1 ? 1 : r);
		want[6] = 0x5a5a0000 |
			  g9_hclamp(g9_mixh(h0, -g0, h1));
		want[7] = f2u(fmaf(0.0f, b, 1.0f));
		for (j = 0; j < 8; j++) {
			int f16 = j == 3 || j == 4 || j == 6;

			EXPECT_TRUE(f16 ? g9_heq(want[j], o[8 * l + j], 3) :
				    g9_same32(want[j], o[8 * l + j]))
				TH_LOG("lane %u result %u of %a %a %a, f16 0x%08x 0x%08x: 0x%08x, want 0x%08x",
				       l, j, (double)a, (double)b, (double)c,
				       il[3], il[4], o[8 * l + j], want[j]);
		}
		if (_metadata->passed == 0)
			return;
	}
	/* by hand: the f16 just above the tie, Inf from 300 * 300 + c */
	EXPECT_EQ(0x5a5a3c01u, o[3]);
	EXPECT_EQ(0x7c00u, o[8 * 3 + 3] & 0xffff);
	EXPECT_EQ(0x5a5a0003u, o[8 * 4 + 3]);	/* 2^-26 + 3 * 2^-24 */
}

/*
 * Run kernel @name with one work-item per f16 bit pattern (65536, in
 * workgroups of 64), each writing 4 dwords into @out (kernarg 0).
 */
static int g9_run_every_f16(struct kg_rt *rt, const char *name,
			    struct kg_bo *out)
{
	struct g9_kernel k;
	int ret;

	ret = g9_load(rt, name, G9_RSRC2_USER_SGPRS(2) | G9_RSRC2_WGID_X,
		      G9_KCP_KERNARG_PTR, 0, &k);
	if (!ret)
		ret = kg_bo_new(rt, 0, 16 * 65536, KT_GTT | KT_WRITABLE, 0, out);
	if (ret)
		return ret;
	memset(out->cpu, 0xee, 16 * 65536);
	((uint64_t *)k.kernarg)[0] = out->va;
	return g9_run1(rt, &k, 65536, 64);
}

/* An f16 result from a binary64 one: the host's conversion, one rounding. */
static uint16_t g9_dh(double x)
{
	return g9_h((_Float16)x);
}

/*
 * v_rcp_f16, v_sqrt_f16 and v_rsq_f16 of all 65536 f16 inputs (f16root.s)
 * against the host's binary64 results rounded to f16: no f16 result of
 * these lies close enough to a tie for the binary64 rounding to matter
 * (a rational of few bits, or a root of one), so the once-rounded result
 * is expected exactly (the ISA allows 1 ULP). The high half is zero.
 */
TEST_F(gfx9, f16_rcp_sqrt_rsq_every_input)
{
	const uint32_t n = 65536;
	struct kg_bo out;
	uint32_t g, j, want[4], *o;

	ASSERT_EQ(0, g9_run_every_f16(&self->rt, "f16root", &out));
	o = out.cpu;
	for (g = 0; g < n; g++) {
		double x = (double)g9_hq((uint16_t)g);

		want[0] = g9_dh(1.0 / x);
		want[1] = g9_dh(sqrt(x));
		want[2] = g9_dh(1.0 / sqrt(x));
		want[3] = g9_dh(sqrt(fabs(x)));
		for (j = 0; j < 4; j++) {
			uint32_t wj = want[j], gj = o[4 * g + j];

			ASSERT_TRUE(g9_heq(wj, gj, 1))
				TH_LOG("f16 0x%04x op %u: 0x%08x, want 0x%08x",
				       g, j, gj, wj);
		}
	}
	/* by hand: 1/4, sqrt(4), rsq(4), 1/-0, sqrt(-0), sqrt(-1) */
	EXPECT_EQ(0x3400u, o[4 * 0x4400]);
	EXPECT_EQ(0x4000u, o[4 * 0x4400 + 1]);
	EXPECT_EQ(0x3800u, o[4 * 0x4400 + 2]);
	EXPECT_EQ(0xfc00u, o[4 * 0x8000]);
	EXPECT_EQ(0x8000u, o[4 * 0x8000 + 1]);
	EXPECT_EQ(0x7e00u, o[4 * 0xbc00 + 1]);
}

/* @got (high half 0) within @ulps f16 steps of @want; NaN for NaN. */
static int g9_hnear(uint16_t want, uint32_t got32, int ulps)
{
	uint16_t got = (uint16_t)got32;
	int a, b;

	if (got32 >> 16)
		return 0;
	if (g9_hnan(want) || g9_hnan(got))
		return g9_hnan(want) && g9_hnan(got);
	a = want & 0x8000 ? -(want & 0x7fff) : want;
	b = got & 0x8000 ? -(got & 0x7fff) : got;
	return abs(a - b) <= ulps;
}

/*
 * v_log_f16, v_exp_f16, v_sin_f16 and v_cos_f16 (of turns) of all 65536
 * f16 inputs (f16transc.s), within the ISA's 1 ULP of the host's long
 * double log2l, exp2l and sin/cos of 2 pi x rounded to f16; the exact
 * cases by hand.
 */
TEST_F(gfx9, f16_transcendentals_every_input)
{
	const uint32_t n = 65536;
	struct kg_bo out;
	uint32_t g, *o;

	ASSERT_EQ(0, g9_run_every_f16(&self->rt, "f16transc", &out));
	o = out.cpu;
	for (g = 0; g < n; g++) {
		float x = (float)g9_hq((uint16_t)g);

		ASSERT_TRUE(g9_hnear(g9_dh((double)log2l(x)), o[4 * g], 1))
			TH_LOG("log2 of f16 0x%04x: 0x%08x", g, o[4 * g]);
		ASSERT_TRUE(g9_hnear(g9_dh((double)exp2l(x)), o[4 * g + 1], 1))
			TH_LOG("exp2 of f16 0x%04x: 0x%08x", g, o[4 * g + 1]);
		ASSERT_TRUE(g9_hnear(g9_dh((double)g9_sinturns(x, 0)),
				     o[4 * g + 2], 1))
			TH_LOG("sin of f16 0x%04x: 0x%08x", g, o[4 * g + 2]);
		ASSERT_TRUE(g9_hnear(g9_dh((double)g9_sinturns(x, 1)),
				     o[4 * g + 3], 1))
			TH_LOG("cos of f16 0x%04x: 0x%08x", g, o[4 * g + 3]);
	}
	/* by hand: log2(8) = 3, 2^-2, sin(1/4 turn) = 1, cos(1/2 turn) = -1 */
	EXPECT_EQ(0x4200u, o[4 * 0x4800]);
	EXPECT_EQ(0x3400u, o[4 * 0xc000 + 1]);
	EXPECT_EQ(0x3c00u, o[4 * 0x3400 + 2]);
	EXPECT_EQ(0xbc00u, o[4 * 0x3800 + 3]);
	EXPECT_EQ(0xfc00u, o[4 * 0x0000]);	/* log2(0) = -Inf */
}

/* One rounding of @op in the host's rounding mode @mode. */
static volatile float g9_vx, g9_vy, g9_vz;
static volatile double g9_va, g9_vb, g9_vc;

/*
 * MODE's rounding (toward +Inf, -Inf, zero) for binary32 add, mul, fma,
 * the binary64 to binary32 conversion and binary64 add and fma, set with
 * s_setreg_imm32_b32 and s_setreg_b32 and read back by s_getreg_b32;
 * then MODE's subnormal flushing, inputs and results separately
 * (fpmode.s). The host rounds the same operations in the same mode.
 */
TEST_F(gfx9, float_modes_take_effect)
{
	static const int fe[3] = { FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO };
	uint32_t in[64 * 16], *o, e[32];
	uint64_t s = 0x853c49e6748fea9bULL;
	struct kg_bo out;
	unsigned int l, m, j;

	for (l = 0; l < 64; l++) {
		uint32_t *il = in + 16 * l;
		uint64_t v[3], d, ee;

		for (j = 0; j < 3; j++)
			v[j] = g9_pick64(g9_rand64(&s), j == 2 ? 0 : l + j);
		memcpy(il, v, sizeof(v));
		il[6] = g9_pick32(g9_rand64(&s), l);
		il[7] = g9_pick32(g9_rand64(&s), l / 8);
		il[8] = g9_pick32(g9_rand64(&s), 0);
		/* p * q about 2^-120 .. 2^-140: normal or subnormal */
		il[9] = ((uint32_t)g9_rand64(&s) & 0x807fffffu) |
			(uint32_t)(127 - 60 - l % 10) << 23;
		il[10] = ((uint32_t)g9_rand64(&s) & 0x807fffffu) |
			 (uint32_t)(127 - 60 - l / 7) << 23;
		il[11] = (uint32_t)g9_rand64(&s) & 0x807fffffu;	/* w */
		d = (g9_rand64(&s) & 0x800fffffffffffffULL) |
		    (uint64_t)(1023 - 510 - l % 20) << 52;
		ee = (g9_rand64(&s) & 0x800fffffffffffffULL) |
		     (uint64_t)(1023 - 510 - l / 4) << 52;
		memcpy(il + 12, &d, 8);
		memcpy(il + 14, &ee, 8);
	}
	ASSERT_EQ(0, g9_run_wave(&self->rt, "fpmode", in, 64 * 16, &out,
				 64 * 32));
	o = out.cpu;
	for (l = 0; l < 64; l++) {
		const uint32_t *il = in + 16 * l, *ol = o + 32 * l;
		float p = g9_u2f(il[9]), q = g9_u2f(il[10]), w = g9_u2f(il[11]);
		uint64_t d, ee, r;
		double dd;
		float f;

		for (m = 0; m < 3; m++) {
			uint64_t ab[3];

			memcpy(ab, il, sizeof(ab));
			g9_vx = g9_u2f(il[6]);
			g9_vy = g9_u2f(il[7]);
			g9_vz = g9_u2f(il[8]);
			g9_va = g9_u2d(ab[0]);
			g9_vb = g9_u2d(ab[1]);
			g9_vc = g9_u2d(ab[2]);
			ASSERT_EQ(0, fesetround(fe[m]));
			e[8 * m] = f2u(g9_vx + g9_vy);
			e[8 * m + 1] = f2u(g9_vx * g9_vy);
			e[8 * m + 2] = f2u(fmaf(g9_vx, g9_vy, g9_vz));
			e[8 * m + 3] = f2u((float)g9_va);
			r = g9_d2u(g9_va + g9_vb);
			e[8 * m + 4] = (uint32_t)r;
			e[8 * m + 5] = r >> 32;
			r = g9_d2u(fma(g9_va, g9_vb, g9_vc));
			e[8 * m + 6] = (uint32_t)r;
			e[8 * m + 7] = r >> 32;
			ASSERT_EQ(0, fesetround(FE_TONEAREST));
		}
		e[24] = 0xff;	/* round 3 | 3 << 2, denormals kept (0xf0) */
		/* flushed in and out */
		f = p * q;
		e[25] = fpclassify(f) == FP_SUBNORMAL ? f2u(f) & 0x80000000u :
							f2u(f);
		memcpy(&d, il + 12, 8);
		memcpy(&ee, il + 14, 8);
		dd = g9_u2d(d) * g9_u2d(ee);
		r = fpclassify(dd) == FP_SUBNORMAL ?
			g9_d2u(dd) & (1ULL << 63) : g9_d2u(dd);
		e[26] = (uint32_t)r;
		e[27] = r >> 32;
		e[28] = f2u(p);			/* p + w with w flushed */
		f = w + w;			/* subnormal, flushed out */
		e[29] = fpclassify(f) == FP_SUBNORMAL ? f2u(f) & 0x80000000u :
							f2u(f);
		e[30] = f2u(p * q);		/* subnormal results kept */
		e[31] = f2u(w + w);
		for (j = 0; j < 32; j++) {
			uint32_t want = e[j], have = ol[j];

			EXPECT_TRUE(g9_same32(want, have))
				TH_LOG("lane %u dword %u: want 0x%08x got 0x%08x",
				       l, j, want, have);
		}
		if (_metadata->passed == 0)
			break;
	}
}

/*
 * Run a program of gfx9/ (built by hipcc) with one argument (or none), in a
 * process of its own that opens /dev/kfd itself, and expect exit status 0
 * and @ok in its output. ROCr's start-up and its dynamic scratch allocation
 * take more than the harness's default 30 s under TCG on a loaded host:
 * 300 s, as the program's own timeout, times the timeout scale.
 */
static void g9_program(struct __test_metadata *_metadata, const char *name,
		       const char *arg, const char *ok)
{
	char path[PATH_MAX], cmd[PATH_MAX + 64], out[4096];
	size_t got = 0;
	FILE *f;
	int st;

	ASSERT_EQ(0, g9_path(name, path, sizeof(path)));
	snprintf(cmd, sizeof(cmd), "timeout %d %s %s 2>&1",
		 300 * kt_timeout_scale(), path, arg ? arg : "");
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (got < sizeof(out) - 1 &&
	       fgets(out + got, sizeof(out) - got, f))
		got += strlen(out + got);
	st = pclose(f);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("status 0x%x, output:\n%s", st, out);
	EXPECT_NE(NULL, strstr(out, ok)) TH_LOG("output:\n%s", out);
}

/*
 * A whole HIP program built by Debian's hipcc (gfx9/hip/hip_app.hip):
 * HIP 5.2 and ROCr start on kfdsim (GET_TILE_CONFIG, the AMD vendor AQL
 * packets), copy in every direction, run its kernels and get exact
 * results.
 */
TEST_F_TIMEOUT(gfx9, hip_program_runs_exactly, 300)
{
	g9_program(_metadata, "hip_app", NULL, "HIP OK");
}

/*
 * Debian's rocRAND runs its own gfx906 code object
 * (gfx9/hip/rocrand_app.hip): Philox4x32-10 with a fixed seed, 2 x 65536
 * 32-bit numbers, 65536 uniform floats and 65536 uniform doubles (the
 * program's "double" argument), each equal to Philox4x32-10 computed on
 * the CPU from the published algorithm and converted as rocRAND does.
 */
TEST_F_TIMEOUT(gfx9, rocrand_philox_matches_cpu, 300)
{
	g9_program(_metadata, "rocrand_app", "double", "ROCRAND OK");
}

/*
 * Debian's rocSPARSE runs its own gfx906 code object
 * (gfx9/hip/rocsparse_app.hip): rocsparse_scsrmv and rocsparse_dcsrmv
 * (the "double" argument) on a random 3000 x 2000 CSR matrix, exact
 * against the CPU for integer-valued data and within the summation-order
 * error bound for real data.
 */
TEST_F_TIMEOUT(gfx9, rocsparse_csrmv_matches_cpu, 300)
{
	g9_program(_metadata, "rocsparse_app", "double", "ROCSPARSE OK");
}

/* AMD vendor-specific AQL packets (hsa_ext_amd.h), as ROCr writes them. */
struct g9_barrier_value {
	uint16_t header;
	uint8_t format;
	uint8_t reserved;
	uint32_t reserved0;
	uint64_t signal;
	int64_t value;
	int64_t mask;
	uint32_t cond;
	uint32_t reserved1;
	uint64_t reserved2[2];
	uint64_t completion_signal;
};

_Static_assert(sizeof(struct g9_barrier_value) == 64, "packet size");

/*
 * BARRIER_VALUE (what HIP waits with): the queue waits until the masked
 * signal value compares true, then completes the packet.
 */
TEST_F(gfx9, vendor_barrier_value_waits)
{
	struct kg_signal dep, done;
	struct g9_barrier_value p = {
		.header = KG_AQL_HDR(KFDSIM_AQL_TYPE_VENDOR_SPECIFIC),
		.format = 2,
		.value = 0x40,
		.mask = 0xf0,
		.cond = 0,	/* EQ */
	};
	struct kg_queue q;

	ASSERT_EQ(0, kg_queue_new(&self->rt, 0,
				  KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 4096, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 0x31, &dep));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &done));
	p.signal = dep.va;
	p.completion_signal = done.va;
	ASSERT_EQ(0, kg_aql_submit(&q, &p));
	kg_sleep_ms(200);
	EXPECT_EQ(1, kg_signal_load(&done));
	EXPECT_EQ(0u, kg_queue_rptr(&q));
	kg_signal_store(&dep, 0x4f);	/* 0x4f & 0xf0 == 0x40 */
	EXPECT_EQ(0, kg_signal_wait(&done, 0, KG_TIMEOUT_MS));
	/* The read index is written back after the signal. */
	EXPECT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(1u, kg_queue_rptr(&q));
	EXPECT_EQ(0, kg_queue_free(&q));
}

/*
 * PM4_IB (ROCr's cache invalidation after loading code): an IB of NOP and
 * ACQUIRE_MEM completes; any other PM4 packet stops the queue.
 */
TEST_F(gfx9, vendor_pm4_ib)
{
	struct kg_signal done;
	struct kg_queue q;
	struct kg_qinfo qi;
	struct kg_bo ib;
	uint32_t p[16], *dw;
	int good, i;

	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &ib));
	for (good = 1; good >= 0; good--) {
		dw = ib.cpu;
		memset(dw, 0, 64);
		dw[0] = KFDSIM_PM4_TYPE3_HDR(KFDSIM_PM4_OP_ACQUIRE_MEM, 6);
		dw[7] = KFDSIM_PM4_NOP_1DW;
		if (!good)	/* WRITE_DATA of one dword */
			dw[7] = KFDSIM_PM4_TYPE3_HDR(KFDSIM_PM4_OP_WRITE_DATA, 4);
		ASSERT_EQ(0, kg_queue_new(&self->rt, 0,
					  KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 4096,
					  &q));
		ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &done));
		memset(p, 0, sizeof(p));
		p[0] = KG_AQL_HDR(KFDSIM_AQL_TYPE_VENDOR_SPECIFIC) | 1u << 16;
		p[1] = KFDSIM_PM4_TYPE3_HDR(0x3f, 3);	/* INDIRECT_BUFFER */
		p[2] = (uint32_t)ib.va;
		p[3] = (uint32_t)(ib.va >> 32);
		p[4] = (good ? 8 : 12) | 1u << 23;
		memcpy(&p[14], &done.va, 8);
		ASSERT_EQ(0, kg_aql_submit(&q, p));
		if (good) {
			EXPECT_EQ(0, kg_signal_wait(&done, 0, KG_TIMEOUT_MS));
			/* The read index is written back after the signal. */
			EXPECT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
			EXPECT_EQ(1u, kg_queue_rptr(&q));
		} else {
			for (i = 0; i < 1000; i++) {
				ASSERT_EQ(0, kg_qinfo(getpid(), q.id, &qi));
				if (qi.flags)
					break;
				kg_sleep_ms(10);
			}
			EXPECT_NE(0u, qi.flags);
			EXPECT_EQ(1, kg_signal_load(&done));
		}
		EXPECT_EQ(0, kg_queue_free(&q));
	}
}

static int g9_queue_error(struct kg_rt *rt, const char *name,
			  int64_t *code, uint32_t *out_word)
{
	struct kfd_ioctl_create_event_args ev;
	struct kg_signal done, inactive;
	struct kg_bo box, out;
	struct g9_kernel k;
	struct kg_queue q;
	int ret;

	ret = g9_load(rt, name, G9_RSRC2_USER_SGPRS(2), G9_KCP_KERNARG_PTR, 0,
		      &k);
	if (!ret)
		ret = kg_bo_new(rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0, &box);
	if (!ret)
		ret = kg_bo_new(rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0, &out);
	if (!ret)
		ret = kg_event_new(rt->e.kfd, KFD_IOC_EVENT_SIGNAL, true, 0,
				   &ev);
	if (!ret)
		ret = kg_queue_new_amd(rt, 0, 1024, &q);
	if (!ret)
		ret = kg_signal_new(rt, 1, &done);
	if (!ret)
		ret = kg_signal_new(rt, 0, &inactive);
	if (ret)
		return ret;
	inactive.cpu->event_mailbox_ptr = box.va;
	inactive.cpu->event_id = ev.event_id;
	memcpy((char *)q.ctl.cpu + KFDSIM_AMD_QUEUE_INACTIVE_SIGNAL,
	       &inactive.va, sizeof(inactive.va));
	*(uint64_t *)k.kernarg = out.va;
	((uint32_t *)out.cpu)[0] = 0x5a5a5a5a;
	ret = g9_dispatch(&q, &k, 1, (const uint32_t[]){ 64 },
			  (const uint16_t[]){ 64 }, &done);
	if (ret)
		return ret;
	if (kg_wait1(rt->e.kfd, ev.event_id, KG_TIMEOUT_MS) !=
	    KFD_IOC_WAIT_RESULT_COMPLETE)
		return -ETIMEDOUT;
	*code = kg_signal_load(&inactive);
	*out_word = ((uint32_t *)out.cpu)[0];
	if (kg_signal_load(&done) != 1 || kg_queue_rptr(&q) != 0)
		return -EPROTO;
	return kg_queue_free(&q);
}

/* An instruction the engine lacks traps the wave: ILLEGAL_INSTRUCTION. */
TEST_F(gfx9, illegal_instruction_stops_queue)
{
	uint32_t word;
	int64_t code;

	ASSERT_EQ(0, g9_queue_error(&self->rt, "illegal", &code, &word));
	EXPECT_EQ((int64_t)KFDSIM_AQL_ERROR_ILLEGAL_INSTRUCTION, code);
	EXPECT_EQ(0x5a5a5a5au, word);	/* nothing after it ran */
}

/* s_trap: an exception (what llvm.trap and assert() become). */
TEST_F(gfx9, s_trap_stops_queue)
{
	uint32_t word;
	int64_t code;

	ASSERT_EQ(0, g9_queue_error(&self->rt, "trap", &code, &word));
	EXPECT_EQ((int64_t)KFDSIM_AQL_ERROR_EXCEPTION, code);
	EXPECT_EQ(0x5a5a5a5au, word);
}

/*
 * The integer operations' loops under a scattered EXEC
 * (gfx9/kernels/exec_runs.s): lanes in EXEC get the new values, the
 * others keep theirs; both computed here from the kernel's definition.
 */
TEST_F(gfx9, valu_partial_exec_keeps_other_lanes)
{
	const uint64_t exec = 0x7f00ff00f0f0a5a4ULL;
	struct g9_kernel k;
	struct kg_bo out;
	uint32_t l, *o, v1, v2;

	ASSERT_EQ(0, g9_load(&self->rt, "exec_runs", G9_RSRC2_USER_SGPRS(2),
			     G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &out));
	memset(out.cpu, 0xee, KT_PAGE);
	*(uint64_t *)k.kernarg = out.va;
	ASSERT_EQ(0, g9_run1(&self->rt, &k, 64, 64));
	o = out.cpu;
	for (l = 0; l < 64; l++) {
		v1 = 3 * l + 5;
		v2 = 0x11111111;
		if (exec >> l & 1) {
			v1 = v1 * l + 0x12345;
			v2 = 0xdeadbeef ^ l;
		}
		ASSERT_EQ(v1, o[2 * l]) TH_LOG("lane %u", l);
		ASSERT_EQ(v2, o[2 * l + 1]) TH_LOG("lane %u", l);
	}
}

/* Bit @l of a mask, as 0 or 1. */
static uint32_t g9_bit(uint64_t m, uint32_t l)
{
	return (m >> l) & 1;
}

/*
 * The common scalar operations and the integer compares, carry operations
 * and v_cndmask_b32 run from the engine's decoded forms
 * (gfx9/kernels/decoded.s): every expected value is computed here from
 * the ISA's definitions (SCC of each operation, sign-extended inline
 * constants, carry and borrow masks with the bits of lanes outside EXEC
 * 0, lanes outside EXEC unchanged).
 */
TEST_F(gfx9, decoded_forms_known_answers)
{
	const uint64_t e = 0x7f00ff00f0f0a5a4ULL;
	const uint32_t a = 0x9abcdef0u, b = (uint32_t)-7;
	uint64_t lt = 0, ge5 = 0, ne = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0;
	uint64_t c7 = 0, c9 = 0, gt = 0, x64 = (uint64_t)-3, t;
	uint32_t want[44], v[64][12], l, j, *o;
	struct g9_kernel k;
	struct kg_bo out;

	ASSERT_EQ(0, g9_load(&self->rt, "decoded", G9_RSRC2_USER_SGPRS(2),
			     G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 2 * KT_PAGE,
			       KT_GTT | KT_WRITABLE, 0, &out));
	memset(out.cpu, 0xee, 2 * KT_PAGE);
	*(uint64_t *)k.kernarg = out.va;
	ASSERT_EQ(0, g9_run1(&self->rt, &k, 64, 64));
	o = out.cpu;

	/* Per lane, in the kernel's order. */
	for (l = 0; l < 64; l++) {
		uint32_t x = l * 0x1000193u + 7, y = x * 0x9e3779b1u;

		v[l][0] = x;
		v[l][1] = y;
		for (j = 2; j < 12; j++)
			v[l][j] = 0x5a5a0001u + j;
		if (!g9_bit(e, l))
			continue;
		lt |= (uint64_t)(x < y) << l;
		ge5 |= (uint64_t)((int32_t)y >= 5) << l;
		ne |= (uint64_t)(b != x) << l;
		t = (uint64_t)x + y;
		v[l][2] = t;
		c3 |= (t >> 32) << l;
		t = (uint64_t)y + 0xffffffffu;
		v[l][3] = t;
		c4 |= (t >> 32) << l;
		t = (uint64_t)x + y + g9_bit(c3, l);
		v[l][4] = t;
		c5 |= (t >> 32) << l;
		v[l][5] = x - y - g9_bit(c3, l);
		c6 |= (uint64_t)((uint64_t)y + g9_bit(c3, l) > x) << l;
		v[l][6] = y - x - g9_bit(c4, l);
		c7 |= (uint64_t)((uint64_t)x + g9_bit(c4, l) > y) << l;
		v[l][7] = a - x;
		v[l][8] = y - x;
		c9 |= (uint64_t)(x > y) << l;
	}
	for (l = 0; l < 64; l++) {
		if (!g9_bit(e, l))
			continue;
		v[l][9] = g9_bit(c9, l) ? v[l][1] : v[l][0];
		v[l][10] = g9_bit(ge5, l) ? v[l][1] : 17;
		if (v[l][0] > v[l][1])
			gt |= 1ULL << l;
	}
	for (l = 0; l < 64; l++)
		if (g9_bit(gt, l))
			v[l][11] = v[l][0] + b + 0xffffffffu;

	want[0] = a + 0x70000000u;		/* carry: SCC 1 */
	want[1] = b + 0 + 1;			/* no carry: SCC 0 */
	want[2] = 2;
	want[3] = b - 0x7ffffffcu;		/* signed overflow: SCC 1 */
	want[4] = 0x3f000000u;			/* 0.5 */
	want[5] = (uint32_t)(x64 ^ (uint64_t)-16);
	want[6] = (x64 ^ (uint64_t)-16) >> 32;
	want[7] = (uint32_t)x64;		/* SCC 1 from the xor */
	want[8] = x64 >> 32;
	want[9] = (uint32_t)(x64 & ~(x64 ^ (uint64_t)-16));
	want[10] = (x64 & ~(x64 ^ (uint64_t)-16)) >> 32;
	want[11] = 11;				/* -7 < 1 signed */
	want[12] = 33;				/* 64-bit -3 == -3 */
	want[13] = 66;				/* 1 > 0xfffffff9 is false */
	want[14] = 0xffff8000u + 0x7fffu;	/* s_movk, s_addk */
	want[15] = 7;				/* 0xffff8000 < 0 signed */
	want[16] = ~a;
	want[17] = 9;				/* s_not_b32: SCC 1 */
	want[18] = b << 28;
	want[19] = b * a;
	want[20] = b;				/* unsigned max with 1.0 */
	want[21] = 0u - 1 - 1;			/* SCC 1 in, borrow out */
	want[22] = 123;				/* s_cmov with SCC 1 */
	want[23] = (uint32_t)lt;
	want[24] = lt >> 32;
	want[25] = (uint32_t)ge5;
	want[26] = ge5 >> 32;
	want[27] = (uint32_t)ne;
	want[28] = ne >> 32;
	want[29] = (uint32_t)c3;
	want[30] = c3 >> 32;
	want[31] = (uint32_t)c4;
	want[32] = c4 >> 32;
	want[33] = (uint32_t)c5;
	want[34] = c5 >> 32;
	want[35] = (uint32_t)c6;
	want[36] = c6 >> 32;
	want[37] = (uint32_t)c7;
	want[38] = c7 >> 32;
	want[39] = (uint32_t)c9;
	want[40] = c9 >> 32;
	want[41] = (uint32_t)x64;
	want[42] = x64 >> 32;
	want[43] = 0;
	for (j = 0; j < 44; j++)
		EXPECT_EQ(want[j], o[j]) TH_LOG("scalar result %u", j);
	for (l = 0; l < 64; l++) {
		for (j = 0; j < 12; j++)
			EXPECT_EQ(v[l][j], o[64 + 16 * l + j])
				TH_LOG("lane %u v%u", l, j + 1);
		EXPECT_EQ((uint32_t)gt, o[64 + 16 * l + 12]);
		EXPECT_EQ(gt >> 32, o[64 + 16 * l + 13]);
		if (_metadata->passed == 0)
			break;
	}
}

/* Run @k over one wave on @q (kept between dispatches) and wait. */
static int g9_run_on(struct kg_rt *rt, struct kg_queue *q,
		     const struct g9_kernel *k)
{
	struct kg_signal sig;
	int ret;

	ret = kg_signal_new(rt, 1, &sig);
	if (!ret)
		ret = g9_dispatch(q, k, 1, (const uint32_t[]){ 64 },
				  (const uint16_t[]){ 64 }, &sig);
	if (!ret)
		ret = kg_signal_wait(&sig, 0, KG_TIMEOUT_MS);
	return ret;
}

#define G9_ICACHE_WORDS		64

/*
 * The engine keeps each instruction decoded for the rest of a dispatch,
 * and must not run one the code no longer holds (gfx9/kernels/icache.s):
 * a wave that stores a new instruction over one it ran and executes
 * s_icache_inv runs the new one; a new dispatch on the same queue runs
 * the code as memory holds it, whoever wrote it. The expected values
 * follow from the code: v_add_u32 v1, 1 is replaced by v_add_u32 v1, 16.
 */
TEST_F(gfx9, rewritten_code_runs_after_icache_inv)
{
	uint32_t before[G9_ICACHE_WORDS], *code, *o;
	unsigned int i, changed = 0, at = 0;
	struct g9_kernel k;
	struct kg_queue q;
	struct kg_bo out;

	ASSERT_EQ(0, g9_load(&self->rt, "icache", G9_RSRC2_USER_SGPRS(2),
			     G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &out));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  4096, &q));
	code = (uint32_t *)((char *)k.bo.cpu + G9_CODE_OFF);
	memcpy(before, code, sizeof(before));
	*(uint64_t *)k.kernarg = out.va;
	o = out.cpu;

	/* The first run of .Lpatch adds 1, the second (new word) 16. */
	ASSERT_EQ(0, g9_run_on(&self->rt, &q, &k));
	EXPECT_EQ(17u, o[0]);
	/* The wave changed exactly one word of its code. */
	for (i = 0; i < G9_ICACHE_WORDS; i++) {
		if (code[i] != before[i]) {
			changed++;
			at = i;
		}
	}
	ASSERT_EQ(1u, changed);

	/* Same queue, same code VA: the new word runs both times. */
	o[0] = 0;
	ASSERT_EQ(0, g9_run_on(&self->rt, &q, &k));
	EXPECT_EQ(32u, o[0]);

	/* The CPU puts the old instruction back: the next dispatch runs it. */
	code[at] = before[at];
	o[0] = 0;
	ASSERT_EQ(0, g9_run_on(&self->rt, &q, &k));
	EXPECT_EQ(17u, o[0]);
	EXPECT_EQ(0, kg_queue_free(&q));
}

/*
 * Other code mapped at the same GPU VA while a wave runs
 * (gfx9/kernels/remap.s): the wave calls the callee (remap_a: + 1),
 * waits while the test unmaps and frees that BO and maps a new one with
 * remap_b (+ 16) at the same address, then calls it again. It must run
 * the new code: 1 + 16, not the instruction decoded before the remap.
 */
TEST_F(gfx9, code_remapped_under_a_wave_runs_new_code)
{
	uint64_t *ka, va, next;
	struct kg_signal sig;
	struct kg_bo out, flag, callee;
	struct g9_kernel k;
	struct kg_queue q;
	uint32_t *f;
	int n, i;

	ASSERT_EQ(0, g9_load(&self->rt, "remap", G9_RSRC2_USER_SGPRS(2),
			     G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &out));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &flag));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &callee));
	n = g9_read_file("remap_a.bin", callee.cpu, KT_PAGE);
	ASSERT_LT(0, n);
	f = flag.cpu;
	*f = 0;
	ka = k.kernarg;
	ka[0] = out.va;
	ka[1] = flag.va;
	ka[2] = callee.va;
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  4096, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &sig));
	ASSERT_EQ(0, g9_dispatch(&q, &k, 1, (const uint32_t[]){ 64 },
				 (const uint16_t[]){ 64 }, &sig));
	for (i = 0; i < KG_TIMEOUT_MS / 10 &&
		    __atomic_load_n(f, __ATOMIC_ACQUIRE) != 1; i++)
		kg_sleep_ms(10);
	ASSERT_EQ(1u, __atomic_load_n(f, __ATOMIC_ACQUIRE));

	/* The wave spins on the flag, away from the callee: replace it. */
	va = callee.va;
	ASSERT_EQ(0, kg_bo_free(&self->rt, &callee));
	next = self->rt.next_va;
	self->rt.next_va = va;
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &callee));
	self->rt.next_va = next;
	ASSERT_EQ(va, callee.va);
	n = g9_read_file("remap_b.bin", callee.cpu, KT_PAGE);
	ASSERT_LT(0, n);
	__atomic_store_n(f, 2, __ATOMIC_RELEASE);
	ASSERT_EQ(0, kg_signal_wait(&sig, 0, KG_TIMEOUT_MS));
	EXPECT_EQ(17u, ((uint32_t *)out.cpu)[0]);
	EXPECT_EQ(0, kg_queue_free(&q));
}

static uint32_t g9_sat_u(int64_t r)
{
	return r < 0 ? 0 : r > UINT32_MAX ? UINT32_MAX : (uint32_t)r;
}

static uint32_t g9_sat_i(int64_t r)
{
	return (uint32_t)(r < INT32_MIN ? INT32_MIN :
			  r > INT32_MAX ? INT32_MAX : r);
}

/*
 * VOP3 clamp on integer add and subtract (gfx9/kernels/clamp.s): the
 * result saturates at the limits of the operation's type; edge cases and
 * random pairs, expected values computed here in 64-bit arithmetic.
 */
TEST_F(gfx9, integer_clamp_saturates)
{
	static const uint32_t edge[][2] = {
		{ 0, 0 }, { 0xffffffff, 1 }, { 1, 0xffffffff },
		{ 0x7fffffff, 1 }, { 0x80000000, 0xffffffff },
		{ 0x80000000, 1 }, { 0x7fffffff, 0x80000000 },
		{ 0x80000000, 0x7fffffff }, { 5, 7 }, { 7, 5 },
		{ 0xfffffffe, 0 }, { 0xffffffff, 0xffffffff },
		{ 0x7fffffff, 0xffffffff }, { 0x40000000, 0x40000000 },
	};
	const uint32_t n = 256;
	struct kg_bo in, out;
	struct g9_kernel k;
	uint32_t *a, *o, g, want[8], x, y, c;
	int j;

	ASSERT_EQ(0, g9_load(&self->rt, "clamp", G9_RSRC2_USER_SGPRS(2) |
			     G9_RSRC2_WGID_X, G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 8 * n, KT_GTT | KT_WRITABLE, 0,
			       &in));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 32 * n, KT_GTT | KT_WRITABLE, 0,
			       &out));
	a = in.cpu;
	o = out.cpu;
	g9_fill(a, 2 * n, 7);
	/* Half of the random pairs near the limits. */
	for (g = 64; g < n; g += 2)
		a[2 * g] |= 0x7ff00000;
	memcpy(a, edge, sizeof(edge));
	memset(o, 0xee, 32 * n);
	((uint64_t *)k.kernarg)[0] = in.va;
	((uint64_t *)k.kernarg)[1] = out.va;
	ASSERT_EQ(0, g9_run1(&self->rt, &k, n, 64));
	for (g = 0; g < n; g++) {
		x = a[2 * g];
		y = a[2 * g + 1];
		c = g & 1;
		want[0] = g9_sat_u((int64_t)x + y);
		want[1] = g9_sat_u((int64_t)x - y);
		want[2] = g9_sat_u((int64_t)y - x);
		want[3] = g9_sat_i((int64_t)(int32_t)x + (int32_t)y);
		want[4] = g9_sat_i((int64_t)(int32_t)x - (int32_t)y);
		want[5] = want[0];
		want[6] = want[1];
		want[7] = g9_sat_u((int64_t)x + y + c);
		for (j = 0; j < 8; j++)
			ASSERT_EQ(want[j], o[8 * g + j])
				TH_LOG("item %u op %d: 0x%x, 0x%x", g, j, x, y);
	}
}

/* A binary64 as gfx9 reads it with subnormal inputs flushed. */
static double g9_dflush(double x)
{
	return fpclassify(x) == FP_SUBNORMAL ? copysign(0.0, x) : x;
}

static double g9_d(uint64_t u)
{
	double x;

	memcpy(&x, &u, 8);
	return x;
}

/*
 * binary64 compares (gfx9/kernels/cmp64.s): the 16 conditions, abs/neg,
 * cmpx, the e32 form, an inline constant and flushed subnormal inputs
 * after s_setreg_imm32_b32 of MODE, over signed zeros, infinities, NaNs,
 * subnormals, neighbours and random pairs; expected values from the
 * host's IEEE compares.
 */
TEST_F(gfx9, f64_compares)
{
	static const uint64_t edge[] = {
		0, 0x8000000000000000ull, 0x3ff0000000000000ull,
		0xbff0000000000000ull, 0x7ff0000000000000ull,
		0xfff0000000000000ull, 0x7ff8000000000000ull,
		0xfff4000000000001ull, 1, 0x8000000000000001ull,
		0x000fffffffffffffull, 0x0010000000000000ull,
		0x7fefffffffffffffull, 0x3ff0000000000001ull,
		0x3fefffffffffffffull, 0xc000000000000000ull,
	};
	const uint32_t n = 512, ne = sizeof(edge) / sizeof(edge[0]);
	struct kg_bo in, out;
	struct g9_kernel k;
	uint32_t *o, g, j;
	uint64_t *a;

	ASSERT_EQ(0, g9_load(&self->rt, "cmp64", G9_RSRC2_USER_SGPRS(2) |
			     G9_RSRC2_WGID_X, G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 16 * n, KT_GTT | KT_WRITABLE, 0,
			       &in));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 96 * n, KT_GTT | KT_WRITABLE, 0,
			       &out));
	a = in.cpu;
	o = out.cpu;
	g9_fill(in.cpu, 4 * n, 21);
	/* Every pair of edge values, then random pairs with a close one. */
	for (g = 0; g < ne * ne; g++) {
		a[2 * g] = edge[g / ne];
		a[2 * g + 1] = edge[g % ne];
	}
	for (; g < n; g += 2)
		a[2 * g + 1] = a[2 * g] + (g % 3) - 1;
	memset(o, 0xee, 96 * n);
	((uint64_t *)k.kernarg)[0] = in.va;
	((uint64_t *)k.kernarg)[1] = out.va;
	ASSERT_EQ(0, g9_run1(&self->rt, &k, n, 64));
	for (g = 0; g < n; g++) {
		double x = g9_d(a[2 * g]), y = g9_d(a[2 * g + 1]);
		double fx = g9_dflush(x), fy = g9_dflush(y);
		uint32_t want[24] = {
			0, x < y, x == y, x <= y, x > y, x < y || x > y,
			x >= y, !isunordered(x, y), isunordered(x, y),
			!(x >= y), !(x < y || x > y), !(x > y), !(x <= y),
			!(x == y), !(x < y), 1, -fabs(x) < y, x <= y,
			x >= y, x == 1.0, fx == 0, fx < fy, 0, 0,
		};

		for (j = 0; j < 24; j++)
			ASSERT_EQ(want[j], o[24 * g + j])
				TH_LOG("item %u result %u: %a, %a", g, j, x,
				       y);
	}
}

/* The scratch kernel (gfx9/kernels/scratch.s). */
#define G9_KCP_PRIVATE_BUFFER	(1u << 0)
#define G9_KCP_FLAT_SCRATCH	(1u << 5)
#define G9_RSRC2_PRIVATE	(1u << 0)
#define G9_SCR_LANE_BYTES	112	/* the packet's private segment size */
#define G9_SCR_WAVESIZE		7	/* KiB per wave slot: 64 * 112 bytes */
#define G9_SCR_SIZE		(16 * 1024)
#define G9_SCR_ITEMS		256
#define G9_SCR_WG		128

/*
 * amd_queue_t's scratch fields as ROCr's InitScratchSRD fills them on
 * gfx9: a swizzled buffer resource with stride 0, 4-byte elements, index
 * stride 64 and ADD_TID_ENABLE, WAVESIZE in KiB and the queue's scratch
 * base (this process has no SET_SCRATCH_BACKING_VA: the full address).
 */
static void g9_scratch_fields(struct kg_queue *q, const struct kg_bo *scr,
			      uint32_t waves)
{
	char *aq = q->ctl.cpu;
	uint32_t rsrc[4] = {
		(uint32_t)scr->va,
		((uint32_t)(scr->va >> 32) & 0xffff) | 1u << 31,
		G9_SCR_SIZE,
		0xfac | 4u << 12 | 4u << 15 | 1u << 19 | 3u << 21 | 1u << 23,
	};

	memcpy(aq + KFDSIM_AMD_QUEUE_SCRATCH_RSRC, rsrc, sizeof(rsrc));
	memcpy(aq + KFDSIM_AMD_QUEUE_SCRATCH_LOCATION, &scr->va,
	       sizeof(scr->va));
	__atomic_store_n((uint32_t *)(aq + KFDSIM_AMD_QUEUE_TMPRING_SIZE),
			 waves | G9_SCR_WAVESIZE << 12, __ATOMIC_RELEASE);
}

static int g9_scratch_load(struct kg_rt *rt, struct g9_kernel *k,
			   struct kg_bo *out, struct kfdsim_aql_dispatch *pkt)
{
	const uint32_t items = G9_SCR_ITEMS;
	const uint16_t wg = G9_SCR_WG;
	int ret;

	ret = g9_load(rt, "scratch", G9_RSRC2_USER_SGPRS(8) | G9_RSRC2_WGID_X |
		      G9_RSRC2_PRIVATE, G9_KCP_PRIVATE_BUFFER |
		      G9_KCP_KERNARG_PTR | G9_KCP_FLAT_SCRATCH, 0, k);
	if (!ret)
		ret = kg_bo_new(rt, 0, 8 * 4 * G9_SCR_ITEMS + 64,
				KT_GTT | KT_WRITABLE, 0, out);
	if (ret)
		return ret;
	memset(out->cpu, 0xee, 8 * 4 * G9_SCR_ITEMS + 64);
	*(uint64_t *)k->kernarg = out->va;
	g9_packet(k, 0, k->bo.va + G9_KERNARG_OFF, 1, &items, &wg, NULL, pkt);
	pkt->private_segment_size = G9_SCR_LANE_BYTES;
	return 0;
}

/*
 * The results of scratch.s, computed from its comment; and the private
 * memory of the last workgroup as ROCr's resource lays it out: wave w at
 * byte w * WAVESIZE KiB, dword k of lane l at k * 256 + l * 4. Returns the
 * first wrong word's index, or -1.
 */
static int g9_scratch_check(const uint32_t *out, const uint32_t *scr)
{
	uint32_t g, k, w, l, want[8];

	for (g = 0; g < G9_SCR_ITEMS; g++) {
		want[0] = 16 * g + (g & 7);
		want[1] = want[0];
		want[2] = g ^ 0x5a5a;
		want[3] = g;
		want[4] = (uint32_t)(int32_t)(int8_t)(g | 0x80);
		want[5] = ((g | 0x80) & 0xff) << 8;
		want[6] = 32 * g + 5;
		want[7] = 16 * g + 5;
		for (k = 0; k < 8; k++)
			if (out[8 * g + k] != want[k])
				return 8 * g + k;
	}
	if (out[8 * G9_SCR_ITEMS] != 0xeeeeeeeeu)
		return 8 * G9_SCR_ITEMS;
	for (w = 0; w < 2; w++) {
		const uint32_t *wave = scr + w * G9_SCR_WAVESIZE * 1024 / 4;

		for (l = 0; l < 64; l++) {
			g = G9_SCR_WG + 64 * w + l;
			for (k = 0; k < 8; k++)
				if (wave[k * 64 + l] != 16 * g + k)
					return 0x10000 + w * 0x1000 + k * 64 + l;
			if (wave[(8 + (g & 7)) * 64 + l] != (g ^ 0x5a5a) ||
			    wave[(12 + (g & 7)) * 64 + l] != g ||
			    wave[24 * 64 + l] != ((g | 0x80) & 0xff) << 8)
				return 0x20000 + w * 0x1000 + l;
		}
	}
	return -1;
}

/*
 * A dispatch with a private segment on a queue without scratch: as with
 * ROCr's dynamic scratch, the CP stores 1 into the queue's inactive signal
 * and waits with the packet in place; once the runtime has filled
 * amd_queue_t's scratch fields and stored 0, the dispatch runs. MUBUF with
 * ROCr's swizzled resource and the wave offset, SCRATCH_* from
 * FLAT_SCRATCH and FLAT in the private aperture then reach the same bytes
 * of each lane's private memory, one slot per wave.
 */
TEST_F(gfx9, scratch_requested_and_used)
{
	struct kfd_ioctl_create_event_args ev;
	struct kg_signal done, inactive;
	struct kfdsim_aql_dispatch pkt;
	struct kg_bo box, out, scr;
	struct g9_kernel k;
	struct kg_qinfo qi;
	struct kg_queue q;
	int bad;

	ASSERT_EQ(0, g9_scratch_load(&self->rt, &k, &out, &pkt));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, G9_SCR_SIZE, KT_GTT | KT_WRITABLE,
			       0, &scr));
	memset(scr.cpu, 0, G9_SCR_SIZE);
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &box));
	ASSERT_EQ(0, kg_event_new(self->rt.e.kfd, KFD_IOC_EVENT_SIGNAL, true, 0,
				  &ev));
	ASSERT_EQ(0, kg_queue_new_amd(&self->rt, 0, 1024, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &done));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 0, &inactive));
	inactive.cpu->event_mailbox_ptr = box.va;
	inactive.cpu->event_id = ev.event_id;
	memcpy((char *)q.ctl.cpu + KFDSIM_AMD_QUEUE_INACTIVE_SIGNAL,
	       &inactive.va, sizeof(inactive.va));
	pkt.completion_signal = done.va;
	ASSERT_EQ(0, kg_aql_submit(&q, &pkt));
	ASSERT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
		  kg_wait1(self->rt.e.kfd, ev.event_id, KG_TIMEOUT_MS));
	EXPECT_EQ((int64_t)KFDSIM_AQL_ERROR_INSUFFICIENT_SCRATCH,
		  kg_signal_load(&inactive));
	kg_sleep_ms(100);
	EXPECT_EQ(1, kg_signal_load(&done));
	EXPECT_EQ(0u, kg_queue_rptr(&q));
	ASSERT_EQ(0, kg_qinfo(getpid(), q.id, &qi));
	EXPECT_EQ(0u, qi.flags);	/* waiting, not stopped */
	/* Still too little (one wave slot): no second request, no run. */
	g9_scratch_fields(&q, &scr, 1);
	kg_signal_store(&inactive, 0);
	ASSERT_EQ(KFD_IOC_WAIT_RESULT_COMPLETE,
		  kg_wait1(self->rt.e.kfd, ev.event_id, KG_TIMEOUT_MS));
	EXPECT_EQ(1, kg_signal_load(&inactive));
	EXPECT_EQ(1, kg_signal_load(&done));
	g9_scratch_fields(&q, &scr, 2);
	kg_signal_store(&inactive, 0);
	ASSERT_EQ(0, kg_signal_wait(&done, 0, KG_TIMEOUT_MS));
	/* The read index is written back after the signal. */
	EXPECT_EQ(0, kg_queue_wait_idle(&q, KG_TIMEOUT_MS));
	EXPECT_EQ(1u, kg_queue_rptr(&q));
	EXPECT_EQ(0, kg_signal_load(&inactive));
	bad = g9_scratch_check(out.cpu, scr.cpu);
	EXPECT_EQ(-1, bad) TH_LOG("word 0x%x: 0x%x", bad,
				  bad >= 0 && bad < 0x10000 ?
				  ((uint32_t *)out.cpu)[bad] : 0);
	EXPECT_EQ(0, kg_queue_free(&q));
}

/* A private segment on a queue without amd_queue_t: the queue stops. */
TEST_F(gfx9, scratch_without_amd_queue_stops)
{
	struct kfdsim_aql_dispatch pkt;
	struct kg_signal done;
	struct g9_kernel k;
	struct kg_qinfo qi;
	struct kg_queue q;
	struct kg_bo out;
	int i;

	ASSERT_EQ(0, g9_scratch_load(&self->rt, &k, &out, &pkt));
	ASSERT_EQ(0, kg_queue_new(&self->rt, 0, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
				  4096, &q));
	ASSERT_EQ(0, kg_signal_new(&self->rt, 1, &done));
	pkt.completion_signal = done.va;
	ASSERT_EQ(0, kg_aql_submit(&q, &pkt));
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, kg_qinfo(getpid(), q.id, &qi));
		if (qi.flags)
			break;
		kg_sleep_ms(10);
	}
	EXPECT_NE(0u, qi.flags);
	EXPECT_EQ(1, kg_signal_load(&done));
	EXPECT_EQ(0xeeeeeeeeu, ((uint32_t *)out.cpu)[0]);
	EXPECT_EQ(0, kg_queue_free(&q));
}

/*
 * The ISA's buffer atomics on @old with operand @src (cmpswap: the value
 * to store, @cmp the compare value), in @bits bits; @k in the order of
 * gfx9/kernels/mubuf_atomic.s. Return: the new memory value.
 */
static uint64_t g9_atomic_ref(unsigned int k, unsigned int bits, uint64_t old,
			      uint64_t src, uint64_t cmp)
{
	uint64_t mask = bits == 64 ? UINT64_MAX : UINT32_MAX;
	int64_t so, ss;

	old &= mask;
	src &= mask;
	so = bits == 64 ? (int64_t)old : (int32_t)old;
	ss = bits == 64 ? (int64_t)src : (int32_t)src;
	switch (k) {
	case 0:
		return src;
	case 1:
		return old == (cmp & mask) ? src : old;
	case 2:
		return (old + src) & mask;
	case 3:
		return (old - src) & mask;
	case 4:
		return (uint64_t)(so < ss ? so : ss) & mask;
	case 5:
		return old < src ? old : src;
	case 6:
		return (uint64_t)(so > ss ? so : ss) & mask;
	case 7:
		return old > src ? old : src;
	case 8:
		return old & src;
	case 9:
		return old | src;
	case 10:
		return old ^ src;
	case 11:	/* inc: wraps to 0 at src */
		return old >= src ? 0 : old + 1;
	default:	/* dec: wraps to src at 0 and above src */
		return (old == 0 || old > src) ? src : old - 1;
	}
}

/*
 * MUBUF atomics (gfx9/kernels/mubuf_atomic.s): the 13 operations in 32 and
 * 64 bits, with glc (the value before, or 0 out of range, comes back in
 * vdata) and without (vdata unchanged), through offen, idxen,
 * idxen + offen and an soffset; the raw resource's range ends inside lane
 * 60's block (some of its atomics in range, some not; the range check
 * takes the offset without soffset), the strided one after lane 60. Every
 * expected value from the ISA's definitions here.
 */
TEST_F(gfx9, mubuf_atomics_known_answers)
{
	const uint32_t raw = 60 * 512 + 40, idx = 61;
	static const uint32_t base[4] = { 0, 64, 128, 256 };
	uint32_t *a, *m, *o, *want, l, g, k, j, bits, at, r;
	uint64_t src, cmp, old, v;
	struct kg_bo in, mem, out;
	struct g9_kernel kern;
	int inr, glc;

	ASSERT_EQ(0, g9_load(&self->rt, "mubuf_atomic", G9_RSRC2_USER_SGPRS(2),
			     G9_KCP_KERNARG_PTR, 0, &kern));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &in));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 64 * 512, KT_GTT | KT_WRITABLE, 0,
			       &mem));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, 64 * 1024, KT_GTT | KT_WRITABLE,
			       0, &out));
	a = in.cpu;
	m = mem.cpu;
	o = out.cpu;
	want = malloc(64 * 512);
	ASSERT_NE(NULL, want);
	g9_fill(a, 64 * 8, 11);
	g9_fill(m, 64 * 128, 12);
	memset(o, 0xee, 64 * 1024);
	for (l = 0; l < 64; l++) {
		/* Lanes 0-15: small values, for inc/dec's wrap cases. */
		if (l < 16) {
			a[8 * l] = l % 4;
			a[8 * l + 2] = l % 4;
			a[8 * l + 3] = 0;
			for (j = 0; j < 128; j++)
				m[128 * l + j] = j >= 32 && j % 2 ? 0 : l / 4;
		}
		/* Even lanes: cmpswap finds its compare value. */
		if (l % 2 == 0) {
			m[128 * l + 1] = a[8 * l + 1];
			m[128 * l + 16 + 1] = a[8 * l + 1];
			memcpy(&m[128 * l + 32 + 2], &a[8 * l + 4], 8);
			memcpy(&m[128 * l + 64 + 2], &a[8 * l + 4], 8);
		}
	}
	memcpy(want, m, 64 * 512);
	((uint64_t *)kern.kernarg)[0] = in.va;
	((uint64_t *)kern.kernarg)[1] = mem.va;
	((uint64_t *)kern.kernarg)[2] = out.va;
	((uint32_t *)kern.kernarg)[6] = raw;
	((uint32_t *)kern.kernarg)[7] = idx;
	ASSERT_EQ(0, g9_run1(&self->rt, &kern, 64, 64));
	for (l = 0; l < 64; l++) {
		for (g = 0; g < 4; g++) {
			bits = g < 2 ? 32 : 64;
			glc = g == 0 || g == 2;
			for (k = 0; k < 13; k++) {
				at = l * 512 + base[g] + k * bits / 8;
				/* soffset (group 3's 256) is not checked */
				inr = g == 0 || g == 3 ?
				      at - (g == 3 ? 256 : 0) + bits / 8 <= raw :
				      l < idx;
				if (bits == 32) {
					src = a[8 * l];
					cmp = a[8 * l + 1];
					old = want[at / 4];
				} else {
					memcpy(&src, &a[8 * l + 2], 8);
					memcpy(&cmp, &a[8 * l + 4], 8);
					memcpy(&old, &want[at / 4], 8);
				}
				v = g9_atomic_ref(k, bits, old, src, cmp);
				if (inr && bits == 32)
					want[at / 4] = v;
				else if (inr)
					memcpy(&want[at / 4], &v, 8);
				/* vdata after: returned or kept, then cmp */
				v = glc ? (inr ? old : 0) : src;
				r = l * 256 + g * 64 + k * bits / 16;
				if (bits == 32) {
					ASSERT_EQ((uint32_t)v, o[r])
						TH_LOG("lane %u group %u op %u",
						       l, g, k);
					ASSERT_EQ((uint32_t)cmp, o[r + 1])
						TH_LOG("lane %u group %u op %u",
						       l, g, k);
				} else {
					ASSERT_EQ(v, o[r] | (uint64_t)o[r + 1] << 32)
						TH_LOG("lane %u group %u op %u",
						       l, g, k);
					ASSERT_EQ(cmp, o[r + 2] |
						  (uint64_t)o[r + 3] << 32)
						TH_LOG("lane %u group %u op %u",
						       l, g, k);
				}
			}
		}
	}
	for (j = 0; j < 64 * 128; j++) {
		ASSERT_EQ(want[j], m[j]) TH_LOG("memory dword %u (lane %u)",
						j, j / 128);
	}
	free(want);
}

/* Components and bytes of each of a buffer DATA_FORMAT (0: not tested). */
static const uint8_t g9_dfmt_comps[16] = {
	[1] = 1, [2] = 1, [3] = 2, [4] = 1, [5] = 2, [10] = 4, [11] = 2,
	[12] = 4, [13] = 3, [14] = 4,
};
static const uint8_t g9_dfmt_bytes[16] = {
	[1] = 1, [2] = 2, [3] = 1, [4] = 4, [5] = 2, [10] = 1, [11] = 4,
	[12] = 2, [13] = 4, [14] = 4,
};

#define G9_SEL(x, y, z, w)	((x) | (y) << 3 | (z) << 6 | (w) << 9)
#define G9_SEL_XYZW		G9_SEL(4, 5, 6, 7)
#define G9_W3(sel, nfmt, dfmt)	((sel) | (nfmt) << 12 | (dfmt) << 15)
#define G9_NFMT_UINT		4
#define G9_NFMT_SINT		5
#define G9_NFMT_FLOAT		7

/* A resource of gfx9/kernels/mubuf_fload.s or mubuf_fstore.s. */
struct g9_fmt_case {
	uint32_t w3;
	uint32_t records;
	int raw;	/* stride 0, offset l * step; else stride step, index l */
};

static void g9_fmt_kernarg(struct g9_kernel *k, const struct kg_bo *mem,
			   const struct g9_fmt_case *c, uint64_t out_va,
			   uint32_t step)
{
	uint32_t *ka = k->kernarg;

	((uint64_t *)ka)[0] = mem->va;
	((uint64_t *)ka)[1] = out_va;
	ka[4] = c->w3;
	ka[5] = c->records;
	ka[6] = c->raw ? 0 : step;
	ka[7] = !c->raw;
	ka[8] = c->raw ? step : 0;
}

/*
 * MUBUF format loads (gfx9/kernels/mubuf_fload.s): the 32-bit formats as
 * UINT, SINT and FLOAT and the 8/16-bit ones as UINT and SINT, each read
 * with _x, _xy, _xyz and _xyzw. Expected: the element's components
 * (little-endian, zero- or sign-extended), the ones the format lacks 0, 0,
 * 0, 1 (1.0 for FLOAT), all 0 out of range (the whole element is checked:
 * one partly inside is out), then placed as DST_SEL says.
 */
TEST_F(gfx9, mubuf_format_loads_known_answers)
{
	static const struct g9_fmt_case cases[] = {
		{ G9_W3(G9_SEL_XYZW, G9_NFMT_FLOAT, 4), 60, 0 },
		{ G9_W3(G9_SEL_XYZW, G9_NFMT_SINT, 11), 60 * 16 + 4, 1 },
		{ G9_W3(G9_SEL_XYZW, G9_NFMT_UINT, 13), 64, 0 },
		{ G9_W3(G9_SEL(7, 6, 0, 1), G9_NFMT_FLOAT, 14), 50, 0 },
		{ G9_W3(G9_SEL(1, 0, 4, 1), G9_NFMT_UINT, 4), 61, 0 },
		{ G9_W3(G9_SEL_XYZW, G9_NFMT_UINT, 1), 64 * 16, 1 },
		{ G9_W3(G9_SEL_XYZW, G9_NFMT_SINT, 3), 62, 0 },
		{ G9_W3(G9_SEL(5, 4, 7, 6), G9_NFMT_SINT, 10), 64, 0 },
		{ G9_W3(G9_SEL_XYZW, G9_NFMT_SINT, 2), 63 * 16, 1 },
		{ G9_W3(G9_SEL(1, 1, 0, 4), G9_NFMT_UINT, 5), 64, 0 },
		{ G9_W3(G9_SEL_XYZW, G9_NFMT_UINT, 12), 61, 0 },
		{ G9_W3(G9_SEL_XYZW, G9_NFMT_SINT, 12), 64 * 16 - 1, 1 },
	};
	static const unsigned int first[4] = { 0, 1, 3, 6 };
	uint32_t l, i, n, dfmt, nfmt, comps, bytes, c[4], one, sel, w;
	const uint8_t *e;
	struct kg_bo mem, out;
	struct g9_kernel k;
	unsigned int t;
	uint32_t *o;
	int inr;

	ASSERT_EQ(0, g9_load(&self->rt, "mubuf_fload", G9_RSRC2_USER_SGPRS(2),
			     G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &mem));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &out));
	o = out.cpu;
	g9_fill(mem.cpu, KT_PAGE / 4, 13);
	for (t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
		dfmt = cases[t].w3 >> 15 & 0xf;
		nfmt = cases[t].w3 >> 12 & 7;
		comps = g9_dfmt_comps[dfmt];
		bytes = g9_dfmt_bytes[dfmt];
		one = nfmt == G9_NFMT_FLOAT ? f2u(1.0f) : 1;
		memset(o, 0xee, KT_PAGE);
		g9_fmt_kernarg(&k, &mem, &cases[t], out.va, 16);
		ASSERT_EQ(0, g9_run1(&self->rt, &k, 64, 64)) TH_LOG("case %u", t);
		for (l = 0; l < 64; l++) {
			e = (const uint8_t *)mem.cpu + 16 * l;
			inr = cases[t].raw ?
			      16 * l + comps * bytes <= cases[t].records :
			      l < cases[t].records;
			c[0] = 0;
			c[1] = 0;
			c[2] = 0;
			c[3] = inr ? one : 0;
			for (i = 0; inr && i < comps; i++) {
				w = 0;
				memcpy(&w, e + i * bytes, bytes);
				if (nfmt == G9_NFMT_SINT && bytes < 4)
					w = (uint32_t)((int32_t)(w << (32 - 8 * bytes)) >>
						       (32 - 8 * bytes));
				c[i] = w;
			}
			for (n = 1; n <= 4; n++) {
				for (i = 0; i < n; i++) {
					sel = cases[t].w3 >> (3 * i) & 7;
					w = sel >= 4 ? c[sel - 4] :
					    sel == 1 ? one : 0;
					ASSERT_EQ(w, o[16 * l + first[n - 1] + i])
						TH_LOG("case %u lane %u load of %u component %u",
						       t, l, n, i);
				}
			}
		}
	}
}

/*
 * MUBUF format stores (gfx9/kernels/mubuf_fstore.s) to the 32-bit formats
 * as UINT, SINT and FLOAT: each of _x, _xy, _xyz, _xyzw writes the
 * components both it and the format have, unconverted, and nothing else;
 * out of range (the whole element checked) nothing.
 */
TEST_F(gfx9, mubuf_format_stores_known_answers)
{
	static const struct g9_fmt_case cases[] = {
		{ G9_W3(G9_SEL_XYZW, G9_NFMT_UINT, 4), 61, 0 },
		{ G9_W3(G9_SEL_XYZW, G9_NFMT_SINT, 11), 60 * 64 + 24, 1 },
		{ G9_W3(0, G9_NFMT_FLOAT, 13), 64, 0 },
		{ G9_W3(G9_SEL_XYZW, G9_NFMT_UINT, 14), 62 * 64, 1 },
	};
	uint32_t l, i, s, comps, at, *m, *want;
	struct kg_bo mem;
	struct g9_kernel k;
	unsigned int t, j;
	int inr;

	ASSERT_EQ(0, g9_load(&self->rt, "mubuf_fstore", G9_RSRC2_USER_SGPRS(2),
			     G9_KCP_KERNARG_PTR, 0, &k));
	ASSERT_EQ(0, kg_bo_new(&self->rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, 0,
			       &mem));
	m = mem.cpu;
	want = malloc(KT_PAGE);
	ASSERT_NE(NULL, want);
	for (t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
		comps = g9_dfmt_comps[cases[t].w3 >> 15 & 0xf];
		memset(m, 0xa5, KT_PAGE);
		memset(want, 0xa5, KT_PAGE);
		g9_fmt_kernarg(&k, &mem, &cases[t], 0, 64);
		ASSERT_EQ(0, g9_run1(&self->rt, &k, 64, 64)) TH_LOG("case %u", t);
		for (l = 0; l < 64; l++) {
			for (s = 0; s < 4; s++) {
				at = 64 * l + 16 * s;
				inr = cases[t].raw ?
				      at + 4 * comps <= cases[t].records :
				      l < cases[t].records;
				for (i = 0; inr && i <= s && i < comps; i++)
					want[at / 4 + i] = l + 0x10000000 * (i + 1);
			}
		}
		for (j = 0; j < KT_PAGE / 4; j++) {
			ASSERT_EQ(want[j], m[j])
				TH_LOG("case %u dword %u (lane %u)", t, j, j / 16);
		}
	}
	free(want);
}

/*
 * A format the engine does not model traps as an illegal instruction,
 * never a wrong value: a load of 16-bit FLOAT, a store to 8-bit UINT
 * (gfx9/kernels/mubuf_badfmt.s, mubuf_badstore.s).
 */
TEST_F(gfx9, mubuf_unmodelled_format_traps)
{
	uint32_t word;
	int64_t code;

	ASSERT_EQ(0, g9_queue_error(&self->rt, "mubuf_badfmt", &code, &word));
	EXPECT_EQ((int64_t)KFDSIM_AQL_ERROR_ILLEGAL_INSTRUCTION, code);
	EXPECT_EQ(0x5a5a5a5au, word);
	ASSERT_EQ(0, g9_queue_error(&self->rt, "mubuf_badstore", &code,
				    &word));
	EXPECT_EQ((int64_t)KFDSIM_AQL_ERROR_ILLEGAL_INSTRUCTION, code);
	EXPECT_EQ(0x5a5a5a5au, word);
}

TEST_HARNESS_MAIN
