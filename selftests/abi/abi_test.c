// SPDX-License-Identifier: GPL-2.0
/*
 * ABI test: the project's kfd_ioctl.h against upstream's (KFD 1.11).
 *
 * One TEST per abi_list.h section compares the facts both headers produce
 * (sizes, offsets, member types, constants, ioctl codes). The remaining
 * TESTs check what only the project header has against fixed values.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <linux/kfd_ioctl.h>

#include "kselftest_harness.h"
#include "abi_facts.h"

static const char *const abi_groups[] = {
	"version", "queues", "process", "debugger", "events",
	"memory", "smi", "criu", "svm", "ioctls",
};

static const char *const abi_type_names[] = {
	[ABI_T_OTHER] = "aggregate",
	[ABI_T_CHAR] = "char",
	[ABI_T_SCHAR] = "signed char",
	[ABI_T_UCHAR] = "unsigned char",
	[ABI_T_SHORT] = "short",
	[ABI_T_USHORT] = "unsigned short",
	[ABI_T_INT] = "int",
	[ABI_T_UINT] = "unsigned int",
	[ABI_T_LONG] = "long",
	[ABI_T_ULONG] = "unsigned long",
	[ABI_T_LLONG] = "long long",
	[ABI_T_ULLONG] = "unsigned long long",
};

static void describe(char *buf, size_t len, const struct abi_fact *f)
{
	const char *type = "?";

	if ((unsigned int)f->type < ARRAY_SIZE(abi_type_names))
		type = abi_type_names[f->type];

	switch (f->kind) {
	case ABI_K_IOCTL:
		snprintf(buf, len, "%#llx (dir %llu, type '%c', nr %#llx, size %llu)",
			 f->value, (unsigned long long)_IOC_DIR(f->value),
			 (char)_IOC_TYPE(f->value),
			 (unsigned long long)_IOC_NR(f->value),
			 (unsigned long long)_IOC_SIZE(f->value));
		break;
	case ABI_K_VALUE:
	case ABI_K_MEMBER_SIZE:
		snprintf(buf, len, "%#llx (%s)", f->value, type);
		break;
	default:
		snprintf(buf, len, "%llu", f->value);
		break;
	}
}

/* Compare every fact of one section; log each difference. */
static void check_group(struct __test_metadata *_metadata, const char *group)
{
	unsigned int i, seen = 0, bad = 0;
	char up[128], proj[128];

	ASSERT_EQ(abi_upstream_count, abi_project_count);

	for (i = 0; i < abi_upstream_count; i++) {
		const struct abi_fact *u = &abi_upstream_facts[i];
		const struct abi_fact *p = &abi_project_facts[i];

		if (strcmp(u->group, group))
			continue;
		seen++;
		if (u->value == p->value && u->type == p->type)
			continue;
		bad++;
		describe(up, sizeof(up), u);
		describe(proj, sizeof(proj), p);
		TH_LOG("%s differs: upstream %s, project %s", u->what, up, proj);
	}

	ASSERT_NE(0U, seen) TH_LOG("no facts in section %s", group);
	ksft_print_msg("%s: %u facts compared, %u differ\n", group, seen, bad);
	fflush(stdout);		/* the harness ends each test with _exit() */
	EXPECT_EQ(0U, bad);
}

/* Both tables come from the same list, so they must line up entry by entry. */
TEST(tables_line_up)
{
	unsigned int i, g, ngroups = ARRAY_SIZE(abi_groups);

	ASSERT_EQ(abi_upstream_count, abi_project_count);
	for (i = 0; i < abi_upstream_count; i++) {
		const struct abi_fact *u = &abi_upstream_facts[i];
		const struct abi_fact *p = &abi_project_facts[i];

		ASSERT_STREQ(u->what, p->what);
		ASSERT_STREQ(u->group, p->group);
		ASSERT_EQ(u->kind, p->kind);
		/* A section no TEST() below looks at would pass unseen. */
		for (g = 0; g < ngroups; g++)
			if (!strcmp(u->group, abi_groups[g]))
				break;
		ASSERT_LT(g, ngroups) TH_LOG("section %s has no TEST()", u->group);
	}
}

TEST(version)	{ check_group(_metadata, "version"); }
TEST(queues)	{ check_group(_metadata, "queues"); }
TEST(process)	{ check_group(_metadata, "process"); }
TEST(debugger)	{ check_group(_metadata, "debugger"); }
TEST(events)	{ check_group(_metadata, "events"); }
TEST(memory)	{ check_group(_metadata, "memory"); }
TEST(smi)	{ check_group(_metadata, "smi"); }
TEST(criu)	{ check_group(_metadata, "criu"); }
TEST(svm)	{ check_group(_metadata, "svm"); }
TEST(ioctls)	{ check_group(_metadata, "ioctls"); }

/* ---- what only the project header has ---- */

TEST(version_1_12)
{
	EXPECT_EQ(1, KFD_IOCTL_MAJOR_VERSION);
	EXPECT_EQ(12, KFD_IOCTL_MINOR_VERSION);
}

TEST(export_dmabuf)
{
	struct kfd_ioctl_export_dmabuf_args a;

	EXPECT_EQ(16U, sizeof(a));
	EXPECT_EQ(8U, _Alignof(struct kfd_ioctl_export_dmabuf_args));
	EXPECT_EQ(0U, offsetof(struct kfd_ioctl_export_dmabuf_args, handle));
	EXPECT_EQ(8U, offsetof(struct kfd_ioctl_export_dmabuf_args, flags));
	EXPECT_EQ(12U, offsetof(struct kfd_ioctl_export_dmabuf_args, dmabuf_fd));
	EXPECT_EQ(ABI_T_ULLONG, ABI_TYPE_OF(a.handle));	/* __u64 */
	EXPECT_EQ(ABI_T_UINT, ABI_TYPE_OF(a.flags));	/* __u32 */
	EXPECT_EQ(ABI_T_UINT, ABI_TYPE_OF(a.dmabuf_fd));	/* __u32 */

	/* _IOWR('K', 0x24, 16 bytes) */
	EXPECT_EQ(0xc0104b24ULL, AMDKFD_IOC_EXPORT_DMABUF);
	EXPECT_EQ(_IOC_READ | _IOC_WRITE, _IOC_DIR(AMDKFD_IOC_EXPORT_DMABUF));
	EXPECT_EQ((unsigned int)'K', _IOC_TYPE(AMDKFD_IOC_EXPORT_DMABUF));
	EXPECT_EQ(0x24U, _IOC_NR(AMDKFD_IOC_EXPORT_DMABUF));
	EXPECT_EQ(16U, _IOC_SIZE(AMDKFD_IOC_EXPORT_DMABUF));
}

/* Request numbers START..END-1 are all used, once each, on base 'K'. */
TEST(ioctl_range)
{
	const unsigned int start = AMDKFD_COMMAND_START;
	const unsigned int end = AMDKFD_COMMAND_END;
	unsigned char used[256] = { 0 };
	unsigned int i, count = 0;

	EXPECT_EQ(0x01U, start);
	EXPECT_EQ(0x25U, end);

	/* Every request code in the project's table, then EXPORT_DMABUF. */
	for (i = 0; i <= abi_project_count; i++) {
		unsigned long long v = AMDKFD_IOC_EXPORT_DMABUF;
		unsigned int nr;

		if (i < abi_project_count) {
			if (abi_project_facts[i].kind != ABI_K_IOCTL)
				continue;
			v = abi_project_facts[i].value;
		}
		nr = _IOC_NR(v);
		EXPECT_EQ((unsigned int)AMDKFD_IOCTL_BASE, _IOC_TYPE(v));
		EXPECT_GE(nr, start);
		EXPECT_LT(nr, end);
		EXPECT_EQ(0, used[nr]) TH_LOG("request number %#x used twice", nr);
		used[nr] = 1;
		count++;
	}
	EXPECT_EQ(end - start, count);
}

TEST(mmap_offsets)
{
	const unsigned long long off =
		KFD_MMAP_TYPE_DOORBELL | KFD_MMAP_GPU_ID(0xbeef) | 0x1fff;

	EXPECT_EQ(62ULL, KFD_MMAP_TYPE_SHIFT);
	EXPECT_EQ(0xc000000000000000ULL, KFD_MMAP_TYPE_MASK);
	EXPECT_EQ(0xc000000000000000ULL, KFD_MMAP_TYPE_DOORBELL);
	EXPECT_EQ(0x8000000000000000ULL, KFD_MMAP_TYPE_EVENTS);
	EXPECT_EQ(0x4000000000000000ULL, KFD_MMAP_TYPE_RESERVED_MEM);
	EXPECT_EQ(0ULL, KFD_MMAP_TYPE_MMIO);
	EXPECT_EQ(46ULL, KFD_MMAP_GPU_ID_SHIFT);
	EXPECT_EQ(0x3fffc00000000000ULL, KFD_MMAP_GPU_ID_MASK);

	/* Everything is 64-bit unsigned, so shifts and masks never truncate. */
	EXPECT_EQ(ABI_T_ULLONG, ABI_TYPE_OF(KFD_MMAP_TYPE_SHIFT));
	EXPECT_EQ(ABI_T_ULLONG, ABI_TYPE_OF(KFD_MMAP_TYPE_MASK));
	EXPECT_EQ(ABI_T_ULLONG, ABI_TYPE_OF(KFD_MMAP_TYPE_DOORBELL));
	EXPECT_EQ(ABI_T_ULLONG, ABI_TYPE_OF(KFD_MMAP_TYPE_EVENTS));
	EXPECT_EQ(ABI_T_ULLONG, ABI_TYPE_OF(KFD_MMAP_TYPE_RESERVED_MEM));
	EXPECT_EQ(ABI_T_ULLONG, ABI_TYPE_OF(KFD_MMAP_TYPE_MMIO));
	EXPECT_EQ(ABI_T_ULLONG, ABI_TYPE_OF(KFD_MMAP_GPU_ID_SHIFT));
	EXPECT_EQ(ABI_T_ULLONG, ABI_TYPE_OF(KFD_MMAP_GPU_ID_MASK));
	EXPECT_EQ(ABI_T_ULLONG, ABI_TYPE_OF(KFD_MMAP_GPU_ID(1)));
	EXPECT_EQ(ABI_T_ULLONG, ABI_TYPE_OF(KFD_MMAP_GET_GPU_ID(off)));

	EXPECT_EQ(0x0000400000000000ULL, KFD_MMAP_GPU_ID(1));
	EXPECT_EQ(KFD_MMAP_GPU_ID_MASK, KFD_MMAP_GPU_ID(0xffff));
	EXPECT_EQ(0ULL, KFD_MMAP_GPU_ID(0x10000));	/* only 16 bits fit */
	EXPECT_EQ(0xbeefULL, KFD_MMAP_GET_GPU_ID(off));
	EXPECT_EQ(KFD_MMAP_TYPE_DOORBELL, off & KFD_MMAP_TYPE_MASK);
	EXPECT_EQ(0ULL, KFD_MMAP_TYPE_MASK & KFD_MMAP_GPU_ID_MASK);
}

TEST_HARNESS_MAIN
